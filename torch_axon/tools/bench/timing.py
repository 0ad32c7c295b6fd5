"""Timing: each workload runs on every backend of a comparison, interleaved and repeated.

A sample is the mean time of ``inner`` back-to-back calls followed by one synchronisation,
with ``inner`` calibrated per backend so a sample lasts about ``sample_s``. Samples of the
backends alternate (A B A B ...), so drift of the machine (frequency, other load) hits both
alike instead of biasing whichever ran second.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch


def synchronize(device: str) -> None:
    if device.startswith("axon"):
        torch.axon.synchronize()
    elif device.startswith("cuda"):
        torch.cuda.synchronize()


def unfused():
    """Fused eager mode off inside, as it was after. Rows that time one op's kernel need it: with
    the mode on, a loop of one op is timed as a fused group, in which a discarded result is never
    stored and repeated writes of one output are stored once (benchmarks-fused-eager.md times the
    mode itself)."""
    return torch.axon.fused_eager(False)


@dataclass
class Timing:
    """Seconds per call on one backend."""

    samples: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        """Half the interquartile range relative to the median (0.05 = +-5 %)."""
        if len(self.samples) < 4:
            return (max(self.samples) - min(self.samples)) / 2 / self.median
        q = statistics.quantiles(self.samples, n=4)
        return (q[2] - q[0]) / 2 / self.median

    def as_dict(self) -> dict:
        return {"median_s": self.median, "spread": self.spread, "samples_s": self.samples}


def _sample(fn: Callable[[], object], device: str, inner: int) -> float:
    synchronize(device)
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    synchronize(device)
    return (time.perf_counter() - start) / inner


def calibrate(fn: Callable[[], object], device: str, sample_s: float) -> int:
    """Calls per sample so that one sample takes about sample_s (at least one call)."""
    inner = 1
    while True:
        elapsed = _sample(fn, device, inner) * inner
        if elapsed >= sample_s / 4 or inner >= 1 << 20:
            break
        inner *= 4
    per_call = elapsed / inner
    return max(1, min(1 << 20, round(sample_s / max(per_call, 1e-9))))


def compare(
    runs: dict[str, tuple[Callable[[], object], str]],
    repeats: int,
    sample_s: float,
    warmup: int = 2,
) -> dict[str, Timing]:
    """runs: backend label -> (callable, device it runs on). Returns a Timing per label."""
    inner = {}
    for label, (fn, device) in runs.items():
        for _ in range(warmup):  # first calls build kernels and fill caches
            _sample(fn, device, 1)
        inner[label] = calibrate(fn, device, sample_s)
    timings = {label: Timing() for label in runs}
    for _ in range(repeats):
        for label, (fn, device) in runs.items():
            timings[label].samples.append(_sample(fn, device, inner[label]))
    return timings
