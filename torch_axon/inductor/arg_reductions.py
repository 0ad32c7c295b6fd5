"""argmax and argmin over several dimensions of a non-contiguous tensor return logical indices.

A reduction's loop order is Inductor's choice: it follows memory, so over a transposed or
strided input the loop's position is not the element's row-major index in the reduced
dimensions (``argmax(b.as_strided((2, 2), (1, 7)))`` visited element 2 second and answered 1).
Inductor's lowering therefore hands the backend a (value, logical index) pair in that case, but
only for Triton and the C++ CPU backend (``supports_logical_index_argreduce``, decided by
``is_triton``); other backends get the value alone and their loop position. Axon's kernels take
the pair (``kernel.py``), so while an axon arg-reduction is lowered, ``is_triton`` answers yes for
axon; that function asks nothing else of ``is_triton``.
"""

from __future__ import annotations

import functools


@functools.cache
def apply() -> None:
    from torch._inductor import lowering
    from torch._inductor.ir import get_device_type

    upstream_inner = lowering._make_reduction_inner
    upstream_is_triton = lowering.is_triton

    def is_triton_or_axon(node) -> bool:
        return get_device_type(node) == "axon" or upstream_is_triton(node)

    def make_reduction_inner(x, *, reduction_type=None, **kwargs):
        if reduction_type not in ("argmax", "argmin") or get_device_type(x) != "axon":
            return upstream_inner(x, reduction_type=reduction_type, **kwargs)
        lowering.is_triton = is_triton_or_axon
        try:
            return upstream_inner(x, reduction_type=reduction_type, **kwargs)
        finally:
            lowering.is_triton = upstream_is_triton

    lowering._make_reduction_inner = make_reduction_inner
