// The fused recurrent cells: PyTorch's LSTM and GRU layers call _thnn_fused_lstm_cell /
// _thnn_fused_gru_cell (and their backward) on every device but the CPU, which has no kernel
// for them, so the CPU fallback cannot serve them. Shapes are checked here as CUDA checks
// them; the gate math runs in kernels/rnn.cl.
#include <torch/library.h>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Tensor;
using OptionalTensor = std::optional<Tensor>;

// gates [batch, G * hidden] twice, state [batch, hidden], both biases [G * hidden] or neither.
void check_cell(const char* op, int64_t gates_per_unit, const Tensor& input_gates,
                const Tensor& hidden_gates, const Tensor& state, const OptionalTensor& input_bias,
                const OptionalTensor& hidden_bias) {
  TORCH_CHECK(input_gates.dim() == 2 && state.dim() == 2, op,
              ": expected 2-d gates and state, got ", input_gates.sizes(), " and ", state.sizes());
  TORCH_CHECK(hidden_gates.sizes() == input_gates.sizes(), op,
              ": input and hidden gates differ in size: ", input_gates.sizes(), " vs ",
              hidden_gates.sizes());
  TORCH_CHECK(
      input_gates.size(0) == state.size(0) && input_gates.size(1) == gates_per_unit * state.size(1),
      op, ": gates ", input_gates.sizes(), " do not match the state ", state.sizes(), " (",
      gates_per_unit, " gates per unit)");
  bool has_bias = input_bias.has_value() && input_bias->defined();
  TORCH_CHECK(has_bias == (hidden_bias.has_value() && hidden_bias->defined()), op,
              ": give both biases or neither");
  for (const Tensor& t : {hidden_gates, state}) {
    TORCH_CHECK(t.device() == input_gates.device(), op, ": tensors on ", input_gates.device(),
                " and ", t.device());
    TORCH_CHECK(t.scalar_type() == input_gates.scalar_type(), op, ": dtypes ",
                input_gates.scalar_type(), " and ", t.scalar_type(), " differ");
  }
  if (has_bias)
    for (const Tensor& b : {*input_bias, *hidden_bias})
      TORCH_CHECK(b.dim() == 1 && b.size(0) == input_gates.size(1) &&
                      b.scalar_type() == input_gates.scalar_type() &&
                      b.device() == input_gates.device(),
                  op, ": a bias must be [", input_gates.size(1), "] of ", input_gates.scalar_type(),
                  " on ", input_gates.device(), ", got ", b.sizes(), " of ", b.scalar_type());
  check_dtype_supported(input_gates.scalar_type(), input_gates.device().index());
}

// The forward descriptor over contiguous copies (kept alive by `keep`).
axon_rnn_cell_desc cell_desc(const Tensor& input_gates, const Tensor& hidden_gates,
                             const Tensor& state, const OptionalTensor& input_bias,
                             const OptionalTensor& hidden_bias, std::vector<Tensor>& keep) {
  auto in = [&](const Tensor& t) { return keep.emplace_back(t.contiguous()).data_ptr(); };
  axon_rnn_cell_desc d{};
  d.batch = state.size(0);
  d.hidden = state.size(1);
  d.input_gates = in(input_gates);
  d.hidden_gates = in(hidden_gates);
  d.state = in(state);
  if (input_bias.has_value() && input_bias->defined()) {
    d.input_bias = in(*input_bias);
    d.hidden_bias = in(*hidden_bias);
  }
  return d;
}

std::tuple<Tensor, Tensor, Tensor> lstm_cell(const Tensor& input_gates, const Tensor& hidden_gates,
                                             const Tensor& cx, const OptionalTensor& input_bias,
                                             const OptionalTensor& hidden_bias) {
  check_cell("_thnn_fused_lstm_cell", 4, input_gates, hidden_gates, cx, input_bias, hidden_bias);
  c10::DeviceGuard guard(input_gates.device());
  std::vector<Tensor> keep;
  axon_rnn_cell_desc d = cell_desc(input_gates, hidden_gates, cx, input_bias, hidden_bias, keep);
  Tensor hy = at::empty(cx.sizes(), cx.options()), cy = at::empty(cx.sizes(), cx.options());
  Tensor workspace = at::empty(input_gates.sizes(), input_gates.options());
  d.hy = hy.data_ptr();
  d.cy = cy.data_ptr();
  d.workspace = workspace.data_ptr();
  AXON_CHECK(axon_lstm_cell(stream_for(cx), to_axon_dtype(cx.scalar_type()), &d));
  return {hy, cy, workspace};
}

