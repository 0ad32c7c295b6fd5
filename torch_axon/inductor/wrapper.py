"""The Python wrapper Inductor writes around axon kernels, and the device snippets it asks for.

Axon is not one of Inductor's GPU types, so no device guards or raw streams are emitted: a
kernel launches on the current stream of its device, and the wrapper's calls (kernels and
Axon's eager ops for what is not generated) queue in order on it.
"""

from __future__ import annotations

from torch._inductor.codegen.common import DeviceOpOverrides
from torch._inductor.codegen.wrapper import PythonWrapperCodegen


class AxonWrapperCodegen(PythonWrapperCodegen):
    # Inductor's FX graph cache keys on torch's sources, not Axon's: a cached wrapper could
    # outlive the code generator that wrote it. The kernels themselves stay cached (runtime).
    supports_caching = False

    @staticmethod
    def create(is_subgraph: bool, subgraph_name: str | None, parent_wrapper=None, partition_signatures=None):
        if is_subgraph:
            return PythonWrapperCodegen.create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures)
        return AxonWrapperCodegen()


class AxonDeviceOpOverrides(DeviceOpOverrides):
    def import_get_raw_stream_as(self, name: str) -> str:
        return f"def {name}(index): return 0"

    def set_device(self, device_idx: int) -> str:
        return f"torch.axon.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.axon.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.axon.device({device_idx})"


class AxonCppWrapperNotSupported:
    """Inductor's C++ wrapper (cpp_wrapper=True, AOTInductor) has no axon form yet."""

    @staticmethod
    def create(*args, **kwargs):
        raise NotImplementedError("axon: Inductor's C++ wrapper (cpp_wrapper / AOTInductor) is not supported yet")
