/* Tests of the neural-network layer launchers (convolution unfolding, pooling, normalization,
 * resampling, padding, embedding backward, the launchers that take a typed descriptor) against
 * references computed on the host. */
#include <math.h>
#include <stdint.h>

#include "axon/distance.h"
#include "axon/fft.h"
#include "axon/margin_loss.h"
#include "harness.h"

#define DEV 0

static void *up(const void *host, size_t bytes) {
  return dev_upload(DEV, host, bytes);
}
static int down(void *host, const void *dev, size_t bytes) {
  return dev_download(host, dev, bytes);
}
static void *dev_fill(size_t bytes, uint8_t byte) {
  void *h = malloc(bytes);
  memset(h, byte, bytes);
  void *d = up(h, bytes);
  free(h);
  return d;
}

static void check_close(const char *what, const float *got, const double *want, size_t n,
                        double tol) {
  double e = max_rel_err(got, want, n, 1.0);
  CHECK(e <= tol, "%s (max err %.3g, tolerance %.3g)", what, e, tol);
}

/* A contiguous [n, c, h, w] 2-D geometry. */
static axon_spatial_desc geom2d(int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh,
                                int64_t ow) {
  axon_spatial_desc d;
  memset(&d, 0, sizeof d);
  d.nd = 2;
  d.n = n;
  d.c = c;
  d.in[0] = h;
  d.in[1] = w;
  d.out[0] = oh;
  d.out[1] = ow;
  for (int i = 0; i < 2; i++) d.kernel[i] = d.stride[i] = d.dilation[i] = 1;
  int64_t ist[5] = {c * h * w, h * w, w, 1, 0}, ost[5] = {c * oh * ow, oh * ow, ow, 1, 0};
  memcpy(d.in_strides, ist, sizeof ist);
  memcpy(d.out_strides, ost, sizeof ost);
  return d;
}

/* ---- im2col / col2im ------------------------------------------------------------------------ */

enum {
  CN = 2,
  CC = 3,
  CH = 6,
  CW = 5,
  KH = 3,
  KW = 2,
  SH = 2,
  SW = 1,
  PH = 1,
  PW = 1,
  DH = 1,
  DW = 2
};
#define COH ((CH + 2 * PH - DH * (KH - 1) - 1) / SH + 1)
#define COW ((CW + 2 * PW - DW * (KW - 1) - 1) / SW + 1)

static void test_unfold(axon_stream_t s) {
  enum { NIN = CN * CC * CH * CW, L = COH * COW, ROWS = CC * KH * KW, NCOL = ROWS * CN * L };
  static float x[NIN], col[NCOL], back[NIN], y[NCOL];
  static double want[NCOL], want_back[NIN];
  for (int i = 0; i < NIN; i++) x[i] = rng_float(-1, 1);
  for (int i = 0; i < NCOL; i++) y[i] = rng_float(-1, 1);
  memset(want_back, 0, sizeof want_back);
  for (int c = 0; c < CC; c++)
    for (int kh = 0; kh < KH; kh++)
      for (int kw = 0; kw < KW; kw++)
        for (int n = 0; n < CN; n++)
          for (int oh = 0; oh < COH; oh++)
            for (int ow = 0; ow < COW; ow++) {
              int row = (c * KH + kh) * KW + kw, at = (row * CN + n) * L + oh * COW + ow;
              int ih = oh * SH - PH + kh * DH, iw = ow * SW - PW + kw * DW;
              int inside = ih >= 0 && ih < CH && iw >= 0 && iw < CW;
              int xi = ((n * CC + c) * CH + ih) * CW + iw;
              want[at] = inside ? x[xi] : 0.0;
              if (inside) want_back[xi] += y[at];
            }
  axon_spatial_desc d = geom2d(CN, CC, CH, CW, COH, COW);
  d.kernel[0] = KH, d.kernel[1] = KW, d.stride[0] = SH, d.stride[1] = SW;
  d.pad[0] = PH, d.pad[1] = PW, d.dilation[0] = DH, d.dilation[1] = DW;
  void *dx = up(x, sizeof x), *dcol = dev_fill(sizeof col, 0), *dy = up(y, sizeof y),
       *dback = dev_fill(sizeof back, 0);
  d.input = dx;
  d.output = dcol;
  if (CHECK_OK(axon_im2col(s, AXON_F32, &d)) && down(col, dcol, sizeof col))
    check_close("im2col matches the reference", col, want, NCOL, 0);
  d.input = dback;
  d.output = dy;
  if (CHECK_OK(axon_col2im(s, AXON_F32, &d)) && down(back, dback, sizeof back))
    check_close("col2im sums each element's columns", back, want_back, NIN, 1e-6);
  d.nd = 4;
  CHECK_STATUS(axon_im2col(s, AXON_F32, &d), AXON_ERROR_INVALID_ARGUMENT);
  axon_free(dx), axon_free(dcol), axon_free(dy), axon_free(dback);
}

