// Special mathematical functions: erfc, erfinv, the gamma family (lgamma, digamma, polygamma,
// mvlgamma, igamma / igammac, Hurwitz zeta), Bessel and Airy functions, normal-distribution
// helpers and the orthogonal polynomials of torch.special. Each is one kernel of
// kernels/special.cl run through the elementwise machinery (TensorIterator broadcasting, ATen
// type promotion, integer inputs computed in the default float type). Only the structured
// `.out` overloads are registered: PyTorch derives the functional and in-place forms, and its
// Scalar overloads wrap the scalar into a tensor before calling them. Gradients are PyTorch's
// formulas in terms of these same ops (digamma' = polygamma(1, x), i0' = i1, ...).
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Tensor;

Tensor& polygamma_out(int64_t n, const Tensor& self, Tensor& out) {
  TORCH_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
  return unary(AXON_PW_polygamma, self, out, Promote::IntToFloat, double(n));
}

// mvlgamma's functional form is composite (a sum of lgamma over shifted copies of the input,
// with its argument checks); its out= form is a CPU kernel upstream, so compose it here.
Tensor& mvlgamma_out(const Tensor& self, int64_t p, Tensor& out) {
  Tensor result = at::mvlgamma(self, p);
  TORCH_CHECK(at::canCast(result.scalar_type(), out.scalar_type()), "result type ",
              result.scalar_type(), " can't be cast to the desired output type ",
              out.scalar_type());
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}

}  // namespace

// The other special functions register from the pointwise table (ops/pointwise_table.cpp).
AXON_ATEN_IMPL(m) {
  m.impl("polygamma.out", polygamma_out);
  m.impl("mvlgamma.out", mvlgamma_out);
}

}  // namespace axon
