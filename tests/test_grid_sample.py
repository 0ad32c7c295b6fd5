"""Native grid_sample, 2-d and 3-d, every mode and padding, forward and gradients of the input
and the grid, against PyTorch's CPU results."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import check_fn, floats

pytestmark = pytest.mark.usefixtures("no_fallback")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_2d(dtype, mode, padding):
    c, a = floats((2, 3, 5, 6), dtype, "transposed")
    gc, ga = floats((2, 4, 7, 2), dtype, low=-1.2, high=1.2)
    for align in (False, True):
        fn = lambda x, g, al=align: F.grid_sample(x, g, mode, padding, al)  # noqa: E731
        grads = (0,) if mode == "nearest" else (0, 1)
        check_fn(fn, [c, gc], [a, ga], grad_of=grads, dtype=dtype, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_3d(mode, padding):
    c, a = floats((2, 2, 3, 4, 5))
    gc, ga = floats((2, 3, 2, 4, 3), low=-1.2, high=1.2)
    for align in (False, True):
        fn = lambda x, g, al=align: F.grid_sample(x, g, mode, padding, al)  # noqa: E731
        grads = (0,) if mode == "nearest" else (0, 1)
        check_fn(fn, [c, gc], [a, ga], grad_of=grads, atol=1e-4, rtol=1e-4)


def test_empty_inputs():
    """An empty batch gives empty results and gradients, as on the CPU."""
    c, a = floats((0, 2, 4, 4))
    gc, ga = floats((0, 3, 3, 2))
    check_fn(lambda x, g: F.grid_sample(x, g, align_corners=False), [c, gc], [a, ga], grad_of=(0, 1))
