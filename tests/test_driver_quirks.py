"""Axon's workarounds for driver bugs (runtime/src/quirks.c) on any device: AXON_QUIRKS=all turns
them on, so the kernels' private copies of struct arguments and the refusals of the loop budget
(needed on Mesa's rusticl) are checked against the CPU on PoCL too; AXON_DEVICES selects a
platform by a word of its name; print() works without float64. The quirk and selection cases
run in a fresh process (the quirks and the device list are read once per process)."""

import os
import re
import subprocess
import sys
import textwrap

import pytest
import torch

# Ops whose kernels take a struct argument holding arrays (ew_geom, red_geom, scan_geom,
# dim_geom, sp_geom), each on a strided input so that the arrays are indexed.
QUIRK_OPS = textwrap.dedent(
    """
    import torch
    torch.manual_seed(0)
    x = torch.randn(6, 7, 5).transpose(0, 2)
    ax = x.to("axon")
    checks = {
        "strided add": (lambda t: t + t.flip(0)),
        "sum over a dim": (lambda t: t.sum(1)),
        "cumsum": (lambda t: t.cumsum(2)),
        "sort": (lambda t: t.sort(1).values),
        "gather": (lambda t: t.gather(1, torch.zeros(5, 7, 6, dtype=torch.long, device=t.device))),
        "max_pool2d": (lambda t: torch.nn.functional.max_pool2d(t, 2)),
        "conv2d": (lambda t: torch.nn.functional.conv2d(t[None], torch.ones(2, 5, 3, 3, device=t.device))),
    }
    for name, f in checks.items():
        torch.testing.assert_close(f(ax).cpu(), f(x), rtol=1e-5, atol=1e-4, msg=name)
    try:
        torch.kthvalue(torch.randn(3, 5000, device="axon"), 7, 1)
        print("kthvalue ran")
    except NotImplementedError as e:
        print("kthvalue refused:", e)
    torch.manual_seed(1)
    print("rand", torch.rand(4, 5, device="axon").t().contiguous().cpu().tolist())
    print("ok")
    """
)


def run(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True, timeout=600
    )


def skip_unless_pocl():
    if "Portable Computing Language" not in torch.axon.get_device_properties(0).platform_name:
        pytest.skip("the device is not PoCL: without its workarounds it may crash")


def test_all_quirks_on_give_cpu_results():
    r = run(QUIRK_OPS, AXON_QUIRKS="all")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "ok" in r.stdout.splitlines()
    assert "kthvalue refused:" in r.stdout and "loop budget" in r.stdout, r.stdout


def test_quirks_keep_random_numbers():
    """Philox gives the same numbers with the workarounds as without (random_fill reads its
    geometry through the private copy)."""
    skip_unless_pocl()
    r = run(QUIRK_OPS, AXON_QUIRKS="all")
    assert r.returncode == 0, r.stderr[-3000:]
    plain = run(QUIRK_OPS, AXON_QUIRKS="none")
    assert plain.returncode == 0, plain.stderr[-3000:]
    rand = [line for line in r.stdout.splitlines() if line.startswith("rand ")]
    assert rand == [line for line in plain.stdout.splitlines() if line.startswith("rand ")] and rand


def test_platform_word_selects_the_device():
    """AXON_DEVICES=<a word of the platform's name or version> takes that platform's devices."""
    platform = torch.axon.get_device_properties(0).platform_name
    word = platform.split()[0]
    code = "import torch; print(torch.axon.device_count(), torch.axon.get_device_properties(0).platform_name)"
    r = run(code, AXON_DEVICES=word.upper())
    assert r.returncode == 0, r.stderr[-3000:]
    count, name = r.stdout.strip().split(" ", 1)
    assert int(count) >= 1 and word.lower() in name.lower()


def test_unknown_platform_word_selects_nothing():
    r = run("import torch; torch.axon.device_count(); torch.ones(1, device='axon')", AXON_DEVICES="no-such-platform")
    assert r.returncode != 0
    assert "no OpenCL device matches" in r.stderr, r.stderr[-3000:]


@pytest.mark.skipif("AXON_QUIRKS" in os.environ, reason="AXON_QUIRKS set by the caller")
def test_no_quirks_on_pocl():
    """PoCL has neither bug: kthvalue over long lines runs (no loop-budget refusal)."""
    skip_unless_pocl()
    code = "import torch; x = torch.randn(3000, 3, device='axon'); torch.kthvalue(x, 7, 0); print('ran')"
    r = run(code)
    assert r.returncode == 0 and "ran" in r.stdout, r.stderr[-3000:]


def test_print_matches_cpu():
    """print() formats as on the CPU, on a device without float64 too (torch_axon/printing.py:
    PyTorch's formatter measures values in float64 on their device)."""
    for x in (torch.tensor([1.5, -2.25, 3e-5, float("nan"), float("inf")]), torch.randn(4, 3) * 1e6):
        shown = re.sub(r",\s*device='axon:0'", "", repr(x.to("axon")))
        assert shown.split() == repr(x).split()


def test_wide_indices_for_compiled_kernels():
    """On a device with the quirk widened_int_compare (Mesa's llvmpipe compares an int widened to
    long with a long constant as always false) the kernels torch.compile generates index in 64
    bits; F.pad with a value, which went wrong there, matches the CPU either way."""
    code = textwrap.dedent(
        """
        import torch
        import torch.nn.functional as F
        from torch._inductor.utils import run_and_get_code
        print("quirks", " ".join(torch.axon.get_device_properties(0).quirks))
        x = torch.randn(8, 33)  # 32-bit indices on llvmpipe: 3.1 off (the value written everywhere)
        pad = lambda t: F.pad(t, (1, 2, 0, 1), value=0.5)
        got, (code,) = run_and_get_code(torch.compile(pad), x.to("axon"))
        torch.testing.assert_close(got.cpu(), pad(x))
        print("index", "long" if "long xindex" in code else "int" if "int xindex" in code else "?")
        """
    )
    r = run(code, AXON_QUIRKS="all")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "widened_int_compare" in r.stdout and "index long" in r.stdout, r.stdout
    if (
        "AXON_QUIRKS" not in os.environ
        and "Portable Computing Language" in torch.axon.get_device_properties(0).platform_name
    ):
        r = run(code)
        assert r.returncode == 0, r.stderr[-3000:]
        assert "index int" in r.stdout, r.stdout
