// More pointwise operators (fmax, fmin, logaddexp2, heaviside, nextafter, frexp, angle, logit),
// activations (shrinkage, glu, prelu, rrelu), pointwise losses (smooth l1, huber, binary cross
// entropy) and ops composed from native ones (renorm, linalg_cross, channel_shuffle,
// _efficientzerotensor). The arithmetic is in kernels/elementwise.cl; losses reduce with the
// native sum / mean. Structured ops register their out= variant only.
#include <ATen/AccumulateType.h>
#include <ATen/Dispatch.h>
#include <ATen/EmptyTensor.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorFactories.h>
#include <torch/library.h>

#include <limits>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Scalar;
using at::Tensor;

// at::Reduction's values (the loss ops take an int).
constexpr int64_t kReduceNone = 0, kReduceMean = 1;

// The scale the backward of a loss applies: 1 / n for a mean.
double loss_norm(const Tensor& input, int64_t reduction) {
  return reduction == kReduceMean ? 1.0 / double(input.numel()) : 1.0;
}

// A pointwise loss `op` of input and target with parameter `param`, reduced as asked.
Tensor& pointwise_loss(axon_pointwise_op op, const Tensor& input, const Tensor& target,
                       int64_t reduction, double param, Tensor& out) {
  at::ScalarType t = compute_type({input, target}, {}, Promote::Same);
  if (reduction == kReduceNone)
    return run_elementwise(op, out, {input, target}, t, Output::Compute, param);
  Tensor loss = at::empty({0}, input.options().dtype(t));
  run_elementwise(op, loss, {input, target}, t, Output::Compute, param);
  return reduction == kReduceMean ? at::mean_out(out, loss, at::IntArrayRef{})
                                  : at::sum_out(out, loss, at::IntArrayRef{});
}

// Backward of a pointwise loss: kernel `op` over (grad, input, target), alpha the reduction's
// scale, beta the loss's parameter.
Tensor& pointwise_loss_backward(axon_pointwise_op op, const Tensor& grad, const Tensor& input,
                                const Tensor& target, int64_t reduction, double param,
                                Tensor& grad_input) {
  at::ScalarType t = compute_type({grad, input, target}, {}, Promote::Same);
  return run_elementwise(op, grad_input, {grad, input, target}, t, Output::Compute,
                         loss_norm(input, reduction), param);
}

Tensor empty_for(const Tensor& like, at::ScalarType type) {
  return at::empty({0}, like.options().dtype(type));
}

// ---- binary math ----------------------------------------------------------------------------

Tensor& fmax_fmin_out(axon_pointwise_op op, const Tensor& a, const Tensor& b, Tensor& out) {
  TORCH_CHECK(!a.is_complex() && !b.is_complex(), axon_pointwise_name(op),
              " not implemented for complex tensors.");
  return binary(op, a, b, out);
}

Tensor& heaviside_out(const Tensor& self, const Tensor& values, Tensor& out) {
  TORCH_CHECK(!self.is_complex() && !values.is_complex(),
              "heaviside is not yet implemented for complex tensors.");
  TORCH_CHECK(self.scalar_type() == values.scalar_type(),
              "heaviside is not yet implemented for tensors with different dtypes.");
  return binary(AXON_PW_heaviside, self, values, out);
}

// frexp: the mantissa in self's dtype and an int32 exponent, written by one kernel.
std::tuple<Tensor&, Tensor&> frexp_out(const Tensor& self, Tensor& mantissa, Tensor& exponent) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "torch.frexp() only supports floating-point dtypes");
  TORCH_CHECK(mantissa.scalar_type() == self.scalar_type(),
              "torch.frexp() expects mantissa to have dtype ", self.scalar_type(), " but got ",
              mantissa.scalar_type());
  TORCH_CHECK(exponent.scalar_type() == at::kInt,
              "torch.frexp() expects exponent to have int dtype but got ", exponent.scalar_type());
  c10::DeviceGuard guard(self.device());
  check_dtype_supported(self.scalar_type(), self.device().index());
  at::native::resize_output(mantissa, self.sizes());
  at::native::resize_output(exponent, self.sizes());
  axon_ew_desc d = make_ew_desc_same_shape(mantissa, {self, exponent}, true);
  axon_dtype t = to_axon_dtype(self.scalar_type());
  AXON_CHECK(axon_elementwise(stream_for(self), AXON_PW_frexp, t, t, &d, 0, 0));
  return {mantissa, exponent};
}

