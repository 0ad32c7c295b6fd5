"""``torch.axon.get_device_properties()``: an object with attributes, as CUDA's and XPU's are.

Libraries read CUDA's attribute names (torchtitan's memory monitor reads ``total_memory``,
Inductor ``multi_processor_count``), so those that have a meaning on an OpenCL device carry it;
XPU's names for the same facts (``max_compute_units``, ``has_fp64`` ...) and the OpenCL-specific
ones sit beside them. Names with no OpenCL meaning (``major``/``minor`` compute capability,
``warp_size``, ``uuid``) are absent rather than invented: a check such as ``props.major >= 8``
fails loudly instead of passing on a made-up number.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class AxonDeviceProperties:
    # CUDA's names
    name: str
    total_memory: int  # bytes of global memory (CL_DEVICE_GLOBAL_MEM_SIZE)
    multi_processor_count: int  # compute units
    is_integrated: bool  # shares the host's memory (a CPU device)
    # XPU's names
    vendor: str
    driver_version: str
    platform_name: str
    max_compute_units: int
    max_work_group_size: int
    has_fp16: bool
    has_fp64: bool
    type: str  # "cpu" or "gpu"
    # OpenCL's
    platform_version: str
    opencl_c_version: str
    max_mem_alloc_size: int  # the largest single buffer, bytes
    local_mem_size: int  # bytes of __local memory per work-group
    native_kernels: bool  # runs host functions in its queues (Axon's CPU-class BLAS path)
    extensions: tuple[str, ...]
    # The driver bugs Axon works around on this device (runtime/src/quirks.c): "loop_budget",
    # "private_struct_args", "widened_int_compare"; empty on drivers without known bugs.
    quirks: tuple[str, ...] = ()
    # Float subnormals kept (CL_FP_DENORM); without it OpenCL lets results below 1.2e-38 flush
    # to zero (Mesa's llvmpipe: its vector exp does).
    has_denormals: bool = True
    # What a kernel author sizes code by (docs/kernels.md): vector widths per OpenCL element
    # type ("float", "half", "int" ...), preferred and native, and the largest work-group extent
    # per dimension.
    preferred_vector_width: dict = dataclasses.field(default_factory=dict, hash=False, compare=False)
    native_vector_width: dict = dataclasses.field(default_factory=dict, hash=False, compare=False)
    max_work_item_sizes: tuple[int, int, int] = (0, 0, 0)

    @property
    def is_cpu(self) -> bool:
        return self.type == "cpu"

    def __repr__(self) -> str:
        # CUDA's form: the figures a person looks for, memory in MB.
        return (
            f"AxonDeviceProperties(name='{self.name}', platform='{self.platform_name}', "
            f"driver_version='{self.driver_version}', total_memory={self.total_memory // (1024 * 1024)}MB, "
            f"multi_processor_count={self.multi_processor_count}, type='{self.type}', "
            f"has_fp16={self.has_fp16}, has_fp64={self.has_fp64})"
        )


def from_device_info(info: dict, kernel_limits: dict | None = None) -> AxonDeviceProperties:
    """Builds the object from the runtime's ``_C.device_info`` dictionary and, where given, its
    ``_C._kernel_device_limits`` one."""
    limits = kernel_limits or {}
    return AxonDeviceProperties(
        name=info["name"],
        total_memory=int(info["global_mem_bytes"]),
        multi_processor_count=int(info["compute_units"]),
        is_integrated=bool(info["is_cpu"]),
        vendor=info["vendor"],
        driver_version=info["driver_version"],
        platform_name=info["platform_name"],
        max_compute_units=int(info["compute_units"]),
        max_work_group_size=int(info["max_work_group_size"]),
        has_fp16=bool(info["fp16"]),
        has_fp64=bool(info["fp64"]),
        type="cpu" if info["is_cpu"] else "gpu",
        platform_version=info["platform_version"],
        opencl_c_version=info["opencl_c_version"],
        max_mem_alloc_size=int(info["max_alloc_bytes"]),
        local_mem_size=int(info["local_mem_bytes"]),
        native_kernels=bool(info["native_kernels"]),
        extensions=tuple(info["extensions"].split()),
        quirks=tuple(info.get("quirks", "").split()),
        has_denormals=bool(info.get("denormals", True)),
        preferred_vector_width=dict(limits.get("preferred_vector_width", {})),
        native_vector_width=dict(limits.get("native_vector_width", {})),
        max_work_item_sizes=tuple(limits.get("max_work_item_sizes", (0, 0, 0))),
    )
