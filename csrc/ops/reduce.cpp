// Reductions: shape logic here (which dims, keepdim, output layout), the arithmetic in
// kernels/reduce.cl. Variance is two passes (mean, then squared deviations) for accuracy.
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <bitset>
#include <cstring>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Tensor;

using DimMask = std::bitset<64>;

DimMask dim_mask(const Tensor& t, at::OptionalIntArrayRef dims) {
  DimMask mask;
  if (!dims.has_value() || dims->empty()) {
    for (int64_t d = 0; d < t.dim(); d++) mask.set(size_t(d));
    return mask;
  }
  for (int64_t d : *dims) {
    int64_t w = c10::maybe_wrap_dim(d, t.dim());
    TORCH_CHECK(!mask[size_t(w)], "dim ", w, " appears multiple times in the list of dims");
    mask.set(size_t(w));
  }
  return mask;
}

std::vector<int64_t> reduced_shape(const Tensor& t, const DimMask& mask, bool keepdim) {
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < t.dim(); d++) {
    if (!mask[size_t(d)])
      shape.push_back(t.size(d));
    else if (keepdim)
      shape.push_back(1);
  }
  return shape;
}

int64_t reduced_count(const Tensor& t, const DimMask& mask) {
  int64_t n = 1;
  for (int64_t d = 0; d < t.dim(); d++)
    if (mask[size_t(d)]) n *= t.size(d);
  return n;
}

struct ReduceArgs {
  double scale = 1.0, p = 0.0;
  Tensor* indices = nullptr;    // int64, same shape as out (values and indices ops)
  const Tensor* aux = nullptr;  // keepdim-shaped per-output values (the mean for variance)
};

// One dimension of a reduction's iteration: its size and the strides it walks in the input,
// the output and the aux operand (0 for reduced dims).
struct IterDim {
  int64_t size, in, out, aux;
};

// Drops size-1 dims and merges neighbours (fastest first) that walk every operand as one dim,
// so that tensors of up to PyTorch's 64 dims fit the kernels' AXON_MAX_DIMS per kind whenever
// their layout allows (a 13-d contiguous tensor is one run). Merging neighbours keeps the
// row-major position of every element, which argmax's first-of-ties rule relies on.
std::vector<IterDim> fold(const std::vector<IterDim>& dims) {
  std::vector<IterDim> folded;
  for (const IterDim& d : dims) {
    if (d.size == 1) continue;
    if (!folded.empty()) {
      IterDim& inner = folded.back();
      if (d.in == inner.in * inner.size && d.out == inner.out * inner.size &&
          d.aux == inner.aux * inner.size) {
        inner.size *= d.size;
        continue;
      }
    }
    folded.push_back(d);
  }
  return folded;
}

