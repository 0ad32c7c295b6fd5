"""Native factories (linspace, logspace, eye), reductions (nansum, nanmean, count_nonzero,
aminmax, equal, trace, vdot, addbmm) and the remaining random distributions (cauchy_,
log_normal_, geometric_, bernoulli with tensor p, normal with tensor parameters), against
PyTorch's CPU results (for random numbers: shapes, dtypes, supports and reproducibility; the
distributions themselves are checked in test_random_stats.py)."""

from __future__ import annotations

import math

import pytest
import torch
from conftest import DEVICE, compare, make_pair, to_axon

pytestmark = pytest.mark.usefixtures("no_fallback")

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int64, torch.int32, torch.uint8]


# ---- factories ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
def test_linspace_exact(dtype):
    """Bit-exact with the CPU: the same two-halves formula in the same precision."""
    cases = [(0, 10, 5), (-3.7, 10.3, 50), (2, 2, 3), (10, -10, 7), (0, 1, 1), (0, 1, 0), (1, 200, 33)]
    for start, end, steps in cases:
        if dtype == torch.uint8 and min(start, end) < 0:
            continue
        c = torch.linspace(start, end, steps, dtype=dtype)
        a = torch.linspace(start, end, steps, dtype=dtype, device=DEVICE)
        compare(c, a, atol=0, rtol=0)


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
def test_logspace(dtype):
    cases = [(0, 3, 4, 10.0), (-2, 2, 17, 2.0), (1, 0.5, 6, math.e), (0, 5, 1, 10.0), (0, 1, 0, 10.0)]
    for start, end, steps, base in cases:
        if dtype == torch.uint8 and min(start, end) < 0:
            continue  # CPU's result rests on out-of-range conversions, undefined in C (19 for 2**1.75)
        c = torch.logspace(start, end, steps, base, dtype=dtype)
        a = torch.logspace(start, end, steps, base, dtype=dtype, device=DEVICE)
        compare(c, a)


def test_linspace_tensor_overloads_and_out():
    s, e = torch.tensor(-1.5), torch.tensor(4.0)
    compare(torch.linspace(s, e, 9), torch.linspace(to_axon(s), to_axon(e), 9, device=DEVICE))
    compare(torch.logspace(s, e, 9, 2.0), torch.logspace(to_axon(s), to_axon(e), 9, 2.0, device=DEVICE))
    # A strided out= and one of another shape that already has `steps` elements.
    c_out, a_out = torch.zeros(20)[::2], torch.zeros(20, device=DEVICE)[::2]
    torch.linspace(0, 1, 10, out=c_out)
    torch.linspace(0, 1, 10, out=a_out)
    compare(c_out, a_out)
    c_out, a_out = torch.zeros(2, 5), torch.zeros(2, 5, device=DEVICE)
    torch.logspace(0, 1, 10, out=c_out)
    torch.logspace(0, 1, 10, out=a_out)
    compare(c_out, a_out)
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.linspace(0, 1, -1, device=DEVICE)


@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool], ids=str)
def test_eye(dtype):
    for n, m in [(0, 0), (1, 1), (4, 4), (3, 5), (6, 2)]:
        compare(torch.eye(n, m, dtype=dtype), torch.eye(n, m, dtype=dtype, device=DEVICE))
    compare(torch.eye(3, dtype=dtype), torch.eye(3, dtype=dtype, device=DEVICE))
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0"):
        torch.eye(-1, device=DEVICE)


def test_signal_windows():
    for name in ["hamming", "hann", "bartlett", "blackman", "cosine", "nuttall"]:
        fn = getattr(torch.signal.windows, name)
        for m, sym in [(1, True), (8, True), (9, False)]:
            compare(fn(m, sym=sym), fn(m, sym=sym, device=DEVICE))
    compare(torch.signal.windows.gaussian(10, std=2.0), torch.signal.windows.gaussian(10, std=2.0, device=DEVICE))
    compare(torch.signal.windows.exponential(7, tau=2.0), torch.signal.windows.exponential(7, tau=2.0, device=DEVICE))
    w = torch.signal.windows
    compare(w.general_hamming(6, alpha=0.6), w.general_hamming(6, alpha=0.6, device=DEVICE))
    compare(w.general_cosine(6, a=[0.5, 0.3, 0.2]), w.general_cosine(6, a=[0.5, 0.3, 0.2], device=DEVICE))


