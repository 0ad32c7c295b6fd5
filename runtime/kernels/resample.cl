/*
 * Resampling (nearest, linear over 1 to 3 dims) and reflection / replication padding, as
 * PyTorch computes source positions. Forward: a work-item per output element. Backward: a
 * work-item per input element gathering from every output that reads it (no atomics, a fixed
 * summation order). Tensors are strided: in_st / out_st are the strides (n, c, d0, d1, d2).
 * At the end, the 2-d filtered resampling (bicubic, antialiased bilinear), whose backward
 * scatters instead.
 */

#include "interp_common.cl"
#include "resample_args.h"
#include "spatial_args.h"

inline long rs_offset(long idx, const long *sz, const long *st, long c, long *x) {
  x[2] = idx % sz[2];
  idx /= sz[2];
  x[1] = idx % sz[1];
  idx /= sz[1];
  x[0] = idx % sz[0];
  idx /= sz[0];
  long ch = idx % c, n = idx / c;
  return n * st[0] + ch * st[1] + x[0] * st[2] + x[1] * st[3] + x[2] * st[4];
}
inline long rs_plane(long idx, long vol, long c, const long *st) {
  long plane = idx / vol;
  return (plane / c) * st[0] + (plane % c) * st[1];
}
#define AT_SPATIAL(base, st, a, b, c) ((base) + (a) * (st)[2] + (b) * (st)[3] + (c) * (st)[4])

/* ---- nearest: PyTorch's nearest_idx, in float whatever the element type ------------------ */

/* exact: PyTorch's "nearest-exact" (pixel centres), else its legacy "nearest". */
inline long nearest_src(long o, long in, long out, float inv_scale, int exact) {
  float scale = inv_scale > 0 ? inv_scale : (float)in / (float)out;
  if (exact) return min((long)floor(((float)o + 0.5f) * scale), in - 1);
  if (out == in) return o;
  if (out == 2 * in) return o >> 1;
  return min((long)floor((float)o * scale), in - 1);
}

KERNEL(upsample_nearest)(BUF(input), BUF(output), STRUCT_ARG(sp_geom, g), float f0, float f1,
                         float f2,
                               int exact, long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long o[3];
  long out_at = rs_offset(idx, g.out, g.out_st, g.c, o);
  long base = rs_plane(idx, g.out[0] * g.out[1] * g.out[2], g.c, g.in_st);
  long i0 = nearest_src(o[0], g.in[0], g.out[0], f0, exact), i1 = nearest_src(o[1], g.in[1], g.out[1], f1, exact),
       i2 = nearest_src(o[2], g.in[2], g.out[2], f2, exact);
  STORE(PTR(output), out_at, LOAD(PTR(input), AT_SPATIAL(base, g.in_st, i0, i1, i2)));
}

/* The outputs of one dim reading input i lie in [lo, hi): found from the inverse ratio with a
 * margin, then checked exactly. */
inline void nearest_range(long i, long in, long out, long *lo, long *hi) {
  *lo = max((i * out) / in - 2, 0L);
  *hi = min(((i + 1) * out + in - 1) / in + 2, out);
}

#ifdef IS_FLOAT
KERNEL(upsample_nearest_backward)(BUF(grad), BUF(grad_input), STRUCT_ARG(sp_geom, g), float f0,
                                  float f1,
                                        float f2, int exact, long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long x[3], lo[3], hi[3];
  long in_at = rs_offset(idx, g.in, g.in_st, g.c, x);
  long base = rs_plane(idx, g.in[0] * g.in[1] * g.in[2], g.c, g.out_st);
  for (int d = 0; d < 3; d++) nearest_range(x[d], g.in[d], g.out[d], &lo[d], &hi[d]);
  CT acc = 0;
  for (long o0 = lo[0]; o0 < hi[0]; o0++) {
    if (nearest_src(o0, g.in[0], g.out[0], f0, exact) != x[0]) continue;
    for (long o1 = lo[1]; o1 < hi[1]; o1++) {
      if (nearest_src(o1, g.in[1], g.out[1], f1, exact) != x[1]) continue;
      for (long o2 = lo[2]; o2 < hi[2]; o2++) {
        if (nearest_src(o2, g.in[2], g.out[2], f2, exact) != x[2]) continue;
        acc += LOAD(PTR(grad), AT_SPATIAL(base, g.out_st, o0, o1, o2));
      }
    }
  }
  STORE(PTR(grad_input), in_at, acc);
}

