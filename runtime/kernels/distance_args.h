/*
 * The descriptor of the pairwise-distance kernels (distance.cl), launched by axon_distance
 * (runtime/include/axon/distance.h). See kernel_args.h.
 */
#ifndef AXON_DISTANCE_ARGS_H
#define AXON_DISTANCE_ARGS_H

#include "kernel_args.h"

typedef struct axon_distance_args {
  axon_i64 batch; /* cdist: batch of (x1, x2) pairs; pdist: 1 */
  axon_i64 rows1; /* rows of x1 (pdist: of x) */
  axon_i64 rows2; /* cdist: rows of x2 */
  axon_i64 cols;  /* the rows' length */
  axon_real p;    /* the norm: 0, 1, 2, inf or any other non-negative value */
} axon_distance_args;
AXON_ARGS_SIZE(axon_distance_args, 8 * 4 + 16);

#endif
