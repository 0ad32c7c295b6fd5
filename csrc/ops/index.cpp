// Indexing and data movement: cat, flip, roll, tril / triu, gather, scatter (all reductions),
// index_select, index_add, index_reduce, take / put_, index.Tensor, index_put_, masked_select,
// nonzero, searchsorted / bucketize, repeat_interleave. Only shapes, strides and bounds are
// decided here; every element moves in a runtime kernel (kernels/index.cl) or through other
// native ops (copy_, cumsum).
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/native/IndexingUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/unfold_native.h>
#include <torch/library.h>

#include <cmath>
#include <vector>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Scalar;
using at::Tensor;

// A 0-dim tensor as a 1-element 1-dim view (dim-wise kernels want a dim to work along).
Tensor at_least_1d(const Tensor& t) {
  return t.dim() == 0 ? t.reshape({1}) : t;
}

// Raises IndexError unless every index lies in [-size, size) (or [0, size) without negatives).
// Reads two numbers back (min and max), computed on the device.
void check_bounds(const Tensor& index, int64_t size, int64_t dim, bool allow_negative) {
  if (index.numel() == 0) return;
  Tensor mm = at::stack({index.min(), index.max()}).cpu();
  int64_t lo = mm[0].item<int64_t>(), hi = mm[1].item<int64_t>();
  int64_t bad = hi >= size ? hi : lo;
  TORCH_CHECK_INDEX(lo >= (allow_negative ? -size : 0) && hi < size, "index ", bad,
                    " is out of bounds for dimension ", dim, " with size ", size);
}

// The index as int64 on self's device. gather / scatter check its dtype in their meta
// functions (which let an empty index of any dtype through, as the CPU does); the other callers
// check it themselves with the CPU's message first.
Tensor long_index(const Tensor& index, const Tensor& self) {
  Tensor i = index.scalar_type() == at::kLong ? index : index.to(at::kLong);
  return i.device() == self.device() ? i : i.to(self.device());
}

// ---- gather, scatter ------------------------------------------------------------------------

// out[p] = src[p with p[dim] := index[p]]; out and index have one shape.
void gather_into(const Tensor& out, const Tensor& src, int64_t dim, const Tensor& index) {
  if (out.numel() == 0) return;
  c10::DeviceGuard guard(out.device());
  check_dtype_supported(src.scalar_type(), src.device().index());
  Tensor o = at_least_1d(out), s = at_least_1d(src), i = at_least_1d(index);
  TORCH_CHECK_NOT_IMPLEMENTED(o.dim() <= AXON_MAX_DIMS, "axon: gather supports at most ",
                              AXON_MAX_DIMS, " dims");
  axon_dim_desc d{};
  d.ndim = int(o.dim());
  for (int64_t k = 0; k < o.dim(); k++) {
    int64_t t = o.dim() - 1 - k;
    d.sizes[k] = o.size(t);
    d.strides[0][k] = o.stride(t);
    d.strides[1][k] = i.stride(t);
    d.strides[2][k] = t == dim ? 0 : s.stride(t);
  }
  d.dim_strides[2] = s.stride(dim);
  d.dim_size = s.size(dim);
  d.self = o.data_ptr();
  d.index = i.data_ptr();
  d.src = s.data_ptr();
  AXON_CHECK(axon_gather(stream_for(out), to_axon_dtype(src.scalar_type()), &d));
}

// self along dim (op)= src (or a scalar) at index, one line per position of index without dim.
void scatter_into(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src,
                  const Scalar& value, axon_scatter_mode mode, bool include_self,
                  double alpha = 1.0) {
  if (index.numel() == 0 || self.numel() == 0) return;
  c10::DeviceGuard guard(self.device());
  check_dtype_supported(self.scalar_type(), self.device().index());
  Tensor s = at_least_1d(self), i = at_least_1d(index);
  Tensor v = src ? at_least_1d(*src) : Tensor();
  if (v.defined() && v.scalar_type() != self.scalar_type()) v = v.to(self.scalar_type());
  TORCH_CHECK_NOT_IMPLEMENTED(s.dim() <= AXON_MAX_DIMS, "axon: scatter supports at most ",
                              AXON_MAX_DIMS, " dims");
  axon_dim_desc d{};
  for (int64_t t = s.dim() - 1; t >= 0; t--) {
    if (t == dim) continue;
    int k = d.ndim++;
    d.sizes[k] = i.size(t);
    d.strides[0][k] = s.stride(t);
    d.strides[1][k] = i.stride(t);
    d.strides[2][k] = v.defined() ? v.stride(t) : 0;
  }
  d.len = i.size(dim);
  d.dim_strides[0] = s.stride(dim);
  d.dim_strides[1] = i.stride(dim);
  d.dim_strides[2] = v.defined() ? v.stride(dim) : 0;
  d.dim_size = s.size(dim);
  d.self = s.data_ptr();
  d.index = i.data_ptr();
  d.src = v.defined() ? v.data_ptr() : nullptr;
  double dv = value.isBoolean() ? double(value.toBool()) : value.toDouble();
  int64_t iv = value.isFloatingPoint() ? int64_t(value.toDouble())
                                       : (value.isBoolean() ? value.toBool() : value.toLong());
  AXON_CHECK(axon_scatter(stream_for(self), to_axon_dtype(self.scalar_type()), &d, mode,
                          include_self, v.defined() ? 0 : 1, dv, iv, alpha));
}

