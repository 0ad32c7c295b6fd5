// The PrivateUse1 hooks PyTorch asks about the device: availability, the current device, the
// default and new generators, device pointers, pinned memory and storage resizing.
#include <ATen/detail/PrivateUse1HooksInterface.h>

#include <algorithm>

#include "axon_glue.h"
#include "device_state.h"

namespace axon {
namespace {

struct AxonHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }
  bool hasPrimaryContext(c10::DeviceIndex index) const override { return index < device_count(); }
  c10::DeviceIndex deviceCount() const override { return device_count(); }
  void setCurrentDevice(c10::DeviceIndex d) const override { set_current_device(d); }
  c10::DeviceIndex getCurrentDevice() const override { return current_device(); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    c10::DeviceIndex old = current_device();
    setCurrentDevice(d);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override {
    return exchangeDevice(d);
  }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex index) const override {
    return default_generator_ref(index < 0 ? current_device() : index);
  }
  at::Generator getNewGenerator(c10::DeviceIndex index) const override {
    return new_generator(index < 0 ? current_device() : index);
  }
  c10::Device getDeviceFromPtr(void* data) const override {
    int device = -1;
    TORCH_CHECK(axon_is_device_ptr(data, &device), "axon: pointer ", data,
                " is not axon device memory");
    return c10::Device(c10::kPrivateUse1, static_cast<c10::DeviceIndex>(device));
  }
  bool isPinnedPtr(const void* data) const override { return axon_is_host_pinned(data) != 0; }
  at::Allocator* getPinnedMemoryAllocator() const override { return pinned_host_allocator(); }
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
