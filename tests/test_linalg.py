"""Native linear algebra (LAPACK inside the stream on CPU-class devices): Cholesky, LU, solves,
inverses, determinants, triangular solves, QR, eigh, SVD and LDL against PyTorch's CPU results,
forward and gradient. Singular vectors and eigenvectors are compared through sign-free
quantities (reconstructions, absolute values) because their signs are not unique."""

from __future__ import annotations

import pytest
import torch
from conftest import DEVICE, compare, make_cpu, to_axon

pytestmark = [
    pytest.mark.usefixtures("no_fallback"),
    pytest.mark.skipif(
        not (
            hasattr(torch, "axon") and torch.axon.is_available() and torch.axon.get_device_properties(0).native_kernels
        ),
        reason="LAPACK runs natively only on devices with native kernels (elsewhere: CPU fallback)",
    ),
]

DTYPES = [torch.float32, torch.float64]
TOL = {torch.float32: dict(atol=2e-4, rtol=2e-4), torch.float64: dict(atol=1e-9, rtol=1e-9)}
SHAPES = [(4, 4), (3, 5, 5), (2, 1, 3, 3), (0, 3, 3), (2, 0, 0)]


def spd(shape, dtype):
    a = make_cpu(shape, dtype, low=-1, high=1)
    n = shape[-1]
    return a @ a.mT + n * torch.eye(n, dtype=dtype)


def well_conditioned(shape, dtype):
    n = shape[-1]
    return make_cpu(shape, dtype, low=-1, high=1) + n * torch.eye(n, dtype=dtype)


def colmajor(t):
    """The same values, each matrix stored column-major (a transposed view)."""
    return t.mT.contiguous().mT


def grad_pair(t):
    c = t.clone().requires_grad_()
    a = t.to(DEVICE).requires_grad_()
    return c, a


def check_grad(fn, *inputs, dtype=torch.float32):
    cpus, axs = zip(*(grad_pair(t) for t in inputs), strict=True)
    rc, ra = fn(*cpus), fn(*axs)
    compare(rc, ra, **TOL[dtype])
    rc.sum().backward()
    ra.sum().backward()
    for c, a in zip(cpus, axs, strict=True):
        compare(c.grad, a.grad, **{k: v * 10 for k, v in TOL[dtype].items()})


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cholesky_family(shape, dtype):
    a = spd(shape, dtype)
    ax = to_axon(a)
    for upper in (False, True):
        compare(torch.linalg.cholesky(a, upper=upper), torch.linalg.cholesky(ax, upper=upper), **TOL[dtype])
    compare(torch.linalg.cholesky_ex(a), torch.linalg.cholesky_ex(ax), **TOL[dtype])
    L = torch.linalg.cholesky(a)
    b = make_cpu(shape[:-1] + (2,), dtype)
    for upper in (False, True):
        f = L.mT if upper else L
        compare(torch.cholesky_solve(b, f, upper), torch.cholesky_solve(to_axon(b), to_axon(f), upper), **TOL[dtype])
        compare(torch.cholesky_inverse(f, upper), torch.cholesky_inverse(to_axon(f), upper), **TOL[dtype])


def test_cholesky_errors_and_layouts():
    a = spd((3, 4, 4), torch.float32)
    a[1] = -a[1]
    L, info = torch.linalg.cholesky_ex(to_axon(a))
    assert info.cpu().tolist() == torch.linalg.cholesky_ex(a).info.tolist()
    with pytest.raises(torch.linalg.LinAlgError, match="not positive-definite"):
        torch.linalg.cholesky(to_axon(a))
    # a transposed (column-major) input and an out= tensor of another layout
    s = spd((5, 5), torch.float32)
    out = torch.empty(5, 5, device=DEVICE)
    torch.linalg.cholesky(to_axon(s).mT, out=out)
    compare(torch.linalg.cholesky(s.mT), out, **TOL[torch.float32])
    check_grad(lambda x: torch.linalg.cholesky(x @ x.mT + 4 * torch.eye(4, device=x.device)), make_cpu((2, 4, 4)))
    # the deprecated torch.cholesky
    with pytest.warns(UserWarning, match="deprecated"):
        compare(torch.cholesky(s, upper=True), torch.cholesky(to_axon(s), upper=True), **TOL[torch.float32])
    with pytest.raises(torch.linalg.LinAlgError, match=r"cholesky: \(Batch element 1\): The factorization"):
        torch.cholesky(to_axon(a))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (2, 4, 6), (2, 6, 4), (0, 3, 3)], ids=str)
