"""Native selection, scatter-shaped and histogram ops: median / nanmedian / kthvalue / mode (the
CPU's choice of index among ties), take / put_, index_reduce, nonzero_static, unfold_backward,
isin, histogram / histogramdd, segment_reduce, max_unpool, negative replication padding, and the
CPU's errors for bad index dtypes, against PyTorch's CPU results."""

from __future__ import annotations

import math

import pytest
import torch
from conftest import DEVICE, compare, make_cpu, make_pair, to_axon

pytestmark = pytest.mark.usefixtures("no_fallback")

SELECT_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8]


def ties(shape, dtype, values=4):
    """Small integers (many ties) of the dtype, the same on both devices."""
    cpu = torch.randint(0, values, shape).to(dtype)
    return cpu, to_axon(cpu)


@pytest.mark.parametrize("dtype", SELECT_DTYPES, ids=str)
def test_median_kthvalue_mode_ties(dtype):
    cpu, ax = ties((5, 5, 7), dtype)
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            compare(torch.median(cpu, dim, keepdim), torch.median(ax, dim, keepdim))
            compare(torch.nanmedian(cpu, dim, keepdim), torch.nanmedian(ax, dim, keepdim))
            compare(torch.mode(cpu, dim, keepdim), torch.mode(ax, dim, keepdim))
            for k in (1, 3, 5):
                compare(torch.kthvalue(cpu, k, dim, keepdim), torch.kthvalue(ax, k, dim, keepdim))
    compare(torch.median(cpu), torch.median(ax))
    compare(torch.nanmedian(cpu), torch.nanmedian(ax))


def test_long_lines_take_the_introsort_path():
    """mode's introsort and kthvalue's quickselect on long lines with many ties."""
    cpu, ax = ties((3, 3000), torch.float32, values=19)
    compare(torch.mode(cpu, 1), torch.mode(ax, 1))
    compare(torch.kthvalue(cpu, 1500, 1), torch.kthvalue(ax, 1500, 1))
    compare(torch.median(cpu, 1), torch.median(ax, 1))
    b, bx = ties((4, 100), torch.bool, values=2)
    compare(torch.mode(b, 1), torch.mode(bx, 1))


def test_nan_and_edge_cases():
    nan = math.nan
    x = torch.tensor([[3.0, nan, 2.0, 1.0, nan, 2.0], [nan, nan, nan, nan, nan, nan], [1, 2, 3, 4, 5, 6]])
    ax = to_axon(x)
    compare(torch.median(x, 1), torch.median(ax, 1))
    compare(torch.nanmedian(x, 1), torch.nanmedian(ax, 1))
    compare(torch.kthvalue(x, 5, 1), torch.kthvalue(ax, 5, 1))
    compare(torch.median(x), torch.median(ax))
    compare(torch.nanmedian(x), torch.nanmedian(ax))
    s = torch.tensor(2.5)
    for f in (lambda t: torch.median(t, 0), lambda t: torch.kthvalue(t, 1), lambda t: torch.mode(t)):
        compare(f(s), f(to_axon(s)))
    cpu, ax = make_pair((6, 5), layout="transposed")
    compare(torch.median(cpu, 0), torch.median(ax, 0))
    compare(torch.kthvalue(cpu, 2, 0), torch.kthvalue(ax, 2, 0))
    with pytest.raises(IndexError):
        torch.median(torch.zeros(0, 3, device=DEVICE), 0)
    with pytest.raises(RuntimeError, match="k out of range for dimension 0"):
        torch.kthvalue(ax, 7, 0)


def test_median_gradient():
    cpu, ax = make_pair((4, 5))
    cpu.requires_grad_()
    ax.requires_grad_()
    torch.median(cpu, 1).values.sum().backward()
    torch.median(ax, 1).values.sum().backward()
    compare(cpu.grad, ax.grad)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool], ids=str)
