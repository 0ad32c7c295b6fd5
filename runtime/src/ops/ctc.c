/* Launches the CTC loss (kernels/ctc.cl; axon/ctc.h). */
#include "axon/ctc.h"

#include "args_launch.h"

static const args_kernel kernels[] = {
    [AXON_CTC_ALPHA] = {"ctc_alpha", 1}, /* a work-group per batch element */
    [AXON_CTC_GRAD] = {"ctc_grad", 0},
};

axon_status_t axon_ctc(axon_stream_t stream, axon_dtype dtype, axon_ctc_kernel kernel,
                       const axon_ctc_desc *d) {
  const args_kernel *k = ARGS_KERNEL(kernels, kernel);
  if (!k) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "ctc: unknown kernel %d", (int)kernel);
  if (!d) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL descriptor", k->name);
  const axon_ctc_args *a = &d->args;
  if (kernel == AXON_CTC_ALPHA) {
    const void *b[] = {
        d->log_probs, d->targets, d->target_offsets, d->input_lengths, d->target_lengths,
        d->log_alpha, d->nll};
    return args_launch(stream, dtype, "ctc", k, a->batch, b, 7, a, sizeof *a);
  }
  const void *b[] = {
      d->grad_output,    d->log_probs, d->targets,   d->target_offsets, d->input_lengths,
      d->target_lengths, d->nll,       d->log_alpha, d->log_beta,       d->grad};
  return args_launch(stream, dtype, "ctc", k, a->batch, b, 10, a, sizeof *a);
}
