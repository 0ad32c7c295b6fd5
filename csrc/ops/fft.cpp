// Discrete Fourier transforms. torch.fft's functions (fft, ifft, rfft, irfft, fftn, hfft, stft
// ...) reduce to three ops: complex to complex, real to complex and complex to real, each over
// a list of dims. Every dim is a batch of 1-D transforms along the last axis of a contiguous
// copy (runtime/src/ops/fft.c: radix-2 for powers of two, Bluestein for other lengths);
// normalisation is a multiply afterwards.
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <cmath>

#include "axon/fft.h"
#include "axon_glue.h"

namespace axon {
namespace {

using at::Tensor;

// Unnormalised 1-D transforms of complex `x` along `dim`.
Tensor transform_along(const Tensor& x, int64_t dim, bool inverse) {
  Tensor rows = x.movedim(dim, -1).contiguous();
  Tensor out = at::empty_like(rows);
  int64_t n = rows.size(-1);
  if (rows.numel() > 0) {
    int64_t batch = rows.numel() / n;
    Tensor scratch = at::empty({axon_fft_scratch_elements(batch, n)}, rows.options());
    axon_fft_desc d{};
    d.batch = batch;
    d.n = n;
    d.inverse = inverse;
    d.in = rows.data_ptr();
    d.out = out.data_ptr();
    d.scratch = scratch.data_ptr();
    AXON_CHECK(axon_fft(stream_for(rows), to_axon_dtype(rows.scalar_type()), &d));
  }
  return out.movedim(-1, dim);
}

// PyTorch's normalisation modes: 0 none, 1 by 1 / sqrt(n), 2 by 1 / n, n the number of
// elements of one signal (the product of the transformed sizes).
Tensor normalized(Tensor t, int64_t mode, double signal_numel) {
  if (mode == 1) t.mul_(1.0 / std::sqrt(signal_numel));
  if (mode == 2) t.mul_(1.0 / signal_numel);
  return t;
}

// The input as its values are: conjugate and negative bits resolved, on a supported dtype.
Tensor prepared(const Tensor& self, const char* op) {
  c10::DeviceGuard guard(self.device());
  check_dtype_supported(self.scalar_type(), self.device().index());
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kComplexHalf, "axon: ", op,
                              " of complex32 is not supported");
  return self.resolve_conj().resolve_neg();
}

Tensor fft_c2c(const Tensor& self, at::IntArrayRef dim, int64_t normalization, bool forward) {
  TORCH_CHECK(self.is_complex(), "_fft_c2c expects a complex input, got ", self.scalar_type());
  c10::DeviceGuard guard(self.device());
  Tensor out = prepared(self, "fft");
  double numel = 1;
  for (int64_t d : dim) {
    int64_t w = c10::maybe_wrap_dim(d, self.dim());
    out = transform_along(out, w, !forward);
    numel *= double(self.size(w));
  }
  if (dim.empty()) out = out.clone();
  return normalized(out, normalization, numel);
}

Tensor fft_r2c(const Tensor& self, at::IntArrayRef dim, int64_t normalization, bool onesided) {
  TORCH_CHECK(self.is_floating_point(), "_fft_r2c expects a real input, got ", self.scalar_type());
  TORCH_CHECK(!dim.empty(), "_fft_r2c: no dims to transform");
  c10::DeviceGuard guard(self.device());
  Tensor x = prepared(self, "rfft").to(c10::toComplexType(self.scalar_type()));
  Tensor out = fft_c2c(x, dim, normalization, /*forward=*/true);
  if (!onesided) return out;
  int64_t last = c10::maybe_wrap_dim(dim.back(), self.dim());
  return out.narrow(last, 0, self.size(last) / 2 + 1);
}

// The inverse of a one-sided spectrum along dim.back() (its first last_dim_size / 2 + 1 terms
// are read), full along the others: a real result of size last_dim_size there.
Tensor fft_c2r(const Tensor& self, at::IntArrayRef dim, int64_t normalization,
               int64_t last_dim_size) {
  TORCH_CHECK(self.is_complex(), "_fft_c2r expects a complex input, got ", self.scalar_type());
  TORCH_CHECK(!dim.empty() && last_dim_size >= 1, "_fft_c2r: bad dims or output size");
  c10::DeviceGuard guard(self.device());
  int64_t last = c10::maybe_wrap_dim(dim.back(), self.dim());
  int64_t n = last_dim_size, half = n / 2 + 1;
  TORCH_CHECK(self.size(last) >= half, "_fft_c2r: expected at least ", half, " terms along dim ",
              last, ", got ", self.size(last));
  Tensor x = fft_c2c(self, dim.slice(0, dim.size() - 1), 0, /*forward=*/false);
  Tensor rows = x.narrow(last, 0, half).movedim(last, -1).contiguous();
  std::vector<int64_t> shape = rows.sizes().vec();
  shape.back() = n;
  Tensor full = at::empty(shape, rows.options());
  AXON_CHECK(axon_fft_hermitian_extend(stream_for(rows), to_axon_dtype(rows.scalar_type()),
                                       rows.data_ptr(), full.data_ptr(), rows.numel() / half, half,
                                       n));
  Tensor real = at::real(transform_along(full, -1, /*inverse=*/true)).movedim(-1, last);
  double numel = double(n);
  for (size_t i = 0; i + 1 < dim.size(); i++)
    numel *= double(self.size(c10::maybe_wrap_dim(dim[i], self.dim())));
  return normalized(real.contiguous(), normalization, numel);
}

// ---- the layout of results ----------------------------------------------------------------
// PyTorch lays an FFT's result out as its CPU (MKL) path does, and its fake tensors expect
// that layout on every device but CUDA and XPU (torch.compile plans buffers from them and
// checks them): the untransformed dims outermost, ordered by the input's strides (largest
// first), then the transformed dims in order, contiguous.

std::vector<int64_t> by_stride(at::IntArrayRef strides, std::vector<int64_t> dims, bool keep_last) {
  auto end = dims.end() - (keep_last && !dims.empty() ? 1 : 0);
  std::stable_sort(dims.begin(), end,
                   [&](int64_t a, int64_t b) { return strides[a] > strides[b]; });
  return dims;
}

std::vector<int64_t> result_strides(at::IntArrayRef in_strides, at::IntArrayRef out_sizes,
                                    const std::vector<int64_t>& dims) {
  const int64_t ndim = int64_t(out_sizes.size());
  std::vector<bool> transformed(size_t(ndim), false);
  for (int64_t d : dims) transformed[size_t(d)] = true;
  std::vector<int64_t> order;
  for (int64_t d = 0; d < ndim; d++)
    if (!transformed[size_t(d)]) order.push_back(d);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return in_strides[a] > in_strides[b]; });
  order.insert(order.end(), dims.begin(), dims.end());
  std::vector<int64_t> strides(static_cast<size_t>(ndim));
  int64_t step = 1;
  for (int64_t i = ndim - 1; i >= 0; i--) {
    strides[size_t(order[size_t(i)])] = step;
    step *= out_sizes[order[size_t(i)]];
  }
  return strides;
}

