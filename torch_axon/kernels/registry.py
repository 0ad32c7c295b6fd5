"""The torch ops ElementwiseKernel and ReductionKernel register, ``axon_kernels::<name>``: so a
kernel shows in graphs as one node, takes ``register_autograd`` and the like, and
``torch.compile`` traces through it without a graph break."""

from __future__ import annotations

from collections.abc import Callable

import torch

_LIB = torch.library.Library("axon_kernels", "FRAGMENT")
_DIGESTS: dict[str, str] = {}  # op name -> digest of the kernel it runs


def register(name: str, digest: str, schema: str, run: Callable, fake: Callable) -> torch._ops.OpOverload:
    """The op `name` for a kernel of `digest` (a second kernel of the same name but other text
    gets ``name_<digest>``; the same kernel defined again, in a notebook say, reuses its op).
    `schema` is the argument list and result, "(Tensor x) -> Tensor"."""
    op_name = name if _DIGESTS.get(name, digest) == digest else f"{name}_{digest}"
    if op_name not in _DIGESTS:
        # flexible_layout: Inductor may hand the op inputs of any strides (the kernels take
        # them), so it need not store a computed input in a buffer of its own first.
        _LIB.define(op_name + schema, tags=(torch.Tag.flexible_layout,))
        _DIGESTS[op_name] = digest
        _LIB.impl(op_name, run, "PrivateUse1")
        torch.library.register_fake(f"axon_kernels::{op_name}", fake, lib=_LIB)
    return getattr(torch.ops.axon_kernels, op_name).default
