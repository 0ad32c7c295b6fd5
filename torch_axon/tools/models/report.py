"""The sweep's report: models.md (summary per family, targets, causes, fallbacks per family,
every architecture) in the reports folder and models.json (every record) in the data folder, from
the records of compare.run_case.

A record's fields: family, arch, status (ok, differs, fails, cpu_fails, cannot_build), error,
parameters, runs, matches (forward within compare.FORWARD_TOL), forward_error, loss_error,
grad_error, grad_noise_ratio (where grad_error is past GRAD_TOL: see compare.noise_ratio),
grad64_error, grad64_fallbacks, grad64_failure (the float64 step on axon against the CPU's,
wherever grad_noise_ratio is; it decides where float32 cannot tell: grad_noise_ratio at most 1),
grad_check ("float32" or "float64": which decided trains_match), trains, trains_match
(gradients within GRAD_TOL in float32, or, where float32 cannot tell, within GRAD64_TOL in
float64), generates, same_tokens, cpu_generate_error, fallbacks ({op: count}), seconds.
The compiled mode's records (compiled.py) have a section of their own (report_compiled.py).
"""

from __future__ import annotations

import collections
import datetime
import json
import os
import re

from . import report_compiled
from .compare import FORWARD_TOL, GRAD64_TOL, GRAD_TOL, NOISE_FACTOR
from .families import generates

# The targets: shares of the architectures that run on the CPU (match / zero fallbacks):
# 97% / 95% for causal LMs, 90% / 90% for every other family.
TARGETS = {"causal-lm": (0.97, 0.95)}
OTHER_FAMILIES_TARGET = (0.90, 0.90)


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
                    "trains_by_float64",
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
        s["trains_by_float64"] += bool(r.get("trains_match") and r.get("grad_check") == "float64")
        if generates(r["family"]) and "cpu_generate_error" not in r:
            s["generate_total"] += 1
        s["generates"] += bool(r.get("generates"))
        s["same_tokens"] += bool(r.get("same_tokens"))
        s["ok"] += r["status"] == "ok"
    return families


def _blur(text: str) -> str:
    text = re.sub(r"\[[^\]]*\]|\([^)]*\)", "(..)", text)
    return re.sub(r"\d+", "N", text)


def cause(r: dict) -> str:
    """A failure's cause with the specifics (sizes, numbers, names in quotes) blurred."""
    if r.get("error"):
        text = _blur(r["error"])
    elif not r.get("matches"):
        text = "forward differs from the CPU"
    elif not r.get("trains_match") and r.get("grad64_failure"):
        text = "float32 cannot tell, and the float64 check of the gradients failed: " + _blur(r["grad64_failure"])
    elif not r.get("trains_match"):
        text = "gradients differ from the CPU" + (" in float64" if r.get("grad_check") == "float64" else "")
    else:
        text = "generated tokens differ from the CPU"
    return text[:160]


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("|", "/")


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100.0 * n / d:.1f}%)" if d else "0/0"


def _intro(meta: dict) -> list[str]:
    names = ("torch", "transformers", "torchvision", "timm", "diffusers")
    versions = ", ".join(f"{name} {meta[name]}" for name in names if meta.get(name))
    mode = f"; fused eager {meta['fused_eager']}" if meta.get("fused_eager") else ""
    return [
        "# Model sweep",
        "",
        f"`python -m torch_axon.tools.models` ({meta.get('date', '')}; {versions}; "
        f"device: {meta.get('device', '')}{mode}). "
        "Every architecture of each Hugging Face family's auto mapping, built tiny from its default config with "
        "random weights (torch_axon/tools/models/tiny_configs.py, tiny_vision.py), with inputs of its kind "
        "(inputs.py: token ids, images, waveforms, spectrograms, images or audio placeholders inside text); one "
        "small variant of each torchvision model family and of each timm model module, random weights "
        "(torchvision_models.py, timm_models.py); diffusers' UNets, diffusion transformers, autoencoders and "
        "ControlNets, tiny, with their pipelines' inputs (diffusers_models.py). Each runs on the CPU and on axon: "
        "forward (outputs within "
        f"{FORWARD_TOL:g} of the largest CPU element), one training step (every parameter's gradient within "
        f"{GRAD_TOL:g} of its largest CPU element in float32; past that but within {NOISE_FACTOR:g} times the "
        "CPU's own float32 spread for that parameter (its distance from a float64 step and from steps with the "
        "weights perturbed by 1e-5; see compare.noise_ratio) float32 cannot tell, and the step is run again in "
        f"float64 on axon and on the CPU, which must agree within {GRAD64_TOL:g}; past the spread the gradients "
        "differ; the column *grad check* says which precision decided) and, for generative heads, greedy "
        "`generate()` of 4 tokens. "
        "Detection models compare their backbone features and sorted detection scores. Shares are of the "
        "architectures whose model runs on the CPU; those that do not are listed below with the reason.",
        "",
    ]


