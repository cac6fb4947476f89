#!/usr/bin/env python3
"""The jobs of `tvlm bench` written the way a PyTorch user writes them, timed on this machine.

  tvlm mips --out chart                                   # the embedded chart as chart/level_00.png
  tvlm sample --out patches.npy --meta meta.json          # a layout and tvlm's patches of that image
  tvlm bench --json bench.json                            # every suite, one JSON
  python3 python/texturevlm/bench/torch_baseline.py --image chart/level_00.png --meta meta.json \\
      --patches patches.npy --tvlm-json bench.json

Jobs:
  pyramid  an avg_pool2d(2) chain down to 1x1, from uint8 (converted to float first) and from
           float, for a 1024^2 and a 4096^2 RGBA frame and a batch of 32 frames of 1024^2
  patches  the exact layout of `tvlm sample --meta` sampled with grid_sample over that pyramid
           (bilinear, border padding, align_corners=False: texel i of a level of width w has its
           centre at (i+0.5)/w, as in texturevlm), levels blended linearly for fractional LODs
  video    tvlm bench video's jobs: a frame already on the GPU (uint8 or float16 tensor) or in
           pageable host memory (a NumPy array, .to("cuda")) -> float -> avg_pool2d pyramid ->
           the --meta layout's patches from every image of the batch (the layout scaled to the
           frame: the same patch count, places and sizes relative to the image, levels shifted
           by log2 of the size ratio); 1024^2..4096^2, RGBA8 and RGBA16F, batch 1 and 32

--patches compares the PyTorch patches with tvlm's (max |difference|); --check TOL makes the
script exit 1 when that is larger than TOL (the test suite uses this). avg_pool2d drops the
last row/column of odd sizes, where texturevlm's box filter does not: layouts that reach such
levels differ there, and the script says so. GPU times use CUDA events (median over runs of
many launches after warm-up); without CUDA, CPU wall time. Exits 77 when PyTorch is missing.
"""

import argparse
import json
import math
import sys
import time

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:  # the test suite reports this as skipped
    print(
        f"SKIPPED: python/texturevlm/bench/torch_baseline.py needs PyTorch and NumPy ({e}): pip install torch numpy pillow"
    )
    sys.exit(77)


def load_rgba(path):
    from PIL import Image

    return np.array(Image.open(path).convert("RGBA"))  # [H, W, 4] uint8, writable


def pyramid(frame):
    """[B, C, H, W] float -> every level down to 1x1, as a PyTorch user builds it."""
    levels = [frame]
    while tuple(levels[-1].shape[-2:]) != (1, 1):
        h, w = levels[-1].shape[-2:]
        # A side of 1 stays 1, as mip levels do.
        levels.append(F.avg_pool2d(levels[-1], (2 if h > 1 else 1, 2 if w > 1 else 1)))
    return levels


def sample_patches(levels, metadata, patch, channels):
    """metadata [N, 5] = (cu, cv, su, sv, level) -> [B*N, C, P, P] for the B images of the
    pyramid (the same layout in each), sample (j, k) at cu + ((j+0.5)/P - 0.5) su,
    cv + ((k+0.5)/P - 0.5) sv (engine/sampling/patch.h)."""
    meta = torch.as_tensor(metadata, dtype=torch.float32, device=levels[0].device)
    n, batch = meta.shape[0], levels[0].shape[0]
    offsets = (torch.arange(patch, device=meta.device, dtype=torch.float32) + 0.5) / patch - 0.5
    u = meta[:, 0, None, None] + offsets[None, None, :] * meta[:, 2, None, None]  # [N, k, j]
    v = meta[:, 1, None, None] + offsets[None, :, None] * meta[:, 3, None, None]
    u, v = u.expand(n, patch, patch), v.expand(n, patch, patch)
    grid = torch.stack([2 * u - 1, 2 * v - 1], dim=-1)  # grid_sample's [-1, 1]
    lod = meta[:, 4].clamp(0, len(levels) - 1)
    low = lod.floor().long()
    high = (low + 1).clamp(max=len(levels) - 1)
    weight = (lod - low.float())[:, None, None, None]
    out = torch.zeros(batch, n, channels, patch, patch, device=meta.device)
    for level in torch.unique(torch.cat([low, high])).tolist():
        for pick, w in ((low == level, 1 - weight), (high == level, weight)):
            idx = pick.nonzero(as_tuple=True)[0]
            if idx.numel() == 0:
                continue
            g = grid[idx].reshape(1, idx.numel() * patch, patch, 2).expand(batch, -1, -1, -1)
            s = F.grid_sample(
                levels[level][:, :channels], g, mode="bilinear", padding_mode="border", align_corners=False
            )  # [B, C, n*P, P]
            s = s.reshape(batch, channels, idx.numel(), patch, patch).permute(0, 2, 1, 3, 4)
            out.index_add_(1, idx, s * w[idx])
    return out.reshape(batch * n, channels, patch, patch)


