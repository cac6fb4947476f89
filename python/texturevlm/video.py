"""Video in, patch tensors out, frame by frame.

    import texturevlm as tv
    for frame in tv.video.frames("talk.mp4", follow_changes=4, num_patches=273):
        tokens = encoder(frame.patches)          # [N, C, P, P]; frame.meta [N, 5]

FFmpeg decodes the file or stream on the CPU straight into a staging buffer, or on the
NVIDIA GPU's decoder (NVDEC) into CUDA memory; the GPU compares each frame with the one its
texture holds, tile by tile, and only the changed rectangles are copied and their mips
updated (with threshold 0 the texture equals every frame exactly); foveated patches are
then sampled (Vulkan compute into host memory, or the CUDA texture unit into a torch CUDA
tensor) where the fixation schedule says to look: fixed, a timeline, following the
changes, or following a saliency signal or field you give per frame."""

from __future__ import annotations

from typing import Any, Callable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from . import _core, _devices, layouts
from ._checks import whole
from ._core import Error

Fixations = List[Tuple[float, float]]
#: saliency(index, time, change) -> a 2D array over the frame (any resolution, >= 0), a 2D
#: field over the image (a fields.GaussianField or a callable points [B, 2] -> values), or None
SaliencyFn = Callable[[int, float, Any], Any]


class VideoFrame(NamedTuple):
    """One sampled frame."""

    index: int  #: the frame's number in the stream, from 0
    time: float  #: seconds from the start (frame number / frame rate)
    patches: Any  #: [N, C, P, P] float32 (or float16), zeros in padding slots
    meta: Any  #: [N, 5] (cu, cv, su, sv, level); level -1 marks padding
    changed_fraction: float  #: texels copied into the texture for this frame / all texels
    whole_frame: bool  #: the first frame or a scene cut: the texture was replaced whole
    fixations: Fixations  #: where the layout looked, normalized (x, y)
    decoder: str = "CPU"  #: which decoder ran: "CPU" or "NVDEC (CUDA device N)"


def write_test_clip(
    path: str, width: int = 640, height: int = 432, frames: int = 48, cut: int = 32, codec: str = "ffv1"
) -> None:
    """Writes the embedded test clip (what `tvlm video` runs on without a file): the test
    chart with a bright square moving across it and a scene cut at frame `cut` to the chart
    mirrored; lossless by default (FFV1; `path` should end in .mkv), so decoded frames equal
    test_clip_frame(), or with FFmpeg's encoder `codec` (e.g. 'libx264' into .mp4, which
    NVDEC decodes)."""
    _require_video()
    _core.write_test_clip(path, width, height, frames, cut, codec)


def test_clip_frame(index: int, width: int = 640, height: int = 432, frames: int = 48, cut: int = 32) -> np.ndarray:
    """Frame `index` of the test clip as uint8 [height, width, 4] (RGBA)."""
    _require_video()
    return _core.test_clip_frame(width, height, frames, cut, index)


def _require_video() -> None:
    why = _core.video_unavailable()
    if why:
        raise Error(why)


def change_saliency(change: Any, tiles: Tuple[int, int]) -> Optional[np.ndarray]:
    """The changed tiles of a frame (first layer) as saliency: each cell counts the changed
    tiles in its 3x3 neighbourhood, so the middle of a moving object outweighs its edges.
    None for whole frames (a cut says nothing about where to look)."""
    if change.whole_frame:
        return None
    tiles_x, tiles_y = tiles
    grid = change.changed_tiles[: tiles_x * tiles_y].reshape(tiles_y, tiles_x).astype(np.float32)
    padded = np.pad(grid, 1)
    return sum(padded[dy : dy + tiles_y, dx : dx + tiles_x] for dy in range(3) for dx in range(3)).astype(np.float32)


def _schedule(
    fixation: Any,
    timeline: Optional[Sequence[Tuple[float, Any]]],
    follow_changes: Optional[float],
    saliency: Optional[SaliencyFn],
    saliency_rate: float,
    num_fixations: int,
) -> Any:
    chosen = [
        name
        for name, given in (
            ("timeline", timeline is not None),
            ("follow_changes", follow_changes is not None),
            ("saliency", saliency is not None),
        )
        if given
    ]
    if len(chosen) > 1:
        raise Error(f"choose one of timeline, follow_changes and saliency, not {' and '.join(chosen)}")
    start = layouts.fixations_per_image(fixation, 1)[0]
    if timeline is not None:
        return _core.FixationSchedule.timeline([(float(t), layouts.fixations_per_image(f, 1)[0]) for t, f in timeline])
    if follow_changes is not None:
        return _core.FixationSchedule.following(float(follow_changes), num_fixations, 0.2, start)
    if saliency is not None:
        return _core.FixationSchedule.following(float(saliency_rate), num_fixations, 0.2, start)
    return _core.FixationSchedule.fixed(start)


