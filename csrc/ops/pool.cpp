// Pooling: max with indices, average, adaptive average and max (1-d to 3-d), each one kernel of
// the runtime's pool family, forward per output element, backward a gather per input element;
// fractional max pooling (2-d, 3-d; axon/pool.h), whose backward scatters through the indices;
// and max unpooling, composed of a native scatter. Only geometry is decided here.
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "axon_glue.h"
#include "nn_checks.h"
#include "spatial.h"

extern "C" {
#include "axon/pool.h"
}

namespace axon {
namespace {

using at::Tensor;

// A pooling parameter of 1 or nd values expanded to nd; an empty one takes `fallback`'s values
// (PyTorch's stride defaults to the kernel size).
std::vector<int64_t> expand(at::IntArrayRef v, int nd, at::IntArrayRef fallback, const char* name) {
  if (v.empty()) return expand(fallback, nd, {1}, name);
  TORCH_CHECK(v.size() == 1 || int(v.size()) == nd, name, " must have 1 or ", nd, " elements");
  std::vector<int64_t> r;
  for (int i = 0; i < nd; i++) r.push_back(v.size() == 1 ? v[0] : v[i]);
  return r;
}

void set_window(axon_spatial_desc& d, int nd, at::IntArrayRef kernel, at::IntArrayRef stride,
                at::IntArrayRef padding, at::IntArrayRef dilation) {
  auto k = expand(kernel, nd, {1}, "kernel_size");
  auto s = expand(stride, nd, kernel, "stride");
  auto p = expand(padding, nd, {0}, "padding");
  auto dl = expand(dilation, nd, {1}, "dilation");
  for (int i = 0; i < nd; i++) {
    d.kernel[i] = k[i];
    d.stride[i] = s[i];
    d.pad[i] = p[i];
    d.dilation[i] = dl[i];
  }
}

// ---- max pooling --------------------------------------------------------------------------------

void max_pool_fwd(const Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
                  at::IntArrayRef dl, Tensor& out, Tensor& indices, int nd) {
  c10::DeviceGuard guard(self.device());
  check_dtype_supported(self.scalar_type(), self.device().index());
  Tensor ind = indices.is_contiguous() && out.is_contiguous()
                   ? indices
                   : at::empty(out.sizes(), indices.options());
  Tensor o = ind.is_same(indices) ? out : at::empty(out.sizes(), out.options());
  axon_spatial_desc d = spatial(self, o, nd);
  set_window(d, nd, k, s, p, dl);
  d.indices = ind.data_ptr();
  AXON_CHECK(axon_pool(stream_for(self), rt(self), AXON_POOL_MAX, &d));
  if (!o.is_same(out)) out.copy_(o);
  if (!ind.is_same(indices)) indices.copy_(ind);
}

void max_pool_bwd(const Tensor& grad_output, const Tensor& self, at::IntArrayRef k,
                  at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef dl, const Tensor& indices,
                  Tensor& grad_input, int nd) {
  c10::DeviceGuard guard(self.device());
  check_floating(self, "max_pool backward");
  Tensor g = grad_output.contiguous(), ind = indices.contiguous();
  into(grad_input, [&](Tensor& gi) {
    axon_spatial_desc d = spatial(gi, g, nd);
    set_window(d, nd, k, s, p, dl);
    d.indices = ind.data_ptr();
    AXON_CHECK(axon_pool_backward(stream_for(g), rt(g), AXON_POOL_MAX, &d));
  });
}

std::tuple<Tensor&, Tensor&> max_pool2d_out(const Tensor& self, at::IntArrayRef k,
                                            at::IntArrayRef s, at::IntArrayRef p,
                                            at::IntArrayRef dl, bool, Tensor& out,
                                            Tensor& indices) {
  max_pool_fwd(self, k, s, p, dl, out, indices, 2);
  return {out, indices};
}

// max_pool3d_with_indices is not structured: sizes as PyTorch's pooling_output_shape.
int64_t pool_out_size(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t dl, bool ceil_mode) {
  int64_t num = in + 2 * pad - dl * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t out = num / s + 1;  // num >= 0 checked below
  if (ceil_mode && (out - 1) * s >= in + pad) --out;
  return out;
}

std::tuple<Tensor&, Tensor&> max_pool3d_out(const Tensor& self, at::IntArrayRef k,
                                            at::IntArrayRef s, at::IntArrayRef p,
                                            at::IntArrayRef dl, bool ceil_mode, Tensor& out,
                                            Tensor& indices) {
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, "max_pool3d: expected a 4-d or 5-d input");
  axon_spatial_desc w{};
  set_window(w, 3, k, s, p, dl);
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end() - 3);
  for (int i = 0; i < 3; i++) {
    TORCH_CHECK(w.pad[i] <= w.kernel[i] / 2, "pad should be at most half of effective kernel size");
    int64_t in = self.size(self.dim() - 3 + i);
    TORCH_CHECK(in + 2 * w.pad[i] - w.dilation[i] * (w.kernel[i] - 1) - 1 >= 0,
                "max_pool3d: output size is too small");
    shape.push_back(
        pool_out_size(in, w.kernel[i], w.pad[i], w.stride[i], w.dilation[i], ceil_mode));
  }
  resize_in_format(out, shape, self.suggest_memory_format());
  resize_in_format(indices, shape, self.suggest_memory_format());
  max_pool_fwd(self, k, s, p, dl, out, indices, 3);
  return {out, indices};
}

