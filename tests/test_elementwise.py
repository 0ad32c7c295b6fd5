"""Native elementwise ops against PyTorch's CPU results: dtypes, layouts, broadcasting, type
promotion, zero-size and 0-dim tensors, in-place and out= forms, and activation gradients."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from conftest import DEVICE, FLOAT_DTYPES, INT_DTYPES, LAYOUTS, compare, make_cpu, make_pair, native, to_axon

pytestmark = pytest.mark.usefixtures("no_fallback")

SHAPE = (5, 7)

# ---- unary floating-point math --------------------------------------------------------------

# name -> (function, low, high): inputs are drawn from [low, high) so results are finite.
UNARY_FLOAT = {
    "exp": (torch.exp, -4, 4),
    "exp2": (torch.exp2, -4, 4),
    "expm1": (torch.expm1, -2, 2),
    "log": (torch.log, 0.05, 10),
    "log2": (torch.log2, 0.05, 10),
    "log10": (torch.log10, 0.05, 10),
    "log1p": (torch.log1p, -0.9, 10),
    "sqrt": (torch.sqrt, 0, 10),
    "rsqrt": (torch.rsqrt, 0.05, 10),
    "reciprocal": (torch.reciprocal, 0.1, 10),
    "sin": (torch.sin, -6, 6),
    "cos": (torch.cos, -6, 6),
    "tan": (torch.tan, -1.2, 1.2),
    "tanh": (torch.tanh, -4, 4),
    "sigmoid": (torch.sigmoid, -8, 8),
    "erf": (torch.erf, -3, 3),
    "neg": (torch.neg, -5, 5),
    "abs": (torch.abs, -5, 5),
    "sign": (torch.sign, -5, 5),
    "relu": (torch.relu, -5, 5),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), -5, 5),
    "gelu": (F.gelu, -5, 5),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), -5, 5),
    "silu": (F.silu, -8, 8),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 1.5), -3, 3),
    "relu6": (F.relu6, -3, 9),
    "softplus": (F.softplus, -5, 5),
    "softplus_beta": (lambda x: F.softplus(x, beta=2.0, threshold=4.0), -5, 5),
    "threshold": (lambda x: F.threshold(x, 0.5, -2.0), -3, 3),
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("name", list(UNARY_FLOAT))
def test_unary_float(name, dtype):
    fn, low, high = UNARY_FLOAT[name]
    cpu, ax = make_pair(SHAPE, dtype, low=low, high=high)
    compare(fn(cpu), fn(ax))


# In-place forms of the unary ops that have one (torch.Tensor.<name>_ or F.<name>(inplace=True)).
UNARY_INPLACE = {
    "leaky_relu": lambda x: F.leaky_relu(x, 0.1, inplace=True),
    "hardtanh": lambda x: F.hardtanh(x, -0.5, 1.5, inplace=True),
    "relu6": lambda x: F.relu6(x, inplace=True),
    "silu": lambda x: F.silu(x, inplace=True),
    "threshold": lambda x: F.threshold(x, 0.5, -2.0, inplace=True),
}


@pytest.mark.parametrize("name", list(UNARY_FLOAT))
def test_unary_variants(name):
    """Zero-size, 0-dim, in-place (also through a transposed view) and out= where PyTorch has them."""
    fn, low, high = UNARY_FLOAT[name]
    for shape in [(0, 3), ()]:
        cpu, ax = make_pair(shape, low=low, high=high)
        out = fn(ax)
        assert out.shape == shape
        compare(fn(cpu), out)
    cpu, ax = make_pair((5, 4), low=low, high=high)
    inplace = UNARY_INPLACE.get(name)
    if inplace is None and hasattr(torch.Tensor, name + "_"):
        inplace = getattr(torch.Tensor, name + "_")
    if inplace is not None:
        c, a = cpu.t().contiguous(), ax.t().contiguous()
        inplace(c.t())
        ptr = a.data_ptr()
        inplace(a.t())
        assert a.data_ptr() == ptr
        compare(c, a)
    torch_fn = getattr(torch, name, None)
    if torch_fn is not None and torch_fn is fn and name != "relu":  # torch.relu has no out=
        out = torch.empty(0, device=DEVICE)
        torch_fn(ax, out=out)
        compare(fn(cpu), out)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", list(UNARY_FLOAT))
def test_unary_layouts(name, layout):
    fn, low, high = UNARY_FLOAT[name]
    cpu, ax = make_pair((4, 6), torch.float32, layout, low=low, high=high)
    compare(fn(cpu), fn(ax))


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "sigmoid", "erf", "tanh", "reciprocal", "rsqrt"])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool], ids=str)
def test_unary_int_to_float(name, dtype):
    """Integer inputs of float-valued ops give the default float dtype."""
    fn, _, _ = UNARY_FLOAT[name]
    cpu, ax = make_pair(SHAPE, dtype, low=1 if dtype != torch.bool else None, high=9)
    out = fn(ax)
    assert out.dtype == torch.float32
    compare(fn(cpu), out)


@pytest.mark.parametrize("name", ["neg", "abs", "sign", "relu"])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8], ids=str)
def test_unary_int(name, dtype):
    fn = UNARY_FLOAT[name][0]
    cpu, ax = make_pair(SHAPE, dtype)
    compare(fn(cpu), fn(ax))


def test_unary_special_values():
    vals = torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, 1e-30, -1e30, 88.0, -100.0])
    ax = to_axon(vals)
    for fn in (torch.exp, torch.sign, torch.abs, torch.tanh, torch.sigmoid, torch.relu, torch.erf, torch.neg):
        compare(fn(vals), fn(ax))
    pos = torch.tensor([0.0, math.inf, 1e-30, 4.0, math.nan])
    for fn in (torch.sqrt, torch.log, torch.rsqrt, torch.reciprocal):
        compare(fn(pos), fn(to_axon(pos)))


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 4, 2)])
def test_unary_zero_size(shape):
    cpu, ax = make_pair(shape)
    for fn in (torch.exp, torch.neg, torch.relu, F.gelu):
        out = fn(ax)
        assert out.shape == shape
        compare(fn(cpu), out)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=str)
def test_unary_zero_dim(dtype):
    cpu, ax = make_pair((), dtype, low=1, high=5)
    for fn in (torch.neg, torch.abs, torch.exp, torch.sqrt, torch.relu):
        out = fn(ax)
        assert out.dim() == 0
        compare(fn(cpu), out)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "tanh", "sigmoid", "neg", "abs", "relu", "erf"])
def test_unary_inplace(name):
    fn, low, high = UNARY_FLOAT[name]
    cpu, ax = make_pair(SHAPE, low=low, high=high)
    method = name + "_"
    expected = getattr(cpu.clone(), method)()
    target = ax.clone()
    result = getattr(target, method)()
    assert result.data_ptr() == target.data_ptr()
    compare(expected, target)


def test_unary_inplace_noncontiguous():
    """In-place ops on a transposed / strided view write through the view only."""
    base_cpu, base_ax = make_pair((6, 8), low=0.1, high=3)
    base_cpu[:, ::2].t().exp_()
    base_ax[:, ::2].t().exp_()
    compare(base_cpu, base_ax)
    base_cpu[1:4].relu_().neg_()
    base_ax[1:4].relu_().neg_()
    compare(base_cpu, base_ax)


@pytest.mark.parametrize("name", ["exp", "sqrt", "neg", "abs", "sigmoid", "tanh", "sign"])
def test_unary_out(name):
    fn, low, high = UNARY_FLOAT[name]
    cpu, ax = make_pair(SHAPE, low=low, high=high)
    out = torch.empty(SHAPE, device=DEVICE)
    result = getattr(torch, name)(ax, out=out)
    assert result is out
    compare(fn(cpu), out)
    # An empty out= tensor is resized; a non-contiguous out= is written through its strides.
    out0 = torch.empty(0, device=DEVICE)
    getattr(torch, name)(ax, out=out0)
    compare(fn(cpu), out0)
    big = torch.zeros(SHAPE[1], SHAPE[0], device=DEVICE)
    getattr(torch, name)(ax, out=big.t())
    compare(fn(cpu), big.t())


def test_unary_out_other_dtype():
    cpu, ax = make_pair(SHAPE, low=0.1, high=4)
    out = torch.empty(SHAPE, dtype=torch.float64, device=DEVICE)
    torch.exp(ax, out=out)
    compare(torch.exp(cpu).double(), out, atol=1e-5, rtol=1e-6)


# ---- binary arithmetic ------------------------------------------------------------------------

BINARY = {
    "add": (torch.add, None),
    "add_alpha": (lambda a, b: torch.add(a, b, alpha=2), None),
    "sub": (torch.sub, None),
    "sub_alpha": (lambda a, b: torch.sub(a, b, alpha=3), None),
    "rsub": (lambda a, b: torch.rsub(a, b), None),
    "mul": (torch.mul, None),
    "div": (torch.div, "nonzero"),
    "div_trunc": (lambda a, b: torch.div(a, b, rounding_mode="trunc"), "nonzero"),
    "div_floor": (lambda a, b: torch.div(a, b, rounding_mode="floor"), "nonzero"),
    "maximum": (torch.maximum, None),
    "minimum": (torch.minimum, None),
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES, ids=str)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_dtypes(name, dtype):
    """Every dtype, integers included (uint8 wraps around on both devices)."""
    fn, cond = BINARY[name]
    a_cpu, a_ax = make_pair(SHAPE, dtype)
    b_cpu, b_ax = make_pair(SHAPE, dtype, exclude_zero=cond == "nonzero", low=1 if dtype == torch.uint8 else None)
    compare(fn(a_cpu, b_cpu), fn(a_ax, b_ax))


@pytest.mark.parametrize("layout_b", LAYOUTS)
@pytest.mark.parametrize("layout_a", LAYOUTS)
@pytest.mark.parametrize("name", ["add_alpha", "mul", "div", "sub"])
def test_binary_layouts(name, layout_a, layout_b):
    fn, cond = BINARY[name]
    a_cpu, a_ax = make_pair((6, 5), torch.float32, layout_a)
    b_cpu, b_ax = make_pair((6, 5), torch.float32, layout_b, exclude_zero=cond == "nonzero")
    compare(fn(a_cpu, b_cpu), fn(a_ax, b_ax))


@pytest.mark.parametrize(
    "shape_a, shape_b",
    [((3, 1, 5), (4, 5)), ((5,), (2, 3, 5)), ((2, 1), (1, 6)), ((1,), (4, 4)), ((4, 1, 3, 1), (2, 1, 5))],
)
@pytest.mark.parametrize("name", ["add_alpha", "sub", "mul", "div", "div_floor", "maximum"])
def test_binary_broadcast(name, shape_a, shape_b):
    fn, cond = BINARY[name]
    a_cpu, a_ax = make_pair(shape_a)
    b_cpu, b_ax = make_pair(shape_b, exclude_zero=cond == "nonzero")
    compare(fn(a_cpu, b_cpu), fn(a_ax, b_ax))
    compare(fn(b_cpu, a_cpu), fn(b_ax, a_ax))


def test_binary_many_dims():
    """Broadcasting with transposed operands in 6 dims (more than coalescing removes)."""
    a_cpu, a_ax = make_pair((2, 3, 1, 4, 2, 3))
    b_cpu, b_ax = make_pair((3, 2, 5, 1, 3, 2))
    b_cpu, b_ax = b_cpu.permute(1, 0, 2, 3, 5, 4), b_ax.permute(1, 0, 2, 3, 5, 4)
    compare(a_cpu * b_cpu + a_cpu, a_ax * b_ax + a_ax)


@pytest.mark.parametrize("shape_a, shape_b", [((0,), (0,)), ((3, 0), (1, 0)), ((0, 4), (4,)), ((2, 0, 3), (2, 1, 3))])
def test_binary_zero_size(shape_a, shape_b):
    a_cpu, a_ax = make_pair(shape_a)
    b_cpu, b_ax = make_pair(shape_b)
    for fn in (torch.add, torch.mul, torch.maximum, torch.eq):
        out = fn(a_ax, b_ax)
        compare(fn(a_cpu, b_cpu), out)


def test_binary_zero_dim():
    a_cpu, a_ax = make_pair(())
    b_cpu, b_ax = make_pair((3, 4))
    for fn in (torch.add, torch.sub, torch.mul, torch.div, torch.maximum):
        compare(fn(a_cpu, b_cpu), fn(a_ax, b_ax))
        compare(fn(b_cpu, a_cpu), fn(b_ax, a_ax))
        compare(fn(a_cpu, a_cpu), fn(a_ax, a_ax))


def test_binary_cpu_scalar_tensor():
    """A 0-dim CPU tensor may be combined with axon tensors (it becomes a kernel argument)."""
    b_cpu, b_ax = make_pair((3, 4))
    s = torch.tensor(2.5)
    compare(b_cpu * s, b_ax * s)
    compare(s - b_cpu, s - b_ax)
    compare(torch.add(b_cpu, torch.tensor(3), alpha=2), torch.add(b_ax, torch.tensor(3), alpha=2))


# ---- division rounding modes --------------------------------------------------------------------


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32], ids=str
)
def test_div_rounding_negative(mode, dtype):
    a = torch.tensor([7, -7, 7, -7, 0, 9, -9, 1, -1, 6, -6], dtype=dtype)
    b = torch.tensor([2, 2, -2, -2, 3, 3, 3, -4, 4, 3, -3], dtype=dtype)
    a_ax, b_ax = to_axon(a, b)
    compare(torch.div(a, b, rounding_mode=mode), torch.div(a_ax, b_ax, rounding_mode=mode))
    compare(torch.div(a, 2, rounding_mode=mode), torch.div(a_ax, 2, rounding_mode=mode))
    compare(torch.div(a, -3, rounding_mode=mode), torch.div(a_ax, -3, rounding_mode=mode))


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_div_rounding_float_values(mode):
    a_cpu, a_ax = make_pair((50,), low=-20, high=20)
    b_cpu, b_ax = make_pair((50,), low=-3, high=3, exclude_zero=True)
    compare(torch.div(a_cpu, b_cpu, rounding_mode=mode), torch.div(a_ax, b_ax, rounding_mode=mode))
    # Division by zero: inf / nan as on the CPU.
    z = torch.tensor([1.0, -1.0, 0.0])
    compare(
        torch.div(z, torch.zeros(3), rounding_mode=mode),
        torch.div(to_axon(z), torch.zeros(3, device=DEVICE), rounding_mode=mode),
    )


def test_floor_divide_values(allow_fallback):
    """aten::floor_divide (Python's //) has no native kernel yet (it runs on the CPU fallback,
    unlike div(rounding_mode="floor")): only its values are checked here."""
    a = torch.tensor([7, -7, 5, -5, 0])
    b = torch.tensor([2, 2, -3, -3, 4])
    a_ax, b_ax = to_axon(a, b)
    compare(torch.floor_divide(a, b), torch.floor_divide(a_ax, b_ax))
    compare(a.float() // 2.5, a_ax.float() // 2.5)


def test_true_divide_int():
    a = torch.tensor([7, -7, 5, -5, 0])
    b = torch.tensor([2, 2, -3, -3, 4])
    a_ax, b_ax = to_axon(a, b)
    out = torch.div(a_ax, b_ax)
    assert out.dtype == torch.float32
    compare(torch.div(a, b), out)
    compare(a / 2, a_ax / 2)


# ---- pow -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_pow_tensor_tensor(dtype):
    a_cpu, a_ax = make_pair(SHAPE, dtype, low=0.1, high=3)
    b_cpu, b_ax = make_pair(SHAPE, dtype, low=-2, high=3)
    compare(torch.pow(a_cpu, b_cpu), torch.pow(a_ax, b_ax))
    # Negative bases with integral exponents.
    n_cpu = torch.tensor([-2.0, -1.5, -3.0, 2.0], dtype=dtype)
    e_cpu = torch.tensor([2.0, 3.0, -1.0, 0.0], dtype=dtype)
    compare(torch.pow(n_cpu, e_cpu), torch.pow(*to_axon(n_cpu, e_cpu)))


@pytest.mark.parametrize("exponent", [2, 3, 0.5, -1, -2.5, 0, 1.0])
def test_pow_tensor_scalar(exponent):
    a_cpu, a_ax = make_pair(SHAPE, low=0.1, high=4)
    compare(torch.pow(a_cpu, exponent), torch.pow(a_ax, exponent))
    compare(a_cpu**exponent, a_ax**exponent)


@pytest.mark.parametrize("base", [2, 2.5, -1.5])
def test_pow_scalar_tensor(base):
    e_cpu = torch.tensor([0.0, 1.0, 2.0, -1.0, 3.0, 0.5 if base > 0 else 4.0])
    e_ax = to_axon(e_cpu)
    out = torch.pow(base, e_ax)
    assert out.dtype == torch.float32
    compare(torch.pow(base, e_cpu), out)
    compare(base**e_cpu, base**e_ax)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8], ids=str)
def test_pow_int(dtype):
    a_cpu, a_ax = make_pair(SHAPE, dtype, low=0 if dtype == torch.uint8 else -4, high=5)
    b_cpu, b_ax = make_pair(SHAPE, dtype, low=0, high=4)
    compare(torch.pow(a_cpu, b_cpu), torch.pow(a_ax, b_ax))
    compare(a_cpu**2, a_ax**2)
    compare(torch.pow(2, b_cpu), torch.pow(2, b_ax))
    # int ** float scalar promotes to float.
    out = a_ax.abs() ** 0.5
    assert out.dtype == torch.float32
    compare(a_cpu.abs() ** 0.5, out)


def test_pow_int_negative_exponent_tensor():
    a = torch.tensor([1, -1, -1, 2, 3, 0])
    b = torch.tensor([-3, -3, -2, -1, 0, 2])
    compare(torch.pow(a, b), torch.pow(*to_axon(a, b)))


# ---- maximum / minimum / clamp ------------------------------------------------------------------


@pytest.mark.parametrize("fn", [torch.maximum, torch.minimum], ids=["maximum", "minimum"])
def test_max_min_nan(fn):
    a = torch.tensor([1.0, math.nan, 3.0, math.nan, -math.inf, 2.0])
    b = torch.tensor([math.nan, 2.0, 1.0, math.nan, 0.0, math.inf])
    compare(fn(a, b), fn(*to_axon(a, b)))


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8],
    ids=str,
)
def test_clamp_scalar(dtype):
    cpu, ax = make_pair((6, 9), dtype, low=0 if dtype == torch.uint8 else -8, high=9)
    compare(torch.clamp(cpu, -2, 5), torch.clamp(ax, -2, 5))
    compare(torch.clamp(cpu, min=3), torch.clamp(ax, min=3))
    compare(torch.clamp(cpu, max=3), torch.clamp(ax, max=3))
    compare(cpu.clamp_min(1), ax.clamp_min(1))
    compare(cpu.clamp_max(1), ax.clamp_max(1))
    # min > max: every element becomes max, as in PyTorch.
    compare(torch.clamp(cpu, 4, 2), torch.clamp(ax, 4, 2))


def test_clamp_float_bounds_nan():
    x = torch.tensor([1.0, 2.0, 3.0, math.nan, -5.0, 7.0])
    ax = to_axon(x)
    compare(torch.clamp(x, -1.5, 2.5), torch.clamp(ax, -1.5, 2.5))
    compare(torch.clamp(x, min=math.nan), torch.clamp(ax, min=math.nan))
    compare(torch.clamp(x, max=math.nan), torch.clamp(ax, max=math.nan))
    # An int tensor clamped by float bounds becomes float.
    i = torch.tensor([-3, 0, 2, 5])
    out = torch.clamp(to_axon(i), -0.5, 2.5)
    assert out.dtype == torch.float32
    compare(torch.clamp(i, -0.5, 2.5), out)


def test_clamp_tensor_bounds():
    x_cpu, x_ax = make_pair((5, 6), low=-4, high=4)
    lo_cpu, lo_ax = make_pair((5, 1), low=-3, high=0)
    hi_cpu, hi_ax = make_pair((6,), low=0, high=3)
    compare(torch.clamp(x_cpu, lo_cpu, hi_cpu), torch.clamp(x_ax, lo_ax, hi_ax))
    compare(torch.clamp(x_cpu, min=lo_cpu), torch.clamp(x_ax, min=lo_ax))
    compare(torch.clamp(x_cpu, max=hi_cpu), torch.clamp(x_ax, max=hi_ax))
    compare(torch.clamp(x_cpu, hi_cpu, lo_cpu), torch.clamp(x_ax, hi_ax, lo_ax))  # min > max
    nan_lo = torch.tensor([math.nan, 0.0, 0.0, 0.0])
    nan_hi = torch.tensor([5.0, math.nan, 5.0, 5.0])
    v = torch.tensor([1.0, 2.0, math.nan, 9.0])
    compare(torch.clamp(v, nan_lo, nan_hi), torch.clamp(*to_axon(v, nan_lo, nan_hi)))
    compare(torch.clamp(v, min=nan_lo), torch.clamp(to_axon(v), min=to_axon(nan_lo)))


def test_clamp_inplace_and_out():
    x_cpu, x_ax = make_pair((4, 5), low=-4, high=4)
    x_cpu.t().clamp_(-1, 1)
    x_ax.t().clamp_(-1, 1)
    compare(x_cpu, x_ax)
    out = torch.empty(4, 5, device=DEVICE)
    torch.clamp(x_ax * 3, min=-2, out=out)
    compare(torch.clamp(x_cpu * 3, min=-2), out)


# ---- comparisons and logic ----------------------------------------------------------------------

COMPARISONS = [torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES + [torch.bool], ids=str)
@pytest.mark.parametrize("fn", COMPARISONS, ids=lambda f: f.__name__)
def test_compare_tensor(fn, dtype):
    a_cpu, a_ax = make_pair((6, 5), dtype, low=0, high=4)
    b_cpu, b_ax = make_pair((5,), dtype, low=0, high=4)
    out = fn(a_ax, b_ax)
    assert out.dtype == torch.bool
    compare(fn(a_cpu, b_cpu), out)


@pytest.mark.parametrize("fn", COMPARISONS, ids=lambda f: f.__name__)
def test_compare_scalar_and_mixed(fn):
    a_cpu, a_ax = make_pair((4, 6), torch.int64, low=0, high=4)
    compare(fn(a_cpu, 2), fn(a_ax, 2))
    compare(fn(a_cpu, 1.5), fn(a_ax, 1.5))  # int tensor vs float scalar compares as float
    f_cpu, f_ax = make_pair((4, 6), low=0, high=4)
    compare(fn(f_cpu, a_cpu), fn(f_ax, a_ax))
    t_cpu, t_ax = make_pair((4, 6), layout="transposed", low=0, high=4)
    compare(fn(t_cpu, f_cpu), fn(t_ax, f_ax))
    nan = torch.tensor([math.nan, 1.0, math.nan])
    compare(fn(nan, torch.tensor([math.nan, 1.0, 0.0])), fn(to_axon(nan), to_axon(torch.tensor([math.nan, 1.0, 0.0]))))
    compare(fn(nan, math.nan), fn(to_axon(nan), math.nan))
    # Python operators and out=.
    out = torch.empty(4, 6, dtype=torch.bool, device=DEVICE)
    fn(f_ax, 2.0, out=out)
    compare(fn(f_cpu, 2.0), out)


def test_compare_operators_and_inplace():
    a_cpu, a_ax = make_pair((3, 4))
    b_cpu, b_ax = make_pair((3, 4))
    compare(a_cpu < b_cpu, a_ax < b_ax)
    compare(a_cpu >= 0, a_ax >= 0)
    compare(a_cpu == a_cpu, a_ax == a_ax)
    compare(a_cpu != b_cpu, a_ax != b_ax)
    # In-place comparison keeps the float dtype.
    compare(a_cpu.clone().lt_(b_cpu), a_ax.clone().lt_(b_ax))
    out = torch.empty(3, 4, device=DEVICE)
    torch.gt(a_ax, b_ax, out=out)
    compare(torch.gt(a_cpu, b_cpu).float(), out)


LOGICAL = [torch.logical_and, torch.logical_or, torch.logical_xor]


@pytest.mark.parametrize("dtype", [torch.bool, torch.float32, torch.int64, torch.uint8], ids=str)
@pytest.mark.parametrize("fn", LOGICAL, ids=lambda f: f.__name__)
def test_logical(fn, dtype):
    a_cpu, a_ax = make_pair((4, 5), dtype, low=0, high=3)
    b_cpu, b_ax = make_pair((5,), dtype, low=0, high=3)
    compare(fn(a_cpu, b_cpu), fn(a_ax, b_ax))
    compare(fn(a_cpu.t(), b_cpu[:4]), fn(a_ax.t(), b_ax[:4]))
    compare(torch.logical_not(a_cpu), torch.logical_not(a_ax))
    compare(fn(a_cpu, b_cpu.float()), fn(a_ax, b_ax.float()))


def test_logical_not_out_and_inplace():
    a_cpu, a_ax = make_pair((4, 5), low=-1, high=1)
    a_cpu[0, :2] = 0
    a_ax[0, :2] = 0
    out = torch.empty(4, 5, device=DEVICE)
    torch.logical_not(a_ax, out=out)
    compare(torch.logical_not(a_cpu).float(), out)
    compare(a_cpu.clone().logical_not_(), a_ax.clone().logical_not_())
    compare(a_cpu.clone().logical_and_(a_cpu > 0), a_ax.clone().logical_and_(a_ax > 0))


BITWISE = [torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor]


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool], ids=str)
@pytest.mark.parametrize("fn", BITWISE, ids=lambda f: f.__name__)
def test_bitwise(fn, dtype):
    low, high = (None, None) if dtype == torch.bool else (0 if dtype == torch.uint8 else -100, 100)
    a_cpu, a_ax = make_pair((4, 6), dtype, low=low, high=high)
    b_cpu, b_ax = make_pair((4, 6), dtype, "transposed", low=low, high=high)
    compare(fn(a_cpu, b_cpu), fn(a_ax, b_ax))
    compare(torch.bitwise_not(a_cpu), torch.bitwise_not(a_ax))
    compare(fn(a_cpu, b_cpu[:1]), fn(a_ax, b_ax[:1]))
    c_cpu, c_ax = a_cpu.clone(), a_ax.clone()
    getattr(c_cpu, fn.__name__ + "_")(b_cpu)
    getattr(c_ax, fn.__name__ + "_")(b_ax)
    compare(c_cpu, c_ax)


def test_bitwise_operators_and_scalars():
    a = torch.tensor([0, 1, 2, 7, -8, 255, -1])
    ax = to_axon(a)
    compare(a & 6, ax & 6)
    compare(a | 8, ax | 8)
    compare(a ^ 5, ax ^ 5)
    compare(~a, ~ax)
    m = torch.tensor([True, False, True])
    n = torch.tensor([True, True, False])
    compare(m & n, to_axon(m) & to_axon(n))
    compare(m ^ n, to_axon(m) ^ to_axon(n))
    compare(~m, ~to_axon(m))
    # int32 with int64 promotes to int64.
    i32 = torch.tensor([5, 6, 7], dtype=torch.int32)
    compare(i32 & a[:3], to_axon(i32) & ax[:3])


# ---- selection -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8, torch.bool],
    ids=str,
)
def test_where(dtype):
    c_cpu, c_ax = make_pair((4, 1, 6), torch.bool)
    a_cpu, a_ax = make_pair((5, 6), dtype)
    b_cpu, b_ax = make_pair((4, 5, 1), dtype)
    compare(torch.where(c_cpu, a_cpu, b_cpu), torch.where(c_ax, a_ax, b_ax))


def test_where_mixed_and_scalars():
    c_cpu, c_ax = make_pair((5, 6), torch.bool, "transposed")
    a_cpu, a_ax = make_pair((5, 6), torch.float32, "sliced")
    i_cpu, i_ax = make_pair((5, 6), torch.int64)
    out = torch.where(c_ax, a_ax, i_ax)
    assert out.dtype == torch.float32
    compare(torch.where(c_cpu, a_cpu, i_cpu), out)
    compare(torch.where(c_cpu, a_cpu, 0.0), torch.where(c_ax, a_ax, 0.0))
    compare(torch.where(c_cpu, 1.5, a_cpu), torch.where(c_ax, 1.5, a_ax))
    compare(torch.where(c_cpu, i_cpu, 7), torch.where(c_ax, i_ax, 7))
    compare(a_cpu.where(c_cpu, -a_cpu), a_ax.where(c_ax, -a_ax))
    out = torch.empty(5, 6, device=DEVICE)
    torch.where(c_ax, a_ax, a_ax * 2, out=out)
    compare(torch.where(c_cpu, a_cpu, a_cpu * 2), out)
    z_cpu, z_ax = make_pair((0, 6), torch.bool)
    compare(torch.where(z_cpu, 1.0, 0.0), torch.where(z_ax, 1.0, 0.0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8, torch.bool], ids=str)
def test_masked_fill(dtype):
    x_cpu, x_ax = make_pair((4, 6), dtype)
    m_cpu, m_ax = make_pair((6,), torch.bool)
    value = True if dtype == torch.bool else 3
    compare(x_cpu.masked_fill(m_cpu, value), x_ax.masked_fill(m_ax, value))
    compare(x_cpu.clone().masked_fill_(m_cpu, value), x_ax.clone().masked_fill_(m_ax, value))
    v = torch.tensor(value, dtype=dtype)
    compare(x_cpu.masked_fill(m_cpu, v), x_ax.masked_fill(m_ax, v))
    compare(x_cpu.masked_fill(m_cpu, to_axon(v)), x_ax.masked_fill(m_ax, to_axon(v)))


def test_masked_fill_float_values():
    x_cpu, x_ax = make_pair((5, 4), layout="transposed")
    m_cpu = x_cpu > 0
    m_ax = x_ax > 0
    compare(x_cpu.masked_fill(m_cpu, -math.inf), x_ax.masked_fill(m_ax, -math.inf))
    compare(x_cpu.masked_fill(~m_cpu, math.nan), x_ax.masked_fill(~m_ax, math.nan))
    y_cpu, y_ax = x_cpu.clone(), x_ax.clone()
    y_cpu.t().masked_fill_(m_cpu.t(), 0.5)
    y_ax.t().masked_fill_(m_ax.t(), 0.5)
    compare(y_cpu, y_ax)


# ---- lerp, addcmul, addcdiv ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_lerp(dtype):
    a_cpu, a_ax = make_pair((4, 5), dtype)
    b_cpu, b_ax = make_pair((5,), dtype)
    w_cpu, w_ax = make_pair((4, 1), dtype, low=-0.5, high=1.5)
    for w in (0.25, 0.75, -1.0, 2.0):
        compare(torch.lerp(a_cpu, b_cpu, w), torch.lerp(a_ax, b_ax, w))
    compare(torch.lerp(a_cpu, b_cpu, w_cpu), torch.lerp(a_ax, b_ax, w_ax))
    compare(a_cpu.clone().lerp_(b_cpu, 0.3), a_ax.clone().lerp_(b_ax, 0.3))
    out = torch.empty(4, 5, dtype=dtype, device=DEVICE)
    torch.lerp(a_ax, b_ax, w_ax, out=out)
    compare(torch.lerp(a_cpu, b_cpu, w_cpu), out)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.int64], ids=str)
def test_addcmul(dtype):
    s_cpu, s_ax = make_pair((4, 5), dtype)
    a_cpu, a_ax = make_pair((4, 5), dtype, "transposed")
    b_cpu, b_ax = make_pair((5,), dtype)
    value = 2 if dtype == torch.int64 else 0.5
    compare(torch.addcmul(s_cpu, a_cpu, b_cpu, value=value), torch.addcmul(s_ax, a_ax, b_ax, value=value))
    compare(s_cpu.clone().addcmul_(a_cpu, b_cpu), s_ax.clone().addcmul_(a_ax, b_ax))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_addcdiv(dtype):
    s_cpu, s_ax = make_pair((4, 5), dtype)
    a_cpu, a_ax = make_pair((4, 5), dtype, "sliced")
    b_cpu, b_ax = make_pair((4, 1), dtype, low=0.5, high=3)
    compare(torch.addcdiv(s_cpu, a_cpu, b_cpu, value=-1.5), torch.addcdiv(s_ax, a_ax, b_ax, value=-1.5))
    compare(s_cpu.clone().addcdiv_(a_cpu, b_cpu), s_ax.clone().addcdiv_(a_ax, b_ax))
    out = torch.empty(4, 5, dtype=dtype, device=DEVICE)
    torch.addcdiv(s_ax, a_ax, b_ax, value=0.1, out=out)
    compare(torch.addcdiv(s_cpu, a_cpu, b_cpu, value=0.1), out)


# ---- type promotion --------------------------------------------------------------------------------

PROMOTION_CASES = [
    (torch.int64, torch.float32),
    (torch.int32, torch.int64),
    (torch.float16, torch.float32),
    (torch.bfloat16, torch.float32),
    (torch.float32, torch.float64),
    (torch.uint8, torch.int32),
    (torch.bool, torch.int64),
    (torch.bool, torch.float32),
    (torch.uint8, torch.float16),
    (torch.float16, torch.bfloat16),
]


@pytest.mark.parametrize("da, db", PROMOTION_CASES, ids=lambda d: str(d).replace("torch.", ""))
@pytest.mark.parametrize(
    "fn", [torch.add, torch.sub, torch.mul, torch.div, torch.maximum, torch.lt], ids=lambda f: f.__name__
)
def test_promotion(fn, da, db):
    if fn is torch.sub and torch.bool in (da, db):
        pytest.skip("PyTorch forbids subtracting bool tensors")
    a_cpu, a_ax = make_pair((3, 4), da, low=1 if da == torch.uint8 else None)
    b_cpu, b_ax = make_pair((4,), db, low=1, high=5)
    expected = fn(a_cpu, b_cpu)
    out = fn(a_ax, b_ax)
    assert out.dtype == expected.dtype
    compare(expected, out)


def test_promotion_python_scalars():
    i_cpu, i_ax = make_pair((3, 4), torch.int64)
    f_cpu, f_ax = make_pair((3, 4), torch.float16)
    b_cpu, b_ax = make_pair((3, 4), torch.bool)
    u_cpu, u_ax = make_pair((3, 4), torch.uint8)
    cases = [
        (lambda t: t * 2.5, i_cpu, i_ax),  # int tensor * python float -> float32
        (lambda t: t + 3, i_cpu, i_ax),
        (lambda t: t * 2.5, f_cpu, f_ax),  # stays float16
        (lambda t: t + 1, b_cpu, b_ax),  # bool + int -> int64
        (lambda t: t * 1.5, b_cpu, b_ax),
        (lambda t: t + 300, u_cpu, u_ax),  # wraps in uint8, as on the CPU
        (lambda t: t - 1.5, u_cpu, u_ax),
        (lambda t: 7 - t, i_cpu, i_ax),
        (lambda t: 1 / (t.abs() + 1), i_cpu, i_ax),
        (lambda t: t + torch.tensor(1.5, dtype=torch.float64), f_cpu, f_ax),  # 0-dim does not widen
        (lambda t: t + torch.tensor(1.5, dtype=torch.float64), i_cpu, i_ax),
    ]
    for fn, c, a in cases:
        expected = fn(c)
        out = fn(a)
        assert out.dtype == expected.dtype
        compare(expected, out)
    # 0-dim axon tensors behave as 0-dim CPU tensors do.
    d_cpu = torch.tensor(2.0, dtype=torch.float64)
    compare(f_cpu * d_cpu, f_ax * to_axon(d_cpu))
    compare(i_cpu * d_cpu, i_ax * to_axon(d_cpu))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_reduced_float_scalar_semantics(dtype):
    """float16 / bfloat16 with a Python float: bit-exact with the CPU, which rounds the scalar to
    the tensor's dtype for add / sub / comparisons but keeps it a float for mul / div."""
    x = (torch.rand(5000) * 4 - 2).to(dtype)
    ax = to_axon(x)
    s = 0.1001
    cases = {
        "add": lambda t: t + s * 3,
        "sub": lambda t: t - s * 3,
        "rsub": lambda t: s * 3 - t,
        "mul": lambda t: t * s,
        "mul_big": lambda t: t * 1e5,  # 1e5 is inf as float16: must not be rounded first
        "div": lambda t: t / s,
        "div_floor": lambda t: torch.div(t, s, rounding_mode="floor"),
        "eq": lambda t: t == s * 3,
        "lt": lambda t: t < s * 3,
        "ge": lambda t: t >= s,
        "clamp": lambda t: torch.clamp(t, s * 3, s * 5),
        "where": lambda t: torch.where(t > 0.25, t, s),
        "addcmul": lambda t: torch.addcmul(t, t, t, value=s),
        "lerp": lambda t: torch.lerp(t, t * 3, s * 3),
    }
    for name, fn in cases.items():
        expected, got = fn(x), fn(ax)
        assert got.dtype == expected.dtype, name
        torch.testing.assert_close(got.cpu(), expected, rtol=0, atol=0, equal_nan=True, msg=name)
    # A float16 value equal to the rounded scalar compares equal, as on the CPU.
    h = torch.tensor([0.1, 0.2], dtype=dtype)
    compare(h == 0.1, to_axon(h) == 0.1)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int32], ids=str)
