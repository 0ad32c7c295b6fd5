/* Status names and the thread-local message of the last failure. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static _Thread_local char last_message[16384];

const char *axon_last_error(void) {
  return last_message;
}

axon_status_t axon_fail(axon_status_t status, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(last_message, sizeof last_message, fmt, args);
  va_end(args);
  return status;
}

/* Names come from the constants themselves, so they cannot drift from the headers. */
#define NAME(code) \
  case code:       \
    return #code;

const char *axon_status_name(axon_status_t status) {
  switch (status) {
    NAME(AXON_SUCCESS)
    NAME(AXON_ERROR_OUT_OF_MEMORY)
    NAME(AXON_ERROR_INVALID_ARGUMENT)
    NAME(AXON_ERROR_INVALID_POINTER)
    NAME(AXON_ERROR_NO_DEVICE)
    NAME(AXON_ERROR_UNSUPPORTED_DTYPE)
    NAME(AXON_ERROR_BUILD_FAILED)
    NAME(AXON_ERROR_IO)
    NAME(AXON_ERROR_UNSUPPORTED)
    NAME(AXON_ERROR_FORKED)
    NAME(CL_DEVICE_NOT_FOUND)
    NAME(CL_DEVICE_NOT_AVAILABLE)
    NAME(CL_COMPILER_NOT_AVAILABLE)
    NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    NAME(CL_OUT_OF_RESOURCES)
    NAME(CL_OUT_OF_HOST_MEMORY)
    NAME(CL_PROFILING_INFO_NOT_AVAILABLE)
    NAME(CL_MEM_COPY_OVERLAP)
    NAME(CL_BUILD_PROGRAM_FAILURE)
    NAME(CL_MAP_FAILURE)
    NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    NAME(CL_COMPILE_PROGRAM_FAILURE)
    NAME(CL_LINK_PROGRAM_FAILURE)
    NAME(CL_INVALID_VALUE)
    NAME(CL_INVALID_DEVICE_TYPE)
    NAME(CL_INVALID_PLATFORM)
    NAME(CL_INVALID_DEVICE)
    NAME(CL_INVALID_CONTEXT)
    NAME(CL_INVALID_QUEUE_PROPERTIES)
    NAME(CL_INVALID_COMMAND_QUEUE)
    NAME(CL_INVALID_HOST_PTR)
    NAME(CL_INVALID_MEM_OBJECT)
    NAME(CL_INVALID_BINARY)
    NAME(CL_INVALID_BUILD_OPTIONS)
    NAME(CL_INVALID_PROGRAM)
    NAME(CL_INVALID_PROGRAM_EXECUTABLE)
    NAME(CL_INVALID_KERNEL_NAME)
    NAME(CL_INVALID_KERNEL_DEFINITION)
    NAME(CL_INVALID_KERNEL)
    NAME(CL_INVALID_ARG_INDEX)
    NAME(CL_INVALID_ARG_VALUE)
    NAME(CL_INVALID_ARG_SIZE)
    NAME(CL_INVALID_KERNEL_ARGS)
    NAME(CL_INVALID_WORK_DIMENSION)
    NAME(CL_INVALID_WORK_GROUP_SIZE)
    NAME(CL_INVALID_WORK_ITEM_SIZE)
    NAME(CL_INVALID_GLOBAL_OFFSET)
    NAME(CL_INVALID_EVENT_WAIT_LIST)
    NAME(CL_INVALID_EVENT)
    NAME(CL_INVALID_OPERATION)
    NAME(CL_INVALID_BUFFER_SIZE)
    NAME(CL_INVALID_GLOBAL_WORK_SIZE)
    NAME(CL_INVALID_PROPERTY)
    default:
      return "unknown status";
  }
}
#undef NAME

static const struct {
  const char *name;
  size_t size;
  const char *macro; /* -D options selecting kernels/common.cl's definitions */
} dtype_table[AXON_DTYPE_COUNT] = {
    [AXON_F32] = {"float32", 4, "-DDT_F32"},
    [AXON_F64] = {"float64", 8, "-DDT_F64"},
    [AXON_F16] = {"float16", 2, "-DDT_F16"},
    [AXON_BF16] = {"bfloat16", 2, "-DDT_BF16"},
    [AXON_I64] = {"int64", 8, "-DDT_I64"},
    [AXON_I32] = {"int32", 4, "-DDT_I32"},
    [AXON_I16] = {"int16", 2, "-DDT_I16"},
    [AXON_I8] = {"int8", 1, "-DDT_I8"},
    [AXON_U8] = {"uint8", 1, "-DDT_U8"},
    [AXON_BOOL] = {"bool", 1, "-DDT_BOOL"},
    [AXON_C64] = {"complex64", 8, "-DDT_C64"},
    [AXON_C128] = {"complex128", 16, "-DDT_C128"},
    [AXON_U16] = {"uint16", 2, "-DDT_U16"},
    [AXON_U32] = {"uint32", 4, "-DDT_U32"},
    [AXON_U64] = {"uint64", 8, "-DDT_U64"},
    [AXON_F8E4M3] = {"float8_e4m3fn", 1, "-DDT_F8E4M3"},
    [AXON_F8E5M2] = {"float8_e5m2", 1, "-DDT_F8E5M2"},
};

size_t axon_dtype_size(axon_dtype dtype) {
  return (unsigned)dtype < AXON_DTYPE_COUNT ? dtype_table[dtype].size : 0;
}
const char *axon_dtype_name(axon_dtype dtype) {
  return (unsigned)dtype < AXON_DTYPE_COUNT ? dtype_table[dtype].name : "invalid";
}
const char *axon_dtype_macro(axon_dtype dtype) {
  return (unsigned)dtype < AXON_DTYPE_COUNT ? dtype_table[dtype].macro : "";
}
