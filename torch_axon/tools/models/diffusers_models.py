"""The diffusers family: tiny random-weight configurations of diffusers' model classes (UNets,
diffusion transformers, autoencoders, ControlNets), each built from its constructor alone (no
download) and driven with the inputs its pipelines give it: noisy latents, timesteps, text
embeddings, class labels or added conditions, as the model needs.

Compared: every tensor of the model's output (``.sample``, the noise or velocity prediction, or
an autoencoder's reconstruction; a ControlNet's residuals). One training step: the sum over those
tensors of the mean of squares.

An architecture is named after its class; a suffix names a second configuration of the same
class (``UNet2DConditionModel-sdxl``: the added text and time conditions of SDXL). Every other
model class diffusers exports is in LEFT_OUT with the reason (a test keeps the two lists whole).
torchvision, where the model zoo has it, is put on the path before diffusers is imported: Cosmos
resizes its padding mask with it.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from . import model_zoo
from .compare import CannotBuild, Case, Outputs

BATCH = 2
TEXT = 6  # tokens of the stand-in text encoder's output

Built = tuple[torch.nn.Module, dict]  # the model (random weights) and its forward's keyword arguments


def _randn(g: torch.Generator, *shape: int) -> torch.Tensor:
    return torch.randn(shape, generator=g)


def _steps(g: torch.Generator, high: float = 1000.0) -> torch.Tensor:
    """A timestep per sample, as the schedulers give them (floats in [0, high))."""
    return torch.rand(BATCH, generator=g) * high


# --- UNets ----------------------------------------------------------------------------------


def _unet_2d(g: torch.Generator) -> Built:
    from diffusers import UNet2DModel

    model = UNet2DModel(
        sample_size=16,
        block_out_channels=(32, 64),
        layers_per_block=1,
        down_block_types=("DownBlock2D", "AttnDownBlock2D"),
        up_block_types=("AttnUpBlock2D", "UpBlock2D"),
        norm_num_groups=8,
        attention_head_dim=8,
    )
    return model, {"sample": _randn(g, BATCH, 3, 16, 16), "timestep": _steps(g)}


def _unet_2d_class(g: torch.Generator) -> Built:
    """Class-conditional (``class_embed_type=None`` with ``num_class_embeds``), as in DDPM on CIFAR."""
    from diffusers import UNet2DModel

    model = UNet2DModel(
        sample_size=16,
        block_out_channels=(32, 64),
        layers_per_block=1,
        down_block_types=("ResnetDownsampleBlock2D", "AttnDownBlock2D"),
        up_block_types=("AttnUpBlock2D", "ResnetUpsampleBlock2D"),
        norm_num_groups=8,
        attention_head_dim=8,
        num_class_embeds=10,
        resnet_time_scale_shift="scale_shift",
    )
    labels = torch.randint(0, 10, (BATCH,), generator=g)
    return model, {"sample": _randn(g, BATCH, 3, 16, 16), "timestep": _steps(g), "class_labels": labels}


_CROSS = 32  # width of the stand-in text embeddings


def _unet_condition_kwargs() -> dict:
    return {
        "sample_size": 16,
        "block_out_channels": (32, 64),
        "layers_per_block": 1,
        "down_block_types": ("CrossAttnDownBlock2D", "DownBlock2D"),
        "up_block_types": ("UpBlock2D", "CrossAttnUpBlock2D"),
        "cross_attention_dim": _CROSS,
        "attention_head_dim": 8,
        "norm_num_groups": 8,
    }


def _unet_2d_condition(g: torch.Generator) -> Built:
    from diffusers import UNet2DConditionModel

    model = UNet2DConditionModel(**_unet_condition_kwargs())
    inputs = {"sample": _randn(g, BATCH, 4, 16, 16), "timestep": _steps(g)}
    return model, {**inputs, "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}


def _unet_2d_condition_sdxl(g: torch.Generator) -> Built:
    """SDXL's conditioning: pooled text embeddings and six size/crop numbers, a linear
    projection in every transformer block, two transformer layers in the second block."""
    from diffusers import UNet2DConditionModel

    kwargs = _unet_condition_kwargs()
    kwargs.update(
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        transformer_layers_per_block=(1, 2),
        use_linear_projection=True,
        addition_embed_type="text_time",
        addition_time_embed_dim=8,
        projection_class_embeddings_input_dim=_CROSS + 6 * 8,
        attention_head_dim=(4, 8),
    )
    model = UNet2DConditionModel(**kwargs)
    added = {"text_embeds": _randn(g, BATCH, _CROSS), "time_ids": torch.rand(BATCH, 6, generator=g) * 64}
    inputs = {"sample": _randn(g, BATCH, 4, 16, 16), "timestep": _steps(g)}
    return model, {**inputs, "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS), "added_cond_kwargs": added}


def _unet_1d(g: torch.Generator) -> Built:
    """Dance Diffusion's layout (its defaults are already small), on 256 audio samples."""
    from diffusers import UNet1DModel

    # extra_in_channels: the Fourier time embedding is concatenated to the input channels. (Its
    # attention has a head per 32 channels: no narrower.)
    model = UNet1DModel(sample_size=256, time_embedding_dim=16, extra_in_channels=16)
    return model, {"sample": _randn(g, BATCH, 2, 256), "timestep": _steps(g, 1.0)}