def test_int_scalar_wraps_to_dtype(dtype):
    """Integer scalars are converted to the tensor's dtype first (300 as uint8 is 44)."""
    info = torch.iinfo(dtype)
    x = torch.tensor([0, 1, 44, info.max, info.min, 5], dtype=dtype)
    ax = to_axon(x)
    big = info.max + 257
    for fn in (
        lambda t: t == big,
        lambda t: t < big,
        lambda t: t > -2,
        lambda t: t + big,
        lambda t: t * big,
        lambda t: torch.clamp(t, -2, 5),
        lambda t: torch.where(t > 3, t, 7),
    ):
        compare(fn(x), fn(ax))


def test_tanh_saturates():
    x = torch.tensor([5.0, 9.0, 9.5, 10.0, 20.0, 100.0, math.inf, -math.inf, -30.0, math.nan])
    compare(torch.tanh(x), torch.tanh(to_axon(x)), atol=0, rtol=1.2e-7)
    assert torch.tanh(to_axon(x))[3:8].abs().eq(1).all().item()
    compare(torch.tanh(x.double()), torch.tanh(to_axon(x.double())), atol=0, rtol=1e-15)
    compare(F.gelu(x[:7], approximate="tanh"), F.gelu(to_axon(x[:7]), approximate="tanh"))


