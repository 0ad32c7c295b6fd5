"""Axon's measurement tools, apart from the product (the device module, the Inductor backend,
torch.distributed): each runs as ``python -m torch_axon.tools.<tool>``.

- ``bench``: Axon against PyTorch's CPU backend (operators, every pointwise op, models,
  torch.compile, cold start, collectives), with ``bench.accuracy`` (vector math against float64)
  and ``bench.collectives`` (the c10d backend against Gloo) runnable on their own;
- ``conformance``: every OpInfo of PyTorch's ``op_db`` on the CPU and on axon (eager, and the
  ``--forward-ad``, ``--vmap`` and ``--compile`` modes);
- ``module_sweep``: every ModuleInfo of PyTorch's ``module_db`` on the CPU and on axon;
- ``models``: the model sweep (transformers architectures, torchvision and timm families).

They stay usable outside the repository: a sweep is also a self-test of a new OpenCL driver.
None of them writes into the installed package's tree. Every tool takes ``--out DIR``, where the
reports a reader reads go (markdown, charts; default ``./axon-reports``), and ``--data DIR``,
where raw results (JSON with every sample or record) and the sweeps' resume checkpoints (JSON
lines) go (default ``DIR/data``, beside the reports). ``make bench``, ``make coverage``, ``make
modules`` and ``make models`` pass ``--out docs --data build/reports``: the repository commits
the reports in docs/ and never the data.
"""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_OUT = "axon-reports"


def add_output_args(p: argparse.ArgumentParser, reports: str, data: str | None = None) -> None:
    """``--out`` and ``--data``, the same for every tool; ``reports`` and ``data`` name what goes there."""
    p.add_argument("--out", metavar="DIR", help=f"{reports} (default ./{DEFAULT_OUT})")
    if data is not None:
        p.add_argument("--data", metavar="DIR", help=f"{data} (default OUT/data)")


def output_dirs(args: argparse.Namespace) -> tuple[Path, Path]:
    """(reports folder, data folder), created."""
    out = Path(args.out or DEFAULT_OUT)
    data = Path(getattr(args, "data", None) or out / "data")
    for folder in (out, data):
        folder.mkdir(parents=True, exist_ok=True)
    return out, data
