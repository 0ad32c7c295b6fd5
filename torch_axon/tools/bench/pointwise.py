"""The all-pointwise workload: every unary, binary and ternary pointwise op of the elementwise
families (math, special functions, activations, casts, comparisons) at 1e6 and 1e7 contiguous
elements in float32 and bfloat16, plus strided and broadcast forms of a few, on both backends.

Inputs lie in each op's domain (positive for logarithms, (-1, 1) for atanh ...), drawn on the
CPU from a fixed seed and copied to the device, so both backends compute the same values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass
class PointwiseOp:
    name: str
    fn: Callable[..., torch.Tensor]
    arity: int = 1
    lo: float = -3.0  # inputs are uniform in [lo, hi)
    hi: float = 3.0


def _op(name, fn, arity=1, lo=-3.0, hi=3.0) -> PointwiseOp:
    return PointwiseOp(name, fn, arity, lo, hi)


POS = dict(lo=0.01, hi=4.0)
UNIT = dict(lo=-0.99, hi=0.99)

OPS: list[PointwiseOp] = [
    # arithmetic and powers
    _op("neg", torch.neg),
    _op("abs", torch.abs),
    _op("reciprocal", torch.reciprocal, **POS),
    _op("square", torch.square),
    _op("pow 2", lambda x: torch.pow(x, 2)),
    _op("pow 3", lambda x: torch.pow(x, 3)),
    _op("pow 0.5", lambda x: torch.pow(x, 0.5), **POS),
    _op("pow -0.5", lambda x: torch.pow(x, -0.5), **POS),
    _op("pow -1", lambda x: torch.pow(x, -1), **POS),
    _op("pow -2", lambda x: torch.pow(x, -2), **POS),
    _op("pow 1.7", lambda x: torch.pow(x, 1.7), **POS),
    _op("pow tensor", torch.pow, 2, **POS),
    _op("sqrt", torch.sqrt, **POS),
    _op("rsqrt", torch.rsqrt, **POS),
    _op("add", torch.add, 2),
    _op("sub", torch.sub, 2),
    _op("mul", torch.mul, 2),
    _op("div", torch.div, 2, **POS),
    _op("mul scalar", lambda x: x * 1.5),
    _op("fmod", torch.fmod, 2, **POS),
    _op("remainder", torch.remainder, 2, **POS),
    _op("maximum", torch.maximum, 2),
    _op("minimum", torch.minimum, 2),
    _op("clamp", lambda x: x.clamp(-1.0, 1.0)),
    _op("addcmul", torch.addcmul, 3),
    _op("addcdiv", torch.addcdiv, 3, **POS),
    _op("lerp", lambda a, b, w: torch.lerp(a, b, w), 3),
    _op("where", lambda a, b: torch.where(a > 0, a, b), 2),
    # exponentials, logarithms, trigonometry
    _op("exp", torch.exp),
    _op("exp2", torch.exp2),
    _op("expm1", torch.expm1),
    _op("log", torch.log, **POS),
    _op("log2", torch.log2, **POS),
    _op("log10", torch.log10, **POS),
    _op("log1p", torch.log1p, **POS),
    _op("sin", torch.sin),
    _op("cos", torch.cos),
    _op("tan", torch.tan, **UNIT),
    _op("asin", torch.asin, **UNIT),
    _op("acos", torch.acos, **UNIT),
    _op("atan", torch.atan),
    _op("atan2", torch.atan2, 2),
    _op("sinh", torch.sinh),
    _op("cosh", torch.cosh),
    _op("tanh", torch.tanh),
    _op("asinh", torch.asinh),
    _op("acosh", torch.acosh, lo=1.01, hi=5.0),
    _op("atanh", torch.atanh, **UNIT),
    _op("hypot", torch.hypot, 2),
    _op("logaddexp", torch.logaddexp, 2),
    _op("xlogy", torch.xlogy, 2, **POS),
    # rounding
    _op("floor", torch.floor),
    _op("ceil", torch.ceil),
    _op("round", torch.round),
    _op("trunc", torch.trunc),
    _op("frac", torch.frac),
    _op("sign", torch.sign),
    # special functions
    _op("erf", torch.erf),
    _op("erfc", torch.erfc),
    _op("erfinv", torch.erfinv, **UNIT),
    _op("lgamma", torch.lgamma, **POS),
    _op("digamma", torch.digamma, **POS),
    _op("i0", torch.i0),
    _op("sinc", torch.sinc),
    _op("logit", torch.logit, lo=0.01, hi=0.99),
    _op("nan_to_num", torch.nan_to_num),
    # activations and their backward ops
    _op("relu", torch.relu),
    _op("sigmoid", torch.sigmoid),
    _op("silu", F.silu),
    _op("gelu", F.gelu),
    _op("gelu tanh", lambda x: F.gelu(x, approximate="tanh")),
    _op("mish", F.mish),
    _op("softplus", F.softplus),
    _op("logsigmoid", F.logsigmoid),
    _op("elu", F.elu),
    _op("leaky_relu", F.leaky_relu),
    _op("hardtanh", F.hardtanh),
    _op("hardsigmoid", F.hardsigmoid),
    _op("hardswish", F.hardswish),
    _op("threshold_backward", lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.0), 2),
    _op("sigmoid_backward", lambda g, y: torch.ops.aten.sigmoid_backward(g, y), 2),
    _op("gelu_backward", lambda g, x: torch.ops.aten.gelu_backward(g, x), 2),
    _op("silu_backward", lambda g, x: torch.ops.aten.silu_backward(g, x), 2),
    # comparisons and predicates
    _op("eq", torch.eq, 2),
    _op("lt", torch.lt, 2),
    _op("ge", torch.ge, 2),
    _op("isnan", torch.isnan),
    _op("logical_and", torch.logical_and, 2),
    # casts
    _op("to float16", lambda x: x.half()),
    _op("to bfloat16", lambda x: x.bfloat16()),
    _op("to float32", lambda x: x.float()),
    _op("to int32", lambda x: x.int()),
]


def _inputs(op: PointwiseOp, n: int, dtype: torch.dtype, device: str, layout: str) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    side = int(round(n**0.5))
    out = []
    for k in range(op.arity):
        if layout == "strided":  # a transposed view: the kernel walks a permuted layout
            x = torch.rand(side, side, generator=g).t()
        elif layout == "broadcast" and k == 1:  # a row broadcast over the rows of the first
            x = torch.rand(side, generator=g)
        elif layout == "broadcast":
            x = torch.rand(side, side, generator=g)
        else:
            x = torch.rand(n, generator=g)
        out.append((x * (op.hi - op.lo) + op.lo).to(dtype).to(device))
    return out


@dataclass
class Case:
    op: PointwiseOp
    n: int
    dtype: torch.dtype
    layout: str  # contiguous, strided, broadcast

    @property
    def label(self) -> str:
        dt = str(self.dtype).removeprefix("torch.")
        return f"{self.op.name} {dt} {self.n:.0e}" + ("" if self.layout == "contiguous" else f" {self.layout}")

    def make(self, device: str) -> Callable[[], object]:
        xs = _inputs(self.op, self.n, self.dtype, device, self.layout)
        return lambda: self.op.fn(*xs)


# Strided and broadcast forms: a sample of each kind of op.
LAYOUT_SAMPLE = ("add", "mul", "exp", "sin", "pow 2", "where", "relu", "gelu", "to bfloat16", "eq")


def cases(quick: bool) -> list[Case]:
    sizes = [10_000] if quick else [1_000_000, 10_000_000]
    out = []
    for op in OPS:
        for n in sizes:
            out.append(Case(op, n, torch.float32, "contiguous"))
            if not op.name.startswith("to "):  # casts are measured from float32
                out.append(Case(op, n, torch.bfloat16, "contiguous"))
    for name in LAYOUT_SAMPLE:
        op = next(o for o in OPS if o.name == name)
        out.append(Case(op, sizes[0], torch.float32, "strided"))
        if op.arity > 1:
            out.append(Case(op, sizes[0], torch.float32, "broadcast"))
    return out


def target(case: Case) -> float:
    """The throughput ratio the issue asks of a case: 0.8x for float32 contiguous, 0.5x for
    bfloat16 storage and for strided or broadcast inputs."""
    return 0.8 if case.dtype == torch.float32 and case.layout == "contiguous" else 0.5