def test_sign_bool():
    b = torch.tensor([True, False, True])
    compare(torch.sign(b), torch.sign(to_axon(b)))


# ---- in-place and out= forms of binary ops --------------------------------------------------------


def test_binary_inplace():
    a_cpu, a_ax = make_pair((4, 6))
    b_cpu, b_ax = make_pair((6,))
    for method, arg in [
        ("add_", b_cpu),
        ("sub_", b_cpu),
        ("mul_", b_cpu),
        ("div_", b_cpu),
        ("add_", 2.0),
        ("mul_", 3),
        ("sub_", -1),
        ("div_", 4.0),
        ("pow_", 2),
    ]:
        arg_ax = to_axon(arg) if isinstance(arg, torch.Tensor) else arg
        c, a = a_cpu.clone(), a_ax.clone()
        ptr = a.data_ptr()
        getattr(c, method)(arg)
        getattr(a, method)(arg_ax)
        assert a.data_ptr() == ptr
        compare(c, a)
    c, a = a_cpu.clone(), a_ax.clone()
    c.add_(b_cpu, alpha=-2)
    a.add_(b_ax, alpha=-2)
    compare(c, a)
    c.sub_(b_cpu, alpha=0.5)
    a.sub_(b_ax, alpha=0.5)
    compare(c, a)


