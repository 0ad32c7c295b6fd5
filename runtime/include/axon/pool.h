/*
 * Axon runtime: fractional max pooling, 2-d and 3-d (kernels/pool.cl, src/ops/pool.c). The
 * other pooling ops of the pool family are axon_pool / axon_pool_backward in axon.h.
 */
#ifndef AXON_POOL_H
#define AXON_POOL_H

#include "axon/axon.h"

#include "../../kernels/pool_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/* input strided (args.in_strides); samples contiguous [n, c, nd] of the input's dtype, in
 * [0, 1); output and indices (int64, flat within each plane) contiguous [n, c, out...]. */
typedef struct axon_fractional_pool_desc {
  axon_fractional_pool_args args; /* kernels/pool_args.h */
  const void *input, *samples;
  void *output, *indices;
} axon_fractional_pool_desc;

/* A work-item per output element: the maximum of its pseudo-random window, and where it is. */
AXON_API axon_status_t axon_fractional_max_pool(axon_stream_t stream, axon_dtype dtype,
                                                const axon_fractional_pool_desc *d);

#ifdef __cplusplus
}
#endif

#endif
