/*
 * Scans along one dim (cumsum, cumprod, cummax, cummin, logcumsumexp) and sorting along one
 * dim (bitonic, stable through index tie-breaking).
 *
 * A scan line of length n is cut into blocks of `block` elements. Three passes, all in a fixed
 * order, so results never depend on the launch geometry:
 *   scan_totals  one work-item per (line, block): the block's combined value;
 *   scan_carry   one work-item per line: exclusive scan over its block totals, in place;
 *   scan_apply   one work-item per (line, block): a sequential scan starting from the carry.
 * Short lines (one block) run scan_apply alone. Totals are kept in the compute type (CT) and,
 * for cummax / cummin, with the index of the chosen element.
 */

typedef struct scan_geom {
  long nlines, n, block, nblocks;
  long ndim; /* line dims (every dim except the scanned one), fastest first */
  long sizes[AXON_MAX_DIMS];
  long in_strides[AXON_MAX_DIMS];
  long out_strides[AXON_MAX_DIMS];
  long in_dstride, out_dstride;
} scan_geom;

enum { SCAN_SUM, SCAN_PROD, SCAN_MAX, SCAN_MIN, SCAN_LOGSUMEXP };

inline void line_offsets(const scan_geom *g, long line, long *in_off, long *out_off) {
  *in_off = *out_off = 0;
  for (long d = 0; d < g->ndim; d++) {
    long size = g->sizes[d];
    long idx = line % size;
    line /= size;
    *in_off += idx * g->in_strides[d];
    *out_off += idx * g->out_strides[d];
  }
}

typedef struct scan_state {
  CT v;
  long i;
} scan_state;

inline scan_state scan_init(int op) {
  scan_state s;
  s.i = 0;
  s.v = op == SCAN_PROD ? (CT)1 : (op == SCAN_MAX ? CT_MIN : (op == SCAN_MIN ? CT_MAX : (CT)0));
#ifdef IS_FLOAT
  if (op == SCAN_LOGSUMEXP) s.v = -INFINITY;
#endif
  return s;
}

/* Adds element x at position i (or a block total with its index) to the running state, as
 * PyTorch's CPU loops do: ties and NaN move the index of cummax / cummin forward. */
inline scan_state scan_step(int op, scan_state s, CT x, long i) {
  switch (op) {
    case SCAN_SUM: s.v = s.v + x; break;
    case SCAN_PROD: s.v = s.v * x; break;
    case SCAN_MAX:
      if (IS_NAN(x) || (!IS_NAN(s.v) && x >= s.v)) { s.v = x; s.i = i; }
      break;
    case SCAN_MIN:
      if (IS_NAN(x) || (!IS_NAN(s.v) && x <= s.v)) { s.v = x; s.i = i; }
      break;
#ifdef IS_FLOAT
    case SCAN_LOGSUMEXP: {
      CT lo = IS_NAN(x) || IS_NAN(s.v) ? x + s.v : min(s.v, x);
      CT hi = IS_NAN(x) || IS_NAN(s.v) ? x + s.v : max(s.v, x);
      s.v = (lo != hi || isfinite(lo)) ? hi + log1p(exp(lo - hi)) : s.v;
      break;
    }
#endif
    default: break;
  }
  return s;
}

/* Scratch: totals [nlines, nblocks] of CT, and their indices (long). */
KERNEL(scan_totals)(BUF(in), BUF(tot), BUF(toti), STRUCT_ARG(scan_geom, g), int op) {
  PRIVATE_STRUCT(scan_geom, g);
  long w = get_global_id(0);
  if (w >= g.nlines * g.nblocks) return;
  long line = w / g.nblocks, blk = w % g.nblocks, io, oo;
  line_offsets(&g, line, &io, &oo);
  scan_state s = scan_init(op);
  long end = min((blk + 1) * g.block, g.n);
  for (long j = blk * g.block; j < end; j++) s = scan_step(op, s, LOAD(PTR(in), io + j * g.in_dstride), j);
  ((__global CT *)PTR(tot))[w] = s.v;
  ((__global long *)PTR(toti))[w] = s.i;
}

