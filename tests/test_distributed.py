"""The axon c10d backend: every collective, dtype and reduction against values computed in one
process, asynchronous works and streams, timeouts and bad input (csrc/distributed/backend.cpp).

Each test starts its ranks as fresh processes (distributed_harness.run_ranks); a rank raises on a
mismatch and fails the test with its traceback."""

from __future__ import annotations

import datetime
import time

import pytest
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from distributed_harness import run_ranks

AXON = "axon"


def contribution(rank: int, shape, dtype, device=AXON) -> torch.Tensor:
    """Rank ``rank``'s input: distinct per rank and element, exact in every dtype tested."""
    n = 1
    for s in shape:
        n *= s
    values = (torch.arange(n, dtype=torch.int64) % 5 + 1 + 2 * rank).reshape(shape)
    if dtype == torch.bool:
        return ((values + rank) % 2 == 0).to(device)
    return values.to(dtype).to(device)


def check(actual: torch.Tensor, expected: torch.Tensor, what: str) -> None:
    actual = actual.cpu()
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    if expected.is_floating_point() and expected.dtype.itemsize == 1:
        actual, expected = actual.float(), expected.float()
    torch.testing.assert_close(actual, expected, rtol=0, atol=0, msg=lambda m: f"{what}: {m}")


def all_contributions(world: int, shape, dtype) -> list[torch.Tensor]:
    return [contribution(r, shape, dtype, device="cpu") for r in range(world)]


def reduce_all(tensors: list[torch.Tensor], op) -> torch.Tensor:
    """The reduction computed in one process, in a type wide enough to be exact, then rounded."""
    dtype = tensors[0].dtype
    wide = torch.complex128 if dtype.is_complex else torch.float64 if dtype.is_floating_point else torch.int64
    stacked = torch.stack([t.to(wide) for t in tensors])
    if op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG):
        result = stacked.sum(0) / (len(tensors) if op == dist.ReduceOp.AVG else 1)
    elif op == dist.ReduceOp.PRODUCT:
        result = stacked.prod(0)
    elif op == dist.ReduceOp.MIN:
        result = stacked.amin(0)
    elif op == dist.ReduceOp.MAX:
        result = stacked.amax(0)
    else:
        combine = {dist.ReduceOp.BAND: torch.bitwise_and, dist.ReduceOp.BOR: torch.bitwise_or}.get(
            op, torch.bitwise_xor
        )
        result = stacked[0]
        for t in stacked[1:]:
            result = combine(result, t)
    return result.to(dtype)


# ---- the collectives --------------------------------------------------------------------------


