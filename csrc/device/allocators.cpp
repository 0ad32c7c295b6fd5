// The device allocator (REGISTER_ALLOCATOR: the runtime's caching allocator, its statistics)
// and the pinned host allocator (REGISTER_HOST_ALLOCATOR), whose blocks wait for the copies
// still using them before they are freed.
#include <ATen/core/CachingHostAllocator.h>
#include <c10/core/CachingDeviceAllocator.h>

#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "axon_glue.h"
#include "device_state.h"

namespace axon {
namespace {

// ---- device allocator ------------------------------------------------------------------------

void free_device_memory(void* ptr) {
  // A deleter cannot throw; a failure here would mean a corrupted allocator table.
  axon_status_t st = axon_free(ptr);
  if (st != AXON_SUCCESS) TORCH_WARN("axon: freeing device memory failed: ", axon_last_error());
}

struct AxonAllocator final : public c10::DeviceAllocator {
  c10::DataPtr allocate(size_t nbytes) override {
    c10::DeviceIndex device = current_device();
    void* ptr = nullptr;
    AXON_CHECK(axon_malloc(device, nbytes, current_runtime_stream(device), &ptr));
    return {ptr, ptr, &free_device_memory, c10::Device(c10::kPrivateUse1, device)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &free_device_memory; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    AXON_CHECK(axon_copy_d2d(dest, src, count, current_runtime_stream(current_device())));
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

at::Allocator* pinned_host_allocator() {
  return &host_allocator_instance;
}

}  // namespace axon
