/*
 * Max, average, adaptive average and adaptive max pooling over 1 to 3 spatial dims (padded to 3 by the
 * launcher). Forward kernels: a work-item per output element. Backward kernels: a work-item
 * per input element that gathers the gradient of every output window containing it, so no
 * atomics and a fixed summation order. Tensors are strided: in_st / out_st are the strides
 * (n, c, d0, d1, d2) of the input-space and output-space tensors. At the end, fractional max
 * pooling, which takes a descriptor of its own (pool_args.h).
 */

#include "pool_args.h"
#include "spatial_args.h"

/* Decomposes a linear index over (n, c, x0, x1, x2) of sizes sz[] and returns the offset with
 * strides st[]; the spatial coordinates go to x[]. */
inline long sp_offset(long idx, const long *sz, const long *st, long c, long *x) {
  x[2] = idx % sz[2];
  idx /= sz[2];
  x[1] = idx % sz[1];
  idx /= sz[1];
  x[0] = idx % sz[0];
  idx /= sz[0];
  long ch = idx % c, n = idx / c;
  return n * st[0] + ch * st[1] + x[0] * st[2] + x[1] * st[3] + x[2] * st[4];
}
/* Offset of the (n, c) plane of element idx, whose spatial volume is vol. */
inline long sp_plane(long idx, long vol, long c, const long *st) {
  long plane = idx / vol;
  return (plane / c) * st[0] + (plane % c) * st[1];
}

/* The maximum of output position o's window (NaN wins), its flat index within the plane to
 * *arg. Dims 0 and 1 of the window come as [lo, hi) (already clipped); dim 2 is placed here. */
inline CT max_window(const sp_geom *g, __global uchar *x, long base, const long *lo,
                     const long *hi, long o2, long *arg) {
  long lo2 = o2 * g->s[2] - g->p[2], hi2 = min(lo2 + (g->k[2] - 1) * g->d[2] + 1, g->in[2]);
  while (lo2 < 0) lo2 += g->d[2];
  CT best = CT_MIN;
  long best_i = (lo[0] * g->in[1] + lo[1]) * g->in[2] + lo2;
  for (long i0 = lo[0]; i0 < hi[0]; i0 += g->d[0])
    for (long i1 = lo[1]; i1 < hi[1]; i1 += g->d[1])
      for (long i2 = lo2; i2 < hi2; i2 += g->d[2]) {
        CT v = LOAD(x, base + i0 * g->in_st[2] + i1 * g->in_st[3] + i2 * g->in_st[4]);
        if (v > best || IS_NAN(v)) {
          best = v;
          best_i = (i0 * g->in[1] + i1) * g->in[2] + i2;
        }
      }
  *arg = best_i;
  return best;
}

/* Window rows of output element idx in dims 0 and 1; its output offset, input plane and
 * position o (o[2] its column). */
inline long max_pool_place(const sp_geom *g, long idx, long *o, long *base, long *lo, long *hi) {
  long out_at = sp_offset(idx, g->out, g->out_st, g->c, o);
  *base = sp_plane(idx, g->out[0] * g->out[1] * g->out[2], g->c, g->in_st);
  for (int d = 0; d < 2; d++) {
    lo[d] = o[d] * g->s[d] - g->p[d];
    hi[d] = min(lo[d] + (g->k[d] - 1) * g->d[d] + 1, g->in[d]);
    while (lo[d] < 0) lo[d] += g->d[d];
  }
  return out_at;
}

KERNEL(max_pool)(BUF(input), BUF(output), BUF(indices), STRUCT_ARG(sp_geom, g), long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long o[3], lo[2], hi[2], base, arg;
  long out_at = max_pool_place(&g, idx, o, &base, lo, hi);
  STORE(PTR(output), out_at, max_window(&g, PTR(input), base, lo, hi, o[2], &arg));
  ST_I64(PTR(indices), out_at, arg);
}

/* For CPU devices (the runtime chooses): a work-item per output row (a run of dim 2), so the
 * divisions that place a window are paid once per row instead of per element. */
KERNEL(max_pool_rows)(BUF(input), BUF(output), BUF(indices), STRUCT_ARG(sp_geom, g), long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long row = get_global_id(0), width = g.out[2];
  if (row * width >= total) return;
  long o[3], lo[2], hi[2], base, arg;
  long out_at = max_pool_place(&g, row * width, o, &base, lo, hi);
  for (long o2 = 0; o2 < width; o2++) {
    CT best = max_window(&g, PTR(input), base, lo, hi, o2, &arg);
    STORE(PTR(output), out_at + o2 * g.out_st[4], best);
    ST_I64(PTR(indices), out_at + o2 * g.out_st[4], arg);
  }
}

