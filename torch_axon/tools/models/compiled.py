"""The sweep's compiled mode (``--compile``): each model compiled by ``torch.compile`` on axon
(Inductor generating OpenCL C, torch_axon/inductor) against the same model eager on the CPU:
forward and one training step, judged as in eager mode (compare.py: the same tolerances, and
the float64 step, compiled on axon too, where float32 cannot tell). Generation is not asked.

Where the compiled model fails or differs on axon, the same model is compiled by PyTorch's own
CPU Inductor (C++ code) and compared with eager the same way: if that fails or differs as well,
the fault is shared by the compiler stack upstream of Axon's code generator (Dynamo, AOTAutograd,
Inductor's lowerings) or by the model itself under compile, and the record's status is
``upstream``, with CPU Inductor's outcome in ``cpu_compile``. Everything else that is not ``ok``
is Axon's to fix.

Extra record fields: graphs (graphs Dynamo compiled on axon), graph_break (the first break's
reason), cpu_compile ("ok", or what CPU Inductor got: an error, or the errors past tolerance).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable

import torch

from ..conformance import PairTimeout, time_limit
from .compare import (
    FORWARD_TOL,
    GRAD_TOL,
    Case,
    _cpu_reference,
    _judge,
    first_line,
    float64_check,
    forward_and_train,
    prepare,
    quiet,
    to_device,
)

# train() and eval() are guarded on, and every graph break starts a graph of its own: Hugging
# Face models with breaks (cache objects, data-dependent branches) need more than the default 8
# compilations of a frame to stay compiled through forward and training.
RECOMPILE_LIMIT = 32


def _fresh_dynamo() -> None:
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()


def _compiled(model: torch.nn.Module) -> torch.nn.Module:
    """The model with its calls compiled in place (Module.compile): parameter names stay those of
    the eager model (torch.compile's wrapper would prefix them), so gradients pair up by name."""
    model.compile()
    return model


def _graph_note(record: dict) -> None:
    from torch._dynamo.utils import counters

    record["graphs"] = int(counters["stats"]["unique_graphs"])
    breaks = counters["graph_break"]
    if breaks:
        record["graph_break"] = " ".join(str(next(iter(breaks))).split())[:200]


def run_compiled(build: Callable[[], Case], record: dict, timeout: float) -> dict:
    """Fills ``record`` (compare.py's fields and the ones above) and returns it."""
    start = time.perf_counter()
    record["mode"] = "compile"
    with quiet(), torch._dynamo.config.patch(recompile_limit=RECOMPILE_LIMIT):
        try:
            with time_limit(timeout):
                _compare_compiled(build, record)
        except PairTimeout:
            record.setdefault("status", "fails")
            where = {"cannot_build": " (building it)", "cpu_fails": " (running it eagerly on the CPU)"}
            if record.get("cpu_compile") == "timeout":  # axon's verdict stands; CPU Inductor gave none
                record["cpu_compile"] = f"no result within {timeout:.0f} s"
            else:
                record["error"] = f"timeout: no result within {timeout:.0f} s{where.get(record['status'], '')}"
        finally:
            _fresh_dynamo()  # the next model starts from nothing; this one's graphs are freed
    record["seconds"] = round(time.perf_counter() - start, 2)
    return record


def cpu_inductor_outcome(build: Callable[[], Case], timeout: float) -> str:
    """For a model whose compiled run on axon killed its process (supervisor.py), whether PyTorch's
    CPU Inductor compiles it and takes the same forward and training step: "ok" where it does (the
    crash is then axon's), else its error. It runs in a process of its own, as the crash may repeat."""
    record: dict = {}
    with quiet(), torch._dynamo.config.patch(recompile_limit=RECOMPILE_LIMIT):
        try:
            with time_limit(timeout):
                prepared = prepare(build, record)
                if prepared is None:
                    return f"cannot be built here: {record.get('error')}"
                case, untouched, inputs = prepared
                case.generate = None
                cpu = _cpu_reference(case, record)
                if cpu is None:
                    return f"fails eagerly on the CPU here: {record.get('error')}"
                _fresh_dynamo()
                _run(case, untouched, inputs, {**cpu, "grads64": None}, {})
        except PairTimeout:
            return f"no result within {timeout:.0f} s"
        except Exception as e:  # noqa: BLE001
            return first_line(e)
    return "ok"


def _compare_compiled(build: Callable[[], Case], record: dict) -> None:
    prepared = prepare(build, record)
    if prepared is None:
        return
    case, untouched, untouched_inputs = prepared
    case.generate = None
    pristine = copy.deepcopy(untouched)  # for CPU Inductor, should axon fail: .to() moves in place
    record["status"] = "cpu_fails"
    cpu = _cpu_reference(case, record)
    if cpu is None:
        return
    record["status"] = "fails"  # provisional (a timeout from here on is axon's)
    _fresh_dynamo()
    torch.axon.fallback_ops(reset=True)
    try:
        _run(case, untouched.to("axon"), to_device(untouched_inputs, "axon"), cpu, record)
    except Exception as e:  # noqa: BLE001
        record["error"] = first_line(e)
    finally:
        _graph_note(record)
        record["fallbacks"] = torch.axon.fallback_ops(reset=True)
    if "error" not in record and "grad_noise_ratio" in record:
        _fresh_dynamo()
        float64_check(case, cpu["grads64"], record, _compiled)
    del record["status"]
    _judge(record)
    if record["status"] != "ok":
        record["cpu_compile"] = "timeout"  # until CPU Inductor's outcome is known
        _blame_upstream(case, pristine, untouched_inputs, cpu, record)


def _run(case: Case, model: torch.nn.Module, inputs, cpu: dict, record: dict) -> None:
    """Forward and a training step of ``model`` compiled, against the eager CPU results."""
    forward_and_train(case, _compiled(model), inputs, cpu, record)


def _blame_upstream(case: Case, pristine: torch.nn.Module, inputs, cpu: dict, record: dict) -> None:
    """The model compiled by CPU Inductor, judged alike: where it raises too, or differs where
    axon differs (forward, gradients), the record becomes ``upstream``."""
    _fresh_dynamo()
    on_cpu: dict = {}
    try:
        _run(case, pristine, inputs, {**cpu, "grads64": None}, on_cpu)
    except Exception as e:  # noqa: BLE001
        record.update(status="upstream", cpu_compile=first_line(e))
        return
    shared = []
    if "error" not in record:  # axon raised where CPU Inductor did not: axon's
        if not record.get("matches") and on_cpu["forward_error"] > FORWARD_TOL:
            shared.append(f"forward error {on_cpu['forward_error']:.1e}")
        # past GRAD_TOL but within the CPU's own float32 spread, CPU Inductor's gradients do not tell
        cpu_grads_differ = on_cpu["grad_error"] > GRAD_TOL and on_cpu.get("grad_noise_ratio", float("inf")) > 1.0
        if record.get("matches") and cpu_grads_differ:
            shared.append(f"gradient error {on_cpu['grad_error']:.1e}")
    record["cpu_compile"] = "; ".join(shared) or "ok"
    if shared:
        record["status"] = "upstream"
