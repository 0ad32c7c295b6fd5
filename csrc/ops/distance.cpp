// Pairwise distances, pdist and cdist, forward and backward: shapes (cdist's batch dims
// broadcast and flattened) here, the distances in the runtime's distance family
// (kernels/distance.cl, axon/distance.h).
#include <ATen/ExpandUtils.h>
#include <torch/library.h>

#include "axon_glue.h"
#include "nn_checks.h"

extern "C" {
#include "axon/distance.h"
}

namespace axon {
namespace {

using at::Tensor;

void run_distance(axon_distance_kernel kernel, const Tensor& like, const axon_distance_desc& d) {
  AXON_CHECK(axon_distance(stream_for(like), to_axon_dtype(like.scalar_type()), kernel, &d));
}

Tensor pdist_forward(const Tensor& self, double p) {
  c10::DeviceGuard guard(self.device());
  TORCH_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: ", self.dim(), "D");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "pdist only supports floating-point dtypes");
  TORCH_CHECK(p >= 0, "pdist only supports non-negative p values");
  check_float(self, "pdist", false);
  int64_t n = self.size(0), m = self.size(1), pairs = n > 1 ? n * (n - 1) / 2 : 0;
  Tensor x = self.contiguous(), out = at::empty({pairs}, self.options());
  axon_distance_desc d{};
  d.args.batch = 1;
  d.args.rows1 = n;
  d.args.cols = m;
  d.args.p = axon_real_of(p);
  d.x1 = data_or_null(x);
  d.output = data_or_null(out);
  run_distance(AXON_PDIST, self, d);
  return out;
}

Tensor pdist_backward(const Tensor& grad, const Tensor& self, double p, const Tensor& dist) {
  c10::DeviceGuard guard(self.device());
  TORCH_CHECK(self.is_contiguous(), "_pdist_backward requires self to be contiguous");
  TORCH_CHECK(dist.is_contiguous(), "_pdist_backward requires pdist to be contiguous");
  check_float(self, "pdist_backward", false);
  int64_t n = self.size(0), m = self.size(1);
  Tensor out = at::empty(self.sizes(), self.options());
  if (n <= 1 || p == 0) return out.zero_();
  Tensor g = grad.contiguous();
  axon_distance_desc d{};
  d.args.batch = 1;
  d.args.rows1 = n;
  d.args.cols = m;
  d.args.p = axon_real_of(p);
  d.grad = data_or_null(g);
  d.x1 = data_or_null(self);
  d.dist = data_or_null(dist);
  d.output = data_or_null(out);
  run_distance(AXON_PDIST_BACKWARD, self, d);
  return out;
}

// x1 [..., P, M] and x2 [..., R, M] with their batch dims broadcast and flattened.
struct CdistShapes {
  std::vector<int64_t> batch;
  int64_t B, P, R, M;
};

CdistShapes cdist_shapes(const Tensor& x1, const Tensor& x2) {
  TORCH_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  TORCH_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  TORCH_CHECK(x1.size(-1) == x2.size(-1),
              "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
              " X2: ", x2.size(-1));
  CdistShapes s;
  s.batch = at::infer_size(x1.sizes().slice(0, x1.dim() - 2), x2.sizes().slice(0, x2.dim() - 2));
  s.B = c10::multiply_integers(s.batch);
  s.P = x1.size(-2);
  s.R = x2.size(-2);
  s.M = x1.size(-1);
  return s;
}

Tensor flat_batch(const Tensor& x, const CdistShapes& s, int64_t rows) {
  std::vector<int64_t> shape = s.batch;
  shape.push_back(rows);
  shape.push_back(s.M);
  return x.expand(shape).reshape({s.B, rows, s.M}).contiguous();
}

axon_distance_desc distance_desc(const CdistShapes& s, double p) {
  axon_distance_desc d{};
  d.args.batch = s.B;
  d.args.rows1 = s.P;
  d.args.rows2 = s.R;
  d.args.cols = s.M;
  d.args.p = axon_real_of(p);
  return d;
}

Tensor cdist_forward(const Tensor& x1, const Tensor& x2, double p,
                     std::optional<int64_t> /*compute_mode: pointwise is exact for p = 2 too*/) {
  c10::DeviceGuard guard(x1.device());
  TORCH_CHECK(at::isFloatingType(x1.scalar_type()),
              "cdist only supports floating-point dtypes, X1 got: ", x1.scalar_type());
  TORCH_CHECK(at::isFloatingType(x2.scalar_type()),
              "cdist only supports floating-point dtypes, X2 got: ", x2.scalar_type());
  TORCH_CHECK(p >= 0, "cdist only supports non-negative p values");
  TORCH_CHECK(x1.scalar_type() == x2.scalar_type(), "expected x1 and x2 to have the same dtype");
  check_float(x1, "cdist", false);
  CdistShapes s = cdist_shapes(x1, x2);
  std::vector<int64_t> shape = s.batch;
  shape.push_back(s.P);
  shape.push_back(s.R);
  Tensor out = at::empty(shape, x1.options());
  if (out.numel() == 0) return out;
  Tensor a = flat_batch(x1, s, s.P), b = flat_batch(x2, s, s.R);
  axon_distance_desc d = distance_desc(s, p);
  d.x1 = data_or_null(a);
  d.x2 = data_or_null(b);
  d.output = data_or_null(out);
  run_distance(AXON_CDIST, x1, d);
  return out;
}

Tensor cdist_backward(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p,
                      const Tensor& dist) {
  c10::DeviceGuard guard(x1.device());
  check_float(x1, "cdist_backward", false);
  CdistShapes s = cdist_shapes(x1, x2);
  std::vector<int64_t> shape = s.batch;
  shape.push_back(s.P);
  shape.push_back(s.M);
  Tensor out = at::empty(shape, x1.options());
  if (out.numel() == 0) return out;
  if (s.R == 0 || p == 0) return out.zero_();
  Tensor g = grad.reshape({s.B, s.P, s.R}).contiguous(), a = flat_batch(x1, s, s.P),
         b = flat_batch(x2, s, s.R), dd = dist.reshape({s.B, s.P, s.R}).contiguous();
  axon_distance_desc d = distance_desc(s, p);
  d.grad = data_or_null(g);
  d.x1 = data_or_null(a);
  d.x2 = data_or_null(b);
  d.dist = data_or_null(dd);
  d.output = data_or_null(out);
  run_distance(AXON_CDIST_BACKWARD, x1, d);
  return out;
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("_pdist_forward", pdist_forward);
  m.impl("_pdist_backward", pdist_backward);
  m.impl("_cdist_forward", cdist_forward);
  m.impl("_cdist_backward", cdist_backward);
}

}  // namespace axon
