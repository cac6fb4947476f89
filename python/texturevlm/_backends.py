"""The three backends behind TexturePyramid, one interface: create a texture, write level 0
(or rectangles of it) from an image, build mips (all, or those a rectangle touches), read a
level, sample a layout. CUDA works on CUDA tensors in place and in the caller's stream;
Vulkan and the CPU reference work on host arrays."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from . import _core, _devices, _tensors
from ._core import Error
from ._tensors import ImageSpec

Rect = Tuple[int, int, int, int]  # x, y, width, height in level-0 texels

#: The texture format an input dtype maps to when none is asked for (stored exactly).
DEFAULT_FORMAT = {"uint8": "rgba8", "float16": "rgba16f", "bfloat16": "rgba32f", "float32": "rgba32f"}
FORMATS = ("rgba8", "rgba8_srgb", "rgba16f", "rgba32f")
BYTE_FORMATS = ("rgba8", "rgba8_srgb")


def level_extent(width: int, height: int, level: int) -> Tuple[int, int]:
    return max(1, width >> level), max(1, height >> level)


def full_levels(width: int, height: int) -> int:
    return max(width, height).bit_length()


def level_shape(spec: ImageSpec, level: int) -> Tuple[int, ...]:
    """The shape of level `level` of an image like `spec` (its batch dimension and layout)."""
    w, h = level_extent(spec.width, spec.height, level)
    inner = (h, w, spec.channels) if spec.channels_last else (spec.channels, h, w)
    return ((spec.batch,) if spec.batched else ()) + inner


def bcyx_strides(strides: Sequence[int], channels_last: bool) -> List[int]:
    """A tensor's strides in the engine's (b, c, y, x) order (b = 0 for an unbatched one)."""
    if len(strides) == 3:
        strides = (0,) + tuple(strides)
    sb, s1, s2, s3 = strides
    return [sb, s3, s1, s2] if channels_last else [sb, s1, s2, s3]


def cuda_tensor_mips(spec: ImageSpec, levels: int, stream: int) -> List[Any]:
    """Levels 1 .. levels-1 of a CUDA image's box chain as new tensors like it, computed
    from the tensor itself with no texture in between (for dtypes that are their format's
    own: uint8, float16, float32). Equal to the texture path's levels bit for bit."""
    outs, views = [], []
    for level in range(1, levels):
        out = _tensors.empty(spec.framework, "cuda", spec.device_index, level_shape(spec, level), spec.dtype)
        ptr, strides = _tensors.pointer_and_strides(out, spec.framework)
        outs.append(out)
        views.append(_core.TensorView(ptr, spec.dtype, bcyx_strides(strides, spec.channels_last), spec.channels))
    _core.tensor_mipmaps(spec.device_index, spec.view(), spec.batch, spec.width, spec.height, views, stream)
    return outs


def convert_texels(texels: np.ndarray, format: str, dtype: str) -> np.ndarray:
    """Stored texel values as `dtype` values: bytes <-> [0, 1] floats as the engine converts."""
    byte_texels = format in BYTE_FORMATS
    if dtype == "uint8":
        if byte_texels:
            return texels
        return np.floor(np.clip(texels.astype(np.float32), 0, 1) * 255 + 0.5).astype(np.uint8)
    values = texels.astype(np.float32) / 255 if byte_texels else texels.astype(np.float32)
    return values if dtype in ("float32", "bfloat16") else values.astype(np.float16)


class _Backend:
    """What every backend does with a new frame: level 0 (or rectangles of it), then the
    mips that depend on it (`rects` None: the whole frame and every level)."""

    def write(self, spec: ImageSpec, rects: Sequence[Rect], stream: int) -> None:
        raise NotImplementedError

    def mips(self, rects: Optional[Sequence[Rect]], layers: int, stream: int, filter: str) -> None:
        raise NotImplementedError

    def update(self, spec: ImageSpec, rects: Optional[Sequence[Rect]], stream: int, filter: str) -> None:
        self.write(spec, rects or [(0, 0, spec.width, spec.height)], stream)
        self.mips(rects, spec.batch, stream, filter)


