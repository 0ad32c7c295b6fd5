// The c10d backend of the axon device (torch_axon/distributed/ registers it as "axon").
//
// Collectives travel over Gloo, which ships inside torch and speaks TCP: the backend holds a
// ProcessGroupGloo of its own (made in Python, where Gloo's constructor is bound; Gloo's headers
// are not installed with torch) and stands host tensors in for axon tensors.
//
// Ordering follows NCCL's contract. A collective's device inputs are copied out on the caller's
// current stream, so it starts after the work already queued there; Gloo then runs it on its own
// threads while the caller goes on. Results are copied back when the work finishes (in Gloo's
// thread through the future's callback, or in the thread that waits), and the work's future
// carries an event on the stream of that copy: `work.wait()` and `future.wait()` make the waiting
// stream wait for it. CPU tensors in the same backend go to Gloo as they are.
//
// On CPU-class devices the device memory is the host's: Gloo then works in it directly, through
// host mappings (axon_map_host), and nothing is copied. Elsewhere, and for tensors a mapping
// cannot stand for (strided, widened, pre-scaled), the backend stages copies.
#include <torch/csrc/utils/pybind.h>
#include <torch/extension.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <mutex>
#include <utility>
#include <vector>

#include "axon/fault.h"
#include "axon_glue.h"

namespace axon {
namespace {

using TensorList = std::vector<at::Tensor>;
using WorkPtr = c10::intrusive_ptr<c10d::Work>;

bool on_axon(const at::Tensor& t) {
  return t.device().type() == c10::DeviceType::PrivateUse1;
}

// The element types Gloo carries; others travel as bytes or, in reductions, widened.
bool gloo_carries(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
    case at::kDouble:
    case at::kHalf:
    case at::kBFloat16:
    case at::kChar:
    case at::kByte:
    case at::kInt:
    case at::kLong:
    case at::kBool:
    case at::kComplexFloat:
    case at::kComplexDouble:
      return true;
    default:
      return false;
  }
}

// Reductions of types Gloo lacks run in a wider type that holds every value exactly; the result
// is rounded once, on the way back.
at::ScalarType reduction_type(at::ScalarType type) {
  if (gloo_carries(type)) return type;
  if (at::isFloat8Type(type)) return at::kFloat;
  if (type == at::kShort || type == at::kUInt16 || type == at::kUInt32) return at::kLong;
  TORCH_CHECK(false, "axon distributed: Gloo cannot reduce ", type,
              " tensors (it has no such type and no wider type holds every value)");
}

// Whether Gloo may work in this device's memory through a mapping: CPU-class devices.
bool maps_to_host(c10::Device device) {
  axon_device_info info{};
  return axon_device_get_info(device.index(), &info) == AXON_SUCCESS && info.native_kernels;
}

// Host tensors standing in for the collective's tensors: mappings of their memory, or copies
// that go back into them when the work finishes.
class Staging {
 public:
  // `may_map`: false where the backend changes an input (PREMUL_SUM scales it) that the caller
  // does not expect to change.
  explicit Staging(bool reduces, bool may_map = true) : reduces_(reduces), may_map_(may_map) {}
  Staging(Staging&&) = default;
  Staging& operator=(Staging&&) = delete;
  ~Staging() { release_mappings(/*check=*/false); }

  // A tensor Gloo reads.
  at::Tensor in(const at::Tensor& t) { return gloo_view(mappable(t) ? map(t) : host_copy(t)); }

  // A tensor Gloo writes: its host buffer is copied into `t` when the work finishes.
  at::Tensor out(const at::Tensor& t) {
    outputs_.push_back(t);
    if (mappable(t)) return gloo_view(map(t));
    if (!needs_host(t)) return t;
    auto host = at::empty(t.sizes(), t.options().device(at::kCPU).dtype(staged_type(t)));
    return gloo_view(remember(t, host));
  }

  // A tensor Gloo reads and writes (the in-place collectives).
  at::Tensor in_out(const at::Tensor& t) {
    outputs_.push_back(t);
    if (mappable(t)) return gloo_view(map(t));
    return gloo_view(remember(t, host_copy(t)));
  }

