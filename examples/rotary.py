"""Rotary position embedding (RoPE) of q and k in one OpenCL C kernel, as a differentiable torch op.

Llama and GPT-NeoX rotate each head's two halves (x1, x2) of q and k by a position's angles:

    rotate_half(x) = cat(-x2, x1)
    out = x * cos + rotate_half(x) * sin          cos, sin: (seq, head_dim) tables

In PyTorch ops that is a slice, a negation, a concatenation, two products and a sum per tensor,
each a pass through memory; here one launch reads q, k and the tables once and writes both
results. The example shows, in order:

1. the kernel: a work-item per run of rows of q and k together, each row in vectors of the
   pairs (d, d + head_dim / 2); ``-D`` options pick the storage dtype (float, half or
   bfloat16; the arithmetic is float) and the vector width. On the default device, a CPU,
   this is about five times faster than a work-item per pair, which PoCL would have to
   vectorise across work-items itself;
2. ``torch.axon.compile_shader`` building it once per device and dtype, and the launch;
3. ``torch.library.custom_op`` + ``register_fake`` + ``register_autograd``. The backward is the
   same kernel: rotary is linear in x, and its transpose is the rotation by the sine table with
   its halves swapped and negated (for the usual tables, whose halves are equal, rotary with
   -sin), which the kernel applies when its ``transpose`` argument is set.

Run ``python examples/rotary.py`` to time it against the PyTorch composition.
"""

from __future__ import annotations

import functools

import torch
from best_time import best_ms
from torch import Tensor

KERNELS = r"""
/* Build options: -DDT_F32, -DDT_F16 or -DDT_BF16 (the storage type T; arithmetic is in float)
 * and -DVW=<1, 2, 4, 8 or 16, dividing head_dim / 2>: the vector width. LOADV(p, i) reads
 * p[i .. i + VW - 1] as floats, STOREV(p, i, v) writes them. */
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#if VW == 1
#define VF float
#define VU uint
#define VUS ushort
#define VLOAD(p, i) (p)[i]
#define VSTORE(p, i, v) ((p)[i] = (v))
#define AS_VF as_float
#define AS_VU as_uint
#define TO_VU(u) ((uint)(u))
#define TO_VUSHORT(u) ((ushort)(u))
#else
#define VF CAT(float, VW)
#define VU CAT(uint, VW)
#define VUS CAT(ushort, VW)
#define VLOAD(p, i) CAT(vload, VW)(0, (p) + (i))
#define VSTORE(p, i, v) CAT(vstore, VW)(v, 0, (p) + (i))
#define AS_VF CAT(as_float, VW)
#define AS_VU CAT(as_uint, VW)
#define TO_VU CAT(convert_uint, VW)
#define TO_VUSHORT CAT(convert_ushort, VW)
#endif

#if defined(DT_F16)
#define T half
#if VW == 1
#define LOADV(p, i) vload_half(0, (p) + (i))
#define STOREV(p, i, v) vstore_half_rte(v, 0, (p) + (i))
#else
#define LOADV(p, i) CAT(vload_half, VW)(0, (p) + (i))
#define STOREV(p, i, v) CAT(CAT(vstore_half, VW), _rte)(v, 0, (p) + (i))
#endif
#elif defined(DT_BF16)
#define T ushort /* bfloat16: the high half of a float */
#define LOADV(p, i) AS_VF(TO_VU(VLOAD(p, i)) << 16)
#define STOREV(p, i, v) VSTORE(p, i, to_bf16(v))
inline VUS to_bf16(VF x) { /* round to nearest even; a NaN stays a NaN */
  VU u = AS_VU(x);
  VU rounded = (u + 0x7fff + ((u >> 16) & 1)) >> 16, nan = (u >> 16) | 0x40;
  return TO_VUSHORT(select(rounded, nan, AS_VU(isnan(x))));
}
#else
#define T float
#define LOADV VLOAD
#define STOREV VSTORE
#endif

/* Rows 0 .. q_rows - 1 are q's (batch * heads * seq of them), the rest k's; a row's position is
 * row % seq. A work-item takes rows_per_item rows and each row in vectors of VW pairs (d,
 * d + half_dim): on a CPU one work-item per group runs them as plain SIMD code. With
 * transpose set it applies the op's transpose (its backward): out1 = x1 c1 + x2 s2,
 * out2 = x2 c2 - x1 s1. */
__kernel void rotary(__global T *q_out, __global T *k_out, __global const T *q,
                     __global const T *k, __global const T *cos_table,
                     __global const T *sin_table, long q_rows, long k_rows, long seq, long half_dim,
                     long rows_per_item, int transpose) {
  long first = get_global_id(0) * rows_per_item;
  long last = min(first + rows_per_item, q_rows + k_rows);
  for (long row = first; row < last; row++) {
    int is_q = row < q_rows;
    long r = is_q ? row : row - q_rows, n = 2 * half_dim;
    __global const T *x = (is_q ? q : k) + r * n;
    __global T *out = (is_q ? q_out : k_out) + r * n;
    __global const T *c = cos_table + r % seq * n, *s = sin_table + r % seq * n;
    for (long d = 0; d < half_dim; d += VW) {
      VF x1 = LOADV(x, d), x2 = LOADV(x, d + half_dim);
      VF s1 = LOADV(s, d), s2 = LOADV(s, d + half_dim);
      if (transpose) {
        VF t = s1;
        s1 = -s2;
        s2 = -t;
      }
      STOREV(out, d, x1 * LOADV(c, d) - x2 * s1);
      STOREV(out, d + half_dim, x2 * LOADV(c, d + half_dim) + x1 * s2);
    }
  }
}
"""

