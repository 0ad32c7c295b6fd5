/*
 * Fused scaled-dot-product attention (flash-attention style). A work-item owns one query row
 * (forward, and the backward's dQ) or one key row (the backward's dK and dV) and walks the other
 * side's rows: the scores of a row exist only a block of keys at a time, in private memory, and
 * the softmax is carried online (running maximum m and sum l, the accumulator rescaled once per
 * block). No work-item waits for another, so there is no barrier: PoCL runs a barrier as a pass
 * over the group, and its loop vectoriser has mishandled barriers inside loops. The head
 * dimension is walked in float8 vectors, which PoCL maps onto the CPU's SIMD registers.
 *
 * Scores are scale * q.k + mask; the forward stores lse = m + log(l) per query row, from which
 * the backward recomputes each probability p = exp(score - lse):
 *   dV_j = sum_i p_ij dO_i,  dS_ij = p_ij (dO_i.v_j - D_i) with D_i = dO_i.O_i,
 *   dQ_i = scale sum_j dS_ij k_j,  dK_j = scale sum_i dS_ij q_i,  dMask_ij = dS_ij.
 */
#if defined(DT_F32) || defined(DT_F16) || defined(DT_BF16)

/* Mirrors attn_geom in runtime/src/ops/attention.c. Strides in elements for (batch, head,
 * row); the mask's for (batch, head, row, column). */
typedef struct attn_geom {
  long batch, heads, kv_heads, q_len, kv_len, head_dim, v_head_dim;
  long q_s[3], k_s[3], v_s[3], o_s[3], do_s[3], dq_s[3], dk_s[3], dv_s[3];
  long m_s[4];
  float scale;
  int causal, has_mask, flags;
} attn_geom;

#define ATT_WANT_DQ 1
#define ATT_WANT_DK 2
#define ATT_WANT_DV 4
#define ATT_WANT_DMASK 8

/* Head dimensions up to 256 (AXON_ATTENTION_MAX_HEAD_DIM) in vectors of 8. */
#define ATT_MAXV 32
/* Keys scored per step of the online softmax: the accumulator is rescaled once per block. */
#define ATT_BLOCK 32

/* Elements e .. e + n - 1 of a row (all eight when n >= 8) as floats, zeros past n. */
inline float8 att_load(__global const uchar *p, long e, long n) {
  if (n >= 8) return VLOAD(p, e);
  float t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (long k = 0; k < n; k++) t[k] = LOAD(p, e + k);
  return vload8(0, t);
}

inline void att_store(__global uchar *p, long e, long n, float8 v) {
  if (n >= 8) {
    VSTORE(p, e, v);
    return;
  }
  float t[8];
  vstore8(v, 0, t);
  for (long k = 0; k < n; k++) STORE(p, e + k, t[k]);
}

/* a . row, a being the row's n elements as vectors (zeros past n). */
inline float att_dot(const float8 *a, __global const uchar *p, long base, long n) {
  long full = n / 8;
  float8 acc = 0;
  for (long c = 0; c < full; c++) acc += a[c] * VLOAD(p, base + 8 * c);
  if (n % 8) acc += a[full] * att_load(p, base + 8 * full, n % 8);
  return lanes_sum(acc);
}

/* acc += w * row */
inline void att_axpy(float8 *acc, float w, __global const uchar *p, long base, long n) {
  long full = n / 8;
  for (long c = 0; c < full; c++) acc[c] += w * VLOAD(p, base + 8 * c);
  if (n % 8) acc[full] += w * att_load(p, base + 8 * full, n % 8);
}

inline void att_load_row(float8 *dst, __global const uchar *p, long base, long n, float w) {
  for (long c = 0; c < (n + 7) / 8; c++) dst[c] = att_load(p, base + 8 * c, n - 8 * c) * w;
}

inline void att_store_row(__global uchar *p, long base, long n, const float8 *src, float w) {
  for (long c = 0; c < (n + 7) / 8; c++) att_store(p, base + 8 * c, n - 8 * c, src[c] * w);
}

inline void att_zero(float8 *dst, long n) {
  for (long c = 0; c < (n + 7) / 8; c++) dst[c] = 0;
}

/* Query row `row` of the [batch, heads, q_len] rows: its coordinates, its key head and the end
 * of the keys it sees. */
