// Linear algebra: LU, Cholesky, triangular solves, inverses, determinants, QR, eigh, SVD, LDL.
//
// On CPU-class devices that run native kernels (PoCL) LAPACK runs inside the stream on the
// buffers' own memory (runtime/src/ops/linalg.c). The glue only prepares operands: LAPACK
// wants column-major batches, so inputs are copied on the device into F-contiguous batches
// (PyTorch's meta functions give most outputs that layout already, and then the result is
// written in place), and results are copied into outputs of any other layout.
//
// Devices without native kernels (GPUs) have no LAPACK path: every op here hands itself to the
// counted CPU fallback there (decline_unless), exactly as if it were not registered.
#include <ATen/Operators.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_linalg_solve_ex_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/linalg_ldl_solve_compositeexplicitautogradnonfunctional_dispatch.h>
#include <ATen/ops/triangular_solve_compositeexplicitautogradnonfunctional_dispatch.h>
#include <torch/library.h>

#include "axon_glue.h"

extern "C" {
#include "axon/linalg.h"
}

namespace axon {

// ops/copy.cpp: the counted CPU fallback, for ops declined at run time.
void counted_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

namespace {

using at::Tensor;
using at::native::batched_matrix_contiguous_strides;

// Whether LAPACK runs on the tensor's device for its dtype (float32 / float64 on a device
// that runs host tasks).
bool lapack_ok(const Tensor& t) {
  auto st = t.scalar_type();
  if (st != at::kFloat && st != at::kDouble) return false;
  if (!axon_device_supports_dtype(t.device().index(), to_axon_dtype(st))) return false;
  return axon_linalg_supported(stream_for(t), to_axon_dtype(st)) != 0;
}

// Hands the op to the counted CPU fallback where the device cannot run LAPACK.
#define decline_unless(cond, OP, ...) \
  if (!(cond)) return at::native::call_fallback_fn<&counted_cpu_fallback, OP>::call(__VA_ARGS__)

// ---- layouts ------------------------------------------------------------------------------------

at::DimVector fstrides(at::IntArrayRef sizes) {
  return batched_matrix_contiguous_strides(sizes, /*f_contig=*/true);
}

Tensor empty_f(at::IntArrayRef sizes, const at::TensorOptions& opts) {
  return at::empty_strided(sizes, fstrides(sizes), opts);
}

// A column-major copy (made on the device).
Tensor copy_f(const Tensor& t) {
  return empty_f(t.sizes(), t.options()).copy_(t);
}

bool same_strides(const Tensor& t, at::IntArrayRef want) {
  for (int64_t i = 0; i < t.dim(); i++)
    if (t.size(i) > 1 && t.stride(i) != want[size_t(i)]) return false;
  return true;
}

// t itself when it is a column-major batch already (read-only operands), else a copy.
Tensor as_f(const Tensor& t) {
  return same_strides(t, fstrides(t.sizes())) ? t : copy_f(t);
}

// An output written through a working tensor of the layout LAPACK wants: the output itself
// when it already has it (the usual case: PyTorch's meta functions choose that layout),
// otherwise a temporary copied back by done().
struct Out {
  Tensor& out;
  Tensor work;
  Out(const Tensor& o, at::IntArrayRef sizes, bool fmajor, at::ScalarType dtype)
      : out(const_cast<Tensor&>(o)) {
    at::native::resize_output(out, sizes);
    auto want = fmajor ? fstrides(sizes) : c10::contiguous_strides(sizes);
    if (out.scalar_type() == dtype && same_strides(out, want))
      work = out;
    else
      work = at::empty_strided(sizes, want, out.options().dtype(dtype));
  }
  void done() {
    if (!work.is_same(out)) out.copy_(work);
  }
};

int64_t batch_of(const Tensor& t) {
  return at::native::batchCount(t);
}

// A column-major batch as a runtime operand.
axon_linalg_mat mat(const Tensor& t) {
  axon_linalg_mat m{};
  m.ld = std::max<int64_t>(t.size(-2), 1);  // column-major: a size-1 last dim may have any stride
  if (t.numel() == 0) return m;
  m.data = t.data_ptr();
  m.stride = t.size(-2) * t.size(-1);
  return m;
}

void* ptr(const Tensor& t) {
  return t.numel() ? t.data_ptr() : nullptr;
}

void run(const Tensor& like, axon_linalg_op op, const axon_linalg_desc& d) {
  if (d.batch == 0) return;
  c10::DeviceGuard guard(like.device());
  AXON_CHECK(axon_linalg(stream_for(like), to_axon_dtype(like.scalar_type()), op, &d));
}

// t expanded to the batch shape `batch` (matrices keep their own last two dims).
Tensor expand_batch(const Tensor& t, at::IntArrayRef batch) {
  std::vector<int64_t> shape(batch.begin(), batch.end());
  shape.push_back(t.size(-2));
  shape.push_back(t.size(-1));
  return t.expand(shape);
}

std::vector<int64_t> batch_shape(const Tensor& t, int64_t tail = 2) {
  return t.sizes().slice(0, size_t(t.dim() - tail)).vec();
}

std::vector<int64_t> broadcast_batch(const Tensor& a, const Tensor& b) {
  return at::infer_size(batch_shape(a), batch_shape(b));
}

std::vector<int64_t> with_tail(std::vector<int64_t> v, std::initializer_list<int64_t> tail) {
  v.insert(v.end(), tail);
  return v;
}

Tensor int_info(const Tensor& like, at::IntArrayRef batch) {
  return at::empty(batch, like.options().dtype(at::kInt));
}

// ---- Cholesky -----------------------------------------------------------------------------------

std::tuple<Tensor&, Tensor&> cholesky_ex_out(const Tensor& A, bool upper, bool check_errors,
                                             Tensor& L, Tensor& info) {
  decline_unless(lapack_ok(A), ATEN_OP2(linalg_cholesky_ex, L), A, upper, check_errors, L, info);
  at::native::squareCheckInputs(A, "linalg.cholesky");
  Out l(L, A.sizes(), true, A.scalar_type());
  Out i(info, batch_shape(A), false, at::kInt);
  l.work.copy_(A);
  axon_linalg_desc d{};
  d.batch = batch_of(A);
  d.n = A.size(-1);
  d.upper = upper;
  d.a = mat(l.work);
  d.info = ptr(i.work);
  run(A, AXON_LINALG_POTRF, d);
  l.done();
  i.done();
  if (check_errors) at::_linalg_check_errors(info, "linalg.cholesky_ex", A.dim() == 2);
  return {L, info};
}

// The deprecated torch.cholesky: linalg.cholesky with its own error name.
Tensor& cholesky_out(const Tensor& A, bool upper, Tensor& out) {
  decline_unless(lapack_ok(A), ATEN_OP2(cholesky, out), A, upper, out);
  TORCH_WARN_ONCE(
      "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
      "future PyTorch release.");
  Tensor info = at::empty({0}, A.options().dtype(at::kInt));
  cholesky_ex_out(A, upper, false, out, info);
  at::_linalg_check_errors(info, "cholesky", A.dim() == 2);
  return out;
}

Tensor cholesky(const Tensor& A, bool upper) {
  decline_unless(lapack_ok(A), ATEN_OP(cholesky), A, upper);
  Tensor out = empty_f(A.sizes(), A.options());
  return cholesky_out(A, upper, out);
}

// B := A^-1 B from the Cholesky factor (batches already broadcast by cholesky_solve).
Tensor cholesky_solve_helper(const Tensor& B, const Tensor& A, bool upper) {
  decline_unless(lapack_ok(B), ATEN_OP(_cholesky_solve_helper), B, A, upper);
  Tensor X = copy_f(B);
  Tensor F = as_f(A);
  axon_linalg_desc d{};
  d.batch = batch_of(B);
  d.n = B.size(-2);
  d.k = B.size(-1);
  d.upper = upper;
  d.a = mat(F);
  d.b = mat(X);
  run(B, AXON_LINALG_POTRS, d);
  return X;
}

Tensor& cholesky_inverse_out(const Tensor& A, bool upper, Tensor& out) {
  decline_unless(lapack_ok(A), ATEN_OP2(cholesky_inverse, out), A, upper, out);
  at::native::squareCheckInputs(A, "cholesky_inverse");
  Out o(out, A.sizes(), true, A.scalar_type());
  o.work.copy_(A);
  Tensor info = int_info(A, batch_shape(A));
  axon_linalg_desc d{};
  d.batch = batch_of(A);
  d.n = A.size(-1);
  d.upper = upper;
  d.a = mat(o.work);
  d.info = ptr(info);
  run(A, AXON_LINALG_POTRI, d);
  o.done();
  return out;
}

Tensor cholesky_inverse(const Tensor& A, bool upper) {
  decline_unless(lapack_ok(A), ATEN_OP(cholesky_inverse), A, upper);
  Tensor out = empty_f(A.sizes(), A.options());
  return cholesky_inverse_out(A, upper, out);
}

// ---- LU -----------------------------------------------------------------------------------------

// LU factors of A (m x n batches) into LU / pivots / info outputs.
void lu_factor_into(const Tensor& A, Tensor& LU, Tensor& pivots, Tensor& info) {
  at::native::checkIsMatrix(A, "linalg.lu_factor");
  int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  auto batch = batch_shape(A);
  Out lu(LU, A.sizes(), true, A.scalar_type());
  Out p(pivots, with_tail(batch, {k}), false, at::kInt);
  Out i(info, batch, false, at::kInt);
  lu.work.copy_(A);
  axon_linalg_desc d{};
  d.batch = batch_of(A);
  d.m = m;
  d.n = n;
  d.a = mat(lu.work);
  d.piv = ptr(p.work);
  d.piv_stride = k;
  d.info = ptr(i.work);
  run(A, AXON_LINALG_GETRF, d);
  lu.done();
  p.done();
  i.done();
}

std::tuple<Tensor&, Tensor&, Tensor&> lu_factor_ex_out(const Tensor& A, bool pivot,
                                                       bool check_errors, Tensor& LU,
                                                       Tensor& pivots, Tensor& info) {
  decline_unless(lapack_ok(A), ATEN_OP2(linalg_lu_factor_ex, out), A, pivot, check_errors, LU,
                 pivots, info);
  TORCH_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  lu_factor_into(A, LU, pivots, info);
  if (check_errors) at::_linalg_check_errors(info, "torch.linalg.lu_factor_ex", A.dim() == 2);
  return {LU, pivots, info};
}

// Solves op(A) X = B (left) or X op(A) = B (right) from LU factors; batches broadcast.
Tensor lu_solve_f(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left,
                  bool adjoint) {
  auto batch = broadcast_batch(LU, B);
  Tensor F = as_f(expand_batch(LU, batch));
  Tensor P = pivots.expand(with_tail(batch, {pivots.size(-1)})).to(at::kInt).contiguous();
  Tensor Bb = expand_batch(B, batch);
  // X A' = B is A'^T X^T = B^T: the right-hand side is solved transposed.
  Tensor X = copy_f(left ? Bb : Bb.mT());
  axon_linalg_desc d{};
  d.batch = batch_of(X);
  d.n = X.size(-2);
  d.k = X.size(-1);
  d.trans = left ? adjoint : !adjoint;
  d.a = mat(F);
  d.b = mat(X);
  d.piv = ptr(P);
  d.piv_stride = P.size(-1);
  run(B, AXON_LINALG_GETRS, d);
  return left ? X : X.mT();
}

Tensor& lu_solve_out(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left,
                     bool adjoint, Tensor& out) {
  decline_unless(lapack_ok(LU), ATEN_OP2(linalg_lu_solve, out), LU, pivots, B, left, adjoint, out);
  at::native::squareCheckInputs(LU, "torch.linalg.lu_solve", "LU");
  at::native::checkIsMatrix(B, "torch.linalg.lu_solve", "B");
  TORCH_CHECK(LU.size(-1) == (left ? B.size(-2) : B.size(-1)),
              "linalg.lu_solve: Incompatible shapes of A and B for the equation ",
              left ? "AX = B" : "XA = B", " (", LU.size(-2), "x", LU.size(-1), " and ", B.size(-2),
              "x", B.size(-1), ")");
  Tensor X = lu_solve_f(LU, pivots, B, left, adjoint);
  Out o(out, X.sizes(), true, LU.scalar_type());
  o.work.copy_(X);
  o.done();
  return out;
}

std::tuple<Tensor&, Tensor&, Tensor&, Tensor&> solve_ex_out(const Tensor& A, const Tensor& B,
                                                            bool left, bool check_errors,
                                                            Tensor& result, Tensor& LU,
                                                            Tensor& pivots, Tensor& info) {
  decline_unless(lapack_ok(A), ATEN_OP2(_linalg_solve_ex, result), A, B, left, check_errors, result,
                 LU, pivots, info);
  at::native::squareCheckInputs(A, "linalg.solve");
  bool vector = at::native::linalg_solve_is_vector_rhs(A, B);
  TORCH_CHECK(left || !vector,
              "linalg.solve: Vector broadcasting of the left hand side is not supported for "
              "left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)");
  Tensor B_ = vector ? B.unsqueeze(-1) : B;
  TORCH_CHECK(A.size(-1) == (left ? B_.size(-2) : B_.size(-1)),
              "linalg.solve: Incompatible shapes of A and B for the equation ",
              left ? "AX = B" : "XA = B", " (", A.size(-2), "x", A.size(-1), " and ", B_.size(-2),
              "x", B_.size(-1), ")");
  lu_factor_into(A, LU, pivots, info);
  Tensor X = lu_solve_f(LU, pivots, B_, left, false);
  if (vector) X = X.squeeze(-1);
  Out o(result, X.sizes(), !vector, A.scalar_type());
  o.work.copy_(X);
  o.done();
  if (check_errors) at::_linalg_check_errors(info, "torch.linalg.solve_ex", A.dim() == 2);
  return {result, LU, pivots, info};
}

std::tuple<Tensor&, Tensor&> inv_ex_out(const Tensor& A, bool check_errors, Tensor& inverse,
                                        Tensor& info) {
  decline_unless(lapack_ok(A), ATEN_OP2(linalg_inv_ex, inverse), A, check_errors, inverse, info);
  at::native::squareCheckInputs(A, "linalg.inv");
  Out x(inverse, A.sizes(), true, A.scalar_type());
  Out i(info, batch_shape(A), false, at::kInt);
  x.work.copy_(A);
  axon_linalg_desc d{};
  d.batch = batch_of(A);
  d.n = A.size(-1);
  d.a = mat(x.work);
  d.info = ptr(i.work);
  run(A, AXON_LINALG_GETRI, d);
  x.done();
  i.done();
  if (check_errors) at::_linalg_check_errors(info, "linalg.inv_ex", A.dim() == 2);
  return {inverse, info};
}

// det (out2 undefined) or sign and log|det| from the LU factors of A.
void lu_det(const Tensor& A, Tensor& LU, Tensor& pivots, Tensor& out, Tensor* out2,
            const char* name) {
  at::native::squareCheckInputs(A, name);
  Tensor info = int_info(A, batch_shape(A));
  // PyTorch factors A^T when A is contiguous (it is column-major then) and its backward
  // formulas (linalg_det_backward, slogdet_backward) expect those factors.
  lu_factor_into(A.is_contiguous() ? A.mT() : A, LU, pivots, info);
  auto batch = batch_shape(A);
  Out o(out, batch, false, A.scalar_type());
  std::optional<Out> o2;
  if (out2) o2.emplace(*out2, batch, false, A.scalar_type());
  Tensor F = as_f(LU);
  Tensor P = pivots.contiguous();
  axon_linalg_desc d{};
  d.batch = batch_of(A);
  d.n = A.size(-1);
  d.a = mat(F);
  d.piv = ptr(P);
  d.piv_stride = A.size(-1);
  d.out = ptr(o.work);
  d.out2 = o2 ? ptr(o2->work) : nullptr;
  run(A, AXON_LINALG_LU_DET, d);
  o.done();
  if (o2) o2->done();
}

std::tuple<Tensor&, Tensor&, Tensor&> det_out(const Tensor& A, Tensor& det, Tensor& LU,
                                              Tensor& pivots) {
  decline_unless(lapack_ok(A), ATEN_OP2(_linalg_det, result), A, det, LU, pivots);
  lu_det(A, LU, pivots, det, nullptr, "linalg.det");
  return {det, LU, pivots};
}

std::tuple<Tensor&, Tensor&, Tensor&, Tensor&> slogdet_out(const Tensor& A, Tensor& sign,
                                                           Tensor& logabsdet, Tensor& LU,
                                                           Tensor& pivots) {
  decline_unless(lapack_ok(A), ATEN_OP2(_linalg_slogdet, sign), A, sign, logabsdet, LU, pivots);
  lu_det(A, LU, pivots, sign, &logabsdet, "linalg.slogdet");
  return {sign, logabsdet, LU, pivots};
}

// P, L, U of A = P L U from LU factors. Not LAPACK: tril / triu and the permutation kernel run
// on every device.
void lu_unpack_into(const Tensor& LU, const Tensor& pivots, bool unpack_data, bool unpack_pivots,
                    Tensor& P, Tensor& L, Tensor& U) {
  int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n);
  auto batch = batch_shape(LU);
  if (unpack_data) {
    Out l(L, with_tail(batch, {m, k}), false, LU.scalar_type());
    l.work.copy_(LU.narrow(-1, 0, k).tril(-1));
    l.work.diagonal(0, -2, -1).fill_(1);
    l.done();
    Out u(U, with_tail(batch, {k, n}), false, LU.scalar_type());
    u.work.copy_(LU.narrow(-2, 0, k).triu());
    u.done();
  } else {
    at::native::resize_output(L, {0});
    at::native::resize_output(U, {0});
  }
  if (!unpack_pivots) {
    at::native::resize_output(P, {0});
    return;
  }
  Out p(P, with_tail(batch, {m, m}), false, LU.scalar_type());
  p.work.zero_();
  Tensor piv = pivots.contiguous();
  Tensor perm = at::empty(with_tail(batch, {m}), piv.options());
  if (p.work.numel()) {
    c10::DeviceGuard guard(LU.device());
    AXON_CHECK(axon_lu_permutation(stream_for(LU), to_axon_dtype(LU.scalar_type()), ptr(piv),
                                   ptr(perm), ptr(p.work), batch_of(LU), m, k));
  }
  p.done();
}

std::tuple<Tensor&, Tensor&, Tensor&> lu_unpack_out(const Tensor& LU, const Tensor& pivots,
                                                    bool unpack_data, bool unpack_pivots, Tensor& P,
                                                    Tensor& L, Tensor& U) {
  TORCH_CHECK(LU.dim() >= 2,
              "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: ", LU.sizes(),
              " instead");
  int64_t k = std::min(LU.size(-2), LU.size(-1));
  if (unpack_pivots) {
    TORCH_CHECK(pivots.scalar_type() == at::kInt,
                "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
                "dtype.\nNote: this function is intended to be used with the output produced by "
                "torch.linalg.lu_factor");
    TORCH_CHECK(pivots.dim() >= 1 && pivots.size(-1) == k,
                "torch.lu_unpack: LU_pivots.size(-1) must be min(LU.size(-2), LU.size(-1))");
  }
  lu_unpack_into(LU, pivots, unpack_data, unpack_pivots, P, L, U);
  return {P, L, U};
}

std::tuple<Tensor&, Tensor&, Tensor&> lu_out(const Tensor& A, bool pivot, Tensor& P, Tensor& L,
                                             Tensor& U) {
  decline_unless(lapack_ok(A), ATEN_OP2(linalg_lu, out), A, pivot, P, L, U);
  TORCH_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  int64_t k = std::min(A.size(-2), A.size(-1));
  Tensor LU = empty_f(A.sizes(), A.options());
  Tensor piv = at::empty(with_tail(batch_shape(A), {k}), A.options().dtype(at::kInt));
  Tensor info = int_info(A, batch_shape(A));
  lu_factor_into(A, LU, piv, info);
  lu_unpack_into(LU, piv, true, true, P, L, U);
  return {P, L, U};
}

// ---- triangular solves --------------------------------------------------------------------------

// X := op(A)^-1 B (left) or B op(A)^-1 (right), batches broadcast; returns column-major X.
Tensor trsm(const Tensor& A, const Tensor& B, bool upper, bool left, bool trans, bool unit) {
  auto batch = broadcast_batch(A, B);
  Tensor F = as_f(expand_batch(A, batch));
  Tensor X = copy_f(expand_batch(B, batch));
  axon_linalg_desc d{};
  d.batch = batch_of(X);
  d.m = X.size(-2);
  d.n = X.size(-1);
  d.upper = upper;
  d.left = left;
  d.trans = trans;
  d.unit = unit;
  d.a = mat(F);
  d.b = mat(X);
  run(B, AXON_LINALG_TRSM, d);
  return X;
}

Tensor& solve_triangular_out(const Tensor& A, const Tensor& B, bool upper, bool left,
                             bool unitriangular, Tensor& out) {
  decline_unless(lapack_ok(A) && B.scalar_type() == A.scalar_type(),
                 ATEN_OP2(linalg_solve_triangular, out), A, B, upper, left, unitriangular, out);
  at::native::checkIsMatrix(A, "linalg.solve_triangular");
  at::native::checkIsMatrix(B, "linalg.solve_triangular", "B");
  TORCH_CHECK(A.size(-1) == A.size(-2),
              "linalg.solve_triangular: A must be batches of square "
              "matrices, but they are ",
              A.size(-2), " by ", A.size(-1), " matrices");
  TORCH_CHECK(A.size(-1) == (left ? B.size(-2) : B.size(-1)),
              "linalg.solve_triangular: Incompatible shapes of A and B for the equation ",
              left ? "AX = B" : "XA = B", " (", A.size(-2), "x", A.size(-1), " and ", B.size(-2),
              "x", B.size(-1), ")");
  Tensor X = trsm(A, B, upper, left, false, unitriangular);
  Out o(out, X.sizes(), true, A.scalar_type());
  o.work.copy_(X);
  o.done();
  return out;
}

Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left,
                        bool unitriangular) {
  decline_unless(lapack_ok(A) && B.scalar_type() == A.scalar_type(),
                 ATEN_OP(linalg_solve_triangular), A, B, upper, left, unitriangular);
  auto batch = broadcast_batch(A, B);
  Tensor out = empty_f(with_tail(batch, {B.size(-2), B.size(-1)}), A.options());
  return solve_triangular_out(A, B, upper, left, unitriangular, out);
}

