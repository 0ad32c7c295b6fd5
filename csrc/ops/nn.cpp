// Matrix products, softmax, losses, random numbers and dropout: layout decisions here, the
// arithmetic in the runtime (BLAS inside the queue, CLBlast or kernels).
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Scalar;
using at::Tensor;

// How BLAS can read a [rows, cols] matrix in place: row-major (trans = false) or as the
// transpose of a row-major matrix, with its leading dimension; nullopt if neither.
struct Layout {
  bool trans;
  int64_t ld;
};

std::optional<Layout> blas_layout(int64_t rows, int64_t cols, int64_t row_stride,
                                  int64_t col_stride) {
  if ((col_stride == 1 || cols == 1) && (row_stride >= std::max<int64_t>(1, cols) || rows == 1))
    return Layout{false, rows == 1 ? std::max<int64_t>(1, cols) : row_stride};
  if ((row_stride == 1 || rows == 1) && (col_stride >= std::max<int64_t>(1, rows) || cols == 1))
    return Layout{true, cols == 1 ? std::max<int64_t>(1, rows) : col_stride};
  return std::nullopt;
}

// A (possibly batched, dims -2 and -1) matrix operand: itself if BLAS can read it, else a
// contiguous copy.
Tensor blas_operand(const Tensor& t, Layout& layout) {
  int64_t r = t.size(-2), c = t.size(-1);
  if (auto l = blas_layout(r, c, t.stride(-2), t.stride(-1))) {
    layout = *l;
    return t;
  }
  Tensor copy = t.contiguous();
  layout = Layout{false, std::max<int64_t>(1, c)};
  return copy;
}

// out[b] = alpha * a[b] @ b[b] + beta * out[b] for 3-d operands (batch first).
void gemm(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta) {
  c10::DeviceGuard guard(out.device());
  check_dtype_supported(out.scalar_type(), out.device().index());
  TORCH_CHECK(a.scalar_type() == b.scalar_type() && a.scalar_type() == out.scalar_type(),
              "expected m1 and m2 to have the same dtype, but got: ", a.scalar_type(),
              " != ", b.scalar_type());
  if (out.numel() == 0) return;
  if (out.is_complex() && a.size(2) == 0) {  // no portable complex kernel does C = beta C
    if (beta == 0)
      out.zero_();
    else
      out.mul_(beta);
    return;
  }
  Layout la{}, lb{};
  // BLAS reads memory as stored: a lazily conjugated complex operand is conjugated first.
  Tensor A = blas_operand(a.resolve_conj(), la), B = blas_operand(b.resolve_conj(), lb);
  auto lc = blas_layout(out.size(1), out.size(2), out.stride(1), out.stride(2));
  bool direct = lc && !lc->trans && (out.size(0) == 1 || out.stride(0) > 0);
  Tensor C = direct ? out : at::empty(out.sizes(), out.options());
  if (!direct && beta != 0) C.copy_(out);
  int64_t ldc = direct ? lc->ld : std::max<int64_t>(1, out.size(2));
  axon_gemm_desc d{};
  d.trans_a = la.trans;
  d.trans_b = lb.trans;
  d.m = out.size(1);
  d.n = out.size(2);
  d.k = a.size(2);
  d.a = A.data_ptr();
  d.b = B.data_ptr();
  d.c = C.data_ptr();
  d.lda = la.ld;
  d.ldb = lb.ld;
  d.ldc = ldc;
  d.batch = out.size(0);
  d.stride_a = A.size(0) == 1 ? 0 : A.stride(0);
  d.stride_b = B.size(0) == 1 ? 0 : B.stride(0);
  d.stride_c = C.size(0) == 1 ? 0 : C.stride(0);
  d.alpha = alpha;
  d.beta = beta;
  AXON_CHECK(axon_gemm(stream_for(out), to_axon_dtype(out.scalar_type()), &d));
  if (!direct) out.copy_(C);
}

void check_mm(const Tensor& a, const Tensor& b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2, "both arguments to mm must be 2D");
  TORCH_CHECK(a.size(1) == b.size(0), "mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x",
              a.size(1), " and ", b.size(0), "x", b.size(1), ")");
}

Tensor& mm_out(const Tensor& a, const Tensor& b, Tensor& out) {
  check_mm(a, b);
  at::native::resize_output(out, {a.size(0), b.size(1)});
  gemm(a.unsqueeze(0), b.unsqueeze(0), out.unsqueeze(0), 1.0, 0.0);
  return out;
}

