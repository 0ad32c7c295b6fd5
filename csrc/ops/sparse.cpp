// Sparse COO tensors on axon. A COO tensor is a pair of dense axon tensors (indices
// [sparse_dim, nnz] int64 and values [nnz, dense dims...]) inside PyTorch's SparseTensorImpl,
// so most of PyTorch's sparse code is device-generic and is registered here as it is (the
// SparseCPU and SparseCUDA keys share it). The device-specific parts are written here in
// dense axon ops, each of which runs as a kernel: coalescing (sort the linearised indices,
// sum duplicates with index_add), sparse + dense and sparse + sparse, products with scalars,
// dense tensors and sparse tensors, the sparse-dense matrix product (index_select of the dense
// rows, index_add into the result rows) and sparse_mask, which autograd needs for the
// gradient of the sparse operand. Sparse CSR matrices (2-d) are stored, converted to and from
// dense and COO, and read; arithmetic on them goes through COO. Any other sparse op raises an
// error naming it (docs/user-guide.md).
#include <ATen/NativeFunctions.h>
#include <ATen/native/Resize.h>
#include <ATen/native/SparseTensorUtils.h>
#include <torch/library.h>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Tensor;

// Row-major position of each entry among the sparse dimensions: [nnz] int64.
Tensor linear_positions(const Tensor& indices, at::IntArrayRef sparse_sizes) {
  Tensor position = indices.select(0, 0).clone();
  for (size_t d = 1; d < sparse_sizes.size(); d++)
    position.mul_(sparse_sizes[d]).add_(indices.select(0, static_cast<int64_t>(d)));
  return position;
}

// The inverse of linear_positions: [sparse_dim, n] indices.
Tensor indices_of_positions(Tensor position, at::IntArrayRef sparse_sizes) {
  std::vector<Tensor> rows(sparse_sizes.size());
  for (size_t d = sparse_sizes.size(); d-- > 0;) {
    rows[d] = position.remainder(sparse_sizes[d]);
    position = position.div(sparse_sizes[d], "floor");
  }
  return at::stack(rows);
}

Tensor make_coo(const Tensor& like, at::IntArrayRef sizes, const Tensor& indices,
                const Tensor& values, bool coalesced) {
  return at::_sparse_coo_tensor_with_dims_and_tensors(
      indices.size(0), values.dim() - 1, sizes, indices, values,
      values.options().layout(at::kSparse).device(like.device()), coalesced);
}

// Gives `out` (a sparse tensor) the contents of `result` without copying its storage.
Tensor& assign_sparse(Tensor& out, const Tensor& result) {
  TORCH_CHECK(out.is_sparse(), "axon: expected a sparse out tensor, got ", out.layout());
  out.sparse_resize_(result.sizes(), result.sparse_dim(), result.dense_dim());
  at::sparse::alias_into_sparse(out, result._indices(), result._values().to(out.scalar_type()));
  out._coalesced_(result.is_coalesced());
  return out;
}

// Entries in sorted order, duplicates summed: the unique linear positions (sorted) and each
// entry's place among them drive one index_add of the values.
Tensor coalesce(const Tensor& self) {
  const int64_t sparse_dim = self.sparse_dim();
  Tensor indices = self._indices(), values = self._values();
  if (self._nnz() < 2 || sparse_dim == 0)
    return make_coo(self, self.sizes(), indices.clone(), values.clone(), true);
  at::IntArrayRef sparse_sizes = self.sizes().slice(0, sparse_dim);
  auto [unique, inverse, counts] =
      at::_unique2(linear_positions(indices, sparse_sizes), /*sorted=*/true,
                   /*return_inverse=*/true, /*return_counts=*/false);
  std::vector<int64_t> summed_shape = values.sizes().vec();
  summed_shape[0] = unique.size(0);
  Tensor summed = values.scalar_type() == at::kBool
                      ? at::zeros(summed_shape, values.options().dtype(at::kByte))
                            .index_add_(0, inverse, values.to(at::kByte))
                            .ne(0)
                      : at::zeros(summed_shape, values.options()).index_add_(0, inverse, values);
  return make_coo(self, self.sizes(), indices_of_positions(unique, sparse_sizes), summed, true);
}