#define ATT_QUERY_ROW(g, row)                                \
  long i = row % g.q_len, bh = row / g.q_len;                \
  long h = bh % g.heads, b = bh / g.heads;                   \
  long hk = h / (g.heads / g.kv_heads);                      \
  long kend = g.causal ? min(g.kv_len, i + 1) : g.kv_len;    \
  long kbase = b * g.k_s[0] + hk * g.k_s[1];                 \
  long vbase = b * g.v_s[0] + hk * g.v_s[1];                 \
  long mbase = b * g.m_s[0] + h * g.m_s[1] + i * g.m_s[2];

KERNEL(attn_fwd)(BUF(q), BUF(k), BUF(v), BUF(mask), BUF(out), BUF(lse), STRUCT_ARG(attn_geom, g)) {
  PRIVATE_STRUCT(attn_geom, g);
  long row = get_global_id(0);
  if (row >= g.batch * g.heads * g.q_len) return;
  ATT_QUERY_ROW(g, row)
  __global const uchar *kp = PTR(k), *vp = PTR(v), *mp = PTR(mask);
  long E = g.head_dim, Ev = g.v_head_dim;
  float8 qv[ATT_MAXV], acc[ATT_MAXV];
  float s[ATT_BLOCK];
  att_load_row(qv, PTR(q), b * g.q_s[0] + h * g.q_s[1] + i * g.q_s[2], E, g.scale);
  att_zero(acc, Ev);
  float m = -INFINITY, l = 0;
  for (long j0 = 0; j0 < kend; j0 += ATT_BLOCK) {
    long nb = min((long)ATT_BLOCK, kend - j0);
    float bm = -INFINITY;
    for (long t = 0; t < nb; t++) {
      long j = j0 + t;
      float x = att_dot(qv, kp, kbase + j * g.k_s[2], E);
      if (g.has_mask) x += LOAD(mp, mbase + j * g.m_s[3]);
      s[t] = x;
      bm = fmax(bm, x);
    }
    if (bm == -INFINITY) continue; /* the block is masked out */
    float mn = fmax(m, bm), alpha = exp(m - mn);
    if (alpha != 1.0f) {
      l *= alpha;
      for (long c = 0; c < (Ev + 7) / 8; c++) acc[c] *= alpha;
    }
    for (long t = 0; t < nb; t++) {
      float p = exp(s[t] - mn);
      if (p == 0.0f) continue;
      l += p;
      att_axpy(acc, p, vp, vbase + (j0 + t) * g.v_s[2], Ev);
    }
    m = mn;
  }
  /* A row with every key masked attends to nothing: zeros, as PyTorch's _safe_softmax. */
  att_store_row(PTR(out), b * g.o_s[0] + h * g.o_s[1] + i * g.o_s[2], Ev, acc,
                l > 0 ? 1.0f / l : 0.0f);
  ST_F32(PTR(lse), row, l > 0 ? m + log(l) : -INFINITY);
}

/* Per query row: D = dO . O (stored for attn_bwd_kv), dQ and the row of dMask. */
KERNEL(attn_bwd_q)(BUF(q), BUF(k), BUF(v), BUF(mask), BUF(out), BUF(lse), BUF(grad_out),
                   BUF(grad_q), BUF(grad_mask), BUF(delta), STRUCT_ARG(attn_geom, g)) {
  PRIVATE_STRUCT(attn_geom, g);
  long row = get_global_id(0);
  if (row >= g.batch * g.heads * g.q_len) return;
  ATT_QUERY_ROW(g, row)
  __global const uchar *kp = PTR(k), *vp = PTR(v), *mp = PTR(mask);
  long E = g.head_dim, Ev = g.v_head_dim;
  float8 qv[ATT_MAXV], dov[ATT_MAXV], dq[ATT_MAXV];
  att_load_row(dov, PTR(grad_out), b * g.do_s[0] + h * g.do_s[1] + i * g.do_s[2], Ev, 1.0f);
  float D = att_dot(dov, PTR(out), b * g.o_s[0] + h * g.o_s[1] + i * g.o_s[2], Ev);
  ST_F32(PTR(delta), row, D);
  int want_dq = g.flags & ATT_WANT_DQ, want_dm = g.flags & ATT_WANT_DMASK;
  if (!want_dq && !want_dm) return;
  att_load_row(qv, PTR(q), b * g.q_s[0] + h * g.q_s[1] + i * g.q_s[2], E, g.scale);
  att_zero(dq, E);
  float lse_i = LD_F32(PTR(lse), row);
  if (lse_i == -INFINITY) kend = 0; /* a fully masked row: no gradient flows through it */
  __global uchar *dmp = PTR(grad_mask);
  long drow = row * g.kv_len;
  for (long j = 0; j < kend; j++) {
    float x = att_dot(qv, kp, kbase + j * g.k_s[2], E);
    if (g.has_mask) x += LOAD(mp, mbase + j * g.m_s[3]);
    float p = exp(x - lse_i), ds = 0;
    if (p != 0.0f) {
      ds = p * (att_dot(dov, vp, vbase + j * g.v_s[2], Ev) - D);
      if (want_dq) att_axpy(dq, ds, kp, kbase + j * g.k_s[2], E);
    }
    if (want_dm) ST_F32(dmp, drow + j, ds);
  }
  if (want_dm)
    for (long j = kend; j < g.kv_len; j++) ST_F32(dmp, drow + j, 0.0f);
  if (want_dq)
    att_store_row(PTR(grad_q), b * g.dq_s[0] + h * g.dq_s[1] + i * g.dq_s[2], E, dq, g.scale);
}

