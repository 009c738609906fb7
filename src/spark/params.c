/*
 * SQL parameters as literals in the plan: SQL.named_arguments (:name
 * markers) or SQL.pos_arguments (? markers), each an Expression.Literal.
 * The server binds them; the query text is never touched, so a value
 * cannot change the query.
 */
#include <stdlib.h>
#include <string.h>

#include "knut/arrow.h"
#include "spark_int.h"

struct knut_spark__args {
    KnutSpark__Expression *expr;
    KnutSpark__Expression__Literal *lit;
    KnutSpark__SQL__NamedArgumentsEntry *entry;
    KnutSpark__SQL__NamedArgumentsEntry **named;
    KnutSpark__Expression **pos;
};

static knut_status literal(KnutSpark__Expression__Literal *l, const knut_spark_param *p,
                           size_t i, knut_error *err)
{
    const char *who = p->name ? p->name : "";
    switch (p->kind) {
    case KNUT_SPARK_PARAM_STRING:
        if (!p->s || !knut_arrow_utf8_valid((const uint8_t *)p->s, (int64_t)strlen(p->s)))
            return knut_error_set(err, KNUT_EINVAL, "SQL parameter %zu%s%s: %s", i + 1,
                                  p->name ? " :" : "", who,
                                  p->s ? "not UTF-8 text" : "no string");
        l->literal_type_case = KNUT_SPARK__EXPRESSION__LITERAL__LITERAL_TYPE_STRING;
        l->string = (char *)p->s;
        return KNUT_OK;
    case KNUT_SPARK_PARAM_INT64:
        l->literal_type_case = KNUT_SPARK__EXPRESSION__LITERAL__LITERAL_TYPE_LONG_VALUE;
        l->long_value = p->i;
        return KNUT_OK;
    case KNUT_SPARK_PARAM_DOUBLE:
        l->literal_type_case = KNUT_SPARK__EXPRESSION__LITERAL__LITERAL_TYPE_DOUBLE_VALUE;
        l->double_value = p->d;
        return KNUT_OK;
    case KNUT_SPARK_PARAM_BOOL:
        l->literal_type_case = KNUT_SPARK__EXPRESSION__LITERAL__LITERAL_TYPE_BOOLEAN;
        l->boolean = p->i != 0;
        return KNUT_OK;
    case KNUT_SPARK_PARAM_BINARY:
        if (!p->s && p->len)
            return knut_error_set(err, KNUT_EINVAL, "SQL parameter %zu: no bytes", i + 1);
        l->literal_type_case = KNUT_SPARK__EXPRESSION__LITERAL__LITERAL_TYPE_BINARY;
        l->binary.data = (uint8_t *)p->s;
        l->binary.len = p->len;
        return KNUT_OK;
    case KNUT_SPARK_PARAM_DATE:
        if (p->i < INT32_MIN || p->i > INT32_MAX)
            return knut_error_set(err, KNUT_EINVAL, "SQL parameter %zu: date %lld days out "
                                  "of range", i + 1, (long long)p->i);
        l->literal_type_case = KNUT_SPARK__EXPRESSION__LITERAL__LITERAL_TYPE_DATE;
        l->date = (int32_t)p->i;
        return KNUT_OK;
    case KNUT_SPARK_PARAM_TIMESTAMP:
        l->literal_type_case = KNUT_SPARK__EXPRESSION__LITERAL__LITERAL_TYPE_TIMESTAMP;
        l->timestamp = p->i;
        return KNUT_OK;
    }
    return knut_error_set(err, KNUT_EINVAL, "SQL parameter %zu: unknown kind %d", i + 1,
                          (int)p->kind);
}

knut_status knut_spark__args_set(KnutSpark__SQL *q, const knut_spark_param *p, size_t n,
                                 knut_spark__args **out, knut_error *err)
{
    *out = NULL;
    if (n == 0)
        return KNUT_OK;
    int named = p[0].name != NULL;
    for (size_t i = 0; i < n; i++) {
        if ((p[i].name != NULL) != named)
            return knut_error_set(err, KNUT_EINVAL, "SQL parameters: named (:name) and "
                                  "positional (?) ones cannot be mixed in one query");
        if (named && !p[i].name[0])
            return knut_error_set(err, KNUT_EINVAL, "SQL parameter %zu: an empty name", i + 1);
        for (size_t j = 0; named && j < i; j++)
            if (strcmp(p[i].name, p[j].name) == 0)
                return knut_error_set(err, KNUT_EINVAL, "SQL parameter :%s given twice",
                                      p[i].name);
    }
    knut_spark__args *a = calloc(1, sizeof *a);
    if (!a || !(a->expr = calloc(n, sizeof *a->expr)) || !(a->lit = calloc(n, sizeof *a->lit)) ||
        !(a->entry = calloc(n, sizeof *a->entry)) || !(a->named = calloc(n, sizeof *a->named)) ||
        !(a->pos = calloc(n, sizeof *a->pos))) {
        knut_spark__args_free(a);
        return knut_error_set(err, KNUT_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        KnutSpark__Expression__Literal li = KNUT_SPARK__EXPRESSION__LITERAL__INIT;
        KnutSpark__Expression ex = KNUT_SPARK__EXPRESSION__INIT;
        KnutSpark__SQL__NamedArgumentsEntry en = KNUT_SPARK__SQL__NAMED_ARGUMENTS_ENTRY__INIT;
        a->lit[i] = li;
        a->expr[i] = ex;
        a->entry[i] = en;
        knut_status st = literal(&a->lit[i], &p[i], i, err);
        if (st != KNUT_OK) {
            knut_spark__args_free(a);
            return st;
        }
        a->expr[i].expr_type_case = KNUT_SPARK__EXPRESSION__EXPR_TYPE_LITERAL;
        a->expr[i].literal = &a->lit[i];
        a->entry[i].key = (char *)p[i].name;
        a->entry[i].value = &a->expr[i];
        a->named[i] = &a->entry[i];
        a->pos[i] = &a->expr[i];
    }
    if (named) {
        q->n_named_arguments = n;
        q->named_arguments = a->named;
    } else {
        q->n_pos_arguments = n;
        q->pos_arguments = a->pos;
    }
    *out = a;
    return KNUT_OK;
}

void knut_spark__args_free(knut_spark__args *a)
{
    if (!a)
        return;
    free(a->expr);
    free(a->lit);
    free(a->entry);
    free(a->named);
    free(a->pos);
    free(a);
}
