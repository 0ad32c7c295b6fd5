"""Operator workloads: each makes, for a device, a call of one operator (or a short chain) on
inputs built there beforehand. ``work`` is what one call does (bytes moved or floating-point
operations), so a median time becomes a rate comparable with the ceilings.

The elementwise rows (add, the relu chain) and sgemm write into outputs made beforehand, on both
backends: they time the kernels. From 1e6 elements the add and chain rows also come in an
``allocating`` form, a new output per call as plain eager code has it: on Axon from its caching
allocator, on the CPU a fresh buffer whose pages fault in on every call (from 1e7 elements that
costs more than the kernel). The other rows allocate their outputs as their ops are usually called.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass
class OpWorkload:
    name: str
    group: str
    unit: str  # "GB/s", "GFLOP/s" or "us/op" (then work is 0 and time per call is the figure)
    work: float  # bytes or flops per call
    make: Callable[[str], Callable[[], object]]


def _rand(*shape: int, device: str) -> torch.Tensor:
    return torch.rand(shape, generator=torch.Generator().manual_seed(0)).to(device)


ALLOCATING = " allocating"  # the name's suffix of a row whose op allocates its output on every call
ALLOCATING_FROM = 1_000_000  # elements: the add and chain rows' allocating forms from this size


def _add(n: int, allocating: bool = False) -> OpWorkload:
    def make(device: str):
        a, b = _rand(n, device=device), _rand(n, device=device)
        if allocating:
            return lambda: torch.add(a, b)
        c = torch.empty(n, device=device)
        return lambda: torch.add(a, b, out=c)

    return OpWorkload(f"add {n:.0e}" + ALLOCATING * allocating, "elementwise", "GB/s", 12.0 * n, make)


def _chain(n: int, allocating: bool = False) -> OpWorkload:
    """Four ops a compiler would fuse; work counts a fused kernel's traffic (3 reads, 1 write),
    so the rate shows how far eager execution is from that. Preallocated: a * b into an output
    made beforehand, then + c, relu and * 0.5 in place there (the same four kernels and the same
    traffic as the allocating form, no allocation); allocating: relu(a * b + c) * 0.5 as written,
    four new tensors per call."""

    def make(device: str):
        a, b, c = (_rand(n, device=device) for _ in range(3))
        if allocating:
            return lambda: torch.relu(a * b + c) * 0.5
        o = torch.empty(n, device=device)

        def call():
            torch.mul(a, b, out=o)
            return o.add_(c).relu_().mul_(0.5)

        return call

    return OpWorkload(f"chain relu(a*b+c)*0.5 {n:.0e}" + ALLOCATING * allocating, "elementwise", "GB/s", 16.0 * n, make)


def _mm(n: int) -> OpWorkload:
    def make(device: str):
        a, b, c = _rand(n, n, device=device), _rand(n, n, device=device), torch.empty(n, n, device=device)
        return lambda: torch.mm(a, b, out=c)

    return OpWorkload(f"sgemm {n}", "matmul", "GFLOP/s", 2.0 * n**3, make)


def _bmm(batch: int, m: int, k: int, n: int) -> OpWorkload:
    def make(device: str):
        a, b = _rand(batch, m, k, device=device), _rand(batch, k, n, device=device)
        return lambda: torch.bmm(a, b)

    return OpWorkload(f"bmm {batch}x{m}x{k}x{n}", "matmul", "GFLOP/s", 2.0 * batch * m * k * n, make)


def _rowwise(name: str, rows: int, cols: int, fn: Callable[[torch.Tensor, str], Callable[[], object]]) -> OpWorkload:
    return OpWorkload(
        f"{name} {rows}x{cols}", "nn", "GB/s", 8.0 * rows * cols, lambda d: fn(_rand(rows, cols, device=d), d)
    )


def _softmax(x: torch.Tensor, device: str):
    return lambda: torch.softmax(x, dim=-1)


def _layer_norm(x: torch.Tensor, device: str):
    norm = torch.nn.LayerNorm(x.shape[-1]).to(device)
    return lambda: norm(x)


def _conv(batch: int, cin: int, cout: int, hw: int, kernel: int, stride: int) -> OpWorkload:
    out_hw = (hw + 2 * (kernel // 2) - kernel) // stride + 1
    flops = 2.0 * batch * cout * out_hw * out_hw * cin * kernel * kernel

    def make(device: str):
        x, w = _rand(batch, cin, hw, hw, device=device), _rand(cout, cin, kernel, kernel, device=device)
        return lambda: F.conv2d(x, w, stride=stride, padding=kernel // 2)

    name = f"conv2d {batch}x{cin}x{hw}x{hw} -> {cout} k{kernel} s{stride}"
    return OpWorkload(name, "conv", "GFLOP/s", flops, make)


def _embedding_backward(vocab: int, dim: int, tokens: int) -> OpWorkload:
    def make(device: str):
        grad = _rand(tokens, dim, device=device)
        index = torch.randint(vocab, (tokens,), generator=torch.Generator().manual_seed(1)).to(device)
        return lambda: torch.ops.aten.embedding_dense_backward(grad, index, vocab, -1, False)

    return OpWorkload(f"embedding backward {vocab}x{dim}, {tokens} tokens", "nn", "GB/s",
                      4.0 * (tokens * dim + vocab * dim), make)  # fmt: skip


def _dispatch() -> OpWorkload:
    def make(device: str):
        a, b = _rand(1, device=device), _rand(1, device=device)
        return lambda: a + b

    return OpWorkload("dispatch: 1-element add", "dispatch", "us/op", 0.0, make)


def workloads(quick: bool) -> list[OpWorkload]:
    sizes = [10_000, 1_000_000] if quick else [10_000, 100_000, 1_000_000, 10_000_000, 40_000_000]
    gemms = [64, 128] if quick else [256, 512, 1024, 2048]
    rows = (256, 256) if quick else (4096, 1024)
    out = [_dispatch()]
    for form in (_add, _chain):
        for n in sizes:
            out.append(form(n))
            if n >= ALLOCATING_FROM:
                out.append(form(n, allocating=True))
    out += [_mm(n) for n in gemms]
    out.append(_bmm(4, 32, 32, 32) if quick else _bmm(32, 256, 256, 256))
    out.append(_rowwise("softmax", *rows, _softmax))
    out.append(_rowwise("layer norm", *rows, _layer_norm))
    if quick:
        out.append(_conv(1, 8, 8, 16, 3, 1))
    else:  # ResNet-18 at batch 8: the stem and a 3x3 conv of each stage
        out += [
            _conv(8, 3, 64, 224, 7, 2),
            _conv(8, 64, 64, 56, 3, 1),
            _conv(8, 128, 128, 28, 3, 1),
            _conv(8, 256, 256, 14, 3, 1),
            _conv(8, 512, 512, 7, 3, 1),
        ]
    out.append(_embedding_backward(512, 32, 256) if quick else _embedding_backward(32000, 512, 2048))
    return out
