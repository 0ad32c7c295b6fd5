"""fork after axon is initialised (issue 24): a forked child that touches axon gets a clear
error instead of hanging (the OpenCL driver's threads do not survive fork), and DataLoader's
workers, forked or spawned, feed a model training on axon (pinned batches) as on the CPU."""

import multiprocessing

import pytest
import torch

import torch_axon  # noqa: F401


def _child(queue, inherited):
    results = []
    for what, call in (
        ("new tensor", lambda: torch.ones(2, device="axon")),
        ("inherited tensor", lambda: inherited.exp()),
        ("synchronize", lambda: torch.axon.synchronize()),
    ):
        try:
            call()
            results.append((what, "no error"))
        except RuntimeError as e:
            results.append((what, str(e)))
    queue.put(results)


def test_forked_child_gets_a_clear_error_not_a_hang():
    inherited = torch.arange(4.0, device="axon")
    torch.axon.synchronize()
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child, args=(queue, inherited))
    child.start()
    child.join(60)
    hung = child.is_alive()
    if hung:
        child.kill()
    assert not hung, "the forked child hung"
    assert child.exitcode == 0
    for what, message in queue.get(timeout=5):
        assert "forked" in message and "spawn" in message, (what, message)
    # The parent carries on.
    torch.testing.assert_close(inherited.exp().cpu(), torch.arange(4.0).exp())


def _train(device: str, loader) -> list[float]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for x, y in loader:
        if device != "cpu":
            assert x.is_pinned()  # pin_memory=True pinned the batch for the accelerator
        loss = torch.nn.functional.mse_loss(model(x.to(device, non_blocking=True)), y.to(device, non_blocking=True))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_dataloader_workers_feed_training(start):
    torch.ones(1, device="axon")  # axon initialised before the workers start, as in training scripts
    g = torch.Generator().manual_seed(1)
    data = torch.utils.data.TensorDataset(torch.randn(96, 8, generator=g), torch.randn(96, 1, generator=g))

    def loader(pin):
        return torch.utils.data.DataLoader(
            data, batch_size=16, num_workers=2, multiprocessing_context=start, pin_memory=pin
        )

    on_axon = _train("axon", loader(True))
    on_cpu = _train("cpu", loader(False))
    assert len(on_axon) == 6
    torch.testing.assert_close(on_axon, on_cpu, rtol=1e-4, atol=1e-5)
