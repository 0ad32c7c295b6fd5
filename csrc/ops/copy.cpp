// Factories, views, storage, copies and the counted CPU fallback. Shape logic comes from
// ATen; data movement runs in the runtime.
#include <ATen/EmptyTensor.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>
#include <torch/library.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "axon_glue.h"

namespace axon {

// ---- descriptors --------------------------------------------------------------------------------

namespace {}  // namespace

void set_scalar(axon_ew_desc& d, int k, const at::Scalar& v) {
  d.is_scalar[k] = 1;
  if (v.isComplex()) {
    c10::complex<double> z = v.toComplexDouble();
    d.scalars[k] = z.real();
    d.scalars_imag[k] = z.imag();
    d.iscalars[k] = int64_t(z.real());
    return;
  }
  d.scalars[k] = v.isBoolean() ? double(v.toBool()) : v.toDouble();
  d.iscalars[k] = v.isFloatingPoint() ? int64_t(v.toDouble()) : v.toLong();
}

axon_ew_desc make_ew_desc(const at::TensorIteratorBase& iter) {
  axon_ew_desc d{};
  TORCH_CHECK_NOT_IMPLEMENTED(iter.ndim() <= AXON_MAX_DIMS,
                              "axon: elementwise ops support at most ", AXON_MAX_DIMS,
                              " dimensions after coalescing, got ", iter.ndim());
  TORCH_INTERNAL_ASSERT(iter.ntensors() <= AXON_MAX_OPERANDS && iter.noutputs() == 1);
  d.ndim = int(iter.ndim());
  d.ninputs = iter.ninputs();
  for (int i = 0; i < d.ndim; i++) d.sizes[i] = iter.shape()[i];
  for (int k = 0; k < iter.ntensors(); k++) {
    if (k > 0 && iter.is_cpu_scalar(k)) {
      set_scalar(d, k, iter.tensor(k).item());
      continue;
    }
    int64_t elem = int64_t(iter.element_size(k));
    for (int i = 0; i < d.ndim; i++) d.strides[k][i] = iter.strides(k)[i] / elem;
    d.data[k] = iter.data_ptr(k);
  }
  return d;
}

axon_ew_desc make_ew_desc_same_shape(const at::Tensor& out,
                                     std::initializer_list<at::Tensor> inputs, bool merge_dims) {
  axon_ew_desc d{};
  std::vector<at::Tensor> operands{out};
  operands.insert(operands.end(), inputs.begin(), inputs.end());
  d.ninputs = int(inputs.size());
  // Runtime dimension 0 is the fastest: torch's order reversed. With merge_dims, size-1 dims
  // are dropped and a dim merges into the one inside it where it walks every operand as one (a
  // contiguous 14-d tensor is one dim), so shapes of up to PyTorch's 64 dims fit AXON_MAX_DIMS
  // whenever they can; the linear position of every element stays the same.
  for (int64_t dim = out.dim() - 1; dim >= 0; dim--) {
    int64_t size = out.size(dim);
    if (merge_dims && size == 1) continue;
    bool merges = merge_dims && d.ndim > 0;
    for (size_t k = 0; k < operands.size() && merges; k++)
      merges = operands[k].stride(dim) == d.strides[k][d.ndim - 1] * d.sizes[d.ndim - 1];
    if (merges) {
      d.sizes[d.ndim - 1] *= size;
      continue;
    }
    TORCH_CHECK_NOT_IMPLEMENTED(d.ndim < AXON_MAX_DIMS, "axon: at most ", AXON_MAX_DIMS, " dims",
                                merge_dims ? " after merging those laid out as one" : "",
                                "; this operation has ", out.dim());
    d.sizes[d.ndim] = size;
    for (size_t k = 0; k < operands.size(); k++) d.strides[k][d.ndim] = operands[k].stride(dim);
    d.ndim++;
  }
  for (size_t k = 0; k < operands.size(); k++) d.data[k] = operands[k].data_ptr();
  return d;
}

// ---- factories and storage
// --------------------------------------------------------------------------

namespace {

c10::DispatchKeySet axon_keys() {
  return c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
}

c10::DeviceIndex index_of(std::optional<at::Device> device) {
  return device.has_value() && device->has_index() ? device->index() : current_device();
}

at::Tensor empty_memory_format(at::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout> layout, std::optional<at::Device> device,
                               std::optional<bool> /*pin_memory*/,
                               std::optional<at::MemoryFormat> memory_format) {
  TORCH_CHECK_NOT_IMPLEMENTED(!layout.has_value() || *layout == at::kStrided, "axon: layout ",
                              layout.value_or(at::kStrided),
                              " (sparse, mkldnn ...) is not supported; only strided tensors");
  c10::DeviceIndex index = index_of(device);
  at::ScalarType type = dtype.value_or(at::get_default_dtype_as_scalartype());
  check_dtype_supported(type, index);
  c10::DeviceGuard guard(at::Device(c10::kPrivateUse1, index));
  return at::detail::empty_generic(size, device_allocator(), axon_keys(), type, memory_format);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride,
                         std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                         std::optional<at::Device> device, std::optional<bool> /*pin_memory*/) {
  TORCH_CHECK_NOT_IMPLEMENTED(!layout.has_value() || *layout == at::kStrided,
                              "axon: only strided tensors are supported");
  c10::DeviceIndex index = index_of(device);
  at::ScalarType type = dtype.value_or(at::get_default_dtype_as_scalartype());
  check_dtype_supported(type, index);
  c10::DeviceGuard guard(at::Device(c10::kPrivateUse1, index));
  return at::detail::empty_strided_generic(size, stride, device_allocator(), axon_keys(), type);
}

const at::Tensor& resize_(const at::Tensor& self, at::IntArrayRef size,
                          std::optional<at::MemoryFormat> memory_format) {
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_sizes_contiguous(size);
  if (impl->numel() > 0) {
    size_t bytes = at::detail::computeStorageNbytesContiguous(size, self.dtype().itemsize(),
                                                              size_t(self.storage_offset()));
    if (bytes > self.storage().nbytes()) {
      c10::DeviceGuard guard(self.device());
      at::native::resize_bytes_nocuda(self.storage(), c10::SymInt(int64_t(bytes)));
    }
  }
  if (memory_format.has_value() && *memory_format != at::MemoryFormat::Preserve)
    impl->empty_tensor_restride(*memory_format);
  return self;
}

at::Tensor& set_storage(at::Tensor& self, at::Storage source, int64_t offset, at::IntArrayRef size,
                        at::IntArrayRef stride) {
  at::native::checkSetStorage(self, std::move(source), offset, size, stride);
  self.unsafeGetTensorImpl()->set_storage_offset(offset);
  std::optional<at::IntArrayRef> strides;
  if (!stride.empty()) strides = stride;
  at::native::resize_impl_cpu_(self.unsafeGetTensorImpl(), size, strides, /*resize_storage=*/false);
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, at::Storage source) {
  int64_t n = int64_t(source.nbytes() / self.dtype().itemsize());
  return set_storage(self, std::move(source), 0, {n}, {});
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) {
  if (self.is_same(source)) return self;
  return set_storage(self, source.storage(), source.storage_offset(), source.sizes(),
                     source.strides());
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::DeviceGuard guard(self.device());
  at::Storage storage(at::Storage::use_byte_size_t(), 0, device_allocator(), true);
  return set_storage(self, std::move(storage), 0, {0}, {});
}

// ---- fill, arange
// ---------------------------------------------------------------------------------------

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  if (self.numel() == 0) return self;
  axon_ew_desc d = make_ew_desc_same_shape(self, {}, true);
  d.ninputs = 0;
  set_scalar(d, 1, value);
  axon_dtype t = to_axon_dtype(self.scalar_type());
  AXON_CHECK(axon_elementwise(stream_for(self), AXON_PW_fill, t, t, &d, 0, 0));
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  return fill_scalar(self, value.item());
}

at::Tensor& zero_(at::Tensor& self) {
  return fill_scalar(self, 0);
}

at::Tensor& arange_out(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step,
                       at::Tensor& out) {
  double s = start.toDouble(), e = end.toDouble(), st = step.toDouble();
  TORCH_CHECK(st != 0, "step must be nonzero");
  TORCH_CHECK(std::isfinite(s) && std::isfinite(e), "unsupported range: ", s, " -> ", e);
  TORCH_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
              "upper bound and larger bound inconsistent with step sign");
  int64_t n = at::isIntegralType(out.scalar_type(), true) && start.isIntegral(true) &&
                      end.isIntegral(true) && step.isIntegral(true)
                  ? (end.toLong() - start.toLong() + step.toLong() - (step.toLong() > 0 ? 1 : -1)) /
                        step.toLong()
                  : int64_t(std::ceil((e - s) / st));
  if (out.numel() != n) out.resize_({n});
  if (n == 0) return out;
  axon_ew_desc d = make_ew_desc_same_shape(out, {}, true);
  d.ninputs = 0;
  axon_dtype t = to_axon_dtype(out.scalar_type());
  AXON_CHECK(axon_elementwise(stream_for(out), AXON_PW_arange, t, t, &d, s, st));
  return out;
}

