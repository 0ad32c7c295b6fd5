/* Fused eager mode (docs/fused-eager.md): pointwise ops of the pointwise table recorded per
 * stream instead of launched, and launched as one generated kernel when anything needs their
 * results. Results are those of the unfused kernels, bit for bit. */
#ifndef AXON_PUBLIC_FUSED_H
#define AXON_PUBLIC_FUSED_H

#include "axon/axon.h"

#ifdef __cplusplus
extern "C" {
#endif

/* On or off for the whole process. On by default; AXON_FUSED_EAGER=0 turns it off at start.
 * Turning it off launches whatever is recorded. */
AXON_API axon_status_t axon_fused_eager_set(int on);
AXON_API int axon_fused_eager_enabled(void);

/* Returns once every fused kernel being built in the background is built (tests and benchmarks
 * that need the fused launches from a known step on). */
AXON_API void axon_fused_wait_builds(void);

/* Stops building fused kernels for the rest of the process: the build in flight is waited for,
 * queued and later ones are dropped (their groups run op by op). Call it before the process
 * exits (torch_axon does, from Python's exit): a build still running while the exit handlers of
 * the driver's compiler run uses destroyed objects. */
AXON_API void axon_fused_stop_builds(void);

/* Counters since the process started (or the last reset). */
typedef struct axon_fused_stats {
  uint64_t ops_recorded;    /* pointwise ops taken into a group */
  uint64_t groups_fused;    /* groups launched as one generated kernel */
  uint64_t ops_fused;       /* the ops of those groups */
  uint64_t groups_unfused;  /* groups launched op by op (kernel not built yet, or one op) */
  uint64_t kernels_built;   /* generated programs built (or loaded from the disk cache) */
  uint64_t kernels_evicted; /* programs discarded to make room (AXON_FUSED_MAX_KERNELS) */
  uint64_t stores_skipped;  /* outputs never written: their memory was freed before launch */
} axon_fused_stats;
AXON_API void axon_fused_stats_get(axon_fused_stats *stats, int reset);

#ifdef __cplusplus
}
#endif

#endif
