// Elementwise operators. Each registration is a thin wrapper: ATen's type promotion picks the
// compute dtype, TensorIterator the broadcast shape, output and coalesced strides; the runtime
// runs the kernel of the same name in kernels/elementwise.cl. Structured ops register their
// out= variant only: PyTorch derives the functional and in-place forms from it.
#include <ATen/Dispatch.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/ScalarOps.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <torch/library.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "axon_glue.h"

namespace axon {
using at::Scalar;
using at::Tensor;

at::ScalarType compute_type(TensorRefs inputs, std::initializer_list<Scalar> scalars,
                            Promote promote) {
  at::native::ResultTypeState state = {};
  for (const Tensor& t : inputs) state = at::native::update_result_type_state(t, state);
  for (const Scalar& s : scalars)
    state = at::native::update_result_type_state(at::native::wrapped_scalar_tensor(s), state);
  at::ScalarType type = at::native::result_type(state);
  if (promote == Promote::IntToFloat && at::isIntegralType(type, /*includeBool=*/true))
    type = at::typeMetaToScalarType(at::get_default_dtype());
  return type;
}

namespace {

// Inputs go to the kernel in the compute dtype; CPU scalars stay where they are (their
// values become kernel arguments).
Tensor as_compute(const Tensor& t, at::ScalarType type) {
  if (t.scalar_type() == type || (t.is_cpu() && t.dim() == 0)) return t;
  return t.to(type);
}

// PyTorch converts scalar operands to the compute dtype before the op: as uint8, 300 is 44
// and -2 is 254 (so u8 == 300 holds for 44); as float16, 0.1 is 0.0999755859375 (so a half
// tensor holding that value == 0.1). The CPU's mul, div, lerp, addcmul and addcdiv kernels
// are the exception for float16 / bfloat16: they keep a float scalar (x * 1e5 does not
// overflow to inf), so `round_reduced` is false for those. The kernels take the value as
// int / long or float.
void scalars_to_compute(axon_ew_desc& d, at::ScalarType compute, bool round_reduced) {
  for (int k = 1; k <= d.ninputs; k++) {
    if (!d.is_scalar[k]) continue;
    if (compute == at::kHalf || compute == at::kBFloat16) {
      if (round_reduced) {
        float f = float(d.scalars[k]);
        d.scalars[k] =
            compute == at::kHalf ? double(float(c10::Half(f))) : double(float(c10::BFloat16(f)));
      }
      continue;
    }
    if (!at::isIntegralType(compute, /*includeBool=*/true)) continue;
    int64_t v = d.iscalars[k];
    switch (compute) {
      case at::kByte:
        v = uint8_t(v);
        break;
      case at::kChar:
        v = int8_t(v);
        break;
      case at::kShort:
        v = int16_t(v);
        break;
      case at::kInt:
        v = int32_t(v);
        break;
      case at::kBool:
        v = v != 0;
        break;
      default:
        break;
    }
    d.iscalars[k] = v;
    d.scalars[k] = double(v);
  }
}

bool keeps_float_scalars(axon_pointwise_op op) {
  switch (op) {
    case AXON_PW_mul:
    case AXON_PW_div:
    case AXON_PW_div_trunc:
    case AXON_PW_div_floor:
    case AXON_PW_lerp:
    case AXON_PW_addcmul:
    case AXON_PW_addcdiv:
      return true;
    default:
      return false;
  }
}

// The type an op writes: as `kind` says, except abs and angle of complex numbers, which give
// the part type (the generic unary registrations reach them).
at::ScalarType natural_type(axon_pointwise_op op, at::ScalarType compute, Output kind) {
  if (kind == Output::Bool) return at::kBool;
  if (kind == Output::Complex) return c10::toComplexType(compute);
  if (at::isComplexType(compute) && (op == AXON_PW_abs || op == AXON_PW_angle))
    return c10::toRealValueType(compute);
  return compute;
}

// The value of a CPU 0-dim tensor (a wrapped Python number), read directly: Tensor::item() is an
// operator call through the dispatcher, a tenth of a small op's host time.
Scalar cpu_scalar_value(const Tensor& t) {
  if (t.is_neg() || t.is_conj()) return t.item();
  const void* p = t.const_data_ptr();
  switch (t.scalar_type()) {
    case at::kDouble:
      return *static_cast<const double*>(p);
    case at::kFloat:
      return *static_cast<const float*>(p);
    case at::kLong:
      return *static_cast<const int64_t*>(p);
    case at::kInt:
      return *static_cast<const int32_t*>(p);
    case at::kBool:
      return *static_cast<const bool*>(p);
    default:
      return t.item();
  }
}

// The descriptor of the common case without a TensorIterator: `out` contiguous and written whole,
// each input a contiguous tensor of its shape, device and the compute type, or a CPU scalar, and
// no input overlapping `out` but exactly (in place). Every operand then walks one line. A
// structured op's functional and in-place forms have built an iterator already (its meta
// function) before they reach the out= kernel: a second one costs about a microsecond, most of a
// small op's host time. False where the iterator is needed: it resizes, broadcasts and converts,
// and raises PyTorch's own errors (partial overlap).
bool line_desc(const Tensor& out, TensorRefs inputs, at::ScalarType compute, axon_ew_desc& d) {
  if (!out.is_contiguous() || out.numel() == 0) return false;
  d = axon_ew_desc{};
  d.ndim = out.dim() == 0 ? 0 : 1;
  d.sizes[0] = out.numel();
  d.data[0] = out.data_ptr();
  d.strides[0][0] = 1;
  bool any_tensor = false;
  int k = 0;
  for (const Tensor& t : inputs) {
    k++;
    if (t.is_cpu() && t.dim() == 0) {
      set_scalar(d, k, cpu_scalar_value(t));
      continue;
    }
    if (t.scalar_type() != compute || t.device() != out.device() || t.sizes() != out.sizes() ||
        !t.is_contiguous())
      return false;
    // Tensors of storages that do not alias cannot overlap: the common case, decided without
    // get_overlap_status's layout checks.
    if (!t.is_same(out) && t.storage().is_alias_of(out.storage()) &&
        at::get_overlap_status(out, t) != at::MemOverlapStatus::No)
      return false;
    d.data[k] = t.data_ptr();
    d.strides[k][0] = 1;
    any_tensor = true;
  }
  d.ninputs = k;
  return any_tensor;
}

}  // namespace

Tensor& run_elementwise(axon_pointwise_op op, Tensor& out, TensorRefs inputs,
                        at::ScalarType compute, Output kind, double alpha, double beta,
                        std::initializer_list<Scalar> scalars) {
  // TensorIterator checks devices too, but after the dtype check below, which would report a
  // CPU out= tensor as a dtype its device lacks: CUDA's message first.
  for (const Tensor& t : inputs)
    if (!(t.is_cpu() && t.dim() == 0)) check_same_device(t, out);
  c10::DeviceGuard guard(out.device());
  check_dtype_supported(compute, out.device().index());
  at::ScalarType natural = natural_type(op, compute, kind);
  TORCH_CHECK(at::canCast(natural, out.scalar_type()), "result type ", natural,
              " can't be cast to the desired output type ", out.scalar_type());
  axon_ew_desc d;
  Tensor staged;                  // the result in the natural type, where out has another type
  std::vector<Tensor> converted;  // inputs in the compute type, alive until the launch
  if (out.scalar_type() != natural || !line_desc(out, inputs, compute, d)) {
    at::TensorIteratorConfig config;
    if (out.scalar_type() != natural) {
      at::DimVector shape;
      for (const Tensor& t : inputs) shape = at::infer_size_dimvector(shape, t.sizes());
      staged = at::empty(shape, out.options().dtype(natural));
    }
    config.add_output(staged.defined() ? staged : out);
    converted.reserve(inputs.size());
    for (const Tensor& t : inputs) converted.push_back(as_compute(t, compute));
    for (const Tensor& t : converted) config.add_const_input(t);
    d = make_ew_desc(config.allow_cpu_scalars(true).check_all_same_dtype(false).build());
  }
  for (const Scalar& s : scalars) set_scalar(d, ++d.ninputs, s);
  scalars_to_compute(d, compute, !keeps_float_scalars(op));
  AXON_CHECK(axon_elementwise(stream_for(staged.defined() ? staged : out), op,
                              to_axon_dtype(compute), to_axon_dtype(natural), &d, alpha, beta));
  if (staged.defined()) {
    at::native::resize_output(out, staged.sizes());
    out.copy_(staged);
  }
  return out;
}

Tensor& unary(axon_pointwise_op op, const Tensor& self, Tensor& out, Promote promote, double alpha,
              double beta) {
  return run_elementwise(op, out, {self}, compute_type({self}, {}, promote), Output::Compute, alpha,
                         beta);
}

Tensor& binary(axon_pointwise_op op, const Tensor& a, const Tensor& b, Tensor& out, Promote promote,
               double alpha, double beta) {
  return run_elementwise(op, out, {a, b}, compute_type({a, b}, {}, promote), Output::Compute, alpha,
                         beta);
}

Tensor& compare(axon_pointwise_op op, const Tensor& a, const Tensor& b, Tensor& out) {
  return run_elementwise(op, out, {a, b}, compute_type({a, b}, {}, Promote::Same), Output::Bool);
}

Tensor& compare_scalar(axon_pointwise_op op, const Tensor& a, const Scalar& b, Tensor& out) {
  return run_elementwise(op, out, {a}, compute_type({a}, {b}, Promote::Same), Output::Bool, 0, 0,
                         {b});
}

Tensor& predicate(axon_pointwise_op op, const Tensor& self, Tensor& out) {
  return run_elementwise(op, out, {self}, self.scalar_type(), Output::Bool);
}

namespace {

// Functional and in-place forms for the few non-structured ops.
template <Tensor& (*Out)(const Tensor&, Tensor&)>
Tensor functional(const Tensor& self) {
  Tensor out = at::empty_like(self);
  return Out(self, out);
}

Tensor& relu_into(const Tensor& self, Tensor& out) {
  return unary(AXON_PW_relu, self, out, Promote::Same);
}
Tensor relu(const Tensor& self) {
  return functional<relu_into>(self);
}
Tensor& relu_(Tensor& self) {
  return relu_into(self, self);
}

Tensor& hardtanh_out(const Tensor& self, const Scalar& lo, const Scalar& hi, Tensor& out) {
  return unary(AXON_PW_hardtanh, self, out, Promote::Same, lo.toDouble(), hi.toDouble());
}
Tensor hardtanh(const Tensor& self, const Scalar& lo, const Scalar& hi) {
  Tensor out = at::empty_like(self);
  return hardtanh_out(self, lo, hi, out);
}
Tensor& hardtanh_(Tensor& self, const Scalar& lo, const Scalar& hi) {
  return hardtanh_out(self, lo, hi, self);
}
Tensor& hardtanh_backward_out(const Tensor& grad, const Tensor& self, const Scalar& lo,
                              const Scalar& hi, Tensor& out) {
  return binary(AXON_PW_hardtanh_backward, grad, self, out, Promote::Same, lo.toDouble(),
                hi.toDouble());
}
Tensor hardtanh_backward(const Tensor& grad, const Tensor& self, const Scalar& lo,
                         const Scalar& hi) {
  Tensor out = at::empty_like(grad);
  return hardtanh_backward_out(grad, self, lo, hi, out);
}

// A functional op's new result, shaped and laid out as TensorIterator lays out the result of
// CPU and CUDA kernels (following the inputs' strides: a transposed input gives a transposed
// result). CPU scalars neither shape nor lay it out, and may outnumber what one iterator takes.
Tensor empty_following(TensorRefs inputs, at::ScalarType dtype) {
  at::TensorIteratorConfig config;
  config.add_owned_output(Tensor());
  c10::optional<c10::Device> device;
  for (const Tensor& t : inputs) {
    if (t.is_cpu() && t.dim() == 0) continue;
    config.add_const_input(t);
    if (!device) device = t.device();
  }
  TORCH_INTERNAL_ASSERT(device.has_value(), "an axon op with only CPU scalars as inputs");
  return config.check_all_same_dtype(false)
      .declare_static_dtype_and_device(dtype, *device)
      .build()
      .output();
}

Tensor& where_out(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) {
  TORCH_CHECK(cond.scalar_type() == at::kBool || cond.scalar_type() == at::kByte,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              cond.scalar_type());
  at::ScalarType type = compute_type({a, b}, {}, Promote::Same);
  Tensor c = cond.scalar_type() == at::kBool ? cond : cond.to(at::kBool);
  // The condition keeps its bool type: convert a and b here, not in run().
  c10::DeviceGuard guard(out.device());
  Tensor a2 = as_compute(a, type), b2 = as_compute(b, type);
  // The kernel takes one CPU scalar: others (the condition, or both values) move to the device,
  // as CUDA's where accepts them.
  auto cpu_scalar = [](const Tensor& t) { return t.is_cpu() && t.dim() == 0; };
  if (cpu_scalar(c) && !out.is_cpu()) c = c.to(out.device());
  if (cpu_scalar(a2) && cpu_scalar(b2)) b2 = b2.to(out.device());
  at::ScalarType natural = type;
  TORCH_CHECK(out.scalar_type() == natural, "where: expected out dtype ", natural, ", got ",
              out.scalar_type());
  auto iter = at::TensorIteratorConfig()
                  .add_output(out)
                  .add_const_input(c)
                  .add_const_input(a2)
                  .add_const_input(b2)
                  .allow_cpu_scalars(true)
                  .check_all_same_dtype(false)
                  .build();
  axon_ew_desc d = make_ew_desc(iter);
  scalars_to_compute(d, type, true);
  axon_dtype t = to_axon_dtype(type);
  AXON_CHECK(axon_elementwise(stream_for(out), AXON_PW_where, t, t, &d, 0, 0));
  return out;
}
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Tensor out = empty_following({cond, a, b}, compute_type({a, b}, {}, Promote::Same));
  return where_out(cond, a, b, out);
}

Tensor& masked_fill_tensor(Tensor& self, const Tensor& mask, const Tensor& value) {
  TORCH_CHECK(value.dim() == 0,
              "masked_fill_ only supports a 0-dimensional value tensor, but got "
              "tensor with ",
              value.dim(), " dimension(s).");
  TORCH_CHECK(mask.scalar_type() == at::kBool,
              "masked_fill_ only supports boolean masks, but got mask "
              "with dtype ",
              mask.scalar_type());
  // A CPU tensor filled with an axon 0-dim value dispatches here too: fill it on the CPU.
  if (self.is_cpu()) return self.masked_fill_(mask, value.item());
  Tensor v =
      value.is_cpu() ? value.to(self.scalar_type()) : value.to(at::kCPU).to(self.scalar_type());
  return where_out(mask, v, self, self);
}
Tensor& masked_fill_scalar(Tensor& self, const Tensor& mask, const Scalar& value) {
  return masked_fill_tensor(self, mask, c10::scalar_to_tensor(value));
}

Tensor& clamp_out(const Tensor& self, const std::optional<Scalar>& lo,
                  const std::optional<Scalar>& hi, Tensor& out) {
  TORCH_CHECK(lo.has_value() || hi.has_value(),
              "torch.clamp: At least one of 'min' or 'max' must not be None");
  if (lo && hi) {
    at::ScalarType t = compute_type({self}, {*lo, *hi}, Promote::Same);
    return run_elementwise(AXON_PW_clamp, out, {self}, t, Output::Compute, 0, 0, {*lo, *hi});
  }
  const Scalar& bound = lo ? *lo : *hi;
  at::ScalarType t = compute_type({self}, {bound}, Promote::Same);
  return run_elementwise(lo ? AXON_PW_clamp_min : AXON_PW_clamp_max, out, {self}, t,
                         Output::Compute, 0, 0, {bound});
}

Tensor& clamp_tensor_out(const Tensor& self, const std::optional<Tensor>& lo,
                         const std::optional<Tensor>& hi, Tensor& out) {
  bool has_lo = lo.has_value() && lo->defined(), has_hi = hi.has_value() && hi->defined();
  TORCH_CHECK(has_lo || has_hi, "torch.clamp: At least one of 'min' or 'max' must not be None");
  if (has_lo && has_hi)
    return run_elementwise(AXON_PW_clamp, out, {self, *lo, *hi},
                           compute_type({self, *lo, *hi}, {}, Promote::Same));
  const Tensor& bound = has_lo ? *lo : *hi;
  return binary(has_lo ? AXON_PW_clamp_min : AXON_PW_clamp_max, self, bound, out);
}

// The exponents PyTorch's CPU kernel takes apart (x * x for 2, 1 / sqrt(x) for -0.5 ...):
// the same arithmetic gives the same results, and x.square() / RMSNorm's pow(x, 2) cost a
// multiply instead of a pow. 0 and 1 are a fill and a copy there too.
std::optional<axon_pointwise_op> pow_fast_path(double e, bool floating) {
  if (e == 2.0) return AXON_PW_pow_square;
  if (e == 3.0) return AXON_PW_pow_cube;
  if (!floating) return std::nullopt;
  if (e == 0.5) return AXON_PW_pow_sqrt;
  if (e == -0.5) return AXON_PW_pow_rsqrt;
  if (e == -1.0) return AXON_PW_pow_reciprocal;
  if (e == -2.0) return AXON_PW_pow_inv_square;
  return std::nullopt;
}

Tensor& pow_tensor_scalar_out(const Tensor& self, const Scalar& exponent, Tensor& out) {
  at::ScalarType t = compute_type({self}, {exponent}, Promote::Same);
  if (!exponent.isComplex() && t != at::kBool && !at::isComplexType(t)) {
    double e = exponent.toDouble();
    if (e == 0.0 || e == 1.0) {
      at::native::resize_output(out, self.sizes());
      return e == 0.0 ? out.fill_(1) : out.copy_(self);
    }
    if (auto op = pow_fast_path(e, at::isFloatingType(t)))
      return run_elementwise(*op, out, {self}, t, Output::Compute, 0, 0);
  }
  return run_elementwise(AXON_PW_pow, out, {self}, t, Output::Compute, 0, 0, {exponent});
}

Tensor& pow_scalar_out(const Scalar& base, const Tensor& exponent, Tensor& out) {
  return binary(AXON_PW_pow, at::native::wrapped_scalar_tensor(base), exponent, out);
}

Tensor& div_mode_out(const Tensor& a, const Tensor& b, std::optional<std::string_view> mode,
                     Tensor& out) {
  if (!mode.has_value()) return binary(AXON_PW_div, a, b, out, Promote::IntToFloat);
  TORCH_CHECK(*mode == "trunc" || *mode == "floor",
              "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '",
              *mode, "'");
  return binary(*mode == "trunc" ? AXON_PW_div_trunc : AXON_PW_div_floor, a, b, out);
}

Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  Tensor out = empty_following({self, other}, compute_type({self, other}, {}, Promote::Same));
  return binary(AXON_PW_sub, other, self, out, Promote::Same, alpha.toDouble());
}

