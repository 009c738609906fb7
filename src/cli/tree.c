/*
 * The command tree as a user types it, walked from the tables that parse
 * argv and print --help (main.c's commands, the groups' sub-commands, the
 * forms a spec lists in subs). `knut completion` and `knut man` read the
 * commands only through this walk, so a new command or option is in the
 * completion and the man pages as soon as it is in its table.
 */
#include "cli.h"

#include <string.h>

void knut_cli_tree_walk(knut_cli_node_fn fn, void *ctx)
{
    size_t n;
    const knut_cli_cmd *cmds = knut_cli_commands(&n);
    for (size_t i = 0; i < n; i++) {
        const knut_cli_cmd *c = &cmds[i];
        knut_cli_node top = {c->name, c->summary, c->spec, c->group};
        fn(&top, ctx);
        /* a group's sub-commands and a command's forms carry their full
         * names ("gar info", "sync status") in their specs */
        for (const knut_cli_sub *s = c->group ? c->group->subs : NULL; s && s->name; s++) {
            knut_cli_node sub = {s->spec->name, s->summary, s->spec, NULL};
            fn(&sub, ctx);
        }
        for (const knut_cli_spec *const *f = c->spec ? c->spec->subs : NULL; f && *f; f++) {
            knut_cli_node form = {(*f)->name, (*f)->summary, *f, NULL};
            fn(&form, ctx);
        }
    }
}

void knut_cli_tree_children(const knut_cli_node *node,
                            void (*fn)(const char *word, const char *summary, void *ctx),
                            void *ctx)
{
    for (const knut_cli_sub *s = node->group ? node->group->subs : NULL; s && s->name; s++)
        fn(s->name, s->summary, ctx);
    for (const knut_cli_spec *const *f = node->spec ? node->spec->subs : NULL; f && *f; f++) {
        const char *sp = strrchr((*f)->name, ' ');
        fn(sp ? sp + 1 : (*f)->name, (*f)->summary, ctx);
    }
}

/* The tables name their values for the help ("FILE", "DIR", "URL"); a
 * shell can only complete the ones that are paths. */
char knut_cli_tree_value_kind(const char *metavar)
{
    static const char *const files[] = {"FILE", "PATH", "PEM", "SPEC", "TABLE", "F", NULL};
    if (!metavar)
        return 0;
    if (strcmp(metavar, "DIR") == 0)
        return 'd';
    for (size_t i = 0; files[i]; i++)
        if (strcmp(metavar, files[i]) == 0)
            return 'f';
    return 0;
}
