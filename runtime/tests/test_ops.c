/* Tests of the operators against references computed on the host. */
#include <stdint.h>

#include "harness.h"

#define DEV 0

static axon_stream_t S;

static void *up(const void *host, size_t bytes) {
  return dev_upload(DEV, host, bytes);
}
static void *dev_zeros(size_t bytes) {
  void *h = calloc(1, bytes), *d = up(h, bytes);
  free(h);
  return d;
}
static int down(void *host, const void *dev, size_t bytes) {
  return dev_download(host, dev, bytes);
}

/* Compares n floats with a reference: max |got - want| / max(|want|, floor) <= tol. */
static void check_f32(const char *what, const float *got, const double *want, size_t n,
                      double floor, double tol) {
  double e = max_rel_err(got, want, n, floor);
  CHECK(e <= tol, "%s (max err %.3g, tolerance %.3g)", what, e, tol);
}
static void check_f64(const char *what, const double *got, const double *want, size_t n,
                      double floor, double tol) {
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double scale = fabs(want[i]) > floor ? fabs(want[i]) : floor;
    double e = fabs(got[i] - want[i]) / scale;
    if (!(e <= worst)) worst = e; /* NaN sticks */
  }
  CHECK(worst <= tol, "%s (max err %.3g, tolerance %.3g)", what, worst, tol);
}

/* A 2-D iteration over sizes (d0 fastest, d1), every operand contiguous. */
static axon_ew_desc ew2d(int64_t d0, int64_t d1, int ninputs) {
  axon_ew_desc d;
  memset(&d, 0, sizeof d);
  d.ndim = 2;
  d.ninputs = ninputs;
  d.sizes[0] = d0;
  d.sizes[1] = d1;
  for (int k = 0; k <= ninputs; k++) {
    d.strides[k][0] = 1;
    d.strides[k][1] = d0;
  }
  return d;
}
static axon_ew_desc ew1d(int64_t n, int ninputs) {
  axon_ew_desc d;
  memset(&d, 0, sizeof d);
  d.ndim = 1;
  d.ninputs = ninputs;
  d.sizes[0] = n;
  for (int k = 0; k <= ninputs; k++) d.strides[k][0] = 1;
  return d;
}

/* ---- elementwise, float32 ------------------------------------------------------------------ */

