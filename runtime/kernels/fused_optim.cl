/*
 * Fused optimizer steps: aten::_fused_adam_ / _fused_adamw_ (kernel fused_adam), _fused_sgd_
 * (fused_sgd) and _fused_adagrad_ (fused_adagrad), in the program of the parameters' dtype.
 * Launched by runtime/src/ops/fused_optim.c; the layout is described in
 * runtime/include/axon/fused_optim.h.
 *
 * A launch carries up to SLOTS tensors, each as kernel arguments (OpenCL 1.2 cannot read
 * addresses from a buffer). A slot's elements are taken FO_W at a time (units: eight-element
 * vectors where the dtype has the vector form VCT, float64 one by one); work-groups are dealt to
 * the slots in order, ceil(units / block) groups each, block = items * the group size. A group
 * finds its slot and the slot's buffers once, then each work-item updates `items` units
 * (FO_UNIT: the launcher chooses the walk and its sizes per device class); a partial last
 * vector goes element by element. Scalars that depend on a slot's step count (Adam's bias
 * corrections, Adagrad's decayed rate) are computed once per group by its first work-item, in
 * double where the device has it, and shared through local memory.
 *
 * The per-element math follows PyTorch's kernels (aten/src/ATen/native/cpu/Fused*Kernel.cpp and
 * the CUDA ones): in CT (float for float16 / bfloat16 / float32, double for float64), each value
 * rounded once when stored, with the shared pointwise math (pointwise_math.cl) for lerp,
 * maximum, sqrt and addcdiv. A found_inf of 1 skips the step entirely; a grad_scale divides the
 * gradients, which are written back unscaled, as PyTorch does.
 */
#include "fused_optim_args.h"

#ifdef HAS_VCT
#define FO_W 8 /* elements per unit: the launcher's fo_width must match */
#else
#define FO_W 1
#endif

/* Reals where the host computes in double: bias corrections and decayed rates. */
#ifdef HAS_FP64
typedef double RT;
#define FO_REAL(r) as_double((r).bits)
#else
typedef float RT;
#define FO_REAL(r) ((r).f)
#endif

/* The slot of this work-group among nslots (lengths in numel, elements) and the group's first
 * unit in it (and the slot's length); -1 past the last slot. */
inline int fo_slot(int8 numel, int nslots, int block, long *first, int *count) {
  int n[8] = {numel.s0, numel.s1, numel.s2, numel.s3, numel.s4, numel.s5, numel.s6, numel.s7};
  int g = (int)get_group_id(0);
  for (int k = 0; k < nslots; k++) {
    int groups = ((n[k] + FO_W - 1) / FO_W + block - 1) / block;
    if (g < groups) {
      *first = (long)g * block;
      *count = n[k];
      return k;
    }
    g -= groups;
  }
  return -1;
}