  TensorList in(const TensorList& ts) { return each(ts, &Staging::in); }
  TensorList out(const TensorList& ts) { return each(ts, &Staging::out); }
  TensorList in_out(const TensorList& ts) { return each(ts, &Staging::in_out); }
  std::vector<TensorList> out(const std::vector<TensorList>& lists) {
    std::vector<TensorList> hosts;
    for (const auto& l : lists) hosts.push_back(out(l));
    return hosts;
  }
  std::vector<TensorList> in(const std::vector<TensorList>& lists) {
    std::vector<TensorList> hosts;
    for (const auto& l : lists) hosts.push_back(in(l));
    return hosts;
  }

  // Copies the host results into the device tensors and releases the mappings, on the current
  // stream.
  void copy_back() {
    for (auto& [device, host] : pairs_)
      if (!device.is_same(host)) device.copy_(host);
    release_mappings(/*check=*/true);
  }

  // The tensors the work's result and future hold: the caller's outputs.
  const TensorList& results() const { return outputs_; }

 private:
  struct Mapping {
    at::Tensor device;  // keeps the memory alive while Gloo works in it
    void* host;
  };

  bool mappable(const at::Tensor& t) const {
    return may_map_ && on_axon(t) && t.numel() > 0 && t.is_contiguous() &&
           staged_type(t) == t.scalar_type() && maps_to_host(t.device());
  }
  at::Tensor map(const at::Tensor& t) {
    void* host = nullptr;
    AXON_CHECK(axon_map_host(t.data_ptr(), t.nbytes(), stream_for(t), &host));
    mappings_.push_back({t, host});
    return at::from_blob(host, t.sizes(), t.options().device(at::kCPU));
  }
  void release_mappings(bool check) {
    for (auto& m : mappings_) {
      auto status = axon_unmap_host(m.device.data_ptr(), m.host, stream_for(m.device));
      if (check) AXON_CHECK(status);
    }
    mappings_.clear();
  }

  bool needs_host(const at::Tensor& t) const {
    return on_axon(t) || !gloo_carries(t.scalar_type());
  }
  at::ScalarType staged_type(const at::Tensor& t) const {
    return reduces_ ? reduction_type(t.scalar_type()) : t.scalar_type();
  }
  at::Tensor host_copy(const at::Tensor& t) const {
    if (!needs_host(t)) return t;
    return t.to(t.options().device(at::kCPU).dtype(staged_type(t)), /*non_blocking=*/false,
                /*copy=*/false, c10::MemoryFormat::Contiguous);
  }
  // Types Gloo lacks move as bytes: a trailing dimension of the element size keeps the leading
  // dimensions (and so all-to-all split sizes) as they are.
  static at::Tensor gloo_view(const at::Tensor& host) {
    if (gloo_carries(host.scalar_type())) return host;
    return host.unsqueeze(-1).view(at::kByte);
  }
  at::Tensor remember(const at::Tensor& device, const at::Tensor& host) {
    pairs_.emplace_back(device, host);
    return host;
  }
  TensorList each(const TensorList& ts, at::Tensor (Staging::*one)(const at::Tensor&)) {
    TensorList hosts;
    for (const auto& t : ts) hosts.push_back((this->*one)(t));
    return hosts;
  }

  bool reduces_;
  bool may_map_;
  std::vector<std::pair<at::Tensor, at::Tensor>> pairs_;  // (caller's tensor, host copy)
  std::vector<Mapping> mappings_;
  TensorList outputs_;  // what Gloo writes, in the caller's order
};

std::vector<c10::Device> axon_devices(const TensorList& ts) {
  std::vector<c10::Device> devices;
  for (const auto& t : ts)
    if (on_axon(t) && std::find(devices.begin(), devices.end(), t.device()) == devices.end())
      devices.push_back(t.device());
  return devices;
}

// A collective in flight: Gloo's work(s) on the host buffers, then the copies back.
class StagedWork : public c10d::Work {
 public:
  StagedWork(int rank, c10d::OpType type, std::vector<WorkPtr> gloo, Staging staging)
      : Work(rank, type),
        gloo_(std::move(gloo)),
        staging_(std::move(staging)),
        results_(staging_.results()),
        future_(c10::make_intrusive<c10::ivalue::Future>(
            c10::ListType::create(c10::TensorType::get()), axon_devices(results_))) {}