Tensor& lerp_scalar_out(const Tensor& self, const Tensor& end, const Scalar& weight, Tensor& out) {
  at::ScalarType t = compute_type({self, end}, {}, Promote::Same);
  return run_elementwise(AXON_PW_lerp, out, {self, end}, t, Output::Compute, 0, 0, {weight});
}

}  // namespace

#define OUT1(name, kernel, promote)                             \
  m.impl(name, [](const Tensor& self, Tensor& out) -> Tensor& { \
    return unary(kernel, self, out, Promote::promote);          \
  })
#define OUT2(name, kernel, promote)                                           \
  m.impl(name, [](const Tensor& a, const Tensor& b, Tensor& out) -> Tensor& { \
    return binary(kernel, a, b, out, Promote::promote);                       \
  })
#define COMPARE(op)                                                                        \
  m.impl(#op ".Tensor_out", [](const Tensor& a, const Tensor& b, Tensor& out) -> Tensor& { \
    return compare(AXON_PW_##op, a, b, out);                                               \
  });                                                                                      \
  m.impl(#op ".Scalar_out", [](const Tensor& a, const Scalar& b, Tensor& out) -> Tensor& { \
    return compare_scalar(AXON_PW_##op, a, b, out);                                        \
  })

AXON_ATEN_IMPL(m) {
  // Arithmetic.
  m.impl("add.out",
         [](const Tensor& a, const Tensor& b, const Scalar& alpha, Tensor& out) -> Tensor& {
           return binary(AXON_PW_add, a, b, out, Promote::Same, alpha.toDouble());
         });
  m.impl("sub.out",
         [](const Tensor& a, const Tensor& b, const Scalar& alpha, Tensor& out) -> Tensor& {
           return binary(AXON_PW_sub, a, b, out, Promote::Same, alpha.toDouble());
         });
  m.impl("rsub.Tensor", rsub);
  m.impl("div.out_mode", div_mode_out);
  m.impl("addcmul.out",
         [](const Tensor& s, const Tensor& a, const Tensor& b, const Scalar& v,
            Tensor& out) -> Tensor& {
           return run_elementwise(AXON_PW_addcmul, out, {s, a, b},
                                  compute_type({s, a, b}, {}, Promote::Same), Output::Compute,
                                  v.toDouble());
         });
  m.impl("addcdiv.out",
         [](const Tensor& s, const Tensor& a, const Tensor& b, const Scalar& v,
            Tensor& out) -> Tensor& {
           return run_elementwise(AXON_PW_addcdiv, out, {s, a, b},
                                  compute_type({s, a, b}, {}, Promote::IntToFloat), Output::Compute,
                                  v.toDouble());
         });
  m.impl("lerp.Scalar_out", lerp_scalar_out);
  m.impl("lerp.Tensor_out",
         [](const Tensor& s, const Tensor& e, const Tensor& w, Tensor& out) -> Tensor& {
           return run_elementwise(AXON_PW_lerp, out, {s, e, w},
                                  compute_type({s, e, w}, {}, Promote::Same));
         });
  m.impl("pow.Tensor_Scalar_out", pow_tensor_scalar_out);
  m.impl("pow.Scalar_out", pow_scalar_out);
  m.impl("clamp.out", clamp_out);
  m.impl("clamp.Tensor_out", clamp_tensor_out);
  m.impl("clamp_min.out", [](const Tensor& s, const Scalar& lo, Tensor& out) -> Tensor& {
    return clamp_out(s, lo, std::nullopt, out);
  });
  m.impl("clamp_max.out", [](const Tensor& s, const Scalar& hi, Tensor& out) -> Tensor& {
    return clamp_out(s, std::nullopt, hi, out);
  });

  // Unary math.
  m.impl("logical_not.out", [](const Tensor& self, Tensor& out) -> Tensor& {
    return run_elementwise(AXON_PW_logical_not, out, {self}, self.scalar_type(), Output::Bool);
  });

  // Activations and their backward ops.
  m.impl("relu", relu);
  m.impl("relu_", relu_);
  m.impl("hardtanh", hardtanh);
  m.impl("hardtanh.out", hardtanh_out);
  m.impl("hardtanh_", hardtanh_);
  m.impl("hardtanh_backward", hardtanh_backward);
  m.impl("hardtanh_backward.grad_input", hardtanh_backward_out);
  m.impl("leaky_relu.out", [](const Tensor& s, const Scalar& slope, Tensor& out) -> Tensor& {
    return unary(AXON_PW_leaky_relu, s, out, Promote::Same, slope.toDouble());
  });
  m.impl("leaky_relu_backward.grad_input",
         [](const Tensor& g, const Tensor& s, const Scalar& slope, bool, Tensor& out) -> Tensor& {
           return binary(AXON_PW_leaky_relu_backward, g, s, out, Promote::Same, slope.toDouble());
         });
  m.impl("gelu.out", [](const Tensor& s, std::string_view approximate, Tensor& out) -> Tensor& {
    return unary(approximate == "tanh" ? AXON_PW_gelu_tanh : AXON_PW_gelu, s, out, Promote::Same);
  });
  m.impl(
      "gelu_backward.grad_input",
      [](const Tensor& g, const Tensor& s, std::string_view approximate, Tensor& out) -> Tensor& {
        return binary(approximate == "tanh" ? AXON_PW_gelu_tanh_backward : AXON_PW_gelu_backward, g,
                      s, out);
      });
  m.impl("softplus.out",
         [](const Tensor& s, const Scalar& beta, const Scalar& threshold, Tensor& out) -> Tensor& {
           return unary(AXON_PW_softplus, s, out, Promote::Same, beta.toDouble(),
                        threshold.toDouble());
         });
  m.impl("softplus_backward.grad_input",
         [](const Tensor& g, const Tensor& s, const Scalar& beta, const Scalar& threshold,
            Tensor& out) -> Tensor& {
           return binary(AXON_PW_softplus_backward, g, s, out, Promote::Same, beta.toDouble(),
                         threshold.toDouble());
         });
  m.impl("threshold.out",
         [](const Tensor& s, const Scalar& threshold, const Scalar& value, Tensor& out) -> Tensor& {
           return binary(AXON_PW_threshold, s, s, out, Promote::Same, threshold.toDouble(),
                         value.toDouble());
         });
  m.impl("threshold_backward.grad_input",
         [](const Tensor& g, const Tensor& s, const Scalar& threshold, Tensor& out) -> Tensor& {
           return binary(AXON_PW_threshold, s, g, out, Promote::Same, threshold.toDouble(), 0.0);
         });

  // Comparisons, logic, selection.
  m.impl("logical_and.out", [](const Tensor& a, const Tensor& b, Tensor& out) -> Tensor& {
    return compare(AXON_PW_logical_and, a, b, out);
  });
  m.impl("logical_or.out", [](const Tensor& a, const Tensor& b, Tensor& out) -> Tensor& {
    return compare(AXON_PW_logical_or, a, b, out);
  });
  m.impl("logical_xor.out", [](const Tensor& a, const Tensor& b, Tensor& out) -> Tensor& {
    return compare(AXON_PW_logical_xor, a, b, out);
  });
  m.impl("where.self_out", where_out);
  m.impl("where.self", where);
  m.impl("masked_fill_.Scalar", masked_fill_scalar);
  m.impl("masked_fill_.Tensor", masked_fill_tensor);
}

