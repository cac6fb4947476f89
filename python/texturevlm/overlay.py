"""Boxes with labels, points, lines, curved links and track trails drawn over RGBA8 or
RGBA16F frames, in place (docs/overlay.md).

    import texturevlm as tv
    scene = {"boxes": [{"x": 400, "y": 300, "width": 300, "height": 200, "radius": 12,
                        "stroke": [255, 80, 80], "fill": [255, 80, 80, 60]}],
             "points": [{"x": 300, "y": 250, "track": 1}, {"x": 520, "y": 380, "track": 2}]}
    tv.overlay.draw(frame, scene, knn=3)        # frame [H, W, 4] uint8 or float16: a torch CUDA tensor or a host array

Detections can come as arrays instead, with no JSON on the way (as torchvision's
`draw_bounding_boxes`):

    tv.overlay.draw_bounding_boxes(frame, boxes, labels=["person 0.97", "car 0.81"], fill=True)

A scene is the JSON schema of `tvlm overlay` as a dict (or its JSON text; docs/cli.md, "The
scene schema"): pixels, origin top-left; a box's `x`, `y` is its centre (a detector's corners
x1, y1, x2, y2 give x = (x1 + x2) / 2, width = x2 - x1), where `draw_bounding_boxes` takes
the corners themselves; a label's `x`, `y` is its top-left. CUDA tensors are
drawn by the CUDA kernels on torch's current stream, with no copy and no host wait; host
arrays by Vulkan compute (backend 'vulkan', any GPU or lavapipe) or the CPU reference
('cpu'). `Overlay` keeps what persists between frames: the KNN graph (so links do not
flicker) and the GPU buffers. uint8 frames are RGBA8 (`srgb=True`: sRGB bytes, blended in
linear light); float16 frames hold linear light and blend as stored."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core, _devices
from ._checks import whole
from ._core import Error

__all__ = ["Overlay", "draw", "draw_bounding_boxes"]

Scene = Union[Dict[str, Any], str]
Colors = Any  # one (r, g, b[, a]) or one per item, bytes: a tuple, a list of tuples or an [N, 3 | 4] array


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
    their ends stay within rank k + `hysteresis` from frame to frame. The graph lives where
    the frames are: on the frame's CUDA device for CUDA tensors (no host sync), on the
    host for host arrays."""

    def __init__(
        self,
        knn: Optional[int] = None,
        hysteresis: int = 2,
        link_width: float = 2.0,
        backend: str = "auto",
        vulkan_device: str = "",
    ) -> None:
        if backend not in ("auto", "vulkan", "cpu"):
            raise Error(
                f"backend must be 'auto', 'vulkan' or 'cpu' (CUDA tensors always draw with CUDA), not {backend!r}"
            )
        if knn is not None:
            knn = whole(knn, "knn", 1, what=" neighbours per point (or None)")
        hysteresis = whole(hysteresis, "hysteresis", 0)
        self._knn = (knn, hysteresis, float(link_width)) if knn else None
        self._links = _core.KnnLinks(knn, hysteresis, float(link_width)) if knn else None
        self.backend = backend
        self.vulkan_device = vulkan_device
        self._cuda: Dict[int, Any] = {}
        self._cuda_links: Dict[int, Any] = {}
        self._links_drawn: Callable[[], int] = lambda: 0

    @property
    def links(self) -> int:
        """KNN links drawn by the last draw(). For a CUDA frame the graph was made on the
        device: reading this waits for it."""
        return self._links_drawn()

    def draw(self, frame: Any, scene: Scene, srgb: bool = False, stream: Any = None, inplace: bool = True) -> Any:
        """Composites `scene` over `frame` ([H, W, 4] uint8 or float16, rows contiguous) and
        returns it: in place, or a new tensor or array (`inplace=False`; the frame is left
        as it was). `srgb`: uint8 bytes are sRGB and blend in linear light."""
        if isinstance(scene, dict):  # read in place by the engine: no JSON text in between
            make_shapes = lambda w, h, links, on_device: _core.overlay_shapes_of_scene(scene, w, h, links, on_device)  # noqa: E731
        else:
            json_text = _scene_json(scene)
            make_shapes = lambda w, h, links, on_device: _core.overlay_shapes(json_text, w, h, links, on_device)  # noqa: E731
        return self._draw(frame, make_shapes, srgb, stream, inplace)

    def draw_bounding_boxes(
        self,
        frame: Any,
        boxes: Any,
        labels: Optional[Sequence[str]] = None,
        colors: Colors = None,
        fill: Union[bool, int] = False,
        width: float = 3.0,
        radius: float = 0.0,
        font_size: float = 20.0,
        points: Any = None,
        tracks: Any = None,
        point_colors: Colors = None,
        point_radius: float = 5.0,
        srgb: bool = False,
        stream: Any = None,
        inplace: bool = True,
    ) -> Any:
        """Detections from arrays, as torchvision's `draw_bounding_boxes`: `boxes` [N, 4] as
        (xmin, ymin, xmax, ymax) pixels, `labels` one string per box (over its top edge, on
        the box's colour), `colors` one (r, g, b[, a]) for all or [N, 3 | 4] bytes, `fill`
        True (opacity 60) or an opacity 0-255. `points` [M, 2] with `tracks` [M] ids (default
        0..M-1) are drawn as discs and, with `knn`, linked. Arrays may be NumPy or tensors
        (CUDA ones are copied to the host, which waits for them). No JSON: the shapes are
        built straight from the arrays."""
        box_array = _host_floats(boxes, "boxes", 4)
        point_array = _host_floats(points if points is not None else np.zeros((0, 2), np.float32), "points", 2)
        count, point_count = box_array.shape[0], point_array.shape[0]
        box_colors = _colors(colors, count, (255, 80, 80, 255), "colors")
        dots = _colors(point_colors, point_count, (255, 255, 0, 255), "point_colors")
        track_ids = _tracks(tracks, point_count)
        names = [] if labels is None else [str(t) for t in labels]
        opacity = 60 if fill is True else int(fill)
        if not 0 <= opacity <= 255:
            raise Error(f"fill is True, False or an opacity 0-255, not {fill!r}")
        style = _core.OverlayBoxStyle(float(width), float(radius), float(font_size), float(point_radius), opacity)
        return self._draw(
            frame,
            lambda w, h, links, on_device: _core.overlay_shapes_of_arrays(
                box_array, box_colors, names, point_array, dots, track_ids, style, w, h, links, on_device
            ),
            srgb,
            stream,
            inplace,
        )

    def _draw(
        self, frame: Any, make_shapes: Callable[[int, int, Any, bool], Any], srgb: bool, stream: Any, inplace: bool
    ) -> Any:
        shape = tuple(frame.shape)
        dtype = str(getattr(frame, "dtype", "")).replace("torch.", "")
        if len(shape) != 3 or shape[2] != 4 or dtype not in ("uint8", "float16"):
            raise Error(
                f"overlays draw on [H, W, 4] uint8 (RGBA8) or float16 (RGBA16F) frames, not {list(shape)} "
                f"{dtype or type(frame).__name__}"
            )
        height, width = int(shape[0]), int(shape[1])
        on_device = _cuda_frame(frame) and self._knn is not None  # the links made by the frame's GPU
        # Before any copy: a bad scene changes nothing.
        shapes = make_shapes(width, height, None if on_device else self._links, on_device)
        if not on_device:
            self._links_drawn = lambda count=shapes.links: count
        if not inplace:
            frame = frame.clone() if hasattr(frame, "clone") else np.array(frame, copy=True)
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
            links = None
            if on_device:
                links = self._cuda_links.get(index)
                if links is None:
                    links = self._cuda_links[index] = _core.CudaKnnLinks(index, *self._knn)
                self._links_drawn = links.count
            cuda.draw(
                index,
                shapes,
                frame.data_ptr(),
                frame.stride(0) * frame.element_size(),
                dtype,
                bool(srgb),
                cuda_stream("torch", index, stream),
                links,
            )
            return frame
        array = frame.numpy() if hasattr(frame, "numpy") else frame
        if not isinstance(array, np.ndarray) or not array.flags.c_contiguous or not array.flags.writeable:
            raise Error("a host frame must be a writable, C-contiguous NumPy array (or a CPU tensor sharing one)")
        use_vulkan = self.backend == "vulkan" or (self.backend == "auto" and not _devices.unavailable()["vulkan"])
        if use_vulkan:
            _core.overlay_draw_vulkan(_devices.vulkan_device(self.vulkan_device), shapes, array, bool(srgb))
        else:
            _core.overlay_draw_cpu(shapes, array, bool(srgb))
        return frame


