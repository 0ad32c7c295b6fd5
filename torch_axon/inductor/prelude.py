"""OpenCL C every generated kernel starts with: float16 / bfloat16 storage and rounding, the
float type index expressions convert to, atomics, Philox, and the math of every pointwise op
(the runtime's kernels/pointwise_math.cl, which the eager kernels include too: overrides.py
calls its macros by the pointwise table)."""

import functools
import re

import torch


def _without_comments(source: str) -> str:
    return re.sub(r"/\*.*?\*/\n?", "", source, flags=re.S)


@functools.cache
def prelude() -> str:
    """The prelude as kernels carry it: its comments explain it here and stay out of every
    generated kernel's source (and so out of the code Inductor prints and caches)."""
    from .. import _C

    return _without_comments(PRELUDE + "\n" + _C._kernel_file("pointwise_math"))


# The types special.cl is instantiated in for compiled kernels.
SPECIAL_COMPUTE_TYPES = (torch.float32, torch.float64)


@functools.cache
def special_functions(compute_type: torch.dtype) -> str:
    """The special functions' math (kernels/special.cl, the eager kernels' own) in `compute_type`
    (float32 or float64), as the eager kernels of that dtype compute it: only the kernels that
    call a special function include it (it is long). special.cl is written in one type CT, so a
    kernel holds one instance: where it calls float64 ones, its float32 calls are computed in
    double as well and rounded to float (Inductor rarely fuses the two in one kernel)."""
    from .. import _C

    ctype = "double" if compute_type == torch.float64 else "float"
    return _without_comments(f"typedef {ctype} CT;\n#define IS_FLOAT 1\n" + _C._kernel_file("special"))


PRELUDE = r"""
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define AXON_FLOAT_T double
#else
#define AXON_FLOAT_T float
#endif
/* float16 values are floats rounded to half precision (round to nearest even). */
inline float axon_round_half(float x) {
  ushort bits;
  vstore_half_rte(x, 0, (__private half *)&bits);
  return vload_half(0, (__private const half *)&bits);
}
/* bfloat16: the upper 16 bits of a float, rounded to nearest even; NaN stays NaN. */
inline uint axon_bf16_bits(float x) {
  uint u = as_uint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x40u;
  return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}
inline float axon_round_bf16(float x) {
  return as_float(axon_bf16_bits(x) << 16);
}
/* The lanes of a vector from `first` on, to p[first..7] (the vectorised pointwise kernels: the
 * last work-item's lanes it shares with the one before are computed again and not stored). */
inline void axon_vstore8_from(float8 v, __global float *p, int first) {
  if (first <= 0) {
    vstore8(v, 0, p);
    return;
  }
  float lanes[8];
  vstore8(v, 0, lanes);
  for (int j = first; j < 8; j++) p[j] = lanes[j];
}
/* store mode "atomic_add" (scatter_add and index_put with accumulation): compare-and-swap
 * loops for floats, the atomic add for 32-bit integers. */
inline void axon_atomic_add_float(volatile __global float *p, float v) {
  uint old, next;
  do {
    old = as_uint(*p);
    next = as_uint(as_float(old) + v);
  } while (atomic_cmpxchg((volatile __global uint *)p, old, next) != old);
}
/* float16 and bfloat16 have no 16-bit compare-and-swap: the loop swaps the aligned 32-bit word
 * holding the element (little-endian: the element at byte 2 of the word is its upper half) and
 * keeps the other half as it was; allocations are whole multiples of 512 bytes, so the word
 * never reaches past a buffer. */
#define AXON_ATOMIC_ADD_16(NAME, T, TO_FLOAT, FROM_FLOAT)                                  \
  inline void NAME(volatile __global T *p, float v) {                                      \
    volatile __global uint *word = (volatile __global uint *)((ulong)p & ~(ulong)3);     \
    uint shift = ((ulong)p & 2) ? 16u : 0u, old, next;                                    \
    do {                                                                                  \
      old = *word;                                                                        \
      float sum = TO_FLOAT((old >> shift) & 0xffffu) + v;                                 \
      next = (old & ~(0xffffu << shift)) | ((FROM_FLOAT(sum) & 0xffffu) << shift);        \
    } while (atomic_cmpxchg(word, old, next) != old);                                     \
  }
inline float axon_f16_from_bits(uint bits) {
  ushort b = (ushort)bits;
  return vload_half(0, (__private const half *)&b);
}
inline uint axon_f16_bits(float x) {
  ushort b;
  vstore_half_rte(x, 0, (__private half *)&b);
  return b;
}
#define AXON_BF16_FROM_BITS(bits) as_float((bits) << 16)
AXON_ATOMIC_ADD_16(axon_atomic_add_f16, half, axon_f16_from_bits, axon_f16_bits)
AXON_ATOMIC_ADD_16(axon_atomic_add_bf16, ushort, AXON_BF16_FROM_BITS, axon_bf16_bits)
inline void axon_atomic_add_int(volatile __global int *p, int v) {
  atomic_add(p, v);
}
#if defined(cl_khr_int64_base_atomics)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
inline void axon_atomic_add_long(volatile __global long *p, long v) {
  atom_add(p, v);
}
#ifdef cl_khr_fp64
inline void axon_atomic_add_double(volatile __global double *p, double v) {
  ulong old, next;
  do {
    old = as_ulong(*p);
    next = as_ulong(as_double(old) + v);
  } while (atom_cmpxchg((volatile __global ulong *)p, old, next) != old);
}
#endif
#endif
/* Inductor's random numbers (ops.rand / randn / randint64 of a seed and an element offset):
 * Philox-4x32-10 of the offset under the seed, so each element's draw is independent of the
 * launch shape. */
inline uint4 axon_philox(long seed, long offset) {
  uint2 key = (uint2)((uint)seed, (uint)(seed >> 32));
  uint4 c = (uint4)((uint)offset, (uint)(offset >> 32), 0u, 0u);
  for (int round = 0; round < 10; round++) {
    ulong p0 = (ulong)0xD2511F53u * c.x, p1 = (ulong)0xCD9E8D57u * c.z;
    c = (uint4)((uint)(p1 >> 32) ^ c.y ^ key.x, (uint)p1, (uint)(p0 >> 32) ^ c.w ^ key.y, (uint)p0);
    key += (uint2)(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}
inline float axon_rand(long seed, long offset) { /* [0, 1) */
  return (float)(axon_philox(seed, offset).x >> 8) * (1.0f / 16777216.0f);
}
inline float axon_randn(long seed, long offset) { /* Box-Muller */
  uint4 r = axon_philox(seed, offset);
  float u1 = (float)((r.x >> 8) + 1u) * (1.0f / 16777216.0f), u2 = (float)(r.y >> 8) * (1.0f / 16777216.0f);
  return sqrt(-2.0f * log(u1)) * cos(6.283185307179586f * u2);
}
inline long axon_randint64(long seed, long offset, long low, long high) {
  uint4 r = axon_philox(seed, offset);
  ulong bits = ((ulong)r.x << 32) | r.y;
  return low + (long)(bits % (ulong)(high - low));
}
#define AXON_LOAD_F16(p, i) vload_half((i), (p))
#define AXON_STORE_F16(p, i, v) vstore_half_rte((float)(v), (i), (p))
#define AXON_LOAD_BF16(p, i) as_float(((uint)(p)[i]) << 16)
#define AXON_STORE_BF16(p, i, v) ((p)[i] = (ushort)axon_bf16_bits((float)(v)))
"""