static double gelu_ref(double x) {
  return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
}
static double gelu_tanh_ref(double x) {
  return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

static void test_elementwise_f32(void) {
  enum { C = 53, R = 37, N = C * R };
  static float x[N], y[N], xt[N], yrow[C], out[N];
  static double want[N];
  static uint8_t cond[N], bout[N];
  for (int i = 0; i < N; i++) {
    x[i] = rng_float(-4.0f, 4.0f);
    float mag = rng_float(0.5f, 2.0f);
    y[i] = (rng_u64() & 1) ? mag : -mag;
    cond[i] = (uint8_t)(rng_u64() & 1);
  }
  x[5] = y[5]; /* an equal pair for lt */
  for (int r = 0; r < R; r++)
    for (int c = 0; c < C; c++) xt[c * R + r] = x[r * C + c];
  for (int c = 0; c < C; c++) yrow[c] = rng_float(-3.0f, 3.0f);
  void *dx = up(x, sizeof x), *dy = up(y, sizeof y), *dxt = up(xt, sizeof xt);
  void *dyrow = up(yrow, sizeof yrow), *dout = dev_zeros(sizeof out), *dbool = dev_zeros(N);
  void *dcond = up(cond, sizeof cond);
  if (!dx || !dy || !dxt || !dyrow || !dout || !dbool || !dcond) {
    CHECK(0, "allocate elementwise buffers");
    return;
  }
  axon_ew_desc d;

  /* add with alpha, contiguous */
  d = ew2d(C, R, 2);
  d.data[0] = dout;
  d.data[1] = dx;
  d.data[2] = dy;
  CHECK_OK(axon_elementwise(S, AXON_PW_add, AXON_F32, AXON_F32, &d, 2.5, 0.0));
  down(out, dout, sizeof out);
  for (int i = 0; i < N; i++) want[i] = (double)x[i] + 2.5 * (double)y[i];
  check_f32("add(x, y, alpha=2.5) f32", out, want, N, 1.0, 1e-6);

  /* mul with a broadcast row: y has stride 0 along dimension 1 */
  d = ew2d(C, R, 2);
  d.data[0] = dout;
  d.data[1] = dx;
  d.data[2] = dyrow;
  d.strides[2][1] = 0;
  CHECK_OK(axon_elementwise(S, AXON_PW_mul, AXON_F32, AXON_F32, &d, 1.0, 0.0));
  down(out, dout, sizeof out);
  for (int r = 0; r < R; r++)
    for (int c = 0; c < C; c++) want[r * C + c] = (double)x[r * C + c] * yrow[c];
  check_f32("mul(x, broadcast row) f32", out, want, N, 1e-30, 1e-7);

  /* div with a transposed input */
  d = ew2d(C, R, 2);
  d.data[0] = dout;
  d.data[1] = dxt;
  d.strides[1][0] = R;
  d.strides[1][1] = 1;
  d.data[2] = dy;
  CHECK_OK(axon_elementwise(S, AXON_PW_div, AXON_F32, AXON_F32, &d, 1.0, 0.0));
  down(out, dout, sizeof out);
  for (int i = 0; i < N; i++) want[i] = (double)x[i] / y[i];
  check_f32("div(transposed x, y) f32", out, want, N, 1e-30, 3e-7);

  /* lt writes bool */
  d = ew2d(C, R, 2);
  d.data[0] = dbool;
  d.data[1] = dx;
  d.data[2] = dy;
  CHECK_OK(axon_elementwise(S, AXON_PW_lt, AXON_F32, AXON_BOOL, &d, 1.0, 0.0));
  down(bout, dbool, sizeof bout);
  int mism = 0;
  for (int i = 0; i < N; i++) mism += bout[i] != (x[i] < y[i] ? 1 : 0);
  CHECK(mism == 0, "lt(x, y) f32 -> bool (%d mismatches)", mism);

  /* where(cond, x, scalar) */
  d = ew2d(C, R, 3);
  d.data[0] = dout;
  d.data[1] = dcond;
  d.data[2] = dx;
  d.is_scalar[3] = 1;
  d.scalars[3] = -7.25;
  CHECK_OK(axon_elementwise(S, AXON_PW_where, AXON_F32, AXON_F32, &d, 0.0, 0.0));
  down(out, dout, sizeof out);
  for (int i = 0; i < N; i++) want[i] = cond[i] ? x[i] : -7.25;
  check_f32("where(cond, x, scalar -7.25) f32", out, want, N, 1e-30, 0.0);

  /* relu into a transposed output */
  d = ew2d(C, R, 1);
  d.data[0] = dout;
  d.strides[0][0] = R;
  d.strides[0][1] = 1;
  d.data[1] = dx;
  CHECK_OK(axon_elementwise(S, AXON_PW_relu, AXON_F32, AXON_F32, &d, 0.0, 0.0));
  down(out, dout, sizeof out);
  for (int r = 0; r < R; r++)
    for (int c = 0; c < C; c++) want[c * R + r] = x[r * C + c] > 0 ? x[r * C + c] : 0.0;
  check_f32("relu(x) into a transposed output f32", out, want, N, 1e-30, 0.0);

  /* unary math */
  d = ew2d(C, R, 1);
  d.data[0] = dout;
  d.data[1] = dx;
  CHECK_OK(axon_elementwise(S, AXON_PW_exp, AXON_F32, AXON_F32, &d, 0.0, 0.0));
  down(out, dout, sizeof out);
  for (int i = 0; i < N; i++) want[i] = exp((double)x[i]);
  check_f32("exp(x) f32", out, want, N, 1e-30, 2e-6);
  CHECK_OK(axon_elementwise(S, AXON_PW_gelu, AXON_F32, AXON_F32, &d, 0.0, 0.0));
  down(out, dout, sizeof out);
  for (int i = 0; i < N; i++) want[i] = gelu_ref(x[i]);
  check_f32("gelu(x) f32", out, want, N, 1.0, 1e-5);
  CHECK_OK(axon_elementwise(S, AXON_PW_gelu_tanh, AXON_F32, AXON_F32, &d, 0.0, 0.0));
  down(out, dout, sizeof out);
  for (int i = 0; i < N; i++) want[i] = gelu_tanh_ref(x[i]);
  check_f32("gelu_tanh(x) f32", out, want, N, 1.0, 1e-5);
  /* gelu and gelu_tanh differ measurably: the comparison can tell them apart. */
  double gap = 0;
  for (int i = 0; i < N; i++) gap = fmax(gap, fabs(gelu_ref(x[i]) - gelu_tanh_ref(x[i])));
  CHECK(gap > 1e-4, "gelu and gelu_tanh references differ (%.3g)", gap);

  /* scalar inputs: x + alpha * s, and s * y */
  d = ew2d(C, R, 2);
  d.data[0] = dout;
  d.data[1] = dx;
  d.is_scalar[2] = 1;
  d.scalars[2] = 0.75;
  CHECK_OK(axon_elementwise(S, AXON_PW_add, AXON_F32, AXON_F32, &d, -2.0, 0.0));
  down(out, dout, sizeof out);
  for (int i = 0; i < N; i++) want[i] = (double)x[i] - 1.5;
  check_f32("add(x, scalar 0.75, alpha=-2) f32", out, want, N, 1.0, 1e-6);
  d = ew2d(C, R, 2);
  d.data[0] = dout;
  d.is_scalar[1] = 1;
  d.scalars[1] = 3.0;
  d.data[2] = dy;
  CHECK_OK(axon_elementwise(S, AXON_PW_mul, AXON_F32, AXON_F32, &d, 1.0, 0.0));
  down(out, dout, sizeof out);
  for (int i = 0; i < N; i++) want[i] = 3.0 * y[i];
  check_f32("mul(scalar 3, y) f32", out, want, N, 1e-30, 1e-7);

  /* a 3-D iteration with a size-1 dimension and broadcast along two dimensions */
  d.ndim = 3;
  d.ninputs = 2;
  d.sizes[0] = C;
  d.sizes[1] = 1;
  d.sizes[2] = R;
  memset(d.strides, 0, sizeof d.strides);
  memset(d.is_scalar, 0, sizeof d.is_scalar);
  d.strides[0][0] = 1;
  d.strides[0][1] = 12345; /* never used: size 1 */
  d.strides[0][2] = C;
  d.strides[1][0] = 1;
  d.strides[1][2] = C;
  d.strides[2][0] = 1; /* yrow broadcast across dimension 2 */
  d.data[0] = dout;
  d.data[1] = dx;
  d.data[2] = dyrow;
  CHECK_OK(axon_elementwise(S, AXON_PW_sub, AXON_F32, AXON_F32, &d, 0.5, 0.0));
  down(out, dout, sizeof out);
  for (int r = 0; r < R; r++)
    for (int c = 0; c < C; c++) want[r * C + c] = (double)x[r * C + c] - 0.5 * yrow[c];
  check_f32("sub(x, row, alpha=0.5) over 3 dims with a size-1 dim f32", out, want, N, 1.0, 1e-6);

  /* 0-dim tensors: one element, no dimensions. */
  memset(&d, 0, sizeof d);
  d.ninputs = 2;
  d.data[0] = dout;
  d.data[1] = (float *)dx + 7;
  d.data[2] = (float *)dy + 9;
  CHECK_OK(axon_elementwise(S, AXON_PW_mul, AXON_F32, AXON_F32, &d, 1.0, 0.0));
  down(out, dout, 2 * sizeof(float));
  want[0] = (double)x[7] * y[9];
  want[1] = (double)x[1] - 0.5 * yrow[1]; /* untouched since the 3-D sub above */
  check_f32("mul of 0-dim tensors writes exactly one element", out, want, 2, 1.0, 1e-6);
  d.ninputs = 4;
  CHECK_STATUS(axon_elementwise(S, AXON_PW_add, AXON_F32, AXON_F32, &d, 1.0, 0.0),
               AXON_ERROR_INVALID_ARGUMENT);
  d.ninputs = 2;

  /* An unknown op id is reported, not crashed on; so is an op without a kernel for the dtype
   * (bitwise ops have no float kernel). */
  CHECK_STATUS(axon_elementwise(S, AXON_PW_COUNT, AXON_F32, AXON_F32, &d, 0, 0),
               AXON_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(axon_elementwise(S, AXON_PW_bitwise_and, AXON_F32, AXON_F32, &d, 0, 0),
               AXON_ERROR_UNSUPPORTED);
  /* An empty iteration is a no-op. */
  d.ndim = 1;
  d.sizes[0] = 0;
  CHECK_OK(axon_elementwise(S, AXON_PW_add, AXON_F32, AXON_F32, &d, 1.0, 0.0));

  axon_free(dx);
  axon_free(dy);
  axon_free(dxt);
  axon_free(dyrow);
  axon_free(dout);
  axon_free(dbool);
  axon_free(dcond);
}

/* ---- elementwise, integers and 16-bit floats ---------------------------------------------- */

static int64_t floor_div64(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static void test_elementwise_int(void) {
  enum { N = 1500 };
  static int64_t x[N], y[N], out[N];
  for (int i = 0; i < N; i++) {
    x[i] = (int64_t)(rng_u64() % 8000000000ull) - 4000000000ll; /* beyond int32 */
    y[i] = (int64_t)(rng_u64() % 2001) - 1000;
    if (y[i] == 0) y[i] = 7;
  }
  void *dx = up(x, sizeof x), *dy = up(y, sizeof y), *dout = dev_zeros(sizeof out);
  axon_ew_desc d = ew1d(N, 2);
  d.data[0] = dout;
  d.data[1] = dx;
  d.data[2] = dy;
  int bad;
  CHECK_OK(axon_elementwise(S, AXON_PW_add, AXON_I64, AXON_I64, &d, 3.0, 0.0));
  down(out, dout, sizeof out);
  bad = 0;
  for (int i = 0; i < N; i++) bad += out[i] != x[i] + 3 * y[i];
  CHECK(bad == 0, "add(x, y, alpha=3) int64 beyond 32 bits (%d wrong)", bad);
  CHECK_OK(axon_elementwise(S, AXON_PW_mul, AXON_I64, AXON_I64, &d, 1.0, 0.0));
  down(out, dout, sizeof out);
  bad = 0;
  for (int i = 0; i < N; i++) bad += out[i] != x[i] * y[i];
  CHECK(bad == 0, "mul(x, y) int64 (%d wrong)", bad);
  CHECK_OK(axon_elementwise(S, AXON_PW_div_floor, AXON_I64, AXON_I64, &d, 1.0, 0.0));
  down(out, dout, sizeof out);
  bad = 0;
  for (int i = 0; i < N; i++) bad += out[i] != floor_div64(x[i], y[i]);
  CHECK(bad == 0, "div_floor(x, y) int64 with negative operands (%d wrong)", bad);
  /* An int64 scalar beyond 2^53 comes through iscalars exactly. */
  d.is_scalar[2] = 1;
  d.iscalars[2] = 9007199254740993ll; /* 2^53 + 1: not a double */
  d.scalars[2] = 0.0;
  CHECK_OK(axon_elementwise(S, AXON_PW_add, AXON_I64, AXON_I64, &d, 1.0, 0.0));
  down(out, dout, sizeof out);
  bad = 0;
  for (int i = 0; i < N; i++) bad += out[i] != x[i] + 9007199254740993ll;
  CHECK(bad == 0, "add(x, int64 scalar 2^53 + 1) (%d wrong)", bad);
  axon_free(dx);
  axon_free(dy);
  axon_free(dout);

  static int32_t a[N], b[N], o32[N];
  static uint8_t bo[N];
  for (int i = 0; i < N; i++) {
    a[i] = (int32_t)(rng_u64() % 200001) - 100000;
    b[i] = (int32_t)(rng_u64() % 401) - 200;
    if (b[i] == 0) b[i] = -3;
  }
  void *da = up(a, sizeof a), *db = up(b, sizeof b), *do32 = dev_zeros(sizeof o32);
  void *dbo = dev_zeros(sizeof bo);
  d = ew1d(N, 2);
  d.data[0] = do32;
  d.data[1] = da;
  d.data[2] = db;
  CHECK_OK(axon_elementwise(S, AXON_PW_sub, AXON_I32, AXON_I32, &d, 2.0, 0.0));
  down(o32, do32, sizeof o32);
  bad = 0;
  for (int i = 0; i < N; i++) bad += o32[i] != a[i] - 2 * b[i];
  CHECK(bad == 0, "sub(a, b, alpha=2) int32 (%d wrong)", bad);
  CHECK_OK(axon_elementwise(S, AXON_PW_mul, AXON_I32, AXON_I32, &d, 1.0, 0.0));
  down(o32, do32, sizeof o32);
  bad = 0;
  for (int i = 0; i < N; i++) bad += o32[i] != a[i] * b[i];
  CHECK(bad == 0, "mul(a, b) int32 (%d wrong)", bad);
  CHECK_OK(axon_elementwise(S, AXON_PW_div_trunc, AXON_I32, AXON_I32, &d, 1.0, 0.0));
  down(o32, do32, sizeof o32);
  bad = 0;
  for (int i = 0; i < N; i++) bad += o32[i] != a[i] / b[i];
  CHECK(bad == 0, "div_trunc(a, b) int32 (%d wrong)", bad);
  CHECK_OK(axon_elementwise(S, AXON_PW_bitwise_xor, AXON_I32, AXON_I32, &d, 1.0, 0.0));
  down(o32, do32, sizeof o32);
  bad = 0;
  for (int i = 0; i < N; i++) bad += o32[i] != (a[i] ^ b[i]);
  CHECK(bad == 0, "bitwise_xor(a, b) int32 (%d wrong)", bad);
  d.data[0] = dbo;
  CHECK_OK(axon_elementwise(S, AXON_PW_ge, AXON_I32, AXON_BOOL, &d, 1.0, 0.0));
  down(bo, dbo, sizeof bo);
  bad = 0;
  for (int i = 0; i < N; i++) bad += bo[i] != (a[i] >= b[i]);
  CHECK(bad == 0, "ge(a, b) int32 -> bool (%d wrong)", bad);
  /* int32 scalar through iscalars */
  d.data[0] = do32;
  d.is_scalar[2] = 1;
  d.iscalars[2] = -123456;
  CHECK_OK(axon_elementwise(S, AXON_PW_add, AXON_I32, AXON_I32, &d, 1.0, 0.0));
  down(o32, do32, sizeof o32);
  bad = 0;
  for (int i = 0; i < N; i++) bad += o32[i] != a[i] - 123456;
  CHECK(bad == 0, "add(a, int32 scalar -123456) (%d wrong)", bad);
  axon_free(da);
  axon_free(db);
  axon_free(do32);
  axon_free(dbo);
}

static void test_elementwise_half(void) {
  enum { N = 2000 };
  static uint16_t hx[N], hy[N], hout[N], bx[N], by[N], bout[N];
  static float got[N];
  static double want[N];
  for (int i = 0; i < N; i++) {
    hx[i] = float_to_half(rng_float(-10.0f, 10.0f));
    hy[i] = float_to_half(rng_float(-10.0f, 10.0f));
    bx[i] = float_to_bf16(rng_float(-3.0f, 3.0f));
    by[i] = float_to_bf16(rng_float(-300.0f, 300.0f));
  }
  /* Host conversion sanity: exact values and rounding to nearest even. */
  CHECK(float_to_half(1.0f) == 0x3c00 && float_to_half(-2.0f) == 0xc000 &&
            float_to_half(65504.0f) == 0x7bff && float_to_half(1e6f) == 0x7c00 &&
            float_to_half(ldexpf(1.0f, -24)) == 0x0001 && half_to_float(0x3555) == 0x1.554p-2f &&
            float_to_half(1.0f + ldexpf(1.0f, -11)) == 0x3c00 &&
            float_to_half(1.0f + 3 * ldexpf(1.0f, -11)) == 0x3c02,
        "host float16 conversions");
  CHECK(float_to_bf16(1.0f) == 0x3f80 && bf16_to_float(0xc040) == -3.0f &&
            float_to_bf16(1.0f + ldexpf(1.0f, -8)) == 0x3f80 &&
            float_to_bf16(1.0f + 3 * ldexpf(1.0f, -8)) == 0x3f82,
        "host bfloat16 conversions");

  void *dhx = up(hx, sizeof hx), *dhy = up(hy, sizeof hy), *dho = dev_zeros(sizeof hout);
  void *dbx = up(bx, sizeof bx), *dby = up(by, sizeof by), *dbo = dev_zeros(sizeof bout);
  axon_ew_desc d = ew1d(N, 2);
  d.data[0] = dho;
  d.data[1] = dhx;
  d.data[2] = dhy;
  CHECK_OK(axon_elementwise(S, AXON_PW_add, AXON_F16, AXON_F16, &d, 0.5, 0.0));
  down(hout, dho, sizeof hout);
  for (int i = 0; i < N; i++) {
    got[i] = half_to_float(hout[i]);
    want[i] = (double)half_to_float(hx[i]) + 0.5 * (double)half_to_float(hy[i]);
  }
  check_f32("add(x, y, alpha=0.5) float16 storage", got, want, N, 1e-2, 1e-3);
  CHECK_OK(axon_elementwise(S, AXON_PW_mul, AXON_F16, AXON_F16, &d, 1.0, 0.0));
  down(hout, dho, sizeof hout);
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += hout[i] != float_to_half(half_to_float(hx[i]) * half_to_float(hy[i]));
  CHECK(bad == 0, "mul(x, y) float16 rounds to nearest even like the host (%d differ)", bad);

  d.data[0] = dbo;
  d.data[1] = dbx;
  d.data[2] = dby;
  CHECK_OK(axon_elementwise(S, AXON_PW_mul, AXON_BF16, AXON_BF16, &d, 1.0, 0.0));
  down(bout, dbo, sizeof bout);
  bad = 0;
  for (int i = 0; i < N; i++)
    bad += bout[i] != float_to_bf16(bf16_to_float(bx[i]) * bf16_to_float(by[i]));
  CHECK(bad == 0, "mul(x, y) bfloat16 rounds to nearest even like the host (%d differ)", bad);
  d = ew1d(N, 1);
  d.data[0] = dbo;
  d.data[1] = dbx;
  CHECK_OK(axon_elementwise(S, AXON_PW_exp, AXON_BF16, AXON_BF16, &d, 0.0, 0.0));
  down(bout, dbo, sizeof bout);
  for (int i = 0; i < N; i++) {
    got[i] = bf16_to_float(bout[i]);
    want[i] = exp((double)bf16_to_float(bx[i]));
  }
  check_f32("exp(x) bfloat16 storage", got, want, N, 1e-30, 5e-3);
  /* A broadcast scalar in float16. */
  d = ew1d(N, 2);
  d.data[0] = dho;
  d.data[1] = dhx;
  d.is_scalar[2] = 1;
  d.scalars[2] = 0.25;
  CHECK_OK(axon_elementwise(S, AXON_PW_mul, AXON_F16, AXON_F16, &d, 1.0, 0.0));
  down(hout, dho, sizeof hout);
  for (int i = 0; i < N; i++) {
    got[i] = half_to_float(hout[i]);
    want[i] = 0.25 * half_to_float(hx[i]);
  }
  check_f32("mul(x, scalar 0.25) float16", got, want, N, 1e-30, 1e-3);
  axon_free(dhx);
  axon_free(dhy);
  axon_free(dho);
  axon_free(dbx);
  axon_free(dby);
  axon_free(dbo);

  if (axon_device_supports_dtype(DEV, AXON_F64)) {
    static double fx[N], fy[N], fo[N], fw[N];
    for (int i = 0; i < N; i++) {
      fx[i] = rng_float(-5, 5) + 1e-9 * i;
      fy[i] = rng_float(1, 2);
    }
    void *dfx = up(fx, sizeof fx), *dfy = up(fy, sizeof fy), *dfo = dev_zeros(sizeof fo);
    d = ew1d(N, 2);
    d.data[0] = dfo;
    d.data[1] = dfx;
    d.data[2] = dfy;
    CHECK_OK(axon_elementwise(S, AXON_PW_div, AXON_F64, AXON_F64, &d, 1.0, 0.0));
    down(fo, dfo, sizeof fo);
    for (int i = 0; i < N; i++) fw[i] = fx[i] / fy[i];
    check_f64("div(x, y) float64", fo, fw, N, 1e-300, 1e-15);
    axon_free(dfx);
    axon_free(dfy);
    axon_free(dfo);
  } else {
    /* The device lacks cl_khr_fp64: float64 is refused, not run wrongly. */
    void *dz = dev_zeros(N * sizeof(double));
    d = ew1d(N, 2);
    d.data[0] = d.data[1] = d.data[2] = dz;
    CHECK_STATUS(axon_elementwise(S, AXON_PW_div, AXON_F64, AXON_F64, &d, 1.0, 0.0),
                 AXON_ERROR_UNSUPPORTED_DTYPE);
    axon_free(dz);
    SKIP("float64 elementwise values: device %d lacks cl_khr_fp64", DEV);
  }
}

/* ---- casts --------------------------------------------------------------------------------- */

static void test_cast(void) {
  enum { N = 1000 };
  static float f[N], fback[N];
  static int32_t i32[N];
  static int64_t i64[N], i64b[N];
  static uint16_t h[N], bf[N];
  static uint8_t bl[N];
  for (int i = 0; i < N; i++) f[i] = rng_float(-1000.0f, 1000.0f);
  /* special values for the 16-bit conversions */
  f[0] = 0.0f;
  f[1] = -0.0f;
  f[2] = 65504.0f;
  f[3] = 70000.0f;                        /* float16 overflow: infinity */
  f[4] = 1e-6f;                           /* float16 subnormal */
  f[5] = 1.0f + ldexpf(1.0f, -11);        /* a tie: rounds down to even */
  f[6] = 1.0f + 3.0f * ldexpf(1.0f, -11); /* a tie: rounds up to even */
  f[7] = NAN;
  f[8] = -INFINITY;
  f[9] = 0.5f;
  f[10] = -1.5f;
  void *df = up(f, sizeof f), *d32 = dev_zeros(sizeof i32), *d64 = dev_zeros(sizeof i64);
  void *dh = dev_zeros(sizeof h), *dbf = dev_zeros(sizeof bf), *dbl = dev_zeros(sizeof bl);
  void *dfb = dev_zeros(sizeof fback);
  axon_ew_desc d;
  int bad;

  /* float32 -> int32 truncates (finite, in-range values only) */
  d = ew1d(N - 11, 1);
  d.data[0] = (int32_t *)d32 + 11;
  d.data[1] = (float *)df + 11;
  CHECK_OK(axon_cast(S, AXON_F32, AXON_I32, &d));
  down(i32, d32, sizeof i32);
  bad = 0;
  for (int i = 11; i < N; i++) bad += i32[i] != (int32_t)f[i];
  CHECK(bad == 0 && i32[0] == 0, "cast float32 -> int32 truncates toward zero (%d wrong)", bad);

  /* int64 -> float32 */
  for (int i = 0; i < N; i++) i64[i] = (int64_t)(rng_u64() >> 20) - ((int64_t)1 << 43);
  i64[0] = 16777217; /* 2^24 + 1: rounds to even */
  void *di64 = up(i64, sizeof i64);
  d = ew1d(N, 1);
  d.data[0] = dfb;
  d.data[1] = di64;
  CHECK_OK(axon_cast(S, AXON_I64, AXON_F32, &d));
  down(fback, dfb, sizeof fback);
  bad = 0;
  for (int i = 0; i < N; i++) bad += fback[i] != (float)i64[i];
  CHECK(bad == 0, "cast int64 -> float32 matches the host's rounding (%d wrong)", bad);

  /* float32 -> float16 -> float32 */
  d = ew1d(N, 1);
  d.data[0] = dh;
  d.data[1] = df;
  CHECK_OK(axon_cast(S, AXON_F32, AXON_F16, &d));
  down(h, dh, sizeof h);
  bad = 0;
  for (int i = 0; i < N; i++)
    bad += isnan(f[i]) ? !isnan(half_to_float(h[i])) : h[i] != float_to_half(f[i]);
  CHECK(bad == 0, "cast float32 -> float16 (round to nearest even, inf, subnormal, NaN) (%d wrong)",
        bad);
  d.data[0] = dfb;
  d.data[1] = dh;
  CHECK_OK(axon_cast(S, AXON_F16, AXON_F32, &d));
  down(fback, dfb, sizeof fback);
  bad = 0;
  for (int i = 0; i < N; i++) {
    float w = half_to_float(float_to_half(f[i]));
    bad += isnan(w) ? !isnan(fback[i]) : memcmp(&fback[i], &w, 4) != 0;
  }
  CHECK(bad == 0, "cast float16 -> float32 gives the rounded values back (%d wrong)", bad);

  /* float32 -> bfloat16 */
  d.data[0] = dbf;
  d.data[1] = df;
  CHECK_OK(axon_cast(S, AXON_F32, AXON_BF16, &d));
  down(bf, dbf, sizeof bf);
  bad = 0;
  for (int i = 0; i < N; i++)
    bad += isnan(f[i]) ? !isnan(bf16_to_float(bf[i])) : bf[i] != float_to_bf16(f[i]);
  CHECK(bad == 0, "cast float32 -> bfloat16 (%d wrong)", bad);

  /* float32 -> bool -> float32, and bool -> int64 */
  for (int i = 20; i < 40; i++) f[i] = 0.0f;
  CHECK_OK(axon_copy_h2d(df, f, sizeof f, NULL, 1));
  d.data[0] = dbl;
  d.data[1] = df;
  CHECK_OK(axon_cast(S, AXON_F32, AXON_BOOL, &d));
  down(bl, dbl, sizeof bl);
  bad = 0;
  for (int i = 0; i < N; i++) bad += bl[i] != (f[i] != 0.0f);
  CHECK(bad == 0 && bl[1] == 0 && bl[7] == 1,
        "cast float32 -> bool (-0 false, NaN true) (%d wrong)", bad);
  d.data[0] = dfb;
  d.data[1] = dbl;
  CHECK_OK(axon_cast(S, AXON_BOOL, AXON_F32, &d));
  down(fback, dfb, sizeof fback);
  bad = 0;
  for (int i = 0; i < N; i++) bad += fback[i] != (f[i] != 0.0f ? 1.0f : 0.0f);
  CHECK(bad == 0, "cast bool -> float32 (%d wrong)", bad);
  d.data[0] = d64;
  CHECK_OK(axon_cast(S, AXON_BOOL, AXON_I64, &d));
  down(i64b, d64, sizeof i64b);
  bad = 0;
  for (int i = 0; i < N; i++) bad += i64b[i] != (f[i] != 0.0f);
  CHECK(bad == 0, "cast bool -> int64 (%d wrong)", bad);

  /* A transposed (strided) cast: float32 [25 x 40] read transposed into int64. */
  enum { R = 25, C = 40 };
  for (int i = 0; i < R * C; i++) f[i] = rng_float(-50.0f, 50.0f);
  CHECK_OK(axon_copy_h2d(df, f, sizeof f, NULL, 1));
  d = ew2d(R, C, 1); /* output [C][R] contiguous; input element (c, r) at r * C + c */
  d.data[0] = d64;
  d.data[1] = df;
  d.strides[1][0] = C;
  d.strides[1][1] = 1;
  CHECK_OK(axon_cast(S, AXON_F32, AXON_I64, &d));
  down(i64b, d64, sizeof i64b);
  bad = 0;
  for (int c = 0; c < C; c++)
    for (int r = 0; r < R; r++) bad += i64b[c * R + r] != (int64_t)f[r * C + c];
  CHECK(bad == 0, "cast float32 (transposed) -> int64 (%d wrong)", bad);

  if (axon_device_supports_dtype(DEV, AXON_F64)) {
    static double f64[N];
    d = ew1d(N, 1);
    d.data[0] = d64; /* 8-byte elements fit */
    d.data[1] = df;
    CHECK_OK(axon_cast(S, AXON_F32, AXON_F64, &d));
    down(f64, d64, sizeof f64);
    bad = 0;
    for (int i = 0; i < N; i++) bad += f64[i] != (double)f[i];
    CHECK(bad == 0, "cast float32 -> float64 is exact (%d wrong)", bad);
  } else {
    d = ew1d(N, 1);
    d.data[0] = d64;
    d.data[1] = df;
    CHECK_STATUS(axon_cast(S, AXON_F32, AXON_F64, &d), AXON_ERROR_UNSUPPORTED_DTYPE);
    SKIP("cast float32 -> float64 values: device %d lacks cl_khr_fp64", DEV);
  }
  CHECK_STATUS(axon_cast(S, AXON_F32, AXON_DTYPE_COUNT, &d), AXON_ERROR_INVALID_ARGUMENT);
  axon_free(df);
  axon_free(d32);
  axon_free(d64);
  axon_free(dh);
  axon_free(dbf);
  axon_free(dbl);
  axon_free(dfb);
  axon_free(di64);
}

/* ---- reductions ---------------------------------------------------------------------------- */

/* Reduction of a contiguous [R][C] float32 matrix over its columns (one output per row). */
static axon_reduce_desc red_rows(const void *in, void *out, int64_t R, int64_t C) {
  axon_reduce_desc d;
  memset(&d, 0, sizeof d);
  d.out_ndim = 1;
  d.out_sizes[0] = R;
  d.out_strides_in[0] = C;
  d.out_strides_out[0] = 1;
  d.red_ndim = 1;
  d.red_sizes[0] = C;
  d.red_strides[0] = 1;
  d.in = in;
  d.out = out;
  return d;
}
/* ... over its rows (one output per column, strided). */
static axon_reduce_desc red_cols(const void *in, void *out, int64_t R, int64_t C) {
  axon_reduce_desc d;
  memset(&d, 0, sizeof d);
  d.out_ndim = 1;
  d.out_sizes[0] = C;
  d.out_strides_in[0] = 1;
  d.out_strides_out[0] = 1;
  d.red_ndim = 1;
  d.red_sizes[0] = R;
  d.red_strides[0] = C;
  d.in = in;
  d.out = out;
  return d;
}
/* ... over everything (a scalar). */
static axon_reduce_desc red_all(const void *in, void *out, int64_t R, int64_t C) {
  axon_reduce_desc d;
  memset(&d, 0, sizeof d);
  d.out_ndim = 0;
  d.red_ndim = 2;
  d.red_sizes[0] = C;
  d.red_strides[0] = 1;
  d.red_sizes[1] = R;
  d.red_strides[1] = C;
  d.in = in;
  d.out = out;
  return d;
}

static void test_reduce(void) {
  enum { R = 24, C = 700, N = R * C };
  static float x[N], out[C];
  static double want[C];
  static int64_t idx[C];
  static uint8_t bout[C];
  for (int i = 0; i < N; i++) x[i] = rng_float(-1.0f, 1.0f);
  x[0 * C + 10] = 5.0f; /* row 0: a tied maximum, the first index wins */
  x[0 * C + 500] = 5.0f;
  x[3 * C + 699] = 7.0f; /* the overall maximum, at flat index 3 * C + 699 */
  void *dx = up(x, sizeof x), *dout = dev_zeros(sizeof out), *didx = dev_zeros(sizeof idx);
  axon_reduce_desc d;
  int bad;

  /* sum over each row (long rows: the work-group kernels) */
  d = red_rows(dx, dout, R, C);
  CHECK_OK(axon_reduce(S, "sum", AXON_F32, &d, 1.0, 0.0));
  down(out, dout, R * sizeof(float));
  for (int r = 0; r < R; r++) {
    want[r] = 0;
    for (int c = 0; c < C; c++) want[r] += x[r * C + c];
  }
  check_f32("sum over rows of [24 x 700] f32", out, want, R, 1.0, 1e-5);

  /* mean over each column (short strided reductions: one work-item per output) */
  d = red_cols(dx, dout, R, C);
  CHECK_OK(axon_reduce(S, "sum", AXON_F32, &d, 1.0 / R, 0.0));
  down(out, dout, C * sizeof(float));
  for (int c = 0; c < C; c++) {
    want[c] = 0;
    for (int r = 0; r < R; r++) want[c] += x[r * C + c];
    want[c] /= R;
  }
  check_f32("mean over columns (scale 1/24) f32", out, want, C, 1.0, 1e-6);

  /* max with indices over rows, and over columns */
  d = red_rows(dx, dout, R, C);
  d.out_index = didx;
  CHECK_OK(axon_reduce(S, "maxidx", AXON_F32, &d, 1.0, 0.0));
  down(out, dout, R * sizeof(float));
  down(idx, didx, R * sizeof(int64_t));
  bad = 0;
  for (int r = 0; r < R; r++) {
    int best = 0;
    for (int c = 1; c < C; c++)
      if (x[r * C + c] > x[r * C + best]) best = c;
    bad += out[r] != x[r * C + best] || idx[r] != best;
  }
  CHECK(bad == 0 && idx[0] == 10, "max with indices over rows (first of ties) (%d wrong)", bad);
  d = red_cols(dx, dout, R, C);
  d.out_index = didx;
  CHECK_OK(axon_reduce(S, "maxidx", AXON_F32, &d, 1.0, 0.0));
  down(out, dout, C * sizeof(float));
  down(idx, didx, C * sizeof(int64_t));
  bad = 0;
  for (int c = 0; c < C; c++) {
    int best = 0;
    for (int r = 1; r < R; r++)
      if (x[r * C + c] > x[best * C + c]) best = r;
    bad += out[c] != x[best * C + c] || idx[c] != best;
  }
  CHECK(bad == 0, "max with indices over columns (%d wrong)", bad);

  /* argmax and max over everything */
  d = red_all(dx, didx, R, C);
  CHECK_OK(axon_reduce(S, "argmax", AXON_F32, &d, 1.0, 0.0));
  down(idx, didx, sizeof(int64_t));
  CHECK(idx[0] == 3 * C + 699, "argmax over all dims (%lld)", (long long)idx[0]);
  d = red_all(dx, dout, R, C);
  CHECK_OK(axon_reduce(S, "max", AXON_F32, &d, 1.0, 0.0));
  down(out, dout, sizeof(float));
  CHECK(out[0] == 7.0f, "max over all dims (%g)", out[0]);
  d = red_cols(dx, dout, R, C);
  CHECK_OK(axon_reduce(S, "min", AXON_F32, &d, 1.0, 0.0));
  down(out, dout, C * sizeof(float));
  bad = 0;
  for (int c = 0; c < C; c++) {
    float m = x[c];
    for (int r = 1; r < R; r++) m = fminf(m, x[r * C + c]);
    bad += out[c] != m;
  }
  CHECK(bad == 0, "min over columns (%d wrong)", bad);

  /* norm2 over rows and over everything */
  d = red_rows(dx, dout, R, C);
  CHECK_OK(axon_reduce(S, "norm2", AXON_F32, &d, 1.0, 2.0));
  down(out, dout, R * sizeof(float));
  double total = 0;
  for (int r = 0; r < R; r++) {
    double s = 0;
    for (int c = 0; c < C; c++) s += (double)x[r * C + c] * x[r * C + c];
    total += s;
    want[r] = sqrt(s);
  }
  check_f32("norm2 over rows f32", out, want, R, 1e-30, 1e-5);
  d = red_all(dx, dout, R, C);
  CHECK_OK(axon_reduce(S, "norm2", AXON_F32, &d, 1.0, 2.0));
  down(out, dout, sizeof(float));
  want[0] = sqrt(total);
  check_f32("norm2 over all dims f32", out, want, 1, 1e-30, 1e-5);

  /* variance over rows: sumsqdev with the row means as aux, scale 1 / (n - 1) */
  static float mean[R];
  for (int r = 0; r < R; r++) {
    double s = 0;
    for (int c = 0; c < C; c++) s += x[r * C + c];
    mean[r] = (float)(s / C);
  }
  void *dmean = up(mean, sizeof mean);
  d = red_rows(dx, dout, R, C);
  d.aux = dmean;
  d.out_aux_strides[0] = 1;
  CHECK_OK(axon_reduce(S, "sumsqdev", AXON_F32, &d, 1.0 / (C - 1), 0.0));
  down(out, dout, R * sizeof(float));
  for (int r = 0; r < R; r++) {
    double s = 0;
    for (int c = 0; c < C; c++) s += ((double)x[r * C + c] - mean[r]) * (x[r * C + c] - mean[r]);
    want[r] = s / (C - 1);
  }
  check_f32("variance over rows (sumsqdev with aux mean) f32", out, want, R, 1e-30, 1e-5);
  /* the same with one work-item per output: variance over columns */
  static float cmean[C];
  for (int c = 0; c < C; c++) {
    double s = 0;
    for (int r = 0; r < R; r++) s += x[r * C + c];
    cmean[c] = (float)(s / R);
  }
  void *dcmean = up(cmean, sizeof cmean);
  d = red_cols(dx, dout, R, C);
  d.aux = dcmean;
  d.out_aux_strides[0] = 1;
  CHECK_OK(axon_reduce(S, "sumsqdev", AXON_F32, &d, 1.0 / R, 0.0));
  down(out, dout, C * sizeof(float));
  for (int c = 0; c < C; c++) {
    double s = 0;
    for (int r = 0; r < R; r++) s += ((double)x[r * C + c] - cmean[c]) * (x[r * C + c] - cmean[c]);
    want[c] = s / R;
  }
  check_f32("population variance over columns f32", out, want, C, 1e-30, 1e-5);

  /* any / all: rows 0..5 all zero, row 6 one non-zero, the rest non-zero but for row 10 */
  static float z[N];
  for (int i = 0; i < N; i++) z[i] = (float)(i % 3) + 0.5f;
  for (int r = 0; r < 7; r++)
    for (int c = 0; c < C; c++) z[r * C + c] = 0.0f;
  z[6 * C + 650] = -0.5f;
  z[10 * C + 333] = 0.0f;
  void *dz = up(z, sizeof z), *dbout = dev_zeros(C);
  d = red_rows(dz, dbout, R, C);
  CHECK_OK(axon_reduce(S, "any", AXON_F32, &d, 1.0, 0.0));
  down(bout, dbout, R);
  bad = 0;
  for (int r = 0; r < R; r++) bad += bout[r] != (r >= 6);
  CHECK(bad == 0, "any over rows f32 -> bool (%d wrong)", bad);
  d = red_rows(dz, dbout, R, C);
  CHECK_OK(axon_reduce(S, "all", AXON_F32, &d, 1.0, 0.0));
  down(bout, dbout, R);
  bad = 0;
  for (int r = 0; r < R; r++) bad += bout[r] != (r >= 7 && r != 10);
  CHECK(bad == 0, "all over rows f32 -> bool (%d wrong)", bad);
  d = red_cols(dz, dbout, R, C);
  CHECK_OK(axon_reduce(S, "all", AXON_F32, &d, 1.0, 0.0));
  down(bout, dbout, C);
  bad = 0;
  for (int c = 0; c < C; c++) bad += bout[c] != 0; /* rows 0..5 are zero */
  CHECK(bad == 0, "all over columns with zero rows is false (%d wrong)", bad);
  d = red_all(dz, dbout, R, C);
  CHECK_OK(axon_reduce(S, "any", AXON_F32, &d, 1.0, 0.0));
  down(bout, dbout, 1);
  CHECK(bout[0] == 1, "any over all dims");

  /* A long sum against a double-precision host sum. */
  enum { L = 100000 };
  static float lx[L];
  double lsum = 0;
  for (int i = 0; i < L; i++) {
    lx[i] = rng_float(0.0f, 2.0f);
    lsum += lx[i];
  }
  void *dl = up(lx, sizeof lx);
  d = red_rows(dl, dout, 1, L);
  CHECK_OK(axon_reduce(S, "sum", AXON_F32, &d, 1.0, 0.0));
  down(out, dout, sizeof(float));
  CHECK(fabs(out[0] - lsum) / lsum <= 1e-5, "sum of 1e5 floats: %.7g vs %.7g (rel err %.3g)",
        out[0], lsum, fabs(out[0] - lsum) / lsum);
  /* ... and a mean of the same through the serial kernel (many outputs): 2048 rows of 48 */
  enum { SR = 2048, SC = 48 };
  static float sout[SR];
  static double swant[SR];
  void *dsout = dev_zeros(sizeof sout);
  d = red_rows(dl, dsout, SR, SC);
  CHECK_OK(axon_reduce(S, "sum", AXON_F32, &d, 1.0 / SC, 0.0));
  down(sout, dsout, sizeof sout);
  for (int r = 0; r < SR; r++) {
    swant[r] = 0;
    for (int c = 0; c < SC; c++) swant[r] += lx[r * SC + c];
    swant[r] /= SC;
  }
  check_f32("mean over 2048 rows of 48 f32", sout, swant, SR, 1.0, 1e-6);

  /* integer sum accumulates exactly */
  static int32_t ix[N], iout[C];
  for (int i = 0; i < N; i++) ix[i] = (int32_t)(rng_u64() % 2000001) - 1000000;
  void *dix = up(ix, sizeof ix), *diout = dev_zeros(sizeof iout);
  d = red_rows(dix, diout, R, C);
  CHECK_OK(axon_reduce(S, "sum", AXON_I32, &d, 1.0, 0.0));
  down(iout, diout, R * sizeof(int32_t));
  bad = 0;
  for (int r = 0; r < R; r++) {
    int64_t s = 0;
    for (int c = 0; c < C; c++) s += ix[r * C + c];
    bad += iout[r] != (int32_t)s;
  }
  CHECK(bad == 0, "int32 sum over rows (%d wrong)", bad);

  CHECK_STATUS(axon_reduce(S, "no_such_reduction", AXON_F32, &d, 1.0, 0.0), AXON_ERROR_UNSUPPORTED);
  axon_free(dx);
  axon_free(dout);
  axon_free(didx);
  axon_free(dmean);
  axon_free(dcmean);
  axon_free(dz);
  axon_free(dbout);
  axon_free(dl);
  axon_free(dsout);
  axon_free(dix);
  axon_free(diout);
}

/* ---- matrix products ----------------------------------------------------------------------- */

static void host_gemm(const axon_gemm_desc *g, const double *a, const double *b, double *c) {
  for (int64_t bt = 0; bt < g->batch; bt++)
    for (int64_t i = 0; i < g->m; i++)
      for (int64_t j = 0; j < g->n; j++) {
        double s = 0;
        for (int64_t l = 0; l < g->k; l++) {
          double av = g->trans_a ? a[bt * g->stride_a + l * g->lda + i]
                                 : a[bt * g->stride_a + i * g->lda + l];
          double bv = g->trans_b ? b[bt * g->stride_b + j * g->ldb + l]
                                 : b[bt * g->stride_b + l * g->ldb + j];
          s += av * bv;
        }
        double *cv = &c[bt * g->stride_c + i * g->ldc + j];
        *cv = g->alpha * s + (g->beta != 0 ? g->beta * *cv : 0.0);
      }
}

static const char *path_name(axon_gemm_path p) {
  return p == AXON_GEMM_HOST_BLAS ? "host" : p == AXON_GEMM_CLBLAST ? "clblast" : "kernel";
}

/* One m x n gemm on the device in dtype (F32 or F64), checked against the host. */
static void gemm_case(axon_dtype dt, const char *path, int64_t m, int64_t n, int ta, int tb,
                      int64_t batch, double alpha, double beta, int nan_c) {
  int64_t k = 29;
  axon_gemm_desc g;
  memset(&g, 0, sizeof g);
  g.trans_a = ta;
  g.trans_b = tb;
  g.m = m;
  g.n = n;
  g.k = k;
  g.lda = (ta ? m : k) + 3; /* padded leading dimensions */
  g.ldb = (tb ? k : n) + 1;
  g.ldc = n + 2;
  g.stride_a = (ta ? k : m) * g.lda + 5;
  g.stride_b = (tb ? n : k) * g.ldb;
  g.stride_c = m * g.ldc + 7;
  g.batch = batch;
  g.alpha = alpha;
  g.beta = beta;
  size_t na = (size_t)(g.stride_a * batch), nb = (size_t)(g.stride_b * batch);
  size_t nc = (size_t)(g.stride_c * batch);
  double *a = malloc(na * 8), *b = malloc(nb * 8), *c = malloc(nc * 8), *c0 = malloc(nc * 8);
  for (size_t i = 0; i < na; i++) a[i] = rng_float(-1, 1);
  for (size_t i = 0; i < nb; i++) b[i] = rng_float(-1, 1);
  for (size_t i = 0; i < nc; i++) c0[i] = nan_c ? NAN : rng_float(-1, 1);
  memcpy(c, c0, nc * 8);
  size_t es = axon_dtype_size(dt);
  void *ha = malloc(na * es), *hb = malloc(nb * es), *hc = malloc(nc * es);
  for (size_t i = 0; i < na; i++)
    if (dt == AXON_F32)
      ((float *)ha)[i] = (float)a[i];
    else
      ((double *)ha)[i] = a[i];
  for (size_t i = 0; i < nb; i++)
    if (dt == AXON_F32)
      ((float *)hb)[i] = (float)b[i];
    else
      ((double *)hb)[i] = b[i];
  for (size_t i = 0; i < nc; i++)
    if (dt == AXON_F32)
      ((float *)hc)[i] = (float)c0[i];
    else
      ((double *)hc)[i] = c0[i];
  void *da = up(ha, na * es), *db = up(hb, nb * es), *dc = up(hc, nc * es);
  g.a = da;
  g.b = db;
  g.c = dc;
  host_gemm(&g, a, b, c);
  char what[200];
  snprintf(what, sizeof what, "gemm %s path=%s %lldx%lld ta=%d tb=%d batch=%lld alpha=%g beta=%g%s",
           axon_dtype_name(dt), path, (long long)m, (long long)n, ta, tb, (long long)batch, alpha,
           beta, nan_c ? " (C holds NaN)" : "");
  axon_status_t st = axon_gemm(S, dt, &g);
  if (st != AXON_SUCCESS) {
    CHECK(0, "%s: %s: %s", what, axon_status_name(st), axon_last_error());
  } else {
    down(hc, dc, nc * es);
    /* Compare every element, including the padding that must stay untouched. */
    double worst = 0;
    for (size_t i = 0; i < nc; i++) {
      double got = dt == AXON_F32 ? ((float *)hc)[i] : ((double *)hc)[i];
      double want = c[i];
      int64_t in_batch = (int64_t)i % g.stride_c, row = in_batch / g.ldc, col = in_batch % g.ldc;
      int inside = row < m && col < n;
      double e;
      if (!inside)
        e = (isnan(want) && isnan(got)) || got == (dt == AXON_F32 ? (double)(float)want : want)
                ? 0
                : INFINITY;
      else
        e = fabs(got - want) / fmax(fabs(want), 1.0);
      if (!(e <= worst)) worst = e;
    }
    double tol = dt == AXON_F32 ? 1e-3 : 1e-10;
    CHECK(worst <= tol, "%s (max err %.3g)", what, worst);
  }
  axon_free(da);
  axon_free(db);
  axon_free(dc);
  free(a);
  free(b);
  free(c);
  free(c0);
  free(ha);
  free(hb);
  free(hc);
}

static void test_gemm(void) {
  axon_device_info info;
  CHECK_OK(axon_device_get_info(DEV, &info));
  const char *paths[] = {"host", "clblast", "kernel"};
  axon_dtype dts[] = {AXON_F32, AXON_F64};
  for (int t = 0; t < 2; t++) {
    axon_dtype dt = dts[t];
    if (!axon_device_supports_dtype(DEV, dt)) {
      /* Refused before any operand is read. */
      axon_gemm_desc g;
      memset(&g, 0, sizeof g);
      g.m = g.n = g.k = g.batch = 1;
      CHECK_STATUS(axon_gemm(S, dt, &g), AXON_ERROR_UNSUPPORTED_DTYPE);
      SKIP("gemm %s on every path: device %d lacks it", axon_dtype_name(dt), DEV);
      continue;
    }
    for (int p = 0; p < 3; p++) {
      setenv("AXON_GEMM", paths[p], 1);
      axon_gemm_path chosen = axon_gemm_path_for(S, dt);
      if (p == 0 && !(info.native_kernels && info.is_cpu)) {
        /* Its cases would run another path under this one's name: that path is tested as itself. */
        CHECK(chosen != AXON_GEMM_HOST_BLAS, "AXON_GEMM=host falls back to the %s path for %s",
              path_name(chosen), axon_dtype_name(dt));
        SKIP("gemm %s on the host BLAS path: device %d runs no native kernels", axon_dtype_name(dt),
             DEV);
        continue;
      }
      CHECK(!strcmp(path_name(chosen), paths[p]), "AXON_GEMM=%s selects the %s path for %s",
            paths[p], path_name(chosen), axon_dtype_name(dt));
      /* A matrix result, and a single row and column (the host path runs those as gemv). */
      const int64_t shapes[3][2] = {{33, 47}, {1, 47}, {33, 1}};
      for (int sh = 0; sh < 3; sh++) {
        int64_t m = shapes[sh][0], n = shapes[sh][1];
        for (int ta = 0; ta < 2; ta++)
          for (int tb = 0; tb < 2; tb++) gemm_case(dt, paths[p], m, n, ta, tb, 1, 1.0, 0.0, 0);
        gemm_case(dt, paths[p], m, n, 0, 1, 3, 1.5, 0.5, 0);
        gemm_case(dt, paths[p], m, n, 1, 0, 2, -0.75, 2.0, 0);
        gemm_case(dt, paths[p], m, n, 0, 0, 2, 1.0, 0.0, 1);
      }
    }
  }
  unsetenv("AXON_GEMM");
  /* Empty products and bad sizes. */
  axon_gemm_desc g;
  memset(&g, 0, sizeof g);
  g.batch = 1;
  g.m = 0;
  g.n = 5;
  g.k = 5;
  CHECK_OK(axon_gemm(S, AXON_F32, &g));
  g.m = -1;
  CHECK_STATUS(axon_gemm(S, AXON_F32, &g), AXON_ERROR_INVALID_ARGUMENT);
}

/* ---- softmax and NLL ----------------------------------------------------------------------- */

static void softmax_case(int64_t outer, int64_t dim, int64_t inner, int log_mode) {
  size_t n = (size_t)(outer * dim * inner);
  float *x = malloc(n * 4), *y = malloc(n * 4), *g = malloc(n * 4), *gi = malloc(n * 4);
  double *want = malloc(n * 8), *wy = malloc(n * 8);
  for (size_t i = 0; i < n; i++) {
    x[i] = rng_float(-6.0f, 6.0f);
    g[i] = rng_float(-1.0f, 1.0f);
  }
  void *dx = up(x, n * 4), *dy = dev_zeros(n * 4), *dg = up(g, n * 4), *dgi = dev_zeros(n * 4);
  axon_softmax_desc d = {outer, dim, inner, dx, NULL, dy, (axon_softmax_mode)log_mode};
  axon_status_t st = axon_softmax(S, AXON_F32, &d);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double m = -INFINITY, s = 0;
      for (int64_t j = 0; j < dim; j++) m = fmax(m, x[(o * dim + j) * inner + i]);
      for (int64_t j = 0; j < dim; j++) s += exp(x[(o * dim + j) * inner + i] - m);
      for (int64_t j = 0; j < dim; j++) {
        size_t at = (size_t)((o * dim + j) * inner + i);
        want[at] = log_mode ? x[at] - m - log(s) : exp(x[at] - m) / s;
      }
    }
  char what[160];
  snprintf(what, sizeof what, "%s [%lld, %lld, %lld] f32", log_mode ? "log_softmax" : "softmax",
           (long long)outer, (long long)dim, (long long)inner);
  if (st != AXON_SUCCESS) {
    CHECK(0, "%s: %s", what, axon_last_error());
  } else {
    down(y, dy, n * 4);
    check_f32(what, y, want, n, log_mode ? 1.0 : 1e-3, 1e-5);
  }
  /* Backward from the device's forward output. */
  for (size_t i = 0; i < n; i++) wy[i] = y[i];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double s = 0;
      for (int64_t j = 0; j < dim; j++) {
        size_t at = (size_t)((o * dim + j) * inner + i);
        s += log_mode ? g[at] : (double)g[at] * wy[at];
      }
      for (int64_t j = 0; j < dim; j++) {
        size_t at = (size_t)((o * dim + j) * inner + i);
        want[at] = log_mode ? g[at] - exp(wy[at]) * s : wy[at] * (g[at] - s);
      }
    }
  axon_softmax_desc b = {outer, dim, inner, dg, dy, dgi, (axon_softmax_mode)log_mode};
  st = axon_softmax_backward(S, AXON_F32, &b);
  snprintf(what, sizeof what, "%s backward [%lld, %lld, %lld] f32",
           log_mode ? "log_softmax" : "softmax", (long long)outer, (long long)dim,
           (long long)inner);
  if (st != AXON_SUCCESS) {
    CHECK(0, "%s: %s", what, axon_last_error());
  } else {
    down(gi, dgi, n * 4);
    check_f32(what, gi, want, n, log_mode ? 1.0 : 1e-2, 1e-5);
  }
  axon_free(dx);
  axon_free(dy);
  axon_free(dg);
  axon_free(dgi);
  free(x);
  free(y);
  free(g);
  free(gi);
  free(want);
  free(wy);
}

static void test_softmax(void) {
  for (int log_mode = 0; log_mode < 2; log_mode++) {
    softmax_case(5, 10, 1, log_mode);  /* short rows: a work-item each */
    softmax_case(3, 7, 6, log_mode);   /* inner > 1 */
    softmax_case(4, 300, 1, log_mode); /* long rows: a work-group each */
    softmax_case(2, 513, 3, log_mode); /* long rows with inner > 1 */
  }
  axon_softmax_desc d = {0, 10, 1, NULL, NULL, NULL, 0};
  CHECK_OK(axon_softmax(S, AXON_F32, &d)); /* empty */
}

static void nll_case(int64_t n, int64_t c, int use_weight, int reduction) {
  float *x = malloc((size_t)(n * c) * 4), *w = malloc((size_t)c * 4);
  int64_t *t = malloc((size_t)n * 8);
  const int64_t ignore = -100;
  for (int64_t i = 0; i < n * c; i++) x[i] = rng_float(-5.0f, 0.0f);
  for (int64_t j = 0; j < c; j++) w[j] = rng_float(0.1f, 2.0f);
  for (int64_t i = 0; i < n; i++) t[i] = (rng_u64() % 7 == 0) ? ignore : (int64_t)(rng_u64() % c);
  void *dx = up(x, (size_t)(n * c) * 4), *dt = up(t, (size_t)n * 8), *dw = up(w, (size_t)c * 4);
  void *dout = dev_zeros((size_t)n * 4), *dtot = dev_zeros(4);
  axon_nll_desc d;
  memset(&d, 0, sizeof d);
  d.n = n;
  d.c = c;
  d.input = dx;
  d.target = dt;
  d.weight = use_weight ? dw : NULL;
  d.out = dout;
  d.total_weight = dtot;
  d.ignore_index = ignore;
  d.reduction = reduction;
  double *loss = malloc((size_t)n * 8), sum = 0, wsum = 0;
  for (int64_t i = 0; i < n; i++) {
    loss[i] = 0;
    if (t[i] == ignore) continue;
    double wt = use_weight ? w[t[i]] : 1.0;
    loss[i] = -wt * x[i * c + t[i]];
    sum += loss[i];
    wsum += wt;
  }
  const char *names[] = {"none", "mean", "sum"};
  char what[160];
  snprintf(what, sizeof what, "nll forward n=%lld c=%lld reduction=%s%s", (long long)n,
           (long long)c, names[reduction], use_weight ? " weighted" : "");
  axon_status_t st = axon_nll_forward(S, AXON_F32, &d);
  if (st != AXON_SUCCESS) {
    CHECK(0, "%s: %s", what, axon_last_error());
  } else if (reduction == 0) {
    float *out = malloc((size_t)n * 4);
    down(out, dout, (size_t)n * 4);
    check_f32(what, out, loss, (size_t)n, 1.0, 1e-6);
    free(out);
  } else {
    float out, tot;
    down(&out, dout, 4);
    down(&tot, dtot, 4);
    double want = reduction == 1 ? sum / wsum : sum;
    check_f32(what, &out, &want, 1, 1.0, 1e-5);
    check_f32("  ... total_weight", &tot, &wsum, 1, 1.0, 1e-5);
  }

  /* Backward into a zero-filled gradient. */
  float *go = malloc((size_t)n * 4), *gi = malloc((size_t)(n * c) * 4);
  double *gwant = calloc((size_t)(n * c), 8);
  for (int64_t i = 0; i < n; i++) go[i] = rng_float(0.5f, 1.5f);
  void *dgo = up(go, (size_t)n * 4), *dgi = dev_zeros((size_t)(n * c) * 4);
  /* total_weight as the forward left it (for mean); the host figure otherwise */
  float tot_host = (float)wsum;
  if (reduction != 1) CHECK_OK(axon_copy_h2d(dtot, &tot_host, 4, NULL, 1));
  d.grad_out = dgo;
  d.grad_in = dgi;
  for (int64_t i = 0; i < n; i++) {
    if (t[i] == ignore) continue;
    double g = reduction == 0 ? go[i] : go[0];
    if (reduction == 1) g /= wsum;
    gwant[i * c + t[i]] = -(use_weight ? w[t[i]] : 1.0) * g;
  }
  snprintf(what, sizeof what, "nll backward n=%lld c=%lld reduction=%s%s", (long long)n,
           (long long)c, names[reduction], use_weight ? " weighted" : "");
  st = axon_nll_backward(S, AXON_F32, &d);
  if (st != AXON_SUCCESS) {
    CHECK(0, "%s: %s", what, axon_last_error());
  } else {
    down(gi, dgi, (size_t)(n * c) * 4);
    check_f32(what, gi, gwant, (size_t)(n * c), 1.0, 1e-5);
  }
  axon_free(dx);
  axon_free(dt);
  axon_free(dw);
  axon_free(dout);
  axon_free(dtot);
  axon_free(dgo);
  axon_free(dgi);
  free(x);
  free(w);
  free(t);
  free(loss);
  free(go);
  free(gi);
  free(gwant);
}

static void test_nll(void) {
  for (int reduction = 0; reduction < 3; reduction++)
    for (int use_weight = 0; use_weight < 2; use_weight++) {
      nll_case(10, 5, use_weight, reduction);
      nll_case(1000, 13, use_weight, reduction); /* more samples than work-items */
    }
}

/* ---- random numbers ------------------------------------------------------------------------ */

static void test_random(void) {
  enum { N = 100000 };
  static float u[N], v[N], w[N];
  void *du = dev_zeros(sizeof u), *dv = dev_zeros(sizeof v);
  axon_ew_desc d = ew1d(N, 0);
  d.data[0] = du;
  CHECK_OK(axon_random(S, AXON_F32, AXON_RANDOM_UNIFORM, &d, 1234, 0, -2.0, 3.0));
  down(u, du, sizeof u);
  double s = 0, s2 = 0;
  int out_of_range = 0;
  for (int i = 0; i < N; i++) {
    out_of_range += !(u[i] >= -2.0f && u[i] < 3.0f);
    s += u[i];
    s2 += (double)u[i] * u[i];
  }
  double mean = s / N, var = s2 / N - mean * mean;
  CHECK(out_of_range == 0, "uniform in [-2, 3): %d out of range", out_of_range);
  CHECK(fabs(mean - 0.5) < 0.03 && fabs(var - 25.0 / 12.0) < 0.05,
        "uniform mean %.4f (0.5), variance %.4f (2.0833)", mean, var);
  int buckets[10] = {0};
  for (int i = 0; i < N; i++) buckets[(int)((u[i] + 2.0f) * 2.0f) % 10]++;
  int flat = 1;
  for (int b = 0; b < 10; b++) flat &= abs(buckets[b] - N / 10) < 600;
  CHECK(flat, "uniform histogram is flat (10 buckets of ~%d)", N / 10);

  /* Same (seed, offset): the same numbers; offset + p: shifted; other offset / seed: others. */
  d.data[0] = dv;
  CHECK_OK(axon_random(S, AXON_F32, AXON_RANDOM_UNIFORM, &d, 1234, 0, -2.0, 3.0));
  down(v, dv, sizeof v);
  CHECK(!memcmp(u, v, sizeof u), "same seed and offset reproduce the numbers");
  CHECK_OK(axon_random(S, AXON_F32, AXON_RANDOM_UNIFORM, &d, 1234, 100, -2.0, 3.0));
  down(v, dv, sizeof v);
  CHECK(!memcmp(u + 100, v, (N - 100) * sizeof(float)),
        "offset + 100 gives the same stream shifted by 100 elements");
  int same = 0;
  for (int i = 0; i < N; i++) same += u[i] == v[i];
  CHECK(same < 100, "a different offset gives different numbers (%d equal)", same);
  CHECK_OK(axon_random(S, AXON_F32, AXON_RANDOM_UNIFORM, &d, 4321, 0, -2.0, 3.0));
  down(v, dv, sizeof v);
  same = 0;
  for (int i = 0; i < N; i++) same += u[i] == v[i];
  CHECK(same < 100, "a different seed gives different numbers (%d equal)", same);

  /* normal(mean 1.5, std 2) */
  CHECK_OK(axon_random(S, AXON_F32, AXON_RANDOM_NORMAL, &d, 99, 7, 1.5, 2.0));
  down(w, dv, sizeof w);
  s = s2 = 0;
  int within1 = 0, finite = 1;
  for (int i = 0; i < N; i++) {
    finite &= isfinite(w[i]);
    s += w[i];
    s2 += (double)w[i] * w[i];
    within1 += fabs(w[i] - 1.5) < 2.0;
  }
  mean = s / N;
  double sd = sqrt(s2 / N - mean * mean);
  CHECK(finite && fabs(mean - 1.5) < 0.05 && fabs(sd - 2.0) < 0.05,
        "normal mean %.4f (1.5), std %.4f (2.0)", mean, sd);
  CHECK(fabs(within1 / (double)N - 0.6827) < 0.01, "normal: %.4f within one std (0.6827)",
        within1 / (double)N);

  /* bernoulli(0.3) */
  CHECK_OK(axon_random(S, AXON_F32, AXON_RANDOM_BERNOULLI, &d, 5, 0, 0.3, 0.0));
  down(w, dv, sizeof w);
  int ones = 0, binary = 1;
  for (int i = 0; i < N; i++) {
    ones += w[i] == 1.0f;
    binary &= w[i] == 0.0f || w[i] == 1.0f;
  }
  CHECK(binary && fabs(ones / (double)N - 0.3) < 0.01, "bernoulli(0.3): %.4f ones",
        ones / (double)N);

  /* A strided output: every other element, the rest untouched. */
  for (int i = 0; i < N; i++) w[i] = -99.0f;
  CHECK_OK(axon_copy_h2d(dv, w, sizeof w, NULL, 1));
  d = ew1d(N / 2, 0);
  d.data[0] = dv;
  d.strides[0][0] = 2;
  CHECK_OK(axon_random(S, AXON_F32, AXON_RANDOM_UNIFORM, &d, 1234, 0, -2.0, 3.0));
  down(w, dv, sizeof w);
  int ok = 1;
  for (int i = 0; i < N / 2; i++) ok &= w[2 * i] == u[i] && w[2 * i + 1] == -99.0f;
  CHECK(ok, "strided output: element i at position 2i, holes untouched");

  CHECK_STATUS(axon_random(S, AXON_I32, AXON_RANDOM_UNIFORM, &d, 1, 0, 0.0, 1.0),
               AXON_ERROR_UNSUPPORTED);
  axon_free(du);
  axon_free(dv);
}

int main(void) {
  int count = 0;
  REQUIRE_OK(axon_device_count(&count));
  REQUIRE_OK(axon_stream_default(DEV, &S));
  test_elementwise_f32();
  test_elementwise_int();
  test_elementwise_half();
  test_cast();
  test_reduce();
  test_gemm();
  test_softmax();
  test_nll();
  test_random();
  CHECK_OK(axon_stream_sync(S));
  axon_memory_stats st;
  CHECK_OK(axon_memory_stats_get(DEV, &st));
  CHECK(st.allocated_bytes == 0, "every test buffer was freed (%llu bytes left)",
        (unsigned long long)st.allocated_bytes);
  return harness_summary();
}
