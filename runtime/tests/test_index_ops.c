/* Tests of the indexing, scan and sort launchers (src/ops/index.c, src/ops/scan.c) against
 * host references. */
#include <stdint.h>

#include "harness.h"

#define DEV 0

static axon_stream_t S;

static void *up(const void *host, size_t bytes) {
  return dev_upload(DEV, host, bytes);
}
static int down(void *host, const void *dev, size_t bytes) {
  return dev_download(host, dev, bytes);
}

/* gather along dim 1 of a [R, C] float matrix with an index [R, K]. */
static void test_gather(void) {
  enum { R = 5, C = 7, K = 4 };
  float src[R * C], out[R * K];
  int64_t idx[R * K];
  for (int i = 0; i < R * C; i++) src[i] = rng_float(-3, 3);
  for (int i = 0; i < R * K; i++) idx[i] = (int64_t)(rng_u64() % C) - (i % 3 == 0 ? C : 0);
  void *ds = up(src, sizeof src), *di = up(idx, sizeof idx), *dout = up(NULL, sizeof out);
  axon_dim_desc d;
  memset(&d, 0, sizeof d);
  d.ndim = 2;
  d.sizes[0] = K;
  d.sizes[1] = R;
  d.strides[0][0] = 1, d.strides[0][1] = K;
  d.strides[1][0] = 1, d.strides[1][1] = K;
  d.strides[2][0] = 0, d.strides[2][1] = C;
  d.dim_strides[2] = 1;
  d.dim_size = C;
  d.self = dout, d.index = di, d.src = ds;
  CHECK_OK(axon_gather(S, AXON_F32, &d));
  down(out, dout, sizeof out);
  int bad = 0;
  for (int r = 0; r < R; r++)
    for (int k = 0; k < K; k++) {
      int64_t j = idx[r * K + k];
      if (j < 0) j += C;
      bad += out[r * K + k] != src[r * C + j];
    }
  CHECK(bad == 0, "gather f32 along dim 1, negative indices wrap (%d mismatches)", bad);
  axon_free(ds), axon_free(di), axon_free(dout);
}

/* scatter-add of int32 values with duplicate indices, then amax on float with include_self=0. */
static void test_scatter(void) {
  enum { N = 6, L = 40 };
  int32_t self[N], src[L], want[N];
  int64_t idx[L];
  for (int i = 0; i < N; i++) self[i] = want[i] = i;
  for (int j = 0; j < L; j++) {
    src[j] = (int32_t)(rng_u64() % 100) - 50;
    idx[j] = (int64_t)(rng_u64() % N);
    want[idx[j]] += 3 * src[j];
  }
  void *dself = up(self, sizeof self), *di = up(idx, sizeof idx), *ds = up(src, sizeof src);
  axon_dim_desc d;
  memset(&d, 0, sizeof d);
  d.ndim = 0; /* one line */
  d.len = L;
  d.dim_strides[0] = 1, d.dim_strides[1] = 1, d.dim_strides[2] = 1;
  d.dim_size = N;
  d.self = dself, d.index = di, d.src = ds;
  CHECK_OK(axon_scatter(S, AXON_I32, &d, AXON_SCATTER_SUM, 1, 0, 0, 0, 3.0));
  int32_t got[N];
  down(got, dself, sizeof got);
  int bad = 0;
  for (int i = 0; i < N; i++) bad += got[i] != want[i];
  CHECK(bad == 0, "scatter_add int32 with duplicates and alpha 3 (%d mismatches)", bad);

  float fself[N], fsrc[L], fwant[N], fgot[N];
  int touched[N] = {0};
  for (int i = 0; i < N; i++) fself[i] = 100.0f;
  for (int j = 0; j < L; j++) fsrc[j] = rng_float(-5, 5);
  for (int i = 0; i < N; i++) fwant[i] = 100.0f;
  for (int j = 0; j < L; j++) {
    int64_t t = idx[j];
    fwant[t] = touched[t] ? (fsrc[j] > fwant[t] ? fsrc[j] : fwant[t]) : fsrc[j];
    touched[t] = 1;
  }
  void *dfs = up(fself, sizeof fself), *dfsrc = up(fsrc, sizeof fsrc);
  d.self = dfs, d.src = dfsrc;
  CHECK_OK(axon_scatter(S, AXON_F32, &d, AXON_SCATTER_AMAX, 0, 0, 0, 0, 1.0));
  down(fgot, dfs, sizeof fgot);
  bad = 0;
  for (int i = 0; i < N; i++) bad += fgot[i] != fwant[i];
  CHECK(bad == 0, "scatter_reduce amax f32 without self (%d mismatches)", bad);
  axon_free(dself), axon_free(di), axon_free(ds), axon_free(dfs), axon_free(dfsrc);
}

