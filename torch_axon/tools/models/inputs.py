"""Inputs of the right kind for each Hugging Face family, sized from the model's config.

Each builder takes the CPU model and returns a ``Batch``: the keyword arguments of forward and
generate (``model``), the extra ones forward alone takes (``decoder``: an encoder-decoder's
decoder reads the target ids) and the ``labels`` of one training step. Random values come from
a fixed generator, so the CPU and axon see the same batch (it is built once and moved).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

import torch

BATCH, SEQ = 2, 8
AUDIO_SAMPLES = 4000  # a quarter second at 16 kHz: about a dozen frames after wav2vec2's convolutions
AUDIO_FRAMES = 64  # spectrogram frames for models that read features
CTC_LABELS = 4  # label length: well under the frames a tiny input yields


@dataclass
class Batch:
    model: dict
    labels: torch.Tensor
    decoder: dict = field(default_factory=dict)
    note: str = ""


def _generator() -> torch.Generator:
    return torch.Generator().manual_seed(1)


def _first(*values, default=None):
    return next((v for v in values if v is not None), default)


def _text_config(config):
    return config.get_text_config() if hasattr(config, "get_text_config") else config


def _vision_config(config):
    """The config of the model's image encoder: its vision config, a vision encoder-decoder's
    encoder, or the config itself."""
    encoder = getattr(config, "encoder", None)
    encoder = encoder if getattr(encoder, "image_size", None) else None
    return getattr(config, "vision_config", None) or encoder or config


def vocabulary(config) -> int:
    return getattr(config, "vocab_size", None) or getattr(_text_config(config), "vocab_size", None) or 512


def special_token_ids(config) -> set[int]:
    """Every id the config names (image tokens, begin/end of image, padding...): plain text
    avoids them, so that a model that counts its placeholders finds exactly the ones placed."""
    ids: set[int] = set()
    for c in {id(config): config, id(_text_config(config)): _text_config(config)}.values():
        for name, value in c.__dict__.items():
            if name.endswith(("_token_id", "_token_index", "_token_ids")):
                ids.update(v for v in (value if isinstance(value, list) else [value]) if isinstance(v, int))
    return ids


def _placeholder_id(config, kinds: tuple[str, ...]) -> int:
    for c in (config, _text_config(config)):
        for name in kinds:
            value = getattr(c, name, None)
            if isinstance(value, int):
                return value
    raise ValueError(f"the config names no {' or '.join(kinds)}")


def token_ids(config, shape: tuple[int, ...], g: torch.Generator, avoid_special: bool = False) -> torch.Tensor:
    vocab = vocabulary(config)
    ids = torch.randint(4, max(5, vocab), shape, generator=g)
    if avoid_special:
        taken = special_token_ids(config)
        plain = next(i for i in range(4, vocab) if i not in taken)
        for t in taken:
            ids[ids == t] = plain
    return ids


# --- text -----------------------------------------------------------------------------------


def text(model) -> Batch:
    config = model.config
    ids = token_ids(config, (BATCH, SEQ), _generator())
    mask = torch.ones(BATCH, SEQ, dtype=torch.long)
    decoder = {"decoder_input_ids": ids} if config.is_encoder_decoder else {}  # the decoder reads the same ids
    return Batch({"input_ids": ids, "attention_mask": mask}, labels=ids, decoder=decoder)


# --- images ---------------------------------------------------------------------------------


def image_shape(config) -> tuple[int, int, int]:
    """(channels, height, width) from the config (or its vision config)."""
    vision = _vision_config(config)
    channels = _first(getattr(config, "num_channels", None), getattr(vision, "num_channels", None), default=3)
    size = _first(getattr(config, "image_size", None), getattr(vision, "image_size", None), default=64)
    if isinstance(size, dict):  # {"height": h, "width": w}
        size = (size.get("height"), size.get("width"))
    height, width = (size, size) if isinstance(size, int) else tuple(size)[:2]
    return channels, height, width


def pixel_values(config, g: torch.Generator) -> torch.Tensor:
    return torch.randn((BATCH, *image_shape(config)), generator=g)


def image_classification(model) -> Batch:
    config, g = model.config, _generator()
    name = model.main_input_name
    if name == "input_ids":  # ImageGPT reads colour-cluster ids
        inputs = token_ids(config, (BATCH, SEQ), g)
    else:
        inputs = pixel_values(config, g)
    labels = torch.randint(0, config.num_labels, (BATCH,), generator=g)
    return Batch({name: inputs}, labels=labels)


# --- audio ----------------------------------------------------------------------------------


def audio_input(model, g: torch.Generator) -> dict:
    """The audio under the model's main input name: a waveform (input_values) or a spectrogram
    (input_features) of the shape the model's first layer reads."""
    config, name = model.config, model.main_input_name
    if name == "input_values" and getattr(config, "num_mel_bins", None) and getattr(config, "max_length", None):
        # the Audio Spectrogram Transformer: (batch, time, mel bins) at its fixed length
        return {name: torch.randn(BATCH, config.max_length, config.num_mel_bins, generator=g)}
    if name == "input_values":
        audio = torch.randn(BATCH, AUDIO_SAMPLES, generator=g)
    else:
        audio = torch.randn(BATCH, *spectrogram_shape(config), generator=g)
    inputs = {name: audio}
    if not _channels_first(config) and "attention_mask" in inspect.signature(model.forward).parameters:
        # every frame is real; some encoders (Parakeet, LASR) read lengths from the mask
        inputs["attention_mask"] = torch.ones(audio.shape[:2], dtype=torch.long)
    return inputs


