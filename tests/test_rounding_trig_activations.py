"""Native rounding (floor, ceil, round with decimals, trunc, frac, sgn), remainders and
divisions (fmod, remainder, floor_divide), inverse and hyperbolic trigonometry, atan2 / hypot /
logaddexp / copysign / xlogy, and the elu family, hardsigmoid / hardswish / mish / logsigmoid
activations with their gradients, against PyTorch's CPU results."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from conftest import DEVICE, FLOAT_DTYPES, compare, make_pair, to_axon

pytestmark = pytest.mark.usefixtures("no_fallback")

SHAPE = (4, 6)

# name -> (function, low, high)
UNARY = {
    "floor": (torch.floor, -5, 5),
    "ceil": (torch.ceil, -5, 5),
    "round": (torch.round, -5, 5),
    "round_decimals": (lambda x: torch.round(x, decimals=2), -5, 5),
    "round_neg_decimals": (lambda x: torch.round(x * 100, decimals=-1), -5, 5),
    "trunc": (torch.trunc, -5, 5),
    "frac": (torch.frac, -5, 5),
    "sgn": (torch.sgn, -5, 5),
    "asin": (torch.asin, -0.95, 0.95),
    "acos": (torch.acos, -0.95, 0.95),
    "atan": (torch.atan, -5, 5),
    "sinh": (torch.sinh, -3, 3),
    "cosh": (torch.cosh, -3, 3),
    "asinh": (torch.asinh, -5, 5),
    "acosh": (torch.acosh, 1.05, 5),
    "atanh": (torch.atanh, -0.9, 0.9),
    "elu": (F.elu, -4, 4),
    "selu": (F.selu, -4, 4),
    "celu": (lambda x: F.celu(x, 0.5), -4, 4),
    "hardsigmoid": (F.hardsigmoid, -5, 5),
    "hardswish": (F.hardswish, -5, 5),
    "mish": (F.mish, -5, 5),
    "logsigmoid": (F.logsigmoid, -8, 8),
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name, dtype):
    fn, low, high = UNARY[name]
    cpu, ax = make_pair(SHAPE, dtype, "transposed", low=low, high=high)
    compare(fn(cpu), fn(ax))


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "trunc", "sgn"])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8], ids=str)
def test_rounding_integers(name, dtype):
    cpu, ax = make_pair(SHAPE, dtype)
    compare(UNARY[name][0](cpu), UNARY[name][0](ax))


BINARY = {
    "fmod": torch.fmod,
    "remainder": torch.remainder,
    "floor_divide": torch.floor_divide,
    "atan2": torch.atan2,
    "hypot": torch.hypot,
    "logaddexp": torch.logaddexp,
    "copysign": torch.copysign,
    "xlogy": lambda a, b: torch.xlogy(a, b.abs()),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=str)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name, dtype):
    a_cpu, a_ax = make_pair(SHAPE, dtype, "sliced", low=-6, high=6)
    b_cpu, b_ax = make_pair(SHAPE[1:], dtype, low=-3, high=3, exclude_zero=True)
    compare(BINARY[name](a_cpu, b_cpu), BINARY[name](a_ax, b_ax))


@pytest.mark.parametrize("name", ["fmod", "remainder", "floor_divide"])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32], ids=str)
def test_binary_integers(name, dtype):
    a_cpu, a_ax = make_pair(SHAPE, dtype, low=-20, high=20)
    b_cpu, b_ax = make_pair(SHAPE, dtype, low=-5, high=6, exclude_zero=True)
    compare(BINARY[name](a_cpu, b_cpu), BINARY[name](a_ax, b_ax))


def test_scalar_forms():
    cpu, ax = make_pair(SHAPE, low=-5, high=5)
    compare(torch.remainder(cpu, 1.5), torch.remainder(ax, 1.5))
    compare(torch.remainder(3.0, cpu), torch.remainder(3.0, ax))
    compare(torch.fmod(cpu, -1.5), torch.fmod(ax, -1.5))
    compare(torch.floor_divide(cpu, 2), torch.floor_divide(ax, 2))
    compare(torch.copysign(cpu, -1.0), torch.copysign(ax, -1.0))
    compare(torch.xlogy(2.0, cpu.abs()), torch.xlogy(2.0, ax.abs()))
    compare(torch.xlogy(cpu, 3.0), torch.xlogy(ax, 3.0))
    c, a = cpu.clone(), ax.clone()
    c.floor_divide_(torch.full(SHAPE, 2.0))
    a.floor_divide_(torch.full(SHAPE, 2.0, device=DEVICE))
    compare(c, a)
    ci, ai = make_pair(SHAPE, torch.int64, low=1, high=9)
    compare(torch.remainder(-7, ci), torch.remainder(-7, ai))


def test_predicates_and_nan_to_num():
    vals = torch.tensor([0.0, -0.0, 1.5, -2.0, math.inf, -math.inf, math.nan])
    ax = to_axon(vals)
    for fn in (torch.isnan, torch.isinf, torch.isfinite, torch.isposinf, torch.isneginf, torch.signbit):
        compare(fn(vals), fn(ax))
    compare(torch.nan_to_num(vals), torch.nan_to_num(ax))
    compare(
        torch.nan_to_num(vals, nan=1.0, posinf=2.0, neginf=-3.0), torch.nan_to_num(ax, nan=1.0, posinf=2.0, neginf=-3.0)
    )
    half = vals.half()
    compare(torch.nan_to_num(half), torch.nan_to_num(to_axon(half)))
    ints = torch.tensor([-3, 0, 4])
    for fn in (torch.isnan, torch.isinf, torch.isfinite, torch.signbit, torch.nan_to_num):
        compare(fn(ints), fn(to_axon(ints)))
    compare(torch.logaddexp(vals, vals), torch.logaddexp(ax, ax))


def test_zero_size_and_out():
    cpu, ax = make_pair((0, 3))
    for fn in (torch.floor, torch.asin, F.hardswish, F.mish):
        compare(fn(cpu), fn(ax))
    cpu, ax = make_pair(SHAPE, low=-3, high=3)
    out = torch.empty(0, device=DEVICE)
    torch.atan2(ax, ax + 1, out=out)
    compare(torch.atan2(cpu, cpu + 1), out)
    c, a = cpu.clone(), ax.clone()
    F.hardswish(c, inplace=True)
    F.hardswish(a, inplace=True)
    compare(c, a)
    c, a = cpu.clone(), ax.clone()
    c.round_(decimals=1)
    a.round_(decimals=1)
    compare(c, a)


GRADS = {
    "elu": F.elu,
    "elu_inplace": lambda x: F.elu(x * 1.0, inplace=True),
    "selu": F.selu,
    "hardsigmoid": F.hardsigmoid,
    "hardswish": F.hardswish,
    "mish": F.mish,
    "logsigmoid": F.logsigmoid,
    "asin": lambda x: torch.asin(x / 5),
    "atan2": lambda x: torch.atan2(x, x.detach() + 5),
    "hypot": lambda x: torch.hypot(x, x.detach() + 1),
    "logaddexp": lambda x: torch.logaddexp(x, 2 * x),
    "xlogy": lambda x: torch.xlogy(x, x.abs() + 1),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name", list(GRADS))
def test_gradients(name, dtype):
    fn = GRADS[name]
    cpu, ax = make_pair(SHAPE, dtype, low=-4, high=4)
    x_cpu, x_ax = cpu.clone().requires_grad_(), ax.clone().requires_grad_()
    g = torch.randn(SHAPE, dtype=dtype)
    fn(x_cpu).backward(g)
    fn(x_ax).backward(to_axon(g))
    compare(x_cpu.grad, x_ax.grad)