/* ---- pooling -------------------------------------------------------------------------------- */

static void test_pool(axon_stream_t s) {
  enum {
    N = 2,
    C = 2,
    H = 7,
    W = 6,
    K = 3,
    S = 2,
    P = 1,
    OH = (H + 2 * P - K) / S + 1,
    OW = (W + 2 * P - K) / S + 1
  };
  enum { NIN = N * C * H * W, NOUT = N * C * OH * OW };
  static float x[NIN], out[NOUT], g[NOUT], gin[NIN];
  static int64_t idx[NOUT];
  static double want[NOUT], want_g[NIN], want_avg[NOUT], want_avg_g[NIN];
  for (int i = 0; i < NIN; i++) x[i] = rng_float(-1, 1);
  for (int i = 0; i < NOUT; i++) g[i] = rng_float(-1, 1);
  memset(want_g, 0, sizeof want_g);
  memset(want_avg_g, 0, sizeof want_avg_g);
  int64_t want_idx[NOUT];
  for (int p = 0; p < N * C; p++)
    for (int oh = 0; oh < OH; oh++)
      for (int ow = 0; ow < OW; ow++) {
        int o = (p * OH + oh) * OW + ow;
        double best = -INFINITY, sum = 0;
        int bi = -1, cnt = 0;
        for (int kh = 0; kh < K; kh++)
          for (int kw = 0; kw < K; kw++) {
            int ih = oh * S - P + kh, iw = ow * S - P + kw;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            double v = x[(p * H + ih) * W + iw];
            if (v > best) best = v, bi = ih * W + iw;
            sum += v;
            cnt++;
          }
        want[o] = best;
        want_idx[o] = bi;
        want_g[p * H * W + bi] += g[o];
        want_avg[o] = sum / cnt; /* count_include_pad = 0 */
        for (int kh = 0; kh < K; kh++)
          for (int kw = 0; kw < K; kw++) {
            int ih = oh * S - P + kh, iw = ow * S - P + kw;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W)
              want_avg_g[(p * H + ih) * W + iw] += g[o] / cnt;
          }
      }
  axon_spatial_desc d = geom2d(N, C, H, W, OH, OW);
  d.kernel[0] = d.kernel[1] = K, d.stride[0] = d.stride[1] = S, d.pad[0] = d.pad[1] = P;
  void *dx = up(x, sizeof x), *dout = dev_fill(sizeof out, 0), *didx = dev_fill(sizeof idx, 0);
  void *dg = up(g, sizeof g), *dgin = dev_fill(sizeof gin, 0);
  d.input = dx, d.output = dout, d.indices = didx;
  if (CHECK_OK(axon_pool(s, AXON_F32, AXON_POOL_MAX, &d)) && down(out, dout, sizeof out) &&
      down(idx, didx, sizeof idx)) {
    check_close("max pool values", out, want, NOUT, 0);
    CHECK(!memcmp(idx, want_idx, sizeof idx), "max pool indices");
  }
  d.input = dgin, d.output = dg;
  if (CHECK_OK(axon_pool_backward(s, AXON_F32, AXON_POOL_MAX, &d)) && down(gin, dgin, sizeof gin))
    check_close("max pool backward", gin, want_g, NIN, 1e-6);
  d.input = dx, d.output = dout, d.count_include_pad = 0;
  if (CHECK_OK(axon_pool(s, AXON_F32, AXON_POOL_AVG, &d)) && down(out, dout, sizeof out))
    check_close("average pool (count_include_pad off)", out, want_avg, NOUT, 1e-6);
  d.input = dgin, d.output = dg;
  if (CHECK_OK(axon_pool_backward(s, AXON_F32, AXON_POOL_AVG, &d)) && down(gin, dgin, sizeof gin))
    check_close("average pool backward", gin, want_avg_g, NIN, 1e-6);
  CHECK_STATUS(axon_pool(s, AXON_I32, AXON_POOL_AVG, &d), AXON_ERROR_UNSUPPORTED_DTYPE);
  /* Adaptive to 1x1 is the mean of each plane. */
  axon_spatial_desc a = geom2d(N, C, H, W, 1, 1);
  double means[N * C];
  float got[N * C];
  for (int p = 0; p < N * C; p++) {
    double sum = 0;
    for (int i = 0; i < H * W; i++) sum += x[p * H * W + i];
    means[p] = sum / (H * W);
  }
  a.input = dx, a.output = dout;
  if (CHECK_OK(axon_pool(s, AXON_F32, AXON_POOL_ADAPTIVE_AVG, &a)) && down(got, dout, sizeof got))
    check_close("adaptive average pool to 1x1", got, means, N * C, 1e-6);
  /* Adaptive max to 1x1: the maximum of each plane and its position. */
  double maxes[N * C];
  int64_t where[N * C], got_idx[N * C];
  for (int p = 0; p < N * C; p++) {
    maxes[p] = -INFINITY;
    for (int i = 0; i < H * W; i++)
      if (x[p * H * W + i] > maxes[p]) maxes[p] = x[p * H * W + i], where[p] = i;
  }
  a.indices = didx;
  if (CHECK_OK(axon_pool(s, AXON_F32, AXON_POOL_ADAPTIVE_MAX, &a)) && down(got, dout, sizeof got) &&
      down(got_idx, didx, sizeof got_idx)) {
    check_close("adaptive max pool to 1x1", got, maxes, N * C, 0);
    CHECK(!memcmp(got_idx, where, sizeof where), "adaptive max pool indices");
  }
  axon_free(dx), axon_free(dout), axon_free(didx), axon_free(dg), axon_free(dgin);
}

