"""Hugging Face on axon with no code change: accelerate and transformers' Trainer pick axon as
they pick CUDA (torch_axon/integrations/huggingface.py), with bf16/fp16 mixed precision, DDP
under torchrun, a PEFT LoRA fine-tune, and diffusers models and pipelines; every run is compared
with the same run on the CPU. Tiny models with random weights, built in code; nothing is
downloaded.

The torchrun test is marked ``slow`` (two ranks and a reference process, about a minute on two
cores).
"""

from __future__ import annotations

import copy
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

transformers = pytest.importorskip("transformers", reason="transformers is not installed")
accelerate = pytest.importorskip("accelerate", reason="accelerate is not installed")

from accelerate.state import AcceleratorState, PartialState  # noqa: E402
from accelerate.utils import DistributedType  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments  # noqa: E402

from torch_axon.integrations import _hooks, huggingface  # noqa: E402

# The fused AdamW step is being made native; until then it is the one fallback allowed here.
ALLOWED_FALLBACKS = {"aten::_fused_adamw_"}

SEQ = 16
VOCAB = 64


@pytest.fixture(autouse=True)
def _fresh_accelerate_state(monkeypatch):
    """accelerate keeps one process-wide state; each test starts without one, and without the
    environment settings a test sets."""
    for name in ("ACCELERATE_TORCH_DEVICE", "ACCELERATE_USE_CPU", "ACCELERATE_MIXED_PRECISION", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    AcceleratorState._reset_state(reset_partial_state=True)
    yield
    AcceleratorState._reset_state(reset_partial_state=True)


def tiny_gpt2(seed: int = 0) -> GPT2LMHeadModel:
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=VOCAB,
        n_positions=SEQ,
        n_embd=32,
        n_layer=2,
        n_head=2,
        resid_pdrop=0.0,  # dropout draws differ between devices' generators
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    return GPT2LMHeadModel(config).eval()


class TokenData(torch.utils.data.Dataset):
    def __init__(self, n: int = 16, seed: int = 1):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(0, VOCAB, (n, SEQ), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def train(model, tmp_path, data=None, **overrides):
    """Trainer with the user's defaults except what a comparison needs: 3 steps, no saving,
    no reporting. Returns the trainer and the per-step losses."""
    args = dict(
        output_dir=str(tmp_path),
        max_steps=3,
        per_device_train_batch_size=4,
        learning_rate=1e-3,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        disable_tqdm=True,
        seed=0,
    )
    args.update(overrides)
    trainer = Trainer(model=model, args=TrainingArguments(**args), train_dataset=data or TokenData())
    trainer.train()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    return trainer, losses


def params(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().float().cpu() for k, v in model.named_parameters()}


def assert_params_close(a, b, **tol):
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], msg=lambda m, k=k: f"{k}: {m}", **tol)


def unexpected_fallbacks() -> dict[str, int]:
    return {op: n for op, n in torch.axon.fallback_ops().items() if op not in ALLOWED_FALLBACKS}


# The mechanism -------------------------------------------------------------------------------


