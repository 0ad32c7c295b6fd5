"""OpenCL C every generated kernel starts with: index arithmetic with Python's rounding,
float16 / bfloat16 storage and rounding, the float type index expressions convert to, atomics,
Philox, and Axon's own float math (the runtime's kernels/float_math.cl, shared with the eager
kernels)."""

import functools
import re


@functools.cache
def prelude() -> str:
    """The prelude as kernels carry it: its comments explain it here and stay out of every
    generated kernel's source (and so out of the code Inductor prints and caches)."""
    from .. import _C

    return re.sub(r"/\*.*?\*/\n?", "", PRELUDE, flags=re.S) + "\n" + _C._kernel_file("float_math")


@functools.cache
def special_functions() -> str:
    """The eager special functions' definitions (kernels/special.cl), in float, without its
    kernels: only the kernels that call a special function include them (they are long)."""
    from .. import _C

    stubs = "".join(f"#define {m}(...)\n" for m in ("UNARY", "BINARY", "VUNARY", "VBINARY"))
    return "typedef float CT;\n#define IS_FLOAT 1\n" + stubs + _C._kernel_file("special")


PRELUDE = r"""
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define AXON_FLOAT_T double
#else
#define AXON_FLOAT_T float
#endif
inline long axon_floordiv(long a, long b) {
  long q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline long axon_floormod(long a, long b) {
  long r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
inline int axon_floordiv_int(int a, int b) {
  int q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int axon_floormod_int(int a, int b) {
  int r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
inline long axon_labs(long a) {
  return a < 0 ? -a : a;
}
inline long axon_ipow(long a, long b) {
  long r = 1;
  for (; b > 0; b >>= 1, a *= a)
    if (b & 1) r *= a;
  return r;
}
/* torch.remainder of floats: fmod, moved to the divisor's sign. */
#define axon_fremainder(a, b) \
  ((fmod((a), (b)) != 0 && ((b) < 0) != (fmod((a), (b)) < 0)) ? fmod((a), (b)) + (b) : fmod((a), (b)))
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
/* store mode "atomic_add" (scatter_add and index_put with accumulation): compare-and-swap
 * loops for floats, the atomic add for 32-bit integers. */
inline void axon_atomic_add_float(volatile __global float *p, float v) {
  uint old, next;
  do {
    old = as_uint(*p);
    next = as_uint(as_float(old) + v);
  } while (atomic_cmpxchg((volatile __global uint *)p, old, next) != old);
}
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
/* exp of a float as straight-line arithmetic, within 2 ulp: n = x / ln2 rounded by adding and
 * taking away 1.5 * 2^23 (rint is a call under PoCL), r = x - n ln2 in two parts (Cody-Waite),
 * e^r by Cephes' degree-6 polynomial, 2^n made in the exponent bits in two halves so results
 * that overflow or fall to subnormals round once. The library's exp is a call per element
 * (4M floats: 2.6 ms under PoCL; this form 1.9). Below -104 the result is 0 (e^-104 is under
 * half the least subnormal) from a zero factor: the product of the two halves underflowing to
 * zero costs x86 a microcode assist per element, and masked softmax takes e^-inf for every
 * masked score (attention's causal softmax, 6144 rows of 256: 10.7 ms, 4.7 without). */
inline float axon_exp_float(float x) {
  float xc = fmin(fmax(x, -104.0f), 89.0f);
  float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = fma(n, -0.693359375f, xc);
  r = fma(n, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = fma(p, r, 1.3981999507e-3f);
  p = fma(p, r, 8.3334519073e-3f);
  p = fma(p, r, 4.1665795894e-2f);
  p = fma(p, r, 1.6666665459e-1f);
  p = fma(p, r, 5.0000001201e-1f);
  p = fma(p, r * r, r + 1.0f);
  int k = (int)n, k1 = k >> 1;
  float y = p * as_float(x < -104.0f ? 0 : (k1 + 127) << 23) * as_float((k - k1 + 127) << 23);
  return x != x ? x : y;
}
#define AXON_LOAD_F16(p, i) vload_half((i), (p))
#define AXON_STORE_F16(p, i, v) vstore_half_rte((float)(v), (i), (p))
#define AXON_LOAD_BF16(p, i) as_float(((uint)(p)[i]) << 16)
#define AXON_STORE_BF16(p, i, v) ((p)[i] = (ushort)axon_bf16_bits((float)(v)))
"""
