/*
 * Axon runtime: grid sampling, 2-d and 3-d (kernels/grid_sample.cl, src/ops/grid_sample.c).
 * A work-item per (sample, output position), looping over channels. The output, grad_grid and
 * the input-gradient accumulator are contiguous; the input, grid and grad_output strided. The
 * input gradient is scattered with atomic adds into a zero-filled accumulator of the
 * accumulation type (float for float32, float16 and bfloat16, double for float64).
 */
#ifndef AXON_GRID_SAMPLE_H
#define AXON_GRID_SAMPLE_H

#include "axon/axon.h"

#include "../../kernels/grid_sample_args.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum axon_grid_sample_kernel {
  AXON_GRID_SAMPLE_FORWARD,  /* input, grid -> output */
  AXON_GRID_SAMPLE_BACKWARD, /* grad_output, input, grid -> input_grad_acc, grad_grid */
} axon_grid_sample_kernel;

typedef struct axon_grid_sample_desc {
  axon_grid_sample_args args; /* kernels/grid_sample_args.h */
  const void *input, *grid, *grad_output;
  void *output, *input_grad_acc, *grad_grid;
} axon_grid_sample_desc;

/* Runs `kernel` over args.n * (output spatial volume) work-items. */
AXON_API axon_status_t axon_grid_sample(axon_stream_t stream, axon_dtype dtype,
                                        axon_grid_sample_kernel kernel,
                                        const axon_grid_sample_desc *d);

#ifdef __cplusplus
}
#endif

#endif