std::tuple<Tensor&, Tensor&> triangular_solve_out(const Tensor& B, const Tensor& A, bool upper,
                                                  bool transpose, bool unitriangular, Tensor& X,
                                                  Tensor& M) {
  decline_unless(lapack_ok(A) && B.scalar_type() == A.scalar_type(), ATEN_OP2(triangular_solve, X),
                 B, A, upper, transpose, unitriangular, X, M);
  TORCH_CHECK(A.dim() >= 2 && B.dim() >= 2,
              "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has ",
              B.dim(), " dimensions instead");
  at::native::squareCheckInputs(A, "triangular_solve");
  Tensor R = trsm(A, B, upper, true, transpose, unitriangular);
  auto batch = batch_shape(R);
  Out x(X, R.sizes(), true, A.scalar_type());
  x.work.copy_(R);
  x.done();
  Tensor Ab = expand_batch(A, batch);
  Out m(M, Ab.sizes(), true, A.scalar_type());
  m.work.copy_(Ab);
  m.done();
  return {X, M};
}

// ---- QR -----------------------------------------------------------------------------------------

// Householder reflectors and tau of A (column-major copy).
std::pair<Tensor, Tensor> geqrf_f(const Tensor& A) {
  Tensor QR = copy_f(A);
  int64_t m = A.size(-2), n = A.size(-1);
  Tensor tau = at::empty(with_tail(batch_shape(A), {std::min(m, n)}), A.options());
  axon_linalg_desc d{};
  d.batch = batch_of(A);
  d.m = m;
  d.n = n;
  d.a = mat(QR);
  d.v = ptr(tau);
  d.v_stride = std::min(m, n);
  run(A, AXON_LINALG_GEQRF, d);
  return {QR, tau};
}

