"""The one operation every processor is made of: images of one size -> resized, cropped,
rescaled + normalized pixels written once into the model's tensor layout.

CUDA images: fused kernels (cuda/processors/image_resize.h) on the caller's stream, no host sync:
  filter='exact'    (the default) PyTorch's antialiased resize with the model's resample
                    (bicubic, or bilinear for Gemma 3) straight from the tensor, in two
                    passes: HF's values, as HF computes them on CUDA;
  filter='texture'  one launch computes the images' box mips from the tensors and writes
                    the levels the sampler reads into a kept texture (finer levels are
                    dropped), then the texture unit takes one anisotropic trilinear sample
                    per output pixel (cuda_pipelines/cuda_image_resizer.h).
Host images: 'exact' is torch's CPU resize as torchvision calls it (uint8 images in fixed
point, byte for byte, engine/processors/torch_byte_resize.h, where torchvision resizes
bytes; float images, and uint8 ones torchvision resizes as floats, in float64), 'texture'
the engine's CPU/Vulkan samplers (layouts.resize)."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import os
import threading
from dataclasses import dataclass
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from .. import _core, _tensors, layouts
from .._backends import DEFAULT_FORMAT, full_levels
from .._bounded import drop_oldest
from .._tensors import ITEMSIZE, ImageSpec
from ..pyramid import TexturePyramid
from ._images import torch_cuda_layout
from ._rules import ProcessorInputError

FILTERS = ("exact", "texture")
DEFAULT_FILTER = "exact"  # HF's values; "texture" is the fast opt-in
#: The earlier name of "exact", when every supported model resized bicubic.
FILTER_ALIASES = {"bicubic": "exact"}
#: The resample filters the exact path computes, by the PIL numbers configs give.
RESAMPLES = {3: "bicubic", 2: "bilinear"}
OUT_DTYPES = ("float32", "float16", "bfloat16")


@dataclass(frozen=True)
class Normalize:
    """value -> (value * multiply - subtract[c]) / divide[c]: HF's rescale and normalize,
    fused as its torchvision processors fuse them (mean and std divided by the rescale
    factor, in float32)."""

    multiply: float
    subtract: Tuple[float, float, float]
    divide: Tuple[float, float, float]

    @staticmethod
    def of(
        do_rescale: bool, rescale_factor: float, do_normalize: bool, mean: Sequence[float], std: Sequence[float]
    ) -> "Normalize":
        f32 = np.float32
        mean3, std3 = _three(mean, "image_mean"), _three(std, "image_std")
        if do_normalize and do_rescale:
            scale = f32(1.0 / rescale_factor)
            return Normalize(
                1.0, tuple(float(f32(m) * scale) for m in mean3), tuple(float(f32(s) * scale) for s in std3)
            )
        if do_normalize:
            return Normalize(1.0, tuple(float(f32(m)) for m in mean3), tuple(float(f32(s)) for s in std3))
        return Normalize(float(f32(rescale_factor)) if do_rescale else 1.0, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0))


#: No rescale or normalization: a resize's values as they are.
IDENTITY = Normalize(1.0, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0))


def _three(values: Any, name: str) -> Tuple[float, float, float]:
    values = [values] * 3 if isinstance(values, (int, float)) else values
    if not isinstance(values, (list, tuple)) or any(
        isinstance(v, bool) or not isinstance(v, (int, float)) for v in values
    ):
        raise ProcessorInputError(f"{name} is a number or three numbers (RGB), got {values!r}")
    if len(values) != 3:
        raise ProcessorInputError(f"{name} has one value or three (RGB), not {len(values)}")
    with np.errstate(over="ignore", under="ignore"):
        as_f32 = [float(np.float32(v)) for v in values]  # as the normalization computes them
    if any(not math.isfinite(v) for v in as_f32) or (name == "image_std" and any(v == 0 for v in as_f32)):
        raise ProcessorInputError(
            f"{name} {values} must be finite{' and non-zero' if name == 'image_std' else ''} in float32"
        )
    return float(values[0]), float(values[1]), float(values[2])


@dataclass(frozen=True)
class Plan:
    """What to write for images of one size: resize to `resized` (height, width) with
    `resample` ('bicubic' or 'bilinear', the exact filter's; `host_resample` for host images
    where HF resizes those differently), keep the window (top, left,
    height, width) of it, normalize, and lay out planar [3, h, w], as merged patches
    (patch_size, merge_size, temporal_patch_size) or cut into tiles (tile height, width),
    each planar, row-major. The window may reach past the resized image (a negative top or
    left, or beyond its far edge): pixels there are 0 before normalization (AnyRes's zero
    padding)."""

    resized: Tuple[int, int]
    window: Tuple[int, int, int, int]
    normalize: Normalize
    merged: Optional[Tuple[int, int, int]] = None
    resample: str = "bicubic"
    tiles: Optional[Tuple[int, int]] = None
    #: The exact filter's resample for host images where it differs from CUDA's: 'lanczos'
    #: where HF resizes host images with torchvision's Lanczos (Idefics3), else None.
    host_resample: Optional[str] = None

    @property
    def on_host(self) -> str:
        """The resample the exact filter takes for host images."""
        return self.host_resample or self.resample

    def values_per_image(self) -> int:
        return 3 * self.window[2] * self.window[3] * (self.merged[2] if self.merged else 1)

    def patches_per_image(self) -> int:
        p = self.merged[0] if self.merged else 1
        return self.window[2] * self.window[3] // (p * p)

    @functools.cached_property
    def resize_only(self) -> "Plan":
        """This plan's resize and window alone (no normalization, planar), made once per
        plan: kept targets and resizers are found by their plan's identity, so a new object
        per call would make a new ResizeTarget on every call."""
        return dataclasses.replace(self, normalize=IDENTITY, tiles=None, merged=None)


def levels_for(width: int, height: int, plan: Plan) -> int:
    """Mip levels the texture path reads: up to the one just above the larger scale."""
    scale = max(width / plan.resized[1], height / plan.resized[0])
    needed = math.ceil(math.log2(scale)) + 1 if scale > 1 else 1
    return min(needed, full_levels(width, height))


# ---------------------------------------------------------------- CUDA

#: Per-size answers kept at most (targets, a call's resizer key; processors' plans): a server
#: sees a long tail of image sizes, and each answer costs more to work out than a call's
#: launch. Cleared when full, so that ever new sizes keep a bounded set.
KEPT_SIZES = 4096
_targets: "dict[Any, Any]" = {}


def _target(
    plan: Plan, images: int, first_time: int, times: int, round_to_byte: bool, out_dtype: str, image_stride: int
) -> Any:
    """The kernel's ResizeTarget for a plan, kept (setting ~20 fields costs more than a
    call). Keyed by the plan's identity (processors keep their plans), not its hash."""
    key = (id(plan), images, first_time, times, round_to_byte, out_dtype, image_stride)
    entry = _targets.get(key)
    if entry is not None and entry[0] is plan:
        return entry[1]
    t = _core.ResizeTarget()
    t.images = images
    t.resized_height, t.resized_width = plan.resized
    t.crop_y, t.crop_x, t.height, t.width = plan.window
    if plan.merged:
        t.layout = "merged_patches"
        t.patch_size, t.merge_size, t.temporal_patch_size = plan.merged
        t.first_time, t.times = first_time, times
    elif plan.tiles:
        t.layout = "tiles"
        t.tile_height, t.tile_width = plan.tiles
    t.image_stride = image_stride
    t.multiply = plan.normalize.multiply
    t.subtract = list(plan.normalize.subtract)
    t.divide = list(plan.normalize.divide)
    t.round_to_byte = round_to_byte
    t.out_dtype = out_dtype
    if len(_targets) >= KEPT_SIZES:
        _targets.clear()
    _targets[key] = (plan, t)
    return t


