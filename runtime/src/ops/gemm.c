/*
 * Matrix products. The path is chosen per device class (design section 5):
 *  - host BLAS inside the queue: on CPU-class devices that run native kernels, OpenBLAS is
 *    called from clEnqueueNativeKernel with the buffers' own memory (zero-copy, in order);
 *  - CLBlast: on other devices, for float32 / float64 / complex64 / complex128;
 *  - the tiled kernel of kernels/gemm.cl: everything else (real dtypes; complex products have
 *    no kernel of their own and need one of the two libraries).
 * AXON_GEMM=host|clblast|kernel forces a path where it can run.
 */
#include "launch_common.h" /* first: it fixes the OpenCL target version */

#include "../fused/fused.h"
#include "axon/host_task.h"

#include <cblas.h>
#include <clblast_c.h>
#include <stdlib.h>
#include <strings.h>

static int is_blas_dtype(axon_dtype dtype) {
  return dtype == AXON_F32 || dtype == AXON_F64 || is_complex_dtype(dtype);
}

axon_gemm_path axon_gemm_path_for(axon_stream_t stream, axon_dtype dtype) {
  const axon_device_info *info = stream_info(stream);
  int host_ok = is_blas_dtype(dtype) && info->native_kernels && info->is_cpu;
  int clblast_ok = is_blas_dtype(dtype);
  const char *force = getenv("AXON_GEMM");
  if (force && !strcasecmp(force, "kernel")) return AXON_GEMM_KERNEL;
  if (force && !strcasecmp(force, "clblast") && clblast_ok) return AXON_GEMM_CLBLAST;
  if (force && !strcasecmp(force, "host") && host_ok) return AXON_GEMM_HOST_BLAS;
  if (host_ok) return AXON_GEMM_HOST_BLAS;
  if (clblast_ok) return AXON_GEMM_CLBLAST;
  return AXON_GEMM_KERNEL;
}

/* ---- host BLAS in a native kernel ---------------------------------------------------------- */

typedef struct host_gemm_args {
  axon_gemm_desc d;
  axon_dtype dtype;
} host_gemm_args;

/* One product as a matrix-vector one when the result is a single row or column (decoding, a
 * batch of one): OpenBLAS's gemm does not redirect those to gemv and ran them 5 to 12 times
 * slower (a [1,2048] x [2048,768] product: 1089 us as gemm, 90 us as gemv). Returns 0 for the
 * other shapes. gemv scales y by beta, so a beta of 0 must not meet the result's old contents
 * (NaN * 0): the vector is cleared first. */
#define GEMV_AS(T, gemv)                                                                        \
  static int gemv##_product(const axon_gemm_desc *d, const T *a, const T *b, T *c) {            \
    if ((d->m != 1 && d->n != 1) || d->k == 0) return 0;                                        \
    int64_t len = d->m == 1 ? d->n : d->m, inc_c = d->m == 1 ? 1 : d->ldc;                      \
    if (d->beta == 0)                                                                           \
      for (int64_t i = 0; i < len; i++) c[i * inc_c] = 0;                                       \
    if (d->m == 1) { /* c[1,n] = op(a)[1,k] op(b)[k,n]: y = op(b)^T x */                        \
      int inc_a = d->trans_a ? (int)d->lda : 1;                                                 \
      if (d->trans_b)                                                                           \
        gemv(CblasRowMajor, CblasNoTrans, (int)d->n, (int)d->k, (T)d->alpha, b, (int)d->ldb, a, \
             inc_a, (T)d->beta, c, 1);                                                          \
      else                                                                                      \
        gemv(CblasRowMajor, CblasTrans, (int)d->k, (int)d->n, (T)d->alpha, b, (int)d->ldb, a,   \
             inc_a, (T)d->beta, c, 1);                                                          \
    } else { /* c[m,1] = op(a)[m,k] op(b)[k,1]: y = op(a) x */                                  \
      int inc_b = d->trans_b ? 1 : (int)d->ldb;                                                 \
      if (d->trans_a)                                                                           \
        gemv(CblasRowMajor, CblasTrans, (int)d->k, (int)d->m, (T)d->alpha, a, (int)d->lda, b,   \
             inc_b, (T)d->beta, c, (int)d->ldc);                                                \
      else                                                                                      \
        gemv(CblasRowMajor, CblasNoTrans, (int)d->m, (int)d->k, (T)d->alpha, a, (int)d->lda, b, \
             inc_b, (T)d->beta, c, (int)d->ldc);                                                \
    }                                                                                           \
    return 1;                                                                                   \
  }
