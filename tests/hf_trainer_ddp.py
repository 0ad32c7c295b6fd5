"""A plain Trainer script, with nothing about devices or distribution in it, for
tests/test_huggingface_trainer.py: run under ``torchrun --nproc-per-node 2`` it must train with
DDP over axon; run alone with the doubled batch it is the reference.

Usage: hf_trainer_ddp.py OUT_DIR PER_DEVICE_BATCH STEPS. Each rank saves to OUT_DIR/rank{R}.pt its
parameters after training, its losses and what accelerate chose.
"""

import os
import sys
from pathlib import Path

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

SEQ, VOCAB, SAMPLES = 16, 64, 8


class Data(torch.utils.data.Dataset):
    """SAMPLES sequences: with a global batch of SAMPLES every step sees all of them, so one
    process and two ranks average the same examples whatever the sampler's order."""

    def __init__(self):
        self.ids = torch.randint(0, VOCAB, (SAMPLES, SEQ), generator=torch.Generator().manual_seed(1))

    def __len__(self):
        return SAMPLES

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def main(out: Path, batch: int, steps: int) -> None:
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=VOCAB, n_positions=SEQ, n_embd=32, n_layer=2, n_head=2)
    config.resid_pdrop = config.embd_pdrop = config.attn_pdrop = 0.0
    model = GPT2LMHeadModel(config)
    start = {k: v.detach().clone() for k, v in model.named_parameters()}
    args = TrainingArguments(
        output_dir=str(out),
        max_steps=steps,
        per_device_train_batch_size=batch,
        # SGD, not Adam: Adam's step hardly changes when gradients are doubled, so it would not
        # tell averaged gradients from summed ones.
        learning_rate=0.5,
        optim="sgd",
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        disable_tqdm=True,
        seed=0,
    )
    torch.axon.fallback_ops(reset=True)
    trainer = Trainer(model=model, args=args, train_dataset=Data())
    trainer.train()
    state = trainer.accelerator.state
    out.mkdir(parents=True, exist_ok=True)
    result = {
        "distributed_type": str(state.distributed_type).split(".")[-1],
        "backend": state.backend,
        "world_size": torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1,
        "wrapped": type(trainer.model_wrapped).__name__,
        "device": str(trainer.args.device),
        "steps": trainer.state.global_step,
        "losses": [e["loss"] for e in trainer.state.log_history if "loss" in e],
        "params": {k: v.detach().float().cpu() for k, v in trainer.model.named_parameters()},
        "start": start,
        "fallbacks": torch.axon.fallback_ops(),
    }
    torch.save(result, out / f"rank{int(os.environ.get('RANK', 0))}.pt")


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
