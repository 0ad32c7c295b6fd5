"""Device parity beyond operators: torch.accelerator, the memory API, streams and events,
pinned memory and DataLoader, several devices (issue 4)."""

import gc
import os
import subprocess
import sys
import textwrap

import pytest
import torch

DEV = "axon"


def mib(n: int) -> int:
    return n * 1024 * 1024


# ---- torch.accelerator --------------------------------------------------------------------


def test_accelerator_names_axon():
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator().type == "axon"
    assert torch.accelerator.device_count() == torch.axon.device_count() >= 1
    torch.accelerator.set_device_index(0)
    assert torch.accelerator.current_device_index() == 0
    stream = torch.accelerator.current_stream()
    assert stream.device == torch.device("axon", 0)
    torch.accelerator.synchronize()


def test_accelerator_memory_figures_follow_allocations():
    gc.collect()  # tensors of earlier tests caught in reference cycles go now, not mid-test
    torch.accelerator.synchronize()
    torch.accelerator.empty_cache()
    before = torch.accelerator.memory_allocated()
    torch.accelerator.reset_peak_memory_stats()
    x = torch.empty(mib(8) // 4, device=DEV)
    assert torch.accelerator.memory_allocated() - before >= mib(8)
    assert torch.axon.memory_allocated() == torch.accelerator.memory_allocated()
    assert torch.accelerator.max_memory_allocated() >= torch.accelerator.memory_allocated()
    assert torch.accelerator.memory_reserved() >= torch.accelerator.memory_allocated()
    stats = torch.accelerator.memory_stats()
    assert stats["allocated_bytes.all.current"] == torch.accelerator.memory_allocated()
    del x
    assert torch.accelerator.memory_allocated() <= before
    # The block stays cached until empty_cache returns it.
    reserved = torch.accelerator.memory_reserved()
    torch.accelerator.empty_cache()
    assert torch.accelerator.memory_reserved() < reserved
    free, total = torch.accelerator.get_memory_info()
    assert 0 < free <= total


def test_axon_memory_api_matches_cuda_names():
    torch.axon.reset_peak_memory_stats()
    x = torch.ones(mib(4) // 4, device=DEV)
    peak = torch.axon.max_memory_allocated()
    assert peak >= mib(4)
    del x
    assert torch.axon.max_memory_allocated() == peak  # the peak outlives the tensor
    torch.axon.reset_peak_memory_stats()
    assert torch.axon.max_memory_allocated() == torch.axon.memory_allocated()
    assert torch.axon.memory_reserved() >= torch.axon.memory_allocated()
    assert "Allocated memory" in torch.axon.memory_summary()
    free, total = torch.axon.mem_get_info()
    assert 0 < free <= total
    torch.axon.empty_cache()


def test_out_of_memory_is_recoverable():
    with pytest.raises(torch.OutOfMemoryError, match="Tried to allocate"):
        torch.empty(2**50, dtype=torch.uint8, device=DEV)
    assert torch.ones(4, device=DEV).sum().item() == 4.0


def test_module_to_keeps_tied_weights_tied():
    embed = torch.nn.Embedding(10, 4)
    head = torch.nn.Linear(4, 10, bias=False)
    head.weight = embed.weight
    model = torch.nn.ModuleDict({"embed": embed, "head": head})
    weight = embed.weight
    model.to(DEV)
    assert model["embed"].weight is model["head"].weight is weight
    assert weight.device.type == DEV
    model.to("cpu")
    assert model["embed"].weight is model["head"].weight is weight and weight.is_cpu


# ---- streams and events ---------------------------------------------------------------------


def busy_work(n: int = 768, rounds: int = 6) -> torch.Tensor:
    """Enough queued device work that the host reaches its next line long before it ends."""
    a = torch.randn(n, n, device=DEV) / n**0.5
    for _ in range(rounds):
        a = torch.tanh(a @ a)
    return a


def test_side_stream_copy_is_ordered_after_kernel_on_other_stream():
    producer, consumer = torch.axon.Stream(), torch.axon.Stream()
    src = torch.randn(512, 512)
    with torch.axon.stream(producer):
        x = src.to(DEV)
        y = busy_work()
        out = x * 2 + y.sum() * 0  # the result depends on the busy work finishing first
    with torch.axon.stream(consumer):
        consumer.wait_stream(producer)
        host = out.to("cpu", non_blocking=True)
        done = torch.axon.Event()
        done.record()
    done.synchronize()
    torch.testing.assert_close(host, src * 2)


def test_wait_event_and_event_timing():
    side = torch.axon.Stream()
    start, end = torch.axon.Event(enable_timing=True), torch.axon.Event(enable_timing=True)
    with torch.axon.stream(side):
        start.record()
        y = busy_work(512, 3)
        end.record()
    torch.axon.current_stream().wait_event(end)
    z = y + 1  # ordered after the side stream's work by the event
    torch.axon.synchronize()
    assert end.query() and start.query()
    assert start.elapsed_time(end) > 0
    torch.testing.assert_close(z.cpu(), y.cpu() + 1)


def test_record_stream_keeps_block_from_reuse_until_stream_work_ends():
    side = torch.axon.Stream()
    nbytes = mib(16)
    x = torch.empty(nbytes // 4, device=DEV)
    address = x.data_ptr()
    # Same-stream reuse: without record_stream, a freed block is handed out again at once.
    del x
    x = torch.empty(nbytes // 4, device=DEV)
    assert x.data_ptr() == address
    with torch.axon.stream(side):
        busy_work(1024, 8)
        x.mul_(2)
    x.record_stream(side)
    del x
    y = torch.empty(nbytes // 4, device=DEV)
    assert y.data_ptr() != address, "a block in use by another stream was reused"
    side.synchronize()
    assert not torch.axon.fallback_ops().get("aten::record_stream")


def test_record_stream_rejects_foreign_stream():
    x = torch.ones(4, device=DEV)
    with pytest.raises(RuntimeError, match="axon stream"):
        x.record_stream(torch.Stream(device="cpu"))


# ---- pinned memory --------------------------------------------------------------------------


def test_pin_memory_and_non_blocking_round_trip():
    host = torch.randn(1000, 257)
    pinned = host.pin_memory()
    assert pinned.is_pinned() and not host.is_pinned()
    dev = pinned.to(DEV, non_blocking=True)
    back = torch.empty_like(pinned).pin_memory()
    back.copy_(dev, non_blocking=True)
    torch.axon.synchronize()
    assert torch.equal(back, host)


def test_non_blocking_copy_returns_before_it_completes():
    pinned = torch.empty(mib(256) // 4).pin_memory()
    busy_work(512, 2)  # the copy queues behind this work
    dev = pinned.to(DEV, non_blocking=True)
    marker = torch.axon.Event()
    marker.record()
    assert not marker.query(), "the non_blocking copy finished before the call returned"
    marker.synchronize()
    assert dev.shape == pinned.shape


def test_dataloader_pin_memory_feeds_axon():
    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randint(0, 3, (64,)))
    loader = torch.utils.data.DataLoader(data, batch_size=16, pin_memory=True)
    model = torch.nn.Linear(8, 3).to(DEV)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    seen = 0
    for features, labels in loader:
        assert features.is_pinned() and labels.is_pinned()
        features = features.to(DEV, non_blocking=True)
        labels = labels.to(DEV, non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(features), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        seen += len(labels)
    assert seen == 64
    assert torch.isfinite(loss).item()


# ---- several devices ------------------------------------------------------------------------

TWO_DEVICES = textwrap.dedent(
    """
    import torch
    assert torch.axon.device_count() == 2 == torch.accelerator.device_count()
    a = torch.arange(6.0, device="axon:1")
    assert a.device == torch.device("axon:1")
    b = (a * 2).to("axon:0")
    assert b.device.index == 0 and b.cpu().tolist() == [0, 2, 4, 6, 8, 10]
    with torch.axon.device(1):
        assert torch.ones(2, device="axon").device.index == 1
        assert torch.accelerator.current_device_index() == 1
    assert torch.accelerator.current_device_index() == 0
    s1 = torch.axon.Stream(device=1)
    with torch.axon.stream(s1):
        c = torch.ones(3, device="axon:1") + 1
    s1.synchronize()
    assert c.cpu().tolist() == [2, 2, 2]
    m = torch.nn.Linear(4, 2).to("axon:1")
    assert m(torch.randn(5, 4, device="axon:1")).device.index == 1
    try:
        torch.ones(2, device="axon:0") + torch.ones(2, device="axon:1")
    except RuntimeError as e:
        assert "device" in str(e)
    else:
        raise AssertionError("mixing devices must raise")
    print("ok")
    """
)


def test_two_pocl_devices():
    env = dict(os.environ, POCL_DEVICES="pthread pthread", AXON_DEVICES="")
    env.pop("AXON_DEVICES")
    probe = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.axon.device_count())"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if probe.stdout.strip() != "2":
        pytest.skip(f"the OpenCL platform does not expose two devices with POCL_DEVICES: {probe.stdout}{probe.stderr}")
    run = subprocess.run([sys.executable, "-c", TWO_DEVICES], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr
