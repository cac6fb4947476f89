"""Patches whose positions, sizes and levels are differentiable (torch): sample_patches with
gradients to each patch's (cu, cv, su, sv, lod), and a retina-like glimpse layout that is a
smooth function of a fixation and a scale, so a model can learn where to look; and
sample_layout, the patches of any engine layout (anisotropic ones included) with the
engine's reference filter, differentiable in the image.

All are compositions of torch operations with `texturevlm.sample_points`, so autograd
carries d loss / d fixation through the layout to the samples and into the image. The
quadtree-style foveated layout (`layouts.foveated`) stays as it is: its patch set changes
in discrete steps as the fixation moves, so it has no gradient to the fixation."""

from __future__ import annotations

import math
from typing import Any, Optional, Union

import numpy as np

from ._core import Error
from ._tensors import dense
from .differentiable import cuda_patches, sample_points


def sample_patches(image: Any, metadata: Any, patch_size: int = 16) -> Any:
    """Patches [B, N, C, P, P] of `image` ([C, H, W] or [B, C, H, W] torch tensor) for
    `metadata` [B, N, 5] (or [N, 5] for one image): rows (cu, cv, su, sv, lod) as the
    layouts' metadata gives them, sample (j, k) at u = cu + ((j + 0.5) / P - 0.5) * su,
    v = cv + ((k + 0.5) / P - 0.5) * sv, at level lod. Differentiable in the image and in
    all five values of every row (lod is a free input here)."""
    import torch

    if patch_size < 1:
        raise Error(f"patch_size is at least 1, not {patch_size}")
    meta = metadata if metadata.dim() == 3 else metadata.unsqueeze(0)
    batch = image if image.dim() == 4 else image.unsqueeze(0)
    if meta.shape[-1] != 5 or meta.shape[0] != batch.shape[0]:
        raise Error(f"metadata is [B, N, 5] for a batch of {batch.shape[0]}; got {list(metadata.shape)}")
    if batch.is_cuda and not torch.compiler.is_compiling():
        # Eager CUDA calls take the fused op (the same points, bit for bit); the torch
        # expression below is what torch.compile traces and what host tensors run.
        work = batch if batch.dtype in (torch.float32, torch.float64) else batch.float()
        if meta.device != work.device:
            raise Error(f"the metadata is on {meta.device} and the image on {work.device}: put them on one device")
        return cuda_patches(work, dense(meta, work.dtype), int(patch_size))
    steps = (torch.arange(patch_size, device=meta.device, dtype=meta.dtype) + 0.5) / patch_size - 0.5
    cu, cv, su, sv, lod = (meta[..., i, None, None] for i in range(5))  # [B, N, 1, 1]
    u = cu + steps[None, None, None, :] * su  # [B, N, 1, P]: along j
    v = cv + steps[None, None, :, None] * sv  # [B, N, P, 1]: along k
    u, v = torch.broadcast_tensors(u, v)
    uv = torch.stack([u, v], dim=-1)  # [B, N, P, P, 2]
    layer = torch.arange(meta.shape[0], device=meta.device)[:, None, None, None].expand(uv.shape[:-1])
    samples = sample_points(batch, uv, lod.expand(uv.shape[:-1]), layer)  # [B, N, P, P, C]
    return samples.permute(0, 1, 4, 2, 3)


#: The engine's 32-byte patch record (shaders/shader_params.h, PatchGpu).
_RECORD = np.dtype(
    [(name, "<f4") for name in ("cu", "cv", "su", "sv", "level", "axis_x", "axis_y")] + [("layer", "<u4")]
)
_RATIO_SLACK = 1e-5  # TVLM_RATIO_SLACK: a footprint ratio this close above an integer takes that many taps