// ---- rounding, remainders, more math and activations (issue 3) ----------------------------------

namespace {

Tensor& ax_round_decimals_out(const Tensor& self, int64_t decimals, Tensor& out) {
  if (decimals == 0 || !at::isFloatingType(self.scalar_type()))
    return unary(AXON_PW_round, self, out, Promote::Same);
  // The kernel gets 10^|decimals| and whether decimals are negative.
  double ten_pow = std::pow(10.0, double(decimals < 0 ? -decimals : decimals));
  return unary(AXON_PW_round_decimals, self, out, Promote::Same, ten_pow, decimals < 0 ? 1.0 : 0.0);
}

Tensor& ax_nan_to_num_out(const Tensor& self, std::optional<double> nan,
                          std::optional<double> posinf, std::optional<double> neginf, Tensor& out) {
  at::ScalarType t = self.scalar_type();
  if (!at::isFloatingType(t)) {
    at::native::resize_output(out, self.sizes());
    return out.copy_(self);
  }
  // Defaults are the dtype's largest and lowest finite values (type decisions, no arithmetic).
  double hi = 0, lo = 0;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, t, "nan_to_num", [&] {
    hi = double(std::numeric_limits<scalar_t>::max());
    lo = double(std::numeric_limits<scalar_t>::lowest());
  });
  return run_elementwise(AXON_PW_nan_to_num, out, {self}, t, Output::Compute, posinf.value_or(hi),
                         neginf.value_or(lo), {Scalar(nan.value_or(0.0))});
}

