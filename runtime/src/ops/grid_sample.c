/* Launches grid sampling (kernels/grid_sample.cl; axon/grid_sample.h). */
#include "axon/grid_sample.h"

#include "args_launch.h"

static const args_kernel kernels[] = {
    [AXON_GRID_SAMPLE_FORWARD] = {"grid_sample", 0},
    [AXON_GRID_SAMPLE_BACKWARD] = {"grid_sample_backward", 0},
};

axon_status_t axon_grid_sample(axon_stream_t stream, axon_dtype dtype,
                               axon_grid_sample_kernel kernel, const axon_grid_sample_desc *d) {
  const args_kernel *k = ARGS_KERNEL(kernels, kernel);
  if (!k)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "grid_sample: unknown kernel %d", (int)kernel);
  if (!d) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL descriptor", k->name);
  const axon_grid_sample_args *a = &d->args;
  if (a->nd != 2 && a->nd != 3)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: %lld spatial dims (2 or 3)", k->name,
                     (long long)a->nd);
  int64_t items = a->n * a->out_size[0] * a->out_size[1] * a->out_size[2];
  if (kernel == AXON_GRID_SAMPLE_FORWARD) {
    const void *buffers[] = {d->input, d->grid, d->output};
    return args_launch(stream, dtype, "grid_sample", k, items, buffers, 3, a, sizeof *a);
  }
  const void *buffers[] = {d->grad_output, d->input, d->grid, d->input_grad_acc, d->grad_grid};
  return args_launch(stream, dtype, "grid_sample", k, items, buffers, 5, a, sizeof *a);
}
