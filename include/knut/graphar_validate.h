/*
 * knut graphar, validation: checks an info set and its data against the
 * format and reports every issue found. Part of knut/graphar.h.
 */
#ifndef KNUT_GRAPHAR_VALIDATE_H
#define KNUT_GRAPHAR_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "knut/core.h"
#include "knut/graphar_info.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- validator (src/graphar/validate*.c) ---- */

/*
 * Checks a graph against the reference's info rules (IsValidated, the
 * `graphar check` CLI) and against its data: count files, the chunk set
 * each count implies, rows per chunk, column names and types, vertex
 * indices, adjacency ranges, partitioning, sort order and offsets. Data is
 * read through DuckDB with aggregates only (count, min/max, lag), so memory
 * stays bounded whatever the graph size. Parquet and CSV chunks are read;
 * ORC and JSON chunks are checked for existence only.
 *
 * Severity follows the reference: what it refuses, or what breaks readers,
 * is an error; what it accepts (and the official corpus contains) is at
 * most a warning. Every rule has a stable id, listed by
 * knut_graphar_validate_rules() and in docs/graphar.md.
 */
typedef enum knut_graphar_severity {
    KNUT_GRAPHAR_SEV_ERROR,
    KNUT_GRAPHAR_SEV_WARNING
} knut_graphar_severity;

/* "error" / "warning". */
KNUT_EXTERN const char *knut_graphar_severity_name(knut_graphar_severity s);

typedef struct knut_graphar_issue {
    knut_graphar_severity severity;
    const char *rule;   /* stable id, e.g. "chunk.missing" (static string) */
    char *file;         /* the YAML or data file (or directory) concerned */
    int line, col;      /* position in a YAML file; 0 when not applicable */
    char *field;        /* YAML field path, column, or chunk; "" if none */
    char *message;      /* one line */
} knut_graphar_issue;

typedef struct knut_graphar_issues {
    knut_graphar_issue *items; /* in the order found */
    size_t n;
    size_t n_errors;    /* every error found, kept in items or not */
    size_t n_warnings;
    int truncated;      /* more than max_issues found: items holds the first
                         * max_issues, the counts all (checking goes on, so
                         * an error past the cap still makes the graph invalid) */
} knut_graphar_issues;

/* NULL-safe; frees the list and everything in it. */
KNUT_EXTERN void knut_graphar_issues_free(knut_graphar_issues *issues);

/* One rule: its id, severity and one-line meaning. */
typedef struct knut_graphar_rule {
    const char *id;
    knut_graphar_severity severity;
    const char *meaning;
} knut_graphar_rule;

/* The rule table (static; *n gets its length). */
KNUT_EXTERN const knut_graphar_rule *knut_graphar_validate_rules(size_t *n);

#define KNUT_GRAPHAR_VALIDATE_OPTIONS_VERSION 1
#define KNUT_GRAPHAR_VALIDATE_DEFAULT_MAX_ISSUES 1000

typedef struct knut_graphar_validate_options {
    int version;          /* KNUT_GRAPHAR_VALIDATE_OPTIONS_VERSION */
    int info_only;        /* skip every data check */
    int require_data;     /* a type without any data is an error (data.missing)
                           * instead of a warning (data.absent) */
    size_t max_issues;    /* keep this many in the list; 0 = the default above */
    const char *data_dir; /* read data here instead of the graph prefix */
} knut_graphar_validate_options;

#define KNUT_GRAPHAR_VALIDATE_OPTIONS_INIT {.version = KNUT_GRAPHAR_VALIDATE_OPTIONS_VERSION}

/*
 * Validates the graph YAML at path (or the single *.graph.yml/.yaml in a
 * directory). Unlike knut_graphar_graph_load, a vertex or edge file that
 * fails to load does not stop the run: the failure becomes an issue naming
 * that file and the rule it breaks (type.unknown, version.bad, ...), and
 * the other files are still checked. Data is read from the graph prefix; a
 * prefix that does not exist (the nebula corpus has an absolute /tmp one)
 * falls back to the YAML's directory with a prefix.not_found warning.
 *
 * opts may be NULL (defaults). Returns KNUT_OK when the checks ran, even
 * if they found errors: *out (caller frees) holds the issues. Fails only on
 * bad arguments (KNUT_EINVAL), KNUT_ENOMEM or a DuckDB failure (*out is
 * then NULL); a YAML that cannot be read is an issue (info.unreadable),
 * not an error. The caller frees *out with knut_graphar_issues_free.
 */
KNUT_EXTERN knut_status knut_graphar_validate(const char *path,
                                              const knut_graphar_validate_options *opts,
                                              knut_graphar_issues **out, knut_error *err);

/* The same for a graph info already loaded or built in memory (data under
 * opts->data_dir, else gi->prefix with the same fallback to gi->base_dir). */
KNUT_EXTERN knut_status knut_graphar_validate_graph(const knut_graphar_graph_info *gi,
                                                    const knut_graphar_validate_options *opts,
                                                    knut_graphar_issues **out, knut_error *err);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_GRAPHAR_VALIDATE_H */