def test_hooks_run_after_import_and_fail_soft(tmp_path, monkeypatch):
    """A hook runs once the module's code has run; one that raises is a warning, and the
    module still imports."""
    (tmp_path / "axon_hook_probe_ok.py").write_text("VALUE = 1\n")
    (tmp_path / "axon_hook_probe_bad.py").write_text("VALUE = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    _hooks.when_imported("axon_hook_probe_ok", lambda m: seen.append(m.VALUE))

    def broken(module):
        raise AttributeError("internals changed")

    _hooks.when_imported("axon_hook_probe_bad", broken)
    import axon_hook_probe_ok  # noqa: F401

    with pytest.warns(RuntimeWarning, match="could not adapt axon_hook_probe_bad"):
        import axon_hook_probe_bad
    assert seen == [1] and axon_hook_probe_bad.VALUE == 2
    _hooks.when_imported("axon_hook_probe_ok", lambda m: seen.append(m.VALUE + 10))  # already imported: now
    assert seen == [1, 11]


def test_every_patch_applied_to_pinned_versions():
    """Against the pinned accelerate and transformers every hook applies (none was skipped with
    a warning): the functions in place are Axon's."""
    import accelerate.accelerator
    import accelerate.utils.modeling
    import transformers.training_args
    import transformers.utils.import_utils
    from accelerate import Accelerator

    assert hasattr(PartialState.__dict__["default_device"].fget, "_axon_original")
    assert hasattr(PartialState._prepare_backend, "_axon_original")
    assert hasattr(PartialState.set_device, "_axon_original")
    assert hasattr(accelerate.utils.modeling.get_grad_scaler, "_axon_original")
    assert hasattr(accelerate.accelerator.get_grad_scaler, "_axon_original")
    assert hasattr(Accelerator.prepare_model, "_axon_original")
    assert "axon" in next(c for c in Accelerator.__init__.__code__.co_consts if isinstance(c, tuple) and "cuda" in c)
    assert hasattr(transformers.utils.import_utils.is_torch_bf16_gpu_available, "_axon_original")
    assert hasattr(transformers.training_args.is_torch_bf16_gpu_available, "_axon_original")
    setup = transformers.training_args.TrainingArguments.__dict__["_setup_devices"]
    assert hasattr(setup.func, "_axon_original")
    waiting = [name for name in _hooks._hooks if name.startswith(("accelerate", "transformers"))]
    assert not waiting, f"hooks still waiting for their module: {waiting}"


def test_accelerate_and_trainer_pick_axon_and_user_settings_win(tmp_path, monkeypatch):
    assert huggingface.axon_is_accelerator()
    state = PartialState()
    assert state.device.type == "axon" and state.distributed_type == DistributedType.NO

    args = TrainingArguments(output_dir=str(tmp_path), report_to=[])
    assert args.device.type == "axon" and args.n_gpu == 1

    # The user's choices still win.
    assert TrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to=[]).device.type == "cpu"
    AcceleratorState._reset_state(reset_partial_state=True)
    assert PartialState(cpu=True).device.type == "cpu"
    AcceleratorState._reset_state(reset_partial_state=True)
    monkeypatch.setenv("ACCELERATE_TORCH_DEVICE", "cpu")
    assert PartialState().device.type == "cpu"
    assert TrainingArguments(output_dir=str(tmp_path), report_to=[]).device.type == "cpu"


