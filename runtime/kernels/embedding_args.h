/*
 * The descriptor of the embedding-bag kernels of embedding.cl, launched by axon_embedding_bag
 * (runtime/include/axon/embedding.h). See kernel_args.h.
 */
#ifndef AXON_EMBEDDING_ARGS_H
#define AXON_EMBEDDING_ARGS_H

#include "kernel_args.h"

typedef struct axon_embedding_bag_args {
  axon_i64 bags, dim;
  axon_i64 indices;     /* number of indices */
  axon_i64 offsets;     /* number of offsets given (bags, or bags + 1 with include_last_offset) */
  axon_i64 mode;        /* 0 sum, 1 mean, 2 max */
  axon_i64 padding_idx; /* -1: none */
  axon_i64 has_per_sample_weights;
  axon_i64 indices_int32, offsets_int32; /* else int64 */
  axon_i64 weight_strides[2];            /* (row, column) */
  axon_i64 num_weights;
} axon_embedding_bag_args;
AXON_ARGS_SIZE(axon_embedding_bag_args, 8 * 12);

#endif
