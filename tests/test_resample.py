"""Native bicubic and antialiased bilinear interpolation (the runtime's resample family),
forward and gradient, against PyTorch's CPU results. Nearest and linear resampling and padding
are in test_conv_pool.py."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import DEVICE
from nn_helpers import FLOATS, check_fn, floats

pytestmark = pytest.mark.usefixtures("no_fallback")


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("mode", ["bicubic", "aa"])
def test_bicubic_and_antialias(dtype, mode):
    if mode == "aa" and dtype in (torch.float16, torch.bfloat16):
        # as on the CPU, which has no antialiased kernel for them
        with pytest.raises(NotImplementedError, match="not implemented for"):
            F.interpolate(
                torch.ones(1, 1, 4, 4, dtype=dtype, device=DEVICE), size=(2, 2), mode="bilinear", antialias=True
            )
        return
    c, a = floats((2, 3, 5, 7), dtype, "transposed")
    for size, scale in [((9, 4), None), ((3, 11), None), (None, (1.7, 0.6)), ((5, 7), None)]:
        for align in (False, True):
            kw = dict(size=size, scale_factor=scale, align_corners=align)
            if mode == "bicubic":
                fn = lambda x, kw=kw: F.interpolate(x, mode="bicubic", **kw)  # noqa: E731
            else:
                fn = lambda x, kw=kw: F.interpolate(x, mode="bilinear", antialias=True, **kw)  # noqa: E731
            check_fn(fn, [c], [a], dtype=dtype, **({"atol": 1e-4, "rtol": 1e-4} if dtype == torch.float32 else {}))


def test_empty_inputs():
    """Empty batches give empty results and gradients, as on the CPU."""
    c, a = floats((0, 2, 4, 4))
    check_fn(lambda x: F.interpolate(x, size=(3, 5), mode="bicubic"), [c], [a])
    check_fn(lambda x: F.interpolate(x, size=(3, 2), mode="bilinear", antialias=True), [c], [a])
