// Index-shaped ops composed of native axon ops (no kernels of their own): nonzero_static,
// unfold_backward, isin, histogram / histogramdd, segment_reduce. (max_unpool2d / 3d, a scatter
// too, are registered with the other pooling ops in ops/pool.cpp.) Shapes, checks
// and index arithmetic live here; the data moves through sort, searchsorted, gather, scatter and
// index_add on the device.
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <vector>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Scalar;
using at::Tensor;

// ---- nonzero_static -----------------------------------------------------------------------------

// The first `size` rows of nonzero(), padded with fill_value when there are fewer.
Tensor& ax_nonzero_static_out(const Tensor& self, int64_t size, int64_t fill_value, Tensor& out) {
  TORCH_CHECK(size >= 0, "nonzero_static: 'size' must be an non-negative integer");
  TORCH_CHECK(out.scalar_type() == at::kLong,
              "nonzero_static: Expected out tensor to have scalar type Long but got ",
              out.scalar_type());
  c10::DeviceGuard guard(self.device());
  int64_t ndim = self.dim();
  at::native::resize_output(out, {size, ndim});
  if (out.numel() == 0) return out;
  out.fill_(fill_value);
  Tensor nz = at::nonzero(self);
  int64_t n = std::min(size, nz.size(0));
  if (n > 0) out.narrow(0, 0, n).copy_(nz.narrow(0, 0, n));
  return out;
}

Tensor ax_nonzero_static(const Tensor& self, int64_t size, int64_t fill_value) {
  Tensor out = at::empty({0}, self.options().dtype(at::kLong));
  return ax_nonzero_static_out(self, size, fill_value, out);
}

// ---- unfold_backward ----------------------------------------------------------------------------

// Window w, element j of the unfolded dim came from input position w * step + j: the gradient is
// an index_add of the windows (moved next to dim and merged with it) at those positions.
Tensor ax_unfold_backward(const Tensor& grad_in, at::IntArrayRef input_sizes, int64_t dim,
                          int64_t size, int64_t step) {
  c10::DeviceGuard guard(grad_in.device());
  std::vector<int64_t> in_shape = input_sizes.empty() ? std::vector<int64_t>{1} : input_sizes.vec();
  int64_t d = c10::maybe_wrap_dim(dim, int64_t(in_shape.size()));
  int64_t nwin = (in_shape[size_t(d)] - size) / step + 1;
  std::vector<int64_t> g_shape = in_shape;
  g_shape[size_t(d)] = nwin;
  g_shape.push_back(size);
  Tensor out = at::zeros(in_shape, grad_in.options());
  if (grad_in.numel() > 0) {
    Tensor g = grad_in.reshape(g_shape).movedim(-1, d + 1);
    std::vector<int64_t> merged = in_shape;
    merged[size_t(d)] = nwin * size;
    g = g.reshape(merged);
    Tensor opts = at::empty({0}, grad_in.options().dtype(at::kLong));
    Tensor pos = at::arange(nwin, opts.options()).mul_(step).unsqueeze(1) +
                 at::arange(size, opts.options()).unsqueeze(0);
    out.index_add_(d, pos.reshape({-1}), g);
  }
  return out.reshape(input_sizes);
}

// ---- isin ---------------------------------------------------------------------------------------

// Each element's insertion point among the sorted test elements holds it if it is present.
void isin_into(const Tensor& elements, const Tensor& test_elements, bool invert, Tensor& out) {
  c10::DeviceGuard guard(elements.device());
  at::ScalarType common = at::result_type(elements, test_elements);
  at::native::resize_output(out, elements.sizes());
  if (out.numel() == 0) return;
  Tensor test = test_elements.to(elements.device(), common).reshape({-1});
  if (test.numel() == 0) {
    out.fill_(invert);
    return;
  }
  Tensor e = elements.to(common);
  Tensor sorted = std::get<0>(at::sort(test));
  Tensor pos = at::searchsorted(sorted, e).clamp_max_(test.numel() - 1);
  Tensor found = at::eq(at::take(sorted, pos), e);
  out.copy_(invert ? found.logical_not_() : found);
}

