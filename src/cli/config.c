/*
 * The config files of the commands (sync.yml, a gar import config, a
 * pipeline spec, a load mapping) fail the same way everywhere: a file
 * that is missing, unreadable or a directory, or one its loader refuses
 * (YAML syntax, nesting and alias limits, an unknown key), is a config
 * error, exit 2, like a usage error; the data it points at failing is
 * exit 1 (docs/cli.md, "Exit codes").
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int knut_cli_config_check(const char *cmd, const char *path)
{
    struct stat sb;
    const char *why = NULL;
    /* open, not access: the question is whether this process can read it,
     * and access() answers for the real, not the effective, user */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        why = strerror(errno);
    else if (fstat(fd, &sb) != 0)
        why = strerror(errno);
    else if (S_ISDIR(sb.st_mode))
        why = "is a directory, not a file";
    if (fd >= 0)
        close(fd);
    if (!why)
        return 0;
    fprintf(stderr, "knut %s: %s: cannot read the config: %s\n", cmd, path, why);
    return KNUT_EXIT_USAGE;
}

int knut_cli_config_exit(knut_status st)
{
    /* out of memory is the machine's state, not the config's fault */
    return st == KNUT_ENOMEM ? KNUT_EXIT_FAIL : KNUT_EXIT_USAGE;
}
