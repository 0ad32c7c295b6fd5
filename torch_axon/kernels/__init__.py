"""Kernels users write: OpenCL C launched on axon tensors, and registered as torch ops.

- ``compile_shader`` (also ``torch.axon.compile_shader``): raw kernels, ``torch.mps``'s shape.
- ``ElementwiseKernel``: a body for one element; broadcasting, strides, dtypes and the output
  come from Axon's elementwise machinery, and inside ``torch.compile`` it fuses with the
  pointwise ops around it.
- ``ReductionKernel``: map, reduce, identity and post-map expressions over chosen dimensions.

docs/kernels.md is the tutorial.
"""

from .elementwise import ElementwiseKernel
from .library import Kernel, KernelLibrary, compile_shader
from .reduction import ReductionKernel
from .source import KernelSourceError

__all__ = ["ElementwiseKernel", "Kernel", "KernelLibrary", "KernelSourceError", "ReductionKernel", "compile_shader"]
