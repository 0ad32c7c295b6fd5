// The fused attention of nn.MultiheadAttention's and nn.TransformerEncoderLayer's inference
// fast path (_native_multi_head_attention, _transformer_encoder_layer_fwd), which PyTorch takes
// on the CPU, CUDA and PrivateUse1 devices alike. The encoder layer is PyTorch's own
// device-generic composition; the attention is written here in axon ops (projections as one
// matrix product, scores, masked softmax, output projection), as CUDA composes it.
//
// F.scaled_dot_product_attention: PyTorch asks the device's _fused_sdp_choice_stub which backend
// to take. Axon answers OVERRIDEABLE when the fused kernels (runtime/kernels/attention.cl) cover
// the inputs, so SDPA runs as _scaled_dot_product_fused_attention_overrideable (and its
// backward), which Inductor keeps as one extern call; otherwise MATH, PyTorch's decomposition.
//
// nn.TransformerEncoder's fast path also asks whether a padding mask is left-aligned
// (_nested_tensor_from_mask_left_aligned), answered here.
#include <ATen/NativeFunctions.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/native/transformers/sdp_utils_cpp.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

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

// ---- scaled dot-product attention -------------------------------------------------------------

bool is_fused_dtype(at::ScalarType t) {
  return t == at::kFloat || t == at::kHalf || t == at::kBFloat16;
}

// Whether the fused kernels cover these SDPA inputs. Sizes are compared as SymInts, so under
// torch.compile with dynamic shapes the answer becomes guards instead of an error.
bool fused_fits(const Tensor& q, const Tensor& k, const Tensor& v,
                const std::optional<Tensor>& mask, double dropout_p, bool enable_gqa) {
  if (dropout_p > 0) return false;  // no random numbers in the kernels: MATH samples the mask
  if (q.is_nested() || k.is_nested() || v.is_nested()) return false;
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) return false;
  const at::ScalarType t = q.scalar_type();
  if (!is_fused_dtype(t) || k.scalar_type() != t || v.scalar_type() != t) return false;
  if (!k.device().is_privateuseone() || k.device() != q.device() || v.device() != q.device())
    return false;
  if (k.sym_size(0) != q.sym_size(0) || v.sym_size(0) != q.sym_size(0)) return false;
  // Equal heads, or grouped-query attention: query heads in groups over the key heads.
  const c10::SymInt hq = q.sym_size(1), hk = k.sym_size(1);
  if (v.sym_size(1) != hk) return false;
  if (hq != hk && !(enable_gqa && hk > 0 && hq % hk == 0)) return false;
  if (k.sym_size(2) != v.sym_size(2) || k.sym_size(3) != q.sym_size(3)) return false;
  const int64_t max_dim = AXON_ATTENTION_MAX_HEAD_DIM;
  if (q.sym_size(3) > max_dim || v.sym_size(3) > max_dim) return false;
  if (q.sym_numel() == 0 || k.sym_numel() == 0 || v.sym_numel() == 0) return false;
  if (mask.has_value() && mask->defined()) {
    const Tensor& m = *mask;
    if (m.scalar_type() != at::kBool && m.scalar_type() != t) return false;
    if (m.is_nested() || m.dim() > 4 || m.device() != q.device()) return false;
    // Broadcastable to [batch, heads, q_len, kv_len], aligned from the right.
    const std::array<c10::SymInt, 4> full{q.sym_size(0), hq, q.sym_size(2), k.sym_size(2)};
    for (int64_t d = 1; d <= m.dim(); d++) {
      const c10::SymInt size = m.sym_size(-d);
      if (size != 1 && size != full[4 - d]) return false;
    }
  }
  return true;
}

// Whether the fused kernels beat the math path for these sizes. The math path materialises the
// batch x heads x q_len x kv_len scores (and, when training, their softmax for the backward) and
// runs them through the matrix-product and softmax kernels; on a CPU device that is faster than
// the fused kernels' per-row loops until the scores get large (measured on PoCL, 2 cores: the
// forward breaks even near 1k x 1k per head, the fused backward stays about 2x slower), so the
// fused path is taken where it saves memory that matters: scores of more than 64 MiB without
// gradients (where it is also faster) and of more than 1 GiB with them.
bool fused_pays(const Tensor& q, const Tensor& k, const Tensor& v) {
  const c10::SymInt scores = q.sym_size(0) * q.sym_size(1) * q.sym_size(2) * k.sym_size(2);
  const bool training =
      at::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad());
  const int64_t limit_bytes = training ? (int64_t(1) << 30) : (int64_t(64) << 20);
  return scores * int64_t(sizeof(float)) > limit_bytes;
}

int64_t fused_sdp_choice(const Tensor& q, const Tensor& k, const Tensor& v,
                         const std::optional<Tensor>& mask, double dropout_p, bool is_causal,
                         std::optional<double> scale, bool enable_gqa) {
  (void)is_causal, (void)scale;  // both handled by the kernels
  auto& context = at::globalContext();
  // sdpa_kernel(...) without OVERRIDEABLE turns the fused path off; without MATH, on whatever
  // the sizes.
  if (context.userEnabledOverrideableSDP() && fused_fits(q, k, v, mask, dropout_p, enable_gqa) &&
      (!context.userEnabledMathSDP() || fused_pays(q, k, v)))
    return static_cast<int64_t>(sdp::SDPBackend::overrideable);
  return static_cast<int64_t>(sdp::SDPBackend::math);
}

// The kernels read rows whose last dimension is contiguous; anything else is copied.
Tensor rows_contiguous(const Tensor& t) {
  return t.size(-1) == 1 || t.stride(-1) == 1 ? t : t.contiguous();
}

// 3-d [heads, seq, dim] inputs (which the op's meta function accepts) as a batch of one.
Tensor as_4d(const Tensor& t) {
  return t.dim() == 3 ? t.unsqueeze(0) : t;
}

void strides3(const Tensor& t4, int64_t* s) {
  for (int d = 0; d < 3; d++) s[d] = t4.stride(d);
}

// The attention output in the query's layout (meta__scaled_dot_product_fused_attention_
// overrideable's alloc_with_matching_layout), so eager and compiled code agree on its strides.
Tensor alloc_matching(const Tensor& query, at::IntArrayRef shape) {
  if (query.sizes().equals(shape)) return at::empty_like(query);
  std::vector<int64_t> order(query.dim());
  for (int64_t d = 0; d < query.dim(); d++) order[d] = d;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return query.stride(a) > query.stride(b); });
  std::vector<int64_t> strides(query.dim());
  int64_t stride = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[*it] = stride;
    stride *= shape[*it];
  }
  return at::empty_strided(shape, strides, query.options());
}

// An output the kernels can write (last dimension contiguous): the tensor itself, or a
// contiguous stand-in copied back afterwards by finish_output.
Tensor writable(const Tensor& t) {
  return t.dim() == 0 || t.size(-1) == 1 || t.stride(-1) == 1 ? t
                                                              : at::empty(t.sizes(), t.options());
}
void finish_output(Tensor& t, const Tensor& written) {
  if (!t.is_same(written)) t.copy_(written);
}

struct Sdpa {
  Tensor q, k, v, mask;  // 4-d, rows contiguous; mask expanded to [B, H, L, S] (or undefined)
  int64_t batch, heads, kv_heads, q_len, kv_len, head_dim, v_head_dim;
  double scale;
};

Sdpa prepare_sdpa(const Tensor& query, const Tensor& key, const Tensor& value,
                  const Tensor& attn_bias, double dropout_p, std::optional<double> scale,
                  const char* op) {
  TORCH_CHECK(dropout_p == 0, op,
              ": axon's fused attention has no dropout (dropout_p = ", dropout_p,
              "); _fused_sdp_choice sends dropout to the math path");
  TORCH_CHECK((query.dim() == 4 || query.dim() == 3) && key.dim() == query.dim() &&
                  value.dim() == query.dim(),
              op, ": expected 3-d or 4-d query, key and value of one rank, got ", query.sizes(),
              ", ", key.sizes(), ", ", value.sizes());
  const at::ScalarType t = query.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(is_fused_dtype(t), "axon: ", op, " is not implemented for ", t);
  TORCH_CHECK(key.scalar_type() == t && value.scalar_type() == t, op,
              ": query, key and value must have one dtype, got ", t, ", ", key.scalar_type(), ", ",
              value.scalar_type());
  Sdpa s;
  s.q = rows_contiguous(as_4d(query));
  s.k = rows_contiguous(as_4d(key));
  s.v = rows_contiguous(as_4d(value));
  s.batch = s.q.size(0), s.heads = s.q.size(1), s.q_len = s.q.size(2), s.head_dim = s.q.size(3);
  s.kv_heads = s.k.size(1), s.kv_len = s.k.size(2), s.v_head_dim = s.v.size(3);
  TORCH_CHECK(s.k.size(0) == s.batch && s.v.size(0) == s.batch, op,
              ": query, key and value must have one batch size, got ", query.sizes(), ", ",
              key.sizes(), ", ", value.sizes());
  TORCH_CHECK(s.v.size(1) == s.kv_heads && s.v.size(2) == s.kv_len && s.k.size(3) == s.head_dim, op,
              ": key ", key.sizes(), " and value ", value.sizes(), " do not match query ",
              query.sizes());
  TORCH_CHECK(s.kv_heads > 0 && s.heads % s.kv_heads == 0, op, ": ", s.heads,
              " query heads do not divide into ", s.kv_heads, " key heads");
  TORCH_CHECK(
      s.head_dim <= AXON_ATTENTION_MAX_HEAD_DIM && s.v_head_dim <= AXON_ATTENTION_MAX_HEAD_DIM, op,
      ": head dimensions up to ", AXON_ATTENTION_MAX_HEAD_DIM, " are supported, got ", s.head_dim,
      " and ", s.v_head_dim);
  check_dtype_supported(t, query.device().index());
  s.scale = scale.has_value() ? *scale : 1.0 / std::sqrt(double(s.head_dim));
  if (attn_bias.defined()) {
    Tensor m = attn_bias;
    // PyTorch's SDPA hands over float masks only; a direct caller's boolean mask means the same.
    if (m.scalar_type() == at::kBool)
      m = at::where(m, at::zeros({}, query.options()),
                    at::full({}, -std::numeric_limits<double>::infinity(), query.options()));
    else if (m.scalar_type() != t)
      m = m.to(t);
    s.mask = m.expand({s.batch, s.heads, s.q_len, s.kv_len});
  }
  return s;
}

