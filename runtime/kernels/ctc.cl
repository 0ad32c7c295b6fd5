/*
 * CTC loss (ctc_loss and its gradient), launched by runtime/src/ops/ctc.c with an
 * axon_ctc_args A (ctc_args.h). Positions s < 2S+1 of the extended target (blank, label 1,
 * blank, ...) of each batch element. log_alpha / log_beta are contiguous [n, T, Lmax] of CT;
 * tg_offset (each element's first target label), input_lengths and target_lengths are int64
 * [n].
 */

#include "ctc_args.h"

#ifdef IS_FLOAT

/* log_alpha and log_beta as CT arrays. */
#define ACC(p) ((__global CT *)(p))

/* Label of extended position s of the target starting at element `base`. */
inline long ctc_label(__global uchar *targets, long base, long s, long blank,
                      const axon_ctc_args *A) {
  if (s % 2 == 0) return blank;
  long i = base + (s / 2) * A->target_stride;
  return A->targets_int32 ? (long)LD_I32(targets, i) : LD_I64(targets, i);
}

inline CT lse3(CT a, CT b, CT c) {
  CT m = fmax(a, fmax(b, c));
  if (m == -INFINITY) return -INFINITY;
  return m + log(exp(a - m) + exp(b - m) + exp(c - m));
}

/* log_alpha and the loss. One work-group per batch element; its items share the positions s
 * and step through time with a barrier per step. */
