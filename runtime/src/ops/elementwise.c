/* Launches the elementwise family (kernels/elementwise.cl). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../fused/fused.h"
#include "../program_internal.h"
#include "launch_common.h"

static axon_status_t make_geom(const axon_ew_desc *d, ew_geom *g) {
  if (d->ndim < 0 || d->ndim > AXON_MAX_DIMS || d->ninputs < 0 || d->ninputs > 3)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "elementwise: %d dims / %d inputs unsupported",
                     d->ndim, d->ninputs);
  memset(g, 0, sizeof *g);
  g->numel = 1;
  g->ndim = d->ndim;
  for (int i = 0; i < d->ndim; i++) {
    g->sizes[i] = d->sizes[i];
    g->numel *= d->sizes[i];
    for (int k = 0; k <= d->ninputs; k++) g->strides[k][i] = d->strides[k][i];
  }
  for (int k = 1; k <= d->ninputs; k++)
    if (d->is_scalar[k]) g->scalar_mask |= 1 << (k - 1);
  return AXON_SUCCESS;
}

/* Whether every memory operand walks the same contiguous range (the glue coalesces dimensions,
 * so this is the common case). Such launches use the family built with EW_CONTIG, whose
 * offsets are the index itself: no division per element, and PoCL vectorises across
 * work-items; on a GPU the accesses coalesce. */
static int contiguous(const ew_geom *g, int ninputs) {
  if (g->ndim > 1) return 0;
  for (int k = 0; k <= ninputs && g->ndim == 1; k++) {
    int scalar = k > 0 && (g->scalar_mask >> (k - 1) & 1);
    if (!scalar && g->strides[k][0] != 1) return 0;
  }
  return 1;
}

/* Kernels of a contiguous program built alone before the whole family (on drivers that build
 * families whole): two alone cost about half the whole family's build on PoCL. */
#define CONTIGUOUS_ALONE 2

/* Vectors of eight elements per work-item in the vector form (EW_VECTORS in ew_common.cl), in
 * groups of EW_VECTOR_GROUP whatever the size: one local size, so PoCL compiles each kernel
 * once (per grid class), and the fastest one measured. */
#define EW_VECTORS 16
#define EW_VECTOR_GROUP 16

/* Whether the strided program's vector form fits: rows of at least a vector along which the
 * output is contiguous and each memory input contiguous or one repeated element. */
static int vector_rows(const ew_geom *g, int ninputs) {
  if (g->ndim < 2 || g->sizes[0] < 8 || g->strides[0][0] != 1) return 0;
  for (int k = 1; k <= ninputs; k++) {
    int scalar = g->scalar_mask >> (k - 1) & 1;
    if (!scalar && g->strides[k][0] != 0 && g->strides[k][0] != 1) return 0;
  }
  return 1;
}

