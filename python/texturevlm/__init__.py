"""texturevlm: patch tokens for vision-language models from GPU texture hardware.

Tensors in, tensors out (torch, NumPy, CuPy, JAX through DLPack), with no copies: CUDA
tensors are read in place and sampled by the texture unit on the current stream; host
arrays go through Vulkan compute (any GPU, or lavapipe) or the CPU reference.

    import texturevlm as tv
    pyramid = tv.TexturePyramid(image)                 # [C, H, W] or [B, C, H, W]
    patches, meta = pyramid.sample_foveated((0.5, 0.5), num_patches=273)

Errors are texturevlm.Error (a RuntimeError) with a message that says what to do."""

# NumPy before the extension: with torch 2.11 and Python 3.12, importing
# _core first and torch after it crashed inside torch's import (python -m texturevlm.bench);
# with NumPy loaded first the same imports succeed. A likely cause, not proven: _core links
# the CUDA runtime statically, and libcudart_static.a brings a 4 KiB, page-aligned block of
# static TLS (.tbss); loaded by dlopen before torch, it changes what is left of glibc's
# static TLS surplus for the libraries torch loads next (the import-order crashes of
# pytorch/pytorch#2083 and its kin).
import numpy as _numpy  # noqa: F401  (imported for its side effect: the load order above)

from . import _core, fields, glimpse, layouts, overlay, video
from ._core import Error, cuda_built
from ._devices import Device, devices, unavailable
from .chart import test_chart
from .differentiable import check_gradients, sample_points
from .features import FeaturePyramid
from .functional import clear_cache, generate_mipmaps, sample_patches
from .layouts import Layout
from .pyramid import Patches, TexturePyramid

__all__ = [
    "Error",
    "Device",
    "FeaturePyramid",
    "check_gradients",
    "fields",
    "Layout",
    "Patches",
    "TexturePyramid",
    "clear_cache",
    "cuda_built",
    "devices",
    "generate_mipmaps",
    "glimpse",
    "layouts",
    "overlay",
    "sample_patches",
    "sample_points",
    "test_chart",
    "unavailable",
    "video",
]
__version__: str = _core.__version__  # CMakeLists.txt's project(VERSION), as tvlm --version


def _release_at_exit() -> None:
    """Frees what texturevlm keeps (layouts' device copies, CUDA textures, Vulkan contexts)
    while the interpreter, CUDA and Vulkan are all still alive, in that order."""
    import gc

    from . import _devices, functional, pyramid

    pyramid._layout_cache.clear()
    functional.clear_cache()
    # Engine objects held only by reference cycles are freed at the next full collection,
    # which at exit comes after the extension is torn down: collect them now.
    gc.collect()
    _devices._vulkan.clear()


import atexit as _atexit  # noqa: E402

_atexit.register(_release_at_exit)
