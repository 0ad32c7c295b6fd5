"""Axon's pointwise and dispatch figures for one build of torch_axon, to compare two builds side
by side (the benchmark measures Axon against the CPU, not against another Axon): every float32 /
bfloat16 contiguous case of the benchmark at 1e6 elements and its strided / broadcast samples,
outputs preallocated (as the benchmark times them), and the 1-element add. Writes ns per element
(us for the add) as JSON.

    PYTHONPATH=/path/to/other/checkout python scripts/compare_builds.py other.json
    python scripts/compare_builds.py this.json

(the other checkout built in place: make -C runtime && python setup.py build_ext --inplace; a
checkout from before torch_axon/tools/ needs tools/bench/pointwise.py and timing.py copied in).
Run each build twice or more, alternating, on a quiet machine, and compare the minimum per case.
"""

import json
import sys

import torch

import torch_axon
from torch_axon.tools.bench import pointwise, timing


def main(path: str) -> None:
    print("torch_axon from", torch_axon.__file__, file=sys.stderr)
    results = {}
    for case in pointwise.cases(quick=False):
        if case.n != 1_000_000:
            continue
        fn = case.make("axon", preallocated=case.preallocated)
        t = timing.compare({"axon": (fn, "axon")}, repeats=3, sample_s=0.1)["axon"]
        results[case.label] = t.median / case.n * 1e9
    a, b = torch.rand(1, device="axon"), torch.rand(1, device="axon")
    t = timing.compare({"axon": (lambda: a + b, "axon")}, repeats=7, sample_s=0.2)["axon"]
    results["dispatch: 1-element add (us)"] = t.median * 1e6
    with open(path, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
