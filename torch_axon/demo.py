"""Axon's main job: train a model on the default axon device and check it against the CPU.

    python -m torch_axon.demo [--steps 200] [--width 256]

Trains the same MLP (AdamW, cross-entropy, synthetic classification data made here, nothing
downloaded) on ``axon`` and on the CPU from identical initial weights, prints the loss as it
goes and the device it ran on, and ends with the largest relative loss difference and the
ops that needed the CPU fallback (there should be none).
"""

from __future__ import annotations

import argparse
import copy
import sys
import time

import torch
from torch import nn


def make_model(features: int, width: int, classes: int) -> nn.Module:
    return nn.Sequential(
        nn.Linear(features, width),
        nn.GELU(),
        nn.Linear(width, width),
        nn.ReLU(),
        nn.Linear(width, width),
        nn.SiLU(),
        nn.Linear(width, classes),
    )


def make_data(samples: int, features: int, classes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Gaussian clusters, one per class: learnable, so the loss falls visibly."""
    g = torch.Generator().manual_seed(0)
    centers = torch.randn(classes, features, generator=g) * 2
    labels = torch.randint(0, classes, (samples,), generator=g)
    points = centers[labels] + torch.randn(samples, features, generator=g)
    return points, labels


def train(model: nn.Module, data, device: str, steps: int, batch: int, log_every: int, label: str):
    model = model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    loss_fn = nn.CrossEntropyLoss()
    points, labels = data[0].to(device), data[1].to(device)
    losses = []
    start = time.perf_counter()
    for step in range(steps):
        lo = (step * batch) % points.shape[0]
        x, y = points[lo : lo + batch], labels[lo : lo + batch]
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if log_every and (step % log_every == 0 or step == steps - 1):
            print(f"  [{label}] step {step:4d}  loss {losses[-1]:.6f}")
    return losses, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--log-every", type=int, default=20)
    args = parser.parse_args(argv)

    if not torch.axon.is_available():
        print("no axon device: is an OpenCL driver (e.g. pocl-opencl-icd) installed?", file=sys.stderr)
        return 1
    info = torch.axon.get_device_properties(0)
    print(f"axon device 0: {info.name} ({info.platform_name}, driver {info.driver_version})")

    features, classes = 32, 10
    data = make_data(4096, features, classes)
    torch.manual_seed(0)
    model = make_model(features, args.width, classes)
    reference = copy.deepcopy(model)

    torch.axon.fallback_ops(reset=True)
    torch.axon.fused_eager_stats(reset=True)
    axon_losses, axon_time = train(model, data, "axon", args.steps, args.batch, args.log_every, "axon:0")
    fallbacks = torch.axon.fallback_ops()
    cpu_losses, cpu_time = train(reference, data, "cpu", args.steps, args.batch, 0, "cpu")

    # Relative to each CPU loss, but not below a thousandth of the first loss: once the model
    # has memorised its data the loss is ~1e-6, where float32 rounding of log-softmax (~6e-8
    # absolute, about the float epsilon) is all that differs between two correct backends.
    floor = 1e-3 * abs(cpu_losses[0])
    worst = max(abs(a - c) / max(abs(c), floor) for a, c in zip(axon_losses, cpu_losses, strict=False))
    print(
        f"trained on {next(model.parameters()).device} for {args.steps} steps: "
        f"loss {axon_losses[0]:.4f} -> {axon_losses[-1]:.4f} (cpu: {cpu_losses[-1]:.4f})"
    )
    print(f"largest relative loss difference from the CPU run: {worst:.2e}")
    print(f"time: axon {axon_time:.2f} s (cold kernel builds included), cpu {cpu_time:.2f} s")
    print(f"ops that fell back to the CPU: {fallbacks if fallbacks else 'none'}")
    if torch.axon.is_fused_eager_enabled():  # docs/fused-eager.md; AXON_FUSED_EAGER=0 turns it off
        fused = torch.axon.fused_eager_stats()
        print(
            f"fused eager mode: {fused['ops_fused']} of {fused['ops_recorded']} pointwise ops ran in "
            f"{fused['groups_fused']} fused kernel launches"
        )
    ok = worst <= 1e-4 and not fallbacks
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
