"""Every unary and binary pointwise OpInfo on special values, eager and compiled on axon, against eager CPU.

Random inputs (what the OpInfo samples and the conformance sweep use) almost never reach the edges
where a hand-written OpenCL kernel or Inductor's generated code part ways with PyTorch's CPU kernels:
NaN, +-inf, +-0, subnormals, the largest and smallest finite values and the branch points of the
functions (0 for log, +-1 for acos / atanh, the poles of lgamma, the overflow threshold of exp);
for integers the minimum, the maximum, 0, +-1 and shift counts around the width. Here every
``UnaryUfuncInfo`` and ``BinaryUfuncInfo`` of PyTorch's ``op_db`` runs on all of them (binary ops on
every pair of them) in each dtype it supports among ten real ones, once eagerly on axon and once
compiled by Inductor on axon, and each result is compared with eager CPU: NaN positions exactly,
infinities exactly, finite values within a few ulp, and exactly (sign of zero included) for ops
that are exact by IEEE 754 and the OpenCL spec. Each test covers one dtype, one mode and one arity,
and fails with the list of every difference, except those in ``KNOWN_DIFFERENCES``.

Complex dtypes are out of scope here (ops whose result is complex are skipped too): their special
values are pairs, a test of their own.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch

pytest.importorskip("expecttest", reason="PyTorch's OpInfo database needs the expecttest package")

DEVICE = "axon"

DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.uint8,
    torch.bool,
]

# OpInfos left out, with the reason. Ops named "_..." are left out as well: the reflected operators
# (__radd__, __rpow__ ...), whose samples pass a Python number, run the kernels of add, pow ... .
SKIPPED_OPS = {
    # Random: its samples run it in training mode, where each element's slope is drawn.
    "nn.functional.rrelu": "random op",
    # CUDA's runtime compiler: no CPU kernel to compare with.
    "jiterator_unary": "CUDA only",
    "jiterator_binary": "CUDA only",
    "jiterator_binary_return_by_ref": "CUDA only",
    # Complex results (complex dtypes are out of scope, see the module docstring).
    "complex": "complex result",
    "polar": "complex result",
    "cfloat": "complex result",
    "cdouble": "complex result",
    "chalf": "complex result",
}

# Ops whose exact result is exactly what an implementation must return: no rounding at all
# (selection, sign manipulation, rounding to integers, conversions), or one operation that IEEE 754
# and the OpenCL spec require to be correctly rounded (add, sub, mul; fmod is exact). Their results
# must match bit for bit, the sign of a zero included. float16 / bfloat16 computed in float and
# rounded once are still exact for these (float has more than twice their precision plus two bits).
# Everything else (division and sqrt included: OpenCL allows 2.5 and 3 ulp) gets APPROX_TOLERANCE.
EXACT_OPS = {
    "abs",
    "neg",
    "positive",
    "sign",
    "sgn",
    "signbit",
    "copysign",
    "floor",
    "ceil",
    "trunc",
    "round",
    "round.decimals_0",
    "frac",
    "conj",
    "conj_physical",
    "real",
    "fill",
    "nan_to_num",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "max.binary",
    "min.binary",
    "clamp_max",
    "clamp_min",
    "heaviside",
    "nextafter",
    "fmod",
    "nn.functional.relu",
    "nn.functional.relu6",
    "nn.functional.hardtanh",
    "nn.functional.threshold",
    "nn.functional.hardshrink",
    "bfloat16",
    "bool",
    "byte",
    "char",
    "double",
    "float",
    "half",
    "int",
    "long",
    "short",
    "add",
    "sub",
    "rsub",
    "mul",
    "square",
}

# (rtol, atol) for the other ops' floating results: a few ulp of float32 and float64, and
# torch.testing's defaults for float16 and bfloat16. Integer and bool results are always exact.
APPROX_TOLERANCE = {
    torch.float32: (1e-5, 1e-6),
    torch.float64: (1e-12, 1e-12),
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
}

# Integer ops that divide: a zero divisor makes the CPU raise, and dividing the minimum by -1
# overflows (the CPU's trunc division dies of SIGFPE on it), so those pairs are left out.
INTEGER_DIVISIONS = {"div.trunc_rounding", "div.floor_rounding", "floor_divide", "remainder", "fmod"}
# gcd and lcm of the minimum: its absolute value does not exist in the dtype (the CPU's lcm dies
# of SIGFPE on (min, max)), so pairs with the minimum are left out.
INTEGER_GCDS = {"gcd", "lcm"}
# The orthogonal polynomials (special.chebyshev_polynomial_t ...) of degree n: n converted to int64
# (undefined beyond its range, NaN included), and n steps of a recurrence for each element, so
# degrees past MAX_DEGREE (2^31 steps for int32's maximum) would run for minutes: left out.
MAX_DEGREE = 1000
# Float-to-integer conversions of NaN, infinities and values out of the target's range are
# undefined behaviour in C++ and undefined in PyTorch, so those values are left out. uint8 is the
# exception: PyTorch converts through int64, so any value in int64's range is defined.
INTEGER_CONVERSIONS = {
    "byte": torch.uint8,
    "char": torch.int8,
    "short": torch.int16,
    "int": torch.int32,
    "long": torch.int64,
}

# Differences that are no Axon bug: (op name, dtype or None for all, "eager" / "compiled" or
# None for both) -> why. Only where the CPU's result is the less accurate one or the difference is
# inherent; real bugs stay failing until they are fixed.
KNOWN_DIFFERENCES: dict[tuple[str, torch.dtype | None, str | None], str] = {}

# At most this many differing elements are listed per op (the count of the rest follows).
MAX_LISTED = 12


def _float_values(dtype: torch.dtype) -> list[float]:
    fi = torch.finfo(dtype)
    return [
        math.nan,
        math.inf,
        -math.inf,
        0.0,
        -0.0,
        fi.smallest_normal * fi.eps,  # the smallest subnormal
        -fi.smallest_normal * fi.eps,
        fi.smallest_normal,
        -fi.smallest_normal,
        fi.max,
        fi.min,
        1.0,
        -1.0,
        1.0 - fi.eps,  # just inside the domain of atanh, acos, erfinv, logit
        1.0 + fi.eps,  # just inside acosh's
        0.5,
        -0.5,
        2.0,
        -2.0,
        -3.0,  # a pole of lgamma, digamma, polygamma
        1e-3,
        1e3,
        math.pi / 2,
        -math.pi / 2,
        math.log(fi.max),  # exp's overflow threshold
        -math.log(fi.max),
    ]


def _int_values(dtype: torch.dtype) -> list[int]:
    ii = torch.iinfo(dtype)
    wanted = [0, 1, -1, 2, -2, 3, -3, 7, 10, ii.bits - 1, ii.bits, ii.bits + 1, ii.min, ii.min + 1, ii.max - 1, ii.max]
    return list(dict.fromkeys(v for v in wanted if ii.min <= v <= ii.max))


def special_values(dtype: torch.dtype) -> torch.Tensor:
    if dtype == torch.bool:
        return torch.tensor([False, True])
    values = _float_values(dtype) if dtype.is_floating_point else _int_values(dtype)
    return torch.tensor(values, dtype=torch.float64 if dtype.is_floating_point else torch.int64).to(dtype)


def special_inputs(dtype: torch.dtype, arity: int) -> tuple[torch.Tensor, ...]:
    """The special values (unary), or two 1-d tensors holding every pair of them (binary)."""
    values = special_values(dtype)
    if arity == 1:
        return (values,)
    index = torch.tensor(list(itertools.product(range(len(values)), repeat=2)))
    return values[index[:, 0]], values[index[:, 1]]


def op_name(op) -> str:
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def _undefined(name: str, dtype: torch.dtype, inputs: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """Elements whose result is undefined, so not compared (see INTEGER_DIVISIONS and the like)."""
    if dtype.is_floating_point and name in INTEGER_CONVERSIONS:
        target = torch.iinfo(torch.int64 if INTEGER_CONVERSIONS[name] == torch.uint8 else INTEGER_CONVERSIONS[name])
        x = inputs[0].double()
        return ~((x > target.min - 1.0) & (x < target.max + 1.0))  # NaN is neither
    if "_polynomial_" in name:
        return ~(inputs[1].double().abs() <= MAX_DEGREE)
    if not dtype.is_floating_point and dtype != torch.bool:
        low = torch.iinfo(dtype).min
        if name in INTEGER_DIVISIONS:
            return (inputs[1] == 0) | ((inputs[0] == low) & (inputs[1] == -1))
        if name in INTEGER_GCDS:
            return (inputs[0] == low) | (inputs[1] == low)
    return torch.zeros(inputs[0].shape, dtype=torch.bool)


@dataclass
class Case:
    """One op in one dtype: its inputs, keyword arguments and result on the CPU."""

    name: str
    op: Callable
    kwargs: dict
    inputs: tuple[torch.Tensor, ...]
    expected: tuple[torch.Tensor, ...]
    exact: bool
    dropped: int  # elements left out (undefined results, or the CPU raised on them)

    def device_kwargs(self) -> dict:
        return {k: v.to(DEVICE) if isinstance(v, torch.Tensor) else v for k, v in self.kwargs.items()}


def _flatten(result) -> tuple:
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _run_cpu(op, inputs, kwargs):
    return _flatten(op.op(*inputs, **kwargs))


def _raises(op, inputs, kwargs) -> bool:
    try:
        _run_cpu(op, inputs, kwargs)
    except Exception:
        return True
    return False


def _make_case(op, dtype: torch.dtype, arity: int) -> Case | None:
    """The op's case in this dtype, or None where the CPU raises on every element."""
    name = op_name(op)
    inputs = special_inputs(dtype, arity)
    kwargs = op.sample_kwargs("cpu", dtype, inputs[0])[0]
    keep = ~_undefined(name, dtype, inputs)
    inputs = tuple(x[keep] for x in inputs)
    if _raises(op, inputs, kwargs):
        # Some elements are outside the op's domain on the CPU (mvlgamma's, negative integer powers):
        # keep the elements on which it returns a value.
        ok = torch.tensor([not _raises(op, tuple(x[i : i + 1] for x in inputs), kwargs) for i in range(len(inputs[0]))])
        if not ok.any():
            return None
        keep[keep.clone()] = ok
        inputs = tuple(x[ok] for x in inputs)
    expected = _run_cpu(op, inputs, kwargs)
    if any(t.is_complex() for t in expected):
        return None
    return Case(name, op.op, kwargs, inputs, expected, name in EXACT_OPS, int((~keep).sum()))


