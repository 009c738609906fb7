/*
 * Info dumping and saving. The text follows the reference C++ Dump(), whose
 * emitter (mini-yaml's Serialize with its default config) decides every
 * byte: keys in ASCII order (a std::map), "key: " then a newline before a
 * nested value (so the trailing space stays), 2-space indents, "- " items
 * with a map's first key on the item's line, scalars double-quoted without
 * escaping when they hold any of `":{}[],&*#?|-<>=!%@`, and lines over 64
 * characters folded as `>-` blocks at their spaces. Keeping that exact form
 * lets `graphar show` output and our dumps be compared byte for byte. The
 * one deviation: values that form would garble (line breaks and other
 * control characters, quotes, backslashes, edge spaces, YAML null words,
 * the empty string) are written as escaped double-quoted scalars, so every
 * dump loads back to the same info.
 */
#include "graphar_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* mini-yaml's default SerializeConfig: ScalarMaxLength = 64. */
#define DUMP_FOLD_AT 64

static void pad(knut_buf *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        knut_buf_putc(b, ' ');
}

static int should_quote(const char *s)
{
    return strpbrk(s, "\":{}[],&*#?|-<>=!%@") != NULL;
}

/*
 * Splits a > 64-character line at the first space at or after every 64th
 * character, as mini-yaml's LineFolding does; writes the pieces (each at
 * `level`) when out != NULL and returns how many there are.
 */
static size_t fold(const char *s, size_t len, knut_buf *out, size_t level)
{
    size_t count = 0, last = 0;
    for (;;) {
        size_t cur = last + DUMP_FOLD_AT;
        const char *sp = cur < len ? memchr(s + cur, ' ', len - cur) : NULL;
        if (!sp) {
            if (len > last) {
                count++;
                if (out) {
                    pad(out, level);
                    knut_buf_append(out, s + last, len - last);
                    knut_buf_putc(out, '\n');
                }
            }
            return count;
        }
        size_t at = (size_t)(sp - s);
        count++;
        if (out) {
            pad(out, level);
            knut_buf_append(out, s + last, at - last);
            knut_buf_putc(out, '\n');
        }
        last = at + 1;
    }
}

/* Decodes one UTF-8 sequence at p; returns its length, or 0 if invalid
 * (overlong, surrogate, past U+10FFFF, truncated). */
static size_t utf8_next(const unsigned char *p, uint32_t *cp)
{
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    size_t n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
    if (n == 0 || p[0] > 0xf4)
        return 0;
    uint32_t c = p[0] & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (p[i] & 0x3f);
    }
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < min[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

/* Characters a YAML reader would take as a line break, refuse as
 * non-printable, or drop (a BOM): they can only be written escaped. */
static int needs_escape_cp(uint32_t c)
{
    return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x2028 || c == 0x2029 ||
           c == 0xfeff || c == 0xfffe || c == 0xffff;
}

/*
 * Values the reference's emitter would write unreadably or lossily: it
 * neither escapes nor checks them. Real infos never hold such values, so
 * for every ordinary value the output stays byte-identical.
 */
static int needs_escape(const char *s, size_t len)
{
    static const char *const nulls[] = {"~", "null", "Null", "NULL"};
    if (len == 0)
        return 0;
    for (size_t i = 0; i < 4; i++)
        if (strcmp(s, nulls[i]) == 0)
            return 1; /* would read back as a YAML null */
    if (s[0] == ' ' || s[len - 1] == ' ' || s[0] == '\'' || s[0] == '`')
        return 1;
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        uint32_t c;
        size_t n = utf8_next(p + i, &c);
        if (n == 0 || needs_escape_cp(c) || c == '"' || c == '\\')
            return 1;
        i += n;
    }
    /* Folding at a space next to another space would change the text. */
    return len > DUMP_FOLD_AT && strstr(s, "  ") != NULL;
}

/* A double-quoted YAML scalar with escapes; bytes that are not UTF-8
 * become U+FFFD (YAML text cannot hold them), as knut_buf_put_json_str. */
