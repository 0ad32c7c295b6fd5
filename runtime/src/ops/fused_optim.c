/* Launches the fused optimizer kernels (kernels/fused_optim.cl): a list of tensors goes out in
 * launches of up to a kernel's slot count of tensors each (axon/fused_optim.h says why). */
#include "axon/fused_optim.h"

#include "launch_common.h"

/* The walk (FO_UNIT in kernels/fused_optim.cl): GPUs take groups of the usual size with a few
 * units per work-item, neighbours on neighbouring units; CPU devices (PoCL) small groups whose
 * work-items each stream through a run of 128 units (1024 elements). PoCL pays about a
 * microsecond per work-group. Measured on PoCL, 2 cores, AdamW over 20M parameters in 76
 * tensors: groups of 256 with 4 strided units per item 43 ms, groups of 16 with runs of 16 units
 * 27 ms, of 64 to 1024 units 14 to 18 ms (the differences there within the machine's noise). */
#define FO_GPU_ITEMS 4
#define FO_CPU_GROUP 16
#define FO_CPU_ITEMS 128
/* A slot's length is an OpenCL int; longer tensors take several slots. */
#define FO_SLOT_MAX ((int64_t)1 << 30)
#define FO_MAX_BUFFERS 6

typedef struct fo_kernel {
  const char *name;
  int slots;   /* tensors per launch */
  int buffers; /* buffers per slot, in kernel order: param, grad, states, step */
  int states;  /* state buffers per slot */
  int has_step;
} fo_kernel;

static const fo_kernel fo_kernels[AXON_FUSED_OPTIM_KIND_COUNT] = {
    [AXON_FUSED_OPTIM_ADAM] = {"fused_adam", AXON_FUSED_OPTIM_ADAM_SLOTS, 6, 3, 1},
    [AXON_FUSED_OPTIM_SGD] = {"fused_sgd", AXON_FUSED_OPTIM_SLOTS, 3, 1, 0},
    [AXON_FUSED_OPTIM_ADAGRAD] = {"fused_adagrad", AXON_FUSED_OPTIM_SLOTS, 4, 1, 1},
};

/* Whether state buffer s of a tensor is used by this step. */
static int state_used(axon_fused_optim_kind kind, const axon_fused_optim_args *a, int s) {
  switch (kind) {
    case AXON_FUSED_OPTIM_ADAM:
      return s < 2 || a->amsgrad;
    case AXON_FUSED_OPTIM_SGD:
      return a->momentum.f != 0.0f || a->momentum.bits != 0;
    default:
      return 1;
  }
}

static axon_status_t check_tensor(axon_fused_optim_kind kind, const axon_fused_optim_args *a,
                                  const axon_fused_optim_tensor *t, int64_t index) {
  const fo_kernel *k = &fo_kernels[kind];
  if (t->numel < 0)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: tensor %lld: negative size", k->name,
                     (long long)index);
  if (t->numel == 0) return AXON_SUCCESS;
  int missing = !t->param || !t->grad || (k->has_step && !t->step);
  for (int s = 0; s < k->states; s++) missing |= state_used(kind, a, s) && !t->state[s];
  if (missing)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: tensor %lld lacks a buffer its step needs",
                     k->name, (long long)index);
  return AXON_SUCCESS;
}

/* Elements per unit of the kernels (FO_W): eight-element vectors where the dtype has the vector
 * form (VCT in kernels/common.cl), float64 element by element. */
static int fo_width(axon_dtype dtype) {
  return dtype == AXON_F64 ? 1 : 8;
}

