/*
 * Negative log-likelihood (nll_loss, nll_loss2d as rows), forward and backward, launched by
 * runtime/src/ops/loss.c. The margin losses are margin_loss.cl, CTC ctc.cl.
 */

#include "group_reduce.cl"

/* Everything here is for floating types; other dtypes build an empty program. */
#ifdef IS_FLOAT

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
