// Shared by the glue files: turning runtime statuses into torch exceptions, dtypes, streams,
// and the descriptors the runtime's operator launchers take. No arithmetic lives here.
#pragma once

#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <c10/core/Stream.h>
#include <c10/util/Exception.h>

#include <map>
#include <string>

#include "device/device_check.h"

extern "C" {
#include "axon/axon.h"
}

namespace axon {

// The one place a runtime status becomes a C++ exception (out of memory becomes
// torch.OutOfMemoryError, an unsupported dtype a TypeError-like NotImplementedError).
[[noreturn]] void throw_status(axon_status_t status, const char* what);

#define AXON_CHECK(call)                                                                     \
  do {                                                                                       \
    axon_status_t axon_check_status_ = (call);                                               \
    if (axon_check_status_ != AXON_SUCCESS) ::axon::throw_status(axon_check_status_, #call); \
  } while (0)

// torch dtype -> runtime dtype; throws for dtypes the runtime lacks (complex, quantized ...).
axon_dtype to_axon_dtype(at::ScalarType type);
bool has_axon_dtype(at::ScalarType type);
// Throws unless the tensor's device can hold the dtype (float64 needs cl_khr_fp64).
void check_dtype_supported(at::ScalarType type, c10::DeviceIndex device);

// Streams: c10::Stream ids map to runtime streams. Id 0 is each device's default stream.
axon_stream_t runtime_stream(const c10::Stream& stream);
c10::Stream current_stream(c10::DeviceIndex device);
axon_stream_t current_runtime_stream(c10::DeviceIndex device);
c10::DeviceIndex current_device();
c10::DeviceIndex device_count();

// The runtime stream of the current stream on the tensor's device.
inline axon_stream_t stream_for(const at::Tensor& t) {
  return current_runtime_stream(t.device().index());
}

// Allocator and generator singletons (device/allocators.cpp, device/generator.cpp).
at::Allocator* device_allocator();
// An asynchronous copy on `stream` uses the pinned block starting at `base`.
void record_pinned_use(const void* base, axon_stream_t stream);
at::Generator default_generator(c10::DeviceIndex device);
// Reserves `increment` counter values of a generator; returns (seed, offset).
std::pair<uint64_t, uint64_t> philox_reserve(const std::optional<at::Generator>& gen,
                                             c10::DeviceIndex device, uint64_t increment);

// Elementwise descriptor of an iterator built over axon tensors (CPU scalars become scalar
// arguments). Operand 0 is the output.
axon_ew_desc make_ew_desc(const at::TensorIteratorBase& iter);
// Operand k of an elementwise descriptor is the scalar v (complex values keep their
// imaginary part).
void set_scalar(axon_ew_desc& d, int k, const at::Scalar& v);
// The same for explicitly given tensors of one shape (no broadcasting): out, then inputs. With
// merge_dims, dims laid out as one in every operand merge (for ops that see elements only by
// their linear position, not by their coordinates), so more than AXON_MAX_DIMS dims fit.
axon_ew_desc make_ew_desc_same_shape(const at::Tensor& out,
                                     std::initializer_list<at::Tensor> inputs,
                                     bool merge_dims = false);

// A borrowed operand: a braced list of these (`{a, b}`) passes tensors without copying them.
// Copying a Tensor that Python holds takes the GIL to keep its Python object alive, a measurable
// share of a small op's host time. A list may borrow temporaries: they live until the end of the
// call's full expression, and no list is kept past the call.
class TensorRef {
 public:
  TensorRef(const at::Tensor& t) : t_(&t) {}  // NOLINT(google-explicit-constructor)
  operator const at::Tensor&() const { return *t_; }

 private:
  const at::Tensor* t_;
};
using TensorRefs = std::initializer_list<TensorRef>;

// Elementwise registrations (ops/elementwise.cpp). The compute dtype follows ATen's type
// promotion; IntToFloat makes integer inputs compute in the default float type.
enum class Promote { Same, IntToFloat };
// The op's natural output: the compute dtype, bool for predicates, or the complex type whose
// parts the compute dtype is (complex(), polar()).
enum class Output { Compute, Bool, Complex };
at::ScalarType compute_type(TensorRefs inputs, std::initializer_list<at::Scalar> scalars,
                            Promote promote);
// Runs pointwise op `op` (a row of the pointwise table, runtime/kernels/pointwise_ops.def)
// over out = op(inputs..., scalars...): broadcasting, strides
// and CPU scalars through TensorIterator; extra scalars follow the tensors as scalar inputs;
// an output of another dtype than the natural one gets a converted copy.
at::Tensor& run_elementwise(axon_pointwise_op op, at::Tensor& out, TensorRefs inputs,
                            at::ScalarType compute, Output kind = Output::Compute, double alpha = 0,
                            double beta = 0, std::initializer_list<at::Scalar> scalars = {});
at::Tensor& unary(axon_pointwise_op op, const at::Tensor& self, at::Tensor& out, Promote promote,
                  double alpha = 0, double beta = 0);
at::Tensor& binary(axon_pointwise_op op, const at::Tensor& a, const at::Tensor& b, at::Tensor& out,
                   Promote promote = Promote::Same, double alpha = 0, double beta = 0);
// Comparisons writing bool (the inputs promoted to one type), against a tensor or a scalar.
at::Tensor& compare(axon_pointwise_op op, const at::Tensor& a, const at::Tensor& b,
                    at::Tensor& out);
at::Tensor& compare_scalar(axon_pointwise_op op, const at::Tensor& a, const at::Scalar& b,
                           at::Tensor& out);
// Predicates that are false for every integer (isnan, isposinf ...): bool, in the input's type.
at::Tensor& predicate(axon_pointwise_op op, const at::Tensor& self, at::Tensor& out);

// Per-op counts of the CPU fallback since the last reset (ops/copy.cpp).
std::map<std::string, int64_t> fallback_ops(bool reset);

}  // namespace axon
