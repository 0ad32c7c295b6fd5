"""``python -m torch_axon.tools.bench.fused_eager``: fused eager mode (docs/fused-eager.md) against
op-by-op eager, torch.compile and PyTorch on the CPU, in one run on the default device.

Rows (each a call as plain eager code makes it: new outputs, nothing preallocated):

- the pointwise chain ``relu(a * b + c) * 0.5`` at 1e4 to 1e7 float32 elements;
- layer norm then GELU over 4096 x 1024 (only GELU is pointwise: a row where fusion has little
  to take);
- one AdamW step over the benchmark GPT's 20M parameters, foreach and fused forms (optim.py);
- the MLP and GPT training steps and Llama decode of the model rows (models.py);
- a sequence of 16 pointwise ops on one-element tensors (microseconds per op).

Every call keeps its result until the next one and, on axon, records an event after it (both
modes): so each call computes and stores its result, where a fused group left open would take in
the next call's ops and never store a result dropped unread. For the optimizer step and the
training steps the event stands for what a training loop does next (the next forward pass
begins with a matrix product or an embedding, which launches the step's groups); without it,
steps that nothing separates cut their groups at places that move from step to step. A row's samples begin once its
fused kernels are built (they build in the background from a structure's second appearance);
the first training steps of a model whose structures are new are their own row.

Backends: ``cpu`` (PyTorch eager on the CPU), ``unfused`` (axon, fused eager off), ``fused``
(axon, fused eager on), and for the chain ``compiled`` (torch.compile on axon). Fused and unfused
samples alternate in the same process; the mode is set at each call. Samples begin after warm-up
calls.

Writes ``OUT/benchmarks-fused-eager.md``, the fused-eager section of ``OUT/benchmarks.md``
(between ``<!-- fused-eager:begin -->`` and ``<!-- fused-eager:end -->``) and
``DATA/fused-eager.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

from .. import add_output_args, output_dirs
from . import models, optim
from .timing import compare, synchronize


def _consumed(fn: Callable[[], object], device: str) -> Callable[[], object]:
    """Each call's result kept until the next call, and on axon an event recorded after it,
    which launches what fused eager recorded: every call computes and stores its result, as
    op-by-op eager and compiled code do (a result nobody keeps need not be stored, and a group
    left open would take in the next call's ops)."""
    holder = [None]
    event = torch.axon.Event() if device.startswith("axon") else None

    def call():
        holder[0] = fn()
        if event is not None:
            event.record()

    return call


def _mode(fn: Callable[[], object], on: bool) -> Callable[[], object]:
    def call():
        torch.axon.set_fused_eager(on)
        return fn()

    return call


def _chain(n: int, device: str) -> Callable[[], object]:
    g = torch.Generator().manual_seed(0)
    a, b, c = (torch.randn(n, generator=g).to(device) for _ in range(3))
    return _consumed(lambda: F.relu(a * b + c) * 0.5, device)


def _compiled_chain(n: int, device: str) -> Callable[[], object]:
    fn = torch.compile(lambda a, b, c: F.relu(a * b + c) * 0.5, dynamic=False)
    g = torch.Generator().manual_seed(0)
    a, b, c = (torch.randn(n, generator=g).to(device) for _ in range(3))
    return _consumed(lambda: fn(a, b, c), device)


def _layer_norm_gelu(device: str, quick: bool) -> Callable[[], object]:
    rows, width = (64, 128) if quick else (4096, 1024)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(rows, width, generator=g).to(device)
    w, b = torch.ones(width, device=device), torch.zeros(width, device=device)
    return _consumed(lambda: F.gelu(F.layer_norm(x, (width,), w, b)), device)


ONE_ELEMENT_OPS = 16


def _one_element(device: str) -> Callable[[], object]:
    x = torch.full((1,), 0.5, device=device)

    def call():
        y = x
        for _ in range(ONE_ELEMENT_OPS // 4):
            y = torch.sigmoid(y * 1.5 + 0.25) - 0.125
        return y

    return _consumed(call, device)


def rows(quick: bool) -> list[dict]:
    """name, unit, work per call, and the builders of each backend (device, quick) -> call."""
    out = []
    for n in (1e3, 1e4) if quick else (1e4, 1e5, 1e6, 1e7):
        n = int(n)
        out.append({
            "name": f"chain relu(a*b+c)*0.5 {n:.0e}", "unit": "Melem/s", "work": n / 1e6,
            "build": lambda device, quick, n=n: _chain(n, device),
            "compiled": lambda device, quick, n=n: _compiled_chain(n, device),
        })  # fmt: skip
    out.append({"name": "layer norm + gelu", "unit": "calls/s", "work": 1, "build": _layer_norm_gelu})
    for form in ("foreach", "fused"):
        out.append({
            "name": f"adamw step gpt-20m {form}", "unit": "steps/s", "work": 1,
            "build": lambda device, quick, form=form: _consumed(optim._make(form, device, quick), device),
        })  # fmt: skip
    for w in models.WORKLOADS:
        if w.name in ("mlp_train", "gpt_train", "llama_decode"):
            out.append({
                "name": w.name, "unit": w.unit, "work": None, "units": w.units_per_call,
                "build": lambda device, quick, w=w: _consumed(w.build(device, quick), device),
            })  # fmt: skip
    out.append({
        "name": f"{ONE_ELEMENT_OPS} one-element ops", "unit": "us/op", "work": ONE_ELEMENT_OPS,
        "build": lambda device, quick: _one_element(device),
    })  # fmt: skip
    return out


def _rate(row: dict, seconds: float, quick: bool) -> float:
    if row["unit"] == "us/op":
        return seconds * 1e6 / row["work"]
    work = row["units"](quick) if row["work"] is None else row["work"]
    return work / seconds


def measure_row(row: dict, quick: bool, repeats: int, sample_s: float) -> dict:
    runs = {
        "cpu": (row["build"]("cpu", quick), "cpu"),
        "unfused": (_mode(row["build"]("axon", quick), False), "axon"),
        "fused": (_mode(row["build"]("axon", quick), True), "axon"),
    }
    if "compiled" in row:
        torch._dynamo.reset()
        runs["compiled"] = (_mode(row["compiled"]("axon", quick), False), "axon")
    # Warm-up: the fused groups' kernels are built on their second appearance, in the background;
    # the samples time the mode once a round of calls builds nothing new. (Calls that leave groups
    # open run into the next call's ops, so group boundaries can take a few rounds to repeat.)
    for _ in range(40):
        before = torch.axon.fused_eager_stats()["kernels_built"]
        for _ in range(3):
            runs["fused"][0]()
        synchronize("axon")
        torch.axon.wait_fused_kernel_builds()
        if torch.axon.fused_eager_stats()["kernels_built"] == before:
            break
    timings = compare(runs, repeats, sample_s, warmup=2)
    torch.axon.set_fused_eager(False)
    entry = {"name": row["name"], "unit": row["unit"]}
    for label, t in timings.items():
        entry[label] = {"rate": _rate(row, t.median, quick), **t.as_dict()}
    entry["fused_vs_unfused"] = timings["unfused"].median / timings["fused"].median
    return entry


def _fresh_mlp(quick: bool) -> Callable[[], object]:
    """A training step of an MLP whose pointwise structures no other row has (SiLU, a squared
    loss), so that fused eager meets them for the first time."""
    batch, widths = (8, (32, 64, 10)) if quick else (256, (1024, 4096, 10))
    torch.manual_seed(0)
    layers = []
    for a, b in zip(widths[:-1], widths[1:], strict=True):
        layers += [torch.nn.Linear(a, b), torch.nn.SiLU()]
    model = torch.nn.Sequential(*layers[:-1]).to("axon")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    x = torch.randn(batch, widths[0]).to("axon")

    def step():
        loss = (model(x) - 0.5).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def cold_first_steps(quick: bool, steps: int = 3) -> dict:
    """The first training steps (seconds each) of a model whose fused structures are new, in each
    mode, unfused first (its kernels then built for both: what is measured is what fusion adds to
    the first steps, recording and any wait for a fused kernel, not the unfused kernels' builds)."""
    out = {}
    for label, on in (("unfused", False), ("fused", True)):
        torch.axon.set_fused_eager(on)
        step = _fresh_mlp(quick)
        times = []
        for _ in range(steps):
            synchronize("axon")
            start = time.perf_counter()
            step()
            synchronize("axon")
            times.append(time.perf_counter() - start)
        out[label] = times
    torch.axon.set_fused_eager(False)
    torch.axon.wait_fused_kernel_builds()
    return out


TARGETS = [
    ("chain relu(a*b+c)*0.5 1e+06", 2.5, "the chain at 1e6 >= 2.5x unfused eager"),
    ("adamw step gpt-20m foreach", 2.0, "the AdamW foreach step >= 2x unfused"),
    ("gpt_train", 1.1, "the GPT training step >= 1.1x unfused"),
    ("llama_decode", 1.1, "Llama decode >= 1.1x unfused"),
    (f"{ONE_ELEMENT_OPS} one-element ops", 3.0, "one-element ops: >= 3x fewer us per op"),
]


def targets(results: dict) -> list[dict]:
    by_name = {r["name"]: r for r in results["rows"]}
    out = []
    for name, need, text in TARGETS:
        row = by_name.get(name)
        if row:
            out.append(
                {"target": text, "measured": f"{row['fused_vs_unfused']:.2f}x", "met": row["fused_vs_unfused"] >= need}
            )
    cold = results.get("cold_first_steps")
    if cold:
        fused, unfused = sum(cold["fused"]), sum(cold["unfused"])
        out.append({
            "target": "the cold first training steps no slower than unfused",
            "measured": "first three steps: " + ", ".join(f"{t * 1e3:.0f}" for t in cold["fused"])
            + " ms fused, " + ", ".join(f"{t * 1e3:.0f}" for t in cold["unfused"]) + " ms unfused",
            "met": fused <= unfused * 1.1,
        })  # fmt: skip
    slower = [r["name"] for r in results["rows"] if r["fused_vs_unfused"] < 1 / (1 + 2 * r["fused"]["spread"] + 0.05)]
    out.append({
        "target": "nothing slower than unfused by more than the run's noise",
        "measured": "slower: " + ", ".join(slower) if slower else "none slower",
        "met": not slower,
    })  # fmt: skip
    return out


def _fmt(entry: dict, unit: str) -> str:
    return f"{entry['rate']:.3g} {unit} (+-{100 * entry['spread']:.0f}%)"


def markdown(results: dict) -> str:
    lines = [
        "## Fused eager mode",
        "",
        f"Run of {results['date']} on {results['device']}: `{results['command']}`. "
        "Each figure is the median of interleaved samples (+- half the interquartile range); "
        "`fused/unfused` is unfused time over fused time (above 1: fused eager is faster). "
        "Every call allocates its outputs, as plain eager code does. See docs/fused-eager.md.",
        "",
        "| workload | CPU eager | axon unfused | axon fused | axon compiled | fused/unfused |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in results["rows"]:
        compiled = _fmt(r["compiled"], r["unit"]) if "compiled" in r else "-"
        lines.append(
            f"| {r['name']} | {_fmt(r['cpu'], r['unit'])} | {_fmt(r['unfused'], r['unit'])} | "
            f"{_fmt(r['fused'], r['unit'])} | {compiled} | {r['fused_vs_unfused']:.2f}x |"
        )
    lines += ["", "| target | measured | met |", "| --- | --- | --- |"]
    for t in results["targets"]:
        lines.append(f"| {t['target']} | {t['measured']} | {'yes' if t['met'] else 'no'} |")
    return "\n".join(lines) + "\n"


def write(results: dict, out_dir, data_dir) -> None:
    (data_dir / "fused-eager.json").write_text(json.dumps(results, indent=1))
    text = markdown(results)
    (out_dir / "benchmarks-fused-eager.md").write_text("# Benchmarks: fused eager mode\n\n" + text)
    page = out_dir / "benchmarks.md"
    if page.exists():
        begin, end = "<!-- fused-eager:begin -->", "<!-- fused-eager:end -->"
        old = page.read_text()
        section = f"{begin}\n{text}{end}\n"
        if begin in old and end in old:
            new = old[: old.index(begin)] + section + old[old.index(end) + len(end) + 1 :]
        else:
            new = old.rstrip("\n") + "\n\n" + section
        page.write_text(new)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m torch_axon.tools.bench.fused_eager", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--quick", action="store_true", help="tiny shapes: checks the rows run, measures nothing")
    p.add_argument("--only", help="run only rows whose name contains this")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--sample-s", type=float, default=0.3)
    add_output_args(
        p, "folder of benchmarks-fused-eager.md (and benchmarks.md's section)", "folder of fused-eager.json"
    )
    args = p.parse_args(argv)
    out_dir, data_dir = output_dirs(args)
    if args.quick:
        args.repeats, args.sample_s = 2, 0.01
    results = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "command": "python -m torch_axon.tools.bench.fused_eager " + " ".join(argv or []),
        "device": torch.axon.get_device_properties(0).name,
        "rows": [],
    }
    for row in rows(args.quick):
        if args.only and args.only not in row["name"]:
            continue
        entry = measure_row(row, args.quick, args.repeats, args.sample_s)
        results["rows"].append(entry)
        unit = row["unit"]
        print(f"  {entry['name']:36s} unfused {_fmt(entry['unfused'], unit)}  fused {_fmt(entry['fused'], unit)}"
              f"  cpu {_fmt(entry['cpu'], unit)}  {entry['fused_vs_unfused']:.2f}x", flush=True)  # fmt: skip
    if not args.only:
        results["cold_first_steps"] = cold_first_steps(args.quick)
    results["stats"] = torch.axon.fused_eager_stats()
    results["targets"] = targets(results)
    for t in results["targets"]:
        print(f"  target: {t['target']}: {t['measured']} ({'met' if t['met'] else 'not met'})", flush=True)
    write(results, out_dir, data_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
