"""Index and size expressions (sympy) printed as OpenCL C.

A kernel's index arithmetic is 32-bit (``int``) where Inductor proves it fits (the kernel's
``_index_dtype``, as for Triton), else 64-bit (``long``); sizes arrive as ``long`` arguments.
Index values used as data (``index_expr``: arange, masks built from positions) are printed in
64 bits whatever the kernel's index type (``widen``), as Inductor means them.
"""

from __future__ import annotations

import sympy
from sympy.printing.precedence import PRECEDENCE
from torch.utils._sympy.functions import FloorDiv
from torch.utils._sympy.printers import ExprPrinter


def _truncation_floors(x: sympy.Expr, div: sympy.Expr) -> bool:
    """Whether C's truncating / and % give Python's floor division and modulo: a numerator
    known non-negative (index variables are) over a positive divisor. They are cheaper than
    the sign-correcting helpers, and compilers vectorise them by constants."""
    return bool(x.is_nonnegative) and bool(div.is_positive)


class OpenCLExprPrinter(ExprPrinter):
    """sympy -> OpenCL C. Integer division floors (Python's semantics), as Inductor means it.
    `index_type` is the C type index arithmetic runs in; `widen` prints every symbol as a
    ``long`` so that values computed from indices cannot overflow an ``int``."""

    def __init__(self, index_type: str = "long", widen: bool = False) -> None:
        super().__init__()
        self.index_type = index_type
        self.widen = widen

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        name = super()._print_Symbol(expr)
        return f"((long){name})" if self.widen else name

    def _div(self, x: sympy.Expr, div: sympy.Expr, op: str) -> str:
        t, xs, ds = self.index_type, self.doprint(x), self.doprint(div)
        if _truncation_floors(x, div):
            return f"(({t})({xs}) {op} ({t})({ds}))"
        # Python's floor division and modulo: the integer helpers of pointwise_math.cl
        # (overloaded for int and long), which the eager div_floor and remainder kernels use.
        helper = "axon_int_floor_divide" if op == "/" else "axon_int_remainder"
        return f"{helper}(({t})({xs}), ({t})({ds}))"

    def _print_FloorDiv(self, expr: sympy.Expr) -> str:
        if expr.is_integer:
            return self._div(*expr.args, "/")
        x, div = (self.doprint(a) for a in expr.args)
        return f"(floor({x}) / ({div}))"

    def _print_ModularIndexing(self, expr: sympy.Expr) -> str:
        x, div, mod = expr.args
        if div != 1:
            x = FloorDiv(x, div)  # stays non-negative with x
        return self._div(x, mod, "%")

    def _print_CleanDiv(self, expr: sympy.Expr) -> str:
        return self._print_FloorDiv(expr)

    def _print_min_max(self, expr: sympy.Expr, fn: str) -> str:
        args = [f"({self.index_type})({self.doprint(a)})" for a in expr.args]
        result = args[0]
        for arg in args[1:]:
            result = f"{fn}({result}, {arg})"
        return result

    def _print_Min(self, expr: sympy.Expr) -> str:
        return self._print_min_max(expr, "min")

    def _print_Max(self, expr: sympy.Expr) -> str:
        return self._print_min_max(expr, "max")

    def _print_Abs(self, expr: sympy.Expr) -> str:
        x = self.doprint(expr.args[0])
        return f"PW_INT_abs(long, ((long)({x})), , , , )"

    def _print_RoundToInt(self, expr: sympy.Expr) -> str:
        return f"(long)rint({self.doprint(expr.args[0])})"

    def _print_RoundDecimal(self, expr: sympy.Expr) -> str:
        number, ndigits = expr.args
        number_str = self.parenthesize(number, PRECEDENCE["Mul"])
        return f"(rint(1e{ndigits} * {number_str}) * 1e{-ndigits})"

    def _print_IntTrueDiv(self, expr: sympy.Expr) -> str:
        lhs, rhs = (self.doprint(a) for a in expr.args)
        return f"((AXON_FLOAT_T)({lhs}) / (AXON_FLOAT_T)({rhs}))"

    def _print_PowByNatural(self, expr: sympy.Expr) -> str:
        x, y = (self.doprint(a) for a in expr.args)
        return f"axon_int_pow((long)({x}), (long)({y}))"

    def _print_ToFloat(self, expr: sympy.Expr) -> str:
        return f"((AXON_FLOAT_T)({self.doprint(expr.args[0])}))"

    def _print_Float(self, expr: sympy.Expr) -> str:
        return str(int(expr)) if expr.is_integer else repr(float(expr))

    def _print_FloorToInt(self, expr: sympy.Expr) -> str:
        return f"(long)floor((AXON_FLOAT_T)({self.doprint(expr.args[0])}))"

    _print_floor = _print_FloorToInt

    def _print_CeilToInt(self, expr: sympy.Expr) -> str:
        return f"(long)ceil((AXON_FLOAT_T)({self.doprint(expr.args[0])}))"

    _print_ceiling = _print_CeilToInt

    def _print_TruncToInt(self, expr: sympy.Expr) -> str:
        return f"(long)trunc((AXON_FLOAT_T)({self.doprint(expr.args[0])}))"

    def _print_Where(self, expr: sympy.Expr) -> str:
        c, p, q = (self.parenthesize(a, PRECEDENCE["Atom"] - 0.5) for a in expr.args)
        return f"({c} ? {p} : {q})"

    def _print_Identity(self, expr: sympy.Expr) -> str:
        return self.doprint(expr.args[0])

    def _print_PythonMod(self, expr: sympy.Expr) -> str:
        return self._div(*expr.args, "%")

    def _print_FloatPow(self, expr: sympy.Expr) -> str:
        x, y = (self.doprint(a) for a in expr.args)
        return f"pow((AXON_FLOAT_T)({x}), (AXON_FLOAT_T)({y}))"

    def _print_TruncToFloat(self, expr: sympy.Expr) -> str:
        return f"trunc((AXON_FLOAT_T)({self.doprint(expr.args[0])}))"

    def _print_Not(self, expr: sympy.Expr) -> str:
        return f"!({self.doprint(expr.args[0])})"

    def _print_And(self, expr: sympy.Expr) -> str:
        return self.stringify(expr.args, " && ", PRECEDENCE["And"])

    def _print_Or(self, expr: sympy.Expr) -> str:
        return self.stringify(expr.args, " || ", PRECEDENCE["Or"])

    def _print_Infinity(self, expr: sympy.Expr) -> str:
        return "INFINITY"

    def _print_NegativeInfinity(self, expr: sympy.Expr) -> str:
        return "(-INFINITY)"

    def _print_BooleanTrue(self, expr: sympy.Expr) -> str:
        return "1"

    def _print_BooleanFalse(self, expr: sympy.Expr) -> str:
        return "0"
