/* Tests of the fused optimizer launcher (axon_fused_optim: Adam / AdamW, SGD, Adagrad) against
 * the same steps computed on the host in double, over lists long enough to take several
 * launches, with lengths that end inside a work-group; the found_inf skip, gradient unscaling,
 * the family's build for every float dtype, and the refusals. */
#include <math.h>
#include <stdint.h>

#include "axon/fused_optim.h"
#include "harness.h"
#include "internal.h" /* axon_dtype_macro: the family's build options for a dtype */

#define DEV 0
#define NT 9 /* tensors: two Adam launches (6 slots), two SGD and Adagrad launches (8) */

static const int64_t lengths[NT] = {1, 1000, 3, 4097, 256, 1025, 17, 2048, 5000};

typedef struct host_list {
  float *x[NT][5]; /* param, grad, state 0..2 */
  float step[NT];
} host_list;

static void *up(const void *host, size_t bytes) {
  return dev_upload(DEV, host, bytes);
}

/* Random host tensors (states non-negative where they are second moments or sums), their
 * device copies, and the descriptors pointing at them. */
static void make_list(host_list *h, axon_fused_optim_tensor *t, float step) {
  for (int k = 0; k < NT; k++) {
    int64_t n = lengths[k];
    memset(&t[k], 0, sizeof t[k]);
    t[k].numel = n;
    for (int b = 0; b < 5; b++) {
      h->x[k][b] = malloc(n * sizeof(float));
      for (int64_t i = 0; i < n; i++)
        h->x[k][b][i] = b >= 3 ? rng_float(0, 0.5f) : rng_float(-1, 1);
    }
    t[k].param = up(h->x[k][0], n * 4);
    t[k].grad = up(h->x[k][1], n * 4);
    for (int s = 0; s < 3; s++) t[k].state[s] = up(h->x[k][2 + s], n * 4);
    h->step[k] = step + (float)k; /* steps differ per tensor, as after skipped gradients */
    t[k].step = up(&h->step[k], 4);
  }
}

static void free_list(host_list *h, axon_fused_optim_tensor *t) {
  for (int k = 0; k < NT; k++) {
    for (int b = 0; b < 5; b++) free(h->x[k][b]);
    axon_free(t[k].param);
    axon_free(t[k].grad);
    for (int s = 0; s < 3; s++) axon_free(t[k].state[s]);
    axon_free((void *)t[k].step);
  }
}

static void dev_copy_in(void *dev, const void *host, size_t bytes) {
  if (axon_copy_h2d(dev, host, bytes, NULL, 1) != AXON_SUCCESS)
    printf("# copy in failed: %s\n", axon_last_error());
}

/* Compares device buffer `dev` of tensor k with the host values `want`. */
static double err_of(const void *dev, const double *want, int64_t n) {
  float *got = malloc(n * sizeof(float));
  double e = dev_download(got, dev, n * 4) ? max_rel_err(got, want, n, 1.0) : INFINITY;
  free(got);
  return e;
}

static void test_adam(axon_stream_t s, int adamw, int amsgrad, int maximize) {
  host_list h;
  axon_fused_optim_tensor t[NT];
  make_list(&h, t, 3);
  double lr = 1e-2, b1 = 0.9, b2 = 0.999, wd = 0.1, eps = 1e-8, scale = 4;
  axon_fused_optim_args a;
  memset(&a, 0, sizeof a);
  a.lr = axon_real_of(lr);
  a.beta1 = axon_real_of(b1);
  a.beta2 = axon_real_of(b2);
  a.weight_decay = axon_real_of(wd);
  a.eps = axon_real_of(eps);
  a.adamw = adamw;
  a.amsgrad = amsgrad;
  a.maximize = maximize;
  a.has_grad_scale = 1;
  float scale_f = (float)scale;
  axon_fused_optim_scalars sc = {NULL, up(&scale_f, 4), NULL};
  CHECK_OK(axon_fused_optim(s, AXON_F32, AXON_FUSED_OPTIM_ADAM, &a, &sc, t, NT));
  double worst = 0, worst_grad = 0;
  for (int k = 0; k < NT; k++) {
    int64_t n = lengths[k];
    double *p = malloc(n * sizeof(double)), *g = malloc(n * sizeof(double));
    double *m = malloc(n * sizeof(double)), *v = malloc(n * sizeof(double));
    double *vm = malloc(n * sizeof(double));
    double bc1 = 1 - pow(b1, h.step[k]), bc2 = 1 - pow(b2, h.step[k]);
    for (int64_t i = 0; i < n; i++) {
      double gi = h.x[k][1][i] / scale, pi = h.x[k][0][i];
      g[i] = gi;
      if (maximize) gi = -gi;
      if (adamw)
        pi *= 1 - lr * wd;
      else
        gi += wd * pi;
      m[i] = b1 * h.x[k][2][i] + (1 - b1) * gi;
      v[i] = b2 * h.x[k][3][i] + (1 - b2) * gi * gi;
      vm[i] = amsgrad && h.x[k][4][i] > v[i] ? h.x[k][4][i] : v[i];
      p[i] = pi - lr / bc1 * m[i] / (sqrt(vm[i]) / sqrt(bc2) + eps);
    }
    double e = fmax(err_of(t[k].param, p, n),
                    fmax(err_of(t[k].state[0], m, n), err_of(t[k].state[1], v, n)));
    if (amsgrad) e = fmax(e, err_of(t[k].state[2], vm, n));
    worst = fmax(worst, e);
    worst_grad = fmax(worst_grad, err_of(t[k].grad, g, n));
    free(p), free(g), free(m), free(v), free(vm);
  }
  CHECK(worst < 1e-5, "%s (amsgrad %d, maximize %d): parameters and state (max err %.3g)",
        adamw ? "AdamW" : "Adam", amsgrad, maximize, worst);
  CHECK(worst_grad < 1e-6, "%s: gradients written back unscaled (max err %.3g)",
        adamw ? "AdamW" : "Adam", worst_grad);
  axon_free((void *)sc.grad_scale);
  free_list(&h, t);
}

