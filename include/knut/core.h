/*
 * knut core: status codes, the caller-owned error detail, logging, growable
 * buffers with a hard cap, config loading helpers, clock and signals.
 *
 * Every fallible function in knut returns a knut_status (0 = ok, negative =
 * error) and fills a caller-owned `knut_error *err` (may be NULL; never
 * allocates), the way nanoarrow's struct ArrowError works. This keeps error
 * detail correct when work moves between threads.
 */
#ifndef KNUT_CORE_H
#define KNUT_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KNUT_VERSION_MAJOR 0
#define KNUT_VERSION_MINOR 1
#define KNUT_VERSION_PATCH 0
#define KNUT_VERSION "0.1.0"

#if defined(__GNUC__)
#define KNUT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define KNUT_PRINTF(f, a)
#endif

/*
 * KNUT_EXTERN marks every declaration of the public API. libknut is built
 * with -fvisibility=hidden, so only what a public header declares with it is
 * exported from libknut.so; internal helpers (named knut_<part>__*) are not.
 */
#if defined(__GNUC__)
#define KNUT_EXTERN extern __attribute__((visibility("default")))
#else
#define KNUT_EXTERN extern
#endif

/*
 * Versioned option structs: each has `int version` first, set by its
 * initialiser macro to its KNUT_<...>_VERSION constant. An entry point that
 * takes one checks it with KNUT_CHECK_VERSION(opts, WANT, err), which
 * returns KNUT_EINVAL from the calling function on a mismatch (NULL opts
 * means the defaults and passes).
 */
#define KNUT_CHECK_VERSION(opts, want, err)                                              \
    do {                                                                                 \
        if ((opts) != NULL && (opts)->version != (want))                                 \
            return knut_error_set((err), KNUT_EINVAL,                                    \
                                  "%s: options version %d, this libknut expects %d",     \
                                  __func__, (opts)->version, (int)(want));               \
    } while (0)

/* ---- status codes ------------------------------------------------------ */

/* One table drives the enum and knut_strerror(), so they never drift. */
#define KNUT_STATUS_MAP(X)                                        \
    X(KNUT_OK, 0, "ok")                                           \
    X(KNUT_ERROR, -1, "error")                                    \
    X(KNUT_EINVAL, -2, "invalid argument or input")               \
    X(KNUT_ENOTFOUND, -3, "not found")                            \
    X(KNUT_ENOMEM, -4, "out of memory")                           \
    X(KNUT_ETOOBIG, -5, "size limit exceeded")                    \
    X(KNUT_EIO, -6, "input/output error")                         \
    X(KNUT_EPARSE, -7, "malformed input")                         \
    X(KNUT_EUNSUPPORTED, -8, "unsupported feature")               \
    X(KNUT_EAGAIN, -9, "try again")                               \
    X(KNUT_EPEER, -10, "peer error")                              \
    X(KNUT_ECANCELLED, -11, "cancelled")                          \
    X(KNUT_EOF, -12, "end of input")

typedef enum knut_status {
#define KNUT_X_ENUM(name, val, text) name = (val),
    KNUT_STATUS_MAP(KNUT_X_ENUM)
#undef KNUT_X_ENUM
} knut_status;

/* Short text for a status code; never NULL. */
KNUT_EXTERN const char *knut_strerror(knut_status st);

/* ---- error detail ------------------------------------------------------ */

#define KNUT_ERROR_MSG_MAX 1024

