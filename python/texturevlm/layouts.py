"""Patch layouts: where each patch of an image sits and at which mip level, computed once
on the host and reused frame after frame. Each sampler of every backend reads the same
32-byte patch records (engine/sampling/patch.h); `metadata` gives (cu, cv, su, sv, level) per slot
for positional embeddings."""

from __future__ import annotations

import itertools
import weakref
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np

from . import _core, _tensors
from ._checks import MAX_PATCHES, whole
from ._core import Error

Fixations = List[Tuple[float, float]]


class Layout:
    """Patches for `images` images of width x height, `num_patches` slots per image.

    Slots of level -1 are padding (the image has no finer level left to fill them): their
    patches are zeros and `mask` is False there."""

    def __init__(self, core: "_core.Layout") -> None:
        self._core = core
        self._on_device: Dict[Tuple[str, int], DeviceCopy] = {}
        #: 'grid', 'foveated', 'anisotropic', 'resize' or 'mixed'
        self.kind: str = core.kind
        #: Level-0 size of the images, in texels.
        self.width: int = core.width
        self.height: int = core.height
        #: P: each patch is P x P samples.
        self.patch_size: int = core.patch_size
        #: Images (texture layers) the layout covers.
        self.images: int = core.images
        #: Slots per image, padding included.
        self.num_patches: int = core.patches_per_image
        #: Mip levels the texture needs.
        self.levels_needed: int = core.levels_needed
        #: Sampled with gradients (anisotropic filtering) rather than at a level.
        self.gradients: bool = core.gradients

    @property
    def records(self) -> np.ndarray:
        """uint8 [images * num_patches, 32]: the patches as the samplers read them (a view)."""
        return self._core.records

    @property
    def metadata(self) -> np.ndarray:
        """float32 [images, num_patches, 5]: (cu, cv, su, sv, level) in normalized units."""
        return self._core.metadata

    @property
    def mask(self) -> np.ndarray:
        """bool [images, num_patches]: True for real patches, False for padding slots."""
        return self.metadata[..., 4] >= 0

    def on_device(self, framework: str, device_index: int, stream: Optional[int] = None) -> "DeviceCopy":
        """The records and metadata on a CUDA device, copied once and kept. For torch the
        copy is asynchronous (from pinned memory), so a new layout costs no host sync.
        `stream` (a raw handle): the stream about to read the copy, ordered after its upload
        (DeviceCopy.ready_on); threads and streams share one copy."""
        copy = self._on_device.get((framework, device_index))
        if copy is None:
            copy = self._on_device.setdefault((framework, device_index), DeviceCopy(self, framework, device_index))
        if stream is not None:
            copy.ready_on(stream)
        return copy

    def __repr__(self) -> str:
        return (
            f"Layout({self.kind}, {self.width}x{self.height}, images={self.images}, "
            f"num_patches={self.num_patches}, patch_size={self.patch_size})"
        )


#: Every live DeviceCopy by its key: the compiled op texturevlm::patches names its layout's
#: sampler by key, as torch.library ops take tensors and numbers, not Python objects.
_DEVICE_COPIES: "weakref.WeakValueDictionary[int, DeviceCopy]" = weakref.WeakValueDictionary()
_KEYS = itertools.count(1)


def device_copy(key: int) -> "DeviceCopy":
    """The DeviceCopy with `key` (kept alive by its layout)."""
    copy = _DEVICE_COPIES.get(key)
    if copy is None:
        raise Error(f"no layout on a device has key {key}: its layout was freed while a compiled call still used it")
    return copy


