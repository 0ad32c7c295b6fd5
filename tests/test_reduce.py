"""Native reductions against PyTorch's CPU results: whole-tensor, single dims, dim lists,
keepdim, negative dims, non-contiguous inputs, dtypes, ties and NaN, and a long sum."""

from __future__ import annotations

import math

import pytest
import torch
from conftest import DEVICE, LAYOUTS, compare, make_pair, to_axon

pytestmark = pytest.mark.usefixtures("no_fallback")

SHAPE = (4, 5, 6)
DIMS = [None, 0, 1, -1, (0, 2), (-1, -2), (0, 1, 2)]


def _call(fn, t, dim, keepdim):
    if dim is None:
        return fn(t)
    return fn(t, dim=dim, keepdim=keepdim)


# Float sums and means are compared with a tolerance that grows with the reduced length.
SUM_TOL = {
    torch.float32: {"atol": 1e-5, "rtol": 1e-5},
    torch.float64: {"atol": 1e-12, "rtol": 1e-12},
    torch.float16: {"atol": 1e-2, "rtol": 4e-3},
    torch.bfloat16: {"atol": 5e-2, "rtol": 2e-2},
}


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("fn", [torch.sum, torch.mean], ids=lambda f: f.__name__)
def test_sum_mean_float(fn, dtype, dim, keepdim):
    if dim is None and keepdim:
        pytest.skip("keepdim needs a dim")
    cpu, ax = make_pair(SHAPE, dtype)
    compare(_call(fn, cpu, dim, keepdim), _call(fn, ax, dim, keepdim), **SUM_TOL[dtype])


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("fn", [torch.sum, torch.mean, torch.amax, torch.amin, torch.prod], ids=lambda f: f.__name__)
def test_noncontiguous(fn, dim, layout):
    if fn is torch.prod and isinstance(dim, tuple):
        pytest.skip("prod takes a single dim")
    cpu, ax = make_pair(SHAPE, torch.float32, layout, low=0.5, high=1.5)
    compare(_call(fn, cpu, dim, False), _call(fn, ax, dim, False))
    if dim is not None:
        compare(_call(fn, cpu, dim, True), _call(fn, ax, dim, True))


@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool], ids=str)
def test_sum_int(dtype, dim):
    """Integer and bool sums accumulate in (and return) int64."""
    cpu, ax = make_pair(SHAPE, dtype)
    expected = _call(torch.sum, cpu, dim, False)
    out = _call(torch.sum, ax, dim, False)
    assert out.dtype == torch.int64
    compare(expected, out)


def test_sum_int32_large_values():
    cpu = torch.full((1000,), 2**30, dtype=torch.int32)
    out = to_axon(cpu).sum()
    assert out.dtype == torch.int64
    compare(cpu.sum(), out)
    assert out.item() == 1000 * 2**30


def test_sum_dtype_argument_and_out():
    cpu, ax = make_pair(SHAPE, torch.float16)
    out = ax.sum(dim=1, dtype=torch.float32)
    assert out.dtype == torch.float32
    compare(cpu.sum(dim=1, dtype=torch.float32), out, atol=1e-3, rtol=1e-4)
    i_cpu, i_ax = make_pair(SHAPE, torch.int32)
    compare(i_cpu.sum(dim=(0, 1), dtype=torch.int32), i_ax.sum(dim=(0, 1), dtype=torch.int32))
    compare(i_cpu.sum(dtype=torch.float64), i_ax.sum(dtype=torch.float64))
    f_cpu, f_ax = make_pair(SHAPE)
    res = torch.empty(4, 6, device=DEVICE)
    torch.sum(f_ax, dim=1, out=res)
    compare(f_cpu.sum(dim=1), res)
    res = torch.empty(0, device=DEVICE)
    torch.mean(f_ax, dim=(0, 2), keepdim=True, out=res)
    compare(f_cpu.mean(dim=(0, 2), keepdim=True), res)


