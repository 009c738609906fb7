/*
 * The one option parser of the knut commands: a command's table of options
 * (cli.h) parses its argv and writes the Options part of its help. Errors
 * are one line naming the option or argument and what it needs, and a
 * pointer to the command's --help, and are exit code 2; every command thus
 * fails the same way on the same mistakes.
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Help lines are wrapped to this many characters (a classic terminal). */
#define HELP_WIDTH 79
#define HELP_COL 21

typedef struct parser {
    const knut_cli_spec *spec;
    char *args; /* the argument struct, as bytes for the offsets */
    FILE *err;
} parser;

/* ---- errors -------------------------------------------------------------- */

static void verror(FILE *f, const knut_cli_spec *spec, const char *fmt, va_list ap)
    KNUT_PRINTF(3, 0);

/* One line: the whole help would bury the one thing that is wrong. */
static void verror(FILE *f, const knut_cli_spec *spec, const char *fmt, va_list ap)
{
    fprintf(f, "knut %s: ", spec->name);
    vfprintf(f, fmt, ap);
    fprintf(f, "; see 'knut %s --help'\n", spec->name);
}

static int fail(const parser *p, const char *fmt, ...) KNUT_PRINTF(2, 3);

static int fail(const parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(p->err, p->spec, fmt, ap);
    va_end(ap);
    return KNUT_EXIT_USAGE;
}

int knut_cli_args_error(const knut_cli_spec *spec, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(stderr, spec, fmt, ap);
    va_end(ap);
    return KNUT_EXIT_USAGE;
}

int knut_cli_args_missing(const knut_cli_spec *spec, const char *what)
{
    return knut_cli_args_error(spec, "missing %s", what);
}

/* ---- which options of the table are the command's ------------------------ */

/* 1 if the space-separated list holds name. */
static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *s = list; *s;) {
        size_t len = strcspn(s, " ");
        if (len == n && strncmp(s, name, n) == 0)
            return 1;
        s += len;
        s += strspn(s, " ");
    }
    return 0;
}

/* 1 if o is one of spec's options: listed in `only` (when set) and not in
 * `omit` (a refusal the spec accepts still refuses, with its reason). */
static int accepts(const knut_cli_spec *spec, const knut_cli_opt *o)
{
    if (spec->only && !in_list(spec->only, o->name))
        return 0;
    return !(spec->omit && in_list(spec->omit, o->name));
}

int knut_cli_args_listed(const knut_cli_spec *spec, const knut_cli_opt *o)
{
    return o->kind != KNUT_CLI_REFUSE && accepts(spec, o);
}

/* "one of a, b, c" (into buf). */
static const char *one_of(const char *const *choices, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "one of");
    for (size_t i = 0; choices[i] && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s %s", i ? "," : "", choices[i]);
    return buf;
}

/* What the option's value must be, for "--NAME needs ..." (into buf). */
static const char *needs(const knut_cli_opt *o, char *buf, size_t n)
{
    switch (o->kind) {
    case KNUT_CLI_INT:
        if (o->max == INT64_MAX)
            snprintf(buf, n, "a whole number, %lld or more", (long long)o->min);
        else
            snprintf(buf, n, "a whole number from %lld to %lld", (long long)o->min,
                     (long long)o->max);
        return buf;
    case KNUT_CLI_SECS:
        snprintf(buf, n, "seconds > 0 (at most %lld)", (long long)o->max);
        return buf;
    case KNUT_CLI_CHOICE:
        return one_of(o->choices, buf, n);
    default:
        snprintf(buf, n, "a value (%s)", o->metavar ? o->metavar : "VALUE");
        return buf;
    }
}

static int bad_value(const parser *p, const knut_cli_opt *o, const char *v)
{
    char need[256];
    if (!v)
        return fail(p, "--%s needs %s", o->name, needs(o, need, sizeof need));
    return fail(p, "--%s needs %s, not '%.60s'", o->name, needs(o, need, sizeof need), v);
}

/* ---- "did you mean" ------------------------------------------------------ */

/* The listed option closest to name[0..n): a few typos away, or the only
 * one it is the beginning of. NULL if none is close. */
static const char *suggest(const knut_cli_spec *spec, const char *name, size_t n)
{
    const char *best = NULL, *prefix_of = NULL;
    size_t limit = n <= 3 ? 1 : n <= 8 ? 2 : 3, best_d = SIZE_MAX;
    int prefixes = 0;
    for (const knut_cli_opt *o = spec->opts; o && o->name; o++) {
        if (o->kind == KNUT_CLI_REFUSE || !accepts(spec, o))
            continue;
        size_t d = knut_str_distance(name, n, o->name);
        if (d <= limit && d < best_d) {
            best_d = d;
            best = o->name;
        }
        if (n >= 2 && strncmp(o->name, name, n) == 0) {
            prefixes++;
            prefix_of = o->name;
        }
    }
    if (!best && knut_str_distance(name, n, "help") <= 1)
        best = "help";
    return best ? best : prefixes == 1 ? prefix_of : NULL;
}

