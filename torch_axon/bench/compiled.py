"""Compiled-mode workloads: each runs as eager Axon, compiled Axon (Inductor generating OpenCL
C), eager PyTorch CPU and compiled PyTorch CPU (Inductor's C++ backend), in one comparison.

The first calls compile (the timing's warm-up); what is timed is the steady state.
"""

from __future__ import annotations

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


def _chain(n: int) -> Callable[[str, bool, bool], Callable[[], object]]:
    def build(device: str, compiled: bool, quick: bool) -> Callable[[], object]:
        size = min(n, 10_000) if quick else n
        a, b, c = (models._randn((size,), device) * (k + 1) for k in range(3))
        fn = _maybe_compile(lambda a, b, c: torch.relu(a * b + c) * 0.5, compiled)
        return lambda: fn(a, b, c)

    return build


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
        CompiledWorkload(
            f"chain_{n:.0e}".replace("+0", ""),
            f"relu(a * b + c) * 0.5, {n:.0e} elements",
            "Melem/s",
            lambda quick, n=n: (min(n, 10_000) if quick else n) / 1e6,
            _chain(n),
        )
        for n in (10_000, 100_000, 1_000_000, 10_000_000)
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