static void test_sgd(axon_stream_t s, int nesterov, int first) {
  host_list h;
  axon_fused_optim_tensor t[NT];
  make_list(&h, t, 1);
  double lr = 0.05, wd = 0.01, mom = 0.9, damp = nesterov ? 0 : 0.25;
  axon_fused_optim_args a;
  memset(&a, 0, sizeof a);
  a.lr = axon_real_of(1e9); /* overridden by the lr tensor */
  a.weight_decay = axon_real_of(wd);
  a.momentum = axon_real_of(mom);
  a.dampening = axon_real_of(damp);
  a.nesterov = nesterov;
  a.is_first_step = first;
  a.has_lr_tensor = 1;
  float lr_f = (float)lr;
  axon_fused_optim_scalars sc = {up(&lr_f, 4), NULL, NULL};
  CHECK_OK(axon_fused_optim(s, AXON_F32, AXON_FUSED_OPTIM_SGD, &a, &sc, t, NT));
  double worst = 0;
  for (int k = 0; k < NT; k++) {
    int64_t n = lengths[k];
    double *p = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
      double g = h.x[k][1][i] + wd * h.x[k][0][i];
      b[i] = first ? g : mom * h.x[k][2][i] + (1 - damp) * g;
      g = nesterov ? g + mom * b[i] : b[i];
      p[i] = h.x[k][0][i] - lr_f * g;
    }
    worst = fmax(worst, fmax(err_of(t[k].param, p, n), err_of(t[k].state[0], b, n)));
    free(p), free(b);
  }
  CHECK(worst < 1e-5, "SGD (nesterov %d, first step %d, tensor lr): max err %.3g", nesterov, first,
        worst);
  axon_free((void *)sc.lr);
  free_list(&h, t);
}

static void test_adagrad(axon_stream_t s) {
  host_list h;
  axon_fused_optim_tensor t[NT];
  make_list(&h, t, 2);
  for (int k = 0; k < NT; k++) { /* sums of squares are not negative */
    for (int64_t i = 0; i < lengths[k]; i++) h.x[k][2][i] = fabsf(h.x[k][2][i]);
    dev_copy_in(t[k].state[0], h.x[k][2], lengths[k] * 4);
  }
  double lr = 0.1, lr_decay = 0.01, wd = 0.05, eps = 1e-10;
  axon_fused_optim_args a;
  memset(&a, 0, sizeof a);
  a.lr = axon_real_of(lr);
  a.lr_decay = axon_real_of(lr_decay);
  a.weight_decay = axon_real_of(wd);
  a.eps = axon_real_of(eps);
  a.maximize = 1;
  CHECK_OK(axon_fused_optim(s, AXON_F32, AXON_FUSED_OPTIM_ADAGRAD, &a, NULL, t, NT));
  double worst = 0;
  for (int k = 0; k < NT; k++) {
    int64_t n = lengths[k];
    double *p = malloc(n * sizeof(double)), *sum = malloc(n * sizeof(double));
    double clr = lr / (1 + (h.step[k] - 1) * lr_decay);
    for (int64_t i = 0; i < n; i++) {
      double g = -h.x[k][1][i] + wd * h.x[k][0][i];
      sum[i] = h.x[k][2][i] + g * g;
      p[i] = h.x[k][0][i] - clr * g / (sqrt(sum[i]) + eps);
    }
    worst = fmax(worst, fmax(err_of(t[k].param, p, n), err_of(t[k].state[0], sum, n)));
    free(p), free(sum);
  }
  CHECK(worst < 1e-5, "Adagrad (lr decay, maximize): max err %.3g", worst);
  free_list(&h, t);
}

