"""Reading a user's OpenCL C: its kernels and their parameters, and the one rewrite Axon makes.

Axon's runtime passes each buffer as (memory, byte offset), since a tensor may start anywhere
in its allocation and OpenCL 1.2 has no pointer to hand over. The user writes a plain
``__global float *x``; the rewrite turns that parameter into ``x`` 's memory and offset and
declares ``x`` itself as the body's first statement. Each change stays on the lines it came
from, so the compiler's line numbers are the user's own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GLOBAL, LOCAL, SCALAR = "global", "local", "scalar"

_ADDRESS = {
    "__global": GLOBAL,
    "global": GLOBAL,
    "__constant": GLOBAL,
    "constant": GLOBAL,
    "__local": LOCAL,
    "local": LOCAL,
}
_OPAQUE = re.compile(r"\b(image[123]d\w*_t|sampler_t|pipe|queue_t|clk_event_t)\b")
_KERNEL = re.compile(r"\b(?:__kernel|kernel)\b")
_HEADER = re.compile(
    r"\s*(?:__attribute__\s*\(\(.*?\)\)\s*)*void\s+(?:__attribute__\s*\(\(.*?\)\)\s*)*([A-Za-z_]\w*)\s*\(",
    re.S,
)
_NAME = re.compile(r"([A-Za-z_]\w*)\s*$")


class KernelSourceError(ValueError):
    """A kernel declaration Axon cannot take (an image argument, a pointer without address space)."""


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # GLOBAL (a tensor), LOCAL (bytes of __local memory) or SCALAR (a number)
    type_text: str  # as declared, without the name: "__global const float *restrict"
    element: str  # GLOBAL / LOCAL: the element type as written ("float", "T"); SCALAR: the type


@dataclass(frozen=True)
class KernelDecl:
    name: str
    params: tuple[Param, ...]
    line: int  # 1-based, for messages
    fixed_group: bool  # declares reqd_work_group_size: launches take exactly that size


def mask(source: str) -> str:
    """The source with comments, string and character literals and preprocessor lines blanked
    (newlines kept), so that searching it finds only code at the same positions."""
    out = list(source)
    i, n = 0, len(source)

    def blank(a: int, b: int) -> None:
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    at_line_start = True
    while i < n:
        c = source[i]
        if at_line_start and c == "#":
            j = i
            while j < n and not (source[j] == "\n" and source[j - 1] != "\\"):
                j += 1
            blank(i, j)
            i = j
            continue
        if c in " \t":
            i += 1
            continue
        at_line_start = c == "\n"
        if source.startswith("//", i):
            j = source.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif source.startswith("/*", i):
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and source[j] != c:
                j += 2 if source[j] == "\\" else 1
            blank(i, min(j + 1, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


def _closing(text: str, open_at: int) -> int:
    """Index of the bracket closing the one at open_at."""
    depth = 0
    pairs = {"(": ")", "{": "}", "[": "]"}
    for k in range(open_at, len(text)):
        if text[k] in pairs:
            depth += 1
        elif text[k] in ")}]":
            depth -= 1
            if depth == 0:
                return k
    raise KernelSourceError("unbalanced brackets in the kernel source")


def _split_params(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of the comma-separated parameters in text[start:end], brackets respected."""
    spans, depth, first = [], 0, start
    for k in range(start, end):
        if text[k] in "([{":
            depth += 1
        elif text[k] in ")]}":
            depth -= 1
        elif text[k] == "," and depth == 0:
            spans.append((first, k))
            first = k + 1
    spans.append((first, end))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _param(text: str, kernel: str) -> Param:
    body = " ".join(text.split())
    if _OPAQUE.search(body):
        raise KernelSourceError(f"kernel {kernel}: parameter `{body}`: images, samplers and pipes are not supported")
    m = _NAME.search(body)
    if not m:
        raise KernelSourceError(f"kernel {kernel}: parameter `{body}` has no name")
    name, type_text = m.group(1), body[: m.start()].rstrip()
    words = re.findall(r"[A-Za-z_]\w*|\*", type_text)
    space = next((_ADDRESS[w] for w in words if w in _ADDRESS), None)
    qualifiers = {"const", "volatile", "restrict", "__restrict", "unsigned", "signed", *_ADDRESS}
    element = " ".join(w for w in words if w not in qualifiers and w != "*")
    if "unsigned" in words:
        element = "u" + (element or "int")
    if "*" in words:
        if space is None:
            raise KernelSourceError(
                f"kernel {kernel}: pointer parameter `{name}` needs an address space (__global, __constant or __local)"
            )
        return Param(name, space, type_text, element)
    if space is not None:
        raise KernelSourceError(f"kernel {kernel}: parameter `{name}` is in {space} memory but not a pointer")
    return Param(name, SCALAR, type_text, element)


def _cast_type(type_text: str) -> str:
    """The pointer type of a parameter for a cast: without restrict, and without qualifiers of
    the pointer itself (those after the last '*')."""
    head, star, _tail = type_text.rpartition("*")
    return re.sub(r"\b(?:restrict|__restrict)\b", "", head).strip() + " *"


def parse(source: str) -> tuple[str, dict[str, KernelDecl]]:
    """(the source as Axon builds it, its kernels by name)."""
    masked = mask(source)
    edits: list[tuple[int, int, str]] = []
    kernels: dict[str, KernelDecl] = {}
    for found in _KERNEL.finditer(masked):
        header = _HEADER.match(masked, found.end())
        if not header:
            continue
        name, open_at = header.group(1), header.end() - 1
        close_at = _closing(masked, open_at)
        params = []
        for a, b in _split_params(masked, open_at + 1, close_at):
            if masked[a:b].strip() == "void":
                continue
            p = _param(masked[a:b], name)
            params.append(p)
            if p.kind == GLOBAL:
                edits.append((a, b, f" {p.type_text} axon_base_{p.name}, ulong axon_offset_{p.name}"))
        after = re.compile(r"\s*(?:__attribute__\s*\(\(.*?\)\)\s*)*([{;])", re.S).match(masked, close_at + 1)
        if after and after.group(1) == "{":
            # Whole statements on the brace's own line: the line count stays.
            prologue = "".join(
                f" {p.type_text} {p.name} = ({_cast_type(p.type_text)})"
                f"(({_space_uchar(p.type_text)})axon_base_{p.name} + axon_offset_{p.name});"
                for p in params
                if p.kind == GLOBAL
            )
            if prologue:
                edits.append((after.end(1), after.end(1), prologue))
            if name in kernels:
                raise KernelSourceError(f"kernel {name} is defined twice")
            line = source.count("\n", 0, found.start()) + 1
            fixed = "reqd_work_group_size" in masked[found.start() : close_at]
            kernels[name] = KernelDecl(name, tuple(params), line, fixed)
    out = source
    for a, b, text in sorted(edits, reverse=True):
        out = out[:a] + text + out[b:]
    return out, kernels


def _space_uchar(type_text: str) -> str:
    space = "__constant" if re.search(r"\b(?:__constant|constant)\b", type_text) else "__global"
    return f"{space} uchar *"
