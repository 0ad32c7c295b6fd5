"""Module sweep: every ModuleInfo of PyTorch's ``module_db`` run on the CPU and on ``axon``, compared.

Run it as ``python -m torch_axon.tools.module_sweep`` (``--help`` lists the options). For each ModuleInfo,
dtype, training mode (True and False) and module input, the module is built on the CPU from the
constructor input (a lazy module is materialised there by one forward), deep-copied to axon with
``.to("axon")``, and both run forward on the same inputs; outputs and buffers (running statistics)
are compared, then a fixed random grad_output is backpropagated and the input and parameter
gradients compared. Tolerances and the float64 yardstick are the OpInfo sweep's
(``torch_axon.tools.conformance``): a float32 value that differs from the CPU's beyond the tolerance still
matches if it is no less accurate than the CPU's against the same module run in float64.

A module whose CPU output changes with the seed (FractionalMaxPool, dropout in training) is
random: its values are not compared, only shapes and dtypes, and each floating output's mean and
standard deviation must lie within the range that several CPU runs with other seeds span (widened
by that range). Each (module, dtype) gets one status:

- ``matches``: every input matched and nothing ran through Axon's counted CPU fallback;
- ``fallback-used``: every input matched, but some ops fell back (listed);
- ``mismatch`` / ``error``: an output, buffer or gradient differs / axon raised where the CPU did
  not (or ``timeout``); every failing input is listed;
- ``skipped``: nothing could be compared, with the reason (the CPU itself raised, the device lacks
  the dtype), or the values differ where PyTorch waives its own CPU-vs-device test of the module
  (test_cpu_gpu_parity).

Records are appended to a JSONL checkpoint, ``DATA/modules.jsonl`` (a ``started`` line first, so a
module that kills the process is recorded as an error rather than retried), so an interrupted sweep
resumes; ``--fresh`` starts over. Reports: ``OUT/modules.md`` (between the sweep markers) and every
record in ``DATA/modules.json``; ``--out`` and ``--data`` name the folders (default ``./axon-reports``
and OUT/data; ``make modules`` passes ``--out docs --data build/reports``).

``--compile``: the compiled mode (``compiled_outcome``): the module on axon is called through
``torch.compile``; an input whose failure CPU Inductor shares is a skip marked upstream. Its records
are ``DATA/modules-compile.jsonl`` and ``.json``; ``OUT/modules.md`` shows both modes' records.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import json
import os
import re
import shlex
import sys
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from torch_axon.tools import add_output_args, output_dirs
from torch_axon.tools.conformance import (
    AXON,
    REFERENCE_DTYPES,
    Check,
    Outcome,
    PairTimeout,
    Tolerance,
    _widen,
    check_results,
    classify,
    compile_graph_note,
    compile_pair,
    decorated_for_all_devices,
    describe,
    describe_compile_error,
    device_supports,
    dtype_name,
    grad_inputs,
    grad_weights,
    input_grads,
    leaves,
    map_structure,
    replace_between_markers,
    shorten,
    time_limit,
    to_axon,
    unsupported_reason,
)

REPORT_NAME = "modules"  # OUT/modules.md, DATA/modules.json, DATA/modules.jsonl
COMPILED_NAME = "modules-compile"  # --compile: DATA/modules-compile.json(l), a section of OUT/modules.md
DTYPES = {"float32": torch.float32, "float64": torch.float64}
STATUSES = ("matches", "fallback-used", "mismatch", "error", "skipped")
# conformance.classify's classes, in this sweep's words.
STATUS_OF_CLASS = {
    "native-pass": "matches",
    "fallback-pass": "fallback-used",
    "mismatch": "mismatch",
    "error": "error",
    "skip": "skipped",
}
RANDOM_SEEDS = range(1, 9)  # CPU runs that span a random module's statistics
RANDOM_NOTE = "random output: shapes, dtypes and statistics compared"
UPSTREAM_NOTE = "compiled by CPU Inductor too"  # --compile: a skip that CPU Inductor fails as well
MAX_FAILURES_KEPT = 8


@dataclass
class Record:
    """The outcome for one (module, dtype): status, first failure or skip reason, fallbacks."""

    module: str
    dtype: str
    status: str
    detail: str = ""
    fallbacks: list[str] = field(default_factory=list)
    inputs: int = 0  # module inputs compared, both training modes
    skipped_inputs: dict[str, int] = field(default_factory=dict)  # inputs not compared, by reason
    failures: list[str] = field(default_factory=list)  # "train #3 desc: output: ..." per failing input
    seconds: float = 0.0


def load_module_db() -> list:
    """PyTorch's ModuleInfo database (needs the ``expecttest`` package, as op_db does)."""
    from torch.testing._internal.common_modules import module_db

    return module_db


