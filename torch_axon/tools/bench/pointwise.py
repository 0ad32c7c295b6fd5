"""The all-pointwise workload: every unary, binary and ternary pointwise op of the elementwise
families (math, special functions, activations, casts, comparisons) at 1e6 and 1e7 contiguous
elements in float32 and bfloat16, plus strided and broadcast forms of a few, on both backends.

Inputs lie in each op's domain (positive for logarithms, (-1, 1) for atanh ...), drawn on the
CPU from a fixed seed and copied to the device, so both backends compute the same values.

Each case is timed in two forms on both backends:

- preallocated (``Case.make(device, preallocated=True)``): the op writes into an output made
  beforehand (``torch.add(a, b, out=o)``; a cast is ``o.copy_(x)``; relu, whose ``out=`` overload
  is generated code that allocates and then copies, runs in place on a preallocated copy). This is
  the kernel alone: no allocation on either side. ``isnan`` has no such form on the CPU (its
  ``out=`` is generated too) and the float32-to-float32 cast returns its input: ``into`` is None;
- allocating (``Case.make(device)``): the op as plain eager code calls it, a new output per call.
  On Axon that output comes from its caching allocator; on the CPU it is a fresh buffer, which
  past glibc's mmap threshold means newly mapped pages and a page fault for each of them, every
  call: at 1e7 float32 elements (40 MB) that alone costs more than the kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

# The preallocated form of an op: (inputs, output made beforehand) -> the call to time.
Into = Callable[[Sequence[torch.Tensor], torch.Tensor], Callable[[], object]]


def _out(fn: Callable[..., torch.Tensor]) -> Into:
    """``fn(*inputs, out=o)``."""
    return lambda xs, o: lambda: fn(*xs, out=o)


def _copy_into(xs: Sequence[torch.Tensor], o: torch.Tensor) -> Callable[[], object]:
    """A cast into a preallocated tensor of the target dtype."""
    return lambda: o.copy_(xs[0])


def _relu_in_place(xs: Sequence[torch.Tensor], o: torch.Tensor) -> Callable[[], object]:
    """relu_ on a preallocated copy of the input: after the first call it holds relu(x), and each
    call reads and writes it as an out-of-place kernel reads x and writes o."""
    o.copy_(xs[0])
    return lambda: torch.relu_(o)


def _where_into(xs: Sequence[torch.Tensor], o: torch.Tensor) -> Callable[[], object]:
    """where(a > 0, a, b) with the mask and the output both preallocated."""
    a, b = xs
    mask = torch.empty_like(a, dtype=torch.bool)
    return lambda: torch.where(torch.gt(a, 0, out=mask), a, b, out=o)


@dataclass
class PointwiseOp:
    name: str
    fn: Callable[..., torch.Tensor]  # the allocating form: returns a new tensor
    arity: int = 1
    lo: float = -3.0  # inputs are uniform in [lo, hi)
    hi: float = 3.0
    into: Into | None = None  # the preallocated form; None: there is none (``note`` says why)
    note: str = ""  # how the preallocated form differs from ``out=``, or why there is none
    noop: bool = False  # does nothing on either side (a cast to its own dtype): never a target met


def _op(name, fn, arity=1, lo=-3.0, hi=3.0, into="out", note="", noop=False) -> PointwiseOp:
    """An op; by default its preallocated form is ``fn(*inputs, out=o)``."""
    return PointwiseOp(name, fn, arity, lo, hi, _out(fn) if into == "out" else into, note, noop)


def _backward(name: str, *args) -> PointwiseOp:
    """An activation's backward op (grad_output, input or output); preallocated: its grad_input overload."""
    op = getattr(torch.ops.aten, name)
    return _op(
        name, lambda g, x: op(g, x, *args), 2, into=lambda xs, o: lambda: op.grad_input(*xs, *args, grad_input=o)
    )


POS = dict(lo=0.01, hi=4.0)
UNIT = dict(lo=-0.99, hi=0.99)
NN = torch._C._nn  # F's functions without their Python wrappers: these take out=

