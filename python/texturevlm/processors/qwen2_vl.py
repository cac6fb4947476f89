"""Qwen2-VL's image and video processors: each image resized to multiples of
patch_size * merge_size within [min_pixels, max_pixels] (smart_resize), rescaled,
normalized, cut into patch_size^2 patches ordered in merge_size x merge_size groups, every
patch holding temporal_patch_size frames (a still image: copies of itself).
pixel_values [sum of patches, 3 * T * P * P] and image_grid_thw [images, 3]."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from .. import _tensors
from ._common import BatchFeature, Processor, Runner, grid_table
from ._images import flat_images, image_specs, rgb_spec
from ._resize import (
    DEFAULT_FILTER,
    Plan,
    cached_call,
    finish_host,
    host_planar,
    levels_for,
    resize_ring_frame,
    write_cuda,
)
from ._rules import ProcessorInputError, config_size, config_sizes, smart_resize


class Qwen2VLImageProcessor(Processor):
    """transformers' Qwen2VLImageProcessor, built from the same config values (min_pixels /
    max_pixels or size {'shortest_edge', 'longest_edge'}, patch_size, temporal_patch_size,
    merge_size, image_mean, image_std, ...), returning the same keys, shapes, dtypes and
    order. `filter`, `dtype` and `backend` as for CLIPImageProcessor."""

    model_input_names = ["pixel_values", "image_grid_thw"]
    #: The pixel budget of transformers' defaults (the Qwen2-VL model configs set their own).
    default_size = {"shortest_edge": 56 * 56, "longest_edge": 28 * 28 * 1280}

    def __init__(
        self, filter: str = DEFAULT_FILTER, dtype: str = "float32", backend: str = "auto", **config: Any
    ) -> None:
        c = dict(config)
        size = c.get("size") or self.default_size
        if not isinstance(size, dict):
            raise ProcessorInputError(f"size must be a dict with 'shortest_edge' and 'longest_edge', got {size!r}")
        size = dict(size)
        if c.get("min_pixels") is not None:
            size["shortest_edge"] = c["min_pixels"]
        if c.get("max_pixels") is not None:
            size["longest_edge"] = c["max_pixels"]
        if not size.get("shortest_edge") or not size.get("longest_edge"):
            raise ProcessorInputError(f"size must contain 'shortest_edge' and 'longest_edge' keys, got {size}")
        self.size: Dict[str, int] = config_sizes(size, "size")
        self.min_pixels, self.max_pixels = self.size["shortest_edge"], self.size["longest_edge"]
        self.patch_size: int = config_size(c.get("patch_size", 14), "patch_size")
        self.temporal_patch_size: int = config_size(c.get("temporal_patch_size", 2), "temporal_patch_size")
        self.merge_size: int = config_size(c.get("merge_size", 2), "merge_size")
        super().__init__(c, filter, dtype, backend)

    @property
    def factor(self) -> int:
        return self.patch_size * self.merge_size

    def plan(self, height: int, width: int) -> Plan:
        """Where an image of height x width goes (smart_resize), cached by size."""
        plan = self._plans.get((height, width))
        if plan is None:
            if self.do_resize:
                rh, rw = smart_resize(height, width, self.factor, self.min_pixels, self.max_pixels)
            else:
                rh, rw = height, width
                if rh % self.factor or rw % self.factor:
                    raise ProcessorInputError(
                        f"with do_resize=False the image sides must be multiples of patch_size * merge_size "
                        f"({self.factor}); got {height}x{width}"
                    )
            plan = self._plan((rh, rw), (0, 0, rh, rw), (self.patch_size, self.merge_size, self.temporal_patch_size))
            self._plans[(height, width)] = plan
        return plan

    def grid(self, plan: Plan, frames: int = 1) -> List[int]:
        """(t, h, w) of the patch grid."""
        return [frames, plan.resized[0] // self.patch_size, plan.resized[1] // self.patch_size]

    def get_number_of_image_patches(
        self, height: int, width: int, images_kwargs: Optional[Dict[str, Any]] = None
    ) -> int:
        """Patches (rows of pixel_values) of an image of height x width, with the config
        values among `images_kwargs` (as HF's multimodal processors pass them) applied."""
        processor = self._with(images_kwargs)
        _, h, w = processor.grid(processor.plan(height, width))
        return h * w

    def _call_config(self, overrides: Dict[str, Any]) -> Dict[str, Any]:
        """As HF's preprocess: a call's `size` wins over the config's min_pixels / max_pixels."""
        config = {**self._config, **overrides}
        if "size" in overrides:
            for name in ("min_pixels", "max_pixels"):
                if name not in overrides:
                    config.pop(name, None)
        return config

    def _process(self, images: Any, input_data_format: Optional[str]) -> BatchFeature:
        """pixel_values and image_grid_thw of `images` (one, a list of any sizes, or a
        [B, C, H, W] batch), in their framework on their device; image_grid_thw on the host
        as HF makes it."""
        outputs, pending = cached_call(self, images, input_data_format)
        if outputs is not None:
            return outputs
        composed = self._composed(pending)
        if composed is not None:
            return composed
        specs = image_specs(images, self.do_convert_rgb, input_data_format, pending)
        runner = Runner(specs, self.filter, self.backend, self.dtype)
        plans = [self.plan(s.height, s.width) for s in specs]
        rows = sum(p.patches_per_image() * s.batch for p, s in zip(plans, specs))
        width = 3 * self.temporal_patch_size * self.patch_size**2
        grids = [self.grid(p) for p, s in zip(plans, specs) for _ in range(s.batch)]
        return self._outputs(runner, runner.parts(plans), (rows, width), pending, grids, composable=True)


class Qwen2VLVideoProcessor(Qwen2VLImageProcessor):
    """transformers' Qwen2VLVideoProcessor (without frame sampling: pass the frames to
    use): frames in pairs (temporal_patch_size) as patches' time slots, the last frame
    repeated to complete a pair. pixel_values_videos and video_grid_thw.

    `from_ring(pyramid)` takes the newest frames straight from a TexturePyramid video ring
    (TexturePyramid.create(..., ring=N)): frames already in textures are not uploaded again."""

    model_input_names = ["pixel_values_videos", "video_grid_thw"]
    default_size = {"shortest_edge": 128 * 28 * 28, "longest_edge": 28 * 28 * 768}

    def __init__(
        self, filter: str = DEFAULT_FILTER, dtype: str = "float32", backend: str = "auto", **config: Any
    ) -> None:
        if config.get("do_sample_frames"):
            raise ProcessorInputError("do_sample_frames: texturevlm takes the frames you pass; sample them first")
        super().__init__(filter, dtype, backend, **config)

    def __call__(self, videos: Any, input_data_format: Optional[str] = None, **kwargs: Any) -> BatchFeature:
        """pixel_values_videos and video_grid_thw of `videos`: a [T, C, H, W] tensor (one
        video), or a list of them / of lists of frames. Keyword arguments as for images."""
        return super().__call__(videos, input_data_format, **kwargs)

    def preprocess(self, videos: Any, **kwargs: Any) -> BatchFeature:
        """The same as calling the processor, as HF names it."""
        return self(videos, **kwargs)

    def _process(self, videos: Any, input_data_format: Optional[str]) -> BatchFeature:
        clips = videos if isinstance(videos, (list, tuple)) and videos and _is_clip(videos[0]) else [videos]
        pixel_rows, grids, runners = [], [], []
        for clip in clips:
            frames = [rgb_spec(f, self.do_convert_rgb, input_data_format) for f in flat_images(clip)]
            if len({(f.height, f.width) for f in frames}) != 1:
                raise ProcessorInputError("the frames of a video have different sizes: resize them to one first")
            frames += [frames[-1]] * (-len(frames) % self.temporal_patch_size)  # HF repeats the last frame
            runner = Runner(frames, self.filter, self.backend, self.dtype)
            plan = self.plan(frames[0].height, frames[0].width)
            pixel_rows.append(self._video(runner, frames, plan))
            grids.append(self.grid(plan, len(frames) // self.temporal_patch_size))
            runners.append(runner)
        runner = runners[0]
        if len(pixel_rows) == 1:
            values = pixel_rows[0]
        elif runner.framework == "torch":
            import torch

            values = torch.cat(pixel_rows, 0)
        else:
            values = np.concatenate([np.asarray(v) for v in pixel_rows], 0)
        return BatchFeature(pixel_values_videos=values, video_grid_thw=runner.grid(grids))

    def _video(self, runner: Runner, frames: List[Any], plan: Plan) -> Any:
        t = self.temporal_patch_size
        groups = len(frames) // t
        shape = (groups * plan.patches_per_image(), 3 * t * self.patch_size**2)
        if runner.device != "cuda":
            planar = np.concatenate([host_planar(f, plan, runner.filter, runner.backend) for f in frames])
            return runner.host_result(finish_host(planar, plan, frames[0].dtype == "uint8", frames=True))
        out = _tensors.empty(runner.framework, "cuda", runner.index, shape, runner.out_dtype)
        ptr = _tensors.pointer_and_strides(out, runner.framework)[0]
        for g in range(groups):
            for k in range(t):
                write_cuda(
                    [frames[g * t + k]],
                    plan,
                    runner.filter,
                    ptr,
                    g * plan.values_per_image(),
                    runner.stream,
                    first_time=k,
                    times=1,
                    out_dtype=runner.out_dtype,
                )
        return _tensors.hand_over(out, runner.framework, runner.index, runner.stream)

    def from_ring(self, pyramid: Any, frames: Optional[int] = None, stream: Any = None) -> BatchFeature:
        """The newest `frames` (default temporal_patch_size) frames of a CUDA video ring as
        one video: pixel_values_videos and video_grid_thw. Each frame is read from the
        texture it already sits in (mips built by update()); the reads are ordered after
        the frames' writes and before their slots are reused, on the GPU. The resize is the
        texture filter's whatever the processor's `filter` (the frames are textures, not
        tensors): pass the frames themselves for HF's values."""
        t = self.temporal_patch_size
        frames = frames or t
        if frames % t:
            raise ProcessorInputError(f"frames must be a multiple of temporal_patch_size ({t}), not {frames}")
        if not pyramid._is_cuda_ring():
            raise ProcessorInputError("from_ring takes a CUDA ring: TexturePyramid.create(..., device='cuda', ring=N)")
        if pyramid.batch != 1 or pyramid.format not in ("rgba8", "rgba16f", "rgba32f"):
            raise ProcessorInputError("from_ring takes a ring of single frames in rgba8, rgba16f or rgba32f")
        framework = pyramid._framework
        s = pyramid._stream(framework, stream)
        plan = self.plan(pyramid.height, pyramid.width)
        needed = levels_for(pyramid.width, pyramid.height, plan)
        if needed > pyramid.levels:
            raise ProcessorInputError(f"the ring has {pyramid.levels} levels, the resize reads {needed}")
        shape = (frames // t * plan.patches_per_image(), 3 * t * self.patch_size**2)
        out = _tensors.empty(framework, "cuda", pyramid.device_index, shape, self.dtype)
        ptr = _tensors.pointer_and_strides(out, framework)[0]
        byte_frames = "uint8" if pyramid.format == "rgba8" else "float32"
        with pyramid._recent_frames(frames, s) as textures:
            for i, texture in enumerate(textures):
                g, k = divmod(i, t)
                resize_ring_frame(texture, plan, byte_frames, ptr, g * plan.values_per_image(), k, s, self.dtype)
        grid = grid_table(framework, [self.grid(plan, frames // t)])
        return BatchFeature(
            pixel_values_videos=_tensors.hand_over(out, framework, pyramid.device_index, s), video_grid_thw=grid
        )


def _is_clip(x: Any) -> bool:
    """Whether a list item is a whole video (a 4-D tensor or a list of frames)."""
    return isinstance(x, (list, tuple)) or len(getattr(x, "shape", ())) == 4
