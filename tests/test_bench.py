"""The benchmark suite (python -m torch_axon.bench) runs end to end in quick mode and its report
holds what it measured: every workload on both backends, ratios consistent with the medians,
the ceilings, the targets and the written files."""

import json
import os

import pytest
import torch

from torch_axon.bench import __main__ as bench
from torch_axon.bench import ops, pointwise
from torch_axon.bench.timing import compare


def test_compare_interleaves_and_times_each_backend():
    calls = []
    runs = {"a": (lambda: calls.append("a"), "cpu"), "b": (lambda: calls.append("b"), "axon")}
    timings = compare(runs, repeats=3, sample_s=0.001, warmup=1)
    assert set(timings) == {"a", "b"}
    assert all(len(t.samples) == 3 and t.median > 0 and t.spread >= 0 for t in timings.values())
    assert "a" in calls and "b" in calls


@pytest.mark.parametrize("w", ops.workloads(quick=True), ids=lambda w: w.name)
def test_op_workloads_agree_with_the_cpu(w):
    """Each operator workload computes the same thing on both backends (the suite would be
    comparing different work otherwise)."""
    torch.manual_seed(0)
    cpu = w.make("cpu")()
    torch.manual_seed(0)
    axon = w.make("axon")()
    torch.testing.assert_close(axon.cpu(), cpu, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", pointwise.cases(quick=True), ids=lambda c: c.label)
def test_pointwise_cases_agree_with_the_cpu(case):
    """Every case of the all-pointwise workload computes the CPU's values on axon (bfloat16
    within its precision)."""
    cpu = case.make("cpu")()
    axon = case.make("axon")().cpu()
    assert axon.dtype == cpu.dtype and axon.shape == cpu.shape
    if cpu.dtype == torch.bfloat16:
        torch.testing.assert_close(axon, cpu, rtol=1.6e-2, atol=1e-2, equal_nan=True)
    else:
        torch.testing.assert_close(axon, cpu, equal_nan=True)


@pytest.mark.parametrize("name", ["chain_1e4", "layer_norm_gelu", "mlp_square_train"])
def test_compiled_workloads_agree_with_eager_cpu(name):
    """Compiled Axon computes what eager PyTorch on the CPU does in the torch.compile rows."""
    from torch_axon.bench import compiled

    w = next(w for w in compiled.WORKLOADS if w.name == name)
    torch._dynamo.reset()
    cpu, axon = w.build("cpu", False, True)(), w.build("axon", True, True)()
    torch.testing.assert_close(axon.cpu(), cpu, rtol=1e-4, atol=1e-4)


def test_quick_suite_writes_a_consistent_report(tmp_path):
    json_path, md_path = tmp_path / "b.json", tmp_path / "b.md"
    # Models in quick mode take most of the time; mlp covers the model path.
    assert bench.main(["--quick", "--skip-compiled", "--json", str(json_path), "--markdown", str(md_path)]) == 0
    r = json.loads(json_path.read_text())
    assert {w["name"] for w in r["ops"]} == {w.name for w in ops.workloads(quick=True)}
    for w in r["ops"] + [m for m in r["models"] if "ratio" in m]:
        assert w["cpu"]["median_s"] > 0 and w["axon"]["median_s"] > 0
        assert w["ratio"] == pytest.approx(w["cpu"]["median_s"] / w["axon"]["median_s"])
    c = r["ceilings"]
    assert c["copy_ceiling_gbps"] == max(c["copy_gbps"].values()) > 0
    assert c["launch"]["queued launch (us)"] > 0
    assert any("1-element add" in t["target"] for t in r["targets"])
    assert r["device"]["name"] == torch.axon.get_device_name(0)
    text = md_path.read_text()
    assert "| dispatch: 1-element add |" in text and r["device"]["name"] in text
    for m in r["models"]:
        assert ("skipped" in m) or m["slowest_ops"], m["name"]
    assert {w["name"] for w in r["pointwise"]} == {c.label for c in pointwise.cases(quick=True)}
    assert "## Every pointwise op" in text and "## Cold start" in text
    cold = {row["name"]: row for row in r["cold_start"]["rows"]}
    assert set(cold) == {"ones", "mlp"}
    for row in cold.values():  # a fresh process built its kernels: the caches are not empty
        assert row["axon"]["first_step_s"] > 0 and row["axon"]["cache_bytes"] > 0
        assert row["cpu"]["first_step_s"] > 0
    assert any(t["target"].startswith("cold start:") for t in r["targets"])
    assert any(t["target"].startswith("pointwise float32 contiguous") for t in r["targets"])
    charts = tmp_path / "benchmarks"
    if os.path.isdir(charts):
        assert (charts / "ops.png").stat().st_size > 1000
