"""examples/rotary.py and examples/tiled_attention.py: the fused rotary embedding (forward and
backward) against PyTorch's CPU composition and autograd, the tiled attention kernel against CPU
scaled_dot_product_attention, and both ops inside torch.compile(fullgraph=True)."""

from __future__ import annotations

import pathlib
import sys

import pytest
import torch
import torch.nn.functional as F
from conftest import compare

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
import rotary  # noqa: E402
import tiled_attention  # noqa: E402

# Everything runs natively: nothing through Axon's counted CPU fallback (conftest.py).
pytestmark = pytest.mark.usefixtures("no_fallback")


def rotary_inputs(head_dim, dtype=torch.float32, kv_heads=2, seq=10, tables="llama"):
    """CPU q (2, 4, seq, head_dim), k (2, kv_heads, seq, head_dim), cos, sin. 'random' tables have
    unequal halves, which tell the exact transpose from rotary with -sin."""
    q, k = torch.randn(2, 4, seq, head_dim), torch.randn(2, kv_heads, seq, head_dim)
    if tables == "llama":
        cos, sin = rotary.rotary_tables(seq, head_dim)
    else:
        cos, sin = torch.randn(seq, head_dim), torch.randn(seq, head_dim)
    return [t.to(dtype) for t in (q, k, cos, sin)]


# head_dim 64: vectors of 16 pairs; 12: of 2; 6: one pair at a time.
@pytest.mark.parametrize("head_dim", [64, 12, 6])
def test_rotary_forward_matches_cpu(head_dim):
    cpu = rotary_inputs(head_dim)
    compare(rotary.reference_rotary(*cpu), rotary.apply_rotary(*(t.to("axon") for t in cpu)))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_rotary_half_precision_rounds_once(dtype):
    """Stored in 16 bits, computed in float: the float32 result rounded once, exactly."""
    cpu = rotary_inputs(16, dtype)
    want = [t.to(dtype) for t in rotary.reference_rotary(*(t.float() for t in cpu))]
    compare(want, rotary.apply_rotary(*(t.to("axon") for t in cpu)), atol=0, rtol=0)


def test_rotary_non_contiguous_inputs():
    """q and k as attention layers make them: (batch, seq, heads, d) transposed to (batch, heads, seq, d)."""
    q, k = torch.randn(2, 7, 4, 32), torch.randn(2, 7, 4, 32)
    cos, sin = rotary.rotary_tables(7, 32)
    cpu = [q.transpose(1, 2), k.transpose(1, 2), cos, sin]
    ax = [q.to("axon").transpose(1, 2), k.to("axon").transpose(1, 2), cos.to("axon"), sin.to("axon")]
    assert not ax[0].is_contiguous()
    compare(rotary.reference_rotary(*cpu), rotary.apply_rotary(*ax))


def rotary_grads(fn, q, k, cos, sin, gq, gk):
    for t in (q, k, cos, sin):
        t.requires_grad_(True)
    oq, ok = fn(q, k, cos, sin)
    ((oq * gq).sum() + (ok * gk).sum()).backward()
    return [t.grad for t in (q, k, cos, sin)]


@pytest.mark.parametrize("tables", ["llama", "random"])
def test_rotary_backward_matches_cpu_autograd(tables):
    cpu = rotary_inputs(16, tables=tables)
    ax = [t.to("axon") for t in cpu]
    gq, gk = torch.randn(cpu[0].shape), torch.randn(cpu[1].shape)
    want = rotary_grads(rotary.reference_rotary, *cpu, gq, gk)
    got = rotary_grads(rotary.apply_rotary, *ax, gq.to("axon"), gk.to("axon"))
    compare(want, got, atol=1e-5, rtol=1e-5)


def test_rotary_rejects_bad_tables():
    q = torch.randn(1, 2, 5, 8, device="axon")
    with pytest.raises(ValueError, match="cos, sin of"):
        rotary.apply_rotary(q, q, torch.ones(5, 4, device="axon"), torch.ones(5, 4, device="axon"))


def attention_inputs(batch, heads, kv_heads, q_len, kv_len, head_dim):
    q = torch.randn(batch, heads, q_len, head_dim)
    k, v = torch.randn(batch, kv_heads, kv_len, head_dim), torch.randn(batch, kv_heads, kv_len, head_dim)
    return q, k, v


