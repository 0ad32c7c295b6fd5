"""Hugging Face families: every architecture of a transformers auto mapping, built tiny from its
default config with random weights, driven with inputs of its kind (inputs.py) and compared
with the CPU (compare.py): forward, one training step and greedy generation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from . import inputs
from .compare import FORWARD_TOL, GRAD_TOL, CannotBuild, Case, relative_error, run_case  # noqa: F401  (re-exported)
from .tiny_configs import CannotShrink, tiny_config

NEW_TOKENS = 4
IMAGE_SIDE = 64  # classifiers' images; every stage of a 32x-downsampling network keeps a position


@dataclass(frozen=True)
class Family:
    mapping: str  # auto mapping name in transformers.models.auto.modeling_auto
    generates: bool
    batch: Callable[[torch.nn.Module], inputs.Batch]
    image_side: int | None = None  # images shrunk to this side (None: the config's size)
    missing: tuple[tuple[str, str], ...] = ()  # (attribute, where from) for defaults that leave it None


FAMILIES = {
    "causal-lm": Family("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", True, inputs.text),
    "masked-lm": Family("MODEL_FOR_MASKED_LM_MAPPING_NAMES", False, inputs.text),
    "seq2seq": Family("MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES", True, inputs.text),
    "image-classification": Family(
        "MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES", False, inputs.image_classification, IMAGE_SIDE
    ),
    "audio-classification": Family("MODEL_FOR_AUDIO_CLASSIFICATION_MAPPING_NAMES", False, inputs.audio_classification),
    # A CTC head needs a vocabulary (wav2vec2's 32 characters where the default leaves it open);
    # a decoder trained on labels needs a padding id (the end-of-sequence id, as tokenizers do).
    "ctc": Family("MODEL_FOR_CTC_MAPPING_NAMES", False, inputs.ctc, missing=(("vocab_size", "32"),)),
    "speech-seq2seq": Family(
        "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES", True, inputs.speech_seq2seq, missing=(("pad_token_id", "eos"),)
    ),
    "image-text-to-text": Family("MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES", True, inputs.image_text),
}


def architectures(family: str) -> dict[str, str]:
    """model_type -> model class name of a family's auto mapping."""
    from transformers.models.auto import modeling_auto

    return dict(getattr(modeling_auto, FAMILIES[family].mapping))


def _model_class(family: str, model_type: str):
    import transformers

    name = architectures(family)[model_type]
    if isinstance(name, (list, tuple)):
        name = name[0]
    return getattr(transformers, name)


def _logits(out) -> torch.Tensor:
    return out.logits if hasattr(out, "logits") else out[0]


def _outputs(model, batch: inputs.Batch) -> dict[str, torch.Tensor]:
    with torch.no_grad():
        return {"logits": _logits(model(**batch.model, **batch.decoder))}


def _loss(model, batch: inputs.Batch) -> torch.Tensor:
    return model(**batch.model, labels=batch.labels).loss


def _pad_token(config) -> int | None:
    config = getattr(config, "decoder", None) or config
    pad = getattr(config, "pad_token_id", None)
    if pad is None:
        pad = getattr(config, "eos_token_id", None)
    return pad[0] if isinstance(pad, list) else pad


def _generate(model, batch: inputs.Batch) -> torch.Tensor:
    # through the generation config: some models' generate() pass pad_token_id on themselves (BLIP)
    model.generation_config.pad_token_id = _pad_token(model.config)
    with torch.no_grad():
        out = model.generate(**batch.model, max_new_tokens=NEW_TOKENS, do_sample=False)
    return (out.sequences if hasattr(out, "sequences") else out).cpu()


def _fill_missing(config, missing: tuple[tuple[str, str], ...]) -> None:
    for name, source in missing:
        if getattr(config, name, 0) is None:
            value = _pad_token(config) if source == "eos" else int(source)
            if value is not None:
                setattr(config, name, value)


def case(family: str, model_type: str) -> Case:
    spec = FAMILIES[family]
    try:
        config = tiny_config(model_type, spec.image_side)
    except CannotShrink as e:
        raise CannotBuild(str(e)) from e
    _fill_missing(config, spec.missing)
    model = _model_class(family, model_type)(config).eval()
    batch = spec.batch(model)
    return Case(
        model=model,
        inputs=batch,
        note=batch.note,
        outputs=_outputs,
        loss=_loss,
        generate=_generate if spec.generates else None,
    )


def run(family: str, model_type: str, timeout: float = 300.0) -> dict:
    """The record of one architecture (see report.py for the fields)."""
    return run_case(lambda: case(family, model_type), {"family": family, "arch": model_type}, timeout)
