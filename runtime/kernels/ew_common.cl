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

#define UNARY(name, OUT, expr)              \
  __kernel void ew_##name(EW_SIG) {              \
    EW_BEGIN(1)                             \
    CT a = IN(1, x, s1);                    \
    OUT(PTR(o), off[0], (expr));            \
  }
#define BINARY(name, OUT, expr)             \
  __kernel void ew_##name(EW_SIG) {              \
    EW_BEGIN(2)                             \
    CT a = IN(1, x, s1);                    \
    CT b = IN(2, y, s2);                    \
    OUT(PTR(o), off[0], (expr));            \
  }
#define TERNARY(name, OUT, expr)            \
  __kernel void ew_##name(EW_SIG) {              \
    EW_BEGIN(3)                             \
    CT a = IN(1, x, s1);                    \
    CT b = IN(2, y, s2);                    \
    CT c = IN(3, z, s3);                    \
    OUT(PTR(o), off[0], (expr));            \
  }