Tensor& ax_gather_out(const Tensor& self, int64_t dim, const Tensor& index, bool /*sparse_grad*/,
                      Tensor& out) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(out.scalar_type() == self.scalar_type(),
              "gather(): Expected out tensor to have dtype ", self.scalar_type(), ", but got ",
              out.scalar_type(), " instead");
  Tensor idx = long_index(index, self);
  at::native::resize_output(out, index.sizes());
  check_bounds(idx, at_least_1d(self).size(dim), dim, false);
  gather_into(out, self, dim, idx);
  return out;
}

// Structured scatter ops: out starts as a copy of self.
void start_from_self(const Tensor& self, const Tensor& out) {
  if (out.is_same(self)) return;
  at::native::resize_output(out, self.sizes());
  out.copy_(self);
}

axon_scatter_mode mode_of(std::string_view reduce, bool two) {
  if (reduce == "sum" || reduce == "add") return AXON_SCATTER_SUM;
  if (reduce == "prod" || reduce == "multiply") return AXON_SCATTER_PROD;
  if (two && reduce == "amax") return AXON_SCATTER_AMAX;
  if (two && reduce == "amin") return AXON_SCATTER_AMIN;
  TORCH_CHECK(false, "reduce argument must be either ",
              two ? "sum, prod, mean, amax or amin" : "add or multiply", ", got ", reduce);
}

void scatter_common(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src,
                    const Scalar& value, axon_scatter_mode mode, bool include_self,
                    const Tensor& out) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  start_from_self(self, out);
  Tensor idx = long_index(index, self);
  check_bounds(idx, at_least_1d(self).size(dim), dim, false);
  scatter_into(out, dim, idx, src, value, mode, include_self);
}

Tensor& scatter_src_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        Tensor& out) {
  scatter_common(self, dim, index, &src, 0, AXON_SCATTER_ASSIGN, true, out);
  return out;
}
Tensor& scatter_value_out(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                          Tensor& out) {
  scatter_common(self, dim, index, nullptr, value, AXON_SCATTER_ASSIGN, true, out);
  return out;
}
Tensor& scatter_reduce_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                           std::string_view reduce, Tensor& out) {
  scatter_common(self, dim, index, &src, 0, mode_of(reduce, false), true, out);
  return out;
}
Tensor& scatter_value_reduce_out(const Tensor& self, int64_t dim, const Tensor& index,
                                 const Scalar& value, std::string_view reduce, Tensor& out) {
  scatter_common(self, dim, index, nullptr, value, mode_of(reduce, false), true, out);
  return out;
}
Tensor& scatter_add_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        Tensor& out) {
  scatter_common(self, dim, index, &src, 0, AXON_SCATTER_SUM, true, out);
  return out;
}

// scatter_reduce.two: mean is a sum divided by the count of contributions (plus one with
// include_self), counted by the same kernel; elements nothing reaches keep their value.
Tensor& scatter_reduce_two_out(const Tensor& self, int64_t dim, const Tensor& index,
                               const Tensor& src, std::string_view reduce, bool include_self,
                               Tensor& out) {
  if (reduce != "mean") {
    scatter_common(self, dim, index, &src, 0, mode_of(reduce, true), include_self, out);
    return out;
  }
  scatter_common(self, dim, index, &src, 0, AXON_SCATTER_SUM, include_self, out);
  int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  Tensor count = include_self ? at::ones_like(out) : at::zeros_like(out);
  scatter_into(count, d, long_index(index, self), nullptr, 1, AXON_SCATTER_SUM, true);
  count.masked_fill_(count.eq(0), 1);
  if (at::isFloatingType(out.scalar_type()))
    out.div_(count);
  else
    out.div_(count, "floor");
  return out;
}

// ---- index_select, index_add, index_copy, index_fill ------------------------------------------

// The 1-d index of a dim-wise op viewed along `dim` and expanded to `shape`.
Tensor index_along(const Tensor& index, int64_t dim, at::IntArrayRef shape) {
  std::vector<int64_t> view(shape.size(), 1);
  view[size_t(dim)] = index.numel();
  return index.reshape(view).expand(shape);
}

Tensor& ax_index_select_out(const Tensor& self, int64_t dim, const Tensor& index, Tensor& out) {
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  dim = c10::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(out.scalar_type() == self.scalar_type(),
              "index_select(): self and result must have the same scalar type");
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt,
              "index_select(): Expected dtype int32 or int64 for index");
  Tensor idx = long_index(index, self).reshape({-1});
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  if (self.dim() > 0) shape[size_t(dim)] = idx.numel();
  at::native::resize_output(out, shape);
  check_bounds(idx, at_least_1d(self).size(dim), dim, false);
  if (out.numel() == 0) return out;
  Tensor o = at_least_1d(out);
  gather_into(o, at_least_1d(self), dim, index_along(idx, dim, o.sizes()));
  return out;
}

Tensor ax_index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  Tensor out = at::empty({0}, self.options());
  return ax_index_select_out(self, dim, index, out);
}

Tensor& ax_index_add_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                         const Scalar& alpha, Tensor& out) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  start_from_self(self, out);
  Tensor idx = long_index(index, self).reshape({-1});
  Tensor o = at_least_1d(out), src = at_least_1d(source);
  check_bounds(idx, o.size(dim), dim, false);
  scatter_into(o, dim, index_along(idx, dim, src.sizes()), &src, 0, AXON_SCATTER_SUM, true,
               alpha.toDouble());
  return out;
}