// The index tuple that addresses a COO tensor's entries in a dense tensor of its shape.
c10::List<std::optional<Tensor>> entry_index(const Tensor& sparse) {
  c10::List<std::optional<Tensor>> index;
  for (int64_t d = 0; d < sparse.sparse_dim(); d++) index.push_back(sparse._indices().select(0, d));
  return index;
}

void check_same_shape(const char* op, const Tensor& a, const Tensor& b) {
  TORCH_CHECK(a.sizes() == b.sizes(), op, ": sparse operands must have the same shape (no ",
              "broadcasting), got ", a.sizes(), " and ", b.sizes());
}

Tensor& add_out(const Tensor& self, const Tensor& other, const at::Scalar& alpha, Tensor& out) {
  TORCH_CHECK(other.is_sparse(), "add(sparse, dense) is not supported. Use add(dense, sparse) ",
              "instead.");
  check_same_shape("add", self, other);
  Tensor scaled = other._values().to(out.scalar_type());
  if (!(alpha.isIntegral(true) && alpha.toLong() == 1)) scaled = scaled.mul(alpha);
  if (!self.is_sparse()) {  // dense + sparse -> dense: scatter-add the entries
    TORCH_CHECK(!out.is_sparse(), "add: the sum of a dense and a sparse tensor is dense");
    if (!out.is_same(self)) {
      at::native::resize_output(out, self.sizes());
      out.copy_(self);
    }
    return out.index_put_(entry_index(other), scaled, /*accumulate=*/true);
  }
  TORCH_CHECK(self.sparse_dim() == other.sparse_dim() && self.dense_dim() == other.dense_dim(),
              "add: sparse tensors differ in sparse/dense dimensions");
  Tensor both = make_coo(self, self.sizes(), at::cat({self._indices(), other._indices()}, 1),
                         at::cat({self._values().to(out.scalar_type()), scaled}), false);
  return assign_sparse(out, coalesce(both));
}

// Sparse times a 0-d tensor, a dense tensor of the same shape, or another sparse tensor: the
// product keeps the sparse operand's entries (zero where the other operand has none).
Tensor& mul_out(const Tensor& self, const Tensor& other, Tensor& out) {
  const Tensor& sparse = self.is_sparse() ? self : other;
  const Tensor& factor = self.is_sparse() ? other : self;
  Tensor values = sparse._values();
  Tensor result_values;
  if (!factor.is_sparse() && factor.dim() == 0) {
    result_values = values.mul(factor);
  } else {
    check_same_shape("mul", sparse, factor);
    Tensor dense = factor.is_sparse() ? factor.to_dense() : factor;
    result_values = values.mul(dense.index(entry_index(sparse)));
  }
  return assign_sparse(out, make_coo(sparse, sparse.sizes(), sparse._indices().clone(),
                                     result_values, sparse.is_coalesced()));
}

// beta * self + alpha * (sparse @ dense): each entry (r, c, v) adds v * dense[c] to row r.
Tensor& addmm_out(const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                  const at::Scalar& beta, const at::Scalar& alpha, Tensor& out) {
  TORCH_CHECK(mat1.is_sparse() && !mat2.is_sparse() && mat1.sparse_dim() == 2 &&
                  mat1.dense_dim() == 0 && mat2.dim() == 2,
              "addmm: axon supports a 2-d sparse COO matrix times a dense matrix, got ",
              mat1.layout(), " ", mat1.sizes(), " and ", mat2.layout(), " ", mat2.sizes());
  TORCH_CHECK(!self.is_sparse() && !out.is_sparse(), "addmm: the sparse-dense product adds to a ",
              "dense tensor");
  TORCH_CHECK(mat1.size(1) == mat2.size(0), "addmm: shapes ", mat1.sizes(), " and ", mat2.sizes(),
              " cannot be multiplied");
  const int64_t m = mat1.size(0), n = mat2.size(1);
  Tensor base = self.expand({m, n});
  // beta 0 ignores self, NaN included, as the dense addmm does.
  Tensor result = beta.toComplexDouble() == 0.0 ? at::zeros({m, n}, mat2.options())
                                                : base.mul(beta).to(mat2.scalar_type());
  Tensor rows = mat1._indices().select(0, 0), cols = mat1._indices().select(0, 1);
  Tensor weights = mat1._values().to(mat2.scalar_type()).mul(alpha).unsqueeze(1);
  result.index_add_(0, rows, mat2.index_select(0, cols).mul(weights));
  at::native::resize_output(out, {m, n});
  out.copy_(result);
  return out;
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const at::Scalar& beta,
             const at::Scalar& alpha) {
  Tensor out = at::empty({0}, mat2.options());
  return addmm_out(self, mat1, mat2, beta, alpha, out);
}

