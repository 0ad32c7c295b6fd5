/*
 * Embedding's deterministic backward: positions holding
 * the same index are linked in order (next occurrence), and the first occurrence of each
 * index sums the chain, so there are no float atomics and the sum order is the positions'.
 * Then the embedding bags (forward, offset2bag, and the backward's rows and per-sample weight
 * gradient), which take an axon_embedding_bag_args A (embedding_args.h).
 */

#include "embedding_args.h"

inline long load_index(__global uchar *p, long i, int is_int32) {
  return is_int32 ? (long)LD_I32(p, i) : LD_I64(p, i);
}

/* scratch[i]: next position with the same index (or -1); scratch[n + i]: 1 if an earlier
 * position has it; scratch[2n + i]: how many positions have it. */
KERNEL(embedding_links)(BUF(index), BUF(scratch), long n, int is_int32) {
  long i = get_global_id(0);
  if (i >= n) return;
  __global uchar *ix = PTR(index);
  long me = load_index(ix, i, is_int32), next = -1, earlier = 0, count = 0;
  for (long j = 0; j < n; j++) {
    if (load_index(ix, j, is_int32) != me) continue;
    count++;
    if (j < i) earlier = 1;
    if (j > i && next < 0) next = j;
  }
  __global uchar *s = PTR(scratch);
  ST_I64(s, i, next);
  ST_I64(s, n + i, earlier);
  ST_I64(s, 2 * n + i, count);
}

#ifdef IS_FLOAT
KERNEL(embedding_backward)(BUF(grad), BUF(index), BUF(scratch), BUF(out), long n, long dim,
                                 long num_weights, long padding_idx, int scale_by_freq,
                                 int is_int32) {
  long i = get_global_id(0), c = get_global_id(1);
  if (i >= n || c >= dim) return;
  __global uchar *s = PTR(scratch);
  long row = load_index(PTR(index), i, is_int32);
  if (LD_I64(s, n + i) || row == padding_idx || row < 0 || row >= num_weights) return;
  CT acc = 0;
  for (long j = i; j >= 0; j = LD_I64(s, j)) acc += LOAD(PTR(grad), j * dim + c);
  if (scale_by_freq) acc /= (CT)LD_I64(s, 2 * n + i);
  STORE(PTR(out), row * dim + c, acc);
}
#endif

/* ---- embedding bags --------------------------------------------------------------------------
 * offset2bag, bag_size and max_indices are int64. */

#ifdef IS_FLOAT

inline void bag_range(__global uchar *offsets, long b, const axon_embedding_bag_args *A,
                      long *start, long *end) {
  int o32 = (int)A->offsets_int32;
  *start = load_index(offsets, b, o32);
  *end = b + 1 < A->offsets ? load_index(offsets, b + 1, o32) : A->indices;
  if (*end > A->indices) *end = A->indices;
}

/* One work item per (bag, column): out, and bag_size / max_indices. */
KERNEL(embedding_bag)(BUF(weight), BUF(indices), BUF(offsets), BUF(psw), BUF(out),
                      BUF(bag_size), BUF(max_indices), STRUCT_ARG(axon_embedding_bag_args, A),
                      long total) {
  PRIVATE_STRUCT(axon_embedding_bag_args, A);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long dim = A.dim, b = idx / dim, d = idx % dim, mode = A.mode;
  long start, end;
  bag_range(PTR(offsets), b, &A, &start, &end);
  CT acc = 0;
  long count = 0, arg = -1;
  for (long i = start; i < end; i++) {
    long row = load_index(PTR(indices), i, (int)A.indices_int32);
    if (row == A.padding_idx) continue;
    CT v = LOAD(PTR(weight), row * A.weight_strides[0] + d * A.weight_strides[1]);
    if (mode == 2) {
      if (count == 0 || v > acc || IS_NAN(v)) {
        acc = v;
        arg = row;
      }
    } else {
      acc += A.has_per_sample_weights ? v * LOAD(PTR(psw), i) : v;
    }
    count++;
  }
  if (mode == 1 && count > 0) acc /= (CT)count;
  STORE(PTR(out), idx, acc);
  if (mode == 2) ST_I64(PTR(max_indices), idx, arg);
  if (d == 0) ST_I64(PTR(bag_size), b, count);
}

/* One work item per index: the bag holding it (the last bag starting at or before it). */
KERNEL(embedding_bag_offset2bag)(BUF(offsets), BUF(offset2bag),
                                 STRUCT_ARG(axon_embedding_bag_args, A), long total) {
  PRIVATE_STRUCT(axon_embedding_bag_args, A);
  long i = get_global_id(0);
  if (i >= total) return;
  long lo = 0, hi = A.bags - 1;
  while (lo < hi) {
    long mid = (lo + hi + 1) / 2;
    if (load_index(PTR(offsets), mid, (int)A.offsets_int32) <= i)
      lo = mid;
    else
      hi = mid - 1;
  }
  ST_I64(PTR(offset2bag), i, lo);
}

/* One work item per (index position, column): the gradient row that position contributes to
 * weight row indices[i], summed afterwards by embedding's deterministic backward. For max, the
 * first position in the bag holding the maximum's row takes the whole gradient.
 * grad is contiguous [bags, dim]; rows is contiguous [indices, dim]. */
KERNEL(embedding_bag_rows)(BUF(grad), BUF(indices), BUF(offset2bag), BUF(bag_size),
                           BUF(max_indices), BUF(psw), BUF(rows),
                           STRUCT_ARG(axon_embedding_bag_args, A),
                           long total) {
  PRIVATE_STRUCT(axon_embedding_bag_args, A);
  long idx = get_global_id(0);
  if (idx >= total) return;
  long dim = A.dim, i = idx / dim, d = idx % dim, mode = A.mode;
  int i32 = (int)A.indices_int32;
  __global uchar *o2b = PTR(offset2bag);
  long b = LD_I64(o2b, i), row = load_index(PTR(indices), i, i32);
  CT v = 0;
  if (b >= 0 && b < A.bags && row != A.padding_idx) {
    CT g = LOAD(PTR(grad), b * dim + d);
    if (mode == 2) {
      long m = LD_I64(PTR(max_indices), b * dim + d);
      int first = row == m;
      for (long j = i - 1; j >= 0 && first && LD_I64(o2b, j) == b; j--)
        if (load_index(PTR(indices), j, i32) == m) first = 0;
      v = first ? g : (CT)0;
    } else {
      v = A.has_per_sample_weights ? g * LOAD(PTR(psw), i) : g;
      if (mode == 1) v /= (CT)LD_I64(PTR(bag_size), b);
    }
  }
  STORE(PTR(rows), idx, v);
}

/* One work item per index position: d loss / d per_sample_weight = <grad[bag], weight[row]>. */
KERNEL(embedding_bag_psw_backward)(BUF(grad), BUF(weight), BUF(indices), BUF(offset2bag),
                                   BUF(out), STRUCT_ARG(axon_embedding_bag_args, A), long total) {
  PRIVATE_STRUCT(axon_embedding_bag_args, A);
  long i = get_global_id(0);
  if (i >= total) return;
  long dim = A.dim, b = LD_I64(PTR(offset2bag), i);
  long row = load_index(PTR(indices), i, (int)A.indices_int32);
  CT acc = 0;
  if (row != A.padding_idx && b >= 0 && b < A.bags)
    for (long d = 0; d < dim; d++)
      acc += LOAD(PTR(grad), b * dim + d) *
             LOAD(PTR(weight), row * A.weight_strides[0] + d * A.weight_strides[1]);
  STORE(PTR(out), i, acc);
}

#endif