Tensor& ax_isin_tt_out(const Tensor& elements, const Tensor& test_elements, bool /*assume_unique*/,
                       bool invert, Tensor& out) {
  isin_into(elements, test_elements, invert, out);
  return out;
}

Tensor& ax_isin_ts_out(const Tensor& elements, const Scalar& test_element, bool /*assume_unique*/,
                       bool invert, Tensor& out) {
  at::native::resize_output(out, elements.sizes());
  if (invert)
    at::ne_out(out, elements, test_element);
  else
    at::eq_out(out, elements, test_element);
  return out;
}

Tensor& ax_isin_st_out(const Scalar& element, const Tensor& test_elements, bool /*assume_unique*/,
                       bool invert, Tensor& out) {
  Tensor e = at::scalar_tensor(
      element, test_elements.options().dtype(at::result_type(test_elements, element)));
  isin_into(e, test_elements, invert, out);
  return out;
}

// ---- histogram, histogramdd ---------------------------------------------------------------------

// Input [M, N] (N-dim points), one edge sequence per dim. A point lands in the bin whose left edge
// is the last one <= it (the rightmost bin includes its right edge); points outside the edges or
// NaN are skipped. The weights (or ones) are added in input order by index_add, as the CPU's loop
// does; density divides by the total and by each bin's widths.
Tensor histogramdd_hist(const Tensor& input, const std::vector<Tensor>& edges,
                        const std::optional<Tensor>& weight, bool density) {
  int64_t m = input.size(0), n = input.size(1);
  std::vector<int64_t> bins;
  int64_t total = 1;
  for (const Tensor& e : edges) {
    bins.push_back(e.numel() - 1);
    total *= e.numel() - 1;
  }
  Tensor hist = at::zeros({total}, input.options());
  if (m > 0 && total > 0) {
    Tensor flat = at::zeros({m}, input.options().dtype(at::kLong));
    Tensor keep = at::ones({m}, input.options().dtype(at::kBool));
    int64_t stride = total;
    for (int64_t d = 0; d < n; d++) {
      const Tensor& e = edges[size_t(d)];
      int64_t nb = bins[size_t(d)];
      stride /= nb;
      Tensor x = input.select(1, d);
      keep.logical_and_(x.ge(e.narrow(0, 0, 1))).logical_and_(x.le(e.narrow(0, nb, 1)));
      Tensor pos = at::searchsorted(e, x, false, true).sub_(1).clamp_(0, nb - 1);
      flat.add_(pos.mul_(stride));
    }
    Tensor w = weight.has_value() && weight->defined() ? weight->reshape({-1})
                                                       : at::ones({m}, input.options());
    hist.index_add_(0, flat, at::where(keep, w, at::zeros({}, w.options())));
  }
  hist = hist.view(bins);
  if (density) {
    hist.div_(hist.sum());
    for (int64_t d = 0; d < n; d++) {
      std::vector<int64_t> shape(size_t(n), 1);
      shape[size_t(d)] = bins[size_t(d)];
      hist.div_(at::diff(edges[size_t(d)]).view(shape));
    }
  }
  return hist;
}

void check_histogram_input(const Tensor& self, const std::optional<Tensor>& weight) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "\"histogramdd\" not implemented for '", self.scalar_type(), "'");
  if (weight.has_value() && weight->defined())
    TORCH_CHECK(weight->scalar_type() == self.scalar_type(),
                "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                "should have the same dtype, but got input(",
                self.scalar_type(), "), and weight(", weight->scalar_type(), ")");
}

