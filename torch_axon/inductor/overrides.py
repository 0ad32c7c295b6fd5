"""Inductor's ops as OpenCL C expressions.

Values live in their compute type (``COMPUTE_TYPE``): float16 and bfloat16 compute in float,
as PyTorch's own kernels do, and are rounded where Inductor converts to them. Every expression
is typed, because OpenCL C has no ``auto``: the kernel declares each variable with the C type
of its dtype (``kernel.TypedCSE``).
"""

from __future__ import annotations

import itertools
import math

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


def _is_float(x: object) -> bool:
    dtype = getattr(x, "dtype", None)
    return dtype is not None and dtype.is_floating_point


def _promoted(*values: object) -> torch.dtype:
    dtypes = [v.dtype for v in values if getattr(v, "dtype", None) is not None]
    result = dtypes[0] if dtypes else torch.float32
    for d in dtypes[1:]:
        result = torch.promote_types(result, d)
    return result


def _cast_all(*values: object) -> list[str]:
    """Operands cast to their promoted compute type (C's own promotions differ from torch's)."""
    ctype = compute_type(_promoted(*values))
    return [f"(({ctype})({v}))" if isinstance(v, CSEVariable) else str(v) for v in values]


def _float_or_int_fn(float_form: str, int_form: str):
    """A binary op written one way for floats (operands promoted) and another for integers."""

    def fn(a, b) -> str:
        if _is_float(a) or _is_float(b):
            x, y = _cast_all(a, b)
            return float_form.format(x=x, y=y)
        return int_form.format(a=a, b=b)

    return staticmethod(fn)


def _float_binary_fn(name: str):
    def fn(a, b) -> str:
        x, y = _cast_all(a, b)
        return f"{name}({x}, {y})"

    return staticmethod(fn)


def _float_operand(x: CSEVariable) -> str:
    return str(x) if _is_float(x) else f"(AXON_FLOAT_T)({x})"


def _exp(x: CSEVariable, operand: str) -> str:
    """exp of operand (x, or an expression of x's type): a float's in straight-line code, which
    vectorises where the library's call does not (axon_exp_float in prelude.py)."""
    if _is_float(x) and x.dtype != torch.float64:
        return f"axon_exp_float({operand})"
    return f"exp({operand if _is_float(x) else f'(AXON_FLOAT_T)({operand})'})"


def _float_fn(name: str):
    def fn(x: CSEVariable) -> str:
        return f"{name}({_float_operand(x)})"

    return staticmethod(fn)


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
        var = V.kernel.cse.generate(V.kernel.compute, index, bounds=get_bounds_index_expr(expr), dtype=torch.int64)
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
        key = f"{mask}:{scoped.getvalue()}:{other_str}"
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

    # Arithmetic where C differs from Python or from torch.
    @staticmethod
    def truediv(a, b) -> str:
        x, y = _cast_all(a, b)
        return f"({x} / {y})"

    @staticmethod
    def floordiv(a, b) -> str:
        if _is_float(a) or _is_float(b):
            x, y = _cast_all(a, b)
            return f"floor({x} / {y})"
        return f"axon_floordiv((long)({a}), (long)({b}))"

    @staticmethod
    def truncdiv(a, b) -> str:
        return f"(({a}) / ({b}))"

    @staticmethod
    def mod(a, b) -> str:
        return OpenCLOverrides.fmod(a, b)

    @staticmethod
    def maximum(a, b) -> str:
        x, y = _cast_all(a, b)
        if _is_float(a) or _is_float(b):  # NaN wins, as in torch.maximum
            return f"((isnan({x}) || {x} > {y}) ? {x} : {y})"
        return f"({x} > {y} ? {x} : {y})"

    @staticmethod
    def minimum(a, b) -> str:
        x, y = _cast_all(a, b)
        if _is_float(a) or _is_float(b):
            return f"((isnan({x}) || {x} < {y}) ? {x} : {y})"
        return f"({x} < {y} ? {x} : {y})"

    @staticmethod
    def abs(x) -> str:
        return f"fabs({x})" if _is_float(x) else f"(({x}) < 0 ? -({x}) : ({x}))"

    @staticmethod
    def sign(x) -> str:
        ctype = compute_type(getattr(x, "dtype", None))
        zero_or_one = f"(({ctype})((({x}) > 0) - (({x}) < 0)))"
        return f"(isnan({x}) ? ({x}) : {zero_or_one})" if _is_float(x) else zero_or_one

    @staticmethod
    def signbit(x) -> str:
        return f"(signbit({x}) != 0)" if _is_float(x) else f"(({x}) < 0)"

    @staticmethod
    def isnan(x) -> str:
        return f"(isnan({x}) != 0)" if _is_float(x) else "0"

    @staticmethod
    def isinf(x) -> str:
        return f"(isinf({x}) != 0)" if _is_float(x) else "0"

    @staticmethod
    def exp(x) -> str:
        return _exp(x, str(x))

    @staticmethod
    def sigmoid(x) -> str:
        t = "double" if getattr(x, "dtype", None) == torch.float64 else "float"
        return f"(({t})1 / (({t})1 + {_exp(x, f'-({x})')}))"

    @staticmethod
    def relu(x) -> str:
        return OpenCLOverrides.maximum(x, ops.constant(0, x.dtype))

    @staticmethod
    def round(x) -> str:
        return f"rint({x})" if _is_float(x) else str(x)

    @staticmethod
    def floor(x) -> str:
        return f"floor({x})" if _is_float(x) else str(x)

    @staticmethod
    def ceil(x) -> str:
        return f"ceil({x})" if _is_float(x) else str(x)

    @staticmethod
    def trunc(x) -> str:
        return f"trunc({x})" if _is_float(x) else str(x)

    @staticmethod
    def logical_and(a, b) -> str:
        return f"(({a}) && ({b}))"

    @staticmethod
    def logical_or(a, b) -> str:
        return f"(({a}) || ({b}))"

    @staticmethod
    def logical_xor(a, b) -> str:
        return f"((({a}) != 0) != (({b}) != 0))"

    @staticmethod
    def logical_not(a) -> str:
        return f"(!({a}))"

    @staticmethod
    def rand(seed, offset) -> str:
        return f"axon_rand((long)({seed}), (long)({offset}))"

    @staticmethod
    def randn(seed, offset) -> str:
        return f"axon_randn((long)({seed}), (long)({offset}))"

    @staticmethod
    def randint64(seed, offset, low, high) -> str:
        return f"axon_randint64((long)({seed}), (long)({offset}), (long)({low}), (long)({high}))"

    @staticmethod
    def erf(x) -> str:  # Axon's vectorisable float form (kernels/float_math.cl)
        return f"erf({x})" if getattr(x, "dtype", None) == torch.float64 else f"erf_float((float)({x}))"

    @staticmethod
    def square(x) -> str:
        return f"(({x}) * ({x}))"

    @staticmethod
    def reciprocal(x) -> str:
        return f"(1 / ({x}))"


