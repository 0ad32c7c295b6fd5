"""Fused scaled-dot-product attention on axon (runtime/kernels/attention.cl) against PyTorch's CPU.

F.scaled_dot_product_attention on axon asks _fused_sdp_choice, which answers OVERRIDEABLE when the
fused kernels cover the inputs; SDPA then runs _scaled_dot_product_fused_attention_overrideable and
its backward. Results compare with CPU SDPA on the same values in float64, as PyTorch's own SDPA
tests compare fused kernels with a higher-precision reference (CPU float32 SDPA itself is further
from it than axon's float32 kernels with large scales); float16 / bfloat16 are computed in float32
and stored rounded.

Also the inference fast paths of nn.MultiheadAttention (_native_multi_head_attention) and
nn.TransformerEncoder (its left-aligned padding mask question), natively.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import DEVICE
from torch.nn.attention import SDPBackend, sdpa_kernel

OVERRIDEABLE = SDPBackend.OVERRIDEABLE.value
MATH = SDPBackend.MATH.value

# (atol, rtol) of outputs and of gradients (sums over the other sequence: looser) per dtype.
TOL = {
    torch.float32: ((2e-5, 2e-5), (5e-5, 5e-5)),
    torch.float16: ((2e-3, 2e-3), (5e-3, 5e-3)),
    torch.bfloat16: ((1.6e-2, 1.6e-2), (4e-2, 4e-2)),
}


# Everything runs natively: nothing through Axon's counted CPU fallback (conftest.py).
pytestmark = pytest.mark.usefixtures("no_fallback")


def fused():
    """The fused kernels whatever the sizes: by default Axon takes them only where the scores would
    be large (fused_pays in csrc/ops/attention.cpp), and these tests check them on small ones."""
    return sdpa_kernel(SDPBackend.OVERRIDEABLE)


def inputs(b, h, hk, length, kv_len, e, ev, dtype):
    q = torch.randn(b, h, length, e).to(dtype)
    k = torch.randn(b, hk, kv_len, e).to(dtype)
    v = torch.randn(b, hk, kv_len, ev).to(dtype)
    return q, k, v


def check(q, k, v, mask=None, *, grad=True, **kw):
    """SDPA forward (and gradients of q, k, v and a float mask that requires grad) on axon against
    the CPU in float64; asserts that axon took the fused path."""
    dtype = q.dtype
    (atol, rtol), (gatol, grtol) = TOL[dtype]
    q, k, v = (t.detach() for t in (q, k, v))
    on_axon = [t.to(DEVICE) for t in (q, k, v)]
    axon_mask = None if mask is None else mask.detach().to(DEVICE)
    with fused():
        assert torch.ops.aten._fused_sdp_choice(*on_axon, axon_mask, **kw) == OVERRIDEABLE
    mask_grad = mask is not None and mask.is_floating_point() and mask.requires_grad
    ref_in = [t.double().requires_grad_(grad) for t in (q, k, v)]
    ref_mask = None if mask is None else mask.detach().double() if mask.is_floating_point() else mask
    if mask_grad:
        ref_mask.requires_grad_()
        axon_mask.requires_grad_()
    got_in = [t.requires_grad_(grad) for t in on_axon]
    want = F.scaled_dot_product_attention(*ref_in, attn_mask=ref_mask, **kw)
    with fused():
        got = F.scaled_dot_product_attention(*got_in, attn_mask=axon_mask, **kw)
    assert got.device.type == DEVICE and got.dtype == dtype and got.shape == want.shape
    if grad:
        assert type(got.grad_fn).__name__ == "ScaledDotProductFusedAttentionOverrideableBackward0"
    torch.testing.assert_close(got.cpu().double(), want, atol=atol, rtol=rtol)
    if not grad:
        return
    g = torch.randn(want.shape).to(dtype)
    want.backward(g.double())
    got.backward(g.to(DEVICE))
    pairs = list(zip(ref_in, got_in, strict=True))
    if mask_grad:
        pairs.append((ref_mask, axon_mask))
    for name, (w, a) in zip("qkvm"[: len(pairs)], pairs, strict=True):
        assert a.grad is not None and a.grad.dtype == a.dtype and a.grad.shape == w.shape, name
        torch.testing.assert_close(
            a.grad.cpu().double(), w.grad, atol=gatol, rtol=grtol, msg=lambda m, n=name: f"d{n}: {m}"
        )


# (batch, heads, kv heads, q_len, kv_len, head_dim, v_head_dim)
SHAPES = [
    (2, 3, 3, 17, 23, 64, 64),
    (1, 2, 2, 40, 40, 16, 16),
    (2, 2, 2, 33, 7, 80, 80),
    (1, 2, 2, 70, 130, 128, 128),
    (2, 1, 1, 9, 70, 33, 20),  # head dims that are not multiples of the kernels' 8-wide vectors
    (1, 1, 1, 5, 3, 256, 256),
]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_shapes(shape, causal):
    check(*inputs(*shape, torch.float32), is_causal=causal)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_half_precision(dtype, causal):
    check(*inputs(2, 2, 2, 37, 45, 64, 64, dtype), is_causal=causal)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_half_precision_masked(dtype):
    q, k, v = inputs(2, 3, 3, 19, 26, 80, 80, dtype)
    check(q, k, v, (torch.randn(2, 1, 19, 26) * 2).to(dtype).requires_grad_())
    check(q, k, v, torch.rand(19, 26) > 0.3)


@pytest.mark.parametrize(
    "mask_shape", [(19, 26), (2, 1, 19, 26), (1, 3, 1, 26), (2, 3, 19, 26), (1, 26), (3, 19, 1)], ids=str
)
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_masks(kind, mask_shape):
    """Boolean and additive masks broadcast over batch, heads, rows or columns; a float mask that
    requires grad gets its gradient summed over the dimensions it was broadcast along."""
    q, k, v = inputs(2, 3, 3, 19, 26, 64, 64, torch.float32)
    if kind == "bool":
        mask = torch.rand(mask_shape) > 0.3
        mask[..., 0] = True  # no row fully masked here (test_fully_masked_rows covers them)
    else:
        mask = torch.randn(mask_shape).requires_grad_()
    check(q, k, v, mask)


def test_custom_scale_and_causal_with_long_rows():
    q, k, v = inputs(1, 2, 2, 100, 100, 64, 64, torch.float32)
    check(q, k, v, scale=0.3)
    check(q, k, v, is_causal=True, scale=1.7)


def test_grouped_query_attention():
    q, k, v = inputs(2, 6, 2, 21, 30, 64, 64, torch.float32)
    check(q, k, v, enable_gqa=True)
    check(q, k, v, enable_gqa=True, is_causal=True)
    check(q, k, v, torch.randn(21, 30).requires_grad_(), enable_gqa=True)


def test_hugging_face_layout():
    """[batch, seq, heads, dim] projections transposed to [batch, heads, seq, dim] (strided views):
    read in place, and the output takes the query's layout as the op's meta function says."""
    q, k, v = (torch.randn(2, n, 4, 32).transpose(1, 2) for n in (11, 13, 13))
    check(q, k, v, is_causal=True)
    with fused():
        out = F.scaled_dot_product_attention(*(t.to(DEVICE) for t in (q, k, v)))
    assert out.stride() == q.stride()


def test_fully_masked_rows():
    """A query whose every key is masked attends to nothing: zeros and no gradient, as PyTorch's
    math path (_safe_softmax) gives."""
    q, k, v = inputs(1, 2, 2, 6, 9, 16, 16, torch.float32)
    mask = torch.rand(6, 9) > 0.5
    mask[:, 0] = True
    mask[3] = False
    with sdpa_kernel(SDPBackend.MATH):
        ins = [t.clone().requires_grad_() for t in (q, k, v)]
        want = F.scaled_dot_product_attention(*ins, attn_mask=mask)
        want.sum().backward()
    got_in = [t.to(DEVICE).requires_grad_() for t in (q, k, v)]
    with fused():
        got = F.scaled_dot_product_attention(*got_in, attn_mask=mask.to(DEVICE))
    got.sum().backward()
    assert (got[:, :, 3].cpu() == 0).all()
    torch.testing.assert_close(got.cpu(), want)
    for w, a in zip(ins, got_in, strict=True):
        torch.testing.assert_close(a.grad.cpu(), w.grad)


def test_math_path_remains_for_what_the_kernels_do_not_cover():
    q, k, v = (torch.randn(1, 2, 5, 8, device=DEVICE) for _ in range(3))
    choice = torch.ops.aten._fused_sdp_choice
    with fused():
        assert choice(q, k, v) == OVERRIDEABLE
    assert choice(q, k, v) == MATH  # small scores: the math path is faster
    assert choice(q, k, v, dropout_p=0.1) == MATH
    assert choice(q.double(), k.double(), v.double()) == MATH
    assert choice(q[0], k[0], v[0]) == MATH  # 3-d
    wide = torch.randn(1, 2, 5, 300, device=DEVICE)
    assert choice(wide, wide, wide) == MATH
    k4 = torch.randn(1, 4, 5, 8, device=DEVICE)
    assert choice(torch.randn(1, 8, 5, 8, device=DEVICE), k4, k4) == MATH  # heads differ, no GQA
    with sdpa_kernel(SDPBackend.MATH):
        assert choice(q, k, v) == MATH
    # Dropout on the math path still runs (natively) and keeps the shape.
    assert F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).shape == (1, 2, 5, 8)


def test_fused_by_default_where_the_scores_would_be_large():
    """64 MiB of scores without gradients, 1 GiB with them (the math path is faster below)."""
    choice = torch.ops.aten._fused_sdp_choice
    q = torch.randn(1, 1, 8192, 8, device=DEVICE)  # 8192 x 8192 scores: 256 MiB
    assert choice(q, q, q) == OVERRIDEABLE
    needs_grad = q.clone().requires_grad_()
    assert choice(needs_grad, q, q) == MATH
    with torch.no_grad():
        assert choice(needs_grad, q, q) == OVERRIDEABLE
    long = torch.randn(2, 2, 2**14, 8, device=DEVICE)  # 4 GiB of scores
    assert choice(long.requires_grad_(), long, long) == OVERRIDEABLE
    small = torch.randn(4, 6, 256, 64, device=DEVICE)
    assert choice(small, small, small) == MATH


def test_bad_input_raises():
    op = torch.ops.aten._scaled_dot_product_fused_attention_overrideable
    q = torch.randn(1, 2, 5, 8, device=DEVICE)
    with pytest.raises(RuntimeError, match="dropout"):
        op(q, q, q, dropout_p=0.5)
    with pytest.raises(RuntimeError, match="head dimensions"):
        w = torch.randn(1, 1, 2, 300, device=DEVICE)
        op(w, w, w)
    with pytest.raises(RuntimeError, match="do not divide"):
        op(torch.randn(1, 3, 5, 8, device=DEVICE), q, q)


def test_long_sequence_never_holds_the_scores():
    """L = S = 8192, one head of 64, float32: the scores would take 256 MiB; the fused kernel's peak
    stays at the inputs and output (8 MiB) plus small change."""
    n, e = 8192, 64
    q, k, v = (torch.randn(1, 1, n, e) for _ in range(3))
    qa, ka, va = (t.to(DEVICE) for t in (q, k, v))
    torch.axon.synchronize()
    torch.axon.reset_peak_memory_stats()
    base = torch.axon.memory_allocated()
    out = F.scaled_dot_product_attention(qa, ka, va, is_causal=True)
    torch.axon.synchronize()
    peak = torch.axon.max_memory_allocated() - base
    assert peak < 8 * 2**20, f"peak {peak} bytes"
    assert peak < n * n * 4 / 16
    # A few rows against the CPU (the last ones see every key).
    rows = torch.tensor([0, 1, 4095, n - 2, n - 1])
    mask = torch.arange(n)[None, :] <= rows[:, None]
    want = F.scaled_dot_product_attention(q[:, :, rows], k, v, attn_mask=mask)
    torch.testing.assert_close(out[:, :, rows.to(DEVICE)].cpu(), want, atol=2e-5, rtol=2e-5)


def test_compiled_attention_is_one_extern_call():
    """Inductor keeps the overrideable op (a fallback kernel) in forward and backward, instead of
    the math decomposition's bmm + softmax + bmm."""
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()

    def fn(q, k, v, mask):
        return F.scaled_dot_product_attention(q * 1.5, k, v, attn_mask=mask).relu()

    q, k, v = inputs(2, 4, 4, 24, 24, 32, 32, torch.float32)
    mask = torch.randn(24, 24)
    want_in = [t.clone().requires_grad_() for t in (q, k, v)]
    want = fn(*want_in, mask)
    want.sum().backward()
    got_in = [t.to(DEVICE).requires_grad_() for t in (q, k, v)]

    def step():
        out = torch.compile(fn)(*got_in, mask.to(DEVICE))
        out.sum().backward()
        return out

    with fused():
        got, codes = run_and_get_code(step)
    torch.testing.assert_close(got.cpu(), want, atol=2e-5, rtol=2e-5)
    for w, a in zip(want_in, got_in, strict=True):
        torch.testing.assert_close(a.grad.cpu(), w.grad, atol=5e-5, rtol=5e-5)
    code = "\n".join(codes)
    assert "_scaled_dot_product_fused_attention_overrideable.default" in code
    assert "_scaled_dot_product_fused_attention_overrideable_backward.default" in code
    assert "bmm" not in code and "softmax" not in code


