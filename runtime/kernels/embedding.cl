/*
 * Embedding's deterministic backward: positions holding
 * the same index are linked in order (next occurrence), and the first occurrence of each
 * index sums the chain, so there are no float atomics and the sum order is the positions'.
 */

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
