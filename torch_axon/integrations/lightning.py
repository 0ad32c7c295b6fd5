"""Lightning on axon: ``Trainer(accelerator="axon")`` and ``Fabric(accelerator="axon")``.

Lightning 2.6 knows accelerators by name (an ``_AcceleratorRegistry`` filled from its own modules; no
entry point group for accelerators exists, only one for callbacks, read after the accelerator is
chosen), and three of its choices treat every accelerator it does not know as the CPU or as CUDA:

- the strategy for one device is ``SingleDeviceStrategy("cpu")`` unless the accelerator is CUDA or
  MPS, so the model would stay on the CPU;
- mixed precision autocasts on ``"cuda"`` unless the accelerator is the CPU or MPS;
- DDP builds its ``DistributedDataParallel`` inside ``torch.cuda.stream(torch.cuda.Stream())``
  whenever the device has an index, which raises without CUDA.

This module registers an ``AxonAccelerator`` under the name ``"axon"`` and corrects those three
choices for axon only (any other accelerator goes through Lightning's code unchanged).
``accelerator="auto"`` chooses axon where ``torch.accelerator`` names it, as it chooses CUDA where
CUDA is present; ``accelerator="cpu"`` opts out.

The same is done for each installed copy of Lightning: ``lightning.pytorch`` / ``lightning.fabric``
and the standalone ``pytorch_lightning`` / ``lightning_fabric``. Nothing needs importing by hand:
``install()``, called when Axon loads (``torch_axon.integrations.install``), registers each copy
right after Lightning's own package finishes importing. If Lightning's internals change,
registration warns and leaves Lightning as it is.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import warnings
from typing import Any

import torch

__all__ = ["accelerator_class", "install", "register"]

NAME = "axon"

# Each Lightning copy's trainer package and its fabric package.
_COPIES = {"lightning.pytorch": "lightning.fabric", "pytorch_lightning": "lightning_fabric"}
_FABRIC_PACKAGES = set(_COPIES.values())

_accelerators: dict[str, type] = {}  # package name -> its AxonAccelerator class
_registered: set[str] = set()


def _count() -> int:
    return torch.axon.device_count() if hasattr(torch, "axon") and torch.axon.is_available() else 0


def _parse_devices(devices: Any) -> list[int] | None:
    """Lightning's ``devices`` argument as device indices: ``N`` (the first N; more than the machine
    shows share ``axon:0``, as ``torch_axon.distributed.local_device()`` does, so ``devices=2`` runs
    two DDP ranks on one PoCL device), ``-1`` (all), ``"0,1"`` or ``[0, 1]`` (those indices, which must
    exist)."""
    if devices is None or devices in (0, "0", [], ()):
        return None
    if isinstance(devices, str):
        text = devices.strip()
        if text == "-1":
            devices = -1
        elif "," in text:
            devices = [int(part) for part in text.split(",") if part.strip()]
        else:
            devices = int(text)
    count = _count()
    if isinstance(devices, int):
        if devices == -1:
            devices = count
        if devices < 1:
            raise ValueError(f"devices={devices}: expected -1, a positive count or a list of axon indices")
        return list(range(devices))
    indices = [int(index) for index in devices]
    missing = [index for index in indices if not 0 <= index < count]
    if missing or len(set(indices)) != len(indices):
        raise ValueError(f"devices={devices!r}: this machine shows axon devices 0..{count - 1}, each usable once")
    return indices


def _parallel_devices(devices: list[int]) -> list[torch.device]:
    count = max(_count(), 1)
    return [torch.device(NAME, index if index < count else 0) for index in devices]


def _make_accelerator(base: type, registry_name: str) -> type:
    """An ``AxonAccelerator`` subclass of one Lightning copy's ``Accelerator`` base class."""

    class AxonAccelerator(base):
        """Accelerator for Axon's OpenCL devices (``torch.device("axon", i)``)."""

        def setup_device(self, device: torch.device) -> None:
            if device.type != NAME:
                raise ValueError(f"AxonAccelerator: the device should be an axon device, got {device}")
            torch.axon.set_device(device)  # FSDP, DDP and others allocate on the current device

        def setup(self, trainer: Any) -> None:  # lightning.pytorch's Accelerator asks for it
            pass

        def get_device_stats(self, device: Any) -> dict[str, Any]:
            return torch.axon.memory_stats(device)

        def teardown(self) -> None:
            torch.axon.empty_cache()  # as CUDAAccelerator does

        @staticmethod
        def parse_devices(devices: Any) -> list[int] | None:
            return _parse_devices(devices)

        @staticmethod
        def get_parallel_devices(devices: Any) -> list[torch.device]:
            return _parallel_devices(devices or [])

        @staticmethod
        def auto_device_count() -> int:
            return _count()

        @staticmethod
        def is_available() -> bool:
            return _count() > 0

        @staticmethod
        def name() -> str:
            return NAME

        @classmethod
        def register_accelerators(cls, accelerator_registry: Any) -> None:
            if NAME not in accelerator_registry:
                accelerator_registry.register(NAME, cls, description=cls.__name__)

    AxonAccelerator.__module__ = __name__
    AxonAccelerator.__qualname__ = "AxonAccelerator"
    AxonAccelerator._axon_registry = registry_name
    return AxonAccelerator