GEMV_AS(float, cblas_sgemv)
GEMV_AS(double, cblas_dgemv)

/* ptrs: A, B, C as host addresses (axon/host_task.h). */
static void run_host_gemm(void *p, void *const *ptrs) {
  const host_gemm_args *g = p;
  const axon_gemm_desc *d = &g->d;
  char *a = ptrs[0], *b = ptrs[1], *c = ptrs[2];
  size_t es = axon_dtype_size(g->dtype);
  enum CBLAS_TRANSPOSE ta = d->trans_a ? CblasTrans : CblasNoTrans;
  enum CBLAS_TRANSPOSE tb = d->trans_b ? CblasTrans : CblasNoTrans;
  for (int64_t i = 0; i < d->batch; i++) {
    char *ai = a + (size_t)(i * d->stride_a) * es, *bi = b + (size_t)(i * d->stride_b) * es;
    char *ci = c + (size_t)(i * d->stride_c) * es;
    if (is_complex_dtype(g->dtype)) {
      /* alpha and beta are real: (value, 0) pairs of the part type */
      float fa[2] = {(float)d->alpha, 0}, fb[2] = {(float)d->beta, 0};
      double da[2] = {d->alpha, 0}, db[2] = {d->beta, 0};
      if (g->dtype == AXON_C64)
        cblas_cgemm(CblasRowMajor, ta, tb, (int)d->m, (int)d->n, (int)d->k, fa, ai, (int)d->lda, bi,
                    (int)d->ldb, fb, ci, (int)d->ldc);
      else
        cblas_zgemm(CblasRowMajor, ta, tb, (int)d->m, (int)d->n, (int)d->k, da, ai, (int)d->lda, bi,
                    (int)d->ldb, db, ci, (int)d->ldc);
    } else if (g->dtype == AXON_F32) {
      if (!cblas_sgemv_product(d, (float *)ai, (float *)bi, (float *)ci))
        cblas_sgemm(CblasRowMajor, ta, tb, (int)d->m, (int)d->n, (int)d->k, (float)d->alpha,
                    (float *)ai, (int)d->lda, (float *)bi, (int)d->ldb, (float)d->beta, (float *)ci,
                    (int)d->ldc);
    } else if (!cblas_dgemv_product(d, (double *)ai, (double *)bi, (double *)ci)) {
      cblas_dgemm(CblasRowMajor, ta, tb, (int)d->m, (int)d->n, (int)d->k, d->alpha, (double *)ai,
                  (int)d->lda, (double *)bi, (int)d->ldb, d->beta, (double *)ci, (int)d->ldc);
    }
  }
}

static axon_status_t host_gemm(axon_stream_t stream, axon_dtype dtype, const axon_gemm_desc *d) {
  host_gemm_args g;
  memset(&g, 0, sizeof g);
  g.d = *d;
  g.dtype = dtype;
  const void *addrs[3] = {d->a, d->b, d->c};
  return axon_host_task(stream, run_host_gemm, &g, sizeof g, addrs, 3);
}

/* ---- CLBlast ------------------------------------------------------------------------------- */

