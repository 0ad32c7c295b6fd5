// The runtime side of the PrivateUse1 device: errors, dtypes, streams and events (device
// guard), the device allocator, the pinned host allocator, the generator and the hooks.
#include <ATen/core/CachingHostAllocator.h>
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/GeneratorImpl.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <array>
#include <mutex>
#include <unordered_map>
#include <vector>

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
  TORCH_CHECK_NOT_IMPLEMENTED(axon_device_supports_dtype(device, d), "axon: ", type,
                              " is not supported on axon device ", int(device),
                              " (the OpenCL device lacks cl_khr_fp64); Axon never downcasts "
                              "silently: convert the tensor to float32 first");
}

// ---- devices and streams ------------------------------------------------------------------

namespace {

constexpr int kMaxDevices = 16;
constexpr int kPoolSize = 4;

std::mutex stream_mutex;
std::vector<axon_stream_t> created_streams;  // id k (k >= 1) is created_streams[k - 1]
std::array<std::array<c10::StreamId, kPoolSize>, kMaxDevices> pool_ids{};
std::array<int, kMaxDevices> pool_next{};
thread_local std::array<c10::StreamId, kMaxDevices> current_ids{};
thread_local c10::DeviceIndex current_index = 0;

c10::StreamId register_stream(axon_stream_t s) {
  std::lock_guard<std::mutex> guard(stream_mutex);
  created_streams.push_back(s);
  return static_cast<c10::StreamId>(created_streams.size());
}

c10::StreamId new_stream_id(c10::DeviceIndex device) {
  axon_stream_t s;
  AXON_CHECK(axon_stream_create(device, &s));
  return register_stream(s);
}

}  // namespace

c10::DeviceIndex device_count() {
  int n = 0;
  if (axon_device_count(&n) != AXON_SUCCESS) return 0;
  return static_cast<c10::DeviceIndex>(std::min(n, kMaxDevices));
}

c10::DeviceIndex current_device() {
  return current_index;
}

axon_stream_t runtime_stream(const c10::Stream& stream) {
  if (stream.id() == 0) {
    axon_stream_t s;
    AXON_CHECK(axon_stream_default(stream.device_index(), &s));
    return s;
  }
  std::lock_guard<std::mutex> guard(stream_mutex);
  TORCH_CHECK(stream.id() > 0 && size_t(stream.id()) <= created_streams.size(),
              "axon: unknown stream id ", stream.id());
  return created_streams[size_t(stream.id() - 1)];
}

c10::Stream current_stream(c10::DeviceIndex device) {
  if (device < 0) device = current_index;
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::kPrivateUse1, device),
                     current_ids[size_t(device)]);
}

axon_stream_t current_runtime_stream(c10::DeviceIndex device) {
  if (current_ids[size_t(device)] == 0) {
    axon_stream_t s;
    AXON_CHECK(axon_stream_default(device, &s));
    return s;
  }
  return runtime_stream(current_stream(device));
}

