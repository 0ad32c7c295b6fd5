/*
 * The types of the launch descriptors that the C runtime and the OpenCL kernels share. A
 * family's descriptor is defined once, in kernels/NAME_args.h, and both sides include that
 * text: the C runtime (and through runtime/include/axon/NAME.h the C++ glue) with #include, the
 * kernels with #include too (the program cache expands it: kernels/NAME.cl includes
 * "NAME_args.h"). A field misspelt on either side then fails that side's compiler, and a
 * layout the two sides disagree on cannot arise: AXON_ARGS_SIZE fixes each descriptor's size,
 * checked by both compilers.
 *
 * Integers are axon_i64 (OpenCL long) or axon_i32 (OpenCL int); no pointers, no size_t, no
 * bool. Reals are axon_real: the value as float and as the bits of the double, so a float64
 * program reads the double (ARG_REAL) and a program without fp64 never sees one.
 */
#ifndef AXON_KERNEL_ARGS_H
#define AXON_KERNEL_ARGS_H

#ifdef __OPENCL_VERSION__
typedef long axon_i64;
typedef int axon_i32;
#else
#include <stdint.h>
#include <string.h>
typedef int64_t axon_i64;
typedef int32_t axon_i32;
#endif

typedef struct axon_real {
  float f;       /* the value rounded to float: what float32 / float16 / bfloat16 programs read */
  axon_i32 pad;  /* zero */
  axon_i64 bits; /* the value as a double's bits: what float64 programs read */
} axon_real;

/* typedef char NAME_size_check[1]: a descriptor of another size fails to compile, in C and in
 * OpenCL alike. */
#define AXON_ARGS_SIZE(type, bytes) typedef char type##_size_check[sizeof(type) == (bytes) ? 1 : -1]
AXON_ARGS_SIZE(axon_real, 16);

#ifdef __OPENCL_VERSION__
/* A real argument in the compute type CT. */
#ifdef DT_F64
#define ARG_REAL(r) as_double((r).bits)
#else
#define ARG_REAL(r) ((CT)(r).f)
#endif
#else
static inline axon_real axon_real_of(double value) {
  axon_real r;
  r.f = (float)value;
  r.pad = 0;
  memcpy(&r.bits, &value, sizeof value);
  return r;
}
#endif

#endif
