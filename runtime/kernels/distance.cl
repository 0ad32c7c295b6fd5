/*
 * Pairwise distances (pdist, cdist) and their gradients, launched by runtime/src/ops/distance.c
 * with an axon_distance_args A (distance_args.h). Rows are contiguous of length A.cols. Every
 * kernel is a gather: a work-item owns its output and sums in a fixed order.
 */

#include "distance_args.h"

#ifdef IS_FLOAT

inline CT dist_add(CT acc, CT diff, CT p) {
  diff = fabs(diff);
  if (p == 0) return acc + (diff != 0 ? (CT)1 : (CT)0);
  if (p == INFINITY) return fmax(acc, diff);
  if (p == 1) return acc + diff;
  if (p == 2) return acc + diff * diff;
  return acc + pow(diff, p);
}

inline CT dist_finish(CT acc, CT p) {
  if (p == 0 || p == 1 || p == INFINITY) return acc;
  if (p == 2) return sqrt(acc);
  return pow(acc, 1 / p);
}

/* d dist / d diff for one coordinate difference. */
inline CT dist_grad(CT diff, CT dist, CT p) {
  if (p == 0) return 0;
  if (p == 1) return sign(diff);
  if (p == INFINITY) return fabs(diff) == dist ? sign(diff) : (CT)0;
  if (p < 2)
    return (dist == 0 || (diff == 0 && p < 1))
               ? (CT)0
               : sign(diff) * pow(fabs(diff), p - 1) / pow(dist, p - 1);
  if (p == 2) return dist == 0 ? (CT)0 : diff / dist;
  return dist == 0 ? (CT)0 : diff * pow(fabs(diff), p - 2) / pow(dist, p - 1);
}

inline CT row_dist(__global uchar *a, long ra, __global uchar *b, long rb, long m, CT p) {
  CT acc = 0;
  for (long k = 0; k < m; k++) acc = dist_add(acc, LOAD(a, ra * m + k) - LOAD(b, rb * m + k), p);
  return dist_finish(acc, p);
}

/* Pair k of pdist's (i < j) row-major order: rows i, j. */
inline long pair_start(long i, long n) {
  return i * n - i * (i + 1) / 2;
}
inline void pdist_pair(long k, long n, long *i, long *j) {
  float h = (float)n - 0.5f;
  long r = (long)(h - sqrt(fmax(h * h - 2.0f * (float)k, 0.0f)));
  if (r < 0) r = 0;
  if (r > n - 2) r = n - 2;
  while (r > 0 && pair_start(r, n) > k) r--;
  while (r < n - 2 && pair_start(r + 1, n) <= k) r++;
  *i = r;
  *j = k - pair_start(r, n) + r + 1;
}
inline long pdist_index(long i, long j, long n) {
  return pair_start(i, n) + j - i - 1;
}

KERNEL(pdist)(BUF(x), BUF(out), axon_distance_args A, long total) {
  long k = get_global_id(0);
  if (k >= total) return;
  long i, j;
  pdist_pair(k, A.rows1, &i, &j);
  STORE(PTR(out), k, row_dist(PTR(x), i, PTR(x), j, A.cols, ARG_REAL(A.p)));
}

/* One work item per element of x: the sum over the other rows (a gather). */
KERNEL(pdist_backward)(BUF(grad), BUF(x), BUF(dist), BUF(out), axon_distance_args A,
                       long total) {
  long idx = get_global_id(0);
  if (idx >= total) return;
  long n = A.rows1, m = A.cols, i = idx / m, k = idx % m;
  CT xi = LOAD(PTR(x), idx), p = ARG_REAL(A.p), acc = 0;
  for (long j = 0; j < n; j++) {
    if (j == i) continue;
    long pk = i < j ? pdist_index(i, j, n) : pdist_index(j, i, n);
    acc += LOAD(PTR(grad), pk) * dist_grad(xi - LOAD(PTR(x), j * m + k), LOAD(PTR(dist), pk), p);
  }
  STORE(PTR(out), idx, acc);
}

KERNEL(cdist)(BUF(x1), BUF(x2), BUF(out), axon_distance_args A, long total) {
  long idx = get_global_id(0);
  if (idx >= total) return;
  long R = A.rows2, Pn = A.rows1, j = idx % R, i = (idx / R) % Pn, b = idx / (R * Pn);
  STORE(PTR(out), idx, row_dist(PTR(x1), b * Pn + i, PTR(x2), b * R + j, A.cols, ARG_REAL(A.p)));
}

KERNEL(cdist_backward)(BUF(grad), BUF(x1), BUF(x2), BUF(dist), BUF(out), axon_distance_args A,
                       long total) {
  long idx = get_global_id(0);
  if (idx >= total) return;
  long Pn = A.rows1, R = A.rows2, m = A.cols, k = idx % m, i = (idx / m) % Pn, b = idx / (m * Pn);
  CT xi = LOAD(PTR(x1), idx), p = ARG_REAL(A.p), acc = 0;
  for (long j = 0; j < R; j++) {
    long pk = (b * Pn + i) * R + j;
    acc += LOAD(PTR(grad), pk) *
           dist_grad(xi - LOAD(PTR(x2), (b * R + j) * m + k), LOAD(PTR(dist), pk), p);
  }
  STORE(PTR(out), idx, acc);
}

#endif
