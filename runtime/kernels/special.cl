/*
 * Special mathematical functions (torch.special and friends): the math of the pointwise
 * table's rows of family "special" (pointwise_ops.def, appended after this file, makes their
 * kernels ew_<name> with the elementwise signature of ew_common.cl). Everything is written generically in the compute
 * type CT (float for float / float16 / bfloat16, double for float64): series and continued
 * fractions run until their terms drop below CT's epsilon, and constants carry double
 * precision. Edge values (poles, infinities, NaN, domain errors) follow PyTorch's CPU results.
 *
 * Methods, by function:
 *   erfinv, ndtri      a rational first guess refined by Halley's method on erf / erfc
 *   erfcx, log_ndtr    erfc with an exactly rounded exp(x^2), an asymptotic series in the tail
 *   digamma            recurrence up to x >= 10, asymptotic (Stirling) series, reflection
 *   polygamma, zeta    Hurwitz zeta by direct summation plus an Euler-Maclaurin tail
 *   I0, I1             power series (all terms positive), Hankel's expansion for large x
 *   K0, K1, Ai (x > 0) the trapezoidal rule on K_nu(x) = int_0^inf exp(-x cosh t) cosh(nu t) dt,
 *                      which converges exponentially because the integrand is analytic in a strip
 *   J0, J1, Y0, Y1     power series for small x, Miller's backward recurrence with Neumann's
 *                      series for Y in the middle, Hankel's expansion for large x
 *   Ai (x < 0)         Taylor steps of Ai'' = x Ai from x = 0, asymptotic expansion far out
 *   igamma, igammac    the series of P(a, x) or the continued fraction of Q(a, x), with a
 *                      Stirling-form prefactor for large a
 *   polynomials        three-term recurrences (trigonometric forms for Chebyshev at large n)
 */

#define PW_IN_elementwise(...)
#define PW_IN_special(...) __VA_ARGS__
#define PW_IN_factory(...)

#ifdef IS_FLOAT
#define HALF ((CT)0.5)
#define PI ((CT)3.14159265358979323846)
#define SQRT_PI ((CT)1.77245385090551602730)
#define SQRT2 ((CT)1.41421356237309504880)
#define SQRT1_2 ((CT)0.70710678118654752440)
#define EULER ((CT)0.57721566490153286061)
#define EPS (sizeof(CT) == 4 ? (CT)5.96e-8 : (CT)1.11e-16)
/* -log(EPS) plus a margin: where an integrand has fallen below EPS of its peak. */
#define LOG_EPS_MARGIN (sizeof(CT) == 4 ? (CT)20 : (CT)40)
/* Above this, Hankel-type asymptotic expansions reach EPS (their smallest term ~ exp(-2x)). */
#define ASYMPTOTIC_X (sizeof(CT) == 4 ? (CT)12 : (CT)25)
#define MAX_ITER 10000

/* ---- error function family ---------------------------------------------------------------- */

/* z >= 0 with erf(z) = x and erfc(z) = y, where x + y = 1 and the smaller of the two is exact.
 * First guess: Giles' single-precision approximation ("Approximating the erfinv function",
 * GPU Computing Gems, 2011) in w = -log(1 - x^2) = -log(y (1 + x)); then Halley steps on erf
 * (x small: keeps z's relative accuracy) or erfc (y small: keeps the tail's). For
 * f(z) = erf(z) - x or erfc(z) - y, f'' = -2 z f', so a Halley step is f / (f' + z f). */
inline CT inv_erf_pair(CT x, CT y) {
  CT w = -log(y * ((CT)1 + x)), p;
  if (w > (CT)25) {
    /* Far tail (beyond the approximation's range): erfc(z) ~ exp(-z^2) / (z sqrt(pi)), so
     * z^2 = -log(y) - log(z sqrt(pi)), iterated twice from z^2 = -log(y). */
    CT ly = -log(y), z = sqrt(ly);
    z = sqrt(ly - log(z * SQRT_PI));
    p = sqrt(ly - log(z * SQRT_PI)) / x;
  } else if (w < (CT)5) {
    w -= (CT)2.5;
    p = (CT)2.81022636e-08;
    p = (CT)3.43273939e-07 + p * w;
    p = (CT)-3.5233877e-06 + p * w;
    p = (CT)-4.39150654e-06 + p * w;
    p = (CT)0.00021858087 + p * w;
    p = (CT)-0.00125372503 + p * w;
    p = (CT)-0.00417768164 + p * w;
    p = (CT)0.246640727 + p * w;
    p = (CT)1.50140941 + p * w;
  } else {
    w = sqrt(w) - (CT)3;
    p = (CT)-0.000200214257;
    p = (CT)0.000100950558 + p * w;
    p = (CT)0.00134934322 + p * w;
    p = (CT)-0.00367342844 + p * w;
    p = (CT)0.00573950773 + p * w;
    p = (CT)-0.0076224613 + p * w;
    p = (CT)0.00943887047 + p * w;
    p = (CT)1.00167406 + p * w;
    p = (CT)2.83297682 + p * w;
  }
  CT z = p * x;
  for (int it = 0; it < 8; it++) {
    CT d = (CT)2 / SQRT_PI * exp(-z * z);
    CT f = x <= HALF ? erf(z) - x : y - erfc(z);
    CT step = f / (d + z * f);
    z -= step;
    if (fabs(step) <= EPS * fabs(z)) break;
  }
  return z;
}

