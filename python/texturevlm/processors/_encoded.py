"""Encoded images in: PNG and JPEG files or their bytes (bytes, bytearray, memoryview, a path
as str or os.PathLike), alone or in (nested) lists, decoded before the processor reads them.

- On the host (no `device`, or device='cpu'): texturevlm's decoders (libjpeg-turbo and
  libpng, as PIL's), every image of the call in parallel, into uint8 [H, W, 3] arrays;
  images with transparency are [H, W, 4] and composited over white as HF does.
- device='cuda' (or 'cuda:N', a torch.device): JPEGs are decoded on that GPU by nvImageCodec
  where it is installed (`pip install nvidia-nvimgcodec-cu13`, or `texturevlm[jpeg]`),
  on the current torch stream, into CUDA memory the processor reads with no host copy.
  PNGs, and every image where nvImageCodec is absent, are decoded on the host and copied.

Images that are arrays already (or PIL images) are copied to `device` where given and not
there, as HF's processors do: host images become torch tensors on the GPU, CUDA tensors come
to the host; the processor then runs where they are, with HF's values for that device.

Pixels are as stored: EXIF orientation is not applied (PIL's Image.open does not apply it
either). Every image's structure is checked before any is decoded, and a missing, corrupt
or truncated image raises ProcessorInputError naming it (its path, or images[i]) and why;
nothing is returned for the others."""

from __future__ import annotations

import os
import threading
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .. import _tensors
from ._rules import ProcessorInputError

ENCODED_TYPES = (bytes, bytearray, memoryview, str, os.PathLike)


#: Types that are never encoded images, seen once: every call asks of each of its images,
#: and isinstance against os.PathLike (an ABC) costs far more than a set lookup.
_NOT_ENCODED: set = set()


def has_encoded(images: Any) -> bool:
    """Whether `images` is, or a (nested) list of it holds, an encoded image."""
    kind = type(images)
    if kind is list or kind is tuple:
        for item in images:
            if type(item) not in _NOT_ENCODED and has_encoded(item):
                return True
        return False
    if kind in _NOT_ENCODED:
        return False
    if isinstance(images, ENCODED_TYPES):
        return True
    if isinstance(images, (list, tuple)):  # a subclass of list or tuple
        return any(has_encoded(item) for item in images)
    _NOT_ENCODED.add(kind)
    return False


def _core() -> Any:
    from .. import _core

    return _core


def _leaves(images: Any, found: List[Any]) -> Any:
    """`images` with each encoded leaf replaced by its index in `found` (as a _Slot)."""
    if isinstance(images, ENCODED_TYPES):
        found.append(images)
        return _Slot(len(found) - 1)
    if isinstance(images, (list, tuple)):
        return [_leaves(item, found) for item in images]
    return images


class _Slot:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def _filled(structure: Any, decoded: List[Any]) -> Any:
    if isinstance(structure, _Slot):
        return decoded[structure.index]
    if isinstance(structure, list):
        return [_filled(item, decoded) for item in structure]
    return structure


def _source(item: Any, position: int) -> Tuple[Any, str]:
    """(bytes-like or path str, the name its errors use)."""
    if isinstance(item, (str, os.PathLike)):
        path = os.fspath(item)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if path.startswith(("http://", "https://")):
            raise ProcessorInputError(
                f"images[{position}] is a URL ({path}): texturevlm does not fetch images; download it and pass "
                "its bytes or path"
            )
        return path, path
    return item, f"images[{position}]"


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as e:
        raise ProcessorInputError(f"cannot read image '{path}': {e.strerror or e}") from None


def _device_of(device: Any) -> Tuple[str, int]:
    """('cpu', 0) or ('cuda', index) for a device given as HF's processors take it."""
    text = str(device)
    if text == "cpu":
        return "cpu", 0
    if text == "cuda" or text.startswith("cuda:"):
        try:
            import torch
        except ImportError:
            raise ProcessorInputError(f"device={device!r} needs PyTorch with CUDA (pip install torch)") from None

        if not torch.cuda.is_available():
            raise ProcessorInputError(f"device={device!r}: no CUDA device is visible to torch here")
        index = int(text[5:]) if text.startswith("cuda:") else torch.cuda.current_device()
        if not 0 <= index < torch.cuda.device_count():
            raise ProcessorInputError(
                f"device={device!r}: torch sees {torch.cuda.device_count()} CUDA device(s); pass one of them"
            )
        return "cuda", index
    raise ProcessorInputError(f"device={device!r}: texturevlm's processors take 'cpu' or 'cuda' / 'cuda:N'")