Tensor& ax_index_copy_out(const Tensor& self, int64_t dim, const Tensor& index,
                          const Tensor& source, Tensor& out) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  start_from_self(self, out);
  Tensor idx = long_index(index, self).reshape({-1});
  Tensor o = at_least_1d(out), src = at_least_1d(source);
  check_bounds(idx, o.size(dim), dim, false);
  scatter_into(o, dim, index_along(idx, dim, src.sizes()), &src, 0, AXON_SCATTER_ASSIGN, true);
  return out;
}

Tensor& index_fill_scalar(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK_INDEX(index.scalar_type() == at::kLong,
                    "index_fill_(): Expected dtype int64 for index.");
  Tensor idx = long_index(index, self).reshape({-1});
  Tensor s = at_least_1d(self);
  check_bounds(idx, s.size(dim), dim, true);
  std::vector<int64_t> shape(s.sizes().begin(), s.sizes().end());
  shape[size_t(dim)] = idx.numel();
  if (value.isComplex()) {  // the kernel's scalar is real: a complex value goes as a filled source
    Tensor src = at::full(shape, value, s.options());
    scatter_into(s, dim, index_along(idx, dim, shape), &src, 0, AXON_SCATTER_ASSIGN, true);
    return self;
  }
  scatter_into(s, dim, index_along(idx, dim, shape), nullptr, value, AXON_SCATTER_ASSIGN, true);
  return self;
}

Tensor& index_fill_tensor(Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  TORCH_CHECK(value.dim() == 0,
              "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  return index_fill_scalar(self, dim, index, value.item());
}

// index_reduce: scatter_reduce's kernel over index_along's expanded index; mean divides by the
// count of contributions (plus one with include_self), floored for integers as on the CPU.
Tensor& ax_index_reduce_out(const Tensor& self, int64_t dim, const Tensor& index,
                            const Tensor& source, std::string_view reduce, bool include_self,
                            Tensor& out) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  start_from_self(self, out);
  Tensor idx = long_index(index, self).reshape({-1});
  Tensor o = at_least_1d(out), src = at_least_1d(source);
  check_bounds(idx, o.size(dim), dim, false);
  Tensor full = index_along(idx, dim, src.sizes());
  bool mean = reduce == "mean";
  scatter_into(o, dim, full, &src, 0, mean ? AXON_SCATTER_SUM : mode_of(reduce, true),
               include_self);
  if (!mean) return out;
  Tensor count = include_self ? at::ones_like(o) : at::zeros_like(o);
  scatter_into(count, dim, full, nullptr, 1, AXON_SCATTER_SUM, true);
  count.masked_fill_(count.eq(0), 1);
  if (at::isFloatingType(out.scalar_type()))
    o.div_(count);
  else
    o.div_(count, "floor");
  return out;
}

// ---- take, put_ ---------------------------------------------------------------------------------

// Indices into the flattened tensor lie in [-n, n) (the CPU's IndexError and message).
void check_flat_bounds(const Tensor& index, int64_t n) {
  if (index.numel() == 0) return;
  Tensor mm = at::stack({index.min(), index.max()}).cpu();
  int64_t lo = mm[0].item<int64_t>(), hi = mm[1].item<int64_t>();
  TORCH_CHECK_INDEX(lo >= -n && hi < n, "out of range: tried to access index ", hi >= n ? hi : lo,
                    " on a tensor of ", n, " elements.");
}

// take: a gather from the flattened tensor (negative indices wrap in the kernel).
Tensor& ax_take_out(const Tensor& self, const Tensor& index, Tensor& out) {
  TORCH_CHECK(index.scalar_type() == at::kLong,
              "take(): Expected a long tensor for index, but got ", index.scalar_type());
  TORCH_CHECK(self.scalar_type() == out.scalar_type(),
              "take(): self and out expected to have the same dtype, but got self.dtype = ",
              self.scalar_type(), " and out.dtype = ", out.scalar_type());
  TORCH_CHECK_INDEX(!(self.numel() == 0 && index.numel() != 0),
                    "take(): tried to take from an empty tensor");
  at::native::resize_output(out, index.sizes());
  if (index.numel() == 0) return out;
  Tensor idx = long_index(index, self).reshape({-1});
  check_flat_bounds(idx, self.numel());
  Tensor o = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
  gather_into(o.view({-1}), self.reshape({-1}), 0, idx);
  if (!o.is_same(out)) out.copy_(o);
  return out;
}

Tensor ax_take(const Tensor& self, const Tensor& index) {
  Tensor out = at::empty({0}, self.options());
  return ax_take_out(self, index, out);
}

