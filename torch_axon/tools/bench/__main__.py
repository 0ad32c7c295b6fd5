"""``python -m torch_axon.tools.bench``: Axon against PyTorch's CPU backend, in one run.

Measures the ceilings, then each operator and model workload on both backends (interleaved
and repeated), checks its targets and writes the report (``OUT/benchmarks.md``,
``OUT/benchmarks-collectives.md``, charts in ``OUT/benchmarks/``) and the raw results, every
sample (``DATA/benchmarks.json``). ``--out`` defaults to ``./axon-reports``,
``--data`` to OUT/data; ``make bench`` passes ``--out docs --data build/reports``.
``--quick`` shrinks every shape (a smoke test of the suite, not a measurement).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import os
import platform
import sys

import torch

from .. import add_output_args, output_dirs
from . import ceilings, cold_start, collectives, compiled, kernels, models, ops, optim, pointwise, report
from .timing import compare, unfused


def machine() -> dict:
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        memory = 0.0
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "memory_gib": memory,
        "os": platform.platform(terse=True),
        "python": platform.python_version(),
    }


def _entry(timings: dict, work: float, per_call_units: float | None = None) -> dict:
    """Per-backend figures from timings; rate = work (or units) per second, or us per call."""
    out = {}
    for label, t in timings.items():
        rate = (per_call_units if per_call_units is not None else work) / t.median
        if per_call_units is None:
            rate = rate / 1e9 if work else t.median * 1e6
        out[label] = {"rate": rate, **t.as_dict()}
    return out


def run_ops(args) -> list[dict]:
    rows = []
    for w in ops.workloads(args.quick):
        if args.only and args.only not in w.name:
            continue
        timings = compare(_on_both(args, w.make), args.repeats, args.sample_s)
        entry = {"name": w.name, "group": w.group, "unit": w.unit, "work": w.work, **_entry(timings, w.work)}
        entry["ratio"] = timings["cpu"].median / timings["axon"].median
        rows.append(entry)
        print(f"  {w.name:46s} cpu {_show(entry['cpu'], w.unit)}  axon {_show(entry['axon'], w.unit)}  "
              f"ratio {entry['ratio']:.2f}x", flush=True)  # fmt: skip
    return rows


def run_pointwise(args) -> list[dict]:
    """Every pointwise op (pointwise.py), in its preallocated form (outputs made beforehand on both
    backends: the kernel; keys cpu, axon, ratio_out) and its allocating form (a new output per call;
    keys cpu_alloc, axon_alloc, ratio_alloc), the four runs interleaved in one comparison. ``ratio``
    is the one the targets judge: the preallocated form's, the allocating one's where an op has no
    preallocated form. Fewer, shorter samples than the operator rows: there are some 250 cases."""
    rows = []
    for case in pointwise.cases(args.quick):
        if args.only and args.only not in case.label:
            continue
        work = case.n  # elements per call: the rate is elements per second
        runs = _on_both(args, functools.partial(case.make, preallocated=True)) if case.preallocated else {}
        runs.update({f"{label}_alloc": run for label, run in _on_both(args, case.make).items()})
        timings = compare(runs, args.pointwise_repeats, args.sample_s / 4)
        entry = {"name": case.label, "op": case.op.name, "dtype": str(case.dtype).removeprefix("torch."),
                 "n": case.n, "layout": case.layout, "target": pointwise.target(case),
                 "preallocated": case.preallocated, "note": case.op.note, "noop": case.op.noop,
                 **_entry(timings, work)}  # fmt: skip
        entry["ratio_alloc"] = timings["cpu_alloc"].median / timings["axon_alloc"].median
        entry["ratio_out"] = timings["cpu"].median / timings["axon"].median if case.preallocated else None
        entry["ratio"] = entry["ratio_alloc"] if entry["ratio_out"] is None else entry["ratio_out"]
        rows.append(entry)
        ns = {label: t.median / case.n * 1e9 for label, t in timings.items()}
        kernel = (f"preallocated cpu {ns['cpu']:7.3f} axon {ns['axon']:7.3f} ns/el {entry['ratio_out']:5.2f}x"
                  if case.preallocated else f"{'no preallocated form':42s}")  # fmt: skip
        print(f"  {case.label:40s} {kernel}  allocating cpu {ns['cpu_alloc']:7.3f} axon {ns['axon_alloc']:7.3f}"
              f" ns/el {entry['ratio_alloc']:5.2f}x", flush=True)  # fmt: skip
    return rows


def run_cold_start(args) -> dict:
    out = cold_start.measure(args.quick)
    for row in out["rows"]:
        ax = row["axon"]
        if "skipped" in ax:
            print(f"  {row['name']:12s} skipped: {ax['skipped']}", flush=True)
            continue
        phases = ", ".join(f"{k[:-2].replace('_', ' ')} {ax[k]:.2f}" for k in cold_start.PHASES)
        print(f"  {row['name']:12s} whole wait: axon {ax['total_s']:6.2f} s ({phases}),"
              f" cpu {row['cpu']['total_s']:6.2f} s;"
              f" second step: axon {ax['second_step_s']:.3f} s; cache {ax['cache_bytes'] / 2**20:.1f} MiB",
              flush=True)  # fmt: skip
    if out["demo"]:
        print(f"  make demo: axon {out['demo']['axon_s']:.2f} s, cpu {out['demo']['cpu_s']:.2f} s", flush=True)
    return out


def _on_both(args, make) -> dict:
    """label -> (callable, device): the baseline is labelled "cpu" in the results even when
    --baseline moves it to another device (results["baseline"] names that device)."""
    return {"cpu": (make(args.baseline), args.baseline), "axon": (make("axon"), "axon")}


def _show(e: dict, unit: str) -> str:
    return f"{e['rate']:9.2f} {unit} ±{100 * e['spread']:3.0f}%"


def run_models(args) -> list[dict]:
    rows = []
    for w in models.WORKLOADS:
        if args.only and args.only not in w.name:
            continue
        entry = {"name": w.name, "title": w.title, "unit": w.unit}
        try:
            steps = _on_both(args, functools.partial(w.build, quick=args.quick))
        except RuntimeError as e:  # an optional dependency (transformers) is missing
            entry["skipped"] = str(e)
            rows.append(entry)
            print(f"  {w.name:46s} skipped: {e}", flush=True)
            continue
        units = w.units_per_call(args.quick)
        timings = compare(steps, args.model_repeats, args.sample_s, warmup=2)
        entry.update(_entry(timings, 0.0, units))
        entry["ratio"] = timings["cpu"].median / timings["axon"].median
        entry["slowest_ops"] = models.slowest_ops(steps["axon"][0], "axon")
        rows.append(entry)
        print(f"  {w.name:46s} cpu {_show(entry['cpu'], w.unit)}  axon {_show(entry['axon'], w.unit)}  "
              f"ratio {entry['ratio']:.2f}x  slowest: {entry['slowest_ops'][0]['op'] if entry['slowest_ops'] else '-'}",
              flush=True)  # fmt: skip
    return rows


def run_optim(args) -> dict:
    """The AdamW step over the GPT's parameters in its three forms (optim.py), each on both backends."""
    rows = []
    for w in optim.workloads():
        if args.only and args.only not in w.name:
            continue
        steps = _on_both(args, functools.partial(w.make, quick=args.quick))
        timings = compare(steps, args.model_repeats, args.sample_s, warmup=2)
        entry = {"name": w.name, "form": w.form, "unit": optim.UNIT}
        for label, t in timings.items():
            entry[label] = {"rate": t.median * 1e3, **t.as_dict()}
        entry["ratio"] = timings["cpu"].median / timings["axon"].median
        rows.append(entry)
        print(f"  {w.name:46s} cpu {_show(entry['cpu'], optim.UNIT)}  axon {_show(entry['axon'], optim.UNIT)}  "
              f"ratio {entry['ratio']:.2f}x", flush=True)  # fmt: skip
    out = {"parameters": optim.parameter_count(args.quick), "rows": rows, **optim.derived(rows)}
    if out["fused_vs_foreach_axon"] is not None:
        print(f"  fused on axon: {out['fused_vs_foreach_axon']:.2f}x foreach on axon", flush=True)
    if out["fused_vs_cpu_fused"] is not None:
        print(f"  fused on axon: {out['fused_vs_cpu_fused']:.2f}x {args.baseline} fused", flush=True)
    return out