  // Finishes in Gloo's thread as soon as the transfer is done, so that a future's waiter (DDP's
  // reducer, FSDP) needs no call to wait(). Gloo's point-to-point works have no future; theirs
  // finish in wait().
  void finish_when_done() {
    if (gloo_.size() != 1) return;
    c10::intrusive_ptr<c10::ivalue::Future> transfer;
    try {
      transfer = gloo_[0]->getFuture();
    } catch (const std::exception&) {
      return;
    }
    auto self = c10::intrusive_ptr<StagedWork>::reclaim_copy(this);
    // Runs inside Gloo's markCompleted, before its work counts as done: it must not wait on it.
    transfer->addCallback([self](c10::ivalue::Future& done) {
      if (done.hasError())
        self->fail(done.exception_ptr());
      else
        self->complete();
    });
  }

  bool isCompleted() override {
    if (future_->completed()) return true;
    for (auto& w : gloo_)
      if (!w->isCompleted()) return false;
    complete();
    return true;
  }

  bool isSuccess() const override { return !future_->completed() || !future_->hasError(); }

  std::exception_ptr exception() const override {
    return future_->completed() && future_->hasError() ? future_->exception_ptr() : nullptr;
  }

  bool wait(std::chrono::milliseconds timeout) override {
    try {
      for (auto& w : gloo_) w->wait(timeout);
    } catch (...) {
      fail(std::current_exception());
    }
    complete();
    future_->waitAndThrow();  // orders the current stream after the copies back
    return true;
  }

  void synchronize() override { wait(kNoTimeout); }

  TensorList result() override { return results_; }

  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override {
    if (!future_->completed() && gloo_.size() != 1) wait(kNoTimeout);
    return future_;
  }

 private:
  void complete() {
    std::lock_guard<std::mutex> lock(finish_mutex_);
    if (future_->completed()) return;
    try {
      c10::OptionalDeviceGuard guard;
      if (!future_->devices().empty()) guard.reset_device(future_->devices()[0]);
      staging_.copy_back();
      future_->markCompleted(c10::IValue(results_));
    } catch (...) {
      future_->setError(std::current_exception());
    }
  }

  void fail(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(finish_mutex_);
    if (!future_->completed()) future_->setError(std::move(error));
  }

  std::vector<WorkPtr> gloo_;
  Staging staging_;
  TensorList results_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::mutex finish_mutex_;
};

// Several works as one (a coalesced group, or a collective Gloo runs as several calls).
class GroupWork : public c10d::Work {
 public:
  GroupWork(int rank, std::vector<WorkPtr> works)
      : Work(rank, c10d::OpType::COALESCED), works_(std::move(works)) {}

  bool isCompleted() override {
    for (auto& w : works_)
      if (!w->isCompleted()) return false;
    return true;
  }
  bool wait(std::chrono::milliseconds timeout) override {
    for (auto& w : works_) w->wait(timeout);
    return true;
  }
  void synchronize() override { wait(kNoTimeout); }
  TensorList result() override {
    TensorList all;
    for (auto& w : works_)
      for (auto& t : w->result()) all.push_back(t);
    return all;
  }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override {
    wait(kNoTimeout);
    auto future = c10::make_intrusive<c10::ivalue::Future>(
        c10::ListType::create(c10::TensorType::get()), axon_devices(result()));
    future->markCompleted(c10::IValue(result()));
    return future;
  }

 private:
  std::vector<WorkPtr> works_;
};

bool premultiplies(const c10d::ReduceOp& op) {
  return op.op_ == c10d::ReduceOp::PREMUL_SUM;
}

// PREMUL_SUM as Gloo's SUM of pre-scaled inputs (the host buffers are the backend's own copies,
// or the caller's CPU tensors, which the in-place all-reduce overwrites anyway).
c10d::ReduceOp premultiply(const c10d::ReduceOp& op, const TensorList& hosts) {
  if (op.op_ != c10d::ReduceOp::PREMUL_SUM) return op;
  auto* factor = dynamic_cast<c10d::PreMulSumSupplement*>(op.supplement_.get());
  TORCH_CHECK(factor, "axon distributed: PREMUL_SUM without its factor");
  for (const auto& h : hosts) {
    if (factor->tensor_factor.defined())
      h.mul_(factor->tensor_factor.to(at::kCPU));
    else
      h.mul_(factor->double_factor);
  }
  return c10d::ReduceOp(c10d::ReduceOp::SUM);
}

// Fault injection (AXON_FAULTS collective:N, runtime/include/axon/fault.h): the N-th collective
// this process starts fails before Gloo sees it, as one whose transport broke would; its peers
// wait for it until the group's timeout.
void fault_point(c10d::OpType type) {
  auto name = c10d::opTypeToString(type);
  if (axon_fault_point(AXON_FAULT_COLLECTIVE, AXON_ERROR_IO, name.c_str()) != AXON_SUCCESS)
    C10_THROW_ERROR(DistBackendError, std::string("axon distributed: ") + axon_last_error());
}

class AxonBackend : public c10d::Backend {
 public:
  AxonBackend(c10::intrusive_ptr<c10d::Backend> gloo, int rank, int size)
      : Backend(rank, size), gloo_(std::move(gloo)) {}

