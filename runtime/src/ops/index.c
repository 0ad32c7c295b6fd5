/* Launches the indexing family (kernels/index.cl). */
#include <stdio.h>

#include "launch_common.h"

/* Mirrors dim_geom in kernels/index.cl. */
typedef struct dim_geom {
  int64_t numel, ndim;
  int64_t sizes[AXON_MAX_DIMS];
  int64_t strides[3][AXON_MAX_DIMS];
  int64_t len;
  int64_t dstride[3];
  int64_t dim_size;
} dim_geom;

/* Mirrors adv_geom in kernels/index.cl. */
typedef struct adv_geom {
  int64_t nr, nb, nidx, rnumel, bnumel;
  int64_t r_sizes[AXON_MAX_DIMS];
  int64_t r_self_strides[AXON_MAX_DIMS];
  int64_t r_other_strides[AXON_MAX_DIMS];
  int64_t b_sizes[AXON_MAX_DIMS];
  int64_t b_other_strides[AXON_MAX_DIMS];
  int64_t idx_sizes[AXON_MAX_DIMS];
  int64_t idx_strides[AXON_MAX_DIMS];
} adv_geom;

static int is_int_dtype(axon_dtype t) {
  return t != AXON_F32 && t != AXON_F64 && t != AXON_F16 && t != AXON_BF16;
}

static axon_status_t make_dim_geom(const axon_dim_desc *d, dim_geom *g) {
  if (!d || d->ndim < 0 || d->ndim > AXON_MAX_DIMS)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "gather/scatter: bad descriptor");
  memset(g, 0, sizeof *g);
  g->numel = 1;
  g->ndim = d->ndim;
  for (int i = 0; i < d->ndim; i++) {
    g->sizes[i] = d->sizes[i];
    g->numel *= d->sizes[i];
    for (int k = 0; k < 3; k++) g->strides[k][i] = d->strides[k][i];
  }
  g->len = d->len;
  for (int k = 0; k < 3; k++) g->dstride[k] = d->dim_strides[k];
  g->dim_size = d->dim_size;
  return AXON_SUCCESS;
}

axon_status_t axon_gather(axon_stream_t stream, axon_dtype dtype, const axon_dim_desc *d) {
  dim_geom g;
  AXON_TRY(make_dim_geom(d, &g));
  if (g.numel == 0) return AXON_SUCCESS;
  if (!d->self || !d->index || !d->src)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "gather: missing buffer");
  axon_program_t program;
  AXON_TRY(family_program(stream, "index", dtype, &program));
  axon_arg args[] = {buffer_arg(d->self), buffer_arg(d->index), buffer_arg(d->src),
                     bytes_arg(&g, sizeof g)};
  return launch_1d(stream, program, "ix_gather", g.numel, args, 4);
}

axon_status_t axon_scatter(axon_stream_t stream, axon_dtype dtype, const axon_dim_desc *d,
                           axon_scatter_mode mode, int include_self, int src_is_scalar,
                           double value, int64_t ivalue, double alpha) {
  dim_geom g;
  AXON_TRY(make_dim_geom(d, &g));
  if (g.numel == 0 || g.len == 0) return AXON_SUCCESS;
  if ((unsigned)mode > AXON_SCATTER_AMIN)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "scatter: bad mode %d", (int)mode);
  if (!d->self || !d->index || (!src_is_scalar && !d->src))
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "scatter: missing buffer");
  if (is_complex_dtype(dtype) && mode != AXON_SCATTER_ASSIGN && mode != AXON_SCATTER_SUM)
    return axon_fail(AXON_ERROR_UNSUPPORTED, "scatter: %s reduces only by assignment or sum",
                     axon_dtype_name(dtype));
  axon_program_t program;
  AXON_TRY(family_program(stream, "index", dtype, &program));
  int integral = is_int_dtype(dtype);
  int m = (int)mode, inc = include_self, sc = src_is_scalar;
  compute_scalar v = make_scalar(dtype, value, ivalue, integral);
  compute_scalar a = make_scalar(dtype, alpha, (int64_t)alpha, integral);
  axon_arg args[] = {buffer_arg(d->self),
                     buffer_arg(d->index),
                     buffer_arg(src_is_scalar ? d->self : d->src),
                     bytes_arg(&g, sizeof g),
                     bytes_arg(&m, sizeof m),
                     bytes_arg(&inc, sizeof inc),
                     bytes_arg(&sc, sizeof sc),
                     bytes_arg(&v.v, v.size),
                     bytes_arg(&a.v, a.size)};
  return launch_1d(stream, program, "ix_scatter", g.numel, args, 9);
}