class DeviceCopy:
    """A layout on one CUDA device: `records` (uint8, at `records_ptr`), `sampler` (the
    engine's CudaPatchSampler over them: every CUDA patch call samples through it), and
    `meta` [images, N, 5] float32 in the caller's framework, `meta_one` its first image's
    [N, 5] view (the metadata of unbatched calls). `key` names it for the compiled op."""

    def __init__(self, layout: Layout, framework: str, device_index: int) -> None:
        if framework == "torch":
            import torch

            device = torch.device("cuda", device_index)
            self.records = torch.from_numpy(layout.records.reshape(-1)).pin_memory().to(device, non_blocking=True)
            self.meta = torch.from_numpy(layout.metadata).pin_memory().to(device, non_blocking=True)
            self.records_ptr = self.records.data_ptr()
            # The upload is queued on the current stream: other streams wait for this event.
            uploaded_on = torch.cuda.current_stream(device).cuda_stream
            self._uploaded: Any = _core.CudaEvent(device_index)
            self._uploaded.record(uploaded_on)
            self._ordered: Set[int] = {uploaded_on}
        else:  # cuda_copy returns once the copy is done: every stream may read it
            self._uploaded, self._ordered = None, set()
            self.records, self.records_ptr = _core.cuda_copy(device_index, layout.records)
            meta, _ = _core.cuda_copy(device_index, layout.metadata)
            if framework == "cupy":
                import cupy

                meta = cupy.from_dlpack(meta)
            elif framework == "jax":
                meta = _tensors.jax_from_capsule(meta, device_index)
            self.meta = meta
        self.meta_one = self.meta[0]
        self.sampler = _core.CudaPatchSampler(layout._core, self.records_ptr)  # borrows self.records
        self.key = next(_KEYS)
        self.device_index = device_index
        _DEVICE_COPIES[self.key] = self

    def ready_on(self, stream: int) -> None:
        """Orders `stream` after the torch upload, and keeps the copy's memory from being
        reused until the work `stream` has queued ran (the tensors were allocated on the
        upload's stream). Once per stream: a stream's later work follows its earlier work."""
        if self._uploaded is None or stream in self._ordered:
            return
        if _core.stream_capturing(stream):
            # A graph may not wait on work outside it. It reads the copy when replayed, after
            # the upload, which ran when the layout was first used: before the capture (the
            # warm-up call graphs need), or inside it on the capturing stream (in _ordered).
            return
        import torch

        self._uploaded.wait(stream)
        user = torch.cuda.ExternalStream(stream, device=torch.device("cuda", self.device_index))
        self.records.record_stream(user)
        self.meta.record_stream(user)
        self._ordered.add(stream)


