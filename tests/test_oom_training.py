"""Out of memory in the middle of training (issue 24, section 3): an MLP trained with AdamW on axon
under AXON_MEMORY_LIMIT meets a batch whose activations do not fit. The step raises
torch.OutOfMemoryError with the figures (the request, allocated, reserved and the limit); once the
user drops what the failed step left (the batch, the exception and its frames, partial
gradients) and empties the cache, device memory is back where it was before the step, and
training goes on with smaller batches, step for step as on the CPU.

The allocator reads AXON_MEMORY_LIMIT when a device's pool is made (runtime/src/memory.c), so the
training runs in a fresh process with the limit in its environment."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn

LIMIT_MIB = 96
# Parameters and AdamW's state take about 16 MiB. The large batch's input and first two
# activations fit under the limit; the second linear layer's output does not.
SMALL_BATCH, LARGE_BATCH = 64, 8192
STEPS_BEFORE, STEPS_AFTER = 2, 3
HANG_GUARD_S = 600
LR = 1e-3


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 1024), nn.GELU(), nn.Linear(1024, 16))


def _batch(step: int, size: int):
    g = torch.Generator().manual_seed(step)
    return torch.randn(size, 256, generator=g), torch.randn(size, 16, generator=g)


class _Trainer:
    def __init__(self, device: str, compiled: bool = False):
        self.device = device
        self.model = _model().to(device)
        self.forward = torch.compile(self.model) if compiled else self.model
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=LR)

    def step(self, step: int, size: int = SMALL_BATCH) -> float:
        x, y = (t.to(self.device) for t in _batch(step, size))
        loss = nn.functional.mse_loss(self.forward(x), y)
        loss.backward()
        self.opt.step()
        # Between steps no gradients are held: the memory baseline is parameters and state.
        self.opt.zero_grad(set_to_none=True)
        return loss.item()


def _figure_mib(message: str, wording: str) -> float:
    """The size in ``wording`` ("Tried to allocate {}": "Tried to allocate 32.00 MiB"), in MiB."""
    match = re.search(re.escape(wording).replace(r"\{\}", r"([\d.]+) (B|KiB|MiB|GiB)"), message)
    assert match, f"no '{wording}' figure in: {message}"
    scale = {"B": 1 / 2**20, "KiB": 1 / 1024, "MiB": 1, "GiB": 1024}[match.group(2)]
    return float(match.group(1)) * scale


def _child() -> None:
    """Runs in the process under the limit; prints its figures as JSON on the last line."""
    import gc

    import torch_axon  # noqa: F401

    trainer = _Trainer("axon", compiled=os.environ["OOM_COMPILED"] == "1")
    losses = [trainer.step(s) for s in range(STEPS_BEFORE)]
    gc.collect()
    baseline = torch.axon.memory_allocated()

    try:
        trainer.step(STEPS_BEFORE, LARGE_BATCH)
    except torch.OutOfMemoryError as error:
        message = str(error)
        peak_during_oom = torch.axon.memory_allocated()
    else:
        raise AssertionError(f"a batch of {LARGE_BATCH} trained under a {LIMIT_MIB} MiB limit")
    # What the user frees: the exception went with the except block (and with it the frames that
    # held the batch and activations); partial gradients, if backward had started; the cache.
    trainer.opt.zero_grad(set_to_none=True)
    gc.collect()
    torch.axon.empty_cache()
    after_cleanup = torch.axon.memory_allocated()
    assert after_cleanup == baseline, f"{after_cleanup} bytes allocated after cleanup, {baseline} before the step"

    losses += [trainer.step(s) for s in range(STEPS_BEFORE + 1, STEPS_BEFORE + 1 + STEPS_AFTER)]
    if trainer.forward is not trainer.model:
        from torch._dynamo.utils import counters

        assert counters["stats"]["unique_graphs"] > 0, "torch.compile made no graph: the test ran eagerly"
    params = [p.detach().cpu() for p in trainer.model.parameters()]
    torch.save(params, os.environ["OOM_PARAMS_OUT"])
    print(
        json.dumps(
            {
                "message": message,
                "losses": losses,
                "baseline": baseline,
                "peak_during_oom": peak_during_oom,
                "max_allocated": torch.axon.max_memory_allocated(),
                "max_reserved": torch.axon.memory_stats().get("reserved_bytes.all.peak", 0),
            }
        )
    )


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_out_of_memory_mid_training_then_training_continues(compiled, tmp_path):
    params_out = tmp_path / "params.pt"
    tests_dir = str(Path(__file__).parent)
    env = dict(
        os.environ, AXON_MEMORY_LIMIT=f"{LIMIT_MIB}M", OOM_PARAMS_OUT=str(params_out), OOM_COMPILED=str(int(compiled))
    )
    code = f"import sys; sys.path.insert(0, {tests_dir!r}); import test_oom_training; test_oom_training._child()"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}"
    result = json.loads(run.stdout.strip().splitlines()[-1])
    message = result["message"]

    # The figures: a request that, on top of what was allocated, passes the limit.
    assert _figure_mib(message, "limit {}") == LIMIT_MIB, message
    requested = _figure_mib(message, "Tried to allocate {}")
    allocated = _figure_mib(message, "{} allocated by tensors")
    assert requested > 0 and allocated + requested > LIMIT_MIB, message
    assert result["max_allocated"] <= LIMIT_MIB * 2**20, result

    # The same steps on the CPU, the large batch skipped (it failed before the optimizer ran).
    cpu = _Trainer("cpu")
    steps = list(range(STEPS_BEFORE)) + list(range(STEPS_BEFORE + 1, STEPS_BEFORE + 1 + STEPS_AFTER))
    expected = [cpu.step(s) for s in steps]
    torch.testing.assert_close(torch.tensor(result["losses"]), torch.tensor(expected), rtol=1e-4, atol=1e-5)
    # AdamW moves a weight by up to lr a step whatever the gradient's size, so a gradient near zero
    # that rounds differently moves it differently: a tenth of lr absolute.
    for got, want in zip(torch.load(params_out), cpu.model.parameters(), strict=True):
        torch.testing.assert_close(got, want.detach(), rtol=1e-4, atol=LR / 10)
    print(
        f"\n{'compiled' if compiled else 'eager'}: OOM at a {LIMIT_MIB} MiB limit: {message}\n"
        f"baseline {result['baseline'] / 2**20:.2f} MiB, allocated when it raised "
        f"{result['peak_during_oom'] / 2**20:.2f} MiB, peak allocated {result['max_allocated'] / 2**20:.2f} MiB"
    )