/* ---- normalization (layer norm over rows) ---------------------------------------------------- */

static void test_norm(axon_stream_t s) {
  enum { M = 5, D = 300 };
  static float x[M * D], dy[M * D], w[D], b[D], y[M * D], dx[M * D], mean[M], rstd[M];
  static double want_y[M * D], want_dx[M * D], want_mean[M], want_rstd[M];
  for (int i = 0; i < M * D; i++) x[i] = rng_float(-2, 3), dy[i] = rng_float(-1, 1);
  for (int i = 0; i < D; i++) w[i] = rng_float(0.5f, 1.5f), b[i] = rng_float(-1, 1);
  for (int r = 0; r < M; r++) {
    double m = 0, v = 0;
    for (int j = 0; j < D; j++) m += x[r * D + j];
    m /= D;
    for (int j = 0; j < D; j++) v += (x[r * D + j] - m) * (x[r * D + j] - m);
    v /= D;
    double rs = 1 / sqrt(v + 1e-5), s1 = 0, s2 = 0;
    want_mean[r] = m, want_rstd[r] = rs;
    for (int j = 0; j < D; j++) {
      double xh = (x[r * D + j] - m) * rs;
      want_y[r * D + j] = xh * w[j] + b[j];
      s1 += dy[r * D + j] * w[j];
      s2 += dy[r * D + j] * w[j] * xh;
    }
    for (int j = 0; j < D; j++) {
      double xh = (x[r * D + j] - m) * rs;
      want_dx[r * D + j] = rs * (dy[r * D + j] * w[j] - s1 / D - xh * s2 / D);
    }
  }
  void *dxx = up(x, sizeof x), *ddy = up(dy, sizeof dy), *dw = up(w, sizeof w),
       *db = up(b, sizeof b);
  void *dyy = dev_fill(sizeof y, 0), *ddx = dev_fill(sizeof dx, 0), *dm = dev_fill(sizeof mean, 0),
       *dr = dev_fill(sizeof rstd, 0), *s1 = dev_fill(sizeof mean, 0),
       *s2 = dev_fill(sizeof mean, 0);
  axon_norm_desc d;
  memset(&d, 0, sizeof d);
  d.targets = M, d.na = 1, d.nb = D, d.st = D, d.sa = 0, d.sb = 1;
  d.numel = M * D, d.gdiv = D, d.gmod = M, d.cdiv = 1, d.cmod = D, d.count = D;
  d.x = dxx, d.dy = ddy, d.weight = dw, d.bias = db, d.mean = dm, d.rstd = dr, d.eps = 1e-5;
  d.y = dyy, d.sum1 = s1, d.sum2 = s2, d.train = 1;
  if (CHECK_OK(axon_norm_stats(s, AXON_F32, &d)) && down(mean, dm, sizeof mean) &&
      down(rstd, dr, sizeof rstd)) {
    check_close("layer norm mean", mean, want_mean, M, 1e-6);
    check_close("layer norm rstd", rstd, want_rstd, M, 1e-5);
  }
  if (CHECK_OK(axon_norm_apply(s, AXON_F32, &d)) && down(y, dyy, sizeof y))
    check_close("layer norm output", y, want_y, M * D, 1e-5);
  d.y = ddx;
  if (CHECK_OK(axon_norm_sums(s, AXON_F32, &d)) && CHECK_OK(axon_norm_backward(s, AXON_F32, &d)) &&
      down(dx, ddx, sizeof dx))
    check_close("layer norm input gradient", dx, want_dx, M * D, 1e-4);
  CHECK_STATUS(axon_norm_stats(s, AXON_I64, &d), AXON_ERROR_UNSUPPORTED_DTYPE);
  axon_free(dxx), axon_free(ddy), axon_free(dw), axon_free(db), axon_free(dyy), axon_free(ddx);
  axon_free(dm), axon_free(dr), axon_free(s1), axon_free(s2);
}

