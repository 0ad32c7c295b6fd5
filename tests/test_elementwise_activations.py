"""The ops of csrc/ops/elementwise_activations.cpp against PyTorch's CPU results (forward and
gradient): fmax / fmin / logaddexp2 / heaviside / nextafter / frexp / angle / logit, shrinkage,
glu (and its forward-mode derivative), prelu, rrelu, smooth l1 / huber / binary cross entropy
losses, renorm, linalg.cross, channel_shuffle, sgn's zero gradient and masked_fill's 0-dim
backward."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from conftest import DEVICE, FLOAT_DTYPES, compare, make_cpu, make_pair, to_axon

pytestmark = pytest.mark.usefixtures("no_fallback")

SHAPES = [(4, 5), (0, 3), ()]
LAYOUTS = ["contiguous", "transposed", "sliced"]


def grads(fn, *inputs):
    """fn(*inputs) and the gradients of a fixed weighted sum of it with respect to the inputs."""
    leaves = [t.detach().requires_grad_() for t in inputs]
    out = fn(*leaves)
    weight = torch.linspace(-1, 2, out.numel(), dtype=out.dtype).reshape(out.shape).to(out.device)
    return (out, *torch.autograd.grad((out * weight).sum(), leaves))


def check_grads(fn, cpu_inputs, axon_inputs, widen=False, **tol):
    """Compares with the CPU; ``widen`` computes the CPU side in float32 and rounds the results,
    for float16 / bfloat16 ops whose CPU kernels round intermediate values (less accurately)."""
    if widen:
        dtype = cpu_inputs[0].dtype
        ref = grads(fn, *(t.float() for t in cpu_inputs))
        compare(tuple(r.to(dtype) for r in ref), grads(fn, *axon_inputs), **tol)
    else:
        compare(grads(fn, *cpu_inputs), grads(fn, *axon_inputs), **tol)


def special_values(dtype):
    return torch.tensor([0.0, -0.0, 1.0, -2.5, math.inf, -math.inf, math.nan, 1e-30], dtype=dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.int64, torch.int32, torch.uint8, torch.bool], ids=str)
@pytest.mark.parametrize("op", [torch.fmax, torch.fmin, torch.heaviside])
def test_fmax_fmin_heaviside(op, dtype):
    for shape, layout in zip(SHAPES, LAYOUTS, strict=True):
        a, ax = make_pair(shape, dtype, layout)
        b, bx = make_pair(shape, dtype, "contiguous")
        compare(op(a, b), op(ax, bx))
    if dtype.is_floating_point:
        x = special_values(dtype)
        y = x.flip(0)
        compare(op(x, y), op(*to_axon(x, y)))
        # Broadcasting.
        a, b = make_cpu((3, 1), dtype), make_cpu((4,), dtype)
        compare(op(a, b), op(*to_axon(a, b)))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_logaddexp2_nextafter(dtype):
    a, ax = make_pair((5, 6), dtype, "transposed")
    b, bx = make_pair((5, 6), dtype)
    compare(torch.logaddexp2(a, b), torch.logaddexp2(ax, bx))
    x = special_values(dtype)
    y = x.flip(0)
    compare(torch.logaddexp2(x, y), torch.logaddexp2(*to_axon(x, y)))
    # nextafter is exact, in the storage type, at zero, infinities and the largest values.
    big = torch.finfo(dtype).max
    tiny = torch.finfo(dtype).tiny
    xs = torch.tensor([0.0, -0.0, 1.0, 1.0, 2.0, -2.0, big, -big, math.inf, tiny, -tiny, 3.5, math.nan], dtype=dtype)
    ys = torch.tensor([1.0, -1.0, 2.0, 0.0, 0.0, 0.0, math.inf, 0.0, 0.0, 0.0, 1.0, 3.5, 1.0], dtype=dtype)
    compare(torch.nextafter(xs, ys), torch.nextafter(*to_axon(xs, ys)), atol=0, rtol=0)
    compare(torch.nextafter(a, b), torch.nextafter(ax, bx), atol=0, rtol=0)
    check_grads(torch.logaddexp2, (a, b), (ax, bx))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_frexp(dtype):
    for shape, layout in zip(SHAPES, LAYOUTS, strict=True):
        a, ax = make_pair(shape, dtype, layout, low=-100, high=100)
        compare(torch.frexp(a), torch.frexp(ax))
    x = torch.tensor([0.0, -0.0, 1.0, 0.75, -3.0, 1e-30, 1024.0], dtype=dtype)
    compare(torch.frexp(x), torch.frexp(to_axon(x)))
    m, e = torch.empty(0, dtype=dtype, device=DEVICE), torch.empty(0, dtype=torch.int32, device=DEVICE)
    torch.frexp(to_axon(x), out=(m, e))
    compare(torch.frexp(x), (m, e))
    check_grads(lambda t: torch.frexp(t).mantissa, (x,), (to_axon(x),))
    with pytest.raises(RuntimeError, match="only supports floating-point"):
        torch.frexp(torch.arange(3, device=DEVICE))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.int64, torch.uint8, torch.bool], ids=str)
def test_angle_logit(dtype):
    a, ax = make_pair((4, 5), dtype, "sliced")
    compare(torch.angle(a), torch.angle(ax))
    low, high = (0.0, 1.0) if dtype.is_floating_point else (0, 2)
    p, px = make_pair((4, 5), dtype, "transposed", low=low, high=high)
    for eps in (None, 0.1):
        compare(torch.logit(p, eps), torch.logit(px, eps))
    if dtype.is_floating_point:
        x = torch.tensor([-1.0, 0.0, 0.05, 0.5, 1.0, 2.0, math.nan], dtype=dtype)
        compare(torch.angle(x), torch.angle(to_axon(x)))
        for eps in (None, 0.1):
            compare(torch.logit(x, eps), torch.logit(to_axon(x), eps))
            check_grads(lambda t, eps=eps: torch.logit(t, eps), (x,), (to_axon(x),))
        c, cx = p.clone(), px.clone()
        compare(c.logit_(0.2), cx.logit_(0.2))
        check_grads(torch.angle, (a,), (ax,))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_shrink(dtype):
    for shape, layout in zip(SHAPES, LAYOUTS, strict=True):
        a, ax = make_pair(shape, dtype, layout, low=-2, high=2)
        for lambd in (0.5, 1.0):
            check_grads(lambda t, lambd=lambd: F.softshrink(t, lambd), (a,), (ax,))
            check_grads(lambda t, lambd=lambd: F.hardshrink(t, lambd), (a,), (ax,))
    x = special_values(dtype)
    compare(F.softshrink(x), F.softshrink(to_axon(x)))
    compare(F.hardshrink(x), F.hardshrink(to_axon(x)))
    with pytest.raises(RuntimeError, match="lambda must be in range"):
        F.softshrink(to_axon(x), -1.0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_glu_prelu(dtype):
    a, ax = make_pair((4, 6, 2), dtype, "transposed")
    for dim in (0, 1, -1):
        check_grads(lambda t, dim=dim: F.glu(t, dim), (a,), (ax,), widen=dtype in (torch.float16, torch.bfloat16))
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(to_axon(make_cpu((3, 5), dtype)), 1)
    w = make_cpu((6,), dtype)
    check_grads(F.prelu, (a, w), (ax, to_axon(w)))
    w1 = make_cpu((1,), dtype)
    check_grads(F.prelu, (a.transpose(0, 1), w1), (ax.transpose(0, 1), to_axon(w1)))
    e = make_cpu((0, 6), dtype)
    compare(F.prelu(e, w), F.prelu(to_axon(e), to_axon(w)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
def test_rrelu(dtype):
    a, ax = make_pair((5, 7), dtype, "sliced")
    check_grads(lambda t: F.rrelu(t, 0.1, 0.3, training=False), (a,), (ax,))
    # Training draws one slope per non-positive element from [lower, upper].
    x = ax.detach().requires_grad_()
    out = F.rrelu(x, 0.1, 0.3, training=True)
    (g,) = torch.autograd.grad(out.sum(), x)
    slope = (out / x.detach()).cpu().float()
    neg = (a <= 0).float()
    assert torch.all((slope - 1).abs() * (1 - neg) < 1e-2)
    assert torch.all(((slope >= 0.1 - 1e-2) & (slope <= 0.3 + 1e-2)).float() * neg == neg)
    compare(slope.to(dtype).where(a <= 0, torch.ones((), dtype=dtype)), g, atol=1e-2, rtol=1e-2)
    torch.manual_seed(5)
    r1 = F.rrelu(ax, training=True)
    torch.manual_seed(5)
    r2 = F.rrelu(ax, training=True)
    compare(r1.cpu(), r2, atol=0, rtol=0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_losses(dtype, reduction):
    x, xx = make_pair((4, 5), dtype, "transposed", low=-2, high=2)
    t, tx = make_pair((4, 5), dtype, low=-2, high=2)
    tol = {"atol": 5e-2, "rtol": 5e-2} if dtype == torch.bfloat16 else {}
    for beta in (0.5, 1.0):
        check_grads(
            lambda i, j, beta=beta: F.smooth_l1_loss(i, j, reduction=reduction, beta=beta), (x, t), (xx, tx), **tol
        )
        check_grads(
            lambda i, j, beta=beta: F.huber_loss(i, j, reduction=reduction, delta=beta), (x, t), (xx, tx), **tol
        )
    p, px = make_pair((4, 5), dtype, "sliced", low=0.05, high=0.95)
    q, qx = make_pair((4, 5), dtype, low=0, high=1)
    w = make_cpu((5,), dtype, low=0, high=2)
    check_grads(lambda i, j: F.binary_cross_entropy(i, j, reduction=reduction), (p, q), (px, qx), **tol)
    check_grads(
        lambda i: F.binary_cross_entropy(i, q.to(i.device), w.to(i.device), reduction=reduction), (p,), (px,), **tol
    )
    # log is clamped at -100 at the ends of [0, 1].
    ends, tgt = torch.tensor([0.0, 1.0, 0.0, 1.0], dtype=dtype), torch.tensor([1.0, 0.0, 0.0, 1.0], dtype=dtype)
    compare(
        F.binary_cross_entropy(ends, tgt, reduction=reduction),
        F.binary_cross_entropy(*to_axon(ends, tgt), reduction=reduction),
    )
    e = torch.zeros(0, 3, dtype=dtype)
    compare(F.smooth_l1_loss(e, e, reduction=reduction), F.smooth_l1_loss(*to_axon(e, e), reduction=reduction))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_renorm(dtype):
    a, ax = make_pair((3, 4, 5), dtype, "transposed")
    tol = {"atol": 2e-2, "rtol": 2e-2} if dtype == torch.bfloat16 else {}
    for p, dim, maxnorm in ((2, 0, 1.0), (1, 1, 2.0), (3, -1, 0.5), (2, 2, 100.0)):
        check_grads(lambda t, p=p, dim=dim, maxnorm=maxnorm: torch.renorm(t, p, dim, maxnorm), (a,), (ax,), **tol)
    with pytest.raises(RuntimeError, match="non-positive-norm"):
        torch.renorm(ax, 0, 0, 1.0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.int64, torch.int32, torch.uint8], ids=str)
def test_cross(dtype):
    a, ax = make_pair((4, 3), dtype, "transposed")
    b, bx = make_pair((4, 3), dtype, "sliced")
    compare(torch.linalg.cross(a, b), torch.linalg.cross(ax, bx))
    c, cx = make_pair((3, 2, 5), dtype)
    d = make_cpu((3, 1, 5), dtype)
    compare(torch.cross(c, d, dim=0), torch.cross(cx, to_axon(d), dim=0))
    e = make_cpu((0, 3), dtype)
    compare(torch.linalg.cross(e, e), torch.linalg.cross(*to_axon(e, e)))
    if dtype.is_floating_point:
        check_grads(torch.linalg.cross, (a, b), (ax, bx))
    with pytest.raises(RuntimeError, match="must have length 3"):
        torch.linalg.cross(to_axon(make_cpu((4, 2), dtype)), to_axon(make_cpu((4, 2), dtype)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool], ids=str)
def test_channel_shuffle(dtype):
    a, ax = make_pair((2, 6, 3, 2), dtype, "transposed")
    for groups in (1, 2, 3, 6):
        compare(F.channel_shuffle(a, groups), F.channel_shuffle(ax, groups))
    e = make_cpu((0, 4, 2), dtype)
    compare(F.channel_shuffle(e, 2), F.channel_shuffle(to_axon(e), 2))
    if dtype.is_floating_point:
        check_grads(lambda t: F.channel_shuffle(t, 3), (a,), (ax,))
    with pytest.raises(RuntimeError, match="divisible by groups"):
        F.channel_shuffle(ax, 4)


def test_sgn_zero_gradient():
    a, ax = make_pair((3, 4), layout="transposed")
    check_grads(torch.sgn, (a,), (ax,))
    z = torch._efficientzerotensor((2, 3), device=DEVICE)
    assert z.device.type == DEVICE and z._is_zerotensor()
    compare(torch.zeros(2, 3) + 1, z + torch.ones(2, 3, device=DEVICE))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_masked_fill_backward(dtype):
    for shape in ((), (4, 5)):
        a, ax = make_pair(shape, dtype)
        mask = make_cpu(shape, torch.bool)
        v = torch.tensor(2.5, dtype=dtype)
        check_grads(lambda s, val, mask=mask: s.masked_fill(mask.to(s.device), val), (a, v), (ax, to_axon(v)))
    x = torch.tensor(3.0)
    compare(x.masked_select(torch.tensor(True)), to_axon(x).masked_select(to_axon(torch.tensor(True))))


def test_glu_forward_mode_derivative():
    import torch.autograd.forward_ad as fwad

    x, t = torch.randn(4, 6), torch.randn(4, 6)
    results = []
    for device in ("cpu", "axon"):
        with fwad.dual_level():
            out = F.glu(fwad.make_dual(x.to(device), t.to(device)), dim=1)
            results.append([r.cpu() for r in fwad.unpack_dual(out)[:2]])
    for c, a in zip(*results, strict=True):
        torch.testing.assert_close(a, c, atol=1e-6, rtol=1e-5)
