/*
 * The descriptor of the margin-loss kernels (margin_loss.cl), launched by axon_margin_loss
 * (runtime/include/axon/margin_loss.h). See kernel_args.h.
 */
#ifndef AXON_MARGIN_LOSS_ARGS_H
#define AXON_MARGIN_LOSS_ARGS_H

#include "kernel_args.h"

typedef struct axon_margin_loss_args {
  axon_i64 n, classes;
  axon_i64 p;               /* multi_margin: 1 or 2 */
  axon_i64 has_weight;      /* multi_margin: a class weight is given */
  axon_i64 grad_out_stride; /* backward: 1 for a gradient per sample, 0 for a reduced loss's */
  axon_real margin;         /* multi_margin */
  axon_real grad_scale;     /* backward: 1 / n for the mean, else 1 */
} axon_margin_loss_args;
AXON_ARGS_SIZE(axon_margin_loss_args, 8 * 5 + 2 * 16);

#endif
