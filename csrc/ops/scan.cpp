// Scans, sorting and selection along a dim: cumsum, cumprod, cummax / cummin, logcumsumexp, sort,
// topk, unique, median / nanmedian (from the sort), kthvalue and mode (selection kernels). Layout
// decisions here; the scans, the sort and the selections run in kernels/scan.cl, unique is
// composed of native ops (sort, ne, nonzero, index_select, scatter).
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <cmath>
#include <utility>
#include <vector>

#include "axon_glue.h"

extern "C" {
#include "axon/select.h"
}

namespace axon {
namespace {

using at::Tensor;

// Lines over every dim except `dim` (fastest first); 0-dim tensors are one line of one.
axon_scan_desc scan_desc(const Tensor& in, const Tensor& out, int64_t dim) {
  Tensor i = in.dim() == 0 ? in.reshape({1}) : in;
  Tensor o = out.dim() == 0 ? out.reshape({1}) : out;
  TORCH_CHECK_NOT_IMPLEMENTED(i.dim() <= AXON_MAX_DIMS, "axon: scans support at most ",
                              AXON_MAX_DIMS, " dims");
  axon_scan_desc d{};
  for (int64_t t = i.dim() - 1; t >= 0; t--) {
    if (t == dim) continue;
    int k = d.ndim++;
    d.sizes[k] = i.size(t);
    d.in_strides[k] = i.stride(t);
    d.out_strides[k] = o.stride(t);
  }
  d.n = i.size(dim);
  d.in_dim_stride = i.stride(dim);
  d.out_dim_stride = o.stride(dim);
  d.in = i.data_ptr();
  d.out = o.data_ptr();
  return d;
}

void scan_into(const Tensor& in, const Tensor& out, const Tensor* indices, int64_t dim,
               axon_scan_op op) {
  check_same_device(in, out);
  if (indices) check_same_device(in, *indices);
  if (out.numel() == 0) return;
  c10::DeviceGuard guard(in.device());
  check_dtype_supported(in.scalar_type(), in.device().index());
  axon_scan_desc d = scan_desc(in, out, dim);
  if (indices) {
    TORCH_INTERNAL_ASSERT(indices->strides() == out.strides());
    d.out_index = indices->data_ptr();
  }
  AXON_CHECK(axon_scan(stream_for(in), to_axon_dtype(in.scalar_type()), op, &d));
}

Tensor& cum_out(const Tensor& self, int64_t dim, const Tensor& out, axon_scan_op op) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  at::native::resize_output(out, self.sizes());
  // A 0-dim scan is its element, as PyTorch defines it for every device: the kernel would start
  // from the op's identity and lose a zero's sign (logcumsumexp(-0.0) is -0.0, not 0.0).
  if (self.dim() == 0) return const_cast<Tensor&>(out).copy_(self);
  Tensor in = self.scalar_type() == out.scalar_type() ? self : self.to(out.scalar_type());
  if (in.is_complex() && op == AXON_SCAN_SUM) {  // the parts' running sums, apart
    auto parts = [](const Tensor& t) { return at::view_as_real(t.dim() ? t : t.reshape({1})); };
    scan_into(parts(in.resolve_conj()), parts(out), nullptr, dim, op);
    return const_cast<Tensor&>(out);
  }
  if (in.is_complex() && op == AXON_SCAN_PROD) {  // running products of magnitudes, sums of angles
    Tensor magnitude = at::cumprod(in.abs(), dim), angle = at::cumsum(in.angle(), dim);
    const_cast<Tensor&>(out).copy_(at::polar(magnitude, angle));
    return const_cast<Tensor&>(out);
  }
  scan_into(in, out, nullptr, dim, op);
  return const_cast<Tensor&>(out);
}

// cummax / cummin: values and indices with one layout.
void cum_extreme(const Tensor& self, Tensor& values, Tensor& indices, int64_t dim,
                 axon_scan_op op) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  at::native::resize_output(values, self.sizes());
  at::native::resize_output(indices, self.sizes());
  if (self.numel() == 0) return;
  bool direct = values.is_contiguous() && indices.is_contiguous() &&
                values.scalar_type() == self.scalar_type();
  Tensor v = direct ? values : at::empty(self.sizes(), self.options());
  Tensor i = direct ? indices : at::empty(self.sizes(), self.options().dtype(at::kLong));
  scan_into(self, v, &i, dim, op);
  if (!direct) {
    values.copy_(v);
    indices.copy_(i);
  }
}

