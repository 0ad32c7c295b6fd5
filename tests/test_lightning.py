"""Lightning on axon with no code change but ``accelerator="axon"`` (torch_axon/integrations/lightning.py).

Every run is compared with the same Lightning run on the CPU: trained parameters (float32
tolerance), a checkpoint saved, loaded back and resumed, bf16 and fp16 mixed precision autocasting
on axon, DDP over two ranks launched as Lightning launches them (its script launcher re-runs the
script for rank 1), and Fabric. 45 to 75 s in all on two cores, most of it the DDP runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from conftest import compare

pl = pytest.importorskip("lightning.pytorch", reason="Lightning is not installed")

REPO = Path(__file__).resolve().parents[1]


class Regressor(pl.LightningModule):
    """A small MLP; records what one forward produced inside training_step."""

    def __init__(self, lr: float = 0.1):
        super().__init__()
        self.save_hyperparameters()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
        self.seen: list[tuple[torch.dtype, str, bool]] = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        out = self.net(x)
        self.seen.append((out.dtype, out.device.type, torch.is_autocast_enabled(out.device.type)))
        return torch.nn.functional.mse_loss(out.float(), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)


def _data(batch_size: int = 16) -> torch.utils.data.DataLoader:
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=generator)
    y = torch.randn(64, 1, generator=generator)
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch_size)


def _trainer(accelerator: str, tmp_path: Path, **kwargs) -> pl.Trainer:
    options = dict(
        devices=1,
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=tmp_path,
    )
    options.update(kwargs)
    return pl.Trainer(accelerator=accelerator, **options)


def _fit(accelerator: str, tmp_path: Path, **kwargs) -> tuple[Regressor, pl.Trainer]:
    torch.manual_seed(0)
    model = Regressor()
    trainer = _trainer(accelerator, tmp_path, **kwargs)
    trainer.fit(model, _data())
    return model, trainer


def _assert_same_parameters(expected: torch.nn.Module, actual: torch.nn.Module, atol=1e-5, rtol=1e-5) -> None:
    """Lightning moves a model back to the CPU when fit ends, so both sides are compared there."""
    reference = dict(expected.named_parameters())
    for name, parameter in actual.named_parameters():
        torch.testing.assert_close(parameter.detach().cpu(), reference[name].detach().cpu(), atol=atol, rtol=rtol)


def test_accelerator_is_registered_by_name():
    """Importing Lightning is enough: both copies (lightning.pytorch and pytorch_lightning) and
    Fabric's registry know "axon"."""
    from lightning.fabric.accelerators import ACCELERATOR_REGISTRY
    from lightning.pytorch.accelerators import AcceleratorRegistry

    assert "axon" in AcceleratorRegistry
    assert "axon" in ACCELERATOR_REGISTRY
    accelerator = AcceleratorRegistry.get("axon")
    assert isinstance(accelerator, pl.accelerators.Accelerator)
    assert accelerator.is_available() and accelerator.auto_device_count() == torch.axon.device_count()
    assert accelerator.get_parallel_devices(accelerator.parse_devices(1)) == [torch.device("axon", 0)]
    with pytest.raises(ValueError, match="axon devices"):
        accelerator.parse_devices([torch.axon.device_count()])  # an explicit index must exist

    import pytorch_lightning

    assert "axon" in pytorch_lightning.accelerators.AcceleratorRegistry


def test_registration_fails_soft():
    """A Lightning whose internals are not the ones this integration knows gets a warning, not an
    error (here: a package that does not exist)."""
    from torch_axon.integrations import lightning as integration

    with pytest.warns(RuntimeWarning, match="could not register accelerator 'axon'"):
        assert integration.register("lightning.no_such_package") is False


def test_auto_chooses_axon(tmp_path):
    """accelerator="auto" takes axon where torch.accelerator names it, as it takes CUDA."""
    assert torch.accelerator.current_accelerator().type == "axon"
    trainer = pl.Trainer(logger=False, default_root_dir=tmp_path)
    assert trainer.accelerator.name() == "axon"
    assert trainer.strategy.root_device.type == "axon"
    assert _trainer("cpu", tmp_path).strategy.root_device == torch.device("cpu")


def test_trains_like_the_cpu_without_fallbacks(tmp_path):
    torch.axon.fallback_ops(reset=True)
    axon_model, trainer = _fit("axon", tmp_path / "axon")
    assert type(trainer.strategy).__name__ == "SingleDeviceStrategy"
    assert trainer.strategy.root_device == torch.device("axon", 0)
    assert {seen[:2] for seen in axon_model.seen} == {(torch.float32, "axon")}
    assert torch.axon.fallback_ops() == {}
    cpu_model, _ = _fit("cpu", tmp_path / "cpu")
    _assert_same_parameters(cpu_model, axon_model)


