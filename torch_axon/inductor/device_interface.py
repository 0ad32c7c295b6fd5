"""Dynamo's and Inductor's view of the axon device (``torch._dynamo.device_interface``)."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import torch
from torch._dynamo.device_interface import DeviceInterface

AxonProperties = namedtuple(
    "AxonProperties", ["name", "multi_processor_count", "total_memory", "max_threads_per_block"]
)


def _properties(device: Any = None) -> AxonProperties:
    info = torch.axon.get_device_properties(device)
    return AxonProperties(info.name, info.multi_processor_count, info.total_memory, info.max_work_group_size)


class AxonInterface(DeviceInterface):
    device = torch.axon.device
    Event = torch.Event
    Stream = torch.Stream

    class Worker:
        @staticmethod
        def set_device(device: int) -> None:
            torch.axon.set_device(device)

        @staticmethod
        def current_device() -> int:
            return torch.axon.current_device()

        @staticmethod
        def get_device_properties(device: Any = None) -> AxonProperties:
            return _properties(device)

    @staticmethod
    def current_device() -> int:
        return torch.axon.current_device()

    @staticmethod
    def set_device(device: int) -> None:
        torch.axon.set_device(device)

    @staticmethod
    def device_count() -> int:
        return torch.axon.device_count()

    @staticmethod
    def is_available() -> bool:
        return torch.axon.is_available()

    @staticmethod
    def current_stream():
        return torch.axon.current_stream()

    @staticmethod
    def set_stream(stream) -> None:
        torch.accelerator.set_stream(stream)

    @staticmethod
    def stream(stream):
        return torch.axon.stream(stream)

    @staticmethod
    def synchronize(device: Any = None) -> None:
        torch.axon.synchronize(device)

    @staticmethod
    def get_raw_stream(device_index: int) -> int:
        return 0

    @staticmethod
    def get_compute_capability(device: Any = None) -> str:
        return ""

    @staticmethod
    def is_bf16_supported(including_emulation: bool = False) -> bool:
        return True

    @classmethod
    def is_dtype_supported(cls, dtype: torch.dtype, including_emulation: bool = False) -> bool:
        if dtype in (torch.float64, torch.complex128):
            return torch.axon.get_device_properties().has_fp64
        return True

    @staticmethod
    def memory_allocated(device: Any = None) -> int:
        return torch.axon.memory_allocated(device)
