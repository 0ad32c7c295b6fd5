"""Reads the usage board: the memory figures each running Axon process publishes per device.

The layout is ``axon_usage_board`` in ``runtime/src/usage_board.c`` (native byte order); keep the
two in step. A file whose process has ended (a crash leaves one behind) is removed here.
"""

from __future__ import annotations

import dataclasses
import os
import struct

MAGIC = 0x42555841  # "AXUB"
VERSION = 1
_HEADER = struct.Struct("=IIiI128s")  # magic, version, pid, slots, command
_SLOT = struct.Struct("=64sQQQQ")  # device name, allocated, reserved, reserved peak, limit


@dataclasses.dataclass
class DeviceUsage:
    pid: int
    command: str
    device: int
    device_name: str
    allocated_bytes: int
    reserved_bytes: int
    reserved_peak: int


def board_folder() -> str:
    return f"/dev/shm/axon-usage-{os.getuid()}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def _text(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace").strip()


def parse_board(data: bytes) -> list[DeviceUsage]:
    """The device slots in use of one board file; [] for a file that is not (yet) a board."""
    if len(data) < _HEADER.size:
        return []
    magic, version, pid, slots, command = _HEADER.unpack_from(data)
    if magic != MAGIC or version != VERSION:
        return []
    out = []
    for index in range(slots):
        offset = _HEADER.size + index * _SLOT.size
        if offset + _SLOT.size > len(data):
            break
        name, allocated, reserved, peak, _limit = _SLOT.unpack_from(data, offset)
        if name[:1] != b"\0":
            out.append(DeviceUsage(pid, _text(command), index, _text(name), allocated, reserved, peak))
    return out


def read_usage(folder: str | None = None) -> list[DeviceUsage] | None:
    """Every live process's figures, per device it has used; None where the platform keeps no
    board (no /dev/shm)."""
    folder = folder or board_folder()
    if not os.path.isdir(folder):
        return None if not os.path.isdir("/dev/shm") else []
    out = []
    for entry in sorted(os.listdir(folder)):
        if not entry.isdigit():
            continue
        path = os.path.join(folder, entry)
        if not _alive(int(entry)):
            try:
                os.unlink(path)  # a crashed process's board
            except OSError:
                pass
            continue
        try:
            with open(path, "rb") as f:
                out.extend(parse_board(f.read()))
        except OSError:
            continue  # the process ended while we looked
    return out
