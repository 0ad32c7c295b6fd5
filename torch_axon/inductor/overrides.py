"""Inductor's ops as OpenCL C expressions.

The pointwise math is not written here: every Inductor op that names a row of the pointwise
table (the runtime's kernels/pointwise_ops.def, its inductor column) becomes a call of that
row's macro in kernels/pointwise_math.cl, the definitions the eager kernels expand too. What
stays here is what is no pointwise op: conversions, constants, index values, masks, where and
Philox random numbers.

Values live in their compute type (``COMPUTE_TYPE``): float16 and bfloat16 compute in float,
as PyTorch's own kernels do, and are rounded where Inductor converts to them. Every expression
is typed, because OpenCL C has no ``auto``: the kernel declares each variable with the C type
of its dtype (``kernel.TypedCSE``).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import re

import sympy
import torch
from torch._inductor.codegen.common import CSEVariable, IndentedBuffer, OpOverrides
from torch._inductor.utils import get_bounds_index_expr
from torch._inductor.virtualized import V, ops

from .printer import OpenCLExprPrinter

# Index values used as data (OpenCLOverrides.index_expr), printed in 64 bits.
_WIDE = OpenCLExprPrinter("long", widen=True)

# The C type a value of each dtype is computed in.
COMPUTE_TYPE = {
    torch.bool: "bool",
    torch.int8: "char",
    torch.int16: "short",
    torch.int32: "int",
    torch.int64: "long",
    torch.uint8: "uchar",
    torch.uint16: "ushort",
    torch.uint32: "uint",
    torch.uint64: "ulong",
    torch.float16: "float",
    torch.bfloat16: "float",
    torch.float32: "float",
    torch.float64: "double",
}

# The C type of a buffer element (float16 and bfloat16 are read and written by helpers).
STORAGE_TYPE = {**COMPUTE_TYPE, torch.bool: "uchar", torch.float16: "half", torch.bfloat16: "ushort"}


def compute_type(dtype: torch.dtype | None) -> str:
    if dtype is None:
        return "long"  # index arithmetic
    if dtype not in COMPUTE_TYPE:
        raise NotImplementedError(f"axon: torch.compile kernels do not handle {dtype} yet")
    return COMPUTE_TYPE[dtype]


def literal(value: bool | float | int, dtype: torch.dtype | None = None) -> str:
    """A Python value as a C literal of the dtype's compute type."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if dtype is not None and not dtype.is_floating_point and not isinstance(value, float):
        return f"(({compute_type(dtype)}){int(value)}L)"
    if isinstance(value, int) and (dtype is None or not dtype.is_floating_point):
        return f"{value}L"
    value = float(value)
    ctype = compute_type(dtype) if dtype is not None and dtype.is_floating_point else "float"
    if math.isnan(value):
        return f"(({ctype})NAN)"
    if math.isinf(value):
        return f"(({ctype}){'-' if value < 0 else ''}INFINITY)"
    return repr(value) if ctype == "double" else f"{value!r}f"


def _promoted(*values: object) -> torch.dtype:
    dtypes = [v.dtype for v in values if getattr(v, "dtype", None) is not None]
    result = dtypes[0] if dtypes else torch.float32
    for d in dtypes[1:]:
        result = torch.promote_types(result, d)
    return result