/* One launch over the slots gathered so far. */
static axon_status_t fo_launch(axon_stream_t stream, axon_program_t program, const fo_kernel *k,
                               int width, const void *const *buffers, const int32_t *numel,
                               int nslots, const axon_fused_optim_scalars *sc,
                               const axon_fused_optim_args *a) {
  int cpu = stream_info(stream)->is_cpu;
  size_t local = cpu && group_size(stream) >= FO_CPU_GROUP ? FO_CPU_GROUP : group_size(stream);
  int items = cpu ? FO_CPU_ITEMS : FO_GPU_ITEMS;
  int64_t block = (int64_t)local * items, groups = 0;
  for (int s = 0; s < nslots; s++) groups += ((numel[s] + width - 1) / width + block - 1) / block;
  if (groups == 0) return AXON_SUCCESS;
  axon_arg args[AXON_FUSED_OPTIM_SLOTS * FO_MAX_BUFFERS + 8];
  int n = 0;
  for (int i = 0; i < k->slots * k->buffers; i++) args[n++] = buffer_arg(buffers[i]);
  args[n++] = bytes_arg(numel, 8 * sizeof(int32_t)); /* the kernel's int8 */
  args[n++] = bytes_arg(&nslots, sizeof nslots);
  args[n++] = bytes_arg(&items, sizeof items);
  args[n++] = bytes_arg(&cpu, sizeof cpu);
  const void *any = buffers[0];
  args[n++] = buffer_arg(sc->lr ? sc->lr : any);
  args[n++] = buffer_arg(sc->grad_scale ? sc->grad_scale : any);
  args[n++] = buffer_arg(sc->found_inf ? sc->found_inf : any);
  args[n++] = bytes_arg(a, sizeof *a);
  size_t global = (size_t)groups * local;
  return axon_launch(program, k->name, stream, 1, &global, &local, args, n);
}

axon_status_t axon_fused_optim(axon_stream_t stream, axon_dtype dtype, axon_fused_optim_kind kind,
                               const axon_fused_optim_args *args,
                               const axon_fused_optim_scalars *scalars,
                               const axon_fused_optim_tensor *tensors, int64_t count) {
  if (!stream || !args || (count > 0 && !tensors) || count < 0)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "axon_fused_optim: NULL or negative argument");
  if ((unsigned)kind >= AXON_FUSED_OPTIM_KIND_COUNT)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "axon_fused_optim: unknown kind %d", (int)kind);
  const fo_kernel *k = &fo_kernels[kind];
  if (dtype != AXON_F32 && dtype != AXON_F64 && dtype != AXON_F16 && dtype != AXON_BF16)
    return axon_fail(AXON_ERROR_UNSUPPORTED_DTYPE, "%s: %s parameters are not supported", k->name,
                     axon_dtype_name(dtype));
  axon_fused_optim_scalars none = {NULL, NULL, NULL};
  const axon_fused_optim_scalars *sc = scalars ? scalars : &none;
  if (!args->has_lr_tensor != !sc->lr || !args->has_grad_scale != !sc->grad_scale ||
      !args->has_found_inf != !sc->found_inf)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT,
                     "%s: the has_* flags do not match the scalar tensors given", k->name);
  for (int64_t t = 0; t < count; t++) AXON_TRY(check_tensor(kind, args, &tensors[t], t));

  axon_program_t program = NULL;
  size_t esize = axon_dtype_size(dtype);
  const void *buffers[AXON_FUSED_OPTIM_SLOTS * FO_MAX_BUFFERS];
  int32_t numel[8] = {0}; /* the kernel's int8: slots past a kernel's count stay 0 */
  int nslots = 0;
  for (int64_t t = 0; t < count; t++) {
    const axon_fused_optim_tensor *x = &tensors[t];
    for (int64_t off = 0; off < x->numel; off += FO_SLOT_MAX) {
      if (!program) AXON_TRY(family_program(stream, "pointwise_math+fused_optim", dtype, &program));
      int64_t len = x->numel - off < FO_SLOT_MAX ? x->numel - off : FO_SLOT_MAX;
      size_t bytes = (size_t)off * esize;
      const void **b = &buffers[nslots * k->buffers];
      b[0] = (const char *)x->param + bytes;
      b[1] = (const char *)x->grad + bytes;
      for (int s = 0; s < k->states; s++)
        b[2 + s] = state_used(kind, args, s) ? (const char *)x->state[s] + bytes : b[0];
      if (k->has_step) b[2 + k->states] = x->step;
      numel[nslots++] = (int32_t)len;
      if (nslots == k->slots) {
        AXON_TRY(fo_launch(stream, program, k, fo_width(dtype), buffers, numel, nslots, sc, args));
        nslots = 0;
      }
    }
  }
  if (nslots == 0) return AXON_SUCCESS;
  /* Unused slots: no elements, and any valid buffer for their arguments. */
  for (int s = nslots; s < k->slots; s++) {
    numel[s] = 0;
    for (int i = 0; i < k->buffers; i++) buffers[s * k->buffers + i] = buffers[0];
  }
  return fo_launch(stream, program, k, fo_width(dtype), buffers, numel, nslots, sc, args);
}
