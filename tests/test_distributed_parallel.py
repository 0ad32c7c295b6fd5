"""PyTorch's parallelism stack on axon, each checked against the same computation in one process
on the CPU: DDP, FSDP2 (and HSDP), DeviceMesh and DTensor, tensor parallelism (with FSDP2: 2-D),
pipeline parallelism and distributed checkpoints. Small models, a few steps: the ranks run as
processes on one machine (distributed_harness.run_ranks). The references run on the CPU, so that
a fault of axon's own kernels, which a single-process run on axon would share, shows."""

from __future__ import annotations

import copy
import functools

import torch
import torch.distributed as dist
import torch.nn as nn
from distributed_harness import run_ranks

AXON = "axon"
TOL = {"rtol": 1e-5, "atol": 1e-5}


class MLP(nn.Module):
    def __init__(self, width: int = 16, unused: bool = False):
        super().__init__()
        self.fc1 = nn.Linear(8, width)
        self.fc2 = nn.Linear(width, width)
        self.out = nn.Linear(width, 4)
        # A parameter the forward never touches (DDP's find_unused_parameters).
        self.spare = nn.Linear(4, 4) if unused else None

    def forward(self, x):
        return self.out(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def batch(step: int, size: int = 8):
    g = torch.Generator().manual_seed(1000 + step)
    return torch.randn(size, 8, generator=g), torch.randn(size, 4, generator=g)


def shard(t: torch.Tensor, rank: int, world: int) -> torch.Tensor:
    return t.chunk(world)[rank]


SGD = functools.partial(torch.optim.SGD, lr=0.1)
ADAM = functools.partial(torch.optim.Adam, lr=0.01)


def train(
    forward, parameters, optimizer, steps: int, rank: int = 0, world: int = 1, clip: bool = False, device: str = AXON
):
    """Steps of training on this rank's share of each batch (all of it in one process), on ``device``."""
    parameters = list(parameters)
    opt = optimizer(parameters)
    for step in range(steps):
        x, y = batch(step)
        nn.functional.mse_loss(forward(shard(x, rank, world).to(device)), shard(y, rank, world).to(device)).backward()
        if clip:
            nn.utils.clip_grad_norm_(parameters, 0.05)
        opt.step()
        opt.zero_grad()
    return opt


def reference_training(model: nn.Module, steps: int, accumulate: int = 1) -> nn.Module:
    """The run the distributed ones must equal: the whole batch in one process, on the CPU."""
    model = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        for micro in range(accumulate):
            x, y = batch(step * accumulate + micro)
            (nn.functional.mse_loss(model(x), y) / accumulate).backward()
        opt.step()
        opt.zero_grad()
    return model


def assert_same_parameters(actual: dict, expected: nn.Module, what: str, **tol) -> None:
    for name, p in expected.named_parameters():
        a = actual[name]
        a = a.full_tensor() if hasattr(a, "full_tensor") else a
        torch.testing.assert_close(
            a.detach().cpu(), p.detach().cpu(), msg=lambda m, name=name: f"{what} {name}: {m}", **(tol or TOL)
        )


# ---- DDP --------------------------------------------------------------------------------------


def _ddp(rank: int, world: int) -> None:
    from torch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group(device_id=torch.device(AXON, 0))
    torch.manual_seed(0)
    base = MLP()
    torch.manual_seed(0)
    with_spare = MLP(unused=True)  # the same layers, and one the forward never uses
    steps = 3
    expected = reference_training(base, steps)
    expected_accumulated = reference_training(base, steps, accumulate=2)

    variants = {
        "buckets": (base, {"bucket_cap_mb": 0.0005}),  # several gradient buckets
        "find_unused_parameters": (with_spare, {"find_unused_parameters": True}),
        "static_graph": (with_spare, {"static_graph": True}),
    }
    for what, (module, options) in variants.items():
        model = DDP(copy.deepcopy(module).to(AXON), **options)
        train(model, model.parameters(), SGD, steps, rank, world)
        assert_same_parameters(dict(model.module.named_parameters()), expected, f"DDP {what}")

    # no_sync: the first micro-batch's gradients stay local, the second's step averages both.
    model = DDP(copy.deepcopy(base).to(AXON))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        for micro in range(2):
            x, y = batch(step * 2 + micro)
            loss = nn.functional.mse_loss(model(shard(x, rank, world).to(AXON)), shard(y, rank, world).to(AXON)) / 2
            if micro == 0:
                with model.no_sync():
                    loss.backward()
            else:
                loss.backward()
        opt.step()
        opt.zero_grad()
    assert_same_parameters(dict(model.module.named_parameters()), expected_accumulated, "DDP no_sync")

    # DDP's runtime statistics come from Axon's timer (csrc/distributed/timer.cpp): DDP samples
    # them at its 10th iteration.
    for step in range(10):
        x, _ = batch(step)
        model(x.to(AXON)).sum().backward()
    stats = model._get_ddp_logging_data()
    for key in ("avg_forward_compute_time", "avg_backward_compute_time", "avg_backward_comm_time"):
        assert stats.get(key, 0) > 0, (key, stats)


def test_ddp():
    run_ranks(_ddp, 2)


# ---- FSDP2 ------------------------------------------------------------------------------------


def fsdp_training(base: nn.Module, rank: int, world: int, steps: int, clip: bool = False, **shard_options):
    from torch.distributed.fsdp import fully_shard

    model = copy.deepcopy(base).to(AXON)
    for layer in (model.fc1, model.fc2, model.out):
        fully_shard(layer, **shard_options)
    fully_shard(model, **shard_options)
    return model, train(model, model.parameters(), ADAM, steps, rank, world, clip)


def reference_adam(base: nn.Module, steps: int, clip: bool = False) -> nn.Module:
    """Adam on the whole batch in one process, on the CPU."""
    model = copy.deepcopy(base)
    return model, train(model, model.parameters(), ADAM, steps, clip=clip, device="cpu")


def _fsdp(rank: int, world: int) -> None:
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict, get_optimizer_state_dict
    from torch.distributed.fsdp import MixedPrecisionPolicy

    dist.init_process_group(device_id=torch.device(AXON, 0))
    torch.manual_seed(0)
    base = MLP()
    steps = 3
    expected, expected_opt = reference_adam(base, steps)

    for reshard in (True, False):
        model, opt = fsdp_training(base, rank, world, steps, reshard_after_forward=reshard)
        assert_same_parameters(dict(model.named_parameters()), expected, f"FSDP2 reshard_after_forward={reshard}")

    # Clipping sees the norm of the whole (sharded) gradient.
    clipped, _ = reference_adam(base, steps, clip=True)
    model, opt = fsdp_training(base, rank, world, steps, clip=True)
    assert_same_parameters(dict(model.named_parameters()), clipped, "FSDP2 clip_grad_norm_")

    # Full state dicts of the model and of the optimizer equal the single-process ones.
    model, opt = fsdp_training(base, rank, world, steps)
    full = StateDictOptions(full_state_dict=True)
    model_state = get_model_state_dict(model, options=full)
    for name, p in expected.state_dict().items():
        torch.testing.assert_close(model_state[name].cpu(), p.cpu(), **TOL)
    opt_state = get_optimizer_state_dict(model, opt, options=full)["state"]
    for name, p in expected.named_parameters():
        want = expected_opt.state[p]
        for key in ("exp_avg", "exp_avg_sq"):
            torch.testing.assert_close(opt_state[name][key].cpu(), want[key].cpu(), **TOL)

    # bfloat16 parameters in forward/backward, float32 gradient reduction: close to float32.
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    model, _ = fsdp_training(base, rank, world, steps, mp_policy=policy)
    assert_same_parameters(dict(model.named_parameters()), expected, "FSDP2 bfloat16", rtol=0.02, atol=0.01)
    assert all(p.dtype == torch.float32 for p in model.parameters())


def test_fsdp2():
    run_ranks(_fsdp, 2)


def _hsdp(rank: int, world: int) -> None:
    from torch.distributed.device_mesh import init_device_mesh

    dist.init_process_group(device_id=torch.device(AXON, 0))
    mesh = init_device_mesh(AXON, (2, 2), mesh_dim_names=("replicate", "shard"))
    torch.manual_seed(0)
    base = MLP()
    expected, _ = reference_adam(base, 2)
    model, _ = fsdp_training(base, rank, world, 2, mesh=mesh)
    assert_same_parameters(dict(model.named_parameters()), expected, "HSDP (2, 2)")


def test_hsdp_on_a_2d_mesh():
    run_ranks(_hsdp, 4)


# ---- DeviceMesh and DTensor -------------------------------------------------------------------


def _dtensor(rank: int, world: int) -> None:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

    mesh = init_device_mesh(AXON, (world,))
    assert mesh.device_type == AXON
    torch.manual_seed(0)
    a = torch.randn(8, 6)
    b = torch.randn(6, 4)

    da = distribute_tensor(a.to(AXON), mesh, [Shard(0)])
    assert da.to_local().shape == (8 // world, 6) and da.to_local().device.type == AXON
    db = distribute_tensor(b.to(AXON), mesh, [Replicate()])
    torch.testing.assert_close(da.full_tensor().cpu(), a)
    torch.testing.assert_close((da @ db).full_tensor().cpu(), a @ b, **TOL)
    torch.testing.assert_close(da.redistribute(mesh, [Replicate()]).to_local().cpu(), a)
    torch.testing.assert_close(db.redistribute(mesh, [Shard(1)]).to_local().cpu(), b.chunk(world, 1)[rank])
    torch.testing.assert_close((da.sum(0) * 2).full_tensor().cpu(), a.sum(0) * 2, **TOL)
    torch.testing.assert_close(torch.softmax(da, dim=1).full_tensor().cpu(), torch.softmax(a, 1), **TOL)

    # Partial: every rank holds a summand; redistributing reduces them.
    partial = DTensor.from_local(torch.full((3,), float(rank + 1), device=AXON), mesh, [Partial()])
    total = float(sum(range(1, world + 1)))
    torch.testing.assert_close(partial.redistribute(mesh, [Replicate()]).to_local().cpu(), torch.full((3,), total))
    scattered = partial.redistribute(mesh, [Shard(0)]).full_tensor().cpu()
    torch.testing.assert_close(scattered, torch.full((3,), total))

    # A 2-D mesh at 4 ranks: shard rows on one dimension, columns on the other.
    if world == 4:
        mesh2 = init_device_mesh(AXON, (2, 2), mesh_dim_names=("dp", "tp"))
        d2 = distribute_tensor(a.to(AXON), mesh2, [Shard(0), Shard(1)])
        assert d2.to_local().shape == (4, 3)
        torch.testing.assert_close(d2.full_tensor().cpu(), a)
        torch.testing.assert_close(
            (d2 * 3 + 1).redistribute(mesh2, [Replicate(), Replicate()]).to_local().cpu(), a * 3 + 1
        )

    # DTensor's random-number tracker: a sharded tensor draws what one device draws for the whole.
    torch.manual_seed(7)
    whole = torch.empty(16, 8, device=AXON).uniform_()
    torch.manual_seed(7)
    d = distribute_tensor(torch.empty(16, 8, device=AXON), mesh, [Shard(0)])
    d.uniform_()
    torch.testing.assert_close(d.full_tensor().cpu(), whole.cpu())


def test_dtensor_two_ranks():
    run_ranks(_dtensor, 2)


def test_dtensor_four_ranks_2d_mesh():
    run_ranks(_dtensor, 4)


# ---- tensor parallelism -----------------------------------------------------------------------


class Block(nn.Module):
    """A transformer block: self-attention and an MLP, each behind a layer norm."""

    def __init__(self, dim: int = 16, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        # Shapes come from each projection's output: under sequence parallelism the block sees its
        # rank's slice of the sequence, and the column-parallel projections the whole of it.
        h = self.norm1(x)
        q, k, v = (lin(h).unflatten(-1, (self.heads, -1)).transpose(1, 2) for lin in (self.q, self.k, self.v))
        attn = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attn.transpose(1, 2).flatten(2))
        return x + self.down(nn.functional.gelu(self.up(self.norm2(x))))


def tp_plan(sequence_parallel: bool):
    """Megatron-style: q/k/v and the MLP's up projection split by columns, the output projections by
    rows. With sequence parallelism the norms work on sequence slices and the column-parallel
    layers gather the sequence (torchtitan's plan)."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, SequenceParallel

    layout = Shard(1) if sequence_parallel else Replicate()
    plan = {name: ColwiseParallel(input_layouts=layout) for name in ("q", "k", "v", "up")}
    plan.update(proj=RowwiseParallel(output_layouts=layout), down=RowwiseParallel(output_layouts=layout))
    if sequence_parallel:
        plan.update(norm1=SequenceParallel(use_local_output=True), norm2=SequenceParallel(use_local_output=True))
    return plan


def _tensor_parallel(rank: int, world: int) -> None:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Shard
    from torch.distributed.tensor.parallel import parallelize_module

    mesh = init_device_mesh(AXON, (world,))
    torch.manual_seed(0)
    base = Block()
    x = torch.randn(2, 8, 16)
    expected_model = copy.deepcopy(base)  # on the CPU
    expected = expected_model(x)
    expected.sum().backward()

    for sequence_parallel in (False, True):
        model = parallelize_module(copy.deepcopy(base).to(AXON), mesh, tp_plan(sequence_parallel))
        # Attention heads are split across ranks: each rank's q/k/v produce its heads.
        model.heads = base.heads // world
        inp = x.to(AXON).chunk(world, 1)[rank] if sequence_parallel else x.to(AXON)
        out = model(inp)
        full = DTensor.from_local(out, mesh, [Shard(1)]).full_tensor() if sequence_parallel else out
        torch.testing.assert_close(full.cpu(), expected.cpu(), **TOL)
        out.sum().backward()
        for name, p in expected_model.named_parameters():
            grad = dict(model.named_parameters())[name].grad
            grad = grad.full_tensor() if isinstance(grad, DTensor) else grad
            torch.testing.assert_close(
                grad.cpu(), p.grad.cpu(), rtol=1e-4, atol=1e-5, msg=lambda m, name=name: f"{name}: {m}"
            )


def test_tensor_parallel():
    run_ranks(_tensor_parallel, 2)


def _two_d(rank: int, world: int) -> None:
    """FSDP2 over data-parallel ranks and tensor parallelism inside each pair (2 x 2)."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor.parallel import parallelize_module

    mesh = init_device_mesh(AXON, (2, 2), mesh_dim_names=("dp", "tp"))
    dp_rank = mesh.get_local_rank("dp")
    torch.manual_seed(0)
    base = Block()
    x = torch.randn(4, 8, 16)

    expected = copy.deepcopy(base)  # on the CPU
    opt = torch.optim.SGD(expected.parameters(), lr=0.1)
    expected(x).pow(2).mean().backward()
    opt.step()

    model = parallelize_module(copy.deepcopy(base).to(AXON), mesh["tp"], tp_plan(False))
    model.heads = base.heads // 2
    fully_shard(model, mesh=mesh["dp"])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model(x.chunk(2)[dp_rank].to(AXON)).pow(2).mean().backward()
    opt.step()
    assert_same_parameters(dict(model.named_parameters()), expected, "FSDP2 + TP", rtol=1e-4, atol=1e-5)


def test_fsdp2_with_tensor_parallel():
    run_ranks(_two_d, 4)


# ---- pipeline parallelism ---------------------------------------------------------------------


def _pipeline(rank: int, world: int) -> None:
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

    dist.init_process_group(device_id=torch.device(AXON, 0))
    torch.manual_seed(0)
    full = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
    x, y = batch(0, size=8)

    expected = copy.deepcopy(full)  # on the CPU
    expected_loss = nn.functional.mse_loss(expected(x), y)
    expected_loss.backward()

    parts = [full[:2], full[2:]]
    for schedule_class in (ScheduleGPipe, Schedule1F1B):
        stage_module = copy.deepcopy(parts[rank]).to(AXON)
        stage = PipelineStage(stage_module, rank, world, torch.device(AXON, 0))
        # The schedule splits the batch into 4 micro-batches and scales their gradients by 1/4, so
        # the mean of their mean losses is the whole batch's.
        schedule = schedule_class(stage, n_microbatches=4, loss_fn=nn.functional.mse_loss)
        if rank == 0:
            schedule.step(x.to(AXON))
        else:
            losses = []
            schedule.step(target=y.to(AXON), losses=losses)
            torch.testing.assert_close((sum(losses) / 4).cpu(), expected_loss.detach().cpu(), **TOL)
        for name, p in stage_module.named_parameters():
            index, attr = name.split(".")
            want = getattr(expected[int(index)], attr).grad  # a slice keeps the indices
            torch.testing.assert_close(
                p.grad.cpu(), want.cpu(), **TOL, msg=lambda m, name=name, s=schedule_class: f"{s.__name__} {name}: {m}"
            )


def test_pipeline_parallel():
    run_ranks(_pipeline, 2)


# ---- distributed checkpoint -------------------------------------------------------------------


def _save_fsdp_checkpoint(rank: int, world: int, path: str) -> None:
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict

    dist.init_process_group(device_id=torch.device(AXON, 0))
    torch.manual_seed(0)
    base = MLP()
    model, opt = fsdp_training(base, rank, world, 2)
    model_state, opt_state = get_state_dict(model, opt)
    dcp.save({"model": model_state, "optim": opt_state}, checkpoint_id=path)


def _load_into_other_world(rank: int, world: int, path: str) -> None:
    """Loads the 2-rank FSDP2 checkpoint at another world size (or layout) and checks it against
    the single-process training it stands for."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
    from torch.distributed.fsdp import fully_shard

    dist.init_process_group(device_id=torch.device(AXON, 0))
    torch.manual_seed(0)
    base = MLP()
    expected, expected_opt = reference_adam(base, 2)

    model = copy.deepcopy(base).to(AXON)
    torch.nn.init.zeros_(model.fc1.weight)  # anything: the checkpoint overwrites it
    if world > 1:
        fully_shard(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model_state, opt_state = get_state_dict(model, opt)
    state = {"model": model_state, "optim": opt_state}
    dcp.load(state, checkpoint_id=path)
    set_state_dict(model, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
    assert_same_parameters(dict(model.named_parameters()), expected, f"loaded at world {world}")
    # Training goes on from the loaded optimizer state as it would have in one process.
    x, y = batch(5)
    mine, whole = (shard(x, rank, world).to(AXON), shard(y, rank, world).to(AXON)), (x, y)  # the reference's: CPU
    for m, o, data in ((model, opt, mine), (expected, expected_opt, whole)):
        nn.functional.mse_loss(m(data[0]), data[1]).backward()
        o.step()
    assert_same_parameters(dict(model.named_parameters()), expected, "a step after loading")


def test_distributed_checkpoint_changes_world_size(tmp_path):
    path = str(tmp_path / "checkpoint")
    run_ranks(_save_fsdp_checkpoint, 2, path)
    run_ranks(_load_into_other_world, 1, path)
    run_ranks(_load_into_other_world, 4, path)


# ---- torch.compile with collectives -----------------------------------------------------------


def _compiled(rank: int, world: int) -> None:
    import torch.distributed._functional_collectives as funcol
    from torch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group(device_id=torch.device(AXON, 0))
    group = dist.group.WORLD

    # A functional collective inside a compiled function: Inductor calls it between its kernels.
    @torch.compile
    def scaled_sum(t):
        return funcol.all_reduce(t * 2, "sum", group) + 1

    t = torch.arange(6.0, device=AXON) * (rank + 1)
    expected = torch.arange(6.0) * 2 * sum(range(1, world + 1)) + 1
    torch.testing.assert_close(scaled_sum(t).cpu(), expected)

    # A compiled DDP model (Dynamo splits the graph at the gradient buckets) and a compiled FSDP2
    # model train as one process does.
    torch.manual_seed(0)
    base = MLP()
    expected_sgd = reference_training(base, 2)
    model = DDP(copy.deepcopy(base).to(AXON))
    train(torch.compile(model), model.parameters(), SGD, 2, rank, world)
    assert_same_parameters(dict(model.module.named_parameters()), expected_sgd, "compiled DDP")

    from torch.distributed.fsdp import fully_shard

    expected_adam, _ = reference_adam(base, 2)
    model = copy.deepcopy(base).to(AXON)
    for layer in (model.fc1, model.fc2, model.out):
        fully_shard(layer)
    fully_shard(model)
    train(torch.compile(model), model.parameters(), ADAM, 2, rank, world)
    assert_same_parameters(dict(model.named_parameters()), expected_adam, "compiled FSDP2")


def test_compiled_collectives_ddp_and_fsdp2():
    run_ranks(_compiled, 2)