@functools.cache
def selected_ops(arity: int) -> list:
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.opinfo.core import BinaryUfuncInfo, UnaryUfuncInfo

    kind = UnaryUfuncInfo if arity == 1 else BinaryUfuncInfo
    return [
        op
        for op in op_db
        if isinstance(op, kind) and not op.name.startswith("_") and op.name not in SKIPPED_OPS
    ]


@functools.cache
def cases(dtype: torch.dtype, arity: int) -> tuple[Case, ...]:
    """Every selected op that supports the dtype on the CPU, with its CPU results."""
    made = (_make_case(op, dtype, arity) for op in selected_ops(arity) if dtype in op.supported_dtypes("cpu"))
    return tuple(c for c in made if c is not None)


def _fmt(x: torch.Tensor) -> str:
    return repr(x.item())


def _compare(case: Case, got) -> list[str]:
    """Differences of one op's axon result from its CPU result, one readable line each."""
    got = _flatten(got)
    if len(got) != len(case.expected):
        return [f"{len(got)} results, the CPU returns {len(case.expected)}"]
    lines = []
    for k, (g, want) in enumerate(zip(got, case.expected, strict=True)):
        where = f"result {k}: " if len(got) > 1 else ""
        if not isinstance(g, torch.Tensor) or g.device.type != DEVICE:
            lines.append(f"{where}not an axon tensor: {g!r}")
            continue
        g = g.cpu()
        if g.dtype != want.dtype or g.shape != want.shape:
            lines.append(f"{where}{g.dtype} {tuple(g.shape)}, the CPU returns {want.dtype} {tuple(want.shape)}")
            continue
        rtol, atol = (0.0, 0.0) if case.exact else APPROX_TOLERANCE.get(want.dtype, (0.0, 0.0))
        try:
            torch.testing.assert_close(g, want, equal_nan=True, rtol=rtol, atol=atol)
            bad = torch.zeros(want.shape, dtype=torch.bool)
        except AssertionError:
            # The same test assert_close applies, element by element, to list the elements.
            bad = ~torch.isclose(g, want, rtol=rtol, atol=atol, equal_nan=True) if want.is_floating_point() else g != want
        if case.exact and want.is_floating_point():
            bad |= (want == 0) & (torch.signbit(g) != torch.signbit(want))
        for i in bad.nonzero().flatten().tolist()[:MAX_LISTED]:
            args = ", ".join(_fmt(x[i]) for x in case.inputs)
            lines.append(f"{where}({args}): axon {_fmt(g[i])}, cpu {_fmt(want[i])}")
        if int(bad.sum()) > MAX_LISTED:
            lines.append(f"{where}... and {int(bad.sum()) - MAX_LISTED} more elements")
    return lines


