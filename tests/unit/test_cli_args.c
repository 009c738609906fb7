/*
 * The CLI option parser (src/cli/args.c): the forms of options and values,
 * "--" and "-", repeated options in order, every usage error (naming the
 * option, with a "did you mean"), and the help written from the table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/cli.h"

/* The end of every usage error: one line, then where the help is. */
#define SEE "; see 'knut t --help'\n"

typedef struct t_args {
    const char *db, *path, *more;
    int verbose, format;
    int64_t rows;
    double wait;
    knut_cli_strs set;
} t_args;

static const char *const colours[] = {"red", "green", "blue", NULL};

static const knut_cli_opt t_opts[] = {
    KNUT_CLI_OPT_STR("db", 0, t_args, db, "FILE", "database file"),
    KNUT_CLI_OPT_FLAG("verbose", 'v', t_args, verbose, "say more"),
    KNUT_CLI_OPT_CHOICE("format", 'f', t_args, format, "FMT", colours,
                        "red    the first\ngreen  the second"),
    KNUT_CLI_OPT_INT("max-rows", 0, t_args, rows, "N", 0, 100,
                     "show at most N rows, a help text long enough to be wrapped onto a "
                     "second line by the usage writer"),
    KNUT_CLI_OPT_SECS("wait", t_args, wait, 60, "wait this long"),
    KNUT_CLI_OPT_STRS("set", 's', t_args, set, "K=V", 3, "a setting (repeatable)"),
    KNUT_CLI_OPT_REFUSE("password", "no password on the command line"),
    KNUT_CLI_OPT_END,
};

static const knut_cli_arg t_pos[] = {
    KNUT_CLI_ARG("PATH", t_args, path),
    KNUT_CLI_ARG_OPT("MORE", t_args, more),
    KNUT_CLI_ARG_END,
};

static const knut_cli_spec t_spec = {
    .name = "t",
    .synopsis = "usage: knut t [OPTIONS] PATH [MORE]\n",
    .about = "A test command.\n",
    .opts = t_opts,
    .args = t_pos,
    .epilog = "Exit status: 0 ok.\n",
    .more_hint = "quote it",
};

/* What one parse printed and returned. */
typedef struct run {
    int rc;
    char *out, *err;
    size_t nout, nerr;
    t_args a;
    char *argv[32]; /* writable copies; the values point into them */
} run;

/* The spec parse() uses: t_spec unless a test sets another. */
static const knut_cli_spec *spec_now = &t_spec;

/* Parses the NULL-terminated words, after argv[0] = "t". */
static void parse(run *r, ...)
{
    int argc = 0;
    va_list ap;
    memset(r, 0, sizeof *r);
    r->argv[argc++] = strdup("t");
    va_start(ap, r);
    for (const char *w; (w = va_arg(ap, const char *)) != NULL && argc < 31;)
        r->argv[argc++] = strdup(w);
    va_end(ap);
    r->a.format = -1;
    FILE *out = open_memstream(&r->out, &r->nout), *err = open_memstream(&r->err, &r->nerr);
    assert_non_null(out);
    assert_non_null(err);
    r->rc = knut_cli_args_parse_to(spec_now, argc, r->argv, &r->a, out, err);
    fclose(out);
    fclose(err);
}

static void done(run *r)
{
    free(r->out);
    free(r->err);
    for (int i = 0; r->argv[i]; i++)
        free(r->argv[i]);
}

static void test_values_with_space_and_equals(void **state)
{
    (void)state;
    run r;
    parse(&r, "--db", "a.db", "--max-rows=7", "-f", "green", "--wait", "1.5", "p", NULL);
    assert_int_equal(r.rc, KNUT_CLI_RUN);
    assert_string_equal(r.a.db, "a.db");
    assert_int_equal(r.a.rows, 7);
    assert_int_equal(r.a.format, 1);
    assert_true(r.a.wait == 1.5);
    assert_string_equal(r.a.path, "p");
    assert_null(r.a.more);
    assert_string_equal(r.err, "");
    done(&r);

    /* "=" keeps the rest, "=" included; an empty value is a value. */
    parse(&r, "--db=x=y", "p", "--format=blue", NULL);
    assert_int_equal(r.rc, KNUT_CLI_RUN);
    assert_string_equal(r.a.db, "x=y");
    assert_int_equal(r.a.format, 2);
    done(&r);
    parse(&r, "--db=", "p", NULL);
    assert_int_equal(r.rc, KNUT_CLI_RUN);
    assert_string_equal(r.a.db, "");
    done(&r);

    /* The next word is the value whatever it looks like. */
    parse(&r, "--db", "-v", "--set", "-", "p", NULL);
    assert_int_equal(r.rc, KNUT_CLI_RUN);
    assert_string_equal(r.a.db, "-v");
    assert_int_equal(r.a.verbose, 0);
    assert_string_equal(r.a.set.v[0], "-");
    done(&r);
}