#: Resizers kept, least recently used out first. A mixed batch keeps one per image size and
#: branch, and Idefics3's two stages one per intermediate size as well: 8 images of 8 sizes
#: take 32, which a smaller bound would recreate (and reallocate) every call. A software
#: resizer holds its span tables and, where its resizes take the two passes, their rows.
KEPT_RESIZERS = 64
_resizers: "dict[Any, Any]" = {}
#: A call's resizer key by the call's own; None where the call was seen once, with no resizer of its shape.
_shape_of_call: "dict[Any, Any]" = {}
#: Each thread's software resizers of any size (one per device, filter and dtype),
#: least recently used out first past KEPT_ANY_SIZE: a server that starts a thread per
#: request would otherwise keep one, and the rows it grew, for every thread it ever ran.
KEPT_ANY_SIZE = 16
_any_size: "dict[Any, Any]" = {}


def _resizer(spec: ImageSpec, plan: Plan, filter: str, images: int, branch: int = 0) -> Any:
    """The kept CudaImageResizer for images like `spec` through `plan` (its texture has
    room for `images` rounded up to a power of two, so batch sizes share one). A call's
    own key finds the shape's key (working it out costs microseconds a call).

    The software filters' first sight of a call runs on a resizer of any size unless one of
    its shape is kept: a server's requests bring ever new image sizes, most never seen
    again, and making, filling and dropping a resizer for each cost more host time than
    the call's launches. A second sight makes the shape its resizer (whose repeated runs
    replay as graphs), and calls on it are remembered (any_size_launches).

    Each thread has resizers of its own: a resizer's texture holds the images of the call
    running on it until its kernels ran, so threads serving requests at once must not share
    one (a thread's calls are ordered by its stream). So has each `branch`: a call's runs
    of one shape (an image's tiles and its thumbnail) run at once on resizers of their own
    (CudaCall)."""
    thread = threading.get_ident()
    call = (thread, id(plan), spec.device_index, filter, spec.dtype, spec.width, spec.height, images, branch)
    entry = _shape_of_call.get(call)
    if entry is not None and entry[0] is plan and entry[1] is not None:
        resizer = _resizers.get(entry[1])
        if resizer is not None:
            return resizer
    texture = filter == "texture"
    skip = skipped_levels(spec, plan) if texture else 0
    levels = levels_for(spec.width, spec.height, plan) - skip if texture else 1
    room = 1 << (images - 1).bit_length()
    kernel = "texture" if texture else plan.resample
    key = (thread, spec.device_index, kernel, spec.dtype, spec.width, spec.height, room, skip, levels, branch)
    resizer = _resizers.pop(key, None)
    if len(_shape_of_call) >= KEPT_SIZES:
        _shape_of_call.clear()
    if resizer is None and not texture and not branch and (entry is None or entry[0] is not plan):
        # A first sight. Branches are asked for only beside a sized resizer (cuda_launches):
        # a branch is never a first sight.
        _shape_of_call[call] = (plan, None)
        return _any_size_resizer((thread, spec.device_index, kernel, spec.dtype))
    if resizer is None:
        resizer = _core.CudaImageResizer(
            spec.device_index, kernel, spec.dtype, 3, spec.width, spec.height, room, skip, levels
        )
    _resizers[key] = resizer
    drop_oldest(_resizers, KEPT_RESIZERS)
    _shape_of_call[call] = (plan, key)
    return resizer


