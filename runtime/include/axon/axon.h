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
#include "pointwise.h"

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
  AXON_ERROR_FORKED = -10009, /* a process forked after axon initialised cannot use it */
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
  AXON_C64,  /* complex64: (real, imaginary) float32 pairs */
  AXON_C128, /* complex128: float64 pairs (devices with cl_khr_fp64) */
  AXON_U16,
  AXON_U32,
  AXON_U64,
  AXON_F8E4M3, /* float8_e4m3fn: 4 exponent bits, 3 mantissa bits, no infinities */
  AXON_F8E5M2, /* float8_e5m2: IEEE-like, with infinities */
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
  int exact_div_sqrt; /* CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT: kernels build with IEEE / and sqrt */
  int has_denormals;  /* CL_FP_DENORM: float subnormals kept (else OpenCL lets them flush to 0) */
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
AXON_API axon_status_t axon_copy_h2d(void *dst, const void *src, size_t bytes, axon_stream_t stream,
                                     int blocking);
AXON_API axon_status_t axon_copy_d2h(void *dst, const void *src, size_t bytes, axon_stream_t stream,
                                     int blocking);
AXON_API axon_status_t axon_copy_d2d(void *dst, const void *src, size_t bytes,
                                     axon_stream_t stream);

/* Host access to `bytes` of device memory at `device_ptr`, after the work queued on `stream`
 * (the call blocks until then): clEnqueueMapBuffer for reading and writing. On CPU-class
 * devices (native_kernels) the host address is the device memory itself, so the collectives'
 * staging (csrc/distributed/) needs no copy there; elsewhere the driver may copy. Each mapping
 * is released with axon_unmap_host, queued on `stream`, before kernels use the memory again. */
AXON_API axon_status_t axon_map_host(void *device_ptr, size_t bytes, axon_stream_t stream,
                                     void **host);
AXON_API axon_status_t axon_unmap_host(void *device_ptr, void *host, axon_stream_t stream);

/* ---- programs -------------------------------------------------------------------------- */

/*
 * Programs are built lazily, a kernel at a time (AXON_PROGRAMS=family: a family at a time),
 * and cached in memory (per device) and on disk under $AXON_CACHE_DIR (default
 * $XDG_CACHE_HOME/axon or ~/.cache/axon; AXON_CACHE_DIR=off disables it). AXON_KERNEL_DIR
 * loads the kernel families' .cl files from a folder instead of the copies embedded at build
 * time.
 */
typedef struct axon_program *axon_program_t;

/* A family is an embedded .cl file by name ("elementwise"); options are build options. Nothing
 * is compiled yet: each kernel is built at its first launch. */
AXON_API axon_status_t axon_program_get(int device, const char *family, const char *options,
                                        axon_program_t *program);
/* Builds every kernel of a family program now (a compile check; kernels then come from it). */
AXON_API axon_status_t axon_program_build_all(axon_program_t program);
/* Builds user source (custom kernels); on failure the message holds the build log. */
AXON_API axon_status_t axon_program_from_source(int device, const char *source, const char *options,
                                                axon_program_t *program);
/* Adds a kernel file by name for families to name (user elementwise kernels: the file goes
 * after ew_common, as elementwise.cl does). A name keeps its first text: registering it again
 * with other text fails, since programs built from it are cached by the family's name. */
AXON_API axon_status_t axon_register_kernel_file(const char *name, const char *text);
/* The type of argument `index` of kernel `name` as the compiler read it, macros expanded
 * ("float*", "uint4"), for programs built with -cl-kernel-arg-info; AXON_ERROR_UNSUPPORTED
 * where the driver keeps no argument info (programs loaded from a binary, on some drivers). */
AXON_API axon_status_t axon_kernel_arg_type(axon_program_t program, const char *name, int index,
                                            char *type, size_t size);
/* What a kernel author tunes for: the largest work-group the kernel can run in, the group-size
 * multiple the driver prefers, and the local memory the kernel declares itself (bytes). */
