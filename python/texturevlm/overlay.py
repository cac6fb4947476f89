"""Boxes with labels, points, lines, curved links and track trails drawn over RGBA8 or
RGBA16F frames, in place (docs/overlay.md).

    import texturevlm as tv
    scene = {"boxes": [{"x": 400, "y": 300, "width": 300, "height": 200, "radius": 12,
                        "stroke": [255, 80, 80], "fill": [255, 80, 80, 60]}],
             "points": [{"x": 300, "y": 250, "track": 1}, {"x": 520, "y": 380, "track": 2}]}
    tv.overlay.draw(frame, scene, knn=3)        # frame [H, W, 4] uint8 or float16: a torch CUDA tensor or a host array

A scene is the JSON schema of `tvlm overlay` as a dict (or its JSON text). CUDA tensors are
drawn by the CUDA kernels on torch's current stream, with no copy and no host wait; host
arrays by Vulkan compute (backend 'vulkan', any GPU or lavapipe) or the CPU reference
('cpu'). `Overlay` keeps what persists between frames: the KNN graph (so links do not
flicker) and the GPU buffers. uint8 frames are RGBA8 (`srgb=True`: sRGB bytes, blended in
linear light); float16 frames hold linear light and blend as stored."""
from __future__ import annotations

import json
from typing import Any, Dict, Optional, Union

from . import _core, _devices
from ._core import Error

__all__ = ["Overlay", "draw"]

Scene = Union[Dict[str, Any], str]


def _scene_json(scene: Scene) -> str:
    if isinstance(scene, str):
        return scene
    if not isinstance(scene, dict):
        raise Error(f"a scene is a dict (the JSON schema of tvlm overlay) or its JSON text, not {type(scene).__name__}")
    try:
        return json.dumps(scene, allow_nan=False)
    except ValueError as e:
        raise Error("the scene has a NaN or infinite number: give finite pixels") from e
    except TypeError as e:
        raise Error(f"the scene cannot be written as JSON: {e}") from e


def _cuda_frame(frame: Any) -> bool:
    return hasattr(frame, "is_cuda") and bool(frame.is_cuda)


class Overlay:
    """Draws scenes over frames of one stream of video. `knn=k` links the scene's points
    (each with a "track" id) to their k nearest with curved links, keeping links while
    their ends stay within rank k + `hysteresis` from frame to frame."""

    def __init__(self, knn: Optional[int] = None, hysteresis: int = 2, link_width: float = 2.0,
                 backend: str = "auto", vulkan_device: str = "") -> None:
        if backend not in ("auto", "vulkan", "cpu"):
            raise Error(f"backend must be 'auto', 'vulkan' or 'cpu' (CUDA tensors always draw with CUDA), not {backend!r}")
        if knn is not None and (not isinstance(knn, int) or knn < 1):
            raise Error(f"knn must be a positive number of neighbours or None, not {knn!r}")
        self._links = _core.KnnLinks(knn, hysteresis, float(link_width)) if knn else None
        self.backend = backend
        self.vulkan_device = vulkan_device
        self._cuda: Dict[int, Any] = {}
        self.links = 0  #: KNN links drawn by the last draw()

    def draw(self, frame: Any, scene: Scene, srgb: bool = False, stream: Any = None) -> Any:
        """Composites `scene` over `frame` ([H, W, 4] uint8 or float16, rows contiguous) in
        place and returns it. `srgb`: uint8 bytes are sRGB and blend in linear light."""
        shape = tuple(frame.shape)
        dtype = str(getattr(frame, "dtype", "")).replace("torch.", "")
        if len(shape) != 3 or shape[2] != 4 or dtype not in ("uint8", "float16"):
            raise Error(f"overlays draw on [H, W, 4] uint8 (RGBA8) or float16 (RGBA16F) frames, not {list(shape)} "
                        f"{dtype or type(frame).__name__}")
        height, width = int(shape[0]), int(shape[1])
        shapes = _core.overlay_shapes(_scene_json(scene), width, height, self._links)
        self.links = shapes.links
        if _cuda_frame(frame):
            if frame.stride(2) != 1 or frame.stride(1) != 4:
                raise Error("a CUDA frame's pixels must be contiguous RGBA within each row (frame.contiguous())")
            from ._tensors import cuda_stream
            index = frame.device.index or 0
            cuda = self._cuda.get(index)
            if cuda is None:
                if not _core.cuda_built():
                    raise Error("this texturevlm was built without CUDA: draw on a host array instead")
                cuda = self._cuda[index] = _core.CudaOverlay(index)
            cuda.draw(index, shapes, frame.data_ptr(), frame.stride(0) * frame.element_size(), dtype, bool(srgb),
                      cuda_stream("torch", index, stream))
            return frame
        import numpy as np
        array = frame.numpy() if hasattr(frame, "numpy") else frame
        if not isinstance(array, np.ndarray) or not array.flags.c_contiguous or not array.flags.writeable:
            raise Error("a host frame must be a writable, C-contiguous NumPy array (or a CPU tensor sharing one)")
        use_vulkan = self.backend == "vulkan" or (self.backend == "auto" and not _devices.unavailable()["vulkan"])
        if use_vulkan:
            _core.overlay_draw_vulkan(_devices.vulkan_device(self.vulkan_device), shapes, array, bool(srgb))
        else:
            _core.overlay_draw_cpu(shapes, array, bool(srgb))
        return frame


def draw(frame: Any, scene: Scene, knn: Optional[int] = None, srgb: bool = False, backend: str = "auto",
         stream: Any = None) -> Any:
    """Composites `scene` over `frame` ([H, W, 4] uint8 or float16) in place and returns it: one frame,
    no state kept (an `Overlay` keeps KNN links steady over a video)."""
    return Overlay(knn=knn, backend=backend).draw(frame, scene, srgb=srgb, stream=stream)