def _unet_3d_condition(g: torch.Generator) -> Built:
    from diffusers import UNet3DConditionModel

    model = UNet3DConditionModel(
        sample_size=8,
        block_out_channels=(32, 64),
        layers_per_block=1,
        down_block_types=("CrossAttnDownBlock3D", "DownBlock3D"),
        up_block_types=("UpBlock3D", "CrossAttnUpBlock3D"),
        cross_attention_dim=_CROSS,
        attention_head_dim=8,
        norm_num_groups=8,
    )
    inputs = {"sample": _randn(g, BATCH, 4, 3, 8, 8), "timestep": _steps(g)}  # (batch, channels, frames, h, w)
    return model, {**inputs, "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}


def _controlnet(g: torch.Generator) -> Built:
    from diffusers import ControlNetModel

    kwargs = _unet_condition_kwargs()
    del kwargs["up_block_types"], kwargs["sample_size"]
    model = ControlNetModel(**kwargs, conditioning_embedding_out_channels=(8, 16))
    inputs = {"sample": _randn(g, BATCH, 4, 16, 16), "timestep": _steps(g)}
    inputs["encoder_hidden_states"] = _randn(g, BATCH, TEXT, _CROSS)
    inputs["controlnet_cond"] = torch.rand(BATCH, 3, 32, 32, generator=g)  # an image twice the latents' side
    return model, inputs


# --- diffusion transformers -------------------------------------------------------------------


def _transformer_2d(g: torch.Generator) -> Built:
    """The continuous-input transformer of Stable Diffusion's UNet blocks, on its own."""
    from diffusers import Transformer2DModel

    model = Transformer2DModel(
        num_attention_heads=2, attention_head_dim=8, in_channels=32, num_layers=2, norm_num_groups=8,
        cross_attention_dim=_CROSS,
    )  # fmt: skip
    return model, {"hidden_states": _randn(g, BATCH, 32, 8, 8), "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}


def _dit(g: torch.Generator) -> Built:
    from diffusers import DiTTransformer2DModel

    model = DiTTransformer2DModel(
        num_attention_heads=2, attention_head_dim=8, in_channels=4, out_channels=8, num_layers=2, sample_size=8,
        num_embeds_ada_norm=10,
    )  # fmt: skip
    labels = torch.randint(0, 10, (BATCH,), generator=g)
    return model, {"hidden_states": _randn(g, BATCH, 4, 8, 8), "timestep": _steps(g).long(), "class_labels": labels}


def _pixart(g: torch.Generator) -> Built:
    from diffusers import PixArtTransformer2DModel

    model = PixArtTransformer2DModel(
        num_attention_heads=2, attention_head_dim=8, in_channels=4, out_channels=8, num_layers=2, sample_size=8,
        cross_attention_dim=16, caption_channels=_CROSS,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 8, 8), "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}
    return model, {**inputs, "timestep": _steps(g), "added_cond_kwargs": {"resolution": None, "aspect_ratio": None}}


def _sd3(g: torch.Generator) -> Built:
    from diffusers import SD3Transformer2DModel

    model = SD3Transformer2DModel(
        sample_size=8, patch_size=2, in_channels=4, num_layers=2, attention_head_dim=8, num_attention_heads=2,
        joint_attention_dim=_CROSS, caption_projection_dim=16, pooled_projection_dim=16, out_channels=4,
        pos_embed_max_size=16, dual_attention_layers=(0,), qk_norm="rms_norm",
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 8, 8), "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}
    return model, {**inputs, "pooled_projections": _randn(g, BATCH, 16), "timestep": _steps(g)}


def _image_ids(height: int, width: int) -> torch.Tensor:
    """Flux's positions of the packed latents: (0, row, column) per token."""
    rows, cols = torch.meshgrid(torch.arange(height), torch.arange(width), indexing="ij")
    return torch.stack([torch.zeros_like(rows), rows, cols], dim=-1).reshape(-1, 3).float()


def _flux(g: torch.Generator) -> Built:
    from diffusers import FluxTransformer2DModel

    model = FluxTransformer2DModel(
        in_channels=16, num_layers=1, num_single_layers=1, attention_head_dim=16, num_attention_heads=2,
        joint_attention_dim=_CROSS, pooled_projection_dim=16, guidance_embeds=True, axes_dims_rope=(4, 4, 8),
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 16, 16), "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}
    inputs.update(pooled_projections=_randn(g, BATCH, 16), timestep=_steps(g, 1.0), guidance=torch.full((BATCH,), 3.5))
    return model, {**inputs, "img_ids": _image_ids(4, 4), "txt_ids": torch.zeros(TEXT, 3)}


def _chroma(g: torch.Generator) -> Built:
    from diffusers import ChromaTransformer2DModel

    model = ChromaTransformer2DModel(
        in_channels=16, num_layers=1, num_single_layers=1, attention_head_dim=16, num_attention_heads=2,
        joint_attention_dim=_CROSS, axes_dims_rope=(4, 4, 8), approximator_num_channels=8,
        approximator_hidden_dim=32, approximator_layers=1,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 16, 16), "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}
    return model, {**inputs, "timestep": _steps(g, 1.0), "img_ids": _image_ids(4, 4), "txt_ids": torch.zeros(TEXT, 3)}


def _auraflow(g: torch.Generator) -> Built:
    from diffusers import AuraFlowTransformer2DModel

    model = AuraFlowTransformer2DModel(
        sample_size=8, patch_size=2, in_channels=4, num_mmdit_layers=1, num_single_dit_layers=1,
        attention_head_dim=8, num_attention_heads=2, joint_attention_dim=_CROSS, caption_projection_dim=16,
        out_channels=4, pos_embed_max_size=64,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 8, 8), "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}
    # Its pipeline's timesteps lie in [0, 1]: the model multiplies them by 1000 before the sinusoids.
    return model, {**inputs, "timestep": _steps(g, 1.0)}


def _sana(g: torch.Generator) -> Built:
    from diffusers import SanaTransformer2DModel

    model = SanaTransformer2DModel(
        in_channels=4, out_channels=4, num_attention_heads=2, attention_head_dim=8, num_layers=2,
        num_cross_attention_heads=2, cross_attention_head_dim=8, cross_attention_dim=16, caption_channels=_CROSS,
        sample_size=8,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 8, 8), "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}
    return model, {**inputs, "timestep": _steps(g)}


def _hunyuan_dit(g: torch.Generator) -> Built:
    from diffusers import HunyuanDiT2DModel

    model = HunyuanDiT2DModel(
        num_attention_heads=2, attention_head_dim=8, in_channels=4, patch_size=2, sample_size=8, hidden_size=16,
        num_layers=2, cross_attention_dim=_CROSS, cross_attention_dim_t5=_CROSS, pooled_projection_dim=16,
        text_len=TEXT, text_len_t5=TEXT,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 8, 8), "timestep": _steps(g)}
    inputs["encoder_hidden_states"] = _randn(g, BATCH, TEXT, _CROSS)
    inputs["text_embedding_mask"] = torch.ones(BATCH, TEXT, dtype=torch.long)
    inputs["encoder_hidden_states_t5"] = _randn(g, BATCH, TEXT, _CROSS)
    inputs["text_embedding_mask_t5"] = torch.ones(BATCH, TEXT, dtype=torch.long)
    inputs["image_meta_size"] = torch.tensor([[64, 64, 64, 64, 0, 0]] * BATCH, dtype=torch.float)
    inputs["style"] = torch.zeros(BATCH, dtype=torch.long)
    # Rotary embeddings for an 4 x 4 grid of patches (the pipeline computes them beforehand).
    from diffusers.models.embeddings import get_2d_rotary_pos_embed

    inputs["image_rotary_emb"] = get_2d_rotary_pos_embed(8, ((0, 0), (4, 4)), (4, 4))
    return model, inputs


def _lumina2(g: torch.Generator) -> Built:
    from diffusers import Lumina2Transformer2DModel

    model = Lumina2Transformer2DModel(
        sample_size=8, patch_size=2, in_channels=4, hidden_size=32, num_layers=2, num_refiner_layers=1,
        num_attention_heads=2, num_kv_heads=1, multiple_of=16, axes_dim_rope=(4, 6, 6), axes_lens=(32, 32, 32),
        cap_feat_dim=_CROSS,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 8, 8), "timestep": _steps(g, 1.0)}
    inputs["encoder_hidden_states"] = _randn(g, BATCH, TEXT, _CROSS)
    inputs["encoder_attention_mask"] = torch.ones(BATCH, TEXT, dtype=torch.bool)
    return model, inputs


def _prior(g: torch.Generator) -> Built:
    """unCLIP's prior: a CLIP image embedding from a text embedding."""
    from diffusers import PriorTransformer

    model = PriorTransformer(num_attention_heads=2, attention_head_dim=8, num_layers=2, embedding_dim=16,
                             num_embeddings=TEXT)  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 16), "timestep": _steps(g), "proj_embedding": _randn(g, BATCH, 16)}
    inputs["encoder_hidden_states"] = _randn(g, BATCH, TEXT, 16)
    inputs["attention_mask"] = torch.ones(BATCH, TEXT, dtype=torch.bool)
    return model, inputs


