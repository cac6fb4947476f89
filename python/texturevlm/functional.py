"""Functions of a whole frame: image in, mip levels or patches out, the per-frame path of a
model. On CUDA they reuse one texture per (device, size, batch, format) and go through the
torch custom ops of texturevlm.ops for torch tensors, so torch.compile traces them and
CUDA graphs capture them."""

from __future__ import annotations

import sys
from typing import Any, List, Optional

from . import _frame_calls, _kept_textures, _tensors, layouts
from ._backends import DEFAULT_FORMAT, full_levels
from ._core import Error
from ._kept_textures import cuda_levels, cuda_texture, stores_exactly
from .pyramid import Patches, TexturePyramid, _check_format, _check_out, _out_dtype


def clear_cache() -> None:
    """Frees the textures kept for the functional API and for the processors."""
    _frame_calls.clear()
    _kept_textures.clear()
    composed = sys.modules.get(__package__ + ".processors._composed")
    if composed is not None:  # before the resizers: its launches hold some
        composed.clear()
    processors = sys.modules.get(__package__ + ".processors._resize")
    if processors is not None:
        processors.clear_cache()


def _check_levels(width: int, height: int, levels: Optional[int]) -> int:
    full = full_levels(width, height)
    if levels is not None and not 1 <= levels <= full:
        raise Error(f"levels must be in 1..{full} for a {width}x{height} image, not {levels}")
    return levels or full


def _is_torch_cuda(image: Any) -> bool:
    return type(image).__module__.startswith("torch") and image.is_cuda


def _wants_grad(image: Any) -> bool:
    """Whether `image` is a torch tensor autograd is recording for."""
    if not type(image).__module__.startswith("torch"):
        return False
    import torch

    return image.requires_grad and torch.is_grad_enabled()


def _default_format(image: Any) -> str:
    return DEFAULT_FORMAT.get(str(image.dtype).replace("torch.", ""), "")


def generate_mipmaps(
    image: Any,
    filter: str = "box",
    levels: Optional[int] = None,
    format: Optional[str] = None,
    backend: str = "auto",
    channels_last: bool = False,
    stream: Any = None,
) -> List[Any]:
    """The mip chain of `image` ([C, H, W] or [B, C, H, W]) as a list of tensors, level 0
    first, each in the input's framework, dtype and layout. Level l is max(1, W >> l) x
    max(1, H >> l). 'box' is the exact area average: for even sizes a chain of
    avg_pool2d(x, 2) (within float rounding; uint8 rounds half up), for odd sizes every
    source texel weighted by its overlap (docs/architecture.md, "Mip filters"). Level 0 is the input
    itself (no copy) where the format stores it exactly (the default format does).

    A torch float image that requires grad gets levels with gradients (autograd folds
    every level's gradient back into the image through the box's adjoint): the box filter
    in the default format, of 1..64 channels, on its own device (differentiable.box_levels)."""
    if _wants_grad(image):
        if filter != "box" or format not in (None, _default_format(image)):
            raise Error(
                "gradients flow through the box filter in the image's own format: leave filter and format "
                "at their defaults, or detach the image"
            )
        from .differentiable import box_levels

        with _tensors.torch_stream(stream):
            return box_levels(image, levels, channels_last)
    if _is_torch_cuda(image) and backend in ("auto", "cuda") and filter == "box" and _compiling():
        # Only what torch.compile can trace here: the op checks the rest when it runs.
        from . import ops

        shape = ops.image_shape(image, channels_last)
        dtype = ops.dtype_name(image)
        format = _check_format(format, dtype)
        count = _check_levels(shape[3], shape[2], levels)
        first = 1 if stores_exactly(format, dtype) else 0
        with _tensors.torch_stream(stream):
            rest = ops.mipmaps(image, count, format, channels_last, first)
        return ([image] if first else []) + list(rest)
    spec = _tensors.image_spec(image, channels_last)
    format = _check_format(format, spec.dtype)
    count = _check_levels(spec.width, spec.height, levels)
    first = 1 if stores_exactly(format, spec.dtype) else 0
    if spec.device == "cuda" and backend in ("auto", "cuda") and filter == "box":
        s = _tensors.cuda_stream(spec.framework, spec.device_index, stream)
        levels = cuda_levels(spec, format, count, first, s)
        return _tensors.hand_over(([image] if first else []) + levels, spec.framework, spec.device_index, s)
    pyramid = TexturePyramid(image, format, count, backend, channels_last, filter, stream)
    return ([image] if first else []) + [pyramid.level(l) for l in range(first, count)]


