/* Launches the pairwise distances (kernels/distance.cl; axon/distance.h). */
#include "axon/distance.h"

#include "args_launch.h"

static const args_kernel kernels[] = {
    [AXON_PDIST] = {"pdist", 0},
    [AXON_PDIST_BACKWARD] = {"pdist_backward", 0},
    [AXON_CDIST] = {"cdist", 0},
    [AXON_CDIST_BACKWARD] = {"cdist_backward", 0},
};

axon_status_t axon_distance(axon_stream_t stream, axon_dtype dtype, axon_distance_kernel kernel,
                            const axon_distance_desc *d) {
  const args_kernel *k = ARGS_KERNEL(kernels, kernel);
  if (!k) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "distance: unknown kernel %d", (int)kernel);
  if (!d) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL descriptor", k->name);
  const axon_distance_args *a = &d->args;
  if (a->batch < 0 || a->rows1 < 0 || a->rows2 < 0 || a->cols < 0)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: negative sizes", k->name);
  int64_t n = a->rows1;
  switch (kernel) {
    case AXON_PDIST: {
      const void *b[] = {d->x1, d->output};
      return args_launch(stream, dtype, "distance", k, n > 1 ? n * (n - 1) / 2 : 0, b, 2, a,
                         sizeof *a);
    }
    case AXON_PDIST_BACKWARD: {
      const void *b[] = {d->grad, d->x1, d->dist, d->output};
      return args_launch(stream, dtype, "distance", k, n * a->cols, b, 4, a, sizeof *a);
    }
    case AXON_CDIST: {
      const void *b[] = {d->x1, d->x2, d->output};
      return args_launch(stream, dtype, "distance", k, a->batch * n * a->rows2, b, 3, a, sizeof *a);
    }
    case AXON_CDIST_BACKWARD: {
      const void *b[] = {d->grad, d->x1, d->x2, d->dist, d->output};
      return args_launch(stream, dtype, "distance", k, a->batch * n * a->cols, b, 5, a, sizeof *a);
    }
  }
  return AXON_SUCCESS;
}
