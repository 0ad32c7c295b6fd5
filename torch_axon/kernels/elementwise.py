"""``ElementwiseKernel``: a user's body for one element, run by Axon's elementwise machinery.

    fma = ElementwiseKernel("T x, T y", "T z", "z = x * y + 1.0f;", "fma_plus_one")
    z = fma(x, y)            # x, y broadcast; numbers allowed as inputs

The body becomes an inline function in a kernel file registered with the runtime
(``axon_register_kernel_file``) after ``ew_common.cl``, whose macros make the same kernels the
built-in pointwise ops have: the contiguous, strided and rows forms, and the float8 vector form
on CPU devices where the body also compiles on vectors. The runtime's launcher
(``axon_elementwise_kernel``) picks among them as it does for ``torch.add``, so a user kernel
runs as fast as a built-in op of the same arithmetic. Each kernel is also a torch op,
``axon_kernels::<name>`` (``kernel.op``), so it shows in graphs, takes ``register_autograd``, and
fuses with neighbouring pointwise ops under ``torch.compile`` (torch_axon/inductor/).

What the machinery takes: one to three inputs and one output, all of one type (a placeholder
such as T, bound to the inputs' promoted dtype, or one concrete type); kernels of mixed types
or several outputs are written with ``compile_shader``.
"""

from __future__ import annotations

import hashlib
import re

import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode

from .. import _C
from . import registry
from . import types as cl

# dtype of each concrete type a parameter may name.
_CONCRETE = {
    "float": torch.float32,
    "double": torch.float64,
    "half": torch.float16,
    "long": torch.int64,
    "int": torch.int32,
    "short": torch.int16,
    "char": torch.int8,
    "uchar": torch.uint8,
}
_IDENT = re.compile(r"^[A-Za-z_]\w{0,39}$")


def _params(text: str, what: str) -> list[tuple[str, str]]:
    out = []
    for part in text.split(","):
        words = part.split()
        if len(words) != 2 or not all(_IDENT.match(w) for w in words):
            raise ValueError(f"ElementwiseKernel {what}: expected 'TYPE NAME' pairs, got {part.strip()!r}")
        out.append((words[0], words[1]))
    return out


