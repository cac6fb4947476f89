"""The three backends behind TexturePyramid, one interface: create a texture, write level 0
(or rectangles of it) from an image, build mips (all, or those a rectangle touches), read a
level, sample a layout. CUDA works on CUDA tensors in place and in the caller's stream;
Vulkan and the CPU reference work on host arrays."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

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


def convert_texels(texels: np.ndarray, format: str, dtype: str) -> np.ndarray:
    """Stored texel values as `dtype` values: bytes <-> [0, 1] floats as the engine converts."""
    byte_texels = format in BYTE_FORMATS
    if dtype == "uint8":
        if byte_texels:
            return texels
        return np.floor(np.clip(texels.astype(np.float32), 0, 1) * 255 + 0.5).astype(np.uint8)
    values = texels.astype(np.float32) / 255 if byte_texels else texels.astype(np.float32)
    return values if dtype in ("float32", "bfloat16") else values.astype(np.float16)


class CudaBackend:
    name = "cuda"

    def __init__(self, device_index: int, width: int, height: int, layers: int, format: str, levels: int) -> None:
        if not _core.cuda_built():
            raise Error("texturevlm was built without CUDA (no nvcc at build time): rebuild with the CUDA toolkit "
                        "on the PATH, or use backend='vulkan' / 'cpu' with host arrays")
        self.device_index = device_index
        self.core = _core.CudaPyramid(device_index, width, height, layers, format, levels)

    def write(self, spec: ImageSpec, rects: Sequence[Rect], stream: int) -> None:
        for x, y, w, h in rects:
            self.core.write(spec.ptr, spec.dtype, spec.strides, spec.channels, x, y, w, h, 0, spec.batch, stream)

    def load_frame(self, spec: ImageSpec, stream: int) -> None:
        """Level 0 from the whole frame, then every level's box mips."""
        self.write(spec, [(0, 0, spec.width, spec.height)], stream)
        self.core.generate_mipmaps(stream)

    def mips(self, rects: Optional[Sequence[Rect]], layers: int, stream: int, filter: str) -> None:
        if filter != "box":
            raise Error(f"the CUDA backend builds box mips only, not {filter!r}: use filter='box', "
                        "or backend='vulkan' for blit chains")
        if rects is None:
            self.core.generate_mipmaps(stream)
        else:
            for x, y, w, h in rects:
                self.core.update_mipmaps(x, y, w, h, 0, layers, stream)

    def read(self, level: int, out: Any, framework: str, dtype: str, channels: int, channels_last: bool,
             stream: int, layers: int) -> None:
        ptr, strides = _tensors.pointer_and_strides(out, framework)
        if len(strides) == 3:
            strides = (0,) + strides
        sb, s1, s2, s3 = strides
        ordered = (sb, s3, s1, s2) if channels_last else (sb, s1, s2, s3)
        self.core.read(level, 0, layers, ptr, dtype, list(ordered), channels, stream)

    def sample(self, layout: Any, framework: str, out: Any, channels: int, half: bool, stream: int) -> None:
        copy = layout.on_device(framework, self.device_index)
        out_ptr = out.data_ptr() if framework == "torch" else _tensors.pointer_and_strides(out, framework)[0]
        self.core.sample(copy.records_ptr, layout.images * layout.num_patches, layout.patch_size, channels,
                         layout.gradients, half, layout.width, layout.height, out_ptr, stream)

    def frame_to_patches(self, spec: ImageSpec, layout: Any, out: Any, half: bool, stream: int) -> None:
        """Level 0 from the whole frame, its box mips and the layout's patches: one call."""
        copy = layout.on_device(spec.framework, self.device_index)
        out_ptr = out.data_ptr() if spec.framework == "torch" else _tensors.pointer_and_strides(out, spec.framework)[0]
        self.core.frame_to_patches(spec.ptr, spec.dtype, spec.strides, spec.channels, copy.records_ptr,
                                   layout.images * layout.num_patches, layout.patch_size, layout.gradients, half,
                                   out_ptr, stream)


class HostBackend:
    """Vulkan compute (any Vulkan 1.3 device) or the CPU reference, fed from host arrays."""

    def __init__(self, name: str, width: int, height: int, layers: int, format: str, levels: int,
                 device: str = "") -> None:
        self.name = name
        self.format = format
        if name == "vulkan":
            self.core = _core.VulkanPyramid(_devices.vulkan_device(device), width, height, layers, format, levels)
        else:
            self.core = _core.CpuPyramid(width, height, layers, format, levels)

    def write(self, spec: ImageSpec, rects: Sequence[Rect], stream: int) -> None:
        for layer, pixels in enumerate(_tensors.host_layers(spec)):
            for x, y, w, h in rects:
                self.core.upload(np.ascontiguousarray(pixels[y:y + h, x:x + w]), layer, x, y)

    def mips(self, rects: Optional[Sequence[Rect]], layers: int, stream: int, filter: str) -> None:
        if rects is None or self.name == "cpu":  # the reference rebuilds whole chains
            self.core.generate_mipmaps(filter)
        else:
            for x, y, w, h in rects:
                self.core.update_mipmaps(x, y, w, h, 0, layers)

    def level_arrays(self, level: int, layers: int, dtype: str, channels: int) -> List[np.ndarray]:
        return [convert_texels(self.core.level(level, layer), self.format, dtype)[..., :channels]
                for layer in range(layers)]

    def sample_host(self, layout: Any, channels: int, half: bool, max_anisotropy: int = 16) -> np.ndarray:
        if self.name == "vulkan":
            return self.core.sample(layout._core, channels, half)
        values = self.core.sample(layout._core, channels, max_anisotropy)
        return values.astype(np.float16) if half else values
