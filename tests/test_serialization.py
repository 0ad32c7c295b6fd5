"""Checkpoints of axon tensors, modules and optimizer state round-trip bit-exactly."""

import io

import pytest
import torch
from torch import nn


def roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kwargs)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.bool])
def test_tensor_roundtrip_is_bit_exact(dtype):
    t = (torch.randn(5, 7) * 100).to(dtype).to("axon")
    u = roundtrip(t)
    assert u.device == t.device and u.dtype == dtype
    assert torch.equal(u.cpu(), t.cpu())
    v = roundtrip(t, map_location="cpu")
    assert v.device.type == "cpu" and torch.equal(v, t.cpu())


def test_views_keep_sharing_their_storage():
    base = torch.arange(12.0, device="axon")
    a, b = roundtrip((base[2:6], base.view(3, 4).t()))
    a.fill_(-1)
    assert float(b[2, 0]) == -1.0  # both views of one restored storage


def test_cpu_checkpoint_loads_onto_axon():
    t = torch.randn(4, 4)
    u = roundtrip(t, map_location="axon")
    assert u.device.type == "axon" and torch.equal(u.cpu(), t)


def test_module_and_optimizer_state_roundtrip():
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2)).to("axon")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(torch.randn(3, 6, device="axon")).sum().backward()
    opt.step()
    state = roundtrip({"model": model.state_dict(), "opt": opt.state_dict()})
    restored = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2)).to("axon")
    restored.load_state_dict(state["model"])
    opt2 = torch.optim.AdamW(restored.parameters(), lr=1e-3)
    opt2.load_state_dict(state["opt"])
    for p, q in zip(model.parameters(), restored.parameters(), strict=True):
        assert q.device.type == "axon" and torch.equal(p.detach().cpu(), q.detach().cpu())
    exp_avg = state["opt"]["state"][0]["exp_avg"]
    assert exp_avg.device.type == "axon"
    assert torch.equal(exp_avg.cpu(), opt.state_dict()["state"][0]["exp_avg"].cpu())


def test_safetensors_roundtrip(tmp_path):
    safetensors = pytest.importorskip("safetensors.torch", reason="safetensors is not installed")
    weights = {"w": torch.randn(3, 5, device="axon"), "b": torch.arange(4, device="axon")}
    path = tmp_path / "w.safetensors"
    safetensors.save_file(weights, str(path))  # axon tensors are written directly
    # safetensors knows only its own device names: load on the CPU, then move.
    loaded = {k: v.to("axon") for k, v in safetensors.load_file(str(path)).items()}
    for k, v in weights.items():
        assert loaded[k].device.type == "axon" and torch.equal(loaded[k].cpu(), v.cpu())


def test_dlpack_capsule_round_trip_shares_memory():
    from torch.utils.dlpack import from_dlpack, to_dlpack

    x = torch.arange(6.0, device="axon").reshape(2, 3)
    y = from_dlpack(to_dlpack(x))
    assert y.device == x.device and y.data_ptr() == x.data_ptr()
    y[0, 0] = 42.0  # one memory: the write shows through x
    assert x[0, 0].item() == 42.0
    # The protocol form (torch.from_dlpack(tensor)) goes through Tensor.__dlpack_device__,
    # which PyTorch implements for its in-tree devices only.
    with pytest.raises((ValueError, RuntimeError, BufferError)):
        torch.from_dlpack(x)