static axon_status_t make_adv_geom(const axon_adv_desc *d, adv_geom *g) {
  if (!d || d->nr < 0 || d->nr > AXON_MAX_DIMS || d->nb < 0 || d->nb > AXON_MAX_DIMS ||
      d->nidx < 1 || d->nidx > AXON_MAX_DIMS)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "index: bad descriptor");
  memset(g, 0, sizeof *g);
  g->nr = d->nr;
  g->nb = d->nb;
  g->nidx = d->nidx;
  g->rnumel = g->bnumel = 1;
  for (int i = 0; i < d->nr; i++) {
    g->r_sizes[i] = d->r_sizes[i];
    g->r_self_strides[i] = d->r_self_strides[i];
    g->r_other_strides[i] = d->r_other_strides[i];
    g->rnumel *= d->r_sizes[i];
  }
  for (int i = 0; i < d->nb; i++) {
    g->b_sizes[i] = d->b_sizes[i];
    g->b_other_strides[i] = d->b_other_strides[i];
    g->bnumel *= d->b_sizes[i];
  }
  for (int i = 0; i < d->nidx; i++) {
    g->idx_sizes[i] = d->idx_sizes[i];
    g->idx_strides[i] = d->idx_strides[i];
  }
  return AXON_SUCCESS;
}

axon_status_t axon_index(axon_stream_t stream, axon_dtype dtype, const axon_adv_desc *d) {
  adv_geom g;
  AXON_TRY(make_adv_geom(d, &g));
  if (g.rnumel == 0 || g.bnumel == 0) return AXON_SUCCESS;
  if (!d->self || !d->indices || !d->other)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "index: missing buffer");
  axon_program_t program;
  AXON_TRY(family_program(stream, "index", dtype, &program));
  axon_arg args[] = {buffer_arg(d->other), buffer_arg(d->indices), buffer_arg(d->self),
                     bytes_arg(&g, sizeof g)};
  return launch_1d(stream, program, "ix_index", g.rnumel * g.bnumel, args, 4);
}

axon_status_t axon_index_put(axon_stream_t stream, axon_dtype dtype, const axon_adv_desc *d,
                             int accumulate) {
  adv_geom g;
  AXON_TRY(make_adv_geom(d, &g));
  if (g.rnumel == 0 || g.bnumel == 0) return AXON_SUCCESS;
  if (!d->self || !d->indices || !d->other)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "index_put: missing buffer");
  axon_program_t program;
  AXON_TRY(family_program(stream, "index", dtype, &program));
  int acc = accumulate;
  axon_arg args[] = {buffer_arg(d->self), buffer_arg(d->indices), buffer_arg(d->other),
                     bytes_arg(&g, sizeof g), bytes_arg(&acc, sizeof acc)};
  return launch_1d(stream, program, "ix_index_put", g.rnumel, args, 5);
}

static axon_status_t ew_geom_of(const axon_ew_desc *d, int noperands, ew_geom *g) {
  if (!d || d->ndim < 0 || d->ndim > AXON_MAX_DIMS)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "bad elementwise descriptor");
  memset(g, 0, sizeof *g);
  g->numel = 1;
  g->ndim = d->ndim;
  for (int i = 0; i < d->ndim; i++) {
    g->sizes[i] = d->sizes[i];
    g->numel *= d->sizes[i];
    for (int k = 0; k < noperands; k++) g->strides[k][i] = d->strides[k][i];
  }
  return AXON_SUCCESS;
}