/* ---- linear: PyTorch's area_pixel_compute_source_index, in the compute type -------------- */

inline CT linear_scale(long in, long out, int align, CT inv_scale) {
  if (align) return out > 1 ? (CT)(in - 1) / (CT)(out - 1) : (CT)0;
  return inv_scale > 0 ? inv_scale : (CT)in / (CT)out;
}

/* Source index, neighbour offset (0 or 1) and the neighbour's weight for output o. */
inline long linear_src(long o, long in, CT scale, int align, long *off, CT *lambda) {
  CT r = align ? scale * (CT)o : scale * ((CT)o + (CT)0.5) - (CT)0.5;
  if (!align && r < 0) r = 0;
  long i = min((long)floor(r), in - 1);
  CT l = r - (CT)i;
  *lambda = l < 0 ? (CT)0 : l > 1 ? (CT)1 : l;
  *off = i < in - 1 ? 1 : 0;
  return i;
}

KERNEL(upsample_linear)(BUF(input), BUF(output), STRUCT_ARG(sp_geom, g), CT c0, CT c1, CT c2,
                        long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long o[3], i[3], off[3];
  CT lam[3], inv[3] = {c0, c1, c2};
  long out_at = rs_offset(idx, g.out, g.out_st, g.c, o);
  long base = rs_plane(idx, g.out[0] * g.out[1] * g.out[2], g.c, g.in_st);
  for (int d = 0; d < 3; d++)
    i[d] = linear_src(o[d], g.in[d], linear_scale(g.in[d], g.out[d], g.align_corners, inv[d]),
                      g.align_corners, &off[d], &lam[d]);
  __global uchar *x = PTR(input);
  CT acc = 0;
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 2; b++)
      for (int c = 0; c < 2; c++) {
        CT w = (a ? lam[0] : 1 - lam[0]) * (b ? lam[1] : 1 - lam[1]) * (c ? lam[2] : 1 - lam[2]);
        acc += w * LOAD(x, AT_SPATIAL(base, g.in_st, i[0] + a * off[0], i[1] + b * off[1], i[2] + c * off[2]));
      }
  STORE(PTR(output), out_at, acc);
}

/* Weight with which output o reads input x in one dim; 0 and *hit = 0 when it does not. */
inline CT linear_weight(long o, long x, long in, CT scale, int align, int *hit) {
  long off;
  CT lam;
  long i = linear_src(o, in, scale, align, &off, &lam);
  CT w = 0;
  *hit = 0;
  if (i == x) {
    w += 1 - lam;
    *hit = 1;
  }
  if (i + off == x) {
    w += lam;
    *hit = 1;
  }
  return w;
}

