"""Inductor's SIMD kernels as OpenCL C: a work-item per output element (up to three pointwise
dimensions), reductions as a loop over the reduced elements inside the work-item.

On CPU devices a work-item's reduction runs in sixteen lanes, the inner loop of constant length
that compilers vectorise (PoCL does not vectorise a work-item's own loop across work-items):
along the reduction for rows (interleaved accumulators merged after the loop), or along the
outputs when only they lie contiguous (a work-item reduces sixteen neighbouring columns), as
flat pointwise kernels do (sixteen neighbouring elements a work-item). On GPUs a work-item
keeps one lane; a work-group tree reduction for wide reductions there is left for later.
Inductor's non-persistent reduction scheme gives each reduction its own loop (``codegen_body``
is called once per loop); ``codegen_kernel`` lays the loops out.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from typing import Any

import sympy
import torch
from torch._inductor import config
from torch._inductor.codegen.common import CSE, DeferredLine, IndentedBuffer, PythonPrinter
from torch._inductor.codegen.simd import IterationRangesEntry, SIMDKernel, SIMDScheduling
from torch._inductor.utils import get_fused_kernel_name, sympy_subs
from torch._inductor.virtualized import V
from torch.utils._ordered_set import OrderedSet
from torch.utils._sympy.functions import FloorDiv, Identity, ModularIndexing
from torch.utils._sympy.value_ranges import ValueRanges

from .overrides import STORAGE_TYPE, OpenCLOverrides, compute_type, literal
from .prelude import prelude, special_functions
from .printer import OpenCLExprPrinter
from .vectorize import vector_step

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


# A 0-dim CPU tensor among a graph's inputs (Dynamo turns a Python number it does not
# specialise into one; users pass them too) has no device memory: as for Triton kernels, its
# value is read on the host at the launch and passed by value, in the widest type of its kind.
def _is_cpu_scalar(name: str) -> bool:
    return V.graph.is_unspec_arg(name)


def _scalar_param(dtype: torch.dtype) -> tuple[str, str]:
    """The parameter type and launch signature letter of a CPU scalar of `dtype`."""
    if dtype == torch.float64:
        return "double", "d"
    if dtype.is_floating_point:
        return "float", "f"
    return "long", "l"


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
    torch.float16: "axon_atomic_add_f16",
    torch.bfloat16: "axon_atomic_add_bf16",
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


@dataclasses.dataclass
class _Segment:
    """A piece of a kernel's code (OpenCLKernel.codegen_body)."""

    code: IndentedBuffer
    looped: bool  # the body of a loop over the reduced elements, or straight code
    merges: IndentedBuffer  # after the loop, with lanes along the reduction: its lanes merged
    finished: list[str]  # accumulators of the loops before


@functools.cache
def wide_indices_only(device: int) -> bool:
    """Whether the device's driver miscompiles 32-bit indices: Mesa's llvmpipe compares an
    ``int`` widened to ``long`` with a ``long`` constant as always false (the quirk
    ``widened_int_compare``, runtime/src/quirks.c), and the generated code writes such compares."""
    return "widened_int_compare" in torch.axon.get_device_properties(device).quirks


@functools.cache
def reduction_lanes(device: int) -> int:
    """Lanes per work-item reduction (see OpenCLKernel._accumulator): on CPU devices sixteen,
    a 512-bit vector of floats; on GPUs one, where work-items are the parallelism and more
    accumulators would only take registers."""
    return 16 if torch.axon.get_device_properties(device).is_cpu else 1