KERNEL(ctc_alpha)(BUF(log_probs), BUF(targets), BUF(tg_offset), BUF(input_lengths),
                  BUF(target_lengths), BUF(log_alpha), BUF(nll), STRUCT_ARG(axon_ctc_args, A),
                  long total) {
  PRIVATE_STRUCT(axon_ctc_args, A);
  long b = get_group_id(0), lid = get_local_id(0), lsz = get_local_size(0);
  if (b >= total) return;
  long T = A.time, Lmax = A.max_positions, blank = A.blank;
  long Tb = LD_I64(PTR(input_lengths), b), S = LD_I64(PTR(target_lengths), b), L = 2 * S + 1;
  long tbase = LD_I64(PTR(tg_offset), b);
  __global uchar *lp = PTR(log_probs) + 0, *tg = PTR(targets);
  __global CT *la = ACC(PTR(log_alpha)) + b * T * Lmax;
  long lpb = b * A.log_probs_strides[1];
  long st_t = A.log_probs_strides[0], st_c = A.log_probs_strides[2];
  for (long s = lid; s < Lmax; s += lsz) {
    CT v = -INFINITY;
    if (Tb > 0 && s < 2 && s < L) v = LOAD(lp, lpb + ctc_label(tg, tbase, s, blank, &A) * st_c);
    la[s] = v;
    for (long t = (Tb > 0 ? Tb : 1); t < T; t++) la[t * Lmax + s] = -INFINITY;
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (long t = 1; t < Tb; t++) {
    for (long s = lid; s < Lmax; s += lsz) {
      CT v = -INFINITY;
      if (s < L) {
        long l = ctc_label(tg, tbase, s, blank, &A);
        __global CT *prev = la + (t - 1) * Lmax;
        CT a = prev[s], b1 = s >= 1 ? prev[s - 1] : -INFINITY, b2 = -INFINITY;
        if (s >= 2 && l != ctc_label(tg, tbase, s - 2, blank, &A)) b2 = prev[s - 2];
        v = lse3(a, b1, b2) + LOAD(lp, t * st_t + lpb + l * st_c);
      }
      la[t * Lmax + s] = v;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  if (lid == 0) {
    CT v = INFINITY;
    if (Tb > 0) {
      __global CT *last = la + (Tb - 1) * Lmax;
      v = -lse3(last[L - 1], L >= 2 ? last[L - 2] : -INFINITY, -INFINITY);
    }
    STORE(PTR(nll), b, v);
  }
}

/* log_beta by the mirrored recursion, then the gradient of each (t, class) of this element.
 * One work-item per batch element, without barriers: the work-group form (items sharing the
 * positions s, a barrier per time step, as ctc_alpha) gave wrong gradients now and then under
 * PoCL's default work-group method (loopvec; a stress test over random shapes, about one run
 * in fifteen on some inputs, never with POCL_WORK_GROUP_METHOD=cbs). */
KERNEL(ctc_grad)(BUF(grad_out), BUF(log_probs), BUF(targets), BUF(tg_offset),
                 BUF(input_lengths), BUF(target_lengths), BUF(nll), BUF(log_alpha),
                 BUF(log_beta), BUF(grad), STRUCT_ARG(axon_ctc_args, A), long total) {
  PRIVATE_STRUCT(axon_ctc_args, A);
  long b = get_global_id(0);
  if (b >= total) return;
  long T = A.time, N = A.batch, C = A.classes, Lmax = A.max_positions, blank = A.blank;
  long Tb = LD_I64(PTR(input_lengths), b), S = LD_I64(PTR(target_lengths), b), L = 2 * S + 1;
  long tbase = LD_I64(PTR(tg_offset), b);
  __global uchar *lp = PTR(log_probs), *tg = PTR(targets);
  __global CT *la = ACC(PTR(log_alpha)) + b * T * Lmax, *lb = ACC(PTR(log_beta)) + b * T * Lmax;
  long lpb = b * A.log_probs_strides[1];
  long st_t = A.log_probs_strides[0], st_c = A.log_probs_strides[2];
  if (Tb > 0)
    for (long s = 0; s < Lmax; s++) {
      CT v = -INFINITY;
      if (s < L && s >= L - 2)
        v = LOAD(lp, (Tb - 1) * st_t + lpb + ctc_label(tg, tbase, s, blank, &A) * st_c);
      lb[(Tb - 1) * Lmax + s] = v;
    }
  for (long t = Tb - 2; t >= 0; t--) {
    __global CT *next = lb + (t + 1) * Lmax;
    for (long s = 0; s < Lmax; s++) {
      CT v = -INFINITY;
      if (s < L) {
        long l = ctc_label(tg, tbase, s, blank, &A);
        CT a = next[s], b1 = s + 1 < L ? next[s + 1] : -INFINITY, b2 = -INFINITY;
        if (s + 2 < L && l != ctc_label(tg, tbase, s + 2, blank, &A)) b2 = next[s + 2];
        v = lse3(a, b1, b2) + LOAD(lp, t * st_t + lpb + l * st_c);
      }
      lb[t * Lmax + s] = v;
    }
  }
  CT nl = LOAD(PTR(nll), b), go = LOAD(PTR(grad_out), b * A.grad_out_stride);
  int zero = A.zero_infinity && nl == INFINITY;
  for (long t = 0; t < T; t++)
    for (long c = 0; c < C; c++) {
      CT v = 0;
      if (t < Tb && !zero) {
        /* log-sum-exp of alpha + beta over the positions labelled c, added in order of s as
         * PyTorch's CPU kernel does (descending), so the cancelling difference below rounds
         * alike */
        CT lcab = -INFINITY;
        for (long s = L - 1; s >= 0; s--) {
          if (ctc_label(tg, tbase, s, blank, &A) != c) continue;
          CT v2 = la[t * Lmax + s] + lb[t * Lmax + s];
          if (lcab == -INFINITY) {
            lcab = v2;
          } else {
            CT m = fmax(lcab, v2);
            lcab = log(exp(lcab - m) + exp(v2 - m)) + m;
          }
        }
        CT l = LOAD(lp, t * st_t + lpb + c * st_c);
        v = (exp(l) - exp(lcab + nl - l)) * go;
      }
      STORE(PTR(grad), (t * N + b) * C + c, v);
    }
}

#endif