KERNEL(upsample_linear_backward)(BUF(grad), BUF(grad_input), STRUCT_ARG(sp_geom, g), CT c0, CT c1,
                                 CT c2,
                                       long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long x[3], lo[3], hi[3];
  CT sc[3], inv[3] = {c0, c1, c2};
  long in_at = rs_offset(idx, g.in, g.in_st, g.c, x);
  long base = rs_plane(idx, g.in[0] * g.in[1] * g.in[2], g.c, g.out_st);
  for (int d = 0; d < 3; d++) {
    sc[d] = linear_scale(g.in[d], g.out[d], g.align_corners, inv[d]);
    if (sc[d] > 0) {
      /* Outputs read x when their source r = scale * (o + 1/2) - 1/2 (or scale * o) lies in
       * (x - 1, x + 1): o within (x - 1/2) / scale - 1/2 .. (x + 3/2) / scale - 1/2, widened by
       * a step for rounding. The first and last inputs also take every output clamped onto
       * them. */
      lo[d] = x[d] == 0 ? 0 : max((long)floor((CT)(x[d] - 1.5f) / sc[d]) - 1, 0L);
      hi[d] = x[d] == g.in[d] - 1 ? g.out[d]
                                  : min((long)ceil((CT)(x[d] + 1.5f) / sc[d]) + 2, g.out[d]);
    } else {
      lo[d] = 0;
      hi[d] = g.out[d];
    }
  }
  CT acc = 0;
  int hit;
  for (long o0 = lo[0]; o0 < hi[0]; o0++) {
    CT w0 = linear_weight(o0, x[0], g.in[0], sc[0], g.align_corners, &hit);
    if (!hit) continue;
    for (long o1 = lo[1]; o1 < hi[1]; o1++) {
      CT w1 = linear_weight(o1, x[1], g.in[1], sc[1], g.align_corners, &hit);
      if (!hit) continue;
      for (long o2 = lo[2]; o2 < hi[2]; o2++) {
        CT w2 = linear_weight(o2, x[2], g.in[2], sc[2], g.align_corners, &hit);
        if (!hit) continue;
        acc += w0 * w1 * w2 * LOAD(PTR(grad), AT_SPATIAL(base, g.out_st, o0, o1, o2));
      }
    }
  }
  STORE(PTR(grad_input), in_at, acc);
}
#endif

/* ---- reflection (mode 0) and replication (mode 1) padding ------------------------------- */

inline long pad_src(long o, long before, long in, int mode) {
  long j = o - before;
  if (mode == 0) {
    if (j < 0) j = -j;
    if (j >= in) j = 2 * (in - 1) - j;
    return j;
  }
  return j < 0 ? 0 : j >= in ? in - 1 : j;
}

KERNEL(pad)(BUF(input), BUF(output), STRUCT_ARG(sp_geom, g), int mode, long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long o[3];
  long out_at = rs_offset(idx, g.out, g.out_st, g.c, o);
  long base = rs_plane(idx, g.out[0] * g.out[1] * g.out[2], g.c, g.in_st);
  long i0 = pad_src(o[0], g.p[0], g.in[0], mode), i1 = pad_src(o[1], g.p[1], g.in[1], mode),
       i2 = pad_src(o[2], g.p[2], g.in[2], mode);
  STORE(PTR(output), out_at, LOAD(PTR(input), AT_SPATIAL(base, g.in_st, i0, i1, i2)));
}

/* Candidate t of one dim: the output straight above x, then every padding position. */
inline long pad_candidate(long t, long x, long before, long in) {
  if (t == 0) return x + before;
  return t <= before ? t - 1 : before + in + (t - 1 - before);
}

#ifdef IS_FLOAT
KERNEL(pad_backward)(BUF(grad), BUF(grad_input), STRUCT_ARG(sp_geom, g), int mode, long total) {
  PRIVATE_STRUCT(sp_geom, g);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long x[3], nc[3];
  long in_at = rs_offset(idx, g.in, g.in_st, g.c, x);
  long base = rs_plane(idx, g.in[0] * g.in[1] * g.in[2], g.c, g.out_st);
  for (int d = 0; d < 3; d++) nc[d] = 1 + g.p[d] + g.pa[d];
  CT acc = 0;
  for (long t0 = 0; t0 < nc[0]; t0++) {
    long o0 = pad_candidate(t0, x[0], g.p[0], g.in[0]);
    if (pad_src(o0, g.p[0], g.in[0], mode) != x[0]) continue;
    for (long t1 = 0; t1 < nc[1]; t1++) {
      long o1 = pad_candidate(t1, x[1], g.p[1], g.in[1]);
      if (pad_src(o1, g.p[1], g.in[1], mode) != x[1]) continue;
      for (long t2 = 0; t2 < nc[2]; t2++) {
        long o2 = pad_candidate(t2, x[2], g.p[2], g.in[2]);
        if (pad_src(o2, g.p[2], g.in[2], mode) != x[2]) continue;
        acc += LOAD(PTR(grad), AT_SPATIAL(base, g.out_st, o0, o1, o2));
      }
    }
  }
  STORE(PTR(grad_input), in_at, acc);
}
#endif

