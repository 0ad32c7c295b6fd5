"""The paged KV cache's native kernels (torch_axon/serving/paged_kernels.py) against the same
arithmetic on the CPU: slot writes with padding, and decode attention read through a block
table (grouped-query heads, sequences of one token to several blocks, a block table in a
shuffled order). They need no vLLM; the plugin's end-to-end test is tests/serving/."""

import pytest
import torch

from torch_axon.serving import paged_kernels

DEV = "axon"
BLOCKS, BLOCK_SIZE, KV_HEADS, HEADS = 12, 16, 2, 4


def _cache(head_size: int, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    """vLLM's view of a token-major buffer: [blocks, kv_heads, block_size, 2 * head_size]."""
    buffer = torch.randn(BLOCKS, BLOCK_SIZE, KV_HEADS, 2 * head_size, generator=gen).to(dtype)
    return buffer.to(DEV).transpose(1, 2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_write_slots_skips_padding(dtype):
    gen = torch.Generator().manual_seed(0)
    head_size = 64
    cache = _cache(head_size, dtype, gen)
    want = cache.cpu().clone()
    qkv = torch.randn(5, (HEADS + 2 * KV_HEADS) * head_size, generator=gen).to(dtype)
    # key and value: strided slices of a fused projection, as vLLM hands them over.
    key = qkv[:, HEADS * head_size : (HEADS + KV_HEADS) * head_size].view(5, KV_HEADS, head_size)
    value = qkv[:, (HEADS + KV_HEADS) * head_size :].view(5, KV_HEADS, head_size)
    slots = torch.tensor([3, 17, -1, 190, 40, -1, -1])  # padded past the five tokens, and in the middle
    for i, slot in enumerate(slots[:5].tolist()):
        if slot >= 0:
            want[slot // BLOCK_SIZE, :, slot % BLOCK_SIZE, :head_size] = key[i]
            want[slot // BLOCK_SIZE, :, slot % BLOCK_SIZE, head_size:] = value[i]
    q = qkv.to(DEV)
    key_a = q[:, HEADS * head_size : (HEADS + KV_HEADS) * head_size].view(5, KV_HEADS, head_size)
    value_a = q[:, (HEADS + KV_HEADS) * head_size :].view(5, KV_HEADS, head_size)
    paged_kernels.write_slots(key_a, value_a, cache, slots.to(DEV))
    assert torch.equal(cache.cpu(), want)


def _reference(query, cache, table, seq_lens, scale):
    """Each sequence's keys and values gathered from its blocks, softmax in float64."""
    head_size = query.shape[-1]
    out = torch.empty(query.shape, dtype=torch.float64)
    for s, length in enumerate(seq_lens.tolist()):
        tokens = torch.arange(length)
        blocks = table[s, tokens // BLOCK_SIZE].long()
        kv = cache[blocks, :, tokens % BLOCK_SIZE].double()  # [length, kv_heads, 2 * head_size]
        for h in range(HEADS):
            k, v = kv[:, h // (HEADS // KV_HEADS), :head_size], kv[:, h // (HEADS // KV_HEADS), head_size:]
            weights = torch.softmax(k @ query[s, h].double() * scale, 0)
            out[s, h] = weights @ v
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("head_size", [64, 80])
def test_paged_decode_matches_gathered_softmax(dtype, head_size):
    gen = torch.Generator().manual_seed(1)
    cache = _cache(head_size, dtype, gen)
    seq_lens = torch.tensor([1, 16, 17, 45, 100, 33], dtype=torch.int32)
    table = torch.stack([torch.randperm(BLOCKS, generator=gen) for _ in seq_lens]).to(torch.int32)
    query = torch.randn(len(seq_lens), HEADS, head_size, generator=gen).to(dtype)
    scale = head_size**-0.5
    got = paged_kernels.paged_decode(query.to(DEV), cache, table.to(DEV), seq_lens.to(DEV), scale)
    want = _reference(query, cache.cpu(), table, seq_lens, scale)
    tol = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}[dtype]
    torch.testing.assert_close(got.cpu().double(), want, atol=tol, rtol=tol)


def test_paged_decode_refuses_what_it_cannot_hold():
    query = torch.zeros(1, HEADS, 512, device=DEV)
    cache = torch.zeros(BLOCKS, KV_HEADS, BLOCK_SIZE, 1024, device=DEV)
    table, lens = torch.zeros(1, BLOCKS, dtype=torch.int32, device=DEV), torch.ones(1, dtype=torch.int32, device=DEV)
    with pytest.raises(NotImplementedError, match="head size 512"):
        paged_kernels.paged_decode(query, cache, table, lens, 1.0)
