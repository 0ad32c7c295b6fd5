"""``axon-smi`` / ``python -m torch_axon``: devices, memory per process, the kernel cache.

axon-smi                 devices, processes and their memory, the kernel cache
axon-smi --json          the same as one JSON object
axon-smi --clear-cache   removes the compiled kernels (Axon's and PoCL's) from the cache
axon-smi --warm-cache    builds the kernels common workloads use (python -m torch_axon.warmup)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys

import torch

from ..warmup import cache_folders
from . import usage

# Axon's own cache entries: <32 hex digits>.bin, and the temporary files a writer renames.
_ENTRY = re.compile(r"^[0-9a-f]{32}\.bin(\.\d+\.tmp)?$")


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _short(platform: str) -> str:
    return {"Portable Computing Language": "PoCL"}.get(platform, platform)


def devices() -> list[dict]:
    out = []
    for index in range(torch.axon.device_count()):
        p = torch.axon.get_device_properties(index)
        out.append(
            {
                "index": index,
                "name": p.name,
                "platform": p.platform_name,
                "driver_version": p.driver_version,
                "type": p.type,
                "total_memory": p.total_memory,
                "compute_units": p.multi_processor_count,
                "fp64": p.has_fp64,
                "fp16": p.has_fp16,
            }
        )
    return out


def _cache_files(axon_dir: str | None) -> tuple[list[str], list[str]]:
    """(Axon's entries, the driver's files where Axon placed its cache): the paths clear_cache
    removes. Other files in the folder are not the cache's."""
    if not axon_dir or not os.path.isdir(axon_dir):
        return [], []
    entries = [os.path.join(axon_dir, e) for e in os.listdir(axon_dir) if _ENTRY.match(e)]
    # PoCL keeps a folder per kernel (pocl/XX/KEY/...); the loose tempfile_* beside them are its
    # leftovers, removed with the folder but not counted as cached code.
    pocl = os.path.join(axon_dir, "pocl")
    driver = [os.path.join(root, f) for root, _, files in os.walk(pocl) if root != pocl for f in files]
    return entries, driver


def _bytes(paths: list[str]) -> int:
    total = 0
    for path in paths:
        try:
            total += os.path.getsize(path)
        except OSError:
            pass
    return total


def cache() -> dict:
    """Axon's folder: its own entries (program binaries; on PoCL, which keeps the machine code
    itself, only programs built from user source) and PoCL's files inside it."""
    folders = cache_folders()
    axon_dir = folders.get("kernel cache")
    entries, driver = _cache_files(axon_dir)
    return {
        "directory": axon_dir,
        "entries": len(entries),
        "driver_files": len(driver),
        "bytes": _bytes(entries + driver),
        "other_folders": {k: v for k, v in folders.items() if k != "kernel cache"},
    }


def report() -> dict:
    processes = usage.read_usage()
    return {
        "torch": torch.__version__,
        "devices": devices(),
        # None: this platform keeps no usage board (no /dev/shm), so no per-process figures.
        "processes": None if processes is None else [vars(p) for p in processes],
        "kernel_cache": cache(),
    }


def clear_cache() -> tuple[int, int]:
    """Removes Axon's cache entries and PoCL's machine code where Axon placed it; leaves any
    other file alone (AXON_CACHE_DIR may name a folder that holds more). (files, bytes)."""
    axon_dir = cache_folders().get("kernel cache")
    entries, driver = _cache_files(axon_dir)
    removed = _bytes(entries + driver)
    for path in entries:
        os.unlink(path)
    if axon_dir:
        shutil.rmtree(os.path.join(axon_dir, "pocl"), ignore_errors=True)
    return len(entries) + len(driver), removed


def _print(r: dict) -> None:
    print(f"axon-smi   torch {r['torch']}")
    print(f"{'#':>2}  {'device':34} {'platform / driver':36} {'type':4}  {'memory':>10}  {'units':>5}")
    for d in r["devices"]:
        platform = f"{_short(d['platform'])} {d['driver_version']}"[:36]
        print(
            f"{d['index']:>2}  {d['name'][:34]:34} {platform:36} {d['type']:4}  {_size(d['total_memory']):>10}  "
            f"{d['compute_units']:>5}"
        )
    if not r["devices"]:
        print("    no axon device: is an OpenCL driver (e.g. pocl-opencl-icd) installed?")
    print()
    if r["processes"] is None:
        print("processes: not available on this platform (no /dev/shm)")
    else:
        print(f"{'pid':>8}  {'dev':>3}  {'allocated':>10}  {'reserved':>10}  {'peak reserved':>13}  command")
        for p in r["processes"]:
            print(
                f"{p['pid']:>8}  {p['device']:>3}  {_size(p['allocated_bytes']):>10}  "
                f"{_size(p['reserved_bytes']):>10}  {_size(p['reserved_peak']):>13}  {p['command'][:60]}"
            )
        if not r["processes"]:
            print("    no process holds axon memory")
    print()
    c = r["kernel_cache"]
    if c["directory"]:
        print(
            f"kernel cache: {c['directory']} ({c['entries']} Axon entries, {c['driver_files']} driver files, "
            f"{_size(c['bytes'])})"
        )
    else:
        print("kernel cache: off (AXON_CACHE_DIR=off)")
    for label, folder in c["other_folders"].items():
        print(f"{label}: {folder}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="axon-smi", description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--clear-cache", action="store_true", help="remove compiled kernels from the cache")
    p.add_argument(
        "--warm-cache",
        nargs="?",
        const="",
        metavar="WORKLOAD",
        help="build the kernels common workloads use (those whose name contains WORKLOAD, if given)",
    )
    args = p.parse_args(argv)
    if args.clear_cache:
        files, removed = clear_cache()
        print(
            f"cleared the kernel cache: {files} files, {_size(removed)}", file=sys.stderr if args.json else sys.stdout
        )
    if args.warm_cache is not None:
        from ..warmup import main as warm

        status = warm(["--only", args.warm_cache] if args.warm_cache else [])
        if status:
            return status
    r = report()
    try:
        if args.json:
            print(json.dumps(r, indent=2))
        else:
            _print(r)
    except BrokenPipeError:  # axon-smi | head: the reader has what it wanted
        sys.stderr.close()
    return 0
