"""float8_e4m3fn and float8_e5m2 on axon: storage, casts that round as the CPU does (every
bit pattern and the awkward values around each rounding boundary), the ops PyTorch's CPU has
for them, and torch._scaled_mm against the CPU's."""

import copy
import warnings

import pytest
import torch

FLOAT8 = [torch.float8_e4m3fn, torch.float8_e5m2]


def every_float8_value(dtype):
    return torch.arange(256, dtype=torch.uint8).view(dtype)


def same_bits(a, b):
    """Float8 tensors equal bit for bit, except NaNs (any NaN pattern matches any other)."""
    a, b = a.cpu(), b.cpu()
    nan_a, nan_b = a.float().isnan(), b.float().isnan()
    assert torch.equal(nan_a, nan_b)
    assert torch.equal(a.view(torch.uint8)[~nan_a], b.view(torch.uint8)[~nan_b])


@pytest.mark.parametrize("dtype", FLOAT8)
def test_decode_every_bit_pattern(dtype):
    cpu = every_float8_value(dtype)
    axon = cpu.to("axon")
    assert axon.dtype == dtype
    for wide in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        torch.testing.assert_close(axon.to(wide).cpu(), cpu.to(wide), equal_nan=True, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", FLOAT8)
def test_encode_rounds_as_the_cpu(dtype):
    # Each representable value, the midpoints between neighbours (ties to even) and points just
    # off them, overflow past the largest finite value, infinities, NaN and float32 subnormals.
    exact = every_float8_value(dtype).float()
    exact = exact[exact.isfinite()].unique()
    mid = (exact[1:] + exact[:-1]) / 2
    off = torch.cat([mid * (1 + 2**-20), mid * (1 - 2**-20)])
    big = torch.tensor([464.0, 470.0, 479.9, 480.0, 1e4, 57344.0, 61439.0, 61440.0, 65536.0, 1e9])
    special = torch.tensor([float("inf"), float("-inf"), float("nan"), 1e-45, -1e-40, 0.0, -0.0])
    values = torch.cat([exact, mid, off, big, -big, special, torch.randn(10000) * 100])
    for source in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        cpu = values.to(source)
        same_bits(cpu.to("axon").to(dtype), cpu.to(dtype))


@pytest.mark.parametrize("dtype", FLOAT8)
def test_integer_and_complex_sources_cast(dtype):
    ints = torch.arange(-600, 600, 7, dtype=torch.int32)
    same_bits(ints.to("axon").to(dtype), ints.to(dtype))
    z = torch.complex(torch.randn(50), torch.randn(50))
    with warnings.catch_warnings():  # "casting complex values to real discards the imaginary part"
        warnings.simplefilter("ignore", UserWarning)
        same_bits(z.to("axon").to(dtype), z.to(dtype))


@pytest.mark.parametrize("dtype", FLOAT8)
def test_ops_the_cpu_has(dtype):
    x = torch.randn(6, 5).to(dtype)
    y = torch.randn(6, 5).to(dtype)
    ax, ay = x.to("axon"), y.to("axon")
    pairs = [
        (x * y, ax * ay),
        (x.abs(), ax.abs()),
        (x.t().contiguous(), ax.t().contiguous()),
        (torch.cat([x, y]), torch.cat([ax, ay])),
        (torch.where(x.float() > 0, x, y), torch.where(ax.float() > 0, ax, ay)),
        (x.flip(0), ax.flip(0)),
        (x[torch.tensor([0, 3])], ax[torch.tensor([0, 3], device="axon")]),
        (x.index_select(1, torch.tensor([4, 0])), ax.index_select(1, torch.tensor([4, 0], device="axon"))),
        (torch.full((3,), 3.3, dtype=dtype), torch.full((3,), 3.3, dtype=dtype, device="axon")),
        (x.clone().fill_(0.7), ax.clone().fill_(0.7)),
        (x @ y.t(), ax @ ay.t()),
    ]
    for cpu, axon in pairs:
        assert axon.device.type == "axon" and axon.dtype == cpu.dtype
        same_bits(axon, cpu)
    assert torch.equal((ax == ay).cpu(), x == y)
    assert torch.equal(ax.isnan().cpu(), x.isnan())


def scaled_mm_case(a_dtype, b_dtype, m=16, k=32, n=24, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = (torch.randn(m, k, generator=g) * 4).to(a_dtype)
    # PyTorch wants the second operand column-major (CUDA requires it).
    b = (torch.randn(n, k, generator=g) * 4).to(b_dtype).t()
    return a, b, g


@pytest.mark.parametrize("out_dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("rowwise", [False, True], ids=["tensorwise", "rowwise"])
def test_scaled_mm_matches_cpu(out_dtype, rowwise):
    a, b, g = scaled_mm_case(torch.float8_e4m3fn, torch.float8_e4m3fn)
    if rowwise:
        sa, sb = torch.rand(a.shape[0], 1, generator=g) + 0.5, torch.rand(1, b.shape[1], generator=g) + 0.5
    else:
        sa, sb = torch.tensor(0.75), torch.tensor(1.5)
    bias = torch.randn(b.shape[1], generator=g).to(out_dtype)
    cpu = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, bias=bias, out_dtype=out_dtype)
    ax = torch._scaled_mm(
        *(t.to("axon") for t in (a, b)),
        scale_a=sa.to("axon"),
        scale_b=sb.to("axon"),
        bias=bias.to("axon"),
        out_dtype=out_dtype,
    )
    assert ax.dtype == out_dtype and ax.device.type == "axon"
    tol = 1e-5 if out_dtype == torch.float32 else 1e-2
    torch.testing.assert_close(ax.cpu(), cpu, rtol=tol, atol=tol)


def test_scaled_mm_float8_output_and_mixed_formats():
    a, b, _ = scaled_mm_case(torch.float8_e5m2, torch.float8_e4m3fn)
    one, half = torch.tensor(1.0), torch.tensor(0.5)
    cpu = torch._scaled_mm(a, b, scale_a=one, scale_b=one, scale_result=half, out_dtype=torch.float8_e4m3fn)
    ax = torch._scaled_mm(
        a.to("axon"),
        b.to("axon"),
        scale_a=one.to("axon"),
        scale_b=one.to("axon"),
        scale_result=half.to("axon"),
        out_dtype=torch.float8_e4m3fn,
    )
    assert ax.dtype == torch.float8_e4m3fn
    # One float8 rounding of the same float32 sums: at most one step apart.
    torch.testing.assert_close(ax.cpu().float(), cpu.float(), rtol=0.13, atol=0, equal_nan=True)


def test_scaled_mm_bad_scale_names_it():
    a, b, _ = scaled_mm_case(torch.float8_e4m3fn, torch.float8_e4m3fn)
    a, b = a.to("axon"), b.to("axon")
    with pytest.raises(RuntimeError, match="scale_a must hold one value or have shape"):
        torch._scaled_mm(a, b, scale_a=torch.ones(3, device="axon"), scale_b=torch.tensor(1.0, device="axon"))


@pytest.mark.parametrize("recipe", ["tensorwise", "rowwise"])
def test_torchao_float8_training_step_matches_cpu(recipe):
    """torchao's float8 training path (Float8Linear: amax scaling, float8 casts, _scaled_mm in
    forward and backward) on axon, natively, against the same step on the CPU."""
    float8 = pytest.importorskip("torchao.float8", reason="torchao is not installed (make deps installs it)")
    torch.manual_seed(0)
    base = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32))
    x, target = torch.randn(16, 64), torch.randn(16, 32)
    results = []
    torch.axon.fallback_ops(reset=True)
    for device in ("cpu", "axon"):
        model = copy.deepcopy(base).to(device)
        float8.convert_to_float8_training(model, config=float8.Float8LinearConfig.from_recipe_name(recipe))
        out = model(x.to(device))
        ((out - target.to(device)) ** 2).mean().backward()
        results.append([out.detach().cpu(), *(p.grad.cpu() for p in model.parameters())])
    for cpu, axon in zip(*results, strict=True):
        torch.testing.assert_close(axon, cpu, rtol=1e-4, atol=1e-5)
    assert torch.axon.fallback_ops() == {}
