/*
 * gRPC credentials from PEM files: insecure, TLS, and mutual TLS (the
 * server requires and verifies a client certificate signed by its CA).
 * The PEM text of a private key is wiped once gRPC has copied it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_int.h"

#define PEM_MAX_BYTES ((size_t)1 << 20)

/* The whole file as a string in *out (NULL when path is NULL). */
static knut_status read_pem(const char *what, const char *path, char **out, knut_error *err)
{
    *out = NULL;
    if (!path)
        return KNUT_OK;
    FILE *f = fopen(path, "rb");
    if (!f)
        return knut_error_set(err, KNUT_EIO, "%s '%s': %s", what, path, strerror(errno));
    knut_buf b;
    knut_buf_init(&b, PEM_MAX_BYTES);
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && b.error == KNUT_OK)
        knut_buf_append(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    knut_status st = knut_buf_check(&b, err);
    if (st == KNUT_OK && bad)
        st = knut_error_set(err, KNUT_EIO, "%s '%s': read error", what, path);
    else if (st == KNUT_OK && (!b.data || !strstr(b.data, "-----BEGIN ")))
        st = knut_error_set(err, KNUT_EINVAL, "%s '%s': not a PEM file", what, path);
    else if (st != KNUT_OK)
        knut_error_prefix(err, "%s '%s': ", what, path);
    if (st != KNUT_OK) {
        knut_net_secret_free(knut_buf_detach(&b, NULL));
        return st;
    }
    *out = knut_buf_detach(&b, NULL);
    return KNUT_OK;
}

/* The PEM texts of tls: cert + key (both or neither; need: both
 * required) and the CA. */
typedef struct pems {
    char *cert, *key, *ca;
} pems;

static void pems_free(pems *p)
{
    free(p->cert);
    free(p->ca);
    knut_net_secret_free(p->key);
}

static knut_status pems_read(const knut_net_grpc_tls *tls, int need, const char *ca_what,
                             pems *p, knut_error *err)
{
    memset(p, 0, sizeof *p);
    if (!tls->cert_file != !tls->key_file || (need && !tls->cert_file))
        return knut_error_set(err, KNUT_EINVAL, "TLS: give both a certificate and a private key "
                                                "file%s", need ? "" : " (or neither)");
    knut_status st = read_pem("TLS certificate", tls->cert_file, &p->cert, err);
    if (st == KNUT_OK)
        st = read_pem("TLS private key", tls->key_file, &p->key, err);
    if (st == KNUT_OK)
        st = read_pem(ca_what, tls->ca_file, &p->ca, err);
    if (st != KNUT_OK)
        pems_free(p);
    return st;
}

knut_status knut_net__grpc_server_creds(const knut_net_grpc_tls *tls,
                                        grpc_server_credentials **out, knut_error *err)
{
    *out = NULL;
    if (!tls) {
        *out = grpc_insecure_server_credentials_create();
        return *out ? KNUT_OK : knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    pems p;
    knut_status st = pems_read(tls, 1, "TLS client CA", &p, err);
    if (st != KNUT_OK)
        return st;
    grpc_ssl_pem_key_cert_pair pair = {p.key, p.cert};
    *out = grpc_ssl_server_credentials_create_ex(
        p.ca, &pair, 1,
        p.ca ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
             : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE,
        NULL);
    pems_free(&p);
    return *out ? KNUT_OK : knut_error_set(err, KNUT_EINVAL, "TLS: gRPC refused the certificate "
                                                             "or key");
}

knut_status knut_net__grpc_channel_creds(const knut_net_grpc_tls *tls,
                                         grpc_channel_credentials **out, knut_error *err)
{
    *out = NULL;
    if (!tls) {
        *out = grpc_insecure_credentials_create();
        return *out ? KNUT_OK : knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    pems p;
    knut_status st = pems_read(tls, 0, "TLS CA", &p, err);
    if (st != KNUT_OK)
        return st;
    grpc_ssl_pem_key_cert_pair pair = {p.key, p.cert};
    *out = grpc_ssl_credentials_create(p.ca, p.cert ? &pair : NULL, NULL, NULL);
    pems_free(&p);
    return *out ? KNUT_OK : knut_error_set(err, KNUT_EINVAL, "TLS: gRPC refused the certificate "
                                                             "or key");
}
