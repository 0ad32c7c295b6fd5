"""``torch.axon.compile_shader``: a user's OpenCL C as a library of launchable kernels.

Shaped like ``torch.mps.compile_shader``: the library's kernels are its attributes, and a call
``lib.name(*args, threads=..., group_size=...)`` launches on the current axon stream, ordered
with built-in ops as theirs are, named in ``torch.profiler`` by the kernel's name. Programs go
through the runtime's program cache (memory, then disk), per device and build options.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .. import _C
from . import source as src
from . import types as cl

# Build option that keeps each parameter's type for axon_kernel_arg_type: a parameter
# declared with a macro (T a, with -DT=float) converts numbers to what the macro became.
_ARG_INFO = "-cl-kernel-arg-info"


@dataclass(frozen=True)
class _Arg:
    """How one parameter is passed: the launch letter (source_kernels.cpp), and its type."""

    param: src.Param
    letter: str  # 'b' tensor, 'L' local bytes, or a number's letter ('r': packed bytes)
    type_name: str  # the element type (pointers) or the number's type, macros expanded


class Kernel:
    """One kernel of a library: call it to launch it."""

    def __init__(self, library: KernelLibrary, decl: src.KernelDecl) -> None:
        self._library = library
        self._decl = decl
        self._plans: dict[int, tuple[int, list[_Arg], str]] = {}

    @property
    def name(self) -> str:
        return self._decl.name

    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(p.name for p in self._decl.params)

    def __repr__(self) -> str:
        params = ", ".join(f"{p.type_text} {p.name}" for p in self._decl.params)
        return f"<axon kernel {self.name}({params})>"

    # ---- what a kernel author tunes for (clGetKernelWorkGroupInfo) ---------------------------
    def limits(self, device: int | None = None) -> dict:
        program, _, _ = self._plan(_device_index(device))
        return _C._kernel_limits(program, self.name)

    @property
    def max_threads_per_group(self) -> int:
        return int(self.limits()["max_group_size"])

    @property
    def preferred_group_multiple(self) -> int:
        return int(self.limits()["preferred_group_multiple"])

    @property
    def local_mem_bytes(self) -> int:
        """__local memory the kernel declares in its body (arguments' come on top)."""
        return int(self.limits()["local_mem_bytes"])

    # ---- launching ---------------------------------------------------------------------------
    def _plan(self, device: int) -> tuple[int, list[_Arg], str]:
        plan = self._plans.get(device)
        if plan is None:
            program = self._library._program(device)
            args, physical = [], 0
            for p in self._decl.params:
                type_name = self._library._arg_type(program, self.name, physical, p)
                if p.kind == src.GLOBAL:
                    args.append(_Arg(p, "b", type_name))
                    physical += 2  # memory and offset
                    continue
                physical += 1
                if p.kind == src.LOCAL:
                    args.append(_Arg(p, "L", type_name))
                elif cl.is_number_type(type_name):
                    args.append(_Arg(p, cl.LAUNCH_LETTERS.get(type_name, "r"), type_name))
                else:
                    raise TypeError(
                        f"kernel {self.name}: parameter {p.name} has type {type_name}, which Axon cannot pass "
                        "(numbers, vectors of numbers, __global/__constant pointers and __local pointers can be)"
                    )
            plan = (program, args, "".join(a.letter for a in args))
            self._plans[device] = plan
        return plan

    def __call__(self, *args, threads=None, group_size=None) -> None:
        decl = self._decl
        if len(args) != len(decl.params):
            names = ", ".join(self.parameters)
            raise TypeError(f"kernel {self.name}({names}) takes {len(decl.params)} arguments, got {len(args)}")
        device = _launch_device(self.name, decl.params, args)
        program, plan, signature = self._plan(device)
        values = [self._convert(a, v, device) for a, v in zip(plan, args, strict=True)]
        global_size = _threads(self.name, threads, args)
        if global_size is None:
            return  # an empty grid: nothing to run
        if group_size is None and decl.fixed_group:
            group_size = self._required_group(program, len(global_size))
        local_size = _group(self.name, group_size, global_size, device)
        _C._launch(program, self.name, device, global_size, local_size, signature, values)

    def _required_group(self, program: int, dims: int) -> list[int] | None:
        """The size the kernel's reqd_work_group_size names: a launch must use exactly that
        (OpenCL 1.2 refuses one that leaves it to the driver)."""
        group = list(_C._kernel_required_group(program, self.name))
        if not group[0]:
            return None
        if any(n != 1 for n in group[dims:]):
            raise ValueError(f"kernel {self.name} requires work-groups of {tuple(group)}: launch it over 3 dimensions")
        return group[:dims]

    def _convert(self, arg: _Arg, value, device: int):
        p = arg.param
        what = f"kernel {self.name}: argument {p.name}"
        if arg.letter == "b":
            if not isinstance(value, torch.Tensor):
                raise TypeError(f"{what} is {p.type_text}: needs an axon tensor, got {type(value).__name__}")
            if value.device.type != "axon" or value.device.index != device:
                raise ValueError(f"{what} is on {value.device}; the kernel runs on axon:{device}")
            _check_pointee(what, arg.type_name, value.dtype)
            return value
        if arg.letter == "L":
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{what} is {p.type_text}: needs the number of bytes of local memory (an int)")
            if value < 1:
                raise ValueError(f"{what} is {p.type_text}: {value} bytes of local memory (at least 1)")
            return value
        # The checks (and a CPU tensor's values) are pack's; the launch converts int, long, float
        # and double itself.
        packed = cl.pack(arg.type_name, value, what)
        if arg.letter == "r":
            return packed
        if isinstance(value, torch.Tensor):
            value = value.item()
        return float(value) if arg.letter in "fd" else int(value)


class KernelLibrary:
    """The kernels of one OpenCL C source, built with the same options."""

    def __init__(self, source: str, options: str = "", device: int | None = None) -> None:
        self.source = source
        self.options = options
        self._built_source, self._decls = src.parse(source)
        if not self._decls:
            raise ValueError("compile_shader: the source defines no __kernel function")
        self._programs: dict[int, int] = {}
        self._kernels = {name: Kernel(self, decl) for name, decl in self._decls.items()}
        self._program(_device_index(device))  # build errors show now, as MPS's do

    @property
    def kernel_names(self) -> tuple[str, ...]:
        return tuple(self._kernels)

    def __getattr__(self, name: str) -> Kernel:
        kernels = self.__dict__.get("_kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(f"the library has no kernel {name!r}; its kernels: {', '.join(kernels) or 'none'}")

    def __dir__(self):
        return [*super().__dir__(), *self._kernels]

    def __repr__(self) -> str:
        return f"<axon kernel library: {', '.join(self._kernels)}>"

    def _program(self, device: int) -> int:
        program = self._programs.get(device)
        if program is None:
            options = f"{self.options} {_ARG_INFO}".strip()
            try:
                program = _C._build_program(device, self._built_source, options)
            except RuntimeError as e:
                raise RuntimeError(
                    f"compile_shader: the OpenCL C source did not build for axon:{device} "
                    f"(options {self.options!r}); line numbers are the source's own:\n{e}"
                ) from None
            self._programs[device] = program
        return program

    def _arg_type(self, program: int, kernel: str, index: int, param: src.Param) -> str:
        """The parameter's type with macros expanded, from the compiler's argument info; for
        pointers, the element type. Where the driver keeps none, the type as written."""
        try:
            name = _C._kernel_arg_type(program, kernel, index)
        except RuntimeError:
            return param.element
        name = " ".join(name.replace("*", " ").split())
        for qualifier in ("const ", "volatile ", "restrict "):
            name = name.replace(qualifier, "")
        return cl.ALIASES.get(name, name)


def compile_shader(source: str, options: str = "", device=None) -> KernelLibrary:
    """Builds OpenCL C `source` (with build `options`, such as ``-DT=float``) for an axon
    device (the current one by default) and returns its kernels as attributes."""
    return KernelLibrary(source, options, device)


def _device_index(device) -> int:
    if device is None:
        return torch.axon.current_device()
    if isinstance(device, int):
        return device
    device = torch.device(device)
    if device.type != "axon":
        raise ValueError(f"compile_shader builds for axon devices, not {device}")
    return device.index if device.index is not None else torch.axon.current_device()


def _launch_device(kernel: str, params, args) -> int:
    """The device of the tensor arguments (the current device if there are none)."""
    for p, a in zip(params, args, strict=True):
        if p.kind == src.GLOBAL and isinstance(a, torch.Tensor):
            if a.device.type != "axon":
                raise ValueError(f"kernel {kernel}: argument {p.name} is on {a.device}; move it to axon first")
            return a.device.index
    return torch.axon.current_device()


def _check_pointee(what: str, element: str, dtype: torch.dtype) -> None:
    base, _ = cl.split_vector(element)
    if base in cl.RAW_POINTEES or base not in cl.POINTEE_DTYPES:
        return  # bytes, or a type Axon does not know (a struct): the author's call
    if dtype not in cl.POINTEE_DTYPES[base]:
        raise TypeError(f"{what} points to {element}, but the tensor is {dtype}")


def _threads(kernel: str, threads, args) -> list[int] | None:
    """The global size as a list (x first), None for an empty grid. Default: the first tensor
    argument's element count."""
    if threads is None:
        first = next((a for a in args if isinstance(a, torch.Tensor)), None)
        if first is None:
            raise TypeError(f"kernel {kernel}: give threads= (there is no tensor argument to size the launch by)")
        threads = first.numel()
    sizes = [threads] if isinstance(threads, int) else list(threads)
    if not 1 <= len(sizes) <= 3 or not all(isinstance(n, int) and n >= 0 for n in sizes):
        raise ValueError(f"kernel {kernel}: threads= takes 1 to 3 non-negative ints, got {threads!r}")
    return None if 0 in sizes else sizes


def _group(kernel: str, group_size, global_size: list[int], device: int) -> list[int]:
    """The local size: as given (each dimension dividing the global one), or for 1-D launches
    the largest power of two up to Axon's choice for the device that divides the size (an
    empty list lets the driver choose)."""
    if group_size is None:
        if len(global_size) > 1:
            return []
        from ..inductor.runtime import group_size as preferred

        group = preferred(device, global_size[0])
        group = math.gcd(group, global_size[0])
        return [group] if group > 1 else []
    sizes = [group_size] if isinstance(group_size, int) else list(group_size)
    if len(sizes) != len(global_size) or not all(isinstance(n, int) and n > 0 for n in sizes):
        raise ValueError(
            f"kernel {kernel}: group_size= needs {len(global_size)} positive ints "
            f"(one per threads dimension), got {group_size!r}"
        )
    for g, n in zip(sizes, global_size, strict=True):
        if n % g:
            raise ValueError(
                f"kernel {kernel}: threads {global_size} are not a whole number of groups {sizes}; "
                "round threads up and check the index in the kernel"
            )
    return sizes
