// OpenCL C source built and launched from Python: the path of generated kernels (Inductor's
// axon backend, torch_axon/inductor/) and of user kernels. Programs go through the runtime's
// program cache (memory and disk); a failed build raises with the build log. A launch runs on
// the current stream of the device; its arguments follow a signature string, one letter each:
//   b  a tensor: its memory, passed as (__global uchar *base, ulong offset) as Axon's own
//      kernels take buffers (BUF(name) in kernels/common.cl); the offset is in bytes
//   l  a Python int as a 64-bit long       i  a Python int as a 32-bit int
//   f  a Python float as a 32-bit float    d  a Python float as a 64-bit double
//   L  a Python int: bytes of __local memory (a __local pointer parameter)
//   r  a Python bytes object: the value's bytes as they are (other scalar and vector types,
//      packed by torch_axon/kernels/)
#include <torch/extension.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "axon/sources.h"
#include "axon_glue.h"

namespace axon {
namespace {

void check(axon_status_t st, const char* what) {
  if (st != AXON_SUCCESS) throw_status(st, what);
}

// An opaque handle for Python: programs live as long as the runtime's cache does.
uintptr_t build_program(int device, const std::string& source, const std::string& options) {
  axon_program_t program = nullptr;
  check(axon_program_from_source(device, source.c_str(), options.c_str(), &program),
        "building OpenCL C source");
  return reinterpret_cast<uintptr_t>(program);
}

// One scalar's bytes, kept alive until the launch has copied them (a double16 is the widest).
struct ScalarArg {
  unsigned char bytes[128];
  size_t size;
};

void launch(uintptr_t program, const std::string& kernel, int device,
            const std::vector<size_t>& global, const std::vector<size_t>& local,
            const std::string& signature, const py::list& args) {
  TORCH_CHECK(signature.size() == args.size(), "axon launch: signature \"", signature, "\" has ",
              signature.size(), " letters for ", args.size(), " arguments");
  TORCH_CHECK(
      !global.empty() && global.size() <= 3 && (local.empty() || local.size() == global.size()),
      "axon launch: 1 to 3 global sizes, and as many local sizes or none");
  std::vector<ScalarArg> scalars(args.size());
  std::vector<axon_arg> out(args.size());
  for (size_t i = 0; i < args.size(); i++) {
    const char kind = signature[i];
    py::handle a = args[i];
    if (kind == 'b') {
      at::Tensor t = a.cast<at::Tensor>();
      TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1 && t.device().index() == device,
                  "axon launch: argument ", i, " of ", kernel, " is on ", t.device(),
                  ", not on axon:", device);
      // An empty tensor has no memory: the kernel gets a NULL pointer.
      out[i] = {AXON_ARG_BUFFER, t.numel() ? t.data_ptr() : nullptr, 0};
      continue;
    }
    ScalarArg& s = scalars[i];
    if (kind == 'l') {
      int64_t v = a.cast<int64_t>();
      std::memcpy(s.bytes, &v, s.size = 8);
    } else if (kind == 'i') {
      int32_t v = a.cast<int32_t>();
      std::memcpy(s.bytes, &v, s.size = 4);
    } else if (kind == 'f') {
      float v = a.cast<float>();
      std::memcpy(s.bytes, &v, s.size = 4);
    } else if (kind == 'd') {
      double v = a.cast<double>();
      std::memcpy(s.bytes, &v, s.size = 8);
    } else if (kind == 'L') {
      int64_t bytes = a.cast<int64_t>();
      TORCH_CHECK(bytes > 0, "axon launch: argument ", i, " of ", kernel,
                  " (__local) needs a positive number of bytes, not ", bytes);
      out[i] = {AXON_ARG_LOCAL, nullptr, size_t(bytes)};
      continue;
    } else if (kind == 'r') {
      std::string v = a.cast<py::bytes>();
      TORCH_CHECK(!v.empty() && v.size() <= sizeof s.bytes, "axon launch: argument ", i, " of ",
                  kernel, " has ", v.size(), " bytes");
      std::memcpy(s.bytes, v.data(), s.size = v.size());
    } else {
      TORCH_CHECK(false, "axon launch: unknown argument kind '", kind, "' in \"", signature, "\"");
    }
    out[i] = {AXON_ARG_BYTES, s.bytes, s.size};
  }
  py::gil_scoped_release no_gil;
  check(axon_launch(reinterpret_cast<axon_program_t>(program), kernel.c_str(),
                    current_runtime_stream(c10::DeviceIndex(device)), int(global.size()),
                    global.data(), local.empty() ? nullptr : local.data(), out.data(),
                    int(out.size())),
        kernel.c_str());
}

std::string kernel_arg_type(uintptr_t program, const std::string& kernel, int index) {
  char type[256] = {0};
  check(axon_kernel_arg_type(reinterpret_cast<axon_program_t>(program), kernel.c_str(), index, type,
                             sizeof type),
        kernel.c_str());
  return type;
}

py::dict kernel_limits(uintptr_t program, const std::string& kernel) {
  axon_kernel_limits limits{};
  check(axon_kernel_limits_get(reinterpret_cast<axon_program_t>(program), kernel.c_str(), &limits),
        kernel.c_str());
  py::dict d;
  d["max_group_size"] = limits.max_group_size;
  d["preferred_group_multiple"] = limits.preferred_group_multiple;
  d["local_mem_bytes"] = limits.local_mem_bytes;
  d["private_mem_bytes"] = limits.private_mem_bytes;
  return d;
}

// out = kernel(inputs...) through the elementwise launcher (ops/elementwise.c's strategies:
// contiguous, rows, vector forms): broadcasting and strides through TensorIterator, 0-dim CPU
// tensors as scalar operands. Every operand has the compute dtype already (torch_axon/kernels/
// casts); the family is ew_common, then the user's registered file. Without `out` the
// iterator allocates it (the broadcast shape, laid out as the inputs are) in `dtype`.
at::Tensor user_elementwise(const std::string& family, const std::string& kernel,
                            std::optional<at::Tensor> out, const std::vector<at::Tensor>& inputs,
                            std::optional<at::ScalarType> dtype) {
  TORCH_CHECK(inputs.size() >= 1 && inputs.size() <= 3, "axon elementwise kernel ", kernel,
              ": 1 to 3 inputs, not ", inputs.size());
  at::TensorIteratorConfig config;
  config.allow_cpu_scalars(true).check_all_same_dtype(false);
  c10::Device device = c10::kCPU;
  for (const at::Tensor& t : inputs)
    if (t.device().type() == c10::DeviceType::PrivateUse1) device = t.device();
  if (out) {
    device = out->device();
    config.add_output(*out);
  } else {
    TORCH_CHECK(dtype && device.type() == c10::DeviceType::PrivateUse1, "axon elementwise kernel ",
                kernel, ": an axon input and a dtype, or an output");
    config.add_owned_output(at::Tensor()).declare_static_dtype_and_device(*dtype, device);
  }
  c10::DeviceGuard guard(device);
  for (const at::Tensor& t : inputs) config.add_const_input(t);
  auto iter = config.build();
  const at::Tensor& result = iter.output();
  check_dtype_supported(result.scalar_type(), device.index());
  axon_ew_desc d = make_ew_desc(iter);
  check(axon_elementwise_kernel(stream_for(result), family.c_str(), kernel.c_str(),
                                to_axon_dtype(result.scalar_type()), &d, 0.0, 0.0),
        kernel.c_str());
  return result;
}

py::tuple kernel_required_group(uintptr_t program, const std::string& kernel) {
  size_t group[3];
  check(
      axon_kernel_required_group(reinterpret_cast<axon_program_t>(program), kernel.c_str(), group),
      kernel.c_str());
  return py::make_tuple(group[0], group[1], group[2]);
}

py::dict kernel_device_limits(int device) {
  axon_kernel_device_limits limits{};
  check(axon_kernel_device_limits_get(device, &limits), "device limits");
  static const char* types[7] = {"char", "short", "int", "long", "float", "double", "half"};
  py::dict preferred, native, d;
  for (int k = 0; k < 7; k++) {
    preferred[types[k]] = limits.preferred_vector_width[k];
    native[types[k]] = limits.native_vector_width[k];
  }
  d["preferred_vector_width"] = preferred;
  d["native_vector_width"] = native;
  d["max_work_item_sizes"] = py::make_tuple(
      limits.max_work_item_sizes[0], limits.max_work_item_sizes[1], limits.max_work_item_sizes[2]);
  return d;
}

void register_kernel_file(const std::string& name, const std::string& text) {
  check(axon_register_kernel_file(name.c_str(), text.c_str()), name.c_str());
}

std::string kernel_file(const std::string& name) {
  char* text = axon_kernel_file_text(name.c_str());
  TORCH_CHECK(text, "axon: no kernel source file named ", name);
  std::string out(text);
  std::free(text);
  return out;
}

}  // namespace

void bind_source_kernels(py::module_& m) {
  m.def("_build_program", build_program, py::arg("device"), py::arg("source"),
        py::arg("options") = "");
  m.def("_kernel_file", kernel_file, py::arg("name"));
  m.def("_kernel_arg_type", kernel_arg_type, py::arg("program"), py::arg("kernel"),
        py::arg("index"));
  m.def("_kernel_limits", kernel_limits, py::arg("program"), py::arg("kernel"));
  m.def("_kernel_required_group", kernel_required_group, py::arg("program"), py::arg("kernel"));
  m.def("_kernel_device_limits", kernel_device_limits, py::arg("device"));
  m.def("_register_kernel_file", register_kernel_file, py::arg("name"), py::arg("text"));
  m.def("_user_elementwise", user_elementwise, py::arg("family"), py::arg("kernel"), py::arg("out"),
        py::arg("inputs"), py::arg("dtype") = py::none());
  m.def("_launch", launch, py::arg("program"), py::arg("kernel"), py::arg("device"),
        py::arg("global_size"), py::arg("local_size"), py::arg("signature"), py::arg("args"));
}

}  // namespace axon
