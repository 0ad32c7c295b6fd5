"""Complex dtypes on axon (kernels/complex.cl, csrc/ops/complex.cpp): storage, copies, views,
arithmetic and math, sums, and a Llama-4-style rotary embedding, compared with the CPU."""

from __future__ import annotations

import pytest
import torch
from conftest import DEVICE, compare

pytestmark = pytest.mark.usefixtures("no_fallback")

CDTYPES = [torch.complex64, torch.complex128]
TOL = {torch.complex64: {"atol": 2e-6, "rtol": 2e-5}, torch.complex128: {"atol": 1e-12, "rtol": 1e-12}}


def crand(*shape, dtype=torch.complex64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, dtype=dtype, generator=g)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_copies_and_views(dtype):
    z = crand(3, 5, dtype=dtype)
    ax = z.to(DEVICE)
    assert ax.dtype == dtype and ax.device.type == "axon"
    compare(z, ax)
    compare(z.t().contiguous(), ax.t().contiguous())  # a strided copy on the device
    compare(torch.view_as_real(z), torch.view_as_real(ax))
    r = torch.randn(4, 3, 2, dtype=torch.float32 if dtype == torch.complex64 else torch.float64)
    compare(torch.view_as_complex(r), torch.view_as_complex(r.to(DEVICE)))
    compare(z.real, ax.real)
    compare(z.imag, ax.imag)
    compare(
        z.to(torch.complex128 if dtype == torch.complex64 else torch.complex64),
        ax.to(torch.complex128 if dtype == torch.complex64 else torch.complex64),
    )
    real = torch.randn(4, 3)
    compare(real.to(dtype), real.to(DEVICE).to(dtype))
    compare(torch.full((2, 3), 1.5 - 2j, dtype=dtype), torch.full((2, 3), 1.5 - 2j, dtype=dtype, device=DEVICE))
    compare(torch.zeros(2, dtype=dtype), torch.zeros(2, dtype=dtype, device=DEVICE))


@pytest.mark.filterwarnings("ignore:Casting complex values to real")
def test_complex_to_real_keeps_the_real_part():
    z = crand(5)
    compare(z.to(torch.float32), z.to(DEVICE).to(torch.float32))
    compare(z.to(torch.int64), z.to(DEVICE).to(torch.int64))


def like(b, a):
    """b as a tensor on a's device (ops without a scalar overload)."""
    return b if isinstance(b, torch.Tensor) else torch.full_like(a, b)


BINARY = {
    "add": lambda a, b: a + b,
    "add_alpha": lambda a, b: torch.add(a, b, alpha=2),
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a**b,
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "logaddexp": lambda a, b: torch.logaddexp(a, like(b, a)),
    "logical_and": lambda a, b: torch.logical_and(a, like(b, a)),
    "logical_xor": lambda a, b: torch.logical_xor(a, like(b, a)),
    "lerp": lambda a, b: torch.lerp(a, like(b, a).to(a.dtype), 0.3),
}


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name, dtype):
    fn = BINARY[name]
    a, b = crand(4, 5, dtype=dtype, seed=1), crand(5, dtype=dtype, seed=2)  # broadcast
    compare(fn(a, b), fn(a.to(DEVICE), b.to(DEVICE)), **TOL[dtype])
    compare(fn(a, 0.5 - 1.5j), fn(a.to(DEVICE), 0.5 - 1.5j), **TOL[dtype])  # a complex scalar
    real = torch.randn(5, dtype=torch.float32)  # mixed with a real tensor
    compare(fn(a, real), fn(a.to(DEVICE), real.to(DEVICE)), **TOL[dtype])