static axon_status_t clblast_gemm(axon_stream_t stream, axon_dtype dtype, const axon_gemm_desc *d) {
  AXON_TRY(axon_fused_settle(stream)); /* CLBlast enqueues on the queue itself */
  cl_mem am, bm, cm;
  size_t ao, bo, co;
  AXON_TRY(axon_resolve_mem(d->a, &am, &ao));
  AXON_TRY(axon_resolve_mem(d->b, &bm, &bo));
  AXON_TRY(axon_resolve_mem(d->c, &cm, &co));
  size_t es = axon_dtype_size(dtype);
  CLBlastTranspose ta = d->trans_a ? CLBlastTransposeYes : CLBlastTransposeNo;
  CLBlastTranspose tb = d->trans_b ? CLBlastTransposeYes : CLBlastTransposeNo;
  cl_command_queue q = stream->queue;
  CLBlastStatusCode st = CLBlastSuccess;
  /* CLBlast's strided-batched gemm rejects a zero batch stride (kInvalidDimension), which a
   * single product or a broadcast operand has: those run as one plain gemm per batch. */
  int strided = d->batch > 1 && d->stride_a > 0 && d->stride_b > 0 && d->stride_c > 0;
  cl_float2 ca = {{(float)d->alpha, 0}}, cb = {{(float)d->beta, 0}};
  cl_double2 za = {{d->alpha, 0}}, zb = {{d->beta, 0}};
  if (strided && dtype == AXON_C64)
    st = CLBlastCgemmStridedBatched(
        CLBlastLayoutRowMajor, ta, tb, (size_t)d->m, (size_t)d->n, (size_t)d->k, ca, am, ao / es,
        (size_t)d->lda, (size_t)d->stride_a, bm, bo / es, (size_t)d->ldb, (size_t)d->stride_b, cb,
        cm, co / es, (size_t)d->ldc, (size_t)d->stride_c, (size_t)d->batch, &q, NULL);
  else if (strided && dtype == AXON_C128)
    st = CLBlastZgemmStridedBatched(
        CLBlastLayoutRowMajor, ta, tb, (size_t)d->m, (size_t)d->n, (size_t)d->k, za, am, ao / es,
        (size_t)d->lda, (size_t)d->stride_a, bm, bo / es, (size_t)d->ldb, (size_t)d->stride_b, zb,
        cm, co / es, (size_t)d->ldc, (size_t)d->stride_c, (size_t)d->batch, &q, NULL);
  else if (strided && dtype == AXON_F32)
    st = CLBlastSgemmStridedBatched(
        CLBlastLayoutRowMajor, ta, tb, (size_t)d->m, (size_t)d->n, (size_t)d->k, (float)d->alpha,
        am, ao / es, (size_t)d->lda, (size_t)d->stride_a, bm, bo / es, (size_t)d->ldb,
        (size_t)d->stride_b, (float)d->beta, cm, co / es, (size_t)d->ldc, (size_t)d->stride_c,
        (size_t)d->batch, &q, NULL);
  else if (strided)
    st = CLBlastDgemmStridedBatched(CLBlastLayoutRowMajor, ta, tb, (size_t)d->m, (size_t)d->n,
                                    (size_t)d->k, d->alpha, am, ao / es, (size_t)d->lda,
                                    (size_t)d->stride_a, bm, bo / es, (size_t)d->ldb,
                                    (size_t)d->stride_b, d->beta, cm, co / es, (size_t)d->ldc,
                                    (size_t)d->stride_c, (size_t)d->batch, &q, NULL);
  for (int64_t i = 0; !strided && i < d->batch && st == CLBlastSuccess; i++) {
    size_t oa = ao / es + (size_t)(i * d->stride_a), ob = bo / es + (size_t)(i * d->stride_b);
    size_t oc = co / es + (size_t)(i * d->stride_c);
    if (dtype == AXON_C64)
      st = CLBlastCgemm(CLBlastLayoutRowMajor, ta, tb, (size_t)d->m, (size_t)d->n, (size_t)d->k, ca,
                        am, oa, (size_t)d->lda, bm, ob, (size_t)d->ldb, cb, cm, oc, (size_t)d->ldc,
                        &q, NULL);
    else if (dtype == AXON_C128)
      st = CLBlastZgemm(CLBlastLayoutRowMajor, ta, tb, (size_t)d->m, (size_t)d->n, (size_t)d->k, za,
                        am, oa, (size_t)d->lda, bm, ob, (size_t)d->ldb, zb, cm, oc, (size_t)d->ldc,
                        &q, NULL);
    else if (dtype == AXON_F32)
      st = CLBlastSgemm(CLBlastLayoutRowMajor, ta, tb, (size_t)d->m, (size_t)d->n, (size_t)d->k,
                        (float)d->alpha, am, oa, (size_t)d->lda, bm, ob, (size_t)d->ldb,
                        (float)d->beta, cm, oc, (size_t)d->ldc, &q, NULL);
    else
      st = CLBlastDgemm(CLBlastLayoutRowMajor, ta, tb, (size_t)d->m, (size_t)d->n, (size_t)d->k,
                        d->alpha, am, oa, (size_t)d->lda, bm, ob, (size_t)d->ldb, d->beta, cm, oc,
                        (size_t)d->ldc, &q, NULL);
  }
  if (st != CLBlastSuccess)
    return axon_fail(st < 0 && st > -100 ? st : AXON_ERROR_UNSUPPORTED,
                     "CLBlast gemm (%lld x %lld x %lld) failed with status %d", (long long)d->m,
                     (long long)d->n, (long long)d->k, (int)st);
  return AXON_SUCCESS;
}

