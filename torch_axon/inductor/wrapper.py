"""The Python wrapper Inductor writes around axon kernels, and the device snippets it asks for.

Axon is not one of Inductor's GPU types, so no device guards or raw streams are emitted: a
kernel launches on the current stream of its device, and the wrapper's calls (kernels and
Axon's eager ops for what is not generated) queue in order on it.
"""

from __future__ import annotations

import functools
import hashlib
import pathlib

import torch
from torch._inductor.codegen.common import DeviceOpOverrides
from torch._inductor.codegen.wrapper import PythonWrapperCodegen
from torch._inductor.custom_graph_pass import CustomGraphModulePass


class GeneratorKey(CustomGraphModulePass):
    """What Inductor's FX graph cache needs to know of Axon's code generator: its key covers
    torch's sources, and the uuid of each device's custom pass. This pass changes nothing; its
    uuid is a digest of this package's sources, the kernel files generated kernels include, and
    the devices (whose kind decides the lanes of reductions), so a cached wrapper never outlives
    the generator that wrote it."""

    def __call__(self, gm: torch.fx.GraphModule) -> None:
        pass

    def uuid(self) -> str:
        # User kernels join the key as they are defined (their lowerings change the kernels).
        from .user_kernels import digest

        return self._generator_digest() + digest()

    @functools.cache  # noqa: B019 - one instance, registered once
    def _generator_digest(self) -> str:
        from .. import _C

        digest = hashlib.sha256()
        for path in sorted(pathlib.Path(__file__).parent.glob("*.py")):
            digest.update(path.read_bytes())
        for name in ("pointwise_ops", "pointwise_math", "special"):
            digest.update(_C._kernel_file(name).encode())
        for index in range(torch.axon.device_count()):
            props = torch.axon.get_device_properties(index)
            digest.update(repr(props.__dict__).encode())
        return digest.hexdigest()


class AxonWrapperCodegen(PythonWrapperCodegen):
    # Inductor's FX graph cache may keep axon wrappers: GeneratorKey puts Axon's generator in
    # its key. The kernels a cached wrapper holds build through the runtime's program cache.
    supports_caching = True

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

    # Inductor reads this before it creates a wrapper; without it the refusal below was an
    # AttributeError.
    supports_caching = False

    @staticmethod
    def create(*args, **kwargs):
        raise NotImplementedError("axon: Inductor's C++ wrapper (cpp_wrapper / AOTInductor) is not supported yet")
