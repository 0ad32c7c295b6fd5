"""Trains torchtitan's debug Llama (``llama3_debugmodel``) for a few steps and prints its losses as
one JSON line; run by tests/test_torchtitan.py, alone or under torchrun.

    python tests/torchtitan_train.py ASSETS {axon,cpu} STEPS [compile] [spmd=BACKEND]

ASSETS is a folder this script fills on first use with a word-level tokenizer and a JSON-lines
corpus of random words, both made here: nothing is downloaded. The model keeps the debug
configuration (6 layers, dim 256, vocabulary 2048) but for its attention, which is
``DenseVarlenAttention`` (torch_axon.integrations.torchtitan says why), with sequences of 64
tokens, batches of 2, no checkpoints and no validation.

``cpu`` is the reference. torchtitan chooses its device once, at import, from
``torch._utils._get_available_device_type()``, which names axon wherever Axon is installed; for
the reference that choice is replaced by the CPU (``device_type``, a minimal ``device_module``)
and two things Gloo cannot do are avoided: the barrier with ``device_ids`` before torchtitan
lowers its timeouts (skipped; it changes no result) and FSDP2's ``PREMUL_SUM(1.0)`` reduction
(SUM, the same sum, through ``set_force_sum_reduction_for_comms``).

Every run starts from the same weights: torchtitan initialises them on the device, whose random
numbers are not the CPU's, so a CPU build of the model, seeded, is copied into the trained one.
"""

from __future__ import annotations

import json
import os
import random
import sys

import torch

WORDS = [f"w{i}" for i in range(500)]


def make_assets(folder: str) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    os.makedirs(os.path.join(folder, "data"), exist_ok=True)
    vocab = {"<unk>": 0, "<|begin_of_text|>": 1, "<|end_of_text|>": 2}
    vocab.update({word: index + 3 for index, word in enumerate(WORDS)})
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.save(os.path.join(folder, "tokenizer.json"))
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"}, f)
    rng = random.Random(0)
    with open(os.path.join(folder, "data", "train.jsonl"), "w") as f:
        for _ in range(200):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 200)))
            f.write(json.dumps({"text": text}) + "\n")


class _CpuDeviceModule:
    """What torchtitan asks of its ``device_module``, for the CPU reference."""

    set_device = staticmethod(lambda device: None)
    device_count = staticmethod(lambda: 1)
    current_device = staticmethod(lambda: 0)
    get_device_name = staticmethod(lambda device=None: "cpu")
    empty_cache = staticmethod(lambda: None)
    reset_peak_memory_stats = staticmethod(lambda: None)
    memory_stats = staticmethod(lambda device=None: {})
    synchronize = staticmethod(lambda: None)

    class _Properties:
        total_memory = 1 << 34

    get_device_properties = staticmethod(lambda device=None: _CpuDeviceModule._Properties())


def use_cpu() -> None:
    import torchtitan.components.metrics as metrics
    import torchtitan.distributed.fsdp as fsdp
    import torchtitan.distributed.parallel_dims as parallel_dims
    import torchtitan.distributed.utils as dist_utils
    import torchtitan.tools.utils as utils

    for module in (utils, metrics, dist_utils, parallel_dims):
        if hasattr(module, "device_type"):
            module.device_type = "cpu"
        if hasattr(module, "device_module"):
            module.device_module = _CpuDeviceModule
    dist_utils.set_pg_timeouts = lambda **kwargs: None
    disable_division = fsdp.disable_fsdp_gradient_division

    def sum_without_premul(model: torch.nn.Module) -> None:
        disable_division(model)
        for module in model.modules():
            if hasattr(module, "set_force_sum_reduction_for_comms"):
                module.set_force_sum_reduction_for_comms(True)

    fsdp.disable_fsdp_gradient_division = sum_without_premul


def same_initial_weights(trainer, seed: int = 1234) -> None:
    from torch.distributed.tensor import DTensor, distribute_tensor

    torch.manual_seed(seed)
    with torch.device("meta"):
        reference = trainer.model_config.build()
    reference.to_empty(device="cpu")
    with torch.no_grad():
        reference.init_weights(buffer_device=None)
        full = dict(reference.named_parameters())
        for name, parameter in trainer.model_parts[0].named_parameters():
            value = full[name.replace("_checkpoint_wrapped_module.", "")]
            if isinstance(parameter, DTensor):
                value = distribute_tensor(value.to(parameter.device), parameter.device_mesh, parameter.placements)
            parameter.copy_(value)


def main() -> None:
    folder, device, steps, *options = sys.argv[1:]
    if not os.path.exists(os.path.join(folder, "tokenizer.json")):
        make_assets(folder)
    if device == "cpu":
        use_cpu()

    from torchtitan.models.llama3.config_registry import llama3_debugmodel

    from torch_axon.integrations.torchtitan import use_dense_attention

    config = llama3_debugmodel()
    use_dense_attention(config.model_spec)
    config.hf_assets_path = folder
    config.dump_folder = os.path.join(folder, f"out-{device}")
    config.dataloader.dataset_path = os.path.join(folder, "data")
    config.training.seq_len = 64
    config.training.local_batch_size = 2
    config.training.steps = int(steps)
    config.training.disable_cuda_graphs = True
    config.checkpoint.enable = False
    config.validator.enable = False
    config.metrics.log_freq = 1
    config.compile.enable = "compile" in options
    for option in options:
        if option.startswith("spmd="):
            config.parallelism.spmd_backend = option.removeprefix("spmd=")

    trainer = config.build()
    same_initial_weights(trainer)
    steps_seen = []
    log = trainer.metrics_processor.log

    def record(step, global_avg_loss, global_max_loss, grad_norm, extra_metrics=None):
        steps_seen.append({"step": step, "loss": float(global_avg_loss), "grad_norm": float(grad_norm)})
        return log(step, global_avg_loss, global_max_loss, grad_norm, extra_metrics)

    trainer.metrics_processor.log = record
    trainer.train()
    trainer.close()
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
    fallbacks = torch.axon.fallback_ops() if hasattr(torch, "axon") else {}
    result = {"rank": int(os.environ.get("RANK", "0")), "device": str(trainer.device), "steps": steps_seen}
    print("TORCHTITAN_RESULT " + json.dumps(dict(result, fallbacks=fallbacks)), flush=True)


if __name__ == "__main__":
    main()
