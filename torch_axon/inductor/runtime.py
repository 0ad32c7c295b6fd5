"""What generated wrapper code calls: an OpenCL C kernel built once through the runtime's
program cache (memory and disk) and launched on the current stream.

Kernels are built together: the first launch of a kernel builds every kernel defined on its
device and not built yet (a wrapper module defines all of its kernels when it loads) as one
program, up to BATCH_KERNELS at a time, with the prelude they all start with once. A build costs
PoCL about 0.3 s whatever it holds, and each kernel about 0.08 s more: 20 small kernels built one
by one took 6.5 s, together 1.6 s, and their first launches as long either way (1.1 s).
densenet121's forward and training step compiled from cold built 512 kernels one by one in 199
s of its 358 s, and in 10 programs in 58 s of 233 s (CPU Inductor took 224 s for the same). A
kernel whose batch fails to build, or that has helper functions of its own, is built alone, so a
build error names its kernel."""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
import weakref
from collections.abc import Callable

import torch

from .. import _C
from .prelude import SPECIAL_COMPUTE_TYPES, prelude, special_functions

# Past this many kernels one program's build gains nothing more (its fixed cost is spread thin)
# and a failed build, which sends each kernel to build alone, costs more.
BATCH_KERNELS = 64

# Per device, kernels defined and not built yet (weakly: a wrapper dropped before it ran builds
# nothing).
_unbuilt: dict[int, list[weakref.ref]] = {}


@functools.cache
def _device_shape(device: int) -> tuple[int, int]:
    props = torch.axon.get_device_properties(device)
    widest = 64 if props.is_cpu else 256
    return min(widest, props.max_work_group_size), props.max_compute_units


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


def _skip(args: list) -> None:
    """The launch of an empty grid: nothing to run."""


class AxonKernel:
    """One generated kernel. A launch costs Python a dictionary lookup and a call: the first
    launch of each grid builds the program and keeps a ``functools.partial`` of ``_C._launch``
    with everything but the arguments bound (program, name, device, global size rounded up to
    whole groups, group size, signature), so deriving them is done once: a launch of the chain
    relu(a * b + c) * 0.5 at 1e4 floats took 6.7 us from Python, 5.1 now, the cost of
    ``_C._launch`` alone. Static grids are constant tuples in the wrapper; dynamic ones add an
    entry per size."""

    # Dynamic shapes could add an entry per distinct size; past this many the cache restarts.
    MAX_GRIDS = 64

    def __init__(self, name: str, signature: str, device: int, source: str) -> None:
        self.name = name
        self.signature = signature
        self.device = device
        self.source = source
        self._program: int | None = None
        self._launches: dict[tuple, Callable[[list], None]] = {}
        _unbuilt.setdefault(device, []).append(weakref.ref(self))

    def _shared_parts(self) -> tuple[torch.dtype | None, str] | None:
        """(the compute type of the special functions it includes, or None, its source past
        the prelude) when its source is the prelude, maybe the special functions, then the
        kernel and nothing else; else None (helper functions of its own could clash with another
        kernel's)."""
        rest = _past(self.source, prelude())
        if rest is None:
            return None
        special = None
        for compute_type in SPECIAL_COMPUTE_TYPES:
            past_special = _past(rest, special_functions(compute_type))
            if past_special is not None:
                special, rest = compute_type, past_special
                break
        return (special, rest) if rest.startswith("__kernel void ") else None

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

    def _launcher(self, grid: tuple) -> Callable[[list], None]:
        sizes = [int(n) for n in grid]
        if any(n <= 0 for n in sizes):
            launch = _skip
        else:
            if self._program is None:
                _build_together(self.device)
            if self._program is None:
                self._program = self._build()
            group = group_size(self.device, sizes[0])
            sizes[0] = -(-sizes[0] // group) * group
            local = [group] + [1] * (len(sizes) - 1)
            launch = functools.partial(_C._launch, self._program, self.name, self.device, sizes, local, self.signature)
        if len(self._launches) >= self.MAX_GRIDS:
            self._launches.clear()
        self._launches[grid] = launch
        return launch

    def run(self, args: list, grid: tuple | list) -> None:
        """Launches on the current stream of the device (``_C._launch`` looks it up in C++) over
        `grid`, the work-items along each dimension, x first."""
        if type(grid) is not tuple:
            grid = tuple(grid)
        launch = self._launches.get(grid)
        if launch is None:
            launch = self._launcher(grid)
        launch(args)


def _past(source: str, part: str) -> str | None:
    """What follows ``part`` at the start of ``source`` (each as the wrapper writes it, between
    blank lines), or None."""
    source, part = source.lstrip("\n"), part.strip("\n")
    return source[len(part) :].lstrip("\n") if source.startswith(part) else None


def _build_together(device: int) -> None:
    """Builds the device's unbuilt kernels in programs of up to BATCH_KERNELS, grouped by which
    instance of the special functions they include (if any), each name once per program. Those left without a program
    (alone in their group, or in a group whose build failed) build alone when launched."""
    waiting = [k for k in (ref() for ref in _unbuilt.pop(device, [])) if k is not None and k._program is None]
    groups: dict[torch.dtype | None, list[list[tuple[AxonKernel, str]]]] = {}
    for kernel in waiting:
        parts = kernel._shared_parts()
        if parts is None:
            continue
        special, body = parts
        batches = groups.setdefault(special, [])
        batch = next((b for b in batches if len(b) < BATCH_KERNELS and all(k.name != kernel.name for k, _ in b)), None)
        if batch is None:
            batch = []
            batches.append(batch)
        batch.append((kernel, body))
    for special, batches in groups.items():
        head = prelude() + "\n" + (special_functions(special) + "\n" if special else "")
        for batch in batches:
            if len(batch) < 2:
                continue
            try:
                program = _C._build_program(device, head + "\n".join(body for _, body in batch), "")
            except RuntimeError:
                continue
            for kernel, _ in batch:
                kernel._program = program
