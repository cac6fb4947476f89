"""TexturePyramid: an image (or a batch) in a texture with its mip chain, sampled into patch
tensors. Tensors in, tensors out, in the caller's framework: CUDA tensors stay on the GPU
(read in place, outputs from the framework's allocator, work on the current stream, no host
sync); host arrays go through Vulkan compute or the CPU reference."""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _devices, _tensors, layouts
from ._backends import (
    BYTE_FORMATS,
    DEFAULT_FORMAT,
    FORMATS,
    CudaBackend,
    CudaRing,
    HostBackend,
    Rect,
    full_levels,
    level_extent,
)
from ._bounded import drop_oldest
from ._core import Error
from ._tensors import ImageSpec

log = logging.getLogger("texturevlm")

BACKENDS = ("auto", "cuda", "vulkan", "cpu")


class Patches(NamedTuple):
    """What every sampling call returns: `patches` [N, C, P, P] (a batch: [B, N, C, P, P])
    and `meta` [N, 5] ([B, N, 5]) = (cu, cv, su, sv, level) per slot, for positional
    embeddings. Padding slots have level -1 and zero patches; `mask` says which are real."""

    patches: Any
    meta: Any

    @property
    def mask(self) -> Any:
        """True for real patches, False for padding slots: [N] ([B, N])."""
        return self.meta[..., 4] >= 0