def test_take_put(dtype):
    cpu, ax = make_pair((4, 5), dtype, "transposed")
    idx = torch.tensor([[0, -1, 7], [19, 3, 3]])
    compare(torch.take(cpu, idx), torch.take(ax, to_axon(idx)))
    src = make_cpu((2, 3), dtype)
    for acc in (False, True):
        c, a = cpu.clone(), ax.clone()
        c.put_(idx, src, accumulate=acc)
        a.put_(to_axon(idx), to_axon(src), accumulate=acc)
        compare(c, a)
    with pytest.raises(IndexError, match="out of range"):
        torch.take(ax, torch.tensor([20], device=DEVICE))
    with pytest.raises(RuntimeError, match="Expected a long tensor"):
        torch.take(ax, torch.tensor([1], dtype=torch.int32, device=DEVICE))


@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64], ids=str)
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce(dtype, reduce):
    cpu, ax = make_pair((5, 3), dtype, low=-4, high=4)
    src = make_cpu((4, 3), dtype, low=-4, high=4)
    idx = torch.tensor([0, 4, 0, 2])
    for include_self in (True, False):
        compare(
            cpu.index_reduce(0, idx, src, reduce, include_self=include_self),
            ax.index_reduce(0, to_axon(idx), to_axon(src), reduce, include_self=include_self),
        )


def test_nonzero_static_unfold_backward():
    x = torch.tensor([[0, 1, 0], [2, 0, 3]])
    for size in (0, 2, 5):
        compare(torch.nonzero_static(x, size=size), torch.nonzero_static(to_axon(x), size=size))
    compare(torch.nonzero_static(x, size=4, fill_value=7), torch.nonzero_static(to_axon(x), size=4, fill_value=7))
    cpu, ax = make_pair((3, 9))
    for size, step in ((3, 2), (2, 3), (4, 1)):
        c, a = cpu.clone().requires_grad_(), ax.clone().requires_grad_()
        w = make_cpu(c.unfold(1, size, step).shape)
        (c.unfold(1, size, step) * w).sum().backward()
        (a.unfold(1, size, step) * to_axon(w)).sum().backward()
        compare(c.grad, a.grad)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.uint8], ids=str)
