/*
 * Sampling and the less common neural-network operators, launched by
 * runtime/src/ops/sampling.c. Every kernel takes its buffers, then a parameter block P (integers
 * P.i[], reals read through PF(k)), then the number of work items (or, for grouped kernels,
 * work-groups). Each kernel's comment lists what it reads from P.
 *
 * Gradients that scatter (resampling, grid sampling) add into a contiguous buffer of CT (float
 * for float16 / bfloat16) with a compare-and-swap loop, the portable float atomic add.
 * Everything else is a gather: one work item owns its output and sums in a fixed order.
 */

/* Mirrors smp_params in runtime/src/ops/sampling.c. */
typedef struct smp_params {
  long i[32];
  float f[4];
  long fd[4]; /* the reals as double bits */
} smp_params;

#ifdef DT_F64
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define PF(k) as_double(P.fd[k])
#else
#define PF(k) ((CT)P.f[k])
#endif

#define ACC(p) ((__global CT *)(p))

#ifdef IS_FLOAT

/* Float add into global memory by compare-and-swap on the value's bit pattern (an integer of
 * the same width): the scatter of the resampling and grid-sampler gradients. */
#ifdef DT_F64
#define ACC_BITS long
#define ACC_CMPXCHG atom_cmpxchg
#define ACC_AS_BITS as_long
#define ACC_AS_VALUE as_double
#else
#define ACC_BITS int
#define ACC_CMPXCHG atomic_cmpxchg
#define ACC_AS_BITS as_int
#define ACC_AS_VALUE as_float
#endif
inline void acc_add(__global uchar *p, long i, CT v) {
  if (v == 0) return;
  volatile __global ACC_BITS *a = (volatile __global ACC_BITS *)p + i;
  ACC_BITS old = *a, seen;
  do {
    seen = old;
    old = ACC_CMPXCHG(a, seen, ACC_AS_BITS(ACC_AS_VALUE(seen) + v));
  } while (old != seen);
}

inline long load_int(__global uchar *p, long i, int is_int32) {
  return is_int32 ? (long)LD_I32(p, i) : LD_I64(p, i);
}

/* ---- cubic convolution (PyTorch's A = -0.75) ------------------------------------------------ */

#define CUBIC_A ((CT)-0.75)
/* |x| <= 1 and 1 < |x| < 2, and their derivatives. */
#define CUBIC1(x) ((((CUBIC_A + 2) * (x) - (CUBIC_A + 3)) * (x)) * (x) + 1)
#define CUBIC2(x) ((((CUBIC_A * (x)-5 * CUBIC_A) * (x) + 8 * CUBIC_A) * (x)) - 4 * CUBIC_A)
#define DCUBIC1(x) ((3 * (CUBIC_A + 2) * (x)-2 * (CUBIC_A + 3)) * (x))
#define DCUBIC2(x) ((3 * CUBIC_A * (x)-10 * CUBIC_A) * (x) + 8 * CUBIC_A)

/* Weights of taps -1, 0, 1, 2 around a point at fraction t, and their derivatives in t. */
inline void cubic_weights(CT t, CT *w) {
  w[0] = CUBIC2(t + 1);
  w[1] = CUBIC1(t);
  w[2] = CUBIC1(1 - t);
  w[3] = CUBIC2(2 - t);
}
inline void cubic_weights_grad(CT t, CT *w) {
  w[0] = DCUBIC2(t + 1);
  w[1] = DCUBIC1(t);
  w[2] = -DCUBIC1(1 - t);
  w[3] = -DCUBIC2(2 - t);
}

/* ---- bicubic resampling ---------------------------------------------------------------------
 * P.i: 0 planes (n * c), 1 c, 2 in_h, 3 in_w, 4 out_h, 5 out_w, 6..9 strides (n, c, h, w) of the
 * strided tensor (forward: input; backward: grad_output), 10 align_corners.
 * PF: 0 scale_h, 1 scale_w (input pixels per output pixel). The other tensor is contiguous. */

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

KERNEL(bicubic2d)(BUF(in), BUF(out), smp_params P, long total) {
  long idx = get_global_id(0);
  if (idx >= total) return;
  long ih = P.i[2], iw = P.i[3], oh = P.i[4], ow = P.i[5];
  long x = idx % ow, y = (idx / ow) % oh, plane = idx / (ow * oh);
  long base = (plane / P.i[1]) * P.i[6] + (plane % P.i[1]) * P.i[7];
  long x0, y0;
  CT tx, ty, wx[4], wy[4];
  cubic_source(PF(0), y, ih, P.i[10], &y0, &ty);
  cubic_source(PF(1), x, iw, P.i[10], &x0, &tx);
  cubic_weights(tx, wx);
  cubic_weights(ty, wy);
  CT acc = 0;
  for (int j = 0; j < 4; j++) {
    long row = base + clamp_index(y0 - 1 + j, ih) * P.i[8];
    CT r = 0;
    for (int i = 0; i < 4; i++)
      r += wx[i] * LOAD(PTR(in), row + clamp_index(x0 - 1 + i, iw) * P.i[9]);
    acc += wy[j] * r;
  }
  STORE(PTR(out), idx, acc);
}