Tensor& ax_elu_out(const Tensor& self, const Scalar& alpha, const Scalar& scale,
                   const Scalar& input_scale, Tensor& out) {
  at::ScalarType t = compute_type({self}, {}, Promote::Same);
  return run_elementwise(AXON_PW_elu, out, {self}, t, Output::Compute, alpha.toDouble(),
                         scale.toDouble(), {input_scale});
}

Tensor& ax_elu_backward_out(const Tensor& grad, const Scalar& alpha, const Scalar& scale,
                            const Scalar& input_scale, bool is_result, const Tensor& self_or_result,
                            Tensor& out) {
  TORCH_CHECK(!is_result || alpha.toDouble() >= 0.0,
              "In-place elu backward calculation is triggered "
              "with a negative slope which is not supported. This is caused by calling in-place "
              "forward function with a negative slope, please call out-of-place version instead.");
  at::ScalarType t = compute_type({grad, self_or_result}, {}, Promote::Same);
  return run_elementwise(is_result ? AXON_PW_elu_backward_result : AXON_PW_elu_backward, out,
                         {grad, self_or_result}, t, Output::Compute, alpha.toDouble(),
                         scale.toDouble(), {input_scale});
}

Tensor& ax_hardswish_out(const Tensor& self, Tensor& out) {
  return unary(AXON_PW_hardswish, self, out, Promote::Same);
}
Tensor ax_hardswish(const Tensor& self) {
  return functional<ax_hardswish_out>(self);
}
Tensor& ax_hardswish_(Tensor& self) {
  return ax_hardswish_out(self, self);
}