Tensor ax_logcumsumexp(const Tensor& self, int64_t dim) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "logcumsumexp: not implemented for '", self.scalar_type(), "'");
  Tensor out = at::empty(self.sizes(), self.options());
  return cum_out(self, dim, out, AXON_SCAN_LOGSUMEXP);
}

Tensor& ax_logcumsumexp_out(const Tensor& self, int64_t dim, Tensor& out) {
  Tensor r = ax_logcumsumexp(self, dim);
  at::native::resize_output(out, r.sizes());
  return out.copy_(r);
}

// ---- sort, topk ---------------------------------------------------------------------------------

void sort_into(const Tensor& self, int64_t dim, bool descending, Tensor& values, Tensor& indices) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  at::native::resize_output(values, self.sizes());
  at::native::resize_output(indices, self.sizes());
  if (self.numel() == 0) return;
  c10::DeviceGuard guard(self.device());
  check_dtype_supported(self.scalar_type(), self.device().index());
  bool direct = values.strides() == indices.strides() &&
                values.scalar_type() == self.scalar_type() && values.is_non_overlapping_and_dense();
  Tensor v = direct ? values : at::empty(self.sizes(), self.options());
  Tensor i = direct ? indices : at::empty(self.sizes(), self.options().dtype(at::kLong));
  axon_scan_desc d = scan_desc(self, v, dim);
  d.out_index = i.data_ptr();
  AXON_CHECK(
      axon_sort(stream_for(self), to_axon_dtype(self.scalar_type()), &d, descending ? 1 : 0));
  if (!direct) {
    values.copy_(v);
    indices.copy_(i);
  }
}

std::tuple<Tensor&, Tensor&> ax_sort_stable_out(const Tensor& self, std::optional<bool> /*stable*/,
                                                int64_t dim, bool descending, Tensor& values,
                                                Tensor& indices) {
  sort_into(self, dim, descending, values, indices);
  return {values, indices};
}

std::tuple<Tensor&, Tensor&> ax_topk_out(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                         bool /*sorted*/, Tensor& values, Tensor& indices) {
  int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  int64_t n = self.dim() == 0 ? 1 : self.size(d);
  TORCH_CHECK(k >= 0 && k <= n, "selected index k out of range");
  Tensor sv = at::empty({0}, self.options()), si = at::empty({0}, self.options().dtype(at::kLong));
  sort_into(self, d, largest, sv, si);
  std::vector<int64_t> shape = self.sizes().vec();
  if (self.dim() > 0) shape[size_t(d)] = k;
  at::native::resize_output(values, shape);
  at::native::resize_output(indices, shape);
  if (self.dim() == 0) {
    if (k > 0) {
      values.copy_(sv);
      indices.copy_(si);
    }
  } else if (k > 0) {
    values.copy_(sv.narrow(d, 0, k));
    indices.copy_(si.narrow(d, 0, k));
  }
  return {values, indices};
}

// ---- median, nanmedian, kthvalue, mode ----------------------------------------------------------

// The reduced shape of self along dim (0-dim stays 0-dim).
std::vector<int64_t> reduced_shape(const Tensor& self, int64_t dim, bool keepdim) {
  std::vector<int64_t> shape = self.sizes().vec();
  if (self.dim() == 0) return shape;
  if (keepdim)
    shape[size_t(dim)] = 1;
  else
    shape.erase(shape.begin() + dim);
  return shape;
}

// A reduction over an empty dim has no value (an IndexError, as on the CPU).
void check_reduction_dim(const Tensor& self, int64_t dim, const char* name) {
  TORCH_CHECK_INDEX(self.dim() == 0 || self.size(dim) > 0, name, "(): Expected reduction dim ", dim,
                    " to have non-zero size.");
}

// The CPU's nanmedian leaves NaNs unordered among themselves, so for a line of n NaNs it
// answers the position the C++ library's nth_element (introselect) leaves first when every
// element is equivalent: a function of n alone (its swaps depend on no value).
int64_t all_nan_position(int64_t n) {
  std::vector<int64_t> at(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) at[size_t(i)] = i;
  int64_t last = n;
  while (last > 3) {
    std::swap(at[0], at[size_t(last / 2)]);  // the median of three is the middle one
    int64_t lo = 1, hi = last;
    while (--hi > lo) std::swap(at[size_t(lo++)], at[size_t(hi)]);
    last = lo;  // the partition point; position 0 lies before it
  }
  return at[0];
}