// out = op over `mask` of `in`. The kernel runs in `in`'s dtype; out must have the natural
// output dtype of the op (in's, bool for any/all, int64 for argmax/argmin).
void reduce_into(const char* op, const Tensor& in, const Tensor& out, const DimMask& mask,
                 bool keepdim, const ReduceArgs& args = {}) {
  check_same_device(in, out);
  c10::DeviceGuard guard(in.device());
  if (in.is_complex() && (std::strcmp(op, "any") == 0 || std::strcmp(op, "all") == 0)) {
    reduce_into(op, in.ne(0), out, mask, keepdim, args);  // truth is "not zero"
    return;
  }
  if (in.is_complex() && std::strcmp(op, "prod") == 0 && !args.indices) {
    // A product multiplies the magnitudes and adds the angles: two real reductions.
    std::vector<int64_t> shape = reduced_shape(in, mask, keepdim);
    Tensor magnitude = at::empty(shape, in.options().dtype(c10::toRealValueType(in.scalar_type())));
    Tensor angle = at::empty_like(magnitude);
    reduce_into(op, in.abs(), magnitude, mask, keepdim, args);
    reduce_into("sum", in.angle(), angle, mask, keepdim, args);
    at::native::resize_output(out, shape);
    const_cast<Tensor&>(out).copy_(at::polar(magnitude, angle));
    return;
  }
  if (in.is_complex()) {
    // Sums add real and imaginary parts apart: the reduction of the (real, imaginary) pairs,
    // the pair dim kept.
    TORCH_CHECK_NOT_IMPLEMENTED(std::strcmp(op, "sum") == 0 && !args.indices, "axon: ", op,
                                " of complex tensors is not supported yet");
    at::native::resize_output(out, reduced_shape(in, mask, keepdim));
    DimMask parts;  // the input's own dims (a 0-d input may name dim 0): never the pair dim
    for (int64_t d = 0; d < in.dim(); d++) parts.set(size_t(d), mask[size_t(d)]);
    reduce_into(op, at::view_as_real(in.resolve_conj()), at::view_as_real(out), parts, keepdim,
                args);
    return;
  }
  check_dtype_supported(in.scalar_type(), in.device().index());
  auto shape = reduced_shape(in, mask, keepdim);
  at::native::resize_output(out, shape);
  if (args.indices) at::native::resize_output(*args.indices, shape);
  std::vector<IterDim> reduced, kept;
  for (int64_t dim = in.dim() - 1; dim >= 0; dim--) {  // fastest first
    if (mask[size_t(dim)]) {
      reduced.push_back({in.size(dim), in.stride(dim), 0, 0});
      continue;
    }
    // Position of this kept dim in the output.
    int64_t out_pos = 0;
    for (int64_t e = 0; e < dim; e++) out_pos += (!mask[size_t(e)] || keepdim) ? 1 : 0;
    kept.push_back(
        {in.size(dim), in.stride(dim), out.stride(out_pos), args.aux ? args.aux->stride(dim) : 0});
  }
  reduced = fold(reduced);
  kept = fold(kept);
  if (reduced.empty()) reduced.push_back({1, 0, 0, 0});  // over size-1 dims: one element each
  TORCH_CHECK_NOT_IMPLEMENTED(reduced.size() <= AXON_MAX_DIMS && kept.size() <= AXON_MAX_DIMS,
                              "axon: reductions support at most ", AXON_MAX_DIMS, " reduced and ",
                              AXON_MAX_DIMS,
                              " kept dimensions after merging those laid out as one; this ",
                              in.dim(), "-d input has ", reduced.size(), " and ", kept.size());
  axon_reduce_desc d{};
  for (const IterDim& r : reduced) {
    d.red_sizes[d.red_ndim] = r.size;
    d.red_strides[d.red_ndim++] = r.in;
  }
  for (const IterDim& k : kept) {
    d.out_sizes[d.out_ndim] = k.size;
    d.out_strides_in[d.out_ndim] = k.in;
    d.out_strides_out[d.out_ndim] = k.out;
    d.out_aux_strides[d.out_ndim] = k.aux;
    d.out_ndim++;
  }
  if (args.indices)
    TORCH_INTERNAL_ASSERT(args.indices->strides() == out.strides(), "indices must match values");
  // Reducing zero elements reads nothing, but the kernel still needs a device buffer (an
  // empty tensor has none): the output stands in, and each output gets the op's identity.
  d.in = in.numel() > 0 ? in.data_ptr() : out.data_ptr();
  d.out = out.data_ptr();
  d.out_index = args.indices ? args.indices->data_ptr() : nullptr;
  d.aux = args.aux ? args.aux->data_ptr() : nullptr;
  AXON_CHECK(
      axon_reduce(stream_for(in), op, to_axon_dtype(in.scalar_type()), &d, args.scale, args.p));
}

// Converts the input to the output's dtype first where they differ (sum of int32 -> int64 ...).
Tensor in_dtype(const Tensor& in, at::ScalarType type) {
  return in.scalar_type() == type ? in : in.to(type);
}

void check_nonempty(const char* name, const Tensor& in, const DimMask& mask) {
  TORCH_CHECK_INDEX(in.numel() > 0 || reduced_count(in, mask) > 0, name,
                    "(): Expected reduction dim to be specified for input.numel() == 0. "
                    "Specify the reduction dim with the 'dim' argument.");
  TORCH_CHECK_INDEX(reduced_count(in, mask) > 0, name,
                    "(): cannot reduce over a zero-size dimension");
}

