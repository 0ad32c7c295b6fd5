/* Tests of host tasks in stream order and of the device-side profiler (axon/host_task.h,
 * axon/profiler.h). */
#include <string.h>

#include "axon/host_task.h"
#include "axon/profiler.h"
#include "harness.h"

#define DEV 0

/* Doubles n floats in place: runs on the host, in queue order, on the buffer's own memory. */
static void double_in_place(void *args, void *const *ptrs) {
  size_t n = *(const size_t *)args;
  float *x = ptrs[0];
  for (size_t i = 0; i < n; i++) x[i] *= 2.0f;
}

static void test_host_task_and_profile(void) {
  axon_stream_t stream;
  if (!CHECK_OK(axon_stream_default(DEV, &stream))) return;
  if (!axon_host_tasks_supported(stream)) {
    printf("# skipping host tasks: the device runs no native kernels\n");
    return;
  }
  enum { N = 1000 };
  float host[N], back[N];
  for (int i = 0; i < N; i++) host[i] = (float)i;
  void *dev = NULL;
  if (!CHECK_OK(axon_malloc(DEV, sizeof host, stream, &dev))) return;
  CHECK_OK(axon_profiler_start());
  CHECK(axon_profiler_active(), "the profiler records after start");
  axon_profiler_set_correlation(77);
  CHECK_OK(axon_copy_h2d(dev, host, sizeof host, stream, 0));
  size_t n = N;
  const void *addrs[1] = {dev};
  CHECK_OK(axon_host_task(stream, double_in_place, &n, sizeof n, addrs, 1));
  CHECK_OK(axon_copy_d2h(back, dev, sizeof back, stream, 1));
  axon_profiler_set_correlation(0);
  axon_profile_record *records = NULL;
  size_t count = 0;
  CHECK_OK(axon_profiler_stop(&records, &count));
  CHECK(!axon_profiler_active(), "stopped");
  int doubled = 1;
  for (int i = 0; i < N; i++) doubled &= back[i] == 2.0f * (float)i;
  CHECK(doubled, "the host task doubled the buffer between the two copies, in order");
  CHECK(count == 3, "three commands recorded (%zu)", count);
  int kinds_ok = count == 3 && records[0].kind == AXON_PROFILE_COPY &&
                 records[1].kind == AXON_PROFILE_HOST_TASK && records[2].kind == AXON_PROFILE_COPY;
  CHECK(kinds_ok, "copy, host task, copy, in enqueue order");
  int ordered = 1;
  for (size_t i = 0; i < count; i++) {
    ordered &= records[i].start_ns <= records[i].end_ns && records[i].correlation == 77 &&
               records[i].device == DEV;
    if (i) ordered &= records[i - 1].end_ns <= records[i].start_ns + 1000; /* in-order queue */
  }
  CHECK(ordered, "times are ordered, correlation ids and devices kept");
  CHECK(count >= 1 && records[0].bytes == sizeof host, "the copy's size is recorded");
  free(records);
  /* Not recording: nothing is kept. */
  CHECK_OK(axon_copy_h2d(dev, host, sizeof host, stream, 1));
  CHECK_OK(axon_profiler_start());
  CHECK_OK(axon_profiler_stop(&records, &count));
  CHECK(count == 0, "a trace without work has no records (%zu)", count);
  free(records);
  CHECK_OK(axon_free(dev));
}

int main(void) {
  int count = 0;
  REQUIRE_OK(axon_device_count(&count));
  test_host_task_and_profile();
  return harness_summary();
}
