"""Builds libaxon (make -C runtime) and the torch glue (torch_axon._C).

Install with `pip install --no-build-isolation -e .` against the torch already installed
(torch==2.13.0): build isolation would let pip fetch another torch.
"""

import glob
import os
import subprocess
import sys

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, include_paths

ROOT = os.path.dirname(os.path.abspath(__file__))
GENERATED = os.path.join(ROOT, "build", "generated")
GENERATED_LIST = os.path.join(GENERATED, "axon_device_checked_ops.inc")
# The glue's objects: a fixed folder inside the checkout, not the random temporary folder a PEP 660
# editable build picks. ccache (CCACHE_BASEDIR, the Makefile) then sees the same relative paths in
# every clone, so a fresh clone's build hits the cache, and ninja rebuilds only what changed.
BUILD_TEMP = os.path.join(ROOT, "build", "temp")


class BuildWithRuntime(BuildExtension):
    def run(self):
        subprocess.check_call(["make", "-C", os.path.join(ROOT, "runtime"), f"-j{os.cpu_count() or 1}"])
        # The ops whose devices CUDA checks, from this torch's native_functions.yaml.
        subprocess.check_call([sys.executable, os.path.join(ROOT, "scripts", "gen_device_checks.py"), GENERATED_LIST])
        self.build_temp = BUILD_TEMP
        super().run()


setup(
    name="torch_axon",
    version="0.1.0",
    description="Any OpenCL device as a first-class PyTorch device",
    packages=find_packages(include=["torch_axon", "torch_axon.*"]),
    ext_modules=[
        CppExtension(
            "torch_axon._C",
            # csrc/device/: the device plumbing; csrc/ops/: the op registrations, a file per family;
            # csrc/distributed/: the c10d backend.
            sorted(glob.glob("csrc/device/*.cpp") + glob.glob("csrc/ops/*.cpp") + glob.glob("csrc/distributed/*.cpp")),
            # kineto/: the profiler plugin's headers (csrc/device/profiler.cpp) include each other by bare name.
            include_dirs=[
                os.path.join(ROOT, "runtime", "include"),
                os.path.join(ROOT, "runtime"),
                os.path.join(ROOT, "csrc"),
                GENERATED,
            ]
            + [os.path.join(p, "kineto") for p in include_paths() if os.path.isdir(os.path.join(p, "kineto"))],
            extra_objects=[os.path.join(ROOT, "runtime", "build", "libaxon.a")],
            libraries=["OpenCL", "clblast", "openblas"],
            # C++20 named: torch releases before 2.13 default extensions to C++17.
            extra_compile_args=[
                "-std=c++20",
                "-O2",
                "-Wall",
                "-Wextra",
                "-Wno-unused-parameter",
                "-Wno-missing-field-initializers",
            ],
        )
    ],
    cmdclass={"build_ext": BuildWithRuntime},
    entry_points={
        "torch.backends": ["axon = torch_axon:_autoload"],
        # torch.compile(backend="axon") / torch.compiler.set_default_backend("axon"), found by
        # Dynamo without importing it at startup.
        "torch_dynamo_backends": ["axon = torch_axon.inductor.backend:axon"],
        "console_scripts": ["axon-smi = torch_axon.smi.cli:main"],
        # vLLM's platform plugins: it calls torch_axon.serving.register() in each of its processes.
        "vllm.platform_plugins": ["axon = torch_axon.serving:register"],
    },
    # The glue is built against this torch's C++ ABI: no other release can load it.
    install_requires=["torch==2.13.0"],
    python_requires=">=3.10",
)