def _to_device(array: np.ndarray, device: Any) -> Any:
    if device is None or str(device) == "numpy":
        return array
    import torch

    tensor = torch.from_numpy(array)
    return tensor if str(device) == "cpu" else tensor.to(device)


def frames(
    source: str,
    *,
    fixation: Any = (0.5, 0.5),
    timeline: Optional[Sequence[Tuple[float, Any]]] = None,
    follow_changes: Optional[float] = None,
    saliency: Optional[SaliencyFn] = None,
    saliency_rate: float = 4.0,
    num_fixations: int = 1,
    num_patches: int = 273,
    patch_size: int = 16,
    every: int = 1,
    max_frames: Optional[int] = None,
    threshold: int = 0,
    channels: int = 3,
    dtype: str = "float32",
    format: str = "rgba8",
    device: Any = None,
    vulkan_device: str = "",
    threads: int = 0,
    decoder: str = "auto",
    timeout: float = 30.0,
) -> Iterator[VideoFrame]:
    """Yields a VideoFrame for every `every`-th frame of `source` (a file or any URL FFmpeg
    opens), up to `max_frames` decoded frames.

    Where to look: `fixation` ((x, y) or [K, 2]) fixed; or `timeline` [(seconds, fixation),
    ...] each held until the next; or `follow_changes=R`: at most R moves a second to where
    the frame changed most since the last move; or `saliency(index, time, change)` returning
    a 2D map, or a 2D field over the image (a `fields.GaussianField`, learned or given, or
    any callable points [B, 2] -> values, evaluated on a 64-cell-wide grid), or None for no
    signal, followed at `saliency_rate` moves a second (`change` has `changed_tiles`,
    `whole_frame`, `copied_fraction`, `rectangles`). Following changes or saliency looks at
    the `num_fixations` strongest, well-separated maxima at once.

    `threshold` (0-255): a channel differing by at most this counts as unchanged (0: the
    texture equals every frame). `device`: None or 'numpy' gives NumPy arrays (in the
    sampler's host-visible memory, no copy); 'cpu' torch CPU tensors sharing it; 'cuda[:N]'
    or a torch.device gives torch CUDA tensors there.

    `decoder`: 'nvdec' decodes on the NVIDIA GPU's decoder into CUDA memory, converts and
    updates the texture with CUDA and samples with the texture unit straight into CUDA
    tensors on torch's current stream (device 'cuda[:N]', the default for it; frames never
    touch the host); 'cpu' decodes with FFmpeg on the CPU and samples with Vulkan compute;
    'auto' takes NVDEC where `device` is a CUDA device and NVDEC decodes this stream, else
    the CPU. `VideoFrame.decoder` says which ran. Raises Error for missing, damaged or
    unsupported files and bad arguments, and for 'nvdec' where it cannot run, before the
    first frame.

    `timeout`: the longest wait, in seconds, for a source that sends nothing (opening it, or
    between two packets): a network stream whose server stalls raises Error after it (0: wait
    for ever). Ctrl-C interrupts any wait with KeyboardInterrupt."""
    every = whole(every, "every", 1, what=" frames")
    threshold = whole(threshold, "threshold")
    if max_frames is not None:
        max_frames = whole(max_frames, "max_frames", 1, (1 << 63) - 1, " frames (or None: every frame)")
    if channels not in (3, 4):
        raise Error(f"channels must be 3 or 4, not {channels}")
    if dtype not in ("float32", "float16"):
        raise Error(f"dtype must be 'float32' or 'float16', not {dtype!r}")
    num_fixations = whole(num_fixations, "num_fixations", 1)
    if decoder not in ("auto", "cpu", "nvdec"):
        raise Error(f"decoder must be 'auto', 'cpu' or 'nvdec', not {decoder!r}")
    _require_video()
    schedule = _schedule(fixation, timeline, follow_changes, saliency, saliency_rate, num_fixations)
    if not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout >= 0):
        raise Error(f"timeout is 0 (wait for ever) or more seconds, not {timeout!r}")
    stream = _open(source, decoder, device, format, threshold, threads, vulkan_device, float(timeout))
    fps = stream.frames_per_second or 25.0
    # Checks num_patches and patch_size against the frame before any frame is decoded.
    layouts.foveated(stream.width, stream.height, start_fixations(schedule), num_patches, patch_size)
    field_grid = (64, max(1, round(64 * stream.height / stream.width)))  # square cells
    return _frames(
        stream,
        schedule,
        fps,
        saliency,
        follow_changes is not None,
        num_patches,
        patch_size,
        every,
        max_frames,
        channels,
        dtype == "float16",
        device,
        field_grid,
    )


