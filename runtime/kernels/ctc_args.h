/*
 * The descriptor of the CTC loss kernels (ctc.cl), launched by axon_ctc (runtime/include/axon/
 * ctc.h). See kernel_args.h.
 */
#ifndef AXON_CTC_ARGS_H
#define AXON_CTC_ARGS_H

#include "kernel_args.h"

typedef struct axon_ctc_args {
  axon_i64 time, batch, classes; /* log_probs is [time, batch, classes] */
  axon_i64 max_positions;        /* 2 * (longest target) + 1: the extended targets' length */
  axon_i64 blank;
  axon_i64 log_probs_strides[3]; /* (t, n, c) */
  axon_i64 target_stride;        /* between a target's labels */
  axon_i64 targets_int32;        /* else int64 */
  axon_i64 zero_infinity;        /* backward: infinite losses get a zero gradient */
  axon_i64 grad_out_stride;      /* backward: between the samples' incoming gradients */
} axon_ctc_args;
AXON_ARGS_SIZE(axon_ctc_args, 8 * 12);

#endif
