// torch_axon._C: the Python-facing functions of the device module. Thin: each calls the
// runtime or the glue and converts the result.
#include <chrono>

#include <torch/csrc/Generator.h>
#include <torch/extension.h>

#include "axon/fault.h"
#include "axon/fused.h"
#include "axon/live_objects.h"
#include "axon/quirks.h"
#include "axon_glue.h"

namespace axon {
namespace {

void check(axon_status_t st, const char* what) {
  if (st != AXON_SUCCESS) throw_status(st, what);
}

axon_fault_kind fault_kind(const std::string& name) {
  for (int k = 0; k < AXON_FAULT_KIND_COUNT; k++)
    if (name == axon_fault_kind_name(axon_fault_kind(k))) return axon_fault_kind(k);
  std::string kinds;
  for (int k = 0; k < AXON_FAULT_KIND_COUNT; k++)
    kinds += std::string(k ? ", " : "") + axon_fault_kind_name(axon_fault_kind(k));
  TORCH_CHECK_VALUE(false, "fault kind \"", name, "\": one of ", kinds);
}

py::dict device_info(int index) {
  axon_device_info info;
  check(axon_device_get_info(index, &info), "device info");
  py::dict d;
  d["name"] = info.name;
  d["vendor"] = info.vendor;
  d["driver_version"] = info.driver_version;
  d["platform_name"] = info.platform_name;
  d["platform_version"] = info.platform_version;
  d["opencl_c_version"] = info.opencl_c_version;
  d["global_mem_bytes"] = info.global_mem_bytes;
  d["max_alloc_bytes"] = info.max_alloc_bytes;
  d["local_mem_bytes"] = info.local_mem_bytes;
  d["compute_units"] = info.compute_units;
  d["max_work_group_size"] = info.max_work_group_size;
  d["is_cpu"] = bool(info.is_cpu);
  d["fp64"] = bool(info.has_fp64);
  d["fp16"] = bool(info.has_fp16);
  d["native_kernels"] = bool(info.native_kernels);
  d["denormals"] = bool(info.has_denormals);
  d["extensions"] = info.extensions;
  char quirks[256];
  check(axon_device_quirk_names(index, quirks, sizeof quirks), "device quirks");
  d["quirks"] = std::string(quirks);
  return d;
}

py::dict memory_stats(int index) {
  axon_memory_stats s;
  check(axon_memory_stats_get(index, &s), "memory stats");
  py::dict d;
  d["allocated_bytes.all.current"] = s.allocated_bytes;
  d["allocated_bytes.all.peak"] = s.allocated_peak;
  d["reserved_bytes.all.current"] = s.reserved_bytes;
  d["reserved_bytes.all.peak"] = s.reserved_peak;
  d["allocation.all.allocated"] = s.alloc_count;
  d["allocation.all.freed"] = s.free_count;
  d["allocation.all.current"] = s.alloc_count - s.free_count;
  d["segment.all.current"] = s.segment_count;
  d["num_ooms"] = s.oom_count;
  d["limit_bytes"] = s.limit_bytes;
  return d;
}

// A 1-D contiguous elementwise description over n elements of dst (and src, when given).
axon_ew_desc line_desc(const at::Tensor& dst, const at::Tensor* src) {
  TORCH_CHECK(dst.device().type() == c10::DeviceType::PrivateUse1 && dst.is_contiguous(),
              "expected a contiguous axon tensor");
  axon_ew_desc d{};
  d.ndim = 1;
  d.ninputs = src ? 1 : 0;
  d.sizes[0] = dst.numel();
  d.strides[0][0] = d.strides[1][0] = 1;
  d.data[0] = dst.data_ptr();
  if (src) {
    TORCH_CHECK(src->is_contiguous() && src->numel() == dst.numel() &&
                    src->scalar_type() == dst.scalar_type() && src->device() == dst.device(),
                "expected a contiguous source like the destination");
    d.data[1] = src->data_ptr();
  }
  return d;
}

// Benchmark ceilings (torch_axon.bench): the runtime's smallest launch, timed without PyTorch's
// dispatcher: `count` fills of a one-element tensor, then one synchronisation (or one after
// each launch when sync_each). Returns seconds per launch.
double launch_latency(const at::Tensor& one, int count, bool sync_each) {
  axon_ew_desc d = line_desc(one, nullptr);
  d.sizes[0] = 1;
  axon_stream_t s = stream_for(one);
  axon_dtype t = to_axon_dtype(one.scalar_type());
  check(axon_stream_sync(s), "launch latency");
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < count; i++) {
    check(axon_elementwise(s, AXON_PW_fill, t, t, &d, 0, 0), "launch latency");
    if (sync_each) check(axon_stream_sync(s), "launch latency");
  }
  check(axon_stream_sync(s), "launch latency");
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / count;
}

// The device's copy ceiling as a kernel: dst = src through the plain copy (cast to the same
// type) kernel, asynchronous like any op.
void copy_kernel(at::Tensor& dst, const at::Tensor& src) {
  axon_ew_desc d = line_desc(dst, &src);
  axon_dtype t = to_axon_dtype(dst.scalar_type());
  check(axon_cast(stream_for(dst), t, t, &d), "copy kernel");
}

// The device an RNG-state call names: None (the current one), an index, "axon:1" or a
// torch.device.
c10::DeviceIndex rng_device(const py::object& device) {
  if (device.is_none()) return current_device();
  if (py::isinstance<py::int_>(device)) return c10::DeviceIndex(device.cast<int>());
  c10::Device d = py::isinstance<py::str>(device) ? c10::Device(device.cast<std::string>())
                                                  : device.cast<c10::Device>();
  TORCH_CHECK(d.type() == c10::DeviceType::PrivateUse1, "expected an axon device, got ", d);
  return d.has_index() ? d.index() : current_device();
}

}  // namespace

