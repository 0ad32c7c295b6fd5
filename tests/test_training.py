"""Whole training runs on axon against the same runs on the CPU, with zero CPU fallbacks."""

import copy

import pytest
import torch
from torch import nn

from torch_axon import demo


def run(model, device, opt_factory, loss_fn, data, steps):
    model = model.to(device)
    opt = opt_factory(model.parameters())
    x_all, y_all = data[0].to(device), data[1].to(device)
    losses = []
    for step in range(steps):
        lo = (step * 32) % x_all.shape[0]
        x, y = x_all[lo : lo + 32], y_all[lo : lo + 32]
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model


def test_demo_mlp_matches_cpu_with_zero_fallbacks():
    """The README's demo: 3 hidden layers of width 256, AdamW, cross-entropy, 200 steps."""
    torch.axon.fallback_ops(reset=True)
    assert demo.main(["--steps", "200", "--width", "256", "--log-every", "0"]) == 0
    assert torch.axon.fallback_ops() == {}


@pytest.mark.parametrize(
    "name,opt_factory",
    [
        ("sgd-momentum-foreach", lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, foreach=True)),
        ("sgd-momentum-forloop", lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, foreach=False)),
        ("adamw-forloop", lambda p: torch.optim.AdamW(p, lr=1e-3, foreach=False)),
        ("adamw-foreach", lambda p: torch.optim.AdamW(p, lr=1e-3, foreach=True)),
    ],
)
def test_optimizers_match_cpu(name, opt_factory):
    torch.manual_seed(0)
    data = (torch.randn(256, 16) * 2, torch.randint(0, 4, (256,)))
    model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 4))
    ref = copy.deepcopy(model)
    torch.axon.fallback_ops(reset=True)
    axon_losses, axon_model = run(model, "axon", opt_factory, nn.CrossEntropyLoss(), data, 30)
    assert torch.axon.fallback_ops() == {}, name
    cpu_losses, cpu_model = run(ref, "cpu", opt_factory, nn.CrossEntropyLoss(), data, 30)
    torch.testing.assert_close(torch.tensor(axon_losses), torch.tensor(cpu_losses), rtol=1e-4, atol=1e-6)
    for pa, pc in zip(axon_model.parameters(), cpu_model.parameters(), strict=False):
        torch.testing.assert_close(pa.detach().cpu(), pc.detach(), rtol=1e-4, atol=1e-5)


def test_mse_regression_matches_cpu():
    torch.manual_seed(1)
    data = (torch.randn(128, 8), torch.randn(128, 1))
    model = nn.Sequential(nn.Linear(8, 32), nn.GELU(approximate="tanh"), nn.Linear(32, 1))
    ref = copy.deepcopy(model)

    def opt(p):
        return torch.optim.SGD(p, lr=0.01)

    torch.axon.fallback_ops(reset=True)
    axon_losses, _ = run(model, "axon", opt, nn.MSELoss(), data, 20)
    assert torch.axon.fallback_ops() == {}
    cpu_losses, _ = run(ref, "cpu", opt, nn.MSELoss(), data, 20)
    torch.testing.assert_close(torch.tensor(axon_losses), torch.tensor(cpu_losses), rtol=1e-4, atol=1e-6)