// ---- copies
// ----------------------------------------------------------------------------------------------

bool is_axon(const at::Tensor& t) {
  return t.device().type() == c10::kPrivateUse1;
}

// Whether a tensor's elements fill [data_ptr, data_ptr + nbytes) exactly.
bool is_dense(const at::Tensor& t) {
  return t.is_non_overlapping_and_dense();
}

// dst = src (both on axon, same device), any strides and dtypes, src broadcast to dst.
void device_to_device(const at::Tensor& dst, const at::Tensor& src) {
  if (dst.numel() == 0) return;
  axon_stream_t stream = stream_for(dst);
  if (src.dtype() == dst.dtype() && src.sizes() == dst.sizes() && src.strides() == dst.strides() &&
      is_dense(dst)) {
    AXON_CHECK(axon_copy_d2d(dst.data_ptr(), src.data_ptr(), size_t(dst.nbytes()), stream));
    return;
  }
  check_dtype_supported(dst.scalar_type(), dst.device().index());
  auto iter = at::TensorIteratorConfig()
                  .add_output(dst)
                  .add_const_input(src)
                  .resize_outputs(false)
                  .check_all_same_dtype(false)
                  .check_all_same_device(false)
                  .set_check_mem_overlap(false)
                  .build();
  axon_ew_desc d = make_ew_desc(iter);
  AXON_CHECK(
      axon_cast(stream, to_axon_dtype(src.scalar_type()), to_axon_dtype(dst.scalar_type()), &d));
}