def select_modules(names: Sequence[str] | None = None, limit: int | None = None) -> list:
    """The ModuleInfos named in ``names`` (``nn.Linear`` or ``Linear``; all if None), the first ``limit``."""
    wanted = set(names) if names else None
    chosen = [m for m in load_module_db() if wanted is None or {m.name, m.name.removeprefix("nn.")} & wanted]
    return chosen[:limit] if limit is not None else chosen


def parity_waived(module_info, dtype: torch.dtype) -> bool:
    """Whether PyTorch skips or expects to fail its own CPU-vs-device module test (test_cpu_gpu_parity)
    on every device for this dtype: a mismatch there is a skip, as in the OpInfo sweep."""

    def skips_or_fails(decorator) -> bool:
        marked = decorator(lambda: None)
        return bool(getattr(marked, "__unittest_skip__", False) or getattr(marked, "__unittest_expecting_failure__", 0))

    return decorated_for_all_devices(
        module_info.decorators,
        "test_cpu_gpu_parity",
        dtype,
        lambda info: any(skips_or_fails(d) for d in info.decorators),
    )


# --------------------------------------------------------------------------------------------
# One module input


def map_shared(fn, obj: Any) -> Any:
    """``map_structure(fn, obj)``, but a tensor that occurs twice (KLDivLoss(x, x)) maps to one result,
    so that aliasing survives the move (gradients of an input used twice add up)."""
    results: dict[int, Any] = {}

    def once(x: Any) -> Any:
        if not isinstance(x, torch.Tensor):
            return fn(x)
        if id(x) not in results:
            results[id(x)] = fn(x)
        return results[id(x)]

    return map_structure(once, obj)


def detached_clone(obj: Any) -> Any:
    """A copy of every tensor leaf, so a run that writes in place leaves the sample as it was."""
    return map_shared(lambda t: t.detach().clone() if isinstance(t, torch.Tensor) else t, obj)


def build_cpu_module(module_info, module_input, dtype: torch.dtype, training: bool) -> torch.nn.Module:
    """The module built on the CPU from the constructor input; a lazy one materialised by one forward."""
    ctor = module_input.constructor_input
    module = module_info.module_cls(*ctor.args, **ctor.kwargs).to(dtype)
    module.train(training)
    if module_info.is_lazy:  # its parameters are random at the first forward: make them once, then copy
        with torch.no_grad():
            module(
                *detached_clone(module_input.forward_input.args), **detached_clone(module_input.forward_input.kwargs)
            )
    return module


def forward(module: torch.nn.Module, inputs: tuple[tuple, dict], seed: int = 0) -> Any:
    """The module on (args, kwargs), the global seed set first.

    Attention runs as the math composition everywhere: that is what axon runs (it has no fused
    attention kernel), while the CPU would pick its flash kernel, whose different rounding is no
    measure of axon.
    """
    from torch.nn.attention import SDPBackend, sdpa_kernel

    torch.manual_seed(seed)
    with sdpa_kernel(SDPBackend.MATH):
        return module(*inputs[0], **inputs[1])


def cpu_runs_with_seeds(module: torch.nn.Module, inputs: tuple[tuple, dict], seeds) -> list:
    """Outputs of fresh copies of the module on copies of the inputs, one per seed (no autograd)."""
    with torch.no_grad():
        return [forward(copy.deepcopy(module), detached_clone(inputs), seed) for seed in seeds]