for _name in (
    "exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin acos atan sinh cosh tanh "
    "asinh acosh atanh erfc lgamma tgamma"
).split():
    setattr(OpenCLOverrides, _name, _float_fn(_name))
OpenCLOverrides.libdevice_exp = OpenCLOverrides.exp
for _name in ("atan2", "hypot", "copysign", "nextafter"):
    setattr(OpenCLOverrides, _name, _float_binary_fn(_name))
OpenCLOverrides.fmod = _float_or_int_fn("fmod({x}, {y})", "(({a}) % ({b}))")
OpenCLOverrides.remainder = _float_or_int_fn("axon_fremainder({x}, {y})", "axon_floormod((long)({a}), (long)({b}))")
OpenCLOverrides.pow = _float_or_int_fn("pow({x}, {y})", "axon_ipow((long)({a}), (long)({b}))")


def _special_fn(template: str):
    """A special function from kernels/special.cl, computed in float (float64 values refuse:
    the float definitions would downcast them)."""

    def fn(*args) -> str:
        if any(getattr(a, "dtype", None) == torch.float64 for a in args):
            raise NotImplementedError("axon: compiled kernels compute special functions in float32 only so far")
        V.kernel.uses_special_functions = True
        return template.format(*(f"((float)({a}))" for a in args))

    return staticmethod(fn)


# Inductor's op -> the eager kernel's definition (kernels/special.cl, its ew_* kernels).
SPECIAL_FUNCTIONS = {
    "erfinv": "erfinv_of({0})",
    "ndtri": "ndtri_of({0})",
    "log_ndtr": "log_ndtr_of({0})",
    "erfcx": "erfcx_of({0})",
    "digamma": "digamma_of({0})",
    "polygamma": "polygamma_of((int){0}, {1})",
    "zeta": "zeta_of({0}, {1})",
    "igamma": "igamma_of({0}, {1}, 0)",
    "igammac": "igamma_of({0}, {1}, 1)",
    "i0": "bessel_i(0, {0}, 0)",
    "i0e": "bessel_i(0, {0}, 1)",
    "i1": "bessel_i(1, {0}, 0)",
    "i1e": "bessel_i(1, {0}, 1)",
    "modified_bessel_i0": "bessel_i(0, {0}, 0)",
    "modified_bessel_i1": "bessel_i(1, {0}, 0)",
    "modified_bessel_k0": "bessel_k(0, {0}, 0)",
    "modified_bessel_k1": "bessel_k(1, {0}, 0)",
    "scaled_modified_bessel_k0": "bessel_k(0, {0}, 1)",
    "scaled_modified_bessel_k1": "bessel_k(1, {0}, 1)",
    "bessel_j0": "bessel_j(0, {0})",
    "bessel_j1": "bessel_j(1, {0})",
    "bessel_y0": "bessel_y(0, {0})",
    "bessel_y1": "bessel_y(1, {0})",
    "airy_ai": "airy_ai_of({0})",
    "spherical_bessel_j0": "spherical_j0_of({0})",
    "chebyshev_polynomial_t": "chebyshev_t_of({0}, (long){1})",
    "chebyshev_polynomial_u": "chebyshev_u_of({0}, (long){1})",
    "chebyshev_polynomial_v": "chebyshev_v_of({0}, (long){1})",
    "chebyshev_polynomial_w": "chebyshev_w_of({0}, (long){1})",
    "shifted_chebyshev_polynomial_t": "chebyshev_t_of({0} + {0} - 1, (long){1})",
    "shifted_chebyshev_polynomial_u": "chebyshev_u_of({0} + {0} - 1, (long){1})",
    "shifted_chebyshev_polynomial_v": "chebyshev_v_of({0} + {0} - 1, (long){1})",
    "shifted_chebyshev_polynomial_w": "chebyshev_w_of({0} + {0} - 1, (long){1})",
    "hermite_polynomial_h": "hermite_of({0}, (long){1}, 2.0f)",
    "hermite_polynomial_he": "hermite_of({0}, (long){1}, 1.0f)",
    "laguerre_polynomial_l": "laguerre_of({0}, (long){1})",
    "legendre_polynomial_p": "legendre_of({0}, (long){1})",
}
for _name, _template in SPECIAL_FUNCTIONS.items():
    setattr(OpenCLOverrides, _name, _special_fn(_template))
