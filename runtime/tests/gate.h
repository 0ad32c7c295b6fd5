/* Holding a stream back, so that ordering tests do not depend on timing. Uses the runtime's
 * internals (the stream's queue and context), which only tests may. */
#ifndef AXON_TESTS_GATE_H
#define AXON_TESTS_GATE_H

#include "internal.h"

/* A gate: work queued on `stream` after gate_close() waits until gate_open(). */
static cl_event gate_close(axon_stream_t stream) {
  cl_int err;
  cl_event user = clCreateUserEvent(stream->device->context, &err);
  if (!user) return NULL;
  if (clEnqueueMarkerWithWaitList(stream->queue, 1, &user, NULL) != CL_SUCCESS) {
    clSetUserEventStatus(user, CL_COMPLETE);
    clReleaseEvent(user);
    return NULL;
  }
  clFlush(stream->queue);
  return user;
}
static void gate_open(cl_event user) {
  clSetUserEventStatus(user, CL_COMPLETE);
  clReleaseEvent(user);
}

#endif
