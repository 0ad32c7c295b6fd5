"""A fused residual add + RMSNorm written in OpenCL C and registered as a differentiable torch op.

Llama-style models normalise the residual stream before attention and before the MLP:

    h = x + residual
    y = h * rsqrt(mean(h^2, last dim) + eps) * weight

Written with PyTorch ops that is seven kernels, each a trip through memory; here it is one
kernel forward (reads x and residual, writes y and h and one rstd per row) and two backward.
The example shows, in order:

1. the kernels: plain OpenCL C, one source for float32 and float64 (``-DT=double``), a
   work-group per block of rows (one work-item on CPU devices, where it runs eight lanes at a
   time in ``float8`` vectors; 32 to 256 on GPUs, which share each row and reduce through
   ``__local`` memory);
2. ``torch.axon.compile_shader`` building them once per device and dtype, and launches with
   ``threads=`` / ``group_size=``;
3. ``torch.library.custom_op`` + ``register_fake`` + ``register_autograd``: the op works in
   eager mode, under autograd (its backward is a second custom op) and inside
   ``torch.compile`` as one node, dynamic shapes included;
4. ``LlamaBlock``: a decoder layer that uses either the fused op or the PyTorch composition,
   and ``main()``, which trains a tiny Llama both ways and prints the losses.

Run it with ``python examples/fused_rmsnorm.py``.
"""

from __future__ import annotations

import functools
import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

KERNELS = r"""
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef T
#define T float
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define T2 CAT(T, 2)
#define T4 CAT(T, 4)
#define T8 CAT(T, 8)

inline T lanes_sum(T8 v) {
  T4 a = v.lo + v.hi;
  T2 b = a.lo + a.hi;
  return b.x + b.y;
}

/* Sum over the work-group (its size a power of two); every work-item gets the sum. */
inline T group_sum(__local T *scratch, T v) {
  int lid = get_local_id(0), size = get_local_size(0);
  if (size == 1) return v;
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = size / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  v = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return v;
}

/* Work-group g takes rows [g * rows_per_group, ...); its work-items share each row: item i
 * takes the 8-element chunks i, i + size, ... and the tail elements past n / 8 * 8 likewise.
 * Rows are contiguous, so vload8 needs only element alignment. */
#define ROWS_OF_GROUP                                                          \
  long lid = get_local_id(0), step = get_local_size(0), body = n / 8 * 8;      \
  long first = get_group_id(0) * rows_per_group;                               \
  long last = min(first + rows_per_group, rows);

__kernel void add_rmsnorm_forward(__global T *y, __global T *h, __global T *rstd,
                                  __global const T *x, __global const T *res,
                                  __global const T *w, long rows, long n,
                                  long rows_per_group, T eps, __local T *scratch) {
  ROWS_OF_GROUP
  for (long r = first; r < last; r++) {
    __global const T *xr = x + r * n, *rr = res + r * n;
    __global T *hr = h + r * n, *yr = y + r * n;
    T8 acc = 0;
    T tail = 0;
    for (long j = lid * 8; j < body; j += step * 8) {
      T8 v = vload8(0, xr + j) + vload8(0, rr + j);
      acc += v * v;
    }
    for (long j = body + lid; j < n; j += step) {
      T v = xr[j] + rr[j];
      tail += v * v;
    }
    T s = rsqrt(group_sum(scratch, lanes_sum(acc) + tail) / (T)n + eps);
    if (lid == 0) rstd[r] = s;
    /* x + r again rather than storing h above and reading it back: the row is still in
     * cache, and on a CPU (PoCL) the store-then-reload made the kernel about 15% slower. */
    for (long j = lid * 8; j < body; j += step * 8) {
      T8 v = vload8(0, xr + j) + vload8(0, rr + j);
      vstore8(v, 0, hr + j);
      vstore8(v * s * vload8(0, w + j), 0, yr + j);
    }
    for (long j = body + lid; j < n; j += step) {
      T v = xr[j] + rr[j];
      hr[j] = v;
      yr[j] = v * s * w[j];
    }
  }
}

/* With g = gy * w: dh = s * g - h * s^3 * sum(g * h) / n, plus gh (the gradient reaching h
 * as an output). dx = dresidual = dh. Each group also sums gy * h * s over its rows into its
 * own row of `partial`; column_sum adds those rows up into dweight. */
__kernel void add_rmsnorm_backward(__global T *dh, __global T *partial,
                                   __global const T *gy, __global const T *gh,
                                   __global const T *h, __global const T *w,
                                   __global const T *rstd, long rows, long n,
                                   long rows_per_group, int has_gh, __local T *scratch) {
  ROWS_OF_GROUP
  __global T *pr = partial + get_group_id(0) * n;
  for (long r = first; r < last; r++) {
    __global const T *gyr = gy + r * n, *ghr = gh + r * n, *hr = h + r * n;
    __global T *dhr = dh + r * n;
    T8 acc = 0;
    T tail = 0;
    for (long j = lid * 8; j < body; j += step * 8)
      acc += vload8(0, gyr + j) * vload8(0, w + j) * vload8(0, hr + j);
    for (long j = body + lid; j < n; j += step) tail += gyr[j] * w[j] * hr[j];
    T s = rstd[r];
    T c = s * s * s * group_sum(scratch, lanes_sum(acc) + tail) / (T)n;
    for (long j = lid * 8; j < body; j += step * 8) {
      T8 g = vload8(0, gyr + j), hv = vload8(0, hr + j);
      T8 d = g * vload8(0, w + j) * s - hv * c;
      if (has_gh) d += vload8(0, ghr + j);
      vstore8(d, 0, dhr + j);
      T8 p = g * hv * s;
      vstore8(r == first ? p : p + vload8(0, pr + j), 0, pr + j);
    }
    for (long j = body + lid; j < n; j += step) {
      T d = gyr[j] * w[j] * s - hr[j] * c;
      dhr[j] = has_gh ? d + ghr[j] : d;
      T p = gyr[j] * hr[j] * s;
      pr[j] = r == first ? p : p + pr[j];
    }
  }
}

/* out[j] = sum over p of partial[p, j]: a work-item per column, neighbours reading
 * neighbouring addresses (coalesced on GPUs, vectorised across work-items by PoCL). */
__kernel void column_sum(__global T *out, __global const T *partial, long parts, long n) {
  long j = get_global_id(0);
  if (j >= n) return;
  T s = 0;
  for (long p = 0; p < parts; p++) s += partial[p * n + j];
  out[j] = s;
}
"""

