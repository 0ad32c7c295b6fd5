"""Native scans, sorting and integer random numbers (issue 3): cumsum / cumprod / cummax /
cummin / logcumsumexp, logsumexp, sort / argsort / topk / unique, random_ / randint /
randperm / multinomial / exponential_, against PyTorch's CPU results (or, for random numbers,
their ranges and reproducibility)."""

from __future__ import annotations

import math

import pytest
import torch
from conftest import DEVICE, compare, make_cpu, make_pair, to_axon

pytestmark = pytest.mark.usefixtures("no_fallback")


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.float16, torch.int64, torch.int32, torch.uint8], ids=str
)
def test_cumsum_cumprod(dtype):
    cpu, ax = make_pair((4, 7), dtype, "transposed", low=-2 if dtype != torch.uint8 else 0, high=3)
    for dim in (0, 1, -1):
        compare(torch.cumsum(cpu, dim), torch.cumsum(ax, dim))
        compare(torch.cumprod(cpu, dim), torch.cumprod(ax, dim))
    compare(torch.cumsum(cpu, 1, dtype=torch.float64), torch.cumsum(ax, 1, dtype=torch.float64))


def test_long_scans_and_in_place():
    """Lines longer than a block take the three-pass path."""
    cpu, ax = make_pair((3, 2000), low=-1, high=1)
    compare(torch.cumsum(cpu, 1), torch.cumsum(ax, 1), atol=1e-4, rtol=1e-5)
    ints = make_cpu((2, 1500), torch.int64, low=-3, high=4)
    compare(torch.cumsum(ints, 1), torch.cumsum(to_axon(ints), 1))
    compare(torch.cummax(ints, 1), torch.cummax(to_axon(ints), 1))
    compare(torch.cummin(ints, 1), torch.cummin(to_axon(ints), 1))
    c, a = cpu.clone(), ax.clone()
    c.cumsum_(0)
    a.cumsum_(0)
    compare(c, a)
    compare(torch.cumsum(torch.zeros(0, 3), 0), torch.cumsum(torch.zeros(0, 3, device=DEVICE), 0))
    compare(torch.cumsum(torch.tensor(2.5), 0), torch.cumsum(torch.tensor(2.5, device=DEVICE), 0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64], ids=str)
def test_cummax_cummin(dtype):
    cpu, ax = make_pair((5, 6), dtype, "sliced", low=-3, high=3)
    for dim in (0, 1):
        compare(torch.cummax(cpu, dim), torch.cummax(ax, dim))
        compare(torch.cummin(cpu, dim), torch.cummin(ax, dim))
    if dtype.is_floating_point:
        x = torch.tensor([1.0, math.nan, 3.0, math.nan, 0.0], dtype=dtype)
        compare(torch.cummax(x, 0), torch.cummax(to_axon(x), 0))
        compare(torch.cummin(x, 0), torch.cummin(to_axon(x), 0))


def test_logcumsumexp_logsumexp_and_grads():
    cpu, ax = make_pair((4, 6), layout="transposed")
    compare(torch.logcumsumexp(cpu, 1), torch.logcumsumexp(ax, 1))
    compare(torch.logsumexp(cpu, 0), torch.logsumexp(ax, 0))
    special = torch.tensor([-math.inf, -math.inf, 1.0, math.inf, 2.0])
    compare(torch.logcumsumexp(special, 0), torch.logcumsumexp(to_axon(special), 0))
    xc, xa = cpu.clone().requires_grad_(), ax.clone().requires_grad_()
    (torch.cumsum(xc, 1) * torch.arange(6.0)).sum().backward()
    (torch.cumsum(xa, 1) * torch.arange(6.0, device=DEVICE)).sum().backward()
    compare(xc.grad, xa.grad)
    xc.grad = xa.grad = None
    torch.cummax(xc, 0)[0].sum().backward()
    torch.cummax(xa, 0)[0].sum().backward()
    compare(xc.grad, xa.grad)
    xc.grad = xa.grad = None
    torch.logcumsumexp(xc, 1).sum().backward()
    torch.logcumsumexp(xa, 1).sum().backward()
    compare(xc.grad, xa.grad)


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8, torch.bool],
    ids=str,
)
def test_sort(dtype):
    cpu, ax = make_pair((5, 9), dtype, "transposed", low=0 if dtype == torch.uint8 else -4, high=4)
    for dim in (0, 1):
        for descending in (False, True):
            compare(
                torch.sort(cpu, dim=dim, descending=descending, stable=True),
                torch.sort(ax, dim=dim, descending=descending, stable=True),
            )
    compare(torch.argsort(cpu, dim=1, stable=True), torch.argsort(ax, dim=1, stable=True))