// put_: one line over the flattened tensor, so repeated indices apply in order (the last write
// wins, or the values accumulate in order), as the CPU's loop does.
Tensor& ax_put_(Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  TORCH_CHECK(index.scalar_type() == at::kLong,
              "put_(): Expected a long tensor for index, but got ", index.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(),
              "put_(): self and source expected to have the same dtype, but got self.dtype = ",
              self.scalar_type(), " and source.dtype = ", source.scalar_type());
  TORCH_CHECK_INDEX(source.numel() == index.numel(),
                    "put_(): Expected source and index to have the same number of elements, but "
                    "got source.numel() = ",
                    source.numel(), ", index.numel() = ", index.numel());
  TORCH_CHECK_INDEX(!(self.numel() == 0 && index.numel() != 0),
                    "put_(): Tried to put elements into an empty tensor");
  at::assert_no_internal_overlap(self);
  if (index.numel() == 0) return self;
  Tensor idx = long_index(index, self).reshape({-1});
  check_flat_bounds(idx, self.numel());
  Tensor flat = self.is_contiguous() ? self.view({-1}) : self.contiguous().view({-1});
  Tensor src = source.reshape({-1});
  scatter_into(flat, 0, idx, &src, 0, accumulate ? AXON_SCATTER_SUM : AXON_SCATTER_ASSIGN, true);
  if (!self.is_contiguous()) self.copy_(flat.view(self.sizes()));
  return self;
}

// ---- advanced indexing -------------------------------------------------------------------------

// What AdvancedIndex computes (its constructor is not exported): self, possibly permuted so the
// indexed dims are adjacent, and one int64 index per dim (undefined for the others), all
// defined ones broadcast to one shape.
struct Adv {
  Tensor self;
  std::vector<Tensor> indices;
  int64_t before = 0, nidx = 0;
  std::vector<int64_t> bshape, result_shape;
};

Adv make_adv(const Tensor& self, const c10::List<std::optional<Tensor>>& orig) {
  at::native::checkIndexTensorTypes(orig, /*allow_int=*/true);
  TORCH_CHECK_INDEX(orig.size() <= size_t(self.dim()), "too many indices for tensor of dimension ",
                    self.dim(), " (got ", orig.size(), ")");
  auto indices = at::native::expandTensors(self, orig, /*ensure_same_device=*/true);
  try {
    indices = at::expand_outplace(indices);
  } catch (std::exception&) {
    TORCH_CHECK_INDEX(false, "shape mismatch: indexing tensors could not be broadcast together");
  }
  while (indices.size() < size_t(self.dim())) indices.emplace_back();
  Adv a;
  a.self = self;
  if (!at::native::hasContiguousSubspace(indices))
    std::tie(a.self, indices) = at::native::transposeToFront(self, indices);
  for (auto& i : indices) {
    if (!i.defined()) continue;
    if (i.scalar_type() != at::kLong) i = i.to(at::kLong);
    if (i.device() != self.device()) i = i.to(self.device());
  }
  a.indices = indices;
  bool seen = false;
  for (size_t d = 0; d < indices.size(); d++) {
    if (indices[d].defined()) {
      if (!seen) a.before = int64_t(d);
      seen = true;
      a.nidx++;
      a.bshape = indices[d].sizes().vec();
    }
  }
  TORCH_CHECK_INDEX(a.nidx > 0, "axon: index without index tensors");
  for (int64_t d = 0; d < a.before; d++) a.result_shape.push_back(a.self.size(d));
  for (int64_t s : a.bshape) a.result_shape.push_back(s);
  for (int64_t d = a.before + a.nidx; d < a.self.dim(); d++)
    a.result_shape.push_back(a.self.size(d));
  return a;
}

// The stacked [nidx, bnumel] indices, bounds-checked, and the descriptor with `other` (the
// result or the values, in result_shape).
axon_adv_desc adv_desc(const Adv& a, const Tensor& other, Tensor& stacked) {
  std::vector<Tensor> defined;
  for (const auto& i : a.indices)
    if (i.defined()) defined.push_back(i);
  stacked = at::stack(defined).contiguous();
  int64_t nb = int64_t(a.bshape.size());
  TORCH_CHECK_NOT_IMPLEMENTED(a.self.dim() - a.nidx <= AXON_MAX_DIMS && nb <= AXON_MAX_DIMS,
                              "axon: indexing supports at most ", AXON_MAX_DIMS, " dims");
  if (stacked.numel() > 0) {
    Tensor flat = stacked.reshape({a.nidx, -1});
    Tensor mm = at::stack({at::amin(flat, 1), at::amax(flat, 1)}).cpu();
    for (int64_t k = 0; k < a.nidx; k++) {
      int64_t size = a.self.size(a.before + k);
      int64_t lo = mm[0][k].item<int64_t>(), hi = mm[1][k].item<int64_t>();
      TORCH_CHECK_INDEX(lo >= -size && hi < size, "index ", hi >= size ? hi : lo,
                        " is out of bounds for dimension ", a.before + k, " with size ", size);
    }
  }
  axon_adv_desc d{};
  d.nidx = int(a.nidx);
  d.nb = int(nb);
  for (int64_t k = 0; k < nb; k++) {
    int64_t rd = a.before + nb - 1 - k;  // result dim of b dim (fastest first)
    d.b_sizes[k] = other.size(rd);
    d.b_other_strides[k] = other.stride(rd);
  }
  for (int64_t k = 0; k < a.nidx; k++) {
    d.idx_sizes[k] = a.self.size(a.before + k);
    d.idx_strides[k] = a.self.stride(a.before + k);
  }
  for (int64_t sd = a.self.dim() - 1; sd >= 0; sd--) {
    if (sd >= a.before && sd < a.before + a.nidx) continue;
    int64_t rd = sd < a.before ? sd : sd - a.nidx + nb;
    int k = d.nr++;
    d.r_sizes[k] = a.self.size(sd);
    d.r_self_strides[k] = a.self.stride(sd);
    d.r_other_strides[k] = other.stride(rd);
  }
  d.self = a.self.data_ptr();
  d.indices = stacked.data_ptr();
  d.other = other.data_ptr();
  return d;
}