static void test_repeated_options(void **state)
{
    (void)state;
    run r;
    parse(&r, "-s", "a=1", "--set", "b=2", "p", "--set=c=3", "-v", "--verbose", "--db", "one",
          "--db", "two", NULL);
    assert_int_equal(r.rc, KNUT_CLI_RUN);
    assert_int_equal(r.a.set.n, 3);
    assert_string_equal(r.a.set.v[0], "a=1");
    assert_string_equal(r.a.set.v[1], "b=2");
    assert_string_equal(r.a.set.v[2], "c=3");
    assert_int_equal(r.a.verbose, 1);
    assert_string_equal(r.a.db, "two"); /* the last one wins */
    done(&r);

    parse(&r, "-s", "a", "-s", "b", "-s", "c", "-s", "d", "p", NULL);
    assert_int_equal(r.rc, KNUT_EXIT_USAGE);
    assert_non_null(strstr(r.err, "knut t: --set may be given at most 3 times" SEE));
    done(&r);
}

static void test_dash_dash_and_dash(void **state)
{
    (void)state;
    run r;
    parse(&r, "-", NULL);
    assert_int_equal(r.rc, KNUT_CLI_RUN);
    assert_string_equal(r.a.path, "-");
    done(&r);

    parse(&r, "-v", "--", "--db", "-h", NULL);
    assert_int_equal(r.rc, KNUT_CLI_RUN); /* -h after "--" is an argument, not help */
    assert_int_equal(r.a.verbose, 1);
    assert_null(r.a.db);
    assert_string_equal(r.a.path, "--db");
    assert_string_equal(r.a.more, "-h");
    assert_string_equal(r.out, "");
    done(&r);

    parse(&r, "--", "--", NULL); /* only the first "--" ends the options */
    assert_int_equal(r.rc, KNUT_CLI_RUN);
    assert_string_equal(r.a.path, "--");
    done(&r);
}

static void test_missing_value_and_arguments(void **state)
{
    (void)state;
    run r;
    parse(&r, "p", "--db", NULL);
    assert_int_equal(r.rc, KNUT_EXIT_USAGE);
    /* one line: what is wrong, and where the help is */
    assert_string_equal(r.err, "knut t: --db needs a value (FILE)" SEE);
    assert_string_equal(r.out, "");
    done(&r);

    parse(&r, "p", "--max-rows", NULL);
    assert_int_equal(r.rc, KNUT_EXIT_USAGE);
    assert_non_null(strstr(r.err, "knut t: --max-rows needs a whole number from 0 to 100" SEE));
    done(&r);

    parse(&r, "-v", NULL);
    assert_int_equal(r.rc, KNUT_EXIT_USAGE);
    assert_non_null(strstr(r.err, "knut t: missing PATH" SEE));
    done(&r);

    parse(&r, "a", "b", "c", NULL);
    assert_int_equal(r.rc, KNUT_EXIT_USAGE);
    assert_non_null(strstr(r.err, "knut t: unexpected argument 'c'; quote it" SEE));
    done(&r);
}

