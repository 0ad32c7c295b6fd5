"""Live OpenCL objects (issue 24, runtime/include/axon/live_objects.h): the buffers, programs,
kernels, events and command queues Axon holds. After a workload's tensors are freed and the
caching allocator emptied, every count is back where it was before the workload; programs,
kernels and streams are kept for the life of the process by design, so each workload runs once
first to warm them up and must then leave them exactly as they were (no growth run after run).
"""

import gc

import pytest
import torch

import torch_axon  # noqa: F401
from torch_axon import _C

KINDS = {"buffers", "programs", "kernels", "events", "queues"}


def _settled() -> dict:
    """The counts once queued work is done, dead tensors are gone and cached memory released."""
    gc.collect()
    torch.axon.synchronize()
    torch.axon.empty_cache()
    return _C._live_objects()


def _training(device: str, compiled: bool, side: torch.Stream | None = None) -> list[float]:
    """A few AdamW steps of a small model, on batches copied from pinned memory on the stream
    `side` where one is given, with events ordering the streams; the losses."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    forward = torch.compile(model) if compiled else model
    inputs, targets = torch.randn(3, 8, 16), torch.randn(3, 8, 4)
    losses = []
    for x, y in zip(inputs, targets, strict=True):
        if side is not None:
            x, y = x.pin_memory(), y.pin_memory()
            with torch.axon.stream(side):
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                copied = torch.Event(device)
                copied.record(side)
            copied.wait(torch.axon.current_stream())
            x.record_stream(torch.axon.current_stream())
            y.record_stream(torch.axon.current_stream())
        loss = torch.nn.functional.mse_loss(forward(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_the_counts_name_every_kind_and_follow_a_tensor():
    before = _settled()
    assert set(before) == KINDS and all(isinstance(n, int) and n >= 0 for n in before.values())
    assert before["queues"] >= 1  # the default stream
    x = torch.ones(1 << 18, device="axon")  # 1 MiB: a segment of its own at least
    assert _C._live_objects()["buffers"] > before["buffers"]
    assert x.sum().item() == float(1 << 18)
    del x
    assert _settled()["buffers"] == before["buffers"]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_a_training_workload_leaves_no_object_behind(compiled):
    torch._dynamo.reset()
    cpu = _training("cpu", False)
    side = torch.Stream("axon")
    first = _training("axon", compiled, side)  # builds the kernels
    warm = _settled()
    second = _training("axon", compiled, side)
    after = _settled()
    assert after == warm, f"live OpenCL objects after a repeated workload: {after}, before it: {warm}"
    torch.testing.assert_close(torch.tensor(first), torch.tensor(cpu), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(torch.tensor(second), torch.tensor(cpu), rtol=1e-4, atol=1e-5)


def test_new_streams_do_not_accumulate():
    def on_a_new_stream():
        s = torch.Stream("axon")
        x = torch.arange(4.0).to("axon")
        with torch.axon.stream(s):
            y = x * 2
        s.synchronize()
        torch.testing.assert_close(y.cpu(), torch.arange(4.0) * 2)

    for _ in range(40):  # builds the kernel, and fills a pool of streams (CUDA's holds 32)
        on_a_new_stream()
    before = _settled()
    for _ in range(8):
        on_a_new_stream()
    assert _settled() == before


def test_profiled_commands_release_their_events():
    x = torch.randn(1000, device="axon")
    (x * 2 + 1).exp()  # builds the kernels before the baseline
    before = _settled()
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.PrivateUse1]
    with torch.profiler.profile(activities=activities) as prof:
        y = (x * 2 + 1).exp()
        torch.axon.synchronize()
        assert _C._live_objects()["events"] > before["events"]  # one per recorded command
    assert any(e.device_type != torch.autograd.DeviceType.CPU for e in prof.events())
    torch.testing.assert_close(y.cpu(), (x.cpu() * 2 + 1).exp())
    del y
    assert _settled() == before