def draw(
    frame: Any,
    scene: Scene,
    knn: Optional[int] = None,
    srgb: bool = False,
    backend: str = "auto",
    stream: Any = None,
    inplace: bool = True,
) -> Any:
    """Composites `scene` over `frame` ([H, W, 4] uint8 or float16) and returns it (in place unless
    `inplace=False`): one frame, no state kept (an `Overlay` keeps KNN links steady over a video)."""
    return Overlay(knn=knn, backend=backend).draw(frame, scene, srgb=srgb, stream=stream, inplace=inplace)


def draw_bounding_boxes(
    frame: Any,
    boxes: Any,
    labels: Optional[Sequence[str]] = None,
    colors: Colors = None,
    fill: Union[bool, int] = False,
    width: float = 3.0,
    backend: str = "auto",
    inplace: bool = True,
    **style: Any,
) -> Any:
    """torchvision's `draw_bounding_boxes` for RGBA frames on any backend: boxes [N, 4] (xmin,
    ymin, xmax, ymax), one label per box, colours, fill; `Overlay.draw_bounding_boxes` has the
    rest of the style and the points. One frame, no state kept."""
    return Overlay(backend=backend).draw_bounding_boxes(
        frame, boxes, labels=labels, colors=colors, fill=fill, width=width, inplace=inplace, **style
    )


