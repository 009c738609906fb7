/*
 * `knut pipeline init DIR`: writes a small runnable project: a spec, a
 * folder of CSV drops, and bronze (a streaming table over the drops),
 * silver (a materialized view with expectations) and gold SQL files. The
 * same project is the example of docs/pipelines.md and is run by the
 * integration tests.
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

typedef struct init_args {
    const char *dir;
} init_args;

static const knut_cli_arg init_pos[] = {
    KNUT_CLI_ARG("DIR", init_args, dir),
    KNUT_CLI_ARG_END,
};

const knut_cli_spec knut_cmd_pipeline_init_spec = {
    .name = "pipeline init",
    .synopsis = "usage: knut pipeline init DIR\n",
    .about = "Writes a runnable example pipeline project into DIR (created; it must be\n"
             "missing or empty): pipeline.yml, data/orders/*.csv and\n"
             "transformations/{bronze,silver,gold}.sql. Then run it with\n"
             "'knut pipeline run DIR'.\n",
    .args = init_pos,
};

static const char spec_yml[] =
    "# A knut pipeline spec (docs/pipelines.md).\n"
    "name: orders\n"
    "storage: storage            # the DuckDB database, checkpoints and run log\n"
    "schema: main\n"
    "libraries:\n"
    "  - glob:\n"
    "      include: transformations/**\n";

static const char orders_csv[] =
    "order_id,customer,amount,ordered_at\n"
    "1,ada,12.50,2026-01-05 10:00:00\n"
    "2,bob,7.25,2026-01-05 11:30:00\n"
    "3,ada,-1.00,2026-01-06 09:15:00\n"
    "4,,30.00,2026-01-06 12:00:00\n";

static const char bronze_sql[] =
    "-- Bronze: every CSV drop in data/orders, read once (only new files each run).\n"
    "CREATE OR REFRESH STREAMING TABLE raw_orders\n"
    "COMMENT 'orders as they arrive'\n"
    "AS SELECT * FROM read_csv('data/orders/*.csv');\n";

static const char silver_sql[] =
    "-- Silver: the orders that pass the checks; bad amounts go to orders__quarantine.\n"
    "CREATE MATERIALIZED VIEW orders (\n"
    "  CONSTRAINT positive_amount EXPECT (amount > 0) ON VIOLATION QUARANTINE,\n"
    "  CONSTRAINT known_customer EXPECT (customer IS NOT NULL),\n"
    "  CONSTRAINT one_row_per_order EXPECT UNIQUE (order_id) ON VIOLATION FAIL UPDATE\n"
    ") AS\n"
    "SELECT order_id, customer, amount, CAST(ordered_at AS DATE) AS order_date\n"
    "FROM raw_orders;\n";

static const char gold_sql[] =
    "-- Gold: revenue per customer and day.\n"
    "CREATE MATERIALIZED VIEW daily_revenue AS\n"
    "WITH valid AS (SELECT * FROM orders WHERE customer IS NOT NULL)\n"
    "SELECT customer, order_date, sum(amount) AS revenue, count(*) AS orders\n"
    "FROM valid GROUP BY customer, order_date;\n";

static const struct {
    const char *path, *text;
} files[] = {
    {"pipeline.yml", spec_yml},
    {"data/orders/orders-0001.csv", orders_csv},
    {"transformations/bronze.sql", bronze_sql},
    {"transformations/silver.sql", silver_sql},
    {"transformations/gold.sql", gold_sql},
};

static int make_dir(const char *path)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "knut pipeline init: %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int knut_cmd_pipeline_init(int argc, char **argv)
{
    init_args a = {0};
    int rc = knut_cli_args_parse(&knut_cmd_pipeline_init_spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    DIR *d = opendir(a.dir);
    if (d) {
        struct dirent *e;
        int empty = 1;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                empty = 0;
        closedir(d);
        if (!empty) {
            fprintf(stderr, "knut pipeline init: %s is not empty; nothing written\n", a.dir);
            return KNUT_EXIT_FAIL;
        }
    }
    char path[4096];
    const char *dirs[] = {"", "/data", "/data/orders", "/transformations"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        if ((size_t)snprintf(path, sizeof path, "%s%s", a.dir, dirs[i]) >= sizeof path) {
            fprintf(stderr, "knut pipeline init: %s: path too long\n", a.dir);
            return KNUT_EXIT_FAIL;
        }
        if (make_dir(path) != 0)
            return KNUT_EXIT_FAIL;
    }
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        knut_error err = KNUT_ERROR_INIT;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", a.dir, files[i].path) >= sizeof path ||
            knut_file_write_atomic(path, files[i].text, strlen(files[i].text), &err) != KNUT_OK) {
            fprintf(stderr, "knut pipeline init: %s\n", err.message[0] ? err.message : path);
            return KNUT_EXIT_FAIL;
        }
    }
    printf("wrote a pipeline project to %s; run it with: knut pipeline run %s\n", a.dir, a.dir);
    return KNUT_EXIT_OK;
}
