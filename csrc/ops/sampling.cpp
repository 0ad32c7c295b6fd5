// The less common neural-network operators: bicubic and antialiased bilinear resampling, grid
// sampling, embedding bags, margin losses, CTC loss, pairwise distances and fractional max
// pooling (kernels of runtime/kernels/sampling.cl), and max unpooling and embedding renorm
// (composed of native scatter / index ops). Shapes, checks and layouts here; the arithmetic runs
// on the device.
#include <ATen/Context.h>
#include <ATen/Operators.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "axon_glue.h"

extern "C" {
#include "axon/sampling.h"
}

namespace axon {

// ops/copy.cpp: the counted CPU fallback, for ops declined at run time.
void counted_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

namespace {

using at::Tensor;
using OptD = std::optional<double>;

// Float atomics and the CTC recursions accumulate in float for float16 / bfloat16.
at::ScalarType acc_type(at::ScalarType t) {
  return t == at::kDouble ? t : at::kFloat;
}

// Floating dtypes only; float16 / bfloat16 only where PyTorch's CPU kernel has them (`reduced`),
// failing as the CPU does (its kernel's name in the message) where it has not.
void check_float(const Tensor& t, const char* op, bool reduced = true) {
  at::ScalarType st = t.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(
      at::isFloatingType(st) && (reduced || (st != at::kHalf && st != at::kBFloat16)), "\"", op,
      "\" not implemented for '", c10::toString(st), "'");
  check_dtype_supported(t.scalar_type(), t.device().index());
}

// Runs a sampling kernel. Empty tensors stand in for absent optional ones: the kernel never
// reads them, but the launcher wants a device address, so they borrow another buffer's.
void run(const char* kernel, at::ScalarType dtype, int64_t items, std::vector<Tensor> buffers,
         const axon_sampling_params& p) {
  if (items == 0) return;
  std::vector<void*> ptrs;
  void* any = nullptr;
  for (const Tensor& t : buffers)
    if (t.defined() && t.numel() > 0 && !any) any = t.data_ptr();
  for (const Tensor& t : buffers) ptrs.push_back(t.defined() && t.numel() > 0 ? t.data_ptr() : any);
  AXON_CHECK(axon_sampling_launch(stream_for(buffers[0]), to_axon_dtype(dtype), kernel, items,
                                  ptrs.data(), int(ptrs.size()), &p));
}

// The contiguous tensor a kernel writes `out` through: `out` itself or a temporary.
Tensor writable(const Tensor& out) {
  return out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
}
void write_back(Tensor& out, const Tensor& buf) {
  if (!buf.is_same(out)) out.copy_(buf);
}

// ---- bicubic and antialiased bilinear resampling ----------------------------------------------

// Input pixels per output pixel, as PyTorch's area_pixel_compute_scale.
double area_scale(int64_t in, int64_t out, bool align_corners, OptD scale) {
  if (align_corners) return out > 1 ? double(in - 1) / double(out - 1) : 0.0;
  return scale.has_value() && *scale > 0 ? 1.0 / *scale : double(in) / double(out);
}

axon_sampling_params resample_params(at::IntArrayRef in, at::IntArrayRef out, at::IntArrayRef st,
                                     bool align_corners, OptD sh, OptD sw) {
  axon_sampling_params p{};
  p.i[0] = in[0] * in[1];
  p.i[1] = in[1];
  p.i[2] = in[2];
  p.i[3] = in[3];
  p.i[4] = out[0];
  p.i[5] = out[1];
  for (int k = 0; k < 4; k++) p.i[6 + k] = st[k];
  p.i[10] = align_corners;
  p.f[0] = area_scale(in[2], out[0], align_corners, sh);
  p.f[1] = area_scale(in[3], out[1], align_corners, sw);
  return p;
}

void check_resample(at::IntArrayRef in, at::IntArrayRef out) {
  TORCH_CHECK(out.size() == 2, "It is expected output_size equals to 2, but got size ", out.size());
  TORCH_CHECK(in.size() == 4, "It is expected input_size equals to 4, but got size ", in.size());
  TORCH_CHECK(in[2] > 0 && in[3] > 0 && out[0] > 0 && out[1] > 0,
              "Input and output sizes should be greater than 0, but got input (H: ", in[2],
              ", W: ", in[3], ") output (H: ", out[0], ", W: ", out[1], ")");
}

template <const char* Kernel, const char* CpuName, bool Reduced>
Tensor& resample_out(const Tensor& self, at::IntArrayRef output_size, bool align_corners, OptD sh,
                     OptD sw, Tensor& out) {
  c10::DeviceGuard guard(self.device());
  TORCH_CHECK(self.dim() == 4, "Non-empty 4D data tensor expected but got a tensor with sizes ",
              self.sizes());
  check_resample(self.sizes(), output_size);
  check_float(self, CpuName, Reduced);
  at::native::resize_output(out, {self.size(0), self.size(1), output_size[0], output_size[1]});
  Tensor dst = writable(out);
  auto p = resample_params(self.sizes(), output_size, self.strides(), align_corners, sh, sw);
  run(Kernel, self.scalar_type(), dst.numel(), {self, dst}, p);
  write_back(out, dst);
  return out;
}

template <const char* Kernel, const char* CpuName, bool Reduced>
Tensor& resample_backward_out(const Tensor& grad, at::IntArrayRef output_size,
                              at::IntArrayRef input_size, bool align_corners, OptD sh, OptD sw,
                              Tensor& grad_input) {
  c10::DeviceGuard guard(grad.device());
  // The kernel scatters with a compare-and-swap float add: the sum order varies run to run.
  at::globalContext().alertNotDeterministic(Kernel);
  check_resample(input_size, output_size);
  check_float(grad, CpuName, Reduced);
  TORCH_CHECK(grad.dim() == 4 && grad.size(0) == input_size[0] && grad.size(1) == input_size[1] &&
                  grad.size(2) == output_size[0] && grad.size(3) == output_size[1],
              "Expected grad_output to have the shape [", input_size[0], ", ", input_size[1], ", ",
              output_size[0], ", ", output_size[1], "], but got ", grad.sizes());
  at::native::resize_output(grad_input, input_size);
  Tensor acc = at::zeros(input_size, grad.options().dtype(acc_type(grad.scalar_type())));
  auto p = resample_params(input_size, output_size, grad.strides(), align_corners, sh, sw);
  run(Kernel, grad.scalar_type(), grad.numel(), {grad, acc}, p);
  grad_input.copy_(acc);
  return grad_input;
}

constexpr char kBicubic[] = "bicubic2d";
constexpr char kBicubicBackward[] = "bicubic2d_backward";
constexpr char kAABilinear[] = "aa_bilinear2d";
constexpr char kAABilinearBackward[] = "aa_bilinear2d_backward";
// PyTorch's CPU kernel names, for the errors of dtypes it lacks.
constexpr char kAACpu[] = "compute_index_ranges_weights";
constexpr char kAABackwardCpu[] = "upsample_bilinear2d_aa_backward_cpu";

// uint8 images: PyTorch's CPU resamples them in fixed point with its own rounding, which these
// float kernels do not reproduce, so uint8 goes to the counted CPU fallback as before.
Tensor& bicubic_out(const Tensor& self, at::IntArrayRef output_size, bool align_corners, OptD sh,
                    OptD sw, Tensor& out) {
  if (self.scalar_type() == at::kByte)
    return at::native::call_fallback_fn<&counted_cpu_fallback,
                                        ATEN_OP2(upsample_bicubic2d, out)>::call(self, output_size,
                                                                                 align_corners, sh,
                                                                                 sw, out);
  return resample_out<kBicubic, kBicubic, true>(self, output_size, align_corners, sh, sw, out);
}

Tensor& aa_bilinear_out(const Tensor& self, at::IntArrayRef output_size, bool align_corners,
                        OptD sh, OptD sw, Tensor& out) {
  if (self.scalar_type() == at::kByte)
    return at::native::call_fallback_fn<&counted_cpu_fallback,
                                        ATEN_OP2(_upsample_bilinear2d_aa, out)>::call(self,
                                                                                      output_size,
                                                                                      align_corners,
                                                                                      sh, sw, out);
  return resample_out<kAABilinear, kAACpu, false>(self, output_size, align_corners, sh, sw, out);
}

// ---- grid sampling --------------------------------------------------------------------------

axon_sampling_params grid_params(const Tensor& input, const Tensor& grid, int64_t mode,
                                 int64_t padding, bool align_corners) {
  int nd = int(input.dim()) - 2, lead = 3 - nd;
  axon_sampling_params p{};
  p.i[0] = input.size(0);
  p.i[1] = input.size(1);
  p.i[2] = nd;
  for (int k = 0; k < 3; k++) {
    p.i[3 + k] = k < lead ? 1 : input.size(2 + k - lead);
    p.i[6 + k] = k < lead ? 1 : grid.size(1 + k - lead);
    p.i[11 + k] = k < lead ? 0 : input.stride(2 + k - lead);
    p.i[15 + k] = k < lead ? 0 : grid.stride(1 + k - lead);
  }
  p.i[9] = input.stride(0);
  p.i[10] = input.stride(1);
  p.i[14] = grid.stride(0);
  p.i[18] = grid.stride(-1);
  p.i[19] = mode;
  p.i[20] = padding;
  p.i[21] = align_corners;
  return p;
}

void check_grid(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding, int nd) {
  TORCH_CHECK(input.device() == grid.device(),
              "grid_sampler(): expected input and grid to be on same device, but input is on ",
              input.device(), " and grid is on ", grid.device());
  TORCH_CHECK(input.scalar_type() == grid.scalar_type(),
              "grid_sampler(): expected input and grid to have same dtype, but input has ",
              input.scalar_type(), " and grid has ", grid.scalar_type());
  TORCH_CHECK(input.dim() == nd + 2 && grid.dim() == nd + 2, "grid_sampler(): expected ", nd + 2,
              "D input and grid with same number of "
              "dimensions, but got input with sizes ",
              input.sizes(), " and grid with sizes ", grid.sizes());
  TORCH_CHECK(input.size(0) == grid.size(0),
              "grid_sampler(): expected grid and input to have same batch size, but got input "
              "with sizes ",
              input.sizes(), " and grid with sizes ", grid.sizes());
  TORCH_CHECK(grid.size(-1) == nd, "grid_sampler(): expected grid to have size ", nd,
              " in last dimension, but got grid with sizes ", grid.sizes());
  for (int64_t i = 2; i < input.dim(); i++)
    TORCH_CHECK(input.size(i) > 0,
                "grid_sampler(): expected input to have non-empty spatial "
                "dimensions, but input has sizes ",
                input.sizes(), " with dimension ", i, " being empty");
  TORCH_CHECK(mode >= 0 && mode <= 2, "grid_sampler(): unknown interpolation mode ", mode);
  TORCH_CHECK(padding >= 0 && padding <= 2, "grid_sampler(): unknown padding mode ", padding);
  TORCH_CHECK(mode != 2 || nd == 2, "grid_sampler(): bicubic interpolation only supports 4D input");
  check_float(input, "grid_sampler");
}

template <int ND>
Tensor grid_sampler(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding,
                    bool align_corners) {
  c10::DeviceGuard guard(input.device());
  check_grid(input, grid, mode, padding, ND);
  std::vector<int64_t> shape{input.size(0), input.size(1)};
  for (int k = 1; k <= ND; k++) shape.push_back(grid.size(k));
  Tensor out = at::empty(shape, input.options());
  auto p = grid_params(input, grid, mode, padding, align_corners);
  run("grid_sample", input.scalar_type(), grid.numel() / ND, {input, grid, out}, p);
  return out;
}

template <int ND>
std::tuple<Tensor, Tensor> grid_sampler_backward(const Tensor& grad, const Tensor& input,
                                                 const Tensor& grid, int64_t mode, int64_t padding,
                                                 bool align_corners,
                                                 std::array<bool, 2> output_mask) {
  c10::DeviceGuard guard(input.device());
  // The input gradient scatters with a compare-and-swap float add (order varies run to run).
  if (output_mask[0])
    at::globalContext().alertNotDeterministic(ND == 2 ? "grid_sampler_2d_backward_axon"
                                                      : "grid_sampler_3d_backward_axon");
  check_grid(input, grid, mode, padding, ND);
  Tensor acc = at::zeros(input.sizes(), input.options().dtype(acc_type(input.scalar_type())));
  Tensor grad_grid = at::empty(grid.sizes(), grid.options());
  auto p = grid_params(input, grid, mode, padding, align_corners);
  // grad_output strides (n, c, d, h, w), depth 1 for 2-d.
  for (int k = 0, j = 0; k < 5; k++) p.i[22 + k] = ND == 2 && k == 2 ? 0 : grad.stride(j++);
  run("grid_sample_backward", input.scalar_type(), grid.numel() / ND,
      {grad, input, grid, acc, grad_grid}, p);
  Tensor grad_input;
  if (output_mask[0]) grad_input = acc.to(input.scalar_type());
  return {grad_input, grad_grid};
}

// ---- embedding bags ------------------------------------------------------------------------

// Modes: 0 sum, 1 mean, 2 max.
constexpr int64_t kModeSum = 0, kModeMax = 2;

void check_index(const Tensor& t, const char* name) {
  TORCH_CHECK(t.scalar_type() == at::kLong || t.scalar_type() == at::kInt,
              "embedding_bag: expected ", name, " to be int32 or int64, but got ", t.scalar_type());
}

axon_sampling_params bag_params(int64_t bags, const Tensor& weight, const Tensor& indices,
                                const Tensor& offsets, int64_t mode, int64_t padding_idx,
                                bool has_psw) {
  axon_sampling_params p{};
  p.i[0] = bags;
  p.i[1] = weight.size(1);
  p.i[2] = indices.numel();
  p.i[3] = offsets.defined() ? offsets.numel() : 0;
  p.i[4] = mode;
  p.i[5] = padding_idx;
  p.i[6] = has_psw;
  p.i[7] = indices.scalar_type() == at::kInt;
  p.i[8] = offsets.defined() && offsets.scalar_type() == at::kInt;
  p.i[9] = weight.stride(0);
  p.i[10] = weight.stride(1);
  p.i[11] = weight.size(0);
  return p;
}

Tensor offset2bag_of(const Tensor& offsets, int64_t bags, int64_t n, const Tensor& like) {
  Tensor o2b = at::empty({n}, like.options().dtype(at::kLong));
  axon_sampling_params p{};
  p.i[0] = bags;
  p.i[8] = offsets.scalar_type() == at::kInt;
  if (bags > 0)
    run("embedding_bag_offset2bag", like.scalar_type(), n, {offsets, o2b}, p);
  else
    o2b.fill_(-1);
  return o2b;
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(
    const Tensor& weight, const Tensor& indices_, const Tensor& offsets_,
    bool /*scale_grad_by_freq*/, int64_t mode, bool /*sparse*/,
    const std::optional<Tensor>& per_sample_weights, bool include_last_offset,
    int64_t padding_idx) {
  c10::DeviceGuard guard(weight.device());
  check_index(indices_, "indices");
  check_index(offsets_, "offsets");
  TORCH_CHECK(indices_.dim() == 1,
              "input has to be a 1D or 2D Tensor, but got Tensor of dimension ", indices_.dim());
  TORCH_CHECK(offsets_.dim() == 1, "offsets has to be a 1D Tensor, but got Tensor of dimension ",
              offsets_.dim());
  TORCH_CHECK(weight.dim() == 2, "weight has to be a 2D Tensor, but got Tensor of dimension ",
              weight.dim());
  TORCH_CHECK(mode >= 0 && mode <= 2, "embedding_bag: unknown mode ", mode);
  check_float(weight, "embedding_bag");
  bool has_psw = per_sample_weights.has_value() && per_sample_weights->defined();
  Tensor psw;
  if (has_psw) {
    TORCH_CHECK(mode == kModeSum,
                "embedding_bag: per_sample_weights only supported with mode='sum'");
    TORCH_CHECK(per_sample_weights->scalar_type() == weight.scalar_type(), "expected scalar type ",
                weight.scalar_type(), " but found ", per_sample_weights->scalar_type());
    TORCH_CHECK(per_sample_weights->dim() == 1 && per_sample_weights->numel() == indices_.numel(),
                "embedding_bag: per_sample_weights must be 1D of the size of indices");
    psw = per_sample_weights->contiguous();
  }
  Tensor indices = indices_.contiguous(), offsets = offsets_.contiguous();
  int64_t bags = offsets.numel() - (include_last_offset ? 1 : 0);
  TORCH_CHECK(bags >= 0, "include_last_offset: number of offsets should be at least 1");
  int64_t dim = weight.size(1), n = indices.numel();
  Tensor out = at::empty({bags, dim}, weight.options());
  Tensor bag_size = at::zeros({bags}, indices.options().dtype(at::kLong));
  Tensor max_indices = mode == kModeMax ? at::empty({bags, dim}, bag_size.options())
                                        : at::zeros({bags}, bag_size.options());
  auto p = bag_params(bags, weight, indices, offsets, mode, padding_idx, has_psw);
  run("embedding_bag", weight.scalar_type(), bags * dim,
      {weight, indices, offsets, psw, out, bag_size, max_indices}, p);
  Tensor o2b = offset2bag_of(offsets, bags, n, weight);
  at::ScalarType it = indices.scalar_type();
  return {out, o2b.to(it), bag_size.to(it), max_indices.to(it)};
}

Tensor embedding_bag_dense_backward(const Tensor& grad_, const Tensor& indices_,
                                    const Tensor& offset2bag, const Tensor& bag_size,
                                    const Tensor& max_indices, int64_t num_weights,
                                    bool scale_grad_by_freq, int64_t mode,
                                    const std::optional<Tensor>& per_sample_weights,
                                    int64_t padding_idx) {
  c10::DeviceGuard guard(grad_.device());
  check_float(grad_, "embedding_bag_backward");
  check_index(indices_, "indices");
  Tensor grad = grad_.contiguous(), indices = indices_.contiguous();
  int64_t n = indices.numel(), dim = grad.size(1), bags = grad.size(0);
  TORCH_CHECK(offset2bag.numel() == n,
              "embedding_bag_backward: offset2bag must have one entry per index");
  bool has_psw = per_sample_weights.has_value() && per_sample_weights->defined();
  Tensor psw = has_psw ? per_sample_weights->contiguous() : Tensor();
  Tensor rows = at::empty({n, dim}, grad.options());
  axon_sampling_params p{};
  p.i[0] = bags;
  p.i[1] = dim;
  p.i[4] = mode;
  p.i[5] = padding_idx;
  p.i[6] = has_psw;
  p.i[7] = indices.scalar_type() == at::kInt;
  run("embedding_bag_rows", grad.scalar_type(), n * dim,
      {grad, indices, offset2bag.to(at::kLong).contiguous(), bag_size.to(at::kLong).contiguous(),
       max_indices.to(at::kLong).contiguous(), psw, rows},
      p);
  // Rows of equal indices sum in embedding's deterministic backward; a max bag's gradient is
  // not scaled by frequency.
  return at::embedding_dense_backward(rows, indices, num_weights, padding_idx,
                                      mode != kModeMax && scale_grad_by_freq);
}

Tensor embedding_bag_backward(const Tensor& grad, const Tensor& indices, const Tensor& offsets,
                              const Tensor& offset2bag, const Tensor& bag_size,
                              const Tensor& max_indices, int64_t num_weights,
                              bool scale_grad_by_freq, int64_t mode, bool sparse,
                              const std::optional<Tensor>& per_sample_weights,
                              int64_t padding_idx) {
  TORCH_CHECK_NOT_IMPLEMENTED(!sparse, "axon: embedding_bag with sparse=True is not supported");
  Tensor o2b = offset2bag;
  if (o2b.numel() != indices.numel())
    o2b = offset2bag_of(offsets.contiguous(), grad.size(0), indices.numel(), grad);
  return embedding_bag_dense_backward(grad, indices, o2b, bag_size, max_indices, num_weights,
                                      scale_grad_by_freq, mode, per_sample_weights, padding_idx);
}

Tensor embedding_bag_psw_backward(const Tensor& grad_, const Tensor& weight, const Tensor& indices_,
                                  const Tensor& offsets, const Tensor& offset2bag, int64_t mode,
                                  int64_t padding_idx) {
  c10::DeviceGuard guard(grad_.device());
  TORCH_CHECK(mode == kModeSum,
              "embedding_bag_backward: per_sample_weights only supported for mode='sum'");
  check_float(grad_, "embedding_bag_per_sample_weights_backward");
  Tensor grad = grad_.contiguous(), indices = indices_.contiguous();
  int64_t n = indices.numel();
  Tensor o2b = offset2bag.numel() == n ? offset2bag.to(at::kLong).contiguous()
                                       : offset2bag_of(offsets.contiguous(), grad.size(0), n, grad);
  Tensor out = at::empty({n}, grad.options());
  auto p = bag_params(grad.size(0), weight, indices, Tensor(), mode, padding_idx, false);
  p.i[1] = grad.size(1);
  run("embedding_bag_psw_backward", grad.scalar_type(), n, {grad, weight, indices, o2b, out}, p);
  return out;
}

// ---- margin losses ---------------------------------------------------------------------------

constexpr int64_t kReductionNone = 0, kReductionMean = 1;

// The per-sample losses reduced as asked; `keep_dim` keeps a [n] result for reduction none.
// grad_input (resized to self's shape) from a gradient computed in another shape.
Tensor& write_like(Tensor& out, const Tensor& self, const Tensor& value) {
  at::native::resize_output(out, self.sizes());
  return out.copy_(value.view(self.sizes()));
}

// A margin loss's incoming gradient: one per sample, or the reduced loss's single one.
Tensor loss_grad(const Tensor& grad, int64_t reduction, int64_t n) {
  return reduction == kReductionNone ? grad.reshape({n}).contiguous() : grad.reshape({1});
}

// The kernels' reduction parameters: whether the gradient is per sample, and the mean's 1/n.
void backward_reduction(axon_sampling_params& prm, int64_t reduction, int64_t n) {
  prm.i[4] = reduction == kReductionNone ? 1 : 0;
  prm.f[1] = reduction == kReductionMean ? 1.0 / double(n) : 1.0;
}

Tensor reduce_loss(const Tensor& per, int64_t reduction, bool keep_dim) {
  if (reduction == kReductionNone) return keep_dim ? per : per.reshape({});
  return reduction == kReductionMean ? per.mean() : per.sum();
}

Tensor& multi_margin_loss_out(const Tensor& self, const Tensor& target, const at::Scalar& p_,
                              const at::Scalar& margin, const std::optional<Tensor>& weight_,
                              int64_t reduction, Tensor& out) {
  c10::DeviceGuard guard(self.device());
  int64_t p = p_.toLong();
  TORCH_CHECK(p == 1 || p == 2, "only p == 1 and p == 2 supported");
  TORCH_CHECK(self.dim() <= 2 && (self.dim() == 0 || self.numel() > 0 || self.size(0) == 0),
              "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ",
              self.sizes());
  check_float(self, "multi_margin_loss_cpu_kernel", false);
  int64_t n = self.dim() <= 1 ? 1 : self.size(0), c = self.dim() == 0 ? 1 : self.size(-1);
  TORCH_CHECK(target.dim() <= 1 && target.numel() == n, "inconsistent target size, expected ", n,
              " but got ", target.sizes());
  bool has_w = weight_.has_value() && weight_->defined();
  TORCH_CHECK(!has_w || (weight_->dim() <= 1 && weight_->numel() == c),
              "inconsistent weight size, expected ", c, " but got ",
              has_w ? weight_->sizes() : at::IntArrayRef{});
  Tensor x = self.reshape({n, c}).contiguous(), t = target.reshape({n}).to(at::kLong).contiguous();
  Tensor w = has_w ? weight_->contiguous() : Tensor();
  Tensor per = at::empty({n}, self.options());
  axon_sampling_params prm{};
  prm.i[0] = n;
  prm.i[1] = c;
  prm.i[2] = p;
  prm.i[3] = has_w;
  prm.f[0] = margin.toDouble();
  run("multi_margin", self.scalar_type(), n, {x, t, w, per}, prm);
  Tensor r = reduce_loss(per, reduction, target.dim() > 0);
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

Tensor multi_margin_loss(const Tensor& self, const Tensor& target, const at::Scalar& p,
                         const at::Scalar& margin, const std::optional<Tensor>& weight,
                         int64_t reduction) {
  Tensor out = at::empty({0}, self.options());
  return multi_margin_loss_out(self, target, p, margin, weight, reduction, out);
}

Tensor& multi_margin_loss_backward_out(const Tensor& grad, const Tensor& self, const Tensor& target,
                                       const at::Scalar& p_, const at::Scalar& margin,
                                       const std::optional<Tensor>& weight_, int64_t reduction,
                                       Tensor& grad_input) {
  c10::DeviceGuard guard(self.device());
  int64_t p = p_.toLong();
  TORCH_CHECK(p == 1 || p == 2, "only p == 1 and p == 2 supported");
  check_float(self, "multi_margin_loss_backward_cpu_kernel", false);
  int64_t n = self.dim() <= 1 ? 1 : self.size(0), c = self.dim() == 0 ? 1 : self.size(-1);
  bool has_w = weight_.has_value() && weight_->defined();
  Tensor x = self.reshape({n, c}).contiguous(), t = target.reshape({n}).to(at::kLong).contiguous();
  Tensor w = has_w ? weight_->contiguous() : Tensor();
  Tensor g = loss_grad(grad, reduction, n);
  Tensor gi = at::empty({n, c}, self.options());
  axon_sampling_params prm{};
  prm.i[0] = n;
  prm.i[1] = c;
  prm.i[2] = p;
  prm.i[3] = has_w;
  prm.f[0] = margin.toDouble();
  backward_reduction(prm, reduction, n);
  run("multi_margin_backward", self.scalar_type(), n, {g, x, t, w, gi}, prm);
  return write_like(grad_input, self, gi);
}

Tensor multi_margin_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                  const at::Scalar& p, const at::Scalar& margin,
                                  const std::optional<Tensor>& weight, int64_t reduction) {
  Tensor gi = at::empty({0}, self.options());
  return multi_margin_loss_backward_out(grad, self, target, p, margin, weight, reduction, gi);
}

std::tuple<Tensor&, Tensor&> multilabel_margin_loss_forward_out(const Tensor& self,
                                                                const Tensor& target,
                                                                int64_t reduction, Tensor& output,
                                                                Tensor& is_target) {
  c10::DeviceGuard guard(self.device());
  check_float(self, "multilabel_margin_loss_forward_out_frame", false);
  TORCH_CHECK(self.dim() <= 2 && target.sizes() == self.sizes(),
              "inconsistent target size: ", target.sizes(), " for input of size: ", self.sizes());
  int64_t n = self.dim() <= 1 ? 1 : self.size(0), c = self.dim() == 0 ? 1 : self.size(-1);
  Tensor x = self.reshape({n, c}).contiguous(),
         t = target.reshape({n, c}).to(at::kLong).contiguous();
  Tensor ist = at::empty({n, c}, self.options()), per = at::empty({n}, self.options());
  axon_sampling_params prm{};
  prm.i[0] = n;
  prm.i[1] = c;
  run("multilabel_margin", self.scalar_type(), n, {x, t, ist, per}, prm);
  Tensor r = reduce_loss(per, reduction, self.dim() == 2);
  at::native::resize_output(output, r.sizes());
  output.copy_(r);
  at::native::resize_output(is_target, self.sizes());
  is_target.copy_(ist.view(self.sizes()));
  return {output, is_target};
}

std::tuple<Tensor, Tensor> multilabel_margin_loss_forward(const Tensor& self, const Tensor& target,
                                                          int64_t reduction) {
  Tensor out = at::empty({0}, self.options()), ist = at::empty({0}, self.options());
  multilabel_margin_loss_forward_out(self, target, reduction, out, ist);
  return {out, ist};
}

Tensor& multilabel_margin_loss_backward_out(const Tensor& grad, const Tensor& self,
                                            const Tensor& target, int64_t reduction,
                                            const Tensor& is_target, Tensor& grad_input) {
  c10::DeviceGuard guard(self.device());
  check_float(self, "multilabel_margin_loss_backward_out_frame", false);
  int64_t n = self.dim() <= 1 ? 1 : self.size(0), c = self.dim() == 0 ? 1 : self.size(-1);
  Tensor x = self.reshape({n, c}).contiguous(),
         t = target.reshape({n, c}).to(at::kLong).contiguous();
  Tensor ist = is_target.reshape({n, c}).contiguous();
  Tensor g = loss_grad(grad, reduction, n);
  Tensor gi = at::empty({n, c}, self.options());
  axon_sampling_params prm{};
  prm.i[0] = n;
  prm.i[1] = c;
  backward_reduction(prm, reduction, n);
  run("multilabel_margin_backward", self.scalar_type(), n, {g, x, t, ist, gi}, prm);
  return write_like(grad_input, self, gi);
}

Tensor multilabel_margin_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                       int64_t reduction, const Tensor& is_target) {
  Tensor gi = at::empty({0}, self.options());
  return multilabel_margin_loss_backward_out(grad, self, target, reduction, is_target, gi);
}

// ---- CTC loss ------------------------------------------------------------------------------

struct CtcSetup {
  axon_sampling_params p{};
  Tensor tg_offset, input_lengths, target_lengths, targets;
};

// Checks the arguments and uploads the (host-side) lengths and per-sample target offsets.
CtcSetup ctc_setup(const Tensor& log_probs, const Tensor& targets, at::IntArrayRef il,
                   at::IntArrayRef tl, int64_t blank) {
  TORCH_CHECK(log_probs.dim() == 3, "ctc_loss: expected log_probs to be 3-D [T, N, C], got ",
              log_probs.sizes());
  TORCH_CHECK_NOT_IMPLEMENTED(
      log_probs.scalar_type() == at::kFloat || log_probs.scalar_type() == at::kDouble,
      "\"ctc_loss_cpu\" not implemented for '", c10::toString(log_probs.scalar_type()), "'");
  check_dtype_supported(log_probs.scalar_type(), log_probs.device().index());
  TORCH_CHECK(targets.scalar_type() == at::kLong || targets.scalar_type() == at::kInt,
              "ctc_loss: targets must be int32 or int64, got ", targets.scalar_type());
  int64_t T = log_probs.size(0), N = log_probs.size(1), C = log_probs.size(2);
  TORCH_CHECK(blank >= 0 && blank < C, "blank must be in label range");
  TORCH_CHECK(int64_t(il.size()) == N, "input_lengths must be of size batch_size");
  TORCH_CHECK(int64_t(tl.size()) == N, "target_lengths must be of size batch_size");
  std::vector<int64_t> offs(N);
  int64_t max_len = 0, pos = 0, tg_stride = 1;
  if (targets.dim() == 1) {
    for (int64_t b = 0; b < N; b++) {
      offs[b] = pos;
      pos += tl[b];
    }
    TORCH_CHECK(targets.numel() >= pos, "Expected tensor to have size at least ", pos,
                " at dimension 0, but got size ", targets.size(0), " for argument #2 'targets'");
    tg_stride = targets.numel() ? targets.stride(0) : 1;
    for (int64_t b = 0; b < N; b++) offs[b] *= tg_stride;
  } else {
    TORCH_CHECK(targets.dim() == 2 && targets.size(0) == N,
                "ctc_loss: expected targets of shape [N, S] or concatenated 1-D targets, got ",
                targets.sizes());
    tg_stride = targets.stride(1);
    for (int64_t b = 0; b < N; b++) {
      offs[b] = b * targets.stride(0);
      TORCH_CHECK(tl[b] <= targets.size(1), "Expected tensor to have size at least ", tl[b],
                  " at dimension 1, but got size ", targets.size(1), " for argument #2 'targets'");
    }
  }
  for (int64_t b = 0; b < N; b++) {
    TORCH_CHECK(tl[b] >= 0, "target_lengths must be non-negative");
    TORCH_CHECK(il[b] >= 0 && il[b] <= T, "Expected input_lengths to have value at most ", T,
                ", but got value ", il[b], " (while checking arguments for ctc_loss_cpu)");
    max_len = std::max(max_len, tl[b]);
  }
  auto to_device = [&](const std::vector<int64_t>& v) {
    return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(log_probs.device());
  };
  CtcSetup s;
  s.tg_offset = to_device(offs);
  s.input_lengths = to_device(il.vec());
  s.target_lengths = to_device(tl.vec());
  s.targets = targets;
  auto& p = s.p;
  p.i[0] = T;
  p.i[1] = N;
  p.i[2] = C;
  p.i[3] = 2 * max_len + 1;
  p.i[4] = blank;
  p.i[5] = log_probs.stride(0);
  p.i[6] = log_probs.stride(1);
  p.i[7] = log_probs.stride(2);
  p.i[8] = tg_stride;
  p.i[9] = targets.scalar_type() == at::kInt;
  return s;
}

std::tuple<Tensor, Tensor> ctc_loss(const Tensor& log_probs, const Tensor& targets,
                                    at::IntArrayRef il, at::IntArrayRef tl, int64_t blank,
                                    bool /*zero_infinity: applied by ctc_loss above this op*/) {
  c10::DeviceGuard guard(log_probs.device());
  CtcSetup s = ctc_setup(log_probs, targets, il, tl, blank);
  int64_t T = s.p.i[0], N = s.p.i[1];
  Tensor nll = at::empty({N}, log_probs.options());
  Tensor log_alpha = at::empty({N, T, s.p.i[3]}, log_probs.options());
  Tensor tg = targets.numel() ? targets : at::zeros({1}, targets.options());
  run("ctc_alpha", log_probs.scalar_type(), N,
      {log_probs, tg, s.tg_offset, s.input_lengths, s.target_lengths, log_alpha, nll}, s.p);
  return {nll, log_alpha};
}

// The gradient: log-beta by the mirrored recursion, then each (t, class) from the alpha-beta
// products of the positions carrying that label, as PyTorch's CPU kernel computes it.
Tensor ctc_loss_backward(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                         at::IntArrayRef il, at::IntArrayRef tl, const Tensor& nll,
                         const Tensor& log_alpha, int64_t blank, bool zero_infinity) {
  c10::DeviceGuard guard(log_probs.device());
  CtcSetup s = ctc_setup(log_probs, targets, il, tl, blank);
  int64_t T = s.p.i[0], N = s.p.i[1], C = s.p.i[2];
  s.p.i[10] = zero_infinity;
  s.p.i[11] = grad.dim() > 0 && grad.numel() > 1 ? grad.stride(0) : 0;
  Tensor out = at::empty({T, N, C}, log_probs.options());
  Tensor log_beta = at::empty(log_alpha.sizes(), log_alpha.options());
  Tensor tg = targets.numel() ? targets : at::zeros({1}, targets.options());
  if (N > 0 && T * C > 0)
    run("ctc_grad", log_probs.scalar_type(), N,
        {grad, log_probs, tg, s.tg_offset, s.input_lengths, s.target_lengths, nll.contiguous(),
         log_alpha.contiguous(), log_beta, out},
        s.p);
  return out;
}

// ---- pairwise distances ----------------------------------------------------------------------

Tensor pdist_forward(const Tensor& self, double p) {
  c10::DeviceGuard guard(self.device());
  TORCH_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: ", self.dim(), "D");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "pdist only supports floating-point dtypes");
  TORCH_CHECK(p >= 0, "pdist only supports non-negative p values");
  check_float(self, "pdist", false);
  int64_t n = self.size(0), m = self.size(1), pairs = n > 1 ? n * (n - 1) / 2 : 0;
  Tensor x = self.contiguous(), out = at::empty({pairs}, self.options());
  axon_sampling_params prm{};
  prm.i[0] = n;
  prm.i[1] = m;
  prm.f[0] = p;
  run("pdist", self.scalar_type(), pairs, {x, out}, prm);
  return out;
}

Tensor pdist_backward(const Tensor& grad, const Tensor& self, double p, const Tensor& dist) {
  c10::DeviceGuard guard(self.device());
  TORCH_CHECK(self.is_contiguous(), "_pdist_backward requires self to be contiguous");
  TORCH_CHECK(dist.is_contiguous(), "_pdist_backward requires pdist to be contiguous");
  check_float(self, "pdist_backward", false);
  int64_t n = self.size(0), m = self.size(1);
  Tensor out = at::empty(self.sizes(), self.options());
  axon_sampling_params prm{};
  prm.i[0] = n;
  prm.i[1] = m;
  prm.f[0] = p;
  if (n <= 1 || p == 0) return out.zero_();
  run("pdist_backward", self.scalar_type(), n * m, {grad.contiguous(), self, dist, out}, prm);
  return out;
}

// x1 [..., P, M] and x2 [..., R, M] with their batch dims broadcast and flattened.
struct CdistShapes {
  std::vector<int64_t> batch;
  int64_t B, P, R, M;
};

CdistShapes cdist_shapes(const Tensor& x1, const Tensor& x2) {
  TORCH_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  TORCH_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  TORCH_CHECK(x1.size(-1) == x2.size(-1),
              "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
              " X2: ", x2.size(-1));
  CdistShapes s;
  s.batch = at::infer_size(x1.sizes().slice(0, x1.dim() - 2), x2.sizes().slice(0, x2.dim() - 2));
  s.B = c10::multiply_integers(s.batch);
  s.P = x1.size(-2);
  s.R = x2.size(-2);
  s.M = x1.size(-1);
  return s;
}

Tensor flat_batch(const Tensor& x, const CdistShapes& s, int64_t rows) {
  std::vector<int64_t> shape = s.batch;
  shape.push_back(rows);
  shape.push_back(s.M);
  return x.expand(shape).reshape({s.B, rows, s.M}).contiguous();
}

Tensor cdist_forward(const Tensor& x1, const Tensor& x2, double p,
                     std::optional<int64_t> /*compute_mode: pointwise is exact for p = 2 too*/) {
  c10::DeviceGuard guard(x1.device());
  TORCH_CHECK(at::isFloatingType(x1.scalar_type()),
              "cdist only supports floating-point dtypes, X1 got: ", x1.scalar_type());
  TORCH_CHECK(at::isFloatingType(x2.scalar_type()),
              "cdist only supports floating-point dtypes, X2 got: ", x2.scalar_type());
  TORCH_CHECK(p >= 0, "cdist only supports non-negative p values");
  TORCH_CHECK(x1.scalar_type() == x2.scalar_type(), "expected x1 and x2 to have the same dtype");
  check_float(x1, "cdist", false);
  CdistShapes s = cdist_shapes(x1, x2);
  std::vector<int64_t> shape = s.batch;
  shape.push_back(s.P);
  shape.push_back(s.R);
  Tensor out = at::empty(shape, x1.options());
  if (out.numel() == 0) return out;
  axon_sampling_params prm{};
  prm.i[0] = s.B;
  prm.i[1] = s.P;
  prm.i[2] = s.R;
  prm.i[3] = s.M;
  prm.f[0] = p;
  run("cdist", x1.scalar_type(), out.numel(), {flat_batch(x1, s, s.P), flat_batch(x2, s, s.R), out},
      prm);
  return out;
}

Tensor cdist_backward(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p,
                      const Tensor& dist) {
  c10::DeviceGuard guard(x1.device());
  check_float(x1, "cdist_backward", false);
  CdistShapes s = cdist_shapes(x1, x2);
  std::vector<int64_t> shape = s.batch;
  shape.push_back(s.P);
  shape.push_back(s.M);
  Tensor out = at::empty(shape, x1.options());
  if (out.numel() == 0) return out;
  if (s.R == 0 || p == 0) return out.zero_();
  axon_sampling_params prm{};
  prm.i[0] = s.B;
  prm.i[1] = s.P;
  prm.i[2] = s.R;
  prm.i[3] = s.M;
  prm.f[0] = p;
  run("cdist_backward", x1.scalar_type(), out.numel(),
      {grad.reshape({s.B, s.P, s.R}).contiguous(), flat_batch(x1, s, s.P), flat_batch(x2, s, s.R),
       dist.reshape({s.B, s.P, s.R}).contiguous(), out},
      prm);
  return out;
}

// ---- fractional max pooling -----------------------------------------------------------------

template <int ND>
std::tuple<Tensor&, Tensor&> fractional_max_pool_out(const Tensor& self, at::IntArrayRef kernel,
                                                     at::IntArrayRef output_size,
                                                     const Tensor& samples, Tensor& output,
                                                     Tensor& indices) {
  c10::DeviceGuard guard(self.device());
  const char* name = ND == 2 ? "fractional_max_pool2d" : "fractional_max_pool3d";
  TORCH_CHECK(int(kernel.size()) == ND && int(output_size.size()) == ND, name,
              ": kernel_size and output_size must have ", ND, " elements");
  TORCH_CHECK(self.dim() == ND + 1 || self.dim() == ND + 2, name, "(): Expected ", ND + 1, "D or ",
              ND + 2, "D tensor, but got: ", self.sizes());
  for (int64_t i = self.dim() - ND; i < self.dim(); i++)
    TORCH_CHECK(self.size(i) > 0, name,
                "(): Expected input to have non-zero size for non-batch "
                "dimensions, but got ",
                self.sizes(), " with dimension ", i, " being empty.");
  check_float(self, name);
  TORCH_CHECK(samples.scalar_type() == self.scalar_type(), name,
              "(): expected random_samples of the input's dtype");
  Tensor x = self.dim() == ND + 1 ? self.unsqueeze(0) : self;
  int64_t n = x.size(0), c = x.size(1);
  // PyTorch's checks: a larger sample batch is fine (the first n rows are used).
  TORCH_CHECK(samples.dim() == 3, "Expect _random_samples to have 3 dimensions, got ",
              samples.dim());
  TORCH_CHECK(samples.size(1) == c, "Expect _random_samples.size(1) equals to input channel size.");
  TORCH_CHECK(samples.size(2) == ND, "Expect _random_samples.size(2) equals to ", ND);
  TORCH_CHECK(samples.size(0) >= n,
              "Expect _random_samples.size(0) no less then input batch size.");
  static const char* dims[] = {"time", "height", "width"};
  axon_sampling_params p{};
  p.i[0] = n;
  p.i[1] = c;
  p.i[2] = ND;
  int lead = 3 - ND;
  for (int k = 0; k < 3; k++) {
    int j = k - lead;
    p.i[3 + k] = j < 0 ? 1 : x.size(2 + j);
    p.i[6 + k] = j < 0 ? 1 : output_size[j];
    p.i[9 + k] = j < 0 ? 1 : kernel[j];
    p.i[14 + k] = j < 0 ? 0 : x.stride(2 + j);
    if (j >= 0)
      TORCH_CHECK(output_size[j] + kernel[j] - 1 <= x.size(2 + j), name, "(): pool ", dims[k], " ",
                  kernel[j], " too large relative to input ", dims[k], " ", x.size(2 + j));
  }
  p.i[12] = x.stride(0);
  p.i[13] = x.stride(1);
  std::vector<int64_t> shape{n, c};
  shape.insert(shape.end(), output_size.begin(), output_size.end());
  Tensor out = at::empty(shape, self.options());
  Tensor idx = at::empty(shape, self.options().dtype(at::kLong));
  run("fractional_max_pool", self.scalar_type(), out.numel(), {x, samples.contiguous(), out, idx},
      p);
  if (self.dim() == ND + 1) {
    shape.erase(shape.begin());
    out = out.squeeze(0);
    idx = idx.squeeze(0);
  }
  at::native::resize_output(output, shape);
  at::native::resize_output(indices, shape);
  output.copy_(out);
  indices.copy_(idx);
  return {output, indices};
}

// The gradient scattered back through the saved indices (flat within each plane).
template <int ND>
Tensor& fractional_max_pool_backward_out(const Tensor& grad, const Tensor& self,
                                         at::IntArrayRef /*kernel*/,
                                         at::IntArrayRef /*output_size*/, const Tensor& indices,
                                         Tensor& grad_input) {
  c10::DeviceGuard guard(self.device());
  TORCH_CHECK(grad.sizes() == indices.sizes(),
              "fractional_max_pool_backward: grad_output and indices must have the same shape");
  int64_t planes = self.dim() == ND + 2 ? self.size(0) * self.size(1) : self.size(0);
  int64_t in_vol = 1;
  for (int64_t i = self.dim() - ND; i < self.dim(); i++) in_vol *= self.size(i);
  Tensor gi = at::zeros({planes, in_vol}, grad.options());
  if (grad.numel() > 0)
    gi.scatter_add_(1, indices.reshape({planes, -1}), grad.reshape({planes, -1}));
  return write_like(grad_input, self, gi);
}

Tensor fractional_max_pool3d_backward(const Tensor& grad, const Tensor& self,
                                      at::IntArrayRef kernel, at::IntArrayRef output_size,
                                      const Tensor& indices) {
  Tensor gi = at::empty({0}, self.options());
  return fractional_max_pool_backward_out<3>(grad, self, kernel, output_size, indices, gi);
}

// ---- max unpooling --------------------------------------------------------------------------
// Each input value written to its saved flat position within its plane of zeros: scatter_ on
// [planes, output volume] (a later duplicate index wins, as on the CPU).

template <int ND>
Tensor& max_unpool_out(const Tensor& self, const Tensor& indices, at::IntArrayRef output_size,
                       Tensor& out) {
  c10::DeviceGuard guard(self.device());
  const char* name = ND == 2 ? "max_unpooling2d" : "max_unpooling3d";
  TORCH_CHECK(indices.scalar_type() == at::kLong,
              "elements in indices should be type int64 but got: ", indices.scalar_type());
  TORCH_CHECK(int(output_size.size()) == ND, "There should be exactly ", ND,
              " elements in output_size, but got ", output_size.size(), " elements.");
  TORCH_CHECK(self.dim() == ND + 1 || self.dim() == ND + 2, "Input to ", name, " should be a ",
              ND + 1, "d or ", ND + 2, "d Tensor, but got a tensor with ", self.dim(),
              " dimensions.");
  TORCH_CHECK(self.sizes() == indices.sizes(),
              "Expected shape of indices to be same as that of the input tensor (", self.sizes(),
              ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t i = 1; i < self.dim(); i++)
    TORCH_CHECK(self.size(i) > 0, name,
                "(): Expected input to have non-zero size for non-batch "
                "dimensions, but got ",
                self.sizes(), " with dimension ", i, " being empty.");
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end() - ND);
  shape.insert(shape.end(), output_size.begin(), output_size.end());
  int64_t planes = c10::multiply_integers(self.sizes().begin(), self.sizes().end() - ND);
  Tensor flat = at::zeros({planes, c10::multiply_integers(output_size)}, self.options());
  if (self.numel() > 0) flat.scatter_(1, indices.reshape({planes, -1}), self.reshape({planes, -1}));
  at::native::resize_output(out, shape);
  out.copy_(flat.view(shape));
  return out;
}

Tensor max_unpool2d(const Tensor& self, const Tensor& indices, at::IntArrayRef output_size) {
  Tensor out = at::empty({0}, self.options());
  return max_unpool_out<2>(self, indices, output_size, out);
}

Tensor& max_unpool3d_out(const Tensor& self, const Tensor& indices, at::IntArrayRef output_size,
                         at::IntArrayRef stride, at::IntArrayRef padding, Tensor& out) {
  TORCH_CHECK(stride.size() == 3,
              "There should be exactly three elements (depth, height, width) "
              "in stride, but got: ",
              stride.size(), " elements.");
  TORCH_CHECK(padding.size() == 3,
              "There should be exactly three elements (depth, height, width) "
              "in padding, but got: ",
              padding.size(), " elements.");
  TORCH_CHECK(stride[0] > 0 && stride[1] > 0 && stride[2] > 0,
              "strides should be greater than zero, but got stride: ", stride);
  return max_unpool_out<3>(self, indices, output_size, out);
}

Tensor max_unpool3d(const Tensor& self, const Tensor& indices, at::IntArrayRef output_size,
                    at::IntArrayRef stride, at::IntArrayRef padding) {
  Tensor out = at::empty({0}, self.options());
  return max_unpool3d_out(self, indices, output_size, stride, padding, out);
}

// ---- embedding renorm -------------------------------------------------------------------------
// Rows of `self` named by `indices` (each once) whose p-norm exceeds max_norm are scaled to
// max_norm / (norm + 1e-7), in float for float16 / bfloat16. Composed of native ops.

Tensor& embedding_renorm_(Tensor& self, const Tensor& indices, double max_norm, double norm_type) {
  c10::DeviceGuard guard(self.device());
  TORCH_CHECK(self.dim() == 2, "embedding_renorm_(): expected self to be 2-D, but got ", self.dim(),
              "-D");
  TORCH_CHECK(indices.scalar_type() == at::kLong || indices.scalar_type() == at::kInt,
              "embedding_renorm_(): Expected dtype int32 or int64 for indices; but got ",
              indices.scalar_type());
  check_float(self, "embedding_renorm_");
  if (indices.numel() == 0) return self;
  Tensor uniq = std::get<0>(at::_unique(indices.reshape({-1}), false, false));
  Tensor rows = self.index_select(0, uniq);
  Tensor norms =
      at::linalg_vector_norm(rows, norm_type, {1}, true).to(acc_type(self.scalar_type()));
  Tensor scale = at::where(norms > max_norm, max_norm / (norms + 1e-7), at::ones_like(norms));
  self.index_copy_(0, uniq, (rows.to(norms.scalar_type()) * scale).to(self.scalar_type()));
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("upsample_bicubic2d.out", bicubic_out);
  m.impl("upsample_bicubic2d_backward.grad_input",
         resample_backward_out<kBicubicBackward, kBicubicBackward, true>);
  m.impl("_upsample_bilinear2d_aa.out", aa_bilinear_out);
  m.impl("_upsample_bilinear2d_aa_backward.grad_input",
         resample_backward_out<kAABilinearBackward, kAABackwardCpu, false>);
  m.impl("grid_sampler_2d", grid_sampler<2>);
  m.impl("grid_sampler_2d_backward", grid_sampler_backward<2>);
  m.impl("grid_sampler_3d", grid_sampler<3>);
  m.impl("grid_sampler_3d_backward", grid_sampler_backward<3>);
  m.impl("_embedding_bag", embedding_bag);
  m.impl("_embedding_bag_forward_only", embedding_bag);
  m.impl("_embedding_bag_backward", embedding_bag_backward);
  m.impl("_embedding_bag_dense_backward", embedding_bag_dense_backward);
  m.impl("_embedding_bag_per_sample_weights_backward", embedding_bag_psw_backward);
  m.impl("multi_margin_loss", multi_margin_loss);
  m.impl("multi_margin_loss.out", multi_margin_loss_out);
  m.impl("multi_margin_loss_backward", multi_margin_loss_backward);
  m.impl("multi_margin_loss_backward.grad_input", multi_margin_loss_backward_out);
  m.impl("multilabel_margin_loss_forward", multilabel_margin_loss_forward);
  m.impl("multilabel_margin_loss_forward.output", multilabel_margin_loss_forward_out);
  m.impl("multilabel_margin_loss_backward", multilabel_margin_loss_backward);
  m.impl("multilabel_margin_loss_backward.grad_input", multilabel_margin_loss_backward_out);
  m.impl("_ctc_loss", ctc_loss);
  m.impl("_ctc_loss_backward", ctc_loss_backward);
  m.impl("_pdist_forward", pdist_forward);
  m.impl("_pdist_backward", pdist_backward);
  m.impl("_cdist_forward", cdist_forward);
  m.impl("_cdist_backward", cdist_backward);
  m.impl("fractional_max_pool2d.output", fractional_max_pool_out<2>);
  m.impl("fractional_max_pool2d_backward.grad_input", fractional_max_pool_backward_out<2>);
  m.impl("fractional_max_pool3d.output", fractional_max_pool_out<3>);
  m.impl("fractional_max_pool3d_backward", fractional_max_pool3d_backward);
  m.impl("fractional_max_pool3d_backward.grad_input", fractional_max_pool_backward_out<3>);
  m.impl("max_unpool2d", max_unpool2d);
  m.impl("max_unpool2d.out", max_unpool_out<2>);
  m.impl("max_unpool3d", max_unpool3d);
  m.impl("max_unpool3d.out", max_unpool3d_out);
  m.impl("embedding_renorm_", embedding_renorm_);
}

}  // namespace axon
