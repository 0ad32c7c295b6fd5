/* What enqueuing code uses to report its commands to the profiler (profiler.c). */
#ifndef AXON_PROFILER_INTERNAL_H
#define AXON_PROFILER_INTERNAL_H

#include "axon/profiler.h"
#include "internal.h"

/* The event argument for a clEnqueue* call: `slot` while recording, else NULL. */
cl_event *axon_profile_event(cl_event *slot);
/* Files the command that filled `event` (NULL: nothing to file); takes the reference. */
void axon_profile_commit(cl_event event, axon_profile_kind kind, const char *name,
                         axon_stream_t stream, uint64_t bytes);

#endif
