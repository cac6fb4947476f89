"""python -m texturevlm.bench encoded: JPEG bytes -> pixel_values on the GPU, 8 photos at 1080p
and at 4K, CLIP and Qwen2-VL, in one run:
- HF's usual way: Pillow decodes each image, then HF's fast processor on the GPU;
- texturevlm with device='cuda': nvImageCodec decodes the batch on the GPU, then the processor;
- texturevlm decoding on the host (libjpeg-turbo, one thread per image), then copying;
- the decodes alone (Pillow; nvImageCodec), for what the processors add.
Wall time per call, pipelined; each row next to the floor of writing the decoded pixels and
the outputs once, and the outputs' differences from HF's. The photos are made from
tests/data/photos/f3.jpg (resized, with seeded sensor-like noise so that they cost what a
camera's JPEG costs to decode; quality 90, 4:2:0), eight variants per size."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, List

import numpy as np
import torch

from .. import _core, processors
from ..processors import _encoded
from .common import difference

PHOTO = Path("tests/data/photos/f3.jpg")
MODELS = (
    ("CLIP", "CLIPImageProcessor", processors.CLIPImageProcessor),
    ("Qwen2-VL", "Qwen2VLImageProcessor", processors.Qwen2VLImageProcessor),
)
SIZES = ((1920, 1080, "1080p"), (3840, 2160, "4K"))


def jpeg_photos(width: int, height: int, count: int = 8) -> List[bytes]:
    from PIL import Image

    with Image.open(PHOTO) as file:
        base = np.asarray(file.convert("RGB").resize((width, height), Image.LANCZOS)).astype(np.float32)
    rng = np.random.default_rng(0)
    photos = []
    for k in range(count):
        variant = base[:, ::-1] if k % 2 else base
        variant = np.roll(variant, k * width // count, axis=1)
        noisy = np.clip(variant + rng.normal(0, 4, variant.shape), 0, 255).astype(np.uint8)
        out = io.BytesIO()
        Image.fromarray(noisy).save(out, "JPEG", quality=90)
        photos.append(out.getvalue())
    return photos


def _pillow_rgb(data: bytes) -> Any:
    from PIL import Image

    image = Image.open(io.BytesIO(data))
    return image.convert("RGB")


def run(table: Any, per_call_us: Any) -> None:
    import transformers

    if _encoded.nvimgcodec_module() is None:
        print("nvImageCodec is not installed (pip install nvidia-nvimgcodec-cu13): its rows are the host decode's\n")
    print(f"transformers {transformers.__version__}\n")
    names = [f"images[{i}]" for i in range(8)]
    for width, height, label in SIZES:
        photos = jpeg_photos(width, height)
        megabytes = sum(len(p) for p in photos) / 1e6
        decoded_bytes = 8 * 3 * width * height
        job = f"8 JPEG photos {label} ({megabytes:.1f} MB)"
        pil = [np.asarray(_pillow_rgb(p)) for p in photos]
        gpu = _encoded.decode_encoded(photos, "cuda")
        d = max(np.abs(g.cpu().numpy().astype(np.int16) - p).max() for g, p in zip(gpu, pil))
        mean = np.mean([np.abs(g.cpu().numpy().astype(np.int16) - p).mean() for g, p in zip(gpu, pil)])
        calls = 3 if width > 2000 else 6
        t = per_call_us(lambda: [_pillow_rgb(p).load() for p in photos], calls=calls, runs=3)
        table.add(f"{job} -> decoded", "Pillow decode, one image after another", t, decoded_bytes)
        t = per_call_us(lambda: _core.decode_images(photos, names), calls=calls, runs=3)
        table.add(f"{job} -> decoded", "texturevlm host decode (libjpeg-turbo, threads)", t, decoded_bytes)
        t = per_call_us(lambda: _encoded.decode_encoded(photos, "cuda"), calls=calls * 4, runs=3)
        table.add(
            f"{job} -> decoded",
            "texturevlm GPU decode (nvImageCodec)",
            t,
            decoded_bytes,
            f"vs Pillow's pixels: max {d}, mean {mean:.3f} steps",
        )
        for model, hf_name, ours_cls in MODELS:
            hf_cls = getattr(transformers, hf_name + "Fast", None) or getattr(transformers, hf_name)
            hf = hf_cls()
            ours = ours_cls()
            model_job = f"{job} -> {model} pixel_values"
            out = ours(photos, device="cuda")["pixel_values"]
            floor = decoded_bytes + out.numel() * out.element_size()

            def hf_call() -> Any:
                return hf(images=[_pillow_rgb(p) for p in photos], device="cuda", return_tensors="pt")

            reference = hf_call()["pixel_values"]
            t = per_call_us(hf_call, calls=calls, runs=3)
            hf_time = t[0]
            table.add(model_job, f"HF: Pillow decode + {hf_cls.__name__} on CUDA", t, floor)
            t = per_call_us(lambda: ours(photos, device="cuda"), calls=calls * 4, runs=3)
            note = f"{hf_time / t[0]:5.1f}x HF; vs HF: {difference(out, reference)} (the GPU decode's)"
            table.add(model_job, f"texturevlm {ours_cls.__name__}(bytes, device='cuda')", t, floor, note)

            def host_decoded() -> Any:
                return ours([torch.from_numpy(a).cuda(non_blocking=True) for a in _core.decode_images(photos, names)])

            exact = host_decoded()["pixel_values"]
            t = per_call_us(host_decoded, calls=calls, runs=3)
            note = f"{hf_time / t[0]:5.1f}x HF; vs HF: {difference(exact, reference)}"
            table.add(model_job, "texturevlm host decode + processor on CUDA", t, floor, note)
