"""uint16, uint32 and uint64 on axon, over the ops PyTorch's CPU supports for them (few: storage,
copies and casts, fill, mul, eq/ne, bitwise ops, sum, cumsum, cat, index, sort, unique)."""

from __future__ import annotations

import pytest
import torch
from conftest import DEVICE, compare

pytestmark = pytest.mark.usefixtures("no_fallback")

UDTYPES = [torch.uint16, torch.uint32, torch.uint64]
TOP = {torch.uint16: 2**16 - 1, torch.uint32: 2**32 - 1, torch.uint64: 2**63 - 1}


def values(dtype, n=24, seed=0):
    """Values across the type's range, the largest included (above int32's and int16's)."""
    g = torch.Generator().manual_seed(seed)
    v = torch.randint(0, 1000, (n,), generator=g, dtype=torch.int64)
    v[0], v[1] = TOP[dtype], TOP[dtype] - 7
    return v.to(dtype)


OPS = {
    "copy_strided": lambda t: t.view(4, 6).t().contiguous(),
    "to_int64": lambda t: t.to(torch.int64),
    "to_float64": lambda t: t.to(torch.float64),
    "from_int64": lambda t: t.to(torch.int64).to(t.dtype),
    "fill": lambda t: t.clone().fill_(12345),
    "mul": lambda t: t * 3,  # wraps modulo 2^bits as on the CPU
    "eq": lambda t: t == 7,
    "ne": lambda t: t != t[0],
    "bitwise_and": lambda t: t & 0xF0F0,
    "bitwise_or": lambda t: t | 5,
    "bitwise_xor": lambda t: t ^ t[1],
    "sum": lambda t: t.view(4, 6).sum(1),
    "cumsum": lambda t: t.cumsum(0),
    "cat": lambda t: torch.cat([t, t[:3]]),
    "index": lambda t: t[torch.tensor([5, 0, 1], device=t.device)],
    "sort": lambda t: t.sort().values,
    "unique": lambda t: t.unique(),
}


@pytest.mark.parametrize("dtype", UDTYPES, ids=str)
@pytest.mark.parametrize("name", list(OPS))
def test_unsigned_ops(name, dtype):
    cpu = values(dtype)
    compare(OPS[name](cpu), OPS[name](cpu.to(DEVICE)))


SIGNED = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}


@pytest.mark.parametrize("dtype", UDTYPES, ids=str)
def test_round_trip_keeps_every_bit(dtype):
    cpu = values(dtype)
    assert torch.equal(cpu.to(DEVICE).cpu().view(SIGNED[dtype]), cpu.view(SIGNED[dtype]))