// Evenly spaced edges per dim between the range (or the data's min and max, 2N numbers read
// back), an empty range widened by 0.5 each way; linspace runs on the device.
std::vector<Tensor> histogram_edges(const Tensor& self, at::IntArrayRef bin_ct,
                                    std::optional<at::ArrayRef<double>> range) {
  TORCH_CHECK(self.dim() >= 2, "torch.histogramdd: input tensor should have at least 2 dimensions");
  int64_t n = self.size(-1);
  Tensor points = self.reshape({-1, n});
  TORCH_CHECK(int64_t(bin_ct.size()) == n, "torch.histogramdd: expected ", n,
              " sequences of bin edges for a ", n, "-dimensional histogram but got ",
              bin_ct.size());
  std::vector<double> lo(size_t(n), 0.0), hi(size_t(n), 1.0);
  if (range.has_value()) {
    TORCH_CHECK(int64_t(range->size()) == 2 * n, "torch.histogramdd: for a ", n,
                "-dimensional histogram range should have ", 2 * n, " elements, but got ",
                range->size());
    for (int64_t d = 0; d < n; d++) {
      lo[size_t(d)] = (*range)[size_t(2 * d)];
      hi[size_t(d)] = (*range)[size_t(2 * d + 1)];
    }
  } else if (points.numel() > 0) {
    auto [mn, mx] = at::aminmax(points, 0);
    Tensor both = at::stack({mn, mx}).to(at::kDouble).cpu();
    for (int64_t d = 0; d < n; d++) {
      lo[size_t(d)] = both[0][d].item<double>();
      hi[size_t(d)] = both[1][d].item<double>();
    }
  }
  std::vector<Tensor> edges;
  for (int64_t d = 0; d < n; d++) {
    double l = lo[size_t(d)], h = hi[size_t(d)];
    TORCH_CHECK(std::isfinite(l) && std::isfinite(h), "torch.histogramdd: dimension ", d,
                "'s range [", l, ", ", h, "] is not finite");
    TORCH_CHECK(l <= h, "torch.histogramdd: min should not exceed max, but got", " min ", l,
                " max ", h, " for dimension ", d);
    if (l == h) {
      l -= 0.5;
      h += 0.5;
    }
    TORCH_CHECK(bin_ct[size_t(d)] > 0, "torch.histogram(): bins must be > 0, but got ",
                bin_ct[size_t(d)], " for dimension ", d);
    edges.push_back(at::linspace(l, h, bin_ct[size_t(d)] + 1, self.options()));
  }
  return edges;
}

std::vector<Tensor> ax_histogramdd_bin_edges(const Tensor& self, at::IntArrayRef bins,
                                             std::optional<at::ArrayRef<double>> range,
                                             const std::optional<Tensor>& weight,
                                             bool /*density*/) {
  c10::DeviceGuard guard(self.device());
  check_histogram_input(self, weight);
  return histogram_edges(self, bins, range);
}

Tensor ax_histogramdd_from_bin_cts(const Tensor& self, at::IntArrayRef bins,
                                   std::optional<at::ArrayRef<double>> range,
                                   const std::optional<Tensor>& weight, bool density) {
  c10::DeviceGuard guard(self.device());
  check_histogram_input(self, weight);
  std::vector<Tensor> edges = histogram_edges(self, bins, range);
  return histogramdd_hist(self.reshape({-1, self.size(-1)}), edges, weight, density);
}

Tensor ax_histogramdd_from_bin_tensors(const Tensor& self, at::TensorList bins,
                                       const std::optional<Tensor>& weight, bool density) {
  c10::DeviceGuard guard(self.device());
  check_histogram_input(self, weight);
  TORCH_CHECK(self.dim() >= 2, "torch.histogramdd: input tensor should have at least 2 dimensions");
  int64_t n = self.size(-1);
  TORCH_CHECK(int64_t(bins.size()) == n, "torch.histogramdd: expected ", n,
              " sequences of bin edges for a ", n, "-dimensional histogram but got ", bins.size());
  std::vector<Tensor> edges;
  for (int64_t d = 0; d < n; d++) {
    const Tensor& b = bins[size_t(d)];
    TORCH_CHECK(b.scalar_type() == self.scalar_type(),
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                "got input with dtype ",
                self.scalar_type(), " and bins for dimension ", d, " with dtype ", b.scalar_type());
    TORCH_CHECK(b.dim() == 1, "torch.histogramdd: bins tensor should have one dimension, but got ",
                b.dim(), " dimensions in the bins tensor for dimension ", d);
    TORCH_CHECK(b.numel() > 0,
                "torch.histogramdd: bins tensor should have at least 1 element, "
                "but got ",
                b.numel(), " elements in the bins tensor for dimension ", d);
    edges.push_back(b.contiguous());
  }
  return histogramdd_hist(self.reshape({-1, n}), edges, weight, density);
}

