"""axon-smi (python -m torch_axon): devices, memory per process from the usage board, the cache."""

import json
import os
import pathlib
import struct
import subprocess
import sys

import pytest
import torch

from torch_axon.smi import usage

ROOT = pathlib.Path(__file__).resolve().parent.parent


def smi(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "torch_axon", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )


def test_devices_and_cache_as_json():
    r = json.loads(smi("--json").stdout)
    assert [d["name"] for d in r["devices"]] == [
        torch.axon.get_device_name(i) for i in range(torch.axon.device_count())
    ]
    assert r["devices"][0]["total_memory"] == torch.axon.get_device_properties(0).total_memory
    assert r["kernel_cache"]["directory"] == torch.axon.kernel_cache_stats()["directory"]
    assert r["torch"] == torch.__version__


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm: the platform keeps no usage board")
def test_this_process_memory_is_listed():
    held = torch.empty(16 << 20, dtype=torch.float32, device="axon")  # 64 MiB
    r = json.loads(smi("--json").stdout)
    mine = [p for p in r["processes"] if p["pid"] == os.getpid() and p["device"] == 0]
    assert len(mine) == 1, r["processes"]
    assert mine[0]["allocated_bytes"] == torch.axon.memory_allocated(0) >= held.numel() * 4
    assert mine[0]["reserved_bytes"] == torch.axon.memory_reserved(0)
    assert mine[0]["device_name"] == torch.axon.get_device_name(0)
    assert "pytest" in mine[0]["command"] or "python" in mine[0]["command"]
    del held
    torch.axon.empty_cache()
    r = json.loads(smi("--json").stdout)
    mine = [p for p in r["processes"] if p["pid"] == os.getpid() and p["device"] == 0]
    assert mine[0]["reserved_bytes"] == torch.axon.memory_reserved(0)


def test_a_dead_process_board_is_removed(tmp_path):
    # A board as a crashed process leaves it: a pid no process has, one device slot in use.
    dead = 2**22 + 12345
    while True:
        try:
            os.kill(dead, 0)
            dead += 1
        except ProcessLookupError:
            break
        except PermissionError:
            dead += 1
    header = struct.pack("=IIiI128s", usage.MAGIC, usage.VERSION, dead, 1, b"python crashed.py")
    slot = struct.pack("=64sQQQQ", b"some device", 1 << 20, 2 << 20, 2 << 20, 1 << 30)
    (tmp_path / str(dead)).write_bytes(header + slot)
    live = struct.pack("=IIiI128s", usage.MAGIC, usage.VERSION, os.getpid(), 1, b"python live.py")
    (tmp_path / str(os.getpid())).write_bytes(live + slot)
    found = usage.read_usage(str(tmp_path))
    assert [(p.pid, p.device, p.allocated_bytes, p.reserved_bytes) for p in found] == [
        (os.getpid(), 0, 1 << 20, 2 << 20)
    ]
    assert not (tmp_path / str(dead)).exists()


def test_clear_and_warm_the_cache(tmp_path):
    cache = tmp_path / "cache"
    env = {"AXON_CACHE_DIR": str(cache), "POCL_CACHE_DIR": str(cache / "pocl")}
    (tmp_path / "cache").mkdir()
    (cache / "notes.txt").write_text("not Axon's")  # a foreign file in the folder is left alone
    smi("--warm-cache", "ones", env=env)
    built = json.loads(smi("--json", env=env).stdout)["kernel_cache"]
    assert built["directory"] == str(cache) and built["entries"] + built["driver_files"] > 0 and built["bytes"] > 0
    out = smi("--clear-cache", "--json", env=env)
    cleared = json.loads(out.stdout)["kernel_cache"]
    assert cleared["entries"] == cleared["driver_files"] == cleared["bytes"] == 0
    assert "cleared the kernel cache" in out.stderr
    assert (cache / "notes.txt").read_text() == "not Axon's"
    # PoCL's compiled kernels are gone (it may leave a fresh tempfile_* of the process behind).
    assert not [p for p in (cache / "pocl").glob("*") if p.is_dir()]
