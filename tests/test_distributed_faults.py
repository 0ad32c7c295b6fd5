"""Faults in a two-rank DDP run on the axon c10d backend (issue 24, section 3): a rank that dies
or stops mid-training, and an injected collective failure (AXON_FAULTS collective:N). The rank
left behind raises a Python exception (within the process group's timeout: the time is
reported, and only a generous guard against a hang is enforced), and goes on working.

The ranks are spawned here rather than through distributed_harness.run_ranks, which waits for
every rank: a stuck rank never finishes, so the test waits for the surviving rank, reads what it
reported, and then ends the stuck one."""

from __future__ import annotations

import datetime
import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.nn as nn
from distributed_harness import free_port

AXON = "axon"
TIMEOUT_S = 10  # the process group's timeout
HANG_GUARD_S = TIMEOUT_S + 120  # a rank still running after this is hung (start-up included)
STEPS_BEFORE_FAULT = 3


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def _batch(step: int, rank: int):
    g = torch.Generator().manual_seed(100 * step + rank)
    return torch.randn(4, 8, generator=g), torch.randn(4, 4, generator=g)


def _ddp():
    from torch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("axon", timeout=datetime.timedelta(seconds=TIMEOUT_S))
    model = DDP(_model().to(AXON))
    return model, torch.optim.SGD(model.parameters(), lr=0.1)


def _step(model, opt, step: int, rank: int) -> float:
    x, y = _batch(step, rank)
    loss = nn.functional.mse_loss(model(x.to(AXON)), y.to(AXON))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


def _still_works() -> None:
    """The survivor's device still computes what the CPU does."""
    a, b = torch.randn(5, 7), torch.randn(7, 3)
    torch.testing.assert_close((a.to(AXON) @ b.to(AXON)).sum(0).cpu(), (a @ b).sum(0))


def _train(report: Path, arm_at_step: int | None = None, steps: int = 50) -> None:
    """Trains until something raises (building the DDP model included, step -1); writes the error
    and how long the failing call took. ``arm_at_step``: that step's first collective fails."""
    from torch_axon import _C

    result = {"error": None}
    step, start = -1, time.monotonic()
    try:
        model, opt = _ddp()
        for step in range(steps):
            if step == arm_at_step:
                _C._fault_arm("collective", 1)
            start = time.monotonic()
            _step(model, opt, step, dist.get_rank())
    except Exception as error:  # noqa: BLE001 - any exception is the expected outcome
        result = {"error": f"{type(error).__name__}: {error}", "elapsed": time.monotonic() - start, "step": step}
    _still_works()
    report.write_text(json.dumps(result))
    # The process then exits as a script would, its broken group still open: the exit must not
    # hang (the test's join) or crash (the exit code). A moment without the GIL first lets
    # PyTorch's autograd device thread let go of the failed backward's graph task (see
    # distributed_harness._rank_main: a thread that wants the GIL while the interpreter finalizes
    # aborts the process). Without it, one run of this test in about thirty ended by SIGABRT
    # (output not kept, so the cause is not confirmed).
    time.sleep(0.1)


def _faulty_peer(behaviour: str) -> None:
    model, opt = _ddp()
    for step in range(STEPS_BEFORE_FAULT):
        _step(model, opt, step, dist.get_rank())
    if behaviour == "dies":
        os._exit(3)
    time.sleep(3600)  # stuck: alive, connections open, taking no part


def _rank(rank: int, port: int, fn, args: tuple, env: dict) -> None:
    import faulthandler

    faulthandler.enable(all_threads=True)
    os.environ.update(env)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE="2")
    import torch_axon  # noqa: F401 - registers the backend in the fresh process

    fn(*args)


def _spawn_pair(rank0: tuple, rank1: tuple, env0: dict | None = None, env1: dict | None = None):
    ctx = multiprocessing.get_context("spawn")
    port = free_port()
    return [
        ctx.Process(target=_rank, args=(r, port, fn, args, env or {}), daemon=True)
        for r, (fn, args), env in ((0, rank0, env0), (1, rank1, env1))
    ]


def _finish(processes, wait_for: tuple[int, ...]) -> float:
    """Starts both ranks, waits for the ranks ``wait_for`` (each under the hang guard), then ends
    any still running."""
    for p in processes:
        p.start()
    start = time.monotonic()
    for rank in wait_for:
        processes[rank].join(HANG_GUARD_S)
    waited = time.monotonic() - start
    for p in processes:
        if p.is_alive():
            p.kill()
            p.join()
    return waited


def _read(report: Path) -> dict:
    assert report.exists(), "the surviving rank wrote no report (it crashed: see its output above)"
    return json.loads(report.read_text())


def _exited_cleanly(process, report: Path, waited: float) -> None:
    what = report.read_text() if report.exists() else "no report: it ended before training had failed"
    assert process.exitcode == 0, f"exit code {process.exitcode} after {waited:.0f} s; {what}"


@pytest.mark.parametrize("behaviour", ["dies", "stuck"])
def test_a_dead_or_stuck_rank_is_an_exception_on_the_other(behaviour, tmp_path):
    report = tmp_path / "rank0.json"
    processes = _spawn_pair((_train, (report,)), (_faulty_peer, (behaviour,)))
    waited = _finish(processes, wait_for=(0,))
    _exited_cleanly(processes[0], report, waited)
    result = _read(report)
    assert result["error"] is not None, "rank 0 trained every step with its peer gone"
    assert result["step"] >= STEPS_BEFORE_FAULT, result
    print(
        f"\n{behaviour}: rank 0 raised after {result['elapsed']:.1f} s (timeout {TIMEOUT_S} s): {result['error'][:300]}"
    )


def _reports(tmp_path: Path, processes, waited: float) -> list[dict]:
    reports = [tmp_path / f"rank{r}.json" for r in range(2)]
    for p, report in zip(processes, reports, strict=True):
        _exited_cleanly(p, report, waited)
    return [_read(r) for r in reports]


@pytest.mark.parametrize("where", ["env", "mid-training"])
def test_an_injected_collective_fault_is_an_exception_naming_it(where, tmp_path):
    """Rank 1's collective fails before it reaches Gloo, armed by AXON_FAULTS=collective:1 (the
    first, while DDP is built) or from the test hook (step 2's gradient all-reduce): rank 1 gets
    DistBackendError naming the collective and goes on working; rank 0, whose peer never joins,
    gets an error, not a hang."""
    reports = [tmp_path / f"rank{r}.json" for r in range(2)]
    if where == "env":
        rank1, env1 = (_train, (reports[1],)), {"AXON_FAULTS": "collective:1"}
    else:
        rank1, env1 = (_train, (reports[1], 2)), {}
    processes = _spawn_pair((_train, (reports[0],)), rank1, env1=env1)
    waited = _finish(processes, wait_for=(0, 1))
    survivor, faulted = _reports(tmp_path, processes, waited)
    assert faulted["error"] is not None, "the armed collective did not fail"
    assert faulted["error"].startswith("DistBackendError:"), faulted["error"]
    assert "injected fault: AXON_FAULTS collective:1" in faulted["error"], faulted["error"]
    if where == "mid-training":
        assert faulted["step"] == 2 and "ALLREDUCE failed" in faulted["error"], faulted
    assert survivor["error"] is not None, "rank 0 finished training without its peer's collective"
    print(f"\ncollective fault ({where}): rank 1: {faulted['error']}")
    print(f"rank 0 raised after {survivor['elapsed']:.1f} s at step {survivor['step']}: {survivor['error'][:200]}")
