// The list of ops CUDA checks and the error it raises (device_check.h).
#include "device/device_check.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <string_view>
#include <unordered_set>

namespace axon {

bool cuda_checks_devices(const std::string& op) {
  static const std::unordered_set<std::string_view> ops = {
#include "axon_device_checked_ops.inc"
  };
  return ops.count(op) != 0;
}

// The argument's name from the op's schema, as CUDA's message gives it.
static std::string argument_name(const std::string& op, size_t argument) {
  size_t dot = op.find('.');
  std::string name = op.substr(0, dot),
              overload = dot == std::string::npos ? "" : op.substr(dot + 1);
  auto handle = c10::Dispatcher::singleton().findSchema({"aten::" + name, overload});
  if (handle && argument < handle->schema().arguments().size())
    return handle->schema().arguments()[argument].name();
  return "#" + std::to_string(argument);
}

void check_same_device(const at::Tensor& first, const at::Tensor& other) {
  TORCH_CHECK(first.device() == other.device(),
              "Expected all tensors to be on the same device, but found at least two devices, ",
              first.device(), " and ", other.device(), "!");
}

void device_mismatch(const std::string& op, size_t argument, c10::Device first, c10::Device other) {
  TORCH_CHECK(false,
              "Expected all tensors to be on the same device, but found at least two devices, ",
              first, " and ", other, "! (when checking argument for argument ",
              argument_name(op, argument), " in method wrapper_PrivateUse1_", op, ")");
}

}  // namespace axon