/* ---- values -------------------------------------------------------------- */

static int parse_int(const char *s, int64_t *out)
{
    const char *digits = s[0] == '-' || s[0] == '+' ? s + 1 : s;
    if (!isdigit((unsigned char)digits[0]))
        return -1; /* strtoll would skip spaces and take "" as 0 */
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static int parse_secs(const char *s, double *out)
{
    char *end = NULL;
    if (!s[0] || isspace((unsigned char)s[0]))
        return -1;
    errno = 0;
    double d = strtod(s, &end);
    if (errno || *end || !isfinite(d))
        return -1;
    *out = d;
    return 0;
}

/* Stores v (NULL: the value is missing) into o's destination. */
static int store(const parser *p, const knut_cli_opt *o, char *v)
{
    void *dest = p->args + o->at;
    if (!v)
        return bad_value(p, o, NULL);
    switch (o->kind) {
    case KNUT_CLI_STR:
        *(const char **)dest = v;
        return KNUT_EXIT_OK;
    case KNUT_CLI_STRS: {
        knut_cli_strs *s = dest;
        size_t most = o->max > 0 && o->max < KNUT_CLI_STRS_MAX ? (size_t)o->max
                                                               : KNUT_CLI_STRS_MAX;
        if (s->n >= most)
            return fail(p, "--%s may be given at most %zu times", o->name, most);
        s->v[s->n++] = v;
        return KNUT_EXIT_OK;
    }
    case KNUT_CLI_INT: {
        int64_t n;
        if (parse_int(v, &n) != 0 || n < o->min || n > o->max)
            return bad_value(p, o, v);
        *(int64_t *)dest = n;
        return KNUT_EXIT_OK;
    }
    case KNUT_CLI_SECS: {
        double d;
        if (parse_secs(v, &d) != 0 || !(d > 0) || d > (double)o->max)
            return bad_value(p, o, v);
        *(double *)dest = d;
        return KNUT_EXIT_OK;
    }
    case KNUT_CLI_CHOICE:
        for (int i = 0; o->choices[i]; i++) {
            if (strcmp(o->choices[i], v) == 0) {
                *(int *)dest = i;
                return KNUT_EXIT_OK;
            }
        }
        return bad_value(p, o, v);
    default:
        return fail(p, "--%s: not an option with a value", o->name); /* a table bug */
    }
}

/* ---- argv ---------------------------------------------------------------- */

/* -h or --help before a "--": the help wins over any error in argv, so
 * `knut X --bogus --help` still helps. */
static int wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    }
    return 0;
}

/* The option named name[0..n) in the table, whether spec accepts it or
 * not (the caller tells the two apart). */
static const knut_cli_opt *find_long(const knut_cli_spec *spec, const char *name, size_t n)
{
    for (const knut_cli_opt *o = spec->opts; o && o->name; o++)
        if (strlen(o->name) == n && strncmp(o->name, name, n) == 0)
            return o;
    return NULL;
}

static const knut_cli_opt *find_short(const knut_cli_spec *spec, char c)
{
    for (const knut_cli_opt *o = spec->opts; o && o->name; o++)
        if (o->alias && o->alias == c && accepts(spec, o))
            return o;
    return NULL;
}

static int positional(const parser *p, int *npos, const char *a)
{
    const knut_cli_arg *args = p->spec->args;
    int total = 0;
    while (args && args[total].name)
        total++;
    if (*npos < total) {
        const char *const *c = args[*npos].choices;
        while (c && *c && strcmp(*c, a) != 0)
            c++;
        if (c && !*c) {
            char need[256];
            return fail(p, "%s must be %s, not '%.40s'", args[*npos].name,
                        one_of(args[*npos].choices, need, sizeof need), a);
        }
        *(const char **)(p->args + args[*npos].at) = a;
        ++*npos;
        return KNUT_EXIT_OK;
    }
    const char *hint = p->spec->more_hint;
    if (total == 1)
        return fail(p, "more than one %s argument ('%.40s')%s%s", args[0].name, a,
                    hint ? "; " : "", hint ? hint : "");
    return fail(p, "unexpected argument '%.40s'%s%s", a, hint ? "; " : "", hint ? hint : "");
}

