// What the device files share across csrc/device/: the device limit, the calling thread's
// current device (streams_guard.cpp), the pinned host allocator (allocators.cpp) and the
// default generators (generator.cpp), which the hooks (hooks.cpp) hand to PyTorch.
#pragma once

#include "axon_glue.h"

namespace axon {

constexpr int kMaxDevices = 16;

// Fails with PyTorch's index error unless 0 <= index < device_count().
void check_device_index(c10::DeviceIndex index);
// The calling thread's current device (checked); current_device() reads it.
void set_current_device(c10::DeviceIndex index);

at::Allocator* pinned_host_allocator();

// The device's default generator, made at its first use; the reference lives for the process.
const at::Generator& default_generator_ref(c10::DeviceIndex device);
at::Generator new_generator(c10::DeviceIndex device);

}  // namespace axon