// The CPU orders a line by (value, position) with NaN last, so the median is the stable sort's
// entry (n - 1) / 2; torch.median returns a line's first NaN instead (the stable sort's first
// NaN entry), torch.nanmedian the median of the numbers ((n - nans - 1) / 2, truncated).
void median_into(const Tensor& self, int64_t dim, bool keepdim, bool ignore_nan, Tensor& values,
                 Tensor& indices) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  int64_t n = self.dim() > 0 ? self.size(dim) : 1;
  check_reduction_dim(self, dim, "median");
  TORCH_CHECK(indices.scalar_type() == at::kLong, "median(): Expected tensor for argument #1 ",
              "'indices' to have scalar type Long; but got ", indices.scalar_type(), " instead");
  TORCH_CHECK(values.scalar_type() == self.scalar_type(),
              "median(): Expected tensor for argument #1 'values' to have the same type as "
              "tensor for argument #2 'self'; but type ",
              values.scalar_type(), " does not equal ", self.scalar_type());
  std::vector<int64_t> shape = reduced_shape(self, dim, keepdim);
  at::native::resize_output(values, shape);
  at::native::resize_output(indices, shape);
  if (values.numel() == 0) return;
  c10::DeviceGuard guard(self.device());
  Tensor in = self.dim() == 0 ? self.reshape({1}) : self;
  Tensor sv = at::empty({0}, self.options()), si = at::empty({0}, self.options().dtype(at::kLong));
  sort_into(in, dim, false, sv, si);
  std::vector<int64_t> line_shape = in.sizes().vec();
  line_shape[size_t(dim)] = 1;
  Tensor pos, all_nan;
  if (at::isFloatingType(self.scalar_type())) {
    Tensor nans = at::isnan(in).sum(dim, true, at::kLong);
    if (ignore_nan) {
      pos = nans.neg().add_(n - 1).div_(2, "trunc");
      all_nan = nans.eq(n);
    } else {
      pos = at::where(nans.gt(0), nans.neg().add_(n), (n - 1) / 2);
    }
  } else {
    pos = at::full(line_shape, (n - 1) / 2, si.options());
  }
  Tensor index = si.gather(dim, pos);
  if (all_nan.defined()) index.masked_fill_(all_nan, all_nan_position(n));
  values.copy_(sv.gather(dim, pos).view(shape));
  indices.copy_(index.view(shape));
}

std::tuple<Tensor&, Tensor&> ax_median_dim_out(const Tensor& self, int64_t dim, bool keepdim,
                                               Tensor& values, Tensor& indices) {
  median_into(self, dim, keepdim, false, values, indices);
  return {values, indices};
}

std::tuple<Tensor&, Tensor&> ax_nanmedian_dim_out(const Tensor& self, int64_t dim, bool keepdim,
                                                  Tensor& values, Tensor& indices) {
  median_into(self, dim, keepdim, true, values, indices);
  return {values, indices};
}

Tensor median_all(const Tensor& self, bool ignore_nan) {
  // The CPU answers NaN (converted to the dtype) for an empty tensor.
  if (self.numel() == 0) return at::full({}, std::nan(""), self.options());
  Tensor values = at::empty({0}, self.options());
  Tensor indices = at::empty({0}, self.options().dtype(at::kLong));
  median_into(self.reshape({-1}), 0, false, ignore_nan, values, indices);
  return values;
}

Tensor& median_all_out(const Tensor& self, Tensor& out, bool ignore_nan) {
  Tensor r = median_all(self, ignore_nan);
  at::native::resize_output(out, {});
  return out.copy_(r);
}

// kthvalue and mode: one value and index per line from the selection kernels (axon/select.h),
// written through a keepdim-shaped view of contiguous outputs.
void select_into(const Tensor& self, int64_t dim, bool keepdim, int64_t k, Tensor& values,
                 Tensor& indices) {
  std::vector<int64_t> shape = reduced_shape(self, dim, keepdim);
  at::native::resize_output(values, shape);
  at::native::resize_output(indices, shape);
  if (values.numel() == 0) return;
  c10::DeviceGuard guard(self.device());
  check_dtype_supported(self.scalar_type(), self.device().index());
  Tensor in = self.dim() == 0 ? self.reshape({1}) : self;
  std::vector<int64_t> line_shape = in.sizes().vec();
  line_shape[size_t(dim)] = 1;
  Tensor v = at::empty(line_shape, self.options());
  Tensor i = at::empty(line_shape, self.options().dtype(at::kLong));
  axon_scan_desc d = scan_desc(in, v, dim);
  d.out_index = i.data_ptr();
  axon_dtype type = to_axon_dtype(self.scalar_type());
  if (k >= 0)
    AXON_CHECK(axon_kthvalue(stream_for(self), type, &d, k));
  else
    AXON_CHECK(axon_mode(stream_for(self), type, &d));
  values.copy_(v.view(shape));
  indices.copy_(i.view(shape));
}