/* x[idx] for x [4, 3] with idx [5] along dim 0, then index_put with accumulate. */
static void test_advanced(void) {
  enum { R = 4, C = 3, B = 5 };
  float x[R * C], out[B * C];
  int64_t idx[B] = {3, -1, 0, 3, 1};
  for (int i = 0; i < R * C; i++) x[i] = (float)i;
  void *dx = up(x, sizeof x), *di = up(idx, sizeof idx), *dout = up(NULL, sizeof out);
  axon_adv_desc d;
  memset(&d, 0, sizeof d);
  d.nr = 1, d.nb = 1, d.nidx = 1;
  d.r_sizes[0] = C, d.r_self_strides[0] = 1, d.r_other_strides[0] = 1;
  d.b_sizes[0] = B, d.b_other_strides[0] = C;
  d.idx_sizes[0] = R, d.idx_strides[0] = C;
  d.self = dx, d.indices = di, d.other = dout;
  CHECK_OK(axon_index(S, AXON_F32, &d));
  down(out, dout, sizeof out);
  int bad = 0;
  for (int b = 0; b < B; b++)
    for (int c = 0; c < C; c++) bad += out[b * C + c] != x[((idx[b] + R) % R) * C + c];
  CHECK(bad == 0, "index x[idx] f32 (%d mismatches)", bad);
  /* x[idx] += out: rows 3 (twice), 3 (as -1), 0, 1 */
  CHECK_OK(axon_index_put(S, AXON_F32, &d, 1));
  float got[R * C], want[R * C];
  memcpy(want, x, sizeof x);
  for (int b = 0; b < B; b++)
    for (int c = 0; c < C; c++) want[((idx[b] + R) % R) * C + c] += out[b * C + c];
  down(got, dx, sizeof got);
  bad = 0;
  for (int i = 0; i < R * C; i++) bad += got[i] != want[i];
  CHECK(bad == 0, "index_put accumulate with duplicates f32 (%d mismatches)", bad);
  axon_free(dx), axon_free(di), axon_free(dout);
}

static axon_scan_desc line_desc(int64_t lines, int64_t n, const void *in, void *out, void *outi) {
  axon_scan_desc d;
  memset(&d, 0, sizeof d);
  d.ndim = 1;
  d.sizes[0] = lines;
  d.in_strides[0] = n, d.out_strides[0] = n;
  d.n = n;
  d.in_dim_stride = 1, d.out_dim_stride = 1;
  d.in = in, d.out = out, d.out_index = outi;
  return d;
}

/* cumsum (long lines, several blocks), cummax with ties, sort (stable, NaN last). */
static void test_scan_sort(void) {
  enum { L = 3, N = 1500 };
  static int64_t xi[L * N], got[L * N], goti[L * N];
  for (int i = 0; i < L * N; i++) xi[i] = (int64_t)(rng_u64() % 7) - 3;
  void *dx = up(xi, sizeof xi), *dout = up(NULL, sizeof got), *didx = up(NULL, sizeof goti);
  axon_scan_desc d = line_desc(L, N, dx, dout, didx);
  CHECK_OK(axon_scan(S, AXON_I64, AXON_SCAN_SUM, &d));
  down(got, dout, sizeof got);
  int bad = 0;
  for (int l = 0; l < L; l++) {
    int64_t s = 0;
    for (int j = 0; j < N; j++) bad += got[l * N + j] != (s += xi[l * N + j]);
  }
  CHECK(bad == 0, "cumsum int64, 3 lines of 1500 (%d mismatches)", bad);
  CHECK_OK(axon_scan(S, AXON_I64, AXON_SCAN_MAX, &d));
  down(got, dout, sizeof got);
  down(goti, didx, sizeof goti);
  bad = 0;
  for (int l = 0; l < L; l++) {
    int64_t m = INT64_MIN, mi = 0;
    for (int j = 0; j < N; j++) {
      if (xi[l * N + j] >= m) m = xi[l * N + j], mi = j;
      bad += got[l * N + j] != m || goti[l * N + j] != mi;
    }
  }
  CHECK(bad == 0, "cummax int64 with ties takes the last index (%d mismatches)", bad);
  CHECK_OK(axon_sort(S, AXON_I64, &d, 0));
  down(got, dout, sizeof got);
  down(goti, didx, sizeof goti);
  bad = 0;
  for (int l = 0; l < L; l++)
    for (int j = 0; j < N; j++) {
      bad += got[l * N + j] != xi[l * N + goti[l * N + j]];
      if (j > 0) {
        bad += got[l * N + j] < got[l * N + j - 1];
        bad += got[l * N + j] == got[l * N + j - 1] && goti[l * N + j] < goti[l * N + j - 1];
      }
    }
  CHECK(bad == 0, "stable sort int64, 3 lines of 1500 (%d violations)", bad);
  axon_free(dx), axon_free(dout), axon_free(didx);

  float f[6] = {2.0f, NAN, -1.0f, 2.0f, NAN, 0.5f}, fo[6];
  int64_t fi[6], want_i[6] = {1, 4, 0, 3, 5, 2};
  void *df = up(f, sizeof f), *dfo = up(NULL, sizeof fo), *dfi = up(NULL, sizeof fi);
  axon_scan_desc fd = line_desc(1, 6, df, dfo, dfi);
  CHECK_OK(axon_sort(S, AXON_F32, &fd, 1));
  down(fi, dfi, sizeof fi);
  bad = 0;
  for (int j = 0; j < 6; j++) bad += fi[j] != want_i[j];
  CHECK(bad == 0, "descending stable sort f32 puts NaN first (%d mismatches)", bad);
  axon_free(df), axon_free(dfo), axon_free(dfi);
}