/* Per key row (of a key head): dK and dV over the query rows of every query head reading it.
 * Runs after attn_bwd_q, whose D it reads. */
KERNEL(attn_bwd_kv)(BUF(q), BUF(k), BUF(v), BUF(mask), BUF(lse), BUF(grad_out), BUF(grad_k),
                    BUF(grad_v), BUF(delta), STRUCT_ARG(attn_geom, g)) {
  PRIVATE_STRUCT(attn_geom, g);
  long row = get_global_id(0);
  if (row >= g.batch * g.kv_heads * g.kv_len) return;
  long j = row % g.kv_len, bh = row / g.kv_len, hk = bh % g.kv_heads, b = bh / g.kv_heads;
  long E = g.head_dim, Ev = g.v_head_dim, group = g.heads / g.kv_heads;
  __global const uchar *qp = PTR(q), *dop = PTR(grad_out), *mp = PTR(mask);
  __global const uchar *lp = PTR(lse), *dp = PTR(delta);
  float8 kv[ATT_MAXV], vv[ATT_MAXV], dk[ATT_MAXV], dv[ATT_MAXV];
  att_load_row(kv, PTR(k), b * g.k_s[0] + hk * g.k_s[1] + j * g.k_s[2], E, g.scale);
  att_load_row(vv, PTR(v), b * g.v_s[0] + hk * g.v_s[1] + j * g.v_s[2], Ev, 1.0f);
  att_zero(dk, E);
  att_zero(dv, Ev);
  for (long h = hk * group; h < (hk + 1) * group; h++) {
    long qbase = b * g.q_s[0] + h * g.q_s[1], obase = b * g.do_s[0] + h * g.do_s[1];
    long mbase = b * g.m_s[0] + h * g.m_s[1] + j * g.m_s[3], lbase = (b * g.heads + h) * g.q_len;
    for (long i = g.causal ? j : 0; i < g.q_len; i++) {
      float lse_i = LD_F32(lp, lbase + i);
      if (lse_i == -INFINITY) continue;
      float x = att_dot(kv, qp, qbase + i * g.q_s[2], E);
      if (g.has_mask) x += LOAD(mp, mbase + i * g.m_s[2]);
      float p = exp(x - lse_i);
      if (p == 0.0f) continue;
      long o = obase + i * g.do_s[2];
      float ds = p * (att_dot(vv, dop, o, Ev) - LD_F32(dp, lbase + i));
      att_axpy(dv, p, dop, o, Ev);
      att_axpy(dk, ds, qp, qbase + i * g.q_s[2], E);
    }
  }
  if (g.flags & ATT_WANT_DK)
    att_store_row(PTR(grad_k), b * g.dk_s[0] + hk * g.dk_s[1] + j * g.dk_s[2], E, dk, g.scale);
  if (g.flags & ATT_WANT_DV)
    att_store_row(PTR(grad_v), b * g.dv_s[0] + hk * g.dv_s[1] + j * g.dv_s[2], Ev, dv, 1.0f);
}

#endif
