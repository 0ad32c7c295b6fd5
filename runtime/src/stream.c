/* Streams are in-order command queues; events are marker commands on them. */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "fused/fused.h"
#include "internal.h"
#include "live_objects.h"

/* After the default streams' ids (device.c). */
static atomic_uint_fast64_t next_stream_id = AXON_MAX_DEVICES + 1;

axon_status_t axon_stream_create(int device, axon_stream_t *stream) {
  axon_device *d;
  AXON_TRY(axon_device_get(device, &d));
  cl_command_queue q;
  cl_int err = axon_device_queue(d, &q);
  if (err != CL_SUCCESS)
    return axon_fail(err, "clCreateCommandQueue failed: %s", axon_status_name(err));
  struct axon_stream *s = calloc(1, sizeof *s);
  if (!s) {
    clReleaseCommandQueue(q);
    axon_live_add(AXON_LIVE_QUEUE, -1);
    return axon_fail(CL_OUT_OF_HOST_MEMORY, "out of host memory creating a stream");
  }
  s->device = d;
  s->queue = q;
  s->id = atomic_fetch_add(&next_stream_id, 1);
  *stream = s;
  return AXON_SUCCESS;
}

axon_status_t axon_stream_default(int device, axon_stream_t *stream) {
  axon_device *d;
  AXON_TRY(axon_device_get(device, &d));
  *stream = d->default_stream;
  return AXON_SUCCESS;
}

axon_status_t axon_stream_destroy(axon_stream_t s) {
  AXON_REFUSE_IN_FORKED_CHILD();
  if (!s) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "axon_stream_destroy: NULL stream");
  if (s == s->device->default_stream)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "the default stream cannot be destroyed");
  axon_fused_destroy_stream(s);
  clFinish(s->queue);
  clReleaseCommandQueue(s->queue);
  axon_live_add(AXON_LIVE_QUEUE, -1);
  free(s);
  return AXON_SUCCESS;
}

axon_status_t axon_stream_resolve(axon_stream_t stream, int device, axon_stream_t *out) {
  AXON_REFUSE_IN_FORKED_CHILD();
  if (stream) {
    *out = stream;
    return AXON_SUCCESS;
  }
  return axon_stream_default(device, out);
}

int axon_stream_device(axon_stream_t s) {
  return s ? s->device->index : -1;
}
uint64_t axon_stream_id(axon_stream_t s) {
  return s ? s->id : 0;
}

axon_status_t axon_stream_sync(axon_stream_t s) {
  AXON_REFUSE_IN_FORKED_CHILD();
  if (!s) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "axon_stream_sync: NULL stream");
  AXON_TRY(axon_fused_settle(s));
  AXON_CL_CHECK(clFinish(s->queue), "clFinish (an earlier asynchronous operation failed)");
  return AXON_SUCCESS;
}

axon_status_t axon_stream_query(axon_stream_t s, int *done) {
  AXON_REFUSE_IN_FORKED_CHILD();
  AXON_TRY(axon_fused_settle(s));
  cl_event marker;
  AXON_CL_CHECK(clEnqueueMarkerWithWaitList(s->queue, 0, NULL, &marker), "enqueue marker");
  axon_live_add(AXON_LIVE_EVENT, 1);
  clFlush(s->queue);
  /* The marker completes asynchronously even on an idle queue (PoCL takes tens of
   * microseconds), so poll it for up to a millisecond before answering "not done". */
  cl_int status = CL_QUEUED, err;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    err = clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    if (err != CL_SUCCESS || status <= CL_COMPLETE) break;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > 1000000L) break;
    sched_yield();
  }
  clReleaseEvent(marker);
  axon_live_add(AXON_LIVE_EVENT, -1);
  AXON_CL_CHECK(err, "query stream");
  *done = status == CL_COMPLETE;
  return AXON_SUCCESS;
}

axon_status_t axon_device_sync(int device) {
  axon_device *d;
  AXON_TRY(axon_device_get(device, &d));
  return axon_stream_sync(d->default_stream);
}

axon_status_t axon_event_create(axon_event_t *event) {
  struct axon_event *e = calloc(1, sizeof *e);
  if (!e) return axon_fail(CL_OUT_OF_HOST_MEMORY, "out of host memory creating an event");
  e->device = -1;
  *event = e;
  return AXON_SUCCESS;
}

axon_status_t axon_event_destroy(axon_event_t e) {
  if (!e) return AXON_SUCCESS;
  if (e->marker && !axon_forked_child()) {
    clReleaseEvent(e->marker);
    axon_live_add(AXON_LIVE_EVENT, -1);
  }
  free(e);
  return AXON_SUCCESS;
}

axon_status_t axon_event_record(axon_event_t e, axon_stream_t s) {
  AXON_REFUSE_IN_FORKED_CHILD();
  if (!e || !s) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "axon_event_record: NULL argument");
  AXON_TRY(axon_fused_settle(s));
  cl_event marker;
  AXON_CL_CHECK(clEnqueueMarkerWithWaitList(s->queue, 0, NULL, &marker), "record event");
  axon_live_add(AXON_LIVE_EVENT, 1);
  clFlush(s->queue);
  if (e->marker) {
    clReleaseEvent(e->marker);
    axon_live_add(AXON_LIVE_EVENT, -1);
  }
  e->marker = marker;
  e->device = s->device->index;
  return AXON_SUCCESS;
}

axon_status_t axon_stream_wait_event(axon_stream_t waiter, axon_event_t e) {
  AXON_REFUSE_IN_FORKED_CHILD();
  if (!waiter || !e)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "axon_stream_wait_event: NULL argument");
  if (!e->marker) return AXON_SUCCESS; /* never recorded: nothing to wait for */
  AXON_TRY(axon_fused_settle(waiter)); /* its recorded work keeps its place before the wait */
  AXON_CL_CHECK(clEnqueueBarrierWithWaitList(waiter->queue, 1, &e->marker, NULL),
                "enqueue barrier");
  return AXON_SUCCESS;
}

axon_status_t axon_event_query(axon_event_t e, int *done) {
  AXON_REFUSE_IN_FORKED_CHILD();
  *done = 1;
  if (!e || !e->marker) return AXON_SUCCESS;
  cl_int status = CL_COMPLETE;
  AXON_CL_CHECK(
      clGetEventInfo(e->marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL),
      "query event");
  if (status < 0) return axon_fail(status, "an operation before the event failed");
  *done = status == CL_COMPLETE;
  return AXON_SUCCESS;
}

axon_status_t axon_event_sync(axon_event_t e) {
  AXON_REFUSE_IN_FORKED_CHILD();
  if (!e || !e->marker) return AXON_SUCCESS;
  AXON_CL_CHECK(clWaitForEvents(1, &e->marker), "wait for event");
  return AXON_SUCCESS;
}

static axon_status_t event_time(axon_event_t e, cl_ulong *ns) {
  if (!e || !e->marker)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "elapsed time needs two recorded events");
  AXON_CL_CHECK(clWaitForEvents(1, &e->marker), "wait for event");
  AXON_CL_CHECK(clGetEventProfilingInfo(e->marker, CL_PROFILING_COMMAND_END, sizeof *ns, ns, NULL),
                "event profiling info");
  return AXON_SUCCESS;
}

axon_status_t axon_event_elapsed_ms(axon_event_t start, axon_event_t end, float *ms) {
  AXON_REFUSE_IN_FORKED_CHILD();
  cl_ulong a, b;
  AXON_TRY(event_time(start, &a));
  AXON_TRY(event_time(end, &b));
  *ms = (float)((double)((int64_t)(b - a)) / 1e6);
  return AXON_SUCCESS;
}
