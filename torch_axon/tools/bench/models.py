"""Model workloads of the benchmark suite: whole training steps, inference and decoding.

Every workload builds its model on the CPU right after seeding, then moves it to the device, so
the CPU and axon runs start from identical weights and inputs; nothing is downloaded. ``quick``
shrinks every shape so all workloads run on both devices within seconds (a smoke test, not a
measurement).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

import torch
import torch.nn.functional as F
from torch import nn

from .timing import synchronize

SEED = 0
# Each workload's shapes below are dicts keyed by quick.


@dataclass
class ModelWorkload:
    name: str  # short id, e.g. "mlp_train"
    title: str  # human description including the shapes
    unit: str  # "samples/s" or "tokens/s"
    units_per_call: Callable[[bool], float]  # quick -> samples or tokens one call processes
    build: Callable[[str, bool], Callable[[], object]]  # (device, quick) -> one call, unsynchronised


# ---- shared plumbing -----------------------------------------------------------------------------


def _on(device: str, factory: Callable[[], nn.Module]) -> nn.Module:
    """Builds on the CPU under a fixed seed: the weights must not depend on the device's RNG."""
    torch.manual_seed(SEED)
    return factory().to(device)


def _randint(high: int, shape: tuple[int, ...], device: str) -> torch.Tensor:
    """Inputs drawn from a private generator, so they do not shift the weights' seed."""
    return torch.randint(high, shape, generator=torch.Generator().manual_seed(SEED + 1)).to(device)


def _randn(shape: tuple[int, ...], device: str) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(SEED + 1)).to(device)


def _train_step(model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor) -> Callable[[], torch.Tensor]:
    """One forward, backward and AdamW update; the loss stays on the device (no sync)."""
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step() -> torch.Tensor:
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()

    return step


def _infer_step(model: nn.Module, call: Callable[[nn.Module], object]) -> Callable[[], object]:
    model.eval()  # fixed BatchNorm statistics, no dropout: the CPU and axon outputs must agree

    def step() -> object:
        with torch.no_grad():
            return call(model)

    return step


def _transformers():
    try:
        import transformers
    except ImportError as e:  # the suite reports the workload as skipped
        raise RuntimeError("transformers is not installed") from e
    return transformers


# ---- 1. MLP training -----------------------------------------------------------------------------

MLP = {False: {"batch": 256, "widths": (1024, 4096, 4096, 10)}, True: {"batch": 8, "widths": (32, 64, 64, 10)}}