std::tuple<Tensor, Tensor> max_pool3d(const Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                                      at::IntArrayRef p, at::IntArrayRef dl, bool ceil_mode) {
  Tensor out = at::empty({0}, self.options()),
         ind = at::empty({0}, self.options().dtype(at::kLong));
  max_pool3d_out(self, k, s, p, dl, ceil_mode, out, ind);
  return {out, ind};
}

Tensor& max_pool3d_backward_out(const Tensor& g, const Tensor& self, at::IntArrayRef k,
                                at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef dl, bool,
                                const Tensor& indices, Tensor& grad_input) {
  at::native::resize_output(grad_input, self.sizes());
  max_pool_bwd(g, self, k, s, p, dl, indices, grad_input, 3);
  return grad_input;
}

Tensor max_pool3d_backward(const Tensor& g, const Tensor& self, at::IntArrayRef k,
                           at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef dl, bool ceil_mode,
                           const Tensor& indices) {
  Tensor gi = at::empty(self.sizes(), self.options().memory_format(self.suggest_memory_format()));
  return max_pool3d_backward_out(g, self, k, s, p, dl, ceil_mode, indices, gi);
}

// ---- average pooling ----------------------------------------------------------------------------

void avg_pool_fwd(const Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
                  bool include_pad, std::optional<int64_t> divisor, Tensor& out, int nd) {
  c10::DeviceGuard guard(self.device());
  if (self.scalar_type() != at::kLong) check_floating(self, "avg_pool");
  TORCH_CHECK(!divisor.has_value() || *divisor != 0, "divisor must be not zero");
  into(out, [&](Tensor& o) {
    axon_spatial_desc d = spatial(self, o, nd);
    set_window(d, nd, k, s, p, {});
    d.count_include_pad = include_pad;
    d.divisor = divisor.value_or(0);
    AXON_CHECK(axon_pool(stream_for(self), rt(self), AXON_POOL_AVG, &d));
  });
}

void avg_pool_bwd(const Tensor& grad_output, const Tensor& self, at::IntArrayRef k,
                  at::IntArrayRef s, at::IntArrayRef p, bool include_pad,
                  std::optional<int64_t> divisor, Tensor& grad_input, int nd) {
  c10::DeviceGuard guard(self.device());
  check_floating(self, "avg_pool backward");
  TORCH_CHECK(!divisor.has_value() || *divisor != 0, "divisor must be not zero");
  Tensor g = grad_output.contiguous();
  into(grad_input, [&](Tensor& gi) {
    axon_spatial_desc d = spatial(gi, g, nd);
    set_window(d, nd, k, s, p, {});
    d.count_include_pad = include_pad;
    d.divisor = divisor.value_or(0);
    AXON_CHECK(axon_pool_backward(stream_for(g), rt(g), AXON_POOL_AVG, &d));
  });
}

// ---- adaptive average pooling -------------------------------------------------------------------

