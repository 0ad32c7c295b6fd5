/* Launches softmax and negative log-likelihood (kernels/nn.cl). */
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
  AXON_TRY(family_program(stream, "nn", dtype, &program));
  int grouped = row_per_group(stream, d->dim);
  /* float32 rows contiguous in memory on a CPU: the vectorised rows kernels (nn.cl). */
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

axon_status_t axon_nll_forward(axon_stream_t stream, axon_dtype dtype, const axon_nll_desc *d) {
  axon_program_t program;
  AXON_TRY(family_program(stream, "nn", dtype, &program));
  int has_weight = d->weight != NULL;
  const void *weight = has_weight ? d->weight : d->input;
  if (d->reduction == 0) {
    if (d->n == 0) return AXON_SUCCESS;
    axon_arg args[] = {buffer_arg(d->input),
                       buffer_arg(d->target),
                       buffer_arg(weight),
                       buffer_arg(d->out),
                       bytes_arg(&d->n, 8),
                       bytes_arg(&d->c, 8),
                       bytes_arg(&d->ignore_index, 8),
                       bytes_arg(&has_weight, sizeof(int))};
    size_t local = group_size(stream), global = axon_round_up((size_t)d->n, local);
    return axon_launch(program, "nll_none", stream, 1, &global, &local, args, 8);
  }
  int mean = d->reduction == 1;
  /* An empty batch still writes the reduced loss (0, or NaN for the mean). */
  const void *input = d->n ? d->input : d->out, *target = d->n ? d->target : d->out;
  axon_arg args[] = {buffer_arg(input),
                     buffer_arg(target),
                     buffer_arg(weight),
                     buffer_arg(d->out),
                     buffer_arg(d->total_weight),
                     bytes_arg(&d->n, 8),
                     bytes_arg(&d->c, 8),
                     bytes_arg(&d->ignore_index, 8),
                     bytes_arg(&has_weight, sizeof(int)),
                     bytes_arg(&mean, sizeof(int))};
  size_t local = 256, global = 256;
  return axon_launch(program, "nll_reduce", stream, 1, &global, &local, args, 10);
}

axon_status_t axon_nll_backward(axon_stream_t stream, axon_dtype dtype, const axon_nll_desc *d) {
  if (d->n == 0) return AXON_SUCCESS;
  axon_program_t program;
  AXON_TRY(family_program(stream, "nn", dtype, &program));
  int has_weight = d->weight != NULL, reduction = d->reduction;
  const void *weight = has_weight ? d->weight : d->grad_out;
  const void *total = d->total_weight ? d->total_weight : d->grad_out;
  axon_arg args[] = {buffer_arg(d->grad_out),
                     buffer_arg(d->target),
                     buffer_arg(weight),
                     buffer_arg(total),
                     buffer_arg(d->grad_in),
                     bytes_arg(&d->n, 8),
                     bytes_arg(&d->c, 8),
                     bytes_arg(&d->ignore_index, 8),
                     bytes_arg(&has_weight, sizeof(int)),
                     bytes_arg(&reduction, sizeof(int))};
  size_t local = group_size(stream), global = axon_round_up((size_t)d->n, local);
  return axon_launch(program, "nll_backward", stream, 1, &global, &local, args, 10);
}
