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
    )

    if torch._C._get_privateuse1_backend_name() != "axon":
        torch.utils.rename_privateuse1_backend("axon")
    if not hasattr(torch, "axon"):
        torch._register_device_module("axon", device)
        torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)


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
