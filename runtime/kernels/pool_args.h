/*
 * The descriptor of fractional max pooling (pool.cl: fractional_max_pool), launched by
 * axon_fractional_max_pool (runtime/include/axon/pool.h). The other pooling kernels take the
 * spatial geometry (spatial_args.h). See kernel_args.h.
 */
#ifndef AXON_POOL_ARGS_H
#define AXON_POOL_ARGS_H

#include "kernel_args.h"

/* 2-d runs as 3-d with depth 1: sizes (d, h, w) with a leading 1 (stride 0) for 2-d. */
typedef struct axon_fractional_pool_args {
  axon_i64 n, channels;
  axon_i64 nd; /* spatial dims: 2 or 3 */
  axon_i64 in_size[3], out_size[3];
  axon_i64 window[3];     /* the pooling window (not "kernel": an OpenCL keyword) */
  axon_i64 in_strides[5]; /* (n, c, d, h, w) */
} axon_fractional_pool_args;
AXON_ARGS_SIZE(axon_fractional_pool_args, 8 * 17);

#endif