def _nvdec_device(device: Any, format: str) -> Tuple[Optional[int], str]:
    """The CUDA device index NVDEC would serve (`device` None: torch's current one), or
    None with the reason it cannot."""
    kind, _, index = str(device if device is not None else "cuda").partition(":")
    if kind != "cuda":
        return None, f"NVDEC gives CUDA tensors, not {device!r} ones: pass device='cuda' (or 'cuda:N')"
    if format != "rgba8":
        return None, f"NVDEC frames go to an rgba8 texture, not {format!r}"
    if not _core.cuda_built():
        return None, "this texturevlm was built without CUDA"
    why = _devices.unavailable()["cuda"]
    if why:
        return None, f"no CUDA device: {why}"
    if index:
        return int(index), ""
    import torch

    return torch.cuda.current_device(), ""


def _open(
    source: str,
    decoder: str,
    device: Any,
    format: str,
    threshold: int,
    threads: int,
    vulkan_device: str,
    timeout: float,
) -> Any:
    """The stream that decodes `source` as `decoder` asks (see frames())."""
    if decoder == "nvdec" or (decoder == "auto" and device is not None):
        cuda_index, why = _nvdec_device(device, format)
        if cuda_index is not None:
            try:
                return _NvdecStream(_core.CudaVideoStream(cuda_index, source, threshold, timeout), cuda_index)
            except Error as e:
                if "nothing arrived for" in str(e):  # the source stalled: the CPU decoder would too
                    raise
                why = str(e)
        if decoder == "nvdec":
            raise Error(f"decoder='nvdec' cannot run: {why}")
    return _core.VideoStream(_devices.vulkan_device(vulkan_device), source, format, threshold, threads, timeout)


class _NvdecStream:
    """A CudaVideoStream with the host stream's interface: sample() gives torch CUDA tensors."""

    def __init__(self, core: Any, cuda_index: int) -> None:
        self.core, self.cuda_index = core, cuda_index
        self.width, self.height, self.tiles = core.width, core.height, core.tiles
        self.frames_per_second, self.decoder = core.frames_per_second, core.decoder

    def next(self) -> Any:
        return self.core.next()

    def sample(self, layout: Any, channels: int, half: bool) -> Tuple[Any, Any]:
        from ._tensors import empty, pointer_and_bytes, torch_raw_stream

        stream = torch_raw_stream()(self.cuda_index)
        copy = layout.on_device("torch", self.cuda_index, stream)
        out = empty(
            "torch",
            "cuda",
            self.cuda_index,
            (layout.num_patches, channels, layout.patch_size, layout.patch_size),
            "float16" if half else "float32",
        )
        self.core.sample(
            copy.sampler,
            channels,
            half,
            *pointer_and_bytes(out, "torch"),
            stream,
        )
        return out, copy.meta_one


def start_fixations(schedule: Any) -> Fixations:
    """Where a schedule looks first (without moving it): for checks before decoding."""
    return [(0.5, 0.5)] if schedule.needs_saliency else schedule.at(0.0)


def _saliency_signal(given: Any, field_grid: Tuple[int, int]) -> Optional[np.ndarray]:
    """What a saliency callback returned, as the schedule's float32 map: arrays as they are,
    fields (anything callable) evaluated on `field_grid` cells (fields.saliency_map)."""
    if given is None:
        return None
    if callable(given):
        from .fields import saliency_map

        return saliency_map(given, field_grid)
    return np.ascontiguousarray(np.asarray(given, dtype=np.float32))


def _frames(
    stream: Any,
    schedule: Any,
    fps: float,
    saliency: Optional[SaliencyFn],
    follow_changes: bool,
    num_patches: int,
    patch_size: int,
    every: int,
    max_frames: Optional[int],
    channels: int,
    half: bool,
    device: Any,
    field_grid: Tuple[int, int],
) -> Iterator[VideoFrame]:
    layout = None
    index = 0
    while max_frames is None or index < max_frames:
        change = stream.next()
        if change is None:
            return
        time = index / fps
        signal = None
        if follow_changes:
            signal = change_saliency(change, stream.tiles)
        elif saliency is not None:
            signal = _saliency_signal(saliency(index, time, change), field_grid)
        fixations = schedule.at(time, signal)
        if layout is None or schedule.moved:
            layout = layouts.foveated(stream.width, stream.height, fixations, num_patches, patch_size)
        if index % every == 0:
            if isinstance(stream, _NvdecStream):
                patches, meta = stream.sample(layout, channels, half)
            else:
                patches = _to_device(stream.sample(layout._core, channels, half), device)
                meta = _to_device(layout.metadata[0], device)
            yield VideoFrame(
                index, time, patches, meta, change.copied_fraction, change.whole_frame, list(fixations), stream.decoder
            )
        index += 1