/* ---- portable kernel ----------------------------------------------------------------------- */

typedef struct gemm_geom {
  int64_t m, n, k, lda, ldb, ldc, stride_a, stride_b, stride_c, trans_a, trans_b;
} gemm_geom;

static axon_status_t kernel_gemm(axon_stream_t stream, axon_dtype dtype, const axon_gemm_desc *d) {
  if (is_complex_dtype(dtype))
    return axon_fail(AXON_ERROR_UNSUPPORTED, "gemm: %s products need the host BLAS or CLBlast",
                     axon_dtype_name(dtype));
  axon_program_t program;
  AXON_TRY(family_program(stream, "gemm", dtype, &program));
  gemm_geom g = {d->m,        d->n,        d->k,        d->lda,     d->ldb,    d->ldc,
                 d->stride_a, d->stride_b, d->stride_c, d->trans_a, d->trans_b};
  compute_scalar alpha = make_scalar(dtype, d->alpha, 0, 0),
                 beta = make_scalar(dtype, d->beta, 0, 0);
  axon_arg args[] = {buffer_arg(d->a),
                     buffer_arg(d->b),
                     buffer_arg(d->c),
                     bytes_arg(&g, sizeof g),
                     bytes_arg(&alpha.v, alpha.size),
                     bytes_arg(&beta.v, beta.size)};
  size_t local[3] = {16, 16, 1};
  size_t global[3] = {axon_round_up((size_t)d->n, 16), axon_round_up((size_t)d->m, 16),
                      (size_t)d->batch};
  return axon_launch(program, "gemm_tiled", stream, 3, global, local, args, 6);
}

axon_status_t axon_gemm(axon_stream_t stream, axon_dtype dtype, const axon_gemm_desc *d) {
  if (!stream || !d) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "gemm: NULL argument");
  if (d->m < 0 || d->n < 0 || d->k < 0 || d->batch < 0)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "gemm: negative size");
  if (d->m == 0 || d->n == 0 || d->batch == 0) return AXON_SUCCESS;
  if (!axon_device_supports_dtype(axon_stream_device(stream), dtype))
    return axon_fail(AXON_ERROR_UNSUPPORTED_DTYPE, "%s is not supported on axon device %d",
                     axon_dtype_name(dtype), axon_stream_device(stream));
  if (d->k == 0) {
    /* An empty inner dimension: C = beta * C (zeros for beta = 0). BLAS libraries reject or
     * skip k = 0, and A and B may have no memory at all: the portable kernel does it, with C
     * standing in for the unread operands. */
    axon_gemm_desc e = *d;
    e.a = e.b = d->c;
    return kernel_gemm(stream, dtype, &e);
  }
  switch (axon_gemm_path_for(stream, dtype)) {
    case AXON_GEMM_HOST_BLAS:
      return host_gemm(stream, dtype, d);
    case AXON_GEMM_CLBLAST:
      return clblast_gemm(stream, dtype, d);
    default:
      return kernel_gemm(stream, dtype, d);
  }
}
