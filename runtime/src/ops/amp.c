/* Launches the GradScaler helpers (kernels/amp.cl). */
#include "launch_common.h"

axon_status_t axon_amp_unscale(axon_stream_t stream, axon_dtype dtype, void *x, int64_t n,
                               void *found_inf, const void *inv_scale) {
  if (n == 0) return AXON_SUCCESS;
  axon_program_t program;
  AXON_TRY(family_program(stream, "amp", dtype, &program));
  axon_arg args[] = {buffer_arg(x), buffer_arg(found_inf), buffer_arg(inv_scale), bytes_arg(&n, 8)};
  size_t local = group_size(stream), global = axon_round_up((size_t)n, local);
  axon_status_t st = axon_launch(program, "amp_unscale", stream, 1, &global, &local, args, 4);
  if (st == CL_INVALID_KERNEL_NAME)
    return axon_fail(AXON_ERROR_UNSUPPORTED, "unscaling %s gradients is not supported",
                     axon_dtype_name(dtype));
  return st;
}

axon_status_t axon_amp_update_scale(axon_stream_t stream, void *scale, void *growth_tracker,
                                    const void *found_inf, float growth, float backoff,
                                    int interval) {
  axon_program_t program;
  AXON_TRY(family_program(stream, "amp", AXON_F32, &program));
  axon_arg args[] = {buffer_arg(scale),
                     buffer_arg(growth_tracker),
                     buffer_arg(found_inf),
                     bytes_arg(&growth, sizeof growth),
                     bytes_arg(&backoff, sizeof backoff),
                     bytes_arg(&interval, sizeof interval)};
  size_t one = 1;
  return axon_launch(program, "amp_update_scale", stream, 1, &one, &one, args, 6);
}
