/* The runtime driven from several threads at once (issue 24, run under ThreadSanitizer by
 * `make tsan`): each thread allocates, uploads, builds and launches a user kernel, runs a
 * built-in elementwise op, records an event, syncs, downloads and frees, round after round;
 * first each on a stream of its own, then all on one shared stream with the profiler
 * recording. Every result is compared with the host's. The same workload then runs a second
 * time to check the live OpenCL object counts (axon/live_objects.h): buffers, events and queues
 * return to their baseline once memory is freed and the cache emptied; programs and kernels,
 * cached by design, do not grow on the second run. */
#include <pthread.h>

#include "axon/live_objects.h"
#include "axon/profiler.h"
#include "harness.h"

#define DEV 0
#define THREADS 4
#define ROUNDS 6

/* y = a * x + b + BIAS. */
static const char *source =
    "__kernel void axpb(__global const float *x, ulong x_off, __global float *y, ulong y_off,\n"
    "                   float a, float b) {\n"
    "  __global const float *in = (__global const float *)((__global const uchar *)x + x_off);\n"
    "  __global float *out = (__global float *)((__global uchar *)y + y_off);\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = a * in[i] + b + BIAS;\n"
    "}\n";

typedef struct worker {
  int index;
  axon_stream_t stream; /* shared; NULL: the worker makes its own */
  int checks, failures;
  char first_failure[512];
} worker;

/* Workers do not call CHECK (the harness's counters are not thread-safe): they count here and
 * main reports each worker's tally. */