Tensor& ax_hardswish_backward_out(const Tensor& grad, const Tensor& self, Tensor& out) {
  return binary(AXON_PW_hardswish_backward, grad, self, out);
}
Tensor ax_hardswish_backward(const Tensor& grad, const Tensor& self) {
  Tensor out = at::empty_like(grad);
  return ax_hardswish_backward_out(grad, self, out);
}

Tensor ax_mish_backward(const Tensor& grad, const Tensor& self) {
  Tensor out = at::empty_like(grad);
  return binary(AXON_PW_mish_backward, grad, self, out);
}

// The buffer is not needed (the backward recomputes from the input); like CUDA, it stays empty.
std::tuple<Tensor&, Tensor&> ax_log_sigmoid_forward_out(const Tensor& self, Tensor& output,
                                                        Tensor& buffer) {
  unary(AXON_PW_log_sigmoid, self, output, Promote::Same);
  at::native::resize_output(buffer, {0});
  return {output, buffer};
}
std::tuple<Tensor, Tensor> ax_log_sigmoid_forward(const Tensor& self) {
  Tensor output = at::empty_like(self), buffer = at::empty({0}, self.options());
  ax_log_sigmoid_forward_out(self, output, buffer);
  return {output, buffer};
}
Tensor& ax_log_sigmoid_backward_out(const Tensor& grad, const Tensor& self,
                                    const Tensor& /*buffer*/, Tensor& out) {
  return binary(AXON_PW_log_sigmoid_backward, grad, self, out);
}
Tensor ax_log_sigmoid_backward(const Tensor& grad, const Tensor& self, const Tensor& buffer) {
  Tensor out = at::empty_like(grad);
  return ax_log_sigmoid_backward_out(grad, self, buffer, out);
}