def test_opt_out_leaves_libraries_alone():
    """AXON_HUGGINGFACE=0: accelerate's own choice (the CPU on this machine)."""
    code = "import torch\nfrom accelerate import PartialState\nprint(PartialState().device.type)\n"
    env = dict(os.environ, AXON_HUGGINGFACE="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == "cpu"


# Trainer on one device -----------------------------------------------------------------------


def test_trainer_defaults_train_on_axon_like_cpu(tmp_path):
    """Trainer with its default optimizer (fused AdamW), no argument about devices: trains on
    axon, with the CPU's losses and parameters."""
    model = tiny_gpt2()
    cpu_trainer, cpu_losses = train(copy.deepcopy(model), tmp_path / "cpu", use_cpu=True)
    torch.axon.fallback_ops(reset=True)
    trainer, losses = train(model, tmp_path / "axon")
    fallbacks = torch.axon.fallback_ops()
    print("fallbacks (Trainer, default optimizer):", fallbacks)

    assert trainer.args.device.type == "axon" and trainer.accelerator.device.type == "axon"
    assert next(trainer.model.parameters()).device.type == "axon"
    assert cpu_trainer.args.device.type == "cpu"
    assert len(losses) == 3
    torch.testing.assert_close(torch.tensor(losses), torch.tensor(cpu_losses), rtol=1e-4, atol=1e-4)
    assert_params_close(params(trainer.model), params(cpu_trainer.model), rtol=1e-3, atol=1e-4)
    assert unexpected_fallbacks() == {}


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_trainer_mixed_precision_autocasts_on_axon(tmp_path, precision):
    """bf16=True / fp16=True: the forward runs under autocast("axon") (matrix products in the
    lower precision), fp16 with a GradScaler on axon; training follows the CPU's float32 run
    within the lower precision's tolerance."""
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    model = tiny_gpt2()
    _, cpu_losses = train(copy.deepcopy(model), tmp_path / "cpu", use_cpu=True, optim="sgd", learning_rate=0.1)

    seen = []
    model.transformer.h[0].mlp.c_fc.register_forward_hook(lambda m, i, o: seen.append(o.dtype))
    model.lm_head.register_forward_hook(lambda m, i, o: seen.append(o.dtype))
    torch.axon.fallback_ops(reset=True)
    trainer, losses = train(model, tmp_path / "axon", optim="sgd", learning_rate=0.1, **{precision: True})
    print(f"fallbacks ({precision}):", torch.axon.fallback_ops())

    assert trainer.accelerator.native_amp and trainer.accelerator.mixed_precision == precision
    assert seen and set(seen) == {dtype}, seen
    if precision == "fp16":
        scaler = trainer.accelerator.scaler
        assert isinstance(scaler, torch.amp.GradScaler) and scaler.is_enabled() and scaler._device == "axon"
        assert scaler.get_scale() > 1.0
    torch.testing.assert_close(torch.tensor(losses), torch.tensor(cpu_losses), rtol=2e-2, atol=2e-2)
    assert torch.axon.fallback_ops() == {}


# PEFT ----------------------------------------------------------------------------------------


def test_peft_lora_finetune_save_and_reload(tmp_path):
    peft = pytest.importorskip("peft", reason="peft is not installed")
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=SEQ,
    )
    base = LlamaForCausalLM(config).eval()
    lora = peft.LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=["q_proj", "v_proj"])
    torch.manual_seed(1)
    model = peft.get_peft_model(copy.deepcopy(base), lora)
    torch.manual_seed(1)
    cpu_model = peft.get_peft_model(copy.deepcopy(base), lora)

    kw = dict(optim="sgd", learning_rate=0.5)  # large enough that lora_B leaves zero visibly
    _, cpu_losses = train(cpu_model, tmp_path / "cpu", use_cpu=True, **kw)
    torch.axon.fallback_ops(reset=True)
    trainer, losses = train(model, tmp_path / "axon", **kw)
    print("fallbacks (LoRA):", torch.axon.fallback_ops())
    assert torch.axon.fallback_ops() == {}
    torch.testing.assert_close(torch.tensor(losses), torch.tensor(cpu_losses), rtol=1e-4, atol=1e-4)
    trained = {k: v for k, v in params(model).items() if "lora_" in k}
    assert trained and all(p.device.type == "axon" for n, p in model.named_parameters() if "lora_" in n)
    assert_params_close(trained, {k: v for k, v in params(cpu_model).items() if "lora_" in k}, rtol=1e-4, atol=1e-5)
    assert any(v.abs().max() > 0 for k, v in trained.items() if "lora_B" in k)

    model.save_pretrained(tmp_path / "adapter")
    reloaded = peft.PeftModel.from_pretrained(copy.deepcopy(base).to("axon"), tmp_path / "adapter").eval()
    ids = TokenData(n=2, seed=5).ids.to("axon")
    model.eval()
    with torch.no_grad():
        expected = model(input_ids=ids).logits
        got = reloaded(input_ids=ids).logits
        without = base.to("axon")(input_ids=ids).logits
    torch.testing.assert_close(got.cpu(), expected.cpu(), rtol=1e-5, atol=1e-5)
    assert not torch.allclose(got.cpu(), without.cpu(), atol=1e-4)  # the adapter changes the outputs


# Multi-process -------------------------------------------------------------------------------

DDP_SCRIPT = Path(__file__).with_name("hf_trainer_ddp.py")


