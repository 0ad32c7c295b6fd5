"""Pointwise nodes mixing axon tensors and 0-dim CPU tensors run on axon, as they run on CUDA.

Inductor's ``make_pointwise`` gives a node the device of its first GPU input (``is_gpu``: cuda,
xpu, mps, mtia), else of its first input. Axon is not one of those types, so a decomposition
whose first operand is computed from a CPU scalar (``lerp``'s coefficient from a 0-dim CPU
weight) made a CPU kernel that read axon memory as host memory: the process crashed. Seen from
the lowering, axon is a GPU; the CPU scalar's value then reaches the axon kernel by value
(kernel.py). Nothing else in Inductor reads this name.
"""

from __future__ import annotations

import functools


@functools.cache
def apply() -> None:
    from torch._inductor import lowering
    from torch._inductor.utils import is_gpu

    def is_gpu_or_axon(device: str | None) -> bool:
        return device == "axon" or is_gpu(device)

    lowering.is_gpu = is_gpu_or_axon
