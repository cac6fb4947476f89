"""GotOcr2's image processor, which InternVL's processor uses: every image resized to
size (448 x 448 for InternVL; bicubic), rescaled, normalized. With crop_to_patches (what
InternVLProcessor passes), an image is instead resized to the tile grid whose aspect is
closest to its own (min_patches..max_patches tiles) and cut into tiles, row-major,
followed by a thumbnail of the whole image where there is more than one tile:
pixel_values [sum of tiles + thumbnails, 3, h, w] and num_patches [images]."""

from __future__ import annotations

import bisect
import functools
from typing import Any, Dict, List, Optional, Tuple

from ._common import BatchFeature
from ._images import image_specs
from ._resize import DEFAULT_FILTER, Plan, cached_call
from ._rules import OPENAI_CLIP_MEAN, OPENAI_CLIP_STD, ProcessorInputError, config_flag, config_size
from .clip import FixedSizeImageProcessor


def tile_grids(min_tiles: int, max_tiles: int) -> List[Tuple[int, int]]:
    """(columns, rows) of every grid of min_tiles..max_tiles tiles, by tile count (HF's
    get_all_supported_aspect_ratios: a stable sort, so ties keep the loop's order)."""
    grids = [
        (columns, rows)
        for columns in range(1, max_tiles + 1)
        for rows in range(1, max_tiles + 1)
        if min_tiles <= columns * rows <= max_tiles
    ]
    return sorted(grids, key=lambda g: g[0] * g[1])


@functools.lru_cache(maxsize=64)
def _grids_by_aspect(min_tiles: int, max_tiles: int) -> Tuple[List[Tuple[int, int]], List[float], List[List[int]]]:
    """tile_grids, their distinct aspects (columns / rows) ascending, and for each aspect its
    grids' places in tile_grids' order: made once per tile range (a server's every new
    image size asks for its grid)."""
    grids = tile_grids(min_tiles, max_tiles)
    places: Dict[float, List[int]] = {}
    for k, (columns, rows) in enumerate(grids):
        places.setdefault(columns / rows, []).append(k)
    aspects = sorted(places)
    return grids, aspects, [places[a] for a in aspects]


def optimal_tile_grid(
    height: int, width: int, tile_height: int, tile_width: int, min_tiles: int, max_tiles: int
) -> Tuple[int, int]:
    """(columns, rows) of the grid whose aspect is closest to the image's (HF's
    get_optimal_tiled_canvas, its arithmetic): on a tie, the later grid (more tiles) where
    the image's area exceeds half the grid's.

    HF walks every grid; the same answer comes from the grids of the one or two aspects
    nearest the image's (either side of it): any other aspect is farther (distinct aspects
    of grids up to max_tiles differ by far more than a double's rounding). In HF's walk the
    first grid at the least difference (in tile_grids' order) takes the lead, and each later
    one at that difference takes it over where the image's area exceeds half its own; no
    other grid can."""
    grids, aspects, places = _grids_by_aspect(min_tiles, max_tiles)
    if not grids:
        return (1, 1)
    aspect = width / height
    above = bisect.bisect_left(aspects, aspect)
    nearest = [j for j in (above - 1, above) if 0 <= j < len(aspects)]
    differences = [abs(aspect - aspects[j]) for j in nearest]
    least = min(differences)
    tied = sorted(k for j, d in zip(nearest, differences) if d == least for k in places[j])
    area = width * height
    best = grids[tied[0]]
    for k in tied[1:]:
        grid = grids[k]
        if area > 0.5 * tile_height * tile_width * grid[0] * grid[1]:
            best = grid
    return best


