"""``python -m torch_axon.warmup``: builds ahead of time the kernels that common workloads use.

Runs one or two steps of each first-contact workload (the ones the benchmark's ``cold-start``
rows time) on each selected device, so that their kernels are compiled and land in the disk
cache, then states the cache folder and its size. Nothing needs it: kernels are built at their
first launch anyway; it moves that time to a moment of your choosing (``make warmup``).

    python -m torch_axon.warmup [--device axon:0 ...] [--only mlp]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

# name -> (description, builder(device, mark) -> one step, unsynchronised). A builder makes its
# model and data on the CPU, calls ``mark()``, moves them to the device, calls ``mark()`` again,
# and then makes its optimiser on the moved parameters, so that the cold-start rows can time
# the three apart.
Step = Callable[[], object]
Mark = Callable[[], None]


def _nothing() -> None:
    pass


def _training_step(opt: torch.optim.Optimizer, loss: Callable[[], torch.Tensor]) -> Step:
    """zero_grad, forward (loss()), backward, update; the loss stays on the device."""

    def step():
        opt.zero_grad()
        value = loss()
        value.backward()
        opt.step()
        return value.detach()

    return step


def _ones(device: str, mark: Mark = _nothing) -> Step:
    mark()
    mark()
    return lambda: torch.ones(3, device=device)


def _demo_mlp(device: str, mark: Mark = _nothing) -> Step:
    """The demo's model, optimiser and batch (torch_axon.demo)."""
    from .demo import make_data, make_model

    torch.manual_seed(0)
    model = make_model(32, 256, 10)
    points, labels = make_data(64, 32, 10)
    mark()
    model = model.to(device)
    x, y = points.to(device), labels.to(device)
    mark()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    return _training_step(opt, lambda: F.cross_entropy(model(x), y))


def _cnn(device: str, mark: Mark = _nothing) -> Step:
    """A ResNet-18-shaped network on 4x3x64x64 images, cross-entropy, SGD with momentum."""
    from .tools.bench.models import resnet18

    torch.manual_seed(0)
    model = resnet18(64, classes=10).train()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, 3, 64, 64, generator=g)
    y = torch.randint(0, 10, (4,), generator=g)
    mark()
    model = model.to(device)
    x, y = x.to(device), y.to(device)
    mark()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return _training_step(opt, lambda: F.cross_entropy(model(x), y))


def _gpt2(device: str, mark: Mark = _nothing) -> Step:
    """A 2-layer GPT-2 (transformers, hidden 128, random weights), AdamW, batch 2 x seq 32."""
    try:
        import transformers
    except ImportError as e:
        raise RuntimeError("transformers is not installed") from e
    config = transformers.GPT2Config(n_layer=2, n_embd=128, n_head=2, n_positions=64, vocab_size=1024)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(config).train()
    ids = torch.randint(0, 1024, (2, 32), generator=torch.Generator().manual_seed(1))
    mark()
    model = model.to(device)
    ids = ids.to(device)
    mark()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    return _training_step(opt, lambda: model(input_ids=ids, labels=ids).loss)


def _small_mlp(device: str, mark: Mark = _nothing) -> Step:
    """MLP 512-1024-512, batch 128, AdamW, ``model(x).square().mean()`` loss."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 512))
    x = torch.randn(128, 512, generator=torch.Generator().manual_seed(1))
    mark()
    model = model.to(device)
    x = x.to(device)
    mark()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    return _training_step(opt, lambda: model(x).square().mean())


WORKLOADS: dict[str, tuple[str, Callable[..., Step]]] = {
    "ones": ('torch.ones(3, device="axon")', _ones),
    "mlp": ("the demo MLP's training step (AdamW)", _demo_mlp),
    "cnn": ("ResNet-18-shaped CNN training step, 4x3x64x64, SGD", _cnn),
    "gpt2": ("2-layer GPT-2 (transformers, hidden 128) training step, AdamW", _gpt2),
    "mlp_square": ("MLP 512-1024-512 training step, batch 128, square().mean() loss, AdamW", _small_mlp),
}


def _sync(device: str) -> None:
    if torch.device(device).type == "axon":
        torch.axon.synchronize()


def first_steps(name: str, device: str = "axon") -> dict:
    """Seconds, in order, as a script spends them: building the model and data on the CPU
    (``build_s``), moving them to the device (``move_s``: the copies as the calls return),
    making the optimiser (``optimiser_s``; the first one in a process imports torch._dynamo),
    the first step as its calls return (``first_step_s``: launches and what they wait for), the
    first synchronisation after it (``first_sync_s``: the queued work finishing), and a second
    step to its synchronisation (``second_step_s``, for comparison)."""
    marks = [time.perf_counter()]
    step = WORKLOADS[name][1](device, lambda: marks.append(time.perf_counter()))
    marks.append(time.perf_counter())
    step()
    marks.append(time.perf_counter())
    _sync(device)
    marks.append(time.perf_counter())
    step()
    _sync(device)
    marks.append(time.perf_counter())
    phases = ("build_s", "move_s", "optimiser_s", "first_step_s", "first_sync_s", "second_step_s")
    return {k: b - a for k, a, b in zip(phases, marks[:-1], marks[1:], strict=True)}


def folder_size(path: str) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def _bar(done: int, total: int, width: int = 24) -> str:
    filled = width * done // total
    return "[" + "#" * filled + "-" * (width - filled) + f"] {done}/{total}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m torch_axon.warmup", description=__doc__.split("\n\n")[0])
    p.add_argument("--device", action="append", help="axon:N (repeatable; default: every axon device)")
    p.add_argument("--only", help="only workloads whose name contains this")
    args = p.parse_args(argv)
    if not torch.axon.is_available():
        print("no axon device: is an OpenCL driver (e.g. pocl-opencl-icd) installed?", file=sys.stderr)
        return 1
    devices = args.device or [f"axon:{i}" for i in range(torch.axon.device_count())]
    names = [n for n in WORKLOADS if not args.only or args.only in n]
    jobs = [(d, n) for d in devices for n in names]
    start = time.perf_counter()
    for i, (device, name) in enumerate(jobs):
        t = time.perf_counter()
        try:
            first_steps(name, device)
            note = f"{time.perf_counter() - t:5.1f} s"
        except RuntimeError as e:  # an optional dependency is missing
            note = f"skipped: {e}"
        print(f"\r{_bar(i + 1, len(jobs))} {device} {name:10s} {note}", flush=True)
    print(f"warmed up in {time.perf_counter() - start:.1f} s")
    for label, folder in cache_folders().items():
        print(f"{label}: {folder} ({folder_size(folder) / 2**20:.1f} MiB)")
    return 0


def cache_folders() -> dict[str, str]:
    """Where compiled kernels live: Axon's cache folder, and the driver's own (PoCL keeps its
    machine code inside Axon's folder unless POCL_CACHE_DIR places it elsewhere)."""
    out = {}
    axon_dir = torch.axon.kernel_cache_stats()["directory"]
    if axon_dir:
        out["kernel cache"] = axon_dir
    else:
        print("Axon's disk cache is off (AXON_CACHE_DIR=off)")
    pocl = os.environ.get("POCL_CACHE_DIR")
    if pocl and not (axon_dir and os.path.abspath(pocl).startswith(os.path.abspath(axon_dir))):
        out["PoCL's cache"] = pocl
    return out


if __name__ == "__main__":
    sys.exit(main())
