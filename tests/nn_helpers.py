"""Forward-and-gradient comparison against PyTorch's CPU shared by the nn operator tests
(test_conv_unfold, test_resample, test_grid_sample, test_embedding_bag, test_margin_loss,
test_ctc, test_distance, test_fractional_pool_unpool)."""

from __future__ import annotations

import torch
from conftest import DEVICE, compare, make_pair, tol

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def grad_tol(dtype):
    """Gradients sum many terms: looser than a single rounding for the narrow types."""
    return {torch.float16: {"atol": 2e-2, "rtol": 2e-2}, torch.bfloat16: {"atol": 1e-1, "rtol": 5e-2}}.get(
        dtype, tol(dtype)
    )


def check_fn(fn, inputs_cpu, inputs_ax, grad_of=(0,), dtype=torch.float32, **kw):
    """fn on both devices; compares the result and the gradients of inputs `grad_of`."""
    cpu_leaves = [t.detach().clone().requires_grad_(i in grad_of) for i, t in enumerate(inputs_cpu)]
    ax_leaves = [t.detach().clone().requires_grad_(i in grad_of) for i, t in enumerate(inputs_ax)]
    out_c, out_a = fn(*cpu_leaves), fn(*ax_leaves)
    compare(out_c, out_a, **(kw or tol(dtype)))
    if not grad_of or out_c.numel() == 0:
        return
    g = torch.randn(out_c.shape, dtype=out_c.dtype)
    out_c.backward(g)
    out_a.backward(g.to(DEVICE))
    for i in grad_of:
        compare(cpu_leaves[i].grad, ax_leaves[i].grad, **grad_tol(dtype))


def floats(shape, dtype=torch.float32, layout="contiguous", low=-2, high=2):
    return make_pair(shape, dtype, layout, low=low, high=high)
