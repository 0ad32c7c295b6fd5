// Devices, streams and events: the current device and stream of each thread, the runtime
// stream behind a c10::Stream id, and the device guard (C10_REGISTER_GUARD_IMPL) through which
// PyTorch switches devices, streams and records events.
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <array>
#include <mutex>
#include <vector>

#include "axon_glue.h"
#include "device_state.h"

namespace axon {

// ---- devices and streams ------------------------------------------------------------------

namespace {

// Streams per device, created as first used; CUDA's pool holds 32 too. A new stream comes from
// the pool as on CUDA: creating a command queue for every torch.Stream leaked one per call.
constexpr int kPoolSize = 32;

std::mutex stream_mutex;
std::vector<axon_stream_t> created_streams;  // id k (k >= 1) is created_streams[k - 1]
std::array<std::array<c10::StreamId, kPoolSize>, kMaxDevices> pool_ids{};
std::array<int, kMaxDevices> pool_next{};
thread_local std::array<c10::StreamId, kMaxDevices> current_ids{};
thread_local c10::DeviceIndex current_index = 0;

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

void check_device_index(c10::DeviceIndex index) {
  c10::DeviceIndex n = device_count();
  TORCH_CHECK_INDEX(index >= 0 && index < n, "axon: device index ", int(index),
                    " is out of range (", int(n), " axon device(s) available)");
}

void set_current_device(c10::DeviceIndex index) {
  check_device_index(index);
  current_index = index;
}

namespace {

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
  void setDevice(c10::Device d) const override { set_current_device(d.index()); }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0) current_index = d.index();
  }
  c10::Stream getStream(c10::Device d) const override {
    return current_stream(resolved(d).index());
  }
  c10::Stream getDefaultStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::UNSAFE, resolved(d), 0);
  }
  c10::Stream getNewStream(c10::Device d, int priority) const override {
    return getStreamFromGlobalPool(d, priority < 0);
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

}  // namespace

}  // namespace axon
