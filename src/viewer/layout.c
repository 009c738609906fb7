/*
 * Layered layout (Sugiyama style), left to right:
 *   1. layers: each node's longest path from a source (Kahn's order);
 *   2. an edge spanning k layers gets k-1 virtual vertices, so every
 *      segment joins adjacent layers;
 *   3. order in each layer: barycenter sweeps (down over predecessors,
 *      up over successors), keeping the order with the fewest crossings
 *      (counted exactly with a Fenwick tree); ties by name (digit runs as
 *      numbers), so the
 *      result depends on the graph only;
 *   4. coordinates: columns as wide as their widest box; in each layer
 *      boxes are pulled toward their neighbours' centres, then pushed
 *      apart in order so nothing overlaps;
 *   5. routes: the source's right side, through each virtual vertex's
 *      column (in and out), to the target's left side.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "viewer_int.h"

/* Sort items: qsort has no context argument, so each item carries its
 * keys (thread-safe, unlike a static pointer to the graph). */
typedef struct name_item {
    const char *name;
    size_t v;
} name_item;

typedef struct bary_item {
    double bary;
    uint64_t key;
    size_t v;
} bary_item;

typedef struct lay {
    size_t nv;      /* vertices: real nodes first, then virtual ones */
    size_t nreal;
    int *layer;
    uint64_t *key;  /* tie-break: real nodes by name rank, virtual after */
    double *h;
    size_t *pos;    /* position inside its layer */
    double *bary;
    double *y;
    /* segments (u in layer l, v in layer l+1) as CSR both ways */
    size_t nseg;
    size_t *seg_u, *seg_v;
    size_t *out_at, *out_v; /* out_at[v]..out_at[v+1] */
    size_t *in_at, *in_u;
    /* layers: members in order */
    int nlayers;
    size_t *layer_at; /* layer_at[l]..layer_at[l+1] into members */
    size_t *members;
    size_t *best;     /* members of the best order seen */
    size_t *chain_at; /* edge e's virtual vertices: chain_at[e]..chain_at[e+1] */
    size_t *fenwick;
    size_t *pairs;    /* scratch for crossings: 2 per segment */
    bary_item *items; /* scratch for sorting a layer */
} lay;

/* Names in the order people read them: a run of digits compares as a
 * number ("stage 9" before "stage 10"), the rest byte by byte; names
 * equal that way (leading zeros) fall back to strcmp, so the order stays
 * total. */
static int natural_cmp(const char *x, const char *y)
{
    const unsigned char *a = (const unsigned char *)x, *b = (const unsigned char *)y;
    while (*a && *b) {
        if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
            while (*a == '0')
                a++;
            while (*b == '0')
                b++;
            size_t na = 0, nb = 0;
            while (a[na] >= '0' && a[na] <= '9')
                na++;
            while (b[nb] >= '0' && b[nb] <= '9')
                nb++;
            if (na != nb)
                return na < nb ? -1 : 1;
            int c = memcmp(a, b, na);
            if (c)
                return c;
            a += na;
            b += nb;
            continue;
        }
        if (*a != *b)
            return *a < *b ? -1 : 1;
        a++, b++;
    }
    if (*a || *b)
        return *a ? 1 : -1;
    return strcmp(x, y);
}

static int by_name(const void *a, const void *b)
{
    const name_item *x = a, *y = b;
    int c = natural_cmp(x->name, y->name);
    return c ? c : (x->v < y->v ? -1 : x->v > y->v);
}

static int by_bary(const void *a, const void *b)
{
    const bary_item *x = a, *y = b;
    if (x->bary != y->bary)
        return x->bary < y->bary ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

static int by_pair(const void *a, const void *b)
{
    const size_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

static void lay_free(lay *L)
{
    free(L->layer);
    free(L->key);
    free(L->h);
    free(L->pos);
    free(L->bary);
    free(L->y);
    free(L->seg_u);
    free(L->seg_v);
    free(L->out_at);
    free(L->out_v);
    free(L->in_at);
    free(L->in_u);
    free(L->layer_at);
    free(L->members);
    free(L->best);
    free(L->chain_at);
    free(L->fenwick);
    free(L->pairs);
    free(L->items);
}

/* Step 1: longest-path layers of the real nodes; a cycle is an error. */
static knut_status layers_assign(const knut_viewer_graph *g, int *layer, knut_error *err)
{
    size_t n = g->nnodes, m = g->nedges;
    knut_status st = KNUT_ENOMEM;
    size_t *indeg = calloc(n + 1, sizeof *indeg), *at = calloc(n + 1, sizeof *at);
    size_t *adj = malloc((m + 1) * sizeof *adj), *queue = malloc((n + 1) * sizeof *queue);
    if (!indeg || !at || !adj || !queue)
        goto done;
    /* at[] as CSR offsets of each node's out-edges */
    for (size_t e = 0; e < m; e++) {
        indeg[g->edges[e].to]++;
        at[g->edges[e].from]++;
    }
    size_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        size_t c = at[i];
        at[i] = sum;
        sum += c;
    }
    at[n] = sum;
    size_t *fill = queue; /* borrowed as a cursor before the queue is used */
    for (size_t i = 0; i < n; i++)
        fill[i] = at[i];
    for (size_t e = 0; e < m; e++)
        adj[fill[g->edges[e].from]++] = g->edges[e].to;
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < n; i++) {
        layer[i] = 0;
        if (indeg[i] == 0)
            queue[tail++] = i;
    }
    while (head < tail) {
        size_t u = queue[head++];
        for (size_t k = at[u]; k < at[u + 1]; k++) {
            size_t v = adj[k];
            if (layer[v] < layer[u] + 1)
                layer[v] = layer[u] + 1;
            if (--indeg[v] == 0)
                queue[tail++] = v;
        }
    }
    if (tail < n) {
        size_t i = 0;
        while (indeg[i] == 0)
            i++;
        st = knut_error_set(err, KNUT_EINVAL, "viewer graph: a cycle through '%s'",
                            g->nodes[i].name);
        goto done;
    }
    st = KNUT_OK;
done:
    if (st == KNUT_ENOMEM)
        knut_error_set(err, KNUT_ENOMEM, "viewer layout: out of memory");
    free(indeg);
    free(at);
    free(adj);
    free(queue);
    return st;
}

