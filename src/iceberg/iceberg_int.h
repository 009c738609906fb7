/*
 * Internals of the iceberg part shared by its files: the Avro object
 * container reader (avro.c) that manifest.c decodes records with.
 */
#ifndef KNUT_ICEBERG_INT_H
#define KNUT_ICEBERG_INT_H

#include "knut/iceberg.h"

#endif
