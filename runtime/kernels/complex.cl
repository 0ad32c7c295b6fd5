/*
 * Elementwise ops on complex numbers (family "ew_common+complex", built with -DDT_C64 or
 * -DDT_C128): CT is float2 / double2 (real, imaginary), RT the real type of a part. The
 * kernels share ew_common.cl's signature and geometry; an op's expression sees its inputs
 * a, b, c as CT. Formulas follow C99 Annex G where the plain ones would overflow or lose the
 * special values PyTorch's CPU keeps (division scales by the larger part of the divisor, as
 * its c10::complex does; abs is hypot).
 */

/* Constants in the part type (M_PI and friends are double, which not every device has). */
#define C_PI ((RT)3.14159265358979323846)
#define C_LN2 ((RT)0.69314718055994530942)
#define C_LN10 ((RT)2.30258509299404568402)

inline CT c_mul(CT a, CT b) {
  return (CT)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

/* Smith's division, as c10::complex divides: no overflow when the divisor's parts are large,
 * and a complex inf or NaN for a zero divisor. */
inline CT c_div(CT a, CT b) {
  if (fabs(b.x) >= fabs(b.y)) {
    if (b.x == (RT)0 && b.y == (RT)0) return (CT)(a.x / fabs(b.x), a.y / fabs(b.y));
    RT r = b.y / b.x, scale = (RT)1 / (b.x + b.y * r);
    return (CT)((a.x + a.y * r) * scale, (a.y - a.x * r) * scale);
  }
  RT r = b.x / b.y, scale = (RT)1 / (b.y + b.x * r);
  return (CT)((a.x * r + a.y) * scale, (a.y * r - a.x) * scale);
}

inline RT c_abs(CT a) {
  return hypot(a.x, a.y);
}

inline CT c_exp(CT a) {
  RT m = exp(a.x);
  if (a.y == (RT)0) return (CT)(m, a.y); /* exact for real arguments, inf included */
  return (CT)(m * cos(a.y), m * sin(a.y));
}

inline CT c_log(CT a) {
  return (CT)(log(c_abs(a)), atan2(a.y, a.x));
}

/* Principal square root, stable for either sign of the real part. */
inline CT c_sqrt(CT a) {
  if (a.x == (RT)0 && a.y == (RT)0) return (CT)((RT)0, a.y);
  RT t = sqrt((fabs(a.x) + c_abs(a)) / (RT)2);
  if (a.x >= (RT)0) return (CT)(t, a.y / ((RT)2 * t));
  return (CT)(fabs(a.y) / ((RT)2 * t), copysign(t, a.y));
}

inline CT c_sin(CT a) {
  return (CT)(sin(a.x) * cosh(a.y), cos(a.x) * sinh(a.y));
}

inline CT c_cos(CT a) {
  return (CT)(cos(a.x) * cosh(a.y), -sin(a.x) * sinh(a.y));
}

/* tanh(x + iy) = (sinh 2x + i sin 2y) / (cosh 2x + cos 2y), saturating for large |x|. */
inline CT c_tanh(CT a) {
  if (fabs(a.x) > (RT)20) return (CT)(copysign((RT)1, a.x), (RT)0 * sin((RT)2 * a.y));
  RT d = cosh((RT)2 * a.x) + cos((RT)2 * a.y);
  return (CT)(sinh((RT)2 * a.x) / d, sin((RT)2 * a.y) / d);
}

inline CT c_sigmoid(CT a) {
  return c_div((CT)((RT)1, (RT)0), (CT)((RT)1, (RT)0) + c_exp(-a));
}

/* z / |z|, 0 at 0 (torch.sgn). */
inline CT c_sgn(CT a) {
  RT m = c_abs(a);
  return m == (RT)0 ? (CT)((RT)0, (RT)0) : a / m;
}

/* pow as exp(b log a), with 0^b = 0 for b of positive real part and the integer powers 0
 * and 1 exact. */
inline CT c_pow(CT a, CT b) {
  if (b.x == (RT)0 && b.y == (RT)0) return (CT)((RT)1, (RT)0);
  if (b.x == (RT)1 && b.y == (RT)0) return a;
  if (b.x == (RT)2 && b.y == (RT)0) return c_mul(a, a);
  if (a.x == (RT)0 && a.y == (RT)0 && b.x > (RT)0) return (CT)((RT)0, (RT)0);
  return c_exp(c_mul(b, c_log(a)));
}

/* i z and -i z: the rotations that turn the circular functions into the hyperbolic ones. */
inline CT c_times_i(CT a) {
  return (CT)(-a.y, a.x);
}
inline CT c_times_minus_i(CT a) {
  return (CT)(a.y, -a.x);
}

inline CT c_sinh(CT a) {
  return (CT)(sinh(a.x) * cos(a.y), cosh(a.x) * sin(a.y));
}

inline CT c_cosh(CT a) {
  return (CT)(cosh(a.x) * cos(a.y), sinh(a.x) * sin(a.y));
}

inline CT c_tan(CT a) { /* tan z = -i tanh(i z) */
  return c_times_minus_i(c_tanh(c_times_i(a)));
}

/* Kahan's formulas ("Branch cuts for complex elementary functions", 1987): accurate near the
 * branch points and on the cuts (signed zeros pick the side), unlike log(z + sqrt(z^2 - 1)). */
inline CT c_asin(CT a) {
  CT s1 = c_sqrt((CT)((RT)1 - a.x, -a.y)), s2 = c_sqrt((CT)((RT)1 + a.x, a.y));
  return (CT)(atan2(a.x, s1.x * s2.x - s1.y * s2.y), asinh(s1.x * s2.y - s1.y * s2.x));
}

inline CT c_acos(CT a) {
  CT s1 = c_sqrt((CT)((RT)1 - a.x, -a.y)), s2 = c_sqrt((CT)((RT)1 + a.x, a.y));
  return (CT)((RT)2 * atan2(s1.x, s2.x), asinh(s2.x * s1.y - s2.y * s1.x));
}

inline CT c_acosh(CT a) {
  CT s1 = c_sqrt((CT)(a.x - (RT)1, a.y)), s2 = c_sqrt((CT)(a.x + (RT)1, a.y));
  return (CT)(asinh(s1.x * s2.x + s1.y * s2.y), (RT)2 * atan2(s1.y, s2.x));
}

inline CT c_asinh(CT a) { /* asinh z = -i asin(i z) */
  return c_times_minus_i(c_asin(c_times_i(a)));
}

/* atanh z = (log1p(z) - log1p(-z)) / 2, its real part through log1p so that small z keeps
 * its relative precision, on the right half-plane (atanh is odd): there log1p's argument is
 * positive, not near -1 where it would lose the digits that matter. */
inline CT c_atanh_right(CT a) {
  /* 1 - |z|^2 cancels near the unit circle: in double where the device has it. */
#ifdef HAS_FP64
  double x = a.x, y = a.y;
#else
  RT x = a.x, y = a.y;
#endif
  RT one_minus = (RT)1 - a.x, y2 = a.y * a.y;
  RT re = log1p((RT)4 * a.x / (one_minus * one_minus + y2)) / (RT)4;
  RT im = atan2((RT)2 * a.y, (RT)((1 - x) * (1 + x) - y * y)) / (RT)2;
  return (CT)(re, im);
}

inline CT c_atanh(CT a) {
  return signbit(a.x) ? -c_atanh_right(-a) : c_atanh_right(a);
}

inline CT c_atan(CT a) { /* atan z = -i atanh(i z) */
  return c_times_minus_i(c_atanh(c_times_i(a)));
}

/* log(1 + z), near 0 from log1p of |1 + z|^2 - 1 = 2x + x^2 + y^2 (no cancellation). */
inline CT c_log1p(CT a) {
  if (fabs(a.x) < (RT)0.5 && fabs(a.y) < (RT)0.5)
    return (CT)(log1p(a.x * ((RT)2 + a.x) + a.y * a.y) / (RT)2, atan2(a.y, (RT)1 + a.x));
  return c_log((CT)((RT)1 + a.x, a.y));
}

/* exp(z) - 1 = (expm1(x) cos y - 2 sin^2(y / 2)) + i exp(x) sin y. */
inline CT c_expm1(CT a) {
  RT half_sin = sin(a.y / (RT)2);
  return (CT)(expm1(a.x) * cos(a.y) - (RT)2 * half_sin * half_sin, exp(a.x) * sin(a.y));
}

/* log(exp(a) + exp(b)) from the operand of larger real part, as PyTorch computes it. */
inline CT c_logaddexp(CT a, CT b) {
  if (isinf(a.x) && a.x == b.x && a.y == b.y) return a;
  CT big = a.x >= b.x ? a : b, small = a.x >= b.x ? b : a;
  return big + c_log1p(c_exp(small - big));
}

inline CT c_sinc(CT a) {
  if (a.x == (RT)0 && a.y == (RT)0) return (CT)((RT)1, (RT)0);
  CT pa = C_PI * a;
  return c_div(c_sin(pa), pa);
}

inline int c_nonzero(CT a) {
  return a.x != (RT)0 || a.y != (RT)0;
}

/* Arithmetic; alpha is add's and sub's real multiplier. */
BINARY(add, STORE, a + (RT)alpha.x * b)
BINARY(sub, STORE, a - (RT)alpha.x * b)
BINARY(mul, STORE, c_mul(a, b))
BINARY(div, STORE, c_div(a, b))
UNARY(neg, STORE, -a)
UNARY(conj_physical, STORE, (CT)(a.x, -a.y))
UNARY(reciprocal, STORE, c_div((CT)((RT)1, (RT)0), a))
UNARY(exp, STORE, c_exp(a))
UNARY(log, STORE, c_log(a))
UNARY(sqrt, STORE, c_sqrt(a))
UNARY(rsqrt, STORE, c_div((CT)((RT)1, (RT)0), c_sqrt(a)))
UNARY(sin, STORE, c_sin(a))
UNARY(cos, STORE, c_cos(a))
UNARY(tanh, STORE, c_tanh(a))
UNARY(sigmoid, STORE, c_sigmoid(a))
UNARY(sign, STORE, c_sgn(a)) /* torch.sgn */
BINARY(pow, STORE, c_pow(a, b))
UNARY(sinh, STORE, c_sinh(a))
UNARY(cosh, STORE, c_cosh(a))
UNARY(tan, STORE, c_tan(a))
UNARY(asin, STORE, c_asin(a))
UNARY(acos, STORE, c_acos(a))
UNARY(atan, STORE, c_atan(a))
UNARY(asinh, STORE, c_asinh(a))
UNARY(acosh, STORE, c_acosh(a))
UNARY(atanh, STORE, c_atanh(a))
UNARY(log1p, STORE, c_log1p(a))
UNARY(log2, STORE, c_log(a) / C_LN2)
UNARY(log10, STORE, c_log(a) / C_LN10)
UNARY(exp2, STORE, c_exp(C_LN2 * a))
UNARY(expm1, STORE, c_expm1(a))
UNARY(silu, STORE, c_mul(a, c_sigmoid(a)))
UNARY(sinc, STORE, c_sinc(a))
BINARY(logaddexp, STORE, c_logaddexp(a, b))
/* lerp(a, b, w) from the nearer end, as the real kernel does. */
TERNARY(lerp, STORE,
        c_abs(c) < (RT)0.5 ? a + c_mul(c, b - a) : b - c_mul(b - a, (CT)((RT)1, (RT)0) - c))
TERNARY(addcmul, STORE, a + (RT)alpha.x * c_mul(b, c))
TERNARY(addcdiv, STORE, a + (RT)alpha.x * c_div(b, c))
EW_KERNEL(fill, 0, { STORE(PTR(o), off[0], s1); }) /* the value arrives as scalar s1 */

/* where(condition, a, b): the condition is a bool tensor (or the scalar s1). */
EW_KERNEL(where, 3, {
  int cond = (g.scalar_mask & 1) ? (s1.x != 0) : LD_BOOL(PTR(x), off[1]);
  STORE(PTR(o), off[0], cond ? IN(2, y, s2) : IN(3, z, s3));
})

/* Results of a real type (the part type): abs, angle, real and imaginary parts. */
#define ST_RT(p, i, v) (((__global RT *)(p))[i] = (v))
UNARY(abs, ST_RT, c_abs(a))
UNARY(angle, ST_RT, atan2(a.y, a.x))

/* Predicates. */
BINARY(eq, ST_BOOL, a.x == b.x && a.y == b.y)
BINARY(ne, ST_BOOL, a.x != b.x || a.y != b.y)
UNARY(isnan, ST_BOOL, isnan(a.x) || isnan(a.y))
UNARY(isfinite, ST_BOOL, isfinite(a.x) && isfinite(a.y))
UNARY(logical_not, ST_BOOL, !c_nonzero(a))
BINARY(logical_and, ST_BOOL, c_nonzero(a) && c_nonzero(b))
BINARY(logical_or, ST_BOOL, c_nonzero(a) || c_nonzero(b))
BINARY(logical_xor, ST_BOOL, c_nonzero(a) != c_nonzero(b))

/* Conversions: cast_<dst> reads this program's complex type and writes dst: the other complex
 * type, or (as PyTorch does, with its warning) the real part. */
#define CAST(dst, ST_DST) EW_KERNEL(cast_##dst, 1, { ST_DST(PTR(o), off[0], IN(1, x, s1)); })
#define ST_REAL_F32(p, i, v) ST_F32(p, i, (v).x)
#define ST_REAL_F16(p, i, v) ST_F16(p, i, (v).x)
#define ST_REAL_BF16(p, i, v) ST_BF16(p, i, (v).x)
#define ST_REAL_I64(p, i, v) ST_I64(p, i, (v).x)
#define ST_REAL_I32(p, i, v) ST_I32(p, i, (v).x)
#define ST_REAL_I16(p, i, v) ST_I16(p, i, (v).x)
#define ST_REAL_I8(p, i, v) ST_I8(p, i, (v).x)
#define ST_REAL_U8(p, i, v) ST_U8(p, i, (v).x)
#define ST_REAL_U16(p, i, v) ST_U16(p, i, (v).x)
#define ST_REAL_U32(p, i, v) ST_U32(p, i, (v).x)
#define ST_REAL_U64(p, i, v) ST_U64(p, i, (v).x)
#define ST_REAL_F8E4M3(p, i, v) ST_F8E4M3(p, i, (v).x)
#define ST_REAL_F8E5M2(p, i, v) ST_F8E5M2(p, i, (v).x)
#define ST_NONZERO(p, i, v) ST_BOOL(p, i, (v).x != 0 || (v).y != 0)
CAST(c64, ST_C64)
CAST(f32, ST_REAL_F32)
CAST(f16, ST_REAL_F16)
CAST(bf16, ST_REAL_BF16)
CAST(i64, ST_REAL_I64)
CAST(i32, ST_REAL_I32)
CAST(i16, ST_REAL_I16)
CAST(i8, ST_REAL_I8)
CAST(u8, ST_REAL_U8)
CAST(u16, ST_REAL_U16)
CAST(u32, ST_REAL_U32)
CAST(u64, ST_REAL_U64)
CAST(f8e4m3, ST_REAL_F8E4M3)
CAST(f8e5m2, ST_REAL_F8E5M2)
CAST(bool, ST_NONZERO)
#ifdef HAS_FP64
#define ST_REAL_F64(p, i, v) ST_F64(p, i, (v).x)
CAST(c128, ST_C128)
CAST(f64, ST_REAL_F64)
#endif