def _pairs(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor (a CUDA one is read on the host: a sync)
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def fixations_per_image(fixation: Any, images: int) -> List[Fixations]:
    """Fixations for each of `images` images: a pair (x, y) for all; [K, 2] for K
    fixations shared by all (their union is in focus); [images, K, 2] one set per image.
    Coordinates are normalized: (0, 0) the top-left corner, (1, 1) the bottom-right."""
    points = _pairs(fixation)
    if points.ndim == 1:
        points = points[None, None]
    elif points.ndim == 2:
        points = points[None]
    if points.ndim != 3 or points.shape[-1] != 2 or points.shape[1] == 0:
        raise Error(f"fixations must be (x, y), [K, 2] or [images, K, 2], got shape {list(_pairs(fixation).shape)}")
    if points.shape[0] == 1:
        points = np.repeat(points, images, axis=0)
    if points.shape[0] != images:
        raise Error(f"{points.shape[0]} sets of fixations for {images} images: pass one set per image or one for all")
    return [[(float(x), float(y)) for x, y in image] for image in points]


def foveated(
    width: int,
    height: int,
    fixation: Any = (0.5, 0.5),
    num_patches: int = 273,
    patch_size: int = 16,
    m0: float = 0.05,
    e0: float = 0.05,
    bias: float = 0.0,
    images: int = 1,
) -> Layout:
    """A quadtree of square cells refined toward the fixations: exactly `num_patches` slots
    per image.

    The cortical-magnification rule M(e) = m0 / (e + e0) orders the cells (e: distance to the
    nearest fixation in units of the longer side); cells are split, most wanted first, while a
    split fits `num_patches`, also past the point where the rule alone is satisfied. A split
    adds 3 patches (fewer at the image's edge), so up to 2 slots can remain; they, and every
    slot left when every cell is already at level 0, are padding (level -1, masked).
    `num_patches` must cover the root cells (one for a square image). Raises Error for NaN or
    outside fixations, patch sizes outside 1..64 and budgets below the minimum."""
    num_patches = whole(num_patches, "num_patches", 0, MAX_PATCHES, " per image")
    patch_size = whole(patch_size, "patch_size")
    per_image = []
    for points in fixations_per_image(fixation, images):
        per_image.append(_core.foveated_layout(width, height, points, num_patches, patch_size, m0, e0, bias, True))
    return Layout(_core.batch_layouts(per_image, num_patches))


def grid(width: int, height: int, patch_size: int = 16, level: int = 0, images: int = 1) -> Layout:
    """Mip level `level` cut into P x P patches of its texels, row-major (a ViT patchify of
    the downsampled image); partial patches at the edges repeat the edge texels."""
    one = _core.grid_layout(width, height, whole(patch_size, "patch_size"), whole(level, "level"))
    return Layout(_core.batch_layouts([one] * images))


def anisotropic(
    width: int,
    height: int,
    patch_size: int = 16,
    level: int = 0,
    elongation: int = 4,
    orientation: str = "horizontal",
    images: int = 1,
    fixation: Any = None,
    num_patches: Any = None,
) -> Layout:
    """Patches `elongation` times wider than tall (orientation='vertical': taller) over
    level `level`, sampled with gradients so the texture unit filters each elongated
    footprint anisotropically (up to 16 taps): text lines, tables.

    Without a fixation the patches tile the whole level, row-major. With `fixation` (x, y)
    in [0, 1]^2 (or [images, 2], one per image), only the `num_patches` tiles whose centres
    lie nearest to it are kept, nearest first: an elongated glimpse around the fixation
    (num_patches defaults to a quarter of the tiles)."""
    if orientation not in ("horizontal", "vertical"):
        raise Error(f"orientation is 'horizontal' or 'vertical', not {orientation!r}")
    vertical = orientation == "vertical"
    patch_size, level, elongation = (
        whole(patch_size, "patch_size"),
        whole(level, "level"),
        whole(elongation, "elongation"),
    )
    if fixation is None:
        if num_patches is not None:
            raise Error("num_patches counts patches around a fixation: pass fixation=(x, y) too, or leave it out")
        one = _core.anisotropic_layout(width, height, patch_size, level, elongation, vertical)
        return Layout(_core.batch_layouts([one] * images))
    points = _pairs(fixation)
    if points.shape == (2,):
        points = np.repeat(points[None], images, axis=0)
    if points.shape != (images, 2):
        raise Error(
            f"an anisotropic glimpse has one fixation per image: pass (x, y) or [{images}, 2], "
            f"got shape {list(points.shape)}"
        )
    if num_patches is None:
        tiles = _core.anisotropic_layout(width, height, patch_size, level, elongation, vertical).patches_per_image
        num_patches = max(1, tiles // 4)
    num_patches = whole(num_patches, "num_patches")
    return Layout(
        _core.batch_layouts(
            [
                _core.anisotropic_layout(
                    width, height, patch_size, level, elongation, vertical, (float(x), float(y)), int(num_patches)
                )
                for x, y in points
            ]
        )
    )


def resize(
    width: int,
    height: int,
    resized_width: int,
    resized_height: int,
    window: Any = None,
    patch_size: int = 16,
    images: int = 1,
) -> Layout:
    """The pixels of the image resized to resized_width x resized_height, as P x P patches
    tiling `window` = (x, y, width, height) of the resized image (default: all of it), row
    major; P must divide the window's sides. Each sample is one output pixel's centre with
    one output pixel as its footprint (gradients): the texture unit picks the level and
    filters anisotropically when the two scales differ. The image processors sample this."""
    x, y, w, h = window if window is not None else (0, 0, resized_width, resized_height)
    one = _core.resize_layout(width, height, resized_width, resized_height, x, y, w, h, patch_size)
    return Layout(_core.batch_layouts([one] * images))


def batch(layouts: Sequence[Layout], num_patches: int = 0) -> Layout:
    """One layout per image of a batch (same size, patch size and mode), image b on layer b,
    padded to one count (at least `num_patches`)."""
    for layout in layouts:
        if layout.images != 1:
            raise Error("batch() takes single-image layouts")
    return Layout(_core.batch_layouts([layout._core for layout in layouts], num_patches))
