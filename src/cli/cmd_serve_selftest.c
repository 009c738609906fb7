/*
 * `knut serve --self-test [URL]`: the Flight SQL conformance checklist
 * (knut_serve_self_test) against URL, or against the server these options
 * would start, run here on a free loopback port for the test's length.
 * The table goes to stdout; exit 0 when every check passed, 1 otherwise.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "knut/knut.h"

int knut_cli_serve_self_test(const char *url, const knut_net_grpc_tls *tls)
{
    char *token = NULL;
    if (knut_cli_secret_read("serve", "KNUT_SELF_TEST_TOKEN", NULL, "KNUT_SELF_TEST_TOKEN",
                             &token) != 0)
        return KNUT_EXIT_FAIL;
    knut_error err = KNUT_ERROR_INIT;
    int failed = 0;
    knut_status st = knut_serve_self_test(url, tls, token, stdout, &failed, &err);
    knut_net_secret_free(token);
    if (st != KNUT_OK) {
        fflush(stdout);
        fprintf(stderr, "knut serve --self-test: %s\n", err.message);
        return st == KNUT_EINVAL ? KNUT_EXIT_USAGE : KNUT_EXIT_FAIL;
    }
    return failed ? KNUT_EXIT_FAIL : KNUT_EXIT_OK;
}
