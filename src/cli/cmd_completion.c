/*
 * `knut completion bash|zsh`: prints a completion script written from the
 * command tree (tree.c), i.e. from the same tables that parse argv and
 * print --help. The script is four lookup functions (the words after a
 * command, its options, what an option's value is, what a positional
 * argument is), one walk over the typed words shared by both shells, and
 * a small driver per shell: bash fills COMPREPLY, zsh calls compadd.
 */
#include "cli.h"

#include <string.h>

#include "knut/knut.h"

typedef struct completion_args {
    const char *shell;
} completion_args;

static const char *const shells[] = {"bash", "zsh", NULL};

static const knut_cli_arg completion_pos[] = {
    KNUT_CLI_ARG_CHOICE("SHELL", completion_args, shell, shells),
    KNUT_CLI_ARG_END,
};

const knut_cli_spec knut_cmd_completion_spec = {
    .name = "completion",
    .synopsis = "usage: knut completion bash|zsh\n",
    .about = "Prints a completion script for bash or zsh: sub-commands (also nested ones,\n"
             "such as 'knut gar info' and 'knut sync status'), options, the values of\n"
             "options with a fixed set of them, and file and folder arguments. It is\n"
             "written from the tables that print each command's --help, so it knows\n"
             "exactly the options --help lists.\n",
    .args = completion_pos,
    .epilog = "Install (the .deb and 'cmake --install' do this; docs/install.md):\n"
              "  knut completion bash > /usr/share/bash-completion/completions/knut\n"
              "  knut completion zsh > /usr/share/zsh/vendor-completions/_knut\n"
              "Or for this shell only:\n"
              "  source <(knut completion bash)\n"
              "\n"
              "Exit codes: 0 ok, 2 usage error (docs/cli.md).\n",
};

/* Which lookup function a walk over the tree writes the cases of. */
typedef enum table_kind { TABLE_WORDS, TABLE_OPTS, TABLE_VALUE, TABLE_ARG } table_kind;

typedef struct writer {
    FILE *f;
    table_kind kind;
    int first; /* no word written yet on this line */
} writer;

static void put_word(const char *word, const char *summary, void *ctx)
{
    writer *w = ctx;
    fprintf(w->f, "%s%s", w->first ? "" : " ", word);
    w->first = 0;
}

/* What the shell offers for a value: "words A B" (a fixed set), "file",
 * "dir", or "none" (any text: nothing to offer). */
static void put_kind(FILE *f, const char *const *choices, const char *metavar)
{
    char kind = knut_cli_tree_value_kind(metavar);
    if (choices) {
        fputs("words", f);
        for (const char *const *c = choices; *c; c++)
            fprintf(f, " %s", *c);
    } else {
        fputs(kind == 'f' ? "file" : kind == 'd' ? "dir" : "none", f);
    }
}

static void put_words(writer *w, const knut_cli_node *n)
{
    writer line = {w->f, w->kind, 1};
    fprintf(w->f, "    '%s') echo '", n->path);
    knut_cli_tree_children(n, put_word, &line);
    fputs("' ;;\n", w->f);
}

static void put_opts(writer *w, const knut_cli_node *n)
{
    fprintf(w->f, "    '%s') echo '", n->path);
    for (const knut_cli_opt *o = n->spec ? n->spec->opts : NULL; o && o->name; o++) {
        if (!knut_cli_args_listed(n->spec, o))
            continue;
        fprintf(w->f, "--%s ", o->name);
        if (o->alias)
            fprintf(w->f, "-%c ", o->alias);
    }
    fputs("--help -h' ;;\n", w->f);
}

static void put_values(writer *w, const knut_cli_node *n)
{
    for (const knut_cli_opt *o = n->spec ? n->spec->opts : NULL; o && o->name; o++) {
        if (!knut_cli_args_listed(n->spec, o) || o->kind == KNUT_CLI_FLAG)
            continue;
        fprintf(w->f, "    '%s --%s'", n->path, o->name);
        if (o->alias)
            fprintf(w->f, "|'%s -%c'", n->path, o->alias);
        fputs(") echo '", w->f);
        put_kind(w->f, o->kind == KNUT_CLI_CHOICE ? o->choices : NULL, o->metavar);
        fputs("' ;;\n", w->f);
    }
}