OPS: list[PointwiseOp] = [
    # arithmetic and powers
    _op("neg", torch.neg),
    _op("abs", torch.abs),
    _op("reciprocal", torch.reciprocal, **POS),
    _op("square", torch.square),
    _op("pow 2", lambda x, **o: torch.pow(x, 2, **o)),
    _op("pow 3", lambda x, **o: torch.pow(x, 3, **o)),
    _op("pow 0.5", lambda x, **o: torch.pow(x, 0.5, **o), **POS),
    _op("pow -0.5", lambda x, **o: torch.pow(x, -0.5, **o), **POS),
    _op("pow -1", lambda x, **o: torch.pow(x, -1, **o), **POS),
    _op("pow -2", lambda x, **o: torch.pow(x, -2, **o), **POS),
    _op("pow 1.7", lambda x, **o: torch.pow(x, 1.7, **o), **POS),
    _op("pow tensor", torch.pow, 2, **POS),
    _op("sqrt", torch.sqrt, **POS),
    _op("rsqrt", torch.rsqrt, **POS),
    _op("add", torch.add, 2),
    _op("sub", torch.sub, 2),
    _op("mul", torch.mul, 2),
    _op("div", torch.div, 2, **POS),
    _op("mul scalar", lambda x, **o: torch.mul(x, 1.5, **o)),
    _op("fmod", torch.fmod, 2, **POS),
    _op("remainder", torch.remainder, 2, **POS),
    _op("maximum", torch.maximum, 2),
    _op("minimum", torch.minimum, 2),
    _op("clamp", lambda x, **o: torch.clamp(x, -1.0, 1.0, **o)),
    _op("addcmul", torch.addcmul, 3),
    _op("addcdiv", torch.addcdiv, 3, **POS),
    _op("lerp", torch.lerp, 3),
    _op("where", lambda a, b: torch.where(a > 0, a, b), 2, into=_where_into, note="the a > 0 mask preallocated too"),
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
    _op("relu", torch.relu, into=_relu_in_place, note="in place (relu_): relu's out= allocates, then copies"),
    _op("sigmoid", torch.sigmoid),
    _op("silu", F.silu, into=_out(NN.silu)),
    _op("gelu", F.gelu, into=_out(NN.gelu)),
    _op("gelu tanh", lambda x, **o: NN.gelu(x, approximate="tanh", **o)),
    _op("mish", F.mish, into=_out(NN.mish)),
    _op("softplus", F.softplus, into=_out(NN.softplus)),
    _op("logsigmoid", F.logsigmoid, into=_out(NN.log_sigmoid)),
    _op("elu", F.elu, into=_out(NN.elu)),
    _op("leaky_relu", F.leaky_relu, into=_out(NN.leaky_relu)),
    _op("hardtanh", F.hardtanh, into=_out(NN.hardtanh)),
    _op("hardsigmoid", F.hardsigmoid, into=_out(NN.hardsigmoid)),
    _op("hardswish", F.hardswish, into=_out(NN.hardswish)),
    _backward("threshold_backward", 0.0),
    _backward("sigmoid_backward"),
    _backward("gelu_backward"),
    _backward("silu_backward"),
    # comparisons and predicates
    _op("eq", torch.eq, 2),
    _op("lt", torch.lt, 2),
    _op("ge", torch.ge, 2),
    _op("isnan", torch.isnan, into=None, note="no preallocated form: the CPU's isnan out= allocates, then copies"),
    _op("logical_and", torch.logical_and, 2),
    # casts: copy_ into a tensor of the target dtype
    _op("to float16", lambda x: x.half(), into=_copy_into, note="copy_ into a float16 tensor"),
    _op("to bfloat16", lambda x: x.bfloat16(), into=_copy_into, note="copy_ into a bfloat16 tensor"),
    _op("to float32", lambda x: x.float(), into=None, note="returns its input: no work on either side", noop=True),
    _op("to int32", lambda x: x.int(), into=_copy_into, note="copy_ into an int32 tensor"),
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

    @property
    def preallocated(self) -> bool:
        """Whether the case has a preallocated form (``op.into``)."""
        return self.op.into is not None

    def make(self, device: str, preallocated: bool = False) -> Callable[[], object]:
        """The call to time on ``device``: the allocating form, or the preallocated one (an output
        like the allocating form's, made here, written by every call)."""
        xs = _inputs(self.op, self.n, self.dtype, device, self.layout)
        if not preallocated:
            return lambda: self.op.fn(*xs)
        if self.op.into is None:
            raise ValueError(f"{self.label} has no preallocated form: {self.op.note}")
        return self.op.into(xs, torch.empty_like(self.op.fn(*xs)))


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
