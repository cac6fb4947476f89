"""Calls composed of their images' kept launches: a list of images of several sizes in an
order not seen before (a server's batch of requests) runs each image's launch as an
earlier call ran it, at the image's place in this call's output, without planning the call
(reading every image's spec, its plan, the parts, the resizers and targets cost more host
time than the launches).

A processor whose every image's output is one run of its own (CLIP, SigLIP, Qwen2-VL)
keeps, per thread, each image layout's launch from a call that planned it on a resizer of
its size (keep_image_launches). A later list whose every image has one is composed
(composed_launches, run_composed). A layout's first call is composed; its second is planned
and remembered (_resize.remember_call), so a list repeated in one order replays as one call
on stream branches from its third."""

from __future__ import annotations

import threading
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

from .. import _tensors
from .._bounded import drop_oldest
from .._tensors import ITEMSIZE
from ._resize import CudaLaunch, PendingCall

#: Image layouts whose launches are kept, least recently used out first: a server's
#: common image sizes, each kept per thread (their resizers are the thread's).
KEPT_IMAGE_LAUNCHES = 64
#: Layouts of lists composed once: their next call is planned and remembered.
KEPT_COMPOSED_LAYOUTS = 256


class ImageLaunch(NamedTuple):
    """One image's share of a planned call: its run (written from the image's first output
    value), its output as rows of the call's output (`rows` rows of `tail`) and its
    grid_thw row where the family returns one."""

    processor: Any  # compared by identity: a key's id() may be reused by a later processor
    launch: CudaLaunch
    rows: int
    tail: Tuple[int, ...]
    grid: Optional[List[int]]


_image_launches: "dict[Any, ImageLaunch]" = {}
_composed_layouts: "dict[Any, bool]" = {}


def _image_key(processor: Any, shape: Any, strides: Any, dtype: Any, device: Any) -> Tuple[Any, ...]:
    return (threading.get_ident(), id(processor), processor.filter, processor.dtype, shape, strides, dtype, device)


def _mixed(pending: Optional[PendingCall]) -> bool:
    """Whether a call is a list of single images ([C, H, W] or [H, W, C]: a part's first
    image is then its place in the list) of more than one layout (torch_cuda_layout's mixed
    layout: a count, then a shape per image)."""
    if pending is None or pending.layout[0] == 0:
        return False
    shapes = pending.layout[1]
    return not isinstance(shapes[0], int) and all(len(shape) == 3 for shape in shapes)


def composed_launches(processor: Any, pending: Optional[PendingCall]) -> Optional[List[ImageLaunch]]:
    """The kept launch of every image of the call, where the call is a mixed list seen for
    the first time and each of its image layouts has one; else None (plan the call)."""
    if not _mixed(pending):
        return None
    assert pending is not None
    # Its second call: planned, so that it is remembered. (One pop, not a test and a del:
    # another thread's drop_oldest may take the entry between the two.)
    if _composed_layouts.pop(pending.key, False):
        return None
    _, shapes, dtype, device, strides = pending.layout
    found = []
    for shape, stride in zip(shapes, strides):
        kept = _image_launches.get(_image_key(processor, shape, stride, dtype, device))
        if kept is None or kept.processor is not processor:
            return None
        found.append(kept)
    _composed_layouts[pending.key] = True
    drop_oldest(_composed_layouts, KEPT_COMPOSED_LAYOUTS)
    return found


def run_composed(
    launches: Sequence[ImageLaunch], pointers: Sequence[int], framework: str, index: int, out_dtype: str
) -> Any:
    """The images' values, each image's launch writing its rows in turn into one output on
    the framework's current stream (launches of several sizes run one after another, as a
    call planned once runs them). Launched directly, not replayed: an image's place in the
    output, part of what a replay is keyed by, changes from call to call."""
    first = launches[0]
    shape = (sum(l.rows for l in launches),) + first.tail
    out = _tensors.empty(framework, "cuda", index, shape, out_dtype)
    ptr = out.data_ptr() if framework == "torch" else _tensors.pointer_and_strides(out, framework)[0]
    stream = _tensors.cuda_stream(framework, index)
    row_bytes = ITEMSIZE[out_dtype]
    for n in first.tail:
        row_bytes *= n
    at = ptr
    for kept, image in zip(launches, pointers):
        kept.launch.run([image], at, stream, replay=False)
        at += kept.rows * row_bytes
    return _tensors.hand_over(out, framework, index, stream)


def keep_image_launches(
    processor: Any,
    pending: Optional[PendingCall],
    launches: Sequence[Tuple[CudaLaunch, int, int]],
    strides: Sequence[int],
    shape: Tuple[int, ...],
    grids: Optional[List[List[int]]],
) -> None:
    """Keeps the launch of each image of a planned mixed list that ran alone on a resizer of
    its size (a part of one image: `launches` are the call's (launch, first, end), `strides`
    its parts' values per image, `shape` the call's output), for composed_launches."""
    if not _mixed(pending):
        return
    assert pending is not None
    _, shapes, dtype, device, image_strides = pending.layout
    tail = tuple(shape[1:])
    per_row = 1
    for n in tail:
        per_row *= n
    for (launch, first, end), values in zip(launches, strides):
        if end - first != 1 or launch.any_size or values % per_row:
            continue
        key = _image_key(processor, shapes[first], image_strides[first], dtype, device)
        grid = grids[first] if grids is not None else None
        _image_launches.pop(key, None)
        _image_launches[key] = ImageLaunch(processor, launch._replace(offset_bytes=0), values // per_row, tail, grid)
    drop_oldest(_image_launches, KEPT_IMAGE_LAUNCHES)


def clear() -> None:
    """Drops the kept launches (and the resizers they hold)."""
    _image_launches.clear()
    _composed_layouts.clear()
