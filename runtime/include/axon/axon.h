/*
 * libaxon: the C11 runtime under Axon's PyTorch device.
 *
 * Device memory is handed out as *device addresses*: pointers into a reserved, inaccessible
 * range of host address space. Each resolves to (cl_mem, byte offset), which is what kernels
 * receive, so callers may do pointer arithmetic on them exactly as on CUDA pointers.
 *
 * Every function returns an axon_status_t. OpenCL's own codes are kept as they are (all
 * negative, -1 .. -72 and vendor codes); Axon's own live from AXON_ERROR_BASE downwards.
 * After a failure axon_last_error() returns a message with context (operation, sizes, build
 * log). Nothing in the library aborts or exits.
 */
#ifndef AXON_AXON_H
#define AXON_AXON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define AXON_API __attribute__((visibility("default")))
#else
#define AXON_API
#endif

/* ---- status ---------------------------------------------------------------------------- */

typedef int axon_status_t;

enum {
  AXON_SUCCESS = 0,
  AXON_ERROR_BASE = -10000,
  AXON_ERROR_OUT_OF_MEMORY = -10001,
  AXON_ERROR_INVALID_ARGUMENT = -10002,
  AXON_ERROR_INVALID_POINTER = -10003, /* not a live device address */
  AXON_ERROR_NO_DEVICE = -10004,
  AXON_ERROR_UNSUPPORTED_DTYPE = -10005, /* e.g. float64 without cl_khr_fp64 */
  AXON_ERROR_BUILD_FAILED = -10006,      /* message holds the build log */
  AXON_ERROR_IO = -10007,
  AXON_ERROR_UNSUPPORTED = -10008,
};

/* Message of the last failure on this thread ("" if none). Valid until the next failure. */
AXON_API const char *axon_last_error(void);
/* Symbolic name of a status: "CL_OUT_OF_RESOURCES", "AXON_ERROR_OUT_OF_MEMORY", ... */
AXON_API const char *axon_status_name(axon_status_t status);

/* ---- dtypes ---------------------------------------------------------------------------- */

/* Numbering is Axon's own; the glue maps torch's ScalarType onto it. */
typedef enum axon_dtype {
  AXON_F32 = 0,
  AXON_F64,
  AXON_F16,
  AXON_BF16,
  AXON_I64,
  AXON_I32,
  AXON_I16,
  AXON_I8,
  AXON_U8,
  AXON_BOOL,
  AXON_DTYPE_COUNT
} axon_dtype;

AXON_API size_t axon_dtype_size(axon_dtype dtype);
AXON_API const char *axon_dtype_name(axon_dtype dtype);

/* ---- devices --------------------------------------------------------------------------- */

/*
 * Devices are discovered across all OpenCL platforms at the first call. AXON_DEVICES selects
 * and orders them: a comma-separated list of "P:D" (platform, device index), "cpu", "gpu",
 * "accelerator" or "all" (the default: GPUs and accelerators first, then CPUs).
 */
typedef struct axon_device_info {
  char name[256];
  char vendor[128];
  char driver_version[128];
  char platform_name[128];
  char platform_version[128];
  char opencl_c_version[64];
  uint64_t global_mem_bytes;
  uint64_t max_alloc_bytes;
  uint64_t local_mem_bytes;
  uint32_t compute_units;
  uint32_t max_work_group_size;
  int is_cpu;         /* CL_DEVICE_TYPE_CPU */
  int has_fp64;       /* cl_khr_fp64 */
  int has_fp16;       /* cl_khr_fp16 (half is a storage type either way) */
  int native_kernels; /* CL_EXEC_NATIVE_KERNEL: host BLAS can run inside the queue */
  char extensions[2048];
} axon_device_info;

AXON_API axon_status_t axon_device_count(int *count);
AXON_API axon_status_t axon_device_get_info(int device, axon_device_info *info);
/* Whether a dtype is usable on the device (float64 needs cl_khr_fp64). */
AXON_API int axon_device_supports_dtype(int device, axon_dtype dtype);

/* ---- streams and events ---------------------------------------------------------------- */

typedef struct axon_stream *axon_stream_t;
typedef struct axon_event *axon_event_t;

