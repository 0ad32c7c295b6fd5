// Convolution 1-d to 3-d (stride, padding, dilation, groups, transposed): an im2col kernel,
// the native batched gemm (at::bmm) over groups, and col2im (a gather kernel) for the adjoint.
// Layout decisions only; the arithmetic runs in the runtime.
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Tensor;

// A convolution from an "image" (c channels, spatial `in`) to an "output space" (spatial `out`)
// as im2col sees it. For a transposed convolution the image is the op's output.
struct ConvGeom {
  int nd = 0;
  int64_t n = 0, c = 0;
  std::vector<int64_t> in, out, kernel, stride, pad, dilation;
  int64_t K() const { return c10::multiply_integers(kernel); }
  int64_t L() const { return c10::multiply_integers(out); }
};

axon_spatial_desc make_desc(const ConvGeom& g) {
  axon_spatial_desc d{};
  d.nd = g.nd;
  d.n = g.n;
  d.c = g.c;
  for (int i = 0; i < g.nd; i++) {
    d.in[i] = g.in[i];
    d.out[i] = g.out[i];
    d.kernel[i] = g.kernel[i];
    d.stride[i] = g.stride[i];
    d.pad[i] = g.pad[i];
    d.dilation[i] = g.dilation[i];
  }
  return d;
}

// col [c * K, n * L] of an image [n, c, in...] (any strides).
Tensor im2col(const Tensor& image, const ConvGeom& g) {
  Tensor col = at::empty({g.c * g.K(), g.n * g.L()}, image.options());
  axon_spatial_desc d = make_desc(g);
  for (int i = 0; i < 2 + g.nd; i++) d.in_strides[i] = image.stride(i);
  d.input = image.data_ptr();
  d.output = col.data_ptr();
  AXON_CHECK(axon_im2col(stream_for(image), to_axon_dtype(image.scalar_type()), &d));
  return col;
}

// The image [n, c, in...] (contiguous) summing col's columns: im2col's adjoint.
Tensor col2im(const Tensor& col, const ConvGeom& g) {
  std::vector<int64_t> shape{g.n, g.c};
  shape.insert(shape.end(), g.in.begin(), g.in.end());
  Tensor image = at::empty(shape, col.options());
  axon_spatial_desc d = make_desc(g);
  for (int i = 0; i < 2 + g.nd; i++) d.in_strides[i] = image.stride(i);
  d.input = image.data_ptr();
  d.output = col.data_ptr();
  AXON_CHECK(axon_col2im(stream_for(col), to_axon_dtype(col.scalar_type()), &d));
  return image;
}

// [n, groups * og, L...] -> [groups, og, n * L] (a copy unless n == 1).
Tensor to_group_major(const Tensor& t, int64_t groups, int64_t n, int64_t L) {
  int64_t og = t.size(1) / groups;
  return t.reshape({n, groups, og, L}).permute({1, 2, 0, 3}).reshape({groups, og, n * L});
}

// The inverse: [groups, og, n * L] -> [n, groups * og, out...] (contiguous).
Tensor from_group_major(const Tensor& y, int64_t groups, int64_t n, at::IntArrayRef out) {
  int64_t og = y.size(1);
  std::vector<int64_t> shape{n, groups * og};
  shape.insert(shape.end(), out.begin(), out.end());
  return y.view({groups, og, n, c10::multiply_integers(out)})
      .permute({2, 0, 1, 3})
      .contiguous()
      .view(shape);
}

// out-space result [n, o, out...] = weight [o, c / groups, k...] applied to the image.
Tensor conv_apply(const Tensor& image, const Tensor& weight, const ConvGeom& g, int64_t groups) {
  int64_t o = weight.size(0), ckg = g.c / groups * g.K();
  Tensor col = im2col(image, g).view({groups, ckg, g.n * g.L()});
  Tensor y = at::bmm(weight.reshape({groups, o / groups, ckg}), col);
  return from_group_major(y, groups, g.n, g.out);
}

// The adjoint: image-space [n, c, in...] from out-space grad [n, o, out...]. For float16 /
// bfloat16 the columns stay in float, so col2im sums unrounded products and the result is
// rounded once, as on the CPU.
Tensor conv_adjoint(const Tensor& grad, const Tensor& weight, const ConvGeom& g, int64_t groups) {
  at::ScalarType st = grad.scalar_type();
  if (st == at::kHalf || st == at::kBFloat16)
    return conv_adjoint(grad.to(at::kFloat), weight.to(at::kFloat), g, groups).to(st);
  int64_t o = weight.size(0), ckg = g.c / groups * g.K();
  Tensor gy = to_group_major(grad, groups, g.n, g.L());
  Tensor col = at::bmm(weight.reshape({groups, o / groups, ckg}).transpose(1, 2), gy);
  return col2im(col.view({g.c * g.K(), g.n * g.L()}), g);
}