def _collectives(rank: int, world: int) -> None:
    dist.init_process_group(device_id=torch.device(AXON, 0))
    shape = (3, 4)

    # all_reduce: every reduction, on float32; bitwise ones on integers.
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX):
        t = contribution(rank, shape, torch.float32)
        dist.all_reduce(t, op=op)
        check(t, reduce_all(all_contributions(world, shape, torch.float32), op), f"all_reduce {op}")
    for dtype in (torch.int32, torch.int64, torch.uint8):
        for op in (dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR):
            t = contribution(rank, shape, dtype)
            dist.all_reduce(t, op=op)
            check(t, reduce_all(all_contributions(world, shape, dtype), op), f"all_reduce {op} {dtype}")
    t = contribution(rank, shape, torch.float32)
    dist.all_reduce(t, op=dist._make_nccl_premul_sum(0.5))
    check(t, reduce_all(all_contributions(world, shape, torch.float32), dist.ReduceOp.SUM) * 0.5, "PREMUL_SUM")

    # all_reduce SUM in every dtype; those Gloo lacks (float8, uint16) reduce in a wider type.
    for dtype in (
        torch.float16,
        torch.bfloat16,
        torch.float64,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.uint8,
        torch.uint16,
        torch.complex64,
        torch.float8_e4m3fn,
    ):
        t = contribution(rank, shape, dtype)
        dist.all_reduce(t)
        check(t, reduce_all(all_contributions(world, shape, dtype), dist.ReduceOp.SUM), f"all_reduce {dtype}")

    # A non-contiguous tensor is reduced in place.
    base = contribution(rank, (4, 3), torch.float32)
    view = base.t()
    dist.all_reduce(view)
    check(base, reduce_all(all_contributions(world, (4, 3), torch.float32), dist.ReduceOp.SUM), "strided all_reduce")

    # Data movement in dtypes Gloo has and lacks (bool, float8, uint16 travel as bytes).
    for dtype in (torch.float32, torch.bfloat16, torch.bool, torch.float8_e5m2, torch.uint16):
        expected = all_contributions(world, shape, dtype)
        t = contribution(rank, shape, dtype)
        dist.broadcast(t, src=world - 1)
        check(t, expected[world - 1], f"broadcast {dtype}")

        outputs = [torch.empty(shape, dtype=dtype, device=AXON) for _ in range(world)]
        dist.all_gather(outputs, contribution(rank, shape, dtype))
        for r in range(world):
            check(outputs[r], expected[r], f"all_gather {dtype}")

        flat = torch.empty((world * shape[0], shape[1]), dtype=dtype, device=AXON)
        dist.all_gather_into_tensor(flat, contribution(rank, shape, dtype))
        check(flat, torch.cat(expected), f"all_gather_into_tensor {dtype}")

    # reduce to a root; the other ranks' tensors are left as they were.
    t = contribution(rank, shape, torch.float32)
    dist.reduce(t, dst=1, op=dist.ReduceOp.MAX)
    expected = reduce_all(all_contributions(world, shape, torch.float32), dist.ReduceOp.MAX)
    check(t, expected if rank == 1 else contribution(rank, shape, torch.float32, "cpu"), "reduce")

    # reduce_scatter, list and tensor forms.
    inputs = [contribution(rank, shape, torch.float32) * (i + 1) for i in range(world)]
    out = torch.empty(shape, device=AXON)
    dist.reduce_scatter(out, inputs)
    total = reduce_all(all_contributions(world, shape, torch.float32), dist.ReduceOp.SUM)
    check(out, total * (rank + 1), "reduce_scatter")
    big = contribution(rank, (world * 2, 3), torch.bfloat16)
    out = torch.empty((2, 3), dtype=torch.bfloat16, device=AXON)
    dist.reduce_scatter_tensor(out, big, op=dist.ReduceOp.AVG)
    every = reduce_all(all_contributions(world, (world * 2, 3), torch.bfloat16), dist.ReduceOp.AVG)
    check(out, every[2 * rank : 2 * rank + 2], "reduce_scatter_tensor AVG bfloat16")

    # all_to_all: lists, and one tensor with uneven splits (rank r sends r + j + 1 rows to rank j).
    ins = [torch.full((2,), float(10 * rank + j), device=AXON) for j in range(world)]
    outs = [torch.empty(2, device=AXON) for _ in range(world)]
    dist.all_to_all(outs, ins)
    for j in range(world):
        check(outs[j], torch.full((2,), float(10 * j + rank)), "all_to_all")
    in_splits = [rank + j + 1 for j in range(world)]
    out_splits = [j + rank + 1 for j in range(world)]
    send = torch.cat([torch.full((n, 2), float(100 * rank + j)) for j, n in enumerate(in_splits)]).to(AXON)
    recv = torch.empty((sum(out_splits), 2), device=AXON)
    dist.all_to_all_single(recv, send, out_splits, in_splits)
    expected = torch.cat([torch.full((n, 2), float(100 * j + rank)) for j, n in enumerate(out_splits)])
    check(recv, expected, "all_to_all_single uneven")

    # gather and scatter.
    t = contribution(rank, shape, torch.float32)
    gathered = [torch.empty(shape, device=AXON) for _ in range(world)] if rank == 0 else None
    dist.gather(t, gathered, dst=0)
    if rank == 0:
        for r, g in enumerate(gathered):
            check(g, contribution(r, shape, torch.float32, "cpu"), "gather")
    piece = torch.empty(shape, device=AXON)
    parts = [contribution(r, shape, torch.float32) * 3 for r in range(world)] if rank == 0 else None
    dist.scatter(piece, parts, src=0)
    check(piece, contribution(rank, shape, torch.float32, "cpu") * 3, "scatter")

    # Point to point: blocking, non-blocking and batched, around a ring.
    right, left = (rank + 1) % world, (rank - 1) % world
    got = torch.empty(shape, device=AXON)
    if rank % 2 == 0:
        dist.send(contribution(rank, shape, torch.float32), right)
        dist.recv(got, left)
    else:
        dist.recv(got, left)
        dist.send(contribution(rank, shape, torch.float32), right)
    check(got, contribution(left, shape, torch.float32, "cpu"), "send/recv")
    got = torch.empty(shape, dtype=torch.float16, device=AXON)
    works = [dist.isend(contribution(rank, shape, torch.float16), right), dist.irecv(got, left)]
    for w in works:
        w.wait()
    check(got, contribution(left, shape, torch.float16, "cpu"), "isend/irecv")
    got = torch.empty(shape, device=AXON)
    ops = [
        dist.P2POp(dist.isend, contribution(rank, shape, torch.float32) * 2, right),
        dist.P2POp(dist.irecv, got, left),
    ]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    check(got, contribution(left, shape, torch.float32, "cpu") * 2, "batch_isend_irecv")

    # The coalesced forms FSDP uses.
    a, b = contribution(rank, (5,), torch.float32), contribution(rank, (2, 2), torch.float32)
    with dist._coalescing_manager(device=a.device):
        dist.all_reduce(a)
        dist.all_reduce(b)
    check(a, reduce_all(all_contributions(world, (5,), torch.float32), dist.ReduceOp.SUM), "coalesced all_reduce")
    check(b, reduce_all(all_contributions(world, (2, 2), torch.float32), dist.ReduceOp.SUM), "coalesced all_reduce")
    outs = [torch.empty(world * 3, device=AXON), torch.empty(world * 2, device=AXON)]
    ins = [contribution(rank, (3,), torch.float32), contribution(rank, (2,), torch.float32)]
    with dist._coalescing_manager(device=a.device, async_ops=True) as cm:
        for o, i in zip(outs, ins, strict=True):
            dist.all_gather_into_tensor(o, i)
    cm.wait()
    check(outs[0], torch.cat(all_contributions(world, (3,), torch.float32)), "coalesced all_gather_into_tensor")
    check(outs[1], torch.cat(all_contributions(world, (2,), torch.float32)), "coalesced all_gather_into_tensor")

    # Functional collectives (DTensor's and compiled code's path).
    group = dist.group.WORLD
    t = contribution(rank, shape, torch.float32)
    check(
        funcol.all_reduce(t, "sum", group),
        reduce_all(all_contributions(world, shape, torch.float32), dist.ReduceOp.SUM),
        "funcol.all_reduce",
    )
    check(
        funcol.all_gather_tensor(t, 0, group),
        torch.cat(all_contributions(world, shape, torch.float32)),
        "funcol.all_gather",
    )
    big = contribution(rank, (world * 2, 2), torch.float32)
    every = reduce_all(all_contributions(world, (world * 2, 2), torch.float32), dist.ReduceOp.SUM)
    check(funcol.reduce_scatter_tensor(big, "sum", 0, group), every[2 * rank : 2 * rank + 2], "funcol.reduce_scatter")

    # Asynchronous works: wait, is_completed, get_future.
    t = contribution(rank, shape, torch.float32)
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    assert work.is_completed()
    check(t, reduce_all(all_contributions(world, shape, torch.float32), dist.ReduceOp.SUM), "async wait")
    t = contribution(rank, shape, torch.float32)
    future = dist.all_reduce(t, async_op=True).get_future()
    (value,) = future.wait()
    check(value, reduce_all(all_contributions(world, shape, torch.float32), dist.ReduceOp.SUM), "future value")
    chained = (
        dist.all_reduce(contribution(rank, shape, torch.float32), async_op=True)
        .get_future()
        .then(lambda f: f.value()[0] * 2)
    )
    check(
        chained.wait(), reduce_all(all_contributions(world, shape, torch.float32), dist.ReduceOp.SUM) * 2, "future.then"
    )

    # Stream order: the collective sees what the side stream queued before it, and its result is
    # what the side stream sees after wait().
    side = torch.axon.Stream()
    with torch.axon.stream(side):
        t = contribution(rank, (256, 256), torch.float32)
        t = (t @ torch.eye(256, device=AXON)) + 1
        work = dist.all_reduce(t, async_op=True)
        work.wait()
        doubled = t * 2
    torch.axon.synchronize()
    expected = reduce_all([c + 1 for c in all_contributions(world, (256, 256), torch.float32)], dist.ReduceOp.SUM)
    check(doubled, expected * 2, "stream order")

    # CPU tensors in the same group keep working, as do object collectives.
    c = contribution(rank, shape, torch.float32, "cpu")
    dist.all_reduce(c)
    check(c, reduce_all(all_contributions(world, shape, torch.float32), dist.ReduceOp.SUM), "CPU tensor")
    objects = [None] * world
    dist.all_gather_object(objects, {"rank": rank})
    assert objects == [{"rank": r} for r in range(world)], objects
    dist.barrier()