def test_checkpoint_saved_loaded_and_resumed(tmp_path):
    """One epoch, a checkpoint, then a second epoch resumed from it (parameters and SGD momentum
    come back onto axon) equals two epochs straight; the checkpoint loads back as a module."""
    straight, _ = _fit("axon", tmp_path / "straight")

    torch.manual_seed(0)
    first = Regressor()
    # Saved by ModelCheckpoint during training, while the model is on axon (fit's end moves it back).
    checkpoint = pl.callbacks.ModelCheckpoint(dirpath=tmp_path, filename="epoch1")
    trainer = _trainer("axon", tmp_path / "resume", max_epochs=1, enable_checkpointing=True, callbacks=[checkpoint])
    trainer.fit(first, _data())
    path = Path(checkpoint.best_model_path)
    assert path.name == "epoch1.ckpt"

    saved = torch.load(path, weights_only=False)  # each tensor back on the device it was saved from
    assert {tensor.device.type for tensor in saved["state_dict"].values()} == {"axon"}
    loaded = Regressor.load_from_checkpoint(path, map_location="axon")
    _assert_same_parameters(first, loaded, atol=0, rtol=0)
    assert next(loaded.parameters()).device.type == "axon"

    torch.manual_seed(0)
    resumed = Regressor()
    _trainer("axon", tmp_path / "resume", max_epochs=2).fit(resumed, _data(), ckpt_path=path)
    _assert_same_parameters(straight, resumed)


def test_bf16_mixed_autocasts_on_axon(tmp_path):
    model, trainer = _fit("axon", tmp_path / "axon", precision="bf16-mixed")
    assert trainer.precision_plugin.device == "axon"
    assert set(model.seen) == {(torch.bfloat16, "axon", True)}
    assert next(model.parameters()).dtype == torch.float32  # master weights stay float32
    cpu_model, _ = _fit("cpu", tmp_path / "cpu", precision="bf16-mixed")
    _assert_same_parameters(cpu_model, model, atol=2e-2, rtol=2e-2)


def test_16_mixed_autocasts_and_scales_on_axon(tmp_path):
    model, trainer = _fit("axon", tmp_path, precision="16-mixed")
    scaler = trainer.precision_plugin.scaler
    assert scaler is not None and scaler.is_enabled() and scaler._device == "axon"
    assert set(model.seen) == {(torch.float16, "axon", True)}
    assert torch.isfinite(torch.cat([p.detach().flatten() for p in model.parameters()])).all()


def test_fabric_on_axon():
    from lightning.fabric import Fabric

    fabric = Fabric(accelerator="axon", devices=1, precision="bf16-mixed")
    assert fabric.device == torch.device("axon", 0)
    torch.manual_seed(0)
    layer = torch.nn.Linear(8, 4)
    reference = layer(torch.ones(2, 8))
    module = fabric.setup_module(layer)
    inputs = torch.ones(2, 8, device=fabric.device)
    with fabric.autocast():
        inner = layer(inputs)
    assert inner.dtype == torch.bfloat16 and inner.device.type == "axon"
    out = module(inputs)  # Fabric's module autocasts itself and hands back float32
    assert out.dtype == torch.float32
    compare(reference, out, atol=2e-2, rtol=2e-2)


# --- DDP: two ranks, as Lightning launches them ----------------------------------------------------

_DDP_SCRIPT = textwrap.dedent(
    """
    import sys

    import torch
    import lightning.pytorch as pl

    class Regressor(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))

        def training_step(self, batch, batch_idx):
            x, y = batch
            return torch.nn.functional.mse_loss(self.net(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)

    accelerator, out = sys.argv[1], sys.argv[2]
    generator = torch.Generator().manual_seed(1)
    x, y = torch.randn(64, 8, generator=generator), torch.randn(64, 1, generator=generator)
    data = torch.utils.data.TensorDataset(x, y)
    torch.manual_seed(0)
    model = Regressor()
    trainer = pl.Trainer(accelerator=accelerator, devices=2, strategy="ddp", max_epochs=2, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(model, torch.utils.data.DataLoader(data, batch_size=8))
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    info = dict(device=str(trainer.strategy.root_device), backend=trainer.strategy.process_group_backend)
    torch.save(dict(state=state, info=info), f"{out}.{trainer.global_rank}")
    """
)


def _run_ddp(tmp_path: Path, accelerator: str, env: dict | None = None) -> list[dict]:
    script = tmp_path / "ddp.py"
    script.write_text(_DDP_SCRIPT)
    out = tmp_path / accelerator
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    environment.update(env or {})
    result = subprocess.run(
        [sys.executable, str(script), accelerator, str(out)],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return [torch.load(f"{out}.{rank}", weights_only=False) for rank in range(2)]


@pytest.fixture(scope="module")
def ddp_on_cpu(tmp_path_factory):
    return _run_ddp(tmp_path_factory.mktemp("ddp_cpu"), "cpu")


@pytest.mark.parametrize(
    "pocl_devices", [None, "pthread pthread"], ids=["both-ranks-on-axon0", "one-pocl-device-per-rank"]
)
def test_ddp_two_ranks_matches_cpu(tmp_path, ddp_on_cpu, pocl_devices):
    """Strategy "ddp" over the axon c10d backend equals Lightning's DDP over Gloo on the CPU."""
    env = {"POCL_DEVICES": pocl_devices} if pocl_devices else {}
    if pocl_devices is None and torch.axon.device_count() > 1:
        pytest.skip("this machine shows two axon devices already; the shared-device case needs one")
    ranks = _run_ddp(tmp_path, "axon", env)
    devices = [rank["info"]["device"] for rank in ranks]
    assert devices == (["axon:0", "axon:1"] if pocl_devices else ["axon:0", "axon:0"])
    assert {rank["info"]["backend"] for rank in ranks} == {"axon"}
    for rank, reference in zip(ranks, ddp_on_cpu, strict=True):
        for name, value in reference["state"].items():
            torch.testing.assert_close(rank["state"][name], value, atol=1e-5, rtol=1e-5)
