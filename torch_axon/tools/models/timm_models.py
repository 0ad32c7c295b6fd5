"""The timm family: one variant per timm model module (resnet, vision_transformer, convnext...),
the smallest by name, pretrained=False, classifying a small random batch.

Each is built for 64 px images where it takes an ``img_size`` (vision transformers and their
kin) and run at 64 px where its layers allow; otherwise at the input size of its default
configuration. Compared: the logits, and one cross-entropy training step.
"""

from __future__ import annotations

import re

import torch
import torch.nn.functional as F

from . import model_zoo
from .compare import Case, Outputs

BATCH, SMALL_SIDE = 2, 64
HEADLESS_CLASSES = 10

# Size words as timm's variant names use them, smallest first; a name with none ranks between
# "small" and "medium".
_SIZE_WORDS = ["test", "atto", "femto", "pico", "nano", "micro", "xxs", "xxsmall", "tiny", "xs", "xsmall", "mini"]
_SIZE_WORDS += ["small", "s", "lite", "light", "", "medium", "m", "base", "b", "large", "l", "xl", "xxl", "huge", "h"]
_SIZE_WORDS += ["giant", "g"]


def _size_rank(name: str) -> tuple:
    """Orders variant names from the smallest: the size word, then the first number (depth,
    width multiplier or parameter count), then the shorter name."""
    # the letters that open each underscore-separated part: "poolformerv2_m36" -> ..., "m"
    words = [m.group() for m in (re.match(r"[a-z]+", part) for part in name.lower().split("_")) if m]
    ranks = [_SIZE_WORDS.index(w) for w in words if w in _SIZE_WORDS]
    number = re.search(r"\d+", name)
    return (min(ranks, default=_SIZE_WORDS.index("")), int(number.group()) if number else 0, len(name), name)


def variants_by_module() -> dict[str, list[str]]:
    model_zoo.activate()
    import timm
    from timm.models import _registry

    modules: dict[str, list[str]] = {}
    for name in timm.list_models():
        modules.setdefault(_registry._model_to_module[name], []).append(name)
    return modules


def architectures() -> list[str]:
    """The smallest-named variant of each module."""
    return sorted(min(names, key=_size_rank) for names in variants_by_module().values())


def _build(name: str) -> tuple[torch.nn.Module, tuple[int, int, int]]:
    """The model and the (channels, height, width) it runs at: 64 px where it can."""
    import timm

    try:
        model = timm.create_model(name, pretrained=False, img_size=SMALL_SIDE)
    except TypeError:  # no img_size: a convolutional network, any size its strides allow
        model = timm.create_model(name, pretrained=False)
    model.eval()
    channels, height, width = model.pretrained_cfg.get("input_size", (3, 224, 224))
    try:
        with torch.no_grad():
            model(torch.zeros(1, channels, SMALL_SIDE, SMALL_SIDE))
        return model, (channels, SMALL_SIDE, SMALL_SIDE)
    except Exception:  # noqa: BLE001  (windows or fixed grids that need the default size)
        return timm.create_model(name, pretrained=False).eval(), (channels, height, width)


def case(name: str) -> Case:
    model_zoo.activate()
    model, shape = _build(name)
    if model.num_classes == 0:  # an encoder without a head (a MIM or a VLM's vision tower): give it one
        model.reset_classifier(HEADLESS_CLASSES)
    g = torch.Generator().manual_seed(1)
    images = torch.randn((BATCH, *shape), generator=g)
    labels = torch.randint(0, model.num_classes, (BATCH,), generator=g)
    return Case(model, {"images": images, "labels": labels}, _logits, _cross_entropy)


def _logits(model, inputs) -> Outputs:
    with torch.no_grad():
        return {"logits": model(inputs["images"])}


def _cross_entropy(model, inputs) -> torch.Tensor:
    return F.cross_entropy(model(inputs["images"]), inputs["labels"])