def _known(name: str, dtype: torch.dtype, mode: str) -> bool:
    return any((name, d, m) in KNOWN_DIFFERENCES for d in (dtype, None) for m in (mode, None))


def _run_eager(case: Case):
    return case.op(*(x.to(DEVICE) for x in case.inputs), **case.device_kwargs())


def _batched(batch: tuple[Case, ...]) -> Callable:
    """One function that applies every op of the batch to its own inputs (mostly the same tensors)."""

    def run_all(*flat):
        results, start = [], 0
        for case, kwargs in zip(batch, [c.device_kwargs() for c in batch], strict=True):
            results.append(case.op(*flat[start : start + len(case.inputs)], **kwargs))
            start += len(case.inputs)
        return tuple(results)

    return run_all


def _run_compiled(batch: tuple[Case, ...], on_device: dict[int, torch.Tensor]) -> list:
    """Each op's compiled result (or the exception), all ops in one compiled function: compiling
    one graph per op would take minutes on two cores. A failed compile is bisected to the ops
    that fail, each compiled alone in the end."""
    flat = [on_device[id(x)] for case in batch for x in case.inputs]
    torch._dynamo.reset()
    try:
        return list(torch.compile(_batched(batch), backend="inductor")(*flat))
    except Exception as e:
        if len(batch) == 1:
            return [e]
    half = len(batch) // 2
    return _run_compiled(batch[:half], on_device) + _run_compiled(batch[half:], on_device)


