"""The Hugging Face image processors' size rules, in plain Python with their arithmetic (the
same float operations in the same order), so sizes, crops and grids come out identical:
Qwen2-VL's smart_resize, CLIP's shortest-edge resize and center crop."""

from __future__ import annotations

import math
from typing import Tuple

from .._core import Error

#: transformers.image_utils constants.
OPENAI_CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
IMAGENET_STANDARD_MEAN = (0.5, 0.5, 0.5)
IMAGENET_STANDARD_STD = (0.5, 0.5, 0.5)


class ProcessorInputError(Error, ValueError):
    """Bad input or configuration for a processor. A texturevlm.Error, and a ValueError
    where Hugging Face's processors raise ValueError, so either `except` catches it."""


#: The largest number a processor config may give (a side, a pixel count, a patch size):
#: 16384^2, the largest image texturevlm takes.
MAX_CONFIG_SIZE = 16384 * 16384


def config_size(value: object, name: str) -> int:
    """A positive whole number of pixels (or patches) from a processor config, at most
    MAX_CONFIG_SIZE, else ProcessorInputError naming the key: configs are JSON, where "224"
    or 224.5 is a typo."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value != int(value)
        or not 1 <= value <= MAX_CONFIG_SIZE
    ):
        raise ProcessorInputError(f"{name} must be a whole number from 1 to {MAX_CONFIG_SIZE}, got {value!r}")
    return int(value)


def config_flag(config: dict, name: str, default: bool) -> bool:
    """A yes/no setting of a processor config: true or false (JSON), 0 or 1; absent or null
    is `default`. Anything else is ProcessorInputError naming the key (bool("no") is True)."""
    value = config.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise ProcessorInputError(f"{name} must be true or false, got {value!r}")


def config_number(config: dict, name: str, default: float) -> float:
    """A positive finite number of a processor config (absent or null: `default`), else
    ProcessorInputError naming the key."""
    value = config.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ProcessorInputError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


def config_sizes(size: dict, name: str) -> dict:
    """A size dict's values checked by config_size (None values, which HF allows, kept)."""
    if not isinstance(size, dict):
        raise ProcessorInputError(f"{name} must be a number or a dict of numbers, got {size!r}")
    return {k: v if v is None else config_size(v, f"{name}[{k!r}]") for k, v in size.items()}


def smart_resize(
    height: int, width: int, factor: int = 28, min_pixels: int = 56 * 56, max_pixels: int = 14 * 14 * 4 * 1280
) -> Tuple[int, int]:
    """Qwen2-VL's resize rule: both sides multiples of `factor`, the area within
    [min_pixels, max_pixels], the aspect ratio kept as closely as that allows."""
    if max(height, width) / min(height, width) > 200:
        raise ProcessorInputError(
            f"absolute aspect ratio must be smaller than 200, got {max(height, width) / min(height, width)}"
        )
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def shortest_edge_size(height: int, width: int, shortest_edge: int) -> Tuple[int, int]:
    """CLIP's resize: the shorter side to `shortest_edge`, the longer int(scaled) (HF
    get_resize_output_image_size with default_to_square=False)."""
    short, long = (width, height) if width <= height else (height, width)
    new_short, new_long = shortest_edge, int(shortest_edge * long / short)
    return (new_long, new_short) if width <= height else (new_short, new_long)


def resized_size(height: int, width: int, size: dict) -> Tuple[int, int]:
    """(height, width) after a fixed-size processor's resize, by its `size` dict."""
    if size.get("shortest_edge"):
        return shortest_edge_size(height, width, int(size["shortest_edge"]))
    if size.get("height") and size.get("width"):
        return int(size["height"]), int(size["width"])
    raise ProcessorInputError(f"size must have 'height' and 'width', or 'shortest_edge'; got {size}")


def center_crop_box(height: int, width: int, crop_height: int, crop_width: int) -> Tuple[int, int]:
    """(top, left) of HF's center crop. A crop larger than the image (HF pads it with zeros
    first) is refused: no model config asks for it."""
    if crop_height > height or crop_width > width:
        raise ProcessorInputError(
            f"crop {crop_height}x{crop_width} is larger than the resized {height}x{width} image: "
            "make crop_size at most the resized size"
        )
    return int((height - crop_height) / 2.0), int((width - crop_width) / 2.0)