KERNEL(bicubic2d_backward)(BUF(grad_out), BUF(acc), smp_params P, long total) {
  long idx = get_global_id(0);
  if (idx >= total) return;
  long ih = P.i[2], iw = P.i[3], oh = P.i[4], ow = P.i[5];
  long x = idx % ow, y = (idx / ow) % oh, plane = idx / (ow * oh);
  CT g = LOAD(PTR(grad_out),
              (plane / P.i[1]) * P.i[6] + (plane % P.i[1]) * P.i[7] + y * P.i[8] + x * P.i[9]);
  long x0, y0;
  CT tx, ty, wx[4], wy[4];
  cubic_source(PF(0), y, ih, P.i[10], &y0, &ty);
  cubic_source(PF(1), x, iw, P.i[10], &x0, &tx);
  cubic_weights(tx, wx);
  cubic_weights(ty, wy);
  for (int j = 0; j < 4; j++) {
    long row = (plane * ih + clamp_index(y0 - 1 + j, ih)) * iw;
    for (int i = 0; i < 4; i++)
      acc_add(PTR(acc), row + clamp_index(x0 - 1 + i, iw), g * wy[j] * wx[i]);
  }
}

/* ---- antialiased bilinear resampling --------------------------------------------------------
 * The triangle filter stretched over the scale when downsampling, normalised per output pixel.
 * Parameters as for bicubic2d. */

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

KERNEL(aa_bilinear2d)(BUF(in), BUF(out), smp_params P, long total) {
  long idx = get_global_id(0);
  if (idx >= total) return;
  long ih = P.i[2], iw = P.i[3], oh = P.i[4], ow = P.i[5];
  long x = idx % ow, y = (idx / ow) % oh, plane = idx / (ow * oh);
  long base = (plane / P.i[1]) * P.i[6] + (plane % P.i[1]) * P.i[7];
  CT cx, cy, vx, vy;
  long x0, y0, nx, ny;
  aa_span(PF(0), y, ih, &cy, &vy, &y0, &ny);
  aa_span(PF(1), x, iw, &cx, &vx, &x0, &nx);
  CT tx = aa_total(x0, nx, cx, vx), ty = aa_total(y0, ny, cy, vy);
  CT acc = 0;
  for (long j = 0; j < ny; j++) {
    CT r = 0;
    long row = base + (y0 + j) * P.i[8];
    for (long i = 0; i < nx; i++)
      r += aa_weight(i, x0, cx, vx) / tx * LOAD(PTR(in), row + (x0 + i) * P.i[9]);
    acc += aa_weight(j, y0, cy, vy) / ty * r;
  }
  STORE(PTR(out), idx, acc);
}

KERNEL(aa_bilinear2d_backward)(BUF(grad_out), BUF(acc), smp_params P, long total) {
  long idx = get_global_id(0);
  if (idx >= total) return;
  long ih = P.i[2], iw = P.i[3], oh = P.i[4], ow = P.i[5];
  long x = idx % ow, y = (idx / ow) % oh, plane = idx / (ow * oh);
  CT g = LOAD(PTR(grad_out),
              (plane / P.i[1]) * P.i[6] + (plane % P.i[1]) * P.i[7] + y * P.i[8] + x * P.i[9]);
  CT cx, cy, vx, vy;
  long x0, y0, nx, ny;
  aa_span(PF(0), y, ih, &cy, &vy, &y0, &ny);
  aa_span(PF(1), x, iw, &cx, &vx, &x0, &nx);
  CT tx = aa_total(x0, nx, cx, vx), ty = aa_total(y0, ny, cy, vy);
  for (long j = 0; j < ny; j++) {
    CT gy = g * aa_weight(j, y0, cy, vy) / ty;
    long row = (plane * ih + y0 + j) * iw;
    for (long i = 0; i < nx; i++)
      acc_add(PTR(acc), row + x0 + i, gy * aa_weight(i, x0, cx, vx) / tx);
  }
}

/* ---- grid sampling --------------------------------------------------------------------------
 * 2-d as 3-d with depth 1. Grid coordinate k (x, y, z) indexes spatial dim 2 - k (w, h, d).
 * P.i: 0 n, 1 c, 2 nd (2 or 3), 3..5 input spatial sizes (d, h, w), 6..8 output spatial sizes,
 * 9..13 input strides (n, c, d, h, w), 14..17 grid strides (n, d, h, w), 18 grid coordinate
 * stride, 19 mode (0 bilinear, 1 nearest, 2 bicubic), 20 padding (0 zeros, 1 border,
 * 2 reflection), 21 align_corners, 22..26 grad_output strides (n, c, d, h, w).
 * The output, grad_grid and the input-gradient accumulator are contiguous. */

inline CT clip_coord(CT x, long size, CT *g) {
  if (x <= 0) {
    *g = 0;
    return 0;
  }
  CT hi = (CT)(size - 1);
  if (x >= hi) {
    *g = 0;
    return hi;
  }
  *g = 1;
  return x;
}

/* Reflects x into [twice_lo / 2, twice_hi / 2]; *g is the derivative (+1 or -1). */
inline CT reflect_coord(CT x, long twice_lo, long twice_hi, CT *g) {
  if (twice_lo == twice_hi) {
    *g = 0;
    return 0;
  }
  CT lo = (CT)twice_lo / 2, span = (CT)(twice_hi - twice_lo) / 2, sign = 1;
  x -= lo;
  if (x < 0) {
    sign = -1;
    x = -x;
  }
  CT extra = fmod(x, span);
  long flips = (long)floor(x / span);
  if (flips % 2 == 0) {
    *g = sign;
    return extra + lo;
  }
  *g = -sign;
  return span - extra + lo;
}