def test_collectives_two_ranks():
    run_ranks(_collectives, 2)


def test_collectives_four_ranks():
    run_ranks(_collectives, 4)


def _two_devices(rank: int, world: int) -> None:
    """POCL_DEVICES gives each process several devices; rank r uses axon:r (LOCAL_RANK)."""
    import torch_axon.distributed

    device = torch_axon.distributed.local_device()
    assert device == torch.device(AXON, rank), device
    torch.axon.set_device(device)
    dist.init_process_group("cpu:gloo,axon:axon", device_id=device)
    t = contribution(rank, (4,), torch.float32, device=device)
    dist.all_reduce(t)
    assert t.device == device
    check(t, reduce_all(all_contributions(world, (4,), torch.float32), dist.ReduceOp.SUM), "all_reduce on axon:rank")


def test_one_device_per_rank_from_pocl_devices():
    run_ranks(_two_devices, 2, env={"POCL_DEVICES": "pthread pthread"})


# ---- errors -----------------------------------------------------------------------------------


def _errors(rank: int, world: int) -> None:
    dist.init_process_group("axon")
    with pytest.raises(RuntimeError, match="Gloo cannot reduce"):
        dist.all_reduce(torch.ones(3, dtype=torch.uint64, device=AXON))
    dist.barrier()