def test_float16_sum_long():
    cpu, ax = make_pair((4096,), torch.float16, low=0, high=1)
    compare(cpu.float().sum().half(), ax.sum(), atol=1, rtol=2e-3)
    compare(cpu.float().sum(), ax.sum(dtype=torch.float32), atol=1e-2, rtol=1e-5)


def test_long_float32_sum_accuracy():
    """1e6 elements summed in float32 on the device stay within 1e-5 of the float64 sum."""
    x = torch.rand(1_000_000) + 0.5
    exact = x.double().sum().item()
    got = to_axon(x).sum().item()
    assert abs(got - exact) / abs(exact) < 1e-5
    # The same along a dim with few outputs, and along the fast dim of many rows.
    y = x.view(1000, 1000)
    exact_rows = y.double().sum(dim=1)
    rows = to_axon(y).sum(dim=1).cpu().double()
    assert ((rows - exact_rows).abs() / exact_rows.abs()).max() < 1e-5
    mean = to_axon(x).mean().item()
    assert abs(mean - exact / x.numel()) / abs(exact / x.numel()) < 1e-5


@pytest.mark.parametrize(
    "shape,dim",
    [
        ((37, 100), -1),  # contiguous runs with a tail (not a multiple of 8)
        ((3, 40, 9, 11), (0, 2, 3)),  # per-channel sums of NCHW: runs of 11, several runs each
        ((300, 48), 0),  # eight neighbouring outputs per work-item (bias gradients)
        ((20, 7, 16), (0, 1)),  # the same over two reduced dims
        ((96, 5), 0),  # neither: 5 outputs, runs of 1
    ],
    ids=str,
)
@pytest.mark.parametrize("fn", [torch.sum, torch.mean], ids=lambda f: f.__name__)
def test_float32_sum_shapes(fn, shape, dim):
    """float32 sums and means along contiguous runs and across neighbouring outputs, with
    infinities and NaN in some rows, against the CPU and against float64 for accuracy."""
    torch.manual_seed(0)
    x = torch.randn(shape) * 1e3
    flat = x.view(-1)
    flat[3], flat[200], flat[201], flat[450] = math.inf, math.inf, -math.inf, math.nan
    compare(fn(x, dim), fn(to_axon(x), dim), atol=1e-3, rtol=1e-5)
    compare(fn(x, dim, keepdim=True), fn(to_axon(x), dim, keepdim=True), atol=1e-3, rtol=1e-5)
    # Large cancelling terms: compensated sums stay close to the float64 result.
    y = torch.randn(shape)
    y.view(-1)[::2] += 1e6
    y.view(-1)[1::2] -= 1e6
    exact = fn(y.double(), dim)
    got = fn(to_axon(y), dim).cpu().double()
    assert ((got - exact).abs() <= 1e-4 * y.abs().double().sum() / exact.numel() + 1e-3).all()


def test_float32_sum_into_strided_out():
    """Column sums written through a non-contiguous out= tensor."""
    x = torch.randn(64, 24)
    out_c = torch.empty(48)[::2]
    out_a = torch.empty(48, device=DEVICE)[::2]
    torch.sum(x, 0, out=out_c)
    torch.sum(to_axon(x), 0, out=out_a)
    compare(out_c, out_a, atol=1e-5, rtol=1e-5)


def test_zero_size_reductions():
    cpu, ax = make_pair((3, 0, 4))
    compare(cpu.sum(), ax.sum())
    compare(cpu.sum(dim=1), ax.sum(dim=1))
    compare(cpu.sum(dim=0), ax.sum(dim=0))
    compare(cpu.prod(dim=1), ax.prod(dim=1))
    compare(cpu.mean(dim=1), ax.mean(dim=1))  # nan, as on the CPU
    compare(cpu.amax(dim=2), ax.amax(dim=2))
    compare(cpu.any(dim=1), ax.any(dim=1))
    compare(cpu.all(dim=1), ax.all(dim=1))
    with pytest.raises((RuntimeError, IndexError)):
        ax.amax(dim=1)
    with pytest.raises((RuntimeError, IndexError)):
        ax.max()


