/*
 * knut_ipc_tool: a small driver of the Arrow IPC reader and writer for the
 * pyarrow interop tests. Modes:
 *   gen        write a stream of every type to stdout (ipc_gen.h data):
 *              50 rows, an empty batch, a batch sliced at row 5 of rows
 *              100.., a batch whose columns are sliced at their own offsets
 *   roundtrip  read a stream from stdin, write it back to stdout
 *   dump       read a stream from stdin, print one JSON object per row
 * Errors go to stderr as one line; the exit code is 1 (2 for usage).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc_gen.h"
#include "knut/arrow.h"

static int fail(const knut_error *e)
{
    fprintf(stderr, "knut_ipc_tool: %s\n", e->message[0] ? e->message : knut_strerror(e->code));
    return 1;
}

/* ---- gen --------------------------------------------------------------- */

/* Column slice offsets of the last batch (the pytest side knows them). */
static const int64_t gen_offsets[] = {8, 3, 13, 1, 0, 21};

static int cmd_gen(void)
{
    knut_error e = KNUT_ERROR_INIT;
    knut_arrow_builder *top = NULL;
    knut_arrow_ipc_writer *w = NULL;
    struct ArrowSchema s = {0};
    struct ArrowArray b = {0}, view = {0}, *cols = NULL, **ptrs = NULL;
    knut_status st = ipcgen_builder_new(&top, &e);
    if (!st)
        st = knut_arrow_builder_schema(top, &s, &e);
    if (!st)
        st = knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_fd(STDOUT_FILENO), &s, &e);
    /* 50 rows, then an empty batch */
    for (int i = 0; i < 2 && !st; i++) {
        st = ipcgen_rows(top, 0, i == 0 ? 50 : 0, &e);
        if (!st)
            st = knut_arrow_builder_finish(top, &b, NULL, &e);
        if (!st)
            st = knut_arrow_ipc_writer_write(w, &b, &e);
        knut_arrow_array_release(&b);
    }
    /* rows 100..163, written as the slice 105..129 */
    if (!st)
        st = ipcgen_rows(top, 100, 64, &e);
    if (!st)
        st = knut_arrow_builder_finish(top, &b, NULL, &e);
    if (!st) {
        ipcgen_slice(&view, &b, 5, 25);
        st = knut_arrow_ipc_writer_write(w, &view, &e);
    }
    knut_arrow_array_release(&b);
    /* rows 200..263, column i sliced at gen_offsets[i % 6] for 30 rows */
    if (!st)
        st = ipcgen_rows(top, 200, 64, &e);
    if (!st)
        st = knut_arrow_builder_finish(top, &b, NULL, &e);
    if (!st) {
        cols = calloc((size_t)b.n_children, sizeof *cols);
        ptrs = calloc((size_t)b.n_children, sizeof *ptrs);
        if (!cols || !ptrs)
            st = knut_error_set(&e, KNUT_ENOMEM, "out of memory");
    }
    if (!st) {
        for (int64_t i = 0; i < b.n_children; i++) {
            ipcgen_slice(&cols[i], b.children[i], gen_offsets[i % 6], 30);
            ptrs[i] = &cols[i];
        }
        view = b;
        view.length = 30;
        view.children = ptrs;
        view.release = ipcgen_view_release;
        st = knut_arrow_ipc_writer_write(w, &view, &e);
    }
    if (!st)
        st = knut_arrow_ipc_writer_finish(w, &e);
    free(cols);
    free(ptrs);
    knut_arrow_array_release(&b);
    knut_arrow_ipc_writer_free(w);
    knut_arrow_schema_release(&s);
    knut_arrow_builder_free(top);
    return st ? fail(&e) : 0;
}

/* ---- roundtrip --------------------------------------------------------- */

static int cmd_roundtrip(void)
{
    knut_error e = KNUT_ERROR_INIT;
    struct ArrowArrayStream in;
    knut_status st = knut_arrow_ipc_stream_open(&in, knut_arrow_ipc_source_fd(STDIN_FILENO),
                                                NULL, &e);
    if (st)
        return fail(&e);
    st = knut_arrow_ipc_write_stream(knut_arrow_ipc_sink_fd(STDOUT_FILENO), &in, &e);
    in.release(&in);
    return st ? fail(&e) : 0;
}

/* ---- dump -------------------------------------------------------------- */

static void put_hex(knut_buf *o, const char *p, int64_t n)
{
    static const char hex[] = "0123456789abcdef";
    knut_buf_putc(o, '"');
    for (int64_t i = 0; i < n; i++) {
        knut_buf_putc(o, hex[(uint8_t)p[i] >> 4]);
        knut_buf_putc(o, hex[(uint8_t)p[i] & 15]);
    }
    knut_buf_putc(o, '"');
}

