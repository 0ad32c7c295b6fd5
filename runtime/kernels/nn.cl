/*
 * Softmax and negative log-likelihood. Softmax works on rows of a contiguous
 * [outer, dim, inner] tensor (element (o, j, i) at (o * dim + j) * inner + i): a work-group
 * per row for long rows, a work-item per row (the _serial kernels) for many short ones.
 */

#define ROW_BASE(row, dim, inner) (((row) / (inner)) * (dim) * (inner) + (row) % (inner))

/* Everything here is for floating types (fmax has no integer overload); other dtypes build an
 * empty program. */
#ifdef IS_FLOAT
/* Tree reduction of one value per work-item in local memory; every item gets the result. */
inline CT group_reduce(__local CT *scratch, CT v, int is_max) {
  int lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = 128; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] = is_max ? fmax(scratch[lid], scratch[lid + s]) : scratch[lid] + scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  CT r = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

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

/* ---- negative log-likelihood: input [n, c] log-probabilities, int64 target [n] ---------- */

inline CT class_weight(__global uchar *w, int has_weight, long t) {
  return has_weight ? LOAD(w, t) : (CT)1;
}

/* reduction none: one work-item per sample. */
KERNEL(nll_none)(BUF(input), BUF(target), BUF(weight), BUF(out), long n, long c,
                       long ignore_index, int has_weight) {
  long i = get_global_id(0);
  if (i >= n) return;
  long t = LD_I64(PTR(target), i);
  CT v = 0;
  if (t != ignore_index)
    v = (t < 0 || t >= c) ? NAN : -class_weight(PTR(weight), has_weight, t) * LOAD(PTR(input), i * c + t);
  STORE(PTR(out), i, v);
}

/* reduction mean / sum: one work-group; writes the loss and the total weight. */
KERNEL_WG(256, 1, 1, nll_reduce)(
    BUF(input), BUF(target), BUF(weight), BUF(out), BUF(total), long n, long c,
    long ignore_index, int has_weight, int mean) {
  LOCAL_ARRAY(nll_reduce, CT, scratch, 256);
  long lid = get_local_id(0);
  CT loss = 0, wsum = 0;
  for (long i = lid; i < n; i += 256) {
    long t = LD_I64(PTR(target), i);
    if (t == ignore_index) continue;
    if (t < 0 || t >= c) {
      loss = NAN;
      continue;
    }
    CT w = class_weight(PTR(weight), has_weight, t);
    loss -= w * LOAD(PTR(input), i * c + t);
    wsum += w;
  }
  loss = group_reduce(scratch, loss, 0);
  wsum = group_reduce(scratch, wsum, 0);
  if (lid == 0) {
    STORE(PTR(out), 0, mean ? loss / wsum : loss);
    STORE(PTR(total), 0, wsum);
  }
}

/* grad_in (zero-filled) at [i, target[i]] = -weight * upstream gradient. */
KERNEL(nll_backward)(BUF(grad_out), BUF(target), BUF(weight), BUF(total), BUF(grad_in),
                           long n, long c, long ignore_index, int has_weight, int reduction) {
  long i = get_global_id(0);
  if (i >= n) return;
  long t = LD_I64(PTR(target), i);
  if (t == ignore_index || t < 0 || t >= c) return;
  CT g = reduction == 0 ? LOAD(PTR(grad_out), i) : LOAD(PTR(grad_out), 0);
  if (reduction == 1) g /= LOAD(PTR(total), 0);
  STORE(PTR(grad_in), i * c + t, -class_weight(PTR(weight), has_weight, t) * g);
}
#endif
