"""Hugging Face accelerate and transformers on axon, with no change to the user's script.

accelerate 1.15 and transformers 5.24 choose among device types they know by name (CUDA, XPU,
MPS, NPU ...) and fall back to the CPU for any other; they never ask ``torch.accelerator``. So
on a machine whose accelerator is axon, ``Trainer`` and ``Accelerator()`` would train on the CPU,
refuse ``bf16=True``, and under torchrun leave every rank training alone. This module adapts
the few places where that choice is made, each the moment its module is imported (``_hooks``),
so that axon takes the path CUDA takes:

========================================  ==================================================
where (module: name)                      what changes
========================================  ==================================================
accelerate.state: PartialState            ``default_device`` is axon where it would be the CPU;
                                          under torchrun (``LOCAL_RANK`` set) the distributed
                                          type is MULTI_GPU (accelerate's CUDA-like path: DDP,
                                          FSDP) over the ``axon`` c10d backend, and each rank
                                          gets ``torch_axon.distributed.local_device()``
accelerate.accelerator: Accelerator       fp16 accepts axon (its device list); DDP gets no
                                          ``device_ids`` when ranks share one axon device
accelerate.utils.modeling                 ``get_grad_scaler`` gives ``GradScaler("axon")``
transformers.utils.import_utils           ``is_torch_bf16_gpu_available`` is true (axon has
                                          bfloat16 on every device: a storage type, computed
                                          in float)
transformers.training_args                ``TrainingArguments.device`` is accelerate's axon
                                          device where it would be the CPU
========================================  ==================================================

The rule for "axon is the accelerator" is ``torch.accelerator``'s, so a script behaves the same
on every machine. Whatever the user chose still wins, because every change applies only where
the library would otherwise pick the CPU by default: ``ACCELERATE_TORCH_DEVICE``,
``use_cpu=True`` / ``ACCELERATE_USE_CPU``, ``Accelerator(cpu=True)``, a ``ddp_backend`` that is
not axon's. ``AXON_HUGGINGFACE=0`` in the environment turns all of this off.

Each change is a separate hook: one that no longer fits a newer library is skipped with a
warning (``_hooks``), never an error, and the library keeps its own behaviour.
"""

from __future__ import annotations

import contextlib
import functools
import os

import torch

from ._hooks import when_imported

OPT_OUT = "AXON_HUGGINGFACE"

# The c10d backend accelerate is told to use under torchrun; it serves CPU tensors as well
# (object collectives), as "cuda:nccl,cpu:gloo" does for CUDA.
BACKEND = "axon"


def axon_is_accelerator() -> bool:
    """True when ``torch.accelerator`` names axon and axon has a device."""
    try:
        accelerator = torch.accelerator.current_accelerator()
    except RuntimeError:
        return False
    return accelerator is not None and accelerator.type == "axon" and torch.axon.is_available()


def _is_axon_backend(backend) -> bool:
    return backend is not None and BACKEND in str(backend)


def _env_device_allows_axon() -> bool:
    """No ``ACCELERATE_TORCH_DEVICE``, or one that names axon."""
    chosen = os.environ.get("ACCELERATE_TORCH_DEVICE")
    return chosen is None or torch.device(chosen).type == "axon"


def _marked(function, original):
    function._axon_original = original
    return function


def _is_marked(function) -> bool:
    return hasattr(function, "_axon_original")


@contextlib.contextmanager
def _environ(name: str, value: str):
    previous = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous


# accelerate.state ------------------------------------------------------------------------------


def _default_device(state_module) -> None:
    """PartialState.default_device: axon where accelerate's list of device types ends at the CPU
    (``cpu=True`` and ``ACCELERATE_TORCH_DEVICE`` are decided before this is read)."""
    cls = state_module.PartialState
    prop = cls.__dict__["default_device"]
    if _is_marked(prop.fget):
        return
    original = prop.fget

    def default_device(self):
        device = original(self)
        if device.type == "cpu" and axon_is_accelerator():
            return torch.device("axon")  # index-less, as accelerate's "cuda"
        return device

    cls.default_device = property(_marked(default_device, original), doc=prop.__doc__)


def _distributed(state_module) -> None:
    """Under torchrun, accelerate knows a distributed accelerator only by its name (nccl for
    CUDA, xccl for XPU ...) and otherwise stays at DistributedType.NO: every rank trains alone.
    For axon take the CUDA path, MULTI_GPU (DDP, FSDP), over the ``axon`` c10d backend, and give
    each rank its own axon device as accelerate gives each rank ``cuda:LOCAL_RANK``."""
    cls = state_module.PartialState
    kinds = state_module.DistributedType
    prepare, set_device = cls._prepare_backend, cls.set_device
    if _is_marked(prepare):
        return

    def _prepare_backend(self, cpu=False, sagemaker_dp=False, backend=None):
        chosen, kind = prepare(self, cpu, sagemaker_dp, backend)
        if (
            kind == kinds.NO
            and not cpu
            and int(os.environ.get("LOCAL_RANK", -1)) != -1
            and (backend is None or _is_axon_backend(backend))
            and _env_device_allows_axon()
            and axon_is_accelerator()
        ):
            return backend or BACKEND, kinds.MULTI_GPU
        return chosen, kind

    def _set_device(self):
        if self.device is None and self.distributed_type != kinds.NO and _is_axon_backend(self.backend):
            from ..distributed import local_device

            self.device = local_device()
            torch.axon.set_device(self.device)
            return
        set_device(self)

    cls._prepare_backend = _marked(_prepare_backend, prepare)
    cls.set_device = _marked(_set_device, set_device)


