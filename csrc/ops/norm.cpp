// Batch, layer and group normalization: statistics, the affine transform and the backward
// pass run as kernels of the runtime's norm family; this file only maps shapes onto its
// (target, group, channel) descriptors. Statistics and parameters are handled in the
// accumulation dtype (float for float16 / bfloat16) and converted back to what PyTorch returns.
#include <torch/library.h>

#include "axon_glue.h"

namespace axon {
namespace {

// Batch and group norm compute in the contiguous layout; their results (and input gradients)
// take the input's layout, channels-last included, as on the CPU and CUDA.
at::Tensor in_layout_of(const at::Tensor& t, const at::Tensor& input) {
  return t.defined() ? t.contiguous(input.suggest_memory_format()) : t;
}

using at::Tensor;

at::ScalarType acc_type(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16 ? at::kFloat : t;
}

void check_float(const Tensor& x, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(x.scalar_type()), "axon: ", op,
                              " is not implemented for ", x.scalar_type());
  check_dtype_supported(x.scalar_type(), x.device().index());
}

// An optional parameter as a contiguous tensor of dtype t (undefined if absent).
Tensor param(const std::optional<Tensor>& p, at::ScalarType t) {
  if (!p.has_value() || !p->defined()) return Tensor();
  return p->to(t).contiguous();
}
const void* ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr() : nullptr;
}

// How a normalization sees a contiguous x of `numel` elements.
struct NormShape {
  int64_t numel;
  int64_t targets, na, nb, st, sa, sb;  // statistics targets
  int64_t gdiv, gmod, cdiv, cmod;       // group and channel of an element
};

axon_norm_desc desc_of(const NormShape& s) {
  axon_norm_desc d{};
  d.numel = s.numel;
  d.targets = s.targets;
  d.na = s.na;
  d.nb = s.nb;
  d.st = s.st;
  d.sa = s.sa;
  d.sb = s.sb;
  d.gdiv = std::max<int64_t>(s.gdiv, 1);
  d.gmod = std::max<int64_t>(s.gmod, 1);
  d.cdiv = std::max<int64_t>(s.cdiv, 1);
  d.cmod = std::max<int64_t>(s.cmod, 1);
  return d;
}

axon_dtype rt(const Tensor& x) {
  return to_axon_dtype(x.scalar_type());
}

// Per-channel sums over [n, c, s] for the affine gradients: db = sum(dy), dw = sum(dy * xhat).
void channel_sums(const Tensor& x, const Tensor& dy, const Tensor& mean, const Tensor& rstd,
                  int stat_is_var, double eps, int64_t n, int64_t c, int64_t s, int64_t gdiv,
                  int64_t gmod, Tensor& dw, Tensor& db) {
  NormShape sh{x.numel(), c, n, s, s, c * s, 1, gdiv, gmod, s, c};
  axon_norm_desc d = desc_of(sh);
  d.x = x.data_ptr();
  d.dy = dy.data_ptr();
  d.mean = mean.data_ptr();
  d.rstd = rstd.data_ptr();
  d.stat_is_var = stat_is_var;
  d.eps = eps;
  d.sum1 = db.data_ptr();
  d.sum2 = dw.data_ptr();
  AXON_CHECK(axon_norm_sums(stream_for(x), rt(x), &d));
}

