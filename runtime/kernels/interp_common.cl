/*
 * Shared by resample.cl (bicubic and antialiased bilinear) and grid_sample.cl, which include
 * it: cubic convolution weights, and the float add into global memory that their gradients
 * scatter with.
 */
#ifndef AXON_INTERP_COMMON_CL
#define AXON_INTERP_COMMON_CL

#ifdef IS_FLOAT

#ifdef DT_F64
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

/* Float add into global memory by compare-and-swap on the value's bit pattern (an integer of
 * the same width), the portable float atomic add. The accumulator holds CT: float for float32,
 * float16 and bfloat16, double for float64. */
#ifdef DT_F64
#define ACC_BITS long
#define ACC_CMPXCHG atom_cmpxchg
#define ACC_AS_BITS as_long
#define ACC_AS_VALUE as_double
#else
#define ACC_BITS int
#define ACC_CMPXCHG atomic_cmpxchg
#define ACC_AS_BITS as_int
#define ACC_AS_VALUE as_float
#endif
inline void acc_add(__global uchar *p, long i, CT v) {
  if (v == 0) return;
  volatile __global ACC_BITS *a = (volatile __global ACC_BITS *)p + i;
  ACC_BITS old = *a, seen;
  do {
    seen = old;
    old = ACC_CMPXCHG(a, seen, ACC_AS_BITS(ACC_AS_VALUE(seen) + v));
  } while (old != seen);
}

/* ---- cubic convolution (PyTorch's A = -0.75) ------------------------------------------------ */

#define CUBIC_A ((CT)-0.75)
/* |x| <= 1 and 1 < |x| < 2, and their derivatives. */
#define CUBIC1(x) ((((CUBIC_A + 2) * (x) - (CUBIC_A + 3)) * (x)) * (x) + 1)
#define CUBIC2(x) ((((CUBIC_A * (x)-5 * CUBIC_A) * (x) + 8 * CUBIC_A) * (x)) - 4 * CUBIC_A)
#define DCUBIC1(x) ((3 * (CUBIC_A + 2) * (x)-2 * (CUBIC_A + 3)) * (x))
#define DCUBIC2(x) ((3 * CUBIC_A * (x)-10 * CUBIC_A) * (x) + 8 * CUBIC_A)

/* Weights of taps -1, 0, 1, 2 around a point at fraction t, and their derivatives in t. */
inline void cubic_weights(CT t, CT *w) {
  w[0] = CUBIC2(t + 1);
  w[1] = CUBIC1(t);
  w[2] = CUBIC1(1 - t);
  w[3] = CUBIC2(2 - t);
}
inline void cubic_weights_grad(CT t, CT *w) {
  w[0] = DCUBIC2(t + 1);
  w[1] = DCUBIC1(t);
  w[2] = -DCUBIC1(1 - t);
  w[3] = -DCUBIC2(2 - t);
}

#endif
#endif
