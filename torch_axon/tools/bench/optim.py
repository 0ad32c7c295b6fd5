"""Optimizer-step workloads: one AdamW step over the parameters of the benchmark's GPT
(``models.GPT``: 384 wide, 6 layers, a 24,576-token vocabulary, about 20M parameters in 76
tensors), in each of torch.optim's three forms: ``fused=True`` (one kernel over many tensors:
aten::_fused_adamw_, on Axon the runtime's fused_optim family), ``foreach=True`` (the
_foreach_* ops, a few kernels per op over every tensor) and the for-loop form (``foreach=False``,
the ops of the update per tensor). The parameters are tensors of the model's shapes with fixed
random values and gradients; no model is built and no backward runs, so the rows time the step
alone. The figure is milliseconds per step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from . import models

FORMS = {"fused": {"fused": True}, "foreach": {"foreach": True}, "for-loop": {"foreach": False}}
UNIT = "ms/step"


@dataclass
class OptimWorkload:
    name: str
    form: str  # a key of FORMS
    make: Callable[..., Callable[[], object]]


def shapes(quick: bool) -> list[torch.Size]:
    """The GPT workload's parameter shapes, from a model built on the meta device (no memory)."""
    with torch.device("meta"):
        return [p.shape for p in models._GPT(**models.GPT[quick]).parameters()]


def parameter_count(quick: bool) -> int:
    return sum(s.numel() for s in shapes(quick))


def _make(form: str, device: str, quick: bool = False) -> Callable[[], object]:
    g = torch.Generator().manual_seed(0)
    params = []
    for s in shapes(quick):
        p = (torch.randn(s, generator=g) * 0.02).to(device).requires_grad_()
        p.grad = (torch.randn(s, generator=g) * 1e-3).to(device)
        params.append(p)
    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01, **FORMS[form])
    return opt.step


def workloads() -> list[OptimWorkload]:
    return [
        OptimWorkload(f"adamw step gpt-20m {form}", form, lambda device, quick=False, f=form: _make(f, device, quick))
        for form in FORMS
    ]


def derived(rows: list[dict]) -> dict:
    """The comparisons the targets judge: Axon's fused step against its foreach step and against
    the baseline's fused step (above 1: the fused Axon step is faster); None where a row is missing."""
    by_form = {r["form"]: r for r in rows}
    fused, foreach = by_form.get("fused"), by_form.get("foreach")
    out = {"fused_vs_foreach_axon": None, "fused_vs_cpu_fused": None}
    if fused and foreach:
        out["fused_vs_foreach_axon"] = foreach["axon"]["median_s"] / fused["axon"]["median_s"]
    if fused:
        out["fused_vs_cpu_fused"] = fused["cpu"]["median_s"] / fused["axon"]["median_s"]
    return out
