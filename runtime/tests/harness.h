/*
 * A minimal test harness for libaxon's C tests. Every check prints one line ("ok N - ..." or
 * "FAIL N - ..."), every check that cannot run on this device one "ok N # SKIP reason" line (TAP's
 * form); harness_summary() prints "P passed, F failed" (", S skipped" where some were) and gives
 * the exit status.
 */
#ifndef AXON_TEST_HARNESS_H
#define AXON_TEST_HARNESS_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axon/axon.h"

static int harness_passed, harness_failed, harness_skipped;

static inline void harness_report(int ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline void harness_report(int ok, const char *file, int line, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  printf("%s %d - ", ok ? "ok" : "FAIL", harness_passed + harness_failed + harness_skipped + 1);
  vprintf(fmt, args);
  va_end(args);
  if (!ok) printf("  [%s:%d]", file, line);
  printf("\n");
  fflush(stdout);
  if (ok)
    harness_passed++;
  else
    harness_failed++;
}

/* SKIP("reason", ...): checks that this device cannot run (it lacks float64, native kernels...),
 * named and counted, so that a test that checked nothing on a device says so instead of passing
 * silently. Assert what can be asserted there too (that the runtime refuses the operation). */
static inline void harness_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void harness_skip(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  printf("ok %d # SKIP ", harness_passed + harness_failed + harness_skipped + 1);
  vprintf(fmt, args);
  va_end(args);
  printf("\n");
  fflush(stdout);
  harness_skipped++;
}
#define SKIP(...) harness_skip(__VA_ARGS__)

/* CHECK(condition, "description", ...): passes when the condition holds. */
#define CHECK(cond, ...) harness_report((cond) ? 1 : 0, __FILE__, __LINE__, __VA_ARGS__)

/* CHECK_OK(call): passes when the call returns AXON_SUCCESS; else shows the status and
 * axon_last_error(). Evaluates to 1 on success, 0 on failure. */
#define CHECK_OK(call) harness_check_ok((call), #call, __FILE__, __LINE__)
static inline int harness_check_ok(axon_status_t st, const char *what, const char *file, int line) {
  if (st == AXON_SUCCESS) {
    harness_report(1, file, line, "%s", what);
    return 1;
  }
  harness_report(0, file, line, "%s -> %s (%d): %s", what, axon_status_name(st), st,
                 axon_last_error());
  return 0;
}

/* CHECK_STATUS(call, expected): passes when the call returns the expected status. */
#define CHECK_STATUS(call, expected) \
  harness_check_status((call), (expected), #call, __FILE__, __LINE__)
static inline int harness_check_status(axon_status_t st, axon_status_t expected, const char *what,
                                       const char *file, int line) {
  harness_report(st == expected, file, line, "%s -> %s (expected %s)", what, axon_status_name(st),
                 axon_status_name(expected));
  return st == expected;
}

/* Fatal: a failure that makes the rest of the program meaningless. */
#define REQUIRE_OK(call)                            \
  do {                                              \
    if (!CHECK_OK(call)) {                          \
      printf("aborting: a required step failed\n"); \
      return harness_summary();                     \
    }                                               \
  } while (0)

/* In main: the default stream of `device` into `s`; with no device, a SKIP line and the summary. */
#define REQUIRE_DEVICE_STREAM(device, s)              \
  do {                                                \
    int harness_devices_ = 0;                         \
    REQUIRE_OK(axon_device_count(&harness_devices_)); \
    if (harness_devices_ == 0) {                      \
      SKIP("every test: no device");                  \
      return harness_summary();                       \
    }                                                 \
    REQUIRE_OK(axon_stream_default((device), &(s)));  \
  } while (0)

static inline int harness_summary(void) {
  printf("%d passed, %d failed", harness_passed, harness_failed);
  if (harness_skipped) printf(", %d skipped", harness_skipped);
  printf("\n");
  fflush(stdout);
  return harness_failed ? 1 : 0;
}

/* ---- helpers ------------------------------------------------------------------------------ */

/* Largest |got - want| / max(|want|, floor) over n floats; NaN if either side is NaN where the
 * other is not. */
static inline double max_rel_err(const float *got, const double *want, size_t n, double floor) {
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    if (isnan(want[i]) || isnan(got[i])) {
      if (isnan(want[i]) != isnan(got[i])) return NAN;
      continue;
    }
    double scale = fabs(want[i]) > floor ? fabs(want[i]) : floor;
    double e = fabs((double)got[i] - want[i]) / scale;
    if (e > worst) worst = e;
  }
  return worst;
}

/* Deterministic pseudo-random numbers for test inputs (xorshift64*). */
static uint64_t harness_rng_state = 0x9E3779B97F4A7C15ull;
static inline uint64_t rng_u64(void) {
  uint64_t x = harness_rng_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  harness_rng_state = x;
  return x * 0x2545F4914F6CDD1Dull;
}
/* Uniform in [lo, hi). */
static inline float rng_float(float lo, float hi) {
  return lo + (hi - lo) * (float)((rng_u64() >> 40) * (1.0 / 16777216.0));
}

/* Host-side float16 / bfloat16 conversions (round to nearest even). */
static inline float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float f;
  if (exp == 0)
    f = ldexpf((float)mant, -24);
  else if (exp == 31)
    f = mant ? NAN : INFINITY;
  else
    f = ldexpf((float)(mant | 0x400), (int)exp - 25);
  uint32_t u;
  memcpy(&u, &f, 4);
  u |= sign;
  memcpy(&f, &u, 4);
  return f;
}
static inline uint16_t float_to_half(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  float a = fabsf(f);
  if (isnan(f)) return sign | 0x7e00;
  if (a >= 65520.0f) return sign | 0x7c00; /* rounds to infinity */
  if (a < ldexpf(1.0f, -14)) {             /* subnormal: units of 2^-24, nearest even */
    return sign | (uint16_t)nearbyintf(a * ldexpf(1.0f, 24));
  }
  int e;
  float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
  /* 11 significant bits: a = q * 2^(e - 11) with q in [1024, 2048). */
  float q = nearbyintf(ldexpf(m, 11));
  if (q >= 2048.0f) {
    q /= 2;
    e++;
  }
  return sign | (uint16_t)(((e - 1 + 15) << 10) | ((uint32_t)q & 0x3ff));
}
static inline float bf16_to_float(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

/* Device buffers for tests: allocate on the default stream and upload / download blocking. */
static inline void *dev_upload(int device, const void *host, size_t bytes) {
  void *p = NULL;
  if (axon_malloc(device, bytes, NULL, &p) != AXON_SUCCESS) {
    printf("dev_upload: axon_malloc(%zu) failed: %s\n", bytes, axon_last_error());
    return NULL;
  }
  if (host && axon_copy_h2d(p, host, bytes, NULL, 1) != AXON_SUCCESS) {
    printf("dev_upload: copy failed: %s\n", axon_last_error());
    axon_free(p);
    return NULL;
  }
  return p;
}
static inline int dev_download(void *host, const void *dev, size_t bytes) {
  axon_status_t st = axon_copy_d2h(host, dev, bytes, NULL, 1);
  if (st != AXON_SUCCESS) printf("dev_download failed: %s\n", axon_last_error());
  return st == AXON_SUCCESS;
}

#endif
