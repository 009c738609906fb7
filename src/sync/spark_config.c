/*
 * The `spark:` key of a sync table (docs/sync.md "Spark tables"): the
 * table is read through Spark Connect instead of from dropped files.
 * {table: [catalog.]db.name, connect: sc://..., token_file: FILE,
 * ca_file: FILE, allow_insecure_token: bool, state: FOLDER, changes:
 * compare|changelog}; only `table`
 * is required (the server defaults to $SPARK_REMOTE, the token to
 * $SPARK_CONNECT_AUTHENTICATE_TOKEN, the state folder to
 * .knut-spark/ beside the config). Paths are relative to the config's
 * folder. The keys that describe files are refused, as for `iceberg:`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync_int.h"

/* An error at n: "table 'T': spark: MSG". */
static knut_status serr(knut_error *err, const knut_conf *n, const char *table, const char *msg)
{
    char full[384];
    snprintf(full, sizeof full, "spark: %s", msg);
    return knut_sync__source_err(err, n, table, full);
}

/* A table name of 1 to 3 dot-separated non-empty parts without backticks
 * (each part is quoted with backticks for Spark). */
static int table_name_ok(const char *s)
{
    int parts = 1;
    if (!*s || *s == '.' || s[strlen(s) - 1] == '.' || strstr(s, "..") || strchr(s, '`'))
        return 0;
    for (; *s; s++)
        parts += *s == '.';
    return parts <= 3;
}

knut_status knut_sync__spark_parse(const knut_conf *n, const char *table, const char *dir,
                                   knut_sync_table *t, knut_error *err)
{
    static const char *const allowed[] = {"table", "connect", "token_file", "ca_file",
                                          "allow_insecure_token", "state", "changes", NULL};
    const knut_conf *sp = knut_conf_get(n, "spark");
    knut_status st = knut_sync__source_no_file_keys(
        n, table, "spark: ", "spark",
        "its rows are what changed in the Spark table since the last round", err);
    if (st != KNUT_OK)
        return st;
    if (knut_conf_kind_of(sp) != KNUT_CONF_MAP)
        return serr(err, sp, table, "must be a map: {table: db.name, connect: sc://...}");
    st = knut_graph_map_check_keys(sp, "table", table, "spark", allowed, err);
    const char *name = NULL, *connect = NULL, *token = NULL, *ca = NULL, *state = NULL;
    const char *changes = NULL;
    if (st == KNUT_OK)
        st = knut_sync__source_str(sp, "table", table, "spark", &name, err);
    if (st == KNUT_OK)
        st = knut_sync__source_str(sp, "connect", table, "spark", &connect, err);
    if (st == KNUT_OK)
        st = knut_sync__source_str(sp, "token_file", table, "spark", &token, err);
    if (st == KNUT_OK)
        st = knut_sync__source_str(sp, "ca_file", table, "spark", &ca, err);
    if (st == KNUT_OK)
        st = knut_sync__source_str(sp, "state", table, "spark", &state, err);
    if (st == KNUT_OK)
        st = knut_sync__source_str(sp, "changes", table, "spark", &changes, err);
    if (st != KNUT_OK)
        return st;
    if (!name)
        return serr(err, sp, table, "needs 'table' ([catalog.]db.name)");
    if (!table_name_ok(name))
        return serr(err, knut_conf_get(sp, "table"), table,
                    "'table' must be name, db.name or catalog.db.name (no backticks)");
    if (changes && strcmp(changes, "compare") != 0 && strcmp(changes, "changelog") != 0)
        return serr(err, knut_conf_get(sp, "changes"), table,
                    "'changes' must be compare (the table against its last synced state) or "
                    "changelog (an Iceberg table's changelog view)");
    if (connect && strncmp(connect, "sc://", 5) != 0)
        return serr(err, knut_conf_get(sp, "connect"), table, "'connect' must be an sc:// URL");
    int insecure = 0;
    if (knut_conf_get(sp, "allow_insecure_token") &&
        (st = knut_conf_get_bool(sp, "allow_insecure_token", &insecure, err)) != KNUT_OK)
        return knut_error_prefix(err, "table '%s': spark: ", table);
    knut_sync_spark *spk = calloc(1, sizeof *spk);
    if (!spk)
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    t->spark = spk;
    spk->node = sp;
    spk->connect = connect;
    spk->table = name;
    spk->allow_insecure_token = insecure;
    spk->changelog = changes && strcmp(changes, "changelog") == 0;
    size_t kn = strlen(SYNC_SPARK_KEY_PREFIX) + strlen(name) + 1;
    if ((spk->key = malloc(kn)))
        snprintf(spk->key, kn, "%s%s", SYNC_SPARK_KEY_PREFIX, name);
    spk->state = knut_sync__path_join(dir, state ? state : ".knut-spark");
    spk->token_file = token ? knut_sync__path_join(dir, token) : NULL;
    spk->ca_file = ca ? knut_sync__path_join(dir, ca) : NULL;
    t->path = spk->key ? strdup(spk->key) : NULL; /* what logs and assets name */
    if (!spk->key || !spk->state || !t->path || (token && !spk->token_file) ||
        (ca && !spk->ca_file))
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    return KNUT_OK;
}

void knut_sync__spark_free(knut_sync_table *t)
{
    if (!t->spark)
        return;
    free(t->spark->token_file);
    free(t->spark->ca_file);
    free(t->spark->state);
    free(t->spark->key);
    free(t->spark);
    t->spark = NULL;
}