static void put_escaped(knut_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    knut_buf_putc(b, '"');
    while (*p) {
        uint32_t c;
        size_t n = utf8_next(p, &c);
        if (n == 0) {
            knut_buf_puts(b, "\\uFFFD");
            p++;
            continue;
        }
        if (c == '"' || c == '\\')
            knut_buf_printf(b, "\\%c", (char)c);
        else if (c == '\n')
            knut_buf_puts(b, "\\n");
        else if (c == '\t')
            knut_buf_puts(b, "\\t");
        else if (c <= 0xff && needs_escape_cp(c))
            knut_buf_printf(b, "\\x%02X", (unsigned)c);
        else if (needs_escape_cp(c))
            knut_buf_printf(b, "\\u%04X", (unsigned)c);
        else
            knut_buf_append(b, p, n);
        p += n;
    }
    knut_buf_puts(b, "\"\n");
}

/* One scalar value, as mini-yaml writes it; level is the indentation of
 * folded lines. (Its `|` blocks for multi-line values never occur: line
 * breaks are escaped.) */
static void put_scalar(knut_buf *b, const char *v, size_t level)
{
    size_t len = strlen(v);
    /* mini-yaml writes nothing for "", which YAML reads as null; a given
     * empty value (a graph prefix "") must survive a round trip. */
    if (len == 0 || needs_escape(v, len)) {
        put_escaped(b, v);
        return;
    }
    if (len <= DUMP_FOLD_AT || fold(v, len, NULL, 0) == 1) {
        if (should_quote(v))
            knut_buf_printf(b, "\"%s\"\n", v);
        else
            knut_buf_printf(b, "%s\n", v);
        return;
    }
    knut_buf_puts(b, ">-\n");
    fold(v, len, b, level);
}

/* A map being written: keys at `level`; the first key goes on the current
 * line when the map is a sequence item. */
typedef struct ymap {
    knut_buf *b;
    size_t level;
    size_t count;
} ymap;

static void ykey(ymap *m, const char *key)
{
    if (m->count++ > 0)
        pad(m->b, m->level);
    knut_buf_printf(m->b, "%s: ", key);
}

static void yscalar(ymap *m, const char *key, const char *value)
{
    ykey(m, key);
    put_scalar(m->b, value, m->level + 2);
}

static void yint(ymap *m, const char *key, int64_t v)
{
    char s[32];
    snprintf(s, sizeof s, "%lld", (long long)v);
    yscalar(m, key, s);
}

static void ybool(ymap *m, const char *key, int v)
{
    yscalar(m, key, v ? "true" : "false");
}

/* "key: \n": a sequence follows, items at m->level + 2. */
static size_t yseq(ymap *m, const char *key)
{
    ykey(m, key);
    knut_buf_putc(m->b, '\n');
    return m->level + 2;
}

static void yitem_scalar(knut_buf *b, size_t level, const char *v)
{
    pad(b, level);
    knut_buf_puts(b, "- ");
    put_scalar(b, v, level + 2);
}

static ymap yitem_map(knut_buf *b, size_t level)
{
    pad(b, level);
    knut_buf_puts(b, "- ");
    return (ymap){b, level + 2, 0};
}

static void ystrv(ymap *m, const char *key, char *const *v, size_t n)
{
    if (n == 0)
        return; /* an empty list is a None node: mini-yaml skips the key */
    size_t lv = yseq(m, key);
    for (size_t i = 0; i < n; i++)
        yitem_scalar(m->b, lv, v[i]);
}

static void yversion(ymap *m, const knut_graphar_version *v)
{
    if (!v->present)
        return;
    knut_buf s = KNUT_BUF_INIT;
    knut_graphar_version_format(v, &s);
    if (s.error != KNUT_OK)
        m->b->error = s.error;
    else
        yscalar(m, "version", s.data);
    knut_buf_reset(&s);
}

static void type_text(const knut_graphar_property *p, char *buf, size_t size)
{
    if (p->type == KNUT_GRAPHAR_TYPE_LIST)
        snprintf(buf, size, "list<%s>", knut_graphar_type_name(p->elem_type));
    else
        snprintf(buf, size, "%s", knut_graphar_type_name(p->type));
}

