// Resampling and padding, the resample family of the runtime (kernels/resample.cl): nearest,
// nearest-exact and linear (1-d to 3-d), reflection and replication padding, a kernel per
// output element forward and a gather per input element backward; bicubic and antialiased
// bilinear (2-d), whose backward scatters with atomic adds (axon/resample.h). Only geometry is
// decided here.
#include <ATen/Context.h>
#include <ATen/Operators.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "axon_glue.h"
#include "nn_checks.h"
#include "spatial.h"

extern "C" {
#include "axon/resample.h"
}

namespace axon {
namespace {

using at::Tensor;
using OptD = std::optional<double>;

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
// The contiguous tensor a kernel writes `out` through: `out` itself or a temporary.
Tensor writable(const Tensor& out) {
  return out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
}
void write_back(Tensor& out, const Tensor& buf) {
  if (!buf.is_same(out)) out.copy_(buf);
}

// ---- bicubic and antialiased bilinear resampling ----------------------------------------------

// Input pixels per output pixel, as PyTorch's area_pixel_compute_scale.
double area_scale(int64_t in, int64_t out, bool align_corners, OptD scale) {
  if (align_corners) return out > 1 ? double(in - 1) / double(out - 1) : 0.0;
  return scale.has_value() && *scale > 0 ? 1.0 / *scale : double(in) / double(out);
}

axon_resample2d_desc resample2d_desc(at::IntArrayRef in, at::IntArrayRef out, at::IntArrayRef st,
                                     bool align_corners, OptD sh, OptD sw) {
  axon_resample2d_desc d{};
  axon_resample2d_args& a = d.args;
  a.planes = in[0] * in[1];
  a.channels = in[1];
  a.in_h = in[2];
  a.in_w = in[3];
  a.out_h = out[0];
  a.out_w = out[1];
  for (int k = 0; k < 4; k++) a.strides[k] = st[k];
  a.align_corners = align_corners;
  a.scale_h = axon_real_of(area_scale(in[2], out[0], align_corners, sh));
  a.scale_w = axon_real_of(area_scale(in[3], out[1], align_corners, sw));
  return d;
}
void check_resample(at::IntArrayRef in, at::IntArrayRef out) {
  TORCH_CHECK(out.size() == 2, "It is expected output_size equals to 2, but got size ", out.size());
  TORCH_CHECK(in.size() == 4, "It is expected input_size equals to 4, but got size ", in.size());
  TORCH_CHECK(in[2] > 0 && in[3] > 0 && out[0] > 0 && out[1] > 0,
              "Input and output sizes should be greater than 0, but got input (H: ", in[2],
              ", W: ", in[3], ") output (H: ", out[0], ", W: ", out[1], ")");
}

template <axon_resample2d_kernel Kernel, const char* CpuName, bool Reduced>
Tensor& resample_out(const Tensor& self, at::IntArrayRef output_size, bool align_corners, OptD sh,
                     OptD sw, Tensor& out) {
  c10::DeviceGuard guard(self.device());
  TORCH_CHECK(self.dim() == 4, "Non-empty 4D data tensor expected but got a tensor with sizes ",
              self.sizes());
  check_resample(self.sizes(), output_size);
  check_float(self, CpuName, Reduced);
  at::native::resize_output(out, {self.size(0), self.size(1), output_size[0], output_size[1]});
  Tensor dst = writable(out);
  axon_resample2d_desc d =
      resample2d_desc(self.sizes(), output_size, self.strides(), align_corners, sh, sw);
  d.input = data_or_null(self);
  d.output = data_or_null(dst);
  AXON_CHECK(axon_resample2d(stream_for(self), rt(self), Kernel, &d));
  write_back(out, dst);
  return out;
}

template <axon_resample2d_kernel Kernel, const char* Name, const char* CpuName, bool Reduced>
Tensor& resample_backward_out(const Tensor& grad, at::IntArrayRef output_size,
                              at::IntArrayRef input_size, bool align_corners, OptD sh, OptD sw,
                              Tensor& grad_input) {
  c10::DeviceGuard guard(grad.device());
  // The kernel scatters with a compare-and-swap float add: the sum order varies run to run.
  at::globalContext().alertNotDeterministic(Name);
  check_resample(input_size, output_size);
  check_float(grad, CpuName, Reduced);
  TORCH_CHECK(grad.dim() == 4 && grad.size(0) == input_size[0] && grad.size(1) == input_size[1] &&
                  grad.size(2) == output_size[0] && grad.size(3) == output_size[1],
              "Expected grad_output to have the shape [", input_size[0], ", ", input_size[1], ", ",
              output_size[0], ", ", output_size[1], "], but got ", grad.sizes());
  at::native::resize_output(grad_input, input_size);
  Tensor acc = at::zeros(input_size, grad.options().dtype(acc_type(grad.scalar_type())));
  axon_resample2d_desc d =
      resample2d_desc(input_size, output_size, grad.strides(), align_corners, sh, sw);
  d.input = data_or_null(grad);
  d.output = data_or_null(acc);
  AXON_CHECK(axon_resample2d(stream_for(grad), rt(grad), Kernel, &d));
  grad_input.copy_(acc);
  return grad_input;
}

// The kernels' names, for errors and the nondeterminism alert, and PyTorch's CPU kernel names,
// for the errors of dtypes it lacks.
constexpr char kBicubic[] = "bicubic2d";
constexpr char kBicubicBackward[] = "bicubic2d_backward";
constexpr char kAABilinearBackward[] = "aa_bilinear2d_backward";
constexpr char kAACpu[] = "compute_index_ranges_weights";
constexpr char kAABackwardCpu[] = "upsample_bilinear2d_aa_backward_cpu";

// uint8 images: PyTorch's CPU resamples them in fixed point with its own rounding, which these
// float kernels do not reproduce, so uint8 goes to the counted CPU fallback as before.
Tensor& bicubic_out(const Tensor& self, at::IntArrayRef output_size, bool align_corners, OptD sh,
                    OptD sw, Tensor& out) {
  if (self.scalar_type() == at::kByte)
    return at::native::call_fallback_fn<&counted_cpu_fallback,
                                        ATEN_OP2(upsample_bicubic2d, out)>::call(self, output_size,
                                                                                 align_corners, sh,
                                                                                 sw, out);
  return resample_out<AXON_RESAMPLE2D_BICUBIC, kBicubic, true>(self, output_size, align_corners, sh,
                                                               sw, out);
}

Tensor& aa_bilinear_out(const Tensor& self, at::IntArrayRef output_size, bool align_corners,
                        OptD sh, OptD sw, Tensor& out) {
  if (self.scalar_type() == at::kByte)
    return at::native::call_fallback_fn<&counted_cpu_fallback,
                                        ATEN_OP2(_upsample_bilinear2d_aa, out)>::call(self,
                                                                                      output_size,
                                                                                      align_corners,
                                                                                      sh, sw, out);
  return resample_out<AXON_RESAMPLE2D_AA_BILINEAR, kAACpu, false>(self, output_size, align_corners,
                                                                  sh, sw, out);
}
}  // namespace

AXON_ATEN_IMPL(m) {
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
  // bicubic and antialiased bilinear (2-d)
  m.impl("upsample_bicubic2d.out", bicubic_out);
  m.impl("upsample_bicubic2d_backward.grad_input",
         resample_backward_out<AXON_RESAMPLE2D_BICUBIC_BACKWARD, kBicubicBackward, kBicubicBackward,
                               true>);
  m.impl("_upsample_bilinear2d_aa.out", aa_bilinear_out);
  m.impl("_upsample_bilinear2d_aa_backward.grad_input",
         resample_backward_out<AXON_RESAMPLE2D_AA_BILINEAR_BACKWARD, kAABilinearBackward,
                               kAABackwardCpu, false>);
}

}  // namespace axon
