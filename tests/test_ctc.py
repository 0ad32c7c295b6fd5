"""Native CTC loss, forward and gradient (2-d and concatenated targets, every reduction,
zero_infinity, impossible alignments, random shapes over reused memory), against PyTorch's CPU
results."""

from __future__ import annotations

import random

import pytest
import torch
import torch.nn.functional as F
from conftest import DEVICE
from nn_helpers import check_fn, floats

pytestmark = pytest.mark.usefixtures("no_fallback")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("targets_2d", [True, False])
def test_ctc_loss(dtype, targets_2d):
    T, N, C = 12, 3, 5
    lc, la = floats((T, N, C), dtype)
    il = [12, 9, 7]
    tl = [4, 0, 3]
    t2 = torch.tensor([[1, 2, 2, 3], [1, 1, 1, 1], [4, 1, 4, 0]])
    tg = t2 if targets_2d else torch.cat([t2[b, : tl[b]] for b in range(N)])
    for reduction in ("none", "mean", "sum"):
        for zero_inf in (False, True):

            def fn(x, r=reduction, z=zero_inf):
                return F.ctc_loss(x.log_softmax(2), tg.to(x.device), il, tl, reduction=r, zero_infinity=z)

            check_fn(fn, [lc], [la], dtype=dtype, atol=1e-4, rtol=1e-4)
    # an impossible alignment (target longer than the input) is infinite, or zero
    il2 = [2, 9, 7]
    for zero_inf in (False, True):
        check_fn(
            lambda x, z=zero_inf: F.ctc_loss(
                x.log_softmax(2), tg.to(x.device), il2, tl, reduction="sum", zero_infinity=z
            ),
            [lc],
            [la],
            grad_of=() if not zero_inf else (0,),
            dtype=dtype,
            atol=1e-4,
            rtol=1e-4,
        )
    assert torch.axon.fallback_ops(reset=True) == {}  # forward and backward both native


def test_ctc_loss_backward_random_shapes_with_reused_memory():
    """CTC gradients over random shapes, lengths and target layouts, with freed NaN-filled device
    blocks around so that any read of memory the kernels did not write shows. (A work-group form
    of the backward kernel gave wrong gradients about once in fifteen runs here under PoCL.)"""
    rng = random.Random(0)
    junk = []
    for trial in range(60):
        junk.append(torch.full((rng.randint(1, 4000),), float("nan"), device=DEVICE))
        if len(junk) > 8:
            junk.pop(rng.randrange(len(junk)))
        g = torch.Generator().manual_seed(trial)
        T, N, C = rng.randint(1, 25), rng.randint(1, 5), rng.randint(2, 10)
        S = rng.randint(0, min(8, T))
        dtype = rng.choice([torch.float32, torch.float64])
        log_probs = torch.randn(T, N, C, generator=g, dtype=dtype).log_softmax(2)
        il = [rng.randint(1, T) for _ in range(N)]
        tl = [rng.randint(0, S) for _ in range(N)]
        if rng.random() < 0.5:
            targets = torch.randint(1, C, (sum(tl),), generator=g)
        else:
            targets = torch.randint(1, C, (N, max(S, 1)), generator=g, dtype=torch.int32)
        reduction, zero_inf = rng.choice(["mean", "sum", "none"]), rng.random() < 0.5
        grads = []
        for device in ("cpu", DEVICE):
            x = log_probs.detach().to(device).requires_grad_()
            loss = F.ctc_loss(x, targets.to(device), il, tl, reduction=reduction, zero_infinity=zero_inf)
            weights = torch.linspace(0.5, 1.5, loss.numel(), dtype=dtype).reshape(loss.shape).to(device)
            (loss * weights).sum().backward()
            grads.append(x.grad.cpu())
        torch.testing.assert_close(grads[1], grads[0], atol=1e-4, rtol=1e-4, equal_nan=True, msg=f"trial {trial}")
