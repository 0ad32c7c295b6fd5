/*
 * Elementwise kernels. One program per element type holds every operation as a kernel of
 * the name ew_<op> (prefixed: OpenCL builtins such as exp or abs take the bare names) and
 * the signature of ew_common.cl (alpha / beta: add's alpha, leaky_relu's slope, hardtanh's
 * bounds ...).
 * Predicates write bool; everything else writes the program's own type.
 */

/* ---- every type ---------------------------------------------------------------------------- */

/* Both forms (a strided fill is common: zeros_like of a view, a gradient's buffer). */
EW_KERNEL(fill, 0, { STORE(PTR(o), off[0], s1); })

/* Element i of the output is alpha + beta * i (arange). */
EW_KERNEL(arange, 0, { STORE(PTR(o), off[0], alpha + beta * (CT)i); })

/* pow(x, 2) and pow(x, 3) as PyTorch's CPU computes them (csrc/ops/elementwise.cpp). */
VUNARY(pow_square, a * a)
VUNARY(pow_cube, a * a * a)
/* a + alpha b in one rounding, as PyTorch's CPU kernels compute it (a fused multiply-add in
 * float for every float type): a compiler left to contract or not gave bfloat16 results one
 * rounding apart in the scalar and the vector form. */
#ifdef IS_FLOAT
#define MUL_ADD(x, y, z) fma(x, y, z)
#else
#define MUL_ADD(x, y, z) ((x) * (y) + (z))
#endif
VBINARY(add, MUL_ADD(alpha, b, a))
VBINARY(sub, MUL_ADD(-alpha, b, a))
VBINARY(mul, a * b)
VTERNARY(addcmul, a + alpha * b * c)
VPREDICATE(eq, a == b)
VPREDICATE(ne, a != b)
VPREDICATE(lt, a < b)
VPREDICATE(le, a <= b)
VPREDICATE(gt, a > b)
VPREDICATE(ge, a >= b)
BINARY(logical_and, ST_BOOL, (a != 0) && (b != 0))
BINARY(logical_or, ST_BOOL, (a != 0) || (b != 0))
BINARY(logical_xor, ST_BOOL, (a != 0) != (b != 0))
UNARY(logical_not, ST_BOOL, a == 0)
VUNARY(relu, a < 0 ? (CT)0 : a)
/* NaN inputs propagate, as in PyTorch; that includes NaN bounds of clamp. clamp is
 * min(max(a, lo), hi), so lo > hi gives hi everywhere. */
#define max_nan(a, b) (IS_NAN(a) || IS_NAN(b) ? (IS_NAN(a) ? (a) : (b)) : ((a) > (b) ? (a) : (b)))
#define min_nan(a, b) (IS_NAN(a) || IS_NAN(b) ? (IS_NAN(a) ? (a) : (b)) : ((a) < (b) ? (a) : (b)))
VBINARY(maximum, max_nan(a, b))
VBINARY(minimum, min_nan(a, b))
VTERNARY(clamp, min_nan(max_nan(a, b), c))
VBINARY(clamp_min, max_nan(a, b))
VBINARY(clamp_max, min_nan(a, b))
VUNARY(hardtanh, a < alpha ? alpha : (a > beta ? beta : a))
VBINARY(hardtanh_backward, (b <= alpha || b >= beta) ? (CT)0 : a)
/* threshold(x, other): x <= alpha ? beta : other (threshold_backward is the same with 0). */
VBINARY(threshold, a <= alpha ? beta : b)
VBINARY(leaky_relu_backward, b > 0 ? a : a * alpha)

#define WHERE_BODY                                                      \
  {                                                                     \
    int cond = (g.scalar_mask & 1) ? (s1 != 0) : LD_BOOL(PTR(x), off[1]); \
    STORE(PTR(o), off[0], cond ? IN(2, y, s2) : IN(3, z, s3));          \
  }
EW_KERNEL(where, 3, WHERE_BODY)
/* The condition as a lane mask (a vector ?: selects by each lane's sign bit). */
EW_VEC(ewv_where,
       {
         int8 cond = (g.scalar_mask & 1) ? (int8)(s1 != 0 ? -1 : 0)
                                         : VLOAD_AS(1, x, VLD_BOOL, SPLAT_BOOL);
         VOUT(cond ? VIN(2, y, s2) : VIN(3, z, s3));
       },
       WHERE_BODY)

