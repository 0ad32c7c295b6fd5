/* Launches convolution's unfolding and its adjoint (kernels/conv.cl). */
#include "spatial.h"

static axon_status_t unfold(axon_stream_t stream, axon_dtype dtype, const axon_spatial_desc *d,
                            int fold) {
  const char *name = fold ? "col2im" : "im2col";
  if (!stream) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL stream", name);
  sp_geom g;
  AXON_TRY(sp_geom_make(d, name, &g));
  int64_t K = g.k[0] * g.k[1] * g.k[2], L = g.out[0] * g.out[1] * g.out[2];
  int64_t total = fold ? sp_in_numel(&g) : g.c * K * g.n * L;
  if (total == 0) return AXON_SUCCESS;
  if (!d->input || !d->output) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL data", name);
  axon_program_t program;
  AXON_TRY(family_program(stream, "conv", dtype, &program));
  axon_arg args[] = {buffer_arg(fold ? d->output : d->input),
                     buffer_arg(fold ? d->input : d->output), bytes_arg(&g, sizeof g),
                     bytes_arg(&total, 8)};
  if (fold) return sp_launch(stream, program, name, total, args, 4);
  size_t rows = (size_t)(g.out[0] * g.out[1]), blocks = (size_t)(g.c * K * g.n);
  if (rows_per_item(stream)) { /* a work-item per run of output positions (conv.cl) */
    size_t local[2] = {group_size_for(stream, (int64_t)rows), 1};
    size_t global[2] = {axon_round_up(rows, local[0]), blocks};
    return axon_launch(program, "im2col_rows", stream, 2, global, local, args, 4);
  }
  /* im2col's 3-D launch (see kernels/conv.cl): a group spans runs of output positions, as
   * many whole rows as fit in AXON_GROUP items (PoCL pays per group, so groups stay large). */
  size_t width = (size_t)g.out[2];
  size_t local[3] = {width < AXON_GROUP ? width : AXON_GROUP, 1, 1};
  for (size_t r = AXON_GROUP / local[0]; r > 1; r--)
    if (rows % r == 0) {
      local[1] = r;
      break;
    }
  size_t global[3] = {axon_round_up(width, local[0]), rows, blocks};
  return axon_launch(program, name, stream, 3, global, local, args, 4);
}

axon_status_t axon_im2col(axon_stream_t stream, axon_dtype dtype, const axon_spatial_desc *d) {
  return unfold(stream, dtype, d, 0);
}

axon_status_t axon_col2im(axon_stream_t stream, axon_dtype dtype, const axon_spatial_desc *d) {
  return unfold(stream, dtype, d, 1);
}
