"""torch.profiler with ProfilerActivity.PrivateUse1: device kernels and copies with their
device times (OpenCL event profiling), nested under the op that launched them, and exported
in Chrome traces (issue 4)."""

import json

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

DEV = "axon"


@pytest.fixture(autouse=True)
def op_by_op():
    """Each op's own kernel, under that op. With fused eager mode (the default) the pointwise ops'
    kernels run later, under the op that needed their results (test_fused_eager.py checks that)."""
    with torch.axon.fused_eager(False):
        yield


def profiled(fn):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        fn()
        torch.axon.synchronize()
    return prof


# relu's kernel: the element-per-item form, or on CPU devices its vector form (ew_common.cl).
RELU_KERNELS = {"ew_relu", "ewv_relu"}


def work():
    x = torch.randn(128, 128).to(DEV)
    y = torch.relu(x @ x) + 1
    return y.sum().cpu()


def test_device_events_carry_device_time_under_their_ops():
    work()  # build the kernels outside the trace
    prof = profiled(work)
    device_events = [e for e in prof.events() if e.device_type != torch.autograd.DeviceType.CPU]
    names = {e.name for e in device_events}
    assert names & RELU_KERNELS, names
    assert "copy host->device" in names and "copy device->host" in names, names
    for e in device_events:
        assert e.device_time_total >= 0
    # key_averages attributes device time to the aten ops that launched the kernels.
    by_op = {a.key: a for a in prof.key_averages()}
    assert by_op["aten::relu"].device_time_total > 0
    assert by_op["aten::add"].device_time_total > 0


def test_kernel_times_lie_inside_the_trace(tmp_path):
    work()
    prof = profiled(work)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    copies = [e for e in events if e.get("cat") == "gpu_memcpy"]
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    assert kernels and copies and ops
    assert all(e["dur"] >= 0 for e in kernels + copies)
    assert any(e["name"] in RELU_KERNELS for e in kernels)
    # Device times are on the host clock: every kernel starts after the first op began and
    # ends before the trace was stopped (a loose bound: one second of slack).
    first_op = min(e["ts"] for e in ops)
    last_end = max(e["ts"] + e["dur"] for e in ops)
    for k in kernels:
        assert first_op - 1e3 <= k["ts"] <= last_end + 1e6, (k, first_op, last_end)
    # Each kernel is linked to the op that launched it (a flow arrow in the viewer).
    relu_kernel = next(e for e in kernels if e["name"] in RELU_KERNELS)
    relu_op = next(e for e in ops if e["name"] == "aten::relu")
    assert relu_kernel["args"]["External id"] == relu_op["args"]["External id"]