/* Step 2: virtual vertices and segments, CSR adjacency both ways. */
static knut_status build_virtual(const knut_viewer_graph *g, lay *L)
{
    size_t n = g->nnodes, m = g->nedges, nv = n;
    if (!(L->chain_at = malloc((m + 1) * sizeof *L->chain_at)))
        return KNUT_ENOMEM;
    for (size_t e = 0; e < m; e++) {
        L->chain_at[e] = nv;
        nv += (size_t)(L->layer[g->edges[e].to] - L->layer[g->edges[e].from] - 1);
    }
    L->chain_at[m] = nv;
    L->nv = nv;
    L->nseg = m + (nv - n);
    int *layer = realloc(L->layer, (nv + 1) * sizeof *layer);
    if (!layer)
        return KNUT_ENOMEM;
    L->layer = layer;
    L->key = malloc((nv + 1) * sizeof *L->key);
    L->h = malloc((nv + 1) * sizeof *L->h);
    L->pos = malloc((nv + 1) * sizeof *L->pos);
    L->bary = malloc((nv + 1) * sizeof *L->bary);
    L->y = malloc((nv + 1) * sizeof *L->y);
    L->seg_u = malloc((L->nseg + 1) * sizeof *L->seg_u);
    L->seg_v = malloc((L->nseg + 1) * sizeof *L->seg_v);
    L->out_at = calloc(nv + 2, sizeof *L->out_at);
    L->in_at = calloc(nv + 2, sizeof *L->in_at);
    L->out_v = malloc((L->nseg + 1) * sizeof *L->out_v);
    L->in_u = malloc((L->nseg + 1) * sizeof *L->in_u);
    L->pairs = malloc((2 * L->nseg + 2) * sizeof *L->pairs);
    L->fenwick = malloc((nv + 2) * sizeof *L->fenwick);
    L->items = malloc((nv + 1) * sizeof *L->items);
    name_item *rank = malloc((n + 1) * sizeof *rank);
    if (!L->key || !L->h || !L->pos || !L->bary || !L->y || !L->seg_u || !L->seg_v ||
        !L->out_at || !L->in_at || !L->out_v || !L->in_u || !L->pairs || !L->fenwick || !L->items || !rank) {
        free(rank);
        return KNUT_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        rank[i] = (name_item){g->nodes[i].name, i};
    qsort(rank, n, sizeof *rank, by_name);
    for (size_t r = 0; r < n; r++) {
        L->key[rank[r].v] = r;
        L->h[rank[r].v] = KNUT_VIEWER__NODE_H;
    }
    size_t s = 0;
    for (size_t e = 0; e < m; e++) {
        size_t u = g->edges[e].from;
        for (size_t d = L->chain_at[e]; d < L->chain_at[e + 1]; d++) {
            L->layer[d] = L->layer[u] + 1;
            /* after every real node, by (source, target) name rank */
            L->key[d] = (uint64_t)n + (uint64_t)L->key[g->edges[e].from] * n +
                        L->key[g->edges[e].to];
            L->h[d] = KNUT_VIEWER__DUMMY_H;
            L->seg_u[s] = u;
            L->seg_v[s++] = d;
            u = d;
        }
        L->seg_u[s] = u;
        L->seg_v[s++] = g->edges[e].to;
    }
    free(rank);
    for (size_t k = 0; k < L->nseg; k++) {
        L->out_at[L->seg_u[k] + 1]++;
        L->in_at[L->seg_v[k] + 1]++;
    }
    for (size_t v = 0; v < nv; v++) {
        L->out_at[v + 1] += L->out_at[v];
        L->in_at[v + 1] += L->in_at[v];
    }
    /* fill with moving cursors kept in pos/bary's memory would alias:
     * use the Fenwick scratch (nv + 2 entries) as the cursor */
    size_t *cur = L->fenwick;
    for (size_t v = 0; v < nv; v++)
        cur[v] = L->out_at[v];
    for (size_t k = 0; k < L->nseg; k++)
        L->out_v[cur[L->seg_u[k]]++] = L->seg_v[k];
    for (size_t v = 0; v < nv; v++)
        cur[v] = L->in_at[v];
    for (size_t k = 0; k < L->nseg; k++)
        L->in_u[cur[L->seg_v[k]]++] = L->seg_u[k];
    return KNUT_OK;
}

/* Sorts layer l's members by (bary, key) and renumbers their positions. */
static void sort_layer(lay *L, int l)
{
    size_t a = L->layer_at[l], b = L->layer_at[l + 1];
    for (size_t i = a; i < b; i++) {
        size_t v = L->members[i];
        L->items[i - a] = (bary_item){L->bary[v], L->key[v], v};
    }
    qsort(L->items, b - a, sizeof *L->items, by_bary);
    for (size_t i = a; i < b; i++) {
        L->members[i] = L->items[i - a].v;
        L->pos[L->members[i]] = i - a;
    }
}

/* Members of each layer, first ordered by key. */
static knut_status build_layers(lay *L)
{
    int nl = 0;
    for (size_t v = 0; v < L->nv; v++)
        if (L->layer[v] + 1 > nl)
            nl = L->layer[v] + 1;
    L->nlayers = nl;
    L->layer_at = calloc((size_t)nl + 2, sizeof *L->layer_at);
    L->members = malloc((L->nv + 1) * sizeof *L->members);
    L->best = malloc((L->nv + 1) * sizeof *L->best);
    if (!L->layer_at || !L->members || !L->best)
        return KNUT_ENOMEM;
    for (size_t v = 0; v < L->nv; v++)
        L->layer_at[L->layer[v] + 1]++;
    for (int l = 0; l < nl; l++)
        L->layer_at[l + 1] += L->layer_at[l];
    size_t *cur = L->fenwick;
    for (int l = 0; l < nl; l++)
        cur[l] = L->layer_at[l];
    for (size_t v = 0; v < L->nv; v++)
        L->members[cur[L->layer[v]]++] = v;
    for (int l = 0; l < nl; l++) {
        for (size_t i = L->layer_at[l]; i < L->layer_at[l + 1]; i++)
            L->bary[L->members[i]] = 0;
        sort_layer(L, l);
    }
    return KNUT_OK;
}

/* Crossings between layer l and l + 1: inversions among the segments'
 * lower ends once sorted by their upper ends. */
static uint64_t crossings_between(lay *L, int l)
{
    size_t np = 0;
    for (size_t i = L->layer_at[l]; i < L->layer_at[l + 1]; i++) {
        size_t u = L->members[i];
        for (size_t k = L->out_at[u]; k < L->out_at[u + 1]; k++) {
            L->pairs[2 * np] = L->pos[u];
            L->pairs[2 * np + 1] = L->pos[L->out_v[k]];
            np++;
        }
    }
    qsort(L->pairs, np, 2 * sizeof *L->pairs, by_pair);
    size_t width = L->layer_at[l + 2] - L->layer_at[l + 1];
    memset(L->fenwick, 0, (width + 1) * sizeof *L->fenwick);
    uint64_t cross = 0;
    for (size_t i = 0; i < np; i++) {
        size_t p = L->pairs[2 * i + 1] + 1;
        /* segments seen so far whose lower end is right of p */
        size_t le = 0;
        for (size_t q = p; q > 0; q -= q & (~q + 1))
            le += L->fenwick[q];
        cross += i - le;
        for (size_t q = p; q <= width; q += q & (~q + 1))
            L->fenwick[q]++;
    }
    return cross;
}

static uint64_t crossings(lay *L)
{
    uint64_t c = 0;
    for (int l = 0; l + 1 < L->nlayers; l++)
        c += crossings_between(L, l);
    return c;
}

/* Re-sorts layer l by the mean position of each vertex's neighbours in
 * the layer before (down) or after (up); no neighbours: stays put. */
static void sweep_layer(lay *L, int l, int down)
{
    size_t a = L->layer_at[l], b = L->layer_at[l + 1];
    for (size_t i = a; i < b; i++) {
        size_t v = L->members[i];
        size_t from = down ? L->in_at[v] : L->out_at[v];
        size_t to = down ? L->in_at[v + 1] : L->out_at[v + 1];
        const size_t *nb = down ? L->in_u : L->out_v;
        if (from == to) {
            L->bary[v] = (double)L->pos[v];
            continue;
        }
        double sum = 0;
        for (size_t k = from; k < to; k++)
            sum += (double)L->pos[nb[k]];
        L->bary[v] = sum / (double)(to - from);
    }
    sort_layer(L, l);
}

/* Step 3. */
static void order_layers(lay *L)
{
    uint64_t best = crossings(L);
    memcpy(L->best, L->members, L->nv * sizeof *L->members);
    int stale = 0;
    for (int it = 0; it < 24 && best > 0 && stale < 4; it++) {
        int down = (it % 2) == 0;
        if (down)
            for (int l = 1; l < L->nlayers; l++)
                sweep_layer(L, l, 1);
        else
            for (int l = L->nlayers - 2; l >= 0; l--)
                sweep_layer(L, l, 0);
        uint64_t c = crossings(L);
        if (c < best) {
            best = c;
            memcpy(L->best, L->members, L->nv * sizeof *L->members);
            stale = 0;
        } else {
            stale++;
        }
    }
    memcpy(L->members, L->best, L->nv * sizeof *L->members);
    for (int l = 0; l < L->nlayers; l++)
        for (size_t i = L->layer_at[l]; i < L->layer_at[l + 1]; i++)
            L->pos[L->members[i]] = i - L->layer_at[l];
}

/* Places layer l's vertices in order, each at least a gap below the one
 * before, as near to its wanted top (bary) as that allows; then shifts
 * the layer by the mean error so it stays centred on what it wanted. */
static void place_layer(lay *L, int l)
{
    size_t a = L->layer_at[l], b = L->layer_at[l + 1];
    double shift = 0, prev_end = -1e300;
    for (size_t i = a; i < b; i++) {
        size_t v = L->members[i];
        double y = L->bary[v];
        /* virtual vertices (edges passing through) pack closer */
        int virt = v >= L->nreal, prev_virt = i > a && L->members[i - 1] >= L->nreal;
        double gap = virt && prev_virt ? 4.0 : virt || prev_virt ? 12.0 : KNUT_VIEWER__GAP_Y;
        if (y < prev_end + gap)
            y = prev_end + gap;
        shift += y - L->bary[v];
        L->y[v] = y;
        prev_end = y + L->h[v];
    }
    if (b > a)
        shift /= (double)(b - a);
    for (size_t i = a; i < b; i++)
        L->y[L->members[i]] -= shift;
}

/* Wanted top of v: its neighbours' mean centre (down: the layer before). */
static void want_tops(lay *L, int l, int down)
{
    for (size_t i = L->layer_at[l]; i < L->layer_at[l + 1]; i++) {
        size_t v = L->members[i];
        size_t from = down ? L->in_at[v] : L->out_at[v];
        size_t to = down ? L->in_at[v + 1] : L->out_at[v + 1];
        const size_t *nb = down ? L->in_u : L->out_v;
        if (from == to) {
            L->bary[v] = L->y[v];
            continue;
        }
        double sum = 0;
        for (size_t k = from; k < to; k++)
            sum += L->y[nb[k]] + L->h[nb[k]] / 2;
        L->bary[v] = sum / (double)(to - from) - L->h[v] / 2;
    }
}

/* Step 4 (vertical part). */
static void place_vertical(lay *L)
{
    for (int l = 0; l < L->nlayers; l++) {
        double y = 0;
        for (size_t i = L->layer_at[l]; i < L->layer_at[l + 1]; i++) {
            L->bary[L->members[i]] = y;
            y += L->h[L->members[i]] + KNUT_VIEWER__GAP_Y;
        }
        place_layer(L, l);
    }
    for (int pass = 0; pass < 4; pass++) {
        int down = (pass % 2) == 0;
        for (int k = 0; k < L->nlayers; k++) {
            int l = down ? k : L->nlayers - 1 - k;
            if ((down && l == 0) || (!down && l == L->nlayers - 1))
                continue;
            want_tops(L, l, down);
            place_layer(L, l);
        }
    }
}

knut_status knut_viewer_layout(knut_viewer_graph *g, knut_error *err)
{
    KNUT_ASSERT_ARG(err, g != NULL);
    lay L = {0};
    double *colx = NULL, *colw = NULL;
    knut_status st = KNUT_ENOMEM;
    g->laid_out = 0;
    L.nreal = g->nnodes;
    if (!(L.layer = malloc((g->nnodes + 1) * sizeof *L.layer)))
        goto done;
    if ((st = layers_assign(g, L.layer, err)) != KNUT_OK)
        goto out;
    st = KNUT_ENOMEM;
    if (build_virtual(g, &L) != KNUT_OK || build_layers(&L) != KNUT_OK)
        goto done;
    order_layers(&L);
    place_vertical(&L);
    colx = calloc((size_t)L.nlayers + 1, sizeof *colx);
    colw = calloc((size_t)L.nlayers + 1, sizeof *colw);
    if (!colx || !colw)
        goto done;
    double miny = 0, maxy = 0;
    for (size_t v = 0; v < L.nv; v++) {
        if (v < g->nnodes) {
            double w = knut_viewer__node_width(&g->nodes[v]);
            if (w > colw[L.layer[v]])
                colw[L.layer[v]] = w;
        }
        if (v == 0 || L.y[v] < miny)
            miny = L.y[v];
        if (v == 0 || L.y[v] + L.h[v] > maxy)
            maxy = L.y[v] + L.h[v];
    }
    double x = KNUT_VIEWER__MARGIN;
    for (int l = 0; l < L.nlayers; l++) {
        colx[l] = x;
        x += colw[l] + KNUT_VIEWER__GAP_X;
    }
    double dy = KNUT_VIEWER__MARGIN - miny;
    g->nlayers = L.nlayers;
    g->width = L.nlayers ? x - KNUT_VIEWER__GAP_X + KNUT_VIEWER__MARGIN : 2 * KNUT_VIEWER__MARGIN;
    g->height = L.nv ? maxy - miny + 2 * KNUT_VIEWER__MARGIN : 2 * KNUT_VIEWER__MARGIN;
    for (size_t v = 0; v < g->nnodes; v++) {
        knut_viewer_node *nd = &g->nodes[v];
        int l = L.layer[v];
        nd->layer = l;
        nd->w = knut_viewer__node_width(nd);
        nd->h = KNUT_VIEWER__NODE_H;
        nd->x = colx[l] + (colw[l] - nd->w) / 2;
        nd->y = L.y[v] + dy;
        /* order among the real nodes of the layer */
        nd->order = 0;
    }
    for (int l = 0; l < L.nlayers; l++) {
        int o = 0;
        for (size_t i = L.layer_at[l]; i < L.layer_at[l + 1]; i++)
            if (L.members[i] < g->nnodes)
                g->nodes[L.members[i]].order = o++;
    }
    for (size_t e = 0; e < g->nedges; e++) {
        knut_viewer_edge *ed = &g->edges[e];
        size_t nd = L.chain_at[e + 1] - L.chain_at[e];
        knut_viewer_point *pt = realloc(ed->points, (2 + 2 * nd) * sizeof *pt);
        if (!pt)
            goto done;
        ed->points = pt;
        const knut_viewer_node *a = &g->nodes[ed->from], *b = &g->nodes[ed->to];
        size_t k = 0;
        pt[k++] = (knut_viewer_point){a->x + a->w, a->y + a->h / 2};
        for (size_t d = L.chain_at[e]; d < L.chain_at[e + 1]; d++) {
            int l = L.layer[d];
            double cy = L.y[d] + dy + L.h[d] / 2;
            pt[k++] = (knut_viewer_point){colx[l], cy};
            pt[k++] = (knut_viewer_point){colx[l] + colw[l], cy};
        }
        pt[k++] = (knut_viewer_point){b->x, b->y + b->h / 2};
        ed->npoints = k;
    }
    g->laid_out = 1;
    st = KNUT_OK;
done:
    if (st == KNUT_ENOMEM)
        knut_error_set(err, KNUT_ENOMEM, "viewer layout: out of memory");
out:
    free(colx);
    free(colw);
    lay_free(&L);
    return st;
}
