// torch.profiler support: a Kineto activity-profiler plugin registered through PyTorch's
// PrivateUse1 profiler registry. While a trace records, the runtime keeps an OpenCL event for
// every kernel, copy and host task it enqueues (runtime/src/profiler.c); at the end each becomes
// a device activity (CONCURRENT_KERNEL or GPU_MEMCPY) with its device start and end time, linked
// through Kineto's correlation id to the aten op that launched it. PyTorch then nests kernels
// under their ops (device_time in key_averages) and exports them in Chrome traces.

// The registry header exists only for Kineto builds; the installed torch is one (libkineto is
// inside libtorch_cpu), so the declarations are enabled for this file. Torch releases before the
// registry (2.11 and older) build Axon without device activities in torch.profiler.
#if __has_include(<torch/csrc/profiler/standalone/privateuse1_profiler.h>)
#ifndef USE_KINETO
#define USE_KINETO
#endif
#include <libkineto.h>
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "axon/profiler.h"
#include "axon_glue.h"

namespace axon {
namespace {

using libkineto::ActivityType;

// Correlation ids of the ops open on this thread (ops nest: a composite op calls others).
thread_local std::vector<uint64_t> open_ops;

class Session : public libkineto::IActivityProfilerSession {
 public:
  void start() override {
    axon_status_t st = axon_profiler_start();
    if (st != AXON_SUCCESS) errors_.push_back(axon_last_error());
    status_ =
        st == AXON_SUCCESS ? libkineto::TraceStatus::RECORDING : libkineto::TraceStatus::ERROR;
  }

  void stop() override {
    axon_profile_record* records = nullptr;
    size_t count = 0;
    if (axon_profiler_stop(&records, &count) != AXON_SUCCESS) {
      errors_.push_back(axon_last_error());
      status_ = libkineto::TraceStatus::ERROR;
      return;
    }
    records_.assign(records, records + count);
    std::free(records);
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  void pushCorrelationId(uint64_t id) override {
    open_ops.push_back(id);
    axon_profiler_set_correlation(id);
  }
  void popCorrelationId() override {
    if (!open_ops.empty()) open_ops.pop_back();
    axon_profiler_set_correlation(open_ops.empty() ? 0 : open_ops.back());
  }

  std::vector<std::string> errors() override { return errors_; }

  void processTrace(libkineto::ActivityLogger& logger) override {
    processTrace(logger, nullptr, 0, 0);
  }

  void processTrace(libkineto::ActivityLogger& logger,
                    libkineto::getLinkedActivityCallback linked_op, int64_t start_time,
                    int64_t end_time) override {
    trace_ = std::make_unique<libkineto::CpuTraceBuffer>();
    trace_->span = libkineto::TraceSpan(start_time, end_time, "axon");
    for (const axon_profile_record& r : records_) {
      ActivityType type =
          r.kind == AXON_PROFILE_COPY ? ActivityType::GPU_MEMCPY : ActivityType::CONCURRENT_KERNEL;
      trace_->emplace_activity(trace_->span, type, std::string(r.name));
      auto& act = libkineto::CpuTraceBuffer::toRef(trace_->activities.back());
      act.startTime = r.start_ns;
      act.endTime = r.end_ns;
      act.device = r.device;
      act.resource = static_cast<int32_t>(r.stream);
      act.id = static_cast<int32_t>(r.correlation);
      if (r.correlation && linked_op) act.linked = linked_op(static_cast<int32_t>(r.correlation));
      act.flow.id = static_cast<uint32_t>(r.correlation);
      act.flow.type = libkineto::kLinkAsyncCpuGpu;
      act.flow.start = false;
      // addMetadata formats through fmt, which libtorch does not export: numbers as text.
      act.addMetadataQuoted("device", "axon:" + std::to_string(r.device));
      act.addMetadataQuoted("stream", std::to_string(r.stream));
      if (r.kind == AXON_PROFILE_COPY) act.addMetadataQuoted("bytes", std::to_string(r.bytes));
      if (r.kind == AXON_PROFILE_HOST_TASK)
        act.addMetadataQuoted("runs on", "host, in queue order");
      act.log(logger);
    }
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    return std::make_unique<libkineto::DeviceInfo>(
        libkineto::DeviceInfo{0, 0, "axon", "axon (OpenCL)"});
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::set<std::pair<int, uint64_t>> streams;
    for (const axon_profile_record& r : records_) streams.insert({r.device, r.stream});
    std::vector<libkineto::ResourceInfo> infos;
    for (const auto& [device, stream] : streams)
      infos.push_back(libkineto::ResourceInfo{
          static_cast<int64_t>(stream), static_cast<int64_t>(stream), device,
          "axon:" + std::to_string(device) + " stream " + std::to_string(stream)});
    return infos;
  }

  // Kineto takes the activities over: the trace it hands PyTorch points into them.
  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override { return std::move(trace_); }

 private:
  std::vector<axon_profile_record> records_;
  std::vector<std::string> errors_;
  std::unique_ptr<libkineto::CpuTraceBuffer> trace_;
};

class Profiler : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }
  const std::set<ActivityType>& availableActivities() const override { return activities_; }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      const std::set<ActivityType>& /*activity_types*/,
      const libkineto::Config& /*config*/) override {
    return std::make_unique<Session>();
  }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      int64_t /*ts_ms*/, int64_t /*duration_ms*/, const std::set<ActivityType>& activity_types,
      const libkineto::Config& config) override {
    return configure(activity_types, config);
  }

 private:
  std::string name_ = "axon";
  std::set<ActivityType> activities_ = {ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY};
};

REGISTER_PRIVATEUSE1_PROFILER(Profiler);

}  // namespace
}  // namespace axon
#endif  // the PrivateUse1 profiler registry is present
