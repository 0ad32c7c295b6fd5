"""The attention backend over a paged KV cache on axon.

Each layer's cache is vLLM's logical [num_blocks, kv_heads, block_size, 2 * head_size] view of a
token-major (LBNHC) buffer: a token's keys and values for every head lie together, keys in the
first head_size channels. vLLM writes new tokens through ``do_kv_cache_update`` (before
``forward``), using the slots its slot mapping computed (platform.compute_slot_mapping).

New keys and values go to their slots and decode batches (one query per sequence) attend over
their blocks in place, both in native kernels (paged_kernels.py: ``write_slots``,
``paged_decode``). Prefills, chunked prefills and prefix-cache hits (``attend_sequence``) gather a
sequence's blocks and run Axon's scaled_dot_product_attention: compute-bound, where the copy of
the keys costs little beside the products.
"""

from dataclasses import dataclass
from typing import ClassVar

import torch
import torch.nn.functional as F
from vllm.v1.attention.backend import (
    AttentionBackend,
    AttentionImpl,
    AttentionMetadataBuilder,
    AttentionType,
    CommonAttentionMetadata,
    MultipleOf,
)
from vllm.v1.kv_cache_interface import KVCacheLayout

from .paged_kernels import paged_decode, write_slots


class AxonAttentionBackend(AttentionBackend):
    # The cache is written by do_kv_cache_update, a separate step vLLM calls before forward.
    forward_includes_kv_cache_update = False
    supported_dtypes: ClassVar[list[torch.dtype]] = [torch.float32, torch.float16, torch.bfloat16]

    @staticmethod
    def get_name() -> str:
        # vLLM's registry names; CUSTOM is the one reserved for out-of-tree backends.
        return "CUSTOM"

    @staticmethod
    def get_impl_cls() -> type["AxonAttentionImpl"]:
        return AxonAttentionImpl

    @staticmethod
    def get_builder_cls() -> type["AxonAttentionMetadataBuilder"]:
        return AxonAttentionMetadataBuilder

    @classmethod
    def supported_kv_cache_layouts(cls) -> tuple[KVCacheLayout, ...]:
        # Token-major blocks: a new token's write is one contiguous run per layer.
        return (KVCacheLayout.LBNHC,)

    @staticmethod
    def get_supported_kernel_block_sizes(kv_cache_spec=None) -> list[MultipleOf]:
        return [MultipleOf(1)]


@dataclass
class AxonAttentionMetadata:
    num_actual_tokens: int
    num_reqs: int
    max_query_len: int
    max_seq_len: int
    query_start_loc_cpu: torch.Tensor  # [num_reqs + 1], on the host
    seq_lens_cpu: torch.Tensor  # [num_reqs], on the host: the per-sequence path's loop bounds
    seq_lens: torch.Tensor  # [num_reqs], on the device: the decode path's masks
    block_table: torch.Tensor  # [num_reqs, max_blocks_per_req] int32, on the device


class AxonAttentionMetadataBuilder(AttentionMetadataBuilder[AxonAttentionMetadata]):
    def __init__(self, kv_cache_spec, layer_names, vllm_config, device) -> None:
        # Declared abstract by vLLM so that each backend states its arguments; nothing to add.
        super().__init__(kv_cache_spec, layer_names, vllm_config, device)

    def build(
        self, common_prefix_len: int, common_attn_metadata: CommonAttentionMetadata, fast_build: bool = False
    ) -> AxonAttentionMetadata:
        m = common_attn_metadata
        # The host copy of the sequence lengths vLLM already keeps is exact without async
        # scheduling and speculative decoding (the platform turns the first off; the second is
        # not supported), which spares a device-to-host copy per step.
        seq_lens_cpu = m.seq_lens_cpu_upper_bound if m.seq_lens_cpu_upper_bound is not None else m.seq_lens.cpu()
        return AxonAttentionMetadata(
            num_actual_tokens=m.num_actual_tokens,
            num_reqs=m.num_reqs,
            max_query_len=m.max_query_len,
            max_seq_len=m.max_seq_len,
            query_start_loc_cpu=m.query_start_loc_cpu,
            seq_lens_cpu=seq_lens_cpu,
            seq_lens=m.seq_lens,
            block_table=m.block_table_tensor,
        )