def test_zero_dim_reductions():
    cpu, ax = make_pair(())
    for fn in (torch.sum, torch.mean, torch.amax, torch.prod, torch.max, torch.argmax):
        compare(fn(cpu), fn(ax))
    compare(torch.max(cpu, dim=0), torch.max(ax, dim=0))
    compare(torch.sum(cpu, dim=0), torch.sum(ax, dim=0))


# ---- prod, amax, amin -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64, torch.int32], ids=str)
def test_prod(dtype):
    low, high = (0.5, 1.5) if dtype.is_floating_point else (-3, 4)
    cpu, ax = make_pair((3, 4, 5), dtype, low=low, high=high)
    compare(
        cpu.prod(),
        ax.prod(),
        atol=1e-3 if dtype == torch.float16 else None,
        rtol=1e-2 if dtype == torch.float16 else None,
    )
    for dim in (0, 1, -1):
        compare(cpu.prod(dim), ax.prod(dim))
        compare(cpu.prod(dim, keepdim=True), ax.prod(dim, keepdim=True))


def test_prod_int32_promotes():
    cpu, ax = make_pair((6,), torch.int32, low=1, high=4)
    out = ax.prod()
    assert out.dtype == torch.int64
    compare(cpu.prod(), out)


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8, torch.bool],
    ids=str,
)
@pytest.mark.parametrize("fn", [torch.amax, torch.amin], ids=lambda f: f.__name__)
def test_amax_amin(fn, dtype):
    cpu, ax = make_pair(SHAPE, dtype)
    for dim in [(), 0, -1, (0, 2)]:
        compare(fn(cpu, dim), fn(ax, dim))
        compare(fn(cpu, dim, keepdim=True), fn(ax, dim, keepdim=True))


def test_amax_nan_and_inf():
    x = torch.tensor([[1.0, math.nan, 3.0], [-math.inf, -math.inf, -math.inf], [2.0, 5.0, math.inf]])
    ax = to_axon(x)
    for fn in (torch.amax, torch.amin):
        compare(fn(x, 1), fn(ax, 1))
        compare(fn(x, 0), fn(ax, 0))
        compare(fn(x), fn(ax))
    compare(x.max(), ax.max())
    compare(x.min(), ax.min())


# ---- max / min with indices, argmax / argmin -------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8, torch.bool],
    ids=str,
)
@pytest.mark.parametrize("fn", [torch.max, torch.min], ids=lambda f: f.__name__)
def test_max_min_dim(fn, dtype, layout):
    # A narrow value range makes ties common: the first index wins, as on the CPU.
    cpu, ax = make_pair(SHAPE, dtype, layout, low=0, high=3)
    if dtype.is_floating_point:
        cpu, ax = cpu.round(), to_axon(cpu.round())
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            values, indices = fn(ax, dim, keepdim=keepdim)
            ev, ei = fn(cpu, dim, keepdim=keepdim)
            compare(ev, values)
            compare(ei, indices)
    compare(fn(cpu), fn(ax))


@pytest.mark.parametrize("fn", [torch.argmax, torch.argmin], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32, torch.uint8], ids=str)
def test_argmax_argmin_ties(fn, dtype):
    cpu, ax = make_pair(SHAPE, dtype, low=0, high=3)
    if dtype.is_floating_point:
        cpu = cpu.floor()
        ax = to_axon(cpu)
    compare(fn(cpu), fn(ax))
    for dim in (0, 1, 2, -1, -3):
        compare(fn(cpu, dim), fn(ax, dim))
        compare(fn(cpu, dim, keepdim=True), fn(ax, dim, keepdim=True))
    compare(fn(cpu.transpose(0, 2)), fn(ax.transpose(0, 2)))
    compare(fn(cpu.transpose(0, 2), 1), fn(ax.transpose(0, 2), 1))
    compare(fn(cpu[:, ::2]), fn(ax[:, ::2]))
    # All equal: index 0 everywhere.
    z = torch.zeros(5, 7, dtype=dtype)
    compare(fn(z, 1), fn(to_axon(z), 1))
    compare(fn(z), fn(to_axon(z)))


