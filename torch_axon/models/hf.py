"""One Hugging Face architecture, tiny and random, on the CPU and on axon: forward, a training
step and greedy generation, compared.

Matching is judged on the worst element relative to the largest CPU value of the same tensor
(logits, each parameter's gradient), so that tiny random models with small outputs are held
to the same standard as large ones.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import time
import warnings

import torch

from ..conformance import PairTimeout, time_limit
from .tiny_configs import CannotShrink, tiny_config

BATCH, SEQ, NEW_TOKENS = 2, 8, 4
FORWARD_TOL = 1e-3  # relative to the largest logit
GRAD_TOL = 5e-3  # relative to each gradient's largest element

# family -> (auto mapping name in transformers.models.auto.modeling_auto, generates?)
FAMILIES = {
    "causal-lm": ("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", True),
    "masked-lm": ("MODEL_FOR_MASKED_LM_MAPPING_NAMES", False),
    "seq2seq": ("MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES", True),
}


def architectures(family: str) -> dict[str, str]:
    """model_type -> model class name of a family's auto mapping."""
    from transformers.models.auto import modeling_auto

    return dict(getattr(modeling_auto, FAMILIES[family][0]))


def relative_error(cpu: torch.Tensor, axon: torch.Tensor) -> float:
    cpu, axon = cpu.detach().double(), axon.detach().cpu().double()
    if cpu.shape != axon.shape:
        return float("inf")
    if cpu.numel() == 0:
        return 0.0
    both_nan = torch.isnan(cpu) & torch.isnan(axon)
    diff = (cpu - axon).abs().masked_fill(both_nan, 0)
    if torch.isnan(diff).any():
        return float("inf")
    scale = cpu.abs().masked_fill(torch.isnan(cpu), 0).max().item()
    return diff.max().item() / max(scale, 1e-6)


def _model_class(family: str, model_type: str):
    import transformers

    name = architectures(family)[model_type]
    if isinstance(name, (list, tuple)):
        name = name[0]
    return getattr(transformers, name)


def _inputs(config, device: str) -> dict:
    vocab = getattr(config, "vocab_size", None) or getattr(config.get_text_config(), "vocab_size", 512)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(4, max(5, vocab), (BATCH, SEQ), generator=g)
    return {"input_ids": ids.to(device), "attention_mask": torch.ones(BATCH, SEQ, dtype=torch.long, device=device)}


def _logits(out) -> torch.Tensor:
    return out.logits if hasattr(out, "logits") else out[0]


def _forward(model, inputs) -> torch.Tensor:
    if model.config.is_encoder_decoder:  # the decoder reads the same ids
        inputs = {**inputs, "decoder_input_ids": inputs["input_ids"]}
    with torch.no_grad():
        return _logits(model(**inputs))


def _train_step(model, inputs) -> tuple[float, dict[str, torch.Tensor]]:
    model.train()
    model.zero_grad(set_to_none=True)
    loss = model(**inputs, labels=inputs["input_ids"]).loss
    loss.backward()
    model.eval()
    grads = {n: p.grad for n, p in model.named_parameters() if p.grad is not None}
    return float(loss.detach().cpu()), grads


def _generate(model, inputs) -> torch.Tensor:
    config = model.config
    pad = getattr(config, "pad_token_id", None)
    if pad is None:
        pad = getattr(config, "eos_token_id", None)
    if isinstance(pad, list):
        pad = pad[0]
    with torch.no_grad():
        return model.generate(**inputs, max_new_tokens=NEW_TOKENS, do_sample=False, pad_token_id=pad).cpu()


def _untie_zero_weights(model) -> None:
    """Matrices a model initialises to zero (some routers and gates) get small random values:
    with zero router weights every expert ties, and which of tied experts top-k picks is left
    unspecified by PyTorch (the CPU and axon pick different ones, both correctly)."""
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2 and p.is_floating_point() and not p.any():
                p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * 0.02)


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


@contextlib.contextmanager
def _quiet():
    loggers = [logging.getLogger(n) for n in ("transformers", "torch")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            yield
        finally:
            for lg, level in zip(loggers, levels, strict=True):
                lg.setLevel(level)


def run(family: str, model_type: str, timeout: float = 300.0) -> dict:
    """The record of one architecture (see report.py for the fields)."""
    record: dict = {"family": family, "arch": model_type}
    start = time.perf_counter()
    with _quiet():
        try:
            with time_limit(timeout):
                _run(family, model_type, record)
        except PairTimeout:
            record.setdefault("status", "fails")
            record["error"] = f"timeout: no result within {timeout:.0f} s"
    record["seconds"] = round(time.perf_counter() - start, 2)
    return record


def _run(family: str, model_type: str, record: dict) -> None:
    generates = FAMILIES[family][1]
    try:
        config = tiny_config(model_type)
        cls = _model_class(family, model_type)
        torch.manual_seed(0)
        cpu_model = cls(config).eval()
    except CannotShrink as e:
        record.update(status="cannot_build", error=str(e))
        return
    except Exception as e:  # noqa: BLE001
        record.update(status="cannot_build", error=_first_line(e))
        return
    _untie_zero_weights(cpu_model)
    record["parameters"] = sum(p.numel() for p in cpu_model.parameters())
    cpu_inputs = _inputs(config, "cpu")
    try:  # the reference: a model whose forward or training fails on the CPU is excluded
        cpu_logits = _forward(cpu_model, cpu_inputs)
        cpu_loss, cpu_grads = _train_step(cpu_model, cpu_inputs)
    except Exception as e:  # noqa: BLE001
        record.update(status="cpu_fails", error=_first_line(e))
        return
    cpu_tokens = None
    if generates:  # generation failing on the CPU too is noted, and not asked of axon
        try:
            cpu_tokens = _generate(cpu_model, cpu_inputs)
        except Exception as e:  # noqa: BLE001
            record["cpu_generate_error"] = _first_line(e)
    torch.axon.fallback_ops(reset=True)
    try:
        ax_model = copy.deepcopy(cpu_model).to("axon")
        ax_model.zero_grad(set_to_none=True)
        ax_inputs = _inputs(config, "axon")
        record["forward_error"] = relative_error(cpu_logits, _forward(ax_model, ax_inputs))
        record["runs"] = True
        ax_loss, ax_grads = _train_step(ax_model, ax_inputs)
        missing = sorted(set(cpu_grads) - set(ax_grads))
        record["loss_error"] = abs(ax_loss - cpu_loss) / max(abs(cpu_loss), 1e-6)
        record["grad_error"] = (
            max([relative_error(g, ax_grads[n]) for n, g in cpu_grads.items() if n in ax_grads] or [0.0])
            if not missing
            else float("inf")
        )
        record["trains"] = True
        if cpu_tokens is not None:
            tokens = _generate(ax_model, ax_inputs)
            record["generates"] = True
            record["same_tokens"] = bool(torch.equal(tokens, cpu_tokens))
    except Exception as e:  # noqa: BLE001
        record["error"] = _first_line(e)
    finally:
        record["fallbacks"] = torch.axon.fallback_ops(reset=True)
    matches = record.get("forward_error", float("inf")) <= FORWARD_TOL
    trains_ok = record.get("trains") and record.get("grad_error", float("inf")) <= GRAD_TOL
    record["matches"] = bool(record.get("runs") and matches)
    record["trains_match"] = bool(trains_ok)
    record["status"] = (
        "ok"
        if record["matches"] and trains_ok and "error" not in record
        else ("fails" if not record.get("runs") else "differs")
    )