# ---- reductions --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool], ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_nansum_nanmean(dtype, layout):
    cpu, ax = make_pair((6, 700), dtype, layout)
    if dtype.is_floating_point:
        mask = torch.rand(cpu.shape) < 0.2
        cpu, ax = cpu.masked_fill(mask, math.nan), ax.masked_fill(to_axon(mask), math.nan)
    kw = {"atol": 5e-2, "rtol": 1e-2} if dtype in (torch.float16, torch.bfloat16) else {}
    compare(torch.nansum(cpu), torch.nansum(ax), **kw)
    for dim in (0, 1, (0, 1)):
        compare(torch.nansum(cpu, dim), torch.nansum(ax, dim), **kw)
        compare(torch.nansum(cpu, dim, keepdim=True), torch.nansum(ax, dim, keepdim=True), **kw)
        if dtype.is_floating_point:
            compare(torch.nanmean(cpu, dim), torch.nanmean(ax, dim), **kw)
    compare(torch.nansum(cpu, 1, dtype=torch.float64), torch.nansum(ax, 1, dtype=torch.float64))


def test_nansum_special_and_grad():
    x = torch.tensor([[math.nan, math.nan], [1.0, math.inf], [-math.inf, 2.0]])
    compare(torch.nansum(x, 1), torch.nansum(to_axon(x), 1))
    compare(torch.nansum(torch.zeros(0, 3), 0), torch.nansum(torch.zeros(0, 3, device=DEVICE), 0))
    compare(torch.nanmean(x, 1), torch.nanmean(to_axon(x), 1))
    c = x.clone().requires_grad_()
    a = to_axon(x).requires_grad_()
    torch.nansum(c, 0).sum().backward()
    torch.nansum(a, 0).sum().backward()
    compare(c.grad, a.grad)


@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool], ids=str)
def test_count_nonzero(dtype):
    cpu, ax = make_pair((5, 4, 3), dtype, "transposed", low=-1 if dtype != torch.uint8 else 0, high=2)
    compare(torch.count_nonzero(cpu), torch.count_nonzero(ax))
    for dim in (0, -1, (0, 2)):
        compare(torch.count_nonzero(cpu, dim), torch.count_nonzero(ax, dim))
    compare(torch.count_nonzero(torch.zeros(0, 2)), torch.count_nonzero(torch.zeros(0, 2, device=DEVICE)))


@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool], ids=str)
def test_aminmax(dtype):
    cpu, ax = make_pair((4, 9), dtype, "sliced")
    compare(torch.aminmax(cpu), torch.aminmax(ax))
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            compare(torch.aminmax(cpu, dim=dim, keepdim=keepdim), torch.aminmax(ax, dim=dim, keepdim=keepdim))
    compare(torch.aminmax(cpu[0, 0]), torch.aminmax(ax[0, 0]))
    compare(torch.aminmax(cpu[0, 0], dim=0), torch.aminmax(ax[0, 0], dim=0))
    if dtype.is_floating_point:
        x = torch.tensor([[1.0, math.nan, -2.0], [3.0, 0.5, -math.inf]], dtype=dtype)
        compare(torch.aminmax(x, dim=1), torch.aminmax(to_axon(x), dim=1))
    with pytest.raises(RuntimeError, match="aminmax"):
        torch.aminmax(torch.zeros(0, 3, dtype=dtype, device=DEVICE))
    with pytest.raises(IndexError, match="aminmax"):
        torch.aminmax(torch.zeros(0, 3, dtype=dtype, device=DEVICE), dim=0)


def test_equal():
    cpu, ax = make_pair((3, 5), torch.float32, "transposed")
    assert torch.equal(ax, ax.clone())
    assert torch.equal(ax, ax.contiguous())
    other = ax.clone()
    other[2, 4] += 1
    assert not torch.equal(ax, other)
    assert not torch.equal(ax, ax[:2])
    assert torch.equal(torch.zeros(0, device=DEVICE), torch.zeros(0, device=DEVICE))
    nan = torch.tensor([1.0, math.nan], device=DEVICE)
    assert torch.equal(nan, nan) == torch.equal(nan.cpu(), nan.cpu())
    assert torch.equal(nan, nan.clone()) == torch.equal(nan.cpu(), nan.cpu().clone())
    # Mixed dtypes compare after promotion, as on the CPU.
    i = torch.arange(4)
    assert torch.equal(to_axon(i), to_axon(i.double())) == torch.equal(i, i.double())
    # CUDA's device check (equal's CUDA kernel checks devices).
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.equal(ax, cpu)


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
def test_trace(dtype):
    for shape in [(4, 4), (3, 6), (5, 2), (0, 3)]:
        cpu, ax = make_pair(shape, dtype, "transposed")
        compare(torch.trace(cpu), torch.trace(ax))
    with pytest.raises(RuntimeError, match="expected a matrix"):
        torch.trace(torch.zeros(3, device=DEVICE, dtype=dtype))