// Q (m x cols) from k reflectors in the first columns of V (m x >= min(cols, n)) and tau.
Tensor orgqr_f(const Tensor& V, const Tensor& tau, int64_t cols) {
  int64_t m = V.size(-2), k = tau.size(-1);
  Tensor Q = empty_f(with_tail(batch_shape(V), {m, cols}), V.options());
  int64_t c = std::min(cols, V.size(-1));
  Q.narrow(-1, 0, c).copy_(V.narrow(-1, 0, c));
  if (cols > c) Q.narrow(-1, c, cols - c).zero_();
  Tensor t = tau.contiguous();
  axon_linalg_desc d{};
  d.batch = batch_of(Q);
  d.m = m;
  d.n = cols;
  d.k = k;
  d.a = mat(Q);
  d.v = ptr(t);
  d.v_stride = k;
  run(V, AXON_LINALG_ORGQR, d);
  return Q;
}

std::tuple<Tensor&, Tensor&> geqrf_out(const Tensor& A, Tensor& a, Tensor& tau) {
  decline_unless(lapack_ok(A), ATEN_OP2(geqrf, a), A, a, tau);
  TORCH_CHECK(A.dim() >= 2, "torch.geqrf: input must have at least 2 dimensions.");
  auto [QR, t] = geqrf_f(A);
  Out o(a, QR.sizes(), true, A.scalar_type());
  o.work.copy_(QR);
  o.done();
  at::native::resize_output(tau, t.sizes());
  tau.copy_(t);
  return {a, tau};
}

