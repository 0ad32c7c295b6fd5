"""The bugs the differential fuzzer found (issue 24, docs/reliability.md), each checked against
the CPU in the shape the fuzzer reported it."""

import pytest
import torch

DEV = "axon"


def test_tan_huge_lane_leaves_other_lanes_alone():
    # One lane of an 8-lane vector at 3.4e38 used to change tan(0.5) in another lane.
    x = torch.tensor([0.5, 1.0, 3.4e38, 2.0, -0.3, 1e-40, float("inf"), 0.7] * 4)
    for dtype in (torch.float32, torch.bfloat16):
        expect = torch.tan(x.to(dtype))
        got = torch.tan(x.to(dtype).to(DEV)).cpu()
        torch.testing.assert_close(got, expect, equal_nan=True)


@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: torch.where(a > 0, a, b),
        lambda a, b: torch.where(torch.tensor(True), a, torch.tensor(1.0)),
        lambda a, b: torch.where(a > 0, torch.tensor(2.0), torch.tensor(1.0)),
        lambda a, b: torch.isnan(a),
        lambda a, b: torch.floor_divide(a, b),
        lambda a, b: torch.rsub(a, b),
        lambda a, b: torch.remainder(2.0, a),
    ],
    ids=["where", "where_cpu_condition", "where_cpu_values", "isnan", "floor_divide", "rsub", "remainder_scalar"],
)
def test_functional_results_follow_input_layout(fn):
    a, b = torch.randn(4, 5).t(), torch.randn(4, 5).t()
    expect = fn(a, b)
    got = fn(a.to(DEV), b.to(DEV))
    assert got.stride() == expect.stride()
    assert got.device.type == DEV
    torch.testing.assert_close(got.cpu(), expect)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_reduced_precision_std_past_variance_range(dtype):
    # The variance (about 7.3e4) passes float16's range; the std (270) does not.
    x = torch.tensor([[-300.0, 300.0, 200.0, -250.0] * 8, [1.0, 2.0, 3.0, 4.0] * 8], dtype=dtype)
    torch.testing.assert_close(torch.std(x.to(DEV), 1).cpu(), torch.std(x, 1))
    torch.testing.assert_close(torch.std_mean(x.to(DEV), 1)[0].cpu(), torch.std_mean(x, 1)[0])


def test_hardswish_backward_boundaries():
    x = torch.tensor([-3.0001, -3.0, -2.9999, 0.0, 2.9999, 3.0, 3.0001])
    g = torch.full_like(x, 2.0)
    expect = torch.ops.aten.hardswish_backward(g, x)
    torch.testing.assert_close(torch.ops.aten.hardswish_backward(g.to(DEV), x.to(DEV)).cpu(), expect)


@pytest.mark.parametrize("eps", [None, -1.0, 0.0, 0.1])
def test_logit_backward_at_signed_zero_and_one(eps):
    x = torch.tensor([-0.0, 0.0, 1.0, 0.5])
    g = torch.tensor([1.0, -1.0, 2.0, 1.0])
    expect = torch.ops.aten.logit_backward(g, x, eps)
    torch.testing.assert_close(torch.ops.aten.logit_backward(g.to(DEV), x.to(DEV), eps).cpu(), expect, equal_nan=True)


def test_compiled_graph_with_cpu_scalar_operands():
    x = torch.randn(8)
    s, i = torch.tensor(0.3), torch.tensor(3)

    def lerp(x, s):  # crashed: a CPU kernel reading axon memory
        return torch.lerp(x, x * 2, s) + s

    def mixed(x, s, i):  # raised: the CPU scalar passed to the kernel as a buffer
        return x * s.to(torch.float16) + i + x.sum() * s

    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(lerp)(x.to(DEV), s).cpu(), lerp(x, s))
    torch.testing.assert_close(torch.compile(mixed)(x.to(DEV), s, i).cpu(), mixed(x, s, i))


@pytest.mark.parametrize("dynamic", [False, True])
def test_compiled_graph_with_cpu_scalar_computed_on_cpu(dynamic):
    # xlogy's log of the CPU scalar runs in a CPU kernel first; its 0-dim result reached the axon
    # kernel as a buffer ("argument 2 ... is on cpu") until the scheduler listed it as a scalar.
    x = torch.tensor([[11.625, -49.25, 0.0]], dtype=torch.bfloat16)
    y = torch.tensor(2.5, dtype=torch.float64)

    def xlogy(x, y):
        return torch.xlogy(x, y), torch.xlogy(x.float(), y).ceil()

    torch._dynamo.reset()
    got = torch.compile(xlogy, dynamic=dynamic)(x.to(DEV), y)
    for a, c in zip(got, xlogy(x, y), strict=True):
        torch.testing.assert_close(a.cpu(), c)