  const std::string getBackendName() const override { return "axon"; }
  bool supportsCoalescing() const override { return true; }

  void startCoalescing() override {
    TORCH_CHECK(!coalescing_, "axon distributed: coalescing already started");
    coalescing_ = true;
    coalesced_.clear();
  }
  WorkPtr endCoalescing() override {
    TORCH_CHECK(coalescing_, "axon distributed: endCoalescing without startCoalescing");
    coalescing_ = false;
    return c10::make_intrusive<GroupWork>(getRank(), std::move(coalesced_));
  }

  void setTimeout(std::chrono::milliseconds timeout) override { gloo_->setTimeout(timeout); }

  // Sub-groups (DeviceMesh's dimensions, new_group after a bound device) split Gloo's group; the
  // group's name is the prefix Gloo rendezvouses under, so it goes to Gloo too.
  bool supportsSplitting() const override { return gloo_->supportsSplitting(); }
  c10::intrusive_ptr<Options> getBackendOptions() override { return gloo_->getBackendOptions(); }
  c10::intrusive_ptr<Backend> split(const c10::intrusive_ptr<c10d::Store>& store,
                                    const std::vector<int>& ranks,
                                    const c10::intrusive_ptr<Options>& opts) override {
    // Sibling groups split at once (a mesh dimension's {0, 2} and {1, 3}) rendezvous in the same
    // store: a prefix of their own (every rank of the parent splits in the same order) keeps
    // their keys apart.
    std::string prefix = "axon-split/" + std::to_string(splits_++);
    for (int r : ranks) prefix += "-" + std::to_string(r);
    auto own_store = c10::make_intrusive<c10d::PrefixStore>(prefix, store);
    return wrap(gloo_->split(own_store, ranks, opts));
  }
  c10::intrusive_ptr<Backend> merge(const c10::intrusive_ptr<c10d::Store>& store,
                                    const c10::intrusive_ptr<Options>& opts, const int& rank,
                                    const int& size) override {
    return wrap(gloo_->merge(store, opts, rank, size));
  }
  void setGroupUid(const std::string& uid) override {
    Backend::setGroupUid(uid);
    gloo_->setGroupUid(uid);
  }
  void setSequenceNumberForGroup() override { gloo_->setSequenceNumberForGroup(); }
  uint64_t getSequenceNumberForGroup() override { return gloo_->getSequenceNumberForGroup(); }
  void monitoredBarrier(const c10d::BarrierOptions& opts, bool wait_all) override {
    gloo_->monitoredBarrier(opts, wait_all);
  }

  WorkPtr broadcast(TensorList& tensors, const c10d::BroadcastOptions& opts) override {
    Staging s(false);
    auto hosts = s.in_out(tensors);
    return launch(c10d::OpType::BROADCAST, std::move(s),
                  [&] { return gloo_->broadcast(hosts, opts); });
  }

  WorkPtr allreduce(TensorList& tensors, const c10d::AllreduceOptions& opts) override {
    Staging s(true, !premultiplies(opts.reduceOp));
    auto hosts = s.in_out(tensors);
    return launch(c10d::OpType::ALLREDUCE, std::move(s), [&] {
      auto gloo_opts = opts;
      gloo_opts.reduceOp = premultiply(opts.reduceOp, hosts);
      return gloo_->allreduce(hosts, gloo_opts);
    });
  }

  WorkPtr allreduce_coalesced(TensorList& tensors,
                              const c10d::AllreduceCoalescedOptions& opts) override {
    Staging s(true, !premultiplies(opts.reduceOp));
    auto hosts = s.in_out(tensors);
    return launch(c10d::OpType::ALLREDUCE_COALESCED, std::move(s), [&] {
      auto gloo_opts = opts;
      gloo_opts.reduceOp = premultiply(opts.reduceOp, hosts);
      return gloo_->allreduce_coalesced(hosts, gloo_opts);
    });
  }