static void ygroups(ymap *m, const knut_graphar_property_group *groups, size_t n, int is_edge)
{
    if (n == 0)
        return;
    size_t lv = yseq(m, "property_groups");
    for (size_t i = 0; i < n; i++) {
        const knut_graphar_property_group *g = &groups[i];
        ymap gm = yitem_map(m->b, lv);
        yscalar(&gm, "file_type", knut_graphar_file_type_name(g->file_type));
        if (g->prefix && *g->prefix)
            yscalar(&gm, "prefix", g->prefix);
        if (g->n_props == 0)
            continue;
        size_t plv = yseq(&gm, "properties");
        for (size_t k = 0; k < g->n_props; k++) {
            const knut_graphar_property *p = &g->props[k];
            char tt[32];
            type_text(p, tt, sizeof tt);
            ymap pm = yitem_map(m->b, plv);
            /* The reference's edge dump has no cardinality key. */
            if (!is_edge && p->cardinality != KNUT_GRAPHAR_CARD_SINGLE)
                yscalar(&pm, "cardinality", knut_graphar_cardinality_name(p->cardinality));
            yscalar(&pm, "data_type", tt);
            ybool(&pm, "is_nullable", p->is_nullable);
            ybool(&pm, "is_primary", p->is_primary);
            yscalar(&pm, "name", p->name ? p->name : "");
        }
    }
}

knut_status knut_graphar_vertex_dump(const knut_graphar_vertex_info *vi, knut_buf *out,
                                     knut_error *err)
{
    KNUT_ASSERT_ARG(err, vi && out && vi->type && vi->prefix);
    ymap m = {out, 0, 0};
    yint(&m, "chunk_size", vi->chunk_size);
    ystrv(&m, "labels", vi->labels, vi->n_labels);
    yscalar(&m, "prefix", vi->prefix);
    ygroups(&m, vi->groups, vi->n_groups, 0);
    yscalar(&m, "type", vi->type);
    yversion(&m, &vi->version);
    return knut_buf_check(out, err);
}

knut_status knut_graphar_edge_dump(const knut_graphar_edge_info *ei, knut_buf *out,
                                   knut_error *err)
{
    KNUT_ASSERT_ARG(err, ei && out && ei->src_type && ei->edge_type && ei->dst_type &&
                             ei->prefix);
    /* The reference drops edge cardinality when dumping; refusing keeps
     * the loss from going unnoticed. */
    for (size_t i = 0; i < ei->n_groups; i++)
        for (size_t k = 0; k < ei->groups[i].n_props; k++)
            if (ei->groups[i].props[k].cardinality != KNUT_GRAPHAR_CARD_SINGLE)
                return knut_error_set(err, KNUT_EINVAL,
                                      "edge %s_%s_%s: property '%s' has %s cardinality, which "
                                      "an edge info cannot express",
                                      ei->src_type, ei->edge_type, ei->dst_type,
                                      ei->groups[i].props[k].name,
                                      knut_graphar_cardinality_name(
                                          ei->groups[i].props[k].cardinality));
    ymap m = {out, 0, 0};
    if (ei->n_adj_lists) {
        size_t lv = yseq(&m, "adj_lists");
        for (size_t i = 0; i < ei->n_adj_lists; i++) {
            const knut_graphar_adj_list *al = &ei->adj_lists[i];
            ymap am = yitem_map(out, lv);
            yscalar(&am, "aligned_by", knut_graphar_adj_list_type_by_source(al->type) ? "src"
                                                                                       : "dst");
            yscalar(&am, "file_type", knut_graphar_file_type_name(al->file_type));
            ybool(&am, "ordered", knut_graphar_adj_list_type_is_ordered(al->type));
            yscalar(&am, "prefix", al->prefix ? al->prefix : "");
        }
    }
    yint(&m, "chunk_size", ei->chunk_size);
    ybool(&m, "directed", ei->directed);
    yint(&m, "dst_chunk_size", ei->dst_chunk_size);
    yscalar(&m, "dst_type", ei->dst_type);
    yscalar(&m, "edge_type", ei->edge_type);
    yscalar(&m, "prefix", ei->prefix);
    ygroups(&m, ei->groups, ei->n_groups, 1);
    yint(&m, "src_chunk_size", ei->src_chunk_size);
    yscalar(&m, "src_type", ei->src_type);
    yversion(&m, &ei->version);
    return knut_buf_check(out, err);
}

