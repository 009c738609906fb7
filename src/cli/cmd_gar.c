/*
 * `knut gar`: GraphAr (gar/v1) tools. Dispatches to one function per
 * sub-command (info, cat, validate, import), each in cmd_gar_<name>.c.
 */
#include "cli.h"

static const knut_cli_sub subs[] = {
    {"info", knut_cmd_gar_info, "describe a graph: types, groups, counts", knut_cmd_gar_info_usage},
    {"cat", knut_cmd_gar_cat, "print the vertices or edges of one type", knut_cmd_gar_cat_usage},
    {"validate", knut_cmd_gar_validate, "check a graph's YAML files and data",
     knut_cmd_gar_validate_usage},
    {"import", knut_cmd_gar_import, "write a graph from Parquet/CSV tables or SQL (config)",
     knut_cmd_gar_import_usage},
    {NULL, NULL, NULL, NULL},
};

const char knut_cmd_gar_usage[] =
    "usage: knut gar COMMAND [ARGS]  (run 'knut gar' for the list)\n";

int knut_cmd_gar(int argc, char **argv)
{
    return knut_cli_dispatch("gar", "Read, write and validate Apache GraphAr (gar/v1) graphs.",
                             subs, argc, argv);
}
