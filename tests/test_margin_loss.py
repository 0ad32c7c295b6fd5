"""Native multi-class margin losses (multi_margin_loss, multilabel_margin_loss), every
reduction, forward and gradient, against PyTorch's CPU results."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import check_fn, floats

pytestmark = pytest.mark.usefixtures("no_fallback")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_margin_losses(dtype):
    c, a = floats((5, 7), dtype, "transposed")
    t = torch.tensor([0, 6, 3, 3, 1])
    w = torch.rand(7, dtype=dtype)
    # targets up to the first -1; duplicates count twice, as on the CPU
    tm = torch.tensor(
        [[3, 0, -1, 1, 1, 1, 1], [0, 1, 2, 3, 4, 5, 6], [-1] * 7, [6, 6, -1, 0, 0, 0, 0], [2, 5, -1, 0, 0, 0, 0]]
    )
    for reduction in ("none", "mean", "sum"):
        for p, margin, weight in [(1, 1.0, None), (2, 0.5, w)]:

            def fn(x, p=p, margin=margin, weight=weight, reduction=reduction):
                wt = None if weight is None else weight.to(x.device)
                return F.multi_margin_loss(x, t.to(x.device), p, margin, wt, reduction=reduction)

            check_fn(fn, [c], [a], dtype=dtype)

        def single(x, r=reduction):
            """One sample without a batch dim (a 0-d target)."""
            return F.multi_margin_loss(x[1], t[1].to(x.device), reduction=r)

        def multilabel(x, r=reduction):
            return F.multilabel_margin_loss(x, tm.to(x.device), reduction=r)

        def multilabel_single(x, r=reduction):
            return F.multilabel_margin_loss(x[1], tm[4].to(x.device), reduction=r)

        for f in (single, multilabel, multilabel_single):
            check_fn(f, [c], [a], dtype=dtype)
