"""Sparse COO tensors on axon against the CPU: creation, to_dense, coalesce, arithmetic,
torch.sparse.mm / addmm with autograd, and a clear error for what is not supported."""

import pytest
import torch


def random_coo(shape, nnz, dense_dims=(), seed=0, duplicates=True):
    g = torch.Generator().manual_seed(seed)
    indices = torch.stack([torch.randint(0, n, (nnz,), generator=g) for n in shape])
    if duplicates:  # repeat a few entries so coalescing has sums to do
        indices[:, -3:] = indices[:, :3]
    values = torch.randn(nnz, *dense_dims, generator=g)
    return torch.sparse_coo_tensor(indices, values, (*shape, *dense_dims))


def on_axon(t):
    out = t.to("axon")
    assert out.device.type == "axon" and out.layout == t.layout
    return out


@pytest.mark.parametrize("dense_dims", [(), (3,)], ids=["scalar-values", "vector-values"])
def test_create_to_dense_and_coalesce(dense_dims):
    cpu = random_coo((5, 7), 12, dense_dims)
    made = torch.sparse_coo_tensor(cpu._indices().to("axon"), cpu._values().to("axon"), cpu.shape)
    assert made.device.type == "axon" and made.is_sparse and made._nnz() == 12
    torch.testing.assert_close(made.to_dense().cpu(), cpu.to_dense())
    coalesced, expected = made.coalesce(), cpu.coalesce()
    assert coalesced.is_coalesced() and coalesced._nnz() == expected._nnz()
    assert torch.equal(coalesced.indices().cpu(), expected.indices())
    torch.testing.assert_close(coalesced.values().cpu(), expected.values())
    torch.testing.assert_close(on_axon(cpu).cpu().to_dense(), cpu.to_dense())


def test_dense_to_sparse_round_trip():
    dense = torch.randn(6, 5) * (torch.rand(6, 5) > 0.6)
    sparse = dense.to("axon").to_sparse()
    assert sparse.is_sparse and sparse._nnz() == int((dense != 0).sum())
    torch.testing.assert_close(sparse.to_dense().cpu(), dense)


def test_elementwise_ops_match_cpu():
    a, b = random_coo((4, 6), 9, seed=1), random_coo((4, 6), 7, seed=2)
    d = torch.randn(4, 6)
    aa, ab, ad = on_axon(a), on_axon(b), d.to("axon")
    cases = [
        (a + b, aa + ab),
        (a - 2 * b, aa - 2 * ab),
        (a * 3.0, aa * 3.0),
        (a * b, aa * ab),
        (a / 2, aa / 2),
        (torch.sin(a), torch.sin(aa)),
        (a.abs().sqrt(), aa.abs().sqrt()),
        (-a, -aa),
        (a.t(), aa.t()),
    ]
    for cpu, axon in cases:
        assert axon.is_sparse and axon.device.type == "axon"
        torch.testing.assert_close(axon.to_dense().cpu(), cpu.to_dense())
    torch.testing.assert_close((ad + aa).cpu(), d + a)
    torch.testing.assert_close(torch.sparse.sum(aa).cpu(), torch.sparse.sum(a))
    torch.testing.assert_close(torch.sparse.sum(aa, dim=1).to_dense().cpu(), torch.sparse.sum(a, dim=1).to_dense())


def test_sparse_mm_and_addmm():
    s = random_coo((8, 5), 14, seed=3)
    d, bias = torch.randn(5, 4), torch.randn(8, 4)
    sa, da, ba = on_axon(s), d.to("axon"), bias.to("axon")
    torch.testing.assert_close(torch.sparse.mm(sa, da).cpu(), torch.sparse.mm(s, d))
    torch.testing.assert_close(torch.mm(sa, da).cpu(), torch.mm(s, d))
    torch.testing.assert_close(
        torch.addmm(ba, sa, da, beta=0.5, alpha=2.0).cpu(), torch.addmm(bias, s, d, beta=0.5, alpha=2.0)
    )
    x = torch.randn(3, 8)
    torch.testing.assert_close(torch.mm(x.to("axon"), sa).cpu(), torch.mm(x, s))


def test_sparse_mm_autograd():
    s = random_coo((6, 5), 10, seed=4).coalesce()
    d = torch.randn(5, 3)
    grad = torch.randn(6, 3)

    def grads(device):
        sp = s.detach().to(device).requires_grad_()
        de = d.detach().to(device).requires_grad_()
        torch.sparse.mm(sp, de).backward(grad.to(device))
        return sp.grad, de.grad

    (cpu_s, cpu_d), (ax_s, ax_d) = grads("cpu"), grads("axon")
    torch.testing.assert_close(ax_d.cpu(), cpu_d)
    assert ax_s.is_sparse
    torch.testing.assert_close(ax_s.to_dense().cpu(), cpu_s.to_dense())


def test_unsupported_sparse_op_names_itself():
    sa = on_axon(random_coo((4, 4), 5))
    with pytest.raises(NotImplementedError, match="index_select.*not supported for sparse tensors on axon"):
        sa.index_select(0, torch.tensor([0, 1], device="axon"))


def test_csr_matrices_store_and_convert():
    """2-d sparse CSR on axon: moved or built from dense / COO, read back, converted to dense and
    COO; arithmetic on CSR itself raises an error."""
    dense = torch.randn(5, 6) * (torch.rand(5, 6, generator=torch.Generator().manual_seed(1)) > 0.6)
    cpu = dense.to_sparse_csr()
    torch.axon.fallback_ops(reset=True)
    for csr in (cpu.to("axon"), dense.to("axon").to_sparse_csr(), dense.to("axon").to_sparse().to_sparse_csr()):
        assert csr.layout == torch.sparse_csr and csr.device.type == "axon"
        assert torch.equal(csr.crow_indices().cpu(), cpu.crow_indices())
        assert torch.equal(csr.col_indices().cpu(), cpu.col_indices())
        assert torch.equal(csr.to_dense().cpu(), dense)
        assert torch.equal(csr.to_sparse().to_dense().cpu(), dense)
    assert torch.axon.fallback_ops() == {}
    with pytest.raises(RuntimeError, match="(?i)layout|sparse"):
        csr + csr
