/*
 * knut graphar: Apache GraphAr `gar/v1`, the umbrella header: the info model
 * (graphar_info.h), the layout and count files (graphar_layout.h), chunk
 * readers (graphar_read.h), the writer and import (graphar_write.h) and the
 * validator (graphar_validate.h).
 */
#ifndef KNUT_GRAPHAR_H
#define KNUT_GRAPHAR_H

#include <stddef.h>
#include <stdint.h>

#include "knut/core.h"

#include "knut/graphar_info.h"
#include "knut/graphar_layout.h"
#include "knut/graphar_read.h"
#include "knut/graphar_write.h"
#include "knut/graphar_validate.h"

#endif /* KNUT_GRAPHAR_H */