def test_binary_inplace_views_and_promotion():
    base_cpu, base_ax = make_pair((6, 8))
    b_cpu, b_ax = make_pair((4, 3))
    base_cpu[1:5, ::3].add_(b_cpu)
    base_ax[1:5, ::3].add_(b_ax)
    compare(base_cpu, base_ax)
    base_cpu.t()[2:5].mul_(b_cpu[0, :1])
    base_ax.t()[2:5].mul_(b_ax[0, :1])
    compare(base_cpu, base_ax)
    # float32 += float64 / int64 tensor keeps float32.
    f_cpu, f_ax = make_pair((3, 4))
    d_cpu, d_ax = make_pair((3, 4), torch.float64)
    i_cpu, i_ax = make_pair((4,), torch.int64)
    f_cpu.add_(d_cpu).mul_(i_cpu)
    f_ax.add_(d_ax).mul_(i_ax)
    assert f_ax.dtype == torch.float32
    compare(f_cpu, f_ax)
    # An int tensor cannot take a float result in place, on either device.
    with pytest.raises(RuntimeError):
        i_cpu.clone().add_(1.5)
    with pytest.raises(RuntimeError):
        i_ax.clone().add_(1.5)
    # Self-aliasing: x.mul_(x).
    s_cpu, s_ax = make_pair((5,))
    compare(s_cpu.mul_(s_cpu), s_ax.mul_(s_ax))