axon_attention_desc desc_of(const Sdpa& s) {
  axon_attention_desc d{};
  d.batch = s.batch, d.heads = s.heads, d.kv_heads = s.kv_heads;
  d.q_len = s.q_len, d.kv_len = s.kv_len, d.head_dim = s.head_dim, d.v_head_dim = s.v_head_dim;
  strides3(s.q, d.q_strides);
  strides3(s.k, d.k_strides);
  strides3(s.v, d.v_strides);
  d.scale = s.scale;
  d.q = s.q.data_ptr();
  d.k = s.k.data_ptr();
  d.v = s.v.data_ptr();
  if (s.mask.defined()) {
    for (int i = 0; i < 4; i++) d.mask_strides[i] = s.mask.stride(i);
    d.mask = s.mask.data_ptr();
  }
  return d;
}

std::tuple<Tensor, Tensor, Tensor, Tensor, c10::SymInt, c10::SymInt, Tensor, Tensor, Tensor>
sdpa_overrideable(const Tensor& query, const Tensor& key, const Tensor& value,
                  const std::optional<Tensor>& attn_bias, double dropout_p, bool is_causal,
                  bool return_debug_mask, std::optional<double> scale) {
  c10::DeviceGuard guard(query.device());
  const char* op = "_scaled_dot_product_fused_attention_overrideable";
  TORCH_CHECK(!return_debug_mask, op, ": axon returns no debug attention mask");
  Sdpa s = prepare_sdpa(query, key, value, attn_bias.value_or(Tensor()), dropout_p, scale, op);
  std::vector<int64_t> out_shape = query.sizes().vec();
  out_shape.back() = s.v_head_dim;
  Tensor out = alloc_matching(query, out_shape);
  Tensor out_w = writable(out);
  Tensor lse = at::empty({s.batch, s.heads, s.q_len}, query.options().dtype(at::kFloat));
  axon_attention_desc d = desc_of(s);
  Tensor out4 = as_4d(out_w);
  strides3(out4, d.out_strides);
  d.is_causal = is_causal;
  d.out = out4.data_ptr();
  d.lse = lse.data_ptr();
  AXON_CHECK(axon_attention_forward(stream_for(query), to_axon_dtype(query.scalar_type()), &d));
  finish_output(out, out_w);
  // No dropout, so the philox state is a placeholder, as in the meta function.
  Tensor seed = at::empty({}, at::dtype(at::kLong)), offset = at::empty({}, at::dtype(at::kLong));
  return {out,  lse,    Tensor(), Tensor(), c10::SymInt(s.q_len), c10::SymInt(s.kv_len),
          seed, offset, Tensor()};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> sdpa_overrideable_backward(
    const Tensor& grad_out, const Tensor& query, const Tensor& key, const Tensor& value,
    const Tensor& attn_bias, std::array<bool, 4> grad_input_mask, const Tensor& out,
    const Tensor& logsumexp, const Tensor& cum_seq_q, const Tensor& cum_seq_k, c10::SymInt max_q,
    c10::SymInt max_k, double dropout_p, bool is_causal, const Tensor& philox_seed,
    const Tensor& philox_offset, std::optional<double> scale) {
  (void)cum_seq_q, (void)cum_seq_k, (void)max_q, (void)max_k, (void)philox_seed,
      (void)philox_offset;  // fixed-length batches, no dropout
  c10::DeviceGuard guard(query.device());
  const char* op = "_scaled_dot_product_fused_attention_overrideable_backward";
  const bool want_mask = grad_input_mask[3] && attn_bias.defined();
  Tensor gq, gk, gv, gm;
  if (!grad_out.defined()) {  // the output was not used: every gradient is zero
    if (grad_input_mask[0]) gq = at::zeros_like(query);
    if (grad_input_mask[1]) gk = at::zeros_like(key);
    if (grad_input_mask[2]) gv = at::zeros_like(value);
    if (want_mask) gm = at::zeros_like(attn_bias);
    return {gq, gk, gv, gm};
  }
  Sdpa s = prepare_sdpa(query, key, value, attn_bias, dropout_p, scale, op);
  const at::ScalarType t = query.scalar_type();
  TORCH_CHECK(logsumexp.numel() == s.batch * s.heads * s.q_len, op, ": logsumexp of shape ",
              logsumexp.sizes(), " does not match query ", query.sizes());
  TORCH_CHECK(
      out.numel() == s.batch * s.heads * s.q_len * s.v_head_dim && grad_out.numel() == out.numel(),
      op, ": out ", out.sizes(), " and grad_out ", grad_out.sizes(),
      " do not match the attention's output");
  Tensor o = rows_contiguous(as_4d(out.to(t))).expand({s.batch, s.heads, s.q_len, s.v_head_dim});
  Tensor dout =
      rows_contiguous(as_4d(grad_out.to(t))).expand({s.batch, s.heads, s.q_len, s.v_head_dim});
  Tensor lse = logsumexp.to(at::kFloat).contiguous();
  Tensor delta = at::empty({s.batch, s.heads, s.q_len}, query.options().dtype(at::kFloat));
  axon_attention_desc d = desc_of(s);
  d.is_causal = is_causal;
  strides3(o, d.out_strides);
  strides3(dout, d.grad_out_strides);
  d.out = o.data_ptr();
  d.grad_out = dout.data_ptr();
  d.lse = lse.data_ptr();
  d.delta = delta.data_ptr();
  Tensor gq_w, gk_w, gv_w, gm_full;
  if (grad_input_mask[0]) {
    gq = at::empty_like(query);
    gq_w = writable(gq);
    strides3(as_4d(gq_w), d.grad_q_strides);
    d.grad_q = gq_w.data_ptr();
  }
  // The key-side kernel gives dK and dV together.
  if (grad_input_mask[1] || grad_input_mask[2]) {
    gk = at::empty_like(key);
    gv = at::empty_like(value);
    gk_w = writable(gk);
    gv_w = writable(gv);
    strides3(as_4d(gk_w), d.grad_k_strides);
    strides3(as_4d(gv_w), d.grad_v_strides);
    d.grad_k = gk_w.data_ptr();
    d.grad_v = gv_w.data_ptr();
  }
  if (want_mask) {
    gm_full = at::empty({s.batch, s.heads, s.q_len, s.kv_len}, query.options().dtype(at::kFloat));
    d.grad_mask = gm_full.data_ptr();
  }
  AXON_CHECK(axon_attention_backward(stream_for(query), to_axon_dtype(t), &d));
  if (gq.defined()) finish_output(gq, gq_w);
  if (gk.defined()) finish_output(gk, gk_w);
  if (gv.defined()) finish_output(gv, gv_w);
  if (!grad_input_mask[1]) gk = Tensor();
  if (!grad_input_mask[2]) gv = Tensor();
  // A broadcast mask's gradient sums over the dimensions it was broadcast along.
  if (want_mask) gm = gm_full.sum_to_size(attn_bias.sizes()).to(attn_bias.scalar_type());
  return {gq, gk, gv, gm};
}

// nn.TransformerEncoder's fast path asks whether a padding mask ([batch, seq], true where a
// token is) keeps each row's tokens at its start: no row has a token after a gap.
bool nested_mask_left_aligned(const Tensor& /*values*/, const Tensor& mask) {
  TORCH_CHECK(mask.dim() == 2 && mask.scalar_type() == at::kBool,
              "_nested_tensor_from_mask_left_aligned: expected a 2-d bool mask, got ",
              mask.scalar_type(), " ", mask.sizes());
  const int64_t len = mask.size(1);
  if (len < 2) return true;
  Tensor token_after_gap =
      mask.narrow(1, 1, len - 1).logical_and(mask.narrow(1, 0, len - 1).logical_not());
  return !token_after_gap.any().item<bool>();
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("_native_multi_head_attention", native_multi_head_attention);
  m.impl("_transformer_encoder_layer_fwd", TORCH_FN(at::native::transformer_encoder_layer_forward));
  m.impl("_fused_sdp_choice", fused_sdp_choice);
  m.impl("_scaled_dot_product_fused_attention_overrideable", sdpa_overrideable);
  m.impl("_scaled_dot_product_fused_attention_overrideable_backward", sdpa_overrideable_backward);
  m.impl("_nested_tensor_from_mask_left_aligned", nested_mask_left_aligned);
}

}  // namespace axon

// F.scaled_dot_product_attention asks this stub, not the _fused_sdp_choice operator.
namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &axon::fused_sdp_choice)
}  // namespace at::native