def sample_layout(image: Any, layout: Any, max_anisotropy: int = 16, levels: Optional[int] = None) -> Any:
    """Patches [B, N, C, P, P] of any engine layout (`texturevlm.layouts`) from a torch image
    ([C, H, W] or [B, C, H, W]) in software, differentiable in the image, with the engine's
    reference filtering (engine/sampling/reference_sampling.cpp): level layouts trilinear at each
    patch's level; gradient (anisotropic) layouts with `taps` samples along the footprint's
    longer axis at lod log2(rho_max / taps), averaged (engine/sampling/patch.cpp, gradient_footprint).
    Padding slots are zeros. `levels`: the chain's length (default: the full chain)."""
    import torch

    rec = np.frombuffer(np.ascontiguousarray(layout.records).tobytes(), dtype=_RECORD)
    rec = rec.reshape(layout.images, layout.num_patches)
    p, w, h = layout.patch_size, float(layout.width), float(layout.height)
    f = {name: rec[name].astype(np.float64)[..., None, None] for name in _RECORD.names[:7]}  # [B, N, 1, 1]
    steps = (np.arange(p) + 0.5) / p - 0.5
    a = steps[None, None, None, :] * f["su"] * w  # pixels along the axis (j)
    b = steps[None, None, :, None] * f["sv"] * h  # pixels across it (k)
    ax, ay = f["axis_x"], f["axis_y"]
    u = f["cu"] + (a * ax - b * ay) / w  # [B, N, P, P]
    v = f["cv"] + (a * ay + b * ax) / h
    real = (f["level"] >= 0).astype(np.float64)
    if layout.gradients:
        along, across = f["su"] * w / p, f["sv"] * h / p  # footprint lengths along j and k, in pixels
        rho_max, rho_min = np.maximum(along, across), np.minimum(along, across)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(
                rho_min > 0, np.ceil(rho_max / np.where(rho_min > 0, rho_min, 1) - _RATIO_SLACK), max_anisotropy
            )
            taps = np.where(rho_max <= 1, 1, np.clip(ratio, 1, max(max_anisotropy, 1))).astype(np.int64)
            lod = np.where(rho_max > 0, np.log2(np.where(rho_max > 0, rho_max, 1) / taps), 0.0)
        major_x = along >= across
        du = np.where(major_x, along * ax / w, -across * ay / w)
        dv = np.where(major_x, along * ay / h, across * ax / h)
        i = np.arange(1, int(taps.max()) + 1)  # [T]
        t = i / (taps[..., None] + 1) - 0.5  # [B, N, 1, 1, T]
        weight = (i <= taps[..., None]) / taps[..., None] * real[..., None]
        u, v = u[..., None] + t * du[..., None], v[..., None] + t * dv[..., None]
        lod = np.broadcast_to(lod[..., None], u.shape)
    else:
        u, v, lod = u[..., None], v[..., None], np.broadcast_to(f["level"][..., None], u[..., None].shape)
        weight = real[..., None]
    batch = image if image.dim() == 4 else image.unsqueeze(0)
    shape = u.shape  # [B, N, P, P, T]
    layer = np.broadcast_to(rec["layer"].astype(np.int64)[:, :, None, None, None], shape)
    dev, dtype = batch.device, batch.dtype if batch.dtype in (torch.float32, torch.float64) else torch.float32
    uv = torch.from_numpy(np.stack([u, v], -1)).to(dev, dtype)
    samples = sample_points(
        batch,
        uv,
        torch.from_numpy(np.ascontiguousarray(lod)).to(dev, dtype),
        torch.from_numpy(np.ascontiguousarray(layer)).to(dev),
        levels,
    )  # [B, N, P, P, T, C]
    weights = torch.from_numpy(np.broadcast_to(weight[..., None], shape + (1,)).copy()).to(dev, samples.dtype)
    return (samples * weights).sum(-2).permute(0, 1, 4, 2, 3)


def retina_glimpse(
    fixation: Any,
    width: int,
    height: int,
    rings: int = 3,
    sectors: int = 8,
    scale: Union[float, Any] = 0.08,
    growth: float = 1.8,
    patch_size: int = 16,
) -> Any:
    """Metadata [B, 1 + rings * sectors, 5] of a retina-like glimpse around `fixation`
    ([B, 2] or [2], normalized u, v) in a width x height image: a foveal patch of side
    `scale` (a fraction of the shorter side; a float or a tensor, differentiable), then
    `rings` rings of `sectors` patches each, every ring's patches `growth` times the side of
    the one inside it and touching it, alternate rings turned by half a sector. Each
    patch's lod is log2(texels per sample) of its side, so outer patches read coarser
    levels. Positions, sizes and levels are smooth functions of the fixation and the
    scale: sample_patches(image, retina_glimpse(...)) has gradients to both."""
    import torch

    if rings < 0 or sectors < 1 or growth <= 0 or patch_size < 1:
        raise Error("rings >= 0, sectors >= 1, growth > 0 and patch_size >= 1")
    fix = fixation if fixation.dim() == 2 else fixation.unsqueeze(0)
    short = float(min(width, height))
    scale = torch.as_tensor(scale, dtype=fix.dtype, device=fix.device)
    sides, radii, angles = [scale], [scale * 0], [torch.zeros((), dtype=fix.dtype, device=fix.device)]
    edge = scale / 2  # outer radius of what is placed so far
    for k in range(1, rings + 1):
        side = scale * growth**k
        radius = edge + side / 2
        for s in range(sectors):
            sides.append(side)
            radii.append(radius)
            angles.append(torch.tensor(2 * math.pi * (s + 0.5 * (k % 2)) / sectors, dtype=fix.dtype, device=fix.device))
        edge = radius + side / 2
    side, radius, angle = (torch.stack(torch.broadcast_tensors(*t)) for t in (sides, radii, angles))  # [N]
    cu = fix[:, 0:1] + radius * torch.cos(angle) * short / width
    cv = fix[:, 1:2] + radius * torch.sin(angle) * short / height
    su = (side * short / width).expand_as(cu)
    sv = (side * short / height).expand_as(cu)
    lod = torch.log2(side * short / patch_size).expand_as(cu)
    return torch.stack([cu, cv, su, sv, lod], dim=-1)


def glimpse_patch_count(rings: int = 3, sectors: int = 8) -> int:
    """Patches per image of retina_glimpse."""
    return 1 + rings * sectors
