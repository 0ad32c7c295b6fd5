"""Native kernels of the paged KV cache, written with Axon's kernel API (torch.axon.compile_shader).

- ``write_slots``: token i's keys and values go to slot ``slot_mapping[i]`` (block * block_size +
  offset) of every KV head; padded tokens (slot < 0) are skipped in the kernel, so there is no
  host sync. An exact copy: the cache holds the model's dtype ("auto" KV-cache dtype).
- ``paged_decode``: one query per sequence attending over its own cached tokens, read in place
  through its row of the block table (no gathered copy). A work-group per (sequence, query
  head); its work-items take the keys in turn, each keeping an online softmax (running maximum,
  sum and weighted values) in private memory, and the group merges them in local memory at the
  end. Grouped-query attention maps query head h to KV head h / (heads / kv_heads).

Every tensor is passed with its strides in elements, so vLLM's views (the query slice of the
fused QKV projection, the token-major cache seen as [blocks, kv_heads, block_size, 2 * head_size])
are used as they are. Scores, softmax and sums are in float whatever the storage dtype.
"""

from __future__ import annotations

import functools

import torch

# The work-items of a decode group, and the largest head size a work-item's private
# accumulator holds (Llama, Qwen, Mistral: 64 to 128; Gemma up to 256).
DECODE_GROUP = 32
MAX_HEAD_SIZE = 256

SOURCE = r"""
/* STORAGE: the element type in memory; LOAD: an element as float; COPY: an element moved
 * unchanged (half is a storage-only type without cl_khr_fp16: through float, exactly). */
#if AXON_DTYPE_F16
#define STORAGE half
#define LOAD(p, i) vload_half((i), (p))
#define COPY(dst, j, src, i) vstore_half(vload_half((i), (src)), (j), (dst))
#elif AXON_DTYPE_BF16
#define STORAGE ushort
#define LOAD(p, i) as_float(((uint)(p)[i]) << 16)
#define COPY(dst, j, src, i) ((dst)[j] = (src)[i])
#else
#define STORAGE float
#define LOAD(p, i) ((p)[i])
#define COPY(dst, j, src, i) ((dst)[j] = (src)[i])
#endif

__kernel void write_slots(__global const STORAGE *key, __global const STORAGE *value, __global STORAGE *cache,
                          __global const long *slot_mapping, long tokens, long kv_heads, long head_size,
                          long block_size, long key_token_stride, long key_head_stride,
                          long value_token_stride, long value_head_stride, long cache_block_stride,
                          long cache_head_stride, long cache_offset_stride) {
  long token = get_global_id(1), lane = get_global_id(0);
  if (token >= tokens || lane >= kv_heads * head_size) return;
  long slot = slot_mapping[token];
  if (slot < 0) return; /* padding */
  long head = lane / head_size, c = lane % head_size;
  long at = (slot / block_size) * cache_block_stride + head * cache_head_stride +
            (slot % block_size) * cache_offset_stride;
  COPY(cache, at + c, key, token * key_token_stride + head * key_head_stride + c);
  COPY(cache, at + head_size + c, value, token * value_token_stride + head * value_head_stride + c);
}

__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void paged_decode(__global const STORAGE *query, __global const STORAGE *cache,
                  __global const int *block_table, __global const int *seq_lens,
                  __global STORAGE *out, float scale, long heads, long kv_heads, long head_size,
                  long block_size, long query_seq_stride, long query_head_stride,
                  long cache_block_stride, long cache_head_stride, long cache_offset_stride,
                  long table_stride, long out_seq_stride, long out_head_stride) {
  __local float q[MAX_HEAD];
  __local float maxima[GROUP], sums[GROUP];
  __local float partial[GROUP * MAX_HEAD];
  int lid = get_local_id(0);
  long seq = get_group_id(1), head = get_group_id(0);
  long kv_head = head / (heads / kv_heads);
  for (long c = lid; c < head_size; c += GROUP)
    q[c] = LOAD(query, seq * query_seq_stride + head * query_head_stride + c) * scale;
  barrier(CLK_LOCAL_MEM_FENCE);

  long length = seq_lens[seq];
  float m = -INFINITY, l = 0.0f, acc[MAX_HEAD];
  for (long c = 0; c < head_size; c++) acc[c] = 0.0f;
  for (long t = lid; t < length; t += GROUP) {
    long block = block_table[seq * table_stride + t / block_size];
    long at = block * cache_block_stride + kv_head * cache_head_stride + (t % block_size) * cache_offset_stride;
    float score = 0.0f;
    for (long c = 0; c < head_size; c++) score += q[c] * LOAD(cache, at + c);
    float m_new = fmax(m, score);
    float correction = exp(m - m_new), weight = exp(score - m_new);
    l = l * correction + weight;
    for (long c = 0; c < head_size; c++) acc[c] = acc[c] * correction + weight * LOAD(cache, at + head_size + c);
    m = m_new;
  }

  /* Merge the work-items' softmaxes: rescale each to the group's maximum, then sum. */
  maxima[lid] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  float group_max = -INFINITY;
  for (int g = 0; g < GROUP; g++) group_max = fmax(group_max, maxima[g]);
  float factor = m == -INFINITY ? 0.0f : exp(m - group_max); /* a work-item that saw no key */
  sums[lid] = l * factor;
  for (long c = 0; c < head_size; c++) partial[lid * MAX_HEAD + c] = acc[c] * factor;
  barrier(CLK_LOCAL_MEM_FENCE);
  float total = 0.0f;
  for (int g = 0; g < GROUP; g++) total += sums[g];
  for (long c = lid; c < head_size; c += GROUP) {
    float v = 0.0f;
    for (int g = 0; g < GROUP; g++) v += partial[g * MAX_HEAD + c];
    long o = seq * out_seq_stride + head * out_head_stride + c;
#if AXON_DTYPE_F16
    vstore_half_rte(v / total, o, out);
#elif AXON_DTYPE_BF16
    uint u = as_uint(v / total);
    out[o] = (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#else
    out[o] = v / total;
#endif
  }
}
"""

