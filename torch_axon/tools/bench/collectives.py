"""``python -m torch_axon.tools.bench.collectives``: the axon c10d backend against plain Gloo, in one run.

For 2 and 4 ranks (one process each, ``torch.multiprocessing`` spawn, env:// rendezvous on
127.0.0.1), each rank joins one process group ``cpu:gloo,axon:axon`` (``init_process_group()``
with no backend on axon): CPU tensors go to Gloo as it is, axon tensors to the axon backend, which
hands them to the same Gloo algorithms (through host mappings on CPU-class devices, else staged
through host copies). Measured, interleaved
(Gloo, axon, Gloo, axon, ...):

- all_reduce, all_gather_into_tensor and reduce_scatter_tensor of float32, 1 KiB .. 256 MiB in
  powers of 4, as NCCL-tests reports them: the size is the whole buffer (all_reduce's tensor,
  all_gather's output, reduce_scatter's input), algbw = size / time, busbw = algbw * 2(n-1)/n for
  all_reduce and algbw * (n-1)/n for the other two;
- small all_reduce latency (4 bytes, 1 KiB);
- what staging alone costs at each size (the device-to-host copy of what Gloo reads, the
  host-to-device copy of what it writes, made as the backend makes them where it stages: devices
  whose memory is not the host's, strided or pre-scaled tensors), and into host buffers kept
  between calls; beside axon's time less Gloo's. On CPU-class devices (PoCL; the device's
  ``native_kernels``) the backend maps the tensors instead and copies nothing;
- at 2 ranks, DDP training of a small MLP: steps/s on axon against the CPU with Gloo, and the
  same steps without gradient synchronisation (``no_sync``), which leaves the communication's
  share of a step.

Ranks of one machine share its cores: each rank gets cores / ranks of them on both sides (torch
threads for the CPU, ``POCL_MAX_PTHREAD_COUNT`` for PoCL) and, unless ``POCL_DEVICES`` is set, a
PoCL device of its own. Writes a markdown page, ``OUT/benchmarks-collectives.md``, and the raw
results, ``DATA/collectives.json`` (``--out`` defaults to ``./axon-reports``, ``--data`` to OUT/data).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import socket
import statistics
import sys
import tempfile
import time

import torch

from .. import add_output_args, output_dirs

KiB, MiB = 1 << 10, 1 << 20
SIZES = [KiB * 4**k for k in range(10)]  # 1 KiB .. 256 MiB
QUICK_SIZES = [KiB * 4**k for k in range(4)]  # 1 KiB .. 64 KiB
LATENCY_SIZES = [4, KiB]
OPS = ("all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor")
# The targets of issue 14.
BANDWIDTH_TARGET, BANDWIDTH_FROM = 0.9, MiB
LATENCY_TARGET = 2.0


def spread(samples: list[float]) -> float:
    """Half the interquartile range relative to the median (0.05 = +-5 %), as timing.Timing's."""
    if len(samples) < 4:
        return (max(samples) - min(samples)) / 2 / statistics.median(samples)
    q = statistics.quantiles(samples, n=4)
    return (q[2] - q[0]) / 2 / statistics.median(samples)


def bus_factor(op: str, n: int) -> float:
    """NCCL-tests' busbw / algbw: what each rank's link carries relative to the buffer."""
    return 2 * (n - 1) / n if op == "all_reduce" else (n - 1) / n


def size_label(nbytes: int) -> str:
    for unit, scale in (("MiB", MiB), ("KiB", KiB)):
        if nbytes >= scale:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes} B"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------------
# In each rank


class _Rank:
    """Timing helpers for one rank of the group: every sample starts together (a barrier) and
    counts as long as the slowest rank took, which is how long the collective took."""

    def __init__(self, sample_s: float, repeats: int):
        import torch.distributed as dist

        self.dist = dist
        self.sample_s, self.repeats = sample_s, repeats
        self.rank, self.world = dist.get_rank(), dist.get_world_size()

    def _slowest(self, seconds: float) -> float:
        t = torch.tensor([seconds], dtype=torch.float64)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)  # a CPU tensor: Gloo, off the clock
        return t.item()

    def _sample(self, fn, device: str, inner: int) -> float:
        self.dist.barrier()
        _sync(device)
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        _sync(device)
        return self._slowest((time.perf_counter() - start) / inner)

    def _inner(self, fn, device: str) -> int:
        """Calls per sample for about sample_s; the same on every rank (it comes from the slowest)."""
        self._sample(fn, device, 1)  # warm-up: kernels, Gloo's buffers, the allocator
        per_call = self._sample(fn, device, 1)
        if per_call < self.sample_s / 16:  # one call is too short to time alone: time a few
            per_call = self._sample(fn, device, 16)
        return max(1, min(10_000, round(self.sample_s / per_call)))

    def compare(self, runs: dict[str, tuple]) -> dict[str, list[float]]:
        """label -> (callable, device): seconds per call, samples of each label alternating."""
        inner = {label: self._inner(fn, device) for label, (fn, device) in runs.items()}
        samples = {label: [] for label in runs}
        for _ in range(self.repeats):
            for label, (fn, device) in runs.items():
                samples[label].append(self._sample(fn, device, inner[label]))
        return samples