def same_outputs(a: Any, b: Any) -> bool:
    """Whether two CPU results are identical (NaN where the other has NaN counts as equal)."""
    return all(_same_leaf(x, y) for x, y in zip(leaves(a), leaves(b), strict=True))


def _same_leaf(x: Any, y: Any) -> bool:
    if not isinstance(x, torch.Tensor):
        return x == y
    return x.shape == y.shape and bool(((x == y) | (x.isnan() & y.isnan())).all())


def check_random_statistics(cpu_runs: list, axon_out: Any) -> None:
    """Asserts that each floating axon output's mean and std lie within the span of the CPU runs'
    (widened by that span), since random values cannot be compared one by one."""
    for i, leaf in enumerate(leaves(axon_out)):
        if not (isinstance(leaf, torch.Tensor) and leaf.is_floating_point() and leaf.numel() > 1):
            continue
        for stat in (torch.mean, torch.std):
            cpu_stats = torch.stack([stat(leaves(run)[i].double()) for run in cpu_runs])
            low, high = cpu_stats.min().item(), cpu_stats.max().item()
            span = high - low + 1e-6
            value = stat(leaf.detach().cpu().double()).item()
            if not low - span <= value <= high + span:
                raise AssertionError(
                    f"output leaf {i}: {stat.__name__} {value:.6g} on axon, CPU runs span [{low:.6g}, {high:.6g}]"
                )


def named_grads(module: torch.nn.Module, inputs: tuple[tuple, dict]) -> dict[str, torch.Tensor]:
    """The tensors to differentiate by name: inputs that require grad, then trainable parameters."""
    named = {f"input {i}": t for i, t in enumerate(grad_inputs(inputs[0], (), inputs[1]))}
    named.update({f"param {n}": p for n, p in module.named_parameters() if p.requires_grad})
    return named


def gradients(module: torch.nn.Module, inputs: tuple[tuple, dict], outputs: Any, weights: list) -> dict:
    """d(sum of output * grad_output)/d(inputs and parameters), by name."""
    targets = named_grads(module, inputs)
    return dict(zip(targets, input_grads(outputs, weights, list(targets.values())), strict=True))


class ModuleReference:
    """The module and its inputs in float64 on the CPU: the yardstick when axon and the CPU differ."""

    def __init__(self, cpu_module: torch.nn.Module, inputs: tuple[tuple, dict]):
        # Copied now, before the CPU run updates buffers or writes into the inputs.
        self.module = copy.deepcopy(cpu_module).to(torch.float64)
        self.inputs = map_shared(_widen, inputs)
        self._outputs = None

    def outputs(self) -> Any:
        if self._outputs is None:
            self._outputs = forward(self.module, self.inputs)
        return self._outputs

    def buffers(self) -> dict:
        self.outputs()
        return dict(self.module.named_buffers())

    def grads(self, weights: list) -> dict:
        return gradients(self.module, self.inputs, self.outputs(), [w.double() for w in weights])


def run_input(module_info, module_input, dtype: torch.dtype, training: bool, compiled: bool = False) -> Outcome:
    """Builds, runs forward and backward on the CPU and on axon, and compares; one Outcome.
    ``compiled``: the axon module runs compiled by torch.compile (see compiled_outcome)."""
    if module_input.forward_input is None:
        return Outcome("skip", "no forward input")
    cpu_inputs = (tuple(module_input.forward_input.args), dict(module_input.forward_input.kwargs))
    try:
        cpu_module = build_cpu_module(module_info, module_input, dtype, training)
        seed_runs = random_runs(cpu_module, cpu_inputs)  # before any run changes buffers or inputs
    except Exception as e:
        return Outcome("skip", f"CPU raised: {describe(e)}")
    pristine = (copy.deepcopy(cpu_module), map_shared(_cpu_copy, cpu_inputs)) if compiled else None
    axon_module = copy.deepcopy(cpu_module).to(AXON)
    axon_inputs = map_shared(to_axon, cpu_inputs)  # moved before any run can write into them
    is_random = seed_runs is not None
    use_reference = not is_random and dtype in REFERENCE_DTYPES
    reference = ModuleReference(cpu_module, cpu_inputs) if use_reference else None
    try:
        cpu_out = forward(cpu_module, cpu_inputs)
    except Exception as e:
        return Outcome("skip", f"CPU raised: {describe(e)}")
    cpu = (cpu_module, cpu_inputs, cpu_out)
    check = Check(Tolerance(dtype), values=not is_random)
    if compiled:
        return compiled_outcome(cpu, (axon_module, axon_inputs), pristine, check, reference, seed_runs)
    return compare_run(cpu, (axon_module, axon_inputs), check, reference, seed_runs)