/* One option at argv[*i] (advanced past its value). */
static int option(const parser *p, int argc, char **argv, int *i)
{
    char *a = argv[*i], *value = NULL;
    const knut_cli_opt *o;
    size_t n;
    if (a[1] == '-') {
        const char *name = a + 2;
        char *eq = strchr(name, '=');
        n = eq ? (size_t)(eq - name) : strlen(name);
        if (eq)
            value = eq + 1;
        if ((o = find_long(p->spec, name, n)) && !accepts(p->spec, o))
            /* another form of the command takes it (`knut sync status --once`) */
            return fail(p, "--%s is not an option of knut %s", o->name, p->spec->name);
        if (!o) {
            const char *near = suggest(p->spec, name, n);
            if (near)
                return fail(p, "unknown option --%.*s (did you mean --%s?)", (int)n, name, near);
            return fail(p, "unknown option --%.*s", (int)n, name);
        }
        if (o->kind == KNUT_CLI_FLAG && value)
            return fail(p, "--%s takes no value ('%.40s')", o->name, a);
    } else {
        if (a[2] != '\0' || !(o = find_short(p->spec, a[1])))
            return fail(p, "unknown option %.40s", a);
    }
    if (o->kind == KNUT_CLI_REFUSE)
        return fail(p, "%s", o->help);
    if (o->kind == KNUT_CLI_FLAG) {
        *(int *)(p->args + o->at) = 1;
        return KNUT_EXIT_OK;
    }
    /* The next argument is the value whatever it looks like, so values
     * such as "-1" or "-" need no "=". */
    if (!value && *i + 1 < argc)
        value = argv[++*i];
    return store(p, o, value);
}

int knut_cli_args_parse_to(const knut_cli_spec *spec, int argc, char **argv, void *args,
                           FILE *out, FILE *err)
{
    parser p = {spec, args, err};
    if (wants_help(argc, argv)) {
        knut_cli_args_usage(out, spec);
        return KNUT_EXIT_OK;
    }
    int npos = 0, options_done = 0;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        int rc;
        if (!options_done && strcmp(a, "--") == 0) {
            options_done = 1;
            continue;
        }
        if (options_done || a[0] != '-' || a[1] == '\0') /* "-" is stdin */
            rc = positional(&p, &npos, a);
        else
            rc = option(&p, argc, argv, &i);
        if (rc != KNUT_EXIT_OK)
            return rc;
    }
    for (const knut_cli_arg *x = spec->args; x && x->name; x++, npos--)
        if (npos <= 0 && !x->optional)
            return fail(&p, "missing %s", x->name);
    return KNUT_CLI_RUN;
}

int knut_cli_args_parse(const knut_cli_spec *spec, int argc, char **argv, void *args)
{
    return knut_cli_args_parse_to(spec, argc, argv, args, stdout, stderr);
}

/* ---- help ---------------------------------------------------------------- */

/* Writes text from column `col` (the cursor is there), wrapping words at
 * HELP_WIDTH; a '\n' starts a new line, whose leading spaces indent it and
 * its continuation lines. Spaces between words on one line are kept, so
 * the text may align columns of its own. */
static void wrap(FILE *f, const char *text, int col)
{
    const char *s = text;
    while (*s) {
        const char *end = s + strcspn(s, "\n");
        int lead = (int)strspn(s, " ");
        int at = col + lead;
        fprintf(f, "%*s", lead, "");
        int gap = 0; /* the spaces before the next word */
        for (const char *w = s + lead; w < end;) {
            const char *we = w + strcspn(w, " \n");
            int len = (int)((we < end ? we : end) - w);
            if (at > col + lead && at + gap + len > HELP_WIDTH) {
                fprintf(f, "\n%*s", col + lead, "");
                at = col + lead;
            } else {
                fprintf(f, "%*s", gap, "");
                at += gap;
            }
            fprintf(f, "%.*s", len, w);
            at += len;
            w += len;
            gap = (int)strspn(w, " ");
            w += gap;
        }
        fputc('\n', f);
        s = *end ? end + 1 : end;
        if (*s)
            fprintf(f, "%*s", col, "");
    }
}

static void usage_opt(FILE *f, int col, char alias, const char *name, const char *metavar,
                      const char *help)
{
    char left[96];
    const char *sp = metavar ? " " : "", *mv = metavar ? metavar : "";
    /* "  --db FILE": no gap where a short name would be. */
    int n = alias ? snprintf(left, sizeof left, "  -%c, --%s%s%s", alias, name, sp, mv)
                  : snprintf(left, sizeof left, "  --%s%s%s", name, sp, mv);
    if (!help || !*help)
        fprintf(f, "%s\n", left);
    else if (n + 2 > col)
        fprintf(f, "%s\n%*s", left, col, "");
    else
        fprintf(f, "%-*s", col, left);
    if (help && *help)
        wrap(f, help, col);
}

void knut_cli_args_usage(FILE *f, const knut_cli_spec *spec)
{
    int col = spec->col > 0 ? spec->col : HELP_COL;
    fputs(spec->synopsis, f);
    if (spec->about) {
        fputc('\n', f);
        fputs(spec->about, f);
    }
    if (spec->opts) {
        fputs("\nOptions:\n", f);
        for (const knut_cli_opt *o = spec->opts; o->name; o++)
            if (knut_cli_args_listed(spec, o))
                usage_opt(f, col, o->alias, o->name, o->metavar, o->help);
        usage_opt(f, col, 'h', "help", NULL, "show this help");
    }
    if (spec->epilog) {
        fputc('\n', f);
        fputs(spec->epilog, f);
    }
}
