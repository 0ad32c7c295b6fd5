/* Live OpenCL object counts (axon/live_objects.h): one atomic counter per kind, relaxed, since
 * a reader wants a figure, not an ordering with other memory. */
#include "live_objects.h"

#include <stdatomic.h>

static const char *names[AXON_LIVE_KIND_COUNT] = {"buffers", "programs", "kernels", "events",
                                                  "queues"};
static atomic_int_fast64_t live[AXON_LIVE_KIND_COUNT];

void axon_live_add(axon_live_kind kind, int delta) {
  atomic_fetch_add_explicit(&live[kind], delta, memory_order_relaxed);
}

int64_t axon_live_objects(axon_live_kind kind) {
  if ((unsigned)kind >= AXON_LIVE_KIND_COUNT) return 0;
  return (int64_t)atomic_load_explicit(&live[kind], memory_order_relaxed);
}

const char *axon_live_kind_name(axon_live_kind kind) {
  return (unsigned)kind < AXON_LIVE_KIND_COUNT ? names[kind] : NULL;
}
