/* Launches embedding's backward and the embedding bags (kernels/embedding.cl). */
#include "axon/embedding.h"

#include "args_launch.h"

axon_status_t axon_embedding_backward(axon_stream_t stream, axon_dtype dtype,
                                      const axon_embedding_bwd_desc *d) {
  if (!stream || !d)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "embedding_backward: NULL argument");
  if (dtype != AXON_F32 && dtype != AXON_F64 && dtype != AXON_F16 && dtype != AXON_BF16)
    return axon_fail(AXON_ERROR_UNSUPPORTED_DTYPE, "embedding_backward: %s is not supported",
                     axon_dtype_name(dtype));
  if (d->n < 0 || d->dim < 0 || d->num_weights < 0)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "embedding_backward: negative sizes");
  if (d->n == 0 || d->dim == 0) return AXON_SUCCESS;
  if (!d->grad || !d->index || !d->scratch || !d->out)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "embedding_backward: NULL data");
  axon_program_t program;
  AXON_TRY(family_program(stream, "embedding", dtype, &program));
  int is32 = d->index_is_int32, freq = d->scale_by_freq;
  axon_arg links[] = {buffer_arg(d->index), buffer_arg(d->scratch), bytes_arg(&d->n, 8),
                      bytes_arg(&is32, sizeof(int))};
  size_t local = group_size(stream), global = axon_round_up((size_t)d->n, local);
  AXON_TRY(axon_launch(program, "embedding_links", stream, 1, &global, &local, links, 4));
  axon_arg args[] = {buffer_arg(d->grad),           buffer_arg(d->index),
                     buffer_arg(d->scratch),        buffer_arg(d->out),
                     bytes_arg(&d->n, 8),           bytes_arg(&d->dim, 8),
                     bytes_arg(&d->num_weights, 8), bytes_arg(&d->padding_idx, 8),
                     bytes_arg(&freq, sizeof(int)), bytes_arg(&is32, sizeof(int))};
  size_t local2[2] = {1, 64}, global2[2] = {(size_t)d->n, axon_round_up((size_t)d->dim, 64)};
  if (local2[1] > group_size(stream)) local2[1] = group_size(stream);
  global2[1] = axon_round_up((size_t)d->dim, local2[1]);
  return axon_launch(program, "embedding_backward", stream, 2, global2, local2, args, 10);
}

/* ---- embedding bags (axon/embedding.h) ------------------------------------------------------ */

static const args_kernel bag_kernels[] = {
    [AXON_EMBEDDING_BAG_FORWARD] = {"embedding_bag", 0},
    [AXON_EMBEDDING_BAG_OFFSET2BAG] = {"embedding_bag_offset2bag", 0},
    [AXON_EMBEDDING_BAG_ROWS] = {"embedding_bag_rows", 0},
    [AXON_EMBEDDING_BAG_PSW_BACKWARD] = {"embedding_bag_psw_backward", 0},
};

axon_status_t axon_embedding_bag(axon_stream_t stream, axon_dtype dtype,
                                 axon_embedding_bag_kernel kernel,
                                 const axon_embedding_bag_desc *d) {
  const args_kernel *k = ARGS_KERNEL(bag_kernels, kernel);
  if (!k)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "embedding_bag: unknown kernel %d", (int)kernel);
  if (!d) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL descriptor", k->name);
  const axon_embedding_bag_args *a = &d->args;
  if (a->bags < 0 || a->dim < 0 || a->indices < 0)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: negative sizes", k->name);
  switch (kernel) {
    case AXON_EMBEDDING_BAG_FORWARD: {
      const void *b[] = {d->weight, d->indices,  d->offsets,    d->per_sample_weights,
                         d->output, d->bag_size, d->max_indices};
      return args_launch(stream, dtype, "embedding", k, a->bags * a->dim, b, 7, a, sizeof *a);
    }
    case AXON_EMBEDDING_BAG_OFFSET2BAG: {
      const void *b[] = {d->offsets, d->offset2bag};
      return args_launch(stream, dtype, "embedding", k, a->bags > 0 ? a->indices : 0, b, 2, a,
                         sizeof *a);
    }
    case AXON_EMBEDDING_BAG_ROWS: {
      const void *b[] = {d->grad,     d->indices,     d->offset2bag,
                         d->bag_size, d->max_indices, d->per_sample_weights,
                         d->output};
      return args_launch(stream, dtype, "embedding", k, a->indices * a->dim, b, 7, a, sizeof *a);
    }
    case AXON_EMBEDDING_BAG_PSW_BACKWARD: {
      const void *b[] = {d->grad, d->weight, d->indices, d->offset2bag, d->output};
      return args_launch(stream, dtype, "embedding", k, a->indices, b, 5, a, sizeof *a);
    }
  }
  return AXON_SUCCESS;
}
