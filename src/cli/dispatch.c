/*
 * Sub-command dispatch shared by the command groups (`knut gar`,
 * `knut graph`): usage listing, help routing, unknown names. Each
 * sub-command parses its own options, --help included.
 */
#include "cli.h"

#include <string.h>

static void group_usage(FILE *f, const char *group, const char *about, const knut_cli_sub *subs)
{
    fprintf(f, "usage: knut %s COMMAND [ARGS]\n\n%s\n\nCommands:\n", group, about);
    for (const knut_cli_sub *s = subs; s->name; s++)
        fprintf(f, "  %-10s %s\n", s->name, s->summary);
    fprintf(f, "\nRun 'knut %s COMMAND --help' for one command.\n", group);
}

static const knut_cli_sub *find(const knut_cli_sub *subs, const char *name)
{
    for (const knut_cli_sub *s = subs; s->name; s++)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

int knut_cli_dispatch(const knut_cli_group *g, int argc, char **argv)
{
    const char *group = g->name, *about = g->about;
    const knut_cli_sub *subs = g->subs, *s;
    if (argc >= 3 && strcmp(argv[1], "help") == 0 && (s = find(subs, argv[2]))) {
        /* `knut GROUP help NAME` is `knut GROUP NAME --help`. */
        char help[] = "--help";
        char *sub_argv[] = {argv[2], help, NULL};
        return s->run(2, sub_argv);
    }
    if (argc < 2) { /* one line, as every usage error, naming the choices */
        fprintf(stderr, "knut %s: missing COMMAND (", group);
        for (s = subs; s->name; s++)
            fprintf(stderr, "%s%s", s == subs ? "" : ", ", s->name);
        fprintf(stderr, "); see 'knut %s --help'\n", group);
        return KNUT_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        (strcmp(argv[1], "help") == 0 && argc == 2)) {
        group_usage(stdout, group, about, subs);
        return KNUT_EXIT_OK;
    }
    if (strcmp(argv[1], "help") == 0) {
        fprintf(stderr, "knut %s: unknown command '%s'; see 'knut %s --help'\n", group, argv[2],
                group);
        return KNUT_EXIT_USAGE;
    }
    if ((s = find(subs, argv[1])))
        return s->run(argc - 1, argv + 1);
    fprintf(stderr, "knut %s: unknown command '%s'; see 'knut %s --help'\n", group, argv[1],
            group);
    return KNUT_EXIT_USAGE;
}
