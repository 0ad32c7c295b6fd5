"""Mixed precision on axon: autocast with CUDA's op lists, GradScaler with native helpers."""

import copy

import pytest
import torch
from torch import nn


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_autocast_casts_like_cuda(dtype):
    a = torch.randn(8, 16, device="axon")
    b = torch.randn(16, 4, device="axon")
    with torch.autocast("axon", dtype=dtype):
        mm = a @ b  # lower-precision list
        sm = torch.softmax(mm, dim=-1)  # float32 list
        total = mm.sum()  # float32 with an optional dtype
    assert mm.dtype == dtype
    assert sm.dtype == torch.float32
    assert total.dtype == torch.float32
    torch.testing.assert_close(mm.float().cpu(), (a.cpu() @ b.cpu()), rtol=3e-2, atol=3e-2)
    assert torch.amp.is_autocast_available("axon")


def test_autocast_disabled_outside_region():
    a = torch.randn(4, 4, device="axon")
    assert (a @ a).dtype == torch.float32


def test_grad_scaler_helpers_are_native_and_correct():
    torch.axon.fallback_ops(reset=True)
    grads = [torch.tensor([2.0, 4.0], device="axon"), torch.tensor([8.0], device="axon")]
    found = torch.zeros(1, device="axon")
    inv = torch.full((1,), 0.5, device="axon")
    torch._amp_foreach_non_finite_check_and_unscale_(grads, found, inv)
    assert grads[0].tolist() == [1.0, 2.0] and grads[1].tolist() == [4.0]
    assert found.item() == 0.0
    grads.append(torch.tensor([float("inf")], device="axon"))
    torch._amp_foreach_non_finite_check_and_unscale_(grads, found, inv)
    assert found.item() == 1.0

    scale = torch.full((1,), 1024.0, device="axon")
    tracker = torch.zeros(1, dtype=torch.int32, device="axon")
    torch._amp_update_scale_(scale, tracker, found, 2.0, 0.5, 2)
    assert scale.item() == 512.0 and tracker.item() == 0
    clean = torch.zeros(1, device="axon")
    torch._amp_update_scale_(scale, tracker, clean, 2.0, 0.5, 2)
    assert scale.item() == 512.0 and tracker.item() == 1
    torch._amp_update_scale_(scale, tracker, clean, 2.0, 0.5, 2)
    assert scale.item() == 1024.0 and tracker.item() == 0
    assert torch.axon.fallback_ops() == {}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_mixed_precision_training_converges_like_float32(dtype):
    torch.manual_seed(0)
    x = torch.randn(256, 16)
    y = (x[:, :4].sum(1) > 0).long()
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 2))
    reference = copy.deepcopy(model)

    def train(m, amp):
        m = m.to("axon")
        opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
        scaler = torch.amp.GradScaler("axon", enabled=amp and dtype == torch.float16)
        xs, ys = x.to("axon"), y.to("axon")
        for _ in range(60):
            opt.zero_grad()
            with torch.autocast("axon", dtype=dtype, enabled=amp):
                loss = nn.functional.cross_entropy(m(xs), ys)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        return loss.item()

    mixed, full = train(model, True), train(reference, False)
    assert mixed < 0.2 and full < 0.2
    assert abs(mixed - full) < 0.05