#: The most images one run of a resizer of any size takes (a call's images of one size).
ANY_SIZE_IMAGES = 1 << 16


def _any_size_resizer(key: Tuple[Any, ...]) -> Any:
    """The thread's software resizer of any size for (thread, device, filter, dtype)."""
    resizer = _any_size.pop(key, None)
    if resizer is None:
        _, device, kernel, dtype = key
        resizer = _core.CudaImageResizer(device, kernel, dtype, 3, 0, 0, ANY_SIZE_IMAGES, 0, 1)
        drop_oldest(_any_size, KEPT_ANY_SIZE - 1)
    _any_size[key] = resizer
    return resizer


def any_size_launches(launches: "Sequence[CudaLaunch]") -> bool:
    """Whether any of a call's runs is on a resizer of any size: a first sight of its sizes,
    which the processors do not remember (a server's one-off sizes would fill the memory of
    calls with calls never made again)."""
    return any(launch.any_size for launch in launches)


def held_resizers(launches: "Sequence[CudaLaunch]") -> int:
    """How many resizers a call's runs keep alive (remember_call's bound counts them)."""
    return len({id(launch.resizer) for launch in launches})


def clear_cache() -> None:
    """Frees the kept resizers (their textures) and targets: texturevlm.clear_cache() and
    interpreter exit call it, so nothing is left for nanobind to report."""
    global _calls_resizers
    _resizers.clear()
    _shape_of_call.clear()
    _any_size.clear()
    _targets.clear()
    _calls.clear()
    _calls_resizers = 0


class CudaLaunch(NamedTuple):
    """One resizer run of a call, worked out once (resizer, strides, target: finding them
    costs more than the run) and kept by the processor for calls of the same layout. A
    named tuple: a call of a new layout makes one per run, and a frozen dataclass costs
    about three times as much to make."""

    resizer: Any
    dtype: str
    strides: List[int]
    width: int
    height: int
    target: Any
    offset_bytes: int  # where in the output this run's values start
    any_size: bool  # the resizer is one of any size (a first sight of the size)

    def run(self, images: List[int], out_ptr: int, stream: int, replay: bool = True) -> None:
        """Launches the run (replay=False: never as a graph, for runs whose arguments will not
        repeat). A run on a resizer of any size launches directly: it is a first sight of its
        size, whose next sight runs on a resizer of the size (_resizer), so a replay key built
        and kept for it would never be used."""
        self.resizer.run(
            images,
            self.dtype,
            self.strides,
            self.width,
            self.height,
            self.target,
            out_ptr + self.offset_bytes,
            stream,
            replay and not self.any_size,
        )


def cuda_launch(
    spec: ImageSpec,
    plan: Plan,
    filter: str,
    images: int,
    offset: int,
    first_time: int = 0,
    times: Optional[int] = None,
    out_dtype: str = "float32",
    image_stride: Optional[int] = None,
    branch: int = 0,
    resizer: Any = None,
) -> CudaLaunch:
    """The run writing `images` images like `spec` through `plan` at element `offset` of
    the output, each image's values `image_stride` elements after the last's (default:
    packed): a few launches whatever the image count. `branch`: _resizer's; `resizer`: the
    one _resizer gave for them, where the caller found it already."""
    times = times if times is not None else (plan.merged[2] if plan.merged else 1)
    stride = image_stride if image_stride is not None else plan.values_per_image()
    target = _target(plan, images, first_time, times, spec.dtype == "uint8", out_dtype, stride)
    if resizer is None:
        resizer = _resizer(spec, plan, filter, images, branch)
    return CudaLaunch(
        resizer,
        spec.dtype,
        list(spec.strides),
        spec.width,
        spec.height,
        target,
        offset * ITEMSIZE[out_dtype],
        resizer.any_size,
    )


def write_cuda(
    specs: List[ImageSpec],
    plan: Plan,
    filter: str,
    out_ptr: int,
    offset: int,
    stream: int,
    first_time: int = 0,
    times: Optional[int] = None,
    out_dtype: str = "float32",
) -> None:
    """Writes the images' values (specs of one size, dtype and strides) at element `offset`
    of the output."""
    images = specs[0].image_pointers() if len(specs) == 1 else [p for s in specs for p in s.image_pointers()]
    cuda_launch(specs[0], plan, filter, len(images), offset, first_time, times, out_dtype).run(images, out_ptr, stream)