namespace {

void check_index(c10::DeviceIndex index) {
  c10::DeviceIndex n = device_count();
  TORCH_CHECK_INDEX(index >= 0 && index < n, "axon: device index ", int(index),
                    " is out of range (", int(n), " axon device(s) available)");
}

// A device without an index (torch.Stream(device="axon")) means the current one.
c10::Device resolved(c10::Device d) {
  return d.has_index() ? d : c10::Device(c10::kPrivateUse1, current_index);
}

struct AxonGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return c10::kPrivateUse1; }

  c10::Device exchangeDevice(c10::Device d) const override {
    c10::Device old = getDevice();
    if (d.index() != old.index()) setDevice(d);
    return old;
  }
  c10::Device getDevice() const override { return c10::Device(c10::kPrivateUse1, current_index); }
  void setDevice(c10::Device d) const override {
    check_index(d.index());
    current_index = d.index();
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0) current_index = d.index();
  }
  c10::Stream getStream(c10::Device d) const override {
    return current_stream(resolved(d).index());
  }
  c10::Stream getDefaultStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::UNSAFE, resolved(d), 0);
  }
  c10::Stream getNewStream(c10::Device d, int /*priority*/) const override {
    d = resolved(d);
    return c10::Stream(c10::Stream::UNSAFE, d, new_stream_id(d.index()));
  }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool /*high_priority*/) const override {
    d = resolved(d);
    size_t dev = size_t(d.index());
    std::lock_guard<std::mutex> guard(stream_mutex);
    int slot = pool_next[dev]++ % kPoolSize;
    if (pool_ids[dev][size_t(slot)] == 0) {
      axon_stream_t s;
      AXON_CHECK(axon_stream_create(d.index(), &s));
      created_streams.push_back(s);
      pool_ids[dev][size_t(slot)] = static_cast<c10::StreamId>(created_streams.size());
    }
    return c10::Stream(c10::Stream::UNSAFE, d, pool_ids[dev][size_t(slot)]);
  }
  c10::Stream exchangeStream(c10::Stream s) const override {
    c10::Stream old = current_stream(s.device_index());
    current_ids[size_t(s.device_index())] = s.id();
    return old;
  }
  c10::DeviceIndex deviceCount() const noexcept override { return axon::device_count(); }

  bool queryStream(const c10::Stream& s) const override {
    int done = 0;
    AXON_CHECK(axon_stream_query(runtime_stream(s), &done));
    return done != 0;
  }
  void synchronizeStream(const c10::Stream& s) const override {
    AXON_CHECK(axon_stream_sync(runtime_stream(s)));
  }
  void synchronizeDevice(const c10::DeviceIndex index) const override {
    // Every stream of the device, not only the default one.
    AXON_CHECK(axon_device_sync(index));
    std::vector<axon_stream_t> streams;
    {
      std::lock_guard<std::mutex> guard(stream_mutex);
      streams = created_streams;
    }
    for (axon_stream_t s : streams)
      if (axon_stream_device(s) == index) AXON_CHECK(axon_stream_sync(s));
  }

  void record(void** event, const c10::Stream& s, const c10::DeviceIndex /*index*/,
              const c10::EventFlag /*flag*/) const override {
    if (!*event) {
      axon_event_t e;
      AXON_CHECK(axon_event_create(&e));
      *event = e;
    }
    AXON_CHECK(axon_event_record(static_cast<axon_event_t>(*event), runtime_stream(s)));
  }
  void block(void* event, const c10::Stream& s) const override {
    if (event)
      AXON_CHECK(axon_stream_wait_event(runtime_stream(s), static_cast<axon_event_t>(event)));
  }
  bool queryEvent(void* event) const override {
    int done = 1;
    if (event) AXON_CHECK(axon_event_query(static_cast<axon_event_t>(event), &done));
    return done != 0;
  }
  void destroyEvent(void* event, const c10::DeviceIndex /*index*/) const noexcept override {
    axon_event_destroy(static_cast<axon_event_t>(event));
  }
  void synchronizeEvent(void* event) const override {
    if (event) AXON_CHECK(axon_event_sync(static_cast<axon_event_t>(event)));
  }
  double elapsedTime(void* start, void* end, const c10::DeviceIndex /*index*/) const override {
    TORCH_CHECK(start && end, "axon: both events must be recorded before elapsed_time()");
    float ms = 0;
    AXON_CHECK(axon_event_elapsed_ms(static_cast<axon_event_t>(start),
                                     static_cast<axon_event_t>(end), &ms));
    return ms;
  }
  void recordDataPtrOnStream(const c10::DataPtr& ptr, const c10::Stream& s) const override {
    if (ptr.get()) AXON_CHECK(axon_record_stream(ptr.get(), runtime_stream(s)));
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, AxonGuardImpl);

// ---- device allocator ------------------------------------------------------------------------

void free_device_memory(void* ptr) {
  // A deleter cannot throw; a failure here would mean a corrupted allocator table.
  axon_status_t st = axon_free(ptr);
  if (st != AXON_SUCCESS) TORCH_WARN("axon: freeing device memory failed: ", axon_last_error());
}

