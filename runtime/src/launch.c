/*
 * Kernel launches: arguments, then the enqueue, under the launch lock (program_cache.c's:
 * kernel objects are shared by every thread, and OpenCL's argument state lives in them).
 */
#include <stdlib.h>
#include <string.h>

#include "fused/fused.h"
#include "profiler_internal.h"
#include "program_internal.h"

/* The value a kernel argument was last set to. PoCL allocates and copies on every
 * clSetKernelArg, so launches skip the ones whose value has not changed (on a hot loop of
 * small ops, most of them: geometry, scalars, often the buffers too). */
typedef struct arg_value {
  size_t size;
  unsigned char *bytes;
} arg_value;

/* One per argument index the kernel has been launched with (a fused eager group's kernel takes
 * up to 130, and its buffers usually come back at the same addresses step after step). */
struct launch_args {
  cl_uint count;
  arg_value values[];
};

void axon_launch_args_free(struct launch_args *args) {
  if (!args) return;
  for (cl_uint i = 0; i < args->count; i++) free(args->values[i].bytes);
  free(args);
}

/* Room for `count` argument values; without it, every argument is set. */
static void reserve_args(kernel_entry *e, cl_uint count) {
  cl_uint had = e->args ? e->args->count : 0;
  if (count <= had) return;
  struct launch_args *grown = realloc(e->args, sizeof *grown + count * sizeof grown->values[0]);
  if (!grown) return;
  memset(&grown->values[had], 0, (count - had) * sizeof grown->values[0]);
  grown->count = count;
  e->args = grown;
}

/* clSetKernelArg unless the argument already holds this value. */
static cl_int set_arg(kernel_entry *e, cl_uint index, size_t size, const void *value) {
  arg_value *cached = e->args && index < e->args->count ? &e->args->values[index] : NULL;
  if (cached && !value) {
    /* No value (a __local size, a NULL buffer): set every time, and forget the last value, so
     * that a value like it set next is not skipped. */
    cached->size = 0;
    return clSetKernelArg(e->kernel, index, size, NULL);
  }
  if (cached && cached->size == size && !memcmp(cached->bytes, value, size)) return CL_SUCCESS;
  cl_int err = clSetKernelArg(e->kernel, index, size, value);
  if (!cached || err != CL_SUCCESS) return err;
  if (cached->size != size) {
    unsigned char *bytes = realloc(cached->bytes, size);
    if (!bytes) {
      cached->size = 0; /* forget the value: the next launch sets it again */
      return CL_SUCCESS;
    }
    cached->bytes = bytes;
    cached->size = size;
  }
  memcpy(cached->bytes, value, size);
  return CL_SUCCESS;
}

static axon_status_t set_args(kernel_entry *e, const char *name, const axon_arg *args, int nargs) {
  cl_uint index = 0, count = 0;
  for (int i = 0; i < nargs; i++) count += args[i].kind == AXON_ARG_BUFFER ? 2 : 1;
  reserve_args(e, count);
  for (int i = 0; i < nargs; i++) {
    cl_int err;
    if (args[i].kind == AXON_ARG_BUFFER && !args[i].ptr) {
      /* No memory (an empty tensor): the kernel sees a NULL pointer (OpenCL 1.2, 5.7.2). */
      cl_ulong zero = 0;
      err = set_arg(e, index++, sizeof(cl_mem), NULL);
      if (err == CL_SUCCESS) err = set_arg(e, index++, sizeof zero, &zero);
    } else if (args[i].kind == AXON_ARG_BUFFER) {
      cl_mem mem;
      size_t off = 0;
      AXON_TRY(axon_resolve_mem(args[i].ptr, &mem, &off));
      cl_ulong off64 = off;
      err = set_arg(e, index++, sizeof mem, &mem);
      if (err == CL_SUCCESS) err = set_arg(e, index++, sizeof off64, &off64);
    } else if (args[i].kind == AXON_ARG_LOCAL) {
      err = set_arg(e, index++, args[i].size, NULL); /* no value: set each launch */
    } else {
      err = set_arg(e, index++, args[i].size, args[i].ptr);
    }
    if (err != CL_SUCCESS)
      return axon_fail(err, "kernel \"%s\": argument %d: %s", name, i, axon_status_name(err));
  }
  return AXON_SUCCESS;
}

axon_status_t axon_launch(axon_program_t program, const char *name, axon_stream_t stream, int dims,
                          const size_t *global, const size_t *local, const axon_arg *args,
                          int nargs) {
  if (!program || !name || dims < 1 || dims > 3)
    return axon_fail(AXON_ERROR_INVALID_ARGUMENT, "axon_launch: bad arguments");
  AXON_TRY(axon_stream_resolve(stream, axon_program_device(program)->index, &stream));
  for (int i = 0; i < dims; i++)
    if (global[i] == 0) return AXON_SUCCESS; /* nothing to do */
  AXON_FAULT_POINT(AXON_FAULT_LAUNCH, CL_OUT_OF_RESOURCES, "kernel enqueue");
  AXON_TRY(axon_fused_settle(stream)); /* recorded pointwise work runs first */
  pthread_mutex_lock(axon_launch_lock());
  kernel_entry *e = NULL;
  axon_status_t st = axon_program_kernel_entry(program, name, &e);
  if (st == AXON_SUCCESS) st = set_args(e, name, args, nargs);
  if (st == AXON_SUCCESS) {
    cl_event event;
    cl_int err = clEnqueueNDRangeKernel(stream->queue, e->kernel, (cl_uint)dims, NULL, global,
                                        local, 0, NULL, axon_profile_event(&event));
    if (err != CL_SUCCESS)
      st = axon_fail(err, "launching kernel \"%s\" failed: %s", name, axon_status_name(err));
    else
      axon_profile_commit(event, AXON_PROFILE_KERNEL, name, stream, 0);
  }
  pthread_mutex_unlock(axon_launch_lock());
  return st;
}