inline CT erfinv_of(CT a) {
  CT x = fabs(a);
  if (isnan(a) || x > 1) return NAN;
  if (x == 1) return copysign((CT)INFINITY, a);
  if (x == 0) return a;
  return copysign(inv_erf_pair(x, (CT)1 - x), a);
}

/* The normal quantile: ndtri(p) = -sqrt(2) erfcinv(2 p). */
inline CT ndtri_of(CT p) {
  if (isnan(p) || p < 0 || p > 1) return NAN;
  if (p == 0) return -INFINITY;
  if (p == 1) return INFINITY;
  if (p == HALF) return 0;
  if (p < HALF) return -SQRT2 * inv_erf_pair((CT)1 - (p + p), p + p);
  CT q = (CT)1 - p;
  return SQRT2 * inv_erf_pair((CT)1 - (q + q), q + q);
}

/* exp(x^2) without the rounding of x^2 in the exponent (which costs x^2 ulps): x = hi + lo
 * with hi on a 1/128 grid, so hi^2 is exact for |x| < 32 and x^2 = hi^2 + lo (x + hi). */
inline CT exp_sq(CT x) {
  CT hi = floor(x * (CT)128) / (CT)128;
  CT lo = x - hi;
  return exp(hi * hi) * exp(lo * (x + hi));
}

/* erfcx(x) = exp(x^2) erfc(x). Large x: the asymptotic series
 * 1 / (x sqrt(pi)) * sum (-1)^n (2n - 1)!! / (2 x^2)^n, whose smallest term is ~exp(-x^2). */
inline CT erfcx_pos(CT x) {
  CT threshold = sizeof(CT) == 4 ? (CT)6 : (CT)12;
  if (x < threshold) return exp_sq(x) * erfc(x);
  CT r = HALF / (x * x), term = 1, sum = 1;
  for (int n = 1; n < 100; n++) {
    term *= -(CT)(2 * n - 1) * r;
    if (fabs(term) < EPS) break;
    sum += term;
  }
  return sum / (x * SQRT_PI);
}
/* Below 0, erfcx(x) = 2 exp(x^2) - erfcx(-x); exp(x * x) rounds as the CPU's does, whose
 * results near overflow differ from the exact ones by x^2 ulps. */
inline CT erfcx_of(CT x) {
  if (isnan(x)) return x;
  if (x >= 0) return erfcx_pos(x);
  return (CT)2 * exp(x * x) - erfcx_pos(-x);
}

/* log of the normal CDF; the lower tail through erfcx keeps its exp(-x^2 / 2) out of range. */
inline CT log_ndtr_of(CT x) {
  CT t = x * SQRT1_2;
  if (x < -1) {
    CT u = -t;
    return log(erfcx_pos(u) * HALF) - u * u;
  }
  return x > 0 ? log1p(-HALF * erfc(t)) : log(HALF * erfc(-t));
}

/* ---- gamma family ------------------------------------------------------------------------- */

/* digamma: shift x up to 10 (psi(x) = psi(x + 1) - 1 / x), then
 * psi(x) ~ log x - 1 / (2x) - sum B_2k / (2k x^2k); reflection below 0. */
inline CT digamma_pos(CT x) {
  CT acc = 0;
  while (x < (CT)10) {
    acc -= (CT)1 / x;
    x += 1;
  }
  CT r = (CT)1 / (x * x);
  CT series =
      r * ((CT)1 / 12 -
           r * ((CT)1 / 120 -
                r * ((CT)1 / 252 -
                     r * ((CT)1 / 240 -
                          r * ((CT)1 / 132 - r * ((CT)691 / 32760 - r * ((CT)1 / 12)))))));
  return acc + log(x) - HALF / x - series;
}
inline CT digamma_of(CT x) {
  if (x == 0) return copysign((CT)INFINITY, -x);
  if (x < 0) {
    CT r = x - trunc(x);
    if (r == 0) return NAN;
    /* As on the CPU: float gets pi / tan(pi r) accurately (the CPU computes it in double),
     * double rounds pi * r first, which matters right next to the poles. */
    CT reflection = sizeof(CT) == 4 ? PI / tanpi(r) : PI / tan(PI * r);
    return digamma_pos((CT)1 - x) - reflection;
  }
  return digamma_pos(x);
}

/* B_2j / (2j)!, j = 1..12: the Euler-Maclaurin coefficients. */
__constant CT EM_COEF[12] = {
    (CT)(1.0 / 12.0),
    (CT)(-1.0 / 720.0),
    (CT)(1.0 / 30240.0),
    (CT)(-1.0 / 1209600.0),
    (CT)(1.0 / 47900160.0),
    (CT)(-691.0 / 1307674368000.0),
    (CT)(1.0 / 74724249600.0),
    (CT)(-3617.0 / 10670622842880000.0),
    (CT)(43867.0 / 5109094217170944000.0),
    (CT)(-174611.0 / 802857662698291200000.0),
    (CT)(854513.0 / 155112100433309859840000.0),
    (CT)(-236364091.0 / 1693824136731743669452800000.0),
};

/* Hurwitz zeta(s, q) = sum_k (q + k)^-s for q > 0: direct terms until q + k >= 9, then the tail
 * sum_{k>=0} f(w + k) = w^(1-s) / (s - 1) + f(w) / 2 + sum_j B_2j / (2j)! s (s+1) ... (s+2j-2)
 * w^(-s-2j+1). */
