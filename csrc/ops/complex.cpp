// Complex numbers (complex64, complex128: (real, imaginary) pairs in memory, as PyTorch keeps
// them): the views between complex tensors and their real pairs, complex numbers from real
// parts, the physical conjugate. Arithmetic and math on them runs through the elementwise glue
// into kernels/complex.cl; sums reduce the pairs (ops/reduce.cpp).
#include <ATen/native/Resize.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <torch/library.h>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Tensor;

// complex(real, imag) / polar(abs, angle) of two real tensors of one float type.
Tensor& from_parts(axon_pointwise_op op, const Tensor& a, const Tensor& b, Tensor& out) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), axon_pointwise_name(op),
              ": expected the two inputs to have the ", "same dtype, got ", a.scalar_type(),
              " and ", b.scalar_type());
  TORCH_CHECK(a.scalar_type() == at::kFloat || a.scalar_type() == at::kDouble,
              axon_pointwise_name(op), ": expected float or double inputs, got ", a.scalar_type());
  TORCH_CHECK(out.scalar_type() == c10::toComplexType(a.scalar_type()), axon_pointwise_name(op),
              ": expected out of ", c10::toComplexType(a.scalar_type()), ", got ",
              out.scalar_type());
  return run_elementwise(op, out, {a, b}, a.scalar_type(), Output::Complex);
}

Tensor& complex_out(const Tensor& real, const Tensor& imag, Tensor& out) {
  return from_parts(AXON_PW_complex, real, imag, out);
}

Tensor& polar_out(const Tensor& abs, const Tensor& angle, Tensor& out) {
  return from_parts(AXON_PW_polar, abs, angle, out);
}

Tensor& conj_physical_out(const Tensor& self, Tensor& out) {
  if (!self.is_complex()) {
    at::native::resize_output(out, self.sizes());
    return out.copy_(self);
  }
  return unary(AXON_PW_conj_physical, self, out, Promote::Same);
}

// In place: ATen's own conj_physical_ calls the CPU/CUDA kernel stub directly.
Tensor& conj_physical_(Tensor& self) {
  return self.is_complex() ? unary(AXON_PW_conj_physical, self, self, Promote::Same) : self;
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("view_as_real", at::native::view_as_real);
  m.impl("view_as_complex", at::native::view_as_complex);
  m.impl("complex.out", complex_out);
  m.impl("polar.out", polar_out);
  m.impl("conj_physical.out", conj_physical_out);
  m.impl("conj_physical_", conj_physical_);
}

}  // namespace axon
