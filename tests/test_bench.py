"""The benchmark suite (python -m torch_axon.tools.bench) runs end to end in quick mode and its report
holds what it measured: every workload on both backends, ratios consistent with the medians,
the ceilings, the targets and the written files."""

import json
import os

import pytest
import torch

from torch_axon.tools.bench import __main__ as bench
from torch_axon.tools.bench import cold_start, ops, pointwise
from torch_axon.tools.bench.timing import compare


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
    within its precision), in its allocating form and in its preallocated one, which writes its
    output in place on both backends without falling back to the CPU."""
    cpu = case.make("cpu")()
    forms = [case.make("axon")]
    if case.preallocated:
        torch.axon.fallback_ops(reset=True)
        into = case.make("axon", preallocated=True)
        into()
        assert not torch.axon.fallback_ops(), case.label
        forms += [into, lambda: case.make("cpu", preallocated=True)()]
    else:
        assert case.op.note, f"{case.label}: say why it has no preallocated form"
    for form in forms:
        got = form().cpu()
        assert got.dtype == cpu.dtype and got.shape == cpu.shape
        if cpu.dtype == torch.bfloat16:
            torch.testing.assert_close(got, cpu, rtol=1.6e-2, atol=1e-2, equal_nan=True)
        else:
            torch.testing.assert_close(got, cpu, equal_nan=True)


def test_preallocated_forms_allocate_nothing():
    """The preallocated forms write where they were told: the output made beforehand, every call."""
    case = next(c for c in pointwise.cases(quick=True) if c.op.name == "add" and c.dtype == torch.float32)
    xs = pointwise._inputs(case.op, case.n, case.dtype, "axon", case.layout)
    o = torch.empty_like(xs[0])
    assert case.op.into(xs, o)().data_ptr() == o.data_ptr()
    chain = next(w for w in ops.workloads(quick=True) if w.name.startswith("chain") and "allocating" not in w.name)
    call = chain.make("axon")
    assert call().data_ptr() == call().data_ptr()


@pytest.mark.parametrize("name", ["chain_1e4", "layer_norm_gelu", "mlp_square_train"])
def test_compiled_workloads_agree_with_eager_cpu(name):
    """Compiled Axon computes what eager PyTorch on the CPU does in the torch.compile rows."""
    from torch_axon.tools.bench import compiled

    w = next(w for w in compiled.WORKLOADS if w.name == name)
    torch._dynamo.reset()
    cpu, axon = w.build("cpu", False, True)(), w.build("axon", True, True)()
    torch.testing.assert_close(axon.cpu(), cpu, rtol=1e-4, atol=1e-4)


def test_quick_suite_writes_a_consistent_report(tmp_path):
    out, data = tmp_path / "reports", tmp_path / "data"
    json_path, md_path = data / "benchmarks.json", out / "benchmarks.md"
    # Models in quick mode take most of the time; mlp covers the model path.
    assert bench.main(["--quick", "--skip-compiled", "--skip-kernels", "--out", str(out), "--data", str(data)]) == 0
    assert sorted(p.name for p in data.iterdir()) == ["benchmarks.json"]  # the raw results alone
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
    for w in r["pointwise"]:  # the kernel where there is a preallocated form, else the allocating figure
        assert w["ratio_alloc"] == pytest.approx(w["cpu_alloc"]["median_s"] / w["axon_alloc"]["median_s"])
        assert w["ratio"] == (w["ratio_out"] if w["preallocated"] else w["ratio_alloc"])
    noops = [w["name"] for w in r["pointwise"] if w["noop"]]
    assert noops and all(n.startswith("to float32") for n in noops)
    counted = next(t for t in r["targets"] if t["target"].startswith("pointwise float32 contiguous"))
    contiguous = [w for w in r["pointwise"] if w["layout"] == "contiguous" and w["dtype"] == "float32"]
    assert f"of {len(contiguous) - len(noops)} cases" in counted["measured"]  # no-ops are not counted
    assert "preallocated" in text and "allocating" in text
    assert "## Every pointwise op" in text and "## Cold start" in text
    cold = {row["name"]: row for row in r["cold_start"]["rows"]}
    assert set(cold) == {"ones", "mlp"}
    for row in cold.values():  # a fresh process built its kernels: the caches are not empty
        ax = row["axon"]
        assert ax["first_step_s"] > 0 and ax["cache_bytes"] > 0
        assert row["cpu"]["first_step_s"] > 0
        # the whole wait is judged: every phase from `import torch` to the first synchronisation
        assert ax["total_s"] == pytest.approx(sum(ax[k] for k in cold_start.PHASES))
        assert ax["import_s"] > 0 and ax["total_s"] > ax["import_s"] + ax["first_step_s"]
    judged = [t for t in r["targets"] if t["target"].startswith("cold start:")]
    assert judged and all("whole wait" in t["target"] for t in judged)
    ones = next(t for t in judged if "torch.ones" in t["target"])
    assert ones["measured"].startswith(f"{cold['ones']['axon']['total_s']:.2f} s")
    assert ones["met"] == (cold["ones"]["axon"]["total_s"] < cold_start.TARGETS["ones"])
    assert any(t["target"].startswith("pointwise float32 contiguous") for t in r["targets"])
    charts = out / "benchmarks"
    if os.path.isdir(charts):
        assert (charts / "ops.png").stat().st_size > 1000


def test_kernel_rows_quick(tmp_path):
    """The user-kernel rows (kernels.py) run and write their page and their section of benchmarks.md."""
    from torch_axon.tools.bench import kernels

    out = tmp_path / "reports"
    out.mkdir()
    (out / "benchmarks.md").write_text("# Benchmarks\n\nother rows\n")
    assert kernels.main(["--quick", "--only", "elementwise add", "--out", str(out)]) == 0
    r = json.loads((out / "data" / "kernels.json").read_text())
    (row,) = r["rows"]
    assert row["name"] == "elementwise add" and row["user"]["ms"] > 0 and row["builtin"]["ms"] > 0
    page = (out / "benchmarks.md").read_text()
    assert "other rows" in page and page.count(kernels.BEGIN) == 1 and "| elementwise add |" in page
    kernels.main(["--quick", "--only", "elementwise add", "--out", str(out)])  # refreshed, not appended
    assert (out / "benchmarks.md").read_text().count(kernels.BEGIN) == 1
