/* The geometry of spatial ops (convolution unfolding, pooling, resampling, padding), shared by
 * conv.c, pool.c and resample.c. */
#ifndef AXON_SPATIAL_H
#define AXON_SPATIAL_H

#include "launch_common.h"

/* sp_geom: the kernels' geometry, defined once for both sides. */
#include "../../kernels/spatial_args.h"

static inline axon_status_t sp_geom_make(const axon_spatial_desc *d, const char *what, sp_geom *g) {
  if (!d) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL descriptor", what);
  if (d->nd < 1 || d->nd > 3)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: %d spatial dims (1 to 3 supported)", what,
                     d->nd);
  memset(g, 0, sizeof *g);
  g->n = d->n;
  g->c = d->c;
  int lead = 3 - d->nd;
  for (int i = 0; i < 3; i++) {
    int j = i - lead; /* the caller's dim, or < 0 for a padding dim */
    g->in[i] = j < 0 ? 1 : d->in[j];
    g->out[i] = j < 0 ? 1 : d->out[j];
    g->k[i] = j < 0 ? 1 : d->kernel[j];
    g->s[i] = j < 0 ? 1 : d->stride[j];
    g->p[i] = j < 0 ? 0 : d->pad[j];
    g->d[i] = j < 0 ? 1 : d->dilation[j];
    g->pa[i] = j < 0 ? 0 : d->pad_after[j];
    g->in_st[2 + i] = j < 0 ? 0 : d->in_strides[2 + j];
    g->out_st[2 + i] = j < 0 ? 0 : d->out_strides[2 + j];
  }
  g->in_st[0] = d->in_strides[0];
  g->in_st[1] = d->in_strides[1];
  g->out_st[0] = d->out_strides[0];
  g->out_st[1] = d->out_strides[1];
  g->count_include_pad = d->count_include_pad;
  g->divisor = d->divisor;
  g->align_corners = d->align_corners;
  for (int i = 0; i < 3; i++) {
    if (g->in[i] < 0 || g->out[i] < 0 || g->k[i] < 1 || g->s[i] < 1 || g->d[i] < 1 || g->p[i] < 0 ||
        g->pa[i] < 0)
      return axon_fail(AXON_ERROR_INVALID_ARGUMENT,
                       "%s: bad geometry in dim %d (in %lld, out %lld, kernel %lld, stride %lld, "
                       "padding %lld, dilation %lld)",
                       what, i, (long long)g->in[i], (long long)g->out[i], (long long)g->k[i],
                       (long long)g->s[i], (long long)g->p[i], (long long)g->d[i]);
  }
  if (g->n < 0 || g->c < 0)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: negative batch or channels", what);
  return AXON_SUCCESS;
}

static inline int64_t sp_in_numel(const sp_geom *g) {
  return g->n * g->c * g->in[0] * g->in[1] * g->in[2];
}
static inline int64_t sp_out_numel(const sp_geom *g) {
  return g->n * g->c * g->out[0] * g->out[1] * g->out[2];
}

/* A 1-D launch of `total` work-items of kernel `name` with the given arguments. */
static inline axon_status_t sp_launch(axon_stream_t stream, axon_program_t program,
                                      const char *name, int64_t total, const axon_arg *args,
                                      int nargs) {
  if (total <= 0) return AXON_SUCCESS;
  size_t local = group_size(stream), global = axon_round_up((size_t)total, local);
  return axon_launch(program, name, stream, 1, &global, &local, args, nargs);
}

#endif
