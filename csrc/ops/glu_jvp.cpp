// Forward-mode derivative of glu (glu_jvp), which has no composite implementation; composed
// of native ops. (glu itself is in elementwise_activations.cpp.)
#include <torch/library.h>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Tensor;

// Forward-mode derivative of glu(x) = a * sigmoid(b) ([a, b] = x halved along dim):
// da * sigmoid(b) + glu * (1 - sigmoid(b)) * db.
Tensor glu_jvp(const Tensor& glu, const Tensor& x, const Tensor& dx, int64_t dim) {
  dim = c10::maybe_wrap_dim(dim, x.dim());
  const int64_t half = x.size(dim) / 2;
  Tensor sig_b = x.narrow(dim, half, half).sigmoid();
  Tensor da = dx.narrow(dim, 0, half), db = dx.narrow(dim, half, half);
  return da.mul(sig_b).add_(glu.mul(sig_b.neg().add_(1)).mul_(db));
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("glu_jvp", glu_jvp);
}

}  // namespace axon
