/*
 * knut_ipc_bench: the C side of bench/arrow_ipc_bench.py. Each `reps`
 * times, best time printed as one JSON object: "r" reads an Arrow IPC
 * stream file completely (all batches kept in memory), "w" writes the
 * batches held to an output file, "s" reads the file as a streaming
 * consumer does (each batch released before the next is read). Timing
 * only; correctness is the tests'.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "knut/arrow.h"

typedef struct batches {
    struct ArrowSchema schema;
    struct ArrowArray *items;
    int64_t n, cap, rows;
} batches;

static void batches_reset(batches *b)
{
    for (int64_t i = 0; i < b->n; i++)
        knut_arrow_array_release(&b->items[i]);
    free(b->items);
    knut_arrow_schema_release(&b->schema);
    memset(b, 0, sizeof *b);
}

static knut_status read_file(const char *path, batches *out, knut_error *err)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return knut_error_set(err, KNUT_EIO, "cannot open %s", path);
    knut_arrow_ipc_reader *r = NULL;
    knut_status st = knut_arrow_ipc_reader_new(&r, knut_arrow_ipc_source_fd(fd), NULL, err);
    if (!st)
        st = knut_arrow_schema_deep_copy(&out->schema, knut_arrow_ipc_reader_schema(r), err);
    while (!st) {
        if (out->n == out->cap) {
            int64_t ncap = out->cap ? out->cap * 2 : 64;
            struct ArrowArray *ni = realloc(out->items, (size_t)ncap * sizeof *ni);
            if (!ni) {
                st = knut_error_set(err, KNUT_ENOMEM, "out of memory");
                break;
            }
            out->items = ni;
            out->cap = ncap;
        }
        st = knut_arrow_ipc_reader_next(r, &out->items[out->n], err);
        if (st || !out->items[out->n].release)
            break;
        out->rows += out->items[out->n].length;
        out->n++;
    }
    knut_arrow_ipc_reader_free(r);
    close(fd);
    return st;
}

/* Reads every batch, releasing each before the next; *rows gets the total. */
static knut_status stream_file(const char *path, int64_t *rows, knut_error *err)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return knut_error_set(err, KNUT_EIO, "cannot open %s", path);
    knut_arrow_ipc_reader *r = NULL;
    knut_status st = knut_arrow_ipc_reader_new(&r, knut_arrow_ipc_source_fd(fd), NULL, err);
    *rows = 0;
    while (!st) {
        struct ArrowArray a;
        st = knut_arrow_ipc_reader_next(r, &a, err);
        if (st || !a.release)
            break;
        *rows += a.length;
        knut_arrow_array_release(&a);
    }
    knut_arrow_ipc_reader_free(r);
    close(fd);
    return st;
}

static knut_status write_file(const char *path, const batches *in, int64_t *bytes,
                              knut_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return knut_error_set(err, KNUT_EIO, "cannot create %s", path);
    knut_arrow_ipc_writer *w = NULL;
    knut_status st = knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_fd(fd), &in->schema, err);
    for (int64_t i = 0; !st && i < in->n; i++)
        st = knut_arrow_ipc_writer_write(w, &in->items[i], err);
    if (!st)
        st = knut_arrow_ipc_writer_finish(w, err);
    *bytes = knut_arrow_ipc_writer_bytes(w);
    knut_arrow_ipc_writer_free(w);
    if (close(fd) != 0 && !st)
        st = knut_error_set(err, KNUT_EIO, "closing %s failed", path);
    return st;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: knut_ipc_bench IN.arrows OUT.arrows [reps] [ops: r w s, "
                        "default rw]\n");
        return 2;
    }
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    const char *ops = argc > 4 ? argv[4] : "rw";
    int do_read = strchr(ops, 'r') != NULL, do_write = strchr(ops, 'w') != NULL;
    int do_stream = strchr(ops, 's') != NULL;
    knut_error e = KNUT_ERROR_INIT;
    batches held = {0};
    double best_read = 1e30, best_write = 1e30, best_stream = 1e30;
    int64_t bytes_out = 0, stream_rows = 0;
    struct stat sb;
    if (stat(argv[1], &sb) != 0) {
        fprintf(stderr, "knut_ipc_bench: cannot stat %s\n", argv[1]);
        return 1;
    }
    /* writing needs batches in memory: read them once, untimed */
    for (int i = 0; i < (do_read ? reps : do_write ? 1 : 0); i++) {
        batches_reset(&held);
        int64_t t0 = knut_clock_mono_ns();
        if (read_file(argv[1], &held, &e)) {
            fprintf(stderr, "knut_ipc_bench: %s\n", e.message);
            return 1;
        }
        double s = (double)(knut_clock_mono_ns() - t0) / 1e9;
        best_read = s < best_read ? s : best_read;
    }
    for (int i = 0; do_write && i < reps; i++) {
        unlink(argv[2]);
        int64_t t0 = knut_clock_mono_ns();
        if (write_file(argv[2], &held, &bytes_out, &e)) {
            fprintf(stderr, "knut_ipc_bench: %s\n", e.message);
            return 1;
        }
        double s = (double)(knut_clock_mono_ns() - t0) / 1e9;
        best_write = s < best_write ? s : best_write;
    }
    for (int i = 0; do_stream && i < reps; i++) {
        int64_t t0 = knut_clock_mono_ns();
        if (stream_file(argv[1], &stream_rows, &e)) {
            fprintf(stderr, "knut_ipc_bench: %s\n", e.message);
            return 1;
        }
        double s = (double)(knut_clock_mono_ns() - t0) / 1e9;
        best_stream = s < best_stream ? s : best_stream;
    }
    printf("{\"rows\": %lld, \"batches\": %lld, \"bytes_in\": %lld, \"bytes_out\": %lld",
           (long long)(held.n ? held.rows : stream_rows), (long long)held.n,
           (long long)sb.st_size, (long long)bytes_out);
    if (do_read)
        printf(", \"read_s\": %.6f", best_read);
    if (do_write)
        printf(", \"write_s\": %.6f", best_write);
    if (do_stream)
        printf(", \"stream_s\": %.6f", best_stream);
    printf("}\n");
    batches_reset(&held);
    return 0;
}
