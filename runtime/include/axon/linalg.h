/* Axon runtime: linalg operators (see axon.h for the conventions).
 *
 * Batched LAPACK on CPU-class devices that run host tasks (axon/host_task.h): the library runs
 * inside the stream on the buffers' own memory and loops over the batch. Matrices are
 * column-major (element (i, j) of batch b at data[b * stride + j * ld + i]); the caller
 * prepares them (copies run on the device) and the operators write their results in place.
 * Other devices return AXON_ERROR_UNSUPPORTED: callers take another path there. */
#ifndef AXON_LINALG_H
#define AXON_LINALG_H

#include "axon/axon.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct axon_linalg_mat {
  void *data;     /* device address; NULL where the operator does not use it */
  int64_t ld;     /* leading dimension (column stride), in elements */
  int64_t stride; /* batch stride in elements; 0 repeats one matrix (read-only operands) */
} axon_linalg_mat;

/* Operators; m x n is the shape of `a` unless stated, `v` a per-batch vector, `piv` int32
 * pivots and `info` one int32 LAPACK info per batch (may be NULL where stated). */
typedef enum axon_linalg_op {
  AXON_LINALG_GETRF,  /* a (m x n) := P L U factors; piv (min(m, n)); info */
  AXON_LINALG_GETRS,  /* b (n x k) := op(A)^-1 b from LU a (n x n), piv; trans */
  AXON_LINALG_LU_DET, /* from LU a (n x n), piv: out := det, or (slogdet) out := sign and
                       * out2 := log|det| (one value per batch, contiguous) */
  AXON_LINALG_GETRI,  /* a (n x n) := a^-1; info (singular: info > 0, a undefined) */
  AXON_LINALG_POTRF,  /* a (n x n) := Cholesky factor (upper or lower), other triangle
                       * zeroed; info */
  AXON_LINALG_POTRS,  /* b (n x k) := A^-1 b from the Cholesky factor a (n x n); upper */
  AXON_LINALG_POTRI,  /* a (n x n) := A^-1 (full, symmetric) from the Cholesky factor a */
  AXON_LINALG_TRSM,   /* b (m x n) := op(A)^-1 b (left) or b op(A)^-1 (right), a triangular
                       * (m x m or n x n); upper, trans, unit */
  AXON_LINALG_SYEVD,  /* eigenvalues v (n) ascending of symmetric a (n x n, the `upper`
                       * triangle read); vectors: a := eigenvectors; info */
  AXON_LINALG_GESDD,  /* a (m x n, destroyed): singular values v (min(m, n)); vectors: u (m x
                       * m or m x min) and vt (n x n or min x n) by `full`; info */
  AXON_LINALG_GEQRF,  /* a (m x n) := QR reflectors and R; v := tau (min(m, n)) */
  AXON_LINALG_ORGQR,  /* a (m x n, n <= m) := Q from k reflectors in a and tau v (k) */
  AXON_LINALG_ORMQR,  /* b (m x n) := op(Q) b (left) or b op(Q) (right), Q from k reflectors
                       * in a (m x k or n x k) and tau v; trans */
  AXON_LINALG_SYTRF,  /* a (n x n) := Bunch-Kaufman L D L^T (the `upper` triangle); piv;
                       * info */
  AXON_LINALG_SYTRS,  /* b (n x k) := A^-1 b from sytrf's a, piv; upper */
  AXON_LINALG_GELS,   /* least squares / minimum norm: b (max(m, n) x k) := solution in its
                       * first n rows, from a (m x n, full rank, destroyed); trans */
  AXON_LINALG_GELSY,  /* the same for any rank (complete orthogonal factorisation); rcond;
                       * ranks (int64) to out when set */
  AXON_LINALG_GELSD,  /* the same through the SVD (divide and conquer); v := singular values
                       * (min(m, n)); rcond; ranks to out */
  AXON_LINALG_GELSS,  /* the same through the SVD; v; rcond; ranks to out */
  AXON_LINALG_COUNT
} axon_linalg_op;

typedef struct axon_linalg_desc {
  int64_t batch, m, n, k;
  int upper, trans, left, unit, vectors, full;
  axon_linalg_mat a, b, u, vt;
  void *v;            /* per-batch vector (tau, eigenvalues, singular values) */
  int64_t v_stride;   /* elements between batches */
  void *piv;          /* int32 pivots, 1-based as LAPACK writes them */
  int64_t piv_stride; /* elements between batches; 0 repeats */
  void *info;         /* int32, one per batch, contiguous; NULL: not reported */
  void *out, *out2;   /* LU_DET's outputs, one per batch, contiguous */
  double rcond;       /* least squares: relative cut-off for small singular values */
} axon_linalg_desc;

/* Whether axon_linalg can run on the stream's device for the dtype (float32, float64). */
AXON_API int axon_linalg_supported(axon_stream_t stream, axon_dtype dtype);

/* Enqueues one batched operator on the stream. LU_DET computes slogdet when out2 is set. */
AXON_API axon_status_t axon_linalg(axon_stream_t stream, axon_dtype dtype, axon_linalg_op op,
                                   const axon_linalg_desc *desc);

/* The permutation matrices P (batch x m x m, row-major, zeroed by the caller) of LU
 * factorisations from their int32 pivots (batch x k, 1-based); perm is int32 scratch of
 * batch x m. An OpenCL kernel: runs on every device. */
AXON_API axon_status_t axon_lu_permutation(axon_stream_t stream, axon_dtype dtype,
                                           const void *pivots, void *perm, void *p, int64_t batch,
                                           int64_t m, int64_t k);

#ifdef __cplusplus
}
#endif

#endif
