/* Launches the fused scaled-dot-product attention (kernels/attention.cl). */
#include "launch_common.h"

/* Mirrors attn_geom in kernels/attention.cl. */
typedef struct attn_geom {
  int64_t batch, heads, kv_heads, q_len, kv_len, head_dim, v_head_dim;
  int64_t q_s[3], k_s[3], v_s[3], o_s[3], do_s[3], dq_s[3], dk_s[3], dv_s[3];
  int64_t m_s[4];
  float scale;
  int32_t causal, has_mask, flags;
} attn_geom;

enum { WANT_DQ = 1, WANT_DK = 2, WANT_DV = 4, WANT_DMASK = 8 };

static axon_status_t prepare(axon_stream_t stream, axon_dtype dtype, const axon_attention_desc *d,
                             const char *what, attn_geom *g, axon_program_t *program) {
  if (!stream || !d) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL argument", what);
  if (dtype != AXON_F32 && dtype != AXON_F16 && dtype != AXON_BF16)
    return axon_fail(AXON_ERROR_UNSUPPORTED_DTYPE,
                     "%s: %s is not supported (float32, float16 and bfloat16 only)", what,
                     axon_dtype_name(dtype));
  if (d->batch < 0 || d->heads < 0 || d->kv_heads < 1 || d->q_len < 0 || d->kv_len < 0)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: bad geometry", what);
  if (d->heads % d->kv_heads != 0)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT,
                     "%s: %lld query heads do not divide into %lld key heads", what,
                     (long long)d->heads, (long long)d->kv_heads);
  if (d->head_dim < 1 || d->head_dim > AXON_ATTENTION_MAX_HEAD_DIM || d->v_head_dim < 1 ||
      d->v_head_dim > AXON_ATTENTION_MAX_HEAD_DIM)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT,
                     "%s: head dimensions %lld and %lld must lie in 1..%d", what,
                     (long long)d->head_dim, (long long)d->v_head_dim, AXON_ATTENTION_MAX_HEAD_DIM);
  if (!d->q || !d->k || !d->v || !d->out || !d->lse)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "%s: NULL tensor", what);
  if (stream->device->quirks & AXON_QUIRK_LOOP_BUDGET) {
    /* A work-item walks a query's keys (backward, also a key's queries), each step a few loops
     * over the head in float8s; counted twice over for the loops around them. */
    int64_t queries = d->q_len * (d->heads / d->kv_heads);
    int64_t steps = d->kv_len > queries ? d->kv_len : queries;
    int64_t loops = steps * (2 + (d->head_dim + d->v_head_dim + 7) / 8) * 2;
    if (loops > AXON_LOOP_BUDGET)
      return axon_loop_budget_refusal("attention: loop iterations per work-item about",
                                      (long long)loops, AXON_LOOP_BUDGET);
  }
  memset(g, 0, sizeof *g);
  g->batch = d->batch;
  g->heads = d->heads;
  g->kv_heads = d->kv_heads;
  g->q_len = d->q_len;
  g->kv_len = d->kv_len;
  g->head_dim = d->head_dim;
  g->v_head_dim = d->v_head_dim;
  memcpy(g->q_s, d->q_strides, sizeof g->q_s);
  memcpy(g->k_s, d->k_strides, sizeof g->k_s);
  memcpy(g->v_s, d->v_strides, sizeof g->v_s);
  memcpy(g->o_s, d->out_strides, sizeof g->o_s);
  memcpy(g->do_s, d->grad_out_strides, sizeof g->do_s);
  memcpy(g->dq_s, d->grad_q_strides, sizeof g->dq_s);
  memcpy(g->dk_s, d->grad_k_strides, sizeof g->dk_s);
  memcpy(g->dv_s, d->grad_v_strides, sizeof g->dv_s);
  memcpy(g->m_s, d->mask_strides, sizeof g->m_s);
  g->scale = (float)d->scale;
  g->causal = d->is_causal != 0;
  g->has_mask = d->mask != NULL;
  return family_program(stream, "attention", dtype, program);
}

/* A work-item per row. On a CPU a group of one: PoCL then runs each row as plain scalar code
 * over float8 vectors (as softmax_rows and norm_stats_rows), rather than trying to vectorise
 * across rows whose key loops differ in length (causal). */
static axon_status_t launch_rows(axon_stream_t stream, axon_program_t program, const char *name,
                                 int64_t rows, const axon_arg *args, int nargs) {
  if (rows <= 0) return AXON_SUCCESS;
  if (!rows_per_item(stream)) return launch_1d(stream, program, name, rows, args, nargs);
  size_t local = 1, global = (size_t)rows;
  return axon_launch(program, name, stream, 1, &global, &local, args, nargs);
}

axon_status_t axon_attention_forward(axon_stream_t stream, axon_dtype dtype,
                                     const axon_attention_desc *d) {
  attn_geom g;
  axon_program_t program;
  AXON_TRY(prepare(stream, dtype, d, "attention_forward", &g, &program));
  axon_arg args[] = {buffer_arg(d->q),       buffer_arg(d->k),
                     buffer_arg(d->v),       buffer_arg(d->mask ? d->mask : d->q),
                     buffer_arg(d->out),     buffer_arg(d->lse),
                     bytes_arg(&g, sizeof g)};
  return launch_rows(stream, program, "attn_fwd", g.batch * g.heads * g.q_len, args, 7);
}

axon_status_t axon_attention_backward(axon_stream_t stream, axon_dtype dtype,
                                      const axon_attention_desc *d) {
  attn_geom g;
  axon_program_t program;
  AXON_TRY(prepare(stream, dtype, d, "attention_backward", &g, &program));
  if (!d->grad_out || !d->delta)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "attention_backward: NULL grad_out or delta");
  g.flags = (d->grad_q ? WANT_DQ : 0) | (d->grad_k ? WANT_DK : 0) | (d->grad_v ? WANT_DV : 0) |
            (d->grad_mask ? WANT_DMASK : 0);
  if (!g.flags) return AXON_SUCCESS;
  /* Missing outputs are never written; any valid buffer stands in for them. */
  const void *any = d->q;
  axon_arg q_args[] = {buffer_arg(d->q),
                       buffer_arg(d->k),
                       buffer_arg(d->v),
                       buffer_arg(d->mask ? d->mask : any),
                       buffer_arg(d->out),
                       buffer_arg(d->lse),
                       buffer_arg(d->grad_out),
                       buffer_arg(d->grad_q ? d->grad_q : any),
                       buffer_arg(d->grad_mask ? d->grad_mask : any),
                       buffer_arg(d->delta),
                       bytes_arg(&g, sizeof g)};
  /* attn_bwd_q always runs: it stores the D = dO . O that attn_bwd_kv reads. */
  AXON_TRY(launch_rows(stream, program, "attn_bwd_q", g.batch * g.heads * g.q_len, q_args, 11));
  if (!(g.flags & (WANT_DK | WANT_DV))) return AXON_SUCCESS;
  axon_arg kv_args[] = {buffer_arg(d->q),
                        buffer_arg(d->k),
                        buffer_arg(d->v),
                        buffer_arg(d->mask ? d->mask : any),
                        buffer_arg(d->lse),
                        buffer_arg(d->grad_out),
                        buffer_arg(d->grad_k ? d->grad_k : any),
                        buffer_arg(d->grad_v ? d->grad_v : any),
                        buffer_arg(d->delta),
                        bytes_arg(&g, sizeof g)};
  return launch_rows(stream, program, "attn_bwd_kv", g.batch * g.kv_heads * g.kv_len, kv_args, 10);
}