Tensor& ax_index_out(const Tensor& self, const c10::List<std::optional<Tensor>>& indices,
                     Tensor& out) {
  c10::DeviceGuard guard(self.device());
  check_dtype_supported(self.scalar_type(), self.device().index());
  Adv a = make_adv(self, indices);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "index_out: self (", self.scalar_type(),
              ") and result (", out.scalar_type(), ") must have the same scalar type");
  at::native::resize_output(out, a.result_shape);
  Tensor o = out.is_non_overlapping_and_dense() ? out : at::empty(a.result_shape, out.options());
  Tensor stacked;
  axon_adv_desc d = adv_desc(a, o, stacked);
  if (o.numel() > 0)
    AXON_CHECK(axon_index(stream_for(self), to_axon_dtype(self.scalar_type()), &d));
  if (!o.is_same(out)) out.copy_(o);
  return out;
}

Tensor ax_index(const Tensor& self, const c10::List<std::optional<Tensor>>& indices) {
  Tensor out = at::empty({0}, self.options());
  return ax_index_out(self, indices, out);
}

Tensor& index_put_impl(Tensor& self, const c10::List<std::optional<Tensor>>& indices,
                       const Tensor& values, bool accumulate, bool /*unsafe*/) {
  c10::DeviceGuard guard(self.device());
  check_dtype_supported(self.scalar_type(), self.device().index());
  TORCH_CHECK(values.scalar_type() == self.scalar_type(),
              "Index put requires the source and destination "
              "dtypes match, got ",
              self.scalar_type(), " for the destination and ", values.scalar_type(),
              " for the source.");
  if (self.numel() == 0) return self;
  at::assert_no_internal_overlap(self);
  Adv a = make_adv(self, indices);
  Tensor v = values.device() == self.device() ? values : values.to(self.device());
  TORCH_CHECK_INDEX(at::is_expandable_to(v.sizes(), a.result_shape),
                    "shape mismatch: value tensor of shape ", v.sizes(),
                    " cannot be broadcast to indexing result of shape ",
                    at::IntArrayRef(a.result_shape));
  v = v.expand(a.result_shape);
  Tensor stacked;
  axon_adv_desc d = adv_desc(a, v, stacked);
  if (v.numel() > 0)
    AXON_CHECK(axon_index_put(stream_for(self), to_axon_dtype(self.scalar_type()), &d,
                              accumulate ? 1 : 0));
  return self;
}

// ---- nonzero, masked_select ---------------------------------------------------------------------

Tensor& ax_nonzero_out(const Tensor& self, Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kLong,
              "nonzero: Expected out tensor to have scalar type Long but got ", out.scalar_type());
  TORCH_CHECK_NOT_IMPLEMENTED(self.dim() <= AXON_MAX_DIMS, "axon: nonzero supports at most ",
                              AXON_MAX_DIMS, " dims");
  c10::DeviceGuard guard(self.device());
  int64_t ndim = self.dim();
  if (self.numel() == 0) {
    at::native::resize_output(out, {0, ndim});
    return out;
  }
  // Pass one: the inclusive count of nonzero elements in row-major order; its last entry sizes
  // the output (read back, as every nonzero must).
  Tensor pos = at::cumsum(self.ne(0).reshape({-1}), 0, at::kLong);
  int64_t count = pos[-1].item<int64_t>();
  at::native::resize_output(out, {count, ndim});
  if (count == 0 || ndim == 0) {
    if (count > 0) out.zero_();
    return out;
  }
  Tensor o = out.is_contiguous() ? out : at::empty({count, ndim}, out.options());
  axon_ew_desc d = make_ew_desc_same_shape(self, {self});
  d.data[0] = o.data_ptr();
  AXON_CHECK(
      axon_nonzero_write(stream_for(self), to_axon_dtype(self.scalar_type()), &d, pos.data_ptr()));
  if (!o.is_same(out)) out.copy_(o);
  return out;
}

Tensor ax_nonzero(const Tensor& self) {
  Tensor out = at::empty({0}, self.options().dtype(at::kLong));
  return ax_nonzero_out(self, out);
}

Tensor& ax_masked_select_out(const Tensor& self, const Tensor& mask, Tensor& out) {
  TORCH_CHECK(mask.scalar_type() == at::kBool || mask.scalar_type() == at::kByte,
              "masked_select: expected BoolTensor for mask");
  auto shape = at::infer_size_dimvector(self.sizes(), mask.sizes());
  // aten::index rejects a 0-dim mask on a 0-dim tensor; the result is 1-dim either way.
  if (shape.empty()) shape.push_back(1);
  Tensor m = mask.scalar_type() == at::kBool ? mask : mask.to(at::kBool);
  c10::List<std::optional<Tensor>> idx;
  idx.push_back(m.expand(shape));
  return ax_index_out(self.expand(shape), idx, out);
}

Tensor ax_masked_select(const Tensor& self, const Tensor& mask) {
  Tensor out = at::empty({0}, self.options());
  return ax_masked_select_out(self, mask, out);
}

// ---- cat, flip, roll, tril / triu --------------------------------------------------------------

