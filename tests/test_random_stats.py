"""Statistical tests of axon's random numbers (Philox-4x32-10, CUDA's [seed, offset] state).

Each distribution is drawn on the device (fixed seeds, 200k draws) and its CPU copy compared
with the exact law: Kolmogorov-Smirnov for continuous distributions, chi-square for discrete
ones. The thresholds (p > 1e-4) only fail for a real defect, not by bad luck with a fixed seed.
Also: reproducibility (same seed, same numbers), the generator state round trip, separate
torch.Generator streams, and independence from the launch geometry.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import DEVICE
from scipy import stats

pytestmark = pytest.mark.usefixtures("no_fallback")

N = 200_000
P_MIN = 1e-4


def draw(fill, n=N, dtype=torch.float32, seed=1234):
    """n draws from `fill` (an in-place method call on a fresh tensor), as float64 numpy."""
    torch.axon.manual_seed(seed)
    x = torch.empty(n, dtype=dtype, device=DEVICE)
    fill(x)
    return x.cpu().double().numpy()


def ks(sample, cdf):
    p = stats.kstest(sample, cdf).pvalue
    assert p > P_MIN, f"Kolmogorov-Smirnov p-value {p:.3g}"


def chi_square(counts, probs):
    counts, probs = np.asarray(counts, dtype=np.float64), np.asarray(probs, dtype=np.float64)
    expected = probs / probs.sum() * counts.sum()
    p = stats.chisquare(counts, expected).pvalue
    assert p > P_MIN, f"chi-square p-value {p:.3g}"


# ---- continuous distributions ------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2024])
def test_uniform(seed):
    s = draw(lambda x: x.uniform_(-2.0, 3.0), seed=seed)
    assert s.min() >= -2.0 and s.max() < 3.0
    ks(s, stats.uniform(loc=-2.0, scale=5.0).cdf)


@pytest.mark.parametrize("seed", [1, 2024])
def test_normal(seed):
    ks(draw(lambda x: x.normal_(1.5, 0.5), seed=seed), stats.norm(loc=1.5, scale=0.5).cdf)


def test_normal_float64_and_tensor_params():
    ks(draw(lambda x: x.normal_(), dtype=torch.float64), stats.norm().cdf)
    torch.axon.manual_seed(7)
    mean = torch.full((N,), 3.0, device=DEVICE)
    s = torch.normal(mean, torch.full((N,), 2.0, device=DEVICE)).cpu().double().numpy()
    ks(s, stats.norm(loc=3.0, scale=2.0).cdf)


def test_exponential():
    ks(draw(lambda x: x.exponential_(2.5)), stats.expon(scale=1 / 2.5).cdf)


def test_cauchy():
    ks(draw(lambda x: x.cauchy_(-1.0, 3.0)), stats.cauchy(loc=-1.0, scale=3.0).cdf)


def test_log_normal():
    s = draw(lambda x: x.log_normal_(0.5, 0.75))
    ks(s, stats.lognorm(s=0.75, scale=np.exp(0.5)).cdf)


# ---- discrete distributions ------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.3, 0.05])
def test_geometric(p):
    s = draw(lambda x: x.geometric_(p)).astype(np.int64)
    assert s.min() >= 1
    # Bins 1 .. K-1 and a tail bin >= K, with K chosen so the tail still expects ~100 draws.
    k = int(np.ceil(np.log(100 / N) / np.log1p(-p)))
    counts = [np.sum(s == j) for j in range(1, k)] + [np.sum(s >= k)]
    probs = [stats.geom.pmf(j, p) for j in range(1, k)] + [stats.geom.sf(k - 1, p)]
    chi_square(counts, probs)


def test_geometric_integer_dtype():
    s = draw(lambda x: x.geometric_(0.5), dtype=torch.int32)
    counts = [np.sum(s == j) for j in range(1, 12)] + [np.sum(s >= 12)]
    probs = [stats.geom.pmf(j, 0.5) for j in range(1, 12)] + [stats.geom.sf(11, 0.5)]
    chi_square(counts, probs)


@pytest.mark.parametrize("p", [0.5, 0.1])
def test_bernoulli_float_p(p):
    s = draw(lambda x: x.bernoulli_(p))
    assert set(np.unique(s)) <= {0.0, 1.0}
    assert stats.binomtest(int(s.sum()), N, p).pvalue > P_MIN


def test_bernoulli_tensor_p():
    probs = torch.tensor([0.05, 0.2, 0.5, 0.9], device=DEVICE)
    torch.axon.manual_seed(99)
    s = torch.empty(N // 4, 4, device=DEVICE).bernoulli_(probs).cpu().numpy()
    for j, p in enumerate(probs.cpu().tolist()):
        assert stats.binomtest(int(s[:, j].sum()), N // 4, p).pvalue > P_MIN


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.float32])
def test_randint_uniform(dtype):
    torch.axon.manual_seed(5)
    s = torch.randint(-3, 14, (N,), dtype=dtype, device=DEVICE).cpu().long().numpy()
    assert s.min() >= -3 and s.max() < 14
    chi_square(np.bincount(s + 3, minlength=17), np.ones(17))


def test_random_full_range_bits():
    """random_() on int64 covers all 64 bits: each bit is set half of the time."""
    torch.axon.manual_seed(6)
    s = torch.empty(N, dtype=torch.int64, device=DEVICE).random_().cpu().numpy().view(np.uint64)
    for bit in (0, 17, 31, 32, 47, 62):
        ones = int(((s >> np.uint64(bit)) & np.uint64(1)).sum())
        assert stats.binomtest(ones, N, 0.5).pvalue > P_MIN, f"bit {bit}"
    u8 = torch.empty(N, dtype=torch.uint8, device=DEVICE).random_().cpu().numpy()
    chi_square(np.bincount(u8, minlength=256), np.ones(256))


def test_randperm():
    """Every draw is a permutation, and value v lands at position j with probability 1/n."""
    torch.axon.manual_seed(11)
    n = 10
    perms = torch.stack([torch.randperm(n, device=DEVICE) for _ in range(2000)]).cpu().numpy()
    assert (np.sort(perms, axis=1) == np.arange(n)).all()
    counts = np.zeros((n, n))
    for row in perms:
        counts[np.arange(n), row] += 1
    chi_square(counts.ravel(), np.ones(n * n))
    large = torch.randperm(100_000, device=DEVICE).cpu()
    assert torch.equal(large.sort().values, torch.arange(100_000))
    # The positions of a large permutation are uniform too (value's position vs its value).
    chi_square(np.bincount(large[:50_000].numpy() // 10_000, minlength=10), np.ones(10))


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial(replacement):
    probs = torch.tensor([0.1, 0.0, 0.3, 0.05, 0.55], device=DEVICE)
    torch.axon.manual_seed(21)
    if replacement:
        s = torch.multinomial(probs, N, replacement=True).cpu().numpy()
        counts = np.bincount(s, minlength=5)
        assert counts[1] == 0
        keep = [0, 2, 3, 4]
        chi_square(counts[keep], probs.cpu().numpy()[keep])
    else:
        # The first draw of each row follows probs; rows never repeat a category.
        rows = probs.repeat(N // 4, 1)
        s = torch.multinomial(rows, 3, replacement=False).cpu().numpy()
        assert all(len(set(r)) == 3 for r in s[:1000])
        assert not (s == 1).any()
        counts = np.bincount(s[:, 0], minlength=5)
        keep = [0, 2, 3, 4]
        chi_square(counts[keep], probs.cpu().numpy()[keep])
        # The second draw: P(j second) = sum_i p_i p_j / (1 - p_i).
        p = probs.cpu().double().numpy()
        second = np.array([sum(p[i] * p[j] / (1 - p[i]) for i in range(5) if i != j) for j in range(5)])
        counts2 = np.bincount(s[:, 1], minlength=5)
        chi_square(counts2[keep], second[keep])


# ---- the generator ------------------------------------------------------------------------------


FILLS = {
    "uniform": lambda x: x.uniform_(),
    "normal": lambda x: x.normal_(),
    "exponential": lambda x: x.exponential_(),
    "cauchy": lambda x: x.cauchy_(),
    "log_normal": lambda x: x.log_normal_(),
    "geometric": lambda x: x.geometric_(0.2),
    "bernoulli": lambda x: x.bernoulli_(0.3),
    "random": lambda x: x.random_(0, 1000),
}


@pytest.mark.parametrize("name", list(FILLS))
def test_same_seed_same_numbers(name):
    a = draw(FILLS[name], n=5000, seed=77)
    b = draw(FILLS[name], n=5000, seed=77)
    c = draw(FILLS[name], n=5000, seed=78)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_consecutive_draws_differ():
    torch.axon.manual_seed(3)
    a = torch.rand(1000, device=DEVICE).cpu()
    b = torch.rand(1000, device=DEVICE).cpu()
    assert not torch.equal(a, b)


def test_rng_state_round_trip():
    torch.axon.manual_seed(42)
    torch.rand(10, device=DEVICE)
    state = torch.axon.get_rng_state()
    a = torch.randn(1000, device=DEVICE).cpu()
    b = torch.empty(100, device=DEVICE).cauchy_().cpu()
    torch.rand(33, device=DEVICE)  # move on
    torch.axon.set_rng_state(state)
    np.testing.assert_array_equal(torch.randn(1000, device=DEVICE).cpu(), a)
    np.testing.assert_array_equal(torch.empty(100, device=DEVICE).cauchy_().cpu(), b)


def test_generator_streams_are_separate():
    g1 = torch.Generator(device=DEVICE)
    g2 = torch.Generator(device=DEVICE)
    g1.manual_seed(5)
    g2.manual_seed(5)
    torch.axon.manual_seed(5)
    a = torch.randn(100, device=DEVICE, generator=g1).cpu()
    torch.randn(500, device=DEVICE)  # the default generator moves; g2 must not
    b = torch.randn(100, device=DEVICE, generator=g2).cpu()
    np.testing.assert_array_equal(a, b)
    # Drawing from g1 again continues its own stream only.
    c = torch.randn(100, device=DEVICE, generator=g1).cpu()
    d = torch.randn(100, device=DEVICE, generator=g2).cpu()
    np.testing.assert_array_equal(c, d)
    assert not np.array_equal(a, c)
    g3 = torch.Generator(device=DEVICE)
    g3.manual_seed(6)
    assert not np.array_equal(a, torch.randn(100, device=DEVICE, generator=g3).cpu())
    # Generator state round trip.
    s = g1.get_state()
    e = torch.rand(50, device=DEVICE, generator=g1).cpu()
    g1.set_state(s)
    np.testing.assert_array_equal(torch.rand(50, device=DEVICE, generator=g1).cpu(), e)


@pytest.mark.parametrize("name", ["uniform", "normal", "cauchy", "geometric", "random"])
def test_independent_of_launch_geometry(name):
    """Element i uses Philox counter offset + i: a prefix of a long draw equals a short draw
    from the same state, and strided or transposed targets get the same values in logical order
    as contiguous ones."""
    fill = FILLS[name]
    long = draw(fill, n=10_000, seed=9)
    short = draw(fill, n=333, seed=9)
    np.testing.assert_array_equal(long[:333], short)
    torch.axon.manual_seed(9)
    t = torch.empty(100, 100, device=DEVICE)
    fill(t)
    np.testing.assert_array_equal(t.cpu().reshape(-1).double().numpy(), long)
    torch.axon.manual_seed(9)
    t = torch.empty(100, 100, device=DEVICE).t()
    fill(t)
    np.testing.assert_array_equal(t.cpu().reshape(-1).double().numpy(), long)


def test_offsets_advance_by_numel():
    """A draw of n reserves n counters rounded up to a multiple of 4: a second draw continues
    the stream where one long draw would be, past the rounding gap."""
    torch.axon.manual_seed(10)
    both = torch.rand(3000, device=DEVICE).cpu()
    torch.axon.manual_seed(10)
    first = torch.rand(1000, device=DEVICE).cpu()
    second = torch.rand(1000, device=DEVICE).cpu()
    assert torch.equal(both[:1000], first) and torch.equal(both[1000:2000], second)
    torch.axon.manual_seed(10)
    torch.rand(1001, device=DEVICE)
    third = torch.rand(1000, device=DEVICE).cpu()
    assert torch.equal(both[1004:2004], third)
