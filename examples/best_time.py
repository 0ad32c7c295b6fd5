"""The examples' stopwatch: the best of a few synchronised calls, after one to build kernels."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import torch


def best_ms(fn: Callable[[], object], repeats: int = 5) -> float:
    fn()
    torch.axon.synchronize()
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        torch.axon.synchronize()
        best = min(best, time.perf_counter() - start)
    return best * 1e3