def resized_images(
    specs: List[ImageSpec], plan: Plan, filter: str, backend: str, record: Optional[List["StagedLaunch"]] = None
) -> List[Any]:
    """Each image of `specs` (one image each, of one size) resized by `plan`'s resize and
    window, as a resize of its dtype leaves it, for a second resize to read (processors that
    resize twice, as Idefics3's does): uint8 images rounded to bytes (what torchvision's
    uint8 resize returns), float32 ones as floats; not normalized. CUDA images give [3, h,
    w] arrays of their framework on their device, written on its current stream, one launch
    for images that share a layout; host images [h, w, 3] arrays of their framework (torch
    [3, h, w] CPU tensors for torch inputs), so a call's outputs stay in it. `record`, where
    given, gets each CUDA launch as a StagedLaunch (its images' indices in `specs`), so a
    remembered call can repeat them for other images of the same layout."""
    h, w = plan.window[2:]
    identity = plan.resize_only
    out: List[Any] = [None] * len(specs)
    groups: "dict[Any, List[int]]" = {}
    for i, spec in enumerate(specs):
        if spec.dtype not in ("uint8", "float32"):
            raise ProcessorInputError(
                f"{spec.dtype} images cannot be resized twice as HF does: pass uint8 (or float32) images"
            )
        if spec.device != "cuda":
            out[i] = _resized_on_host(spec, identity, filter, backend)
        else:
            key = (spec.framework, spec.device_index, spec.dtype, tuple(spec.strides), spec.width, spec.height)
            groups.setdefault(key, []).append(i)
    for members in groups.values():
        first = specs[members[0]]
        # One image: its own [3, h, w] tensor (no indexing into a batch of one, which costs
        # microseconds a call).
        shape = (len(members), 3, h, w) if len(members) > 1 else (3, h, w)
        batch = _tensors.empty(first.framework, "cuda", first.device_index, shape, first.dtype)
        ptr = (
            batch.data_ptr() if first.framework == "torch" else _tensors.pointer_and_strides(batch, first.framework)[0]
        )
        pointers = [p for i in members for p in specs[i].image_pointers()]
        launch = cuda_launch(first, identity, filter, len(pointers), 0, out_dtype=first.dtype)
        stream = _tensors.cuda_stream(first.framework, first.device_index)
        launch.run(pointers, ptr, stream)
        if record is not None:
            step = 3 * h * w * ITEMSIZE[first.dtype]
            record.append(
                StagedLaunch(
                    members, launch, first.framework, first.device_index, (len(members), 3, h, w), first.dtype, step
                )
            )
        # JAX cuts the images out of the batch on its own streams, which XLA makes
        # non-blocking: not ordered with ours, so JAX's batch is handed over (the host waits).
        batch = _tensors.hand_over(batch, first.framework, first.device_index, stream)
        if len(members) == 1:
            out[members[0]] = batch
            continue
        for k, i in enumerate(members):
            out[i] = batch[k]
    return out


@dataclass(frozen=True)
class StagedLaunch:
    """One launch of resized_images, kept for a remembered call: images `members` (indices
    among the call's images) resized into a new batch of `shape` and `dtype`, image k at
    `step` bytes times k."""

    members: List[int]
    launch: CudaLaunch
    framework: str
    device_index: int
    shape: Tuple[int, ...]
    dtype: str
    step: int

    def run(self, pointers: List[int], keep: List[Any]) -> None:
        """Resizes the members of `pointers` (element 0 of every image) and puts their
        results' pointers in their places; the new batch goes into `keep`, to be held until
        the launches reading it are queued."""
        batch = _tensors.empty(self.framework, "cuda", self.device_index, self.shape, self.dtype)
        keep.append(batch)
        ptr = batch.data_ptr()
        self.launch.run(
            [pointers[i] for i in self.members], ptr, _tensors.cuda_stream(self.framework, self.device_index)
        )
        for k, i in enumerate(self.members):
            pointers[i] = ptr + k * self.step


def _resized_on_host(spec: ImageSpec, identity: Plan, filter: str, backend: str) -> Any:
    if filter != "texture" and spec.dtype == "uint8" and torch_resizes_bytes(identity.on_host):
        # torch's uint8 resize returns bytes: no float copy between the two resizes.
        (rh, rw), (top, left, h, w) = identity.resized, identity.window
        (layer,) = _tensors.host_layer_views(spec)
        image = _core.resize_bytes_as_torch(layer[..., :3], rw, rh, left, top, w, h, identity.on_host)
        return _host_image_as(spec.framework, image)
    planar = host_planar(spec, identity, filter, backend)[0]  # [3, h, w] in the input's units
    if spec.dtype == "uint8":
        planar = np.rint(np.clip(planar, 0, 255)).astype(np.uint8)
    return _host_image_as(spec.framework, np.ascontiguousarray(planar.transpose(1, 2, 0)))