@pytest.mark.parametrize(
    "fn",
    [torch.add, torch.sub, torch.mul, torch.div, torch.maximum, torch.minimum, torch.pow],
    ids=lambda f: f.__name__,
)
def test_binary_out(fn):
    a_cpu, a_ax = make_pair((4, 5), low=0.5, high=2)
    b_cpu, b_ax = make_pair((5,), low=0.5, high=2)
    expected = fn(a_cpu, b_cpu)
    out = torch.empty(4, 5, device=DEVICE)
    assert fn(a_ax, b_ax, out=out) is out
    compare(expected, out)
    out0 = torch.empty(0, device=DEVICE)  # resized
    fn(a_ax, b_ax, out=out0)
    compare(expected, out0)
    big = torch.zeros(5, 4, device=DEVICE)
    fn(a_ax, b_ax, out=big.t())  # non-contiguous out
    compare(expected, big.t())
    out64 = torch.empty(4, 5, dtype=torch.float64, device=DEVICE)  # wider out dtype
    fn(a_ax, b_ax, out=out64)
    compare(expected.double(), out64, atol=1e-6, rtol=1e-6)


def test_int_out_of_float_ops():
    a = torch.tensor([7, -7, 5])
    b = torch.tensor([2, 2, -3])
    out = torch.empty(3, dtype=torch.int64, device=DEVICE)
    torch.div(to_axon(a), to_axon(b), rounding_mode="floor", out=out)
    compare(torch.div(a, b, rounding_mode="floor"), out)
    with pytest.raises(RuntimeError):
        torch.div(to_axon(a), to_axon(b), out=out)  # float result into int out


