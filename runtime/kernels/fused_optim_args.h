/*
 * The descriptor of the fused optimizer kernels (fused_optim.cl), launched by axon_fused_optim
 * (runtime/include/axon/fused_optim.h). See kernel_args.h. The hyper-parameters are the float
 * arguments of aten::_fused_adam_ / _fused_adamw_ / _fused_sgd_ / _fused_adagrad_; the flags say
 * which optional buffers the kernel reads.
 */
#ifndef AXON_FUSED_OPTIM_ARGS_H
#define AXON_FUSED_OPTIM_ARGS_H

#include "kernel_args.h"

typedef struct axon_fused_optim_args {
  axon_real lr;            /* replaced by lr_tensor's value where has_lr_tensor */
  axon_real beta1;         /* Adam(W) */
  axon_real beta2;         /* Adam(W) */
  axon_real weight_decay;  /* all */
  axon_real eps;           /* Adam(W), Adagrad */
  axon_real momentum;      /* SGD */
  axon_real dampening;     /* SGD */
  axon_real lr_decay;      /* Adagrad */
  axon_i32 adamw;          /* Adam: decoupled weight decay (AdamW) */
  axon_i32 amsgrad;        /* Adam(W): keep and use max_exp_avg_sq */
  axon_i32 maximize;       /* all: step along the gradient */
  axon_i32 nesterov;       /* SGD */
  axon_i32 is_first_step;  /* SGD: the momentum buffer starts as the gradient */
  axon_i32 has_lr_tensor;  /* lr is read from a float32 scalar on the device */
  axon_i32 has_grad_scale; /* grads are divided by a float32 scale (and written back unscaled) */
  axon_i32 has_found_inf;  /* a float32 flag on the device: 1 skips the whole step */
} axon_fused_optim_args;
AXON_ARGS_SIZE(axon_fused_optim_args, 16 * 8 + 4 * 8);

#endif
