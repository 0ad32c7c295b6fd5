/* Axon runtime: device-side profiling of kernels, copies and host tasks (see axon.h for the
 * conventions). While recording, every command the runtime enqueues keeps its OpenCL event;
 * stopping waits for them and turns their CL_PROFILING_COMMAND_START / END into records on
 * the host's realtime clock (nanoseconds since the epoch, the clock PyTorch's profiler uses). */
#ifndef AXON_PROFILER_H
#define AXON_PROFILER_H

#include "axon/axon.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum axon_profile_kind {
  AXON_PROFILE_KERNEL,
  AXON_PROFILE_COPY,
  AXON_PROFILE_HOST_TASK
} axon_profile_kind;

typedef struct axon_profile_record {
  char name[64]; /* kernel name, or "copy host->device" ... */
  axon_profile_kind kind;
  int device;
  uint64_t stream;      /* axon_stream_id */
  uint64_t correlation; /* the enqueuing thread's correlation id (0: none) */
  uint64_t bytes;       /* copies: bytes moved */
  int64_t start_ns, end_ns;
} axon_profile_record;

/* Starts recording (clears earlier records); calibrates each device's timer. */
AXON_API axon_status_t axon_profiler_start(void);
/* Stops recording and waits for the recorded commands; then *records (caller frees with
 * free()) holds *count records in enqueue order. */
AXON_API axon_status_t axon_profiler_stop(axon_profile_record **records, size_t *count);
AXON_API int axon_profiler_active(void);
/* The id later enqueues of the calling thread are attributed to (the framework's op). */
AXON_API void axon_profiler_set_correlation(uint64_t id);

#ifdef __cplusplus
}
#endif

#endif