Tensor& ax_cat_out(const at::ITensorListRef& tensors, int64_t dim, Tensor& out) {
  auto list = tensors.materialize();
  TORCH_CHECK(!list.empty(), "torch.cat(): expected a non-empty list of Tensors");
  // Legacy empty tensors (1-dim, size 0) are skipped when any other tensor has a shape.
  auto skipped = [](const Tensor& t) { return t.dim() == 1 && t.numel() == 0; };
  const Tensor* ref = nullptr;
  for (const Tensor& t : list)
    if (!skipped(t)) {
      ref = &t;
      break;
    }
  if (!ref) {
    at::native::resize_output(out, {0});
    return out;
  }
  TORCH_CHECK(ref->dim() > 0, "zero-dimensional tensor cannot be concatenated");
  int64_t d = c10::maybe_wrap_dim(dim, ref->dim());
  std::vector<int64_t> shape = ref->sizes().vec();
  shape[size_t(d)] = 0;
  for (const Tensor& t : list) {
    if (skipped(t)) continue;
    TORCH_CHECK(t.dim() == ref->dim(), "Tensors must have same number of dimensions: got ",
                ref->dim(), " and ", t.dim());
    for (int64_t k = 0; k < t.dim(); k++)
      TORCH_CHECK(k == d || t.size(k) == ref->size(k),
                  "Sizes of tensors must match except in dimension ", d, ". Expected size ",
                  ref->size(k), " but got size ", t.size(k), " for tensor number in the list.");
    shape[size_t(d)] += t.size(d);
  }
  at::native::resize_output(out, shape);
  if (out.numel() == 0) return out;
  int64_t offset = 0;
  for (const Tensor& t : list) {
    if (skipped(t)) continue;
    int64_t n = t.size(d);
    if (n > 0) out.narrow(d, offset, n).copy_(t);
    offset += n;
  }
  return out;
}

// A strided copy whose source walks the flipped dims backwards (negative strides, starting at
// their last element): the elementwise cast kernel does the copy.
Tensor ax_flip(const Tensor& self, at::IntArrayRef dims) {
  Tensor out = at::empty(self.sizes(), self.options());
  if (self.numel() == 0) return out;
  c10::DeviceGuard guard(self.device());
  auto mask = at::dim_list_to_bitset(dims, self.dim());
  axon_ew_desc d = make_ew_desc_same_shape(out, {self});
  const char* base = static_cast<const char*>(d.data[1]);
  int64_t item = int64_t(self.element_size());
  for (int64_t t = 0; t < self.dim(); t++) {
    if (!mask[size_t(t)] || self.size(t) <= 1) continue;
    int64_t k = self.dim() - 1 - t;
    base += (self.size(t) - 1) * self.stride(t) * item;
    d.strides[1][k] = -self.stride(t);
  }
  d.data[1] = base;
  axon_dtype type = to_axon_dtype(self.scalar_type());
  AXON_CHECK(axon_cast(stream_for(self), type, type, &d));
  return out;
}

Tensor ax_roll_one(const Tensor& t, int64_t shift, int64_t dim) {
  int64_t n = t.size(dim);
  Tensor out = at::empty(t.sizes(), t.options());
  if (n == 0 || t.numel() == 0) return out;
  int64_t s = ((shift % n) + n) % n;
  if (s == 0) return out.copy_(t);
  out.narrow(dim, s, n - s).copy_(t.narrow(dim, 0, n - s));
  out.narrow(dim, 0, s).copy_(t.narrow(dim, n - s, s));
  return out;
}

Tensor ax_roll(const Tensor& self, at::IntArrayRef shifts, at::IntArrayRef dims) {
  TORCH_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty()) {
    TORCH_CHECK(shifts.size() == 1, "shifts and dimensions must align. shifts: ", shifts.size(),
                ", dims:", dims.size());
    return ax_roll_one(self.reshape({-1}), shifts[0], 0).view(self.sizes());
  }
  TORCH_CHECK(shifts.size() == dims.size(),
              "shifts and dimensions must align. shifts: ", shifts.size(), ", dims:", dims.size());
  Tensor out = self;
  for (size_t i = 0; i < dims.size(); i++)
    out = ax_roll_one(out, shifts[i], c10::maybe_wrap_dim(dims[i], self.dim()));
  return out.is_same(self) ? self.clone() : out;
}

Tensor& tri_out(const Tensor& self, int64_t k, Tensor& out, bool lower) {
  c10::DeviceGuard guard(self.device());
  at::native::resize_output(out, self.sizes());
  if (self.numel() == 0) return out;
  TORCH_CHECK_NOT_IMPLEMENTED(self.dim() <= AXON_MAX_DIMS, "axon: at most ", AXON_MAX_DIMS,
                              " dims");
  Tensor src = self.scalar_type() == out.scalar_type() ? self : self.to(out.scalar_type());
  axon_ew_desc d = make_ew_desc_same_shape(out, {src});
  AXON_CHECK(axon_tri(stream_for(out), to_axon_dtype(out.scalar_type()), &d, k, lower ? 1 : 0));
  return out;
}

// ---- searchsorted, bucketize, repeat_interleave ---------------------------------------------