static void put_args(writer *w, const knut_cli_node *n)
{
    int i = 0;
    for (const knut_cli_arg *a = n->spec ? n->spec->args : NULL; a && a->name; a++, i++) {
        fprintf(w->f, "    '%s %d') echo '", n->path, i);
        /* `knut help` and `knut man` name a command, word by word */
        if (strcmp(a->name, "COMMAND") == 0 || strcmp(a->name, "SUBCOMMAND") == 0)
            fputs("command", w->f);
        else
            put_kind(w->f, a->choices, a->name);
        fputs("' ;;\n", w->f);
    }
}

static void put_case(const knut_cli_node *n, void *ctx)
{
    writer *w = ctx;
    switch (w->kind) {
    case TABLE_WORDS:
        if (n->group || (n->spec && n->spec->subs))
            put_words(w, n);
        break;
    case TABLE_OPTS:
        put_opts(w, n);
        break;
    case TABLE_VALUE:
        put_values(w, n);
        break;
    case TABLE_ARG:
        put_args(w, n);
        break;
    }
}

static void put_top(const knut_cli_node *n, void *ctx)
{
    writer *w = ctx;
    if (!strchr(n->path, ' '))
        put_word(n->path, n->summary, w);
}

static void put_table(FILE *f, table_kind kind, const char *fn, const char *why)
{
    writer w = {f, kind, 1};
    fprintf(f, "\n# %s\n%s() {\n    case \"$*\" in\n", why, fn);
    if (kind == TABLE_WORDS) {
        fputs("    '') echo '", f);
        knut_cli_tree_walk(put_top, &w);
        fputs("' ;;\n", f);
    }
    if (kind == TABLE_OPTS) /* main.c's own */
        fputs("    '') echo '--help -h --version -V' ;;\n", f);
    knut_cli_tree_walk(put_case, &w);
    fputs("    esac\n}\n", f);
}

/* The walk over the typed words: plain sh that bash and zsh both run. */
static const char walk[] =
    "\n"
    "# _knut_want CUR WORD...: what the word being completed (CUR) can be, after\n"
    "# the WORDs typed before it (knut left out): 'words W...', 'file', 'dir' or\n"
    "# 'none'. The leading words that are sub-commands make the command; an\n"
    "# option that takes a value eats the next word ('=' is a word of its own in\n"
    "# bash). (No variable is called path, argv or words: zsh's own.)\n"
    "_knut_want() {\n"
    "    local cur=$1 cmd='' opt='' given='' ngiven=0 w kind subs\n"
    "    shift\n"
    "    while [ $# -gt 0 ]; do\n"
    "        case \" $(_knut_words \"$cmd\") \" in\n"
    "        *\" $1 \"*) cmd=${cmd:+$cmd }$1; shift ;;\n"
    "        *) break ;;\n"
    "        esac\n"
    "    done\n"
    "    for w in \"$@\"; do\n"
    "        [ \"$w\" = = ] && continue\n"
    "        if [ -n \"$opt\" ]; then opt=''; continue; fi\n"
    "        case $w in\n"
    "        -*=*) ;;\n"
    "        -?*) [ \"$(_knut_value \"$cmd\" \"$w\")\" ] && opt=$w ;;\n"
    "        *) given=${given:+$given }$w; ngiven=$((ngiven + 1)) ;;\n"
    "        esac\n"
    "    done\n"
    "    if [ -n \"$opt\" ]; then _knut_value \"$cmd\" \"$opt\"; return; fi\n"
    "    case $cur in -*) echo \"words $(_knut_opts \"$cmd\")\"; return ;; esac\n"
    "    subs=$(_knut_words \"$cmd\")\n"
    "    if [ -n \"$subs\" ] && [ $ngiven = 0 ]; then echo \"words $subs\"; return; fi\n"
    "    kind=$(_knut_arg \"$cmd\" $ngiven)\n"
    "    case $kind in\n"
    "    command) echo \"words $(_knut_words \"$given\")\" ;;\n"
    "    *) echo \"${kind:-none}\" ;;\n"
    "    esac\n"
    "}\n";

