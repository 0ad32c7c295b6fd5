/* Tests of fused eager mode (axon/fused.h, src/fused/): a chain of float32 pointwise ops is
 * recorded, launched as one kernel from its structure's second appearance, and gives the bits
 * the same ops give launched one by one; freed temporaries are never stored; a copy reads the
 * recorded results; an op whose output overlaps a recorded input other than exactly ends the
 * group first. */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "axon/fused.h"
#include "harness.h"

#define DEV 0
#define N 1003 /* not a multiple of the vector span: the partial vector is exercised */

static axon_ew_desc line(int ninputs, void *out, void *a, void *b) {
  axon_ew_desc d;
  memset(&d, 0, sizeof d);
  d.ndim = 1;
  d.ninputs = ninputs;
  d.sizes[0] = N;
  for (int k = 0; k <= ninputs; k++) d.strides[k][0] = 1;
  d.data[0] = out;
  d.data[1] = a;
  d.data[2] = b;
  return d;
}

/* out = relu(x * y + x) * 0.5 through temporaries t1, t2, t3, which are freed before the read
 * when free_temporaries is set (as Python frees them). */
static int chain(axon_stream_t s, void *x, void *y, void *out, int free_temporaries) {
  void *t1, *t2, *t3;
  size_t bytes = N * sizeof(float);
  if (axon_malloc(DEV, bytes, s, &t1) || axon_malloc(DEV, bytes, s, &t2) ||
      axon_malloc(DEV, bytes, s, &t3))
    return 0;
  axon_ew_desc d = line(2, t1, x, y);
  int ok = axon_elementwise(s, AXON_PW_mul, AXON_F32, AXON_F32, &d, 1.0, 0.0) == AXON_SUCCESS;
  d = line(2, t2, t1, x);
  ok = ok && axon_elementwise(s, AXON_PW_add, AXON_F32, AXON_F32, &d, 1.0, 0.0) == AXON_SUCCESS;
  if (free_temporaries) axon_free(t1);
  d = line(1, t3, t2, NULL);
  ok = ok && axon_elementwise(s, AXON_PW_relu, AXON_F32, AXON_F32, &d, 0.0, 0.0) == AXON_SUCCESS;
  if (free_temporaries) axon_free(t2);
  d = line(2, out, t3, NULL);
  d.is_scalar[2] = 1;
  d.scalars[2] = 0.5;
  ok = ok && axon_elementwise(s, AXON_PW_mul, AXON_F32, AXON_F32, &d, 1.0, 0.0) == AXON_SUCCESS;
  if (free_temporaries) axon_free(t3);
  if (!free_temporaries) {
    axon_free(t1);
    axon_free(t2);
    axon_free(t3);
  }
  return ok;
}

static void test_chain_is_bit_exact(axon_stream_t s, void *x, void *y, void *out) {
  static float expected[N], got[N];
  CHECK_OK(axon_fused_eager_set(0));
  CHECK(chain(s, x, y, out, 1), "the chain ran op by op");
  CHECK_OK(axon_copy_d2h(expected, out, sizeof expected, s, 1));
  CHECK_OK(axon_fused_eager_set(1));
  axon_fused_stats st;
  axon_fused_stats_get(&st, 1);
  for (int run = 0; run < 4; run++) {
    memset(got, 0, sizeof got);
    CHECK_OK(axon_copy_h2d(out, got, sizeof got, s, 1)); /* the copy launches nothing stale */
    CHECK(chain(s, x, y, out, 1), "run %d recorded", run);
    CHECK_OK(axon_copy_d2h(got, out, sizeof got, s, 1)); /* the copy launches the group */
    CHECK(!memcmp(got, expected, sizeof got), "run %d: the bits of op-by-op eager", run);
    axon_fused_wait_builds();
  }
  axon_fused_stats_get(&st, 1);
  CHECK(st.ops_recorded == 16, "16 ops recorded (%llu)", (unsigned long long)st.ops_recorded);
  /* Op by op at the first appearance, and at the second while its kernel builds in the
   * background (AXON_FUSED_BUILD=sync: built then, and fused); fused from then on. */
  CHECK(
      st.groups_unfused >= 1 && st.groups_unfused <= 2 && st.groups_fused + st.groups_unfused == 4,
      "fused from the structure's second or third appearance (%llu unfused, %llu fused)",
      (unsigned long long)st.groups_unfused, (unsigned long long)st.groups_fused);
  CHECK(st.kernels_built == 1, "one kernel built (%llu)", (unsigned long long)st.kernels_built);
  CHECK(st.stores_skipped == 3 * st.groups_fused,
        "the three temporaries were never stored (%llu skipped in %llu fused groups)",
        (unsigned long long)st.stores_skipped, (unsigned long long)st.groups_fused);
}

