/*
 * Fuzz target for what a Flight SQL client sends before anything runs: the
 * same bytes as a FlightDescriptor (GetFlightInfo, GetSchema), as a bare
 * command Any (a DoGet ticket), and as a FlightData turned into an IPC
 * message and read as a parameter stream (DoPut). Each parses or fails
 * with a status; what parses is a command of a known kind.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_ipc(const knut_buf *ipc)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_arrow_ipc_source src;
    knut_arrow_ipc_reader *r = NULL;
    if (knut_arrow_ipc_source_mem(&src, ipc->data, ipc->len, &err) != KNUT_OK)
        return;
    if (knut_arrow_ipc_reader_new(&r, src, NULL, &err) == KNUT_OK) {
        struct ArrowArray batch = {0};
        while (knut_arrow_ipc_reader_next(r, &batch, &err) == KNUT_OK && batch.release)
            knut_arrow_array_release(&batch);
    }
    knut_arrow_ipc_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1 << 16))
        return 0;
    knut_error err = KNUT_ERROR_INIT;
    KnutServe__FlightDescriptor *d = NULL;
    knut_serve__cmd cmd = KNUT_SERVE__CMD_INIT;
    if (knut_serve__descriptor_parse(data, size, &d, &cmd, &err) == KNUT_OK) {
        if (!d || !cmd.msg || cmd.kind < KNUT_SERVE__CMD_STATEMENT_QUERY ||
            cmd.kind > KNUT_SERVE__CMD_GET_CROSS_REFERENCE)
            abort();
        knut_serve__flight_descriptor__free_unpacked(d, NULL);
    } else if (d || cmd.msg || !err.message[0]) {
        abort(); /* a failure leaves nothing behind and says why */
    }
    knut_serve__cmd_reset(&cmd);
    err = (knut_error)KNUT_ERROR_INIT;
    if (knut_serve__cmd_parse(data, size, &cmd, &err) == KNUT_OK && !cmd.name)
        abort();
    knut_serve__cmd_reset(&cmd);

    KnutServe__FlightData *fd =
        knut_serve__flight_data__unpack(NULL, size, data);
    if (fd) {
        knut_buf ipc;
        knut_buf_init(&ipc, 1 << 20);
        if (knut_serve__flightdata_to_ipc(fd, &ipc, &err) == KNUT_OK)
            read_ipc(&ipc);
        knut_buf_reset(&ipc);
        knut_serve__flight_data__free_unpacked(fd, NULL);
    }
    return 0;
}