def _mlp(widths: tuple[int, ...]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for n_in, n_out in pairwise(widths):
        layers += [nn.Linear(n_in, n_out), nn.ReLU()]
    return nn.Sequential(*layers[:-1])  # the output layer gives logits, no ReLU


def _build_mlp(device: str, quick: bool) -> Callable[[], object]:
    s = MLP[quick]
    model = _on(device, lambda: _mlp(s["widths"]))
    inputs = _randn((s["batch"], s["widths"][0]), device)
    targets = _randint(s["widths"][-1], (s["batch"],), device)
    return _train_step(model, inputs, targets)


# ---- 1b. A small MLP with a pointwise loss (issue 11): pow(x, 2) in the loss's backward too --------

MLP_SQUARE = {False: {"batch": 128, "widths": (512, 1024, 512)}, True: {"batch": 8, "widths": (32, 64, 32)}}


def _build_mlp_square(device: str, quick: bool, wrap: Callable = lambda m: m) -> Callable[[], object]:
    """``wrap`` turns the model into what the step calls (torch.compile for the compiled rows)."""
    s = MLP_SQUARE[quick]
    model = _on(device, lambda: _mlp(s["widths"]))
    model.train()
    forward = wrap(model)
    inputs = _randn((s["batch"], s["widths"][0]), device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step() -> torch.Tensor:
        loss = forward(inputs).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()

    return step


# ---- 2. GPT-style decoder training ---------------------------------------------------------------

GPT = {
    False: {"d_model": 384, "layers": 6, "heads": 6, "vocab": 24576, "seq": 256, "batch": 4},
    True: {"d_model": 32, "layers": 2, "heads": 2, "vocab": 128, "seq": 16, "batch": 2},
}


class _Block(nn.Module):
    """Pre-LN transformer block: causal self-attention, then a 4x GELU MLP, each residual."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        # (b, t, 3d) -> three (b, heads, t, d/heads) tensors
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class _GPT(nn.Module):
    def __init__(self, d_model: int, layers: int, heads: int, vocab: int, seq: int, **_batch):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(seq, d_model)
        self.blocks = nn.Sequential(*(_Block(d_model, heads) for _ in range(layers)))
        self.ln = nn.LayerNorm(d_model)
        # GPT-2 initialisation: with PyTorch's default N(0, 1) embeddings the tied head's logits
        # would be huge and the loss far from the ln(vocab) a real model starts at.
        for p in (self.tok.weight, self.pos.weight):
            nn.init.normal_(p, std=0.02)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        return self.ln(self.blocks(x)) @ self.tok.weight.T  # LM head tied to the token embedding


def _build_gpt(device: str, quick: bool) -> Callable[[], object]:
    s = GPT[quick]
    model = _on(device, lambda: _GPT(**s))
    tokens = _randint(s["vocab"], (s["batch"], s["seq"] + 1), device)
    # Next-token prediction; contiguous once here rather than copied in every call.
    return _train_step(model, tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous())


# ---- 3. ResNet-18 inference ----------------------------------------------------------------------

RESNET = {False: {"batch": 8, "image": 224, "width": 64}, True: {"batch": 2, "image": 32, "width": 8}}


class _BasicBlock(nn.Module):
    def __init__(self, n_in: int, n_out: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(n_in, n_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(n_out)
        self.conv2 = nn.Conv2d(n_out, n_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(n_out)
        self.down = None
        if stride != 1 or n_in != n_out:  # the residual must match the new shape
            self.down = nn.Sequential(nn.Conv2d(n_in, n_out, 1, stride, bias=False), nn.BatchNorm2d(n_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(y + (x if self.down is None else self.down(x)))


def resnet18(width: int = 64, classes: int = 1000) -> nn.Sequential:
    """torchvision's resnet18 layout: a 7x7 stem, four stages of two BasicBlocks, pool, fc."""
    layers: list[nn.Module] = [
        nn.Conv2d(3, width, 7, 2, 3, bias=False),
        nn.BatchNorm2d(width),
        nn.ReLU(),
        nn.MaxPool2d(3, 2, 1),
    ]
    n_in = width
    for stage in range(4):
        n_out = width << stage
        layers += [_BasicBlock(n_in, n_out, 1 if stage == 0 else 2), _BasicBlock(n_out, n_out, 1)]
        n_in = n_out
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(n_in, classes))


def _build_resnet18(device: str, quick: bool) -> Callable[[], object]:
    s = RESNET[quick]
    model = _on(device, lambda: resnet18(s["width"]))
    images = _randn((s["batch"], 3, s["image"], s["image"]), device)
    return _infer_step(model, lambda m: m(images))


# ---- 4. BERT-base encoder inference --------------------------------------------------------------

BERT = {
    False: {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072},
    True: {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64},
}
BERT_INPUT = {False: {"batch": 8, "seq": 128, "vocab_size": 30522}, True: {"batch": 2, "seq": 16, "vocab_size": 128}}


def _bert(quick: bool) -> nn.Module:
    transformers = _transformers()
    config = transformers.BertConfig(
        **BERT[quick], vocab_size=BERT_INPUT[quick]["vocab_size"], attn_implementation="sdpa"
    )
    return transformers.BertModel(config)


def _build_bert(device: str, quick: bool) -> Callable[[], object]:
    s = BERT_INPUT[quick]
    model = _on(device, lambda: _bert(quick))
    ids = _randint(model.config.vocab_size, (s["batch"], s["seq"]), device)
    return _infer_step(model, lambda m: m(input_ids=ids).last_hidden_state)


# ---- 5. Llama decoding ---------------------------------------------------------------------------

LLAMA = {
    False: {
        "hidden_size": 512,
        "intermediate_size": 1408,
        "num_hidden_layers": 8,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "vocab_size": 32000,
        "max_position_embeddings": 256,
    },
    True: {
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 128,
        "max_position_embeddings": 64,
    },
}
LLAMA_DECODE = {False: {"prompt": 16, "new_tokens": 64}, True: {"prompt": 4, "new_tokens": 8}}


def _llama(quick: bool) -> nn.Module:
    transformers = _transformers()
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(**LLAMA[quick], attn_implementation="sdpa"))