def _host_image_as(framework: str, image: np.ndarray) -> Any:
    """A host [h, w, 3] image in the input's framework, so the call's outputs stay in it: a
    torch [3, h, w] CPU tensor, a JAX array on JAX's CPU device, else the NumPy array."""
    if framework == "torch":
        import torch

        return torch.from_numpy(np.ascontiguousarray(image.transpose(2, 0, 1)))
    if framework == "jax":
        return _tensors.jax_on_host(image)
    return image


#: Whether a remembered call's runs on different resizers run at once, on stream branches
#: (cuda_pipelines/stream_branches.h); TVLM_BRANCHES=0 runs them one after another (to
#: compare, or to rule the branches out).
BRANCHES = os.environ.get("TVLM_BRANCHES", "1") != "0"


class CudaCall:
    """A call's CUDA work for images of one layout (sizes, dtype, strides, count): the
    output's shape and the resizer runs into it, each with its slice [first, end) of the
    images. Calling it with the images' pointers allocates the output and launches, nothing
    else, on the framework's current stream.

    A `remembered` call (remember_call's, whose host time is small beside its GPU time)
    runs its runs on different resizers (an image's tiles and its thumbnail, see
    cuda_launches) at once from its second call, each on a branch of the stream, joined back
    into it before the call returns. A call made once (a batch of new sizes) runs them in
    turn: it is bound by its host time, which the branches' events would add to."""

    def __init__(
        self,
        framework: str,
        index: int,
        shape: Tuple[int, ...],
        out_dtype: str,
        launches: List[Tuple[CudaLaunch, int, int]],
        remembered: bool = False,
    ) -> None:
        self.framework, self.index, self.shape, self.out_dtype = framework, index, shape, out_dtype
        self.launches = launches
        self.branched = remembered and BRANCHES and len(launches) > 1
        self.branches: Any = None  # the ResizerBranches of calls after the first
        self.called = False

    def __call__(self, pointers: List[int]) -> Any:
        out = _tensors.empty(self.framework, "cuda", self.index, self.shape, self.out_dtype)
        ptr = out.data_ptr() if self.framework == "torch" else _tensors.pointer_and_strides(out, self.framework)[0]
        stream = _tensors.cuda_stream(self.framework, self.index)
        if self.branches is None and self.called and self.branched:
            self.branches = _core.ResizerBranches(
                [
                    (l.resizer, first, end, l.dtype, l.strides, l.width, l.height, l.target, l.offset_bytes)
                    for l, first, end in self.launches
                ]
            )
        self.called = True
        if self.branches is not None:
            self.branches.run(pointers, ptr, stream)
        else:
            whole = len(self.launches) == 1
            for launch, first, end in self.launches:
                launch.run(pointers if whole else pointers[first:end], ptr, stream)
        return _tensors.hand_over(out, self.framework, self.index, stream)


def cuda_launches(
    parts: List[Tuple[ImageSpec, Plan, int, int, int]], filter: str, out_dtype: str, branched: bool = False
) -> List[CudaLaunch]:
    """The runs of a call's parts, (spec, plan, images, offset, image_stride) each. For a
    `branched` call, parts of one resizer shape get resizers of their own (branches 1, 2,
    ...), so that CudaCall runs them at once; not with the texture filter, whose resizers
    each hold a texture of the images (the parts then share one, run in turn), nor on a
    first sight's resizer of any size (a call not remembered runs its parts in turn)."""
    launches: List[CudaLaunch] = []
    used: set = set()
    for spec, plan, images, offset, stride in parts:
        branch = 0
        resizer = _resizer(spec, plan, filter, images, branch)
        if branched and BRANCHES and filter != "texture" and not resizer.any_size:
            while id(resizer) in used:
                branch += 1
                resizer = _resizer(spec, plan, filter, images, branch)
        launch = cuda_launch(
            spec, plan, filter, images, offset, out_dtype=out_dtype, image_stride=stride, branch=branch, resizer=resizer
        )
        used.add(id(launch.resizer))
        launches.append(launch)
    return launches


#: (thread, processor id, filter, dtype, layout) -> (processor, outputs as a function of the
#: images' pointers): calls whose work is known, so that the next call of the layout skips
#: reading the images' specs, planning and finding resizers (much of a call's host time).
_calls: "dict[Any, Any]" = {}
#: Layouts remembered at most (cleared when full): a server's calls of ever new layouts keep
#: a bounded set.
KEPT_CALLS = 64
#: Resizers the remembered calls hold at most, all together (cleared when more would be): a
#: call keeps its resizers alive after the resizer cache let them go, and a list of several
#: sizes holds one per size, so a server's lists of ever new sizes would otherwise keep
#: KEPT_CALLS times as many.
KEPT_CALL_RESIZERS = 2 * KEPT_RESIZERS
_calls_resizers = 0  # resizers the remembered calls hold (counted per call)


class PendingCall(NamedTuple):
    """A call of a layout not remembered yet, as cached_call read it: what remember_call
    keeps it under, the images' pointers and their layout (torch_cuda_layout's: image count
    first (0 for one tensor), then the shape or the shapes)."""

    key: Tuple[Any, ...]
    pointers: List[int]
    layout: Tuple[Any, ...]


