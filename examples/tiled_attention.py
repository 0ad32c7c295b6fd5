"""Inference attention in OpenCL C: online softmax over blocks of keys, registered as a torch op.

    out = softmax(q @ k^T / sqrt(d) [+ causal mask]) @ v      for q, k, v of (batch, heads, seq, d)

The scores never exist as a (seq, seq) matrix: a work-item owns ROWS query rows and walks the
keys a block at a time, keeping per row the running maximum m and sum l of the softmax and an
output accumulator that is rescaled by exp(m_old - m_new) whenever the maximum grows (the
flash-attention recurrence). The example shows, in order:

1. the kernels, written for a CPU-class device first (the default device, PoCL, runs a
   work-group as a loop over its work-items, so the fastest shape is one work-item per group
   doing a lot of SIMD work):
   - the keys are first transposed into (head_dim, keys) so that the scores of a query row
     against 16 keys are one float16 register, built by broadcast FMAs over the head
     dimension: no horizontal sum per score;
   - each work-item takes 8 query rows at once, so every key and value vector loaded feeds
     8 FMAs: a block's 8 x 32 scores stay in registers, and the 8 output rows are updated
     one vector column at a time, 8 accumulators in registers over the block's 32 values;
   - the softmax uses exp2 on scores pre-scaled by log2(e) / sqrt(d).
   On a GPU the same source runs with one row per work-item in groups of 64 (build options),
   correct though not tuned: a GPU kernel would stage key blocks in __local memory;
2. ``torch.axon.compile_shader`` building them once per device and head dimension (``-D``
   options), and the launches;
3. ``torch.library.custom_op`` + ``register_fake``: the op runs eagerly and inside
   ``torch.compile`` as one node. It is forward only (inference): no ``register_autograd``.

Run ``python examples/tiled_attention.py`` to compare it with ``F.scaled_dot_product_attention``.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from best_time import best_ms
from torch import Tensor

KERNELS = r"""
/* Build options: -DHD=<head dim, a multiple of VW> -DVW=<4, 8 or 16: the vector width of
 * value rows> -DROWS=<query rows per work-item> -DKV=<key blocks of 16 * KV keys>. */
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define VT CAT(float, VW)
#define VLOAD CAT(vload, VW)
#define VSTORE CAT(vstore, VW)
#define NV (HD / VW)
#define BK (16 * KV)

inline float max16(float16 v) {
  float8 a = fmax(v.lo, v.hi);
  float4 b = fmax(a.lo, a.hi);
  float2 c = fmax(b.lo, b.hi);
  return fmax(c.x, c.y);
}

inline float sum16(float16 v) {
  float8 a = v.lo + v.hi;
  float4 b = a.lo + a.hi;
  float2 c = b.lo + b.hi;
  return c.x + c.y;
}

/* kt[bh, d, j] = k[bh, j, d], keys past kv_len zero up to kv_pad (a multiple of BK), so the
 * attention kernel reads whole vectors. A work-item moves 16 keys of one d. */
__kernel void transpose_keys(__global float *kt, __global const float *k, long kv_len,
                             long kv_pad) {
  long item = get_global_id(0), bh = get_global_id(1);
  long j0 = item / HD * 16, d = item % HD;
  if (j0 >= kv_pad) return;
  __global const float *src = k + (bh * kv_len + j0) * HD + d;
  float t[16];
  for (int j = 0; j < 16; j++) t[j] = j0 + j < kv_len ? src[j * HD] : 0.0f;
  vstore16(vload16(0, t), 0, kt + (bh * HD + d) * kv_pad + j0);
}

/* Rows i0 .. i0 + ROWS - 1 of query head bh (of heads_per_kv query heads per key head).
 * qscale = log2(e) / sqrt(d): scores come out in base 2. Causal masking is top-left aligned
 * (key j is seen by row i when j <= i), as scaled_dot_product_attention's is_causal. */
