"""FeaturePyramid: feature maps of 1 to 64 channels (a network's feature maps, the design
document's 40-channel metadata arrays) as box mip chains in textures, sampled into patches
on every backend (CUDA, Vulkan compute, the CPU reference).

A texture texel holds at most 4 channels, so the channels are kept in groups of 4: one
RGBA TexturePyramid per group (the last group of 1 or 2 channels padded with zeros to 4, of
3 kept as RGB), all updated, mipped and sampled together; levels and patches come back
with the channels together, [B, C, h, w] and [B, N, C, P, P]. Where the features are a
torch float tensor that requires grad, layouts sample in software with gradients
(TexturePyramid.sample; docs/differentiable.md)."""

from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

from . import _tensors, layouts
from ._core import Error
from .pyramid import Patches, TexturePyramid, foveated_layout, grid_layout

MAX_CHANNELS = 64
GROUP = 4  # channels per texture texel
FLOAT_DTYPES = ("float32", "float16", "bfloat16")


class FeaturePyramid:
    """Feature maps `features` ([C, H, W] or [B, C, H, W]; [H, W, C] / [B, H, W, C] with
    channels_last) of 1..64 float channels (float32, float16; bfloat16 is held as float32)
    with their box mip chains. `backend` and `levels` as for TexturePyramid.

    >>> features = torch.rand(1, 40, 512, 512, device="cuda")
    >>> pyramid = FeaturePyramid(features)
    >>> patches, meta = pyramid.sample_foveated((0.4, 0.6))     # [1, 273, 40, 16, 16]"""

    def __init__(
        self,
        features: Any,
        levels: Optional[int] = None,
        backend: str = "auto",
        channels_last: bool = False,
        stream: Any = None,
        vulkan_device: str = "",
    ) -> None:
        self.channels_last = channels_last
        self.channels = self._check(features)
        self._pyramids: List[TexturePyramid] = [
            TexturePyramid(group, None, levels, backend, channels_last, "box", stream, vulkan_device)
            for group in self._groups(features)
        ]

    @property
    def width(self) -> int:
        return self._pyramids[0].width

    @property
    def height(self) -> int:
        return self._pyramids[0].height

    @property
    def batch(self) -> int:
        return self._pyramids[0].batch

    @property
    def levels(self) -> int:
        return self._pyramids[0].levels

    @property
    def backend(self) -> str:
        return self._pyramids[0].backend

    @property
    def textures(self) -> int:
        """RGBA textures holding the channels (ceil(C / 4))."""
        return len(self._pyramids)

    def update(self, features: Any, stream: Any = None) -> None:
        """New feature maps of the same shape; every level is rebuilt."""
        if self._check(features) != self.channels:
            raise Error(f"features of {self.channels} channels for this pyramid, not {self._channels_of(features)}")
        for pyramid, group in zip(self._pyramids, self._groups(features)):
            pyramid.update(group, stream=stream)

    def level(self, level: int, stream: Any = None) -> Any:
        """Level `level` as one tensor of the input's framework, dtype and layout."""
        parts = [p.level(level, stream) for p in self._pyramids]
        return _trim(_concat(parts, self._channel_axis(parts[0])), self.channels, self._channel_axis(parts[0]))

    def sample(self, layout: "layouts.Layout", dtype: Any = "float32", stream: Any = None) -> Patches:
        """Every patch of `layout` ([B, N, C, P, P] or [N, C, P, P]) with all C channels."""
        parts = [p.sample(layout, dtype, stream=stream) for p in self._pyramids]
        axis = parts[0].patches.ndim - 3
        patches = _concat([part.patches for part in parts], axis)
        return Patches(_trim(patches, self.channels, axis), parts[0].meta)

    def sample_at_level(
        self, level: int = 0, patch_size: int = 16, dtype: Any = "float32", stream: Any = None
    ) -> Patches:
        """Level `level` cut into patch_size x patch_size patches of its texels."""
        return self.sample(grid_layout(self.width, self.height, self.batch, patch_size, level), dtype, stream)

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
    ) -> Patches:
        """`num_patches` patches per image, fine near the fixation(s) (layouts.foveated)."""
        layout = foveated_layout(self.width, self.height, self.batch, fixation, num_patches, patch_size, m0, e0, bias)
        return self.sample(layout, dtype, stream)

    def _channels_of(self, features: Any) -> int:
        shape = tuple(features.shape)
        if len(shape) not in (3, 4):
            raise Error(
                f"features are [C, H, W] or [B, C, H, W] ([H, W, C] / [B, H, W, C] channels last), "
                f"not of shape {list(shape)}"
            )
        return shape[-1] if self.channels_last else shape[-3]

    def _check(self, features: Any) -> int:
        channels = self._channels_of(features)
        if not 1 <= channels <= MAX_CHANNELS:
            raise Error(f"feature maps have 1..{MAX_CHANNELS} channels, not {channels}")
        dtype = str(features.dtype).replace("torch.", "")
        if dtype not in FLOAT_DTYPES:
            raise Error(
                f"feature maps are float32, float16 or bfloat16, not {dtype}: texture bytes would "
                "quantize features (convert with .float())"
            )
        return channels

    def _channel_axis(self, x: Any) -> int:
        return x.ndim - 1 if self.channels_last else x.ndim - 3

    def _groups(self, features: Any) -> List[Any]:
        """The channels in groups of 4 (views), the last of 1 or 2 padded to 4 (a copy)."""
        axis = self._channel_axis(features)
        groups = []
        for first in range(0, self.channels, GROUP):
            index = [slice(None)] * features.ndim
            index[axis] = slice(first, min(first + GROUP, self.channels))
            group = features[tuple(index)]
            if group.shape[axis] < 3:
                group = _pad_channels(group, axis, GROUP)
            groups.append(group)
        return groups


def _framework(x: Any) -> str:
    return _tensors.framework_of(x)


def _concat(parts: List[Any], axis: int) -> Any:
    if len(parts) == 1:
        return parts[0]
    framework = _framework(parts[0])
    if framework == "torch":
        import torch

        return torch.cat(parts, dim=axis)
    if framework == "cupy":
        import cupy

        return cupy.concatenate(parts, axis=axis)
    if framework == "jax":
        import jax.numpy as jnp

        return jnp.concatenate(parts, axis=axis)
    return np.concatenate(parts, axis=axis)


def _trim(x: Any, channels: int, axis: int) -> Any:
    """The first `channels` channels (the padding of the last group dropped)."""
    if x.shape[axis] == channels:
        return x
    index = [slice(None)] * x.ndim
    index[axis] = slice(0, channels)
    return x[tuple(index)]


def _pad_channels(x: Any, axis: int, channels: int) -> Any:
    """`x` with zero channels appended up to `channels`, in its framework."""
    shape = list(x.shape)
    shape[axis] = channels - shape[axis]
    framework = _framework(x)
    if framework == "torch":
        import torch

        return torch.cat([x, x.new_zeros(shape)], dim=axis)
    if framework == "cupy":
        import cupy

        return cupy.concatenate([x, cupy.zeros(shape, dtype=x.dtype)], axis=axis)
    if framework == "jax":
        import jax.numpy as jnp

        return jnp.concatenate([x, jnp.zeros(shape, dtype=x.dtype)], axis=axis)
    x = np.asarray(x)
    return np.concatenate([x, np.zeros(shape, dtype=x.dtype)], axis=axis)