Tensor& addmm_(Tensor& self, const Tensor& mat1, const Tensor& mat2, const at::Scalar& beta,
               const at::Scalar& alpha) {
  return addmm_out(self, mat1, mat2, beta, alpha, self);
}

// The entries of `self` (dense or sparse) at the positions of `mask`'s entries.
Tensor sparse_mask(const Tensor& self, const Tensor& mask) {
  check_same_shape("sparse_mask", self, mask);
  Tensor dense = self.is_sparse() ? self.to_dense() : self;
  return make_coo(mask, mask.sizes(), mask._indices().clone(),
                  dense.index(entry_index(mask)).to(self.scalar_type()), mask.is_coalesced());
}

// ---- CSR: stored and converted (2-d, no batch or dense dims); arithmetic goes through COO ----

// Row index of each entry: the number of row starts after the first at or before it.
Tensor csr_rows(const Tensor& crow, int64_t nnz) {
  return at::searchsorted(crow.narrow(0, 1, crow.size(0) - 1),
                          at::arange(nnz, crow.options().dtype(at::kLong)), /*out_int32=*/false,
                          /*right=*/true);
}

void check_plain_csr(const Tensor& self, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(
      self.layout() == at::kSparseCsr && self.dim() == 2 && self.dense_dim() == 0, op,
      ": axon supports 2-d sparse CSR matrices without batch or "
      "dense dimensions, got ",
      self.layout(), " ", self.sizes());
}

Tensor csr_to_coo(const Tensor& self, int64_t sparse_dim) {
  check_plain_csr(self, "to_sparse_coo");
  TORCH_CHECK(sparse_dim == 2, "to_sparse_coo: a CSR matrix converts to 2 sparse dims, got ",
              sparse_dim);
  Tensor crow = self.crow_indices(), col = self.col_indices();
  Tensor indices = at::stack({csr_rows(crow, col.size(0)), col.to(at::kLong)});
  return make_coo(self, self.sizes(), indices, self.values().clone(), /*coalesced=*/true);
}

Tensor csr_to_dense(const Tensor& self, std::optional<at::ScalarType> dtype,
                    std::optional<bool> /*masked_grad*/) {
  Tensor dense = csr_to_coo(self, 2).to_dense();
  return dtype ? dense.to(*dtype) : dense;
}

Tensor csr_to_sparse(const Tensor& self, std::optional<at::Layout> layout,
                     at::OptionalIntArrayRef blocksize, std::optional<int64_t> dense_dim) {
  TORCH_CHECK_NOT_IMPLEMENTED(!layout || *layout == at::kSparse || *layout == at::kSparseCsr,
                              "axon: sparse CSR converts to COO or CSR only, not ", *layout);
  return !layout || *layout == at::kSparse ? csr_to_coo(self, 2) : self;
}

// A dense matrix (or a COO one, coalesced: entries in row-major order) as CSR: the row
// starts are where each row's first entry would sort among the entries' rows.
Tensor to_csr(const Tensor& self, std::optional<int64_t> dense_dim) {
  TORCH_CHECK_NOT_IMPLEMENTED(self.dim() == 2 && (!dense_dim || *dense_dim == 0),
                              "to_sparse_csr: axon supports 2-d matrices without dense dims, got ",
                              self.sizes());
  Tensor coo = self.is_sparse() ? self.coalesce() : self.to_sparse();
  Tensor rows = coo._indices().select(0, 0).contiguous();
  Tensor crow = at::searchsorted(rows, at::arange(self.size(0) + 1, rows.options()));
  return at::_sparse_csr_tensor_unsafe(crow, coo._indices().select(0, 1).contiguous(),
                                       coo._values(), self.sizes(),
                                       coo._values().options().layout(at::kSparseCsr));
}

Tensor dense_to_csr(const Tensor& self, std::optional<int64_t> dense_dim) {
  return to_csr(self, dense_dim);
}