Tensor& ax_floor_divide_out(const Tensor& a, const Tensor& b, Tensor& out) {
  return binary(AXON_PW_div_floor, a, b, out);
}
Tensor ax_floor_divide(const Tensor& a, const Tensor& b) {
  Tensor out = empty_following({a, b}, compute_type({a, b}, {}, Promote::Same));
  return ax_floor_divide_out(a, b, out);
}
Tensor& ax_floor_divide_(Tensor& a, const Tensor& b) {
  return ax_floor_divide_out(a, b, a);
}

Tensor& ax_remainder_scalar_tensor_out(const Scalar& a, const Tensor& b, Tensor& out) {
  return binary(AXON_PW_remainder, at::native::wrapped_scalar_tensor(a), b, out);
}
Tensor ax_remainder_scalar_tensor(const Scalar& a, const Tensor& b) {
  Tensor wa = at::native::wrapped_scalar_tensor(a);
  Tensor out = empty_following({b}, compute_type({wa, b}, {}, Promote::Same));
  return binary(AXON_PW_remainder, wa, b, out);
}

Tensor ax_isnan(const Tensor& self) {
  Tensor out = empty_following({self}, at::kBool);
  return predicate(AXON_PW_isnan, self, out);
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("round.decimals_out", ax_round_decimals_out);
  m.impl("remainder.Scalar_Tensor", ax_remainder_scalar_tensor);
  m.impl("remainder.Scalar_Tensor_out", ax_remainder_scalar_tensor_out);
  m.impl("floor_divide", ax_floor_divide);
  m.impl("floor_divide.out", ax_floor_divide_out);
  m.impl("floor_divide_.Tensor", ax_floor_divide_);
  m.impl("isnan", ax_isnan);
  m.impl("nan_to_num.out", ax_nan_to_num_out);
  OUT1("sgn.out", AXON_PW_sign, Same);
  m.impl("elu.out", ax_elu_out);
  m.impl("elu_backward.grad_input", ax_elu_backward_out);
  m.impl("hardswish", ax_hardswish);
  m.impl("hardswish.out", ax_hardswish_out);
  m.impl("hardswish_", ax_hardswish_);
  m.impl("hardswish_backward", ax_hardswish_backward);
  m.impl("hardswish_backward.out", ax_hardswish_backward_out);
  m.impl("mish_backward", ax_mish_backward);
  m.impl("log_sigmoid_forward", ax_log_sigmoid_forward);
  m.impl("log_sigmoid_forward.output", ax_log_sigmoid_forward_out);
  m.impl("log_sigmoid_backward", ax_log_sigmoid_backward);
  m.impl("log_sigmoid_backward.grad_input", ax_log_sigmoid_backward_out);
}

}  // namespace axon
