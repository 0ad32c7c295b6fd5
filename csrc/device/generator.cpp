// The generator: Philox state (seed and offset, as CUDA's) per device, and the reservation of
// counters that the random kernels draw from (philox_reserve).
#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

#include <array>
#include <cstring>
#include <mutex>

#include "axon_glue.h"
#include "device_state.h"

namespace axon {
namespace {

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

at::Generator default_generator(c10::DeviceIndex device) {
  if (device < 0) device = current_device();
  check_device_index(device);
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

const at::Generator& default_generator_ref(c10::DeviceIndex device) {
  default_generator(device);  // created on first use; the array entry lives for the process
  return default_generators[size_t(device)];
}

at::Generator new_generator(c10::DeviceIndex device) {
  return at::make_generator<AxonGeneratorImpl>(device);
}

}  // namespace axon