// The gemm takes real factors: with a complex alpha or beta that has an imaginary part, the
// product runs unscaled and the factors apply through the complex elementwise kernels.
bool has_imaginary(const Scalar& s) {
  return s.isComplex() && s.toComplexDouble().imag() != 0;
}

template <class Product>
Tensor& scaled_by_complex(const Tensor& self, const Scalar& beta, const Scalar& alpha, Tensor& out,
                          Product product) {
  Tensor r = product().mul(alpha);
  if (beta.toComplexDouble() != 0.0) r.add_(self.mul(beta));
  out.copy_(r);
  return out;
}

Tensor& addmm_out(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta,
                  const Scalar& alpha, Tensor& out) {
  check_mm(a, b);
  at::native::resize_output(out, {a.size(0), b.size(1)});
  if (has_imaginary(alpha) || has_imaginary(beta))
    return scaled_by_complex(self, beta, alpha, out, [&] { return at::mm(a, b); });
  double bv = beta.toDouble();
  if (bv != 0 && !self.is_same(out)) out.copy_(self.expand({a.size(0), b.size(1)}));
  gemm(a.unsqueeze(0), b.unsqueeze(0), out.unsqueeze(0), alpha.toDouble(), bv);
  return out;
}

// addmm followed by relu or (exact) gelu: the feed-forward of the transformer fast path.
Tensor& addmm_activation_out(const Tensor& self, const Tensor& a, const Tensor& b,
                             const Scalar& beta, const Scalar& alpha, bool use_gelu, Tensor& out) {
  addmm_out(self, a, b, beta, alpha, out);
  return use_gelu ? at::gelu_(out) : at::relu_(out);
}

Tensor& bmm_out(const Tensor& a, const Tensor& b, Tensor& out) {
  TORCH_CHECK(a.dim() == 3 && b.dim() == 3, "batch1 and batch2 must be 3D tensors");
  TORCH_CHECK(a.size(0) == b.size(0) && a.size(2) == b.size(1), "bmm: shapes cannot be multiplied");
  at::native::resize_output(out, {a.size(0), a.size(1), b.size(2)});
  gemm(a, b, out, 1.0, 0.0);
  return out;
}

Tensor& baddbmm_out(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta,
                    const Scalar& alpha, Tensor& out) {
  TORCH_CHECK(a.dim() == 3 && b.dim() == 3, "batch1 and batch2 must be 3D tensors");
  at::native::resize_output(out, {a.size(0), a.size(1), b.size(2)});
  if (has_imaginary(alpha) || has_imaginary(beta))
    return scaled_by_complex(self, beta, alpha, out, [&] { return at::bmm(a, b); });
  double bv = beta.toDouble();
  if (bv != 0 && !self.is_same(out)) out.copy_(self.expand(out.sizes()));
  gemm(a, b, out, alpha.toDouble(), bv);
  return out;
}

Tensor& addmv_out(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta,
                  const Scalar& alpha, Tensor& out) {
  TORCH_CHECK(mat.dim() == 2 && vec.dim() == 1 && mat.size(1) == vec.size(0),
              "size mismatch, got input (", mat.size(0), "x", mat.size(1), "), vec (", vec.numel(),
              ")");
  at::native::resize_output(out, {mat.size(0)});
  if (has_imaginary(alpha) || has_imaginary(beta))
    return scaled_by_complex(self, beta, alpha, out, [&] { return at::mv(mat, vec); });
  double bv = beta.toDouble();
  if (bv != 0 && !self.is_same(out)) out.copy_(self.expand({mat.size(0)}));
  gemm(mat.unsqueeze(0), vec.unsqueeze(-1).unsqueeze(0), out.unsqueeze(-1).unsqueeze(0),
       alpha.toDouble(), bv);
  return out;
}

Tensor dot(const Tensor& a, const Tensor& b) {
  TORCH_CHECK(a.dim() == 1 && b.dim() == 1, "1D tensors expected, but got ", a.dim(), "D and ",
              b.dim(), "D tensors");
  TORCH_CHECK(a.numel() == b.numel(), "inconsistent tensor size, expected tensor [", a.numel(),
              "] and src [", b.numel(), "] to have the same number of elements, but got ",
              a.numel(), " and ", b.numel(), " elements respectively");
  TORCH_CHECK(a.scalar_type() == b.scalar_type(),
              "dot : expected both vectors to have same dtype, but found ", a.scalar_type(),
              " and ", b.scalar_type());
  Tensor out = at::empty({}, a.options());
  gemm(a.unsqueeze(0).unsqueeze(0), b.unsqueeze(-1).unsqueeze(0), out.view({1, 1, 1}), 1.0, 0.0);
  return out;
}

