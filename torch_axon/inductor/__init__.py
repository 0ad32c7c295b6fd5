"""torch.compile on axon: Inductor generates OpenCL C for axon tensors.

Nothing here is imported with ``torch_axon`` (Inductor is heavy to import, and most programs
never compile): Inductor asks the PrivateUse1 device module for its code generators the first
time it compiles (``torch._inductor.codegen.common.init_backend_registration``), and
``torch.axon``'s ``__getattr__`` answers by calling ``register()``. ``register()`` is also safe
to call directly.

- ``kernel.py``: the kernel generator (pointwise, reductions) and its scheduling;
- ``overrides.py``: Inductor's ops as OpenCL C; ``printer.py``: index expressions;
- ``wrapper.py``: the Python wrapper and device snippets; ``runtime.py``: what the wrapper
  calls to build and launch a kernel; ``device_interface.py``: the device for Dynamo;
- ``sympy_fixes.py``: a repair to Inductor's index functions that non-CPU lowerings need;
- ``mixed_devices.py``: axon counts as a GPU where a lowering picks a mixed node's device;
- ``arg_reductions.py``: argmax/argmin over a non-contiguous tensor get logical indices;
- ``pool_backward.py``: average pooling's gradient in ceil mode divides as its forward does;
- ``view_meta_cache.py``: AOTAutograd's cache skips entries torch 2.13 would save corrupt.
"""

from __future__ import annotations

import functools


@functools.cache
def register() -> dict[str, type | None]:
    """Registers axon with Inductor and Dynamo; returns the codegen classes by the names the
    PrivateUse1 hook (``init_backend_registration``) asks for, except the C++ wrapper's, which
    answers None. The hook asks for the names, which registers Axon here, and then registers
    what they answered again, without a custom pass: ``GeneratorKey`` would be dropped and
    Inductor's FX graph cache would serve wrappers from an older generator (stale kernels,
    found when a faster ``exp`` did not show). A None answer makes the hook give up (it
    catches the RuntimeError ``_get_custom_mod_func`` raises), so this registration stands,
    C++ wrapper refusal included."""
    import torch
    from torch._dynamo.device_interface import register_interface_for_device
    from torch._inductor.codegen.common import register_backend_for_device, register_device_op_overrides
    from torch._inductor.codegen.wrapper_fxir import WrapperFxCodegen

    from . import arg_reductions, mixed_devices, pool_backward, sympy_fixes, view_meta_cache
    from .device_interface import AxonInterface
    from .kernel import OpenCLScheduling
    from .wrapper import AxonCppWrapperNotSupported, AxonDeviceOpOverrides, AxonWrapperCodegen, GeneratorKey

    register_backend_for_device(
        "axon", OpenCLScheduling, AxonWrapperCodegen, AxonCppWrapperNotSupported, device_custom_pass=GeneratorKey()
    )
    register_device_op_overrides("axon", AxonDeviceOpOverrides())
    sympy_fixes.apply()
    mixed_devices.apply()
    arg_reductions.apply()
    pool_backward.apply()
    view_meta_cache.apply()
    register_interface_for_device("axon", AxonInterface)
    for index in range(torch.axon.device_count()):
        register_interface_for_device(f"axon:{index}", AxonInterface)
    # User elementwise kernels defined before Inductor loaded fuse from now on.
    from .user_kernels import install_pending

    install_pending()
    return {
        "Scheduling": OpenCLScheduling,
        "PythonWrapperCodegen": AxonWrapperCodegen,
        "CppWrapperCodegen": None,  # registered above; see the docstring
        "WrapperFxCodegen": WrapperFxCodegen,
    }