def time_us(fn, device, heavy=False):
    """Median and min time per call in microseconds (GPU: 15 runs of 20 calls, `heavy` jobs
    5 runs of 2; CPU: fewer). CUDA events around back-to-back calls: wall time per call
    wherever the host is the bottleneck, as in tvlm bench video."""
    runs, launches = ((5, 2) if heavy else (15, 20)) if device.type == "cuda" else (3, 2)
    for _ in range(3 if device.type == "cuda" else 1):
        fn()
    times = []
    for _ in range(runs):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(launches):
                fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e3 / launches)
        else:
            t0 = time.perf_counter()
            for _ in range(launches):
                fn()
            times.append((time.perf_counter() - t0) * 1e6 / launches)
    times.sort()
    return times[len(times) // 2], times[0]


def tvlm_best(rows, job, prefix=False, part=False):
    """Fastest tvlm median for a job name of `tvlm bench --json` (or a prefix, or a part of it)."""
    best = None
    for r in rows:
        if "one step" in r["job"]:  # a part of a job (one step's GPU time), not the whole job
            continue
        match = r["job"].startswith(job) if prefix else job in r["job"] if part else r["job"] == job
        if match and (best is None or r["median_us"] < best["median_us"]):
            best = r
    return best


def video_jobs(metadata, meta_width, patch, channels, rows, device):
    """tvlm bench video's jobs the PyTorch way; yields table rows."""
    for batch in (1, 32):
        for fmt, dtype in (("rgba8", torch.uint8), ("rgba16f", torch.float16)):
            for size in (1024, 2048, 4096):
                scaled = metadata.copy()
                scaled[:, 4] += math.log2(size / meta_width)  # the same footprint relative to the image
                if dtype == torch.uint8:
                    gpu = torch.randint(0, 256, (batch, 4, size, size), dtype=dtype, device=device)
                    to_float = lambda f: f.float() / 255.0  # noqa: E731
                else:
                    gpu = torch.rand((batch, 4, size, size), device=device).to(dtype)
                    to_float = lambda f: f.float()  # noqa: E731
                host = gpu.cpu().numpy()  # pageable host memory, as a decoder or NumPy hands it over
                what = f"{size}^2 {fmt}" + (f" x {batch}" if batch > 1 else "")
                run = lambda f: sample_patches(pyramid(to_float(f)), scaled, patch, channels)  # noqa: E731
                med, low = time_us(lambda: run(gpu), device)  # noqa: F821
                yield (
                    f"video, CUDA frame {what}: pyramid + patches",
                    med,
                    low,
                    tvlm_best(rows, f"CUDA frame {what} ->", prefix=True),
                )
                med, low = time_us(lambda: run(torch.from_numpy(host).to(device)), device, heavy=True)  # noqa: F821
                yield (
                    f"video, host frame {what}: upload + pyramid + patches",
                    med,
                    low,
                    tvlm_best(rows, f"host frame {what} ->", prefix=True),
                )
                del gpu, host


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image", required=True, help="PNG/JPEG the layout was made for (e.g. tvlm mips' level_00.png)")
    ap.add_argument("--meta", required=True, help="meta.json from tvlm sample")
    ap.add_argument("--patches", help="tvlm's patches.npy of the same image and layout, to compare with")
    ap.add_argument("--check", type=float, help="exit 1 when the patches differ by more than this")
    ap.add_argument("--tvlm-json", nargs="*", default=[], help="tvlm bench --json files, for the ratios")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--jobs", default="pyramid,patches,video", help="comma-separated: pyramid, patches, video")
    args = ap.parse_args()
    device = torch.device(args.device)
    jobs = set(args.jobs.split(","))

    meta = json.load(open(args.meta))
    if meta.get("sampling") != "level":
        sys.exit(
            f"torch_baseline: layout sampling '{meta.get('sampling')}' is not supported "
            "(grid_sample has no gradients-driven anisotropic filter): use a level-sampled layout"
        )
    rgba = load_rgba(args.image)
    if (rgba.shape[1], rgba.shape[0]) != (meta["width"], meta["height"]):
        sys.exit(
            f"torch_baseline: {args.image} is {rgba.shape[1]}x{rgba.shape[0]}, the layout was made for "
            f"{meta['width']}x{meta['height']}"
        )
    frame = torch.as_tensor(rgba, device=device).permute(2, 0, 1)[None].float() / 255.0
    levels = pyramid(frame)
    patch, channels = meta["patch_size"], meta["channels"]
    per_image = meta["patches_per_image"]
    metadata = np.asarray(meta["metadata"], dtype=np.float32)[:per_image]  # the first image's layout

    rows = [r for path in args.tvlm_json for r in json.load(open(path))["rows"]]
    table = []

    if "patches" in jobs:
        out = sample_patches(levels, metadata, patch, channels)
        if args.patches:
            theirs = np.load(args.patches).reshape(-1, channels, patch, patch)[:per_image]
            diff = float(np.abs(out.cpu().numpy() - theirs).max())
            odd = [i for i, l in enumerate(levels) if any(s % 2 and s > 1 for s in l.shape[-2:])]
            print(
                f"patches vs tvlm: max |difference| {diff:.3g} over {per_image} patches"
                + (f" (avg_pool2d drops a row/column below levels {odd})" if odd else "")
            )
            if args.check is not None and not diff <= args.check:
                print(f"FAILED: the PyTorch patches differ from tvlm's by {diff:.3g} > {args.check}")
                return 1
        med, low = time_us(lambda: sample_patches(levels, metadata, patch, channels), device)
        job = (
            f"{per_image} foveated {patch}x{patch} patches, {meta['width']}^2 RGBA8, C={channels} f32"
            if meta["width"] == meta["height"]
            else None
        )
        table.append(
            (
                f"{per_image} patches of {patch}x{patch} from {meta['width']}x{meta['height']} (grid_sample)",
                med,
                low,
                tvlm_best(rows, job) if job else None,
            )
        )
        # tvlm bench sample's job: patches from a ready 4096^2 pyramid (the layout scaled to it).
        scaled = metadata.copy()
        scaled[:, 4] += math.log2(4096 / meta["width"])
        big = pyramid(torch.rand((1, 4, 4096, 4096), device=device))
        med, low = time_us(lambda: sample_patches(big, scaled, patch, channels), device)
        table.append(
            (
                f"{per_image} patches of {patch}x{patch} from a 4096^2 pyramid",
                med,
                low,
                tvlm_best(
                    rows, f"foveated {patch}x{patch} patches (budget 273), 4096^2 RGBA8, C={channels} f32", part=True
                ),
            )
        )
        del big

    if "pyramid" in jobs:
        for size, batch in ((1024, 1), (4096, 1), (1024, 32)):
            u8 = torch.randint(0, 256, (batch, 4, size, size), dtype=torch.uint8, device=device)
            f32 = u8.float() / 255.0
            job = f"full chain, {size}^2 rgba8" + (f" x {batch} layers" if batch > 1 else "")
            best = tvlm_best(rows, job)
            name = f"avg_pool2d pyramid {size}^2" + (f" x {batch}" if batch > 1 else "")
            med, low = time_us(lambda: pyramid(u8.float() / 255.0), device)
            table.append((name + ", from uint8", med, low, best))
            med, low = time_us(lambda: pyramid(f32), device)
            table.append((name + ", from float", med, low, best))

    if "video" in jobs:
        if device.type != "cuda":
            print("video: left out on the CPU (4096^2 x 32 frames take minutes there)")
        else:
            table.extend(video_jobs(metadata, meta["width"], patch, channels, rows, device))

    where = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU (wall time)"
    print(f"\nPyTorch {torch.__version__} on {where}")
    print(f"{'job':<62} {'median us':>10} {'min us':>10} {'tvlm us':>10} {'torch/tvlm':>11}")
    for name, med, low, best in table:
        ratio = f"{med / best['median_us']:.2f}" if best else "-"
        tv = f"{best['median_us']:.2f}" if best else "-"
        print(f"{name:<62} {med:>10.2f} {low:>10.2f} {tv:>10} {ratio:>11}")
    if any(best for *_, best in table):
        print("tvlm us: the fastest tvlm method of the same job in the --tvlm-json files")
        if device.type != "cuda":
            print("note: these PyTorch times are CPU wall time against tvlm's GPU times: run this on the GPU machine")
    return 0


if __name__ == "__main__":
    sys.exit(main())