def compare_run(cpu: tuple, other: tuple, check: Check, reference, seed_runs: list | None, run=None) -> Outcome:
    """``other`` (module, inputs) run forward and backward against the CPU's (module, inputs,
    outputs): outputs (or a random module's statistics), buffers and gradients. ``run`` is what
    is called for the module (its torch.compile wrapper), if not the module itself."""
    module, inputs = other
    try:
        out = forward(module if run is None else run, inputs)
    except Exception as e:
        inner = getattr(e, "inner_exception", e)
        reason = unsupported_reason(inner) if isinstance(inner, Exception) else None
        return Outcome("skip", reason) if reason else Outcome("error", "forward: " + describe_compile_error(e))
    is_random = seed_runs is not None
    steps = (
        lambda: check_results(cpu[2], out, check, reference and reference.outputs),
        lambda: random_statistics(seed_runs, out) if is_random else Outcome("pass"),
        lambda: compare_buffers(cpu[0], module, check, reference),
        lambda: compare_gradients(cpu, (module, inputs, out), check, reference),
    )
    notes = []
    for step in steps:
        outcome = step()
        if outcome.status != "pass":
            return outcome
        notes.append(outcome.detail)
    return Outcome("pass", "; ".join(sorted({n for n in notes if n} | ({RANDOM_NOTE} if is_random else set()))))


def _cpu_copy(x: Any) -> Any:
    """A CPU copy of a tensor leaf (still requiring grad if it did); anything else as it is."""
    return x.detach().clone().requires_grad_(x.requires_grad) if isinstance(x, torch.Tensor) else x


def compiled_outcome(cpu: tuple, axon: tuple, pristine: tuple, check: Check, reference, seed_runs) -> Outcome:
    """The axon module called through torch.compile (a wrapper: Module.compile would leave
    torch.nn's own modules uncompiled, their files being skipped by Dynamo) in a fresh Dynamo
    state, against eager on the CPU. Where it fails or differs, the pristine CPU copy compiled by
    CPU Inductor is compared alike: if that fails or differs too, the input is a skip that says
    so (upstream of Axon's code generator). An input whose run compiled no graph ran eagerly: a
    skip with the graph break's reason."""
    with compile_pair():
        outcome = compare_run(cpu, axon, check, reference, seed_runs, torch.compile(axon[0]))
        graphs, graph_break = compile_graph_note()
    if outcome.status in ("error", "mismatch"):
        with compile_pair():
            on_cpu_check = replace(check, on_axon=False)
            on_cpu = compare_run(cpu, pristine, on_cpu_check, reference, seed_runs, torch.compile(pristine[0]))
        if on_cpu.status != "pass":
            return Outcome("skip", shorten(f"{UPSTREAM_NOTE}: {on_cpu.status}: {on_cpu.detail}"))
    if outcome.status == "pass" and not graphs:
        return Outcome("skip", shorten(f"Dynamo compiled no graph (it ran eagerly): {graph_break}"))
    return outcome


def random_runs(cpu_module: torch.nn.Module, cpu_inputs: tuple) -> list | None:
    """The CPU outputs for every seed of RANDOM_SEEDS if the module is random (two seeds give
    different outputs), else None."""
    probe = cpu_runs_with_seeds(cpu_module, cpu_inputs, RANDOM_SEEDS[:2])
    if same_outputs(*probe):
        return None
    return probe + cpu_runs_with_seeds(cpu_module, cpu_inputs, RANDOM_SEEDS[2:])