KERNEL(scan_carry)(BUF(tot), BUF(toti), STRUCT_ARG(scan_geom, g), int op) {
  PRIVATE_STRUCT(scan_geom, g);
  long line = get_global_id(0);
  if (line >= g.nlines) return;
  __global CT *t = (__global CT *)PTR(tot) + line * g.nblocks;
  __global long *ti = (__global long *)PTR(toti) + line * g.nblocks;
  scan_state s = scan_init(op);
  for (long b = 0; b < g.nblocks; b++) {
    CT v = t[b];
    long vi = ti[b];
    t[b] = s.v;
    ti[b] = s.i;
    /* A block's total is its own scan from the identity: combining it with the state is
     * the same as scanning the block's elements from the state (ties and NaN included). */
    s = scan_step(op, s, v, vi);
  }
}

KERNEL(scan_apply)(BUF(in), BUF(out), BUF(outi), BUF(tot), BUF(toti), STRUCT_ARG(scan_geom, g),
                   int op,
                         int has_carry, int has_index) {
  PRIVATE_STRUCT(scan_geom, g);
  long w = get_global_id(0);
  if (w >= g.nlines * g.nblocks) return;
  long line = w / g.nblocks, blk = w % g.nblocks, io, oo;
  line_offsets(&g, line, &io, &oo);
  scan_state s = scan_init(op);
  if (has_carry) {
    s.v = ((__global CT *)PTR(tot))[w];
    s.i = ((__global long *)PTR(toti))[w];
  }
  long end = min((blk + 1) * g.block, g.n);
  for (long j = blk * g.block; j < end; j++) {
    s = scan_step(op, s, LOAD(PTR(in), io + j * g.in_dstride), j);
    STORE(PTR(out), oo + j * g.out_dstride, s.v);
    if (has_index) ST_I64(PTR(outi), oo + j * g.out_dstride, s.i);
  }
}

/* ---- sorting -------------------------------------------------------------------------------- */

/*
 * Bitonic sort of keys [nlines, p] (p a power of two, this program's type) with their original
 * positions (long). Positions >= n are padding and sort last. Ascending order puts NaN last,
 * descending first (NaN counts as the largest value); equal keys keep their positions' order.
 */
inline int sort_before(CT a, long ia, CT b, long ib, long n, int descending) {
  if (ib >= n) return ia < n || ia < ib;
  if (ia >= n) return 0;
  int an = IS_NAN(a), bn = IS_NAN(b);
  if (an || bn) {
    if (an && bn) return ia < ib;
    return descending ? an : bn;
  }
  if (a != b) return descending ? a > b : a < b;
  return ia < ib;
}

/* Copies line `line` of a strided input into the scratch, positions as the second key. */
KERNEL(sort_init)(BUF(in), BUF(keys), BUF(pos), STRUCT_ARG(scan_geom, g), long p) {
  PRIVATE_STRUCT(scan_geom, g);
  long w = get_global_id(0);
  if (w >= g.nlines * p) return;
  long line = w / p, j = w % p, io, oo;
  line_offsets(&g, line, &io, &oo);
  __global uchar *k = PTR(keys);
  if (j < g.n) STORE(k, w, LOAD(PTR(in), io + j * g.in_dstride));
  else STORE(k, w, (CT)0);
  ((__global long *)PTR(pos))[w] = j;
}

KERNEL(sort_step)(BUF(keys), BUF(pos), long nlines, long n, long p, long j, long k,
                        int descending) {
  long w = get_global_id(0);
  if (w >= nlines * p) return;
  long i = w % p, l = i ^ j;
  if (l <= i) return;
  long base = w - i;
  __global uchar *kk = PTR(keys);
  __global long *pp = (__global long *)PTR(pos);
  CT a = LOAD(kk, base + i), b = LOAD(kk, base + l);
  long ia = pp[base + i], ib = pp[base + l];
  int up = (i & k) == 0;
  int swap = up ? sort_before(b, ib, a, ia, n, descending) : sort_before(a, ia, b, ib, n, descending);
  if (swap) {
    STORE(kk, base + i, b);
    STORE(kk, base + l, a);
    pp[base + i] = ib;
    pp[base + l] = ia;
  }
}

