/*
 * Why an info file failed to load. The loader stops at the first fault and
 * says it in prose; the validator wants every fault, each under its rule
 * id and YAML line. So for a refused file it walks the raw YAML tree for
 * the faults the loader refuses: bad versions, unknown data/file types and
 * cardinalities, missing required fields, chunk sizes that are not > 0.
 * Anything else the loader refused is reported by the caller as info.load.
 */
#include "validate_int.h"

#include <string.h>

typedef struct scan {
    gv_ctx *c;
    const char *file;
    size_t found;
} scan;

static knut_graphar_pos pos_of(const knut_conf *n)
{
    knut_graphar_pos p = {knut_conf_line(n), knut_conf_col(n)};
    return p;
}

/* A node's scalar text, or NULL for an absent/null/non-scalar node. */
static const char *text_of(const knut_conf *n)
{
    return n && knut_conf_kind_of(n) == KNUT_CONF_SCALAR ? knut_conf_str(n) : NULL;
}

static const knut_conf *present(const knut_conf *map, const char *key)
{
    const knut_conf *n = knut_conf_get(map, key);
    return n && knut_conf_kind_of(n) != KNUT_CONF_NULL ? n : NULL;
}

#define REPORT(s, rule, node, field, ...)                                                          \
    do {                                                                                           \
        knut_graphar_pos p_ = pos_of(node);                                                        \
        knut_graphar__validate_issue((s)->c, (rule), (s)->file, &p_, (field), __VA_ARGS__);        \
        (s)->found++;                                                                              \
    } while (0)

static void scan_version(scan *s, const knut_conf *root)
{
    const knut_conf *n = present(root, "version");
    if (!n)
        return;
    const char *t = text_of(n);
    knut_graphar_version v = {0};
    knut_error e = KNUT_ERROR_INIT;
    if (!t || knut_graphar_version_parse(&v, t, &e) != KNUT_OK)
        REPORT(s, GV_VERSION_BAD, n, "version", "'%.60s' is not a valid version (gar/v1 expected)",
               t ? t : "(not a string)");
    knut_graphar_version_reset(&v);
}

static void scan_required_text(scan *s, const knut_conf *map, const char *key,
                               const char *legacy, const char *field)
{
    const knut_conf *n = present(map, key);
    if (!n && legacy)
        n = present(map, legacy);
    const char *t = text_of(n);
    if (!n || (t && !*t))
        REPORT(s, GV_FIELD_MISSING, n ? n : map, field, "required field is missing or empty");
}

static void scan_chunk_size(scan *s, const knut_conf *map, const char *key)
{
    const knut_conf *n = present(map, key);
    int64_t v = 0;
    if (!n)
        REPORT(s, GV_CHUNK_SIZE_INVALID, map, key, "missing (must be an integer > 0)");
    else if (knut_conf_get_i64(map, key, &v, NULL) != KNUT_OK || v <= 0)
        REPORT(s, GV_CHUNK_SIZE_INVALID, n, key, "'%.40s' is not an integer > 0",
               text_of(n) ? text_of(n) : "(not a scalar)");
}

static void scan_file_type(scan *s, const knut_conf *map, const char *field)
{
    char f[192];
    snprintf(f, sizeof f, "%s.file_type", field);
    const knut_conf *n = present(map, "file_type");
    const char *t = text_of(n);
    knut_graphar_file_type ft;
    if (!n)
        REPORT(s, GV_FIELD_MISSING, map, f, "required field is missing");
    else if (!t || knut_graphar_file_type_parse(t, &ft, NULL) != KNUT_OK)
        REPORT(s, GV_FILE_TYPE_UNKNOWN, n, f, "unknown file_type '%.40s'", t ? t : "(not a string)");
}