inline long adaptive_start(long o, long in, long out) { return (o * in) / out; }
inline long adaptive_end(long o, long in, long out) { return ((o + 1) * in + out - 1) / out; }

/* Outputs of one dim whose adaptive window may hold input position x: [*lo, *hi), a superset
 * the callers check exactly. */
inline void adaptive_candidates(long x, long in, long out, long *lo, long *hi) {
  *lo = max((x * out) / in - 1, 0L);
  *hi = min(((x + 1) * out + in - 1) / in + 1, out);
}

KERNEL(adaptive_max_pool)(BUF(input), BUF(output), BUF(indices), STRUCT_ARG(sp_geom, g),
                          long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long o[3], lo[3], hi[3];
  long out_at = sp_offset(idx, g.out, g.out_st, g.c, o);
  long base = sp_plane(idx, g.out[0] * g.out[1] * g.out[2], g.c, g.in_st);
  for (int d = 0; d < 3; d++) {
    lo[d] = adaptive_start(o[d], g.in[d], g.out[d]);
    hi[d] = adaptive_end(o[d], g.in[d], g.out[d]);
  }
  __global uchar *x = PTR(input);
  CT best = CT_MIN;
  long best_i = (lo[0] * g.in[1] + lo[1]) * g.in[2] + lo[2];
  for (long i0 = lo[0]; i0 < hi[0]; i0++)
    for (long i1 = lo[1]; i1 < hi[1]; i1++)
      for (long i2 = lo[2]; i2 < hi[2]; i2++) {
        CT v = LOAD(x, base + i0 * g.in_st[2] + i1 * g.in_st[3] + i2 * g.in_st[4]);
        if (v > best || IS_NAN(v)) {
          best = v;
          best_i = (i0 * g.in[1] + i1) * g.in[2] + i2;
        }
      }
  STORE(PTR(output), out_at, best);
  ST_I64(PTR(indices), out_at, best_i);
}

/* Output position of one dim whose window holds input position i at kernel offset kk. */
inline long window_of(long i, long kk, long s, long p, long d, long out) {
  long t = i + p - kk * d;
  if (t < 0 || t % s) return -1;
  t /= s;
  return t < out ? t : -1;
}

KERNEL(max_pool_backward)(BUF(grad), BUF(indices), BUF(grad_input), STRUCT_ARG(sp_geom, g),
                          long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long x[3];
  long in_at = sp_offset(idx, g.in, g.in_st, g.c, x);
  long base = sp_plane(idx, g.in[0] * g.in[1] * g.in[2], g.c, g.out_st);
  long self = (x[0] * g.in[1] + x[1]) * g.in[2] + x[2];
  CT acc = 0;
  for (long k0 = 0; k0 < g.k[0]; k0++) {
    long o0 = window_of(x[0], k0, g.s[0], g.p[0], g.d[0], g.out[0]);
    if (o0 < 0) continue;
    for (long k1 = 0; k1 < g.k[1]; k1++) {
      long o1 = window_of(x[1], k1, g.s[1], g.p[1], g.d[1], g.out[1]);
      if (o1 < 0) continue;
      for (long k2 = 0; k2 < g.k[2]; k2++) {
        long o2 = window_of(x[2], k2, g.s[2], g.p[2], g.d[2], g.out[2]);
        if (o2 < 0) continue;
        long at = base + o0 * g.out_st[2] + o1 * g.out_st[3] + o2 * g.out_st[4];
        if (LD_I64(PTR(indices), at) == self) acc += LOAD(PTR(grad), at);
      }
    }
  }
  STORE(PTR(grad_input), in_at, acc);
}

#ifndef IS_BOOL
/* PyTorch's average-pooling window of output o: [lo, hi) clipped to the input, and the
 * divisor. Returns 0 for an empty window. Integers divide as C does (int64 average pooling). */
inline CT avg_window(const sp_geom *g, const long *o, long *lo, long *hi) {
  long pool = 1, inside = 1;
  for (int d = 0; d < 3; d++) {
    lo[d] = o[d] * g->s[d] - g->p[d];
    hi[d] = min(lo[d] + g->k[d], g->in[d] + g->p[d]);
    pool *= hi[d] - lo[d];
    lo[d] = max(lo[d], 0L);
    hi[d] = min(hi[d], g->in[d]);
    if (lo[d] >= hi[d]) return 0;
    inside *= hi[d] - lo[d];
  }
  return (CT)(g->divisor ? g->divisor : g->count_include_pad ? pool : inside);
}

