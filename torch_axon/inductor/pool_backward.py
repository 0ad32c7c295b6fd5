"""Average pooling's gradient in ceil mode divides each window by what the forward divided it by.

With ``ceil_mode=True`` the last window along a dimension may overhang the (padded) input. The
forward (eager, and Inductor's lowering) divides such a window by the part of it that lies
within the padded input; Inductor's ``avg_pool2d_backward`` and ``avg_pool3d_backward``
lowerings (torch 2.13) divide its gradient by the whole kernel instead whenever
``count_include_pad`` holds (PyTorch issue 198119, open). The compiled gradient is then wrong
with no error: a Hugging Face EfficientNet pools its last feature map with a kernel as large as
its hidden size (``AvgPool2d(1280, ceil_mode=True)``), so its compiled gradient came out
1280² times too small.

On axon, a backward whose windows overhang in ceil mode (the case the lowering gets wrong)
calls the op itself instead, as the lowering already does for large kernels: axon's native
kernel, which divides as the forward does. Every other call, and every other device, keeps the
lowering.
"""

from __future__ import annotations

import functools


@functools.cache
def apply() -> None:
    from torch._inductor import lowering

    aten = lowering.aten
    for op, fallback in (
        (aten.avg_pool2d_backward.default, lowering.fallback_avg_pool2d_backward),
        (aten.avg_pool3d_backward.default, lowering.fallback_avg_pool3d_backward),
    ):
        lowering.lowerings[op] = _guarded(lowering.lowerings[op], fallback)


def _guarded(upstream, fallback):
    from torch._inductor.ir import get_device_type
    from torch._inductor.lowering import pooling_size

    def lower(grad_output, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override=None):
        args = (grad_output, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        if get_device_type(x) != "axon" or not ceil_mode or not count_include_pad or divisor_override:
            return upstream(*args)
        spatial = x.get_size()[-len(kernel_size) :]
        stride = stride or kernel_size
        padding = padding or [0] * len(kernel_size)
        # pooling_size answers whether ceil mode added a window, the one that overhangs.
        overhangs = any(
            pooling_size(size, i, kernel_size, stride, padding, ceil_mode)[1] for i, size in enumerate(spatial)
        )
        return fallback(*args) if overhangs else upstream(*args)

    return lower
