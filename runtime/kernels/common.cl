/*
 * Definitions shared by every kernel family; prepended to each family's source.
 *
 * A program is built for one element type, chosen by one of -DDT_F32 ... -DDT_BOOL, -DDT_C64,
 * -DDT_C128 (complex: the family ew_common+complex only):
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

/* Every kernel is defined through KERNEL(name) (or KERNEL_WG for a required group size) so
 * that a program can hold one kernel of its family: built with -DAXON_ONLY -DAXON_WANT_<name>=1,
 * every other kernel of the source becomes an unused static function, which the compiler drops
 * before optimisation and code generation (a first launch then pays for one kernel, not a
 * family of a hundred). Without AXON_ONLY, every kernel is built. A static function may not
 * declare __local arrays, so a kernel declares its group memory with LOCAL_ARRAY (below): in a
 * dropped kernel it is a null pointer to __local memory, which type-checks the same. */
#ifdef AXON_ONLY
/* AXON_WANTED(AXON_WANT_x) is 1 when AXON_WANT_x is defined as 1, else 0. */
#define AXON_PLACEHOLDER_1 0,
#define AXON_SECOND(skip, value, ...) value
#define AXON_WANTED(x) AXON_WANTED_(x)
#define AXON_WANTED_(x) AXON_WANTED__(AXON_PLACEHOLDER_##x)
#define AXON_WANTED__(arg) AXON_SECOND(arg 1, 0)
#define AXON_CAT(a, b) AXON_CAT_(a, b)
#define AXON_CAT_(a, b) a##b
#define AXON_KERNEL_IF_1(attributes, name) __kernel attributes void name
#define AXON_KERNEL_IF_0(attributes, name) __attribute__((unused)) static void name
#define KERNEL_WITH(attributes, name) \
  AXON_CAT(AXON_KERNEL_IF_, AXON_WANTED(AXON_WANT_##name))(attributes, name)
#define AXON_LOCAL_IF_1(type, var, dims, inner) __local type var dims
#define AXON_LOCAL_IF_0(type, var, dims, inner) __local type(*var) inner = 0
#define AXON_LOCAL(kernel, type, var, dims, inner) \
  AXON_CAT(AXON_LOCAL_IF_, AXON_WANTED(AXON_WANT_##kernel))(type, var, dims, inner)
#define AXON_DEFINITION_IF_1(...) __VA_ARGS__
#define AXON_DEFINITION_IF_0(...)
#define IF_WANTED(name, ...) AXON_CAT(AXON_DEFINITION_IF_, AXON_WANTED(AXON_WANT_##name))(__VA_ARGS__)
#else
#define IF_WANTED(name, ...) __VA_ARGS__
#define KERNEL_WITH(attributes, name) __kernel attributes void name
#define AXON_LOCAL(kernel, type, var, dims, inner) __local type var dims
#endif
/* Group memory of a kernel: LOCAL_ARRAY(kernel, float, scratch, 256), LOCAL_ARRAY2(kernel,
 * float, tile, 16, 17). */
#define LOCAL_ARRAY(kernel, type, var, n) AXON_LOCAL(kernel, type, var, [n], )
#define LOCAL_ARRAY2(kernel, type, var, n, m) AXON_LOCAL(kernel, type, var, [n][m], [m])
#define KERNEL(name) KERNEL_WITH(, name)
#define KERNEL_WG(x, y, z, name) KERNEL_WITH(__attribute__((reqd_work_group_size(x, y, z))), name)

/* A struct argument holding arrays is declared STRUCT_ARG(type, name), and the kernel opens
 * with PRIVATE_STRUCT(type, name);. Built with -DAXON_PRIVATE_STRUCT_ARGS (the runtime adds it
 * for devices with that quirk, quirks.c), the kernel reads a private copy: Mesa's rusticl on
 * llvmpipe crashes compiling a read of such an array at a computed index in the argument itself
 * (runtime/tools/rusticl/README.md). Elsewhere the two leave the kernel as written. */
#ifdef AXON_PRIVATE_STRUCT_ARGS
#define STRUCT_ARG(type, name) type name##_arg
#define PRIVATE_STRUCT(type, name) type name = name##_arg
#else
#define STRUCT_ARG(type, name) type name
#define PRIVATE_STRUCT(type, name)
#endif

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
#define LD_U16(p, i) ((int)((__global const ushort *)(p))[i])
#define LD_U32(p, i) (((__global const uint *)(p))[i])
#define LD_U64(p, i) (((__global const ulong *)(p))[i])
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
#define ST_U16(p, i, v) (((__global ushort *)(p))[i] = (ushort)(long)(v))
#define ST_U32(p, i, v) (((__global uint *)(p))[i] = (uint)(long)(v))
#define ST_U64(p, i, v) (((__global ulong *)(p))[i] = (ulong)(v))
#define ST_BOOL(p, i, v) (((__global uchar *)(p))[i] = (uchar)((v) != 0))
/* 8-bit floats: 1 sign bit, E exponent bits (bias B), M = 7 - E mantissa bits. float8_e4m3fn
 * (E 4, B 7) has no infinities and one NaN pattern (S.1111.111); PyTorch saturates it, so
 * whatever rounds past 448 (infinity included) becomes +-448. float8_e5m2 (E 5, B 15) is
 * IEEE-like: overflow is infinity. Conversion from float rounds to nearest even, as PyTorch's
 * CPU does (c10/util/Float8_*.h). */
inline float f8_to_float(uint v, uint mant_bits, int bias, int has_inf) {
  uint sign = (v & 0x80u) << 24, mag = v & 0x7fu, exp = mag >> mant_bits;
  uint mant = mag & ((1u << mant_bits) - 1u), exp_max = 0x7fu >> mant_bits;
  float r;
  if (exp == 0) /* subnormal: mant * 2^(1 - bias - mant_bits) */
    r = ldexp((float)mant, 1 - bias - (int)mant_bits);
  else if (has_inf && exp == exp_max)
    r = mant ? NAN : INFINITY;
  else if (!has_inf && mag == 0x7fu)
    r = NAN;
  else
    r = as_float(((exp + 127u - (uint)bias) << 23) | (mant << (23 - mant_bits)));
  return as_float(as_uint(r) | sign);
}
/* overflow_from: the float bits (magnitude) from which the result is the overflow pattern. */
inline uchar float_to_f8(float f, uint mant_bits, int bias, uint overflow_from, uint overflow) {
  uint bits = as_uint(f), sign = (bits >> 24) & 0x80u, mag = bits & 0x7fffffffu, r;
  if (mag > 0x7f800000u)
    r = 0x7fu; /* NaN */
  else if (mag >= overflow_from)
    r = overflow;
  else if (mag < (uint)(128 - bias) << 23) /* below the smallest normal: the subnormal grid */
    r = (uint)rint(ldexp(as_float(mag), bias - 1 + (int)mant_bits));
  else { /* drop 23 - M mantissa bits, rounding half to even, and rebias the exponent */
    uint shift = 23 - mant_bits, odd = (mag >> shift) & 1u;
    r = (mag + ((uint)(bias - 127) << 23) + (1u << (shift - 1)) - 1u + odd) >> shift;
  }
  return (uchar)(r | sign);
}
#define LD_F8E4M3(p, i) f8_to_float(((__global const uchar *)(p))[i], 3, 7, 0)
#define LD_F8E5M2(p, i) f8_to_float(((__global const uchar *)(p))[i], 2, 15, 1)
/* e4m3fn: 464 (0x43e80000, the midpoint above 448) and above is 448; e5m2: 65536
 * (0x47800000) and above is infinity. */
#define ST_F8E4M3(p, i, v) \
  (((__global uchar *)(p))[i] = float_to_f8((float)(v), 3, 7, 0x43e80000u, 0x7eu))
#define ST_F8E5M2(p, i, v) \
  (((__global uchar *)(p))[i] = float_to_f8((float)(v), 2, 15, 0x47800000u, 0x7cu))
/* Complex numbers are (real, imaginary) pairs of float or double. ST_C64 stores a complex
 * value; ST_C64_REAL a real one (imaginary part zero), for casts from the real types. */
#define LD_C64(p, i) vload2((i), (__global const float *)(p))
#define ST_C64(p, i, v) vstore2(convert_float2(v), (i), (__global float *)(p))
#define ST_C64_REAL(p, i, v) vstore2((float2)((float)(v), 0.0f), (i), (__global float *)(p))
#ifdef HAS_FP64
#define LD_C128(p, i) vload2((i), (__global const double *)(p))
#define ST_C128(p, i, v) vstore2(convert_double2(v), (i), (__global double *)(p))
#define ST_C128_REAL(p, i, v) vstore2((double2)((double)(v), 0.0), (i), (__global double *)(p))
#endif

#if defined(DT_F32)
typedef float CT;
#define IS_FLOAT 1
#define LOAD LD_F32
#define STORE ST_F32
#elif defined(DT_F64)
typedef double CT;
#define IS_FLOAT 1
#define LOAD LD_F64
#define STORE ST_F64
#elif defined(DT_F16)
typedef float CT;
#define IS_FLOAT 1
#define LOAD LD_F16
#define STORE ST_F16
#elif defined(DT_BF16)
typedef float CT;
#define IS_FLOAT 1
#define LOAD LD_BF16
#define STORE ST_BF16
#elif defined(DT_F8E4M3)
typedef float CT;
#define IS_FLOAT 1
#define LOAD LD_F8E4M3
#define STORE ST_F8E4M3
#elif defined(DT_F8E5M2)
typedef float CT;
#define IS_FLOAT 1
#define LOAD LD_F8E5M2
#define STORE ST_F8E5M2
#elif defined(DT_I64)
typedef long CT;
#define LOAD LD_I64
#define STORE ST_I64
#define CT_MIN LONG_MIN
#define CT_MAX LONG_MAX
#elif defined(DT_I32)
typedef int CT;
#define LOAD LD_I32
#define STORE ST_I32
#define CT_MIN INT_MIN
#define CT_MAX INT_MAX
#elif defined(DT_I16)
typedef int CT;
#define LOAD LD_I16
#define STORE ST_I16
#define CT_MIN SHRT_MIN
#define CT_MAX SHRT_MAX
#elif defined(DT_I8)
typedef int CT;
#define LOAD LD_I8
#define STORE ST_I8
#define CT_MIN CHAR_MIN
#define CT_MAX CHAR_MAX
#elif defined(DT_U8)
typedef int CT;
#define LOAD LD_U8
#define STORE ST_U8
#define IS_UNSIGNED 1
#define CT_MIN 0
#define CT_MAX UCHAR_MAX
#elif defined(DT_U16)
typedef int CT;
#define LOAD LD_U16
#define STORE ST_U16
#define IS_UNSIGNED 1
#define CT_MIN 0
#define CT_MAX USHRT_MAX
#elif defined(DT_U32)
typedef uint CT;
#define LOAD LD_U32
#define STORE ST_U32
#define IS_UNSIGNED 1
#define CT_MIN 0
#define CT_MAX UINT_MAX
#elif defined(DT_U64)
typedef ulong CT;
#define LOAD LD_U64
#define STORE ST_U64
#define IS_UNSIGNED 1
#define CT_MIN 0
#define CT_MAX ULONG_MAX
#elif defined(DT_C64)
typedef float2 CT;
typedef float RT; /* the type of a part */
#define IS_COMPLEX 1
#define LOAD LD_C64
#define STORE ST_C64
#elif defined(DT_C128)
typedef double2 CT;
typedef double RT;
#define IS_COMPLEX 1
#define LOAD LD_C128
#define STORE ST_C128
#elif defined(DT_BOOL)
typedef int CT;
#define LOAD LD_BOOL
#define STORE ST_BOOL
#define IS_UNSIGNED 1
#define IS_BOOL 1
#define CT_MIN 0
#define CT_MAX 1
#else
#error "build with one of -DDT_F32 ... -DDT_BOOL"
#endif

/* CT is a type name, not a macro, so that a block may redeclare it: the vector kernels
 * (EW_VEC in ew_common.cl) evaluate an op's expression with CT as an 8-wide vector. */

/* Eight halves a lane at a time: PoCL compiles vload_half8 / vstore_half8 into 16-byte-aligned
 * vector accesses, which crash at an address that is only 2-byte aligned (a slice: float16
 * x[3:].exp(), found by the differential fuzzer); the spec asks only the element's alignment. */
inline float8 axon_vload_half8(__global const half *p) {
  return (float8)(vload_half(0, p), vload_half(1, p), vload_half(2, p), vload_half(3, p),
                  vload_half(4, p), vload_half(5, p), vload_half(6, p), vload_half(7, p));
}
inline void axon_vstore_half8_rte(float8 v, __global half *p) {
  vstore_half_rte(v.s0, 0, p);
  vstore_half_rte(v.s1, 1, p);
  vstore_half_rte(v.s2, 2, p);
  vstore_half_rte(v.s3, 3, p);
  vstore_half_rte(v.s4, 4, p);
  vstore_half_rte(v.s5, 5, p);
  vstore_half_rte(v.s6, 6, p);
  vstore_half_rte(v.s7, 7, p);
}

/* Eight consecutive elements as a vector of float, by storage type (double8 is wider than
 * PoCL's AVX2 target, so float64 has none): VLD_x(p, e) reads elements e .. e+7 of p (a
 * __global uchar*), VST_x(p, e, v) writes them. VLOAD / VSTORE are this program's type's. */
#define VLD_F32(p, e) vload8(0, (__global const float *)(p) + (e))
#define VLD_F16(p, e) axon_vload_half8((__global const half *)(p) + (e))
#define VLD_BF16(p, e) as_float8(convert_uint8(vload8(0, (__global const ushort *)(p) + (e))) << 16)
#define VST_F32(p, e, v) vstore8((v), 0, (__global float *)(p) + (e))
#define VST_F16(p, e, v) axon_vstore_half8_rte((v), (__global half *)(p) + (e))
#define VST_BF16(p, e, v) vstore8(float8_to_bf16(v), 0, (__global ushort *)(p) + (e))
/* Bools as lane masks (-1 true, 0 false, as vector comparisons give them). */
#define VLD_BOOL(p, e) (convert_int8(vload8(0, (__global const uchar *)(p) + (e))) != 0)
#define VST_BOOL(p, e, m) vstore8(convert_uchar8(m) & (uchar8)1, 0, (__global uchar *)(p) + (e))
#if defined(DT_F32)
typedef float8 VCT;
#define VLOAD VLD_F32
#define VSTORE VST_F32
#elif defined(DT_F16)
typedef float8 VCT;
#define VLOAD VLD_F16
#define VSTORE VST_F16
#elif defined(DT_BF16)
typedef float8 VCT;
#define VLOAD VLD_BF16
#define VSTORE VST_BF16
#endif

/* float_to_bf16 on eight lanes. On a little-endian device the upper half of each rounded
 * word is the odd ushort of the same bytes, which avoids a lane-by-lane narrowing (PoCL
 * narrows uint8 to ushort8 one lane at a time). */
inline ushort8 float8_to_bf16(float8 f) {
  uint8 u = as_uint8(f);
  uint8 rounded = u + 0x7fffu + ((u >> 16) & 1u);
  uint8 r = select(rounded, u | 0x400000u, (u & 0x7fffffffu) > 0x7f800000u);
#ifdef __ENDIAN_LITTLE__
  return as_ushort16(r).odd;
#else
  return convert_ushort8(r >> 16);
#endif
}
#ifdef VLOAD
#define HAS_VCT 1
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
  long strides[4 * AXON_MAX_DIMS]; /* the host's [4][AXON_MAX_DIMS]: read with GEOM_STRIDE */
} ew_geom;

/* Operand k's stride along dimension d in a geometry's flat strides array. Kernel argument
 * structs hold no two-dimensional arrays: Mesa's rusticl sizes such a struct wrongly and
 * refuses the argument (runtime/tools/rusticl/README.md); the memory layout is the same. */
#define GEOM_STRIDE(g, k, d) ((g).strides[(k)*AXON_MAX_DIMS + (d)])

/* Element offsets of linear index i for the first n operands. */
inline void ew_offsets(const ew_geom *g, long i, int n, long *off) {
  for (int k = 0; k < n; k++) off[k] = 0;
  for (long d = 0; d < g->ndim; d++) {
    long size = g->sizes[d];
    long idx = d + 1 < g->ndim ? i % size : i;
    i = d + 1 < g->ndim ? i / size : 0;
    for (int k = 0; k < n; k++) off[k] += idx * GEOM_STRIDE(*g, k, d);
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
