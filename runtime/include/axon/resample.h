/*
 * Axon runtime: 2-d filtered resampling, bicubic and antialiased bilinear (kernels/resample.cl,
 * src/ops/resample.c). Nearest and linear resampling and reflection / replication padding, the
 * rest of the resample family, are axon_resample in axon.h.
 *
 * The forward reads the strided input and writes a contiguous output, a work-item per output
 * element. The backward reads the strided grad_output and scatters into a contiguous
 * zero-filled accumulator of the accumulation type (float for float32, float16 and bfloat16,
 * double for float64, which needs cl_khr_int64_base_atomics) with atomic adds.
 */
#ifndef AXON_RESAMPLE_H
#define AXON_RESAMPLE_H

#include "axon/axon.h"

#include "../../kernels/resample_args.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum axon_resample2d_kernel {
  AXON_RESAMPLE2D_BICUBIC,
  AXON_RESAMPLE2D_BICUBIC_BACKWARD,
  AXON_RESAMPLE2D_AA_BILINEAR,
  AXON_RESAMPLE2D_AA_BILINEAR_BACKWARD
} axon_resample2d_kernel;

typedef struct axon_resample2d_desc {
  axon_resample2d_args args; /* kernels/resample_args.h */
  const void *input;         /* forward: the input; backward: grad_output */
  void *output;              /* forward: the output; backward: the accumulator */
} axon_resample2d_desc;

/* Runs `kernel` over the output elements (args.planes * out_h * out_w). */
AXON_API axon_status_t axon_resample2d(axon_stream_t stream, axon_dtype dtype,
                                       axon_resample2d_kernel kernel,
                                       const axon_resample2d_desc *d);

#ifdef __cplusplus
}
#endif

#endif