Tensor adaptive_avg_pool(const Tensor& self, at::IntArrayRef output_size, int nd) {
  c10::DeviceGuard guard(self.device());
  check_floating(self, "adaptive_avg_pool");
  TORCH_CHECK(int(output_size.size()) == nd, "adaptive_avg_pool: output_size must have ", nd,
              " elements");
  TORCH_CHECK(self.dim() == nd + 1 || self.dim() == nd + 2, "adaptive_avg_pool: expected a ",
              nd + 1, "-d or ", nd + 2, "-d input");
  for (int64_t i = 1; i < self.dim(); i++)
    TORCH_CHECK(self.size(i) > 0,
                "adaptive_avg_pool: expected input to have non-zero size for non-batch dimensions, "
                "but input has sizes ",
                self.sizes());
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end() - nd);
  shape.insert(shape.end(), output_size.begin(), output_size.end());
  // The input's layout (channels-last included) for 2-d pooling, contiguous for 3-d, as on the
  // CPU: the kernel takes strides.
  at::MemoryFormat format = nd == 2 ? self.suggest_memory_format() : at::MemoryFormat::Contiguous;
  Tensor out = at::empty(shape, self.options().memory_format(format));
  axon_spatial_desc d = spatial(self, out, nd);
  AXON_CHECK(axon_pool(stream_for(self), rt(self), AXON_POOL_ADAPTIVE_AVG, &d));
  return out;
}

Tensor adaptive_avg_pool_backward(const Tensor& grad_output, const Tensor& self, int nd) {
  c10::DeviceGuard guard(self.device());
  check_floating(self, "adaptive_avg_pool backward");
  Tensor g = grad_output.contiguous();
  Tensor gi = at::empty(self.sizes(), self.options().memory_format(self.suggest_memory_format()));
  axon_spatial_desc d = spatial(gi, g, nd);
  AXON_CHECK(axon_pool_backward(stream_for(g), rt(g), AXON_POOL_ADAPTIVE_AVG, &d));
  return gi;
}

// ---- adaptive max pooling (structured: out and indices arrive sized) ----------------------------

std::tuple<Tensor&, Tensor&> adaptive_max_pool_out(const Tensor& self, Tensor& out, Tensor& indices,
                                                   int nd) {
  c10::DeviceGuard guard(self.device());
  check_dtype_supported(self.scalar_type(), self.device().index());
  Tensor ind = indices.is_contiguous() && out.is_contiguous()
                   ? indices
                   : at::empty(out.sizes(), indices.options());
  Tensor o = ind.is_same(indices) ? out : at::empty(out.sizes(), out.options());
  axon_spatial_desc d = spatial(self, o, nd);
  d.indices = ind.data_ptr();
  AXON_CHECK(axon_pool(stream_for(self), rt(self), AXON_POOL_ADAPTIVE_MAX, &d));
  if (!o.is_same(out)) out.copy_(o);
  if (!ind.is_same(indices)) indices.copy_(ind);
  return {out, indices};
}

Tensor& adaptive_max_pool_backward_out(const Tensor& grad_output, const Tensor& self,
                                       const Tensor& indices, Tensor& grad_input, int nd) {
  c10::DeviceGuard guard(self.device());
  check_floating(self, "adaptive_max_pool backward");
  Tensor g = grad_output.contiguous(), ind = indices.contiguous();
  into(grad_input, [&](Tensor& gi) {
    axon_spatial_desc d = spatial(gi, g, nd);
    d.indices = ind.data_ptr();
    AXON_CHECK(axon_pool_backward(stream_for(g), rt(g), AXON_POOL_ADAPTIVE_MAX, &d));
  });
  return grad_input;
}

// ---- fractional max pooling -----------------------------------------------------------------