static axon_status_t run(axon_stream_t stream, const char *family, const char *kernel,
                         axon_dtype dtype, const axon_ew_desc *d, double alpha, double beta) {
  ew_geom g;
  AXON_TRY(make_geom(d, &g));
  if (g.numel == 0) return AXON_SUCCESS;
  if (!d->data[0]) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "elementwise: no output");
  axon_program_t program;
  int line = contiguous(&g, d->ninputs);
  AXON_TRY(family_program_variant(stream, family, dtype, line ? "-DEW_CONTIG" : NULL, &program));
  if (line)
    axon_program_build_first_alone(program, CONTIGUOUS_ALONE);
  else
    axon_program_build_sparsely(program);
  int integral = !is_float_dtype(dtype);
  compute_scalar s[3], a = make_scalar(dtype, alpha, 0, 0), b = make_scalar(dtype, beta, 0, 0);
  axon_arg args[4 + 1 + 5];
  for (int k = 0; k < 4; k++) {
    /* Missing and scalar inputs still need a buffer argument: the output serves. */
    const void *ptr = k <= d->ninputs && !(k > 0 && d->is_scalar[k]) ? d->data[k] : d->data[0];
    args[k] = buffer_arg(ptr);
  }
  /* The contiguous variant takes only the head of the geometry (ew_line in ew_common.cl). */
  args[4] = bytes_arg(&g, line ? offsetof(ew_geom, sizes) : sizeof g);
  for (int k = 0; k < 3; k++) {
    s[k] = is_complex_dtype(dtype)
               ? make_complex_scalar(dtype, d->scalars[k + 1], d->scalars_imag[k + 1])
               : make_scalar(dtype, d->scalars[k + 1], d->iscalars[k + 1], integral);
    args[5 + k] = bytes_arg(&s[k].v, s[k].size);
  }
  args[8] = bytes_arg(&a.v, a.size);
  args[9] = bytes_arg(&b.v, b.size);
  int vector_line = line && g.numel >= 8, vector_runs = !line && vector_rows(&g, d->ninputs);
  char vector[64];
  join3(vector, sizeof vector, "ewv_", kernel + strlen("ew_"), NULL);
  if (vector_runs && rows_per_item(stream) && is_float_dtype(dtype)) {
    /* The strided program builds a kernel at a time: a name the op lacks would cost an empty
     * build to learn, which the contiguous program (the same ops have vector forms) may know. */
    axon_program_t contiguous_program;
    AXON_TRY(family_program_variant(stream, family, dtype, "-DEW_CONTIG", &contiguous_program));
    vector_runs = !axon_program_lacks_kernel(contiguous_program, vector);
  }
  if (rows_per_item(stream) && is_float_dtype(dtype) && (vector_line || vector_runs)) {
    /* Float on a CPU: the vector form (EW_VEC in ew_common.cl), where the op has one, a span
     * of the range (contiguous) or of a row (strided) per work-item. */
    size_t span = 8 * EW_VECTORS, local = EW_VECTOR_GROUP;
    size_t items = vector_line
                       ? ((size_t)g.numel + span - 1) / span
                       : (size_t)(g.numel / g.sizes[0]) * (((size_t)g.sizes[0] + span - 1) / span);
    size_t global = axon_round_up(items, local);
    axon_status_t st = axon_launch(program, vector, stream, 1, &global, &local, args, 10);
    if (st != CL_INVALID_KERNEL_NAME) return st;
  }
  int64_t runs = g.ndim > 1 ? g.numel / g.sizes[0] : 0;
  /* Runs of at least 8, and enough of them to share among the cores. */
  if (!line && rows_per_item(stream) && g.sizes[0] >= 8 && runs >= 16) {
    /* Strided on a CPU: the rows form (EW_ROWS in ew_common.cl), where the kernel has one. */
    char rows[64];
    join3(rows, sizeof rows, "ewr_", kernel + strlen("ew_"), NULL);
    axon_status_t st = launch_1d(stream, program, rows, runs, args, 10);
    if (st != CL_INVALID_KERNEL_NAME) return st;
  }
  size_t local = group_size_for(stream, g.numel);
  size_t global = axon_round_up((size_t)g.numel, local);
  return axon_launch(program, kernel, stream, 1, &global, &local, args, 10);
}

/* Each op's kernel and the family holding it, from the pointwise table. A family's program is
 * its file with the shared math before it and the table after it (ew_common.cl expands the
 * table's rows of that family into kernels). */
#define FAMILY_elementwise "ew_common+pointwise_math+elementwise+pointwise_ops"
#define FAMILY_special "ew_common+special+pointwise_ops"
#define FAMILY_factory "ew_common+factory"
static const struct {
  const char *kernel, *family;
} pointwise_ops[AXON_PW_COUNT] = {
#define AXON_POINTWISE(name, family, ...) [AXON_PW_##name] = {"ew_" #name, FAMILY_##family},
#include "../../kernels/pointwise_ops.def"
#undef AXON_POINTWISE
};

