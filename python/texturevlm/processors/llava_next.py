"""LLaVA-NeXT's and LLaVA-OneVision's image processors (AnyRes): each image gives its whole
resized to size x size, then the tiles of the image resized into the best of the config's
image_grid_pinpoints (aspect kept, centred, zero-padded to the resolution): pixel_values
[images, 1 + most tiles, 3, P, P] (images with fewer tiles zero-filled, do_pad) and
image_sizes [images, 2]. LLaVA-OneVision also returns batch_num_images, and pads each image
of a sample with several images to a square of the mean colour and resizes it whole instead
(no tiles), as its processor does."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .. import _tensors
from ._common import BatchFeature, array_module, int_table, padded_groups
from ._images import flat_images, rgb_spec
from ._resize import DEFAULT_FILTER, Plan, cached_call
from ._rules import OPENAI_CLIP_MEAN, OPENAI_CLIP_STD, ProcessorInputError, config_flag, config_size, resized_size
from .clip import FixedSizeImageProcessor

LLAVA_NEXT_PINPOINTS = [[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]]
ONEVISION_PINPOINTS = [[h, w] for h in range(384, 2305, 384) for w in range(384, 2305, 384)]


def select_best_resolution(height: int, width: int, resolutions: Sequence[Sequence[int]]) -> Tuple[int, int]:
    """The (height, width) of `resolutions` an image of height x width fills best (HF's
    select_best_resolution, its arithmetic): most of the image's pixels kept after an
    aspect-kept downscale, then least area wasted; the first on a tie.

    A resolution at least the image's size on both sides keeps all its pixels; any other
    must shrink it (its scale is below 1 on the side it lacks) and keeps fewer. So where
    some resolution holds the image, the answer is the one of least area among those that
    do (the first on a tie), HF's walk's answer without its arithmetic per resolution."""
    holding: Optional[Tuple[int, int]] = None
    least_area = 0
    for h, w in resolutions:
        if h >= height and w >= width and (holding is None or h * w < least_area):
            holding, least_area = (int(h), int(w)), h * w
    if holding is not None:
        return holding
    best, most, least = None, 0, float("inf")
    for h, w in resolutions:
        scale = min(w / width, h / height)
        kept = min(int(width * scale) * int(height * scale), width * height)
        wasted = w * h - kept
        if kept > most or (kept == most and wasted < least):
            best, most, least = (int(h), int(w)), kept, wasted
    assert best is not None
    return best


def patch_output_size(height: int, width: int, target_height: int, target_width: int) -> Tuple[int, int]:
    """The image's size resized into target (aspect kept, the long side filling it; HF's
    get_patch_output_size, which rounds the other side up)."""
    scale_w, scale_h = target_width / width, target_height / height
    if scale_w < scale_h:
        return min(math.ceil(height * scale_w), target_height), target_width
    return target_height, min(math.ceil(width * scale_h), target_width)


def _pinpoints(value: Any) -> List[List[int]]:
    if not isinstance(value, (list, tuple)) or not value:
        raise ProcessorInputError(f"image_grid_pinpoints is a list of [height, width] resolutions, got {value!r}")
    out = []
    for pair in value:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ProcessorInputError(f"image_grid_pinpoints has [height, width] pairs, not {pair!r}")
        out.append(
            [config_size(pair[0], "image_grid_pinpoints height"), config_size(pair[1], "image_grid_pinpoints width")]
        )
    return out


class LlavaNextImageProcessor(FixedSizeImageProcessor):
    """transformers' LlavaNextImageProcessor, from the same config values (size, crop_size,
    image_grid_pinpoints, do_pad, resample, image_mean / image_std, ...), returning
    pixel_values and image_sizes in HF's order (each image's whole, then its tiles,
    row-major). The tiles' size is crop_size (else size); configs whose tiles HF would
    resize or crop again (a size or crop_size other than the tile size, pinpoints that are
    not whole tiles) are refused. The defaults are the llava-v1.6 checkpoints' config (336:
    HF's class attributes say 224, whose tiles of the 336-based pinpoints HF resizes again).
    `filter`, `dtype` and `backend` as for CLIPImageProcessor."""

    model_input_names = ["pixel_values", "image_sizes"]
    call_kwargs = frozenset({"image_grid_pinpoints", "do_pad"})
    defaults: Dict[str, Any] = {
        "size": {"shortest_edge": 336},
        "crop_size": {"height": 336, "width": 336},
        "do_center_crop": True,
        "image_mean": OPENAI_CLIP_MEAN,
        "image_std": OPENAI_CLIP_STD,
        "image_grid_pinpoints": LLAVA_NEXT_PINPOINTS,
    }

    def __init__(
        self, filter: str = DEFAULT_FILTER, dtype: str = "float32", backend: str = "auto", **config: Any
    ) -> None:
        super().__init__(filter, dtype, backend, **config)
        c = {**self.defaults, **{k: v for k, v in config.items() if v is not None}}
        self.image_grid_pinpoints = _pinpoints(c["image_grid_pinpoints"])
        self.do_pad: bool = config_flag(c, "do_pad", True)
        s = self.size
        self.whole = (
            (int(s["height"]), int(s["width"])) if "height" in s else (int(s["shortest_edge"]),) * 2
        )  # HF's size tuple: where each image's whole goes
        crop = self.crop_size
        self.tile = int(crop["height"]) if "height" in crop else int(s.get("height", s.get("shortest_edge")))
        square = (self.tile, self.tile)
        again = self.whole != square or (self.do_resize and resized_size(*square, s) != square)
        ragged = [p for p in self.image_grid_pinpoints if p[0] % self.tile or p[1] % self.tile]
        if ragged:
            raise ProcessorInputError(
                f"image_grid_pinpoints {ragged} are not whole {self.tile}-pixel tiles: HF would resize and crop "
                "the partial tiles again, which texturevlm does not do"
            )
        if again or (self.do_center_crop and (int(crop["height"]), int(crop["width"])) != square):
            raise ProcessorInputError(
                f"size {s} and crop_size {crop} with {self.tile}-pixel tiles: HF would resize or crop each tile "
                "again, which texturevlm does not do; use a config whose size and crop_size are the tile size"
            )

    def best_resolution(self, height: int, width: int) -> Tuple[int, int]:
        """The pinpoint resolution an image of height x width is tiled at (kept per size: a
        call asks it of every image)."""
        key = ("best", height, width)
        best = self._plans.get(key)
        if best is None:
            best = self._plans[key] = select_best_resolution(height, width, self.image_grid_pinpoints)
        return best

    def whole_plan(self) -> Plan:
        plan = self._plans.get("whole")
        if plan is None:
            plan = self._plans["whole"] = self._plan(self.whole, (0, 0) + self.whole)
        return plan

    def tiles_plan(self, height: int, width: int) -> Plan:
        """The image resized into its best resolution, centred and zero-padded to it, cut
        into tiles: a window reaching past the resized image."""
        key = ("tiles", height, width)
        plan = self._plans.get(key)
        if plan is None:
            bh, bw = self.best_resolution(height, width)
            rh, rw = patch_output_size(height, width, bh, bw)
            top, left = (bh - rh) // 2, (bw - rw) // 2
            plan = self._plans[key] = self._plan((rh, rw), (-top, -left, bh, bw), tiles=(self.tile, self.tile))
        return plan

    def get_number_of_image_patches(
        self, height: int, width: int, images_kwargs: Optional[Dict[str, Any]] = None
    ) -> int:
        """Rows an image of height x width gives before padding: its whole and its tiles."""
        processor = self._with(images_kwargs)
        bh, bw = processor.best_resolution(height, width)
        return 1 + math.ceil(bh / processor.tile) * math.ceil(bw / processor.tile)

    def _process(self, images: Any, input_data_format: Optional[str]) -> BatchFeature:
        cached, pending = cached_call(self, images, input_data_format)  # lists of samples are not cached
        if cached is not None:
            return cached
        composed = self._composed(pending)
        if composed is not None:
            return composed
        flat, per_sample = self._samples(images)
        several = [n > 1 for n in per_sample for _ in range(n)] if per_sample else [False] * len(flat)
        specs, outputs, sizes, counts = [], [], [], []
        for image, in_a_group in zip(flat, several):
            spec = rgb_spec(image, self.do_convert_rgb, input_data_format)
            sizes.append([spec.height, spec.width])
            if in_a_group:  # padded to a square and resized whole: one row
                spec = rgb_spec(padded_square(spec, [int(m * 255) for m in self.image_mean]))
                outputs.append([(spec, self.whole_plan())])
                counts.append(1)
            else:
                outputs.append([(spec, self.whole_plan()), (spec, self.tiles_plan(spec.height, spec.width))])
                counts.append(self.get_number_of_image_patches(spec.height, spec.width))
            specs.append(spec)

        return self._expanded_outputs(
            specs, outputs, {}, pending, lambda out: self._finish(out, counts, sizes, per_sample)
        )

    def _finish(
        self, out: BatchFeature, counts: List[int], sizes: List[List[int]], per_sample: List[int]
    ) -> BatchFeature:
        """pixel_values [images, most rows, 3, h, w], each image's rows (`counts`) zero-padded
        (do_pad), then the tables (_tables)."""
        framework = _tensors.framework_of(out["pixel_values"])
        out["pixel_values"] = padded_groups(out["pixel_values"], counts, self.do_pad, framework)
        return self._tables(out, framework, sizes, per_sample)

    def _tables(self, out: BatchFeature, framework: str, sizes: List[List[int]], per_sample: List[int]) -> BatchFeature:
        """image_sizes from `sizes` (height, width each) and batch_num_images (`per_sample`,
        where the family returns it), in `framework` (pixel_values may be a list of each
        image's rows by now: no do_pad)."""
        out["image_sizes"] = int_table(framework, sizes).reshape(-1, 2)
        if per_sample:
            out["batch_num_images"] = int_table(framework, per_sample)
        return out

    def _slot_rows(self, launches: List[Any]) -> Optional[int]:
        """With do_pad, a composed call writes each image's rows into a slot of the most rows
        (zeros after them): the padded pixel_values, with no copy."""
        return max(kept.rows for kept in launches) if self.do_pad else None

    def _finish_composed(self, out: BatchFeature, launches: List[Any]) -> BatchFeature:
        """A composed list of single images: one image per sample, as _samples reads a flat
        list; with do_pad its rows are already in their slots (_slot_rows)."""
        sizes = [list(kept.size) for kept in launches]
        per_sample = self._flat_samples(len(launches))
        if self.do_pad:
            return self._tables(out, _tensors.framework_of(out["pixel_values"]), sizes, per_sample)
        return self._finish(out, [kept.rows for kept in launches], sizes, per_sample)

    def _flat_samples(self, images: int) -> List[int]:
        """batch_num_images of a flat list of `images` images (none: LLaVA-NeXT has none)."""
        return []

    def _samples(self, images: Any) -> Tuple[List[Any], List[int]]:
        """Every image, in order, and batch_num_images as the family reads them (a flat
        list: _flat_samples)."""
        flat = flat_images(images)
        return flat, self._flat_samples(len(flat))


def padded_square(spec: Any, fill: List[int]) -> Any:
    """The RGB image of `spec` centred on a square of `fill` (per channel, in its units), as
    HF's pad_to_square: [3, S, S] in its framework, dtype and device."""
    h, w = spec.height, spec.width
    side = max(h, w)
    top, left = (side - h) // 2, (side - w) // 2
    x = spec.array
    if spec.batched:
        x = x[0]
    if spec.framework == "torch":
        planes = x.permute(2, 0, 1) if spec.channels_last else x
        out = planes.new_empty((3, side, side))
        for c in range(3):
            out[c].fill_(fill[c])
        out[:, top : top + h, left : left + w] = planes
        return out
    xp = array_module(spec.framework)
    planes = xp.moveaxis(x, -1, 0) if spec.channels_last else x
    pads = ((top, side - h - top), (left, side - w - left))
    return xp.stack([xp.pad(planes[c], pads, constant_values=fill[c]) for c in range(3)])


class LlavaOnevisionImageProcessor(LlavaNextImageProcessor):
    """transformers' LlavaOnevisionImageProcessor: LLaVA-NeXT's AnyRes with the whole image
    resized to size (384 x 384) and 384-pixel tiles over pinpoints up to 2304 x 2304. A
    nested list is a batch of samples: a sample of several images pads each to a square of
    the mean colour and resizes it whole (one row, no tiles), as HF does; batch_num_images
    counts each sample's images."""

    model_input_names = ["pixel_values", "image_sizes", "batch_num_images"]
    defaults: Dict[str, Any] = {
        "size": {"height": 384, "width": 384},
        "crop_size": None,
        "do_center_crop": False,
        "image_mean": OPENAI_CLIP_MEAN,
        "image_std": OPENAI_CLIP_STD,
        "image_grid_pinpoints": ONEVISION_PINPOINTS,
    }

    def _samples(self, images: Any) -> Tuple[List[Any], List[int]]:
        if isinstance(images, (list, tuple)) and images and isinstance(images[0], (list, tuple)):
            samples = [flat_images(s) for s in images if s]  # HF drops empty (text-only) samples
            return [image for sample in samples for image in sample], [len(sample) for sample in samples]
        return super()._samples(images)

    def _flat_samples(self, images: int) -> List[int]:
        return [1] * images
