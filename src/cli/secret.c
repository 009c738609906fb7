/*
 * Secrets of the CLI (peer passwords): read from a file or the
 * environment, never required on the command line, where every local user
 * sees them (`ps`, /proc/PID/cmdline). A file is read whole under a small
 * cap and must hold one line, the password (its newline trimmed, so
 * "echo pw > file" works); the copy read is wiped before it is freed.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "knut/net.h"

int knut_cli_secret_read(const char *cmd, const char *opt, const char *file, const char *env,
                         char **out)
{
    *out = NULL;
    if (!file) {
        const char *v = env ? getenv(env) : NULL;
        if (v && *v && !(*out = strdup(v))) {
            fprintf(stderr, "knut %s: out of memory\n", cmd);
            return -1;
        }
        return 0;
    }
    knut_error err = KNUT_ERROR_INIT;
    if (knut_net_secret_file_read(file, out, &err) != KNUT_OK) {
        fprintf(stderr, "knut %s: %s %s\n", cmd, opt, err.message); /* names the file only */
        return -1;
    }
    return 0;
}

int knut_cli_url_password(const char *url)
{
    knut_net_redis_url u;
    knut_error err = KNUT_ERROR_INIT;
    if (!url || knut_net_redis_url_parse(&u, url, &err) != KNUT_OK)
        return 0; /* a bad URL is reported where it is used */
    int has = u.password != NULL;
    knut_net_redis_url_reset(&u);
    return has;
}

int knut_cli_peer_password(const char *cmd, const char *opt, const char *fopt, const char *url,
                           int url_from_env, const char *file, const char *env, char **out)
{
    if (knut_cli_secret_read(cmd, fopt, file, env, out) != 0)
        return -1;
    if (!knut_cli_url_password(url))
        return 0;
    if (*out) { /* which one would count? */
        fprintf(stderr, "knut %s: %s: a password both in the URL and in %s: give one\n", cmd,
                opt, file ? fopt : env);
        knut_net_secret_free(*out);
        *out = NULL;
        return -1;
    }
    if (!url_from_env)
        knut_log_emit(KNUT_LOG_WARN, cmd, (knut_log_field[]){KNUT_LF_STR("option", opt)}, 1,
                      "%s URL holds a password, which every local user can read in the "
                      "process list: use %s, $%s or a URL in the environment instead",
                      opt, fopt, env);
    return 0;
}
