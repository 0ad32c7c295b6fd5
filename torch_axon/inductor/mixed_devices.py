"""Pointwise nodes mixing axon tensors and 0-dim CPU tensors run on axon, as they run on CUDA.

Inductor's ``make_pointwise`` gives a node the device of its first GPU input (``is_gpu``: cuda,
xpu, mps, mtia), else of its first input. Axon is not one of those types, so a decomposition
whose first operand is computed from a CPU scalar (``lerp``'s coefficient from a 0-dim CPU
weight) made a CPU kernel that read axon memory as host memory: the process crashed. Seen from
the lowering, axon is a GPU; the CPU scalar's value then reaches the axon kernel by value
(kernel.py). Nothing else in Inductor reads this name.

A 0-dim CPU tensor that the graph computes (``xlogy(x, cpu_scalar)`` takes the log of the scalar
in a CPU kernel first) reaches a kernel by value only if the scheduler lists it in
``zero_dim_cpu_tensor_list``, which it does for the reads of GPU nodes (``node.is_gpu()``).
The module-wide ``is_gpu`` of the scheduler decides much else (device guards, fusion rules), so
only that list is extended: the same rule, for axon nodes.
"""

from __future__ import annotations

import functools


@functools.cache
def apply() -> None:
    from torch._inductor import lowering
    from torch._inductor.ir import MultiOutputLayout, NoneLayout, get_device_type
    from torch._inductor.scheduler import Scheduler
    from torch._inductor.utils import is_gpu
    from torch._inductor.virtualized import V

    def is_gpu_or_axon(device: str | None) -> bool:
        return device == "axon" or is_gpu(device)

    lowering.is_gpu = is_gpu_or_axon

    upstream = Scheduler.update_zero_dim_cpu_tensor

    def update_zero_dim_cpu_tensor(self: Scheduler) -> None:
        upstream(self)
        for node in self.nodes:
            device = node.get_device()
            if device is None or device.type != "axon":
                continue
            for read in node.read_writes.reads:
                buffer = V.graph.name_to_buffer.get(read.name)
                if (
                    buffer is not None
                    and get_device_type(buffer) == "cpu"
                    and not isinstance(buffer.layout, (NoneLayout, MultiOutputLayout))
                    and buffer.get_size() == []
                ):
                    V.graph.zero_dim_cpu_tensor_list.add(read.name)

    Scheduler.update_zero_dim_cpu_tensor = update_zero_dim_cpu_tensor
