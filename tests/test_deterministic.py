"""torch.use_deterministic_algorithms(True): the ops whose CUDA kernels use atomics run on axon
without raising and give bit-identical results run to run (issue 4)."""

import pytest
import torch
import torch.nn.functional as F

DEV = "axon"


@pytest.fixture(autouse=True)
def deterministic():
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    torch.axon.fallback_ops(reset=True)
    yield
    torch.use_deterministic_algorithms(before)


def scatter_like(x: torch.Tensor) -> list[torch.Tensor]:
    idx = torch.tensor([0, 2, 2, 1, 0, 2, 2, 2], device=x.device)
    out = [
        torch.zeros(3, x.shape[1], device=x.device).index_add_(0, idx, x),
        torch.zeros(3, x.shape[1], device=x.device).scatter_add_(0, idx[:, None].expand_as(x), x),
        torch.zeros(3, x.shape[1], device=x.device).index_put_((idx,), x, accumulate=True),
    ]
    return out


def grads_of(fn, *inputs: torch.Tensor) -> list[torch.Tensor]:
    leaves = [t.detach().clone().requires_grad_(True) for t in inputs]
    fn(*leaves).sum().backward()
    return [t.grad for t in leaves]


CASES = {
    "scatter": lambda dev: scatter_like(torch.randn(8, 5, generator=torch.Generator().manual_seed(0)).to(dev)),
    "embedding_backward": lambda dev: grads_of(
        lambda w: F.embedding(torch.tensor([[1, 3, 1], [3, 3, 0]], device=dev), w) ** 2,
        torch.randn(5, 4).to(dev),
    ),
    "conv2d_backward": lambda dev: grads_of(
        lambda x, w: F.conv2d(x, w, padding=1, stride=2),
        torch.randn(2, 3, 9, 9).to(dev),
        torch.randn(4, 3, 3, 3).to(dev),
    ),
    "max_pool2d_backward": lambda dev: grads_of(
        lambda x: F.max_pool2d(x, 3, stride=1, padding=1), torch.randn(2, 3, 8, 8).to(dev)
    ),
    "avg_pool2d_backward": lambda dev: grads_of(
        lambda x: F.avg_pool2d(x, 3, stride=2), torch.randn(2, 3, 9, 9).to(dev)
    ),
    "bilinear_backward": lambda dev: grads_of(
        lambda x: F.interpolate(x, scale_factor=1.7, mode="bilinear", align_corners=False),
        torch.randn(2, 3, 5, 5).to(dev),
    ),
    "cumsum_backward": lambda dev: grads_of(lambda x: x.cumsum(1) ** 2, torch.randn(4, 50).to(dev)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_identical_runs_matching_cpu(case):
    torch.manual_seed(0)
    first = CASES[case](DEV)
    torch.manual_seed(0)
    second = CASES[case](DEV)
    torch.manual_seed(0)
    reference = CASES[case]("cpu")
    for a, b, ref in zip(first, second, reference, strict=True):
        assert torch.equal(a.cpu(), b.cpu()), "two runs differ"
        torch.testing.assert_close(a.cpu(), ref, rtol=1e-4, atol=1e-5)
    assert torch.axon.fallback_ops() == {}


@pytest.mark.parametrize(
    "backward",
    [
        lambda x: F.grid_sample(x, torch.rand(2, 4, 4, 2, device=DEV) * 2 - 1, align_corners=False),
        lambda x: F.interpolate(x, scale_factor=1.5, mode="bicubic"),
        lambda x: F.interpolate(x, scale_factor=0.5, mode="bilinear", antialias=True),
    ],
    ids=["grid_sample", "bicubic", "antialiased_bilinear"],
)
def test_atomic_backward_kernels_refuse_deterministic_mode(backward):
    x = torch.randn(2, 3, 6, 6, device=DEV, requires_grad=True)
    out = backward(x).sum()
    with pytest.raises(RuntimeError, match="does not have a deterministic implementation"):
        out.backward()
