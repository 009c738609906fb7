/*
 * "Did you mean": the closest of a list of names to a mistyped one, by
 * edit distance (Damerau-Levenshtein, optimal string alignment), for the
 * config's unknown keys and the command line's unknown options.
 */
#include <stdint.h>
#include <string.h>

#include "knut/core.h"

/* Names longer than this are not compared (a typo hint, not a search). */
#define SUGGEST_NAME_MAX 63

size_t knut_str_distance(const char *a, size_t na, const char *b)
{
    size_t nb = strlen(b);
    size_t d[SUGGEST_NAME_MAX + 1][SUGGEST_NAME_MAX + 1];
    if (na > SUGGEST_NAME_MAX || nb > SUGGEST_NAME_MAX)
        return SIZE_MAX;
    for (size_t i = 0; i <= na; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= nb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= na; i++) {
        for (size_t j = 1; j <= nb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[na][nb];
}

const char *knut_str_suggest(const char *name, const char *const *candidates)
{
    if (!name || !candidates)
        return NULL;
    size_t n = strlen(name), limit = n <= 3 ? 1 : n <= 8 ? 2 : 3, best_d = SIZE_MAX;
    const char *best = NULL;
    for (size_t i = 0; candidates[i]; i++) {
        size_t d = knut_str_distance(name, n, candidates[i]);
        if (d <= limit && d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best;
}
