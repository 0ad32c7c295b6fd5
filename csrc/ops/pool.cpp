// Pooling (max with indices, average, adaptive average and max; 1-d to 3-d), resampling (nearest,
// linear / bilinear / trilinear), reflection / replication padding and embedding's backward.
// Only geometry is decided here; each op is one kernel of the runtime's pool, resample or
// embedding family, forward per output element, backward a gather per input element.
#include <ATen/Operators.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "axon_glue.h"

namespace axon {

// ops/copy.cpp: the counted CPU fallback, for ops declined at run time.
void counted_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

namespace {

using at::Tensor;
using OptD = std::optional<double>;

// Geometry of an input-space tensor and an output-space tensor with nd spatial dims, batched
// ([n, c, ...]) or not ([c, ...]).
axon_spatial_desc spatial(const Tensor& in_space, const Tensor& out_space, int nd) {
  TORCH_CHECK(in_space.dim() == nd + 1 || in_space.dim() == nd + 2, "expected a ", nd + 1, "-d or ",
              nd + 2, "-d input, got ", in_space.dim(), " dims");
  TORCH_CHECK(out_space.dim() == in_space.dim(), "input and output of different ranks");
  axon_spatial_desc d{};
  d.nd = nd;
  bool batched = in_space.dim() == nd + 2;
  int lead = batched ? 2 : 1;
  d.n = batched ? in_space.size(0) : 1;
  d.c = in_space.size(lead - 1);
  TORCH_CHECK(out_space.size(lead - 1) == d.c && (!batched || out_space.size(0) == d.n),
              "input and output of different batch or channel sizes");
  d.in_strides[0] = batched ? in_space.stride(0) : 0;
  d.out_strides[0] = batched ? out_space.stride(0) : 0;
  d.in_strides[1] = in_space.stride(lead - 1);
  d.out_strides[1] = out_space.stride(lead - 1);
  for (int i = 0; i < nd; i++) {
    d.in[i] = in_space.size(lead + i);
    d.out[i] = out_space.size(lead + i);
    d.in_strides[2 + i] = in_space.stride(lead + i);
    d.out_strides[2 + i] = out_space.stride(lead + i);
    d.kernel[i] = d.stride[i] = d.dilation[i] = 1;
  }
  d.input = in_space.data_ptr();
  d.output = out_space.data_ptr();
  return d;
}

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

axon_dtype rt(const Tensor& t) {
  return to_axon_dtype(t.scalar_type());
}

void check_floating(const Tensor& t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t.scalar_type()), "axon: ", op,
                              " is not implemented for ", t.scalar_type());
  check_dtype_supported(t.scalar_type(), t.device().index());
}

// Runs fn on `out` directly when it is non-overlapping and dense, else on a contiguous
// temporary copied back.
template <typename F>
void into(Tensor& out, F fn) {
  if (out.is_non_overlapping_and_dense()) {
    fn(out);
    return;
  }
  Tensor tmp = at::empty(out.sizes(), out.options());
  fn(tmp);
  out.copy_(tmp);
}

