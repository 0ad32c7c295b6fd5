/*
 * Axon runtime: CTC loss (kernels/ctc.cl, src/ops/ctc.c). The forward runs a work-group per
 * batch element (the alpha recursion over time, a barrier per step); the backward a work-item
 * per batch element (the beta recursion, then the gradient of each (t, class)). float32 and
 * float64; log_alpha, log_beta, nll and the gradient have the dtype of log_probs.
 */
#ifndef AXON_CTC_H
#define AXON_CTC_H

#include "axon/axon.h"

#include "../../kernels/ctc_args.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum axon_ctc_kernel {
  AXON_CTC_ALPHA, /* log_probs, targets, lengths -> log_alpha [n, T, Lmax], nll [n] */
  AXON_CTC_GRAD   /* grad_output, log_probs, targets, lengths, nll, log_alpha -> log_beta, grad */
} axon_ctc_kernel;

/* log_probs strided [T, n, C]; targets (int32 or int64) strided from target_offsets
 * (int64 [n]: each element's first label); input_lengths and target_lengths int64 [n];
 * log_alpha and log_beta contiguous [n, T, Lmax]; grad contiguous [T, n, C]. */
typedef struct axon_ctc_desc {
  axon_ctc_args args; /* kernels/ctc_args.h */
  const void *log_probs, *targets, *target_offsets, *input_lengths, *target_lengths;
  const void *grad_output;
  void *log_alpha, *nll; /* written by AXON_CTC_ALPHA, read by AXON_CTC_GRAD */
  void *log_beta, *grad; /* AXON_CTC_GRAD: scratch and result */
} axon_ctc_desc;

/* Runs `kernel` for each of the args.batch elements. */
AXON_API axon_status_t axon_ctc(axon_stream_t stream, axon_dtype dtype, axon_ctc_kernel kernel,
                                const axon_ctc_desc *d);

#ifdef __cplusplus
}
#endif

#endif