def run_compiled(args) -> list[dict]:
    """Each compiled workload as eager and compiled Axon, eager and compiled CPU."""
    rows = []
    for w in compiled.WORKLOADS:
        if args.only and args.only not in w.name:
            continue
        torch._dynamo.reset()
        runs = {
            label: (w.build(device, is_compiled, args.quick), device)
            for label, device, is_compiled in (
                ("cpu", args.baseline, False),
                ("cpu_compiled", args.baseline, True),
                ("axon", "axon", False),
                ("axon_compiled", "axon", True),
            )
        }
        timings = compare(runs, args.model_repeats, args.sample_s, warmup=2)
        units = w.units_per_call(args.quick)
        entry = {"name": w.name, "title": w.title, "unit": w.unit}
        for label, t in timings.items():
            entry[label] = {"rate": units / t.median, "spread": t.spread, **t.as_dict()}
        entry["compiled_vs_eager"] = timings["axon"].median / timings["axon_compiled"].median
        entry["compiled_vs_cpu_compiled"] = timings["cpu_compiled"].median / timings["axon_compiled"].median
        rows.append(entry)
        print(f"  {w.name:20s} axon eager {_show(entry['axon'], w.unit)}"
              f"  compiled {_show(entry['axon_compiled'], w.unit)}"
              f"  cpu {_show(entry['cpu'], w.unit)}  cpu compiled {_show(entry['cpu_compiled'], w.unit)}"
              f"  compiled/eager {entry['compiled_vs_eager']:.2f}x", flush=True)  # fmt: skip
    return rows


