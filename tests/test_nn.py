"""Native softmax, losses, dropout and random numbers against PyTorch's CPU results (and
against the distributions they should follow, for the random ones)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from conftest import DEVICE, compare, make_cpu, to_axon

pytestmark = pytest.mark.usefixtures("no_fallback")

try:
    from scipy import stats
except ImportError:  # pragma: no cover - scipy is optional
    stats = None

SOFTMAX_TOL = {
    torch.float32: {"atol": 1e-6, "rtol": 1e-5},
    torch.float64: {"atol": 1e-12, "rtol": 1e-10},
    torch.float16: {"atol": 1e-3, "rtol": 2e-3},
    torch.bfloat16: {"atol": 1e-2, "rtol": 1.6e-2},
}

# Shapes: long rows (a work-group per row), many short rows (a work-item per row), 3-D.
SOFTMAX_SHAPES = [(3, 300), (5000, 7), (4, 6, 5), (2, 513, 3), (1, 1024), (6, 1)]


def _grad_pair(shape, dtype, scale=3.0):
    x_cpu = (make_cpu(shape, torch.float32) * scale).to(dtype)
    return x_cpu.clone().requires_grad_(), to_axon(x_cpu).requires_grad_()


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("shape", SOFTMAX_SHAPES, ids=str)
def test_softmax_forward_backward(shape, dim, log):
    """float32 on axon against the CPU in float64: over a 5000-long dim the CPU's own float32
    gradient is off by 3e-5, more than axon's (whose sums are done in a tree)."""
    fn = F.log_softmax if log else F.softmax
    x_cpu, x_ax = _grad_pair(shape, torch.float32)
    x_ref = x_cpu.detach().double().requires_grad_()
    y_cpu, y_ref, y_ax = fn(x_cpu, dim=dim), fn(x_ref, dim=dim), fn(x_ax, dim=dim)
    compare(y_cpu.detach(), y_ax.detach(), **SOFTMAX_TOL[torch.float32])
    g = make_cpu(shape)
    y_ref.backward(g.double())
    y_ax.backward(to_axon(g))
    compare(x_ref.grad.float(), x_ax.grad, atol=1e-5, rtol=1e-4)
    y_cpu.backward(g)
    compare(x_cpu.grad, x_ax.grad, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_softmax_dtypes(dtype, log):
    fn = F.log_softmax if log else F.softmax
    for shape, dim in (((4, 300), 1), ((64, 9), -1), ((5, 6, 7), 1)):
        x_cpu, x_ax = _grad_pair(shape, dtype)
        y_cpu, y_ax = fn(x_cpu, dim=dim), fn(x_ax, dim=dim)
        assert y_ax.dtype == dtype
        compare(y_cpu.detach(), y_ax.detach(), **SOFTMAX_TOL[dtype])
        g = make_cpu(shape, dtype)
        y_cpu.backward(g)
        y_ax.backward(to_axon(g))
        if dtype == torch.float64:
            compare(x_cpu.grad, x_ax.grad, atol=1e-10, rtol=1e-9)
            continue
        # 16-bit gradients against the CPU's float64 gradient of the same inputs: log_softmax's
        # g - exp(y) * sum(g) cancels, so the CPU's own 16-bit result is off by an ulp of the
        # largest element too (axon is as close to float64 as the CPU or closer).
        x_ref = x_cpu.detach().double().requires_grad_()
        fn(x_ref, dim=dim).backward(g.double())
        atol = 0.02 if dtype == torch.float16 else 0.15
        compare(x_ref.grad.to(dtype), x_ax.grad, atol=atol, rtol=1e-2 if dtype == torch.float16 else 3e-2)


def test_softmax_dtype_argument():
    x_cpu = make_cpu((5, 40), torch.float16)
    x_ax = to_axon(x_cpu)
    out = F.softmax(x_ax, dim=1, dtype=torch.float32)
    assert out.dtype == torch.float32
    compare(F.softmax(x_cpu, dim=1, dtype=torch.float32), out)
    compare(F.log_softmax(x_cpu, dim=0, dtype=torch.float64), F.log_softmax(x_ax, dim=0, dtype=torch.float64))


def test_softmax_extreme_values():
    x = torch.tensor([[1000.0, 0.0, -1000.0], [-math.inf, 0.0, 1.0], [-math.inf, -math.inf, 2.0], [5.0, 5.0, 5.0]])
    for fn in (F.softmax, F.log_softmax):
        compare(fn(x, dim=1), fn(to_axon(x), dim=1))
    long = torch.full((2, 400), -math.inf)
    long[:, 123] = 0.0
    long[1, 399] = 0.0
    for fn in (F.softmax, F.log_softmax):
        compare(fn(long, dim=1), fn(to_axon(long), dim=1))


def test_softmax_noncontiguous_and_out():
    x_cpu = make_cpu((7, 300))
    x_ax = to_axon(x_cpu)
    compare(F.softmax(x_cpu.t(), dim=0), F.softmax(x_ax.t(), dim=0))
    compare(F.log_softmax(x_cpu[:, ::3], dim=1), F.log_softmax(x_ax[:, ::3], dim=1))
    compare(torch.softmax(x_cpu.t(), dim=1), torch.softmax(x_ax.t(), dim=1))
    out = torch.empty(300, 7, device=DEVICE)
    torch._softmax(x_ax.t().contiguous(), 1, False, out=out)
    compare(torch._softmax(x_cpu.t().contiguous(), 1, False), out)


def test_softmax_out_dtype_mismatch_rejected():
    # float16 out, not float64: a device without cl_khr_fp64 refuses float64 before the check
    for dev in ("cpu", DEVICE):
        x = torch.randn(4, 5, device=dev)
        with pytest.raises(RuntimeError, match="dtype"):
            torch.softmax(x, 1, out=torch.empty(4, 5, dtype=torch.float16, device=dev))
        with pytest.raises(RuntimeError, match="dtype"):
            torch.log_softmax(x, 1, out=torch.empty(4, 5, dtype=torch.float16, device=dev))


def test_softmax_integer_input_is_an_error():
    with pytest.raises(NotImplementedError):
        torch.softmax(torch.tensor([1, 2], device=DEVICE), 0)


def test_softmax_zero_size_and_zero_dim():
    z = torch.zeros(0, 5)
    compare(F.softmax(z, dim=1), F.softmax(to_axon(z), dim=1))
    compare(F.log_softmax(z, dim=0), F.log_softmax(to_axon(z), dim=0))
    s = torch.tensor(3.0)
    compare(F.softmax(s, dim=0), F.softmax(to_axon(s), dim=0))
    compare(F.log_softmax(s, dim=0), F.log_softmax(to_axon(s), dim=0))


def _masked_scores(shape, dim, dtype):
    """Random scores with some rows along dim all -inf, one row mixing NaN and -inf, one -inf."""
    x = torch.randn(shape, dtype=torch.float32).movedim(dim, -1)
    x[0] = -math.inf  # every row of the first slice is fully masked
    x[1, 0] = -math.inf
    x[1, 0, 1] = math.nan  # -inf and NaN: stays NaN, as on the CPU
    x[2, 1, : x.shape[-1] // 2] = -math.inf  # half masked
    return x.movedim(-1, dim).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("shape,dim", [((4, 3, 10), -1), ((4, 3, 300), -1), ((4, 6, 3), 1)])
def test_safe_softmax(dtype, shape, dim):
    """torch._safe_softmax (attention's softmax): fully masked rows give 0, in one native kernel."""
    x = _masked_scores(shape, dim, dtype)
    compare(torch._safe_softmax(x, dim), torch._safe_softmax(to_axon(x), dim))
    compare(torch._safe_softmax(x, dim, torch.float32), torch._safe_softmax(to_axon(x), dim, torch.float32))


def test_safe_softmax_backward_and_attention():
    x = _masked_scores((4, 3, 10), -1, torch.float32)
    x[1, 0, 1] = 0.0  # no NaN: gradients compare everywhere
    g = torch.randn(4, 3, 10)
    c, a = x.clone().requires_grad_(), to_axon(x).requires_grad_()
    (torch._safe_softmax(c, -1) * g).sum().backward()
    (torch._safe_softmax(a, -1) * to_axon(g)).sum().backward()
    compare(c.grad, a.grad)
    # Attention with a boolean mask that hides every key of some queries.
    q, k, v = (torch.randn(2, 3, 5, 8) for _ in range(3))
    mask = torch.rand(2, 1, 5, 5) > 0.4
    mask[0, 0, 2] = False
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    got = F.scaled_dot_product_attention(*(to_axon(t) for t in (q, k, v)), attn_mask=to_axon(mask))
    compare(want, got)
    assert (got[0, :, 2] == 0).all()


# ---- cross entropy and nll -------------------------------------------------------------------------


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("ignore", [None, 2], ids=["no-ignore", "ignore2"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("n, c", [(8, 5), (600, 10), (3, 300)], ids=str)
def test_cross_entropy(n, c, reduction, ignore, weighted):
    x_cpu, x_ax = _grad_pair((n, c), torch.float32)
    target = torch.randint(0, c, (n,))
    target[: n // 4] = 2  # some ignored samples when ignore_index = 2
    w = torch.rand(c) + 0.5 if weighted else None
    kw = {"reduction": reduction}
    if ignore is not None:
        kw["ignore_index"] = ignore
    loss_cpu = F.cross_entropy(x_cpu, target, weight=w, **kw)
    loss_ax = F.cross_entropy(x_ax, to_axon(target), weight=to_axon(w) if weighted else None, **kw)
    compare(loss_cpu.detach(), loss_ax.detach(), atol=1e-5, rtol=1e-5)
    g = make_cpu(loss_cpu.shape)
    loss_cpu.backward(g)
    loss_ax.backward(to_axon(g))
    compare(x_cpu.grad, x_ax.grad, atol=1e-6, rtol=1e-5)


def test_cross_entropy_all_ignored_and_float64():
    x_cpu, x_ax = _grad_pair((4, 3), torch.float64)
    t = torch.full((4,), -100)
    compare(F.cross_entropy(x_cpu, t), F.cross_entropy(x_ax, to_axon(t)))  # nan (0 / 0) on both
    compare(F.cross_entropy(x_cpu, t, reduction="sum"), F.cross_entropy(x_ax, to_axon(t), reduction="sum"))
    t2 = torch.tensor([0, 2, 1, 2])
    loss_cpu, loss_ax = F.cross_entropy(x_cpu, t2), F.cross_entropy(x_ax, to_axon(t2))
    compare(loss_cpu.detach(), loss_ax.detach())
    loss_cpu.backward()
    loss_ax.backward()
    compare(x_cpu.grad, x_ax.grad)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_loss(reduction):
    logp_cpu, logp_ax = _grad_pair((6, 4), torch.float32)
    t = torch.tensor([0, 3, 1, 1, 2, 3])
    w = torch.tensor([1.0, 2.0, 0.5, 3.0])
    for weight in (None, w):
        a = F.nll_loss(logp_cpu, t, weight=weight, reduction=reduction)
        b = F.nll_loss(logp_ax, to_axon(t), weight=to_axon(weight) if weight is not None else None, reduction=reduction)
        compare(a.detach(), b.detach())
    # A single sample: 1-D input, 0-dim target.
    x_cpu, x_ax = _grad_pair((5,), torch.float32)
    t0 = torch.tensor(3)
    a = F.nll_loss(x_cpu, t0, reduction=reduction)
    b = F.nll_loss(x_ax, to_axon(t0), reduction=reduction)
    compare(a.detach(), b.detach())
    a.sum().backward()
    b.sum().backward()
    compare(x_cpu.grad, x_ax.grad)


def test_cross_entropy_training_step_matches_cpu():
    """A linear classifier's loss and weight gradient, end to end."""
    torch.manual_seed(1)
    w_cpu = torch.randn(20, 6, requires_grad=True)
    w_ax = to_axon(w_cpu.detach()).requires_grad_()
    x = torch.randn(32, 20)
    t = torch.randint(0, 6, (32,))
    loss_cpu = F.cross_entropy(x @ w_cpu, t, label_smoothing=0.0)
    loss_ax = F.cross_entropy(to_axon(x) @ w_ax, to_axon(t))
    loss_cpu.backward()
    loss_ax.backward()
    compare(loss_cpu.detach(), loss_ax.detach(), atol=1e-5, rtol=1e-5)
    compare(w_cpu.grad, w_ax.grad, atol=1e-5, rtol=1e-4)


# ---- mean squared error ------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_mse_loss(reduction, dtype):
    x_cpu, x_ax = _grad_pair((7, 9), dtype)
    y = make_cpu((7, 9), dtype)
    loss_cpu = F.mse_loss(x_cpu, y, reduction=reduction)
    loss_ax = F.mse_loss(x_ax, to_axon(y), reduction=reduction)
    compare(loss_cpu.detach(), loss_ax.detach())
    g = make_cpu(loss_cpu.shape, dtype)
    loss_cpu.backward(g)
    loss_ax.backward(to_axon(g))
    compare(x_cpu.grad, x_ax.grad)


def test_mse_loss_broadcast_target_and_noncontiguous():
    x_cpu, x_ax = _grad_pair((9, 7), torch.float32)
    y = make_cpu((7, 9))
    loss_cpu = F.mse_loss(x_cpu, y.t())
    loss_ax = F.mse_loss(x_ax, to_axon(y).t())
    compare(loss_cpu.detach(), loss_ax.detach())
    loss_cpu.backward()
    loss_ax.backward()
    compare(x_cpu.grad, x_ax.grad)
    # Target requiring grad too.
    t_cpu, t_ax = _grad_pair((9, 7), torch.float32)
    a, b = _grad_pair((9, 7), torch.float32)
    F.mse_loss(a, t_cpu, reduction="sum").backward()
    F.mse_loss(b, t_ax, reduction="sum").backward()
    compare(t_cpu.grad, t_ax.grad)
    compare(a.grad, b.grad)


# ---- dropout ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_train(p):
    torch.axon.manual_seed(123)
    x = torch.rand(100_000, device=DEVICE) + 1.0  # never zero
    y = F.dropout(x, p=p, training=True)
    y_cpu, x_cpu = y.cpu(), x.cpu()
    zeros = (y_cpu == 0).float().mean().item()
    # Binomial standard deviation of the fraction: sqrt(p (1 - p) / n) < 0.0016; allow 5 sigma.
    assert abs(zeros - p) < 5 * math.sqrt(p * (1 - p) / x.numel())
    kept = y_cpu != 0
    torch.testing.assert_close(y_cpu[kept], x_cpu[kept] / (1 - p), rtol=1e-6, atol=1e-6)
    # Backward: the gradient is the same mask, scaled.
    xg = x.clone().requires_grad_()
    torch.axon.manual_seed(7)
    out = F.dropout(xg, p=p, training=True)
    out.backward(torch.ones_like(out))
    g = xg.grad.cpu()
    mask = out.detach().cpu() != 0
    torch.testing.assert_close(g, mask.float() / (1 - p))


def test_dropout_eval_and_edges():
    x_cpu = make_cpu((50, 40))
    x = to_axon(x_cpu)
    compare(x_cpu, F.dropout(x, p=0.5, training=False))
    compare(x_cpu, F.dropout(x, p=0.0, training=True))
    compare(torch.zeros(50, 40), F.dropout(x, p=1.0, training=True))
    module = torch.nn.Dropout(0.3).to(DEVICE).eval()
    compare(x_cpu, module(x))
    module.train()
    y = module(x)
    assert ((y == 0) | ((y - x / 0.7).abs() < 1e-5)).all().item()


def test_dropout_seeded_reproducible():
    x = torch.ones(1000, device=DEVICE)
    torch.axon.manual_seed(5)
    a = F.dropout(x, 0.5).cpu()
    torch.axon.manual_seed(5)
    b = F.dropout(x, 0.5).cpu()
    c = F.dropout(x, 0.5).cpu()
    assert torch.equal(a, b)
    assert not torch.equal(b, c)


# ---- random numbers ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [torch.randn, torch.rand], ids=lambda f: f.__name__)
def test_random_seed_reproducible(fn):
    torch.axon.manual_seed(1234)
    a = fn(1000, device=DEVICE).cpu()
    b = fn(1000, device=DEVICE).cpu()
    torch.axon.manual_seed(1234)
    a2 = fn(1000, device=DEVICE).cpu()
    b2 = fn(1000, device=DEVICE).cpu()
    assert torch.equal(a, a2) and torch.equal(b, b2)
    assert not torch.equal(a, b)
    torch.axon.manual_seed(4321)
    assert not torch.equal(a, fn(1000, device=DEVICE).cpu())
    # torch.manual_seed seeds every device, axon included (as it does CUDA).
    torch.manual_seed(99)
    c = fn(1000, device=DEVICE).cpu()
    torch.manual_seed(99)
    assert torch.equal(c, fn(1000, device=DEVICE).cpu())
    # Seeding the CPU generator alone (a CPU Generator object) leaves axon's stream alone.
    torch.axon.manual_seed(1234)
    torch.default_generator.manual_seed(5)
    assert torch.equal(a, fn(1000, device=DEVICE).cpu())


def test_random_state_roundtrip():
    torch.axon.manual_seed(77)
    state = torch.axon.get_rng_state()
    a = torch.randn(100, device=DEVICE).cpu()
    torch.axon.set_rng_state(state)
    b = torch.randn(100, device=DEVICE).cpu()
    assert torch.equal(a, b)
    g = torch.Generator(device=DEVICE)
    g.manual_seed(3)
    c = torch.randn(100, device=DEVICE, generator=g).cpu()
    g.manual_seed(3)
    d = torch.randn(100, device=DEVICE, generator=g).cpu()
    assert torch.equal(c, d)


def _check_distribution(samples: torch.Tensor, dist: str, a: float, b: float):
    x = samples.double()
    n = x.numel()
    if dist == "normal":
        mean, std = a, b
        assert abs(x.mean().item() - mean) < 5 * std / math.sqrt(n)
        assert abs(x.std().item() - std) < 5 * std / math.sqrt(2 * n) + 1e-3 * std
    else:
        lo, hi = a, b
        assert x.min().item() >= lo and x.max().item() < hi
        mean, std = (lo + hi) / 2, (hi - lo) / math.sqrt(12)
        assert abs(x.mean().item() - mean) < 5 * std / math.sqrt(n)
        assert abs(x.std().item() - std) < 0.01 * std
    if stats is not None:
        cdf = stats.norm(loc=a, scale=b).cdf if dist == "normal" else stats.uniform(loc=a, scale=b - a).cdf
        result = stats.kstest(x.numpy(), cdf)
        assert result.pvalue > 1e-4, f"KS test rejects the {dist} distribution: {result}"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_randn_distribution(dtype):
    torch.axon.manual_seed(2024)
    x = torch.randn(100_000, device=DEVICE, dtype=dtype)
    assert x.dtype == dtype and x.device.type == DEVICE
    _check_distribution(x.cpu(), "normal", 0.0, 1.0)
    y = torch.empty(100_000, device=DEVICE, dtype=dtype).normal_(3.0, 0.5)
    _check_distribution(y.cpu(), "normal", 3.0, 0.5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_rand_distribution(dtype):
    torch.axon.manual_seed(2025)
    x = torch.rand(100_000, device=DEVICE, dtype=dtype)
    _check_distribution(x.cpu(), "uniform", 0.0, 1.0)
    y = torch.empty(100_000, device=DEVICE, dtype=dtype).uniform_(-2.0, 3.0)
    _check_distribution(y.cpu(), "uniform", -2.0, 3.0)


def test_random_half_and_shapes():
    torch.axon.manual_seed(1)
    h = torch.randn(20_000, device=DEVICE, dtype=torch.float16).cpu().float()
    assert abs(h.mean().item()) < 0.05 and abs(h.std().item() - 1) < 0.05
    b = torch.rand(3, 0, 4, device=DEVICE)
    assert b.shape == (3, 0, 4)
    s = torch.randn((), device=DEVICE)
    assert s.dim() == 0 and math.isfinite(s.item())
    like = torch.rand_like(torch.zeros(5, 6, device=DEVICE))
    assert like.shape == (5, 6) and like.device.type == DEVICE
    # Filling a non-contiguous view touches only its elements.
    z = torch.zeros(6, 8, device=DEVICE)
    z[:, ::2].uniform_(1.0, 2.0)
    zc = z.cpu()
    assert (zc[:, 1::2] == 0).all() and (zc[:, ::2] >= 1).all()


def test_bernoulli():
    torch.axon.manual_seed(11)
    x = torch.empty(100_000, device=DEVICE).bernoulli_(0.3)
    xc = x.cpu()
    assert set(xc.unique().tolist()) <= {0.0, 1.0}
    assert abs(xc.mean().item() - 0.3) < 5 * math.sqrt(0.3 * 0.7 / 1e5)
