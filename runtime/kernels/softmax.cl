/*
 * Softmax, log-softmax and safe softmax, forward and backward, on rows of a contiguous
 * [outer, dim, inner] tensor (element (o, j, i) at (o * dim + j) * inner + i): a work-group
 * per row for long rows, a work-item per row (the _serial kernels) for many short ones.
 * Launched by runtime/src/ops/softmax.c.
 */

#include "group_reduce.cl"

#define ROW_BASE(row, dim, inner) (((row) / (inner)) * (dim) * (inner) + (row) % (inner))

/* Everything here is for floating types (fmax has no integer overload); other dtypes build an
 * empty program. */
#ifdef IS_FLOAT
/* One row: `first`, `step` pick the elements this work-item visits; `reduce` combines. */
/* Rows can be long for one work-item (on CPU devices every row is reduced that way): sums
 * accumulate in double where the device has it, so a 5000-long row keeps float accuracy. */
#ifdef HAS_FP64
typedef double SUM_T;
#else
typedef CT SUM_T;
#endif

/* log_mode: 0 softmax, 1 log_softmax, 2 safe softmax (axon_softmax_mode). A safe softmax
 * row whose maximum is -inf holds only -inf and NaN (fmax skips NaN); without a NaN it is fully
 * masked and becomes zeros, as PyTorch's _safe_softmax does. m is uniform across a work-group,
 * so every item of a group takes the branch (REDUCE_SUM is collective) or none does. */
#define SAFE_SOFTMAX_MASKED_ROW(first, step, REDUCE_SUM)                                    \
  if (log_mode == 2 && m == -INFINITY) {                                                    \
    CT nans = 0;                                                                            \
    for (long j = first; j < dim; j += step) nans += isnan(LOAD(x, base + j * inner)) ? 1 : 0; \
    if (REDUCE_SUM(nans) == 0) {                                                            \
      for (long j = first; j < dim; j += step) STORE(y, base + j * inner, 0);               \
      return;                                                                               \
    }                                                                                       \
  }

#define SOFTMAX_BODY(first, step, REDUCE_MAX, REDUCE_SUM)                                   \
  __global uchar *x = PTR(in), *y = PTR(out);                                               \
  CT m = -INFINITY;                                                                         \
  for (long j = first; j < dim; j += step) m = fmax(m, LOAD(x, base + j * inner));          \
  m = REDUCE_MAX(m);                                                                        \
  SAFE_SOFTMAX_MASKED_ROW(first, step, REDUCE_SUM)                                          \
  SUM_T acc = 0;                                                                            \
  for (long j = first; j < dim; j += step) acc += exp(LOAD(x, base + j * inner) - m);       \
  CT s = REDUCE_SUM((CT)acc);                                                               \
  CT ls = log(s);                                                                           \
  for (long j = first; j < dim; j += step) {                                                \
    CT v = LOAD(x, base + j * inner) - m;                                                   \
    STORE(y, base + j * inner, log_mode == 1 ? v - ls : exp(v) / s);                        \
  }

/* grad_in = y * (g - sum(g * y)) for softmax, g - exp(y) * sum(g) for log_softmax. */
#define SOFTMAX_BACKWARD_BODY(first, step, REDUCE_SUM)                                      \
  __global uchar *g = PTR(grad), *y = PTR(out), *r = PTR(result);                           \
  SUM_T acc = 0;                                                                            \
  for (long j = first; j < dim; j += step) {                                                \
    long at = base + j * inner;                                                             \
    acc += log_mode ? LOAD(g, at) : LOAD(g, at) * LOAD(y, at);                              \
  }                                                                                         \
  CT s = REDUCE_SUM((CT)acc);                                                               \
  for (long j = first; j < dim; j += step) {                                                \
    long at = base + j * inner;                                                             \
    CT gv = LOAD(g, at), yv = LOAD(y, at);                                                  \
    STORE(r, at, log_mode ? gv - exp(yv) * s : yv * (gv - s));                              \
  }

#define NO_REDUCE(v) (v)
#define GROUP_MAX(v) group_reduce(scratch, (v), 1)
#define GROUP_SUM(v) group_reduce(scratch, (v), 0)

