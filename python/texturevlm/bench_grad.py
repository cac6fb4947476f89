"""python -m texturevlm.bench grad: differentiable sampling, forward + backward, against
PyTorch in the same run. The issue's job: 1M trilinear samples at per-sample LOD from a
4096^2 RGBA float32 texture, gradients to the texture (every level folded into level 0)
and to uv. Beside it: the PyTorch way of the same job (an avg_pool2d pyramid, grid_sample
of every point on every level weighted by its trilinear weight), and grid_sample on level
0 alone (no LOD: a lower bound for any PyTorch version). Each figure next to its floor:
the gradient chain zeroed and read, the image's gradient written, the image read."""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

import texturevlm as tv

from .bench import torch_pyramid


def _torch_trilinear(image: torch.Tensor, uv: torch.Tensor, lod: torch.Tensor) -> torch.Tensor:
    """[N, C] samples: every level sampled at every point, weighted (no host sync)."""
    levels = torch_pyramid(image)
    grid = (uv * 2 - 1).view(1, 1, -1, 2)
    clamped = lod.clamp(0, len(levels) - 1)
    out = 0
    for l, level in enumerate(levels):
        weight = (1 - (clamped - l).abs()).clamp(min=0)
        s = F.grid_sample(level, grid, mode="bilinear", padding_mode="border", align_corners=False)  # [1, C, 1, N]
        out = out + s[0, :, 0, :].t() * weight[:, None]
    return out


def run(table: Any, per_call_us: Any) -> None:
    gen = torch.Generator(device="cuda").manual_seed(0)
    size, points, channels = 4096, 1 << 20, 4
    image = torch.rand((1, channels, size, size), device="cuda", generator=gen).requires_grad_()
    uv = torch.rand((points, 2), device="cuda", generator=gen).requires_grad_()
    lod = torch.rand(points, device="cuda", generator=gen) * 12
    grad = torch.rand((points, channels), device="cuda", generator=gen)
    chain_bytes = image.numel() * 4 * 4 / 3
    floor_bytes = image.numel() * 4 * 2 + 2 * chain_bytes  # image read, its gradient written; chain zeroed + read
    job = f"{points} trilinear samples at per-sample LOD, [{channels}, {size}, {size}] float32, fwd + bwd"

    # Gradients are set, not accumulated (zero_grad(set_to_none=True), torch's default).
    def ours() -> None:
        image.grad = uv.grad = None
        torch.autograd.backward(tv.sample_points(image, uv, lod), grad)

    def theirs() -> None:
        image.grad = uv.grad = None
        torch.autograd.backward(_torch_trilinear(image, uv, lod), grad)

    def level0() -> None:
        image.grad = uv.grad = None
        s = F.grid_sample(image, (uv * 2 - 1).view(1, 1, -1, 2), mode="bilinear", padding_mode="border",
                          align_corners=False)
        torch.autograd.backward(s[0, :, 0, :].t(), grad)

    t = per_call_us(ours, calls=10, runs=5)
    table.add(job, "texturevlm sample_points (software trilinear, atomics + adjoint fold)", t, floor_bytes)
    ratio_base = t[0]
    t = per_call_us(theirs, calls=3, runs=3)
    table.add(job, "PyTorch avg_pool2d pyramid + grid_sample per level", t, floor_bytes,
              f"texturevlm {t[0] / ratio_base:.1f}x faster")
    t = per_call_us(level0, calls=10, runs=5)
    table.add(job, "PyTorch grid_sample on level 0 only (no LOD; a lower bound)", t, floor_bytes,
              f"texturevlm {t[0] / ratio_base:.2f}x this")
    image.grad = uv.grad = None
    # The values agree (the PyTorch pyramid is the same box for power-of-two sizes).
    small = torch.rand((1, channels, 256, 256), device="cuda", generator=gen)
    u, l = uv.detach()[:4096], lod[:4096] * 0.7
    d = (tv.sample_points(small, u, l) - _torch_trilinear(small, u, l)).abs().max().item()
    print(f"  values vs the PyTorch way (256^2, 4096 points): max difference {d:.2e}")
