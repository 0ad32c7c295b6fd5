/* Fused eager mode inside the runtime: what the rest of libaxon calls. Every command a stream's
 * queue receives is preceded by axon_fused_settle(stream), so recorded work always runs before
 * anything enqueued after it (kernels, copies, markers, host tasks, waits). */
#ifndef AXON_FUSED_INTERNAL_H
#define AXON_FUSED_INTERNAL_H

#include <stdint.h>

#include "axon/axon.h"

/* Records the pointwise op instead of launching it, when fused eager is on and the op can join
 * the stream's group (a float type, every memory operand one contiguous range, no overlap with the
 * group's operands but an exact one): *recorded is 1. Otherwise the caller launches it (and that
 * launch settles the stream first). Fails when launching the group it ended failed. */
axon_status_t axon_fused_record(axon_stream_t stream, axon_pointwise_op op, axon_dtype dtype,
                                const axon_ew_desc *desc, double alpha, double beta, int *recorded);

/* Launches the stream's recorded group, if any. Cheap when nothing is recorded anywhere. */
axon_status_t axon_fused_settle(axon_stream_t stream);
/* The same for every stream (before device memory goes back to the driver). */
axon_status_t axon_fused_settle_all(void);
/* Whether any stream has recorded work. */
int axon_fused_any_pending(void);

/* Launches the stream's group and frees it (the stream is being destroyed). */
void axon_fused_destroy_stream(axon_stream_t stream);

/* Device memory [addr, addr + size), owned by stream `owner`, is being freed: its writes in the
 * owner's group need not reach memory, and other streams' groups that use it are launched now
 * (their later reuse of it is ordered by markers the allocator enqueues after them). Call
 * without the allocator's lock. */
void axon_fused_before_free(axon_stream_t owner, uintptr_t addr, size_t size);

#endif
