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

#endif /* KNUT_GRAPH_CYPHER_INT_H */
