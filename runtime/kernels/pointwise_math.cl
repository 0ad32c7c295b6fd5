/*
 * The math of every pointwise op, defined once. Rows of the pointwise table
 * (kernels/pointwise_ops.def) name an op; this header says what it computes. The eager kernels
 * (ew_common.cl expands the table into kernels ew_<op>, ewr_<op>, ewv_<op>) and the kernels
 * torch.compile generates (torch_axon/inductor/overrides.py calls these macros by the same
 * table) both include it, so eager and compiled code cannot drift apart.
 *
 * An op's math is a macro PW_<CLASS>_<op>(T, a, b, c, alpha, beta): T the type the values are
 * computed in, a b c the operands (as many as the op's arity), alpha and beta its scalar
 * parameters (add's alpha, leaky_relu's slope, hardtanh's bounds ...). CLASS is FLOAT (float,
 * double, and float16 / bfloat16 / float8 computed in float), INT (the integer types; bool
 * too unless the row says otherwise), BOOL, or ANY where one expression serves every class.
 * A macro is an expression of its operands, so the same text also serves the eight lanes of
 * the eager vector form (T = float8: comparisons then yield lane masks, which ?: selects by).
 * Where the math needs statements, or differs by type, it calls an overloadable helper
 * defined below for float, float8 and double (FLOAT) or int, uint, long and ulong (INT).
 *
 * Needs nothing from common.cl: generated kernels carry this file without it.
 */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#define PW_OVERLOAD inline __attribute__((overloadable))

/* Constants, cast to the computing type where used (unsuffixed: float without fp64). */
#define PW_SQRT1_2 0.70710678118654752440
#define PW_SQRT_2_OVER_PI 0.79788456080286535588
#define PW_INV_SQRT_2PI 0.39894228040143267794
#define PW_GELU_KAPPA 0.044715
#define PW_PI 3.14159265358979323846
#define PW_LOG2E 1.44269504088896340736

/* ---- helpers by type -------------------------------------------------------------------- */

/* erf in float as a rational function of x (odd numerator, even denominator over x^2; the
 * published minimax fit Eigen and XLA use), max error 4.5e-7 on the whole line. PoCL's erf
 * does not vectorise and costs about 14 ns a call on a CPU; this is straight-line code, for a
 * float and for the eight lanes of the vector form. Beyond |x| = 4, erf is +-1 in float. */
#define PW_ERF_FLOAT(T)                                                                  \
  PW_OVERLOAD T axon_erf(T a) {                                                          \
    T x = clamp(a, -4.0f, 4.0f), x2 = x * x; /* clamp turns NaN to -4 */                 \
    T p = (T)-2.72614225801306e-10f;                                                     \
    p = fma(x2, p, (T)2.77068142495902e-08f);                                            \
    p = fma(x2, p, (T)-2.10102402082508e-06f);                                           \
    p = fma(x2, p, (T)-5.69250639462346e-05f);                                           \
    p = fma(x2, p, (T)-7.34990630326855e-04f);                                           \
    p = fma(x2, p, (T)-2.95459980854025e-03f);                                           \
    p = fma(x2, p, (T)-1.60960333262415e-02f);                                           \
    T q = (T)-1.45660718464996e-05f;                                                     \
    q = fma(x2, q, (T)-2.13374055278905e-04f);                                           \
    q = fma(x2, q, (T)-1.68282697438203e-03f);                                           \
    q = fma(x2, q, (T)-7.37332916720468e-03f);                                           \
    q = fma(x2, q, (T)-1.42647390514189e-02f);                                           \
    /* below 2^-20, erf x rounds to 2x/sqrt(pi) (and x * p would lose a subnormal's bits) */ \
    return isnan(a) ? a : (fabs(a) < 1e-6f ? a * 1.1283791670955126f : x * p / q);       \
  }
PW_ERF_FLOAT(float)
PW_ERF_FLOAT(float8)

/* exp of a float as straight-line arithmetic, within 2 ulp: n = x / ln2 rounded by adding and
 * taking away 1.5 * 2^23 (rint is a call under PoCL), r = x - n ln2 in two parts (Cody-Waite),
 * e^r by Cephes' degree-6 polynomial, 2^n made in the exponent bits in two halves so results
 * that overflow or fall to subnormals round once. The library's scalar exp is a call per
 * element (4M floats: 2.6 ms under PoCL; this form 1.9). Below -104 the result is 0 (e^-104 is
 * under half the least subnormal) from a zero factor: the product of the two halves
 * underflowing to zero costs x86 a microcode assist per element, and masked softmax takes
 * e^-inf for every masked score. The eight-lane form keeps the library's vector exp, which
 * PoCL vectorises. */
