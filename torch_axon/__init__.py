"""Axon: any OpenCL device as a PyTorch device named ``axon``.

Importing this package (which ``import torch`` does by itself, through the ``torch.backends``
entry point) renames PyTorch's PrivateUse1 backend to ``axon``, registers ``torch.axon`` and
generates the ``Tensor.axon()`` / ``Module.axon()`` style methods.
"""

import torch

from . import _C  # noqa: F401  (loads the native kernels and registrations)
from . import device as _device_module

__all__ = ["fallback_ops"]

if torch._C._get_privateuse1_backend_name() != "axon":
    torch.utils.rename_privateuse1_backend("axon")
if not hasattr(torch, "axon"):
    torch._register_device_module("axon", _device_module)
    torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)

fallback_ops = _device_module.fallback_ops


def _autoload():
    """Entry point of the ``torch.backends`` group: importing the package did the work."""
