/*
 * What every elementwise-shaped family shares (prepended to elementwise.cl, special.cl, ...
 * through the family name "ew_common+<family>"): the kernel signature -- output o, up to
 * three inputs x, y, z (read as CT, or taken from the scalar arguments s1..s3 where
 * ew_geom.scalar_mask says so), two scalar parameters alpha and beta -- and the macros that
 * define a kernel ew_<name> from one expression of its inputs a, b, c.
 */

#ifdef EW_CONTIG
/* Built for launches whose memory operands all walk one contiguous range (the runtime checks):
 * the offsets are the index, and of the geometry only its head (ew_geom's first fields) comes. */
typedef struct ew_line {
  long numel;
  long ndim;
  long scalar_mask;
} ew_line;
#define EW_SIG BUF(o), BUF(x), BUF(y), BUF(z), ew_line g, CT s1, CT s2, CT s3, CT alpha, CT beta
#define EW_BEGIN(n)                 \
  long i = get_global_id(0);        \
  if (i >= g.numel) return;         \
  long off[4] = {i, i, i, i};
#else
#define EW_SIG \
  BUF(o), BUF(x), BUF(y), BUF(z), STRUCT_ARG(ew_geom, g), CT s1, CT s2, CT s3, CT alpha, CT beta
#define EW_BEGIN(n)                 \
  PRIVATE_STRUCT(ew_geom, g);       \
  long i = get_global_id(0);        \
  if (i >= g.numel) return;         \
  long off[4];                      \
  ew_offsets(&g, i, (n) + 1, off);
#endif
#define IN(k, buf, s) ((g.scalar_mask & (1 << ((k)-1))) ? (s) : LOAD(PTR(buf), off[k]))

/* The strided variant's "rows" form, ewr_<name>, for CPU devices (the runtime chooses it): a
 * work-item per run of dimension 0 of the iteration, so the divisions that locate a run are
 * paid once per run, not per element (broadcast and permuted operands are the usual case).
 * BODY sees i and off[] as under EW_BEGIN. The contiguous variant needs no such form. */
#ifdef EW_CONTIG
#define EW_ROWS(rows_name, n, BODY)
#else
#define EW_ROWS(rows_name, n, BODY) IF_WANTED(rows_name,                   \
  KERNEL(rows_name)(EW_SIG) {                                       \
    PRIVATE_STRUCT(ew_geom, g);                                           \
    long run = get_global_id(0), len = g.sizes[0];                        \
    if (run >= g.numel / len) return;                                     \
    long base[4];                                                         \
    ew_offsets(&g, run * len, (n) + 1, base);                             \
    for (long j = 0; j < len; j++) {                                      \
      long i = run * len + j, off[4];                                     \
      for (int k = 0; k <= (n); k++) off[k] = base[k] + j * GEOM_STRIDE(g, k, 0); \
      BODY                                                                \
    }                                                                     \
  })
#endif

/* A kernel in both forms: ew_<name> (an element per work-item) and ewr_<name>. The names are
 * pasted here, before `name` can meet a macro of the same name (exp, log ... are builtins). */
#define EW_KERNEL(name, n, BODY) EW_BOTH(ew_##name, ewr_##name, n, BODY)
#define EW_BOTH(element_name, rows_name, n, BODY) \
  IF_WANTED(element_name, KERNEL(element_name)(EW_SIG) { \
    EW_BEGIN(n)                                   \
    BODY                                          \
  })                                              \
  EW_ROWS(rows_name, n, BODY)

/* The bodies of UNARY / BINARY / TERNARY kernels, element off[] of each operand. */
#define UNARY_BODY(OUT, expr) { CT a = IN(1, x, s1); OUT(PTR(o), off[0], (expr)); }
#define BINARY_BODY(OUT, expr)    \
  {                               \
    CT a = IN(1, x, s1);          \
    CT b = IN(2, y, s2);          \
    OUT(PTR(o), off[0], (expr));  \
  }
#define UNARY(name, OUT, expr) EW_BOTH(ew_##name, ewr_##name, 1, UNARY_BODY(OUT, expr))
#define BINARY(name, OUT, expr) EW_BOTH(ew_##name, ewr_##name, 2, BINARY_BODY(OUT, expr))
#define TERNARY_BODY(OUT, expr) \
  {                              \
    CT a = IN(1, x, s1);         \
    CT b = IN(2, y, s2);         \
    CT c = IN(3, z, s3);         \
    OUT(PTR(o), off[0], (expr)); \
  }
