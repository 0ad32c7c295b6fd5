/* Launches the Fourier transforms (kernels/fft.cl): radix-2 Stockham passes for lengths that
 * are powers of two, Bluestein's chirp convolution for the others. */
#include "axon/fft.h"

#include "launch_common.h"

static int is_power_of_two(int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

/* The power of two Bluestein convolves in: at least 2n - 1. */
static int64_t convolution_length(int64_t n) {
  int64_t m = 1;
  while (m < 2 * n - 1) m *= 2;
  return m;
}

int64_t axon_fft_scratch_elements(int64_t batch, int64_t n) {
  if (is_power_of_two(n)) return batch * n;
  return 3 * (batch + 1) * convolution_length(n);
}

static void *at_element(void *base, int64_t k, size_t esize) {
  return (char *)base + (size_t)k * esize;
}

/* out = the unnormalised transforms of in's rows (length n, a power of two); tmp (batch * n
 * elements) holds every other pass. in, out and tmp are three different buffers. */
static axon_status_t radix2(axon_stream_t stream, axon_program_t program, const void *in, void *out,
                            void *tmp, int64_t batch, int64_t n, int sign, size_t esize) {
  int passes = 0;
  while ((INT64_C(1) << passes) < n) passes++;
  if (passes == 0) return axon_copy_d2d(out, in, (size_t)batch * esize, stream);
  const void *src = in;
  for (int p = 0; p < passes; p++) {
    void *dst = (passes - 1 - p) % 2 == 0 ? out : tmp; /* the last pass writes out */
    int64_t ns = INT64_C(1) << p;
    axon_arg args[] = {buffer_arg(src),  buffer_arg(dst),   bytes_arg(&batch, 8),
                       bytes_arg(&n, 8), bytes_arg(&ns, 8), bytes_arg(&sign, sizeof sign)};
    AXON_TRY(launch_1d(stream, program, "fft_radix2_pass", batch * (n / 2), args, 6));
    src = dst;
  }
  return AXON_SUCCESS;
}

static axon_status_t bluestein(axon_stream_t stream, axon_program_t program, const axon_fft_desc *d,
                               size_t esize) {
  int64_t batch = d->batch, n = d->n, m = convolution_length(n), one = 1;
  int sign = d->inverse ? 1 : -1, forward = -1, backward = 1;
  void *a = d->scratch, *b = at_element(a, batch * m, esize), *c = at_element(b, batch * m, esize);
  void *f0 = at_element(c, batch * m, esize), *f = at_element(f0, m, esize);
  void *f1 = at_element(f, m, esize);
  axon_arg in_args[] = {buffer_arg(d->in), buffer_arg(a),    bytes_arg(&batch, 8),
                        bytes_arg(&n, 8),  bytes_arg(&m, 8), bytes_arg(&sign, sizeof sign)};
  AXON_TRY(launch_1d(stream, program, "fft_chirp_in", batch * m, in_args, 6));
  AXON_TRY(radix2(stream, program, a, b, c, batch, m, forward, esize));
  axon_arg filter_args[] = {buffer_arg(f0), bytes_arg(&n, 8), bytes_arg(&m, 8),
                            bytes_arg(&sign, sizeof sign)};
  AXON_TRY(launch_1d(stream, program, "fft_chirp_filter", m, filter_args, 4));
  AXON_TRY(radix2(stream, program, f0, f, f1, one, m, forward, esize));
  axon_arg times_args[] = {buffer_arg(b), buffer_arg(f), bytes_arg(&batch, 8), bytes_arg(&m, 8)};
  AXON_TRY(launch_1d(stream, program, "fft_rows_times", batch * m, times_args, 4));
  AXON_TRY(radix2(stream, program, b, a, c, batch, m, backward, esize));
  axon_arg out_args[] = {buffer_arg(a),    buffer_arg(d->out), bytes_arg(&batch, 8),
                         bytes_arg(&n, 8), bytes_arg(&m, 8),   bytes_arg(&sign, sizeof sign)};
  return launch_1d(stream, program, "fft_chirp_out", batch * n, out_args, 6);
}

static axon_status_t fft_program(axon_stream_t stream, axon_dtype dtype, const char *what,
                                 axon_program_t *program) {
  if (!is_complex_dtype(dtype))
    return axon_fail(AXON_ERROR_UNSUPPORTED_DTYPE, "%s: %s is not a complex dtype", what,
                     axon_dtype_name(dtype));
  return family_program(stream, "fft", dtype, program);
}

axon_status_t axon_fft(axon_stream_t stream, axon_dtype dtype, const axon_fft_desc *d) {
  if (!stream || !d) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "fft: NULL argument");
  if (d->batch < 0 || d->n < 0) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "fft: bad sizes");
  if (d->batch == 0 || d->n == 0) return AXON_SUCCESS;
  if (!d->in || !d->out || !d->scratch || d->in == d->out)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "fft: needs distinct in, out and scratch");
  axon_program_t program;
  AXON_TRY(fft_program(stream, dtype, "fft", &program));
  size_t esize = axon_dtype_size(dtype);
  if (is_power_of_two(d->n))
    return radix2(stream, program, d->in, d->out, d->scratch, d->batch, d->n, d->inverse ? 1 : -1,
                  esize);
  return bluestein(stream, program, d, esize);
}

axon_status_t axon_fft_hermitian_extend(axon_stream_t stream, axon_dtype dtype, const void *src,
                                        void *dst, int64_t batch, int64_t half, int64_t n) {
  if (!stream || !src || !dst || batch < 0 || n < 0 || half != n / 2 + 1)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "fft_hermitian_extend: bad arguments");
  if (batch == 0 || n == 0) return AXON_SUCCESS;
  axon_program_t program;
  AXON_TRY(fft_program(stream, dtype, "fft_hermitian_extend", &program));
  axon_arg args[] = {buffer_arg(src), buffer_arg(dst), bytes_arg(&batch, 8), bytes_arg(&half, 8),
                     bytes_arg(&n, 8)};
  return launch_1d(stream, program, "fft_hermitian_extend", batch * n, args, 5);
}
