/*
 * Reductions over a set of dimensions of a strided input. Each op comes in two shapes:
 *   red_<op>         one work-group per output element: work-items stride through the reduced
 *                elements, then combine in a tree in local memory (for long reductions);
 *   red_<op>_serial  one work-item per output element (for many short reductions).
 * Float sums accumulate with Neumaier compensation within a work-item and combine
 * pairwise across work-items, so error does not grow with the length as a serial loop's does.
 */

typedef struct red_geom {
  long out_ndim, red_ndim, out_numel, red_numel;
  long out_sizes[AXON_MAX_DIMS];
  long in_ostrides[AXON_MAX_DIMS];  /* input strides of the kept dims */
  long out_strides[AXON_MAX_DIMS];  /* output strides of the kept dims */
  long aux_strides[AXON_MAX_DIMS];  /* aux strides of the kept dims */
  long red_sizes[AXON_MAX_DIMS];
  long red_strides[AXON_MAX_DIMS];
} red_geom;

#ifdef IS_FLOAT
#define AT CT
#else
#define AT long /* integer sums and products accumulate in 64 bits */
#endif

typedef struct acc_t {
  AT v, c; /* value and compensation */
  long i;  /* index, for the arg ops */
} acc_t;

enum { OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_ARGMAX, OP_ARGMIN, OP_NORM1, OP_NORM2, OP_NORMP,
       OP_NORMINF, OP_NORM0, OP_SUMSQDEV, OP_ANY, OP_ALL, OP_NANSUM };

inline acc_t acc_init(int op) {
  acc_t a = {0, 0, 0};
  if (op == OP_PROD || op == OP_ALL) a.v = 1;
  if (op == OP_MAX || op == OP_ARGMAX) a.v = CT_MIN;
  if (op == OP_MIN || op == OP_ARGMIN) a.v = CT_MAX;
  a.i = op == OP_ARGMAX || op == OP_ARGMIN ? LONG_MAX : 0;
  return a;
}

inline void kahan_add(acc_t *a, AT x) {
  AT t = a->v + x;
#ifdef IS_FLOAT
  /* Neumaier's correction, written with selects rather than branches so the lanes of
   * serial_reduce stay straight-line code. Once the sum is infinite (or NaN) the compensation
   * means nothing: inf - inf would turn an infinite sum into NaN. */
  int v_bigger = fabs(a->v) >= fabs(x);
  AT big = v_bigger ? a->v : x, small = v_bigger ? x : a->v;
  a->c += isfinite(t) ? (big - t) + small : (AT)0;
#endif
  a->v = t;
}

inline AT magnitude(AT x) {
#ifdef IS_FLOAT
  return fabs(x);
#else
  return x < 0 ? -x : x;
#endif
}

/* Is (x, i) better than the accumulator for argmax / argmin? NaN wins, then the first index. */
inline int arg_better(int op, acc_t *a, AT x, long i) {
  if (IS_NAN(x)) return !IS_NAN(a->v) || i < a->i;
  if (IS_NAN(a->v)) return 0;
  if (x == a->v) return i < a->i;
  return op == OP_ARGMAX ? x > a->v : x < a->v;
}

inline void acc_add(int op, acc_t *a, AT x, long i, AT aux, CT p) {
  switch (op) {
    case OP_SUM: kahan_add(a, x); break;
    case OP_PROD: a->v *= x; break;
    case OP_MAX: a->v = (IS_NAN(x) || IS_NAN(a->v)) ? (IS_NAN(x) ? x : a->v) : (x > a->v ? x : a->v); break;
    case OP_MIN: a->v = (IS_NAN(x) || IS_NAN(a->v)) ? (IS_NAN(x) ? x : a->v) : (x < a->v ? x : a->v); break;
    case OP_ARGMAX:
    case OP_ARGMIN:
      if (arg_better(op, a, x, i)) { a->v = x; a->i = i; }
      break;
    case OP_NORM1: kahan_add(a, magnitude(x)); break;
    case OP_NORM2: kahan_add(a, x * x); break;
#ifdef IS_FLOAT
    case OP_NORMP: kahan_add(a, pow(fabs(x), p)); break;
#endif
    case OP_NORMINF: { AT m = magnitude(x); a->v = (IS_NAN(m) || m > a->v) ? m : a->v; } break;
    case OP_NORM0: kahan_add(a, x != 0 ? (AT)1 : (AT)0); break;
    case OP_SUMSQDEV: kahan_add(a, (x - aux) * (x - aux)); break;
    case OP_ANY: a->v = a->v || x != 0; break;
    case OP_NANSUM: if (!IS_NAN(x)) kahan_add(a, x); break; /* NaN counts as zero */
    case OP_ALL: a->v = a->v && x != 0; break;
  }
}