typedef struct axon_kernel_limits {
  size_t max_group_size, preferred_group_multiple;
  uint64_t local_mem_bytes, private_mem_bytes;
} axon_kernel_limits;
AXON_API axon_status_t axon_kernel_limits_get(axon_program_t program, const char *name,
                                              axon_kernel_limits *limits);
AXON_API const char *axon_program_cache_dir(void);

typedef struct axon_cache_stats {
  uint64_t memory_hits, disk_hits, builds, damaged_entries;
} axon_cache_stats;
AXON_API void axon_program_cache_stats(axon_cache_stats *stats);

/* Kernel argument for axon_launch. */
typedef enum axon_arg_kind { AXON_ARG_BUFFER, AXON_ARG_BYTES, AXON_ARG_LOCAL } axon_arg_kind;
typedef struct axon_arg {
  axon_arg_kind kind;
  const void *ptr; /* BUFFER: a device address (the base of what the kernel sees); BYTES: value */
  size_t size;     /* BYTES: size of the value; LOCAL: bytes of __local memory */
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
  double scalars[AXON_MAX_OPERANDS];      /* values of scalar inputs */
  double scalars_imag[AXON_MAX_OPERANDS]; /* their imaginary parts (complex dtypes) */
  int64_t iscalars[AXON_MAX_OPERANDS];
} axon_ew_desc;

/*
 * Pointwise op `op` (a row of the pointwise table, kernels/pointwise_ops.def) computing in
 * dtype `dtype` (all inputs have it) and writing `out_dtype` (the op's natural output type:
 * dtype, or bool for predicates). alpha / beta are the op's scalar parameters.
 */
AXON_API axon_status_t axon_elementwise(axon_stream_t stream, axon_pointwise_op op,
                                        axon_dtype dtype, axon_dtype out_dtype,
                                        const axon_ew_desc *desc, double alpha, double beta);
/* The same launch for kernel `kernel` ("ew_<name>", with its "ewr_" and "ewv_" forms where the
 * family has them) of any family built on ew_common: user elementwise kernels. */
AXON_API axon_status_t axon_elementwise_kernel(axon_stream_t stream, const char *family,
                                               const char *kernel, axon_dtype dtype,
                                               const axon_ew_desc *desc, double alpha, double beta);
/* The name of a pointwise op ("add", "i0"), or NULL for an unknown id. */
AXON_API const char *axon_pointwise_name(axon_pointwise_op op);
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
  void *out_index; /* int64 indices for "argmax"/"argmin"/"max"/"min" with indices */
  const void *aux; /* a per-output value: the mean for "var" */
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
typedef enum axon_gemm_path {
  AXON_GEMM_HOST_BLAS,
  AXON_GEMM_CLBLAST,
  AXON_GEMM_KERNEL
} axon_gemm_path;
AXON_API axon_gemm_path axon_gemm_path_for(axon_stream_t stream, axon_dtype dtype);
AXON_API axon_status_t axon_gemm(axon_stream_t stream, axon_dtype dtype,
                                 const axon_gemm_desc *desc);

/* Softmax over rows of a contiguous [outer, dim, inner] tensor. */
/* What a softmax launch computes. SAFE is PyTorch's _safe_softmax (attention): rows whose
 * elements are all -inf give zeros instead of NaN. Backward takes SOFTMAX or LOG. */
typedef enum axon_softmax_mode {
  AXON_SOFTMAX = 0,
  AXON_SOFTMAX_LOG = 1,
  AXON_SOFTMAX_SAFE = 2
} axon_softmax_mode;
typedef struct axon_softmax_desc {
  int64_t outer, dim, inner;
  const void *in;  /* forward: x; backward: grad_out */
  const void *out; /* backward: the forward's output */
  void *result;
  axon_softmax_mode mode;
} axon_softmax_desc;
AXON_API axon_status_t axon_softmax(axon_stream_t stream, axon_dtype dtype,
                                    const axon_softmax_desc *d);
AXON_API axon_status_t axon_softmax_backward(axon_stream_t stream, axon_dtype dtype,
                                             const axon_softmax_desc *d);