/* A signed 128-bit little-endian integer in decimal. */
static void put_i128(knut_buf *o, const char *p)
{
    unsigned __int128 u;
    memcpy(&u, p, 16);
    int neg = (u >> 127) != 0;
    if (neg)
        u = ~u + 1;
    char digits[48];
    int n = 0;
    do {
        digits[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    if (neg)
        knut_buf_putc(o, '-');
    while (n)
        knut_buf_putc(o, digits[--n]);
}

static void put_value(knut_buf *o, const knut_arrow_view *v, int64_t i)
{
    if (knut_arrow_view_is_null(v, i)) {
        knut_buf_puts(o, "null");
        return;
    }
    int64_t len, s, e;
    const char *p;
    int32_t i32[2];
    switch (v->type.type) {
    case KNUT_ARROW_BOOL:
        knut_buf_puts(o, knut_arrow_view_get_bool(v, i) ? "true" : "false");
        break;
    case KNUT_ARROW_UINT64:
        knut_buf_printf(o, "%llu", (unsigned long long)knut_arrow_view_get_uint64(v, i));
        break;
    case KNUT_ARROW_HALF_FLOAT: /* raw bits */
        knut_buf_printf(o, "%u", ((const uint16_t *)knut_arrow_view_values(v))[i]);
        break;
    case KNUT_ARROW_FLOAT:
    case KNUT_ARROW_DOUBLE:
        knut_buf_printf(o, "%.17g", knut_arrow_view_get_double(v, i));
        break;
    case KNUT_ARROW_UTF8:
    case KNUT_ARROW_LARGE_UTF8:
        p = knut_arrow_view_get_str(v, i, &len);
        knut_buf_put_json_str(o, p, (size_t)len);
        break;
    case KNUT_ARROW_BINARY:
    case KNUT_ARROW_LARGE_BINARY:
    case KNUT_ARROW_FIXED_BINARY:
        p = knut_arrow_view_get_bytes(v, i, &len);
        put_hex(o, p, len);
        break;
    case KNUT_ARROW_DECIMAL128: /* the unscaled integer */
        p = knut_arrow_view_get_bytes(v, i, &len);
        put_i128(o, p);
        break;
    case KNUT_ARROW_INTERVAL_DAY_TIME:
        p = knut_arrow_view_get_bytes(v, i, &len);
        memcpy(i32, p, 8);
        knut_buf_printf(o, "[%d,%d]", i32[0], i32[1]);
        break;
    case KNUT_ARROW_INTERVAL_MDN: {
        int64_t ns;
        p = knut_arrow_view_get_bytes(v, i, &len);
        memcpy(i32, p, 8);
        memcpy(&ns, p + 8, 8);
        knut_buf_printf(o, "[%d,%d,%lld]", i32[0], i32[1], (long long)ns);
        break;
    }
    case KNUT_ARROW_LIST:
    case KNUT_ARROW_LARGE_LIST:
    case KNUT_ARROW_MAP:
        knut_arrow_view_list_range(v, i, &s, &e);
        knut_buf_putc(o, '[');
        for (int64_t k = s; k < e; k++) {
            if (k > s)
                knut_buf_putc(o, ',');
            put_value(o, &v->children[0], k);
        }
        knut_buf_putc(o, ']');
        break;
    case KNUT_ARROW_STRUCT:
        knut_buf_putc(o, '{');
        for (int64_t k = 0; k < v->n_children; k++) {
            const char *name = v->schema->children[k]->name;
            if (k)
                knut_buf_putc(o, ',');
            knut_buf_put_json_str(o, name, strlen(name));
            knut_buf_putc(o, ':');
            put_value(o, &v->children[k], knut_arrow_view_child_row(v, i));
        }
        knut_buf_putc(o, '}');
        break;
    default: /* integers, dates, times, timestamps, durations, months */
        knut_buf_printf(o, "%lld", (long long)knut_arrow_view_get_int64(v, i));
        break;
    }
}

static int cmd_dump(void)
{
    knut_error e = KNUT_ERROR_INIT;
    knut_arrow_ipc_reader *r = NULL;
    knut_buf o = KNUT_BUF_INIT;
    knut_status st = knut_arrow_ipc_reader_new(&r, knut_arrow_ipc_source_fd(STDIN_FILENO), NULL,
                                               &e);
    while (!st) {
        struct ArrowArray a;
        knut_arrow_view v;
        st = knut_arrow_ipc_reader_next(r, &a, &e);
        if (st || !a.release)
            break;
        st = knut_arrow_view_init(&v, knut_arrow_ipc_reader_schema(r), &a, &e);
        if (st) {
            knut_arrow_array_release(&a);
            break;
        }
        for (int64_t row = 0; !st && row < a.length; row++) {
            knut_buf_clear(&o);
            put_value(&o, &v, row);
            knut_buf_putc(&o, '\n');
            st = knut_buf_check(&o, &e);
            if (!st && fwrite(o.data, 1, o.len, stdout) != o.len)
                st = knut_error_set(&e, KNUT_EIO, "writing to stdout failed");
        }
        knut_arrow_view_reset(&v);
        knut_arrow_array_release(&a);
    }
    knut_arrow_ipc_reader_free(r);
    knut_buf_reset(&o);
    if (fflush(stdout) != 0 && !st)
        st = knut_error_set(&e, KNUT_EIO, "writing to stdout failed");
    return st ? fail(&e) : 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "gen") == 0)
        return cmd_gen();
    if (argc == 2 && strcmp(argv[1], "roundtrip") == 0)
        return cmd_roundtrip();
    if (argc == 2 && strcmp(argv[1], "dump") == 0)
        return cmd_dump();
    fprintf(stderr, "usage: knut_ipc_tool gen|roundtrip|dump  (streams on stdin/stdout)\n");
    return 2;
}
