/*
 * `knut man [COMMAND [SUBCOMMAND]]`: a man page in roff, written from the
 * command tree (tree.c), i.e. from the tables that print --help: knut(1),
 * then one page per command, group sub-command and form (knut-sync(1),
 * knut-gar-info(1), knut-sync-status(1)). `--output-dir DIR` writes them
 * all; the build does that with the built binary, and `cmake --install`
 * and the .deb ship the result (docs/install.md).
 */
#include "cli.h"

#include <errno.h>
#include <string.h>

#include "knut/knut.h"

typedef struct man_args {
    const char *command, *sub, *dir;
} man_args;

static const knut_cli_opt man_opts[] = {
    KNUT_CLI_OPT_STR("output-dir", 'o', man_args, dir, "DIR",
                     "write every page to DIR/knut*.1 instead (DIR must exist)"),
    KNUT_CLI_OPT_END,
};

static const knut_cli_arg man_pos[] = {
    KNUT_CLI_ARG_OPT("COMMAND", man_args, command),
    KNUT_CLI_ARG_OPT("SUBCOMMAND", man_args, sub),
    KNUT_CLI_ARG_END,
};

const knut_cli_spec knut_cmd_man_spec = {
    .name = "man",
    .synopsis = "usage: knut man [COMMAND [SUBCOMMAND]]\n"
                "       knut man --output-dir DIR\n",
    .about = "Prints the man page of knut, or of one command, in roff (the page\n"
             "'man knut-COMMAND' shows once installed), or writes all of them. The\n"
             "pages are written from the tables that print each command's --help:\n"
             "the same synopsis, description, options and examples.\n",
    .opts = man_opts,
    .args = man_pos,
    .epilog = "Examples:\n"
              "  knut man sync status | man -l -\n"
              "  knut man --output-dir /usr/local/share/man/man1\n"
              "\n"
              "Exit codes: 0 ok, 1 a page could not be written, 2 usage error (docs/cli.md).\n",
};

/* ---- roff ---------------------------------------------------------------- */

/* One character of text: backslashes and dashes escaped. */
static void esc_char(FILE *f, char c)
{
    if (c == '\\')
        fputs("\\e", f);
    else if (c == '-')
        fputs("\\-", f);
    else
        fputc(c, f);
}

/* A word or a few inside a line. */
static void esc(FILE *f, const char *s)
{
    for (; *s; s++)
        esc_char(f, *s);
}

/* Text as roff: escaped as esc, a line that would read as a request ('.'
 * or '\'' first) guarded, and in fill mode a blank line a new paragraph
 * and (breaks) a '\n' inside an option's help a line break. */
static void roff(FILE *f, const char *s, int fill, int breaks)
{
    int bol = 1;
    for (; *s; s++) {
        if (*s == '\n') {
            if (fill && s[1] == '\n') {
                fputs("\n.PP\n", f);
                s++;
            } else {
                fputs(breaks && s[1] ? "\n.br\n" : "\n", f);
            }
            bol = 1;
            continue;
        }
        if (bol && (*s == '.' || *s == '\''))
            fputs("\\&", f);
        bol = 0;
        esc_char(f, *s);
    }
    if (!bol)
        fputc('\n', f);
}

/* "knut-gar-info": the page of path ("" is knut itself). */
static void page_name(char *buf, size_t n, const char *path)
{
    snprintf(buf, n, "knut%s%s", *path ? "-" : "", path);
    for (char *c = buf; *c; c++)
        if (*c == ' ')
            *c = '-';
}

static void head(FILE *f, const char *path, const char *summary)
{
    char name[160];
    page_name(name, sizeof name, path);
    fputs(".TH \"", f);
    for (const char *c = name; *c; c++)
        fputc(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c, f);
    fprintf(f, "\" 1 \"\" \"knut %s\" \"knut manual\"\n.SH NAME\n", KNUT_VERSION);
    esc(f, name);
    fputs(" \\- ", f);
    esc(f, summary ? summary : "");
    fputc('\n', f);
}

/* The synopsis without its "usage: " (and the indent that lines up with it). */
static void synopsis(FILE *f, const char *text)
{
    static const char usage[] = "usage: ";
    fputs(".SH SYNOPSIS\n.nf\n", f);
    for (const char *s = text; *s;) {
        size_t len = strcspn(s, "\n");
        char line[512];
        size_t skip = strncmp(s, usage, sizeof usage - 1) == 0 ? sizeof usage - 1
                      : strspn(s, " ") >= sizeof usage - 1 ? sizeof usage - 1
                                                          : 0;
        snprintf(line, sizeof line, "%.*s\n", (int)(len - skip), s + skip);
        roff(f, line, 0, 0);
        s += len + (s[len] == '\n');
    }
    fputs(".fi\n", f);
}

static void option(FILE *f, char alias, const char *name, const char *metavar, const char *help)
{
    fputs(".TP\n\\fB", f);
    if (alias)
        fprintf(f, "\\-%c\\fR, \\fB", alias);
    fputs("\\-\\-", f);
    esc(f, name);
    fputs("\\fR", f);
    if (metavar) {
        fputs(" \\fI", f);
        esc(f, metavar);
        fputs("\\fR", f);
    }
    fputc('\n', f);
    roff(f, help, 1, 1);
}

typedef struct see_also {
    FILE *f;
    const char *path; /* the command whose sub-commands are listed */
} see_also;

static void command_item(const char *word, const char *summary, void *ctx)
{
    see_also *s = ctx;
    char path[128], name[160];
    snprintf(path, sizeof path, "%s%s%s", s->path, *s->path ? " " : "", word);
    page_name(name, sizeof name, path);
    fputs(".TP\n.B ", s->f);
    esc(s->f, word);
    fputc('\n', s->f);
    roff(s->f, summary, 1, 0);
    fputs("See \\fB", s->f);
    esc(s->f, name);
    fputs("\\fR(1).\n", s->f);
}

