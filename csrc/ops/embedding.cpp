// Embeddings: embedding's deterministic backward, embedding bags (forward, offset2bag, the
// backward's rows and per-sample weight gradient) in the runtime's embedding family
// (kernels/embedding.cl, axon/embedding.h), and embedding renorm, composed of native ops.
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "axon_glue.h"
#include "nn_checks.h"

extern "C" {
#include "axon/embedding.h"
}

namespace axon {
namespace {

using at::Tensor;

// ---- embedding backward -------------------------------------------------------------------------

Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices,
                                int64_t num_weights, int64_t padding_idx, bool scale_grad_by_freq) {
  c10::DeviceGuard guard(grad_output.device());
  check_floating(grad_output, "embedding_backward");
  TORCH_CHECK(indices.scalar_type() == at::kLong || indices.scalar_type() == at::kInt,
              "embedding_backward: indices must be int64 or int32, got ", indices.scalar_type());
  Tensor idx = indices.reshape({-1}).contiguous();
  int64_t n = idx.numel(), dim = grad_output.size(-1);
  Tensor g = grad_output.reshape({n, dim}).contiguous();
  Tensor out = at::zeros({num_weights, dim}, grad_output.options());
  Tensor scratch = at::empty({3 * std::max<int64_t>(n, 1)}, idx.options().dtype(at::kLong));
  axon_embedding_bwd_desc d{};
  d.n = n;
  d.dim = dim;
  d.num_weights = num_weights;
  d.padding_idx = padding_idx;
  d.scale_by_freq = scale_grad_by_freq;
  d.index_is_int32 = idx.scalar_type() == at::kInt;
  d.grad = g.data_ptr();
  d.index = idx.data_ptr();
  d.scratch = scratch.data_ptr();
  d.out = out.data_ptr();
  AXON_CHECK(axon_embedding_backward(stream_for(g), to_axon_dtype(g.scalar_type()), &d));
  return out;
}

// ---- embedding bags ------------------------------------------------------------------------

// Modes: 0 sum, 1 mean, 2 max.
constexpr int64_t kModeSum = 0, kModeMax = 2;

void check_index(const Tensor& t, const char* name) {
  TORCH_CHECK(t.scalar_type() == at::kLong || t.scalar_type() == at::kInt,
              "embedding_bag: expected ", name, " to be int32 or int64, but got ", t.scalar_type());
}

axon_embedding_bag_desc bag_desc(int64_t bags, const Tensor& weight, const Tensor& indices,
                                 const Tensor& offsets, int64_t mode, int64_t padding_idx,
                                 bool has_psw) {
  axon_embedding_bag_desc d{};
  axon_embedding_bag_args& a = d.args;
  a.bags = bags;
  a.dim = weight.size(1);
  a.indices = indices.numel();
  a.offsets = offsets.defined() ? offsets.numel() : 0;
  a.mode = mode;
  a.padding_idx = padding_idx;
  a.has_per_sample_weights = has_psw;
  a.indices_int32 = indices.scalar_type() == at::kInt;
  a.offsets_int32 = offsets.defined() && offsets.scalar_type() == at::kInt;
  a.weight_strides[0] = weight.stride(0);
  a.weight_strides[1] = weight.stride(1);
  a.num_weights = weight.size(0);
  d.weight = data_or_null(weight);
  d.indices = data_or_null(indices);
  d.offsets = data_or_null(offsets);
  return d;
}

void run_bag(axon_embedding_bag_kernel kernel, const Tensor& like,
             const axon_embedding_bag_desc& d) {
  AXON_CHECK(axon_embedding_bag(stream_for(like), to_axon_dtype(like.scalar_type()), kernel, &d));
}

Tensor offset2bag_of(const Tensor& offsets, int64_t bags, int64_t n, const Tensor& like) {
  Tensor o2b = at::empty({n}, like.options().dtype(at::kLong));
  if (bags == 0) return o2b.fill_(-1);
  axon_embedding_bag_desc d{};
  d.args.bags = bags;
  d.args.indices = n;
  d.args.offsets_int32 = offsets.scalar_type() == at::kInt;
  d.offsets = data_or_null(offsets);
  d.offset2bag = data_or_null(o2b);
  run_bag(AXON_EMBEDDING_BAG_OFFSET2BAG, like, d);
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
  axon_embedding_bag_desc d = bag_desc(bags, weight, indices, offsets, mode, padding_idx, has_psw);
  d.per_sample_weights = data_or_null(psw);
  d.output = data_or_null(out);
  d.bag_size = data_or_null(bag_size);
  d.max_indices = data_or_null(max_indices);
  run_bag(AXON_EMBEDDING_BAG_FORWARD, weight, d);
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
  Tensor o2b = offset2bag.to(at::kLong).contiguous(), sizes = bag_size.to(at::kLong).contiguous(),
         maxes = max_indices.to(at::kLong).contiguous();
  axon_embedding_bag_desc d{};
  axon_embedding_bag_args& a = d.args;
  a.bags = bags;
  a.dim = dim;
  a.indices = n;
  a.mode = mode;
  a.padding_idx = padding_idx;
  a.has_per_sample_weights = has_psw;
  a.indices_int32 = indices.scalar_type() == at::kInt;
  d.grad = data_or_null(grad);
  d.indices = data_or_null(indices);
  d.offset2bag = data_or_null(o2b);
  d.bag_size = data_or_null(sizes);
  d.max_indices = data_or_null(maxes);
  d.per_sample_weights = data_or_null(psw);
  d.output = data_or_null(rows);
  run_bag(AXON_EMBEDDING_BAG_ROWS, grad, d);
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
  axon_embedding_bag_desc d =
      bag_desc(grad.size(0), weight, indices, Tensor(), mode, padding_idx, false);
  d.args.dim = grad.size(1);
  d.grad = data_or_null(grad);
  d.offset2bag = data_or_null(o2b);
  d.output = data_or_null(out);
  run_bag(AXON_EMBEDDING_BAG_PSW_BACKWARD, grad, d);
  return out;
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

AXON_ATEN_IMPL(m) {
  m.impl("embedding_dense_backward", embedding_dense_backward);
  m.impl("_embedding_bag", embedding_bag);
  m.impl("_embedding_bag_forward_only", embedding_bag);
  m.impl("_embedding_bag_backward", embedding_bag_backward);
  m.impl("_embedding_bag_dense_backward", embedding_bag_dense_backward);
  m.impl("_embedding_bag_per_sample_weights_backward", embedding_bag_psw_backward);
  m.impl("embedding_renorm_", embedding_renorm_);
}

}  // namespace axon
