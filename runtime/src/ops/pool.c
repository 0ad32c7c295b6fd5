/* Launches max, average, adaptive average and adaptive max pooling, and fractional max pooling
 * (kernels/pool.cl; axon/pool.h). */
#include "axon/pool.h"

#include <stdio.h>

#include "args_launch.h"
#include "spatial.h"

static const char *pool_name(axon_pool_kind kind) {
  switch (kind) {
    case AXON_POOL_MAX:
      return "max_pool";
    case AXON_POOL_AVG:
      return "avg_pool";
    case AXON_POOL_ADAPTIVE_AVG:
      return "adaptive_avg_pool";
    case AXON_POOL_ADAPTIVE_MAX:
      return "adaptive_max_pool";
  }
  return NULL;
}

static axon_status_t pool_launch(axon_stream_t stream, axon_dtype dtype, axon_pool_kind kind,
                                 const axon_spatial_desc *d, int backward) {
  const char *base = pool_name(kind);
  if (!base) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "pool: unknown kind %d", (int)kind);
  if (!stream) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL stream", base);
  int is_float = is_float_dtype(dtype);
  int with_index = kind == AXON_POOL_MAX || kind == AXON_POOL_ADAPTIVE_MAX;
  if (!with_index && !is_float && !(kind == AXON_POOL_AVG && dtype == AXON_I64))
    return axon_fail(AXON_ERROR_UNSUPPORTED_DTYPE,
                     "%s: %s is not supported (floating types%s only)", base,
                     axon_dtype_name(dtype), kind == AXON_POOL_AVG ? " and int64" : "");
  if (backward && !is_float)
    return axon_fail(AXON_ERROR_UNSUPPORTED_DTYPE, "%s backward: %s is not supported", base,
                     axon_dtype_name(dtype));
  sp_geom g;
  AXON_TRY(sp_geom_make(d, base, &g));
  if (kind == AXON_POOL_ADAPTIVE_AVG || kind == AXON_POOL_ADAPTIVE_MAX)
    for (int i = 0; i < 3; i++)
      if (g.in[i] == 0 && g.out[i] != 0)
        return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: empty input dim", base);
  int64_t total = backward ? sp_in_numel(&g) : sp_out_numel(&g);
  if (total == 0) return AXON_SUCCESS;
  if (!d->input || !d->output || (with_index && !d->indices))
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL data", base);
  axon_program_t program;
  AXON_TRY(family_program(stream, "pool", dtype, &program));
  char name[64];
  snprintf(name, sizeof name, backward ? "%s_backward" : "%s", base);
  axon_arg args[6];
  int n = 0;
  args[n++] = buffer_arg(backward ? d->output : d->input);
  if (with_index && backward) args[n++] = buffer_arg(d->indices);
  args[n++] = buffer_arg(backward ? d->input : d->output);
  if (with_index && !backward) args[n++] = buffer_arg(d->indices);
  args[n++] = bytes_arg(&g, sizeof g);
  args[n++] = bytes_arg(&total, 8);
  /* Max pooling on a CPU: a work-item per output row, in groups of one (PoCL would otherwise
   * interleave neighbouring rows into gathers): 8x64x112x112, 3x3 s2: 33 -> 25 ms. */
  if (kind == AXON_POOL_MAX && !backward && rows_per_item(stream)) {
    size_t rows = (size_t)(total / g.out[2]), local = 1;
    return axon_launch(program, "max_pool_rows", stream, 1, &rows, &local, args, n);
  }
  return sp_launch(stream, program, name, total, args, n);
}

axon_status_t axon_pool(axon_stream_t stream, axon_dtype dtype, axon_pool_kind kind,
                        const axon_spatial_desc *d) {
  return pool_launch(stream, dtype, kind, d, 0);
}

axon_status_t axon_pool_backward(axon_stream_t stream, axon_dtype dtype, axon_pool_kind kind,
                                 const axon_spatial_desc *d) {
  return pool_launch(stream, dtype, kind, d, 1);
}

/* ---- fractional max pooling (axon/pool.h) --------------------------------------------------- */

axon_status_t axon_fractional_max_pool(axon_stream_t stream, axon_dtype dtype,
                                       const axon_fractional_pool_desc *d) {
  static const args_kernel kernel = {"fractional_max_pool", 0};
  if (!d) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "fractional_max_pool: NULL descriptor");
  const axon_fractional_pool_args *a = &d->args;
  if (a->nd != 2 && a->nd != 3)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "fractional_max_pool: %lld spatial dims",
                     (long long)a->nd);
  int64_t items = a->n * a->channels * a->out_size[0] * a->out_size[1] * a->out_size[2];
  const void *b[] = {d->input, d->samples, d->output, d->indices};
  return args_launch(stream, dtype, "pool", &kernel, items, b, 4, a, sizeof *a);
}
