"""The cold-start workload: a new user's first minutes. Each first-contact workload of
``torch_axon.warmup`` runs in a fresh process whose kernel caches (Axon's and PoCL's) are empty
folders; the row reports seconds to the end of the first step, the second step for comparison,
the same first step on PyTorch's CPU in a fresh process, and the size of the caches on disk
afterwards. ``make demo``'s own Axon time is measured the same way.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile

from torch_axon.warmup import WORKLOADS, folder_size

_CHILD = (
    "import json, sys, time; t0 = time.perf_counter(); import torch; t1 = time.perf_counter(); "
    "from torch_axon.warmup import first_steps; r = first_steps(sys.argv[1], sys.argv[2]); "
    "r['import_s'] = t1 - t0; r['process_s'] = time.perf_counter() - t0; print(json.dumps(r))"
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
    """One workload's first steps in a fresh process with empty caches."""
    with tempfile.TemporaryDirectory(prefix="axon-cold-") as root:
        env = _fresh_env(root)
        p = _run(["-c", _CHILD, name, device], env, timeout)
        if p.returncode != 0:
            tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
            if "transformers is not installed" in tail[0]:
                return {"skipped": "transformers is not installed"}
            raise RuntimeError(f"cold start of {name} on {device} failed: {tail[0]}")
        out = json.loads(p.stdout.strip().splitlines()[-1])
        out["cache_bytes"] = folder_size(root)
        return out


def demo(timeout: float = 900) -> dict:
    """``python -m torch_axon.demo`` with empty caches: the Axon and CPU times it prints."""
    with tempfile.TemporaryDirectory(prefix="axon-cold-") as root:
        p = _run(["-m", "torch_axon.demo"], _fresh_env(root), timeout)
        m = re.search(r"time: axon ([0-9.]+) s .*cpu ([0-9.]+) s", p.stdout)
        if p.returncode != 0 or not m:
            raise RuntimeError(f"the demo failed: {(p.stderr or p.stdout).strip()[-300:]}")
        return {"axon_s": float(m.group(1)), "cpu_s": float(m.group(2)), "cache_bytes": folder_size(root)}


# The targets, seconds (cold, both caches empty).
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
