/* Axon runtime: discrete Fourier transforms (see axon.h for the conventions; kernels/fft.cl,
 * runtime/src/ops/fft.c).
 *
 * Transforms run along the last dimension of contiguous [batch, n] rows of complex64 or
 * complex128 and are unnormalised in both directions (the caller scales). Any length: radix-2
 * passes for powers of two, Bluestein's chirp convolution (three transforms of a power of two
 * m >= 2n - 1) for the others. */
#ifndef AXON_FFT_H
#define AXON_FFT_H

#include "axon/axon.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct axon_fft_desc {
  int64_t batch, n;
  int inverse;    /* exp(+2 pi i jk / n) instead of exp(-2 pi i jk / n) */
  const void *in; /* [batch, n] */
  void *out;      /* [batch, n], not in */
  void *scratch;  /* axon_fft_scratch_elements(batch, n) elements of the same dtype */
} axon_fft_desc;

AXON_API int64_t axon_fft_scratch_elements(int64_t batch, int64_t n);
AXON_API axon_status_t axon_fft(axon_stream_t stream, axon_dtype dtype, const axon_fft_desc *d);
/* The full spectrum of real signals of length n from their first half = n / 2 + 1 terms:
 * dst[b, k] = src[b, k] for k < half, conj(src[b, n - k]) above. src [batch, half], dst
 * [batch, n], both contiguous. */
AXON_API axon_status_t axon_fft_hermitian_extend(axon_stream_t stream, axon_dtype dtype,
                                                 const void *src, void *dst, int64_t batch,
                                                 int64_t half, int64_t n);

#ifdef __cplusplus
}
#endif

#endif