// d(out-space result) / d(weight): [o, c / groups, k...].
Tensor conv_weight_grad(const Tensor& image, const Tensor& grad, const ConvGeom& g, int64_t groups,
                        at::IntArrayRef weight_shape) {
  int64_t ckg = g.c / groups * g.K();
  Tensor col = im2col(image, g).view({groups, ckg, g.n * g.L()});
  Tensor gy = to_group_major(grad, groups, g.n, g.L());
  return at::bmm(gy, col.transpose(1, 2)).reshape(weight_shape);
}

std::vector<int64_t> expand_param(at::IntArrayRef v, int nd, const char* name) {
  TORCH_CHECK(v.size() == 1 || int(v.size()) == nd, "convolution: expected ", name,
              " to have 1 or ", nd, " elements, got ", v.size());
  std::vector<int64_t> r(nd);
  for (int i = 0; i < nd; i++) r[i] = v.size() == 1 ? v[0] : v[i];
  return r;
}

struct ConvArgs {
  int nd;
  std::vector<int64_t> stride, pad, dilation, out_pad;
  int64_t groups;
};

ConvArgs conv_args(const Tensor& input, const Tensor& weight, at::IntArrayRef stride,
                   at::IntArrayRef padding, at::IntArrayRef dilation,
                   at::IntArrayRef output_padding, int64_t groups, bool transposed) {
  int nd = int(input.dim()) - 2;
  TORCH_CHECK_NOT_IMPLEMENTED(nd >= 1 && nd <= 3,
                              "axon: convolution supports 1 to 3 spatial dims, got input of ",
                              input.dim(), " dims");
  TORCH_CHECK(weight.dim() == input.dim(), "convolution: expected weight of ", input.dim(),
              " dims, got ", weight.dim());
  TORCH_CHECK(groups >= 1, "convolution: non-positive groups is not supported");
  // Integer convolution works as on the CPU (its slow_conv kernels): any integer dtype but bool
  // for a plain convolution, only int64 for a transposed one; the same error otherwise.
  at::ScalarType st = input.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(
      at::isFloatingType(st) || (at::isIntegralType(st, false) && (!transposed || st == at::kLong)),
      "\"", transposed ? "slow_conv_transpose" : "slow_conv", nd, "d\" not implemented for '",
      c10::toString(st), "'");
  TORCH_CHECK(input.scalar_type() == weight.scalar_type(), "Input type (", input.scalar_type(),
              ") and weight type (", weight.scalar_type(), ") should be the same");
  ConvArgs a{nd,
             expand_param(stride, nd, "stride"),
             expand_param(padding, nd, "padding"),
             expand_param(dilation, nd, "dilation"),
             output_padding.empty() ? std::vector<int64_t>(nd, 0)
                                    : expand_param(output_padding, nd, "output_padding"),
             groups};
  for (int i = 0; i < nd; i++) {
    TORCH_CHECK(a.stride[i] > 0, "non-positive stride is not supported");
    TORCH_CHECK(a.pad[i] >= 0, "negative padding is not supported");
    TORCH_CHECK(a.dilation[i] > 0, "dilation should be greater than zero");
  }
  check_dtype_supported(input.scalar_type(), input.device().index());
  return a;
}

// Geometry of a plain convolution: the image is the input.
ConvGeom plain_geom(const Tensor& input, const Tensor& weight, const ConvArgs& a) {
  ConvGeom g;
  g.nd = a.nd;
  g.n = input.size(0);
  g.c = input.size(1);
  TORCH_CHECK(g.c == weight.size(1) * a.groups, "Given groups=", a.groups, ", weight of size ",
              weight.sizes(), ", expected input", input.sizes(), " to have ",
              weight.size(1) * a.groups, " channels, but got ", g.c, " channels instead");
  TORCH_CHECK(weight.size(0) % a.groups == 0, "Given groups=", a.groups,
              ", expected weight to be divisible by ", a.groups,
              " at dimension 0, but got weight of size ", weight.sizes());
  for (int i = 0; i < a.nd; i++) {
    int64_t k = weight.size(2 + i), in = input.size(2 + i);
    int64_t o = (in + 2 * a.pad[i] - a.dilation[i] * (k - 1) - 1) / a.stride[i] + 1;
    TORCH_CHECK(in + 2 * a.pad[i] >= a.dilation[i] * (k - 1) + 1,
                "Calculated padded input size per channel: (", in + 2 * a.pad[i],
                "). Kernel size: (", a.dilation[i] * (k - 1) + 1,
                "). Kernel size can't be greater than actual input size");
    g.in.push_back(in);
    g.out.push_back(o);
    g.kernel.push_back(k);
  }
  g.stride = a.stride;
  g.pad = a.pad;
  g.dilation = a.dilation;
  return g;
}