/* ---- resampling and padding ------------------------------------------------------------------ */

static void test_resample(axon_stream_t s) {
  enum { H = 3, W = 4, OH = 6, OW = 8, PL = 2, PR = 1 };
  static float x[H * W], out[OH * OW], padded[H * (W + PL + PR)], g[H * (W + PL + PR)], gin[H * W];
  static double want[OH * OW], want_pad[H * (W + PL + PR)], want_g[H * W];
  for (int i = 0; i < H * W; i++) x[i] = rng_float(-1, 1);
  for (int i = 0; i < OH * OW; i++) want[i] = x[(i / OW / 2) * W + (i % OW) / 2];
  void *dx = up(x, sizeof x), *dout = dev_fill(sizeof out, 0);
  axon_spatial_desc d = geom2d(1, 1, H, W, OH, OW);
  d.input = dx, d.output = dout;
  if (CHECK_OK(axon_resample(s, AXON_F32, AXON_RESAMPLE_NEAREST, &d)) &&
      down(out, dout, sizeof out))
    check_close("nearest upsampling by 2", out, want, OH * OW, 0);
  /* align_corners linear upsampling reproduces the corners exactly. */
  d.align_corners = 1;
  if (CHECK_OK(axon_resample(s, AXON_F32, AXON_RESAMPLE_LINEAR, &d)) && down(out, dout, sizeof out))
    CHECK(out[0] == x[0] && out[OW - 1] == x[W - 1] && out[OH * OW - 1] == x[H * W - 1],
          "bilinear (align_corners) keeps the corners");
  /* Reflection padding of the last dim by (2, 1), and its backward. */
  enum { PW = W + PL + PR };
  memset(want_g, 0, sizeof want_g);
  for (int r = 0; r < H; r++)
    for (int o = 0; o < PW; o++) {
      int j = o - PL;
      if (j < 0) j = -j;
      if (j >= W) j = 2 * (W - 1) - j;
      want_pad[r * PW + o] = x[r * W + j];
      g[r * PW + o] = rng_float(-1, 1);
      want_g[r * W + j] += g[r * PW + o];
    }
  axon_spatial_desc p = geom2d(1, 1, H, W, H, PW);
  p.nd = 1;
  p.n = 1, p.c = H, p.in[0] = W, p.out[0] = PW, p.kernel[0] = p.stride[0] = p.dilation[0] = 1;
  int64_t ist[5] = {H * W, W, 1, 0, 0}, ost[5] = {H * PW, PW, 1, 0, 0};
  memcpy(p.in_strides, ist, sizeof ist);
  memcpy(p.out_strides, ost, sizeof ost);
  p.pad[0] = PL, p.pad_after[0] = PR;
  void *dp = dev_fill(sizeof padded, 0), *dg = up(g, sizeof g), *dgin = dev_fill(sizeof gin, 0);
  p.input = dx, p.output = dp;
  if (CHECK_OK(axon_resample(s, AXON_F32, AXON_PAD_REFLECT, &p)) && down(padded, dp, sizeof padded))
    check_close("reflection padding", padded, want_pad, H * PW, 0);
  p.input = dgin, p.output = dg;
  if (CHECK_OK(axon_resample_backward(s, AXON_F32, AXON_PAD_REFLECT, &p)) &&
      down(gin, dgin, sizeof gin))
    check_close("reflection padding backward", gin, want_g, H * W, 1e-6);
  p.pad[0] = W;
  CHECK_STATUS(axon_resample(s, AXON_F32, AXON_PAD_REFLECT, &p), AXON_ERROR_INVALID_ARGUMENT);
  axon_free(dx), axon_free(dout), axon_free(dp), axon_free(dg), axon_free(dgin);
}

