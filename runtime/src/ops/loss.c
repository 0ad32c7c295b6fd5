/* Launches negative log-likelihood, forward and backward (kernels/loss.cl). */
#include "launch_common.h"

axon_status_t axon_nll_forward(axon_stream_t stream, axon_dtype dtype, const axon_nll_desc *d) {
  axon_program_t program;
  AXON_TRY(family_program(stream, "loss", dtype, &program));
  int has_weight = d->weight != NULL;
  const void *weight = has_weight ? d->weight : d->input;
  if (d->reduction == 0) {
    if (d->n == 0) return AXON_SUCCESS;
    axon_arg args[] = {buffer_arg(d->input),
                       buffer_arg(d->target),
                       buffer_arg(weight),
                       buffer_arg(d->out),
                       bytes_arg(&d->n, 8),
                       bytes_arg(&d->c, 8),
                       bytes_arg(&d->ignore_index, 8),
                       bytes_arg(&has_weight, sizeof(int))};
    size_t local = group_size(stream), global = axon_round_up((size_t)d->n, local);
    return axon_launch(program, "nll_none", stream, 1, &global, &local, args, 8);
  }
  int mean = d->reduction == 1;
  /* An empty batch still writes the reduced loss (0, or NaN for the mean). */
  const void *input = d->n ? d->input : d->out, *target = d->n ? d->target : d->out;
  axon_arg args[] = {buffer_arg(input),
                     buffer_arg(target),
                     buffer_arg(weight),
                     buffer_arg(d->out),
                     buffer_arg(d->total_weight),
                     bytes_arg(&d->n, 8),
                     bytes_arg(&d->c, 8),
                     bytes_arg(&d->ignore_index, 8),
                     bytes_arg(&has_weight, sizeof(int)),
                     bytes_arg(&mean, sizeof(int))};
  size_t local = 256, global = 256;
  return axon_launch(program, "nll_reduce", stream, 1, &global, &local, args, 10);
}

axon_status_t axon_nll_backward(axon_stream_t stream, axon_dtype dtype, const axon_nll_desc *d) {
  if (d->n == 0) return AXON_SUCCESS;
  axon_program_t program;
  AXON_TRY(family_program(stream, "loss", dtype, &program));
  int has_weight = d->weight != NULL, reduction = d->reduction;
  const void *weight = has_weight ? d->weight : d->grad_out;
  const void *total = d->total_weight ? d->total_weight : d->grad_out;
  axon_arg args[] = {buffer_arg(d->grad_out),
                     buffer_arg(d->target),
                     buffer_arg(weight),
                     buffer_arg(total),
                     buffer_arg(d->grad_in),
                     bytes_arg(&d->n, 8),
                     bytes_arg(&d->c, 8),
                     bytes_arg(&d->ignore_index, 8),
                     bytes_arg(&has_weight, sizeof(int)),
                     bytes_arg(&reduction, sizeof(int))};
  size_t local = group_size(stream), global = axon_round_up((size_t)d->n, local);
  return axon_launch(program, "nll_backward", stream, 1, &global, &local, args, 10);
}