// ---- softmax
// ----------------------------------------------------------------------------------------

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

// ---- negative log-likelihood and mean squared error --------------------------------------------

enum { kReductionNone = 0, kReductionMean = 1, kReductionSum = 2 };

// PyTorch's reduction enum: 0 none, 1 mean, 2 sum (the runtime uses the same numbering).
std::tuple<Tensor&, Tensor&> nll_forward_out(const Tensor& self, const Tensor& target,
                                             const std::optional<Tensor>& weight, int64_t reduction,
                                             int64_t ignore_index, Tensor& output,
                                             Tensor& total_weight) {
  TORCH_CHECK(self.dim() >= 1 && self.dim() <= 2, "input tensor should be 1D or 2D");
  TORCH_CHECK(target.scalar_type() == at::kLong, "expected scalar type Long but found ",
              target.scalar_type());
  c10::DeviceGuard guard(self.device());
  Tensor x = self.dim() == 1 ? self.unsqueeze(0).contiguous() : self.contiguous();
  Tensor t = target.reshape({-1}).contiguous();
  TORCH_CHECK(t.numel() == x.size(0), "Expected input batch_size (", x.size(0),
              ") to match target batch_size (", t.numel(), ").");
  Tensor w = weight.has_value() && weight->defined() ? weight->contiguous() : Tensor();
  if (reduction == kReductionNone && self.dim() == 2)
    at::native::resize_output(output, {x.size(0)});
  else
    at::native::resize_output(output, {});
  at::native::resize_output(total_weight, {});
  Tensor out =
      output.is_contiguous() ? output : at::empty_like(output, at::MemoryFormat::Contiguous);
  axon_nll_desc d{};
  d.n = x.size(0);
  d.c = x.size(1);
  d.input = x.data_ptr();
  d.target = t.data_ptr();
  d.weight = w.defined() ? w.data_ptr() : nullptr;
  d.out = out.data_ptr();
  d.total_weight = total_weight.data_ptr();
  d.ignore_index = ignore_index;
  d.reduction = int(reduction);
  AXON_CHECK(axon_nll_forward(stream_for(x), to_axon_dtype(x.scalar_type()), &d));
  if (reduction == kReductionNone) total_weight.zero_();
  if (!out.is_same(output)) output.copy_(out);
  return {output, total_weight};
}

// gi (contiguous [n, c], any previous contents) = d loss / d input.
void nll_backward_into(const Tensor& grad_output, const Tensor& target,
                       const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                       const Tensor& total_weight, int64_t n, int64_t c, const Tensor& gi) {
  gi.zero_();
  Tensor t = target.reshape({-1}).contiguous();
  Tensor g = grad_output.contiguous();
  Tensor w = weight.has_value() && weight->defined() ? weight->contiguous() : Tensor();
  axon_nll_desc d{};
  d.n = n;
  d.c = c;
  d.target = t.data_ptr();
  d.weight = w.defined() ? w.data_ptr() : nullptr;
  d.total_weight = total_weight.data_ptr();
  d.grad_out = g.data_ptr();
  d.grad_in = gi.data_ptr();
  d.ignore_index = ignore_index;
  d.reduction = int(reduction);
  AXON_CHECK(axon_nll_backward(stream_for(gi), to_axon_dtype(gi.scalar_type()), &d));
}

Tensor& nll_backward_out(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                         const std::optional<Tensor>& weight, int64_t reduction,
                         int64_t ignore_index, const Tensor& total_weight, Tensor& grad_input) {
  c10::DeviceGuard guard(self.device());
  at::native::resize_output(grad_input, self.sizes());
  Tensor gi =
      grad_input.is_contiguous() ? grad_input : at::empty_like(self, at::MemoryFormat::Contiguous);
  nll_backward_into(grad_output, target, weight, reduction, ignore_index, total_weight,
                    self.dim() == 1 ? 1 : self.size(0), self.size(-1), gi);
  if (!gi.is_same(grad_input)) grad_input.copy_(gi);
  return grad_input;
}