def _choose_backend(spec_device: str, backend: str) -> Tuple[str, str]:
    if backend not in BACKENDS:
        raise Error(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    if spec_device == "cuda":
        if backend not in ("auto", "cuda"):
            raise Error(
                f"a CUDA tensor runs on backend 'cuda', not {backend!r}: move it to the host (.cpu()) for "
                f"the {backend} backend"
            )
        return "cuda", "the image is a CUDA tensor"
    if backend == "cuda":
        raise Error("backend 'cuda' takes CUDA tensors: move the image to the GPU first (x.cuda())")
    if backend != "auto":
        return backend, "asked for"
    why = _devices.unavailable()["vulkan"]
    if not why:
        try:
            _devices.vulkan_device()
            return "vulkan", "the image is in host memory and a Vulkan device is present"
        except Error as e:
            why = str(e)
    return "cpu", f"the image is in host memory and Vulkan is unavailable ({why})"


def _check_format(format: Optional[str], dtype: str) -> str:
    format = format or DEFAULT_FORMAT[dtype]
    if format not in FORMATS:
        raise Error(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    return format


def _rects(rect: Union[None, Rect, Sequence[Rect]], width: int, height: int) -> Optional[List[Rect]]:
    if rect is None:
        return None
    rects = [rect] if len(rect) == 4 and all(isinstance(v, (int, np.integer)) for v in rect) else list(rect)
    checked = []
    for r in rects:
        if len(r) != 4:
            raise Error(f"a rectangle is (x, y, width, height), got {r!r}")
        x, y, w, h = (int(v) for v in r)
        if w <= 0 or h <= 0 or x < 0 or y < 0 or x + w > width or y + h > height:
            raise Error(
                f"rectangle {(x, y, w, h)} is empty or outside the {width}x{height} image: "
                "pass (x, y, width, height) inside it"
            )
        checked.append((x, y, w, h))
    return checked


def _out_dtype(dtype: Any) -> str:
    name = str(dtype).replace("torch.", "")
    if name not in ("float32", "float16"):
        raise Error(f"patches are float32 or float16, not {name}")
    return name


class TexturePyramid:
    """An image or a batch of images in a texture with its mip chain.

    >>> pyramid = TexturePyramid(image)            # [C, H, W] or [B, C, H, W]
    >>> patches, meta = pyramid.sample_foveated((0.4, 0.6), num_patches=273)

    `format` defaults to the one that stores the input exactly (uint8 -> 'rgba8', float16 ->
    'rgba16f', float32 and bfloat16 -> 'rgba32f'); 'rgba8_srgb' filters sRGB bytes in
    linear light. `backend` 'auto' picks 'cuda' for CUDA tensors, else 'vulkan' where a
    Vulkan device exists, else the CPU reference; `.backend` and `.backend_reason` say
    which and why. Objects own their GPU memory and free it when they die.

    Threads may share a pyramid: its calls take a lock, so they run one at a time (the
    Vulkan and CPU backends finish each call before it returns; CUDA work is ordered by
    each call's stream, as for any tensor that threads share). Separate pyramids are
    independent, on one Vulkan or CUDA device too."""

    def __init__(
        self,
        image: Any,
        format: Optional[str] = None,
        levels: Optional[int] = None,
        backend: str = "auto",
        channels_last: bool = False,
        filter: str = "box",
        stream: Any = None,
        vulkan_device: str = "",
    ) -> None:
        spec = _tensors.image_spec(image, channels_last)
        self._setup(
            spec.width,
            spec.height,
            spec.batch,
            spec.channels,
            _check_format(format, spec.dtype),
            levels,
            spec.device,
            spec.device_index,
            backend,
            vulkan_device,
        )
        self._like = (spec.framework, spec.dtype, spec.batched, channels_last)
        self.filter = filter
        self.update(image, stream=stream)

    @classmethod
    def create(
        cls,
        width: int,
        height: int,
        format: str = "rgba8",
        batch: int = 1,
        channels: int = 3,
        device: Any = "cpu",
        backend: str = "auto",
        levels: Optional[int] = None,
        vulkan_device: str = "",
        ring: int = 1,
    ) -> "TexturePyramid":
        """An empty pyramid for video: fill it frame after frame with update(). `device`
        'cuda' / 'cuda:N' / a torch.device takes CUDA tensors; 'cpu' host arrays.

        `ring` > 1 (CUDA only) keeps that many textures, so that update() of frame f+1 (say
        on a decode stream) overlaps sampling of frame f on another stream: each update
        fills the next texture, sampling reads the newest, and CUDA events order each
        texture's writes after its reads, on the GPU (no host waits). Host backends finish
        each call before returning, so they take ring=1 only."""
        if not isinstance(ring, int) or ring < 1:
            raise Error(f"ring must be a positive number of textures, not {ring!r}")
        self = cls.__new__(cls)
        device = str(device)
        kind, _, index = device.partition(":")
        if kind not in ("cpu", "cuda"):
            raise Error(f"device must be 'cpu' or 'cuda[:N]', not {device!r}")
        if channels not in (3, 4):
            raise Error(f"channels must be 3 or 4, not {channels}")
        self._setup(
            width,
            height,
            batch,
            channels,
            _check_format(format, "uint8"),
            levels,
            kind,
            int(index or 0),
            backend,
            vulkan_device,
            ring,
        )
        dtype = "uint8" if format in BYTE_FORMATS else "float32"
        self._like = ("torch" if kind == "cuda" else "numpy", dtype, batch > 1, False)
        self.filter = "box"
        return self

    def _setup(
        self,
        width: int,
        height: int,
        batch: int,
        channels: int,
        format: str,
        levels: Optional[int],
        device: str,
        device_index: int,
        backend: str,
        vulkan_device: str,
        ring: int = 1,
    ) -> None:
        self.backend, self.backend_reason = _choose_backend(device, backend)
        log.debug("texturevlm: backend %s (%s)", self.backend, self.backend_reason)
        self.width, self.height, self.batch, self.channels, self.format = width, height, batch, channels, format
        self.levels = levels if levels is not None else full_levels(width, height)
        self.device_index = device_index
        self._lock = threading.Lock()  # one call at a time: the backends' objects are not reentrant
        self._grad_source: Any = None  # the last frame, where autograd records for it (update)
        # CUDA sample() calls checked once, by (layout, dtype, frames' kind): _SamplePlan.
        self._sample_plans: Dict[Any, _SamplePlan] = {}
        # sample_foveated's last arguments and layout, where its fixation is one plain
        # point: a serving loop's repeated call skips keying the layout cache.
        self._last_foveated: Optional[Tuple[Any, "layouts.Layout"]] = None
        if ring > 1 and self.backend != "cuda":
            raise Error(
                f"ring={ring} is for CUDA pyramids; the {self.backend} backend finishes every call before "
                "it returns, so frames never overlap: use ring=1"
            )
        if ring > 1:
            self._impl: Any = CudaRing(device_index, width, height, batch, format, levels or 0, ring)
        elif self.backend == "cuda":
            self._impl = CudaBackend(device_index, width, height, batch, format, levels or 0)
        else:
            self._impl = HostBackend(self.backend, width, height, batch, format, levels or 0, vulkan_device)

    def _check_frame(self, spec: ImageSpec) -> None:
        expected = (self.batch, self.channels, self.height, self.width)
        got = (spec.batch, spec.channels, spec.height, spec.width)
        if got != expected:
            raise Error(
                f"frame of (batch, channels, height, width) {got} does not fit the pyramid's {expected}: "
                "make a pyramid of the frame's size"
            )
        if spec.device != ("cuda" if self.backend == "cuda" else "cpu"):
            raise Error(
                f"a {spec.device} frame for the pyramid on backend {self.backend}: pass frames where the "
                "pyramid lives (CUDA tensors for 'cuda', host arrays otherwise)"
            )
        if spec.device == "cuda" and spec.device_index != self.device_index:
            raise Error(
                f"frame on cuda:{spec.device_index}, pyramid on cuda:{self.device_index}: "
                "keep every tensor of a pyramid on one device"
            )

    def update(self, frame: Any, rect: Union[None, Rect, Sequence[Rect]] = None, stream: Any = None) -> None:
        """Writes a new frame (same shape as the pyramid) and rebuilds the mips. With `rect`,
        (x, y, width, height) or a list of them, only those texels are copied and only the mip
        texels that depend on them recomputed (the result equals a full rebuild)."""
        spec = _tensors.image_spec(frame, self._like[3])
        self._check_frame(spec)
        rects = _rects(rect, self.width, self.height)
        with self._lock:
            self._grad_source = _grad_source(frame, rect, self.format, self._like[3])
            self._impl.update(spec, rects, self._stream(spec.framework, stream), self.filter)
            self._like = (spec.framework, spec.dtype, spec.batched, self._like[3])

    def generate_mipmaps(self, filter: Optional[str] = None, stream: Any = None) -> None:
        """Rebuilds every level from level 0 ('box': exact area average; 'blit': Vulkan's
        linear blit, Vulkan backend only)."""
        with self._lock:
            self.filter = filter or self.filter
            self._impl.mips(None, self.batch, self._stream(self._like[0], stream), self.filter)

    def _stream(self, framework: str, stream: Any) -> int:
        if self.backend != "cuda":
            return 0
        if stream is None and framework == "torch":
            return _tensors.torch_raw_stream()(self.device_index)
        return _tensors.cuda_stream(framework, self.device_index, stream)

    # -- What texturevlm.processors need of a pyramid beyond the public API: named here, so
    # that they never reach into its backend.

    @property
    def _framework(self) -> str:
        """The framework of the frames given ('torch' or 'numpy'): outputs are made in it."""
        return self._like[0]

    def _host_patches(self, layout: "layouts.Layout", channels: int) -> np.ndarray:
        """`layout`'s patches [N, channels, P, P] float32 as a NumPy array, from a Vulkan or
        CPU-reference pyramid (no torch needed)."""
        with self._lock:
            return np.asarray(self._impl.sample_host(layout, channels, False, self.max_anisotropy))

    def _is_cuda_ring(self) -> bool:
        """Whether this is a CUDA ring of frames (TexturePyramid.create(..., ring=N))."""
        return hasattr(self._impl, "recent")

    @contextlib.contextmanager
    def _recent_frames(self, count: int, stream: int) -> Iterator[List[Any]]:
        """A CUDA ring's newest `count` frames' textures, oldest first, for reading on
        `stream` while the block runs (updates wait for it)."""
        with self._lock, self._impl.recent(count, stream) as textures:
            yield textures

    @property
    def max_anisotropy(self) -> int:
        """Taps the sampler takes along an elongated footprint: 16, or 1 on a Vulkan device
        that samples isotropically (lavapipe; docs/architecture.md says why)."""
        return self._impl.core.max_anisotropy if self.backend == "vulkan" else 16

    def level(self, level: int, stream: Any = None) -> Any:
        """Mip level `level` as a new tensor in the input's framework, dtype and layout
        ([C, h, w] or [B, C, h, w]; channels last if the input was)."""
        if not 0 <= level < self.levels:
            raise Error(f"level {level} does not exist: the pyramid has levels 0..{self.levels - 1}")
        framework, dtype, batched, channels_last = self._like
        w, h = level_extent(self.width, self.height, level)
        inner = (h, w, self.channels) if channels_last else (self.channels, h, w)
        shape = ((self.batch,) if batched else ()) + inner
        if self.backend == "cuda":
            out = _tensors.empty(framework, "cuda", self.device_index, shape, dtype)
            s = self._stream(framework, stream)
            with self._lock:
                self._impl.read(level, out, framework, dtype, self.channels, channels_last, s, self.batch)
            return _tensors.hand_over(out, framework, self.device_index, s)
        with self._lock:
            layers = self._impl.level_arrays(level, self.batch, dtype, self.channels)
        array = np.stack([a if channels_last else np.moveaxis(a, -1, 0) for a in layers])
        return _tensors.from_host(np.ascontiguousarray(array if batched else array[0]), framework, dtype)

    def sample(
        self,
        layout: "layouts.Layout",
        dtype: Any = "float32",
        out: Any = None,
        stream: Any = None,
        max_anisotropy: int = 16,
    ) -> Patches:
        """Samples every patch of `layout` (made for this pyramid's size and batch):
        trilinear at each patch's level, or anisotropic for gradient layouts. `out`, if
        given, is written in place ([B, N, C, P, P] or [N, C, P, P], contiguous).
        `max_anisotropy` is the CPU reference's (GPU samplers use 16 where they can; compare
        with a Vulkan device that cannot by passing its `max_anisotropy`).

        Where the pyramid's last frame is a torch float tensor that requires grad, every
        layout is sampled in software from that frame with autograd, with the engine's
        reference filtering (trilinear at the patch's level, or the anisotropic footprint's
        taps), so d loss / d frame flows back through every level (docs/differentiable.md)."""
        plan_key = (id(layout), dtype, self._like)
        plan = self._sample_plans.get(plan_key) if self._grad_source is None else None
        if plan is not None and plan.layout is layout:
            return plan(self, out, stream)
        half = _out_dtype(dtype) == "float16"
        if (layout.width, layout.height) != (self.width, self.height):
            raise Error(
                f"the layout is for {layout.width}x{layout.height} images, the pyramid is "
                f"{self.width}x{self.height}: make the layout for the pyramid's size"
            )
        if layout.images != self.batch:
            raise Error(f"the layout covers {layout.images} images, the pyramid holds {self.batch}")
        if layout.levels_needed > self.levels:
            raise Error(
                f"the layout samples {layout.levels_needed} levels, the pyramid has {self.levels}: "
                "make the pyramid with more levels (levels=None builds them all)"
            )
        framework, _, batched, _ = self._like
        p, n, c = layout.patch_size, layout.num_patches, self.channels
        shape = ((self.batch,) if batched else ()) + (n, c, p, p)
        out_dtype = "float16" if half else "float32"
        if self._grad_source is not None and _grad_enabled():
            if out is not None:
                raise Error("out= is written outside autograd: leave it out when the image requires grad")
            anisotropy = max_anisotropy if self.backend == "cpu" else self.max_anisotropy
            return _sample_with_grad(self._grad_source, layout, out_dtype, batched, anisotropy, self.levels)
        if self.backend == "cuda":
            if out is None:
                out = _tensors.empty(framework, "cuda", self.device_index, shape, out_dtype)
            else:
                _check_out(out, framework, shape, out_dtype, self.device_index)
            s = self._stream(framework, stream)
            with self._lock:
                copy = self._impl.sample(layout, framework, out, c, half, s)
            meta = copy.meta if batched else copy.meta_one
            if isinstance(self._impl, CudaBackend):  # not a ring: its reads wait on its slots' events
                if len(self._sample_plans) >= _MOST_PLANS:
                    self._sample_plans.clear()
                self._sample_plans[plan_key] = _SamplePlan(
                    layout, shape, out_dtype, half, framework, copy, meta, c, self.device_index
                )
            return _tensors.hand_over(Patches(out, meta), framework, self.device_index, s)
        else:
            with self._lock:
                values = self._impl.sample_host(layout, c, half, max_anisotropy).reshape(shape)
            meta = layout.metadata
            if out is not None:
                _check_out(out, framework, shape, out_dtype, None)
                np.copyto(np.asarray(out), values)
            else:
                out = _tensors.from_host(values, framework)
            meta = _tensors.from_host(meta, framework)
        return Patches(out, meta if batched else meta[0])

    def sample_at_level(
        self, level: int = 0, patch_size: int = 16, dtype: Any = "float32", stream: Any = None
    ) -> Patches:
        """Level `level` cut into patch_size x patch_size patches of its texels (a ViT
        patchify of the downsampled image)."""
        return self.sample(grid_layout(self.width, self.height, self.batch, patch_size, level), dtype, stream=stream)

    def sample_foveated(
        self,
        fixation: Any = (0.5, 0.5),
        num_patches: int = 273,
        patch_size: int = 16,
        m0: float = 0.05,
        e0: float = 0.05,
        bias: float = 0.0,
        dtype: Any = "float32",
        stream: Any = None,
        out: Any = None,
    ) -> Patches:
        """Exactly `num_patches` patches per image, fine near the fixation(s), coarse far
        from them (see layouts.foveated for what decides each patch and the padding).
        `fixation`: (x, y) in [0, 1]^2; [K, 2] several for every image; [B, K, 2] per image.
        Layouts are cached by their arguments, so a repeated fixation costs no layout work.
        `out`: written in place, as sample()'s."""
        arguments = (fixation, num_patches, patch_size, m0, e0, bias) if _plain_point(fixation) else None
        last = self._last_foveated
        if arguments is not None and last is not None and last[0] == arguments:
            layout = last[1]
        else:
            layout = foveated_layout(
                self.width, self.height, self.batch, fixation, num_patches, patch_size, m0, e0, bias
            )
            if arguments is not None:
                self._last_foveated = (arguments, layout)
        return self.sample(layout, dtype, out=out, stream=stream)

    def sample_anisotropic(
        self,
        fixation: Any = None,
        level: int = 0,
        elongation: int = 4,
        orientation: str = "horizontal",
        patch_size: int = 16,
        num_patches: Optional[int] = None,
        dtype: Any = "float32",
        stream: Any = None,
    ) -> Patches:
        """Patches `elongation` times wider than tall (or taller, orientation='vertical') at
        `level`, filtered anisotropically by the texture unit: over the whole image, or,
        with `fixation` ((x, y), or [B, 2] one per image), the `num_patches` nearest to it
        (layouts.anisotropic says how they are chosen)."""
        points = None if fixation is None else repr(layouts._pairs(fixation).tolist())
        key = (
            "anisotropic",
            self.width,
            self.height,
            patch_size,
            level,
            elongation,
            orientation,
            self.batch,
            points,
            num_patches,
        )
        layout = _cached(
            key,
            lambda: layouts.anisotropic(
                self.width, self.height, patch_size, level, elongation, orientation, self.batch, fixation, num_patches
            ),
        )
        return self.sample(layout, dtype, stream=stream)


def _grad_enabled() -> bool:
    import torch

    return torch.is_grad_enabled()


def _grad_source(frame: Any, rect: Any, format: str, channels_last: bool) -> Any:
    """The frame as [B, C, H, W] where autograd records for it (sampling then runs the
    differentiable software path from it), else None."""
    if not type(frame).__module__.startswith("torch") or not frame.requires_grad or not _grad_enabled():
        return None
    if rect is not None:
        raise Error("a partial update carries no gradients: update the whole frame, or detach it")
    if format in BYTE_FORMATS:
        raise Error(
            f"format {format!r} stores bytes, which have no gradient: use the float format the image's "
            "dtype defaults to, or detach the image"
        )
    source = frame.movedim(-1, -3) if channels_last else frame
    return source if source.dim() == 4 else source.unsqueeze(0)


def _sample_with_grad(
    source: Any, layout: "layouts.Layout", out_dtype: str, batched: bool, max_anisotropy: int, levels: int
) -> Patches:
    """sample() for an image autograd records for: the engine's reference filtering in
    software from that image (texturevlm.glimpse.sample_layout), the forward whose backward
    is exact (docs/differentiable.md says why the texture unit's is not); padding slots are
    zeros."""
    import torch

    from .glimpse import sample_layout

    meta = torch.from_numpy(np.ascontiguousarray(layout.metadata)).to(source.device)
    patches = sample_layout(source, layout, max_anisotropy, levels).to(getattr(torch, out_dtype))
    return Patches(patches, meta) if batched else Patches(patches[0], meta[0])


def _check_out(out: Any, framework: str, shape: Tuple[int, ...], dtype: str, device_index: Optional[int]) -> None:
    if framework == "jax":
        raise Error("JAX arrays are immutable: out= cannot be a JAX array; take the returned patches")
    got_shape = tuple(out.shape)
    got_dtype = str(out.dtype).replace("torch.", "")
    if got_shape != tuple(shape) or got_dtype != dtype:
        raise Error(f"out has shape {list(got_shape)} and dtype {got_dtype}; the patches need {list(shape)} {dtype}")
    if framework == "torch":
        if not out.is_contiguous():
            raise Error("out must be contiguous")
        if device_index is not None and (out.device.type != "cuda" or (out.device.index or 0) != device_index):
            raise Error(f"out is on {out.device}, the pyramid on cuda:{device_index}")
        if device_index is None and out.device.type != "cpu":
            raise Error(f"out is on {out.device}; host backends write host memory")


_torch_empty_strided: Any = None  # looked up once: the calls below are per frame


def _torch_out(out: Any, shape: Any, strides: Any, dtype: Any, device: Any, dtype_name: str, device_index: int) -> Any:
    """`out`, checked, or a new contiguous torch tensor of `shape` (`strides`), `dtype` on
    `device` (torch's own objects, compared as they are: the general check runs only to name
    what differs). New tensors come from torch.empty_strided, whose arguments parse faster
    than torch.empty's (_tensors._torch_empty)."""
    if out is None:
        global _torch_empty_strided
        if _torch_empty_strided is None:
            import torch

            _torch_empty_strided = torch.empty_strided
        return _torch_empty_strided(shape, strides, dtype=dtype, device=device)
    if out.shape != shape or out.dtype != dtype or out.device != device or not out.is_contiguous():
        _check_out(out, "torch", tuple(shape), dtype_name, device_index)  # raises, naming what differs
    return out


_MOST_PLANS = 16  # a pyramid's sample plans kept: a serving loop uses one or two layouts


class _SamplePlan:
    """A CUDA pyramid's sample() of one layout, dtype and kind of frame, worked out and
    checked by its first call: later calls allocate (or check) the output and launch. For
    torch the output's shape, dtype and device are kept as torch's own objects, so a call
    compares them as they are (the general check runs only to name what differs)."""

    __slots__ = (
        "layout",
        "shape",
        "out_dtype",
        "half",
        "framework",
        "copy",
        "meta",
        "channels",
        "torch_shape",
        "torch_strides",
        "torch_dtype",
        "torch_device",
        "out_bytes",
    )

    def __init__(
        self,
        layout: Any,
        shape: Tuple[int, ...],
        out_dtype: str,
        half: bool,
        framework: str,
        copy: Any,
        meta: Any,
        channels: int,
        device_index: int,
    ) -> None:
        self.layout, self.shape, self.out_dtype, self.half = layout, shape, out_dtype, half
        self.framework, self.copy, self.meta, self.channels = framework, copy, meta, channels
        self.torch_shape = self.torch_strides = self.torch_dtype = self.torch_device = None
        self.out_bytes = (2 if half else 4) * int(np.prod(shape))
        if framework == "torch":
            import torch

            self.torch_shape, self.torch_dtype = torch.Size(shape), getattr(torch, out_dtype)
            self.torch_strides = _tensors.contiguous_strides(tuple(shape))
            self.torch_device = torch.device("cuda", device_index)

    def __call__(self, pyramid: "TexturePyramid", out: Any, stream: Any) -> Patches:
        framework, index = self.framework, pyramid.device_index
        if self.torch_shape is not None:
            out = _torch_out(
                out, self.torch_shape, self.torch_strides, self.torch_dtype, self.torch_device, self.out_dtype, index
            )
            ptr = out.data_ptr()
            s = _tensors.torch_raw_stream()(index) if stream is None else _tensors.cuda_stream(framework, index, stream)
        else:
            if out is None:
                out = _tensors.empty(framework, "cuda", index, self.shape, self.out_dtype)
            else:
                _check_out(out, framework, self.shape, self.out_dtype, index)
            ptr = _tensors.pointer_and_bytes(out, framework)[0]
            s = pyramid._stream(framework, stream)
        self.copy.ready_on(s)
        with pyramid._lock:
            pyramid._impl.core.sample(self.copy.sampler, ptr, self.out_bytes, self.channels, self.half, s)
        return _tensors.hand_over(Patches(out, self.meta), framework, index, s)


def grid_layout(width: int, height: int, batch: int, patch_size: int, level: int) -> "layouts.Layout":
    """layouts.grid, cached by its arguments."""
    return _cached(
        ("grid", width, height, patch_size, level, batch), lambda: layouts.grid(width, height, patch_size, level, batch)
    )


def foveated_layout(
    width: int,
    height: int,
    batch: int,
    fixation: Any,
    num_patches: int,
    patch_size: int,
    m0: float,
    e0: float,
    bias: float,
) -> "layouts.Layout":
    """layouts.foveated, cached by its arguments."""
    if _plain_point(fixation):
        points: Any = fixation  # the common case, keyed as it is (no array work per call)
    else:
        points = repr(layouts.fixations_per_image(fixation, batch))
    key = ("foveated", width, height, points, num_patches, patch_size, m0, e0, bias, batch)
    return _cached(key, lambda: layouts.foveated(width, height, fixation, num_patches, patch_size, m0, e0, bias, batch))


def _plain_point(fixation: Any) -> bool:
    """Whether `fixation` is one (x, y) tuple of Python numbers: hashable, and compared by
    value without array work or a device sync."""
    return (
        type(fixation) is tuple
        and len(fixation) == 2
        and type(fixation[0]) in _NUMBERS
        and type(fixation[1]) in _NUMBERS
    )


_NUMBERS = (float, int)
_layout_cache: "dict[Any, layouts.Layout]" = {}


def _cached(key: Any, make: Any) -> "layouts.Layout":
    """Layouts by their arguments, the 64 most recent kept (each holds its device copies)."""
    layout = _layout_cache.pop(key, None)
    if layout is None:
        layout = make()
    _layout_cache[key] = layout
    drop_oldest(_layout_cache, 64)
    return layout
