"""Repeated sample_patches calls on torch CUDA frames. Everything a call needs but the
frame's address (the kept texture, the layout's device copy, the output's shape and dtype)
depends only on the frame's layout (shape, strides, dtype, device), the patch layout and
the call's options. The first call of a key works it out and checks it; later calls of the
key cost the key, the output's allocation and one C++ call, which the engine replays as one
CUDA graph where the frame and output addresses repeat too (a serving loop's usually do)."""

from __future__ import annotations

import threading
from typing import Any, Dict, Optional, Tuple

from . import _core, _tensors
from ._backends import CudaBackend
from ._tensors import ImageSpec
from .pyramid import Patches, _torch_out

#: key (call_key) -> FrameCall. Each thread has its own: a kept texture holds a call's frame
#: until its kernels ran (_kept_textures.cuda_texture).
_calls: Dict[Any, "FrameCall"] = {}
_MOST = 16  # as many as textures are kept (_kept_textures)


def call_key(image: Any, layout: Any, options: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """What a call's work depends on besides the frame's address (torch CUDA `image`)."""
    return (threading.get_ident(), id(layout), options, image.shape, image.stride(), image.dtype, image.device)


class FrameCall:
    """One key's call: the frame's view but its pointer, the texture, the sampler and the
    output's description, checked by the key's first call."""

    __slots__ = (
        "layout",
        "texture",
        "copy",
        "dtype",
        "strides",
        "channels",
        "shape",
        "strides_out",
        "out_dtype",
        "torch_dtype",
        "device",
        "index",
        "out_bytes",
        "half",
        "meta",
    )

    def __init__(
        self, layout: Any, texture: CudaBackend, copy: Any, spec: ImageSpec, patches: Any, half: bool, meta: Any
    ) -> None:
        self.layout, self.texture, self.copy, self.half, self.meta = layout, texture, copy, half, meta
        self.dtype, self.strides, self.channels = spec.dtype, list(spec.strides), spec.channels
        self.shape, self.torch_dtype, self.device = patches.shape, patches.dtype, patches.device
        self.strides_out = _tensors.contiguous_strides(tuple(patches.shape))
        self.out_dtype = "float16" if half else "float32"
        self.index = spec.device_index
        self.out_bytes = patches.numel() * patches.element_size()

    def __call__(self, image: Any, stream: Any, out: Any) -> Patches:
        patches = _torch_out(
            out, self.shape, self.strides_out, self.torch_dtype, self.device, self.out_dtype, self.index
        )
        s = _tensors.cuda_stream("torch", self.index, stream)
        self.copy.ready_on(s)
        view = _core.TensorView(image.data_ptr(), self.dtype, self.strides, self.channels)
        self.texture.core.frame_to_patches(view, self.copy.sampler, patches.data_ptr(), self.out_bytes, self.half, s)
        return Patches(patches, self.meta)


def find(key: Tuple[Any, ...], layout: Any) -> Optional[FrameCall]:
    """The key's call where one ran before (for this very layout object)."""
    call = _calls.get(key)
    return call if call is not None and call.layout is layout else None


def remember(key: Tuple[Any, ...], call: FrameCall) -> None:
    if len(_calls) >= _MOST:
        _calls.clear()
    _calls[key] = call


def clear() -> None:
    """Forgets every call (and with them their textures)."""
    _calls.clear()