__kernel void attention_rows(__global float *out, __global const float *q,
                             __global const float *kt, __global const float *v, long q_len,
                             long kv_len, long kv_pad, long heads_per_kv, float qscale,
                             int causal) {
  long i0 = get_global_id(0) * ROWS, bh = get_global_id(1), bhk = bh / heads_per_kv;
  if (i0 >= q_len) return; /* a GPU's launch is rounded up to whole groups */
  /* Loops over r, c and u have constant trip counts and are unrolled, so that these arrays
   * become registers; without the pragmas the accumulators live on the stack. */
  float qs[ROWS][HD], m[ROWS], l[ROWS];
  VT acc[ROWS][NV];
#pragma unroll
  for (int r = 0; r < ROWS; r++) {
    /* rows past q_len repeat the last one and are not stored */
    __global const float *qrow = q + (bh * q_len + min(i0 + r, q_len - 1)) * HD;
    for (int d = 0; d < HD; d++) qs[r][d] = qrow[d] * qscale;
#pragma unroll
    for (int c = 0; c < NV; c++) acc[r][c] = 0;
    m[r] = -INFINITY;
    l[r] = 0;
  }
  long kend = causal ? min(kv_len, i0 + ROWS) : kv_len;
  __global const float *ktb = kt + bhk * HD * kv_pad, *vb = v + bhk * kv_len * HD;
  const int16 lane = (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  float p[ROWS][BK];
  for (long j0 = 0; j0 < kend; j0 += BK) {
    float16 s[ROWS][KV];
#pragma unroll
    for (int r = 0; r < ROWS; r++)
#pragma unroll
      for (int u = 0; u < KV; u++) s[r][u] = 0;
    for (int d = 0; d < HD; d++) {
      float16 kv[KV];
#pragma unroll
      for (int u = 0; u < KV; u++) kv[u] = vload16(u, ktb + d * kv_pad + j0);
#pragma unroll
      for (int r = 0; r < ROWS; r++)
#pragma unroll
        for (int u = 0; u < KV; u++) s[r][u] = fma((float16)qs[r][d], kv[u], s[r][u]);
    }
    int masked = j0 + BK > kend || (causal && j0 + BK > i0 + 1);
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
      if (masked) {
        long end = causal ? min(kv_len, i0 + r + 1) : kv_len;
#pragma unroll
        for (int u = 0; u < KV; u++)
          s[r][u] = select(s[r][u], (float16)(-INFINITY), (int16)(j0 + 16 * u) + lane >= (int16)end);
      }
      /* Key 0 is in every row's first block, so m is finite from then on and a block that is
       * wholly masked for a row gives p = 0 rather than NaN. */
      float bm = max16(s[r][0]);
#pragma unroll
      for (int u = 1; u < KV; u++) bm = fmax(bm, max16(s[r][u]));
      float mn = fmax(m[r], bm), alpha = exp2(m[r] - mn);
      float16 psum = 0;
#pragma unroll
      for (int u = 0; u < KV; u++) {
        float16 e = exp2(s[r][u] - mn);
        psum += e;
        vstore16(e, u, p[r]);
      }
      l[r] = l[r] * alpha + sum16(psum);
      m[r] = mn;
      if (alpha != 1.0f)
#pragma unroll
        for (int c = 0; c < NV; c++) acc[r][c] *= alpha;
    }
    /* out += p @ v: a value vector is loaded once for all ROWS rows. */
    int nb = (int)min((long)BK, kend - j0);
#pragma unroll
    for (int c = 0; c < NV; c++) {
      VT a[ROWS];
#pragma unroll
      for (int r = 0; r < ROWS; r++) a[r] = acc[r][c];
      for (int j = 0; j < nb; j++) {
        VT vv = VLOAD(c, vb + (j0 + j) * HD);
#pragma unroll
        for (int r = 0; r < ROWS; r++) a[r] = fma((VT)p[r][j], vv, a[r]);
      }
#pragma unroll
      for (int r = 0; r < ROWS; r++) acc[r][c] = a[r];
    }
  }
#pragma unroll
  for (int r = 0; r < ROWS; r++) {
    if (i0 + r < q_len) {
      __global float *orow = out + (bh * q_len + i0 + r) * HD;
      float inv = 1.0f / l[r];
#pragma unroll
      for (int c = 0; c < NV; c++) VSTORE(acc[r][c] * inv, c, orow);
    }
  }
}
"""

MAX_HEAD_DIM = 128


class _Plan(NamedTuple):
    lib: object  # the compiled kernels
    rows: int  # query rows per work-item
    block: int  # keys per step; the transposed keys are padded to a multiple
    group: int  # work-items per group along the row blocks


@functools.cache
def _plan(device_index: int, head_dim: int) -> _Plan:
    """The kernels for one device and head dimension, built on first use (cached on disk).

    CPU-class devices: 8 rows and 32 keys per step in a group of one work-item, so PoCL runs
    each work-item's vector code as written. A block's 8 x 32 scores take 16 of AVX-512's 32
    registers; 4 rows, or 16 keys per block, ran about 20% slower, 12 or 16 rows no faster. GPUs:
    a row per work-item, which keeps the registers a work-item needs small, in groups of 64.
    """
    cpu = torch.axon.get_device_properties(device_index).is_cpu
    rows, key_vectors, group = (8, 2, 1) if cpu else (1, 1, 64)
    width = next(w for w in (16, 8, 4) if head_dim % w == 0)
    options = f"-DHD={head_dim} -DVW={width} -DROWS={rows} -DKV={key_vectors}"
    with torch.axon.device(device_index):
        lib = torch.axon.compile_shader(KERNELS, options=options)
    return _Plan(lib, rows, 16 * key_vectors, group)


def _check(q: Tensor, k: Tensor, v: Tensor) -> None:
    if q.dtype != torch.float32 or k.dtype != q.dtype or v.dtype != q.dtype:
        raise TypeError(f"tiled_attention takes float32 q, k and v, got {q.dtype}, {k.dtype}, {v.dtype}")
    if q.dim() != 4 or k.dim() != 4 or v.shape != k.shape:
        raise ValueError(
            "tiled_attention takes q of (batch, heads, seq, head_dim) and k, v of one shape "
            f"(batch, kv_heads, kv_seq, head_dim), got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    if k.shape[0] != q.shape[0] or k.shape[3] != q.shape[3] or q.shape[1] % k.shape[1] != 0:
        raise ValueError(f"k of shape {tuple(k.shape)} does not match q of shape {tuple(q.shape)}")
    if not 1 <= q.shape[3] <= MAX_HEAD_DIM:
        raise ValueError(f"head_dim {q.shape[3]} is outside 1..{MAX_HEAD_DIM}")


@torch.library.custom_op("axon_examples::tiled_attention", mutates_args=(), device_types="axon")
def _attention_op(q: Tensor, k: Tensor, v: Tensor, causal: bool, scale: float) -> Tensor:
    _check(q, k, v)
    batch, heads, q_len, head_dim = q.shape
    kv_heads, kv_len = k.shape[1], k.shape[2]
    if q.numel() == 0 or kv_len == 0:
        return q.new_zeros(q.shape)  # no keys: an empty sum of values
    # The kernel reads rows in vectors of at least 4; zero columns change no dot product.
    pad = -head_dim % 4
    q, k, v = (F.pad(t, (0, pad)) if pad else t.contiguous() for t in (q, k, v))
    plan = _plan(q.device.index, head_dim + pad)
    kv_pad = -(-kv_len // plan.block) * plan.block
    kt = k.new_empty(batch * kv_heads, head_dim + pad, kv_pad)
    plan.lib.transpose_keys(kt, k, kv_len, kv_pad, threads=(kv_pad // 16 * (head_dim + pad), batch * kv_heads))
    out = torch.empty_like(q)
    row_blocks = -(-q_len // plan.rows)
    plan.lib.attention_rows(
        out, q, kt, v, q_len, kv_len, kv_pad, heads // kv_heads, scale * math.log2(math.e), int(causal),
        threads=(-(-row_blocks // plan.group) * plan.group, batch * heads), group_size=(plan.group, 1),
    )  # fmt: skip
    return out[..., :head_dim].contiguous() if pad else out


@_attention_op.register_fake
def _(q, k, v, causal, scale):
    _check(q, k, v)
    return q.new_empty(q.shape)


def tiled_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = False, scale: float | None = None) -> Tensor:
    """``F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)`` for float32 q of
    (batch, heads, seq, head_dim) and k, v of (batch, kv_heads, kv_seq, head_dim), kv_heads
    dividing heads (grouped-query attention), head_dim up to 128. Forward only."""
    return _attention_op(q, k, v, causal, 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale)


def main() -> None:
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 8, 2048, 64, device="axon") for _ in range(3))
    for causal in (False, True):
        want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        error = (tiled_attention(q, k, v, causal) - want).abs().max().item()
        ours = best_ms(functools.partial(tiled_attention, q, k, v, causal))
        sdpa = best_ms(functools.partial(F.scaled_dot_product_attention, q, k, v, is_causal=causal))
        print(f"causal={causal!s:5}  tiled_attention {ours:7.1f} ms  SDPA {sdpa:7.1f} ms  max |diff| {error:.1e}")


if __name__ == "__main__":
    main()