std::tuple<Tensor, Tensor> geqrf(const Tensor& A) {
  decline_unless(lapack_ok(A), ATEN_OP(geqrf), A);
  TORCH_CHECK(A.dim() >= 2, "torch.geqrf: input must have at least 2 dimensions.");
  auto [QR, t] = geqrf_f(A);
  return {QR, t};
}

std::tuple<Tensor&, Tensor&> qr_out(const Tensor& A, c10::string_view mode, Tensor& Q, Tensor& R) {
  decline_unless(lapack_ok(A), ATEN_OP2(linalg_qr, out), A, mode, Q, R);
  at::native::checkIsMatrix(A, "linalg.qr");
  bool complete = mode == "complete", ronly = mode == "r";
  TORCH_CHECK(complete || ronly || mode == "reduced", "qr received unrecognized mode '", mode,
              "' but expected one of 'reduced' (default), 'r', or 'complete'");
  int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  auto batch = batch_shape(A);
  auto [QR, tau] = geqrf_f(A);
  int64_t rrows = complete ? m : k;
  Out r(R, with_tail(batch, {rrows, n}), true, A.scalar_type());
  // rows beyond min(m, n) (complete mode, m > n) are below the diagonal: triu zeroes them.
  r.work.copy_(QR.narrow(-2, 0, rrows).triu());
  r.done();
  if (ronly) {
    at::native::resize_output(Q, {0});
  } else {
    Tensor Qf = orgqr_f(QR, tau, complete ? m : k);
    Out q(Q, Qf.sizes(), true, A.scalar_type());
    q.work.copy_(Qf);
    q.done();
  }
  return {Q, R};
}