def _sync(device: str) -> None:
    if device.startswith("axon"):
        torch.axon.synchronize()


def _collective(op: str, nbytes: int, device, world: int):
    """A callable running one collective on float32 buffers of nbytes in all (zeros: sums stay
    finite however often they run)."""
    import torch.distributed as dist

    numel = nbytes // 4
    if op == "all_reduce":
        t = torch.zeros(numel, device=device)
        return lambda: dist.all_reduce(t)
    whole, part = torch.zeros(numel, device=device), torch.zeros(numel // world, device=device)
    # PyTorch 2.10 renamed them (the old names warn); the same calls into the backend.
    if op == "all_gather_into_tensor":
        gather = getattr(dist, "all_gather_single", dist.all_gather_into_tensor)
        return lambda: gather(whole, part)
    scatter = getattr(dist, "reduce_scatter_single", dist.reduce_scatter_tensor)
    return lambda: scatter(part, whole)


def _staging(op: str, nbytes: int, device, world: int, reuse: bool):
    """The copies the axon backend adds to the collective, made as it makes them (reuse=False):
    Gloo's inputs copied out to new host tensors; its outputs, new host tensors too, whose pages
    fault in as Gloo first writes them (one element written per 4 KiB page stands in for that),
    copied back into the device tensors. reuse=True uses host buffers kept from call to call
    instead: what a buffer pool in the backend would save. (Above glibc's mmap threshold, 32 MiB
    at most, every new tensor is fresh pages from the kernel, freed again with the tensor.)"""
    whole, part = nbytes // 4, nbytes // 4 // world
    read, written = {
        "all_reduce": (whole, whole),
        "all_gather_into_tensor": (part, whole),
        "reduce_scatter_tensor": (whole, part),
    }[op]
    in_place = op == "all_reduce"  # one host tensor, copied out and back
    src, host_src = torch.zeros(read, device=device), torch.zeros(read)
    dst, host_dst = (src, host_src) if in_place else (torch.zeros(written, device=device), torch.zeros(written))

    def run():
        if reuse:
            host_src.copy_(src)
            dst.copy_(host_dst)
            return
        host_in = src.to("cpu")
        if in_place:
            host_out = host_in
        else:
            host_out = torch.empty(written)
            host_out[:: 4096 // host_out.element_size()] = 0
        dst.copy_(host_out)

    return run


def _bandwidth(r: _Rank, device, sizes: list[int]) -> list[dict]:
    rows = []
    for op in OPS:
        for nbytes in sizes:
            runs = {
                "gloo": (_collective(op, nbytes, "cpu", r.world), "cpu"),
                "axon": (_collective(op, nbytes, device, r.world), str(device)),
                "staging": (_staging(op, nbytes, device, r.world, reuse=False), str(device)),
                "staging_reused": (_staging(op, nbytes, device, r.world, reuse=True), str(device)),
            }
            samples = r.compare(runs)
            del runs
            if r.rank == 0:
                row = {"op": op, "bytes": nbytes, "ranks": r.world}
                for label, s in samples.items():
                    median = statistics.median(s)
                    row[label] = {"median_s": median, "samples_s": s}
                    if not label.startswith("staging"):
                        algbw = nbytes / median / 1e9
                        row[label].update(algbw_gbps=algbw, busbw_gbps=algbw * bus_factor(op, r.world))
                row["ratio"] = row["gloo"]["median_s"] / row["axon"]["median_s"]
                rows.append(row)
                extra = row["axon"]["median_s"] - row["gloo"]["median_s"]
                print(f"  {r.world} ranks {op:23s} {size_label(nbytes):>8s}: busbw gloo "
                      f"{row['gloo']['busbw_gbps']:7.3f} GB/s, axon {row['axon']['busbw_gbps']:7.3f} GB/s, "
                      f"ratio {row['ratio']:.2f}; extra {extra * 1e3:8.3f} ms,"
                      f" staging {row['staging']['median_s'] * 1e3:8.3f} ms"
                      f" ({row['staging_reused']['median_s'] * 1e3:.3f} ms reused)",
                      flush=True)  # fmt: skip
    return rows


def _latency(r: _Rank, device) -> list[dict]:
    rows = []
    for nbytes in LATENCY_SIZES:
        samples = r.compare({
            "gloo": (_collective("all_reduce", nbytes, "cpu", r.world), "cpu"),
            "axon": (_collective("all_reduce", nbytes, device, r.world), str(device)),
        })  # fmt: skip
        if r.rank == 0:
            row = {"bytes": nbytes, "ranks": r.world}
            for label, s in samples.items():
                row[label] = {"median_us": statistics.median(s) * 1e6, "samples_s": s}
            row["times"] = row["axon"]["median_us"] / row["gloo"]["median_us"]
            rows.append(row)
            print(f"  {r.world} ranks all_reduce latency {size_label(nbytes):>6s}: "
                  f"gloo {row['gloo']['median_us']:8.1f} us, "
                  f"axon {row['axon']['median_us']:8.1f} us ({row['times']:.2f}x)", flush=True)  # fmt: skip
    return rows


MLP = (512, 1024, 1024, 512)


def _ddp(r: _Rank, device, steps_per_sample: int, batch: int) -> dict:
    """DDP training steps per second on axon and on the CPU (Gloo), with and without the gradient
    all-reduce."""
    import contextlib

    from torch import nn
    from torch.nn.parallel import DistributedDataParallel

    def build(dev, sync: bool):
        torch.manual_seed(0)
        layers = []
        for a, b in zip(MLP, MLP[1:], strict=False):
            layers += [nn.Linear(a, b), nn.ReLU()]
        model = DistributedDataParallel(nn.Sequential(*layers[:-1]).to(dev))
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        g = torch.Generator().manual_seed(r.rank)
        x, y = torch.randn(batch, MLP[0], generator=g).to(dev), torch.randn(batch, MLP[-1], generator=g).to(dev)

        def steps():
            for _ in range(steps_per_sample):
                opt.zero_grad()
                with contextlib.nullcontext() if sync else model.no_sync():
                    nn.functional.mse_loss(model(x), y).backward()
                opt.step()

        return steps

    runs = {
        f"{label}{'' if sync else '_no_sync'}": (build(dev, sync), str(dev))
        for sync in (True, False)
        for label, dev in (("gloo", "cpu"), ("axon", device))
    }
    # DDP's first steps build its buckets: a warm-up sample each, then the timed ones.
    for fn, dev in runs.values():
        r._sample(fn, dev, 1)
    samples = {label: [] for label in runs}
    for _ in range(r.repeats):
        for label, (fn, dev) in runs.items():
            samples[label].append(r._sample(fn, dev, 1) / steps_per_sample)
    params = sum(a * b + b for a, b in zip(MLP, MLP[1:], strict=False))
    out = {"ranks": r.world, "mlp": list(MLP), "parameters": params, "batch_per_rank": batch,
           "steps_per_sample": steps_per_sample}  # fmt: skip
    for label, s in samples.items():
        out[label] = {"steps_per_s": 1 / statistics.median(s), "samples_s": s}
    out["ratio"] = out["axon"]["steps_per_s"] / out["gloo"]["steps_per_s"]
    for label in ("gloo", "axon"):
        # The share of a step that synchronisation costs: 1 - (time without) / (time with).
        out[label]["sync_share"] = 1 - out[label]["steps_per_s"] / out[f"{label}_no_sync"]["steps_per_s"]
    if r.rank == 0:
        print(f"  DDP {r.world} ranks MLP {params / 1e6:.1f}M params: gloo {out['gloo']['steps_per_s']:.1f} steps/s"
              f" (sync {100 * out['gloo']['sync_share']:.0f}%), axon {out['axon']['steps_per_s']:.1f} steps/s"
              f" (sync {100 * out['axon']['sync_share']:.0f}%), ratio {out['ratio']:.2f}", flush=True)  # fmt: skip
    return out


def _rank_main(rank: int, world: int, port: int, config: dict, result_path: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world),
                      LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=str(world))  # fmt: skip
    torch.set_num_threads(config["threads"])
    import torch.distributed as dist

    import torch_axon.distributed as axon_dist

    device = axon_dist.local_device()
    torch.axon.set_device(device)
    dist.init_process_group(device_id=device)
    try:
        r = _Rank(config["sample_s"], config["repeats"])
        out = {"device": str(device), "backends": str(dist.get_backend_config())}
        out["bandwidth"] = _bandwidth(r, device, config["sizes"])
        out["latency"] = _latency(r, device)
        if config["ddp"] and world == 2:
            out["ddp"] = _ddp(r, device, config["ddp_steps"], config["ddp_batch"])
        if rank == 0:
            with open(result_path, "w") as f:
                json.dump(out, f)
    finally:
        dist.destroy_process_group()
        # The DDP rows end with a backward pass: PyTorch's autograd device thread drops its last
        # graph task under the GIL, and a rank that exits before it could aborts ("terminate
        # called without an active exception"; tests/distributed_harness.py waits the same way).
        time.sleep(0.1)


# ---------------------------------------------------------------------------------------------
# The driver


def _spawn(world: int, config: dict) -> dict:
    import torch.multiprocessing as mp

    cores = os.cpu_count() or 1
    threads = max(1, cores // world)
    env = {"POCL_MAX_PTHREAD_COUNT": str(threads), "OMP_NUM_THREADS": str(threads)}
    if "POCL_DEVICES" not in os.environ:  # a PoCL device per rank, as a GPU per rank would be
        env["POCL_DEVICES"] = " ".join(["pthread"] * world)
    # Spawned ranks inherit this process's environment as it is when they start.
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rank0.json")
            cfg = {**config, "threads": threads}
            mp.start_processes(_rank_main, args=(world, _free_port(), cfg, path), nprocs=world, start_method="spawn")
            with open(path) as f:
                out = json.load(f)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    out["threads_per_rank"] = threads
    out["pocl_devices"] = os.environ.get("POCL_DEVICES", env.get("POCL_DEVICES"))
    return out


def targets(results: dict) -> list[dict]:
    """Issue 14's targets, judged on this run's figures (reported, never asserted)."""
    out = []
    for world, run in results["runs"].items():
        big = [row for row in run["bandwidth"] if row["bytes"] >= BANDWIDTH_FROM]
        if big:
            worst = min(big, key=lambda row: row["ratio"])
            out.append({
                "target": f"collectives, {world} ranks: axon >= {BANDWIDTH_TARGET}x Gloo's bus bandwidth"
                          f" from {size_label(BANDWIDTH_FROM)}",
                "measured": f"{sum(row['ratio'] >= BANDWIDTH_TARGET for row in big)} of {len(big)} cases; lowest "
                            f"{worst['op']} {size_label(worst['bytes'])} {worst['ratio']:.2f}x",
                "met": all(row["ratio"] >= BANDWIDTH_TARGET for row in big),
            })  # fmt: skip
        for row in run["latency"]:
            out.append({
                "target": f"all_reduce latency, {size_label(row['bytes'])}, {world} ranks:"
                          f" axon <= {LATENCY_TARGET}x Gloo",
                "measured": f"{row['axon']['median_us']:.1f} us vs {row['gloo']['median_us']:.1f} us"
                            f" = {row['times']:.2f}x",
                "met": row["times"] <= LATENCY_TARGET,
            })  # fmt: skip
    return out


def measure(
    quick: bool = False,
    ranks: tuple[int, ...] = (2, 4),
    sample_s: float = 0.2,
    repeats: int = 5,
    max_bytes: int | None = None,
) -> dict:
    """Every figure of the page, as a dict (results["runs"][str(ranks)] for each group size)."""
    config = {
        "sizes": [n for n in (QUICK_SIZES if quick else SIZES) if max_bytes is None or n <= max_bytes],
        "sample_s": 0.02 if quick else sample_s,
        "repeats": 2 if quick else repeats,
        "ddp": True,
        "ddp_steps": 2 if quick else 10,
        "ddp_batch": 8 if quick else 64,
    }
    results = {"quick": quick, "config": config, "runs": {}}
    for world in ranks:
        print(f"{world} ranks:", flush=True)
        results["runs"][str(world)] = _spawn(world, config)
    results["targets"] = targets(results)
    return results


def markdown(results: dict) -> str:
    m = results.get("machine", {})
    lines = [
        "# Collectives: the axon backend against Gloo",
        "",
        "<!-- Generated by `python -m torch_axon.tools.bench.collectives`; do not edit by hand. -->",
        "",
        f"Run of {results.get('date', '?')} on {results.get('device', '?')}, PyTorch {results.get('torch', '?')};"
        f" {m.get('cpu', '?')}, {m.get('cores', '?')} cores. Command: `{results.get('command', '?')}`."
        + (
            f" Load average (1 min) {results['load_average'][0]:.2f} at the start,"
            f" {results['load_average_end'][0]:.2f} at the end."
            if "load_average_end" in results
            else ""
        ),
        "",
        "Each group size ran in its own processes (one per rank, 127.0.0.1), in one process group"
        " `cpu:gloo,axon:axon`: the same collective on CPU tensors (Gloo as it is) and on axon tensors (the axon"
        " backend around the same Gloo algorithms: "
        + (
            "this device is CPU-class, so Gloo works in the axon tensors through host mappings"
            if results.get("maps_to_host")
            else "this device's memory is not the host's, so the backend stages host copies"
        )
        + "), samples alternating; times are medians of"
        f" {results['config']['repeats']} samples, each the slowest rank's (± half the interquartile range)."
        " Sizes are the whole buffer (NCCL-tests:"
        " all_reduce's tensor, all_gather's output, reduce_scatter's input); busbw = size / time x 2(n-1)/n for"
        " all_reduce, x (n-1)/n for the others. **Ratio = axon's bandwidth / Gloo's.** *Extra* is axon's time less"
        " Gloo's. *Staging* is what the copies cost where the backend stages (devices whose memory is not the"
        " host's; strided, widened or pre-scaled tensors): device to host of what Gloo reads into new host tensors"
        " and host to device of what it writes, as the backend makes them, measured alone on all ranks at once;"
        " *reused host buffers*: the same copies into host buffers kept between calls.",
        "",
        "## Targets",
        "",
        "| target | measured | met |",
        "| --- | --- | --- |",
    ]
    for t in results["targets"]:
        lines.append(f"| {t['target']} | {t['measured']} | {'yes' if t['met'] else '**no**'} |")
    lines += _where_the_time_goes(results)
    for world, run in results["runs"].items():
        lines += [
            "",
            f"## {world} ranks",
            "",
            f"{run['threads_per_rank']} thread(s) per rank on both sides; PoCL devices `{run['pocl_devices']}`.",
            "",
            "| op | size | Gloo busbw GB/s | axon busbw GB/s | ratio | Gloo ms | axon ms | extra ms | staging ms "
            "| staging, reused host buffers ms |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for row in run["bandwidth"]:
            g, a, s = row["gloo"]["median_s"], row["axon"]["median_s"], row["staging"]["median_s"]
            reused = row["staging_reused"]["median_s"]
            lines.append(
                f"| {row['op']} | {size_label(row['bytes'])} | {row['gloo']['busbw_gbps']:.3f} "
                f"| {row['axon']['busbw_gbps']:.3f} | **{row['ratio']:.2f}x** "
                f"| {g * 1e3:.3f} ±{100 * spread(row['gloo']['samples_s']):.0f}% "
                f"| {a * 1e3:.3f} ±{100 * spread(row['axon']['samples_s']):.0f}% "
                f"| {(a - g) * 1e3:.3f} | {s * 1e3:.3f} | {reused * 1e3:.3f} |"
            )
        lines += ["", "| all_reduce latency | Gloo us | axon us | axon / Gloo |", "| --- | --- | --- | --- |"]
        for row in run["latency"]:
            lines.append(
                f"| {size_label(row['bytes'])} "
                f"| {row['gloo']['median_us']:.1f} ±{100 * spread(row['gloo']['samples_s']):.0f}% "
                f"| {row['axon']['median_us']:.1f} ±{100 * spread(row['axon']['samples_s']):.0f}% "
                f"| **{row['times']:.2f}x** |"
            )
        d = run.get("ddp")
        if d:
            lines += [
                "",
                f"DDP training, MLP {' x '.join(map(str, d['mlp']))} ({d['parameters'] / 1e6:.2f}M parameters),"
                f" batch {d['batch_per_rank']} per rank, SGD, {d['steps_per_sample']} steps per sample:",
                "",
                "| | Gloo (CPU) | axon | axon / Gloo |",
                "| --- | --- | --- | --- |",
                f"| steps/s | {d['gloo']['steps_per_s']:.1f} | {d['axon']['steps_per_s']:.1f} "
                f"| **{d['ratio']:.2f}x** |",
                f"| steps/s without gradient sync (no_sync) | {d['gloo_no_sync']['steps_per_s']:.1f} "
                f"| {d['axon_no_sync']['steps_per_s']:.1f} "
                f"| {d['axon_no_sync']['steps_per_s'] / d['gloo_no_sync']['steps_per_s']:.2f}x |",
                f"| share of a step spent synchronising | {100 * d['gloo']['sync_share']:.0f}% "
                f"| {100 * d['axon']['sync_share']:.0f}% | |",
            ]
    lines.append("")
    return "\n".join(lines)


def _where_the_time_goes(results: dict) -> list[str]:
    """From BANDWIDTH_FROM up: axon's time over Gloo's, what staged copies would add, and what host
    buffers kept between calls would save of them (medians over cases)."""
    lines = []
    for world, run in results["runs"].items():
        big = [row for row in run["bandwidth"] if row["bytes"] >= BANDWIDTH_FROM]
        if not big:
            continue
        extra = [row["axon"]["median_s"] / row["gloo"]["median_s"] - 1 for row in big]
        staging = [row["staging"]["median_s"] / row["gloo"]["median_s"] for row in big]
        saved = [1 - row["staging_reused"]["median_s"] / row["staging"]["median_s"] for row in big]
        lines.append(
            f"- {world} ranks, {size_label(BANDWIDTH_FROM)} and up ({len(big)} cases, medians): axon takes"
            f" {round(100 * statistics.median(extra)):+d}% of Gloo's time over it. Staged copies would add"
            f" {100 * statistics.median(staging):.0f}% of Gloo's time; host buffers kept between calls instead"
            f" of new ones would take {100 * statistics.median(saved):.0f}% off them."
        )
    return ["", "## Where axon's extra time goes", "", *lines] if lines else []


def write(results: dict, json_path: str, md_path: str | None) -> list[str]:
    written = []
    for path, text in ((json_path, json.dumps(results, indent=1)), (md_path, markdown(results) if md_path else None)):
        if path and text is not None:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m torch_axon.tools.bench.collectives", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--quick", action="store_true", help="small sizes, few samples: checks the run, measures nothing")
    p.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    p.add_argument("--repeats", type=int, default=5, help="samples per backend per case")
    p.add_argument("--sample-s", type=float, default=0.2, help="target length of one sample, seconds")
    p.add_argument("--max-mib", type=float, help="largest buffer, MiB (default 256)")
    p.add_argument("--render", metavar="JSON", help="only rewrite the markdown page from a run's JSON")
    add_output_args(p, "folder of the page benchmarks-collectives.md", "folder of the raw results collectives.json")
    args = p.parse_args(argv)
    out_dir, data_dir = output_dirs(args)
    json_path, md_path = str(data_dir / "collectives.json"), str(out_dir / "benchmarks-collectives.md")

    import torch_axon  # noqa: F401  (torch.axon)

    from .__main__ import machine

    results = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "command": " ".join(
            ["python -m torch_axon.tools.bench.collectives", *(argv if argv is not None else sys.argv[1:])]
        ),
        "torch": torch.__version__,
        "device": torch.axon.get_device_name(0),
        # What the backend does with axon tensors here: maps them (CPU-class devices) or stages.
        "maps_to_host": torch.axon.get_device_properties(0).native_kernels,
        "machine": machine(),
        "load_average": os.getloadavg(),
    }
    if args.render:
        with open(args.render) as f:
            results = json.load(f)
        print(f"wrote {write(results, '', md_path)[0]}")
        return 0
    max_bytes = None if args.max_mib is None else int(args.max_mib * MiB)
    results.update(measure(args.quick, tuple(args.ranks), args.sample_s, args.repeats, max_bytes))
    # Ranks share the machine's cores: other load during the run shows in the spreads.
    results["load_average_end"] = os.getloadavg()
    print("targets:")
    for t in results["targets"]:
        print(f"  [{'met' if t['met'] else 'NOT MET'}] {t['target']}: {t['measured']}")
    for path in write(results, json_path, md_path):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
