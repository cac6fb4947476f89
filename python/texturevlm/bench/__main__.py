"""python -m texturevlm.bench [processors | photos | host | encoded | grad | fields | overlay | calls] [--json FILE] [--tvlm-json bench.json]

The Python package timed on an NVIDIA GPU against the same jobs written the PyTorch way,
in one run, each figure next to its byte floor (bytes over the device copy rate measured
here). Per-call rows are wall time per call from Python with calls pipelined (the host
waits once per run of calls): what a training or serving loop sees. With --tvlm-json (the
output of `tvlm bench --json`), the frame rows are compared with the C++ engine's.

`processors`: Hugging Face's image processors against texturevlm.processors instead
(processors.py); `photos`: Qwen2-VL's processor on camera-sized images (5 to 16 megapixels),
the same way; `host`: the same with host images, on the CPU, no GPU needed (host.py); `encoded`: JPEG bytes -> pixel_values, GPU decode against Pillow + HF
(encoded.py); `grad`: sample_points forward + backward against PyTorch
(grad.py); `fields`: Gaussian fields against vectorized PyTorch (fields.py);
`overlay`: texturevlm.overlay against OpenCV and torchvision drawing (overlay.py); `calls`: the
inference calls' wall, host and GPU time per call (calls.py). Default jobs: 273 foveated
patches from a 4096^2 texture; a 1024^2 and a 4096^2 frame already in a CUDA tensor (planar,
and as RGBA bytes) -> mips -> patches; generate_mipmaps of [32, 3, 1024, 1024] uint8 and
float32."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import List, Optional

import torch

import texturevlm as tv

from .common import Table, copy_bandwidth, per_call_us, torch_patches, torch_pyramid


def tvlm_reference(path: Optional[str], size: int) -> Optional[float]:
    """tvlm bench video's fastest CUDA-frame row for a size x size rgba8 frame, if given (the
    whole frame's work: not a batch's, nor one step's GPU time)."""
    if not path:
        return None
    rows = json.load(open(path)).get("rows", [])
    job = f"CUDA frame {size}^2 rgba8 -> "
    times = [
        r["median_us"]
        for r in rows
        if str(r.get("job", "")).startswith(job) and "x 32" not in r["job"] and "one step" not in r["job"]
    ]
    return min(times) if times else None


