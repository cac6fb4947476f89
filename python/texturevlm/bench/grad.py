"""python -m texturevlm.bench grad: differentiable sampling, forward + backward, against
PyTorch in the same run. Jobs: 1M trilinear samples at per-sample LOD from a 4096^2 RGBA
float32 texture with gradients to the texture (every level folded into level 0) and to uv
(the issue's job), the same with the image fixed (gradients to uv alone: a model learning
where to look), the same from a 40-channel 1024^2 texture, and 273 foveated 16x16 patches
per image from one and from 32 RGBA 1024^2 images, gradients to the texture; and, forward
only, 273 patches of a 40-channel 1024^2 feature map through the texture unit
(FeaturePyramid) against the software path.
Beside each: the PyTorch way of the same job (an avg_pool2d pyramid, grid_sample of every
point on every level weighted by its trilinear weight), and for the RGBA jobs, grid_sample
on level 0 alone (no LOD: a lower bound for any PyTorch version). Each figure next to its
floor: the image read and its coarse levels written, the coarse levels' gradient zeroed and
read back, the image's gradient written (with the image fixed, the first two alone).
texturevlm's step also runs replayed as a CUDA graph (torch.cuda.CUDAGraph), which takes
the host's launches and autograd out of it. Where nvdiffrast is installed, its `texture` op
(nvdiffrast_baseline.py) runs the 1M-sample jobs too, and the forward alone of the RGBA job
is timed for both, eager and as GPU kernels, with their largest difference."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

import texturevlm as tv

from . import nvdiffrast_baseline
from .common import autograd_floor, kernel_us, torch_pyramid


def _torch_trilinear(image: torch.Tensor, uv: torch.Tensor, lod: torch.Tensor) -> torch.Tensor:
    """[B, M, C] samples of image [B, C, H, W] at uv [B, M, 2], lod [B, M]: every level
    sampled at every point, weighted (no host sync)."""
    levels = torch_pyramid(image)
    grid = (uv * 2 - 1).unsqueeze(1)  # [B, 1, M, 2]
    clamped = lod.clamp(0, len(levels) - 1)
    out = 0
    for l, level in enumerate(levels):
        weight = (1 - (clamped - l).abs()).clamp(min=0)  # [B, M]
        s = F.grid_sample(level, grid, mode="bilinear", padding_mode="border", align_corners=False)  # [B, C, 1, M]
        out = out + s[:, :, 0, :].transpose(1, 2) * weight[..., None]
    return out


def _patch_points(meta: torch.Tensor, patch: int) -> tuple:
    """uv [B, N * P * P, 2] and lod [B, N * P * P] of the patches of metadata [B, N, 5]
    (glimpse.sample_patches's placement), for the PyTorch way of the patch jobs."""
    steps = (torch.arange(patch, device=meta.device) + 0.5) / patch - 0.5
    u = meta[..., 0, None, None] + steps[None, None, None, :] * meta[..., 2, None, None]
    v = meta[..., 1, None, None] + steps[None, None, :, None] * meta[..., 3, None, None]
    u, v = torch.broadcast_tensors(u, v)
    b = meta.shape[0]
    lod = meta[..., 4, None, None].expand(u.shape)
    return torch.stack([u, v], -1).reshape(b, -1, 2), lod.reshape(b, -1)


def _captured(step: Any) -> torch.cuda.CUDAGraph:
    """`step` (a training step, or a forward alone) captured as a CUDA graph, after warm-up
    runs on a side stream (as torch.cuda.make_graphed_callables does)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return graph


def _job(
    table: Any,
    per_call_us: Any,
    job: str,
    image: torch.Tensor,
    ours: Any,
    theirs: Any,
    grad: torch.Tensor,
    extra: Any = None,
    peer: Any = None,
) -> None:
    """Rows of one job: texturevlm, the PyTorch way, `extra` (name, function) and nvdiffrast's
    `peer` (nvdiffrast_baseline.sampler) if given, the peer's with the largest difference of
    its samples from texturevlm's; gradients are set, not accumulated
    (zero_grad(set_to_none=True), torch's default), on each function's own leaves too."""
    image_bytes = image.numel() * 4
    if image.requires_grad:
        floor_bytes = 2 * image_bytes + 3 * image_bytes / 3  # image read, its gradient written; coarse levels 3 times
    else:
        floor_bytes = image_bytes + image_bytes / 3  # image read, its coarse levels written
    leaves = [image] + [t for t in getattr(ours, "leaves", ())]

    def timed(fn: Any) -> Any:
        fn_leaves = leaves + list(getattr(fn, "leaves", ()))

        def step() -> None:
            for t in fn_leaves:
                t.grad = None
            torch.autograd.backward(fn(), grad)

        return step

    t = per_call_us(timed(ours), calls=10, runs=5)
    method = "atomics + adjoint fold" if image.requires_grad else "d/d uv alone: no atomics, no fold"
    table.add(job, f"texturevlm (software trilinear, {method})", t, floor_bytes)
    base = t[0]
    try:
        graph = _captured(timed(ours))
        t = per_call_us(graph.replay, calls=10, runs=5)
        table.add(
            job,
            "texturevlm, the step replayed as a CUDA graph",
            t,
            floor_bytes,
            f"{base / t[0]:.1f}x faster than launching it",
        )
    except RuntimeError as e:  # a capture that fails is a finding, not a crash of the benchmark
        print(f"  {job}: CUDA graph capture failed: {e}")
    t = kernel_us(timed(ours))
    table.add(
        job, "texturevlm, its GPU kernels alone (torch.profiler)", t, floor_bytes, f"eager {base / t[0]:.1f}x this"
    )
    t = per_call_us(
        autograd_floor([image] + list(getattr(ours, "leaves", ())), tuple(grad.shape), grad), calls=10, runs=5
    )
    table.add(
        job,
        "PyTorch's floor: one autograd.Function step launching nothing",
        t,
        floor_bytes,
        f"texturevlm eager {base / t[0]:.1f}x this",
    )
    t = per_call_us(timed(theirs), calls=3, runs=3)
    table.add(
        job,
        "PyTorch avg_pool2d pyramid + grid_sample per level",
        t,
        floor_bytes,
        f"texturevlm {t[0] / base:.1f}x faster",
    )
    if extra is not None:
        t = per_call_us(timed(extra[1]), calls=10, runs=5)
        table.add(job, extra[0], t, floor_bytes, f"texturevlm {t[0] / base:.2f}x this")
    if peer is not None:
        with torch.no_grad():
            d = (peer() - ours()).abs().max().item()
        t = per_call_us(timed(peer), calls=10, runs=5)
        table.add(
            job,
            "nvdiffrast texture (linear-mipmap-linear, its mip stack per call)",
            t,
            floor_bytes,
            f"values: max difference from texturevlm {d:.1e}",
        )
        for leaf in peer.leaves:
            leaf.grad = None
    for leaf in leaves:
        leaf.grad = None


def _forward_rows(table: Any, per_call_us: Any, dr: Any, image: Any, uv: Any, lod: Any) -> None:
    """The forward alone (the chain, then the samples) of the RGBA 1M-sample job: texturevlm
    eager, as a CUDA graph and as GPU kernels, and nvdiffrast eager and as GPU kernels."""
    points, channels, size = uv.shape[0], image.shape[1], image.shape[-1]
    job = (
        f"{points} trilinear samples at per-sample LOD, [{channels}, {size}, {size}] float32, forward (chain + samples)"
    )
    image_bytes = image.numel() * 4
    floor_bytes = image_bytes + image_bytes / 3 + points * channels * 4
    image, uv = image.detach(), uv.detach()

    def ours() -> Any:
        return tv.sample_points(image, uv, lod)

    t = per_call_us(ours, calls=20, runs=5)
    base = t[0]
    table.add(job, "texturevlm sample_points, eager", t, floor_bytes)
    kernel_times = kernel_us(ours)
    kernels = kernel_times[0]
    try:
        graph = _captured(ours)
        t = per_call_us(graph.replay, calls=20, runs=5)
        table.add(
            job, "texturevlm sample_points, replayed as a CUDA graph", t, floor_bytes, f"eager {base / t[0]:.2f}x this"
        )
    except RuntimeError as e:
        print(f"  {job}: CUDA graph capture failed: {e}")
    table.add(
        job,
        "texturevlm sample_points, its GPU kernels alone (torch.profiler)",
        kernel_times,
        floor_bytes,
        f"eager {base / kernels:.2f}x this",
    )
    if dr is None:
        return
    peer = nvdiffrast_baseline.sampler(dr, image, uv, lod)
    t = per_call_us(peer, calls=20, runs=5)
    table.add(job, "nvdiffrast texture, eager", t, floor_bytes, f"texturevlm eager {base / t[0]:.2f}x this")
    peer_times = kernel_us(peer)
    peer_kernels = peer_times[0]
    table.add(
        job,
        "nvdiffrast texture, its GPU kernels alone (torch.profiler)",
        peer_times,
        floor_bytes,
        f"texturevlm's kernels {kernels / peer_kernels:.2f}x these",
    )


def run(table: Any, per_call_us: Any) -> None:
    gen = torch.Generator(device="cuda").manual_seed(0)
    dr = nvdiffrast_baseline.module()
    print(f"nvdiffrast: {'installed' if dr else 'not installed (its rows are left out)'}")
    points = 1 << 20
    # 1M points at per-sample LOD: RGBA 4096^2 (the job) and 40 channels at 1024^2.
    for channels, size in ((4, 4096), (40, 1024)):
        image = torch.rand((1, channels, size, size), device="cuda", generator=gen).requires_grad_()
        uv = torch.rand((points, 2), device="cuda", generator=gen).requires_grad_()
        lod = torch.rand(points, device="cuda", generator=gen) * (size.bit_length() - 1)
        grad = torch.rand((points, channels), device="cuda", generator=gen)

        def ours() -> torch.Tensor:
            return tv.sample_points(image, uv, lod)  # noqa: F821

        ours.leaves = (uv,)  # type: ignore[attr-defined]

        def level0() -> torch.Tensor:
            s = F.grid_sample(
                image,  # noqa: F821
                (uv * 2 - 1).view(1, 1, -1, 2),
                mode="bilinear",
                padding_mode="border",
                align_corners=False,
            )
            return s[0, :, 0, :].t()

        extra = ("PyTorch grid_sample on level 0 only (no LOD; a lower bound)", level0) if channels == 4 else None
        _job(
            table,
            per_call_us,
            f"{points} trilinear samples at per-sample LOD, [{channels}, {size}, {size}] float32, "
            "fwd + bwd (grads: texture, uv)",
            image,
            ours,
            lambda: _torch_trilinear(image, uv[None], lod[None])[0],  # noqa: F821
            grad,
            extra,
            nvdiffrast_baseline.sampler(dr, image, uv, lod) if dr else None,
        )
        if channels == 4:
            _forward_rows(table, per_call_us, dr, image, uv, lod)
            # The image fixed (a model learning where to look): gradients to uv alone.
            image.requires_grad_(False)
            _job(
                table,
                per_call_us,
                f"{points} trilinear samples at per-sample LOD, [{channels}, {size}, {size}] "
                "float32, fwd + bwd (grad: uv; the image fixed)",
                image,
                ours,
                lambda: _torch_trilinear(image, uv[None], lod[None])[0],  # noqa: F821
                grad,
                extra,
                nvdiffrast_baseline.sampler(dr, image, uv, lod) if dr else None,
            )
        del image, uv, lod, grad
    # 273 foveated 16x16 patches per image, gradients to the texture: one image and 32.
    for batch in (1, 32):
        image = torch.rand((batch, 4, 1024, 1024), device="cuda", generator=gen).requires_grad_()
        layout = tv.layouts.foveated(1024, 1024, (0.4, 0.6), 273, 16, images=batch)
        meta = torch.from_numpy(layout.metadata).cuda()
        uv, lod = _patch_points(meta, 16)
        grad = torch.rand((batch, 273, 4, 16, 16), device="cuda", generator=gen)
        _job(
            table,
            per_call_us,
            f"273 foveated 16x16 patches, {batch} x [4, 1024, 1024] float32, fwd + bwd (grad: texture)",
            image,
            lambda: tv.glimpse.sample_patches(image, meta, 16),  # noqa: F821
            lambda: _torch_trilinear(image, uv, lod).view(batch, 273, 16, 16, 4).permute(0, 1, 4, 2, 3),  # noqa: F821
            grad,
        )
        del image, grad
    # Forward only, a 40-channel 1024^2 feature map -> 273 foveated patches: the texture
    # unit (FeaturePyramid: 10 RGBA textures) against the software path and PyTorch.
    features = torch.rand((1, 40, 1024, 1024), device="cuda", generator=gen)
    pyramid = tv.FeaturePyramid(features)
    layout = tv.layouts.foveated(1024, 1024, (0.4, 0.6), 273, 16)
    meta = torch.from_numpy(layout.metadata).cuda()
    uv, lod = _patch_points(meta, 16)
    job = "[40, 1024, 1024] float32 features -> 273 foveated 16x16 patches, forward (mips + sampling)"
    floor_bytes = features.numel() * 4 + 273 * 40 * 256 * 4

    def texture_unit() -> None:
        pyramid.update(features)  # noqa: F821
        pyramid.sample(layout)  # noqa: F821

    t = per_call_us(texture_unit, calls=20, runs=5)
    table.add(job, "texturevlm FeaturePyramid (texture unit, 10 RGBA textures)", t, floor_bytes)
    base = t[0]
    t = per_call_us(lambda: tv.glimpse.sample_patches(features, meta, 16), calls=20, runs=5)  # noqa: F821
    table.add(
        job,
        "texturevlm glimpse.sample_patches (software trilinear)",
        t,
        floor_bytes,
        f"{t[0] / base:.2f}x the texture unit's time",
    )
    t = per_call_us(lambda: _torch_trilinear(features, uv, lod), calls=5, runs=3)  # noqa: F821
    table.add(
        job,
        "PyTorch avg_pool2d pyramid + grid_sample per level",
        t,
        floor_bytes,
        f"{t[0] / base:.2f}x the texture unit's time",
    )
    del features, pyramid
    # The values agree (the PyTorch pyramid is the same box for power-of-two sizes).
    small = torch.rand((1, 4, 256, 256), device="cuda", generator=gen)
    u, l = torch.rand((4096, 2), device="cuda", generator=gen), torch.rand(4096, device="cuda", generator=gen) * 6
    d = (tv.sample_points(small, u, l) - _torch_trilinear(small, u[None], l[None])[0]).abs().max().item()
    print(f"  values vs the PyTorch way (256^2, 4096 points): max difference {d:.2e}")
