/*
 * A laid-out viewer graph as JSON (for the page, /graph.json) and as a
 * standalone SVG (knut pipeline show --format svg).
 */
#include <string.h>

#include "viewer_int.h"

double knut_viewer__node_width(const knut_viewer_node *n)
{
    size_t len = strlen(n->name);
    if (n->target && strlen(n->target) + 4 > len)
        len = strlen(n->target) + 4; /* "-> " and a margin */
    double w = 7.5 * (double)len + 28;
    if (w < KNUT_VIEWER__NODE_MIN_W)
        w = KNUT_VIEWER__NODE_MIN_W;
    if (w > KNUT_VIEWER__NODE_MAX_W)
        w = KNUT_VIEWER__NODE_MAX_W;
    return w;
}

knut_status knut_viewer_graph_json(const knut_viewer_graph *g, knut_buf *b, knut_error *err)
{
    KNUT_ASSERT_ARG(err, g != NULL && b != NULL);
    if (!g->laid_out)
        return knut_error_set(err, KNUT_EINVAL, "viewer graph: not laid out");
    knut_buf_putc(b, '{');
    knut_buf_put_json_member(b, "title", g->title);
    knut_buf_printf(b, ",\"width\":%.1f,\"height\":%.1f,\"layers\":%d,\"nodes\":[", g->width,
                    g->height, g->nlayers);
    for (size_t i = 0; i < g->nnodes; i++) {
        const knut_viewer_node *n = &g->nodes[i];
        knut_buf_puts(b, i ? ",{" : "{");
        knut_buf_put_json_member(b, "id", n->name);
        knut_buf_putc(b, ',');
        knut_buf_put_json_member(b, "name", n->name);
        knut_buf_putc(b, ',');
        knut_buf_put_json_member(b, "kind", n->kind);
        knut_buf_putc(b, ',');
        knut_buf_put_json_member(b, "flow_kind", n->flow_kind);
        knut_buf_putc(b, ',');
        knut_buf_put_json_member(b, "target", n->target);
        knut_buf_printf(b,
                        ",\"expectations\":%zu,\"layer\":%d,\"order\":%d,\"x\":%.1f,\"y\":%.1f,"
                        "\"w\":%.1f,\"h\":%.1f}",
                        n->nexpectations, n->layer, n->order, n->x, n->y, n->w, n->h);
    }
    knut_buf_puts(b, "],\"edges\":[");
    for (size_t i = 0; i < g->nedges; i++) {
        const knut_viewer_edge *e = &g->edges[i];
        knut_buf_puts(b, i ? ",{" : "{");
        knut_buf_put_json_member(b, "from", g->nodes[e->from].name);
        knut_buf_putc(b, ',');
        knut_buf_put_json_member(b, "to", g->nodes[e->to].name);
        knut_buf_putc(b, ',');
        knut_buf_put_json_member(b, "label", e->label);
        knut_buf_puts(b, ",\"points\":[");
        for (size_t k = 0; k < e->npoints; k++)
            knut_buf_printf(b, "%s[%.1f,%.1f]", k ? "," : "", e->points[k].x, e->points[k].y);
        knut_buf_puts(b, "]}");
    }
    knut_buf_puts(b, "]}");
    return knut_buf_check(b, err);
}

/* Text content for XML: &, <, > and quotes escaped; control bytes dropped
 * (XML 1.0 cannot hold them); at most max characters (cut before a UTF-8
 * lead byte, never inside a character), then an ellipsis. */
static void xml_text(knut_buf *b, const char *s, size_t max)
{
    size_t n = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c & 0xC0) != 0x80) {
            if (n == max) {
                knut_buf_puts(b, "\xe2\x80\xa6");
                return;
            }
            n++;
        }
        if (c == '&')
            knut_buf_puts(b, "&amp;");
        else if (c == '<')
            knut_buf_puts(b, "&lt;");
        else if (c == '>')
            knut_buf_puts(b, "&gt;");
        else if (c == '"')
            knut_buf_puts(b, "&quot;");
        else if (c >= 0x20 || c == '\t')
            knut_buf_putc(b, (char)c);
    }
}

