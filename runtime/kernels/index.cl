/*
 * Indexing kernels: gather along a dim, scatter along a dim (assign / sum / prod / amax / amin),
 * advanced indexing (index.Tensor) and index_put, triangular masks, searchsorted and nonzero.
 *
 * Scatter-like kernels are deterministic without atomics: a work-item owns one *line* (all
 * positions that differ only along the scattered dim, or only in the advanced-index part) and
 * walks the index in order, so duplicate indices combine in the same order as PyTorch's CPU
 * loop and no two work-items ever touch the same element.
 */

/* Geometry of a dim-wise op. Dimension 0 is the fastest; strides are in elements.
 * Operand 0: self / out, 1: index (int64), 2: src. */
typedef struct dim_geom {
  long numel; /* work-items */
  long ndim;
  long sizes[AXON_MAX_DIMS];
  long strides[3 * AXON_MAX_DIMS]; /* the host's [3][AXON_MAX_DIMS] (GEOM_STRIDE) */
  long len;        /* scatter: index entries per line */
  long dstride[3]; /* strides along the scattered / gathered dim */
  long dim_size;   /* size of self (scatter) or src (gather) along the dim */
} dim_geom;

inline void dim_offsets(const dim_geom *g, long i, long *off) {
  off[0] = off[1] = off[2] = 0;
  for (long d = 0; d < g->ndim; d++) {
    long size = g->sizes[d];
    long idx = d + 1 < g->ndim ? i % size : i;
    i = d + 1 < g->ndim ? i / size : 0;
    for (int k = 0; k < 3; k++) off[k] += idx * GEOM_STRIDE(*g, k, d);
  }
}

inline long wrap_index(long v, long size) { return v < 0 ? v + size : v; }

/* out[p] = src[p with p[dim] := index[p]] (index_select passes an expanded index). */
KERNEL(ix_gather)(BUF(o), BUF(ix), BUF(src), STRUCT_ARG(dim_geom, g)) {
  PRIVATE_STRUCT(dim_geom, g);
  long i = get_global_id(0);
  if (i >= g.numel) return;
  long off[3];
  dim_offsets(&g, i, off);
  long j = wrap_index(LD_I64(PTR(ix), off[1]), g.dim_size);
  STORE(PTR(o), off[0], LOAD(PTR(src), off[2] + j * g.dstride[2]));
}

enum { SC_ASSIGN, SC_SUM, SC_PROD, SC_AMAX, SC_AMIN };

#ifdef IS_COMPLEX
/* Complex numbers move, and add (the launcher refuses the other reductions for them). */
inline CT scatter_identity(int mode) {
  return (CT)(0);
}
inline CT scatter_combine(int mode, CT a, CT b) {
  return mode == SC_SUM ? a + b : b;
}
#define SCALED(v, alpha) ((v) * (alpha).x) /* alpha is real */
#define IS_ZERO(v) ((v).x == 0 && (v).y == 0)
#else
#define SCALED(v, alpha) ((v) * (alpha))
#define IS_ZERO(v) ((v) == (CT)0)
inline CT scatter_identity(int mode) {
  if (mode == SC_PROD) return (CT)1;
  if (mode == SC_AMAX) return CT_MIN;
  if (mode == SC_AMIN) return CT_MAX;
  return (CT)0;
}

inline CT scatter_combine(int mode, CT a, CT b) {
  switch (mode) {
    case SC_SUM: return a + b;
    case SC_PROD: return a * b;
    case SC_AMAX: return IS_NAN(a) ? a : (IS_NAN(b) ? b : (a > b ? a : b));
    case SC_AMIN: return IS_NAN(a) ? a : (IS_NAN(b) ? b : (a < b ? a : b));
    default: return b;
  }
}
#endif

/* One work-item per line: for j in order, self[.., index[j], ..] (op)= alpha * src[.., j, ..]
 * (or the scalar `value`). Without include_self the touched elements start at the identity. */
