"""The torchvision family: one small variant of each of torchvision's classification,
segmentation, detection and video model families, random weights (weights=None), small inputs.

What is compared: classification and video logits; segmentation maps (``out``, and ``aux``
where built); detection models' backbone (and FPN) feature maps and their detections' scores,
sorted (a random model's boxes tie closely in score, so which box comes first is not compared).
One training step: cross-entropy for classifiers and segmenters, the model's own summed losses
for detectors, given two boxes per image. Detectors sample every anchor and proposal (batch
sizes larger than their count): their samplers draw from each device's own generator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from . import model_zoo
from .compare import Case, Outputs

BATCH = 2
SEGMENTATION_CLASSES = 21  # torchvision's default for its segmentation models
EVERY_CANDIDATE = 1_000_000  # more than any image's anchors or proposals: nothing left to chance


@dataclass(frozen=True)
class Spec:
    kind: str  # classification, segmentation, detection, video
    size: int = 64  # image side (or frame side for video)
    kwargs: dict = field(default_factory=dict)


# One small variant per model family, at the smallest input it accepts (Inception needs 75 px;
# MaxViT's windows need 224). Detectors resize to min_size themselves.
# A hundred proposals per image (not 2000): every one of them goes through the box and mask
# heads, and torchvision's Python RoIAlign holds each sampling point of each proposal.
_PROPOSALS = {f"rpn_{k}_nms_top_n_{mode}": n for k, n in (("pre", 300), ("post", 100)) for mode in ("train", "test")}
_DETECTOR = {"rpn_batch_size_per_image": EVERY_CANDIDATE, "box_batch_size_per_image": EVERY_CANDIDATE, **_PROPOSALS}
MODELS = {
    "alexnet": Spec("classification"),
    "convnext_tiny": Spec("classification"),
    "densenet121": Spec("classification"),
    "efficientnet_b0": Spec("classification"),
    "googlenet": Spec("classification", kwargs={"aux_logits": False, "init_weights": True}),
    "inception_v3": Spec("classification", 96, {"aux_logits": False, "init_weights": True}),
    "maxvit_t": Spec("classification", 224),
    "mnasnet0_5": Spec("classification"),
    "mobilenet_v2": Spec("classification"),
    "mobilenet_v3_small": Spec("classification"),
    "regnet_y_400mf": Spec("classification"),
    "resnet18": Spec("classification"),
    "shufflenet_v2_x0_5": Spec("classification"),
    "squeezenet1_1": Spec("classification"),
    "swin_t": Spec("classification"),
    "vgg11": Spec("classification"),
    "vit_b_16": Spec("classification", kwargs={"image_size": 64}),
    "deeplabv3_mobilenet_v3_large": Spec("segmentation", kwargs={"weights_backbone": None}),
    "fcn_resnet50": Spec("segmentation", kwargs={"weights_backbone": None}),
    "lraspp_mobilenet_v3_large": Spec("segmentation", kwargs={"weights_backbone": None}),
    "fasterrcnn_mobilenet_v3_large_320_fpn": Spec(
        "detection", 128, {"weights_backbone": None, "min_size": 128, "max_size": 128, **_DETECTOR}
    ),
    "maskrcnn_resnet50_fpn": Spec(
        "detection", 128, {"weights_backbone": None, "min_size": 128, "max_size": 128, **_DETECTOR}
    ),
    "ssdlite320_mobilenet_v3_large": Spec("detection", 128, {"weights_backbone": None}),
    "r3d_18": Spec("video", 32),
}


def architectures() -> list[str]:
    return sorted(MODELS)


def case(name: str) -> Case:
    model_zoo.activate()
    import torchvision

    spec = MODELS[name]
    model = torchvision.models.get_model(name, weights=None, **spec.kwargs).eval()
    return _CASES[spec.kind](model, spec)


# --- classification, video, segmentation ----------------------------------------------------


def _classification(model, spec: Spec) -> Case:
    g = torch.Generator().manual_seed(1)
    shape = (BATCH, 3, 4, spec.size, spec.size) if spec.kind == "video" else (BATCH, 3, spec.size, spec.size)
    images = torch.randn(shape, generator=g)
    labels = torch.randint(0, _classes(model), (BATCH,), generator=g)
    return Case(model, {"images": images, "labels": labels}, _logits, _cross_entropy)


def _classes(model) -> int:
    last = [m for m in model.modules() if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d, torch.nn.Conv3d))][-1]
    return last.out_features if isinstance(last, torch.nn.Linear) else last.out_channels


def _logits(model, inputs) -> Outputs:
    with torch.no_grad():
        return {"logits": model(inputs["images"])}


def _cross_entropy(model, inputs) -> torch.Tensor:
    out = model(inputs["images"])
    if isinstance(out, dict):  # segmentation: the main map and the auxiliary one where built
        return sum(F.cross_entropy(v, inputs["labels"]) for v in out.values())
    return F.cross_entropy(out, inputs["labels"])


def _segmentation(model, spec: Spec) -> Case:
    g = torch.Generator().manual_seed(1)
    images = torch.randn(BATCH, 3, spec.size, spec.size, generator=g)
    labels = torch.randint(0, SEGMENTATION_CLASSES, (BATCH, spec.size, spec.size), generator=g)
    return Case(model, {"images": images, "labels": labels}, _maps, _cross_entropy)


def _maps(model, inputs) -> Outputs:
    with torch.no_grad():
        return dict(model(inputs["images"]))


# --- detection ------------------------------------------------------------------------------


def _detection(model, spec: Spec) -> Case:
    g = torch.Generator().manual_seed(1)
    images = [torch.rand(3, spec.size, spec.size, generator=g) for _ in range(BATCH)]
    targets = [_two_boxes(spec.size, g) for _ in range(BATCH)]
    return Case(model, {"images": images, "targets": targets}, _detections, _detector_loss)


def _two_boxes(size: int, g: torch.Generator) -> dict:
    corner = torch.rand(2, 2, generator=g) * size / 2
    extent = torch.rand(2, 2, generator=g) * size / 3 + size / 8
    boxes = torch.cat([corner, corner + extent], dim=1)
    target = {"boxes": boxes, "labels": torch.randint(1, 10, (2,), generator=g)}
    masks = torch.zeros(2, size, size, dtype=torch.uint8)
    for i, (x1, y1, x2, y2) in enumerate(boxes.round().long().tolist()):
        masks[i, y1:y2, x1:x2] = 1
    return {**target, "masks": masks}


def _detections(model, inputs) -> Outputs:
    with torch.no_grad():
        images, _ = model.transform(inputs["images"])
        features = model.backbone(images.tensors)
        features = features if isinstance(features, dict) else {"0": features}
        detections = model(inputs["images"])
    out = {f"features.{k}": v for k, v in features.items()}
    out["scores"] = torch.cat([d["scores"] for d in detections]).sort(descending=True).values
    return out


def _detector_loss(model, inputs) -> torch.Tensor:
    targets = inputs["targets"]
    if not hasattr(model, "roi_heads") or not model.roi_heads.has_mask():
        targets = [{k: v for k, v in t.items() if k != "masks"} for t in targets]
    losses = model(inputs["images"], targets)
    return sum(losses.values())


_CASES: dict[str, Callable[[torch.nn.Module, Spec], Case]] = {
    "classification": _classification,
    "video": _classification,
    "segmentation": _segmentation,
    "detection": _detection,
}