/* Bytes of text that fit a box w wide (at ~7 px a byte). */
static size_t fit(double w)
{
    double n = (w - 16) / 7.0;
    return n < 4 ? 4 : (size_t)n;
}

static const char *edge_style(const char *label)
{
    if (strcmp(label, "streaming") == 0)
        return " stroke-dasharray=\"7 4\"";
    if (strcmp(label, "cdc") == 0)
        return " stroke-dasharray=\"2 3\"";
    return "";
}

knut_status knut_viewer_graph_svg(const knut_viewer_graph *g, knut_buf *b, knut_error *err)
{
    KNUT_ASSERT_ARG(err, g != NULL && b != NULL);
    if (!g->laid_out)
        return knut_error_set(err, KNUT_EINVAL, "viewer graph: not laid out");
    knut_buf_printf(b,
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                    "viewBox=\"0 0 %.1f %.1f\" font-family=\"sans-serif\" font-size=\"12\">\n",
                    g->width, g->height + 20, g->width, g->height + 20);
    knut_buf_puts(b, "<title>");
    xml_text(b, g->title ? g->title : "pipeline", 200);
    knut_buf_puts(b, "</title>\n<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" "
                     "refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" orient=\"auto\">"
                     "<path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker></defs>\n"
                     "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    for (size_t i = 0; i < g->nedges; i++) {
        const knut_viewer_edge *e = &g->edges[i];
        knut_buf_puts(b, "<g class=\"edge\"><title>");
        xml_text(b, g->nodes[e->from].name, 200);
        knut_buf_puts(b, " -&gt; ");
        xml_text(b, g->nodes[e->to].name, 200);
        knut_buf_puts(b, "</title><polyline fill=\"none\" stroke=\"#555\" stroke-width=\"1.4\""
                         " marker-end=\"url(#arrow)\" points=\"");
        for (size_t k = 0; k < e->npoints; k++)
            knut_buf_printf(b, "%s%.1f,%.1f", k ? " " : "", e->points[k].x, e->points[k].y);
        knut_buf_printf(b, "\"%s/>", edge_style(e->label));
        /* the label on the last segment, just before the arrow */
        const knut_viewer_point *p = &e->points[e->npoints - 2], *q = &e->points[e->npoints - 1];
        knut_buf_printf(b,
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\" "
                        "fill=\"#666\">",
                        (p->x + q->x) / 2, (p->y + q->y) / 2 - 4);
        xml_text(b, e->label, 20);
        knut_buf_puts(b, "</text></g>\n");
    }
    for (size_t i = 0; i < g->nnodes; i++) {
        const knut_viewer_node *n = &g->nodes[i];
        knut_buf_puts(b, "<g class=\"node\"><title>");
        xml_text(b, n->name, 400);
        knut_buf_printf(b,
                        "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                        "rx=\"6\" fill=\"#eef3fb\" stroke=\"#3b6ea8\" stroke-width=\"1.5\"/>",
                        n->x, n->y, n->w, n->h);
        knut_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">", n->x + 8,
                        n->y + 20);
        xml_text(b, n->name, fit(n->w));
        knut_buf_printf(b, "</text><text x=\"%.1f\" y=\"%.1f\" fill=\"#555\" font-size=\"11\">",
                        n->x + 8, n->y + 38);
        xml_text(b, n->flow_kind ? n->flow_kind : "", 20);
        if (n->nexpectations)
            knut_buf_printf(b, " \xc2\xb7 %zu expectation%s", n->nexpectations,
                            n->nexpectations == 1 ? "" : "s");
        knut_buf_printf(b, "</text><text x=\"%.1f\" y=\"%.1f\" fill=\"#555\" font-size=\"11\">",
                        n->x + 8, n->y + 54);
        if (n->target) {
            knut_buf_puts(b, "\xe2\x86\x92 ");
            xml_text(b, n->target, fit(n->w) - 2);
        }
        knut_buf_puts(b, "</text></g>\n");
    }
    knut_buf_printf(b,
                    "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#888\">edges: batch "
                    "solid, streaming dashed, cdc dotted</text>\n</svg>\n",
                    KNUT_VIEWER__MARGIN, g->height + 8);
    return knut_buf_check(b, err);
}