/* Applies the padding mode to a pixel coordinate; *g is d(result)/d(x). */
inline CT pad_coord(CT x, long size, long padding, long align, CT *g) {
  *g = 1;
  if (padding == 0) return x;
  CT gr = 1, gc;
  if (padding == 2)
    x = align ? reflect_coord(x, 0, 2 * (size - 1), &gr) : reflect_coord(x, -1, 2 * size - 1, &gr);
  x = clip_coord(x, size, &gc);
  *g = gr * gc;
  return x;
}

/* Grid value in [-1, 1] to a pixel coordinate; *g is the derivative. */
inline CT unnormalize(CT v, long size, long align, CT *g) {
  if (align) {
    *g = (CT)(size - 1) / 2;
    return (v + 1) / 2 * (CT)(size - 1);
  }
  *g = (CT)size / 2;
  return ((v + 1) * (CT)size - 1) / 2;
}

/* The taps of one grid point: spatial offsets (input strides, and contiguous) or -1 outside,
 * weights, and the weights' derivatives in each pixel coordinate. mult[k] turns a derivative in
 * pixel coordinate k into one in grid coordinate k. */
typedef struct gs_taps {
  int n;
  long off[16], flat[16];
  CT w[16], dw[16][3];
  CT mult[3];
} gs_taps;

inline void gs_make_taps(__global uchar *grid, long n, long o0, long o1, long o2, smp_params P,
                         gs_taps *T) {
  int nd = (int)P.i[2];
  long mode = P.i[19], padding = P.i[20], align = P.i[21];
  CT pos[3];
  long gbase = n * P.i[14] + o0 * P.i[15] + o1 * P.i[16] + o2 * P.i[17];
  for (int k = 0; k < nd; k++) {
    long size = P.i[5 - k];
    CT gu, gp;
    CT x = unnormalize(LOAD(grid, gbase + k * P.i[18]), size, align, &gu);
    if (mode != 2)
      x = pad_coord(x, size, padding, align, &gp);
    else
      gp = 1;
    pos[k] = x;
    T->mult[k] = gu * gp;
  }
  T->n = 0;
  int taps = mode == 0 ? 1 << nd : mode == 1 ? 1 : 16;
  for (int t = 0; t < taps; t++) {
    long p[3] = {0, 0, 0}; /* pixel position per coordinate k */
    CT w = 1, dw[3] = {1, 1, 1};
    int inside = 1;
    for (int k = 0; k < nd; k++) {
      long size = P.i[5 - k];
      CT wk, dk;
      if (mode == 1) {
        p[k] = (long)rint(pos[k]);
        wk = 1;
        dk = 0;
      } else if (mode == 0) {
        CT f = floor(pos[k]);
        int hi = (t >> k) & 1;
        p[k] = (long)f + hi;
        wk = hi ? pos[k] - f : 1 - (pos[k] - f);
        dk = hi ? (CT)1 : (CT)-1;
      } else {
        CT f = floor(pos[k]), cw[4], cd[4];
        int j = k == 0 ? t % 4 : t / 4;
        cubic_weights(pos[k] - f, cw);
        cubic_weights_grad(pos[k] - f, cd);
        CT g;
        p[k] = (long)pad_coord(f - 1 + j, size, padding, align, &g);
        wk = cw[j];
        dk = cd[j];
      }
      if (p[k] < 0 || p[k] >= size) inside = 0;
      for (int m = 0; m < nd; m++) dw[m] *= m == k ? dk : wk;
      w *= wk;
    }
    if (!inside) continue;
    long d = nd == 3 ? p[2] : 0;
    int i = T->n++;
    T->off[i] = d * P.i[11] + p[1] * P.i[12] + p[0] * P.i[13];
    T->flat[i] = (d * P.i[4] + p[1]) * P.i[5] + p[0];
    T->w[i] = w;
    for (int m = 0; m < 3; m++) T->dw[i][m] = m < nd ? dw[m] : (CT)0;
  }
}

/* One work item per (sample, output position), looping over channels. */
KERNEL(grid_sample)(BUF(in), BUF(grid), BUF(out), smp_params P, long total) {
  long idx = get_global_id(0);
  if (idx >= total) return;
  long O0 = P.i[6], O1 = P.i[7], O2 = P.i[8], C = P.i[1];
  long o2 = idx % O2, o1 = (idx / O2) % O1, o0 = (idx / (O2 * O1)) % O0, n = idx / (O2 * O1 * O0);
  gs_taps T;
  gs_make_taps(PTR(grid), n, o0, o1, o2, P, &T);
  long ovol = O0 * O1 * O2, sp = (o0 * O1 + o1) * O2 + o2;
  for (long c = 0; c < C; c++) {
    long base = n * P.i[9] + c * P.i[10];
    CT acc = 0;
    for (int t = 0; t < T.n; t++) acc += T.w[t] * LOAD(PTR(in), base + T.off[t]);
    STORE(PTR(out), (n * C + c) * ovol + sp, acc);
  }
}

