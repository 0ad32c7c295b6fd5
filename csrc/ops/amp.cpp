// Mixed precision: autocast for the axon device with CUDA's own op lists (matrix products and
// convolutions in the low-precision type; reductions, softmax, norms and losses in float32),
// and the two helper ops torch.amp.GradScaler calls, run natively.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Tensor;

void amp_unscale_(at::TensorList grads, Tensor& found_inf, const Tensor& inv_scale) {
  TORCH_CHECK(found_inf.scalar_type() == at::kFloat && found_inf.numel() == 1,
              "found_inf must be a 1-element float tensor");
  TORCH_CHECK(inv_scale.scalar_type() == at::kFloat && inv_scale.numel() == 1,
              "inv_scale must be a 1-element float tensor");
  for (const Tensor& g : grads) {
    if (!g.defined() || g.numel() == 0) continue;
    TORCH_CHECK(g.device() == found_inf.device(), "gradients must be on found_inf's device");
    TORCH_CHECK(at::isFloatingType(g.scalar_type()), "unscale expects floating gradients");
    c10::DeviceGuard guard(g.device());
    // Non-contiguous gradients are unscaled through a contiguous copy.
    Tensor dense = g.is_non_overlapping_and_dense() && g.is_contiguous() ? g : g.contiguous();
    AXON_CHECK(axon_amp_unscale(stream_for(dense), to_axon_dtype(dense.scalar_type()),
                                dense.data_ptr(), dense.numel(), found_inf.data_ptr(),
                                inv_scale.data_ptr()));
    if (!dense.is_same(g)) const_cast<Tensor&>(g).copy_(dense);
  }
}

Tensor& amp_update_scale_(Tensor& scale, Tensor& growth_tracker, const Tensor& found_inf,
                          double growth, double backoff, int64_t interval) {
  TORCH_CHECK(scale.scalar_type() == at::kFloat && growth_tracker.scalar_type() == at::kInt,
              "expected a float scale and an int growth tracker");
  c10::DeviceGuard guard(scale.device());
  AXON_CHECK(axon_amp_update_scale(stream_for(scale), scale.data_ptr(), growth_tracker.data_ptr(),
                                   found_inf.data_ptr(), float(growth), float(backoff),
                                   int(interval)));
  return scale;
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("_amp_foreach_non_finite_check_and_unscale_", amp_unscale_);
  m.impl("_amp_update_scale_", amp_update_scale_);
}

// PyTorch's op-list macros name these types unqualified.
#if __has_include(<ATen/core/Dimname.h>)
using at::DimnameList;  // torch 2.11's lists still hold named-tensor overloads
#endif
using at::IntArrayRef;
using at::Scalar;
using at::ScalarType;
using at::Tensor;

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define AXON_LOW_PRECISION(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define AXON_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define AXON_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define AXON_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(AXON_LOW_PRECISION)
  AT_FORALL_FP32(AXON_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(AXON_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(AXON_PROMOTE)
#undef AXON_LOW_PRECISION
#undef AXON_FP32
#undef AXON_FP32_SET_OPT_DTYPE
#undef AXON_PROMOTE
}

}  // namespace axon
