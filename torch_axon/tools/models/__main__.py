"""``python -m torch_axon.tools.models``: the model sweep, resumable, with a report.

Each architecture's record is appended to a JSON-lines file, ``DATA/models.jsonl``, as soon as it is
done (and a "started" line before it runs), so an interrupted sweep resumes where it stopped. The
sweep runs in a watched child process (supervisor.py): an architecture that kills the process or
hangs it is recorded as such (in the compiled mode, ``upstream`` where CPU Inductor dies or fails
on it too) and the sweep goes on past it. The report goes to ``OUT/models.md``, every record to
``DATA/models.json``.

    python -m torch_axon.tools.models [--family causal-lm,timm] [--only llama,gpt2] [--redo] [--fresh]
                                      [--compile] [--timeout 300] [--out DIR] [--data DIR]

``--compile`` runs the compiled mode instead (compiled.py: each model compiled by torch.compile on
axon against eager on the CPU, CPU Inductor tried where axon fails), with records of its own,
``DATA/models-compile.jsonl`` and ``DATA/models-compile.json``; the report shows both modes'
records, whichever ran this time.

``--out`` defaults to ``./axon-reports``, ``--data`` to OUT/data; ``make models`` passes ``--out
docs --data build/reports``.

Families: transformers' causal-lm, masked-lm, seq2seq, image-classification,
audio-classification, ctc, speech-seq2seq and image-text-to-text auto mappings; torchvision;
timm (the last two from the folder model_zoo.py describes); diffusers (its UNets, diffusion
transformers, autoencoders and ControlNets, diffusers_models.py). The report covers every family on
record, whichever were run this time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import torch

from .. import add_output_args, output_dirs
from . import model_zoo, report
from .families import FAMILIES
from .supervisor import IDLE, crash_if_asked, supervise, write_state


def load(path: str | os.PathLike) -> dict[tuple[str, str], dict]:
    """(family, arch) -> its last record; one left at "started" crashed the process."""
    done: dict[tuple[str, str], dict] = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    done[(r["family"], r["arch"])] = r
    for key, r in done.items():
        if r.get("status") == "started":
            done[key] = {**r, "status": "fails", "error": "the process died running it (crash or out of memory)"}
    return done


def earlier_meta(path: os.PathLike, default: dict) -> dict:
    """The run settings in a JSON report written earlier, else ``default``."""
    try:
        with open(path) as f:
            return json.load(f)["meta"]
    except (OSError, ValueError, KeyError):
        return default


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m torch_axon.tools.models", description=__doc__.splitlines()[0])
    p.add_argument("--family", default=",".join(FAMILIES), help="comma-separated: " + ", ".join(FAMILIES))
    p.add_argument("--only", default="", help="comma-separated architecture names (model_type)")
    p.add_argument("--fresh", action="store_true", help="forget earlier records")
    p.add_argument("--redo", action="store_true", help="run the selected architectures again (with --only)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per architecture")
    p.add_argument("--compile", action="store_true", help="the compiled mode (torch.compile on axon)")
    add_output_args(p, "folder of the markdown report models.md", "folder of the records models.jsonl and models.json")
    # Between the supervisor and its workers (supervisor.py)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--resume-after", default="", help=argparse.SUPPRESS)
    p.add_argument("--judge-crash", default="", help=argparse.SUPPRESS)
    p.add_argument("--answer", default="", help=argparse.SUPPRESS)
    argv = sys.argv[1:] if argv is None else argv
    args = p.parse_args(argv)
    out, data = output_dirs(args)
    mode = "models-compile" if args.compile else "models"
    jsonl, markdown = data / f"{mode}.jsonl", out / "models.md"
    if not args.worker:
        if args.fresh and os.path.exists(jsonl):
            os.remove(jsonl)
        return supervise([a for a in argv if a != "--fresh"], jsonl, args.timeout, args.compile)
    # Before transformers looks for them: its timm-backed architectures (TimmWrapper, Gemma 3n's
    # audio tower, FastVLM) need timm, and timm needs torchvision.
    model_zoo.activate()
    import transformers

    if args.judge_crash:
        family, arch = args.judge_crash.split("/", 1)
        crash_if_asked(family, arch)
        with open(args.answer, "w") as answer:
            json.dump({"cpu_compile": FAMILIES[family].cpu_inductor_outcome(arch, args.timeout)}, answer)
        return 0
    done = load(jsonl)
    only = {a for a in args.only.split(",") if a}
    families = [f for f in args.family.split(",") if f]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        p.error(f"unknown families: {', '.join(unknown)} (known: {', '.join(FAMILIES)})")
    todo = [
        (fam, arch)
        for fam in families
        for arch in FAMILIES[fam].architectures()
        if (not only or arch in only) and ((fam, arch) not in done or (args.redo and only))
    ]
    if args.resume_after:  # after an architecture that killed the worker before this one
        family, arch = args.resume_after.split("/", 1)
        todo = todo[todo.index((family, arch)) + 1 :] if (family, arch) in todo else todo
    total = len(todo)
    start = time.perf_counter()
    with open(jsonl, "a") as log:
        for i, (fam, arch) in enumerate(todo, 1):
            log.write(json.dumps({"family": fam, "arch": arch, "status": "started"}) + "\n")
            log.flush()
            write_state(os.environ.get("AXON_SWEEP_STATE"), fam, arch)
            crash_if_asked(fam, arch)
            source = FAMILIES[fam]
            r = source.run_compiled(fam, arch, args.timeout) if args.compile else source.run(arch, args.timeout)
            log.write(json.dumps(r, default=str) + "\n")
            log.flush()
            write_state(os.environ.get("AXON_SWEEP_STATE"), fam, IDLE)
            done[(fam, arch)] = r
            elapsed = time.perf_counter() - start
            bar = "#" * int(30 * i / total) + "." * (30 - int(30 * i / total))
            detail = r.get("error", "")[:70] if r["status"] != "ok" else ""
            print(f"[{bar}] {i}/{total} {elapsed:6.0f}s {fam} {arch}: {r['status']} {detail}", flush=True)
    # Both modes' records, this one's as they stand
    eager, compiled = (
        (done, load(data / "models-compile.jsonl")) if not args.compile else (load(data / "models.jsonl"), done)
    )
    meta = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        **model_zoo.versions(),
        "device": torch.axon.get_device_name(0),
        # The sweep runs in this process: AXON_FUSED_EAGER decides its mode
        "fused_eager": "on" if torch.axon.is_fused_eager_enabled() else "off",
    }
    if not todo:  # nothing ran: this mode's records are described as the run that made them
        meta = earlier_meta(data / ("models-compile.json" if args.compile else "models.json"), meta)
    # The other mode's run is described as it was (its JSON report's meta), not as this one
    eager_meta, compiled_meta = (earlier_meta(data / "models.json", meta), meta) if args.compile else (meta, None)
    compiled_meta = compiled_meta or earlier_meta(data / "models-compile.json", meta)
    records = report.write(list(eager.values()), list(compiled.values()), markdown, data, eager_meta, compiled_meta)
    print(f"report: {markdown} ({records} records); records: {data}/models.json, models-compile.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