PW_OVERLOAD float axon_exp(float x) {
  float xc = fmin(fmax(x, -104.0f), 89.0f);
  float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = fma(n, -0.693359375f, xc);
  r = fma(n, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = fma(p, r, 1.3981999507e-3f);
  p = fma(p, r, 8.3334519073e-3f);
  p = fma(p, r, 4.1665795894e-2f);
  p = fma(p, r, 1.6666665459e-1f);
  p = fma(p, r, 5.0000001201e-1f);
  p = fma(p, r * r, r + 1.0f);
  int k = (int)n, k1 = k >> 1;
  float y = p * as_float(x < -104.0f ? 0 : (k1 + 127) << 23) * as_float((k - k1 + 127) << 23);
  return x != x ? x : y;
}
PW_OVERLOAD float8 axon_exp(float8 x) { return exp(x); }

/* tanh that reaches +-1: some OpenCL libraries (PoCL's float tanh) stop one ulp short, even
 * at infinity. Beyond these bounds tanh rounds to +-1 in float / double. */
PW_OVERLOAD float axon_tanh(float a) { return fabs(a) > 9.1f ? copysign(1.0f, a) : tanh(a); }
PW_OVERLOAD float8 axon_tanh(float8 a) {
  return select(tanh(a), copysign((float8)1.0f, a), fabs(a) > 9.1f);
}

/* ---- sin, cos, tan and fmod on eight lanes, where PoCL's own vector functions are slow (sin
 * and cos 2 to 3 ns an element, fmod 3); the scalar forms call the library. Maximum errors
 * against float64 are in docs/op-coverage.md ("Vector math"). */
PW_OVERLOAD float axon_sin(float x) { return sin(x); }
PW_OVERLOAD float axon_cos(float x) { return cos(x); }
PW_OVERLOAD float axon_tan(float x) { return tan(x); }
PW_OVERLOAD float axon_fmod(float a, float b) { return fmod(a, b); }
/* sin and cos: the quadrant j = rint(x * 2/pi), r = x - j pi/2 with pi/2 in three parts (fma:
 * Cody and Waite's reduction), then Cephes' minimax polynomials on [-pi/4, pi/4]. Lanes past
 * |x| = 2^13, infinities and NaN send the whole vector to the library's full reduction. */
#define PIO2_1 1.5707963705062866f
#define PIO2_2 -4.371138828673793e-08f
#define PIO2_3 -1.7151245100058819e-15f
inline float8 axon_sin_poly(float8 r, float8 z) {
  float8 p = fma(z, (float8)-1.9515295891e-4f, (float8)8.3321608736e-3f);
  p = fma(z, p, (float8)-1.6666654611e-1f);
  return fma(p * z, r, r);
}
inline float8 axon_cos_poly(float8 z) {
  float8 p = fma(z, (float8)2.443315711809948e-5f, (float8)-1.388731625493765e-3f);
  p = fma(z, p, (float8)4.166664568298827e-2f);
  return fma(p * z, z, fma(z, (float8)-0.5f, (float8)1.0f));
}
/* sin(x) for quadrant offset 0, cos(x) for 1 (cos x = sin(x + pi/2)). */
inline float8 axon_sin_quadrant(float8 x, int offset) {
  float8 j = rint(x * 0.6366197466850281f);
  float8 r = fma(-j, (float8)PIO2_1, x);
  r = fma(-j, (float8)PIO2_2, r);
  r = fma(-j, (float8)PIO2_3, r);
  r = select(r, x, j == 0.0f); /* exact there, and keeps sin(-0) = -0 */
  float8 z = r * r;
  int8 q = convert_int8(j) + offset;
  float8 v = select(axon_sin_poly(r, z), axon_cos_poly(z), (q & 1) != 0);
  return select(v, -v, (q & 2) != 0);
}
/* The library lane by lane: PoCL's float8 sin, cos and tan are wrong for subnormal inputs
 * (sin(1e-40) gave 7.8e-3), its scalar functions are not. */
#define PW_LANES8(f, x) \
  ((float8)(f((x).s0), f((x).s1), f((x).s2), f((x).s3), f((x).s4), f((x).s5), f((x).s6), f((x).s7)))
PW_OVERLOAD float8 axon_sin(float8 x) {
  return any(!(fabs(x) <= 8192.0f)) ? PW_LANES8(sin, x) : axon_sin_quadrant(x, 0);
}
PW_OVERLOAD float8 axon_cos(float8 x) {
  return any(!(fabs(x) <= 8192.0f)) ? PW_LANES8(cos, x) : axon_sin_quadrant(x, 1);
}
/* tan x rounds to x below 2^-13; that also keeps subnormals from the float8 library call. A lane
 * past 2^13 (or infinite, or NaN) spoils the other lanes of PoCL's float8 tan (3.4e38 in one lane
 * changed tan(0.5) in another): such vectors go lane by lane. */
PW_OVERLOAD float8 axon_tan(float8 x) {
  if (any(!(fabs(x) <= 8192.0f))) return PW_LANES8(tan, x);
  return select(tan(x), x, fabs(x) < 1.2e-4f);
}
/* fmod: q = trunc(a / b), a - q b by fma, which is exact when q is; a / b rounding up to the
 * next integer makes q one too large, which shows as a result of the wrong sign and is undone
 * by one step of b. Quotients from 2^23 up (q no longer exact), b = 0, infinite a and NaN go to
 * the library; an infinite b leaves a. */
PW_OVERLOAD float8 axon_fmod(float8 a, float8 b) {
  float8 quotient = a / b;
  if (any(!(fabs(quotient) < 8388608.0f))) return fmod(a, b);
  float8 r = fma(-trunc(quotient), b, a);
  r = select(r, r + copysign(b, a), r != 0.0f && signbit(r) != signbit(a));
  return select(copysign(r, a), a, isinf(b));
}

/* Helpers that need statements, once per scalar float type (instantiated at the end of the
 * file: they use the ops' macros). */
#define PW_FLOAT_HELPERS(T)                                       \
  /* Floor division as PyTorch defines it (div_floor_floating). */               \
  PW_OVERLOAD T axon_floor_divide(T a, T b) {                                     \
    if (b == 0) return a / b;                                                     \
    T mod = fmod(a, b);                                                           \
    T div = (a - mod) / b;                                                        \
    if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;                               \
    if (div == 0) return copysign((T)0, a / b);                                   \
    T fl = floor(div);                                                            \
    return div - fl > (T)0.5 ? fl + 1 : fl;                                       \
  }                                                                               \
  PW_OVERLOAD T axon_round_decimals(T a, T ten_pow, T negative) {                 \
    return negative > 0 ? rint(a / ten_pow) * ten_pow : rint(a * ten_pow) / ten_pow; \
  }                                                                               \
  PW_OVERLOAD T axon_logaddexp2(T a, T b) {                                       \
    if (isinf(a) && a == b) return a;                                             \
    return PW_FLOAT_maximum(T, a, b, , , ) + log1p(exp2(-fabs(a - b))) * (T)PW_LOG2E; \
  }                                                                               \
  PW_OVERLOAD T axon_logit_backward(T g, T x, T eps) {                            \
    T lo = eps < 0 ? (T)0 : eps, hi = (T)1 - lo;                                  \
    if (x < lo || x > hi) return eps < 0 ? (T)NAN : (T)0;                         \
    /* At the ends PyTorch gives g * inf, whatever the sign of a zero x. */       \
    if (x == 0 || x == 1) return g * (T)INFINITY;                                 \
    return g / (x * ((T)1 - x));                                                  \
  }                                                                               \
  PW_OVERLOAD T axon_gelu_tanh_backward(T g, T x) {                               \
    T inner = (T)PW_SQRT_2_OVER_PI * (x + (T)PW_GELU_KAPPA * x * x * x); \
    T t = axon_tanh(inner);                                                       \
    T left_derivative = (T)0.5 * ((T)1 + t);                                      \
    T right_derivative =                                                          \
        (T)0.5 * x * ((T)1 - t * t) * (T)PW_SQRT_2_OVER_PI * ((T)1 + 3 * (T)PW_GELU_KAPPA * x * x); \
    return g * (left_derivative + right_derivative);                              \
  }                                                                               \
  PW_OVERLOAD T axon_glu_backward_gate(T g, T first, T gate) {                    \
    T s = PW_FLOAT_sigmoid(T, gate, , , , );                                      \
    return s * ((T)1 - s) * g * first;                                            \
  }                                                                               \
  /* Losses: x the input, t the target; the backward forms read the gradient g and get norm, \
   * the reduction's scale (1 / n for a mean). */                                \
  PW_OVERLOAD T axon_smooth_l1(T x, T t, T beta) {                                \
    T z = fabs(x - t);                                                            \
    return z < beta ? (T)0.5 * z * z / beta : z - (T)0.5 * beta;                  \
  }                                                                               \
  PW_OVERLOAD T axon_smooth_l1_backward(T g, T x, T t, T norm, T beta) {          \
    T d = x - t;                                                                  \
    /* beta 0 is the l1 loss, whose gradient at d == 0 is 0. */                   \
    if (beta <= 0) return norm * g * (T)((d > 0) - (d < 0));                      \
    return d <= -beta ? -norm * g : (d >= beta ? norm * g : norm * d * g / beta); \
  }                                                                               \
  PW_OVERLOAD T axon_huber(T x, T t, T delta) {                                   \
    T z = fabs(x - t);                                                            \
    return z < delta ? (T)0.5 * z * z : delta * (z - (T)0.5 * delta);             \
  }                                                                               \
  PW_OVERLOAD T axon_huber_backward(T g, T x, T t, T norm, T delta) {             \
    T d = x - t;                                                                  \
    return d <= -delta ? -norm * g * delta : (d >= delta ? norm * g * delta : norm * d * g); \
  }                                                                               \
  /* Binary cross entropy clamps each log at -100 (so 0 and 1 give finite losses). */ \
  PW_OVERLOAD T axon_clamped_log(T v) { return v < (T)-100 ? (T)-100 : v; }       \
  PW_OVERLOAD T axon_bce(T x, T t, T w) {                                         \
    return w * ((t - (T)1) * axon_clamped_log(log1p(-x)) - t * axon_clamped_log(log(x))); \
  }                                                                               \
  PW_OVERLOAD T axon_bce_backward(T g, T x, T t, T norm) {                        \
    T denom = ((T)1 - x) * x;                                                     \
    return norm * g * (x - t) / (denom < (T)1e-12 ? (T)1e-12 : denom);            \
  }
#ifdef cl_khr_fp64
PW_OVERLOAD double axon_erf(double a) { return erf(a); }
PW_OVERLOAD double axon_exp(double x) { return exp(x); }
PW_OVERLOAD double axon_tanh(double a) { return fabs(a) > 19.1 ? copysign(1.0, a) : tanh(a); }
PW_OVERLOAD double axon_sin(double x) { return sin(x); }
PW_OVERLOAD double axon_cos(double x) { return cos(x); }
PW_OVERLOAD double axon_tan(double x) { return tan(x); }
PW_OVERLOAD double axon_fmod(double a, double b) { return fmod(a, b); }
#endif

/* nextafter steps in the storage type: float16 / bfloat16 values are computed in float, where
 * the builtin would step by a float ulp. bfloat16 is the upper half of a float, stepped on its
 * bits; float16 steps by its ulp at the value's binade (10 mantissa bits, exponents >= -14). */
inline float axon_nextafter_bf16(float a, float b) {
  if (isnan(a) || isnan(b)) return a + b;
  if (a == b) return b;
  if (a == 0) return copysign(as_float(1u << 16), b);
  return as_float(as_uint(a) + (((b > a) == (a > 0)) ? 0x10000u : (uint)-0x10000));
}
inline float axon_nextafter_f16(float a, float b) {
  if (isnan(a) || isnan(b)) return a + b;
  if (a == b) return b;
  if (a == 0) return copysign(ldexp(1.0f, -24), b);
  if (isinf(a)) return copysign(65504.0f, a);
  float m = fabs(a);
  int e = max(ilogb(m), -14);
  float ulp = ldexp(1.0f, e - 10);
  int away = (b > a) == (a > 0);
  /* Just below a power of two the ulp is half as large. */
  if (!away && e > -14 && m == ldexp(1.0f, e)) ulp *= 0.5f;
  return copysign(away ? m + ulp : m - ulp, a);
}

/* Integer helpers, once per integer type (narrower types compute in int, as C promotes). */
#define PW_INT_HELPERS(T)                                                      \
  PW_OVERLOAD T axon_int_pow(T a, T b) {                                       \
    if (b < 0) return a == 1 ? 1 : (a == (T)-1 ? ((b & 1) ? (T)-1 : 1) : 0);  \
    T r = 1;                                                                   \
    while (b) {                                                                \
      if (b & 1) r *= a;                                                       \
      b >>= 1;                                                                 \
      a *= a;                                                                  \
    }                                                                          \
    return r;                                                                  \
  }                                                                            \
  /* C's a % b where C leaves it undefined: 0 for a zero divisor, as PyTorch's CPU gives,  \
   * and for a signed divisor of -1, where the smallest value's quotient overflows (PoCL  \
   * answered -1 for INT_MIN % -1; the remainder is 0). */                     \
  PW_OVERLOAD T axon_int_fmod(T a, T b) {                                      \
    return (b == 0 || ((T)-1 < (T)0 && b == (T)-1)) ? (T)0 : a % b;           \
  }                                                                            \
  /* Python's floor division and remainder (the result takes the divisor's sign); a zero \
   * divisor gives 0, as PyTorch's CPU does for remainder. */                 \
  PW_OVERLOAD T axon_int_floor_divide(T a, T b) {                              \
    if (b == 0) return 0;                                                      \
    T q = a / b;                                                               \
    return (axon_int_fmod(a, b) != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;     \
  }                                                                            \
  PW_OVERLOAD T axon_int_remainder(T a, T b) {                                 \
    T r = axon_int_fmod(a, b);                                                 \
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;                       \
  }
PW_INT_HELPERS(int)
PW_INT_HELPERS(uint)
PW_INT_HELPERS(long)
PW_INT_HELPERS(ulong)

/* ---- the ops --------------------------------------------------------------------------- */

/* Every type. */
#define PW_ANY_pow_square(T, a, b, c, alpha, beta) ((a) * (a))
#define PW_ANY_pow_cube(T, a, b, c, alpha, beta) ((a) * (a) * (a))
/* a + alpha b in one rounding, as PyTorch's CPU kernels compute it (a fused multiply-add in
 * float for every float type): a compiler left to contract or not gave bfloat16 results one
 * rounding apart in the scalar and the vector form. */
#define PW_FLOAT_add(T, a, b, c, alpha, beta) fma((T)(alpha), (b), (a))
#define PW_INT_add(T, a, b, c, alpha, beta) ((alpha) * (b) + (a))
#define PW_FLOAT_sub(T, a, b, c, alpha, beta) fma(-(T)(alpha), (b), (a))
#define PW_INT_sub(T, a, b, c, alpha, beta) (-(alpha) * (b) + (a))
#define PW_ANY_mul(T, a, b, c, alpha, beta) ((a) * (b))
#define PW_ANY_addcmul(T, a, b, c, alpha, beta) ((a) + (alpha) * (b) * (c))
#define PW_ANY_eq(T, a, b, c, alpha, beta) ((a) == (b))
#define PW_ANY_ne(T, a, b, c, alpha, beta) ((a) != (b))
#define PW_ANY_lt(T, a, b, c, alpha, beta) ((a) < (b))
#define PW_ANY_le(T, a, b, c, alpha, beta) ((a) <= (b))
#define PW_ANY_gt(T, a, b, c, alpha, beta) ((a) > (b))
#define PW_ANY_ge(T, a, b, c, alpha, beta) ((a) >= (b))
#define PW_ANY_logical_and(T, a, b, c, alpha, beta) (((a) != 0) && ((b) != 0))
#define PW_ANY_logical_or(T, a, b, c, alpha, beta) (((a) != 0) || ((b) != 0))
#define PW_ANY_logical_xor(T, a, b, c, alpha, beta) (((a) != 0) != ((b) != 0))
#define PW_ANY_logical_not(T, a, b, c, alpha, beta) ((a) == 0)
/* NaN stays NaN (a < 0 is false for it). */
#define PW_ANY_relu(T, a, b, c, alpha, beta) ((a) < 0 ? (T)0 : (a))
/* NaN operands propagate, as in PyTorch; that includes NaN bounds of clamp. clamp is
 * min(max(a, lo), hi), so lo > hi gives hi everywhere. */
#define PW_FLOAT_maximum(T, a, b, c, alpha, beta) \
  (isnan(a) || isnan(b) ? (isnan(a) ? (a) : (b)) : ((a) > (b) ? (a) : (b)))
#define PW_FLOAT_minimum(T, a, b, c, alpha, beta) \
  (isnan(a) || isnan(b) ? (isnan(a) ? (a) : (b)) : ((a) < (b) ? (a) : (b)))
#define PW_INT_maximum(T, a, b, c, alpha, beta) ((a) > (b) ? (a) : (b))
#define PW_INT_minimum(T, a, b, c, alpha, beta) ((a) < (b) ? (a) : (b))
#define PW_FLOAT_clamp(T, a, b, c, alpha, beta) \
  PW_FLOAT_minimum(T, PW_FLOAT_maximum(T, a, b, , , ), c, , , )
#define PW_INT_clamp(T, a, b, c, alpha, beta) PW_INT_minimum(T, PW_INT_maximum(T, a, b, , , ), c, , , )
#define PW_FLOAT_clamp_min PW_FLOAT_maximum
#define PW_INT_clamp_min PW_INT_maximum
#define PW_FLOAT_clamp_max PW_FLOAT_minimum
#define PW_INT_clamp_max PW_INT_minimum
#define PW_ANY_hardtanh(T, a, b, c, alpha, beta) \
  ((a) < (alpha) ? (T)(alpha) : ((a) > (beta) ? (T)(beta) : (a)))
#define PW_ANY_hardtanh_backward(T, a, b, c, alpha, beta) \
  (((b) <= (alpha) || (b) >= (beta)) ? (T)0 : (a))
/* threshold(x, other): x <= alpha ? beta : other (threshold_backward is the same with 0). */
#define PW_ANY_threshold(T, a, b, c, alpha, beta) ((a) <= (alpha) ? (T)(beta) : (b))
#define PW_ANY_leaky_relu_backward(T, a, b, c, alpha, beta) ((b) > 0 ? (a) : (a) * (alpha))
#define PW_ANY_neg(T, a, b, c, alpha, beta) (-(a))
/* NaN and -0 give +0, as (0 < a) - (a < 0) does on the CPU; for bool, a itself. */
#define PW_ANY_sign(T, a, b, c, alpha, beta) ((a) > 0 ? (T)1 : ((a) < 0 ? (T)-1 : (T)0))
#define PW_ANY_leaky_relu(T, a, b, c, alpha, beta) ((a) > 0 ? (a) : (a) * (alpha))
#define PW_FLOAT_abs(T, a, b, c, alpha, beta) fabs(a)
#define PW_INT_abs(T, a, b, c, alpha, beta) ((a) < 0 ? -(a) : (a))

/* Float math. */
#define PW_FLOAT_exp(T, a, b, c, alpha, beta) axon_exp(a)
#define PW_FLOAT_exp2(T, a, b, c, alpha, beta) exp2(a)
#define PW_FLOAT_expm1(T, a, b, c, alpha, beta) expm1(a)
#define PW_FLOAT_log(T, a, b, c, alpha, beta) log(a)
#define PW_FLOAT_log2(T, a, b, c, alpha, beta) log2(a)
#define PW_FLOAT_log10(T, a, b, c, alpha, beta) log10(a)
#define PW_FLOAT_log1p(T, a, b, c, alpha, beta) log1p(a)
#define PW_FLOAT_sqrt(T, a, b, c, alpha, beta) sqrt(a)
#define PW_FLOAT_rsqrt(T, a, b, c, alpha, beta) rsqrt(a)
#define PW_FLOAT_reciprocal(T, a, b, c, alpha, beta) ((T)1 / (a))
#define PW_FLOAT_sin(T, a, b, c, alpha, beta) axon_sin(a)
#define PW_FLOAT_cos(T, a, b, c, alpha, beta) axon_cos(a)
#define PW_FLOAT_tan(T, a, b, c, alpha, beta) axon_tan(a)
#define PW_FLOAT_tanh(T, a, b, c, alpha, beta) axon_tanh(a)
#define PW_FLOAT_sigmoid(T, a, b, c, alpha, beta) ((T)1 / ((T)1 + axon_exp(-(a))))
#define PW_FLOAT_erf(T, a, b, c, alpha, beta) axon_erf(a)
#define PW_FLOAT_silu(T, a, b, c, alpha, beta) ((a) * PW_FLOAT_sigmoid(T, a, , , , ))
#define PW_FLOAT_gelu(T, a, b, c, alpha, beta) \
  ((T)0.5 * (a) * ((T)1 + axon_erf((a) * (T)PW_SQRT1_2)))
#define PW_GELU_TANH_INNER(T, a) \
  ((T)PW_SQRT_2_OVER_PI * ((a) + (T)PW_GELU_KAPPA * (a) * (a) * (a)))
#define PW_FLOAT_gelu_tanh(T, a, b, c, alpha, beta) \
  ((T)0.5 * (a) * ((T)1 + axon_tanh(PW_GELU_TANH_INNER(T, a))))
#define PW_FLOAT_softplus(T, a, b, c, alpha, beta) \
  ((a) * (alpha) > (beta) ? (a) : log1p(exp((a) * (alpha))) / (T)(alpha))
#define PW_FLOAT_div(T, a, b, c, alpha, beta) ((a) / (b))
#define PW_FLOAT_div_trunc(T, a, b, c, alpha, beta) trunc((a) / (b))
#define PW_INT_div_trunc(T, a, b, c, alpha, beta) ((b) == 0 ? (T)0 : (a) / (b))
#define PW_FLOAT_div_floor(T, a, b, c, alpha, beta) axon_floor_divide(a, b)
#define PW_INT_div_floor(T, a, b, c, alpha, beta) axon_int_floor_divide(a, b)
#define PW_FLOAT_pow(T, a, b, c, alpha, beta) pow(a, b)
#define PW_INT_pow(T, a, b, c, alpha, beta) axon_int_pow(a, b)
/* The other exponents PyTorch's CPU takes apart: 0.5, -0.5, -1, -2. */
#define PW_FLOAT_pow_sqrt(T, a, b, c, alpha, beta) sqrt(a)
#define PW_FLOAT_pow_rsqrt(T, a, b, c, alpha, beta) ((T)1 / sqrt(a))
#define PW_FLOAT_pow_reciprocal(T, a, b, c, alpha, beta) ((T)1 / (a))
#define PW_FLOAT_pow_inv_square(T, a, b, c, alpha, beta) ((T)1 / ((a) * (a)))
#define PW_FLOAT_addcdiv(T, a, b, c, alpha, beta) ((a) + (alpha) * (b) / (c))
#define PW_FLOAT_lerp(T, a, b, c, alpha, beta) \
  (fabs(c) < (T)0.5 ? (a) + (c) * ((b) - (a)) : (b) - ((b) - (a)) * ((T)1 - (c)))
/* Backward ops: a is the incoming gradient, b the forward's input or output. */
#define PW_FLOAT_sigmoid_backward(T, a, b, c, alpha, beta) ((a) * ((T)1 - (b)) * (b))
#define PW_FLOAT_tanh_backward(T, a, b, c, alpha, beta) ((a) * ((T)1 - (b) * (b)))
#define PW_FLOAT_silu_backward(T, a, b, c, alpha, beta)            \
  ((a) * PW_FLOAT_sigmoid(T, b, , , , ) *                         \
   ((T)1 + (b) * ((T)1 - PW_FLOAT_sigmoid(T, b, , , , ))))
#define PW_FLOAT_gelu_backward(T, a, b, c, alpha, beta)                         \
  ((a) * ((T)0.5 * ((T)1 + axon_erf((b) * (T)PW_SQRT1_2)) +                      \
          (b) * (T)PW_INV_SQRT_2PI * exp((T)-0.5 * (b) * (b))))
#define PW_FLOAT_gelu_tanh_backward(T, a, b, c, alpha, beta) axon_gelu_tanh_backward(a, b)
#define PW_FLOAT_softplus_backward(T, a, b, c, alpha, beta) \
  ((b) * (alpha) > (beta) ? (a) : (a) * exp((b) * (alpha)) / (exp((b) * (alpha)) + (T)1))

/* Integers. */
#define PW_INT_bitwise_and(T, a, b, c, alpha, beta) ((a) & (b))
#define PW_INT_bitwise_or(T, a, b, c, alpha, beta) ((a) | (b))
#define PW_INT_bitwise_xor(T, a, b, c, alpha, beta) ((a) ^ (b))
#define PW_INT_bitwise_not(T, a, b, c, alpha, beta) (~(a))
#define PW_BOOL_bitwise_not(T, a, b, c, alpha, beta) (!(a))
/* Shifts as PyTorch's CPU defines them: a count that is negative or not less than the width of
 * T gives 0, or -1 for a right shift of a negative value (C and OpenCL would shift by the count
 * modulo the width). Narrow types computed in int are right too: what a wider shift leaves in
 * the low bits is what the narrow store keeps. */
#define PW_SHIFT_OUT_OF_RANGE(T, b) ((b) < 0 || (b) >= (T)(sizeof(T) * 8))
#define PW_INT_bitwise_left_shift(T, a, b, c, alpha, beta) \
  (PW_SHIFT_OUT_OF_RANGE(T, b) ? (T)0 : (T)((a) << (b)))
#define PW_INT_bitwise_right_shift(T, a, b, c, alpha, beta) \
  (PW_SHIFT_OUT_OF_RANGE(T, b) ? ((a) < 0 ? (T)-1 : (T)0) : (T)((a) >> (b)))

/* Rounding, remainders, more math. Rounding an integer leaves it. */
#define PW_FLOAT_floor(T, a, b, c, alpha, beta) floor(a)
#define PW_FLOAT_ceil(T, a, b, c, alpha, beta) ceil(a)
#define PW_FLOAT_round(T, a, b, c, alpha, beta) rint(a)
#define PW_FLOAT_trunc(T, a, b, c, alpha, beta) trunc(a)
#define PW_INT_floor(T, a, b, c, alpha, beta) (a)
#define PW_INT_ceil PW_INT_floor
#define PW_INT_round PW_INT_floor
#define PW_INT_trunc PW_INT_floor
/* round(x, decimals): alpha = 10^|decimals|, beta > 0 when decimals are negative. */
#define PW_FLOAT_round_decimals(T, a, b, c, alpha, beta) axon_round_decimals(a, alpha, beta)
#define PW_FLOAT_frac(T, a, b, c, alpha, beta) ((a) - trunc(a))
#define PW_FLOAT_fmod(T, a, b, c, alpha, beta) axon_fmod(a, b)
#define PW_INT_fmod(T, a, b, c, alpha, beta) axon_int_fmod(a, b)
/* remainder as PyTorch defines it: the result takes the divisor's sign; a zero keeps fmod's
 * (remainder(-0.0, 0.001) is -0.0 on the CPU and CUDA: adding a 0 made it +0.0). */
#define PW_FLOAT_remainder(T, a, b, c, alpha, beta) PW_REMAINDER_ADJUST(T, axon_fmod(a, b), b)
#define PW_REMAINDER_ADJUST(T, mod, b) \
  (((mod) != 0 && (((b) < 0) != ((mod) < 0))) ? (mod) + (b) : (mod))
#define PW_INT_remainder(T, a, b, c, alpha, beta) axon_int_remainder(a, b)
#define PW_FLOAT_atan2(T, a, b, c, alpha, beta) atan2(a, b)
#define PW_FLOAT_hypot(T, a, b, c, alpha, beta) hypot(a, b)
/* A NaN operand makes a - b NaN, and so the sum: fmax's NaN-skipping does not show. */
#define PW_FLOAT_logaddexp(T, a, b, c, alpha, beta) \
  ((isinf(a) && (a) == (b)) ? (a) : fmax(a, b) + log1p(exp(-fabs((a) - (b)))))
#define PW_FLOAT_copysign(T, a, b, c, alpha, beta) copysign(a, b)
#define PW_FLOAT_xlogy(T, a, b, c, alpha, beta) \
  (isnan(b) ? (b) : ((a) == 0 ? (T)0 : (a) * log(b)))
#define PW_FLOAT_isnan(T, a, b, c, alpha, beta) (isnan(a) != 0)
#define PW_INT_isnan(T, a, b, c, alpha, beta) 0
#define PW_FLOAT_isinf(T, a, b, c, alpha, beta) (isinf(a) != 0)
#define PW_INT_isinf PW_INT_isnan
#define PW_FLOAT_isposinf(T, a, b, c, alpha, beta) (isinf(a) && (a) > 0)
#define PW_FLOAT_isneginf(T, a, b, c, alpha, beta) (isinf(a) && (a) < 0)
#define PW_INT_isposinf PW_INT_isnan
#define PW_INT_isneginf PW_INT_isnan
#define PW_FLOAT_signbit(T, a, b, c, alpha, beta) (signbit(a) != 0)
#define PW_INT_signbit(T, a, b, c, alpha, beta) ((a) < 0)
/* nan_to_num: b (a scalar input) replaces NaN, alpha +inf, beta -inf. */
#define PW_FLOAT_nan_to_num(T, a, b, c, alpha, beta) \
  (isnan(a) ? (b) : (isinf(a) ? ((a) > 0 ? (T)(alpha) : (T)(beta)) : (a)))
#define PW_INT_nan_to_num PW_INT_floor
#define PW_FLOAT_asin(T, a, b, c, alpha, beta) asin(a)
#define PW_FLOAT_acos(T, a, b, c, alpha, beta) acos(a)
#define PW_FLOAT_atan(T, a, b, c, alpha, beta) atan(a)
#define PW_FLOAT_sinh(T, a, b, c, alpha, beta) sinh(a)
#define PW_FLOAT_cosh(T, a, b, c, alpha, beta) cosh(a)
#define PW_FLOAT_asinh(T, a, b, c, alpha, beta) asinh(a)
#define PW_FLOAT_acosh(T, a, b, c, alpha, beta) acosh(a)
#define PW_FLOAT_atanh(T, a, b, c, alpha, beta) atanh(a)

/* Activations. elu: alpha, beta = scale, b (a scalar input) = input_scale; its backward: a the
 * gradient, b the input (or the output for _result), c input_scale. */
#define PW_FLOAT_elu(T, a, b, c, alpha, beta) \
  ((a) <= 0 ? expm1((a) * (b)) * (alpha) * (beta) : (a) * (beta))
#define PW_FLOAT_elu_backward(T, a, b, c, alpha, beta) \
  ((b) <= 0 ? (a) * (c) * (alpha) * (beta) * exp((b) * (c)) : (a) * (beta))
#define PW_FLOAT_elu_backward_result(T, a, b, c, alpha, beta) \
  ((b) <= 0 ? (a) * (c) * ((b) + (alpha) * (beta)) : (a) * (beta))
/* NaN stays NaN, as on the CPU (fmin and fmax would drop it). */
#define PW_RELU6_OF_SHIFTED(T, a) ((a) < (T)-3 ? (T)0 : ((a) > (T)3 ? (T)6 : (a) + (T)3))
#define PW_FLOAT_hardsigmoid(T, a, b, c, alpha, beta) (PW_RELU6_OF_SHIFTED(T, a) / (T)6)
/* PyTorch multiplies by 1/6 rounded to float, in every dtype. */
#define PW_FLOAT_hardsigmoid_backward(T, a, b, c, alpha, beta) \
  (((b) > (T)-3 && (b) < (T)3) ? (a) * (T)(1.0f / 6.0f) : (T)0)
#define PW_FLOAT_hardswish(T, a, b, c, alpha, beta) ((a) * PW_RELU6_OF_SHIFTED(T, a) / (T)6)
/* PyTorch's boundaries: zero through -3 inclusive, the plain gradient from 3 inclusive. */
#define PW_FLOAT_hardswish_backward(T, a, b, c, alpha, beta) \
  ((b) <= (T)-3 ? (T)0 : ((b) < (T)3 ? (a) * ((b) / (T)3 + (T)0.5) : (a)))
#define PW_FLOAT_mish(T, a, b, c, alpha, beta) ((a) * axon_tanh(log1p(exp(a))))
#define PW_MISH_BACKWARD_WITH(T, g, x, t) \
  ((g) * ((t) + (x) * PW_FLOAT_sigmoid(T, x, , , , ) * ((T)1 - (t) * (t))))
#define PW_FLOAT_mish_backward(T, a, b, c, alpha, beta) \
  PW_MISH_BACKWARD_WITH(T, a, b, axon_tanh(log1p(exp(b))))
#define PW_FLOAT_log_sigmoid(T, a, b, c, alpha, beta) (fmin(a, (T)0) - log1p(exp(-fabs(a))))
#define PW_LOG_SIGMOID_BACKWARD_WITH(T, g, x, z) \
  ((x) < 0 ? (g) * ((T)1 - (z) / ((T)1 + (z))) : (g) * ((z) / ((T)1 + (z))))
#define PW_FLOAT_log_sigmoid_backward(T, a, b, c, alpha, beta) \
  PW_LOG_SIGMOID_BACKWARD_WITH(T, a, b, exp(-fabs(b)))

/* heaviside(x, values): values where x is 0, else the step (NaN gives 0, as on the CPU). */
#define PW_ANY_heaviside(T, a, b, c, alpha, beta) ((a) == 0 ? (b) : (T)((a) > 0))
/* fmax / fmin ignore a NaN operand; of two equal operands (+0 and -0) they give the first, as
 * PyTorch's CPU does (OpenCL's builtins may give either). */
#define PW_FLOAT_fmax(T, a, b, c, alpha, beta) \
  (isnan(a) ? (b) : ((isnan(b) || (a) >= (b)) ? (a) : (b)))
#define PW_FLOAT_fmin(T, a, b, c, alpha, beta) \
  (isnan(a) ? (b) : ((isnan(b) || (a) <= (b)) ? (a) : (b)))
#define PW_INT_fmax PW_INT_maximum
#define PW_INT_fmin PW_INT_minimum
#define PW_FLOAT_logaddexp2(T, a, b, c, alpha, beta) axon_logaddexp2(a, b)
/* nextafter steps in the storage type (an eager program's DT_ says which). */
#if defined(DT_BF16)
#define PW_FLOAT_nextafter(T, a, b, c, alpha, beta) axon_nextafter_bf16(a, b)
#elif defined(DT_F16)
#define PW_FLOAT_nextafter(T, a, b, c, alpha, beta) axon_nextafter_f16(a, b)
#else
#define PW_FLOAT_nextafter(T, a, b, c, alpha, beta) nextafter(a, b)
#endif
/* angle of a real number: 0 or pi; NaN stays. */
#define PW_FLOAT_angle(T, a, b, c, alpha, beta) (isnan(a) ? (a) : ((a) < 0 ? (T)PW_PI : (T)0))
/* logit: alpha is eps, negative for none (no clamping); NaN stays. */
#define PW_LOGIT_CLAMPED(T, a, eps)                                          \
  ((eps) < 0 ? (a)                                                          \
             : ((a) < (T)(eps) ? (T)(eps) : ((a) > (T)(1 - (eps)) ? (T)(1 - (eps)) : (a))))
#define PW_FLOAT_logit(T, a, b, c, alpha, beta) \
  log(PW_LOGIT_CLAMPED(T, a, alpha) / ((T)1 - PW_LOGIT_CLAMPED(T, a, alpha)))
#define PW_FLOAT_logit_backward(T, a, b, c, alpha, beta) axon_logit_backward(a, b, alpha)
/* Shrinkage, alpha = lambda. Softshrink keeps a NaN (a * 0). */
#define PW_FLOAT_softshrink(T, a, b, c, alpha, beta) \
  ((a) > (alpha) ? (a) - (alpha) : ((a) < -(alpha) ? (a) + (alpha) : (a) * (T)0))
#define PW_FLOAT_hardshrink(T, a, b, c, alpha, beta) \
  (((a) >= -(alpha) && (a) <= (alpha)) ? (T)0 : (a))
#define PW_FLOAT_shrink_backward(T, a, b, c, alpha, beta) \
  (((b) >= -(alpha) && (b) <= (alpha)) ? (T)0 : (a))
/* Gated and parametric linear units. glu: a the first half, b the gate; its backward gives the
 * first half's gradient g * sig(gate) and the gate's g * first * sig * (1 - sig). */
#define PW_FLOAT_glu(T, a, b, c, alpha, beta) ((a) * PW_FLOAT_sigmoid(T, b, , , , ))
#define PW_FLOAT_glu_backward_first PW_FLOAT_glu
#define PW_FLOAT_glu_backward_gate(T, a, b, c, alpha, beta) axon_glu_backward_gate(a, b, c)
/* prelu(x, w); its backward reads x, w, the gradient g. */
#define PW_FLOAT_prelu(T, a, b, c, alpha, beta) ((a) > 0 ? (a) : (b) * (a))
#define PW_FLOAT_prelu_backward_input(T, a, b, c, alpha, beta) ((a) > 0 ? (c) : (b) * (c))
#define PW_FLOAT_prelu_backward_weight(T, a, b, c, alpha, beta) ((a) > 0 ? (T)0 : (a) * (c))
/* rrelu in training: b holds uniform noise; positive inputs get slope 1. */
#define PW_FLOAT_rrelu_noise(T, a, b, c, alpha, beta) ((a) <= 0 ? (b) : (T)1)
/* renorm's factor from a slice norm, alpha = maxnorm. */
#define PW_FLOAT_renorm_factor(T, a, b, c, alpha, beta) \
  ((a) > (alpha) ? (T)(alpha) / ((a) + (T)1e-7) : (T)1)
/* Pointwise losses of input a and target b; backward ops read the gradient a, input b, target
 * c and get alpha = the reduction's scale (1 / n for a mean). */
#define PW_FLOAT_smooth_l1(T, a, b, c, alpha, beta) axon_smooth_l1(a, b, alpha)
#define PW_FLOAT_smooth_l1_backward(T, a, b, c, alpha, beta) \
  axon_smooth_l1_backward(a, b, c, alpha, beta)
#define PW_FLOAT_huber(T, a, b, c, alpha, beta) axon_huber(a, b, alpha)
#define PW_FLOAT_huber_backward(T, a, b, c, alpha, beta) axon_huber_backward(a, b, c, alpha, beta)
#define PW_FLOAT_bce(T, a, b, c, alpha, beta) axon_bce(a, b, c)
#define PW_FLOAT_bce_backward(T, a, b, c, alpha, beta) axon_bce_backward(a, b, c, alpha)

PW_FLOAT_HELPERS(float)
#ifdef cl_khr_fp64
PW_FLOAT_HELPERS(double)
#endif
