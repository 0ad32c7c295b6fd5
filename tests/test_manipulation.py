"""Native data movement and indexing (issue 3): cat / stack / split, flip, roll, repeat,
tril / triu, diag, gather / scatter (all reductions), index_select / index_add / index_copy /
index_fill, advanced indexing and index_put_, masked_select, nonzero, searchsorted /
bucketize, repeat_interleave, one_hot, against PyTorch's CPU results."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F
from conftest import DEVICE, compare, make_cpu, make_pair, to_axon

pytestmark = pytest.mark.usefixtures("no_fallback")

DTYPES = [torch.float32, torch.float16, torch.int64, torch.int32, torch.uint8, torch.bool]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cat_stack_split(dtype):
    a_cpu, a_ax = make_pair((3, 4), dtype, "transposed")
    b_cpu, b_ax = make_pair((2, 4), dtype, "sliced")
    compare(torch.cat([a_cpu, b_cpu, a_cpu]), torch.cat([a_ax, b_ax, a_ax]))
    compare(torch.cat([a_cpu, a_cpu], 1), torch.cat([a_ax, a_ax], 1))
    compare(
        torch.cat([a_cpu, torch.empty(0, dtype=dtype)]), torch.cat([a_ax, torch.empty(0, dtype=dtype, device=DEVICE)])
    )
    compare(torch.stack([a_cpu, a_cpu], 2), torch.stack([a_ax, a_ax], 2))
    compare(torch.split(a_cpu, 2, 1), torch.split(a_ax, 2, 1))
    compare(torch.unbind(a_cpu, 1), torch.unbind(a_ax, 1))
    compare([c.contiguous() for c in torch.chunk(a_cpu, 2)], [c.contiguous() for c in torch.chunk(a_ax, 2)])


def test_cat_promotion_and_out():
    a_cpu, a_ax = make_pair((2, 3))
    i_cpu, i_ax = make_pair((1, 3), torch.int64)
    compare(torch.cat([a_cpu, i_cpu]), torch.cat([a_ax, i_ax]))
    out = torch.empty(0, device=DEVICE)
    torch.cat([a_ax, a_ax], 0, out=out)
    compare(torch.cat([a_cpu, a_cpu]), out)
    compare(torch.cat([a_cpu[:0], a_cpu[:0]]), torch.cat([a_ax[:0], a_ax[:0]]))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_flip_roll_repeat_tri(dtype):
    cpu, ax = make_pair((3, 4, 5), dtype, "sliced")
    compare(torch.flip(cpu, [0, 2]), torch.flip(ax, [0, 2]))
    compare(torch.flip(cpu, [-1]), torch.flip(ax, [-1]))
    compare(torch.roll(cpu, 2, 1), torch.roll(ax, 2, 1))
    compare(torch.roll(cpu, (-1, 7), (0, 2)), torch.roll(ax, (-1, 7), (0, 2)))
    compare(torch.roll(cpu, 5), torch.roll(ax, 5))
    compare(cpu.repeat(2, 1, 1, 2), ax.repeat(2, 1, 1, 2))
    compare(torch.tril(cpu), torch.tril(ax))
    compare(torch.triu(cpu, 2), torch.triu(ax, 2))
    compare(torch.tril(cpu, -1), torch.tril(ax, -1))
    c, a = cpu.clone(), ax.clone()
    c.triu_(-1)
    a.triu_(-1)
    compare(c, a)


def test_diag_and_zero_size():
    cpu, ax = make_pair((4, 5), layout="transposed")
    compare(torch.diag(cpu), torch.diag(ax))
    compare(torch.diag(cpu[0], 1), torch.diag(ax[0], 1))
    compare(torch.diagonal(cpu, -1).contiguous(), torch.diagonal(ax, -1).contiguous())
    compare(torch.diag_embed(cpu), torch.diag_embed(ax))
    z_cpu, z_ax = make_pair((0, 3))
    compare(torch.flip(z_cpu, [0]), torch.flip(z_ax, [0]))
    compare(torch.roll(z_cpu, 1, 1), torch.roll(z_ax, 1, 1))
    compare(torch.tril(z_cpu), torch.tril(z_ax))
    compare(torch.cat([z_cpu, z_cpu]), torch.cat([z_ax, z_ax]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bool], ids=str)
def test_gather_index_select(dtype):
    cpu, ax = make_pair((4, 6), dtype, "transposed")
    idx = torch.randint(0, 6, (4, 5))
    compare(torch.gather(cpu, 1, idx), torch.gather(ax, 1, to_axon(idx)))
    idx0 = torch.randint(0, 4, (3, 6))
    compare(torch.gather(cpu, 0, idx0), torch.gather(ax, 0, to_axon(idx0)))
    compare(torch.take_along_dim(cpu, idx, 1), torch.take_along_dim(ax, to_axon(idx), 1))
    sel = torch.tensor([3, 0, 3, 1])
    compare(torch.index_select(cpu, 1, sel), torch.index_select(ax, 1, to_axon(sel)))
    compare(torch.index_select(cpu, 0, sel[:2].int()), torch.index_select(ax, 0, to_axon(sel[:2].int())))
    compare(torch.index_select(cpu, 0, sel[:0]), torch.index_select(ax, 0, to_axon(sel[:0])))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64], ids=str)
def test_scatter(dtype):
    cpu, ax = make_pair((4, 6), dtype)
    src_cpu, src_ax = make_pair((4, 5), dtype, "transposed")
    perm = torch.stack([torch.randperm(6)[:5] for _ in range(4)])
    compare(cpu.scatter(1, perm, src_cpu), ax.scatter(1, to_axon(perm), src_ax))
    compare(cpu.scatter(1, perm, 2), ax.scatter(1, to_axon(perm), 2))
    idx = torch.randint(0, 6, (4, 5))  # duplicates
    compare(cpu.scatter_add(1, idx, src_cpu), ax.scatter_add(1, to_axon(idx), src_ax))
    idx0 = torch.randint(0, 4, (3, 5))
    compare(cpu.scatter_add(0, idx0, src_cpu[:3]), ax.scatter_add(0, to_axon(idx0), src_ax[:3]))
    with warnings.catch_warnings():  # the reduce argument is deprecated
        warnings.simplefilter("ignore")
        c = cpu.scatter(1, idx, src_cpu, reduce="multiply")
        a = ax.scatter(1, to_axon(idx), src_ax, reduce="multiply")
    compare(c, a)
    for reduce in ["sum", "prod", "mean", "amax", "amin"]:
        for include_self in [True, False]:
            c = cpu.scatter_reduce(1, idx, src_cpu, reduce, include_self=include_self)
            a = ax.scatter_reduce(1, to_axon(idx), src_ax, reduce, include_self=include_self)
            compare(c, a)


def test_index_add_copy_fill():
    cpu, ax = make_pair((4, 6), layout="sliced")
    src_cpu, src_ax = make_pair((4, 3))
    idx = torch.tensor([5, 0, 5])
    compare(cpu.index_add(1, idx, src_cpu, alpha=2), ax.index_add(1, to_axon(idx), src_ax, alpha=2))
    compare(cpu.index_copy(1, idx[:2], src_cpu[:, :2]), ax.index_copy(1, to_axon(idx[:2]), src_ax[:, :2]))
    compare(cpu.index_fill(0, torch.tensor([1, -1]), 7.5), ax.index_fill(0, to_axon(torch.tensor([1, -1])), 7.5))
    i_cpu, i_ax = make_pair((5,), torch.int64)
    compare(
        i_cpu.index_add(0, torch.tensor([0, 0, 4]), torch.tensor([1, 2, 3])),
        i_ax.index_add(0, to_axon(torch.tensor([0, 0, 4])), to_axon(torch.tensor([1, 2, 3]))),
    )


def test_advanced_indexing():
    cpu, ax = make_pair((3, 4, 5), layout="transposed")
    i = torch.tensor([2, 0, 2, 1])
    j = torch.tensor([[0, 3], [2, 1]])
    for fn in [
        lambda t, i, j: t[i],
        lambda t, i, j: t[:, i],
        lambda t, i, j: t[..., i],
        lambda t, i, j: t[i[:2], :, j[0]],  # non-adjacent: result dims go first
        lambda t, i, j: t[1:, j],
        lambda t, i, j: t[i[:2, None], i[None, :3]],
        lambda t, i, j: t[-1, j, 1:3],
    ]:
        compare(fn(cpu, i, j), fn(ax, to_axon(i), to_axon(j)))
    # CPU index tensors, negative indices, masks
    compare(cpu[[0, -1]], ax[[0, -1]])
    mask = cpu > 0
    compare(cpu[mask], ax[to_axon(mask)])
    compare(cpu[mask[:, :, 0]], ax[to_axon(mask[:, :, 0])])
    compare(cpu[:, mask[0]], ax[:, to_axon(mask[0])])
    with pytest.raises(IndexError):
        ax[to_axon(torch.tensor([3]))]


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
def test_index_put(dtype):
    cpu, ax = make_pair((5, 4), dtype)
    idx = torch.tensor([4, 0, 4, 2])
    v_cpu, v_ax = make_pair((4, 4), dtype, "transposed")
    compare(cpu.index_put((idx[[0, 1, 3]],), v_cpu[:3]), ax.index_put((to_axon(idx[[0, 1, 3]]),), v_ax[:3]))
    compare(cpu.index_put((idx,), v_cpu, accumulate=True), ax.index_put((to_axon(idx),), v_ax, accumulate=True))
    compare(
        cpu.index_put((idx, idx[:1] - 1), v_cpu[0], accumulate=True),
        ax.index_put((to_axon(idx), to_axon(idx[:1] - 1)), v_ax[0], accumulate=True),
    )
    c, a = cpu.clone(), ax.clone()
    m = make_cpu((5, 4), torch.bool)
    c[m] = c[0, 0]
    a[to_axon(m)] = a[0, 0]
    compare(c, a)
    c[:, [1, 3]] = c[:, :2]
    a[:, [1, 3]] = a[:, :2]
    compare(c, a)


def test_index_put_backward_and_gather_grad():
    x_cpu, x_ax = make_pair((5, 3))
    idx = torch.tensor([1, 1, 4, 0])
    xc, xa = x_cpu.clone().requires_grad_(), x_ax.clone().requires_grad_()
    g = torch.randn(4, 3)
    xc[idx].backward(g)
    xa[to_axon(idx)].backward(to_axon(g))
    compare(xc.grad, xa.grad)
    xc.grad = xa.grad = None
    gi = torch.randint(0, 3, (5, 2))
    torch.gather(xc, 1, gi).sum().backward()
    torch.gather(xa, 1, to_axon(gi)).sum().backward()
    compare(xc.grad, xa.grad)
    xc.grad = xa.grad = None
    torch.cat([xc, xc * 2], 1).flip(0).roll(1, 1).tril().sum().backward()
    torch.cat([xa, xa * 2], 1).flip(0).roll(1, 1).tril().sum().backward()
    compare(xc.grad, xa.grad)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bool], ids=str)
def test_nonzero_masked_select(dtype):
    cpu, ax = make_pair((3, 5), dtype, "transposed")
    compare(torch.nonzero(cpu), torch.nonzero(ax))
    compare(torch.nonzero(cpu, as_tuple=True), torch.nonzero(ax, as_tuple=True))
    compare(torch.argwhere(cpu), torch.argwhere(ax))
    mask = make_cpu((3, 5), torch.bool)
    compare(torch.masked_select(cpu, mask), torch.masked_select(ax, to_axon(mask)))
    compare(torch.masked_select(cpu, mask[0]), torch.masked_select(ax, to_axon(mask[0])))
    z = torch.zeros(0, 3, dtype=dtype)
    compare(torch.nonzero(z), torch.nonzero(to_axon(z)))
    compare(torch.nonzero(torch.zeros(4, dtype=dtype)), torch.nonzero(to_axon(torch.zeros(4, dtype=dtype))))


def test_searchsorted_bucketize_repeat_interleave_one_hot():
    bnd = torch.tensor([-1.0, 0.0, 0.0, 0.5, 2.0])
    cpu, ax = make_pair((3, 4), low=-2, high=3, layout="transposed")
    compare(torch.bucketize(cpu, bnd), torch.bucketize(ax, to_axon(bnd)))
    compare(
        torch.bucketize(cpu, bnd, right=True, out_int32=True),
        torch.bucketize(ax, to_axon(bnd), right=True, out_int32=True),
    )
    rows = torch.sort(torch.randn(3, 6), 1)[0]
    compare(torch.searchsorted(rows, cpu), torch.searchsorted(to_axon(rows), ax))
    compare(torch.searchsorted(bnd, cpu, side="right"), torch.searchsorted(to_axon(bnd), ax, side="right"))
    unsorted = torch.tensor([2.0, -1.0, 0.5, 0.0])
    sorter = torch.argsort(unsorted)
    compare(
        torch.searchsorted(unsorted, cpu, sorter=sorter),
        torch.searchsorted(to_axon(unsorted), ax, sorter=to_axon(sorter)),
    )
    reps = torch.tensor([1, 0, 3, 2])
    compare(torch.repeat_interleave(reps), torch.repeat_interleave(to_axon(reps)))
    compare(torch.repeat_interleave(cpu, 2, 0), torch.repeat_interleave(ax, 2, 0))
    compare(torch.repeat_interleave(cpu, reps, 1), torch.repeat_interleave(ax, to_axon(reps), 1))
    labels = torch.tensor([[0, 3], [2, 1]])
    compare(F.one_hot(labels, 5), F.one_hot(to_axon(labels), 5))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=str)
def test_histc(dtype):
    cpu, ax = make_pair((5, 7), dtype, "transposed", low=-2, high=2)
    compare(torch.histc(cpu, 6, -1, 1), torch.histc(ax, 6, -1, 1))
    compare(torch.histc(cpu, 4), torch.histc(ax, 4))  # the data's own range
    edge = torch.tensor([0.0, 1.0, 1.0, 0.5, 2.0, float("nan")], dtype=dtype)
    compare(torch.histc(edge, 2, 0, 1), torch.histc(to_axon(edge), 2, 0, 1))
    compare(torch.histc(torch.zeros(0, dtype=dtype), 3), torch.histc(torch.zeros(0, dtype=dtype, device=DEVICE), 3))


def _integer_histc(values: torch.Tensor, bins: int, lo: int, hi: int) -> torch.Tensor:
    """CUDA's integer histc: bin (v - lo) * bins // (hi - lo) in 64-bit integers, last bin closed."""
    v = values.reshape(-1).long()
    v = v[(v >= lo) & (v <= hi)]
    pos = ((v - lo) * bins // (hi - lo)).clamp(max=bins - 1)
    return torch.bincount(pos, minlength=bins).to(values.dtype)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.int16], ids=str)