# accelerate.accelerator and accelerate.utils.modeling ------------------------------------------


def _accelerate_device_type() -> str | None:
    from accelerate.state import PartialState

    device = PartialState._shared_state.get("device")
    return None if device is None else device.type


def _grad_scaler(module) -> None:
    """get_grad_scaler returns ``torch.amp.GradScaler("cuda")`` for any device it does not name,
    which on a machine without CUDA is a disabled scaler: fp16 would train unscaled."""
    original = module.get_grad_scaler
    if _is_marked(original):
        return

    @functools.wraps(original)
    def get_grad_scaler(distributed_type=None, **kwargs):
        if distributed_type != "FSDP" and _accelerate_device_type() == "axon":
            return torch.amp.GradScaler("axon", **kwargs)
        return original(distributed_type, **kwargs)

    module.get_grad_scaler = _marked(get_grad_scaler, original)


def _fp16_devices(accelerator_module) -> None:
    """Accelerator.__init__ refuses fp16 on a device type outside a literal tuple
    (``supported_device = ("xpu", "cuda", ...)``), a local name nothing else can reach: add
    "axon" to that constant of the function's code. Exactly one such tuple must be found."""
    init = accelerator_module.Accelerator.__init__
    code = init.__code__
    consts = list(code.co_consts)
    found = [
        i
        for i, c in enumerate(consts)
        if isinstance(c, tuple) and all(isinstance(x, str) for x in c) and {"cuda", "xpu", "mps"} <= set(c)
    ]
    if len(found) != 1:
        raise RuntimeError(f"fp16's list of device types not found in Accelerator.__init__ ({len(found)} candidates)")
    if "axon" in consts[found[0]]:
        return
    consts[found[0]] = consts[found[0]] + ("axon",)
    init.__code__ = code.replace(co_consts=tuple(consts))


def _ddp_device_ids(accelerator_module) -> None:
    """prepare_model wraps DDP with ``device_ids=[local_process_index]``, right when rank r uses
    ``cuda:r``. Ranks that share one axon device (PoCL without POCL_DEVICES, one GPU) must not
    name a device that does not exist: there DDP gets no ``device_ids``, as DDP allows for a
    single-device module, and accelerate still moves each batch to the device itself."""
    cls = accelerator_module.Accelerator
    original = cls.prepare_model
    if _is_marked(original):
        return

    @functools.wraps(original)
    def prepare_model(self, *args, **kwargs):
        device = self.device
        if device.type == "axon" and self.multi_device:
            index = torch.axon.current_device() if device.index is None else device.index
            if index != self.local_process_index:
                with _environ("ACCELERATE_BYPASS_DEVICE_MAP", "true"):
                    return original(self, *args, **kwargs)
        return original(self, *args, **kwargs)

    cls.prepare_model = _marked(prepare_model, original)


# transformers ----------------------------------------------------------------------------------


def _bf16(import_utils) -> None:
    """TrainingArguments(bf16=True) asks is_torch_bf16_gpu_available(), which knows only named
    devices. Axon has bfloat16 on every device (stored in 16 bits, computed in float)."""
    original = import_utils.is_torch_bf16_gpu_available
    if _is_marked(original):
        return

    @functools.wraps(original)
    def is_torch_bf16_gpu_available() -> bool:
        return original() or axon_is_accelerator()

    import_utils.is_torch_bf16_gpu_available = _marked(is_torch_bf16_gpu_available, original)


def _training_args_device(training_args) -> None:
    """TrainingArguments._setup_devices takes accelerate's device only when distributed; alone it
    picks CUDA, XPU, MPS ... or the CPU by name. Where it picks the CPU by default and accelerate
    chose axon, take accelerate's choice, as it takes cuda:0 for CUDA."""
    cls = training_args.TrainingArguments
    prop = cls.__dict__["_setup_devices"]
    original = prop.func
    if _is_marked(original):
        return

    @functools.wraps(original)
    def _setup_devices(self):
        device = original(self)
        state = getattr(self, "distributed_state", None)
        chosen = getattr(state, "device", None)
        if device.type == "cpu" and not self.use_cpu and chosen is not None and chosen.type == "axon":
            device = torch.device("axon", torch.axon.current_device() if chosen.index is None else chosen.index)
            torch.axon.set_device(device)
            self._n_gpu = 1  # one device per process, no DataParallel (as for MPS and XPU)
        return device

    replacement = type(prop)(_marked(_setup_devices, original))
    replacement.__set_name__(cls, "_setup_devices")
    cls._setup_devices = replacement


_HOOKS = [
    ("accelerate.state", _default_device),
    ("accelerate.state", _distributed),
    ("accelerate.utils.modeling", _grad_scaler),
    ("accelerate.accelerator", _grad_scaler),
    ("accelerate.accelerator", _fp16_devices),
    ("accelerate.accelerator", _ddp_device_ids),
    ("transformers.utils.import_utils", _bf16),
    ("transformers.training_args", _bf16),  # its own binding, if it was imported before Axon
    ("transformers.training_args", _training_args_device),
]


def install() -> None:
    """Registers the hooks (once; safe to call again) unless ``AXON_HUGGINGFACE=0``."""
    if os.environ.get(OPT_OUT, "1") == "0" or getattr(install, "_done", False):
        return
    install._done = True
    for module, hook in _HOOKS:
        when_imported(module, hook)
