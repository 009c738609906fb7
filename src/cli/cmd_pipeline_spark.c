/*
 * `knut pipeline run --backend spark`: the pipeline lowered to Spark
 * Declarative Pipelines (knut/pipeline.h, docs/spark.md). --dry-run prints
 * the lowering and its report without a server (for --spark-version, by
 * default the newest layout knut speaks); a run asks the server its
 * version, lowers for it, and prints the run's events as the native
 * backend does (cmd_pipeline.c hands its event printer in).
 */
#include "spark_cli.h"

#include <stdlib.h>
#include <string.h>

#include "knut/knut.h"

#define NEWEST_LAYOUT "4.3.0"

/* Prints every refusal of the plan on stderr (a run that will not start). */
static void print_refusals(const char *cmd, const knut_pipeline_spark_plan *pl)
{
    knut_buf b = KNUT_BUF_INIT;
    knut_error err = KNUT_ERROR_INIT;
    if (knut_pipeline_spark_show(pl, 0, &b, &err) == KNUT_OK && b.data) {
        for (char *line = strtok(b.data, "\n"); line; line = strtok(NULL, "\n"))
            if (strstr(line, "REFUSED"))
                fprintf(stderr, "knut %s: %s\n", cmd, line + strspn(line, " "));
    }
    knut_buf_reset(&b);
}

int knut_cli_pipeline_spark(const knut_cli_spec *spec, knut_pipeline *p,
                            const knut_pipeline_run_options *o, const knut_cli_spark_args *sa,
                            int json)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_spark_session *s = NULL;
    knut_pipeline_spark_plan *pl = NULL;
    char *version = NULL;
    knut_buf b = KNUT_BUF_INIT;
    int rc = KNUT_EXIT_FAIL;
    knut_pipeline_spark_options lo = KNUT_PIPELINE_SPARK_OPTIONS_INIT;
    lo.storage = sa->storage;
    if (o->dry_run) {
        /* no server: the version the user names, else the newest layout */
        if (knut_pipeline_spark_lower(p, sa->version ? sa->version : NEWEST_LAYOUT, &lo, &pl,
                                      &err) != KNUT_OK) {
            fprintf(stderr, "knut %s: %s\n", spec->name, err.message);
            rc = err.code == KNUT_EINVAL ? KNUT_EXIT_USAGE : KNUT_EXIT_FAIL;
            goto cleanup;
        }
        if (knut_pipeline_spark_show(pl, json, &b, &err) != KNUT_OK) {
            fprintf(stderr, "knut %s: %s\n", spec->name, err.message);
            goto cleanup;
        }
        fwrite(b.data, 1, b.len, stdout);
        rc = knut_pipeline_spark_refused(pl) ? KNUT_EXIT_FAIL : KNUT_EXIT_OK;
        goto cleanup;
    }
    if (sa->version) {
        rc = knut_cli_args_error(spec, "%s", "--spark-version is for --dry-run: a run asks "
                                 "the server its version");
        goto cleanup;
    }
    if ((rc = knut_cli_spark_open(spec, &sa->conn, NULL, &s)) != KNUT_EXIT_OK)
        goto cleanup;
    rc = KNUT_EXIT_FAIL;
    if (knut_spark_version(s, &version, &err) != KNUT_OK ||
        knut_pipeline_spark_lower(p, version, &lo, &pl, &err) != KNUT_OK) {
        fprintf(stderr, "knut %s: %s\n", spec->name, err.message);
        goto cleanup;
    }
    if (knut_pipeline_spark_refused(pl)) {
        fprintf(stderr, "knut %s: pipeline %s cannot run on Spark %s (nothing was sent; see "
                "`knut pipeline run --backend spark --dry-run --spark-version %s` for the "
                "report):\n", spec->name, p->name, version, version);
        print_refusals(spec->name, pl);
        goto cleanup;
    }
    knut_pipeline_run_result res;
    if (knut_pipeline_spark_run(pl, s, o, &res, &err) != KNUT_OK) {
        fprintf(stderr, "knut %s: %s\n", spec->name, err.message);
        goto cleanup;
    }
    rc = KNUT_EXIT_OK;
cleanup:
    knut_buf_reset(&b);
    knut_pipeline_spark_plan_free(pl);
    free(version);
    knut_spark_session_free(s);
    return rc;
}