def test_compiled_dynamic_var_backward():
    # 2 / (n - 1) with a dynamic n was computed in a long: the gradient was 0 for n > 3.
    def f(x):
        return torch.var(x, 0).sum() + torch.std(x, 1).sum()

    torch._dynamo.reset()
    compiled = torch.compile(f, dynamic=True)
    for n in (5, 7):
        x = torch.randn(n, 3, requires_grad=True)
        xa = x.detach().to(DEV).requires_grad_()
        f(x).backward()
        compiled(xa).backward()
        torch.testing.assert_close(xa.grad.cpu(), x.grad)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_compiled_atomic_add_of_half_types(dtype):
    # cummax's backward scatters with accumulation: compiled, it raised "atomic add of
    # torch.float16 in compiled kernels" (no 16-bit compare-and-swap; now a 32-bit one).
    torch._dynamo.reset()
    x = (torch.randn(7, 33, generator=torch.Generator().manual_seed(0)) * 3).round().to(dtype)  # ties
    w = torch.randn(7, 33, generator=torch.Generator().manual_seed(1)).to(dtype)

    def cummax(x):
        return torch.cummax(x, 0).values

    xa, xc = x.to(DEV).requires_grad_(), x.clone().requires_grad_()
    (got,) = torch.autograd.grad(torch.compile(cummax)(xa), xa, w.to(DEV))
    (want,) = torch.autograd.grad(cummax(xc), xc, w)
    torch.testing.assert_close(got.cpu(), want, atol=1e-2, rtol=1e-2)
    # Forty updates of each of five elements, racing: every update lands (a lost one is ~1 off).
    index, src = torch.arange(200) % 5, torch.ones(200, dtype=dtype)

    def accumulate(t, i, s):
        return t.index_put((i,), s, accumulate=True)

    got = torch.compile(accumulate)(torch.zeros(5, dtype=dtype, device=DEV), index.to(DEV), src.to(DEV))
    assert got.cpu().tolist() == [40.0] * 5


@pytest.mark.parametrize("dynamic", [False, True])
def test_compiled_arg_reductions_of_strided_tensors_give_logical_indices(dynamic):
    # Inductor loops over a strided tensor in memory order: argmax answered the element's loop
    # position (1) instead of its row-major index (2) until axon took the lowering's index.
    base = torch.randn(9 * 20, generator=torch.Generator().manual_seed(2))

    def args(x):
        return (
            torch.argmax(x.as_strided((2, 1, 2), (1, 112, 7))),
            torch.argmin(x.as_strided((2, 2), (1, 7))),
            torch.argmax(x.view(9, 20).t()),
            torch.argmin(x.view(3, 3, 20).permute(2, 0, 1), dim=0),
            torch.argmax(x.view(3, 3, 20).permute(1, 2, 0).flatten(1, 2), dim=1, keepdim=True),
        )

    torch._dynamo.reset()
    got = torch.compile(args, dynamic=dynamic)(base.to(DEV))
    for a, c in zip(got, args(base), strict=True):
        assert torch.equal(a.cpu(), c)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8])
def test_integer_division_family_at_the_extremes(dtype):
    # INT_MIN % -1 overflows C's division: PoCL answered -1 for fmod and remainder, the CPU 0.
    info = torch.iinfo(dtype)
    vals = sorted({info.min, info.min + 1, -7, -1, 1, 7, info.max} - ({-7, -1, 0} if dtype == torch.uint8 else set()))
    vals = torch.tensor(vals, dtype=dtype)
    a, b = vals.repeat_interleave(len(vals)), vals.repeat(len(vals))  # every pair; no zero divisor
    fns = [
        torch.fmod,
        torch.remainder,
        torch.floor_divide,
        lambda x, y: torch.div(x, y, rounding_mode="trunc"),
        lambda x, y: torch.fmod(x, -1) + torch.remainder(x, -1) if dtype != torch.uint8 else x % y,
    ]
    torch._dynamo.reset()
    for fn in fns:
        expect = fn(a, b)
        assert torch.equal(fn(a.to(DEV), b.to(DEV)).cpu(), expect)
        assert torch.equal(torch.compile(fn)(a.to(DEV), b.to(DEV)).cpu(), expect)


