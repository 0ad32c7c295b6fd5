// Factories: linspace, logspace (kernels/factory.cl) and eye. The functional forms and the
// tensor-argument overloads are PyTorch's composites over the .out forms registered here.
#include <ATen/Dispatch.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <cmath>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Scalar;
using at::Tensor;

// Integer outputs are computed in double (float without fp64) and truncated on conversion,
// as PyTorch computes its integer steps in double.
at::ScalarType compute_dtype(const Tensor& out) {
  if (at::isFloatingType(out.scalar_type())) return out.scalar_type();
  axon_device_info info{};
  AXON_CHECK(axon_device_get_info(out.device().index(), &info));
  return info.has_fp64 ? at::kDouble : at::kFloat;
}

// Runs factory kernel `op` over the 1-D `out` (already sized, steps >= 2). start and end are
// already in the output's type; beta is the kernel's per-op quantity; s2, s3 extra scalars.
void run_factory(axon_pointwise_op op, Tensor& out, double start, double end, double beta,
                 double s2 = 0, double s3 = 0) {
  c10::DeviceGuard guard(out.device());
  at::ScalarType compute = compute_dtype(out);
  check_dtype_supported(compute, out.device().index());
  Tensor target =
      compute == out.scalar_type() ? out : at::empty(out.sizes(), out.options().dtype(compute));
  axon_ew_desc d = make_ew_desc_same_shape(target, {}, true);
  d.ninputs = 0;
  d.scalars[1] = end;
  d.scalars[2] = s2;
  d.scalars[3] = s3;
  axon_dtype t = to_axon_dtype(compute);
  AXON_CHECK(axon_elementwise(stream_for(out), op, t, t, &d, start, beta));
  if (!target.is_same(out)) out.copy_(target);
}

// The output's scalar type for start/end and the step arithmetic: integers widen to double
// (after truncation to the output type, as Scalar::to does, overflow included).
template <typename scalar_t>
using step_t = std::conditional_t<std::is_integral_v<scalar_t>, double, scalar_t>;

Tensor& linspace_out(const Scalar& start, const Scalar& end, int64_t steps, Tensor& out) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  if (out.numel() != steps) out.resize_({steps});
  if (steps == 0) return out;
  if (steps == 1) return out.fill_(start);
  if (out.is_complex()) {  // both parts are linear in the index: two real linspaces
    c10::complex<double> s = start.toComplexDouble(), e = end.toComplexDouble();
    auto part = [&](double from, double to) {
      Tensor t = at::empty({steps}, out.options().dtype(c10::toRealValueType(out.scalar_type())));
      return linspace_out(from, to, steps, t);
    };
    return out.copy_(at::complex(part(s.real(), e.real()), part(s.imag(), e.imag())));
  }
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "linspace_axon", [&] {
    const scalar_t s = start.to<scalar_t>(), e = end.to<scalar_t>();
    const step_t<scalar_t> step =
        (static_cast<step_t<scalar_t>>(e) - static_cast<step_t<scalar_t>>(s)) / (steps - 1);
    run_factory(AXON_PW_linspace, out, double(s), double(e), double(step));
  });
  return out;
}

Tensor& logspace_out(const Scalar& start, const Scalar& end, int64_t steps, double base,
                     Tensor& out) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  if (out.numel() != steps) out.resize_({steps});
  if (steps == 0) return out;
  if (steps == 1) return out.fill_(std::pow(base, start.to<double>()));
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "logspace_axon", [&] {
    const scalar_t s = start.to<scalar_t>(), e = end.to<scalar_t>();
    // The difference in the output's type (promoted for narrow integers), as PyTorch takes it.
    const double diff = double(e - s);
    // A float kernel takes its scalars as float: the base goes as float plus remainder.
    const double hi = double(float(base));
    run_factory(AXON_PW_logspace, out, double(s), double(e), diff, hi, base - hi);
  });
  return out;
}

Tensor& eye_m_out(int64_t n, int64_t m, Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  out.resize_({n, m});
  out.zero_();
  if (n > 0 && m > 0) out.diagonal().fill_(1);
  return out;
}

Tensor& eye_out(int64_t n, Tensor& out) {
  return eye_m_out(n, n, out);
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("linspace.out", linspace_out);
  m.impl("logspace.out", logspace_out);
  m.impl("eye.out", eye_out);
  m.impl("eye.m_out", eye_m_out);
}

}  // namespace axon