def cached_call(processor: Any, images: Any, input_data_format: Optional[str]) -> Tuple[Any, Optional[PendingCall]]:
    """(outputs, None) where a call of this layout has run before; else (None, pending) to
    pass to remember_call, pending being None for inputs this cache does not take (all but
    torch CUDA images)."""
    if input_data_format is not None:
        return None, None
    layout = torch_cuda_layout(images, mixed=True)
    if layout is None:
        return None, None
    key = (threading.get_ident(), id(processor), processor.filter, processor.dtype, layout[0])
    entry = _calls.get(key)
    if entry is not None and entry[0] is processor:
        return entry[1](layout[1]), None
    return None, PendingCall(key, layout[1], layout[0])


def remember_call(
    processor: Any, pending: Optional[PendingCall], pointers: List[int], outputs: Any, resizers: int = 1
) -> None:
    """Keeps `outputs` (a function of the images' pointers, running on `resizers` resizers)
    for the layout's later calls, where the call read exactly the layout's pointers (not,
    say, a composited RGBA copy)."""
    global _calls_resizers
    if pending is None or pointers != pending.pointers:
        return
    if len(_calls) >= KEPT_CALLS or _calls_resizers + resizers > KEPT_CALL_RESIZERS:
        _calls.clear()
        _calls_resizers = 0
    _calls[pending.key] = (processor, outputs)
    _calls_resizers += resizers


def skipped_levels(spec: ImageSpec, plan: Plan) -> int:
    """Box levels computed from the tensors and not kept: all below the finest level the
    sampler can read (the smaller scale's), for dtypes the tensor path takes. So a 4096^2
    image shrunk to 980^2 puts only its 1024^2 and 512^2 levels into the texture."""
    if spec.dtype == "bfloat16":
        return 0
    scale = min(spec.width / plan.resized[1], spec.height / plan.resized[0])
    return max(0, math.floor(math.log2(scale))) if scale >= 2 else 0


def resize_ring_frame(
    texture: Any, plan: Plan, dtype: str, out_ptr: int, offset: int, first_time: int, stream: int, out_dtype: str
) -> None:
    """One frame already in a texture (a video ring's) into time slot `first_time`, at
    element `offset` of the output."""
    t = _target(plan, 1, first_time, 1, dtype == "uint8", out_dtype, plan.values_per_image())
    texture.core.resize(t, out_ptr + offset * ITEMSIZE[out_dtype], stream)


# ---------------------------------------------------------------- host


def _patch_size(width: int, height: int) -> int:
    """The largest patch size <= 64 that tiles the window (the layout's P)."""
    g = math.gcd(width, height)
    return max(p for p in range(1, min(g, 64) + 1) if g % p == 0)


def _antialias_weights(out_size: int, in_size: int, first: int, count: int, resample: str = "bicubic") -> np.ndarray:
    """[count, in_size]: PyTorch's antialiased `resample` ('bicubic', 'bilinear' or
    'lanczos') weights of outputs first .. first+count-1 of a resize from in_size to
    out_size, in float64."""
    scale = in_size / out_size
    half = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}[resample]
    support = half * (scale if scale >= 1 else 1.0)
    invscale = 1.0 / scale if scale >= 1 else 1.0
    i = np.arange(first, first + count, dtype=np.float64)
    centre = scale * (i + 0.5)
    lo = np.maximum((centre - support + 0.5).astype(np.int64), 0)
    hi = np.minimum((centre + support + 0.5).astype(np.int64), in_size)
    j = np.arange(in_size, dtype=np.float64)[None, :]
    x = (j - centre[:, None] + 0.5) * invscale
    if resample == "bilinear":
        w = np.clip(1 - np.abs(x), 0, None)
    elif resample == "lanczos":  # sinc(x) sinc(x / 3) inside [-3, 3); np.sinc is sin(pi x) / (pi x)
        w = np.where((x >= -3) & (x < 3), np.sinc(x) * np.sinc(x / 3), 0.0)
    else:
        a, x = -0.5, np.abs(x)
        w = np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1, np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0))
    w = np.where((j >= lo[:, None]) & (j < hi[:, None]), w, 0.0)
    total = w.sum(axis=1, keepdims=True)
    return w / np.where(total == 0, 1, total)


def lanczos_on_host() -> bool:
    """Whether HF resizes host images with Lanczos where a config asks for it (Idefics3):
    its torchvision backend does from torchvision 0.27 on (before, it falls back to
    bicubic, as it does for CUDA images); without torchvision, HF's processor is its PIL
    one, whose Lanczos torch's is the nearest to (within 2 uint8 steps)."""
    if not _host_lanczos:
        import importlib.metadata

        try:
            version: Optional[str] = importlib.metadata.version("torchvision")
        except importlib.metadata.PackageNotFoundError:
            version = None
        _host_lanczos.append(lanczos_for(version))
    return _host_lanczos[0]


_host_lanczos: List[bool] = []


def lanczos_for(torchvision_version: Optional[str]) -> bool:
    """lanczos_on_host's rule for an installed torchvision version (None: not installed)."""
    if torchvision_version is None:
        return True
    numbers = []
    for part in torchvision_version.split(".")[:2]:
        digits = "".join(itertools.takewhile(str.isdigit, part))
        numbers.append(int(digits) if digits else 0)
    return tuple(numbers + [0] * (2 - len(numbers))) >= (0, 27)