def profile() -> None:
    """Host microseconds per call of each step of sample_patches on a 1024^2 frame (no
    waiting on the GPU between calls beyond what the step itself does)."""
    from texturevlm import _kept_textures, _tensors

    frame = torch.zeros((3, 1024, 1024), dtype=torch.uint8, device="cuda")
    layout = tv.layouts.foveated(1024, 1024, (0.5, 0.5), num_patches=273)
    tv.sample_patches(frame, layout)
    spec = _tensors.image_spec(frame)
    texture = _kept_textures.cuda_texture(spec, "rgba8", 11)
    out = torch.empty((273, 3, 16, 16), device="cuda")
    steps = {
        "image_spec": lambda: _tensors.image_spec(frame),
        "spec.view() (TensorView, checked)": lambda: spec.view(),
        "cuda_texture lookup": lambda: _kept_textures.cuda_texture(spec, "rgba8", 11),
        "empty output": lambda: _tensors.empty("torch", "cuda", 0, (273, 3, 16, 16), "float32"),
        "raw stream": lambda: _tensors.torch_raw_stream()(0),
        "layout.on_device": lambda: layout.on_device("torch", 0),
        "C++ frame_to_patches (a replayed graph)": lambda: texture.frame_to_patches(spec, layout, out, False, 0),
        "C++ sample only (1 launch)": lambda: texture.sample(layout, "torch", out, 3, False, 0),
        "sample_patches, whole": lambda: tv.sample_patches(frame, layout),
    }
    print("\nhost time per call of each step (1024^2 frame):")
    for name, fn in steps.items():
        for _ in range(100):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(2000):
            fn()
        elapsed = (time.perf_counter() - t0) / 2000 * 1e6
        torch.cuda.synchronize()
        print(f"  {name:40s} {elapsed:7.2f} us")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "jobs",
        nargs="?",
        default="patches",
        choices=("patches", "processors", "photos", "host", "encoded", "grad", "fields", "overlay", "calls"),
        help="patches (default): the sampling jobs; processors: HF image processors vs texturevlm; "
        "photos: Qwen2-VL's processor on camera-sized images vs HF; "
        "host: host images through the processors vs HF on the CPU (no GPU needed); "
        "encoded: JPEG bytes -> pixel_values vs Pillow + HF; "
        "grad: differentiable sampling forward + backward vs PyTorch; fields: Gaussian fields; "
        "overlay: drawing vs OpenCV and torchvision; calls: host vs GPU time of the inference calls",
    )
    parser.add_argument("--json", help="write the rows as JSON here")
    parser.add_argument("--tvlm-json", help="tvlm bench --json output, for the C++ engine's frame rows")
    parser.add_argument("--profile", action="store_true", help="host time of each step of the per-frame path")
    args = parser.parse_args(argv)
    if args.jobs == "host":
        from . import host as bench_host

        rate = bench_host.host_copy_bandwidth()
        print(f"texturevlm {tv.__version__}, torch {torch.__version__}, host copy {rate / 1e9:.1f} GB/s\n")
        table = Table(rate)
        bench_host.run(table)
        _write_json(args.json, rate, table, device="host CPU")
        return 0
    if not torch.cuda.is_available():
        print("texturevlm.bench needs a CUDA GPU and PyTorch with CUDA")
        return 77
    bandwidth = copy_bandwidth()
    print(
        f"texturevlm {tv.__version__} on {torch.cuda.get_device_name()}, torch {torch.__version__}, "
        f"device copy {bandwidth / 1e12:.2f} TB/s\n"
    )
    table = Table(bandwidth)
    if args.jobs in ("processors", "photos"):
        from . import processors as bench_processors

        if args.jobs == "photos":
            bench_processors.run_photo_sizes(table, per_call_us)
        else:
            bench_processors.run(table, per_call_us)
        _write_json(args.json, bandwidth, table)
        return 0
    if args.jobs == "encoded":
        from . import encoded as bench_encoded

        bench_encoded.run(table, per_call_us)
        _write_json(args.json, bandwidth, table)
        return 0
    if args.jobs in ("grad", "fields", "overlay", "calls"):
        from . import calls as bench_calls
        from . import fields as bench_fields
        from . import grad as bench_grad
        from . import overlay as bench_overlay

        suites = {"grad": bench_grad, "fields": bench_fields, "overlay": bench_overlay, "calls": bench_calls}
        suites[args.jobs].run(table, per_call_us)
        _write_json(args.json, bandwidth, table)
        return 0
    gen = torch.Generator(device="cuda").manual_seed(0)

    # 273 foveated patches from a 4096^2 texture, per call.
    big = torch.randint(0, 256, (3, 4096, 4096), dtype=torch.uint8, device="cuda", generator=gen)
    pyramid = tv.TexturePyramid(big)
    layout = tv.layouts.foveated(4096, 4096, (0.5, 0.5), num_patches=273)
    out = torch.empty((273, 3, 16, 16), device="cuda")
    patch_bytes = out.numel() * 4
    job = "273 foveated patches from 4096^2 (per call)"
    table.add(job, "texturevlm pyramid.sample(layout)", per_call_us(lambda: pyramid.sample(layout)), patch_bytes)
    table.add(
        job,
        "texturevlm pyramid.sample(layout, out=...)",
        per_call_us(lambda: pyramid.sample(layout, out=out)),
        patch_bytes,
    )
    table.add(
        job,
        "texturevlm pyramid.sample_foveated((0.5, 0.5))",
        per_call_us(lambda: pyramid.sample_foveated((0.5, 0.5))),
        patch_bytes,
    )
    levels = torch_pyramid(big[None].float() / 255)
    meta = torch.from_numpy(layout.metadata[0]).cuda()
    table.add(
        job,
        "PyTorch grid_sample over a ready avg_pool2d pyramid",
        per_call_us(lambda: torch_patches(levels, meta, 16), calls=20, runs=5),
        patch_bytes,
    )
    levels = []  # free the PyTorch pyramid before the next jobs

    # A frame already in a CUDA tensor -> mips -> 273 patches.
    for size in (1024, 4096):
        frame = torch.randint(0, 256, (3, size, size), dtype=torch.uint8, device="cuda", generator=gen)
        layout = tv.layouts.foveated(size, size, (0.5, 0.5), num_patches=273)
        video = tv.TexturePyramid.create(size, size, device="cuda")
        texels = size * size
        floor_bytes = 3 * texels + 4 * texels * 2 + 4 * texels / 3 + patch_bytes  # frame in, level 0, mips, out
        job = f"CUDA frame [3, {size}, {size}] uint8 -> 273 patches"
        reference = tvlm_reference(args.tvlm_json, size)
        note = f"(tvlm bench video: {reference:.1f} us)" if reference else ""

        def update_and_sample():
            video.update(frame)
            return video.sample(layout)

        t = per_call_us(lambda: tv.sample_patches(frame, layout))
        table.add(
            job,
            "texturevlm sample_patches",
            t,
            floor_bytes,
            note + (f" ratio {t[0] / reference:.2f}" if reference else ""),
        )
        frame_out = torch.empty((273, 3, 16, 16), device="cuda")
        t = per_call_us(lambda: tv.sample_patches(frame, layout, out=frame_out))
        table.add(
            job,
            "texturevlm sample_patches(out=...)",
            t,
            floor_bytes,
            note + (f" ratio {t[0] / reference:.2f}" if reference else ""),
        )
        # The same frame as RGBA bytes, channels last (a decoder's or renderer's frame): the
        # chain's first pass reads it, as the C++ engine's rows do.
        rgba = torch.randint(0, 256, (size, size, 4), dtype=torch.uint8, device="cuda", generator=gen)
        rgba_out = torch.empty((273, 4, 16, 16), device="cuda")
        t = per_call_us(lambda: tv.sample_patches(rgba, layout, channels_last=True, out=rgba_out))
        table.add(
            job,
            "texturevlm sample_patches(out=...), the frame as [H, W, 4] RGBA bytes",
            t,
            # The frame read once, level 0 and the mips written, the patches written: the
            # chain's first pass reads the frame itself, so level 0 is not read back (as
            # tvlm bench video's floor for these frames).
            4 * texels * (2 + 1 / 3) + rgba_out.numel() * 4,
            note + (f" ratio {t[0] / reference:.2f}" if reference else ""),
        )
        t = per_call_us(update_and_sample)
        table.add(
            job,
            "texturevlm pyramid.update + pyramid.sample",
            t,
            floor_bytes,
            note + (f" ratio {t[0] / reference:.2f}" if reference else ""),
        )
        meta = torch.from_numpy(layout.metadata[0]).cuda()
        table.add(
            job,
            "PyTorch float + avg_pool2d pyramid + grid_sample",
            per_call_us(lambda: torch_patches(torch_pyramid(frame[None].float() / 255), meta, 16), calls=10, runs=5),
            floor_bytes,
        )

    # generate_mipmaps of a batch.
    for dtype in (torch.uint8, torch.float32):
        batch = (
            torch.randint(0, 256, (32, 3, 1024, 1024), dtype=torch.uint8, device="cuda", generator=gen)
            if dtype == torch.uint8
            else torch.rand((32, 3, 1024, 1024), device="cuda", generator=gen)
        )
        size = batch.element_size()
        floor_bytes = batch.numel() * size * (1 + 1 / 3)  # read the base, write the levels
        job = f"generate_mipmaps [32, 3, 1024, 1024] {str(dtype).replace('torch.', '')}"
        table.add(
            job, "texturevlm generate_mipmaps", per_call_us(lambda: tv.generate_mipmaps(batch), calls=20), floor_bytes
        )
        if dtype == torch.uint8:
            table.add(
                job,
                "PyTorch .float() + avg_pool2d chain",
                per_call_us(lambda: torch_pyramid(batch.float()), calls=20),
                floor_bytes,
            )
        else:
            table.add(job, "PyTorch avg_pool2d chain", per_call_us(lambda: torch_pyramid(batch), calls=20), floor_bytes)

    if args.profile:
        profile()
    _write_json(args.json, bandwidth, table)
    return 0


def _write_json(path: Optional[str], bandwidth: float, table: Table, device: Optional[str] = None) -> None:
    if path:
        with open(path, "w") as f:
            json.dump(
                {"device": device or torch.cuda.get_device_name(), "copy_bandwidth": bandwidth, "rows": table.rows},
                f,
                indent=1,
            )


if __name__ == "__main__":
    sys.exit(main())
