/*
 * The descriptor of the grid sampling kernels (grid_sample.cl), launched by axon_grid_sample
 * (runtime/include/axon/grid_sample.h). 2-d runs as 3-d with depth 1: sizes and strides are
 * (d, h, w) with a leading 1 (stride 0) for 2-d. See kernel_args.h.
 */
#ifndef AXON_GRID_SAMPLE_ARGS_H
#define AXON_GRID_SAMPLE_ARGS_H

#include "kernel_args.h"

typedef struct axon_grid_sample_args {
  axon_i64 n, channels;
  axon_i64 nd;                /* spatial dims: 2 or 3 */
  axon_i64 in_size[3];        /* input spatial sizes (d, h, w) */
  axon_i64 out_size[3];       /* output spatial sizes: the grid's (d, h, w) */
  axon_i64 in_strides[5];     /* input (n, c, d, h, w) */
  axon_i64 grid_strides[4];   /* grid (n, d, h, w) */
  axon_i64 grid_coord_stride; /* grid's last dim, which holds the coordinates (x, y, z) */
  axon_i64 mode;              /* 0 bilinear, 1 nearest, 2 bicubic */
  axon_i64 padding;           /* 0 zeros, 1 border, 2 reflection */
  axon_i64 align_corners;
  axon_i64 grad_out_strides[5]; /* backward: grad_output (n, c, d, h, w) */
} axon_grid_sample_args;
AXON_ARGS_SIZE(axon_grid_sample_args, 8 * 27);

#endif