def _uvit(g: torch.Generator) -> Built:
    """aMUSEd's masked-token transformer: logits over the VQ codebook per latent position."""
    from diffusers import UVit2DModel

    model = UVit2DModel(
        hidden_size=32, cond_embed_dim=_CROSS, micro_cond_encode_dim=4, micro_cond_embed_dim=5 * 4,
        encoder_hidden_size=_CROSS, vocab_size=33, codebook_size=32, in_channels=16, block_out_channels=16,
        num_res_blocks=1, block_num_heads=2, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        sample_size=4,
    )  # fmt: skip
    inputs = {"input_ids": torch.randint(0, 33, (BATCH, 4, 4), generator=g)}
    inputs["encoder_hidden_states"] = _randn(g, BATCH, TEXT, _CROSS)
    inputs["pooled_text_emb"] = _randn(g, BATCH, _CROSS)
    inputs["micro_conds"] = torch.tensor([[64.0, 64.0, 0.0, 0.0, 6.0]] * BATCH)
    return model, inputs


def _stable_audio(g: torch.Generator) -> Built:
    from diffusers import StableAudioDiTModel

    model = StableAudioDiTModel(
        sample_size=16, in_channels=4, num_layers=2, attention_head_dim=8, num_attention_heads=2,
        num_key_value_attention_heads=1, out_channels=4, cross_attention_dim=16, time_proj_dim=16,
        global_states_input_dim=16, cross_attention_input_dim=_CROSS,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 16), "timestep": _steps(g, 1.0)}
    inputs["encoder_hidden_states"] = _randn(g, BATCH, TEXT, _CROSS)
    inputs["global_hidden_states"] = _randn(g, BATCH, 1, 16)
    from diffusers.models.embeddings import get_1d_rotary_pos_embed

    # rotary embedding over half of each head, for the latents and the global token (the pipeline's)
    inputs["rotary_embedding"] = get_1d_rotary_pos_embed(4, 16 + 1, use_real=True, repeat_interleave_real=False)
    return model, inputs


def _latte(g: torch.Generator) -> Built:
    from diffusers import LatteTransformer3DModel

    model = LatteTransformer3DModel(
        num_attention_heads=2, attention_head_dim=8, in_channels=4, out_channels=8, num_layers=1,
        cross_attention_dim=16, sample_size=8, patch_size=2, num_embeds_ada_norm=1000, norm_type="ada_norm_single",
        caption_channels=_CROSS, video_length=2,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 2, 8, 8), "timestep": _steps(g)}
    return model, {**inputs, "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}


def _cogvideox(g: torch.Generator) -> Built:
    from diffusers import CogVideoXTransformer3DModel

    model = CogVideoXTransformer3DModel(
        num_attention_heads=2, attention_head_dim=8, in_channels=4, out_channels=4, time_embed_dim=8,
        text_embed_dim=_CROSS, num_layers=1, sample_width=8, sample_height=8, sample_frames=9, patch_size=2,
        temporal_compression_ratio=4, max_text_seq_length=TEXT,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 3, 4, 8, 8), "timestep": _steps(g).long()}  # (b, frames, c, h, w)
    return model, {**inputs, "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}


def _wan(g: torch.Generator) -> Built:
    from diffusers import WanTransformer3DModel

    model = WanTransformer3DModel(
        patch_size=(1, 2, 2), num_attention_heads=2, attention_head_dim=12, in_channels=4, out_channels=4,
        text_dim=_CROSS, freq_dim=16, ffn_dim=32, num_layers=2, rope_max_seq_len=32,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 2, 8, 8), "timestep": _steps(g)}
    return model, {**inputs, "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}


def _ltx_video(g: torch.Generator) -> Built:
    from diffusers import LTXVideoTransformer3DModel

    model = LTXVideoTransformer3DModel(
        in_channels=4, out_channels=4, num_attention_heads=2, attention_head_dim=8, cross_attention_dim=16,
        num_layers=1, caption_channels=_CROSS,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 2 * 4 * 4, 4), "timestep": _steps(g)}  # packed: frames x h x w tokens
    inputs["encoder_hidden_states"] = _randn(g, BATCH, TEXT, _CROSS)
    inputs["encoder_attention_mask"] = torch.ones(BATCH, TEXT)
    return model, {**inputs, "num_frames": 2, "height": 4, "width": 4}


def _mochi(g: torch.Generator) -> Built:
    from diffusers import MochiTransformer3DModel

    model = MochiTransformer3DModel(
        patch_size=2, num_attention_heads=2, attention_head_dim=8, num_layers=1, pooled_projection_dim=16,
        in_channels=4, text_embed_dim=_CROSS, time_embed_dim=4, max_sequence_length=TEXT,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 2, 8, 8), "timestep": _steps(g)}
    inputs["encoder_hidden_states"] = _randn(g, BATCH, TEXT, _CROSS)
    return model, {**inputs, "encoder_attention_mask": torch.ones(BATCH, TEXT, dtype=torch.bool)}


def _hunyuan_video(g: torch.Generator) -> Built:
    from diffusers import HunyuanVideoTransformer3DModel

    model = HunyuanVideoTransformer3DModel(
        in_channels=4, out_channels=4, num_attention_heads=2, attention_head_dim=10, num_layers=1,
        num_single_layers=1, num_refiner_layers=1, patch_size=1, text_embed_dim=16, pooled_projection_dim=8,
        rope_axes_dim=(2, 4, 4),
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 1, 4, 4), "timestep": _steps(g)}
    inputs["encoder_hidden_states"] = _randn(g, BATCH, TEXT, 16)
    inputs["encoder_attention_mask"] = torch.ones(BATCH, TEXT)
    inputs["pooled_projections"] = _randn(g, BATCH, 8)
    return model, {**inputs, "guidance": torch.full((BATCH,), 3500.0)}


def _qwen_image(g: torch.Generator) -> Built:
    from diffusers import QwenImageTransformer2DModel

    model = QwenImageTransformer2DModel(
        patch_size=2, in_channels=16, out_channels=4, num_layers=2, attention_head_dim=16, num_attention_heads=2,
        joint_attention_dim=16, axes_dims_rope=(8, 4, 4),
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 16, 16), "timestep": _steps(g, 1.0)}  # packed 4 x 4 tokens
    inputs["encoder_hidden_states"] = _randn(g, BATCH, TEXT, 16)
    inputs["encoder_hidden_states_mask"] = torch.ones(BATCH, TEXT, dtype=torch.long)
    return model, {**inputs, "img_shapes": [[(1, 4, 4)]] * BATCH}


def _cogview4(g: torch.Generator) -> Built:
    from diffusers import CogView4Transformer2DModel

    model = CogView4Transformer2DModel(
        patch_size=2, in_channels=4, out_channels=4, num_layers=1, attention_head_dim=8, num_attention_heads=2,
        text_embed_dim=_CROSS, time_embed_dim=8, condition_dim=4, rope_axes_dim=(32, 32),
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 8, 8), "timestep": _steps(g)}
    inputs["encoder_hidden_states"] = _randn(g, BATCH, TEXT, _CROSS)
    sizes = torch.tensor([[64.0, 64.0]] * BATCH)
    return model, {**inputs, "original_size": sizes, "target_size": sizes, "crop_coords": torch.zeros(BATCH, 2)}


# --- autoencoders -----------------------------------------------------------------------------


def _image(g: torch.Generator, side: int = 32) -> dict:
    return {"sample": torch.rand(BATCH, 3, side, side, generator=g) * 2 - 1}


def _autoencoder_kl(g: torch.Generator) -> Built:
    from diffusers import AutoencoderKL

    model = AutoencoderKL(
        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2,
        block_out_channels=(16, 32), latent_channels=4, norm_num_groups=8,
    )  # fmt: skip
    return model, _image(g)  # sample_posterior=False: the posterior's mode, nothing drawn


