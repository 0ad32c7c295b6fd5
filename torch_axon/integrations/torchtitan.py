"""torchtitan on axon.

torchtitan (0.3.0) finds axon by itself: ``torchtitan.tools.utils.device_type`` comes from
``torch._utils._get_available_device_type()``, which names the PrivateUse1 backend once
``torch.axon.is_available()``; its memory monitor reads ``torch.axon.get_device_properties(...)
.total_memory`` and ``torch.axon.memory_stats``, and its process group is
``Backend.default_device_backend_map["axon"]``, the axon c10d backend. Two things stand in the
way of its language models and one of the pinned PyTorch, and this module answers all three:

- ``import torchtitan.models`` imports Triton unconditionally: the expert-parallel dispatcher's
  CUDA kernels (``torchtitan.distributed.minimal_async_ep.kernels``) are defined with
  ``@triton.jit`` at import time, and PyTorch's CPU wheels do not bring Triton. Where Triton is
  not installed, ``install()`` (run when Axon loads) puts a stand-in for that one module in
  place the moment torchtitan is imported; its functions raise, naming Triton, if a run ever
  reaches them (only MinimalAsyncEP, a CUDA-only expert-parallel path, does).
- torchtitan 0.3.0 calls ``torch.distributed.set_timeout`` after the first step (on every device);
  PyTorch 2.13.0 has it only as ``distributed_c10d._set_pg_timeout``. Where it is missing, the
  same hook adds it, calling that.
- Its language models attend through FlexAttention or ``varlen_attn`` only. PyTorch 2.13's
  ``flex_attention`` refuses tensors on any device but CUDA, CPU, XPU, HPU and MPS
  (``torch.nn.attention.flex_attention._validate_device``), and Inductor has no flex-attention
  template for other devices; ``varlen_attn`` calls ``aten._flash_attention_forward``
  (FlashAttention, CUDA, bfloat16/float16 only). ``DenseVarlenAttention`` computes what
  ``varlen_attn`` computes (causal attention within each packed document) with
  ``scaled_dot_product_attention`` and an explicit mask, in the input's dtype, on any device;
  ``use_dense_attention(model_spec)`` puts it into a model's layers.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from dataclasses import dataclass
from typing import Any

import torch

__all__ = ["install", "use_dense_attention"]

_EP_KERNELS = "torchtitan.distributed.minimal_async_ep.kernels"
_EP_KERNEL_NAMES = (
    "copy_full_counts_to_peers_kernel",
    "copy_rows_to_peers_kernel",
    "expand_topk_grad_kernel",
    "fill_combine_metadata_kernel",
    "fill_dispatch_metadata_kernel",
    "invert_flat_indices_kernel",
    "reduce_topk_slots_kernel",
    "topk_scores_grad_kernel",
)


def _ep_kernels_standin() -> types.ModuleType:
    module = types.ModuleType(_EP_KERNELS, "Stand-in (torch_axon): Triton is not installed.")

    def needs_triton(name: str):
        def kernel(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError(
                f"torchtitan's {name} is a Triton kernel (MinimalAsyncEP, CUDA expert parallelism) and Triton "
                "is not installed; torch_axon stood in for the module so that the rest of torchtitan imports"
            )

        kernel.__name__ = name
        return kernel

    for name in _EP_KERNEL_NAMES:
        setattr(module, name, needs_triton(name))
    module._axon_standin = True
    return module


def _set_timeout(timeout: Any, group: Any = None) -> None:
    """``torch.distributed.set_timeout`` of later PyTorch releases, through 2.13's private form
    (which sets Gloo's and NCCL's timeouts and warns, changing nothing, for other backends)."""
    from torch.distributed.distributed_c10d import _set_pg_timeout

    _set_pg_timeout(timeout, group)


def _on_import(module: types.ModuleType) -> None:
    if _EP_KERNELS not in sys.modules and importlib.util.find_spec("triton") is None:
        sys.modules[_EP_KERNELS] = _ep_kernels_standin()
    if torch.distributed.is_available() and not hasattr(torch.distributed, "set_timeout"):
        torch.distributed.set_timeout = _set_timeout


def install() -> None:
    """Called when Axon loads; imports nothing (acts when a script imports torchtitan)."""
    from . import _hooks

    _hooks.when_imported("torchtitan", _on_import)


def _dense_attention_class() -> type:
    from torchtitan.models.common.attention import VarlenAttention, VarlenMetadata

    class DenseVarlenAttention(VarlenAttention):
        """``VarlenAttention``'s result (causal within each document of the packed batch, as
        ``create_varlen_metadata_for_document`` delimits them) through
        ``scaled_dot_product_attention`` with a boolean mask over the packed tokens, in the
        inputs' dtype: runs on every device, at O(tokens^2) memory."""

        @dataclass(kw_only=True, slots=True)
        class Config(VarlenAttention.Config):
            pass

        def __init__(self, config: Config) -> None:
            torch.nn.Module.__init__(self)  # VarlenAttention's own __init__ selects a CUDA FlashAttention
            self.window_size = config.window_size

        def forward(
            self,
            q_BLNH: torch.Tensor,
            k_BLNH: torch.Tensor,
            v_BLNH: torch.Tensor,
            *,
            attention_masks: VarlenMetadata,
            scale: float | None = None,
            out_transform: Any = None,
            **kwargs: Any,
        ) -> torch.Tensor:
            if out_transform is not None:
                raise NotImplementedError("DenseVarlenAttention: out_transform (attention LSE) is not supported")
            left, right = self.window_size
            if (left, right) != (-1, 0):
                raise NotImplementedError(f"DenseVarlenAttention: window_size {self.window_size}; only causal")
            batch, length = q_BLNH.shape[:2]
            tokens = batch * length
            # Packed (N, T, H), as varlen_attn sees the batch.
            q = q_BLNH.reshape(tokens, -1, q_BLNH.shape[-1]).transpose(0, 1)
            k = k_BLNH.reshape(tokens, -1, k_BLNH.shape[-1]).transpose(0, 1)
            v = v_BLNH.reshape(tokens, -1, v_BLNH.shape[-1]).transpose(0, 1)
            position = torch.arange(tokens, device=q.device, dtype=attention_masks.cu_seq_q.dtype)
            document = torch.searchsorted(attention_masks.cu_seq_q, position, right=True)
            mask = (document[:, None] == document[None, :]) & (position[None, :] <= position[:, None])
            out = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, scale=scale, enable_gqa=bool(kwargs.get("enable_gqa", False))
            )
            return out.transpose(0, 1).reshape(batch, length, -1, v_BLNH.shape[-1])

    DenseVarlenAttention.__module__ = __name__
    return DenseVarlenAttention


_dense: type | None = None


def __getattr__(name: str) -> Any:
    global _dense
    if name == "DenseVarlenAttention":  # built on first use: it subclasses torchtitan's VarlenAttention
        if _dense is None:
            _dense = _dense_attention_class()
        return _dense
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def use_dense_attention(model_spec: Any) -> Any:
    """Gives every attention layer of a torchtitan language-model spec (``model_registry(...)``,
    ``config.model_spec``) the ``DenseVarlenAttention`` inner attention; returns the spec."""
    dense = __getattr__("DenseVarlenAttention").Config()
    layers = getattr(model_spec.model, "layers", None)
    if not layers:
        raise ValueError(f"{type(model_spec.model).__name__} has no list of layers to give dense attention")
    for layer in layers:
        attention = getattr(layer, "attention", None)
        if attention is None or not hasattr(attention, "inner_attention"):
            raise ValueError(f"{type(layer).__name__} has no attention.inner_attention")
        attention.inner_attention = dense
    return model_spec