class OpenCLOverrides(OpOverrides):
    """Inductor's pointwise ops as OpenCL C source."""

    @staticmethod
    def to_dtype(x, dtype: torch.dtype, src_dtype=None, use_compute_types: bool = True) -> str:
        if dtype == torch.bool:
            return f"(({x}) != 0)"
        if dtype == torch.float16:
            return f"axon_round_half((float)({x}))"
        if dtype == torch.bfloat16:
            return f"axon_round_bf16((float)({x}))"
        return f"(({compute_type(dtype)})({x}))"

    @staticmethod
    def to_dtype_bitcast(x, dtype: torch.dtype, src_dtype: torch.dtype) -> str:
        if dtype.itemsize != src_dtype.itemsize or dtype in (torch.float16, torch.bfloat16, torch.bool):
            raise NotImplementedError(f"axon: bitcast {src_dtype} -> {dtype} in compiled kernels")
        return f"as_{compute_type(dtype)}(({compute_type(src_dtype)})({x}))"

    @staticmethod
    def constant(value, dtype: torch.dtype) -> str:
        return literal(value, dtype)

    @staticmethod
    def index_expr(expr: sympy.Expr, dtype: torch.dtype) -> str:
        # In 64 bits whatever the kernel's index type: a value made of indices (x0 * 100000)
        # may pass 2^31 where every index stays under it.
        index = _WIDE.doprint(V.kernel.rename_indexing(V.kernel.prepare_indexing(expr)))
        bounds = get_bounds_index_expr(expr)
        if dtype.is_floating_point and not expr.is_integer:
            # A value that is not a whole number (var's backward scales by 2 / (n - 1) with n a
            # dynamic size): the printer computes it in floating point; a long would truncate it.
            return V.kernel.cse.generate(
                V.kernel.compute, f"({compute_type(dtype)})({index})", bounds=bounds, dtype=dtype
            )
        var = V.kernel.cse.generate(V.kernel.compute, index, bounds=bounds, dtype=torch.int64)
        return ops.to_dtype(var, dtype)

    @staticmethod
    def value_expr(expr: sympy.Expr, dtype: torch.dtype) -> str:
        return OpenCLOverrides.index_expr(expr, dtype)

    @staticmethod
    def masked(mask, body, other) -> str:
        """body() where mask holds, else other: the body's code runs only under the mask (its
        loads may be out of bounds elsewhere)."""
        scoped = IndentedBuffer()
        with V.kernel.swap_buffers(scoped), scoped.indent():
            V.kernel.cse.iter_buffer_ids = itertools.count()
            V.kernel.cse.name_prefix += "_m"
            result = body()
        other_str = literal(other, result.dtype) if not isinstance(other, CSEVariable) else str(other)
        # The result belongs in the key: a body whose loads were all made before, outside the
        # mask, writes no code, and two such bodies (an unrolled reduction's terms, each a
        # slice's backward of its own element) differ only in the variable they return.
        key = f"{mask}:{scoped.getvalue()}:{result}:{other_str}"
        var = V.kernel.cse.try_get(key)
        if not var:
            var = V.kernel.cse.newvar(dtype=result.dtype)
            V.kernel.cse.put(key, var)
            V.kernel.compute.writelines([f"{compute_type(result.dtype)} {var};", f"if ({mask}) {{"])
            with V.kernel.compute.indent():
                V.kernel.compute.splice(scoped)
                V.kernel.compute.writeline(f"{var} = {result};")
            V.kernel.compute.writeline(f"}} else {var} = {other_str};")
        return var

    @staticmethod
    def where(a, b, c) -> str:
        b_str = b if isinstance(b, CSEVariable) else literal(b, getattr(c, "dtype", None))
        c_str = c if isinstance(c, CSEVariable) else literal(c, getattr(b, "dtype", None))
        return f"(({a}) ? ({b_str}) : ({c_str}))"

    @staticmethod
    def frexp(x) -> tuple:
        """(mantissa, exponent) of `x` from OpenCL's frexp, as the eager kernel ew_frexp computes
        them (the exponent an int32). Both results are declared once per value: Inductor asks for
        each of the two by its own call."""
        keys = (f"frexp({x})[0]", f"frexp({x})[1]")
        known = [V.kernel.cse.try_get(key) for key in keys]
        if all(var is not None for var in known):
            return tuple(known)
        ctype = compute_type(x.dtype)
        mantissa, exponent = V.kernel.cse.newvar(dtype=x.dtype), V.kernel.cse.newvar(dtype=torch.int32)
        V.kernel.compute.writelines([f"int {exponent};", f"{ctype} {mantissa} = frexp(({ctype})({x}), &{exponent});"])
        for key, var in zip(keys, (mantissa, exponent), strict=True):
            V.kernel.cse.put(key, var)
        return mantissa, exponent

    @staticmethod
    def inline_asm_elementwise(
        *inputs, asm, constraints=None, dtype=torch.float32, is_pure=True, pack=1, input_dtypes=None
    ):
        """A user kernel's OpenCL C function (user_kernels.py), named by `asm`, on values of
        the compute type `dtype`; the kernel carries its definition once."""
        from .user_kernels import function_source

        if constraints is not None or pack != 1:
            raise NotImplementedError("axon: inline assembly in compiled kernels (only user kernels' functions)")
        V.kernel.helper_functions[asm] = function_source(asm)
        ctype = compute_type(dtype)
        return f"{asm}({', '.join(f'(({ctype})({v}))' for v in inputs)})"

    @staticmethod
    def rand(seed, offset) -> str:
        return f"axon_rand((long)({seed}), (long)({offset}))"

    @staticmethod
    def randn(seed, offset) -> str:
        return f"axon_randn((long)({seed}), (long)({offset}))"

    @staticmethod
    def randint64(seed, offset, low, high) -> str:
        return f"axon_randint64((long)({seed}), (long)({offset}), (long)({low}), (long)({high}))"