def random_statistics(seed_runs: list, axon_out: Any) -> Outcome:
    """The random output's statistics against the CPU's runs with other seeds."""
    try:
        check_random_statistics(seed_runs, axon_out)
    except AssertionError as e:
        return Outcome("mismatch", shorten(str(e)))
    return Outcome("pass")


def compare_buffers(cpu_module, axon_module, check: Check, reference: ModuleReference | None) -> Outcome:
    """Buffers after the forward (running statistics a training forward updates)."""
    cpu_buffers, axon_buffers = dict(cpu_module.named_buffers()), dict(axon_module.named_buffers())
    return check_results(cpu_buffers, axon_buffers, check, reference and reference.buffers, path="buffer")


def compare_gradients(cpu: tuple, axon: tuple, check: Check, reference: ModuleReference | None) -> Outcome:
    """Input and parameter gradients for a fixed random grad_output; ``cpu`` / ``axon``: (module, inputs, out)."""
    weights = grad_weights(cpu[2])
    if not weights or not named_grads(cpu[0], cpu[1]):
        return Outcome("pass")  # nothing differentiable
    try:
        cpu_grads = gradients(*cpu, weights)
    except Exception:
        return Outcome("pass", "no gradient on the CPU either")
    try:
        axon_grads = gradients(*axon, weights)
    except Exception as e:
        return Outcome("error", "backward: " + describe(e))
    ref = reference and (lambda: reference.grads(weights))
    return check_results(cpu_grads, axon_grads, check, ref, path="grad")


# --------------------------------------------------------------------------------------------
# One (module, dtype)


def module_inputs(module_info, dtype: torch.dtype, training: bool) -> list:
    """The ModuleInfo's inputs on the CPU, requiring grad."""
    return module_info.module_inputs_func(module_info, device="cpu", dtype=dtype, requires_grad=True, training=training)


def input_label(training: bool, index: int, module_input) -> str:
    return f"{'train' if training else 'eval'} #{index}" + (f" {module_input.desc}" if module_input.desc else "")


def run_module(module_info, dtype: torch.dtype, compiled: bool = False) -> tuple[list[Outcome], list[str]]:
    """Outcomes of every input in both training modes, and labelled failures (details prefixed)."""
    outcomes, failures = [], []
    for training in (True, False):
        torch.manual_seed(0)  # the inputs are random: the same ones on every run
        for i, module_input in enumerate(module_inputs(module_info, dtype, training)):
            try:
                outcome = run_input(module_info, module_input, dtype, training, compiled)
            except Exception as e:  # anything the per-step guards missed (moving to axon, say)
                outcome = Outcome("error", describe(e))
            outcome.detail = f"{input_label(training, i, module_input)}: {outcome.detail}" if outcome.detail else ""
            outcomes.append(outcome)
            if outcome.status in ("error", "mismatch"):
                failures.append(outcome.detail)
    return outcomes, failures


def sweep_module(module_info, dtype: torch.dtype, timeout: float, compiled: bool = False) -> Record:
    """Runs and classifies one (module, dtype); never raises (but KeyboardInterrupt)."""
    record = Record(module_info.name, dtype_name(dtype), "skipped")
    start = time.perf_counter()
    if dtype not in module_info.dtypes:
        record.detail = "dtype not supported by the module"
        return record
    if not device_supports(dtype):
        record.detail = "dtype not supported on the device"
        return record
    torch.axon.fallback_ops(reset=True)
    try:
        with warnings.catch_warnings(), time_limit(timeout):
            warnings.simplefilter("ignore")
            outcomes, record.failures = run_module(module_info, dtype, compiled)
        cls, record.detail = classify(outcomes, {})
        record.status = STATUS_OF_CLASS[cls]
        if record.status == "mismatch" and parity_waived(module_info, dtype):
            record.status = "skipped"
            record.detail = shorten("values differ, as PyTorch allows (test_cpu_gpu_parity): " + record.detail)
        record.inputs = sum(o.status != "skip" for o in outcomes)
        record.skipped_inputs = dict(Counter(failure_cause(o.detail) for o in outcomes if o.status == "skip"))
    except PairTimeout:
        record.status, record.detail = "error", f"timeout ({timeout:g} s)"
    except Exception as e:  # the inputs function itself, say
        record.status, record.detail = "error", describe(e)
    record.fallbacks = sorted(torch.axon.fallback_ops(reset=True))
    if record.status == "matches" and record.fallbacks:
        record.status = "fallback-used"
    record.failures = record.failures[:MAX_FAILURES_KEPT]
    record.seconds = round(time.perf_counter() - start, 3)
    return record