def test_trace_grad():
    cpu, ax = make_pair((3, 4))
    c, a = cpu.clone().requires_grad_(), ax.clone().requires_grad_()
    torch.trace(c).backward()
    torch.trace(a).backward()
    compare(c.grad, a.grad)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64], ids=str)
def test_vdot_vecdot(dtype):
    cpu_a, ax_a = make_pair((7,), dtype, "sliced")
    cpu_b, ax_b = make_pair((7,), dtype)
    kw = {"atol": 1e-2, "rtol": 1e-2} if dtype == torch.float16 else {}
    compare(torch.vdot(cpu_a, cpu_b), torch.vdot(ax_a, ax_b), **kw)
    if dtype.is_floating_point:
        x, y = make_pair((3, 5), dtype, "transposed"), make_pair((5,), dtype)
        compare(torch.linalg.vecdot(x[0], y[0]), torch.linalg.vecdot(x[1], y[1]), **kw)
    with pytest.raises(RuntimeError, match="inconsistent tensor size"):
        torch.vdot(ax_a, ax_b[:3])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64], ids=str)
def test_addbmm(dtype):
    for b, n, k, p in [(3, 4, 5, 6), (1, 2, 3, 4), (0, 3, 2, 4), (2, 3, 0, 4)]:
        bc, ba = make_pair((b, n, k), dtype, "transposed")
        cc, ca = make_pair((b, k, p), dtype)
        sc, sa = make_pair((n, p), dtype)
        compare(torch.addbmm(sc, bc, cc), torch.addbmm(sa, ba, ca))
        compare(torch.addbmm(sc, bc, cc, beta=2, alpha=3), torch.addbmm(sa, ba, ca, beta=2, alpha=3))
        compare(torch.addbmm(sc[0], bc, cc, beta=0), torch.addbmm(sa[0], ba, ca, beta=0))  # broadcast self
        c2, a2 = sc.clone(), sa.clone()
        c2.addbmm_(bc, cc, alpha=2)
        a2.addbmm_(ba, ca, alpha=2)
        compare(c2, a2)
    if dtype.is_floating_point:  # beta = 0 ignores NaN in self
        nan = torch.full((2, 2), math.nan, dtype=dtype)
        x, y = torch.ones(3, 2, 1, dtype=dtype), torch.ones(3, 1, 2, dtype=dtype)
        compare(torch.addbmm(nan, x, y, beta=0), torch.addbmm(*to_axon(nan, x, y), beta=0))
    with pytest.raises(RuntimeError, match="same number of batches"):
        torch.addbmm(
            *to_axon(torch.zeros(2, 2, dtype=dtype), torch.zeros(2, 2, 3, dtype=dtype)),
            torch.zeros(3, 3, 2, dtype=dtype, device=DEVICE),
        )


def test_addbmm_grad():
    bc, ba = make_pair((3, 4, 5))
    cc, ca = make_pair((3, 5, 2))
    sc, sa = make_pair((4, 2))
    ins_c = [t.clone().requires_grad_() for t in (sc, bc, cc)]
    ins_a = [t.clone().requires_grad_() for t in (sa, ba, ca)]
    torch.addbmm(*ins_c, beta=0.5, alpha=2).sum().backward()
    torch.addbmm(*ins_a, beta=0.5, alpha=2).sum().backward()
    for c, a in zip(ins_c, ins_a, strict=True):
        compare(c.grad, a.grad, atol=1e-4, rtol=1e-4)


def test_corrcoef_cov():
    cpu, ax = make_pair((3, 20), layout="transposed")
    compare(torch.cov(cpu), torch.cov(ax), atol=1e-4, rtol=1e-4)
    compare(torch.corrcoef(cpu), torch.corrcoef(ax), atol=1e-4, rtol=1e-4)


# ---- random distributions --------------------------------------------------------------------


