// Convolution 1-d to 3-d (stride, padding, dilation, groups, transposed): an im2col kernel,
// the native batched gemm (at::bmm) over groups, and col2im (a gather kernel) for the adjoint.
// Layout decisions only; the arithmetic runs in the runtime.
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

// The adjoint: image-space [n, c, in...] from out-space grad [n, o, out...].
Tensor conv_adjoint(const Tensor& grad, const Tensor& weight, const ConvGeom& g, int64_t groups) {
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
                   at::IntArrayRef output_padding, int64_t groups) {
  int nd = int(input.dim()) - 2;
  TORCH_CHECK_NOT_IMPLEMENTED(nd >= 1 && nd <= 3,
                              "axon: convolution supports 1 to 3 spatial dims, got input of ",
                              input.dim(), " dims");
  TORCH_CHECK(weight.dim() == input.dim(), "convolution: expected weight of ", input.dim(),
              " dims, got ", weight.dim());
  TORCH_CHECK(groups >= 1, "convolution: non-positive groups is not supported");
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(input.scalar_type()),
                              "axon: convolution is not implemented for ", input.scalar_type());
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

Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                   at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                   bool transposed, at::IntArrayRef output_padding, int64_t groups) {
  c10::DeviceGuard guard(input.device());
  ConvArgs a = conv_args(input, weight, stride, padding, dilation, output_padding, groups);
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
  return out;
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
    at::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
  c10::DeviceGuard guard(input.device());
  ConvArgs a = conv_args(input, weight, stride, padding, dilation, output_padding, groups);
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
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_overrideable", convolution);
  m.impl("convolution_backward_overrideable", convolution_backward);
}

}  // namespace axon
