"""Factories, host/device copies, dtype conversions on the device, views, storage ops
(resize_, set_), item() and printing, against PyTorch's CPU results."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import DEVICE, compare, make_cpu, make_pair, to_axon

pytestmark = pytest.mark.usefixtures("no_fallback")

DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
]
ids = str


# ---- factories ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_zeros_ones_full_empty(dtype):
    for shape in [(3, 4), (0,), (), (2, 0, 3), (1000,)]:
        z = torch.zeros(shape, dtype=dtype, device=DEVICE)
        assert z.device.type == DEVICE and z.dtype == dtype and z.shape == shape
        compare(torch.zeros(shape, dtype=dtype), z)
        compare(torch.ones(shape, dtype=dtype), torch.ones(shape, dtype=dtype, device=DEVICE))
        value = True if dtype == torch.bool else (7 if not dtype.is_floating_point else -2.5)
        compare(torch.full(shape, value, dtype=dtype), torch.full(shape, value, dtype=dtype, device=DEVICE))
        e = torch.empty(shape, dtype=dtype, device=DEVICE)
        assert e.shape == shape and e.dtype == dtype and e.device.type == DEVICE
    base = make_cpu((3, 5), dtype)
    ax = to_axon(base)
    compare(torch.zeros_like(base), torch.zeros_like(ax))
    compare(torch.ones_like(base), torch.ones_like(ax))
    compare(torch.full_like(base, 1), torch.full_like(ax, 1))
    assert torch.empty_like(ax).device.type == DEVICE


def test_full_special_values_and_default_dtype():
    for v in (math.inf, -math.inf, math.nan, 1e-40, -0.0):
        compare(torch.full((4,), v), torch.full((4,), v, device=DEVICE))
    compare(torch.full((2, 3), 5), torch.full((2, 3), 5, device=DEVICE))  # int64 from an int
    compare(torch.full((2,), 2**40 + 1), torch.full((2,), 2**40 + 1, device=DEVICE))  # exact in int64
    compare(
        torch.full((2,), 2**40 + 0.5, dtype=torch.float64),
        torch.full((2,), 2**40 + 0.5, dtype=torch.float64, device=DEVICE),
    )


def test_fill_zero_inplace_views():
    cpu, ax = make_pair((6, 8))
    cpu[:, ::3].fill_(4.5)
    ax[:, ::3].fill_(4.5)
    compare(cpu, ax)
    cpu.t()[1:3].zero_()
    ax.t()[1:3].zero_()
    compare(cpu, ax)
    cpu.fill_(torch.tensor(2.0))
    ax.fill_(torch.tensor(2.0))
    compare(cpu, ax)
    ax.fill_(to_axon(torch.tensor(-1.0)))
    compare(torch.full((6, 8), -1.0), ax)


@pytest.mark.parametrize(
    "args",
    [(10,), (0,), (2, 11), (3, 20, 4), (10, 0, -1), (10, -3, -3), (-5, 5, 2), (7, 7), (0, 2**33, 2**31)],
    ids=str,
)
@pytest.mark.parametrize("dtype", [None, torch.int32, torch.float32, torch.float64, torch.int16, torch.uint8], ids=str)
def test_arange_int(args, dtype):
    if dtype is not None and dtype != torch.float64 and args[-1] >= 2**31:
        pytest.skip("range does not fit the dtype")
    if dtype == torch.uint8 and any(a < 0 for a in args[:2]):
        pytest.skip("negative values in uint8")
    if dtype == torch.float32 and args[-1] >= 2**31:
        pytest.skip("not exact in float32")
    compare(torch.arange(*args, dtype=dtype), torch.arange(*args, dtype=dtype, device=DEVICE))


@pytest.mark.parametrize(
    "args", [(0.0, 1.0, 0.1), (1.0, -1.0, -0.25), (0.5, 10), (-3.3, 4.1, 0.7), (5.0, 5.0, 1.0), (0, 1, 0.3)], ids=str
)
@pytest.mark.parametrize("dtype", [None, torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_arange_float(args, dtype):
    expected = torch.arange(*args, dtype=dtype)
    got = torch.arange(*args, dtype=dtype, device=DEVICE)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    # The CPU accumulates start + i * step in double; fp32 rounding of the result may differ by an ulp.
    compare(expected, got, atol=1e-6 if got.dtype in (torch.float32, torch.float64) else None)


def test_arange_out():
    out = torch.empty(0, dtype=torch.int64, device=DEVICE)
    torch.arange(3, 15, 4, out=out)
    compare(torch.arange(3, 15, 4), out)
    out = torch.empty(100, device=DEVICE)
    torch.arange(0, 1, 0.25, out=out)
    compare(torch.arange(0, 1, 0.25), out)


def test_tensor_constructors():
    compare(torch.tensor([[1.5, 2.0], [3.0, -4.0]]), torch.tensor([[1.5, 2.0], [3.0, -4.0]], device=DEVICE))
    compare(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 3], device=DEVICE))
    compare(torch.tensor(True), torch.tensor(True, device=DEVICE))
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    compare(torch.as_tensor(a), torch.as_tensor(a, device=DEVICE))
    compare(torch.from_numpy(a.T.copy()), torch.from_numpy(a).t().to(DEVICE))


# ---- host <-> device --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_roundtrip_every_dtype(dtype):
    cpu = make_cpu((5, 7), dtype, low=-100 if dtype not in (torch.uint8, torch.bool) else None, high=100)
    if dtype.is_floating_point:
        cpu[0, :4] = torch.tensor([math.inf, -math.inf, math.nan, -0.0], dtype=dtype)
    ax = cpu.to(DEVICE)
    assert ax.device.type == DEVICE and ax.dtype == dtype and ax.is_contiguous()
    back = ax.cpu()
    assert back.device.type == "cpu" and back.dtype == dtype
    torch.testing.assert_close(back, cpu, rtol=0, atol=0, equal_nan=True)  # bit-exact values
    if dtype.is_floating_point:
        assert torch.equal(torch.signbit(back), torch.signbit(cpu))  # -0.0 stays -0.0
    compare(cpu, ax.to("axon:0"))
    compare(cpu, cpu.axon())
    compare(cpu, ax.to(DEVICE, copy=True))


def test_unsupported_dtype_is_an_error():
    c = torch.zeros(3, dtype=torch.float8_e5m2fnuz)  # the fnuz float8 variants are not on axon
    with pytest.raises(NotImplementedError, match="float8_e5m2fnuz|Float8_e5m2fnuz"):
        c.to(DEVICE)


@pytest.mark.parametrize("how", ["transposed", "sliced", "expanded", "offset"])
def test_noncontiguous_host_to_device(how):
    base = make_cpu((6, 10))
    src = {
        "transposed": base.t(),
        "sliced": base[1:, ::3],
        "expanded": base[:1].expand(4, 10),
        "offset": base[2:5, 1:4],
    }[how]
    ax = src.to(DEVICE)
    compare(src, ax)
    # Into a non-contiguous device view.
    dst_base = torch.zeros(src.shape[1], src.shape[0], device=DEVICE)
    dst_base.t().copy_(src)
    compare(src, dst_base.t())
    dst2 = torch.zeros(src.shape[0], src.shape[1] * 2, device=DEVICE)
    dst2[:, ::2].copy_(src)
    expected = torch.zeros(src.shape[0], src.shape[1] * 2)
    expected[:, ::2] = src
    compare(expected, dst2)


@pytest.mark.parametrize("how", ["transposed", "sliced", "expanded", "offset"])
def test_noncontiguous_device_to_host(how):
    base_cpu = make_cpu((6, 10))
    base_ax = to_axon(base_cpu)
    view = {
        "transposed": lambda t: t.t(),
        "sliced": lambda t: t[1:, ::3],
        "expanded": lambda t: t[:1].expand(4, 10),
        "offset": lambda t: t[2:5, 1:4],
    }[how]
    src_cpu, src_ax = view(base_cpu), view(base_ax)
    compare(src_cpu, src_ax)
    assert torch.equal(src_ax.cpu(), src_cpu)
    # Into a non-contiguous host view, and with a dtype change on the way.
    dst = torch.zeros(src_cpu.shape[1], src_cpu.shape[0]).t()
    dst.copy_(src_ax)
    assert torch.equal(dst, src_cpu)
    dst64 = torch.zeros(src_cpu.shape, dtype=torch.float64)
    dst64.copy_(src_ax)
    assert torch.equal(dst64, src_cpu.double())
    assert torch.equal(src_ax.to("cpu", torch.float64), src_cpu.double())


def test_host_device_copy_with_dtype_change():
    cpu = make_cpu((4, 5), torch.float64)
    dst = torch.empty(4, 5, device=DEVICE)
    dst.copy_(cpu)  # float64 host -> float32 device
    compare(cpu.float(), dst)
    i = torch.empty(4, 5, dtype=torch.int32, device=DEVICE)
    i.copy_(cpu * 10)
    compare((cpu * 10).to(torch.int32), i)
    compare(cpu.to(torch.float16), cpu.to(DEVICE, torch.float16))


# ---- device-side conversions --------------------------------------------------------------------------

CONVERSIONS = [
    (torch.float32, torch.int32),
    (torch.float32, torch.int64),
    (torch.float32, torch.bool),
    (torch.float32, torch.float16),
    (torch.float32, torch.bfloat16),
    (torch.float32, torch.float64),
    (torch.float64, torch.float32),
    (torch.float64, torch.int64),
    (torch.int64, torch.float16),
    (torch.int64, torch.float32),
    (torch.int64, torch.int32),
    (torch.int64, torch.bool),
    (torch.int32, torch.int8),
    (torch.int32, torch.int16),
    (torch.uint8, torch.int8),
    (torch.int8, torch.uint8),
    (torch.uint8, torch.float32),
    (torch.bool, torch.float32),
    (torch.bool, torch.int64),
    (torch.float16, torch.bfloat16),
    (torch.bfloat16, torch.float16),
    (torch.float16, torch.float32),
    (torch.bfloat16, torch.float64),
    (torch.float16, torch.int32),
]


@pytest.mark.parametrize("src, dst", CONVERSIONS, ids=str)
def test_device_conversion(src, dst):
    if src.is_floating_point and not dst.is_floating_point and dst != torch.bool:
        # In range of the destination and not NaN (out-of-range float -> int is undefined).
        lo, hi = (0, 120) if dst in (torch.uint8, torch.int8) else (-100, 100)
        cpu = make_cpu((6, 7), src, low=lo, high=hi)
    elif src in (torch.int32, torch.int64) and dst in (torch.int8, torch.int16, torch.int32):
        cpu = make_cpu((6, 7), src, low=-(2**20), high=2**20)  # wraps, as on the CPU
    elif src == torch.int8 and dst == torch.uint8:
        cpu = make_cpu((6, 7), src, low=-100, high=100)
    elif src == torch.uint8:
        cpu = make_cpu((6, 7), src, low=0, high=255)
    else:
        cpu = make_cpu((6, 7), src)
        if dst == torch.bool and src.is_floating_point:
            cpu[0, :3] = torch.tensor([0.0, -0.0, math.nan])
    ax = to_axon(cpu)
    out = ax.to(dst)
    assert out.device.type == DEVICE and out.dtype == dst
    compare(cpu.to(dst), out)
    compare(cpu.t().to(dst), ax.t().to(dst))
    dst_t = torch.empty(7, 6, dtype=dst, device=DEVICE)
    dst_t.copy_(ax.t())
    compare(cpu.t().to(dst), dst_t)


def test_float_to_half_rounding():
    x = torch.tensor([1.0 + 2**-11, 1.0 + 3 * 2**-11, 65504.0, 65520.0, 1e-8, 3.0e-5, -2.5e-8], dtype=torch.float32)
    compare(x.half(), to_axon(x).half())
    y = torch.tensor([1.0 + 2**-8, 1.0 + 3 * 2**-8, 3.4e38, math.nan, -1e-40])
    compare(y.bfloat16(), to_axon(y).bfloat16())


def test_large_ints_to_float():
    x = torch.tensor([2**53 + 1, -(2**40) - 3, 2**24 + 1, 123456789], dtype=torch.int64)
    compare(x.double(), to_axon(x).double())
    compare(x.float(), to_axon(x).float())


# ---- copy_ semantics ------------------------------------------------------------------------------------


def test_copy_broadcast():
    src_cpu, src_ax = make_pair((5,))
    dst = torch.zeros(4, 5, device=DEVICE)
    dst.copy_(src_ax)
    compare(src_cpu.expand(4, 5), dst)
    dst2 = torch.zeros(4, 5, device=DEVICE)
    dst2.copy_(src_cpu)  # host source broadcast
    compare(src_cpu.expand(4, 5), dst2)
    col_cpu, col_ax = make_pair((4, 1), torch.int64)
    dst3 = torch.zeros(4, 5, dtype=torch.float16, device=DEVICE)
    dst3.copy_(col_ax)
    compare(col_cpu.expand(4, 5).half(), dst3)
    host = torch.zeros(3, 4, 5)
    host.copy_(src_ax)  # device source broadcast into a host tensor
    assert torch.equal(host, src_cpu.expand(3, 4, 5))
    s = torch.zeros(2, 3, device=DEVICE)
    s.copy_(to_axon(torch.tensor(7.0)))
    compare(torch.full((2, 3), 7.0), s)


def test_copy_overlapping_regions_same_storage():
    cpu, ax = make_pair((10,))
    cpu[:5].copy_(cpu[5:].clone())
    ax[:5].copy_(ax[5:])
    compare(cpu, ax)


def test_copy_overlap_errors_match_cpu():
    """copy_ refuses a destination that writes one element twice, or one partly overlapping the
    source, as it does for CPU tensors."""
    for dev in ("cpu", DEVICE):
        x = torch.arange(4.0, device=dev)
        with pytest.raises(RuntimeError, match="more than one element"):
            x[:1].expand(4).copy_(x)
        y = torch.arange(10.0, device=dev)
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            y[1:].copy_(y[:-1])
        y.copy_(y)  # the same tensor: a no-op
    z = torch.arange(10.0, device=DEVICE)
    z.copy_(z.view(2, 5).view(-1))
    compare(torch.arange(10.0), z)


def test_zero_size_copies():
    for shape in [(0,), (3, 0), (0, 4, 2)]:
        cpu = torch.empty(shape)
        ax = cpu.to(DEVICE)
        assert ax.shape == shape and ax.device.type == DEVICE
        assert ax.cpu().shape == shape
        compare(cpu, ax.clone())
        compare(cpu.to(torch.int32), ax.to(torch.int32))
        ax.copy_(cpu)
        cpu.copy_(ax)


def test_clone_contiguous():
    cpu, ax = make_pair((5, 6), layout="transposed")
    c = ax.clone()
    assert c.data_ptr() != ax.data_ptr()
    assert c.stride() == cpu.clone().stride()  # preserve_format keeps the transposed layout
    compare(cpu.clone(), c)
    cc = ax.contiguous()
    assert cc.is_contiguous()
    compare(cpu.contiguous(), cc)
    assert ax.clone(memory_format=torch.contiguous_format).is_contiguous()
    d = to_axon(make_cpu((3, 4)))
    assert d.contiguous().data_ptr() == d.data_ptr()
    x = d.clone()
    x.add_(1)
    compare(d.cpu() + 1, x)  # a clone does not share memory


# ---- views ---------------------------------------------------------------------------------------------------

VIEWS = {
    "view": lambda t: t.view(4, 15),
    "view_flat": lambda t: t.view(-1),
    "reshape": lambda t: t.reshape(6, 10),
    "reshape_t": lambda t: t.t().reshape(-1),  # needs a copy
    "permute": lambda t: t.view(3, 4, 5).permute(2, 0, 1),
    "transpose": lambda t: t.transpose(0, 1),
    "slice": lambda t: t[2:9:3, 1:],
    "neg_dim_slice": lambda t: t[..., -4:],
    "select": lambda t: t[3],
    "select_col": lambda t: t[:, 7],
    "unsqueeze": lambda t: t.unsqueeze(1).unsqueeze(-1),
    "expand": lambda t: t[:1].expand(5, 15),
    "squeeze": lambda t: t[:, :1].squeeze(),
    "narrow": lambda t: t.narrow(1, 3, 4),
    "flatten": lambda t: t.t().flatten(),
    "unflatten": lambda t: t.unflatten(1, (3, 5)),
    "as_strided": lambda t: t.as_strided((3, 3), (16, 1), 2),
    "diagonal": lambda t: t.diagonal(),
    "chunk": lambda t: t.chunk(3, dim=1)[1],
    "split": lambda t: t.split([2, 2], dim=0)[1],
    "unbind": lambda t: t.unbind(1)[4],
    "mT": lambda t: t.mT,
    "view_dtype": lambda t: t.view(torch.int32),
}


# Results that are copies (or views one cannot write through) rather than aliases of the base.
COPIES = {"reshape_t", "flatten", "expand", "view_dtype"}


@pytest.mark.parametrize("name", list(VIEWS))
def test_views(name):
    fn = VIEWS[name]
    cpu = make_cpu((4, 15))
    ax = to_axon(cpu)
    out = fn(ax)
    expected = fn(cpu)
    assert out.shape == expected.shape and out.stride() == expected.stride()
    assert out.device.type == DEVICE
    compare(expected, out)
    compare(expected.contiguous(), out.contiguous())
    # Writing through a view changes the base the same way.
    if name not in COPIES:
        fn(cpu).mul_(2)
        out.mul_(2)
        compare(cpu, ax)


def test_view_errors_match():
    ax = torch.zeros(4, 6, device=DEVICE)
    with pytest.raises(RuntimeError):
        ax.t().view(-1)
    with pytest.raises(RuntimeError):
        ax.view(5, 5)


# ---- storage: resize_, set_ ------------------------------------------------------------------------------


def test_resize():
    cpu = make_cpu((3, 4))
    ax = to_axon(cpu)
    ax.resize_(2, 6)
    compare(cpu.view(-1)[:12].view(2, 6), ax)
    ax.resize_(5)
    compare(cpu.view(-1)[:5], ax)
    ax.resize_(4, 5)  # grows: the first 12 elements stay
    assert ax.shape == (4, 5) and ax.is_contiguous()
    compare(cpu.view(-1), ax.view(-1)[:12])
    ax.fill_(1.0)
    compare(torch.ones(4, 5), ax)
    ax.resize_(0)
    assert ax.numel() == 0
    e = torch.empty(0, device=DEVICE)
    e.resize_(3, 3).fill_(2)
    compare(torch.full((3, 3), 2.0), e)
    r = torch.empty(2, 3, device=DEVICE)
    r.resize_as_(torch.empty(4, 1))
    assert r.shape == (4, 1)


def test_set():
    y_cpu = make_cpu((3, 4))
    y = to_axon(y_cpu)
    x = torch.empty(0, device=DEVICE)
    x.set_(y)
    assert x.data_ptr() == y.data_ptr() and x.shape == y.shape
    compare(y_cpu, x)
    y.add_(1)
    compare(y_cpu + 1, x)  # shared storage
    z = torch.empty(0, device=DEVICE)
    z.set_(y.untyped_storage(), 2, (2, 3), (1, 2))
    compare((y_cpu + 1).view(-1).as_strided((2, 3), (1, 2), 2), z)
    w = torch.empty(0, device=DEVICE)
    w.set_(y.untyped_storage())
    compare((y_cpu + 1).view(-1), w)
    v = to_axon(make_cpu((5,)))
    v.set_()
    assert v.numel() == 0 and v.device.type == DEVICE
    t = y.t()
    u = torch.empty(0, device=DEVICE)
    u.set_(t)
    assert u.stride() == t.stride()
    compare((y_cpu + 1).t(), u)


# ---- scalars out --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_item(dtype):
    cpu = make_cpu((3,), dtype, low=-50 if dtype not in (torch.uint8, torch.bool) else None, high=50)
    ax = to_axon(cpu)
    for i in range(3):
        assert ax[i].item() == cpu[i].item()
    assert to_axon(torch.tensor(5, dtype=dtype if dtype != torch.bool else torch.int64)).item() == 5
    assert ax.tolist() == cpu.tolist()
    if dtype.is_floating_point:
        assert math.isnan(to_axon(torch.tensor(math.nan, dtype=dtype)).item())
        assert float(ax[0]) == float(cpu[0])
    assert bool(ax[1]) == bool(cpu[1])
    with pytest.raises(RuntimeError):
        ax.item()


def test_item_big_int64():
    v = 2**62 + 12345
    assert torch.tensor([v], device=DEVICE).item() == v
    assert int(torch.tensor(-(2**63), device=DEVICE)) == -(2**63)


# ---- non-blocking copies through pinned memory --------------------------------------------------------------


def test_pinned_non_blocking_copies():
    src = make_cpu((256, 64)).pin_memory()
    assert src.is_pinned()
    ax = src.to(DEVICE, non_blocking=True)
    torch.axon.synchronize()
    compare(src, ax)
    dst = torch.empty(256, 64).pin_memory()
    dst.copy_(ax * 2, non_blocking=True)
    torch.axon.synchronize()
    assert torch.equal(dst, src * 2)
    # A non-blocking copy into unpinned memory is synchronous and also correct.
    plain = torch.empty(256, 64)
    plain.copy_(ax, non_blocking=True)
    assert torch.equal(plain, src)
    back = ax.to("cpu", non_blocking=True)
    torch.axon.synchronize()
    assert torch.equal(back, src)
    # Many small async uploads from one pinned buffer, each reused right after.
    staging = torch.empty(1000).pin_memory()
    outs = []
    for k in range(5):
        staging.fill_(float(k))
        outs.append(staging.to(DEVICE, non_blocking=True))
        torch.axon.synchronize()
    for k, o in enumerate(outs):
        compare(torch.full((1000,), float(k)), o)


def test_pinned_other_dtypes_and_views():
    src = torch.arange(100, dtype=torch.int64).pin_memory()
    ax = src.to(DEVICE, non_blocking=True)
    torch.axon.synchronize()
    compare(src, ax)
    h = src.view(10, 10).t().to(DEVICE, non_blocking=True)  # non-dense: staged, still correct
    torch.axon.synchronize()
    compare(src.view(10, 10).t(), h)


# ---- printing -----------------------------------------------------------------------------------------------


def test_repr(allow_fallback):
    """Printing works (PyTorch's formatter calls ops that still use the CPU fallback)."""
    t = torch.tensor([[1.5, -2.0], [3.25, 4.0]], device=DEVICE)
    r = repr(t)
    assert "device='axon:0'" in r and "3.2500" in r
    i = torch.arange(6, device=DEVICE).view(2, 3)
    assert "device='axon:0'" in repr(i) and "[3, 4, 5]" in repr(i)
    assert "device='axon:0'" in repr(torch.zeros(0, device=DEVICE))
    assert "True" in str(torch.tensor([True, False], device=DEVICE))
    assert "dtype=torch.float16" in repr(torch.ones(2, dtype=torch.float16, device=DEVICE))
    assert str(t.device) == "axon:0"


@pytest.mark.parametrize("value", [1.0, -2.5, float("nan"), 0.0, 0, True, False])
def test_assert_async_as_the_cpu(value):
    # torchtitan's rotary embedding asserts on its positions every step: native, no fallback.
    def outcome(device):
        t = torch.tensor(value, device=device)
        results = []
        for call in (lambda: torch._assert_async(t), lambda: torch._assert_async(t, "positions out of range")):
            try:
                call()
                results.append(None)
            except RuntimeError as e:
                results.append(str(e))
        return results

    assert outcome("axon") == outcome("cpu")