#define TERNARY(name, OUT, expr) EW_BOTH(ew_##name, ewr_##name, 3, TERNARY_BODY(OUT, expr))

/* The vector form ewv_<name> of a float op (CPU devices; the runtime chooses it where the
 * kernel exists): elements loaded eight at a time as one vector, so the op's math runs in the
 * driver's vector library. PoCL's scalar sin, log, atan ... are called once per element and do
 * not vectorise (sin: 19.5 ns an element on 2 cores, 1.9 as float8). The contiguous program's
 * form walks the whole range, the strided program's walks rows of contiguous or broadcast
 * operands. The expression is the scalar kernel's own text, evaluated with CT redeclared as the
 * vector type; a partial vector's elements go one at a time. Only expressions that mean the
 * same on vectors may have this form: comparisons give -1, not 1, in a vector lane, so
 * arithmetic on truth values stays scalar (a comparison as a ?: condition is fine: a vector
 * condition selects by each lane's sign bit). */
#ifdef HAS_VCT
/* Vectors per work-item (the runtime's EW_VECTORS must match): PoCL pays about a microsecond
 * per work-group, which at eight elements per item showed in cheap ops (clamp of 1e6 floats:
 * 0.17 ns an element at 1 vector per item in groups of 256, 0.12 at 16 in groups of 16). */
#define EW_VECTORS 16
#define EW_SPAN (8 * EW_VECTORS)
/* Operand k of the vector at element j: VAT(k) is its first element; VLOAD_AS(k, buf, VLD,
 * SPLAT) reads it with VLD, or (a broadcast row) repeats one element read with SPLAT. */
#define VIN(k, buf, s) \
  ((g.scalar_mask & (1 << ((k)-1))) ? (CT)(s) : VLOAD_AS(k, buf, VLOAD, SPLAT_CT))
#define SPLAT_CT(p, i) ((CT)(LOAD(p, i)))
#define SPLAT_BOOL(p, i) ((int8)(LD_BOOL(p, i) ? -1 : 0))
#define VOUT(x) VSTORE(PTR(o), VAT(0), (x))
#endif

#if defined(EW_CONTIG) && defined(HAS_VCT)
#define VAT(k) j
#define VLOAD_AS(k, buf, VLD, SPLAT) VLD(PTR(buf), j)
#define EW_VEC(vector_name, VBODY, SBODY) IF_WANTED(vector_name, \
  KERNEL(vector_name)(EW_SIG) {                                   \
    long first = get_global_id(0) * EW_SPAN;                      \
    for (long j = first; j < first + EW_SPAN; j += 8) {           \
      if (j + 8 <= g.numel) {                                     \
        typedef VCT CT;                                           \
        VBODY                                                     \
      } else {                                                    \
        for (long i = j; i < g.numel; i++) {                      \
          long off[4] = {i, i, i, i};                             \
          SBODY                                                   \
        }                                                         \
        return;                                                   \
      }                                                           \
    }                                                             \
  })
#elif defined(HAS_VCT)
/* The strided program's vector form, for rows (runs of dimension 0) along which every memory
 * operand is contiguous or one repeated element (a bias row, a column broadcast) and the
 * output contiguous; the runtime checks. A work-item takes EW_SPAN elements of one run, so
 * short and long rows both spread over the cores; it locates its run once. */
#define VAT(k) (base[k] + j)
#define VLOAD_AS(k, buf, VLD, SPLAT) \
  (GEOM_STRIDE(g, k, 0) ? VLD(PTR(buf), base[k] + j) : SPLAT(PTR(buf), base[k]))
#define EW_VEC(vector_name, VBODY, SBODY) IF_WANTED(vector_name,               \
  KERNEL(vector_name)(EW_SIG) {                                                   \
    PRIVATE_STRUCT(ew_geom, g);                                                   \
    long len = g.sizes[0], chunks = (len + EW_SPAN - 1) / EW_SPAN;                \
    long item = get_global_id(0), run = item / chunks;                            \
    if (run >= g.numel / len) return;                                             \
    long j = (item - run * chunks) * EW_SPAN, end = min(j + EW_SPAN, len), base[4]; \
    ew_offsets(&g, run * len, 4, base);                                           \
    for (; j + 8 <= end; j += 8) {                                                \
      typedef VCT CT;                                                             \
      VBODY                                                                       \
    }                                                                             \
    for (; j < end; j++) {                                                        \
      long i = run * len + j, off[4];                                             \
      for (int k = 0; k < 4; k++) off[k] = base[k] + j * GEOM_STRIDE(g, k, 0);         \
      SBODY                                                                       \
    }                                                                             \
  })