axon_status_t axon_elementwise_kernel(axon_stream_t stream, const char *family, const char *kernel,
                                      axon_dtype dtype, const axon_ew_desc *desc, double alpha,
                                      double beta) {
  if (!stream || !family || !kernel || strncmp(kernel, "ew_", 3))
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "elementwise kernel: bad arguments");
  return run(stream, family, kernel, dtype, desc, alpha, beta);
}

const char *axon_pointwise_name(axon_pointwise_op op) {
  return (unsigned)op < AXON_PW_COUNT ? pointwise_ops[op].kernel + strlen("ew_") : NULL;
}

axon_status_t axon_elementwise(axon_stream_t stream, axon_pointwise_op op, axon_dtype dtype,
                               axon_dtype out_dtype, const axon_ew_desc *desc, double alpha,
                               double beta) {
  /* each kernel writes its op's natural output type */
  if (!stream) return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "elementwise: NULL stream");
  if ((unsigned)op >= AXON_PW_COUNT)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "elementwise: op id %d unknown", (int)op);
  if (out_dtype == dtype) {
    int recorded;
    AXON_TRY(axon_fused_record(stream, op, dtype, desc, alpha, beta, &recorded));
    if (recorded) return AXON_SUCCESS;
  }
  return axon_elementwise_now(stream, op, dtype, desc, alpha, beta);
}

axon_status_t axon_elementwise_now(axon_stream_t stream, axon_pointwise_op op, axon_dtype dtype,
                                   const axon_ew_desc *desc, double alpha, double beta) {
  const char *kernel = pointwise_ops[op].kernel;
  /* Complex numbers have a family of their own, with the same kernel names. */
  const char *family = is_complex_dtype(dtype) ? "ew_common+complex" : pointwise_ops[op].family;
  axon_status_t st = run(stream, family, kernel, dtype, desc, alpha, beta);
  if (st == CL_INVALID_KERNEL_NAME)
    return axon_fail(AXON_ERROR_UNSUPPORTED, "elementwise op \"%s\" has no %s kernel",
                     kernel + strlen("ew_"), axon_dtype_name(dtype));
  return st;
}

static const char *cast_names[AXON_DTYPE_COUNT] = {
    [AXON_F32] = "ew_cast_f32",       [AXON_F64] = "ew_cast_f64",      [AXON_F16] = "ew_cast_f16",
    [AXON_BF16] = "ew_cast_bf16",     [AXON_I64] = "ew_cast_i64",      [AXON_I32] = "ew_cast_i32",
    [AXON_I16] = "ew_cast_i16",       [AXON_I8] = "ew_cast_i8",        [AXON_U8] = "ew_cast_u8",
    [AXON_BOOL] = "ew_cast_bool",     [AXON_C64] = "ew_cast_c64",      [AXON_C128] = "ew_cast_c128",
    [AXON_U16] = "ew_cast_u16",       [AXON_U32] = "ew_cast_u32",      [AXON_U64] = "ew_cast_u64",
    [AXON_F8E4M3] = "ew_cast_f8e4m3", [AXON_F8E5M2] = "ew_cast_f8e5m2"};

axon_status_t axon_cast(axon_stream_t stream, axon_dtype dtype, axon_dtype out_dtype,
                        const axon_ew_desc *desc) {
  if ((unsigned)out_dtype >= AXON_DTYPE_COUNT)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "cast: bad output dtype");
  if (!axon_device_supports_dtype(axon_stream_device(stream), out_dtype))
    return axon_fail(AXON_ERROR_UNSUPPORTED_DTYPE, "%s is not supported on axon device %d",
                     axon_dtype_name(out_dtype), axon_stream_device(stream));
  const char *family = is_complex_dtype(dtype) ? "ew_common+complex" : FAMILY_elementwise;
  return run(stream, family, cast_names[out_dtype], dtype, desc, 0.0, 0.0);
}