def _is_axon(connector: Any) -> bool:
    accelerator = getattr(connector, "accelerator", None)
    return getattr(type(accelerator), "_axon_registry", None) is not None


def _axon_is_the_accelerator() -> bool:
    """The rule ``torch.accelerator`` applies (and Axon's Hugging Face integration follows)."""
    try:
        current = torch.accelerator.current_accelerator()
    except RuntimeError:
        return False
    return current is not None and current.type == NAME and _count() > 0


# Strategies with a precision plugin of their own, which Lightning chooses before mixed precision.
_OWN_PRECISION = ("DeepSpeedStrategy", "FSDPStrategy", "XLAStrategy", "SingleDeviceXLAStrategy", "XLAFSDPStrategy")


def _patch_connector(connector_cls: type, single_device: type, mixed_precision: type) -> None:
    """Wraps three methods of a Lightning ``_AcceleratorConnector``; axon only, else unchanged."""
    if getattr(connector_cls, "_axon_patched", False):
        return

    choose_auto = connector_cls._choose_auto_accelerator

    def _choose_auto_accelerator(*args: Any) -> str:
        chosen = choose_auto(*args)
        # CUDA, MPS and TPU keep their place; where Lightning would fall back to the CPU and
        # torch.accelerator names axon, axon takes CUDA's role.
        return NAME if chosen == "cpu" and _axon_is_the_accelerator() else chosen

    choose_strategy = connector_cls._choose_strategy

    def _choose_strategy(self: Any) -> Any:
        if _is_axon(self) and self._num_nodes_flag == 1 and len(self._parallel_devices) <= 1:
            # Lightning's own code would pick SingleDeviceStrategy("cpu") for any accelerator but
            # CUDA and MPS.
            device = self._parallel_devices[0] if self._parallel_devices else torch.device(NAME, 0)
            return single_device(device=device)
        return choose_strategy(self)

    check_precision = connector_cls._check_and_init_precision

    def _check_and_init_precision(self: Any) -> Any:
        flag_name = "_precision_flag" if hasattr(self, "_precision_flag") else "_precision_input"
        flag = getattr(self, flag_name, None)
        explicit = getattr(self, "_precision_plugin_flag", None) or getattr(self, "_precision_instance", None)
        if (
            _is_axon(self)
            and flag in ("16-mixed", "bf16-mixed")
            and explicit is None
            and type(self.strategy).__name__ not in _OWN_PRECISION
        ):
            validate = getattr(self, "_validate_precision_choice", None)
            if validate is not None:
                validate()
            # Lightning autocasts on "cuda" for every accelerator but the CPU and MPS; 16-mixed also
            # makes its GradScaler for that device.
            return mixed_precision(flag, NAME)
        return check_precision(self)

    connector_cls._choose_auto_accelerator = staticmethod(_choose_auto_accelerator)
    connector_cls._choose_strategy = _choose_strategy
    connector_cls._check_and_init_precision = _check_and_init_precision
    connector_cls._axon_patched = True


