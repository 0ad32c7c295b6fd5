"""The sweep's report: docs/models.md (summary per family, targets, causes, every architecture)
and docs/models.json, from the records of hf.run.

A record's fields: family, arch, status (ok, differs, fails, cpu_fails, cannot_build), error,
parameters, runs, matches (forward within hf.FORWARD_TOL), forward_error, loss_error,
grad_error, trains, trains_match (gradients within hf.GRAD_TOL), generates, same_tokens,
fallbacks ({op: count}), seconds.
"""

from __future__ import annotations

import collections
import datetime
import json
import re

from .hf import FORWARD_TOL, GRAD_TOL

# The targets: shares of the architectures that run on the CPU.
TARGETS = {"causal-lm": (0.97, 0.95)}
OTHER_TARGET = (0.90, 0.90)


def summarize(records: list[dict]) -> dict[str, dict]:
    families: dict[str, dict] = {}
    for r in records:
        s = families.setdefault(
            r["family"],
            dict.fromkeys(
                [
                    "total",
                    "cannot_build",
                    "cpu_fails",
                    "reference",
                    "runs",
                    "matches",
                    "zero_fallbacks",
                    "trains",
                    "generate_total",
                    "generates",
                    "same_tokens",
                    "ok",
                ],
                0,
            ),
        )
        s["total"] += 1
        if r["status"] in ("cannot_build", "cpu_fails"):
            s[r["status"]] += 1
            continue
        s["reference"] += 1
        s["runs"] += bool(r.get("runs"))
        s["matches"] += bool(r.get("matches"))
        s["zero_fallbacks"] += bool(r.get("matches") and not r.get("fallbacks"))
        s["trains"] += bool(r.get("trains_match"))
        if r["family"] != "masked-lm" and "cpu_generate_error" not in r:
            s["generate_total"] += 1
        s["generates"] += bool(r.get("generates"))
        s["same_tokens"] += bool(r.get("same_tokens"))
        s["ok"] += r["status"] == "ok"
    return families


def cause(r: dict) -> str:
    """A failure's cause with the specifics (sizes, numbers, names in quotes) blurred."""
    if r.get("error"):
        text = r["error"]
    elif not r.get("matches"):
        text = "forward differs from the CPU"
    elif not r.get("trains_match"):
        text = "gradients differ from the CPU"
    else:
        text = "generated tokens differ from the CPU"
    text = re.sub(r"\[[^\]]*\]|\([^)]*\)", "(..)", text)
    return re.sub(r"\d+", "N", text)[:160]


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("|", "/")


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100.0 * n / d:.1f}%)" if d else "0/0"


def markdown(records: list[dict], meta: dict) -> str:
    families = summarize(records)
    lines = [
        "# Model sweep",
        "",
        f"`python -m torch_axon.models` ({meta.get('date', '')}; torch {meta.get('torch', '')}, transformers "
        f"{meta.get('transformers', '')}, device: {meta.get('device', '')}). Every architecture of each family's "
        "auto mapping, built tiny from its default config with random weights (torch_axon/models/tiny_configs.py), "
        "runs on the CPU and on axon: forward (logits within "
        f"{FORWARD_TOL:g} of the largest CPU logit), one training step (loss and every parameter's gradient within "
        f"{GRAD_TOL:g} of its largest CPU element) and, for generative heads, greedy `generate()` of 4 tokens. "
        "Shares are of the architectures whose tiny model runs on the CPU; those that do not are listed below "
        "with the reason.",
        "",
        "| family | architectures | built and ran on the CPU | run on axon | match | match, zero fallbacks | "
        "train (gradients match) | generate (same tokens) | target (match / zero fallbacks) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for fam, s in families.items():
        target = TARGETS.get(fam, OTHER_TARGET)
        ref = s["reference"]
        met = ref and s["matches"] / ref >= target[0] and s["zero_fallbacks"] / ref >= target[1]
        gen = _pct(s["same_tokens"], s["generate_total"]) if fam != "masked-lm" else "n/a"
        lines.append(
            f"| {fam} | {s['total']} | {ref} | {_pct(s['runs'], ref)} | {_pct(s['matches'], ref)} | "
            f"{_pct(s['zero_fallbacks'], ref)} | {_pct(s['trains'], ref)} | {gen} | "
            f"{target[0]:.0%} / {target[1]:.0%}: {'met' if met else 'not met'} |"
        )
    lines += ["", "## Top causes of failure", ""]
    causes = collections.Counter((r["family"], cause(r)) for r in records if r["status"] in ("fails", "differs"))
    if causes:
        lines += ["| family | cause | architectures |", "| --- | --- | --- |"]
        for (fam, c), n in causes.most_common(25):
            archs = sorted(
                r["arch"]
                for r in records
                if r["family"] == fam and r["status"] in ("fails", "differs") and cause(r) == c
            )
            lines.append(f"| {fam} | {c.replace('|', '/')} | {n}: {', '.join(archs[:8])}{' ...' if n > 8 else ''} |")
    else:
        lines.append("None.")
    fallback_ops = collections.Counter()
    for r in records:
        for op in r.get("fallbacks") or {}:
            fallback_ops[op] += 1
    lines += ["", "## Ops that fell back to the CPU", ""]
    lines += [f"- `{op}`: {n} architectures" for op, n in fallback_ops.most_common()] if fallback_ops else ["None."]
    lines += ["", "## Excluded: the tiny model does not build or run on the CPU", ""]
    excluded = [r for r in records if r["status"] in ("cannot_build", "cpu_fails")]
    lines += (
        [f"- {r['family']} `{r['arch']}` ({r['status']}): {_one_line(r.get('error', ''))[:240]}" for r in excluded]
        if excluded
        else ["None."]
    )
    lines += [
        "",
        "## Every architecture",
        "",
        "| family | architecture | status | parameters | forward error | gradient error | generates | fallbacks | "
        "seconds | note |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in sorted(records, key=lambda r: (r["family"], r["arch"])):
        if r["status"] in ("cannot_build", "cpu_fails"):
            continue
        gen = (
            "n/a"
            if r["family"] == "masked-lm" or "cpu_generate_error" in r
            else ("same" if r.get("same_tokens") else ("differs" if r.get("generates") else "no"))
        )
        fb = ", ".join(f"{k} x{v}" for k, v in (r.get("fallbacks") or {}).items()) or "none"
        note = _one_line(r.get("error") or "")[:120]
        lines.append(
            f"| {r['family']} | {r['arch']} | {r['status']} | {r.get('parameters', '')} | "
            f"{_num(r.get('forward_error'))} | {_num(r.get('grad_error'))} | {gen} | {fb} | {r.get('seconds', '')} | "
            f"{note} |"
        )
    return "\n".join(lines) + "\n"


def _num(x) -> str:
    return "" if x is None else f"{x:.1e}"


def write(records: list[dict], markdown_path: str, json_path: str, meta: dict) -> None:
    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), **meta}
    with open(markdown_path, "w") as f:
        f.write(markdown(records, meta))
    with open(json_path, "w") as f:
        json.dump({"meta": meta, "summary": summarize(records), "records": records}, f, indent=1, default=str)