static void test_partial_overlap_ends_the_group(axon_stream_t s) {
  /* y = x * 2, then x shifted by one element is written in place: the group must read x before
   * the write lands, as op-by-op eager does. */
  static float host[N + 1], got[N];
  for (int i = 0; i <= N; i++) host[i] = (float)i;
  void *buf, *y;
  CHECK_OK(axon_malloc(DEV, (N + 1) * sizeof(float), s, &buf));
  CHECK_OK(axon_malloc(DEV, N * sizeof(float), s, &y));
  CHECK_OK(axon_copy_h2d(buf, host, sizeof host, s, 1));
  axon_ew_desc d = line(2, y, buf, NULL);
  d.is_scalar[2] = 1;
  d.scalars[2] = 2.0;
  CHECK_OK(axon_elementwise(s, AXON_PW_mul, AXON_F32, AXON_F32, &d, 1.0, 0.0));
  void *shifted = (char *)buf + sizeof(float);
  d = line(2, shifted, shifted, NULL);
  d.is_scalar[2] = 1;
  d.scalars[2] = 100.0;
  CHECK_OK(axon_elementwise(s, AXON_PW_add, AXON_F32, AXON_F32, &d, 1.0, 0.0));
  CHECK_OK(axon_copy_d2h(got, y, sizeof got, s, 1));
  int ok = 1;
  for (int i = 0; i < N; i++) ok &= got[i] == 2.0f * (float)i;
  CHECK(ok, "y read x before the overlapping write");
  axon_free(buf);
  axon_free(y);
}

/* The per-tensor ops of a foreach call come op by op across tensors of two lengths: they gather
 * into one group per length. An op of the second length that reads part of what the first group
 * writes launches that group before it joins its own. */
static void test_foreach_order_gathers_by_length(axon_stream_t s) {
  enum { A = 300, B = 77 };
  static float ha[A], hb[B], got_a[A], got_b[B], sum[B];
  for (int i = 0; i < A; i++) ha[i] = (float)i * 0.5f;
  for (int i = 0; i < B; i++) hb[i] = (float)i - 20.0f;
  void *a, *b, *c;
  CHECK_OK(axon_malloc(DEV, sizeof ha, s, &a));
  CHECK_OK(axon_malloc(DEV, sizeof hb, s, &b));
  CHECK_OK(axon_malloc(DEV, sizeof hb, s, &c));
  CHECK_OK(axon_copy_h2d(a, ha, sizeof ha, s, 1));
  CHECK_OK(axon_copy_h2d(b, hb, sizeof hb, s, 1));
  axon_fused_stats st;
  for (int run = 0; run < 3; run++) {
    axon_fused_stats_get(&st, 1);
    void *t[2] = {a, b};
    int64_t len[2] = {A, B};
    for (int step = 0; step < 2; step++) /* x = x * 2 + 1 in place, op-major over both tensors */
      for (int k = 0; k < 2; k++) {
        axon_ew_desc d = line(2, t[k], t[k], NULL);
        d.sizes[0] = len[k];
        d.is_scalar[2] = 1;
        d.scalars[2] = step ? 1.0 : 2.0;
        CHECK_OK(axon_elementwise(s, step ? AXON_PW_add : AXON_PW_mul, AXON_F32, AXON_F32, &d, 1.0,
                                  0.0));
      }
    axon_ew_desc d = line(2, c, a, a); /* c = a[:B] + a[:B]: part of the length-A group's result */
    d.sizes[0] = B;
    CHECK_OK(axon_elementwise(s, AXON_PW_add, AXON_F32, AXON_F32, &d, 1.0, 0.0));
    CHECK_OK(axon_copy_d2h(got_a, a, sizeof got_a, s, 1));
    CHECK_OK(axon_copy_d2h(got_b, b, sizeof got_b, s, 1));
    CHECK_OK(axon_copy_d2h(sum, c, sizeof sum, s, 1));
    int ok = 1;
    for (int i = 0; i < A; i++) ok &= got_a[i] == (ha[i] = ha[i] * 2.0f + 1.0f);
    for (int i = 0; i < B; i++) ok &= got_b[i] == (hb[i] = hb[i] * 2.0f + 1.0f);
    for (int i = 0; i < B; i++) ok &= sum[i] == ha[i] + ha[i];
    CHECK(ok, "run %d: both tensors and the sum as op by op", run);
    axon_fused_stats_get(&st, 1);
    CHECK(st.ops_recorded == 5, "run %d: five ops recorded (%llu)", run,
          (unsigned long long)st.ops_recorded);
    CHECK(st.groups_fused + st.groups_unfused == 2,
          "run %d: one group per length, the sum in the second (%llu fused, %llu not)", run,
          (unsigned long long)st.groups_fused, (unsigned long long)st.groups_unfused);
    if (run == 2)
      CHECK(st.groups_fused == 2, "run 2: both length groups fused (%llu)",
            (unsigned long long)st.groups_fused);
    axon_fused_wait_builds();
  }
  axon_free(a);
  axon_free(b);
  axon_free(c);
}

