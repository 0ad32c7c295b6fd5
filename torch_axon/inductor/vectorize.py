"""Flat float32 pointwise kernels on eight-lane vectors (CPU devices).

A pointwise kernel with lanes along x (kernel.py: sixteen neighbouring elements a work-item)
runs its body once per element. PoCL vectorises that loop where the body is straight-line
arithmetic, but a library call per element (tanh) or a long expression defeats it: compiled
`tanh` ran at 0.4x eager `tanh`, whose kernel computes eight lanes at a time with the driver's
vector library. Where every access is contiguous along x or one element for all of x (a
broadcast), every value is a float32 and every op has a vector form in the pointwise table
(the forms the eager vector kernels use, so both run the same math), the body is rewritten to
run on float8: contiguous loads become `vload8`, broadcasts a splat, comparisons give lane masks
(int8) that only a `?:` may consume (OpenCL selects per lane by the mask), stores write the lanes
the work-item owns.

The rewrite reads the scalar body line by line and refuses anything it does not know (another
type, an indirect index, a helper with no vector form, a mask used as a number): the kernel then
keeps its scalar lanes. Nothing is vectorised on a guess.
"""

from __future__ import annotations

import functools
import re

from .user_kernels import vector_name, vector_names

WIDTH = 8

_NAME = r"[A-Za-z_]\w*"
_LOAD = re.compile(rf"^float ({_NAME}) = ({_NAME})\[(.+)\];$")
_FLOAT = re.compile(rf"^float ({_NAME}) = (.+);$")
_COMPARE = re.compile(rf"^bool ({_NAME}) = ({_NAME}) (<|<=|>|>=|==|!=) ({_NAME});$")
_STORE = re.compile(rf"^if \(xmask\) ({_NAME})\[(.+)\] = \(float\)\(({_NAME})\);$")
_SELECT = re.compile(rf"\(\(({_NAME})\) \? \(({_NAME})\) : \(({_NAME})\)\)")
_IDENTIFIER = re.compile(rf"(?<![\w.]){_NAME}")
# OpenCL built-ins overloaded for float8 with the scalar meaning, and constants.
_BUILTINS = frozenset({"fabs", "fmin", "fmax", "copysign", "sqrt", "rsqrt", "fma", "floor", "ceil", "trunc"})
_CONSTANTS = frozenset({"INFINITY", "NAN"})


@functools.cache
def vector_macros() -> frozenset[str]:
    """The pointwise table's float math that has a vector form (rows VECTOR / VECTOR_ANY)."""
    from .overrides import pointwise_table

    out = set()
    for row in pointwise_table():
        form = row.forms["FLOAT"]
        if form == "VECTOR":
            out.add(f"PW_FLOAT_{row.name}")
        elif form == "VECTOR_ANY":
            out.add(f"PW_ANY_{row.name}")
    return frozenset(out)


def vector_step(body: str, indexing: str, index_type: str, lanes: int, strides: dict[str, int]) -> str | None:
    """The loop over a work-item's `lanes` elements, eight at a time, or None where the body
    (its lines as kernel.py writes them) cannot run on float8. `strides` maps each access's
    index text to its stride along x (0 or 1); `indexing` defines the index variables."""
    if lanes % WIDTH:
        return None
    index_vars = set(re.findall(rf"\b(?:int|long) ({_NAME}) =", indexing))
    floats: set[str] = set()
    masks: set[str] = set()
    pointers: set[str] = set()
    lines = []
    for raw in body.splitlines():
        line = raw.strip()
        if not line:
            continue
        if m := _LOAD.match(line):
            name, pointer, index = m.groups()
            stride = strides.get(index)
            if stride == 1:
                lines.append(f"float8 {name} = vload8(0, {pointer} + ({index}));")
            elif stride == 0:
                lines.append(f"float8 {name} = (float8)({pointer}[{index}]);")
            else:
                return None
            floats.add(name)
            pointers.add(pointer)
        elif m := _STORE.match(line):
            pointer, index, value = m.groups()
            if strides.get(index) != 1 or value not in floats:
                return None
            lines.append(f"axon_vstore8_from({value}, {pointer} + ({index}), xfirst - xindex);")
            pointers.add(pointer)
        elif m := _COMPARE.match(line):
            name, left, op, right = m.groups()
            if left not in floats or right not in floats:
                return None
            lines.append(f"int8 {name} = {left} {op} {right};")
            masks.add(name)
        elif m := _FLOAT.match(line):
            name, expr = m.groups()
            # A mask may only choose between values: as a number it would be -1, not 1.
            for cond, chosen, other in _SELECT.findall(expr):
                if cond not in masks or chosen not in floats or other not in floats:
                    return None
            if any(re.search(rf"\b{mask}\b", _SELECT.sub("", expr)) for mask in masks):
                return None
            vector = expr.replace("(float)(", "(float8)(").replace("(float, ", "(float8, ")
            # A user kernel's function (user_kernels.py) calls its float8 form, where it has one.
            vector = _IDENTIFIER.sub(lambda w: vector_name(w.group(0)) or w.group(0), vector)
            lines.append(f"float8 {name} = {vector};")
            floats.add(name)
        else:
            return None
    known = floats | masks | pointers | index_vars | vector_macros() | _BUILTINS | _CONSTANTS
    known |= {"float8", "int8", "vload8", "axon_vstore8_from", "xfirst", "xindex"} | vector_names()
    for line in lines:
        if any(word not in known for word in _IDENTIFIER.findall(line)):
            return None
    out = [f"for (int lane = 0; lane < {lanes}; lane += {WIDTH}) {{", f"    {index_type} xindex = xbase + lane;"]
    out += ["    " + line.strip() for line in indexing.splitlines() if line.strip()]
    out += ["    " + line for line in lines]
    out.append("}")
    return "\n".join(out)