def sample_patches(
    image: Any,
    layout: "layouts.Layout",
    dtype: Any = "float32",
    format: Optional[str] = None,
    backend: str = "auto",
    channels_last: bool = False,
    stream: Any = None,
    out: Any = None,
) -> Patches:
    """A frame to patches in one call: `image` into a texture, its box mips, every patch of
    `layout` sampled. For video of one size this is the whole per-frame work; on CUDA it
    is one C++ call on the current stream with no host sync and no allocation but the
    output's (none with `out`, a contiguous tensor of the patches' shape and dtype, written in
    place); a call repeating the last ones' buffers replays their launches as one CUDA graph.
    Inside torch.compile it is the custom op texturevlm::patches (`out` is not taken there:
    compiled graphs allocate their own outputs)."""
    torch_cuda = _is_torch_cuda(image) and backend in ("auto", "cuda")
    compiling = torch_cuda and _compiling()
    key = None
    if torch_cuda and not compiling:
        key = _frame_calls.call_key(image, layout, (dtype, format, channels_last))
        call = _frame_calls.find(key, layout)
        if call is not None:  # this layout of frame ran before: checked then
            return call(image, stream, out)
    half = _out_dtype(dtype) == "float16"
    if compiling and out is None:
        from . import ops

        batch, channels, height, width = ops.image_shape(image, channels_last)
        format = _check_format(format, ops.dtype_name(image))
        _check_layout(width, height, batch, layout)
        copy = layout.on_device("torch", image.device.index or 0)
        with _tensors.torch_stream(stream):
            patches = ops.patches(
                image,
                copy.records,
                copy.key,
                layout.images,
                layout.num_patches,
                layout.patch_size,
                full_levels(width, height),
                format,
                channels_last,
                half,
            )
        return Patches(patches, copy.meta if image.dim() == 4 else copy.meta_one)
    spec = _tensors.image_spec(image, channels_last)
    format = _check_format(format, spec.dtype)
    if spec.device != "cuda" or backend not in ("auto", "cuda"):
        pyramid = TexturePyramid(image, format, None, backend, channels_last, "box", stream)
        return pyramid.sample(layout, dtype, out=out)
    _check_layout(spec.width, spec.height, spec.batch, layout)
    texture = cuda_texture(spec, format, full_levels(spec.width, spec.height))
    shape = ((spec.batch,) if spec.batched else ()) + (
        layout.num_patches,
        spec.channels,
        layout.patch_size,
        layout.patch_size,
    )
    out_dtype = "float16" if half else "float32"
    if out is None:
        patches = _tensors.empty(spec.framework, "cuda", spec.device_index, shape, out_dtype)
    else:
        _check_out(out, spec.framework, shape, out_dtype, spec.device_index)
        patches = out
    s = _tensors.cuda_stream(spec.framework, spec.device_index, stream)
    copy = texture.frame_to_patches(spec, layout, patches, half, s)
    meta = copy.meta if spec.batched else copy.meta_one
    if key is not None:
        _frame_calls.remember(key, _frame_calls.FrameCall(layout, texture, copy, spec, patches, half, meta))
    return _tensors.hand_over(Patches(patches, meta), spec.framework, spec.device_index, s)


_is_compiling: Any = None


def _compiling() -> bool:
    """Whether torch.compile is tracing (then the custom ops keep texturevlm in the graph;
    eager calls skip the dispatcher's overhead)."""
    global _is_compiling
    if _is_compiling is None:
        import torch

        _is_compiling = torch.compiler.is_compiling
    return _is_compiling()


def _check_layout(width: int, height: int, batch: int, layout: "layouts.Layout") -> None:
    if (layout.width, layout.height) != (width, height):
        raise Error(
            f"the layout is for {layout.width}x{layout.height} images, the image is "
            f"{width}x{height}: make the layout for the image's size"
        )
    if layout.images != batch:
        raise Error(f"the layout covers {layout.images} images, the batch has {batch}")
