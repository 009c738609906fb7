/*
 * Internals shared by the mutation model and the Cypher renderer: which
 * Arrow types may be keys or stored properties, identifier checks, and a
 * message-safe form of user-supplied names. Not part of the public API.
 */
#ifndef KNUT_GRAPH_CYPHER_INT_H
#define KNUT_GRAPH_CYPHER_INT_H

#include <stddef.h>

#include "knut/graph.h"

/* Longest name quoted in an error message before it is cut with "...". */
#define KNUT_GRAPH__MSG_NAME_MAX 80

/*
 * Copies s[0..len) into dst (cap bytes, NUL-terminated) for an error
 * message: control bytes become '?', long names are cut at a character
 * boundary and end in "...". Returns dst.
 */
const char *knut_graph__msg_name(char *dst, size_t cap, const char *s, size_t len);

/* Byte offset of the first invalid UTF-8 sequence in s[0..len), or -1. */
int64_t knut_graph__utf8_bad_offset(const uint8_t *s, size_t len);

/*
 * Checks a label, relationship type, property or map-key name: non-empty,
 * no NUL, no backtick (FalkorDB's parser has no escape for one inside a
 * backticked name: `a``b` is a syntax error), valid UTF-8. `what` names the
 * kind in the message ("label", "property", ...).
 */
knut_status knut_graph__ident_check(const char *name, size_t len, const char *what,
                                    knut_error *err);

/* 1 for a DECIMAL FalkorDB stores exactly, as an integer: scale 0,
 * precision <= 18 (fits int64). */
int knut_graph__decimal_is_int(const knut_arrow_type_info *t);

/*
 * FalkorDB's judgement of a bound set's property types (the mutation
 * accepts every type; the embedded store keeps them all): KNUT_EUNSUPPORTED
 * naming the set and column and why FalkorDB cannot store it.
 */
knut_status knut_graph__falkor_set_check(const knut_graph_set *set, knut_error *err);

/* Scalar types a key may have (and a property, and a list element). */
int knut_graph__scalar_ok(knut_arrow_type type);

/* The query-text conversion a scalar type needs (date(), localdatetime(), ...). */
knut_graph_conv knut_graph__scalar_conv(knut_arrow_type type);

/*
 * Classifies a stream column as a stored property: fills *conv and returns
 * KNUT_OK, or KNUT_EUNSUPPORTED with a message saying why FalkorDB cannot
 * store it (the caller prefixes set and column). schema is the column's
 * child schema; dictionaries are judged by their value type.
 */
knut_status knut_graph__prop_type(const struct ArrowSchema *schema, knut_graph_conv *conv,
                                  knut_error *err);

/* The value type of a column (the dictionary's for dictionary-encoded). */
knut_status knut_graph__value_type(const struct ArrowSchema *schema, knut_arrow_type_info *out,
                                   knut_error *err);

/* Flags for knut_graph__value. */
#define KNUT_GRAPH__STORABLE 1u /* refuse nulls inside lists: FalkorDB cannot store them */

/* knut_graph_cypher_value with flags. */
knut_status knut_graph__value(knut_buf *out, const knut_arrow_view *v, int64_t i,
                              const knut_graph_cypher_loc *loc, unsigned flags,
                              knut_error *err);

/*
 * The one relationship-pattern writer of every query text
 * (src/graph/cypher_query.c): "-[var:`TYPE` {`k`: r.list[0], ...}]->", the
 * map left out without keys (keys may then be NULL). The nodes on either
 * side are the caller's. `what` names the type in a message ("type", ...).
 */
knut_status knut_graph__cypher_rel(knut_buf *out, const char *var, const char *type,
                                   const char *what, const knut_graph_column *keys,
                                   size_t n_keys, const char *list, knut_error *err);

/* Missing endpoints named in a set's `missing`, at most. */
#define KNUT_GRAPH__MISSING_ROWS 3

/* sink_missing.c: appends the missing endpoint(s) of one skipped row
 * ("Person {id: 7}") to set->missing, up to KNUT_GRAPH__MISSING_ROWS
 * vertices; vals are the keys as text (NULL: null). */
void knut_graph__missing_add(knut_graph_set *set, int src_missing, int dst_missing,
                             const char *const *src_vals, const char *const *dst_vals);
/* 1 when set->missing names as many vertices as it keeps. */
int knut_graph__missing_full(const knut_graph_set *set);
/* The KNUT_GRAPH_MISSING_FAIL error of a set with skipped rows: EINVAL,
 * detail KNUT_GRAPH_ERR_MISSING_ENDPOINT, naming the first missing. */
knut_status knut_graph__missing_fail(const knut_graph_set *set, knut_error *err);

/*
 * The read-only text that finds the rows of an edge set whose endpoint is
 * missing (run with the same parameter block as the edge upsert): per row,
 * 1/0 for a missing source and destination, then the source keys and the
 * destination keys as strings; at most KNUT_GRAPH__MISSING_ROWS rows, in
 * row order.
 */
knut_status knut_graph__cypher_missing_query(knut_buf *out, const knut_graph_set *set,
                                            knut_error *err);

/*
 * The update-by-node-id text of a vertex set (src/graph/cypher_query.c):
 * rows carry `i` (a FalkorDB node id) besides k/p/t; a row whose node is
 * gone or no longer has the set's first label and keys matches nothing.
 * The reply has a row (the count updated) only when some row matched
 * nothing.
 */
knut_status knut_graph__cypher_query_by_id(knut_buf *out, const knut_graph_set *set,
                                           knut_error *err);

/*
 * knut_graph_cypher_render over the batch rows rows[0..n) (any order),
 * each with node id ids[j] and the by-id text when ids is not NULL, else
 * with the set's own text. Same budget rule: *n_rows is how many of rows
 * fit (at least one, or an error).
 */
knut_status knut_graph__cypher_render_subset(knut_buf *out, const knut_graph_set *set,
                                             const knut_arrow_view *batch, const int64_t *rows,
                                             const int64_t *ids, int64_t n, int64_t row_base,
                                             size_t budget, int64_t *n_rows, knut_error *err);

#endif /* KNUT_GRAPH_CYPHER_INT_H */