static const char bash_driver[] =
    "\n"
    "_knut() {\n"
    "    local cur=${COMP_WORDS[COMP_CWORD]} want\n"
    "    local -a before=(\"${COMP_WORDS[@]:1:COMP_CWORD-1}\")\n"
    "    [ \"$cur\" = = ] && cur=''\n"
    "    want=$(_knut_want \"$cur\" \"${before[@]}\")\n"
    "    COMPREPLY=()\n"
    "    case $want in\n"
    "    words*) mapfile -t COMPREPLY < <(compgen -W \"${want#words}\" -- \"$cur\") ;;\n"
    "    file) compopt -o filenames 2>/dev/null\n"
    "          mapfile -t COMPREPLY < <(compgen -f -- \"$cur\") ;;\n"
    "    dir) compopt -o filenames 2>/dev/null\n"
    "         mapfile -t COMPREPLY < <(compgen -d -- \"$cur\") ;;\n"
    "    esac\n"
    "}\n"
    "complete -F _knut knut\n";

/* zsh keeps "--opt=value" one word: the value is completed after the '='
 * (compset), and the option goes to the walk as the word before it. */
static const char zsh_driver[] =
    "\n"
    "_knut() {\n"
    "    local cur=${words[CURRENT]} want\n"
    "    local -a before\n"
    "    before=(\"${(@)words[2,CURRENT-1]}\")\n"
    "    if [[ $cur == -*=* ]]; then\n"
    "        before+=(\"${cur%%=*}\")\n"
    "        compset -P '*='\n"
    "        cur=${cur#*=}\n"
    "    fi\n"
    "    want=$(_knut_want \"$cur\" \"${before[@]}\")\n"
    "    case $want in\n"
    "    words*) local -a w; w=(${=want#words}); compadd -- \"${w[@]}\" ;;\n"
    "    file) _files ;;\n"
    "    dir) _files -/ ;;\n"
    "    *) return 1 ;;\n"
    "    esac\n"
    "}\n"
    "\n"
    "if [ \"${funcstack[1]}\" = _knut ]; then\n"
    "    _knut \"$@\"\n"
    "else\n"
    "    compdef _knut knut\n"
    "fi\n";

int knut_cmd_completion(int argc, char **argv)
{
    completion_args a = {0};
    int rc = knut_cli_args_parse(&knut_cmd_completion_spec, argc, argv, &a);
    if (rc != KNUT_CLI_RUN)
        return rc;
    int zsh = strcmp(a.shell, "zsh") == 0;
    FILE *f = stdout;
    if (zsh)
        fputs("#compdef knut\n", f);
    fprintf(f,
            "# %s completion for knut %s, written by 'knut completion %s' from the\n"
            "# tables that print each command's --help (docs/install.md).\n",
            a.shell, KNUT_VERSION, a.shell);
    put_table(f, TABLE_WORDS, "_knut_words",
              "_knut_words PATH: the sub-commands or forms that may follow PATH");
    put_table(f, TABLE_OPTS, "_knut_opts", "_knut_opts PATH: the options of PATH");
    put_table(f, TABLE_VALUE, "_knut_value",
              "_knut_value PATH OPTION: what the option's value is (nothing: a flag)");
    put_table(f, TABLE_ARG, "_knut_arg",
              "_knut_arg PATH N: what the N-th argument (from 0) is");
    fputs(walk, f);
    fputs(zsh ? zsh_driver : bash_driver, f);
    return fflush(f) == 0 ? KNUT_EXIT_OK : KNUT_EXIT_FAIL;
}