  WorkPtr reduce(TensorList& tensors, const c10d::ReduceOptions& opts) override {
    // Copies, never mappings: Gloo's reduce uses every rank's buffer as scratch, and only the
    // root's tensor may change (as with NCCL).
    Staging s(true, /*may_map=*/false);
    // Only the root's tensor receives the result, as with NCCL.
    auto hosts = getRank() == opts.rootRank ? s.in_out(tensors) : s.in(tensors);
    return launch(c10d::OpType::REDUCE, std::move(s), [&] {
      auto gloo_opts = opts;
      gloo_opts.reduceOp = premultiply(opts.reduceOp, hosts);
      return gloo_->reduce(hosts, gloo_opts);
    });
  }

  WorkPtr allgather(std::vector<TensorList>& outputs, TensorList& inputs,
                    const c10d::AllgatherOptions& opts) override {
    return move_data(c10d::OpType::ALLGATHER, inputs, outputs, [&](auto& host_out, auto& host_in) {
      return gloo_->allgather(host_out, host_in, opts);
    });
  }

  WorkPtr _allgather_base(at::Tensor& output, at::Tensor& input,
                          const c10d::AllgatherOptions& opts) override {
    return move_data(c10d::OpType::_ALLGATHER_BASE, input, output,
                     [&](auto& host_out, auto& host_in) {
                       return gloo_->_allgather_base(host_out, host_in, opts);
                     });
  }

  WorkPtr allgather_coalesced(std::vector<TensorList>& outputs, TensorList& inputs,
                              const c10d::AllgatherOptions& opts) override {
    return move_data(c10d::OpType::ALLGATHER_COALESCED, inputs, outputs,
                     [&](auto& host_out, auto& host_in) {
                       return gloo_->allgather_coalesced(host_out, host_in, opts);
                     });
  }

  WorkPtr allgather_into_tensor_coalesced(TensorList& outputs, TensorList& inputs,
                                          const c10d::AllgatherOptions& opts) override {
    std::vector<WorkPtr> works;
    for (size_t i = 0; i < outputs.size(); ++i)
      works.push_back(_allgather_base(outputs[i], inputs[i], opts));
    return c10::make_intrusive<GroupWork>(getRank(), std::move(works));
  }

  WorkPtr gather(std::vector<TensorList>& outputs, TensorList& inputs,
                 const c10d::GatherOptions& opts) override {
    return move_data(c10d::OpType::GATHER, inputs, outputs, [&](auto& host_out, auto& host_in) {
      return gloo_->gather(host_out, host_in, opts);
    });
  }

  WorkPtr scatter(TensorList& outputs, std::vector<TensorList>& inputs,
                  const c10d::ScatterOptions& opts) override {
    return move_data(c10d::OpType::SCATTER, inputs, outputs, [&](auto& host_out, auto& host_in) {
      return gloo_->scatter(host_out, host_in, opts);
    });
  }

  WorkPtr reduce_scatter(TensorList& outputs, std::vector<TensorList>& inputs,
                         const c10d::ReduceScatterOptions& opts) override {
    Staging s(true, !premultiplies(opts.reduceOp));
    auto host_in = s.in(inputs);
    auto host_out = s.out(outputs);
    return launch(c10d::OpType::REDUCE_SCATTER, std::move(s), [&] {
      auto gloo_opts = opts;
      for (auto& list : host_in) gloo_opts.reduceOp = premultiply(opts.reduceOp, list);
      return gloo_->reduce_scatter(host_out, host_in, gloo_opts);
    });
  }

  WorkPtr _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                               const c10d::ReduceScatterOptions& opts) override {
    Staging s(true, !premultiplies(opts.reduceOp));
    auto host_in = s.in(input);
    auto host_out = s.out(output);
    return launch(c10d::OpType::_REDUCE_SCATTER_BASE, std::move(s), [&] {
      auto gloo_opts = opts;
      gloo_opts.reduceOp = premultiply(opts.reduceOp, {host_in});
      return gloo_->_reduce_scatter_base(host_out, host_in, gloo_opts);
    });
  }

  WorkPtr reduce_scatter_tensor_coalesced(TensorList& outputs, TensorList& inputs,
                                          const c10d::ReduceScatterOptions& opts) override {
    std::vector<WorkPtr> works;
    for (size_t i = 0; i < outputs.size(); ++i)
      works.push_back(_reduce_scatter_base(outputs[i], inputs[i], opts));
    return c10::make_intrusive<GroupWork>(getRank(), std::move(works));
  }