def _patch_ddp(ddp_cls: type, method: str, device_ids: str) -> None:
    """DDP wraps the model inside ``torch.cuda.stream(torch.cuda.Stream())`` when the device has an
    index; on axon it is wrapped on the current stream, where the model's parameters were copied,
    so DDP's first broadcast of them is ordered after the copies."""
    original = getattr(ddp_cls, method)
    if getattr(original, "_axon", False):
        return

    def wrap(self: Any, module: torch.nn.Module) -> Any:
        if self.root_device.type != NAME:
            return original(self, module)
        ids = getattr(self, device_ids)()
        return torch.nn.parallel.DistributedDataParallel(module=module, device_ids=ids, **self._ddp_kwargs)

    wrap._axon = True
    wrap.__doc__ = original.__doc__
    setattr(ddp_cls, method, wrap)


@dataclasses.dataclass(frozen=True)
class _Layout:
    """Where one of Lightning's two packages keeps what Axon registers with or adapts."""

    connector: str  # module and class choosing the strategy and precision
    connector_class: str
    registry: str  # the accelerator registry's name in `accelerators`
    ddp_setup: str  # DDPStrategy's method that wraps the model, and the one giving device ids
    ddp_device_ids: str


_FABRIC = _Layout("connector", "_Connector", "ACCELERATOR_REGISTRY", "setup_module", "_determine_ddp_device_ids")
_TRAINER = _Layout(
    "trainer.connectors.accelerator_connector",
    "_AcceleratorConnector",
    "AcceleratorRegistry",
    "_setup_model",
    "determine_ddp_device_ids",
)


def _register_package(package: str, layout: _Layout) -> None:
    accelerators = importlib.import_module(f"{package}.accelerators")
    connector = importlib.import_module(f"{package}.{layout.connector}")
    precision = importlib.import_module(f"{package}.plugins.precision.amp")
    strategies = importlib.import_module(f"{package}.strategies")
    ddp = importlib.import_module(f"{package}.strategies.ddp")

    cls = _accelerators.get(package) or _make_accelerator(accelerators.Accelerator, package)
    _accelerators[package] = cls
    cls.register_accelerators(getattr(accelerators, layout.registry))
    connector_class = getattr(connector, layout.connector_class)
    _patch_connector(connector_class, strategies.SingleDeviceStrategy, precision.MixedPrecision)
    _patch_ddp(ddp.DDPStrategy, layout.ddp_setup, layout.ddp_device_ids)


def register(package: str) -> bool:
    """Registers axon with one Lightning package (``"lightning.pytorch"``, ``"lightning.fabric"``,
    ``"pytorch_lightning"`` or ``"lightning_fabric"``), importing it. Warns and returns False where
    Lightning's internals are not what this module knows (tested with Lightning 2.6.6)."""
    if package in _registered:
        return True
    try:
        _register_package(package, _FABRIC if package in _FABRIC_PACKAGES else _TRAINER)
    except Exception as error:  # a Lightning whose internals moved: Lightning as it is, said once
        warnings.warn(
            f"Axon could not register accelerator 'axon' with {package} ({type(error).__name__}: {error}); "
            f"Trainer(accelerator='axon') will not be available",
            RuntimeWarning,
            stacklevel=2,
        )
        return False
    _registered.add(package)
    return True


def accelerator_class(package: str = "lightning.pytorch") -> type:
    """The ``AxonAccelerator`` class of one Lightning package (registering it first)."""
    register(package)
    return _accelerators[package]


def install() -> None:
    """Registers axon with every Lightning package as soon as it is imported (now, for those
    already imported). Imports nothing: costs nothing where Lightning is not used."""
    from . import _hooks

    for package in (*_FABRIC_PACKAGES, *_COPIES):
        _hooks.when_imported(package, lambda module: register(module.__name__))


def __getattr__(name: str) -> Any:
    # ``from torch_axon.integrations.lightning import AxonAccelerator``: lightning.pytorch's class.
    if name == "AxonAccelerator":
        if importlib.util.find_spec("lightning") is None:
            raise ImportError("AxonAccelerator needs Lightning: pip install lightning")
        return accelerator_class("lightning.pytorch")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
