/* The kernel of a recorded group: each op's math from the pointwise table (its PW_ macro, the
 * text the unfused kernel evaluates), one statement per op so that no multiply-add is contracted
 * across ops, each in the form its unfused kernel takes: on a CPU device, eight lanes at a time
 * through its vector math, the last partial vector lane 0 of a splat (an op with no vector form:
 * each lane through its scalar math); one element per work-item elsewhere, and for fewer than
 * eight elements. Every element is then computed exactly as the unfused kernels compute it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "group.h"

/* ---- the table's facts ---------------------------------------------------------------------- */

/* Float forms (pointwise_ops.def): an expression of the operands, with or without a vector form,
 * either the float math or the one for every class; CUSTOM and NONE are not fusable. */
#define FORM_NONE 0, 0, 0
#define FORM_CUSTOM 0, 0, 0
#define FORM_SCALAR 1, 0, 0
#define FORM_VECTOR 1, 1, 0
#define FORM_SCALAR_ANY 1, 0, 1
#define FORM_VECTOR_ANY 1, 1, 1
#define OUTPUT_SAME 1
#define OUTPUT_BOOL 0
#define IN_SPECIAL_elementwise 0
#define IN_SPECIAL_special 1
#define IN_SPECIAL_factory 0

/* What each row says of its float form, as a constant table: ROW's `form` expands to the three
 * numbers INFO takes apart. */
