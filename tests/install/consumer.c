/*
 * A user's first program against the installed libknut: open an in-memory
 * DuckDB through knut, run SELECT 42, read the answer from the Arrow stream.
 * Built by tests/install/check.sh with `pkg-config --cflags --libs knut`.
 */
#include <stdio.h>

#include <knut/knut.h>

int main(void)
{
    knut_error err = KNUT_ERROR_INIT;
    knut_duck_db *db = NULL;
    knut_duck_conn *conn = NULL;
    struct ArrowArrayStream stream = {0};
    struct ArrowSchema schema = {0};
    struct ArrowArray batch = {0};
    knut_arrow_view view = {0};
    int rc = 1;

    if (knut_duck_db_open(&db, NULL, NULL, 0, &err) != KNUT_OK ||
        knut_duck_conn_open(&conn, db, &err) != KNUT_OK ||
        knut_duck_query(conn, "SELECT 42::BIGINT AS answer", &stream, &err) != KNUT_OK)
        goto done;
    if (stream.get_schema(&stream, &schema) != 0 || stream.get_next(&stream, &batch) != 0 ||
        batch.release == NULL) {
        knut_error_set(&err, KNUT_ERROR, "no batch from the stream");
        goto done;
    }
    if (knut_arrow_view_init(&view, schema.children[0], batch.children[0], &err) != KNUT_OK)
        goto done;
    printf("consumer: SELECT 42 -> %lld\n", (long long)knut_arrow_view_get_int64(&view, 0));
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "consumer: %s\n", err.message);
    knut_arrow_view_reset(&view);
    knut_arrow_array_release(&batch);
    knut_arrow_schema_release(&schema);
    if (stream.release)
        stream.release(&stream);
    knut_duck_conn_close(conn);
    knut_duck_db_close(db);
    return rc;
}