def _asymmetric_autoencoder_kl(g: torch.Generator) -> Built:
    from diffusers import AsymmetricAutoencoderKL

    model = AsymmetricAutoencoderKL(
        down_block_types=("DownEncoderBlock2D",) * 2, down_block_out_channels=(16, 32),
        up_block_types=("UpDecoderBlock2D",) * 2, up_block_out_channels=(16, 32), layers_per_up_block=1,
        latent_channels=4, norm_num_groups=8,
    )  # fmt: skip
    return model, _image(g)


def _vq(g: torch.Generator) -> Built:
    from diffusers import VQModel

    model = VQModel(
        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2,
        block_out_channels=(16, 32), latent_channels=3, num_vq_embeddings=32, norm_num_groups=8,
    )  # fmt: skip
    return model, _image(g)


def _autoencoder_dc(g: torch.Generator) -> Built:
    from diffusers import AutoencoderDC

    model = AutoencoderDC(
        latent_channels=4, attention_head_dim=4, encoder_block_types=("ResBlock", "EfficientViTBlock"),
        decoder_block_types=("ResBlock", "EfficientViTBlock"), encoder_block_out_channels=(8, 16),
        decoder_block_out_channels=(8, 16), encoder_layers_per_block=(1, 1), decoder_layers_per_block=(1, 1),
        encoder_qkv_multiscales=((), (5,)), decoder_qkv_multiscales=((), (5,)), decoder_norm_types="rms_norm",
        decoder_act_fns="silu",
    )  # fmt: skip
    return model, _image(g)


def _oobleck(g: torch.Generator) -> Built:
    """Stable Audio's waveform autoencoder."""
    from diffusers import AutoencoderOobleck

    model = AutoencoderOobleck(
        encoder_hidden_size=8, downsampling_ratios=[2, 4], channel_multiples=[1, 2], decoder_channels=8,
        decoder_input_channels=4, audio_channels=2,
    )  # fmt: skip
    _parametrized_weight_norm(model)
    return model, {"sample": torch.rand(BATCH, 2, 256, generator=g) * 2 - 1}


def _parametrized_weight_norm(model: torch.nn.Module) -> None:
    """The deprecated ``torch.nn.utils.weight_norm`` (Oobleck's) keeps its weight as a computed,
    non-leaf tensor, which ``copy.deepcopy`` refuses and the comparison copies models: the same
    normalisation (``g * v / |v|`` over the same dimension) as a parametrization instead."""
    from torch.nn.utils import parametrizations, remove_weight_norm
    from torch.nn.utils.weight_norm import WeightNorm

    for module in model.modules():
        for hook in list(module._forward_pre_hooks.values()):
            if isinstance(hook, WeightNorm):
                g, v = getattr(module, hook.name + "_g").detach(), getattr(module, hook.name + "_v").detach()
                remove_weight_norm(module, hook.name)
                parametrizations.weight_norm(module, hook.name, dim=hook.dim)
                with torch.no_grad():  # the same g and v (removing folded them into the weight)
                    module.parametrizations[hook.name].original0.copy_(g)
                    module.parametrizations[hook.name].original1.copy_(v)


def _temporal_decoder(g: torch.Generator) -> Built:
    """Stable Video Diffusion's autoencoder: a decoder with temporal layers, here on 2 frames."""
    from diffusers import AutoencoderKLTemporalDecoder

    # widths of 32 and 64: its decoder's group norms have 32 groups whatever the widths
    model = AutoencoderKLTemporalDecoder(
        down_block_types=("DownEncoderBlock2D",) * 2, block_out_channels=(32, 64), latent_channels=4,
    )  # fmt: skip
    return model, {**_image(g), "num_frames": BATCH}


def _autoencoder_tiny(g: torch.Generator) -> Built:
    from diffusers import AutoencoderTiny

    model = AutoencoderTiny(
        encoder_block_out_channels=(16, 16), decoder_block_out_channels=(16, 16), num_encoder_blocks=(1, 1),
        num_decoder_blocks=(1, 1),
    )  # fmt: skip
    # Its forward rounds the latents to bytes between encoder and decoder (no gradient to the
    # encoder, and a latent at a rounding boundary goes either way): compared without it.
    return model, {**_image(g), "forward": lambda m, sample: m.decode(m.encode(sample).latents)}


def _unet_spatio_temporal(g: torch.Generator) -> Built:
    """Stable Video Diffusion's UNet: (batch, frames, channels, h, w), an image embedding and
    three added numbers (fps, motion bucket, noise augmentation)."""
    from diffusers import UNetSpatioTemporalConditionModel

    # widths of 32 and 64: its group norms have 32 groups whatever the widths
    model = UNetSpatioTemporalConditionModel(
        sample_size=8, in_channels=8, out_channels=4, block_out_channels=(32, 64),
        down_block_types=("CrossAttnDownBlockSpatioTemporal", "DownBlockSpatioTemporal"),
        up_block_types=("UpBlockSpatioTemporal", "CrossAttnUpBlockSpatioTemporal"),
        addition_time_embed_dim=4, projection_class_embeddings_input_dim=3 * 4, layers_per_block=1,
        cross_attention_dim=_CROSS, num_attention_heads=(2, 4),
    )  # fmt: skip
    inputs = {"sample": _randn(g, BATCH, 2, 8, 8, 8), "timestep": _steps(g)}
    inputs["encoder_hidden_states"] = _randn(g, BATCH, 1, _CROSS)
    return model, {**inputs, "added_time_ids": torch.tensor([[6.0, 127.0, 0.02]] * BATCH)}


def _t2i_adapter(g: torch.Generator) -> Built:
    """A conditioning image to the residual features a UNet's down blocks add."""
    from diffusers import T2IAdapter

    model = T2IAdapter(in_channels=3, channels=[16, 32], num_res_blocks=1, downscale_factor=2)
    return model, {"x": torch.rand(BATCH, 3, 32, 32, generator=g)}


def _transformer_temporal(g: torch.Generator) -> Built:
    """The temporal attention of video UNets: attention across the frames of each pixel."""
    from diffusers import TransformerTemporalModel

    model = TransformerTemporalModel(num_attention_heads=2, attention_head_dim=8, in_channels=16, norm_num_groups=8)
    return model, {"hidden_states": _randn(g, BATCH * 3, 16, 4, 4), "num_frames": 3}


def _clip_image_projection(g: torch.Generator) -> Built:
    from diffusers import CLIPImageProjection

    return CLIPImageProjection(hidden_size=16), {"x": _randn(g, BATCH, 16)}


def _stable_audio_projection(g: torch.Generator) -> Built:
    """Stable Audio's conditioning: text states projected, start and end seconds embedded."""
    from diffusers import StableAudioProjectionModel

    model = StableAudioProjectionModel(text_encoder_dim=_CROSS, conditioning_dim=16, min_value=0, max_value=32)
    inputs = {"text_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}
    return model, {**inputs, "start_seconds": torch.tensor([0.0, 2.5]), "end_seconds": torch.tensor([10.0, 20.0])}


def _sd3_controlnet(g: torch.Generator) -> Built:
    from diffusers import SD3ControlNetModel

    model = SD3ControlNetModel(
        sample_size=8, patch_size=2, in_channels=4, num_layers=2, attention_head_dim=8, num_attention_heads=2,
        joint_attention_dim=_CROSS, caption_projection_dim=16, pooled_projection_dim=16, out_channels=4,
        pos_embed_max_size=16,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 8, 8), "controlnet_cond": _randn(g, BATCH, 4, 8, 8)}
    inputs["encoder_hidden_states"] = _randn(g, BATCH, TEXT, _CROSS)
    return model, {**inputs, "pooled_projections": _randn(g, BATCH, 16), "timestep": _steps(g)}


