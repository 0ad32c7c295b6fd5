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
#define EW_SIG BUF(o), BUF(x), BUF(y), BUF(z), ew_geom g, CT s1, CT s2, CT s3, CT alpha, CT beta
#define EW_BEGIN(n)                 \
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
#define EW_ROWS(rows_name, n, BODY)                                       \
  __kernel void rows_name(EW_SIG) {                                       \
    long run = get_global_id(0), len = g.sizes[0];                        \
    if (run >= g.numel / len) return;                                     \
    long base[4];                                                         \
    ew_offsets(&g, run * len, (n) + 1, base);                             \
    for (long j = 0; j < len; j++) {                                      \
      long i = run * len + j, off[4];                                     \
      for (int k = 0; k <= (n); k++) off[k] = base[k] + j * g.strides[k][0]; \
      BODY                                                                \
    }                                                                     \
  }
#endif

/* A kernel in both forms: ew_<name> (an element per work-item) and ewr_<name>. The names are
 * pasted here, before `name` can meet a macro of the same name (exp, log ... are builtins). */
#define EW_KERNEL(name, n, BODY) EW_BOTH(ew_##name, ewr_##name, n, BODY)
#define EW_BOTH(element_name, rows_name, n, BODY) \
  __kernel void element_name(EW_SIG) {            \
    EW_BEGIN(n)                                   \
    BODY                                          \
  }                                               \
  EW_ROWS(rows_name, n, BODY)

#define UNARY(name, OUT, expr) \
  EW_BOTH(ew_##name, ewr_##name, 1, { CT a = IN(1, x, s1); OUT(PTR(o), off[0], (expr)); })
#define BINARY(name, OUT, expr)                                                              \
  EW_BOTH(ew_##name, ewr_##name, 2,                                                          \
          { CT a = IN(1, x, s1); CT b = IN(2, y, s2); OUT(PTR(o), off[0], (expr)); })
#define TERNARY(name, OUT, expr)                              \
  EW_BOTH(ew_##name, ewr_##name, 3, {                         \
    CT a = IN(1, x, s1);                                      \
    CT b = IN(2, y, s2);                                      \
    CT c = IN(3, z, s3);                                      \
    OUT(PTR(o), off[0], (expr));                              \
  })
