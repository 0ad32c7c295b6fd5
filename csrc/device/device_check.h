// The device check CUDA's kernels make: an ATen op whose tensors are on different devices
// raises "Expected all tensors to be on the same device", naming both devices and the
// argument. PyTorch generates the check into each CUDA kernel's wrapper; Axon registers its
// kernels by hand, so AXON_ATEN_IMPL gives the registration block a library whose impl() wraps
// each function of an op that CUDA checks (scripts/gen_device_checks.py lists them from
// native_functions.yaml) in the same check. Ops that take CPU scalars or work across devices
// (copies, TensorIterator ops, indexing) are NoCheck there and stay unwrapped; so do kernels
// given as lambdas with captures or as TORCH_FN (a captureless lambda is wrapped as a function).
#pragma once

#include <ATen/ATen.h>
#include <torch/library.h>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace axon {

// Whether CUDA checks the devices of `op` ("gather.out", "index_select").
bool cuda_checks_devices(const std::string& op);
// TensorIterator's check, for the kernels of NoCheck ops that build no iterator (reductions,
// scans, softmax): `other` on `first`'s device.
void check_same_device(const at::Tensor& first, const at::Tensor& other);
[[noreturn]] void device_mismatch(const std::string& op, size_t argument, c10::Device first,
                                  c10::Device other);

// Visits an op's arguments in order; the first tensor's device is the one the others must share.
class DeviceCheck {
 public:
  explicit DeviceCheck(const std::string& op) : op_(op) {}
  void add(const at::Tensor& t) { see(t, argument_++); }
  void add(const std::optional<at::Tensor>& t) {
    if (t.has_value()) see(*t, argument_);
    argument_++;
  }
  void add(at::TensorList list) {
    for (const at::Tensor& t : list) see(t, argument_);
    argument_++;
  }
  void add(const at::ITensorListRef& list) {
    for (const at::Tensor& t : list) see(t, argument_);
    argument_++;
  }
  void add(const c10::List<std::optional<at::Tensor>>& list) {
    for (const std::optional<at::Tensor>& t : list)
      if (t.has_value()) see(*t, argument_);
    argument_++;
  }
  template <class T>
  void add(const T&) {
    argument_++;
  }

 private:
  void see(const at::Tensor& t, size_t argument) {
    if (!t.defined()) return;
    if (!first_) {
      first_ = t.device();
    } else if (*first_ != t.device()) {
      device_mismatch(op_, argument, *first_, t.device());
    }
  }
  const std::string& op_;
  std::optional<c10::Device> first_;
  size_t argument_ = 0;
};

// The function pointer a kernel converts to (a function, or a lambda without captures), else void.
template <class F, class = void>
struct FunctionPointerOf {
  using type = void;
};
template <class F>
struct FunctionPointerOf<F, std::void_t<decltype(+std::declval<F>())>> {
  using type = decltype(+std::declval<F>());
};

class CheckedLibrary {
 public:
  explicit CheckedLibrary(torch::Library& library) : library_(library) {}

  template <class Fn>
  CheckedLibrary& impl(const char* name, Fn&& fn) {
    using P = typename FunctionPointerOf<std::decay_t<Fn>>::type;
    if constexpr (std::is_pointer_v<P> && std::is_function_v<std::remove_pointer_t<P>>) {
      if (cuda_checks_devices(name)) {
        library_.impl(name, checked(name, P(+fn)));
        return *this;
      }
    }
    library_.impl(name, std::forward<Fn>(fn));
    return *this;
  }

 private:
  template <class R, class... Args>
  static auto checked(std::string op, R (*fn)(Args...)) {
    return [op = std::move(op), fn](Args... args) -> R {
      DeviceCheck check(op);
      (check.add(args), ...);
      return fn(std::forward<Args>(args)...);
    };
  }
  torch::Library& library_;
};

}  // namespace axon

// TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) with `m` an axon::CheckedLibrary.
#define AXON_ATEN_IMPL(m) AXON_ATEN_IMPL_(m, C10_UID)
#define AXON_ATEN_IMPL_(m, uid) AXON_ATEN_IMPL__(m, uid)
#define AXON_ATEN_IMPL__(m, uid)                                                    \
  static void C10_CONCATENATE(axon_aten_impl_, uid)(::axon::CheckedLibrary & m);    \
  TORCH_LIBRARY_IMPL(aten, PrivateUse1, C10_CONCATENATE(axon_aten_library_, uid)) { \
    ::axon::CheckedLibrary checked(C10_CONCATENATE(axon_aten_library_, uid));       \
    C10_CONCATENATE(axon_aten_impl_, uid)(checked);                                 \
  }                                                                                 \
  static void C10_CONCATENATE(axon_aten_impl_, uid)(::axon::CheckedLibrary & m)