inline CT zeta_pos(CT s, CT q) {
  CT sum = 0, a = q;
  for (int k = 0; k < 9 || a < (CT)9; k++) {
    CT t = pow(a, -s);
    sum += t;
    a += 1;
    if (fabs(t) < EPS * fabs(sum)) return sum;
  }
  CT w = a, t0 = pow(w, -s);
  sum += t0 * w / (s - 1) + HALF * t0;
  CT fac = s, wp = t0 / w;
  for (int j = 0; j < 12; j++) {
    CT term = EM_COEF[j] * fac * wp;
    sum += term;
    if (fabs(term) < EPS * fabs(sum)) break;
    fac *= (s + (CT)(2 * j + 1)) * (s + (CT)(2 * j + 2));
    wp /= w * w;
  }
  return sum;
}

/* For s = n + 1 <= REFLECT_MAX_S, zeta(s, q) at negative q by the reflection of polygamma,
 * psi^(n)(q) = (-1)^n psi^(n)(1 - q) - pi d^n/dq^n cot(pi q), in zeta's terms
 * zeta(s, q) = (-1)^n [zeta(s, 1 - q) + pi^s Q_n(cot(pi q))], where Q_n = P_n / n! and
 * d^n/dq^n cot(pi q) = pi^n P_n(cot(pi q)): P_0 = c, P_(k+1) = -(1 + c^2) P_k'(c). The cotangent
 * comes from q's fraction by sinpi and cospi, exact at halves, where the pairs below cancel. */
#define REFLECT_MAX_S 40
inline CT zeta_reflected(CT s, CT q) {
  int n = (int)s - 1;
  CT coef[REFLECT_MAX_S + 1] = {0}; /* Q_k's coefficients of c^0 .. c^(k+1) */
  coef[1] = 1;
  for (int k = 0; k < n; k++) {
    /* Q_(k+1) = -(1 + c^2) Q_k' / (k + 1): c^j of Q_k goes to c^(j-1) and c^(j+1). */
    CT next[REFLECT_MAX_S + 1] = {0};
    for (int j = 1; j <= k + 1; j++) {
      CT d = -(CT)j * coef[j] / (CT)(k + 1);
      next[j - 1] += d;
      next[j + 1] += d;
    }
    for (int j = 0; j <= k + 2; j++) coef[j] = next[j];
  }
  CT f = q - floor(q), c = cospi(f) / sinpi(f), poly = 0;
  for (int j = n + 1; j >= 0; j--) poly = poly * c + coef[j];
  CT r = zeta_pos(s, (CT)1 - q) + pown(PI, n + 1) * poly;
  return (n & 1) ? -r : r;
}

/* A negative q is allowed for integer s (PyTorch's polygamma relies on it). Near zero, with
 * q = -m + f, 0 < f < 1, the m negative terms pair up with the first positive ones:
 * zeta(s, q) = sum_{i<m} [(f + i)^-s + (-1)^s (1 - f + i)^-s] + zeta(s, f + m), so terms that
 * cancel (f = 1/2, odd s) cancel exactly instead of leaving rounding noise. Further out the sum
 * would take m steps (PyTorch's CPU takes them: hours at q = -1e15), so the reflection above
 * answers; past its s, the pairs fall so fast that a few of them are the sum. */
inline CT zeta_of(CT s, CT q) {
  /* The order of these checks decides the NaN cases, as on the CPU (zeta(1, nan) = inf). */
  if (s == 1) return INFINITY;
  if (s < 1) return NAN;
  if (q > 0) return zeta_pos(s, q);
  if (q == floor(q)) return INFINITY;
  if (s != floor(s)) return NAN;
  CT m = -floor(q), sum = 0, lost = 0;
  if (m > 16 && s <= REFLECT_MAX_S) return zeta_reflected(s, q);
  /* (-1)^s; an infinite s counts as even (pow(negative, -inf) is +inf or 0). */
  CT sign = isinf(s) || fmod(s, (CT)2) == 0 ? (CT)1 : (CT)-1;
  /* Both bases straight from q: q + m would round away q's low bits. Neumaier's compensation
   * keeps what each addition rounds away. */
  for (CT i = 0; i < m; i += 1) {
    CT term = pow(q + (m + i), -s) + sign * pow(-(q + (m - 1 - i)), -s), next = sum + term;
    lost += fabs(sum) >= fabs(term) ? (sum - next) + term : (term - next) + sum;
    sum = next;
    /* Past REFLECT_MAX_S the other pairs (under 2 i^(1-s) / (s - 1)) are below EPS^2 of the
     * sum, or cancel exactly as these did. */
    if (m > 16 && fabs(term) <= EPS * EPS * fabs(sum)) break;
  }
  /* An infinite term made the compensation NaN; the infinity is the answer then. */
  return isinf(sum) ? sum : (sum + lost) + zeta_pos(s, q + 2 * m);
}

/* trigamma = zeta(2, x), with the reflection psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x) below
 * 1/2. sin(pi x) is evaluated as PyTorch does (pi rounded to CT), so negative integers give the
 * same huge finite values as on the CPU. */
inline CT trigamma_of(CT x) {
  if (x == INFINITY) return 0;
  if (x < HALF) {
    CT s = sin(PI * x);
    return PI * PI / (s * s) - zeta_of((CT)2, (CT)1 - x);
  }
  return zeta_of((CT)2, x);
}

/* polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 2. */
inline CT polygamma_of(int n, CT x) {
  if (n == 0) return digamma_of(x);
  if (n == 1) return trigamma_of(x);
  CT fact = 1;
  for (int k = 2; k <= n; k++) fact *= (CT)k;
  return ((n & 1) ? fact : -fact) * zeta_of((CT)(n + 1), x);
}

/* log(1 + t) - t without cancellation for small t: with u = t / (2 + t),
 * log(1 + t) = 2 atanh(u), so log(1 + t) - t = -t^2 / (2 + t) + 2 (u^3/3 + u^5/5 + ...). */
inline CT log1pmx(CT t) {
  if (fabs(t) > HALF) return log1p(t) - t;
  CT u = t / (2 + t), u2 = u * u, p = u * u2, sum = 0;
  for (int k = 3; k < 200; k += 2) {
    CT term = p / (CT)k;
    sum += term;
    if (fabs(term) <= EPS * fabs(sum)) break;
    p *= u2;
  }
  return -t * t / (2 + t) + 2 * sum;
}

/* x^a e^-x / Gamma(a). For large a, a log x - x - lgamma(a) cancels badly (each term ~a log a);
 * Stirling's Gamma(a) = sqrt(2 pi / a) (a/e)^a exp(1/(12a) - 1/(360a^3) + ...) turns it into
 * sqrt(a / (2 pi)) exp(a (log(1 + t) - t) - correction) with t = (x - a) / a. */
inline CT igamma_prefactor(CT a, CT x) {
  if (a < 10) return exp(a * log(x) - x - lgamma(a));
  CT r = (CT)1 / a, r2 = r * r;
  CT correction = r * ((CT)1 / 12 - r2 * ((CT)1 / 360 - r2 * ((CT)1 / 1260 - r2 * ((CT)1 / 1680))));
  return sqrt(a / (2 * PI)) * exp(a * log1pmx((x - a) / a) - correction);
}

/* Regularized incomplete gamma functions P(a, x) (upper = 0) and Q(a, x) (upper = 1). The
 * prefactor is x^a e^-x / Gamma(a); below x = a + 1 the series
 * P = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n)), above it the continued
 * fraction of Q (modified Lentz), each giving the other as its complement. */
