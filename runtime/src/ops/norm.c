/* Launches batch, layer and group normalization (kernels/norm.cl). */
#include "launch_common.h"

/* Mirrors norm_geom in kernels/norm.cl. */
typedef struct norm_geom {
  int64_t targets, na, nb, st, sa, sb;
  int64_t numel, gdiv, gmod, cdiv, cmod, count;
} norm_geom;

/* The accumulation type's scalar: float for float16 / bfloat16. */
static compute_scalar acc_scalar(axon_dtype dtype, double v) {
  return make_scalar(dtype == AXON_F64 ? AXON_F64 : AXON_F32, v, 0, 0);
}

static axon_status_t prepare(axon_stream_t stream, axon_dtype dtype, const axon_norm_desc *d,
                             const char *what, norm_geom *g, axon_program_t *program) {
  if (!stream || !d) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL argument", what);
  if (!is_float_dtype(dtype))
    return axon_fail(AXON_ERROR_UNSUPPORTED_DTYPE, "%s: %s is not supported (floating types only)",
                     what, axon_dtype_name(dtype));
  if (d->targets < 0 || d->na < 0 || d->nb < 0 || d->numel < 0 || d->gdiv < 1 || d->gmod < 1 ||
      d->cdiv < 1 || d->cmod < 1)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: bad geometry", what);
  norm_geom t = {d->targets, d->na,   d->nb,   d->st,   d->sa,   d->sb,
                 d->numel,   d->gdiv, d->gmod, d->cdiv, d->cmod, d->count};
  *g = t;
  return family_program(stream, "norm", dtype, program);
}

/* A work-group per target: 256 items for long targets, 64 for short ones; on a CPU one item
 * (the kernels' group sums then reduce nothing, see rows_per_item). */
static axon_status_t per_target(axon_stream_t stream, axon_program_t program, const char *name,
                                const norm_geom *g, const axon_arg *args, int nargs) {
  if (g->targets == 0) return AXON_SUCCESS;
  size_t local = rows_per_item(stream) ? 1 : g->na * g->nb >= 1024 ? 256 : 64;
  size_t max_local = group_size(stream);
  if (local > max_local) local = max_local;
  size_t global = (size_t)g->targets * local;
  return axon_launch(program, name, stream, 1, &global, &local, args, nargs);
}

/* 2-D: dim 0 runs inside a statistics group (gdiv elements), dim 1 over the groups (see
 * NORM_ELEMENT in kernels/norm.cl). */
static axon_status_t per_element(axon_stream_t stream, axon_program_t program, const char *name,
                                 const norm_geom *g, const axon_arg *args, int nargs) {
  if (g->numel == 0) return AXON_SUCCESS;
  size_t local[2] = {group_size_for(stream, g->gdiv), 1};
  size_t global[2] = {axon_round_up((size_t)g->gdiv, local[0]),
                      (size_t)((g->numel + g->gdiv - 1) / g->gdiv)};
  return axon_launch(program, name, stream, 2, global, local, args, nargs);
}

axon_status_t axon_norm_stats(axon_stream_t stream, axon_dtype dtype, const axon_norm_desc *d) {
  norm_geom g;
  axon_program_t program;
  AXON_TRY(prepare(stream, dtype, d, "norm_stats", &g, &program));
  if (g.targets == 0) return AXON_SUCCESS;
  int update = d->running_mean != NULL && d->running_var != NULL;
  compute_scalar eps = acc_scalar(dtype, d->eps), mom = acc_scalar(dtype, d->momentum);
  axon_arg args[] = {buffer_arg(d->x),
                     buffer_arg(d->mean),
                     buffer_arg(d->rstd),
                     buffer_arg(update ? d->running_mean : d->mean),
                     buffer_arg(update ? d->running_var : d->rstd),
                     bytes_arg(&g, sizeof g),
                     bytes_arg(&eps.v, eps.size),
                     bytes_arg(&mom.v, mom.size),
                     bytes_arg(&update, sizeof update)};
  if (g.na * g.nb == 0) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "norm_stats: empty groups");
  if (dtype == AXON_F32 && g.na == 1 && g.sb == 1 && rows_per_item(stream)) {
    size_t local = 1, global = (size_t)g.targets; /* contiguous rows: norm_stats_rows */
    return axon_launch(program, "norm_stats_rows", stream, 1, &global, &local, args, 9);
  }
  return per_target(stream, program, "norm_stats", &g, args, 9);
}

