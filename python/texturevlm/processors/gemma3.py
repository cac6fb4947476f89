"""Gemma 3's image processor: every image resized straight to size (896 x 896 in the
model configs; bilinear, aspect not kept), rescaled, normalized (mean and std 0.5). With
do_pan_and_scan, an image much wider or taller than square also gives 2 to
pan_and_scan_max_num_crops crops across its long side, each resized the same way, after
it: pixel_values [images + crops, 3, h, w] and num_crops [images]."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

from ._common import BatchFeature
from ._images import cropped, image_specs
from ._resize import DEFAULT_FILTER
from ._rules import IMAGENET_STANDARD_MEAN, IMAGENET_STANDARD_STD, config_flag, config_number, config_size
from .clip import FixedSizeImageProcessor

#: Gemma3Processor's pan-and-scan settings, which the image processor's config leaves null.
PAN_AND_SCAN_DEFAULTS = {
    "pan_and_scan_min_crop_size": 256,
    "pan_and_scan_max_num_crops": 4,
    "pan_and_scan_min_ratio_to_activate": 1.2,
}


def pan_and_scan_boxes(
    height: int, width: int, min_crop_size: int, max_num_crops: int, min_ratio_to_activate: float
) -> List[Tuple[int, int, int, int]]:
    """(top, left, height, width) of Gemma 3's pan-and-scan crops of a height x width image,
    row-major (HF's pan_and_scan, its arithmetic): none unless the long side is at least
    min_ratio_to_activate times the short one, else 2..max_num_crops crops of ceil(long /
    n) along it, none where a crop would be under min_crop_size."""
    # HF's two branches (landscape or square, portrait) are one rule on the long side.
    landscape = width >= height
    long, short = (width, height) if landscape else (height, width)
    if long / short < min_ratio_to_activate:
        return []
    crops = int(math.floor(long / short + 0.5))
    crops = min(max_num_crops, max(2, min(int(math.floor(long / min_crop_size)), crops)))
    across, down = (crops, 1) if landscape else (1, crops)
    crop_width, crop_height = int(math.ceil(width / across)), int(math.ceil(height / down))
    if min(crop_width, crop_height) < min_crop_size:
        return []
    # HF slices [pos : pos + crop] (a last crop running past the edge is cut short there).
    return [
        (top, left, min(crop_height, height - top), min(crop_width, width - left))
        for top in (crop_height * i for i in range(down))
        for left in (crop_width * j for j in range(across))
    ]


class Gemma3ImageProcessor(FixedSizeImageProcessor):
    """transformers' Gemma3ImageProcessor, from the same config values (size, resample 2:
    bilinear, image_mean / image_std, do_pan_and_scan and its pan_and_scan_* settings,
    defaulting to Gemma3Processor's 256 / 4 / 1.2 where the config leaves them null),
    returning pixel_values and num_crops in HF's order (each image, then its crops).
    `filter`, `dtype` and `backend` as for CLIPImageProcessor."""

    model_input_names = ["pixel_values", "num_crops"]
    defaults = {
        "size": {"height": 224, "width": 224},
        "do_center_crop": False,
        "image_mean": IMAGENET_STANDARD_MEAN,
        "image_std": IMAGENET_STANDARD_STD,
    }
    default_resample = 2

    def __init__(
        self, filter: str = DEFAULT_FILTER, dtype: str = "float32", backend: str = "auto", **config: Any
    ) -> None:
        super().__init__(filter, dtype, backend, **config)
        c = {**PAN_AND_SCAN_DEFAULTS, **{k: v for k, v in config.items() if v is not None}}
        self.do_pan_and_scan: bool = config_flag(c, "do_pan_and_scan", False)
        self.pan_and_scan_min_crop_size: int = config_size(
            c["pan_and_scan_min_crop_size"], "pan_and_scan_min_crop_size"
        )
        self.pan_and_scan_max_num_crops: int = config_size(
            c["pan_and_scan_max_num_crops"], "pan_and_scan_max_num_crops"
        )
        self.pan_and_scan_min_ratio_to_activate: float = config_number(
            c, "pan_and_scan_min_ratio_to_activate", PAN_AND_SCAN_DEFAULTS["pan_and_scan_min_ratio_to_activate"]
        )

    def crops(self, height: int, width: int) -> List[Tuple[int, int, int, int]]:
        """The pan-and-scan crops of an image of height x width (none without do_pan_and_scan)."""
        if not self.do_pan_and_scan:
            return []
        return pan_and_scan_boxes(
            height,
            width,
            self.pan_and_scan_min_crop_size,
            self.pan_and_scan_max_num_crops,
            self.pan_and_scan_min_ratio_to_activate,
        )

    def _counts(self, images: int) -> Dict[str, List[int]]:
        return {"num_crops": [0] * images}

    def _process(self, images: Any, input_data_format: Optional[str]) -> BatchFeature:
        """pixel_values [images + crops, 3, h, w] and num_crops [images] of `images`, in
        their framework on their device."""
        if not self.do_pan_and_scan:
            return super()._process(images, input_data_format)
        specs = image_specs(images, self.do_convert_rgb, input_data_format)
        outputs, num_crops = [], []
        for spec in specs:
            boxes = self.crops(spec.height, spec.width)
            sources = [spec] + [cropped(spec, *box) for box in boxes]
            outputs.append([(s, self.plan(s.height, s.width)) for s in sources])
            num_crops += [len(boxes)] * spec.batch
        return self._expanded_outputs(specs, outputs, {"num_crops": num_crops})
