/*
 * Convolution's unfolding (im2col) and its adjoint (col2im) for 1 to 3 spatial dims, padded
 * to 3 by the launcher (size 1, kernel 1, stride 1, padding 0, dilation 1).
 * col is contiguous [c * K, n * L]: row (channel, kernel position), column (sample, output
 * position). col2im is a gather: each image element sums the columns that read it, so no
 * atomics and a fixed summation order.
 */

#include "spatial_args.h"

/* One run of im2col's output: column block `block` (row * n + sample) at output positions
 * o01 (= o0 * out1 + o1) and any o2. The image element for o2 is at `from` + (o2 * s2 + shift)
 * * in_st[4] when `inside` (dims 0 and 1 of the window are in the image) and 0 <= o2 * s2 +
 * shift < in2. Out is where the run starts in col. */
typedef struct im2col_run {
  long from, shift, out;
  int inside;
} im2col_run;

inline im2col_run im2col_locate(const sp_geom *g, long o01, long block) {
  long L = g->out[0] * g->out[1] * g->out[2], K = g->k[0] * g->k[1] * g->k[2];
  long n = block % g->n, row = block / g->n;
  long kp = row % K, c = row / K;
  long o1 = o01 % g->out[1], o0 = o01 / g->out[1];
  long k2 = kp % g->k[2], k1 = (kp / g->k[2]) % g->k[1], k0 = kp / (g->k[2] * g->k[1]);
  long i0 = o0 * g->s[0] - g->p[0] + k0 * g->d[0];
  long i1 = o1 * g->s[1] - g->p[1] + k1 * g->d[1];
  im2col_run r;
  r.inside = i0 >= 0 && i0 < g->in[0] && i1 >= 0 && i1 < g->in[1];
  r.from = n * g->in_st[0] + c * g->in_st[1] + i0 * g->in_st[2] + i1 * g->in_st[3];
  r.shift = k2 * g->d[2] - g->p[2];
  r.out = block * L + o01 * g->out[2];
  return r;
}

/* A 3-D launch: dim 0 is the innermost output position o2, dim 1 o01, dim 2 the column block.
 * Every division depends on dims 1 and 2 only. */
KERNEL(im2col)(BUF(image), BUF(col), STRUCT_ARG(sp_geom, g), long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long o2 = get_global_id(0);
  if (o2 >= g.out[2]) return;
  im2col_run r = im2col_locate(&g, get_global_id(1), get_global_id(2));
  long i2 = o2 * g.s[2] + r.shift;
  CT v = 0;
  if (r.inside && i2 >= 0 && i2 < g.in[2]) v = LOAD(PTR(image), r.from + i2 * g.in_st[4]);
  STORE(PTR(col), r.out + o2, v);
}

/* im2col for CPU devices (the runtime chooses): a work-item per run of o2 (launch dims: o01,
 * column block). The window's valid range of o2 is worked out once, so the run is a strided
 * copy between two stretches of zeros, with no bounds test or division per element. */
KERNEL(im2col_rows)(BUF(image), BUF(col), STRUCT_ARG(sp_geom, g), long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long o01 = get_global_id(0);
  if (o01 >= g.out[0] * g.out[1]) return;
  im2col_run r = im2col_locate(&g, o01, get_global_id(1));
  long lo = 0, hi = 0; /* valid o2: 0 <= o2 * s2 + shift < in2 */
  if (r.inside) {
    lo = r.shift >= 0 ? 0 : (-r.shift + g.s[2] - 1) / g.s[2];
    hi = g.in[2] - r.shift <= 0 ? 0 : (g.in[2] - r.shift + g.s[2] - 1) / g.s[2];
    hi = min(hi, g.out[2]);
    lo = min(lo, hi);
  }
  __global uchar *dst = PTR(col), *src = PTR(image);
  for (long o2 = 0; o2 < lo; o2++) STORE(dst, r.out + o2, 0);
  for (long o2 = lo; o2 < hi; o2++)
    STORE(dst, r.out + o2, LOAD(src, r.from + (o2 * g.s[2] + r.shift) * g.in_st[4]));
  for (long o2 = hi; o2 < g.out[2]; o2++) STORE(dst, r.out + o2, 0);
}

/* Output positions o of one dim whose window reads input position i at kernel offset kk. */
inline long tap_source(long i, long kk, long s, long p, long d, long out) {
  long t = i + p - kk * d;
  if (t < 0 || t % s) return -1;
  t /= s;
  return t < out ? t : -1;
}

KERNEL(col2im)(BUF(col), BUF(image), STRUCT_ARG(sp_geom, g), long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long i2 = idx % g.in[2], i1 = (idx / g.in[2]) % g.in[1], i0 = (idx / (g.in[2] * g.in[1])) % g.in[0];
  long plane = idx / (g.in[0] * g.in[1] * g.in[2]);
  long c = plane % g.c, n = plane / g.c;
  long L = g.out[0] * g.out[1] * g.out[2], K = g.k[0] * g.k[1] * g.k[2];
  __global uchar *src = PTR(col);
  CT acc = 0;
  for (long k0 = 0; k0 < g.k[0]; k0++) {
    long o0 = tap_source(i0, k0, g.s[0], g.p[0], g.d[0], g.out[0]);
    if (o0 < 0) continue;
    for (long k1 = 0; k1 < g.k[1]; k1++) {
      long o1 = tap_source(i1, k1, g.s[1], g.p[1], g.d[1], g.out[1]);
      if (o1 < 0) continue;
      for (long k2 = 0; k2 < g.k[2]; k2++) {
        long o2 = tap_source(i2, k2, g.s[2], g.p[2], g.d[2], g.out[2]);
        if (o2 < 0) continue;
        long row = c * K + (k0 * g.k[1] + k1) * g.k[2] + k2;
        long l = (o0 * g.out[1] + o1) * g.out[2] + o2;
        acc += LOAD(src, (row * g.n + n) * L + l);
      }
    }
  }
  STORE(PTR(image), n * g.in_st[0] + c * g.in_st[1] + i0 * g.in_st[2] + i1 * g.in_st[3] +
                        i2 * g.in_st[4], acc);
}