def test_isin(dtype):
    e, ea = ties((4, 6), dtype, values=8)
    t, ta = ties((5,), dtype, values=8)
    for invert in (False, True):
        compare(torch.isin(e, t, invert=invert), torch.isin(ea, ta, invert=invert))
        compare(torch.isin(e, 3, invert=invert), torch.isin(ea, 3, invert=invert))
        compare(torch.isin(3, t, invert=invert), torch.isin(3, ta, invert=invert))
    empty = torch.zeros(0, dtype=dtype)
    compare(torch.isin(e, empty), torch.isin(ea, to_axon(empty)))
    f = torch.tensor([1.0, math.nan, 2.0])
    compare(torch.isin(f, f), torch.isin(to_axon(f), to_axon(f)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_histogram(dtype):
    cpu, ax = make_pair((40,), dtype, low=-3, high=3)
    w = make_cpu((40,), dtype)
    for density in (False, True):
        compare(torch.histogram(cpu, 7, density=density), torch.histogram(ax, 7, density=density))
        compare(
            torch.histogram(cpu, 5, range=(-1.0, 2.0), weight=w, density=density),
            torch.histogram(ax, 5, range=(-1.0, 2.0), weight=to_axon(w), density=density),
        )
        edges = torch.tensor([-2.0, -0.5, 0.0, 1.5, 2.5], dtype=dtype)
        compare(torch.histogram(cpu, edges, density=density), torch.histogram(ax, to_axon(edges), density=density))
    s = torch.tensor(1.0, dtype=dtype)
    compare(torch.histogram(s, 2), torch.histogram(to_axon(s), 2))
    pts, pa = make_pair((30, 3), dtype)
    compare(torch.histogramdd(pts, [2, 3, 4]), torch.histogramdd(pa, [2, 3, 4]))
    bins = [torch.tensor([-1.0, 0.0, 1.0], dtype=dtype), torch.tensor([-2.0, 2.0], dtype=dtype)] * 1
    bins.append(torch.tensor([-3.0, 0.5, 3.0], dtype=dtype))
    compare(
        torch.histogramdd(pts, bins, density=True),
        torch.histogramdd(pa, [to_axon(b) for b in bins], density=True),
    )


@pytest.mark.parametrize("reduce", ["max", "min", "sum", "mean", "prod"])
@pytest.mark.parametrize("kind", ["lengths", "offsets"])
def test_segment_reduce(reduce, kind):
    data = torch.tensor([[2.0, 2.0, 0.0, 3.0, 0.0, 0.0, 5.0, 1.5], [1.0, -2.0, 4.0, 0.5, 3.0, 3.0, -1.0, 2.0]]).t()
    lengths = torch.tensor([2, 0, 2, 2, 1, 1])
    arg = lengths if kind == "lengths" else torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
    for initial in (None, 2.0):
        c = data.clone().requires_grad_()
        a = to_axon(data).requires_grad_()
        kw = {} if initial is None else {"initial": initial}
        rc = torch.segment_reduce(c, reduce, axis=0, **{kind: arg}, **kw)
        ra = torch.segment_reduce(a, reduce, axis=0, **{kind: to_axon(arg)}, **kw)
        compare(rc, ra)
        g = make_cpu(rc.shape)
        rc.backward(g)
        ra.backward(to_axon(g))
        compare(c.grad, a.grad)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool(nd):
    pool = [torch.nn.functional.max_pool1d, torch.nn.functional.max_pool2d, torch.nn.functional.max_pool3d][nd - 1]
    unpool = [torch.nn.functional.max_unpool1d, torch.nn.functional.max_unpool2d, torch.nn.functional.max_unpool3d]
    unpool = unpool[nd - 1]
    x = make_cpu((2, 3) + (6,) * nd)
    out, idx = pool(x, 2, return_indices=True)
    c = out.clone().requires_grad_()
    a = to_axon(out).requires_grad_()
    rc = unpool(c, idx, 2)
    ra = unpool(a, to_axon(idx), 2)
    compare(rc, ra)
    g = make_cpu(rc.shape)
    rc.backward(g)
    ra.backward(to_axon(g))
    compare(c.grad, a.grad)


def test_negative_replication_padding():
    x = make_cpu((2, 3, 6, 7))
    for pad in ((-1, 2, 1, -2), (-2, -1, 0, 0), (1, -3, -1, 2), (-8, 9, -1, -3), (0, 0, 2, -6)):
        c, a = x.clone().requires_grad_(), to_axon(x).requires_grad_()
        rc = torch.nn.functional.pad(c, pad, mode="replicate")
        ra = torch.nn.functional.pad(a, pad, mode="replicate")
        compare(rc, ra)
        g = make_cpu(rc.shape)
        rc.backward(g)
        ra.backward(to_axon(g))
        compare(c.grad, a.grad)


def test_index_dtype_errors_match_cpu():
    """The CPU's error types and messages, and its acceptance of empty indices of any dtype."""
    for dev in ("cpu", DEVICE):
        x = torch.randn(5, device=dev)
        empty = torch.zeros(0, dtype=torch.uint8, device=dev)
        assert torch.gather(x, 0, empty).shape == (0,)
        assert torch.scatter(x, 0, empty, 1.0).shape == (5,)
        bad = torch.tensor([1], dtype=torch.uint8, device=dev)
        with pytest.raises(RuntimeError, match=r"index_select\(\): Expected dtype int32 or int64 for index"):
            torch.index_select(x, 0, bad)
        with pytest.raises(IndexError, match=r"index_fill_\(\): Expected dtype int64 for index."):
            x.index_fill(0, bad, 1.0)
        with pytest.raises(RuntimeError, match=r"gather\(\): Expected dtype int32/int64 for index"):
            torch.gather(x, 0, bad)
    s = torch.tensor(3.0)
    compare(
        torch.masked_select(s, torch.tensor(True)), torch.masked_select(to_axon(s), torch.tensor(True, device=DEVICE))
    )