def test_unsupported_reduction_raises():
    run_ranks(_errors, 2)


def _bad_input(rank: int, world: int) -> None:
    dist.init_process_group("axon:axon")  # axon tensors only
    with pytest.raises(RuntimeError, match="No backend type associated with device type cpu"):
        dist.all_reduce(torch.ones(3))
    # Under TORCH_DISTRIBUTED_DEBUG=DETAIL PyTorch compares every collective's shapes across ranks
    # first (its ProcessGroupWrapper, which wraps the axon backend as it does Gloo and NCCL).
    with pytest.raises(RuntimeError, match="Detected mismatch between collectives"):
        dist.all_reduce(torch.ones(3 + rank, device=AXON))


def test_wrong_device_and_mismatched_sizes_raise():
    run_ranks(_bad_input, 2, env={"TORCH_DISTRIBUTED_DEBUG": "DETAIL"})


def _timeout(rank: int, world: int) -> None:
    dist.init_process_group("axon", timeout=datetime.timedelta(seconds=3))
    t = torch.ones(4, device=AXON)
    dist.all_reduce(t)  # both ranks alive
    if rank == 1:
        time.sleep(8)  # a peer that stops taking part
        return
    start = time.monotonic()
    with pytest.raises(RuntimeError):
        dist.all_reduce(t)
    elapsed = time.monotonic() - start
    assert elapsed < 3 + 10, f"the dead peer was noticed after {elapsed:.1f} s"


def test_dead_peer_raises_within_timeout():
    run_ranks(_timeout, 2)


def _second_rank_fails(rank: int, world: int) -> None:
    if rank == 1:
        raise ValueError("rank 1 gave up")


def test_a_failed_run_reports_every_rank():
    """The harness names each rank's outcome, so a rank that only saw its peer go away does not
    hide the one that went first."""
    import torch.multiprocessing as mp

    with pytest.raises(mp.ProcessRaisedException) as caught:
        run_ranks(_second_rank_fails, 2)
    report = str(caught.value)
    assert "rank 0: " in report, report  # finished, or ended by the harness once rank 1 failed
    assert "rank 1: exit code 1; raised: ValueError: rank 1 gave up" in report, report
