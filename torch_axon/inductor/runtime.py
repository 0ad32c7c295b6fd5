"""What generated wrapper code calls: an OpenCL C kernel built once through the runtime's
program cache (memory and disk) and launched on the current stream."""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile

import torch

from .. import _C


@functools.cache
def _device_shape(device: int) -> tuple[int, int]:
    props = torch.axon.get_device_properties(device)
    widest = 64 if props["is_cpu"] else 256
    return min(widest, props["max_work_group_size"]), props["compute_units"]


def group_size(device: int, items: int) -> int:
    """Work-items per group along the first dimension: a power of two up to 64 on CPU devices
    (256 on GPUs), small enough to give each compute unit about four groups. Left to the
    driver, PoCL takes a group size that divides the global size, and sizes with no good
    divisor ran in tiny groups (exp of 4M + 5 floats: 5.1 ms, against 2.3 in groups of 16);
    with few items large groups leave cores idle (a work-item may reduce a whole row). Each
    group costs PoCL about a microsecond (a pointwise chain of 1e5 floats: 0.062 ms in groups
    of 16, 0.034 in 64, 0.021 in the driver's 4096; 256 and 1024 measured no better than 64 at
    1e6, on a loaded machine). The global size is rounded up to whole groups; kernels return
    early past the end."""
    widest, units = _device_shape(device)
    group = 1
    while group * 2 <= widest and group * 2 * 4 * units <= items:
        group *= 2
    return group


class AxonKernel:
    def __init__(self, name: str, signature: str, device: int, source: str) -> None:
        self.name = name
        self.signature = signature
        self.device = device
        self.source = source
        self._program: int | None = None

    def _build(self) -> int:
        try:
            return _C._build_program(self.device, self.source, "")
        except RuntimeError as error:
            path = self._save_failed_source(str(error))
            raise RuntimeError(
                f"axon: the generated kernel {self.name} failed to build; its OpenCL C source and the "
                f"build log are in {path}\n{error}"
            ) from error

    def _save_failed_source(self, log: str) -> str:
        digest = hashlib.sha1(self.source.encode()).hexdigest()[:12]
        folder = os.path.join(tempfile.gettempdir(), "axon_inductor_failures")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{self.name}_{digest}.cl")
        with open(path, "w") as f:
            f.write(self.source)
            f.write("\n/* build log:\n" + log.replace("*/", "* /") + "\n*/\n")
        return path

    def run(self, args: list, global_size: list[int]) -> None:
        sizes = [int(n) for n in global_size]
        if any(n <= 0 for n in sizes):
            return
        if self._program is None:
            self._program = self._build()
        group = group_size(self.device, sizes[0])
        sizes[0] = -(-sizes[0] // group) * group
        _C._launch(self._program, self.name, self.device, sizes, [group] + [1] * (len(sizes) - 1), self.signature, args)
