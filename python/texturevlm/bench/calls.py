"""python -m texturevlm.bench calls: the inference calls a serving loop makes, each timed
three ways in one run: wall time per call with calls pipelined (what the loop sees), the
host's time to issue a call (the Python and C++ work, the launches), and the GPU's time per
call (the calls queued behind a GPU sleep, so the host is never what the GPU waits for).
Host time above GPU time is what the Python call adds; where the host is faster, the wall
time is the GPU's. Each call repeats its arguments, as a serving loop's do, so the engine
replays its launches as one CUDA graph (TVLM_REPLAY=0 turns that off, to compare)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

import texturevlm as tv
from texturevlm.processors import CLIPImageProcessor, Qwen2VLImageProcessor, SiglipImageProcessor

from .common import wall_and_host_us


def _gpu_us(fn: Callable[[], object], host_us: float) -> float:
    """GPU time per call: CUDA events around calls queued while the GPU sleeps for longer
    than the host takes to issue them, so the GPU runs them back to back. (torch.profiler's
    kernel sum, common.kernel_us, counts a replayed graph's kernels with gaps it adds.)"""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    calls = 50
    torch.cuda.synchronize()
    # About twice the host's issue time, in cycles of a ~2 GHz GPU clock.
    torch.cuda._sleep(int(2 * calls * max(host_us, 10.0) * 2000))
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / calls


def run(table: Any, per_call_us: Any) -> None:
    del per_call_us  # this job times its calls three ways itself
    gen = torch.Generator(device="cuda").manual_seed(0)
    frame = torch.randint(0, 256, (3, 1024, 1024), dtype=torch.uint8, device="cuda", generator=gen)
    rgba = torch.randint(0, 256, (1024, 1024, 4), dtype=torch.uint8, device="cuda", generator=gen)
    layout = tv.layouts.foveated(1024, 1024, (0.5, 0.5), num_patches=273)
    device = torch.device("cuda", torch.cuda.current_device())
    out3 = torch.empty((273, 3, 16, 16), device="cuda")
    out4 = torch.empty((273, 4, 16, 16), device="cuda")
    big = torch.randint(0, 256, (3, 4096, 4096), dtype=torch.uint8, device="cuda", generator=gen)
    pyramid = tv.TexturePyramid(big)
    layout4k = tv.layouts.foveated(4096, 4096, (0.5, 0.5), num_patches=273)
    siglip, clip, qwen = SiglipImageProcessor(), CLIPImageProcessor(), Qwen2VLImageProcessor()
    f4k = torch.full((2160, 3840, 4), 40, dtype=torch.uint8, device="cuda")
    overlay = tv.overlay.Overlay()
    rng = np.random.default_rng(7)
    from .overlay import _scene

    scene = _scene(rng, 100, True, 0)
    boxes = np.array(
        [
            [b["x"] - b["width"] / 2, b["y"] - b["height"] / 2, b["x"] + b["width"] / 2, b["y"] + b["height"] / 2]
            for b in scene["boxes"]
        ],
        np.float32,
    )
    texts = [label["text"] for label in scene["labels"]]
    calls = {
        "sample_patches(out=...), [3, 1024, 1024] uint8 frame": lambda: tv.sample_patches(frame, layout, out=out3),
        "sample_patches, [3, 1024, 1024] uint8 frame": lambda: tv.sample_patches(frame, layout),
        "sample_patches(out=...), [1024, 1024, 4] RGBA frame": lambda: tv.sample_patches(
            rgba, layout, channels_last=True, out=out4
        ),
        "pyramid.sample(layout, out=...), 4096^2 pyramid": lambda: pyramid.sample(layout4k, out=out3),
        "pyramid.sample_foveated((0.5, 0.5)), 4096^2 pyramid": lambda: pyramid.sample_foveated((0.5, 0.5)),
        "pyramid.sample_foveated((0.5, 0.5), out=...), 4096^2 pyramid": lambda: pyramid.sample_foveated(
            (0.5, 0.5), out=out3
        ),
        # What a call without out= pays for its output, beside the calls' rows.
        "torch.empty((273, 3, 16, 16), device='cuda') alone": lambda: torch.empty((273, 3, 16, 16), device="cuda"),
        "torch.empty_strided of the same (texturevlm's outputs) alone": lambda: torch.empty_strided(
            (273, 3, 16, 16), (768, 256, 16, 1), dtype=torch.float32, device=device
        ),
        "SiglipImageProcessor, 1 x [3, 1024, 1024] uint8": lambda: siglip(frame),
        "CLIPImageProcessor, 1 x [3, 1024, 1024] uint8": lambda: clip(frame),
        "Qwen2VLImageProcessor, 1 x [3, 1024, 1024] uint8": lambda: qwen(frame),
        "overlay.draw, 3840x2160, 100 boxes with labels (scene dict)": lambda: overlay.draw(f4k, scene),
        "overlay.draw_bounding_boxes, 3840x2160, the same 100 boxes (arrays)": lambda: overlay.draw_bounding_boxes(
            f4k, boxes, labels=texts, colors=(255, 80, 80), fill=True, radius=8
        ),
    }
    for name, fn in calls.items():
        wall, fastest, host = wall_and_host_us(fn)
        gpu = _gpu_us(fn, host)
        note = f"host {host:.1f} us, GPU {gpu:.1f} us: host above GPU {max(0.0, wall - gpu):.1f} us"
        table.add(f"Python call: {name}", "wall per call, pipelined", (wall, fastest), 0, note)