Tensor& ax_searchsorted_out(const Tensor& boundaries, const Tensor& self, bool out_int32,
                            bool right, std::optional<std::string_view> side,
                            const std::optional<Tensor>& sorter, Tensor& out) {
  c10::DeviceGuard guard(self.device());
  if (side.has_value()) {
    TORCH_CHECK(*side == "left" || *side == "right",
                "torch.searchsorted(): side can only be 'left' or 'right' but ", "got ", *side);
    TORCH_CHECK(!right || *side == "right",
                "torch.searchsorted(): side and right can't be set to opposites, got side "
                "of ",
                *side, " while right was True");
    right = *side == "right";
  }
  TORCH_CHECK(boundaries.dim() >= 1,
              "torch.searchsorted(): boundaries tensor should have positive dimension");
  TORCH_CHECK(
      boundaries.dim() == 1 || boundaries.sizes().slice(0, boundaries.dim() - 1) ==
                                   self.sizes().slice(0, std::max<int64_t>(self.dim() - 1, 0)),
      "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
      "of "
      "boundaries tensor and input value tensor must match, but we got boundaries tensor ",
      boundaries.sizes(), " and input value tensor ", self.sizes());
  at::ScalarType common = at::result_type(boundaries, self);
  Tensor b = boundaries.to(common).contiguous();
  Tensor v = self.to(common);
  Tensor s =
      sorter.has_value() && sorter->defined() ? sorter->to(at::kLong).contiguous() : Tensor();
  at::native::resize_output(out, self.sizes());
  TORCH_CHECK(out.scalar_type() == (out_int32 ? at::kInt : at::kLong),
              "torch.searchsorted(): output tensor's dtype ",
              "is wrong, it can only be Int(int32) or Long(int64) depending on whether out_int32 "
              "flag is True");
  if (out.numel() == 0) return out;
  int64_t n = b.size(-1);
  int64_t per_row = b.dim() == 1 ? v.numel() : std::max<int64_t>(v.dim() > 0 ? v.size(-1) : 1, 1);
  Tensor o = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
  axon_ew_desc d = make_ew_desc_same_shape(o, {v});
  AXON_CHECK(axon_searchsorted(stream_for(o), to_axon_dtype(common), &d,
                               n > 0 ? b.data_ptr() : nullptr, s.defined() ? s.data_ptr() : nullptr,
                               n, per_row, right ? 1 : 0, out_int32 ? 1 : 0));
  if (!o.is_same(out)) out.copy_(o);
  return out;
}

Tensor ax_searchsorted(const Tensor& boundaries, const Tensor& self, bool out_int32, bool right,
                       std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
  Tensor out = at::empty({0}, self.options().dtype(out_int32 ? at::kInt : at::kLong));
  return ax_searchsorted_out(boundaries, self, out_int32, right, side, sorter, out);
}

Tensor ax_searchsorted_scalar(const Tensor& boundaries, const Scalar& self, bool out_int32,
                              bool right, std::optional<std::string_view> side,
                              const std::optional<Tensor>& sorter) {
  Tensor v = at::scalar_tensor(self, boundaries.options().dtype(at::result_type(boundaries, self)));
  return ax_searchsorted(boundaries, v, out_int32, right, side, sorter);
}

Tensor& ax_bucketize_out(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right,
                         Tensor& out) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(",
              boundaries.dim(), ")");
  return ax_searchsorted_out(boundaries, self, out_int32, right, std::nullopt, std::nullopt, out);
}

Tensor ax_bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
  Tensor out = at::empty({0}, self.options().dtype(out_int32 ? at::kInt : at::kLong));
  return ax_bucketize_out(self, boundaries, out_int32, right, out);
}

Tensor ax_bucketize_scalar(const Scalar& self, const Tensor& boundaries, bool out_int32,
                           bool right) {
  Tensor v = at::scalar_tensor(self, boundaries.options().dtype(at::result_type(boundaries, self)));
  return ax_bucketize(v, boundaries, out_int32, right);
}

// Output position j belongs to the first i whose running total of repeats exceeds j.
Tensor ax_repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size) {
  TORCH_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  TORCH_CHECK(repeats.scalar_type() == at::kLong || repeats.scalar_type() == at::kInt,
              "repeats has to be Long or Int tensor");
  if (repeats.numel() == 0) return at::empty({0}, repeats.options());
  TORCH_CHECK(repeats.min().item<int64_t>() >= 0, "repeats can not be negative");
  Tensor total = at::cumsum(repeats, 0, repeats.scalar_type());
  int64_t n = output_size.has_value() ? *output_size : total[-1].item<int64_t>();
  Tensor positions = at::arange(n, repeats.options());
  return ax_searchsorted(total, positions, repeats.scalar_type() == at::kInt, true, std::nullopt,
                         std::nullopt);
}

// ---- masked_scatter ---------------------------------------------------------------------------