/* Negative log-likelihood over contiguous input [n, c] and int64 target [n]. */
typedef struct axon_nll_desc {
  int64_t n, c;
  const void *input, *target, *weight; /* weight may be NULL */
  void *out;                           /* reduction none: [n]; else scalar */
  void *total_weight;                  /* scalar */
  const void *grad_out;
  void *grad_in; /* backward: [n, c], zero-filled by the caller */
  int64_t ignore_index;
  int reduction; /* 0 none, 1 mean, 2 sum */
} axon_nll_desc;
AXON_API axon_status_t axon_nll_forward(axon_stream_t stream, axon_dtype dtype,
                                        const axon_nll_desc *d);
AXON_API axon_status_t axon_nll_backward(axon_stream_t stream, axon_dtype dtype,
                                         const axon_nll_desc *d);

/*
 * Fused scaled-dot-product attention (runtime/src/ops/attention.c): out = softmax(scale q k^T
 * + mask) v per (batch, head), computed a block of keys at a time with a running maximum and
 * sum, so the q_len x kv_len scores never exist in memory. q [batch, heads, q_len, head_dim],
 * k [batch, kv_heads, kv_len, head_dim], v [batch, kv_heads, kv_len, v_head_dim]; heads is a
 * multiple of kv_heads (grouped-query attention: query head h reads key head h / (heads /
 * kv_heads)). Strides are in elements for (batch, head, row); the last dimension of every
 * tensor is contiguous. Storage float32, float16 or bfloat16 (the dtype), computed in float.
 * head_dim and v_head_dim are at most AXON_ATTENTION_MAX_HEAD_DIM.
 */
#define AXON_ATTENTION_MAX_HEAD_DIM 256
typedef struct axon_attention_desc {
  int64_t batch, heads, kv_heads, q_len, kv_len, head_dim, v_head_dim;
  int64_t q_strides[3], k_strides[3], v_strides[3], out_strides[3];
  int64_t grad_out_strides[3], grad_q_strides[3], grad_k_strides[3], grad_v_strides[3];
  int64_t mask_strides[4]; /* (batch, head, row, column); 0 along broadcast dimensions */
  double scale;
  int is_causal; /* query i sees keys j <= i (top-left aligned, as PyTorch's math path) */
  const void *q, *k, *v;
  const void *mask; /* additive, of the dtype; NULL for none */
  void *out;        /* forward: written; backward: the forward's output */
  void *lse;        /* float32 [batch, heads, q_len] contiguous: forward writes, backward reads */
  const void *grad_out;
  void *grad_q, *grad_k, *grad_v; /* backward: NULL where not wanted */
  void *grad_mask; /* backward: float32 [batch, heads, q_len, kv_len] contiguous, or NULL */
  void *delta;     /* backward: float32 [batch, heads, q_len] scratch */
} axon_attention_desc;
/* out and lse (log of each row's softmax denominator; -inf for a row whose every key is masked,
 * whose output is then zero, as PyTorch's _safe_softmax gives). */
AXON_API axon_status_t axon_attention_forward(axon_stream_t stream, axon_dtype dtype,
                                              const axon_attention_desc *d);
/* grad_q, grad_k, grad_v (and grad_mask, the scores' gradient) from grad_out, recomputing the
 * probabilities from lse. */
AXON_API axon_status_t axon_attention_backward(axon_stream_t stream, axon_dtype dtype,
                                               const axon_attention_desc *d);

/* Philox-4x32-10 random numbers: element i of the output depends only on (seed, offset, i). */
typedef enum axon_random_kind {
  AXON_RANDOM_UNIFORM,
  AXON_RANDOM_NORMAL,
  AXON_RANDOM_BERNOULLI,
  AXON_RANDOM_EXPONENTIAL /* rate a */
} axon_random_kind;
AXON_API axon_status_t axon_random(axon_stream_t stream, axon_dtype dtype, axon_random_kind kind,
                                   const axon_ew_desc *desc, uint64_t seed, uint64_t offset,
                                   double a, double b);