inline void acc_merge(int op, acc_t *a, acc_t b) {
  switch (op) {
    case OP_PROD: a->v *= b.v; break;
    case OP_MAX: case OP_NORMINF: acc_add(OP_MAX, a, b.v, 0, 0, 0); break;
    case OP_MIN: acc_add(OP_MIN, a, b.v, 0, 0, 0); break;
    case OP_ARGMAX: case OP_ARGMIN: if (arg_better(op, a, b.v, b.i)) *a = b; break;
    case OP_ANY: a->v = a->v || b.v; break;
    case OP_ALL: a->v = a->v && b.v; break;
    default: /* sums */
      kahan_add(a, b.v);
      a->c += b.c;
      break;
  }
}

inline AT acc_final(int op, acc_t a, CT scale, CT p) {
#ifdef IS_FLOAT
  AT v = isfinite(a.v) ? a.v + a.c : a.v;
#else
  AT v = a.v + a.c;
#endif
  switch (op) {
#ifdef IS_FLOAT
    case OP_NORM2: return sqrt(v * scale);
    case OP_NORMP: return pow(v * scale, (CT)1 / p);
#endif
    case OP_SUM: case OP_NANSUM: case OP_NORM1: case OP_NORM0: case OP_SUMSQDEV: return v * scale;
    default: return a.v;
  }
}

/* Input offset of reduced element r of output element o (whose input base is `base`). */
inline long red_offset(const red_geom *g, long r) {
  if (g->red_ndim == 1) return r * g->red_strides[0]; /* the common case: no division */
  long off = 0;
  for (long d = 0; d < g->red_ndim; d++) {
    long size = g->red_sizes[d];
    off += (r % size) * g->red_strides[d];
    r /= size;
  }
  return off;
}

/* Offsets of output element o: in the input (kept dims), the output and aux. */
inline void out_offsets(const red_geom *g, long o, long *in_off, long *out_off, long *aux_off) {
  *in_off = *out_off = *aux_off = 0;
  for (long d = 0; d < g->out_ndim; d++) {
    long size = g->out_sizes[d];
    long idx = o % size;
    o /= size;
    *in_off += idx * g->in_ostrides[d];
    *out_off += idx * g->out_strides[d];
    *aux_off += idx * g->aux_strides[d];
  }
}

inline void store_result(int op, acc_t a, __global uchar *out, __global uchar *index, long out_off,
                         CT scale, CT p, int with_index) {
  if (op == OP_ANY || op == OP_ALL) {
    ST_BOOL(out, out_off, a.v);
  } else if (op == OP_ARGMAX || op == OP_ARGMIN) {
    if (with_index) { /* max / min with indices: values too */
      STORE(out, out_off, a.v);
      ST_I64(index, out_off, a.i);
    } else {
      ST_I64(out, out_off, a.i);
    }
  } else {
    STORE(out, out_off, acc_final(op, a, scale, p));
  }
}

/* One work-item's reduction of a whole row. A contiguous row goes through LANES interleaved
 * accumulators, merged at the end: the adds no longer wait on one another (several times
 * faster on CPU devices, where rows are reduced this way) and the sum is more accurate. */
#define LANES 8
inline acc_t serial_reduce(int op, const red_geom *g, __global uchar *in, long in_off, AT aux,
                           CT p) {
  acc_t lane[LANES];
  for (int j = 0; j < LANES; j++) lane[j] = acc_init(op);
  long r = 0, n = g->red_numel;
  if (g->red_ndim == 1 && g->red_strides[0] == 1)
    for (; r + LANES <= n; r += LANES)
      for (int j = 0; j < LANES; j++)
        acc_add(op, &lane[j], (AT)LOAD(in, in_off + r + j), r + j, aux, p);
  for (; r < n; r++) acc_add(op, &lane[0], (AT)LOAD(in, in_off + red_offset(g, r)), r, aux, p);
  for (int j = 1; j < LANES; j++) acc_merge(op, &lane[0], lane[j]);
  return lane[0];
}

#define RED_SIG \
  BUF(in), BUF(out), BUF(index), BUF(aux), STRUCT_ARG(red_geom, g), CT scale, CT p, int with_index