KERNEL(ix_scatter)(BUF(self), BUF(ix), BUF(src), STRUCT_ARG(dim_geom, g), int mode,
                   int include_self,
                         int src_is_scalar, CT value, CT alpha) {
  PRIVATE_STRUCT(dim_geom, g);
  long i = get_global_id(0);
  if (i >= g.numel) return;
  long off[3];
  dim_offsets(&g, i, off);
  __global uchar *s = PTR(self);
  if (!include_self && mode != SC_ASSIGN) {
    for (long j = 0; j < g.len; j++) {
      long t = wrap_index(LD_I64(PTR(ix), off[1] + j * g.dstride[1]), g.dim_size);
      STORE(s, off[0] + t * g.dstride[0], scatter_identity(mode));
    }
  }
  for (long j = 0; j < g.len; j++) {
    long t = wrap_index(LD_I64(PTR(ix), off[1] + j * g.dstride[1]), g.dim_size);
    CT v = src_is_scalar ? value : LOAD(PTR(src), off[2] + j * g.dstride[2]);
    if (mode == SC_SUM) v = SCALED(v, alpha);
    long p = off[0] + t * g.dstride[0];
    STORE(s, p, mode == SC_ASSIGN ? v : scatter_combine(mode, LOAD(s, p), v));
  }
}

/*
 * Advanced indexing. The result is (r, b): r ranges over self's non-indexed dims, b over the
 * broadcast shape of the index tensors, which arrive stacked and contiguous as [nidx, bnumel].
 * "other" is the result of index (gather) or the values of index_put.
 */
typedef struct adv_geom {
  long nr, nb, nidx, rnumel, bnumel;
  long r_sizes[AXON_MAX_DIMS];
  long r_self_strides[AXON_MAX_DIMS];
  long r_other_strides[AXON_MAX_DIMS];
  long b_sizes[AXON_MAX_DIMS];
  long b_other_strides[AXON_MAX_DIMS];
  long idx_sizes[AXON_MAX_DIMS];
  long idx_strides[AXON_MAX_DIMS];
} adv_geom;

inline void adv_r(const adv_geom *g, long r, long *self_off, long *other_off) {
  *self_off = *other_off = 0;
  for (long d = 0; d < g->nr; d++) {
    long size = g->r_sizes[d];
    long idx = r % size;
    r /= size;
    *self_off += idx * g->r_self_strides[d];
    *other_off += idx * g->r_other_strides[d];
  }
}

inline long adv_b(const adv_geom *g, __global const uchar *ix, long b, long *other_off) {
  long rest = b, o = 0, s = 0;
  for (long d = 0; d < g->nb; d++) {
    long size = g->b_sizes[d];
    o += (rest % size) * g->b_other_strides[d];
    rest /= size;
  }
  for (long k = 0; k < g->nidx; k++)
    s += wrap_index(LD_I64(ix, k * g->bnumel + b), g->idx_sizes[k]) * g->idx_strides[k];
  *other_off += o;
  return s;
}

KERNEL(ix_index)(BUF(o), BUF(ix), BUF(self), STRUCT_ARG(adv_geom, g)) {
  PRIVATE_STRUCT(adv_geom, g);
  long i = get_global_id(0);
  if (i >= g.rnumel * g.bnumel) return;
  long b = i % g.bnumel, r = i / g.bnumel, so, oo;
  adv_r(&g, r, &so, &oo);
  so += adv_b(&g, PTR(ix), b, &oo);
  STORE(PTR(o), oo, LOAD(PTR(self), so));
}

/* One work-item per r walks b in order: the last write wins, or values accumulate. */
KERNEL(ix_index_put)(BUF(self), BUF(ix), BUF(values), STRUCT_ARG(adv_geom, g), int accumulate) {
  PRIVATE_STRUCT(adv_geom, g);
  long r = get_global_id(0);
  if (r >= g.rnumel) return;
  long so, oo;
  adv_r(&g, r, &so, &oo);
  __global uchar *s = PTR(self);
  for (long b = 0; b < g.bnumel; b++) {
    long vo = oo;
    long p = so + adv_b(&g, PTR(ix), b, &vo);
    CT v = LOAD(PTR(values), vo);
    STORE(s, p, accumulate ? LOAD(s, p) + v : v);
  }
}

/* tril (lower = 1) / triu over the two fastest dims of an ew_geom: keeps col - row <= k (tril)
 * or col - row >= k (triu), zeroes the rest. */