std::vector<int64_t> wrapped(const Tensor& self, at::IntArrayRef dim) {
  std::vector<int64_t> dims;
  for (int64_t d : dim) dims.push_back(c10::maybe_wrap_dim(d, self.dim()));
  return dims;
}

Tensor laid_out(const Tensor& result, const std::vector<int64_t>& strides) {
  if (result.strides() == at::IntArrayRef(strides)) return result;
  return at::empty_strided(result.sizes(), strides, result.options()).copy_(result);
}

Tensor fft_c2c_op(const Tensor& self, at::IntArrayRef dim, int64_t normalization, bool forward) {
  Tensor r = fft_c2c(self, dim, normalization, forward);
  if (dim.empty()) return r;
  return laid_out(r, result_strides(self.strides(), r.sizes(),
                                    by_stride(self.strides(), wrapped(self, dim), false)));
}

Tensor fft_r2c_op(const Tensor& self, at::IntArrayRef dim, int64_t normalization, bool onesided) {
  Tensor r = fft_r2c(self, dim, normalization, onesided);
  return laid_out(r, result_strides(self.strides(), r.sizes(),
                                    by_stride(self.strides(), wrapped(self, dim), true)));
}

Tensor fft_c2r_op(const Tensor& self, at::IntArrayRef dim, int64_t normalization,
                  int64_t last_dim_size) {
  Tensor r = fft_c2r(self, dim, normalization, last_dim_size);
  std::vector<int64_t> dims = wrapped(self, dim);
  // Several dims: the complex transforms of all but the last come first, laid out as above.
  std::vector<int64_t> in_strides = self.strides().vec();
  if (dims.size() > 1) {
    std::vector<int64_t> c2c(dims.begin(), dims.end() - 1);
    in_strides =
        result_strides(self.strides(), self.sizes(), by_stride(self.strides(), c2c, false));
  }
  return laid_out(r, result_strides(in_strides, r.sizes(), {dims.back()}));
}

Tensor& into(const Tensor& result, Tensor& out) {
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}

Tensor& fft_c2c_out(const Tensor& self, at::IntArrayRef dim, int64_t normalization, bool forward,
                    Tensor& out) {
  return into(fft_c2c(self, dim, normalization, forward), out);
}
Tensor& fft_r2c_out(const Tensor& self, at::IntArrayRef dim, int64_t normalization, bool onesided,
                    Tensor& out) {
  return into(fft_r2c(self, dim, normalization, onesided), out);
}
Tensor& fft_c2r_out(const Tensor& self, at::IntArrayRef dim, int64_t normalization,
                    int64_t last_dim_size, Tensor& out) {
  return into(fft_c2r(self, dim, normalization, last_dim_size), out);
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("_fft_c2c", fft_c2c_op);
  m.impl("_fft_c2c.out", fft_c2c_out);
  m.impl("_fft_r2c", fft_r2c_op);
  m.impl("_fft_r2c.out", fft_r2c_out);
  m.impl("_fft_c2r", fft_c2r_op);
  m.impl("_fft_c2r.out", fft_c2r_out);
}

}  // namespace axon