def _run(cmd, out_dir, timeout=300, **extra_env):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(Path(__file__).parents[1]), **extra_env)
    # Its own process group, so that a timeout ends torchrun's workers too.
    proc = subprocess.Popen(
        cmd, env=env, cwd=out_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        log = proc.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        log = proc.communicate()[0]
        pytest.fail(f"{cmd} timed out after {timeout} s\n{log[-5000:]}")
    assert proc.returncode == 0, f"{cmd}\n{log[-5000:]}"
    return log


@pytest.mark.slow
@pytest.mark.parametrize("devices", ["shared", "own"])
def test_trainer_ddp_under_torchrun_matches_one_process_with_doubled_batch(tmp_path, devices):
    """torchrun --nproc-per-node 2 of a plain Trainer script: accelerate's distributed type is
    MULTI_GPU over the axon backend, the model is wrapped in DDP, gradients are averaged: each
    rank's parameters equal the other's and those of one process given both ranks' batches.
    "shared": both ranks on axon:0 (PoCL's one device); "own": axon:0 and axon:1 (two PoCL
    devices, as two GPUs)."""
    env = {"POCL_DEVICES": "pthread pthread"} if devices == "own" else {}
    if env:
        count = _run([sys.executable, "-c", "import torch; print(torch.axon.device_count())"], tmp_path, **env)
        if int(count.split()[-1]) < 2:
            pytest.skip("the OpenCL platform does not show two devices with POCL_DEVICES (not PoCL)")
    steps = 3
    _run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
        + [str(DDP_SCRIPT), str(tmp_path / "ddp"), "4", str(steps)],
        tmp_path,
        **env,
    )
    _run([sys.executable, str(DDP_SCRIPT), str(tmp_path / "one"), "8", str(steps)], tmp_path)

    ranks = [torch.load(tmp_path / "ddp" / f"rank{r}.pt") for r in range(2)]
    one = torch.load(tmp_path / "one" / "rank0.pt")
    for r, result in enumerate(ranks):
        assert result["distributed_type"] == "MULTI_GPU", result
        assert result["backend"] == "axon" and result["world_size"] == 2
        assert result["wrapped"] == "DistributedDataParallel"
        assert result["device"] == ("axon:0" if devices == "shared" else f"axon:{r}")
        assert result["steps"] == steps
        print(f"rank {r} fallbacks:", result["fallbacks"])
        assert {op for op in result["fallbacks"] if op not in ALLOWED_FALLBACKS} == set()
    assert one["distributed_type"] == "NO" and one["device"].startswith("axon")
    # The ranks stay identical (DDP broadcast and averaged gradients) ...
    assert_params_close(ranks[0]["params"], ranks[1]["params"], rtol=0, atol=0)
    # ... and moved: equal to one process over the doubled batch, not to the start.
    assert_params_close(ranks[0]["params"], one["params"], rtol=1e-5, atol=1e-6)
    start = one["start"]
    assert max((one["params"][k] - start[k]).abs().max() for k in start) > 1e-3
    torch.testing.assert_close(torch.tensor(ranks[0]["losses"]), torch.tensor(one["losses"]), rtol=1e-5, atol=1e-6)


# diffusers -----------------------------------------------------------------------------------


def test_diffusers_detects_axon_through_torch_accelerator():
    pytest.importorskip("diffusers", reason="diffusers is not installed")
    from diffusers.utils.torch_utils import get_device

    assert get_device() == "axon"


def _tiny_unet():
    from diffusers import UNet2DConditionModel

    torch.manual_seed(0)
    return UNet2DConditionModel(
        sample_size=8,
        in_channels=4,
        out_channels=4,
        block_out_channels=(32, 64),
        layers_per_block=1,
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=32,
        attention_head_dim=8,
        norm_num_groups=32,
    ).eval()


def test_diffusers_unet_denoising_and_training_step_like_cpu():
    pytest.importorskip("diffusers", reason="diffusers is not installed")
    from diffusers import DDIMScheduler

    unet = _tiny_unet()
    g = torch.Generator().manual_seed(0)
    latents0 = torch.randn(2, 4, 8, 8, generator=g)
    text = torch.randn(2, 7, 32, generator=g)

    def denoise(device):
        model = copy.deepcopy(unet).to(device)
        scheduler = DDIMScheduler(num_train_timesteps=100)
        scheduler.set_timesteps(4)
        latents = latents0.to(device)
        with torch.no_grad():
            for t in scheduler.timesteps:
                noise = model(latents, t, encoder_hidden_states=text.to(device)).sample
                latents = scheduler.step(noise, t, latents).prev_sample
        return latents.cpu()

    def train_step(device):
        from diffusers import DDPMScheduler

        model = copy.deepcopy(unet).to(device).train()
        # SGD: Adam's first step is about lr * sign(grad), which turns a rounding difference in a
        # near-zero gradient into a full step; the gradients themselves are compared below.
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = DDPMScheduler(num_train_timesteps=100)
        noise = torch.randn(2, 4, 8, 8, generator=torch.Generator().manual_seed(1)).to(device)
        t = torch.tensor([10, 70], device=device)
        noisy = scheduler.add_noise(latents0.to(device), noise, t)
        loss = torch.nn.functional.mse_loss(model(noisy, t, encoder_hidden_states=text.to(device)).sample, noise)
        loss.backward()
        grads = {k: v.grad.cpu() for k, v in model.named_parameters()}
        opt.step()
        return loss.item(), grads, params(model)

    torch.axon.fallback_ops(reset=True)
    torch.testing.assert_close(denoise("axon"), denoise("cpu"), rtol=1e-4, atol=1e-4)
    loss, grads, p = train_step("axon")
    cpu_loss, cpu_grads, cpu_p = train_step("cpu")
    print("fallbacks (UNet):", torch.axon.fallback_ops())
    assert torch.axon.fallback_ops() == {}
    assert abs(loss - cpu_loss) < 1e-4 * max(1.0, abs(cpu_loss))
    assert_params_close(grads, cpu_grads, rtol=1e-3, atol=1e-5)
    assert_params_close(p, cpu_p, rtol=1e-4, atol=1e-5)


