"""``python -m torch_axon.tools.soak``: a long training run that watches for leaks and drift.

A small transformer (2 layers, 64 wide, a 512-token vocabulary) trains with AdamW on batches
from a DataLoader (two forked workers, pinned memory) for ``--steps`` steps on axon, eagerly
and compiled, and for the first ``--cpu-steps`` on the CPU from the same start, whose losses
the axon run must follow. Every ``--every`` steps it records device memory allocated and
reserved, the process's resident memory (RSS), its open file descriptors and threads, and the
OpenCL objects Axon holds (buffers, programs, kernels, events, queues: ``_C._live_objects()``).
Drift is the change from the first record after warm-up to the last, relative to the first; the
target is under 1%. Writes ``OUT/soak.md`` and ``DATA/soak.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

from .. import _C
from . import add_output_args, output_dirs

VOCAB, WIDTH, CONTEXT, BATCH = 512, 64, 32, 8
# Record keys of the live OpenCL object counts, and their short names in the report.
LIVE_KINDS = {"buffers": "b", "programs": "p", "kernels": "k", "events": "e", "queues": "q"}


class TinyTransformer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, WIDTH)
        layer = torch.nn.TransformerEncoderLayer(WIDTH, 4, 4 * WIDTH, dropout=0.0, batch_first=True, norm_first=True)
        self.layers = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = torch.nn.Linear(WIDTH, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        mask = torch.nn.Transformer.generate_square_subsequent_mask(tokens.shape[1], device=tokens.device)
        return self.head(self.layers(self.embed(tokens), mask=mask, is_causal=True))


class Tokens(torch.utils.data.Dataset):
    """Deterministic token windows: item i is the same in every worker and every run."""

    def __len__(self) -> int:
        return 1 << 30

    def __getitem__(self, i: int) -> torch.Tensor:
        g = torch.Generator().manual_seed(i)
        return torch.randint(0, VOCAB, (CONTEXT + 1,), generator=g)


def _process() -> dict:
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return {
        "rss_mib": int(fields["VmRSS"].split()[0]) / 1024,
        "fds": len(os.listdir("/proc/self/fd")),
        "threads": int(fields["Threads"]),
    }


def run(device: str, compiled: bool, steps: int, every: int) -> dict:
    torch.manual_seed(0)
    model = TinyTransformer().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    forward = torch.compile(model) if compiled else model
    loader = torch.utils.data.DataLoader(
        Tokens(), batch_size=BATCH, num_workers=2, pin_memory=device != "cpu", multiprocessing_context="fork"
    )
    losses, records = [], []
    start = time.perf_counter()
    for step, batch in enumerate(loader):
        if step == steps:
            break
        batch = batch.to(device, non_blocking=True)
        logits = forward(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % every == 0 or step == steps - 1:
            losses.append((step, loss.item()))
            record = {"step": step, **_process()}
            if device != "cpu":
                record["allocated_mib"] = torch.axon.memory_allocated() / 2**20
                record["reserved_mib"] = torch.axon.memory_reserved() / 2**20
                live = _C._live_objects()
                record.update({f"live_{k}": live[k] for k in LIVE_KINDS})
                record["live_objects"] = sum(live.values())
            records.append(record)
    return {"device": device, "compiled": compiled, "steps": steps, "seconds": time.perf_counter() - start,
            "losses": losses, "records": records}  # fmt: skip


def drift(records: list[dict], warmup_steps: int) -> dict:
    """Relative change per figure from the first record at or after warm-up to the last."""
    after = [r for r in records if r["step"] >= warmup_steps] or records
    first, last = after[0], after[-1]
    return {
        k: (last[k] - first[k]) / first[k] if first[k] else float(last[k] != first[k]) for k in first if k != "step"
    }


def markdown(results: dict) -> str:
    lines = [
        "# Soak run",
        "",
        f"Run {results['date']} (`{results['command']}`): a 2-layer transformer trained with AdamW from a "
        f"DataLoader (2 forked workers, pinned batches), {results['steps']} steps per mode. Drift: change from "
        f"step {results['warmup']} (after warm-up) to the last step, relative. Target: under 1%.",
        "",
        "Live OpenCL objects: the buffers (b), programs (p), kernels (k), events (e) and command queues (q) "
        "Axon holds at the last step; the drift is of their sum.",
        "",
        "| mode | steps | seconds | allocated | reserved | RSS | fds | threads | live OpenCL objects "
        "| largest loss difference to CPU |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results["runs"]:
        d, last = r["drift"], r["records"][-1]
        cells = [
            f"{last[k]:.1f} MiB ({100 * d[k]:+.2f}%)" if k in d else "-"
            for k in ("allocated_mib", "reserved_mib", "rss_mib")
        ]
        cells += [f"{last[k]} ({100 * d[k]:+.2f}%)" for k in ("fds", "threads")]
        cells.append(
            ", ".join(f"{short} {last[f'live_{k}']}" for k, short in LIVE_KINDS.items())
            + f" ({100 * d['live_objects']:+.2f}%)"
            if "live_objects" in d
            else "-"
        )
        diff = r.get("max_loss_diff_to_cpu")
        compared = (
            "-" if diff is None else f"{diff:.2e} ({r['compared_steps']} losses in the first {r['cpu_steps']} steps)"
        )
        lines.append(f"| {r['label']} | {r['steps']} | {r['seconds']:.0f} | {' | '.join(cells)} | {compared} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m torch_axon.tools.soak", description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=10_000)
    p.add_argument("--cpu-steps", type=int, default=500, help="CPU steps the axon losses are compared with")
    p.add_argument("--every", type=int, default=100, help="record every this many steps")
    p.add_argument("--warmup", type=int, default=500, help="steps before drift is measured")
    p.add_argument("--no-compile", action="store_true")
    add_output_args(p, "folder of the report: soak.md", "folder of the raw results: soak.json")
    args = p.parse_args(argv)
    out_dir, data_dir = output_dirs(args)
    cpu = run("cpu", False, args.cpu_steps, args.every)
    cpu_losses = dict(cpu["losses"])
    runs = []
    for compiled in (False,) if args.no_compile else (False, True):
        torch._dynamo.reset()
        r = run("axon", compiled, args.steps, args.every)
        r["label"] = "axon compiled" if compiled else "axon eager"
        r["drift"] = drift(r["records"], args.warmup)
        shared = [(s, loss) for s, loss in r["losses"] if s in cpu_losses]
        r["compared_steps"] = len(shared)
        r["cpu_steps"] = args.cpu_steps
        r["max_loss_diff_to_cpu"] = max((abs(loss - cpu_losses[s]) for s, loss in shared), default=None)
        runs.append(r)
        print(f"{r['label']}: {r['steps']} steps in {r['seconds']:.0f} s, drift "
              + ", ".join(f"{k} {100 * v:+.2f}%" for k, v in r["drift"].items())
              + f", largest loss difference to CPU {r['max_loss_diff_to_cpu']}", flush=True)  # fmt: skip
    results = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "command": "python -m torch_axon.tools.soak " + " ".join(argv if argv is not None else sys.argv[1:]),
        "steps": args.steps,
        "warmup": args.warmup,
        "runs": runs,
        "cpu": cpu,
    }
    (data_dir / "soak.json").write_text(json.dumps(results, indent=1))
    (out_dir / "soak.md").write_text(markdown(results))
    print(f"wrote {out_dir / 'soak.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