/* Each device has a default stream (never destroyed) and may create more. */
AXON_API axon_status_t axon_stream_default(int device, axon_stream_t *stream);
AXON_API axon_status_t axon_stream_create(int device, axon_stream_t *stream);
AXON_API axon_status_t axon_stream_destroy(axon_stream_t stream);
AXON_API int axon_stream_device(axon_stream_t stream);
AXON_API uint64_t axon_stream_id(axon_stream_t stream); /* unique within the process */
AXON_API axon_status_t axon_stream_sync(axon_stream_t stream);
AXON_API axon_status_t axon_stream_query(axon_stream_t stream, int *done);
/* Later work on `waiter` starts only after `event` completes. */
AXON_API axon_status_t axon_stream_wait_event(axon_stream_t waiter, axon_event_t event);
AXON_API axon_status_t axon_device_sync(int device);

AXON_API axon_status_t axon_event_create(axon_event_t *event);
AXON_API axon_status_t axon_event_destroy(axon_event_t event);
AXON_API axon_status_t axon_event_record(axon_event_t event, axon_stream_t stream);
/* done = 1 when complete or never recorded. */
AXON_API axon_status_t axon_event_query(axon_event_t event, int *done);
AXON_API axon_status_t axon_event_sync(axon_event_t event);
/* Milliseconds between two recorded events. */
AXON_API axon_status_t axon_event_elapsed_ms(axon_event_t start, axon_event_t end, float *ms);

/* ---- memory ---------------------------------------------------------------------------- */

typedef struct axon_memory_stats {
  uint64_t allocated_bytes, allocated_peak;
  uint64_t reserved_bytes, reserved_peak; /* held in cl_mem segments, cached included */
  uint64_t alloc_count, free_count;
  uint64_t segment_count, oom_count;
  uint64_t limit_bytes;
} axon_memory_stats;

/*
 * Allocates `size` bytes for use on `stream`. size 0 gives *ptr = NULL. On exhaustion the
 * cache is emptied and the allocation retried once; then AXON_ERROR_OUT_OF_MEMORY with
 * the requested, allocated, reserved and limit figures in the message.
 * AXON_MEMORY_LIMIT (bytes, or with a K/M/G suffix) caps reserved memory per device.
 */
AXON_API axon_status_t axon_malloc(int device, size_t size, axon_stream_t stream, void **ptr);
AXON_API axon_status_t axon_free(void *ptr);
/* The block will not be reused until work queued on `stream` so far has finished. */
AXON_API axon_status_t axon_record_stream(void *ptr, axon_stream_t stream);
AXON_API axon_status_t axon_empty_cache(int device);
AXON_API axon_status_t axon_memory_stats_get(int device, axon_memory_stats *stats);
AXON_API axon_status_t axon_memory_reset_peak(int device);
AXON_API axon_status_t axon_memory_info(int device, uint64_t *free_bytes, uint64_t *total_bytes);

/* Resolves any address inside a live allocation; the cl_mem is returned as void*. */
typedef struct axon_buffer_ref {
  void *mem; /* cl_mem */
  size_t offset;
  int device;
} axon_buffer_ref;
AXON_API axon_status_t axon_resolve(const void *ptr, axon_buffer_ref *ref);
/* 1 if ptr is inside a live device allocation (device set), else 0. */
AXON_API int axon_is_device_ptr(const void *ptr, int *device);

/* Pinned host memory: page-aligned host memory that asynchronous copies may use. */
AXON_API axon_status_t axon_host_alloc(size_t size, void **ptr);
AXON_API axon_status_t axon_host_free(void *ptr);
AXON_API int axon_is_host_pinned(const void *ptr);

/* ---- copies ---------------------------------------------------------------------------- */

/* A non-blocking copy returns at once; the host memory must stay valid until the stream
 * reaches it (pinned memory with an event, as the glue's host allocator does). */
AXON_API axon_status_t axon_copy_h2d(void *dst, const void *src, size_t bytes,
                                     axon_stream_t stream, int blocking);
AXON_API axon_status_t axon_copy_d2h(void *dst, const void *src, size_t bytes,
                                     axon_stream_t stream, int blocking);
