"""Processes and devices (issue 24, section 5): two processes driving one device at once, and two
devices (PoCL's POCL_DEVICES="pthread pthread") each driven from its own Python thread, with
copies between them. Every result equals the CPU's.

The work runs in fresh processes: PoCL reads POCL_DEVICES when it loads, and two processes are
what is under test. Each child compares with the CPU itself and fails with its traceback."""

from __future__ import annotations

import multiprocessing
import os
import threading

import pytest
import torch

ROUNDS = 40  # about ten ops a round: a few hundred per process or thread
HANG_GUARD_S = 600
TOL = {"rtol": 1e-4, "atol": 1e-5}
NOT_TWO_DEVICES = 77  # a child's exit code: the platform ignores POCL_DEVICES


def _fused(h: torch.Tensor) -> torch.Tensor:
    return torch.tanh(h * 0.5 + 0.1).sum(dim=-1)


def _workload(device: str, seed: int, other: str | None = None) -> list[torch.Tensor]:
    """Matmuls, reductions, a softmax, a compiled function and (with ``other``) a round trip
    through another device; every round's results, on the CPU."""
    fused = _fused if device == "cpu" else torch.compile(_fused)
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(48, 48, generator=g).to(device) / 7
    h = torch.randn(32, 48, generator=g).to(device)
    out = []
    for r in range(ROUNDS):
        h = torch.tanh(h @ w + torch.randn(1, 48, generator=g).to(device))
        if other is not None:
            h = (h.to(other) * (r % 3 + 1)).to(device) / (r % 3 + 1)
        p = torch.softmax(h, dim=-1)
        out.append(torch.stack([p.amax(dim=-1).sum(), h.sum(), h.abs().mean()]).cpu())
        out.append(fused(h).cpu())
    return out


def _check_against_cpu(device: str, seed: int, other: str | None = None) -> None:
    got = _workload(device, seed, other)
    for r, (a, e) in enumerate(zip(got, _workload("cpu", seed), strict=True)):
        torch.testing.assert_close(a, e, **TOL, msg=lambda m, r=r: f"{device}, seed {seed}, result {r}: {m}")


def _spawn(target, args: tuple, env: dict | None = None):
    """Starts ``target(*args)`` in a fresh process with ``env`` in its environment from the
    start (a None value removes the variable)."""
    ctx = multiprocessing.get_context("spawn")
    saved = dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    try:
        process = ctx.Process(target=target, args=args)
        process.start()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return process


def _join(processes, skip_code: int | None = None) -> None:
    for p in processes:
        p.join(HANG_GUARD_S)
    hung = [p for p in processes if p.is_alive()]
    for p in hung:
        p.kill()
        p.join()
    assert not hung, f"{len(hung)} process(es) still running after {HANG_GUARD_S} s"
    codes = [p.exitcode for p in processes]
    if skip_code is not None and skip_code in codes:
        pytest.skip("the OpenCL platform shows fewer than two devices with POCL_DEVICES (not PoCL)")
    assert codes == [0] * len(processes), f"exit codes {codes} (a child's traceback is above)"


# ---- two processes, one device ----------------------------------------------------------------


def _sharer(seed: int, start) -> None:
    import torch_axon  # noqa: F401

    torch.zeros(1, device="axon")  # the device opened before the race starts
    start.wait(timeout=HANG_GUARD_S)
    _check_against_cpu("axon:0", seed)


def test_two_processes_share_one_device():
    start = multiprocessing.get_context("spawn").Barrier(2)
    _join([_spawn(_sharer, (seed, start)) for seed in (1, 2)])


# ---- two devices, one thread each -------------------------------------------------------------


def _two_devices() -> None:
    import torch_axon  # noqa: F401

    if torch.axon.device_count() < 2:
        os._exit(NOT_TWO_DEVICES)
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def drive(index: int) -> None:
        try:
            torch.axon.set_device(index)  # the current device is per thread, as CUDA's
            t = torch.ones(2, device="axon")
            assert t.device == torch.device("axon", index), t.device
            start.wait(timeout=HANG_GUARD_S)
            _check_against_cpu(f"axon:{index}", 10 + index, other=f"axon:{1 - index}")
        except BaseException as error:  # noqa: BLE001 - reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=drive, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_two_devices_each_driven_by_its_own_thread():
    env = {"POCL_DEVICES": "pthread pthread", "AXON_DEVICES": None}  # every device PoCL shows
    _join([_spawn(_two_devices, (), env=env)], skip_code=NOT_TWO_DEVICES)
