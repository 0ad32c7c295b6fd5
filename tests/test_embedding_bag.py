"""Native embedding_bag (sum, mean, max; offsets, include_last_offset, padding_idx,
per-sample weights, 2-d input) and embedding's max_norm renorm, forward and gradient, against
PyTorch's CPU results."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import DEVICE, compare
from nn_helpers import check_fn, floats

pytestmark = pytest.mark.usefixtures("no_fallback")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(dtype, mode):
    wc, wa = floats((10, 5), dtype)
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 2])
    for itype in (torch.int64, torch.int32):
        for offsets, last in [([0, 4, 4, 7], False), ([0, 3, 3, 10], True)]:
            for pad in (None, 2):
                off = torch.tensor(offsets, dtype=itype)
                i = idx.to(itype)

                def fn(w, i=i, off=off, last=last, pad=pad):
                    return F.embedding_bag(
                        i.to(w.device), w, off.to(w.device), mode=mode, include_last_offset=last, padding_idx=pad
                    )

                check_fn(fn, [wc], [wa], dtype=dtype)
    if mode == "sum":
        pc, pa = floats((10,), dtype)
        off = torch.tensor([0, 4, 4, 7])

        def fn(w, p):
            return F.embedding_bag(idx.to(w.device), w, off.to(w.device), mode="sum", per_sample_weights=p)

        check_fn(fn, [wc, pc], [wa, pa], grad_of=(0, 1), dtype=dtype)
        # 2-d input (one bag per row). Not scale_grad_by_freq: the CPU's counts for it are not
        # the indices' frequencies (axon's are, as documented).
        i2 = torch.tensor([[1, 2, 2], [4, 2, 9]])
        check_fn(lambda w: F.embedding_bag(i2.to(w.device), w), [wc], [wa], dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_embedding_max_norm(dtype):
    w = torch.randn(10, 4).to(dtype)
    idx = torch.tensor([[1, 2, 2], [9, 0, 1]])
    for p in (2.0, 1.0):
        wc, wa = w.clone(), w.to(DEVICE)
        out_c = F.embedding(idx, wc, max_norm=1.0, norm_type=p)
        out_a = F.embedding(idx.to(DEVICE), wa, max_norm=1.0, norm_type=p)
        compare(out_c, out_a)
        compare(wc, wa)


def test_empty_inputs():
    """Empty bags give zero results and gradients, as on the CPU."""
    wc, wa = floats((6, 3))
    empty = torch.tensor([], dtype=torch.int64)
    off = torch.tensor([0, 0])
    for mode in ("sum", "mean", "max"):
        check_fn(lambda w, m=mode: F.embedding_bag(empty.to(w.device), w, off.to(w.device), mode=m), [wc], [wa])