#if defined(IS_BOOL)
UNARY(sign, STORE, a)
#else
VUNARY(neg, -a)
/* NaN and -0 give +0, as (0 < a) - (a < 0) does on the CPU. */
VUNARY(sign, a > 0 ? (CT)1 : (a < 0 ? (CT)-1 : (CT)0))
VUNARY(leaky_relu, a > 0 ? a : a * alpha)
#endif

/* ---- floating point ------------------------------------------------------------------------ */
#ifdef IS_FLOAT
#define HALF ((CT)0.5)
#define SQRT1_2 ((CT)0.70710678118654752440)
#define SQRT_2_OVER_PI ((CT)0.79788456080286535588)
#define INV_SQRT_2PI ((CT)0.39894228040143267794)
#define KAPPA ((CT)0.044715)

/* ---- math on the eight lanes of the vector form, where PoCL's own vector functions are slow
 * (sin and cos 2 to 3 ns an element, fmod 3). Each has a scalar twin that calls the library,
 * which the scalar kernels and the vector form's tails use. Maximum errors against float64 are
 * in docs/op-coverage.md ("Vector math"). */
inline CT __attribute__((overloadable)) sin_ct(CT x) { return sin(x); }
inline CT __attribute__((overloadable)) cos_ct(CT x) { return cos(x); }
inline CT __attribute__((overloadable)) tan_ct(CT x) { return tan(x); }
inline CT __attribute__((overloadable)) fmod_ct(CT a, CT b) { return fmod(a, b); }
#ifdef HAS_VCT
/* sin and cos: the quadrant j = rint(x * 2/pi), r = x - j pi/2 with pi/2 in three parts (fma:
 * Cody and Waite's reduction), then Cephes' minimax polynomials on [-pi/4, pi/4]. Lanes past
 * |x| = 2^13, infinities and NaN send the whole vector to the library's full reduction. */
#define PIO2_1 1.5707963705062866f
#define PIO2_2 -4.371138828673793e-08f
#define PIO2_3 -1.7151245100058819e-15f
inline float8 sin_poly(float8 r, float8 z) {
  float8 p = fma(z, (float8)-1.9515295891e-4f, (float8)8.3321608736e-3f);
  p = fma(z, p, (float8)-1.6666654611e-1f);
  return fma(p * z, r, r);
}
inline float8 cos_poly(float8 z) {
  float8 p = fma(z, (float8)2.443315711809948e-5f, (float8)-1.388731625493765e-3f);
  p = fma(z, p, (float8)4.166664568298827e-2f);
  return fma(p * z, z, fma(z, (float8)-0.5f, (float8)1.0f));
}
/* sin(x) for quadrant offset 0, cos(x) for 1 (cos x = sin(x + pi/2)). */
inline float8 sin_quadrant(float8 x, int offset) {
  float8 j = rint(x * 0.6366197466850281f);
  float8 r = fma(-j, (float8)PIO2_1, x);
  r = fma(-j, (float8)PIO2_2, r);
  r = fma(-j, (float8)PIO2_3, r);
  r = select(r, x, j == 0.0f); /* exact there, and keeps sin(-0) = -0 */
  float8 z = r * r;
  int8 q = convert_int8(j) + offset;
  float8 v = select(sin_poly(r, z), cos_poly(z), (q & 1) != 0);
  return select(v, -v, (q & 2) != 0);
}
/* The library lane by lane: PoCL's float8 sin, cos and tan are wrong for subnormal inputs
 * (sin(1e-40) gave 7.8e-3), its scalar functions are not. */
#define LANES8(f, x) \
  ((float8)(f((x).s0), f((x).s1), f((x).s2), f((x).s3), f((x).s4), f((x).s5), f((x).s6), f((x).s7)))
inline float8 __attribute__((overloadable)) sin_ct(float8 x) {
  return any(!(fabs(x) <= 8192.0f)) ? LANES8(sin, x) : sin_quadrant(x, 0);
}
inline float8 __attribute__((overloadable)) cos_ct(float8 x) {
  return any(!(fabs(x) <= 8192.0f)) ? LANES8(cos, x) : sin_quadrant(x, 1);
}
/* tan x rounds to x below 2^-13; that also keeps subnormals from the float8 library call. */
inline float8 __attribute__((overloadable)) tan_ct(float8 x) {
  return select(tan(x), x, fabs(x) < 1.2e-4f);
}
/* fmod: q = trunc(a / b), a - q b by fma, which is exact when q is; a / b rounding up to the
 * next integer makes q one too large, which shows as a result of the wrong sign and is undone
 * by one step of b. Quotients from 2^23 up (q no longer exact), b = 0, infinite a and NaN go to
 * the library; an infinite b leaves a. */