// nll_loss2d: input [N, C, H, W], target [N, H, W]. Classes move last so each pixel is a row
// of the 1-d kernels.
std::tuple<Tensor&, Tensor&> nll2d_forward_out(const Tensor& self, const Tensor& target,
                                               const std::optional<Tensor>& weight,
                                               int64_t reduction, int64_t ignore_index,
                                               Tensor& output, Tensor& total_weight) {
  TORCH_CHECK(self.dim() == 4 && target.dim() == 3,
              "nll_loss2d expects a 4-D input and a 3-D target, got ", self.dim(), "-D and ",
              target.dim(), "-D");
  Tensor rows = self.movedim(1, -1).reshape({-1, self.size(1)});
  Tensor flat = at::empty({0}, output.options());
  nll_forward_out(rows, target.reshape({-1}), weight, reduction, ignore_index, flat, total_weight);
  if (reduction == kReductionNone) {
    at::native::resize_output(output, target.sizes());
    output.copy_(flat.view(target.sizes()));
  } else {
    at::native::resize_output(output, {});
    output.copy_(flat);
  }
  return {output, total_weight};
}

Tensor& nll2d_backward_out(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                           const std::optional<Tensor>& weight, int64_t reduction,
                           int64_t ignore_index, const Tensor& total_weight, Tensor& grad_input) {
  c10::DeviceGuard guard(self.device());
  int64_t n = self.size(0) * self.size(2) * self.size(3), c = self.size(1);
  Tensor rows = at::empty({n, c}, self.options());
  nll_backward_into(grad_output, target, weight, reduction, ignore_index, total_weight, n, c, rows);
  at::native::resize_output(grad_input, self.sizes());
  return grad_input.copy_(rows.view({self.size(0), self.size(2), self.size(3), c}).movedim(-1, 1));
}

Tensor& mse_loss_out(const Tensor& self, const Tensor& target, int64_t reduction, Tensor& out) {
  Tensor diff = at::sub(self, target);
  Tensor sq = diff.mul_(diff);
  if (reduction == kReductionNone) {
    at::native::resize_output(out, sq.sizes());
    return out.copy_(sq);
  }
  Tensor r = reduction == kReductionMean ? sq.mean() : sq.sum();
  at::native::resize_output(out, {});
  return out.copy_(r);
}

Tensor& mse_loss_backward_out(const Tensor& grad, const Tensor& self, const Tensor& target,
                              int64_t reduction, Tensor& grad_input) {
  double norm = reduction == kReductionMean ? 2.0 / double(self.numel()) : 2.0;
  Tensor r = at::sub(self, target).mul_(grad).mul_(norm);
  at::native::resize_output(grad_input, r.sizes());
  return grad_input.copy_(r);
}

Tensor mse_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                         int64_t reduction) {
  Tensor out = at::empty({0}, self.options());
  return mse_loss_backward_out(grad, self, target, reduction, out);
}

// ---- random numbers and dropout
// --------------------------------------------------------------------

Tensor& random_fill(Tensor& self, axon_random_kind kind, double a, double b,
                    const std::optional<at::Generator>& gen) {
  if (self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "axon: random distributions for ", self.scalar_type(),
                              " tensors are not native yet");
  check_dtype_supported(self.scalar_type(), self.device().index());
  auto [seed, offset] = philox_reserve(gen, self.device().index(), uint64_t(self.numel()));
  axon_ew_desc d = make_ew_desc_same_shape(self, {}, true);
  d.ninputs = 0;
  AXON_CHECK(axon_random(stream_for(self), to_axon_dtype(self.scalar_type()), kind, &d, seed,
                         offset, a, b));
  return self;
}

// Complex tensors draw both parts from the real distribution, as PyTorch does: normal_ with
// std / sqrt(2) per part (so the complex variance is std^2), uniform_ in [from, to) per part.
Tensor& normal_(Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  if (self.is_complex()) {
    Tensor parts = at::view_as_real(self);
    random_fill(parts, AXON_RANDOM_NORMAL, mean, std / std::sqrt(2.0), gen);
    return self;
  }
  return random_fill(self, AXON_RANDOM_NORMAL, mean, std, gen);
}

Tensor& uniform_(Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  if (self.is_complex()) {
    Tensor parts = at::view_as_real(self);
    random_fill(parts, AXON_RANDOM_UNIFORM, from, to, gen);
    return self;
  }
  return random_fill(self, AXON_RANDOM_UNIFORM, from, to, gen);
}