# ---- the pointwise table ---------------------------------------------------------------------

# AXON_POINTWISE(name, family, arity, float, integer, bool, output, glue, aten, inductor)
_ROW = re.compile(r"^AXON_POINTWISE\((.*)\)\s*$", re.M)


@dataclasses.dataclass(frozen=True)
class PointwiseRow:
    """A row of kernels/pointwise_ops.def (its header says what each column means)."""

    name: str
    family: str
    arity: int
    forms: dict[str, str]  # "FLOAT" / "INT" / "BOOL" -> the form of that class's kernel
    inductor: tuple[str, ...]

    def math(self, dtype: torch.dtype) -> str:
        """The math macro for values of `dtype`: PW_<CLASS>_<name>, or PW_ANY_<name> where the
        row has one definition for every class."""
        cls = "FLOAT" if dtype.is_floating_point else ("BOOL" if dtype == torch.bool else "INT")
        form = self.forms[cls]
        if cls == "BOOL" and form == "INT":
            cls, form = "INT", self.forms["INT"]
        if form in ("NONE", "CUSTOM"):
            raise NotImplementedError(f"axon: {self.name} has no {dtype} definition in the pointwise table")
        return f"PW_ANY_{self.name}" if form.endswith("_ANY") else f"PW_{cls}_{self.name}"


@functools.cache
def pointwise_table() -> tuple[PointwiseRow, ...]:
    from .. import _C

    rows = []
    for match in _ROW.finditer(_C._kernel_file("pointwise_ops")):
        cells = [c.strip() for c in re.split(r',(?=(?:[^"]*"[^"]*")*[^"]*$)', match.group(1))]
        name, family, arity, float_form, int_form, bool_form = cells[:6]
        forms = {"FLOAT": float_form, "INT": int_form, "BOOL": bool_form}
        rows.append(PointwiseRow(name, family, int(arity), forms, tuple(cells[9].strip('"').split())))
    return tuple(rows)


# Inductor ops whose operands come in another order than the row's a, b, c, alpha: polygamma's
# order n comes first and is the eager kernel's alpha.
_OPERANDS = {"polygamma": lambda n, x: ((x,), n)}


def _table_op(row: PointwiseRow, inductor_name: str):
    """Inductor's op `inductor_name` as a call of the row's math: operands in their promoted
    compute type (integers in float where the row has no integer definition); special
    functions in double for float64 and in float otherwise, as their eager kernels compute them."""

    def fn(*args) -> str:
        operands, alpha = _OPERANDS.get(inductor_name, lambda *a: (a, 0))(*args)
        dtype = _promoted(*operands)
        if row.family == "special":
            if dtype != torch.float64:
                dtype = torch.float32
            V.kernel.special_compute_types.add(dtype)
        elif not dtype.is_floating_point and row.forms["INT"] == "NONE":
            dtype = torch.float32
        ctype = compute_type(dtype)
        values = [f"(({ctype})({v}))" for v in operands] + ["0"] * (3 - len(operands))
        return f"{row.math(dtype)}({ctype}, {', '.join(values)}, {alpha}, 0)"

    return staticmethod(fn)


for _row in pointwise_table():
    for _name in _row.inductor:
        setattr(OpenCLOverrides, _name, _table_op(_row, _name))