axon_status_t axon_norm_apply(axon_stream_t stream, axon_dtype dtype, const axon_norm_desc *d) {
  norm_geom g;
  axon_program_t program;
  AXON_TRY(prepare(stream, dtype, d, "norm_apply", &g, &program));
  int is_var = d->stat_is_var, hw = d->weight != NULL, hb = d->bias != NULL;
  compute_scalar eps = acc_scalar(dtype, d->eps);
  axon_arg args[] = {buffer_arg(d->x),
                     buffer_arg(d->mean),
                     buffer_arg(d->rstd),
                     buffer_arg(hw ? d->weight : d->mean),
                     buffer_arg(hb ? d->bias : d->mean),
                     buffer_arg(d->y),
                     bytes_arg(&g, sizeof g),
                     bytes_arg(&eps.v, eps.size),
                     bytes_arg(&is_var, sizeof(int)),
                     bytes_arg(&hw, sizeof(int)),
                     bytes_arg(&hb, sizeof(int))};
  /* float32 on a CPU with one channel per row, or a channel per position: the rows kernel. */
  if (dtype == AXON_F32 && rows_per_item(stream) &&
      (g.cdiv == g.gdiv || (g.cdiv == 1 && g.cmod == g.gdiv)) && g.numel > 0) {
    size_t local = 1, global = (size_t)(g.numel / g.gdiv);
    return axon_launch(program, "norm_apply_rows", stream, 1, &global, &local, args, 11);
  }
  return per_element(stream, program, "norm_apply", &g, args, 11);
}

axon_status_t axon_norm_sums(axon_stream_t stream, axon_dtype dtype, const axon_norm_desc *d) {
  norm_geom g;
  axon_program_t program;
  AXON_TRY(prepare(stream, dtype, d, "norm_sums", &g, &program));
  int is_var = d->stat_is_var, hw = d->weight != NULL;
  compute_scalar eps = acc_scalar(dtype, d->eps);
  if (g.targets && g.na * g.nb == 0)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "norm_sums: empty targets");
  axon_arg args[] = {buffer_arg(d->x),
                     buffer_arg(d->dy),
                     buffer_arg(d->mean),
                     buffer_arg(d->rstd),
                     buffer_arg(hw ? d->weight : d->mean),
                     buffer_arg(d->sum1),
                     buffer_arg(d->sum2),
                     bytes_arg(&g, sizeof g),
                     bytes_arg(&eps.v, eps.size),
                     bytes_arg(&is_var, sizeof(int)),
                     bytes_arg(&hw, sizeof(int))};
  return per_target(stream, program, "norm_sums", &g, args, 11);
}

axon_status_t axon_norm_backward(axon_stream_t stream, axon_dtype dtype, const axon_norm_desc *d) {
  norm_geom g;
  axon_program_t program;
  AXON_TRY(prepare(stream, dtype, d, "norm_backward", &g, &program));
  int is_var = d->stat_is_var, hw = d->weight != NULL, train = d->train;
  if (train && (!d->sum1 || !d->sum2 || d->count < 1))
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "norm_backward: training needs sums and a count");
  compute_scalar eps = acc_scalar(dtype, d->eps);
  axon_arg args[] = {buffer_arg(d->x),
                     buffer_arg(d->dy),
                     buffer_arg(d->mean),
                     buffer_arg(d->rstd),
                     buffer_arg(hw ? d->weight : d->mean),
                     buffer_arg(train ? d->sum1 : d->mean),
                     buffer_arg(train ? d->sum2 : d->mean),
                     buffer_arg(d->y),
                     bytes_arg(&g, sizeof g),
                     bytes_arg(&eps.v, eps.size),
                     bytes_arg(&is_var, sizeof(int)),
                     bytes_arg(&hw, sizeof(int)),
                     bytes_arg(&train, sizeof(int))};
  return per_element(stream, program, "norm_backward", &g, args, 13);
}