AXON_API axon_status_t axon_copy_d2d(void *dst, const void *src, size_t bytes,
                                     axon_stream_t stream);

/* ---- programs -------------------------------------------------------------------------- */

/*
 * Programs are built lazily and cached in memory (per device) and on disk under
 * $AXON_CACHE_DIR (default $XDG_CACHE_HOME/axon or ~/.cache/axon; AXON_CACHE_DIR=off
 * disables it). AXON_KERNEL_DIR loads the kernel families' .cl files from a folder instead
 * of the copies embedded at build time.
 */
typedef struct axon_program *axon_program_t;

/* A family is an embedded .cl file by name ("elementwise"); options are build options. */
AXON_API axon_status_t axon_program_get(int device, const char *family, const char *options,
                                        axon_program_t *program);
/* Builds user source (custom kernels); on failure the message holds the build log. */
AXON_API axon_status_t axon_program_from_source(int device, const char *source,
                                                const char *options, axon_program_t *program);
AXON_API const char *axon_program_cache_dir(void);

typedef struct axon_cache_stats {
  uint64_t memory_hits, disk_hits, builds, damaged_entries;
} axon_cache_stats;
AXON_API void axon_program_cache_stats(axon_cache_stats *stats);

/* Kernel argument for axon_launch. */
typedef enum axon_arg_kind { AXON_ARG_BUFFER, AXON_ARG_BYTES } axon_arg_kind;
typedef struct axon_arg {
  axon_arg_kind kind;
  const void *ptr; /* BUFFER: a device address (the base of what the kernel sees); BYTES: value */
  size_t size;     /* BYTES: size of the value */
} axon_arg;

/* Runs kernel `name` of `program` over global[0..dims) with the given local size (NULL lets
 * the driver choose). A BUFFER argument passes (cl_mem, then a ulong element-agnostic byte
 * offset) as two kernel parameters. */
AXON_API axon_status_t axon_launch(axon_program_t program, const char *name, axon_stream_t stream,
                                   int dims, const size_t *global, const size_t *local,
                                   const axon_arg *args, int nargs);

/* ---- operators ------------------------------------------------------------------------- */

#define AXON_MAX_DIMS 12
#define AXON_MAX_OPERANDS 4

/*
 * An elementwise iteration, as TensorIterator leaves it after coalescing: operand 0 is the
 * output, 1.. the inputs. Dimension 0 is the fastest. Strides are in elements.
 * An input given as a scalar (is_scalar) is read from `scalars` instead of memory.
 */
typedef struct axon_ew_desc {
  int ndim;
  int ninputs;
  int64_t sizes[AXON_MAX_DIMS];
  int64_t strides[AXON_MAX_OPERANDS][AXON_MAX_DIMS];
  const void *data[AXON_MAX_OPERANDS]; /* device addresses of element 0 */
  int is_scalar[AXON_MAX_OPERANDS];
  double scalars[AXON_MAX_OPERANDS]; /* values of scalar inputs */
  int64_t iscalars[AXON_MAX_OPERANDS];
} axon_ew_desc;

/*
 * Elementwise op `op` (a kernel name of kernels/elementwise.cl, e.g. "add", "lt", "gelu_tanh")
 * computing in dtype `dtype` (all inputs have it) and writing `out_dtype` (the op's natural
 * output type: dtype, or bool for predicates). alpha / beta are the op's scalar parameters.
 */
AXON_API axon_status_t axon_elementwise(axon_stream_t stream, const char *op, axon_dtype dtype,
                                        axon_dtype out_dtype, const axon_ew_desc *desc,
                                        double alpha, double beta);
/* Converting copy: out (out_dtype) = in (dtype), any strides. */
AXON_API axon_status_t axon_cast(axon_stream_t stream, axon_dtype dtype, axon_dtype out_dtype,
                                 const axon_ew_desc *desc);

/*
 * Reduction of a strided input over a set of dimensions. The output has one element per
 * combination of the kept dimensions. Strides in elements.
 */