def _describe(e: Exception) -> str:
    first = str(e).strip().splitlines()
    return f"raises {type(e).__name__}: {first[0][:300] if first else ''}"


@pytest.mark.parametrize("arity", [1, 2], ids=["unary", "binary"])
@pytest.mark.parametrize("mode", ["eager", "compiled"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))
def test_special_values_match_cpu(dtype, mode, arity):
    batch = cases(dtype, arity)
    if not batch:
        pytest.skip(f"no {['unary', 'binary'][arity - 1]} op supports {dtype}")
    if mode == "eager":
        results = []
        for case in batch:
            try:
                results.append(_run_eager(case))
            except Exception as e:
                results.append(e)
    else:
        # Each distinct CPU input is copied to axon once, so ops that share inputs share them there too.
        on_device = {id(x): x.to(DEVICE) for case in batch for x in case.inputs}
        results = _run_compiled(batch, on_device)
        torch._dynamo.reset()
    report = []
    for case, got in zip(batch, results, strict=True):
        if _known(case.name, dtype, mode):
            continue
        lines = [_describe(got)] if isinstance(got, Exception) else _compare(case, got)
        if lines:
            report.append(f"{case.name} ({dtype}, {mode}):\n    " + "\n    ".join(lines))
    assert not report, f"{len(report)} of {len(batch)} ops differ from the CPU:\n" + "\n".join(report)