/* ---- neural-network layers: convolution, pooling, normalization, resampling, embedding --- */
/* (runtime/src/ops/conv.c, pool.c, norm.c, resample.c, embedding.c, rnn.c) */

/*
 * Geometry of a spatial op over [n, c, spatial...] tensors with 1 to 3 spatial dims. The
 * "input" tensor lives in the forward op's input space (sizes in[]), the "output" tensor in its
 * output space (sizes out[]); strides in elements, order (n, c, spatial...). Backward
 * launches read the output-space tensor (the gradient) and write the input-space one.
 */
typedef struct axon_spatial_desc {
  int nd; /* spatial dims, 1..3 */
  int64_t n, c;
  int64_t in[3], out[3];
  int64_t kernel[3], stride[3], pad[3], dilation[3];
  int64_t pad_after[3]; /* padding ops: padding after the data */
  int64_t in_strides[5], out_strides[5];
  void *input;           /* input-space tensor: forward source, backward destination */
  void *output;          /* output-space tensor: forward destination, backward source */
  void *indices;         /* int64, max pooling: same strides as the output-space tensor */
  int count_include_pad; /* average pooling */
  int64_t divisor;       /* average pooling: divisor_override, or 0 */
  double inv_scale[3];   /* resampling: 1 / scale factor where the caller gave one, else 0 */
  int align_corners;     /* linear resampling */
} axon_spatial_desc;

/* Convolution's unfolding. col is contiguous [c * K, n * L] (K = kernel volume, L = output
 * volume), rows ordered (channel, kernel position), columns (sample, output position).
 * im2col reads `input` (strided) and writes col to `output`; col2im reads col from `output` and
 * writes `input` (strided), each element summing its contributions (a gather, no atomics). */
AXON_API axon_status_t axon_im2col(axon_stream_t stream, axon_dtype dtype,
                                   const axon_spatial_desc *d);
AXON_API axon_status_t axon_col2im(axon_stream_t stream, axon_dtype dtype,
                                   const axon_spatial_desc *d);

typedef enum axon_pool_kind {
  AXON_POOL_MAX,
  AXON_POOL_AVG,
  AXON_POOL_ADAPTIVE_AVG,
  AXON_POOL_ADAPTIVE_MAX
} axon_pool_kind;
/* Forward: output (and indices for max and adaptive max) from input. Backward: input = gradient
 * from the output-space gradient in `output` (and `indices`), a gather per input element. */
AXON_API axon_status_t axon_pool(axon_stream_t stream, axon_dtype dtype, axon_pool_kind kind,
                                 const axon_spatial_desc *d);
AXON_API axon_status_t axon_pool_backward(axon_stream_t stream, axon_dtype dtype,
                                          axon_pool_kind kind, const axon_spatial_desc *d);

/* Resampling (nearest: PyTorch's "nearest"; nearest-exact; linear: linear / bilinear / trilinear)
 * and reflection / replication padding; backward as for pooling. */
typedef enum axon_resample_kind {
  AXON_RESAMPLE_NEAREST,
  AXON_RESAMPLE_LINEAR,
  AXON_PAD_REFLECT,
  AXON_PAD_REPLICATE,
  AXON_RESAMPLE_NEAREST_EXACT
} axon_resample_kind;
AXON_API axon_status_t axon_resample(axon_stream_t stream, axon_dtype dtype,
                                     axon_resample_kind kind, const axon_spatial_desc *d);
AXON_API axon_status_t axon_resample_backward(axon_stream_t stream, axon_dtype dtype,
                                              axon_resample_kind kind, const axon_spatial_desc *d);

/*
 * Normalization over a contiguous x. Statistics are per target t < targets over the elements
 * at t * st + a * sa + b * sb (a < na, b < nb). Element i (linear) belongs to statistics group
 * (i / gdiv) % gmod and affine channel (i / cdiv) % cmod. Statistics, weights, biases, running
 * stats and sums have the accumulation dtype: float for float16 / bfloat16, else `dtype`.
 */
typedef struct axon_norm_desc {
  int64_t targets, na, nb, st, sa, sb;
  int64_t numel, gdiv, gmod, cdiv, cmod;
  int64_t count; /* elements per statistics group (backward) */
  const void *x, *dy;
  const void *weight, *bias;        /* may be NULL */
  void *mean, *rstd;                /* stats: outputs; apply / backward: inputs */
  int stat_is_var;                  /* apply / backward: rstd holds a variance (eval batch norm) */
  void *running_mean, *running_var; /* stats: updated when not NULL */
  double momentum, eps;
  void *y;           /* apply: output; backward: grad_input */
  void *sum1, *sum2; /* sums: outputs; backward: inputs */
  int train;         /* backward: the statistics depended on x */
} axon_norm_desc;
/* mean and rstd = 1 / sqrt(biased var + eps) per target (and the running stats update). */
AXON_API axon_status_t axon_norm_stats(axon_stream_t stream, axon_dtype dtype,
                                       const axon_norm_desc *d);
/* y = (x - mean) * rstd * weight + bias. */
AXON_API axon_status_t axon_norm_apply(axon_stream_t stream, axon_dtype dtype,
                                       const axon_norm_desc *d);
/* Per target: sum1 = sum(dy * w), sum2 = sum(dy * w * xhat) (w = 1 without weight). */
AXON_API axon_status_t axon_norm_sums(axon_stream_t stream, axon_dtype dtype,
                                      const axon_norm_desc *d);
/* y = rstd * (dy * w - sum1 / count - xhat * sum2 / count) (train), dy * w * rstd (not). */
AXON_API axon_status_t axon_norm_backward(axon_stream_t stream, axon_dtype dtype,
                                          const axon_norm_desc *d);

/* grad_weight[w, :] = sum of grad[j, :] over j with index[j] == w (in order of j), for w !=
 * padding_idx, divided by the count with scale_by_freq. grad [n, dim] and int64 index [n] are
 * contiguous; out [num_weights, dim] is zero-filled by the caller; scratch is int64 [3 n]. */
typedef struct axon_embedding_bwd_desc {
  int64_t n, dim, num_weights, padding_idx;
  int scale_by_freq;
  int index_is_int32;
  const void *grad, *index;
  void *scratch, *out;
} axon_embedding_bwd_desc;
AXON_API axon_status_t axon_embedding_backward(axon_stream_t stream, axon_dtype dtype,
                                               const axon_embedding_bwd_desc *d);

/* Recurrent cells (runtime/src/ops/rnn.c): one time step after the two matrix products, as
 * nn.LSTM / nn.GRU run it off the CPU. Contiguous operands: gates [batch, G hidden] (LSTM: G =
 * 4, gates input, forget, cell, output; GRU: G = 3, reset, update, new), biases [G hidden] both
 * or neither, states [batch, hidden]; workspace LSTM [batch, 4 hidden] (the activated gates),
 * GRU [batch, 5 hidden] (reset, update, new, hx, hidden part of new with its bias). */
typedef struct axon_rnn_cell_desc {
  int64_t batch, hidden;
  const void *input_gates, *hidden_gates;
  const void *input_bias, *hidden_bias; /* both NULL: no bias */
  const void *state;                    /* cx (LSTM) or hx (GRU) */
  void *hy, *cy;                        /* cy: LSTM only */
  void *workspace;
} axon_rnn_cell_desc;
AXON_API axon_status_t axon_lstm_cell(axon_stream_t stream, axon_dtype dtype,
                                      const axon_rnn_cell_desc *d);
AXON_API axon_status_t axon_gru_cell(axon_stream_t stream, axon_dtype dtype,
                                     const axon_rnn_cell_desc *d);
/* Backward: LSTM from grad_hy and grad_cy (either NULL: zero), cx, cy and the workspace, to
 * grad_gates [batch, 4 hidden] (input and hidden gates alike) and grad_state (of cx); GRU from
 * grad_hy and the workspace to grad_gates (input gates), grad_hidden_gates, grad_state (of hx). */