KERNEL(grid_sample_backward)(BUF(grad_out), BUF(in), BUF(grid), BUF(acc), BUF(grad_grid),
                                   smp_params P, long total) {
  long idx = get_global_id(0);
  if (idx >= total) return;
  long O0 = P.i[6], O1 = P.i[7], O2 = P.i[8], C = P.i[1];
  long o2 = idx % O2, o1 = (idx / O2) % O1, o0 = (idx / (O2 * O1)) % O0, n = idx / (O2 * O1 * O0);
  int nd = (int)P.i[2];
  gs_taps T;
  gs_make_taps(PTR(grid), n, o0, o1, o2, P, &T);
  long ivol = P.i[3] * P.i[4] * P.i[5];
  CT gc[3] = {0, 0, 0};
  for (long c = 0; c < C; c++) {
    CT g =
        LOAD(PTR(grad_out), n * P.i[22] + c * P.i[23] + o0 * P.i[24] + o1 * P.i[25] + o2 * P.i[26]);
    long base = n * P.i[9] + c * P.i[10], abase = (n * C + c) * ivol;
    for (int t = 0; t < T.n; t++) {
      acc_add(PTR(acc), abase + T.flat[t], T.w[t] * g);
      CT v = LOAD(PTR(in), base + T.off[t]) * g;
      for (int k = 0; k < nd; k++) gc[k] += T.dw[t][k] * v;
    }
  }
  for (int k = 0; k < nd; k++) STORE(PTR(grad_grid), idx * nd + k, gc[k] * T.mult[k]);
}

/* ---- embedding bags --------------------------------------------------------------------------
 * P.i: 0 bags, 1 dim, 2 indices, 3 offsets given, 4 mode (0 sum, 1 mean, 2 max), 5 padding_idx
 * (-1 none), 6 has per-sample weights, 7 indices are int32, 8 offsets are int32, 9 weight row
 * stride, 10 weight column stride, 11 num_weights.
 * offset2bag, bag_size and max_indices are int64. */

inline void bag_range(__global uchar *offsets, long b, smp_params P, long *start, long *end) {
  int o32 = (int)P.i[8];
  *start = load_int(offsets, b, o32);
  *end = b + 1 < P.i[3] ? load_int(offsets, b + 1, o32) : P.i[2];
  if (*end > P.i[2]) *end = P.i[2];
}

/* One work item per (bag, column): out, and bag_size / max_indices. */
KERNEL(embedding_bag)(BUF(weight), BUF(indices), BUF(offsets), BUF(psw), BUF(out),
                            BUF(bag_size), BUF(max_indices), smp_params P, long total) {
  long idx = get_global_id(0);
  if (idx >= total) return;
  long dim = P.i[1], b = idx / dim, d = idx % dim, mode = P.i[4];
  long start, end;
  bag_range(PTR(offsets), b, P, &start, &end);
  CT acc = 0;
  long count = 0, arg = -1;
  for (long i = start; i < end; i++) {
    long row = load_int(PTR(indices), i, (int)P.i[7]);
    if (row == P.i[5]) continue;
    CT v = LOAD(PTR(weight), row * P.i[9] + d * P.i[10]);
    if (mode == 2) {
      if (count == 0 || v > acc || IS_NAN(v)) {
        acc = v;
        arg = row;
      }
    } else {
      acc += P.i[6] ? v * LOAD(PTR(psw), i) : v;
    }
    count++;
  }
  if (mode == 1 && count > 0) acc /= (CT)count;
  STORE(PTR(out), idx, acc);
  if (mode == 2) ST_I64(PTR(max_indices), idx, arg);
  if (d == 0) ST_I64(PTR(bag_size), b, count);
}

/* One work item per index: the bag holding it (the last bag starting at or before it). */
KERNEL(embedding_bag_offset2bag)(BUF(offsets), BUF(offset2bag), smp_params P, long total) {
  long i = get_global_id(0);
  if (i >= total) return;
  long lo = 0, hi = P.i[0] - 1; /* bags */
  while (lo < hi) {
    long mid = (lo + hi + 1) / 2;
    if (load_int(PTR(offsets), mid, (int)P.i[8]) <= i)
      lo = mid;
    else
      hi = mid - 1;
  }
  ST_I64(PTR(offset2bag), i, lo);
}

/* One work item per (index position, column): the gradient row that position contributes to
 * weight row indices[i], summed afterwards by embedding's deterministic backward. For max, the
 * first position in the bag holding the maximum's row takes the whole gradient.
 * grad is contiguous [bags, dim]; rows is contiguous [indices, dim]. */
