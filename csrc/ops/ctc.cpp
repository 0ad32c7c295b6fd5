// CTC loss and its gradient: the checks and the (host-side) lengths and target offsets here,
// the alpha and beta recursions in the runtime's ctc family (kernels/ctc.cl, axon/ctc.h).
#include <torch/library.h>

#include "axon_glue.h"
#include "nn_checks.h"

extern "C" {
#include "axon/ctc.h"
}

namespace axon {
namespace {

using at::Tensor;

void run_ctc(axon_ctc_kernel kernel, const Tensor& like, const axon_ctc_desc& d) {
  AXON_CHECK(axon_ctc(stream_for(like), to_axon_dtype(like.scalar_type()), kernel, &d));
}

struct CtcSetup {
  axon_ctc_args a{};
  Tensor tg_offset, input_lengths, target_lengths, targets;
};

// Checks the arguments and uploads the (host-side) lengths and per-sample target offsets.
CtcSetup ctc_setup(const Tensor& log_probs, const Tensor& targets, at::IntArrayRef il,
                   at::IntArrayRef tl, int64_t blank) {
  TORCH_CHECK(log_probs.dim() == 3, "ctc_loss: expected log_probs to be 3-D [T, N, C], got ",
              log_probs.sizes());
  TORCH_CHECK_NOT_IMPLEMENTED(
      log_probs.scalar_type() == at::kFloat || log_probs.scalar_type() == at::kDouble,
      "\"ctc_loss_cpu\" not implemented for '", c10::toString(log_probs.scalar_type()), "'");
  check_dtype_supported(log_probs.scalar_type(), log_probs.device().index());
  TORCH_CHECK(targets.scalar_type() == at::kLong || targets.scalar_type() == at::kInt,
              "ctc_loss: targets must be int32 or int64, got ", targets.scalar_type());
  int64_t T = log_probs.size(0), N = log_probs.size(1), C = log_probs.size(2);
  TORCH_CHECK(blank >= 0 && blank < C, "blank must be in label range");
  TORCH_CHECK(int64_t(il.size()) == N, "input_lengths must be of size batch_size");
  TORCH_CHECK(int64_t(tl.size()) == N, "target_lengths must be of size batch_size");
  std::vector<int64_t> offs(N);
  int64_t max_len = 0, pos = 0, tg_stride = 1;
  if (targets.dim() == 1) {
    for (int64_t b = 0; b < N; b++) {
      offs[b] = pos;
      pos += tl[b];
    }
    TORCH_CHECK(targets.numel() >= pos, "Expected tensor to have size at least ", pos,
                " at dimension 0, but got size ", targets.size(0), " for argument #2 'targets'");
    tg_stride = targets.numel() ? targets.stride(0) : 1;
    for (int64_t b = 0; b < N; b++) offs[b] *= tg_stride;
  } else {
    TORCH_CHECK(targets.dim() == 2 && targets.size(0) == N,
                "ctc_loss: expected targets of shape [N, S] or concatenated 1-D targets, got ",
                targets.sizes());
    tg_stride = targets.stride(1);
    for (int64_t b = 0; b < N; b++) {
      offs[b] = b * targets.stride(0);
      TORCH_CHECK(tl[b] <= targets.size(1), "Expected tensor to have size at least ", tl[b],
                  " at dimension 1, but got size ", targets.size(1), " for argument #2 'targets'");
    }
  }
  for (int64_t b = 0; b < N; b++) {
    TORCH_CHECK(tl[b] >= 0, "target_lengths must be non-negative");
    TORCH_CHECK(il[b] >= 0 && il[b] <= T, "Expected input_lengths to have value at most ", T,
                ", but got value ", il[b], " (while checking arguments for ctc_loss_cpu)");
    max_len = std::max(max_len, tl[b]);
  }
  auto to_device = [&](const std::vector<int64_t>& v) {
    return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(log_probs.device());
  };
  CtcSetup s;
  s.tg_offset = to_device(offs);
  s.input_lengths = to_device(il.vec());
  s.target_lengths = to_device(tl.vec());
  s.targets = targets;
  axon_ctc_args& a = s.a;
  a.time = T;
  a.batch = N;
  a.classes = C;
  a.max_positions = 2 * max_len + 1;
  a.blank = blank;
  for (int k = 0; k < 3; k++) a.log_probs_strides[k] = log_probs.stride(k);
  a.target_stride = tg_stride;
  a.targets_int32 = targets.scalar_type() == at::kInt;
  return s;
}

std::tuple<Tensor, Tensor> ctc_loss(const Tensor& log_probs, const Tensor& targets,
                                    at::IntArrayRef il, at::IntArrayRef tl, int64_t blank,
                                    bool /*zero_infinity: applied by ctc_loss above this op*/) {
  c10::DeviceGuard guard(log_probs.device());
  CtcSetup s = ctc_setup(log_probs, targets, il, tl, blank);
  int64_t T = s.a.time, N = s.a.batch;
  Tensor nll = at::empty({N}, log_probs.options());
  Tensor log_alpha = at::empty({N, T, s.a.max_positions}, log_probs.options());
  Tensor tg = targets.numel() ? targets : at::zeros({1}, targets.options());
  axon_ctc_desc d{};
  d.args = s.a;
  d.log_probs = data_or_null(log_probs);
  d.targets = data_or_null(tg);
  d.target_offsets = data_or_null(s.tg_offset);
  d.input_lengths = data_or_null(s.input_lengths);
  d.target_lengths = data_or_null(s.target_lengths);
  d.log_alpha = data_or_null(log_alpha);
  d.nll = data_or_null(nll);
  run_ctc(AXON_CTC_ALPHA, log_probs, d);
  return {nll, log_alpha};
}

// The gradient: log-beta by the mirrored recursion, then each (t, class) from the alpha-beta
// products of the positions carrying that label, as PyTorch's CPU kernel computes it.
Tensor ctc_loss_backward(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                         at::IntArrayRef il, at::IntArrayRef tl, const Tensor& nll,
                         const Tensor& log_alpha, int64_t blank, bool zero_infinity) {
  c10::DeviceGuard guard(log_probs.device());
  CtcSetup s = ctc_setup(log_probs, targets, il, tl, blank);
  int64_t T = s.a.time, N = s.a.batch, C = s.a.classes;
  Tensor out = at::empty({T, N, C}, log_probs.options());
  Tensor log_beta = at::empty(log_alpha.sizes(), log_alpha.options());
  Tensor tg = targets.numel() ? targets : at::zeros({1}, targets.options());
  if (N > 0 && T * C > 0) {
    Tensor nll_c = nll.contiguous(), alpha_c = log_alpha.contiguous();
    axon_ctc_desc d{};
    d.args = s.a;
    d.args.zero_infinity = zero_infinity;
    d.args.grad_out_stride = grad.dim() > 0 && grad.numel() > 1 ? grad.stride(0) : 0;
    d.grad_output = data_or_null(grad);
    d.log_probs = data_or_null(log_probs);
    d.targets = data_or_null(tg);
    d.target_offsets = data_or_null(s.tg_offset);
    d.input_lengths = data_or_null(s.input_lengths);
    d.target_lengths = data_or_null(s.target_lengths);
    d.nll = data_or_null(nll_c);
    d.log_alpha = data_or_null(alpha_c);
    d.log_beta = data_or_null(log_beta);
    d.grad = data_or_null(out);
    run_ctc(AXON_CTC_GRAD, log_probs, d);
  }
  return out;
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("_ctc_loss", ctc_loss);
  m.impl("_ctc_loss_backward", ctc_loss_backward);
}

}  // namespace axon
