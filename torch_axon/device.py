"""``torch.axon``: the device module, shaped like ``torch.cuda``.

Everything here delegates to the native part (``torch_axon._C``) or to PyTorch's generic
accelerator machinery (streams, events), so code written for ``torch.cuda`` ports by name.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
from typing import Any

import torch

from . import _C
from .properties import AxonDeviceProperties, from_device_info

# ---- devices --------------------------------------------------------------------------------


def is_available() -> bool:
    return device_count() > 0


def device_count() -> int:
    return _C.device_count()


def is_initialized() -> bool:
    return True


def _lazy_init() -> None:
    """Devices are discovered by the runtime on first use; nothing to do here."""


def _is_in_bad_fork() -> bool:
    return False


def _get_index(device: Any) -> int:
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "axon":
            raise ValueError(f"expected an axon device, got {device}")
        return current_device() if device.index is None else device.index
    raise TypeError(f"cannot interpret {device!r} as an axon device")


class _utils:  # noqa: N801  (torch.serialization looks for device_module._utils)
    @staticmethod
    def _get_device_index(device: Any, optional: bool = False) -> int:
        return _get_index(device)


def current_device() -> int:
    return _C.current_device()


def set_device(device: Any) -> None:
    index = _get_index(device)
    if index >= 0:
        _C.set_device(index)


class device:  # noqa: N801  (mirrors torch.cuda.device)
    """Context manager that changes the current axon device."""

    def __init__(self, device: Any):
        self.index = _get_index(device)
        self.previous = -1

    def __enter__(self):
        self.previous = current_device()
        set_device(self.index)

    def __exit__(self, *exc):
        set_device(self.previous)
        return False


def synchronize(device: Any = None) -> None:
    """Waits for all work queued on every stream of the device."""
    _C.synchronize(_get_index(device))


def get_device_name(device: Any = None) -> str:
    return get_device_properties(device).name


def get_device_properties(device: Any = None) -> AxonDeviceProperties:
    """Name, vendor, driver, memory, compute units, fp64/fp16, native-kernel support, with CUDA's
    attribute names where they mean something (``total_memory``, ``multi_processor_count``)."""
    return _properties(_get_index(device))


@functools.cache
def _properties(index: int) -> AxonDeviceProperties:
    return from_device_info(_C.device_info(index), _C._kernel_device_limits(index))


# ---- streams --------------------------------------------------------------------------------


def current_stream(device: Any = None) -> torch.Stream:
    return torch.accelerator.current_stream(_get_index(device))


_PRIVATEUSE1 = 20  # c10::DeviceType::PrivateUse1


def default_stream(device: Any = None) -> torch.Stream:
    """The device's default stream (stream id 0), where work goes unless a stream is set."""
    return torch.Stream(stream_id=0, device_index=_get_index(device), device_type=_PRIVATEUSE1)


Stream = torch.Stream
Event = torch.Event


@contextlib.contextmanager
def stream(s: torch.Stream | None):
    """Makes ``s`` the current stream of its device inside the block."""
    if s is None:
        yield
        return
    previous = torch.accelerator.current_stream(s.device_index)
    torch.accelerator.set_stream(s)
    try:
        yield
    finally:
        torch.accelerator.set_stream(previous)


# ---- memory ---------------------------------------------------------------------------------


def memory_stats(device: Any = None) -> dict:
    return _C.memory_stats(_get_index(device))


def memory_allocated(device: Any = None) -> int:
    return memory_stats(device)["allocated_bytes.all.current"]


def max_memory_allocated(device: Any = None) -> int:
    return memory_stats(device)["allocated_bytes.all.peak"]


def memory_reserved(device: Any = None) -> int:
    return memory_stats(device)["reserved_bytes.all.current"]


