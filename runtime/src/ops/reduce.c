/* Launches the reduction family (kernels/reduce.cl). Besides the ops axon.h lists: "nansum", a
 * sum that skips NaN (floating types). */
#include <stdio.h>

#include "launch_common.h"

/* Mirrors red_geom in kernels/reduce.cl. */
typedef struct red_geom {
  int64_t out_ndim, red_ndim, out_numel, red_numel;
  int64_t out_sizes[AXON_MAX_DIMS];
  int64_t in_ostrides[AXON_MAX_DIMS];
  int64_t out_strides[AXON_MAX_DIMS];
  int64_t aux_strides[AXON_MAX_DIMS];
  int64_t red_sizes[AXON_MAX_DIMS];
  int64_t red_strides[AXON_MAX_DIMS];
} red_geom;

/* "maxidx"/"minidx" are argmax/argmin kernels that also store values. */
static const char *kernel_base(const char *op, int *with_index) {
  *with_index = 0;
  if (!strcmp(op, "maxidx")) {
    *with_index = 1;
    return "argmax";
  }
  if (!strcmp(op, "minidx")) {
    *with_index = 1;
    return "argmin";
  }
  return op;
}

/* float32 sums on CPU devices go to the float8 kernels (reduce.cl) when the reduced elements
 * run contiguous (an output per work-item), or eight neighbouring outputs do (eight per
 * work-item, in *outputs_per_item); NULL for the generic kernels. */
static const char *vector_sum_kernel(axon_stream_t stream, axon_dtype dtype, const char *base,
                                     const red_geom *g, int64_t *outputs_per_item) {
  *outputs_per_item = 1;
  if (dtype != AXON_F32 || strcmp(base, "sum") || !rows_per_item(stream) || g->red_numel == 0)
    return NULL;
  if (g->red_ndim >= 1 && g->red_strides[0] == 1 && g->red_sizes[0] >= 8) return "red_sum_rows";
  if (g->out_ndim >= 1 && g->in_ostrides[0] == 1 && g->out_sizes[0] % 8 == 0) {
    *outputs_per_item = 8;
    return "red_sum_cols";
  }
  return NULL;
}

axon_status_t axon_reduce(axon_stream_t stream, const char *op, axon_dtype dtype,
                          const axon_reduce_desc *d, double scale, double p) {
  if (!stream || !op || !d) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "reduce: NULL argument");
  if (d->out_ndim < 0 || d->out_ndim > AXON_MAX_DIMS || d->red_ndim < 0 ||
      d->red_ndim > AXON_MAX_DIMS)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "reduce: too many dimensions");
  red_geom g;
  memset(&g, 0, sizeof g);
  g.out_ndim = d->out_ndim;
  g.red_ndim = d->red_ndim;
  g.out_numel = g.red_numel = 1;
  for (int i = 0; i < d->out_ndim; i++) {
    g.out_sizes[i] = d->out_sizes[i];
    g.in_ostrides[i] = d->out_strides_in[i];
    g.out_strides[i] = d->out_strides_out[i];
    g.aux_strides[i] = d->out_aux_strides[i];
    g.out_numel *= d->out_sizes[i];
  }
  for (int i = 0; i < d->red_ndim; i++) {
    g.red_sizes[i] = d->red_sizes[i];
    g.red_strides[i] = d->red_strides[i];
    g.red_numel *= d->red_sizes[i];
  }
  if (g.out_numel == 0) return AXON_SUCCESS;
  int with_index;
  const char *base = kernel_base(op, &with_index);
  /* On a GPU long reductions get a work-group per output when the outputs are few, or when the
   * reduced elements lie contiguous in memory (a work-item per contiguous row reads uncoalesced:
   * the same choice took softmax over 4096 rows of 1024 from 57 to 1254 GB/s on an H200). The
   * rest, and all on a CPU, get a work-item per output. */
  int red_contiguous = 0;
  for (int i = 0; i < g.red_ndim; i++) red_contiguous |= g.red_strides[i] == 1;
  /* Where the driver caps a work-item's loops (quirks.h), every long reduction is grouped,
   * which divides the loop by the group; longer still is refused, never cut short. */
  int budget = stream && (stream->device->quirks & AXON_QUIRK_LOOP_BUDGET);
  int grouped = g.red_numel >= 512 && (g.out_numel < 2048 || red_contiguous || budget) &&
                !rows_per_item(stream);
  if (budget && g.red_numel / (grouped ? 256 : 1) > AXON_LOOP_BUDGET)
    return axon_loop_budget_refusal("reduction: loop iterations per work-item",
                                    (long long)(g.red_numel / (grouped ? 256 : 1)),
                                    AXON_LOOP_BUDGET);
  int64_t outputs_per_item;
  const char *vector_kernel = vector_sum_kernel(stream, dtype, base, &g, &outputs_per_item);
  char kernel[64];
  if (vector_kernel)
    snprintf(kernel, sizeof kernel, "%s", vector_kernel);
  else
    snprintf(kernel, sizeof kernel, grouped ? "red_%s" : "red_%s_serial", base);
  axon_program_t program;
  AXON_TRY(family_program(stream, "reduce", dtype, &program));
  compute_scalar sc = make_scalar(dtype, scale, 1, 0), pp = make_scalar(dtype, p, 0, 0);
  if (dtype != AXON_F32 && dtype != AXON_F64 && dtype != AXON_F16 && dtype != AXON_BF16)
    sc = make_scalar(dtype, 1.0, 1, 1); /* integer results are never scaled */
  int wi = with_index;
  void *out = d->out;
  void *index = with_index ? d->out_index : d->out;
  const void *aux = d->aux ? d->aux : d->in;
  axon_arg args[] = {buffer_arg(d->in),         buffer_arg(out),          buffer_arg(index),
                     buffer_arg(aux),           bytes_arg(&g, sizeof g),  bytes_arg(&sc.v, sc.size),
                     bytes_arg(&pp.v, pp.size), bytes_arg(&wi, sizeof wi)};
  /* Vector kernels run a work-item per group: PoCL then keeps their loops as written. */
  size_t local = grouped ? 256 : vector_kernel ? 1 : group_size(stream);
  size_t items = (size_t)(g.out_numel / outputs_per_item);
  size_t global = grouped ? (size_t)g.out_numel * 256 : axon_round_up(items, local);
  axon_status_t st = axon_launch(program, kernel, stream, 1, &global, &local, args, 8);
  if (st == CL_INVALID_KERNEL_NAME)
    return axon_fail(AXON_ERROR_UNSUPPORTED, "reduction \"%s\" has no %s kernel", op,
                     axon_dtype_name(dtype));
  return st;
}