KERNEL(embedding_bag_rows)(BUF(grad), BUF(indices), BUF(offset2bag), BUF(bag_size),
                                 BUF(max_indices), BUF(psw), BUF(rows), smp_params P, long total) {
  long idx = get_global_id(0);
  if (idx >= total) return;
  long dim = P.i[1], i = idx / dim, d = idx % dim, mode = P.i[4];
  __global uchar *o2b = PTR(offset2bag);
  long b = LD_I64(o2b, i), row = load_int(PTR(indices), i, (int)P.i[7]);
  CT v = 0;
  if (b >= 0 && b < P.i[0] && row != P.i[5]) {
    CT g = LOAD(PTR(grad), b * dim + d);
    if (mode == 2) {
      long m = LD_I64(PTR(max_indices), b * dim + d);
      int first = row == m;
      for (long j = i - 1; j >= 0 && first && LD_I64(o2b, j) == b; j--)
        if (load_int(PTR(indices), j, (int)P.i[7]) == m) first = 0;
      v = first ? g : (CT)0;
    } else {
      v = P.i[6] ? g * LOAD(PTR(psw), i) : g;
      if (mode == 1) v /= (CT)LD_I64(PTR(bag_size), b);
    }
  }
  STORE(PTR(rows), idx, v);
}

/* One work item per index position: d loss / d per_sample_weight = <grad[bag], weight[row]>. */
KERNEL(embedding_bag_psw_backward)(BUF(grad), BUF(weight), BUF(indices), BUF(offset2bag),
                                         BUF(out), smp_params P, long total) {
  long i = get_global_id(0);
  if (i >= total) return;
  long dim = P.i[1], b = LD_I64(PTR(offset2bag), i), row = load_int(PTR(indices), i, (int)P.i[7]);
  CT acc = 0;
  if (row != P.i[5] && b >= 0 && b < P.i[0])
    for (long d = 0; d < dim; d++)
      acc += LOAD(PTR(grad), b * dim + d) * LOAD(PTR(weight), row * P.i[9] + d * P.i[10]);
  STORE(PTR(out), i, acc);
}

/* ---- margin losses ---------------------------------------------------------------------------
 * input contiguous [n, c], one work item per sample; the loss per sample (divided by c).
 * multi_margin P.i: 0 n, 1 c, 2 p (1 or 2), 3 has weight, 4 grad_output stride (backward);
 * PF: 0 margin, 1 gradient scale (backward: 1 / n for the mean).
 * multilabel_margin P.i: 0 n, 1 c, 4 grad_output stride; PF 1 gradient scale. Targets (int64,
 * contiguous) list each sample's classes up to the first negative one. */

KERNEL(multi_margin)(BUF(in), BUF(target), BUF(weight), BUF(out), smp_params P, long total) {
  long n = get_global_id(0);
  if (n >= total) return;
  long C = P.i[1], y = LD_I64(PTR(target), n);
  __global uchar *x = PTR(in);
  CT xy = LOAD(x, n * C + y), wy = P.i[3] ? LOAD(PTR(weight), y) : (CT)1, acc = 0;
  for (long i = 0; i < C; i++) {
    if (i == y) continue;
    CT z = PF(0) - xy + LOAD(x, n * C + i);
    if (z > 0) acc += (P.i[2] == 1 ? z : z * z) * wy;
  }
  STORE(PTR(out), n, acc / (CT)C);
}

KERNEL(multi_margin_backward)(BUF(grad_out), BUF(in), BUF(target), BUF(weight), BUF(grad_in),
                                    smp_params P, long total) {
  long n = get_global_id(0);
  if (n >= total) return;
  long C = P.i[1], y = LD_I64(PTR(target), n);
  __global uchar *x = PTR(in);
  CT g = LOAD(PTR(grad_out), n * P.i[4]) * PF(1) / (CT)C;
  CT xy = LOAD(x, n * C + y), wy = P.i[3] ? LOAD(PTR(weight), y) : (CT)1, gy = 0;
  for (long i = 0; i < C; i++) {
    if (i == y) continue;
    CT z = PF(0) - xy + LOAD(x, n * C + i), h = 0;
    if (z > 0) h = (P.i[2] == 1 ? (CT)1 : 2 * z) * wy * g;
    gy -= h;
    STORE(PTR(grad_in), n * C + i, h);
  }
  STORE(PTR(grad_in), n * C + y, gy);
}

KERNEL(multilabel_margin)(BUF(in), BUF(target), BUF(is_target), BUF(out), smp_params P,
                                long total) {
  long n = get_global_id(0);
  if (n >= total) return;
  long C = P.i[1];
  __global uchar *x = PTR(in), *tg = PTR(target), *ist = PTR(is_target);
  for (long i = 0; i < C; i++) STORE(ist, n * C + i, 0);
  for (long j = 0; j < C; j++) {
    long y = LD_I64(tg, n * C + j);
    if (y < 0) break;
    STORE(ist, n * C + y, 1);
  }
  CT acc = 0;
  for (long j = 0; j < C; j++) {
    long y = LD_I64(tg, n * C + j);
    if (y < 0) break;
    CT xy = LOAD(x, n * C + y);
    for (long i = 0; i < C; i++) {
      if (LOAD(ist, n * C + i) != 0) continue;
      CT z = 1 - xy + LOAD(x, n * C + i);
      if (z > 0) acc += z;
    }
  }
  STORE(PTR(out), n, acc / (CT)C);
}

