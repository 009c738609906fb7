/*
 * Internal to the Spark lowering (spark_lower.c builds the plan,
 * spark_show.c prints it, spark_run.c sends it): the dataflow graph a
 * pipeline becomes, what the target refused, and per flow the knobs the
 * lowering dropped or changed.
 */
#ifndef KNUT_PIPELINE_SPARK_INT_H
#define KNUT_PIPELINE_SPARK_INT_H

#include "knut/pipeline.h"
#include "knut/spark.h"

/* One report line: knob, what happened ("dropped", "changed"), why. */
typedef struct knut_pipeline__spark_note {
    const char *knob, *change, *detail;
} knut_pipeline__spark_note;

typedef struct knut_pipeline__spark_notes {
    knut_pipeline__spark_note *v;
    size_t n;
} knut_pipeline__spark_notes;

typedef struct knut_pipeline__spark_strs {
    const char **v;
    size_t n;
} knut_pipeline__spark_strs;

typedef struct knut_pipeline__spark_output {
    const knut_pipeline_dataset *ds; /* NULL: a view knut adds (a file source) */
    knut_spark_sdp_output o;
} knut_pipeline__spark_output;

typedef struct knut_pipeline__spark_flow {
    const knut_pipeline_flow *f;   /* NULL: the flow of a view knut adds */
    const char *kind;              /* "batch", "streaming", "auto_cdc", "file_read" */
    knut_spark_sdp_flow sf;
    knut_spark_sdp_cdc cdc;
    knut_pipeline__spark_strs refused; /* why the target cannot run it */
    knut_pipeline__spark_notes notes;
} knut_pipeline__spark_flow;

struct knut_pipeline_spark_plan {
    const knut_pipeline *p;
    char version[64];
    int major, minor;
    char layout[8];                  /* "4.1", "4.2", "4.3" */
    const char *root;                /* the spec folder, absolute */
    const char *storage;             /* the StartRun storage URI */
    const char *database;            /* NULL: the session's */
    knut_spark_sdp_kv *conf;         /* the graph's SQL conf */
    size_t nconf;
    knut_spark_sdp_kv *session_conf; /* SET on the session before defining */
    size_t nsession_conf;
    knut_pipeline__spark_output *outputs;
    size_t noutputs;
    knut_pipeline__spark_flow *flows; /* in run order, added views first */
    size_t nflows;
    knut_pipeline__spark_notes notes; /* the pipeline's own knobs */
    knut_pipeline__spark_strs refused; /* the whole pipeline (the version) */
    size_t nrefused_flows;
    void **mem; /* everything above that the plan allocated */
    size_t nmem, capmem;
};

/* Registers p (malloc'ed) with the plan; NULL (p freed) on ENOMEM. */
void *knut_pipeline__spark_keep(knut_pipeline_spark_plan *pl, void *p);
/* A printf'ed string owned by the plan; NULL on ENOMEM. */
char *knut_pipeline__spark_fmt(knut_pipeline_spark_plan *pl, const char *fmt, ...)
    KNUT_PRINTF(2, 3);

#endif