/*
 * Caller-owned error detail: one line saying what went wrong, where, and
 * which file/row/column. Fixed size so filling it never allocates.
 *
 * `detail` is what a program tests instead of the message text: 0 = none,
 * else a code of the part that classified a peer's error, from that part's
 * own range so codes of two parts never collide: graph 0x100-0x1ff
 * (knut_graph_falkor_error_kind, FalkorDB server errors), duck 0x200-0x2ff
 * (knut_duck_error_kind, DuckDB error types).
 *
 * `line` and `col` are the position in the input file the error names
 * (1-based; 0 = none), and `text_at` the offset in `message` where the
 * text after the "file:line:col: " (or "file: ") prefix starts (0 = no
 * such prefix): set by knut_error_set_at, so a program never reads them
 * back out of the text. knut_error_set and knut_error_clear reset them and
 * `detail`; knut_error_prefix keeps them (`text_at` moves past the new
 * prefix), so they stay those of the innermost file.
 */
typedef struct knut_error {
    knut_status code;
    int detail;
    char message[KNUT_ERROR_MSG_MAX];
    int line, col;
    int text_at;
} knut_error;

#define KNUT_ERROR_INIT {KNUT_OK, 0, {0}, 0, 0, 0}

/* Clears err (NULL-safe). */
KNUT_EXTERN void knut_error_clear(knut_error *err);

/*
 * Sets err (NULL-safe) to code and the formatted message; returns code so
 * callers can write `return knut_error_set(err, KNUT_EINVAL, "...")`.
 * Long messages are truncated, never overflowed.
 */
KNUT_EXTERN knut_status knut_error_set(knut_error *err, knut_status code, const char *fmt, ...)
    KNUT_PRINTF(3, 4);
KNUT_EXTERN knut_status knut_error_setv(knut_error *err, knut_status code, const char *fmt,
                                        va_list ap)
    KNUT_PRINTF(3, 0);

/*
 * Sets err (NULL-safe) like knut_error_set, to "file:line:col: " + the
 * formatted text, and records line, col and where the text starts as
 * data. line <= 0 means no known position: the message is "file: " + text
 * and line, col are 0 (text_at still set). col <= 0 with a line is 1.
 * NULL file reads "(input)". Returns code.
 */
KNUT_EXTERN knut_status knut_error_set_at(knut_error *err, knut_status code, const char *file,
                                          int line, int col, const char *fmt, ...)
    KNUT_PRINTF(6, 7);

/* Prefixes the existing message with more context ("file.yml: " + old). */
KNUT_EXTERN knut_status knut_error_prefix(knut_error *err, const char *fmt, ...) KNUT_PRINTF(2, 3);