_CL_TYPES = {torch.float32: "float", torch.float64: "double"}


@functools.cache
def _library(device_index: int, dtype: torch.dtype):
    """The kernels for one device and dtype, built on first use (and cached on disk by Axon)."""
    with torch.axon.device(device_index):
        return torch.axon.compile_shader(KERNELS, options=f"-DT={_CL_TYPES[dtype]}")


@functools.cache
def _launch_layout(device_index: int, rows: int, n: int) -> tuple[int, int, int]:
    """(work-items per group, rows per group, groups) for `rows` rows of `n` elements.

    About eight groups per compute unit keep every unit busy and bound the number of
    grad_weight partial rows. A CPU core runs a group as a loop over its work-items, so one
    work-item per group walks its rows in vectors; a GPU gives each row a group of up to 256
    work-items, one 8-element chunk each per step.
    """
    props = torch.axon.get_device_properties(device_index)
    size = 1 if props.is_cpu else min(256, max(32, 1 << (math.ceil(n / 8) - 1).bit_length()))
    per_group = math.ceil(rows / (8 * props.max_compute_units))
    return size, per_group, math.ceil(rows / per_group)


def _check(x: Tensor, residual: Tensor, weight: Tensor) -> None:
    if x.dtype not in _CL_TYPES:
        raise TypeError(f"fused_add_rmsnorm supports float32 and float64, not {x.dtype}")
    if residual.dtype != x.dtype or weight.dtype != x.dtype:
        raise TypeError("x, residual and weight must have the same dtype")
    if residual.shape != x.shape or weight.shape != x.shape[-1:]:
        raise ValueError(
            f"expected residual of shape {tuple(x.shape)} and weight of shape {tuple(x.shape[-1:])}, "
            f"got {tuple(residual.shape)} and {tuple(weight.shape)}"
        )