void host_to_device(const at::Tensor& dst, const at::Tensor& src, bool non_blocking) {
  if (!is_dense(dst)) {
    at::Tensor staging = at::empty(dst.sizes(), dst.options());
    host_to_device(staging, src, non_blocking);
    device_to_device(dst, staging);
    return;
  }
  // A CPU tensor with exactly dst's layout and dtype, whose bytes go over unchanged.
  at::Tensor host = src;
  if (src.dtype() != dst.dtype() || src.sizes() != dst.sizes() || src.strides() != dst.strides()) {
    host = at::empty_strided(dst.sizes(), dst.strides(), src.options().dtype(dst.dtype()));
    host.copy_(src);
  }
  bool async = non_blocking && at::detail::getPrivateUse1Hooks().isPinnedPtr(host.data_ptr());
  axon_stream_t stream = stream_for(dst);
  AXON_CHECK(axon_copy_h2d(dst.data_ptr(), host.data_ptr(), size_t(dst.nbytes()), stream, !async));
  if (async) record_pinned_use(host.storage().data(), stream);
}

void device_to_host(const at::Tensor& dst, const at::Tensor& src, bool non_blocking) {
  at::Tensor dense = is_dense(src) ? src : src.contiguous();
  bool direct = dst.dtype() == dense.dtype() && dst.sizes() == dense.sizes() &&
                dst.strides() == dense.strides();
  at::Tensor host = direct ? dst
                           : at::empty_strided(dense.sizes(), dense.strides(),
                                               dst.options().dtype(dense.dtype()));
  bool async =
      direct && non_blocking && at::detail::getPrivateUse1Hooks().isPinnedPtr(host.data_ptr());
  axon_stream_t stream = stream_for(dense);
  AXON_CHECK(
      axon_copy_d2h(host.data_ptr(), dense.data_ptr(), size_t(dense.nbytes()), stream, !async));
  if (async) record_pinned_use(host.storage().data(), stream);
  if (!direct) dst.copy_(host);
}

// The same memory without the lazy conjugate and negative bits (views that toggle them).
at::Tensor without_math_bits(const at::Tensor& t) {
  at::Tensor raw = t.is_conj() ? t.conj() : t;
  return raw.is_neg() ? raw._neg_view() : raw;
}