class ElementwiseKernel:
    def __init__(self, inputs: str, output: str, body: str, name: str, *, preamble: str = "") -> None:
        if not _IDENT.match(name):
            raise ValueError(f"ElementwiseKernel name {name!r}: an identifier of at most 40 characters")
        self.name, self.body, self.preamble = name, body, preamble
        self.inputs = _params(inputs, "inputs")
        outputs = _params(output, "output")
        if not 1 <= len(self.inputs) <= 3 or len(outputs) != 1:
            raise ValueError(
                "ElementwiseKernel takes 1 to 3 inputs and one output (the elementwise machinery's "
                "operands); write kernels with more with torch.axon.compile_shader"
            )
        self.output = outputs[0]
        types = {t for t, _ in [*self.inputs, self.output]}
        if len(types) != 1:
            raise ValueError(
                f"ElementwiseKernel {name}: every parameter needs the same type (got {sorted(types)}); "
                "kernels of mixed types are written with torch.axon.compile_shader"
            )
        self.type = types.pop()
        self.fixed_dtype = _CONCRETE.get(self.type)
        if self.fixed_dtype is None and self.type in cl.SCALARS:
            raise ValueError(f"ElementwiseKernel {name}: type {self.type} is not one the machinery computes in")
        self.digest = hashlib.sha1("\0".join([inputs, output, body, name, preamble]).encode()).hexdigest()[:12]
        self._families: dict[str, str] = {}  # "vector" / "scalar" -> registered family
        self._vector: dict[int, bool] = {}
        self.op = self._register_op()
        from ..inductor.user_kernels import register_fusible

        register_fusible(self.op, self._compiled_function, self._compiled_vector_function)

    def _compiled_function(self, ctype: str) -> tuple[str, str]:
        """The body for torch.compile's kernels: named per op and type (a kernel may call it for
        two types), the preamble guarded so kernels sharing one define it once."""
        name, text = self.c_function(ctype, f"axon_user_{self.op._opname}_{ctype}")
        if self.preamble:
            guard = f"AXON_PREAMBLE_{hashlib.sha1(self.preamble.encode()).hexdigest()[:12]}"
            text = f"#ifndef {guard}\n#define {guard}\n{self.preamble}\n#endif\n{text}"
        return name, text

    def _compiled_vector_function(self, device: int) -> tuple[str, str] | None:
        """The float8 form for compiled kernels, where the body compiles on vectors."""
        self._family(device)  # probes the body on float8 once per device
        if not self._vector[device]:
            return None
        name, text = self.c_function("float8", f"axon_user_{self.op._opname}_float8")
        return name, text

    def __repr__(self) -> str:
        params = ", ".join(f"{t} {n}" for t, n in self.inputs)
        return f"<axon ElementwiseKernel {self.name}({params}) -> {self.output[0]} {self.output[1]}>"

    # ---- the body as OpenCL C ---------------------------------------------------------------
    def c_function(self, ctype: str, fn_name: str | None = None) -> tuple[str, str]:
        """(name, source) of ``inline CTYPE name(CTYPE x, ...) { CTYPE z = 0; BODY return z; }``:
        the body as a function of the inputs, for generated code (torch.compile's kernels)."""
        fn_name = fn_name or f"axon_user_{self.name}"
        params = ", ".join(f"{ctype} {n}" for _, n in self.inputs)
        out = self.output[1]
        placeholder = self.fixed_dtype is None
        head = f"#define {self.type} {ctype}\n" if placeholder else ""
        tail = f"\n#undef {self.type}" if placeholder else ""
        text = (
            f"{head}inline {ctype} {fn_name}({params}) {{\n  {ctype} {out} = ({ctype})0;\n"
            f"{self.body}\n  return {out};\n}}{tail}"
        )
        return fn_name, text

    def _file_text(self, vector: bool) -> str:
        n = len(self.inputs)
        letters = "abc"[:n]
        call = f"axon_ew_{self.name}({', '.join(letters)})"
        vcall = f"axon_ewv_{self.name}({', '.join(letters)})"
        _, scalar_fn = self.c_function("CT", f"axon_ew_{self.name}")
        parts = [self.preamble, scalar_fn]
        body = {1: "UNARY_BODY", 2: "BINARY_BODY", 3: "TERNARY_BODY"}[n]
        parts.append(f"EW_BOTH(ew_{self.name}, ewr_{self.name}, {n}, {body}(STORE, {call}))")
        if vector:
            _, vector_fn = self.c_function("VCT", f"axon_ewv_{self.name}")
            loads = " ".join(f"CT {v} = VIN({k + 1}, {'xyz'[k]}, s{k + 1});" for k, v in enumerate(letters))
            tail_loads = " ".join(f"CT {v}1 = IN({k + 1}, {'xyz'[k]}, s{k + 1});" for k, v in enumerate(letters))
            splats = " ".join(f"CT {v} = (CT)({v}1);" for v in letters)
            # The last partial vector goes element by element through the vector function (lane
            # 0 of a splat), as the built-in vector kernels' PW_TAIL does: one copy of the math.
            parts.append(
                "#ifdef HAS_VCT\n"
                + vector_fn
                + f"\nEW_VEC(ewv_{self.name}, {{ {loads} VOUT({vcall}); }},"
                + f" {{ {tail_loads} {{ typedef VCT CT; {splats} STORE(PTR(o), off[0], ({vcall}).s0); }} }})\n#endif"
            )
        return "\n".join(parts) + "\n"

    def _probe(self, device: int, ctype: str) -> str | None:
        """The build log if the body does not compile as a function of `ctype`, else None."""
        _, fn = self.c_function(ctype, "axon_probe")
        try:
            _C._build_program(device, f"{self.preamble}\n{fn}\n", "")
        except RuntimeError as e:
            return f"{e}\nthe function built:\n{fn}"
        return None

    def _family(self, device: int) -> str:
        vector = self._vector.get(device)
        if vector is None:
            log = self._probe(device, "float")
            if log is not None and self.fixed_dtype in (None, torch.float32):
                raise RuntimeError(f"ElementwiseKernel {self.name}: the body did not build:\n{log}")
            # The vector form where the body means something on float8 too (an `if` on an
            # input does not compile there; such a body keeps the scalar forms).
            vector = self._probe(device, "float8") is None
            self._vector[device] = vector
        key = "vector" if vector else "scalar"
        family = self._families.get(key)
        if family is None:
            text = self._file_text(vector)
            file = f"user_ew_{self.name}_{hashlib.sha1(text.encode()).hexdigest()[:12]}"
            _C._register_kernel_file(file, text)
            family = self._families[key] = f"ew_common+{file}"
        return family

    # ---- calling -----------------------------------------------------------------------------
    def result_dtype(self, *args) -> torch.dtype:
        if self.fixed_dtype is not None:
            return self.fixed_dtype
        tensors = [a for a in args if isinstance(a, torch.Tensor) and a.device.type != "cpu"] or list(args)
        dtype = tensors[0].dtype
        for t in tensors[1:]:
            dtype = torch.promote_types(dtype, t.dtype)
        return dtype

    def _operands(self, args) -> list:
        if len(args) != len(self.inputs):
            names = ", ".join(n for _, n in self.inputs)
            raise TypeError(f"ElementwiseKernel {self.name}({names}) takes {len(self.inputs)} inputs, got {len(args)}")
        for (_, n), a in zip(self.inputs, args, strict=True):
            if isinstance(a, torch.Tensor):
                if a.device.type != "axon" and a.dim() > 0:
                    raise ValueError(
                        f"ElementwiseKernel {self.name}: input {n} is on {a.device}; move it to axon first"
                    )
            elif not isinstance(a, (int, float, bool)):
                raise TypeError(
                    f"ElementwiseKernel {self.name}: input {n} must be a tensor or a number, got {type(a).__name__}"
                )
        on_device = [a for a in args if isinstance(a, torch.Tensor) and a.device.type == "axon"]
        if not on_device:
            raise TypeError(f"ElementwiseKernel {self.name}: at least one input must be an axon tensor")
        dtype = self.result_dtype(*on_device)
        # Numbers (and 0-dim CPU tensors) become scalar operands of the compute dtype.
        return [a if isinstance(a, torch.Tensor) else torch.tensor(a, dtype=dtype) for a in args]

    def __call__(self, *args, out: torch.Tensor | None = None) -> torch.Tensor:
        operands = self._operands(args)
        if out is None and _through_the_op(operands):
            return self.op(*operands)
        return self._launch(operands, out)

    def _launch(self, operands: list[torch.Tensor], out: torch.Tensor | None = None) -> torch.Tensor:
        dtype = self.result_dtype(*operands)
        if out is not None:
            if out.dtype != dtype:
                raise TypeError(f"ElementwiseKernel {self.name}: out is {out.dtype}, the kernel writes {dtype}")
            if out.device.type != "axon":
                raise ValueError(f"ElementwiseKernel {self.name}: out is on {out.device}, not an axon device")
            device = out.device
        else:
            device = next(t.device for t in operands if t.device.type == "axon")
        inputs = [t if t.dtype == dtype else t.to(dtype) for t in operands]
        return _C._user_elementwise(self._family(device.index), f"ew_{self.name}", out, inputs, dtype)

    def _allocate(self, operands: list[torch.Tensor]) -> torch.Tensor:
        shape = torch.broadcast_shapes(*(t.shape for t in operands))
        device = next(t.device for t in operands if t.device.type != "cpu" or t.dim() > 0)
        return torch.empty(shape, dtype=self.result_dtype(*operands), device=device)

    def _register_op(self) -> torch._ops.OpOverload:
        def run(*operands):
            # Contiguous, as the fake result says (graphs check their nodes' strides against it).
            return self._launch(list(operands), self._allocate(list(operands)))

        schema = "(" + ", ".join(f"Tensor {n}" for _, n in self.inputs) + ") -> Tensor"
        return registry.register(self.name, self.digest, schema, run, lambda *operands: self._allocate(list(operands)))


def _through_the_op(operands: list[torch.Tensor]) -> bool:
    """Whether a call needs the dispatcher: a trace (torch.compile, export, fake tensors), a
    transform (vmap, grad), tensor subclasses, or autograd (an autograd formula the user may have
    registered on the op). Plain eager calls skip it: the Python op's dispatch cost about 70 us
    a call, ten times the launch."""
    if torch.compiler.is_compiling() or torch._C._are_functorch_transforms_active():
        return True
    if _get_current_dispatch_mode() is not None:
        return True
    grad = torch.is_grad_enabled()
    return any(type(t) is not torch.Tensor or (grad and t.requires_grad) for t in operands)