class GotOcr2ImageProcessor(FixedSizeImageProcessor):
    """transformers' GotOcr2ImageProcessor (InternVL's image processor), from the same
    config values (size, crop_to_patches, min_patches, max_patches, image_mean / image_std,
    ...), returning pixel_values and num_patches in HF's order (each image's tiles, then its
    thumbnail). InternVLProcessor calls it with crop_to_patches=True: pass that to the call
    (or the constructor) for InternVL's tiles. `filter`, `dtype` and `backend` as for
    CLIPImageProcessor."""

    model_input_names = ["pixel_values", "num_patches"]
    defaults = {
        "size": {"height": 384, "width": 384},
        "do_center_crop": False,
        "image_mean": OPENAI_CLIP_MEAN,
        "image_std": OPENAI_CLIP_STD,
    }

    def __init__(
        self, filter: str = DEFAULT_FILTER, dtype: str = "float32", backend: str = "auto", **config: Any
    ) -> None:
        super().__init__(filter, dtype, backend, **config)
        if "height" not in self.size or "width" not in self.size:
            raise ProcessorInputError(f"size must have 'height' and 'width' (the tile size); got {self.size}")
        self.crop_to_patches: bool = config_flag(config, "crop_to_patches", False)
        given = {k: v for k, v in config.items() if v is not None}
        self.min_patches: int = config_size(given.get("min_patches", 1), "min_patches")
        self.max_patches: int = config_size(given.get("max_patches", 12), "max_patches")
        if self.min_patches > self.max_patches:
            raise ProcessorInputError(
                f"min_patches {self.min_patches} exceeds max_patches {self.max_patches}: no tile grid fits"
            )

    def tile_grid(self, height: int, width: int) -> Tuple[int, int]:
        """(columns, rows) of an image's tiles with crop_to_patches ((1, 1) without)."""
        if not self.crop_to_patches:
            return (1, 1)
        key = ("grid", height, width)  # kept per size: a call asks it of every image
        grid = self._plans.get(key)
        if grid is None:
            th, tw = int(self.size["height"]), int(self.size["width"])
            grid = self._plans[key] = optimal_tile_grid(height, width, th, tw, self.min_patches, self.max_patches)
        return grid

    def tiles_plan(self, height: int, width: int) -> Plan:
        """The image resized to its tile grid and cut into tiles."""
        key = ("tiles", height, width)
        plan = self._plans.get(key)
        if plan is None:
            columns, rows = self.tile_grid(height, width)
            th, tw = int(self.size["height"]), int(self.size["width"])
            resized = (rows * th, columns * tw)
            plan = self._plan(resized, (0, 0) + resized, tiles=(th, tw))
            self._plans[key] = plan
        return plan

    def thumbnail_plan(self) -> Plan:
        """The whole image resized to one tile (with crop_to_patches, whatever do_resize)."""
        plan = self._plans.get("thumbnail")
        if plan is None:
            th, tw = int(self.size["height"]), int(self.size["width"])
            plan = self._plans["thumbnail"] = self._plan((th, tw), (0, 0, th, tw))
        return plan

    def get_number_of_image_patches(
        self, height: int, width: int, images_kwargs: Optional[Dict[str, Any]] = None
    ) -> int:
        """Rows of pixel_values for an image of height x width: its tiles and thumbnail (the
        config values among `images_kwargs`, as HF's multimodal processors pass them, applied)."""
        columns, rows = self._with(images_kwargs).tile_grid(height, width)
        return 1 if columns * rows == 1 else columns * rows + 1

    def _counts(self, images: int) -> Dict[str, List[int]]:
        return {"num_patches": [1] * images}

    def _process(self, images: Any, input_data_format: Optional[str]) -> BatchFeature:
        """pixel_values [tiles and thumbnails, 3, h, w] and num_patches [images] of
        `images`, in their framework on their device."""
        if not self.crop_to_patches:
            return super()._process(images, input_data_format)
        cached, pending = cached_call(self, images, input_data_format)
        if cached is not None:
            return cached
        composed = self._composed(pending)
        if composed is not None:
            return composed
        specs = image_specs(images, self.do_convert_rgb, input_data_format, pending)
        outputs, num_patches = [], []
        for spec in specs:
            count = self.get_number_of_image_patches(spec.height, spec.width)
            thumbnail = [(spec, self.thumbnail_plan())]
            outputs.append(thumbnail if count == 1 else [(spec, self.tiles_plan(spec.height, spec.width))] + thumbnail)
            num_patches += [count] * spec.batch
        return self._expanded_outputs(specs, outputs, {"num_patches": num_patches}, pending)
