// The functional and in-place forms of the common structured pointwise ops, with a fast path.
// PyTorch derives these forms from the out= kernel (ops/pointwise_table.cpp, elementwise.cpp)
// through the op's meta function: a TensorIterator that works out the result's shape, type and
// strides, then a dispatched empty_strided for it. For a one-element op that is a third of its
// host time. When every tensor operand has the standard contiguous strides of one shape, device
// and floating type, and the rest are Python numbers, the iterator has nothing to decide: the
// result is a contiguous tensor of that shape and type (a floating tensor keeps its type against
// Python numbers), so the fast path allocates it and calls the out= kernel directly. Every other
// call goes to the op's own CompositeExplicitAutogradNonFunctional kernel, the one PyTorch would
// have used, so broadcasting, promotion, layouts and errors stay PyTorch's.
#include <ATen/CompositeExplicitAutogradNonFunctionalFunctions.h>
#include <ATen/EmptyTensor.h>
#include <torch/library.h>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Scalar;
using at::Tensor;
namespace composite = at::compositeexplicitautogradnonfunctional;

// Whether `t` has the strides `empty` gives its sizes. That is stricter than is_contiguous(), which
// ignores the strides of size-1 dims; TensorIterator does not (a size-1 dim's odd stride can move
// it in the result's layout), and an empty tensor takes PyTorch's path.
bool standard_strides(const Tensor& t) {
  int64_t expected = 1;
  for (int64_t d = t.dim() - 1; d >= 0; d--) {
    if (t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return expected > 0;
}

// Whether `t` may join a fast path that `lead` (null until the first tensor) leads: a wrapped
// Python number that is not complex (it does not change a floating result's type; a 0-dim tensor
// the user made would take part in promotion, and takes PyTorch's path), or a tensor with
// standard strides whose shape, device and type are the lead's. The lead is an axon tensor of a
// floating type.
bool joins_line(const Tensor& t, const Tensor*& lead) {
  if (t.unsafeGetTensorImpl()->is_wrapped_number()) return !at::isComplexType(t.scalar_type());
  if (lead == nullptr) {
    lead = &t;
    return t.is_privateuseone() && at::isFloatingType(t.scalar_type()) && standard_strides(t);
  }
  return t.scalar_type() == lead->scalar_type() && t.device() == lead->device() &&
         t.sizes() == lead->sizes() && standard_strides(t);
}

// The operand the fast path's result follows (the first that is not a Python number), or null
// where the fast path does not apply.
const Tensor* line_lead(const Tensor& a) {
  const Tensor* lead = nullptr;
  return joins_line(a, lead) ? lead : nullptr;
}
const Tensor* line_lead(const Tensor& a, const Tensor& b) {
  const Tensor* lead = nullptr;
  return joins_line(a, lead) && joins_line(b, lead) ? lead : nullptr;
}

// alpha as add and sub check it for a floating result: neither complex nor bool.
bool plain_alpha(const Scalar& alpha) {
  return !alpha.isComplex() && !alpha.isBoolean();
}

// The result of the fast path: contiguous, the shape and type of `like`, on its device (the
// caller holds a guard for that device).
Tensor empty_line(const Tensor& like) {
  return at::detail::empty_generic(like.sizes(), device_allocator(),
                                   c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                   like.scalar_type(), std::nullopt);
}

// Promote::Same throughout: the operands are floating, where both promotions agree.
template <axon_pointwise_op Op, Tensor (*Composite)(const Tensor&)>
Tensor unary_functional(const Tensor& self) {
  if (!line_lead(self)) return Composite(self);
  c10::DeviceGuard guard(self.device());
  Tensor out = empty_line(self);
  return unary(Op, self, out, Promote::Same);
}

template <axon_pointwise_op Op, Tensor& (*Composite)(Tensor&)>
Tensor& unary_inplace(Tensor& self) {
  if (!line_lead(self)) return Composite(self);
  return unary(Op, self, self, Promote::Same);
}

// The binary forms, with add's and sub's alpha as an optional last argument (`Alpha` is empty or
// one Scalar); an alpha the fast path cannot take goes to PyTorch's path. A class holds the
// operand types so that each Composite's type names the one overload it means.
template <axon_pointwise_op Op, typename... Alpha>
struct Binary {
  template <Tensor (*Composite)(const Tensor&, const Tensor&, const Alpha&...)>
  static Tensor functional(const Tensor& a, const Tensor& b, const Alpha&... alpha) {
    const Tensor* lead = (plain_alpha(alpha) && ...) ? line_lead(a, b) : nullptr;
    if (lead == nullptr) return Composite(a, b, alpha...);
    c10::DeviceGuard guard(lead->device());
    Tensor out = empty_line(*lead);
    return binary(Op, a, b, out, Promote::Same, alpha.toDouble()...);
  }

  template <Tensor& (*Composite)(Tensor&, const Tensor&, const Alpha&...)>
  static Tensor& inplace(Tensor& a, const Tensor& b, const Alpha&... alpha) {
    if (!(plain_alpha(alpha) && ...) || line_lead(a, b) != &a) return Composite(a, b, alpha...);
    return binary(Op, a, b, a, Promote::Same, alpha.toDouble()...);
  }
};

}  // namespace

// UNARY(row, aten): the table's row and the ATen op whose functional (aten) and in-place (aten_)
// forms take the fast path. BINARY the same for two tensors, `overload` naming both forms'
// overload; BINARY_FUNCTIONAL and BINARY_INPLACE register one form by its full name.
#define UNARY(row, aten)                                             \
  m.impl(#aten, &unary_functional<AXON_PW_##row, &composite::aten>); \
  m.impl(#aten "_", &unary_inplace<AXON_PW_##row, &composite::aten##_>)
#define BINARY_FUNCTIONAL(row, aten, name) \
  m.impl(name, &Binary<AXON_PW_##row>::functional<&composite::aten>)
#define BINARY_INPLACE(row, aten, name) \
  m.impl(name, &Binary<AXON_PW_##row>::inplace<&composite::aten##_>)
#define BINARY(row, aten, overload)             \
  BINARY_FUNCTIONAL(row, aten, #aten overload); \
  BINARY_INPLACE(row, aten, #aten "_" overload)
#define ALPHA(row, aten)                                                                 \
  m.impl(#aten ".Tensor", &Binary<AXON_PW_##row, Scalar>::functional<&composite::aten>); \
  m.impl(#aten "_.Tensor", &Binary<AXON_PW_##row, Scalar>::inplace<&composite::aten##_>)

AXON_ATEN_IMPL(m) {
  ALPHA(add, add);
  ALPHA(sub, sub);
  BINARY(mul, mul, ".Tensor");
  BINARY(div, div, ".Tensor");
  BINARY_FUNCTIONAL(pow, pow, "pow.Tensor_Tensor");
  BINARY_INPLACE(pow, pow, "pow_.Tensor");
  BINARY(fmod, fmod, ".Tensor");
  BINARY(remainder, remainder, ".Tensor");
  BINARY(copysign, copysign, ".Tensor");
  BINARY(xlogy, xlogy, ".Tensor");
  BINARY(atan2, atan2, "");
  BINARY(hypot, hypot, "");
  BINARY(nextafter, nextafter, "");
  BINARY_FUNCTIONAL(maximum, maximum, "maximum");
  BINARY_FUNCTIONAL(minimum, minimum, "minimum");
  BINARY_FUNCTIONAL(logaddexp, logaddexp, "logaddexp");
  BINARY_FUNCTIONAL(sigmoid_backward, sigmoid_backward, "sigmoid_backward");
  BINARY_FUNCTIONAL(tanh_backward, tanh_backward, "tanh_backward");
  BINARY_FUNCTIONAL(silu_backward, silu_backward, "silu_backward");
  UNARY(neg, neg);
  UNARY(sign, sign);
  UNARY(sign, sgn);
  UNARY(exp, exp);
  UNARY(exp2, exp2);
  UNARY(expm1, expm1);
  UNARY(log, log);
  UNARY(log2, log2);
  UNARY(log10, log10);
  UNARY(log1p, log1p);
  UNARY(sqrt, sqrt);
  UNARY(rsqrt, rsqrt);
  UNARY(reciprocal, reciprocal);
  UNARY(sin, sin);
  UNARY(cos, cos);
  UNARY(tan, tan);
  UNARY(tanh, tanh);
  UNARY(sigmoid, sigmoid);
  UNARY(erf, erf);
  UNARY(erfc, erfc);
  UNARY(erfinv, erfinv);
  UNARY(asin, asin);
  UNARY(acos, acos);
  UNARY(atan, atan);
  UNARY(sinh, sinh);
  UNARY(cosh, cosh);
  UNARY(asinh, asinh);
  UNARY(acosh, acosh);
  UNARY(atanh, atanh);
  UNARY(floor, floor);
  UNARY(ceil, ceil);
  UNARY(round, round);
  UNARY(trunc, trunc);
  UNARY(frac, frac);
  UNARY(lgamma, lgamma);
  UNARY(digamma, digamma);
  UNARY(i0, i0);
  UNARY(sinc, sinc);
  UNARY(silu, silu);
  UNARY(mish, mish);
  UNARY(hardsigmoid, hardsigmoid);
}

}  // namespace axon