// OpenCL C source from Python: device/source_kernels.cpp.
void bind_source_kernels(py::module_& m);
// The c10d backend: distributed/backend.cpp.
void bind_distributed(py::module_& m);

}  // namespace axon

PYBIND11_MODULE(_C, m) {
  using namespace axon;
  m.doc() = "Axon: OpenCL devices as a PyTorch device (native part)";
  bind_source_kernels(m);
  bind_distributed(m);
  m.def("device_count", [] { return int(device_count()); });
  m.def("current_device", [] { return int(current_device()); });
  m.def("set_device", [](int i) {
    c10::impl::getDeviceGuardImpl(c10::kPrivateUse1)
        ->setDevice(c10::Device(c10::kPrivateUse1, c10::DeviceIndex(i)));
  });
  m.def("synchronize", [](int i) {
    py::gil_scoped_release no_gil;
    c10::impl::getDeviceGuardImpl(c10::kPrivateUse1)->synchronizeDevice(c10::DeviceIndex(i));
  });
  m.def("device_info", device_info);
  m.def("memory_stats", memory_stats);
  m.def("empty_cache", [](int i) { check(axon_empty_cache(i), "empty_cache"); });
  m.def("reset_peak_memory_stats", [](int i) { check(axon_memory_reset_peak(i), "reset peak"); });
  m.def("mem_get_info", [](int i) {
    uint64_t free_bytes = 0, total = 0;
    check(axon_memory_info(i, &free_bytes, &total), "mem_get_info");
    return py::make_tuple(free_bytes, total);
  });
  // Fault injection for reliability tests (runtime/include/axon/fault.h).
  m.def(
      "_fault_arm",
      [](const std::string& kind, uint64_t n) {
        check(axon_fault_arm(fault_kind(kind), n), "arm");
      },
      py::arg("kind"), py::arg("n"));
  m.def("_fault_count", [](const std::string& kind) { return axon_fault_count(fault_kind(kind)); });
  // The OpenCL objects Axon holds, by kind (runtime/include/axon/live_objects.h): the soak run's
  // leak check.
  m.def("_live_objects", [] {
    py::dict d;
    for (int k = 0; k < AXON_LIVE_KIND_COUNT; k++)
      d[axon_live_kind_name(axon_live_kind(k))] = axon_live_objects(axon_live_kind(k));
    return d;
  });
  m.def("fallback_ops", [](bool reset) { return fallback_ops(reset); }, py::arg("reset") = false);
  // Fused eager mode (runtime/src/fused/, docs/fused-eager.md).
  m.def("_set_fused_eager", [](bool on) { check(axon_fused_eager_set(on), "set_fused_eager"); });
  m.def("_fused_eager_enabled", [] { return bool(axon_fused_eager_enabled()); });
  m.def("_fused_eager_wait_builds", [] {
    py::gil_scoped_release no_gil;  // the builder's thread may need the interpreter meanwhile
    axon_fused_wait_builds();
  });
  m.def("_fused_eager_stop_builds", [] {
    py::gil_scoped_release no_gil;
    axon_fused_stop_builds();
  });
  m.def(
      "_fused_eager_stats",
      [](bool reset) {
        axon_fused_stats s;
        axon_fused_stats_get(&s, reset);
        py::dict d;
        d["ops_recorded"] = s.ops_recorded;
        d["groups_fused"] = s.groups_fused;
        d["ops_fused"] = s.ops_fused;
        d["groups_unfused"] = s.groups_unfused;
        d["kernels_built"] = s.kernels_built;
        d["kernels_evicted"] = s.kernels_evicted;
        d["stores_skipped"] = s.stores_skipped;
        return d;
      },
      py::arg("reset") = false);
  m.def("kernel_cache_stats", [] {
    axon_cache_stats s;
    axon_program_cache_stats(&s);
    py::dict d;
    d["memory_hits"] = s.memory_hits;
    d["disk_hits"] = s.disk_hits;
    d["builds"] = s.builds;
    d["damaged_entries"] = s.damaged_entries;
    const char* dir = axon_program_cache_dir();
    d["directory"] = dir ? py::cast(std::string(dir)) : py::none();
    return d;
  });
  m.def("gemm_path", [](int device, const std::string& dtype) {
    axon_stream_t s;
    check(axon_stream_default(device, &s), "gemm_path");
    axon_gemm_path p = axon_gemm_path_for(s, dtype == "float64"   ? AXON_F64
                                             : dtype == "float32" ? AXON_F32
                                                                  : AXON_F16);
    return std::string(p == AXON_GEMM_HOST_BLAS ? "host-blas"
                       : p == AXON_GEMM_CLBLAST ? "clblast"
                                                : "kernel");
  });
  m.def("_launch_latency", launch_latency);
  m.def("_copy_kernel", copy_kernel);
  // The RNG state functions are builtins rather than Python: Dynamo then calls them as they
  // are (a graph break in the caller) instead of tracing into them, which torch.compile of code
  // that saves and restores the state (freeze_rng_state, fork_rng) needs.
  m.def(
      "get_rng_state",
      [](const py::object& device) { return default_generator(rng_device(device)).get_state(); },
      py::arg("device") = py::none());
  m.def(
      "set_rng_state",
      [](const at::Tensor& state, const py::object& device) {
        at::Generator gen = default_generator(rng_device(device));
        std::lock_guard<std::mutex> lock(gen.mutex());
        gen.set_state(state);
      },
      py::arg("state"), py::arg("device") = py::none());
  m.def("default_generator", [](int i) {
    return py::reinterpret_steal<py::object>(
        THPGenerator_initDefaultGenerator(default_generator(c10::DeviceIndex(i))));
  });
}