/* found_inf = 1 leaves every buffer as it was; 0 does not. */
static void test_found_inf(axon_stream_t s) {
  host_list h;
  axon_fused_optim_tensor t[NT];
  make_list(&h, t, 1);
  axon_fused_optim_args a;
  memset(&a, 0, sizeof a);
  a.lr = axon_real_of(0.1);
  a.has_found_inf = 1;
  a.has_grad_scale = 1;
  float one = 1, scale = 2;
  axon_fused_optim_scalars sc = {NULL, up(&scale, 4), up(&one, 4)};
  CHECK_OK(axon_fused_optim(s, AXON_F32, AXON_FUSED_OPTIM_SGD, &a, &sc, t, NT));
  int same = 1;
  for (int k = 0; k < NT; k++) {
    int64_t n = lengths[k];
    float *got = malloc(n * 4);
    for (int b = 0; b < 2; b++) {
      dev_download(got, b ? t[k].grad : t[k].param, n * 4);
      same &= !memcmp(got, h.x[k][b], n * 4);
    }
    free(got);
  }
  CHECK(same, "found_inf = 1: parameters and gradients untouched");
  float zero = 0;
  axon_free((void *)sc.found_inf);
  sc.found_inf = up(&zero, 4);
  CHECK_OK(axon_fused_optim(s, AXON_F32, AXON_FUSED_OPTIM_SGD, &a, &sc, t, NT));
  float p0;
  dev_download(&p0, t[1].param, 4);
  CHECK(fabsf(p0 - (h.x[1][0][0] - 0.1f * (h.x[1][1][0] / 2))) < 1e-6f,
        "found_inf = 0: the step runs (%g)", p0);
  axon_free((void *)sc.found_inf);
  axon_free((void *)sc.grad_scale);
  free_list(&h, t);
}

static void test_builds_and_refusals(axon_stream_t s) {
  const axon_dtype dts[] = {AXON_F32, AXON_F16, AXON_BF16, AXON_F64};
  for (size_t i = 0; i < sizeof dts / sizeof *dts; i++) {
    if (!axon_device_supports_dtype(DEV, dts[i])) {
      SKIP("fused_optim for %s: the device lacks it", axon_dtype_name(dts[i]));
      continue;
    }
    axon_program_t prog = NULL;
    axon_status_t st =
        axon_program_get(DEV, "pointwise_math+fused_optim", axon_dtype_macro(dts[i]), &prog);
    if (st == AXON_SUCCESS) st = axon_program_build_all(prog);
    CHECK(st == AXON_SUCCESS, "family fused_optim builds for %s%s%s", axon_dtype_name(dts[i]),
          st ? ": " : "", st ? axon_last_error() : "");
  }
  axon_fused_optim_args a;
  memset(&a, 0, sizeof a);
  a.amsgrad = 1;
  float x = 0;
  void *d = up(&x, 4);
  axon_fused_optim_tensor t = {d, d, {d, d, NULL}, d, 1};
  CHECK_STATUS(axon_fused_optim(s, AXON_F32, AXON_FUSED_OPTIM_ADAM, &a, NULL, &t, 1),
               AXON_ERROR_INVALID_ARGUMENT);
  a.amsgrad = 0;
  CHECK_STATUS(axon_fused_optim(s, AXON_I32, AXON_FUSED_OPTIM_ADAM, &a, NULL, &t, 1),
               AXON_ERROR_UNSUPPORTED_DTYPE);
  a.has_grad_scale = 1; /* without a grad_scale tensor */
  CHECK_STATUS(axon_fused_optim(s, AXON_F32, AXON_FUSED_OPTIM_ADAM, &a, NULL, &t, 1),
               AXON_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(axon_fused_optim(s, AXON_F32, AXON_FUSED_OPTIM_KIND_COUNT, &a, NULL, &t, 1),
               AXON_ERROR_INVALID_ARGUMENT);
  a.has_grad_scale = 0;
  CHECK_OK(axon_fused_optim(s, AXON_F32, AXON_FUSED_OPTIM_SGD, &a, NULL, &t, 0));
  axon_free(d);
}

int main(void) {
  int count = 0;
  REQUIRE_OK(axon_device_count(&count));
  if (count == 0) {
    SKIP("every test: no device");
    return harness_summary();
  }
  axon_stream_t s;
  REQUIRE_OK(axon_stream_default(DEV, &s));
  for (int adamw = 0; adamw < 2; adamw++) test_adam(s, adamw, adamw, !adamw);
  test_adam(s, 1, 0, 0);
  test_sgd(s, 0, 0);
  test_sgd(s, 1, 1);
  test_adagrad(s);
  test_found_inf(s);
  test_builds_and_refusals(s);
  REQUIRE_OK(axon_stream_sync(s));
  return harness_summary();
}
