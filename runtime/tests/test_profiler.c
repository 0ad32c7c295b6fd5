/* Tests of the device-side profiler (axon/profiler.h) and of host tasks in stream order
 * (axon/host_task.h). The profiler is checked on every device (copies); host tasks where the
 * device runs them, and elsewhere that they are refused, with a named skip. */
#include <string.h>

#include "axon/host_task.h"
#include "axon/profiler.h"
#include "harness.h"

#define DEV 0
enum { N = 1000 };

/* Doubles n floats in place: runs on the host, in queue order, on the buffer's own memory. */
static void double_in_place(void *args, void *const *ptrs) {
  size_t n = *(const size_t *)args;
  float *x = ptrs[0];
  for (size_t i = 0; i < n; i++) x[i] *= 2.0f;
}

/* Records in enqueue order, each within its own times, after the one before (an in-order
 * queue), with the correlation id and device they were enqueued with. */
static int records_ordered(const axon_profile_record *records, size_t count, uint64_t correlation) {
  int ordered = 1;
  for (size_t i = 0; i < count; i++) {
    ordered &= records[i].start_ns <= records[i].end_ns && records[i].correlation == correlation &&
               records[i].device == DEV;
    if (i) ordered &= records[i - 1].end_ns <= records[i].start_ns + 1000;
  }
  return ordered;
}

/* Every device: a copy there and back is recorded as two copies, with their sizes. */
static void test_profile_copies(axon_stream_t stream, void *dev) {
  float host[N], back[N];
  for (int i = 0; i < N; i++) host[i] = (float)i - 3.5f;
  memset(back, 0, sizeof back);
  CHECK_OK(axon_profiler_start());
  CHECK(axon_profiler_active(), "the profiler records after start");
  axon_profiler_set_correlation(41);
  CHECK_OK(axon_copy_h2d(dev, host, sizeof host, stream, 0));
  CHECK_OK(axon_copy_d2h(back, dev, sizeof back, stream, 1));
  axon_profiler_set_correlation(0);
  axon_profile_record *records = NULL;
  size_t count = 0;
  CHECK_OK(axon_profiler_stop(&records, &count));
  CHECK(!axon_profiler_active(), "stopped");
  CHECK(!memcmp(back, host, sizeof host), "the copies took the data there and back");
  CHECK(count == 2, "two copies recorded (%zu)", count);
  int copies = count == 2;
  for (size_t i = 0; i < count; i++)
    copies &= records[i].kind == AXON_PROFILE_COPY && records[i].bytes == sizeof host;
  CHECK(copies, "both records are copies of %zu bytes", sizeof host);
  CHECK(records_ordered(records, count, 41), "times are ordered, correlation ids and devices kept");
  free(records);
  /* Not recording: nothing is kept. */
  CHECK_OK(axon_copy_h2d(dev, host, sizeof host, stream, 1));
  CHECK_OK(axon_profiler_start());
  CHECK_OK(axon_profiler_stop(&records, &count));
  CHECK(count == 0, "a trace without work has no records (%zu)", count);
  free(records);
}

/* Where the device runs host tasks: one between two copies runs in stream order and is
 * recorded between them. Elsewhere the runtime refuses it. */
static void test_host_task_and_profile(axon_stream_t stream, void *dev) {
  size_t n = N;
  const void *addrs[1] = {dev};
  if (!axon_host_tasks_supported(stream)) {
    CHECK_STATUS(axon_host_task(stream, double_in_place, &n, sizeof n, addrs, 1),
                 AXON_ERROR_UNSUPPORTED);
    SKIP("host tasks in stream order and their profile: device %d runs no native kernels", DEV);
    return;
  }
  float host[N], back[N];
  for (int i = 0; i < N; i++) host[i] = (float)i;
  CHECK_OK(axon_profiler_start());
  axon_profiler_set_correlation(77);
  CHECK_OK(axon_copy_h2d(dev, host, sizeof host, stream, 0));
  CHECK_OK(axon_host_task(stream, double_in_place, &n, sizeof n, addrs, 1));
  CHECK_OK(axon_copy_d2h(back, dev, sizeof back, stream, 1));
  axon_profiler_set_correlation(0);
  axon_profile_record *records = NULL;
  size_t count = 0;
  CHECK_OK(axon_profiler_stop(&records, &count));
  int doubled = 1;
  for (int i = 0; i < N; i++) doubled &= back[i] == 2.0f * (float)i;
  CHECK(doubled, "the host task doubled the buffer between the two copies, in order");
  CHECK(count == 3, "three commands recorded (%zu)", count);
  int kinds_ok = count == 3 && records[0].kind == AXON_PROFILE_COPY &&
                 records[1].kind == AXON_PROFILE_HOST_TASK && records[2].kind == AXON_PROFILE_COPY;
  CHECK(kinds_ok, "copy, host task, copy, in enqueue order");
  CHECK(records_ordered(records, count, 77), "times are ordered, correlation ids and devices kept");
  CHECK(count >= 1 && records[0].bytes == sizeof host, "the copy's size is recorded");
  free(records);
}

int main(void) {
  int count = 0;
  REQUIRE_OK(axon_device_count(&count));
  if (count == 0) {
    SKIP("every test: no device");
    return harness_summary();
  }
  axon_stream_t stream;
  REQUIRE_OK(axon_stream_default(DEV, &stream));
  void *dev = NULL;
  REQUIRE_OK(axon_malloc(DEV, N * sizeof(float), stream, &dev));
  test_profile_copies(stream, dev);
  test_host_task_and_profile(stream, dev);
  CHECK_OK(axon_free(dev));
  return harness_summary();
}