// ---- layer norm ---------------------------------------------------------------------------------

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input,
                                                     at::IntArrayRef normalized_shape,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias,
                                                     double eps) {
  c10::DeviceGuard guard(input.device());
  check_float(input, "layer_norm");
  int64_t axis = input.dim() - int64_t(normalized_shape.size());
  TORCH_CHECK(axis >= 0 && input.sizes().slice(axis).equals(normalized_shape),
              "Given normalized_shape=", normalized_shape, ", expected input with shape [*, ",
              normalized_shape, "], but got input of size", input.sizes());
  at::ScalarType at_t = acc_type(input.scalar_type());
  Tensor x = input.contiguous();
  int64_t D = c10::multiply_integers(normalized_shape),
          M = c10::multiply_integers(input.sizes().slice(0, axis));
  Tensor w = param(weight, at_t), b = param(bias, at_t);
  Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
  Tensor mean = at::empty({M}, x.options().dtype(at_t)),
         rstd = at::empty({M}, x.options().dtype(at_t));
  if (M > 0 && D > 0) {
    axon_norm_desc d = desc_of({x.numel(), M, 1, D, D, 0, 1, D, M, 1, D});
    d.x = x.data_ptr();
    d.mean = mean.data_ptr();
    d.rstd = rstd.data_ptr();
    d.eps = eps;
    AXON_CHECK(axon_norm_stats(stream_for(x), rt(x), &d));
    d.weight = ptr_or_null(w);
    d.bias = ptr_or_null(b);
    d.y = y.data_ptr();
    AXON_CHECK(axon_norm_apply(stream_for(x), rt(x), &d));
  } else if (M > 0) {
    mean.zero_();
    rstd.fill_(std::numeric_limits<double>::quiet_NaN());
  }
  std::vector<int64_t> stat_shape(input.sizes().begin(), input.sizes().begin() + axis);
  stat_shape.insert(stat_shape.end(), normalized_shape.size(), 1);
  return {y, mean.to(input.scalar_type()).view(stat_shape),
          rstd.to(input.scalar_type()).view(stat_shape)};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(
    const Tensor& grad_out, const Tensor& input, at::IntArrayRef normalized_shape,
    const Tensor& mean, const Tensor& rstd, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias, std::array<bool, 3> output_mask) {
  c10::DeviceGuard guard(input.device());
  check_float(input, "layer_norm backward");
  at::ScalarType at_t = acc_type(input.scalar_type());
  int64_t axis = input.dim() - int64_t(normalized_shape.size());
  int64_t D = c10::multiply_integers(normalized_shape),
          M = c10::multiply_integers(input.sizes().slice(0, axis));
  Tensor x = input.contiguous(), dy = grad_out.to(input.scalar_type()).contiguous();
  Tensor m = mean.to(at_t).contiguous(), r = rstd.to(at_t).contiguous();
  Tensor w = param(weight, at_t);
  Tensor gx, gw, gb;
  NormShape rows{x.numel(), M, 1, D, D, 0, 1, D, M, 1, D};
  if (output_mask[0]) {
    gx = at::empty_like(x, at::MemoryFormat::Contiguous);
    if (M > 0 && D > 0) {
      Tensor s1 = at::empty({M}, x.options().dtype(at_t)),
             s2 = at::empty({M}, x.options().dtype(at_t));
      axon_norm_desc d = desc_of(rows);
      d.x = x.data_ptr();
      d.dy = dy.data_ptr();
      d.mean = m.data_ptr();
      d.rstd = r.data_ptr();
      d.weight = ptr_or_null(w);
      d.sum1 = s1.data_ptr();
      d.sum2 = s2.data_ptr();
      AXON_CHECK(axon_norm_sums(stream_for(x), rt(x), &d));
      d.count = D;
      d.train = 1;
      d.y = gx.data_ptr();
      AXON_CHECK(axon_norm_backward(stream_for(x), rt(x), &d));
    }
  }
  if (output_mask[1] || output_mask[2]) {
    Tensor dw = at::zeros({D}, x.options().dtype(at_t)),
           db = at::zeros({D}, x.options().dtype(at_t));
    if (M > 0 && D > 0) {
      // Per column: targets are the D columns, each over the M rows.
      axon_norm_desc d = desc_of({x.numel(), D, M, 1, 1, D, 0, D, M, 1, D});
      d.x = x.data_ptr();
      d.dy = dy.data_ptr();
      d.mean = m.data_ptr();
      d.rstd = r.data_ptr();
      d.sum1 = db.data_ptr();
      d.sum2 = dw.data_ptr();
      AXON_CHECK(axon_norm_sums(stream_for(x), rt(x), &d));
    }
    at::ScalarType wt =
        weight.has_value() && weight->defined() ? weight->scalar_type() : input.scalar_type();
    at::ScalarType bt =
        bias.has_value() && bias->defined() ? bias->scalar_type() : input.scalar_type();
    if (output_mask[1]) gw = dw.to(wt).view(normalized_shape);
    if (output_mask[2]) gb = db.to(bt).view(normalized_shape);
  }
  return {gx, gw, gb};
}

// ---- group norm ---------------------------------------------------------------------------------

std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, int64_t N,
                                                     int64_t C, int64_t HxW, int64_t group,
                                                     double eps) {
  c10::DeviceGuard guard(input.device());
  check_float(input, "group_norm");
  TORCH_CHECK(
      group > 0 && C % group == 0,
      "Expected number of channels in input to be divisible by num_groups, but got input of shape ",
      input.sizes(), " and num_groups=", group);
  TORCH_CHECK(input.numel() == N * C * HxW, "group_norm: input size does not match N, C, HxW");
  at::ScalarType at_t = acc_type(input.scalar_type());
  Tensor x = input.contiguous();
  Tensor w = param(weight, at_t), b = param(bias, at_t);
  int64_t T = N * group, E = C / group * HxW;
  Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
  Tensor mean = at::empty({N, group}, x.options().dtype(at_t)),
         rstd = at::empty({N, group}, x.options().dtype(at_t));
  if (T > 0 && E > 0) {
    axon_norm_desc d = desc_of({x.numel(), T, 1, E, E, 0, 1, E, T, HxW, C});
    d.x = x.data_ptr();
    d.mean = mean.data_ptr();
    d.rstd = rstd.data_ptr();
    d.eps = eps;
    AXON_CHECK(axon_norm_stats(stream_for(x), rt(x), &d));
    d.weight = ptr_or_null(w);
    d.bias = ptr_or_null(b);
    d.y = y.data_ptr();
    AXON_CHECK(axon_norm_apply(stream_for(x), rt(x), &d));
  }
  return {in_layout_of(y, input), mean.to(input.scalar_type()), rstd.to(input.scalar_type())};
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward(
    const Tensor& grad_out, const Tensor& input, const Tensor& mean, const Tensor& rstd,
    const std::optional<Tensor>& weight, int64_t N, int64_t C, int64_t HxW, int64_t group,
    std::array<bool, 3> output_mask) {
  c10::DeviceGuard guard(input.device());
  check_float(input, "group_norm backward");
  at::ScalarType at_t = acc_type(input.scalar_type());
  Tensor x = input.contiguous(), dy = grad_out.to(input.scalar_type()).contiguous();
  Tensor m = mean.to(at_t).contiguous(), r = rstd.to(at_t).contiguous();
  Tensor w = param(weight, at_t);
  int64_t T = N * group, E = C / group * HxW;
  Tensor gx, gw, gb;
  if (output_mask[0]) {
    gx = at::empty_like(x, at::MemoryFormat::Contiguous);
    if (T > 0 && E > 0) {
      Tensor s1 = at::empty({T}, x.options().dtype(at_t)),
             s2 = at::empty({T}, x.options().dtype(at_t));
      axon_norm_desc d = desc_of({x.numel(), T, 1, E, E, 0, 1, E, T, HxW, C});
      d.x = x.data_ptr();
      d.dy = dy.data_ptr();
      d.mean = m.data_ptr();
      d.rstd = r.data_ptr();
      d.weight = ptr_or_null(w);
      d.sum1 = s1.data_ptr();
      d.sum2 = s2.data_ptr();
      AXON_CHECK(axon_norm_sums(stream_for(x), rt(x), &d));
      d.count = E;
      d.train = 1;
      d.y = gx.data_ptr();
      AXON_CHECK(axon_norm_backward(stream_for(x), rt(x), &d));
    }
  }
  if (output_mask[1] || output_mask[2]) {
    Tensor dw = at::zeros({C}, x.options().dtype(at_t)),
           db = at::zeros({C}, x.options().dtype(at_t));
    if (N > 0 && HxW > 0 && C > 0) channel_sums(x, dy, m, r, 0, 0.0, N, C, HxW, E, T, dw, db);
    at::ScalarType wt =
        weight.has_value() && weight->defined() ? weight->scalar_type() : input.scalar_type();
    if (output_mask[1]) gw = dw.to(wt);
    if (output_mask[2]) gb = db.to(wt);
  }
  return {in_layout_of(gx, input), gw, gb};
}

// ---- batch norm ---------------------------------------------------------------------------------

struct BnShape {
  int64_t n, c, s;
};
BnShape bn_shape(const Tensor& x) {
  TORCH_CHECK(x.dim() >= 2, "batch_norm: expected an input of at least 2 dims, got ", x.dim());
  return {x.size(0), x.size(1), x.numel() / std::max<int64_t>(1, x.size(0) * x.size(1))};
}

// Per-channel statistics over [n, c, s]: targets are channels.
NormShape bn_norm_shape(const Tensor& x, const BnShape& b) {
  return {x.numel(), b.c, b.n, b.s, b.s, b.c * b.s, 1, b.s, b.c, b.s, b.c};
}

// A running-stat tensor as the accumulation dtype, contiguous (itself when it already is).
Tensor running_acc(const Tensor& t, at::ScalarType at_t) {
  return t.scalar_type() == at_t && t.is_contiguous() ? t : t.to(at_t).contiguous();
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_impl(const Tensor& input,
                                                   const std::optional<Tensor>& weight,
                                                   const std::optional<Tensor>& bias,
                                                   Tensor running_mean, Tensor running_var,
                                                   bool training, double momentum, double eps) {
  c10::DeviceGuard guard(input.device());
  check_float(input, "batch_norm");
  at::ScalarType at_t = acc_type(input.scalar_type());
  BnShape b = bn_shape(input);
  Tensor x = input.contiguous();
  Tensor w = param(weight, at_t), bs = param(bias, at_t);
  Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
  // PyTorch's saved statistics follow the parameters' dtype (float for mixed precision).
  at::ScalarType stat_t = weight.has_value() && weight->defined() ? weight->scalar_type()
                          : running_mean.defined()                ? running_mean.scalar_type()
                                                                  : input.scalar_type();
  axon_norm_desc d = desc_of(bn_norm_shape(x, b));
  d.x = x.data_ptr();
  d.eps = eps;
  d.weight = ptr_or_null(w);
  d.bias = ptr_or_null(bs);
  d.y = y.data_ptr();
  if (training) {
    TORCH_CHECK(b.n * b.s > 1 || b.c == 0,
                "Expected more than 1 value per channel when training, got input size ",
                input.sizes());
    Tensor mean = at::empty({b.c}, x.options().dtype(at_t)),
           invstd = at::empty({b.c}, x.options().dtype(at_t));
    Tensor rm, rv;
    if (running_mean.defined() && running_var.defined()) {
      rm = running_acc(running_mean, at_t);
      rv = running_acc(running_var, at_t);
    }
    d.mean = mean.data_ptr();
    d.rstd = invstd.data_ptr();
    d.running_mean = rm.defined() ? rm.data_ptr() : nullptr;
    d.running_var = rv.defined() ? rv.data_ptr() : nullptr;
    d.momentum = momentum;
    if (b.c > 0) AXON_CHECK(axon_norm_stats(stream_for(x), rt(x), &d));
    if (rm.defined() && !rm.is_same(running_mean)) running_mean.copy_(rm);
    if (rv.defined() && !rv.is_same(running_var)) running_var.copy_(rv);
    AXON_CHECK(axon_norm_apply(stream_for(x), rt(x), &d));
    return {in_layout_of(y, input), mean.to(stat_t), invstd.to(stat_t)};
  }
  TORCH_CHECK(running_mean.defined() && running_var.defined(),
              "batch_norm: running_mean and running_var must be defined in evaluation mode");
  Tensor rm = running_mean.to(at_t).contiguous(), rv = running_var.to(at_t).contiguous();
  d.mean = rm.data_ptr();
  d.rstd = rv.data_ptr();
  d.stat_is_var = 1;
  AXON_CHECK(axon_norm_apply(stream_for(x), rt(x), &d));
  return {in_layout_of(y, input), at::empty({0}, x.options().dtype(stat_t)),
          at::empty({0}, x.options().dtype(stat_t))};
}

Tensor opt(const std::optional<Tensor>& t) {
  return t.has_value() ? *t : Tensor();
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias,
                                                     const std::optional<Tensor>& running_mean,
                                                     const std::optional<Tensor>& running_var,
                                                     bool training, double momentum, double eps) {
  return batch_norm_impl(input, weight, bias, opt(running_mean), opt(running_var), training,
                         momentum, eps);
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_legit(const Tensor& input,
                                                    const std::optional<Tensor>& weight,
                                                    const std::optional<Tensor>& bias,
                                                    Tensor& running_mean, Tensor& running_var,
                                                    bool training, double momentum, double eps) {
  return batch_norm_impl(input, weight, bias, running_mean, running_var, training, momentum, eps);
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_legit_no_stats(const Tensor& input,
                                                             const std::optional<Tensor>& weight,
                                                             const std::optional<Tensor>& bias,
                                                             bool training, double momentum,
                                                             double eps) {
  return batch_norm_impl(input, weight, bias, Tensor(), Tensor(), training, momentum, eps);
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(
    const Tensor& grad_out, const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd, bool train,
    double eps, std::array<bool, 3> output_mask) {
  c10::DeviceGuard guard(input.device());
  check_float(input, "batch_norm backward");
  at::ScalarType at_t = acc_type(input.scalar_type());
  BnShape b = bn_shape(input);
  Tensor x = input.contiguous(), dy = grad_out.to(input.scalar_type()).contiguous();
  Tensor w = param(weight, at_t);
  Tensor m, r;
  int is_var = 0;
  if (train) {
    TORCH_CHECK(save_mean.has_value() && save_mean->defined() && save_invstd.has_value() &&
                    save_invstd->defined(),
                "batch_norm backward: training needs the saved statistics");
    m = save_mean->to(at_t).contiguous();
    r = save_invstd->to(at_t).contiguous();
  } else {
    TORCH_CHECK(running_mean.has_value() && running_mean->defined() && running_var.has_value() &&
                    running_var->defined(),
                "batch_norm backward: evaluation mode needs the running statistics");
    m = running_mean->to(at_t).contiguous();
    r = running_var->to(at_t).contiguous();
    is_var = 1;
  }
  NormShape sh = bn_norm_shape(x, b);
  Tensor gx, gw, gb;
  if (output_mask[0]) {
    gx = at::empty_like(x, at::MemoryFormat::Contiguous);
    axon_norm_desc d = desc_of(sh);
    d.x = x.data_ptr();
    d.dy = dy.data_ptr();
    d.mean = m.data_ptr();
    d.rstd = r.data_ptr();
    d.stat_is_var = is_var;
    d.eps = eps;
    d.weight = ptr_or_null(w);
    d.y = gx.data_ptr();
    d.train = train;
    Tensor s1, s2;
    if (train && b.c > 0) {
      s1 = at::empty({b.c}, x.options().dtype(at_t));
      s2 = at::empty({b.c}, x.options().dtype(at_t));
      d.sum1 = s1.data_ptr();
      d.sum2 = s2.data_ptr();
      d.count = b.n * b.s;
      if (d.count > 0) AXON_CHECK(axon_norm_sums(stream_for(x), rt(x), &d));
    }
    if (b.c > 0 && x.numel() > 0) AXON_CHECK(axon_norm_backward(stream_for(x), rt(x), &d));
  }
  if (output_mask[1] || output_mask[2]) {
    Tensor dw = at::zeros({b.c}, x.options().dtype(at_t)),
           db = at::zeros({b.c}, x.options().dtype(at_t));
    if (x.numel() > 0) channel_sums(x, dy, m, r, is_var, eps, b.n, b.c, b.s, b.s, b.c, dw, db);
    at::ScalarType wt =
        weight.has_value() && weight->defined() ? weight->scalar_type() : input.scalar_type();
    if (output_mask[1]) gw = dw.to(wt);
    if (output_mask[2]) gb = db.to(wt);
  }
  return {in_layout_of(gx, input), gw, gb};
}

// The newer entry points (torch.export / compile decompositions): the same kernels, plus an
// empty reserve tensor.
std::tuple<Tensor, Tensor, Tensor, Tensor> batch_norm_with_update(
    const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
    Tensor& running_mean, Tensor& running_var, double momentum, double eps) {
  auto [y, m, r] =
      batch_norm_impl(input, weight, bias, running_mean, running_var, true, momentum, eps);
  return {y, m, r, at::empty({0}, input.options().dtype(at::kByte))};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> batch_norm_no_update(
    const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    double momentum, double eps) {
  Tensor rm = opt(running_mean), rv = opt(running_var);
  bool batch_stats = !rm.defined() || !rv.defined();
  auto [y, m, r] = batch_norm_impl(input, weight, bias, batch_stats ? Tensor() : rm,
                                   batch_stats ? Tensor() : rv, batch_stats, momentum, eps);
  return {y, m, r, at::empty({0}, input.options().dtype(at::kByte))};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward_new(
    const Tensor& grad_out, const Tensor& input, const Tensor& weight,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_var, bool update,
    double eps, std::array<bool, 3> output_mask, const Tensor& /*reserve*/) {
  return axon::native_batch_norm_backward(grad_out, input, weight, running_mean, running_var,
                                          save_mean, save_var, update, eps, output_mask);
}

// ---- weight norm (the fused form PyTorch takes off the CPU: wav2vec2-style convolutions) -------

// Every dim but `dim`: the norm of each slice along `dim` (keepdim, the shape of g).
std::vector<int64_t> dims_except(const Tensor& v, int64_t dim) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < v.dim(); d++)
    if (d != dim) dims.push_back(d);
  return dims;
}

// w = g * v / ||v||, norms kept for backward.
std::tuple<Tensor, Tensor> weight_norm(const Tensor& v, const Tensor& g, int64_t dim) {
  dim = c10::maybe_wrap_dim(dim, v.dim());
  Tensor norms = at::linalg_vector_norm(v, 2, dims_except(v, dim), /*keepdim=*/true);
  return {v.mul(g.div(norms)), norms};
}

// grad_g = sum(grad_w * v) / norm; grad_v = g / norm * (grad_w - v * grad_g / norm).
std::tuple<Tensor, Tensor> weight_norm_backward(const Tensor& grad_w, const Tensor& v,
                                                const Tensor& g, const Tensor& norms, int64_t dim) {
  dim = c10::maybe_wrap_dim(dim, v.dim());
  Tensor grad_g = grad_w.mul(v).sum(dims_except(v, dim), /*keepdim=*/true).div(norms);
  Tensor grad_v = grad_w.sub(v.mul(grad_g.div(norms))).mul(g.div(norms));
  return {grad_v, grad_g.view(g.sizes())};
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("_weight_norm_interface", weight_norm);
  m.impl("_weight_norm_interface_backward", weight_norm_backward);
  m.impl("native_layer_norm", native_layer_norm);
  m.impl("native_layer_norm_backward", native_layer_norm_backward);
  m.impl("native_group_norm", native_group_norm);
  m.impl("native_group_norm_backward", native_group_norm_backward);
  m.impl("native_batch_norm", native_batch_norm);
  m.impl("_native_batch_norm_legit", batch_norm_legit);
  m.impl("_native_batch_norm_legit.no_stats", batch_norm_legit_no_stats);
  m.impl("native_batch_norm_backward", native_batch_norm_backward);
  m.impl("_batch_norm_with_update", batch_norm_with_update);
  m.impl("_batch_norm_no_update", batch_norm_no_update);
  m.impl("batch_norm_backward", batch_norm_backward_new);
}

}  // namespace axon