// Geometry of a transposed convolution: the image is the op's output (weight [c_in, c_out /
// groups, k...]), the output space its input.
ConvGeom transposed_geom(const Tensor& input, const Tensor& weight, const ConvArgs& a) {
  ConvGeom g;
  g.nd = a.nd;
  g.n = input.size(0);
  TORCH_CHECK(input.size(1) == weight.size(0), "Given transposed=1, weight of size ",
              weight.sizes(), ", expected input", input.sizes(), " to have ", weight.size(0),
              " channels, but got ", input.size(1), " channels instead");
  TORCH_CHECK(weight.size(0) % a.groups == 0,
              "transposed convolution: weight's dim 0 must divide by groups");
  g.c = weight.size(1) * a.groups;
  for (int i = 0; i < a.nd; i++) {
    int64_t k = weight.size(2 + i), in = input.size(2 + i);
    TORCH_CHECK(a.out_pad[i] < a.stride[i] || a.out_pad[i] < a.dilation[i],
                "output padding must be smaller than either stride or dilation");
    int64_t img =
        (in - 1) * a.stride[i] - 2 * a.pad[i] + a.dilation[i] * (k - 1) + a.out_pad[i] + 1;
    TORCH_CHECK(img > 0, "transposed convolution: non-positive output size ", img);
    g.in.push_back(img);
    g.out.push_back(in);
    g.kernel.push_back(k);
  }
  g.stride = a.stride;
  g.pad = a.pad;
  g.dilation = a.dilation;
  return g;
}

Tensor bias_view(const Tensor& bias, int nd) {
  std::vector<int64_t> shape{1, bias.numel()};
  shape.insert(shape.end(), nd, 1);
  return bias.view(shape);
}

// The layout PyTorch's CPU and CUDA convolutions give their results: channels-last when the
// input or the weight is (a 4-d or 5-d tensor), else contiguous. The kernels compute in the
// contiguous layout; a channels-last result is a copy.
at::MemoryFormat conv_memory_format(const Tensor& input, const Tensor& weight) {
  at::MemoryFormat cl = input.dim() == 4   ? at::MemoryFormat::ChannelsLast
                        : input.dim() == 5 ? at::MemoryFormat::ChannelsLast3d
                                           : at::MemoryFormat::Contiguous;
  bool wanted = input.suggest_memory_format() == cl || weight.suggest_memory_format() == cl;
  return wanted ? cl : at::MemoryFormat::Contiguous;
}