std::tuple<Tensor&, Tensor&> ax_kthvalue_out(const Tensor& self, int64_t k, int64_t dim,
                                             bool keepdim, Tensor& values, Tensor& indices) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  check_reduction_dim(self, dim, "kthvalue");
  TORCH_CHECK(k > 0 && k <= (self.dim() > 0 ? self.size(dim) : 1),
              "kthvalue(): selected number k out of range for dimension ", dim);
  TORCH_CHECK(values.scalar_type() == self.scalar_type(),
              "output values must be of same type as input");
  TORCH_CHECK(indices.scalar_type() == at::kLong, "output indices must be of scalar type Long");
  select_into(self, dim, keepdim, k - 1, values, indices);
  return {values, indices};
}

std::tuple<Tensor&, Tensor&> ax_mode_out(const Tensor& self, int64_t dim, bool keepdim,
                                         Tensor& values, Tensor& indices) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  check_reduction_dim(self, dim, "mode");
  TORCH_CHECK(values.scalar_type() == self.scalar_type(),
              "mode(): expected values tensor to have the same dtype as self");
  TORCH_CHECK(indices.scalar_type() == at::kLong, "mode(): expected indices tensor to be Long");
  select_into(self, dim, keepdim, -1, values, indices);
  return {values, indices};
}

std::tuple<Tensor, Tensor> ax_mode(const Tensor& self, int64_t dim, bool keepdim) {
  Tensor values = at::empty({0}, self.options());
  Tensor indices = at::empty({0}, self.options().dtype(at::kLong));
  ax_mode_out(self, dim, keepdim, values, indices);
  return {values, indices};
}

// ---- unique
// ----------------------------------------------------------------------------------------

// Sorted input (flat): group starts where a value differs from its predecessor.
Tensor group_flags(const Tensor& sorted) {
  int64_t n = sorted.numel();
  Tensor flags = at::empty({n}, sorted.options().dtype(at::kBool));
  flags.narrow(0, 0, 1).fill_(true);
  if (n > 1) {
    Tensor rest = flags.narrow(0, 1, n - 1);
    at::ne_out(rest, sorted.narrow(0, 1, n - 1), sorted.narrow(0, 0, n - 1));
  }
  return flags;
}

// Unique values of a flat sorted tensor, the group of each element, and the group sizes.
std::tuple<Tensor, Tensor, Tensor> unique_sorted_flat(const Tensor& sorted, bool need_groups,
                                                      bool need_counts) {
  int64_t n = sorted.numel();
  Tensor flags = group_flags(sorted);
  Tensor starts = at::nonzero(flags).reshape({-1});
  Tensor values = at::index_select(sorted, 0, starts);
  Tensor groups, counts;
  if (need_groups) groups = at::cumsum(flags, 0, at::kLong).sub_(1);
  if (need_counts) {
    Tensor ends = at::empty_like(starts);
    int64_t g = starts.numel();
    if (g > 1) ends.narrow(0, 0, g - 1).copy_(starts.narrow(0, 1, g - 1));
    ends.narrow(0, g - 1, 1).fill_(n);
    counts = ends.sub_(starts);
  }
  return {values, groups, counts};
}

std::tuple<Tensor, Tensor, Tensor> ax_unique2(const Tensor& self, bool /*sorted*/,
                                              bool return_inverse, bool return_counts) {
  c10::DeviceGuard guard(self.device());
  Tensor flat = self.reshape({-1});
  Tensor inverse = at::empty(return_inverse ? self.sizes() : at::IntArrayRef{0},
                             self.options().dtype(at::kLong));
  if (flat.numel() == 0) {
    Tensor counts = at::empty({0}, self.options().dtype(at::kLong));
    return {at::empty({0}, self.options()), inverse, counts};
  }
  Tensor sv = at::empty({0}, self.options()),
         perm = at::empty({0}, self.options().dtype(at::kLong));
  sort_into(flat, 0, false, sv, perm);
  auto [values, groups, counts] = unique_sorted_flat(sv, return_inverse, return_counts);
  if (return_inverse) inverse.reshape({-1}).scatter_(0, perm, groups);
  if (!return_counts) counts = at::empty({0}, self.options().dtype(at::kLong));
  return {values, inverse, counts};
}

