/*
 * `knut gar`: GraphAr (gar/v1) tools. Dispatches to one function per
 * sub-command (info, cat, validate, import), each in cmd_gar_<name>.c.
 */
#include "cli.h"

#include <string.h>

typedef struct gar_sub {
    const char *name;
    knut_cli_fn run;
    const char *summary;
    const char *usage;
} gar_sub;

static const gar_sub subs[] = {
    /* {"info", knut_cmd_gar_info, "...", knut_cmd_gar_info_usage}, */
    {"info", knut_cmd_gar_info, "describe a graph: types, groups, counts", knut_cmd_gar_info_usage},
    {"cat", knut_cmd_gar_cat, "print the vertices or edges of one type", knut_cmd_gar_cat_usage},
    {"validate", knut_cmd_gar_validate, "check a graph's YAML files and data",
     knut_cmd_gar_validate_usage},
    {"import", knut_cmd_gar_import, "write a graph from Parquet/CSV tables or SQL (config)",
     knut_cmd_gar_import_usage},
    {NULL, NULL, NULL, NULL},
};

static void gar_usage(FILE *f)
{
    fputs("usage: knut gar COMMAND [ARGS]\n"
          "\n"
          "Read, write and validate Apache GraphAr (gar/v1) graphs.\n"
          "\n"
          "Commands:\n",
          f);
    for (const gar_sub *s = subs; s->name; s++)
        fprintf(f, "  %-10s %s\n", s->name, s->summary);
    fputs("\nRun 'knut gar COMMAND --help' for one command.\n", f);
}

const char knut_cmd_gar_usage[] = "usage: knut gar COMMAND [ARGS]  (run 'knut gar' for the list)\n";

int knut_cmd_gar(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        gar_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? KNUT_EXIT_USAGE : KNUT_EXIT_OK;
    }
    for (const gar_sub *s = subs; s->name; s++) {
        if (strcmp(s->name, argv[1]) != 0)
            continue;
        if (knut_cli_wants_help(argc - 1, argv + 1)) {
            fputs(s->usage, stdout);
            return KNUT_EXIT_OK;
        }
        return s->run(argc - 1, argv + 1);
    }
    fprintf(stderr, "knut gar: unknown command '%s' (see 'knut gar --help')\n", argv[1]);
    return KNUT_EXIT_USAGE;
}
