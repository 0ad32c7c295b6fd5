"""Axon: any OpenCL device as a PyTorch device named ``axon``.

Importing this package (which ``import torch`` does by itself, through the ``torch.backends``
entry point) renames PyTorch's PrivateUse1 backend to ``axon``, registers ``torch.axon`` and
generates the ``Tensor.axon()`` / ``Module.axon()`` style methods.
"""

__all__ = ["fallback_ops"]


def _register() -> None:
    """Registers the backend once; safe to call again."""
    import torch

    from . import (
        _C,  # noqa: F401  (loads the native kernels and registrations)
        device,
        distributed,
        integrations,
        printing,
    )

    if torch._C._get_privateuse1_backend_name() != "axon":
        torch.utils.rename_privateuse1_backend("axon")
    if not hasattr(torch, "axon"):
        torch._register_device_module("axon", device)
        torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)
    _conv_layout_as_eager()
    printing.install()  # print() of tensors on a device without float64
    distributed.register()
    integrations.install()  # import hooks only: accelerate/transformers are adapted when imported


def _conv_layout_as_eager() -> None:
    """Tensor-shape propagation (fake tensors: torch.compile, export) asks
    ``torch._C._conv_determine_backend_memory_format`` which layout a convolution's result has.
    For PrivateUse1 devices (the "Overrideable" backend) PyTorch answers contiguous, but Axon's
    convolutions give channels_last results for channels_last operands, as the CPU and CUDA do:
    without this, compiled graphs would plan (and check) the wrong strides."""
    import torch

    original = torch._C._conv_determine_backend_memory_format
    if getattr(original, "_axon", False):
        return

    def determine(input, weight, backend):
        device = getattr(input, "fake_device", None) or input.device
        if device.type != "axon" or input.dim() not in (4, 5):
            return original(input, weight, backend)
        from torch._prims_common import suggest_memory_format

        cl = torch.channels_last if input.dim() == 4 else torch.channels_last_3d
        wanted = suggest_memory_format(input) == cl or suggest_memory_format(weight) == cl  # csrc/ops/conv.cpp
        return cl if wanted else torch.contiguous_format

    determine._axon = True
    torch._C._conv_determine_backend_memory_format = determine


def _autoload() -> None:
    """Entry point of the ``torch.backends`` group, called at the end of ``import torch``.

    Defined before anything imports torch: ``import torch_axon`` imports torch, whose autoload
    finds this (partially initialised) module and calls it.
    """
    _register()


_register()


def fallback_ops(reset: bool = False) -> dict[str, int]:
    """Same as ``torch.axon.fallback_ops``."""
    from .device import fallback_ops as counts

    return counts(reset)