Tensor& sum_out(const Tensor& self, at::OptionalIntArrayRef dims, bool keepdim,
                std::optional<at::ScalarType> /*dtype*/, Tensor& out) {
  reduce_into("sum", in_dtype(self, out.scalar_type()), out, dim_mask(self, dims), keepdim);
  return out;
}

Tensor& mean_out(const Tensor& self, at::OptionalIntArrayRef dims, bool keepdim,
                 std::optional<at::ScalarType> /*dtype*/, Tensor& out) {
  DimMask mask = dim_mask(self, dims);
  ReduceArgs args;
  args.scale = 1.0 / double(reduced_count(self, mask));
  reduce_into("sum", in_dtype(self, out.scalar_type()), out, mask, keepdim, args);
  return out;
}

at::ScalarType sum_type(const Tensor& self, std::optional<at::ScalarType> dtype) {
  if (dtype) return *dtype;
  return at::isIntegralType(self.scalar_type(), true) ? at::kLong : self.scalar_type();
}

Tensor& prod_int_out(const Tensor& self, int64_t dim, bool keepdim,
                     std::optional<at::ScalarType> /*dtype*/, Tensor& out) {
  int64_t dims[1] = {dim};
  reduce_into("prod", in_dtype(self, out.scalar_type()), out, dim_mask(self, dims), keepdim);
  return out;
}

Tensor prod(const Tensor& self, std::optional<at::ScalarType> dtype) {
  Tensor out = at::empty({}, self.options().dtype(sum_type(self, dtype)));
  reduce_into("prod", in_dtype(self, out.scalar_type()), out, dim_mask(self, {}), false);
  return out;
}

template <const char* Op>
Tensor& extreme_out(const Tensor& self, at::IntArrayRef dims, bool keepdim, Tensor& out) {
  // The kernel writes the input's dtype: another out= dtype would get reinterpreted bytes.
  TORCH_CHECK(self.scalar_type() == out.scalar_type(),
              "Expected the dtype for input and out to match, but got ", self.scalar_type(),
              " for input's dtype and ", out.scalar_type(), " for out's dtype.");
  DimMask mask = dim_mask(self, dims);
  check_nonempty(Op, self, mask);
  reduce_into(Op, self, out, mask, keepdim);
  return out;
}
constexpr char kMax[] = "max";
constexpr char kMin[] = "min";

template <const char* Op>
Tensor extreme_all(const Tensor& self) {
  TORCH_CHECK(self.numel() > 0, Op,
              "(): Expected reduction dim to be specified for input.numel() "
              "== 0. Specify the reduction dim with the 'dim' argument.");
  Tensor out = at::empty({}, self.options());
  reduce_into(Op, self, out, dim_mask(self, {}), false);
  return out;
}

template <const char* Op>
std::tuple<Tensor&, Tensor&> extreme_dim_out(const Tensor& self, int64_t dim, bool keepdim,
                                             Tensor& values, Tensor& indices) {
  TORCH_CHECK(values.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", values.scalar_type(), " instead");
  TORCH_CHECK(indices.scalar_type() == at::kLong,
              "Expected out tensor to have dtype long int, but got ", indices.scalar_type(),
              " instead");
  int64_t dims[1] = {dim};
  DimMask mask = dim_mask(self, dims);
  if (self.dim() == 0) mask.reset();
  check_nonempty(Op, self, mask);
  ReduceArgs args;
  args.indices = &indices;
  at::native::resize_output(indices, reduced_shape(self, mask, keepdim));
  at::native::resize_output(values, reduced_shape(self, mask, keepdim));
  Tensor v = values.is_contiguous() && indices.is_contiguous()
                 ? values
                 : at::empty_like(values, at::MemoryFormat::Contiguous);
  Tensor i = v.is_same(values) ? indices : at::empty_like(indices, at::MemoryFormat::Contiguous);
  args.indices = &i;
  reduce_into(std::string(Op) == "max" ? "maxidx" : "minidx", self, v, mask, keepdim, args);
  if (!v.is_same(values)) {
    values.copy_(v);
    indices.copy_(i);
  }
  return {values, indices};
}

template <const char* Op>
Tensor& arg_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kLong,
              "Expected out tensor to have dtype long int, but got ", out.scalar_type(),
              " instead");
  DimMask mask;
  if (dim.has_value() && self.dim() > 0) {
    int64_t dims[1] = {*dim};
    mask = dim_mask(self, dims);
  } else {
    mask = dim_mask(self, {});
  }
  check_nonempty(Op, self, mask);
  reduce_into(Op, self, out, mask, keepdim);
  return out;
}
constexpr char kArgmax[] = "argmax";
constexpr char kArgmin[] = "argmin";