Tensor& householder_product_out(const Tensor& V, const Tensor& tau, Tensor& out) {
  decline_unless(lapack_ok(V) && tau.scalar_type() == V.scalar_type(),
                 ATEN_OP2(linalg_householder_product, out), V, tau, out);
  TORCH_CHECK(V.dim() >= 2,
              "torch.linalg.householder_product: input must have at least 2 "
              "dimensions.");
  TORCH_CHECK(V.size(-2) >= V.size(-1),
              "torch.linalg.householder_product: input.shape[-2] must be greater than or equal "
              "to input.shape[-1]");
  TORCH_CHECK(V.size(-1) >= tau.size(-1),
              "torch.linalg.householder_product: input.shape[-1] must be greater than or equal "
              "to tau.shape[-1]");
  TORCH_CHECK(V.dim() - tau.dim() == 1,
              "torch.linalg.householder_product: Expected tau to have one dimension less than "
              "input, but got tau.ndim equal to ",
              tau.dim(), " and input.ndim is equal to ", V.dim());
  Tensor Qf = orgqr_f(V, tau, V.size(-1));
  Out o(out, Qf.sizes(), true, V.scalar_type());
  o.work.copy_(Qf);
  o.done();
  return out;
}

Tensor householder_product(const Tensor& V, const Tensor& tau) {
  decline_unless(lapack_ok(V) && tau.scalar_type() == V.scalar_type(),
                 ATEN_OP(linalg_householder_product), V, tau);
  Tensor out = empty_f(V.sizes(), V.options());
  return householder_product_out(V, tau, out);
}

