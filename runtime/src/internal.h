/* Shared between libaxon's modules; never installed. */
#ifndef AXON_INTERNAL_H
#define AXON_INTERNAL_H

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <pthread.h>
#include <stdbool.h>

#include "axon/axon.h"
#include "axon/fault.h"

#define AXON_MAX_DEVICES 16

/* Records a failure with a formatted message and returns the status. */
axon_status_t axon_fail(axon_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* For an OpenCL call's result: success passes through, failure names the call. */
#define AXON_CL_CHECK(call, what)                                                                \
  do {                                                                                           \
    cl_int cl_check_err_ = (call);                                                               \
    if (cl_check_err_ != CL_SUCCESS)                                                             \
      return axon_fail(cl_check_err_, "%s failed: %s", (what), axon_status_name(cl_check_err_)); \
  } while (0)
#define AXON_TRY(call)                                   \
  do {                                                   \
    axon_status_t try_status_ = (call);                  \
    if (try_status_ != AXON_SUCCESS) return try_status_; \
  } while (0)

struct axon_program_cache;

typedef struct axon_device {
  int index;
  cl_platform_id platform;
  cl_device_id id;
  cl_context context; /* shared by all devices of a platform, so buffers move freely */
  axon_device_info info;
  struct axon_stream *default_stream;
  struct axon_program_cache *programs;
  struct axon_memory_pool *pool;
  unsigned quirks; /* the driver bugs Axon works around on it (axon_quirk, quirks.h) */
} axon_device;

struct axon_stream {
  axon_device *device;
  cl_command_queue queue;
  uint64_t id;
  struct fused_stream *fused; /* recorded pointwise work (fused/group.c), or NULL */
};

struct axon_event {
  cl_event marker; /* NULL until recorded */
  int device;
};

/* Initialises discovery once; returns the device or fails for a bad index. */
axon_status_t axon_device_get(int index, axon_device **device);
/* A new in-order command queue on the device, with profiling on. */
cl_int axon_device_queue(axon_device *d, cl_command_queue *queue);
axon_status_t axon_stream_resolve(axon_stream_t stream, int device, axon_stream_t *out);

/* Pointwise op `op` launched now as its own kernel (axon_elementwise without fused eager). */
axon_status_t axon_elementwise_now(axon_stream_t stream, axon_pointwise_op op, axon_dtype dtype,
                                   const axon_ew_desc *desc, double alpha, double beta);

/* Memory internals used by copies and launches. */
axon_status_t axon_resolve_mem(const void *ptr, cl_mem *mem, size_t *offset);
/* Creation sequence of the cl_mem behind ptr (native kernels must list buffers in it). */
uint64_t axon_mem_sequence(const void *ptr);
void axon_memory_pool_destroy(struct axon_memory_pool *pool);

/* Embedded kernel sources (generated at build time from the .cl files in kernels/). */
typedef struct axon_embedded_source {
  const char *name;
  const char *text;
} axon_embedded_source;
extern const axon_embedded_source axon_embedded_sources[];

/* Build options common to all kernel families for a dtype: T, its storage and compute
 * types and the loader/storer macros (see kernels/common.cl). */
const char *axon_dtype_macro(axon_dtype dtype);

/* 1 in a process forked after this one's devices were discovered (device.c). The driver's
 * threads and queues do not survive fork: a child that called into OpenCL would wait forever
 * on work no thread runs. Entry points refuse with AXON_ERROR_FORKED instead; frees do
 * nothing (the memory is the parent's, and a lock the fork copied may be held). */
/* Fault injection (fault.c): whether this event of `kind` is the one armed to fail, and the
 * error for it (status as the driver's own failure would give). */
int axon_fault_hit(axon_fault_kind kind);
axon_status_t axon_fault_injected(axon_fault_kind kind, axon_status_t status, const char *what);
#define AXON_FAULT_POINT(kind, status, what)                                  \
  do {                                                                        \
    if (axon_fault_hit(kind)) return axon_fault_injected(kind, status, what); \
  } while (0)

/* Removes damaged entries of PoCL's kernel cache placed in Axon's folder, and records its
 * files at exit (driver_cache.c). */
void axon_driver_cache_check(const char *axon_dir, const char *pocl_dir);

int axon_forked_child(void);
axon_status_t axon_forked_child_error(void);
#define AXON_REFUSE_IN_FORKED_CHILD()                          \
  do {                                                         \
    if (axon_forked_child()) return axon_forked_child_error(); \
  } while (0)

/* Rounds n up to a multiple of m. */
static inline size_t axon_round_up(size_t n, size_t m) {
  return (n + m - 1) / m * m;
}

#endif