static int worker_check(worker *w, int ok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int worker_check(worker *w, int ok, const char *fmt, ...) {
  w->checks++;
  if (ok) return 1;
  if (!w->failures++) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(w->first_failure, sizeof w->first_failure, fmt, args);
    va_end(args);
  }
  return 0;
}
#define WORKER_OK(w, call) \
  worker_check((w), (call) == AXON_SUCCESS, "%s: %s", #call, axon_last_error())

/* Even rounds launch the program every thread shares (BIAS 0: one cl_kernel whose arguments
 * all threads set), odd rounds the worker's own (BIAS index + 1: a build per thread). */
static int round_trip(worker *w, axon_stream_t s, int round) {
  int bias = round % 2 ? w->index + 1 : 0;
  char options[32];
  snprintf(options, sizeof options, "-DBIAS=%d", bias);
  axon_program_t program;
  if (!WORKER_OK(w, axon_program_from_source(DEV, source, options, &program))) return 0;

  size_t n = 1000 + 257 * (size_t)w->index + 31 * (size_t)round;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
  void *dx = NULL, *dy = NULL, *dz = NULL;
  axon_event_t done = NULL;
  int ok = x && y && z;
  /* Quarter steps, a and b small: every value below is exact in float. */
  for (size_t i = 0; ok && i < n; i++)
    x[i] = (float)((i * 7 + (size_t)w->index * 13 + (size_t)round) % 101) * 0.25f - 12;
  float a = 1.5f + (float)w->index, b = (float)round - 2;
  ok = ok && WORKER_OK(w, axon_malloc(DEV, n * sizeof *x, s, &dx));
  ok = ok && WORKER_OK(w, axon_malloc(DEV, n * sizeof *y, s, &dy));
  ok = ok && WORKER_OK(w, axon_malloc(DEV, n * sizeof *z, s, &dz));
  ok = ok && WORKER_OK(w, axon_copy_h2d(dx, x, n * sizeof *x, s, 0));
  axon_arg args[4] = {{AXON_ARG_BUFFER, dx, 0},
                      {AXON_ARG_BUFFER, dy, 0},
                      {AXON_ARG_BYTES, &a, sizeof a},
                      {AXON_ARG_BYTES, &b, sizeof b}};
  ok = ok && WORKER_OK(w, axon_launch(program, "axpb", s, 1, &n, NULL, args, 4));
  axon_ew_desc d;
  memset(&d, 0, sizeof d);
  d.ndim = 1;
  d.ninputs = 2;
  d.sizes[0] = (int64_t)n;
  for (int k = 0; k < 3; k++) d.strides[k][0] = 1;
  d.data[0] = dz;
  d.data[1] = dy;
  d.data[2] = dx;
  ok = ok && WORKER_OK(w, axon_elementwise(s, AXON_PW_add, AXON_F32, AXON_F32, &d, 1.0, 0.0));
  ok = ok && WORKER_OK(w, axon_event_create(&done));
  ok = ok && WORKER_OK(w, axon_event_record(done, s));
  ok = ok && WORKER_OK(w, axon_event_sync(done));
  ok = ok && WORKER_OK(w, axon_copy_d2h(y, dy, n * sizeof *y, s, 1));
  ok = ok && WORKER_OK(w, axon_copy_d2h(z, dz, n * sizeof *z, s, 0));
  ok = ok && WORKER_OK(w, axon_stream_sync(s));
  int wrong = -1;
  for (size_t i = 0; ok && i < n && wrong < 0; i++) {
    float want_y = a * x[i] + b + (float)bias;
    if (y[i] != want_y || z[i] != want_y + x[i]) wrong = (int)i;
  }
  if (ok)
    worker_check(w, wrong < 0, "thread %d round %d: element %d: y %g z %g", w->index, round, wrong,
                 wrong < 0 ? 0.0 : (double)y[wrong], wrong < 0 ? 0.0 : (double)z[wrong]);
  axon_event_destroy(done);
  axon_free(dx);
  axon_free(dy);
  axon_free(dz);
  free(x);
  free(y);
  free(z);
  return ok;
}

static void *work(void *arg) {
  worker *w = arg;
  axon_stream_t s = w->stream;
  if (!s && !WORKER_OK(w, axon_stream_create(DEV, &s))) return NULL;
  for (int round = 0; round < ROUNDS && round_trip(w, s, round); round++) {
  }
  if (!w->stream) WORKER_OK(w, axon_stream_destroy(s));
  return NULL;
}

/* All workers at once, on `shared` or each on its own stream; reports each worker's checks. */
static void run_workers(axon_stream_t shared, const char *what) {
  worker workers[THREADS];
  pthread_t threads[THREADS];
  int started[THREADS];
  for (int t = 0; t < THREADS; t++) {
    workers[t] = (worker){.index = t, .stream = shared};
    started[t] = pthread_create(&threads[t], NULL, work, &workers[t]) == 0;
  }
  for (int t = 0; t < THREADS; t++) {
    if (started[t]) pthread_join(threads[t], NULL);
    worker *w = &workers[t];
    CHECK(started[t] && w->failures == 0 && w->checks > ROUNDS,
          "%s: thread %d: %d checks, %d failed%s%s", what, t, w->checks, w->failures,
          w->failures ? ": " : "", w->failures ? w->first_failure : "");
  }
}

static void live_counts(int64_t counts[AXON_LIVE_KIND_COUNT]) {
  for (int k = 0; k < AXON_LIVE_KIND_COUNT; k++) counts[k] = axon_live_objects((axon_live_kind)k);
}

/* Both phases once; with the profiler on for the shared stream, whose kernel records must
 * number one per launch. */
static void workload(const char *run) {
  char what[64];
  snprintf(what, sizeof what, "%s, own streams", run);
  run_workers(NULL, what);
  axon_stream_t shared;
  if (!CHECK_OK(axon_stream_create(DEV, &shared))) return;
  if (CHECK_OK(axon_profiler_start())) {
    snprintf(what, sizeof what, "%s, one shared stream, profiler on", run);
    run_workers(shared, what);
    axon_profile_record *records = NULL;
    size_t count = 0, launches = 0;
    if (CHECK_OK(axon_profiler_stop(&records, &count))) {
      for (size_t i = 0; i < count; i++) launches += !strcmp(records[i].name, "axpb");
      CHECK(launches == THREADS * ROUNDS, "%s: profiler records %zu launches of axpb (want %d)",
            run, launches, THREADS * ROUNDS);
      free(records);
    }
  }
  CHECK_OK(axon_stream_destroy(shared));
}

int main(void) {
  axon_stream_t s;
  REQUIRE_DEVICE_STREAM(DEV, s);
  CHECK(axon_live_objects(AXON_LIVE_QUEUE) >= 1, "the default stream's queue is counted: %lld",
        (long long)axon_live_objects(AXON_LIVE_QUEUE));
  CHECK(axon_live_kind_name(AXON_LIVE_KIND_COUNT) == NULL &&
            axon_live_objects(AXON_LIVE_KIND_COUNT) == 0 &&
            !strcmp(axon_live_kind_name(AXON_LIVE_BUFFER), "buffers"),
        "live object kinds: names, and an unknown kind");
  REQUIRE_OK(axon_empty_cache(DEV));
  int64_t baseline[AXON_LIVE_KIND_COUNT], first[AXON_LIVE_KIND_COUNT], second[AXON_LIVE_KIND_COUNT];
  live_counts(baseline);

  workload("first run");
  REQUIRE_OK(axon_device_sync(DEV));
  REQUIRE_OK(axon_empty_cache(DEV));
  live_counts(first);
  workload("second run");
  REQUIRE_OK(axon_device_sync(DEV));
  REQUIRE_OK(axon_empty_cache(DEV));
  live_counts(second);

  const axon_live_kind back[] = {AXON_LIVE_BUFFER, AXON_LIVE_EVENT, AXON_LIVE_QUEUE};
  for (size_t i = 0; i < sizeof back / sizeof *back; i++) {
    axon_live_kind k = back[i];
    CHECK(first[k] == baseline[k] && second[k] == baseline[k],
          "live %s back to the baseline: %lld, after the runs %lld and %lld",
          axon_live_kind_name(k), (long long)baseline[k], (long long)first[k],
          (long long)second[k]);
  }
  const axon_live_kind cached[] = {AXON_LIVE_PROGRAM, AXON_LIVE_KERNEL};
  for (size_t i = 0; i < sizeof cached / sizeof *cached; i++) {
    axon_live_kind k = cached[i];
    CHECK(first[k] > baseline[k] && second[k] == first[k],
          "live %s cached: %lld before, %lld after the first run, %lld after the second",
          axon_live_kind_name(k), (long long)baseline[k], (long long)first[k],
          (long long)second[k]);
  }
  return harness_summary();
}
