"""NVIDIA's nvdiffrast `texture` op as the peer of `texturevlm.sample_points` in
`python -m texturevlm.bench grad`: trilinear samples at a per-sample level of detail
(`filter_mode="linear-mipmap-linear"`, the level given by `mip_level_bias` with no uv
derivatives, `boundary_mode="clamp"`), its mip stack built from the texture inside each call
as texturevlm builds its chain, gradients to the texture through that stack. The texture is
handed over in nvdiffrast's layout ([1, H, W, C], channels last), made once before the timed
calls. Only where `nvdiffrast` imports (built from its source against the local torch)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

if TYPE_CHECKING:
    import torch


def module() -> Optional[Any]:
    """nvdiffrast.torch where it imports, else None."""
    try:
        import nvdiffrast.torch as dr
    except ImportError:
        return None
    return dr


def sampler(dr: Any, image: torch.Tensor, uv: torch.Tensor, lod: torch.Tensor) -> Callable[[], torch.Tensor]:
    """A callable sampling `image` [1, C, H, W] at uv [M, 2], lod [M] as nvdiffrast does,
    returning [M, C] like sample_points. The texture is a leaf of its own in nvdiffrast's
    layout (its .grad is where the texture's gradient goes), made from `image` here; uv and lod
    are the same tensors (views), so the uv gradient reaches `uv`."""
    texture = image.detach().permute(0, 2, 3, 1).contiguous().requires_grad_(image.requires_grad)
    points = uv.shape[0]
    side = 1 << ((points - 1).bit_length() + 1) // 2  # the points as an image of side x (M / side) pixels
    shape = (1, side, points // side) if points % side == 0 else (1, 1, points)

    def run() -> torch.Tensor:
        out = dr.texture(
            texture,
            uv.view(*shape, 2),
            mip_level_bias=lod.view(*shape),
            filter_mode="linear-mipmap-linear",
            boundary_mode="clamp",
        )
        return out.view(uv.shape[0], -1)

    run.leaves = (texture,)  # type: ignore[attr-defined]
    return run