def _same_seed(fn):
    """fn's draw under seed 123: the same bits when drawn again under that seed, other values
    under another seed (so the first check is no accident of a constant output)."""
    torch.axon.manual_seed(123)
    first = fn().cpu()
    torch.axon.manual_seed(123)
    second = fn().cpu()
    torch.testing.assert_close(first, second, rtol=0, atol=0, equal_nan=True)
    torch.axon.manual_seed(124)
    assert not torch.equal(fn().cpu(), first), "another seed drew the same values"
    return first


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_cauchy_log_normal(dtype):
    x = torch.empty(64, 33, dtype=dtype, device=DEVICE)
    c = _same_seed(lambda: x.cauchy_(1.0, 2.0))
    assert c.dtype == dtype and c.shape == (64, 33) and torch.isfinite(c.float()).all()
    ln = _same_seed(lambda: x.log_normal_(0.5, 0.25))
    assert (ln.float() > 0).all()
    # Non-contiguous targets: only the viewed elements change.
    base = torch.zeros(6, 8, dtype=dtype, device=DEVICE)
    base[:, ::2].log_normal_()
    assert (base[:, 1::2] == 0).all() and (base[:, ::2] > 0).all()
    with pytest.raises(RuntimeError, match="sigma > 0.0"):
        x.cauchy_(0.0, 0.0)
    with pytest.raises(RuntimeError, match="std > 0.0"):
        x.log_normal_(0.0, -1.0)


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
def test_geometric(dtype):
    x = torch.empty(4000, dtype=dtype, device=DEVICE)
    g = _same_seed(lambda: x.geometric_(0.3)).double()
    assert g.min() >= 1 and (g == g.round()).all()
    assert abs(g.mean().item() - 1 / 0.3) < 0.2
    with pytest.raises(RuntimeError, match=r"p to be in \(0, 1\)"):
        x.geometric_(1.5)
    torch.empty(0, dtype=dtype, device=DEVICE).geometric_(0.5)


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.bool], ids=str)
def test_bernoulli_tensor_p(dtype):
    p = torch.tensor([0.0, 1.0, 0.5, 0.25], device=DEVICE).repeat(2000, 1)
    x = torch.empty(2000, 4, dtype=dtype, device=DEVICE)
    r = _same_seed(lambda: x.bernoulli_(p)).double()
    assert (r[:, 0] == 0).all() and (r[:, 1] == 1).all()
    assert abs(r[:, 2].mean().item() - 0.5) < 0.05 and abs(r[:, 3].mean().item() - 0.25) < 0.05
    pf = p.to(dtype) if dtype.is_floating_point else p
    out = _same_seed(lambda: torch.bernoulli(pf))
    assert out.dtype == pf.dtype and out.shape == p.shape
    # p broadcast against self
    y = torch.empty(3, 4, dtype=dtype, device=DEVICE).bernoulli_(torch.tensor([0.0, 1.0, 0.0, 1.0], device=DEVICE))
    assert (y.double().cpu() == torch.tensor([0.0, 1.0, 0.0, 1.0])).all()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_normal_tensor_params(dtype):
    mean = torch.linspace(-5, 5, 11, dtype=dtype, device=DEVICE).unsqueeze(1).expand(11, 3000)
    std = torch.full((3000,), 0.5, dtype=dtype, device=DEVICE)
    for fn in (
        lambda: torch.normal(mean, std),
        lambda: torch.normal(mean, 0.5),
        lambda: torch.normal(0.0, std.expand(11, 3000)) + mean,
    ):
        r = _same_seed(fn).double()
        assert r.shape == (11, 3000)
        assert torch.allclose(r.mean(1), torch.linspace(-5, 5, 11, dtype=torch.float64), atol=0.05)
        assert torch.allclose(r.std(1), torch.full((11,), 0.5, dtype=torch.float64), atol=0.03)
    out = torch.empty(0, dtype=dtype, device=DEVICE)
    torch.normal(mean, std, out=out)
    assert out.shape == (11, 3000)
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        torch.normal(mean, -std)
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        torch.normal(mean, -1.0)


def test_random_empty_and_noncontiguous():
    for fill in (lambda t: t.cauchy_(), lambda t: t.log_normal_(), lambda t: t.geometric_(0.5)):
        fill(torch.empty(0, 3, device=DEVICE))
        t = torch.zeros(5, 6, device=DEVICE).t()
        fill(t)
        assert (t != 0).all()
