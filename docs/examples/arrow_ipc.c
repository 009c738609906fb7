/*
 * arrow_ipc: a round trip through the Arrow IPC stream format. Two batches
 * are written with knut_arrow_ipc_writer into a capped knut_buf (sinks for
 * a FILE* and a file descriptor work the same way), then read back from
 * memory with knut_arrow_ipc_reader, which validates every batch in full
 * before handing it out. Reading a copy cut short shows the error, which
 * names the message index and its byte offset in the stream.
 */
#include <stdio.h>

#include <knut/arrow.h>

#define CHECK(call)                                                             \
    do {                                                                        \
        if ((call) != KNUT_OK) {                                                \
            fprintf(stderr, "%s: %s\n", knut_strerror(err.code), err.message); \
            return 1;                                                           \
        }                                                                       \
    } while (0)

/* Reads every batch of the stream in data[0..len) and prints the values. */
static knut_status dump(const char *data, size_t len, knut_error *err)
{
    knut_arrow_ipc_source src;
    knut_arrow_ipc_reader *r = NULL;
    knut_status st = knut_arrow_ipc_source_mem(&src, data, len, err);
    if (st == KNUT_OK)
        st = knut_arrow_ipc_reader_new(&r, src, NULL, err); /* takes src over */
    if (st != KNUT_OK)
        return st;
    const struct ArrowSchema *schema = knut_arrow_ipc_reader_schema(r);
    printf("schema: %s '%s', %s '%s'\n", schema->children[0]->name,
           schema->children[0]->format, schema->children[1]->name,
           schema->children[1]->format);
    for (;;) {
        struct ArrowArray batch;
        knut_arrow_view v;
        st = knut_arrow_ipc_reader_next(r, &batch, err);
        if (st != KNUT_OK || batch.release == NULL) /* error, or end of stream */
            break;
        st = knut_arrow_view_init(&v, schema, &batch, err);
        for (int64_t i = 0; st == KNUT_OK && i < v.length; i++) {
            int64_t row = knut_arrow_view_child_row(&v, i), n = 0;
            const char *s = knut_arrow_view_get_str(&v.children[1], row, &n);
            printf("  k=%lld v=%.*s\n",
                   (long long)knut_arrow_view_get_int64(&v.children[0], row), (int)n, s);
        }
        knut_arrow_view_reset(&v);
        batch.release(&batch);
        if (st != KNUT_OK)
            break;
    }
    knut_arrow_ipc_reader_free(r);
    return st;
}

int main(void)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_arrow_builder *root = NULL, *k = NULL, *v = NULL;
    CHECK(knut_arrow_builder_new_simple(&root, KNUT_ARROW_STRUCT, "", &err));
    CHECK(knut_arrow_builder_new_simple(&k, KNUT_ARROW_INT32, "k", &err));
    CHECK(knut_arrow_builder_new_simple(&v, KNUT_ARROW_UTF8, "v", &err));
    CHECK(knut_arrow_builder_add_child(root, k, &err));
    CHECK(knut_arrow_builder_add_child(root, v, &err));

    knut_buf out;
    knut_buf_init(&out, 1 << 20); /* the writer fails with KNUT_ETOOBIG past 1 MiB */
    knut_arrow_ipc_writer *w = NULL;
    struct ArrowSchema schema;
    CHECK(knut_arrow_builder_schema(root, &schema, &err));
    CHECK(knut_arrow_ipc_writer_new(&w, knut_arrow_ipc_sink_buf(&out), &schema, &err));
    knut_arrow_schema_release(&schema); /* the writer keeps its own copy */
    const char *words[] = {"one", "two", "three", "four", "five"};
    for (int b = 0; b < 2; b++) {
        for (int i = 0; i < 2 + b; i++) {
            CHECK(knut_arrow_builder_append_int(k, 10 * b + i, &err));
            CHECK(knut_arrow_builder_append_str(v, words[2 * b + i], &err));
            CHECK(knut_arrow_builder_finish_element(root, &err));
        }
        struct ArrowArray batch;
        CHECK(knut_arrow_builder_finish(root, &batch, NULL, &err));
        CHECK(knut_arrow_ipc_writer_write(w, &batch, &err)); /* reads, does not consume */
        batch.release(&batch);
    }
    CHECK(knut_arrow_ipc_writer_finish(w, &err)); /* the end-of-stream marker */
    printf("wrote %lld bytes (buffer holds %zu)\n", (long long)knut_arrow_ipc_writer_bytes(w),
           out.len);
    knut_arrow_ipc_writer_free(w);
    knut_arrow_builder_free(root);

    CHECK(dump(out.data, out.len, &err));
    printf("the same stream cut to %zu bytes:\n", out.len - 40);
    knut_status st = dump(out.data, out.len - 40, &err);
    printf("  %s: %s\n", knut_strerror(st), err.message);
    knut_buf_reset(&out);
    return 0;
}