#define REDUCE(name, OP)                                                                    \
  KERNEL(red_##name##_serial)(RED_SIG) {                                                    \
    PRIVATE_STRUCT(red_geom, g);                                                            \
    long o = get_global_id(0);                                                              \
    if (o >= g.out_numel) return;                                                           \
    long in_off, out_off, aux_off;                                                          \
    out_offsets(&g, o, &in_off, &out_off, &aux_off);                                        \
    AT aux = OP == OP_SUMSQDEV ? (AT)LOAD(PTR(aux), aux_off) : (AT)0;                       \
    acc_t a = serial_reduce(OP, &g, PTR(in), in_off, aux, p);                                \
    store_result(OP, a, PTR(out), PTR(index), out_off, scale, p, with_index);               \
  }                                                                                         \
  KERNEL_WG(256, 1, 1, red_##name)(RED_SIG) {            \
    LOCAL_ARRAY(red_##name, acc_t, part, 256);           \
    PRIVATE_STRUCT(red_geom, g);                         \
    long o = get_group_id(0);                                                               \
    int lid = get_local_id(0);                                                              \
    long in_off, out_off, aux_off;                                                          \
    out_offsets(&g, o, &in_off, &out_off, &aux_off);                                        \
    AT aux = OP == OP_SUMSQDEV ? (AT)LOAD(PTR(aux), aux_off) : (AT)0;                       \
    acc_t a = acc_init(OP);                                                                 \
    for (long r = lid; r < g.red_numel; r += 256)                                           \
      acc_add(OP, &a, (AT)LOAD(PTR(in), in_off + red_offset(&g, r)), r, aux, p);            \
    part[lid] = a;                                                                          \
    barrier(CLK_LOCAL_MEM_FENCE);                                                           \
    for (int s = 128; s > 0; s >>= 1) {                                                     \
      if (lid < s) {                                                                        \
        acc_t mine = part[lid];                                                             \
        acc_merge(OP, &mine, part[lid + s]);                                                \
        part[lid] = mine;                                                                   \
      }                                                                                     \
      barrier(CLK_LOCAL_MEM_FENCE);                                                         \
    }                                                                                       \
    if (lid == 0) store_result(OP, part[0], PTR(out), PTR(index), out_off, scale, p, with_index); \
  }

REDUCE(sum, OP_SUM)
REDUCE(prod, OP_PROD)
REDUCE(max, OP_MAX)
REDUCE(min, OP_MIN)
REDUCE(argmax, OP_ARGMAX)
REDUCE(argmin, OP_ARGMIN)
REDUCE(norm1, OP_NORM1)
REDUCE(norminf, OP_NORMINF)
REDUCE(norm0, OP_NORM0)
REDUCE(any, OP_ANY)
REDUCE(all, OP_ALL)
#ifdef IS_FLOAT
REDUCE(norm2, OP_NORM2)
REDUCE(normp, OP_NORMP)
REDUCE(sumsqdev, OP_SUMSQDEV)
REDUCE(nansum, OP_NANSUM)
#endif

#ifdef DT_F32
/* float32 sums (and means) on CPU devices, which the runtime sends here: the kernels above run
 * scalar under PoCL (a compensated add per element, about 4 ns), these in explicit float8
 * vectors with the same Neumaier compensation per lane. */
inline void kahan8(float8 *s, float8 *c, float8 x) {
  float8 t = *s + x;
  float8 corr = select((x - t) + *s, (*s - t) + x, isgreaterequal(fabs(*s), fabs(x)));
  *c += select((float8)0, corr, isfinite(t));
  *s = t;
}

/* Reduced elements in contiguous runs (reduced dim 0 has stride 1: x.sum(-1), per-channel sums
 * of NCHW): a work-item per output walks its runs eight elements at a time. */
KERNEL(red_sum_rows)(RED_SIG) {
  PRIVATE_STRUCT(red_geom, g);
  long o = get_global_id(0);
  if (o >= g.out_numel) return;
  long in_off, out_off, aux_off;
  out_offsets(&g, o, &in_off, &out_off, &aux_off);
  __global const float *x = (__global const float *)PTR(in) + in_off;
  long len = g.red_sizes[0], runs = g.red_numel / len, body = len / 8 * 8;
  float8 s = 0, c = 0;
  for (long run = 0; run < runs; run++) {
    __global const float *row = x + red_offset(&g, run * len);
    for (long j = 0; j < body; j += 8) kahan8(&s, &c, vload8(0, row + j));
    for (long j = body; j < len; j++) kahan8(&s, &c, (float8)(row[j], 0, 0, 0, 0, 0, 0, 0));
  }
  ST_F32(PTR(out), out_off, (lanes_sum(s) + lanes_sum(c)) * scale);
}

/* Outputs side by side in the input (kept dim 0 has stride 1: x.sum(0) of [rows, n], the bias
 * gradient): a work-item per eight neighbouring outputs adds a float8 per reduced position. */
KERNEL(red_sum_cols)(RED_SIG) {
  PRIVATE_STRUCT(red_geom, g);
  long o = get_global_id(0) * 8;
  if (o >= g.out_numel) return;
  long in_off, out_off, aux_off;
  out_offsets(&g, o, &in_off, &out_off, &aux_off);
  __global const float *x = (__global const float *)PTR(in) + in_off;
  float8 s = 0, c = 0;
  for (long r = 0; r < g.red_numel; r++) kahan8(&s, &c, vload8(0, x + red_offset(&g, r)));
  float result[8];
  vstore8((s + c) * scale, 0, result);
  for (int j = 0; j < 8; j++) ST_F32(PTR(out), out_off + j * g.out_strides[0], result[j]);
}
#endif
