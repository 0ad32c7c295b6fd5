// Multi-class margin losses, multi_margin_loss and multilabel_margin_loss, forward and backward:
// shapes and the reduction here, the per-sample losses and gradients in the runtime's
// margin_loss family (kernels/margin_loss.cl, axon/margin_loss.h).
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "axon_glue.h"
#include "nn_checks.h"

extern "C" {
#include "axon/margin_loss.h"
}

namespace axon {
namespace {

using at::Tensor;

// ---- margin losses ---------------------------------------------------------------------------

constexpr int64_t kReductionNone = 0, kReductionMean = 1;

// A margin loss's incoming gradient: one per sample, or the reduced loss's single one.
Tensor loss_grad(const Tensor& grad, int64_t reduction, int64_t n) {
  return reduction == kReductionNone ? grad.reshape({n}).contiguous() : grad.reshape({1});
}

// The kernels' reduction parameters: whether the gradient is per sample, and the mean's 1/n.
void backward_reduction(axon_margin_loss_args& a, int64_t reduction, int64_t n) {
  a.grad_out_stride = reduction == kReductionNone ? 1 : 0;
  a.grad_scale = axon_real_of(reduction == kReductionMean ? 1.0 / double(n) : 1.0);
}

void run_margin(axon_margin_loss_kernel kernel, const Tensor& like,
                const axon_margin_loss_desc& d) {
  AXON_CHECK(axon_margin_loss(stream_for(like), to_axon_dtype(like.scalar_type()), kernel, &d));
}

// The per-sample losses reduced as asked; `keep_dim` keeps a [n] result for reduction none.
Tensor reduce_loss(const Tensor& per, int64_t reduction, bool keep_dim) {
  if (reduction == kReductionNone) return keep_dim ? per : per.reshape({});
  return reduction == kReductionMean ? per.mean() : per.sum();
}

Tensor& multi_margin_loss_out(const Tensor& self, const Tensor& target, const at::Scalar& p_,
                              const at::Scalar& margin, const std::optional<Tensor>& weight_,
                              int64_t reduction, Tensor& out) {
  c10::DeviceGuard guard(self.device());
  int64_t p = p_.toLong();
  TORCH_CHECK(p == 1 || p == 2, "only p == 1 and p == 2 supported");
  TORCH_CHECK(self.dim() <= 2 && (self.dim() == 0 || self.numel() > 0 || self.size(0) == 0),
              "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ",
              self.sizes());
  check_float(self, "multi_margin_loss_cpu_kernel", false);
  int64_t n = self.dim() <= 1 ? 1 : self.size(0), c = self.dim() == 0 ? 1 : self.size(-1);
  TORCH_CHECK(target.dim() <= 1 && target.numel() == n, "inconsistent target size, expected ", n,
              " but got ", target.sizes());
  bool has_w = weight_.has_value() && weight_->defined();
  TORCH_CHECK(!has_w || (weight_->dim() <= 1 && weight_->numel() == c),
              "inconsistent weight size, expected ", c, " but got ",
              has_w ? weight_->sizes() : at::IntArrayRef{});
  Tensor x = self.reshape({n, c}).contiguous(), t = target.reshape({n}).to(at::kLong).contiguous();
  Tensor w = has_w ? weight_->contiguous() : Tensor();
  Tensor per = at::empty({n}, self.options());
  axon_margin_loss_desc d{};
  d.args.n = n;
  d.args.classes = c;
  d.args.p = p;
  d.args.has_weight = has_w;
  d.args.margin = axon_real_of(margin.toDouble());
  d.input = data_or_null(x);
  d.target = data_or_null(t);
  d.weight = data_or_null(w);
  d.output = data_or_null(per);
  run_margin(AXON_MULTI_MARGIN, self, d);
  Tensor r = reduce_loss(per, reduction, target.dim() > 0);
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

Tensor multi_margin_loss(const Tensor& self, const Tensor& target, const at::Scalar& p,
                         const at::Scalar& margin, const std::optional<Tensor>& weight,
                         int64_t reduction) {
  Tensor out = at::empty({0}, self.options());
  return multi_margin_loss_out(self, target, p, margin, weight, reduction, out);
}

Tensor& multi_margin_loss_backward_out(const Tensor& grad, const Tensor& self, const Tensor& target,
                                       const at::Scalar& p_, const at::Scalar& margin,
                                       const std::optional<Tensor>& weight_, int64_t reduction,
                                       Tensor& grad_input) {
  c10::DeviceGuard guard(self.device());
  int64_t p = p_.toLong();
  TORCH_CHECK(p == 1 || p == 2, "only p == 1 and p == 2 supported");
  check_float(self, "multi_margin_loss_backward_cpu_kernel", false);
  int64_t n = self.dim() <= 1 ? 1 : self.size(0), c = self.dim() == 0 ? 1 : self.size(-1);
  bool has_w = weight_.has_value() && weight_->defined();
  Tensor x = self.reshape({n, c}).contiguous(), t = target.reshape({n}).to(at::kLong).contiguous();
  Tensor w = has_w ? weight_->contiguous() : Tensor();
  Tensor g = loss_grad(grad, reduction, n);
  Tensor gi = at::empty({n, c}, self.options());
  axon_margin_loss_desc d{};
  d.args.n = n;
  d.args.classes = c;
  d.args.p = p;
  d.args.has_weight = has_w;
  d.args.margin = axon_real_of(margin.toDouble());
  backward_reduction(d.args, reduction, n);
  d.grad_output = data_or_null(g);
  d.input = data_or_null(x);
  d.target = data_or_null(t);
  d.weight = data_or_null(w);
  d.output = data_or_null(gi);
  run_margin(AXON_MULTI_MARGIN_BACKWARD, self, d);
  return write_like(grad_input, self, gi);
}

Tensor multi_margin_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                  const at::Scalar& p, const at::Scalar& margin,
                                  const std::optional<Tensor>& weight, int64_t reduction) {
  Tensor gi = at::empty({0}, self.options());
  return multi_margin_loss_backward_out(grad, self, target, p, margin, weight, reduction, gi);
}

std::tuple<Tensor&, Tensor&> multilabel_margin_loss_forward_out(const Tensor& self,
                                                                const Tensor& target,
                                                                int64_t reduction, Tensor& output,
                                                                Tensor& is_target) {
  c10::DeviceGuard guard(self.device());
  check_float(self, "multilabel_margin_loss_forward_out_frame", false);
  TORCH_CHECK(self.dim() <= 2 && target.sizes() == self.sizes(),
              "inconsistent target size: ", target.sizes(), " for input of size: ", self.sizes());
  int64_t n = self.dim() <= 1 ? 1 : self.size(0), c = self.dim() == 0 ? 1 : self.size(-1);
  Tensor x = self.reshape({n, c}).contiguous(),
         t = target.reshape({n, c}).to(at::kLong).contiguous();
  Tensor ist = at::empty({n, c}, self.options()), per = at::empty({n}, self.options());
  axon_margin_loss_desc d{};
  d.args.n = n;
  d.args.classes = c;
  d.input = data_or_null(x);
  d.target = data_or_null(t);
  d.is_target = data_or_null(ist);
  d.output = data_or_null(per);
  run_margin(AXON_MULTILABEL_MARGIN, self, d);
  Tensor r = reduce_loss(per, reduction, self.dim() == 2);
  at::native::resize_output(output, r.sizes());
  output.copy_(r);
  at::native::resize_output(is_target, self.sizes());
  is_target.copy_(ist.view(self.sizes()));
  return {output, is_target};
}

std::tuple<Tensor, Tensor> multilabel_margin_loss_forward(const Tensor& self, const Tensor& target,
                                                          int64_t reduction) {
  Tensor out = at::empty({0}, self.options()), ist = at::empty({0}, self.options());
  multilabel_margin_loss_forward_out(self, target, reduction, out, ist);
  return {out, ist};
}

Tensor& multilabel_margin_loss_backward_out(const Tensor& grad, const Tensor& self,
                                            const Tensor& target, int64_t reduction,
                                            const Tensor& is_target, Tensor& grad_input) {
  c10::DeviceGuard guard(self.device());
  check_float(self, "multilabel_margin_loss_backward_out_frame", false);
  int64_t n = self.dim() <= 1 ? 1 : self.size(0), c = self.dim() == 0 ? 1 : self.size(-1);
  Tensor x = self.reshape({n, c}).contiguous(),
         t = target.reshape({n, c}).to(at::kLong).contiguous();
  Tensor ist = is_target.reshape({n, c}).contiguous();
  Tensor g = loss_grad(grad, reduction, n);
  Tensor gi = at::empty({n, c}, self.options());
  axon_margin_loss_desc d{};
  d.args.n = n;
  d.args.classes = c;
  backward_reduction(d.args, reduction, n);
  d.grad_output = data_or_null(g);
  d.input = data_or_null(x);
  d.target = data_or_null(t);
  d.is_target = data_or_null(ist);
  d.output = data_or_null(gi);
  run_margin(AXON_MULTILABEL_MARGIN_BACKWARD, self, d);
  return write_like(grad_input, self, gi);
}

Tensor multilabel_margin_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                       int64_t reduction, const Tensor& is_target) {
  Tensor gi = at::empty({0}, self.options());
  return multilabel_margin_loss_backward_out(grad, self, target, reduction, is_target, gi);
}
}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("multi_margin_loss", multi_margin_loss);
  m.impl("multi_margin_loss.out", multi_margin_loss_out);
  m.impl("multi_margin_loss_backward", multi_margin_loss_backward);
  m.impl("multi_margin_loss_backward.grad_input", multi_margin_loss_backward_out);
  m.impl("multilabel_margin_loss_forward", multilabel_margin_loss_forward);
  m.impl("multilabel_margin_loss_forward.output", multilabel_margin_loss_forward_out);
  m.impl("multilabel_margin_loss_backward", multilabel_margin_loss_backward);
  m.impl("multilabel_margin_loss_backward.grad_input", multilabel_margin_loss_backward_out);
}

}  // namespace axon
