"""The module sweep (``torch_axon.tools.module_sweep``): module_db modules on axon against the CPU.

A few common modules must match (outputs, buffers, input and parameter gradients), and the sweep
must be able to fail: modules built to differ on axon (in the output, only in a gradient, in a
random output's statistics) must be reported as mismatches.
"""

from __future__ import annotations

import json

import pytest
import torch

pytest.importorskip("expecttest", reason="PyTorch's ModuleInfo database needs the expecttest package")

from torch_axon.tools import module_sweep  # noqa: E402

COMMON_MODULES = ["nn.Linear", "nn.Conv2d", "nn.LSTM", "nn.LayerNorm", "nn.BatchNorm2d"]


def test_common_modules_match(tmp_path):
    checkpoint = tmp_path / "modules.jsonl"
    records = module_sweep.run_sweep(COMMON_MODULES, checkpoint=checkpoint, timeout=60, progress=False)
    assert sorted(r.module for r in records) == sorted(COMMON_MODULES)
    bad = [f"{r.module}: {r.status}: {r.detail} {r.fallbacks}" for r in records if r.status != "matches"]
    assert not bad, "\n".join(bad)
    assert all(r.inputs > 0 for r in records), "a module compared no input"
    written = module_sweep.read_checkpoint(checkpoint)
    assert {m for m, _ in written} == set(COMMON_MODULES)
    assert all(r.status == "matches" for r in written.values())


def test_command_line_writes_reports(tmp_path):
    out, data = tmp_path / "reports", tmp_path / "data"
    paths = {"jsonl": data / "modules.jsonl", "md": out / "modules.md", "json": data / "modules.json"}
    argv = ["--only", "Linear", "--quiet", "--out", str(out), "--data", str(data)]
    assert module_sweep.main(argv) == 0
    assert sorted(p.name for p in out.iterdir()) == ["modules.md"]  # the report; the rest is data
    report = json.loads(paths["json"].read_text())
    assert [(r["module"], r["status"]) for r in report["records"]] == [("nn.Linear", "matches")]
    assert "| `nn.Linear` | float32 | matches |" in paths["md"].read_text()
    # A second run resumes: nothing is redone, the record stays.
    assert module_sweep.main(argv) == 0
    assert sum(1 for line in paths["jsonl"].read_text().splitlines() if '"nn.Linear"' in line) == 2  # started + done


# --------------------------------------------------------------------------------------------
# The sweep can fail: modules that differ on axon on purpose


def _on_axon(x: torch.Tensor) -> bool:
    return x.device.type == "axon"


class OutputOffOnAxon(torch.nn.Linear):
    """A Linear whose output is off by 1e-3 on axon."""

    def forward(self, x):
        return super().forward(x) + (1e-3 if _on_axon(x) else 0.0)


class WeightGradDoubledOnAxon(torch.nn.Linear):
    """A Linear with the right output everywhere but twice the weight gradient on axon."""

    def forward(self, x):
        out = super().forward(x)
        if _on_axon(x):  # adds zero, but its gradient is a second copy of the weight's
            out = out + torch.nn.functional.linear(x, self.weight - self.weight.detach())
        return out


class DropoutRateWrongOnAxon(torch.nn.Module):
    """Dropout at p=0.5 on the CPU, p=0.9 on axon: random either way, but the statistics differ."""

    def __init__(self, wrong: bool = True):
        super().__init__()
        self.wrong = wrong

    def forward(self, x):
        p = 0.9 if self.wrong and _on_axon(x) else 0.5
        return torch.nn.functional.dropout(x, p, self.training)


def _module_info(module_cls, shape=(3, 4), ctor_args=(4, 2), ctor_kwargs=None):
    """A ModuleInfo with one input for ``module_cls``, the way module_db declares them."""
    from torch.testing._internal.common_modules import FunctionInput, ModuleInfo, ModuleInput

    def inputs(module_info, device, dtype, requires_grad, training, **kwargs):
        x = torch.testing.make_tensor(shape, device=device, dtype=dtype, requires_grad=requires_grad)
        return [ModuleInput(FunctionInput(*ctor_args, **(ctor_kwargs or {})), forward_input=FunctionInput(x))]

    return ModuleInfo(module_cls, module_inputs_func=inputs)


@pytest.mark.parametrize(
    "module_cls, where",
    [(OutputOffOnAxon, "output"), (WeightGradDoubledOnAxon, "grad['param weight']")],
    ids=["output", "weight-grad"],
)
def test_a_module_that_differs_on_axon_is_a_mismatch(module_cls, where):
    record = module_sweep.sweep_module(_module_info(module_cls), torch.float32, timeout=60)
    assert record.status == "mismatch", record
    assert len(record.failures) == 2 and all(where in f for f in record.failures), record.failures  # train, eval


def test_random_module_compared_by_statistics():
    info = _module_info(DropoutRateWrongOnAxon, shape=(64, 64), ctor_args=(False,))
    record = module_sweep.sweep_module(info, torch.float32, timeout=60)
    assert record.status == "matches", record
    assert module_sweep.RANDOM_NOTE in record.detail  # the training runs were random, and said so


def test_random_module_with_wrong_statistics_is_a_mismatch():
    info = _module_info(DropoutRateWrongOnAxon, shape=(64, 64), ctor_args=(True,))
    record = module_sweep.sweep_module(info, torch.float32, timeout=60)
    assert record.status == "mismatch", record
    # Dropout keeps the mean (it rescales by 1/(1-p)); the standard deviation gives it away.
    assert record.failures[0].startswith("train #0: output leaf 0: std"), record.failures


# --------------------------------------------------------------------------------------------
# The compiled mode: torch.compile on axon against eager on the CPU


def test_common_modules_match_compiled(tmp_path):
    modules = ["nn.Linear", "nn.LayerNorm"]
    records = module_sweep.run_sweep(
        modules, checkpoint=tmp_path / "c.jsonl", timeout=300, progress=False, compiled=True
    )
    bad = [f"{r.module}: {r.status}: {r.detail} {r.skipped_inputs}" for r in records if r.status != "matches"]
    assert not bad, "\n".join(bad)
    assert all(r.inputs > 0 and not r.skipped_inputs for r in records), records  # compiled: no graph-less input


class DiffersCompiled(torch.nn.Linear):
    """A Linear whose output is off by 1e-3 when Dynamo traces it for axon (or, with
    ``everywhere``, for any device)."""

    def __init__(self, *args, everywhere: bool = False):
        super().__init__(*args)
        self.everywhere = everywhere

    def forward(self, x):
        off = torch.compiler.is_compiling() and (self.everywhere or _on_axon(x))
        return super().forward(x) + (1e-3 if off else 0.0)


def test_compiled_mode_tells_axon_failures_from_upstream_ones():
    axon_only = module_sweep.sweep_module(_module_info(DiffersCompiled), torch.float32, timeout=120, compiled=True)
    assert axon_only.status == "mismatch", axon_only
    info = _module_info(DiffersCompiled, ctor_kwargs={"everywhere": True})
    everywhere = module_sweep.sweep_module(info, torch.float32, timeout=120, compiled=True)
    assert everywhere.status == "skipped" and everywhere.inputs == 0, everywhere
    assert all(cause.startswith(module_sweep.UPSTREAM_NOTE) for cause in everywhere.skipped_inputs), everywhere