#else
#define EW_VEC(vector_name, VBODY, SBODY)
#endif

/* UNARY / BINARY with the vector form as well (the output is the program's type). Names are
 * pasted here too: PoCL defines exp, sin ... as macros, which an argument passed on unpasted
 * would meet. */
#define VUNARY(name, expr)                                                 \
  EW_BOTH(ew_##name, ewr_##name, 1, UNARY_BODY(STORE, expr))               \
  EW_VEC(ewv_##name, { CT a = VIN(1, x, s1); VOUT(expr); }, \
         UNARY_BODY(STORE, expr))
#define VBINARY(name, expr)                                    \
  EW_BOTH(ew_##name, ewr_##name, 2, BINARY_BODY(STORE, expr))  \
  EW_VEC(ewv_##name,                                           \
         {                                                     \
           CT a = VIN(1, x, s1);                               \
           CT b = VIN(2, y, s2);                               \
           VOUT(expr);                          \
         },                                                    \
         BINARY_BODY(STORE, expr))
/* A comparison writing bool, with the vector form. */
#define VPREDICATE(name, expr)                                  \
  BINARY(name, ST_BOOL, expr)                                   \
  EW_VEC(ewv_##name,                                            \
         {                                                      \
           CT a = VIN(1, x, s1);                                \
           CT b = VIN(2, y, s2);                                \
           VST_BOOL(PTR(o), VAT(0), (expr));                    \
         },                                                     \
         BINARY_BODY(ST_BOOL, expr))
#define VTERNARY(name, expr)                                    \
  EW_BOTH(ew_##name, ewr_##name, 3, TERNARY_BODY(STORE, expr))  \
  EW_VEC(ewv_##name,                                            \
         {                                                      \
           CT a = VIN(1, x, s1);                                \
           CT b = VIN(2, y, s2);                                \
           CT c = VIN(3, z, s3);                                \
           VOUT(expr);                           \
         },                                                     \
         TERNARY_BODY(STORE, expr))

/* ---- kernels from the pointwise table (pointwise_ops.def, appended after the family's file)
 * Each row of the family becomes ew_<name> and ewr_<name> (and ewv_<name> for VECTOR forms),
 * their expression the row's math PW_<CLASS>_<name>(CT, a, b, c, alpha, beta) from
 * pointwise_math.cl. The program's dtype class picks the row's column: float programs the
 * float column, integer programs the integer one, bool programs the bool one (INT: the
 * integer column and math). A family file says which rows are its own by defining
 * PW_IN_<family>(...) as its arguments for itself and as nothing for the others. */
#define AXON_POINTWISE(name, family, arity, ff, fi, fb, out, glue, aten, inductor)             \
  PW_IN_##family(PW_DEFINE(PW_FORM(ff, fi, fb), PW_MATH(ff, fi, fb, PW_FLOAT_##name,           \
                                                        PW_INT_##name, PW_BOOL_##name,       \
                                                        PW_ANY_##name),                      \
                           ew_##name, ewr_##name, ewv_##name, arity, out))
#if defined(IS_FLOAT)
#define PW_FORM(ff, fi, fb) ff
#define PW_MATH(ff, fi, fb, F, I, B, A) PW_MATH_##ff(F, A)
#elif defined(IS_BOOL)
#define PW_FORM(ff, fi, fb) PW_BOOL_FORM_##fb(fi)
#define PW_MATH(ff, fi, fb, F, I, B, A) PW_BOOL_MATH_##fb(fi, I, B, A)
#else
#define PW_FORM(ff, fi, fb) fi
#define PW_MATH(ff, fi, fb, F, I, B, A) PW_MATH_##fi(I, A)
#endif
#define PW_BOOL_FORM_INT(fi) fi
#define PW_BOOL_FORM_NONE(fi) NONE
#define PW_BOOL_FORM_SCALAR(fi) SCALAR
#define PW_BOOL_FORM_SCALAR_ANY(fi) SCALAR_ANY
#define PW_BOOL_FORM_CUSTOM(fi) CUSTOM
#define PW_BOOL_MATH_INT(fi, I, B, A) PW_MATH_(fi, I, A)
#define PW_BOOL_MATH_NONE(fi, I, B, A)
#define PW_BOOL_MATH_SCALAR(fi, I, B, A) B
#define PW_BOOL_MATH_SCALAR_ANY(fi, I, B, A) A
#define PW_BOOL_MATH_CUSTOM(fi, I, B, A)
#define PW_MATH_(form, own, any) PW_MATH_##form(own, any)
#define PW_MATH_NONE(own, any)
#define PW_MATH_CUSTOM(own, any)
#define PW_MATH_SCALAR(own, any) own
#define PW_MATH_VECTOR(own, any) own
#define PW_MATH_SCALAR_ANY(own, any) any
#define PW_MATH_VECTOR_ANY(own, any) any
/* The form pasted one level down, once PW_FORM has expanded. */
#define PW_DEFINE(form, math, ew, ewr, ewv, arity, out) PW_DEFINE_(form, math, ew, ewr, ewv, arity, out)
#define PW_DEFINE_(form, math, ew, ewr, ewv, arity, out) PW_KERNELS_##form(math, ew, ewr, ewv, arity, out)
#define PW_KERNELS_NONE(math, ew, ewr, ewv, arity, out)
#define PW_KERNELS_CUSTOM(math, ew, ewr, ewv, arity, out)
#define PW_KERNELS_SCALAR(math, ew, ewr, ewv, arity, out) \
  EW_BOTH(ew, ewr, arity, PW_BODY_##arity(PW_STORE_##out, math(CT, a, b, c, alpha, beta)))
#define PW_KERNELS_SCALAR_ANY PW_KERNELS_SCALAR
#define PW_KERNELS_VECTOR(math, ew, ewr, ewv, arity, out)                            \
  PW_KERNELS_SCALAR(math, ew, ewr, ewv, arity, out)                                  \
  EW_VEC(ewv, { PW_VLOAD_##arity PW_VSTORE_##out(math(CT, a, b, c, alpha, beta)); }, \
         PW_TAIL(arity, PW_STORE_##out, math))
/* The vector form's last partial vector goes element by element, each through the vector math
 * as lane 0 of a splat: the vector kernel then holds no second, scalar copy of the math. With
 * one (straight-line axon_exp in the scalar sigmoid) PoCL's code for the whole kernel ran
 * slower (sigmoid 0.267 -> 0.303 ns an element), and this way every element of a tensor gets
 * the same rounding. */
#define PW_TAIL(arity, OUT, math)                                  \
  {                                                                \
    PW_TAIL_LOAD_##arity {                                         \
      typedef VCT CT;                                              \
      PW_TAIL_SPLAT_##arity                                        \
      OUT(PTR(o), off[0], (math(CT, a, b, c, alpha, beta)).s0);    \
    }                                                              \
  }
#define PW_TAIL_LOAD_1 CT a1 = IN(1, x, s1);
#define PW_TAIL_LOAD_2 PW_TAIL_LOAD_1 CT b1 = IN(2, y, s2);
#define PW_TAIL_LOAD_3 PW_TAIL_LOAD_2 CT c1 = IN(3, z, s3);
#define PW_TAIL_SPLAT_1 CT a = (CT)(a1);
#define PW_TAIL_SPLAT_2 PW_TAIL_SPLAT_1 CT b = (CT)(b1);
#define PW_TAIL_SPLAT_3 PW_TAIL_SPLAT_2 CT c = (CT)(c1);
#define PW_KERNELS_VECTOR_ANY PW_KERNELS_VECTOR
#define PW_BODY_1 UNARY_BODY
#define PW_BODY_2 BINARY_BODY
#define PW_BODY_3 TERNARY_BODY
#define PW_STORE_SAME STORE
#define PW_STORE_BOOL ST_BOOL
#define PW_VLOAD_1 CT a = VIN(1, x, s1);
#define PW_VLOAD_2 PW_VLOAD_1 CT b = VIN(2, y, s2);
#define PW_VLOAD_3 PW_VLOAD_2 CT c = VIN(3, z, s3);
#define PW_VSTORE_SAME(v) VOUT(v)
#define PW_VSTORE_BOOL(v) VST_BOOL(PTR(o), VAT(0), (v))
