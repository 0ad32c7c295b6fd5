/* Launches the margin losses (kernels/margin_loss.cl; axon/margin_loss.h). */
#include "axon/margin_loss.h"

#include "args_launch.h"

static const args_kernel kernels[] = {
    [AXON_MULTI_MARGIN] = {"multi_margin", 0},
    [AXON_MULTI_MARGIN_BACKWARD] = {"multi_margin_backward", 0},
    [AXON_MULTILABEL_MARGIN] = {"multilabel_margin", 0},
    [AXON_MULTILABEL_MARGIN_BACKWARD] = {"multilabel_margin_backward", 0},
};

axon_status_t axon_margin_loss(axon_stream_t stream, axon_dtype dtype,
                               axon_margin_loss_kernel kernel, const axon_margin_loss_desc *d) {
  const args_kernel *k = ARGS_KERNEL(kernels, kernel);
  if (!k)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "margin_loss: unknown kernel %d", (int)kernel);
  if (!d) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL descriptor", k->name);
  const axon_margin_loss_args *a = &d->args;
  if (a->n > 0 && a->classes < 1)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: no classes", k->name);
  switch (kernel) {
    case AXON_MULTI_MARGIN: {
      const void *b[] = {d->input, d->target, d->weight, d->output};
      return args_launch(stream, dtype, "margin_loss", k, a->n, b, 4, a, sizeof *a);
    }
    case AXON_MULTI_MARGIN_BACKWARD: {
      const void *b[] = {d->grad_output, d->input, d->target, d->weight, d->output};
      return args_launch(stream, dtype, "margin_loss", k, a->n, b, 5, a, sizeof *a);
    }
    case AXON_MULTILABEL_MARGIN: {
      const void *b[] = {d->input, d->target, d->is_target, d->output};
      return args_launch(stream, dtype, "margin_loss", k, a->n, b, 4, a, sizeof *a);
    }
    case AXON_MULTILABEL_MARGIN_BACKWARD: {
      const void *b[] = {d->grad_output, d->input, d->target, d->is_target, d->output};
      return args_launch(stream, dtype, "margin_loss", k, a->n, b, 5, a, sizeof *a);
    }
  }
  return AXON_SUCCESS;
}