# ---- activation gradients ----------------------------------------------------------------------------

ACTIVATIONS = {
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.05),
    "hardtanh": lambda x: F.hardtanh(x, -1.0, 2.0),
    "relu6": F.relu6,
    "softplus": F.softplus,
    "softplus_beta": lambda x: F.softplus(x, beta=3.0, threshold=5.0),
    "threshold": lambda x: F.threshold(x, 0.3, 0.0),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_backward(name, dtype):
    fn = ACTIVATIONS[name]
    x_cpu = make_cpu((6, 9), dtype, low=-4, high=4)
    g_cpu = make_cpu((6, 9), dtype)
    x_ax = to_axon(x_cpu).requires_grad_()
    x_cpu.requires_grad_()
    y_cpu, y_ax = fn(x_cpu), fn(x_ax)
    compare(y_cpu.detach(), y_ax.detach())
    y_cpu.backward(g_cpu)
    y_ax.backward(to_axon(g_cpu))
    assert x_ax.grad.device.type == DEVICE
    compare(x_cpu.grad, x_ax.grad)


@pytest.mark.parametrize("name", ["relu", "gelu", "silu", "tanh", "sigmoid", "leaky_relu"])
def test_activation_backward_noncontiguous(name):
    """Gradients through a transposed input and a broadcast upstream gradient."""
    fn = ACTIVATIONS[name]
    x_cpu = make_cpu((9, 6), low=-4, high=4).requires_grad_()
    x_ax = to_axon(x_cpu.detach()).requires_grad_()
    w_cpu = make_cpu((6,))
    (fn(x_cpu.t()) * w_cpu[:, None]).sum().backward()
    (fn(x_ax.t()) * to_axon(w_cpu)[:, None]).sum().backward()
    compare(x_cpu.grad, x_ax.grad)