/* Writes the first n sorted entries of each line to strided values and indices outputs. */
KERNEL(sort_finish)(BUF(keys), BUF(pos), BUF(out), BUF(outi), STRUCT_ARG(scan_geom, g), long p) {
  PRIVATE_STRUCT(scan_geom, g);
  long w = get_global_id(0);
  if (w >= g.nlines * g.n) return;
  long line = w / g.n, j = w % g.n, io, oo;
  line_offsets(&g, line, &io, &oo);
  STORE(PTR(out), oo + j * g.out_dstride, LOAD(PTR(keys), line * p + j));
  ST_I64(PTR(outi), oo + j * g.out_dstride, ((__global long *)PTR(pos))[line * p + j]);
}

/* ---- selection (kthvalue, mode) ------------------------------------------------------------ */

/*
 * One work-item per line copies the line into scratch (values as CT, positions as long) and
 * rearranges it there with the same comparisons and swaps as PyTorch's CPU kernels, so the
 * position chosen among equal values is the CPU's. Outputs hold one element per line.
 */
#define SEL_SWAP(a, b)          \
  do {                          \
    long sa_ = (a), sb_ = (b);  \
    CT tv_ = v[sa_];            \
    v[sa_] = v[sb_];            \
    v[sb_] = tv_;               \
    long ti_ = ix[sa_];         \
    ix[sa_] = ix[sb_];          \
    ix[sb_] = ti_;              \
  } while (0)

inline void sel_load(__global const uchar *in, const scan_geom *g, long io, __global CT *v,
                     __global long *ix) {
  for (long j = 0; j < g->n; j++) {
    v[j] = LOAD(in, io + j * g->in_dstride);
    ix[j] = j;
  }
}

/* NaN ranks above every number (torch.kthvalue's order). */
inline int sel_above(CT x, CT y) { return (IS_NAN(x) && !IS_NAN(y)) || x > y; }

/* Quickselect of position k: the pivot is the median of the first, middle and last entries,
 * partitioned by two scans towards each other; only the side holding k goes on. */
KERNEL(sel_kth)(BUF(in), BUF(vs), BUF(is), BUF(out), BUF(outi), STRUCT_ARG(scan_geom, g), long k) {
  PRIVATE_STRUCT(scan_geom, g);
  long line = get_global_id(0);
  if (line >= g.nlines) return;
  long io, oo;
  line_offsets(&g, line, &io, &oo);
  __global CT *v = (__global CT *)PTR(vs) + line * g.n;
  __global long *ix = (__global long *)PTR(is) + line * g.n;
  sel_load(PTR(in), &g, io, v, ix);
  long lo = 0, hi = g.n - 1;
  while (hi > lo) {
    if (hi == lo + 1) {
      if (sel_above(v[lo], v[hi])) SEL_SWAP(lo, hi);
      break;
    }
    SEL_SWAP((lo + hi) >> 1, lo + 1);
    if (sel_above(v[lo + 1], v[hi])) SEL_SWAP(lo + 1, hi);
    if (sel_above(v[lo], v[hi])) SEL_SWAP(lo, hi);
    if (sel_above(v[lo + 1], v[lo])) SEL_SWAP(lo + 1, lo);
    long i = lo + 1, j = hi;
    CT pivot = v[lo];
    for (;;) {
      do i++; while (sel_above(pivot, v[i]));
      do j--; while (sel_above(v[j], pivot));
      if (j < i) break;
      SEL_SWAP(i, j);
    }
    SEL_SWAP(lo, j);
    if (j <= k) lo = i;
    if (j >= k) hi = j - 1;
  }
  STORE(PTR(out), oo, v[k]);
  ST_I64(PTR(outi), oo, ix[k]);
}

/*
 * torch.mode sorts (value, position) pairs by value with the C++ library's introsort, then
 * takes the last pair of the longest run. The introsort below makes the same moves: partitions
 * around the median of three until a range has at most 16 entries (heapsort past the depth
 * limit), then one insertion sort pass.
 */
#define SEL_SMALL 16

inline void sel_median_first(__global CT *v, __global long *ix, long r, long a, long b, long c) {
  if (v[a] < v[b]) {
    if (v[b] < v[c]) SEL_SWAP(r, b);
    else if (v[a] < v[c]) SEL_SWAP(r, c);
    else SEL_SWAP(r, a);
  } else if (v[a] < v[c]) {
    SEL_SWAP(r, a);
  } else if (v[b] < v[c]) {
    SEL_SWAP(r, c);
  } else {
    SEL_SWAP(r, b);
  }
}

