"""Calls composed of their images' kept launches: a list of images of several sizes in an
order not seen before (a server's batch of requests) runs each image's launches as an
earlier call ran them, at the image's place in this call's output, without planning the
call (reading every image's spec, its plan, the parts, the resizers and targets cost more
host time than the launches).

A planned mixed list keeps, per thread, each image layout's launches where the image ran
alone on resizers of its size (keep_image_launches): one run for CLIP, SigLIP, Gemma 3 and
Qwen2-VL; its tiles' and its thumbnail's (InternVL) or whole image's (LLaVA) runs for the
families that give an image several outputs. A later list whose every image has them is
composed (composed_launches, ComposedCall) and remembered as it is (_resize.remember_call):
its later calls skip even the composing, and from its third a repeated list replays its
runs as graphs."""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from .. import _core, _tensors
from .._bounded import drop_oldest
from .._tensors import ITEMSIZE
from ._resize import BRANCHES, CudaLaunch, PendingCall

#: Image layouts whose launches are kept, least recently used out first: a server's
#: common image sizes, each kept per thread (their resizers are the thread's).
KEPT_IMAGE_LAUNCHES = 64
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
    """The kept launches of every image of the call, where the call is a mixed list (not
    remembered: cached_call found none) and each of its image layouts has them; else None
    (plan the call)."""
    if not _mixed(pending):
        return None
    assert pending is not None
    _, shapes, dtype, device, strides = pending.layout
    found = []
    for shape, stride in zip(shapes, strides):
        kept = _image_launches.get(_image_key(processor, shape, stride, dtype, device))
        if kept is None or kept.processor is not processor:
            return None
        found.append(kept)
    return found


class ComposedCall:
    """A list's call composed of its images' kept launches, as a function of the images'
    pointers: each image's launches write its rows into one output on the current stream,
    each resizer's runs on a branch of it (`branched` and BRANCHED; else in turn), then
    `finish` makes the outputs of the values. The values are [rows of all images, *tail]
    or, given `slot_rows`, [images, slot_rows, *tail], each image's rows first in its slot
    and zeros after them (LLaVA's padding, written in place rather than copied).

    Its first call (`replay=False`) launches directly: a list seen once would only fill the
    resizers' replay keys. Remembered, a repeated list's runs are keyed for replay like a
    planned call's, so that from its third call they replay as graphs."""

    def __init__(
        self,
        launches: Sequence[ImageLaunch],
        index: int,
        out_dtype: str,
        slot_rows: Optional[int],
        branched: bool,
        finish: Callable[[Any], Any],
    ) -> None:
        tail = launches[0].tail
        self.shape = (
            (sum(kept.rows for kept in launches),) + tail if slot_rows is None else (len(launches), slot_rows) + tail
        )
        self.index, self.out_dtype, self.finish = index, out_dtype, finish
        row_bytes = ITEMSIZE[out_dtype]
        for n in tail:
            row_bytes *= n
        self.runs: List[Tuple[int, CudaLaunch, int]] = []  # (image, run, where the image's values start, bytes)
        self.padding: List[Tuple[int, int]] = []  # (image, its rows) of slots with rows no run writes
        at = 0
        for i, kept in enumerate(launches):
            self.runs.extend((i, piece, at) for piece in kept.pieces)
            if slot_rows is not None and kept.rows < slot_rows:
                self.padding.append((i, kept.rows))
            at += (kept.rows if slot_rows is None else slot_rows) * row_bytes
        self.branched = branched and BRANCHED and len({id(piece.resizer) for _, piece, _ in self.runs}) > 1
        self.branches: Any = None  # the remembered call's ResizerBranches, made at its first use

    def _branches(self, replay: bool) -> Any:
        return _core.ResizerBranches(
            [
                (p.resizer, i, i + 1, p.dtype, p.strides, p.width, p.height, p.target, start + p.offset_bytes)
                for i, p, start in self.runs
            ],
            replay=replay,
        )

    def __call__(self, pointers: Sequence[int], replay: bool = True) -> Any:
        out = _tensors.empty("torch", "cuda", self.index, self.shape, self.out_dtype)
        ptr = out.data_ptr()
        stream = _tensors.cuda_stream("torch", self.index)
        for i, rows in self.padding:
            out[i, rows:].zero_()
        if self.branched:
            if not replay:
                self._branches(False).run(list(pointers), ptr, stream)
            else:
                if self.branches is None:
                    self.branches = self._branches(True)
                self.branches.run(list(pointers), ptr, stream)
        else:
            for i, piece, start in self.runs:
                piece.run([pointers[i]], ptr + start, stream, replay)
        return self.finish(_tensors.hand_over(out, "torch", self.index, stream))


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
    # A processor's images hold the same tables in the same order.
    names = [name for name, _ in launches[0].counts]
    return {name: [kept.counts[i][1] for kept in launches] for i, name in enumerate(names)} if names else None


def clear() -> None:
    """Drops the kept launches (and the resizers they hold)."""
    _image_launches.clear()