  WorkPtr alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_splits,
                        std::vector<int64_t>& input_splits,
                        const c10d::AllToAllOptions& opts) override {
    return move_data(
        c10d::OpType::ALLTOALL_BASE, input, output, [&](auto& host_out, auto& host_in) {
          return gloo_->alltoall_base(host_out, host_in, output_splits, input_splits, opts);
        });
  }

  WorkPtr alltoall(TensorList& outputs, TensorList& inputs,
                   const c10d::AllToAllOptions& opts) override {
    return move_data(c10d::OpType::ALLTOALL, inputs, outputs, [&](auto& host_out, auto& host_in) {
      return gloo_->alltoall(host_out, host_in, opts);
    });
  }

  WorkPtr send(TensorList& tensors, int dst, int tag) override {
    Staging s(false);
    auto hosts = s.in(tensors);
    return launch(c10d::OpType::SEND, std::move(s), [&] { return gloo_->send(hosts, dst, tag); });
  }

  WorkPtr recv(TensorList& tensors, int src, int tag) override {
    Staging s(false);
    auto hosts = s.out(tensors);
    return launch(c10d::OpType::RECV, std::move(s), [&] { return gloo_->recv(hosts, src, tag); });
  }

  WorkPtr recvAnysource(TensorList& tensors, int tag) override {
    Staging s(false);
    auto hosts = s.out(tensors);
    return launch(c10d::OpType::RECVANYSOURCE, std::move(s),
                  [&] { return gloo_->recvAnysource(hosts, tag); });
  }

  WorkPtr barrier(const c10d::BarrierOptions& opts) override {
    // Gloo's barrier is a host one; the device's queued work is not part of it (as with Gloo).
    fault_point(c10d::OpType::BARRIER);
    auto gloo_opts = opts;
    gloo_opts.device.reset();
    return gloo_->barrier(gloo_opts);
  }

 private:
  // The collectives that only move data: Gloo's call on host stand-ins for inputs and outputs.
  template <class Inputs, class Outputs, class GlooCall>
  WorkPtr move_data(c10d::OpType type, Inputs& inputs, Outputs& outputs, GlooCall gloo_call) {
    Staging s(false);
    auto host_in = s.in(inputs);
    auto host_out = s.out(outputs);
    return launch(type, std::move(s), [&] { return gloo_call(host_out, host_in); });
  }

  static c10::intrusive_ptr<Backend> wrap(c10::intrusive_ptr<Backend> gloo) {
    if (!gloo) return nullptr;  // this rank is in none of the new groups
    int rank = gloo->getRank(), size = gloo->getSize();
    return c10::make_intrusive<AxonBackend>(std::move(gloo), rank, size);
  }

  // Starts Gloo's work (`gloo_call`, which may change the staged inputs: PREMUL_SUM's factor)
  // unless a fault is injected here.
  template <class GlooCall>
  WorkPtr launch(c10d::OpType type, Staging staging, GlooCall gloo_call) {
    fault_point(type);
    auto work = c10::make_intrusive<StagedWork>(getRank(), type, std::vector<WorkPtr>{gloo_call()},
                                                std::move(staging));
    work->finish_when_done();
    if (coalescing_) coalesced_.push_back(work);
    return work;
  }

  c10::intrusive_ptr<c10d::Backend> gloo_;
  int64_t splits_ = 0;
  bool coalescing_ = false;
  std::vector<WorkPtr> coalesced_;
};

}  // namespace

void bind_distributed(py::module_& m) {
  py::class_<AxonBackend, c10d::Backend, c10::intrusive_ptr<AxonBackend>>(m, "DistributedBackend")
      .def(py::init([](c10d::Backend& gloo, int rank, int size) {
             return c10::make_intrusive<AxonBackend>(
                 c10::intrusive_ptr<c10d::Backend>::reclaim_copy(&gloo), rank, size);
           }),
           py::arg("gloo"), py::arg("rank"), py::arg("size"),
           "The axon backend over a ProcessGroupGloo of its own (torch_axon/distributed/).")
      // torch_axon/distributed/ makes split_group's options from it.
      .def_property_readonly("_timeout_ms", [](AxonBackend& self) {
        return self.getBackendOptions()->timeout.count();
      });
}

}  // namespace axon
