"""Inductor's SIMD kernels as OpenCL C: a work-item per output element (up to three pointwise
dimensions), reductions as a loop over the reduced elements inside the work-item.

The loop form suits CPU devices (PoCL runs a work-item's loop as plain vectorised code, and no
work-group barrier is needed) and stays correct on GPUs; a work-group tree reduction for wide
reductions on GPUs is left for later. Inductor's non-persistent reduction scheme gives each
reduction its own loop (``codegen_body`` is called once per loop), accumulators live in the
work-item, and stores of reduced values follow the loop.
"""

from __future__ import annotations

import itertools
from typing import Any

import sympy
import torch
from torch._inductor.codegen.common import CSE, DeferredLine, IndentedBuffer, PythonPrinter
from torch._inductor.codegen.simd import IterationRangesEntry, SIMDKernel, SIMDScheduling
from torch._inductor.virtualized import V
from torch.utils._ordered_set import OrderedSet
from torch.utils._sympy.value_ranges import ValueRanges

from .overrides import STORAGE_TYPE, OpenCLOverrides, compute_type, literal
from .prelude import prelude, special_functions
from .printer import OpenCLExprPrinter

# Placeholder for the kernel's name in generated source; define_kernel gives the real one.
KERNEL_NAME = "axon_generated_kernel"


