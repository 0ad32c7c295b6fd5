"""Tiny configurations of Hugging Face architectures, made from each one's default config.

Nothing is downloaded: every model is built from its config with random weights. A default
config describes a full-size model (billions of parameters), so the sizes that drive memory and
time are scaled down where the config has them, keeping what the architecture needs to stay
valid: heads that divide the hidden size, key/value heads that divide the heads, per-layer
lists (``layer_types`` and the like) cut to the new layer count, token ids inside the new
vocabulary, at most a few experts, dropout off so that training steps are deterministic.
"""

from __future__ import annotations

import copy
from typing import Any

from . import tiny_vision

HIDDEN = 64
HEADS = 4
KV_HEADS = 2
HEAD_DIM = HIDDEN // HEADS
LAYERS = 2
VOCAB = 512
INTERMEDIATE = 128

# Attribute -> tiny value, applied where the config has the attribute (directly or through its
# attribute_map) and the current value is larger. Grouped by what they size.
_SIZES: dict[str, int] = {
    # width
    "hidden_size": HIDDEN,
    "d_model": HIDDEN,
    "n_embd": HIDDEN,
    "embed_dim": HIDDEN,
    "intermediate_size": INTERMEDIATE,
    "ffn_dim": INTERMEDIATE,
    "d_ff": INTERMEDIATE,
    "n_inner": INTERMEDIATE,
    "encoder_ffn_dim": INTERMEDIATE,
    "decoder_ffn_dim": INTERMEDIATE,
    "hidden_dim": INTERMEDIATE,
    "projection_dim": HIDDEN,  # a vision tower's output, the text model's width in some
    "out_hidden_size": HIDDEN,  # a Qwen-VL vision tower's merged output: the text model's width
    # depth
    "num_hidden_layers": LAYERS,
    "num_layers": LAYERS,
    "n_layer": LAYERS,
    "encoder_layers": LAYERS,
    "decoder_layers": LAYERS,
    "num_decoder_layers": LAYERS,
    # attention
    "num_attention_heads": HEADS,
    "n_head": HEADS,
    "encoder_attention_heads": HEADS,
    "decoder_attention_heads": HEADS,
    "num_key_value_heads": KV_HEADS,
    "head_dim": HEAD_DIM,
    "d_kv": HEAD_DIM,
    # multi-head latent attention (DeepSeek-style)
    "kv_lora_rank": 32,
    "q_lora_rank": 32,
    "qk_rope_head_dim": 8,
    "qk_nope_head_dim": 8,
    "qk_head_dim": 16,
    "v_head_dim": HEAD_DIM,
    "index_head_dim": 16,
    "index_n_heads": 2,
    "index_topk": 8,
    # mixtures of experts
    "num_experts": 4,
    "num_local_experts": 4,
    "n_routed_experts": 4,
    "moe_num_experts": 4,
    "num_experts_per_tok": 2,
    "moe_topk": 2,
    "top_k": 2,
    "n_shared_experts": 1,
    "num_shared_experts": 1,
    "moe_intermediate_size": 64,
    "shared_expert_intermediate_size": 64,
    "n_group": 1,
    "topk_group": 1,
    "first_k_dense_replace": 1,
    # state-space and recurrent blocks
    "state_size": 16,
    "ssm_state_size": 16,
    "mamba_d_state": 16,
    "mamba_n_heads": 4,
    "mamba_d_head": 32,
    "mamba_n_groups": 1,
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 4,
    "linear_key_head_dim": 16,
    "linear_value_head_dim": 16,
    "time_step_rank": 8,
    # positions and windows (a window shorter than the prompt is still exercised)
    "rotary_dim": 8,
    "attention_hidden_size": HIDDEN,
    "embedding_dim": HIDDEN,
    "embedding_size": HIDDEN,
    "sliding_window": 8,
    "attention_window": 8,
    "chunk_size": 8,
    # vocabulary
    "vocab_size": VOCAB,
}

# Per-layer lists cut to the layer count.
_PER_LAYER = ("layer_types", "layers_block_type", "block_types", "attn_layer_indices", "mlp_only_layers")
_TOKEN_IDS = ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id", "sep_token_id", "cls_token_id")


class CannotShrink(Exception):
    """The architecture's default config could not be made tiny (the reason is the message)."""


# Widths whose equalities in a default config are the architecture's own (DeepSeek's head_dim
# is its rotary part, qk_rope_head_dim): kept equal after shrinking.
_WIDTHS = (
    "hidden_size",
    "d_model",
    "n_embd",
    "embed_dim",
    "attention_hidden_size",
    "embedding_dim",
    "embedding_size",
    "intermediate_size",
    "moe_intermediate_size",
    "shared_expert_intermediate_size",
    "head_dim",
    "d_kv",
    "kv_lora_rank",
    "q_lora_rank",
    "qk_rope_head_dim",
    "qk_nope_head_dim",
    "v_head_dim",
    "index_head_dim",
    "linear_key_head_dim",
    "linear_value_head_dim",
)