std::tuple<Tensor&, Tensor&> histogram_bins_tensor_out(const Tensor& self, const Tensor& bins,
                                                       const std::optional<Tensor>& weight,
                                                       bool density, Tensor& hist,
                                                       Tensor& bin_edges) {
  Tensor w = weight.has_value() && weight->defined() ? weight->reshape({-1}) : Tensor();
  Tensor h = ax_histogramdd_from_bin_tensors(self.reshape({-1, 1}), {bins}, w, density);
  at::native::resize_output(hist, h.sizes());
  hist.copy_(h);
  at::native::resize_output(bin_edges, bins.sizes());
  bin_edges.copy_(bins);
  return {hist, bin_edges};
}

std::tuple<Tensor, Tensor> histogram_bins_tensor(const Tensor& self, const Tensor& bins,
                                                 const std::optional<Tensor>& weight,
                                                 bool density) {
  Tensor hist = at::empty({0}, self.options()), edges = at::empty({0}, self.options());
  histogram_bins_tensor_out(self, bins, weight, density, hist, edges);
  return {hist, edges};
}

std::tuple<Tensor&, Tensor&> histogram_bin_ct_out(const Tensor& self, int64_t bins,
                                                  std::optional<at::ArrayRef<double>> range,
                                                  const std::optional<Tensor>& weight, bool density,
                                                  Tensor& hist, Tensor& bin_edges) {
  c10::DeviceGuard guard(self.device());
  check_histogram_input(self, weight);
  Tensor points = self.reshape({-1, 1});
  Tensor edges = histogram_edges(points, {bins}, range)[0];
  Tensor w = weight.has_value() && weight->defined() ? weight->reshape({-1}) : Tensor();
  Tensor h = histogramdd_hist(points, {edges}, w, density);
  at::native::resize_output(hist, h.sizes());
  hist.copy_(h);
  at::native::resize_output(bin_edges, edges.sizes());
  bin_edges.copy_(edges);
  return {hist, bin_edges};
}

std::tuple<Tensor, Tensor> histogram_bin_ct(const Tensor& self, int64_t bins,
                                            std::optional<at::ArrayRef<double>> range,
                                            const std::optional<Tensor>& weight, bool density) {
  Tensor hist = at::empty({0}, self.options()), edges = at::empty({0}, self.options());
  histogram_bin_ct_out(self, bins, range, weight, density, hist, edges);
  return {hist, edges};
}

// ---- segment_reduce -----------------------------------------------------------------------------

// Segments along `axis` from lengths or offsets ([batch..., S] or [batch..., S + 1], batch being
// data's dims before axis). seg (data's shape, expanded) is each element's segment; elements no
// segment covers (before the first offset or past the last) get the extra segment S, which the
// callers drop. counts [batch..., S] are the segment lengths.
struct Segments {
  Tensor seg, counts;
  int64_t axis = 0, nseg = 0;
};