def _host_floats(values: Any, name: str, columns: int) -> "np.ndarray":
    """values as a C-contiguous float32 [N, columns] host array (tensors detached and copied)."""
    if hasattr(values, "detach"):
        values = values.detach().to("cpu")
    array = np.ascontiguousarray(np.asarray(values, dtype=np.float32))
    if array.size == 0:
        array = array.reshape(0, columns)
    if array.ndim != 2 or array.shape[1] != columns:
        raise Error(f"{name} are [N, {columns}], not {list(array.shape)}")
    return array


def _colors(colors: Colors, count: int, default: Tuple[int, ...], name: str) -> "np.ndarray":
    """One colour or one per item, (r, g, b) or (r, g, b, a) bytes, as [count, 4] uint8."""
    one = default if colors is None else colors
    if isinstance(one, tuple) and len(one) in (3, 4) and all(type(v) is int and 0 <= v <= 255 for v in one):
        out = np.empty((count, 4), np.uint8)  # one colour for all: no array checks
        out[:] = one if len(one) == 4 else (*one, 255)
        return out
    values = np.asarray(one)
    if (
        values.dtype.kind not in "iu"
        or values.ndim not in (1, 2)
        or values.shape[-1] not in (3, 4)
        or (values.ndim == 2 and values.shape[0] not in (1, count))
    ):
        raise Error(
            f"{name} is one (r, g, b[, a]) or one per item, [{count}, 3 | 4], of integer bytes; not "
            f"{values.dtype} {list(values.shape)}"
        )
    if values.min(initial=0) < 0 or values.max(initial=0) > 255:
        raise Error(f"{name} are bytes 0-255")
    values = values.reshape(-1, values.shape[-1])
    if values.shape[1] == 3:
        values = np.concatenate([values, np.full((values.shape[0], 1), 255)], axis=1)
    return np.ascontiguousarray(np.broadcast_to(values, (count, 4)), dtype=np.uint8)


def _tracks(tracks: Any, count: int) -> "np.ndarray":
    """Track ids [count] as uint64 (default 0..count-1)."""
    if tracks is None:
        return np.arange(count, dtype=np.uint64)
    if hasattr(tracks, "detach"):
        tracks = tracks.detach().to("cpu")
    ids = np.asarray(tracks)
    if ids.dtype.kind not in "iu" or ids.shape != (count,) or (ids.size and ids.min() < 0):
        raise Error(f"tracks are {count} non-negative integer ids, one per point")
    return np.ascontiguousarray(ids, dtype=np.uint64)
