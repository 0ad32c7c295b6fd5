"""Fault injection (issue 24, runtime/include/axon/fault.h): the N-th device allocation, kernel
enqueue, copy, program build or collective fails as the driver's (or the network's) own failure
would. Swept over a whole training step of a small model, eager and compiled, each fault surfaces
as a Python exception that says what failed; nothing crashes or hangs, the next step succeeds, and
device memory returns to where it was. Collectives: the step all-reduces its gradients in a
one-rank axon process group (tests/test_distributed_faults.py has two ranks)."""

import contextlib
import gc
import uuid

import pytest
import torch
import torch.distributed as dist

import torch_axon  # noqa: F401
from torch_axon import _C

# At most this many positions per kind and mode: the first, the last and evenly between.
POSITIONS = 24


def _setup(compiled: bool, all_reduce: bool = False):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4)).to("axon")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(8, 16, device="axon"), torch.randn(8, 4, device="axon")
    forward = torch.compile(model) if compiled else model

    def step() -> float:
        loss = torch.nn.functional.mse_loss(forward(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        for p in model.parameters() if all_reduce else ():
            dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
        opt.step()
        return loss.item()

    return step


def _positions(n: int) -> list[int]:
    if n <= POSITIONS:
        return list(range(1, n + 1))
    return sorted({1 + round(i * (n - 1) / (POSITIONS - 1)) for i in range(POSITIONS)})


@contextlib.contextmanager
def _one_rank_group():
    dist.init_process_group("axon", store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("kind", ["alloc", "launch", "copy", "collective"])
def test_a_fault_anywhere_in_a_training_step_is_an_exception(kind, compiled):
    with _one_rank_group() if kind == "collective" else contextlib.nullcontext():
        _sweep(kind, compiled)


def _sweep(kind: str, compiled: bool) -> None:
    torch._dynamo.reset()
    step = _setup(compiled, all_reduce=kind == "collective")
    step()
    step()  # kernels built, compiled code cached, optimizer state made
    gc.collect()
    baseline = torch.axon.memory_allocated()
    _C._fault_arm(kind, 0)
    step()
    events = _C._fault_count(kind)
    assert events > 0, f"a training step makes no {kind} events"
    try:
        for n in _positions(events):
            _C._fault_arm(kind, n)
            with pytest.raises((RuntimeError, torch.OutOfMemoryError)) as failure:
                step()
                torch.axon.synchronize()
            assert "injected fault" in str(failure.value), (n, str(failure.value))
            _C._fault_arm(kind, 0)
            assert torch.isfinite(torch.tensor(step())), f"the step after fault {kind}:{n}"
    finally:
        _C._fault_arm(kind, 0)
    del failure
    gc.collect()
    step()
    gc.collect()
    assert torch.axon.memory_allocated() == baseline


def test_a_failed_program_build_is_an_exception_and_the_next_build_works():
    source = f"// {uuid.uuid4()}\n__kernel void k(__global float *x) {{ x[get_global_id(0)] += 1; }}"
    _C._fault_arm("build", 1)
    try:
        with pytest.raises(RuntimeError, match="injected fault"):
            torch.axon.compile_shader(source)
    finally:
        _C._fault_arm("build", 0)
    lib = torch.axon.compile_shader(source)
    x = torch.zeros(4, device="axon")
    lib.k(x)
    torch.testing.assert_close(x.cpu(), torch.ones(4))


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="alloc, build, launch, copy"):
        _C._fault_arm("disk", 1)