def test_histc_integer(dtype):
    """Integer input as CUDA takes it (the CPU refuses it): the mixture-of-experts routing path."""
    g = torch.Generator().manual_seed(3)
    ids = torch.randint(0, 8, (6, 5), generator=g).to(dtype)
    ax = to_axon(ids)
    for bins, lo, hi in [(8, 0, 7), (3, 0, 7), (5, 2, 6), (4, 0, 0)]:
        got = torch.histc(ax, bins, lo, hi)
        assert got.dtype == dtype and got.device.type == "axon"
        if lo == hi:  # the data's own range
            lo, hi = int(ids.min()), int(ids.max())
        compare(_integer_histc(ids, bins, lo, hi), got)
    with pytest.raises(RuntimeError, match="Bool"):
        torch.histc(to_axon(torch.ones(3, dtype=torch.bool)), 2, 0, 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=str)
def test_masked_scatter(dtype):
    cpu, ax = make_pair((4, 5), dtype, "transposed")
    src_cpu, src_ax = make_pair((30,), dtype)
    mask = make_cpu((4, 5), torch.bool)
    compare(cpu.masked_scatter(mask, src_cpu), ax.masked_scatter(to_axon(mask), src_ax))
    compare(cpu.masked_scatter(mask[0], src_cpu), ax.masked_scatter(to_axon(mask[0]), src_ax))
    c, a = cpu.clone(), ax.clone()
    c.masked_scatter_(mask, src_cpu.reshape(5, 6))
    a.masked_scatter_(to_axon(mask), src_ax.reshape(5, 6))
    compare(c, a)
