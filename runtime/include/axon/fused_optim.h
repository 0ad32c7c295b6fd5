/* Axon runtime: fused optimizer steps (kernels/fused_optim.cl, runtime/src/ops/fused_optim.c),
 * the work of aten::_fused_adam_, _fused_adamw_, _fused_sgd_ and _fused_adagrad_.
 *
 * One call updates a list of tensors of one dtype (float32, float64 where the device has it,
 * float16, bfloat16) in place: parameters, gradients (unscaled in place when grad_scale is
 * given, as PyTorch's kernels do) and the optimizer's state, which has the parameters' dtype and
 * is computed in float (double for float64), rounded once when stored. Adam's and Adagrad's step
 * counts are float32 scalars on the device, already incremented for this step (torch.optim does
 * that before it calls the fused op); bias corrections are computed from them on the device, in
 * double where the device has cl_khr_fp64 (as PyTorch's CPU kernel does on the host), so the
 * step never waits for the host.
 *
 * Launches: OpenCL 1.2 has no pointers inside buffers, so a kernel cannot read a table of
 * tensor addresses (that needs OpenCL 2.0's shared virtual memory), and a table of sub-buffers
 * would still need a kernel argument per tensor. Each launch instead takes the buffers of a few
 * tensors as kernel arguments (a slot each: parameter, gradient, state buffers, step; SGD and
 * Adagrad AXON_FUSED_OPTIM_SLOTS slots, Adam, with six buffers a slot,
 * AXON_FUSED_OPTIM_ADAM_SLOTS) and their lengths as one int8 argument; work-groups are dealt to
 * the slots in order, each group covering a block of one tensor, so a group finds its slot and
 * its buffers once. A list takes ceil(slots / slots per launch) launches (the 76 tensors of a
 * 20M-parameter GPT: 13 AdamW launches); a tensor longer than 2^30 elements takes several
 * slots. The slot counts keep every kernel's arguments within 1024 bytes (Adam's: 828), the
 * least CL_DEVICE_MAX_PARAMETER_SIZE OpenCL allows, so the same kernels run on PoCL and GPUs. */
#ifndef AXON_FUSED_OPTIM_H
#define AXON_FUSED_OPTIM_H

#include "../../kernels/fused_optim_args.h"
#include "axon/axon.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum axon_fused_optim_kind {
  AXON_FUSED_OPTIM_ADAM,    /* Adam and AdamW (args.adamw) */
  AXON_FUSED_OPTIM_SGD,     /* SGD with optional momentum, dampening, Nesterov */
  AXON_FUSED_OPTIM_ADAGRAD, /* Adagrad with learning-rate decay */
  AXON_FUSED_OPTIM_KIND_COUNT
} axon_fused_optim_kind;

/* Tensors per launch: Adam's slots hold six buffers, SGD's three, Adagrad's four. */
#define AXON_FUSED_OPTIM_SLOTS 8
#define AXON_FUSED_OPTIM_ADAM_SLOTS 6

/* One tensor of the list: contiguous buffers of numel elements of the call's dtype. */
typedef struct axon_fused_optim_tensor {
  void *param;
  void *grad;
  /* Adam: exp_avg, exp_avg_sq, max_exp_avg_sq (amsgrad only, else NULL); SGD: the momentum
   * buffer (NULL when momentum is 0); Adagrad: the state sum. */
  void *state[3];
  const void *step; /* Adam, Adagrad: float32 scalar; SGD: NULL */
  int64_t numel;
} axon_fused_optim_tensor;

/* Scalar tensors on the device, or NULL: lr (float32) replaces args.lr where
 * args.has_lr_tensor; grad_scale and found_inf (float32) as torch.amp.GradScaler gives them. */
typedef struct axon_fused_optim_scalars {
  const void *lr;
  const void *grad_scale;
  const void *found_inf;
} axon_fused_optim_scalars;

/* Applies one step of `kind` to `count` tensors. args' flags has_grad_scale, has_found_inf and
 * has_lr_tensor must match the non-NULL scalars. */
AXON_API axon_status_t axon_fused_optim(axon_stream_t stream, axon_dtype dtype,
                                        axon_fused_optim_kind kind,
                                        const axon_fused_optim_args *args,
                                        const axon_fused_optim_scalars *scalars,
                                        const axon_fused_optim_tensor *tensors, int64_t count);

#ifdef __cplusplus
}
#endif

#endif
