"""Data-parallel training on axon: a 2-layer MLP, a few SGD steps on one fixed batch split by rank,
wrapped in DDP or sharded with FSDP2 (``fully_shard``). Each rank writes the final parameters
(FSDP2's gathered into full tensors) to ``OUT/MODE-rankR.pt``.

Every rank's loss is the mean over its equal share of the batch and both wrappers average the
gradients over the ranks, so the parameters equal those of one process training on the whole
batch (``train_single``) up to float32 rounding: tests/test_distributed_hosts.py checks that
across two network namespaces.

    torchrun --nproc-per-node 2 torch_axon/distributed/examples/train.py --mode ddp fsdp --out DIR

With two PoCL devices (``POCL_DEVICES="pthread pthread"``) each rank gets its own; otherwise all
share axon:0 (``torch_axon.distributed.local_device``).
"""

from __future__ import annotations

import argparse
import os

import torch
import torch.distributed as dist
from torch import nn

import torch_axon  # noqa: F401  (registers the device and the "axon" backend when run as a script)
import torch_axon.distributed as axon_dist

DIM_IN, HIDDEN, DIM_OUT = 16, 32, 4
BATCH = 32  # divisible by every world size the example is run with (1, 2, 4)
STEPS = 5
LR, MOMENTUM = 0.05, 0.9
MODES = ("ddp", "fsdp")


def make_model() -> nn.Sequential:
    """The same initial weights in every process (made on the CPU, then moved)."""
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(DIM_IN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, DIM_OUT))


def make_batch() -> tuple[torch.Tensor, torch.Tensor]:
    """The whole batch: every rank makes all of it and keeps its share."""
    g = torch.Generator().manual_seed(1)
    return torch.randn(BATCH, DIM_IN, generator=g), torch.randn(BATCH, DIM_OUT, generator=g)


def share(t: torch.Tensor, rank: int, world: int) -> torch.Tensor:
    assert t.shape[0] % world == 0, "equal shares keep the averaged gradient that of the whole batch"
    return t.chunk(world)[rank]


def train(model: nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int = STEPS) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()


def parameters(model: nn.Module) -> dict[str, torch.Tensor]:
    """Full parameters on the CPU; DTensor shards (FSDP2) are gathered, a collective on all ranks."""
    from torch.distributed.tensor import DTensor

    out = {}
    for name, p in model.named_parameters():
        full = p.full_tensor() if isinstance(p, DTensor) else p
        out[name.removeprefix("module.")] = full.detach().cpu()
    return out


def train_single(device: torch.device | str = "axon", steps: int = STEPS) -> dict[str, torch.Tensor]:
    """The reference: one process, the whole batch."""
    model = make_model().to(device)
    x, y = make_batch()
    train(model, x.to(device), y.to(device), steps)
    return parameters(model)


def train_distributed(mode: str, device: torch.device, steps: int = STEPS) -> dict[str, torch.Tensor]:
    """One rank of the data-parallel run (the process group is up)."""
    rank, world = dist.get_rank(), dist.get_world_size()
    model = make_model().to(device)
    if mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        model = DistributedDataParallel(model)
    elif mode == "fsdp":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        mesh = init_device_mesh(device.type, (world,))
        # Each linear layer its own FSDP unit, then the root: two all-gathers and two
        # reduce-scatters per step, as a real model's layers would give.
        for layer in model:
            if isinstance(layer, nn.Linear):
                fully_shard(layer, mesh=mesh)
        fully_shard(model, mesh=mesh)
    else:
        raise ValueError(f"mode is one of {MODES}, not {mode!r}")
    x, y = make_batch()
    train(model, share(x, rank, world).to(device), share(y, rank, world).to(device), steps)
    return parameters(model)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", nargs="+", choices=MODES, default=list(MODES))
    p.add_argument("--steps", type=int, default=STEPS)
    p.add_argument("--out", required=True, help="folder for MODE-rankR.pt")
    args = p.parse_args(argv)
    device = axon_dist.local_device()
    # As torch.cuda.set_device(LOCAL_RANK) in CUDA scripts: FSDP2 puts its buffers on the current
    # device of the mesh's type, not on the device the parameters are on.
    torch.axon.set_device(device)
    dist.init_process_group(device_id=device)
    try:
        rank = dist.get_rank()
        os.makedirs(args.out, exist_ok=True)
        for mode in args.mode:
            params = train_distributed(mode, device, args.steps)
            torch.save(params, os.path.join(args.out, f"{mode}-rank{rank}.pt"))
            print(f"rank {rank}/{dist.get_world_size()} {mode}: done on {device}", flush=True)
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
