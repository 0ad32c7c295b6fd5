/*
 * Batch, layer and group normalization over a contiguous x. A "target" is a set of elements
 * at t * st + a * sa + b * sb (a < na, b < nb): a work-group per target reduces over it.
 * Element i belongs to statistics group (i / gdiv) % gmod and affine channel (i / cdiv) % cmod.
 * Statistics, weights, biases, running stats and sums use the accumulation type AT (float
 * for float16 / bfloat16, else the element type) and are loaded / stored as AT.
 */
#ifdef IS_FLOAT

#if defined(DT_F16) || defined(DT_BF16)
#define AT float
#define ALD LD_F32
#define AST ST_F32
#else
#define AT CT
#define ALD LOAD
#define AST STORE
#endif

#define NORM_GROUP 256

/* Mirrors norm_geom in runtime/src/ops/norm.c. */
typedef struct norm_geom {
  long targets, na, nb, st, sa, sb;
  long numel, gdiv, gmod, cdiv, cmod, count;
} norm_geom;

/* Sum over the work-group (size a power of two up to NORM_GROUP); every item gets it. */
inline AT group_sum(__local AT *scratch, AT v) {
  int lid = get_local_id(0), n = get_local_size(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = n / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  AT r = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

inline long target_offset(const norm_geom *g, long t, long k) {
  if (g->na == 1) return t * g->st + k * g->sb; /* layer norm: no division per element */
  long a = k / g->nb, b = k % g->nb;
  return t * g->st + a * g->sa + b * g->sb;
}

inline AT inv_std(__global uchar *rstd, long grp, int stat_is_var, AT eps) {
  AT v = ALD(rstd, grp);
  return stat_is_var ? (AT)1 / sqrt(v + eps) : v;
}

/* mean, rstd = 1 / sqrt(biased variance + eps) (two passes); with update_running, the
 * running stats move towards the mean and the unbiased variance by `momentum`. */
KERNEL(norm_stats)(BUF(x), BUF(mean), BUF(rstd), BUF(rmean), BUF(rvar), norm_geom g,
                         AT eps, AT momentum, int update_running) {
  LOCAL_ARRAY(norm_stats, AT, scratch, NORM_GROUP);
  long t = get_group_id(0), lid = get_local_id(0), step = get_local_size(0);
  long n = g.na * g.nb;
  __global uchar *xp = PTR(x);
  AT s = 0;
  for (long k = lid; k < n; k += step) s += LOAD(xp, target_offset(&g, t, k));
  AT m = group_sum(scratch, s) / (AT)n;
  AT q = 0;
  for (long k = lid; k < n; k += step) {
    AT dv = LOAD(xp, target_offset(&g, t, k)) - m;
    q += dv * dv;
  }
  AT var = group_sum(scratch, q) / (AT)n;
  if (lid == 0) {
    AST(PTR(mean), t, m);
    AST(PTR(rstd), t, (AT)1 / sqrt(var + eps));
    if (update_running) {
      AT unbiased = n > 1 ? var * (AT)n / (AT)(n - 1) : (AT)NAN;
      AST(PTR(rmean), t, ((AT)1 - momentum) * ALD(PTR(rmean), t) + momentum * m);
      AST(PTR(rvar), t, ((AT)1 - momentum) * ALD(PTR(rvar), t) + momentum * unbiased);
    }
  }
}

/* Element i of a 2-D launch (dim 0 inside a statistics group, dim 1 over groups), with its
 * statistics group and affine channel. In layer and batch norm the divisions depend on dim 1
 * only, so they are done once per row of work-items instead of per element. */
#define NORM_ELEMENT(g)                                                        \
  long inner = get_global_id(0), outer = get_global_id(1);                     \
  long i = outer * g.gdiv + inner;                                             \
  if (inner >= g.gdiv || i >= g.numel) return;                                 \
  long grp = outer % g.gmod;                                                   \
  long ch = g.cdiv == g.gdiv               ? outer % g.cmod                    \
            : g.cdiv == 1 && g.cmod == g.gdiv ? inner                          \
                                              : (i / g.cdiv) % g.cmod;

#ifdef DT_F32
/* Layer norm's statistics when each target is a float32 row contiguous in memory, on CPU
 * devices (the runtime chooses): a work-item per row in float8 vectors, as softmax_rows in
 * softmax.cl, instead of the scalar loops a one-item group runs above. */
KERNEL(norm_stats_rows)(BUF(x), BUF(mean), BUF(rstd), BUF(rmean), BUF(rvar), norm_geom g,
                              AT eps, AT momentum, int update_running) {
  long t = get_global_id(0), n = g.nb, body = g.nb / 8 * 8;
  if (t >= g.targets) return;
  __global const float *xp = (__global const float *)PTR(x) + t * g.st;
  float8 sv = 0;
  for (long j = 0; j < body; j += 8) sv += vload8(0, xp + j);
  float s = lanes_sum(sv);
  for (long j = body; j < n; j++) s += xp[j];
  float m = s / (float)n;
  float8 qv = 0;
  for (long j = 0; j < body; j += 8) {
    float8 dv = vload8(0, xp + j) - m;
    qv += dv * dv;
  }
  float q = lanes_sum(qv);
  for (long j = body; j < n; j++) q += (xp[j] - m) * (xp[j] - m);
  float var = q / (float)n;
  AST(PTR(mean), t, m);
  AST(PTR(rstd), t, 1.0f / sqrt(var + eps));
  if (update_running) {
    float unbiased = n > 1 ? var * (float)n / (float)(n - 1) : NAN;
    AST(PTR(rmean), t, (1.0f - momentum) * ALD(PTR(rmean), t) + momentum * m);
    AST(PTR(rvar), t, (1.0f - momentum) * ALD(PTR(rvar), t) + momentum * unbiased);
  }
}
#endif

KERNEL(norm_apply)(BUF(x), BUF(mean), BUF(rstd), BUF(weight), BUF(bias), BUF(y),
                         norm_geom g, AT eps, int stat_is_var, int has_weight, int has_bias) {
  NORM_ELEMENT(g)
  AT v = ((AT)LOAD(PTR(x), i) - ALD(PTR(mean), grp)) * inv_std(PTR(rstd), grp, stat_is_var, eps);
  if (has_weight) v *= ALD(PTR(weight), ch);
  if (has_bias) v += ALD(PTR(bias), ch);
  STORE(PTR(y), i, v);
}

#ifdef DT_F32
/* norm_apply for float32 on CPU devices when a row of one statistics group has one affine
 * channel (batch norm: a plane) or a channel per position (layer norm): a work-item per row in
 * float8 vectors, its statistics and (batch norm) its channel's parameters read once per row.
 * The per-element kernel above ran batch-norm inference at 6x PyTorch CPU's time. */
KERNEL(norm_apply_rows)(BUF(x), BUF(mean), BUF(rstd), BUF(weight), BUF(bias), BUF(y),
                              norm_geom g, AT eps, int stat_is_var, int has_weight, int has_bias) {
  long row = get_global_id(0), n = g.gdiv, body = n / 8 * 8;
  if (row * n >= g.numel) return;
  long grp = row % g.gmod;
  __global const float *xp = (__global const float *)PTR(x) + row * n;
  __global float *yp = (__global float *)PTR(y) + row * n;
  __global const float *w = (__global const float *)PTR(weight);
  __global const float *b = (__global const float *)PTR(bias);
  float m = ALD(PTR(mean), grp), r = inv_std(PTR(rstd), grp, stat_is_var, eps);
  if (g.cdiv == g.gdiv) { /* one channel for the row */
    long ch = row % g.cmod;
    float a = has_weight ? r * w[ch] : r, c = has_bias ? b[ch] : 0.0f;
    for (long j = 0; j < body; j += 8) vstore8((vload8(0, xp + j) - m) * a + c, 0, yp + j);
    for (long j = body; j < n; j++) yp[j] = (xp[j] - m) * a + c;
  } else { /* channel j at position j */
    for (long j = 0; j < body; j += 8) {
      float8 v = (vload8(0, xp + j) - m) * r;
      if (has_weight) v *= vload8(0, w + j);
      if (has_bias) v += vload8(0, b + j);
      vstore8(v, 0, yp + j);
    }
    for (long j = body; j < n; j++) {
      float v = (xp[j] - m) * r;
      if (has_weight) v *= w[j];
      if (has_bias) v += b[j];
      yp[j] = v;
    }
  }
}
#endif

/* Per target: sum1 = sum(dy * w), sum2 = sum(dy * w * xhat). */
KERNEL(norm_sums)(BUF(x), BUF(dy), BUF(mean), BUF(rstd), BUF(weight), BUF(sum1),
                        BUF(sum2), norm_geom g, AT eps, int stat_is_var, int has_weight) {
  LOCAL_ARRAY(norm_sums, AT, scratch, NORM_GROUP);
  long t = get_group_id(0), lid = get_local_id(0), step = get_local_size(0);
  long n = g.na * g.nb;
  AT s1 = 0, s2 = 0;
  for (long k = lid; k < n; k += step) {
    long i = target_offset(&g, t, k);
    long grp = (i / g.gdiv) % g.gmod, ch = (i / g.cdiv) % g.cmod;
    AT d = LOAD(PTR(dy), i);
    if (has_weight) d *= ALD(PTR(weight), ch);
    AT xhat = ((AT)LOAD(PTR(x), i) - ALD(PTR(mean), grp)) * inv_std(PTR(rstd), grp, stat_is_var, eps);
    s1 += d;
    s2 += d * xhat;
  }
  s1 = group_sum(scratch, s1);
  s2 = group_sum(scratch, s2);
  if (lid == 0) {
    AST(PTR(sum1), t, s1);
    AST(PTR(sum2), t, s2);
  }
}

KERNEL(norm_backward)(BUF(x), BUF(dy), BUF(mean), BUF(rstd), BUF(weight), BUF(sum1),
                            BUF(sum2), BUF(dx), norm_geom g, AT eps, int stat_is_var,
                            int has_weight, int train) {
  NORM_ELEMENT(g)
  AT r = inv_std(PTR(rstd), grp, stat_is_var, eps);
  AT d = LOAD(PTR(dy), i);
  if (has_weight) d *= ALD(PTR(weight), ch);
  AT v = d * r;
  if (train) {
    AT xhat = ((AT)LOAD(PTR(x), i) - ALD(PTR(mean), grp)) * r;
    AT inv_n = (AT)1 / (AT)g.count;
    v = r * (d - ALD(PTR(sum1), grp) * inv_n - xhat * ALD(PTR(sum2), grp) * inv_n);
  }
  STORE(PTR(dx), i, v);
}
#endif