def _build_llama(device: str, quick: bool) -> Callable[[], object]:
    s = LLAMA_DECODE[quick]
    model = _on(device, lambda: _llama(quick))
    prompt = _randint(model.config.vocab_size, (1, s["prompt"]), device)
    n = s["new_tokens"]
    # min_new_tokens: an end-of-sequence token must not cut a call short and change its work.
    return _infer_step(
        model,
        lambda m: m.generate(
            prompt, max_new_tokens=n, min_new_tokens=n, do_sample=False, use_cache=True, pad_token_id=0
        ),
    )


# ---- the list ------------------------------------------------------------------------------------

WORKLOADS: list[ModelWorkload] = [
    ModelWorkload(
        "mlp_train",
        "MLP training step (AdamW), batch 256, 1024-4096-4096-10",
        "samples/s",
        lambda quick: MLP[quick]["batch"],
        _build_mlp,
    ),
    ModelWorkload(
        "mlp_square_train",
        "MLP training step (AdamW), batch 128, 512-1024-512, model(x).square().mean() loss",
        "samples/s",
        lambda quick: MLP_SQUARE[quick]["batch"],
        _build_mlp_square,
    ),
    ModelWorkload(
        "gpt_train",
        "GPT decoder training step (AdamW), 20M params, d 384, 6 layers, 6 heads, vocab 24576, batch 4 x seq 256",
        "tokens/s",
        lambda quick: GPT[quick]["batch"] * GPT[quick]["seq"],
        _build_gpt,
    ),
    ModelWorkload(
        "resnet18_infer",
        "ResNet-18 inference, batch 8, 3x224x224",
        "samples/s",
        lambda quick: RESNET[quick]["batch"],
        _build_resnet18,
    ),
    ModelWorkload(
        "bert_infer",
        "BERT-base encoder inference (transformers, sdpa), 12 layers, hidden 768, batch 8 x seq 128",
        "samples/s",
        lambda quick: BERT_INPUT[quick]["batch"],
        _build_bert,
    ),
    ModelWorkload(
        "llama_decode",
        "Llama greedy decode with KV cache (transformers), 8 layers, hidden 512, GQA 8/2, prompt 16 + 64 new tokens",
        "tokens/s",
        lambda quick: LLAMA_DECODE[quick]["new_tokens"],
        _build_llama,
    ),
]


# ---- where the time goes -------------------------------------------------------------------------


def slowest_ops(step: Callable[[], object], device: str, top: int = 3) -> list[dict]:
    """The ops with the most self time over two calls of step (warm it up first: the timer does).

    On axon the ranking is by device time; kernels also appear as rows of their own in
    key_averages(), so only the aten ops (CPU rows) are counted, each once. When no device time
    was recorded (a device without event profiling, or the CPU) self CPU time is used instead.
    Returns [{"op": name, "self_ms": milliseconds per call, "share": fraction of the total}].
    """
    from torch.profiler import ProfilerActivity, profile

    calls = 2
    activities = [ProfilerActivity.CPU]
    if device.startswith("axon"):
        activities.append(ProfilerActivity.PrivateUse1)
    with profile(activities=activities) as prof:
        for _ in range(calls):
            step()
        synchronize(device)  # device work still queued must land inside the trace
    ops = [e for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CPU]
    us = {e.key: e.self_device_time_total for e in ops}
    if not any(us.values()):
        us = {e.key: e.self_cpu_time_total for e in ops}
    total = sum(us.values()) or 1.0
    ranked = sorted(us.items(), key=lambda kv: kv[1], reverse=True)[:top]
    return [{"op": key, "self_ms": t / calls / 1e3, "share": t / total} for key, t in ranked]


if __name__ == "__main__":  # parameter counts of the full-size models
    factories = {
        "mlp_train": lambda: _mlp(MLP[False]["widths"]),
        "mlp_square_train": lambda: _mlp(MLP_SQUARE[False]["widths"]),
        "gpt_train": lambda: _GPT(**GPT[False]),
        "resnet18_infer": resnet18,
        "bert_infer": lambda: _bert(False),
        "llama_decode": lambda: _llama(False),
    }
    for name, factory in factories.items():
        try:
            print(f"{name:16s} {sum(p.numel() for p in factory().parameters()) / 1e6:7.2f} M parameters")
        except RuntimeError as e:
            print(f"{name:16s} skipped: {e}")