template <const char* Op>
Tensor& logic_out(const Tensor& self, at::OptionalIntArrayRef dims, bool keepdim, Tensor& out) {
  Tensor target =
      out.scalar_type() == at::kBool ? out : at::empty({0}, out.options().dtype(at::kBool));
  reduce_into(Op, self, target, dim_mask(self, dims), keepdim);
  if (!target.is_same(out)) {
    at::native::resize_output(out, target.sizes());
    out.copy_(target);
  }
  return out;
}
constexpr char kAny[] = "any";
constexpr char kAll[] = "all";

// NaN counts as zero; integers have no NaN and sum plainly.
Tensor& nansum_out(const Tensor& self, at::OptionalIntArrayRef dims, bool keepdim,
                   std::optional<at::ScalarType> /*dtype*/, Tensor& out) {
  TORCH_CHECK(!c10::isComplexType(self.scalar_type()), "nansum does not support complex inputs");
  const char* op = at::isFloatingType(out.scalar_type()) ? "nansum" : "sum";
  reduce_into(op, in_dtype(self, out.scalar_type()), out, dim_mask(self, dims), keepdim);
  return out;
}

Tensor nansum(const Tensor& self, at::OptionalIntArrayRef dims, bool keepdim,
              std::optional<at::ScalarType> dtype) {
  Tensor out = at::empty({0}, self.options().dtype(sum_type(self, dtype)));
  return nansum_out(self, dims, keepdim, dtype, out);
}

Tensor count_nonzero(const Tensor& self, at::IntArrayRef dims) {
  return at::sum(at::ne(self, 0), dims, /*keepdim=*/false, at::kLong);
}

// Two reductions (the kernels keep one accumulator each).
std::tuple<Tensor&, Tensor&> aminmax_out(const Tensor& self, std::optional<int64_t> dim,
                                         bool keepdim, Tensor& min, Tensor& max) {
  TORCH_CHECK(min.scalar_type() == self.scalar_type() && max.scalar_type() == self.scalar_type(),
              "Expected out tensor to have dtype ", self.scalar_type(), ", but got ",
              min.scalar_type(), " for min and ", max.scalar_type(), " for max");
  DimMask mask;
  if (dim.has_value()) {
    int64_t d = c10::maybe_wrap_dim(*dim, self.dim());
    TORCH_CHECK_INDEX(self.dim() == 0 || self.size(d) > 0, "aminmax(): Expected reduction dim ", d,
                      " to have non-zero size.");
    if (self.dim() > 0) mask.set(size_t(d));
  } else {
    TORCH_CHECK(self.numel() > 0,
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                "no identity.");
    mask = dim_mask(self, {});
  }
  reduce_into("min", self, min, mask, keepdim);
  reduce_into("max", self, max, mask, keepdim);
  return {min, max};
}

// The comparison runs on the device; only its one-element verdict comes back, as on CUDA.
bool equal(const Tensor& self, const Tensor& other) {
  TORCH_CHECK(self.device() == other.device(),
              "Cannot compare two tensors on different devices. Got: ", self.device(), " and ",
              other.device());
  if (!self.is_same_size(other)) return false;
  if (self.numel() == 0) return true;
  return !at::ne(self, other).any().item<bool>();
}

Tensor trace(const Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  return at::sum(self.diagonal(), sum_type(self, std::nullopt));
}

// vdot conjugates its first operand (the matrix product materialises the conjugate).
Tensor vdot(const Tensor& self, const Tensor& other) {
  return at::dot(self.is_complex() ? self.conj() : self, other);
}

// ---- addbmm: beta * self + alpha * sum_b batch1[b] @ batch2[b], a reduction over the batch
// done as one matrix product: [n, b*k] @ [b*k, p] sums the per-batch products.

