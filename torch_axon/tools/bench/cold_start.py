"""The cold-start workload: a new user's first minutes. Each first-contact workload of
``torch_axon.warmup`` runs in a fresh process whose kernel caches (Axon's and PoCL's) are empty
folders. The row reports the whole wait, which the targets judge (``total_s``: ``import torch``
with Axon's autoload, building the model and data on the CPU, moving them to the device, making
the optimiser, the first step, and the first synchronisation after it), each phase on its own, the second
step for comparison, the same wait for PyTorch's CPU in a fresh process (``import torch`` without
the autoload: what a CPU-only user waits), and the size of the caches on disk afterwards.
``make demo``'s own Axon time is measured the same way.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time

from torch_axon.warmup import WORKLOADS, folder_size

# The phases of the wait, in order; total_s is their sum (one clock, no gaps between them).
PHASES = ("import_s", "build_s", "move_s", "optimiser_s", "first_step_s", "first_sync_s")

_CHILD = (
    "import json, sys, time; t0 = time.perf_counter(); import torch; t1 = time.perf_counter(); "
    "from torch_axon.warmup import first_steps; r = first_steps(sys.argv[1], sys.argv[2]); "
    "r['import_s'] = t1 - t0; print(json.dumps(r))"
)


def _fresh_env(root: str) -> dict:
    env = dict(os.environ)
    env["AXON_CACHE_DIR"] = os.path.join(root, "axon")
    env["POCL_CACHE_DIR"] = os.path.join(root, "pocl")
    os.makedirs(env["POCL_CACHE_DIR"])
    return env


def _run(args: list[str], env: dict, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=timeout)


def first_step(name: str, device: str, timeout: float = 600) -> dict:
    """One workload's wait in a fresh process with empty caches: the seconds of each of
    ``PHASES``, their sum ``total_s``, ``second_step_s`` and ``cache_bytes``. On the CPU
    ``import torch`` runs without Axon's autoload (torch_axon is imported after it, untimed)."""
    with tempfile.TemporaryDirectory(prefix="axon-cold-") as root:
        env = _fresh_env(root)
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "1" if device.startswith("axon") else "0"
        p = _run(["-c", _CHILD, name, device], env, timeout)
        if p.returncode != 0:
            tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
            if "transformers is not installed" in tail[0]:
                return {"skipped": "transformers is not installed"}
            raise RuntimeError(f"cold start of {name} on {device} failed: {tail[0]}")
        out = json.loads(p.stdout.strip().splitlines()[-1])
        out["total_s"] = sum(out[k] for k in PHASES)
        out["cache_bytes"] = folder_size(root)
        return out


def demo(timeout: float = 900) -> dict:
    """``python -m torch_axon.demo`` with empty caches: the Axon and CPU times it prints (its
    training loops) and the whole process's wall time (``process_s``: interpreter, imports, both
    runs, exit)."""
    with tempfile.TemporaryDirectory(prefix="axon-cold-") as root:
        start = time.perf_counter()
        p = _run(["-m", "torch_axon.demo"], _fresh_env(root), timeout)
        process_s = time.perf_counter() - start
        m = re.search(r"time: axon ([0-9.]+) s .*cpu ([0-9.]+) s", p.stdout)
        if p.returncode != 0 or not m:
            raise RuntimeError(f"the demo failed: {(p.stderr or p.stdout).strip()[-300:]}")
        return {"axon_s": float(m.group(1)), "cpu_s": float(m.group(2)), "process_s": process_s,
                "cache_bytes": folder_size(root)}  # fmt: skip


# The targets, seconds (cold, both caches empty), judged on the whole wait (total_s).
TARGETS = {"ones": 1.0, "mlp": 5.0, "cnn": 5.0, "gpt2": 5.0}
DEMO_TARGET = 10.0


def measure(quick: bool) -> dict:
    names = ["ones", "mlp"] if quick else list(WORKLOADS)
    rows = []
    for name in names:
        row = {"name": name, "title": WORKLOADS[name][0], "axon": first_step(name, "axon")}
        if "skipped" not in row["axon"]:
            row["cpu"] = first_step(name, "cpu")
        rows.append(row)
    return {"rows": rows, "demo": None if quick else demo()}
