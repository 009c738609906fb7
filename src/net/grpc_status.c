/*
 * gRPC status codes: their names, and the mapping both ways between
 * knut_status and the codes (one table each; docs/net.md shows them).
 */
#include <grpc/status.h>

#include "knut/net.h"

/* The public enum carries the protocol's numbers: check them against gRPC's. */
#define CHECK_CODE(name, val)                                                   \
    _Static_assert((int)KNUT_NET_GRPC_##name == (int)GRPC_STATUS_##name, #name);
KNUT_NET_GRPC_CODE_MAP(CHECK_CODE)
#undef CHECK_CODE

const char *knut_net_grpc_code_name(int code)
{
    switch (code) {
#define NAME_CASE(name, val) \
    case val:                \
        return #name;
        KNUT_NET_GRPC_CODE_MAP(NAME_CASE)
#undef NAME_CASE
    default:
        return "UNKNOWN_CODE";
    }
}

/* What a server answers when its handler fails with a knut status. */
static const struct {
    knut_status st;
    knut_net_grpc_code code;
} to_code[] = {
    {KNUT_OK, KNUT_NET_GRPC_OK},
    {KNUT_ERROR, KNUT_NET_GRPC_UNKNOWN},
    {KNUT_EINVAL, KNUT_NET_GRPC_INVALID_ARGUMENT},
    {KNUT_ENOTFOUND, KNUT_NET_GRPC_NOT_FOUND},
    {KNUT_ENOMEM, KNUT_NET_GRPC_RESOURCE_EXHAUSTED},
    {KNUT_ETOOBIG, KNUT_NET_GRPC_RESOURCE_EXHAUSTED},
    {KNUT_EIO, KNUT_NET_GRPC_INTERNAL},
    {KNUT_EPARSE, KNUT_NET_GRPC_INVALID_ARGUMENT}, /* the request was malformed */
    {KNUT_EUNSUPPORTED, KNUT_NET_GRPC_UNIMPLEMENTED},
    {KNUT_EAGAIN, KNUT_NET_GRPC_UNAVAILABLE},
    {KNUT_EPEER, KNUT_NET_GRPC_UNAVAILABLE}, /* a peer behind the server failed */
    {KNUT_ECANCELLED, KNUT_NET_GRPC_CANCELLED},
    {KNUT_EOF, KNUT_NET_GRPC_OUT_OF_RANGE},
};

knut_net_grpc_code knut_net_grpc_code_from_status(knut_status st)
{
    for (size_t i = 0; i < sizeof to_code / sizeof to_code[0]; i++)
        if (to_code[i].st == st)
            return to_code[i].code;
    return KNUT_NET_GRPC_UNKNOWN;
}

/* What a client makes of a call's final code. Retryable conditions
 * (deadline, unavailable, aborted) are EAGAIN; what the peer refused or
 * failed at is EPEER. */
static const knut_status from_code[] = {
    [KNUT_NET_GRPC_OK] = KNUT_OK,
    [KNUT_NET_GRPC_CANCELLED] = KNUT_ECANCELLED,
    [KNUT_NET_GRPC_UNKNOWN] = KNUT_EPEER,
    [KNUT_NET_GRPC_INVALID_ARGUMENT] = KNUT_EINVAL,
    [KNUT_NET_GRPC_DEADLINE_EXCEEDED] = KNUT_EAGAIN,
    [KNUT_NET_GRPC_NOT_FOUND] = KNUT_ENOTFOUND,
    [KNUT_NET_GRPC_ALREADY_EXISTS] = KNUT_EINVAL,
    [KNUT_NET_GRPC_PERMISSION_DENIED] = KNUT_EPEER,
    [KNUT_NET_GRPC_RESOURCE_EXHAUSTED] = KNUT_ETOOBIG,
    [KNUT_NET_GRPC_FAILED_PRECONDITION] = KNUT_EINVAL,
    [KNUT_NET_GRPC_ABORTED] = KNUT_EAGAIN,
    [KNUT_NET_GRPC_OUT_OF_RANGE] = KNUT_EOF,
    [KNUT_NET_GRPC_UNIMPLEMENTED] = KNUT_EUNSUPPORTED,
    [KNUT_NET_GRPC_INTERNAL] = KNUT_EPEER,
    [KNUT_NET_GRPC_UNAVAILABLE] = KNUT_EAGAIN,
    [KNUT_NET_GRPC_DATA_LOSS] = KNUT_EIO,
    [KNUT_NET_GRPC_UNAUTHENTICATED] = KNUT_EPEER,
};

knut_status knut_net_grpc_status_from_code(int code)
{
    if (code < 0 || (size_t)code >= sizeof from_code / sizeof from_code[0])
        return KNUT_EPEER;
    return from_code[code];
}