KERNEL(avg_pool)(BUF(input), BUF(output), STRUCT_ARG(sp_geom, g), long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long o[3], lo[3], hi[3];
  long out_at = sp_offset(idx, g.out, g.out_st, g.c, o);
  long base = sp_plane(idx, g.out[0] * g.out[1] * g.out[2], g.c, g.in_st);
  CT div = avg_window(&g, o, lo, hi);
  CT acc = 0;
  if (div != 0) {
    __global uchar *x = PTR(input);
    for (long i0 = lo[0]; i0 < hi[0]; i0++)
      for (long i1 = lo[1]; i1 < hi[1]; i1++)
        for (long i2 = lo[2]; i2 < hi[2]; i2++)
          acc += LOAD(x, base + i0 * g.in_st[2] + i1 * g.in_st[3] + i2 * g.in_st[4]);
    acc /= div;
  }
  STORE(PTR(output), out_at, acc);
}
#endif

#ifdef IS_FLOAT
KERNEL(avg_pool_backward)(BUF(grad), BUF(grad_input), STRUCT_ARG(sp_geom, g), long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long x[3], o[3], lo[3], hi[3];
  long in_at = sp_offset(idx, g.in, g.in_st, g.c, x);
  long base = sp_plane(idx, g.in[0] * g.in[1] * g.in[2], g.c, g.out_st);
  CT acc = 0;
  for (long k0 = 0; k0 < g.k[0]; k0++) {
    o[0] = window_of(x[0], k0, g.s[0], g.p[0], 1, g.out[0]);
    if (o[0] < 0) continue;
    for (long k1 = 0; k1 < g.k[1]; k1++) {
      o[1] = window_of(x[1], k1, g.s[1], g.p[1], 1, g.out[1]);
      if (o[1] < 0) continue;
      for (long k2 = 0; k2 < g.k[2]; k2++) {
        o[2] = window_of(x[2], k2, g.s[2], g.p[2], 1, g.out[2]);
        if (o[2] < 0) continue;
        CT div = avg_window(&g, o, lo, hi);
        if (div == 0) continue;
        acc += LOAD(PTR(grad), base + o[0] * g.out_st[2] + o[1] * g.out_st[3] + o[2] * g.out_st[4]) / div;
      }
    }
  }
  STORE(PTR(grad_input), in_at, acc);
}

KERNEL(adaptive_avg_pool)(BUF(input), BUF(output), STRUCT_ARG(sp_geom, g), long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long o[3], lo[3], hi[3];
  long out_at = sp_offset(idx, g.out, g.out_st, g.c, o);
  long base = sp_plane(idx, g.out[0] * g.out[1] * g.out[2], g.c, g.in_st);
  long count = 1;
  for (int d = 0; d < 3; d++) {
    lo[d] = adaptive_start(o[d], g.in[d], g.out[d]);
    hi[d] = adaptive_end(o[d], g.in[d], g.out[d]);
    count *= hi[d] - lo[d];
  }
  __global uchar *x = PTR(input);
  CT acc = 0;
  for (long i0 = lo[0]; i0 < hi[0]; i0++)
    for (long i1 = lo[1]; i1 < hi[1]; i1++)
      for (long i2 = lo[2]; i2 < hi[2]; i2++)
        acc += LOAD(x, base + i0 * g.in_st[2] + i1 * g.in_st[3] + i2 * g.in_st[4]);
  STORE(PTR(output), out_at, acc / (CT)count);
}

KERNEL(adaptive_avg_pool_backward)(BUF(grad), BUF(grad_input), STRUCT_ARG(sp_geom, g), long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long x[3], lo[3], hi[3];
  long in_at = sp_offset(idx, g.in, g.in_st, g.c, x);
  long base = sp_plane(idx, g.in[0] * g.in[1] * g.in[2], g.c, g.out_st);
  /* Candidate outputs per dim (a window holds x iff start <= x < end), checked exactly. */
  for (int d = 0; d < 3; d++) adaptive_candidates(x[d], g.in[d], g.out[d], &lo[d], &hi[d]);
  CT acc = 0;
  for (long o0 = lo[0]; o0 < hi[0]; o0++) {
    long s0 = adaptive_start(o0, g.in[0], g.out[0]), e0 = adaptive_end(o0, g.in[0], g.out[0]);
    if (x[0] < s0 || x[0] >= e0) continue;
    for (long o1 = lo[1]; o1 < hi[1]; o1++) {
      long s1 = adaptive_start(o1, g.in[1], g.out[1]), e1 = adaptive_end(o1, g.in[1], g.out[1]);
      if (x[1] < s1 || x[1] >= e1) continue;
      for (long o2 = lo[2]; o2 < hi[2]; o2++) {
        long s2 = adaptive_start(o2, g.in[2], g.out[2]), e2 = adaptive_end(o2, g.in[2], g.out[2]);
        if (x[2] < s2 || x[2] >= e2) continue;
        CT count = (CT)((e0 - s0) * (e1 - s1) * (e2 - s2));
        acc += LOAD(PTR(grad), base + o0 * g.out_st[2] + o1 * g.out_st[3] + o2 * g.out_st[4]) / count;
      }
    }
  }
  STORE(PTR(grad_input), in_at, acc);
}