def _flux_controlnet(g: torch.Generator) -> Built:
    from diffusers import FluxControlNetModel

    model = FluxControlNetModel(
        in_channels=16, num_layers=1, num_single_layers=1, attention_head_dim=16, num_attention_heads=2,
        joint_attention_dim=_CROSS, pooled_projection_dim=16, axes_dims_rope=[4, 4, 8],
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 16, 16), "controlnet_cond": _randn(g, BATCH, 16, 16)}
    inputs.update(encoder_hidden_states=_randn(g, BATCH, TEXT, _CROSS), pooled_projections=_randn(g, BATCH, 16))
    return model, {**inputs, "timestep": _steps(g, 1.0), "img_ids": _image_ids(4, 4), "txt_ids": torch.zeros(TEXT, 3)}


def _sana_controlnet(g: torch.Generator) -> Built:
    from diffusers import SanaControlNetModel

    model = SanaControlNetModel(
        in_channels=4, out_channels=4, num_attention_heads=2, attention_head_dim=8, num_layers=2,
        num_cross_attention_heads=2, cross_attention_head_dim=8, cross_attention_dim=16, caption_channels=_CROSS,
        sample_size=8,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 8, 8), "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}
    return model, {**inputs, "timestep": _steps(g), "controlnet_cond": _randn(g, BATCH, 4, 8, 8)}


def _allegro(g: torch.Generator) -> Built:
    from diffusers import AllegroTransformer3DModel

    model = AllegroTransformer3DModel(
        num_attention_heads=2, attention_head_dim=8, in_channels=4, out_channels=4, num_layers=1,
        cross_attention_dim=16, sample_height=8, sample_width=8, sample_frames=2, caption_channels=_CROSS,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 2, 8, 8), "timestep": _steps(g)}
    return model, {**inputs, "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}


def _cogview3plus(g: torch.Generator) -> Built:
    from diffusers import CogView3PlusTransformer2DModel

    model = CogView3PlusTransformer2DModel(
        patch_size=2, in_channels=4, num_layers=1, attention_head_dim=8, num_attention_heads=2, out_channels=4,
        text_embed_dim=_CROSS, time_embed_dim=8, condition_dim=4, pos_embed_max_size=8, sample_size=8,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 8, 8), "timestep": _steps(g)}
    inputs["encoder_hidden_states"] = _randn(g, BATCH, TEXT, _CROSS)
    sizes = torch.tensor([[64.0, 64.0]] * BATCH)
    return model, {**inputs, "original_size": sizes, "target_size": sizes, "crop_coords": torch.zeros(BATCH, 2)}


def _video(g: torch.Generator, frames: int, side: int = 16) -> dict:
    return {"sample": torch.rand(BATCH, 3, frames, side, side, generator=g) * 2 - 1}


def _autoencoder_kl_wan(g: torch.Generator) -> Built:
    from diffusers import AutoencoderKLWan

    model = AutoencoderKLWan(
        base_dim=8, z_dim=4, dim_mult=[1, 2], num_res_blocks=1, temperal_downsample=[True],
        latents_mean=[0.0] * 4, latents_std=[1.0] * 4,
    )  # fmt: skip
    return model, _video(g, 5)  # 1 + 4k frames: the first alone, then groups of four


def _autoencoder_kl_cogvideox(g: torch.Generator) -> Built:
    from diffusers import AutoencoderKLCogVideoX

    model = AutoencoderKLCogVideoX(
        down_block_types=("CogVideoXDownBlock3D",) * 2, up_block_types=("CogVideoXUpBlock3D",) * 2,
        block_out_channels=(8, 16), latent_channels=4, layers_per_block=1, norm_num_groups=4,
        temporal_compression_ratio=2, sample_height=16, sample_width=16,
    )  # fmt: skip
    return model, _video(g, 3)


def _autoencoder_kl_hunyuan_video(g: torch.Generator) -> Built:
    from diffusers import AutoencoderKLHunyuanVideo

    # a temporal compression of 4 needs three blocks: the time is halved in two of them
    model = AutoencoderKLHunyuanVideo(
        latent_channels=4, down_block_types=("HunyuanVideoDownBlock3D",) * 3,
        up_block_types=("HunyuanVideoUpBlock3D",) * 3, block_out_channels=(8, 8, 16), layers_per_block=1,
        norm_num_groups=4, spatial_compression_ratio=4, temporal_compression_ratio=4,
    )  # fmt: skip
    return model, _video(g, 5)


def _zimage(g: torch.Generator) -> Built:
    """Z-Image: lists of per-sample latents (channels, frames, h, w) and caption features."""
    from diffusers import ZImageTransformer2DModel

    model = ZImageTransformer2DModel(
        in_channels=4, dim=32, n_layers=1, n_refiner_layers=1, n_heads=2, n_kv_heads=2, cap_feat_dim=16,
        axes_dims=[4, 6, 6], axes_lens=[64, 32, 32],
    )  # fmt: skip
    latents = [_randn(g, 4, 1, 8, 8) for _ in range(BATCH)]
    captions = [_randn(g, TEXT, 16) for _ in range(BATCH)]
    return model, {"x": latents, "t": _steps(g, 1.0), "cap_feats": captions}