static void test_bad_numbers_and_choices(void **state)
{
    (void)state;
    static const char *bad_int[] = {"abc", "5x", " 5", "", "101", "-1", "1e2", "0x10",
                                    "99999999999999999999"};
    run r;
    for (size_t i = 0; i < sizeof bad_int / sizeof bad_int[0]; i++) {
        parse(&r, "--max-rows", bad_int[i], "p", NULL);
        assert_int_equal(r.rc, KNUT_EXIT_USAGE);
        char want[128];
        snprintf(want, sizeof want,
                 "knut t: --max-rows needs a whole number from 0 to 100, not '%s'" SEE,
                 bad_int[i]);
        assert_non_null(strstr(r.err, want));
        done(&r);
    }
    parse(&r, "--max-rows", "+100", "p", NULL);
    assert_int_equal(r.rc, KNUT_CLI_RUN);
    assert_int_equal(r.a.rows, 100);
    done(&r);

    static const char *bad_secs[] = {"0", "-1", "61", "nan", "inf", "x", "", " 1", "1s"};
    for (size_t i = 0; i < sizeof bad_secs / sizeof bad_secs[0]; i++) {
        parse(&r, "--wait", bad_secs[i], "p", NULL);
        assert_int_equal(r.rc, KNUT_EXIT_USAGE);
        assert_non_null(strstr(r.err, "knut t: --wait needs seconds > 0 (at most 60), not '"));
        done(&r);
    }

    parse(&r, "-f", "pink", "p", NULL);
    assert_int_equal(r.rc, KNUT_EXIT_USAGE);
    assert_non_null(
        strstr(r.err, "knut t: --format needs one of red, green, blue, not 'pink'" SEE));
    done(&r);
}

static void test_unknown_options(void **state)
{
    (void)state;
    run r;
    parse(&r, "--max-row", "5", "p", NULL);
    assert_int_equal(r.rc, KNUT_EXIT_USAGE);
    assert_non_null(
        strstr(r.err, "knut t: unknown option --max-row (did you mean --max-rows?)" SEE));
    done(&r);

    parse(&r, "--fromat=red", "p", NULL); /* a swap, and the value is not shown */
    assert_non_null(strstr(r.err, "unknown option --fromat (did you mean --format?)" SEE));
    done(&r);

    parse(&r, "--verb", "p", NULL); /* the beginning of exactly one option */
    assert_non_null(strstr(r.err, "unknown option --verb (did you mean --verbose?)" SEE));
    done(&r);

    parse(&r, "--hepl", NULL);
    assert_non_null(strstr(r.err, "unknown option --hepl (did you mean --help?)" SEE));
    done(&r);

    parse(&r, "--bogus", "p", NULL);
    assert_int_equal(r.rc, KNUT_EXIT_USAGE);
    assert_non_null(strstr(r.err, "knut t: unknown option --bogus" SEE));
    done(&r);

    parse(&r, "--passwords", "p", NULL); /* a refused option is never suggested */
    assert_non_null(strstr(r.err, "knut t: unknown option --passwords" SEE));
    done(&r);

    /* Short options take no attached value and do not cluster. */
    parse(&r, "-fred", "p", NULL);
    assert_non_null(strstr(r.err, "knut t: unknown option -fred" SEE));
    done(&r);
    parse(&r, "-x", "p", NULL);
    assert_non_null(strstr(r.err, "knut t: unknown option -x" SEE));
    done(&r);

    parse(&r, "--verbose=yes", "p", NULL);
    assert_int_equal(r.rc, KNUT_EXIT_USAGE);
    assert_non_null(strstr(r.err, "knut t: --verbose takes no value ('--verbose=yes')" SEE));
    done(&r);

    parse(&r, "--password", "x", "p", NULL);
    assert_int_equal(r.rc, KNUT_EXIT_USAGE);
    assert_non_null(strstr(r.err, "knut t: no password on the command line" SEE));
    done(&r);
}

static void test_help(void **state)
{
    (void)state;
    run r;
    /* Help wins wherever it is before "--", even after an error. */
    parse(&r, "--bogus", "--max-rows", "x", "-h", NULL);
    assert_int_equal(r.rc, KNUT_EXIT_OK);
    assert_string_equal(r.err, "");
    assert_string_equal(
        r.out,
        "usage: knut t [OPTIONS] PATH [MORE]\n"
        "\n"
        "A test command.\n"
        "\n"
        "Options:\n"
        "  --db FILE          database file\n"
        "  -v, --verbose      say more\n"
        "  -f, --format FMT   red    the first\n"
        "                     green  the second\n"
        "  --max-rows N       show at most N rows, a help text long enough to be wrapped\n"
        "                     onto a second line by the usage writer\n"
        "  --wait SEC         wait this long\n"
        "  -s, --set K=V      a setting (repeatable)\n"
        "  -h, --help         show this help\n"
        "\n"
        "Exit status: 0 ok.\n");
    char *copy = strdup(r.out);
    for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n"))
        assert_true(strlen(line) <= 79);
    free(copy);
    done(&r);

    parse(&r, "--help", NULL);
    assert_int_equal(r.rc, KNUT_EXIT_OK);
    assert_non_null(strstr(r.out, "Options:\n"));
    done(&r);
}

