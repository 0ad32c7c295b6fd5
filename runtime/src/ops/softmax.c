/* Launches softmax, log-softmax and safe softmax, forward and backward (kernels/softmax.cl). */
#include <stdio.h>

#include "launch_common.h"

/* On a GPU long rows get a work-group each (coalesced reads, whatever the row count: a
 * work-item per 1024-long row ran at 2% of PyTorch CUDA's softmax on an H200); short rows, and
 * all rows on a CPU, a work-item each. */
static int row_per_group(axon_stream_t stream, int64_t dim) {
  return dim >= 256 && !rows_per_item(stream);
}

static axon_status_t softmax_launch(axon_stream_t stream, axon_dtype dtype, const char *kernel,
                                    const axon_softmax_desc *d, const axon_arg *buffers,
                                    int nbuffers) {
  int64_t rows = d->outer * d->inner;
  if (rows == 0 || d->dim == 0) return AXON_SUCCESS;
  axon_program_t program;
  AXON_TRY(family_program(stream, "softmax", dtype, &program));
  int grouped = row_per_group(stream, d->dim);
  /* float32 rows contiguous in memory on a CPU: the vectorised rows kernels (softmax.cl). */
  int vector_rows = dtype == AXON_F32 && d->inner == 1 && rows_per_item(stream);
  char name[64];
  snprintf(name, sizeof name, vector_rows ? "%s_rows" : grouped ? "%s" : "%s_serial", kernel);
  int log_mode = (int)d->mode;
  axon_arg args[8];
  for (int i = 0; i < nbuffers; i++) args[i] = buffers[i];
  args[nbuffers + 0] = bytes_arg(&rows, 8);
  args[nbuffers + 1] = bytes_arg(&d->dim, 8);
  args[nbuffers + 2] = bytes_arg(&d->inner, 8);
  args[nbuffers + 3] = bytes_arg(&log_mode, sizeof log_mode);
  /* On a CPU a row per group of one: the row's loops then run over contiguous memory instead
   * of gathering one element from each of 256 rows. */
  size_t local = grouped ? 256 : rows_per_item(stream) ? 1 : group_size(stream);
  size_t global = grouped ? (size_t)rows * 256 : axon_round_up((size_t)rows, local);
  return axon_launch(program, name, stream, 1, &global, &local, args, nbuffers + 4);
}

axon_status_t axon_softmax(axon_stream_t stream, axon_dtype dtype, const axon_softmax_desc *d) {
  if (d->mode != AXON_SOFTMAX && d->mode != AXON_SOFTMAX_LOG && d->mode != AXON_SOFTMAX_SAFE)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "softmax: unknown mode %d", (int)d->mode);
  axon_arg bufs[] = {buffer_arg(d->in), buffer_arg(d->result)};
  return softmax_launch(stream, dtype, "softmax", d, bufs, 2);
}

axon_status_t axon_softmax_backward(axon_stream_t stream, axon_dtype dtype,
                                    const axon_softmax_desc *d) {
  if (d->mode != AXON_SOFTMAX && d->mode != AXON_SOFTMAX_LOG)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT,
                     "softmax backward: mode %d (safe softmax differentiates as softmax)",
                     (int)d->mode);
  axon_arg bufs[] = {buffer_arg(d->in), buffer_arg(d->out), buffer_arg(d->result)};
  return softmax_launch(stream, dtype, "softmax_backward", d, bufs, 3);
}
