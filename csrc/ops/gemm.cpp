// Matrix products (mm, addmm and its fused relu / gelu form, bmm, baddbmm, addmv, dot): layout
// decisions here, the products in the runtime's gemm family (BLAS inside the queue, CLBlast or
// the kernels of kernels/gemm.cl).
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

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("mm.out", mm_out);
  m.impl("addmm.out", addmm_out);
  m.impl("_addmm_activation.out", addmm_activation_out);
  m.impl("bmm.out", bmm_out);
  m.impl("baddbmm.out", baddbmm_out);
  m.impl("addmv.out", addmv_out);
  m.impl("dot", dot);
}

}  // namespace axon