Tensor& addbmm_into(const Tensor& self, const Tensor& batch1, const Tensor& batch2,
                    const at::Scalar& beta, const at::Scalar& alpha, Tensor& out) {
  TORCH_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(batch1.size(0) == batch2.size(0),
              "batch1 and batch2 must have same number of batches, got ", batch1.size(0), " and ",
              batch2.size(0));
  TORCH_CHECK(batch1.size(2) == batch2.size(1), "Incompatible matrix sizes for bmm (",
              batch1.size(1), "x", batch1.size(2), " and ", batch2.size(1), "x", batch2.size(2),
              ")");
  int64_t n = batch1.size(1), p = batch2.size(2), bk = batch1.size(0) * batch1.size(2);
  TORCH_CHECK(self.dim() == 2 && self.size(0) == n && self.size(1) == p,
              "self tensor does not match matmul output shape");
  Tensor a = batch1.transpose(0, 1).reshape({n, bk});
  Tensor b = batch2.reshape({bk, p});
  if (bk == 0) {  // no products: beta * self, and beta = 0 ignores self (NaN included)
    at::native::resize_output(out, {n, p});
    if (beta.toComplexDouble() == 0.0) return out.zero_();
    if (!out.is_same(self)) out.copy_(self);
    return out.mul_(beta);
  }
  return at::addmm_out(out, self, a, b, beta, alpha);
}

Tensor& addbmm_out(const Tensor& self, const Tensor& batch1, const Tensor& batch2,
                   const at::Scalar& beta, const at::Scalar& alpha, Tensor& out) {
  TORCH_CHECK(batch1.dim() == 3 && batch2.dim() == 3, "batch1 and batch2 must be 3D tensors");
  Tensor s = self.expand({batch1.size(1), batch2.size(2)});
  return addbmm_into(s, batch1, batch2, beta, alpha, out);
}

Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2,
              const at::Scalar& beta, const at::Scalar& alpha) {
  Tensor out = at::empty({0}, self.options());
  return addbmm_out(self, batch1, batch2, beta, alpha, out);
}

Tensor& addbmm_(Tensor& self, const Tensor& batch1, const Tensor& batch2, const at::Scalar& beta,
                const at::Scalar& alpha) {
  return addbmm_into(self, batch1, batch2, beta, alpha, self);
}

// ---- variance and standard deviation ------------------------------------------------------------

Tensor variance(const Tensor& self, at::OptionalIntArrayRef dims,
                const std::optional<at::Scalar>& correction, bool keepdim, bool take_sqrt) {
  if (self.is_complex()) {  // the spread of both parts: var(z) = var(re z) + var(im z)
    Tensor v = variance(at::real(self), dims, correction, keepdim, false) +
               variance(at::imag(self.resolve_conj()), dims, correction, keepdim, false);
    return take_sqrt ? v.sqrt_() : v;
  }
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "std and var only support floating point and complex dtypes");
  // A float16 / bfloat16 std is the root of a float variance, as in PyTorch: the variance may
  // pass the type's range (float16's 65504) where its root does not.
  if (take_sqrt && at::isReducedFloatingType(self.scalar_type()))
    return variance(self.to(at::kFloat), dims, correction, keepdim, true).to(self.scalar_type());
  DimMask mask = dim_mask(self, dims);
  int64_t n = reduced_count(self, mask);
  double corr = correction.has_value() ? correction->toDouble() : 1.0;
  Tensor mean = at::empty({0}, self.options());
  ReduceArgs mean_args;
  mean_args.scale = 1.0 / double(n);
  reduce_into("sum", self, mean, mask, /*keepdim=*/true, mean_args);
  Tensor out = at::empty({0}, self.options());
  ReduceArgs args;
  args.aux = &mean;
  args.scale = 1.0 / std::max(double(n) - corr, 0.0);
  reduce_into("sumsqdev", self, out, mask, keepdim, args);
  return take_sqrt ? out.sqrt_() : out;
}

