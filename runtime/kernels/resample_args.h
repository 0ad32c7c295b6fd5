/*
 * The descriptor of the 2-d filtered resampling kernels of resample.cl (bicubic2d,
 * aa_bilinear2d and their backward), launched by axon_resample2d (runtime/include/axon/
 * resample.h). [n, c, h, w] tensors: the strided one is the forward's input or the backward's
 * grad_output; the other is contiguous. See kernel_args.h.
 */
#ifndef AXON_RESAMPLE_ARGS_H
#define AXON_RESAMPLE_ARGS_H

#include "kernel_args.h"

typedef struct axon_resample2d_args {
  axon_i64 planes;   /* n * c */
  axon_i64 channels; /* c */
  axon_i64 in_h, in_w, out_h, out_w;
  axon_i64 strides[4]; /* (n, c, h, w) of the strided tensor */
  axon_i64 align_corners;
  axon_real scale_h, scale_w; /* input pixels per output pixel */
} axon_resample2d_args;
AXON_ARGS_SIZE(axon_resample2d_args, 8 * 11 + 2 * 16);

#endif
