"""The OpInfo sweep's other modes (``--forward-ad``, ``--vmap``, ``--compile``): a few ops must pass,
and each mode must be able to fail (an axon result perturbed on purpose is a mismatch)."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("expecttest", reason="PyTorch's OpInfo database needs the expecttest package")

from torch_axon.tools import conformance  # noqa: E402

OPS = ["sin", "mul", "softmax"]


def _bad(rows) -> list[str]:
    return [f"{r.op} {r.dtype}: {r.cls}: {r.detail}" for r in rows if r.cls not in ("native-pass", "fallback-pass")]


@pytest.mark.parametrize("mode", ["forward-ad", "vmap", "compile"])
def test_mode_passes_on_common_ops(mode):
    rows = conformance.run_sweep(ops=OPS, dtypes=[torch.float32], max_samples=4, timeout=60, mode=mode)
    assert {r.op.split(".")[0] for r in rows} == set(OPS)  # every variant (softmax.with_dtype)
    assert not _bad(rows), "\n".join(_bad(rows))
    assert all(r.samples > 0 for r in rows), rows


def test_forward_ad_skips_ops_without_it():
    rows = conformance.run_sweep(ops=["argmax"], dtypes=[torch.float32], max_samples=2, mode="forward-ad")
    assert [(r.cls, r.detail) for r in rows] == [("skip", "op does not support forward AD")]


def _on_axon(moved) -> bool:
    return any(isinstance(t, torch.Tensor) and t.device.type == "axon" for t in conformance.leaves(moved))


def test_forward_ad_detects_a_wrong_tangent(monkeypatch):
    right = conformance.forward_ad_call

    def tangent_off_on_axon(op, sample, moved, tangents):
        out = right(op, sample, moved, tangents)
        if _on_axon(moved):
            out["tangent"] = [t * 1.001 for t in out["tangent"]]
        return out

    monkeypatch.setattr(conformance, "forward_ad_call", tangent_off_on_axon)
    rows = conformance.run_sweep(ops=["sin"], dtypes=[torch.float32], max_samples=2, mode="forward-ad")
    assert rows[0].cls == "mismatch" and "tangent" in rows[0].detail, rows


def test_vmap_detects_a_wrong_batch_member(monkeypatch):
    right = conformance.vmap_call

    def last_member_off_on_axon(op, sample, moved):
        out = right(op, sample, moved)
        return torch.cat([out[:-1], out[-1:] + 1e-3]) if _on_axon(moved) else out

    monkeypatch.setattr(conformance, "vmap_call", last_member_off_on_axon)
    rows = conformance.run_sweep(ops=["sin"], dtypes=[torch.float32], max_samples=2, mode="vmap")
    assert rows[0].cls == "mismatch", rows


def test_compile_detects_a_wrong_result(monkeypatch):
    right = conformance.compile_call

    def off_on_axon(op, sample, moved):
        out = right(op, sample, moved)
        return out * 1.001 if _on_axon(moved) else out

    monkeypatch.setattr(conformance, "compile_call", off_on_axon)
    rows = conformance.run_sweep(ops=["sin", "add"], dtypes=[torch.float32], max_samples=2, mode="compile")
    assert [r.cls for r in rows] == ["mismatch", "mismatch"], rows


def test_compile_skips_what_dynamo_runs_eagerly():
    rows = conformance.run_sweep(ops=["nonzero"], dtypes=[torch.float32], max_samples=2, mode="compile")
    assert rows[0].cls == "skip" and rows[0].detail.startswith("Dynamo compiled no graph"), rows


def test_compile_error_details():
    from torch._inductor.exc import InductorError

    inner = NotImplementedError("axon: reduction foo in compiled kernels\n\nmore context")
    assert (
        conformance.describe_compile_error(InductorError(inner, None))
        == "InductorError: NotImplementedError: axon: reduction foo in compiled kernels"
    )
    build = RuntimeError(
        "axon: the generated kernel axon_kernel_3 failed to build; its OpenCL C source and the build log are in "
        "/tmp/x.cl\naxon: building user kernel source failed (CL_BUILD_PROGRAM_FAILURE):\n"
        "error: /root/.cache/axon/pocl/tempfile_1.cl:12:5: use of undeclared identifier 'foo'\n"
        "error: /root/.cache/axon/pocl/tempfile_1.cl:13:5: expected expression"
    )
    assert conformance.describe_compile_error(build) == (
        "RuntimeError: generated kernel axon_kernel_3 failed to build: 12:5: use of undeclared identifier 'foo'"
    )
