"""safetensors straight to axon: the integer form of the device (the accelerator's index), which
safetensors hands to torch as it is; its own device parser (Rust) knows a fixed list of names."""

import pytest
import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
DTYPES += (torch.int64, torch.int32, torch.uint8, torch.bool)


@pytest.fixture
def saved(tmp_path):
    g = torch.Generator().manual_seed(0)
    tensors = {str(dt): (torch.randn(3, 5, generator=g) * 50).to(dt) for dt in DTYPES}
    path = tmp_path / "weights.safetensors"
    save_file(tensors, str(path))
    return str(path), tensors


def test_load_file_to_the_device_index(saved):
    path, expected = saved
    loaded = load_file(path, device=torch.axon.current_device())
    assert set(loaded) == set(expected)
    for name, t in loaded.items():
        assert t.device == torch.device("axon", 0)
        assert t.dtype == expected[name].dtype
        assert torch.equal(t.cpu(), expected[name])


def test_safe_open_to_the_device_index(saved):
    path, expected = saved
    with safe_open(path, framework="pt", device=0) as f:
        t = f.get_tensor("torch.bfloat16")
        part = f.get_slice("torch.float32")[1:, 2:4]
    assert t.device.type == "axon" and torch.equal(t.cpu(), expected["torch.bfloat16"])
    assert part.device.type == "axon" and torch.equal(part.cpu(), expected["torch.float32"][1:, 2:4])


def test_the_device_name_needs_safetensors_to_know_it(saved):
    # Documented in docs/ecosystem.md: "axon" by name needs a change inside safetensors.
    path, _ = saved
    with pytest.raises(SafetensorError, match="axon"):
        load_file(path, device="axon")
