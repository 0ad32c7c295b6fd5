"""The sweep runs in a child process, watched: an architecture that kills its process (a crash in
a driver or in PyTorch, the kernel's out-of-memory killer) or hangs where the per-architecture
alarm cannot reach (inside C code) costs that architecture its verdict, not the sweep its run.

The worker names the architecture it is running in a small state file (``AXON_SWEEP_STATE``).
When the worker dies or stays on one architecture past the limit plus ``GRACE``, the supervisor
writes that architecture's record (``fails``, with the signal or the hang as its error), and in
the compiled mode first asks PyTorch's CPU Inductor, in a fresh child, to compile and train the
same model: where that raises, dies or hangs too, the record is ``upstream``, as compiled.py
judges a failure that CPU Inductor shares. Then a new worker resumes past the architecture.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Seconds past the per-architecture limit before a worker still on the same architecture is
# taken as hung: the alarm fires only when Python runs, and a timed-out model still unwinds.
GRACE = 120.0
POLL = 2.0
IDLE = "idle"


def write_state(path: str | None, family: str, arch: str) -> None:
    """The worker's note of what it runs (``arch`` IDLE between architectures)."""
    if path:
        with open(path + ".tmp", "w") as f:
            json.dump({"family": family, "arch": arch, "since": time.time()}, f)
        os.replace(path + ".tmp", path)


def crash_if_asked(family: str, arch: str) -> None:
    """Test hook: ``AXON_SWEEP_CRASH="family/arch"`` kills a worker there as a crash in C would
    (the sweep's own run of it, and CPU Inductor's check)."""
    if os.environ.get("AXON_SWEEP_CRASH") == f"{family}/{arch}":
        os.kill(os.getpid(), signal.SIGSEGV)


def _read_state(path: str) -> dict | None:
    try:
        with open(path) as f:
            state = json.load(f)
    except (OSError, ValueError):
        return None
    return None if state["arch"] == IDLE else state


def _how_it_ended(returncode: int) -> str:
    if returncode < 0:
        return f"killed by {signal.Signals(-returncode).name}"
    return f"exit status {returncode}"


def _died(how: str) -> str:
    """The record's words for a worker that ended as ``how`` says (_watch) on an architecture."""
    return how if how.startswith("hung") else f"the process was {how}"


def _watch(argv: list[str], state_path: str, limit: float) -> tuple[int, str, dict | None]:
    """Runs one worker to its end: (return code, how it ended, the architecture it was on)."""
    env = {**os.environ, "AXON_SWEEP_STATE": state_path}
    if os.path.exists(state_path):
        os.remove(state_path)
    child = subprocess.Popen([sys.executable, "-m", "torch_axon.tools.models", *argv], env=env)
    while child.poll() is None:
        time.sleep(POLL)
        state = _read_state(state_path)
        if state and time.time() - state["since"] > limit:
            child.kill()
            child.wait()
            return child.returncode, f"hung: no result within {limit:.0f} s, killed", state
    return child.returncode, _how_it_ended(child.returncode), _read_state(state_path)


def _cpu_inductor_outcome(argv: list[str], state_path: str, key: str, limit: float) -> str:
    """CPU Inductor's outcome for ``key`` (family/arch), from a fresh worker: "ok" where it ran."""
    with tempfile.NamedTemporaryFile("r", suffix=".json") as answer:
        returncode, how, _ = _watch([*argv, "--judge-crash", key, "--answer", answer.name], state_path, limit)
        if returncode != 0:
            return f"{_died(how)} too"
        return json.load(answer)["cpu_compile"]


def supervise(argv: list[str], jsonl: Path, timeout: float, compiled: bool) -> int:
    """Runs the sweep (``argv`` plus ``--worker``) until a worker ends by itself; returns its code."""
    limit = timeout + GRACE
    worker = [*argv, "--worker"]
    with tempfile.TemporaryDirectory(prefix="axon-sweep-") as folder:
        state_path = os.path.join(folder, "state.json")
        resume = []
        while True:
            returncode, how, state = _watch(worker + resume, state_path, limit)
            if state is None:  # it ended between architectures: its own doing, not a model's
                return returncode
            key = f"{state['family']}/{state['arch']}"
            record = {"family": state["family"], "arch": state["arch"], "status": "fails", "error": _died(how)}
            record["seconds"] = round(time.time() - state["since"], 2)
            cpu_inductor = ""
            if compiled:
                outcome = _cpu_inductor_outcome(worker, state_path, key, limit)
                record.update(mode="compile", cpu_compile=outcome, status="fails" if outcome == "ok" else "upstream")
                cpu_inductor = f" (CPU Inductor: {outcome})"
            with open(jsonl, "a") as log:
                log.write(json.dumps(record) + "\n")
            print(f"{key}: {record['status']}, {record['error']}{cpu_inductor}", flush=True)
            resume = ["--resume-after", key]