def _skyreels_v2(g: torch.Generator) -> Built:
    from diffusers import SkyReelsV2Transformer3DModel

    model = SkyReelsV2Transformer3DModel(
        num_attention_heads=2, attention_head_dim=12, in_channels=4, out_channels=4, text_dim=_CROSS, freq_dim=16,
        ffn_dim=32, num_layers=2, rope_max_seq_len=32,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 2, 8, 8), "timestep": _steps(g)}
    return model, {**inputs, "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}


def _hunyuan_dit_controlnet(g: torch.Generator) -> Built:
    from diffusers import HunyuanDiT2DControlNetModel

    model = HunyuanDiT2DControlNetModel(
        num_attention_heads=2, attention_head_dim=8, in_channels=4, patch_size=2, sample_size=8, hidden_size=16,
        transformer_num_layers=4, cross_attention_dim=_CROSS, cross_attention_dim_t5=_CROSS,
        pooled_projection_dim=16, text_len=TEXT, text_len_t5=TEXT,
    )  # fmt: skip
    _, inputs = _hunyuan_dit(g)
    return model, {**inputs, "controlnet_cond": _randn(g, BATCH, 4, 8, 8)}


def _qwen_image_controlnet(g: torch.Generator) -> Built:
    from diffusers import QwenImageControlNetModel

    model = QwenImageControlNetModel(
        patch_size=2, in_channels=16, out_channels=4, num_layers=2, attention_head_dim=16, num_attention_heads=2,
        joint_attention_dim=16, axes_dims_rope=(8, 4, 4),
    )  # fmt: skip
    _, inputs = _qwen_image(g)
    return model, {**inputs, "controlnet_cond": _randn(g, BATCH, 16, 16)}


def _audioldm2_projection(g: torch.Generator) -> Built:
    """AudioLDM 2's projection of its two text encoders' states into the language model's width."""
    from diffusers import AudioLDM2ProjectionModel

    model = AudioLDM2ProjectionModel(text_encoder_dim=16, text_encoder_1_dim=24, langauge_model_dim=_CROSS)
    inputs = {"hidden_states": _randn(g, BATCH, TEXT, 16), "hidden_states_1": _randn(g, BATCH, 4, 24)}
    return model, {**inputs, "attention_mask": torch.ones(BATCH, TEXT, dtype=torch.long),
                   "attention_mask_1": torch.ones(BATCH, 4, dtype=torch.long)}  # fmt: skip


def _i2vgen_xl(g: torch.Generator) -> Built:
    from diffusers import I2VGenXLUNet

    model = I2VGenXLUNet(
        sample_size=8, block_out_channels=(32, 64), layers_per_block=1,
        down_block_types=("CrossAttnDownBlock3D", "DownBlock3D"), up_block_types=("UpBlock3D", "CrossAttnUpBlock3D"),
        norm_num_groups=8, cross_attention_dim=_CROSS, attention_head_dim=8,
    )  # fmt: skip
    inputs = {"sample": _randn(g, BATCH, 4, 3, 8, 8), "timestep": _steps(g), "fps": torch.tensor([16, 16])}
    inputs.update(image_latents=_randn(g, BATCH, 4, 3, 8, 8), image_embeddings=_randn(g, BATCH, _CROSS))
    return model, {**inputs, "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}


def _t5_film(g: torch.Generator) -> Built:
    """Spectrogram Diffusion's decoder: noisy spectrogram frames, FiLM-conditioned on the noise
    time, cross-attending to an encoder's states."""
    from diffusers import T5FilmDecoder

    model = T5FilmDecoder(input_dims=8, targets_length=16, d_model=32, num_layers=1, num_heads=2, d_kv=16, d_ff=32)
    encodings = [(_randn(g, BATCH, TEXT, 32), torch.ones(BATCH, TEXT, dtype=torch.bool))]
    inputs = {"encodings_and_masks": encodings, "decoder_input_tokens": _randn(g, BATCH, 16, 8)}
    return model, {**inputs, "decoder_noise_time": torch.rand(BATCH, generator=g)}


def _flux2(g: torch.Generator) -> Built:
    from diffusers import Flux2Transformer2DModel

    model = Flux2Transformer2DModel(
        in_channels=16, num_layers=1, num_single_layers=1, attention_head_dim=16, num_attention_heads=2,
        joint_attention_dim=_CROSS, timestep_guidance_channels=16, axes_dims_rope=(4, 4, 4, 4),
    )  # fmt: skip
    rows, cols = torch.meshgrid(torch.arange(4), torch.arange(4), indexing="ij")
    zeros = torch.zeros_like(rows)
    img_ids = torch.stack([zeros, rows, cols, zeros], dim=-1).reshape(-1, 4).float()  # (t, h, w, l)
    txt_ids = torch.stack([torch.zeros(TEXT), torch.zeros(TEXT), torch.zeros(TEXT), torch.arange(TEXT)], dim=-1)
    inputs = {"hidden_states": _randn(g, BATCH, 16, 16), "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}
    inputs.update(timestep=_steps(g, 1.0), guidance=torch.full((BATCH,), 4.0))
    return model, {**inputs, "img_ids": img_ids.expand(BATCH, -1, -1), "txt_ids": txt_ids.expand(BATCH, -1, -1)}


def _autoencoder_kl_qwen_image(g: torch.Generator) -> Built:
    from diffusers import AutoencoderKLQwenImage

    model = AutoencoderKLQwenImage(
        base_dim=8, z_dim=4, dim_mult=[1, 2], num_res_blocks=1, temperal_downsample=[True],
        latents_mean=[0.0] * 4, latents_std=[1.0] * 4,
    )  # fmt: skip
    return model, _video(g, 1)  # images: one frame


def _flux_like(cls_name: str, g: torch.Generator, **kwargs) -> Built:
    """A transformer in Flux's mould (joint then single-stream blocks, 3-axis rotary ids)."""
    import diffusers

    model = getattr(diffusers, cls_name)(
        in_channels=16, num_layers=1, num_single_layers=1, attention_head_dim=16, num_attention_heads=2,
        joint_attention_dim=_CROSS, axes_dims_rope=(4, 4, 8), **kwargs,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 16, 16), "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}
    return model, {**inputs, "timestep": _steps(g, 1.0), "img_ids": _image_ids(4, 4), "txt_ids": torch.zeros(TEXT, 3)}


def _bria(g: torch.Generator) -> Built:
    return _flux_like("BriaTransformer2DModel", g)


def _longcat_image(g: torch.Generator) -> Built:
    return _flux_like("LongCatImageTransformer2DModel", g, pooled_projection_dim=16)


def _ovis_image(g: torch.Generator) -> Built:
    return _flux_like("OvisImageTransformer2DModel", g, out_channels=16)


def _wan_like(cls_name: str, g: torch.Generator, **kwargs) -> Built:
    import diffusers

    model = getattr(diffusers, cls_name)(
        num_attention_heads=2, attention_head_dim=12, in_channels=4, out_channels=4, text_dim=_CROSS, freq_dim=16,
        ffn_dim=32, num_layers=2, rope_max_seq_len=32, **kwargs,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 2, 8, 8), "timestep": _steps(g)}
    return model, {**inputs, "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}


def _chrono_edit(g: torch.Generator) -> Built:
    return _wan_like("ChronoEditTransformer3DModel", g)


def _wan_vace(g: torch.Generator) -> Built:
    """Wan with VACE's control blocks: control latents added after the listed layers."""
    model, inputs = _wan_like("WanVACETransformer3DModel", g, vace_layers=[0, 1], vace_in_channels=8)
    return model, {**inputs, "control_hidden_states": _randn(g, BATCH, 8, 2, 8, 8)}


def _sana_video(g: torch.Generator) -> Built:
    from diffusers import SanaVideoTransformer3DModel

    model = SanaVideoTransformer3DModel(
        in_channels=4, out_channels=4, num_attention_heads=2, attention_head_dim=8, num_layers=2,
        num_cross_attention_heads=2, cross_attention_head_dim=8, cross_attention_dim=16, caption_channels=_CROSS,
        sample_size=8, rope_max_seq_len=32,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 2, 8, 8), "encoder_hidden_states": _randn(g, BATCH, TEXT, _CROSS)}
    return model, {**inputs, "timestep": _steps(g)}


def _hunyuan_image(g: torch.Generator) -> Built:
    from diffusers import HunyuanImageTransformer2DModel

    model = HunyuanImageTransformer2DModel(
        in_channels=4, out_channels=4, num_attention_heads=2, attention_head_dim=8, num_layers=1,
        num_single_layers=1, num_refiner_layers=1, text_embed_dim=16, rope_axes_dim=(4, 4),
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 4, 4), "timestep": _steps(g)}
    inputs["encoder_hidden_states"] = _randn(g, BATCH, TEXT, 16)
    return model, {**inputs, "encoder_attention_mask": torch.ones(BATCH, TEXT)}


def _autoencoder_kl_flux2(g: torch.Generator) -> Built:
    from diffusers import AutoencoderKLFlux2

    model = AutoencoderKLFlux2(
        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2,
        block_out_channels=(16, 32), latent_channels=4, norm_num_groups=8, layers_per_block=1,
    )  # fmt: skip
    return model, _image(g)


def _autoencoder_kl_hunyuan_image(g: torch.Generator) -> Built:
    from diffusers import AutoencoderKLHunyuanImage

    # widths of 32 and 64: its group norms have 32 groups whatever the widths
    model = AutoencoderKLHunyuanImage(
        in_channels=3, out_channels=3, latent_channels=8, block_out_channels=(32, 64), layers_per_block=1,
        spatial_compression_ratio=4, sample_size=32,
    )  # fmt: skip
    return model, _image(g)


def _cosmos(g: torch.Generator) -> Built:
    from diffusers import CosmosTransformer3DModel
    from diffusers.models.transformers import transformer_cosmos

    if not hasattr(transformer_cosmos, "transforms"):  # imported only if torchvision was there first
        raise CannotBuild("Cosmos resizes its padding mask with torchvision (make model-zoo), absent here")
    model = CosmosTransformer3DModel(
        in_channels=4, out_channels=4, num_attention_heads=2, attention_head_dim=12, num_layers=1,
        text_embed_dim=16, adaln_lora_dim=4, max_size=(4, 16, 16),
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 2, 8, 8), "timestep": _steps(g, 1.0)}
    inputs["encoder_hidden_states"] = _randn(g, BATCH, TEXT, 16)
    return model, {**inputs, "padding_mask": torch.zeros(1, 1, 8, 8)}  # nothing padded (the pipeline's)


