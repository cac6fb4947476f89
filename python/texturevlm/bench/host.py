"""Host images through the processors, for `python -m texturevlm.bench host`: uint8 NumPy
arrays [H, W, 3] (a server's decoded requests) through HF's processors on the CPU, and
through texturevlm's exact filter on the host (its C++ copy of torch's byte resize, then one
C++ pass into the model's layout), each of texturevlm's outputs checked against HF's. Beside
them, PyTorch's uint8 resize alone (torch.nn.functional.interpolate of the same images to
the same size: HF's resize step, without its normalization and layout). Needs no GPU;
floors are the bytes over this host's copy rate."""

from __future__ import annotations

import os
from typing import Any, Callable, List

import numpy as np

from ..processors import CLIPImageProcessor, Qwen2VLImageProcessor, SiglipImageProcessor
from .common import per_call_us


def host_us(fn: Callable[[], object], calls: int) -> tuple:
    """per_call_us for host work: median and min wall time per call (us), 5 runs of `calls`."""
    return per_call_us(fn, calls, runs=5, wait=lambda: None)


#: (model, HF's class, texturevlm's class): the jobs of `processors` item 2, host side.
MODELS = (
    ("CLIP", "CLIPImageProcessor", CLIPImageProcessor),
    ("SigLIP", "SiglipImageProcessor", SiglipImageProcessor),
    ("Qwen2-VL", "Qwen2VLImageProcessor", Qwen2VLImageProcessor),
)


def host_copy_bandwidth() -> float:
    """This host's copy rate in bytes/s (read + written), one thread, a 256 MiB copy."""
    a = np.ones(2**28, np.uint8)
    b = np.empty_like(a)
    median, _ = host_us(lambda: np.copyto(b, a), calls=3)
    return 2 * a.nbytes / (median * 1e-6)


def resized_size(model: str, pixel_values: np.ndarray, batch: int) -> tuple:
    """The size HF resized each square image to: its crop for CLIP and SigLIP, the merged
    patches' grid for Qwen2-VL (14-pixel patches)."""
    if model != "Qwen2-VL":
        return tuple(pixel_values.shape[-2:])
    side = int(round((pixel_values.shape[0] / batch) ** 0.5)) * 14
    return (side, side)


def table_time(table: Any, job: str) -> float:
    """The median of the last row added for `job` (texturevlm's call)."""
    return [row for row in table.rows if row["job"] == job][-1]["median_us"]


def run(table: Any) -> List[dict]:
    """Adds the rows to `table` (bench.Table, built with host_copy_bandwidth())."""
    import torch
    import transformers

    print(
        f"transformers {transformers.__version__}, torch {torch.__version__} with {torch.get_num_threads()} "
        f"threads, {os.cpu_count()} CPUs\n"
    )
    rng = np.random.default_rng(0)
    for batch in (1, 8):
        images = [rng.integers(0, 256, (1024, 1024, 3), dtype=np.uint8) for _ in range(batch)]
        calls = 20 if batch == 1 else 5
        for model, hf_name, ours_cls in MODELS:
            job = f"{model} processor, {batch} x [1024, 1024, 3] uint8 NumPy"
            hf = getattr(transformers, hf_name)()
            want = hf(images=images, return_tensors="np")["pixel_values"]
            floor_bytes = sum(image.nbytes for image in images) + want.nbytes
            t = host_us(lambda: hf(images=images, return_tensors="np"), calls)
            table.add(job, f"HF {hf_name} (transformers {transformers.__version__}, CPU)", t, floor_bytes)
            hf_time = t[0]
            ours = ours_cls()
            got = ours(images, return_tensors="np")["pixel_values"]
            t = host_us(lambda: ours(images, return_tensors="np"), calls)
            note = f"{hf_time / t[0]:5.1f}x HF; vs HF: max {float(np.abs(got - want).max()):.4f}"
            table.add(job, f"texturevlm {type(ours).__name__} (exact, host)", t, floor_bytes, note)
            size = resized_size(model, want, batch)
            planar = [torch.from_numpy(image).permute(2, 0, 1)[None] for image in images]

            def resize_alone() -> None:
                for image in planar:
                    torch.nn.functional.interpolate(image, size=size, mode="bicubic", antialias=True)

            t = host_us(resize_alone, calls)
            note = f"texturevlm's whole call {table_time(table, job) / t[0]:4.2f}x this"
            resize_bytes = sum(image.nbytes for image in images) + batch * size[0] * size[1] * 3
            table.add(
                job, "PyTorch interpolate alone (uint8, bicubic, antialiased: HF's resize step)", t, resize_bytes, note
            )
    return table.rows