Tensor var(const Tensor& self, at::OptionalIntArrayRef dims, const std::optional<at::Scalar>& corr,
           bool keepdim) {
  return variance(self, dims, corr, keepdim, false);
}
Tensor std_(const Tensor& self, at::OptionalIntArrayRef dims, const std::optional<at::Scalar>& corr,
            bool keepdim) {
  return variance(self, dims, corr, keepdim, true);
}
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, at::OptionalIntArrayRef dims,
                                    const std::optional<at::Scalar>& corr, bool keepdim) {
  return {variance(self, dims, corr, keepdim, false), at::mean(self, dims, keepdim)};
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, at::OptionalIntArrayRef dims,
                                    const std::optional<at::Scalar>& corr, bool keepdim) {
  return {variance(self, dims, corr, keepdim, true), at::mean(self, dims, keepdim)};
}

// ---- norms
// ---------------------------------------------------------------------------------------------

Tensor& vector_norm_out(const Tensor& self, const at::Scalar& ord, at::OptionalIntArrayRef dims,
                        bool keepdim, std::optional<at::ScalarType> /*dtype*/, Tensor& out) {
  double p = ord.toDouble();
  // Norms of complex numbers are norms of their magnitudes (a real result).
  Tensor in = in_dtype(self.is_complex() ? at::abs(self) : self, out.scalar_type());
  DimMask mask = dim_mask(self, dims);
  ReduceArgs args;
  args.p = p;
  if (std::isinf(p) && p < 0) {  // the smallest magnitude
    Tensor m = at::abs(in);
    TORCH_CHECK(reduced_count(m, mask) > 0,
                "linalg.vector_norm cannot compute the -inf norm on an empty "
                "tensor because the operation does not have an identity");
    reduce_into("min", m, out, mask, keepdim);
    return out;
  }
  const char* op = p == 1.0        ? "norm1"
                   : p == 2.0      ? "norm2"
                   : p == 0.0      ? "norm0"
                   : std::isinf(p) ? "norminf"
                                   : "normp";
  reduce_into(op, in, out, mask, keepdim, args);
  return out;
}

Tensor& norm_out(const Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dims,
                 bool keepdim, Tensor& out) {
  return vector_norm_out(self, p.value_or(2.0), dims, keepdim, std::nullopt, out);
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("sum.IntList_out", sum_out);
  m.impl("mean.out", mean_out);
  m.impl("prod.int_out", prod_int_out);
  m.impl("prod", prod);
  m.impl("amax.out", extreme_out<kMax>);
  m.impl("amin.out", extreme_out<kMin>);
  m.impl("max", extreme_all<kMax>);
  m.impl("min", extreme_all<kMin>);
  m.impl("max.dim_max", extreme_dim_out<kMax>);
  m.impl("min.dim_min", extreme_dim_out<kMin>);
  m.impl("argmax.out", arg_out<kArgmax>);
  m.impl("argmin.out", arg_out<kArgmin>);
  m.impl("any.out", [](const Tensor& s, int64_t dim, bool keepdim, Tensor& out) -> Tensor& {
    int64_t dims[1] = {dim};
    return logic_out<kAny>(s, dims, keepdim, out);
  });
  m.impl("all.out", [](const Tensor& s, int64_t dim, bool keepdim, Tensor& out) -> Tensor& {
    int64_t dims[1] = {dim};
    return logic_out<kAll>(s, dims, keepdim, out);
  });
  m.impl("any.all_out", [](const Tensor& s, Tensor& out) -> Tensor& {
    return logic_out<kAny>(s, std::nullopt, false, out);
  });
  m.impl("all.all_out", [](const Tensor& s, Tensor& out) -> Tensor& {
    return logic_out<kAll>(s, std::nullopt, false, out);
  });
  m.impl("nansum", nansum);
  m.impl("nansum.out", nansum_out);
  m.impl("count_nonzero.dim_IntList", count_nonzero);
  m.impl("aminmax.out", aminmax_out);
  m.impl("equal", equal);
  m.impl("trace", trace);
  m.impl("vdot", vdot);
  m.impl("addbmm", addbmm);
  m.impl("addbmm.out", addbmm_out);
  m.impl("addbmm_", addbmm_);
  m.impl("var.correction", var);
  m.impl("std.correction", std_);
  m.impl("var_mean.correction", var_mean);
  m.impl("std_mean.correction", std_mean);
  m.impl("linalg_vector_norm.out", vector_norm_out);
  m.impl("norm.out", norm_out);
}

}  // namespace axon