def test_lu_family(shape, dtype):
    a = make_cpu(shape, dtype, low=-2, high=2)
    ax = to_axon(a)
    compare(torch.linalg.lu_factor_ex(a), torch.linalg.lu_factor_ex(ax), **TOL[dtype])
    compare(torch.linalg.lu(a), torch.linalg.lu(ax), **TOL[dtype])
    LU, piv = torch.linalg.lu_factor(a)
    compare(torch.lu_unpack(LU, piv), torch.lu_unpack(*to_axon(LU, piv)), **TOL[dtype])
    if shape[-1] != shape[-2]:
        return
    a = well_conditioned(shape, dtype)
    ax = to_axon(a)
    LU, piv = torch.linalg.lu_factor(a)
    b = make_cpu(shape[:-1] + (3,), dtype)
    for left in (True, False):
        bb = b if left else b.mT
        for adjoint in (False, True):
            compare(
                torch.linalg.lu_solve(LU, piv, bb, left=left, adjoint=adjoint),
                torch.linalg.lu_solve(*to_axon(LU, piv, bb), left=left, adjoint=adjoint),
                **TOL[dtype],
            )
        compare(torch.linalg.solve(a, bb, left=left), torch.linalg.solve(ax, to_axon(bb), left=left), **TOL[dtype])
    v = make_cpu(shape[:-1], dtype)
    compare(torch.linalg.solve(a, v), torch.linalg.solve(ax, to_axon(v)), **TOL[dtype])
    compare(torch.linalg.inv(a), torch.linalg.inv(ax), **TOL[dtype])
    compare(torch.linalg.inv_ex(colmajor(a)), torch.linalg.inv_ex(colmajor(ax)), **TOL[dtype])
    compare(torch.linalg.det(a), torch.linalg.det(ax), **TOL[dtype])
    compare(torch.linalg.slogdet(a), torch.linalg.slogdet(ax), **TOL[dtype])


def test_singular_and_broadcast():
    s = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
    compare(torch.linalg.det(s), torch.linalg.det(to_axon(s)))
    compare(torch.linalg.slogdet(s), torch.linalg.slogdet(to_axon(s)))
    assert torch.linalg.inv_ex(to_axon(s)).info.item() > 0
    with pytest.raises(torch.linalg.LinAlgError, match="singular"):
        torch.linalg.inv(to_axon(s))
    # a single matrix against a batch of right-hand sides
    a = well_conditioned((3, 3), torch.float32)
    b = make_cpu((4, 3, 2))
    compare(torch.linalg.solve(a, b), torch.linalg.solve(*to_axon(a, b)), atol=1e-4, rtol=1e-4)
    LU, piv = torch.linalg.lu_factor(a)
    compare(torch.linalg.lu_solve(LU, piv, b), torch.linalg.lu_solve(*to_axon(LU, piv, b)), atol=1e-4, rtol=1e-4)


def test_lu_gradients():
    a = well_conditioned((2, 4, 4), torch.float32)
    b = make_cpu((2, 4, 3))
    check_grad(torch.linalg.solve, a, b)
    check_grad(torch.linalg.inv, a)
    check_grad(torch.linalg.det, a)
    check_grad(lambda x: torch.linalg.slogdet(x).logabsdet, a)
    check_grad(lambda x: torch.linalg.lu(x)[1] + torch.linalg.lu(x)[2], a)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_triangular(dtype):
    a = well_conditioned((3, 4, 4), dtype)
    b = make_cpu((3, 4, 5), dtype)
    for upper in (True, False):
        t = a.triu() if upper else a.tril()
        for unit in (False, True):
            compare(
                torch.linalg.solve_triangular(t, b, upper=upper, unitriangular=unit),
                torch.linalg.solve_triangular(*to_axon(t, b), upper=upper, unitriangular=unit),
                **TOL[dtype],
            )
            compare(
                torch.linalg.solve_triangular(t, b.mT, upper=upper, left=False, unitriangular=unit),
                torch.linalg.solve_triangular(*to_axon(t, b.mT), upper=upper, left=False, unitriangular=unit),
                **TOL[dtype],
            )
            for transpose in (False, True):
                compare(
                    torch.triangular_solve(b, t, upper, transpose, unit),
                    torch.triangular_solve(*to_axon(b, t), upper, transpose, unit),
                    **TOL[dtype],
                )
    # broadcast: one matrix, a batch of right-hand sides
    compare(
        torch.linalg.solve_triangular(a[0].triu(), b, upper=True),
        torch.linalg.solve_triangular(*to_axon(a[0].triu(), b), upper=True),
        **TOL[dtype],
    )
    check_grad(lambda x, y: torch.linalg.solve_triangular(x.triu(), y, upper=True), a, b, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (0, 3, 2)], ids=str)
def test_qr_family(shape, dtype):
    a = make_cpu(shape, dtype)
    ax = to_axon(a)
    for mode in ("reduced", "complete", "r"):
        q, r = torch.linalg.qr(a, mode=mode)
        qa, ra = torch.linalg.qr(ax, mode=mode)
        compare(r, ra, **TOL[dtype])
        if mode != "r":
            compare(q, qa, **TOL[dtype])
    compare(torch.geqrf(a), torch.geqrf(ax), **TOL[dtype])
    qr, tau = torch.geqrf(a)
    if shape[-2] >= shape[-1]:
        compare(
            torch.linalg.householder_product(qr, tau), torch.linalg.householder_product(*to_axon(qr, tau)), **TOL[dtype]
        )
    for left in (True, False):
        for transpose in (False, True):
            m = shape[-2]
            c = make_cpu(shape[:-2] + ((m, 2) if left else (2, m)), dtype)
            compare(
                torch.ormqr(qr, tau, c, left, transpose),
                torch.ormqr(*to_axon(qr, tau, c), left, transpose),
                **TOL[dtype],
            )