inline CT igamma_of(CT a, CT x, int upper) {
  /* In the CPU's order, which decides the NaN cases (igamma(nan, 0) = 0). */
  if (a < 0 || x < 0) return NAN;
  if (a == 0) return x > 0 ? (CT)(1 - upper) : NAN;
  if (x == 0) return (CT)upper;
  if (isinf(a)) return isinf(x) ? NAN : (CT)upper;
  if (isinf(x)) return (CT)(1 - upper);
  if (isnan(a) || isnan(x)) return NAN;
  CT pre = igamma_prefactor(a, x);
  if (x < a + 1) {
    CT term = (CT)1 / a, sum = term, ap = a;
    for (int n = 0; n < MAX_ITER; n++) {
      ap += 1;
      term *= x / ap;
      sum += term;
      if (fabs(term) < EPS * fabs(sum)) break;
    }
    CT p = pre * sum;
    return upper ? (CT)1 - p : p;
  }
  CT tiny = sizeof(CT) == 4 ? (CT)1e-30 : (CT)1e-300;
  CT b = x + 1 - a, c = (CT)1 / tiny, d = (CT)1 / b, h = d;
  for (int i = 1; i < MAX_ITER; i++) {
    CT an = -(CT)i * ((CT)i - a);
    b += 2;
    d = an * d + b;
    if (fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (fabs(c) < tiny) c = tiny;
    d = (CT)1 / d;
    CT delta = d * c;
    h *= delta;
    if (fabs(delta - 1) < EPS) break;
  }
  CT q = pre * h;
  return upper ? q : (CT)1 - q;
}

/* ---- Bessel functions --------------------------------------------------------------------- */

/* e^-x I_n(x) for n = 0, 1 and x >= 0. Small x: the power series
 * (x/2)^n sum_k (x^2/4)^k / (k! (k + n)!) (positive terms, no cancellation). Large x:
 * e^-x I_n(x) ~ (2 pi x)^-1/2 sum_k (-1)^k a_k(n) / x^k, a_k = prod_j (4n^2 - (2j-1)^2) / (k! 8^k). */
inline CT bessel_i_series(int n, CT x) {
  CT q = x * x / 4, term = n ? x * HALF : (CT)1, sum = term;
  for (int k = 1; k < MAX_ITER; k++) {
    term *= q / ((CT)k * (CT)(k + n));
    sum += term;
    if (term <= EPS * sum) break;
  }
  return sum;
}
inline CT bessel_i_asymptotic(int n, CT x) {
  CT mu = (CT)(4 * n * n), term = 1, sum = 1;
  for (int k = 1; k < 200; k++) {
    CT odd = (CT)(2 * k - 1);
    CT next = -term * (mu - odd * odd) / ((CT)(8 * k) * x);
    if (fabs(next) < EPS * fabs(sum) || fabs(next) > fabs(term)) break;
    term = next;
    sum += term;
  }
  /* 2 pi x overflows float past 5.4e37, where the result is still 2e-20: the roots apart. */
  return sum / (sqrt(x) * sqrt(2 * PI));
}
/* I_n(|x|), or e^-|x| I_n(|x|) when scaled. I_0 and I_1 at infinity are NaN on the CPU. */
inline CT bessel_i(int n, CT x, int scaled) {
  CT ax = fabs(x);
  if (isnan(x) || (isinf(x) && !scaled)) return NAN;
  CT r;
  if (ax > ASYMPTOTIC_X) {
    r = bessel_i_asymptotic(n, ax);
    if (!scaled) r *= exp(ax); /* overflows where the CPU's does, a little before I_n(x) */
  } else {
    r = bessel_i_series(n, ax);
    if (scaled) r *= exp(-ax);
  }
  return n && x < 0 ? -r : r;
}

/* e^x K_nu(x) for x > 0 by the trapezoidal rule with step h on
 * int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt. The integrand is analytic in a strip, so the
 * error falls like exp(-pi^2 / h) (small x) or exp(-2 pi^2 / (h^2 x)) (large x); h = 0.2 and
 * h = 0.6 / sqrt(x) put both below 1e-20. The sum stops once the integrand is below EPS. */
inline CT bessel_k_scaled(CT nu, CT x) {
  CT h = min((CT)0.2, (CT)0.6 / sqrt(x));
  CT sum = HALF;
  for (int k = 1; k < MAX_ITER; k++) {
    CT t = (CT)k * h, s = sinh(t * HALF);
    CT e = 2 * x * s * s; /* x (cosh t - 1) */
    sum += HALF * (exp(nu * t - e) + exp(-nu * t - e));
    if (e - nu * t > LOG_EPS_MARGIN) break;
  }
  return h * sum;
}
inline CT bessel_k(int n, CT x, int scaled) {
  if (isnan(x) || x < 0) return NAN;
  if (x == 0) return INFINITY;
  if (isinf(x)) return 0;
  CT r = bessel_k_scaled((CT)n, x);
  return scaled ? r : r * exp(-x);
}

/* J_n and Y_n (n = 0, 1) at x > 0. */
/* Power series: J_n = (x/2)^n sum (-x^2/4)^k / (k! (k+n)!);
 * Y_0 = (2/pi) [(log(x/2) + gamma) J_0 + sum_{k>=1} (-1)^(k+1) H_k (x^2/4)^k / (k!)^2];
 * Y_1 = -2 / (pi x) + (2/pi) log(x/2) J_1 - (x / (2 pi)) sum (psi(k+1) + psi(k+2)) (-x^2/4)^k / (k! (k+1)!). */
inline CT bessel_jy_series(int n, int want_y, CT x) {
  CT q = -x * x / 4, term = n ? x * HALF : (CT)1, j = term;
  CT harmonic = 0, ysum = 0;
  /* psi(k+1) + psi(k+2) at k = 0: -2 gamma + 1 */
  CT psi_sum = -2 * EULER + 1, ysum1 = psi_sum;
  CT t1 = 1; /* (-x^2/4)^k / (k! (k+1)!) */
  for (int k = 1; k < 200; k++) {
    term *= q / ((CT)k * (CT)(k + n));
    j += term;
    harmonic += (CT)1 / (CT)k;
    if (n == 0) {
      ysum -= harmonic * term; /* (-1)^(k+1) H_k (x^2/4)^k / (k!)^2 = -H_k term */
    } else {
      t1 *= q / ((CT)k * (CT)(k + 1));
      psi_sum += (CT)1 / (CT)k + (CT)1 / (CT)(k + 1);
      ysum1 += psi_sum * t1;
    }
    /* past EPS with a margin: the Y sums (terms weighted by H_k) converge a little later */
    if (fabs(term) < EPS * fabs(j) * (CT)1e-3) break;
  }
  if (!want_y) return j;
  CT lg = log(x * HALF);
  if (n == 0) return (CT)2 / PI * ((lg + EULER) * j + ysum);
  return -(CT)2 / (PI * x) + (CT)2 / PI * lg * j - x / (2 * PI) * ysum1;
}

/* Miller's method: J_{m-1} = (2m / x) J_m - J_{m+1} downward from an order where J_m is
 * negligible, normalized by J_0 + 2 sum J_2k = 1. Neumann's series give Y from the same values:
 * (pi/2) Y_0 = (log(x/2) + gamma) J_0 - 2 sum_{k>=1} (-1)^k J_2k / k and, differentiating,
 * (pi/2) Y_1 = (log(x/2) + gamma) J_1 - J_0 / x + sum_{k>=1} (-1)^k (J_{2k-1} - J_{2k+1}) / k. */
inline CT bessel_jy_miller(int n, int want_y, CT x) {
  int top = 2 * (int)((x + 40) / 2);
  CT next = 0, cur = sizeof(CT) == 4 ? (CT)1e-20 : (CT)1e-200; /* J_{m+1}, J_m */
  CT norm = 0, sy0 = 0, sy1 = 0;
  for (int m = top; m >= 1; m--) {
    CT prev = (CT)(2 * m) / x * cur - next; /* J_{m-1} */
    if ((m & 1) == 0) {
      int k = m / 2;
      CT sign = (k & 1) ? (CT)-1 : (CT)1;
      norm += 2 * cur;
      sy0 += sign * cur / (CT)k;
      sy1 += sign * (prev - next) / (CT)k;
    }
    next = cur;
    cur = prev;
    if (fabs(cur) > (CT)1e15) { /* rescale everything to stay in range */
      cur *= (CT)1e-15;
      next *= (CT)1e-15;
      norm *= (CT)1e-15;
      sy0 *= (CT)1e-15;
      sy1 *= (CT)1e-15;
    }
  }
  norm += cur;
  CT j0 = cur / norm, j1 = next / norm;
  if (!want_y) return n ? j1 : j0;
  CT lg = log(x * HALF) + EULER;
  if (n == 0) return (CT)2 / PI * (lg * j0 - 2 * sy0 / norm);
  return (CT)2 / PI * (lg * j1 - j0 / x + sy1 / norm);
}

/* Hankel's expansion: J = sqrt(2 / (pi x)) (P cos chi - Q sin chi),
 * Y = sqrt(2 / (pi x)) (P sin chi + Q cos chi), chi = x - (n/2 + 1/4) pi. */
inline CT bessel_jy_asymptotic(int n, int want_y, CT x) {
  CT mu = (CT)(4 * n * n), term = 1, p = 1, q = 0;
  for (int k = 1; k < 200; k++) {
    CT odd = (CT)(2 * k - 1);
    CT next = term * (mu - odd * odd) / ((CT)(8 * k) * x);
    if (fabs(next) < EPS || fabs(next) > fabs(term)) break;
    term = next;
    /* k = 1, 2, 3, 4 ... adds +Q, -P, -Q, +P ... */
    CT sign = ((k / 2) & 1) ? (CT)-1 : (CT)1;
    if (k & 1)
      q += sign * term;
    else
      p += sign * term;
  }
  CT s = sin(x), c = cos(x);
  /* chi = x - pi/4 (n = 0) or x - 3 pi / 4 (n = 1) */
  CT cos_chi = n ? (s - c) * SQRT1_2 : (c + s) * SQRT1_2;
  CT sin_chi = n ? -(s + c) * SQRT1_2 : (s - c) * SQRT1_2;
  CT scale = sqrt((CT)2 / (PI * x));
  return want_y ? scale * (p * sin_chi + q * cos_chi) : scale * (p * cos_chi - q * sin_chi);
}

inline CT bessel_jy_pos(int n, int want_y, CT x) {
  if (x < 2) return bessel_jy_series(n, want_y, x);
  if (x <= ASYMPTOTIC_X) return bessel_jy_miller(n, want_y, x);
  return bessel_jy_asymptotic(n, want_y, x);
}
inline CT bessel_j(int n, CT x) {
  if (isnan(x) || isinf(x)) return NAN;
  if (x == 0) return n ? x : (CT)1;
  CT r = bessel_jy_pos(n, 0, fabs(x));
  return n && x < 0 ? -r : r;
}
inline CT bessel_y(int n, CT x) {
  if (isnan(x) || isinf(x) || x < 0) return NAN;
  if (x == 0) return -INFINITY;
  return bessel_jy_pos(n, 1, x);
}

/* ---- Airy Ai ---------------------------------------------------------------------------- */

#define AI0 ((CT)0.35502805388781723926)
#define AIP0 ((CT)-0.25881940379280679840)

/* (Ai, Ai') at x0 + h from their values at x0, by the Taylor series of Ai'' = x Ai:
 * c_{k+2} = (x0 c_k + c_{k-1}) / ((k+2)(k+1)); d_k = c_k h^k. */
inline void airy_step(CT x0, CT h, CT *y, CT *yp) {
  CT d_prev = 0, d0 = *y, d1 = *yp * h; /* d_{k-1}, d_k, d_{k+1} at k = 0 */
  CT sum = d0 + d1, dsum = d1;
  for (int k = 0; k < 200; k++) {
    CT d2 = (x0 * d0 * h * h + d_prev * h * h * h) / ((CT)(k + 2) * (CT)(k + 1));
    sum += d2;
    dsum += (CT)(k + 2) * d2;
    d_prev = d0;
    d0 = d1;
    d1 = d2;
    /* two consecutive terms negligible, with a margin: the steps' errors add up */
    if (fabs(d0) + fabs(d1) < EPS * (fabs(sum) + fabs(dsum)) * (CT)1e-2) break;
  }
  *y = sum;
  *yp = dsum / h;
}

inline CT airy_ai_of(CT x) {
  if (isnan(x) || isinf(x)) return NAN;
  if (x >= 1) {
    /* Ai(x) = (1/pi) sqrt(x/3) K_1/3(zeta), zeta = (2/3) x^(3/2) */
    CT zeta = (CT)2 / 3 * x * sqrt(x);
    return sqrt(x / 3) / PI * exp(-zeta) * bessel_k_scaled((CT)1 / 3, zeta);
  }
  CT far = sizeof(CT) == 4 ? (CT)6.1 : (CT)9.7; /* zeta >= 10 or 20 */
  if (x > -far) {
    int steps = (int)ceil(-x);
    if (steps < 1) steps = 1;
    CT h = x / (CT)steps, y = AI0, yp = AIP0, x0 = 0;
    for (int i = 0; i < steps; i++) {
      airy_step(x0, h, &y, &yp);
      x0 += h;
    }
    return y;
  }
  /* Ai(-z) ~ pi^-1/2 z^-1/4 [sin(zeta + pi/4) P - cos(zeta + pi/4) Q],
   * P = sum (-1)^k u_2k zeta^-2k, Q = sum (-1)^k u_2k+1 zeta^-(2k+1),
   * u_k = u_{k-1} (6k-5)(6k-3)(6k-1) / (216 k (2k-1)). */
  CT z = -x, zeta = (CT)2 / 3 * z * sqrt(z);
  CT term = 1, p = 1, q = 0;
  for (int k = 1; k < 200; k++) {
    CT next = term * (CT)(6 * k - 5) * (CT)(6 * k - 3) * (CT)(6 * k - 1) /
              ((CT)(216 * k) * (CT)(2 * k - 1) * zeta);
    if (fabs(next) < EPS || fabs(next) > fabs(term)) break;
    term = next;
    CT sign = ((k / 2) & 1) ? (CT)-1 : (CT)1;
    if (k & 1)
      q += sign * term;
    else
      p += sign * term;
  }
  CT s = sin(zeta), c = cos(zeta);
  CT sin_phase = (s + c) * SQRT1_2, cos_phase = (c - s) * SQRT1_2;
  return (sin_phase * p - cos_phase * q) / (SQRT_PI * sqrt(sqrt(z)));
}

/* ---- orthogonal polynomials --------------------------------------------------------------- */
/* n is the second input, truncated to an integer as PyTorch does; negative n gives 0. */

/* p_{k+1} = 2 x p_k - p_{k-1} from p_0 = 1 and p_1: Chebyshev T, U, V, W. */
inline CT chebyshev_recurrence(CT x, long n, CT p1) {
  if (n == 0) return 1;
  CT p = 1, q = p1;
  for (long k = 1; k < n; k++) {
    CT r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return q;
}
/* At |x| = 1 the values are known in closed form; for larger n inside (-1, 1) the
 * trigonometric forms are used (as PyTorch does), with theta = acos(x). */
inline CT chebyshev_t_of(CT x, long n) {
  if (n < 0) return 0;
  if (fabs(x) == 1) return (x > 0 || (n & 1) == 0) ? (CT)1 : (CT)-1;
  if (n > 6 && fabs(x) < 1) return cos((CT)n * acos(x));
  return chebyshev_recurrence(x, n, x);
}
inline CT chebyshev_u_of(CT x, long n) {
  if (n < 0) return 0;
  if (fabs(x) == 1) return (x > 0 || (n & 1) == 0) ? (CT)(n + 1) : -(CT)(n + 1);
  if (n > 8 && fabs(x) < 1) {
    CT theta = acos(x);
    return sin((CT)(n + 1) * theta) / sin(theta);
  }
  return chebyshev_recurrence(x, n, x + x);
}
inline CT chebyshev_v_of(CT x, long n) {
  if (n < 0) return 0;
  if (fabs(x) == 1) {
    if (x > 0) return 1;
    return (n & 1) == 0 ? (CT)(n + n + 1) : -(CT)(n + n + 1);
  }
  if (n > 8 && fabs(x) < 1) {
    CT theta = acos(x);
    return cos(((CT)n + HALF) * theta) / cos(theta * HALF);
  }
  return chebyshev_recurrence(x, n, x + x - 1);
}
inline CT chebyshev_w_of(CT x, long n) {
  if (n < 0) return 0;
  if (fabs(x) == 1) {
    if (x > 0) return (CT)(n + n + 1);
    return (n & 1) == 0 ? (CT)1 : (CT)-1;
  }
  if (n > 8 && fabs(x) < 1) {
    CT theta = acos(x);
    return sin(((CT)n + HALF) * theta) / sin(theta * HALF);
  }
  return chebyshev_recurrence(x, n, x + x + 1);
}

/* Physicists' Hermite: H_{k+1} = 2x H_k - 2k H_{k-1}; probabilists': He_{k+1} = x He_k - k He_{k-1}. */
inline CT hermite_of(CT x, long n, CT scale) {
  if (n < 0) return 0;
  if (n == 0) return 1;
  CT p = 1, q = scale * x;
  for (long k = 1; k < n; k++) {
    CT r = scale * (x * q - (CT)k * p);
    p = q;
    q = r;
  }
  return q;
}

/* Laguerre: (k+1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}. */
inline CT laguerre_of(CT x, long n) {
  if (n < 0) return 0;
  if (n == 0 || x == 0) return 1;
  CT p = 1, q = 1 - x;
  for (long k = 1; k < n; k++) {
    CT r = (((CT)(2 * k + 1) - x) * q - (CT)k * p) / (CT)(k + 1);
    p = q;
    q = r;
  }
  return q;
}

/* Legendre: (k+1) P_{k+1} = (2k + 1) x P_k - k P_{k-1}. */
inline CT legendre_of(CT x, long n) {
  if (n < 0) return 0;
  if (fabs(x) == 1) return (x > 0 || (n & 1) == 0) ? (CT)1 : (CT)-1;
  if (n == 0) return 1;
  CT p = 1, q = x;
  for (long k = 1; k < n; k++) {
    CT r = ((CT)(2 * k + 1) * x * q - (CT)k * p) / (CT)(k + 1);
    p = q;
    q = r;
  }
  return q;
}

/* ---- kernels ------------------------------------------------------------------------------ */

inline CT sinc_of(CT a) {
  if (a == 0) return 1;
  CT t = PI * a;
  return sin(t) / t;
}
inline CT entr_of(CT a) {
  if (isnan(a)) return a;
  if (a > 0) return -a * log(a);
  return a == 0 ? (CT)0 : -INFINITY;
}
inline CT spherical_j0_of(CT a) {
  if (isinf(a)) return 0;
  if (fabs(a) < HALF) { /* sin(x)/x = sum (-x^2)^k / (2k+1)! */
    CT q = -a * a, term = 1, sum = 1;
    for (int k = 1; k < 20; k++) {
      term *= q / ((CT)(2 * k) * (CT)(2 * k + 1));
      sum += term;
      if (fabs(term) < EPS) break;
    }
    return sum;
  }
  return sin(a) / a;
}

/* ---- the ops' math (kernels come from the pointwise table's rows of family "special";
 * torch.compile's kernels call these macros too, in float) ---------------------------------- */
#define PW_FLOAT_erfc(T, a, b, c, alpha, beta) erfc(a)
#define PW_FLOAT_erfinv(T, a, b, c, alpha, beta) erfinv_of(a)
#define PW_FLOAT_lgamma(T, a, b, c, alpha, beta) lgamma(a)
#define PW_FLOAT_digamma(T, a, b, c, alpha, beta) digamma_of(a)
/* polygamma: alpha carries n. */
#define PW_FLOAT_polygamma(T, a, b, c, alpha, beta) polygamma_of((int)(alpha), a)
#define PW_FLOAT_sinc(T, a, b, c, alpha, beta) sinc_of(a)
#define PW_FLOAT_entr(T, a, b, c, alpha, beta) entr_of(a)
#define PW_FLOAT_ndtri(T, a, b, c, alpha, beta) ndtri_of(a)
#define PW_FLOAT_log_ndtr(T, a, b, c, alpha, beta) log_ndtr_of(a)
#define PW_FLOAT_erfcx(T, a, b, c, alpha, beta) erfcx_of(a)
#define PW_FLOAT_xlog1py(T, a, b, c, alpha, beta) (isnan(b) ? (b) : ((a) == 0 ? (T)0 : (a) * log1p(b)))
#define PW_FLOAT_zeta(T, a, b, c, alpha, beta) zeta_of(a, b)
#define PW_FLOAT_igamma(T, a, b, c, alpha, beta) igamma_of(a, b, 0)
#define PW_FLOAT_igammac(T, a, b, c, alpha, beta) igamma_of(a, b, 1)

#define PW_FLOAT_i0(T, a, b, c, alpha, beta) bessel_i(0, a, 0)
#define PW_FLOAT_i0e(T, a, b, c, alpha, beta) bessel_i(0, a, 1)
#define PW_FLOAT_i1(T, a, b, c, alpha, beta) bessel_i(1, a, 0)
#define PW_FLOAT_i1e(T, a, b, c, alpha, beta) bessel_i(1, a, 1)
#define PW_FLOAT_k0(T, a, b, c, alpha, beta) bessel_k(0, a, 0)
#define PW_FLOAT_k0e(T, a, b, c, alpha, beta) bessel_k(0, a, 1)
#define PW_FLOAT_k1(T, a, b, c, alpha, beta) bessel_k(1, a, 0)
#define PW_FLOAT_k1e(T, a, b, c, alpha, beta) bessel_k(1, a, 1)
#define PW_FLOAT_j0(T, a, b, c, alpha, beta) bessel_j(0, a)
#define PW_FLOAT_j1(T, a, b, c, alpha, beta) bessel_j(1, a)
#define PW_FLOAT_y0(T, a, b, c, alpha, beta) bessel_y(0, a)
#define PW_FLOAT_y1(T, a, b, c, alpha, beta) bessel_y(1, a)
#define PW_FLOAT_airy_ai(T, a, b, c, alpha, beta) airy_ai_of(a)
#define PW_FLOAT_spherical_bessel_j0(T, a, b, c, alpha, beta) spherical_j0_of(a)

/* Polynomials: a = x, b = n. The shifted Chebyshev polynomials are the plain ones at 2x - 1. */
#define PW_FLOAT_chebyshev_t(T, a, b, c, alpha, beta) chebyshev_t_of(a, (long)(b))
#define PW_FLOAT_chebyshev_u(T, a, b, c, alpha, beta) chebyshev_u_of(a, (long)(b))
#define PW_FLOAT_chebyshev_v(T, a, b, c, alpha, beta) chebyshev_v_of(a, (long)(b))
#define PW_FLOAT_chebyshev_w(T, a, b, c, alpha, beta) chebyshev_w_of(a, (long)(b))
#define PW_FLOAT_shifted_chebyshev_t(T, a, b, c, alpha, beta) chebyshev_t_of((a) + (a) - 1, (long)(b))
#define PW_FLOAT_shifted_chebyshev_u(T, a, b, c, alpha, beta) chebyshev_u_of((a) + (a) - 1, (long)(b))
#define PW_FLOAT_shifted_chebyshev_v(T, a, b, c, alpha, beta) chebyshev_v_of((a) + (a) - 1, (long)(b))
#define PW_FLOAT_shifted_chebyshev_w(T, a, b, c, alpha, beta) chebyshev_w_of((a) + (a) - 1, (long)(b))
#define PW_FLOAT_hermite_h(T, a, b, c, alpha, beta) hermite_of(a, (long)(b), (T)2)
#define PW_FLOAT_hermite_he(T, a, b, c, alpha, beta) hermite_of(a, (long)(b), (T)1)
#define PW_FLOAT_laguerre_l(T, a, b, c, alpha, beta) laguerre_of(a, (long)(b))
#define PW_FLOAT_legendre_p(T, a, b, c, alpha, beta) legendre_of(a, (long)(b))
#endif