class TypedCSE(CSE):
    """OpenCL C has no ``auto``: a new variable is declared with the C type of its dtype (the
    dtype Inductor propagates to every value; untyped values are index arithmetic, ``long``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._declared_type = "long"
        super().__init__(*args, **kwargs)

    @property
    def prefix(self) -> str:  # read right after newvar, when the declaration is written
        return f"{self._declared_type} "

    @prefix.setter
    def prefix(self, value: str) -> None:
        pass  # the declared type comes from each variable's dtype

    def newvar(self, bounds=None, dtype=None, shape=None):
        var = super().newvar(ValueRanges.unknown() if bounds is None else bounds, dtype, shape)
        self._declared_type = compute_type(dtype)
        return var


def _load_expr(var: str, index: str, dtype: torch.dtype) -> str:
    if dtype == torch.float16:
        return f"AXON_LOAD_F16({var}, {index})"
    if dtype == torch.bfloat16:
        return f"AXON_LOAD_BF16({var}, {index})"
    if dtype == torch.bool:
        return f"({var}[{index}] != 0)"
    return f"{var}[{index}]"


def _store_stmt(var: str, index: str, value: Any, dtype: torch.dtype) -> str:
    if dtype == torch.float16:
        return f"AXON_STORE_F16({var}, {index}, {value});"
    if dtype == torch.bfloat16:
        return f"AXON_STORE_BF16({var}, {index}, {value});"
    if dtype == torch.bool:
        return f"{var}[{index}] = (uchar)(({value}) != 0);"
    return f"{var}[{index}] = ({STORAGE_TYPE[dtype]})({value});"


ATOMIC_ADD = {
    torch.float32: "axon_atomic_add_float",
    torch.float64: "axon_atomic_add_double",
    torch.int32: "axon_atomic_add_int",
    torch.int64: "axon_atomic_add_long",
}


def _type_min(dtype: torch.dtype) -> str:
    if dtype.is_floating_point:
        return "(-INFINITY)"
    if dtype == torch.bool:
        return "0"
    return f"(({compute_type(dtype)}){torch.iinfo(dtype).min}L)" if dtype.is_signed else "0"


def _type_max(dtype: torch.dtype) -> str:
    if dtype.is_floating_point:
        return "INFINITY"
    if dtype == torch.bool:
        return "1"
    value = torch.iinfo(dtype).max
    return f"(({compute_type(dtype)}){value}{'UL' if dtype == torch.uint64 else 'L'})"


class OpenCLKernel(SIMDKernel):
    overrides = OpenCLOverrides  # type: ignore[assignment]
    suffix = ";"
    newvar_prefix = ""
    sexpr = kexpr = OpenCLExprPrinter().doprint
    pexpr = PythonPrinter().doprint

    def __init__(self, tiling: dict[str, sympy.Expr], **kwargs: Any) -> None:
        super().__init__(tiling, **kwargs)
        self.cse = TypedCSE(self.newvar_prefix, self.suffix)
        self.accumulators = itertools.count()
        self.signature = ""
        # Index variables of reduced dimensions: computed first thing in each loop step.
        self.loop_indexing = IndentedBuffer()
        self.uses_special_functions = False  # set by OpenCLOverrides' special functions

    # ---- types ----------------------------------------------------------------------------

    def get_index_dtype_as_torch_dtype(self) -> torch.dtype:
        return torch.int64

    def dtype_to_str(self, dtype: torch.dtype) -> str:
        return compute_type(dtype)

    # ---- memory ---------------------------------------------------------------------------

    def load(self, name: str, index: sympy.Expr):
        var = self.args.input(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        value_dtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
        return self.cse.generate(self.loads, _load_expr(var, self.index_to_str(index), dtype), dtype=value_dtype)

    def store(self, name: str, index: sympy.Expr, value: Any, mode: Any = None) -> None:
        var = self.args.output(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        if mode == "atomic_add":
            if dtype not in ATOMIC_ADD:
                raise NotImplementedError(f"axon: atomic add of {dtype} in compiled kernels")
            stmt = f"{ATOMIC_ADD[dtype]}(&{var}[{self.index_to_str(index)}], {value});"
        elif mode is None:
            stmt = _store_stmt(var, self.index_to_str(index), value, dtype)
        else:
            raise NotImplementedError(f"axon: store mode {mode} in compiled kernels")
        line = DeferredLine(name, stmt)
        (self.compute if self.inside_reduction else self.stores).writeline(line)

    def store_reduction(self, name: str, index: sympy.Expr, value: Any) -> None:
        var = self.args.output(name)
        index = self.prepare_indexing(index)
        self.stores.writeline(
            DeferredLine(name, _store_stmt(var, self.index_to_str(index), value, V.graph.get_dtype(name)))
        )

    def check_bounds(self, expr: sympy.Expr, size: sympy.Expr, lower: bool, upper: bool) -> None:
        """Indirect indices are not checked on the device yet (no error channel back)."""

    # ---- reductions -----------------------------------------------------------------------

    def _accumulator(self, dtype: torch.dtype, init: str):
        name = f"acc{next(self.accumulators)}"
        self.body.writeline(f"{compute_type(dtype)} {name} = {init};")  # before its loop
        return V.kernel.create_cse_var(name, ValueRanges.unknown(), dtype)

    def _reduction_position(self) -> str:
        trees = [t for t in self.range_trees if t.is_reduction]
        if len(trees) != 1:
            raise NotImplementedError("axon: argmax/argmin over several reduction trees")
        return trees[0].name

    def reduction(self, dtype, src_dtype, reduction_type, value):
        key = (src_dtype, reduction_type, value)
        if key not in self.cse.reduction_cache:
            self.cse.reduction_cache[key] = self._reduction(dtype, src_dtype, reduction_type, value)
        return self.cse.reduction_cache[key]

    def _reduction(self, dtype, src_dtype, reduction_type, value):
        assert self.inside_reduction
        acc_dtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
        w = self.compute.writeline
        if reduction_type in ("sum", "prod", "xor_sum", "any"):
            init = {"sum": "0", "prod": "1", "xor_sum": "0", "any": "0"}[reduction_type]
            acc = self._accumulator(acc_dtype, init)
            op = {
                "sum": f"{acc} + ({value})",
                "prod": f"{acc} * ({value})",
                "xor_sum": f"{acc} ^ ({value})",
                "any": f"{acc} || (({value}) != 0)",
            }[reduction_type]
            w(f"{acc} = {op};")
            return acc
        if reduction_type in ("max", "min"):
            acc = self._accumulator(
                acc_dtype, _type_min(acc_dtype) if reduction_type == "max" else _type_max(acc_dtype)
            )
            cmp = ">" if reduction_type == "max" else "<"
            if acc_dtype.is_floating_point:  # NaN wins and stays
                w(f"if (!isnan({acc}) && (isnan({value}) || ({value}) {cmp} {acc})) {acc} = {value};")
            else:
                w(f"if (({value}) {cmp} {acc}) {acc} = {value};")
            return acc
        if reduction_type in ("argmax", "argmin"):
            src = torch.float32 if src_dtype in (torch.float16, torch.bfloat16) else src_dtype
            best = self._accumulator(src, _type_min(src) if reduction_type == "argmax" else _type_max(src))
            where = self._accumulator(torch.int64, "-1")
            cmp = ">" if reduction_type == "argmax" else "<"
            better = f"({value}) {cmp} {best}"
            if src.is_floating_point:  # the first NaN wins, as in eager
                better = f"!isnan({best}) && (isnan({value}) || {better})"
            w(f"if ({where} < 0 || ({better})) {{ {best} = {value}; {where} = {self._reduction_position()}; }}")
            return where
        if reduction_type == "welford_reduce":
            mean, m2, weight = (
                self._accumulator(torch.float32 if acc_dtype != torch.float64 else acc_dtype, "0") for _ in range(3)
            )
            delta = f"d{mean}"
            w(
                f"{weight} += 1; {{ {compute_type(mean.dtype)} {delta} = ({value}) - {mean}; "
                f"{mean} += {delta} / {weight}; {m2} += {delta} * (({value}) - {mean}); }}"
            )
            return mean, m2, weight
        if reduction_type == "welford_combine":
            v_mean, v_m2, v_weight = value
            mean, m2, weight = (
                self._accumulator(torch.float32 if acc_dtype != torch.float64 else acc_dtype, "0") for _ in range(3)
            )
            t = compute_type(mean.dtype)
            w(
                f"{{ {t} nw = {weight} + ({v_weight}); if (nw > 0) {{ {t} d = ({v_mean}) - {mean}; "
                f"{t} f = ({v_weight}) / nw; {mean} += d * f; {m2} += ({v_m2}) + d * d * {weight} * f; "
                f"{weight} = nw; }} }}"
            )
            return mean, m2, weight
        raise NotImplementedError(f"axon: reduction {reduction_type} in compiled kernels")

    # ---- structure ------------------------------------------------------------------------

    def codegen_iteration_ranges_entry(self, entry: IterationRangesEntry) -> None:
        line = f"long {entry.name} = {self.sexpr(self.rename_indexing(entry.expr))};"
        # Entries of a reduced dimension change every loop step: they are computed at the start
        # of the loop; the others once, before the code that follows.
        (self.loop_indexing if entry.is_reduction else self.body).writeline(line)

    def _numel(self, tree: Any) -> str:
        return str(int(tree.numel)) if isinstance(tree.numel, (int, sympy.Integer)) else f"{tree.prefix}numel"

    def codegen_body(self) -> None:
        reduced = [t for t in self.range_trees if t.is_reduction]
        if self.inside_reduction and reduced and (self.loads or self.compute):
            for tree in reduced:
                self.body.writeline(f"for (long {tree.name} = 0; {tree.name} < {self._numel(tree)}; {tree.name}++) {{")
            with self.body.indent():
                self.body.splice(self.loop_indexing)
                self.body.splice(self.loads)
                self.body.splice(self.compute)
            self.body.writeline("}" * len(reduced))
            self.loop_indexing.clear()
            # Values of the loop end with it; the accumulators (reduction results) live on.
            self.cse.invalidate(
                OrderedSet(
                    v
                    for item in self.cse.reduction_cache.values()
                    for v in (item if isinstance(item, tuple) else (item,))
                )
            )
            for node in self.range_tree_nodes.values():
                if any(node.root is root for root in reduced):
                    node.cache_clear()
        else:
            self.body.splice(self.loads)
            self.body.splice(self.compute)
        self.body.splice(self.stores)
        self.loads.clear()
        self.compute.clear()
        self.stores.clear()

    def _buffer_args(self) -> list[tuple[str, str]]:
        """(outer name, inner name) of every buffer the kernel takes, outputs first."""
        outs = [(o, i) for o, i in self.args.output_buffers.items() if o not in self.removed_buffers]
        ins = list(self.args.input_buffers.items())
        return outs + ins

    def _dynamic_numels(self) -> list[Any]:
        return [t for t in self.range_trees if not isinstance(t.numel, (int, sympy.Integer))]

    def codegen_kernel(self, name: str | None = None) -> str:
        self.codegen_body()
        params, setup = [], []
        for outer, inner in self._buffer_args():
            params.append(f"__global uchar *{inner}_base, ulong {inner}_offset")
            ctype = STORAGE_TYPE[V.graph.get_dtype(outer)]
            setup.append(f"__global {ctype} *{inner} = (__global {ctype} *)({inner}_base + {inner}_offset);")
        params += [f"long {inner}" for inner in self.args.sizevars.values()]
        params += [f"long {t.prefix}numel" for t in self._dynamic_numels()]
        self.signature = "b" * len(self._buffer_args()) + "l" * (len(self.args.sizevars) + len(self._dynamic_numels()))
        code = IndentedBuffer()
        code.splice(prelude())
        if self.uses_special_functions:
            code.splice(special_functions())
        code.writeline(f"__kernel void {KERNEL_NAME}({', '.join(params) or 'void'}) {{")
        with code.indent():
            for line in setup:
                code.writeline(line)
            pointwise = [t for t in self.range_trees if not t.is_reduction]
            for dim, tree in enumerate(reversed(pointwise)):  # x is dimension 0
                code.writeline(f"long {tree.name} = get_global_id({dim});")
                code.writeline(f"if ({tree.name} >= {self._numel(tree)}) return;")
            code.splice(self.indexing_code)
            code.splice(self.body)
        code.writeline("}")
        return code.getvalue()

    def call_kernel(self, name: str, node: Any = None, deallocate_ws: bool = True) -> None:
        wrapper = V.graph.wrapper_code
        for v in self.args.sizevars:
            wrapper.ensure_size_computed(v)
        args = [outer for outer, _ in self._buffer_args()]
        args += [str(v) for v in self.args.sizevars]
        args += [self.pexpr(t.numel) for t in self._dynamic_numels()]
        pointwise = [t for t in self.range_trees if not t.is_reduction]
        sizes = [self.pexpr(t.numel) for t in reversed(pointwise)] or ["1"]
        wrapper.writeline(f"{name}.run([{', '.join(args)}], [{', '.join(sizes)}])")


class OpenCLScheduling(SIMDScheduling):
    kernel_type = OpenCLKernel  # type: ignore[assignment]

    def define_kernel(self, src_code: str, node_schedule: Any, kernel: OpenCLKernel) -> str:
        wrapper = V.graph.wrapper_code
        if src_code in wrapper.src_to_kernel:
            return wrapper.src_to_kernel[src_code]
        name = f"axon_kernel_{wrapper.next_kernel_suffix()}"
        wrapper.src_to_kernel[src_code] = name
        source = src_code.replace(f"__kernel void {KERNEL_NAME}(", f"__kernel void {name}(")
        device = V.graph.get_current_device_or_throw()
        wrapper.add_import_once("from torch_axon.inductor.runtime import AxonKernel")
        wrapper.header.writeline(f"{name} = AxonKernel({name!r}, {kernel.signature!r}, {device.index or 0}, r'''")
        for line in source.splitlines():
            wrapper.header.writeline(line)
        wrapper.header.writeline("''')")
        return name


__all__ = ["OpenCLKernel", "OpenCLScheduling", "literal"]
