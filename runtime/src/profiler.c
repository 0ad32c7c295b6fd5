/*
 * Device-side profiling (axon/profiler.h). Enqueuing code asks axon_profile_event() for an
 * event slot: NULL while not recording (no cost beyond one atomic load), else a slot that
 * clEnqueue* fills; axon_profile_commit() then files it with its name and correlation id.
 */
#include "axon/profiler.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "live_objects.h"
#include "profiler_internal.h"

typedef struct pending {
  axon_profile_record record;
  cl_event event;
} pending;

static atomic_int recording;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pending *items;
static size_t count, capacity;
/* Per device: realtime_ns - device_timer_ns, measured at start. */
static int64_t *clock_offset;
static int device_total;
static _Thread_local uint64_t correlation;

static int64_t realtime_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A marker's completion time on the device timer against the host clock right after the
 * wait returns: the offset is exact to within the wait's wake-up latency (tens of us). */
static axon_status_t calibrate(int device, int64_t *offset) {
  axon_stream_t stream;
  AXON_TRY(axon_stream_default(device, &stream));
  cl_event marker;
  AXON_CL_CHECK(clEnqueueMarkerWithWaitList(stream->queue, 0, NULL, &marker), "profiler marker");
  axon_live_add(AXON_LIVE_EVENT, 1);
  cl_int err = clWaitForEvents(1, &marker);
  int64_t host = realtime_ns();
  cl_ulong end = 0;
  if (err == CL_SUCCESS)
    err = clGetEventProfilingInfo(marker, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
  clReleaseEvent(marker);
  axon_live_add(AXON_LIVE_EVENT, -1);
  if (err != CL_SUCCESS)
    return axon_fail(err, "profiler: reading the device timer failed: %s", axon_status_name(err));
  *offset = host - (int64_t)end;
  return AXON_SUCCESS;
}

static void drop_pending(void) {
  for (size_t i = 0; i < count; i++) clReleaseEvent(items[i].event);
  axon_live_add(AXON_LIVE_EVENT, -(int)count);
  count = 0;
}

axon_status_t axon_profiler_start(void) {
  int n;
  AXON_TRY(axon_device_count(&n));
  int64_t *offsets = calloc(n > 0 ? (size_t)n : 1, sizeof *offsets);
  if (!offsets) return axon_fail(AXON_ERROR_OUT_OF_MEMORY, "profiler: no host memory");
  for (int d = 0; d < n; d++) {
    axon_status_t st = calibrate(d, &offsets[d]);
    if (st != AXON_SUCCESS) {
      free(offsets);
      return st;
    }
  }
  pthread_mutex_lock(&lock);
  drop_pending();
  free(clock_offset);
  clock_offset = offsets;
  device_total = n;
  atomic_store(&recording, 1);
  pthread_mutex_unlock(&lock);
  return AXON_SUCCESS;
}

int axon_profiler_active(void) {
  return atomic_load_explicit(&recording, memory_order_relaxed);
}

void axon_profiler_set_correlation(uint64_t id) {
  correlation = id;
}

cl_event *axon_profile_event(cl_event *slot) {
  *slot = NULL;
  return axon_profiler_active() ? slot : NULL;
}

/* Room for one more pending command (lock held). */
static int reserve_one(void) {
  if (count < capacity) return 1;
  size_t grown_capacity = capacity ? 2 * capacity : 256;
  pending *grown = realloc(items, grown_capacity * sizeof *items);
  if (!grown) return 0;
  items = grown;
  capacity = grown_capacity;
  return 1;
}

void axon_profile_commit(cl_event event, axon_profile_kind kind, const char *name,
                         axon_stream_t stream, uint64_t bytes) {
  if (!event) return;
  axon_live_add(AXON_LIVE_EVENT, 1); /* the enqueue that filled the slot created it */
  pthread_mutex_lock(&lock);
  if (!axon_profiler_active() || !reserve_one()) {
    /* Stopped meanwhile, or out of host memory: this command goes unrecorded. */
    pthread_mutex_unlock(&lock);
    clReleaseEvent(event);
    axon_live_add(AXON_LIVE_EVENT, -1);
    return;
  }
  pending *p = &items[count++];
  memset(p, 0, sizeof *p);
  snprintf(p->record.name, sizeof p->record.name, "%s", name);
  p->record.kind = kind;
  p->record.device = stream->device->index;
  p->record.stream = stream->id;
  p->record.correlation = correlation;
  p->record.bytes = bytes;
  p->event = event;
  pthread_mutex_unlock(&lock);
}

axon_status_t axon_profiler_stop(axon_profile_record **records, size_t *n) {
  if (!records || !n) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "profiler: NULL argument");
  pthread_mutex_lock(&lock);
  atomic_store(&recording, 0);
  axon_profile_record *out = malloc((count ? count : 1) * sizeof *out);
  axon_status_t st =
      out ? AXON_SUCCESS : axon_fail(AXON_ERROR_OUT_OF_MEMORY, "profiler: no host memory");
  size_t kept = 0;
  for (size_t i = 0; st == AXON_SUCCESS && i < count; i++) {
    cl_ulong start = 0, end = 0;
    cl_int err = clWaitForEvents(1, &items[i].event);
    if (err == CL_SUCCESS)
      err = clGetEventProfilingInfo(items[i].event, CL_PROFILING_COMMAND_START, sizeof start,
                                    &start, NULL);
    if (err == CL_SUCCESS)
      err =
          clGetEventProfilingInfo(items[i].event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
    if (err != CL_SUCCESS) continue; /* a failed command has no times: leave it out */
    int d = items[i].record.device;
    int64_t offset = d < device_total ? clock_offset[d] : 0;
    out[kept] = items[i].record;
    out[kept].start_ns = (int64_t)start + offset;
    out[kept].end_ns = (int64_t)end + offset;
    kept++;
  }
  drop_pending();
  pthread_mutex_unlock(&lock);
  if (st != AXON_SUCCESS) return st;
  *records = out;
  *n = kept;
  return AXON_SUCCESS;
}