def test_sort_special_cases():
    x = torch.tensor([1.0, math.nan, -1.0, math.nan, 0.0, -math.inf, math.inf, 0.0])
    compare(torch.sort(x, stable=True), torch.sort(to_axon(x), stable=True))
    compare(torch.sort(x, stable=True, descending=True), torch.sort(to_axon(x), stable=True, descending=True))
    ties = make_cpu((3, 700), torch.int64, low=0, high=3)
    compare(torch.sort(ties, stable=True), torch.sort(to_axon(ties), stable=True))
    compare(torch.msort(ties.t()), torch.msort(to_axon(ties).t()))
    compare(torch.sort(torch.zeros(0, 4), 1), torch.sort(torch.zeros(0, 4, device=DEVICE), 1))
    compare(torch.sort(torch.tensor(3.0)), torch.sort(torch.tensor(3.0, device=DEVICE)))
    xc = torch.randn(4, 5, requires_grad=True)
    xa = xc.detach().to(DEVICE).requires_grad_()
    (torch.sort(xc, 1)[0] * torch.arange(5.0)).sum().backward()
    (torch.sort(xa, 1)[0] * torch.arange(5.0, device=DEVICE)).sum().backward()
    compare(xc.grad, xa.grad)


def test_topk():
    base = torch.randperm(60).reshape(4, 15).float()  # distinct values: indices are unique
    cpu, ax = base, to_axon(base)
    compare(torch.topk(cpu, 4, 1), torch.topk(ax, 4, 1))
    compare(torch.topk(cpu, 2, 0, largest=False), torch.topk(ax, 2, 0, largest=False))
    compare(torch.topk(cpu.t(), 3, 0), torch.topk(ax.t(), 3, 0))
    compare(torch.topk(cpu, 0, 1), torch.topk(ax, 0, 1))
    xc, xa = cpu.clone().requires_grad_(), ax.clone().requires_grad_()
    torch.topk(xc, 3, 1)[0].sum().backward()
    torch.topk(xa, 3, 1)[0].sum().backward()
    compare(xc.grad, xa.grad)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
def test_unique(dtype):
    cpu, ax = make_pair((4, 6), dtype, "transposed", low=0, high=4)
    compare(torch.unique(cpu), torch.unique(ax))
    compare(
        torch.unique(cpu, return_inverse=True, return_counts=True),
        torch.unique(ax, return_inverse=True, return_counts=True),
    )
    seq = torch.tensor([1, 1, 2, 2, 3, 1, 1, 2]).to(dtype)
    compare(
        torch.unique_consecutive(seq, return_inverse=True, return_counts=True),
        torch.unique_consecutive(to_axon(seq), return_inverse=True, return_counts=True),
    )
    compare(torch.unique(torch.zeros(0, dtype=dtype)), torch.unique(torch.zeros(0, dtype=dtype, device=DEVICE)))


def _draws(seed):
    torch.manual_seed(seed)
    return [
        torch.empty(500, dtype=torch.int64, device=DEVICE).random_(-5, 7),
        torch.randint(0, 10, (3, 40), device=DEVICE),
        torch.randperm(30, device=DEVICE),
        torch.multinomial(torch.tensor([0.1, 0.0, 0.5, 0.4], device=DEVICE), 3),
        torch.multinomial(torch.tensor([[0.2, 0.0, 0.8]] * 2, device=DEVICE), 400, replacement=True),
        torch.empty(1000, device=DEVICE).exponential_(2.0),
        torch.empty(200, dtype=torch.float16, device=DEVICE).random_(),
        torch.empty(200, dtype=torch.bool, device=DEVICE).random_(),
        torch.empty(200, dtype=torch.uint8, device=DEVICE).random_(10),
        torch.empty(200, dtype=torch.int64, device=DEVICE).random_(-(2**63), None),
    ]


def test_random_integers():
    a = [t.cpu() for t in _draws(7)]
    b = [t.cpu() for t in _draws(7)]
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True)), "the same seed gives the same numbers"
    c = [t.cpu() for t in _draws(8)]
    assert not torch.equal(a[0], c[0])
    r, ri, perm, mn, mnr, ex, h, bl, u8, full = a
    assert r.dtype == torch.int64 and r.min() == -5 and r.max() == 6
    assert ri.min() >= 0 and ri.max() <= 9
    assert sorted(perm.tolist()) == list(range(30))
    assert mn.unique().numel() == 3 and 1 not in mn.tolist()
    assert mnr.shape == (2, 400) and 1 not in mnr.flatten().tolist()
    assert 0.12 < (mnr == 0).float().mean() < 0.28
    assert ex.min() >= 0 and 0.4 < ex.mean() < 0.6
    assert h.min() >= 0 and h.max() <= 2048 and torch.equal(h, h.round())
    assert set(bl.tolist()) == {False, True}
    assert u8.max() < 10
    assert full.min() < 0 < full.max()
    with pytest.raises(RuntimeError):
        torch.multinomial(torch.tensor([1.0, 0.0], device=DEVICE), 2)


def test_unique_consecutive_dim():
    x = torch.tensor([[1, 1, 2, 2, 2], [3, 3, 1, 1, 4], [3, 3, 1, 1, 4]])
    for dim in (0, 1):
        compare(
            torch.unique_consecutive(x, return_inverse=True, return_counts=True, dim=dim),
            torch.unique_consecutive(to_axon(x), return_inverse=True, return_counts=True, dim=dim),
        )
