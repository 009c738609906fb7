/*
 * `knut gar`: GraphAr (gar/v1) tools. Dispatches to one function per
 * sub-command (info, cat, validate, import), each in cmd_gar_<name>.c.
 */
#include "cli.h"

static const knut_cli_sub subs[] = {
    {"info", knut_cmd_gar_info, "describe a graph: types, groups, counts", &knut_cmd_gar_info_spec},
    {"cat", knut_cmd_gar_cat, "print the vertices or edges of one type", &knut_cmd_gar_cat_spec},
    {"validate", knut_cmd_gar_validate, "check a graph's YAML files and data",
     &knut_cmd_gar_validate_spec},
    {"import", knut_cmd_gar_import, "write a graph from Parquet/CSV tables or SQL (config)",
     &knut_cmd_gar_import_spec},
    {NULL, NULL, NULL, NULL},
};

const knut_cli_group knut_cmd_gar_group = {
    "gar", "Read, write and validate Apache GraphAr (gar/v1) graphs.", subs};

int knut_cmd_gar(int argc, char **argv)
{
    return knut_cli_dispatch(&knut_cmd_gar_group, argc, argv);
}