def targets(results: dict) -> list[dict]:
    """The targets of issues 5 and 11 on the default device, judged on this run's own figures."""
    out = []
    ops_by_name = {w["name"]: w for w in results["ops"]}
    c = results["ceilings"]
    add = ops_by_name.get("add 4e+07")
    if add:
        share = add["axon"]["rate"] / c["copy_ceiling_gbps"]
        out.append({
            "target": "elementwise add at 4e7 elements >= 80% of the copy ceiling",
            "measured": f"{add['axon']['rate']:.1f} GB/s = {100 * share:.0f}% of {c['copy_ceiling_gbps']:.1f} GB/s",
            "met": share >= 0.8,
        })  # fmt: skip
    for n in ("1024", "2048"):
        mm, blas = ops_by_name.get(f"sgemm {n}"), c["host_sgemm_gflops"].get(n)
        if mm and blas:
            share = mm["axon"]["rate"] / blas
            out.append({
                "target": f"SGEMM {n} >= 85% of the host BLAS",
                "measured": f"{mm['axon']['rate']:.0f} GFLOP/s = {100 * share:.0f}% of {blas:.0f}",
                "met": share >= 0.85,
            })  # fmt: skip
    d = ops_by_name.get("dispatch: 1-element add")
    if d:
        times = d["axon"]["median_s"] / d["cpu"]["median_s"]
        out.append({
            "target": "1-element add <= 2x PyTorch CPU's time",
            "measured": f"{d['axon']['rate']:.2f} us vs {d['cpu']['rate']:.2f} us = {times:.1f}x "
            f"(queued kernel launch alone: {c['launch']['queued launch (us)']:.2f} us)",
            "met": times <= 2.0,
        })  # fmt: skip
    for row in results.get("cold_start", {}).get("rows", []):
        limit = cold_start.TARGETS.get(row["name"])
        if limit and "total_s" in row["axon"]:
            ax = row["axon"]
            out.append({
                "target": f"cold start: {row['title']}, whole wait from `import torch` to the first step's "
                f"synchronisation < {limit:.0f} s",
                "measured": f"{ax['total_s']:.2f} s = import {ax['import_s']:.2f} + build {ax['build_s']:.2f} "
                f"+ move {ax['move_s']:.2f} + optimiser {ax['optimiser_s']:.2f} + first step {ax['first_step_s']:.2f} "
                f"+ sync {ax['first_sync_s']:.2f} (CPU {row['cpu']['total_s']:.2f} s)",
                "met": ax["total_s"] < limit,
            })  # fmt: skip
    d = results.get("cold_start", {}).get("demo")
    if d:
        out.append({
            "target": f"cold start: make demo's Axon time (the time it prints) < {cold_start.DEMO_TARGET:.0f} s",
            "measured": f"{d['axon_s']:.2f} s (CPU {d['cpu_s']:.2f} s)",
            "met": d["axon_s"] < cold_start.DEMO_TARGET,
        })  # fmt: skip
    # Judged on the kernels (outputs preallocated on both sides; the allocating figure only for an
    # op without a preallocated form); a case that does nothing on either side is not counted.
    pw = results.get("pointwise", [])
    for layout in ("contiguous", "strided", "broadcast"):
        for dtype in ("float32", "bfloat16"):
            rows = [w for w in pw if w["layout"] == layout and w["dtype"] == dtype and not w.get("noop")]
            if rows:
                met = [w for w in rows if w["ratio"] >= w["target"]]
                worst = min(rows, key=lambda w: w["ratio"])
                noops = [w["name"] for w in pw if w["layout"] == layout and w["dtype"] == dtype and w.get("noop")]
                out.append({
                    "target": f"pointwise {dtype} {layout}: every op >= {rows[0]['target']}x CPU, outputs preallocated",
                    "measured": f"{len(met)} of {len(rows)} cases; slowest {worst['name']} {worst['ratio']:.2f}x"
                    + (f"; not counted, no work on either side: {', '.join(noops)}" if noops else ""),
                    "met": len(met) == len(rows),
                })  # fmt: skip
    o = results.get("optim") or {}
    step = f"AdamW step over a {o.get('parameters', 0) / 1e6:.0f}M-parameter GPT"
    if o.get("fused_vs_foreach_axon") is not None:
        out.append({
            "target": f"{step}: fused on Axon >= 1.5x foreach on Axon",
            "measured": f"{o['fused_vs_foreach_axon']:.2f}x",
            "met": o["fused_vs_foreach_axon"] >= 1.5,
        })  # fmt: skip
    if o.get("fused_vs_cpu_fused") is not None:
        out.append({
            "target": f"{step}: fused on Axon >= PyTorch CPU's fused step",
            "measured": f"{o['fused_vs_cpu_fused']:.2f}x",
            "met": o["fused_vs_cpu_fused"] >= 1.0,
        })  # fmt: skip
    for w in results["models"]:
        if "ratio" in w:
            out.append({
                "target": f"{w['name']} >= 0.8x CPU eager throughput",
                "measured": f"{w['ratio']:.2f}x",
                "met": w["ratio"] >= 0.8,
            })  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m torch_axon.tools.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny shapes: checks the suite runs, measures nothing")
    p.add_argument("--only", help="run only workloads whose name contains this")
    p.add_argument("--skip-models", action="store_true")
    p.add_argument("--skip-ops", action="store_true")
    p.add_argument("--skip-pointwise", action="store_true")
    p.add_argument("--skip-cold-start", action="store_true")
    p.add_argument("--skip-optim", action="store_true", help="no optimizer-step rows (optim.py)")
    p.add_argument("--skip-compiled", action="store_true", help="no torch.compile rows")
    p.add_argument("--skip-kernels", action="store_true", help="no rows of kernels users write (kernels.py)")
    p.add_argument("--skip-collectives", action="store_true", help="no torch.distributed rows (collectives.py)")
    p.add_argument("--pointwise-repeats", type=int, default=3, help="samples per backend per pointwise case")
    p.add_argument("--repeats", type=int, default=7, help="samples per backend per operator workload")
    p.add_argument("--model-repeats", type=int, default=3, help="samples per backend per model workload")
    p.add_argument("--sample-s", type=float, default=0.2, help="target length of one sample, seconds")
    p.add_argument("--baseline", default="cpu", help="PyTorch device to compare with (cpu, or cuda)")
    add_output_args(
        p,
        "folder of the report: benchmarks.md, benchmarks-collectives.md, charts in benchmarks/",
        "folder of the raw results, every sample: benchmarks.json",
    )
    args = p.parse_args(argv)
    out_dir, data_dir = output_dirs(args)
    args.json, args.markdown = str(data_dir / "benchmarks.json"), str(out_dir / "benchmarks.md")
    if args.quick:
        args.repeats, args.model_repeats, args.sample_s, args.pointwise_repeats = 3, 2, 0.01, 2

    info = torch.axon.get_device_properties(0)
    results = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "command": "python -m torch_axon.tools.bench " + " ".join(argv if argv is not None else sys.argv[1:]),
        "torch": torch.__version__,
        "machine": machine(),
        "device": {
            "name": info.name,
            "vendor": info.vendor,
            "driver_version": info.driver_version,
            "platform_version": info.platform_version,
            "compute_units": info.max_compute_units,
        },
        "quick": args.quick,
        "baseline": args.baseline,
        "repeats": args.repeats,
        "fused_eager": "on" if torch.axon.is_fused_eager_enabled() else "off",
    }
    torch.axon.fallback_ops(reset=True)
    # Cold starts first: run after the other workloads, the same fresh child processes took
    # about 0.4 s longer each (this process's BLAS and driver threads, its cached memory), which
    # is not what a new user's first minute sees.
    print("cold start (fresh processes, empty kernel caches):", flush=True)
    results["cold_start"] = {"rows": [], "demo": None} if args.skip_cold_start else run_cold_start(args)
    print(f"Axon on {info.name} vs PyTorch {torch.__version__} {args.baseline}; ceilings:", flush=True)
    with unfused():  # the ceilings, operator and pointwise rows time each op's own kernel
        results["ceilings"] = ceilings.measure(args.quick, args.repeats, args.sample_s)
        for key, value in results["ceilings"].items():
            print(f"  {key}: {value}", flush=True)
        print("operators:", flush=True)
        results["ops"] = [] if args.skip_ops else run_ops(args)
        print("pointwise:", flush=True)
        results["pointwise"] = [] if args.skip_pointwise else run_pointwise(args)
    print("models:", flush=True)
    results["models"] = [] if args.skip_models else run_models(args)
    print("optimizer step:", flush=True)
    with unfused():  # torch.optim's forms each as its own kernels (the mode's AdamW rows: fused_eager.py)
        results["optim"] = {"rows": []} if args.skip_optim else run_optim(args)
    print("torch.compile:", flush=True)
    results["compiled"] = [] if args.skip_compiled else run_compiled(args)
    print("kernels users write:", flush=True)
    results["kernels"] = (
        {"rows": [], "targets": []}
        if args.skip_kernels
        else kernels.measure(args.quick, args.model_repeats, args.sample_s, args.only)
    )
    results["fallback_ops"] = torch.axon.fallback_ops()
    results["targets"] = targets(results) + results["kernels"]["targets"]
    if not args.skip_collectives and (not args.only or args.only in "collectives"):
        # Its own page (a table per group size) beside this one; its targets join this page's.
        print("collectives (torch.distributed, axon backend vs Gloo):", flush=True)
        results["collectives"] = collectives.measure(args.quick, ranks=(2,) if args.quick else (2, 4))
        results["targets"] += results["collectives"]["targets"]
        for path in collectives.write(
            {**results, **results["collectives"], "device": info.name, "maps_to_host": info.native_kernels},
            "",  # its raw results are in benchmarks.json
            str(out_dir / "benchmarks-collectives.md"),
        ):
            print(f"wrote {path}")
    print("targets:")
    for t in results["targets"]:
        print(f"  [{'met' if t['met'] else 'NOT MET'}] {t['target']}: {t['measured']}")
    for path in report.write(results, args.json, args.markdown):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
