"""The compiled mode's part of models.md (compiled.py's records): a summary per family, every
architecture that is not ok with its cause, and every architecture compiled."""

from __future__ import annotations

import collections

from .compare import FORWARD_TOL, GRAD64_TOL, GRAD_TOL

# Statuses of a compiled record that count as Axon's failures (but a timeout, which is no verdict).
AXON_FAILURES = ("fails", "differs")


def timed_out(r: dict) -> bool:
    return str(r.get("error", "")).startswith("timeout")


def summarize(records: list[dict]) -> dict[str, dict]:
    """Per family: architectures, those that ran on the CPU (tried), ok, upstream, axon's
    failures, and those that ran out of time (no verdict)."""
    families: dict[str, dict] = {}
    for r in records:
        s = families.setdefault(r["family"], dict.fromkeys(["total", "tried", "ok", "upstream", "axon", "timeout"], 0))
        s["total"] += 1
        if r["status"] in ("cannot_build", "cpu_fails"):
            continue
        s["tried"] += 1
        s["ok"] += r["status"] == "ok"
        s["upstream"] += r["status"] == "upstream"
        s["timeout"] += r["status"] in AXON_FAILURES and timed_out(r)
        s["axon"] += r["status"] in AXON_FAILURES and not timed_out(r)
    return families


def totals(records: list[dict]) -> dict[str, int]:
    total = collections.Counter()
    for s in summarize(records).values():
        total.update(s)
    return dict(total)


def _one_line(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "/")


def reason(r: dict) -> str:
    """Why a compiled record is not ok: axon's error or what differs, and CPU Inductor's outcome."""
    if r.get("error"):
        text = r["error"]
    elif not r.get("matches"):
        text = f"forward differs (error {r.get('forward_error', float('inf')):.1e})"
    elif r.get("grad64_failure"):
        text = f"float32 cannot tell, float64 check failed: {r['grad64_failure']}"
    else:
        text = f"gradients differ (error {r.get('grad_error', float('inf')):.1e}, {r.get('grad_check', '')})"
    if r["status"] == "upstream":
        text += f"; CPU Inductor: {r.get('cpu_compile', '')}"
    return _one_line(text)[:300]


def _row(name: str, s: dict) -> str:
    return f"| {name} | {s['total']} | {s['tried']} | {s['ok']} | {s['upstream']} | {s['axon']} | {s['timeout']} |"


def _num(x) -> str:
    return "" if x is None else f"{x:.1e}"


def markdown(records: list[dict], meta: dict) -> list[str]:
    if not records:
        return []
    when = f"{meta.get('date', '')}; device: {meta.get('device', '')}"
    lines = [
        "",
        "## Compiled: torch.compile on axon",
        "",
        f"`python -m torch_axon.tools.models --compile` ({when}; torch_axon/tools/models/compiled.py): "
        "each model compiled "
        "by `torch.compile` (Inductor generating OpenCL C) on axon against the same model eager on the CPU, "
        f"forward (within {FORWARD_TOL:g}) and one training step (gradients within {GRAD_TOL:g} in float32, or, "
        f"where float32 cannot tell, within {GRAD64_TOL:g} in float64, compiled on axon too); no generation. "
        "Where axon fails or differs, PyTorch's CPU Inductor compiles the same model: *upstream* counts those "
        "where it fails or differs as well (the fault is in the compiler stack above Axon's code generator or in "
        "the model under compile), *axon* those it runs, Axon's to fix; a model that kills or hangs its process "
        "is judged so too, CPU Inductor running it in a fresh process (supervisor.py). *timeout*: those that ran "
        "out of the "
        "time given to an architecture (compiling on a shared two-core machine; no verdict). *tried*: the "
        "architectures that build and run eagerly on the CPU.",
        "",
        "| family | architectures | tried | ok | upstream | axon | timeout |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    families = summarize(records)
    for fam, s in families.items():
        lines.append(_row(fam, s))
    if len(families) > 1:
        lines.append(_row("all", totals(records)))
    failing = sorted(
        (r for r in records if r["status"] in (*AXON_FAILURES, "upstream")),
        key=lambda r: (r["status"] == "upstream", r["family"], r["arch"]),
    )
    lines += ["", "### Not ok compiled", ""]
    if not failing:
        lines.append("None.")
    else:
        lines += ["| family | architecture | status | reason |", "| --- | --- | --- | --- |"]
        lines += [f"| {r['family']} | {r['arch']} | {r['status']} | {reason(r)} |" for r in failing]
    lines += [
        "",
        "### Every architecture compiled",
        "",
        "| family | architecture | status | forward error | gradient error | grad check | graphs | fallbacks "
        "| seconds | first graph break |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in sorted(records, key=lambda r: (r["family"], r["arch"])):
        if r["status"] in ("cannot_build", "cpu_fails"):
            continue
        fb = ", ".join(f"{k} x{v}" for k, v in (r.get("fallbacks") or {}).items()) or "none"
        lines.append(
            f"| {r['family']} | {r['arch']} | {r['status']} | {_num(r.get('forward_error'))} | "
            f"{_num(r.get('grad_error'))} | {r.get('grad_check', '')} | {r.get('graphs', '')} | {fb} | "
            f"{r.get('seconds', '')} | {_one_line(r.get('graph_break', ''))[:120]} |"
        )
    return lines
