"""The kernel cache folder holds machine code the process runs (issue 24): it is created
private, its entries too, and a folder another user owns or others can write to is not used
(a warning, then a private folder of Axon's own)."""

import os
import stat
import subprocess
import sys

import pytest

SCRIPT = """
import torch, torch_axon
x = torch.arange(6.0, device="axon")
# A user program: on PoCL, Axon stores those whole (its families leave machine code to PoCL's
# own cache, pocl/ inside the folder).
lib = torch.axon.compile_shader("__kernel void twice(__global float *x) { x[get_global_id(0)] *= 2; }")
lib.twice(x)
x = x / 2
print(torch.axon.kernel_cache_stats()["directory"], (x * 2).sum().item())
"""


def _run(cache, runtime_dir):
    env = {**os.environ, "AXON_CACHE_DIR": str(cache), "XDG_RUNTIME_DIR": str(runtime_dir)}
    return subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)


def test_new_folder_and_entries_are_private(tmp_path):
    cache = tmp_path / "cache"
    run = _run(cache, tmp_path / "run")
    assert run.returncode == 0, run.stderr
    folder, total = run.stdout.split()
    assert folder == str(cache) and float(total) == 30.0
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    entries = [p for p in cache.iterdir() if p.is_file()]
    assert entries, "nothing was cached"
    for p in entries:
        assert stat.S_IMODE(p.stat().st_mode) & 0o077 == 0, p
    # PoCL's files inside are out of others' reach: the folders above them are private.
    assert stat.S_IMODE((cache / "pocl").stat().st_mode) == 0o700


def test_folder_writable_by_others_is_not_used(tmp_path):
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(0o777)
    run = _run(cache, tmp_path / "run")
    assert run.returncode == 0, run.stderr
    assert "others can write to it" in run.stderr
    folder, total = run.stdout.split()
    assert folder == str(tmp_path / "run" / "axon-cache") and float(total) == 30.0
    assert not any(cache.iterdir())  # nothing written where others could plant code


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder another user owns needs root")
def test_folder_of_another_user_is_not_used(tmp_path):
    cache = tmp_path / "theirs"
    cache.mkdir(mode=0o700)
    os.chown(cache, 65534, 65534)
    run = _run(cache, tmp_path / "run")
    assert run.returncode == 0, run.stderr
    assert "belongs to another user" in run.stderr
    assert run.stdout.split()[0] == str(tmp_path / "run" / "axon-cache")
