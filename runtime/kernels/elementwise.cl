/*
 * Elementwise kernels. One program per element type holds every operation as a kernel of
 * the name ew_<op> (prefixed: OpenCL builtins such as exp or abs take the bare names) and
 * the signature of ew_common.cl (alpha / beta: add's alpha, leaky_relu's slope, hardtanh's
 * bounds ...).
 * Predicates write bool; everything else writes the program's own type.
 */

/* ---- every type ---------------------------------------------------------------------------- */

__kernel void ew_fill(EW_SIG) {
  EW_BEGIN(0)
  STORE(PTR(o), off[0], s1);
}

/* Element i of the output is alpha + beta * i (arange). */
__kernel void ew_arange(EW_SIG) {
  EW_BEGIN(0)
  STORE(PTR(o), off[0], alpha + beta * (CT)i);
}

BINARY(add, STORE, a + alpha * b)
BINARY(sub, STORE, a - alpha * b)
BINARY(mul, STORE, a * b)
TERNARY(addcmul, STORE, a + alpha * b * c)
BINARY(eq, ST_BOOL, a == b)
BINARY(ne, ST_BOOL, a != b)
BINARY(lt, ST_BOOL, a < b)
BINARY(le, ST_BOOL, a <= b)
BINARY(gt, ST_BOOL, a > b)
BINARY(ge, ST_BOOL, a >= b)
BINARY(logical_and, ST_BOOL, (a != 0) && (b != 0))
BINARY(logical_or, ST_BOOL, (a != 0) || (b != 0))
BINARY(logical_xor, ST_BOOL, (a != 0) != (b != 0))
UNARY(logical_not, ST_BOOL, a == 0)
UNARY(relu, STORE, a < 0 ? (CT)0 : a)
/* NaN inputs propagate, as in PyTorch; that includes NaN bounds of clamp. clamp is
 * min(max(a, lo), hi), so lo > hi gives hi everywhere. */
inline CT max_nan(CT a, CT b) { return IS_NAN(a) || IS_NAN(b) ? (IS_NAN(a) ? a : b) : (a > b ? a : b); }
inline CT min_nan(CT a, CT b) { return IS_NAN(a) || IS_NAN(b) ? (IS_NAN(a) ? a : b) : (a < b ? a : b); }
BINARY(maximum, STORE, max_nan(a, b))
BINARY(minimum, STORE, min_nan(a, b))
TERNARY(clamp, STORE, min_nan(max_nan(a, b), c))
BINARY(clamp_min, STORE, max_nan(a, b))
BINARY(clamp_max, STORE, min_nan(a, b))
UNARY(hardtanh, STORE, a < alpha ? alpha : (a > beta ? beta : a))
BINARY(hardtanh_backward, STORE, (b <= alpha || b >= beta) ? (CT)0 : a)
/* threshold(x, other): x <= alpha ? beta : other (threshold_backward is the same with 0). */
BINARY(threshold, STORE, a <= alpha ? beta : b)
BINARY(leaky_relu_backward, STORE, b > 0 ? a : a * alpha)

__kernel void ew_where(EW_SIG) {
  EW_BEGIN(3)
  int cond = (g.scalar_mask & 1) ? (s1 != 0) : LD_BOOL(PTR(x), off[1]);
  CT b = IN(2, y, s2);
  CT c = IN(3, z, s3);
  STORE(PTR(o), off[0], cond ? b : c);
}

#if defined(IS_BOOL)
UNARY(sign, STORE, a)
#else
UNARY(neg, STORE, -a)
UNARY(sign, STORE, (CT)((0 < a) - (a < 0)))
UNARY(leaky_relu, STORE, a > 0 ? a : a * alpha)
#endif

/* ---- floating point ------------------------------------------------------------------------ */
#ifdef IS_FLOAT
#define HALF ((CT)0.5)
#define SQRT1_2 ((CT)0.70710678118654752440)
#define SQRT_2_OVER_PI ((CT)0.79788456080286535588)
#define INV_SQRT_2PI ((CT)0.39894228040143267794)
#define KAPPA ((CT)0.044715)