def test_argmax_long_rows_ties():
    """Long rows (the work-group reduction) still return the first of tied maxima."""
    x = torch.zeros(3, 5000)
    x[0, 1234] = x[0, 4000] = x[0, 4999] = 2.0
    x[1, 4999] = 1.0
    x[2, 700] = x[2, 300] = -1.0
    ax = to_axon(x)
    compare(x.argmax(1), ax.argmax(1))
    compare(x.argmin(1), ax.argmin(1))
    compare(x.max(1), ax.max(1))
    compare(x.argmax(), ax.argmax())
    y = torch.randint(0, 4, (20000,)).float()
    compare(y.argmax(), to_axon(y).argmax())
    compare(y.argmin(), to_axon(y).argmin())


def test_argmax_nan():
    x = torch.tensor([[1.0, math.nan, 5.0, math.nan], [3.0, 2.0, 9.0, 9.0]])
    ax = to_axon(x)
    compare(x.argmax(1), ax.argmax(1))
    compare(x.argmin(1), ax.argmin(1))
    compare(x.max(1), ax.max(1))
    compare(x.min(1), ax.min(1))


def test_max_dim_out():
    cpu, ax = make_pair((4, 6))
    values = torch.empty(0, device=DEVICE)
    indices = torch.empty(0, dtype=torch.int64, device=DEVICE)
    torch.max(ax, 1, out=(values, indices))
    ev, ei = torch.max(cpu, 1)
    compare(ev, values)
    compare(ei, indices)
    big_v = torch.zeros(4, 2, device=DEVICE)
    big_i = torch.zeros(4, 2, dtype=torch.int64, device=DEVICE)
    torch.min(ax, 1, out=(big_v[:, 0], big_i[:, 1]))
    ev, ei = torch.min(cpu, 1)
    compare(ev, big_v[:, 0])
    compare(ei, big_i[:, 1])


# ---- variance and standard deviation ----------------------------------------------------------------


@pytest.mark.parametrize("correction", [0, 1])
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("fn", [torch.var, torch.std, torch.var_mean, torch.std_mean], ids=lambda f: f.__name__)
def test_var_std(fn, dtype, dim, correction):
    cpu, ax = make_pair(SHAPE, dtype)
    cpu, ax = cpu + 100, ax + 100  # a large mean: the two-pass variance stays accurate
    compare(
        fn(cpu, dim=dim, correction=correction),
        fn(ax, dim=dim, correction=correction),
        atol=1e-4 if dtype == torch.float32 else None,
        rtol=1e-4 if dtype == torch.float32 else None,
    )
    if dim is not None:
        compare(
            fn(cpu, dim=dim, correction=correction, keepdim=True),
            fn(ax, dim=dim, correction=correction, keepdim=True),
            atol=1e-4,
            rtol=1e-4,
        )


def test_var_std_unbiased_and_layouts():
    cpu, ax = make_pair((6, 7), layout="transposed")
    compare(cpu.var(), ax.var())
    compare(cpu.var(unbiased=False), ax.var(unbiased=False))
    compare(cpu.std(0, unbiased=True), ax.std(0, unbiased=True))
    compare(cpu.std(1, keepdim=True), ax.std(1, keepdim=True))
    s_cpu, s_ax = make_pair((6, 7), layout="sliced")
    compare(s_cpu.var(-1), s_ax.var(-1))
    compare(torch.var_mean(s_cpu, 0), torch.var_mean(s_ax, 0))
    half_cpu, half_ax = make_pair((8, 9), torch.float16)
    compare(half_cpu.var(1), half_ax.var(1), atol=2e-3, rtol=5e-3)
    compare(half_cpu.float().std(), half_ax.float().std())