axon_status_t axon_tri(axon_stream_t stream, axon_dtype dtype, const axon_ew_desc *d, int64_t k,
                       int lower) {
  ew_geom g;
  AXON_TRY(ew_geom_of(d, 2, &g));
  if (g.numel == 0) return AXON_SUCCESS;
  if (d->ndim < 2) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "tril/triu: need 2 dims");
  axon_program_t program;
  AXON_TRY(family_program(stream, "index", dtype, &program));
  int lo = lower;
  axon_arg args[] = {buffer_arg(d->data[0]), buffer_arg(d->data[1]), bytes_arg(&g, sizeof g),
                     bytes_arg(&k, sizeof k), bytes_arg(&lo, sizeof lo)};
  return launch_1d(stream, program, "ix_tri", g.numel, args, 5);
}

axon_status_t axon_searchsorted(axon_stream_t stream, axon_dtype dtype, const axon_ew_desc *d,
                                const void *boundaries, const void *sorter, int64_t n,
                                int64_t per_row, int right, int out_int32) {
  ew_geom g;
  AXON_TRY(ew_geom_of(d, 2, &g));
  if (g.numel == 0) return AXON_SUCCESS;
  if (per_row <= 0) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "searchsorted: per_row <= 0");
  axon_program_t program;
  AXON_TRY(family_program(stream, "index", dtype, &program));
  /* Without boundaries (n == 0) nothing is read: the values stand in as the buffer. */
  const void *bnd = n > 0 ? boundaries : d->data[1];
  int r = right, hs = sorter != NULL, o32 = out_int32;
  axon_arg args[] = {buffer_arg(d->data[0]),
                     buffer_arg(d->data[1]),
                     buffer_arg(bnd),
                     buffer_arg(sorter ? sorter : bnd),
                     bytes_arg(&g, sizeof g),
                     bytes_arg(&n, sizeof n),
                     bytes_arg(&per_row, sizeof per_row),
                     bytes_arg(&r, sizeof r),
                     bytes_arg(&hs, sizeof hs),
                     bytes_arg(&o32, sizeof o32)};
  return launch_1d(stream, program, "ix_searchsorted", g.numel, args, 10);
}

axon_status_t axon_nonzero_write(axon_stream_t stream, axon_dtype dtype, const axon_ew_desc *d,
                                 const void *positions) {
  ew_geom g;
  AXON_TRY(ew_geom_of(d, 2, &g));
  if (g.numel == 0) return AXON_SUCCESS;
  if (!d->data[0] || !d->data[1] || !positions)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "nonzero: missing buffer");
  axon_program_t program;
  AXON_TRY(family_program(stream, "index", dtype, &program));
  axon_arg args[] = {buffer_arg(d->data[0]), buffer_arg(d->data[1]), buffer_arg(positions),
                     bytes_arg(&g, sizeof g)};
  return launch_1d(stream, program, "ix_nonzero", g.numel, args, 4);
}

axon_status_t axon_histc(axon_stream_t stream, axon_dtype dtype, const axon_ew_desc *d,
                         void *counts, int64_t bins, double lo, double hi) {
  ew_geom g;
  AXON_TRY(ew_geom_of(d, 2, &g));
  if (g.numel == 0) return AXON_SUCCESS;
  if (bins <= 0 || !counts || !d->data[1])
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "histc: bad arguments");
  if (dtype == AXON_BOOL) return axon_fail(AXON_ERROR_UNSUPPORTED, "histc: bool input");
  axon_program_t program;
  AXON_TRY(family_program(stream, "index", dtype, &program));
  compute_scalar l = make_scalar(dtype, lo, 0, 0), h = make_scalar(dtype, hi, 0, 0);
  axon_arg args[] = {buffer_arg(counts),      buffer_arg(d->data[1]),
                     bytes_arg(&g, sizeof g), bytes_arg(&bins, sizeof bins),
                     bytes_arg(&l.v, l.size), bytes_arg(&h.v, h.size)};
  return launch_1d(stream, program, "ix_histc", g.numel, args, 6);
}