_DTYPE_FLAGS = {torch.float32: "", torch.float16: "-DAXON_DTYPE_F16=1", torch.bfloat16: "-DAXON_DTYPE_BF16=1"}


@functools.cache
def _library(device: int, dtype: torch.dtype):
    """One build per device and dtype (later processes load it from Axon's program cache)."""
    if dtype not in _DTYPE_FLAGS:
        raise NotImplementedError(f"axon serving: paged attention in {dtype} (float32, float16, bfloat16 are)")
    options = f"-DGROUP={DECODE_GROUP} -DMAX_HEAD={MAX_HEAD_SIZE} {_DTYPE_FLAGS[dtype]}"
    return torch.axon.compile_shader(SOURCE, options=options, device=device)


def _check_head_size(head_size: int) -> None:
    if head_size > MAX_HEAD_SIZE:
        raise NotImplementedError(f"axon serving: head size {head_size} (at most {MAX_HEAD_SIZE})")


def write_slots(key: torch.Tensor, value: torch.Tensor, kv_cache: torch.Tensor, slot_mapping: torch.Tensor) -> None:
    """key, value: [tokens, kv_heads, head_size] (each head's channels contiguous); kv_cache: the
    layer's [blocks, kv_heads, block_size, 2 * head_size] view; slot_mapping: a slot per token.
    vLLM may pad the keys past the slot mapping's tokens: those rows are not written."""
    _, kv_heads, head_size = key.shape
    tokens = min(key.shape[0], slot_mapping.shape[0])
    if tokens == 0:
        return
    if key.stride(-1) != 1 or value.stride(-1) != 1 or kv_cache.stride(-1) != 1:
        raise ValueError("axon serving: write_slots needs each head's channels contiguous")
    if key.dtype != kv_cache.dtype or value.dtype != kv_cache.dtype:
        key, value = key.to(kv_cache.dtype), value.to(kv_cache.dtype)
    lib = _library(kv_cache.device.index or 0, kv_cache.dtype)
    slots = slot_mapping if slot_mapping.dtype == torch.int64 else slot_mapping.to(torch.int64)
    lib.write_slots(
        key, value, kv_cache, slots, tokens, kv_heads, head_size, kv_cache.shape[2],
        key.stride(0), key.stride(1), value.stride(0), value.stride(1),
        kv_cache.stride(0), kv_cache.stride(1), kv_cache.stride(2),
        threads=(kv_heads * head_size, tokens),
    )  # fmt: skip


def paged_decode(
    query: torch.Tensor, kv_cache: torch.Tensor, block_table: torch.Tensor, seq_lens: torch.Tensor, scale: float
) -> torch.Tensor:
    """query: [seqs, heads, head_size]; the result in a new [seqs, heads, head_size] tensor."""
    seqs, heads, head_size = query.shape
    _check_head_size(head_size)
    kv_heads = kv_cache.shape[1]
    out = torch.empty(seqs, heads, head_size, dtype=query.dtype, device=query.device)
    if seqs == 0:
        return out
    if query.stride(-1) != 1 or kv_cache.stride(-1) != 1 or block_table.stride(-1) != 1:
        raise ValueError("axon serving: paged_decode needs each head's channels contiguous")
    if kv_cache.dtype != query.dtype:
        raise NotImplementedError(f"axon serving: a {kv_cache.dtype} KV cache with {query.dtype} queries")
    table = block_table if block_table.dtype == torch.int32 else block_table.to(torch.int32)
    lens = seq_lens if seq_lens.dtype == torch.int32 else seq_lens.to(torch.int32)
    lib = _library(query.device.index or 0, query.dtype)
    lib.paged_decode(
        query, kv_cache, table, lens, out,
        float(scale), heads, kv_heads, head_size, kv_cache.shape[2],
        query.stride(0), query.stride(1), kv_cache.stride(0), kv_cache.stride(1), kv_cache.stride(2),
        table.stride(0), out.stride(0), out.stride(1),
        threads=(heads * DECODE_GROUP, seqs), group_size=(DECODE_GROUP, 1),
    )  # fmt: skip
    return out
