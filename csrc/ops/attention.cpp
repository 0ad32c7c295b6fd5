// The fused attention of nn.MultiheadAttention's and nn.TransformerEncoderLayer's inference
// fast path (_native_multi_head_attention, _transformer_encoder_layer_fwd), which PyTorch takes
// on the CPU, CUDA and PrivateUse1 devices alike. The encoder layer is PyTorch's own
// device-generic composition; the attention is written here in axon ops (projections as one
// matrix product, scores, masked softmax, output projection), as CUDA composes it.
#include <ATen/NativeFunctions.h>
#include <torch/library.h>

#include <cmath>
#include <limits>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Tensor;

// [batch, seq, embed] -> [batch, heads, seq, embed / heads]
Tensor split_heads(const Tensor& t, int64_t heads) {
  return t.view({t.size(0), t.size(1), heads, t.size(2) / heads}).transpose(1, 2);
}

// The mask as [batch, heads, target, source] broadcasts: mask_type 0 is an attention mask
// [target, source], 1 a key padding mask [batch, source], 2 (or none) already broadcastable.
Tensor mask_for_scores(const Tensor& mask, std::optional<int64_t> mask_type) {
  if (mask_type == 1) return mask.view({mask.size(0), 1, 1, mask.size(1)});
  if (mask.dim() == 2) return mask.view({1, 1, mask.size(0), mask.size(1)});
  return mask.dim() == 3 ? mask.unsqueeze(1) : mask;
}

std::tuple<Tensor, Tensor> native_multi_head_attention(
    const Tensor& query, const Tensor& key, const Tensor& value, int64_t embed_dim,
    int64_t num_head, const Tensor& qkv_weight, const Tensor& qkv_bias, const Tensor& proj_weight,
    const Tensor& proj_bias, const std::optional<Tensor>& mask, bool need_weights,
    bool average_attn_weights, std::optional<int64_t> mask_type) {
  TORCH_CHECK(query.dim() == 3 && key.dim() == 3 && value.dim() == 3,
              "_native_multi_head_attention: expected [batch, seq, embed] inputs, got ",
              query.sizes(), ", ", key.sizes(), ", ", value.sizes());
  TORCH_CHECK(query.size(2) == embed_dim && embed_dim % num_head == 0,
              "_native_multi_head_attention: embed_dim ", embed_dim, " must match the query (",
              query.size(2), ") and divide into ", num_head, " heads");
  // Self-attention projects all three at once; otherwise each with its third of the weights.
  Tensor q, k, v;
  if (query.is_same(key) && key.is_same(value)) {
    auto qkv = at::linear(query, qkv_weight, qkv_bias).chunk(3, -1);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    auto w = qkv_weight.chunk(3, 0);
    auto b = qkv_bias.chunk(3, 0);
    q = at::linear(query, w[0], b[0]), k = at::linear(key, w[1], b[1]),
    v = at::linear(value, w[2], b[2]);
  }
  const double scale = 1.0 / std::sqrt(double(embed_dim / num_head));
  Tensor scores =
      at::matmul(split_heads(q, num_head).mul(scale), split_heads(k, num_head).transpose(-2, -1));
  Tensor blocked;  // where attention is not allowed (true)
  if (mask.has_value() && mask->defined()) {
    Tensor m = mask_for_scores(*mask, mask_type);
    if (m.scalar_type() == at::kBool) {
      blocked = m;
      scores = scores.masked_fill(blocked, -std::numeric_limits<double>::infinity());
    } else {
      scores = scores.add(m);
    }
  }
  Tensor weights = at::softmax(scores, -1);
  // A row with every position blocked attends to nothing (zeros, not NaN), as _masked_softmax.
  if (blocked.defined()) weights = weights.masked_fill(blocked, 0.0);
  Tensor heads_out = at::matmul(weights, split_heads(v, num_head));
  Tensor out =
      at::linear(heads_out.transpose(1, 2).reshape({query.size(0), query.size(1), embed_dim}),
                 proj_weight, proj_bias);
  if (!need_weights) return {out, Tensor()};
  return {out, average_attn_weights ? weights.mean(1) : weights};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_native_multi_head_attention", native_multi_head_attention);
  m.impl("_transformer_encoder_layer_fwd", TORCH_FN(at::native::transformer_encoder_layer_forward));
}

}  // namespace axon
