/*
 * Elementwise ops on complex numbers (family "ew_common+complex", built with -DDT_C64 or
 * -DDT_C128): CT is float2 / double2 (real, imaginary), RT the real type of a part. The
 * kernels share ew_common.cl's signature and geometry; an op's expression sees its inputs
 * a, b, c as CT. Formulas follow C99 Annex G where the plain ones would overflow or lose the
 * special values PyTorch's CPU keeps (division scales by the larger part of the divisor, as
 * its c10::complex does; abs is hypot).
 */

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
