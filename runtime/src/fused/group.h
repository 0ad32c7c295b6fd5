/* A stream's recorded group of pointwise ops (group.c records and launches it; codegen.c writes
 * its kernel). Operands are named by where they come from: a buffer of the group (a distinct
 * device address: every operand of a group spans the same number of elements of the group's
 * float type, so two operands either share their range exactly or are kept apart), the result of
 * an earlier op of the group, or a parameter (a scalar input, alpha, beta). */
#ifndef AXON_FUSED_GROUP_H
#define AXON_FUSED_GROUP_H

#include <stdint.h>

#include "axon/axon.h"

/* A group's kernel takes, per buffer, its memory and a 32-bit byte offset, then the length and
 * the parameters (deduplicated by value): all within OpenCL's minimum parameter size, 1024 bytes,
 * which PoCL and rusticl report. 64 buffers and 128 ops hold the whole AdamW update of a dozen
 * same-sized tensors (8 ops and 5 buffers each), which foreach issues op by op across them. */
#define FUSED_MAX_OPS 128
#define FUSED_MAX_BUFFERS 64
#define FUSED_ARG_BYTES 1024
#define FUSED_BUFFER_ARG_BYTES 12 /* cl_mem and uint offset */
/* Groups a stream keeps open at once (of different lengths or forms). */
#define FUSED_MAX_OPEN 8

typedef enum { FROM_NOTHING, FROM_BUFFER, FROM_RESULT, FROM_PARAM } fused_source_kind;

typedef struct fused_source {
  fused_source_kind kind;
  int index; /* the buffer, the op whose result it is, or the parameter */
} fused_source;

/* The call as made, for launching the op unfused: every memory operand walks the group's one
 * contiguous range (a 0-dim or 1-dim call, unit strides). */
typedef struct fused_call {
  const void *data[AXON_MAX_OPERANDS];
  double scalars[AXON_MAX_OPERANDS];
  unsigned char is_scalar[AXON_MAX_OPERANDS];
  signed char ndim, ninputs;
} fused_call;

typedef struct fused_op {
  axon_pointwise_op op;
  fused_source in[3];
  int out;         /* the buffer it writes */
  int alpha, beta; /* parameters */
  fused_call call;
  double alpha_value, beta_value;
} fused_op;

typedef struct fused_group {
  struct axon_stream *stream;
  uint64_t sequence; /* when it was opened: a stream's groups launch oldest first */
  int64_t numel;
  axon_dtype dtype;  /* float32, float64, float16 or bfloat16: every operand's */
  int vector;        /* eight lanes at a time (a CPU device, eight elements or more) */
  int needs_special; /* an op's math is in special.cl */
  int nbuffers;
  uintptr_t address[FUSED_MAX_BUFFERS];
  int last_writer[FUSED_MAX_BUFFERS];  /* the op that last wrote it, or -1 */
  int freed_before[FUSED_MAX_BUFFERS]; /* writes by ops before this one were freed: not stored */
  int nparams;
  union { /* in the compute type: float, double for float64 (the argument budget bounds them) */
    float f[FUSED_ARG_BYTES / sizeof(float)];
    double d[FUSED_ARG_BYTES / sizeof(double)];
  } params;
  struct fused_group *next_pending; /* the list of groups with recorded work */
  int nops;
  fused_op ops[FUSED_MAX_OPS]; /* last: a launch copies only the ops recorded */
} fused_group;

/* A stream's open groups (axon_stream.fused). */
typedef struct fused_stream {
  struct axon_stream *stream;
  uint64_t opened;
  fused_group groups[FUSED_MAX_OPEN];
} fused_stream;

/* What the table says of an op, for the float programs fusion builds. */
typedef struct fused_op_info {
  const char *name;
  int arity;
  int fusable; /* a float form that is an expression of the operands, output of the input type */
  int vector;  /* the float form has an eight-lane form */
  int any;     /* its math is PW_ANY_<name> (else PW_FLOAT_<name>) */
  int special; /* its math is in special.cl */
} fused_op_info;
const fused_op_info *fused_op_info_of(axon_pointwise_op op);

/* The group's structure as a hash (equal for groups that share a kernel), its kernel's name (the
 * ops it contains, for the profiler), and its program source. */
uint64_t fused_group_hash(const fused_group *g);
void fused_group_kernel_name(const fused_group *g, char *name, size_t size);
char *fused_group_source(const fused_group *g, const char *kernel_name); /* caller frees */
/* The size of a parameter as the kernel takes it. */
size_t fused_param_size(const fused_group *g);
/* Whether the op's result reaches memory: the last write of its buffer, not freed. */
int fused_op_stored(const fused_group *g, int op);

#endif