def test_qr_gradient():
    check_grad(lambda x: torch.linalg.qr(x).R, make_cpu((2, 5, 3)))
    check_grad(lambda x: torch.linalg.qr(x).Q, make_cpu((5, 3)))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (0, 2, 2)], ids=str)
def test_eigh(shape, dtype):
    a = make_cpu(shape, dtype)
    a = a + a.mT
    ax = to_axon(a)
    for uplo in ("L", "U"):
        compare(torch.linalg.eigvalsh(a, UPLO=uplo), torch.linalg.eigvalsh(ax, UPLO=uplo), **TOL[dtype])
        w, v = torch.linalg.eigh(ax, UPLO=uplo)
        compare(torch.linalg.eigh(a, UPLO=uplo).eigenvalues, w, **TOL[dtype])
        compare(a, v @ torch.diag_embed(w) @ v.mT, **TOL[dtype])
    check_grad(torch.linalg.eigvalsh, a, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (0, 3, 2), (2, 0, 3)], ids=str)
def test_svd(shape, dtype):
    a = make_cpu(shape, dtype)
    ax = to_axon(a)
    compare(torch.linalg.svdvals(a), torch.linalg.svdvals(ax), **TOL[dtype])
    for full in (False, True):
        u, s, vh = torch.linalg.svd(ax, full_matrices=full)
        uc, sc, vhc = torch.linalg.svd(a, full_matrices=full)
        compare(sc, s, **TOL[dtype])
        assert u.shape == uc.shape and vh.shape == vhc.shape
        k = min(shape[-2:])
        compare(a, u[..., :k] @ torch.diag_embed(s) @ vh[..., :k, :], **TOL[dtype])
    compare(torch.linalg.pinv(a), torch.linalg.pinv(ax), **TOL[dtype])


def test_svd_gradients():
    a = make_cpu((2, 5, 3))
    check_grad(torch.linalg.svdvals, a)
    check_grad(torch.linalg.pinv, a)
    check_grad(lambda x: torch.linalg.matrix_norm(x, "nuc"), a)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_ldl(dtype):
    a = make_cpu((3, 4, 4), dtype)
    a = a + a.mT
    ax = to_axon(a)
    compare(torch.linalg.ldl_factor_ex(a), torch.linalg.ldl_factor_ex(ax), **TOL[dtype])
    LD, piv = torch.linalg.ldl_factor(a)
    b = make_cpu((3, 4, 2), dtype)
    compare(torch.linalg.ldl_solve(LD, piv, b), torch.linalg.ldl_solve(*to_axon(LD, piv, b)), **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq(driver, dtype):
    for ashape, bshape in [((6, 3), (6, 2)), ((2, 3, 5), (2, 3, 2)), ((2, 6, 3), (2, 6))]:
        if driver == "gels" and ashape[-2] < ashape[-1]:
            continue  # keep gels to overdetermined systems
        a, b = make_cpu(ashape, dtype), make_cpu(bshape, dtype)
        rc = torch.linalg.lstsq(a, b, driver=driver)
        ra = torch.linalg.lstsq(*to_axon(a, b), driver=driver)
        compare(tuple(rc), tuple(ra), **TOL[dtype])
    check_grad(
        lambda x, y: torch.linalg.lstsq(x, y).solution, make_cpu((5, 3), dtype), make_cpu((5, 2), dtype), dtype=dtype
    )


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_matrix_exp_and_power(dtype):
    for shape in [(4, 4), (3, 5, 5), (1, 1), (0, 2, 2)]:
        a = make_cpu(shape, dtype, low=-3, high=3)
        compare(torch.linalg.matrix_exp(a), torch.linalg.matrix_exp(to_axon(a)), atol=1e-4, rtol=1e-4)
    a = well_conditioned((2, 4, 4), dtype)
    for k in (-3, -1, 0, 2, 5):
        compare(torch.linalg.matrix_power(a, k), torch.linalg.matrix_power(to_axon(a), k), **TOL[dtype])
    check_grad(torch.linalg.matrix_exp, make_cpu((2, 3, 3), dtype, low=-1, high=1), dtype=dtype)


def test_lu_unpack_options():
    a = make_cpu((2, 5, 3))
    LU, piv = torch.linalg.lu_factor(a)
    for data in (True, False):
        for pivots in (True, False):
            compare(
                torch.lu_unpack(LU, piv, data, pivots),
                torch.lu_unpack(*to_axon(LU, piv), data, pivots),
            )