// The k-th masked element (row-major) takes source's k-th element: a running count of the
// mask picks the source element, where() keeps the rest (composed of native ops).
Tensor& ax_masked_scatter_(Tensor& self, const Tensor& mask, const Tensor& source) {
  TORCH_CHECK(mask.scalar_type() == at::kBool || mask.scalar_type() == at::kByte,
              "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(),
              "masked_scatter_: expected self and source to have same "
              "dtypes but got ",
              self.scalar_type(), " and ", source.scalar_type());
  if (self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  Tensor m = mask.to(at::kBool).expand(self.sizes()).contiguous();
  Tensor pos = at::cumsum(m.reshape({-1}), 0, at::kLong);
  int64_t count = pos[-1].item<int64_t>();
  TORCH_CHECK(count <= source.numel(), "masked_scatter: expected source to have at least ", count,
              " elements, got ", source.numel());
  if (count == 0) return self;
  Tensor picked =
      at::index_select(source.reshape({-1}), 0, pos.sub_(1).clamp_min_(0)).view(self.sizes());
  return self.copy_(at::where(m, picked, self));
}

// ---- histc --------------------------------------------------------------------------------------

Tensor& ax_histc_out(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max,
                     Tensor& out) {
  TORCH_CHECK(bins > 0, "torch.histc(): bins must be > 0, but got ", bins, " for dimension 0");
  // Integer input is accepted as CUDA accepts it (the CPU does not): transformers' mixture-of-
  // experts code passes int32 expert ids on every device but "cpu" and "mps".
  TORCH_CHECK(self.scalar_type() != at::kBool && !self.is_complex(),
              "torch.histc: input tensor must be floating point or integer, got ",
              self.scalar_type());
  TORCH_CHECK(out.scalar_type() == self.scalar_type(),
              "torch.histc: input tensor and hist tensor should have the "
              "same dtype, but got input ",
              self.scalar_type(), " and hist ", out.scalar_type());
  c10::DeviceGuard guard(self.device());
  bool integral = at::isIntegralType(self.scalar_type(), /*includeBool=*/false);
  // CUDA holds integer bounds as integers (a fractional bound truncates).
  double lo = integral ? double(min.toLong()) : min.toDouble();
  double hi = integral ? double(max.toLong()) : max.toDouble();
  if (lo == hi && self.numel() > 0) {  // the data's range (two numbers read back)
    Tensor mm = at::stack({self.min(), self.max()}).to(at::kDouble).cpu();
    lo = mm[0].item<double>();
    hi = mm[1].item<double>();
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  TORCH_CHECK(!(std::isinf(lo) || std::isinf(hi) || std::isnan(lo) || std::isnan(hi)),
              "torch.histc: range of [", lo, ", ", hi, "] is not finite");
  TORCH_CHECK(lo < hi, "torch.histc: max must be larger than min");
  Tensor counts = at::zeros({bins}, self.options().dtype(at::kInt));
  if (self.numel() > 0) {
    axon_ew_desc d = make_ew_desc_same_shape(self, {self}, true);
    d.data[0] = nullptr;
    AXON_CHECK(axon_histc(stream_for(self), to_axon_dtype(self.scalar_type()), &d,
                          counts.data_ptr(), bins, lo, hi));
  }
  at::native::resize_output(out, {bins});
  return out.copy_(counts);
}

Tensor ax_histc(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
  Tensor out = at::empty({0}, self.options());
  return ax_histc_out(self, bins, min, max, out);
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("gather.out", ax_gather_out);
  m.impl("scatter.src_out", scatter_src_out);
  m.impl("scatter.value_out", scatter_value_out);
  m.impl("scatter.reduce_out", scatter_reduce_out);
  m.impl("scatter.value_reduce_out", scatter_value_reduce_out);
  m.impl("scatter_add.out", scatter_add_out);
  m.impl("scatter_reduce.two_out", scatter_reduce_two_out);
  m.impl("index_select", ax_index_select);
  m.impl("index_select.out", ax_index_select_out);
  m.impl("index_add.out", ax_index_add_out);
  m.impl("index_copy.out", ax_index_copy_out);
  m.impl("index_fill_.int_Scalar", index_fill_scalar);
  m.impl("index_fill_.int_Tensor", index_fill_tensor);
  m.impl("index_reduce.out", ax_index_reduce_out);
  m.impl("take", ax_take);
  m.impl("take.out", ax_take_out);
  m.impl("put_", ax_put_);
  m.impl("index.Tensor", ax_index);
  m.impl("index.Tensor_out", ax_index_out);
  m.impl("_index_put_impl_", index_put_impl);
  m.impl("nonzero", ax_nonzero);
  m.impl("nonzero.out", ax_nonzero_out);
  m.impl("masked_select", ax_masked_select);
  m.impl("masked_select.out", ax_masked_select_out);
  m.impl("cat.out", ax_cat_out);
  m.impl("flip", ax_flip);
  m.impl("roll", ax_roll);
  m.impl("tril.out", [](const Tensor& s, int64_t k, Tensor& out) -> Tensor& {
    return tri_out(s, k, out, true);
  });
  m.impl("triu.out", [](const Tensor& s, int64_t k, Tensor& out) -> Tensor& {
    return tri_out(s, k, out, false);
  });
  m.impl("searchsorted.Tensor", ax_searchsorted);
  m.impl("searchsorted.Tensor_out", ax_searchsorted_out);
  m.impl("searchsorted.Scalar", ax_searchsorted_scalar);
  m.impl("bucketize.Tensor", ax_bucketize);
  m.impl("bucketize.Tensor_out", ax_bucketize_out);
  m.impl("bucketize.Scalar", ax_bucketize_scalar);
  m.impl("repeat_interleave.Tensor", ax_repeat_interleave);
  m.impl("masked_scatter_", ax_masked_scatter_);
  m.impl("histc", ax_histc);
  m.impl("histc.out", ax_histc_out);
  m.impl("unfold", at::native::unfold);  // a view (repeat uses it)
}

}  // namespace axon