inline float8 __attribute__((overloadable)) fmod_ct(float8 a, float8 b) {
  float8 quotient = a / b;
  if (any(!(fabs(quotient) < 8388608.0f))) return fmod(a, b);
  float8 r = fma(-trunc(quotient), b, a);
  r = select(r, r + copysign(b, a), r != 0.0f && signbit(r) != signbit(a));
  return select(copysign(r, a), a, isinf(b));
}
#endif

/* Helpers of ops with a vector form are macros, so that they apply to vectors too. */
#define sigmoid_of(a) ((CT)1 / ((CT)1 + exp(-(a))))

/* tanh that reaches +-1: some OpenCL libraries (PoCL's float tanh) stop one ulp short, even
 * at infinity. Beyond these bounds tanh rounds to +-1 in float / double. */
#ifdef DT_F64
#define TANH_SATURATES 19.1
#else
#define TANH_SATURATES 9.1f
#endif
#define tanh_of(a) (fabs(a) > (CT)TANH_SATURATES ? copysign((CT)1, (a)) : tanh(a))

/* Floor division as PyTorch defines it (div_floor_floating). */
inline CT floor_divide(CT a, CT b) {
  if (b == 0) return a / b;
  CT mod = fmod(a, b);
  CT div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return copysign((CT)0, a / b);
  CT fl = floor(div);
  return div - fl > HALF ? fl + 1 : fl;
}

inline CT gelu_tanh_backward_of(CT g, CT x) {
  CT inner = SQRT_2_OVER_PI * (x + KAPPA * x * x * x);
  CT t = tanh_of(inner);
  CT left_derivative = HALF * ((CT)1 + t);
  CT right_derivative = HALF * x * ((CT)1 - t * t) * SQRT_2_OVER_PI * ((CT)1 + 3 * KAPPA * x * x);
  return g * (left_derivative + right_derivative);
}

/* erf: float_math.cl's rational form for float (PoCL's erf does not vectorise), the
 * library's for double. */
#ifdef DT_F64
#define erf_ct erf
#else
#define erf_ct erf_float
#endif

VUNARY(abs, fabs(a))
VUNARY(exp, exp(a))
VUNARY(exp2, exp2(a))
VUNARY(expm1, expm1(a))
VUNARY(log, log(a))
VUNARY(log2, log2(a))
VUNARY(log10, log10(a))
VUNARY(log1p, log1p(a))
VUNARY(sqrt, sqrt(a))
VUNARY(rsqrt, rsqrt(a))
VUNARY(reciprocal, (CT)1 / a)
VUNARY(sin, sin_ct(a))
VUNARY(cos, cos_ct(a))
VUNARY(tan, tan_ct(a))
VUNARY(tanh, tanh_of(a))
VUNARY(sigmoid, sigmoid_of(a))
VUNARY(erf, erf_ct(a))
VUNARY(silu, a * sigmoid_of(a))
VUNARY(gelu, HALF * a * ((CT)1 + erf_ct(a * SQRT1_2)))
VUNARY(gelu_tanh, HALF * a * ((CT)1 + tanh_of(SQRT_2_OVER_PI * (a + KAPPA * a * a * a))))
VUNARY(softplus, a * alpha > beta ? a : log1p(exp(a * alpha)) / alpha)
VBINARY(div, a / b)
BINARY(div_trunc, STORE, trunc(a / b))
BINARY(div_floor, STORE, floor_divide(a, b))
VBINARY(pow, pow(a, b))
/* The other exponents PyTorch's CPU takes apart: 0.5, -0.5, -1, -2. */
VUNARY(pow_sqrt, sqrt(a))
VUNARY(pow_rsqrt, (CT)1 / sqrt(a))
VUNARY(pow_reciprocal, (CT)1 / a)
VUNARY(pow_inv_square, (CT)1 / (a * a))
VTERNARY(addcdiv, a + alpha * b / c)
VTERNARY(lerp, fabs(c) < HALF ? a + c * (b - a) : b - (b - a) * ((CT)1 - c))
/* Backward ops: a is the incoming gradient, b the forward's input or output. */
VBINARY(sigmoid_backward, a * ((CT)1 - b) * b)
VBINARY(tanh_backward, a * ((CT)1 - b * b))
VBINARY(silu_backward, a * sigmoid_of(b) * ((CT)1 + b * ((CT)1 - sigmoid_of(b))))
VBINARY(gelu_backward,
        a * (HALF * ((CT)1 + erf_ct(b * SQRT1_2)) + b * INV_SQRT_2PI * exp(-HALF * b * b)))
