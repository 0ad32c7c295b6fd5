"""The comparison every sweep family shares: one model, built once on the CPU, runs forward, one
training step and (for generative heads) greedy generation on the CPU and, from an untouched
copy, on axon; the outputs, the loss, every parameter's gradient and the generated tokens are
compared.

Matching is judged on the worst element relative to the largest CPU value of the same tensor
(outputs, each parameter's gradient), so that tiny random models with small outputs are held
to the same standard as large ones.

Gradients are judged in float32 where float32 can tell: within GRAD_TOL they match, and past
the CPU's own float32 spread (noise_ratio above 1) they differ. Between the two, float32 cannot
tell a fault from rounding that the model amplifies, and the step is run again in float64 on
axon and on the CPU, from the same weights and inputs: the gradients match only if those agree
within GRAD64_TOL. The record's ``grad_check`` says which decided.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import logging
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ..conformance import PairTimeout, time_limit

FORWARD_TOL = 1e-3  # relative to the largest output element
GRAD_TOL = 5e-3  # relative to each gradient's largest element
GRAD_FLOOR = 1e-4  # ... or to this share of the model's largest gradient element, if larger
NOISE_FACTOR = 2.0  # past GRAD_TOL, axon may differ this many times the CPU's own float32 spread
PERTURBATION = 1e-5  # relative weight perturbation that measures that spread (about 80 float32 ulps)
PERTURBED_RUNS = 3  # a ReLU input near zero crosses it under about half of the perturbations
# Float64 on axon against float64 on the CPU, measured as in float32 (each gradient's largest
# element, floored at GRAD_FLOOR of the model's largest), where float32 cannot tell. Such a model
# amplifies rounding by grad_error / 6e-8 (float32's unit roundoff), at least 1e5 (GRAD_TOL):
# float64's rounding (1.1e-16) amplified alike comes to about grad_error * 2e-9, which stays under
# 1e-7 unless the float32 gradients are 50 times their own scale apart. Measured: 4.5e-9 for
# torchvision's inception_v3 (float32: 1.5), 1.3e-9 for timm's efficientvim_m1 (float32: 7.9),
# 1e-10 or less for the others tried. A float64 path that is wrong, or rounds through float32
# anywhere, is amplified by the same 1e5 or more: to 6e-3 or more, 6e4 times this tolerance.
GRAD64_TOL = 1e-7

# The comparison holds several copies of a model (the CPU's, axon's, float64 and perturbed
# references, their gradients): past this it no longer fits a 24 GiB machine.
MAX_PARAMETERS = 200_000_000

Outputs = dict[str, torch.Tensor]
Wrap = Callable[[torch.nn.Module], torch.nn.Module] | None  # what the model runs as (torch.compile)


@dataclass
class Case:
    """One model and how to drive it. The callables take the model and the inputs on one device."""

    model: torch.nn.Module  # on the CPU, eval mode, random weights
    inputs: Any  # CPU tensors, possibly nested in dicts, lists and dataclasses; moved to axon as they are
    outputs: Callable[[torch.nn.Module, Any], Outputs]  # forward without gradients
    loss: Callable[[torch.nn.Module, Any], torch.Tensor]  # a scalar that one training step backpropagates
    generate: Callable[[torch.nn.Module, Any], torch.Tensor] | None = None  # token ids (greedy)
    note: str = ""  # what the record should say about how the model was driven


class CannotBuild(Exception):
    """The model cannot be built from its default description (the reason is the message)."""


def relative_error(cpu: torch.Tensor, axon: torch.Tensor, floor: float = 1e-6) -> float:
    """The largest difference relative to the largest CPU element (or ``floor``, if larger)."""
    cpu, axon = cpu.detach().double(), axon.detach().cpu().double()
    if cpu.shape != axon.shape:
        return float("inf")
    if cpu.numel() == 0:
        return 0.0
    both_nan = torch.isnan(cpu) & torch.isnan(axon)
    diff = (cpu - axon).abs().masked_fill(both_nan, 0)
    if torch.isnan(diff).any():
        return float("inf")
    scale = cpu.abs().masked_fill(torch.isnan(cpu), 0).max().item()
    return diff.max().item() / max(scale, floor)


def worst_error(cpu: Outputs, axon: Outputs) -> float:
    """The largest relative error over named tensors; a name missing on one side is infinite."""
    if set(cpu) != set(axon):
        return float("inf")
    return max([relative_error(c, axon[name]) for name, c in cpu.items()] or [0.0])


def map_tensors(obj, fn: Callable[[torch.Tensor], torch.Tensor]):
    """``fn`` applied to every tensor, containers (dicts, lists, tuples, dataclasses) rebuilt,
    everything else as it is."""
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, dict):
        return {k: map_tensors(v, fn) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(map_tensors(v, fn) for v in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = {f.name: map_tensors(getattr(obj, f.name), fn) for f in dataclasses.fields(obj)}
        return dataclasses.replace(obj, **fields)
    return obj


def to_device(obj, device: str):
    return map_tensors(obj, lambda t: t.to(device))


def to_float64(obj):
    return map_tensors(obj, lambda t: t.double() if t.is_floating_point() else t)


def first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


@contextlib.contextmanager
def quiet():
    loggers = [logging.getLogger(n) for n in ("transformers", "torch", "timm", "torchvision")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            yield
        finally:
            for lg, level in zip(loggers, levels, strict=True):
                lg.setLevel(level)


def untie_zero_weights(model: torch.nn.Module) -> None:
    """Matrices a model initialises to zero (some routers and gates) get small random values:
    with zero router weights every expert ties, and which of tied experts top-k picks is left
    unspecified by PyTorch (the CPU and axon pick different ones, both correctly)."""
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2 and p.is_floating_point() and not p.any():
                p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * 0.02)


# Module attributes that set how much a module drops at random in training (timm's drop_path and
# drop_rate, torchvision's StochasticDepth.p, nn.Dropout.p): the CPU and axon draw from their own
# generators, so anything random in training is turned off before the training steps compared.
_DROP_ATTRIBUTES = ("drop_rate", "drop_prob", "drop_path_rate", "drop_path_prob", "dropout", "dropout_rate")


def no_random_in_training(model: torch.nn.Module) -> None:
    for module in model.modules():
        names = list(_DROP_ATTRIBUTES)
        if "Drop" in type(module).__name__ or "StochasticDepth" in type(module).__name__:
            names.append("p")
        for name in names:
            value = getattr(module, name, None)
            if isinstance(value, float) and not isinstance(value, bool) and value > 0:
                setattr(module, name, 0.0)


def train_step(case: Case, model: torch.nn.Module, inputs) -> tuple[float, dict[str, torch.Tensor]]:
    model.train()
    model.zero_grad(set_to_none=True)
    loss = case.loss(model, inputs)
    loss.backward()
    model.eval()
    grads = {n: p.grad for n, p in model.named_parameters() if p.grad is not None}
    return float(loss.detach().cpu()), grads


def grad_floor(grads: dict[str, torch.Tensor]) -> float:
    """GRAD_FLOOR times the model's largest gradient element: a gradient no larger than that is
    zero to float32 (a batch norm's bias before another batch norm gets rounding noise of 1e-9
    where the model's gradients are 1e-2), and is compared on that scale."""
    return GRAD_FLOOR * max([g.detach().abs().max().item() for g in grads.values() if g.numel()] or [0.0])


def _grad_error(cpu_grads: dict[str, torch.Tensor], ax_grads: dict[str, torch.Tensor]) -> float:
    if set(cpu_grads) - set(ax_grads):  # a parameter that got a gradient on the CPU only
        return float("inf")
    floor = max(grad_floor(cpu_grads), 1e-6)
    return max([relative_error(g, ax_grads[n], floor) for n, g in cpu_grads.items()] or [0.0])


def noise_ratio(case: Case, cpu_grads: dict, ax_grads: dict, float64_grads: dict | None = None) -> float:
    """Axon's gradient error against the CPU's, as a multiple of what float32 itself allows for
    this model: the larger of GRAD_TOL and NOISE_FACTOR times the CPU's own spread, worst
    parameter (at most 1: within float32's noise). The spread of a parameter's gradient is its
    distance from the same step in float64 and from PERTURBED_RUNS steps with every weight
    perturbed by PERTURBATION (relative), whichever is largest.

    Two things make float32 gradients of random models fragile. Deep stacks of batch norms over
    a handful of values (a batch of two small images) amplify rounding, so that the CPU's own
    gradients are percents away from float64; and a ReLU input a few ulps from zero takes either
    side depending on summation order, zeroing or passing a gradient element outright, which
    float64 does not show but a perturbation does."""
    floor = max(grad_floor(cpu_grads), 1e-6)
    spread = {name: 0.0 for name in cpu_grads}
    float64_grads = _float64_grads(case) if float64_grads is None else float64_grads
    for variant in (float64_grads, *(_perturbed_grads(case, seed) for seed in range(PERTURBED_RUNS))):
        for name, g in variant.items():
            if name in spread:
                spread[name] = max(spread[name], relative_error(cpu_grads[name], g, floor))
    allowed = {name: max(GRAD_TOL, NOISE_FACTOR * s) for name, s in spread.items()}
    return max([relative_error(g, ax_grads[name], floor) / allowed[name] for name, g in cpu_grads.items()] or [0.0])


def _float64_grads(case: Case, device: str = "cpu", wrap: Wrap = None) -> dict[str, torch.Tensor]:
    """One training step in float64 from a copy of the CPU model as it stands (the same copy
    on either device: its weights, buffers and inputs), through ``wrap`` (torch.compile) if given."""
    model = copy.deepcopy(case.model).double().to(device)
    return train_step(case, wrap(model) if wrap else model, to_device(to_float64(case.inputs), device))[1]


def float64_check(case: Case, cpu_grads64: dict[str, torch.Tensor], record: dict, wrap: Wrap = None) -> None:
    """The training step in float64 on axon against the CPU's (``cpu_grads64``): records
    ``grad64_error`` and the ops that fell back meanwhile (``grad64_fallbacks``: compared
    CPU against CPU), or ``grad64_failure`` where axon cannot run it."""
    if not torch.axon.get_device_properties(0).has_fp64:
        record["grad64_failure"] = "the device has no float64"
        return
    torch.axon.fallback_ops(reset=True)
    try:
        record["grad64_error"] = _grad_error(cpu_grads64, _float64_grads(case, "axon", wrap))
    except Exception as e:  # noqa: BLE001  (undecided: the record says why)
        record["grad64_failure"] = first_line(e)
    finally:
        record["grad64_fallbacks"] = torch.axon.fallback_ops(reset=True)


def _perturbed_grads(case: Case, seed: int) -> dict[str, torch.Tensor]:
    model = copy.deepcopy(case.model)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.is_floating_point():
                p.mul_(1 + PERTURBATION * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return train_step(case, model, case.inputs)[1]


def run_case(build: Callable[[], Case], record: dict, timeout: float) -> dict:
    """Fills ``record`` (see report.py for the fields) and returns it; ``build`` makes the case."""
    start = time.perf_counter()
    with quiet():
        try:
            with time_limit(timeout):
                _compare(build, record)
        except PairTimeout:  # the provisional status says which side ran out of time
            record.setdefault("status", "fails")
            where = " (building it or running it on the CPU)" if record["status"] != "fails" else ""
            record["error"] = f"timeout: no result within {timeout:.0f} s{where}"
    record["seconds"] = round(time.perf_counter() - start, 2)
    return record


def prepare(build: Callable[[], Case], record: dict) -> tuple[Case, torch.nn.Module, Any] | None:
    """The case built (seeded), with an untouched copy of its model and inputs; None (and the
    record says why) where it cannot be built, copied or is too large."""
    record["status"] = "cannot_build"  # provisional, until the CPU reference is done
    try:
        torch.manual_seed(0)
        case = build()
        case.model.eval()
        untie_zero_weights(case.model)
        no_random_in_training(case.model)
    except Exception as e:  # noqa: BLE001  (any failure to build is the reason it is excluded)
        record.update(status="cannot_build", error=str(e) if isinstance(e, CannotBuild) else first_line(e))
        return None
    record["parameters"] = sum(p.numel() for p in case.model.parameters())
    if case.note:
        record["note"] = case.note
    if record["parameters"] > MAX_PARAMETERS:
        record["error"] = f"{record['parameters'] / 1e6:.0f}M parameters, past the sweep's {MAX_PARAMETERS / 1e6:.0f}M"
        return None
    # Taken before the CPU's steps change anything: batch-norm running statistics, and inputs
    # that a model edits in place (BLIP's generate() writes its start token into input_ids).
    try:
        untouched = copy.deepcopy(case.model)
    except Exception as e:  # noqa: BLE001  (a model that cannot be copied is recorded, not fatal)
        record.update(status="cannot_build", error=f"cannot be deep-copied: {first_line(e)}")
        return None
    return case, untouched, map_tensors(case.inputs, torch.clone)


def _compare(build: Callable[[], Case], record: dict) -> None:
    prepared = prepare(build, record)
    if prepared is None:
        return
    case, untouched, untouched_inputs = prepared
    record["status"] = "cpu_fails"
    cpu = _cpu_reference(case, record)
    if cpu is None:
        return
    del record["status"]  # from here on, axon's
    torch.axon.fallback_ops(reset=True)
    try:
        _on_axon(case, untouched, untouched_inputs, cpu, record)
    except Exception as e:  # noqa: BLE001
        record["error"] = first_line(e)
    finally:
        record["fallbacks"] = torch.axon.fallback_ops(reset=True)
    # Past GRAD_TOL the float64 step on axon is compared too, its fallbacks apart: it decides where
    # float32 cannot tell (within float32's noise); past the noise it only tells a fault of the
    # float32 path alone (float64 agrees) from one of both.
    if "error" not in record and "grad_noise_ratio" in record:
        float64_check(case, cpu["grads64"], record)
    _judge(record)


def _cpu_reference(case: Case, record: dict) -> dict | None:
    """Outputs, loss, gradients and tokens on the CPU; None (and the record says why) if the
    forward or the training step fails there: such a model is excluded."""
    try:
        outputs = case.outputs(case.model, case.inputs)
        loss, grads = train_step(case, case.model, case.inputs)
    except Exception as e:  # noqa: BLE001
        record.update(status="cpu_fails", error=first_line(e))
        return None
    tokens = None
    if case.generate is not None:  # generation failing on the CPU too is noted, and not asked of axon
        try:
            tokens = case.generate(case.model, case.inputs)
        except Exception as e:  # noqa: BLE001
            record["cpu_generate_error"] = first_line(e)
    return {"outputs": outputs, "loss": loss, "grads": grads, "tokens": tokens}


def forward_and_train(case: Case, model, inputs, cpu: dict, record: dict) -> None:
    """Forward and one training step of ``model`` (on axon, eager or compiled) against the CPU's
    results, into ``record``; float64 gradients decide where float32 cannot tell."""
    record["forward_error"] = worst_error(cpu["outputs"], case.outputs(model, inputs))
    record["runs"] = True
    loss, grads = train_step(case, model, inputs)
    record["loss_error"] = abs(loss - cpu["loss"]) / max(abs(cpu["loss"]), 1e-6)
    record["grad_error"] = _grad_error(cpu["grads"], grads)
    record["trains"] = True
    if GRAD_TOL < record["grad_error"] < float("inf"):
        cpu["grads64"] = _float64_grads(case)
        record["grad_noise_ratio"] = noise_ratio(case, cpu["grads"], grads, cpu["grads64"])


def _on_axon(case: Case, untouched: torch.nn.Module, untouched_inputs, cpu: dict, record: dict) -> None:
    model = untouched.to("axon")
    inputs = to_device(untouched_inputs, "axon")
    forward_and_train(case, model, inputs, cpu, record)
    if cpu["tokens"] is not None:
        tokens = case.generate(model, inputs)
        record["generates"] = True
        record["same_tokens"] = bool(torch.equal(tokens.cpu(), cpu["tokens"].cpu()))


def _judge(record: dict) -> None:
    matches = record.get("forward_error", float("inf")) <= FORWARD_TOL
    trains_ok = False
    if record.get("trains"):
        if record.get("grad_noise_ratio", float("inf")) <= 1.0:  # past GRAD_TOL, within float32's noise
            record["grad_check"] = "float64"
            trains_ok = record.get("grad64_error", float("inf")) <= GRAD64_TOL
        else:  # within GRAD_TOL, or past float32's noise (or infinite): float32 tells
            record["grad_check"] = "float32"
            trains_ok = record["grad_error"] <= GRAD_TOL
    record["matches"] = bool(record.get("runs") and matches)
    record["trains_match"] = bool(trains_ok)
    record["status"] = (
        "ok"
        if record["matches"] and trains_ok and "error" not in record
        else ("fails" if not record.get("runs") else "differs")
    )
