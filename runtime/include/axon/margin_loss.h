/*
 * Axon runtime: multi-class margin losses, multi_margin_loss and multilabel_margin_loss
 * (kernels/margin_loss.cl, src/ops/margin_loss.c). A work-item per sample: the per-sample
 * losses (divided by the class count), reduced by the caller, and the input gradient.
 */
#ifndef AXON_MARGIN_LOSS_H
#define AXON_MARGIN_LOSS_H

#include "axon/axon.h"

#include "../../kernels/margin_loss_args.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum axon_margin_loss_kernel {
  AXON_MULTI_MARGIN,              /* input, target, weight -> output [n] */
  AXON_MULTI_MARGIN_BACKWARD,     /* grad_output, input, target, weight -> grad_input */
  AXON_MULTILABEL_MARGIN,         /* input, target -> is_target [n, c], output [n] */
  AXON_MULTILABEL_MARGIN_BACKWARD /* grad_output, input, target, is_target -> grad_input */
} axon_margin_loss_kernel;

/* input [n, c] and grad_input contiguous; targets int64, contiguous; weight [c] or NULL;
 * is_target [n, c] of the input's dtype. */
typedef struct axon_margin_loss_desc {
  axon_margin_loss_args args; /* kernels/margin_loss_args.h */
  const void *input, *target, *weight, *grad_output;
  void *is_target; /* multilabel: written by the forward, read by the backward */
  void *output;    /* forward: per-sample losses; backward: grad_input */
} axon_margin_loss_desc;

/* Runs `kernel` over args.n work-items. */
AXON_API axon_status_t axon_margin_loss(axon_stream_t stream, axon_dtype dtype,
                                        axon_margin_loss_kernel kernel,
                                        const axon_margin_loss_desc *d);

#ifdef __cplusplus
}
#endif

#endif
