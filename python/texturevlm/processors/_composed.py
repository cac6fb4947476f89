"""Calls composed of their images' kept launches: a list of images of several sizes in an
order not seen before (a server's batch of requests) runs each image's launches as an
earlier call ran them, at the image's place in this call's output, without planning the
call (reading every image's spec, its plan, the parts, the resizers and targets cost more
host time than the launches).

A planned mixed list keeps, per thread, each image layout's launches where the image ran
alone on resizers of its size (keep_image_launches): one run for CLIP, SigLIP, Gemma 3 and
Qwen2-VL; its tiles' and its thumbnail's (InternVL) or whole image's (LLaVA) runs for the
families that give an image several outputs. A later list whose every image has them is
composed (composed_launches, run_composed). A layout's first call is composed; its second
is planned and remembered (_resize.remember_call), so a list repeated in one order replays
as one call on stream branches from its third."""

from __future__ import annotations

import threading
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from .. import _core, _tensors
from .._bounded import drop_oldest
from .._tensors import ITEMSIZE
from ._resize import BRANCHES, CudaLaunch, PendingCall

#: Image layouts whose launches are kept, least recently used out first: a server's
#: common image sizes, each kept per thread (their resizers are the thread's).
KEPT_IMAGE_LAUNCHES = 64
#: Layouts of lists composed once: their next call is planned and remembered.
KEPT_COMPOSED_LAYOUTS = 256
#: Whether a composed call's resizers run at once, each on a stream branch
#: (cuda_pipelines/stream_branches.h; TVLM_BRANCHES=0 turns branches off everywhere): its
#: images' small grids leave most of a large GPU idle. Not for the texture filter, whose
#: composed calls are bound by their host time (its runs fill textures), which the
#: branches' events add to.
BRANCHED = BRANCHES


class ImageLaunch(NamedTuple):
    """One image's share of a planned call: its runs (`pieces`, each written from its
    offset past the image's first output value), its output as rows of the call's output
    (`rows` rows of `tail`), its grid_thw row where the family returns one, its entries of
    the per-image tables (num_patches, ...) and its size (height, width)."""

    processor: Any  # compared by identity: a key's id() may be reused by a later processor
    pieces: Tuple[CudaLaunch, ...]
    rows: int
    tail: Tuple[int, ...]
    grid: Optional[List[int]]
    counts: Tuple[Tuple[str, int], ...]
    size: Tuple[int, int]


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
    """The kept launches of every image of the call, where the call is a mixed list seen
    for the first time and each of its image layouts has them; else None (plan the call)."""
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
    launches: Sequence[ImageLaunch],
    pointers: Sequence[int],
    framework: str,
    index: int,
    out_dtype: str,
    slot_rows: Optional[int] = None,
    branched: bool = True,
) -> Any:
    """The images' values, each image's launches writing its rows into one output on the
    framework's current stream, each resizer's runs on a branch of it (`branched` and
    BRANCHED; else in turn):
    [rows of all images, *tail]; or, given `slot_rows`, [images, slot_rows, *tail], each
    image's rows first in its slot and zeros after them (LLaVA's padding, written in place
    rather than copied). Launched directly, not replayed: an image's place in the output,
    part of what a replay is keyed by, changes from call to call."""
    first = launches[0]
    if slot_rows is None:
        shape = (sum(l.rows for l in launches),) + first.tail
    else:
        shape = (len(launches), slot_rows) + first.tail
    out = _tensors.empty(framework, "cuda", index, shape, out_dtype)
    ptr = out.data_ptr() if framework == "torch" else _tensors.pointer_and_strides(out, framework)[0]
    stream = _tensors.cuda_stream(framework, index)
    row_bytes = ITEMSIZE[out_dtype]
    for n in first.tail:
        row_bytes *= n
    runs = []  # (image, piece, where the image's values start in the output, in bytes)
    at = 0
    for i, kept in enumerate(launches):
        runs.extend((i, piece, at) for piece in kept.pieces)
        if slot_rows is not None and kept.rows < slot_rows:
            out[i, kept.rows :].zero_()  # padding: rows no run writes
        at += (kept.rows if slot_rows is None else slot_rows) * row_bytes
    if branched and BRANCHED and len({id(piece.resizer) for _, piece, _ in runs}) > 1:
        # Each resizer's runs on a stream branch of its own, all launched in one call: an
        # image's small grids leave most of the GPU to the others'.
        _core.ResizerBranches(
            [
                (p.resizer, i, i + 1, p.dtype, p.strides, p.width, p.height, p.target, start + p.offset_bytes)
                for i, p, start in runs
            ],
            replay=False,
        ).run(list(pointers), ptr, stream)
    else:
        for i, piece, start in runs:
            piece.run([pointers[i]], ptr + start, stream, replay=False)
    return _tensors.hand_over(out, framework, index, stream)


def keep_image_launches(
    processor: Any,
    pending: Optional[PendingCall],
    launches: Sequence[Tuple[CudaLaunch, int, int]],
    parts: Sequence[Any],
    pointers: Sequence[int],
    shape: Tuple[int, ...],
    grids: Optional[List[List[int]]],
    counts: Optional[Dict[str, List[int]]],
) -> None:
    """Keeps the launches of each image of a planned mixed list whose every output ran
    alone on a resizer of its size, for composed_launches. `launches` are the call's
    (launch, first, end), one per part of `parts` (_common.Part: an image's outputs are
    consecutive parts, from its first value at the first one's offset, `stride` values in
    all); `pointers` what each run read, by `first`; `shape` the call's output; `grids` and
    `counts` its per-image grid_thw rows and tables."""
    if not _mixed(pending):
        return
    assert pending is not None
    _, shapes, dtype, device, image_strides = pending.layout
    tail = tuple(shape[1:])
    per_row = 1
    for n in tail:
        per_row *= n
    image = j = 0
    while j < len(parts):
        start, stride, count = parts[j].offset, parts[j].stride, parts[j].count
        group = []  # the parts of the images [image, image + count): offsets within the first's values
        while j < len(parts) and parts[j].offset < start + stride:
            group.append(j)
            j += 1
        alone = count == 1 and all(parts[g].count == 1 for g in group)
        # Each run on a resizer of its size, reading the image itself (not a padded or
        # composited copy), and the image's values whole rows of the output.
        if (
            alone
            and not stride % per_row
            and all(not launches[g][0].any_size and pointers[launches[g][1]] == pending.pointers[image] for g in group)
        ):
            key = _image_key(processor, shapes[image], image_strides[image], dtype, device)
            base = launches[group[0]][0].offset_bytes  # the image's first value: its first part's
            pieces = tuple(launches[g][0]._replace(offset_bytes=launches[g][0].offset_bytes - base) for g in group)
            spec = parts[group[0]].specs[0]
            _image_launches.pop(key, None)
            _image_launches[key] = ImageLaunch(
                processor,
                pieces,
                stride // per_row,
                tail,
                grids[image] if grids is not None else None,
                tuple((name, numbers[image]) for name, numbers in (counts or {}).items()),
                (spec.height, spec.width),
            )
        image += count
    drop_oldest(_image_launches, KEPT_IMAGE_LAUNCHES)


def composed_counts(launches: Sequence[ImageLaunch]) -> Optional[Dict[str, List[int]]]:
    """The per-image tables of a composed call, from its images' entries."""
    names = [name for name, _ in launches[0].counts]
    return {name: [dict(kept.counts)[name] for kept in launches] for name in names} if names else None


def clear() -> None:
    """Drops the kept launches (and the resizers they hold)."""
    _image_launches.clear()
    _composed_layouts.clear()
