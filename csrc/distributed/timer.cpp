// DDP's runtime statistics on axon (ddp._get_ddp_logging_data(): forward, backward compute and
// backward communication times). The reducer asks c10d's TimerRegistry for a timer of the
// parameters' device type; without one it warns and records nothing. As CUDA's timer does, this
// one records events on the device's current stream, so the times are the device's, and reads
// them only when DDP asks (every few iterations).
#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/csrc/distributed/c10d/reducer_timer.hpp>

#include <array>

namespace axon {
namespace {

class AxonTimer : public c10d::Timer {
 public:
  explicit AxonTimer(c10::Device device) : device_(device) {}

  void record(Event event) override {
    Timer::record(event);  // the host time, which DDP also reports
    c10::impl::VirtualGuardImpl guard(device_.type());
    device_event(event).record(guard.getStream(device_));
  }

  std::optional<int64_t> measureDifference(Event start, Event end) override {
    auto& first = device_event(start);
    auto& last = device_event(end);
    if (!first.was_marked_for_recording() || !last.was_marked_for_recording()) return std::nullopt;
    first.synchronize();
    last.synchronize();
    double ms = first.elapsedTime(last);
    // Communication can end before computation does (nothing was left to reduce); DDP treats a
    // missing value as "not measured", as with CUDA.
    if (ms < 0) return std::nullopt;
    return static_cast<int64_t>(ms * 1e6);
  }

 private:
  c10::Event& device_event(Event event) { return events_.at(static_cast<size_t>(event)); }

  c10::Device device_;
  // BACKEND_DEFAULT: events that keep their times (torch.Event(enable_timing=True)).
  static c10::Event timing_event() {
    return c10::Event(c10::DeviceType::PrivateUse1, c10::EventFlag::BACKEND_DEFAULT);
  }
  std::array<c10::Event, 5> events_{timing_event(), timing_event(), timing_event(), timing_event(),
                                    timing_event()};
};

}  // namespace
}  // namespace axon

namespace c10d {
C10_REGISTER_TYPED_CLASS(TimerRegistry, c10::DeviceType::PrivateUse1, axon::AxonTimer);
}  // namespace c10d