@pytest.mark.filterwarnings("ignore:var... degrees of freedom:UserWarning")
def test_var_single_element():
    x = torch.tensor([3.0])
    compare(x.var(correction=0), to_axon(x).var(correction=0))
    compare(x.var(), to_axon(x).var())  # nan (0 / 0) on both, with a warning on the CPU


# ---- norms -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ord", [1, 2, math.inf, 3, 0, 0.5])
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2)], ids=str)
def test_vector_norm(ord, dim):
    cpu, ax = make_pair(SHAPE)
    cpu[0, 0, :2] = 0
    ax[0, 0, :2] = 0
    expected = torch.linalg.vector_norm(cpu, ord, dim=dim)
    compare(expected, torch.linalg.vector_norm(ax, ord, dim=dim), atol=1e-5, rtol=1e-5)
    compare(
        torch.linalg.vector_norm(cpu, ord, dim=dim, keepdim=True),
        torch.linalg.vector_norm(ax, ord, dim=dim, keepdim=True),
        atol=1e-5,
        rtol=1e-5,
    )


def test_vector_norm_negative_orders():
    cpu, ax = make_pair(SHAPE)
    compare(torch.linalg.vector_norm(cpu, -math.inf), torch.linalg.vector_norm(ax, -math.inf))
    compare(torch.linalg.vector_norm(cpu, -math.inf, dim=1), torch.linalg.vector_norm(ax, -math.inf, dim=1))
    compare(
        torch.linalg.vector_norm(cpu, -math.inf, dim=(0, 2), keepdim=True),
        torch.linalg.vector_norm(ax, -math.inf, dim=(0, 2), keepdim=True),
    )
    pos_cpu, pos_ax = make_pair((5, 6), low=0.5, high=2)
    compare(
        torch.linalg.vector_norm(pos_cpu, -1, dim=1), torch.linalg.vector_norm(pos_ax, -1, dim=1), rtol=1e-5, atol=1e-6
    )
    with pytest.raises(RuntimeError):
        torch.linalg.vector_norm(torch.empty(0, device=DEVICE), -math.inf)


@pytest.mark.parametrize("p", [1, 2, math.inf, 3])
def test_norm(p):
    cpu, ax = make_pair((5, 6), layout="transposed")
    compare(torch.norm(cpu, p), torch.norm(ax, p))
    compare(cpu.norm(p, dim=1), ax.norm(p, dim=1))
    compare(cpu.norm(p, dim=0, keepdim=True), ax.norm(p, dim=0, keepdim=True))
    d_cpu, d_ax = make_pair((5, 6), torch.float64, "sliced")
    compare(torch.linalg.vector_norm(d_cpu, p, dim=-1), torch.linalg.vector_norm(d_ax, p, dim=-1))


def test_norm_dtypes():
    h_cpu, h_ax = make_pair((7, 8), torch.float16)
    compare(torch.linalg.vector_norm(h_cpu), torch.linalg.vector_norm(h_ax), atol=1e-2, rtol=5e-3)
    compare(torch.linalg.vector_norm(h_cpu, dtype=torch.float32), torch.linalg.vector_norm(h_ax, dtype=torch.float32))
    big = torch.full((100,), 1e18)  # no overflow of the squares in float64 accumulation... in float32 they overflow
    compare(torch.linalg.vector_norm(big.double()), torch.linalg.vector_norm(to_axon(big.double())))


