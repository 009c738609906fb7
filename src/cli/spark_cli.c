/*
 * The Spark Connect commands' shared pieces (spark_cli.h): a session from
 * the connection options and Ctrl-C interrupting the server's operation.
 */
#include "spark_cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "knut/knut.h"

int knut_cli_spark_open(const knut_cli_spec *spec, const knut_cli_spark_conn *c,
                        const char *positional, knut_spark_session **out)
{
    *out = NULL;
    const char *url = c->connect ? c->connect : positional ? positional : getenv("SPARK_REMOTE");
    if (!url || !url[0])
        return knut_cli_args_missing(spec, "--connect URL (or $SPARK_REMOTE)");
    char *token = NULL;
    if (knut_cli_secret_read(spec->name, "--token-file", c->token_file, KNUT_CLI_SPARK_TOKEN_ENV,
                             &token) != 0)
        return KNUT_EXIT_FAIL;
    knut_spark_options o = KNUT_SPARK_OPTIONS_INIT;
    o.allow_insecure_token = c->allow_insecure;
    o.ca_file = c->ca_file;
    o.token = token;
    knut_error err = KNUT_ERROR_INIT;
    int rc = KNUT_EXIT_OK;
    if (knut_spark_session_new(out, url, &o, &err) != KNUT_OK) {
        fprintf(stderr, "knut %s: %s\n", spec->name, err.message);
        rc = KNUT_EXIT_FAIL;
    }
    knut_net_secret_free(token);
    return rc;
}

static void on_signal(int sig, void *arg)
{
    knut_cli_spark_stop *st = arg;
    if (sig == SIGHUP || !atomic_load(&st->armed))
        return;
    knut_error e = KNUT_ERROR_INIT;
    size_t n = 0;
    if (knut_spark_interrupt(st->s, st->op, &n, &e) != KNUT_OK)
        fprintf(stderr, "knut %s: interrupt: %s\n", st->cmd, e.message);
}

knut_status knut_cli_spark_stop_watch(knut_cli_spark_stop *st, knut_error *err)
{
    knut_status rc = knut_signal_install(err);
    return rc == KNUT_OK ? knut_signal_watch(on_signal, st, err) : rc;
}
