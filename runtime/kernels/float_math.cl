/*
 * Float math shared by Axon's elementwise kernels and the kernels torch.compile generates
 * (torch_axon/inductor/): straight-line forms that vectorise where the OpenCL library's do not.
 * Needs nothing from common.cl.
 */

/* erf in float as a rational function of x (odd numerator, even denominator over x^2; the
 * published minimax fit Eigen and XLA use), max error 4.5e-7 on the whole line. PoCL's erf
 * does not vectorise and costs about 14 ns a call on a CPU; this is straight-line code, for a
 * float and for the eight lanes of the vector form. Beyond |x| = 4, erf is +-1 in float. */
#define ERF_FLOAT(T)                                                        \
  inline T __attribute__((overloadable)) erf_float(T a) {                   \
    T x = clamp(a, -4.0f, 4.0f), x2 = x * x; /* clamp turns NaN to -4 */ \
    T p = (T)-2.72614225801306e-10f;                                     \
    p = fma(x2, p, (T)2.77068142495902e-08f);                            \
    p = fma(x2, p, (T)-2.10102402082508e-06f);                           \
    p = fma(x2, p, (T)-5.69250639462346e-05f);                           \
    p = fma(x2, p, (T)-7.34990630326855e-04f);                           \
    p = fma(x2, p, (T)-2.95459980854025e-03f);                           \
    p = fma(x2, p, (T)-1.60960333262415e-02f);                           \
    T q = (T)-1.45660718464996e-05f;                                     \
    q = fma(x2, q, (T)-2.13374055278905e-04f);                           \
    q = fma(x2, q, (T)-1.68282697438203e-03f);                           \
    q = fma(x2, q, (T)-7.37332916720468e-03f);                           \
    q = fma(x2, q, (T)-1.42647390514189e-02f);                           \
    /* below 2^-20, erf x rounds to 2x/sqrt(pi) (and x * p would lose a subnormal's bits) */ \
    return isnan(a) ? a : (fabs(a) < 1e-6f ? a * 1.1283791670955126f : x * p / q);          \
  }
ERF_FLOAT(float)
ERF_FLOAT(float8)