typedef struct axon_rnn_cell_bwd_desc {
  int64_t batch, hidden;
  const void *grad_hy, *grad_cy;
  const void *cx, *cy; /* LSTM only */
  const void *workspace;
  void *grad_gates, *grad_hidden_gates, *grad_state;
} axon_rnn_cell_bwd_desc;
AXON_API axon_status_t axon_lstm_cell_backward(axon_stream_t stream, axon_dtype dtype,
                                               const axon_rnn_cell_bwd_desc *d);
AXON_API axon_status_t axon_gru_cell_backward(axon_stream_t stream, axon_dtype dtype,
                                              const axon_rnn_cell_bwd_desc *d);
/* ---- end of neural-network layers -------------------------------------------------------- */

/* ---- indexing, scans and sorting (issue 3: src/ops/index.c, src/ops/scan.c) ------------- */

/*
 * A dim-wise op (gather, scatter). Iteration dims are fastest first, strides in elements;
 * operand 0 is self / out, 1 the int64 index, 2 the source. gather: one element per iteration
 * position, out = src[.., index, ..] along the dim (dim_strides[2], dim_size = src's size).
 * scatter: one *line* per iteration position (the dim excluded); `len` index entries along
 * the dim (dim_strides[1], [2]) go in order into self along the dim (dim_strides[0],
 * dim_size = self's size), so duplicates combine in a fixed order. Negative indices wrap once;
 * callers check bounds.
 */
typedef struct axon_dim_desc {
  int ndim;
  int64_t sizes[AXON_MAX_DIMS];
  int64_t strides[3][AXON_MAX_DIMS];
  int64_t len;
  int64_t dim_strides[3];
  int64_t dim_size;
  void *self;
  const void *index;
  const void *src;
} axon_dim_desc;

AXON_API axon_status_t axon_gather(axon_stream_t stream, axon_dtype dtype, const axon_dim_desc *d);

typedef enum axon_scatter_mode {
  AXON_SCATTER_ASSIGN,
  AXON_SCATTER_SUM, /* adds alpha * src */
  AXON_SCATTER_PROD,
  AXON_SCATTER_AMAX,
  AXON_SCATTER_AMIN
} axon_scatter_mode;

/* Without include_self the touched elements of self start at the mode's identity. With
 * src_is_scalar the value (ivalue for integer dtypes) replaces src. */
AXON_API axon_status_t axon_scatter(axon_stream_t stream, axon_dtype dtype, const axon_dim_desc *d,
                                    axon_scatter_mode mode, int include_self, int src_is_scalar,
                                    double value, int64_t ivalue, double alpha);

/*
 * Advanced indexing: positions (r, b), r over self's non-indexed dims (r dims), b over the
 * broadcast shape of the nidx index tensors (b dims), which are stacked contiguous int64
 * [nidx, prod(b_sizes)]. Index k selects along a dim of size idx_sizes[k], stride
 * idx_strides[k] of self. `other` is index's result or index_put's values.
 */
typedef struct axon_adv_desc {
  int nr, nb, nidx;
  int64_t r_sizes[AXON_MAX_DIMS];
  int64_t r_self_strides[AXON_MAX_DIMS];
  int64_t r_other_strides[AXON_MAX_DIMS];
  int64_t b_sizes[AXON_MAX_DIMS];
  int64_t b_other_strides[AXON_MAX_DIMS];
  int64_t idx_sizes[AXON_MAX_DIMS];
  int64_t idx_strides[AXON_MAX_DIMS];
  void *self;
  const void *indices;
  void *other;
} axon_adv_desc;

/* other[r, b] = self[r, indices[:, b]] */
AXON_API axon_status_t axon_index(axon_stream_t stream, axon_dtype dtype, const axon_adv_desc *d);
/* self[r, indices[:, b]] = (or += with accumulate) other[r, b], b in order for each r. */
AXON_API axon_status_t axon_index_put(axon_stream_t stream, axon_dtype dtype,
                                      const axon_adv_desc *d, int accumulate);

/* tril (lower) / triu: out = in where col - row <= k (>= k), else 0. The desc's two fastest
 * dims are the column and row (not coalesced); operand 0 out, 1 in. */