/* searchsorted (left and right) and nonzero's write pass. */
static void test_search_nonzero(void) {
  float bnd[4] = {-1.0f, 0.0f, 0.0f, 2.0f}, vals[5] = {-2.0f, 0.0f, 1.0f, 2.0f, 3.0f};
  int64_t got[5], want_l[5] = {0, 1, 3, 3, 4}, want_r[5] = {0, 3, 3, 4, 4};
  void *db = up(bnd, sizeof bnd), *dv = up(vals, sizeof vals), *dout = up(NULL, sizeof got);
  axon_ew_desc d;
  memset(&d, 0, sizeof d);
  d.ndim = 1, d.ninputs = 1, d.sizes[0] = 5, d.strides[0][0] = 1, d.strides[1][0] = 1;
  d.data[0] = dout, d.data[1] = dv;
  CHECK_OK(axon_searchsorted(S, AXON_F32, &d, db, NULL, 4, 5, 0, 0));
  down(got, dout, sizeof got);
  CHECK(!memcmp(got, want_l, sizeof got), "searchsorted left f32");
  CHECK_OK(axon_searchsorted(S, AXON_F32, &d, db, NULL, 4, 5, 1, 0));
  down(got, dout, sizeof got);
  CHECK(!memcmp(got, want_r, sizeof got), "searchsorted right f32");
  axon_free(db), axon_free(dv), axon_free(dout);

  /* x [2, 3] = [[0, 5, 0], [7, 0, 9]]; prefix counts [0, 1, 1, 2, 2, 3] */
  int32_t x[6] = {0, 5, 0, 7, 0, 9};
  int64_t pos[6] = {0, 1, 1, 2, 2, 3}, coords[6], want[6] = {0, 1, 1, 0, 1, 2};
  void *dx = up(x, sizeof x), *dp = up(pos, sizeof pos), *dc = up(NULL, sizeof coords);
  memset(&d, 0, sizeof d);
  d.ndim = 2, d.ninputs = 1, d.sizes[0] = 3, d.sizes[1] = 2;
  d.strides[1][0] = 1, d.strides[1][1] = 3;
  d.data[0] = dc, d.data[1] = dx;
  CHECK_OK(axon_nonzero_write(S, AXON_I32, &d, dp));
  down(coords, dc, sizeof coords);
  CHECK(!memcmp(coords, want, sizeof coords), "nonzero coordinates int32 [2, 3]");
  axon_free(dx), axon_free(dp), axon_free(dc);
}

int main(void) {
  int count = 0;
  REQUIRE_OK(axon_device_count(&count));
  REQUIRE_OK(axon_stream_default(DEV, &S));
  test_gather();
  test_scatter();
  test_advanced();
  test_scan_sort();
  test_search_nonzero();
  CHECK_OK(axon_stream_sync(S));
  axon_memory_stats st;
  CHECK_OK(axon_memory_stats_get(DEV, &st));
  CHECK(st.allocated_bytes == 0, "every test buffer was freed (%llu bytes left)",
        (unsigned long long)st.allocated_bytes);
  return harness_summary();
}