# --------------------------------------------------------------------------------------------
# Checkpoint and sweep


def read_checkpoint(path: Path | None) -> dict[tuple[str, str], Record]:
    """Records by (module, dtype), the last one winning; one left at ``started`` killed the process."""
    records: dict[tuple[str, str], Record] = {}
    if path is not None and path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                record = Record(**json.loads(line))
                records[(record.module, record.dtype)] = record
    for record in records.values():
        if record.status == "started":
            record.status, record.detail = "error", "the process died running it (crash or out of memory)"
    return records


def append_checkpoint(path: Path | None, record: Record) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write(json.dumps(asdict(record)) + "\n")


def run_sweep(
    names: Sequence[str] | None = None,
    dtypes: Sequence[torch.dtype] = (torch.float32,),
    checkpoint: Path | str | None = None,
    fresh: bool = False,
    limit: int | None = None,
    timeout: float = 120.0,
    progress: bool = True,
    compiled: bool = False,
) -> list[Record]:
    """Sweeps the selected (module, dtype) pairs, resuming from the JSONL ``checkpoint`` (None: no
    checkpoint); returns their records. ``compiled``: the compiled mode (run_input)."""
    path = Path(checkpoint) if checkpoint else None
    if fresh and path is not None and path.exists():
        path.unlink()
    done = read_checkpoint(path)
    pairs = [(m, dt) for m in select_modules(names, limit) for dt in dtypes]
    todo = [(m, dt) for m, dt in pairs if (m.name, dtype_name(dt)) not in done]
    start = time.perf_counter()
    for i, (module_info, dt) in enumerate(todo, 1):
        append_checkpoint(path, Record(module_info.name, dtype_name(dt), "started"))
        record = sweep_module(module_info, dt, timeout, compiled)
        append_checkpoint(path, record)
        done[(record.module, record.dtype)] = record
        if progress:
            line = f"[{i}/{len(todo)}] {time.perf_counter() - start:5.0f}s {record.module} {record.dtype}: "
            print(line + f"{record.status} {shorten(record.detail, 90)}", file=sys.stderr, flush=True)
    return [done[(m.name, dtype_name(dt))] for m, dt in pairs]


# --------------------------------------------------------------------------------------------
# Reports


def summarize(records: Sequence[Record]) -> dict:
    """Counts per status, overall and per dtype."""
    by_dtype = defaultdict(Counter)
    for r in records:
        by_dtype[r.dtype][r.status] += 1
    counts = Counter(r.status for r in records)
    return {
        "modules": len({r.module for r in records}),
        "records": len(records),
        "status": {s: counts.get(s, 0) for s in STATUSES},
        "by_dtype": {dt: {s: c.get(s, 0) for s in STATUSES} for dt, c in by_dtype.items()},
    }


def failure_cause(text: str) -> str:
    """A failure without its input label and figures, so that failures of one cause group together."""
    text = text.split(": ", 1)[1] if re.match(r"(train|eval) #\d+", text) else text
    text = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", text)
    return shorten(text.split(" (up to")[0].split("Greatest")[0], 120)


def top_causes(records: Sequence[Record]) -> list[tuple[str, list[str]]]:
    """(cause, modules) for every failure cause (each module's every failing input), most modules first."""
    modules_by_cause: dict[str, set[str]] = defaultdict(set)
    for r in records:
        for failure in r.failures or ([r.detail] if r.status == "error" else []):
            modules_by_cause[failure_cause(failure)].add(f"{r.module} {r.dtype}")
    return sorted(((c, sorted(m)) for c, m in modules_by_cause.items()), key=lambda cm: (-len(cm[1]), cm[0]))


