"""Printing axon tensors on a device without cl_khr_fp64 (Mesa's rusticl on llvmpipe).

PyTorch's tensor formatting converts the values to float64 on their own device to measure
them, except on devices it knows to lack float64 (MPS, an XPU without fp64). Axon refuses
float64 on such a device (it never downcasts silently), so ``print(t)`` raised there. As
PyTorch does for those devices, the formatter's conversion goes to float32 instead.
"""


def install() -> None:
    import torch
    import torch._tensor_str as tensor_str

    original = tensor_str.tensor_totype
    if getattr(original, "_axon", False):
        return

    def tensor_totype(t):
        if t.device.type == "axon" and not torch.axon.get_device_properties(t.device).has_fp64:
            return t.to(dtype=torch.float)
        return original(t)

    tensor_totype._axon = True
    tensor_str.tensor_totype = tensor_totype