def sdpa_cpu(q, k, v, causal):
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


# Lengths that are not multiples of the 8 rows per work-item or the 32 keys per block; head
# dimensions of 64 (vectors of 16), 24 (of 8) and 6 (padded to 8); grouped-query heads; fewer
# queries than keys (causal masking is top-left aligned, as SDPA's).
ATTENTION_SHAPES = [
    (2, 3, 3, 45, 45, 64),
    (1, 2, 2, 70, 70, 24),
    (1, 4, 2, 19, 19, 64),
    (1, 2, 1, 5, 37, 6),
]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", ATTENTION_SHAPES)
def test_attention_matches_sdpa(shape, causal):
    cpu = attention_inputs(*shape)
    got = tiled_attention.tiled_attention(*(t.to("axon") for t in cpu), causal)
    compare(sdpa_cpu(*cpu, causal), got, atol=2e-5, rtol=2e-5)


def test_attention_scale_and_large_scores():
    """A given scale, and scores large enough that exp would overflow without the running max."""
    q, k, v = attention_inputs(1, 2, 2, 33, 33, 32)
    q = q * 30
    got = tiled_attention.tiled_attention(q.to("axon"), k.to("axon"), v.to("axon"), True, scale=0.5)
    compare(F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.5), got, atol=1e-4, rtol=1e-4)


def test_attention_without_keys_is_zero():
    q, k, v = attention_inputs(1, 2, 2, 3, 0, 8)
    got = tiled_attention.tiled_attention(q.to("axon"), k.to("axon"), v.to("axon"))
    compare(F.scaled_dot_product_attention(q, k, v), got)


def test_attention_rejects_unsupported_inputs():
    q = torch.randn(1, 2, 4, 8, device="axon")
    with pytest.raises(TypeError, match="float32"):
        tiled_attention.tiled_attention(q.half(), q.half(), q.half())
    with pytest.raises(ValueError, match="head_dim"):
        big = torch.randn(1, 1, 2, 130, device="axon")
        tiled_attention.tiled_attention(big, big, big)


def rope_attention(q, k, v, cos, sin):
    """Rotary then attention between built-in ops, as a decoder layer uses them."""
    q, k = rotary.apply_rotary(q * 0.5, k, cos, sin)
    return tiled_attention.tiled_attention(q, k, v, True).relu() + 1


def reference_rope_attention(q, k, v, cos, sin):
    q, k = rotary.reference_rotary(q * 0.5, k, cos, sin)
    return F.scaled_dot_product_attention(q, k, v, is_causal=True).relu() + 1


def test_compile_one_graph():
    q, k, v = attention_inputs(1, 2, 2, 21, 21, 16)
    cos, sin = rotary.rotary_tables(21, 16)
    cpu = [q, k, v, cos, sin]
    ax = [t.to("axon") for t in cpu]
    explained = torch._dynamo.explain(rope_attention)(*ax)
    assert explained.graph_break_count == 0 and explained.graph_count == 1
    torch._dynamo.reset()
    got = torch.compile(rope_attention, fullgraph=True)(*ax)
    compare(reference_rope_attention(*cpu), got, atol=2e-5, rtol=2e-5)


def test_compile_rotary_backward():
    cpu = rotary_inputs(8, seq=6)
    ax = [t.to("axon") for t in cpu]
    gq, gk = torch.randn(cpu[0].shape), torch.randn(cpu[1].shape)
    want = rotary_grads(rotary.reference_rotary, *cpu, gq, gk)
    compiled = torch.compile(rotary.apply_rotary, fullgraph=True)
    got = rotary_grads(compiled, *ax, gq.to("axon"), gk.to("axon"))
    compare(want, got, atol=1e-5, rtol=1e-5)


def test_compile_dynamic_sequence_length():
    from torch._dynamo.testing import CompileCounterWithBackend

    counter = CompileCounterWithBackend("inductor")
    fn = torch.compile(rope_attention, backend=counter, dynamic=True, fullgraph=True)
    for seq in (9, 26):
        q, k, v = attention_inputs(1, 2, 2, seq, seq, 16)
        cpu = [q, k, v, *rotary.rotary_tables(seq, 16)]
        compare(reference_rope_attention(*cpu), fn(*(t.to("axon") for t in cpu)), atol=2e-5, rtol=2e-5)
    assert counter.frame_count == 1, "a second sequence length recompiled"