# ---- inference fast paths ----------------------------------------------------------------


@pytest.mark.usefixtures("no_fallback")
def test_transformer_encoder_fast_path_padding_mask_is_native():
    """nn.TransformerEncoder in eval mode asks whether the padding mask is left-aligned
    (_nested_tensor_from_mask_left_aligned): answered natively, the output as on the CPU."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    x = torch.randn(3, 5, 16)
    pad = torch.tensor([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0], [0, 1, 1, 1, 1]], dtype=torch.bool)
    for mask in (pad, torch.tensor([[0, 1, 0, 1, 1]] * 3, dtype=torch.bool)):
        assert torch._nested_tensor_from_mask_left_aligned(x.to("axon"), mask.logical_not().to("axon")) == (
            torch._nested_tensor_from_mask_left_aligned(x, mask.logical_not())
        )
    with torch.no_grad():
        want = enc(x, src_key_padding_mask=pad)
        torch.axon.fallback_ops(reset=True)
        got = enc.to("axon")(x.to("axon"), src_key_padding_mask=pad.to("axon"))
    assert "aten::_nested_tensor_from_mask_left_aligned" not in torch.axon.fallback_ops()
    torch.testing.assert_close(got.cpu(), want, atol=1e-5, rtol=1e-5)


@pytest.mark.usefixtures("no_fallback")
def test_multihead_attention_fast_path_is_native():
    """nn.MultiheadAttention's inference fast path (_native_multi_head_attention) with key
    padding and attention masks, self- and cross-attention, weights averaged or not."""
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(16, 4, batch_first=True).eval()
    x, y = torch.randn(3, 5, 16), torch.randn(3, 7, 16)
    pad = torch.tensor([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0], [0, 1, 1, 1, 1]], dtype=torch.bool)
    causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1)
    cases = [((x, x, x), {}), ((x, x, x), {"key_padding_mask": pad}), ((x, x, x), {"attn_mask": causal})]
    cases += [((x, x, x), {"key_padding_mask": pad, "average_attn_weights": False}), ((x, y, y), {})]
    ax = torch.nn.MultiheadAttention(16, 4, batch_first=True).eval().to("axon")
    ax.load_state_dict(mha.state_dict())
    with torch.no_grad():
        for args, kwargs in cases:
            want = mha(*args, **kwargs)
            got = ax(
                *(t.to("axon") for t in args),
                **{k: v.to("axon") for k, v in kwargs.items() if k != "average_attn_weights"},
                **{k: v for k, v in kwargs.items() if k == "average_attn_weights"},
            )
            for w, g in zip(want, got, strict=True):
                torch.testing.assert_close(g.cpu(), w, atol=1e-5, rtol=1e-5)
