/* Axon runtime: the OpenCL objects Axon holds now (issue 24's soak run watches them for leaks).
 * Counted where Axon creates and releases them; objects the driver or CLBlast create for their
 * own use are not Axon's and are not counted. Programs and kernels are cached for the life of
 * the process by design, so they grow with the set of kernels used, not with the steps run. */
#ifndef AXON_LIVE_OBJECTS_H
#define AXON_LIVE_OBJECTS_H

#include <stdint.h>

#include "axon/axon.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum axon_live_kind {
  AXON_LIVE_BUFFER,  /* cl_mem: the allocator's segments */
  AXON_LIVE_PROGRAM, /* cl_program */
  AXON_LIVE_KERNEL,  /* cl_kernel */
  AXON_LIVE_EVENT,   /* cl_event: markers, profiled commands */
  AXON_LIVE_QUEUE,   /* cl_command_queue: streams */
  AXON_LIVE_KIND_COUNT
} axon_live_kind;

/* Objects of `kind` created and not yet released; 0 for an unknown kind. */
AXON_API int64_t axon_live_objects(axon_live_kind kind);
/* "buffers", "programs", "kernels", "events", "queues"; NULL for an unknown kind. */
AXON_API const char *axon_live_kind_name(axon_live_kind kind);

#ifdef __cplusplus
}
#endif

#endif
