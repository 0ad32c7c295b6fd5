"""Native convolution extras against PyTorch's CPU results: unfold / fold (im2col, col2im)
forward and gradient, integer convolution, and float16 / bfloat16 transposed convolution."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import DEVICE, compare
from nn_helpers import FLOATS, check_fn, floats

pytestmark = pytest.mark.usefixtures("no_fallback")


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_unfold_fold(dtype, layout):
    c, a = floats((2, 3, 6, 5), dtype, layout)
    for kw in [dict(kernel_size=2), dict(kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1))]:
        check_fn(lambda x, kw=kw: F.unfold(x, **kw), [c], [a], dtype=dtype)
        cols_c = F.unfold(c, **kw)
        cc, ca = floats(tuple(cols_c.shape), dtype)
        check_fn(lambda x, kw=kw: F.fold(x, (6, 5), **kw), [cc], [ca], dtype=dtype)
    c3, a3 = floats((3, 4, 4), dtype)
    check_fn(lambda x: F.unfold(x, 3, padding=1), [c3], [a3], dtype=dtype)
    check_fn(lambda x: F.unfold(x, 2), [c[:0]], [a[:0]], dtype=dtype)


def test_unfold_errors():
    x = torch.randn(1, 2, 3, 3, device=DEVICE)
    with pytest.raises(RuntimeError, match="sliding blocks"):
        F.unfold(x, 5)
    with pytest.raises(RuntimeError, match="divisible"):
        F.fold(torch.randn(1, 5, 4, device=DEVICE), (3, 3), 2)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool], ids=str)
def test_integer_conv(dtype):
    x = torch.randint(0, 3, (2, 3, 6, 5)).to(dtype)
    w = torch.randint(0, 3, (4, 3, 2, 2)).to(dtype)
    if dtype == torch.bool:
        with pytest.raises(NotImplementedError, match="Bool"):
            F.conv2d(x.to(DEVICE), w.to(DEVICE))
        return
    compare(F.conv2d(x, w, padding=1, stride=(2, 1)), F.conv2d(x.to(DEVICE), w.to(DEVICE), padding=1, stride=(2, 1)))
    compare(F.conv1d(x[:, :, 0], w[:, :, 0]), F.conv1d(x[:, :, 0].to(DEVICE), w[:, :, 0].to(DEVICE)))
    wt = w.transpose(0, 1).contiguous()
    if dtype == torch.int64:
        compare(F.conv_transpose2d(x, wt, stride=2), F.conv_transpose2d(x.to(DEVICE), wt.to(DEVICE), stride=2))
    else:
        with pytest.raises(NotImplementedError, match="not implemented"):
            F.conv_transpose2d(x.to(DEVICE), wt.to(DEVICE))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_conv_transpose_reduced_precision(dtype):
    """float16 / bfloat16 transposed convolution, forward and both gradients, is at least as
    close to the float64 result as the CPU's (which rounds partial sums: on these inputs its
    bfloat16 output is off by 0.053 where Axon's, computed in float and rounded once, is off by
    0.031), and within the dtype's tolerance of the CPU."""
    xc, xa = floats((2, 4, 5, 5), dtype)
    wc, wa = floats((4, 3, 3, 3), dtype)

    def run(x, w):
        x, w = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
        y = F.conv_transpose2d(x, w, stride=2)
        y.backward(torch.ones_like(y))
        return [t.detach().cpu().double() for t in (y, x.grad, w.grad)]

    exact, cpu, axon = run(xc.double(), wc.double()), run(xc, wc), run(xa, wa)
    ulp = 2.0**-7 if dtype == torch.bfloat16 else 2.0**-10  # relative spacing at 1
    for e, c, a in zip(exact, cpu, axon, strict=True):
        scale = e.abs().max().item()
        assert (a - e).abs().max() <= (c - e).abs().max() + ulp * scale
        torch.testing.assert_close(a, c, rtol=2 * ulp, atol=ulp * scale)
