// OpenCL C source built and launched from Python: the path of generated kernels (Inductor's
// axon backend, torch_axon/inductor/) and of user kernels. Programs go through the runtime's
// program cache (memory and disk); a failed build raises with the build log. A launch runs on
// the current stream of the device; its arguments follow a signature string, one letter each:
//   b  a tensor: its memory, passed as (__global uchar *base, ulong offset) as Axon's own
//      kernels take buffers (BUF(name) in kernels/common.cl); the offset is in bytes
//   l  a Python int as a 64-bit long       i  a Python int as a 32-bit int
//   f  a Python float as a 32-bit float    d  a Python float as a 64-bit double
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

// One scalar's bytes, kept alive until the launch has copied them.
struct ScalarArg {
  unsigned char bytes[8];
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
      out[i] = {AXON_ARG_BUFFER, t.data_ptr(), 0};
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
  m.def("_launch", launch, py::arg("program"), py::arg("kernel"), py::arg("device"),
        py::arg("global_size"), py::arg("local_size"), py::arg("signature"), py::arg("args"));
}

}  // namespace axon
