"""The axon device in PyTorch: discovery, the device module, memory, streams, errors."""

import os
import subprocess
import sys

import pytest
import torch

import torch_axon


def test_available_and_autoloaded():
    # `import torch` alone registered the backend (torch.backends entry point).
    out = subprocess.run(
        [sys.executable, "-c", "import torch; x = torch.ones(3, device='axon'); print(float((x * 2).sum()))"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "6.0"
    assert torch.axon.is_available()
    assert torch.axon.device_count() >= 1
    assert torch._C._get_privateuse1_backend_name() == "axon"


def test_device_properties():
    props = torch.axon.get_device_properties(0)
    info = torch_axon._C.device_info(0)  # the runtime's own answer, straight from OpenCL
    # CUDA's attribute names, with the OpenCL device's figures
    assert props.name == info["name"] == torch.axon.get_device_name(0)
    assert props.total_memory == info["global_mem_bytes"] > 0
    assert props.multi_processor_count == props.max_compute_units == info["compute_units"] >= 1
    assert props.has_fp64 is info["fp64"] and props.has_fp16 is info["fp16"]
    assert props.type == ("cpu" if info["is_cpu"] else "gpu") and props.is_integrated is info["is_cpu"]
    assert props.max_mem_alloc_size <= props.total_memory
    assert ("cl_khr_fp64" in props.extensions) == props.has_fp64
    assert props == torch.axon.get_device_properties(torch.device("axon", 0))
    assert "total_memory=" in repr(props) and props.name in repr(props)
    # No invented compute capability: a CUDA-only check fails loudly.
    with pytest.raises(AttributeError):
        props.major  # noqa: B018


def test_current_device_and_accelerator():
    assert torch.axon.current_device() == 0
    assert torch.accelerator.current_accelerator().type == "axon"
    assert torch.accelerator.device_count() == torch.axon.device_count()
    t = torch.zeros(2, device="axon")
    assert t.device == torch.device("axon", 0)
    assert t.is_axon if hasattr(t, "is_axon") else True


def test_generated_methods():
    t = torch.arange(4.0).axon()
    assert t.device.type == "axon"
    m = torch.nn.Linear(2, 2).axon()
    assert next(m.parameters()).device.type == "axon"


def test_out_of_range_device_index():
    with pytest.raises((IndexError, RuntimeError), match="out of range"):
        torch.axon.set_device(99)
    with pytest.raises((IndexError, RuntimeError)):
        torch.zeros(1, device="axon:99")


def test_petabyte_allocation_is_out_of_memory_and_recoverable():
    with pytest.raises(torch.OutOfMemoryError) as info:
        torch.empty(2**50, dtype=torch.uint8, device="axon")
    message = str(info.value)
    assert "Tried to allocate" in message and "limit" in message and "allocated" in message
    # The process carries on: the next allocation succeeds.
    t = torch.ones(1000, device="axon")
    assert float(t.sum()) == 1000.0


def test_memory_statistics_and_empty_cache():
    torch.axon.empty_cache()
    before = torch.axon.memory_allocated()
    t = torch.empty(1 << 20, dtype=torch.float32, device="axon")
    assert torch.axon.memory_allocated() >= before + (4 << 20)
    assert torch.axon.max_memory_allocated() >= torch.axon.memory_allocated()
    assert torch.axon.memory_reserved() >= torch.axon.memory_allocated()
    del t
    assert torch.axon.memory_allocated() == before
    torch.axon.empty_cache()
    free, total = torch.axon.mem_get_info()
    assert 0 < free <= total
    kept = torch.empty(1 << 18, dtype=torch.float32, device="axon")  # 1 MiB
    torch.axon.reset_peak_memory_stats()
    assert torch.axon.max_memory_allocated() == torch.axon.memory_allocated()
    summary = torch.axon.memory_summary()
    allocated_row = next(line for line in summary.splitlines() if line.startswith("| Allocated memory"))
    assert f"{torch.axon.memory_allocated() / 2**20:.2f} MiB" in allocated_row, summary
    del kept


def test_unsupported_dtype_is_a_clear_error():
    with pytest.raises(NotImplementedError, match="Float8_e4m3fnuz is not supported"):
        torch.zeros(2, dtype=torch.float8_e4m3fnuz, device="axon")


def test_float64_follows_the_device():
    if torch.axon.get_device_properties().has_fp64:
        x = torch.arange(5, dtype=torch.float64, device="axon")
        assert x.dtype == torch.float64
        assert torch.equal((x * 2).cpu(), torch.arange(5, dtype=torch.float64) * 2)
    else:
        with pytest.raises(NotImplementedError, match="cl_khr_fp64"):
            torch.zeros(2, dtype=torch.float64, device="axon")


def test_nested_tensor_ops_are_a_clear_error():
    nested = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], device="axon")
    with pytest.raises(NotImplementedError, match="NestedTensor"):
        nested * 2


