/* Helpers shared by the operator launchers. */
#ifndef AXON_LAUNCH_COMMON_H
#define AXON_LAUNCH_COMMON_H

#include <stdio.h>
#include <string.h>

#include "../internal.h"
#include "../quirks.h"

/* Mirrors ew_geom in kernels/common.cl. */
typedef struct ew_geom {
  int64_t numel, ndim, scalar_mask;
  int64_t sizes[AXON_MAX_DIMS];
  int64_t strides[4][AXON_MAX_DIMS];
} ew_geom;

/* The floating-point types whose kernels compute in float or double (not complex, not 8-bit). */
static inline int is_float_dtype(axon_dtype t) {
  return t == AXON_F32 || t == AXON_F64 || t == AXON_F16 || t == AXON_BF16;
}

/* A scalar kernel argument in the compute type (CT in kernels/common.cl) of a dtype. */
typedef struct compute_scalar {
  union {
    float f;
    double d;
    int32_t i;
    int64_t l;
    float c[2];  /* complex64: real, imaginary */
    double z[2]; /* complex128 */
  } v;
  size_t size;
} compute_scalar;

static inline compute_scalar make_scalar(axon_dtype dtype, double value, int64_t ivalue,
                                         int use_int) {
  compute_scalar s;
  memset(&s, 0, sizeof s);
  switch (dtype) {
    case AXON_F32:
    case AXON_F16:
    case AXON_BF16:
    case AXON_F8E4M3:
    case AXON_F8E5M2:
      s.v.f = (float)value;
      s.size = 4;
      break;
    case AXON_F64:
      s.v.d = value;
      s.size = 8;
      break;
    case AXON_I64:
    case AXON_U64:
      s.v.l = use_int ? ivalue : (int64_t)value;
      s.size = 8;
      break;
    case AXON_C64: /* a real value; make_complex_scalar gives the imaginary part too */
      s.v.c[0] = (float)value;
      s.size = 8;
      break;
    case AXON_C128:
      s.v.z[0] = value;
      s.size = 16;
      break;
    default:
      s.v.i = (int32_t)(use_int ? ivalue : (int64_t)value);
      s.size = 4;
      break;
  }
  return s;
}

static inline compute_scalar make_complex_scalar(axon_dtype dtype, double re, double im) {
  compute_scalar s = make_scalar(dtype, re, 0, 0);
  if (dtype == AXON_C64) s.v.c[1] = (float)im;
  if (dtype == AXON_C128) s.v.z[1] = im;
  return s;
}

static inline int is_complex_dtype(axon_dtype dtype) {
  return dtype == AXON_C64 || dtype == AXON_C128;
}

static inline axon_arg buffer_arg(const void *ptr) {
  axon_arg a = {AXON_ARG_BUFFER, ptr, 0};
  return a;
}
static inline axon_arg bytes_arg(const void *value, size_t size) {
  axon_arg a = {AXON_ARG_BYTES, value, size};
  return a;
}

/* dst = a b c (each may be NULL), cut to n - 1 characters: the launch path's kernel names and
 * options without printf, whose formatting showed in a profile of a one-element add. */
static inline void join3(char *dst, size_t n, const char *a, const char *b, const char *c) {
  const char *parts[3] = {a, b, c};
  size_t used = 0;
  for (int k = 0; k < 3; k++) {
    if (!parts[k]) continue;
    size_t len = strlen(parts[k]);
    if (len > n - 1 - used) len = n - 1 - used;
    memcpy(dst + used, parts[k], len);
    used += len;
  }
  dst[used] = '\0';
}

/* The program of a kernel family built for a dtype on the stream's device, with extra build
 * options (NULL for none) that select a variant of the family. */
static inline axon_status_t family_program_variant(axon_stream_t stream, const char *family,
                                                   axon_dtype dtype, const char *extra,
                                                   axon_program_t *program) {
  int device = axon_stream_device(stream);
  if (!axon_device_supports_dtype(device, dtype))
    return axon_fail(AXON_ERROR_UNSUPPORTED_DTYPE,
                     "%s is not supported on axon device %d (it lacks cl_khr_fp64)",
                     axon_dtype_name(dtype), device);
  /* Complex numbers have kernels in these families only: elsewhere a complex build would run
   * the real arithmetic on (real, imaginary) vectors lane by lane, which is not theirs. */
  if (is_complex_dtype(dtype) && strcmp(family, "ew_common+complex") && strcmp(family, "index") &&
      strcmp(family, "fft"))
    return axon_fail(AXON_ERROR_UNSUPPORTED_DTYPE, "the %s kernels have no %s form yet", family,
                     axon_dtype_name(dtype));
  char options[128];
  join3(options, sizeof options, axon_dtype_macro(dtype), extra ? " " : NULL, extra);
  return axon_program_get(device, family, options, program);
}

static inline axon_status_t family_program(axon_stream_t stream, const char *family,
                                           axon_dtype dtype, axon_program_t *program) {
  return family_program_variant(stream, family, dtype, NULL, program);
}

/* Work-group size for 1-D launches: fixed, so each kernel is compiled for one size only. */
#define AXON_GROUP 256

/* Launchers read the stream's device description in place: axon_device_get_info copies all
 * of it (3 KB of names and extensions), which every launch would pay. */
static inline const axon_device_info *stream_info(axon_stream_t stream) {
  static const axon_device_info none; /* a NULL stream: launching then fails with its error */
  return stream ? &stream->device->info : &none;
}

static inline size_t group_size(axon_stream_t stream) {
  size_t max = stream_info(stream)->max_work_group_size;
  return max < AXON_GROUP ? max : AXON_GROUP;
}

/* Whether the stream's device is a CPU (PoCL): reductions then give each row a work-item rather
 * than a work-group. A work-group per row combines through local memory with a barrier per
 * step, which suits GPUs; PoCL runs each barrier as a pass over all the group's work-items, so
 * there the tree costs more than the reduction itself (8 ms against 0.2 ms for 4096 rows of
 * 1024 floats, measured with PoCL 3.1 on 2 cores). Not where the driver caps a work-item's
 * loop iterations (AXON_QUIRK_LOOP_BUDGET): a long row would be cut short there. */
static inline int rows_per_item(axon_stream_t stream) {
  return stream_info(stream)->is_cpu && !(stream->device->quirks & AXON_QUIRK_LOOP_BUDGET);
}

/* Launches of a few elements get small groups: PoCL runs every work-item of a group, so one
 * element in a group of 256 wastes about a microsecond. Two sizes keep the variants PoCL
 * compiles per kernel at two. */
#define AXON_SMALL_GROUP 16

static inline size_t group_size_for(axon_stream_t stream, int64_t n) {
  size_t group = group_size(stream);
  return n <= AXON_SMALL_GROUP && group > AXON_SMALL_GROUP ? AXON_SMALL_GROUP : group;
}

/* One work-item per element of an n-element range, in fixed-size groups. */
static inline axon_status_t launch_1d(axon_stream_t stream, axon_program_t program,
                                      const char *kernel, int64_t n, const axon_arg *args,
                                      int nargs) {
  if (n <= 0) return AXON_SUCCESS;
  size_t local = group_size_for(stream, n);
  size_t global = axon_round_up((size_t)n, local);
  return axon_launch(program, kernel, stream, 1, &global, &local, args, nargs);
}

#endif
