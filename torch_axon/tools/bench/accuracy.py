"""``python -m torch_axon.tools.bench.accuracy``: the error of Axon's vector-form math against float64.

Each float op with a vector form (kernels/ew_common.cl: eight lanes per vector, PoCL's vector
math library or Axon's own code for sin, cos and fmod) runs on a contiguous float32 tensor on
the device: a dense uniform sample of the op's domain, [-1, 1], [-1e-3, 1e-3], and special
values (signed zeros, infinities, NaN, subnormals, the largest floats, huge arguments) placed
inside whole vectors, not in the element-by-element tail. Errors are in units in the last place
of the float32 result nearest the float64 one; PyTorch's CPU is measured on the same inputs.

Writes ``OUT/vector-math.md`` (``--out``, default ``./axon-reports``; ``make accuracy`` passes ``--out
docs``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

from .. import add_output_args, output_dirs

SPECIAL = [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-45, -1e-45, 1e-40, -1e-40, 1.1754944e-38,
           -1.1754944e-38, 1e-30, -1e-30, 1e-10, -1e-10, 1e-4, -1e-4, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 10.0, -10.0,
           88.7, -88.7, 89.0, -104.0, 8192.0, -8193.0, 1e4, -1e4, 1e10, -1e10, 3.4e38, -3.4e38]  # fmt: skip

POS = (0.0, 10.0)
# name, function, domain of the uniform sample; "own" marks Axon's own vector code
UNARY: list[tuple[str, Callable, float, float, bool]] = [
    ("sin", torch.sin, -10, 10, True), ("cos", torch.cos, -10, 10, True), ("exp", torch.exp, -10, 10, False),
    ("exp2", torch.exp2, -10, 10, False), ("expm1", torch.expm1, -10, 10, False), ("log", torch.log, *POS, False),
    ("log2", torch.log2, *POS, False), ("log10", torch.log10, *POS, False), ("log1p", torch.log1p, -0.99, 10, False),
    ("tan", torch.tan, -1.5, 1.5, False), ("asin", torch.asin, -1, 1, False), ("acos", torch.acos, -1, 1, False),
    ("atan", torch.atan, -10, 10, False), ("sinh", torch.sinh, -10, 10, False), ("cosh", torch.cosh, -10, 10, False),
    ("tanh", torch.tanh, -10, 10, False), ("asinh", torch.asinh, -10, 10, False), ("acosh", torch.acosh, 1, 10, False),
    ("atanh", torch.atanh, -1, 1, False), ("sigmoid", torch.sigmoid, -10, 10, False), ("silu", F.silu, -10, 10, False),
    ("gelu (erf)", F.gelu, -10, 10, True), ("erf", torch.erf, -5, 5, True), ("erfc", torch.erfc, -5, 10, False),
    ("lgamma", torch.lgamma, -10, 10, False), ("softplus", F.softplus, -10, 10, False),
    ("mish", F.mish, -10, 10, False),
    ("logsigmoid", F.logsigmoid, -10, 10, False), ("elu", F.elu, -10, 10, False), ("sqrt", torch.sqrt, *POS, False),
    ("rsqrt", torch.rsqrt, *POS, False), ("pow(x, -0.5)", lambda x: torch.pow(x, -0.5), *POS, True),
    ("pow(x, 2)", lambda x: torch.pow(x, 2), -10, 10, True), ("pow(x, -2)", lambda x: torch.pow(x, -2), -10, 10, True),
]  # fmt: skip
BINARY = [
    ("fmod", torch.fmod, -100, 100, True), ("remainder", torch.remainder, -100, 100, True),
    ("pow", torch.pow, 0, 5, False), ("atan2", torch.atan2, -10, 10, False), ("hypot", torch.hypot, -10, 10, False),
    ("logaddexp", torch.logaddexp, -10, 10, False), ("xlogy", torch.xlogy, 0, 10, False),
]  # fmt: skip


def ulps(got: torch.Tensor, exact: torch.Tensor) -> torch.Tensor:
    """|got - exact| in units of the float32 spacing at the exact value's float32 rounding;
    0 where both are the same NaN, infinity or float."""
    nearest = exact.float()
    spacing = torch.from_numpy(np.spacing(np.abs(nearest.numpy()))).double()
    err = (got.double() - exact).abs() / spacing
    same = (got == nearest) | (got.isnan() & exact.isnan())
    err = torch.where(nearest.isinf() & ~same, torch.full_like(err, float("inf")), err)
    return torch.where(same, torch.zeros_like(err), err)


def _inputs(lo: float, hi: float, n: int, g: torch.Generator) -> torch.Tensor:
    return torch.cat([
        torch.tensor(SPECIAL * 8),
        torch.rand(n, generator=g) * (hi - lo) + lo,
        torch.rand(n, generator=g) * 2 - 1,
        (torch.rand(n, generator=g) * 2 - 1) * 1e-3,
    ])  # fmt: skip


def measure(n: int = 1 << 20, device: str = "axon") -> list[dict]:
    g = torch.Generator().manual_seed(0)
    rows = []
    for spec, arity in [(u, 1) for u in UNARY] + [(b, 2) for b in BINARY]:
        name, fn, lo, hi, own = spec
        args = [_inputs(lo, hi, n, g)]
        if arity == 2:
            args.append(_inputs(lo, hi, n, g).roll(1))
        exact = fn(*[a.double() for a in args])
        got = fn(*[a.to(device) for a in args]).cpu()
        cpu = fn(*args)
        e, ec = ulps(got, exact), ulps(cpu, exact)
        finite = exact.isfinite() & got.isfinite() & cpu.isfinite()
        abs_err = (got.double() - exact).abs()[finite].max().item()
        cpu_abs_err = (cpu.double() - exact).abs()[finite].max().item()
        nan_differs = int((got.isnan() != exact.isnan()).sum())
        cpu_nan_differs = int((cpu.isnan() != exact.isnan()).sum())
        worst = int(e.argmax())
        rows.append({
            "op": name, "own_code": own, "axon_max_ulp": float(e.max()), "cpu_max_ulp": float(ec.max()),
            "worst_at": [float(a[worst]) for a in args], "nan_differs": nan_differs, "cpu_nan_differs": cpu_nan_differs,
            "axon_max_abs": abs_err, "cpu_max_abs": cpu_abs_err,
        })  # fmt: skip
    return rows


def markdown(rows: list[dict], device_name: str) -> str:
    lines = [
        "# Vector math: errors against float64",
        "",
        "<!-- Generated by `python -m torch_axon.tools.bench.accuracy`; do not edit by hand. -->",
        "",
        __doc__.split("\n\n")[1].replace("\n", " ").strip(),
        f"Device: {device_name}.",
        "",
        "Own code: sin and cos reduce by Cody and Waite's three-part pi/2 and evaluate Cephes' minimax"
        " polynomials for |x| <= 8192 (other lanes: the library, lane by lane, since PoCL's float8 sin"
        " and cos are wrong for subnormals); fmod is an exact fused multiply-add remainder for"
        " quotients below 2^23 (others: the library); erf is a rational function (max 4.5e-7"
        " absolute), with erf x = 2x/sqrt(pi) below 1e-6; the pow exponents are PyTorch CPU's own"
        " rewrites (x * x, 1 / sqrt(x) ...). The rest are PoCL's float8 library functions.",
        "",
        "| op | own code | Axon max error (ulp) | CPU max error (ulp) | Axon's worst input "
        "| max absolute error, Axon / CPU | NaN where float64 has none (or the reverse), Axon / CPU |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        at = ", ".join(f"{v:.6g}" for v in r["worst_at"])
        lines.append(
            f"| {r['op']} | {'yes' if r['own_code'] else ''} | {r['axon_max_ulp']:.3g} | {r['cpu_max_ulp']:.3g} "
            f"| {at} | {r['axon_max_abs']:.2g} / {r['cpu_max_abs']:.2g} | {r['nan_differs']} / {r['cpu_nan_differs']} |"
        )
    lines += [
        "",
        "Large figures at inputs near a zero of the result (gelu, logaddexp) or in the subnormal range"
        " (silu, mish at -104) are absolute errors of a few float32 spacings of the operands; the CPU's"
        " column shows the same there.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m torch_axon.tools.bench.accuracy", description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", type=int, default=1 << 20, help="uniform samples per range")
    add_output_args(p, "folder of the page vector-math.md")
    args = p.parse_args(argv)
    markdown_path = output_dirs(args)[0] / "vector-math.md"
    rows = measure(args.samples)
    for r in rows:
        print(f"  {r['op']:14s} axon {r['axon_max_ulp']:10.3g} ulp   cpu {r['cpu_max_ulp']:10.3g} ulp   "
              f"NaN differs {r['nan_differs']} / {r['cpu_nan_differs']}")  # fmt: skip
    with open(markdown_path, "w") as f:
        f.write(markdown(rows, torch.axon.get_device_name(0)))
    print(f"wrote {markdown_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
