// Softmax and log-softmax along a dim, forward and backward, and the safe softmax of PyTorch's
// math attention: the rows' geometry here, the arithmetic in the runtime's softmax family
// (axon_softmax, kernels/softmax.cl).
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Tensor;

struct Rows {
  int64_t outer = 1, dim = 1, inner = 1;
};

Rows rows_of(const Tensor& t, int64_t dim) {
  Rows r;
  if (t.dim() == 0) return r;
  dim = c10::maybe_wrap_dim(dim, t.dim());
  for (int64_t i = 0; i < dim; i++) r.outer *= t.size(i);
  r.dim = t.size(dim);
  for (int64_t i = dim + 1; i < t.dim(); i++) r.inner *= t.size(i);
  return r;
}

Tensor& softmax_out_impl(const Tensor& self, int64_t dim, bool half_to_float, Tensor& out,
                         axon_softmax_mode mode) {
  TORCH_CHECK_NOT_IMPLEMENTED(!half_to_float, "axon: softmax with half_to_float is not supported");
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "softmax: not implemented for '", self.scalar_type(),
                              "' (floating point inputs only)");
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "softmax: expected out dtype ",
              self.scalar_type(), ", got ", out.scalar_type());
  c10::DeviceGuard guard(self.device());
  Tensor x = self.contiguous();
  at::native::resize_output(out, self.sizes());
  Tensor y = out.is_contiguous() ? out : at::empty_like(x);
  Rows r = rows_of(x, dim);
  axon_softmax_desc d{r.outer, r.dim, r.inner, x.data_ptr(), nullptr, y.data_ptr(), mode};
  AXON_CHECK(axon_softmax(stream_for(x), to_axon_dtype(x.scalar_type()), &d));
  if (!y.is_same(out)) out.copy_(y);
  return out;
}

Tensor& softmax_backward_impl(const Tensor& grad, const Tensor& output, int64_t dim, Tensor& out,
                              axon_softmax_mode mode) {
  TORCH_CHECK(out.scalar_type() == grad.scalar_type() && output.scalar_type() == grad.scalar_type(),
              "softmax backward: expected grad, output and out of one dtype");
  c10::DeviceGuard guard(grad.device());
  Tensor g = grad.contiguous(), y = output.contiguous();
  at::native::resize_output(out, grad.sizes());
  Tensor r_out = out.is_contiguous() ? out : at::empty_like(g);
  Rows r = rows_of(g, dim);
  axon_softmax_desc d{r.outer, r.dim, r.inner, g.data_ptr(), y.data_ptr(), r_out.data_ptr(), mode};
  AXON_CHECK(axon_softmax_backward(stream_for(g), to_axon_dtype(g.scalar_type()), &d));
  if (!r_out.is_same(out)) out.copy_(r_out);
  return out;
}

// PyTorch's attention (math SDPA) normalises scores with _safe_softmax: softmax, then rows
// that were all -inf set to 0. Its composite form spends an eq, an all and a where over the
// scores on top of the softmax; here the softmax kernel zeroes such rows itself.
Tensor safe_softmax(const Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  Tensor x = dtype ? self.to(*dtype) : self;
  Tensor out = at::empty(x.sizes(), x.options());
  return softmax_out_impl(x, dim, false, out, AXON_SOFTMAX_SAFE);
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("_softmax.out", [](const Tensor& s, int64_t dim, bool h2f, Tensor& out) -> Tensor& {
    return softmax_out_impl(s, dim, h2f, out, AXON_SOFTMAX);
  });
  m.impl("_log_softmax.out", [](const Tensor& s, int64_t dim, bool h2f, Tensor& out) -> Tensor& {
    return softmax_out_impl(s, dim, h2f, out, AXON_SOFTMAX_LOG);
  });
  m.impl("_safe_softmax", safe_softmax);
  m.impl("_softmax_backward_data.out",
         [](const Tensor& g, const Tensor& y, int64_t dim, at::ScalarType, Tensor& out) -> Tensor& {
           return softmax_backward_impl(g, y, dim, out, AXON_SOFTMAX);
         });
  m.impl("_log_softmax_backward_data.out",
         [](const Tensor& g, const Tensor& y, int64_t dim, at::ScalarType, Tensor& out) -> Tensor& {
           return softmax_backward_impl(g, y, dim, out, AXON_SOFTMAX_LOG);
         });
}

}  // namespace axon
