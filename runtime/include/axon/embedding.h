/*
 * Axon runtime: embedding bags (kernels/embedding.cl, src/ops/embedding.c). Embedding's
 * backward, the rest of the embedding family, is axon_embedding_backward in axon.h.
 */
#ifndef AXON_EMBEDDING_H
#define AXON_EMBEDDING_H

#include "axon/axon.h"

#include "../../kernels/embedding_args.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum axon_embedding_bag_kernel {
  /* weight, indices, offsets, per_sample_weights -> output [bags, dim], bag_size [bags],
   * max_indices [bags, dim] (mode max); a work-item per output element */
  AXON_EMBEDDING_BAG_FORWARD,
  /* offsets -> offset2bag [indices]: the bag of each index position */
  AXON_EMBEDDING_BAG_OFFSET2BAG,
  /* grad, indices, offset2bag, bag_size, max_indices, per_sample_weights -> output [indices,
   * dim]: the gradient row each position gives its weight row (summed by embedding's backward) */
  AXON_EMBEDDING_BAG_ROWS,
  /* grad, weight, indices, offset2bag -> output [indices]: the per-sample weights' gradient */
  AXON_EMBEDDING_BAG_PSW_BACKWARD
} axon_embedding_bag_kernel;

/* Indices and offsets int32 or int64 (args.indices_int32, args.offsets_int32); offset2bag,
 * bag_size and max_indices int64; everything contiguous but the weight (args.weight_strides).
 * per_sample_weights is NULL without them. */
typedef struct axon_embedding_bag_desc {
  axon_embedding_bag_args args; /* kernels/embedding_args.h */
  const void *weight, *indices, *offsets, *per_sample_weights;
  const void *grad; /* backward: the bags' gradient, [bags, dim] */
  void *output;
  void *bag_size, *max_indices, *offset2bag;
} axon_embedding_bag_desc;

AXON_API axon_status_t axon_embedding_bag(axon_stream_t stream, axon_dtype dtype,
                                          axon_embedding_bag_kernel kernel,
                                          const axon_embedding_bag_desc *d);

#ifdef __cplusplus
}
#endif

#endif
