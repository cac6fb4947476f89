"""Idefics3's image processor, which SmolVLM's is too (the same rules; SmolVLM's configs give
larger sizes). Each image is resized so its longest edge is size['longest_edge'] (1456),
then so both sides are multiples of max_image_size['longest_edge'] (364), and cut into
364 x 364 tiles, row-major, followed by the whole image resized to 364 x 364 (one frame
where it already is that size). The frames of a sample's images follow each other:
pixel_values [samples, most frames, 3, 364, 364], zero-padded, and pixel_attention_mask
[samples, most frames, 364, 364] (int64, 1 for a frame's pixels, 0 for padding); `rows`
and `cols` (each image's tile grid, 0 where it was not cut) with return_row_col_info.

HF resizes three times, the second and third time from the first's and second's uint8
results; the exact filter does the same (resized_image keeps each intermediate as bytes),
so its values are HF's. The configs' resample is LANCZOS, which HF's processor (its
torchvision backend) computes as bicubic for CUDA images, and for host images with torch's
uint8 Lanczos from torchvision 0.27 on (bicubic before): texturevlm does the same for each
device, as the installed torchvision decides (_resize.lanczos_on_host). Without
torchvision HF's processor is its PIL one (Idefics3ImageProcessorPil), whose Lanczos
torch's is within 2 uint8 steps of; texturevlm takes torch's there."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .. import _tensors
from ._common import BatchFeature, Processor, Runner, expanded_parts, padded_groups
from ._images import rgb_spec
from ._resize import DEFAULT_FILTER, Plan, StagedLaunch, cached_call, lanczos_on_host, resized_images
from ._rules import IMAGENET_STANDARD_MEAN, IMAGENET_STANDARD_STD, ProcessorInputError, config_flag, config_sizes

#: HF's MAX_IMAGE_SIZE: no side is resized beyond it.
MAX_IMAGE_SIZE = 4096
#: PIL's LANCZOS, the configs' resample; HF's processor resizes CUDA images bicubic for it.
LANCZOS = 1


def longest_edge_size(height: int, width: int, longest_edge: int) -> Tuple[int, int]:
    """(height, width) with the longest edge at `longest_edge`, the other side by the aspect
    ratio, made even, then scaled below MAX_IMAGE_SIZE (HF's get_resize_output_image_size,
    its arithmetic)."""
    aspect = width / height
    if width >= height:
        width = longest_edge
        height = int(width / aspect)
        height += height % 2
    else:
        height = longest_edge
        width = int(height * aspect)
        width += width % 2
    height, width = max(height, 1), max(width, 1)
    aspect = width / height
    if width >= height and width > MAX_IMAGE_SIZE:
        width = MAX_IMAGE_SIZE
        height = int(width / aspect)
    elif height > width and height > MAX_IMAGE_SIZE:
        height = MAX_IMAGE_SIZE
        width = int(height * aspect)
    return max(height, 1), max(width, 1)


def tile_multiple_size(height: int, width: int, tile: int) -> Tuple[int, int]:
    """(height, width) with both sides multiples of `tile`, the longer one rounded up first
    (HF's resize_for_vision_encoder, its arithmetic)."""
    aspect = width / height
    if width >= height:
        width = math.ceil(width / tile) * tile
        height = math.ceil(int(width / aspect) / tile) * tile
    else:
        height = math.ceil(height / tile) * tile
        width = math.ceil(int(height * aspect) / tile) * tile
    return height, width


def nested_samples(images: Any) -> List[List[Any]]:
    """Samples of images as HF's make_nested_list_of_images reads them: a list of lists is
    samples; a list of images is one sample (a list of [B, C, H, W] batches: a sample
    each); one image is a sample of one; one [B, C, H, W] batch is one sample of B."""
    if images is None:
        raise ProcessorInputError("no images: pass an image tensor or a list of them")
    if isinstance(images, (list, tuple)):
        if not images:
            raise ProcessorInputError("no images: the list is empty; pass at least one image")
        if all(isinstance(sample, (list, tuple)) for sample in images):
            samples = [list(sample) for sample in images]
        elif all(getattr(image, "ndim", 3) == 4 for image in images):
            samples = [list(batch) for batch in images]
        else:
            samples = [list(images)]
    else:
        samples = [list(images)] if getattr(images, "ndim", 3) == 4 else [[images]]
    if not any(samples):
        raise ProcessorInputError("no images: every sample is empty; pass at least one image")
    return samples


class Idefics3ImageProcessor(Processor):
    """transformers' Idefics3ImageProcessor (and SmolVLM's), from the same config values
    (size, max_image_size, do_image_splitting, do_pad, return_row_col_info, image_mean /
    image_std, ...), returning pixel_values, pixel_attention_mask (do_pad) and rows / cols
    (return_row_col_info) as HF does; `filter`, `dtype` and `backend` as for
    CLIPImageProcessor (filter='texture' resizes each frame from the image once instead of
    HF's chain)."""

    model_input_names = ["pixel_values", "pixel_attention_mask"]
    call_kwargs = frozenset({"do_image_splitting", "max_image_size", "do_pad", "return_row_col_info"})
    default_resample = LANCZOS
    defaults: Dict[str, Any] = {
        "size": {"longest_edge": 4 * 364},
        "max_image_size": {"longest_edge": 364},
        "image_mean": IMAGENET_STANDARD_MEAN,
        "image_std": IMAGENET_STANDARD_STD,
    }

    def __init__(
        self, filter: str = DEFAULT_FILTER, dtype: str = "float32", backend: str = "auto", **config: Any
    ) -> None:
        c = {**self.defaults, **{k: v for k, v in config.items() if v is not None}}
        resample = getattr(c.get("resample", LANCZOS), "value", c.get("resample", LANCZOS))
        super().__init__({**c, "resample": 3 if resample == LANCZOS else resample}, filter, dtype, backend)
        self.resample = c.get("resample", LANCZOS)  # as the config says; resized bicubic, as HF does on CUDA
        self._config["resample"] = self.resample  # variants for call-time arguments start from LANCZOS too
        if resample == LANCZOS and lanczos_on_host():  # host images as HF resizes them (torchvision >= 0.27)
            self._host_resample = "lanczos"
        # HF allows null values in a size dict: a null is a key not given.
        size = {k: v for k, v in config_sizes(c["size"], "size").items() if v is not None}
        max_image_size = {k: v for k, v in config_sizes(c["max_image_size"], "max_image_size").items() if v is not None}
        if "longest_edge" not in size and not ("height" in size and "width" in size):
            raise ProcessorInputError(f"size must have 'longest_edge', or 'height' and 'width'; got {c['size']}")
        if "longest_edge" not in max_image_size:
            raise ProcessorInputError(f"max_image_size must have 'longest_edge'; got {c['max_image_size']}")
        self.size: Dict[str, int] = size
        self.max_image_size: Dict[str, int] = max_image_size
        self.tile = int(self.max_image_size["longest_edge"])
        if self.tile > MAX_IMAGE_SIZE:  # HF would resize every image up to a multiple of it
            raise ProcessorInputError(
                f"max_image_size['longest_edge'] {self.tile} exceeds {MAX_IMAGE_SIZE}, the largest side HF resizes to: "
                "the checkpoints use 364 (Idefics3) or 384 to 512 (SmolVLM)"
            )
        self.do_image_splitting: bool = config_flag(c, "do_image_splitting", True)
        self.do_pad: bool = config_flag(c, "do_pad", True)
        self.return_row_col_info: bool = config_flag(c, "return_row_col_info", False)

    def resized_size(self, height: int, width: int) -> Tuple[int, int]:
        """An image's size after the first resize (do_resize)."""
        if not self.do_resize:
            return height, width
        if "longest_edge" in self.size:
            return longest_edge_size(height, width, int(self.size["longest_edge"]))
        return int(self.size["height"]), int(self.size["width"])

    def grid(self, height: int, width: int) -> Tuple[int, int]:
        """(rows, cols) of the tiles an image of height x width is cut into; (0, 0) where it
        is not cut (one frame)."""
        if not self.do_image_splitting:
            return 0, 0
        h, w = tile_multiple_size(*self.resized_size(height, width), self.tile)
        return (h // self.tile, w // self.tile) if h > self.tile or w > self.tile else (0, 0)

    def get_number_of_image_patches(
        self, height: int, width: int, images_kwargs: Optional[Dict[str, Any]] = None
    ) -> int:
        """Frames an image of height x width gives: its tiles and its whole, or one."""
        rows, cols = self._with(images_kwargs).grid(height, width)
        return rows * cols + 1 if rows else 1

    def _square(self) -> Plan:
        plan = self._plans.get("square")
        if plan is None:
            plan = self._plans["square"] = self._plan((self.tile, self.tile), (0, 0, self.tile, self.tile))
        return plan

    def _resize_plan(self, height: int, width: int, tiles: bool = False) -> Plan:
        key = ("tiles" if tiles else "resize", height, width)
        plan = self._plans.get(key)
        if plan is None:
            cut = (self.tile, self.tile) if tiles else None
            plan = self._plans[key] = self._plan((height, width), (0, 0, height, width), tiles=cut)
        return plan

    def _sources(self, specs: List[Any], stages: Optional[List[StagedLaunch]] = None) -> List[Any]:
        """The image each image's frames are read from: with the exact filter, HF's last
        intermediate (the longest-edge resize, then the resize to whole tiles, each from the
        last one's bytes; images of one size resized in one launch); with the texture
        filter, the image itself (each frame resized from it once). `stages` gets the CUDA
        launches (resized_images' record, their members counted over `specs`)."""
        if self.filter != "exact":
            return specs
        sizes = [self.resized_size]
        if self.do_image_splitting:
            sizes.append(lambda h, w: tile_multiple_size(*self.resized_size(h, w), self.tile))
        current = list(specs)
        for size_of in sizes:
            by_size: Dict[Tuple[int, int], List[int]] = {}
            for i, (spec, original) in enumerate(zip(current, specs)):
                size = size_of(original.height, original.width)
                if size != (spec.height, spec.width):
                    by_size.setdefault(size, []).append(i)
            for (h, w), members in by_size.items():
                record: List[StagedLaunch] = []
                resized = resized_images(
                    [current[i] for i in members], self._resize_plan(h, w), self.filter, self.backend, record
                )
                if stages is not None:
                    for r in record:  # members counted over `specs`, as the stages read them
                        counted = [members[k] for k in r.members]
                        stages.append(r if counted == r.members else replace(r, members=counted))
                for i, image in zip(members, resized):
                    current[i] = rgb_spec(image)
        return current

    def _frames(self, source: Any, height: int, width: int) -> Tuple[List[Tuple[Any, Plan]], int, int]:
        """The frames of an image of height x width read from `source` (_sources'), as
        (source, plan) pairs, and its tile grid."""
        rows, cols = self.grid(height, width)
        if not rows:
            return [(source, self._square())], 0, 0
        h, w = rows * self.tile, cols * self.tile
        return [(source, self._resize_plan(h, w, tiles=True)), (source, self._square())], rows, cols

    def _process(self, images: Any, input_data_format: Optional[str]) -> BatchFeature:
        cached, pending = cached_call(self, images, input_data_format)
        if cached is not None:
            return cached
        samples = nested_samples(images)
        specs = [rgb_spec(image, self.do_convert_rgb, input_data_format) for sample in samples for image in sample]
        if any(spec.batch != 1 for spec in specs):
            raise ProcessorInputError("a sample's images are single images, not batches: pass lists of samples")
        stages: List[StagedLaunch] = []
        sources = self._sources(specs, stages)
        outputs, counts, rows, cols = [], [], [], []
        at = 0
        for sample in samples:
            frames = 0
            rows.append([])
            cols.append([])
            for _ in sample:
                parts, r, c = self._frames(sources[at], specs[at].height, specs[at].width)
                outputs.append(parts)
                frames += r * c + 1 if r else 1
                rows[-1].append(r)
                cols[-1].append(c)
                at += 1
            counts.append(frames)
        run_specs, parts, values = expanded_parts(sources, outputs)
        runner = Runner(run_specs, self.filter, self.backend, self.dtype)
        shape = (values // (3 * self.tile * self.tile), 3, self.tile, self.tile)

        def finish(out: BatchFeature) -> BatchFeature:
            framework = _tensors.framework_of(out["pixel_values"])
            values, mask = per_sample(out["pixel_values"], counts, self.do_pad, framework)
            out["pixel_values"] = values
            if mask is not None:
                out["pixel_attention_mask"] = mask
            if self.return_row_col_info:
                out["rows"], out["cols"] = rows, cols
            return out

        staged = (
            stages,
            [p for spec in specs for p in spec.image_pointers()],
            [p for source in sources for p in source.image_pointers()],
        )
        return self._outputs(runner, parts, shape, pending, finish=finish, staged=staged)


class SmolVLMImageProcessor(Idefics3ImageProcessor):
    """transformers' SmolVLMImageProcessor: Idefics3's rules (its checkpoints' configs give
    size {'longest_edge': 2048} or more and max_image_size {'longest_edge': 512})."""


def per_sample(values: Any, counts: List[int], do_pad: bool, framework: str) -> Tuple[Any, Any]:
    """[frames, 3, P, P] -> the samples' frames (padded_groups) and, with do_pad, the int64
    mask [samples, most frames, P, P]: 1 on a sample's own frames, 0 on its padding."""
    values = padded_groups(values, counts, do_pad, framework)
    if not do_pad:
        return values, None
    shape = tuple(values.shape[:2]) + tuple(values.shape[-2:])
    if framework == "torch":
        import torch

        if len(set(counts)) == 1:  # one fill, no per-sample launches
            return values, torch.ones(shape, dtype=torch.int64, device=values.device)
        mask = torch.zeros(shape, dtype=torch.int64, device=values.device)
        for i, n in enumerate(counts):
            mask[i, :n] = 1
        return values, mask
    mask = np.zeros(shape, np.int64)
    for i, n in enumerate(counts):
        mask[i, :n] = 1
    return values, _tensors.host_values_beside(mask, values, framework)