def _stable_cascade(g: torch.Generator) -> Built:
    """Stable Cascade's prior/decoder UNet: a timestep ratio in [0, 1], pooled and per-token
    CLIP text states."""
    from diffusers import StableCascadeUNet

    model = StableCascadeUNet(
        in_channels=4, out_channels=4, timestep_ratio_embedding_dim=8, conditioning_dim=16,
        block_out_channels=(16, 32), num_attention_heads=(2, 2), down_num_layers_per_block=(1, 1),
        up_num_layers_per_block=(1, 1), clip_text_pooled_in_channels=16, clip_text_in_channels=16, clip_seq=2,
        dropout=(0.0, 0.0), switch_level=(False,),
    )  # fmt: skip
    inputs = {"sample": _randn(g, BATCH, 4, 8, 8), "timestep_ratio": torch.rand(BATCH, generator=g)}
    return model, {**inputs, "clip_text_pooled": _randn(g, BATCH, 1, 16), "clip_text": _randn(g, BATCH, TEXT, 16)}


def _lumina_next(g: torch.Generator) -> Built:
    from diffusers import LuminaNextDiT2DModel
    from diffusers.models.embeddings import get_2d_rotary_pos_embed_lumina

    model = LuminaNextDiT2DModel(
        sample_size=8, patch_size=2, in_channels=4, hidden_size=32, num_layers=1, num_attention_heads=2,
        num_kv_heads=1, multiple_of=16, cross_attention_dim=16,
    )  # fmt: skip
    inputs = {"hidden_states": _randn(g, BATCH, 4, 8, 8), "timestep": _steps(g, 1.0)}
    inputs.update(encoder_hidden_states=_randn(g, BATCH, TEXT, 16), encoder_mask=torch.ones(BATCH, TEXT))
    # the rotary table the pipeline computes beforehand (per head: 16), and the (empty) keyword
    # arguments its attention unpacks
    inputs["image_rotary_emb"] = get_2d_rotary_pos_embed_lumina(16, 32, 32)
    return model, {**inputs, "cross_attention_kwargs": {}}


def _audioldm2_unet(g: torch.Generator) -> Built:
    """AudioLDM 2's UNet: per transformer block, a self-attention and a cross-attention to each
    of two encoders' states (the None, 16 and 32 of each block's cross_attention_dim)."""
    from diffusers import AudioLDM2UNet2DConditionModel

    model = AudioLDM2UNet2DConditionModel(
        sample_size=8, block_out_channels=(32, 64), layers_per_block=1,
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        norm_num_groups=8, attention_head_dim=8, cross_attention_dim=([None, 16, 32],) * 2,
    )  # fmt: skip
    inputs = {"sample": _randn(g, BATCH, 4, 8, 8), "timestep": _steps(g)}
    inputs.update(encoder_hidden_states=_randn(g, BATCH, TEXT, 16), encoder_hidden_states_1=_randn(g, BATCH, 5, 32))
    return model, inputs


# Architecture -> its builder. Most classes have one configuration; a second is named by a suffix.
MODELS: dict[str, Callable[[torch.Generator], Built]] = {
    "UNet2DModel": _unet_2d,
    "UNet2DModel-class": _unet_2d_class,
    "UNet2DConditionModel": _unet_2d_condition,
    "UNet2DConditionModel-sdxl": _unet_2d_condition_sdxl,
    "UNet1DModel": _unet_1d,
    "UNet3DConditionModel": _unet_3d_condition,
    "ControlNetModel": _controlnet,
    "Transformer2DModel": _transformer_2d,
    "DiTTransformer2DModel": _dit,
    "PixArtTransformer2DModel": _pixart,
    "SD3Transformer2DModel": _sd3,
    "FluxTransformer2DModel": _flux,
    "ChromaTransformer2DModel": _chroma,
    "AuraFlowTransformer2DModel": _auraflow,
    "SanaTransformer2DModel": _sana,
    "HunyuanDiT2DModel": _hunyuan_dit,
    "Lumina2Transformer2DModel": _lumina2,
    "PriorTransformer": _prior,
    "UVit2DModel": _uvit,
    "StableAudioDiTModel": _stable_audio,
    "LatteTransformer3DModel": _latte,
    "CogVideoXTransformer3DModel": _cogvideox,
    "WanTransformer3DModel": _wan,
    "LTXVideoTransformer3DModel": _ltx_video,
    "MochiTransformer3DModel": _mochi,
    "HunyuanVideoTransformer3DModel": _hunyuan_video,
    "QwenImageTransformer2DModel": _qwen_image,
    "CogView4Transformer2DModel": _cogview4,
    "AutoencoderKL": _autoencoder_kl,
    "AsymmetricAutoencoderKL": _asymmetric_autoencoder_kl,
    "AutoencoderKLTemporalDecoder": _temporal_decoder,
    "VQModel": _vq,
    "AutoencoderDC": _autoencoder_dc,
    "AutoencoderOobleck": _oobleck,
    "AutoencoderTiny": _autoencoder_tiny,
    "UNetSpatioTemporalConditionModel": _unet_spatio_temporal,
    "T2IAdapter": _t2i_adapter,
    "TransformerTemporalModel": _transformer_temporal,
    "CLIPImageProjection": _clip_image_projection,
    "StableAudioProjectionModel": _stable_audio_projection,
    "SD3ControlNetModel": _sd3_controlnet,
    "FluxControlNetModel": _flux_controlnet,
    "SanaControlNetModel": _sana_controlnet,
    "AllegroTransformer3DModel": _allegro,
    "CogView3PlusTransformer2DModel": _cogview3plus,
    "AutoencoderKLWan": _autoencoder_kl_wan,
    "AutoencoderKLCogVideoX": _autoencoder_kl_cogvideox,
    "AutoencoderKLHunyuanVideo": _autoencoder_kl_hunyuan_video,
    "ZImageTransformer2DModel": _zimage,
    "SkyReelsV2Transformer3DModel": _skyreels_v2,
    "HunyuanDiT2DControlNetModel": _hunyuan_dit_controlnet,
    "QwenImageControlNetModel": _qwen_image_controlnet,
    "AudioLDM2ProjectionModel": _audioldm2_projection,
    "I2VGenXLUNet": _i2vgen_xl,
    "T5FilmDecoder": _t5_film,
    "Flux2Transformer2DModel": _flux2,
    "AutoencoderKLQwenImage": _autoencoder_kl_qwen_image,
    "BriaTransformer2DModel": _bria,
    "LongCatImageTransformer2DModel": _longcat_image,
    "OvisImageTransformer2DModel": _ovis_image,
    "ChronoEditTransformer3DModel": _chrono_edit,
    "WanVACETransformer3DModel": _wan_vace,
    "SanaVideoTransformer3DModel": _sana_video,
    "HunyuanImageTransformer2DModel": _hunyuan_image,
    "AutoencoderKLFlux2": _autoencoder_kl_flux2,
    "AutoencoderKLHunyuanImage": _autoencoder_kl_hunyuan_image,
    "CosmosTransformer3DModel": _cosmos,
    "StableCascadeUNet": _stable_cascade,
    "LuminaNextDiT2DModel": _lumina_next,
    "AudioLDM2UNet2DConditionModel": _audioldm2_unet,
}

