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


def test_low_precision_tolerances_are_pytorchs():
    """float16 / bfloat16 are compared at torch.testing's default tolerances, loosened only by the
    overrides PyTorch's own CPU-against-device test (TestCommon.test_compare_cpu) applies."""
    from torch.testing._comparison import _DTYPE_PRECISIONS

    from torch_axon.tools.conformance import DEFAULT_TOLERANCES, Tolerance, load_op_db

    for dtype, (rtol, atol) in _DTYPE_PRECISIONS.items():
        if dtype in DEFAULT_TOLERANCES:
            assert DEFAULT_TOLERANCES[dtype] == (atol, rtol), dtype
    ops = {op.name: op for op in load_op_db() if not op.variant_test_name}
    # no override for the op: the default
    assert Tolerance.for_op(ops["add"], torch.float16)() == {"atol": 1e-5, "rtol": 1e-3}
    assert Tolerance.for_op(ops["add"], torch.bfloat16)() == {"atol": 1e-5, "rtol": 1.6e-2}
    # a bare precisionOverride (every test of the op): atol
    assert Tolerance.for_op(ops["rad2deg"], torch.bfloat16)() == {"atol": 0.7, "rtol": 1.6e-2}
    # a toleranceOverride for CUDA's TestUnaryUfuncs only: not this comparison's
    assert Tolerance.for_op(ops["nn.functional.elu"], torch.float16)() == {"atol": 1e-5, "rtol": 1e-3}


def test_dropout_waiver_concerns_only_random_samples():
    """Attention is waived by PyTorch for its dropout: its samples without dropout, and each
    sample with dropout made deterministic, are compared in full, and a mismatch stays one."""
    from torch_axon.tools.conformance import (
        Outcome,
        classify,
        cpu_comparison_waived,
        guarded_samples,
        is_random,
        load_op_db,
        run_samples,
        with_deterministic_twins,
    )

    op = next(op for op in load_op_db() if op.name == "nn.functional.scaled_dot_product_attention")
    assert not cpu_comparison_waived(op, torch.float32)
    assert classify([Outcome("mismatch", "d")], {}, cpu_comparison_waived(op, torch.float32))[0] == "mismatch"
    samples = list(with_deterministic_twins(op, guarded_samples(op, torch.float32, False, 4)))
    random = [is_random(op, s) for s in samples]
    assert any(random) and not all(random)
    for i, r in enumerate(random):  # each random sample is followed by its twin without dropout
        if r:
            assert samples[i + 1].kwargs["dropout_p"] == 0.0 and not random[i + 1]
    outcomes = run_samples(op, torch.float32, 4)
    assert all(o.status == "pass" for o in outcomes), outcomes
    assert sum(not o.detail for o in outcomes) == random.count(False)  # values compared
    dropout = next(op for op in load_op_db() if op.name == "nn.functional.dropout")
    assert cpu_comparison_waived(dropout, torch.float32)  # a random op keeps its waiver
