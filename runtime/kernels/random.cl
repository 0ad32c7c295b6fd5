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

/* Uniform in the open interval (0, 1), odd multiples of 2^-24: u - 0.5 is exact and never
 * +-0.5, so tan(pi (u - 0.5)) stays finite, and log(u) < 0. */
inline float open_unit_float(uint x) { return ((float)(x >> 9) + 0.5f) * (1.0f / 8388608.0f); }

/* Standard normal from two uniforms (Box-Muller). */
inline float std_normal(uint4 r) {
  return sqrt(-2.0f * log(unit_float(r.x))) * cospi(2.0f * unit_float(r.y));
}

#ifdef IS_FLOAT
/* kind: axon_random_kind (0-3), then axon_distribution (4-6); a, b as documented there. */
KERNEL(random_fill)(BUF(o), STRUCT_ARG(ew_geom, g), ulong seed, ulong offset, int kind, CT a,
                    CT b) {
  PRIVATE_STRUCT(ew_geom, g);
  long i = get_global_id(0);
  if (i >= g.numel) return;
  long off[1];
  ew_offsets(&g, i, 1, off);
  uint4 r = philox(offset + (ulong)i, seed);
  CT v;
  switch (kind) {
    case 0: /* uniform [a, b) */
      v = a + (b - a) * (CT)(1.0f - unit_float(r.x));
      break;
    case 1: /* normal(mean a, std b) */
      v = a + b * (CT)std_normal(r);
      break;
    case 2: /* bernoulli(p = a) */
      v = (CT)(1.0f - unit_float(r.x) < a ? 1 : 0);
      break;
    case 3: /* exponential(rate a): -log(u) / a, u in (0, 1] */
      v = (CT)(-log(unit_float(r.x)) / (float)a);
      break;
    case 4: /* cauchy(median a, scale b): the inverse CDF */
      v = a + b * (CT)tanpi(open_unit_float(r.x) - 0.5f);
      break;
    case 5: /* log-normal: exp of normal(mean a, std b) */
      v = exp(a + b * (CT)std_normal(r));
      break;
    default: /* geometric(p = a): the inverse CDF ceil(log(u) / log(1 - p)), at least 1 */
      v = (CT)fmax(ceil(log(open_unit_float(r.x)) / log1p(-(float)a)), 1.0f);
      break;
  }
  STORE(PTR(o), off[0], v);
}
#endif

/* Integers (issue 3): base + (r mod range) with 64 random bits r, or base + r (wrapping) when
 * range is 0 (random_ over the whole int64 range). Stored in any dtype (floats hold integers
 * up to 2^mantissa exactly; the caller limits the range). */
KERNEL(random_int_fill)(BUF(o), STRUCT_ARG(ew_geom, g), ulong seed, ulong offset, ulong range,
                        long base) {
  PRIVATE_STRUCT(ew_geom, g);
  long i = get_global_id(0);
  if (i >= g.numel) return;
  long off[1];
  ew_offsets(&g, i, 1, off);
  uint4 r = philox(offset + (ulong)i, seed);
  ulong bits = (ulong)r.x | ((ulong)r.y << 32);
  long v = (long)((ulong)base + (range ? bits % range : bits));
  STORE(PTR(o), off[0], v);
}