typedef struct axon_reduce_desc {
  int out_ndim, red_ndim;
  int64_t out_sizes[AXON_MAX_DIMS];
  int64_t out_strides_in[AXON_MAX_DIMS];  /* input strides of kept dims */
  int64_t out_strides_out[AXON_MAX_DIMS]; /* output strides of kept dims */
  int64_t red_sizes[AXON_MAX_DIMS];
  int64_t red_strides[AXON_MAX_DIMS];
  const void *in;
  void *out;
  void *out_index;      /* int64 indices for "argmax"/"argmin"/"max"/"min" with indices */
  const void *aux;      /* a per-output value: the mean for "var" */
  int64_t out_aux_strides[AXON_MAX_DIMS];
} axon_reduce_desc;

/* op: "sum", "prod", "max", "min", "argmax", "argmin", "maxidx", "minidx" (values and
 * indices), "norm1", "norm2", "normp", "norminf", "norm0", "sumsqdev" (with aux = mean),
 * "any", "all". Output dtype equals the input's (bool for any/all). `scale` multiplies the
 * final value (1/n for mean, 1/(n - correction) for var); p is the norm order. */
AXON_API axon_status_t axon_reduce(axon_stream_t stream, const char *op, axon_dtype dtype,
                                   const axon_reduce_desc *desc, double scale, double p);

/*
 * C[b] = alpha * op(A[b]) @ op(B[b]) + beta * C[b], row-major with leading dimensions, for
 * b < batch with batch strides in elements. beta = 0 ignores C's old contents.
 */
typedef struct axon_gemm_desc {
  int trans_a, trans_b;
  int64_t m, n, k;
  const void *a, *b;
  void *c;
  int64_t lda, ldb, ldc;
  int64_t batch, stride_a, stride_b, stride_c;
  double alpha, beta;
} axon_gemm_desc;

/* Which path matrix products take (AXON_GEMM=host|clblast|kernel overrides the choice). */
typedef enum axon_gemm_path { AXON_GEMM_HOST_BLAS, AXON_GEMM_CLBLAST, AXON_GEMM_KERNEL } axon_gemm_path;
AXON_API axon_gemm_path axon_gemm_path_for(axon_stream_t stream, axon_dtype dtype);
AXON_API axon_status_t axon_gemm(axon_stream_t stream, axon_dtype dtype, const axon_gemm_desc *desc);

/* Softmax over rows of a contiguous [outer, dim, inner] tensor. */
typedef struct axon_softmax_desc {
  int64_t outer, dim, inner;
  const void *in;  /* forward: x; backward: grad_out */
  const void *out; /* backward: the forward's output */
  void *result;
  int log;
} axon_softmax_desc;
AXON_API axon_status_t axon_softmax(axon_stream_t stream, axon_dtype dtype, const axon_softmax_desc *d);
AXON_API axon_status_t axon_softmax_backward(axon_stream_t stream, axon_dtype dtype,
                                             const axon_softmax_desc *d);

/* Negative log-likelihood over contiguous input [n, c] and int64 target [n]. */
typedef struct axon_nll_desc {
  int64_t n, c;
  const void *input, *target, *weight; /* weight may be NULL */
  void *out;          /* reduction none: [n]; else scalar */
  void *total_weight; /* scalar */
  const void *grad_out;
  void *grad_in; /* backward: [n, c], zero-filled by the caller */
  int64_t ignore_index;
  int reduction; /* 0 none, 1 mean, 2 sum */
} axon_nll_desc;
AXON_API axon_status_t axon_nll_forward(axon_stream_t stream, axon_dtype dtype, const axon_nll_desc *d);
AXON_API axon_status_t axon_nll_backward(axon_stream_t stream, axon_dtype dtype, const axon_nll_desc *d);

/* Philox-4x32-10 random numbers: element i of the output depends only on (seed, offset, i). */
typedef enum axon_random_kind { AXON_RANDOM_UNIFORM, AXON_RANDOM_NORMAL, AXON_RANDOM_BERNOULLI } axon_random_kind;
AXON_API axon_status_t axon_random(axon_stream_t stream, axon_dtype dtype, axon_random_kind kind,
                                   const axon_ew_desc *desc, uint64_t seed, uint64_t offset,
                                   double a, double b);

#ifdef __cplusplus
}
#endif
#endif /* AXON_AXON_H */