def _summary_table(families: dict[str, dict]) -> list[str]:
    lines = [
        "| family | architectures | built and ran on the CPU | run on axon | match | match, zero fallbacks | "
        "train (gradients match) | generate (same tokens) | target (match / zero fallbacks) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for fam, s in families.items():
        ref = s["reference"]
        target = TARGETS.get(fam, OTHER_FAMILIES_TARGET)
        met = ref and s["matches"] / ref >= target[0] and s["zero_fallbacks"] / ref >= target[1]
        goal = f"{target[0]:.0%} / {target[1]:.0%}: {'met' if met else 'not met'}"
        gen = _pct(s["same_tokens"], s["generate_total"]) if generates(fam) else "n/a"
        by64 = f", {s['trains_by_float64']} of them in float64" if s.get("trains_by_float64") else ""
        lines.append(
            f"| {fam} | {s['total']} | {ref} | {_pct(s['runs'], ref)} | {_pct(s['matches'], ref)} | "
            f"{_pct(s['zero_fallbacks'], ref)} | {_pct(s['trains'], ref)}{by64} | {gen} | {goal} |"
        )
    return lines


def _failing(records: list[dict]) -> list[dict]:
    return [r for r in records if r["status"] in ("fails", "differs")]


def _causes(records: list[dict]) -> list[str]:
    lines = ["", "## Top causes of failure", ""]
    causes = collections.Counter((r["family"], cause(r)) for r in _failing(records))
    if not causes:
        return [*lines, "None."]
    lines += ["| family | cause | architectures |", "| --- | --- | --- |"]
    for (fam, c), n in causes.most_common(40):
        archs = sorted(r["arch"] for r in _failing(records) if r["family"] == fam and cause(r) == c)
        lines.append(f"| {fam} | {c.replace('|', '/')} | {n}: {', '.join(archs[:8])}{' ...' if n > 8 else ''} |")
    return lines


def _fallbacks(records: list[dict]) -> list[str]:
    """Per family, each op that fell back and the architectures it fell back in."""
    lines = ["", "## Ops that fell back to the CPU", ""]
    by_op: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    for r in records:
        for op in r.get("fallbacks") or {}:
            by_op[(r["family"], op)].append(r["arch"])
    if not by_op:
        return [*lines, "None."]
    lines += ["| family | op | architectures |", "| --- | --- | --- |"]
    for (fam, op), archs in sorted(by_op.items(), key=lambda kv: (kv[0][0], -len(kv[1]), kv[0][1])):
        shown = ", ".join(sorted(archs)[:8]) + (" ..." if len(archs) > 8 else "")
        lines.append(f"| {fam} | `{op}` | {len(archs)}: {shown} |")
    return lines


def _excluded(records: list[dict]) -> list[str]:
    lines = ["", "## Excluded: the model does not build or run on the CPU", ""]
    excluded = [r for r in records if r["status"] in ("cannot_build", "cpu_fails")]
    if not excluded:
        return [*lines, "None."]
    return lines + [
        f"- {r['family']} `{r['arch']}` ({r['status']}): {_one_line(r.get('error', ''))[:240]}" for r in excluded
    ]


def _note(r: dict) -> str:
    note = _one_line(r.get("error") or "")[:120]
    if r.get("note"):
        note = f"{r['note']}; {note}" if note else r["note"]
    ratio = r.get("grad_noise_ratio")
    if ratio is not None:
        verdict = "within" if ratio <= 1 else "past"
        f32 = f"float32 gradients {verdict} float32 noise ({ratio:.2g} of the allowance)"
        if "grad64_error" in r:
            agree = "agree" if r["grad64_error"] <= GRAD64_TOL else "differ"
            f64 = f"float64 gradients {agree} ({r['grad64_error']:.1e})"
        elif "grad64_failure" in r:
            f64 = f"float64 check failed: {_one_line(r['grad64_failure'])[:100]}"
        else:
            f64 = ""
        fb = ", ".join(f"{k} x{v}" for k, v in (r.get("grad64_fallbacks") or {}).items())
        f64 += f", float64 fallbacks: {fb}" if fb else ""
        if f64 and ratio > 1:
            f64 += " (not deciding: float32 tells)"
        note = f"{f32}{', ' + f64 if f64 else ''} {note}".strip()
    return note


def _every_architecture(records: list[dict]) -> list[str]:
    lines = [
        "",
        "## Every architecture",
        "",
        "| family | architecture | status | parameters | forward error | gradient error | grad check | generates "
        "| fallbacks | seconds | note |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in sorted(records, key=lambda r: (r["family"], r["arch"])):
        if r["status"] in ("cannot_build", "cpu_fails"):
            continue
        gen = (
            "n/a"
            if not generates(r["family"]) or "cpu_generate_error" in r
            else ("same" if r.get("same_tokens") else ("differs" if r.get("generates") else "no"))
        )
        fb = ", ".join(f"{k} x{v}" for k, v in (r.get("fallbacks") or {}).items()) or "none"
        lines.append(
            f"| {r['family']} | {r['arch']} | {r['status']} | {r.get('parameters', '')} | "
            f"{_num(r.get('forward_error'))} | {_num(r.get('grad_error'))} | {r.get('grad_check', '')} | {gen} | {fb} "
            f"| {r.get('seconds', '')} | "
            f"{_note(r)} |"
        )
    return lines


def markdown(records: list[dict], meta: dict, compiled: list[dict] = (), compiled_meta: dict | None = None) -> str:
    """The report: eager records, then the compiled mode's (report_compiled.py), if any."""
    lines = _intro(meta) + _summary_table(summarize(records))
    lines += _causes(records) + _fallbacks(records) + _excluded(records)
    lines += report_compiled.markdown(list(compiled), compiled_meta or meta) + _every_architecture(records)
    return "\n".join(lines) + "\n"


def _num(x) -> str:
    return "" if x is None else f"{x:.1e}"


def write(
    records: list[dict],
    compiled: list[dict],
    markdown_path: str | os.PathLike,
    data: os.PathLike,
    meta: dict,
    compiled_meta: dict,
) -> int:
    """models.md, and every record in DATA/models.json (eager) and DATA/models-compile.json
    (compiled, where any); each mode's meta says when and where it ran (the date, unless it
    has one, is now). Returns the number of records."""
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    meta, compiled_meta = {"date": now, **meta}, {"date": now, **compiled_meta}
    with open(markdown_path, "w") as f:
        f.write(markdown(records, meta, compiled, compiled_meta))
    with open(os.path.join(data, "models.json"), "w") as f:
        json.dump({"meta": meta, "summary": summarize(records), "records": records}, f, indent=1, default=str)
    if compiled:
        with open(os.path.join(data, "models-compile.json"), "w") as f:
            summary = report_compiled.summarize(compiled)
            json.dump({"meta": compiled_meta, "summary": summary, "records": compiled}, f, indent=1, default=str)
    return len(records) + len(compiled)