struct AxonAllocator final : public c10::DeviceAllocator {
  c10::DataPtr allocate(size_t nbytes) override {
    c10::DeviceIndex device = current_index;
    void* ptr = nullptr;
    AXON_CHECK(axon_malloc(device, nbytes, current_runtime_stream(device), &ptr));
    return {ptr, ptr, &free_device_memory, c10::Device(c10::kPrivateUse1, device)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &free_device_memory; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    AXON_CHECK(axon_copy_d2d(dest, src, count, current_runtime_stream(current_index)));
  }
  bool initialized() override { return device_count() > 0; }
  void emptyCache(c10::MempoolId_t /*pool*/) override {
    for (c10::DeviceIndex i = 0; i < device_count(); i++) AXON_CHECK(axon_empty_cache(i));
  }
  void recordStream(const c10::DataPtr& ptr, c10::Stream s) override {
    if (ptr.get()) AXON_CHECK(axon_record_stream(ptr.get(), runtime_stream(s)));
  }
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    axon_memory_stats s;
    AXON_CHECK(axon_memory_stats_get(device, &s));
    c10::CachingDeviceAllocator::DeviceStats out;
    auto& agg_alloc = out.allocated_bytes[0];
    agg_alloc.current = int64_t(s.allocated_bytes);
    agg_alloc.peak = int64_t(s.allocated_peak);
    auto& agg_res = out.reserved_bytes[0];
    agg_res.current = int64_t(s.reserved_bytes);
    agg_res.peak = int64_t(s.reserved_peak);
    out.active_bytes[0] = agg_alloc;
    out.allocation[0].allocated = int64_t(s.alloc_count);
    out.allocation[0].freed = int64_t(s.free_count);
    out.allocation[0].current = int64_t(s.alloc_count - s.free_count);
    out.segment[0].current = int64_t(s.segment_count);
    out.num_ooms = int64_t(s.oom_count);
    return out;
  }
  void resetAccumulatedStats(c10::DeviceIndex /*device*/) override {}
  void resetPeakStats(c10::DeviceIndex device) override {
    AXON_CHECK(axon_memory_reset_peak(device));
  }
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    uint64_t free_bytes = 0, total = 0;
    AXON_CHECK(axon_memory_info(device, &free_bytes, &total));
    return {size_t(free_bytes), size_t(total)};
  }
};

AxonAllocator allocator_instance;
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &allocator_instance);

// ---- pinned host memory ------------------------------------------------------------------------

// Asynchronous copies still reading or writing a pinned block, by the block's base address:
// freeing waits for them, so a block is never reused under a copy in flight.
std::mutex pinned_mutex;
std::unordered_map<const void*, std::vector<axon_event_t>> pinned_uses;

void free_pinned(void* ptr) {
  std::vector<axon_event_t> events;
  {
    std::lock_guard<std::mutex> guard(pinned_mutex);
    auto it = pinned_uses.find(ptr);
    if (it != pinned_uses.end()) {
      events = std::move(it->second);
      pinned_uses.erase(it);
    }
  }
  for (axon_event_t e : events) {
    axon_event_sync(e);
    axon_event_destroy(e);
  }
  axon_host_free(ptr);
}