Segments make_segments(const Tensor& data, const std::optional<Tensor>& lengths,
                       const std::optional<Tensor>& offsets, int64_t axis) {
  bool has_len = lengths.has_value() && lengths->defined();
  bool has_off = offsets.has_value() && offsets->defined();
  TORCH_CHECK(has_len || has_off, "segment_reduce(): Either lengths or offsets must be defined");
  Segments s;
  s.axis = c10::maybe_wrap_dim(axis, data.dim());
  Tensor ends, starts;
  if (has_len) {
    Tensor l = lengths->to(data.device(), at::kLong);
    TORCH_CHECK(l.dim() == s.axis + 1, "segment_reduce(): Expected lengths to have ", s.axis + 1,
                " dims, got ", l.dim());
    s.counts = l;
    ends = at::cumsum(l, -1);
  } else {
    Tensor o = offsets->to(data.device(), at::kLong);
    TORCH_CHECK(o.dim() == s.axis + 1, "segment_reduce(): Expected offsets to have ", s.axis + 1,
                " dims, got ", o.dim());
    int64_t k = o.size(-1) - 1;
    s.counts = o.narrow(-1, 1, k) - o.narrow(-1, 0, k);
    ends = o.narrow(-1, 1, k).contiguous();
    starts = o.narrow(-1, 0, 1);
  }
  s.nseg = s.counts.size(-1);
  int64_t n = data.size(s.axis);
  std::vector<int64_t> bshape(data.sizes().begin(), data.sizes().begin() + s.axis);
  bshape.push_back(n);
  Tensor pos = at::arange(n, ends.options()).expand(bshape).contiguous();
  Tensor seg = at::searchsorted(ends.contiguous(), pos, false, true);
  if (starts.defined()) seg.masked_fill_(pos.lt(starts), s.nseg);
  seg.clamp_max_(s.nseg);
  std::vector<int64_t> view = bshape;
  for (int64_t d = s.axis + 1; d < data.dim(); d++) view.push_back(1);
  s.seg = seg.view(view).expand(data.sizes());
  return s;
}

// data's shape with `k` along the axis.
std::vector<int64_t> with_axis(const Tensor& data, int64_t axis, int64_t k) {
  std::vector<int64_t> shape = data.sizes().vec();
  shape[size_t(axis)] = k;
  return shape;
}

// counts [batch..., S] viewed to broadcast against data-shaped [.., S, ..] tensors.
Tensor counts_view(const Segments& s, const Tensor& data, at::ScalarType type) {
  std::vector<int64_t> view = s.counts.sizes().vec();
  for (int64_t d = s.axis + 1; d < data.dim(); d++) view.push_back(1);
  return s.counts.to(type).view(view);
}

// Per-segment values (S along the axis) with a zero extra segment, gathered to data's shape.
Tensor per_element(const Tensor& v, const Segments& s) {
  std::vector<int64_t> shape = v.sizes().vec();
  shape[size_t(s.axis)] = 1;
  Tensor padded = at::cat({v, at::zeros(shape, v.options())}, s.axis);
  return padded.gather(s.axis, s.seg);
}

Tensor ax_segment_reduce(const Tensor& data, std::string_view reduce,
                         const std::optional<Tensor>& lengths,
                         const std::optional<Tensor>& /*indices*/,
                         const std::optional<Tensor>& offsets, int64_t axis, bool /*unsafe*/,
                         const std::optional<Scalar>& initial) {
  TORCH_CHECK(
      reduce == "max" || reduce == "min" || reduce == "sum" || reduce == "mean" || reduce == "prod",
      "segment_reduce(): reduction ", reduce, " is not supported");
  TORCH_CHECK(data.numel() >= 0, "segment_reduce(): empty data");
  c10::DeviceGuard guard(data.device());
  Segments s = make_segments(data, lengths, offsets, axis);
  bool floating = at::isFloatingType(data.scalar_type());
  double inf = std::numeric_limits<double>::infinity();
  Scalar init = initial.has_value() ? *initial
                : reduce == "prod"  ? Scalar(1)
                : reduce == "max"   ? Scalar(floating ? -inf : double(INT64_MIN))
                : reduce == "min"   ? Scalar(floating ? inf : double(INT64_MAX))
                                    : Scalar(0);
  const char* how = reduce == "max"    ? "amax"
                    : reduce == "min"  ? "amin"
                    : reduce == "prod" ? "prod"
                                       : "sum";
  Tensor out = at::full(with_axis(data, s.axis, s.nseg + 1), init, data.options());
  out.scatter_reduce_(s.axis, s.seg, data, how, true);
  out = out.narrow(s.axis, 0, s.nseg);
  if (reduce == "mean") {
    Tensor count = counts_view(s, data, data.scalar_type());
    Tensor mean = out.div(count);
    out = initial.has_value() ? at::where(count.eq(0), out, mean) : mean;
  }
  return out.contiguous();
}

