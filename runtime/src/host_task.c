/*
 * Host tasks in stream order (see axon/host_task.h). clEnqueueNativeKernel copies one
 * argument block and replaces the cl_mem handles inside it by the buffers' host addresses.
 * PoCL (3.1) has two quirks the block layout works around (docs/device-limits.md):
 *  - it fills the k-th distinct buffer, in creation order, into the k-th location, whatever
 *    pairing is passed: the buffers are listed sorted by creation sequence;
 *  - a buffer listed twice breaks the substitution: each buffer is listed once, and every
 *    address refers to its buffer by slot plus a byte offset (sub-buffers arrive as their
 *    parent's base address anyway, which device addresses account for).
 */
#include "axon/host_task.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "fused/fused.h"
#include "internal.h"
#include "profiler_internal.h"

/* The block the driver copies; the caller's arguments follow it (max-aligned). */
typedef struct host_task_block {
  axon_host_fn fn;
  void *mems[AXON_HOST_TASK_MAX_PTRS]; /* replaced by host addresses, creation order */
  int slot[AXON_HOST_TASK_MAX_PTRS];   /* which mems[] entry each address uses; -1: NULL */
  size_t offset[AXON_HOST_TASK_MAX_PTRS];
  int naddrs;
  alignas(max_align_t) unsigned char args[];
} host_task_block;

static void CL_CALLBACK run_host_task(void *p) {
  host_task_block *b = p;
  void *ptrs[AXON_HOST_TASK_MAX_PTRS];
  for (int i = 0; i < b->naddrs; i++)
    ptrs[i] = b->slot[i] < 0 ? NULL : (char *)b->mems[b->slot[i]] + b->offset[i];
  b->fn(b->args, ptrs);
}

int axon_host_tasks_supported(axon_stream_t stream) {
  axon_device_info info;
  if (!stream || axon_device_get_info(axon_stream_device(stream), &info) != AXON_SUCCESS) return 0;
  return info.is_cpu && info.native_kernels;
}

axon_status_t axon_host_task(axon_stream_t stream, axon_host_fn fn, const void *args,
                             size_t args_size, const void *const *addrs, int naddrs) {
  if (!stream || !fn || (args_size && !args) || (naddrs && !addrs) || naddrs < 0)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "host task: NULL or negative argument");
  if (naddrs > AXON_HOST_TASK_MAX_PTRS)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "host task: %d addresses (at most %d)", naddrs,
                     AXON_HOST_TASK_MAX_PTRS);
  if (!axon_host_tasks_supported(stream))
    return axon_fail(AXON_ERROR_UNSUPPORTED, "host tasks need a CPU device with native kernels");
  AXON_TRY(axon_fused_settle(stream)); /* recorded pointwise work runs first */
  size_t size = sizeof(host_task_block) + args_size;
  host_task_block *b = calloc(1, size);
  if (!b) return axon_fail(AXON_ERROR_OUT_OF_MEMORY, "host task: %zu bytes", size);
  b->fn = fn;
  b->naddrs = naddrs;
  if (args_size) memcpy(b->args, args, args_size);
  cl_mem mems[AXON_HOST_TASK_MAX_PTRS];
  uint64_t seq[AXON_HOST_TASK_MAX_PTRS];
  int nmem = 0;
  axon_status_t st = AXON_SUCCESS;
  for (int i = 0; i < naddrs && st == AXON_SUCCESS; i++) {
    b->slot[i] = -1;
    if (!addrs[i]) continue;
    cl_mem mem;
    st = axon_resolve_mem(addrs[i], &mem, &b->offset[i]);
    if (st != AXON_SUCCESS) break;
    uint64_t s = axon_mem_sequence(addrs[i]);
    int at = 0;
    while (at < nmem && seq[at] < s) at++;
    if (at < nmem && mems[at] == mem) continue;
    memmove(&mems[at + 1], &mems[at], (size_t)(nmem - at) * sizeof *mems);
    memmove(&seq[at + 1], &seq[at], (size_t)(nmem - at) * sizeof *seq);
    mems[at] = mem;
    seq[at] = s;
    nmem++;
  }
  /* Slots once the order is final. */
  for (int i = 0; i < naddrs && st == AXON_SUCCESS; i++) {
    if (!addrs[i]) continue;
    cl_mem mem;
    size_t off;
    axon_resolve_mem(addrs[i], &mem, &off);
    for (int k = 0; k < nmem; k++)
      if (mems[k] == mem) b->slot[i] = k;
  }
  const void *locs[AXON_HOST_TASK_MAX_PTRS];
  for (int k = 0; k < nmem; k++) locs[k] = &b->mems[k];
  if (st == AXON_SUCCESS) {
    cl_event event;
    cl_int err = clEnqueueNativeKernel(stream->queue, run_host_task, b, size, (cl_uint)nmem,
                                       nmem ? mems : NULL, nmem ? locs : NULL, 0, NULL,
                                       axon_profile_event(&event));
    if (err != CL_SUCCESS)
      st = axon_fail(err, "clEnqueueNativeKernel (host task) failed: %s", axon_status_name(err));
    else
      axon_profile_commit(event, AXON_PROFILE_HOST_TASK, "host BLAS/LAPACK", stream, 0);
  }
  free(b);
  return st;
}