AXON_API axon_status_t axon_tri(axon_stream_t stream, axon_dtype dtype, const axon_ew_desc *d,
                                int64_t k, int lower);

/* searchsorted: out (operand 0, int64 or int32) = insertion points of values (operand 1)
 * in rows of contiguous sorted boundaries [rows, n]; value i (iteration order, fastest dim
 * first) uses row i / per_row. sorter (int64, like boundaries) may be NULL. */
AXON_API axon_status_t axon_searchsorted(axon_stream_t stream, axon_dtype dtype,
                                         const axon_ew_desc *d, const void *boundaries,
                                         const void *sorter, int64_t n, int64_t per_row, int right,
                                         int out_int32);

/* nonzero's second pass: operand 1 the input (its strides, dims fastest first, uncoalesced),
 * positions = inclusive prefix count of nonzero elements in row-major order (contiguous
 * int64); data[0] = out, contiguous int64 [count, ndim]. */
AXON_API axon_status_t axon_nonzero_write(axon_stream_t stream, axon_dtype dtype,
                                          const axon_ew_desc *d, const void *positions);

/* histc: counts (int32 [bins], zeroed by the caller) of the values of operand 1 in [lo, hi];
 * floating dtypes. Integer atomics, so the counts are deterministic. */
AXON_API axon_status_t axon_histc(axon_stream_t stream, axon_dtype dtype, const axon_ew_desc *d,
                                  void *counts, int64_t bins, double lo, double hi);

/* A scan or sort along one dim: lines over the other dims (fastest first, strides in elements),
 * n elements along the dim. */
typedef struct axon_scan_desc {
  int ndim;
  int64_t sizes[AXON_MAX_DIMS];
  int64_t in_strides[AXON_MAX_DIMS];
  int64_t out_strides[AXON_MAX_DIMS];
  int64_t n, in_dim_stride, out_dim_stride;
  const void *in;
  void *out;
  void *out_index; /* int64, out's layout: cummax / cummin indices, sort positions */
} axon_scan_desc;

typedef enum axon_scan_op {
  AXON_SCAN_SUM,
  AXON_SCAN_PROD,
  AXON_SCAN_MAX, /* with out_index */
  AXON_SCAN_MIN, /* with out_index */
  AXON_SCAN_LOGSUMEXP
} axon_scan_op;

/* Inclusive scan; blockwise in a fixed order (deterministic). */
AXON_API axon_status_t axon_scan(axon_stream_t stream, axon_dtype dtype, axon_scan_op op,
                                 const axon_scan_desc *d);
/* Stable sort of each line (NaN largest): values to out, original positions to out_index. */
AXON_API axon_status_t axon_sort(axon_stream_t stream, axon_dtype dtype, const axon_scan_desc *d,
                                 int descending);

/* ---- mixed precision (torch.amp.GradScaler) ----------------------------------------------- */

/* x[0..n) *= inv_scale[0] (float32) in place; found_inf[0] (float32) = 1 if any x is inf/NaN. */
AXON_API axon_status_t axon_amp_unscale(axon_stream_t stream, axon_dtype dtype, void *x, int64_t n,
                                        void *found_inf, const void *inv_scale);
/* PyTorch's scale update: back off on inf, grow every `interval` clean steps (float32 scale,
 * int32 growth tracker). */
AXON_API axon_status_t axon_amp_update_scale(axon_stream_t stream, void *scale,
                                             void *growth_tracker, const void *found_inf,
                                             float growth, float backoff, int interval);

/* Random integers (issue 3): element i = base + (64 Philox bits of (seed, offset + i)) mod range,
 * or the 64 bits themselves when range is 0; stored in any dtype. */
AXON_API axon_status_t axon_random_int(axon_stream_t stream, axon_dtype dtype,
                                       const axon_ew_desc *desc, uint64_t seed, uint64_t offset,
                                       uint64_t range, int64_t base);

#ifdef __cplusplus
}
#endif
#endif /* AXON_AXON_H */
