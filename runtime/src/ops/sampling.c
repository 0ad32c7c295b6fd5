/* Launches the sampling kernels (kernels/sampling.cl) from a table of names. */
#include "axon/sampling.h"

#include <string.h>

#include "launch_common.h"

/* Mirrors smp_params in kernels/sampling.cl: reals both as float and as double bits, so a
 * program without fp64 never sees a double. */
typedef struct smp_params {
  int64_t i[32];
  float f[4];
  int64_t fd[4];
} smp_params;

/* Grouped kernels run one work-group per item and loop inside it (CTC's time recursion). */
typedef struct sampling_kernel {
  const char *name;
  int nbuffers;
  int grouped;
} sampling_kernel;

static const sampling_kernel kernels[] = {
    {"bicubic2d", 2, 0},
    {"bicubic2d_backward", 2, 0},
    {"aa_bilinear2d", 2, 0},
    {"aa_bilinear2d_backward", 2, 0},
    {"grid_sample", 3, 0},
    {"grid_sample_backward", 5, 0},
    {"embedding_bag", 7, 0},
    {"embedding_bag_offset2bag", 2, 0},
    {"embedding_bag_rows", 7, 0},
    {"embedding_bag_psw_backward", 5, 0},
    {"multi_margin", 4, 0},
    {"multi_margin_backward", 5, 0},
    {"multilabel_margin", 4, 0},
    {"multilabel_margin_backward", 5, 0},
    {"ctc_alpha", 7, 1},
    {"ctc_grad", 10, 0},
    {"pdist", 2, 0},
    {"pdist_backward", 4, 0},
    {"cdist", 3, 0},
    {"cdist_backward", 5, 0},
    {"fractional_max_pool", 4, 0},
};

axon_status_t axon_sampling_launch(axon_stream_t stream, axon_dtype dtype, const char *kernel,
                                   int64_t items, void *const *buffers, int nbuffers,
                                   const axon_sampling_params *params) {
  if (!stream || !kernel || !params || (nbuffers > 0 && !buffers))
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "sampling: NULL argument");
  const sampling_kernel *k = NULL;
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
    if (strcmp(kernels[i].name, kernel) == 0) k = &kernels[i];
  if (!k) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "sampling: unknown kernel %s", kernel);
  if (nbuffers != k->nbuffers)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "sampling: %s takes %d buffers, got %d", kernel,
                     k->nbuffers, nbuffers);
  if (dtype != AXON_F32 && dtype != AXON_F64 && dtype != AXON_F16 && dtype != AXON_BF16)
    return axon_fail(AXON_ERROR_UNSUPPORTED_DTYPE, "sampling: %s is not supported for %s", kernel,
                     axon_dtype_name(dtype));
  if (items < 0)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "sampling: %s: negative size", kernel);
  if (items == 0) return AXON_SUCCESS;
  for (int i = 0; i < nbuffers; i++)
    if (!buffers[i])
      return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "sampling: %s: NULL buffer %d", kernel, i);
  smp_params p;
  memset(&p, 0, sizeof p);
  memcpy(p.i, params->i, sizeof p.i);
  for (int i = 0; i < 4; i++) {
    p.f[i] = (float)params->f[i];
    memcpy(&p.fd[i], &params->f[i], sizeof(double));
  }
  axon_program_t program;
  AXON_TRY(family_program(stream, "sampling", dtype, &program));
  axon_arg args[AXON_SAMPLING_MAX_BUFFERS + 2];
  for (int i = 0; i < nbuffers; i++) args[i] = buffer_arg(buffers[i]);
  args[nbuffers] = bytes_arg(&p, sizeof p);
  args[nbuffers + 1] = bytes_arg(&items, 8);
  if (!k->grouped) return launch_1d(stream, program, kernel, items, args, nbuffers + 2);
  size_t local = group_size(stream), global = (size_t)items * local;
  return axon_launch(program, kernel, stream, 1, &global, &local, args, nbuffers + 2);
}
