/*
 * core_errors: the knut calling convention and the capped buffer. A fallible
 * function returns a knut_status (0 ok, negative error) and fills a
 * caller-owned, fixed-size knut_error (which may be NULL); callers add
 * context with knut_error_prefix on the way up. The second half shows a
 * knut_buf with a 16-byte cap: appends past the cap fail once and then the
 * error is sticky, so a writer can append freely and check a single time.
 */
#include <stdio.h>
#include <stdlib.h>

#include <knut/core.h>

/* A function written the knut way: status out, detail in err. */
static knut_status parse_port(const char *text, int *out, knut_error *err)
{
    KNUT_ASSERT_ARG(err, text != NULL);
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0')
        return knut_error_set(err, KNUT_EPARSE, "port '%s' is not a number", text);
    if (v < 1 || v > 65535)
        return knut_error_set(err, KNUT_EINVAL, "port %ld is out of range 1..65535", v);
    *out = (int)v;
    return KNUT_OK;
}

/* A caller one level up adds where the value came from. */
static knut_status load_port(const char *text, int *out, knut_error *err)
{
    knut_status st = parse_port(text, out, err);
    if (st != KNUT_OK)
        knut_error_prefix(err, "server.yml: key 'port': ");
    return st;
}

int main(void)
{
    const char *inputs[] = {"6379", "http", "70000"};
    for (int i = 0; i < 3; i++) {
        knut_error err = KNUT_ERROR_INIT;
        int port = 0;
        knut_status st = load_port(inputs[i], &port, &err);
        if (st == KNUT_OK)
            printf("ok: port %d\n", port);
        else
            printf("error %d (%s): %s\n", (int)st, knut_strerror(st), err.message);
    }
    /* err may be NULL when only the status matters. */
    int port = 0;
    printf("NULL err: %s\n", knut_strerror(parse_port(NULL, &port, NULL)));

    knut_buf b;
    knut_buf_init(&b, 16); /* at most 16 bytes of content */
    knut_buf_puts(&b, "0123456789");
    knut_buf_printf(&b, "-%d", 42);
    knut_buf_puts(&b, "this does not fit"); /* fails: sets the sticky error */
    knut_buf_puts(&b, "!");                 /* ignored: the buffer is in error */
    knut_error err = KNUT_ERROR_INIT;
    if (knut_buf_check(&b, &err) != KNUT_OK)
        printf("buf: len %zu, \"%s\", %s\n", b.len, b.data, err.message);
    knut_buf_clear(&b); /* len 0, error cleared, memory kept */
    knut_buf_put_json_str(&b, "a\"b\n\xff", 5);
    size_t len = 0;
    char *s = knut_buf_detach(&b, &len); /* caller frees; b is reset */
    printf("json: %s (%zu bytes)\n", s, len);
    free(s);
    return 0;
}