knut_status knut_graphar_graph_dump(const knut_graphar_graph_info *gi, unsigned flags,
                                    knut_buf *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, gi && out && gi->name && gi->prefix);
    int cxx = (flags & KNUT_GRAPHAR_DUMP_CXX) != 0;
    ymap m = {out, 0, 0};
    if (cxx) {
        if (gi->n_edges) {
            size_t lv = yseq(&m, "edges");
            for (size_t i = 0; i < gi->n_edges; i++) {
                const knut_graphar_edge_info *e = gi->edges[i];
                char *f = knut_graphar__edge_key(e->src_type, e->edge_type, e->dst_type,
                                                 ".edge.yaml");
                if (!f)
                    return knut_error_set(err, KNUT_ENOMEM, "graphar: out of memory");
                yitem_scalar(out, lv, f);
                free(f);
            }
        }
    } else {
        ystrv(&m, "edges", gi->edge_files, gi->n_edge_files);
    }
    if (gi->n_extra) {
        size_t lv = yseq(&m, "extra_info");
        for (size_t i = 0; i < gi->n_extra; i++) {
            ymap em = yitem_map(out, lv);
            yscalar(&em, "key", gi->extra[i].key ? gi->extra[i].key : "");
            yscalar(&em, "value", gi->extra[i].value ? gi->extra[i].value : "");
        }
    }
    ystrv(&m, "labels", gi->labels, gi->n_labels);
    yscalar(&m, "name", gi->name);
    /* A defaulted prefix is where the YAML happened to be loaded from;
     * leaving it out keeps the saved file relocatable (every loader then
     * defaults to the file's own directory again). */
    if (gi->prefix_given || cxx)
        yscalar(&m, "prefix", gi->prefix);
    yversion(&m, &gi->version);
    if (cxx) {
        if (gi->n_vertices) {
            size_t lv = yseq(&m, "vertices");
            for (size_t i = 0; i < gi->n_vertices; i++) {
                char *f = malloc(strlen(gi->vertices[i]->type) + sizeof ".vertex.yaml");
                if (!f)
                    return knut_error_set(err, KNUT_ENOMEM, "graphar: out of memory");
                strcpy(f, gi->vertices[i]->type);
                strcat(f, ".vertex.yaml");
                yitem_scalar(out, lv, f);
                free(f);
            }
        }
    } else {
        ystrv(&m, "vertices", gi->vertex_files, gi->n_vertex_files);
    }
    return knut_buf_check(out, err);
}

/* ---- saving ------------------------------------------------------------ */

/* Writes the whole buffer to path through a temporary file and rename, so
 * a reader never sees a half-written info file. */
static knut_status write_file(const char *path, const knut_buf *b, knut_error *err)
{
    knut_status st = KNUT_OK;
    char *tmp = malloc(strlen(path) + 32);
    if (!tmp)
        return knut_error_set(err, KNUT_ENOMEM, "graphar: out of memory");
    sprintf(tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        st = knut_error_set(err, errno == ENOENT ? KNUT_ENOTFOUND : KNUT_EIO,
                            "%s: cannot create: %s", path, strerror(errno));
        goto cleanup;
    }
    size_t len = b->len;
    int bad = len && fwrite(b->data, 1, len, f) != len;
    bad |= fflush(f) != 0;
    int e = errno;
    bad |= fclose(f) != 0;
    if (bad) {
        st = knut_error_set(err, KNUT_EIO, "%s: write failed: %s", path, strerror(e ? e : errno));
        remove(tmp);
        goto cleanup;
    }
    if (rename(tmp, path) != 0) {
        st = knut_error_set(err, KNUT_EIO, "%s: rename failed: %s", path, strerror(errno));
        remove(tmp);
    }
cleanup:
    free(tmp);
    return st;
}

