/*
 * arrow_build: building a two-column record batch (id int64, name utf8 with
 * a null) with knut_arrow_builder, then reading it back. A batch is a struct
 * array whose children are the columns: append one value to every child,
 * then close the row with finish_element on the struct. finish hands out a
 * plain ArrowArray + ArrowSchema (C Data Interface) and leaves the builder
 * empty for the next batch. The batch is validated, read through a
 * knut_arrow_view, and wrapped in an ArrowArrayStream.
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

int main(void)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_arrow_builder *root = NULL, *id = NULL, *name = NULL;
    CHECK(knut_arrow_builder_new_simple(&root, KNUT_ARROW_STRUCT, "", &err));
    CHECK(knut_arrow_builder_new_simple(&id, KNUT_ARROW_INT64, "id", &err));
    CHECK(knut_arrow_builder_new_simple(&name, KNUT_ARROW_UTF8, "name", &err));
    knut_arrow_builder_set_nullable(id, 0);
    CHECK(knut_arrow_builder_add_child(root, id, &err)); /* root owns the children now */
    CHECK(knut_arrow_builder_add_child(root, name, &err));

    const char *names[] = {"Ada", NULL, "Grace"};
    for (int64_t i = 0; i < 3; i++) {
        CHECK(knut_arrow_builder_append_int(id, 100 + i, &err));
        if (names[i])
            CHECK(knut_arrow_builder_append_str(name, names[i], &err));
        else
            CHECK(knut_arrow_builder_append_null(name, &err));
        CHECK(knut_arrow_builder_finish_element(root, &err));
    }
    struct ArrowArray batch;
    struct ArrowSchema schema;
    CHECK(knut_arrow_builder_finish(root, &batch, &schema, &err));
    knut_arrow_builder_free(root);

    printf("schema '%s' with %lld columns:", schema.format, (long long)schema.n_children);
    for (int64_t k = 0; k < schema.n_children; k++)
        printf(" %s '%s'%s", schema.children[k]->name, schema.children[k]->format,
               schema.children[k]->flags & ARROW_FLAG_NULLABLE ? " nullable" : "");
    printf("\nbatch: %lld rows, name null_count %lld\n", (long long)batch.length,
           (long long)batch.children[1]->null_count);

    CHECK(knut_arrow_array_validate(&schema, &batch,
                                    KNUT_ARROW_VALIDATE_FULL | KNUT_ARROW_VALIDATE_UTF8, &err));
    knut_arrow_view v;
    CHECK(knut_arrow_view_init(&v, &schema, &batch, &err));
    for (int64_t i = 0; i < v.length; i++) {
        const knut_arrow_view *cid = knut_arrow_view_child(&v, 0);
        const knut_arrow_view *cname = knut_arrow_view_child(&v, 1);
        int64_t row = knut_arrow_view_child_row(&v, i), len = 0;
        printf("row %lld: id=%lld name=", (long long)i,
               (long long)knut_arrow_view_get_int64(cid, row));
        if (knut_arrow_view_is_null(cname, row)) {
            printf("NULL\n");
        } else {
            const char *s = knut_arrow_view_get_str(cname, row, &len);
            printf("%.*s\n", (int)len, s);
        }
    }
    knut_arrow_view_reset(&v);

    /* Type info from a format string, and back. */
    knut_arrow_type_info t;
    char buf[96];
    CHECK(knut_arrow_format_parse("tsu:Europe/Paris", &t, &err));
    CHECK(knut_arrow_format_print(&t, buf, sizeof buf, &err));
    printf("'tsu:Europe/Paris' is a %s, tz %s, %d bytes per value, printed back as '%s'\n",
           knut_arrow_type_name(t.type), t.timezone, t.byte_width, buf);
    printf("'x' -> %s\n", knut_arrow_format_parse("x", &t, &err) == KNUT_OK ? "ok" : err.message);

    /* A stream over the batch (takes ownership of schema and batch). */
    struct ArrowArrayStream stream;
    CHECK(knut_arrow_stream_from_arrays(&stream, &schema, &batch, 1, &err));
    int64_t rows = 0;
    CHECK(knut_arrow_stream_count_rows(&stream, &rows, &err));
    printf("stream: %lld rows\n", (long long)rows);
    knut_arrow_stream_release(&stream);
    return 0;
}
