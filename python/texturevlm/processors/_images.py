"""Processor inputs as Hugging Face's processors take them: one image or a list (nested
lists flattened) of [C, H, W] / [H, W, C] / [H, W] tensors or arrays, or [B, C, H, W]
batches; torch, NumPy, CuPy, JAX or PIL images. Channels are found as HF finds them (a
leading 1, 3 or 4 means channels first), grayscale is read as RGB through a zero-stride
view (no copy) and RGBA is composited over white as HF's convert_to_rgb does."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import numpy as np

from .. import _tensors
from .._tensors import ImageSpec
from ._rules import ProcessorInputError

if TYPE_CHECKING:
    from ._resize import PendingCall

CHANNEL_COUNTS = (1, 3, 4)


def _is_array(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype")


def _is_image_array(x: Any) -> bool:
    """Whether `x` is an array flat_images returns as it is: one image, [C, H, W] or [H, W, C]."""
    shape = getattr(x, "shape", None)
    return shape is not None and len(shape) == 3 and hasattr(x, "dtype")


#: PIL modes read as their arrays: grey, RGB and RGBA bytes.
_PIL_MODES_AS_IS = ("L", "RGB", "RGBA")


def flat_images(images: Any) -> List[Any]:
    """Every image of `images` in order: lists and tuples flattened, 4-D arrays split."""
    if images is None:
        raise ProcessorInputError("no images: pass an image tensor or a list of them")
    if isinstance(images, (list, tuple)):
        if images and all(_is_image_array(image) for image in images):
            return list(images)  # the usual list: no nesting, no batches, nothing to convert
        flat = [image for item in images for image in flat_images(item)] if images else []
        if not flat:
            raise ProcessorInputError("no images: the list is empty; pass at least one image")
        return flat
    if not _is_array(images):
        if type(images).__module__.startswith("PIL") and getattr(images, "mode", "RGB") not in _PIL_MODES_AS_IS:
            # HF's convert_rgb makes every other mode (LA, P, I, I;16, CMYK, ...) RGBA through PIL,
            # then composites it over white; the RGBA array takes that same path here.
            images = images.convert("RGBA")
        if hasattr(images, "__array_interface__") or type(images).__module__.startswith("PIL"):
            images = np.asarray(images)  # a PIL image: [H, W, C] or [H, W]
        else:
            raise ProcessorInputError(f"expected image tensors or arrays, got {type(images).__name__}")
    if len(images.shape) == 4:
        return [images[b] for b in range(images.shape[0])] if images.shape[0] else flat_images([])
    if len(images.shape) not in (2, 3):
        raise ProcessorInputError(
            f"an image is [C, H, W], [H, W, C] or [H, W], a batch [B, C, H, W]; got shape {list(images.shape)}"
        )
    return [images]


def _channels_last(shape: tuple, input_data_format: Optional[str]) -> bool:
    if input_data_format is not None:
        if input_data_format not in ("channels_first", "channels_last"):
            raise ProcessorInputError(
                f"input_data_format is 'channels_first' or 'channels_last', not {input_data_format!r}"
            )
        return input_data_format == "channels_last"
    if shape[0] in CHANNEL_COUNTS:
        return False
    if shape[-1] in CHANNEL_COUNTS:
        return True
    raise ProcessorInputError(
        f"cannot find the channels of an image of shape {list(shape)}: images have 1, 3 or 4 channels, first or last"
    )


def _over_white(x: Any, framework: str, dtype: str, channels_last: bool) -> Any:
    """RGBA -> RGB over a white background, in the input's dtype, with torchvision's
    conversions (uint8 -> float: * (1/255); float -> uint8: * 255.999, truncated)."""
    if framework == "torch":
        f = x.movedim(-1 if channels_last else 0, 0).float()
        if dtype == "uint8":
            f = f * (1.0 / 255)
        rgb = f[:3] * f[3:] + (1 - f[3:])
        rgb = (rgb * (256.0 - 1e-3)).to(x.dtype) if dtype == "uint8" else rgb.to(x.dtype)
        return rgb.movedim(0, -1) if channels_last else rgb
    if framework not in ("numpy", "cupy"):
        x = np.asarray(x)
    xp = np if isinstance(x, np.ndarray) else __import__("cupy")
    f = xp.moveaxis(x, -1 if channels_last else 0, 0).astype(np.float32)
    if dtype == "uint8":
        f = f * np.float32(1.0 / 255)
    rgb = f[:3] * f[3:] + (np.float32(1) - f[3:])
    rgb = (rgb * np.float32(256.0 - 1e-3)).astype(np.uint8) if dtype == "uint8" else rgb.astype(x.dtype)
    return xp.ascontiguousarray(xp.moveaxis(rgb, 0, -1) if channels_last else rgb)


def _expand_gray(x: Any, framework: str, channels_last: bool) -> Any:
    """[1, H, W] / [H, W, 1] read as three equal channels, as a view with stride 0."""
    shape = (x.shape[0], x.shape[1], 3) if channels_last else (3, x.shape[1], x.shape[2])
    if framework == "torch":
        return x.expand(*shape)
    if framework == "cupy":
        import cupy

        return cupy.broadcast_to(x, shape)
    if framework == "jax":
        import jax.numpy as jnp

        return jnp.broadcast_to(x, shape)
    return np.broadcast_to(x, shape)


_TORCH_DTYPES: Dict[Any, str] = {}


def _torch_rgb_spec(image: Any) -> Optional[ImageSpec]:
    """The spec of a torch [3, H, W] image of a supported dtype, read with the fewest
    attribute lookups (the general path costs microseconds per image, which a list of
    images pays per call); None for anything else, which takes the general path."""
    if type(image).__module__ != "torch":
        return None
    shape = image.shape
    if len(shape) != 3 or shape[0] != 3 or not shape[1] or not shape[2]:
        return None
    if not _TORCH_DTYPES:
        import torch

        _TORCH_DTYPES.update(
            {torch.uint8: "uint8", torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32"}
        )
    dtype = _TORCH_DTYPES.get(image.dtype)
    if dtype is None:
        return None
    sc, sy, sx = image.stride()
    device = image.device
    index = (device.index or 0) if device.type == "cuda" else 0
    return ImageSpec(
        "torch",
        device.type,
        index,
        dtype,
        1,
        3,
        shape[1],
        shape[2],
        (0, sc, sy, sx),
        image.data_ptr(),
        False,
        False,
        image,
    )


def image_specs(
    images: Any,
    do_convert_rgb: bool = True,
    input_data_format: Optional[str] = None,
    pending: Optional[PendingCall] = None,
) -> List[ImageSpec]:
    """The specs of every image of `images` (as flat_images finds them). A list of torch
    CUDA [3, H, W] tensors of one shape, dtype, device and strides, or a [B, 3, H, W] CUDA
    batch, is one spec of B images: its checks and pointers cost a fraction of what a spec
    per image costs. `pending`: cached_call's for these images, whose layout it read (so
    the list is not walked again)."""
    if input_data_format is None:
        spec = _torch_cuda_batch_spec(images, pending)
        if spec is not None:
            return [spec]
    return [rgb_spec(image, do_convert_rgb, input_data_format) for image in flat_images(images)]


def torch_cuda_layout(images: Any, mixed: bool = False) -> Optional[Tuple[Any, List[int]]]:
    """(layout, pointers) of torch CUDA images: a list of tensors of one type, shape, dtype,
    device and strides, or one tensor (an image or a [B, ...] batch). The layout (count,
    shape, dtype, device, strides) is all a call's work depends on; the pointers are each
    image's element 0. None for anything else. (Count 0: one
    tensor, whose shape says how many images it holds.) `mixed`: a list whose images differ
    in shape or strides (one type, dtype and device) has a layout too, with each image's
    shape and strides in turn (several cameras' frames, called again and again)."""
    if isinstance(images, (list, tuple)):
        if not images:
            return None
        head = images[0]
        kind = type(head)
        if kind.__module__ != "torch":
            return None
        shape, dtype, device, strides = head.shape, head.dtype, head.device, head.stride()
        if device.type != "cuda":
            return None
        pointers = [head.data_ptr()]
        shapes, all_strides = [shape], [strides]
        uniform = True
        for image in images[1:]:
            if type(image) is not kind or image.dtype is not dtype or image.device != device:
                return None
            image_shape, image_strides = image.shape, image.stride()
            if image_shape != shape or image_strides != strides:
                if not mixed:
                    return None
                uniform = False
            shapes.append(image_shape)
            all_strides.append(image_strides)
            pointers.append(image.data_ptr())
        if uniform:
            return (len(pointers), shape, dtype, device, strides), pointers
        return (len(pointers), tuple(shapes), dtype, device, tuple(all_strides)), pointers
    if type(images).__module__ != "torch" or not images.is_cuda:
        return None
    shape, strides = images.shape, images.stride()
    ptr = images.data_ptr()
    if len(shape) != 4:
        return (0, shape, images.dtype, images.device, strides), [ptr]
    step = strides[0] * images.element_size()
    return (0, shape, images.dtype, images.device, strides), [ptr + b * step for b in range(shape[0])]


def _torch_cuda_batch_spec(images: Any, pending: Optional[PendingCall] = None) -> Optional[ImageSpec]:
    if isinstance(images, (list, tuple)):
        if pending is not None:
            count, shape = pending.layout[:2]
            pointers = pending.pointers if count and isinstance(shape[0], int) else None  # not a mixed layout
        else:
            layout = torch_cuda_layout(images)
            pointers = layout[1] if layout is not None else None
        first = _torch_rgb_spec(images[0]) if pointers is not None else None
        if first is None or len(images) == 1:
            return first
        return ImageSpec(
            "torch",
            "cuda",
            first.device_index,
            first.dtype,
            len(images),
            3,
            first.height,
            first.width,
            first.strides,
            first.ptr,
            False,
            False,
            images,
            pointers,
        )
    if type(images).__module__ != "torch" or images.ndim != 4 or images.shape[1] != 3 or not images.is_cuda:
        return None
    first = _torch_rgb_spec(images[0]) if images.shape[0] else None
    if first is None:
        return None
    return ImageSpec(
        "torch",
        "cuda",
        first.device_index,
        first.dtype,
        images.shape[0],
        3,
        first.height,
        first.width,
        (images.stride(0),) + first.strides[1:],
        first.ptr,
        True,
        False,
        images,
    )


def rgb_spec(image: Any, do_convert_rgb: bool = True, input_data_format: Optional[str] = None) -> ImageSpec:
    """One image as a 3-channel ImageSpec (the engine's view of a tensor), read in place
    where it can be (RGB; grayscale through a stride-0 view) and composited where it must
    be (RGBA)."""
    if input_data_format is None:
        spec = _torch_rgb_spec(image)
        if spec is not None:
            return spec
    framework = _tensors.framework_of(image)
    if framework == "numpy" and not isinstance(image, np.ndarray):
        image = np.from_dlpack(image)
    shape = tuple(image.shape)
    if len(shape) == 2:
        image = image[None]
        shape = (1,) + shape
        channels_last = False
    else:
        channels_last = _channels_last(shape, input_data_format)
    if 0 in shape:
        raise ProcessorInputError(f"an image of shape {list(shape)} is empty")
    channels = shape[-1] if channels_last else shape[0]
    dtype = str(image.dtype).replace("torch.", "")
    if dtype not in _tensors.DTYPES:
        raise ProcessorInputError(f"images are uint8, float16, bfloat16 or float32, not {dtype}")
    if channels not in CHANNEL_COUNTS:
        raise ProcessorInputError(f"images have 1, 3 or 4 channels, not {channels} (shape {list(shape)})")
    if channels != 3:
        if not do_convert_rgb:
            raise ProcessorInputError(
                f"a {channels}-channel image with do_convert_rgb=False: the models take RGB; "
                "pass RGB images or leave do_convert_rgb on"
            )
        image = (
            _expand_gray(image, framework, channels_last)
            if channels == 1
            else _over_white(image, framework, dtype, channels_last)
        )
    return _tensors.image_spec(image, channels_last)


def cropped(spec: ImageSpec, top: int, left: int, height: int, width: int) -> ImageSpec:
    """The window (top, left, height, width) of every image of `spec`, as a view (no copy):
    its pointers moved to the window's first pixel, its sides the window's. A host image's
    array is sliced too, for the host readers."""
    if top < 0 or left < 0 or height < 1 or width < 1 or top + height > spec.height or left + width > spec.width:
        raise ProcessorInputError(
            f"the crop {height}x{width} at ({top}, {left}) is outside the {spec.height}x{spec.width} image"
        )
    step = (top * spec.strides[2] + left * spec.strides[3]) * _tensors.ITEMSIZE[spec.dtype]
    array = spec.array
    if spec.device != "cuda":
        rows, columns = slice(top, top + height), slice(left, left + width)
        array = array[..., rows, columns, :] if spec.channels_last else array[..., rows, columns]
    return dataclasses.replace(
        spec,
        height=height,
        width=width,
        ptr=spec.ptr + step,
        pointers=[p + step for p in spec.pointers] if spec.pointers is not None else None,
        array=array,
    )