Tensor& ormqr_out(const Tensor& V, const Tensor& tau, const Tensor& C, bool left, bool transpose,
                  Tensor& out) {
  decline_unless(
      lapack_ok(V) && tau.scalar_type() == V.scalar_type() && C.scalar_type() == V.scalar_type(),
      ATEN_OP2(ormqr, out), V, tau, C, left, transpose, out);
  TORCH_CHECK(V.dim() >= 2, "torch.ormqr: input must have at least 2 dimensions.");
  TORCH_CHECK(C.dim() >= 2, "torch.ormqr: other must have at least 2 dimensions.");
  int64_t side = left ? -2 : -1;
  TORCH_CHECK(C.size(side) == V.size(-2), "torch.ormqr: other.shape[", side,
              "] must be equal to input.shape[-2]");
  TORCH_CHECK(tau.size(-1) <= V.size(-1),
              "torch.ormqr: tau.shape[-1] must be less than or equal to input.shape[-1]");
  Tensor F = as_f(V);
  Tensor t = tau.contiguous();
  Tensor X = copy_f(C);
  axon_linalg_desc d{};
  d.batch = batch_of(X);
  d.m = X.size(-2);
  d.n = X.size(-1);
  d.k = tau.size(-1);
  d.left = left;
  d.trans = transpose;
  d.a = mat(F);
  d.b = mat(X);
  d.v = ptr(t);
  d.v_stride = tau.size(-1);
  run(C, AXON_LINALG_ORMQR, d);
  Out o(out, X.sizes(), true, V.scalar_type());
  o.work.copy_(X);
  o.done();
  return out;
}

Tensor ormqr(const Tensor& V, const Tensor& tau, const Tensor& C, bool left, bool transpose) {
  decline_unless(
      lapack_ok(V) && tau.scalar_type() == V.scalar_type() && C.scalar_type() == V.scalar_type(),
      ATEN_OP(ormqr), V, tau, C, left, transpose);
  Tensor out = empty_f(C.sizes(), C.options());
  return ormqr_out(V, tau, C, left, transpose, out);
}

// ---- eigh, SVD ----------------------------------------------------------------------------------

std::tuple<Tensor&, Tensor&> eigh_out(const Tensor& A, c10::string_view uplo, bool compute_v,
                                      Tensor& values, Tensor& vectors) {
  decline_unless(lapack_ok(A), ATEN_OP2(_linalg_eigh, eigenvalues), A, uplo, compute_v, values,
                 vectors);
  at::native::squareCheckInputs(A, "linalg.eigh");
  TORCH_CHECK(uplo == "L" || uplo == "U", "Expected UPLO argument to be 'L' or 'U', but got ",
              uplo);
  auto batch = batch_shape(A);
  int64_t n = A.size(-1);
  Out w(values, with_tail(batch, {n}), false, A.scalar_type());
  Tensor V;
  std::optional<Out> v;
  if (compute_v) {
    v.emplace(vectors, A.sizes(), true, A.scalar_type());
    V = v->work;
    V.copy_(A);
  } else {
    at::native::resize_output(vectors, {0});
    V = copy_f(A);
  }
  Tensor info = int_info(A, batch);
  axon_linalg_desc d{};
  d.batch = batch_of(A);
  d.n = n;
  d.upper = uplo == "U";
  d.vectors = compute_v;
  d.a = mat(V);
  d.v = ptr(w.work);
  d.v_stride = n;
  d.info = ptr(info);
  run(A, AXON_LINALG_SYEVD, d);
  w.done();
  if (v) v->done();
  at::_linalg_check_errors(info, "linalg.eigh", A.dim() == 2);
  return {values, vectors};
}

std::tuple<Tensor&, Tensor&, Tensor&> svd_out(const Tensor& A, bool full_matrices, bool compute_uv,
                                              std::optional<c10::string_view> driver, Tensor& U,
                                              Tensor& S, Tensor& Vh) {
  decline_unless(lapack_ok(A), ATEN_OP2(_linalg_svd, U), A, full_matrices, compute_uv, driver, U, S,
                 Vh);
  at::native::checkIsMatrix(A, "linalg.svd");
  TORCH_CHECK(!driver.has_value(),
              "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs "
              "with cuSOLVER backend.");
  int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  auto batch = batch_shape(A);
  bool full = compute_uv && full_matrices;
  Out s(S, with_tail(batch, {k}), false, A.scalar_type());
  std::optional<Out> u, vh;
  if (compute_uv) {
    u.emplace(U, with_tail(batch, {m, full ? m : k}), true, A.scalar_type());
    vh.emplace(Vh, with_tail(batch, {full ? n : k, n}), true, A.scalar_type());
  } else {
    at::native::resize_output(U, {0});
    at::native::resize_output(Vh, {0});
  }
  Tensor F = copy_f(A);
  Tensor info = int_info(A, batch);
  axon_linalg_desc d{};
  d.batch = batch_of(A);
  d.m = m;
  d.n = n;
  d.vectors = compute_uv;
  d.full = full;
  d.a = mat(F);
  d.v = ptr(s.work);
  d.v_stride = k;
  if (u) {
    d.u = mat(u->work);
    d.u.ld = m;
    d.vt = mat(vh->work);
    d.vt.ld = full ? n : k;
  }
  d.info = ptr(info);
  if (k > 0) run(A, AXON_LINALG_GESDD, d);
  // Empty A: the singular vectors of a 0 x n or m x 0 matrix (full mode) are the identity.
  if (k == 0 && full) {
    for (Tensor* t : {&u->work, &vh->work}) {
      t->zero_();
      t->diagonal(0, -2, -1).fill_(1);
    }
  }
  s.done();
  if (u) {
    u->done();
    vh->done();
  }
  if (k > 0) at::_linalg_check_errors(info, "linalg.svd", A.dim() == 2);
  return {U, S, Vh};
}

// ---- LDL ----------------------------------------------------------------------------------------