// Returns (grad_gates, grad_cx, grad_bias); grad_bias (the gates' gradient summed over the
// batch) only with has_bias.
std::tuple<Tensor, Tensor, Tensor> lstm_cell_backward(const OptionalTensor& grad_hy,
                                                      const OptionalTensor& grad_cy,
                                                      const Tensor& cx, const Tensor& cy,
                                                      const Tensor& workspace, bool has_bias) {
  bool ghy = grad_hy.has_value() && grad_hy->defined();
  bool gcy = grad_cy.has_value() && grad_cy->defined();
  if (!ghy && !gcy) return {Tensor(), Tensor(), Tensor()};  // as CUDA: nothing flows back
  TORCH_CHECK(workspace.dim() == 2 && cx.dim() == 2 && cy.sizes() == cx.sizes() &&
                  workspace.size(0) == cx.size(0) && workspace.size(1) == 4 * cx.size(1),
              "_thnn_fused_lstm_cell_backward: workspace ", workspace.sizes(), ", cx ", cx.sizes(),
              " and cy ", cy.sizes(), " do not match");
  for (const OptionalTensor& g : {grad_hy, grad_cy})
    if (g.has_value() && g->defined())
      TORCH_CHECK(g->sizes() == cx.sizes(), "_thnn_fused_lstm_cell_backward: gradient ", g->sizes(),
                  " does not match the state ", cx.sizes());
  c10::DeviceGuard guard(cx.device());
  std::vector<Tensor> keep;
  auto in = [&](const Tensor& t) { return keep.emplace_back(t.contiguous()).data_ptr(); };
  Tensor grad_gates = at::empty(workspace.sizes(), workspace.options());
  Tensor grad_cx = at::empty(cx.sizes(), cx.options());
  axon_rnn_cell_bwd_desc d{};
  d.batch = cx.size(0);
  d.hidden = cx.size(1);
  d.grad_hy = ghy ? in(*grad_hy) : nullptr;
  d.grad_cy = gcy ? in(*grad_cy) : nullptr;
  d.cx = in(cx);
  d.cy = in(cy);
  d.workspace = in(workspace);
  d.grad_gates = grad_gates.data_ptr();
  d.grad_state = grad_cx.data_ptr();
  AXON_CHECK(axon_lstm_cell_backward(stream_for(cx), to_axon_dtype(cx.scalar_type()), &d));
  return {grad_gates, grad_cx, has_bias ? grad_gates.sum(0) : Tensor()};
}

std::tuple<Tensor, Tensor> gru_cell(const Tensor& input_gates, const Tensor& hidden_gates,
                                    const Tensor& hx, const OptionalTensor& input_bias,
                                    const OptionalTensor& hidden_bias) {
  check_cell("_thnn_fused_gru_cell", 3, input_gates, hidden_gates, hx, input_bias, hidden_bias);
  c10::DeviceGuard guard(input_gates.device());
  std::vector<Tensor> keep;
  axon_rnn_cell_desc d = cell_desc(input_gates, hidden_gates, hx, input_bias, hidden_bias, keep);
  Tensor hy = at::empty(hx.sizes(), hx.options());
  Tensor workspace = at::empty({hx.size(0), 5 * hx.size(1)}, hx.options());
  d.hy = hy.data_ptr();
  d.workspace = workspace.data_ptr();
  AXON_CHECK(axon_gru_cell(stream_for(hx), to_axon_dtype(hx.scalar_type()), &d));
  return {hy, workspace};
}

// Returns (grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias, grad_hidden_bias).
std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor> gru_cell_backward(const Tensor& grad_hy,
                                                                     const Tensor& workspace,
                                                                     bool has_bias) {
  TORCH_CHECK(grad_hy.dim() == 2 && workspace.dim() == 2 && workspace.size(0) == grad_hy.size(0) &&
                  workspace.size(1) == 5 * grad_hy.size(1),
              "_thnn_fused_gru_cell_backward: workspace ", workspace.sizes(),
              " does not match the gradient ", grad_hy.sizes());
  c10::DeviceGuard guard(grad_hy.device());
  Tensor g = grad_hy.contiguous(), ws = workspace.contiguous();
  int64_t batch = g.size(0), hidden = g.size(1);
  Tensor grad_input_gates = at::empty({batch, 3 * hidden}, g.options());
  Tensor grad_hidden_gates = at::empty({batch, 3 * hidden}, g.options());
  Tensor grad_hx = at::empty({batch, hidden}, g.options());
  axon_rnn_cell_bwd_desc d{};
  d.batch = batch;
  d.hidden = hidden;
  d.grad_hy = g.data_ptr();
  d.workspace = ws.data_ptr();
  d.grad_gates = grad_input_gates.data_ptr();
  d.grad_hidden_gates = grad_hidden_gates.data_ptr();
  d.grad_state = grad_hx.data_ptr();
  AXON_CHECK(axon_gru_cell_backward(stream_for(g), to_axon_dtype(g.scalar_type()), &d));
  Tensor grad_input_bias = has_bias ? grad_input_gates.sum(0) : Tensor();
  Tensor grad_hidden_bias = has_bias ? grad_hidden_gates.sum(0) : Tensor();
  return {grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias, grad_hidden_bias};
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("_thnn_fused_lstm_cell", lstm_cell);
  m.impl("_thnn_fused_lstm_cell_backward_impl", lstm_cell_backward);
  m.impl("_thnn_fused_gru_cell", gru_cell);
  m.impl("_thnn_fused_gru_cell_backward", gru_cell_backward);
}

}  // namespace axon
