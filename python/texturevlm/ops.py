"""torch custom operators (torch.library) for the per-frame CUDA path, so torch.compile
traces through texturevlm without graph breaks and CUDA graphs capture it:

- ``torch.ops.texturevlm.mipmaps(image, levels, format, channels_last, first_level)``:
  levels first_level..levels-1 of the box chain, each like the input.
- ``torch.ops.texturevlm.patches(image, records, layout_key, images, num_patches,
  patch_size, levels, format, channels_last, half)``: image -> texture -> box mips ->
  patches [B, N, C, P, P] ([N, C, P, P] for an unbatched image); `layout_key` names the
  layout's device copy (layouts.DeviceCopy.key: its sampler over `records`).

Both run on torch's current CUDA stream, allocate only their outputs (torch's caching
allocator) and never wait on the host, so they can be captured in a CUDA graph once the
texture for that size exists (run the op once before capture). They are not
differentiable (gradients are issue 15's). A layout is copied to the device on its first
use: make that use an eager call (outside torch.compile) so the trace only reads the copy. Most users call texturevlm.generate_mipmaps
and texturevlm.sample_patches, which use these ops for torch CUDA tensors."""

from __future__ import annotations

from typing import List

import torch
from torch import Tensor

from . import _tensors
from ._core import Error
from ._kept_textures import cuda_levels, cuda_texture
from .layouts import device_copy


def _spec(image: Tensor, channels_last: bool) -> _tensors.ImageSpec:
    return _tensors.image_spec(image, channels_last)


_DTYPE_NAMES = {torch.uint8: "uint8", torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32"}


def dtype_name(image: Tensor) -> str:
    """The engine's name of the image's dtype; raises Error for others (traceable)."""
    name = _DTYPE_NAMES.get(image.dtype)
    if name is None:
        raise Error(f"image dtype {image.dtype} is not supported: use uint8, float16, bfloat16 or float32")
    return name


def image_shape(image: Tensor, channels_last: bool) -> tuple:
    """(batch, channels, height, width) of a [C, H, W] / [B, C, H, W] image (channels last:
    [H, W, C] / [B, H, W, C]); raises Error for other ranks or channel counts (traceable)."""
    if image.dim() not in (3, 4):
        raise Error(f"an image has rank 3 or 4, got shape {list(image.shape)}")
    shape = tuple(image.shape) if image.dim() == 4 else (1,) + tuple(image.shape)
    b, c, h, w = (shape[0], shape[3], shape[1], shape[2]) if channels_last else shape
    if c not in (3, 4):
        raise Error(f"an image has 3 or 4 channels, got {c} in shape {list(image.shape)}")
    return b, c, h, w


@torch.library.custom_op("texturevlm::mipmaps", mutates_args=(), device_types="cuda")
def mipmaps(image: Tensor, levels: int, format: str, channels_last: bool, first_level: int) -> List[Tensor]:
    spec = _spec(image, channels_last)
    return cuda_levels(spec, format, levels, first_level, _tensors.torch_raw_stream()(spec.device_index))


def _level_shape(image: Tensor, level: int, channels_last: bool) -> List[object]:
    shape = list(image.shape)
    h_axis, w_axis = (-3, -2) if channels_last else (-2, -1)
    shape[h_axis] = torch.sym_max(1, shape[h_axis] // (2**level))
    shape[w_axis] = torch.sym_max(1, shape[w_axis] // (2**level))
    return shape


@mipmaps.register_fake
def _(image: Tensor, levels: int, format: str, channels_last: bool, first_level: int) -> List[Tensor]:
    return [image.new_empty(_level_shape(image, level, channels_last)) for level in range(first_level, levels)]


@torch.library.custom_op("texturevlm::patches", mutates_args=(), device_types="cuda")
def patches(
    image: Tensor,
    records: Tensor,
    layout_key: int,
    images: int,
    num_patches: int,
    patch_size: int,
    levels: int,
    format: str,
    channels_last: bool,
    half: bool,
) -> Tensor:
    spec = _spec(image, channels_last)
    texture = cuda_texture(spec, format, levels)
    out = image.new_empty(
        _patches_shape(image, num_patches, patch_size, channels_last), dtype=torch.float16 if half else torch.float32
    )
    sampler = device_copy(layout_key).sampler  # reads `records`
    texture.core.frame_to_patches(
        spec.view(),
        sampler,
        *_tensors.pointer_and_bytes(out, "torch"),
        half,
        _tensors.torch_raw_stream()(spec.device_index),
    )
    return out


def _patches_shape(image: Tensor, num_patches: int, patch_size: int, channels_last: bool) -> List[object]:
    channels = image.shape[-1] if channels_last else image.shape[-3]
    batch = [image.shape[0]] if image.dim() == 4 else []
    return batch + [num_patches, channels, patch_size, patch_size]


@patches.register_fake
def _(
    image: Tensor,
    records: Tensor,
    layout_key: int,
    images: int,
    num_patches: int,
    patch_size: int,
    levels: int,
    format: str,
    channels_last: bool,
    half: bool,
) -> Tensor:
    return image.new_empty(
        _patches_shape(image, num_patches, patch_size, channels_last), dtype=torch.float16 if half else torch.float32
    )
