"""The fast subset of the OpInfo conformance sweep (``torch_axon.tools.conformance``), in CI.

Every op of ``FAST_OPS`` has native Axon kernels, so each of its OpInfos (all variants) must be
``native-pass`` or ``fallback-pass`` at float32 (``skip`` where the variant does not apply, such as
a complex-only one): never ``mismatch`` or ``error``.
"""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("expecttest", reason="PyTorch's OpInfo database needs the expecttest package")

from torch_axon.tools.conformance import FAST_OPS, load_op_db, run_sweep  # noqa: E402

MAX_SAMPLES = 8

# Ops of FAST_OPS with a known, not yet fixed Axon bug: op name -> reason (strict xfail).
KNOWN_BUGS: dict[str, str] = {}


def _params():
    for name in FAST_OPS:
        marks = [pytest.mark.xfail(reason=KNOWN_BUGS[name], strict=True)] if name in KNOWN_BUGS else []
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("op_name", list(_params()))
def test_fast_op_conforms(op_name):
    if op_name not in {op.name for op in load_op_db()}:
        pytest.skip(f"{op_name} is not in this torch's op_db")
    rows = run_sweep(ops=[op_name], dtypes=[torch.float32], max_samples=MAX_SAMPLES, timeout=60)
    assert rows, f"no OpInfo named {op_name}"
    bad = [f"{r.op} {r.dtype}: {r.cls}: {r.detail}" for r in rows if r.cls in ("mismatch", "error")]
    assert not bad, "\n".join(bad)
    assert any(r.cls in ("native-pass", "fallback-pass") for r in rows), f"nothing compared: {rows}"


def test_report_keeps_hand_written_part():
    """The generated section replaces only what lies between the markers (added if absent)."""
    from torch_axon.tools.conformance import BEGIN_MARK, END_MARK, replace_between_markers

    once = replace_between_markers("# Prose\n\nkept\n", "report 1\n")
    assert once.startswith("# Prose\n\nkept\n") and f"{BEGIN_MARK}\nreport 1\n{END_MARK}" in once
    twice = replace_between_markers(once, "report 2\n")
    assert twice.startswith("# Prose\n\nkept\n") and "report 1" not in twice and twice.count(BEGIN_MARK) == 1


def test_classification():
    """Failures win over passes; fallbacks make a pass a fallback-pass; no comparison at all is a skip."""
    from torch_axon.tools.conformance import Outcome, classify

    assert classify([Outcome("pass"), Outcome("mismatch", "d")], {}) == ("mismatch", "d")
    assert classify([Outcome("pass")], {"aten::cat": 1}) == ("fallback-pass", "aten::cat")
    assert classify([Outcome("pass"), Outcome("skip", "CPU raised")], {}) == ("native-pass", "")
    assert classify([Outcome("skip", "CPU raised")], {}) == ("skip", "CPU raised")
    assert classify([Outcome("mismatch", "d")], {}, waived=True)[0] == "skip"