KERNEL(multilabel_margin_backward)(BUF(grad_out), BUF(in), BUF(target), BUF(is_target),
                                         BUF(grad_in), smp_params P, long total) {
  long n = get_global_id(0);
  if (n >= total) return;
  long C = P.i[1];
  __global uchar *x = PTR(in), *tg = PTR(target), *ist = PTR(is_target), *gi = PTR(grad_in);
  CT g = LOAD(PTR(grad_out), n * P.i[4]) * PF(1) / (CT)C;
  /* Each row element sums its terms in a fixed order: gradient[i] for a non-target i counts
   * the targets it violates, gradient[y] minus the non-targets violating y. */
  for (long i = 0; i < C; i++) {
    CT xi = LOAD(x, n * C + i), acc = 0;
    int target_i = LOAD(ist, n * C + i) != 0;
    for (long j = 0; j < C; j++) {
      long y = LD_I64(tg, n * C + j);
      if (y < 0) break;
      CT xy = LOAD(x, n * C + y);
      if (!target_i) {
        if (1 - xy + xi > 0) acc += g;
      } else if (y == i) {
        for (long k = 0; k < C; k++)
          if (LOAD(ist, n * C + k) == 0 && 1 - xy + LOAD(x, n * C + k) > 0) acc -= g;
      }
    }
    STORE(gi, n * C + i, acc);
  }
}

/* ---- CTC loss --------------------------------------------------------------------------------
 * One work-group per batch element; its items share the extended target positions s < 2S+1
 * (blank, label 1, blank, ...) and step through time with a barrier per step.
 * P.i: 0 T, 1 n, 2 classes, 3 Lmax (2 * max target length + 1), 4 blank, 5..7 log_probs strides
 * (t, n, c), 8 target element stride, 9 targets are int32, 10 zero_infinity,
 * 11 grad_output stride. log_alpha / log_beta are contiguous [n, T, Lmax]; tg_offset,
 * input_lengths and target_lengths are int64 [n]. */

inline long ctc_label(__global uchar *targets, long base, long s, long blank, smp_params P) {
  return s % 2 == 0 ? blank : load_int(targets, base + (s / 2) * P.i[8], (int)P.i[9]);
}

inline CT lse3(CT a, CT b, CT c) {
  CT m = fmax(a, fmax(b, c));
  if (m == -INFINITY) return -INFINITY;
  return m + log(exp(a - m) + exp(b - m) + exp(c - m));
}