KERNEL(ix_tri)(BUF(o), BUF(x), STRUCT_ARG(ew_geom, g), long k, int lower) {
  PRIVATE_STRUCT(ew_geom, g);
  long i = get_global_id(0);
  if (i >= g.numel) return;
  long off[2];
  ew_offsets(&g, i, 2, off);
  long col = i % g.sizes[0], row = (i / g.sizes[0]) % g.sizes[1];
  int keep = lower ? (col - row <= k) : (col - row >= k);
  STORE(PTR(o), off[0], keep ? LOAD(PTR(x), off[1]) : (CT)0);
}

/*
 * searchsorted: for each value (operand 1 of the ew_geom, output operand 0 as int64 or int32),
 * the insertion point in its row of sorted boundaries. Rows: value i uses row
 * (i / per_row) of the contiguous boundaries [rows, n] (per_row = values per row; rows = 1 for
 * bucketize). A sorter (int64, same layout as boundaries) gives the order when present.
 */
#ifndef IS_COMPLEX /* ordered values only */
KERNEL(ix_searchsorted)(BUF(o), BUF(v), BUF(bnd), BUF(sorter), STRUCT_ARG(ew_geom, g), long n,
                              long per_row, int right, int has_sorter, int out_int32) {
  PRIVATE_STRUCT(ew_geom, g);
  long i = get_global_id(0);
  if (i >= g.numel) return;
  long off[2];
  ew_offsets(&g, i, 2, off);
  CT x = LOAD(PTR(v), off[1]);
  long row = (i / per_row) * n, lo = 0, hi = n;
  while (lo < hi) {
    long mid = lo + (hi - lo) / 2;
    long at = has_sorter ? LD_I64(PTR(sorter), row + mid) : mid;
    CT b = LOAD(PTR(bnd), row + at);
    int go_right = right ? !(x < b) : (b < x);
    if (go_right) lo = mid + 1; else hi = mid;
  }
  if (out_int32) ST_I32(PTR(o), off[0], lo); else ST_I64(PTR(o), off[0], lo);
}
#endif

/*
 * nonzero, second pass: for element i of an ew_geom (operand 1 the input, read through its
 * strides), pos = inclusive prefix count (int64, contiguous, operand 2); a nonzero element
 * writes its coordinates (torch order) into row pos - 1 of out [count, ndim] (int64).
 * The geometry's dims are torch's dims reversed (dim 0 fastest).
 */
KERNEL(ix_nonzero)(BUF(o), BUF(x), BUF(pos), STRUCT_ARG(ew_geom, g)) {
  PRIVATE_STRUCT(ew_geom, g);
  long i = get_global_id(0);
  if (i >= g.numel) return;
  long off[2];
  ew_offsets(&g, i, 2, off);
  if (IS_ZERO(LOAD(PTR(x), off[1]))) return;
  long row = LD_I64(PTR(pos), i) - 1, rest = i;
  for (long d = 0; d < g.ndim; d++) {
    long size = g.sizes[d];
    ST_I64(PTR(o), row * g.ndim + (g.ndim - 1 - d), rest % size);
    rest /= size;
  }
}

#ifndef IS_COMPLEX
/*
 * histc: counts (int32) of the values (operand 1 of an ew_geom) in [lo, hi] over `bins` equal
 * bins, the last one closed; float or integer values. Integer atomics: the counts do not depend on the order.
 */
KERNEL(ix_histc)(BUF(counts), BUF(x), STRUCT_ARG(ew_geom, g), long bins, CT lo, CT hi) {
  PRIVATE_STRUCT(ew_geom, g);
  long i = get_global_id(0);
  if (i >= g.numel) return;
  long off[2];
  ew_offsets(&g, i, 2, off);
  CT v = LOAD(PTR(x), off[1]);
  if (!(v >= lo && v <= hi)) return; /* NaN never counts */
#ifdef IS_FLOAT
  long pos = (long)((v - lo) * (CT)bins / (hi - lo));
#else
  /* Integer input (accepted as on CUDA, which bins it in 64-bit integer arithmetic). */
  long pos = ((long)v - (long)lo) * bins / ((long)hi - (long)lo);
#endif
  if (pos >= bins) pos = bins - 1;
  atomic_inc((__global int *)PTR(counts) + pos);
}
#endif
