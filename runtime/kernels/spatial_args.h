/*
 * The geometry of the spatial ops (convolution unfolding, pooling, resampling, padding):
 * passed by value to the kernels of conv.cl, pool.cl and resample.cl, filled by
 * runtime/src/ops/spatial.h from an axon_spatial_desc. 1 to 3 spatial dims padded to 3 (leading
 * size-1 dims with kernel 1, stride 1, padding 0, dilation 1). See kernel_args.h.
 */
#ifndef AXON_SPATIAL_ARGS_H
#define AXON_SPATIAL_ARGS_H

#include "kernel_args.h"

typedef struct sp_geom {
  axon_i64 n, c;
  axon_i64 in[3], out[3];       /* input-space and output-space sizes (d, h, w) */
  axon_i64 k[3], s[3], p[3];    /* kernel, stride, padding before */
  axon_i64 d[3], pa[3];         /* dilation, padding after */
  axon_i64 in_st[5], out_st[5]; /* strides in elements (n, c, d, h, w) */
  axon_i64 count_include_pad, divisor, align_corners, pad_;
} sp_geom;
AXON_ARGS_SIZE(sp_geom, 8 * 37);

#endif
