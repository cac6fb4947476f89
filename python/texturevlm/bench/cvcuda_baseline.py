"""NVIDIA CV-CUDA's way of a processor's job, for `python -m texturevlm.bench processors`:
an antialiased cubic resize (hq_resize), the model's center crop where it has one, rescale +
normalize and the NCHW layout, each CV-CUDA's own operator on one stream; for Qwen2-VL, its
patches then cut by PyTorch's reshape and permute, as HF cuts them. The images are handed to
CV-CUDA as NHWC uint8 tensors, its layout, made before the timed calls. Only where the
`cvcuda-cu13` package imports (an optional dependency of the benchmark alone)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple

if TYPE_CHECKING:
    import torch

#: The jobs CV-CUDA's operators cover: one resize per image, then crop, normalize, layout.
MODELS = ("CLIP", "SigLIP", "Qwen2-VL")


def available() -> Optional[str]:
    """CV-CUDA's version where it imports, else None."""
    try:
        import cvcuda
    except ImportError:
        return None
    return str(getattr(cvcuda, "__version__", "?"))


def _field(sizes: Any, key: str) -> int:
    """One field of HF's size dicts (a dict, or transformers 5's SizeDict)."""
    value = sizes[key] if isinstance(sizes, dict) else getattr(sizes, key)
    return int(value)


def plan(model: str, hf: Any, ours: Any, images: List[Any]) -> Tuple[Tuple[int, int], Optional[tuple]]:
    """The resized (height, width) and the crop (top, left, height, width), or None where
    there is nothing to cut, as HF's processor `hf` computes them for `images` ([3, H, W], one
    size); Qwen2-VL's from the grid of texturevlm's processor `ours`, which equals HF's."""
    height, width = (int(v) for v in images[0].shape[-2:])
    if model == "CLIP":
        short = _field(hf.size, "shortest_edge")
        if height <= width:
            resized = (short, int(short * width / height))
        else:
            resized = (int(short * height / width), short)
        crop_h, crop_w = _field(hf.crop_size, "height"), _field(hf.crop_size, "width")
        if resized == (crop_h, crop_w):  # nothing to cut: no copy in the timed call
            return resized, None
        top = int(round((resized[0] - crop_h) / 2.0))
        left = int(round((resized[1] - crop_w) / 2.0))
        return resized, (top, left, crop_h, crop_w)
    if model == "SigLIP":
        return (_field(hf.size, "height"), _field(hf.size, "width")), None
    if model == "Qwen2-VL":
        _, grid_h, grid_w = (int(v) for v in ours(images)["image_grid_thw"][0])
        return (grid_h * int(hf.patch_size), grid_w * int(hf.patch_size)), None
    raise ValueError(f"CV-CUDA's baseline has no plan for {model}")


def qwen_patches(planar: torch.Tensor, patch: int, merge: int, temporal: int) -> torch.Tensor:
    """HF's Qwen2-VL patches of [N, 3, H, W] images (each repeated over `temporal` frames)."""
    n, c, h, w = planar.shape
    gh, gw = h // patch, w // patch
    x = planar.unsqueeze(1).expand(n, temporal, c, h, w)
    x = x.reshape(n, temporal, c, gh // merge, merge, patch, gw // merge, merge, patch)
    x = x.permute(0, 3, 6, 4, 7, 2, 1, 5, 8)
    return x.reshape(n * gh * gw, c * temporal * patch * patch)


def job(model: str, hf: Any, ours: Any, images: List[torch.Tensor]) -> Callable[[], torch.Tensor]:
    """A callable running CV-CUDA's pipeline on `images` ([3, H, W] uint8 CUDA tensors of one
    size), planned as HF's processor `hf` plans them (plan()), returning pixel_values; its
    buffers are made here, once."""
    import cvcuda
    import torch

    resized, crop = plan(model, hf, ours, images)

    n = len(images)
    stream = cvcuda.as_stream(torch.cuda.current_stream())
    nhwc = torch.stack(images).permute(0, 2, 3, 1).contiguous()
    source = cvcuda.as_tensor(nhwc, "NHWC")
    resized_u8 = torch.empty((n, resized[0], resized[1], 3), dtype=torch.uint8, device="cuda")
    resized_cv = cvcuda.as_tensor(resized_u8, "NHWC")
    out_h, out_w = (crop[2], crop[3]) if crop else resized
    cropped_u8 = torch.empty((n, out_h, out_w, 3), dtype=torch.uint8, device="cuda") if crop else resized_u8
    cropped_cv = cvcuda.as_tensor(cropped_u8, "NHWC")
    scaled = torch.empty((n, out_h, out_w, 3), dtype=torch.float32, device="cuda")
    scaled_cv = cvcuda.as_tensor(scaled, "NHWC")
    normalized = torch.empty_like(scaled)
    normalized_cv = cvcuda.as_tensor(normalized, "NHWC")
    planar = torch.empty((n, 3, out_h, out_w), dtype=torch.float32, device="cuda")
    planar_cv = cvcuda.as_tensor(planar, "NCHW")
    mean = [float(v) for v in hf.image_mean]
    std = [float(v) for v in hf.image_std]
    cubic = cvcuda.Interp.CUBIC
    by_stddev = cvcuda.NormalizeFlags.SCALE_IS_STDDEV

    def run() -> torch.Tensor:
        cvcuda.hq_resize_into(
            resized_cv, source, antialias=True, min_interpolation=cubic, mag_interpolation=cubic, stream=stream
        )
        if crop:
            top, left = crop[0], crop[1]
            cropped_u8.copy_(resized_u8[:, top : top + out_h, left : left + out_w])
        # HF's order: rescale to [0, 1] (float), then (value - mean) / std.
        cvcuda.convertto_into(scaled_cv, cropped_cv, scale=1.0 / 255.0, stream=stream)
        cvcuda.normalize_into(normalized_cv, scaled_cv, mean, std, by_stddev, stream=stream)
        cvcuda.reformat_into(planar_cv, normalized_cv, stream=stream)
        if model == "Qwen2-VL":
            return qwen_patches(planar, int(hf.patch_size), int(hf.merge_size), int(hf.temporal_patch_size))
        return planar

    return run