// Gradients: sum passes the segment's gradient on, mean divides it by the length, max / min
// give it to the elements equal to the result (shared equally when positive), prod gives grad * out
// / x (with one zero in the segment only the zero gets grad * the product of the others; with more,
// none).
Tensor ax_segment_reduce_backward(const Tensor& grad, const Tensor& output, const Tensor& data,
                                  std::string_view reduce, const std::optional<Tensor>& lengths,
                                  const std::optional<Tensor>& offsets, int64_t axis,
                                  const std::optional<Scalar>& initial) {
  c10::DeviceGuard guard(data.device());
  Segments s = make_segments(data, lengths, offsets, axis);
  Tensor g = per_element(grad.contiguous(), s);
  Tensor zero = at::zeros({}, data.options());
  if (reduce == "sum") return g;
  if (reduce == "mean") {
    Tensor count = per_element(counts_view(s, data, data.scalar_type()).expand(grad.sizes()), s);
    return g.div(count.clamp_min_(1));
  }
  Tensor out = per_element(output.contiguous(), s);
  std::vector<int64_t> shape = with_axis(data, s.axis, s.nseg + 1);
  if (reduce == "max" || reduce == "min") {
    // As on the CPU: NaN elements count as hits, and only positive gradients are shared.
    Tensor hit = data.eq(out).logical_or_(data.isnan());
    Tensor ties =
        at::zeros(shape, data.options()).scatter_add_(s.axis, s.seg, hit.to(data.scalar_type()));
    return at::where(hit, at::where(g.gt(0), g.div(ties.gather(s.axis, s.seg)), g), zero);
  }
  TORCH_CHECK(reduce == "prod", "segment_reduce(): reduction ", reduce, " is not supported");
  Tensor is_zero = data.eq(0);
  Tensor zeros = at::zeros(shape, data.options())
                     .scatter_add_(s.axis, s.seg, is_zero.to(data.scalar_type()))
                     .gather(s.axis, s.seg);
  Tensor others = at::full(shape, initial.has_value() ? *initial : Scalar(1), data.options())
                      .scatter_reduce_(s.axis, s.seg, at::where(is_zero, 1, data), "prod", true)
                      .gather(s.axis, s.seg);
  Tensor at_zero = at::where(zeros.eq(1), g.mul(others), zero);
  Tensor elsewhere = at::where(zeros.eq(0), g.mul(out).div(data), zero);
  return at::where(is_zero, at_zero, elsewhere);
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("nonzero_static", ax_nonzero_static);
  m.impl("nonzero_static.out", ax_nonzero_static_out);
  m.impl("unfold_backward", ax_unfold_backward);
  m.impl("isin.Tensor_Tensor_out", ax_isin_tt_out);
  m.impl("isin.Tensor_Scalar_out", ax_isin_ts_out);
  m.impl("isin.Scalar_Tensor_out", ax_isin_st_out);
  m.impl("histogram.bins_tensor", histogram_bins_tensor);
  m.impl("histogram.bins_tensor_out", histogram_bins_tensor_out);
  m.impl("histogram.bin_ct", histogram_bin_ct);
  m.impl("histogram.bin_ct_out", histogram_bin_ct_out);
  m.impl("_histogramdd_bin_edges", ax_histogramdd_bin_edges);
  m.impl("_histogramdd_from_bin_cts", ax_histogramdd_from_bin_cts);
  m.impl("_histogramdd_from_bin_tensors", ax_histogramdd_from_bin_tensors);
  m.impl("segment_reduce", ax_segment_reduce);
  m.impl("_segment_reduce_backward", ax_segment_reduce_backward);
}

}  // namespace axon
