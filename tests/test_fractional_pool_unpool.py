"""Native fractional max pooling (2-d, 3-d, with indices) and max unpooling (1-d to 3-d),
forward and gradient, against PyTorch's CPU results."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import DEVICE, compare
from nn_helpers import check_fn, floats

pytestmark = pytest.mark.usefixtures("no_fallback")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=str)
def test_fractional_max_pool(dtype):
    c, a = floats((2, 3, 9, 8), dtype, "transposed")
    s = torch.rand(2, 3, 2, dtype=dtype)
    for k, out in [(2, (4, 5)), ((3, 2), (7, 7)), (2, (1, 1))]:
        fn = lambda x, k=k, out=out: F.fractional_max_pool2d(  # noqa: E731
            x, k, output_size=out, _random_samples=s.to(x.device)
        )
        check_fn(fn, [c], [a], dtype=dtype)
        check_fn(lambda x, fn=fn: fn(x[0]), [c], [a], dtype=dtype)
    c3, a3 = floats((2, 2, 6, 7, 5), dtype)
    s3 = torch.rand(2, 2, 3, dtype=dtype)
    fn3 = lambda x: F.fractional_max_pool3d(x, (2, 3, 2), output_size=(3, 4, 2), _random_samples=s3.to(x.device))  # noqa: E731
    check_fn(fn3, [c3], [a3], dtype=dtype)
    r_c = F.fractional_max_pool3d(c3, 2, output_size=(4, 4, 3), _random_samples=s3, return_indices=True)
    r_a = F.fractional_max_pool3d(a3, 2, output_size=(4, 4, 3), _random_samples=s3.to(DEVICE), return_indices=True)
    compare(r_c, r_a)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=str)
def test_max_unpool(dtype):
    x = torch.randn(2, 3, 8, 6).to(dtype)
    y, i = F.max_pool2d(x, 2, return_indices=True)
    check_fn(lambda t: F.max_unpool2d(t, i.to(t.device), 2), [y], [y.to(DEVICE)], dtype=dtype)
    check_fn(
        lambda t: F.max_unpool2d(t, i[0].to(t.device), 2, output_size=(9, 7)), [y[0]], [y[0].to(DEVICE)], dtype=dtype
    )
    y1, i1 = F.max_pool1d(x[:, :, 0], 2, return_indices=True)
    check_fn(lambda t: F.max_unpool1d(t, i1.to(t.device), 2), [y1], [y1.to(DEVICE)], dtype=dtype)
    x3 = torch.randn(1, 2, 4, 6, 4).to(dtype)
    y3, i3 = F.max_pool3d(x3, 2, return_indices=True)
    check_fn(lambda t: F.max_unpool3d(t, i3.to(t.device), 2), [y3], [y3.to(DEVICE)], dtype=dtype)