// Sizes an out= result; one sized here (not one the caller shaped) takes the memory format
// PyTorch's CPU gives it: the input's suggested format for pooling and padding.
void resize_in_format(Tensor& out, at::IntArrayRef shape, at::MemoryFormat format) {
  if (at::native::resize_output(out, shape)) out.resize_(shape, format);
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

// ---- resampling ---------------------------------------------------------------------------------

// 1 / scale where PyTorch uses the given scale factor (a positive one), else 0.
double inv_scale(const OptD& s) {
  return s.has_value() && *s > 0 ? 1.0 / *s : 0.0;
}

void resample_fwd(const Tensor& self, std::initializer_list<OptD> scales, bool align,
                  axon_resample_kind kind, Tensor& out) {
  c10::DeviceGuard guard(self.device());
  if (kind == AXON_RESAMPLE_LINEAR) {
    check_floating(self, "upsample (linear)");
  } else {
    check_dtype_supported(self.scalar_type(), self.device().index());
  }
  int nd = int(scales.size());
  into(out, [&](Tensor& o) {
    axon_spatial_desc d = spatial(self, o, nd);
    int i = 0;
    for (const OptD& s : scales) d.inv_scale[i++] = inv_scale(s);
    d.align_corners = align;
    AXON_CHECK(axon_resample(stream_for(self), rt(self), kind, &d));
  });
}

void resample_bwd(const Tensor& grad_output, std::initializer_list<OptD> scales, bool align,
                  axon_resample_kind kind, Tensor& grad_input) {
  c10::DeviceGuard guard(grad_output.device());
  check_floating(grad_output, "upsample backward");
  int nd = int(scales.size());
  Tensor g = grad_output.contiguous();
  into(grad_input, [&](Tensor& gi) {
    axon_spatial_desc d = spatial(gi, g, nd);
    int i = 0;
    for (const OptD& s : scales) d.inv_scale[i++] = inv_scale(s);
    d.align_corners = align;
    AXON_CHECK(axon_resample_backward(stream_for(g), rt(g), kind, &d));
  });
}

// ---- reflection and replication padding ---------------------------------------------------------

// padding is (last dim before, after, next-to-last before, after, ...).
void set_padding(axon_spatial_desc& d, at::IntArrayRef padding, int nd) {
  TORCH_CHECK(int(padding.size()) == 2 * nd, "padding size is expected to be ", 2 * nd);
  for (int i = 0; i < nd; i++) {
    int64_t before = padding[2 * (nd - 1 - i)], after = padding[2 * (nd - 1 - i) + 1];
    TORCH_CHECK_NOT_IMPLEMENTED(before >= 0 && after >= 0,
                                "axon: negative reflection / replication padding is not supported");
    d.pad[i] = before;
    d.pad_after[i] = after;
  }
}

std::vector<int64_t> padded_shape(const Tensor& self, at::IntArrayRef padding, int nd) {
  TORCH_CHECK(self.dim() == nd + 1 || self.dim() == nd + 2, "padding: expected a ", nd + 1,
              "-d or ", nd + 2, "-d input, got ", self.dim(), " dims");
  TORCH_CHECK(int(padding.size()) == 2 * nd, "padding size is expected to be ", 2 * nd);
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  for (int i = 0; i < nd; i++) {
    int64_t& sz = shape[shape.size() - 1 - i];
    sz += padding[2 * i] + padding[2 * i + 1];
    TORCH_CHECK(sz >= 1, "padding: output size is too small");
  }
  return shape;
}

// Where negative padding crops, each padded dim is an index_select of the source positions
// (clamped for replication, mirrored for reflection) and the gradient an index_add back.
Tensor pad_positions(int64_t out, int64_t before, int64_t in, axon_resample_kind kind,
                     const Tensor& like) {
  Tensor j = at::arange(out, like.options().dtype(at::kLong)).sub_(before);
  if (kind != AXON_PAD_REFLECT) return j.clamp_(0, in - 1);
  j.abs_();
  return at::where(j.ge(in), j.neg().add_(2 * (in - 1)), j);
}

bool has_negative(at::IntArrayRef padding) {
  return std::any_of(padding.begin(), padding.end(), [](int64_t p) { return p < 0; });
}

// Complex tensors pad as their parts: the (real, imaginary) planes become a batch of twice the
// leading dim (padding treats every leading dim alike) for the real kernels.
Tensor parts_as_batch(const Tensor& t) {
  std::vector<int64_t> shape = t.sizes().vec();
  shape[0] *= 2;
  Tensor c = t.resolve_conj();
  if (c.stride(-1) != 1) c = c.contiguous();  // view_as_real needs unit-stride elements
  return at::view_as_real(c).movedim(-1, 0).reshape(shape);
}

Tensor batch_as_complex(const Tensor& r) {
  std::vector<int64_t> shape = r.sizes().vec();
  shape[0] /= 2;
  shape.insert(shape.begin(), 2);
  return at::view_as_complex(r.reshape(shape).movedim(0, -1).contiguous());
}

void pad_fwd(const Tensor& self, at::IntArrayRef padding, axon_resample_kind kind, Tensor& out,
             int nd) {
  if (self.is_complex() && out.numel() == 0) return;
  if (self.is_complex()) {
    Tensor parts = at::empty(parts_as_batch(out).sizes(),
                             out.options().dtype(c10::toRealValueType(out.scalar_type())));
    pad_fwd(parts_as_batch(self), padding, kind, parts, nd);
    out.copy_(batch_as_complex(parts));
    return;
  }
  c10::DeviceGuard guard(self.device());
  check_dtype_supported(self.scalar_type(), self.device().index());
  for (int i = 0; i < nd; i++) {
    int64_t in = self.size(self.dim() - 1 - i);
    if (kind == AXON_PAD_REFLECT) {
      TORCH_CHECK(padding[2 * i] < in && padding[2 * i + 1] < in,
                  "Argument #4: Padding size should be less than the corresponding input "
                  "dimension, but got: padding (",
                  padding[2 * i], ", ", padding[2 * i + 1], ") at dimension ", self.dim() - 1 - i,
                  " of input ", self.sizes());
    } else {
      TORCH_CHECK(in > 0, "replication padding: input dims must be non-empty");
    }
  }
  if (has_negative(padding)) {
    Tensor r = self;
    for (int i = 0; i < nd; i++) {
      int64_t d = self.dim() - 1 - i;
      r = r.index_select(d, pad_positions(out.size(d), padding[2 * i], self.size(d), kind, self));
    }
    out.copy_(r);
    return;
  }
  into(out, [&](Tensor& o) {
    axon_spatial_desc d = spatial(self, o, nd);
    set_padding(d, padding, nd);
    AXON_CHECK(axon_resample(stream_for(self), rt(self), kind, &d));
  });
}

void pad_bwd(const Tensor& grad_output, const Tensor& self, at::IntArrayRef padding,
             axon_resample_kind kind, Tensor& grad_input, int nd) {
  if (grad_output.is_complex() && grad_input.numel() == 0) return;
  if (grad_output.is_complex()) {
    Tensor parts_self = parts_as_batch(self);
    Tensor parts = at::empty(parts_self.sizes(), parts_self.options());
    pad_bwd(parts_as_batch(grad_output), parts_self, padding, kind, parts, nd);
    grad_input.copy_(batch_as_complex(parts));
    return;
  }
  if (has_negative(padding)) {
    Tensor g = grad_output;
    for (int i = 0; i < nd; i++) {
      int64_t d = self.dim() - 1 - i;
      std::vector<int64_t> shape = g.sizes().vec();
      shape[size_t(d)] = self.size(d);
      g = at::zeros(shape, g.options())
              .index_add_(d, pad_positions(g.size(d), padding[2 * i], self.size(d), kind, g), g);
    }
    grad_input.copy_(g);
    return;
  }
  c10::DeviceGuard guard(self.device());
  check_floating(self, "padding backward");
  Tensor g = grad_output.contiguous();
  into(grad_input, [&](Tensor& gi) {
    axon_spatial_desc d = spatial(gi, g, nd);
    set_padding(d, padding, nd);
    AXON_CHECK(axon_resample_backward(stream_for(g), rt(g), kind, &d));
  });
}

template <axon_resample_kind K, int ND>
Tensor& pad_out(const Tensor& self, at::IntArrayRef padding, Tensor& out) {
  resize_in_format(out, padded_shape(self, padding, ND), self.suggest_memory_format());
  pad_fwd(self, padding, K, out, ND);
  return out;
}
template <axon_resample_kind K, int ND>
Tensor pad_functional(const Tensor& self, at::IntArrayRef padding) {
  Tensor out = at::empty(padded_shape(self, padding, ND),
                         self.options().memory_format(self.suggest_memory_format()));
  pad_fwd(self, padding, K, out, ND);
  return out;
}
template <axon_resample_kind K, int ND>
Tensor& pad_backward_out(const Tensor& g, const Tensor& self, at::IntArrayRef padding,
                         Tensor& grad_input) {
  at::native::resize_output(grad_input, self.sizes());
  pad_bwd(g, self, padding, K, grad_input, ND);
  return grad_input;
}
template <axon_resample_kind K, int ND>
Tensor pad_backward(const Tensor& g, const Tensor& self, at::IntArrayRef padding) {
  Tensor gi = at::empty(self.sizes(), self.options().memory_format(self.suggest_memory_format()));
  pad_bwd(g, self, padding, K, gi, ND);
  return gi;
}

// ---- embedding backward -------------------------------------------------------------------------

Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices,
                                int64_t num_weights, int64_t padding_idx, bool scale_grad_by_freq) {
  c10::DeviceGuard guard(grad_output.device());
  check_floating(grad_output, "embedding_backward");
  TORCH_CHECK(indices.scalar_type() == at::kLong || indices.scalar_type() == at::kInt,
              "embedding_backward: indices must be int64 or int32, got ", indices.scalar_type());
  Tensor idx = indices.reshape({-1}).contiguous();
  int64_t n = idx.numel(), dim = grad_output.size(-1);
  Tensor g = grad_output.reshape({n, dim}).contiguous();
  Tensor out = at::zeros({num_weights, dim}, grad_output.options());
  Tensor scratch = at::empty({3 * std::max<int64_t>(n, 1)}, idx.options().dtype(at::kLong));
  axon_embedding_bwd_desc d{};
  d.n = n;
  d.dim = dim;
  d.num_weights = num_weights;
  d.padding_idx = padding_idx;
  d.scale_by_freq = scale_grad_by_freq;
  d.index_is_int32 = idx.scalar_type() == at::kInt;
  d.grad = g.data_ptr();
  d.index = idx.data_ptr();
  d.scratch = scratch.data_ptr();
  d.out = out.data_ptr();
  AXON_CHECK(axon_embedding_backward(stream_for(g), rt(g), &d));
  return out;
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

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
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
  // nearest and nearest-exact: the same six registrations with another mode.
#define AXON_NEAREST_FAMILY(prefix, mode)                                                          \
  m.impl(prefix "1d.out",                                                                          \
         [](const Tensor& self, at::IntArrayRef, OptD s, Tensor& out) -> Tensor& {                 \
           resample_fwd(self, {s}, false, mode, out);                                              \
           return out;                                                                             \
         });                                                                                       \
  m.impl(prefix "2d.out",                                                                          \
         [](const Tensor& self, at::IntArrayRef, OptD sh, OptD sw, Tensor& out) -> Tensor& {       \
           resample_fwd(self, {sh, sw}, false, mode, out);                                         \
           return out;                                                                             \
         });                                                                                       \
  m.impl(                                                                                          \
      prefix "3d.out",                                                                             \
      [](const Tensor& self, at::IntArrayRef, OptD sd, OptD sh, OptD sw, Tensor& out) -> Tensor& { \
        resample_fwd(self, {sd, sh, sw}, false, mode, out);                                        \
        return out;                                                                                \
      });                                                                                          \
  m.impl(prefix "1d_backward.grad_input",                                                          \
         [](const Tensor& g, at::IntArrayRef, at::IntArrayRef, OptD s, Tensor& gi) -> Tensor& {    \
           resample_bwd(g, {s}, false, mode, gi);                                                  \
           return gi;                                                                              \
         });                                                                                       \
  m.impl(prefix "2d_backward.grad_input",                                                          \
         [](const Tensor& g, at::IntArrayRef, at::IntArrayRef, OptD sh, OptD sw,                   \
            Tensor& gi) -> Tensor& {                                                               \
           resample_bwd(g, {sh, sw}, false, mode, gi);                                             \
           return gi;                                                                              \
         });                                                                                       \
  m.impl(prefix "3d_backward.grad_input",                                                          \
         [](const Tensor& g, at::IntArrayRef, at::IntArrayRef, OptD sd, OptD sh, OptD sw,          \
            Tensor& gi) -> Tensor& {                                                               \
           resample_bwd(g, {sd, sh, sw}, false, mode, gi);                                         \
           return gi;                                                                              \
         });
  AXON_NEAREST_FAMILY("upsample_nearest", AXON_RESAMPLE_NEAREST)
  AXON_NEAREST_FAMILY("_upsample_nearest_exact", AXON_RESAMPLE_NEAREST_EXACT)
#undef AXON_NEAREST_FAMILY
  // linear
  m.impl("upsample_linear1d.out",
         [](const Tensor& self, at::IntArrayRef, bool ac, OptD s, Tensor& out) -> Tensor& {
           resample_fwd(self, {s}, ac, AXON_RESAMPLE_LINEAR, out);
           return out;
         });
  m.impl("upsample_bilinear2d.out",
         [](const Tensor& self, at::IntArrayRef size, bool ac, OptD sh, OptD sw,
            Tensor& out) -> Tensor& {
           // uint8 images: PyTorch's CPU kernel interpolates them in fixed point with its own
           // rounding, so they go to the counted CPU fallback.
           if (self.scalar_type() == at::kByte)
             return at::native::call_fallback_fn<&counted_cpu_fallback,
                                                 ATEN_OP2(upsample_bilinear2d, out)>::call(self,
                                                                                           size, ac,
                                                                                           sh, sw,
                                                                                           out);
           resample_fwd(self, {sh, sw}, ac, AXON_RESAMPLE_LINEAR, out);
           return out;
         });
  m.impl("upsample_trilinear3d.out",
         [](const Tensor& self, at::IntArrayRef, bool ac, OptD sd, OptD sh, OptD sw,
            Tensor& out) -> Tensor& {
           resample_fwd(self, {sd, sh, sw}, ac, AXON_RESAMPLE_LINEAR, out);
           return out;
         });
  m.impl("upsample_linear1d_backward.grad_input",
         [](const Tensor& g, at::IntArrayRef, at::IntArrayRef, bool ac, OptD s,
            Tensor& gi) -> Tensor& {
           resample_bwd(g, {s}, ac, AXON_RESAMPLE_LINEAR, gi);
           return gi;
         });
  m.impl("upsample_bilinear2d_backward.grad_input",
         [](const Tensor& g, at::IntArrayRef, at::IntArrayRef, bool ac, OptD sh, OptD sw,
            Tensor& gi) -> Tensor& {
           resample_bwd(g, {sh, sw}, ac, AXON_RESAMPLE_LINEAR, gi);
           return gi;
         });
  m.impl("upsample_trilinear3d_backward.grad_input",
         [](const Tensor& g, at::IntArrayRef, at::IntArrayRef, bool ac, OptD sd, OptD sh, OptD sw,
            Tensor& gi) -> Tensor& {
           resample_bwd(g, {sd, sh, sw}, ac, AXON_RESAMPLE_LINEAR, gi);
           return gi;
         });
  // reflection padding (1-d and 3-d structured, 2-d not)
  m.impl("reflection_pad1d.out", [](const Tensor& self, at::IntArrayRef p, Tensor& out) -> Tensor& {
    pad_fwd(self, p, AXON_PAD_REFLECT, out, 1);
    return out;
  });
  m.impl("reflection_pad1d_backward.grad_input",
         [](const Tensor& g, const Tensor& self, at::IntArrayRef p, Tensor& gi) -> Tensor& {
           pad_bwd(g, self, p, AXON_PAD_REFLECT, gi, 1);
           return gi;
         });
  m.impl("reflection_pad2d", pad_functional<AXON_PAD_REFLECT, 2>);
  m.impl("reflection_pad2d.out", pad_out<AXON_PAD_REFLECT, 2>);
  m.impl("reflection_pad2d_backward", pad_backward<AXON_PAD_REFLECT, 2>);
  m.impl("reflection_pad2d_backward.grad_input", pad_backward_out<AXON_PAD_REFLECT, 2>);
  // The functional forms of the structured ones too: their results take the input's memory
  // format, which the structured wrapper's contiguous allocation would not.
  m.impl("reflection_pad3d", pad_functional<AXON_PAD_REFLECT, 3>);
  m.impl("reflection_pad3d_backward", pad_backward<AXON_PAD_REFLECT, 3>);
  m.impl("replication_pad2d", pad_functional<AXON_PAD_REPLICATE, 2>);
  m.impl("replication_pad3d", pad_functional<AXON_PAD_REPLICATE, 3>);
  m.impl("reflection_pad3d.out", [](const Tensor& self, at::IntArrayRef p, Tensor& out) -> Tensor& {
    pad_fwd(self, p, AXON_PAD_REFLECT, out, 3);
    return out;
  });
  m.impl("reflection_pad3d_backward.grad_input",
         [](const Tensor& g, const Tensor& self, at::IntArrayRef p, Tensor& gi) -> Tensor& {
           pad_bwd(g, self, p, AXON_PAD_REFLECT, gi, 3);
           return gi;
         });
  // replication padding (forward structured; 1-d backward structured, 2-d / 3-d not)
  m.impl("replication_pad1d.out",
         [](const Tensor& self, at::IntArrayRef p, Tensor& out) -> Tensor& {
           pad_fwd(self, p, AXON_PAD_REPLICATE, out, 1);
           return out;
         });
  m.impl("replication_pad2d.out",
         [](const Tensor& self, at::IntArrayRef p, Tensor& out) -> Tensor& {
           pad_fwd(self, p, AXON_PAD_REPLICATE, out, 2);
           return out;
         });
  m.impl("replication_pad3d.out",
         [](const Tensor& self, at::IntArrayRef p, Tensor& out) -> Tensor& {
           pad_fwd(self, p, AXON_PAD_REPLICATE, out, 3);
           return out;
         });
  m.impl("replication_pad1d_backward.grad_input",
         [](const Tensor& g, const Tensor& self, at::IntArrayRef p, Tensor& gi) -> Tensor& {
           pad_bwd(g, self, p, AXON_PAD_REPLICATE, gi, 1);
           return gi;
         });
  m.impl("replication_pad2d_backward", pad_backward<AXON_PAD_REPLICATE, 2>);
  m.impl("replication_pad2d_backward.grad_input", pad_backward_out<AXON_PAD_REPLICATE, 2>);
  m.impl("replication_pad3d_backward", pad_backward<AXON_PAD_REPLICATE, 3>);
  m.impl("replication_pad3d_backward.grad_input", pad_backward_out<AXON_PAD_REPLICATE, 3>);
  // embedding
  m.impl("embedding_dense_backward", embedding_dense_backward);
}

}  // namespace axon