KERNEL(adaptive_max_pool_backward)(BUF(grad), BUF(indices), BUF(grad_input),
                                   STRUCT_ARG(sp_geom, g), long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long x[3], lo[3], hi[3];
  long in_at = sp_offset(idx, g.in, g.in_st, g.c, x);
  long base = sp_plane(idx, g.in[0] * g.in[1] * g.in[2], g.c, g.out_st);
  long self = (x[0] * g.in[1] + x[1]) * g.in[2] + x[2];
  for (int d = 0; d < 3; d++) adaptive_candidates(x[d], g.in[d], g.out[d], &lo[d], &hi[d]);
  CT acc = 0;
  for (long o0 = lo[0]; o0 < hi[0]; o0++) {
    if (x[0] < adaptive_start(o0, g.in[0], g.out[0]) || x[0] >= adaptive_end(o0, g.in[0], g.out[0])) continue;
    for (long o1 = lo[1]; o1 < hi[1]; o1++) {
      if (x[1] < adaptive_start(o1, g.in[1], g.out[1]) || x[1] >= adaptive_end(o1, g.in[1], g.out[1])) continue;
      for (long o2 = lo[2]; o2 < hi[2]; o2++) {
        if (x[2] < adaptive_start(o2, g.in[2], g.out[2]) || x[2] >= adaptive_end(o2, g.in[2], g.out[2])) continue;
        long at = base + o0 * g.out_st[2] + o1 * g.out_st[3] + o2 * g.out_st[4];
        if (LD_I64(PTR(indices), at) == self) acc += LOAD(PTR(grad), at);
      }
    }
  }
  STORE(PTR(grad_input), in_at, acc);
}
#endif

/* ---- fractional max pooling ------------------------------------------------------------------
 * An axon_fractional_pool_args A (pool_args.h); 2-d as 3-d with depth 1. A work-item per output
 * element. samples is contiguous [n, c, nd] of the input's dtype: for 2-d sample 0 places the
 * columns and sample 1 the rows; for 3-d 0, 1, 2 place d, h, w. Indices (int64) are flat within
 * the (d, h, w) plane. */

#ifdef IS_FLOAT

inline long frac_start(CT u, long in, long out, long k, long i) {
  if (i == out - 1) return in - k;
  CT alpha = (CT)(in - k) / (CT)(out - 1);
  return (long)(((CT)i + u) * alpha) - (long)(u * alpha);
}

KERNEL(fractional_max_pool)(BUF(in), BUF(samples), BUF(out), BUF(indices),
                            STRUCT_ARG(axon_fractional_pool_args, A), long total) {
  PRIVATE_STRUCT(axon_fractional_pool_args, A);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long O0 = A.out_size[0], O1 = A.out_size[1], O2 = A.out_size[2], nd = A.nd;
  long o2 = idx % O2, o1 = (idx / O2) % O1, o0 = (idx / (O2 * O1)) % O0,
       plane = idx / (O2 * O1 * O0);
  __global uchar *sm = PTR(samples);
  long s0 = plane * nd;
  /* sample index per spatial dim (d, h, w) */
  CT u0 = nd == 3 ? LOAD(sm, s0) : (CT)0;
  CT u1 = nd == 3 ? LOAD(sm, s0 + 1) : LOAD(sm, s0 + 1);
  CT u2 = nd == 3 ? LOAD(sm, s0 + 2) : LOAD(sm, s0);
  const long *isz = A.in_size, *k = A.window, *st = A.in_strides;
  long a0 = nd == 3 ? frac_start(u0, isz[0], O0, k[0], o0) : 0;
  long a1 = frac_start(u1, isz[1], O1, k[1], o1), a2 = frac_start(u2, isz[2], O2, k[2], o2);
  long base = (plane / A.channels) * st[0] + (plane % A.channels) * st[1];
  CT best = -INFINITY;
  long arg = (a0 * isz[1] + a1) * isz[2] + a2;
  for (long d = a0; d < a0 + k[0]; d++)
    for (long h = a1; h < a1 + k[1]; h++)
      for (long w = a2; w < a2 + k[2]; w++) {
        CT v = LOAD(PTR(in), base + d * st[2] + h * st[3] + w * st[4]);
        if (v > best || IS_NAN(v)) {
          best = v;
          arg = (d * isz[1] + h) * isz[2] + w;
        }
      }
  STORE(PTR(out), idx, best);
  ST_I64(PTR(indices), idx, arg);
}

#endif