std::tuple<Tensor, Tensor, Tensor> ax_unique_consecutive(const Tensor& self, bool return_inverse,
                                                         bool return_counts,
                                                         std::optional<int64_t> dim) {
  c10::DeviceGuard guard(self.device());
  if (dim.has_value() && self.dim() > 1) {
    // Slices along dim: rows [n, rest]; a row starts a group when any element differs.
    int64_t d = c10::maybe_wrap_dim(*dim, self.dim());
    Tensor moved = self.movedim(d, 0);
    int64_t n = moved.size(0);
    Tensor rows = moved.reshape({n, -1});
    Tensor flags = at::empty({n}, self.options().dtype(at::kBool));
    if (n > 0) flags.narrow(0, 0, 1).fill_(true);
    if (n > 1) {
      Tensor rest = flags.narrow(0, 1, n - 1);
      at::any_out(rest, at::ne(rows.narrow(0, 1, n - 1), rows.narrow(0, 0, n - 1)), 1);
    }
    Tensor starts = at::nonzero(flags).reshape({-1});
    std::vector<int64_t> shape = moved.sizes().vec();
    shape[0] = starts.numel();
    Tensor values = at::index_select(moved, 0, starts).reshape(shape).movedim(0, d).contiguous();
    Tensor inverse = return_inverse ? at::cumsum(flags, 0, at::kLong).sub_(1)
                                    : at::empty({0}, self.options().dtype(at::kLong));
    Tensor counts = at::empty({0}, self.options().dtype(at::kLong));
    if (return_counts && starts.numel() > 0) {
      int64_t g = starts.numel();
      Tensor ends = at::empty_like(starts);
      if (g > 1) ends.narrow(0, 0, g - 1).copy_(starts.narrow(0, 1, g - 1));
      ends.narrow(0, g - 1, 1).fill_(n);
      counts = ends.sub_(starts);
    }
    return {values, inverse, counts};
  }
  Tensor flat = self.reshape({-1});
  Tensor inverse = at::empty(return_inverse ? self.sizes() : at::IntArrayRef{0},
                             self.options().dtype(at::kLong));
  if (flat.numel() == 0)
    return {at::empty({0}, self.options()), inverse,
            at::empty({0}, self.options().dtype(at::kLong))};
  auto [values, groups, counts] = unique_sorted_flat(flat, return_inverse, return_counts);
  if (return_inverse) inverse = groups.reshape(self.sizes());
  if (!return_counts) counts = at::empty({0}, self.options().dtype(at::kLong));
  return {values, inverse, counts};
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("cumsum.out",
         [](const Tensor& s, int64_t dim, std::optional<at::ScalarType>, Tensor& out) -> Tensor& {
           return cum_out(s, dim, out, AXON_SCAN_SUM);
         });
  m.impl("cumprod.out",
         [](const Tensor& s, int64_t dim, std::optional<at::ScalarType>, Tensor& out) -> Tensor& {
           return cum_out(s, dim, out, AXON_SCAN_PROD);
         });
  m.impl("_cummax_helper", [](const Tensor& s, Tensor& values, Tensor& indices, int64_t dim) {
    cum_extreme(s, values, indices, dim, AXON_SCAN_MAX);
  });
  m.impl("_cummin_helper", [](const Tensor& s, Tensor& values, Tensor& indices, int64_t dim) {
    cum_extreme(s, values, indices, dim, AXON_SCAN_MIN);
  });
  m.impl("_logcumsumexp", ax_logcumsumexp);
  m.impl("_logcumsumexp.out", ax_logcumsumexp_out);
  m.impl("sort.values_stable", ax_sort_stable_out);
  m.impl("topk.values", ax_topk_out);
  m.impl("median.dim_values", ax_median_dim_out);
  m.impl("nanmedian.dim_values", ax_nanmedian_dim_out);
  m.impl("median", [](const Tensor& s) { return median_all(s, false); });
  m.impl("nanmedian", [](const Tensor& s) { return median_all(s, true); });
  m.impl("median.out",
         [](const Tensor& s, Tensor& out) -> Tensor& { return median_all_out(s, out, false); });
  m.impl("nanmedian.out",
         [](const Tensor& s, Tensor& out) -> Tensor& { return median_all_out(s, out, true); });
  m.impl("kthvalue.values", ax_kthvalue_out);
  m.impl("mode", ax_mode);
  m.impl("mode.values", ax_mode_out);
  m.impl("_unique2", ax_unique2);
  // index_fill's gradient for a tensor value selects at _unique(index, sorted=False); the
  // CPU's order for sorted=False is unspecified, sorted order is one of its choices.
  m.impl("_unique", [](const Tensor& s, bool sorted, bool return_inverse) {
    auto [values, inverse, counts] = ax_unique2(s, sorted, return_inverse, false);
    return std::make_tuple(values, inverse);
  });
  m.impl("unique_consecutive", ax_unique_consecutive);
}

}  // namespace axon