inline CT sigmoid_of(CT a) { return (CT)1 / ((CT)1 + exp(-a)); }

/* tanh that reaches +-1: some OpenCL libraries (PoCL's float tanh) stop one ulp short, even
 * at infinity. Beyond these bounds tanh rounds to +-1 in float / double. */
inline CT tanh_of(CT a) {
  CT saturate = sizeof(CT) == 4 ? (CT)9.1 : (CT)19.1;
  return fabs(a) > saturate ? copysign((CT)1, a) : tanh(a);
}

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

UNARY(abs, STORE, fabs(a))
UNARY(exp, STORE, exp(a))
UNARY(exp2, STORE, exp2(a))
UNARY(expm1, STORE, expm1(a))
UNARY(log, STORE, log(a))
UNARY(log2, STORE, log2(a))
UNARY(log10, STORE, log10(a))
UNARY(log1p, STORE, log1p(a))
UNARY(sqrt, STORE, sqrt(a))
UNARY(rsqrt, STORE, rsqrt(a))
UNARY(reciprocal, STORE, (CT)1 / a)
UNARY(sin, STORE, sin(a))
UNARY(cos, STORE, cos(a))
UNARY(tan, STORE, tan(a))
UNARY(tanh, STORE, tanh_of(a))
UNARY(sigmoid, STORE, sigmoid_of(a))
UNARY(erf, STORE, erf(a))
UNARY(silu, STORE, a * sigmoid_of(a))
UNARY(gelu, STORE, HALF * a * ((CT)1 + erf(a * SQRT1_2)))
UNARY(gelu_tanh, STORE, HALF * a * ((CT)1 + tanh_of(SQRT_2_OVER_PI * (a + KAPPA * a * a * a))))
UNARY(softplus, STORE, a * alpha > beta ? a : log1p(exp(a * alpha)) / alpha)
BINARY(div, STORE, a / b)
BINARY(div_trunc, STORE, trunc(a / b))
BINARY(div_floor, STORE, floor_divide(a, b))
BINARY(pow, STORE, pow(a, b))
TERNARY(addcdiv, STORE, a + alpha * b / c)
TERNARY(lerp, STORE, fabs(c) < HALF ? a + c * (b - a) : b - (b - a) * ((CT)1 - c))
/* Backward ops: a is the incoming gradient, b the forward's input or output. */
BINARY(sigmoid_backward, STORE, a * ((CT)1 - b) * b)
BINARY(tanh_backward, STORE, a * ((CT)1 - b * b))
BINARY(silu_backward, STORE, a * sigmoid_of(b) * ((CT)1 + b * ((CT)1 - sigmoid_of(b))))
BINARY(gelu_backward, STORE,
       a * (HALF * ((CT)1 + erf(b * SQRT1_2)) + b * INV_SQRT_2PI * exp(-HALF * b * b)))