def test_activation_inplace():
    x_cpu, x_ax = make_pair((4, 5), low=-3, high=3)
    compare(F.relu(x_cpu.clone(), inplace=True), F.relu(x_ax.clone(), inplace=True))
    compare(F.hardtanh(x_cpu.clone(), -1, 1, inplace=True), F.hardtanh(x_ax.clone(), -1, 1, inplace=True))
    compare(F.leaky_relu(x_cpu.clone(), 0.2, inplace=True), F.leaky_relu(x_ax.clone(), 0.2, inplace=True))
    compare(F.silu(x_cpu.clone(), inplace=True), F.silu(x_ax.clone(), inplace=True))
    compare(F.gelu(x_cpu.t()), F.gelu(x_ax.t()))


# ---- the fallback check itself -------------------------------------------------------------------------


# An op with only a CPU kernel: on axon it can only run through the counted CPU fallback.
_TEST_LIB = torch.library.Library("axon_native_tests", "DEF")
_TEST_LIB.define("cpu_only_twice(Tensor x) -> Tensor")
_TEST_LIB.impl("cpu_only_twice", lambda x: x * 2, "CPU")


def test_fallback_counter_sees_non_native_ops(allow_fallback):
    """The no-fallback check is meaningful: an op without an axon kernel is counted (and still
    gives the right result on axon)."""
    x = torch.ones(4, device=DEVICE)
    with pytest.raises(AssertionError, match="fell back"):
        with native():
            y = torch.ops.axon_native_tests.cpu_only_twice(x)
    assert y.device.type == DEVICE
    compare(torch.full((4,), 2.0), y)


# ---- every op through the same variants -------------------------------------------------------------------
#
# name -> (function of the input tensors, input dtypes, in-place method or None, input value range).
# Variants: broadcasting with non-contiguous operands, zero-size, 0-dim, out= and in-place.