# Model classes of diffusers 0.42.1 not in MODELS, and why.
_NO_MODEL = "no model of its own: holds others (or weights for another's blocks) and has no forward to compare"
_NOT_YET = "not configured yet: needs its own tiny configuration and inputs"
LEFT_OUT: dict[str, str] = {
    **dict.fromkeys(
        """
        ModelMixin MultiAdapter MotionAdapter MultiControlNetModel FluxMultiControlNetModel
        SD3MultiControlNetModel HunyuanDiT2DMultiControlNetModel QwenImageMultiControlNetModel
        """.split(),
        _NO_MODEL,
    ),
    "Kandinsky3UNet": "no small widths found that its conditional group norms accept (tried four; the time "
    "embedding's and the blocks' widths are tied in ways its arguments do not show)",
    **dict.fromkeys(
        ["UNetMotionModel", "SparseControlNetModel"],
        "with the small configurations tried (AnimateDiff's motion blocks), a self-attention's output has "
        "three times (the frames) the tokens of its input, on the CPU too; not resolved",
    ),
    **dict.fromkeys(
        # audio, music and protein models; video and image models of 2025-26 with their own inputs
        """
        AceStepAudioTokenDetokenizer AceStepAudioTokenizer AceStepConditionEncoder
        AceStepTransformer1DModel AnimaTextConditioner AnyFlowFARTransformer3DModel
        AnyFlowTransformer3DModel AutoencoderKLAllegro AutoencoderKLCosmos
        AutoencoderKLHunyuanImageRefiner AutoencoderKLHunyuanVideo15 AutoencoderKLKVAE
        AutoencoderKLKVAEAudio AutoencoderKLKVAEVideo AutoencoderKLLTX2Audio AutoencoderKLLTX2Video
        AutoencoderKLLTXVideo AutoencoderKLMagvit AutoencoderKLMiniMaxH3 AutoencoderKLMiniMaxH3Audio
        AutoencoderKLMochi AutoencoderKLQwenImage21 AutoencoderRAE AutoencoderSAME AutoencoderVidTok
        BriaFibo2Transformer2DModel BriaFiboTransformer2DModel ConsisIDTransformer3DModel
        ConsistencyDecoderVAE ControlNetUnionModel ControlNetXSAdapter Cosmos3AVAEAudioTokenizer
        Cosmos3OmniTransformer CosmosControlNetModel DreamLiteTransformer2DModel DreamLiteUNetModel
        EasyAnimateTransformer3DModel ErnieImageTransformer2DModel Flux3Transformer2DModel
        GlmImageTransformer2DModel HeliosTransformer3DModel HiDreamImageTransformer2DModel
        HunyuanVideo15Transformer3DModel HunyuanVideoFramepackTransformer3DModel
        Ideogram4PromptEnhancerHead Ideogram4Transformer2DModel JoyImageEditPlusTransformer3DModel
        JoyImageEditTransformer3DModel Kandinsky5Transformer3DModel Kandinsky6SRLatentUpscalerBank
        Kandinsky6SRTransformer3DModel Kandinsky6SRVAE Kandinsky6Transformer3DModel Krea2Transformer2DModel
        LTX2VideoDiffusionDecoderModel LTX2VideoTransformer3DModel LongCatAudioDiTTransformer
        LongCatAudioDiTVae MMAudioVAE MMAudioVocoder MiniMaxH3Transformer3DModel
        MiniMaxMusic3ConditionEncoder MiniMaxMusic3RVQDepthDecoder MiniMaxMusic3Transformer1DModel
        MiniMaxMusic3Vocoder MotifVideoTransformer3DModel NucleusMoEImageTransformer2DModel
        OmniGenTransformer2DModel PRXTransformer2DModel QwenImage21Transformer2DModel
        RFD4ProteinaAutoencoder RFD4ProteinaTransformer ReduxImageEncoder
        SanaWMLTX2RefinerTransformer3DModel SanaWMTransformer3DModel
        StableAudio3DiTModel StableAudio3DurationEmbedder UNetControlNetXSModel
        UniDiffuserModel UniDiffuserTextDecoder WanAnimate2Transformer3DModel WanAnimateTransformer3DModel
        ZImageControlNetModel
        """.split(),
        _NOT_YET,
    ),
}


def architectures() -> list[str]:
    model_zoo.activate()  # before diffusers is imported: some of its models use torchvision
    import diffusers

    return sorted(name for name in MODELS if hasattr(diffusers, name.split("-")[0]))


def case(name: str) -> Case:
    model_zoo.activate()
    g = torch.Generator().manual_seed(1)
    model, inputs = MODELS[name](g)
    _no_label_dropout(model)
    return Case(model.eval(), inputs, _outputs, _mean_square)


def _no_label_dropout(model: torch.nn.Module) -> None:
    """Class-conditional models (DiT) drop labels at random in training, for classifier-free
    guidance: the CPU and axon would draw from their own generators, so none are dropped."""
    from diffusers.models.embeddings import LabelEmbedding

    for module in model.modules():
        if isinstance(module, LabelEmbedding):
            module.dropout_prob = 0.0


def _tensors(out) -> Outputs:
    """Every tensor of a model's output, by field name (a tuple's entries numbered)."""
    if isinstance(out, torch.Tensor):
        return {"sample": out}
    if not isinstance(out, dict):  # a tuple (return_dict ignored) or another output type
        out = {"sample": out[0]} if isinstance(out, (tuple, list)) and len(out) == 1 else {"output": out}
    found: Outputs = {}
    for key, value in out.items():
        if isinstance(value, torch.Tensor):
            found[key] = value
        elif isinstance(value, (tuple, list)):
            found.update({f"{key}.{i}": v for i, v in enumerate(value) if isinstance(v, torch.Tensor)})
        elif hasattr(value, "sample") and isinstance(value.sample, torch.Tensor):  # a distribution's
            found[key] = value.sample
    return found


def _call(model, inputs):
    """The model's forward on its keyword arguments, or the builder's own ``forward`` instead."""
    forward = inputs.get("forward")
    kwargs = {k: v for k, v in inputs.items() if k != "forward"}
    return forward(model, **kwargs) if forward else model(**kwargs)


def _outputs(model, inputs) -> Outputs:
    with torch.no_grad():
        return _tensors(_call(model, inputs))


def _mean_square(model, inputs) -> torch.Tensor:
    return sum(t.float().square().mean() for t in _tensors(_call(model, inputs)).values() if t.is_floating_point())