BINARY(gelu_tanh_backward, STORE, gelu_tanh_backward_of(a, b))
BINARY(softplus_backward, STORE,
       b * alpha > beta ? a : a * exp(b * alpha) / (exp(b * alpha) + (CT)1))
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
inline CT remainder_of(CT a, CT b) {
  CT mod = fmod(a, b);
  if (mod != 0 && ((b < 0) != (mod < 0))) mod += b;
  return mod;
}
inline CT logaddexp_of(CT a, CT b) {
  if (isinf(a) && a == b) return a;
  CT m = max_nan(a, b);
  return m + log1p(exp(-fabs(a - b)));
}
/* round(x, decimals): alpha = 10^|decimals|, beta > 0 when decimals are negative. */
inline CT round_decimals_of(CT a, CT ten_pow, CT negative) {
  return negative > 0 ? rint(a / ten_pow) * ten_pow : rint(a * ten_pow) / ten_pow;
}
inline CT mish_backward_of(CT g, CT x) {
  CT sig = sigmoid_of(x);
  CT t = tanh_of(log1p(exp(x)));
  return g * (t + x * sig * ((CT)1 - t * t));
}
inline CT log_sigmoid_backward_of(CT g, CT x) {
  CT z = exp(-fabs(x));
  return x < 0 ? g * ((CT)1 - z / ((CT)1 + z)) : g * (z / ((CT)1 + z));
}
UNARY(floor, STORE, floor(a))
UNARY(ceil, STORE, ceil(a))
UNARY(round, STORE, rint(a))
UNARY(round_decimals, STORE, round_decimals_of(a, alpha, beta))
UNARY(trunc, STORE, trunc(a))
UNARY(frac, STORE, a - trunc(a))
BINARY(fmod, STORE, fmod(a, b))
BINARY(remainder, STORE, remainder_of(a, b))
BINARY(atan2, STORE, atan2(a, b))
BINARY(hypot, STORE, hypot(a, b))
BINARY(logaddexp, STORE, logaddexp_of(a, b))
BINARY(copysign, STORE, copysign(a, b))
BINARY(xlogy, STORE, isnan(b) ? b : (a == 0 ? (CT)0 : a * log(b)))
UNARY(isnan, ST_BOOL, isnan(a))
UNARY(isposinf, ST_BOOL, isinf(a) && a > 0)
UNARY(isneginf, ST_BOOL, isinf(a) && a < 0)
UNARY(signbit, ST_BOOL, signbit(a) != 0)
/* nan_to_num: b (a scalar input) replaces NaN, alpha +inf, beta -inf. */
BINARY(nan_to_num, STORE, isnan(a) ? b : (isinf(a) ? (a > 0 ? alpha : beta) : a))
UNARY(asin, STORE, asin(a))
UNARY(acos, STORE, acos(a))
UNARY(atan, STORE, atan(a))
UNARY(sinh, STORE, sinh(a))
UNARY(cosh, STORE, cosh(a))
UNARY(asinh, STORE, asinh(a))
UNARY(acosh, STORE, acosh(a))
UNARY(atanh, STORE, atanh(a))
/* elu: alpha, beta = scale, b (scalar input) = input_scale. */
BINARY(elu, STORE, a <= 0 ? (exp(a * b) - (CT)1) * alpha * beta : a * beta)
/* elu backward: a the gradient, b the input (or the output for _result), c input_scale. */
TERNARY(elu_backward, STORE, b <= 0 ? a * c * alpha * beta * exp(b * c) : a * beta)
TERNARY(elu_backward_result, STORE, b <= 0 ? a * c * (b + alpha * beta) : a * beta)
UNARY(hardsigmoid, STORE, min(max(a + (CT)3, (CT)0), (CT)6) / (CT)6)
/* PyTorch multiplies by 1/6 rounded to float, in every dtype. */
BINARY(hardsigmoid_backward, STORE, (b > (CT)-3 && b < (CT)3) ? a * (CT)(1.0f / 6.0f) : (CT)0)
UNARY(hardswish, STORE, a * min(max(a + (CT)3, (CT)0), (CT)6) / (CT)6)
BINARY(hardswish_backward, STORE,
       b < (CT)-3 ? (CT)0 : (b <= (CT)3 ? a * (b / (CT)3 + HALF) : a))
UNARY(mish, STORE, a * tanh_of(log1p(exp(a))))
BINARY(mish_backward, STORE, mish_backward_of(a, b))
UNARY(log_sigmoid, STORE, min(a, (CT)0) - log1p(exp(-fabs(a))))
BINARY(log_sigmoid_backward, STORE, log_sigmoid_backward_of(a, b))
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

/* ---- conversions: cast_<dst> reads this program's type and writes dst ----------------------- */
#define CAST(dst, ST_DST)            \
  __kernel void ew_cast_##dst(EW_SIG) { \
    EW_BEGIN(1)                      \
    CT a = IN(1, x, s1);             \
    ST_DST(PTR(o), off[0], a);       \
  }
CAST(f32, ST_F32)
CAST(f16, ST_F16)
CAST(bf16, ST_BF16)
CAST(i64, ST_I64)
CAST(i32, ST_I32)
CAST(i16, ST_I16)
CAST(i8, ST_I8)
CAST(u8, ST_U8)
CAST(bool, ST_BOOL)
#ifdef HAS_FP64
CAST(f64, ST_F64)
#endif
