"""The differential fuzzer (torch_axon.tools.fuzz) at CI size, and its saved findings replayed.

The CI run draws a fixed set of random programs (a fixed seed: the same programs every run) and runs each
eagerly on axon op by op against the CPU, every fifth one compiled as well (static shapes, every third of
those dynamic), with gradients for some; it fails on any difference that the tool's KNOWN list does not
explain with a reason. Programs run in a child process, so a crash is a finding like the others.

``fuzz_regressions.jsonl`` holds minimised programs that once failed (one JSON object a line, as
``--save`` writes them): each is run again in the mode it failed in and must pass now, or fail only in
a way KNOWN documents.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from torch_axon.tools import fuzz

SEED = 24
PROGRAMS = 150
COMPILE_EVERY = 5  # 30 of the 150 compiled too
REGRESSIONS = Path(__file__).with_name("fuzz_regressions.jsonl")


def _explain(findings: list[fuzz.Finding]) -> str:
    return "\n\n".join(f"{fuzz.describe(f)}\n{fuzz.reproducer(f)}" for f in findings)


def test_fuzz_ci_run(tmp_path):
    state, findings = fuzz.fuzz_isolated(
        tmp_path, programs=PROGRAMS, seed=SEED, compile_every=COMPILE_EVERY, shrink_s=20.0
    )
    assert state["next"] == PROGRAMS
    ran = {m: c.get("ok", 0) + c.get("finding", 0) for m, c in state["counts"].items()}
    assert ran["eager"] == PROGRAMS
    assert ran.get("compiled", 0) + ran.get("compiled-dynamic", 0) == PROGRAMS // COMPILE_EVERY
    bad = fuzz.unexplained(findings)
    assert not bad, f"{len(bad)} unexplained differences:\n\n{_explain(bad)}"


def test_fuzz_regressions(tmp_path):
    tasks = [json.loads(line) for line in REGRESSIONS.read_text().splitlines() if line.strip()]
    state, findings = fuzz.fuzz_isolated(tmp_path, programs=0, tasks=tasks, shrink_s=0.0)
    assert state["next"] == len(tasks)
    bad = fuzz.unexplained(findings)
    assert not bad, f"{len(bad)} saved findings fail again:\n\n{_explain(bad)}"


def test_resume_after_a_stopped_run_reruns_its_program(tmp_path):
    """A run stopped mid-program leaves fuzz-current.json behind; resumed much later, that stale
    file must not make the new child look hung (it was killed and recorded as a crash)."""
    path = tmp_path / "fuzz-state.json"
    fuzz._save(path, fuzz.new_state(1, seed=3, compile_every=0, shrink_s=0))
    current = tmp_path / "fuzz-current.json"
    current.write_text(json.dumps({"index": 0, "program_seed": None, "options": {}, "program": {}}))
    os.utime(current, (0, 0))  # as old as can be
    state = fuzz.run(path, hang_s=60)
    assert state["next"] == 1
    assert not [f for f in state["findings"] if f["kind"] in ("crash", "hang")], state["findings"]


def test_a_long_run_goes_on_in_fresh_children(tmp_path):
    """A child stops after its share of programs (memory grows with every compiled kernel kept);
    the parent starts the next one where it stopped, without a finding."""
    path = tmp_path / "fuzz-state.json"
    fuzz._save(path, dict(fuzz.new_state(5, seed=4, compile_every=0, shrink_s=0), child_programs=2))
    state = fuzz.run(path, hang_s=120)
    assert state["next"] == 5
    eager = state["counts"]["eager"]
    assert eager.get("ok", 0) + eager.get("finding", 0) == 5  # each program once, none twice
    assert not [f for f in state["findings"] if f["kind"] in ("crash", "hang")], state["findings"]


def _program(values: list[float], *steps: tuple, size: list[int] | None = None) -> dict:
    """A one-input float32 program with explicit values (contiguous, of ``size``), its steps given
    as (op, args) or (op, args, params)."""
    size = size or [len(values)]
    stride = [math.prod(size[i + 1 :]) for i in range(len(size))]
    spec = {"dtype": "float32", "size": size, "stride": stride, "offset": 0, "storage": len(values)}
    prog = {"seed": None, "inputs": [{**spec, "layout": "contiguous", "values": values}], "grad": False}
    prog["steps"] = [{"op": s[0], "args": s[1], "params": s[2] if len(s) > 2 else {}} for s in steps]
    prog["outputs"] = [f"v{len(steps) - 1}"]
    return prog


def _judged(prog: dict, error_at: int, error: float) -> str | None:
    """compare_values' verdict on the CPU's own result with ``error`` added at one element."""
    runner = fuzz.Runner()
    env = runner.values(prog, "cpu")
    expected = runner.whole(prog, fuzz.program_function(prog), "cpu").values[0]
    wrong = expected.clone()
    wrong[error_at] += error
    return fuzz.compare_values(wrong, expected, fuzz.chain_tolerance(prog, env, gradient=False)(0, expected))


def test_a_pointwise_chain_is_judged_element_by_element():
    """A whole pointwise program's tolerance is per element (the first-order bound of its steps'
    roundings): a huge value elsewhere in the tensor no longer lets an error of 1e-3 at 0.1 pass
    (it did: the chain's scale was the largest value anywhere, 3e38), while a cancellation,
    (x + 3e38) - 3e38, still allows the error it causes at its own element."""
    scaled = _program([3e38, 0.1], ("mul", ["x0", 0.5]), ("add", ["v0", 1.0]))
    assert _judged(scaled, 1, 0.0) is None
    assert _judged(scaled, 1, 1e-3) is not None
    cancelled = _program([1.0, 0.1], ("add", ["x0", 3e38]), ("sub", ["v0", 3e38]))
    assert _judged(cancelled, 0, 1.0) is None  # float32 gives 0 where the exact result is 1


def test_a_chain_through_a_reduction_is_judged_element_by_element():
    """Through a sum, a cumulative sum, an average pooling, a maximum, a product, a variance, a norm,
    softmax or logsumexp, the bounds are carried step by step: a row holding 3e38 no longer lets an
    error of 1e-3 pass in another row's result (the chain's scale allowed 1e31), while a row whose
    terms cancel (1e30 - 1e30 + 1: float32 may give 0 or 1 by order) still allows it."""
    rows = [3e38, 1.0, 0.25, 0.125, 0.1, 0.2, 0.3, 0.4]
    for reduce, error_at in (  # the second row's (first) result
        (("sum", ["v0"], {"rest": ", dim=1"}), (1,)),
        (("cumsum", ["v0"], {"dim": 1}), (1, 0)),
        (("avg_pool1d", ["v0"], {"k": [2], "s": [2], "p": [0], "c": False, "i": True, "n": 2}), (1, 0)),
        (("amax", ["v0"], {"rest": ", dim=1"}), (1,)),
        (("prod", ["v0"], {"rest": ", dim=1"}), (1,)),
        (("cumprod", ["v0"], {"dim": 1}), (1, 1)),
        (("var", ["v0"], {"rest": ", dim=1", "c": 1}), (1,)),
        (("std", ["v0"], {"rest": ", dim=1", "c": 0}), (1,)),
        (("norm", ["v0"], {"rest": ", dim=1", "ord": 2}), (1,)),
        (("norm", ["v0"], {"rest": ", dim=1", "ord": 0.5}), (1,)),
        (("logsumexp", ["v0"], {"rest": ", dim=1"}), (1,)),
        (("logcumsumexp", ["v0"], {"dim": 1}), (1, 1)),
        (("softmax", ["v0"], {"dim": 1}), (1, 0)),
        (("log_softmax", ["v0"], {"dim": 1}), (1, 0)),
    ):
        prog = _program(rows, ("mul", ["x0", 0.5]), reduce, size=[2, 4])
        assert _judged(prog, error_at, 0.0) is None, reduce[0]
        assert _judged(prog, error_at, 1e-3) is not None, reduce[0]
    cancelling = _program([1e30, -1e30, 1.0, 0.0], ("mul", ["x0", 1.0]), ("sum", ["v0"], {"rest": ""}), size=[4])
    assert _judged(cancelling, (), -1.0) is None