// angle: 0 or pi for real numbers (integers give float), the argument of complex ones (a real
// result).
Tensor& angle_out(const Tensor& self, Tensor& out) {
  return unary(AXON_PW_angle, self, out, Promote::IntToFloat);
}
Tensor angle(const Tensor& self) {
  at::ScalarType type = compute_type({self}, {}, Promote::IntToFloat);
  Tensor out = empty_for(self, self.is_complex() ? c10::toRealValueType(type) : type);
  return angle_out(self, out);
}

// logit: eps clamps the input to [eps, 1 - eps]; the kernel takes a negative eps as none.
Tensor& logit_out(const Tensor& self, std::optional<double> eps, Tensor& out) {
  return unary(AXON_PW_logit, self, out, Promote::IntToFloat, eps.value_or(-1.0));
}
Tensor logit(const Tensor& self, std::optional<double> eps) {
  Tensor out = empty_for(self, compute_type({self}, {}, Promote::IntToFloat));
  return logit_out(self, eps, out);
}
Tensor& logit_(Tensor& self, std::optional<double> eps) {
  return logit_out(self, eps, self);
}
Tensor& logit_backward_out(const Tensor& grad, const Tensor& self, std::optional<double> eps,
                           Tensor& out) {
  return binary(AXON_PW_logit_backward, grad, self, out, Promote::Same, eps.value_or(-1.0));
}

// ---- activations ----------------------------------------------------------------------------

Tensor& softshrink_out(const Tensor& self, const Scalar& lambd, Tensor& out) {
  double hi = 0;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "softshrink",
                                  [&] { hi = double(std::numeric_limits<scalar_t>::max()); });
  double l = lambd.toDouble();
  TORCH_CHECK(l >= 0 && l <= hi, "lambda must be in range [0, ", hi, "] for input dtype ",
              self.scalar_type(), ", but found ", l);
  return unary(AXON_PW_softshrink, self, out, Promote::Same, l);
}

// glu halves `dim`: the first half times the sigmoid of the second.
std::pair<Tensor, Tensor> glu_halves(const Tensor& self, int64_t& dim) {
  TORCH_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  dim = at::maybe_wrap_dim(dim, self.dim());
  int64_t n = self.size(dim);
  TORCH_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", dim, " is size ", n);
  return {self.narrow(dim, 0, n / 2), self.narrow(dim, n / 2, n / 2)};
}

Tensor& glu_out(const Tensor& self, int64_t dim, Tensor& out) {
  auto [first, gate] = glu_halves(self, dim);
  return binary(AXON_PW_glu, first, gate, out);
}

Tensor& glu_backward_out(const Tensor& grad, const Tensor& self, int64_t dim, Tensor& grad_input) {
  auto [first, gate] = glu_halves(self, dim);
  at::ScalarType t = compute_type({grad, self}, {}, Promote::Same);
  at::native::resize_output(grad_input, self.sizes());
  int64_t half = first.size(dim);
  Tensor grad_first = grad_input.narrow(dim, 0, half),
         grad_gate = grad_input.narrow(dim, half, half);
  run_elementwise(AXON_PW_glu_backward_first, grad_first, {grad, gate}, t);
  run_elementwise(AXON_PW_glu_backward_gate, grad_gate, {grad, first, gate}, t);
  return grad_input;
}
Tensor glu_backward(const Tensor& grad, const Tensor& self, int64_t dim) {
  Tensor grad_input = at::empty_like(self);
  return glu_backward_out(grad, self, dim, grad_input);
}

// prelu with an already broadcastable weight (torch.prelu reshapes it); both gradients have
// the broadcast shape, autograd sums the weight's down.
Tensor prelu_kernel(const Tensor& self, const Tensor& weight) {
  Tensor out = empty_for(self, self.scalar_type());
  return binary(AXON_PW_prelu, self, weight, out);
}
std::tuple<Tensor, Tensor> prelu_kernel_backward(const Tensor& grad, const Tensor& self,
                                                 const Tensor& weight) {
  at::ScalarType t = compute_type({self, weight, grad}, {}, Promote::Same);
  Tensor grad_self = empty_for(self, t), grad_weight = empty_for(weight, t);
  run_elementwise(AXON_PW_prelu_backward_input, grad_self, {self, weight, grad}, t);
  run_elementwise(AXON_PW_prelu_backward_weight, grad_weight, {self, weight, grad}, t);
  return {grad_self, grad_weight};
}

