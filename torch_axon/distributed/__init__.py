"""torch.distributed on axon: the ``axon`` c10d backend.

The backend itself is native (``csrc/distributed/backend.cpp``): it runs every collective over a
Gloo process group of its own, with host buffers standing in for axon tensors, ordered with the
caller's stream as NCCL's collectives are. This module registers it with ``torch.distributed``
when Axon loads (``torch.distributed`` is already imported by then, so this costs nothing):

- ``init_process_group("axon")`` sends axon and CPU tensors to it (CPU tensors go to its Gloo
  group as they are);
- ``init_process_group()`` with no backend, on a machine whose accelerator is axon, gives
  ``cpu:gloo,axon:axon``: PyTorch would otherwise make a backend for the accelerator alone, and
  CPU tensors (object collectives, DCP's planning) would have none;
- ``"cpu:gloo,axon:axon"`` spelled out works as written.

See docs/distributed.md.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

NAME = "axon"


def _create_backend(store, rank: int, size: int, timeout):
    from .. import _C

    gloo = dist.ProcessGroupGloo(store, rank, size, timeout)
    return _C.DistributedBackend(gloo, rank, size)


def _gloo_devices() -> list:
    """Gloo's transport devices as its Python constructor picks them: one per interface named in
    GLOO_SOCKET_IFNAME, else the one the host name resolves to."""
    import os

    names = [n for n in os.environ.get("GLOO_SOCKET_IFNAME", "").split(",") if n]
    if names:
        return [dist.ProcessGroupGloo.create_device(interface=n) for n in names]
    return [dist.ProcessGroupGloo.create_default_device()]


class _SplitOptions(dist.ProcessGroupGloo._Options):
    """Options of a group split off an axon group (DeviceMesh's dimensions). split_group deep-copies
    its parent's options, and Gloo's own cannot be copied in torch 2.13 (nor, so, split by
    split_group): a copy here is new Gloo options with the same timeout."""

    def __deepcopy__(self, memo):
        return _split_options(self._timeout)


def _split_options(timeout) -> _SplitOptions:
    options = _SplitOptions()
    options._timeout = timeout
    options._devices = _gloo_devices()
    return options


def _options(backend) -> _SplitOptions:
    import datetime

    return _split_options(datetime.timedelta(milliseconds=backend._timeout_ms))


def _default_config_has_cpu() -> None:
    """With no backend named, PyTorch's BackendConfig maps only the accelerator's device type;
    add Gloo for the CPU next to axon, as CUDA users get with "cpu:gloo,cuda:nccl"."""
    config = dist.distributed_c10d.BackendConfig
    original = config.__init__
    if getattr(original, "_axon", False):
        return

    def __init__(self, backend):
        original(self, backend)
        undefined = str(backend) == dist.Backend.UNDEFINED
        if undefined and NAME in self.device_backend_map and "cpu" not in self.device_backend_map:
            self.device_backend_map = {"cpu": dist.Backend(dist.Backend.GLOO), **self.device_backend_map}

    __init__._axon = True
    config.__init__ = __init__


def register() -> None:
    """Registers the backend once; safe to call again."""
    if not dist.is_available() or not dist.is_gloo_available():
        return
    from .. import _C

    _C.DistributedBackend.options = property(_options)
    if NAME.upper() not in dist.Backend._plugins:
        # "cpu" too: init_process_group("axon") then serves CPU tensors as well.
        dist.Backend.register_backend(NAME, _create_backend, devices=["cpu", NAME])
    _default_config_has_cpu()


def local_device() -> torch.device:
    """The axon device of this process under torchrun: ``axon:LOCAL_RANK`` when the machine shows
    that many devices (PoCL with ``POCL_DEVICES``, several GPUs), else ``axon:0``, shared.
    Make it the current device too (``torch.axon.set_device``), as with CUDA: FSDP2 and others
    allocate on the current device."""
    import os

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    count = torch.axon.device_count()
    return torch.device(NAME, local_rank if local_rank < count else 0)