UNARY = {
    "neg": torch.neg,
    "conj_physical": torch.conj_physical,
    "conj_resolved": lambda z: z.conj().resolve_conj(),
    "reciprocal": torch.reciprocal,
    "exp": torch.exp,
    "log": torch.log,
    "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt,
    "sin": torch.sin,
    "cos": torch.cos,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "sgn": torch.sgn,
    "abs": torch.abs,
    "angle": torch.angle,
    "isnan": torch.isnan,
    "isfinite": torch.isfinite,
    "sinh": torch.sinh,
    "cosh": torch.cosh,
    "tan": torch.tan,
    "asin": torch.asin,
    "acos": torch.acos,
    "atan": torch.atan,
    "asinh": torch.asinh,
    "acosh": torch.acosh,
    "atanh": torch.atanh,
    "log1p": torch.log1p,
    "log2": torch.log2,
    "log10": torch.log10,
    "exp2": torch.exp2,
    "expm1": torch.expm1,
    "sinc": torch.sinc,
    "silu": torch.nn.functional.silu,
    "logical_not": torch.logical_not,
    "any": lambda z: z.any(dim=1),
    "all": lambda z: (z + 1).all(),
    "cumsum": lambda z: z.cumsum(1),
    "prod": lambda z: (z * 0.5).prod(dim=1),
    "cumprod": lambda z: (z * 0.5).cumprod(0),
}


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name, dtype):
    z = crand(6, 7, dtype=dtype, seed=3)
    z[0, 0] = 0
    z[0, 1] = -2.0  # the negative real axis (log, sqrt branch cut)
    z[0, 2] = complex(0.0, -3.0)
    got = UNARY[name](z.to(DEVICE))
    want = UNARY[name](z)
    assert got.dtype == want.dtype
    compare(want, got, **TOL[dtype])


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_sums(dtype):
    z = crand(3, 4, 5, dtype=dtype, seed=4)
    ax = z.to(DEVICE)
    compare(z.sum(), ax.sum(), **TOL[dtype])
    compare(z.sum(1), ax.sum(1), **TOL[dtype])
    compare(z.mean((0, 2), keepdim=True), ax.mean((0, 2), keepdim=True), **TOL[dtype])
    compare(z.conj().sum(0), ax.conj().sum(0), **TOL[dtype])
    scalar = torch.randn((), dtype=dtype, generator=torch.Generator().manual_seed(11))  # 0-d: dim 0 is its own
    compare(scalar.sum(0, keepdim=True), scalar.to(DEVICE).sum(0, keepdim=True), **TOL[dtype])
    compare(scalar.mean(-1), scalar.to(DEVICE).mean(-1), **TOL[dtype])


def test_complex_and_polar_from_parts():
    a, b = torch.rand(3, 4), torch.randn(3, 4)
    compare(torch.complex(a, b), torch.complex(a.to(DEVICE), b.to(DEVICE)))
    compare(torch.polar(a, b), torch.polar(a.to(DEVICE), b.to(DEVICE)), atol=1e-6, rtol=1e-5)
    compare(
        torch.polar(a.double(), b.double()),
        torch.polar(a.double().to(DEVICE), b.double().to(DEVICE)),
        **TOL[torch.complex128],
    )


def test_autograd_through_complex_ops():
    x = torch.randn(4, 6, 2)
    w = crand(4, 6, seed=5)
    xs = [x.clone().requires_grad_(), x.to(DEVICE).requires_grad_()]
    for t, ww in zip(xs, [w, w.to(DEVICE)], strict=True):
        z = torch.view_as_complex(t) * ww
        (z.abs() + torch.view_as_real(z.exp()).sum(-1)).sum().backward()
    compare(xs[0].grad, xs[1].grad, atol=1e-5, rtol=1e-4)