// rrelu: in training each non-positive element gets a slope drawn uniformly from
// [lower, upper] (the device generator), kept in noise for the backward; otherwise the
// slope is their mean, as leaky_relu.
Tensor& rrelu_with_noise_out(const Tensor& self, Tensor& noise, const Scalar& lower,
                             const Scalar& upper, bool training, std::optional<at::Generator> gen,
                             Tensor& out) {
  TORCH_CHECK(self.sym_sizes() == noise.sym_sizes(),
              "noise tensor shape must match self tensor shape. Got self.shape = ",
              self.sym_sizes(), " noise.shape = ", noise.sym_sizes());
  if (!training) return at::leaky_relu_out(out, self, (lower.toDouble() + upper.toDouble()) / 2);
  noise.uniform_(lower.toDouble(), upper.toDouble(), gen);
  run_elementwise(AXON_PW_rrelu_noise, noise, {self, noise}, noise.scalar_type());
  return at::mul_out(out, self, noise);
}
Tensor rrelu_with_noise(const Tensor& self, Tensor& noise, const Scalar& lower, const Scalar& upper,
                        bool training, std::optional<at::Generator> gen) {
  Tensor out = at::empty_like(self, at::MemoryFormat::Contiguous);
  return rrelu_with_noise_out(self, noise, lower, upper, training, gen, out);
}
Tensor& rrelu_with_noise_(Tensor& self, Tensor& noise, const Scalar& lower, const Scalar& upper,
                          bool training, std::optional<at::Generator> gen) {
  return rrelu_with_noise_out(self, noise, lower, upper, training, gen, self);
}

// ---- pointwise losses -----------------------------------------------------------------------

Tensor& smooth_l1_loss_out(const Tensor& input, const Tensor& target, int64_t reduction,
                           double beta, Tensor& out) {
  TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  return pointwise_loss(AXON_PW_smooth_l1, input, target, reduction, beta, out);
}
Tensor& smooth_l1_loss_backward_out(const Tensor& grad, const Tensor& input, const Tensor& target,
                                    int64_t reduction, double beta, Tensor& grad_input) {
  return pointwise_loss_backward(AXON_PW_smooth_l1_backward, grad, input, target, reduction, beta,
                                 grad_input);
}

Tensor& huber_loss_out(const Tensor& input, const Tensor& target, int64_t reduction, double delta,
                       Tensor& out) {
  TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  return pointwise_loss(AXON_PW_huber, input, target, reduction, delta, out);
}
Tensor huber_loss(const Tensor& input, const Tensor& target, int64_t reduction, double delta) {
  Tensor out = empty_for(input, compute_type({input, target}, {}, Promote::Same));
  return huber_loss_out(input, target, reduction, delta, out);
}
Tensor& huber_loss_backward_out(const Tensor& grad, const Tensor& input, const Tensor& target,
                                int64_t reduction, double delta, Tensor& grad_input) {
  return pointwise_loss_backward(AXON_PW_huber_backward, grad, input, target, reduction, delta,
                                 grad_input);
}

// Binary cross entropy. Inputs outside [0, 1] give NaN rather than the CPU's error: checking
// would read the data back on every call (CUDA does not check on the host either).
Tensor& bce_out(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                int64_t reduction, Tensor& out) {
  at::ScalarType t = compute_type({input, target}, {}, Promote::Same);
  Tensor loss = reduction == kReduceNone ? out : empty_for(input, t);
  if (weight.has_value() && weight->defined())
    run_elementwise(AXON_PW_bce, loss, {input, target, *weight}, t);
  else
    run_elementwise(AXON_PW_bce, loss, {input, target}, t, Output::Compute, 0, 0, {Scalar(1.0)});
  if (reduction == kReduceNone) return out;
  return reduction == kReduceMean ? at::mean_out(out, loss, at::IntArrayRef{})
                                  : at::sum_out(out, loss, at::IntArrayRef{});
}
Tensor bce(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
           int64_t reduction) {
  Tensor out = empty_for(input, compute_type({input, target}, {}, Promote::Same));
  return bce_out(input, target, weight, reduction, out);
}
// The weight multiplies the gradient first: the kernel takes three inputs.
Tensor& bce_backward_out(const Tensor& grad, const Tensor& input, const Tensor& target,
                         const std::optional<Tensor>& weight, int64_t reduction,
                         Tensor& grad_input) {
  Tensor g = weight.has_value() && weight->defined() ? grad * *weight : grad;
  at::ScalarType t = compute_type({g, input, target}, {}, Promote::Same);
  at::native::resize_output(grad_input, input.sizes());
  return run_elementwise(AXON_PW_bce_backward, grad_input, {g, input, target}, t, Output::Compute,
                         loss_norm(input, reduction));
}
Tensor bce_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                    const std::optional<Tensor>& weight, int64_t reduction) {
  Tensor grad_input = at::empty_like(input);
  return bce_backward_out(grad, input, target, weight, reduction, grad_input);
}

