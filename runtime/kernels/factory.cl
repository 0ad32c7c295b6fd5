/*
 * Factories whose element i depends only on i (run as "factory/<name>" through
 * axon_elementwise). The output is 1-D with g.numel = steps elements; alpha is the start and
 * s1 the end, both already converted to the output's type by the caller, and beta a quantity
 * the caller computes in the output's type (so float16 rounds as PyTorch's does).
 *
 * Like PyTorch, the first half counts up from the start and the second half down from the
 * end, so both ends come out exact whatever the rounding of the step. Integer outputs are
 * computed in a floating type by the caller and truncated on conversion.
 */
#ifdef IS_FLOAT

/* Explicit fused multiply-adds and no others: PyTorch's CPU kernels (built for AVX2 / AVX-512)
 * contract start + step * i into one, so the points round once. */
#pragma OPENCL FP_CONTRACT OFF

#ifdef HAS_FP64
typedef double WT;
#else
typedef float WT;
#endif

/* A linspace point start + step * k. float16 / bfloat16: PyTorch's Half and BFloat16 round
 * every operation's result (k, the product, the sum), so these do too; wider types round once
 * (a fused multiply-add). */
#if defined(DT_F16)
inline float rnd(float x) {
  ushort h;
  vstore_half_rte(x, 0, (__private half *)&h);
  return vload_half(0, (__private const half *)&h);
}
#define POINT(a, step, k) rnd((a) + rnd((step) * rnd((float)(k))))
#elif defined(DT_BF16)
inline float rnd(float x) { return as_float((uint)float_to_bf16(x) << 16); }
#define POINT(a, step, k) rnd((a) + rnd((step) * rnd((float)(k))))
#else
#define POINT(a, step, k) fma((step), (CT)(k), (a))
#endif

/* beta: the step (end - start) / (steps - 1) in the output's type. */
KERNEL(ew_linspace)(EW_SIG) {
  EW_BEGIN(0)
  long back = g.numel - 1 - i;
  CT v = i < g.numel / 2 ? POINT(alpha, beta, i) : POINT(s1, -beta, back);
  STORE(PTR(o), off[0], v);
}

/* base ^ (the linspace point), the exponent and power in double where the device has it, as
 * PyTorch computes them. beta: end - start. The base arrives as the sum s2 + s3 of two CT
 * values, so a float kernel still gets a double base (10, 2 and e alike) to within 48 bits. */
KERNEL(ew_logspace)(EW_SIG) {
  EW_BEGIN(0)
  WT base = (WT)s2 + (WT)s3;
  WT step = (WT)beta / (WT)(g.numel - 1);
  long back = g.numel - 1 - i;
  WT e = i < g.numel / 2 ? fma(step, (WT)i, (WT)alpha) : fma(-step, (WT)back, (WT)s1);
  STORE(PTR(o), off[0], pow(base, e));
}

#endif
