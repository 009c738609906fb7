/*
 * `knut gar`: GraphAr (gar/v1) tools. Dispatches to one function per
 * sub-command (info, cat, validate, import), each in cmd_gar_<name>.c.
 */
#include "cli.h"

static const knut_cli_sub subs[] = {
    {"info", knut_cmd_gar_info, "describe a graph: types, groups, counts"},
    {"cat", knut_cmd_gar_cat, "print the vertices or edges of one type"},
    {"validate", knut_cmd_gar_validate, "check a graph's YAML files and data"},
    {"import", knut_cmd_gar_import, "write a graph from Parquet/CSV tables or SQL (config)"},
    {NULL, NULL, NULL},
};

int knut_cmd_gar(int argc, char **argv)
{
    return knut_cli_dispatch("gar", "Read, write and validate Apache GraphAr (gar/v1) graphs.",
                             subs, argc, argv);
}
