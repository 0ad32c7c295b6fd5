/*
 * Elementwise kernels. The pointwise ops are rows of the pointwise table (pointwise_ops.def,
 * appended after this file: ew_common.cl expands the rows of family "elementwise" into kernels
 * ew_<op>, ewr_<op> and ewv_<op>), their math in pointwise_math.cl. This file holds the kernels
 * that are no expression of their operands: fills, arange, where, frexp, complex numbers from
 * real parts and the conversions. One program per element type holds them all, with the
 * signature of ew_common.cl.
 */
#define PW_IN_elementwise(...) __VA_ARGS__
#define PW_IN_special(...)
#define PW_IN_factory(...)

/* Both forms (a strided fill is common: zeros_like of a view, a gradient's buffer). */
EW_KERNEL(fill, 0, { STORE(PTR(o), off[0], s1); })

/* Element i of the output is alpha + beta * i (arange). */
EW_KERNEL(arange, 0, { STORE(PTR(o), off[0], alpha + beta * (CT)i); })

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

#ifdef IS_FLOAT
/* frexp: o the mantissa, y (int32) the exponent of input x. */
KERNEL(ew_frexp)(EW_SIG) {
  EW_BEGIN(2)
  int e;
  CT m = frexp(LOAD(PTR(x), off[1]), &e);
  STORE(PTR(o), off[0], m);
  ST_I32(PTR(y), off[2], e);
}
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