@torch.library.custom_op("axon_examples::fused_add_rmsnorm", mutates_args=(), device_types="axon")
def _fused_op(x: Tensor, residual: Tensor, weight: Tensor, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """Returns (y, h, rstd); rstd (one per row) is what the backward needs besides h."""
    _check(x, residual, weight)
    x, residual, weight = x.contiguous(), residual.contiguous(), weight.contiguous()
    y, h, rstd = torch.empty_like(x), torch.empty_like(x), x.new_empty(x.shape[:-1])
    if x.numel():
        n = x.shape[-1]
        rows = x.numel() // n
        size, per_group, groups = _launch_layout(x.device.index, rows, n)
        _library(x.device.index, x.dtype).add_rmsnorm_forward(
            y, h, rstd, x, residual, weight, rows, n, per_group, eps, size * x.element_size(),
            threads=groups * size, group_size=size,
        )  # fmt: skip
    return y, h, rstd


@_fused_op.register_fake
def _(x, residual, weight, eps):
    _check(x, residual, weight)
    return x.new_empty(x.shape), x.new_empty(x.shape), x.new_empty(x.shape[:-1])


@torch.library.custom_op("axon_examples::fused_add_rmsnorm_backward", mutates_args=(), device_types="axon")
def _fused_backward_op(
    grad_y: Tensor, grad_h: Tensor | None, h: Tensor, weight: Tensor, rstd: Tensor
) -> tuple[Tensor, Tensor]:
    """Returns (grad of h's inputs, grad_weight): x and residual share the first."""
    grad_y = grad_y.contiguous()
    grad_h = None if grad_h is None else grad_h.contiguous()
    grad_x = torch.empty_like(h)
    n = h.shape[-1]
    rows = h.numel() // n if n else 0
    if rows == 0:
        return grad_x, torch.zeros_like(weight)
    grad_w = torch.empty_like(weight)
    size, per_group, groups = _launch_layout(h.device.index, rows, n)
    partial = h.new_empty(groups, n)
    lib = _library(h.device.index, h.dtype)
    lib.add_rmsnorm_backward(
        grad_x, partial, grad_y, h if grad_h is None else grad_h, h, weight, rstd, rows, n, per_group,
        int(grad_h is not None), size * h.element_size(), threads=groups * size, group_size=size,
    )  # fmt: skip
    lib.column_sum(grad_w, partial, groups, n, threads=n)
    return grad_x, grad_w


@_fused_backward_op.register_fake
def _(grad_y, grad_h, h, weight, rstd):
    return h.new_empty(h.shape), weight.new_empty(weight.shape)


def _setup_context(ctx, inputs, output):
    _, _, weight, _ = inputs
    _, h, rstd = output
    ctx.save_for_backward(h, weight, rstd)
    # An output nothing used gets None rather than a tensor of zeros to read.
    ctx.set_materialize_grads(False)


def _backward(ctx, grad_y, grad_h, _grad_rstd):
    h, weight, rstd = ctx.saved_tensors
    if grad_y is None:  # only h was used
        return grad_h, grad_h, None, None
    grad, grad_weight = _fused_backward_op(grad_y, grad_h, h, weight, rstd)
    return grad, grad, grad_weight, None


_fused_op.register_autograd(_backward, setup_context=_setup_context)


def fused_add_rmsnorm(x: Tensor, residual: Tensor, weight: Tensor, eps: float = 1e-6) -> tuple[Tensor, Tensor]:
    """(y, h): h = x + residual, y = RMSNorm(h) * weight over the last dimension, in one kernel."""
    y, h, _ = _fused_op(x, residual, weight, eps)
    return y, h


def reference_add_rmsnorm(x: Tensor, residual: Tensor, weight: Tensor, eps: float = 1e-6) -> tuple[Tensor, Tensor]:
    """The same with PyTorch ops (what the fused op replaces)."""
    h = x + residual
    return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps) * weight, h


# A Llama-style model. Each block works on the residual stream in the form fused add+norm
# kernels suit (vLLM's Llama layers): it takes (x, residual) and returns (x', residual'), and
# its output is their sum, which the next norm adds; so every norm is one add_rmsnorm call.


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(o.transpose(1, 2).reshape(b, t, d))


class SwiGLU(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate_up = nn.Linear(dim, 2 * hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)


class LlamaBlock(nn.Module):
    """RMSNorm -> causal attention -> residual -> RMSNorm -> SwiGLU MLP -> residual.

    `fused` picks the custom op or the PyTorch composition; the parameters are the same.
    """

    def __init__(self, dim: int, heads: int, hidden: int, fused: bool = True, eps: float = 1e-6):
        super().__init__()
        self.add_norm = fused_add_rmsnorm if fused else reference_add_rmsnorm
        self.eps = eps
        self.attn_norm = nn.Parameter(torch.ones(dim))
        self.attn = Attention(dim, heads)
        self.mlp_norm = nn.Parameter(torch.ones(dim))
        self.mlp = SwiGLU(dim, hidden)

    def forward(self, x: Tensor, residual: Tensor) -> tuple[Tensor, Tensor]:
        x, residual = self.add_norm(x, residual, self.attn_norm, self.eps)
        x, residual = self.add_norm(self.attn(x), residual, self.mlp_norm, self.eps)
        return self.mlp(x), residual


class TinyLlama(nn.Module):
    def __init__(self, vocab=256, dim=64, heads=4, hidden=128, layers=2, fused=True, eps=1e-6):
        super().__init__()
        self.add_norm = fused_add_rmsnorm if fused else reference_add_rmsnorm
        self.eps = eps
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(LlamaBlock(dim, heads, hidden, fused, eps) for _ in range(layers))
        self.norm = nn.Parameter(torch.ones(dim))
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens: Tensor) -> Tensor:
        x = self.embed(tokens)
        residual = torch.zeros_like(x)
        for block in self.blocks:
            x, residual = block(x, residual)
        x, _ = self.add_norm(x, residual, self.norm, self.eps)
        return self.head(x)


def train(model: nn.Module, tokens: Tensor, steps: int, lr: float = 0.1) -> list[float]:
    """Next-token training with plain SGD; returns the loss of each step."""
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main() -> None:
    torch.manual_seed(0)
    tokens = torch.randint(256, (8, 33), device="axon")
    unfused = TinyLlama(fused=False).to("axon")
    fused = TinyLlama(fused=True).to("axon")
    fused.load_state_dict(unfused.state_dict())
    compiled = TinyLlama(fused=True).to("axon")
    compiled.load_state_dict(unfused.state_dict())
    runs = {
        "unfused (PyTorch ops)": train(unfused, tokens, 5),
        "fused add+RMSNorm": train(fused, tokens, 5),
        "fused, torch.compile": train(torch.compile(compiled), tokens, 5),
    }
    for name, losses in runs.items():
        print(f"{name:24s}", " ".join(f"{v:.5f}" for v in losses))
    print("CPU fallbacks:", torch.axon.fallback_ops() or "none")


if __name__ == "__main__":
    main()