// ---- composed from native ops ---------------------------------------------------------------

// renorm: each slice along dim whose p-norm exceeds maxnorm is scaled down to it.
Tensor& renorm_out(const Tensor& self, const Scalar& p, int64_t dim, const Scalar& maxnorm,
                   Tensor& out) {
  TORCH_CHECK(!p.isComplex(), "renorm: p must be real-valued");
  TORCH_CHECK(p.toDouble() > 0.0, "renorm: non-positive-norm not supported");
  TORCH_CHECK(!maxnorm.isComplex(), "renorm: maxnorm must be real-valued");
  TORCH_CHECK(maxnorm.toDouble() >= 0.0, "renorm: expected maxnorm to be >= 0 but got ",
              maxnorm.toDouble());
  TORCH_CHECK(self.dim() > 1, "renorm: input needs at least 2 dimensions, got ", self.dim(),
              " dimensions");
  dim = at::maybe_wrap_dim(dim, self.dim());
  std::vector<int64_t> reduce_dims;
  for (int64_t d = 0; d < self.dim(); d++)
    if (d != dim) reduce_dims.push_back(d);
  // The norm accumulates in float for float16 / bfloat16, as on the CPU.
  at::ScalarType acc = at::toAccumulateType(self.scalar_type(), /*is_cuda=*/true);
  Tensor norm = at::linalg_vector_norm(self, p, reduce_dims, /*keepdim=*/true, acc);
  Tensor factor = at::empty_like(norm);
  unary(AXON_PW_renorm_factor, norm, factor, Promote::Same, maxnorm.toDouble());
  return at::mul_out(out, self, factor.to(self.scalar_type()));
}

// linalg_cross: with x' = cat(x, x) along dim, component i of the product is
// x'[i + 1] y'[i + 2] - x'[i + 2] y'[i + 1]: four views, two products, one difference.
Tensor& linalg_cross_out(const Tensor& input, const Tensor& other, int64_t dim, Tensor& out) {
  TORCH_CHECK(input.dim() == other.dim(),
              "linalg.cross: inputs must have the same number of dimensions.");
  dim = at::maybe_wrap_dim(dim, input.dim());
  TORCH_CHECK(input.size(dim) == 3 && other.size(dim) == 3, "linalg.cross: inputs dimension ", dim,
              " must have length 3. Got ", input.size(dim), " and ", other.size(dim));
  TORCH_CHECK(input.scalar_type() == other.scalar_type(), "expected scalar type ",
              input.scalar_type(), " but found ", other.scalar_type());
  auto shape = at::infer_size_dimvector(input.sizes(), other.sizes());
  at::native::resize_output(out, shape);
  if (out.numel() == 0) return out;
  Tensor x = input.expand(shape), y = other.expand(shape);
  Tensor xx = at::cat({x, x}, dim), yy = at::cat({y, y}, dim);
  Tensor lhs = at::mul(xx.narrow(dim, 1, 3), yy.narrow(dim, 2, 3));
  Tensor rhs = at::mul(xx.narrow(dim, 2, 3), yy.narrow(dim, 1, 3));
  return at::sub_out(out, lhs, rhs);
}

// channel_shuffle: [n, g * k, ...] read as [n, g, k, rest] and written as [n, k, g, rest].
Tensor channel_shuffle(const Tensor& self, c10::SymInt groups_sym) {
  TORCH_CHECK(self.dim() > 2,
              "channel_shuffle expects input with > 2 dims, but got input with sizes ",
              self.sizes());
  int64_t groups = groups_sym.guard_int(__FILE__, __LINE__);
  TORCH_CHECK(groups > 0, "Number of groups to divide channels in must be positive.",
              " Value of groups:", groups);
  int64_t n = self.size(0), c = self.size(1);
  TORCH_CHECK(c % groups == 0, "Number of channels must be divisible by groups. Got ", c,
              " channels and ", groups, " groups.");
  int64_t rest = 1;
  for (int64_t d = 2; d < self.dim(); d++) rest *= self.size(d);
  Tensor shuffled = self.reshape({n, groups, c / groups, rest})
                        .permute({0, 2, 1, 3})
                        .contiguous()
                        .reshape(self.sizes());
  return shuffled.contiguous(self.suggest_memory_format());
}