Tensor& bernoulli_float(Tensor& self, double p, std::optional<at::Generator> gen) {
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  if (at::isFloatingType(self.scalar_type()))
    return random_fill(self, AXON_RANDOM_BERNOULLI, p, 0, gen);
  Tensor f = at::empty(self.sizes(), self.options().dtype(at::kFloat));
  random_fill(f, AXON_RANDOM_BERNOULLI, p, 0, gen);
  return self.copy_(f);
}

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p,
                                          std::optional<bool> train) {
  if (!train.value_or(true) || p == 0)
    return {input.clone(), at::ones_like(input, input.options().dtype(at::kBool))};
  if (p == 1)
    return {at::zeros_like(input), at::zeros_like(input, input.options().dtype(at::kBool))};
  Tensor keep = at::empty_like(
      input, input.options().dtype(at::isFloatingType(input.scalar_type()) ? input.scalar_type()
                                                                           : at::kFloat));
  random_fill(keep, AXON_RANDOM_BERNOULLI, 1.0 - p, 0, std::nullopt);
  Tensor out = at::mul(input, keep).mul_(1.0 / (1.0 - p));
  return {out, keep.ne(0)};
}

// As on the CPU: the result type follows promotion (an integer gradient gives float).
Tensor native_dropout_backward(const Tensor& grad, const Tensor& mask, double scale) {
  return grad * mask * scale;
}

}  // namespace

// nn.TransformerEncoder's fast path asks whether a padding mask ([batch, seq], true where a
// token is) keeps each row's tokens at its start: no row has a token after a gap.
bool nested_mask_left_aligned(const Tensor& /*values*/, const Tensor& mask) {
  TORCH_CHECK(mask.dim() == 2 && mask.scalar_type() == at::kBool,
              "_nested_tensor_from_mask_left_aligned: expected a 2-d bool mask, got ",
              mask.scalar_type(), " ", mask.sizes());
  const int64_t len = mask.size(1);
  if (len < 2) return true;
  Tensor token_after_gap =
      mask.narrow(1, 1, len - 1).logical_and(mask.narrow(1, 0, len - 1).logical_not());
  return !token_after_gap.any().item<bool>();
}

// Forward-mode derivative of glu(x) = a * sigmoid(b) ([a, b] = x halved along dim):
// da * sigmoid(b) + glu * (1 - sigmoid(b)) * db.
Tensor glu_jvp(const Tensor& glu, const Tensor& x, const Tensor& dx, int64_t dim) {
  dim = c10::maybe_wrap_dim(dim, x.dim());
  const int64_t half = x.size(dim) / 2;
  Tensor sig_b = x.narrow(dim, half, half).sigmoid();
  Tensor da = dx.narrow(dim, 0, half), db = dx.narrow(dim, half, half);
  return da.mul(sig_b).add_(glu.mul(sig_b.neg().add_(1)).mul_(db));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("glu_jvp", glu_jvp);
  m.impl("_nested_tensor_from_mask_left_aligned", nested_mask_left_aligned);
  m.impl("mm.out", mm_out);
  m.impl("addmm.out", addmm_out);
  m.impl("_addmm_activation.out", addmm_activation_out);
  m.impl("bmm.out", bmm_out);
  m.impl("baddbmm.out", baddbmm_out);
  m.impl("addmv.out", addmv_out);
  m.impl("dot", dot);
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
  m.impl("nll_loss_forward.output", nll_forward_out);
  m.impl("nll_loss_backward.grad_input", nll_backward_out);
  m.impl("nll_loss2d_forward.output", nll2d_forward_out);
  m.impl("nll_loss2d_backward.grad_input", nll2d_backward_out);
  m.impl("nll_loss2d_forward",
         [](const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
            int64_t reduction, int64_t ignore_index) -> std::tuple<Tensor, Tensor> {
           Tensor out = at::empty({0}, self.options()), total = at::empty({}, self.options());
           nll2d_forward_out(self, target, weight, reduction, ignore_index, out, total);
           return {out, total};
         });
  m.impl("nll_loss2d_backward",
         [](const Tensor& grad, const Tensor& self, const Tensor& target,
            const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
            const Tensor& total_weight) -> Tensor {
           Tensor gi = at::empty_like(self);
           return nll2d_backward_out(grad, self, target, weight, reduction, ignore_index,
                                     total_weight, gi);
         });
  m.impl("mse_loss.out", mse_loss_out);
  m.impl("mse_loss_backward", mse_loss_backward);
  m.impl("mse_loss_backward.grad_input", mse_loss_backward_out);
  m.impl("normal_", normal_);
  m.impl("uniform_", uniform_);
  m.impl("bernoulli_.float", bernoulli_float);
  m.impl("native_dropout", native_dropout);
  m.impl("native_dropout_backward", native_dropout_backward);
}

}  // namespace axon
