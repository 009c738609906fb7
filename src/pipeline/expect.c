/*
 * Expectations as SQL: a flow's rows are staged once with one BOOLEAN
 * column per expectation, so every count, the filter, the quarantine and
 * the fail check read the same evaluation. A constraint that is TRUE or
 * NULL passes (the NULL policy, docs/pipelines.md); FALSE fails. UNIQUE
 * (cols) fails a row whose key occurs more than once among the new rows,
 * or (for a streaming table) already in the target; keys compare with IS
 * NOT DISTINCT FROM, so NULL keys are equal to each other.
 */
#include <string.h>

#include "pipeline_int.h"

static void ident_list(knut_buf *b, const char *prefix, const char *const *cols, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            knut_buf_puts(b, ", ");
        knut_buf_puts(b, prefix);
        knut_duck_ident(b, cols[i]);
    }
}

knut_status knut_pipeline__expect_stage_sql(knut_buf *b, const knut_pipeline_flow *f,
                                            const char *query, const char *schema,
                                            int target_exists)
{
    knut_buf_puts(b, "SELECT __knut_q.*");
    for (size_t i = 0; i < f->nexpectations; i++) {
        const knut_pipeline_expectation *e = &f->expectations[i];
        knut_buf_puts(b, ", (");
        if (e->constraint) {
            knut_buf_puts(b, e->constraint);
        } else {
            knut_buf_puts(b, "count(*) OVER (PARTITION BY ");
            ident_list(b, "__knut_q.", e->unique_cols, e->nunique);
            knut_buf_puts(b, ") = 1");
            if (target_exists) {
                knut_buf_puts(b, " AND NOT EXISTS (SELECT 1 FROM ");
                knut_duck_ident(b, schema);
                knut_buf_putc(b, '.');
                knut_duck_ident(b, f->target);
                knut_buf_puts(b, " AS __knut_t WHERE ");
                for (size_t k = 0; k < e->nunique; k++) {
                    if (k)
                        knut_buf_puts(b, " AND ");
                    knut_buf_puts(b, "__knut_t.");
                    knut_duck_ident(b, e->unique_cols[k]);
                    knut_buf_puts(b, " IS NOT DISTINCT FROM __knut_q.");
                    knut_duck_ident(b, e->unique_cols[k]);
                }
                knut_buf_putc(b, ')');
            }
        }
        knut_buf_printf(b, ")::BOOLEAN AS __knut_e%zu", i);
    }
    knut_buf_puts(b, " FROM (");
    knut_buf_puts(b, query);
    knut_buf_puts(b, "\n) AS __knut_q");
    return b->error;
}
