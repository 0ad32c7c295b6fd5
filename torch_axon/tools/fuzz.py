"""Differential fuzzer: random small programs of Axon's native ops on axon (eager and compiled) against eager CPU.

Run it as ``python -m torch_axon.tools.fuzz --programs N --seed S`` (``--help`` lists the options). Each
program is drawn from ``random.Random`` seeded with the run's seed and its own number, so any one of them
can be rerun alone (``--only I``). A program is a chain of one to four ops (pointwise unary, binary
and ternary ops, reductions, scans, pooling, views and copies; the ``OPS`` table) on one to three inputs of random
shape (0-size and 0-dim included), dtype and memory layout (contiguous, permuted, sliced with steps and a
storage offset, expanded with zero strides, channels-last), whose values mix ordinary numbers with
special ones (NaN, +-inf, +-0, subnormals, the largest values, integer extremes). Inputs are built as a
flat storage and ``as_strided`` on it, the same on both devices.

Modes (each counted apart in the summary):

- ``eager``: the program runs on axon op by op; each op also runs on the CPU on exact copies of the
  very tensors axon gave it (same values, strides and storage offset), so rounding differences do not
  accumulate and every op is judged alone: result dtype, shape, value (tolerance by dtype and by the
  op's accuracy class, see ``tolerance``), strides where PyTorch defines them (pointwise ops and
  ``cat`` on dense inputs; views, with their storage offset and whether they alias their input), and
  errors (an error on one side only, or another exception class, is a finding).
- ``compiled`` / ``compiled-dynamic``: ``torch.compile(dynamic=False / True)`` of the whole program on
  axon against the eager CPU program end to end, with the tolerance of the chain.
- ``eager-grad``, ``compiled-grad``, ``compiled-dynamic-grad``: for a fraction of programs with floating
  inputs, the gradients of the inputs' storages for fixed random output gradients, against the CPU's.

A floating value that differs beyond the tolerance still passes if it is no farther from the program
run in float64 on the CPU than the CPU's own value is (twice as far at most), the rule of the
conformance sweep: the CPU is the reference of behaviour, not of accuracy. Integer and bool results
must be equal, except where the CPU's own result differs from the float64 run (a comparison or rounding
of a value that float32 cannot decide).

A failing program is minimised (the failing op alone on the inputs it was given, outputs and ops
dropped, dimensions halved, layouts made contiguous) and printed as a standalone reproducer;
``--save FILE`` appends the findings as JSON lines, which ``--replay FILE`` (and tests/test_fuzz.py)
run again. Differences with a documented reason (``KNOWN``, each checked against the finding's own
values where it can be) are reported apart; so are compiled-mode findings that PyTorch's own CPU
Inductor shows as well (``upstream``).

Programs run in a child process that saves the run's state (figures and findings) in
``DATA/fuzz-state.json`` after each. If the child dies (a crash, or no progress for ten minutes: a
hang), the parent records the program it was running as a ``crash`` (``hang``) finding, minimised with
each try in a process of its own, and starts a new child after it; ``--resume`` continues a run that
was interrupted. The summary goes to ``OUT/fuzz.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import linecache
import math
import random
import re
import signal
import subprocess
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from torch_axon.tools import add_output_args, output_dirs
from torch_axon.tools.conformance import PairTimeout, time_limit

AXON = "axon"
DTYPES = {
    name: getattr(torch, name)
    for name in ("float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8", "bool", "int8", "int16")
}
HALF = (torch.float16, torch.bfloat16)
MAX_NUMEL = 4096  # per tensor, inputs and results: small programs, many of them
EAGER_LIMIT_S = 60.0
COMPILE_LIMIT_S = 300.0  # a cold kernel cache builds every kernel once
# Programs a child runs before the parent starts a fresh one: every distinct compiled kernel stays
# built for the process (as Inductor keeps its modules), about 0.5 MB each, so one child through a
# long run grew to 8.5 GB by 30,000 programs (docs/reliability.md).
CHILD_PROGRAMS = 5000
NS = {"torch": torch, "F": F, "nan": math.nan, "inf": math.inf}


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# --------------------------------------------------------------------------------------------
# The op table


@dataclass(frozen=True)
class Op:
    """One op: ``fmt`` is its Python expression, ``{0}`` the first operand, ``{1}`` ``{2}`` the partners
    (kinds in ``partners``: "any" a tensor or a Python number, "tensor", "bool" a bool tensor, "cat" a
    tensor of the first's shape but in ``dim``), other fields the params ``params(rng, meta)`` draws
    (None: the op does not apply to that operand). ``accuracy`` names the tolerance class (``ULPS``);
    ``operands`` the first operand's dtypes: any, float, nonbool, integral (bool too), int (no bool)."""

    name: str
    fmt: str
    kind: str  # unary, binary, ternary, reduce, scan, view, copy, pool
    accuracy: str = "exact"
    operands: str = "any"
    params: Callable[[random.Random, torch.Tensor], dict | None] | None = None
    partners: tuple[str, ...] = ()
    mag: str | None = None  # reductions: the magnitude the rounding error scales with, same params
    # Whether PyTorch defines the result's strides (TensorIterator's: they follow dense inputs' layout).
    layout: bool = True


# Error budget in float32 (or float64) ulps between two correct implementations of one op, axon's and
# the CPU's: OpenCL 1.2 allows sqrt 3 ulp, divide 2.5, exp/log 3, sin/cos 4, tan 5, pow 16 (section
# 7.4), the CPU's are within 1; composite functions round several steps each, each side in its own
# order. Half-precision results are computed in float and rounded once on both sides, so they may
# land one half ulp apart on top of this. Reductions scale with the reduced count (``tolerance``).
ULPS = {"exact": 0, "basic": 4, "elementary": 8, "pow": 20, "composite": 32}
REDUCTION_CLASSES = ("sum", "prod", "var", "norm", "softmax", "logsumexp")


def _choice(*values):
    return lambda rng, m: {"v": rng.choice(values)}


def _dims(required: bool = False, tuple_ok: bool = True, keepdim: bool = True, single: bool = False):
    """A reduction's dim arguments as code, ``rest`` (", dim=(0, 2), keepdim=True" or "" for all)."""

    def draw(rng: random.Random, m: torch.Tensor) -> dict:
        nd = m.dim()
        rest = ""
        if required or rng.random() < 0.75:
            if nd == 0:
                dim: Any = rng.choice([0, -1])
            elif tuple_ok and not single and nd >= 2 and rng.random() < 0.3:
                dim = tuple(rng.sample(range(nd), 2))
            else:
                dim = rng.randrange(-nd, nd)
            rest = f", dim={dim}"
            if keepdim:
                rest += f", keepdim={rng.random() < 0.4}"
        return {"rest": rest}

    return draw


def _dim(rng: random.Random, m: torch.Tensor) -> dict:
    nd = max(m.dim(), 1)
    return {"dim": rng.randrange(-nd, nd), "keepdim": rng.random() < 0.4}


def _need(nd_min: int, draw: Callable[[random.Random, torch.Tensor], dict]):
    return lambda rng, m: draw(rng, m) if m.dim() >= nd_min else None


def _slice(rng: random.Random, m: torch.Tensor) -> dict | None:
    if m.dim() == 0:
        return None
    d = rng.randrange(m.dim())
    n = m.shape[d]

    def bound():
        return "" if rng.random() < 0.3 else str(rng.randint(-n - 1, n + 1))

    return {"index": ", ".join([":"] * d + [f"{bound()}:{bound()}:{rng.choice([1, 1, 2, 3])}"])}


def _expand(rng: random.Random, m: torch.Tensor) -> dict:
    shape = [rng.choice([1, 2, 3, 5]) if s == 1 else (-1 if rng.random() < 0.3 else s) for s in m.shape]
    if rng.random() < 0.3 or not shape:
        shape.insert(0, rng.choice([1, 2, 3]))
    return {"shape": tuple(shape)}


def _reshape(rng: random.Random, m: torch.Tensor) -> dict:
    n = m.numel()
    if n == 0:
        return {"shape": rng.choice([(0,), (0, 3), (2, 0, 1)])}
    shape, rest = [], n
    for _ in range(rng.randint(0, 3)):
        d = rng.choice([d for d in range(1, min(rest, 12) + 1) if rest % d == 0])
        shape.append(d)
        rest //= d
    shape.append(rest)
    rng.shuffle(shape)
    if rng.random() < 0.3:
        shape[rng.randrange(len(shape))] = -1
    return {"shape": tuple(shape)}


def _two_dims(rng: random.Random, m: torch.Tensor) -> dict:
    nd = m.dim()
    return {"d0": rng.randrange(-nd, nd), "d1": rng.randrange(-nd, nd)}


def _permute(rng: random.Random, m: torch.Tensor) -> dict:
    perm = list(range(m.dim()))
    rng.shuffle(perm)
    return {"perm": tuple(perm)}


def _flatten(rng: random.Random, m: torch.Tensor) -> dict:
    nd = max(m.dim(), 1)
    a, b = sorted((rng.randrange(nd), rng.randrange(nd)))
    return {"s": a, "e": b}


def _flip(rng: random.Random, m: torch.Tensor) -> dict | None:
    if m.dim() == 0:
        return None
    return {"dims": tuple(rng.sample(range(m.dim()), rng.randint(1, m.dim())))}


def _roll(rng: random.Random, m: torch.Tensor) -> dict:
    if m.dim() == 0 or rng.random() < 0.3:
        return {"rest": ""}
    return {"rest": f", dims={rng.randrange(m.dim())}", "shift": rng.randint(-4, 4)}


def _to(rng: random.Random, m: torch.Tensor) -> dict | None:
    # Float to integer conversion of NaN, infinities and out-of-range values is undefined in C++ and in
    # PyTorch: never drawn.
    targets = ["float32", "float16", "bfloat16", "bool"] + ([] if m.dtype.is_floating_point else ["int32", "int64"])
    if not m.dtype.is_floating_point:
        targets.append("uint8")
    if fp64_ok():
        targets.append("float64")
    return {"dt": rng.choice(targets)}


def _clamp(rng: random.Random, m: torch.Tensor) -> dict:
    lo, hi = sorted(rng.choice([-1.5, -1, 0, 0.5, 2, 3]) for _ in range(2))
    if m.dtype != torch.bool and not m.dtype.is_floating_point:
        lo, hi = math.floor(lo), math.ceil(hi)
    which = rng.random()
    return {"lo": None if which < 0.25 else lo, "hi": None if 0.25 <= which < 0.5 else hi}


def _softplus(rng, m):
    return {"beta": rng.choice([1, 2, 0.5]), "th": rng.choice([20, 1, 5])}


def _pow_scalar(rng, m):
    return {"v": rng.choice([2, 3, 0.5, -1, -2, 1.5, 0, -0.5])}


def _window(nd: int, average: bool):
    """Params of an ``nd``-dimensional pooling over the last ``nd`` dims (the input has one or two
    more): per dim a kernel from 1 to past the input (in ceil mode a window may start inside the
    input and overhang it), a stride, a padding up to half the kernel (PyTorch's limit) and for max
    pooling a dilation; ceil mode; for averages count_include_pad and, in 2-D and 3-D, sometimes a
    divisor. ``n``, the window's size, is the op's error budget (step_ulps)."""

    def draw(rng: random.Random, m: torch.Tensor) -> dict | None:
        if m.dim() not in (nd + 1, nd + 2):
            return None
        k = [rng.choice([1, 2, 2, 3, 3, max(s, 1), s + 2]) for s in m.shape[-nd:]]
        params = {
            "k": k,
            "s": [rng.choice([1, 2, 3, kk]) for kk in k],
            "p": [rng.randint(0, kk // 2) for kk in k],
            "c": rng.random() < 0.5,
            "n": math.prod(k),
        }
        if average:
            params["i"] = rng.random() < 0.7
            params["d"] = rng.choice([None, None, None, 3]) if nd > 1 else None
        else:
            params["dl"] = [rng.choice([1, 1, 2]) for _ in k]
        return params

    return draw


def _pool_ops() -> list[Op]:
    ops = []
    for nd in (1, 2, 3):
        divisor = ", divisor_override={d}" if nd > 1 else ""
        average = f"F.avg_pool{nd}d({{0}}, {{k}}, {{s}}, {{p}}, ceil_mode={{c}}, count_include_pad={{i}}{divisor})"
        mag = average.replace("{0}", "{0}.abs()")
        ops.append(Op(f"avg_pool{nd}d", average, "pool", "sum", "float", _window(nd, True), mag=mag))
        if nd < 3:  # max_pool3d's CPU kernel takes the same path
            maximum = f"F.max_pool{nd}d({{0}}, {{k}}, {{s}}, {{p}}, dilation={{dl}}, ceil_mode={{c}})"
            ops.append(Op(f"max_pool{nd}d", maximum, "pool", "exact", "float", _window(nd, False)))
    return ops


def _clamp_ops() -> list[Op]:
    return [
        Op("clamp", "torch.clamp({0}, {lo}, {hi})", "unary", "exact", "nonbool", _clamp),
        Op("hardtanh", "F.hardtanh({0}, {lo}, {hi})", "unary", "exact", "float", lambda r, m: _both(_clamp(r, m))),
    ]


def _both(p: dict) -> dict:
    return {"lo": -1.0 if p["lo"] is None else float(p["lo"]), "hi": 1.0 if p["hi"] is None else float(p["hi"])}


def _unary(name: str, accuracy: str, operands: str = "any", fmt: str | None = None) -> Op:
    return Op(name, fmt or f"torch.{name}({{0}})", "unary", accuracy, operands)


def _binary(name: str, accuracy: str, operands: str = "any", fmt: str | None = None, params=None) -> Op:
    return Op(name, fmt or f"torch.{name}({{0}}, {{1}})", "binary", accuracy, operands, params, ("any",))


def _build_ops() -> dict[str, Op]:
    ops = [
        *(_unary(n, "exact", "nonbool") for n in ("abs", "neg", "floor", "ceil", "trunc", "round", "square")),
        *(_unary(n, "exact") for n in ("sign", "isnan", "isinf", "isfinite", "logical_not")),
        _unary("signbit", "exact", "nonbool"),
        _unary("frac", "exact", "float"),
        _unary("relu", "exact", "nonbool"),
        _unary("bitwise_not", "exact", "integral"),
        _unary("nan_to_num", "exact", "float"),
        Op(
            "nan_to_num_args", "torch.nan_to_num({0}, nan={v}, posinf=2.0)", "unary", "exact", "float", _choice(0.5, -1)
        ),
        Op("round_decimals", "torch.round({0}, decimals={v})", "unary", "basic", "float", _choice(1, 2, -1)),
        *_clamp_ops(),
        Op("relu6", "F.relu6({0})", "unary", "exact", "float"),
        Op("threshold", "F.threshold({0}, {v}, -2.0)", "unary", "exact", "float", _choice(0.0, 0.5, -1.0)),
        Op("hardshrink", "F.hardshrink({0}, {v})", "unary", "exact", "float", _choice(0.5, 1.0)),
        Op("softshrink", "F.softshrink({0}, {v})", "unary", "basic", "float", _choice(0.5, 1.0)),
        Op("leaky_relu", "F.leaky_relu({0}, {v})", "unary", "basic", "float", _choice(0.01, 0.2, 1.5)),
        *(_unary(n, "basic") for n in ("sqrt", "rsqrt", "reciprocal")),
        Op("pow_scalar", "torch.pow({0}, {v})", "unary", "pow", "nonbool", _pow_scalar),
        *(
            _unary(n, "elementary")
            for n in (
                "exp",
                "exp2",
                "expm1",
                "log",
                "log2",
                "log10",
                "log1p",
                "sin",
                "cos",
                "tan",
                "asin",
                "acos",
                "atan",
                "sinh",
                "cosh",
                "asinh",
                "acosh",
                "atanh",
                "tanh",
            )
        ),
        *(_unary(n, "composite") for n in ("sigmoid", "erf", "erfc", "erfinv", "lgamma", "digamma", "sinc")),
        # log_sigmoid_forward allocates its result itself: contiguous on the CPU, like its input on CUDA.
        Op("logsigmoid", "F.logsigmoid({0})", "unary", "composite", "float", layout=False),
        *(_unary(n, "composite", "float", f"F.{n}({{0}})") for n in ("silu", "mish", "selu", "celu")),
        *(_unary(n, "composite", "float", f"F.{n}({{0}})") for n in ("hardswish", "hardsigmoid")),
        Op("gelu", "F.gelu({0}, approximate='{v}')", "unary", "composite", "float", _choice("none", "tanh")),
        Op("elu", "F.elu({0}, alpha={v})", "unary", "composite", "float", _choice(1.0, 0.5)),
        Op("softplus", "F.softplus({0}, beta={beta}, threshold={th})", "unary", "composite", "float", _softplus),
        Op("logit", "torch.logit({0})", "unary", "composite", "float"),
        # The CPU's polygamma(n >= 2, x) sums -x terms left of zero (hours at -1e15): operands stop at -1e4.
        Op("polygamma", "torch.polygamma({v}, {0}.clamp(min=-1e4))", "unary", "composite", "float", _choice(1, 2)),
        *(
            _unary(n, "composite", "float", f"torch.special.{n}({{0}})")
            for n in ("i0e", "i1", "i1e", "ndtri", "log_ndtr", "erfcx", "entr")
        ),
        _unary("i0", "composite", "float"),
        # Binary
        *(_binary(n, "exact") for n in ("add", "mul", "maximum", "minimum", "fmax", "fmin", "eq", "ne")),
        *(_binary(n, "exact") for n in ("lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor")),
        _binary("sub", "exact", "nonbool"),
        _binary("add_alpha", "basic", "nonbool", "torch.add({0}, {1}, alpha={v})", _choice(2, -1, 3)),
        _binary("div", "basic"),
        _binary("div_trunc", "basic", "nonbool", "torch.div({0}, {1}, rounding_mode='trunc')"),
        _binary("div_floor", "basic", "nonbool", "torch.div({0}, {1}, rounding_mode='floor')"),
        _binary("floor_divide", "basic", "nonbool"),
        _binary("remainder", "basic", "nonbool"),
        _binary("fmod", "exact", "nonbool"),
        _binary("pow", "pow", "nonbool"),
        _binary("atan2", "elementary"),
        _binary("hypot", "basic", "float"),
        _binary("copysign", "exact"),
        _binary("nextafter", "exact", "float"),
        _binary("heaviside", "exact", "nonbool"),
        *(_binary(n, "composite", "float") for n in ("logaddexp", "logaddexp2", "xlogy")),
        *(_binary(n, "exact", "integral") for n in ("bitwise_and", "bitwise_or", "bitwise_xor")),
        *(_binary(n, "exact", "int") for n in ("bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm")),
        _binary("lerp", "basic", "float", "torch.lerp({0}, {1}, {v})", _choice(0.25, 0.5, 1.5)),
        # Ternary and masks
        Op("where", "torch.where({1}, {0}, {2})", "ternary", "exact", "any", None, ("bool", "any")),
        Op("clamp_tensor", "torch.clamp({0}, {1}, {2})", "ternary", "exact", "nonbool", None, ("tensor", "tensor")),
        Op("lerp_tensor", "torch.lerp({0}, {1}, {2})", "ternary", "basic", "float", None, ("tensor", "tensor")),
        Op("addcmul", "torch.addcmul({0}, {1}, {2}, value={v})", "ternary", "basic", "float", _choice(1, 0.5, -2)),
        Op("addcdiv", "torch.addcdiv({0}, {1}, {2}, value={v})", "ternary", "basic", "float", _choice(1, 0.5, -2)),
        Op("masked_fill", "{0}.masked_fill({1}, {v})", "binary", "exact", "any", _choice(0, 1.5, -2), ("bool",)),
        # Reductions
        Op("sum", "torch.sum({0}{rest})", "reduce", "sum", "any", _dims(), mag="torch.sum({0}.abs(){rest})"),
        Op("nansum", "torch.nansum({0}{rest})", "reduce", "sum", "float", _dims(), mag="torch.nansum({0}.abs(){rest})"),
        Op("mean", "torch.mean({0}{rest})", "reduce", "sum", "float", _dims(), mag="torch.mean({0}.abs(){rest})"),
        Op("amax", "torch.amax({0}{rest})", "reduce", "exact", "nonbool", _dims()),
        Op("amin", "torch.amin({0}{rest})", "reduce", "exact", "nonbool", _dims()),
        Op("max_values", "torch.max({0}, {dim}, keepdim={keepdim}).values", "reduce", "exact", "any", _dim),
        Op("min_indices", "torch.min({0}, {dim}, keepdim={keepdim}).indices", "reduce", "exact", "any", _dim),
        Op("max_all", "torch.max({0})", "reduce", "exact", "any"),
        Op("prod", "torch.prod({0}{rest})", "reduce", "prod", "any", _dims(tuple_ok=False, single=True)),
        Op("argmax", "torch.argmax({0}{rest})", "reduce", "exact", "nonbool", _dims(single=True)),
        Op("argmin", "torch.argmin({0}{rest})", "reduce", "exact", "nonbool", _dims(single=True)),
        Op("any", "torch.any({0}{rest})", "reduce", "exact", "any", _dims()),
        Op("all", "torch.all({0}{rest})", "reduce", "exact", "any", _dims()),
        Op("count_nonzero", "torch.count_nonzero({0}{rest})", "reduce", "exact", "any", _dims(keepdim=False)),
        *(
            Op(
                name,
                f"torch.{name}({{0}}{{rest}}, correction={{c}})",
                "reduce",
                "var",
                "float",
                lambda r, m: {**_dims()(r, m), "c": r.choice([0, 1])},
                mag="torch.mean({0}.square(){rest})" + root,
            )
            for name, root in (("var", ""), ("std", ".sqrt()"))
        ),
        Op(
            "norm",
            "torch.linalg.vector_norm({0}, ord={ord}{rest})",
            "reduce",
            "norm",
            "float",
            lambda r, m: {**_dims()(r, m), "ord": r.choice([2, 1, 3, "inf", 0.5])},
        ),
        Op(
            "logsumexp",
            "torch.logsumexp({0}{rest})",
            "reduce",
            "logsumexp",
            "float",
            _dims(required=True),
            mag="(torch.amax({0}.abs(){rest}) + 1)",
        ),
        # Scans and softmax: along one dim, {dim}
        Op(
            "cumsum",
            "torch.cumsum({0}, dim={dim})",
            "scan",
            "sum",
            "any",
            _dim,
            mag="torch.cumsum({0}.abs(), dim={dim})",
        ),
        Op("cumprod", "torch.cumprod({0}, dim={dim})", "scan", "prod", "nonbool", _dim),
        Op("cummax", "torch.cummax({0}, dim={dim}).values", "scan", "exact", "nonbool", _dim),
        Op(
            "logcumsumexp",
            "torch.logcumsumexp({0}, dim={dim})",
            "scan",
            "logsumexp",
            "float",
            _dim,
            mag="(torch.cummax({0}.abs(), dim={dim}).values + 1)",
        ),
        Op("softmax", "torch.softmax({0}, dim={dim})", "scan", "softmax", "float", _dim),
        Op(
            "log_softmax",
            "torch.log_softmax({0}, dim={dim})",
            "scan",
            "logsumexp",
            "float",
            _dim,
            mag="({0}.abs() + torch.amax({0}.abs(), dim={dim}, keepdim=True) + 1)",
        ),
        # Views
        Op("transpose", "{0}.transpose({d0}, {d1})", "view", params=_need(1, _two_dims)),
        Op("permute", "{0}.permute({perm})", "view", params=_permute),
        Op("slice", "{0}[{index}]", "view", params=_slice),
        Op("select", "{0}.select({dim}, {i})", "view", params=_need(1, lambda r, m: _select(r, m))),
        Op("unsqueeze", "{0}.unsqueeze({v})", "view", params=lambda r, m: {"v": r.randint(-m.dim() - 1, m.dim())}),
        Op(
            "squeeze",
            "{0}.squeeze({v})",
            "view",
            params=lambda r, m: {"v": r.randrange(-max(m.dim(), 1), max(m.dim(), 1))},
        ),
        Op("expand", "{0}.expand({shape})", "view", params=_expand),
        Op("diagonal", "{0}.diagonal({v}, {d0}, {d1})", "view", params=_need(2, lambda r, m: _diagonal(r, m))),
        Op("reshape", "{0}.reshape({shape})", "view", params=_reshape),
        Op("flatten", "{0}.flatten({s}, {e})", "view", params=_flatten),
        Op("movedim", "torch.movedim({0}, {d0}, {d1})", "view", params=_need(1, _two_dims)),
        # Copies
        Op("contiguous", "{0}.contiguous()", "copy"),
        Op(
            "channels_last",
            "{0}.contiguous(memory_format=torch.channels_last)",
            "copy",
            params=_need(4, lambda r, m: {}),
        ),
        Op("flip", "torch.flip({0}, {dims})", "copy", params=_flip),
        Op(
            "roll",
            "torch.roll({0}, {shift}{rest})",
            "copy",
            params=lambda r, m: {"shift": r.randint(-4, 4), **_roll(r, m)},
        ),
        Op("tril", "torch.tril({0}, {v})", "copy", params=_need(2, lambda r, m: {"v": r.randint(-2, 2)})),
        Op("triu", "torch.triu({0}, {v})", "copy", params=_need(2, lambda r, m: {"v": r.randint(-2, 2)})),
        Op("cat", "torch.cat([{0}, {1}], dim={dim})", "copy", params=_need(1, _dim), partners=("cat",)),
        Op(
            "stack",
            "torch.stack([{0}, {1}], dim={v})",
            "copy",
            params=lambda r, m: {"v": r.randint(0, m.dim())},
            partners=("same",),
        ),
        Op("to", "{0}.to(torch.{dt})", "copy", params=_to),
        # Pooling: windows over the last one to three dims
        *_pool_ops(),
    ]
    table = {op.name: op for op in ops}
    assert len(table) == len(ops), "duplicate op names"
    return table


def _select(rng: random.Random, m: torch.Tensor) -> dict | None:
    d = rng.randrange(m.dim())
    n = m.shape[d]
    return {"dim": d, "i": rng.randint(-n, n - 1)} if n else None


def _diagonal(rng: random.Random, m: torch.Tensor) -> dict:
    d0, d1 = rng.sample(range(m.dim()), 2)
    return {"v": rng.randint(-2, 2), "d0": d0, "d1": d1}


OPS = _build_ops()
KIND_WEIGHTS = {"unary": 30, "binary": 28, "ternary": 6, "reduce": 16, "scan": 6, "view": 8, "copy": 6, "pool": 6}


# --------------------------------------------------------------------------------------------
# Inputs: a flat storage of values and an as_strided view on it


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


_FP64: list[bool] = []


def fp64_ok() -> bool:
    """Whether the device has float64 (cl_khr_fp64): programs use float64 only then."""
    if not _FP64:
        _FP64.append(bool(getattr(torch.axon.get_device_properties(), "has_fp64", False)))
    return _FP64[0]


def special_values(dtype: torch.dtype) -> list:
    if dtype == torch.bool:
        return [False, True]
    if dtype.is_floating_point:
        fi = torch.finfo(dtype)
        sub = fi.smallest_normal * fi.eps
        return [math.nan, math.inf, -math.inf, 0.0, -0.0, sub, -sub, fi.smallest_normal, fi.max, fi.min, 1.0, -1.0, 0.5]
    ii = torch.iinfo(dtype)
    return [
        v for v in (0, 1, -1, ii.min, ii.max, ii.min + 1, ii.max - 1, ii.bits - 1, ii.bits) if ii.min <= v <= ii.max
    ]


def fill_storage(spec: dict) -> torch.Tensor:
    """The input's flat CPU storage: explicit ``values`` or drawn from ``fill`` (seed, style, special)."""
    dtype = DTYPES[spec["dtype"]]
    n = spec["storage"]
    if "values" in spec:
        return (
            torch.tensor(spec["values"], dtype=torch.float64 if dtype.is_floating_point else None).to(dtype).reshape(n)
        )
    fill = spec["fill"]
    g = torch.Generator().manual_seed(fill["seed"])
    style = fill["style"]
    if dtype == torch.bool:
        base = torch.rand(n, generator=g) < 0.5
    elif dtype.is_floating_point:
        fi = torch.finfo(dtype)
        if style == "ints":
            base = torch.randint(-4, 5, (n,), generator=g).double()
        elif style == "halves":
            base = torch.randint(-8, 9, (n,), generator=g).double() / 2
        elif style == "unit":
            base = torch.rand(n, generator=g, dtype=torch.float64)
        elif style == "wide":
            low, high = math.log2(fi.smallest_normal * fi.eps) - 1, math.log2(fi.max) + 1
            exps = torch.rand(n, generator=g, dtype=torch.float64) * (high - low) + low
            signs = torch.randint(0, 2, (n,), generator=g).double() * 2 - 1
            base = signs * torch.exp2(exps)
        else:
            base = torch.randn(n, generator=g, dtype=torch.float64) * fill.get("scale", 1.0)
    else:
        ii = torch.iinfo(dtype)
        if style == "full":
            base = torch.randint(ii.min, ii.max, (n,), generator=g, dtype=torch.int64)
        elif style == "shift":
            base = torch.randint(0, ii.bits + 3, (n,), generator=g)
        else:
            base = torch.randint(max(ii.min, -9), 10, (n,), generator=g)
    p = fill.get("special", 0.0)
    if p and n and dtype != torch.bool:
        specials = torch.tensor(special_values(dtype), dtype=base.dtype)
        pick = torch.randint(len(specials), (n,), generator=g)
        mask = torch.rand(n, generator=g) < p
        base = torch.where(mask, specials[pick], base)
    return base.to(dtype)


def storage_values(t: torch.Tensor) -> list:
    """A flat tensor's values as JSON numbers (exact: float16/bfloat16/float32 widen to Python floats)."""
    if t.dtype.is_floating_point:
        return t.double().tolist()
    return t.tolist()


def contiguous_strides(size) -> list[int]:
    strides, acc = [], 1
    for s in reversed(size):
        strides.append(acc)
        acc *= max(s, 1)
    return strides[::-1]


def layout_geometry(rng: random.Random, size: list[int], kind: str) -> tuple[list[int], int, int]:
    """(strides, storage offset, storage length) of one of the layouts."""
    nd = len(size)
    stride, offset = contiguous_strides(size), 0
    if kind == "offset":
        offset = rng.randint(1, 9)
    elif kind == "transposed" and nd >= 2:
        perm = list(range(nd))
        while perm == sorted(perm):
            rng.shuffle(perm)
        physical = contiguous_strides([size[p] for p in perm])
        stride = [0] * nd
        for i, p in enumerate(perm):
            stride[p] = physical[i]
    elif kind == "sliced" and nd >= 1:
        steps = [rng.choice([1, 2, 3]) for _ in size]
        physical = [s * k + rng.randint(0, 2) for s, k in zip(size, steps, strict=True)]
        base = contiguous_strides(physical)
        stride = [b * k for b, k in zip(base, steps, strict=True)]
        offset = sum(rng.randint(0, p - s * k) * b for s, k, p, b in zip(size, steps, physical, base, strict=True))
    elif kind == "expanded" and nd >= 1:
        kept = [d for d in range(nd) if rng.random() < 0.5]
        inner = contiguous_strides([size[d] for d in kept])
        stride = [0] * nd
        for d, st in zip(kept, inner, strict=True):
            stride[d] = st
    elif kind == "channels_last" and nd == 4:
        n, c, h, w = size
        c, h, w = max(c, 1), max(h, 1), max(w, 1)
        stride = [h * w * c, 1, w * c, c]
    if any(s == 0 for s in size):
        return stride, offset, offset
    return stride, offset, offset + sum((s - 1) * st for s, st in zip(size, stride, strict=True)) + 1


@contextlib.contextmanager
def float64_default(on: bool = True) -> Iterator[None]:
    """The float64 reference run: integer operands promoted to float go to float64 too (cosh of a
    uint8 is float32 by default, where e^89 / 2 overflows but cosh(89) does not)."""
    if not on:
        yield
        return
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def make_base(spec: dict, device: str, upcast: bool = False) -> torch.Tensor:
    base = fill_storage(spec)
    if upcast and base.dtype.is_floating_point:
        base = base.double()
    return base if spec.get("cpu") else base.to(device)


def view_of(base: torch.Tensor, spec: dict) -> torch.Tensor:
    return base.as_strided(spec["size"], spec["stride"], spec["offset"])


def same_layout_copy(t: torch.Tensor, device: str = "cpu", upcast: bool = False) -> torch.Tensor:
    """``t`` on ``device`` with the same storage, strides and offset (``.to`` would make it dense)."""
    if t.device.type == device and not upcast:
        return t
    n = t.untyped_storage().nbytes() // t.element_size()
    flat = t.detach().as_strided((n,), (1,), 0).to(device)
    if upcast and flat.dtype.is_floating_point:
        flat = flat.double()
    return flat.as_strided(t.shape, t.stride(), t.storage_offset())


# --------------------------------------------------------------------------------------------
# Generating programs


def _render(v: Any) -> str:
    if isinstance(v, str):
        return v  # code
    if isinstance(v, bool) or v is None:
        return repr(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "(" + "".join(f"{_render(x)}, " for x in v) + ")"
    return repr(v)


def step_expr(step: dict) -> str:
    op = OPS[step["op"]]
    args = [_render(a) if not isinstance(a, str) else a for a in step["args"]]
    return op.fmt.format(*args, **{k: _render(v) for k, v in step["params"].items()})


def program_source(prog: dict, name: str = "prog", ulps: list[float] | None = None) -> str:
    """The program as Python source; ``ulps``: per step, its result moved by that many ulps of its
    dtype (``_ulp``; a sign: one ulp that way)."""
    xs = ", ".join(f"x{i}" for i in range(len(prog["inputs"])))
    lines = [f"def {name}({xs}):"]
    if ulps is None:
        lines += [f"    v{k} = {step_expr(s)}" for k, s in enumerate(prog["steps"])]
    else:
        lines += [f"    v{k} = _ulp({step_expr(s)}, {ulps[k]!r})" for k, s in enumerate(prog["steps"])]
    lines.append(f"    return ({', '.join(prog['outputs'])},)")
    return "\n".join(lines) + "\n"


_SOURCES = [0]


def _ulp(t: Any, ulps: float) -> Any:
    """A floating tensor moved by ``ulps`` ulps of its compute type (relative eps each; the sign
    gives the direction). A float number (a float64 run's step, _first_order_bounds) gives the
    relative move itself."""
    if not isinstance(t, torch.Tensor) or not t.dtype.is_floating_point:
        return t
    if isinstance(ulps, float):
        return t * (1 + ulps)
    return t * (1 + ulps * torch.finfo(compute_dtype(t.dtype)).eps)


def program_function(prog: dict, ulps: list[float] | None = None) -> Callable:
    """The program as a function with a code object of its own (Dynamo caches per code object, and runs
    a frame eagerly past its recompile limit), its source registered for tracebacks."""
    _SOURCES[0] += 1
    filename = f"<fuzz program {_SOURCES[0]}>"
    src = program_source(prog, ulps=ulps)
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    scope = dict(NS, _ulp=_ulp)
    exec(compile(src, filename, "exec"), scope)
    return scope["prog"]


_DTYPE_WEIGHTS = {
    "float32": 40,
    "float16": 10,
    "bfloat16": 10,
    "int32": 9,
    "int64": 9,
    "bool": 8,
    "uint8": 6,
    "float64": 8,
}
_SIZES = [1, 1, 2, 3, 4, 5, 7, 8, 16, 33]


class Builder:
    """Draws one program: inputs made as operands need them, each op checked on meta tensors first."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.prog: dict = {"seed": seed, "inputs": [], "steps": [], "outputs": [], "grad": False}
        self.meta: dict[str, torch.Tensor] = {}
        self.cpu_refs: set[str] = set()
        dtypes = [d for d in _DTYPE_WEIGHTS if d != "float64" or fp64_ok()]
        self.dtypes, self.dtype_weights = dtypes, [_DTYPE_WEIGHTS[d] for d in dtypes]

    def dtype(self) -> str:
        return self.rng.choices(self.dtypes, self.dtype_weights)[0]

    def shape(self) -> list[int]:
        rng = self.rng
        nd = rng.choices([0, 1, 2, 3, 4], [8, 25, 35, 20, 12])[0]
        for _ in range(10):
            size = [rng.choice(_SIZES) for _ in range(nd)]
            if rng.random() < 0.04 and nd:
                size[rng.randrange(nd)] = 0
            if math.prod(size) <= MAX_NUMEL:
                return size
        return [rng.choice(_SIZES) for _ in range(min(nd, 1))]

    def input(self, size: list[int], dtype: str, cpu_scalar: bool = False) -> str:
        rng = self.rng
        kinds = (
            ["contiguous"] * 4
            + ["transposed", "sliced", "expanded", "offset"]
            + ["channels_last"] * 2 * (len(size) == 4)
        )
        kind = "contiguous" if cpu_scalar else rng.choice(kinds)
        stride, offset, storage = layout_geometry(rng, size, kind)
        if dtype == "bool":
            style = "bool"
        elif DTYPES[dtype].is_floating_point:
            style = rng.choices(["normal", "ints", "halves", "unit", "wide"], [50, 15, 10, 10, 15])[0]
        else:
            style = rng.choices(["small", "full", "shift"], [70, 20, 10])[0]
        fill = {"seed": rng.randrange(2**31), "style": style, "special": rng.choice([0, 0, 0.05, 0.3])}
        if style == "normal":
            fill["scale"] = rng.choice([1.0, 1.0, 1e-3, 30.0, 1e4])
        spec = {"dtype": dtype, "size": size, "stride": stride, "offset": offset, "storage": storage}
        spec.update(layout=kind, fill=fill)
        self.prog["inputs"].append(spec)
        ref = f"x{len(self.prog['inputs']) - 1}"
        if cpu_scalar:
            spec["cpu"] = True
            self.cpu_refs.add(ref)
        self.meta[ref] = torch.empty_strided(size, stride, dtype=DTYPES[dtype], device="meta")
        return ref

    def partner(self, kind: str, m: torch.Tensor, params: dict, binary: bool) -> Any:
        """An operand to go with ``m``: a Python number, a value already made, or a new input of a shape
        that broadcasts with it (a 0-dim CPU tensor only for binary ops: TensorIterator allows CPU scalars
        there, and CUDA refuses them elsewhere too)."""
        rng = self.rng
        same_dtype = dtype_name(m.dtype)
        if kind == "any" and rng.random() < 0.25:
            return self.scalar(m.dtype)
        if kind in ("any", "tensor") and rng.random() < 0.3:
            fits = [r for r, t in self.meta.items() if t.dim() <= m.dim() and (binary or r not in self.cpu_refs)]
            if fits:
                return rng.choice(fits)
        if kind == "bool":
            bools = [r for r, t in self.meta.items() if t.dtype == torch.bool and r not in self.cpu_refs]
            if bools and rng.random() < 0.4:
                return rng.choice(bools)
        size = list(m.shape)
        if kind == "cat":
            d = params["dim"] % max(m.dim(), 1)
            size[d] = rng.choice([0, 1, 2, 3])
        elif kind != "same":
            if rng.random() < 0.5:
                size = [1 if rng.random() < 0.3 else s for s in size]
            if size and rng.random() < 0.2:
                size = size[rng.randint(1, len(size)) :]
        dtype = "bool" if kind == "bool" else (same_dtype if rng.random() < 0.7 else self.dtype())
        cpu_scalar = binary and kind == "any" and not size and rng.random() < 0.3
        return self.input(size, dtype, cpu_scalar)

    def scalar(self, dtype: torch.dtype) -> Any:
        rng = self.rng
        if dtype == torch.bool:
            return rng.choice([True, False, 2, 0.5])
        if dtype.is_floating_point or rng.random() < 0.2:
            return rng.choice([0.5, 2.0, -1.5, 3.0, 0.0, -0.0, 1e-3, 1e30, 7.0, math.nan, math.inf, -math.inf])
        return rng.choice([0, 1, -1, 2, 3, 7, -128, 255, 2**31 - 1, -(2**31), 2**40])

    def operand(self) -> str:
        refs = [r for r in self.meta if r not in self.cpu_refs]
        latest = [r for r in refs if r.startswith("v")]
        if latest and self.rng.random() < 0.75:
            return latest[-1]
        return self.rng.choice(refs)

    def fits(self, op: Op, m: torch.Tensor) -> bool:
        dt = m.dtype
        return {
            "any": True,
            "float": dt.is_floating_point,
            "nonbool": dt != torch.bool,
            "integral": not dt.is_floating_point,
            "int": not dt.is_floating_point and dt != torch.bool,
        }[op.operands]

    def step(self) -> bool:
        rng = self.rng
        for _ in range(30):
            kind = rng.choices(list(KIND_WEIGHTS), list(KIND_WEIGHTS.values()))[0]
            a = self.operand()
            m = self.meta[a]
            candidates = [op for op in OPS.values() if op.kind == kind and self.fits(op, m)]
            if not candidates:
                continue
            op = rng.choice(candidates)
            params = op.params(rng, m) if op.params else {}
            if params is None:
                continue
            n_inputs = len(self.prog["inputs"])
            saved_meta, saved_cpu = dict(self.meta), set(self.cpu_refs)
            args = [a] + [self.partner(k, m, params, op.kind == "binary") for k in op.partners]
            step = {"op": op.name, "args": args, "params": params}
            out = self.meta_result(step)
            if out is None:
                del self.prog["inputs"][n_inputs:]
                self.meta, self.cpu_refs = saved_meta, saved_cpu
                continue
            self.prog["steps"].append(step)
            self.meta[f"v{len(self.prog['steps']) - 1}"] = out
            return True
        return False

    def meta_result(self, step: dict) -> torch.Tensor | None:
        try:
            with _quiet():
                out = eval(step_expr(step), dict(NS), dict(self.meta))
        except Exception:
            return None
        if not isinstance(out, torch.Tensor) or out.numel() > MAX_NUMEL:
            return None
        return out

    def build(self) -> dict:
        rng = self.rng
        self.input(self.shape(), self.dtype())
        for _ in range(rng.choice([1, 1, 2, 2, 3, 4])):
            self.step()
        if not self.prog["steps"]:  # the first input fits no op that was drawn: one that always applies
            self.prog["steps"].append({"op": "isnan", "args": ["x0"], "params": {}})
        used = {a for s in self.prog["steps"] for a in s["args"] if isinstance(a, str)}
        outs = [f"v{k}" for k in range(len(self.prog["steps"])) if f"v{k}" not in used]
        self.prog["outputs"] = outs
        floats = any(DTYPES[s["dtype"]].is_floating_point and not s.get("cpu") for s in self.prog["inputs"])
        self.prog["grad"] = floats and rng.random() < 0.3
        return self.prog


def generate(seed: int) -> dict:
    return Builder(seed).build()


# --------------------------------------------------------------------------------------------
# Running and comparing


@dataclass
class Finding:
    """One difference: ``mode`` it showed in, ``kind`` (mismatch, dtype, shape, stride, alias,
    one-sided-error, error-class, timeout), the ``op`` of the failing step (eager) or the program's ops
    joined by ``+``, and a one-line ``detail``."""

    mode: str
    kind: str
    op: str
    detail: str
    program: dict
    step: int | None = None
    dtypes: tuple[str, ...] = ()
    known: str | None = None
    upstream: bool = False
    repeats: int = 0  # later programs that failed the same way (same mode, kind, op and dtypes)
    # Eager findings: the step's operands as the CPU got them, and both results (for KNOWN's checks).
    step_inputs: list | None = field(default=None, repr=False)
    results: tuple | None = field(default=None, repr=False)

    def signature(self) -> tuple:
        return (self.mode, self.kind, self.op if self.step is not None else None)

    def record(self) -> dict:
        keys = ("mode", "kind", "op", "detail", "known", "upstream", "program")
        return {k: getattr(self, k) for k in keys}


def _eps(dtype: torch.dtype) -> float:
    return torch.finfo(dtype).eps if dtype.is_floating_point else 0.0


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """Half-precision ops compute in float on both sides (PyTorch's opmath type) and round once."""
    return torch.float32 if dtype in HALF else dtype


def step_ulps(op: Op, step: dict, x: Any, out: torch.Tensor) -> float:
    """The op's error budget in ulps of its compute type; a reduction of n terms in any order is within
    (n - 1) ulps of the terms' magnitude (Higham, Accuracy and Stability, 4.2), n + 4 here."""
    if op.accuracy in ULPS:
        return ULPS[op.accuracy]
    if not isinstance(x, torch.Tensor):
        return 4
    if op.kind == "reduce":
        n = max(x.numel(), 1) // max(out.numel(), 1)
    elif op.kind == "pool":
        n = step["params"]["n"]
    else:
        n = x.shape[step["params"]["dim"]] if x.dim() else 1
    return n + 4 + (8 if op.accuracy == "softmax" else 0)


def tolerance(op: Op, step: dict, out: torch.Tensor, inputs64: Callable[[], list]) -> tuple[Any, float]:
    """(atol, rtol) for one op's floating result. atol is the smallest normal number for functions (their
    results are accurate relative to themselves; flushing subnormal results to zero is allowed by OpenCL
    for float), the budget at the scale 1 for composite ones, and for sums, means, variances and
    logsumexp a tensor: the budget times the magnitude the terms have (``Op.mag``, in float64)."""
    dtype = out.dtype
    if not dtype.is_floating_point:
        return 0.0, 0.0
    eps_c = _eps(compute_dtype(dtype))
    half = _eps(dtype) if dtype in HALF else 0.0
    xs = inputs64()
    budget = step_ulps(op, step, xs[0] if xs else None, out) * eps_c
    if budget == 0:
        return 0.0, 0.0
    if op.accuracy == "composite":
        return budget, budget + half
    if op.mag is None:
        return torch.finfo(dtype).tiny, budget + half
    mag = _magnitude(op, step, xs[0])
    if mag is None:  # an empty reduction: nothing to scale with
        return torch.finfo(dtype).tiny, budget + half
    return budget * mag, budget + half


def _magnitude(op: Op, step: dict, x: Any) -> torch.Tensor | None:
    """The magnitude a reduction's rounding error scales with (``Op.mag`` of operand ``x``), in
    float64, or None where it has none (an empty reduction)."""
    try:
        mag = _apply(op.mag, step, x)
    except Exception:  # noqa: BLE001  (a time limit is a BaseException and goes on up)
        return None
    return mag.double().abs().nan_to_num(nan=0.0)


def _close(a: torch.Tensor, b: torch.Tensor, atol: Any, rtol: float) -> torch.Tensor:
    """Elementwise |a - b| <= atol + rtol |b| for finite values; NaN equals NaN, infinities themselves."""
    with _quiet():
        ok = ((a - b).abs() <= atol + rtol * b.abs()) & a.isfinite() & b.isfinite()
    return ok | (a == b) | (a.isnan() & b.isnan())


def compare_values(
    a: torch.Tensor,
    c: torch.Tensor,
    tol: tuple[Any, float],
    ref: torch.Tensor | None = None,
    also: torch.Tensor | None = None,
    zero_sign: bool = False,
) -> str | None:
    """None if the axon result ``a`` matches the CPU's ``c``, else the first differing element.

    ``ref``: the float64 run; where ``c`` is not ``ref`` rounded to the dtype, ``a`` may be as far from it
    as twice ``c`` is (and anything where the CPU's value is NaN or infinite and the float64 one is not).
    ``also``: another acceptable result (eager axon, for compiled ones)."""
    if a.numel() == 0:
        return None
    atol, rtol = tol
    if a.dtype.is_floating_point:
        a64, c64 = a.double(), c.double()
        ok = _close(a64, c64, atol, rtol)
        if zero_sign:
            ok &= ~((a64 == 0) & (c64 == 0)) | (a64.signbit() == c64.signbit())
        if also is not None:
            ok |= _close(a64, also.double(), atol, rtol)
        if ref is not None:
            r = ref.to(a.dtype).double()
            with _quiet():
                c_err, a_err = (c64 - r).abs(), (a64 - r).abs()
            ok |= _close(a64, r, atol, rtol) | (a_err <= 2 * c_err) | (c_err.isnan() & ~(c64 == r))
    else:
        ok = a == c
        if also is not None:
            ok |= a == also
        if ref is not None:
            r = ref.to(a.dtype)
            ok |= (a == r) | (c != r)
    if bool(ok.all()):
        return None
    bad = (~ok).nonzero()
    at = tuple(bad[0].tolist())
    text = f"{len(bad)} of {a.numel()} elements differ; at {list(at)} axon {a[at].item()!r}, cpu {c[at].item()!r}"
    return text + (f", float64 {ref[at].item()!r}" if ref is not None else "")


def _error(e: BaseException) -> str:
    text = str(e).strip().split("\n\n")[0].split("\n")[0]
    return f"{type(e).__name__}: {text[:200]}"


def _cpu_lacks_kernel(e: BaseException) -> bool:
    return isinstance(e, (NotImplementedError, RuntimeError)) and "not implemented for" in str(e)


def _dense(t: Any) -> bool:
    """Non-overlapping and dense: some permutation of the dims is contiguous (a Python number is)."""
    if not isinstance(t, torch.Tensor) or t.numel() == 0:
        return True
    expected = 1
    for stride, size in sorted((st, s) for s, st in zip(t.shape, t.stride(), strict=True) if s != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _shares(out: torch.Tensor, args: list) -> bool:
    ptr = out.untyped_storage().data_ptr()
    return bool(ptr) and any(isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() == ptr for t in args)


def _strides_differ(a: torch.Tensor, c: torch.Tensor, with_offset: bool) -> str | None:
    """Strides of dims longer than 1 (others are arbitrary) and, for views, the storage offset."""
    if a.numel() == 0:
        return None
    sa = [st for s, st in zip(a.shape, a.stride(), strict=True) if s > 1]
    sc = [st for s, st in zip(c.shape, c.stride(), strict=True) if s > 1]
    if sa != sc or (with_offset and a.storage_offset() != c.storage_offset()):
        return f"axon strides {a.stride()} offset {a.storage_offset()}, cpu {c.stride()} offset {c.storage_offset()}"
    return None


def _call(code, env: dict) -> tuple[Any, BaseException | None]:
    try:
        with _quiet():
            return eval(code, dict(NS), env), None
    except PairTimeout:
        raise
    except Exception as e:
        return None, e


def _weights(o: torch.Tensor, i: int) -> torch.Tensor:
    """A fixed output gradient (ones would hide a transposed or broadcast backward)."""
    g = torch.Generator().manual_seed(1234 + i)
    return (torch.rand(o.shape, generator=g, dtype=torch.float64) * 2 - 1).to(o.dtype).to(o.device)


@dataclass
class Run:
    """A whole program's outputs (or gradients) copied to the CPU, or the exception it raised."""

    values: list | None
    error: BaseException | None = None


class Runner:
    """Runs programs in the modes asked, counts them, and turns differences into findings."""

    def __init__(self):
        self.counts: dict[str, Counter] = {}
        self.fallbacks: Counter = Counter()
        self.ops_seen: Counter = Counter()
        self.compiled_runs = 0

    def count(self, mode: str, what: str) -> None:
        self.counts.setdefault(mode, Counter())[what] += 1

    def eager(self, prog: dict) -> Finding | None:
        """Op by op on axon; each op also on the CPU on copies of exactly the tensors axon gave it."""
        env: dict[str, Any] = {f"x{i}": view_of(make_base(s, AXON), s) for i, s in enumerate(prog["inputs"])}
        for k, step in enumerate(prog["steps"]):
            op = OPS[step["op"]]
            code = compile(step_expr(step), f"<fuzz step {k}>", "eval")
            refs = list(dict.fromkeys(a for a in step["args"] if isinstance(a, str)))
            axon_args = {r: env[r] for r in refs}
            cpu_args = {r: same_layout_copy(t) for r, t in axon_args.items()}
            a_out, a_exc = _call(code, axon_args)
            c_out, c_exc = _call(code, cpu_args)
            dtypes = tuple(dtype_name(cpu_args[r].dtype) for r in refs)

            def found(kind: str, detail: str, k=k, step=step, dtypes=dtypes, cpu_args=cpu_args, res=None) -> Finding:
                return Finding(
                    "eager", kind, step["op"], detail, prog, k, dtypes, step_inputs=[cpu_args, step], results=res
                )

            if a_exc or c_exc:
                if a_exc and c_exc:
                    if type(a_exc) is not type(c_exc):
                        return found("error-class", f"axon {_error(a_exc)}; cpu {_error(c_exc)}")
                    return None  # both refuse the program: nothing after this step to run
                if c_exc and _cpu_lacks_kernel(c_exc):
                    self.count("eager", "cpu-lacks-kernel")
                    return None
                side, e = ("axon", a_exc) if a_exc else ("cpu", c_exc)
                return found("one-sided-error", f"only {side} raises {_error(e)}")
            if a_out.dtype != c_out.dtype:
                return found("dtype", f"axon {a_out.dtype}, cpu {c_out.dtype}")
            if a_out.shape != c_out.shape:
                return found("shape", f"axon {tuple(a_out.shape)}, cpu {tuple(c_out.shape)}")
            a_cpu = same_layout_copy(a_out)
            inputs64: list = []

            def upcast(inputs64=inputs64, cpu_args=cpu_args, refs=refs) -> list:
                if not inputs64:
                    inputs64.extend(same_layout_copy(cpu_args[r], upcast=True) for r in refs)
                return inputs64

            tol = tolerance(op, step, c_out, upcast)
            exact = op.accuracy == "exact" and op.kind != "reduce"
            diff = compare_values(a_cpu, c_out, tol, zero_sign=exact)
            if diff:
                with float64_default():
                    ref, _ = _call(code, dict(zip(refs, upcast(), strict=True)))
                if isinstance(ref, torch.Tensor) and ref.shape == c_out.shape:
                    diff = compare_values(a_cpu, c_out, tol, ref=ref)
                if diff:
                    return found("mismatch", diff, res=(a_cpu, c_out, tol))
            pointwise = op.layout and (op.kind in ("unary", "binary", "ternary") or op.name in ("cat", "stack"))
            if op.kind == "view" or (pointwise and all(_dense(t) for t in cpu_args.values())):
                bad = _strides_differ(a_out, c_out, op.kind == "view")
                if bad:
                    return found("stride", bad)
            if op.kind in ("view", "copy"):
                a_alias, c_alias = _shares(a_out, list(axon_args.values())), _shares(c_out, list(cpu_args.values()))
                if a_alias != c_alias:
                    return found("alias", f"axon's result {'is' if a_alias else 'is not'} a view of its input")
            env[f"v{k}"] = a_out
        return None

    def values(self, prog: dict, device: str, upcast: bool = False) -> dict[str, Any] | None:
        """Every input and step result of the program run eagerly, or None if a step raises."""
        env: dict[str, Any] = {f"x{i}": view_of(make_base(s, device, upcast), s) for i, s in enumerate(prog["inputs"])}
        for k, step in enumerate(prog["steps"]):
            out, exc = _call(step_expr(step), env)
            if exc:
                return None
            env[f"v{k}"] = out
        return env

    def whole(self, prog: dict, fn: Callable, device: str, upcast: bool = False, grad: bool = False) -> Run:
        """``fn``'s outputs on the program's inputs or, with ``grad``, the gradients of the floating
        inputs' storages (zeros where unused) for fixed random output gradients."""
        bases = [make_base(spec, device, upcast) for spec in prog["inputs"]]
        if grad:
            bases = [
                b.clone().requires_grad_(b.dtype.is_floating_point and not s.get("cpu"))
                for b, s in zip(bases, prog["inputs"], strict=True)
            ]
        xs = [view_of(b, s) for b, s in zip(bases, prog["inputs"], strict=True)]
        try:
            with _quiet(), float64_default(upcast):
                outs = list(fn(*xs))
                if not grad:
                    return Run([same_layout_copy(o.detach()) for o in outs])
                leaves = [b for b in bases if b.requires_grad]
                diff = [o for o in outs if o.requires_grad]
                if not diff:
                    return Run([])
                grads = torch.autograd.grad(
                    diff, leaves, [_weights(o, i) for i, o in enumerate(diff)], allow_unused=True
                )
                grads = [torch.zeros_like(lf) if g is None else g for g, lf in zip(grads, leaves, strict=True)]
                return Run([same_layout_copy(g.detach()) for g in grads])
        except PairTimeout:
            raise
        except Exception as e:
            return Run(None, e)

    def compare_whole(self, mode: str, prog: dict, got: Run, cpu: Run, ref: Callable[[], Run], tol, also=None):
        """A finding if ``got`` (axon) differs from ``cpu``; ``ref`` runs the float64 program if needed."""
        ops = "+".join(s["op"] for s in prog["steps"])
        dtypes = tuple(sorted({s["dtype"] for s in prog["inputs"]}))

        def found(kind: str, detail: str) -> Finding:
            return Finding(mode, kind, ops, detail, prog, dtypes=dtypes)

        if got.error or cpu.error:
            if got.error and cpu.error:
                return None
            if cpu.error and _cpu_lacks_kernel(cpu.error):
                self.count(mode, "cpu-lacks-kernel")
                return None
            side, e = ("axon", got.error) if got.error else ("cpu", cpu.error)
            return found("one-sided-error", f"only {side} raises {_error(e)}")
        refs: Run | None = None
        for i, (a, c) in enumerate(zip(got.values, cpu.values, strict=True)):
            name = f"result {i}"
            if a.dtype != c.dtype:
                return found("dtype", f"{name}: axon {a.dtype}, cpu {c.dtype}")
            if a.shape != c.shape:
                return found("shape", f"{name}: axon {tuple(a.shape)}, cpu {tuple(c.shape)}")
            other = also[i] if also is not None and also[i].shape == a.shape else None
            diff = compare_values(a, c, tol(i, c), also=other)
            if diff:
                refs = refs or ref()
                r = refs.values[i] if refs.values is not None and refs.values[i].shape == c.shape else None
                diff = compare_values(a, c, tol(i, c), ref=r, also=other)
            if diff:
                return found("mismatch", f"{name}: {diff}")
        return None


def chain_tolerance(prog: dict, env: dict[str, Any] | None, gradient: bool):
    """tol(i, c): the tolerance of a whole program's i-th result. The budgets of the ops it depends on
    add up (errors of a chain add to first order) plus a half-precision rounding for each step whose
    result is float16/bfloat16 (eager rounds there, compiled code keeps float); absolute against the
    largest finite value among its operands and intermediate results (where a cancellation loses
    precision). Gradients run the chain forward and back: twice that, absolute against the largest
    finite element of the CPU's gradient itself (at least 1, the output gradients' scale). Each
    term of a gradient is an output gradient times local derivatives, so its magnitude shows in
    the gradient; the forward values do not bound it, and an input holding 3.4e38 made the
    tolerance of every gradient element of the program 1e32 or so. Exponentials of differences
    (softmax's and logsumexp's backward) scale it by their arguments' magnitude."""
    steps = prog["steps"]

    def budget(refs: set[str]) -> tuple[float, float, float, float]:
        ulps, halves, scale, eps = 0.0, 0.0, 1.0, 0.0
        for r in refs:
            v = env.get(r) if env else None
            if r.startswith("v"):
                step = steps[int(r[1:])]
                first = env.get(step["args"][0]) if env and isinstance(step["args"][0], str) else None
                out = v if isinstance(v, torch.Tensor) else torch.empty(0)
                ulps += step_ulps(OPS[step["op"]], step, first, out) + 1
                halves += _eps(v.dtype) if isinstance(v, torch.Tensor) and v.dtype in HALF else 0.0
            if isinstance(v, torch.Tensor) and v.dtype.is_floating_point and v.numel():
                finite = v.detach().double().abs().nan_to_num(nan=0.0, posinf=0.0)
                scale = max(scale, float(finite.max()))
                eps = max(eps, _eps(compute_dtype(v.dtype)))
        return ulps, halves, scale, eps

    everything = set(env) if env else {f"v{k}" for k in range(len(steps))}
    per_output = [budget(everything if gradient else _ancestors(steps, o)) for o in prog["outputs"]]
    # The backward of softmax, log_softmax, logsumexp and logcumsumexp takes exp(x - result): float32
    # gets that difference within eps |x|, so the gradient is as far off relatively, times |x|.
    exp_conditioning = 1.0
    for step in steps if gradient and env else []:
        first = env.get(step["args"][0]) if isinstance(step["args"][0], str) else None
        if OPS[step["op"]].accuracy in ("softmax", "logsumexp") and isinstance(first, torch.Tensor) and first.numel():
            finite = first.detach().double().abs().nan_to_num(nan=0.0, posinf=0.0)
            exp_conditioning = max(exp_conditioning, 1.0 + float(finite.max()))

    bounds: list | None = None

    def tol(i: int, c: torch.Tensor) -> tuple[Any, float]:
        nonlocal bounds
        if not c.dtype.is_floating_point:
            return 0.0, 0.0
        if not gradient and env is not None and i < len(prog["outputs"]):
            if bounds is None:
                # Pointwise chains moved whole (correlated operands cancel there), else carried step by step.
                bounds = _first_order_bounds(prog, env)
                if any(b is None for b in bounds):
                    with float64_default():
                        env64 = Runner().values(prog, "cpu", upcast=True)
                    carried = _propagated_bounds(prog, env, env64)
                    bounds = [w if w is not None else p for w, p in zip(bounds, carried, strict=True)]
            if bounds[i] is not None and bounds[i].shape == c.shape:
                # Each side is within the bound of the exact result, so within twice it of the other;
                # both round the result to its dtype.
                return 2 * bounds[i], 2 * _eps(c.dtype)
        ulps, halves, scale, eps = per_output[min(i, len(per_output) - 1)]
        factor = 2.0 if gradient else 1.0
        # The precision of the narrowest float on the way (a float32 chain's gradient into a float64 input).
        rtol = factor * (ulps * max(eps, _eps(compute_dtype(c.dtype))) + halves)
        if gradient:
            finite = c.detach().double().abs().nan_to_num(nan=0.0, posinf=0.0)
            scale = (max(1.0, float(finite.max())) if c.numel() else 1.0) * exp_conditioning
        return rtol * scale, rtol

    return tol


POINTWISE_KINDS = frozenset({"unary", "binary", "ternary", "view", "copy"})


def _first_order_bounds(prog: dict, env: dict[str, Any]) -> list[torch.Tensor | None]:
    """Per output, where every step it depends on is pointwise, a view or a copy (each element of a
    result then comes from one element of each operand), a per-element bound on the error of a
    float32 run: the sum over those steps of how far the output moves, in a float64 run, when that
    step's result alone is moved by the step's error budget (its ulps, one more for rounding, and a
    half-precision rounding for a float16/bfloat16 result). To first order this is the error the
    steps' roundings can cause at that element, a cancellation included ((x + 3e38) - 3e38 moves by
    3e38 ulps there and by nothing elsewhere); a discontinuity near a value (floor, a comparison)
    shows as a large move, which allows either side. None for other outputs (and for programs with
    a composite function, whose budget is absolute): they keep the chain's scale (chain_tolerance)."""
    steps = prog["steps"]
    runner = Runner()
    fn = program_function(prog, [0.0] * len(steps))
    base = runner.whole(prog, fn, "cpu", upcast=True)
    if base.values is None:
        return [None] * len(prog["outputs"])
    moves = []
    for k, step in enumerate(steps):
        v = env.get(f"v{k}")
        if not isinstance(v, torch.Tensor) or not v.dtype.is_floating_point:
            moves.append(None)
            continue
        first = env.get(step["args"][0]) if isinstance(step["args"][0], str) else None
        ulps = step_ulps(OPS[step["op"]], step, first, v) + 1
        half = _eps(v.dtype) if v.dtype in HALF else 0.0
        delta = [0.0] * len(steps)
        delta[k] = ulps * _eps(compute_dtype(v.dtype)) + half
        moved = runner.whole(prog, program_function(prog, delta), "cpu", upcast=True)
        if moved.values is None:
            return [None] * len(prog["outputs"])
        moves.append(moved.values)
    bounds: list[torch.Tensor | None] = []
    for i, out in enumerate(prog["outputs"]):
        reach = [int(r[1:]) for r in _ancestors(steps, out) if r.startswith("v")]
        # Composite functions' budgets are absolute (chain_tolerance), which a relative move misses.
        ops = [OPS[steps[k]["op"]] for k in reach]
        pointwise = all(op.kind in POINTWISE_KINDS and op.accuracy != "composite" for op in ops)
        moved = [moves[k][i] for k in reach if moves[k] is not None]
        exact = base.values[i]
        if not pointwise or not exact.is_floating_point() or any(m.shape != exact.shape for m in moved):
            bounds.append(None)
            continue
        total = torch.zeros(exact.shape, dtype=torch.float64)
        for m in moved:
            a, b = m.double(), exact.double()
            total += torch.where(a == b, 0.0, (a - b).abs()).nan_to_num(nan=math.inf)
        bounds.append(total)
    return bounds


# Ops whose result at an element is a sum of operand elements with weights >= 0 (the same op of
# the operands' error bounds bounds the error it carries) and ops whose result is one of its operand's
# elements (its error is at most the window's largest bound: amax of the bounds; amin's is -amin(-E)).
_LINEAR_POSITIVE = frozenset({"sum", "nansum", "mean", "cumsum", "avg_pool1d", "avg_pool2d", "avg_pool3d"})
_SELECTING = frozenset({"amax", "max_values", "max_all", "cummax", "max_pool1d", "max_pool2d"})
_SELECTING_MIN = frozenset({"amin"})


def _apply(fmt: str, step: dict, x: torch.Tensor) -> torch.Tensor:
    """``fmt`` (an expression, ``{0}`` the operand) with the step's params, evaluated on ``x``."""
    params = {k: _render(v) for k, v in step["params"].items()}
    value, exc = _call(fmt.format("x", **params), {"x": x})
    if exc is not None:
        raise exc
    return value


# How a reduction or scan carries its operand's per-element error bound ``e`` (operand ``x`` and
# exact result ``y`` in float64) to a bound on its result's move, each rigorous for any move
# within ``e``, not only to first order:
def _carry_monotone(op: Op, step: dict, x: torch.Tensor, e: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """logsumexp and logcumsumexp are nondecreasing in every element: the two extremes bound any move."""
    return torch.maximum(_moved(_apply(op.fmt, step, x + e), y), _moved(_apply(op.fmt, step, x - e), y))


def _carry_norm(op: Op, step: dict, x: torch.Tensor, e: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """A vector norm of any order (0.5 included) is nondecreasing in every element's magnitude."""
    larger, smaller = x.abs() + e, (x.abs() - e).clamp(min=0.0)
    return torch.maximum(_moved(_apply(op.fmt, step, larger), y), _moved(_apply(op.fmt, step, smaller), y))


def _carry_product(op: Op, step: dict, x: torch.Tensor, e: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """prod(x + d) - prod(x), expanded, is a sum of products of |x|s and |d|s: at most
    prod(|x| + e) - prod(|x|)."""
    return _moved(_apply(op.fmt, step, x.abs() + e), _apply(op.fmt, step, x.abs()))


def _window_max(step: dict, e: torch.Tensor) -> torch.Tensor:
    return _apply("torch.amax({0}, dim={dim}, keepdim=True)", step, e)


def _carry_softmax(op: Op, step: dict, x: torch.Tensor, e: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """softmax(x)_i = exp(x_i - lse(x)): its logarithm moves by at most e_i + max(e), the moves of
    x_i and of logsumexp, so the result by y (exp of that - 1)."""
    return y * torch.expm1(e + _window_max(step, e))


def _carry_log_softmax(op: Op, step: dict, x: torch.Tensor, e: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return e + _window_max(step, e)


def _carry_deviation(op: Op, step: dict, x: torch.Tensor, e: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """std is the 2-norm of the centred operand over sqrt(n - correction), and centring does not
    lengthen a vector: std moves by at most sqrt(sum(e^2) / (n - c)), var = std^2 by 2 std ds + ds^2."""
    n = x.numel() // max(y.numel(), 1) - step["params"]["c"]
    ds = (_apply("torch.sum({0}{rest})", step, e.square()) / n).sqrt() if n > 0 else torch.full_like(y, math.inf)
    return ds if op.name == "std" else 2 * y.sqrt() * ds + ds.square()


_CARRY_RULES: dict[str, Callable[..., torch.Tensor]] = {
    "logsumexp": _carry_monotone,
    "logcumsumexp": _carry_monotone,
    "norm": _carry_norm,
    "prod": _carry_product,
    "cumprod": _carry_product,
    "softmax": _carry_softmax,
    "log_softmax": _carry_log_softmax,
    "var": _carry_deviation,
    "std": _carry_deviation,
}


def _moved(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """|a - b| elementwise in float64: 0 where equal (infinities of one sign, NaN and NaN), inf where
    one is NaN."""
    a, b = a.double(), b.double()
    return torch.where((a == b) | (a.isnan() & b.isnan()), 0.0, (a - b).abs()).nan_to_num(nan=math.inf)


def _own_error(op: Op, step: dict, first: Any, real: torch.Tensor, exact: torch.Tensor, operand: Any) -> torch.Tensor:
    """How far one side's result of the step may lie from the step's exact result on the same
    operands, per element: its error budget (``tolerance``'s terms) plus one ulp of rounding and,
    for a float16/bfloat16 result, a half-precision rounding."""
    budget = (step_ulps(op, step, first, real) + 1) * _eps(compute_dtype(real.dtype))
    half = _eps(real.dtype) if real.dtype in HALF else 0.0
    size = exact.double().abs().nan_to_num(nan=0.0, posinf=0.0)
    own = (budget + half) * size + torch.finfo(real.dtype).tiny
    if op.accuracy == "composite":
        own = own + budget
    elif op.mag is not None and (mag := _magnitude(op, step, operand)) is not None:
        own = own + budget * mag
    return own


def _propagated_bounds(prog: dict, env: dict[str, Any], env64: dict[str, Any] | None) -> list[torch.Tensor | None]:
    """Per output, a per-element bound on the error of a run in the program's dtypes, carried step by
    step through the float64 run: each step's result is off by its own error (``_own_error``) plus
    what its operands' errors cause. A pointwise step carries each operand's bound by moving that
    operand by it, both ways, and taking the larger move (nonlinear and discontinuous ops included:
    a floor near an integer shows the jump); views and copies carry the bounds as they carry values;
    sums, means, cumulative sums and average pooling add the bounds as they add values; maxima take
    the window's largest bound; products, variances, norms, softmax and logsumexp by the rules of
    ``_CARRY_RULES``. None where a step is none of these or an integer or bool result could change
    (its operands' bounds are not all zero): chain_tolerance's scale then.
    Unlike _first_order_bounds this covers reductions, where moving all of a step's elements one way
    can cancel in a sum (x - y summed moves by nothing when both move alike)."""
    steps = prog["steps"]
    if env64 is None:
        return [None] * len(prog["outputs"])
    bound: dict[str, torch.Tensor | None] = {}
    for name, value in env64.items():
        if name.startswith("x") and isinstance(value, torch.Tensor):
            bound[name] = torch.zeros(value.shape, dtype=torch.float64)
    for k, step in enumerate(steps):
        bound[f"v{k}"] = _step_bound(step, env, env64, bound, f"v{k}")
    return [bound.get(out) for out in prog["outputs"]]


def _step_bound(step: dict, env: dict, env64: dict, bound: dict, name: str) -> torch.Tensor | None:
    op = OPS[step["op"]]
    real, exact = env.get(name), env64.get(name)
    if not isinstance(real, torch.Tensor) or not isinstance(exact, torch.Tensor):
        return None
    refs = [a for a in step["args"] if isinstance(a, str)]
    if any(bound.get(r) is None for r in refs):
        return None
    code = step_expr(step)
    with _quiet(), float64_default():
        if not any(bound[r].any() for r in refs):
            # Exact operands (integer inputs, say): only the step's own error, whatever the op.
            carried, exc = torch.zeros(exact.shape, dtype=torch.float64), None
        elif op.name in _CARRY_RULES:
            try:
                carried, exc = _CARRY_RULES[op.name](op, step, env64[refs[0]], bound[refs[0]], exact.double()), None
            except Exception as e:  # a time limit is a BaseException and goes on up
                carried, exc = None, e
        elif (
            op.name in _LINEAR_POSITIVE
            or op.name in _SELECTING
            or op.kind == "view"
            or (op.kind == "copy" and op.name != "to")
        ):
            carried, exc = _call(code, {**env64, **{r: bound[r] for r in refs}})
        elif op.name in _SELECTING_MIN:
            carried, exc = _call(code, {**env64, **{r: -bound[r] for r in refs}})
            carried = None if exc else -carried
        elif op.kind in ("unary", "binary", "ternary") or op.name == "to":
            carried, exc = torch.zeros(exact.shape, dtype=torch.float64), None
            for r in refs:
                if not bound[r].any():
                    continue
                largest = torch.zeros(exact.shape, dtype=torch.float64)
                for sign in (1, -1):
                    moved, exc = _call(code, {**env64, r: env64[r] + sign * bound[r]})
                    if exc or not isinstance(moved, torch.Tensor) or moved.shape != exact.shape:
                        return None
                    largest = torch.maximum(largest, _moved(moved, exact))
                carried = carried + largest
        else:
            return None
        if exc or not isinstance(carried, torch.Tensor) or carried.shape != exact.shape:
            return None
    # A window over padding alone takes the maximum of nothing (-inf): no error carried there.
    carried = carried.double().nan_to_num(nan=math.inf).clamp(min=0.0)
    if not real.dtype.is_floating_point:
        return carried if not carried.any() else None
    first = env.get(refs[0]) if refs else None
    operand = env64.get(refs[0]) if refs else None
    return carried + _own_error(op, step, first, real, exact, operand)


def _ancestors(steps: list[dict], ref: str) -> set[str]:
    """``ref`` and every input (``x``) and step result (``v``) it is computed from."""
    seen, todo = set(), [ref]
    while todo:
        r = todo.pop()
        if r in seen:
            continue
        seen.add(r)
        if r.startswith("v"):
            todo.extend(a for a in steps[int(r[1:])]["args"] if isinstance(a, str))
    return seen


# --------------------------------------------------------------------------------------------
# Known differences


@dataclass(frozen=True)
class Known:
    """A documented difference: findings of ``kind`` at one of ``ops`` (any op of the program for
    whole-program modes), in ``modes``, with an operand of ``dtypes`` (None: any), whose detail contains
    ``text`` and, where ``confirm`` is given, that it confirms (an eager mismatch: every differing
    element explained)."""

    reason: str
    kind: str
    ops: frozenset[str]
    modes: frozenset[str] | None = None
    dtypes: frozenset[str] | None = None
    text: str = ""
    confirm: Callable[[Finding], bool] | None = None

    def matches(self, f: Finding) -> bool:
        if f.kind != self.kind or self.text not in f.detail:
            return False
        if self.modes is not None and f.mode not in self.modes:
            return False
        ops = {f.op} if f.step is not None else set(f.op.split("+"))
        if not ops & self.ops or (self.dtypes is not None and not set(f.dtypes) & self.dtypes):
            return False
        if self.confirm is None:
            return True
        try:
            return bool(self.confirm(f))
        except Exception:  # a check that does not apply to this finding's shape of program
            return False


def _differing(f: Finding) -> tuple[torch.Tensor, list[torch.Tensor], torch.Tensor]:
    """(mask of the differing elements, the step's tensor operands broadcast to the result, axon's result)."""
    a, c, (atol, rtol) = f.results
    mask = ~_close(a.double(), c.double(), atol, rtol)
    ops = []
    for t in f.step_inputs[0].values():
        try:
            ops.append(t.expand(a.shape))
        except RuntimeError:  # a reduction's operand
            ops.append(t)
    return mask, ops, a


def _large_argument(f: Finding) -> bool:
    """Eager: every differing element's argument is beyond e^x's range; gradients: some input is."""
    if f.results is None:
        return any(
            bool((fill_storage(s).double().abs() > 80).any())
            for s in _explicit(f.program)["inputs"]
            if s["dtype"] in FLOATS
        )
    mask, (x, *_), _ = _differing(f)
    limit = 700.0 if x.dtype == torch.float64 else 80.0
    return bool((x.double()[mask].abs() > limit).all())


def _subnormal_argument(f: Finding) -> bool:
    if f.results is None:
        return False
    mask, (x, *_), _ = _differing(f)
    tiny = torch.finfo(x.dtype if x.dtype.is_floating_point else torch.float32).tiny
    return bool((x.double()[mask].abs() < tiny).all())


def _float_scan(op: str, x: torch.Tensor, dim: int) -> torch.Tensor:
    """The scan accumulated in float32, element after element (numpy's cumsum / cumprod)."""
    import numpy as np

    scan = np.cumprod if op == "cumprod" else np.cumsum
    with np.errstate(all="ignore"):
        return torch.from_numpy(scan(x.float().numpy(), axis=dim, dtype=np.float32))


def _float_accumulation(f: Finding) -> bool:
    """Whether axon's scan values are those of a float32 accumulator (numpy's in float32) where they
    differ from the CPU's; for gradients, whether the program's forward cumprod already differs so."""
    if f.results is not None:
        mask, (x, *_), a = _differing(f)
        dim = f.step_inputs[1]["params"]["dim"]
        if x.dim() == 0 or not x.dtype.is_floating_point:
            return False
        emulated = _float_scan(f.op, x, dim).to(a.dtype).double()
        return bool(_close(a.double(), emulated, 0.0, (x.shape[dim] + 4) * 1.2e-7)[mask].all())
    prog = _explicit(f.program)
    runner = Runner()
    cpu, axon = runner.values(prog, "cpu"), runner.values(prog, AXON)
    if cpu is None or axon is None:
        return False
    for k, step in enumerate(prog["steps"]):
        x, a, c = axon.get(step["args"][0]), axon[f"v{k}"], cpu[f"v{k}"]
        if step["op"] == "cumprod" and isinstance(x, torch.Tensor) and x.dim() and x.dtype.is_floating_point:
            a = same_layout_copy(a).double()
            emulated = _float_scan("cumprod", same_layout_copy(x), step["params"]["dim"]).double()
            if not bool(_close(a, c.double(), 0.0, 1e-3).all()) and bool(_close(a, emulated, 0.0, 1e-3).all()):
                return True
    return False


def _operands_on_cpu(f: Finding, ops: set[str]):
    """For each step of the program at one of ``ops``, run on the CPU: its tensor operands, in order."""
    prog = _explicit(f.program)
    env = Runner().values(prog, "cpu")
    if env is None:
        return
    for step in prog["steps"]:
        if step["op"] in ops:
            args = [env.get(a) if isinstance(a, str) else a for a in step["args"]]
            yield [a for a in args if isinstance(a, torch.Tensor)]


def _input_to(ops: set[str], test: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[Finding], bool]:
    """Whether, in the program run on the CPU, the first operand of one of ``ops`` (floating point) has an
    element passing ``test``."""

    def confirm(f: Finding) -> bool:
        return any(
            bool(test(args[0]).any()) for args in _operands_on_cpu(f, ops) if args and args[0].dtype.is_floating_point
        )

    return confirm


def _nan_into(ops: set[str]) -> Callable[[Finding], bool]:
    """Whether, in the program run on the CPU, one of ``ops`` receives a NaN."""
    return _input_to(ops, torch.isnan)


def _fmod_quotient_beyond_float(f: Finding) -> bool:
    """Whether some float32 fmod of the program, run on the CPU, divides to a quotient beyond float's range."""
    for args in _operands_on_cpu(f, {"fmod"}):
        if len(args) == 2 and args[0].dtype == torch.float32:
            q = args[0].double() / args[1].double()
            if bool((q.isfinite() & (q.abs() > torch.finfo(torch.float32).max)).any()):
                return True
    return False


def _zeros_of_both_signs(f: Finding) -> bool:
    """Whether some clamp, maximum or minimum of the program, run on the CPU, compares a zero with a zero of
    the other sign."""
    for args in _operands_on_cpu(f, {"clamp_tensor", "clamp", "maximum", "minimum"}):
        if len(args) >= 2 and all(a.dtype.is_floating_point for a in args):
            x, *bounds = torch.broadcast_tensors(*args)
            for b in bounds:
                if bool(((x == 0) & (b == 0) & (x.signbit() != b.signbit())).any()):
                    return True
    return False


def _sum_order_overflow(f: Finding) -> bool:
    """Whether the values differ only where the terms' magnitudes add up beyond the dtype's range and one
    side is infinite or NaN: some orders of summation overflow there and others do not (-max - max + max),
    and PyTorch does not define the order."""
    if f.results is None:
        return False
    mask, _, a = _differing(f)
    cpu_args, step = f.step_inputs
    x = same_layout_copy(next(iter(cpu_args.values())), upcast=True)
    params = {k: _render(v) for k, v in step["params"].items()}
    mag, exc = _call(OPS[f.op].mag.format("x", **params), {"x": x})
    if exc:
        return False
    n = max(x.numel(), 1) // max(a.numel(), 1) if f.op in ("mean",) else 1
    big = (mag.double() * n).reshape(a.shape) > torch.finfo(a.dtype).max
    c = f.results[1]
    return bool((big & (~a.isfinite() | ~c.isfinite()))[mask].all())


def _prod_order_range(f: Finding) -> bool:
    """Whether a product differs only where, in its compute type, the factors above 1 multiply beyond the
    range and those below 1 down to zero: one order of multiplication gives inf, another 0, another
    0 * inf = NaN (PyTorch does not define the order), and the exact product is out of range or zero."""
    if f.results is None:  # gradients: some product of the program has such factors
        prog = _explicit(f.program)
        env = Runner().values(prog, "cpu")
        return env is not None and any(
            bool(_out_of_range_product(s, env[s["args"][0]]).any())
            for s in prog["steps"]
            if s["op"] == "prod" and isinstance(env.get(s["args"][0]), torch.Tensor)
        )
    mask, _, a = _differing(f)
    cpu_args, step = f.step_inputs
    out_of_range = _out_of_range_product(step, next(iter(cpu_args.values())))
    if out_of_range is None or out_of_range.numel() != a.numel():
        return False
    return bool((out_of_range.reshape(a.shape) & (~a.isfinite() | (a == 0)))[mask].all())


def _out_of_range_product(step: dict, x: torch.Tensor) -> torch.Tensor | None:
    """Per product of the step, whether its factors above 1 overflow its compute type and those below 1
    underflow it (None if the step does not run on magnitudes)."""
    if not x.dtype.is_floating_point:
        return torch.zeros(0, dtype=torch.bool)
    ref = step["args"][0]
    x64 = same_layout_copy(x, upcast=True).abs()
    big, exc1 = _call(step_expr(step), {ref: x64.clamp(min=1)})
    small, exc2 = _call(step_expr(step), {ref: x64.clamp(max=1)})
    if exc1 or exc2:
        return None
    limits = torch.finfo(compute_dtype(x.dtype))
    return (big > limits.max) & (small < limits.smallest_normal * limits.eps)


# The quantity a reduction accumulates, as a float64 expression: where it exceeds float's range, a float
# accumulator overflows (the squares of a variance: their sum bounds the centred one's).
_ACCUMULATED = {
    "var": "torch.sum({0}.square(){rest})",
    "std": "torch.sum({0}.square(){rest})",
    "norm": "torch.sum({0}.abs() ** {ord}{rest})",
}


def _float_range(f: Finding) -> bool:
    """Whether every differing element is infinite on axon where the accumulated quantity (``_ACCUMULATED``)
    exceeds float's largest value, or is where that quantity falls below float's normal range (its
    precision lost to underflow): the CPU accumulates float reductions in double, axon in float."""
    if f.results is None or f.op not in _ACCUMULATED or f.step_inputs[1]["params"].get("ord") == "inf":
        return False
    mask, _, a = _differing(f)
    cpu_args, step = f.step_inputs
    x = same_layout_copy(next(iter(cpu_args.values())), upcast=True)
    params = {k: _render(v) for k, v in step["params"].items()}
    acc, exc = _call(_ACCUMULATED[f.op].format("x", **params), {"x": x})
    if exc or acc.shape != a.shape and acc.numel() != a.numel():
        return False
    acc = acc.reshape(a.shape)
    # A result within a few ulps of float's largest value may round up to inf in a float computation.
    top = f.results[1].double().abs() >= torch.finfo(torch.float32).max * (1 - 8 * torch.finfo(torch.float32).eps)
    under = acc < torch.finfo(torch.float32).smallest_normal
    return bool(((((acc > torch.finfo(torch.float32).max) | top) & a.isinf()) | under)[mask].all())


FLOATS = {"float32", "float64", "float16", "bfloat16"}
_NAN_GRADIENT = {"hardtanh", "relu6", "softshrink", "hardshrink"}


def _closer_to_mpmath(f: Finding) -> bool:
    """Whether axon's polygamma is at least as close as the CPU's to mpmath's at every differing element."""
    import mpmath

    if f.results is None:
        return False
    mask, (x, *_), a = _differing(f)
    c = f.results[1]
    n = f.step_inputs[1]["params"]["v"]
    for i in mask.nonzero().tolist():
        exact = float(mpmath.polygamma(n, mpmath.mpf(x[tuple(i)].item())))
        if not abs(a[tuple(i)].item() - exact) <= abs(c[tuple(i)].item() - exact):  # a NaN is not closer
            return False
    return True


def _trigamma_gradient_closer(f: Finding) -> bool:
    """For a program of one digamma or polygamma(n) step: whether axon's gradient (of the input's
    storage) is at least as close as the CPU's to the exact one, mpmath's polygamma(n + 1) times the
    output gradient summed over the view's elements at each storage position."""
    import mpmath

    prog = _explicit(f.program)
    m = re.search(r"result 0: .*? at \[([^\]]*)\] axon ([^,]+), cpu ([^,]+)", f.detail)
    if m is None or len(prog["steps"]) != 1 or len(prog["inputs"]) != 1:
        return False
    step, spec = prog["steps"][0], prog["inputs"][0]
    n = 1 if step["op"] == "digamma" else step["params"]["v"] + 1
    x = view_of(fill_storage(spec).double(), spec)
    where = view_of(torch.arange(fill_storage(spec).numel()), spec)
    w = _weights(torch.empty(x.shape, dtype=x.dtype), 0)
    at = int(m[1].split(",")[0]) if m[1].strip() else 0
    exact = mpmath.mpf(0)
    for xi, wi, j in zip(x.flatten().tolist(), w.flatten().tolist(), where.flatten().tolist(), strict=True):
        if j == at:
            exact += wi * mpmath.polygamma(n, mpmath.mpf(xi))
    return abs(float(m[2]) - exact) <= abs(float(m[3]) - exact)


def _some_input(test: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[Finding], bool]:
    """A confirmation: some floating-point input of the program has an element passing `test`."""

    def confirm(f: Finding) -> bool:
        return any(
            bool(test(fill_storage(s).double()).any()) for s in _explicit(f.program)["inputs"] if s["dtype"] in FLOATS
        )

    return confirm


def _max_pool_window_in_padding(f: Finding) -> bool:
    """Whether a max pooling of the program has a window over padding alone (a dilation stepping
    over a short input): the CPU then gives -inf and an index past the end of its plane."""
    prog = _explicit(f.program)
    env = Runner().values(prog, "cpu")
    for step in prog["steps"] if env is not None else []:
        if not step["op"].startswith("max_pool"):
            continue
        p, x = step["params"], env[step["args"][0]]
        nd = len(p["k"])
        pool = getattr(F, f"max_pool{nd}d")
        _, index = pool(x, p["k"], p["s"], p["p"], dilation=p["dl"], ceil_mode=p["c"], return_indices=True)
        if bool((index >= math.prod(x.shape[-nd:])).any()):
            return True
    return False


def _tiny(x: torch.Tensor) -> torch.Tensor:
    return (x != 0) & (x.abs() < 1e-13)  # its cube underflows in float32; 1e-123 in float64


def _overflowing_sum(x: torch.Tensor) -> torch.Tensor:
    """Finite values near float32's largest (two of them overflow a float32 sum) beside an infinity."""
    return (x.abs() > 1e38) & x.isfinite() & x.isinf().any()


def _beyond_1e38(x: torch.Tensor) -> torch.Tensor:
    return x.isfinite() & (x.abs() > 1e38)


GRAD_MODES = frozenset({"eager-grad", "compiled-grad", "compiled-dynamic-grad"})
WHOLE_MODES = GRAD_MODES | {"compiled", "compiled-dynamic"}
COMPILED_MODES = frozenset({"compiled", "compiled-dynamic", "compiled-grad", "compiled-dynamic-grad"})


def _ill_conditioned(f: Finding) -> bool:
    """Whether the CPU's own result moves as far as axon's differs from it when every step's result
    is moved by one ulp (four patterns of directions): the program amplifies the rounding each op
    is allowed (ndtri's derivative, e^(y^2 / 2), near 0 or 1), and a float64 program has no more
    precise run to say which of the two results is better."""
    m = re.search(r"result (\d+): .*? at \[([^\]]*)\] axon ([^,]+), cpu ([^,]+)", f.detail)
    if m is None:
        return False
    i, at = int(m[1]), tuple(int(v) for v in m[2].split(",") if v.strip())
    a, c = float(m[3]), float(m[4])
    prog, rng, runner = _explicit(f.program), random.Random(0), Runner()
    spread = 0.0
    for _ in range(4):
        ulps = [rng.choice((-1, 1)) for _ in prog["steps"]]
        run = runner.whole(prog, program_function(prog, ulps), "cpu", grad=f.mode.endswith("grad"))
        if run.values is None or len(run.values) <= i:
            return False
        spread = max(spread, abs(run.values[i][at].item() - c))
    return abs(a - c) <= 2 * spread


KNOWN: list[Known] = [
    Known(
        "a float64 program that amplifies rounding: moving each step's result by one ulp moves the CPU's own "
        "result at least half as far as axon's differs from it (ndtri's derivative near 0 or 1 turns one ulp of "
        "its argument into hundreds); with no more precise run to judge by, neither result is the better",
        "mismatch",
        frozenset(OPS),
        modes=WHOLE_MODES,
        dtypes=frozenset({"float64"}),
        confirm=_ill_conditioned,
    ),
    Known(
        "CUDA's device check (native_functions.yaml: ops without device_check: NoCheck, logaddexp2 say): a 0-dim "
        "CPU tensor operand of such an op raises 'Expected all tensors to be on the same device' on CUDA and on "
        "axon (csrc/device/device_check.h); the CPU backend runs it",
        "one-sided-error",
        frozenset(OPS),
        text="Expected all tensors to be on the same device",
    ),
    Known(
        "a p-norm (p not 1, 2 or inf) of values whose p-th power underflows (3.8e-123 ** 3 in float64): axon, like "
        "CUDA, raises to the power directly and gets 0; PyTorch's CPU kernel scales by the largest value first",
        "mismatch",
        frozenset({"norm"}),
        confirm=_some_input(_tiny),
    ),
    Known(
        "float sums where finite values overflow beside an infinity of the other sign (-3.4e38 twice and +inf): "
        "the result depends on the order of the additions (-inf + inf = nan, or inf first); axon's and the CPU's "
        "orders differ, float64 says inf",
        "mismatch",
        frozenset({"var", "std", "sum", "nansum", "mean"}),
        modes=WHOLE_MODES | {"eager"},  # a compiled reduction adds in its own order too
        confirm=_some_input(_overflowing_sum),
    ),
    Known(
        "erfcx's derivative formula (PyTorch's derivatives.yaml: 2 x erfcx(x) - 2 / sqrt(pi)) overflows past "
        "|x| = 1.7e38 in float32: axon gives nan, the CPU -inf, float64 -0.0; both evaluate PyTorch's formula",
        "mismatch",
        frozenset({"erfcx"}),
        modes=GRAD_MODES,
        confirm=_some_input(_beyond_1e38),
    ),
    Known(
        "integer division by zero: PyTorch's CPU checks the divisor and raises ZeroDivisionError; axon, like "
        "CUDA, does not check on the device (the check would cost a synchronisation) and the result is undefined",
        "one-sided-error",
        frozenset({"div_trunc", "div_floor", "floor_divide", "remainder", "fmod"}),
        text="ZeroDivisionError",
    ),
    Known(
        "open (docs/op-coverage.md, Special values): i0 / i1 form e^x before scaling, so arguments beyond "
        "e^x's range (|x| > 88 in float) give NaN or inf where the CPU gives inf or a finite value (the "
        "gradient of i0 is i1)",
        "mismatch",
        frozenset({"i0", "i1"}),
        confirm=_large_argument,
    ),
    Known(
        "PyTorch's CPU hardtanh_backward and softshrink / hardshrink_backward give 0 at a NaN input on their "
        "vectorised path and pass the gradient on their scalar path (the tail of a row, a short tensor); axon "
        "passes the gradient everywhere",
        "mismatch",
        frozenset(_NAN_GRADIENT),
        modes=frozenset({"eager-grad", "compiled-grad", "compiled-dynamic-grad"}),
        confirm=_nan_into(_NAN_GRADIENT),
    ),
    Known(
        "a max pooling window over padding alone (PyTorch issue 114216, open): its value is -inf and its index "
        "lies past the end of the plane, on the CPU and on axon alike; the CPU's backward then adds that "
        "output's gradient into the next plane's first element, axon's drops it (the output depends on no "
        "input), as CUDA's backward does (it gathers, for each input element, the outputs naming it)",
        "mismatch",
        frozenset({"max_pool1d", "max_pool2d"}),
        modes=GRAD_MODES,
        confirm=_max_pool_window_in_padding,
    ),
    Known(
        "a sum whose terms' magnitudes add up beyond the dtype's range overflows in some orders of summation "
        "and not in others; PyTorch does not define the order (the CPU's cascade sum, CUDA's tree), and "
        "axon's order overflows where the CPU's does not, or the other way round",
        "mismatch",
        frozenset({"sum", "nansum", "mean"}),
        modes=frozenset({"eager"}),
        confirm=_sum_order_overflow,
    ),
    Known(
        "a Python number beyond the tensor's dtype (torch.where(c, uint8, 2**31 - 1), pow(int32, 2**40)): "
        "PyTorch's CPU kernels check it (c10::checked_convert) and raise; PyTorch's shared code (the meta "
        "kernels) accepts it and so does axon, which converts it as C does",
        "one-sided-error",
        frozenset(OPS),
        text="without overflow",
    ),
    Known(
        "PyTorch's CPU float64 trigamma (polygamma(1, x)) is off by up to 5e-10 relative (its asymptotic series "
        "stops early: polygamma(1, 1) = 1.6449340676 where pi^2 / 6 = 1.6449340668); axon's is closer to "
        "mpmath's value at every differing element",
        "mismatch",
        frozenset({"polygamma"}),
        confirm=_closer_to_mpmath,
    ),
    Known(
        "the same trigamma in the gradient of digamma and polygamma (derivatives.yaml: polygamma(n + 1, x)): "
        "axon's gradient is at least as close as the CPU's to mpmath's",
        "mismatch",
        frozenset({"digamma", "polygamma"}),
        modes=GRAD_MODES,
        confirm=_trigamma_gradient_closer,
    ),
    Known(
        "PyTorch's reference copysign and floor_divide (torch._refs), which fake tensors run under dynamic "
        "shapes, refuse a 0-dim CPU tensor beside a device tensor ('Expected divisor (b) to be on the same "
        "device'), so compiling such a call with dynamic=True stops in Dynamo on CUDA as on axon; eager and "
        "static compilation accept it",
        "one-sided-error",
        frozenset({"copysign", "floor_divide", "div_floor"}),
        modes=frozenset({"compiled-dynamic", "compiled-dynamic-grad"}),
        text="when making fake tensor call",
    ),
    Known(
        "PyTorch's CPU accumulates float32 and bfloat16 variances and norms in double (at::acc_type<float, false>), "
        "so a sum of squares beyond float's range (or a result within a few ulps of the largest float) still "
        "gives a finite result there, and one below float's normal range (values under 1e-19) keeps its "
        "precision; axon accumulates in float, as CUDA does, and gives inf, or loses the squares to underflow",
        "mismatch",
        frozenset(_ACCUMULATED),
        modes=frozenset({"eager"}),
        confirm=_float_range,
    ),
    Known(
        "gradients downstream of a float variance, standard deviation or norm whose accumulated squares pass "
        "float's range: axon accumulates in float (inf), the CPU in double (finite), so a later difference "
        "of two such results is NaN on axon (inf - inf) and 0 on the CPU",
        "mismatch",
        frozenset(_ACCUMULATED),
        modes=GRAD_MODES,
        dtypes=frozenset({"float32", "float16", "bfloat16"}),
        confirm=_input_to(set(_ACCUMULATED), lambda x: x.double().square().sum() > torch.finfo(torch.float32).max),
    ),
    Known(
        "a product whose factors above 1 multiply beyond the compute type's range and whose factors below 1 "
        "multiply to zero: depending on the order (PyTorch defines none; axon multiplies in lanes, as CUDA in "
        "a tree) the result is inf, 0 or 0 * inf = NaN, where the exact product is out of range anyway",
        "mismatch",
        frozenset({"prod"}),
        modes=GRAD_MODES | {"eager"},
        confirm=_prod_order_range,
    ),
    Known(
        "open (docs/op-coverage.md, Special values): ndtri at subnormal arguments is 2.5e-5 relative off in float32",
        "mismatch",
        frozenset({"ndtri"}),
        confirm=_subnormal_argument,
    ),
    Known(
        "PyTorch's CPU accumulates float32 scans in double (at::acc_type<float, false>), so a running product "
        "or sum that under- or overflows float stays finite there; axon accumulates in float, as CUDA does "
        "(acc_type<float, true>): its values are those of a float32 running product or sum",
        "mismatch",
        frozenset({"cumprod", "cumsum"}),
        confirm=_float_accumulation,
    ),
    Known(
        "a program that amplifies rounding beyond its dtype's precision (tan of polygamma(2, 5e-4) = -1.4e10, "
        "where one float32 ulp is 1024 and tan's period pi): moving each step's result by one ulp moves the "
        "CPU's own result at least half as far as axon's differs from it, so either answer is as good",
        "mismatch",
        frozenset(OPS),
        modes=GRAD_MODES | {"compiled", "compiled-dynamic"},
        dtypes=frozenset({"float32", "float16", "bfloat16"}),
        confirm=_ill_conditioned,
    ),
    Known(
        "compiled, Dynamo's fake tensors apply CUDA's device rule to nextafter (its meta function checks "
        "devices; a fake CUDA tensor with a 0-dim CPU operand raises the same 'Tensor device mismatch'), as "
        "CUDA's and axon's eager kernels do ('Expected all tensors to be on the same device'); the CPU runs it",
        "one-sided-error",
        frozenset({"nextafter"}),
        modes=COMPILED_MODES,
        text="Tensor device mismatch",
    ),
    Known(
        "PyTorch's CPU float32 fmod answers NaN in its vectorized loop (Sleef's fmod) where the quotient "
        "passes float's range (fmod(1e38, 1e-3)); its scalar loop, axon and CUDA (C's fmod) give the exact "
        "remainder, and gradients downstream differ by that NaN (minimum's then goes to both operands)",
        "mismatch",
        frozenset({"fmod"}),
        confirm=_fmod_quotient_beyond_float,
    ),
    Known(
        "max(-0.0, +0.0): PyTorch's CPU clamp answers -0.0 in its scalar loop (std::max keeps its first "
        "argument on a tie) and +0.0 in its vectorized loop (the instruction takes the second); axon gives "
        "+0.0 in every lane, so a later 1/x or log's gradient is -inf on one side and inf on the other",
        "mismatch",
        frozenset({"clamp_tensor", "clamp", "maximum", "minimum"}),
        confirm=_zeros_of_both_signs,
    ),
    Known(
        "PyTorch's CPU logit gradient at -0.0 answers g * inf in its scalar loop and g / (x (1 - x)) = g / -0.0 "
        "(the other sign) in its vectorized loop; axon gives the scalar loop's answer in every lane",
        "mismatch",
        frozenset({"logit"}),
        modes=GRAD_MODES,
        confirm=_input_to({"logit"}, lambda x: (x == 0) & x.signbit()),
    ),
    Known(
        "sinc's gradient (PyTorch's formula (pi x cos(pi x) - sin(pi x)) / (pi x^2), evaluated in the dtype) "
        "cancels for small x: its relative error is about 3 eps / (pi x)^2, over 1e-4 in float32 for |x| < "
        "0.02, so the CPU's and axon's one-ulp differences in sin and cos show, both far from float64",
        "mismatch",
        frozenset({"sinc"}),
        modes=GRAD_MODES,
        dtypes=frozenset({"float32", "float16", "bfloat16"}),
        confirm=_input_to({"sinc"}, lambda x: (x != 0) & (x.abs() < 0.02)),
    ),
    Known(
        "i0e and i1e beyond |x| = 8e6 are equal to float precision: i1e's and i0e's derivative factors "
        "(i0e - i1e (sgn + 1 / x), i1e - sgn i0e) are exactly 0 on axon (one series) and an ulp on the CPU "
        "(two Chebyshev tables), so an infinite incoming gradient gives NaN on axon and inf on the CPU",
        "mismatch",
        frozenset({"i0e", "i1e"}),
        modes=GRAD_MODES,
        confirm=_input_to({"i0e", "i1e"}, lambda x: x.abs() > 8e6),
    ),
]


def classify(f: Finding) -> Finding:
    for k in KNOWN:
        if k.matches(f):
            f.known = k.reason
            break
    return f


# --------------------------------------------------------------------------------------------
# Checking one program in every mode


@dataclass
class Options:
    compile: bool = False
    dynamic: bool = False
    grad: bool = True


def check(runner: Runner, prog: dict, opts: Options) -> list[Finding]:
    """Every finding of one program (at most one per mode), classified."""
    findings: list[Finding] = []
    ops = "+".join(s["op"] for s in prog["steps"])
    for s in prog["steps"]:
        runner.ops_seen[s["op"]] += 1
    torch.axon.fallback_ops(reset=True)

    def note(mode: str, f: Finding | None) -> None:
        runner.count(mode, "finding" if f else "ok")
        if f:
            findings.append(f)

    with time_limit(EAGER_LIMIT_S):
        try:
            f = runner.eager(prog)
        except PairTimeout:
            f = Finding("eager", "timeout", ops, f"no result within {EAGER_LIMIT_S:.0f} s", prog)
    note("eager", f)
    fn = program_function(prog)
    cpu = runner.whole(prog, fn, "cpu")
    want_grad = bool(opts.grad and prog.get("grad"))
    cpu_env = runner.values(prog, "cpu") if want_grad or opts.compile else None
    grad_tol = chain_tolerance(prog, cpu_env, gradient=True)
    if want_grad:
        cpu_grad = runner.whole(prog, fn, "cpu", grad=True)
        grad_ref = lambda: runner.whole(prog, fn, "cpu", upcast=True, grad=True)  # noqa: E731
        got = runner.whole(prog, fn, AXON, grad=True)
        note("eager-grad", runner.compare_whole("eager-grad", prog, got, cpu_grad, grad_ref, grad_tol))
    if opts.compile:
        mode = "compiled-dynamic" if opts.dynamic else "compiled"
        eager_axon = runner.whole(prog, fn, AXON).values
        compiled = torch.compile(program_function(prog), dynamic=opts.dynamic)
        runner.compiled_runs += 1
        ref = lambda: runner.whole(prog, fn, "cpu", upcast=True)  # noqa: E731
        with time_limit(COMPILE_LIMIT_S):
            try:
                got = runner.whole(prog, compiled, AXON)
                tol = chain_tolerance(prog, cpu_env, gradient=False)
                note(mode, runner.compare_whole(mode, prog, got, cpu, ref, tol, eager_axon))
                if want_grad and not findings:
                    got = runner.whole(prog, compiled, AXON, grad=True)
                    f = runner.compare_whole(f"{mode}-grad", prog, got, cpu_grad, grad_ref, grad_tol)
                    note(f"{mode}-grad", f)
            except PairTimeout:
                note(mode, Finding(mode, "timeout", ops, f"no result within {COMPILE_LIMIT_S:.0f} s", prog))
    runner.fallbacks.update(torch.axon.fallback_ops(reset=True))
    return [classify(f) for f in findings]


def mode_options(mode: str) -> Options:
    return Options(mode.startswith("compiled"), "dynamic" in mode, mode.endswith("grad"))


def still_fails(runner: Runner, prog: dict, sig: tuple) -> Finding | None:
    """The program's finding with signature ``sig``, if it still has one."""
    try:
        found = check(runner, dict(prog, grad=sig[0].endswith("grad")), mode_options(sig[0]))
    except Exception:
        return None
    return next((f for f in found if f.signature() == sig), None)


# --------------------------------------------------------------------------------------------
# Minimising


def _explicit(prog: dict) -> dict:
    """The program with every input's storage written out (independent of torch's generator)."""
    inputs = []
    for spec in prog["inputs"]:
        if "values" not in spec:
            spec = {**{k: v for k, v in spec.items() if k != "fill"}, "values": storage_values(fill_storage(spec))}
        inputs.append(spec)
    return {**prog, "inputs": inputs}


def _materialise(t: torch.Tensor, layout: str = "given") -> dict:
    """An input spec holding tensor ``t``: its whole storage and geometry, or made contiguous."""
    if layout == "contiguous":
        t = t.contiguous()
        n = t.numel()
        flat = t.reshape(n)
        return {
            "dtype": dtype_name(t.dtype),
            "size": list(t.shape),
            "stride": contiguous_strides(list(t.shape)),
            "offset": 0,
            "storage": n,
            "layout": "contiguous",
            "values": storage_values(flat),
        }
    n = t.untyped_storage().nbytes() // t.element_size()
    flat = t.as_strided((n,), (1,), 0)
    return {
        "dtype": dtype_name(t.dtype),
        "size": list(t.shape),
        "stride": list(t.stride()),
        "offset": t.storage_offset(),
        "storage": n,
        "layout": "given",
        "values": storage_values(flat),
    }


def _renumber(prog: dict) -> dict:
    """Drops steps no output needs and inputs no step uses; renumbers what is left."""
    steps, outputs = prog["steps"], list(prog["outputs"])
    needed = set(outputs)
    for k in range(len(steps) - 1, -1, -1):
        if f"v{k}" in needed:
            needed.update(a for a in steps[k]["args"] if isinstance(a, str))
    vmap, xmap = {}, {}
    new_steps, new_inputs = [], []
    for i, spec in enumerate(prog["inputs"]):
        if f"x{i}" in needed:
            xmap[f"x{i}"] = f"x{len(new_inputs)}"
            new_inputs.append(spec)
    for k, s in enumerate(steps):
        if f"v{k}" in needed:
            vmap[f"v{k}"] = f"v{len(new_steps)}"
            args = [vmap.get(a, xmap.get(a, a)) if isinstance(a, str) else a for a in s["args"]]
            new_steps.append({**s, "args": args})
    return {**prog, "inputs": new_inputs, "steps": new_steps, "outputs": [vmap[o] for o in outputs]}


def _candidates(prog: dict) -> Iterator[dict]:
    """Smaller variants of a program, the largest cuts first."""
    if len(prog["outputs"]) > 1:
        for o in prog["outputs"]:
            yield _renumber({**prog, "outputs": [x for x in prog["outputs"] if x != o]})
    # An op dropped: its uses take its first operand instead.
    for k, s in enumerate(prog["steps"]):
        first = s["args"][0]
        if not isinstance(first, str) or len(prog["steps"]) == 1:
            continue
        steps = [
            {**t, "args": [_shift(first if a == f"v{k}" else a, k) for a in t["args"]]}
            for j, t in enumerate(prog["steps"])
            if j != k
        ]
        outputs = [_shift(first if o == f"v{k}" else o, k) for o in prog["outputs"]]
        if len(set(outputs)) == len(outputs) and all(o.startswith("v") for o in outputs):
            yield _renumber({**prog, "steps": steps, "outputs": outputs})
    # Dimensions halved: every input with that size at that (right-aligned) position at once, then one alone.
    for i, spec in enumerate(prog["inputs"]):
        nd = len(spec["size"])
        for d in range(nd):
            n = spec["size"][d]
            if n <= 1:
                continue
            for start, length in ((0, 1), (n - 1, 1), (0, n // 2), (n // 2, n - n // 2)):
                together = _narrowed(prog, nd - d, n, start, length, only=None)
                if together is not None:
                    yield together
                alone = _narrowed(prog, nd - d, n, start, length, only=i)
                if alone is not None:
                    yield alone
    for i, spec in enumerate(prog["inputs"]):
        if spec.get("layout") != "contiguous" and not spec.get("cpu"):
            base = view_of(fill_storage(spec), spec)
            yield {**prog, "inputs": [*prog["inputs"][:i], _materialise(base, "contiguous"), *prog["inputs"][i + 1 :]]}


def _shift(ref: Any, removed: int) -> Any:
    if isinstance(ref, str) and ref.startswith("v") and int(ref[1:]) > removed:
        return f"v{int(ref[1:]) - 1}"
    return ref


def _narrowed(prog: dict, from_right: int, n: int, start: int, length: int, only: int | None) -> dict | None:
    inputs, changed = [], False
    for i, spec in enumerate(prog["inputs"]):
        nd = len(spec["size"])
        d = nd - from_right
        if (only is None or only == i) and 0 <= d < nd and spec["size"][d] == n:
            size = list(spec["size"])
            size[d] = length
            spec = {**spec, "size": size, "offset": spec["offset"] + start * spec["stride"][d]}
            changed = True
        inputs.append(spec)
    return {**prog, "inputs": inputs} if changed else None


def minimise(runner: Runner, f: Finding, budget_s: float) -> Finding:
    """The smallest program found within ``budget_s`` that fails the same way (mode, kind, op)."""
    sig = f.signature()
    best, prog = f, f.program
    if f.step is not None and f.step_inputs:
        cpu_args, step = f.step_inputs
        refs = list(cpu_args)
        alone = {
            "seed": prog.get("seed"),
            "inputs": [_materialise(cpu_args[r]) for r in refs],
            "steps": [{**step, "args": [f"x{refs.index(a)}" if isinstance(a, str) else a for a in step["args"]]}],
            "outputs": ["v0"],
            "grad": False,
        }
        for spec, r in zip(alone["inputs"], refs, strict=True):
            if cpu_args[r].device.type == "cpu" and r.startswith("x") and prog["inputs"][int(r[1:])].get("cpu"):
                spec["cpu"] = True
        g = still_fails(runner, alone, sig)
        if g:
            best, prog = g, alone
    prog = _explicit(prog)
    deadline = time.monotonic() + budget_s
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for cand in _candidates(prog):
            if time.monotonic() > deadline:
                break
            g = still_fails(runner, cand, sig)
            if g:
                best, prog, progress = g, cand, True
                break
    compact = _compact(prog)
    again = still_fails(runner, compact, sig) if compact != prog else None
    if again:
        best, prog = again, compact
    best.program = prog
    best.step_inputs = None
    return best


def _compact(prog: dict) -> dict:
    """Inputs rewritten with only the storage their view reaches (shrunk views leave most unused), the
    storage offset kept modulo 64 bytes (the alignment of the data can matter: vector loads)."""
    inputs = []
    for spec in prog["inputs"]:
        if "values" in spec and spec["size"] and all(s > 0 for s in spec["size"]):
            lo = spec["offset"]
            lo -= lo % (64 // DTYPES[spec["dtype"]].itemsize)
            hi = lo + sum((s - 1) * st for s, st in zip(spec["size"], spec["stride"], strict=True)) + 1
            spec = {**spec, "values": spec["values"][lo:hi], "offset": 0, "storage": hi - lo}
        inputs.append(spec)
    return {**prog, "inputs": inputs}


def upstream(runner: Runner, f: Finding) -> bool:
    """Whether PyTorch's own CPU Inductor differs from eager CPU the same way on the program."""
    if not f.mode.startswith("compiled"):
        return False
    prog, grad = f.program, f.mode.endswith("grad")
    fn = program_function(prog)
    compiled = torch.compile(program_function(prog), dynamic="dynamic" in f.mode)
    env = runner.values(prog, "cpu")
    try:
        with time_limit(COMPILE_LIMIT_S):
            got = runner.whole(prog, compiled, "cpu", grad=grad)
    except PairTimeout:
        return False
    cpu = runner.whole(prog, fn, "cpu", grad=grad)
    ref = lambda: runner.whole(prog, fn, "cpu", upcast=True, grad=grad)  # noqa: E731
    g = runner.compare_whole(f.mode, prog, got, cpu, ref, chain_tolerance(prog, env, grad))
    return g is not None and g.kind == f.kind


# --------------------------------------------------------------------------------------------
# Reproducers and reports


def reproducer(f: Finding) -> str:
    """A standalone script that prints the CPU's and axon's results (or input gradients) of the program."""
    prog = _explicit(f.program)
    grad = f.mode.endswith("grad")
    lines = ["import torch", "import torch.nn.functional as F", "", "nan, inf = float('nan'), float('inf')"]
    for i, spec in enumerate(prog["inputs"]):
        lines.append(f"b{i} = torch.tensor({_render_list(spec['values'])}, dtype=torch.{spec['dtype']})")
    lines += ["", "", *program_source(prog).rstrip("\n").split("\n"), "", "", "def inputs(device):"]
    bases = []
    for i, spec in enumerate(prog["inputs"]):
        base = f"b{i}" if spec.get("cpu") else f"b{i}.to(device)"
        if grad and DTYPES[spec["dtype"]].is_floating_point and not spec.get("cpu"):
            base += ".clone().requires_grad_()"
        bases.append(base)
    views = [
        f"bases[{i}].as_strided({tuple(s['size'])}, {tuple(s['stride'])}, {s['offset']})"
        for i, s in enumerate(prog["inputs"])
    ]
    lines += [f"    bases = [{', '.join(bases)}]", f"    return bases, [{', '.join(views)}]", ""]
    run = "prog"
    if f.mode.startswith("compiled"):
        run = f"torch.compile(prog, dynamic={'dynamic' in f.mode})"
    if grad:
        lines += [
            "",
            "def grads(device, fn):",
            "    bases, xs = inputs(device)",
            "    outs = [o for o in fn(*xs) if o.requires_grad]",
            "    ws = [(torch.rand(o.shape, generator=torch.Generator().manual_seed(1234 + i), dtype=torch.float64)"
            " * 2 - 1).to(o.dtype).to(device) for i, o in enumerate(outs)]",
            "    return torch.autograd.grad(outs, [b for b in bases if b.requires_grad], ws, allow_unused=True)",
            "",
            "",
            "print('cpu  ', grads('cpu', prog))",
            f"print('axon ', grads('axon', {run}))",
        ]
    else:
        lines += ["print('cpu  ', prog(*inputs('cpu')[1]))", f"print('axon ', {run}(*inputs('axon')[1]))"]
    return "\n".join(lines) + "\n"


def _render_list(values: list) -> str:
    return "[" + ", ".join(_render(v) for v in values) + "]"


def describe(f: Finding) -> str:
    status = f"known: {f.known}" if f.known else ("upstream (CPU Inductor too)" if f.upstream else "FINDING")
    more = f" ({f.repeats} more programs like it)" if f.repeats else ""
    return f"[{f.mode}] {f.kind} at {f.op} ({', '.join(f.dtypes)}): {f.detail}{more} -- {status}"


def _table(rows: list[list[Any]], header: list[str]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def summary(state: dict) -> str:
    """The markdown report of a run (its state, as ``run`` leaves it)."""
    findings = [finding_from(r) for r in state["findings"]]
    counts = state["counts"]
    ran = state["next"] - state.get("first", 0)
    lines = [
        "# Differential fuzzing",
        "",
        f"Seed {state['seed']}: {ran} programs in {state['seconds']:.0f} s ({state['compiled']} of them "
        f"compiled as well), PyTorch {torch.__version__}, device: {torch.axon.get_device_properties().name}.",
        "",
    ]
    header = ["mode", "programs", "passed", "differences", "CPU lacks the kernel"]
    rows = [
        [m, c.get("ok", 0) + c.get("finding", 0), c.get("ok", 0), c.get("finding", 0), c.get("cpu-lacks-kernel", 0)]
        for m, c in counts.items()
    ]
    lines += _table(sorted(rows), header)
    groups = [
        ("Findings", unexplained(findings)),
        ("Upstream: PyTorch's CPU Inductor differs from eager CPU as well", [f for f in findings if f.upstream]),
        ("Known, documented differences", [f for f in findings if f.known]),
    ]
    for title, group in groups:
        lines += ["", f"## {title} ({len(group)})", ""]
        for f in group:
            lines += [f"- {describe(f)}", "", "```python", reproducer(f).rstrip(), "```", ""]
    if state["fallbacks"]:
        lines += ["", "## Ops that fell back to the CPU", ""]
        lines += [f"- `{k}`: {v}" for k, v in sorted(state["fallbacks"].items(), key=lambda kv: -kv[1])]
    lines += ["", "## Ops drawn", "", ", ".join(f"{k} {v}" for k, v in sorted(state["ops"].items()))]
    return "\n".join(lines) + "\n"


def finding_from(r: dict) -> Finding:
    f = Finding(r["mode"], r["kind"], r["op"], r["detail"], r["program"], r.get("step"), tuple(r.get("dtypes", ())))
    f.known, f.upstream, f.repeats = r.get("known"), r.get("upstream", False), r.get("repeats", 0)
    return f


def finding_record(f: Finding, **extra) -> dict:
    return {**f.record(), "step": f.step, "dtypes": list(f.dtypes), "repeats": f.repeats, **extra}


def unexplained(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if not f.known and not f.upstream]


# --------------------------------------------------------------------------------------------
# Driver: a child process runs the programs and keeps the run's state in a JSON file after each; the
# parent restarts it after the program that killed it (a crash is a finding like any other).


def program_seed(seed: int, i: int) -> int:
    return seed * 1_000_003 + i


def new_state(
    programs: int, seed: int = 0, compile_every: int = 10, dynamic_every: int = 3, shrink_s: float = 60.0, tasks=None
) -> dict:
    """A run's state before its first program. ``tasks``: saved records to replay (each in its mode)
    instead of generated programs."""
    return {
        "seed": seed,
        "programs": len(tasks) if tasks is not None else programs,
        "compile_every": compile_every,
        "dynamic_every": dynamic_every,
        "shrink_s": shrink_s,
        "tasks": tasks,
        "first": 0,
        "next": 0,
        "seconds": 0.0,
        "compiled": 0,
        "counts": {},
        "fallbacks": {},
        "ops": {},
        "findings": [],
    }


def _save(path: Path, state: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state))
    tmp.replace(path)


def task(state: dict, i: int) -> tuple[dict, Options, int | None]:
    """Program i of the run, the modes to run it in, and its seed (None for a replayed record)."""
    if state["tasks"] is not None:
        record = state["tasks"][i]
        return dict(record["program"], grad=record["mode"].endswith("grad")), mode_options(record["mode"]), None
    pseed = program_seed(state["seed"], i)
    every, nth = state["compile_every"], state["dynamic_every"]
    opts = Options()
    if every and i % every == every - 1:
        opts = Options(compile=True, dynamic=bool(nth) and (i // every) % nth == nth - 1)
    return generate(pseed), opts, pseed


def child(path: Path, log: Callable[[str], None] | None = None) -> None:
    """Runs the programs from ``state["next"]`` on, saving the state after each."""
    state = json.loads(path.read_text())
    current = path.with_name("fuzz-current.json")
    runner = Runner()
    for mode, c in state["counts"].items():
        runner.counts[mode] = Counter(c)
    runner.fallbacks, runner.ops_seen = Counter(state["fallbacks"]), Counter(state["ops"])
    seen = {_key(finding_from(r)): r for r in state["findings"]}
    start = time.monotonic() - state["seconds"]
    torch.manual_seed(0)
    first = state["next"]
    for i in range(first, state["programs"]):
        if i - first == state.get("child_programs", CHILD_PROGRAMS):
            break  # the parent starts a fresh child for the rest
        prog, opts, pseed = task(state, i)
        current.write_text(json.dumps({"index": i, "program_seed": pseed, "options": opts.__dict__, "program": prog}))
        if opts.compile:
            state["compiled"] += 1
            if state["compiled"] % 50 == 0:
                torch._dynamo.reset()  # compiled programs are never called again
        try:
            got = check(runner, prog, opts)
        except Exception as e:  # the harness itself: reported, never hidden
            got = [Finding("harness", "error", "?", f"{_error(e)} {traceback.format_exc(limit=4)}", prog)]
        for f in got:
            key = _key(f)
            if key in seen:
                seen[key]["repeats"] += 1
                continue
            if not f.known and f.mode != "harness":
                # A runner of their own: the figures count the run's programs, not the tries.
                if state["shrink_s"]:
                    f = classify(minimise(Runner(), f, state["shrink_s"] * (1 if f.mode == "eager" else 2)))
                f.upstream = not f.known and upstream(Runner(), f)
            seen[key] = finding_record(f, program_seed=pseed)
            state["findings"].append(seen[key])
            if log:
                log(f"program {i} (seed {pseed}): {describe(f)}\n{reproducer(f)}")
        state["counts"] = {m: dict(c) for m, c in runner.counts.items()}
        state.update(fallbacks=dict(runner.fallbacks), ops=dict(runner.ops_seen), next=i + 1)
        state["seconds"] = time.monotonic() - start
        _save(path, state)
        if log and (i + 1) % 100 == 0:
            log(f"{i + 1} programs, {state['seconds']:.0f} s, {len(state['findings'])} findings")
    current.unlink(missing_ok=True)


def _key(f: Finding) -> tuple:
    """Findings with the same key are counted as repeats of the first. Errors are told apart by their
    class and words (names and numbers left out), whichever ops raise them; other kinds by op and dtypes."""
    if f.kind in ("one-sided-error", "error-class"):
        words = re.sub(r"\w*\d\w*|'[^']*'|\S*_\S*", "#", f.detail)
        return (f.mode, f.kind, words, f.known)
    return (f.mode, f.kind, f.op, tuple(f.dtypes), f.known)


def _tool(*args: str, timeout: float | None = None) -> int:
    """This tool in a fresh process: its exit status (negative: the signal that killed it)."""
    cmd = [sys.executable, "-m", "torch_axon.tools.fuzz", *args]
    try:
        return subprocess.run(cmd, timeout=timeout, stdout=subprocess.DEVNULL).returncode
    except subprocess.TimeoutExpired:
        return -signal.SIGKILL


def replay(record: dict) -> list[Finding]:
    """A saved finding's program run again, in this process, in the mode it failed in: its findings."""
    prog = dict(record["program"], grad=record["mode"].endswith("grad"))
    return check(Runner(), prog, mode_options(record["mode"]))


def probe(path: Path) -> int:
    """Runs one program (``{"program", "mode"}`` in ``path``) in this process: a crash shows in the exit status."""
    replay(json.loads(path.read_text()))
    return 0


def _dies(prog: dict, mode: str, folder: Path) -> bool:
    path = folder / "fuzz-probe.json"
    path.write_text(json.dumps({"program": prog, "mode": mode}))
    return _tool("--probe", str(path), timeout=COMPILE_LIMIT_S + 60) < 0


def crash_finding(cur: dict, status: int, folder: Path, shrink_s: float) -> Finding:
    """The program that killed the child, minimised (each try in a process of its own)."""
    prog = _explicit(cur["program"])
    opts = cur["options"]
    modes = ["eager"] + (["eager-grad"] if prog.get("grad") and opts["grad"] else [])
    if opts["compile"]:
        compiled = "compiled-dynamic" if opts["dynamic"] else "compiled"
        modes += [compiled] + ([f"{compiled}-grad"] if prog.get("grad") and opts["grad"] else [])
    mode = next((m for m in modes if _dies(prog, m, folder)), None)
    what = f"signal {-status}" if status < 0 else f"exit status {status}"
    f = Finding(mode or modes[-1], "crash", "+".join(s["op"] for s in prog["steps"]), "", prog)
    if mode is None:
        f.detail = f"the process died ({what}) in this program but not when it ran alone"
        return f
    deadline = time.monotonic() + shrink_s
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for cand in _candidates(prog):
            if time.monotonic() > deadline:
                break
            if _dies(cand, mode, folder):
                prog, progress = cand, True
                break
    f.program = _compact(prog) if _dies(_compact(prog), mode, folder) else prog
    f.op = "+".join(s["op"] for s in prog["steps"])
    f.dtypes = tuple(sorted({s["dtype"] for s in prog["inputs"]}))
    f.detail = f"the process dies ({what})"
    return f


def run(path: Path, log: Callable[[str], None] | None = None, hang_s: float = COMPILE_LIMIT_S * 2) -> dict:
    """Runs the run whose state is in ``path`` to its end in child processes; returns the final state."""
    current = path.with_name("fuzz-current.json")
    # Left by a run that was stopped (its program is rerun: the state's next is that program), and
    # older than the hang limit by now: the new child would be killed as hung before writing its own.
    current.unlink(missing_ok=True)
    while True:
        state = json.loads(path.read_text())
        if state["next"] >= state["programs"]:
            return state
        cmd = [sys.executable, "-m", "torch_axon.tools.fuzz", "--child", str(path)]
        proc = subprocess.Popen(cmd, stderr=None if log else subprocess.DEVNULL)
        while proc.poll() is None:
            time.sleep(0.5)
            if current.exists() and time.time() - current.stat().st_mtime > hang_s:
                proc.kill()  # stuck in the driver, out of SIGALRM's reach
        state = json.loads(path.read_text())
        if proc.returncode == 0 and not current.exists():
            continue
        if not current.exists():
            raise RuntimeError(f"the fuzzer's child process failed before its first program (status {proc.returncode})")
        cur = json.loads(current.read_text())
        current.unlink()
        f = crash_finding(cur, proc.returncode, path.parent, state["shrink_s"])
        if f.detail.startswith("the process dies") and proc.returncode == -signal.SIGKILL:
            f.kind, f.detail = "hang", f"no progress for {hang_s:.0f} s"
        classify(f)  # a crash may be a documented open bug too
        state["findings"].append(finding_record(f, program_seed=cur["program_seed"]))
        state["counts"].setdefault(f.mode, {}).setdefault("finding", 0)
        state["counts"][f.mode]["finding"] += 1
        state["next"] = cur["index"] + 1
        _save(path, state)
        if log:
            log(f"program {cur['index']} (seed {cur['program_seed']}): {describe(f)}\n{reproducer(f)}")


def fuzz_isolated(folder: Path, log: Callable[[str], None] | None = None, **kwargs) -> tuple[dict, list[Finding]]:
    """A whole run (``new_state``'s arguments) in child processes; its state file is ``folder/fuzz-state.json``."""
    path = folder / "fuzz-state.json"
    _save(path, new_state(**kwargs))
    state = run(path, log)
    return state, [finding_from(r) for r in state["findings"]]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m torch_axon.tools.fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--programs", type=int, default=200, help="programs to run (default 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-compile", action="store_true", help="eager modes only")
    p.add_argument("--compile-every", type=int, default=10, metavar="K", help="compile every K-th program (10)")
    p.add_argument("--dynamic-every", type=int, default=3, metavar="K", help="of those, every K-th dynamic (3)")
    p.add_argument("--shrink-seconds", type=float, default=60.0, help="time to minimise a finding (0: none)")
    p.add_argument("--save", type=Path, metavar="FILE", help="append the minimised findings as JSON lines")
    p.add_argument("--replay", type=Path, metavar="FILE", help="run saved findings (JSON lines) again instead")
    p.add_argument("--only", type=int, metavar="I", help="run program I of the run alone")
    p.add_argument("--resume", action="store_true", help="continue the run whose state is in DATA")
    p.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--probe", type=Path, help=argparse.SUPPRESS)
    add_output_args(p, "the summary, fuzz.md", "fuzz-state.json (the run's state and findings)")
    args = p.parse_args(argv)
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    if args.probe:
        return probe(args.probe)
    if args.child:
        child(args.child, log)
        return 0
    out, data = output_dirs(args)
    path = data / "fuzz-state.json"
    if not (args.resume and path.exists()):
        tasks = [json.loads(line) for line in args.replay.read_text().splitlines() if line] if args.replay else None
        every = 0 if args.no_compile else args.compile_every
        state = new_state(args.programs, args.seed, every, args.dynamic_every, args.shrink_seconds, tasks)
        if args.only is not None:
            state.update(first=args.only, next=args.only, programs=args.only + 1)
        _save(path, state)
    state = run(path, log)
    (out / "fuzz.md").write_text(summary(state))
    findings = [finding_from(r) for r in state["findings"]]
    if args.save:
        with args.save.open("a") as fh:
            for r in state["findings"]:
                fh.write(json.dumps(r) + "\n")
    bad = unexplained(findings)
    ran = state["next"] - state["first"]
    print(f"{ran} programs, {len(findings)} differences, {len(bad)} unexplained; summary in {out / 'fuzz.md'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
