/* Launches the Philox generator (kernels/random.cl). */
#include "axon/random.h"
#include "launch_common.h"

/* kind: an axon_random_kind or an axon_distribution (one numbering, kernel random_fill). */
static axon_status_t random_fill(axon_stream_t stream, axon_dtype dtype, int kind,
                                 const axon_ew_desc *d, uint64_t seed, uint64_t offset, double a,
                                 double b) {
  if (dtype != AXON_F32 && dtype != AXON_F64 && dtype != AXON_F16 && dtype != AXON_BF16)
    return axon_fail(AXON_ERROR_UNSUPPORTED, "random numbers are generated in floating types only");
  if (d->ndim > AXON_MAX_DIMS) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "too many dims");
  ew_geom g;
  memset(&g, 0, sizeof g);
  g.numel = 1;
  g.ndim = d->ndim;
  for (int i = 0; i < d->ndim; i++) {
    g.sizes[i] = d->sizes[i];
    g.strides[0][i] = d->strides[0][i];
    g.numel *= d->sizes[i];
  }
  if (g.numel == 0) return AXON_SUCCESS;
  axon_program_t program;
  AXON_TRY(family_program(stream, "random", dtype, &program));
  int k = kind;
  compute_scalar sa = make_scalar(dtype, a, 0, 0), sb = make_scalar(dtype, b, 0, 0);
  axon_arg args[] = {buffer_arg(d->data[0]),   bytes_arg(&g, sizeof g), bytes_arg(&seed, 8),
                     bytes_arg(&offset, 8),    bytes_arg(&k, sizeof k), bytes_arg(&sa.v, sa.size),
                     bytes_arg(&sb.v, sb.size)};
  size_t local = group_size(stream), global = axon_round_up((size_t)g.numel, local);
  return axon_launch(program, "random_fill", stream, 1, &global, &local, args, 7);
}

axon_status_t axon_random(axon_stream_t stream, axon_dtype dtype, axon_random_kind kind,
                          const axon_ew_desc *d, uint64_t seed, uint64_t offset, double a,
                          double b) {
  return random_fill(stream, dtype, (int)kind, d, seed, offset, a, b);
}

axon_status_t axon_random_distribution(axon_stream_t stream, axon_dtype dtype,
                                       axon_distribution kind, const axon_ew_desc *d, uint64_t seed,
                                       uint64_t offset, double a, double b) {
  return random_fill(stream, dtype, (int)kind, d, seed, offset, a, b);
}

axon_status_t axon_random_int(axon_stream_t stream, axon_dtype dtype, const axon_ew_desc *d,
                              uint64_t seed, uint64_t offset, uint64_t range, int64_t base) {
  if (!d || d->ndim < 0 || d->ndim > AXON_MAX_DIMS)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "random_int: bad descriptor");
  ew_geom g;
  memset(&g, 0, sizeof g);
  g.numel = 1;
  g.ndim = d->ndim;
  for (int i = 0; i < d->ndim; i++) {
    g.sizes[i] = d->sizes[i];
    g.strides[0][i] = d->strides[0][i];
    g.numel *= d->sizes[i];
  }
  if (g.numel == 0) return AXON_SUCCESS;
  axon_program_t program;
  AXON_TRY(family_program(stream, "random", dtype, &program));
  axon_arg args[] = {buffer_arg(d->data[0]), bytes_arg(&g, sizeof g), bytes_arg(&seed, 8),
                     bytes_arg(&offset, 8),  bytes_arg(&range, 8),    bytes_arg(&base, 8)};
  size_t local = group_size(stream), global = axon_round_up((size_t)g.numel, local);
  return axon_launch(program, "random_int_fill", stream, 1, &global, &local, args, 6);
}