class CudaBackend(_Backend):
    name = "cuda"

    def __init__(self, device_index: int, width: int, height: int, layers: int, format: str, levels: int) -> None:
        if not _core.cuda_built():
            raise Error(
                "texturevlm was built without CUDA (no nvcc at build time): rebuild with the CUDA toolkit "
                "on the PATH, or use backend='vulkan' / 'cpu' with host arrays"
            )
        self.device_index = device_index
        self.core = _core.CudaPyramid(device_index, width, height, layers, format, levels)

    def write(self, spec: ImageSpec, rects: Sequence[Rect], stream: int) -> None:
        view = spec.view()
        for x, y, w, h in rects:
            self.core.write(view, x, y, w, h, 0, spec.batch, stream)

    def load_frame(self, spec: ImageSpec, stream: int) -> None:
        """Level 0 from the whole frame, then every level's box mips."""
        self.write(spec, [(0, 0, spec.width, spec.height)], stream)
        self.core.generate_mipmaps(stream)

    def mips(self, rects: Optional[Sequence[Rect]], layers: int, stream: int, filter: str) -> None:
        if filter != "box":
            raise Error(
                f"the CUDA backend builds box mips only, not {filter!r}: use filter='box', "
                "or backend='vulkan' for blit chains"
            )
        if rects is None:
            self.core.generate_mipmaps(stream)
        else:
            for x, y, w, h in rects:
                self.core.update_mipmaps(x, y, w, h, 0, layers, stream)

    def read(
        self,
        level: int,
        out: Any,
        framework: str,
        dtype: str,
        channels: int,
        channels_last: bool,
        stream: int,
        layers: int,
    ) -> None:
        ptr, strides = _tensors.pointer_and_strides(out, framework)
        view = _core.TensorView(ptr, dtype, bcyx_strides(strides, channels_last), channels)
        self.core.read(level, 0, layers, view, stream)

    def sample(self, layout: Any, framework: str, out: Any, channels: int, half: bool, stream: int) -> Any:
        """Samples every patch into `out`; returns the layout's device copy (its metadata)."""
        copy = layout.on_device(framework, self.device_index, stream)
        out_ptr, out_bytes = _tensors.pointer_and_bytes(out, framework)
        self.core.sample(copy.sampler, out_ptr, out_bytes, channels, half, stream)
        return copy

    def frame_to_patches(self, spec: ImageSpec, layout: Any, out: Any, half: bool, stream: int) -> Any:
        """Level 0 from the whole frame, its box mips and the layout's patches: one call.
        Returns the layout's device copy (its metadata)."""
        copy = layout.on_device(spec.framework, self.device_index, stream)
        out_ptr, out_bytes = _tensors.pointer_and_bytes(out, spec.framework)
        self.core.frame_to_patches(spec.view(), copy.sampler, out_ptr, out_bytes, half, stream)
        return copy