_DTYPE_OPTIONS = {torch.float32: "-DDT_F32", torch.float16: "-DDT_F16", torch.bfloat16: "-DDT_BF16"}


@functools.cache
def _library(device_index: int, dtype: torch.dtype, width: int):
    """The kernel for one device, dtype and vector width, built on first use (and cached on
    disk by Axon)."""
    with torch.axon.device(device_index):
        return torch.axon.compile_shader(KERNELS, options=f"{_DTYPE_OPTIONS[dtype]} -DVW={width}")


def _layout(device_index: int, rows: int) -> tuple[int, int, int]:
    """(rows per work-item, work-items, work-items per group). PoCL pays about a microsecond a
    group and runs a group's work-items as a loop, so a CPU device takes groups of one
    work-item, each over a run of rows (about 512 per compute unit); a GPU a row per
    work-item in groups of 64."""
    props = torch.axon.get_device_properties(device_index)
    if props.is_cpu:
        per_item = -(-rows // (512 * props.max_compute_units))
        return per_item, -(-rows // per_item), 1
    return 1, -(-rows // 64) * 64, 64


def _check(q: Tensor, k: Tensor, cos: Tensor, sin: Tensor) -> None:
    if q.dtype not in _DTYPE_OPTIONS or any(t.dtype != q.dtype for t in (k, cos, sin)):
        raise TypeError(
            "rotary takes q, k, cos and sin of one dtype, float32, float16 or bfloat16; "
            f"got {q.dtype}, {k.dtype}, {cos.dtype}, {sin.dtype}"
        )
    if q.dim() != 4 or k.dim() != 4 or q.shape[0] != k.shape[0] or q.shape[2:] != k.shape[2:]:
        raise ValueError(
            "rotary takes q of (batch, heads, seq, head_dim) and k of (batch, kv_heads, seq, head_dim), "
            f"got {tuple(q.shape)} and {tuple(k.shape)}"
        )
    if q.shape[3] % 2 or cos.shape != q.shape[2:] or sin.shape != q.shape[2:]:
        raise ValueError(
            f"rotary takes an even head_dim and cos, sin of (seq, head_dim) = {tuple(q.shape[2:])}, "
            f"got {tuple(cos.shape)} and {tuple(sin.shape)}"
        )


def _launch(q: Tensor, k: Tensor, cos: Tensor, sin: Tensor, transpose: bool) -> tuple[Tensor, Tensor]:
    _check(q, k, cos, sin)
    q, k, cos, sin = (t.contiguous() for t in (q, k, cos, sin))
    q_out, k_out = torch.empty_like(q), torch.empty_like(k)
    seq, half = q.shape[2], q.shape[3] // 2
    q_rows, k_rows = q.numel() // (2 * half or 1), k.numel() // (2 * half or 1)
    if half and q_rows + k_rows:
        device = q.device.index
        per_item, items, group = _layout(device, q_rows + k_rows)
        width = next(w for w in (16, 8, 4, 2, 1) if half % w == 0)
        _library(device, q.dtype, width).rotary(
            q_out, k_out, q, k, cos, sin, q_rows, k_rows, seq, half, per_item, int(transpose),
            threads=items, group_size=group,
        )  # fmt: skip
    return q_out, k_out


@torch.library.custom_op("axon_examples::rotary", mutates_args=(), device_types="axon")
def _rotary_op(q: Tensor, k: Tensor, cos: Tensor, sin: Tensor) -> tuple[Tensor, Tensor]:
    return _launch(q, k, cos, sin, transpose=False)


@_rotary_op.register_fake
def _(q, k, cos, sin):
    _check(q, k, cos, sin)
    return q.new_empty(q.shape), k.new_empty(k.shape)


@torch.library.custom_op("axon_examples::rotary_transpose", mutates_args=(), device_types="axon")
def _rotary_transpose_op(grad_q: Tensor, grad_k: Tensor, cos: Tensor, sin: Tensor) -> tuple[Tensor, Tensor]:
    """The backward as an op of its own, so that a compiled graph's backward holds one node."""
    return _launch(grad_q, grad_k, cos, sin, transpose=True)


@_rotary_transpose_op.register_fake
def _(grad_q, grad_k, cos, sin):
    _check(grad_q, grad_k, cos, sin)
    return grad_q.new_empty(grad_q.shape), grad_k.new_empty(grad_k.shape)


def _setup_context(ctx, inputs, output):
    q, k, cos, sin = inputs
    tables_need_grad = ctx.needs_input_grad[2] or ctx.needs_input_grad[3]
    ctx.save_for_backward(cos, sin, *((q, k) if tables_need_grad else (None, None)))


def _backward(ctx, grad_q, grad_k):
    cos, sin, q, k = ctx.saved_tensors
    dq, dk = _rotary_transpose_op(grad_q, grad_k, cos, sin)
    dcos = dsin = None
    if ctx.needs_input_grad[2] or ctx.needs_input_grad[3]:
        # Tables rarely need gradients; PyTorch ops suffice: sums over batch and heads.
        dcos = (grad_q * q).sum((0, 1)) + (grad_k * k).sum((0, 1))
        dsin = (grad_q * _rotate_half(q)).sum((0, 1)) + (grad_k * _rotate_half(k)).sum((0, 1))
    return dq, dk, dcos, dsin


_rotary_op.register_autograd(_backward, setup_context=_setup_context)


def apply_rotary(q: Tensor, k: Tensor, cos: Tensor, sin: Tensor) -> tuple[Tensor, Tensor]:
    """(q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin) in one kernel, for q of
    (batch, heads, seq, head_dim), k of (batch, kv_heads, seq, head_dim) and cos, sin of
    (seq, head_dim)."""
    return _rotary_op(q, k, cos, sin)


def _rotate_half(x: Tensor) -> Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def reference_rotary(q: Tensor, k: Tensor, cos: Tensor, sin: Tensor) -> tuple[Tensor, Tensor]:
    """The same with PyTorch ops (Hugging Face's apply_rotary_pos_emb): what the kernel replaces."""
    return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin


def rotary_tables(seq: int, head_dim: int, base: float = 10000.0, device=None) -> tuple[Tensor, Tensor]:
    """Llama's cos and sin tables of (seq, head_dim): angle t * base^(-2i / head_dim), i < head_dim / 2,
    repeated for the two halves."""
    inv_freq = base ** -(torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(seq, dtype=torch.float32), inv_freq)
    emb = torch.cat((angles, angles), dim=-1)
    return emb.cos().to(device), emb.sin().to(device)


def main() -> None:
    torch.manual_seed(0)
    q, k = (torch.randn(1, 8, 2048, 64, device="axon") for _ in range(2))
    cos, sin = rotary_tables(2048, 64, device="axon")
    error = max(
        (a - b).abs().max().item()
        for a, b in zip(apply_rotary(q, k, cos, sin), reference_rotary(q, k, cos, sin), strict=True)
    )
    fused = best_ms(functools.partial(apply_rotary, q, k, cos, sin))
    reference = best_ms(functools.partial(reference_rotary, q, k, cos, sin))
    print(
        f"q, k of {tuple(q.shape)}: apply_rotary {fused:.2f} ms, PyTorch ops {reference:.2f} ms, max |diff| {error:.1e}"
    )


if __name__ == "__main__":
    main()