/* ---- 2-d filtered resampling: bicubic and antialiased bilinear --------------------------------
 * Forward: a work-item per output element, reading the strided input. Backward: a work-item per
 * grad_output element, scattering into a contiguous zero-filled accumulator of CT with acc_add
 * (interp_common.cl). A: axon_resample2d_args (resample_args.h). */

#ifdef IS_FLOAT

/* The source position of output index dst: first tap and fraction, clamped as PyTorch does. */
inline void cubic_source(CT scale, long dst, long in, long align, long *first, CT *t) {
  CT real = align ? scale * (CT)dst : scale * ((CT)dst + (CT)0.5) - (CT)0.5;
  long i = (long)floor(real);
  if (i > in - 1) i = in - 1;
  *first = i;
  *t = fmin(fmax(real - (CT)i, (CT)0), (CT)1);
}

inline long clamp_index(long i, long n) {
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

/* Output element idx: its plane and position, and the strided tensor's offset of the plane. */
inline long rs2_place(const axon_resample2d_args *A, long idx, long *plane, long *y, long *x) {
  *x = idx % A->out_w;
  *y = (idx / A->out_w) % A->out_h;
  *plane = idx / (A->out_w * A->out_h);
  return (*plane / A->channels) * A->strides[0] + (*plane % A->channels) * A->strides[1];
}

KERNEL(bicubic2d)(BUF(in), BUF(out), STRUCT_ARG(axon_resample2d_args, A), long total) {
  PRIVATE_STRUCT(axon_resample2d_args, A);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long ih = A.in_h, iw = A.in_w, plane, y, x;
  long base = rs2_place(&A, idx, &plane, &y, &x);
  long x0, y0;
  CT tx, ty, wx[4], wy[4];
  cubic_source(ARG_REAL(A.scale_h), y, ih, A.align_corners, &y0, &ty);
  cubic_source(ARG_REAL(A.scale_w), x, iw, A.align_corners, &x0, &tx);
  cubic_weights(tx, wx);
  cubic_weights(ty, wy);
  CT acc = 0;
  for (int j = 0; j < 4; j++) {
    long row = base + clamp_index(y0 - 1 + j, ih) * A.strides[2];
    CT r = 0;
    for (int i = 0; i < 4; i++)
      r += wx[i] * LOAD(PTR(in), row + clamp_index(x0 - 1 + i, iw) * A.strides[3]);
    acc += wy[j] * r;
  }
  STORE(PTR(out), idx, acc);
}

KERNEL(bicubic2d_backward)(BUF(grad_out), BUF(acc), STRUCT_ARG(axon_resample2d_args, A),
                           long total) {
  PRIVATE_STRUCT(axon_resample2d_args, A);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long ih = A.in_h, iw = A.in_w, plane, y, x;
  long base = rs2_place(&A, idx, &plane, &y, &x);
  CT g = LOAD(PTR(grad_out), base + y * A.strides[2] + x * A.strides[3]);
  long x0, y0;
  CT tx, ty, wx[4], wy[4];
  cubic_source(ARG_REAL(A.scale_h), y, ih, A.align_corners, &y0, &ty);
  cubic_source(ARG_REAL(A.scale_w), x, iw, A.align_corners, &x0, &tx);
  cubic_weights(tx, wx);
  cubic_weights(ty, wy);
  for (int j = 0; j < 4; j++) {
    long row = (plane * ih + clamp_index(y0 - 1 + j, ih)) * iw;
    for (int i = 0; i < 4; i++)
      acc_add(PTR(acc), row + clamp_index(x0 - 1 + i, iw), g * wy[j] * wx[i]);
  }
}

/* Antialiased bilinear: the triangle filter stretched over the scale when downsampling,
 * normalised per output pixel. */

/* The input span [lo, lo + size) read by output index i, and the filter's centre and 1/width. */
inline void aa_span(CT scale, long i, long in, CT *center, CT *inv, long *lo, long *size) {
  CT support = scale >= 1 ? scale : (CT)1;
  *center = scale * ((CT)i + (CT)0.5);
  *inv = scale >= 1 ? 1 / scale : (CT)1;
  long a = (long)(*center - support + (CT)0.5), b = (long)(*center + support + (CT)0.5);
  *lo = a < 0 ? 0 : a;
  *size = (b < in ? b : in) - *lo;
}

inline CT aa_weight(long j, long lo, CT center, CT inv) {
  CT x = fabs(((CT)(j + lo) - center + (CT)0.5) * inv);
  return x < 1 ? 1 - x : (CT)0;
}

inline CT aa_total(long lo, long size, CT center, CT inv) {
  CT t = 0;
  for (long j = 0; j < size; j++) t += aa_weight(j, lo, center, inv);
  return t == 0 ? (CT)1 : t;
}

KERNEL(aa_bilinear2d)(BUF(in), BUF(out), STRUCT_ARG(axon_resample2d_args, A), long total) {
  PRIVATE_STRUCT(axon_resample2d_args, A);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long ih = A.in_h, iw = A.in_w, plane, y, x;
  long base = rs2_place(&A, idx, &plane, &y, &x);
  CT cx, cy, vx, vy;
  long x0, y0, nx, ny;
  aa_span(ARG_REAL(A.scale_h), y, ih, &cy, &vy, &y0, &ny);
  aa_span(ARG_REAL(A.scale_w), x, iw, &cx, &vx, &x0, &nx);
  CT tx = aa_total(x0, nx, cx, vx), ty = aa_total(y0, ny, cy, vy);
  CT acc = 0;
  for (long j = 0; j < ny; j++) {
    CT r = 0;
    long row = base + (y0 + j) * A.strides[2];
    for (long i = 0; i < nx; i++)
      r += aa_weight(i, x0, cx, vx) / tx * LOAD(PTR(in), row + (x0 + i) * A.strides[3]);
    acc += aa_weight(j, y0, cy, vy) / ty * r;
  }
  STORE(PTR(out), idx, acc);
}

KERNEL(aa_bilinear2d_backward)(BUF(grad_out), BUF(acc), STRUCT_ARG(axon_resample2d_args, A),
                               long total) {
  PRIVATE_STRUCT(axon_resample2d_args, A);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long ih = A.in_h, iw = A.in_w, plane, y, x;
  long base = rs2_place(&A, idx, &plane, &y, &x);
  CT g = LOAD(PTR(grad_out), base + y * A.strides[2] + x * A.strides[3]);
  CT cx, cy, vx, vy;
  long x0, y0, nx, ny;
  aa_span(ARG_REAL(A.scale_h), y, ih, &cy, &vy, &y0, &ny);
  aa_span(ARG_REAL(A.scale_w), x, iw, &cx, &vx, &x0, &nx);
  CT tx = aa_total(x0, nx, cx, vx), ty = aa_total(y0, ny, cy, vy);
  for (long j = 0; j < ny; j++) {
    CT gy = g * aa_weight(j, y0, cy, vy) / ty;
    long row = (plane * ih + y0 + j) * iw;
    for (long i = 0; i < nx; i++)
      acc_add(PTR(acc), row + x0 + i, gy * aa_weight(i, x0, cx, vx) / tx);
  }
}

#endif
