/* Launches the fused recurrent cells (kernels/rnn.cl). */
#include "launch_common.h"

/* The checks every cell launcher shares; *program is NULL when there is nothing to do. */
static axon_status_t cell_program(axon_stream_t stream, axon_dtype dtype, int64_t batch,
                                  int64_t hidden, const char *what, axon_program_t *program) {
  *program = NULL;
  if (!is_float_dtype(dtype))
    return axon_fail(AXON_ERROR_UNSUPPORTED_DTYPE, "%s: %s is not supported", what,
                     axon_dtype_name(dtype));
  if (batch < 0 || hidden < 0)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: negative sizes", what);
  if (batch == 0 || hidden == 0) return AXON_SUCCESS;
  return family_program(stream, "pointwise_math+rnn", dtype, program);
}

/* A buffer argument, or `stand_in` for an absent operand (its flag tells the kernel). */
static axon_arg optional_arg(const void *ptr, const void *stand_in) {
  return buffer_arg(ptr ? ptr : stand_in);
}

static axon_status_t cell_forward(axon_stream_t stream, axon_dtype dtype,
                                  const axon_rnn_cell_desc *d, int lstm) {
  const char *what = lstm ? "lstm_cell" : "gru_cell";
  if (!stream || !d) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL argument", what);
  axon_program_t program;
  AXON_TRY(cell_program(stream, dtype, d->batch, d->hidden, what, &program));
  if (!program) return AXON_SUCCESS;
  if (!d->input_gates || !d->hidden_gates || !d->state || !d->hy || !d->workspace ||
      (lstm && !d->cy) || (!d->input_bias != !d->hidden_bias))
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: missing data", what);
  int has_bias = d->input_bias != NULL;
  axon_arg args[11];
  int n = 0;
  args[n++] = buffer_arg(d->input_gates);
  args[n++] = buffer_arg(d->hidden_gates);
  args[n++] = optional_arg(d->input_bias, d->input_gates);
  args[n++] = optional_arg(d->hidden_bias, d->input_gates);
  args[n++] = buffer_arg(d->state);
  args[n++] = buffer_arg(d->hy);
  if (lstm) args[n++] = buffer_arg(d->cy);
  args[n++] = buffer_arg(d->workspace);
  args[n++] = bytes_arg(&d->batch, 8);
  args[n++] = bytes_arg(&d->hidden, 8);
  args[n++] = bytes_arg(&has_bias, sizeof has_bias);
  return launch_1d(stream, program, lstm ? "rnn_lstm_cell" : "rnn_gru_cell", d->batch * d->hidden,
                   args, n);
}

axon_status_t axon_lstm_cell(axon_stream_t stream, axon_dtype dtype, const axon_rnn_cell_desc *d) {
  return cell_forward(stream, dtype, d, 1);
}

axon_status_t axon_gru_cell(axon_stream_t stream, axon_dtype dtype, const axon_rnn_cell_desc *d) {
  return cell_forward(stream, dtype, d, 0);
}

axon_status_t axon_lstm_cell_backward(axon_stream_t stream, axon_dtype dtype,
                                      const axon_rnn_cell_bwd_desc *d) {
  if (!stream || !d)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "lstm_cell_backward: NULL argument");
  axon_program_t program;
  AXON_TRY(cell_program(stream, dtype, d->batch, d->hidden, "lstm_cell_backward", &program));
  if (!program) return AXON_SUCCESS;
  if (!d->cx || !d->cy || !d->workspace || !d->grad_gates || !d->grad_state)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "lstm_cell_backward: missing data");
  int has_ghy = d->grad_hy != NULL, has_gcy = d->grad_cy != NULL;
  axon_arg args[] = {optional_arg(d->grad_hy, d->cx),
                     optional_arg(d->grad_cy, d->cx),
                     buffer_arg(d->cx),
                     buffer_arg(d->cy),
                     buffer_arg(d->workspace),
                     buffer_arg(d->grad_gates),
                     buffer_arg(d->grad_state),
                     bytes_arg(&d->batch, 8),
                     bytes_arg(&d->hidden, 8),
                     bytes_arg(&has_ghy, sizeof has_ghy),
                     bytes_arg(&has_gcy, sizeof has_gcy)};
  return launch_1d(stream, program, "rnn_lstm_cell_backward", d->batch * d->hidden, args, 11);
}

axon_status_t axon_gru_cell_backward(axon_stream_t stream, axon_dtype dtype,
                                     const axon_rnn_cell_bwd_desc *d) {
  if (!stream || !d)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "gru_cell_backward: NULL argument");
  axon_program_t program;
  AXON_TRY(cell_program(stream, dtype, d->batch, d->hidden, "gru_cell_backward", &program));
  if (!program) return AXON_SUCCESS;
  if (!d->grad_hy || !d->workspace || !d->grad_gates || !d->grad_hidden_gates || !d->grad_state)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "gru_cell_backward: missing data");
  axon_arg args[] = {buffer_arg(d->grad_hy),    buffer_arg(d->workspace),
                     buffer_arg(d->grad_gates), buffer_arg(d->grad_hidden_gates),
                     buffer_arg(d->grad_state), bytes_arg(&d->batch, 8),
                     bytes_arg(&d->hidden, 8)};
  return launch_1d(stream, program, "rnn_gru_cell_backward", d->batch * d->hidden, args, 7);
}
