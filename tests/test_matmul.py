"""Native matrix products against PyTorch's CPU results, on every gemm path (host BLAS in the
queue, CLBlast, the portable kernel), with transposed / sliced / broadcast operands."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
import torch_axon._C as axon_c
from conftest import DEVICE, compare, make_pair, to_axon

pytestmark = pytest.mark.usefixtures("no_fallback")

BLAS_DTYPES = [torch.float32, torch.float64]
# float16 / bfloat16 / int64 take the portable kernel path (accumulating in float / int64).
KERNEL_DTYPES = [torch.float16, torch.bfloat16, torch.int64]
ALL = BLAS_DTYPES + KERNEL_DTYPES

MM_TOL = {
    torch.float32: {"atol": 1e-4, "rtol": 1e-4},
    torch.float64: {"atol": 1e-10, "rtol": 1e-10},
    torch.float16: {"atol": 1e-2, "rtol": 1e-2},
    torch.bfloat16: {"atol": 1e-1, "rtol": 3e-2},
    torch.int64: {"atol": 0, "rtol": 0},
}


def pair(shape, dtype, layout="contiguous"):
    low, high = (-5, 6) if dtype == torch.int64 else (None, None)
    return make_pair(shape, dtype, layout, low=low, high=high)


def check(expected, got, dtype):
    compare(expected, got, **MM_TOL[dtype])


def _operand(shape, dtype, how):
    """A [r, c] operand: contiguous, transposed (column-major), row-sliced (offset, ld > c),
    column-step-sliced (no BLAS layout: copied), or expanded rows (stride 0)."""
    r, c = shape
    if how == "contiguous":
        return pair(shape, dtype)
    if how == "transposed":
        return pair(shape, dtype, "transposed")
    if how == "rows":
        cpu, ax = pair((r + 2, c + 3), dtype)
        return cpu[1 : r + 1, 2 : c + 2], ax[1 : r + 1, 2 : c + 2]
    if how == "step":
        return pair(shape, dtype, "sliced")
    if how == "expanded":
        return pair(shape, dtype, "expanded")
    raise ValueError(how)


OPERANDS = ["contiguous", "transposed", "rows", "step", "expanded"]


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_mm_dtypes(dtype):
    a_cpu, a_ax = pair((7, 5), dtype)
    b_cpu, b_ax = pair((5, 9), dtype)
    out = torch.mm(a_ax, b_ax)
    assert out.dtype == dtype
    check(torch.mm(a_cpu, b_cpu), out, dtype)
    check(a_cpu @ b_cpu, a_ax @ b_ax, dtype)


@pytest.mark.parametrize("how_b", OPERANDS)
@pytest.mark.parametrize("how_a", OPERANDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_mm_layouts(dtype, how_a, how_b):
    a_cpu, a_ax = _operand((6, 5), dtype, how_a)
    b_cpu, b_ax = _operand((5, 4), dtype, how_b)
    check(torch.mm(a_cpu, b_cpu), torch.mm(a_ax, b_ax), dtype)


@pytest.mark.parametrize("shape", [(1, 5, 1), (1, 1, 1), (5, 1, 4), (1, 7, 6), (6, 7, 1), (33, 17, 19)])
def test_mm_shapes(shape):
    m, k, n = shape
    for dtype in (torch.float32, torch.int64):
        a_cpu, a_ax = pair((m, k), dtype)
        b_cpu, b_ax = pair((k, n), dtype)
        check(a_cpu @ b_cpu, a_ax @ b_ax, dtype)
        check(a_cpu @ b_cpu, (b_ax.t() @ a_ax.t()).t(), dtype)


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_zero_size(dtype):
    a_cpu, a_ax = pair((3, 0), dtype)
    b_cpu, b_ax = pair((0, 4), dtype)
    check(a_cpu @ b_cpu, a_ax @ b_ax, dtype)  # k = 0: zeros
    s_cpu, s_ax = pair((3, 4), dtype)
    check(torch.addmm(s_cpu, a_cpu, b_cpu, beta=2), torch.addmm(s_ax, a_ax, b_ax, beta=2), dtype)
    e_cpu, e_ax = pair((0, 5), dtype)
    f_cpu, f_ax = pair((5, 4), dtype)
    check(e_cpu @ f_cpu, e_ax @ f_ax, dtype)  # m = 0
    check(f_cpu.t() @ e_cpu.t(), f_ax.t() @ e_ax.t(), dtype)  # n = 0
    g_cpu, g_ax = pair((2, 3, 0), dtype)
    h_cpu, h_ax = pair((2, 0, 5), dtype)
    check(torch.bmm(g_cpu, h_cpu), torch.bmm(g_ax, h_ax), dtype)
    v_cpu, v_ax = pair((0,), dtype)
    check(torch.dot(v_cpu, v_cpu), torch.dot(v_ax, v_ax), dtype)


def test_mm_k0_result_is_zero_not_garbage():
    """With k = 0 the product is zero even if the fresh output memory held NaN."""
    junk = torch.full((64, 64), math.nan, device=DEVICE)
    del junk
    out = torch.mm(torch.empty(64, 0, device=DEVICE), torch.empty(0, 64, device=DEVICE))
    compare(torch.zeros(64, 64), out)


# ---- addmm / addmv / baddbmm and their scalars --------------------------------------------------


@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2), (0, 1), (0, -1.5), (2, 0)])
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_addmm(dtype, beta, alpha):
    if dtype == torch.int64:
        beta, alpha = int(beta * 2), int(alpha * 2)
    s_cpu, s_ax = pair((6, 4), dtype)
    bias_cpu, bias_ax = pair((4,), dtype)
    a_cpu, a_ax = pair((6, 5), dtype, "transposed")
    b_cpu, b_ax = pair((5, 4), dtype)
    check(
        torch.addmm(s_cpu, a_cpu, b_cpu, beta=beta, alpha=alpha),
        torch.addmm(s_ax, a_ax, b_ax, beta=beta, alpha=alpha),
        dtype,
    )
    check(
        torch.addmm(bias_cpu, a_cpu, b_cpu, beta=beta, alpha=alpha),
        torch.addmm(bias_ax, a_ax, b_ax, beta=beta, alpha=alpha),
        dtype,
    )
    # In place and out=.
    check(
        s_cpu.clone().addmm_(a_cpu, b_cpu, beta=beta, alpha=alpha),
        s_ax.clone().addmm_(a_ax, b_ax, beta=beta, alpha=alpha),
        dtype,
    )
    out = torch.empty(0, dtype=dtype, device=DEVICE)
    torch.addmm(s_ax, a_ax, b_ax, beta=beta, alpha=alpha, out=out)
    check(torch.addmm(s_cpu, a_cpu, b_cpu, beta=beta, alpha=alpha), out, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=str)
def test_addmm_beta0_ignores_nan_self(dtype):
    """beta = 0: self is ignored, NaN and inf in it do not propagate (as in PyTorch)."""
    s = torch.full((6, 4), math.nan, dtype=dtype)
    s[0, 0] = math.inf
    a_cpu, a_ax = pair((6, 5), dtype)
    b_cpu, b_ax = pair((5, 4), dtype)
    expected = torch.addmm(s, a_cpu, b_cpu, beta=0)
    assert not expected.isnan().any()
    check(expected, torch.addmm(to_axon(s), a_ax, b_ax, beta=0), dtype)
    check(s.clone().addmm_(a_cpu, b_cpu, beta=0, alpha=2), to_axon(s).addmm_(a_ax, b_ax, beta=0, alpha=2), dtype)
    bs = torch.full((2, 6, 4), math.nan, dtype=dtype)
    x_cpu, x_ax = pair((2, 6, 5), dtype)
    y_cpu, y_ax = pair((2, 5, 4), dtype)
    check(torch.baddbmm(bs, x_cpu, y_cpu, beta=0), torch.baddbmm(to_axon(bs), x_ax, y_ax, beta=0), dtype)
    v = torch.full((6,), math.nan, dtype=dtype)
    w_cpu, w_ax = pair((5,), dtype)
    check(torch.addmv(v, a_cpu, w_cpu, beta=0), torch.addmv(to_axon(v), a_ax, w_ax, beta=0), dtype)


@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, -2), (0, 1)])
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_baddbmm(dtype, beta, alpha):
    if dtype == torch.int64:
        beta, alpha = int(beta * 2), int(alpha * 2)
    s_cpu, s_ax = pair((3, 4, 6), dtype)
    a_cpu, a_ax = pair((3, 4, 5), dtype)
    b_cpu, b_ax = pair((3, 5, 6), dtype)
    check(
        torch.baddbmm(s_cpu, a_cpu, b_cpu, beta=beta, alpha=alpha),
        torch.baddbmm(s_ax, a_ax, b_ax, beta=beta, alpha=alpha),
        dtype,
    )
    bias_cpu, bias_ax = pair((6,), dtype)
    check(
        torch.baddbmm(bias_cpu, a_cpu.transpose(1, 2).transpose(1, 2), b_cpu, beta=beta, alpha=alpha),
        torch.baddbmm(bias_ax, a_ax, b_ax, beta=beta, alpha=alpha),
        dtype,
    )
    check(
        s_cpu.clone().baddbmm_(a_cpu, b_cpu, beta=beta, alpha=alpha),
        s_ax.clone().baddbmm_(a_ax, b_ax, beta=beta, alpha=alpha),
        dtype,
    )


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_bmm(dtype):
    a_cpu, a_ax = pair((3, 4, 5), dtype)
    b_cpu, b_ax = pair((3, 5, 6), dtype)
    check(torch.bmm(a_cpu, b_cpu), torch.bmm(a_ax, b_ax), dtype)
    # Transposed matrices inside the batch.
    check(
        torch.bmm(b_cpu.transpose(1, 2), a_cpu.transpose(1, 2)),
        torch.bmm(b_ax.transpose(1, 2), a_ax.transpose(1, 2)),
        dtype,
    )
    # Batch-major transposes: the batch is not the outermost stride.
    p_cpu, p_ax = pair((4, 3, 5), dtype)
    check(torch.bmm(p_cpu.transpose(0, 1), b_cpu), torch.bmm(p_ax.transpose(0, 1), b_ax), dtype)
    # A broadcast (stride 0) batch and a step-sliced batch.
    e_cpu, e_ax = pair((1, 5, 6), dtype)
    check(torch.bmm(a_cpu, e_cpu.expand(3, 5, 6)), torch.bmm(a_ax, e_ax.expand(3, 5, 6)), dtype)
    s_cpu, s_ax = pair((6, 4, 5), dtype)
    check(torch.bmm(s_cpu[::2], b_cpu), torch.bmm(s_ax[::2], b_ax), dtype)
    out = torch.empty(3, 4, 6, dtype=dtype, device=DEVICE)
    torch.bmm(a_ax, b_ax, out=out)
    check(torch.bmm(a_cpu, b_cpu), out, dtype)
    # A non-contiguous out= tensor.
    big = torch.zeros(3, 6, 4, dtype=dtype, device=DEVICE)
    torch.bmm(a_ax, b_ax, out=big.transpose(1, 2))
    check(torch.bmm(a_cpu, b_cpu), big.transpose(1, 2), dtype)


# ---- vectors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_mv_addmv_dot(dtype):
    m_cpu, m_ax = pair((6, 5), dtype)
    v_cpu, v_ax = pair((5,), dtype)
    s_cpu, s_ax = pair((6,), dtype)
    check(torch.mv(m_cpu, v_cpu), torch.mv(m_ax, v_ax), dtype)
    check(torch.mv(m_cpu.t(), s_cpu), torch.mv(m_ax.t(), s_ax), dtype)
    beta, alpha = (2, 3) if dtype == torch.int64 else (0.5, -1.5)
    check(
        torch.addmv(s_cpu, m_cpu, v_cpu, beta=beta, alpha=alpha),
        torch.addmv(s_ax, m_ax, v_ax, beta=beta, alpha=alpha),
        dtype,
    )
    check(torch.dot(v_cpu, v_cpu), torch.dot(v_ax, v_ax), dtype)
    w_cpu, w_ax = pair((10,), dtype)
    check(torch.dot(w_cpu[::2], v_cpu), torch.dot(w_ax[::2], v_ax), dtype)
    check(v_cpu @ v_cpu, v_ax @ v_ax, dtype)
    check(torch.mv(m_cpu[:, ::2], w_cpu[:3]), torch.mv(m_ax[:, ::2], w_ax[:3]), dtype)


def test_dot_long():
    a_cpu, a_ax = make_pair((100_000,), torch.float64)
    b_cpu, b_ax = make_pair((100_000,), torch.float64)
    compare(torch.dot(a_cpu, b_cpu), torch.dot(a_ax, b_ax), atol=1e-8, rtol=1e-10)
    f_cpu, f_ax = make_pair((100_000,), torch.float32)
    compare(torch.dot(f_cpu, f_cpu), torch.dot(f_ax, f_ax), rtol=1e-5, atol=1e-3)


# ---- matmul and linear -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape_a, shape_b",
    [
        ((5,), (5,)),
        ((4, 5), (5,)),
        ((5,), (5, 3)),
        ((2, 4, 5), (5, 3)),
        ((4, 5), (2, 5, 3)),
        ((2, 1, 4, 5), (3, 5, 6)),
        ((3, 4, 5), (5,)),
        ((5,), (2, 5, 3)),
    ],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64], ids=str)
def test_matmul_shapes(dtype, shape_a, shape_b):
    a_cpu, a_ax = pair(shape_a, dtype)
    b_cpu, b_ax = pair(shape_b, dtype)
    check(torch.matmul(a_cpu, b_cpu), torch.matmul(a_ax, b_ax), dtype)


def test_matmul_noncontiguous():
    a_cpu, a_ax = pair((3, 6, 4), torch.float32)
    b_cpu, b_ax = pair((3, 6, 8), torch.float32)
    check(a_cpu.transpose(1, 2) @ b_cpu[..., ::2], a_ax.transpose(1, 2) @ b_ax[..., ::2], torch.float32)
    check(a_cpu[1:, 2:] @ b_cpu[0, :4, 1:6], a_ax[1:, 2:] @ b_ax[0, :4, 1:6], torch.float32)
    check(a_cpu.permute(2, 0, 1) @ b_cpu[0], a_ax.permute(2, 0, 1) @ b_ax[0], torch.float32)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
def test_linear(dtype):
    x_cpu, x_ax = pair((2, 3, 8), dtype)
    w_cpu, w_ax = pair((5, 8), dtype)
    b_cpu, b_ax = pair((5,), dtype)
    check(F.linear(x_cpu, w_cpu, b_cpu), F.linear(x_ax, w_ax, b_ax), dtype)
    check(F.linear(x_cpu, w_cpu), F.linear(x_ax, w_ax), dtype)
    check(F.linear(x_cpu[0], w_cpu, b_cpu), F.linear(x_ax[0], w_ax, b_ax), dtype)
    # A transposed weight, a sliced input.
    wt_cpu, wt_ax = pair((8, 5), dtype)
    check(F.linear(x_cpu[:, ::2], wt_cpu.t(), b_cpu), F.linear(x_ax[:, ::2], wt_ax.t(), b_ax), dtype)


def test_linear_backward():
    x_cpu = torch.randn(4, 8, requires_grad=True)
    w_cpu = torch.randn(5, 8, requires_grad=True)
    b_cpu = torch.randn(5, requires_grad=True)
    x_ax, w_ax, b_ax = (to_axon(t.detach()).requires_grad_() for t in (x_cpu, w_cpu, b_cpu))
    g = torch.randn(4, 5)
    F.linear(x_cpu, w_cpu, b_cpu).backward(g)
    F.linear(x_ax, w_ax, b_ax).backward(to_axon(g))
    for c, a in ((x_cpu, x_ax), (w_cpu, w_ax), (b_cpu, b_ax)):
        compare(c.grad, a.grad, atol=1e-5, rtol=1e-5)


# ---- each gemm path ---------------------------------------------------------------------------------

PATHS = {"host": "host-blas", "clblast": "clblast", "kernel": "kernel"}


@pytest.fixture(params=list(PATHS))
def gemm_path(request, monkeypatch):
    """Forces a gemm path through AXON_GEMM (read by the runtime on every call)."""
    monkeypatch.setenv("AXON_GEMM", request.param)
    chosen = axon_c.gemm_path(0, "float32")
    if chosen != PATHS[request.param]:
        pytest.skip(f"AXON_GEMM={request.param} cannot run on this device (it chose {chosen})")
    return request.param


@pytest.mark.parametrize("dtype", BLAS_DTYPES, ids=str)
def test_gemm_path_mm(gemm_path, dtype):
    a_cpu, a_ax = pair((64, 48), dtype)
    b_cpu, b_ax = pair((48, 32), dtype)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == torch.float32 else {"rtol": 1e-10, "atol": 1e-10}
    compare(a_cpu @ b_cpu, a_ax @ b_ax, **tol)
    compare(b_cpu.t() @ a_cpu.t(), b_ax.t() @ a_ax.t(), **tol)
    compare(a_cpu[1:40, ::2] @ b_cpu[:24, 3:], a_ax[1:40, ::2] @ b_ax[:24, 3:], **tol)
    s_cpu, s_ax = pair((64, 32), dtype)
    compare(
        torch.addmm(s_cpu, a_cpu, b_cpu, beta=0.5, alpha=2), torch.addmm(s_ax, a_ax, b_ax, beta=0.5, alpha=2), **tol
    )


def test_gemm_path_batched(gemm_path):
    a_cpu, a_ax = pair((3, 20, 12), torch.float32)
    b_cpu, b_ax = pair((3, 12, 16), torch.float32)
    compare(torch.bmm(a_cpu, b_cpu), torch.bmm(a_ax, b_ax), rtol=1e-4, atol=1e-4)
    compare(
        torch.bmm(a_cpu, b_cpu[:1].expand(3, 12, 16)), torch.bmm(a_ax, b_ax[:1].expand(3, 12, 16)), rtol=1e-4, atol=1e-4
    )
    compare(
        torch.bmm(b_cpu.transpose(1, 2), a_cpu.transpose(1, 2)),
        torch.bmm(b_ax.transpose(1, 2), a_ax.transpose(1, 2)),
        rtol=1e-4,
        atol=1e-4,
    )
    v_cpu, v_ax = pair((12,), torch.float32)
    compare(torch.mv(a_cpu[0], v_cpu), torch.mv(a_ax[0], v_ax), rtol=1e-4, atol=1e-4)
    compare(torch.dot(v_cpu, v_cpu), torch.dot(v_ax, v_ax), rtol=1e-4, atol=1e-4)


def test_gemm_path_beta0_ignores_stale_output(gemm_path):
    """beta = 0 on every path: whatever the output memory held (NaN here) is not read."""
    a_cpu, a_ax = pair((16, 8), torch.float32)
    b_cpu, b_ax = pair((8, 12), torch.float32)
    for _ in range(3):
        junk = torch.full((16, 12), math.nan, device=DEVICE)
        del junk
        compare(a_cpu @ b_cpu, a_ax @ b_ax, rtol=1e-4, atol=1e-4)
    s = torch.full((16, 12), math.nan)
    compare(torch.addmm(s, a_cpu, b_cpu, beta=0), torch.addmm(to_axon(s), a_ax, b_ax, beta=0), rtol=1e-4, atol=1e-4)


def test_gemm_path_env_is_read_per_call(monkeypatch):
    monkeypatch.setenv("AXON_GEMM", "kernel")
    assert axon_c.gemm_path(0, "float32") == "kernel"
    monkeypatch.delenv("AXON_GEMM")
    assert axon_c.gemm_path(0, "float32") in ("host-blas", "clblast", "kernel")
    # float16 always takes the portable kernel.
    assert axon_c.gemm_path(0, "float16") == "kernel"