std::tuple<Tensor&, Tensor&, Tensor&> ldl_factor_ex_out(const Tensor& A, bool hermitian,
                                                        bool check_errors, Tensor& LD,
                                                        Tensor& pivots, Tensor& info) {
  decline_unless(lapack_ok(A), ATEN_OP2(linalg_ldl_factor_ex, out), A, hermitian, check_errors, LD,
                 pivots, info);
  at::native::squareCheckInputs(A, "torch.linalg.ldl_factor_ex");
  auto batch = batch_shape(A);
  int64_t n = A.size(-1);
  Out ld(LD, A.sizes(), true, A.scalar_type());
  Out p(pivots, with_tail(batch, {n}), false, at::kInt);
  Out i(info, batch, false, at::kInt);
  // The lower triangle, as PyTorch's CPU path; the strict upper triangle of LD is zero.
  ld.work.copy_(A.tril());
  axon_linalg_desc d{};
  d.batch = batch_of(A);
  d.n = n;
  d.a = mat(ld.work);
  d.piv = ptr(p.work);
  d.piv_stride = n;
  d.info = ptr(i.work);
  run(A, AXON_LINALG_SYTRF, d);
  ld.done();
  p.done();
  i.done();
  if (check_errors) at::_linalg_check_errors(info, "torch.linalg.ldl_factor_ex", A.dim() == 2);
  return {LD, pivots, info};
}

Tensor& ldl_solve_out(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian,
                      Tensor& out) {
  decline_unless(lapack_ok(LD) && B.scalar_type() == LD.scalar_type(),
                 ATEN_OP2(linalg_ldl_solve, out), LD, pivots, B, hermitian, out);
  at::native::squareCheckInputs(LD, "torch.linalg.ldl_solve");
  at::native::checkIsMatrix(B, "torch.linalg.ldl_solve", "B");
  TORCH_CHECK(LD.size(-1) == B.size(-2),
              "torch.linalg.ldl_solve: Incompatible shapes of A and B for the equation AX = B "
              "(",
              LD.size(-2), "x", LD.size(-1), " and ", B.size(-2), "x", B.size(-1), ")");
  auto batch = broadcast_batch(LD, B);
  Tensor F = as_f(expand_batch(LD, batch));
  Tensor P = pivots.expand(with_tail(batch, {pivots.size(-1)})).to(at::kInt).contiguous();
  Tensor X = copy_f(expand_batch(B, batch));
  axon_linalg_desc d{};
  d.batch = batch_of(X);
  d.n = X.size(-2);
  d.k = X.size(-1);
  d.a = mat(F);
  d.b = mat(X);
  d.piv = ptr(P);
  d.piv_stride = P.size(-1);
  run(B, AXON_LINALG_SYTRS, d);
  Out o(out, X.sizes(), true, LD.scalar_type());
  o.work.copy_(X);
  o.done();
  return out;
}

// ---- least squares ------------------------------------------------------------------------------

std::tuple<Tensor&, Tensor&, Tensor&, Tensor&> lstsq_out(const Tensor& A, const Tensor& B,
                                                         std::optional<double> rcond,
                                                         std::optional<c10::string_view> driver,
                                                         Tensor& solution, Tensor& residuals,
                                                         Tensor& rank, Tensor& singular_values) {
  decline_unless(lapack_ok(A) && B.scalar_type() == A.scalar_type(), ATEN_OP2(linalg_lstsq, out), A,
                 B, rcond, driver, solution, residuals, rank, singular_values);
  TORCH_CHECK(A.dim() >= 2, "torch.linalg.lstsq: input must have at least 2 dimensions.");
  int64_t diff = A.dim() - B.dim();
  TORCH_CHECK(diff == 0 || diff == 1,
              "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
              "(input.dim() - other.dim()) <= 1");
  bool vector = diff == 1;
  Tensor B_ = vector ? B.unsqueeze(-1) : B;
  TORCH_CHECK(A.size(-2) == B_.size(-2),
              "torch.linalg.lstsq: input.size(-2) should match other.size(-2)");
  std::string name = driver.has_value() ? std::string(*driver) : "gelsy";
  axon_linalg_op op = name == "gels"    ? AXON_LINALG_GELS
                      : name == "gelsy" ? AXON_LINALG_GELSY
                      : name == "gelsd" ? AXON_LINALG_GELSD
                      : name == "gelss" ? AXON_LINALG_GELSS
                                        : AXON_LINALG_COUNT;
  TORCH_CHECK(op != AXON_LINALG_COUNT, "torch.linalg.lstsq: parameter `driver` should be one of ",
              "(gels, gelsy, gelsd, gelss)");
  int64_t m = A.size(-2), n = A.size(-1), k = B_.size(-1), rows = std::max(m, n);
  auto batch = broadcast_batch(A, B_);
  Tensor F = copy_f(expand_batch(A, batch));
  // The right-hand sides in max(m, n) rows: the solution comes back in the first n.
  Tensor X = empty_f(with_tail(batch, {rows, k}), A.options());
  if (rows > m) X.narrow(-2, m, rows - m).zero_();
  X.narrow(-2, 0, m).copy_(expand_batch(B_, batch));
  bool svd = op == AXON_LINALG_GELSD || op == AXON_LINALG_GELSS;
  Tensor sv =
      at::empty(svd ? with_tail(batch, {std::min(m, n)}) : std::vector<int64_t>{0}, A.options());
  Tensor ranks = at::empty(op == AXON_LINALG_GELS ? std::vector<int64_t>{0} : batch,
                           A.options().dtype(at::kLong));
  Tensor info = int_info(A, batch);
  axon_linalg_desc d{};
  d.batch = batch_of(X);
  d.m = m;
  d.n = n;
  d.k = k;
  d.a = mat(F);
  d.b = mat(X);
  d.v = svd ? ptr(sv) : nullptr;
  d.v_stride = std::min(m, n);
  d.info = ptr(info);
  d.out = op == AXON_LINALG_GELS ? nullptr : ptr(ranks);
  double eps = A.scalar_type() == at::kDouble ? std::numeric_limits<double>::epsilon()
                                              : std::numeric_limits<float>::epsilon();
  d.rcond = rcond.has_value() ? *rcond : eps * double(rows);
  run(A, op, d);
  if (op == AXON_LINALG_GELS) at::_linalg_check_errors(info, "torch.linalg.lstsq", A.dim() == 2);
  Tensor sol = X.narrow(-2, 0, n);
  if (vector) sol = sol.squeeze(-1);
  at::native::resize_output(solution, sol.sizes());
  solution.copy_(sol);
  // Residuals as PyTorch's CPU reports them: for m > n, not for gelsy, and for the SVD
  // drivers only when every matrix has full rank (one value read back, as there).
  bool with_residuals = m > n && op != AXON_LINALG_GELSY;
  if (with_residuals && svd) with_residuals = ranks.numel() == 0 || (ranks == n).all().item<bool>();
  if (with_residuals) {
    Tensor r = X.narrow(-2, n, m - n).square().sum(-2);
    at::native::resize_output(residuals, r.sizes());
    residuals.copy_(r);
  } else {
    at::native::resize_output(residuals, {0});
  }
  at::native::resize_output(rank, ranks.sizes());
  rank.copy_(ranks);
  at::native::resize_output(singular_values, sv.sizes());
  singular_values.copy_(sv);
  return {solution, residuals, rank, singular_values};
}