def _channels_first(encoder) -> bool:
    """Whisper and the encoders built like it (a mel-bin convolution, a fixed frame count)."""
    whisper_like = any(k in encoder.model_type for k in ("whisper", "voxtral", "qwen"))
    return bool(getattr(encoder, "num_mel_bins", None) and getattr(encoder, "max_source_positions", None)) and (
        whisper_like
    )


def spectrogram_shape(config) -> tuple[int, int]:
    """Whisper-style encoders read (mel bins, 2 x max_source_positions) channels first; the
    others read (frames, features)."""
    encoder = getattr(config, "encoder_config", None) or getattr(config, "audio_config", None) or config
    mel = getattr(encoder, "num_mel_bins", None)
    if _channels_first(encoder):
        return mel, 2 * encoder.max_source_positions
    features = _first(
        (getattr(encoder, "input_feat_per_channel", None) or 0) * (getattr(encoder, "input_channels", None) or 1)
        or None,
        getattr(encoder, "feature_projection_input_dim", None),
        mel,
        getattr(encoder, "feature_size", None),
        default=80,
    )
    return AUDIO_FRAMES, features


def audio_text(model) -> Batch:
    """Each row: the audio's placeholder tokens, then plain text; the labels skip the placeholders."""
    config, g = model.config, _generator()
    encoder = getattr(config, "audio_config", None) or getattr(config, "encoder_config", None) or config
    features = {"input_features": torch.randn(BATCH, *spectrogram_shape(encoder), generator=g)}
    wants = inspect.signature(model.get_audio_features).parameters
    if "input_features_mask" in wants:
        frames = features["input_features"].shape[-1 if _channels_first(encoder) else 1]
        features["input_features_mask"] = torch.ones(BATCH, frames, dtype=torch.long)
    with torch.no_grad():
        count = _tokens_per_sample(config, model.get_audio_features(**features))
    audio_token = _placeholder_id(config, ("audio_token_id", "audio_token_index"))
    ids = torch.cat([torch.full((BATCH, count), audio_token), token_ids(config, (BATCH, SEQ), g, True)], dim=1)
    labels = ids.masked_fill(ids == audio_token, -100)
    return Batch({"input_ids": ids, "attention_mask": torch.ones_like(ids), **features}, labels=labels)


def audio_classification(model) -> Batch:
    g = _generator()
    return Batch(audio_input(model, g), labels=torch.randint(0, model.config.num_labels, (BATCH,), generator=g))


def ctc(model) -> Batch:
    """Labels avoid the padding id, which CTC uses as its blank."""
    config, g = model.config, _generator()
    blank = getattr(config, "pad_token_id", 0) or 0
    labels = torch.randint(1, vocabulary(config), (BATCH, CTC_LABELS), generator=g)
    labels[labels == blank] = 1 if blank != 1 else 2
    return Batch(audio_input(model, g), labels=labels)