class CudaRing(_Backend):
    """`slots` CUDA textures for video, so that writing frame f+1 overlaps sampling frame f:
    each update() fills the next slot, reads use the newest. Ordering stays on the GPU,
    per slot, with CUDA events: a slot's write waits for the last read of the frame it held,
    a read waits for the write of its frame, whatever streams they run on. A partial update
    writes into the slot every rectangle changed since that slot last held a frame, so
    each slot equals a full rebuild of its frame."""

    name = "cuda"

    def __init__(
        self, device_index: int, width: int, height: int, layers: int, format: str, levels: int, slots: int
    ) -> None:
        self.device_index = device_index
        self.width, self.height = width, height
        self.slots = [CudaBackend(device_index, width, height, layers, format, levels) for _ in range(slots)]
        self.written = [_core.CudaEvent(device_index) for _ in range(slots)]
        self.released = [_core.CudaEvent(device_index) for _ in range(slots)]
        # Rectangles each slot misses of the newest frame (None: all of it).
        self.missing: List[Optional[List[Rect]]] = [None] * slots
        self.current = slots - 1  # the first update fills slot 0
        self.frames = 0  # updates so far

    @property
    def core(self) -> Any:
        return self.slots[self.current].core

    def update(self, spec: ImageSpec, rects: Optional[Sequence[Rect]], stream: int, filter: str) -> None:
        slot = (self.current + 1) % len(self.slots)
        missing = self.missing[slot]
        todo = None if rects is None or missing is None else missing + list(rects)
        self.released[slot].wait(stream)
        self.slots[slot].update(spec, todo, stream, filter)
        self.written[slot].record(stream)
        for other in range(len(self.slots)):
            if other != slot:
                m = self.missing[other]
                self.missing[other] = None if rects is None or m is None else m + list(rects)
        self.missing[slot] = []
        self.current = slot
        self.frames += 1

    @contextmanager
    def recent(self, count: int, stream: int) -> Iterator[List[CudaBackend]]:
        """The newest `count` frames' textures, oldest first, for reading on `stream`: the
        reads wait for the frames' writes, and the slots' next writes wait for the reads."""
        if not 1 <= count <= len(self.slots):
            raise Error(f"{count} frames from a ring of {len(self.slots)}: make the ring at least that long")
        if count > self.frames:
            raise Error(f"{count} frames asked for, {self.frames} written: update() the ring with more frames first")
        slots = [(self.current - k) % len(self.slots) for k in reversed(range(count))]
        for slot in slots:
            self.written[slot].wait(stream)
        yield [self.slots[slot] for slot in slots]
        for slot in slots:
            self.released[slot].record(stream)

    def write(self, spec: ImageSpec, rects: Sequence[Rect], stream: int) -> None:
        raise Error("a ring takes whole frames through update()")

    def mips(self, rects: Optional[Sequence[Rect]], layers: int, stream: int, filter: str) -> None:
        """Rebuilds the newest frame's levels in place (after every read of it so far)."""
        self.written[self.current].wait(stream)
        self.released[self.current].wait(stream)
        self.slots[self.current].mips(rects, layers, stream, filter)
        self.written[self.current].record(stream)

    def _reading(self, stream: int) -> CudaBackend:
        self.written[self.current].wait(stream)
        return self.slots[self.current]

    def read(
        self,
        level: int,
        out: Any,
        framework: str,
        dtype: str,
        channels: int,
        channels_last: bool,
        stream: int,
        layers: int,
    ) -> None:
        self._reading(stream).read(level, out, framework, dtype, channels, channels_last, stream, layers)
        self.released[self.current].record(stream)

    def sample(self, layout: Any, framework: str, out: Any, channels: int, half: bool, stream: int) -> Any:
        copy = self._reading(stream).sample(layout, framework, out, channels, half, stream)
        self.released[self.current].record(stream)
        return copy


class HostBackend(_Backend):
    """Vulkan compute (any Vulkan 1.3 device) or the CPU reference, fed from host arrays."""

    def __init__(
        self, name: str, width: int, height: int, layers: int, format: str, levels: int, device: str = ""
    ) -> None:
        self.name = name
        self.format = format
        if name == "vulkan":
            self.core = _core.VulkanPyramid(_devices.vulkan_device(device), width, height, layers, format, levels)
        else:
            self.core = _core.CpuPyramid(width, height, layers, format, levels)

    def write(self, spec: ImageSpec, rects: Sequence[Rect], stream: int) -> None:
        for layer, pixels in enumerate(_tensors.host_layers(spec)):
            for x, y, w, h in rects:
                self.core.upload(np.ascontiguousarray(pixels[y : y + h, x : x + w]), layer, x, y)

    def mips(self, rects: Optional[Sequence[Rect]], layers: int, stream: int, filter: str) -> None:
        if rects is None or self.name == "cpu":  # the reference rebuilds whole chains
            self.core.generate_mipmaps(filter)
        else:
            for x, y, w, h in rects:
                self.core.update_mipmaps(x, y, w, h, 0, layers)

    def level_arrays(self, level: int, layers: int, dtype: str, channels: int) -> List[np.ndarray]:
        return [
            convert_texels(self.core.level(level, layer), self.format, dtype)[..., :channels] for layer in range(layers)
        ]

    def sample_host(self, layout: Any, channels: int, half: bool, max_anisotropy: int = 16) -> np.ndarray:
        if self.name == "vulkan":
            return self.core.sample(layout._core, channels, half)
        values = self.core.sample(layout._core, channels, max_anisotropy)
        return values.astype(np.float16) if half else values