KERNEL(ctc_alpha)(BUF(log_probs), BUF(targets), BUF(tg_offset), BUF(input_lengths),
                        BUF(target_lengths), BUF(log_alpha), BUF(nll), smp_params P, long total) {
  long b = get_group_id(0), lid = get_local_id(0), lsz = get_local_size(0);
  if (b >= total) return;
  long T = P.i[0], Lmax = P.i[3], blank = P.i[4];
  long Tb = LD_I64(PTR(input_lengths), b), S = LD_I64(PTR(target_lengths), b), L = 2 * S + 1;
  long tbase = LD_I64(PTR(tg_offset), b);
  __global uchar *lp = PTR(log_probs) + 0, *tg = PTR(targets);
  __global CT *la = ACC(PTR(log_alpha)) + b * T * Lmax;
  long lpb = b * P.i[6];
  for (long s = lid; s < Lmax; s += lsz) {
    CT v = -INFINITY;
    if (Tb > 0 && s < 2 && s < L) v = LOAD(lp, lpb + ctc_label(tg, tbase, s, blank, P) * P.i[7]);
    la[s] = v;
    for (long t = (Tb > 0 ? Tb : 1); t < T; t++) la[t * Lmax + s] = -INFINITY;
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (long t = 1; t < Tb; t++) {
    for (long s = lid; s < Lmax; s += lsz) {
      CT v = -INFINITY;
      if (s < L) {
        long l = ctc_label(tg, tbase, s, blank, P);
        __global CT *prev = la + (t - 1) * Lmax;
        CT a = prev[s], b1 = s >= 1 ? prev[s - 1] : -INFINITY, b2 = -INFINITY;
        if (s >= 2 && l != ctc_label(tg, tbase, s - 2, blank, P)) b2 = prev[s - 2];
        v = lse3(a, b1, b2) + LOAD(lp, t * P.i[5] + lpb + l * P.i[7]);
      }
      la[t * Lmax + s] = v;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  if (lid == 0) {
    CT v = INFINITY;
    if (Tb > 0) {
      __global CT *last = la + (Tb - 1) * Lmax;
      v = -lse3(last[L - 1], L >= 2 ? last[L - 2] : -INFINITY, -INFINITY);
    }
    STORE(PTR(nll), b, v);
  }
}

/* log_beta by the mirrored recursion, then the gradient of each (t, class) of this element.
 * One work-item per batch element, without barriers: the work-group form (items sharing the
 * positions s, a barrier per time step, as ctc_alpha) gave wrong gradients now and then under
 * PoCL's default work-group method (loopvec; a stress test over random shapes, about one run
 * in fifteen on some inputs, never with POCL_WORK_GROUP_METHOD=cbs). */
KERNEL(ctc_grad)(BUF(grad_out), BUF(log_probs), BUF(targets), BUF(tg_offset),
                 BUF(input_lengths), BUF(target_lengths), BUF(nll), BUF(log_alpha),
                 BUF(log_beta), BUF(grad), smp_params P, long total) {
  long b = get_global_id(0);
  if (b >= total) return;
  long T = P.i[0], N = P.i[1], C = P.i[2], Lmax = P.i[3], blank = P.i[4];
  long Tb = LD_I64(PTR(input_lengths), b), S = LD_I64(PTR(target_lengths), b), L = 2 * S + 1;
  long tbase = LD_I64(PTR(tg_offset), b);
  __global uchar *lp = PTR(log_probs), *tg = PTR(targets);
  __global CT *la = ACC(PTR(log_alpha)) + b * T * Lmax, *lb = ACC(PTR(log_beta)) + b * T * Lmax;
  long lpb = b * P.i[6];
  if (Tb > 0)
    for (long s = 0; s < Lmax; s++) {
      CT v = -INFINITY;
      if (s < L && s >= L - 2)
        v = LOAD(lp, (Tb - 1) * P.i[5] + lpb + ctc_label(tg, tbase, s, blank, P) * P.i[7]);
      lb[(Tb - 1) * Lmax + s] = v;
    }
  for (long t = Tb - 2; t >= 0; t--) {
    __global CT *next = lb + (t + 1) * Lmax;
    for (long s = 0; s < Lmax; s++) {
      CT v = -INFINITY;
      if (s < L) {
        long l = ctc_label(tg, tbase, s, blank, P);
        CT a = next[s], b1 = s + 1 < L ? next[s + 1] : -INFINITY, b2 = -INFINITY;
        if (s + 2 < L && l != ctc_label(tg, tbase, s + 2, blank, P)) b2 = next[s + 2];
        v = lse3(a, b1, b2) + LOAD(lp, t * P.i[5] + lpb + l * P.i[7]);
      }
      lb[t * Lmax + s] = v;
    }
  }
  CT nl = LOAD(PTR(nll), b), go = LOAD(PTR(grad_out), b * P.i[11]);
  int zero = P.i[10] && nl == INFINITY;
  for (long t = 0; t < T; t++)
    for (long c = 0; c < C; c++) {
      CT v = 0;
      if (t < Tb && !zero) {
        /* log-sum-exp of alpha + beta over the positions labelled c, added in order of s as
         * PyTorch's CPU kernel does (descending), so the cancelling difference below rounds
         * alike */
        CT lcab = -INFINITY;
        for (long s = L - 1; s >= 0; s--) {
          if (ctc_label(tg, tbase, s, blank, P) != c) continue;
          CT v2 = la[t * Lmax + s] + lb[t * Lmax + s];
          if (lcab == -INFINITY) {
            lcab = v2;
          } else {
            CT m = fmax(lcab, v2);
            lcab = log(exp(lcab - m) + exp(v2 - m)) + m;
          }
        }
        CT l = LOAD(lp, t * P.i[5] + lpb + c * P.i[7]);
        v = (exp(l) - exp(lcab + nl - l)) * go;
      }
      STORE(PTR(grad), (t * N + b) * C + c, v);
    }
}

/* ---- pairwise distances ----------------------------------------------------------------------
 * Rows are contiguous of length m. PF(0) is p (0, 1, 2, inf, or any other non-negative value).
 * pdist P.i: 0 rows, 1 m. cdist P.i: 0 batch, 1 rows of x1, 2 rows of x2, 3 m. */

inline CT dist_add(CT acc, CT diff, CT p) {
  diff = fabs(diff);
  if (p == 0) return acc + (diff != 0 ? (CT)1 : (CT)0);
  if (p == INFINITY) return fmax(acc, diff);
  if (p == 1) return acc + diff;
  if (p == 2) return acc + diff * diff;
  return acc + pow(diff, p);
}

inline CT dist_finish(CT acc, CT p) {
  if (p == 0 || p == 1 || p == INFINITY) return acc;
  if (p == 2) return sqrt(acc);
  return pow(acc, 1 / p);
}

/* d dist / d diff for one coordinate difference. */
inline CT dist_grad(CT diff, CT dist, CT p) {
  if (p == 0) return 0;
  if (p == 1) return sign(diff);
  if (p == INFINITY) return fabs(diff) == dist ? sign(diff) : (CT)0;
  if (p < 2)
    return (dist == 0 || (diff == 0 && p < 1))
               ? (CT)0
               : sign(diff) * pow(fabs(diff), p - 1) / pow(dist, p - 1);
  if (p == 2) return dist == 0 ? (CT)0 : diff / dist;
  return dist == 0 ? (CT)0 : diff * pow(fabs(diff), p - 2) / pow(dist, p - 1);
}

inline CT row_dist(__global uchar *a, long ra, __global uchar *b, long rb, long m, CT p) {
  CT acc = 0;
  for (long k = 0; k < m; k++) acc = dist_add(acc, LOAD(a, ra * m + k) - LOAD(b, rb * m + k), p);
  return dist_finish(acc, p);
}

/* Pair k of pdist's (i < j) row-major order: rows i, j. */
inline long pair_start(long i, long n) {
  return i * n - i * (i + 1) / 2;
}
inline void pdist_pair(long k, long n, long *i, long *j) {
  float h = (float)n - 0.5f;
  long r = (long)(h - sqrt(fmax(h * h - 2.0f * (float)k, 0.0f)));
  if (r < 0) r = 0;
  if (r > n - 2) r = n - 2;
  while (r > 0 && pair_start(r, n) > k) r--;
  while (r < n - 2 && pair_start(r + 1, n) <= k) r++;
  *i = r;
  *j = k - pair_start(r, n) + r + 1;
}
inline long pdist_index(long i, long j, long n) {
  return pair_start(i, n) + j - i - 1;
}

KERNEL(pdist)(BUF(x), BUF(out), smp_params P, long total) {
  long k = get_global_id(0);
  if (k >= total) return;
  long i, j;
  pdist_pair(k, P.i[0], &i, &j);
  STORE(PTR(out), k, row_dist(PTR(x), i, PTR(x), j, P.i[1], PF(0)));
}

/* One work item per element of x: the sum over the other rows (a gather). */
KERNEL(pdist_backward)(BUF(grad), BUF(x), BUF(dist), BUF(out), smp_params P, long total) {
  long idx = get_global_id(0);
  if (idx >= total) return;
  long n = P.i[0], m = P.i[1], i = idx / m, k = idx % m;
  CT xi = LOAD(PTR(x), idx), acc = 0;
  for (long j = 0; j < n; j++) {
    if (j == i) continue;
    long pk = i < j ? pdist_index(i, j, n) : pdist_index(j, i, n);
    acc +=
        LOAD(PTR(grad), pk) * dist_grad(xi - LOAD(PTR(x), j * m + k), LOAD(PTR(dist), pk), PF(0));
  }
  STORE(PTR(out), idx, acc);
}

KERNEL(cdist)(BUF(x1), BUF(x2), BUF(out), smp_params P, long total) {
  long idx = get_global_id(0);
  if (idx >= total) return;
  long R = P.i[2], Pn = P.i[1], j = idx % R, i = (idx / R) % Pn, b = idx / (R * Pn);
  STORE(PTR(out), idx, row_dist(PTR(x1), b * Pn + i, PTR(x2), b * R + j, P.i[3], PF(0)));
}

KERNEL(cdist_backward)(BUF(grad), BUF(x1), BUF(x2), BUF(dist), BUF(out), smp_params P,
                             long total) {
  long idx = get_global_id(0);
  if (idx >= total) return;
  long Pn = P.i[1], R = P.i[2], m = P.i[3], k = idx % m, i = (idx / m) % Pn, b = idx / (m * Pn);
  CT xi = LOAD(PTR(x1), idx), acc = 0;
  for (long j = 0; j < R; j++) {
    long pk = (b * Pn + i) * R + j;
    acc += LOAD(PTR(grad), pk) *
           dist_grad(xi - LOAD(PTR(x2), (b * R + j) * m + k), LOAD(PTR(dist), pk), PF(0));
  }
  STORE(PTR(out), idx, acc);
}

/* ---- fractional max pooling ------------------------------------------------------------------
 * 2-d as 3-d with depth 1. P.i: 0 n, 1 c, 2 nd, 3..5 input sizes (d, h, w), 6..8 output sizes,
 * 9..11 kernel sizes, 12..16 input strides (n, c, d, h, w). samples is contiguous [n, c, nd]:
 * for 2-d sample 0 places the columns and sample 1 the rows; for 3-d 0, 1, 2 place d, h, w.
 * Indices are flat within the (d, h, w) plane. */

inline long frac_start(CT u, long in, long out, long k, long i) {
  if (i == out - 1) return in - k;
  CT alpha = (CT)(in - k) / (CT)(out - 1);
  return (long)(((CT)i + u) * alpha) - (long)(u * alpha);
}

KERNEL(fractional_max_pool)(BUF(in), BUF(samples), BUF(out), BUF(indices), smp_params P,
                                  long total) {
  long idx = get_global_id(0);
  if (idx >= total) return;
  long O0 = P.i[6], O1 = P.i[7], O2 = P.i[8], nd = P.i[2];
  long o2 = idx % O2, o1 = (idx / O2) % O1, o0 = (idx / (O2 * O1)) % O0,
       plane = idx / (O2 * O1 * O0);
  __global uchar *sm = PTR(samples);
  long s0 = plane * nd;
  /* sample index per spatial dim (d, h, w) */
  CT u0 = nd == 3 ? LOAD(sm, s0) : (CT)0;
  CT u1 = nd == 3 ? LOAD(sm, s0 + 1) : LOAD(sm, s0 + 1);
  CT u2 = nd == 3 ? LOAD(sm, s0 + 2) : LOAD(sm, s0);
  long a0 = nd == 3 ? frac_start(u0, P.i[3], O0, P.i[9], o0) : 0;
  long a1 = frac_start(u1, P.i[4], O1, P.i[10], o1), a2 = frac_start(u2, P.i[5], O2, P.i[11], o2);
  long base = (plane / P.i[1]) * P.i[12] + (plane % P.i[1]) * P.i[13];
  CT best = -INFINITY;
  long arg = (a0 * P.i[4] + a1) * P.i[5] + a2;
  for (long d = a0; d < a0 + P.i[9]; d++)
    for (long h = a1; h < a1 + P.i[10]; h++)
      for (long w = a2; w < a2 + P.i[11]; w++) {
        CT v = LOAD(PTR(in), base + d * P.i[14] + h * P.i[15] + w * P.i[16]);
        if (v > best || IS_NAN(v)) {
          best = v;
          arg = (d * P.i[4] + h) * P.i[5] + w;
        }
      }
  STORE(PTR(out), idx, best);
  ST_I64(PTR(indices), idx, arg);
}

#endif
