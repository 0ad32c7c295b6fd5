// Helpers shared by the neural-network op files (resample, grid_sample, embedding, margin_loss,
// ctc, distance, pool): dtype checks that fail as PyTorch's CPU does, the accumulation dtype,
// and writing a result computed in a contiguous temporary back to an out= tensor.
#pragma once

#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "axon_glue.h"

namespace axon {

// ops/copy.cpp: the counted CPU fallback, for ops declined at run time.
void counted_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// Float atomics and the CTC recursions accumulate in float for float16 / bfloat16.
inline at::ScalarType acc_type(at::ScalarType t) {
  return t == at::kDouble ? t : at::kFloat;
}

// Floating dtypes only; float16 / bfloat16 only where PyTorch's CPU kernel has them (`reduced`),
// failing as the CPU does (its kernel's name in the message) where it has not.
inline void check_float(const at::Tensor& t, const char* op, bool reduced = true) {
  at::ScalarType st = t.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(
      at::isFloatingType(st) && (reduced || (st != at::kHalf && st != at::kBFloat16)), "\"", op,
      "\" not implemented for '", c10::toString(st), "'");
  check_dtype_supported(t.scalar_type(), t.device().index());
}

// Floating dtypes only, with Axon's message (ops whose CPU kernel takes integers too).
inline void check_floating(const at::Tensor& t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t.scalar_type()), "axon: ", op,
                              " is not implemented for ", t.scalar_type());
  check_dtype_supported(t.scalar_type(), t.device().index());
}

// The device address of a tensor a kernel reads or writes, or nullptr for an absent or empty
// one (which the kernel does not touch).
inline void* data_or_null(const at::Tensor& t) {
  return t.defined() && t.numel() > 0 ? t.data_ptr() : nullptr;
}

// grad_input (resized to self's shape) from a gradient computed in another shape.
inline at::Tensor& write_like(at::Tensor& out, const at::Tensor& self, const at::Tensor& value) {
  at::native::resize_output(out, self.sizes());
  return out.copy_(value.view(self.sizes()));
}

}  // namespace axon
