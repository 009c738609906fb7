/*
 * Benchmark helper (bench/viewer_layout_bench.py): loads and resolves a
 * pipeline spec (not timed), then times knut_viewer_graph_from_pipeline
 * (the graph and its layout) REPS times and prints one JSON line:
 * {"flows","nodes","edges","layers","reps","best_ms","median_ms","width","height"}.
 * With --svg FILE it also writes the SVG of the last layout.
 * usage: knut_viewer_bench SPEC [REPS] [--svg FILE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knut/viewer.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: knut_viewer_bench SPEC [REPS] [--svg FILE]\n");
        return 2;
    }
    int reps = 10;
    const char *svg = NULL;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--svg") == 0 && i + 1 < argc)
            svg = argv[++i];
        else
            reps = atoi(argv[i]);
    }
    if (reps < 1 || reps > 10000)
        reps = 10;
    knut_error err = KNUT_ERROR_INIT;
    knut_pipeline *p = NULL;
    if (knut_pipeline_load(&p, argv[1], &err) != KNUT_OK ||
        knut_pipeline_resolve(p, &err) != KNUT_OK) {
        fprintf(stderr, "knut_viewer_bench: %s\n", err.message);
        knut_pipeline_free(p);
        return 1;
    }
    double *ms = calloc((size_t)reps, sizeof *ms);
    knut_viewer_graph *g = NULL;
    int rc = 0;
    for (int r = 0; r < reps && ms; r++) {
        knut_viewer_graph_free(g);
        g = NULL;
        int64_t t0 = knut_clock_mono_ns();
        if (knut_viewer_graph_from_pipeline(&g, p, &err) != KNUT_OK) {
            fprintf(stderr, "knut_viewer_bench: %s\n", err.message);
            rc = 1;
            break;
        }
        ms[r] = (double)(knut_clock_mono_ns() - t0) / 1e6;
    }
    if (rc == 0 && ms && g) {
        double best = ms[0];
        for (int r = 1; r < reps; r++)
            if (ms[r] < best)
                best = ms[r];
        qsort(ms, (size_t)reps, sizeof *ms, cmp_d);
        printf("{\"flows\":%zu,\"nodes\":%zu,\"edges\":%zu,\"layers\":%d,\"reps\":%d,"
               "\"best_ms\":%.3f,\"median_ms\":%.3f,\"width\":%.0f,\"height\":%.0f}\n",
               p->nflows, g->nnodes, g->nedges, g->nlayers, reps, best, ms[reps / 2], g->width,
               g->height);
        if (svg) {
            knut_buf b = KNUT_BUF_INIT;
            if (knut_viewer_graph_svg(g, &b, &err) != KNUT_OK ||
                knut_file_write_atomic(svg, b.data, b.len, &err) != KNUT_OK) {
                fprintf(stderr, "knut_viewer_bench: %s\n", err.message);
                rc = 1;
            }
            knut_buf_reset(&b);
        }
    }
    free(ms);
    knut_viewer_graph_free(g);
    knut_pipeline_free(p);
    return rc;
}
