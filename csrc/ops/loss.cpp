// Negative log-likelihood (1-d and 2-d targets) and mean squared error losses, forward and
// backward: the runtime's loss family (axon_nll_forward, kernels/loss.cl) and native pointwise
// ops. The margin losses are in margin_loss.cpp, CTC in ctc.cpp, the pointwise losses (smooth
// l1, huber, binary cross entropy) in elementwise_activations.cpp.
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Tensor;

// ---- negative log-likelihood and mean squared error --------------------------------------------

enum { kReductionNone = 0, kReductionMean = 1, kReductionSum = 2 };

// PyTorch's reduction enum: 0 none, 1 mean, 2 sum (the runtime uses the same numbering).
std::tuple<Tensor&, Tensor&> nll_forward_out(const Tensor& self, const Tensor& target,
                                             const std::optional<Tensor>& weight, int64_t reduction,
                                             int64_t ignore_index, Tensor& output,
                                             Tensor& total_weight) {
  TORCH_CHECK(self.dim() >= 1 && self.dim() <= 2, "input tensor should be 1D or 2D");
  TORCH_CHECK(target.scalar_type() == at::kLong, "expected scalar type Long but found ",
              target.scalar_type());
  c10::DeviceGuard guard(self.device());
  Tensor x = self.dim() == 1 ? self.unsqueeze(0).contiguous() : self.contiguous();
  Tensor t = target.reshape({-1}).contiguous();
  TORCH_CHECK(t.numel() == x.size(0), "Expected input batch_size (", x.size(0),
              ") to match target batch_size (", t.numel(), ").");
  Tensor w = weight.has_value() && weight->defined() ? weight->contiguous() : Tensor();
  if (reduction == kReductionNone && self.dim() == 2)
    at::native::resize_output(output, {x.size(0)});
  else
    at::native::resize_output(output, {});
  at::native::resize_output(total_weight, {});
  Tensor out =
      output.is_contiguous() ? output : at::empty_like(output, at::MemoryFormat::Contiguous);
  axon_nll_desc d{};
  d.n = x.size(0);
  d.c = x.size(1);
  d.input = x.data_ptr();
  d.target = t.data_ptr();
  d.weight = w.defined() ? w.data_ptr() : nullptr;
  d.out = out.data_ptr();
  d.total_weight = total_weight.data_ptr();
  d.ignore_index = ignore_index;
  d.reduction = int(reduction);
  AXON_CHECK(axon_nll_forward(stream_for(x), to_axon_dtype(x.scalar_type()), &d));
  if (reduction == kReductionNone) total_weight.zero_();
  if (!out.is_same(output)) output.copy_(out);
  return {output, total_weight};
}

// gi (contiguous [n, c], any previous contents) = d loss / d input.
void nll_backward_into(const Tensor& grad_output, const Tensor& target,
                       const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                       const Tensor& total_weight, int64_t n, int64_t c, const Tensor& gi) {
  gi.zero_();
  Tensor t = target.reshape({-1}).contiguous();
  Tensor g = grad_output.contiguous();
  Tensor w = weight.has_value() && weight->defined() ? weight->contiguous() : Tensor();
  axon_nll_desc d{};
  d.n = n;
  d.c = c;
  d.target = t.data_ptr();
  d.weight = w.defined() ? w.data_ptr() : nullptr;
  d.total_weight = total_weight.data_ptr();
  d.grad_out = g.data_ptr();
  d.grad_in = gi.data_ptr();
  d.ignore_index = ignore_index;
  d.reduction = int(reduction);
  AXON_CHECK(axon_nll_backward(stream_for(gi), to_axon_dtype(gi.scalar_type()), &d));
}

Tensor& nll_backward_out(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                         const std::optional<Tensor>& weight, int64_t reduction,
                         int64_t ignore_index, const Tensor& total_weight, Tensor& grad_input) {
  c10::DeviceGuard guard(self.device());
  at::native::resize_output(grad_input, self.sizes());
  Tensor gi =
      grad_input.is_contiguous() ? grad_input : at::empty_like(self, at::MemoryFormat::Contiguous);
  nll_backward_into(grad_output, target, weight, reduction, ignore_index, total_weight,
                    self.dim() == 1 ? 1 : self.size(0), self.size(-1), gi);
  if (!gi.is_same(grad_input)) grad_input.copy_(gi);
  return grad_input;
}

