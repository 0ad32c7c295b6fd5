/* Axon runtime: fault injection, for testing that every failure of the driver surfaces as an
 * error the caller can handle (issue 24). The N-th event of a kind fails as the driver's own
 * failure would, with a message that says it was injected; counting starts when armed.
 *
 * AXON_FAULTS="alloc:3,launch:120" arms at start-up (the 3rd device allocation, the 120th
 * kernel enqueue); axon_fault_arm arms from a test. Kinds: alloc (axon_malloc), build (a
 * program build from source, disk-cache loads excepted), launch (a kernel enqueue), copy (a
 * host<->device or device<->device copy), collective (a collective or point-to-point operation
 * the c10d backend starts, csrc/distributed/backend.cpp). */
#ifndef AXON_FAULT_H
#define AXON_FAULT_H

#include <stdint.h>

#include "axon/axon.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum axon_fault_kind {
  AXON_FAULT_ALLOC,
  AXON_FAULT_BUILD,
  AXON_FAULT_LAUNCH,
  AXON_FAULT_COPY,
  AXON_FAULT_COLLECTIVE,
  AXON_FAULT_KIND_COUNT
} axon_fault_kind;

/* Makes the n-th event of `kind` from now fail once (n = 0 disarms); the kind's count restarts. */
AXON_API axon_status_t axon_fault_arm(axon_fault_kind kind, uint64_t n);
/* Events of `kind` since it was last armed (or since start-up): what a sweep ranges over. */
AXON_API uint64_t axon_fault_count(axon_fault_kind kind);
/* "alloc", "build", "launch", "copy", "collective"; NULL for an unknown kind. */
AXON_API const char *axon_fault_kind_name(axon_fault_kind kind);
/* A fault point outside the runtime (the c10d backend's collectives live in the C++ glue): counts
 * an event of `kind`; for the armed one, sets the error "`what` failed: ... (injected fault ...)"
 * (axon_last_error) and returns `status`. AXON_SUCCESS otherwise. */
AXON_API axon_status_t axon_fault_point(axon_fault_kind kind, axon_status_t status,
                                        const char *what);

#ifdef __cplusplus
}
#endif

#endif