Tensor in_format(const Tensor& t, at::MemoryFormat format) {
  return t.defined() ? t.contiguous(format) : t;
}

Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                   at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                   bool transposed, at::IntArrayRef output_padding, int64_t groups) {
  c10::DeviceGuard guard(input.device());
  ConvArgs a =
      conv_args(input, weight, stride, padding, dilation, output_padding, groups, transposed);
  at::ScalarType st = input.scalar_type();
  if (st == at::kHalf || st == at::kBFloat16) {
    // float16 / bfloat16: computed in float with the bias and rounded once, as on the CPU (a
    // rounded sum plus a rounded bias loses bits where they cancel).
    std::optional<Tensor> b = bias;
    if (b.has_value() && b->defined()) b = b->to(at::kFloat);
    return axon::convolution(input.to(at::kFloat), weight.to(at::kFloat), b, stride, padding,
                             dilation, transposed, output_padding, groups)
        .to(st);
  }
  Tensor out;
  if (!transposed) {
    ConvGeom g = plain_geom(input, weight, a);
    out = conv_apply(input, weight, g, groups);
  } else {
    ConvGeom g = transposed_geom(input, weight, a);
    out = conv_adjoint(input, weight, g, groups);
  }
  if (bias.has_value() && bias->defined()) {
    TORCH_CHECK(bias->dim() == 1 && bias->numel() == out.size(1),
                "convolution: expected bias of shape [", out.size(1), "], got ", bias->sizes());
    out.add_(bias_view(*bias, a.nd));
  }
  return in_format(out, conv_memory_format(input, weight));
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
    at::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
  c10::DeviceGuard guard(input.device());
  ConvArgs a =
      conv_args(input, weight, stride, padding, dilation, output_padding, groups, transposed);
  Tensor grad_input, grad_weight, grad_bias;
  if (!transposed) {
    ConvGeom g = plain_geom(input, weight, a);
    if (output_mask[0]) grad_input = conv_adjoint(grad_output, weight, g, groups);
    if (output_mask[1])
      grad_weight = conv_weight_grad(input, grad_output, g, groups, weight.sizes());
  } else {
    ConvGeom g = transposed_geom(input, weight, a);
    if (output_mask[0]) grad_input = conv_apply(grad_output, weight, g, groups);
    if (output_mask[1])
      grad_weight = conv_weight_grad(grad_output, input, g, groups, weight.sizes());
  }
  if (output_mask[2]) {
    std::vector<int64_t> dims{0};
    for (int64_t i = 2; i < grad_output.dim(); i++) dims.push_back(i);
    grad_bias = grad_output.sum(dims);
  }
  at::MemoryFormat format = conv_memory_format(input, weight);
  return {in_format(grad_input, format), in_format(grad_weight, format), grad_bias};
}

// ---- aten::im2col / aten::col2im (nn.functional.unfold / fold) -------------------------------
// [N, C, H, W] <-> [N, C * K, L]. Batch and channels merge into one channel dim of a single
// image, so the runtime's col layout [c * K, n * L] with n = 1 is exactly [N, C * K, L].

struct UnfoldArgs {
  std::vector<int64_t> kernel, dilation, pad, stride;
};

UnfoldArgs unfold_args(at::IntArrayRef k, at::IntArrayRef d, at::IntArrayRef p, at::IntArrayRef s) {
  TORCH_CHECK(k.size() == 2, "It is expected kernel_size equals to 2, but got size ", k.size());
  TORCH_CHECK(d.size() == 2, "It is expected dilation equals to 2, but got size ", d.size());
  TORCH_CHECK(p.size() == 2, "It is expected padding equals to 2, but got size ", p.size());
  TORCH_CHECK(s.size() == 2, "It is expected stride equals to 2, but got size ", s.size());
  TORCH_CHECK(k[0] > 0 && k[1] > 0,
              "kernel size should be greater than zero, but got kernel_height: ", k[0],
              " kernel_width: ", k[1]);
  TORCH_CHECK(d[0] > 0 && d[1] > 0,
              "dilation should be greater than zero, but got dilation_height: ", d[0],
              " dilation_width: ", d[1]);
  TORCH_CHECK(p[0] >= 0 && p[1] >= 0, "padding should be non-negative, but got pad_height: ", p[0],
              " pad_width: ", p[1]);
  TORCH_CHECK(s[0] > 0 && s[1] > 0,
              "stride should be greater than zero, but got stride_height: ", s[0],
              " stride_width: ", s[1]);
  return {k.vec(), d.vec(), p.vec(), s.vec()};
}

ConvGeom unfold_geom(const UnfoldArgs& a, int64_t planes, at::IntArrayRef image) {
  ConvGeom g;
  g.nd = 2;
  g.n = 1;
  g.c = planes;
  g.in = image.vec();
  g.kernel = a.kernel;
  g.stride = a.stride;
  g.pad = a.pad;
  g.dilation = a.dilation;
  for (int i = 0; i < 2; i++)
    g.out.push_back(
        (image[i] + 2 * a.pad[i] - a.dilation[i] * (a.kernel[i] - 1) - 1) / a.stride[i] + 1);
  return g;
}