// nll_loss2d: input [N, C, H, W], target [N, H, W]. Classes move last so each pixel is a row
// of the 1-d kernels.
std::tuple<Tensor&, Tensor&> nll2d_forward_out(const Tensor& self, const Tensor& target,
                                               const std::optional<Tensor>& weight,
                                               int64_t reduction, int64_t ignore_index,
                                               Tensor& output, Tensor& total_weight) {
  TORCH_CHECK(self.dim() == 4 && target.dim() == 3,
              "nll_loss2d expects a 4-D input and a 3-D target, got ", self.dim(), "-D and ",
              target.dim(), "-D");
  Tensor rows = self.movedim(1, -1).reshape({-1, self.size(1)});
  Tensor flat = at::empty({0}, output.options());
  nll_forward_out(rows, target.reshape({-1}), weight, reduction, ignore_index, flat, total_weight);
  if (reduction == kReductionNone) {
    at::native::resize_output(output, target.sizes());
    output.copy_(flat.view(target.sizes()));
  } else {
    at::native::resize_output(output, {});
    output.copy_(flat);
  }
  return {output, total_weight};
}

Tensor& nll2d_backward_out(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                           const std::optional<Tensor>& weight, int64_t reduction,
                           int64_t ignore_index, const Tensor& total_weight, Tensor& grad_input) {
  c10::DeviceGuard guard(self.device());
  int64_t n = self.size(0) * self.size(2) * self.size(3), c = self.size(1);
  Tensor rows = at::empty({n, c}, self.options());
  nll_backward_into(grad_output, target, weight, reduction, ignore_index, total_weight, n, c, rows);
  at::native::resize_output(grad_input, self.sizes());
  return grad_input.copy_(rows.view({self.size(0), self.size(2), self.size(3), c}).movedim(-1, 1));
}

Tensor& mse_loss_out(const Tensor& self, const Tensor& target, int64_t reduction, Tensor& out) {
  Tensor diff = at::sub(self, target);
  Tensor sq = diff.mul_(diff);
  if (reduction == kReductionNone) {
    at::native::resize_output(out, sq.sizes());
    return out.copy_(sq);
  }
  Tensor r = reduction == kReductionMean ? sq.mean() : sq.sum();
  at::native::resize_output(out, {});
  return out.copy_(r);
}

Tensor& mse_loss_backward_out(const Tensor& grad, const Tensor& self, const Tensor& target,
                              int64_t reduction, Tensor& grad_input) {
  double norm = reduction == kReductionMean ? 2.0 / double(self.numel()) : 2.0;
  Tensor r = at::sub(self, target).mul_(grad).mul_(norm);
  at::native::resize_output(grad_input, r.sizes());
  return grad_input.copy_(r);
}

Tensor mse_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                         int64_t reduction) {
  Tensor out = at::empty({0}, self.options());
  return mse_loss_backward_out(grad, self, target, reduction, out);
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("nll_loss_forward.output", nll_forward_out);
  m.impl("nll_loss_backward.grad_input", nll_backward_out);
  m.impl("nll_loss2d_forward.output", nll2d_forward_out);
  m.impl("nll_loss2d_backward.grad_input", nll2d_backward_out);
  m.impl("nll_loss2d_forward",
         [](const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
            int64_t reduction, int64_t ignore_index) -> std::tuple<Tensor, Tensor> {
           Tensor out = at::empty({0}, self.options()), total = at::empty({}, self.options());
           nll2d_forward_out(self, target, weight, reduction, ignore_index, out, total);
           return {out, total};
         });
  m.impl("nll_loss2d_backward",
         [](const Tensor& grad, const Tensor& self, const Tensor& target,
            const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
            const Tensor& total_weight) -> Tensor {
           Tensor gi = at::empty_like(self);
           return nll2d_backward_out(grad, self, target, weight, reduction, ignore_index,
                                     total_weight, gi);
         });
  m.impl("mse_loss.out", mse_loss_out);
  m.impl("mse_loss_backward", mse_loss_backward);
  m.impl("mse_loss_backward.grad_input", mse_loss_backward_out);
}

}  // namespace axon
