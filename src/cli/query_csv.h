/*
 * `knut query`: the CSV files a query reads whose sniffed reading loses
 * or renames data (query_csv.c).
 */
#ifndef KNUT_CLI_QUERY_CSV_H
#define KNUT_CLI_QUERY_CSV_H

#include "knut/duck.h"

/* One sniffer guess about file (both borrowed for the call). */
typedef void (*knut_cli_csv_warn_fn)(const char *file, const char *what, void *ctx);

/* Finds the local CSV files sql reads (DuckDB's parse tree: 'x.csv' as a
 * table, read_csv/read_csv_auto with a constant path; a glob: its first
 * file) and calls warn for each sniffer guess that drops a line or
 * renames columns, unless the call's own options settle it; *found gets
 * their number. SQL DuckDB cannot serialize (not a SELECT) is not
 * checked. Errors: KNUT_ENOMEM. */
knut_status knut_cli_query_csv_check(knut_duck_conn *c, const char *sql,
                                     knut_cli_csv_warn_fn warn, void *ctx, int *found,
                                     knut_error *err);

#endif
