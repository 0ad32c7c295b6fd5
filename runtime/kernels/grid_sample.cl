/*
 * Grid sampling (grid_sampler_2d / 3d and their backward), launched by
 * runtime/src/ops/grid_sample.c with an axon_grid_sample_args A (grid_sample_args.h). 2-d runs
 * as 3-d with depth 1. Grid coordinate k (x, y, z) indexes spatial dim 2 - k (w, h, d).
 * A work-item per (sample, output position), looping over channels. The output, grad_grid and
 * the input-gradient accumulator are contiguous; the input gradient is scattered with acc_add.
 */

#include "grid_sample_args.h"
#include "interp_common.cl"

#ifdef IS_FLOAT

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

inline void gs_make_taps(__global uchar *grid, long n, long o0, long o1, long o2,
                         const axon_grid_sample_args *A, gs_taps *T) {
  int nd = (int)A->nd;
  long mode = A->mode, padding = A->padding, align = A->align_corners;
  CT pos[3];
  long gbase = n * A->grid_strides[0] + o0 * A->grid_strides[1] + o1 * A->grid_strides[2] +
               o2 * A->grid_strides[3];
  for (int k = 0; k < nd; k++) {
    long size = A->in_size[2 - k];
    CT gu, gp;
    CT x = unnormalize(LOAD(grid, gbase + k * A->grid_coord_stride), size, align, &gu);
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
      long size = A->in_size[2 - k];
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
    T->off[i] = d * A->in_strides[2] + p[1] * A->in_strides[3] + p[0] * A->in_strides[4];
    T->flat[i] = (d * A->in_size[1] + p[1]) * A->in_size[2] + p[0];
    T->w[i] = w;
    for (int m = 0; m < 3; m++) T->dw[i][m] = m < nd ? dw[m] : (CT)0;
  }
}

KERNEL(grid_sample)(BUF(in), BUF(grid), BUF(out), STRUCT_ARG(axon_grid_sample_args, A),
                    long total) {
  PRIVATE_STRUCT(axon_grid_sample_args, A);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long O0 = A.out_size[0], O1 = A.out_size[1], O2 = A.out_size[2], C = A.channels;
  long o2 = idx % O2, o1 = (idx / O2) % O1, o0 = (idx / (O2 * O1)) % O0, n = idx / (O2 * O1 * O0);
  gs_taps T;
  gs_make_taps(PTR(grid), n, o0, o1, o2, &A, &T);
  long ovol = O0 * O1 * O2, sp = (o0 * O1 + o1) * O2 + o2;
  for (long c = 0; c < C; c++) {
    long base = n * A.in_strides[0] + c * A.in_strides[1];
    CT acc = 0;
    for (int t = 0; t < T.n; t++) acc += T.w[t] * LOAD(PTR(in), base + T.off[t]);
    STORE(PTR(out), (n * C + c) * ovol + sp, acc);
  }
}

KERNEL(grid_sample_backward)(BUF(grad_out), BUF(in), BUF(grid), BUF(acc), BUF(grad_grid),
                             STRUCT_ARG(axon_grid_sample_args, A), long total) {
  PRIVATE_STRUCT(axon_grid_sample_args, A);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long O0 = A.out_size[0], O1 = A.out_size[1], O2 = A.out_size[2], C = A.channels;
  long o2 = idx % O2, o1 = (idx / O2) % O1, o0 = (idx / (O2 * O1)) % O0, n = idx / (O2 * O1 * O0);
  int nd = (int)A.nd;
  gs_taps T;
  gs_make_taps(PTR(grid), n, o0, o1, o2, &A, &T);
  long ivol = A.in_size[0] * A.in_size[1] * A.in_size[2];
  const long *gs = A.grad_out_strides;
  CT gc[3] = {0, 0, 0};
  for (long c = 0; c < C; c++) {
    CT g = LOAD(PTR(grad_out), n * gs[0] + c * gs[1] + o0 * gs[2] + o1 * gs[3] + o2 * gs[4]);
    long base = n * A.in_strides[0] + c * A.in_strides[1], abase = (n * C + c) * ivol;
    for (int t = 0; t < T.n; t++) {
      acc_add(PTR(acc), abase + T.flat[t], T.w[t] * g);
      CT v = LOAD(PTR(in), base + T.off[t]) * g;
      for (int k = 0; k < nd; k++) gc[k] += T.dw[t][k] * v;
    }
  }
  for (int k = 0; k < nd; k++) STORE(PTR(grad_grid), idx * nd + k, gc[k] * T.mult[k]);
}

#endif