// ---- matrix exponential -------------------------------------------------------------------------

// exp(A) composed of native ops on every device: scaling and squaring around a degree-18
// Taylor polynomial. Each matrix is scaled by 2^-s so that its 1-norm is at most theta, the
// bound PyTorch's CPU kernel uses for its degree-18 approximant (so both square equally often
// and amplify rounding alike), where the Taylor tail is below the dtype's rounding; then it
// is squared s times. The largest s in the batch (one value read back) bounds the squaring
// loop; matrices that need fewer squarings keep their value.
Tensor matrix_exp(const Tensor& A) {
  at::native::squareCheckInputs(A, "linalg.matrix_exp");
  at::native::checkFloatingOrComplex(A, "linalg.matrix_exp");
  TORCH_CHECK_NOT_IMPLEMENTED(!A.is_complex(),
                              "linalg.matrix_exp: complex inputs are not supported on axon");
  int64_t n = A.size(-1);
  if (A.numel() == 0) return at::empty_like(A, at::MemoryFormat::Contiguous);
  if (n == 1) return A.exp();
  bool low = A.scalar_type() != at::kDouble && A.scalar_type() != at::kFloat;
  Tensor X = low ? A.to(at::kFloat) : A;
  const int degree = 18;
  double theta = X.scalar_type() == at::kDouble ? 1.090863719290036 : 3.010066362817634;
  Tensor s = (X.abs().sum(-2).amax(-1) / theta).log2().ceil().clamp_min(0).nan_to_num(0, 0, 0);
  X = X * at::exp2(-s).unsqueeze(-1).unsqueeze(-1);
  Tensor eye = at::eye(n, X.options());
  // Horner: I + X (I + X/2 (... (I + X/d))).
  Tensor E = eye + X / degree;
  for (int j = degree - 1; j >= 1; j--) E = eye + at::matmul(X, E) / j;
  int64_t squarings = static_cast<int64_t>(s.max().item<double>());
  Tensor left = s.unsqueeze(-1).unsqueeze(-1);
  for (int64_t i = 0; i < squarings; i++) E = at::where(left > i, at::matmul(E, E), E);
  return low ? E.to(A.scalar_type()) : E;
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("linalg_cholesky_ex.L", cholesky_ex_out);
  m.impl("cholesky", cholesky);
  m.impl("cholesky.out", cholesky_out);
  m.impl("_cholesky_solve_helper", cholesky_solve_helper);
  m.impl("cholesky_inverse", cholesky_inverse);
  m.impl("cholesky_inverse.out", cholesky_inverse_out);
  m.impl("linalg_lu_factor_ex.out", lu_factor_ex_out);
  m.impl("linalg_lu_solve.out", lu_solve_out);
  m.impl("lu_unpack.out", lu_unpack_out);
  m.impl("linalg_lu.out", lu_out);
  m.impl("_linalg_solve_ex.result", solve_ex_out);
  m.impl("linalg_inv_ex.inverse", inv_ex_out);
  m.impl("_linalg_det.result", det_out);
  m.impl("_linalg_slogdet.sign", slogdet_out);
  m.impl("linalg_solve_triangular", solve_triangular);
  m.impl("linalg_solve_triangular.out", solve_triangular_out);
  m.impl("triangular_solve.X", triangular_solve_out);
  m.impl("geqrf", geqrf);
  m.impl("geqrf.a", geqrf_out);
  m.impl("linalg_qr.out", qr_out);
  m.impl("linalg_householder_product", householder_product);
  m.impl("linalg_householder_product.out", householder_product_out);
  m.impl("ormqr", ormqr);
  m.impl("ormqr.out", ormqr_out);
  m.impl("_linalg_eigh.eigenvalues", eigh_out);
  m.impl("_linalg_svd.U", svd_out);
  m.impl("linalg_ldl_factor_ex.out", ldl_factor_ex_out);
  m.impl("linalg_ldl_solve.out", ldl_solve_out);
  m.impl("linalg_matrix_exp", matrix_exp);
  m.impl("linalg_lstsq.out", lstsq_out);

  // The functional forms of these structured ops reach Axon through PyTorch's generated
  // composite (meta function, outputs allocated, then the out= kernel above). Their meta
  // functions compare devices in words of their own, or allocate on the second tensor's device
  // and stop at an internal assertion ("structured kernels don't support multi-device outputs"),
  // before the out= kernel's check could run. Registered here, they run CUDA's device check
  // first (AXON_ATEN_IMPL), then the same composite.
  namespace composite = at::compositeexplicitautogradnonfunctional;
  m.impl("_linalg_solve_ex", composite::_linalg_solve_ex);
  m.impl("linalg_ldl_solve", composite::linalg_ldl_solve);
  m.impl("triangular_solve", composite::triangular_solve);
}

}  // namespace axon