KERNEL(softmax_serial)(BUF(in), BUF(out), long rows, long dim, long inner, int log_mode) {
  long row = get_global_id(0);
  if (row >= rows) return;
  long base = ROW_BASE(row, dim, inner);
  SOFTMAX_BODY(0, 1, NO_REDUCE, NO_REDUCE)
}

KERNEL_WG(256, 1, 1, softmax)(
    BUF(in), BUF(out), long rows, long dim, long inner, int log_mode) {
  LOCAL_ARRAY(softmax, CT, scratch, 256);
  long base = ROW_BASE(get_group_id(0), dim, inner);
  long lid = get_local_id(0);
  SOFTMAX_BODY(lid, 256, GROUP_MAX, GROUP_SUM)
}

KERNEL(softmax_backward_serial)(BUF(grad), BUF(out), BUF(result), long rows, long dim,
                                      long inner, int log_mode) {
  long row = get_global_id(0);
  if (row >= rows) return;
  long base = ROW_BASE(row, dim, inner);
  SOFTMAX_BACKWARD_BODY(0, 1, NO_REDUCE)
}

KERNEL_WG(256, 1, 1, softmax_backward)(
    BUF(grad), BUF(out), BUF(result), long rows, long dim, long inner, int log_mode) {
  LOCAL_ARRAY(softmax_backward, CT, scratch, 256);
  long base = ROW_BASE(get_group_id(0), dim, inner);
  long lid = get_local_id(0);
  SOFTMAX_BACKWARD_BODY(lid, 256, GROUP_SUM)
}

#ifdef DT_F32
/* float32 rows contiguous in memory on CPU devices (the runtime chooses): a work-item per row
 * in float8 vectors, because PoCL's vector exp is several times faster than its scalar exp,
 * which the one-row-per-item kernels above call per element. */
KERNEL(softmax_rows)(BUF(in), BUF(out), long rows, long dim, long inner, int log_mode) {
  long row = get_global_id(0);
  if (row >= rows) return;
  __global const float *x = (__global const float *)PTR(in) + row * dim;
  __global float *y = (__global float *)PTR(out) + row * dim;
  long body = dim / 8 * 8;
  float8 mv = -INFINITY;
  for (long j = 0; j < body; j += 8) mv = fmax(mv, vload8(0, x + j));
  float m = lanes_max(mv);
  for (long j = body; j < dim; j++) m = fmax(m, x[j]);
  if (log_mode == 2 && m == -INFINITY) {
    int nans = 0;
    for (long j = 0; j < dim; j++) nans |= isnan(x[j]);
    if (!nans) {
      for (long j = 0; j < dim; j++) y[j] = 0;
      return;
    }
  }
  float8 sv = 0;
  for (long j = 0; j < body; j += 8) sv += exp(vload8(0, x + j) - m);
  float s = lanes_sum(sv);
  for (long j = body; j < dim; j++) s += exp(x[j] - m);
  float ls = log(s);
  for (long j = 0; j < body; j += 8) {
    float8 v = vload8(0, x + j) - m;
    vstore8(log_mode == 1 ? v - ls : exp(v) / s, 0, y + j);
  }
  for (long j = body; j < dim; j++) y[j] = log_mode == 1 ? x[j] - m - ls : exp(x[j] - m) / s;
}

KERNEL(softmax_backward_rows)(BUF(grad), BUF(out), BUF(result), long rows, long dim,
                                    long inner, int log_mode) {
  long row = get_global_id(0);
  if (row >= rows) return;
  __global const float *g = (__global const float *)PTR(grad) + row * dim;
  __global const float *y = (__global const float *)PTR(out) + row * dim;
  __global float *r = (__global float *)PTR(result) + row * dim;
  long body = dim / 8 * 8;
  float8 sv = 0;
  for (long j = 0; j < body; j += 8)
    sv += log_mode ? vload8(0, g + j) : vload8(0, g + j) * vload8(0, y + j);
  float s = lanes_sum(sv);
  for (long j = body; j < dim; j++) s += log_mode ? g[j] : g[j] * y[j];
  for (long j = 0; j < body; j += 8) {
    float8 gv = vload8(0, g + j), yv = vload8(0, y + j);
    vstore8(log_mode ? gv - exp(yv) * s : yv * (gv - s), 0, r + j);
  }
  for (long j = body; j < dim; j++) r[j] = log_mode ? g[j] - exp(y[j]) * s : y[j] * (g[j] - s);
}
#endif
#endif
