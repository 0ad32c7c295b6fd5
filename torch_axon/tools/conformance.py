"""Conformance sweep: every OpInfo of PyTorch's ``op_db`` run on the CPU and on ``axon``, compared.

Run it as ``python -m torch_axon.tools.conformance`` (``--help`` lists the options). For each OpInfo, each
selected dtype and the first ``--max-samples`` sample inputs, the op runs on the CPU and on axon
(every tensor of the sample moved there with its strides and whole storage, ``device`` arguments
pointed there; arguments stay on the CPU only if the op asks for CPU ones), results are compared
with the dtype's tolerance, torch.testing's default (loosened where the OpInfo itself declares a
looser one; for float16 and bfloat16, as PyTorch's own CPU-against-device test, test_compare_cpu,
applies the OpInfo's precision and tolerance overrides), and for
float32 / float64 ops that support autograd the input gradients of a fixed weighted sum of the
outputs are compared too. A floating value that differs from the CPU's beyond the tolerance still
passes if it is no less accurate than the CPU's against the same computation in float64 (noted in
the detail). Random ops are compared by shape and dtype only. Each (op, dtype) pair gets one class:

- ``native-pass``: every sample matched and nothing ran through Axon's counted CPU fallback;
- ``fallback-pass``: every sample matched, but some ops fell back (listed in the detail);
- ``mismatch``: a result or gradient differs (first difference in the detail);
- ``error``: axon raised where the CPU did not (exception type and message), or ``timeout``;
- ``skip``: nothing could be compared, with the reason: the op or the device does not support
  the dtype (or layout: Axon's documented refusals), the CPU itself raised on every sample, or
  PyTorch itself waives the device-vs-CPU comparison of the op (its test_compare_cpu) and the
  values differ. Where that waiver is for a randomness only some samples have (attention with
  dropout: RANDOM_SAMPLES), those samples are compared by shapes and dtypes and the others as
  any op's, without the waiver.

Three other modes run the same pairs differently, each with its own reports (``op-coverage-fwad.*``,
``op-coverage-vmap.*``, ``op-coverage-compile.*``): ``--forward-ad`` compares forward-mode AD
(primal and tangent outputs for one fixed random tangent per differentiable input) for OpInfos that
support it, at float32 / float64; ``--vmap`` compares ``torch.func.vmap`` of the op on axon, over a
batch of three inputs, with a Python loop on the CPU (a sample whose vmap fails on the CPU as well is a
skip); ``--compile`` compares the op compiled by ``torch.compile`` (Inductor generating OpenCL C,
``dynamic=False``) on axon with the eager op on the CPU, outputs only (a pair where Dynamo compiles no
graph, or whose compiled form fails or differs on the CPU as well, is a skip). In that mode
``fallback-pass`` means eager axon ops called from the compiled graph fell back to the CPU.

Results are appended to a JSONL checkpoint, ``DATA/op-coverage.jsonl``, as each pair finishes, so an
interrupted sweep resumes where it stopped (``--restart`` starts over). The report goes to
``OUT/op-coverage.md``, between the markers ``<!-- sweep:begin -->`` and ``<!-- sweep:end -->`` (the
hand-written part above them stays), and every row to ``DATA/op-coverage.json``; ``--out`` and ``--data``
name the folders (default ``./axon-reports`` and OUT/data; ``make coverage`` passes ``--out docs --data
build/reports``), ``--name`` another stem than the mode's. ``run_sweep`` is the same sweep as a function.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import datetime
import itertools
import json
import os
import re
import shlex
import signal
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import torch

from torch_axon.tools import add_output_args, output_dirs

AXON = "axon"

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "float64": torch.float64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int64": torch.int64,
    "int32": torch.int32,
    "uint8": torch.uint8,
    "bool": torch.bool,
    "complex64": torch.complex64,
    "complex128": torch.complex128,
}
GRAD_DTYPES = (torch.float32, torch.float64)

# The fast subset (float32 only): common ops that Axon runs with native kernels.
FAST_OPS: tuple[str, ...] = (
    "add", "sub", "mul", "div", "exp", "log", "sqrt", "tanh", "sigmoid",
    "nn.functional.relu", "nn.functional.gelu", "nn.functional.silu",
    "sum", "mean", "amax", "argmax", "var", "std", "norm", "linalg.vector_norm",
    "mm", "bmm", "addmm", "matmul", "softmax", "log_softmax",
    "nn.functional.cross_entropy", "nn.functional.mse_loss",
    "where", "clamp", "maximum", "pow", "eq", "lt", "logical_and", "abs", "neg",
    "lerp", "addcmul", "addcdiv",
)  # fmt: skip

# Ops whose values are random (or uninitialised): only shapes and dtypes are compared. OpInfos
# flagged ``has_nondeterministic_output`` are treated the same way.
RANDOM_OPS = frozenset(
    {
        "bernoulli", "cauchy", "exponential", "geometric", "log_normal", "multinomial", "normal",
        "uniform", "rand_like", "randint", "randint_like", "randn", "randn_like",
        "nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d",
        "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout", "nn.functional.rrelu",
        "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d", "svd_lowrank", "pca_lowrank",
    }
)  # fmt: skip

# Tolerances (atol, rtol): torch.testing's defaults (torch.testing._comparison._DTYPE_PRECISIONS),
# which PyTorch's own tests (TestCase.assertEqual) also start from, the 16-bit floats included.
DEFAULT_TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float32: (1e-5, 1.3e-6),
    torch.float64: (1e-7, 1e-7),
    torch.float16: (1e-5, 1e-3),
    torch.bfloat16: (1e-5, 1.6e-2),
    torch.complex64: (1e-5, 1.3e-6),  # torch.testing's, as for their part type
    torch.complex128: (1e-7, 1e-7),
}
# --compile: Inductor keeps float16 / bfloat16 intermediates in float32 where eager rounds after
# each op, so a fused chain may differ from eager by an extra rounding or two: the 16-bit floats
# are looser than eager's.
COMPILE_TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    **DEFAULT_TOLERANCES,
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (2e-2, 2e-2),
}
# Tests whose tolerance overrides (declared on the OpInfo) apply to a device-vs-CPU comparison of
# float32, float64 and complex results.
TOLERANCE_TESTS = frozenset({None, "test_compare_cpu", "test_noncontiguous_samples", "test_variant_consistency_eager"})
# For float16 and bfloat16 the overrides are those PyTorch's own device-vs-CPU test applies
# (TestCommon.test_compare_cpu, on a device other than the CPU): see pytorch_tolerance_override.
LOW_PRECISION = (torch.float16, torch.bfloat16)

# How samples run: ``eager`` (the sweep proper), forward-mode AD or vmap; each mode has its own reports.
MODE_REPORT_STEM = {
    "eager": "op-coverage",
    "forward-ad": "op-coverage-fwad",
    "vmap": "op-coverage-vmap",
    "compile": "op-coverage-compile",
}


def report_paths(out: Path, data: Path, name: str) -> tuple[Path, Path, Path]:
    """(checkpoint, markdown, json) of a report named ``name``: the markdown in the reports folder,
    the checkpoint and the JSON (every row) in the data folder."""
    return data / f"{name}.jsonl", out / f"{name}.md", data / f"{name}.json"


BEGIN_MARK, END_MARK = "<!-- sweep:begin -->", "<!-- sweep:end -->"

# Axon's documented refusals (complex and quantized dtypes, sparse layouts): a skip, not an error.
UNSUPPORTED = (
    (re.compile(r"dtype (\w+) is not supported on the axon device"), "dtype {} not supported on the device"),
    (re.compile(r"with arguments from the '(Sparse\w*)axon' backend"), "layout {} not supported on the device"),
)

# Sample dtypes whose mismatches are checked against a float64 computation on the CPU.
REFERENCE_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.complex64)
ACCURACY_NOTE = "differs from the CPU, but no less accurate against float64"

OP_LACKS_DTYPE = "dtype not supported by the op"

CLASSES = ("native-pass", "fallback-pass", "mismatch", "error", "skip")
DETAIL_LEN = 200


@dataclass
class Row:
    """The outcome for one (op, dtype) pair."""

    op: str
    dtype: str
    cls: str
    detail: str = ""
    samples: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict:
        """The row as a JSON object (``cls`` is written as ``class``)."""
        d = asdict(self)
        d["class"] = d.pop("cls")
        return d

    @classmethod
    def from_json(cls, d: dict) -> Row:
        """Inverse of ``to_json``."""
        d = dict(d)
        d["cls"] = d.pop("class")
        return cls(**d)


@dataclass
class Outcome:
    """The outcome for one sample: ``pass``, ``skip``, ``mismatch`` or ``error``, with a detail."""

    status: str
    detail: str = ""


@dataclass
class PairLimits:
    """The per-pair limits: sample inputs run, and seconds."""

    max_samples: int = 8
    timeout: float = 60.0


class PairTimeout(BaseException):
    """Raised by the alarm when an (op, dtype) pair runs past its time limit.

    A BaseException, so that the per-sample ``except Exception`` clauses let it through.
    """


# --------------------------------------------------------------------------------------------
# Small helpers


def shorten(text: str, n: int = DETAIL_LEN) -> str:
    """One line of at most ``n`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3] + "..."


def describe(exc: BaseException) -> str:
    """``Type: message``, shortened."""
    return shorten(f"{type(exc).__name__}: {exc}")


def dtype_name(dtype: torch.dtype) -> str:
    """``torch.float32`` -> ``float32``."""
    return str(dtype).removeprefix("torch.")


def op_key(op) -> str:
    """The OpInfo's name, with its variant after a dot (``div.trunc_rounding``)."""
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def load_op_db() -> list:
    """PyTorch's OpInfo database (needs the ``expecttest`` package)."""
    from torch.testing._internal.common_methods_invocations import op_db

    return op_db


def select_ops(op_db: Sequence, names: Iterable[str] | None = None, limit: int | None = None) -> list:
    """The OpInfos whose name or full key is in ``names`` (all if None), the first ``limit`` of them."""
    wanted = set(names) if names is not None else None
    chosen = [op for op in op_db if wanted is None or op.name in wanted or op_key(op) in wanted]
    return chosen[:limit] if limit is not None else chosen


def is_random(op, sample=None) -> bool:
    """Whether the op's values (or, given a sample, that sample's) are random or undefined, so only
    shapes and dtypes can be compared."""
    if op.name in RANDOM_OPS or bool(getattr(op, "has_nondeterministic_output", False)):
        return True
    return sample is not None and op.name in RANDOM_SAMPLES and RANDOM_SAMPLES[op.name][0](sample)


# multi_head_attention_forward(query, key, value, embed_dim, num_heads, in_proj_weight, in_proj_bias,
# bias_k, bias_v, add_zero_attn, dropout_p, ...): the sample's args start at key, dropout_p is args[9]
_MHA_DROPOUT_ARG = 9


def _mha_dropout(sample) -> bool:
    args, training = sample.args, bool(sample.kwargs.get("training", True))
    return len(args) > _MHA_DROPOUT_ARG and float(args[_MHA_DROPOUT_ARG]) > 0 and training


def _mha_without_dropout(sample):
    args = list(sample.args)
    args[_MHA_DROPOUT_ARG] = 0.0
    return _resampled(sample, tuple(args), sample.kwargs)


def _sdpa_without_dropout(sample):
    return _resampled(sample, sample.args, {**sample.kwargs, "dropout_p": 0.0})


def _resampled(sample, args: tuple, kwargs: dict):
    from torch.testing._internal.opinfo.core import SampleInput

    return SampleInput(
        sample.input, args=args, kwargs=kwargs, output_process_fn_grad=sample.output_process_fn_grad,
        broadcasts_input=sample.broadcasts_input, name=sample.name,
    )  # fmt: skip


# Ops whose device-vs-CPU comparison PyTorch waives wholesale (test_compare_cpu: "output is
# non-deterministic") for a randomness that only some samples have: op name -> (whether a sample
# is random, the same sample without it). The deterministic samples are compared as any op's; a
# random one by shapes and dtypes, followed by its deterministic twin in full (the gradient
# samples of multi_head_attention_forward all have dropout); and the waiver no longer turns a
# mismatch into a skip.
RANDOM_SAMPLES: dict[str, tuple[Callable[[Any], bool], Callable[[Any], Any]]] = {
    "nn.functional.scaled_dot_product_attention": (
        lambda s: float(s.kwargs.get("dropout_p", 0.0)) > 0,
        _sdpa_without_dropout,
    ),
    "nn.functional.multi_head_attention_forward": (_mha_dropout, _mha_without_dropout),
}
RANDOM_SAMPLE_NOTE = "samples with dropout compared by shapes and dtypes, again with dropout_p = 0 in full"


def with_deterministic_twins(op, samples: Iterable[Any]) -> Iterator[Any]:
    """The samples, each random one of an op of RANDOM_SAMPLES followed by its deterministic twin."""
    for sample in samples:
        yield sample
        if not isinstance(sample, Outcome) and op.name in RANDOM_SAMPLES and is_random(op, sample):
            yield RANDOM_SAMPLES[op.name][1](sample)


def declared_tolerance(op, dtype: torch.dtype) -> tuple[float, float]:
    """The (atol, rtol) that the OpInfo's tolerance overrides declare for ``dtype``, or zeros: for
    float16 and bfloat16 those PyTorch's own device-vs-CPU test applies (pytorch_tolerance_override),
    for the other dtypes the loosest of those declared for the tests of TOLERANCE_TESTS."""
    from torch.testing._internal.common_device_type import toleranceOverride
    from torch.testing._internal.opinfo.core import DecorateInfo

    if dtype in LOW_PRECISION:
        return pytorch_tolerance_override(op, dtype)
    atol = rtol = 0.0
    for info in op.decorators:
        if isinstance(info, DecorateInfo) and info.test_name not in TOLERANCE_TESTS:
            continue
        for dec in info.decorators if isinstance(info, DecorateInfo) else [info]:
            if isinstance(dec, toleranceOverride) and dtype in dec.d:
                atol, rtol = max(atol, dec.d[dtype].atol), max(rtol, dec.d[dtype].rtol)
    return atol, rtol


def pytorch_tolerance_override(op, dtype: torch.dtype, device_type: str = AXON) -> tuple[float, float]:
    """The (atol, rtol) overrides PyTorch's device test harness gives TestCommon.test_compare_cpu
    (its CPU-against-device comparison) for this op at ``dtype`` on ``device_type``.

    As common_device_type does: the decorators of the op that target that test there (bare ones
    and active DecorateInfos, OpInfo.get_decorators); a precisionOverride sets atol, and a
    toleranceOverride for the dtype sets atol and rtol in its place. assert_close then takes the
    larger of each and the dtype's default. Where several overrides name the dtype (PyTorch keeps
    the one applied last) the loosest is taken."""
    from torch.testing._internal.common_device_type import precisionOverride, toleranceOverride

    decorators = op.get_decorators("TestCommon", "test_compare_cpu", device_type, dtype, {})
    precision = [d.d[dtype] for d in decorators if isinstance(d, precisionOverride) and dtype in d.d]
    tolerance = [d.d[dtype] for d in decorators if isinstance(d, toleranceOverride) and dtype in d.d]
    if tolerance:
        return max(t.atol for t in tolerance), max(t.rtol for t in tolerance)
    return max(precision, default=0.0), 0.0


@dataclass
class Tolerance:
    """(atol, rtol) for a result: its dtype's default, loosened by the op's override for the sample dtype."""

    sample_dtype: torch.dtype
    declared: tuple[float, float] = (0.0, 0.0)
    defaults: dict[torch.dtype, tuple[float, float]] | None = None  # None: DEFAULT_TOLERANCES

    @classmethod
    def for_op(cls, op, dtype: torch.dtype) -> Tolerance:
        """The tolerance of an (op, dtype) pair."""
        return cls(dtype, declared_tolerance(op, dtype))

    def __call__(self, result_dtype: torch.dtype | None = None) -> dict[str, float]:
        """Keyword arguments for assert_close (None: a Python number, judged at the sample dtype)."""
        atol, rtol = (self.defaults or DEFAULT_TOLERANCES).get(result_dtype or self.sample_dtype, (0.0, 0.0))
        return {"atol": max(atol, self.declared[0]), "rtol": max(rtol, self.declared[1])}


def decorated_for_all_devices(decorators, test_name: str, dtype: torch.dtype, wanted=lambda info: True) -> bool:
    """Whether one of an OpInfo's / ModuleInfo's DecorateInfos applies to ``test_name`` on every
    device for this dtype (and, if given, ``wanted(info)`` holds)."""
    from torch.testing._internal.opinfo.core import DecorateInfo

    return any(
        isinstance(info, DecorateInfo)
        and info.test_name == test_name
        and info.device_type is None
        and (info.dtypes is None or dtype in info.dtypes)
        and bool(info.active_if)
        and wanted(info)
        for info in decorators
    )


def cpu_comparison_waived(op, dtype: torch.dtype) -> bool:
    """Whether the OpInfo skips or expects to fail PyTorch's own device-vs-CPU test (test_compare_cpu).

    PyTorch does that where the values legitimately differ between devices (random, non-unique or
    undefined results): a mismatch there is a skip, not an Axon bug. Not for the ops of
    RANDOM_SAMPLES, whose waiver concerns only their random samples: those are compared by shapes
    and dtypes, the others as any op's.
    """
    return op.name not in RANDOM_SAMPLES and decorated_for_all_devices(op.decorators, "test_compare_cpu", dtype)


def device_supports(dtype: torch.dtype) -> bool:
    """Whether axon can hold tensors of ``dtype`` (float64 needs cl_khr_fp64)."""
    try:
        torch.zeros(1, dtype=dtype, device=AXON).cpu()
    except Exception:
        return False
    return True


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raises PairTimeout in the block after ``seconds`` (main thread only; no limit elsewhere)."""
    try:
        previous = signal.signal(signal.SIGALRM, _raise_timeout)
    except ValueError:  # not the main thread
        yield
        return
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _raise_timeout(signum, frame):
    raise PairTimeout()


# --------------------------------------------------------------------------------------------
# Moving samples and comparing results


def map_structure(fn: Callable[[Any], Any], obj: Any) -> Any:
    """Applies ``fn`` to every leaf of nested lists, tuples and dicts."""
    if isinstance(obj, dict):
        return {k: map_structure(fn, v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) and not isinstance(obj, torch.Size):
        items = [map_structure(fn, v) for v in obj]
        # A namedtuple takes its fields; a list, a tuple or a torch.return_types tuple one sequence.
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    return fn(obj)


def leaves(obj: Any) -> list:
    """The leaves of nested lists, tuples (named ones too) and dicts, in order."""
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in leaves(v)]
    if isinstance(obj, (list, tuple)) and not isinstance(obj, torch.Size):
        return [x for v in obj for x in leaves(v)]
    return [obj]


def relocate(t: torch.Tensor, **to_kwargs) -> torch.Tensor:
    """``t.detach().to(**to_kwargs)`` keeping t's strides and storage offset, with its whole storage.

    A view keeps what lies outside it in the storage (``as_strided`` may reach there) and an
    expanded tensor stays expanded, as on the CPU. Non-strided tensors are simply converted.
    """
    if t.layout != torch.strided or t.is_conj() or t.is_neg():
        return t.detach().to(**to_kwargs)
    storage = t.untyped_storage()
    flat = torch.empty(0, dtype=t.dtype).set_(storage, 0, (storage.nbytes() // t.element_size(),))
    return flat.to(**to_kwargs).as_strided(t.size(), t.stride(), t.storage_offset())


def to_axon(obj: Any) -> Any:
    """A tensor moved to axon (a leaf that requires grad stays one), the CPU device replaced by axon.

    Anything else is returned as it is.
    """
    if _is_cpu_device(obj):
        return torch.device(AXON) if isinstance(obj, torch.device) else AXON
    if not isinstance(obj, torch.Tensor):
        return obj
    return relocate(obj, device=AXON).requires_grad_(obj.requires_grad)


def _is_cpu_device(value: Any) -> bool:
    return (isinstance(value, str) and value == "cpu") or (isinstance(value, torch.device) and value.type == "cpu")


def axon_sample(sample, move_args: bool = True) -> tuple[Any, tuple, dict]:
    """(input, args, kwargs) of a CPU SampleInput on axon; ``device="cpu"`` keywords become axon.

    With ``move_args`` False only the input moves: the tensors of args and kwargs stay on the CPU
    (for ops that want some arguments there, such as ``tensor_split``'s indices).
    """
    move = to_axon if move_args else (lambda x: x)
    kwargs = {k: to_axon(v) if k == "device" else map_structure(move, v) for k, v in sample.kwargs.items()}
    return map_structure(to_axon, sample.input), map_structure(move, tuple(sample.args)), kwargs


def has_axon_tensor(inp: Any, args: tuple, kwargs: dict) -> bool:
    """Whether a moved sample puts anything on axon (a tensor, or a ``device=`` keyword)."""
    tensors = [t for t in leaves([inp, args, kwargs]) if isinstance(t, torch.Tensor)]
    return any(t.device.type == AXON for t in tensors) or str(kwargs.get("device")) == AXON


@dataclass
class Check:
    """How results are compared: the tolerance, whether values count, whether results must be on axon."""

    tol: Tolerance
    values: bool = True
    on_axon: bool = True


def compare(cpu: Any, axon: Any, check: Check, path: str = "output") -> None:
    """Asserts that an axon result matches the CPU one, recursing through sequences and dicts.

    Tensors must have the CPU result's shape and dtype (and be on axon if ``check.on_axon``), and
    if ``check.values`` its values within the tolerance; non-tensor results must be equal.
    """
    if isinstance(cpu, torch.Tensor):
        _compare_tensor(cpu, axon, check, path)
    elif isinstance(cpu, dict):
        _assert(isinstance(axon, dict) and cpu.keys() == axon.keys(), f"{path}: keys differ")
        for k in cpu:
            compare(cpu[k], axon[k], check, f"{path}[{k!r}]")
    elif isinstance(cpu, (list, tuple)) and not isinstance(cpu, torch.Size):
        _assert(isinstance(axon, (list, tuple)), f"{path}: expected a sequence, got {type(axon).__name__}")
        _assert(len(cpu) == len(axon), f"{path}: length {len(axon)} on axon, {len(cpu)} on CPU")
        for i, (c, a) in enumerate(zip(cpu, axon, strict=True)):
            compare(c, a, check, f"{path}[{i}]")
    elif isinstance(cpu, float) and check.values:
        torch.testing.assert_close(axon, cpu, equal_nan=True, msg=lambda m: f"{path}: {m}", **check.tol())
    elif check.values:
        _assert(axon == cpu, f"{path}: {axon!r} on axon, {cpu!r} on CPU")


def _compare_tensor(cpu: torch.Tensor, axon: Any, check: Check, path: str) -> None:
    _assert(isinstance(axon, torch.Tensor), f"{path}: expected a tensor, got {type(axon).__name__}")
    _assert(not check.on_axon or axon.device.type == AXON, f"{path}: result is on {axon.device}, not on axon")
    _assert(axon.shape == cpu.shape, f"{path}: shape {tuple(axon.shape)} on axon, {tuple(cpu.shape)} on CPU")
    _assert(axon.dtype == cpu.dtype, f"{path}: dtype {axon.dtype} on axon, {cpu.dtype} on CPU")
    if check.values:
        a, c = axon.detach().cpu(), cpu.detach()
        torch.testing.assert_close(a, c, equal_nan=True, msg=lambda m: f"{path}: {m}", **check.tol(cpu.dtype))


def _assert(ok: bool, message: str) -> None:
    if not ok:
        raise AssertionError(message)


# --------------------------------------------------------------------------------------------
# Running one sample


def grad_inputs(inp: Any, args: tuple, kwargs: dict) -> list[torch.Tensor]:
    """The sample's tensors that require grad, in order."""
    return [t for t in leaves([inp, args, kwargs]) if isinstance(t, torch.Tensor) and t.requires_grad]


def differentiable_outputs(outputs: Any) -> list[torch.Tensor]:
    """The floating outputs that require grad."""
    return [t for t in leaves(outputs) if isinstance(t, torch.Tensor) and t.requires_grad and t.is_floating_point()]


def grad_weights(outputs: Any) -> list[torch.Tensor]:
    """A fixed random CPU weight for each differentiable output (seeded, so repeatable)."""
    gen = torch.Generator().manual_seed(1234)
    return [torch.randn(t.shape, generator=gen, dtype=t.dtype) for t in differentiable_outputs(outputs)]


def input_grads(outputs: Any, weights: list[torch.Tensor], inputs: list[torch.Tensor]) -> list:
    """d(sum of output * weight)/d(inputs); None for inputs the outputs do not depend on."""
    outs = differentiable_outputs(outputs)
    scalar = sum((o * w.to(o.device)).sum() for o, w in zip(outs, weights, strict=True))
    return list(torch.autograd.grad(scalar, inputs, allow_unused=True))


def call(op, sample, moved: tuple[Any, tuple, dict]) -> Any:
    """The op on (input, args, kwargs), its result post-processed as the OpInfo asks."""
    inp, args, kwargs = moved
    return sample.output_process_fn_grad(op(inp, *args, **kwargs))


def run_on_axon(op, sample, moved: tuple, input_only: tuple, run: Callable = call) -> tuple[tuple, Any]:
    """(the sample used, ``run``'s result) on axon; retried with args on the CPU if the op asked for CPU args."""
    try:
        return moved, run(op, sample, moved)
    except Exception as e:
        if "cpu" not in str(e).lower():
            raise
        try:
            return input_only, run(op, sample, input_only)
        except Exception:
            raise e from None


def unsupported_reason(exc: Exception) -> str | None:
    """The skip reason if ``exc`` is one of Axon's documented refusals, else None."""
    if isinstance(exc, NotImplementedError):
        for pattern, reason in UNSUPPORTED:
            if match := pattern.search(str(exc)):
                return reason.format(match.group(1))
    return None


def run_sample(op, sample, tol: Tolerance, want_grad: bool) -> Outcome:
    """Runs one sample on the CPU and on axon and compares outputs (and gradients if ``want_grad``)."""
    moved, input_only = axon_sample(sample), axon_sample(sample, move_args=False)  # before any in-place op
    if not has_axon_tensor(*moved):
        return Outcome("skip", "sample puts no tensor on axon")
    reference = Float64Reference(op, sample) if tol.sample_dtype in REFERENCE_DTYPES else None
    try:
        cpu_out = call(op, sample, (sample.input, sample.args, sample.kwargs))
    except Exception as e:
        return Outcome("skip", f"CPU raised: {describe(e)}")
    try:
        moved, axon_out = run_on_axon(op, sample, moved, input_only)
    except Exception as e:
        return Outcome("skip", reason) if (reason := unsupported_reason(e)) else Outcome("error", describe(e))
    values = not is_random(op, sample)
    outcome = check_results(cpu_out, axon_out, Check(tol, values=values), reference and reference.outputs)
    if outcome.status == "pass" and want_grad and values:
        grads = compare_grads(sample, cpu_out, moved, axon_out, tol, reference)
        return grads if grads.status != "pass" or grads.detail else outcome
    return random_sample_noted(op, outcome, values)


def random_sample_noted(op, outcome: Outcome, values: bool) -> Outcome:
    """A pass of a random sample of an op of RANDOM_SAMPLES says that its values were not compared."""
    if outcome.status == "pass" and not values and not is_random(op):
        return Outcome("pass", RANDOM_SAMPLE_NOTE)
    return outcome


def compare_grads(sample, cpu_out: Any, moved: tuple, axon_out: Any, tol: Tolerance, reference) -> Outcome:
    """Compares the input gradients of a fixed weighted sum of the outputs on the CPU and on axon."""
    cpu_inputs = grad_inputs(sample.input, sample.args, sample.kwargs)
    weights = grad_weights(cpu_out)
    if not cpu_inputs or not weights:
        return Outcome("pass")
    try:
        cpu_grads = input_grads(cpu_out, weights, cpu_inputs)
    except Exception:
        return Outcome("pass")  # no gradient to compare (the CPU cannot differentiate this sample)
    try:
        axon_grads = input_grads(axon_out, weights, grad_inputs(*moved))
    except Exception as e:
        return Outcome("error", "backward: " + describe(e))
    ref = reference and (lambda: reference.grads(weights))
    return check_results(cpu_grads, axon_grads, Check(tol, on_axon=False), ref, path="grad")


def check_results(cpu: Any, axon: Any, check: Check, reference: Callable[[], Any] | None, path="output") -> Outcome:
    """Compares results: structure (devices, shapes, dtypes) first, then values.

    Values that differ from the CPU's still pass when they are no less accurate than the CPU's
    against ``reference()`` (the same computation in float64), noted in the outcome's detail.
    """
    try:
        compare(cpu, axon, replace(check, values=False), path)
        compare(cpu, axon, check, path)
    except AssertionError as e:
        if check.values and reference is not None and no_less_accurate(cpu, axon, reference, check.tol):
            return Outcome("pass", ACCURACY_NOTE)
        return Outcome("mismatch", shorten(str(e)))
    return Outcome("pass")


# --------------------------------------------------------------------------------------------
# Forward-mode AD and vmap (--forward-ad, --vmap): other ways to run a sample, same comparisons


def make_tangents(inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """A fixed random CPU tangent for each differentiable input (seeded, so both devices get the same)."""
    gen = torch.Generator().manual_seed(4321)
    return [torch.randn(t.shape, generator=gen, dtype=t.dtype) for t in inputs]


def forward_ad_call(op, sample, moved: tuple, tangents: list[torch.Tensor]) -> dict:
    """The op with dual numbers: each input that requires grad carries its tangent (moved to its device).

    Returns {"primal": the outputs, "tangent": the floating outputs' tangents (None where zero)}.
    """
    import torch.autograd.forward_ad as fwAD

    inputs = grad_inputs(*moved)
    tangent_of = {id(t): d.to(t.device, t.dtype) for t, d in zip(inputs, tangents, strict=True)}

    def dual(x: Any) -> Any:
        return fwAD.make_dual(x.detach(), tangent_of[id(x)]) if id(x) in tangent_of else x

    with fwAD.dual_level():
        out = call(op, sample, map_structure(dual, moved))
        primal = map_structure(lambda x: fwAD.unpack_dual(x).primal if isinstance(x, torch.Tensor) else x, out)
        floating = [t for t in leaves(out) if isinstance(t, torch.Tensor) and t.is_floating_point()]
        return {"primal": primal, "tangent": [fwAD.unpack_dual(t).tangent for t in floating]}


def run_sample_forward_ad(op, sample, tol: Tolerance, want_grad: bool) -> Outcome:
    """Forward-mode AD on the CPU and on axon with the same tangents: primal and tangent outputs compared."""
    moved, input_only = axon_sample(sample), axon_sample(sample, move_args=False)  # before any in-place op
    cpu_inputs = grad_inputs(sample.input, sample.args, sample.kwargs)
    if not cpu_inputs:
        return Outcome("skip", "sample has no differentiable input")
    tangents = make_tangents(cpu_inputs)
    wide = Float64Reference(op, sample) if tol.sample_dtype in REFERENCE_DTYPES else None
    reference = wide and (lambda: forward_ad_call(op, sample, wide.inputs, [t.double() for t in tangents]))
    try:
        cpu_out = forward_ad_call(op, sample, (sample.input, sample.args, sample.kwargs), tangents)
    except Exception as e:
        return Outcome("skip", f"CPU raised: {describe(e)}")
    try:
        _, axon_out = run_on_axon(op, sample, moved, input_only, lambda o, s, m: forward_ad_call(o, s, m, tangents))
    except Exception as e:
        return Outcome("skip", reason) if (reason := unsupported_reason(e)) else Outcome("error", describe(e))
    values = not is_random(op, sample)
    return random_sample_noted(op, check_results(cpu_out, axon_out, Check(tol, values=values), reference), values)


VMAP_BATCH_NOTE = "the sample's input, its reversal and (floating inputs) the input times 0.75"


def vmap_batch(x: torch.Tensor) -> torch.Tensor:
    """Three inputs stacked: x, x reversed along every dim and (floating x) 0.75 x.

    Both keep x's domain as a rule (a positive input, one within [-1, 1], a symmetric
    positive-definite matrix), so an op defined on x is defined on every member; neither adds
    ties (a blend of x and its reversal would, and sort may order ties either way).
    """
    flipped = x.flip(tuple(range(x.dim())))
    third = 0.75 * x if x.is_floating_point() or x.is_complex() else x
    return torch.stack([x, flipped, third])


def stack_results(results: list) -> Any:
    """Per-member results of a loop stacked leaf by leaf, as vmap returns them."""
    first = results[0]
    if isinstance(first, torch.Tensor):
        return torch.stack(results)
    if isinstance(first, (list, tuple)):
        return type(first)(stack_results(list(parts)) for parts in zip(*results, strict=True))
    raise TypeError(f"vmap cannot return {type(first).__name__}")


def vmap_call(op, sample, moved: tuple) -> Any:
    """torch.func.vmap of the op over dim 0 of the (batched) input, other arguments unbatched."""
    inp, args, kwargs = moved
    return torch.func.vmap(lambda x: call(op, sample, (x, args, kwargs)))(inp)


def loop_call(op, sample, moved: tuple) -> Any:
    """The op on each member of the batched input in turn, results stacked: what vmap must equal."""
    inp, args, kwargs = moved
    return stack_results([call(op, sample, (x, args, kwargs)) for x in inp.unbind(0)])


def run_sample_vmap(op, sample, tol: Tolerance, want_grad: bool) -> Outcome:
    """vmap of the op on axon against a Python loop over the batch on the CPU.

    Where axon fails, the CPU's own vmap is tried: if it fails too, the op's vmap support is at
    fault, not axon, and the sample is a skip that says so.
    """
    if not isinstance(sample.input, torch.Tensor) or sample.input.layout != torch.strided:
        return Outcome("skip", "the op's first argument is not a dense tensor")
    cpu_sample = (vmap_batch(sample.input.detach()), sample.args, sample.kwargs)
    moved = axon_sample(replace_input(sample, cpu_sample[0]))
    input_only = axon_sample(replace_input(sample, cpu_sample[0]), move_args=False)
    wide = Float64Reference(op, sample) if tol.sample_dtype in REFERENCE_DTYPES else None
    reference = wide and (lambda: loop_call(op, sample, (vmap_batch(wide.inputs[0]), *wide.inputs[1:])))
    try:
        expected = loop_call(op, sample, cpu_sample)
    except Exception as e:
        return Outcome("skip", f"CPU raised: {describe(e)}")
    try:
        _, axon_out = run_on_axon(op, sample, moved, input_only, vmap_call)
        values = not is_random(op, sample)
        outcome = check_results(expected, axon_out, Check(tol, values=values), reference)
        outcome = random_sample_noted(op, outcome, values)
    except Exception as e:
        outcome = Outcome("skip", reason) if (reason := unsupported_reason(e)) else Outcome("error", describe(e))
    if outcome.status in ("error", "mismatch") and (cpu_problem := cpu_vmap_problem(op, sample, cpu_sample, tol)):
        return Outcome("skip", shorten(cpu_problem))
    return outcome


def replace_input(sample, inp: torch.Tensor):
    """A copy of the SampleInput with another input (args, kwargs and post-processing kept)."""
    clone = copy.copy(sample)
    clone.input = inp
    return clone


def cpu_vmap_problem(op, sample, cpu_sample: tuple, tol: Tolerance) -> str | None:
    """Why vmap of the op fails on the CPU itself (raises, or differs from the loop), or None."""
    try:
        cpu_vmap = vmap_call(op, sample, cpu_sample)
    except Exception as e:
        return f"vmap raises on the CPU too: {describe(e)}"
    outcome = check_results(loop_call(op, sample, cpu_sample), cpu_vmap, Check(tol, on_axon=False), None)
    return None if outcome.status == "pass" else f"vmap differs from the loop on the CPU too: {outcome.detail}"


# --------------------------------------------------------------------------------------------
# torch.compile (--compile): the op compiled by Inductor on axon against the eager op on the CPU

# The compiled op of the current pair (a fresh Dynamo state per pair: see compile_pair).
_COMPILED: dict[int, Callable] = {}
# Recompilations allowed per pair: every sample shape compiles anew (dynamic=False), and
# Dynamo runs the frame eagerly once past its limit (8 by default), which would pass unseen.
COMPILE_RECOMPILE_LIMIT = 64


@contextlib.contextmanager
def compile_pair() -> Iterator[None]:
    """A fresh Dynamo state for one (op, dtype) pair: caches, counters and the compiled op."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    _COMPILED.clear()
    with torch._dynamo.config.patch(recompile_limit=COMPILE_RECOMPILE_LIMIT):
        yield


def compiled_op(op) -> Callable:
    """``torch.compile`` of a lambda calling the op (the OpInfo's function), once per pair."""
    if id(op) not in _COMPILED:
        fn = op.op
        _COMPILED[id(op)] = torch.compile(lambda *a, **k: fn(*a, **k), dynamic=False)
    return _COMPILED[id(op)]


def compile_call(op, sample, moved: tuple) -> Any:
    """The compiled op on (input, args, kwargs), its result post-processed (eagerly) as the OpInfo asks."""
    inp, args, kwargs = moved
    return sample.output_process_fn_grad(compiled_op(op)(inp, *args, **kwargs))


def _first_paragraph(text: str) -> str:
    """The message up to its first blank line (Dynamo and Inductor append context after one)."""
    return " ".join(str(text).strip().split("\n\n")[0].split())


BUILD_ERROR = re.compile(r"^error: (?:\S*?\.cl:)?(.*)$", re.MULTILINE)
# A frame of Dynamo's "from user code:" section of a message: path, line, function.
USER_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')
# Axon's own Python code (the sweep excepted): what a failure there says about axon, not the compiler.
AXON_CODE = re.compile(r"torch_axon[/\\](?!conformance\.py)")


def _user_code_location(text: str) -> str:
    """Where in user code (Dynamo's "from user code:" section) an error arose, unless in the sweep's lambda."""
    _, found, frames = text.partition("from user code:")
    matches = USER_FRAME.findall(frames) if found else []
    if not matches or matches[-1][0].endswith("conformance.py"):
        return ""
    path, line, function = matches[-1]
    path = path[path.find("torch_axon") :] if "torch_axon" in path else os.path.basename(path)
    return f"{path}:{line} {function}"


def describe_compile_error(exc: BaseException) -> str:
    """``Type: message`` for an error of compiled code, shortened to its informative part.

    Inductor's errors (InductorError, or another BackendCompilerFailed) name the underlying
    exception and its message's first paragraph; a generated kernel that failed to build gives
    the first error line of the OpenCL build log (source line:column and message).
    """
    inner = getattr(exc, "inner_exception", None)
    if inner is not None:
        return shorten(f"{type(exc).__name__}: {type(inner).__name__}: {_message_or_origin(inner)}")
    text = str(exc)
    if "failed to build" in text and (match := BUILD_ERROR.search(text)):
        kernel = re.search(r"generated kernel (\w+)", text)
        name = f" {kernel.group(1)}" if kernel else ""
        return shorten(f"{type(exc).__name__}: generated kernel{name} failed to build: {match.group(1)}")
    message = f"{type(exc).__name__}: {_message_or_origin(exc)}"
    if where := _user_code_location(text):  # kept whole: the message gives way
        return f"{shorten(message, DETAIL_LEN - len(where) - 6)} (in {where})"
    return shorten(message)


def _message_or_origin(exc: BaseException) -> str:
    """The message's first paragraph; for an exception without a message, where it was raised."""
    import traceback

    if text := _first_paragraph(exc):
        return text
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "(no message)"
    path = frames[-1].filename.replace("\\", "/")
    for root in ("torch_axon/", "torch/"):
        if root in path:
            path = path[path.rindex(root) :]
            break
    return f"(no message) raised in {frames[-1].name} at {path}:{frames[-1].lineno}"


def involves_axon(exc: BaseException) -> bool:
    """Whether axon's own Python code (its device module, its code generator) took part in an error."""
    import traceback

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        files = " ".join(frame.filename for frame in traceback.extract_tb(exc.__traceback__))
        if AXON_CODE.search(str(exc)) or AXON_CODE.search(files):
            return True
        exc = getattr(exc, "inner_exception", None) or exc.__cause__ or exc.__context__
    return False


def _copy_tensors(obj: Any) -> Any:
    """A copy of every tensor (strides and storage kept), for a second run on the same values."""
    return map_structure(lambda x: relocate(x, copy=True) if isinstance(x, torch.Tensor) else x, obj)


def compile_graph_note() -> tuple[int, str]:
    """(graphs Dynamo compiled so far in this pair, the first graph break's reason or '')."""
    from torch._dynamo.utils import counters

    breaks = list(counters["graph_break"])
    reason = " ".join(breaks[0].strip().splitlines()[0].split()) if breaks else ""
    return counters["stats"]["unique_graphs"], reason


def run_sample_compile(op, sample, tol: Tolerance, want_grad: bool) -> Outcome:
    """The op compiled by torch.compile on axon against the eager op on the CPU (outputs only).

    Where axon fails or differs, the op compiled on the CPU is tried: if it fails or differs from
    eager as well, the compiler (not axon's code generator) is at fault and the sample is a skip
    that says so. A sample that passes while Dynamo has compiled no graph in the pair ran eagerly:
    a skip, with the graph break's reason.
    """
    tol = replace(tol, defaults=COMPILE_TOLERANCES)
    moved, input_only = axon_sample(sample), axon_sample(sample, move_args=False)  # before any in-place op
    if not has_axon_tensor(*moved):
        return Outcome("skip", "sample puts no tensor on axon")
    cpu_inputs = _copy_tensors((sample.input, tuple(sample.args), sample.kwargs))
    reference = Float64Reference(op, sample) if tol.sample_dtype in REFERENCE_DTYPES else None
    try:
        cpu_out = call(op, sample, (sample.input, sample.args, sample.kwargs))
    except Exception as e:
        return Outcome("skip", f"CPU raised: {describe(e)}")
    check = Check(tol, values=not is_random(op, sample))
    try:
        _, axon_out = run_on_axon(op, sample, moved, input_only, compile_call)
    except Exception as e:
        inner = getattr(e, "inner_exception", e)
        reason = unsupported_reason(inner) if isinstance(inner, Exception) else None
        outcome = Outcome("skip", reason) if reason else Outcome("error", describe_compile_error(e))
    else:
        outcome = check_results(cpu_out, axon_out, check, reference and reference.outputs)
    if outcome.status in ("error", "mismatch"):
        cpu_problem = cpu_compile_problem(op, sample, cpu_inputs, cpu_out, replace(check, on_axon=False))
        return Outcome("skip", shorten(cpu_problem)) if cpu_problem else outcome
    graphs, graph_break = compile_graph_note()
    if outcome.status == "pass" and not graphs:
        because = f": {graph_break}" if graph_break else ""
        return Outcome("skip", shorten(f"Dynamo compiled no graph (the op ran eagerly){because}"))
    if outcome.status == "pass" and graph_break:
        notes = [n for n in (outcome.detail, f"graph break: {graph_break}") if n]
        return Outcome("pass", "; ".join(notes))
    return outcome


def cpu_compile_problem(op, sample, cpu_inputs: tuple, expected: Any, check: Check) -> str | None:
    """Why the op compiled on the CPU fails (raises, or differs from eager on the CPU), or None.

    A failure that passes through axon's own Python code (its device module is called by
    ``torch.manual_seed`` on any device, say) is axon's, and gives None.
    """
    try:
        out = compile_call(op, sample, cpu_inputs)
    except Exception as e:  # unless axon's own code (hooked into torch) fails there as well
        return None if involves_axon(e) else f"compiled on the CPU too, it fails: {describe_compile_error(e)}"
    outcome = check_results(expected, out, check, None)
    return None if outcome.status == "pass" else f"compiled on the CPU too, it differs from eager: {outcome.detail}"


# Per mode: the per-sample runner and what the mode compares (for the report).
SAMPLE_RUNNERS: dict[str, Callable[..., Outcome]] = {
    "eager": run_sample,
    "forward-ad": run_sample_forward_ad,
    "vmap": run_sample_vmap,
    "compile": run_sample_compile,
}
MODE_DESCRIPTIONS = {
    "eager": "each sample's outputs (and, at float32 / float64, input gradients)",
    "forward-ad": "forward-mode AD (dual numbers, the same random tangent for every differentiable input on "
    "both devices): primal and tangent outputs, for OpInfos that support forward AD, at float32 / float64",
    "vmap": "torch.func.vmap of the op over a batch of three inputs (" + VMAP_BATCH_NOTE + ", other arguments "
    "unbatched) on axon against a Python loop on the CPU; a sample whose vmap fails on the CPU as well is a skip",
    "compile": "the op compiled by torch.compile (Inductor generating OpenCL C, dynamic=False, a fresh Dynamo state "
    "per pair) on axon against the eager op on the CPU, outputs only, bfloat16 at (2e-2, 2e-2); fallback-pass: "
    "eager axon ops called from the compiled graph fell back to the CPU; a pair where Dynamo compiles no graph, "
    "or whose compiled form fails or differs on the CPU as well, is a skip",
}


# --------------------------------------------------------------------------------------------
# The float64 yardstick


def _widen(obj: Any) -> Any:
    """A float64 (complex128) copy of a floating (complex) tensor, a leaf that requires grad
    staying one; a copy of another."""
    if not isinstance(obj, torch.Tensor):
        return obj
    if not (obj.is_floating_point() or obj.is_complex()):
        return obj.detach().clone()
    wide = torch.complex128 if obj.is_complex() else torch.float64
    return relocate(obj, dtype=wide, copy=True).requires_grad_(obj.requires_grad)


class Float64Reference:
    """The op on a float64 copy of a sample, on the CPU: the yardstick when axon and the CPU differ."""

    def __init__(self, op, sample):
        self.op, self.sample = op, sample
        # Copied now, before the CPU run could change the sample in place.
        self.inputs = tuple(map_structure(_widen, x) for x in (sample.input, tuple(sample.args), sample.kwargs))
        self._outputs = None

    def outputs(self) -> Any:
        """The op's (post-processed) outputs in float64, computed once."""
        if self._outputs is None:
            self._outputs = call(self.op, self.sample, self.inputs)
        return self._outputs

    def grads(self, weights: list[torch.Tensor]) -> list:
        """The input gradients of the weighted output sum in float64."""
        return input_grads(self.outputs(), [w.double() for w in weights], grad_inputs(*self.inputs))


def no_less_accurate(cpu: Any, axon: Any, reference: Callable[[], Any], tol: Tolerance) -> bool:
    """Whether each axon value is close to the CPU's or, where the CPU's is finite, no farther from the reference.

    Non-floating results must be equal; False if the reference cannot be computed.
    """
    try:
        ref = reference()
    except Exception:
        return False
    c_leaves, a_leaves, r_leaves = leaves(cpu), leaves(axon), leaves(ref)
    if not len(c_leaves) == len(a_leaves) == len(r_leaves):
        return False
    return all(_leaf_no_less_accurate(c, a, r, tol) for c, a, r in zip(c_leaves, a_leaves, r_leaves, strict=True))


def _as_float64(x: Any) -> torch.Tensor | None:
    if isinstance(x, torch.Tensor) and x.is_complex():  # compared part by part
        return torch.view_as_real(x.detach().cpu().resolve_conj().to(torch.complex128))
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.detach().cpu().double()
    return torch.tensor(x, dtype=torch.float64) if isinstance(x, float) else None


def _leaf_no_less_accurate(c: Any, a: Any, r: Any, tol: Tolerance) -> bool:
    c64, a64, r64 = _as_float64(c), _as_float64(a), _as_float64(r)
    if c64 is None or a64 is None or r64 is None or not c64.shape == a64.shape == r64.shape:
        if isinstance(c, torch.Tensor):
            return isinstance(a, torch.Tensor) and a.shape == c.shape and torch.equal(a.detach().cpu(), c.detach())
        return a == c
    kw = tol(c.dtype if isinstance(c, torch.Tensor) else None)
    close = torch.isclose(a64, c64, equal_nan=True, **kw)
    bound = (c64 - r64).abs() + kw["atol"] + kw["rtol"] * r64.abs()
    return bool((close | (c64.isfinite() & ((a64 - r64).abs() <= bound))).all())


# --------------------------------------------------------------------------------------------
# One (op, dtype) pair


def pair_skip_reason(op, dtype: torch.dtype, device_dtypes: dict[torch.dtype, bool], mode: str = "eager") -> str | None:
    """Why a pair cannot run at all in this mode, or None."""
    if dtype not in op.supported_dtypes("cpu"):
        return OP_LACKS_DTYPE
    if mode == "forward-ad" and not op.supports_forward_ad:
        return "op does not support forward AD"
    if mode == "forward-ad" and not wants_grad(op, dtype):
        return "forward AD is compared at float32 / float64 for ops differentiable at the dtype"
    if not device_dtypes.setdefault(dtype, device_supports(dtype)):
        return "dtype not supported on the device"
    return None


def wants_grad(op, dtype: torch.dtype) -> bool:
    """Whether gradients are compared for this pair (float32 / float64 ops that support autograd)."""
    return dtype in GRAD_DTYPES and op.supports_autograd and dtype in op.supported_backward_dtypes("cpu")


def guarded_samples(op, dtype: torch.dtype, want_grad: bool, n: int) -> Iterator[Any]:
    """The first ``n`` CPU sample inputs; a skip Outcome in place of the rest if the generator raises."""
    try:
        yield from itertools.islice(op.sample_inputs("cpu", dtype, requires_grad=want_grad), n)
    except Exception as e:
        yield Outcome("skip", f"sample inputs raised: {describe(e)}")


def guarded_run(op, sample, tol: Tolerance, want_grad: bool, mode: str = "eager") -> Outcome:
    """The mode's sample runner, with anything it lets through (moving the sample to axon, say) as an error."""
    try:
        return SAMPLE_RUNNERS[mode](op, sample, tol, want_grad)
    except Exception as e:
        return Outcome("error", describe_compile_error(e) if mode == "compile" else describe(e))


def run_samples(op, dtype: torch.dtype, max_samples: int, mode: str = "eager") -> list[Outcome]:
    """The outcomes of the first ``max_samples`` samples run in ``mode``, stopping at the first failure.

    Forward AD asks for samples that require grad (they mark the differentiable inputs); vmap and
    compile (forward only) for none. Compile runs each pair in a fresh Dynamo state.
    """
    want_grad, tol = wants_grad(op, dtype) and mode not in ("vmap", "compile"), Tolerance.for_op(op, dtype)
    torch.manual_seed(0)
    outcomes = []
    with compile_pair() if mode == "compile" else contextlib.nullcontext():
        for sample in with_deterministic_twins(op, guarded_samples(op, dtype, want_grad, max_samples)):
            outcomes.append(sample if isinstance(sample, Outcome) else guarded_run(op, sample, tol, want_grad, mode))
            if outcomes[-1].status in ("error", "mismatch"):
                break
    return outcomes


def classify(outcomes: list[Outcome], fallbacks: dict[str, int], waived: bool = False) -> tuple[str, str]:
    """(class, detail) of a pair from its sample outcomes and the ops that fell back meanwhile.

    ``waived``: PyTorch itself does not compare this op's values across devices, so a mismatch is
    a skip (the difference is kept in the detail).
    """
    for o in outcomes:
        if o.status == "mismatch" and waived:
            return "skip", shorten("values differ, as PyTorch allows for this op (test_compare_cpu): " + o.detail)
        if o.status in ("error", "mismatch"):
            return o.status, o.detail
    if not any(o.status == "pass" for o in outcomes):
        reasons = [o.detail for o in outcomes]
        return "skip", reasons[0] if reasons else "no sample inputs"
    notes = sorted({o.detail for o in outcomes if o.status == "pass" and o.detail})
    if fallbacks:
        return "fallback-pass", shorten("; ".join([", ".join(sorted(fallbacks)), *notes]))
    return "native-pass", shorten("; ".join(notes))


def sweep_pair(
    op, dtype: torch.dtype, limits: PairLimits, device_dtypes: dict[torch.dtype, bool], mode: str = "eager"
) -> Row:
    """Runs and classifies one (op, dtype) pair in ``mode``; never raises (but KeyboardInterrupt)."""
    row = Row(op_key(op), dtype_name(dtype), "skip")
    start = time.perf_counter()
    reason = pair_skip_reason(op, dtype, device_dtypes, mode)
    if reason:
        row.detail = reason
        return row
    torch.axon.fallback_ops(reset=True)
    try:
        with warnings.catch_warnings(), time_limit(limits.timeout):
            warnings.simplefilter("ignore")
            outcomes = run_samples(op, dtype, limits.max_samples, mode)
        fallbacks = torch.axon.fallback_ops(reset=True)
        row.cls, row.detail = classify(outcomes, fallbacks, cpu_comparison_waived(op, dtype))
        row.samples = sum(o.status != "skip" for o in outcomes)
    except PairTimeout:
        row.cls, row.detail = "error", f"timeout ({limits.timeout:g} s)"
    except Exception as e:  # anything the per-sample guards missed
        row.cls, row.detail = "error", describe(e)
    row.seconds = round(time.perf_counter() - start, 3)
    return row


# --------------------------------------------------------------------------------------------
# The sweep


def read_checkpoint(path: Path | None) -> dict[tuple[str, str], Row]:
    """Rows already in a JSONL checkpoint, by (op, dtype); the last one wins."""
    rows: dict[tuple[str, str], Row] = {}
    if path is None or not path.exists():
        return rows
    for line in path.read_text().splitlines():
        if line.strip():
            row = Row.from_json(json.loads(line))
            rows[(row.op, row.dtype)] = row
    return rows


def append_checkpoint(path: Path | None, row: Row) -> None:
    """Appends one row to the JSONL checkpoint."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write(json.dumps(row.to_json()) + "\n")


def progress_bar(total: int, enabled: bool):
    """A tqdm bar on stderr if tqdm is installed, else a plain counter; None if disabled."""
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return _Counter(total)
    return tqdm(total=total, unit="pair", file=sys.stderr, dynamic_ncols=True)


class _Counter:
    """A minimal progress counter on stderr (the tqdm methods the sweep uses)."""

    def __init__(self, total: int):
        self.total, self.n = total, 0

    def set_postfix_str(self, text: str) -> None:
        self.text = text

    def update(self, n: int = 1) -> None:
        self.n += n
        print(f"\r[{self.n}/{self.total}] {getattr(self, 'text', '')[:60]:60}", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        print(file=sys.stderr)


def run_sweep(
    ops: Sequence[str] | None = None,
    dtypes: Sequence[torch.dtype] = (torch.float32,),
    max_samples: int = 8,
    limit: int | None = None,
    timeout: float = 60.0,
    checkpoint: Path | str | None = None,
    restart: bool = False,
    progress: bool = False,
    mode: str = "eager",
) -> list[Row]:
    """Sweeps the selected (op, dtype) pairs and returns their rows (checkpointed ones included).

    ``mode``: ``eager`` (the default), ``forward-ad``, ``vmap`` or ``compile``: how each sample runs
    (SAMPLE_RUNNERS).

    ``ops``: OpInfo names (all variants) or ``name.variant`` keys; None for every OpInfo.
    ``checkpoint``: a JSONL file that rows are appended to, and that a rerun resumes from
    (``restart`` empties it first); None for no checkpoint.
    """
    path = Path(checkpoint) if checkpoint else None
    if path is not None and restart and path.exists():
        path.unlink()
    done = read_checkpoint(path)
    limits = PairLimits(max_samples, timeout)
    pairs = [(op, dt) for op in select_ops(load_op_db(), ops, limit) for dt in dtypes]
    bar = progress_bar(sum((op_key(op), dtype_name(dt)) not in done for op, dt in pairs), progress)
    device_dtypes: dict[torch.dtype, bool] = {}
    rows = []
    try:
        for op, dt in pairs:
            key = (op_key(op), dtype_name(dt))
            if key in done:
                rows.append(done[key])
                continue
            if bar is not None:
                bar.set_postfix_str(f"{key[0]} {key[1]}")
            row = sweep_pair(op, dt, limits, device_dtypes, mode)
            append_checkpoint(path, row)
            rows.append(row)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return rows


# --------------------------------------------------------------------------------------------
# Reports


def class_counts(rows: Sequence[Row]) -> dict[str, int]:
    """Rows per class, every class listed."""
    counts = Counter(r.cls for r in rows)
    return {c: counts.get(c, 0) for c in CLASSES}


def percent(part: int, whole: int) -> float:
    """``part / whole`` in percent, one decimal (0 for an empty whole)."""
    return round(100.0 * part / whole, 1) if whole else 0.0


def summarize(rows: Sequence[Row], total_ops: int) -> dict:
    """Summary figures: counts and percentages per class, overall and at float32.

    A pair exists only for a dtype the op supports (the issue's definition): rows skipped because
    the OpInfo does not list the dtype are counted apart, never in the denominators.
    """
    applicable = [r for r in rows if r.detail != OP_LACKS_DTYPE]
    f32 = [r for r in applicable if r.dtype == "float32"]
    overall, at_f32 = class_counts(applicable), class_counts(f32)
    tested_f32 = len(f32) - at_f32["skip"]
    return {
        "opinfos_total": total_ops,
        "opinfos_covered": len({r.op for r in rows}),
        "dtypes": sorted({r.dtype for r in rows}, key=list(DTYPES).index),
        "pairs": len(applicable),
        "pairs_op_lacks_dtype": len(rows) - len(applicable),
        "overall": {c: {"count": n, "percent": percent(n, len(applicable))} for c, n in overall.items()},
        "float32": {c: {"count": n, "percent": percent(n, len(f32))} for c, n in at_f32.items()},
        "float32_pairs": len(f32),
        "float32_tested_pairs": tested_f32,
        "native_pass_pct_float32": percent(at_f32["native-pass"], len(f32)),
        "native_pass_pct_float32_tested": percent(at_f32["native-pass"], tested_f32),
        "pass_pct_float32_tested": percent(at_f32["native-pass"] + at_f32["fallback-pass"], tested_f32),
    }


def _md_intro(summary: dict, meta: dict) -> list[str]:
    mode = meta.get("mode", "eager")
    lines = [
        "## Measured coverage: OpInfo sweep" + ("" if mode == "eager" else f" ({mode})"),
        "",
        f"Generated by `{meta['command']}` (rerun it rather than editing between the markers): "
        f"{meta['generated']}, torch {meta['torch']}, device {meta['device']}, at most {meta['max_samples']} "
        f"sample inputs per (op, dtype) pair, dtypes {', '.join(summary['dtypes'])}. Compared: "
        f"{MODE_DESCRIPTIONS[mode]}. Classes are defined in `torch_axon/tools/conformance.py`.",
        "",
    ]
    if summary["opinfos_covered"] < summary["opinfos_total"]:
        lines += [
            f"**Partial sweep**: {summary['opinfos_covered']} of {summary['opinfos_total']} OpInfos covered "
            "(rerun without --ops / --limit to cover the rest: pairs already in the checkpoint are kept).",
            "",
        ]
    return lines + [
        f"**native-pass at float32: {summary['native_pass_pct_float32']}% of the "
        f"{summary['float32_pairs']} (op, float32) pairs**; {summary['native_pass_pct_float32_tested']}% of the "
        f"{summary['float32_tested_pairs']} pairs not skipped, and {summary['pass_pct_float32_tested']}% of those "
        "pass (natively or through the fallback).",
        "",
    ]


def _md_summary_table(summary: dict) -> list[str]:
    lines = ["| class | all pairs | % | float32 pairs | % |", "| --- | ---: | ---: | ---: | ---: |"]
    for c in CLASSES:
        o, f = summary["overall"][c], summary["float32"][c]
        lines.append(f"| {c} | {o['count']} | {o['percent']} | {f['count']} | {f['percent']} |")
    return lines + [
        f"| total | {summary['pairs']} | 100 | {summary['float32_pairs']} | 100 |",
        "",
        f"A pair is an OpInfo with a dtype it supports; {summary['pairs_op_lacks_dtype']} combinations of an "
        "OpInfo with a dtype it does not support (e.g. bitwise ops at float32) are not pairs and are not counted.",
        "",
    ]


def _md_cell(text: str) -> str:
    return shorten(text).replace("|", "\\|")


def _md_rows_table(title: str, rows: Sequence[Row]) -> list[str]:
    lines = [f"### {title}", "", "| op | dtype | class | detail |", "| --- | --- | --- | --- |"]
    lines += [f"| `{r.op}` | {r.dtype} | {r.cls} | {_md_cell(r.detail)} |" for r in rows]
    return lines + [""]


def render_markdown(rows: Sequence[Row], summary: dict, meta: dict) -> str:
    """The generated report (without the markers): figures, the failures, then every row."""
    failures = [r for r in rows if r.cls in ("mismatch", "error")]
    lines = _md_intro(summary, meta) + _md_summary_table(summary)
    if failures:
        lines += _md_rows_table(f"Mismatches and errors ({len(failures)})", failures)
    listed = [r for r in rows if r.detail != OP_LACKS_DTYPE]
    lines += _md_rows_table(f"All pairs ({len(listed)})", listed)
    if len(listed) < len(rows):
        lines += [f"Not listed: {len(rows) - len(listed)} pairs skipped because the op does not support the dtype.", ""]
    return "\n".join(lines)


def replace_between_markers(existing: str, generated: str) -> str:
    """``existing`` with the text between the sweep markers replaced (markers appended if absent)."""
    block = f"{BEGIN_MARK}\n{generated}{END_MARK}\n"
    if BEGIN_MARK in existing and END_MARK in existing:
        head = existing[: existing.index(BEGIN_MARK)]
        tail = existing[existing.index(END_MARK) + len(END_MARK) :].lstrip("\n")
        return head + block + tail
    return existing.rstrip("\n") + "\n\n" + block if existing.strip() else block


def write_markdown(path: Path, rows: Sequence[Row], summary: dict, meta: dict) -> None:
    """Regenerates the sweep section of ``path``, keeping everything outside the markers."""
    existing = path.read_text() if path.exists() else ""
    path.write_text(replace_between_markers(existing, render_markdown(rows, summary, meta)))


def write_json(path: Path, rows: Sequence[Row], summary: dict, meta: dict) -> None:
    """The summary, the run's settings and every row, as JSON."""
    payload = {"meta": meta, "summary": summary, "rows": [r.to_json() for r in rows]}
    path.write_text(json.dumps(payload, indent=1) + "\n")


def report_meta(max_samples: int, argv: Sequence[str], mode: str = "eager") -> dict:
    """Where and how the sweep ran."""
    return {
        "mode": mode,
        "command": "python -m torch_axon.tools.conformance " + shlex.join(argv),
        "generated": datetime.date.today().isoformat(),
        "torch": torch.__version__,
        "device": torch.axon.get_device_name(),
        "max_samples": max_samples,
    }


def sort_rows(rows: Iterable[Row]) -> list[Row]:
    """Rows in op_db order, then dtype order."""
    order = {op_key(op): i for i, op in enumerate(load_op_db())}
    dorder = {name: i for i, name in enumerate(DTYPES)}
    return sorted(rows, key=lambda r: (order.get(r.op, len(order)), dorder.get(r.dtype, len(dorder))))


# --------------------------------------------------------------------------------------------
# Command line


def _dtype_list(text: str) -> list[torch.dtype]:
    """``float32,int64`` -> [torch.float32, torch.int64], for argparse."""
    unknown = [d for d in text.split(",") if d not in DTYPES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown dtype(s) {','.join(unknown)}; choose from {','.join(DTYPES)}")
    return [DTYPES[d] for d in text.split(",")]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(prog="python -m torch_axon.tools.conformance", description=__doc__.split("\n")[0])
    p.add_argument("--ops", help="comma-separated OpInfo names (or name.variant); default all")
    p.add_argument("--dtypes", type=_dtype_list, help=f"comma-separated, from {','.join(DTYPES)}; default all")
    p.add_argument("--max-samples", type=int, default=8, help="sample inputs per (op, dtype) pair (default 8)")
    p.add_argument("--limit", type=int, help="only the first N OpInfos")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per (op, dtype) pair (default 60)")
    p.add_argument(
        "--fast",
        action="store_true",
        help="the fast subset: FAST_OPS at float32, no checkpoint, reports only with --out",
    )
    p.add_argument("--restart", action="store_true", help="ignore and empty the checkpoint")
    add_output_args(p, "folder of the markdown report NAME.md", "folder of the checkpoint NAME.jsonl and NAME.json")
    p.add_argument("--name", help="the reports' and checkpoint's stem (default op-coverage, or op-coverage-MODE)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    modes = p.add_mutually_exclusive_group()
    modes.add_argument("--forward-ad", action="store_true", help="forward-mode AD (reports: op-coverage-fwad.*)")
    modes.add_argument("--vmap", action="store_true", help="vmap against a loop (reports: op-coverage-vmap.*)")
    modes.add_argument("--compile", action="store_true", help="torch.compile, forward (op-coverage-compile.*)")
    return p.parse_args(argv)


def _mode(a: argparse.Namespace) -> str:
    return "forward-ad" if a.forward_ad else "vmap" if a.vmap else "compile" if a.compile else "eager"


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the sweep and writes the reports; returns the exit status."""
    a = parse_args(argv)
    os.environ.setdefault("AXON_FALLBACK", "silent")  # the report lists the fallbacks; no warning per op
    ops = a.ops.split(",") if a.ops else (list(FAST_OPS) if a.fast else None)
    default_dtypes = list(GRAD_DTYPES) if a.forward_ad else list(DTYPES.values())  # forward AD: floats only
    dtypes = a.dtypes or ([torch.float32] if a.fast else default_dtypes)
    # --fast checks, and writes nothing unless asked: no checkpoint, reports only with --out.
    paths = None if a.fast and a.out is None else report_paths(*output_dirs(a), a.name or MODE_REPORT_STEM[_mode(a)])
    checkpoint = None if a.fast or paths is None else paths[0]
    if a.compile and not os.environ.get("TORCH_LOGS"):  # graph breaks and recompiles: the report has them
        import logging

        torch._logging.set_logs(dynamo=logging.ERROR, inductor=logging.ERROR)
    start = time.perf_counter()
    rows = run_sweep(ops, dtypes, a.max_samples, a.limit, a.timeout, checkpoint, a.restart, not a.no_progress, _mode(a))
    if checkpoint is not None:  # the report covers the whole checkpoint, earlier runs' rows too
        rows = list(read_checkpoint(checkpoint).values())
    return _report(a, paths, rows, start, sys.argv[1:] if argv is None else argv)


def _report(
    a: argparse.Namespace, paths: tuple[Path, Path, Path] | None, rows: list[Row], start: float, argv: Sequence[str]
) -> int:
    """Writes the reports (where ``paths`` says) and prints the summary and the failures."""
    rows = sort_rows(rows)
    summary = summarize(rows, len(load_op_db()))
    meta = report_meta(a.max_samples, argv, _mode(a))
    if paths is not None:
        _, markdown, json_path = paths
        write_markdown(markdown, rows, summary, meta)
        write_json(json_path, rows, summary, meta)
        print(f"wrote {markdown} and {json_path}", file=sys.stderr)
    print(json.dumps({k: summary[k] for k in ("opinfos_covered", "pairs", "float32", "native_pass_pct_float32")}))
    for r in rows:
        if r.cls in ("mismatch", "error"):
            print(f"{r.cls}: {r.op} {r.dtype}: {r.detail}")
    print(f"{len(rows)} pairs in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
