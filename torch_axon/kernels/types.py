"""OpenCL C's types as kernel arguments see them: the scalar and vector types numbers convert to,
and which tensor dtypes a pointer's element type accepts."""

from __future__ import annotations

import re
import struct

import torch

# struct format letters of OpenCL C's scalar types (little-endian, as every OpenCL device Axon
# drives is; the runtime copies the bytes as they are).
SCALARS = {
    "char": "b",
    "uchar": "B",
    "short": "h",
    "ushort": "H",
    "int": "i",
    "uint": "I",
    "long": "q",
    "ulong": "Q",
    "half": "e",
    "float": "f",
    "double": "d",
}
INTEGERS = {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong"}
# Spellings the compiler may report for the same types.
ALIASES = {
    "unsigned char": "uchar",
    "unsigned short": "ushort",
    "unsigned int": "uint",
    "unsigned long": "ulong",
    "signed char": "char",
    "unsigned": "uint",
}
# The launch's own letters for the common types (source_kernels.cpp converts them without
# Python packing); other types go as packed bytes ('r').
LAUNCH_LETTERS = {"int": "i", "long": "l", "float": "f", "double": "d"}

# Which tensor dtypes a pointer to each element type accepts: the dtype whose bytes are that
# type. uchar and void pointers take any tensor as bytes.
POINTEE_DTYPES = {
    "float": (torch.float32,),
    "double": (torch.float64,),
    "half": (torch.float16,),
    "ushort": (torch.uint16, torch.bfloat16, torch.float16),
    "short": (torch.int16,),
    "int": (torch.int32,),
    "uint": (torch.uint32,),
    "long": (torch.int64,),
    "ulong": (torch.uint64,),
    "char": (torch.int8,),
}
RAW_POINTEES = {"uchar", "void"}

# The OpenCL C type a dtype's elements are computed in by the elementwise machinery (CT in
# runtime/kernels/common.cl): half types compute in float.
COMPUTE_TYPES = {
    torch.float32: "float",
    torch.float64: "double",
    torch.float16: "float",
    torch.bfloat16: "float",
    torch.int64: "long",
    torch.int32: "int",
    torch.int16: "short",
    torch.int8: "char",
    torch.uint8: "uchar",
    torch.bool: "uchar",
}

_VECTOR = re.compile(r"^([a-z]+?)(2|3|4|8|16)$")


def split_vector(type_name: str) -> tuple[str, int]:
    """("float", 4) for "float4"; ("int", 1) for "int"."""
    name = ALIASES.get(type_name, type_name)
    m = _VECTOR.match(name)
    if m and m.group(1) in SCALARS:
        return m.group(1), int(m.group(2))
    return name, 1


def is_number_type(type_name: str) -> bool:
    return split_vector(type_name)[0] in SCALARS


def pack(type_name: str, value, what: str) -> bytes:
    """The bytes of `value` as OpenCL type `type_name` (a scalar or a vector of a sequence of
    numbers). TypeError for a value of the wrong kind, ValueError for one out of range; `what`
    names the parameter in the message."""
    base, lanes = split_vector(type_name)
    values = _lanes(value, lanes, type_name, what)
    integral = base in INTEGERS
    for v in values:
        if integral and not isinstance(v, int):
            raise TypeError(f"{what} is {type_name}: needs an integer, got {type(v).__name__} {v!r}")
        if not isinstance(v, (int, float)):
            raise TypeError(f"{what} is {type_name}: needs a number, got {type(v).__name__}")
    # A 3-vector takes a 4-vector's room (OpenCL C 6.1.5).
    stored = 4 if lanes == 3 else lanes
    fmt = "<" + SCALARS[base] * stored
    try:
        return struct.pack(fmt, *values, *([0] * (stored - lanes)))
    except (struct.error, OverflowError) as e:
        raise ValueError(f"{what} is {type_name}: {values if lanes > 1 else values[0]!r} does not fit ({e})") from None


def _lanes(value, lanes: int, type_name: str, what: str) -> list:
    if isinstance(value, torch.Tensor):
        if value.device.type != "cpu":
            raise TypeError(
                f"{what} is {type_name}, a number: got a tensor on {value.device} (reading it would "
                "wait for the device; pass a Python number)"
            )
        value = value.tolist()
    if lanes == 1:
        if isinstance(value, (list, tuple)):
            raise TypeError(f"{what} is {type_name}, a number: got a sequence")
        return [_plain(value)]
    if not isinstance(value, (list, tuple)) or len(value) != lanes:
        raise TypeError(f"{what} is {type_name}: needs a sequence of {lanes} numbers, got {value!r}")
    return [_plain(v) for v in value]


def _plain(v):
    """Python's own int or float for bools and numpy scalars (which struct does not take)."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    for kind in (int, float):
        if hasattr(v, "__index__") and kind is int:
            return int(v)
        if hasattr(v, "__float__") and kind is float:
            return float(v)
    return v
