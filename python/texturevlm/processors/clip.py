"""CLIP- and SigLIP-style processors: every image resized (CLIP: shorter side to
size['shortest_edge'], then a center crop; SigLIP: straight to size['height'] x
size['width']), rescaled, normalized: pixel_values [B, 3, h, w]."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from ._common import BatchFeature, Processor, Runner, expanded_parts
from ._images import image_specs
from ._resize import DEFAULT_FILTER, PendingCall, Plan, cached_call
from ._rules import (
    IMAGENET_STANDARD_MEAN,
    IMAGENET_STANDARD_STD,
    OPENAI_CLIP_MEAN,
    OPENAI_CLIP_STD,
    ProcessorInputError,
    center_crop_box,
    config_flag,
    config_sizes,
    resized_size,
)


class FixedSizeImageProcessor(Processor):
    """Resize (+ center crop) + rescale + normalize to one size for every image, built from
    the same values as the Hugging Face processor's config (`from_pretrained` reads them
    from disk), returning the same pixel_values.

    `filter`: 'exact' (default) resizes with the config's resample (bicubic; bilinear where
    it says 2) as Hugging Face's processor does for the input's device (torch's CUDA
    kernel's arithmetic for CUDA images, its CPU resize for host images): HF's values;
    'texture' resizes with the box mip chain and one anisotropic trilinear texture sample
    per output pixel, faster and softer (docs/processors.md has the differences measured
    on photographs). `dtype`: float32 (HF's), float16 or bfloat16, written
    directly. `backend`: for host images, 'auto' (Vulkan where present, else the CPU
    reference), 'vulkan' or 'cpu'; CUDA images run on CUDA on the current stream."""

    defaults: Dict[str, Any] = {}

    def __init__(
        self, filter: str = DEFAULT_FILTER, dtype: str = "float32", backend: str = "auto", **config: Any
    ) -> None:
        c = {**self.defaults, **config}
        size = c.get("size") or {}
        if isinstance(size, int):  # as HF's get_size_dict reads a bare number for this model
            size = (
                {"shortest_edge": size}
                if "shortest_edge" in self.defaults.get("size", {})
                else {"height": size, "width": size}
            )
        self.size: Dict[str, int] = config_sizes(size, "size")
        self.do_center_crop: bool = config_flag(c, "do_center_crop", False)
        crop = c.get("crop_size") or self.size
        crop = (
            {"height": crop, "width": crop} if isinstance(crop, (int, float)) and not isinstance(crop, bool) else crop
        )
        self.crop_size: Dict[str, int] = config_sizes(crop, "crop_size")
        if "shortest_edge" not in self.size and not ("height" in self.size and "width" in self.size):
            raise ProcessorInputError(f"size must have 'height' and 'width', or 'shortest_edge'; got {self.size}")
        if self.do_center_crop and not ("height" in self.crop_size and "width" in self.crop_size):
            raise ProcessorInputError(f"crop_size must have 'height' and 'width'; got {self.crop_size}")
        super().__init__(c, filter, dtype, backend)

    def plan(self, height: int, width: int) -> Plan:
        """Where an image of height x width goes: resized size and crop window."""
        plan = self._plans.get((height, width))
        if plan is None:
            rh, rw = resized_size(height, width, self.size) if self.do_resize else (height, width)
            if self.do_center_crop:
                ch, cw = int(self.crop_size["height"]), int(self.crop_size["width"])
                top, left = center_crop_box(rh, rw, ch, cw)
                window = (top, left, ch, cw)
            else:
                window = (0, 0, rh, rw)
            if min(rh, rw) < 1:
                raise ProcessorInputError(f"a {height}x{width} image resizes to {rh}x{rw}: nothing is left")
            plan = self._plan((rh, rw), window)
            self._plans[(height, width)] = plan
        return plan

    def _process(self, images: Any, input_data_format: Optional[str]) -> BatchFeature:
        """pixel_values [B, 3, h, w] of `images` (one, a list, or a [B, C, H, W] batch), in
        their framework on their device."""
        outputs, pending = cached_call(self, images, input_data_format)
        if outputs is not None:
            return outputs
        composed = self._composed(pending)
        if composed is not None:
            return composed
        specs = image_specs(images, self.do_convert_rgb, input_data_format, pending)
        runner = Runner(specs, self.filter, self.backend, self.dtype)
        plans = [self.plan(s.height, s.width) for s in specs]
        sizes = {p.window[2:] for p in plans}
        if len(sizes) != 1:
            raise ProcessorInputError(
                f"images resize to different sizes {sorted(sizes)}: a fixed-size processor "
                "needs do_resize or a crop that gives every image one size"
            )
        h, w = sizes.pop()
        images = sum(s.batch for s in specs)
        shape = (images, 3, h, w)
        return self._outputs(runner, runner.parts(plans), shape, pending, counts=self._counts(images), composable=True)

    def _counts(self, images: int) -> Optional[Dict[str, List[int]]]:
        """Per-image counts the model's processor also returns (Gemma 3's num_crops)."""
        return None

    def _expanded_outputs(
        self,
        specs: List[Any],
        outputs: List[List[Tuple[Any, Plan]]],
        counts: Dict[str, List[int]],
        pending: Optional[PendingCall] = None,
        finish: Optional[Callable[[BatchFeature], BatchFeature]] = None,
    ) -> BatchFeature:
        """pixel_values [outputs, 3, h, w] of images that each give several outputs (crops,
        tiles, thumbnails: expanded_parts), all of one size, and the per-image `counts`, then
        `finish`; remembered for the layout where `pending` (cached_call's) is given."""
        run_specs, parts, values = expanded_parts(specs, outputs)
        plan = parts[0].plan
        h, w = plan.tiles or plan.window[2:]  # a tile's size, or the window's
        runner = Runner(run_specs, self.filter, self.backend, self.dtype)
        shape = (values // (3 * h * w), 3, h, w)
        return self._outputs(runner, parts, shape, pending, counts=counts, finish=finish, composable=True)


class CLIPImageProcessor(FixedSizeImageProcessor):
    """transformers' CLIPImageProcessor: shorter side to 224 (bicubic), 224x224 center crop,
    OpenAI CLIP mean and std."""

    defaults = {
        "size": {"shortest_edge": 224},
        "do_center_crop": True,
        "crop_size": {"height": 224, "width": 224},
        "image_mean": OPENAI_CLIP_MEAN,
        "image_std": OPENAI_CLIP_STD,
    }


class SiglipImageProcessor(FixedSizeImageProcessor):
    """transformers' SiglipImageProcessor: straight to 224x224 (bicubic, aspect not kept),
    mean and std 0.5."""

    defaults = {
        "size": {"height": 224, "width": 224},
        "do_center_crop": False,
        "image_mean": IMAGENET_STANDARD_MEAN,
        "image_std": IMAGENET_STANDARD_STD,
    }
