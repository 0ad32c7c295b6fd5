"""User elementwise kernels inside compiled kernels: a custom op whose body is an OpenCL C
function lowers, on axon, to a pointwise IR node that calls that function, so Inductor fuses it
with the pointwise ops around it (one kernel for ``relu(my_op(x) * 2)``) rather than calling the
op as an opaque node between kernels.

The lowering goes in Inductor's ``user_lowerings`` (torch/_inductor/graph.py, call_function),
consulted before its own lowerings: it answers None for anything but axon tensors and Inductor
then lowers the op as it would without us (an eager call). The call itself is
``ops.inline_asm_elementwise`` with the function's name as ``asm``: the one op every ops
handler already knows with a free-form payload (dtype propagation answers its ``dtype``, value
ranges call it unknown, CSE keeps it as an expression), which ``OpenCLOverrides`` writes as a
call of the function, its definition added once to the kernel's source.

Nothing here imports Inductor's lowerings until a compile needs them (importing them takes
seconds): ``register_fusible`` keeps the op until ``install_pending`` runs, which registering
Axon with Inductor (``torch_axon.inductor.register``) does, or installs it at once where
Inductor is loaded already.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable

import torch

# (function name, OpenCL C source) of a user kernel's function for a C type ("float", "int"...).
CFunction = Callable[[str], tuple[str, str]]

# (function name, source) of its float8 form on a device, or None where the body does not
# compile on vectors (an `if` on an input).
VectorFunction = Callable[[int], tuple[str, str] | None]

_pending: dict[torch._ops.OpOverload, tuple[CFunction, VectorFunction | None]] = {}
_registered: dict[torch._ops.OpOverload, tuple[CFunction, VectorFunction | None]] = {}
# Every function a lowering has called, by name: OpenCLOverrides takes definitions from here.
_functions: dict[str, str] = {}
# Float functions with a float8 form: scalar name -> vector name (vectorize.py swaps them).
_vector_names: dict[str, str] = {}


def register_fusible(
    op: torch._ops.OpOverload, c_function: CFunction, vector_function: VectorFunction | None = None
) -> None:
    """Lowers `op` (its arguments all tensors, one tensor out) on axon to a call of the function
    `c_function(ctype)` gives, computed in the output dtype's compute type (float for float16 and
    bfloat16, whose values Inductor keeps in float); the output's dtype and shape are those of
    the op's fake implementation. The function's name must differ for each ctype (one kernel
    may call it for two types) and from every other kernel's.

    The op should carry ``torch.Tag.flexible_layout``: without it Inductor fixes the strides of
    its inputs before any lowering, which stores a computed input in a buffer of its own (an
    extra kernel where that input is broadcast).

    `vector_function(device)` gives the float function's float8 form where it has one: a flat
    float32 kernel calling it then runs on eight lanes (vectorize.py), as kernels of built-in
    ops do; its definition travels with the scalar one."""
    _pending[op] = (c_function, vector_function)
    if "torch._inductor.lowering" in sys.modules:
        install_pending()


def install_pending() -> None:
    from torch._inductor.lowering import user_lowerings

    for op, (c_function, vector_function) in list(_pending.items()):
        user_lowerings[op] = _lowering(op, c_function, vector_function)
        _registered[op] = _pending.pop(op)


def function_source(name: str) -> str:
    """The definition of a user kernel's function that a lowering has called."""
    if name not in _functions:
        raise NotImplementedError(f"axon: compiled kernels run OpenCL C functions of user kernels, not {name!r}")
    return _functions[name]


def digest() -> str:
    """A digest of every registered kernel's function, for the FX graph cache's key: a graph
    names the op only, and the same name may carry another body in another program."""
    h = hashlib.sha256()
    for op, (c_function, _) in sorted({**_registered, **_pending}.items(), key=lambda item: str(item[0])):
        h.update(str(op).encode())
        h.update(c_function("float")[1].encode())
    return h.hexdigest()


def vector_names() -> set[str]:
    """The names of user functions' float8 forms."""
    return set(_vector_names.values())


def vector_name(name: str) -> str | None:
    """The float8 form's name of a user function, if it has one."""
    return _vector_names.get(name)


def _lowering(op: torch._ops.OpOverload, c_function: CFunction, vector_function: VectorFunction | None):
    def lower(*args, **kwargs):
        from torch._inductor import ir
        from torch._inductor.lowering import broadcast_tensors, make_pointwise, maybe_copy_cpu_scalar
        from torch._inductor.virtualized import V, ops

        from .overrides import compute_type

        node = V.graph.current_node
        out = node.meta.get("val")
        if kwargs or not args or not all(isinstance(a, ir.TensorBox) for a in args):
            return None  # numbers or keywords: the op as Inductor lowers it without us
        if node.target is not op or not isinstance(out, torch.Tensor) or out.device.type != "axon":
            return None
        # 0-dim CPU tensors (numbers the op was given) load on axon as Inductor's own pointwise
        # lowerings load them (transform_args): a stored one copied over, a computed one inline.
        args = [maybe_copy_cpu_scalar(a, out.device) for a in args]
        if any(a.get_device() != out.device and len(a.get_size()) > 0 for a in args):
            return None
        compute = torch.float32 if out.dtype in (torch.float16, torch.bfloat16) else out.dtype
        name, source = c_function(compute_type(compute))
        vector = vector_function(out.device.index) if vector_function and compute == torch.float32 else None
        if vector:
            _vector_names[name] = vector[0]
            source = f"{source}\n{vector[1]}"
        if _functions.setdefault(name, source) != source:
            raise RuntimeError(f"axon: two user kernels define the OpenCL C function {name!r} differently")
        inputs = broadcast_tensors(*args)
        if len(inputs[0].get_size()) != out.dim():
            return None  # not a broadcast of its inputs: the op's own kernel decides its shape
        input_dtypes = tuple(a.get_dtype() for a in inputs)

        def call(*values):
            return ops.inline_asm_elementwise(*values, asm=name, dtype=compute, input_dtypes=input_dtypes)

        return make_pointwise(call, override_return_dtype=out.dtype)(*inputs)

    return lower