BINARY(gelu_tanh_backward, STORE, gelu_tanh_backward_of(a, b))
VBINARY(softplus_backward, b * alpha > beta ? a : a * exp(b * alpha) / (exp(b * alpha) + (CT)1))
#endif

/* ---- integers ------------------------------------------------------------------------------- */
#ifndef IS_FLOAT
inline CT int_pow(CT a, CT b) {
  if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
  CT r = 1;
  while (b) {
    if (b & 1) r *= a;
    b >>= 1;
    a *= a;
  }
  return r;
}
inline CT int_floor_divide(CT a, CT b) {
  if (b == 0) return 0;
  CT q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
UNARY(abs, STORE, a < 0 ? -a : a)
BINARY(div_trunc, STORE, b == 0 ? (CT)0 : a / b)
BINARY(div_floor, STORE, int_floor_divide(a, b))
BINARY(pow, STORE, int_pow(a, b))
BINARY(bitwise_and, STORE, a & b)
BINARY(bitwise_or, STORE, a | b)
BINARY(bitwise_xor, STORE, a ^ b)
#ifdef IS_BOOL
UNARY(bitwise_not, STORE, !a)
#else
UNARY(bitwise_not, STORE, ~a)
#endif
#endif

/* ---- rounding, remainders, more math and activations (issue 3) --------------------------------- */
#ifdef IS_FLOAT
/* remainder as Python defines it: the result takes the divisor's sign. */
#define remainder_of(a, b) remainder_adjust(fmod_ct(a, b), b)
#define remainder_adjust(mod, b) \
  ((mod) + (((mod) != 0 && (((b) < 0) != ((mod) < 0))) ? (b) : (CT)0))
/* A NaN operand makes a - b NaN, and so the sum: fmax's NaN-skipping does not show. */
#define logaddexp_of(a, b) \
  ((isinf(a) && (a) == (b)) ? (a) : fmax(a, b) + log1p(exp(-fabs((a) - (b)))))
/* round(x, decimals): alpha = 10^|decimals|, beta > 0 when decimals are negative. */
inline CT round_decimals_of(CT a, CT ten_pow, CT negative) {
  return negative > 0 ? rint(a / ten_pow) * ten_pow : rint(a * ten_pow) / ten_pow;
}
#define mish_backward_of(g, x) mish_backward_with(g, x, tanh_of(log1p(exp(x))))
#define mish_backward_with(g, x, t) ((g) * ((t) + (x) * sigmoid_of(x) * ((CT)1 - (t) * (t))))
#define log_sigmoid_backward_of(g, x) log_sigmoid_backward_with(g, x, exp(-fabs(x)))
#define log_sigmoid_backward_with(g, x, z) \
  ((x) < 0 ? (g) * ((CT)1 - (z) / ((CT)1 + (z))) : (g) * ((z) / ((CT)1 + (z))))
VUNARY(floor, floor(a))
VUNARY(ceil, ceil(a))
VUNARY(round, rint(a))
UNARY(round_decimals, STORE, round_decimals_of(a, alpha, beta))
VUNARY(trunc, trunc(a))
VUNARY(frac, a - trunc(a))
VBINARY(fmod, fmod_ct(a, b))
VBINARY(remainder, remainder_of(a, b))
VBINARY(atan2, atan2(a, b))
VBINARY(hypot, hypot(a, b))
VBINARY(logaddexp, logaddexp_of(a, b))
BINARY(copysign, STORE, copysign(a, b))
VBINARY(xlogy, isnan(b) ? b : (a == 0 ? (CT)0 : a * log(b)))
UNARY(isnan, ST_BOOL, isnan(a))
UNARY(isposinf, ST_BOOL, isinf(a) && a > 0)
UNARY(isneginf, ST_BOOL, isinf(a) && a < 0)
UNARY(signbit, ST_BOOL, signbit(a) != 0)
/* nan_to_num: b (a scalar input) replaces NaN, alpha +inf, beta -inf. */
VBINARY(nan_to_num, isnan(a) ? b : (isinf(a) ? (a > 0 ? (CT)alpha : (CT)beta) : a))
VUNARY(asin, asin(a))
VUNARY(acos, acos(a))
VUNARY(atan, atan(a))
VUNARY(sinh, sinh(a))
VUNARY(cosh, cosh(a))
VUNARY(asinh, asinh(a))
VUNARY(acosh, acosh(a))
VUNARY(atanh, atanh(a))
/* elu: alpha, beta = scale, b (scalar input) = input_scale. */
VBINARY(elu, a <= 0 ? expm1(a * b) * alpha * beta : a * beta)
/* elu backward: a the gradient, b the input (or the output for _result), c input_scale. */
TERNARY(elu_backward, STORE, b <= 0 ? a * c * alpha * beta * exp(b * c) : a * beta)
TERNARY(elu_backward_result, STORE, b <= 0 ? a * c * (b + alpha * beta) : a * beta)
/* NaN stays NaN, as on the CPU (fmin and fmax would drop it). */
#define RELU6_OF_SHIFTED(a) (a < (CT)-3 ? (CT)0 : (a > (CT)3 ? (CT)6 : a + (CT)3))
VUNARY(hardsigmoid, RELU6_OF_SHIFTED(a) / (CT)6)
/* PyTorch multiplies by 1/6 rounded to float, in every dtype. */
BINARY(hardsigmoid_backward, STORE, (b > (CT)-3 && b < (CT)3) ? a * (CT)(1.0f / 6.0f) : (CT)0)
VUNARY(hardswish, a * RELU6_OF_SHIFTED(a) / (CT)6)
BINARY(hardswish_backward, STORE,
       b < (CT)-3 ? (CT)0 : (b <= (CT)3 ? a * (b / (CT)3 + HALF) : a))
VUNARY(mish, a * tanh_of(log1p(exp(a))))
VBINARY(mish_backward, mish_backward_of(a, b))
VUNARY(log_sigmoid, fmin(a, (CT)0) - log1p(exp(-fabs(a))))
VBINARY(log_sigmoid_backward, log_sigmoid_backward_of(a, b))
#else
inline CT int_remainder(CT a, CT b) {
  if (b == 0) return 0;
  CT r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
UNARY(floor, STORE, a)
UNARY(ceil, STORE, a)
UNARY(round, STORE, a)
UNARY(trunc, STORE, a)
BINARY(fmod, STORE, b == 0 ? (CT)0 : a % b)
BINARY(remainder, STORE, int_remainder(a, b))
UNARY(isnan, ST_BOOL, 0)
UNARY(isposinf, ST_BOOL, 0)
UNARY(isneginf, ST_BOOL, 0)
UNARY(signbit, ST_BOOL, a < 0)
UNARY(nan_to_num, STORE, a)
#endif

/* ---- more pointwise ops, activations and pointwise losses (ops/elementwise_activations.cpp) ---------- */
/* heaviside(x, values): values where x is 0, else the step (NaN gives 0, as on the CPU). */
BINARY(heaviside, STORE, a == 0 ? b : (CT)(a > 0))
#ifdef IS_FLOAT
#define LOG2E ((CT)1.44269504088896340736)
#define PI ((CT)3.14159265358979323846)
/* fmax / fmin ignore a NaN operand (the OpenCL builtins do exactly that). */
BINARY(fmax, STORE, fmax(a, b))
BINARY(fmin, STORE, fmin(a, b))
inline CT logaddexp2_of(CT a, CT b) {
  if (isinf(a) && a == b) return a;
  return max_nan(a, b) + log1p(exp2(-fabs(a - b))) * LOG2E;
}
BINARY(logaddexp2, STORE, logaddexp2_of(a, b))

/* nextafter steps in the storage type: float16 / bfloat16 values are held in float, so the
 * builtin would step by a float ulp. bfloat16 is the upper half of a float, stepped on its
 * bits; float16 steps by its ulp at the value's binade (10 mantissa bits, exponents >= -14). */
#if defined(DT_BF16)
inline CT nextafter_of(CT a, CT b) {
  if (isnan(a) || isnan(b)) return a + b;
  if (a == b) return b;
  if (a == 0) return copysign(as_float(1u << 16), b);
  return as_float(as_uint(a) + (((b > a) == (a > 0)) ? 0x10000u : (uint)-0x10000));
}
#elif defined(DT_F16)
inline CT nextafter_of(CT a, CT b) {
  if (isnan(a) || isnan(b)) return a + b;
  if (a == b) return b;
  if (a == 0) return copysign(ldexp(1.0f, -24), b);
  if (isinf(a)) return copysign(65504.0f, a);
  CT m = fabs(a);
  int e = max(ilogb(m), -14);
  CT ulp = ldexp(1.0f, e - 10);
  int away = (b > a) == (a > 0);
  /* Just below a power of two the ulp is half as large. */
  if (!away && e > -14 && m == ldexp(1.0f, e)) ulp *= HALF;
  return copysign(away ? m + ulp : m - ulp, a);
}
#else
#define nextafter_of nextafter
#endif
BINARY(nextafter, STORE, nextafter_of(a, b))

/* frexp: o the mantissa, y (int32) the exponent of input x. */
KERNEL(ew_frexp)(EW_SIG) {
  EW_BEGIN(2)
  int e;
  CT m = frexp(LOAD(PTR(x), off[1]), &e);
  STORE(PTR(o), off[0], m);
  ST_I32(PTR(y), off[2], e);
}

/* angle of a real number: 0 or pi; NaN stays. */
UNARY(angle, STORE, isnan(a) ? a : (a < 0 ? PI : (CT)0))

/* logit: alpha is eps, negative for none (no clamping); NaN stays. A macro, so that the vector
 * form evaluates it too. */
#define LOGIT_CLAMPED(a, eps) \
  ((eps) < 0 ? (a) : ((a) < (CT)(eps) ? (CT)(eps) : ((a) > (CT)(1 - (eps)) ? (CT)(1 - (eps)) : (a))))
#define LOGIT_OF(a, eps) log(LOGIT_CLAMPED(a, eps) / ((CT)1 - LOGIT_CLAMPED(a, eps)))
inline CT logit_backward_of(CT g, CT x, CT eps) {
  CT lo = eps < 0 ? (CT)0 : eps, hi = (CT)1 - lo;
  if (x < lo || x > hi) return eps < 0 ? (CT)NAN : (CT)0;
  return g / (x * ((CT)1 - x));
}
VUNARY(logit, LOGIT_OF(a, alpha))
BINARY(logit_backward, STORE, logit_backward_of(a, b, alpha))

/* Shrinkage, alpha = lambda. Softshrink keeps a NaN (a * 0). */
UNARY(softshrink, STORE, a > alpha ? a - alpha : (a < -alpha ? a + alpha : a * (CT)0))
UNARY(hardshrink, STORE, (a >= -alpha && a <= alpha) ? (CT)0 : a)
BINARY(shrink_backward, STORE, (b >= -alpha && b <= alpha) ? (CT)0 : a)

/* Gated and parametric linear units. glu: a the first half, b the gate. */
BINARY(glu, STORE, a * sigmoid_of(b))
/* glu backward: the first half's gradient g * sig(gate), the gate's g * first * sig * (1 - sig). */
BINARY(glu_backward_first, STORE, a * sigmoid_of(b))
inline CT glu_backward_gate_of(CT g, CT first, CT gate) {
  CT s = sigmoid_of(gate);
  return s * ((CT)1 - s) * g * first;
}
TERNARY(glu_backward_gate, STORE, glu_backward_gate_of(a, b, c))
/* prelu(x, w); its backward reads x, w, the gradient g. */
BINARY(prelu, STORE, a > 0 ? a : b * a)
TERNARY(prelu_backward_input, STORE, a > 0 ? c : b * c)
TERNARY(prelu_backward_weight, STORE, a > 0 ? (CT)0 : a * c)
/* rrelu in training: b holds uniform noise; positive inputs get slope 1. */
BINARY(rrelu_noise, STORE, a <= 0 ? b : (CT)1)
/* renorm's factor from a slice norm, alpha = maxnorm. */
UNARY(renorm_factor, STORE, a > alpha ? alpha / (a + (CT)1e-7) : (CT)1)

/* Pointwise losses of input a and target b; backward ops read the gradient a, input b, target c
 * and get alpha = the reduction's scale (1 / n for a mean). */
inline CT smooth_l1_of(CT x, CT t, CT beta) {
  CT z = fabs(x - t);
  return z < beta ? HALF * z * z / beta : z - HALF * beta;
}
inline CT smooth_l1_backward_of(CT g, CT x, CT t, CT norm, CT beta) {
  CT d = x - t;
  /* beta 0 is the l1 loss, whose gradient at d == 0 is 0. */
  if (beta <= 0) return norm * g * (CT)((d > 0) - (d < 0));
  return d <= -beta ? -norm * g : (d >= beta ? norm * g : norm * d * g / beta);
}
inline CT huber_of(CT x, CT t, CT delta) {
  CT z = fabs(x - t);
  return z < delta ? HALF * z * z : delta * (z - HALF * delta);
}
inline CT huber_backward_of(CT g, CT x, CT t, CT norm, CT delta) {
  CT d = x - t;
  return d <= -delta ? -norm * g * delta : (d >= delta ? norm * g * delta : norm * d * g);
}
/* Binary cross entropy clamps each log at -100 (so 0 and 1 give finite losses); c the weight. */
inline CT clamped_log(CT v) { return v < (CT)-100 ? (CT)-100 : v; }
inline CT bce_of(CT x, CT t, CT w) {
  return w * ((t - (CT)1) * clamped_log(log1p(-x)) - t * clamped_log(log(x)));
}
inline CT bce_backward_of(CT g, CT x, CT t, CT norm) {
  CT denom = ((CT)1 - x) * x;
  return norm * g * (x - t) / (denom < (CT)1e-12 ? (CT)1e-12 : denom);
}
BINARY(smooth_l1, STORE, smooth_l1_of(a, b, alpha))
TERNARY(smooth_l1_backward, STORE, smooth_l1_backward_of(a, b, c, alpha, beta))
BINARY(huber, STORE, huber_of(a, b, alpha))
TERNARY(huber_backward, STORE, huber_backward_of(a, b, c, alpha, beta))
TERNARY(bce, STORE, bce_of(a, b, c))
TERNARY(bce_backward, STORE, bce_backward_of(a, b, c, alpha))
#else
BINARY(fmax, STORE, a > b ? a : b)
BINARY(fmin, STORE, a < b ? a : b)
#endif

/* ---- complex numbers from real parts: complex(real, imag), polar(abs, angle) ---------------- */
#if defined(DT_F32) || defined(DT_F64)
#ifdef DT_F32
typedef float2 PAIR;
#else
typedef double2 PAIR;
#endif
#define ST_PAIR(p, i, re, im) vstore2((PAIR)((re), (im)), (i), (__global CT *)(p))
EW_KERNEL(complex, 2, { ST_PAIR(PTR(o), off[0], IN(1, x, s1), IN(2, y, s2)); })
EW_KERNEL(polar, 2, {
  CT r = IN(1, x, s1);
  CT t = IN(2, y, s2);
  ST_PAIR(PTR(o), off[0], r * cos(t), r * sin(t));
})
#endif

/* ---- conversions: cast_<dst> reads this program's type and writes dst ----------------------- */
#define CAST(dst, ST_DST) EW_KERNEL(cast_##dst, 1, { ST_DST(PTR(o), off[0], IN(1, x, s1)); })
/* Float to float casts also in the vector form (PoCL converts a half at a time otherwise). */
#define VCAST(dst, ST_DST, VST_DST) \
  CAST(dst, ST_DST)                 \
  EW_VEC(ewv_cast_##dst, { VST_DST(PTR(o), VAT(0), VIN(1, x, s1)); }, \
         { ST_DST(PTR(o), off[0], IN(1, x, s1)); })
VCAST(f32, ST_F32, VST_F32)
VCAST(f16, ST_F16, VST_F16)
VCAST(bf16, ST_BF16, VST_BF16)
CAST(i64, ST_I64)
CAST(i32, ST_I32)
CAST(i16, ST_I16)
CAST(i8, ST_I8)
CAST(u8, ST_U8)
CAST(u16, ST_U16)
CAST(u32, ST_U32)
CAST(u64, ST_U64)
CAST(bool, ST_BOOL)
CAST(f8e4m3, ST_F8E4M3)
CAST(f8e5m2, ST_F8E5M2)
CAST(c64, ST_C64_REAL)
#ifdef HAS_FP64
CAST(f64, ST_F64)
CAST(c128, ST_C128_REAL)
#endif
