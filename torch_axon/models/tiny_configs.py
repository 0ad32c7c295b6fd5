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


def _tokens_in_vocabulary(config) -> None:
    vocab = getattr(config, "vocab_size", None)
    if not isinstance(vocab, int):
        return
    for name in _TOKEN_IDS:
        value = getattr(config, name, None)
        if isinstance(value, int) and value >= vocab:
            _set(config, name, vocab - 1 - _TOKEN_IDS.index(name))
        elif isinstance(value, list):
            _set(config, name, [v if isinstance(v, int) and v < vocab else vocab - 1 for v in value])


def _no_training_noise(config) -> None:
    """Dropout and router jitter off: their draws come from each device's own generator."""
    for name, value in list(config.__dict__.items()):
        random_in_training = "dropout" in name or "jitter" in name or name.endswith("_pdrop")
        if random_in_training and isinstance(value, float):
            _set(config, name, 0.0)


def shrink(config) -> Any:
    """A tiny copy of a transformers config (sub-configs shrunk too)."""
    config = copy.deepcopy(config)
    for value in list(config.__dict__.values()):
        if hasattr(value, "to_dict") and hasattr(value, "model_type"):
            _shrink_in_place(value)
    _shrink_in_place(config)
    return config


def _shrink_in_place(config) -> None:
    _shrink_ints(config)
    _cut_per_layer(config)
    _tokens_in_vocabulary(config)
    _no_training_noise(config)
    if hasattr(config, "use_cache"):
        config.use_cache = True
    if getattr(config, "is_encoder_decoder", False) and getattr(config, "decoder_start_token_id", None) is None:
        # T5's convention: the decoder starts from the padding token
        pad = getattr(config, "pad_token_id", None)
        config.decoder_start_token_id = pad if isinstance(pad, int) else 0


def tiny_config(model_type: str):
    """The tiny config of an architecture, or CannotShrink."""
    from transformers import AutoConfig

    try:
        config = AutoConfig.for_model(model_type)
    except Exception as e:  # noqa: BLE001  (any failure of a third-party default is a reason)
        raise CannotShrink(f"no default config: {type(e).__name__}: {e}") from e
    return shrink(config)
