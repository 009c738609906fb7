/*
 * `knut graph`: property-graph tools. Dispatches to one function per
 * sub-command, each in cmd_graph_<name>.c.
 */
#include "cli.h"

#include <string.h>

typedef struct graph_sub {
    const char *name;
    knut_cli_fn run;
    const char *summary;
    const char *usage;
} graph_sub;

static const graph_sub subs[] = {
    {"query", knut_cmd_graph_query, "run Cypher on FalkorDB and print the result",
     knut_cmd_graph_query_usage},
    {"export", knut_cmd_graph_export, "write the embedded graph store out (GraphAr)",
     knut_cmd_graph_export_usage},
    {NULL, NULL, NULL, NULL},
};

static void graph_usage(FILE *f)
{
    fputs("usage: knut graph COMMAND [ARGS]\n"
          "\n"
          "Work with property graphs: FalkorDB and the embedded graph store.\n"
          "\n"
          "Commands:\n",
          f);
    for (const graph_sub *s = subs; s->name; s++)
        fprintf(f, "  %-10s %s\n", s->name, s->summary);
    fputs("\nRun 'knut graph COMMAND --help' for one command.\n", f);
}

const char knut_cmd_graph_usage[] =
    "usage: knut graph COMMAND [ARGS]  (run 'knut graph' for the list)\n";

int knut_cmd_graph(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        graph_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? KNUT_EXIT_USAGE : KNUT_EXIT_OK;
    }
    for (const graph_sub *s = subs; s->name; s++) {
        if (strcmp(s->name, argv[1]) != 0)
            continue;
        if (knut_cli_wants_help(argc - 1, argv + 1)) {
            fputs(s->usage, stdout);
            return KNUT_EXIT_OK;
        }
        return s->run(argc - 1, argv + 1);
    }
    fprintf(stderr, "knut graph: unknown command '%s' (see 'knut graph --help')\n", argv[1]);
    return KNUT_EXIT_USAGE;
}