template <int ND>
std::tuple<Tensor&, Tensor&> fractional_max_pool_out(const Tensor& self, at::IntArrayRef kernel,
                                                     at::IntArrayRef output_size,
                                                     const Tensor& samples, Tensor& output,
                                                     Tensor& indices) {
  c10::DeviceGuard guard(self.device());
  const char* name = ND == 2 ? "fractional_max_pool2d" : "fractional_max_pool3d";
  TORCH_CHECK(int(kernel.size()) == ND && int(output_size.size()) == ND, name,
              ": kernel_size and output_size must have ", ND, " elements");
  TORCH_CHECK(self.dim() == ND + 1 || self.dim() == ND + 2, name, "(): Expected ", ND + 1, "D or ",
              ND + 2, "D tensor, but got: ", self.sizes());
  for (int64_t i = self.dim() - ND; i < self.dim(); i++)
    TORCH_CHECK(self.size(i) > 0, name,
                "(): Expected input to have non-zero size for non-batch "
                "dimensions, but got ",
                self.sizes(), " with dimension ", i, " being empty.");
  check_float(self, name);
  TORCH_CHECK(samples.scalar_type() == self.scalar_type(), name,
              "(): expected random_samples of the input's dtype");
  Tensor x = self.dim() == ND + 1 ? self.unsqueeze(0) : self;
  int64_t n = x.size(0), c = x.size(1);
  // PyTorch's checks: a larger sample batch is fine (the first n rows are used).
  TORCH_CHECK(samples.dim() == 3, "Expect _random_samples to have 3 dimensions, got ",
              samples.dim());
  TORCH_CHECK(samples.size(1) == c, "Expect _random_samples.size(1) equals to input channel size.");
  TORCH_CHECK(samples.size(2) == ND, "Expect _random_samples.size(2) equals to ", ND);
  TORCH_CHECK(samples.size(0) >= n,
              "Expect _random_samples.size(0) no less then input batch size.");
  static const char* dims[] = {"time", "height", "width"};
  axon_fractional_pool_desc d{};
  axon_fractional_pool_args& a = d.args;
  a.n = n;
  a.channels = c;
  a.nd = ND;
  int lead = 3 - ND;
  for (int k = 0; k < 3; k++) {
    int j = k - lead;
    a.in_size[k] = j < 0 ? 1 : x.size(2 + j);
    a.out_size[k] = j < 0 ? 1 : output_size[j];
    a.window[k] = j < 0 ? 1 : kernel[j];
    a.in_strides[2 + k] = j < 0 ? 0 : x.stride(2 + j);
    if (j >= 0)
      TORCH_CHECK(output_size[j] + kernel[j] - 1 <= x.size(2 + j), name, "(): pool ", dims[k], " ",
                  kernel[j], " too large relative to input ", dims[k], " ", x.size(2 + j));
  }
  a.in_strides[0] = x.stride(0);
  a.in_strides[1] = x.stride(1);
  std::vector<int64_t> shape{n, c};
  shape.insert(shape.end(), output_size.begin(), output_size.end());
  Tensor out = at::empty(shape, self.options());
  Tensor idx = at::empty(shape, self.options().dtype(at::kLong));
  Tensor u = samples.contiguous();
  d.input = data_or_null(x);
  d.samples = data_or_null(u);
  d.output = data_or_null(out);
  d.indices = data_or_null(idx);
  AXON_CHECK(axon_fractional_max_pool(stream_for(self), rt(self), &d));
  if (self.dim() == ND + 1) {
    shape.erase(shape.begin());
    out = out.squeeze(0);
    idx = idx.squeeze(0);
  }
  at::native::resize_output(output, shape);
  at::native::resize_output(indices, shape);
  output.copy_(out);
  indices.copy_(idx);
  return {output, indices};
}

// The gradient scattered back through the saved indices (flat within each plane).
template <int ND>
Tensor& fractional_max_pool_backward_out(const Tensor& grad, const Tensor& self,
                                         at::IntArrayRef /*kernel*/,
                                         at::IntArrayRef /*output_size*/, const Tensor& indices,
                                         Tensor& grad_input) {
  c10::DeviceGuard guard(self.device());
  TORCH_CHECK(grad.sizes() == indices.sizes(),
              "fractional_max_pool_backward: grad_output and indices must have the same shape");
  int64_t planes = self.dim() == ND + 2 ? self.size(0) * self.size(1) : self.size(0);
  int64_t in_vol = 1;
  for (int64_t i = self.dim() - ND; i < self.dim(); i++) in_vol *= self.size(i);
  Tensor gi = at::zeros({planes, in_vol}, grad.options());
  if (grad.numel() > 0)
    gi.scatter_add_(1, indices.reshape({planes, -1}), grad.reshape({planes, -1}));
  return write_like(grad_input, self, gi);
}

