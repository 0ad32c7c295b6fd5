/*
 * Counter-based random numbers (Philox-4x32-10). Element i of a call with (seed, offset)
 * uses counter offset + i, so a value depends only on the seed and its position in the
 * stream, never on the launch geometry, and a shard starting at position p reproduces the
 * whole tensor's elements when given offset + p.
 */

inline uint4 philox(ulong counter, ulong seed) {
  uint4 c = (uint4)((uint)counter, (uint)(counter >> 32), 0u, 0u);
  uint2 k = (uint2)((uint)seed, (uint)(seed >> 32));
  for (int r = 0; r < 10; r++) {
    uint hi0 = mul_hi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
    uint hi1 = mul_hi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
    c = (uint4)(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k += (uint2)(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}

/* Uniform in (0, 1]: never 0, so log() below is finite. */
inline float unit_float(uint x) { return ((float)(x >> 8) + 1.0f) * (1.0f / 16777216.0f); }

#ifdef IS_FLOAT
__kernel void random_fill(BUF(o), ew_geom g, ulong seed, ulong offset, int kind, CT a, CT b) {
  long i = get_global_id(0);
  if (i >= g.numel) return;
  long off[1];
  ew_offsets(&g, i, 1, off);
  uint4 r = philox(offset + (ulong)i, seed);
  CT v;
  if (kind == 0) { /* uniform [a, b) */
    v = a + (b - a) * (CT)(1.0f - unit_float(r.x));
  } else if (kind == 1) { /* normal(mean a, std b), Box-Muller */
    float u1 = unit_float(r.x), u2 = unit_float(r.y);
    v = a + b * (CT)(sqrt(-2.0f * log(u1)) * cospi(2.0f * u2));
  } else if (kind == 2) { /* bernoulli(p = a) */
    v = (CT)(1.0f - unit_float(r.x) < a ? 1 : 0);
  } else { /* exponential(rate a): -log(u) / a, u in (0, 1] */
    v = (CT)(-log(unit_float(r.x)) / (float)a);
  }
  STORE(PTR(o), off[0], v);
}
#endif

/* Integers (issue 3): base + (r mod range) with 64 random bits r, or base + r (wrapping) when
 * range is 0 (random_ over the whole int64 range). Stored in any dtype (floats hold integers
 * up to 2^mantissa exactly; the caller limits the range). */
__kernel void random_int_fill(BUF(o), ew_geom g, ulong seed, ulong offset, ulong range, long base) {
  long i = get_global_id(0);
  if (i >= g.numel) return;
  long off[1];
  ew_offsets(&g, i, 1, off);
  uint4 r = philox(offset + (ulong)i, seed);
  ulong bits = (ulong)r.x | ((ulong)r.y << 32);
  long v = (long)((ulong)base + (range ? bits % range : bits));
  STORE(PTR(o), off[0], v);
}
