/* Tests of devices, streams and events. */
#include <stdint.h>

#include "gate.h"
#include "harness.h"

#define DEV 0

/* axon_stream_query on a stream with nothing pending. The answer comes from a marker that the
 * driver completes asynchronously, so a heavily loaded machine gets a few tries; a query that
 * never waits for its marker fails all of them. */
static axon_status_t query_idle(axon_stream_t s, int *done) {
  axon_status_t st = AXON_SUCCESS;
  for (int i = 0; i < 5; i++) {
    st = axon_stream_query(s, done);
    if (st != AXON_SUCCESS || *done) break;
  }
  return st;
}

static void test_devices(int count) {
  for (int i = 0; i < count; i++) {
    axon_device_info info;
    memset(&info, 0, sizeof info);
    if (!CHECK_OK(axon_device_get_info(i, &info))) continue;
    printf("#   device %d: %s (%s, %s), %llu MiB, %u compute units, fp64 %d\n", i, info.name,
           info.platform_name, info.driver_version,
           (unsigned long long)(info.global_mem_bytes >> 20), info.compute_units, info.has_fp64);
    CHECK(info.name[0] != '\0', "device %d has a name", i);
    CHECK(info.global_mem_bytes > 0, "device %d global_mem_bytes > 0", i);
    CHECK(info.max_alloc_bytes > 0 && info.max_alloc_bytes <= info.global_mem_bytes,
          "device %d max_alloc_bytes in (0, global]", i);
    CHECK(info.max_work_group_size >= 1 && info.compute_units >= 1,
          "device %d work-group size and compute units", i);
    CHECK(axon_device_supports_dtype(i, AXON_F32) && axon_device_supports_dtype(i, AXON_BOOL),
          "device %d supports float32 and bool", i);
    CHECK(axon_device_supports_dtype(i, AXON_F64) == info.has_fp64,
          "device %d float64 support follows cl_khr_fp64", i);
    CHECK(!axon_device_supports_dtype(i, AXON_DTYPE_COUNT), "an invalid dtype is unsupported");
  }
  axon_device_info info;
  CHECK_STATUS(axon_device_get_info(count, &info), AXON_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(axon_last_error(), "out of range") != NULL, "out-of-range message: %s",
        axon_last_error());
  CHECK_STATUS(axon_device_get_info(-1, &info), AXON_ERROR_INVALID_ARGUMENT);
  axon_stream_t s;
  CHECK_STATUS(axon_stream_default(count + 3, &s), AXON_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(axon_stream_create(count, &s), AXON_ERROR_INVALID_ARGUMENT);
  CHECK(!axon_device_supports_dtype(count, AXON_F32), "no dtype is supported on a bad device");
  void *p = (void *)1;
  CHECK_STATUS(axon_malloc(count, 16, NULL, &p), AXON_ERROR_INVALID_ARGUMENT);
  CHECK(p == NULL, "malloc on a bad device leaves NULL");
}

static void test_streams(void) {
  axon_stream_t def, def2, a, b;
  CHECK_OK(axon_stream_default(DEV, &def));
  CHECK_OK(axon_stream_default(DEV, &def2));
  CHECK(def != NULL && def == def2, "the default stream is one object");
  CHECK(axon_stream_device(def) == DEV, "default stream belongs to device 0");
  CHECK_STATUS(axon_stream_destroy(def), AXON_ERROR_INVALID_ARGUMENT);
  CHECK_OK(axon_stream_create(DEV, &a));
  CHECK_OK(axon_stream_create(DEV, &b));
  CHECK(a != b && a != def, "created streams are distinct");
  CHECK(axon_stream_device(a) == DEV, "created stream belongs to device 0");
  uint64_t ida = axon_stream_id(a), idb = axon_stream_id(b), idd = axon_stream_id(def);
  CHECK(ida && idb && idd && ida != idb && ida != idd && idb != idd,
        "stream ids are unique and non-zero (%llu %llu %llu)", (unsigned long long)idd,
        (unsigned long long)ida, (unsigned long long)idb);
  CHECK(axon_stream_id(NULL) == 0 && axon_stream_device(NULL) == -1, "NULL stream queries");
  int done = 0;
  CHECK_OK(query_idle(a, &done));
  CHECK(done == 1, "an idle stream reports done");
  CHECK_OK(axon_stream_sync(a));
  CHECK_OK(axon_device_sync(DEV));
  CHECK_STATUS(axon_stream_sync(NULL), AXON_ERROR_INVALID_ARGUMENT);

  /* A held-back stream is not done until released. */
  cl_event gate = gate_close(a);
  CHECK(gate != NULL, "stream held back by a user event");
  if (gate) {
    done = 1;
    CHECK_OK(axon_stream_query(a, &done));
    CHECK(done == 0, "a blocked stream reports not done");
    axon_event_t e;
    CHECK_OK(axon_event_create(&e));
    CHECK_OK(axon_event_record(e, a));
    done = 1;
    CHECK_OK(axon_event_query(e, &done));
    CHECK(done == 0, "an event behind blocked work is not done");
    gate_open(gate);
    CHECK_OK(axon_event_sync(e));
    CHECK_OK(axon_event_query(e, &done));
    CHECK(done == 1, "the event completes once the work does");
    CHECK_OK(query_idle(a, &done));
    CHECK(done == 1, "and the stream is done");
    CHECK_OK(axon_event_destroy(e));
  }
  CHECK_OK(axon_stream_destroy(a));
  CHECK_OK(axon_stream_destroy(b));
  CHECK_STATUS(axon_stream_destroy(NULL), AXON_ERROR_INVALID_ARGUMENT);
}

static void test_events(void) {
  axon_stream_t s;
  CHECK_OK(axon_stream_create(DEV, &s));
  axon_event_t e0, e1, never;
  CHECK_OK(axon_event_create(&e0));
  CHECK_OK(axon_event_create(&e1));
  CHECK_OK(axon_event_create(&never));
  int done = 0;
  CHECK_OK(axon_event_query(never, &done));
  CHECK(done == 1, "a never-recorded event is done");
  CHECK_OK(axon_event_sync(never));
  float ms = -1;
  CHECK_STATUS(axon_event_elapsed_ms(never, never, &ms), AXON_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(axon_event_record(e0, NULL), AXON_ERROR_INVALID_ARGUMENT);

  /* Some work between two events: 8 MiB round trips. */
  const size_t n = 2u << 20;
  float *h = malloc(n * sizeof(float)), *back = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) h[i] = (float)i;
  void *d = NULL, *d2 = NULL;
  CHECK_OK(axon_malloc(DEV, n * sizeof(float), s, &d));
  CHECK_OK(axon_malloc(DEV, n * sizeof(float), s, &d2));
  CHECK_OK(axon_event_record(e0, s));
  for (int r = 0; r < 4; r++) {
    axon_copy_h2d(d, h, n * sizeof(float), s, 1);
    axon_copy_d2d(d2, d, n * sizeof(float), s);
  }
  CHECK_OK(axon_event_record(e1, s));
  CHECK_OK(axon_event_sync(e1));
  CHECK_OK(axon_event_query(e1, &done));
  CHECK(done == 1, "a synced event is done");
  CHECK_OK(axon_event_query(e0, &done));
  CHECK(done == 1, "an earlier event on the same stream is done too");
  CHECK_OK(axon_event_elapsed_ms(e0, e1, &ms));
  CHECK(ms >= 0.0f && ms < 60000.0f, "elapsed time between the events is >= 0 (%.3f ms)", ms);
  /* Re-recording replaces the marker. */
  CHECK_OK(axon_event_record(e0, s));
  CHECK_OK(axon_event_sync(e0));
  CHECK_OK(axon_event_elapsed_ms(e1, e0, &ms));
  CHECK(ms >= 0.0f, "a re-recorded event is later than the previous one (%.3f ms)", ms);

  /* Cross-stream ordering: B's copy waits for an event recorded after A's write. */
  axon_stream_t sa, sb;
  CHECK_OK(axon_stream_create(DEV, &sa));
  CHECK_OK(axon_stream_create(DEV, &sb));
  for (size_t i = 0; i < n; i++) back[i] = -1.0f;
  CHECK_OK(axon_copy_h2d(d, back, n * sizeof(float), NULL, 1)); /* old contents: -1 */
  CHECK_OK(axon_copy_h2d(d2, back, n * sizeof(float), NULL, 1));
  float *pinned = NULL;
  CHECK_OK(axon_host_alloc(n * sizeof(float), (void **)&pinned));
  for (size_t i = 0; i < n; i++) pinned[i] = (float)i * 3.0f + 1.0f;
  cl_event gate = gate_close(sa); /* A's write cannot start until the gate opens */
  axon_event_t written;
  CHECK_OK(axon_event_create(&written));
  CHECK_OK(axon_copy_h2d(d, pinned, n * sizeof(float), sa, 0));
  CHECK_OK(axon_event_record(written, sa));
  CHECK_OK(axon_stream_wait_event(sb, written));
  CHECK_OK(axon_copy_d2d(d2, d, n * sizeof(float), sb));
  done = 1;
  CHECK_OK(axon_stream_query(sb, &done));
  CHECK(gate != NULL && done == 0, "stream B waits while A's write is held back");
  if (gate) gate_open(gate);
  CHECK_OK(axon_stream_sync(sb));
  CHECK_OK(axon_copy_d2h(back, d2, n * sizeof(float), sb, 1));
  int ok = 1;
  for (size_t i = 0; i < n; i++) ok &= back[i] == (float)i * 3.0f + 1.0f;
  CHECK(ok, "B's copy saw A's write (wait_event orders the streams)");
  /* Waiting on a never-recorded event is a no-op. */
  CHECK_OK(axon_stream_wait_event(sb, never));
  CHECK_STATUS(axon_stream_wait_event(NULL, never), AXON_ERROR_INVALID_ARGUMENT);
  CHECK_OK(axon_stream_sync(sa));
  CHECK_OK(axon_stream_sync(sb));

  CHECK_OK(axon_host_free(pinned));
  CHECK_OK(axon_free(d));
  CHECK_OK(axon_free(d2));
  CHECK_OK(axon_event_destroy(e0));
  CHECK_OK(axon_event_destroy(e1));
  CHECK_OK(axon_event_destroy(never));
  CHECK_OK(axon_event_destroy(written));
  CHECK_OK(axon_event_destroy(NULL));
  CHECK_OK(axon_stream_destroy(sa));
  CHECK_OK(axon_stream_destroy(sb));
  CHECK_OK(axon_stream_destroy(s));
  free(h);
  free(back);
}

static void test_status_names(void) {
  CHECK(!strcmp(axon_status_name(AXON_SUCCESS), "AXON_SUCCESS"), "status name of success");
  CHECK(!strcmp(axon_status_name(AXON_ERROR_OUT_OF_MEMORY), "AXON_ERROR_OUT_OF_MEMORY"),
        "status name of an Axon error");
  CHECK(!strcmp(axon_status_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES"),
        "status name of an OpenCL error");
  CHECK(!strcmp(axon_status_name(-424242), "unknown status"), "unknown status name");
  CHECK(axon_dtype_size(AXON_F32) == 4 && axon_dtype_size(AXON_BF16) == 2 &&
            axon_dtype_size(AXON_I64) == 8 && axon_dtype_size(AXON_BOOL) == 1 &&
            axon_dtype_size(AXON_DTYPE_COUNT) == 0,
        "dtype sizes");
  CHECK(!strcmp(axon_dtype_name(AXON_BF16), "bfloat16") &&
            !strcmp(axon_dtype_name(AXON_DTYPE_COUNT), "invalid"),
        "dtype names");
}

int main(void) {
  int count = 0;
  REQUIRE_OK(axon_device_count(&count));
  CHECK(count >= 1, "at least one device (%d)", count);
  test_status_names();
  test_devices(count);
  test_streams();
  test_events();
  return harness_summary();
}
