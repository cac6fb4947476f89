"""The CUDA textures kept between calls for frames of one device, size, batch and format,
and the levels read from them: what the functional API (functional.py) and the torch ops
(ops.py) share, so that neither imports the other."""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Tuple

from . import _tensors
from ._backends import DEFAULT_FORMAT, CudaBackend, cuda_tensor_mips, level_shape
from ._bounded import drop_oldest
from ._tensors import ImageSpec

_lock = threading.Lock()
_textures: Dict[Tuple[int, int, int, int, int, str, int], CudaBackend] = {}


def cuda_texture(spec: ImageSpec, format: str, levels: int) -> CudaBackend:
    """The texture kept for frames of this device, size, batch and format (16 kept; a
    texture of the first use is allocated then, never again). Each thread has textures of
    its own: a texture holds a call's frame until its kernels ran, so threads running calls
    at once must not share one."""
    key = (threading.get_ident(), spec.device_index, spec.width, spec.height, spec.batch, format, levels)
    with _lock:
        texture = _textures.pop(key, None)
        if texture is None:
            texture = CudaBackend(spec.device_index, spec.width, spec.height, spec.batch, format, levels)
        _textures[key] = texture
        drop_oldest(_textures, 16)
        return texture


def clear() -> None:
    """Frees the kept textures."""
    with _lock:
        _textures.clear()


def stores_exactly(format: str, dtype: str) -> bool:
    """Whether level 0 of `format` holds values of `dtype` unchanged (so level 0 is the input)."""
    return dtype != "bfloat16" and DEFAULT_FORMAT[dtype] == format


def cuda_levels(spec: ImageSpec, format: str, count: int, first: int, stream: int) -> List[Any]:
    """Levels first .. count-1 of a CUDA image's box chain as tensors like it: computed over
    the tensors themselves where the dtype is the format's own (first == 1), else through
    a texture of `format` (bfloat16, sRGB, or a format other than the dtype's)."""
    if first:
        return cuda_tensor_mips(spec, count, stream)
    texture = cuda_texture(spec, format, count)
    texture.load_frame(spec, stream)
    return [read_level(texture, spec, level, stream) for level in range(first, count)]


def read_level(texture: CudaBackend, spec: ImageSpec, level: int, stream: int, out: Any = None) -> Any:
    """Level `level` of a CUDA texture as a new tensor shaped and typed like the input."""
    if out is None:
        out = _tensors.empty(spec.framework, "cuda", spec.device_index, level_shape(spec, level), spec.dtype)
    texture.read(level, out, spec.framework, spec.dtype, spec.channels, spec.channels_last, stream, spec.batch)
    return out