F32, I64, BOOL = torch.float32, torch.int64, torch.bool
OPS = {
    "add": (lambda a, b: torch.add(a, b, alpha=2), (F32, F32), "add_", None),
    "sub": (lambda a, b: torch.sub(a, b, alpha=0.5), (F32, F32), "sub_", None),
    "mul": (torch.mul, (F32, F32), "mul_", None),
    "mul_int": (torch.mul, (I64, I64), "mul_", None),
    "div": (torch.div, (F32, F32), "div_", (0.5, 3)),
    "div_trunc": (lambda a, b: torch.div(a, b, rounding_mode="trunc"), (F32, F32), None, (0.5, 3)),
    "div_floor_int": (lambda a, b: torch.div(a, b, rounding_mode="floor"), (I64, I64), None, (1, 9)),
    "pow": (torch.pow, (F32, F32), "pow_", (0.5, 2)),
    "pow_int": (torch.pow, (I64, I64), "pow_", (0, 4)),
    "maximum": (torch.maximum, (F32, F32), None, None),
    "minimum": (torch.minimum, (I64, I64), None, None),
    "eq": (torch.eq, (I64, I64), "eq_", (0, 3)),
    "lt": (torch.lt, (F32, F32), "lt_", None),
    "ge": (torch.ge, (F32, I64), None, None),
    "logical_and": (torch.logical_and, (BOOL, BOOL), "logical_and_", None),
    "logical_xor": (torch.logical_xor, (F32, I64), None, (0, 2)),
    "bitwise_or": (torch.bitwise_or, (I64, I64), "bitwise_or_", None),
    "bitwise_xor": (torch.bitwise_xor, (BOOL, BOOL), "bitwise_xor_", None),
    "clamp_t": (torch.clamp, (F32, F32, F32), "clamp_", None),
    "clamp_min_t": (lambda a, b: torch.clamp(a, min=b), (F32, F32), None, None),
    "where": (lambda c, a, b: torch.where(c, a, b), (BOOL, F32, F32), None, None),
    "lerp_t": (torch.lerp, (F32, F32, F32), "lerp_", (0, 1)),
    "addcmul": (lambda s, a, b: torch.addcmul(s, a, b, value=-0.5), (F32, F32, F32), "addcmul_", None),
    "addcdiv": (lambda s, a, b: torch.addcdiv(s, a, b, value=2), (F32, F32, F32), "addcdiv_", (0.5, 3)),
    "hardtanh_backward": (lambda g, x: torch.ops.aten.hardtanh_backward(g, x, -0.5, 0.5), (F32, F32), None, None),
    "gelu_backward": (lambda g, x: torch.ops.aten.gelu_backward(g, x), (F32, F32), None, None),
    "silu_backward": (lambda g, x: torch.ops.aten.silu_backward(g, x), (F32, F32), None, None),
    "threshold_backward": (lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.1), (F32, F32), None, None),
}


def _inputs(name, shapes, layouts=None):
    fn, dtypes, _, rng = OPS[name]
    low, high = rng if rng else (None, None)
    pairs = [
        make_pair(shape, dt, (layouts or ["contiguous"] * 3)[i], low=low, high=high)
        for i, (shape, dt) in enumerate(zip(shapes, dtypes, strict=False))
    ]
    return fn, [p[0] for p in pairs], [p[1] for p in pairs]


@pytest.mark.parametrize("name", list(OPS))
def test_op_broadcast_noncontiguous(name):
    n = len(OPS[name][1])
    shapes = [(4, 6), (6,), (4, 1)][:n]
    fn, cpu, ax = _inputs(name, shapes, ["transposed", "sliced", "expanded"])
    compare(fn(*cpu), fn(*ax))
    shapes = [(3, 1, 6), (4, 6), (1, 4, 1)][:n]
    fn, cpu, ax = _inputs(name, shapes, ["expanded", "transposed", "contiguous"])
    compare(fn(*cpu), fn(*ax))


@pytest.mark.parametrize("name", list(OPS))
def test_op_zero_size_and_zero_dim(name):
    n = len(OPS[name][1])
    if name.endswith("_backward"):  # gradients come with the input's own shape
        fn, cpu, ax = _inputs(name, [(0, 3)] * n)
        compare(fn(*cpu), fn(*ax))
        fn, cpu, ax = _inputs(name, [()] * n)
        compare(fn(*cpu), fn(*ax))
        return
    fn, cpu, ax = _inputs(name, [(0, 3), (3,), (1, 3)][:n])
    compare(fn(*cpu), fn(*ax))
    fn, cpu, ax = _inputs(name, [(), (), ()][:n])
    compare(fn(*cpu), fn(*ax))
    fn, cpu, ax = _inputs(name, [(), (2, 3), ()][:n])
    compare(fn(*cpu), fn(*ax))


@pytest.mark.parametrize("name", [k for k, v in OPS.items() if v[2]])
def test_op_inplace(name):
    _, _, method, _ = OPS[name]
    n = len(OPS[name][1])
    _, cpu, ax = _inputs(name, [(4, 6), (6,), (4, 1)][:n])
    c, a = cpu[0].clone(), ax[0].clone()
    getattr(c, method)(*cpu[1:])
    ptr = a.data_ptr()
    getattr(a, method)(*ax[1:])
    assert a.data_ptr() == ptr
    compare(c, a)
    # Through a transposed view of the destination.
    base_c, base_a = cpu[0].t().contiguous(), ax[0].t().contiguous()
    getattr(base_c.t(), method)(*cpu[1:])
    getattr(base_a.t(), method)(*ax[1:])
    compare(base_c, base_a)


OUT_FORMS = {
    "add": lambda a, b, out: torch.add(a, b, alpha=2, out=out),
    "sub": lambda a, b, out: torch.sub(a, b, alpha=0.5, out=out),
    "mul": lambda a, b, out: torch.mul(a, b, out=out),
    "mul_int": lambda a, b, out: torch.mul(a, b, out=out),
    "div": lambda a, b, out: torch.div(a, b, out=out),
    "div_trunc": lambda a, b, out: torch.div(a, b, rounding_mode="trunc", out=out),
    "div_floor_int": lambda a, b, out: torch.div(a, b, rounding_mode="floor", out=out),
    "pow": lambda a, b, out: torch.pow(a, b, out=out),
    "pow_int": lambda a, b, out: torch.pow(a, b, out=out),
    "maximum": lambda a, b, out: torch.maximum(a, b, out=out),
    "minimum": lambda a, b, out: torch.minimum(a, b, out=out),
    "eq": lambda a, b, out: torch.eq(a, b, out=out),
    "lt": lambda a, b, out: torch.lt(a, b, out=out),
    "ge": lambda a, b, out: torch.ge(a, b, out=out),
    "logical_and": lambda a, b, out: torch.logical_and(a, b, out=out),
    "logical_xor": lambda a, b, out: torch.logical_xor(a, b, out=out),
    "bitwise_or": lambda a, b, out: torch.bitwise_or(a, b, out=out),
    "bitwise_xor": lambda a, b, out: torch.bitwise_xor(a, b, out=out),
    "clamp_t": lambda a, b, c, out: torch.clamp(a, b, c, out=out),
    "clamp_min_t": lambda a, b, out: torch.clamp(a, min=b, out=out),
    "where": lambda c, a, b, out: torch.where(c, a, b, out=out),
    "lerp_t": lambda a, b, c, out: torch.lerp(a, b, c, out=out),
    "addcmul": lambda s, a, b, out: torch.addcmul(s, a, b, value=-0.5, out=out),
    "addcdiv": lambda s, a, b, out: torch.addcdiv(s, a, b, value=2, out=out),
}


@pytest.mark.parametrize("name", list(OUT_FORMS))
def test_op_out(name):
    n = len(OPS[name][1])
    fn, cpu, ax = _inputs(name, [(4, 6), (6,), (4, 1)][:n])
    expected = fn(*cpu)
    out = torch.empty(0, dtype=expected.dtype, device=DEVICE)  # resized by the op
    assert OUT_FORMS[name](*ax, out=out) is out
    compare(expected, out)
    big = torch.zeros(6, 4, dtype=expected.dtype, device=DEVICE)  # a transposed out=
    OUT_FORMS[name](*ax, out=big.t())
    compare(expected, big.t())