#define INFO(name, family, arity, out, form_fusable, form_vector, form_any)                 \
  [AXON_PW_##name] = {#name,       arity,    (form_fusable) && OUTPUT_##out && (arity) > 0, \
                      form_vector, form_any, IN_SPECIAL_##family},
#define ROW(name, family, arity, form, out) INFO(name, family, arity, out, form)
static const fused_op_info infos[AXON_PW_COUNT] = {
#define AXON_POINTWISE(name, family, arity, ff, fi, fb, out, glue, aten, inductor) \
  ROW(name, family, arity, FORM_##ff, out)
#include "../../kernels/pointwise_ops.def"
#undef AXON_POINTWISE
#undef ROW
#undef INFO
};

const fused_op_info *fused_op_info_of(axon_pointwise_op op) {
  return (unsigned)op < AXON_PW_COUNT ? &infos[op] : NULL;
}

/* ---- text ----------------------------------------------------------------------------------- */

typedef struct text {
  char *data;
  size_t used, size;
  int failed;
} text;

static void put(text *t, const char *format, ...) {
  va_list args;
  va_start(args, format);
  int n = vsnprintf(NULL, 0, format, args);
  va_end(args);
  if (n < 0 || t->failed) {
    t->failed = 1;
    return;
  }
  if (t->used + (size_t)n + 1 > t->size) {
    size_t size = t->size ? t->size : 4096;
    while (t->used + (size_t)n + 1 > size) size *= 2;
    char *grown = realloc(t->data, size);
    if (!grown) {
      t->failed = 1;
      return;
    }
    t->data = grown;
    t->size = size;
  }
  va_start(args, format);
  vsnprintf(t->data + t->used, t->size - t->used, format, args);
  va_end(args);
  t->used += (size_t)n;
}

int fused_op_stored(const fused_group *g, int op) {
  int b = g->ops[op].out;
  return g->last_writer[b] == op && op >= g->freed_before[b];
}

/* FNV-1a over the structure's numbers: the device (a program is built for one), the form, the
 * counts the kernel's arguments follow, then per op its id, its operands' sources, its
 * parameters (shared by value, so their places vary), its buffer, and whether its result is
 * stored. */
uint64_t fused_group_hash(const fused_group *g) {
  uint64_t h = 1469598103934665603ull;
#define MIX(v) (h = (h ^ (uint64_t)(int64_t)(v)) * 1099511628211ull)
  MIX(axon_stream_device(g->stream));
  MIX(g->dtype);
  MIX(g->vector);
  MIX(g->nbuffers);
  MIX(g->nparams);
  for (int i = 0; i < g->nops; i++) {
    const fused_op *o = &g->ops[i];
    MIX(o->op);
    for (int k = 0; k < 3; k++) {
      MIX(o->in[k].kind);
      MIX(o->in[k].index);
    }
    MIX(o->alpha);
    MIX(o->beta);
    MIX(o->out);
    MIX(fused_op_stored(g, i));
  }
#undef MIX
  return h ? h : 1;
}

void fused_group_kernel_name(const fused_group *g, char *name, size_t size) {
  size_t used = (size_t)snprintf(name, size, "fused");
  for (int i = 0; i < g->nops && used < size; i++) {
    const char *op = fused_op_info_of(g->ops[i].op)->name;
    if (used + strlen(op) + 6 >= size) {
      snprintf(name + used, size - used, "_etc");
      return;
    }
    used += (size_t)snprintf(name + used, size - used, "_%s", op);
  }
}

/* How the body reads and writes memory: whole vectors, a splatted element (the partial vector),
 * or single elements. */
typedef enum { ACCESS_VECTOR, ACCESS_SPLAT, ACCESS_ELEMENT } access;

static void put_operand(text *t, const fused_source *s, access how) {
  switch (s->kind) {
    case FROM_RESULT:
      put(t, "r%d", s->index);
      return;
    case FROM_PARAM:
      put(t, how == ACCESS_ELEMENT ? "q%d" : "(CT)(q%d)", s->index);
      return;
    case FROM_BUFFER:
      put(t, "m%d", s->index);
      return;
    default: /* an operand the op's arity leaves out: its macro never reads it */
      put(t, "0");
  }
}

/* The loads an op needs that no earlier op made. */
static void put_loads(text *t, const fused_op *o, int arity, access how, int *loaded) {
  for (int k = 0; k < arity; k++) {
    int b = o->in[k].index;
    if (o->in[k].kind != FROM_BUFFER || loaded[b]) continue;
    loaded[b] = 1;
    if (how == ACCESS_VECTOR)
      put(t, "    CT m%d = VLOAD(PTR(b%d), j);\n", b, b);
    else if (how == ACCESS_SPLAT)
      put(t, "    CT m%d = (CT)(LOAD(PTR(b%d), i));\n", b, b);
    else
      put(t, "    CT m%d = LOAD(PTR(b%d), i);\n", b, b);
  }
}

/* An op with no vector form, inside the vector body: each lane through its scalar math, as its
 * unfused kernel computes every element (the partial vector: lane 0, splatted back). */
static void put_lanes(text *t, const fused_op *o, const fused_op_info *info, int i, access how) {
  const char *math = info->any ? "ANY" : "FLOAT";
  if (how == ACCESS_SPLAT) {
    put(t, "    CT r%d = (CT)(PW_%s_%s(float, ", i, math, info->name);
    for (int k = 0; k < 3; k++) {
      if (o->in[k].kind == FROM_PARAM) {
        put(t, "q%d, ", o->in[k].index);
      } else if (o->in[k].kind == FROM_NOTHING) {
        put(t, "0, ");
      } else {
        put_operand(t, &o->in[k], how);
        put(t, ".s0, ");
      }
    }
    put(t, "q%d, q%d));\n", o->alpha, o->beta);
    return;
  }
  put(t, "    CT r%d;\n    {\n      float l0[8], l1[8], l2[8], lr[8];\n", i);
  for (int k = 0; k < info->arity; k++) {
    if (o->in[k].kind == FROM_PARAM) continue;
    put(t, "      vstore8(");
    put_operand(t, &o->in[k], how);
    put(t, ", 0, l%d);\n", k);
  }
  put(t, "      for (int l = 0; l < 8; l++) lr[l] = PW_%s_%s(float, ", math, info->name);
  for (int k = 0; k < 3; k++) {
    if (k >= info->arity)
      put(t, "0, ");
    else if (o->in[k].kind == FROM_PARAM)
      put(t, "q%d, ", o->in[k].index);
    else
      put(t, "l%d[l], ", k);
  }
  put(t, "q%d, q%d);\n      r%d = vload8(0, lr);\n    }\n", o->alpha, o->beta, i);
}

/* Whether results are computed in float and stored narrower: each op's result is then rounded
 * to the storage type, as storing it rounds it for the next unfused kernel. */
static int rounds_to_storage(const fused_group *g) {
  return g->dtype == AXON_F16 || g->dtype == AXON_BF16;
}

static void put_body(text *t, const fused_group *g, access how) {
  int loaded[FUSED_MAX_BUFFERS] = {0};
  for (int i = 0; i < g->nops; i++) {
    const fused_op *o = &g->ops[i];
    const fused_op_info *info = fused_op_info_of(o->op);
    put_loads(t, o, info->arity, how, loaded);
    if (how != ACCESS_ELEMENT && !info->vector) {
      put_lanes(t, o, info, i, how);
    } else {
      put(t, "    CT r%d = PW_%s_%s(CT, ", i, info->any ? "ANY" : "FLOAT", info->name);
      for (int k = 0; k < 3; k++) {
        put_operand(t, &o->in[k], how);
        put(t, ", ");
      }
      put(t, "q%d, q%d);\n", o->alpha, o->beta);
    }
    if (rounds_to_storage(g)) put(t, "    r%d = fused_round(r%d);\n", i, i);
  }
  for (int i = 0; i < g->nops; i++) {
    if (!fused_op_stored(g, i)) continue;
    int b = g->ops[i].out;
    if (how == ACCESS_VECTOR)
      put(t, "    VSTORE(PTR(b%d), j, r%d);\n", b, i);
    else if (how == ACCESS_SPLAT)
      put(t, "    STORE(PTR(b%d), i, r%d.s0);\n", b, i);
    else
      put(t, "    STORE(PTR(b%d), i, r%d);\n", b, i);
  }
}

/* Rounding to float16 or bfloat16 and back, exactly as a store (common.cl's ST_ and VST_) and the
 * next load make it. OpenCL declares no half variable without cl_khr_fp16: a ushort holds it. */
static const char round_f16[] =
    "PW_OVERLOAD float fused_round(float x) {\n"
    "  ushort h;\n"
    "  vstore_half_rte(x, 0, (half *)&h);\n"
    "  return vload_half(0, (const half *)&h);\n"
    "}\n"
    "PW_OVERLOAD float8 fused_round(float8 x) {\n"
    "  return (float8)(fused_round(x.s0), fused_round(x.s1), fused_round(x.s2), "
    "fused_round(x.s3),\n"
    "                  fused_round(x.s4), fused_round(x.s5), fused_round(x.s6), "
    "fused_round(x.s7));\n"
    "}\n";
static const char round_bf16[] =
    "PW_OVERLOAD float fused_round(float x) { return as_float((uint)float_to_bf16(x) << 16); }\n"
    "PW_OVERLOAD float8 fused_round(float8 x) {\n"
    "  return as_float8(convert_uint8(float8_to_bf16(x)) << 16);\n"
    "}\n";

char *fused_group_source(const fused_group *g, const char *kernel_name) {
  text t = {0};
  int nparams = g->nparams > 0 ? g->nparams : 1;
  /* Parameters in the compute type, as the unfused kernels take their scalars. */
  const char *param_type = g->dtype == AXON_F64 ? "double" : "float";
  put(&t, "/* Generated by runtime/src/fused/codegen.c. */\n");
  if (g->dtype == AXON_F16) put(&t, "%s", round_f16);
  if (g->dtype == AXON_BF16) put(&t, "%s", round_bf16);
  put(&t, "typedef struct fused_params { %s v[%d]; } fused_params;\n", param_type, nparams);
  put(&t, "KERNEL(%s)(", kernel_name);
  /* A buffer's memory and a 32-bit byte offset (common.cl's BUF has a 64-bit one): the group's
   * argument budget (group.h). */
  for (int b = 0; b < g->nbuffers; b++)
    put(&t, "__global uchar *b%d_base, uint b%d_offset, ", b, b);
  put(&t, "long n, fused_params p) {\n");
  for (int k = 0; k < g->nparams; k++) put(&t, "  %s q%d = p.v[%d];\n", param_type, k, k);
  if (g->vector) {
    /* EW_VEC of ew_common.cl: EW_SPAN elements a work-item, eight at a time. */
    put(&t, "  long first = get_global_id(0) * 128;\n");
    put(&t, "  for (long j = first; j < first + 128; j += 8) {\n");
    put(&t, "   if (j + 8 <= n) {\n    typedef VCT CT;\n");
    put_body(&t, g, ACCESS_VECTOR);
    put(&t, "   } else {\n    for (long i = j; i < n; i++) {\n    typedef VCT CT;\n");
    put_body(&t, g, ACCESS_SPLAT);
    put(&t, "    }\n    return;\n   }\n  }\n");
  } else {
    put(&t, "  long i = get_global_id(0);\n  if (i >= n) return;\n");
    put_body(&t, g, ACCESS_ELEMENT);
  }
  put(&t, "}\n");
  if (t.failed) {
    free(t.data);
    return NULL;
  }
  return t.data;
}
