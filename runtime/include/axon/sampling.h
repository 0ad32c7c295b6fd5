/*
 * Axon runtime: sampling and the less common neural-network operators (kernels/sampling.cl):
 * bicubic and antialiased bilinear resampling, grid sampling, embedding bags, margin losses,
 * CTC loss, pairwise distances and fractional max pooling. See axon.h for the conventions.
 *
 * These kernels all take a few buffers (device addresses) and one parameter block of integers
 * (sizes, strides, flags) and reals (scales, margins, norms); kernels/sampling.cl documents
 * what each kernel reads from the block. One launcher serves them all. It checks the kernel
 * name and buffer count against its table, so a mismatch fails with a message rather than as a
 * bad launch.
 *
 * Gradients that scatter (resampling, grid sampling) accumulate with atomic adds into a
 * contiguous zero-initialised buffer of the accumulation type: float for float32, float16 and
 * bfloat16, double for float64 (needs cl_khr_int64_base_atomics).
 */
#ifndef AXON_SAMPLING_H
#define AXON_SAMPLING_H

#include "axon/axon.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AXON_SAMPLING_MAX_BUFFERS 10

typedef struct axon_sampling_params {
  int64_t i[32]; /* integer parameters, per kernel */
  double f[4];   /* real parameters, per kernel; float32 kernels see them rounded to float */
} axon_sampling_params;

/* Runs sampling kernel `kernel` over `items` work items (for a grouped kernel, `items`
 * work-groups) with `nbuffers` buffers in kernel order. */
AXON_API axon_status_t axon_sampling_launch(axon_stream_t stream, axon_dtype dtype,
                                            const char *kernel, int64_t items, void *const *buffers,
                                            int nbuffers, const axon_sampling_params *params);

#ifdef __cplusplus
}
#endif

#endif