class OpenCLKernel(SIMDKernel):
    overrides = OpenCLOverrides  # type: ignore[assignment]
    suffix = ";"
    newvar_prefix = ""
    sexpr = kexpr = OpenCLExprPrinter().doprint  # __init__ sets the kernel's index type
    pexpr = PythonPrinter().doprint

    def __init__(self, tiling: dict[str, sympy.Expr], **kwargs: Any) -> None:
        super().__init__(tiling, **kwargs)
        # Index arithmetic in 32 bits where Inductor proves it fits (select_index_dtype: the
        # kernel's elements and every buffer it touches under 2^31, guarded for dynamic sizes),
        # as its Triton kernels do: CPUs vectorise 32-bit division by constants and 64-bit not
        # (a permuting backward kernel of 1152 x 1024: 2.6 ms with long indices, 0.9 with int).
        device = V.graph.get_current_device_or_throw().index or 0
        if self._index_dtype == torch.int32 and wide_indices_only(device):
            self._index_dtype = torch.int64
        self.index_type = "int" if self._index_dtype == torch.int32 else "long"
        self.sexpr = self.kexpr = OpenCLExprPrinter(self.index_type).doprint
        self.cse = TypedCSE(self.newvar_prefix, self.suffix)
        self.accumulators = itertools.count()
        self.signature = ""
        # Index variables of reduced dimensions: computed first thing in each loop step.
        self.loop_indexing = IndentedBuffer()
        # The compute types (float32, float64) of the special functions this kernel calls: set
        # by OpenCLOverrides, it decides which instance of kernels/special.cl the kernel includes.
        self.special_compute_types: set[torch.dtype] = set()
        self.helper_functions: dict[str, str] = {}  # user kernels' functions it calls, by name
        self.lanes = reduction_lanes(device)
        self.lane_merges = IndentedBuffer()  # after the current loop: its lanes merged
        self.declarations = IndentedBuffer()  # accumulators, before all code
        self.point_indexing = IndentedBuffer()  # index variables of the output dimensions
        self.segments: list[_Segment] = []  # the code, in order: loops and straight pieces
        self.finished: list[str] = []  # accumulators of the loops written so far
        self.loop_accumulators: list[str] = []  # accumulators of the current loop
        self.reduced_loads: list[sympy.Expr] = []  # indices loaded in loops, for the lane layout
        self.point_accesses: list[sympy.Expr] = []  # indices loaded or stored outside loops, likewise
        self.x_lanes = False  # set by codegen_kernel: lanes along x rather than the reduction

    # ---- types ----------------------------------------------------------------------------

    def dtype_to_str(self, dtype: torch.dtype) -> str:
        return compute_type(dtype)

    # ---- memory ---------------------------------------------------------------------------

    def load(self, name: str, index: sympy.Expr):
        var = self.args.input(name)
        dtype = V.graph.get_dtype(name)
        if _is_cpu_scalar(name):
            value_dtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
            value = f"({var} != 0)" if dtype == torch.bool else f"(({compute_type(value_dtype)}){var})"
            return self.cse.generate(self.loads, value, dtype=value_dtype)
        index = self.prepare_indexing(index)
        (self.reduced_loads if self.inside_reduction else self.point_accesses).append(index)
        dtype = V.graph.get_dtype(name)
        value_dtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
        return self.cse.generate(self.loads, _load_expr(var, self.index_to_str(index), dtype), dtype=value_dtype)

    def store(self, name: str, index: sympy.Expr, value: Any, mode: Any = None) -> None:
        var = self.args.output(name)
        index = self.prepare_indexing(index)
        self.point_accesses.append(index)
        dtype = V.graph.get_dtype(name)
        if mode == "atomic_add":
            if dtype not in ATOMIC_ADD:
                raise NotImplementedError(f"axon: atomic add of {dtype} in compiled kernels")
            stmt = f"{ATOMIC_ADD[dtype]}(&{var}[{self.index_to_str(index)}], {value});"
        elif mode is None:
            stmt = _store_stmt(var, self.index_to_str(index), value, dtype)
        else:
            raise NotImplementedError(f"axon: store mode {mode} in compiled kernels")
        line = DeferredLine(name, f"if (xmask) {stmt}")
        (self.compute if self.inside_reduction else self.stores).writeline(line)

    def store_reduction(self, name: str, index: sympy.Expr, value: Any) -> None:
        var = self.args.output(name)
        index = self.prepare_indexing(index)
        stmt = _store_stmt(var, self.index_to_str(index), value, V.graph.get_dtype(name))
        self.stores.writeline(DeferredLine(name, f"if (xmask) {stmt}"))

    def check_bounds(self, expr: sympy.Expr, size: sympy.Expr, lower: bool, upper: bool) -> None:
        """Indirect indices are not checked on the device yet (no error channel back)."""

    def device_assert_async(self, cond: Any, msg: str) -> None:
        """``torch._assert_async`` (and ``assert`` on a tensor, which Dynamo turns into one) is
        not checked in compiled kernels, for the same reason, as Triton's ``tl.device_assert``
        is not outside its debug mode: the program computes on as it would if it held."""

    # ---- reductions ----------------------------------------------------------------------
    #
    # A work-item's reduction runs in `self.lanes` interleaved lanes: the reduction loop steps by
    # `lanes` and an inner loop of constant length runs the body once per lane, each lane with its
    # own accumulator (arrays `accN_lanes`), merged into `accN` after the loop. The inner loop is
    # what CPU compilers vectorise (PoCL does not vectorise a work-item's own loop across
    # work-items): contiguous rows load as vectors, and the lanes' chains (a Welford step's
    # division, a float sum, which C may not reorder) no longer wait on one another.

    def _accumulator(self, dtype: torch.dtype, init: str):
        name = f"acc{next(self.accumulators)}"
        ctype = compute_type(dtype)
        # Before all code: the merged value (set after its loop) and the lanes.
        self.declarations.writeline(f"{ctype} {name}, {name}_lanes[{self.lanes}];")
        self.declarations.writeline(f"for (int lane = 0; lane < {self.lanes}; lane++) {name}_lanes[lane] = {init};")
        self.loop_accumulators.append(name)
        return V.kernel.create_cse_var(name, ValueRanges.unknown(), dtype)

    def _accumulators(self, count: int, dtype: torch.dtype, init: str) -> tuple:
        return tuple(self._accumulator(dtype, init) for _ in range(count))

    def _merge_lanes(self, accs: tuple, merge) -> None:
        """After the loop: accs = lane 0, then merge(accs, lane j's values) for the other lanes
        (merge gives the statement, as the update of an element does)."""
        w = self.lane_merges.writeline
        for acc in accs:
            w(f"{acc} = {acc}_lanes[0];")
        if self.lanes > 1:
            other = [f"{a}_lanes[lane]" for a in accs]
            w(f"for (int lane = 1; lane < {self.lanes}; lane++) {{ {merge(accs, other)} }}")

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
        """Accumulators for one reduction; the statement adding an element to the current lane
        goes in the loop body, the merge of the lanes after the loop."""
        assert self.inside_reduction
        acc_dtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
        if reduction_type in ("sum", "prod", "xor_sum", "any"):
            op = {"sum": "{a} + ({v})", "prod": "{a} * ({v})", "xor_sum": "{a} ^ ({v})", "any": "{a} || (({v}) != 0)"}
            init = {"sum": "0", "prod": "1", "xor_sum": "0", "any": "0"}[reduction_type]
            accs = self._accumulators(1, acc_dtype, init)

            def update(a, v):
                return f"{a[0]} = {op[reduction_type].format(a=a[0], v=v[0])};"

        elif reduction_type in ("max", "min"):
            init = _type_min(acc_dtype) if reduction_type == "max" else _type_max(acc_dtype)
            accs = self._accumulators(1, acc_dtype, init)
            cmp = ">" if reduction_type == "max" else "<"

            def update(a, v):
                better = f"({v[0]}) {cmp} {a[0]}"
                if acc_dtype.is_floating_point:  # NaN wins and stays
                    better = f"!isnan({a[0]}) && (isnan({v[0]}) || {better})"
                return f"{a[0]} = ({better}) ? ({v[0]}) : {a[0]};"

        elif reduction_type in ("argmax", "argmin"):
            src = torch.float32 if src_dtype in (torch.float16, torch.bfloat16) else src_dtype
            best = self._accumulator(src, _type_min(src) if reduction_type == "argmax" else _type_max(src))
            accs = (best, self._accumulator(torch.int64, "-1"))
            cmp = ">" if reduction_type == "argmax" else "<"

            def better(a, v):
                """Whether (value, index) v replaces a: the first NaN wins, then the first
                extreme. A lane sees its elements in order; merged lanes interleave, so ties
                go to the lower index."""
                strictly = f"({v[0]}) {cmp} {a[0]}"
                same = f"({v[0]}) == {a[0]}"
                if src.is_floating_point:
                    strictly = f"(!isnan({a[0]}) && (isnan({v[0]}) || {strictly}))"
                    same = f"({same} || (isnan({v[0]}) && isnan({a[0]})))"
                return f"{v[1]} >= 0 && ({a[1]} < 0 || {strictly} || ({same} && {v[1]} < {a[1]}))"

            def update(a, v):
                take = f"bool take = {better(a, v)};"
                return f"{{ {take} {a[0]} = take ? ({v[0]}) : {a[0]}; {a[1]} = take ? {v[1]} : {a[1]}; }}"

            if not isinstance(value, tuple):  # the lowering passes (value, logical index) if they differ
                value = (value, self._reduction_position())
        elif reduction_type in ("welford_reduce", "welford_combine"):
            accs = self._accumulators(3, torch.float64 if acc_dtype == torch.float64 else torch.float32, "0")
            t = compute_type(accs[0].dtype)

            def update(a, v):
                """Chan's combination of (mean, m2, weight) v into a."""
                return (
                    f"{{ {t} nw = {a[2]} + ({v[2]}); if (nw > 0) {{ {t} d = ({v[0]}) - {a[0]}; "
                    f"{t} f = ({v[2]}) / nw; {a[0]} += d * f; {a[1]} += ({v[1]}) + d * d * {a[2]} * f; "
                    f"{a[2]} = nw; }} }}"
                )

            if reduction_type == "welford_reduce":  # one element: Welford's step
                m, m2, n = (f"{a}_lanes[lane]" for a in accs)
                self.compute.writeline(
                    f"{n} += 1; {{ {t} d = ({value}) - {m}; {m} += d / {n}; {m2} += d * (({value}) - {m}); }}"
                )
                self._merge_lanes(accs, update)
                return accs
        else:
            raise NotImplementedError(f"axon: reduction {reduction_type} in compiled kernels")
        values = value if isinstance(value, tuple) else (value,)
        self.compute.writeline(update([f"{a}_lanes[lane]" for a in accs], values))
        self._merge_lanes(accs, update)
        if reduction_type.startswith("welford"):
            return accs  # mean, m2, weight
        return accs[1] if reduction_type in ("argmax", "argmin") else accs[0]  # arg ops: the index

    # ---- structure ------------------------------------------------------------------------

    def codegen_iteration_ranges_entry(self, entry: IterationRangesEntry) -> None:
        line = f"{self.index_type} {entry.name} = {self.sexpr(self.rename_indexing(entry.expr))};"
        # Entries of a reduced dimension change every loop step: they are computed at the start
        # of the loop; the others where the output index is known (codegen_kernel).
        (self.loop_indexing if entry.is_reduction else self.point_indexing).writeline(line)

    def _numel(self, tree: Any) -> str:
        return str(int(tree.numel)) if isinstance(tree.numel, (int, sympy.Integer)) else f"{tree.prefix}numel"

    def codegen_body(self) -> None:
        """Closes the current piece of code: the loop over the reduced elements that the loads
        and compute so far make (its stores follow it), or straight code. codegen_kernel lays
        the pieces out once it knows which way lanes run."""
        reduced = [t for t in self.range_trees if t.is_reduction]
        if self.inside_reduction and reduced and (self.loads or self.compute):
            step = IndentedBuffer()
            step.splice(self.loop_indexing)
            step.splice(self.loads)
            step.splice(self.compute)
            merges = IndentedBuffer()
            merges.splice(self.lane_merges)
            self.segments.append(_Segment(step, True, merges, list(self.finished)))
            self.finished += self.loop_accumulators
            self.loop_accumulators.clear()
            self.lane_merges.clear()
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
            straight = IndentedBuffer()
        else:
            straight = IndentedBuffer()
            straight.splice(self.loads)
            straight.splice(self.compute)
        straight.splice(self.stores)
        if straight.getrawvalue().strip():
            self.segments.append(_Segment(straight, False, IndentedBuffer(), list(self.finished)))
        self.loads.clear()
        self.compute.clear()
        self.stores.clear()

    def _stride(self, index: sympy.Expr, tree: Any) -> sympy.Expr | None:
        """How far `index` moves when the tree's index does, from 0 with the others at 0; None
        where sympy cannot tell (the caller then assumes no regular stride)."""
        full = sympy_subs(index, {sym: node.expr for sym, node in self.range_tree_nodes.items()})
        # Identity only keeps Inductor's simplifier away from a sub-expression (cat's offsets);
        # with numbers substituted inside Min / Max it makes an argument sympy cannot order
        # ("The argument '-((0))' is not comparable"), and an Identity of two numbers is not
        # subtracted out.
        full = full.replace(Identity, lambda arg: arg)
        at = {t.symbol(): 0 for t in self.range_trees}
        try:
            return sympy.simplify(sympy_subs(full, {**at, tree.symbol(): 1}) - sympy_subs(full, at))
        except (ValueError, TypeError, RecursionError):  # an expression sympy cannot evaluate
            return None

    def _linear_along(self, index: sympy.Expr, tree: Any) -> bool:
        """Whether `index` moves by 1 or 0 with the tree's index, with no division or modulo of
        it (a flat contiguous or broadcast access)."""
        full = sympy_subs(index, {sym: node.expr for sym, node in self.range_tree_nodes.items()})
        if any(a.has(tree.symbol()) for a in full.atoms(FloorDiv, ModularIndexing)):
            return False
        return self._stride(index, tree) in (0, 1)

    def _choose_x_lanes(self) -> bool:
        """Lanes along x (a work-item reduces `lanes` neighbouring outputs) when the loops load
        along x contiguously and never along the reduction (column sums, bias gradients); else
        along the reduction (rows)."""
        reduced = [t for t in self.range_trees if t.is_reduction]
        x = [t for t in self.range_trees if t.prefix == "x"]
        static_x = bool(x) and isinstance(x[0].numel, (int, sympy.Integer)) and int(x[0].numel) >= self.lanes
        if not self.inside_reduction:
            # Pointwise kernels too, where every access is contiguous along x or the same for
            # all x (a broadcast): PoCL vectorises a work-item's loop of constant length where
            # its own vectorisation of one element per work-item ran four times slower on long
            # arithmetic (gelu backward, erf and exp of 1.5M floats: 3.9 ms, 1.2 in lanes);
            # memory-bound ones measured the same either way, and permutes (division and
            # modulo of the index, runs of contiguous elements) ran 2.5 times slower in lanes.
            # One piece of code (a pointwise kernel's only one): its lanes' values need not live
            # past their step.
            if self.lanes == 1 or not static_x or len(self.segments) != 1 or not self.point_accesses:
                return False
            return all(self._linear_along(i, x[0]) for i in self.point_accesses)
        if self.lanes == 1 or len(reduced) != 1 or not x or not self.reduced_loads:
            return False
        looped = [i for i, s in enumerate(self.segments) if s.looped]
        # Values of straight code between loops would be one lane's: those kernels keep lanes
        # along the reduction.
        # At least a work-item's lanes of outputs, known when the kernel is written.
        if not isinstance(x[0].numel, (int, sympy.Integer)) or int(x[0].numel) < self.lanes:
            return False
        if not looped or any(not s.looped for s in self.segments[: looped[-1]]):
            return False
        strides = [(self._stride(i, reduced[0]), self._stride(i, x[0])) for i in self.reduced_loads]
        return any(sx == 1 for _, sx in strides) and not any(sr == 1 for sr, _ in strides)

    def _write_reduction_loop(self, out: IndentedBuffer, step: IndentedBuffer) -> None:
        """The loop over the reduced elements around `step` with lanes along the reduction: whole
        steps of `lanes` elements, then the rest in lane 0. Several reduced trees (and lanes
        along x) are nested loops of single elements."""
        w = out.writeline
        reduced = [t for t in self.range_trees if t.is_reduction]
        if len(reduced) > 1 or self.lanes == 1 or self.x_lanes:
            for tree in reduced:
                w(f"for ({self.index_type} {tree.name} = 0; {tree.name} < {self._numel(tree)}; {tree.name}++) {{")
            with out.indent():
                if not self.x_lanes:
                    w("const int lane = 0;")
                out.splice(step)
            w("}" * len(reduced))
            return
        (tree,) = reduced
        n, lanes, index = self._numel(tree), self.lanes, tree.name
        static = isinstance(tree.numel, (int, sympy.Integer))
        whole = str(int(tree.numel) // lanes * lanes) if static else f"({n} / {lanes} * {lanes})"
        it = self.index_type
        w(f"for ({it} {index}_base = 0; {index}_base < {whole}; {index}_base += {lanes}) {{")
        with out.indent():
            w(f"for (int lane = 0; lane < {lanes}; lane++) {{")
            with out.indent():
                w(f"{it} {index} = {index}_base + lane;")
                out.splice(step)
            w("}")
        w("}")
        if not static or int(tree.numel) % lanes:
            w(f"for ({it} {index} = {whole}; {index} < {n}; {index}++) {{")
            with out.indent():
                w("const int lane = 0;")
                out.splice(step)
            w("}")

    def _x_lane_step(self, segment: _Segment) -> IndentedBuffer:
        """One segment's code for one output of a work-item's `lanes` along x: its index, the
        output dimensions' index variables and the results of the loops before. The last
        work-item's lanes end at the last output (so loads stay contiguous, with no clamping);
        the lanes it shares with the work-item before compute again and store nothing."""
        step = IndentedBuffer()
        step.writeline(f"for (int lane = 0; lane < {self.lanes}; lane++) {{")
        with step.indent():
            step.writeline(f"{self.index_type} xindex = xbase + lane;")
            step.writeline("bool xmask = xindex >= xfirst;")
            step.splice(self.point_indexing)
            for acc in segment.finished:
                step.writeline(f"{acc} = {acc}_lanes[lane];")
            step.splice(segment.code)
        step.writeline("}")
        return step

    def _x_vector_step(self, segment: _Segment) -> str | None:
        """A flat pointwise kernel's lanes on float8 where its body allows (vectorize.py)."""
        if self.inside_reduction or segment.looped or segment.finished:
            return None
        if any(V.graph.get_dtype(outer) != torch.float32 for outer, _ in self._buffer_args()):
            return None
        x = next(t for t in self.range_trees if t.prefix == "x")
        strides = {self.index_to_str(i): self._stride(i, x) for i in self.point_accesses}
        strides = {k: int(v) for k, v in strides.items() if v in (0, 1)}
        return vector_step(
            segment.code.getvalue(), self.point_indexing.getvalue(), self.index_type, self.lanes, strides
        )

    def _layout(self) -> IndentedBuffer:
        out = IndentedBuffer()
        if not self.x_lanes:
            out.splice(self.point_indexing)
        out.splice(self.declarations)
        for segment in self.segments:
            if self.x_lanes and (vector := self._x_vector_step(segment)):
                out.splice(vector)
            elif self.x_lanes:
                step = self._x_lane_step(segment)
                if segment.looped:
                    self._write_reduction_loop(out, step)
                else:
                    out.splice(step)
            elif segment.looped:
                self._write_reduction_loop(out, segment.code)
                out.splice(segment.merges)
            else:
                out.splice(segment.code)
        return out

    def _buffer_args(self) -> list[tuple[str, str]]:
        """(outer name, inner name) of every buffer the kernel takes, outputs first."""
        outs = [(o, i) for o, i in self.args.output_buffers.items() if o not in self.removed_buffers]
        ins = [(o, i) for o, i in self.args.input_buffers.items() if not _is_cpu_scalar(o)]
        return outs + ins

    def _scalar_args(self) -> list[tuple[str, str]]:
        """(outer name, inner name) of the CPU scalars the kernel takes by value."""
        return [(o, i) for o, i in self.args.input_buffers.items() if _is_cpu_scalar(o)]

    def _dynamic_numels(self) -> list[Any]:
        return [t for t in self.range_trees if not isinstance(t.numel, (int, sympy.Integer))]

    def codegen_kernel(self, name: str | None = None) -> str:
        self.codegen_body()
        params, setup = [], []
        for outer, inner in self._buffer_args():
            params.append(f"__global uchar *{inner}_base, ulong {inner}_offset")
            ctype = STORAGE_TYPE[V.graph.get_dtype(outer)]
            setup.append(f"__global {ctype} *{inner} = (__global {ctype} *)({inner}_base + {inner}_offset);")
        self.signature = "b" * len(params)
        for outer, inner in self._scalar_args():
            ctype, letter = _scalar_param(V.graph.get_dtype(outer))
            params.append(f"{ctype} {inner}")
            self.signature += letter
        params += [f"long {inner}" for inner in self.args.sizevars.values()]
        params += [f"long {t.prefix}numel" for t in self._dynamic_numels()]
        self.signature += "l" * (len(self.args.sizevars) + len(self._dynamic_numels()))
        code = IndentedBuffer()
        code.splice(prelude())
        if self.special_compute_types:
            code.splice(special_functions(max(self.special_compute_types, key=lambda t: t.itemsize)))
        for definition in self.helper_functions.values():
            code.splice(definition)
        code.writeline(f"__kernel void {KERNEL_NAME}({', '.join(params) or 'void'}) {{")
        with code.indent():
            for line in setup:
                code.writeline(line)
            self.x_lanes = self._choose_x_lanes()
            pointwise = [t for t in self.range_trees if not t.is_reduction]
            for dim, tree in enumerate(reversed(pointwise)):  # x is dimension 0
                if self.x_lanes and tree.prefix == "x":
                    code.writeline(f"{self.index_type} xfirst = get_global_id({dim}) * {self.lanes};")
                    code.writeline(f"if (xfirst >= {self._numel(tree)}) return;")
                    last = f"({self.index_type})({self._numel(tree)} - {self.lanes})"
                    code.writeline(f"{self.index_type} xbase = min(xfirst, {last});")
                else:
                    code.writeline(f"{self.index_type} {tree.name} = get_global_id({dim});")
                    code.writeline(f"if ({tree.name} >= {self._numel(tree)}) return;")
            if not self.x_lanes:
                code.writeline("const bool xmask = 1;  /* every work-item's output exists */")
            code.splice(self.indexing_code)
            code.splice(self._layout())
        code.writeline("}")
        return code.getvalue()

    def call_kernel(self, name: str, node: Any = None, deallocate_ws: bool = True) -> None:
        wrapper = V.graph.wrapper_code
        for v in self.args.sizevars:
            wrapper.ensure_size_computed(v)
        args = [outer for outer, _ in self._buffer_args()]
        args += [f"{outer}.item()" for outer, _ in self._scalar_args()]
        args += [str(v) for v in self.args.sizevars]
        args += [self.pexpr(t.numel) for t in self._dynamic_numels()]
        pointwise = [t for t in self.range_trees if not t.is_reduction]
        sizes = [self.pexpr(t.numel) for t in reversed(pointwise)] or ["1"]
        if self.x_lanes:  # a work-item per `lanes` outputs along x
            sizes[0] = f"-(-({sizes[0]}) // {self.lanes})"
        # The grid is a tuple: the runtime keys its prepared launches by it (a constant tuple when
        # the sizes are static).
        wrapper.writeline(f"{name}.run([{', '.join(args)}], ({', '.join(sizes)},))")


class OpenCLScheduling(SIMDScheduling):
    kernel_type = OpenCLKernel  # type: ignore[assignment]

    def define_kernel(self, src_code: str, node_schedule: Any, kernel: OpenCLKernel) -> str:
        wrapper = V.graph.wrapper_code
        if src_code in wrapper.src_to_kernel:
            return wrapper.src_to_kernel[src_code]
        # Named after the ops it fuses, as Inductor names Triton kernels (profiles show kernel
        # names), cut to fit the runtime's 63-character kernel names.
        fused = ""
        if config.triton.descriptive_names:
            fused = get_fused_kernel_name(node_schedule, config.triton.descriptive_names)[:40].rstrip("_")
        kind = "red" if kernel.inside_reduction else "poi"
        name = "_".join(part for part in ("axon", kind, fused, wrapper.next_kernel_suffix()) if part)
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
