/* Axon runtime: host tasks inside a stream (see axon.h for the conventions).
 *
 * On CPU-class devices that run native kernels (PoCL), a host function can run in stream
 * order on the buffers' own memory: clEnqueueNativeKernel replaces each buffer by its host
 * address, so nothing is copied and the task sees every earlier command's results. Host BLAS
 * and LAPACK run this way (ops/gemm.c, ops/linalg.c). Other devices cannot run host tasks;
 * callers choose another path there (axon_host_tasks_supported). */
#ifndef AXON_HOST_TASK_H
#define AXON_HOST_TASK_H

#include "axon/axon.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most device addresses one task may receive. */
#define AXON_HOST_TASK_MAX_PTRS 16

/* The task: `args` is the task's own copy of the argument block; ptrs[i] is the host address
 * of the i-th device address given at enqueue time (NULL where that address was NULL). */
typedef void (*axon_host_fn)(void *args, void *const *ptrs);

/* Whether the stream's device runs host tasks (a CPU device with CL_EXEC_NATIVE_KERNEL). */
AXON_API int axon_host_tasks_supported(axon_stream_t stream);

/* Enqueues fn on the stream. args (args_size bytes, may be 0) is copied at once; addrs are
 * device addresses (possibly inside one buffer, or NULL for unused slots), at most
 * AXON_HOST_TASK_MAX_PTRS of them. Fails with AXON_ERROR_UNSUPPORTED where the device runs no
 * host tasks. */
AXON_API axon_status_t axon_host_task(axon_stream_t stream, axon_host_fn fn, const void *args,
                                      size_t args_size, const void *const *addrs, int naddrs);

#ifdef __cplusplus
}
#endif

#endif
