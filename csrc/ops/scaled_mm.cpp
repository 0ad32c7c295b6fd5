// torch._scaled_mm: the product of two (usually float8) matrices with per-tensor or row-wise
// scales, as float8 training (torchao) calls it. Operands widen to float32 on the device, the
// product runs on the device's matmul path (host BLAS in the queue, CLBlast or the gemm
// kernel) and the scales apply to the float32 accumulator, as cuBLAS applies them; the result
// rounds once to out_dtype. Float8 storage and its casts are runtime dtypes (kernels/common.cl).
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Tensor;
using OptionalTensor = std::optional<Tensor>;

bool is_float8(at::ScalarType t) {
  return t == at::kFloat8_e4m3fn || t == at::kFloat8_e5m2 || t == at::kFloat8_e4m3fnuz ||
         t == at::kFloat8_e5m2fnuz;
}

// A scale is one float32 value for the whole operand, or one per row of mat1 ([M, 1]) and
// one per column of mat2 ([1, N]), the two forms CUDA accepts.
Tensor scale_as_factor(const Tensor& scale, const char* name, int64_t rows, int64_t cols) {
  TORCH_CHECK(scale.scalar_type() == at::kFloat, "_scaled_mm: ", name, " must be float32, got ",
              scale.scalar_type());
  TORCH_CHECK(scale.device().type() == c10::DeviceType::PrivateUse1, "_scaled_mm: ", name,
              " must be on the axon device, got ", scale.device());
  if (scale.numel() == 1) return scale.reshape({});
  TORCH_CHECK(scale.dim() == 2 && scale.size(0) == rows && scale.size(1) == cols,
              "_scaled_mm: ", name, " must hold one value or have shape [", rows, ", ", cols,
              "], got ", scale.sizes());
  return scale;
}

Tensor& scaled_mm_out(const Tensor& self, const Tensor& mat2, const Tensor& scale_a,
                      const Tensor& scale_b, const OptionalTensor& bias,
                      const OptionalTensor& scale_result, std::optional<at::ScalarType> out_dtype,
                      bool /*use_fast_accum: the product always accumulates in float32*/,
                      Tensor& out) {
  TORCH_CHECK(self.dim() == 2 && mat2.dim() == 2, "_scaled_mm: expected 2-d matrices, got ",
              self.sizes(), " and ", mat2.sizes());
  TORCH_CHECK(self.size(1) == mat2.size(0), "_scaled_mm: shapes ", self.sizes(), " and ",
              mat2.sizes(), " cannot be multiplied");
  TORCH_CHECK(is_float8(self.scalar_type()) || self.scalar_type() == mat2.scalar_type(),
              "_scaled_mm: expected float8 matrices, got ", self.scalar_type(), " and ",
              mat2.scalar_type());
  const int64_t m = self.size(0), n = mat2.size(1);
  Tensor factor =
      scale_as_factor(scale_a, "scale_a", m, 1) * scale_as_factor(scale_b, "scale_b", 1, n);
  Tensor acc = at::mm(self.to(at::kFloat), mat2.to(at::kFloat)).mul_(factor);
  if (bias.has_value() && bias->defined()) acc.add_(bias->to(at::kFloat));
  // A float8 result is divided by scale_result before rounding (the output's own scale).
  if (is_float8(out.scalar_type()) && scale_result.has_value() && scale_result->defined())
    acc.div_(scale_result->to(at::kFloat));
  TORCH_CHECK(!out_dtype.has_value() || *out_dtype == out.scalar_type(), "_scaled_mm: out is ",
              out.scalar_type(), " but out_dtype is ", *out_dtype);
  at::native::resize_output(out, {m, n});
  out.copy_(acc);
  return out;
}

Tensor scaled_mm(const Tensor& self, const Tensor& mat2, const Tensor& scale_a,
                 const Tensor& scale_b, const OptionalTensor& bias,
                 const OptionalTensor& scale_result, std::optional<at::ScalarType> out_dtype,
                 bool use_fast_accum) {
  Tensor out = at::empty({0}, self.options().dtype(out_dtype.value_or(self.scalar_type())));
  return scaled_mm_out(self, mat2, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum,
                       out);
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("_scaled_mm", scaled_mm);
  m.impl("_scaled_mm.out", scaled_mm_out);
}

}  // namespace axon
