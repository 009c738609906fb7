/*
 * knut: the umbrella header. Includes every part's public header.
 */
#ifndef KNUT_KNUT_H
#define KNUT_KNUT_H

#include "knut/core.h"
#include "knut/net.h"
#include "knut/arrow.h"
#include "knut/duck.h"
#include "knut/graphar.h"
#include "knut/iceberg.h"
#include "knut/graph.h"
#include "knut/sync.h"
#include "knut/serve.h"
#include "knut/pipeline.h"
#include "knut/spark.h"
#include "knut/viewer.h"

#endif