static void node_page(FILE *f, const knut_cli_node *n)
{
    const knut_cli_spec *sp = n->spec;
    head(f, n->path, n->summary);
    if (!sp) { /* a group: its sub-commands are the page */
        char line[160];
        snprintf(line, sizeof line, "knut %s COMMAND [ARGS]\n", n->path);
        synopsis(f, line);
        fputs(".SH DESCRIPTION\n", f);
        roff(f, n->group->about, 1, 0);
    } else {
        synopsis(f, sp->synopsis);
        if (sp->about) {
            fputs(".SH DESCRIPTION\n", f);
            roff(f, sp->about, 1, 0);
        }
        fputs(".SH OPTIONS\n", f);
        for (const knut_cli_opt *o = sp->opts; o && o->name; o++)
            if (knut_cli_args_listed(sp, o))
                option(f, o->alias, o->name, o->metavar, o->help);
        option(f, 'h', "help", NULL, "show this help");
    }
    see_also s = {f, n->path};
    if (n->group || (sp && sp->subs)) {
        fputs(".SH COMMANDS\n", f);
        knut_cli_tree_children(n, command_item, &s);
    }
    if (sp && sp->epilog) { /* examples and exit codes, laid out as in --help */
        fputs(".SH NOTES\n.nf\n", f);
        roff(f, sp->epilog, 0, 0);
        fputs(".fi\n", f);
    }
    char parent[128];
    snprintf(parent, sizeof parent, "%s", n->path);
    char *sp_at = strrchr(parent, ' ');
    fputs(".SH SEE ALSO\n\\fBknut\\fR(1)", f);
    if (sp_at) {
        *sp_at = '\0';
        char name[160];
        page_name(name, sizeof name, parent);
        fputs(", \\fB", f);
        esc(f, name);
        fputs("\\fR(1)", f);
    }
    fputs("\n", f);
}

/* knut(1): `knut --help` as the description, and every command. */
static void put_main(const knut_cli_node *n, void *ctx)
{
    if (strchr(n->path, ' '))
        return;
    see_also *s = ctx;
    command_item(n->path, n->summary, s);
}

static void main_page(FILE *f)
{
    head(f, "", "a lakehouse <-> property-graph data fabric");
    synopsis(f, "usage: knut [--version] [--help] COMMAND [ARGS]\n");
    fputs(".SH DESCRIPTION\n"
          "knut keeps a property graph in step with lakehouse tables; each command\n"
          "has a page of its own, and prints the same text with \\fB\\-\\-help\\fR.\n"
          ".SH COMMANDS\n",
          f);
    see_also s = {f, ""};
    knut_cli_tree_walk(put_main, &s);
    fputs(".SH ENVIRONMENT\n"
          ".TP\n.B KNUT_LOG\ntrace|debug|info|warn|error|off (default warn).\n"
          ".TP\n.B KNUT_LOG_FORMAT\njson|human (default: human on a terminal).\n"
          ".SH EXIT STATUS\n"
          "0 ok, 1 a data or runtime failure, 2 a usage or config error.\n",
          f);
}

/* ---- which page ---------------------------------------------------------- */

typedef struct finder {
    const char *path;
    const knut_cli_node *found;
    knut_cli_node copy;
} finder;

static void find_node(const knut_cli_node *n, void *ctx)
{
    finder *fd = ctx;
    if (!fd->found && strcmp(n->path, fd->path) == 0) {
        fd->copy = *n;
        fd->found = &fd->copy;
    }
}

typedef struct writer {
    const char *dir;
    int rc;
} writer;

static int write_page(const char *dir, const char *path, const knut_cli_node *n)
{
    char name[160], file[4096];
    page_name(name, sizeof name, path);
    snprintf(file, sizeof file, "%s/%s.1", dir, name);
    FILE *f = fopen(file, "w");
    if (!f) {
        fprintf(stderr, "knut man: %s: %s\n", file, strerror(errno));
        return KNUT_EXIT_FAIL;
    }
    if (n)
        node_page(f, n);
    else
        main_page(f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "knut man: %s: cannot write\n", file);
        return KNUT_EXIT_FAIL;
    }
    return KNUT_EXIT_OK;
}

static void write_node(const knut_cli_node *n, void *ctx)
{
    writer *w = ctx;
    if (w->rc == KNUT_EXIT_OK)
        w->rc = write_page(w->dir, n->path, n);
}

int knut_cmd_man(int argc, char **argv)
{
    man_args a = {0};
    int rc = knut_cli_args_parse(&knut_cmd_man_spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    if (a.dir) {
        if (a.command)
            return knut_cli_args_error(&knut_cmd_man_spec, "%s",
                                       "--output-dir writes every page: no COMMAND");
        writer w = {a.dir, write_page(a.dir, "", NULL)};
        knut_cli_tree_walk(write_node, &w);
        return w.rc;
    }
    if (!a.command) {
        main_page(stdout);
        return KNUT_EXIT_OK;
    }
    char path[128];
    snprintf(path, sizeof path, "%s%s%s", a.command, a.sub ? " " : "", a.sub ? a.sub : "");
    finder fd = {path, NULL, {0}};
    knut_cli_tree_walk(find_node, &fd);
    if (!fd.found)
        return knut_cli_args_error(&knut_cmd_man_spec, "no page for '%s' (see 'knut help')",
                                   path);
    node_page(stdout, fd.found);
    return KNUT_EXIT_OK;
}
