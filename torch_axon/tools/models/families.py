"""Every family the sweep knows: where its architectures come from and how one is run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import diffusers_models, hf, timm_models, torchvision_models
from .compare import Case, run_case
from .compiled import cpu_inductor_outcome, run_compiled


@dataclass(frozen=True)
class Source:
    architectures: Callable[[], list[str]]
    run: Callable[[str, float], dict]  # (architecture, timeout in seconds) -> record
    generates: bool
    build: Callable[[str], Case]  # architecture -> its case

    def run_compiled(self, family: str, arch: str, timeout: float) -> dict:
        """The compiled mode's record (compiled.py) of one architecture."""
        return run_compiled(lambda: self.build(arch), {"family": family, "arch": arch}, timeout)

    def cpu_inductor_outcome(self, arch: str, timeout: float) -> str:
        """CPU Inductor's outcome (compiled.py) for an architecture whose run killed its process."""
        return cpu_inductor_outcome(lambda: self.build(arch), timeout)


def _hf(family: str) -> Source:
    return Source(
        architectures=lambda: sorted(hf.architectures(family)),
        run=lambda arch, timeout: hf.run(family, arch, timeout),
        generates=hf.FAMILIES[family].generates,
        build=lambda arch: hf.case(family, arch),
    )


def _module(family: str, module) -> Source:
    return Source(
        architectures=module.architectures,
        run=lambda arch, timeout: run_case(lambda: module.case(arch), {"family": family, "arch": arch}, timeout),
        generates=False,
        build=module.case,
    )


FAMILIES: dict[str, Source] = {
    **{family: _hf(family) for family in hf.FAMILIES},
    "torchvision": _module("torchvision", torchvision_models),
    "timm": _module("timm", timm_models),
    "diffusers": _module("diffusers", diffusers_models),
}


def generates(family: str) -> bool:
    return family in FAMILIES and FAMILIES[family].generates