/* A child forked while a kernel builds in the background stops the builder at once: it has no
 * builder thread, and its copy of the builder's state says busy (it once waited for ever). The
 * chain's ops come from the clock, so that its kernel is new to every cache and still compiling
 * when the child is forked. */
static void test_a_forked_child_stops_at_once(axon_stream_t s, void *x, void *out) {
  static const axon_pointwise_op ops[4] = {AXON_PW_neg, AXON_PW_abs, AXON_PW_sin, AXON_PW_cos};
  static float got[N];
  unsigned pick = (unsigned)time(NULL) ^ ((unsigned)getpid() << 8);
  CHECK_OK(axon_fused_eager_set(1));
  for (int run = 0; run < 2; run++) { /* the second run submits the build */
    axon_ew_desc d = line(1, out, x, NULL);
    CHECK_OK(axon_elementwise(s, ops[pick & 3], AXON_F32, AXON_F32, &d, 0.0, 0.0));
    d = line(1, out, out, NULL);
    for (int k = 1; k < 12; k++)
      CHECK_OK(axon_elementwise(s, ops[(pick >> (2 * k)) & 3], AXON_F32, AXON_F32, &d, 0.0, 0.0));
    CHECK_OK(axon_copy_d2h(got, out, sizeof got, s, 1));
  }
  pid_t child = fork();
  if (child == 0) {
    alarm(20); /* a child that waits is ended by the signal, and the check below fails */
    axon_fused_stop_builds();
    _exit(0);
  }
  int status = 0;
  CHECK(child > 0 && waitpid(child, &status, 0) == child, "forked and waited for the child");
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child stopped the builder at once");
  axon_fused_wait_builds();
}

int main(void) {
  axon_stream_t s;
  REQUIRE_DEVICE_STREAM(DEV, s);
  static float hx[N], hy[N];
  for (int i = 0; i < N; i++) {
    hx[i] = (float)((i * 37) % 101) / 7.0f - 7.0f;
    hy[i] = (float)((i * 53) % 97) / 13.0f - 3.0f;
  }
  void *x, *y, *out;
  CHECK_OK(axon_malloc(DEV, sizeof hx, s, &x));
  CHECK_OK(axon_malloc(DEV, sizeof hy, s, &y));
  CHECK_OK(axon_malloc(DEV, sizeof hx, s, &out));
  CHECK_OK(axon_copy_h2d(x, hx, sizeof hx, s, 1));
  CHECK_OK(axon_copy_h2d(y, hy, sizeof hy, s, 1));
  test_chain_is_bit_exact(s, x, y, out);
  test_partial_overlap_ends_the_group(s);
  test_foreach_order_gathers_by_length(s);
  test_a_forked_child_stops_at_once(s, x, out);
  CHECK_OK(axon_fused_eager_set(0));
  axon_free(x);
  axon_free(y);
  axon_free(out);
  return harness_summary();
}