def _cell(text: str) -> str:
    return shorten(text).replace("|", "\\|")


COMPILED_INTRO = (
    "Each module compiled in place by `torch.compile` (Inductor generating OpenCL C; a fresh Dynamo state per "
    "input) on axon, against the module eager on the CPU: outputs, buffers, input and parameter gradients (the "
    "compiled backward). Where axon fails or differs, PyTorch's CPU Inductor compiles the same module: an input "
    f"that fails or differs there too is skipped as upstream ('{UPSTREAM_NOTE}'), and so is one where Dynamo "
    "compiled no graph."
)


def render_markdown(records: Sequence[Record], summary: dict, meta: dict, compiled: bool = False) -> str:
    """The generated report: summary counts, failure causes, fallback ops, then every module."""
    title = "module_db compiled on axon against eager on the CPU" if compiled else "module_db on axon against the CPU"
    upstream = sorted({f"`{r.module}` {r.dtype}" for r in records if any(UPSTREAM_NOTE in k for k in r.skipped_inputs)})
    lines = [
        f"## Module sweep: {title}",
        "",
        f"Generated by `{meta['command']}` (rerun it rather than editing between the markers): {meta['generated']}, "
        f"torch {meta['torch']}, device {meta['device']}. Every ModuleInfo of PyTorch's `module_db`, each input "
        "in training and in eval mode: outputs, buffers, input and parameter gradients compared with the CPU. "
        "Statuses are defined in `torch_axon/tools/module_sweep.py`.",
        "",
        "| status | " + " | ".join(summary["by_dtype"]) + " |",
        "| --- |" + " ---: |" * len(summary["by_dtype"]),
    ]
    if compiled:
        modules = ", ".join(upstream) or "none"
        lines[3:3] = ["", f"{COMPILED_INTRO} Modules with such upstream inputs: {len(upstream)} ({modules})."]
    for s in STATUSES:
        lines.append(f"| {s} | " + " | ".join(str(c[s]) for c in summary["by_dtype"].values()) + " |")
    lines.append("| total | " + " | ".join(str(sum(c.values())) for c in summary["by_dtype"].values()) + " |")
    causes = top_causes(records)
    if causes:
        lines += ["", "### Failure causes", "", "| cause | modules |", "| --- | --- |"]
        lines += [f"| {_cell(cause)} | {', '.join(mods)} |" for cause, mods in causes]
    fallback_users = defaultdict(list)
    for r in records:
        for op in r.fallbacks:
            fallback_users[op].append(f"{r.module} {r.dtype}")
    if fallback_users:
        lines += ["", "### Ops that fell back to the CPU", "", "| op | modules |", "| --- | --- |"]
        lines += [f"| `{op}` | {', '.join(mods)} |" for op, mods in sorted(fallback_users.items())]
    lines += ["", "### All modules", "", "Inputs: those compared, and those skipped (the reasons in the detail).", ""]
    lines += ["| module | dtype | status | inputs | skipped | fallbacks | detail |"]
    lines += ["| --- | --- | --- | ---: | ---: | --- | --- |"]
    for r in records:
        fallbacks, skipped = ", ".join(r.fallbacks), sum(r.skipped_inputs.values())
        detail = "; ".join(
            [r.detail] * bool(r.detail) + [f"skipped: {why} (x{n})" for why, n in r.skipped_inputs.items()]
        )
        lines.append(
            f"| `{r.module}` | {r.dtype} | {r.status} | {r.inputs} | {skipped} | {fallbacks} | {_cell(detail)} |"
        )
    return "\n".join(lines) + "\n"