def torch_resizes_bytes(resample: str) -> bool:
    """Whether torchvision resizes a uint8 CPU image as bytes (torch's fixed-point kernel)
    rather than as floats rounded back: always for bicubic; for bilinear as the installed
    torchvision decides, or without it as its current rule does (an AVX2 or AVX-512 torch
    CPU capability, or an ARM machine); always for Lanczos (torchvision 0.27 and later, the
    only ones that resize host images with it)."""
    if resample in ("bicubic", "lanczos"):
        return True
    if not _bilinear_bytes:
        _bilinear_bytes.append(_native_bilinear())
    return _bilinear_bytes[0]


_bilinear_bytes: List[bool] = []


def _native_bilinear() -> bool:
    try:  # torchvision's own rule, which has changed between its versions
        from torchvision.transforms import InterpolationMode
        from torchvision.transforms.v2.functional._geometry import _do_native_uint8_resize_on_cpu

        return bool(_do_native_uint8_resize_on_cpu(InterpolationMode.BILINEAR))
    except Exception:  # no torchvision, or the helper moved: its current rule
        import platform

        return bilinear_bytes_for(_capability_from_cpu(), platform.machine())


def bilinear_bytes_for(capability: str, machine: str) -> bool:
    """torchvision's current rule for resizing uint8 CPU images bilinear as bytes."""
    return capability in ("AVX2", "AVX512") or machine in ("aarch64", "arm64")


def _capability_from_cpu() -> str:
    """torch's CPU capability (ATen's) from /proc/cpuinfo: AVX512 where the CPU has
    avx512f, bw, vl and dq, AVX2 where it has avx2 and fma, else DEFAULT; lowered (not
    raised) by ATEN_CPU_CAPABILITY, as torch does."""
    import os

    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        flags = []
    order = ["DEFAULT", "AVX2", "AVX512"]
    best = (
        "AVX512"
        if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= set(flags)
        else "AVX2"
        if {"avx2", "fma"} <= set(flags)
        else "DEFAULT"
    )
    wanted = os.environ.get("ATEN_CPU_CAPABILITY", "").upper()
    if wanted in order and order.index(wanted) < order.index(best):
        return wanted
    return best


def host_planar(spec: ImageSpec, plan: Plan, filter: str, backend: str) -> np.ndarray:
    """[B, 3, h, w] resized window values in the input's units (0..255 for uint8): float32,
    or uint8 where torch's own byte resize made them; 0 where the window reaches past the
    resized image."""
    top, left, h, w = plan.window
    rh, rw = plan.resized
    inside_top, inside_left = max(top, 0), max(left, 0)
    inside_h, inside_w = min(top + h, rh) - inside_top, min(left + w, rw) - inside_left
    if (inside_top, inside_left, inside_h, inside_w) != (top, left, h, w):
        if inside_h <= 0 or inside_w <= 0:
            raise ProcessorInputError(f"the window {plan.window} misses the resized {rh}x{rw} image")
        inside = dataclasses.replace(plan, window=(inside_top, inside_left, inside_h, inside_w), tiles=None)
        values = _host_planar_inside(spec, inside, filter, backend)
        out = np.zeros(values.shape[:2] + (h, w), values.dtype)
        out[
            :, :, inside_top - top : inside_top - top + inside_h, inside_left - left : inside_left - left + inside_w
        ] = values
        return out
    return _host_planar_inside(spec, plan, filter, backend)


