/* Launches of the kernels that take a typed descriptor (kernels/NAME_args.h): their buffers in
 * kernel order, then the descriptor by value, then the number of work-items (or, for a grouped
 * kernel, of work-groups). Used by the launchers of grid_sample.c, ctc.c, distance.c,
 * margin_loss.c and of the 2-d resampling, embedding bags and fractional pooling. */
#ifndef AXON_ARGS_LAUNCH_H
#define AXON_ARGS_LAUNCH_H

#include "launch_common.h"

#define ARGS_MAX_BUFFERS 10

/* A kernel of a family: its name in kernels/FAMILY.cl and whether it runs a work-group per item
 * (looping inside the group, as CTC's time recursion). Each family keeps a table of these
 * indexed by its kernel enum. */
typedef struct args_kernel {
  const char *name;
  int grouped;
} args_kernel;

static inline int args_float_dtype(axon_dtype dtype) {
  return dtype == AXON_F32 || dtype == AXON_F64 || dtype == AXON_F16 || dtype == AXON_BF16;
}

/* Runs kernel k of `family` over `items`. A NULL buffer (an absent optional tensor, or an empty
 * one) is never read by the kernel; it borrows another buffer's address, since the launch wants
 * one. */
static inline axon_status_t args_launch(axon_stream_t stream, axon_dtype dtype, const char *family,
                                        const args_kernel *k, int64_t items,
                                        const void *const *buffers, int nbuffers, const void *args,
                                        size_t args_size) {
  if (!stream || !args) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL argument", family);
  if (!args_float_dtype(dtype))
    return axon_fail(AXON_ERROR_UNSUPPORTED_DTYPE, "%s: %s is not supported for %s", family,
                     k->name, axon_dtype_name(dtype));
  if (items < 0) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: negative size", k->name);
  if (items == 0) return AXON_SUCCESS;
  if (nbuffers < 1 || nbuffers > ARGS_MAX_BUFFERS)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: %d buffers", k->name, nbuffers);
  const void *any = NULL;
  for (int i = 0; i < nbuffers && !any; i++) any = buffers[i];
  if (!any) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: no buffers", k->name);
  axon_arg a[ARGS_MAX_BUFFERS + 2];
  for (int i = 0; i < nbuffers; i++) a[i] = buffer_arg(buffers[i] ? buffers[i] : any);
  a[nbuffers] = bytes_arg(args, args_size);
  a[nbuffers + 1] = bytes_arg(&items, 8);
  axon_program_t program;
  AXON_TRY(family_program(stream, family, dtype, &program));
  if (!k->grouped) return launch_1d(stream, program, k->name, items, a, nbuffers + 2);
  size_t local = group_size(stream), global = (size_t)items * local;
  return axon_launch(program, k->name, stream, 1, &global, &local, a, nbuffers + 2);
}

/* The kernel of enum value `id` in a family's table, or NULL when out of range. */
#define ARGS_KERNEL(table, id) \
  ((unsigned)(id) < sizeof(table) / sizeof((table)[0]) ? &(table)[id] : NULL)

#endif