void copy_raw(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  TORCH_CHECK_NOT_IMPLEMENTED(
      has_axon_dtype(self.scalar_type()) && has_axon_dtype(dst.scalar_type()),
      "axon: copy between ", self.scalar_type(), " and ", dst.scalar_type(),
      " is not supported (quantized and other dtypes axon lacks are not yet)");
  // The checks copy_ makes for CPU tensors (through TensorIterator), which the _copy_from
  // route skips: no element of dst written twice, no partial overlap of dst and self.
  at::assert_no_internal_overlap(dst);
  at::assert_no_partial_overlap(dst, self);
  if (self.is_complex() && !dst.is_complex()) {
    TORCH_WARN_ONCE("Casting complex values to real discards the imaginary part");
  }
  if (is_axon(self) && is_axon(dst)) {
    if (self.device() == dst.device()) {
      device_to_device(dst, self);
    } else {
      // Across devices: wait for the source's work, move its bytes, convert on dst's device.
      at::Tensor dense = is_dense(self) ? self : self.contiguous();
      AXON_CHECK(axon_stream_sync(stream_for(dense)));
      c10::DeviceGuard guard(dst.device());
      at::Tensor moved =
          at::empty_strided(dense.sizes(), dense.strides(), dst.options().dtype(dense.dtype()));
      AXON_CHECK(axon_copy_d2d(moved.data_ptr(), dense.data_ptr(), size_t(dense.nbytes()),
                               stream_for(moved)));
      // The copy runs on dst's queue but reads self's memory, which self's allocator hands out
      // again as soon as self is freed, in order with self's stream only: wait for the copy, or
      // a later op on self's device may overwrite the bytes before they are read (two threads
      // driving two devices got wrong values about one run in three).
      AXON_CHECK(axon_stream_sync(stream_for(moved)));
      device_to_device(dst, moved);
    }
  } else if (is_axon(dst)) {
    TORCH_CHECK(self.is_cpu(), "axon: cannot copy from ", self.device(), " to ", dst.device());
    c10::DeviceGuard guard(dst.device());
    host_to_device(dst, self.expand_as(dst), non_blocking);
  } else {
    TORCH_CHECK(dst.is_cpu(), "axon: cannot copy from ", self.device(), " to ", dst.device());
    c10::DeviceGuard guard(self.device());
    device_to_host(dst, self.expand_as(dst), non_blocking);
  }
}

// copy_'s route for axon (ATen's copy_ hands over to _copy_from for backends outside the
// tree): the elements move as stored, then dst's memory is conjugated or negated where the
// lazy bits of source and destination differ. _copy_from passes through the Conjugate and
// Negative keys (registered below): their fallback would materialise the source with clone,
// which copies through here again.
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  if (dst.numel() == 0) return dst;
  at::Tensor raw = without_math_bits(dst);
  copy_raw(without_math_bits(self), raw, non_blocking);
  if (self.is_conj() != dst.is_conj()) raw.conj_physical_();
  if (self.is_neg() != dst.is_neg()) raw.neg_();
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  TORCH_CHECK(self.numel() == 1, "a Tensor with ", self.numel(),
              " elements cannot be converted to Scalar");
  at::Tensor host = at::empty({}, self.options().device(at::kCPU));
  c10::DeviceGuard guard(self.device());
  AXON_CHECK(axon_copy_d2h(host.data_ptr(), self.data_ptr(), self.dtype().itemsize(),
                           stream_for(self), 1));
  return host.item();
}

// _assert_async: CUDA checks the element on the device and reports at the next synchronisation.
// OpenCL has no device-side assert, so the element is read back (a wait for its stream, as
// .item() is) and checked here, with the CPU's messages.
void assert_async(const at::Tensor& self) {
  TORCH_CHECK(at::is_nonzero(self), "Expected Tensor with single nonzero value, but got zero");
}

void assert_async_msg(const at::Tensor& self, c10::string_view message) {
  TORCH_CHECK(at::is_nonzero(self), message.empty() ? "Assertion is failed" : std::string(message));
}

// ---- the counted CPU fallback
// ---------------------------------------------------------------------

enum class FallbackMode { Warn, Silent, Error };

FallbackMode fallback_mode() {
  static FallbackMode mode = [] {
    const char* env = std::getenv("AXON_FALLBACK");
    std::string v = env ? env : "warn";
    if (v == "silent") return FallbackMode::Silent;
    if (v == "error") return FallbackMode::Error;
    return FallbackMode::Warn;
  }();
  return mode;
}

std::mutex fallback_mutex;
std::map<std::string, int64_t> fallback_counts;
std::set<std::string> fallback_warned;