struct AxonHostAllocator final : public at::HostAllocator {
  c10::DataPtr allocate(size_t nbytes) override {
    void* ptr = nullptr;
    AXON_CHECK(axon_host_alloc(nbytes, &ptr));
    stats_.allocations.increase(1);
    stats_.allocated_bytes.increase(nbytes);
    return {ptr, ptr, &free_pinned, c10::Device(c10::kCPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &free_pinned; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
  bool record_event(void* ptr, void* /*ctx*/, c10::Stream s) override {
    record_pinned_use(ptr, runtime_stream(s));
    return true;
  }
  void empty_cache() override {}
  at::HostStats get_stats() override { return stats_; }
  void reset_accumulated_stats() override {}
  void reset_peak_stats() override {}

 private:
  at::HostStats stats_;
};

AxonHostAllocator host_allocator_instance;
REGISTER_HOST_ALLOCATOR(at::kPrivateUse1, &host_allocator_instance);

// ---- generator (Philox state: seed and offset, as CUDA's)
// ----------------------------------------

struct AxonGeneratorImpl final : public c10::GeneratorImpl {
  explicit AxonGeneratorImpl(c10::DeviceIndex device)
      : c10::GeneratorImpl(c10::Device(c10::kPrivateUse1, device),
                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)) {}
  void set_current_seed(uint64_t seed) override {
    seed_ = seed;
    offset_ = 0;
  }
  uint64_t current_seed() const override { return seed_; }
  uint64_t seed() override {
    set_current_seed(c10::detail::getNonDeterministicRandom(true));
    return seed_;
  }
  void set_offset(uint64_t offset) override { offset_ = offset; }
  uint64_t get_offset() const override { return offset_; }
  // State: 16 bytes, [uint64 seed, int64 offset], the layout DTensor's RNG tracker reads.
  void set_state(const c10::TensorImpl& state) override {
    TORCH_CHECK(state.numel() == 16 && state.dtype() == caffe2::TypeMeta::Make<uint8_t>(),
                "axon: RNG state must be a uint8 tensor of 16 bytes");
    const auto* bytes = static_cast<const uint8_t*>(state.data());
    std::memcpy(&seed_, bytes, 8);
    std::memcpy(&offset_, bytes + 8, 8);
  }
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override {
    auto t = at::empty({16}, at::kByte);
    std::memcpy(t.data_ptr<uint8_t>(), &seed_, 8);
    std::memcpy(t.data_ptr<uint8_t>() + 8, &offset_, 8);
    return t.getIntrusivePtr();
  }
  uint64_t reserve(uint64_t increment) {
    uint64_t at = offset_;
    offset_ += (increment + 3) / 4 * 4;
    return at;
  }
  static c10::DeviceType device_type() { return c10::kPrivateUse1; }

 private:
  AxonGeneratorImpl* clone_impl() const override {
    auto* g = new AxonGeneratorImpl(device().index());
    g->seed_ = seed_;
    g->offset_ = offset_;
    return g;
  }
  uint64_t seed_ = 67280421310721ull;  // CUDA's default seed
  uint64_t offset_ = 0;
};

std::mutex generator_mutex;
std::array<at::Generator, kMaxDevices> default_generators;

}  // namespace

at::Allocator* device_allocator() {
  return &allocator_instance;
}

void record_pinned_use(const void* base, axon_stream_t stream) {
  axon_event_t e;
  AXON_CHECK(axon_event_create(&e));
  axon_status_t st = axon_event_record(e, stream);
  if (st != AXON_SUCCESS) {
    axon_event_destroy(e);
    throw_status(st, "record pinned memory use");
  }
  std::lock_guard<std::mutex> guard(pinned_mutex);
  pinned_uses[base].push_back(e);
}

at::Generator default_generator(c10::DeviceIndex device) {
  if (device < 0) device = current_index;
  check_index(device);
  std::lock_guard<std::mutex> guard(generator_mutex);
  auto& g = default_generators[size_t(device)];
  if (!g.defined()) g = at::make_generator<AxonGeneratorImpl>(device);
  return g;
}

std::pair<uint64_t, uint64_t> philox_reserve(const std::optional<at::Generator>& gen,
                                             c10::DeviceIndex device, uint64_t increment) {
  at::Generator g = gen.has_value() && gen->defined() ? *gen : default_generator(device);
  auto* impl = at::check_generator<AxonGeneratorImpl>(g);
  std::lock_guard<std::mutex> lock(g.mutex());
  return {impl->current_seed(), impl->reserve(increment)};
}

// ---- hooks
// ----------------------------------------------------------------------------------------

namespace {

struct AxonHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }
  bool hasPrimaryContext(c10::DeviceIndex index) const override { return index < device_count(); }
  c10::DeviceIndex deviceCount() const override { return device_count(); }
  void setCurrentDevice(c10::DeviceIndex d) const override {
    check_index(d);
    current_index = d;
  }
  c10::DeviceIndex getCurrentDevice() const override { return current_index; }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    c10::DeviceIndex old = current_index;
    setCurrentDevice(d);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override {
    return exchangeDevice(d);
  }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex index) const override {
    c10::DeviceIndex d = index < 0 ? current_index : index;
    default_generator(d);  // created on first use; the array entry lives for the process
    return default_generators[size_t(d)];
  }
  at::Generator getNewGenerator(c10::DeviceIndex index) const override {
    return at::make_generator<AxonGeneratorImpl>(index < 0 ? current_index : index);
  }
  c10::Device getDeviceFromPtr(void* data) const override {
    int device = -1;
    TORCH_CHECK(axon_is_device_ptr(data, &device), "axon: pointer ", data,
                " is not axon device memory");
    return c10::Device(c10::kPrivateUse1, static_cast<c10::DeviceIndex>(device));
  }
  bool isPinnedPtr(const void* data) const override { return axon_is_host_pinned(data) != 0; }
  at::Allocator* getPinnedMemoryAllocator() const override { return &host_allocator_instance; }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    // Same as CPU/CUDA: new memory, old contents copied, the rest uninitialised.
    c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
    c10::DataPtr fresh = impl->allocator()->allocate(newsize);
    size_t keep = std::min(newsize, impl->nbytes());
    if (keep) {
      c10::DeviceIndex dev = impl->device().index();
      AXON_CHECK(axon_copy_d2d(fresh.get(), impl->data(), keep, current_runtime_stream(dev)));
    }
    impl->set_data_ptr_noswap(std::move(fresh));
    impl->set_nbytes(newsize);
  }
};

struct RegisterHooks {
  RegisterHooks() { at::RegisterPrivateUse1HooksInterface(new AxonHooks()); }
} register_hooks;

}  // namespace
}  // namespace axon