def _tiny_dit_pipeline():
    from diffusers import AutoencoderKL, DDIMScheduler, DiTPipeline, DiTTransformer2DModel

    torch.manual_seed(0)
    transformer = DiTTransformer2DModel(
        sample_size=4,
        patch_size=2,
        in_channels=4,
        out_channels=8,  # learned variance, as DiT's checkpoints
        num_layers=2,
        num_attention_heads=2,
        attention_head_dim=8,
        num_embeds_ada_norm=1000,  # the pipeline uses class 1000 as the unconditional class
        norm_type="ada_norm_zero",
    )
    vae = AutoencoderKL(
        block_out_channels=(32, 32),
        in_channels=3,
        out_channels=3,
        down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
        up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
        latent_channels=4,
        norm_num_groups=32,
        sample_size=8,
    )
    # Built, not loaded: switch off training mode (the class embedding's label dropout draws on
    # the device's generator), as from_pretrained would.
    transformer.eval()
    vae.eval()
    pipe = DiTPipeline(transformer=transformer, vae=vae, scheduler=DDIMScheduler(num_train_timesteps=100))
    pipe.set_progress_bar_config(disable=True)
    return pipe


def _generate(pipe) -> torch.Tensor:
    g = torch.Generator().manual_seed(0)  # CPU generator: the same latents on every device
    out = pipe(class_labels=[1, 3], num_inference_steps=3, guidance_scale=2.0, generator=g, output_type="np")
    return torch.from_numpy(out.images)


def test_diffusers_dit_pipeline_with_autoencoder_like_cpu():
    """DiTPipeline: a DiT transformer denoises in an autoencoder's latent space and the
    autoencoder decodes; the whole pipeline, scheduler loop included, against the CPU."""
    pytest.importorskip("diffusers", reason="diffusers is not installed")
    pipe = _tiny_dit_pipeline()
    torch.axon.fallback_ops(reset=True)
    got = _generate(copy.deepcopy(pipe).to("axon"))
    print("fallbacks (DiT pipeline):", torch.axon.fallback_ops())
    assert torch.axon.fallback_ops() == {}
    expected = _generate(pipe)
    assert got.shape == (2, 8, 8, 3)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)


def test_diffusers_model_cpu_offload_finds_axon():
    """enable_model_cpu_offload() with no device: diffusers asks torch.accelerator, runs each
    model on axon in turn and parks it on the CPU."""
    pytest.importorskip("diffusers", reason="diffusers is not installed")
    pytest.importorskip("accelerate", reason="model offloading needs accelerate")
    pipe = _tiny_dit_pipeline()
    expected = _generate(copy.deepcopy(pipe))
    pipe.enable_model_cpu_offload()
    assert pipe._execution_device == torch.device("axon", 0)
    got = _generate(pipe)
    assert next(pipe.transformer.parameters()).device.type == "cpu"  # parked after the run
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)


def test_no_warning_from_hooks_on_import():
    """Importing accelerate and transformers in a fresh process gives no warning from Axon."""
    code = textwrap.dedent(
        """
        import warnings
        warnings.simplefilter("error", RuntimeWarning)
        import torch, accelerate, transformers
        from transformers import Trainer, TrainingArguments
        from accelerate import Accelerator
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "torch_axon: could not adapt" not in out.stderr, out.stderr[-3000:]