static void scan_property(scan *s, const knut_conf *p, const char *field, int is_edge)
{
    char f[224];
    if (knut_conf_kind_of(p) != KNUT_CONF_MAP)
        return;
    snprintf(f, sizeof f, "%s.name", field);
    scan_required_text(s, p, "name", NULL, f);
    snprintf(f, sizeof f, "%s.data_type", field);
    const knut_conf *dt = present(p, "data_type");
    const char *t = text_of(dt);
    knut_graphar_type type, elem;
    if (!dt)
        REPORT(s, GV_FIELD_MISSING, p, f, "required field is missing");
    else if (!t || knut_graphar_type_parse(t, &type, &elem, NULL) != KNUT_OK)
        REPORT(s, GV_TYPE_UNKNOWN, dt, f, "unknown data_type '%.40s'", t ? t : "(not a string)");
    snprintf(f, sizeof f, "%s.cardinality", field);
    const knut_conf *cn = present(p, "cardinality");
    if (!cn)
        return;
    t = text_of(cn);
    knut_graphar_cardinality card;
    if (!t || knut_graphar_cardinality_parse(t, &card, NULL) != KNUT_OK)
        REPORT(s, GV_CARDINALITY_UNKNOWN, cn, f, "unknown cardinality '%.40s'",
               t ? t : "(not a string)");
    else if (is_edge && card != KNUT_GRAPHAR_CARD_SINGLE)
        REPORT(s, GV_CARDINALITY_EDGE, cn, f, "cardinality %s on an edge property (only single)",
               t);
}

static void scan_groups(scan *s, const knut_conf *root, int is_edge)
{
    const knut_conf *seq = present(root, "property_groups");
    if (knut_conf_kind_of(seq) != KNUT_CONF_SEQ)
        return;
    for (size_t g = 0; g < knut_conf_len(seq); g++) {
        const knut_conf *grp = knut_conf_at(seq, g);
        if (knut_conf_kind_of(grp) != KNUT_CONF_MAP)
            continue;
        char field[96];
        snprintf(field, sizeof field, "property_groups[%zu]", g);
        scan_file_type(s, grp, field);
        const knut_conf *props = present(grp, "properties");
        if (knut_conf_kind_of(props) != KNUT_CONF_SEQ)
            continue;
        for (size_t k = 0; k < knut_conf_len(props); k++) {
            char pf[160];
            snprintf(pf, sizeof pf, "%s.properties[%zu]", field, k);
            scan_property(s, knut_conf_at(props, k), pf, is_edge);
        }
    }
}

static void scan_adj_lists(scan *s, const knut_conf *root)
{
    const knut_conf *seq = present(root, "adj_lists");
    if (knut_conf_kind_of(seq) != KNUT_CONF_SEQ)
        return;
    for (size_t i = 0; i < knut_conf_len(seq); i++) {
        const knut_conf *al = knut_conf_at(seq, i);
        if (knut_conf_kind_of(al) != KNUT_CONF_MAP)
            continue;
        char field[64], f[96];
        snprintf(field, sizeof field, "adj_lists[%zu]", i);
        snprintf(f, sizeof f, "%s.ordered", field);
        if (!present(al, "ordered"))
            REPORT(s, GV_FIELD_MISSING, al, f, "required field is missing");
        snprintf(f, sizeof f, "%s.aligned_by", field);
        scan_required_text(s, al, "aligned_by", NULL, f);
        scan_file_type(s, al, field);
    }
}

size_t knut_graphar__validate_prescan(gv_ctx *c, const knut_conf *root, const char *file, int kind)
{
    scan s = {c, file, 0};
    if (knut_conf_kind_of(root) != KNUT_CONF_MAP) {
        REPORT(&s, GV_YAML_PARSE, root, "(document)", "the document is not a map");
        return s.found;
    }
    scan_version(&s, root);
    if (kind == 'v') {
        scan_required_text(&s, root, "type", "label", "type");
        scan_chunk_size(&s, root, "chunk_size");
        scan_groups(&s, root, 0);
    } else if (kind == 'e') {
        scan_required_text(&s, root, "src_type", "src_label", "src_type");
        scan_required_text(&s, root, "edge_type", "edge_label", "edge_type");
        scan_required_text(&s, root, "dst_type", "dst_label", "dst_type");
        scan_chunk_size(&s, root, "chunk_size");
        scan_chunk_size(&s, root, "src_chunk_size");
        scan_chunk_size(&s, root, "dst_chunk_size");
        scan_adj_lists(&s, root);
        scan_groups(&s, root, 1);
    }
    return s.found;
}
