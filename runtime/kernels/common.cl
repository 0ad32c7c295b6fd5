/*
 * Definitions shared by every kernel family; prepended to each family's source.
 *
 * A program is built for one element type, chosen by one of -DDT_F32 ... -DDT_BOOL:
 *   ST          its storage type
 *   CT          the type arithmetic happens in (float for float16 / bfloat16, int for the
 *               narrow integers, as C's promotions do)
 *   LOAD(p, i)  element i of a buffer of that type (p is a __global uchar*) as CT
 *   STORE(p, i, v)
 * float16 and bfloat16 are storage types only: loaded with vload_half / a shift and computed
 * in float, so they work without cl_khr_fp16.
 *
 * Buffers arrive as (base, byte offset) pairs because device addresses resolve to a cl_mem
 * and an offset inside it.
 */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define HAS_FP64 1
#endif

#define AXON_MAX_DIMS 12

/* Loads and stores by element type, usable for any operand regardless of DT. */
#define LD_F32(p, i) (((__global const float *)(p))[i])
#define LD_F64(p, i) (((__global const double *)(p))[i])
#define LD_F16(p, i) vload_half((i), (__global const half *)(p))
#define LD_BF16(p, i) as_float(((uint)((__global const ushort *)(p))[i]) << 16)
#define LD_I64(p, i) (((__global const long *)(p))[i])
#define LD_I32(p, i) (((__global const int *)(p))[i])
#define LD_I16(p, i) ((int)((__global const short *)(p))[i])
#define LD_I8(p, i) ((int)((__global const char *)(p))[i])
#define LD_U8(p, i) ((int)((__global const uchar *)(p))[i])
#define LD_BOOL(p, i) ((int)(((__global const uchar *)(p))[i] != 0))

/* Round to nearest even, keeping NaN a (quiet) NaN. */
inline ushort float_to_bf16(float f) {
  uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}

#define ST_F32(p, i, v) (((__global float *)(p))[i] = (float)(v))
#define ST_F64(p, i, v) (((__global double *)(p))[i] = (double)(v))
#define ST_F16(p, i, v) vstore_half_rte((float)(v), (i), (__global half *)(p))
#define ST_BF16(p, i, v) (((__global ushort *)(p))[i] = float_to_bf16((float)(v)))
#define ST_I64(p, i, v) (((__global long *)(p))[i] = (long)(v))
/* Narrow integers go through long: a float out of their range then wraps as on PyTorch's CPU
 * (1000.0 -> uint8 232) instead of saturating as NVIDIA's direct conversion does. */
#define ST_I32(p, i, v) (((__global int *)(p))[i] = (int)(long)(v))
#define ST_I16(p, i, v) (((__global short *)(p))[i] = (short)(long)(v))
#define ST_I8(p, i, v) (((__global char *)(p))[i] = (char)(long)(v))
#define ST_U8(p, i, v) (((__global uchar *)(p))[i] = (uchar)(long)(v))
#define ST_BOOL(p, i, v) (((__global uchar *)(p))[i] = (uchar)((v) != 0))

#if defined(DT_F32)
#define CT float
#define IS_FLOAT 1
#define LOAD LD_F32
#define STORE ST_F32
#elif defined(DT_F64)
#define CT double
#define IS_FLOAT 1
#define LOAD LD_F64
#define STORE ST_F64
#elif defined(DT_F16)
#define CT float
#define IS_FLOAT 1
#define LOAD LD_F16
#define STORE ST_F16
#elif defined(DT_BF16)
#define CT float
#define IS_FLOAT 1
#define LOAD LD_BF16
#define STORE ST_BF16
#elif defined(DT_I64)
#define CT long
#define LOAD LD_I64
#define STORE ST_I64
#define CT_MIN LONG_MIN
#define CT_MAX LONG_MAX
#elif defined(DT_I32)
#define CT int
#define LOAD LD_I32
#define STORE ST_I32
#define CT_MIN INT_MIN
#define CT_MAX INT_MAX
#elif defined(DT_I16)
#define CT int
#define LOAD LD_I16
#define STORE ST_I16
#define CT_MIN SHRT_MIN
#define CT_MAX SHRT_MAX
#elif defined(DT_I8)
#define CT int
#define LOAD LD_I8
#define STORE ST_I8
#define CT_MIN CHAR_MIN
#define CT_MAX CHAR_MAX
#elif defined(DT_U8)
#define CT int
#define LOAD LD_U8
#define STORE ST_U8
#define IS_UNSIGNED 1
#define CT_MIN 0
#define CT_MAX UCHAR_MAX
#elif defined(DT_BOOL)
#define CT int
#define LOAD LD_BOOL
#define STORE ST_BOOL
#define IS_UNSIGNED 1
#define IS_BOOL 1
#define CT_MIN 0
#define CT_MAX 1
#else
#error "build with one of -DDT_F32 ... -DDT_BOOL"
#endif

#ifdef IS_FLOAT
#define CT_MIN (-INFINITY)
#define CT_MAX INFINITY
#define IS_NAN(x) isnan(x)
#else
#define IS_NAN(x) 0
#endif

/* Geometry of an elementwise iteration: operand 0 is the output. Dimension 0 is the
 * fastest; strides are in elements. Mirrors the runtime's ew_geom. */
typedef struct ew_geom {
  long numel;
  long ndim;
  long scalar_mask; /* bit k: input k is a scalar argument, not memory */
  long sizes[AXON_MAX_DIMS];
  long strides[4][AXON_MAX_DIMS];
} ew_geom;

/* Element offsets of linear index i for the first n operands. */
inline void ew_offsets(const ew_geom *g, long i, int n, long *off) {
  for (int k = 0; k < n; k++) off[k] = 0;
  for (long d = 0; d < g->ndim; d++) {
    long size = g->sizes[d];
    long idx = d + 1 < g->ndim ? i % size : i;
    i = d + 1 < g->ndim ? i / size : 0;
    for (int k = 0; k < n; k++) off[k] += idx * g->strides[k][d];
  }
}

#define BUF(name) __global uchar *name##_base, ulong name##_offset
#define PTR(name) (name##_base + name##_offset)

/* Horizontal max and sum of a float8, for kernels that walk rows in vectors. */
inline float lanes_max(float8 v) {
  float4 a = fmax(v.lo, v.hi);
  float2 b = fmax(a.lo, a.hi);
  return fmax(b.lo, b.hi);
}
inline float lanes_sum(float8 v) {
  float4 a = v.lo + v.hi;
  float2 b = a.lo + a.hi;
  return b.lo + b.hi;
}