typedef knut_status (*dump_fn)(const void *info, knut_buf *out, knut_error *err);

static knut_status dump_vertex(const void *info, knut_buf *out, knut_error *err)
{
    return knut_graphar_vertex_dump(info, out, err);
}

static knut_status dump_edge(const void *info, knut_buf *out, knut_error *err)
{
    return knut_graphar_edge_dump(info, out, err);
}

static knut_status dump_graph(const void *info, knut_buf *out, knut_error *err)
{
    return knut_graphar_graph_dump(info, 0, out, err);
}

static knut_status save(const void *info, dump_fn fn, const char *path, knut_error *err)
{
    knut_buf b = KNUT_BUF_INIT;
    knut_status st = fn(info, &b, err);
    if (st == KNUT_OK)
        st = write_file(path, &b, err);
    knut_buf_reset(&b);
    return st;
}

knut_status knut_graphar_vertex_save(const knut_graphar_vertex_info *vi, const char *path,
                                     knut_error *err)
{
    KNUT_ASSERT_ARG(err, vi && path);
    return save(vi, dump_vertex, path, err);
}

knut_status knut_graphar_edge_save(const knut_graphar_edge_info *ei, const char *path,
                                   knut_error *err)
{
    KNUT_ASSERT_ARG(err, ei && path);
    return save(ei, dump_edge, path, err);
}

knut_status knut_graphar_graph_save(const knut_graphar_graph_info *gi, const char *path,
                                    knut_error *err)
{
    KNUT_ASSERT_ARG(err, gi && path);
    return save(gi, dump_graph, path, err);
}

/* A listed file name must stay inside the target directory. */
static int safe_name(const char *f)
{
    if (!*f || *f == '/')
        return 0;
    for (const char *p = f; *p;) {
        const char *e = strchr(p, '/');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == 2 && p[0] == '.' && p[1] == '.')
            return 0;
        if (!e)
            break;
        p = e + 1;
    }
    return 1;
}

static knut_status save_in(const char *dir, const char *file, const void *info, dump_fn fn,
                           knut_error *err)
{
    if (!safe_name(file))
        return knut_error_set(err, KNUT_EINVAL,
                              "info file name '%s' is empty, absolute or leaves the directory",
                              file);
    size_t dl = strlen(dir);
    char *path = malloc(dl + strlen(file) + 2);
    if (!path)
        return knut_error_set(err, KNUT_ENOMEM, "graphar: out of memory");
    sprintf(path, "%s%s%s", dir, dl && dir[dl - 1] != '/' ? "/" : "", file);
    knut_status st = save(info, fn, path, err);
    free(path);
    return st;
}

knut_status knut_graphar_graph_save_all(const knut_graphar_graph_info *gi, const char *dir,
                                        knut_error *err)
{
    KNUT_ASSERT_ARG(err, gi && dir && gi->name);
    if (gi->n_vertices != gi->n_vertex_files || gi->n_edges != gi->n_edge_files)
        return knut_error_set(err, KNUT_EINVAL,
                              "graph '%s' was parsed without loading its info files", gi->name);
    knut_status st;
    for (size_t i = 0; i < gi->n_vertices; i++)
        if ((st = save_in(dir, gi->vertex_files[i], gi->vertices[i], dump_vertex, err)))
            return st;
    for (size_t i = 0; i < gi->n_edges; i++)
        if ((st = save_in(dir, gi->edge_files[i], gi->edges[i], dump_edge, err)))
            return st;
    /* The graph file last: whoever sees it finds every listed file. */
    char *gname = malloc(strlen(gi->name) + sizeof ".graph.yml");
    if (!gname)
        return knut_error_set(err, KNUT_ENOMEM, "graphar: out of memory");
    strcpy(gname, gi->name);
    strcat(gname, ".graph.yml");
    st = strchr(gi->name, '/') ? knut_error_set(err, KNUT_EINVAL,
                                                "graph name '%s' cannot be a file name", gi->name)
                               : save_in(dir, gname, gi, dump_graph, err);
    free(gname);
    return st;
}