# ---- any / all ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.bool, torch.float32, torch.int64, torch.uint8], ids=str)
@pytest.mark.parametrize("fn", [torch.any, torch.all], ids=lambda f: f.__name__)
def test_any_all(fn, dtype):
    cpu, ax = make_pair(SHAPE, dtype, low=0, high=2)
    if dtype == torch.bool:
        cpu, ax = make_pair(SHAPE, dtype)
    expected = fn(cpu)
    out = fn(ax)
    assert out.dtype == expected.dtype
    compare(expected, out)
    for dim in (0, 1, -1):
        compare(fn(cpu, dim), fn(ax, dim))
        compare(fn(cpu, dim, keepdim=True), fn(ax, dim, keepdim=True))
    compare(fn(cpu.transpose(0, 2), 0), fn(ax.transpose(0, 2), 0))
    ones = torch.ones(3, 4, dtype=dtype)
    compare(fn(ones), fn(to_axon(ones)))
    zeros = torch.zeros(3, 4, dtype=dtype)
    compare(fn(zeros, 1), fn(to_axon(zeros), 1))
    compare(
        fn(torch.tensor([math.nan]) if dtype.is_floating_point else ones),
        fn(to_axon(torch.tensor([math.nan]) if dtype.is_floating_point else ones)),
    )


def test_any_all_dim_lists():
    cpu, ax = make_pair(SHAPE, torch.bool)
    compare(torch.any(cpu, dim=(0, 2)), torch.any(ax, dim=(0, 2)))
    compare(torch.all(cpu, dim=(1, -1), keepdim=True), torch.all(ax, dim=(1, -1), keepdim=True))


def test_out_dtype_mismatch_rejected():
    """out= tensors of another dtype are refused, as on the CPU (never written with the wrong
    element size). float16, not float64: a device without cl_khr_fp64 refuses float64
    tensors before the dtype check."""
    for dev in ("cpu", DEVICE):
        x = torch.randn(4, 5, device=dev)
        with pytest.raises(RuntimeError, match="dtype"):
            torch.amax(x, 0, out=torch.empty(5, dtype=torch.float16, device=dev))
        with pytest.raises(RuntimeError, match="dtype"):
            torch.argmax(x, 0, out=torch.empty(5, dtype=torch.int32, device=dev))
        with pytest.raises(RuntimeError, match="dtype"):
            torch.max(
                x,
                0,
                out=(torch.empty(5, dtype=torch.float16, device=dev), torch.empty(5, dtype=torch.int64, device=dev)),
            )
        with pytest.raises(RuntimeError, match="dtype"):
            torch.min(x, 0, out=(torch.empty(5, device=dev), torch.empty(5, dtype=torch.int32, device=dev)))


def test_duplicate_dims_rejected():
    ax = torch.zeros(2, 3, device=DEVICE)
    with pytest.raises(RuntimeError):
        ax.sum(dim=(0, -2))
    with pytest.raises(IndexError):
        ax.sum(dim=2)


@pytest.mark.parametrize("view", ["contiguous", "permuted", "keepdim"])
def test_more_dims_than_the_kernels_take(view):
    """PyTorch allows 64 dims; dims laid out as one are merged before the kernels' 12 per kind."""
    cpu = torch.randn([2, 1, 3, 1, 2] * 3, dtype=torch.float32)  # 15 dims
    if view == "permuted":
        cpu = cpu.permute(*range(7, 15), *range(7))
    ax = to_axon(cpu)
    dims = (0, 2, 4, 6, 8) if view != "contiguous" else None
    keepdim = view == "keepdim"
    for fn in (torch.sum, torch.amax, torch.amin, torch.mean):
        if dims is None:
            compare(fn(cpu), fn(ax))
        else:
            compare(fn(cpu, dims, keepdim=keepdim), fn(ax, dims, keepdim=keepdim))
    compare(torch.aminmax(cpu), torch.aminmax(ax))
    compare(cpu.argmax(), ax.argmax())
    compare(cpu.sum(3, keepdim=keepdim), ax.sum(3, keepdim=keepdim))  # a dim of size 1


def test_more_dims_than_can_be_merged():
    """Thirteen kept dims no two of which walk memory as one: a clear error, not a crash."""
    ax = torch.zeros([3] * 14, device=DEVICE)[(slice(None, None, 2),) * 14]
    with pytest.raises(NotImplementedError, match="at most 12 reduced and 12 kept"):
        ax.sum(0)