/* The buffer `name` of slot k: name0 ... name5 (SEL6) or name7 (SEL8). */
#define SEL6(k, name)                                                          \
  ((k) == 0   ? PTR(name##0)                                                   \
   : (k) == 1 ? PTR(name##1)                                                   \
   : (k) == 2 ? PTR(name##2)                                                   \
   : (k) == 3 ? PTR(name##3)                                                   \
   : (k) == 4 ? PTR(name##4)                                                   \
              : PTR(name##5))
#define SEL8(k, name) \
  ((k) < 6 ? SEL6(k, name) : (k) == 6 ? PTR(name##6) : PTR(name##7))

/* Whether found_inf says this step is skipped (PyTorch compares with 1.0). */
#define FO_SKIPPED(A) ((A).has_found_inf && LD_F32(PTR(found_inf), 0) == 1.0f)
/* A kernel's start: the whole step is skipped on found_inf; else this group's slot k (the tensor)
 * and its run of n elements from `first`; a group past the last tensor leaves. */
#define FO_ENTER(k)                                                             \
  if (FO_SKIPPED(A)) return;                                                    \
  long first;                                                                   \
  int n;                                                                        \
  int k = fo_slot(numel, nslots, (int)get_local_size(0) * items, &first, &n);   \
  if (k < 0) return;
/* The learning rate: the device scalar or the argument. */
#define FO_LR(A) ((A).has_lr_tensor ? (RT)LD_F32(PTR(lr), 0) : FO_REAL((A).lr))

#ifdef IS_FLOAT
/* Unit j of this work-item: its own run of `items` units (contiguous: CPU devices, where each
 * core then streams through memory in order) or every group-size-th unit (GPUs, where
 * neighbouring work-items then read neighbouring memory). */
#define FO_UNIT(j)                                                                   \
  (first + (contiguous ? (long)get_local_id(0) * items + (j)                         \
                       : (long)(j) * (long)get_local_size(0) + (long)get_local_id(0)))

/* The walk over a group's units: BODY(LD, ST, e) updates the FO_W elements from e, loading and
 * storing with LD / ST, written once with CT and run with CT as the vector type VCT for whole
 * vectors (the scalars computed before keep their scalar type). */
#ifdef HAS_VCT
#define FO_WALK(BODY)                                                          \
  for (int j = 0; j < items; j++) {                                            \
    long e = FO_UNIT(j) * FO_W;                                                \
    if (e >= n) break;                                                         \
    if (e + FO_W <= n) {                                                       \
      typedef VCT CT;                                                          \
      BODY(VLOAD, VSTORE, e)                                                   \
    } else {                                                                   \
      for (long i = e; i < n; i++) {                                           \
        BODY(LOAD, STORE, i)                                                   \
      }                                                                        \
    }                                                                          \
  }
#else
#define FO_WALK(BODY)                                                          \
  for (int j = 0; j < items; j++) {                                            \
    long e = FO_UNIT(j);                                                       \
    if (e >= n) break;                                                         \
    BODY(LOAD, STORE, e)                                                       \
  }
#endif

/* The gradient: unscaled (and written back so) where there is a grad_scale, negated for
 * maximize. */
#define FO_GRAD(LD, ST, e)   \
  CT g = LD(G, e);           \
  if (A.has_grad_scale) {    \
    g = g / gs;              \
    ST(G, e, g);             \
  }                          \
  if (A.maximize) g = -g;

/* Adam / AdamW, as PyTorch's fused kernels: decoupled decay scales the parameter (AdamW) or
 * the decay joins the gradient (Adam); exp_avg.lerp_(grad, 1 - beta1); exp_avg_sq * beta2 +
 * (1 - beta2) grad^2; amsgrad keeps the running maximum; param += -step_size exp_avg / denom. */
#define ADAM_BODY(LD, ST, e)                                        \
  {                                                                 \
    FO_GRAD(LD, ST, e)                                              \
    CT p = LD(P, e);                                                \
    if (wd != 0) {                                                  \
      if (A.adamw)                                                  \
        p = p * decay;                                              \
      else                                                          \
        g = g + p * wd;                                             \
    }                                                               \
    CT m0 = LD(M, e), v0 = LD(V, e);                                \
    CT m = PW_FLOAT_lerp(CT, m0, g, w1, , );                        \
    CT v = v0 * beta2 + w2 * g * g;                                 \
    ST(M, e, m);                                                    \
    ST(V, e, v);                                                    \
    if (A.amsgrad) {                                                \
      CT vmax = LD(VM, e);                                          \
      v = PW_FLOAT_maximum(CT, vmax, v, , , );                      \
      ST(VM, e, v);                                                 \
    }                                                               \
    CT denom = PW_FLOAT_sqrt(CT, v, , , , ) / bc2_sqrt + eps;       \
    ST(P, e, PW_FLOAT_addcdiv(CT, p, m, denom, -step_size, ));      \
  }

#define ADAM_SLOT(k) BUF(p##k), BUF(g##k), BUF(m##k), BUF(v##k), BUF(vmax##k), BUF(steps##k)
KERNEL(fused_adam)(ADAM_SLOT(0), ADAM_SLOT(1), ADAM_SLOT(2), ADAM_SLOT(3), ADAM_SLOT(4),
                   ADAM_SLOT(5), int8 numel, int nslots, int items, int contiguous, BUF(lr), BUF(grad_scale),
                   BUF(found_inf), axon_fused_optim_args A) {
  LOCAL_ARRAY(fused_adam, CT, coef, 2);
  FO_ENTER(k)
  RT lr = FO_LR(A);
  if (get_local_id(0) == 0) {
    /* PyTorch's bias corrections from the step count (float32, already incremented). */
    RT step = (RT)LD_F32(SEL6(k, steps), 0);
    RT bc1 = (RT)1 - pow(FO_REAL(A.beta1), step);
    coef[0] = (CT)(lr / bc1);                                /* step size */
    coef[1] = (CT)sqrt((RT)1 - pow(FO_REAL(A.beta2), step)); /* sqrt of the 2nd correction */
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  CT step_size = coef[0], bc2_sqrt = coef[1];
  CT beta2 = (CT)FO_REAL(A.beta2), wd = (CT)FO_REAL(A.weight_decay), eps = (CT)FO_REAL(A.eps);
  CT w1 = (CT)((RT)1 - FO_REAL(A.beta1)), w2 = (CT)((RT)1 - FO_REAL(A.beta2));
  CT decay = (CT)((RT)1 - lr * FO_REAL(A.weight_decay)); /* AdamW: the decoupled decay */
  CT gs = A.has_grad_scale ? (CT)LD_F32(PTR(grad_scale), 0) : (CT)1;
  __global uchar *P = SEL6(k, p), *G = SEL6(k, g), *M = SEL6(k, m), *V = SEL6(k, v);
  __global uchar *VM = SEL6(k, vmax);
  FO_WALK(ADAM_BODY)
}

/* SGD: weight decay joins the gradient; the momentum buffer starts as the gradient, then
 * momentum * buf + (1 - dampening) grad; Nesterov looks ahead along it. */
#define SGD_BODY(LD, ST, e)                                      \
  {                                                              \
    FO_GRAD(LD, ST, e)                                           \
    CT p = LD(P, e);                                             \
    if (wd != 0) g = g + p * wd;                                 \
    if (mom != 0) {                                              \
      CT b = g;                                                  \
      if (!A.is_first_step) {                                    \
        CT b0 = LD(B, e);                                        \
        b = b0 * mom + g * keep;                                 \
      }                                                          \
      ST(B, e, b);                                               \
      g = A.nesterov ? g + b * mom : b;                          \
    }                                                            \
    ST(P, e, p - g * lr);                                        \
  }

#define SGD_SLOT(k) BUF(p##k), BUF(g##k), BUF(buf##k)
KERNEL(fused_sgd)(SGD_SLOT(0), SGD_SLOT(1), SGD_SLOT(2), SGD_SLOT(3), SGD_SLOT(4), SGD_SLOT(5),
                  SGD_SLOT(6), SGD_SLOT(7), int8 numel, int nslots, int items, int contiguous, BUF(lr), BUF(grad_scale),
                  BUF(found_inf), axon_fused_optim_args A) {
  FO_ENTER(k)
  CT lr = (CT)FO_LR(A), wd = (CT)FO_REAL(A.weight_decay), mom = (CT)FO_REAL(A.momentum);
  CT keep = (CT)((RT)1 - FO_REAL(A.dampening));
  CT gs = A.has_grad_scale ? (CT)LD_F32(PTR(grad_scale), 0) : (CT)1;
  __global uchar *P = SEL8(k, p), *G = SEL8(k, g), *B = SEL8(k, buf);
  FO_WALK(SGD_BODY)
}

/* Adagrad: the sum of squared gradients; the step is clr * grad / (sqrt(sum) + eps). */
#define ADAGRAD_BODY(LD, ST, e)                               \
  {                                                           \
    FO_GRAD(LD, ST, e)                                        \
    CT p = LD(P, e);                                          \
    if (wd != 0) g = g + p * wd;                              \
    CT s0 = LD(S, e);                                         \
    CT s = s0 + g * g;                                        \
    ST(S, e, s);                                              \
    CT std = PW_FLOAT_sqrt(CT, s, , , , ) + eps;              \
    ST(P, e, p - clr * g / std);                              \
  }

#define ADAGRAD_SLOT(k) BUF(p##k), BUF(g##k), BUF(acc##k), BUF(steps##k)
KERNEL(fused_adagrad)(ADAGRAD_SLOT(0), ADAGRAD_SLOT(1), ADAGRAD_SLOT(2), ADAGRAD_SLOT(3),
                      ADAGRAD_SLOT(4), ADAGRAD_SLOT(5), ADAGRAD_SLOT(6), ADAGRAD_SLOT(7),
                      int8 numel, int nslots, int items, int contiguous, BUF(lr), BUF(grad_scale), BUF(found_inf),
                      axon_fused_optim_args A) {
  LOCAL_ARRAY(fused_adagrad, CT, coef, 1);
  FO_ENTER(k)
  if (get_local_id(0) == 0) {
    /* The decayed rate lr / (1 + (step - 1) lr_decay), from the incremented step count. */
    RT step = (RT)LD_F32(SEL8(k, steps), 0);
    coef[0] = (CT)(FO_LR(A) / ((RT)1 + (step - (RT)1) * FO_REAL(A.lr_decay)));
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  CT clr = coef[0], wd = (CT)FO_REAL(A.weight_decay), eps = (CT)FO_REAL(A.eps);
  CT gs = A.has_grad_scale ? (CT)LD_F32(PTR(grad_scale), 0) : (CT)1;
  __global uchar *P = SEL8(k, p), *G = SEL8(k, g), *S = SEL8(k, acc);
  FO_WALK(ADAGRAD_BODY)
}
#endif
