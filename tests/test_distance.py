"""Native pairwise distances (pdist, cdist) for every kind of p, forward and gradient, against
PyTorch's CPU results."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import check_fn, floats

pytestmark = pytest.mark.usefixtures("no_fallback")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")])
def test_pdist_cdist(dtype, p):
    c, a = floats((6, 4), dtype)
    check_fn(lambda x: F.pdist(x, p), [c], [a], dtype=dtype, atol=1e-4, rtol=1e-4)
    x1c, x1a = floats((2, 5, 3), dtype, "transposed")
    x2c, x2a = floats((1, 4, 3), dtype)
    check_fn(
        lambda x, y: torch.cdist(x, y, p), [x1c, x2c], [x1a, x2a], grad_of=(0, 1), dtype=dtype, atol=1e-4, rtol=1e-4
    )
    check_fn(lambda x: F.pdist(x, p), [c[:1]], [a[:1]], dtype=dtype)


def test_empty_inputs():
    """Empty operands give empty results and gradients, as on the CPU."""
    wc, wa = floats((6, 3))
    check_fn(lambda x: torch.cdist(x, x[:0]), [wc], [wa])
    check_fn(lambda x: F.pdist(x[:, :0]), [wc], [wa])