def test_scaled_bessel_i_near_float_max():
    # 2 pi x overflowed past 5.4e37: i0e and i1e answered 0 where they are still 2e-20.
    x = torch.tensor([5e37, 5.5e37, 1e38, 3.4028e38, -3.4028e38] * 4)
    for fn in (torch.special.i0e, torch.special.i1e):
        torch.testing.assert_close(fn(x.to(DEV)).cpu(), fn(x))


@pytest.mark.parametrize("op", ["logcumsumexp", "cumsum", "cumprod"])
def test_zero_dim_scan_is_its_element(op):
    # The kernel started from the identity: logcumsumexp(-0.0) gave +0.0 (PyTorch copies 0-dim).
    x = torch.tensor(-0.0)
    got = getattr(torch, op)(x.to(DEV), 0).cpu()
    assert torch.equal(got, x) and torch.signbit(got)


def test_polygamma_far_left_of_zero():
    # zeta(s, q < 0) sums m pairs of terms: at q = -10573 a plain sum drifted 100 ulps from the value.
    import mpmath

    mpmath.mp.dps = 30
    x = torch.tensor([-10572.966446425793, -2500.37, -0.5, -3.25], dtype=torch.float64)
    for n in (2, 3):
        exact = torch.tensor([float(mpmath.polygamma(n, v)) for v in x.tolist()], dtype=torch.float64)
        torch.testing.assert_close(torch.polygamma(n, x.to(DEV)).cpu(), exact, rtol=1e-15, atol=0)
    # A term that overflows float makes the sum infinite, not NaN (the compensation is NaN there).
    tiny = torch.tensor([-2.1626780902453825e-20, 2e-20, -1e-30])
    torch.testing.assert_close(torch.polygamma(2, tiny.to(DEV)).cpu(), torch.polygamma(2, tiny))


def test_polygamma_and_zeta_far_left_of_zero_answer_at_once():
    # The pairs' sum took -x steps: the kernel ran for hours at -3.4e15 (fuzz program 49,831), as
    # PyTorch's CPU loop does; the reflection of polygamma answers instead. References: the same
    # reflection in mpmath at 40 digits (its own polygamma is slow there too).
    import mpmath

    mpmath.mp.dps = 40
    x = [-3362058831666157.5, -3614730369991.7046, -1e8 - 0.5, -617031.4978758596, -20.3]

    def reference(v):
        c = mpmath.cospi(v) / mpmath.sinpi(v)
        return float(mpmath.psi(2, 1 - mpmath.mpf(v)) - mpmath.pi**3 * 2 * c * (1 + c**2))

    got = torch.polygamma(2, torch.tensor(x, dtype=torch.float64, device=DEV)).cpu()
    torch.testing.assert_close(got, torch.tensor([reference(v) for v in x], dtype=torch.float64), rtol=1e-14, atol=0)
    # zeta past the reflection's orders: a few pairs are the sum (f = 1/2 cancels them exactly;
    # mpmath needs 100 digits to see 1e-60 through terms of 3e13 that cancel).
    mpmath.mp.dps = 100
    s = torch.tensor([45.0, 45.0, 41.0, 4.0], dtype=torch.float64)
    q = torch.tensor([-1e12 - 0.5, -20.5, -20.7, -20.5], dtype=torch.float64)
    exact = [0.0, *(float(mpmath.zeta(a, mpmath.mpf(b))) for a, b in zip(s.tolist()[1:], q.tolist()[1:], strict=True))]
    got = torch.special.zeta(s.to(DEV), q.to(DEV)).cpu()
    torch.testing.assert_close(got, torch.tensor(exact, dtype=torch.float64), rtol=1e-14, atol=0)


@pytest.mark.parametrize("n", [1, 16])  # the element and the eight-lane forms
def test_remainder_keeps_a_zero_sign(n):
    # remainder(-0.0, 0.001) is -0.0 on the CPU (fmod's zero, not adjusted): axon added a 0 and
    # gave +0.0, and pow(., 0.5)'s gradient then had the other sign (fuzz program 79,257).
    x = torch.tensor([-0.0, 0.0, -5.0, 5.0, 0.0025, -0.0025, 1e-45, -1e-45] * 2)[: max(n, 8)]
    for b in (0.001, -0.001, 3.0):
        expect = torch.remainder(x, b)
        for got in (torch.remainder(x.to(DEV), b), torch.remainder(x.to(DEV), torch.full_like(x, b).to(DEV))):
            got = got.cpu()
            assert torch.equal(got, expect) and torch.equal(got.signbit(), expect.signbit()), (b, got, expect)
