/*
 * Batched LAPACK inside the stream (axon/linalg.h). Like gemm.c's host BLAS path, the library
 * runs as a host task (axon/host_task.h) on CPU-class devices that run native kernels: the
 * task receives the operands' host addresses (the buffers' own memory, nothing copied) and
 * loops over the batch, so it sees every earlier command's results and later commands see
 * its own. Devices without native kernels (GPUs) have no path here: the glue leaves those
 * operators to the counted CPU fallback. The operators for float and double are one template
 * (linalg_lapack.inc) included twice.
 */
#include "launch_common.h" /* first: it fixes the OpenCL target version */

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "axon/host_task.h"
#include "axon/linalg.h"

typedef struct linalg_task {
  axon_linalg_op op;
  axon_linalg_desc d;
} linalg_task;

#define T float
#define LP(name) s##name##_
#define CB(name) cblas_s##name
#define SFX _f32
#include "linalg_lapack.inc"
#undef T
#undef LP
#undef CB
#undef SFX

#define T double
#define LP(name) d##name##_
#define CB(name) cblas_d##name
#define SFX _f64
#include "linalg_lapack.inc"
#undef T
#undef LP
#undef CB
#undef SFX

int axon_linalg_supported(axon_stream_t stream, axon_dtype dtype) {
  return (dtype == AXON_F32 || dtype == AXON_F64) && axon_host_tasks_supported(stream) &&
         axon_device_supports_dtype(axon_stream_device(stream), dtype);
}

static int fits_int(int64_t x) {
  return x >= 0 && x <= INT_MAX;
}

axon_status_t axon_linalg(axon_stream_t stream, axon_dtype dtype, axon_linalg_op op,
                          const axon_linalg_desc *desc) {
  if (!stream || !desc) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "linalg: NULL argument");
  if ((unsigned)op >= AXON_LINALG_COUNT)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "linalg: unknown operator %d", (int)op);
  const axon_linalg_desc *d = desc;
  if (d->batch < 0 || !fits_int(d->m) || !fits_int(d->n) || !fits_int(d->k) || !fits_int(d->a.ld) ||
      !fits_int(d->b.ld) || !fits_int(d->u.ld) || !fits_int(d->vt.ld))
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT,
                     "linalg: sizes must be non-negative and fit LAPACK's 32-bit integers");
  if (!axon_linalg_supported(stream, dtype))
    return axon_fail(AXON_ERROR_UNSUPPORTED,
                     "linalg: %s LAPACK needs a CPU device with native kernels",
                     axon_dtype_name(dtype));
  if (d->batch == 0) return AXON_SUCCESS;
  linalg_task t = {op, *d};
  /* LAPACK requires leading dimensions of at least 1, even for empty matrices. */
  axon_linalg_mat *mats[] = {&t.d.a, &t.d.b, &t.d.u, &t.d.vt};
  for (size_t i = 0; i < sizeof mats / sizeof *mats; i++)
    if (mats[i]->ld < 1) mats[i]->ld = 1;
  const void *addrs[9] = {d->a.data, d->b.data, d->u.data, d->vt.data, d->v,
                          d->piv,    d->info,   d->out,    d->out2};
  return axon_host_task(stream, dtype == AXON_F32 ? run_linalg_f32 : run_linalg_f64, &t, sizeof t,
                        addrs, 9);
}

axon_status_t axon_lu_permutation(axon_stream_t stream, axon_dtype dtype, const void *pivots,
                                  void *perm, void *p, int64_t batch, int64_t m, int64_t k) {
  if (!stream || batch < 0 || m < 0 || k < 0 || k > m)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "lu_permutation: bad argument");
  if (batch == 0 || m == 0) return AXON_SUCCESS;
  axon_program_t program;
  AXON_TRY(family_program(stream, "linalg", dtype, &program));
  axon_arg args[] = {buffer_arg(k ? pivots : perm), buffer_arg(perm), buffer_arg(p),
                     bytes_arg(&batch, 8),          bytes_arg(&m, 8), bytes_arg(&k, 8)};
  return launch_1d(stream, program, "lu_permutation", batch, args, 6);
}
