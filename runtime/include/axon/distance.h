/*
 * Axon runtime: pairwise distances, pdist and cdist, and their gradients (kernels/distance.cl,
 * src/ops/distance.c). A work-item per output element, each a gather in a fixed order.
 */
#ifndef AXON_DISTANCE_H
#define AXON_DISTANCE_H

#include "axon/axon.h"

#include "../../kernels/distance_args.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum axon_distance_kernel {
  AXON_PDIST,          /* x [rows1, cols] -> output: the rows1 (rows1 - 1) / 2 pairs i < j */
  AXON_PDIST_BACKWARD, /* grad [pairs], x, dist [pairs] -> output [rows1, cols] */
  AXON_CDIST,          /* x1 [batch, rows1, cols], x2 [batch, rows2, cols] -> output
                          [batch, rows1, rows2] */
  AXON_CDIST_BACKWARD  /* grad, x1, x2, dist [batch, rows1, rows2] -> output (x1's gradient) */
} axon_distance_kernel;

/* Every operand contiguous. pdist reads x from x1. */
typedef struct axon_distance_desc {
  axon_distance_args args; /* kernels/distance_args.h */
  const void *x1, *x2, *grad, *dist;
  void *output;
} axon_distance_desc;

AXON_API axon_status_t axon_distance(axon_stream_t stream, axon_dtype dtype,
                                     axon_distance_kernel kernel, const axon_distance_desc *d);

#ifdef __cplusplus
}
#endif

#endif