def write_reports(by_mode: dict[str, tuple[Sequence[Record], dict]], markdown: Path | None, data: Path | None) -> dict:
    """The Markdown report (between the sweep markers, prose outside kept: the eager section, then the
    compiled one where it has records) and each mode's JSON report (DATA/modules.json,
    DATA/modules-compile.json); ``by_mode``: name -> (records, meta). Returns this run's summary
    (the last mode with records)."""
    sections, summary = [], summarize([])
    for name, (records, meta) in by_mode.items():
        if not records:
            continue
        summary = summarize(records)
        sections.append(render_markdown(records, summary, meta, compiled=name == COMPILED_NAME))
        if data is not None:
            payload = {"meta": meta, "summary": summary, "records": [asdict(r) for r in records]}
            (data / f"{name}.json").write_text(json.dumps(payload, indent=1) + "\n")
    if markdown is not None:
        existing = markdown.read_text() if markdown.exists() else ""
        markdown.write_text(replace_between_markers(existing, "\n".join(sections)))
    return summary


# --------------------------------------------------------------------------------------------
# Command line


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m torch_axon.tools.module_sweep", description=__doc__.split("\n")[0])
    p.add_argument("--only", help="comma-separated ModuleInfo names (nn.Linear or Linear); default all")
    p.add_argument("--dtypes", default="float32", help=f"comma-separated, from {','.join(DTYPES)} (default float32)")
    p.add_argument("--fresh", action="store_true", help="forget the checkpoint's records and start over")
    p.add_argument("--limit", type=int, help="only the first N ModuleInfos")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per (module, dtype) (default 120)")
    add_output_args(
        p, "folder of the markdown report modules.md", "folder of the checkpoint modules.jsonl and modules.json"
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument(
        "--compile", action="store_true", help="the compiled mode: torch.compile on axon (records of its own)"
    )
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the sweep, writes the reports over every record of both modes' checkpoints, prints the failures."""
    a = parse_args(argv)
    os.environ.setdefault("AXON_FALLBACK", "silent")  # the report lists the fallbacks; no warning per op
    dtypes = [DTYPES[d] for d in a.dtypes.split(",")]
    names = a.only.split(",") if a.only else None
    out, data = output_dirs(a)
    mode = COMPILED_NAME if a.compile else REPORT_NAME
    run_sweep(names, dtypes, data / f"{mode}.jsonl", a.fresh, a.limit, a.timeout, not a.quiet, a.compile)
    meta = {
        "command": "python -m torch_axon.tools.module_sweep " + shlex.join(sys.argv[1:] if argv is None else argv),
        "generated": datetime.date.today().isoformat(),
        "torch": torch.__version__,
        "device": torch.axon.get_device_name(),
    }
    order = {m.name: i for i, m in enumerate(load_module_db())}
    by_mode = {}
    for name in (REPORT_NAME, COMPILED_NAME):
        records = sorted(_records(data, name).values(), key=lambda r: (order.get(r.module, 0), r.dtype))
        by_mode[name] = (records, meta if name == mode else _earlier_meta(data / f"{name}.json"))
    summary = write_reports(by_mode, out / f"{REPORT_NAME}.md", data)
    print(f"wrote {out / REPORT_NAME}.md and {data}/{mode}.json", file=sys.stderr)
    print(json.dumps(summary["by_dtype"]))
    for r in by_mode[mode][0]:
        if r.status in ("mismatch", "error"):
            print(f"{r.status}: {r.module} {r.dtype}: {r.detail}")
    return 0


def _records(data: Path, name: str) -> dict[tuple[str, str], Record]:
    """A mode's records: its checkpoint's, or where there is none (a sweep run elsewhere), its
    JSON report's."""
    if (data / f"{name}.jsonl").exists():
        return read_checkpoint(data / f"{name}.jsonl")
    try:
        records = [Record(**r) for r in json.loads((data / f"{name}.json").read_text())["records"]]
    except (OSError, ValueError, KeyError):
        return {}
    return {(r.module, r.dtype): r for r in records}


def _earlier_meta(json_path: Path) -> dict:
    """The other mode's run settings, from its JSON report (its records come from its checkpoint)."""
    try:
        return json.loads(json_path.read_text())["meta"]
    except (OSError, ValueError, KeyError):
        return {"command": "?", "generated": "?", "torch": torch.__version__, "device": "?"}


if __name__ == "__main__":
    sys.exit(main())
