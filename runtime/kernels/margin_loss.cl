/*
 * Multi-class margin losses (multi_margin_loss, multilabel_margin_loss) and their gradients,
 * launched by runtime/src/ops/margin_loss.c with an axon_margin_loss_args A
 * (margin_loss_args.h). input contiguous [n, c], a work item per sample; the loss per sample
 * (divided by c), reduced by the caller. multi_margin's targets are int64 [n]; multilabel's are
 * int64 [n, c], each sample's classes up to the first negative one.
 */

#include "margin_loss_args.h"

#ifdef IS_FLOAT

KERNEL(multi_margin)(BUF(in), BUF(target), BUF(weight), BUF(out), axon_margin_loss_args A,
                     long total) {
  long n = get_global_id(0);
  if (n >= total) return;
  long C = A.classes, y = LD_I64(PTR(target), n);
  __global uchar *x = PTR(in);
  CT margin = ARG_REAL(A.margin);
  CT xy = LOAD(x, n * C + y), wy = A.has_weight ? LOAD(PTR(weight), y) : (CT)1, acc = 0;
  for (long i = 0; i < C; i++) {
    if (i == y) continue;
    CT z = margin - xy + LOAD(x, n * C + i);
    if (z > 0) acc += (A.p == 1 ? z : z * z) * wy;
  }
  STORE(PTR(out), n, acc / (CT)C);
}

KERNEL(multi_margin_backward)(BUF(grad_out), BUF(in), BUF(target), BUF(weight), BUF(grad_in),
                              axon_margin_loss_args A, long total) {
  long n = get_global_id(0);
  if (n >= total) return;
  long C = A.classes, y = LD_I64(PTR(target), n);
  __global uchar *x = PTR(in);
  CT margin = ARG_REAL(A.margin);
  CT g = LOAD(PTR(grad_out), n * A.grad_out_stride) * ARG_REAL(A.grad_scale) / (CT)C;
  CT xy = LOAD(x, n * C + y), wy = A.has_weight ? LOAD(PTR(weight), y) : (CT)1, gy = 0;
  for (long i = 0; i < C; i++) {
    if (i == y) continue;
    CT z = margin - xy + LOAD(x, n * C + i), h = 0;
    if (z > 0) h = (A.p == 1 ? (CT)1 : 2 * z) * wy * g;
    gy -= h;
    STORE(PTR(grad_in), n * C + i, h);
  }
  STORE(PTR(grad_in), n * C + y, gy);
}

KERNEL(multilabel_margin)(BUF(in), BUF(target), BUF(is_target), BUF(out),
                          axon_margin_loss_args A, long total) {
  long n = get_global_id(0);
  if (n >= total) return;
  long C = A.classes;
  __global uchar *x = PTR(in), *tg = PTR(target), *ist = PTR(is_target);
  for (long i = 0; i < C; i++) STORE(ist, n * C + i, 0);
  for (long j = 0; j < C; j++) {
    long y = LD_I64(tg, n * C + j);
    if (y < 0) break;
    STORE(ist, n * C + y, 1);
  }
  CT acc = 0;
  for (long j = 0; j < C; j++) {
    long y = LD_I64(tg, n * C + j);
    if (y < 0) break;
    CT xy = LOAD(x, n * C + y);
    for (long i = 0; i < C; i++) {
      if (LOAD(ist, n * C + i) != 0) continue;
      CT z = 1 - xy + LOAD(x, n * C + i);
      if (z > 0) acc += z;
    }
  }
  STORE(PTR(out), n, acc / (CT)C);
}

KERNEL(multilabel_margin_backward)(BUF(grad_out), BUF(in), BUF(target), BUF(is_target),
                                   BUF(grad_in), axon_margin_loss_args A, long total) {
  long n = get_global_id(0);
  if (n >= total) return;
  long C = A.classes;
  __global uchar *x = PTR(in), *tg = PTR(target), *ist = PTR(is_target), *gi = PTR(grad_in);
  CT g = LOAD(PTR(grad_out), n * A.grad_out_stride) * ARG_REAL(A.grad_scale) / (CT)C;
  /* Each row element sums its terms in a fixed order: gradient[i] for a non-target i counts
   * the targets it violates, gradient[y] minus the non-targets violating y. */
  for (long i = 0; i < C; i++) {
    CT xi = LOAD(x, n * C + i), acc = 0;
    int target_i = LOAD(ist, n * C + i) != 0;
    for (long j = 0; j < C; j++) {
      long y = LD_I64(tg, n * C + j);
      if (y < 0) break;
      CT xy = LOAD(x, n * C + y);
      if (!target_i) {
        if (1 - xy + xi > 0) acc += g;
      } else if (y == i) {
        for (long k = 0; k < C; k++)
          if (LOAD(ist, n * C + k) == 0 && 1 - xy + LOAD(x, n * C + k) > 0) acc -= g;
      }
    }
    STORE(gi, n * C + i, acc);
  }
}

#endif