// CUDA's device check for an op that falls back (device_check.h): a CPU tensor among the
// arguments of an op whose CUDA kernel checks devices, or any CPU out= tensor, raises before the
// CPU kernel could write into it.
void check_fallback_devices(const c10::OperatorHandle& op, const std::string& key,
                            const torch::jit::Stack& stack) {
  const auto& arguments = op.schema().arguments();
  auto first = stack.end() - static_cast<std::ptrdiff_t>(arguments.size());
  auto tensors = [](const c10::IValue& v) {
    std::vector<at::Tensor> found;
    if (v.isTensor()) found.push_back(v.toTensor());
    if (v.isTensorList())
      for (const at::Tensor& t : v.toTensorVector()) found.push_back(t);
    return found;
  };
  std::optional<c10::Device> device;
  for (size_t i = 0; i < arguments.size() && !device; i++)
    for (const at::Tensor& t : tensors(first[i]))
      if (t.defined() && t.device().type() == c10::DeviceType::PrivateUse1) device = t.device();
  if (!device) return;
  bool checked = cuda_checks_devices(key);
  for (size_t i = 0; i < arguments.size(); i++)
    for (const at::Tensor& t : tensors(first[i])) {
      bool cpu_scalar = t.defined() && t.is_cpu() && t.dim() == 0 && !arguments[i].is_out();
      if (t.defined() && t.device() != *device && !cpu_scalar && (checked || arguments[i].is_out()))
        device_mismatch(key, i, *device, t.device());
    }
}

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& name = op.schema().operator_name();
  std::string key = name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
  check_fallback_devices(op, key, *stack);
  // Ops with kernels for accelerators only (CUDA's fused cells, say) cannot run on the CPU: say
  // so, instead of the dispatcher's "could not run ... with arguments from the 'CPU' backend".
  TORCH_CHECK_NOT_IMPLEMENTED(op.hasKernelForDispatchKey(c10::DispatchKey::CPU), "axon: ", key,
                              " has no native axon kernel, and PyTorch's CPU backend has none "
                              "either, so the CPU fallback cannot run it");
  bool warn = false;
  {
    std::lock_guard<std::mutex> guard(fallback_mutex);
    fallback_counts[key]++;
    if (fallback_mode() == FallbackMode::Warn) warn = fallback_warned.insert(key).second;
  }
  TORCH_CHECK_NOT_IMPLEMENTED(fallback_mode() != FallbackMode::Error, "axon: ", key,
                              " has no native axon kernel and AXON_FALLBACK=error forbids "
                              "running it on the CPU");
  if (warn)
    TORCH_WARN("axon: ", key,
               " has no native kernel yet; it runs on the CPU (copies to and "
               "from the device). See torch.axon.fallback_ops(); AXON_FALLBACK=silent hides this.");
  at::native::cpu_fallback(op, stack);
}

// tensor.record_stream(s): the allocator keeps the tensor's block out of reuse until the work
// queued on `s` so far has finished, as CUDA's caching allocator does.
void record_stream(at::Tensor& self, at::Stream stream) {
  TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1,
              "record_stream: expected an axon stream, got one on ", stream.device());
  TORCH_CHECK(stream.device() == self.device(), "record_stream: the stream is on ", stream.device(),
              " but the tensor is on ", self.device());
  void* base = self.storage().mutable_data();
  if (base) AXON_CHECK(axon_record_stream(base, runtime_stream(stream)));
}

// Whether `self` may take over `from`'s storage by `param.data = from` (Module.to() does this so
// that a Parameter keeps its identity: tied weights stay tied). c10's built-in answer knows only
// the in-tree dense backends; CPU and axon strided tensors are just as compatible.
bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  auto dense = [](const at::Tensor& t) {
    return t.layout() == at::kStrided &&
           (t.is_cpu() || t.device().type() == c10::DeviceType::PrivateUse1);
  };
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set()) ||
         (dense(self) && dense(from));
}

}  // namespace

// The counted fallback for glue that declines an op at run time (ops/linalg.cpp on devices
// that run no host tasks); declared where it is used, to keep axon_glue.h unchanged.
void counted_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  cpu_fallback(op, stack);
}

std::map<std::string, int64_t> fallback_ops(bool reset) {
  std::lock_guard<std::mutex> guard(fallback_mutex);
  auto copy = fallback_counts;
  if (reset) fallback_counts.clear();
  return copy;
}

AXON_ATEN_IMPL(m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("as_strided", at::native::as_strided_tensorimpl);
  m.impl("view", at::native::view);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  m.impl("resize_", resize_);
  m.impl("set_.source_Storage_storage_offset", set_storage);
  m.impl("set_.source_Storage", set_source_storage);
  m.impl("set_.source_Tensor", set_source_tensor);
  m.impl("set_", set_empty);
  m.impl("fill_.Scalar", fill_scalar);
  m.impl("fill_.Tensor", fill_tensor);
  m.impl("zero_", zero_);
  m.impl("arange.start_out", arange_out);
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
  m.impl("_local_scalar_dense", local_scalar_dense);
  m.impl("_assert_async", assert_async);
  m.impl("_assert_async.msg", assert_async_msg);
  m.impl("record_stream", record_stream);
  m.impl("_has_compatible_shallow_copy_type", has_compatible_shallow_copy_type);
}

TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

}  // namespace axon