def speech_seq2seq(model) -> Batch:
    if model.main_input_name == "input_ids":  # an audio-language model: audio placeholders in the text
        return audio_text(model)
    config, g = model.config, _generator()
    audio = audio_input(model, g)
    ids = token_ids(getattr(config, "decoder", None) or config, (BATCH, SEQ), g, avoid_special=True)
    return Batch(audio, labels=ids, decoder={"decoder_input_ids": ids})


# --- images and text ------------------------------------------------------------------------


def _names_image_token(config) -> bool:
    try:
        image_token_id(config)
        return True
    except ValueError:
        return False


def image_token_id(config) -> int:
    return _placeholder_id(config, ("image_token_id", "image_token_index"))


def _patch_grid_images(config, g: torch.Generator) -> dict:
    """Qwen2-VL-style vision towers read flattened patches and each image's (t, h, w) grid."""
    vision = _vision_config(config)
    merge = vision.spatial_merge_size
    side = 2 * merge  # the smallest grid whose merged tokens still form a square of two
    channels = getattr(vision, "in_channels", None) or getattr(vision, "num_channels", None) or 3
    patch = channels * vision.temporal_patch_size * vision.patch_size**2
    return {
        "pixel_values": torch.randn(BATCH * side * side, patch, generator=g),
        "image_grid_thw": torch.tensor([[1, side, side]] * BATCH),
    }


def _images(model, g: torch.Generator) -> dict:
    config, vision = model.config, _vision_config(model.config)
    if hasattr(vision, "temporal_patch_size") and hasattr(vision, "spatial_merge_size"):
        return _patch_grid_images(config, g)
    images = {"pixel_values": pixel_values(config, g)}
    encoder = getattr(model, "get_image_features", None)
    if encoder is not None and "image_sizes" in inspect.signature(encoder).parameters:  # LLaVA-NeXT style
        images["image_sizes"] = torch.tensor([image_shape(config)[1:]] * BATCH)
    return images


def _image_token_count(model, images: dict) -> int:
    """Image tokens per image: what the model's own image encoder yields for these images."""
    config = model.config
    defaults = {
        name: getattr(config, name)
        for name in ("vision_feature_layer", "vision_feature_select_strategy")
        if getattr(config, name, None) is not None
    }
    with torch.no_grad():
        return _tokens_per_sample(config, model.get_image_features(**images, **defaults))


def _tokens_per_sample(config, out) -> int:
    """How many text positions an encoder's features fill per sample: its projected features
    (pooler_output, or the output itself), as wide as the text model."""
    features = getattr(out, "pooler_output", None)
    features = out if features is None else features
    parts = features if isinstance(features, (list, tuple)) else [features]
    width = _text_config(config).hidden_size
    if any(p.shape[-1] != width for p in parts):
        raise ValueError(f"encoder features {parts[0].shape[-1]} wide for a text model {width} wide")
    return sum(p.numel() for p in parts) // width // BATCH


def image_text(model) -> Batch:
    """Each row: (vision start), the image's placeholder tokens, then plain text; the labels
    skip the placeholders."""
    config, g = model.config, _generator()
    images = _images(model, g)
    placeholders = hasattr(model, "get_image_features") and _names_image_token(config)
    # Without an image token (BLIP's captioner, BLIP-2's query tokens) the images are not in the text.
    prefix = [image_token_id(config)] * _image_token_count(model, images) if placeholders else []
    start = getattr(config, "vision_start_token_id", None)
    if isinstance(start, int):
        prefix = [start, *prefix]
    text = token_ids(config, (BATCH, SEQ), g, avoid_special=True)
    ids = torch.cat([torch.tensor([prefix] * BATCH, dtype=torch.long).reshape(BATCH, -1), text], dim=1)
    labels = ids.masked_fill(torch.isin(ids, torch.tensor(sorted(special_token_ids(config)) or [-1])), -100)
    kwargs = {"input_ids": ids, "attention_mask": torch.ones_like(ids), **images}
    if placeholders and "mm_token_type_ids" in inspect.signature(model.forward).parameters:
        # what a processor returns beside the ids: 1 marks image tokens (multimodal rotary positions)
        kwargs["mm_token_type_ids"] = (ids == image_token_id(config)).long()
    note = "" if placeholders else "no image placeholders in the text: whether the image is read is the model's"
    return Batch(kwargs, labels=labels, note=note)
