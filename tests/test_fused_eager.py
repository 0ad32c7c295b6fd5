"""Fused eager mode (issue 26, docs/fused-eager.md): float pointwise ops recorded per stream and
launched as one generated kernel. Every test runs the same program op by op and fused, on the
same inputs, and requires the same bits (NaN where NaN), so a group that changed a rounding, an
order or an aliasing result fails here; the fused runs must also have fused (the counters say
how many groups ran as one kernel), so a test cannot pass by falling back to op-by-op eager."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

AXON = "axon"
pytestmark = pytest.mark.skipif(not torch.axon.is_available(), reason="no axon device")


fused = torch.axon.fused_eager  # the mode inside a block, put back after


def run_both(program, *inputs, repeats: int = 3):
    """program(*axon copies of inputs) op by op, then fused `repeats` times (a group's kernel is
    built on its structure's second appearance, in the background: each repeat waits for it);
    returns (unfused, last fused) results on the CPU and the counters of the fused runs."""
    with fused(False):
        expected = _to_cpu(program(*[x.to(AXON) for x in inputs]))
    torch.axon.fused_eager_stats(reset=True)
    with fused(True):
        for _ in range(repeats):
            got = _to_cpu(program(*[x.to(AXON) for x in inputs]))
            torch.axon.wait_fused_kernel_builds()
    return expected, got, torch.axon.fused_eager_stats(reset=True)


def _to_cpu(result):
    if isinstance(result, torch.Tensor):
        return result.cpu()
    return [r.cpu() for r in result]


def assert_same_bits(expected, got):
    expected = expected if isinstance(expected, list) else [expected]
    got = got if isinstance(got, list) else [got]
    for e, g in zip(expected, got, strict=True):
        torch.testing.assert_close(g, e, rtol=0, atol=0, equal_nan=True)


def _chain(a, b, c):
    return F.relu(a * b + c) * 0.5


@pytest.mark.parametrize("n", [1, 7, 8, 9, 1000, 100_003])
def test_a_chain_fuses_with_the_same_bits(n):
    g = torch.Generator().manual_seed(n)
    a, b, c = (torch.randn(n, generator=g) for _ in range(3))
    expected, got, stats = run_both(_chain, a, b, c)
    assert_same_bits(expected, got)
    assert stats["groups_fused"] >= 1 and stats["ops_fused"] >= 4, stats
    # a * b, + c and relu were freed before their group ran (their memory taken again by the
    # later results, which the allocator hands the freed blocks): only the last result is written.
    assert stats["stores_skipped"] >= 1, stats


# Special values through every kind of op: NaN, infinities, signed zeros, subnormals, extremes.
SPECIAL = torch.tensor(
    [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-42, -1e-42, 3.4e38, -3.4e38]
    + [1.0, -1.0, 0.5, 2.0, 88.7, -104.0, 1e-7]
)


def _special_inputs(n: int = 1000):
    g = torch.Generator().manual_seed(7)
    x = torch.randn(n, generator=g) * 4
    x[: SPECIAL.numel()] = SPECIAL
    y = torch.randn(n, generator=g).abs() + 0.1
    y[SPECIAL.numel() : 2 * SPECIAL.numel()] = SPECIAL
    return x, y


UNARY = [
    torch.exp, torch.log, torch.sqrt, torch.rsqrt, torch.sin, torch.cos, torch.tan, torch.tanh,
    torch.sigmoid, torch.erf, torch.erfc, torch.abs, torch.neg, torch.floor, torch.ceil,
    torch.round, torch.trunc, torch.reciprocal, torch.expm1, torch.log1p, torch.atan, torch.asinh,
    torch.sign, F.silu, F.gelu, F.softplus, F.elu, F.mish, F.hardswish, torch.lgamma,
    torch.digamma, torch.special.i0, torch.special.erfinv, torch.exp2, torch.log2, torch.frac,
]  # fmt: skip
BINARY = [
    torch.add, torch.sub, torch.mul, torch.div, torch.maximum, torch.minimum, torch.pow,
    torch.atan2, torch.fmod, torch.remainder, torch.hypot, torch.copysign, torch.xlogy,
    torch.fmax, torch.fmin, torch.nextafter,
]  # fmt: skip


@pytest.mark.parametrize("op", UNARY, ids=lambda f: f.__name__)
def test_each_unary_op_in_a_group(op):
    """The op between two others, so that it is inside a group: its result comes from a register
    and goes on to the next op without memory."""
    x, _ = _special_inputs()
    expected, got, stats = run_both(lambda x: op(x * 1.5) - 0.25, x)
    assert_same_bits(expected, got)
    assert stats["ops_recorded"] >= 3 and stats["groups_fused"] >= 1, f"{op.__name__} did not fuse: {stats}"


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
def test_each_binary_op_in_a_group(op):
    x, y = _special_inputs()
    expected, got, stats = run_both(lambda x, y: op(x + 0.5, y) * 2.0, x, y)
    assert_same_bits(expected, got)
    assert stats["ops_recorded"] >= 3 and stats["groups_fused"] >= 1, f"{op.__name__} did not fuse: {stats}"


FLOAT_TYPES = [torch.float64, torch.float16, torch.bfloat16]


def _chunks(ops, size):
    return [ops[i : i + size] for i in range(0, len(ops), size)]


@pytest.mark.parametrize("dtype", FLOAT_TYPES, ids=str)
def test_other_float_types_fuse_with_the_same_bits(dtype):
    """float64 in double; float16 and bfloat16 computed in float with every op's result rounded
    to the storage type, as the unfused kernels store it: the same bits, special values included.
    Several ops share a group (a chunk of the lists above), so that each op's result goes on to
    the next op in a register."""
    x, y = (t.to(dtype) for t in _special_inputs())
    for chunk in _chunks(UNARY, 6):
        expected, got, stats = run_both(lambda x, chunk=chunk: [op(x * 1.5) - 0.25 for op in chunk], x)
        assert_same_bits(expected, got)
        assert stats["groups_fused"] >= 1, f"{[op.__name__ for op in chunk]} did not fuse: {stats}"
    for chunk in _chunks(BINARY, 4):
        expected, got, stats = run_both(lambda x, y, chunk=chunk: [op(x + 0.5, y) * 2.0 for op in chunk], x, y)
        assert_same_bits(expected, got)
        assert stats["groups_fused"] >= 1, f"{[op.__name__ for op in chunk]} did not fuse: {stats}"
    for n in (7, 9, 100_003):  # the element form, the splatted tail, many work-items
        g = torch.Generator().manual_seed(n)
        a, b, c = (torch.randn(n, generator=g).to(dtype) for _ in range(3))
        expected, got, stats = run_both(_chain, a, b, c)
        assert_same_bits(expected, got)
        assert stats["groups_fused"] >= 1, stats


def test_float_types_keep_apart():
    """Ops of different float types on one stream record into groups of their own type."""
    a = torch.randn(1000)

    def program(a):
        h, d = a.half(), a.double()
        return [(h * 2 + 1) * h, (d * 2 + 1) * d, (a * 2 + 1) * a]

    expected, got, stats = run_both(program, a)
    assert_same_bits(expected, got)
    assert stats["groups_fused"] >= 3, stats


def test_in_place_ops_and_aliasing_inputs():
    def program(x, y):
        x.mul_(2).add_(y)  # in place, twice
        z = x * x  # the same tensor as both operands
        y.sub_(z)  # an input written after it was read
        return [x, y, z + y]

    x, y = _special_inputs()
    expected, got, stats = run_both(program, x, y)
    assert_same_bits(expected, got)
    assert stats["groups_fused"] >= 1, stats


def test_overlapping_views_end_a_group():
    """t[1:] overlaps t[:-1] by all but one element: writing one while the group reads the other
    must not see the new values early (or late)."""

    def program(t):
        a = t[:-1] * 2
        t[1:].add_(1)
        return [a + t[:-1], t]

    x, _ = _special_inputs()
    expected, got, _ = run_both(program, x)
    assert_same_bits(expected, got)


def test_results_reach_every_consumer():
    """What needs a group's results launches it first: a reduction, a matrix product, a copy to
    the CPU, .item(), a strided op, another dtype, an index, printing."""

    def program(a, b):
        h = a * b + 1
        s = h.sum()  # a reduction reads h
        m = (h.view(10, 100) * 3) @ b.view(100, 10)  # a product
        k = (h * 2)[::3]  # a strided view of a pending result
        c = (h - 1).cpu().to(AXON)  # a host copy
        i = (h * 4).to(torch.float64).to(torch.float32)  # a cast
        v = (h + 5)[torch.tensor([3, 1, 4], device=AXON)]  # an index
        t = torch.tensor((h / 7)[0].item(), device=AXON)  # a host read
        str(h + 9)  # printing reads it too
        return [s, m, k, c, i, v, t]

    a, b = _special_inputs()
    expected, got, stats = run_both(program, a.clamp(-3, 3), b)
    assert_same_bits(expected, got)
    assert stats["ops_recorded"] >= 8, stats


def test_streams_events_and_synchronize():
    def program(a, b):
        side = torch.axon.Stream()
        x = a * b + 1
        event = torch.axon.Event()
        event.record()
        with torch.axon.stream(side):
            side.wait_event(event)
            y = x * 2 - a  # reads the default stream's result on another stream
            x.record_stream(side)
        torch.axon.current_stream().wait_stream(side)
        torch.axon.synchronize()
        return [x, y]

    a, b = _special_inputs()
    expected, got, _ = run_both(program, a, b)
    assert_same_bits(expected, got)


def test_empty_cache_with_recorded_work():
    def program(a, b):
        x = a * b
        y = x + 1
        del x
        torch.axon.empty_cache()  # the freed x's memory goes back to the driver
        return y * 3

    a, b = _special_inputs()
    expected, got, _ = run_both(program, a, b)
    assert_same_bits(expected, got)


def test_memory_statistics_are_those_of_unfused_eager():
    a, b = _special_inputs(1 << 16)

    def allocated(on: bool) -> tuple[int, int]:
        with fused(on):
            x, y = a.to(AXON), b.to(AXON)
            torch.axon.synchronize()
            torch.axon.reset_peak_memory_stats()
            before = torch.axon.memory_allocated()
            z = _chain(x, y, x)
            torch.axon.synchronize()
            return torch.axon.memory_allocated() - before, torch.axon.max_memory_allocated() - before, z

    unfused_now, unfused_peak, _ = allocated(False)
    fused_now, fused_peak, _ = allocated(True)
    assert (fused_now, fused_peak) == (unfused_now, unfused_peak)


def test_errors_are_raised_at_the_op():
    with fused(True):
        a = torch.ones(4, device=AXON)
        pending = a * 2
        with pytest.raises(RuntimeError, match="size of tensor a"):
            pending + torch.ones(5, device=AXON)
        assert pending.cpu().tolist() == [2.0] * 4


def test_training_steps_are_the_same():
    """Three steps of an MLP under Adam (foreach): forward, backward and the optimizer's
    pointwise work fuse; the parameters must come out bit for bit the same."""

    def train(on: bool):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 8)).to(AXON)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2, foreach=True)
        g = torch.Generator().manual_seed(1)
        with fused(on):
            for _ in range(3):
                x = torch.randn(16, 32, generator=g).to(AXON)
                loss = model(x).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                torch.axon.wait_fused_kernel_builds()
            return [p.detach().cpu() for p in model.parameters()]

    expected = train(False)
    torch.axon.fused_eager_stats(reset=True)
    got = train(True)
    stats = torch.axon.fused_eager_stats(reset=True)
    assert_same_bits(expected, got)
    assert stats["groups_fused"] >= 1, stats


def test_a_foreach_adamw_update_of_a_dozen_tensors_is_one_kernel():
    """foreach AdamW issues each op over every tensor before the next op, so one tensor's update
    (8 ops over its parameter, gradient, two moments and a temporary) spreads over the whole call:
    a group holds all of it for 12 same-sized tensors (96 ops, 60 buffers, its scalars shared), and
    the temporaries, freed when the call returns, are never stored."""
    g = torch.Generator().manual_seed(0)
    values = [torch.randn(1000, generator=g) for _ in range(12)]
    grads = [torch.randn(1000, generator=g) * 1e-2 for _ in range(12)]

    def steps(on: bool):
        params = [v.to(AXON).requires_grad_() for v in values]
        for p, grad in zip(params, grads, strict=True):
            p.grad = grad.to(AXON)
        opt = torch.optim.AdamW(params, lr=1e-2, weight_decay=0.1, foreach=True)
        with fused(on):
            for step in range(4):
                torch.axon.wait_fused_kernel_builds()
                if step == 3:
                    torch.axon.fused_eager_stats(reset=True)
                opt.step()
                torch.axon.current_stream().synchronize()
            return [p.detach().cpu() for p in params], torch.axon.fused_eager_stats(reset=True)

    expected, _ = steps(False)
    got, last_step = steps(True)
    assert_same_bits(expected, got)
    assert (last_step["groups_fused"], last_step["ops_fused"]) == (1, 96), last_step
    assert last_step["stores_skipped"] == 12, last_step


def test_switching_off_launches_recorded_work():
    before = torch.axon.is_fused_eager_enabled()
    with fused(True):
        x = torch.full((100,), 3.0, device=AXON)
        torch.axon.fused_eager_stats(reset=True)
        y = x * 2 + 1
        assert torch.axon.fused_eager_stats()["ops_recorded"] == 2  # recorded, not launched
        torch.axon.set_fused_eager(False)  # the context puts the mode back as it found it
        assert not torch.axon.is_fused_eager_enabled()
        assert y.cpu().tolist() == [7.0] * 100
    assert torch.axon.is_fused_eager_enabled() == before


def test_the_profiler_names_the_ops_of_a_fused_kernel():
    from torch.profiler import ProfilerActivity, profile

    a, b, c = (torch.randn(4096).to(AXON) for _ in range(3))
    with fused(True):
        for _ in range(3):  # the group's kernel is built on its second appearance
            _chain(a, b, c).sum()
            torch.axon.wait_fused_kernel_builds()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
            _chain(a, b, c).sum().cpu()
    names = {e.name for e in prof.events() if e.device_type != torch.autograd.DeviceType.CPU}
    assert "fused_mul_add_relu_mul" in names, names


def test_two_threads_on_one_stream():
    """Two threads record into the default stream's groups at once and read their own results:
    a thread's read must wait for a group another thread is launching (it once passed it)."""
    import threading

    def work(seed: int) -> list[torch.Tensor]:
        g = torch.Generator().manual_seed(seed)
        w = torch.randn(48, 48, generator=g).to(AXON) / 7
        h = torch.randn(32, 48, generator=g).to(AXON)
        out = []
        for _ in range(40):
            h = torch.tanh(h @ w) * 0.5 + 0.1
            out.append(h.sum(dim=-1).cpu())
        return out

    expected = {}
    with fused(False):
        for seed in (1, 2):
            expected[seed] = work(seed)
    got, errors = {}, []

    def drive(seed: int) -> None:
        try:
            got[seed] = work(seed)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    with fused(True):
        for _ in range(3):
            threads = [threading.Thread(target=drive, args=(seed,)) for seed in (1, 2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors, errors
            for seed in (1, 2):
                assert_same_bits(expected[seed], got[seed])


# What the programs run in a fresh process share: a chain of unary ops, run three times (its
# kernel is built on the second), and its input.
CHAIN_PROGRAM = """
import atexit, torch, torch_axon

def chain(x, ops):
    for op in ops:
        x = op(x)
    return x

def run(ops, x):
    for _ in range(3):
        y = chain(x, ops).cpu()
        torch.axon.wait_fused_kernel_builds()
    return y

x = torch.linspace(-3, 3, 1000, device="axon")
"""

STOP_AT_EXIT = (
    CHAIN_PROGRAM
    + """
first, second = [torch.sin, torch.exp, torch.tanh], [torch.cos, torch.sigmoid, torch.neg]
torch.axon.set_fused_eager(True)
run(first, x)
built = torch.axon.fused_eager_stats()["kernels_built"]
atexit._run_exitfuncs()  # what the interpreter's exit runs first
torch.axon.fused_eager_stats(reset=True)
got_first, got_second = run(first, x), run(second, x)
stats = torch.axon.fused_eager_stats()
torch.axon.set_fused_eager(False)
print(built, stats["kernels_built"], stats["groups_fused"], stats["groups_unfused"],
      torch.equal(got_first, chain(x, first).cpu()), torch.equal(got_second, chain(x, second).cpu()))
"""
)


def test_builds_stop_at_python_exit():
    """Python's exit stops the kernel builder before C's exit handlers run (a build in flight
    then would use objects of the driver's compiler they destroyed): afterwards a new structure
    is not built and runs op by op, a built one still runs fused, and every result is right."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", STOP_AT_EXIT], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    built, built_after, fused_after, unfused_after, first_ok, second_ok = run.stdout.split()
    assert int(built) >= 1 and int(built_after) == 0, run.stdout
    assert int(fused_after) == 3 and int(unfused_after) == 3, run.stdout  # first fused, second not
    assert first_ok == second_ok == "True", run.stdout


EVICTION = (
    CHAIN_PROGRAM
    + """
unary = [torch.sin, torch.cos, torch.exp, torch.tanh, torch.sigmoid, torch.neg, torch.abs, torch.erf]
chains = [[unary[i], unary[(i + 1) % 8], unary[(i + 3) % 8]] for i in range(8)]
torch.axon.set_fused_eager(False)  # on by default
expected = [chain(x, c).cpu() for c in chains]  # op by op: the unfused kernels' programs
programs = torch_axon._C._live_objects()["programs"]
torch.axon.set_fused_eager(True)
torch.axon.fused_eager_stats(reset=True)
right = all(torch.equal(run(c, x), e) for c, e in zip(chains + chains[:1], expected + expected[:1]))
stats = torch.axon.fused_eager_stats()
torch.axon.set_fused_eager(False)
print(stats["kernels_built"], stats["kernels_evicted"], stats["groups_fused"],
      torch_axon._C._live_objects()["programs"] - programs, right)
"""
)


def test_least_used_kernels_are_evicted_past_the_limit():
    """Past AXON_FUSED_MAX_KERNELS programs the least recently launched one is discarded, with its
    OpenCL objects, so that a long process keeps fusing new structures in bounded memory; a
    structure that returns after its eviction is built again (from the disk cache) and fuses."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, AXON_FUSED_MAX_KERNELS="3")
    run = subprocess.run([sys.executable, "-c", EVICTION], capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    built, evicted, fused_groups, new_programs, right = run.stdout.split()
    assert int(built) == 9 and int(evicted) == 6, run.stdout  # 8 chains, then the first again
    assert int(fused_groups) == 9 and right == "True", run.stdout  # each chain's third run fused
    assert int(new_programs) <= 3, run.stdout  # at most the limit's programs stay