/* Argument checks that stay in release builds: set err, return EINVAL. */
#define KNUT_ASSERT_ARG(err, cond)                                                   \
    do {                                                                             \
        if (!(cond))                                                                 \
            return knut_error_set((err), KNUT_EINVAL, "%s: invalid argument: %s",   \
                                  __func__, #cond);                                  \
    } while (0)

/* ---- logging ----------------------------------------------------------- */

typedef enum knut_log_level {
    KNUT_LOG_TRACE = 0,
    KNUT_LOG_DEBUG,
    KNUT_LOG_INFO,
    KNUT_LOG_WARN,
    KNUT_LOG_ERROR,
    KNUT_LOG_OFF
} knut_log_level;

/* A structured field attached to a log record. */
typedef enum knut_log_field_kind {
    KNUT_LOG_FIELD_STR,
    KNUT_LOG_FIELD_INT,
    KNUT_LOG_FIELD_DOUBLE,
    KNUT_LOG_FIELD_BOOL
} knut_log_field_kind;

typedef struct knut_log_field {
    const char *key;
    knut_log_field_kind kind;
    union {
        const char *s;
        int64_t i;
        double d;
        int b;
    } v;
} knut_log_field;

#define KNUT_LF_STR(k, x) ((knut_log_field){(k), KNUT_LOG_FIELD_STR, {.s = (x)}})
#define KNUT_LF_INT(k, x) ((knut_log_field){(k), KNUT_LOG_FIELD_INT, {.i = (int64_t)(x)}})
#define KNUT_LF_DBL(k, x) ((knut_log_field){(k), KNUT_LOG_FIELD_DOUBLE, {.d = (x)}})
#define KNUT_LF_BOOL(k, x) ((knut_log_field){(k), KNUT_LOG_FIELD_BOOL, {.b = !!(x)}})

typedef struct knut_log_record {
    int64_t ts_us;        /* wall clock, microseconds since the epoch */
    knut_log_level level;
    const char *target;   /* the part that logs: "duck", "sync", ... */
    const char *msg;
    const knut_log_field *fields;
    size_t nfields;
} knut_log_record;

typedef void (*knut_log_fn)(const knut_log_record *rec, void *ctx);

/* Installs the process-wide sink (fn == NULL turns logging off); ctx is
 * borrowed and must outlive the sink's use. The library never prints by
 * itself. Messages and string field values over 64 KiB are cut and marked
 * with "...". Thread-safe: records are passed to fn one at a time, under
 * a lock, on the thread that logs. */
KNUT_EXTERN void knut_log_set(knut_log_level level, knut_log_fn fn, void *ctx);
/* The current level (KNUT_LOG_OFF when no sink is installed). */
KNUT_EXTERN knut_log_level knut_log_level_get(void);
/* Non-zero if a record of this level would reach the sink (one atomic load). */
KNUT_EXTERN int knut_log_enabled(knut_log_level level);
/* "trace" ... "off"; static text, never NULL. */
KNUT_EXTERN const char *knut_log_level_name(knut_log_level level);
/* Parses "trace|debug|info|warn|error|off" into *out; KNUT_EINVAL otherwise. */
KNUT_EXTERN knut_status knut_log_level_parse(const char *s, knut_log_level *out);

/* Emits a record if level is enabled; fields and their strings are
 * borrowed for the call only. */
KNUT_EXTERN void knut_log_emit(knut_log_level level, const char *target,
                               const knut_log_field *fields, size_t nfields, const char *fmt,
                               ...) KNUT_PRINTF(5, 6);

#define KNUT_LOG(level, target, ...)                                \
    do {                                                            \
        if (knut_log_enabled(level))                                \
            knut_log_emit((level), (target), NULL, 0, __VA_ARGS__); \
    } while (0)

/* Ready-made sinks; ctx is a FILE* (NULL: stderr). Each record is one
 * fwrite + fflush. JSON: ts (RFC 3339 UTC, microseconds), level, target,
 * msg, then one key per field (a field named like those gets "field."). */
/* One JSON object per line. */
KNUT_EXTERN void knut_log_sink_json(const knut_log_record *rec, void *ctx);
/* For terminals. */
KNUT_EXTERN void knut_log_sink_human(const knut_log_record *rec, void *ctx);

/* ---- buffers ----------------------------------------------------------- */

/*
 * A growable byte buffer, always NUL-terminated, with a hard size cap
 * (curl dynbuf) and a sticky error (git_str): append freely, check once.
 */
typedef struct knut_buf {
    char *data;
    size_t len;
    size_t cap;       /* allocated bytes */
    size_t max;       /* hard cap on len; 0 = KNUT_BUF_DEFAULT_MAX */
    knut_status error; /* sticky: once set, appends are ignored */
} knut_buf;

#define KNUT_BUF_DEFAULT_MAX ((size_t)1 << 30)
#define KNUT_BUF_INIT {NULL, 0, 0, 0, KNUT_OK}

/*
 * Every knut_buf has a hard cap: max bytes of content (0: the 1 GiB
 * default). A buffer fed by a file or the network states its cap here,
 * at the call; an append past it fails with KNUT_ETOOBIG, sticks, and
 * leaves the content as it was. Appends also fail with KNUT_ENOMEM.
 * A buffer belongs to one thread at a time.
 */
KNUT_EXTERN void knut_buf_init(knut_buf *b, size_t max); /* empty, with cap max */
KNUT_EXTERN void knut_buf_reset(knut_buf *b); /* frees the contents (NULL-safe); b may be reused */
KNUT_EXTERN void knut_buf_clear(knut_buf *b); /* len = 0, keeps memory and cap, clears error */
/* Append family: KNUT_OK, or the sticky KNUT_ETOOBIG / KNUT_ENOMEM. */
KNUT_EXTERN knut_status knut_buf_reserve(knut_buf *b, size_t extra);
KNUT_EXTERN knut_status knut_buf_append(knut_buf *b, const void *data, size_t len);
KNUT_EXTERN knut_status knut_buf_puts(knut_buf *b, const char *s);
KNUT_EXTERN knut_status knut_buf_putc(knut_buf *b, char c);
KNUT_EXTERN knut_status knut_buf_printf(knut_buf *b, const char *fmt, ...) KNUT_PRINTF(2, 3);
KNUT_EXTERN knut_status knut_buf_vprintf(knut_buf *b, const char *fmt,
                                         va_list ap) KNUT_PRINTF(2, 0);
/* Appends s[0..len) as a JSON string literal (with quotes and escapes);
 * bytes that are not valid UTF-8 become U+FFFD, so the output always is. */
KNUT_EXTERN knut_status knut_buf_put_json_str(knut_buf *b, const char *s, size_t len);
/* Appends `"key":"v"` (v as knut_buf_put_json_str does; NULL v: `"key":null`). */
KNUT_EXTERN knut_status knut_buf_put_json_member(knut_buf *b, const char *key, const char *v);
/*
 * Takes ownership of the bytes (caller frees with free()); b is reset.
 * An empty buffer gives "" (still to be freed); a buffer in error gives NULL.
 */
KNUT_EXTERN char *knut_buf_detach(knut_buf *b, size_t *len_out);
/* The sticky error, with a message naming it and the cap, or KNUT_OK. */
KNUT_EXTERN knut_status knut_buf_check(const knut_buf *b, knut_error *err);

/* ---- whole files ------------------------------------------------------- */

/*
 * Reads the whole file at path into out, refusing more than max bytes: the
 * one reader for files read at once (configs, GraphAr info YAML, the sync
 * file ledger). out's old contents are freed and out->max becomes max, so
 * the cap is stated at every call; there is no default. The cap holds on
 * what is actually read, so pipes and /proc files (no size) are capped too.
 * out is the caller's (knut_buf_reset it); on failure it is left empty.
 * Errors name the file: KNUT_ENOTFOUND (no such file), KNUT_EINVAL (a
 * directory, or max 0), KNUT_ETOOBIG ("over the <max>-byte limit"),
 * KNUT_EIO (cannot open or read), KNUT_ENOMEM.
 */
KNUT_EXTERN knut_status knut_file_read(const char *path, size_t max, knut_buf *out,
                                       knut_error *err);

/*
 * Replaces the file at path with data[0..len) atomically: written to
 * "<path>.tmp" (mode 0644), fsync'd, closed, renamed over path, and the
 * folder fsync'd so the rename is durable. A crash leaves the old file or
 * the new one, never a torn one. On any failure (open, write, ENOSPC,
 * fsync, close, rename, the folder's fsync) the descriptor is closed, the
 * temp file removed and KNUT_EIO names the file and the step; the old
 * file is then untouched, except after a failed folder fsync (the rename
 * was done, its durability is unknown).
 */
KNUT_EXTERN knut_status knut_file_write_atomic(const char *path, const void *data, size_t len,
                                               knut_error *err);

/* ---- config loading ---------------------------------------------------- */

/*
 * Config files (YAML or JSON) are loaded into a small tree whose nodes keep
 * the file:line:column they came from, so every later error can name it.
 */
typedef enum knut_conf_kind {
    KNUT_CONF_NULL,
    KNUT_CONF_SCALAR, /* strings, numbers, booleans: kept as text */
    KNUT_CONF_SEQ,
    KNUT_CONF_MAP
} knut_conf_kind;

typedef struct knut_conf knut_conf;

/*
 * Max config file size read into memory. Loading also caps nesting (64
 * levels), nodes per document (1M), and what aliases may expand to (64K
 * nodes), so untrusted configs cannot exhaust memory. YAML merge keys
 * ("<<: *defaults") are supported; a file holds one YAML document.
 */
#define KNUT_CONF_MAX_BYTES ((size_t)16 << 20)

/* Reads and parses a config file (YAML, or JSON by a .json name) of at
 * most KNUT_CONF_MAX_BYTES. The caller frees *out with knut_conf_free; on
 * error *out is NULL. Errors: KNUT_ENOTFOUND / KNUT_EIO (cannot read),
 * KNUT_ETOOBIG (a cap above), KNUT_EPARSE (syntax, duplicate keys),
 * KNUT_ENOMEM; the position, when known, is in err->line and err->col. */
KNUT_EXTERN knut_status knut_conf_load_file(knut_conf **out, const char *path, knut_error *err);
/* Parses YAML (JSON is YAML) from text[0..len), which is borrowed; name
 * is used in error positions and copied. Plain (unquoted) ~, null and
 * empty values are KNUT_CONF_NULL; everything else stays text until a
 * typed getter reads it. The caller frees *out; on error it is NULL.
 * Errors as for knut_conf_load_file, less the file ones. */
KNUT_EXTERN knut_status knut_conf_load_yaml(knut_conf **out, const char *text, size_t len,
                                            const char *name, knut_error *err);
/* The same for JSON only (no YAML merge keys); errors as above. */
KNUT_EXTERN knut_status knut_conf_load_json(knut_conf **out, const char *text, size_t len,
                                            const char *name, knut_error *err);
/* Frees a tree from a knut_conf_load_* call (NULL-safe). */
KNUT_EXTERN void knut_conf_free(knut_conf *root);

/* Node accessors: NULL-safe, never fail; strings belong to the tree. */
KNUT_EXTERN knut_conf_kind knut_conf_kind_of(const knut_conf *n);
/* What a kind is called in messages ("null", "a scalar", "a list", "a map"). */
KNUT_EXTERN const char *knut_conf_kind_name(knut_conf_kind k);
/* Map lookup; NULL if n is not a map or has no such key. */
KNUT_EXTERN const knut_conf *knut_conf_get(const knut_conf *n, const char *key);
KNUT_EXTERN size_t knut_conf_len(const knut_conf *n); /* seq/map length */
KNUT_EXTERN const knut_conf *knut_conf_at(const knut_conf *n, size_t i); /* seq item or map value */
KNUT_EXTERN const char *knut_conf_key_at(const knut_conf *n, size_t i); /* map key */
KNUT_EXTERN const char *knut_conf_str(const knut_conf *n); /* scalar text or NULL */
/*
 * Typed getters: read map[key] into *out (a string stays the tree's).
 * Errors name file:line:col (also in err->line, err->col) and key:
 * KNUT_ENOTFOUND if absent, KNUT_EINVAL if of the wrong kind or form.
 * Integers: decimal, 0x hex, 0o octal. Booleans: true/false, yes/no,
 * on/off (any case). Doubles: decimal forms and .inf/.nan.
 */
KNUT_EXTERN knut_status knut_conf_get_str(const knut_conf *map, const char *key, const char **out,
                                          knut_error *err);
KNUT_EXTERN knut_status knut_conf_get_i64(const knut_conf *map, const char *key, int64_t *out,
                                          knut_error *err);
KNUT_EXTERN knut_status knut_conf_get_bool(const knut_conf *map, const char *key, int *out,
                                           knut_error *err);
KNUT_EXTERN knut_status knut_conf_get_f64(const knut_conf *map, const char *key, double *out,
                                          knut_error *err);
/* Where a node came from: file name, 1-based line and column (characters).
 * Line and column are 0 when unknown (the rare JSON that only jansson reads). */
KNUT_EXTERN const char *knut_conf_file(const knut_conf *n);
KNUT_EXTERN int knut_conf_line(const knut_conf *n);
KNUT_EXTERN int knut_conf_col(const knut_conf *n);
/* Where the key of a map value was written (the key's own position, for
 * "unknown key" messages); 0 when n is not a map value or unknown. */
KNUT_EXTERN int knut_conf_key_line(const knut_conf *n);
KNUT_EXTERN int knut_conf_key_col(const knut_conf *n);

/* Edits (insert, delete, replace, swap two neighbours) turning a[0..na)
 * into b; SIZE_MAX when either is longer than 63 (a typo hint compares
 * short names only). */
KNUT_EXTERN size_t knut_str_distance(const char *a, size_t na, const char *b);
/* The candidate (NULL-terminated list) closest to name: a few typos away
 * (insert, delete, replace, swap two neighbours; 1 for names up to 3
 * characters, 2 up to 8, else 3), or NULL if none is that close. For "did
 * you mean" hints (src/core/suggest.c). */
KNUT_EXTERN const char *knut_str_suggest(const char *name, const char *const *candidates);

/* ---- time and signals -------------------------------------------------- */

KNUT_EXTERN int64_t knut_clock_mono_ns(void);  /* monotonic, for intervals */
KNUT_EXTERN int64_t knut_clock_wall_us(void);  /* wall clock, for timestamps */
/* Sleeps up to ns: KNUT_OK, or KNUT_ECANCELLED as soon as a stop is
 * requested (checked before and during the sleep). */
KNUT_EXTERN knut_status knut_clock_sleep_ns(int64_t ns);

/* RFC 9562 UUIDs as lowercase text (src/core/uuid.c): v4 random, v7 a
 * millisecond timestamp then random (ids that sort by creation time). */
#define KNUT_UUID_LEN 37 /* 36 characters and the NUL */
KNUT_EXTERN void knut_uuid_v4(char out[KNUT_UUID_LEN]);
KNUT_EXTERN void knut_uuid_v7(char out[KNUT_UUID_LEN]);

/*
 * Installs SIGINT/SIGTERM handlers that only set a flag (async-signal-safe),
 * so long-running loops can finish their round and exit cleanly. Handlers
 * are one-shot: a second signal takes the default action (terminates), so a
 * stuck shutdown can still be interrupted. Blocking calls see EINTR.
 * Process-wide; KNUT_ERROR if sigaction fails. The flags are atomics, so
 * any thread may read them.
 */
KNUT_EXTERN knut_status knut_signal_install(knut_error *err);
KNUT_EXTERN int knut_signal_stop_requested(void); /* non-zero once a signal came */
KNUT_EXTERN int knut_signal_last(void);        /* the signal number received, or 0 */
KNUT_EXTERN void knut_signal_request_stop(void); /* for tests and internal shutdown */
KNUT_EXTERN void knut_signal_reset(void);       /* clears the flags, re-arms handlers */
/* Installs a SIGHUP handler that sets a reload flag (and stays armed), for
 * a job that reads its config again between rounds. */
KNUT_EXTERN knut_status knut_signal_install_reload(knut_error *err);
KNUT_EXTERN int knut_signal_reload_requested(void); /* non-zero while a reload is asked for */
KNUT_EXTERN int knut_signal_reload_take(void); /* the same, and clears it */
/* fn(sig, ctx) runs on a watcher thread soon after each handled signal
 * (SIGINT, SIGTERM, SIGHUP), outside the handler, so it may log. One
 * watcher per process; knut_signal_unwatch stops and joins it. */
typedef void (*knut_signal_watch_fn)(int sig, void *ctx);
KNUT_EXTERN knut_status knut_signal_watch(knut_signal_watch_fn fn, void *ctx, knut_error *err);
KNUT_EXTERN void knut_signal_unwatch(void);

#ifdef __cplusplus
}
#endif

#endif /* KNUT_CORE_H */
