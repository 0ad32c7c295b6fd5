"""PyTorch's CPU Inductor (torch 2.13.0) writes past the output of ``F.fold`` after a permute.

No Axon here: CPU tensors, ``torch.compile`` with the default backend. This is the last step of
timm's VOLO outlook attention (``attn @ v`` permuted, folded back to an image). Inductor lowers
``col2im`` to a scatter-add and its C++ code vectorizes the channel loop with a tile transpose;
the index of a tile's inner channel is given twice its stride (``200L*x1_inner`` where the
channel stride is 100), so the atomic adds land in the wrong channels and past the buffer's end.
glibc then aborts at a later free ("double free or corruption", exit 134); where it does not,
the values differ from eager.

    TORCH_DEVICE_BACKEND_AUTOLOAD=0 python scripts/upstream/inductor_cpu_fold.py

docs/reliability.md (the compiled model sweep) tells what it means for the sweep.
"""

import torch
import torch.nn.functional as F

B, C, HEADS, H, W, K, STRIDE, PAD = 2, 32, 2, 8, 8, 3, 2, 1
h, w = H // STRIDE, W // STRIDE


def outlook_fold(y: torch.Tensor) -> torch.Tensor:
    """y: (B, heads, h*w, K*K, C/heads), as VOLO's ``attn @ v`` gives it."""
    x = y.permute(0, 1, 4, 3, 2).reshape(B, C * K * K, h * w)
    return F.fold(x, output_size=(H, W), kernel_size=K, padding=PAD, stride=STRIDE).permute(0, 2, 3, 1)


if __name__ == "__main__":
    torch.manual_seed(0)
    y = torch.randn(B, HEADS, h * w, K * K, C // HEADS)
    eager = outlook_fold(y)
    compiled = torch.compile(outlook_fold)(y)
    print(f"largest |compiled - eager|: {(compiled - eager).abs().max().item():.3g}")