def test_llama4_style_rotary_embedding():
    """Llama 4's rotary embedding multiplies query pairs, viewed as complex, by polar factors."""
    batch, seq, heads, dim = 2, 5, 3, 8
    q = torch.randn(batch, seq, heads, dim)
    inv = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
    angles = torch.outer(torch.arange(seq).float(), inv)

    def rotate(q, angles):
        freqs = torch.polar(torch.ones_like(angles), angles)
        qc = torch.view_as_complex(q.float().reshape(*q.shape[:-1], -1, 2))
        return torch.view_as_real(qc * freqs[None, :, None, :]).flatten(3).type_as(q)

    compare(rotate(q, angles), rotate(q.to(DEVICE), angles.to(DEVICE)), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_matrix_products(dtype):
    """Complex products through the host BLAS (cgemm / zgemm) or CLBlast, conjugates resolved."""
    a, b = crand(5, 7, dtype=dtype, seed=6), crand(7, 3, dtype=dtype, seed=7)
    ax, bx = a.to(DEVICE), b.to(DEVICE)
    compare(a @ b, ax @ bx, **TOL[dtype])
    compare(a @ b.conj().t().conj().t(), ax @ bx.conj().t().conj().t(), **TOL[dtype])
    compare(a.mH @ a, ax.mH @ ax, **TOL[dtype])  # conjugate transpose
    batch = crand(2, 5, 7, dtype=dtype, seed=8)
    compare(torch.bmm(batch, b.expand(2, 7, 3)), torch.bmm(batch.to(DEVICE), bx.expand(2, 7, 3)), **TOL[dtype])
    compare(a[:, :0] @ b[:0], ax[:, :0] @ bx[:0])  # an empty inner dimension
    x = a.clone().requires_grad_()
    xa = ax.clone().requires_grad_()
    (x @ b).abs().sum().backward()
    (xa @ bx).abs().sum().backward()
    compare(x.grad, xa.grad, **TOL[dtype])


MOVEMENT = {
    "index_select": lambda t, i: t.index_select(0, i),
    "getitem": lambda t, i: t[i],
    "gather": lambda t, i: t.gather(1, i.view(3, 1).expand(3, 2)),
    "index_put": lambda t, i: t.index_put((i,), torch.ones(3, 6, dtype=t.dtype, device=t.device)),
    "index_put_accumulate": lambda t, i: t.index_put((i,), t[:3], accumulate=True),
    "scatter_add": lambda t, i: torch.zeros_like(t).scatter_add(0, i.view(3, 1).expand(3, 6), t[:3]),
    "tril": lambda t, i: t.tril(),
    "nonzero": lambda t, i: t.tril().nonzero(),
    "where": lambda t, i: torch.where(t.real > 0, t, 2 - 1j),
    "masked_fill": lambda t, i: t.masked_fill(t.imag > 0, 1j),
}


@pytest.mark.parametrize("name", list(MOVEMENT))
def test_data_movement_and_selection(name):
    """Indexing kernels move complex elements as they are; where selects them."""
    z = crand(4, 6, seed=9)
    idx = torch.tensor([2, 0, 3])
    compare(MOVEMENT[name](z, idx), MOVEMENT[name](z.to(DEVICE), idx.to(DEVICE)), **TOL[torch.complex64])


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_norms_and_spread(dtype):
    """Norms take the magnitudes; variance and std the spread of both parts (real results)."""
    z = crand(4, 6, dtype=dtype, seed=10)
    ax = z.to(DEVICE)
    for fn in (
        lambda t: torch.linalg.vector_norm(t, dim=1),
        lambda t: torch.linalg.vector_norm(t, ord=1),
        lambda t: t.norm(dim=0),
        lambda t: t.var(1),
        lambda t: t.std(0, correction=0),
        lambda t: torch.var_mean(t, 1)[0],
    ):
        want, got = fn(z), fn(ax)
        assert got.dtype == want.dtype
        compare(want, got, **TOL[dtype])


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_complex_scaled_products_and_fills(dtype):
    """addmm / baddbmm / addmv with complex alpha and beta, vdot, index_fill with a complex value."""
    a, b, c = crand(4, 5, dtype=dtype, seed=9), crand(5, 3, dtype=dtype, seed=10), crand(4, 3, dtype=dtype, seed=11)
    ax, bx, cx = a.to(DEVICE), b.to(DEVICE), c.to(DEVICE)
    compare(
        torch.addmm(c, a, b, beta=0.5 + 1j, alpha=2 - 1j),
        torch.addmm(cx, ax, bx, beta=0.5 + 1j, alpha=2 - 1j),
        **TOL[dtype],
    )
    compare(torch.baddbmm(c, a[None], b[None], alpha=1j), torch.baddbmm(cx, ax[None], bx[None], alpha=1j), **TOL[dtype])
    v = crand(5, dtype=dtype, seed=12)
    compare(torch.addmv(c[:, 0], a, v, beta=1j), torch.addmv(cx[:, 0], ax, v.to(DEVICE), beta=1j), **TOL[dtype])
    compare(torch.vdot(a[0], a[1]), torch.vdot(ax[0], ax[1]), **TOL[dtype])
    idx = torch.tensor([0, 2])
    compare(a.index_fill(0, idx, 2 - 3j), ax.index_fill(0, idx.to(DEVICE), 2 - 3j), **TOL[dtype])


def test_complex_random_parts():
    """randn on complex: each part normal with variance 1/2; rand: each part uniform in [0, 1)."""
    torch.manual_seed(0)
    z = torch.randn(200000, dtype=torch.complex64, device=DEVICE).cpu()
    assert abs(z.real.var().item() - 0.5) < 0.01 and abs(z.imag.var().item() - 0.5) < 0.01
    assert abs(z.real.mean().item()) < 0.01 and abs((z.real * z.imag).mean().item()) < 0.01
    u = torch.rand(200000, dtype=torch.complex64, device=DEVICE).cpu()
    assert 0 <= u.real.min() and u.real.max() < 1 and abs(u.imag.mean().item() - 0.5) < 0.01


def test_ops_without_complex_kernels_say_so():
    """Families without complex kernels refuse complex tensors instead of computing lane by lane."""
    ax = crand(3, 4).to(DEVICE)
    for fn in (
        lambda t: torch.softmax(t, -1),
        lambda t: torch.logcumsumexp(t, 0),
        lambda t: torch.special.i0(t),
    ):
        with pytest.raises((NotImplementedError, RuntimeError), match="complex|Complex"):
            fn(ax)