def _has(config, name: str) -> bool:
    return name in config.__dict__ or name in getattr(config, "attribute_map", {})


def _settable(config, name: str) -> bool:
    """Not a read-only property (some configs derive per-layer lists from others)."""
    name = getattr(config, "attribute_map", {}).get(name, name)
    attr = getattr(type(config), name, None)
    return not isinstance(attr, property) or attr.fset is not None


def _set(config, name: str, value) -> None:
    if _settable(config, name):
        setattr(config, name, value)


def _int(config, name: str) -> int | None:
    value = getattr(config, name, None) if _has(config, name) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _shrink_ints(config) -> None:
    before = {name: _int(config, name) for name in _WIDTHS}
    heads_were_kv = _int(config, "num_attention_heads") == _int(config, "num_key_value_heads")
    for name, tiny in _SIZES.items():
        value = _int(config, name)
        if value is not None and value > tiny:
            _set(config, name, tiny)
    for value in before.values():
        if value is None:
            continue
        twins = [n for n, v in before.items() if v == value and _int(config, n) is not None]
        smallest = min(_int(config, n) for n in twins)
        for n in twins:
            if _int(config, n) != smallest:
                _set(config, n, smallest)
    # Mamba-2 style heads: as many as fill the expanded width.
    expand, head_dim = _int(config, "expand"), _int(config, "head_dim")
    if _int(config, "num_heads") is not None and expand and head_dim and _int(config, "hidden_size"):
        _set(config, "num_heads", max(1, expand * config.hidden_size // head_dim))
    nope, rope = _int(config, "qk_nope_head_dim"), _int(config, "qk_rope_head_dim")
    if _int(config, "qk_head_dim") is not None and nope is not None and rope is not None:
        _set(config, "qk_head_dim", nope + rope)
    # Left unset (None) by some default configs, which their models then divide by.
    hidden, heads = _int(config, "hidden_size"), _int(config, "num_attention_heads")
    if hidden and heads and _has(config, "head_dim") and getattr(config, "head_dim", 0) is None:
        _set(config, "head_dim", hidden // heads)
    if heads and _has(config, "num_key_value_heads") and getattr(config, "num_key_value_heads", 0) is None:
        _set(config, "num_key_value_heads", heads)
    heads, kv = _int(config, "num_attention_heads"), _int(config, "num_key_value_heads")
    if heads is not None and kv is not None and (heads % kv or heads_were_kv):
        _set(config, "num_key_value_heads", heads)


def _cut_per_layer(config) -> None:
    layers = getattr(config, "num_hidden_layers", None)
    if not isinstance(layers, int):
        return
    for name in _PER_LAYER:
        value = getattr(config, name, None)
        if isinstance(value, list) and value and not isinstance(value[0], int):
            kinds = list(dict.fromkeys(value))  # keep every kind of layer if the count allows
            cut = value[:layers]
            missing = [k for k in kinds if k not in cut]
            if missing and len(kinds) <= layers:
                cut = (cut[: layers - len(missing)] + missing)[:layers]
            _set(config, name, cut)
        elif isinstance(value, list) and value and isinstance(value[0], int):
            # layer indices: those still there, or the last layer (a hybrid keeps one of each)
            _set(config, name, [i for i in value if i < layers] or [layers - 1])
    # Hybrids that place a kind of layer by period and offset: layer 1 of 2 gets it.
    for kind in ("attn_layer", "expert_layer"):
        if _int(config, f"{kind}_period") is not None and _int(config, f"{kind}_offset") is not None:
            _set(config, f"{kind}_period", 2)
            _set(config, f"{kind}_offset", 1)


def _tokens_in_vocabulary(config, vocab: int | None, moved: dict[int, int]) -> None:
    """Token ids past the new vocabulary come back inside it: the common special ids at the top,
    the others (image, audio and video placeholders, begin/end markers) below them, one new id
    for each old one throughout the config and its sub-configs, so that distinct stay distinct."""
    if not isinstance(vocab, int):
        return
    for name in _TOKEN_IDS:
        value = getattr(config, name, None)
        if isinstance(value, int) and value >= vocab:
            _set(config, name, vocab - 1 - _TOKEN_IDS.index(name))
        elif isinstance(value, list):
            _set(config, name, [v if isinstance(v, int) and v < vocab else vocab - 1 for v in value])
    for name, value in list(config.__dict__.items()):
        placeholder = name.endswith(("_token_id", "_token_index")) and name not in _TOKEN_IDS
        if placeholder and isinstance(value, int) and not isinstance(value, bool) and value >= vocab:
            moved.setdefault(value, vocab - 1 - len(_TOKEN_IDS) - len(moved))
            _set(config, name, moved[value])


def _no_training_noise(config) -> None:
    """Dropout, layer drop, drop path, router jitter and SpecAugment's masking off: their draws
    come from each device's own generator (or numpy's, drawn anew for each run)."""
    for name, value in list(config.__dict__.items()):
        random_in_training = "drop" in name or "jitter" in name or (name.startswith("mask_") and name.endswith("_prob"))
        if random_in_training and isinstance(value, float):
            _set(config, name, 0.0)
    if getattr(config, "apply_spec_augment", False):
        _set(config, "apply_spec_augment", False)


def shrink(config, image_side: int | None = None) -> Any:
    """A tiny copy of a transformers config (sub-configs shrunk too); images down to
    ``image_side`` if given (a multimodal model's image-token counts follow its image size, so
    those keep theirs)."""
    config = copy.deepcopy(config)
    moved: dict[int, int] = {}
    configs = _nested_configs(config)
    before = [dict(c.__dict__) for c in configs]
    for c in configs:
        _shrink_in_place(c, moved)
        if image_side:
            tiny_vision.shrink_images(c, image_side)
    _follow_model_widths(configs, before)
    return config


def _is_config(value) -> bool:
    return hasattr(value, "to_dict") and hasattr(value, "model_type")


def _nested_configs(config) -> list:
    """Every config inside ``config`` at any depth (a VLM's vision config holds its SAM and CLIP
    configs), children before their parent, ``config`` last."""
    found = []
    for value in list(config.__dict__.values()):
        if _is_config(value):
            found += _nested_configs(value)
    return [*found, config]


# Widths that name a model's own width: what other configs' widths refer to.
_MODEL_WIDTHS = ("hidden_size", "d_model", "n_embd", "embed_dim", "projection_dim")


def _follow_model_widths(configs: list, before: list[dict]) -> None:
    """Widths that restate another sub-config's width (a Q-Former's encoder_hidden_size, a
    projector's out_hidden_size, a vision tower's mm_hidden_size) follow it down: any hidden
    width or dimension left as it was and equal to a model width that shrank takes its new
    value (the text model's first, where two shrank from the same width)."""
    shrunk: dict[int, int] = {}
    for c, old in sorted(zip(configs, before, strict=True), key=lambda pair: pair[0] is not _text_of(configs)):
        for name in _MODEL_WIDTHS:
            was, now = old.get(name), c.__dict__.get(name)
            if isinstance(was, int) and isinstance(now, int) and now < was:
                shrunk.setdefault(was, now)
    for c, old in zip(configs, before, strict=True):
        for name, value in list(c.__dict__.items()):
            restates = "hidden" in name or name.endswith(("_dim", "_dims", "_channels"))
            unchanged = old.get(name) == value
            if restates and unchanged and isinstance(value, int) and not isinstance(value, bool) and value in shrunk:
                _set(c, name, shrunk[value])


def _text_of(configs: list):
    top = configs[-1]
    return top.get_text_config() if hasattr(top, "get_text_config") else top


def _vocabulary(config) -> int | None:
    """The config's own vocabulary, or its text model's (a multimodal config's placeholders index
    the text model's embeddings)."""
    vocab = getattr(config, "vocab_size", None)
    if vocab is None and hasattr(config, "get_text_config"):
        vocab = getattr(config.get_text_config(), "vocab_size", None)
    return vocab


def _multimodal_rope_fits_the_head(config) -> None:
    """Qwen-VL-style rotary embeddings split each head's rotary half into (time, height, width)
    sections; the default sections ([16, 24, 24]) fit a 128-wide head. Same proportions here."""
    if "mrope_section" not in getattr(type(config), "ignore_keys_at_rope_validation", ()):
        return
    hidden, heads = _int(config, "hidden_size"), _int(config, "num_attention_heads")
    head = _int(config, "head_dim") or (hidden // heads if hidden and heads else None)
    rope = getattr(config, "rope_parameters", None)
    if not head or not isinstance(rope, dict):
        return
    partial = getattr(config, "partial_rotary_factor", None) or rope.get("partial_rotary_factor") or 1.0
    half = int(head * partial) // 2
    time = half // 4
    height = (half - time) // 2
    config.rope_parameters = {**rope, "mrope_section": [time, height, half - time - height]}


def _shrink_in_place(config, moved: dict[int, int]) -> None:
    if tiny_vision.has_stages(config):  # its widths are what its other lists fit
        tiny_vision.one_block_per_stage(config)
    else:
        _shrink_ints(config)
        _multimodal_rope_fits_the_head(config)
    _cut_per_layer(config)
    _tokens_in_vocabulary(config, _vocabulary(config), moved)
    _no_training_noise(config)
    if hasattr(config, "use_cache"):
        config.use_cache = True
    if getattr(config, "is_encoder_decoder", False) and getattr(config, "decoder_start_token_id", None) is None:
        # T5's convention: the decoder starts from the padding token
        pad = getattr(config, "pad_token_id", None)
        config.decoder_start_token_id = pad if isinstance(pad, int) else 0


def tiny_config(model_type: str, image_side: int | None = None):
    """The tiny config of an architecture, or CannotShrink."""
    from transformers import AutoConfig

    try:
        config = AutoConfig.for_model(model_type)
    except Exception as e:  # noqa: BLE001  (any failure of a third-party default is a reason)
        raise CannotShrink(f"no default config: {type(e).__name__}: {e}") from e
    return shrink(config, image_side)