def _host_planar_inside(spec: ImageSpec, plan: Plan, filter: str, backend: str) -> np.ndarray:
    top, left, h, w = plan.window
    rh, rw = plan.resized
    exact = filter != "texture"
    if exact and spec.dtype == "uint8" and torch_resizes_bytes(plan.on_host):
        # torch's uint8 resize on the CPU (fixed point, rounded to bytes after each pass):
        # what HF's processors compute for host images, byte for byte, by texturevlm's C++
        # copy of that kernel (vectorized and threaded as torch's is; it needs no torch).
        layers = _tensors.host_layer_views(spec)
        resized = np.empty((len(layers), h, w, 3), np.uint8)  # written in place: no copy to stack them
        for layer, out in zip(layers, resized):
            _core.resize_bytes_as_torch(layer[..., :3], rw, rh, left, top, w, h, plan.on_host, out=out)
        return resized.transpose(0, 3, 1, 2)  # bytes: finish_host lays them out
    if exact:  # torch's float resize, in float64 (uint8 images are rounded back by finish_host)
        wy = _antialias_weights(rh, spec.height, top, h, plan.on_host)
        wx = _antialias_weights(rw, spec.width, left, w, plan.on_host)
        layers = np.stack(_tensors.host_layers(spec)).astype(np.float64)[..., :3]  # [B, H, W, 3]
        out = np.einsum("yh,bhwc,xw->bcyx", wy, layers, wx, optimize=True)
        return out.astype(np.float32)
    p = _patch_size(w, h)
    pyramid = TexturePyramid(
        spec.array, DEFAULT_FORMAT[spec.dtype], levels_for(spec.width, spec.height, plan), backend, spec.channels_last
    )
    layout = layouts.resize(spec.width, spec.height, rw, rh, (left, top, w, h), p, spec.batch)
    patches = pyramid._host_patches(layout, 3)
    patches = (
        patches.reshape(spec.batch, h // p, w // p, 3, p, p).transpose(0, 3, 1, 4, 2, 5).reshape(spec.batch, 3, h, w)
    )
    return patches * np.float32(255) if spec.dtype == "uint8" else patches


def byte_table(normalize: Any) -> np.ndarray:
    """[3, 256] float32: each byte's value in each channel after the processor's rescale and
    normalize, by finish_host's own float32 operations (so the same values)."""
    key = (float(normalize.multiply), tuple(map(float, normalize.subtract)), tuple(map(float, normalize.divide)))
    table = _byte_tables.get(key)
    if table is None:
        v = np.arange(256, dtype=np.float32)[None, :]
        table = (v * np.float32(key[0]) - np.asarray(key[1], np.float32)[:, None]) / np.asarray(key[2], np.float32)[
            :, None
        ]
        _byte_tables[key] = table = np.ascontiguousarray(table)
        drop_oldest(_byte_tables, KEPT_SIZES)
    return table


_byte_tables: "dict[Any, np.ndarray]" = {}


def _laid_out_bytes(planar: np.ndarray, plan: Plan, out: Optional[np.ndarray] = None) -> np.ndarray:
    """finish_host for resized bytes [B, 3, h, w] (any strides): one pass on the host's
    cores, each byte's value from byte_table, written in HF's layout (into `out` where given)."""
    b, _, h, w = planar.shape
    table = byte_table(plan.normalize)
    if plan.tiles:
        th, tw = plan.tiles
        shape: Tuple[int, ...] = (b * (h // th) * (w // tw), 3, th, tw)
        kind, cells = "tiles", dict(tile_width=tw, tile_height=th)
    elif plan.merged:
        p, m, t = plan.merged
        shape, kind, cells = (
            (b * (h // p) * (w // p), 3 * t * p * p),
            "merged_patches",
            dict(patch=p, merge=m, temporal=t),
        )
    else:
        shape, kind, cells = (b, 3, h, w), "planar", {}
    out = np.empty(shape, np.float32) if out is None else out.reshape(shape)
    _core.lay_out_bytes(planar, table, kind, out=out, **cells)
    return out


def finish_host(
    planar: np.ndarray, plan: Plan, round_to_byte: bool, frames: bool = False, out: Optional[np.ndarray] = None
) -> np.ndarray:
    """Rounding, normalization and HF's layout on the host: [B, 3, h, w] -> [B, 3, h, w]
    (planar) or [B * patches, 3 * T * P * P] (merged), float32. `frames`: the B images are
    consecutive video frames (T of them per patch) rather than still images (each its own T
    copies). `out`: written there (float32, C-contiguous, that size) instead of a new array."""
    if planar.dtype == np.uint8 and not (plan.merged and frames):
        return _laid_out_bytes(planar, plan, out)
    values = _finished_floats(planar, plan, round_to_byte, frames)
    if out is None:
        return values
    out = out.reshape(values.shape)
    out[...] = values
    return out


def _finished_floats(planar: np.ndarray, plan: Plan, round_to_byte: bool, frames: bool) -> np.ndarray:
    v = planar.astype(np.float32)
    if round_to_byte and planar.dtype != np.uint8:  # bytes are whole already
        v = np.rint(np.clip(v, 0, 255))
    n = plan.normalize
    v = (v * np.float32(n.multiply) - np.asarray(n.subtract, np.float32)[:, None, None]) / np.asarray(
        n.divide, np.float32
    )[:, None, None]
    if plan.tiles:
        th, tw = plan.tiles
        b, c, h, w = v.shape
        v = v.reshape(b, c, h // th, th, w // tw, tw).transpose(0, 2, 4, 1, 3, 5)
        return np.ascontiguousarray(v).reshape(b * (h // th) * (w // tw), c, th, tw)
    if not plan.merged:
        return v
    p, m, t = plan.merged
    if not frames:
        v = np.repeat(v, t, axis=0)
    f, c, h, w = v.shape
    # HF's video patchify: (groups, t, c, gh/m, m, p, gw/m, m, p) -> (groups, gh/m, gw/m, m, m, c, t, p, p)
    v = v.reshape(f // t, t, c, h // (p * m), m, p, w // (p * m), m, p).transpose(0, 3, 6, 4, 7, 2, 1, 5, 8)
    return np.ascontiguousarray(v).reshape(f // t * (h // p) * (w // p), c * t * p * p)


def write_host(spec: ImageSpec, plan: Plan, filter: str, backend: str, out: Optional[np.ndarray] = None) -> np.ndarray:
    """The values of `spec`'s images, in order (planar: [B, 3, h, w]; merged: rows): into
    `out` (float32, C-contiguous, their size) where given, else a new array."""
    return finish_host(host_planar(spec, plan, filter, backend), plan, spec.dtype == "uint8", out=out)