def test_sparse_bsr_csc_layouts_are_a_clear_error():
    for sparse in (torch.eye(4).to_sparse_bsr((2, 2)), torch.eye(4).to_sparse_csc()):
        with pytest.raises(NotImplementedError, match="supports 2-d sparse CSR matrices"):
            sparse.to("axon").to_dense()


def test_streams_and_events_order_work():
    s = torch.Stream(device="axon")
    a = torch.ones(1 << 16, device="axon")
    start, end = torch.Event(enable_timing=True), torch.Event(enable_timing=True)
    ready = torch.Event()
    ready.record()  # `a` is written on the default stream: the side stream waits for it
    s.wait_event(ready)
    with torch.axon.stream(s):
        start.record(s)
        b = a * 3
        end.record(s)
    torch.axon.current_stream().wait_event(end)
    c = b + 1
    torch.axon.synchronize()
    assert end.query()
    assert start.elapsed_time(end) >= 0
    assert float(c[0]) == 4.0


def test_fallback_is_counted_and_can_be_made_an_error():
    # uint8 bilinear resizing has no native kernel (the CPU's fixed-point rounding is not
    # reproduced yet): it runs on the CPU, counted.
    torch.axon.fallback_ops(reset=True)
    x = torch.randint(0, 255, (1, 1, 4, 4), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))

    def resize(t):
        return torch.nn.functional.interpolate(t, scale_factor=2, mode="bilinear")

    assert torch.equal(resize(x.to("axon")).cpu(), resize(x))
    assert torch.axon.fallback_ops().get("aten::upsample_bilinear2d.out", 0) >= 1
    code = (
        "import torch; x = torch.zeros(1, 1, 4, 4, dtype=torch.uint8, device='axon'); "
        "torch.nn.functional.interpolate(x, scale_factor=2, mode='bilinear')"
    )
    env = dict(os.environ, AXON_FALLBACK="error")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode != 0 and "AXON_FALLBACK=error" in out.stderr


def test_fallback_names_ops_the_cpu_lacks_too():
    """An accelerator-only op (no native axon kernel, no CPU kernel): a clear error, not counted."""
    assert not torch._C._dispatch_has_kernel_for_dispatch_key("aten::_masked_scale", "CPU")
    torch.axon.fallback_ops(reset=True)
    x = torch.ones(4, device="axon")
    with pytest.raises(NotImplementedError, match="_masked_scale has no native axon kernel, and PyTorch's CPU"):
        torch.ops.aten._masked_scale(x, torch.ones(4, dtype=torch.bool, device="axon"), 2.0)
    assert "aten::_masked_scale" not in torch.axon.fallback_ops()


def test_rng_state_layout_and_reproducibility():
    torch.axon.manual_seed(1234)
    state = torch.axon.get_rng_state()
    assert state.dtype == torch.uint8 and state.numel() == 16
    a = torch.randn(1000, device="axon")
    torch.axon.set_rng_state(state)
    b = torch.randn(1000, device="axon")
    assert torch.equal(a.cpu(), b.cpu())
    seed, offset = state[:8].view(torch.int64).item(), state[8:].view(torch.int64).item()
    assert seed == 1234 and offset == 0