/* ---- embedding backward ---------------------------------------------------------------------- */

static void test_embedding(axon_stream_t s) {
  enum { N = 40, DIM = 5, NW = 7, PAD = 2 };
  static float g[N * DIM], out[NW * DIM], out2[NW * DIM];
  static double want[NW * DIM];
  int64_t idx[N];
  memset(want, 0, sizeof want);
  for (int i = 0; i < N; i++) {
    idx[i] = (int64_t)(rng_u64() % NW);
    for (int c = 0; c < DIM; c++) {
      g[i * DIM + c] = rng_float(-1, 1);
      if (idx[i] != PAD) want[idx[i] * DIM + c] += g[i * DIM + c];
    }
  }
  void *dg = up(g, sizeof g), *di = up(idx, sizeof idx), *dsc = dev_fill(3 * N * 8, 0),
       *dout = dev_fill(sizeof out, 0);
  axon_embedding_bwd_desc d = {N, DIM, NW, PAD, 0, 0, dg, di, dsc, dout};
  if (CHECK_OK(axon_embedding_backward(s, AXON_F32, &d)) && down(out, dout, sizeof out))
    check_close("embedding backward sums rows (padding row stays zero)", out, want, NW * DIM, 1e-6);
  if (CHECK_OK(axon_embedding_backward(s, AXON_F32, &d)) && down(out2, dout, sizeof out2))
    CHECK(!memcmp(out, out2, sizeof out), "embedding backward is deterministic");
  axon_free(dg), axon_free(di), axon_free(dsc), axon_free(dout);
}

/* The transform of 3 rows of lengths that take each path (a power of two, Bluestein), forward
 * and inverse, against a direct DFT in double on the host. */
static void test_fft(axon_stream_t s) {
  static const int64_t lengths[] = {1, 8, 6, 13};
  enum { BATCH = 3 };
  for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++) {
    for (int inverse = 0; inverse <= 1; inverse++) {
      int64_t n = lengths[l], total = BATCH * n;
      float *x = malloc(sizeof(float) * 2 * (size_t)total),
            *y = malloc(sizeof(float) * 2 * (size_t)total);
      for (int64_t i = 0; i < 2 * total; i++) x[i] = (float)((i * 37 % 23) - 11) / 7.0f;
      size_t scratch_bytes = 8 * (size_t)axon_fft_scratch_elements(BATCH, n);
      void *din = up(x, 8 * (size_t)total), *dout = dev_fill(8 * (size_t)total, 0),
           *dscratch = dev_fill(scratch_bytes, 0);
      axon_fft_desc d = {BATCH, n, inverse, din, dout, dscratch};
      CHECK_OK(axon_fft(s, AXON_C64, &d));
      CHECK(down(y, dout, 8 * (size_t)total), "download");
      double worst = 0;
      for (int64_t b = 0; b < BATCH; b++)
        for (int64_t j = 0; j < n; j++) {
          double re = 0, im = 0;
          for (int64_t k = 0; k < n; k++) {
            double a = (inverse ? 2 : -2) * M_PI * (double)((j * k) % n) / (double)n;
            double xr = x[2 * (b * n + k)], xi = x[2 * (b * n + k) + 1];
            re += xr * cos(a) - xi * sin(a);
            im += xr * sin(a) + xi * cos(a);
          }
          worst = fmax(worst, fabs(re - y[2 * (b * n + j)]) + fabs(im - y[2 * (b * n + j) + 1]));
        }
      CHECK(worst < 1e-4, "fft n=%lld %s matches a direct DFT (worst %.2g)", (long long)n,
            inverse ? "inverse" : "forward", worst);
      axon_free(din);
      axon_free(dout);
      axon_free(dscratch);
      free(x);
      free(y);
    }
  }
  float half[2 * 3] = {1, 2, 3, 4, 5, 6}, full[2 * 4];
  void *dh = up(half, sizeof half), *df = dev_fill(sizeof full, 0);
  CHECK_OK(axon_fft_hermitian_extend(s, AXON_C64, dh, df, 1, 3, 4));
  CHECK(down(full, df, sizeof full), "download");
  CHECK(full[6] == 3 && full[7] == -4, "the term above half is the conjugate of its mirror");
  CHECK_STATUS(axon_fft(s, AXON_F32, &(axon_fft_desc){1, 4, 0, dh, df, dh}),
               AXON_ERROR_UNSUPPORTED_DTYPE);
  axon_free(dh);
  axon_free(df);
}

/* ---- launchers with a typed descriptor (kernels/NAME_args.h) --------------------------------- */

