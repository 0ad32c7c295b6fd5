"""torchvision and timm for the sweep, kept out of the shared environment.

The only torchvision 0.28.0 wheel this machine's package index has is PyPI's, built for CUDA: its
C++ operators (nms, roi_align, ...) link against libtorch_cuda and do not load with the CPU
build of torch. torchvision then fails at import (it registers a fake kernel for
``torchvision::nms`` unconditionally), and with it every transformers model, since transformers
imports torchvision whenever it is installed. So both packages are installed into a folder of
their own (``make model-zoo``: ``pip install --no-deps --target .model-zoo``, which leaves torch
as it is), and only the sweep puts that folder on its path, after registering plain-PyTorch
versions of the operators torchvision's detection models use under torchvision's own names.
Those run as ordinary aten ops, natively on axon where axon has them.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import torch

# AXON_MODEL_ZOO overrides; the default is the repository's .model-zoo (the Makefile's target),
# read only: the sweep installs nothing there.
FOLDER = Path(os.environ.get("AXON_MODEL_ZOO", Path(__file__).resolve().parents[3] / ".model-zoo"))

_library: torch.library.Library | None = None


def activate() -> None:
    """Makes torchvision and timm importable in this process (idempotent)."""
    if FOLDER.is_dir() and str(FOLDER) not in sys.path:
        sys.path.append(str(FOLDER))  # appended: an installed torchvision, if any, comes first
    # Without torchvision anywhere there is nothing to register; its families then skip.
    installed = importlib.util.find_spec("torchvision") is not None
    if installed and "torchvision" not in sys.modules and not _own_operators_load():
        _register_python_operators()


def versions() -> dict[str, str]:
    """torchvision's, timm's and diffusers' versions, where the folder (or the environment) has them."""
    activate()
    found = {}
    for name in ("torchvision", "timm", "diffusers"):
        try:
            found[name] = importlib.import_module(name).__version__
        except ImportError:
            pass
    return found


def _own_operators_load() -> bool:
    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        return False
    library = Path(next(iter(spec.submodule_search_locations))) / "_C.so"
    try:
        torch.ops.load_library(str(library))
        return True
    except (OSError, RuntimeError):
        return False


def _register_python_operators() -> None:
    global _library
    if _library is not None or _has_operator("nms"):
        return
    _library = torch.library.Library("torchvision", "DEF")
    _library.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    _library.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")  # schema only: import needs it
    _library.define(
        "roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
        "int sampling_ratio, bool aligned) -> Tensor"
    )
    _library.impl("nms", nms, "CompositeExplicitAutograd")
    _library.impl("roi_align", _roi_align, "CompositeImplicitAutograd")
    # torchvision asks this before calling any of its operators; they exist now. (roi_align asks
    # its own copy: without operators it would run its Python version under torch.compile. The
    # module, not torchvision.ops.roi_align, which is the function of that name.)
    for module in ("torchvision.extension", "torchvision.ops.roi_align"):
        importlib.import_module(module)._has_ops = lambda: True


def _has_operator(name: str) -> bool:
    try:
        getattr(torch.ops.torchvision, name)
        return True
    except (AttributeError, RuntimeError):
        return False


def nms(dets: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    """Greedy non-maximum suppression as torchvision's kernel does it: boxes by decreasing score
    (ties in their given order), each kept unless it overlaps a kept one by more than the
    threshold. The overlaps are computed on the boxes' device; the greedy walk on the host."""
    order = torch.sort(scores, descending=True, stable=True).indices
    boxes = dets[order]
    x1, y1, x2, y2 = boxes.unbind(1)
    area = (x2 - x1) * (y2 - y1)
    width = (torch.minimum(x2[:, None], x2[None]) - torch.maximum(x1[:, None], x1[None])).clamp(min=0)
    height = (torch.minimum(y2[:, None], y2[None]) - torch.maximum(y1[:, None], y1[None])).clamp(min=0)
    inter = width * height
    overlaps = (inter / (area[:, None] + area[None] - inter) > iou_threshold).cpu().numpy()
    kept = []
    suppressed = np.zeros(len(overlaps), dtype=bool)
    for i in range(len(overlaps)):
        if not suppressed[i]:
            kept.append(i)
            suppressed |= overlaps[i]
    return order[torch.tensor(kept, dtype=torch.long, device=order.device)]


def _roi_align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    # torchvision's own implementation in PyTorch ops, eager (it wraps it in torch.compile)
    from torchvision.ops.roi_align import _roi_align

    eager = _roi_align.__wrapped__
    return eager(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned)