Tensor fractional_max_pool3d_backward(const Tensor& grad, const Tensor& self,
                                      at::IntArrayRef kernel, at::IntArrayRef output_size,
                                      const Tensor& indices) {
  Tensor gi = at::empty({0}, self.options());
  return fractional_max_pool_backward_out<3>(grad, self, kernel, output_size, indices, gi);
}

// ---- max unpooling --------------------------------------------------------------------------
// Each input value written to its saved flat position within its plane of zeros: scatter_ on
// [planes, output volume] (a later duplicate index wins, as on the CPU).

template <int ND>
Tensor& max_unpool_out(const Tensor& self, const Tensor& indices, at::IntArrayRef output_size,
                       Tensor& out) {
  c10::DeviceGuard guard(self.device());
  const char* name = ND == 2 ? "max_unpooling2d" : "max_unpooling3d";
  TORCH_CHECK(indices.scalar_type() == at::kLong,
              "elements in indices should be type int64 but got: ", indices.scalar_type());
  TORCH_CHECK(int(output_size.size()) == ND, "There should be exactly ", ND,
              " elements in output_size, but got ", output_size.size(), " elements.");
  TORCH_CHECK(self.dim() == ND + 1 || self.dim() == ND + 2, "Input to ", name, " should be a ",
              ND + 1, "d or ", ND + 2, "d Tensor, but got a tensor with ", self.dim(),
              " dimensions.");
  TORCH_CHECK(self.sizes() == indices.sizes(),
              "Expected shape of indices to be same as that of the input tensor (", self.sizes(),
              ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t i = 1; i < self.dim(); i++)
    TORCH_CHECK(self.size(i) > 0, name,
                "(): Expected input to have non-zero size for non-batch "
                "dimensions, but got ",
                self.sizes(), " with dimension ", i, " being empty.");
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end() - ND);
  shape.insert(shape.end(), output_size.begin(), output_size.end());
  int64_t planes = c10::multiply_integers(self.sizes().begin(), self.sizes().end() - ND);
  Tensor flat = at::zeros({planes, c10::multiply_integers(output_size)}, self.options());
  if (self.numel() > 0) flat.scatter_(1, indices.reshape({planes, -1}), self.reshape({planes, -1}));
  at::native::resize_output(out, shape);
  out.copy_(flat.view(shape));
  return out;
}

Tensor max_unpool2d(const Tensor& self, const Tensor& indices, at::IntArrayRef output_size) {
  Tensor out = at::empty({0}, self.options());
  return max_unpool_out<2>(self, indices, output_size, out);
}

Tensor& max_unpool3d_out(const Tensor& self, const Tensor& indices, at::IntArrayRef output_size,
                         at::IntArrayRef stride, at::IntArrayRef padding, Tensor& out) {
  TORCH_CHECK(stride.size() == 3,
              "There should be exactly three elements (depth, height, width) "
              "in stride, but got: ",
              stride.size(), " elements.");
  TORCH_CHECK(padding.size() == 3,
              "There should be exactly three elements (depth, height, width) "
              "in padding, but got: ",
              padding.size(), " elements.");
  TORCH_CHECK(stride[0] > 0 && stride[1] > 0 && stride[2] > 0,
              "strides should be greater than zero, but got stride: ", stride);
  return max_unpool_out<3>(self, indices, output_size, out);
}

Tensor max_unpool3d(const Tensor& self, const Tensor& indices, at::IntArrayRef output_size,
                    at::IntArrayRef stride, at::IntArrayRef padding) {
  Tensor out = at::empty({0}, self.options());
  return max_unpool3d_out(self, indices, output_size, stride, padding, out);
}