static void test_descriptors(axon_stream_t s) {
  /* pdist of rows (0, 0), (3, 4), (6, 8): the pairs in (i < j) order, p = 2 and p = 1. */
  static const float x[6] = {0, 0, 3, 4, 6, 8};
  float out[3];
  void *dx = up(x, sizeof x), *dout = dev_fill(sizeof out, 0);
  axon_distance_desc d;
  memset(&d, 0, sizeof d);
  d.args.batch = 1;
  d.args.rows1 = 3;
  d.args.cols = 2;
  d.args.p = axon_real_of(2.0);
  d.x1 = dx;
  d.output = dout;
  static const double want2[3] = {5, 10, 5}, want1[3] = {7, 14, 7};
  if (CHECK_OK(axon_distance(s, AXON_F32, AXON_PDIST, &d)) && down(out, dout, sizeof out))
    check_close("pdist, p = 2", out, want2, 3, 1e-6);
  d.args.p = axon_real_of(1.0);
  if (CHECK_OK(axon_distance(s, AXON_F32, AXON_PDIST, &d)) && down(out, dout, sizeof out))
    check_close("pdist, p = 1 (the real argument as float)", out, want1, 3, 1e-6);
  /* float64 reads the real as the double's bits: p = 1 + 2^-40, which float rounds to 1. */
  if (axon_device_supports_dtype(DEV, AXON_F64)) {
    static const double xd[6] = {0, 0, 3, 4, 6, 8};
    double outd[3];
    void *dxd = up(xd, sizeof xd), *doutd = dev_fill(sizeof outd, 0);
    d.x1 = dxd;
    d.output = doutd;
    double pd = 1 + ldexp(1.0, -40);
    d.args.p = axon_real_of(pd);
    if (CHECK_OK(axon_distance(s, AXON_F64, AXON_PDIST, &d)) && down(outd, doutd, sizeof outd)) {
      double w = pow(pow(3, pd) + pow(4, pd), 1 / pd);
      CHECK(outd[0] != 7 && fabs(outd[0] - w) < 1e-12, "pdist float64 uses the double p (%.17g)",
            outd[0]);
    }
    d.x1 = dx;
    d.output = dout;
    axon_free(dxd), axon_free(doutd);
  } else {
    CHECK_STATUS(axon_distance(s, AXON_F64, AXON_PDIST, &d), AXON_ERROR_UNSUPPORTED_DTYPE);
    SKIP("pdist float64 values: device %d lacks cl_khr_fp64", DEV);
  }
  /* Kernels are enum values: one outside the table fails with a message. */
  CHECK_STATUS(axon_distance(s, AXON_F32, (axon_distance_kernel)99, &d),
               AXON_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(axon_distance(s, AXON_I32, AXON_PDIST, &d), AXON_ERROR_UNSUPPORTED_DTYPE);
  /* multi_margin_loss with margin 0.5 and no weight (a NULL buffer the kernel does not read):
   * sample (1, 0, 0) of class 0 gives 0; (0, 1, 0.25) of class 0 gives (1.5 + 0.75) / 3. */
  static const float in[6] = {1, 0, 0, 0, 1, 0.25f};
  static const int64_t target[2] = {0, 0};
  float loss[2];
  void *din = up(in, sizeof in), *dt = up(target, sizeof target);
  void *dl = dev_fill(sizeof loss, 0);
  axon_margin_loss_desc m;
  memset(&m, 0, sizeof m);
  m.args.n = 2;
  m.args.classes = 3;
  m.args.p = 1;
  m.args.margin = axon_real_of(0.5);
  m.input = din;
  m.target = dt;
  m.output = dl;
  static const double want_loss[2] = {0, 0.75};
  if (CHECK_OK(axon_margin_loss(s, AXON_F32, AXON_MULTI_MARGIN, &m)) && down(loss, dl, sizeof loss))
    check_close("multi_margin_loss per sample", loss, want_loss, 2, 1e-6);
  axon_free(dx), axon_free(dout), axon_free(din), axon_free(dt), axon_free(dl);
}

int main(void) {
  int count = 0;
  REQUIRE_OK(axon_device_count(&count));
  if (count == 0) {
    SKIP("every test: no device");
    return harness_summary();
  }
  axon_stream_t s;
  REQUIRE_OK(axon_stream_default(DEV, &s));
  test_unfold(s);
  test_pool(s);
  test_norm(s);
  test_resample(s);
  test_embedding(s);
  test_fft(s);
  test_descriptors(s);
  REQUIRE_OK(axon_stream_sync(s));
  return harness_summary();
}
