// Runtime errors as C++ exceptions, and the dtypes: ATen scalar types to the runtime's, and
// whether a device supports one.
#include "axon_glue.h"

namespace axon {

// ---- errors and dtypes ------------------------------------------------------------------

void throw_status(axon_status_t status, const char* what) {
  std::string msg = axon_last_error();
  if (msg.empty()) msg = std::string(what) + " failed: " + axon_status_name(status);
  if (status == AXON_ERROR_OUT_OF_MEMORY) TORCH_CHECK_WITH(OutOfMemoryError, false, msg);
  if (status == AXON_ERROR_UNSUPPORTED_DTYPE || status == AXON_ERROR_UNSUPPORTED)
    TORCH_CHECK_NOT_IMPLEMENTED(false, msg);
  if (status == AXON_ERROR_INVALID_ARGUMENT) TORCH_CHECK_VALUE(false, msg);
  TORCH_CHECK(false, "axon: ", msg, " [", axon_status_name(status), "]");
}

bool has_axon_dtype(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
    case at::kDouble:
    case at::kHalf:
    case at::kBFloat16:
    case at::kLong:
    case at::kInt:
    case at::kShort:
    case at::kChar:
    case at::kByte:
    case at::kBool:
    case at::kComplexFloat:
    case at::kComplexDouble:
    case at::kUInt16:
    case at::kUInt32:
    case at::kUInt64:
    case at::kFloat8_e4m3fn:
    case at::kFloat8_e5m2:
      return true;
    default:
      return false;
  }
}

axon_dtype to_axon_dtype(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return AXON_F32;
    case at::kDouble:
      return AXON_F64;
    case at::kHalf:
      return AXON_F16;
    case at::kBFloat16:
      return AXON_BF16;
    case at::kLong:
      return AXON_I64;
    case at::kInt:
      return AXON_I32;
    case at::kShort:
      return AXON_I16;
    case at::kChar:
      return AXON_I8;
    case at::kByte:
      return AXON_U8;
    case at::kBool:
      return AXON_BOOL;
    case at::kComplexFloat:
      return AXON_C64;
    case at::kComplexDouble:
      return AXON_C128;
    case at::kUInt16:
      return AXON_U16;
    case at::kUInt32:
      return AXON_U32;
    case at::kUInt64:
      return AXON_U64;
    case at::kFloat8_e4m3fn:
      return AXON_F8E4M3;
    case at::kFloat8_e5m2:
      return AXON_F8E5M2;
    default:
      TORCH_CHECK_NOT_IMPLEMENTED(false, "axon: dtype ", type,
                                  " is not supported on the axon device");
  }
}

void check_dtype_supported(at::ScalarType type, c10::DeviceIndex device) {
  axon_dtype d = to_axon_dtype(type);
  if (axon_device_supports_dtype(device, d)) return;
  // Not the dtype's fault when there is no such device (a CPU tensor reached an axon op) or
  // the device cannot be used (a forked child): say which.
  TORCH_CHECK(device >= 0,
              "Expected all tensors to be on the same device, but an axon op was "
              "given a ",
              type, " tensor on the cpu");
  axon_device_info info;
  axon_status_t st = axon_device_get_info(device, &info);
  TORCH_CHECK_INDEX(st != AXON_ERROR_INVALID_ARGUMENT, "axon: ", axon_last_error());
  if (st != AXON_SUCCESS) throw_status(st, "axon device");
  TORCH_CHECK_NOT_IMPLEMENTED(false, "axon: ", type, " is not supported on axon device ",
                              int(device),
                              " (the OpenCL device lacks cl_khr_fp64); Axon never downcasts "
                              "silently: convert the tensor to float32 first");
}

}  // namespace axon
