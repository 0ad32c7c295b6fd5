"""Compiled-mode workloads: each runs as eager Axon, compiled Axon (Inductor generating OpenCL
C), eager PyTorch CPU and compiled PyTorch CPU (Inductor's C++ backend), in one comparison.

The first calls compile (the timing's warm-up); what is timed is the steady state. Compile
times are measured apart (``compile_times``, ``python -m torch_axon.tools.bench.compiled``): the
first step of a workload in a new process, with empty caches (cold) and again with the caches the
first process left (warm).

The relu chains write into an output made beforehand (eager: a * b into it, then the rest in place
there; compiled: ``o.copy_(relu(a * b + c) * 0.5)``, which Inductor stores straight into ``o``), so
they time the kernels; from 1e6 elements an ``_alloc`` form returns a new tensor per call, as plain
code does (on the CPU a fresh buffer whose pages fault in on every call).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from . import models


@dataclass
class CompiledWorkload:
    name: str
    title: str
    unit: str
    units_per_call: Callable[[bool], float]
    build: Callable[[str, bool, bool], Callable[[], object]]  # (device, compiled, quick) -> call


def _maybe_compile(fn, compiled: bool):
    return torch.compile(fn) if compiled else fn


def _chain_into(a, b, c, o):
    """Eager relu(a * b + c) * 0.5 into o: the same four kernels as the allocating form, no allocation."""
    torch.mul(a, b, out=o)
    return o.add_(c).relu_().mul_(0.5)


def _chain(n: int, allocating: bool = False) -> Callable[[str, bool, bool], Callable[[], object]]:
    def build(device: str, compiled: bool, quick: bool) -> Callable[[], object]:
        size = min(n, 10_000) if quick else n
        a, b, c = (models._randn((size,), device) * (k + 1) for k in range(3))
        if allocating:
            fn = _maybe_compile(lambda a, b, c: torch.relu(a * b + c) * 0.5, compiled)
            return lambda: fn(a, b, c)
        o = torch.empty(size, device=device)
        fn = torch.compile(lambda a, b, c, o: o.copy_(torch.relu(a * b + c) * 0.5)) if compiled else _chain_into
        return lambda: fn(a, b, c, o)

    return build


def _chain_workload(n: int, allocating: bool) -> CompiledWorkload:
    return CompiledWorkload(
        f"chain_{n:.0e}".replace("+0", "") + "_alloc" * allocating,
        f"relu(a * b + c) * 0.5, {n:.0e} elements, " + ("allocating" if allocating else "output preallocated"),
        "Melem/s",
        lambda quick: (min(n, 10_000) if quick else n) / 1e6,
        _chain(n, allocating),
    )


def _ln_gelu(device: str, compiled: bool, quick: bool) -> Callable[[], object]:
    rows, width = (64, 128) if quick else (4096, 1024)
    x = models._randn((rows, width), device)
    w, b = torch.ones(width, device=device), torch.zeros(width, device=device)
    fn = _maybe_compile(lambda x: F.gelu(F.layer_norm(x, (width,), w, b)), compiled)
    return lambda: fn(x)


def _mlp_train(device: str, compiled: bool, quick: bool) -> Callable[[], object]:
    return models._build_mlp_square(device, quick, lambda m: _maybe_compile(m, compiled))


def _gpt_train(device: str, compiled: bool, quick: bool) -> Callable[[], object]:
    s = models.GPT[quick]
    model = models._on(device, lambda: models._GPT(**s))
    tokens = models._randint(s["vocab"], (s["batch"], s["seq"] + 1), device)
    return models._train_step(_maybe_compile(model, compiled), tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous())


WORKLOADS: list[CompiledWorkload] = [
    *(
        _chain_workload(n, allocating)
        for n in (10_000, 100_000, 1_000_000, 10_000_000)
        for allocating in (False, True)[: 1 + (n >= 1_000_000)]
    ),
    CompiledWorkload(
        "layer_norm_gelu",
        "gelu(layer_norm(x)), 4096 x 1024",
        "Melem/s",
        lambda quick: (64 * 128 if quick else 4096 * 1024) / 1e6,
        _ln_gelu,
    ),
    CompiledWorkload(
        "mlp_square_train",
        "MLP 512-1024-512 training step (AdamW), batch 128",
        "samples/s",
        lambda quick: models.MLP_SQUARE[quick]["batch"],
        _mlp_train,
    ),
    CompiledWorkload(
        "gpt_train",
        "GPT decoder training step (AdamW), d 384, 6 layers, batch 4 x seq 256",
        "tokens/s",
        lambda quick: models.GPT[quick]["batch"] * models.GPT[quick]["seq"],
        _gpt_train,
    ),
]


def first_steps(name: str, device: str = "axon") -> dict:
    """The compiled workload's first step (compiles forward and backward graphs, builds their
    kernels, runs) and second step, in seconds, in this process."""
    workload = next(w for w in WORKLOADS if w.name == name)
    sync = torch.axon.synchronize if device.startswith("axon") else lambda: None
    t0 = time.perf_counter()
    step = workload.build(device, True, False)
    step()
    sync()
    t1 = time.perf_counter()
    step()
    sync()
    t2 = time.perf_counter()
    return {"first_step_s": t1 - t0, "second_step_s": t2 - t1, "compile_s": (t1 - t0) - (t2 - t1)}


_CHILD = (
    "import json, sys, time; t0 = time.perf_counter(); import torch, torch_axon; "
    "from torch_axon.tools.bench.compiled import first_steps; r = first_steps(sys.argv[1], sys.argv[2]); "
    "r['process_s'] = time.perf_counter() - t0; print(json.dumps(r))"
)


def compile_times(name: str = "gpt_train", device: str = "axon", timeout: float = 900) -> dict:
    """Cold and warm compile of a workload: its first steps in a new process whose caches
    (Inductor's, Axon's kernel cache, PoCL's) are empty folders, then in another new process
    that finds what the first one left there. ``compile_s`` is the first step less the second
    (the compile and kernel builds, without the step's own work)."""
    out = {"name": name, "device": device}
    with tempfile.TemporaryDirectory(prefix="axon-compile-") as root:
        env = dict(os.environ)
        for var, folder in (
            ("TORCHINDUCTOR_CACHE_DIR", "inductor"),
            ("AXON_CACHE_DIR", "axon"),
            ("POCL_CACHE_DIR", "pocl"),
        ):
            env[var] = os.path.join(root, folder)
            os.makedirs(env[var])
        for run in ("cold", "warm"):
            p = subprocess.run(
                [sys.executable, "-c", _CHILD, name, device], env=env, capture_output=True, text=True, timeout=timeout
            )
            if p.returncode != 0:
                tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
                raise RuntimeError(f"{run} compile of {name} on {device} failed: {tail[0]}")
            out[run] = json.loads(p.stdout.strip().splitlines()[-1])
    return out


if __name__ == "__main__":
    for device in sys.argv[1:] or ["axon"]:
        r = compile_times("gpt_train", device)
        for run in ("cold", "warm"):
            c = r[run]
            print(
                f"gpt_train on {device}, {run}: first step {c['first_step_s']:.1f} s, "
                f"second {c['second_step_s']:.2f} s, compile {c['compile_s']:.1f} s, process {c['process_s']:.1f} s",
                flush=True,
            )