def max_memory_reserved(device: Any = None) -> int:
    return memory_stats(device)["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device: Any = None) -> None:
    _C.reset_peak_memory_stats(_get_index(device))


def empty_cache() -> None:
    """Releases cached device memory of every device back to the OpenCL driver."""
    for index in range(device_count()):
        _C.empty_cache(index)


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """(free, total) bytes as Axon sees them: the device's memory (or AXON_MEMORY_LIMIT)."""
    return _C.mem_get_info(_get_index(device))


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """A table of the caching allocator's figures, shaped like ``torch.cuda.memory_summary``'s
    (figures Axon does not track, such as bytes freed in total, show as "-")."""
    index = _get_index(device)
    s = memory_stats(index)

    def size(n: int) -> str:
        for unit in ("B", "KiB", "MiB", "GiB"):
            if abs(n) < 1024 or unit == "GiB":
                return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
            n /= 1024
        return str(n)

    rows = [
        ("Allocated memory", size(s["allocated_bytes.all.current"]), size(s["allocated_bytes.all.peak"]), "-", "-"),
        ("Reserved memory", size(s["reserved_bytes.all.current"]), size(s["reserved_bytes.all.peak"]), "-", "-"),
        (
            "Allocations",
            str(s["allocation.all.current"]),
            "-",
            str(s["allocation.all.allocated"]),
            str(s["allocation.all.freed"]),
        ),
        ("Segments", str(s["segment.all.current"]), "-", "-", "-"),
    ]
    width = 75
    rule, thick = "|" + "-" * width + "|", "|" + "=" * width + "|"
    lines = [
        thick,
        "|" + f"Axon memory summary, device ID {index} ({get_device_name(index)})".center(width)[:width] + "|",
        rule,
        "|" + f"out-of-memory events: {s['num_ooms']}   limit: {size(s['limit_bytes'])}".center(width) + "|",
        thick,
        "|"
        + " Metric".ljust(23)
        + "|"
        + "|".join(f"{h:^12}" for h in ("Cur Usage", "Peak Usage", "Tot Alloc", "Tot Freed"))
        + "|",
        rule,
    ]
    for name, *cells in rows:
        lines.append("| " + name.ljust(22) + "|" + "|".join(f"{c:>11} " for c in cells) + "|")
    lines.append(thick)
    return "\n".join(lines)


# ---- random numbers -------------------------------------------------------------------------


class _Generators:
    """``torch.axon.default_generators[i]``: the Philox generator of device i."""

    def __getitem__(self, index: int) -> torch.Generator:
        return _C.default_generator(index)

    def __len__(self) -> int:
        return device_count()

    def __iter__(self):
        return (self[i] for i in range(len(self)))


default_generators = _Generators()


def manual_seed(seed: int) -> None:
    default_generators[current_device()].manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    for generator in default_generators:
        generator.manual_seed(int(seed))


def seed() -> None:
    default_generators[current_device()].seed()


def seed_all() -> None:
    for generator in default_generators:
        generator.seed()


def initial_seed() -> int:
    return default_generators[current_device()].initial_seed()


# get_rng_state(device=None) -> 16 bytes [uint64 seed, int64 offset], the layout CUDA's Philox
# state ends with; set_rng_state(state, device=None). Native functions, not Python: torch.compile
# of code that saves and restores the state calls them instead of tracing into them.
get_rng_state = _C.get_rng_state
set_rng_state = _C.set_rng_state


def get_rng_state_all() -> list[torch.Tensor]:
    return [g.get_state() for g in default_generators]


def set_rng_state_all(states) -> None:
    for g, s in zip(default_generators, states, strict=False):
        g.set_state(s)


# ---- coverage and mixed precision -------------------------------------------------------------


def fallback_ops(reset: bool = False) -> dict[str, int]:
    """Ops that ran through the CPU fallback since the last reset, with their call counts.

    An op listed here has no native axon kernel yet. ``AXON_FALLBACK=error`` turns such calls
    into errors, ``AXON_FALLBACK=silent`` hides the once-per-op warning.
    """
    return _C.fallback_ops(reset)


def set_fused_eager(enabled: bool) -> None:
    """Fused eager mode on or off for the process (docs/fused-eager.md): pointwise ops of the
    float types are recorded per stream and launched as one generated kernel when their results
    are needed, with results identical to op-by-op eager. On by default; ``AXON_FUSED_EAGER=0``
    turns it off at start. Turning it off launches whatever is recorded."""
    _C._set_fused_eager(bool(enabled))


def is_fused_eager_enabled() -> bool:
    return _C._fused_eager_enabled()


@contextlib.contextmanager
def fused_eager(enabled: bool):
    """Fused eager mode on or off inside the block, and back as it was after (what was recorded
    is launched when the mode goes off, on the way in or out)."""
    before = is_fused_eager_enabled()
    set_fused_eager(enabled)
    try:
        yield
    finally:
        set_fused_eager(before)


def wait_fused_kernel_builds() -> None:
    """Returns once the fused kernels being built in the background are built: from then on,
    groups of their structures run fused (tests and benchmarks that need a known step)."""
    _C._fused_eager_wait_builds()


def fused_eager_stats(reset: bool = False) -> dict[str, int]:
    """Ops recorded, groups launched fused and op by op, kernels built, and stores skipped
    (outputs freed before their group ran) since the process started or the last reset."""
    return _C._fused_eager_stats(reset)


# No fused kernel may be building once C's exit handlers run: the driver's compiler would use
# objects they destroyed (runtime/src/fused/builder.c). Python's exit runs before them.
atexit.register(_C._fused_eager_stop_builds)


def kernel_cache_stats() -> dict:
    """Program cache hits, builds and damaged entries, and the on-disk cache folder."""
    return _C.kernel_cache_stats()


def get_amp_supported_dtype() -> list[torch.dtype]:
    return [torch.float16, torch.bfloat16]


# ---- kernels users write (torch_axon/kernels/) ----------------------------------------------


def compile_shader(source: str, options: str = "", device=None):
    """Builds OpenCL C ``source`` for an axon device and returns a library whose attributes are
    its kernels, as ``torch.mps.compile_shader`` does (docs/kernels.md)."""
    from .kernels import compile_shader as build

    return build(source, options, device)


# ---- torch.compile --------------------------------------------------------------------------

_INDUCTOR_NAMES = ("Scheduling", "PythonWrapperCodegen", "CppWrapperCodegen", "WrapperFxCodegen")


def __getattr__(name: str) -> Any:
    """Inductor asks the device module for its code generators when it first compiles for axon;
    registering then keeps Inductor out of ``import torch`` (torch_axon/inductor/)."""
    if name in _INDUCTOR_NAMES:
        from .inductor import register

        return register()[name]
    raise AttributeError(f"module 'torch.axon' has no attribute {name!r}")