static void test_long_option_names_get_their_own_line(void **state)
{
    (void)state;
    static const knut_cli_opt opts[] = {
        KNUT_CLI_OPT_STR("a-rather-long-option", 0, t_args, db, "FILE", "its help"),
        KNUT_CLI_OPT_FLAG("empty", 0, t_args, verbose, ""),
        KNUT_CLI_OPT_END,
    };
    static const knut_cli_spec spec = {.name = "l", .synopsis = "usage: knut l\n", .opts = opts,
                                       .col = 12};
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    assert_non_null(f);
    knut_cli_args_usage(f, &spec);
    fclose(f);
    assert_string_equal(text, "usage: knut l\n"
                              "\n"
                              "Options:\n"
                              "  --a-rather-long-option FILE\n"
                              "            its help\n"
                              "  --empty\n"
                              "  -h, --help\n"
                              "            show this help\n");
    free(text);
}

/* A form of a command sharing its table (`sync status`): only its options
 * parse and show; another of the table's is refused naming the form. */
static void test_forms_sharing_a_table(void **state)
{
    (void)state;
    static const knut_cli_spec sub = {.name = "t sub", .synopsis = "usage: knut t sub\n",
                                      .opts = t_opts, .args = t_pos, .only = "db verbose"};
    static const knut_cli_spec main_form = {.name = "t", .synopsis = "usage: knut t\n",
                                            .opts = t_opts, .args = t_pos, .omit = "db"};
    run r;
    spec_now = &sub;
    parse(&r, "--db", "x", "-v", "p", NULL);
    assert_int_equal(r.rc, KNUT_CLI_RUN);
    assert_string_equal(r.a.db, "x");
    done(&r);
    parse(&r, "--max-rows", "3", "p", NULL);
    assert_int_equal(r.rc, KNUT_EXIT_USAGE);
    assert_string_equal(r.err, "knut t sub: --max-rows is not an option of knut t sub; see "
                               "'knut t sub --help'\n");
    done(&r);
    parse(&r, "-f", "red", "p", NULL); /* a short alias of another form's option */
    assert_int_equal(r.rc, KNUT_EXIT_USAGE);
    done(&r);
    parse(&r, "--verbos", "p", NULL); /* suggestions come from its own options */
    assert_non_null(strstr(r.err, "(did you mean --verbose?)"));
    done(&r);
    parse(&r, "--help", NULL);
    assert_int_equal(r.rc, KNUT_EXIT_OK);
    assert_non_null(strstr(r.out, "--db FILE"));
    assert_non_null(strstr(r.out, "--verbose"));
    assert_null(strstr(r.out, "--max-rows"));
    assert_null(strstr(r.out, "--format"));
    done(&r);
    spec_now = &main_form;
    parse(&r, "--db", "x", "p", NULL);
    assert_int_equal(r.rc, KNUT_EXIT_USAGE);
    assert_non_null(strstr(r.err, "--db is not an option of knut t;"));
    done(&r);
    parse(&r, "--max-rows", "3", "p", NULL);
    assert_int_equal(r.rc, KNUT_CLI_RUN);
    done(&r);
    spec_now = &t_spec;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_with_space_and_equals),
        cmocka_unit_test(test_repeated_options),
        cmocka_unit_test(test_dash_dash_and_dash),
        cmocka_unit_test(test_missing_value_and_arguments),
        cmocka_unit_test(test_bad_numbers_and_choices),
        cmocka_unit_test(test_unknown_options),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_long_option_names_get_their_own_line),
        cmocka_unit_test(test_forms_sharing_a_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
