"""Shrinking vision configs: hierarchies of stages and image sizes.

A hierarchical vision model (ResNet, ConvNeXt, Swin, PVT, EfficientNet...) lists its stages: a
depth per stage and a width per stage, with head counts, strides and ratios that fit those
widths. Its tiny version keeps every stage and width, one block deep (the widths are what the
other lists are made to fit; the depth is what the size grows with). Images shrink to a side
that every stage still divides into at least one position.
"""

from __future__ import annotations

# Per-stage block counts, by the names vision configs give them.
_STAGE_DEPTHS = ("depths", "depth", "num_block_repeats", "stage_num_blocks")


def _int_list(value) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, int) for v in value)


def has_stages(config) -> bool:
    return any(_int_list(getattr(config, name, None)) for name in _STAGE_DEPTHS)


def one_block_per_stage(config) -> None:
    for name in _STAGE_DEPTHS:
        value = getattr(config, name, None)
        if _int_list(value):
            setattr(config, name, type(value)(min(v, 1) for v in value))


def shrink_images(config, side: int) -> None:
    """image_size (an int or a (height, width) pair) down to ``side`` where it is larger."""
    size = getattr(config, "image_size", None)
    if isinstance(size, int) and size > side:
        config.image_size = side
    elif _int_list(size) and len(size) == 2 and max(size) > side:
        config.image_size = type(size)(min(v, side) for v in size)
    _windows_fit_the_last_stage(config, side)


def _windows_fit_the_last_stage(config, side: int) -> None:
    """Swin-style attention windows no wider than the last stage's grid: a window wider than
    its stage is cut to the stage, and its relative-position table no longer fits it."""
    window, patch, depths = (getattr(config, n, None) for n in ("window_size", "patch_size", "depths"))
    if isinstance(window, int) and isinstance(patch, int) and _int_list(depths):
        last_side = side // (patch * 2 ** (len(depths) - 1))
        config.window_size = max(1, min(window, last_side))