// The rest of PyTorch's sparse ops: an error that names the op, as the issue asks, instead of
// the dispatcher's list of backends.
void sparse_op_not_supported(const c10::OperatorHandle& op, torch::jit::Stack*) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "axon: ", op.schema().operator_name(),
                              " is not supported for sparse tensors on axon yet; convert with "
                              ".to_dense() first, or run it on the CPU");
}

}  // namespace

// PyTorch's device-generic sparse kernels (the functions SparseCPU and SparseCUDA share).
#define GENERIC(name, fn) m.impl(name, TORCH_FN(at::native::fn))
#define GENERIC_UNARY(op)         \
  GENERIC(#op, op##_sparse);      \
  GENERIC(#op "_", op##_sparse_); \
  GENERIC(#op ".out", op##_sparse_out)

TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  // Construction, metadata, copies and views.
  GENERIC("_sparse_coo_tensor_with_dims", new_with_dims_sparse);
  GENERIC("_sparse_coo_tensor_with_dims_and_tensors", new_with_dims_and_tensor_sparse_symint);
  GENERIC("empty.memory_format", empty_sparse_symint);
  GENERIC("empty_like", empty_like_sparse_coo);
  GENERIC("sparse_resize_", sparse_resize_);
  GENERIC("sparse_resize_and_clear_", sparse_resize_and_clear_);
  GENERIC("resize_as_sparse_", resize_as_sparse_);
  GENERIC("sparse_dim", sparse_dim_sparse);
  GENERIC("_dimI", sparse_dim_sparse);
  GENERIC("dense_dim", dense_dim_sparse);
  GENERIC("_dimV", dense_dim_sparse);
  GENERIC("_nnz", _nnz_sparse);
  GENERIC("is_coalesced", is_coalesced_sparse);
  GENERIC("_coalesced_", _coalesced_sparse_);
  GENERIC("_indices", _indices_sparse);
  GENERIC("_values", _values_sparse);
  GENERIC("indices", indices_sparse);
  GENERIC("values", values_sparse);
  GENERIC("copy_", copy_sparse_wrapper_);
  GENERIC("copy_sparse_to_sparse_", copy_sparse_);
  GENERIC("clone", clone_sparse);
  GENERIC("zero_", zero_sparse_);
  GENERIC("zeros.out", zeros_sparse_out);
  GENERIC("_to_dense", sparse_to_dense);
  GENERIC("permute", permute_sparse_coo);
  GENERIC("unsqueeze", unsqueeze_sparse);
  GENERIC("narrow_copy", narrow_copy_sparse);
  GENERIC("cat", cat_sparse);
  GENERIC("_sparse_broadcast_to", sparse_broadcast_to);
  // Elementwise: coalesce, then the dense op on the values.
  GENERIC_UNARY(abs);
  GENERIC_UNARY(sgn);
  GENERIC_UNARY(asin);
  GENERIC_UNARY(asinh);
  GENERIC_UNARY(atan);
  GENERIC_UNARY(atanh);
  GENERIC_UNARY(ceil);
  GENERIC_UNARY(erf);
  GENERIC_UNARY(erfinv);
  GENERIC_UNARY(expm1);
  GENERIC_UNARY(floor);
  GENERIC_UNARY(frac);
  GENERIC_UNARY(log1p);
  GENERIC_UNARY(rad2deg);
  GENERIC_UNARY(deg2rad);
  GENERIC_UNARY(round);
  GENERIC_UNARY(sin);
  GENERIC_UNARY(sinh);
  GENERIC_UNARY(sqrt);
  GENERIC_UNARY(tan);
  GENERIC_UNARY(tanh);
  GENERIC_UNARY(trunc);
  GENERIC_UNARY(sign);
  GENERIC_UNARY(nan_to_num);
  GENERIC("neg", neg_sparse);
  GENERIC("neg_", neg_sparse_);
  GENERIC("neg.out", neg_out_sparse);
  GENERIC("relu", relu_sparse);
  GENERIC("relu_", relu_sparse_);
  GENERIC("signbit", signbit_sparse);
  GENERIC("signbit.out", signbit_sparse_out);
  GENERIC("isnan", isnan_sparse);
  GENERIC("isinf", isinf_sparse);
  GENERIC("isposinf", isposinf_sparse);
  GENERIC("isposinf.out", isposinf_sparse_out);
  GENERIC("isneginf", isneginf_sparse);
  GENERIC("isneginf.out", isneginf_sparse_out);
  GENERIC("conj_physical.out", conj_physical_out_sparse);
  GENERIC("pow.Tensor_Scalar", pow_sparse_scalar);
  GENERIC("pow.Tensor_Scalar_out", pow_out_sparse_scalar);
  GENERIC("threshold_backward", threshold_backward_sparse);
  GENERIC("threshold_backward.grad_input", threshold_backward_sparse_out);
  // Arithmetic: PyTorch's wrappers promote and call the out forms below.
  GENERIC("add.Tensor", add_sparse);
  GENERIC("add_.Tensor", add_sparse_);
  GENERIC("sub.Tensor", sub_sparse);
  GENERIC("sub_.Tensor", sub_sparse_);
  GENERIC("sub.out", sub_out_sparse);
  GENERIC("mul.Tensor", mul_sparse);
  GENERIC("mul_.Tensor", mul_sparse_);
  m.impl("div.Tensor",
         static_cast<Tensor (*)(const Tensor&, const Tensor&)>(at::native::div_sparse));
  m.impl("div_.Tensor", static_cast<Tensor& (*)(Tensor&, const Tensor&)>(at::native::div_sparse_));
  m.impl("div.out", static_cast<Tensor& (*)(const Tensor&, const Tensor&, Tensor&)>(
                        at::native::div_out_sparse_zerodim));
  GENERIC("floor_divide", floor_divide_sparse);
  GENERIC("floor_divide_.Tensor", floor_divide_sparse_);
  GENERIC("floor_divide.out", floor_divide_out_sparse_zerodim);
  // Reductions and products.
  GENERIC("sum", sum_coo);
  GENERIC("sum.dim_IntList", sum_sparse_coo);
  GENERIC("any", any_sparse);
  GENERIC("norm.ScalarOpt_dim_dtype", sparse_dtype_norm);
  GENERIC("norm.ScalarOpt_dim", sparse_norm);
  m.impl("mm", static_cast<Tensor (*)(const Tensor&, const Tensor&)>(at::native::_sparse_mm));
  GENERIC("mm.out", _sparse_mm_out);
  GENERIC("mv", mv_sparse);
  // Axon's own: the parts PyTorch writes per device.
  m.impl("_coalesce", coalesce);
  m.impl("add.out", add_out);
  m.impl("mul.out", mul_out);
  m.impl("addmm.out", addmm_out);
  m.impl("addmm", addmm);
  m.impl("addmm_", addmm_);
  m.impl("sparse_mask", sparse_mask);
  m.impl("_to_sparse_csr", to_csr);
}

// Sparse CSR: PyTorch's accessors, Axon's conversions.
TORCH_LIBRARY_IMPL(aten, SparseCsrPrivateUse1, m) {
  GENERIC("crow_indices", crow_indices_sparse_csr);
  GENERIC("col_indices", col_indices_sparse_csr);
  GENERIC("ccol_indices", ccol_indices_sparse_csr);
  GENERIC("row_indices", row_indices_sparse_csr);
  GENERIC("values", values_sparse_csr);
  GENERIC("_nnz", _nnz_sparse_csr);
  GENERIC("sparse_dim", sparse_dim_sparse_csr);
  GENERIC("dense_dim", dense_dim_sparse_csr);
  GENERIC("clone", clone_sparse_compressed);
  m.impl("_to_dense", csr_to_dense);
  m.impl("_to_sparse.sparse_dim", csr_to_coo);
  m.impl("_to_sparse", csr_to_sparse);
}

// Dense to sparse: PyTorch's generic conversion (nonzero, then indexing), on the dense key;
// dense to CSR through it.
AXON_ATEN_IMPL(m) {
  m.impl("_to_sparse.sparse_dim",
         static_cast<Tensor (*)(const Tensor&, int64_t)>(at::native::dense_to_sparse));
  m.impl("_to_sparse",
         static_cast<Tensor (*)(const Tensor&, std::optional<at::Layout>, at::OptionalIntArrayRef,
                                std::optional<int64_t>)>(at::native::dense_to_sparse));
  m.impl("_to_sparse_csr", dense_to_csr);
}

TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&sparse_op_not_supported>());
}

TORCH_LIBRARY_IMPL(_, SparseCsrPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&sparse_op_not_supported>());
}

}  // namespace axon