def _moved(images: Any, device: Tuple[str, int], given: Any) -> Any:
    """`images` with each image not on `device` copied there, as HF's processors do with
    `device`: torch tensors by torch, host images (NumPy, PIL, JAX on the host) as torch
    tensors of the same shape. Lists keep their nesting (a sample's images stay together)."""
    if isinstance(images, list):
        return [_moved(item, device, given) for item in images]
    if isinstance(images, _Slot):
        return images
    framework = _tensors.framework_of(images) if hasattr(images, "shape") else "numpy"  # else a PIL image
    kind, index = _tensors.device_of(images, framework)
    if (kind, index) == device:  # a host image's index is 0, as device's for 'cpu'
        return images
    import torch

    target = "cpu" if device[0] == "cpu" else f"cuda:{device[1]}"
    if isinstance(images, torch.Tensor):
        return images.to(target)
    if kind != "cpu":
        raise ProcessorInputError(
            f"device={given!r} with a {type(images).__name__} on {getattr(images, 'device', 'a GPU')}: texturevlm "
            "moves torch tensors and host images to device=; move this one there first, or leave device= out "
            "to process it where it is"
        )
    from ._images import flat_images

    if not hasattr(images, "shape"):  # a PIL image, as the processor would read it
        images = flat_images(images)[0]
    return torch.from_numpy(np.ascontiguousarray(np.asarray(images))).to(target)


def decode_encoded(images: Any, device: Any = None) -> Any:
    """`images` with each encoded image decoded (see the module's docstring), on `device`."""
    where = _device_of(device) if device is not None else ("cpu", 0)
    found: List[Any] = []
    structure = _leaves(images, found)
    if device is not None:
        structure = _moved(structure, where, device)
    if not found:
        return structure if device is not None else images
    sources = [_source(item, i) for i, item in enumerate(found)]
    if where[0] == "cpu":
        try:
            decoded = _core().decode_images([s for s, _ in sources], [n for _, n in sources])
        except RuntimeError as e:
            raise ProcessorInputError(str(e)) from None
    else:
        decoded = _decode_on_gpu(sources, where[1])
    return decoded[0] if isinstance(structure, _Slot) else _filled(structure, decoded)


#: nvImageCodec's decoders, one per thread and device: a serving stack's threads decode at
#: once, and a decoder's state (its streams, buffers) is not documented as shareable.
_decoders = threading.local()


def nvimgcodec_module() -> Optional[Any]:
    """nvImageCodec's Python module where installed, else None."""
    try:
        from nvidia import nvimgcodec
    except ImportError:
        return None
    return nvimgcodec


def _gpu_decoder(index: int) -> Optional[Any]:
    """This thread's nvImageCodec decoder for device `index` (None without nvImageCodec)."""
    mine: Dict[int, Any] = _decoders.__dict__.setdefault("by_device", {})
    decoder = mine.get(index)
    if decoder is None:
        nvimgcodec = nvimgcodec_module()
        if nvimgcodec is None:
            return None
        # libjpeg's (and so Pillow's) chroma upsampling, not nvImageCodec's default nearest.
        decoder = mine[index] = nvimgcodec.Decoder(device_id=index, options=":fancy_upsampling=1")
    return decoder


def _decode_on_gpu(sources: List[Tuple[Any, str]], index: int) -> List[Any]:
    import torch

    data = [bytes(_read(s)) if isinstance(s, str) else bytes(s) for s, _ in sources]
    names = [n for _, n in sources]
    try:
        formats = _core().check_encoded_images(data, names)
    except RuntimeError as e:
        raise ProcessorInputError(str(e)) from None
    decoded: List[Any] = [None] * len(data)
    jpegs = [i for i, f in enumerate(formats) if f == "jpeg"]
    decoder = _gpu_decoder(index) if jpegs else None
    stream = torch.cuda.current_stream(index)
    if decoder is not None:
        nvimgcodec = nvimgcodec_module()
        params = nvimgcodec.DecodeParams(apply_exif_orientation=False)
        images = decoder.decode([data[i] for i in jpegs], params=params, cuda_stream=stream.cuda_stream)
        for i, image in zip(jpegs, images):
            if image is not None:
                tensor = torch.as_tensor(image, device=f"cuda:{index}")
                decoded[i] = tensor if tensor.is_contiguous() else tensor.contiguous()
    host = [i for i, d in enumerate(decoded) if d is None]
    if host:
        # PNGs, JPEGs nvImageCodec declined (CMYK, lossless, ...) or all of them without it;
        # a corrupt image raises here with libjpeg's or libpng's reason.
        try:
            arrays = _core().decode_images([data[i] for i in host], [names[i] for i in host])
        except RuntimeError as e:
            raise ProcessorInputError(str(e)) from None
        with torch.cuda.stream(stream):
            for i, array in zip(host, arrays):
                decoded[i] = torch.from_numpy(array).to(f"cuda:{index}", non_blocking=False)
    return decoded