/* Sift the value (pv, pi) down from `hole` in the heap v[0, len), then back up. */
inline void sel_sift(__global CT *v, __global long *ix, long hole, long len, CT pv, long pi) {
  long top = hole, child = hole;
  while (child < (len - 1) / 2) {
    child = 2 * (child + 1);
    if (v[child] < v[child - 1]) child--;
    v[hole] = v[child];
    ix[hole] = ix[child];
    hole = child;
  }
  if ((len & 1) == 0 && child == (len - 2) / 2) {
    child = 2 * (child + 1);
    v[hole] = v[child - 1];
    ix[hole] = ix[child - 1];
    hole = child - 1;
  }
  long parent = (hole - 1) / 2;
  while (hole > top && v[parent] < pv) {
    v[hole] = v[parent];
    ix[hole] = ix[parent];
    hole = parent;
    parent = (hole - 1) / 2;
  }
  v[hole] = pv;
  ix[hole] = pi;
}

inline void sel_heapsort(__global CT *v, __global long *ix, long len) {
  if (len < 2) return;
  for (long parent = (len - 2) / 2;; parent--) {
    sel_sift(v, ix, parent, len, v[parent], ix[parent]);
    if (parent == 0) break;
  }
  for (long last = len - 1; last > 0; last--) {
    CT pv = v[last];
    long pi = ix[last];
    v[last] = v[0];
    ix[last] = ix[0];
    sel_sift(v, ix, 0, last, pv, pi);
  }
}

/* Inserts entry i into the sorted entries before it; `guarded` stops at `first`. */
inline void sel_insert(__global CT *v, __global long *ix, long first, long i, int guarded) {
  CT x = v[i];
  long xi = ix[i];
  long j = i;
  if (guarded && x < v[first]) {
    for (; j > first; j--) {
      v[j] = v[j - 1];
      ix[j] = ix[j - 1];
    }
  } else {
    while (x < v[j - 1]) {
      v[j] = v[j - 1];
      ix[j] = ix[j - 1];
      j--;
    }
  }
  v[j] = x;
  ix[j] = xi;
}

KERNEL(sel_mode)(BUF(in), BUF(vs), BUF(is), BUF(out), BUF(outi), STRUCT_ARG(scan_geom, g)) {
  PRIVATE_STRUCT(scan_geom, g);
  long line = get_global_id(0);
  if (line >= g.nlines) return;
  long io, oo, n = g.n;
  line_offsets(&g, line, &io, &oo);
  __global CT *v = (__global CT *)PTR(vs) + line * n;
  __global long *ix = (__global long *)PTR(is) + line * n;
  sel_load(PTR(in), &g, io, v, ix);
  /* Pending ranges [first, last) with their remaining depth; each split pushes one side. */
  long sf[128], sl[128], sd[128], top = 0, depth = 0;
  for (long m = n; m > 1; m >>= 1) depth += 2;
  sf[0] = 0;
  sl[0] = n;
  sd[0] = depth;
  top = 1;
  while (top > 0) {
    top--;
    long first = sf[top], last = sl[top], d = sd[top];
    while (last - first > SEL_SMALL) {
      if (d == 0) {
        sel_heapsort(v + first, ix + first, last - first);
        break;
      }
      d--;
      sel_median_first(v, ix, first, first + 1, first + (last - first) / 2, last - 1);
      long lo = first + 1, hi = last;
      for (;;) {
        while (v[lo] < v[first]) lo++;
        hi--;
        while (v[first] < v[hi]) hi--;
        if (!(lo < hi)) break;
        SEL_SWAP(lo, hi);
        lo++;
      }
      sf[top] = lo;
      sl[top] = last;
      sd[top] = d;
      top++;
      last = lo;
    }
  }
  long head = n > SEL_SMALL ? SEL_SMALL : n;
  for (long i = 1; i < head; i++) sel_insert(v, ix, 0, i, 1);
  for (long i = head; i < n; i++) sel_insert(v, ix, 0, i, 0);
  CT mode = 0;
  long modei = 0, run = 0, best = 0;
  for (long i = 0; i < n; i++) {
    run++;
    if (i == n - 1 || v[i] != v[i + 1]) {
      if (run > best) {
        mode = v[i];
        modei = ix[i];
        best = run;
      }
      run = 0;
    }
  }
  STORE(PTR(out), oo, mode);
  ST_I64(PTR(outi), oo, modei);
}
