/*
 * Discrete Fourier transforms along the last dimension of [batch, n] complex rows (family
 * "fft", built with -DDT_C64 or -DDT_C128; CT is (real, imaginary), RT a part's type).
 *
 * Lengths that are powers of two: Stockham radix-2 passes, each reading one buffer and writing
 * the other in order (no bit reversal), a work-item per butterfly. Other lengths: Bluestein's
 * algorithm, which turns the transform into a circular convolution of a power-of-two length m
 * >= 2n - 1 with the chirp c_k = exp(sign i pi k^2 / n): X_j = c_j sum_k (x_k c_k) conj(c_{j-k}).
 * sign is -1 for the forward transform, +1 for the inverse (unnormalised in both directions).
 */

inline CT c_mul(CT a, CT b) {
  return (CT)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

/* Angles and twiddle factors in double where the device has it: their rounding is most of a
 * float transform's error (pocketfft, the CPU's library, also computes them in double). */
#ifdef HAS_FP64
typedef double AT;
#else
typedef RT AT;
#endif
#define PI_AT ((AT)3.14159265358979323846)

/* exp(i angle). */
inline CT c_unit(AT angle) {
  AT c;
  AT s = sincos(angle, &c);
  return (CT)((RT)c, (RT)s);
}

/* The chirp exp(sign i pi k^2 / n), with k^2 reduced mod 2n in integers first so that the angle
 * stays small and exact for any k. */
inline CT chirp(long k, long n, int sign) {
  long q = (k * k) % (2 * n);
  return c_unit((AT)sign * PI_AT * (AT)q / (AT)n);
}

/* One radix-2 pass of a length-n transform over rows of `batch`: ns (1, 2, 4 ... n/2) is the
 * size of the sub-transforms already done. Work-item (b, j) for j < n/2. */
KERNEL(fft_radix2_pass)(BUF(src), BUF(dst), long batch, long n, long ns, int sign) {
  long item = get_global_id(0), pairs = n / 2; /* (half is a type name) */
  if (item >= batch * pairs) return;
  long b = item / pairs, j = item - b * pairs, row = b * n;
  long k = j % ns;
  CT twiddle = c_unit((AT)sign * PI_AT * (AT)k / (AT)ns);
  CT v0 = LOAD(PTR(src), row + j);
  CT v1 = c_mul(LOAD(PTR(src), row + j + pairs), twiddle);
  long out = row + (j - k) * 2 + k;
  STORE(PTR(dst), out, v0 + v1);
  STORE(PTR(dst), out + ns, v0 - v1);
}

/* Bluestein, step 1: a[b, k] = x[b, k] c_k for k < n, 0 up to m. */
KERNEL(fft_chirp_in)(BUF(x), BUF(a), long batch, long n, long m, int sign) {
  long item = get_global_id(0);
  if (item >= batch * m) return;
  long b = item / m, k = item - b * m;
  CT v = (CT)((RT)0, (RT)0);
  if (k < n) v = c_mul(LOAD(PTR(x), b * n + k), chirp(k, n, sign));
  STORE(PTR(a), item, v);
}

/* Step 2: the filter conj(c_k) at k and m - k (k < n), 0 between: one row of length m. */
KERNEL(fft_chirp_filter)(BUF(f), long n, long m, int sign) {
  long k = get_global_id(0);
  if (k >= m) return;
  long from = k < n ? k : (m - k < n ? m - k : -1);
  CT v = (CT)((RT)0, (RT)0);
  if (from >= 0) v = chirp(from, n, -sign);
  STORE(PTR(f), k, v);
}

/* Step 3, between the transforms: a[b, k] *= f[k] (f transformed once for every row). */
KERNEL(fft_rows_times)(BUF(a), BUF(f), long batch, long m) {
  long item = get_global_id(0);
  if (item >= batch * m) return;
  long k = item % m;
  STORE(PTR(a), item, c_mul(LOAD(PTR(a), item), LOAD(PTR(f), k)));
}

/* Step 4: y[b, j] = c_j a[b, j] / m (a being the unnormalised inverse transform). */
KERNEL(fft_chirp_out)(BUF(a), BUF(y), long batch, long n, long m, int sign) {
  long item = get_global_id(0);
  if (item >= batch * n) return;
  long b = item / n, j = item - b * n;
  CT v = c_mul(LOAD(PTR(a), b * m + j), chirp(j, n, sign));
  STORE(PTR(y), item, v / (RT)m);
}

/* The full spectrum of a real signal of length n from its first h = n / 2 + 1 terms:
 * X_k = conj(X_{n-k}) above h. */
KERNEL(fft_hermitian_extend)(BUF(src), BUF(dst), long batch, long h, long n) {
  long item = get_global_id(0);
  if (item >= batch * n) return;
  long b = item / n, k = item - b * n;
  CT v;
  if (k < h) {
    v = LOAD(PTR(src), b * h + k);
  } else {
    v = LOAD(PTR(src), b * h + (n - k));
    v.y = -v.y;
  }
  STORE(PTR(dst), item, v);
}