// A tensor of zeros that owns no memory (the ZeroTensor key makes ops treat it as zeros);
// autograd returns it for gradients known to vanish, such as sgn's on real inputs.
Tensor efficientzerotensor(c10::SymIntArrayRef size, std::optional<at::ScalarType> dtype,
                           std::optional<at::Layout> /*layout*/, std::optional<at::Device> device,
                           std::optional<bool> /*pin_memory*/) {
  at::Device d = device.value_or(at::Device(c10::DeviceType::PrivateUse1, current_device()));
  if (!d.has_index()) d.set_index(current_device());
  at::native::ZeroTensorAllocator allocator(d);
  auto keys = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1) |
              c10::DispatchKeySet(c10::DispatchKey::ZeroTensor);
  return at::detail::empty_generic(
      C10_AS_INTARRAYREF_SLOW(size), &allocator, keys,
      dtype.value_or(c10::typeMetaToScalarType(c10::get_default_dtype())), std::nullopt);
}

}  // namespace

#define SHRINK_BACKWARD(name)                                                                  \
  m.impl(name, [](const Tensor& g, const Tensor& s, const Scalar& l, Tensor& out) -> Tensor& { \
    return binary(AXON_PW_shrink_backward, g, s, out, Promote::Same, l.toDouble());            \
  })

AXON_ATEN_IMPL(m) {
  // Binary and unary math.
  m.impl("fmax.out", [](const Tensor& a, const Tensor& b, Tensor& out) -> Tensor& {
    return fmax_fmin_out(AXON_PW_fmax, a, b, out);
  });
  m.impl("fmin.out", [](const Tensor& a, const Tensor& b, Tensor& out) -> Tensor& {
    return fmax_fmin_out(AXON_PW_fmin, a, b, out);
  });
  m.impl("heaviside.out", heaviside_out);
  m.impl("frexp.Tensor_out", frexp_out);
  m.impl("angle", angle);
  m.impl("angle.out", angle_out);
  m.impl("logit", logit);
  m.impl("logit.out", logit_out);
  m.impl("logit_", logit_);
  m.impl("logit_backward.grad_input", logit_backward_out);

  // Activations.
  m.impl("softshrink.out", softshrink_out);
  SHRINK_BACKWARD("softshrink_backward.grad_input");
  m.impl("hardshrink.out", [](const Tensor& s, const Scalar& l, Tensor& out) -> Tensor& {
    return unary(AXON_PW_hardshrink, s, out, Promote::Same, l.toDouble());
  });
  SHRINK_BACKWARD("hardshrink_backward.grad_input");
  m.impl("glu.out", glu_out);
  m.impl("glu_backward", glu_backward);
  m.impl("glu_backward.grad_input", glu_backward_out);
  m.impl("_prelu_kernel", prelu_kernel);
  m.impl("_prelu_kernel_backward", prelu_kernel_backward);
  m.impl("rrelu_with_noise", rrelu_with_noise);
  m.impl("rrelu_with_noise.out", rrelu_with_noise_out);
  m.impl("rrelu_with_noise_", rrelu_with_noise_);

  // Losses.
  m.impl("smooth_l1_loss.out", smooth_l1_loss_out);
  m.impl("smooth_l1_loss_backward.grad_input", smooth_l1_loss_backward_out);
  m.impl("huber_loss", huber_loss);
  m.impl("huber_loss.out", huber_loss_out);
  m.impl("huber_loss_backward.out", huber_loss_backward_out);
  m.impl("binary_cross_entropy", bce);
  m.impl("binary_cross_entropy.out", bce_out);
  m.impl("binary_cross_entropy_backward", bce_backward);
  m.impl("binary_cross_entropy_backward.grad_input", bce_backward_out);

  // Composed.
  m.impl("renorm.out", renorm_out);
  m.impl("linalg_cross.out", linalg_cross_out);
  m.impl("channel_shuffle", channel_shuffle);
  m.impl("_efficientzerotensor", efficientzerotensor);
}

}  // namespace axon
