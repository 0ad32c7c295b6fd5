"""The kernel cache folder holds machine code the process runs (issue 24): it is created
private, its entries too, and a folder another user owns or others can write to is not used
(a warning, then a private folder of Axon's own)."""

import os
import shutil
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


def _env(cache, runtime_dir) -> dict:
    """The folder under test, with PoCL's cache inside it where Axon places it (CI points
    POCL_CACHE_DIR elsewhere for the rest of the suite)."""
    env = {k: v for k, v in os.environ.items() if k != "POCL_CACHE_DIR"}
    return {**env, "AXON_CACHE_DIR": str(cache), "XDG_RUNTIME_DIR": str(runtime_dir)}


def _run(cache, runtime_dir):
    env = _env(cache, runtime_dir)
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


def _damage(path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 3])
    elif how == "zero-length":
        path.write_bytes(b"")
    else:  # garbled: same length, other bytes in the middle
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes(b ^ 0x5A for b in data[middle : middle + 64]) + data[middle + 64 :])


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory):
    """A folder a first process filled: Axon's user program, PoCL's program.bc and kernel .so files."""
    base = tmp_path_factory.mktemp("warm")
    run = _run(base / "cache", base / "run")
    assert run.returncode == 0, run.stderr
    return base / "cache"


@pytest.mark.parametrize("how", ["truncated", "zero-length", "garbled"])
def test_damaged_entries_are_rebuilt(tmp_path, warm_cache, how):
    """Every kind of entry (Axon's programs, PoCL's program.bc and kernel .so files) damaged one
    way: the next process is correct and rebuilds them (PoCL itself aborts on a damaged entry
    of its own: Axon removes those first), and the process after it finds them whole."""
    cache = tmp_path / "cache"
    shutil.copytree(warm_cache, cache)
    kinds = {
        "axon program": [p for p in cache.iterdir() if p.is_file() and p.name != "pocl.manifest"],
        "pocl program.bc": list((cache / "pocl").rglob("program.bc")),
        "pocl kernel .so": list((cache / "pocl").rglob("*.so")),
    }
    assert all(kinds.values()), {k: len(v) for k, v in kinds.items()}
    if how == "garbled":  # same size: only Axon's checksummed entries can tell (PoCL's are checked by size)
        kinds = {"axon program": kinds["axon program"]}
    for paths in kinds.values():
        for p in paths:
            _damage(p, how)
    second = _run(cache, tmp_path / "run")
    assert second.returncode == 0, second.stderr[-3000:]
    assert second.stdout.split()[1] == "30.0"
    third = _run(cache, tmp_path / "run")
    assert third.returncode == 0 and "damaged" not in third.stderr, third.stderr[-3000:]


def test_two_processes_starting_cold_on_one_folder(tmp_path):
    cache = tmp_path / "cache"
    env = _env(cache, tmp_path / "run")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        assert out.split()[1] == "30.0"
    again = _run(cache, tmp_path / "run")
    assert again.returncode == 0 and "damaged" not in again.stderr, again.stderr[-3000:]


def test_read_only_folder(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes through a read-only mode")
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o500)
    run = _run(cache, tmp_path / "run")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[1] == "30.0"