def _expand_kv_heads(k: torch.Tensor, v: torch.Tensor, num_heads: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Grouped-query attention: each key/value head serves num_heads // kv_heads query heads."""
    rep = num_heads // k.shape[-3]
    if rep == 1:
        return k, v
    return k.repeat_interleave(rep, dim=-3), v.repeat_interleave(rep, dim=-3)


def attend_sequence(
    query: torch.Tensor, kv_cache: torch.Tensor, blocks: torch.Tensor, seq_len: int, scale: float
) -> torch.Tensor:
    """One sequence's query_len queries ([query_len, heads, head_size]) over its first seq_len
    cached tokens, held in ``blocks``. The queries are the sequence's last query_len tokens:
    all of it for a plain prefill, fewer for a chunked prefill's later chunk or a prompt whose
    prefix came from the prefix cache, so query i sees tokens up to seq_len - query_len + i."""
    head_size = query.shape[-1]
    query_len = query.shape[0]
    kv_heads = kv_cache.shape[1]
    # [blocks, kv_heads, block_size, C] -> [kv_heads, blocks * block_size, C], cut to seq_len:
    # the slots past it (stale, never zeroed) do not reach the softmax.
    kv = kv_cache[blocks].permute(1, 0, 2, 3).reshape(kv_heads, -1, 2 * head_size)[:, :seq_len]
    k, v = _expand_kv_heads(kv[..., :head_size], kv[..., head_size:], query.shape[1])
    mask = torch.ones(query_len, seq_len, dtype=torch.bool).tril(seq_len - query_len).to(query.device)
    out = F.scaled_dot_product_attention(query.transpose(0, 1), k, v, attn_mask=mask, scale=scale)
    return out.transpose(0, 1)


class AxonAttentionImpl(AttentionImpl):
    def __init__(
        self,
        num_heads: int,
        head_size: int,
        scale: float,
        num_kv_heads: int | None = None,
        alibi_slopes: list[float] | None = None,
        sliding_window: int | None = None,
        kv_cache_dtype: str = "auto",
        logits_soft_cap: float | None = None,
        attn_type: str = AttentionType.DECODER,
        kv_sharing_target_layer_name: str | None = None,
        **kwargs,
    ) -> None:
        unsupported = {
            "ALiBi": alibi_slopes is not None,
            "sliding-window attention": sliding_window is not None,
            f"KV-cache dtype {kv_cache_dtype}": kv_cache_dtype != "auto",
            "logit soft-capping": bool(logits_soft_cap),
            f"attention type {attn_type}": attn_type != AttentionType.DECODER,
            "KV-cache sharing across layers": kv_sharing_target_layer_name is not None,
        }
        named = [name for name, present in unsupported.items() if present]
        if named:
            raise NotImplementedError(f"axon serving attention: {', '.join(named)} not supported yet")
        self.num_heads = num_heads
        self.head_size = head_size
        self.scale = scale
        self.num_kv_heads = num_kv_heads or num_heads

    def do_kv_cache_update(self, layer, key, value, kv_cache, slot_mapping) -> None:
        write_slots(key, value, kv_cache, slot_mapping)

    def forward(
        self,
        layer,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        kv_cache: torch.Tensor,
        attn_metadata: AxonAttentionMetadata | None,
        output: torch.Tensor,
        output_scale: torch.Tensor | None = None,
        output_block_scale: torch.Tensor | None = None,
    ) -> torch.Tensor:
        if output_scale is not None or output_block_scale is not None:
            raise NotImplementedError("axon serving attention: quantised (fp8 / block-scaled) output")
        if attn_metadata is None:
            # vLLM's profiling run, before the KV cache exists.
            return output.fill_(0)
        m = attn_metadata
        if m.max_query_len == 1 and m.num_actual_tokens == m.num_reqs:
            output[: m.num_reqs] = paged_decode(
                query[: m.num_reqs], kv_cache, m.block_table, m.seq_lens[: m.num_reqs], self.scale
            )
            return output
        block_size = kv_cache.shape[2]
        starts = m.query_start_loc_cpu.tolist()
        seq_lens = m.seq_lens_cpu.tolist()
        for i in range(m.num_reqs):
            start, end, seq_len = starts[i], starts[i + 1], seq_lens[i]
            if end <= start:
                continue
            blocks = m.block_table[i, : (seq_len + block_size - 1) // block_size].to(torch.int64)
            output[start:end] = attend_sequence(query[start:end], kv_cache, blocks, seq_len, self.scale)
        return output