Tensor& im2col_out(const Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef dilation,
                   at::IntArrayRef padding, at::IntArrayRef stride, Tensor& out) {
  c10::DeviceGuard guard(self.device());
  UnfoldArgs a = unfold_args(kernel_size, dilation, padding, stride);
  TORCH_CHECK((self.dim() == 3 && self.size(0) != 0 && self.size(1) != 0 && self.size(2) != 0) ||
                  (self.dim() == 4 && self.size(1) != 0 && self.size(2) != 0 && self.size(3) != 0),
              "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
              "dimensions for input, but got: ",
              self.sizes());
  check_dtype_supported(self.scalar_type(), self.device().index());
  Tensor x = self.dim() == 3 ? self.unsqueeze(0) : self;
  int64_t n = x.size(0), c = x.size(1), K = a.kernel[0] * a.kernel[1];
  ConvGeom g = unfold_geom(a, n * c, x.sizes().slice(2));
  TORCH_CHECK(g.out[0] >= 1 && g.out[1] >= 1, "Given input with spatial size (", x.size(2), ", ",
              x.size(3), "), kernel_size=(", a.kernel[0], ", ", a.kernel[1], "), dilation=(",
              a.dilation[0], ", ", a.dilation[1], "), padding=(", a.pad[0], ", ", a.pad[1],
              "), calculated shape of the array of sliding blocks as (", g.out[0], ", ", g.out[1],
              "), but its components must be at least one.");
  std::vector<int64_t> shape{n, c * K, g.L()};
  if (self.dim() == 3) shape.erase(shape.begin());
  at::native::resize_output(out, shape);
  if (out.numel() == 0) return out;
  Tensor col = im2col(x.contiguous().view({1, n * c, x.size(2), x.size(3)}), g);
  out.copy_(col.view(shape));
  return out;
}

Tensor im2col_fn(const Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef dilation,
                 at::IntArrayRef padding, at::IntArrayRef stride) {
  Tensor out = at::empty({0}, self.options());
  return im2col_out(self, kernel_size, dilation, padding, stride, out);
}

Tensor& col2im_out(const Tensor& self, at::IntArrayRef output_size, at::IntArrayRef kernel_size,
                   at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride,
                   Tensor& out) {
  c10::DeviceGuard guard(self.device());
  TORCH_CHECK(output_size.size() == 2, "It is expected output_size equals to 2, but got size ",
              output_size.size());
  UnfoldArgs a = unfold_args(kernel_size, dilation, padding, stride);
  TORCH_CHECK((self.dim() == 2 && self.size(0) != 0 && self.size(1) != 0) ||
                  (self.dim() == 3 && self.size(1) != 0 && self.size(2) != 0),
              "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
              "non-zero dimensions for input, but got: ",
              self.sizes());
  check_dtype_supported(self.scalar_type(), self.device().index());
  Tensor x = self.dim() == 2 ? self.unsqueeze(0) : self;
  int64_t K = a.kernel[0] * a.kernel[1];
  TORCH_CHECK(x.size(1) % K == 0,
              "Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
              "but got input.size(1)=",
              x.size(1), " and kernel_size=(", a.kernel[0], ", ", a.kernel[1], ")");
  int64_t n = x.size(0), c = x.size(1) / K;
  ConvGeom g = unfold_geom(a, n * c, output_size);
  TORCH_CHECK(g.out[0] >= 1 && g.out[1] >= 1 && g.L() == x.size(2), "Given output_size=(",
              output_size[0], ", ", output_size[1], "), kernel_size=(", a.kernel[0], ", ",
              a.kernel[1], "), dilation=(", a.dilation[0], ", ", a.dilation[1], "), padding=(",
              a.pad[0], ", ", a.pad[1], "), stride=(", a.stride[0], ", ", a.stride[1],
              "), expected size of input's dimension 2 to match the calculated number "
              "of sliding blocks ",
              g.out[0], " * ", g.out[1], " = ", g.L(), ", but got input.size(2)=", x.size(2), ".");
  std::vector<int64_t> shape{n, c, output_size[0], output_size[1]};
  if (self.dim() == 2) shape.erase(shape.begin());
  at::native::resize_output(out, shape);
  if (out.numel() == 0) return out;
  Tensor image = col2im(x.contiguous().view({n * c * K, g.L()}), g);
  out.copy_(image.view(shape));
  return out;
}

Tensor col2im_fn(const Tensor& self, at::IntArrayRef output_size, at::IntArrayRef kernel_size,
                 at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride) {
  Tensor out = at::empty({0}, self.options());
  return col2im_out(self, output_size, kernel_size, dilation, padding, stride, out);
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("convolution_overrideable", convolution);
  m.impl("convolution_backward_overrideable", convolution_backward);
  m.impl("im2col", im2col_fn);
  m.impl("im2col.out", im2col_out);
  m.impl("col2im", col2im_fn);
  m.impl("col2im.out", col2im_out);
}

}  // namespace axon
