"""``python -m torch_axon.tools.bench.kernels``: kernels users write (torch_axon/kernels/, the
examples in examples/) against the built-in ops they replace, in one run.

Rows:

- user elementwise kernels (``ElementwiseKernel``) against the built-in op of the same
  arithmetic, 1e6 float32 elements, output allocated on both sides;
- the fused RMSNorm with residual add (examples/fused_rmsnorm.py) against its eager
  composition, forward, and forward plus backward;
- the fused rotary embedding (examples/rotary.py) against its composition;
- the tiled attention kernel (examples/tiled_attention.py) against
  ``F.scaled_dot_product_attention`` on axon at a 2048-token context, causal and not.

Each runs as the user kernel and as the built-in composition, eagerly and under
``torch.compile`` (the compiled user kernel: one node, or fused for an ElementwiseKernel), on
axon, with the built-in composition on the CPU beside it; samples interleave (timing.py).
Writes ``OUT/benchmarks-kernels.md`` and refreshes the same table in ``OUT/benchmarks.md``
between its markers; raw results in ``DATA/kernels.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import sys
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .timing import compare, unfused

LABELS = ("cpu", "builtin", "user", "builtin_compiled", "user_compiled")
BEGIN, END = "<!-- user-kernels:begin -->", "<!-- user-kernels:end -->"
EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples"


@dataclass
class Workload:
    name: str
    unit: str  # what one call does, for the table
    target: float | None  # user eager / built-in eager speed ratio the issue asks for, if any
    # (device) -> (user fn, built-in fn), each taking no arguments
    make: Callable[[str, bool], tuple[Callable[[], object], Callable[[], object]]]


def _examples():
    if not EXAMPLES.is_dir():
        raise RuntimeError(f"the examples folder is not here ({EXAMPLES}): run from a source checkout")
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    import fused_rmsnorm
    import rotary
    import tiled_attention

    return fused_rmsnorm, rotary, tiled_attention


# ---- user elementwise kernels against built-ins of the same arithmetic ------------------------
_ELEMENTWISE = {
    # name: (inputs, body, the built-in op)
    "add": ("T x, T y", "z = x + y;", lambda x, y: torch.add(x, y)),
    "mul-add (addcmul)": ("T x, T y, T w", "z = w + x * y;", lambda x, y, w: torch.addcmul(w, x, y)),
    "relu": ("T x", "z = x > 0 ? x : 0;", lambda x: torch.relu(x)),
    "silu": ("T x", "z = x / (1.0f + exp(-x));", lambda x: F.silu(x)),
    "tanh": ("T x", "z = tanh(x);", lambda x: torch.tanh(x)),
}
_kernels: dict = {}


def _elementwise(name: str) -> Callable[[str, bool], tuple]:
    inputs, body, builtin = _ELEMENTWISE[name]

    def make(device: str, quick: bool):
        from torch_axon.kernels import ElementwiseKernel

        if name not in _kernels:
            ident = "bench_" + "".join(c if c.isalnum() else "_" for c in name.split()[0])
            _kernels[name] = ElementwiseKernel(inputs, "T z", body, ident)
        n = 10_000 if quick else 1_000_000
        g = torch.Generator().manual_seed(0)
        args = [torch.randn(n, generator=g).to(device) for _ in inputs.split(",")]
        return (lambda: _kernels[name](*args)), (lambda: builtin(*args))

    return make


# ---- the examples ------------------------------------------------------------------------------
def _rmsnorm(backward: bool):
    def make(device: str, quick: bool):
        ex = _examples()[0]
        rows, width = (64, 256) if quick else (4096, 1024)
        g = torch.Generator().manual_seed(0)
        x, r = (torch.randn(rows, width, generator=g).to(device) for _ in range(2))
        w = torch.rand(width, generator=g).to(device) + 0.5
        if backward:
            x.requires_grad_(), r.requires_grad_(), w.requires_grad_()

        def run(fn):
            def call():
                y, h = fn(x, r, w, 1e-6)
                if backward:
                    (y.sum() + h.sum()).backward()
                return y

            return call

        return run(ex.fused_add_rmsnorm), run(ex.reference_add_rmsnorm)

    return make


def _rotary(device: str, quick: bool):
    ex = _examples()[1]
    seq = 128 if quick else 2048
    g = torch.Generator().manual_seed(0)
    q, k = (torch.randn(1, 8, seq, 64, generator=g).to(device) for _ in range(2))
    cos, sin = ex.rotary_tables(seq, 64, device=device)
    return (lambda: ex.apply_rotary(q, k, cos, sin)), (lambda: ex.reference_rotary(q, k, cos, sin))


def _attention(causal: bool):
    def make(device: str, quick: bool):
        ex = _examples()[2]
        seq = 128 if quick else 2048
        g = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(1, 8, seq, 64, generator=g).to(device) for _ in range(3))
        user = lambda: ex.tiled_attention(q, k, v, causal=causal)  # noqa: E731
        builtin = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
        return user, builtin

    return make


WORKLOADS = [
    *(Workload(f"elementwise {n}", "1e6 floats", 1 / 1.1, _elementwise(n)) for n in _ELEMENTWISE),
    Workload("fused add+rmsnorm forward", "4096x1024 rows", 2.0, _rmsnorm(False)),
    Workload("fused add+rmsnorm forward+backward", "4096x1024 rows", None, _rmsnorm(True)),
    Workload("fused rotary q,k", "1x8x2048x64 each", None, _rotary),
    Workload("tiled attention", "1x8x2048x64", 1.0, _attention(False)),
    Workload("tiled attention causal", "1x8x2048x64", 1.0, _attention(True)),
]


def measure(quick: bool = False, repeats: int = 5, sample_s: float = 0.2, only: str | None = None) -> dict:
    # The built-in side runs op by op (fused eager off): its results are discarded, which the
    # fused mode would never store (timing.unfused).
    with unfused():
        return _measure(quick, repeats, sample_s, only)


def _measure(quick: bool, repeats: int, sample_s: float, only: str | None) -> dict:
    rows = []
    for w in WORKLOADS:
        if only and only not in w.name:
            continue
        entry = {"name": w.name, "unit": w.unit, "target": w.target}
        try:
            user, builtin = w.make("axon", quick)
            _, cpu_builtin = w.make("cpu", quick) if not w.name.startswith("tiled") else (None, None)
        except RuntimeError as e:
            entry["skipped"] = str(e)
            rows.append(entry)
            print(f"  {w.name:40s} skipped: {e}", flush=True)
            continue
        if cpu_builtin is None:  # the CPU's SDPA on the same shapes
            q = [torch.randn(1, 8, 128 if quick else 2048, 64) for _ in range(3)]
            causal = "causal" in w.name
            cpu_builtin = lambda q=q, causal=causal: F.scaled_dot_product_attention(*q, is_causal=causal)  # noqa: E731
        torch._dynamo.reset()
        runs = {
            "cpu": (cpu_builtin, "cpu"),
            "builtin": (builtin, "axon"),
            "user": (user, "axon"),
            "builtin_compiled": (torch.compile(builtin), "axon"),
            "user_compiled": (torch.compile(user), "axon"),
        }
        timings = compare(runs, repeats, sample_s, warmup=2)
        for label, t in timings.items():
            entry[label] = {"ms": t.median * 1e3, **t.as_dict()}
        entry["user_vs_builtin"] = timings["builtin"].median / timings["user"].median
        entry["compiled_user_vs_builtin"] = timings["builtin_compiled"].median / timings["user_compiled"].median
        rows.append(entry)
        print(
            f"  {w.name:40s} user {entry['user']['ms']:8.3f} ms  built-in {entry['builtin']['ms']:8.3f} ms  "
            f"({entry['user_vs_builtin']:.2f}x)  compiled: user {entry['user_compiled']['ms']:8.3f} "
            f"built-in {entry['builtin_compiled']['ms']:8.3f} ({entry['compiled_user_vs_builtin']:.2f}x)  "
            f"cpu {entry['cpu']['ms']:8.3f}",
            flush=True,
        )
    return {"rows": rows, "targets": targets(rows)}


def targets(rows: list[dict]) -> list[dict]:
    out = []
    elementwise = [r for r in rows if r["name"].startswith("elementwise") and "user" in r]
    if elementwise:
        worst = min(elementwise, key=lambda r: r["user_vs_builtin"])
        out.append({
            "target": "a user ElementwiseKernel within 10% of the built-in op of the same arithmetic (eager)",
            "measured": ", ".join(f"{r['name'].split(' ', 1)[1]} {r['user_vs_builtin']:.2f}x" for r in elementwise),
            "met": worst["user_vs_builtin"] >= 1 / 1.1,
        })  # fmt: skip
    for r in rows:
        if r["target"] and "user" in r and not r["name"].startswith("elementwise"):
            out.append({
                "target": f"{r['name']}: user kernel >= {r['target']:g}x the built-in eager {r['unit']}",
                "measured": f"{r['user_vs_builtin']:.2f}x ({r['user']['ms']:.2f} ms vs {r['builtin']['ms']:.2f} ms)",
                "met": r["user_vs_builtin"] >= r["target"],
            })  # fmt: skip
    return out


def markdown(results: dict) -> str:
    lines = [
        "## Kernels users write",
        "",
        f"Run {results.get('date', '?')} on {results.get('device', '?')} (`{results.get('command', '')}`). "
        "Each row: the user kernel (torch_axon/kernels/, examples/) against the built-in ops it replaces, on "
        "axon, eager and under torch.compile; the built-in composition on the CPU beside them. Milliseconds "
        "per call, median of interleaved samples (± half the interquartile range); every call allocates its "
        "outputs on both sides, and the built-in ops run one kernel each (fused eager off). Ratio = built-in time "
        "/ user time (above 1: the user kernel is faster).",
        "",
        "| workload | shape | CPU built-in | Axon built-in | Axon user kernel | ratio | Axon built-in compiled "
        "| Axon user compiled | ratio compiled |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results["rows"]:
        if "skipped" in r:
            lines.append(f"| {r['name']} | {r['unit']} | skipped: {r['skipped']} | | | | | | |")
            continue
        cell = lambda k, r=r: f"{r[k]['ms']:.3f} ±{100 * r[k]['spread']:.0f}%"  # noqa: E731
        lines.append(
            f"| {r['name']} | {r['unit']} | {cell('cpu')} | {cell('builtin')} | {cell('user')} "
            f"| {r['user_vs_builtin']:.2f}x | {cell('builtin_compiled')} | {cell('user_compiled')} "
            f"| {r['compiled_user_vs_builtin']:.2f}x |"
        )
    if results.get("targets"):
        lines += ["", "Targets (issue 23):", ""]
        for t in results["targets"]:
            lines.append(f"- [{'met' if t['met'] else 'NOT MET'}] {t['target']}: {t['measured']}")
    return "\n".join(lines) + "\n"


def refresh_section(page: str, section: str, begin: str = BEGIN, end: str = END) -> None:
    """Puts `section` into the page between the markers (appended where there are none)."""
    text = pathlib.Path(page).read_text() if os.path.exists(page) else ""
    block = f"{begin}\n{section}{end}"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    pathlib.Path(page).write_text(text)


def main(argv: list[str] | None = None) -> int:
    from .. import add_output_args, output_dirs

    p = argparse.ArgumentParser(prog="python -m torch_axon.tools.bench.kernels", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny shapes: checks the rows run, measures nothing")
    p.add_argument("--only", help="run only workloads whose name contains this")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--sample-s", type=float, default=0.2)
    add_output_args(p, "folder of the report (benchmarks-kernels.md, and the section in benchmarks.md)",
                    "folder of the raw results: kernels.json")  # fmt: skip
    args = p.parse_args(argv)
    out_dir, data_dir = output_dirs(args)
    if args.quick:
        args.repeats, args.sample_s = 2, 0.01
    info = torch.axon.get_device_properties(0)
    results = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "command": "python -m torch_axon.tools.bench.kernels " + " ".join(argv if argv is not None else sys.argv[1:]),
        "device": info.name,
        "torch": torch.__version__,
        **measure(args.quick, args.repeats, args.sample_s, args.only),
    }
    for t in results["targets"]:
        print(f"  [{'met' if t['met'] else 'NOT MET'}] {t['target']}: {t['measured']}")
    os.makedirs(data_dir, exist_ok=True)
    with open(data_dir / "kernels.json", "w") as f:
        json.dump(results, f, indent=1)
    section = markdown(results)
    (out_dir / "benchmarks-kernels.md").write_text("# Benchmarks: kernels users write\n\n" + section)
    refresh_section(str(out_dir / "benchmarks.md"), section)
    print(f"wrote {out_dir / 'benchmarks-kernels.md'} and its section in {out_dir / 'benchmarks.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