// Registration shapes of the pooling ops, per dimensionality ND (2 or 3).
template <int ND>
Tensor& avg_pool_out(const Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
                     bool /*ceil_mode: in the output size*/, bool include_pad,
                     std::optional<int64_t> divisor, Tensor& out) {
  avg_pool_fwd(self, k, s, p, include_pad, divisor, out, ND);
  return out;
}
template <int ND>
Tensor& avg_pool_backward_out(const Tensor& g, const Tensor& self, at::IntArrayRef k,
                              at::IntArrayRef s, at::IntArrayRef p, bool, bool include_pad,
                              std::optional<int64_t> divisor, Tensor& gi) {
  avg_pool_bwd(g, self, k, s, p, include_pad, divisor, gi, ND);
  return gi;
}
template <int ND>
Tensor adaptive_avg_pool_nd(const Tensor& self, at::IntArrayRef output_size) {
  return adaptive_avg_pool(self, output_size, ND);
}
template <int ND>
Tensor adaptive_avg_pool_backward_nd(const Tensor& g, const Tensor& self) {
  return adaptive_avg_pool_backward(g, self, ND);
}
template <int ND>
std::tuple<Tensor&, Tensor&> adaptive_max_pool_out_nd(const Tensor& self, at::IntArrayRef,
                                                      Tensor& out, Tensor& ind) {
  return adaptive_max_pool_out(self, out, ind, ND);
}
template <int ND>
Tensor& adaptive_max_pool_backward_out_nd(const Tensor& g, const Tensor& self, const Tensor& ind,
                                          Tensor& gi) {
  return adaptive_max_pool_backward_out(g, self, ind, gi, ND);
}

}  // namespace

AXON_ATEN_IMPL(m) {
  // max pooling
  m.impl("max_pool2d_with_indices.out", max_pool2d_out);
  m.impl("max_pool2d_with_indices_backward.grad_input",
         [](const Tensor& g, const Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
            at::IntArrayRef p, at::IntArrayRef dl, bool, const Tensor& ind, Tensor& gi) -> Tensor& {
           max_pool_bwd(g, self, k, s, p, dl, ind, gi, 2);
           return gi;
         });
  m.impl("max_pool3d_with_indices", max_pool3d);
  m.impl("max_pool3d_with_indices.out", max_pool3d_out);
  m.impl("max_pool3d_with_indices_backward", max_pool3d_backward);
  m.impl("max_pool3d_with_indices_backward.grad_input", max_pool3d_backward_out);
  // average and adaptive pooling: one registration per dimensionality, from the templates above
  m.impl("avg_pool2d.out", avg_pool_out<2>);
  m.impl("avg_pool3d.out", avg_pool_out<3>);
  m.impl("avg_pool2d_backward.grad_input", avg_pool_backward_out<2>);
  m.impl("avg_pool3d_backward.grad_input", avg_pool_backward_out<3>);
  m.impl("_adaptive_avg_pool2d", adaptive_avg_pool_nd<2>);
  m.impl("_adaptive_avg_pool3d", adaptive_avg_pool_nd<3>);
  m.impl("_adaptive_avg_pool2d_backward", adaptive_avg_pool_backward_nd<2>);
  m.impl("_adaptive_avg_pool3d_backward", adaptive_avg_pool_backward_nd<3>);
  m.impl("adaptive_max_pool2d.out", adaptive_max_pool_out_nd<2>);
  m.impl("adaptive_max_pool3d.out", adaptive_max_pool_out_nd<3>);
  m.impl("adaptive_max_pool2d_backward.grad_input", adaptive_max_pool_backward_out_nd<2>);
  m.impl("adaptive_max_pool3d_backward.grad_input", adaptive_max_pool_backward_out_nd<3>);
  // fractional max pooling and max unpooling
  m.impl("fractional_max_pool2d.output", fractional_max_pool_out<2>);
  m.impl("fractional_max_pool2d_backward.grad_input", fractional_max_pool_backward_out<2>);
  m.impl("fractional_max_pool3d.output", fractional_max_pool_out<3>);
  m.impl("fractional_max_pool3d_backward", fractional_max_pool3d_backward);
  m.impl("fractional_max_pool3d_backward.grad_input", fractional_max_pool_backward_out<3>);
  m.impl("max_unpool2d", max_unpool2d);
  m.impl("max_unpool2d.out", max_unpool_out<2>);
  m.impl("max_unpool3d", max_unpool3d);
  m.impl("max_unpool3d.out", max_unpool3d_out);
}

}  // namespace axon
