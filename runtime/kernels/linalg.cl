/*
 * Linear-algebra helpers that run on every device (LAPACK itself runs as a host task, see
 * ops/linalg.c).
 *
 * lu_permutation: the permutation matrices P of LU factorisations (A = P L U) from LAPACK's
 * 1-based row interchanges. Row j was swapped with row piv[j] - 1 in order, so the sequence is
 * replayed on an identity permutation (one work-item per matrix: the swaps are sequential);
 * then row perm[i] of column i of P is 1. P (batch x m x m, row-major) arrives zeroed; perm
 * is int scratch of batch x m.
 */
KERNEL(lu_permutation)(BUF(piv), BUF(perm), BUF(p), long batch, long m, long k) {
  long b = get_global_id(0);
  if (b >= batch) return;
  __global const int *pv = (__global const int *)PTR(piv) + b * k;
  __global int *perm = (__global int *)PTR(perm) + b * m;
  for (long i = 0; i < m; i++) perm[i] = (int)i;
  for (long j = 0; j < k; j++) {
    long other = pv[j] - 1;
    if (other < 0 || other >= m || other == j) continue;
    int t = perm[j];
    perm[j] = perm[other];
    perm[other] = t;
  }
  __global uchar *p = PTR(p);
  for (long i = 0; i < m; i++) STORE(p, (b * m + perm[i]) * m + i, 1);
}
