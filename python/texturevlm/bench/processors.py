"""python -m texturevlm.bench processors: Hugging Face's CLIP, SigLIP, Qwen2-VL, Gemma 3,
InternVL (GotOcr2, with its tiles), LLaVA-OneVision (AnyRes tiles) and Idefics3 (its 364 tiles
and whole image, each resize from the last) image processors against texturevlm.processors (the
default exact filter, HF's values, and the texture filter) in one run, each with its
model's preprocessor_config.json values, on uint8 CUDA images of 1024^2 and 4096^2, one image and batches
of 8, a batch of 8 images of 8 sizes (the same order each call, then a new order each call), and one
image of a new size each call (a server's requests): wall time per call (calls pipelined, as __main__.py times everything), each next to
its floor (input read once + output written once, over the device copy rate), and the
outputs' differences from HF's on a photograph (tests/data/photos/f3.jpg where the source
tree is at hand, else a smooth synthetic image). NVIDIA's CV-CUDA runs the CLIP, SigLIP and
Qwen2-VL jobs in the same run where it is installed (cvcuda_baseline.py). `photos`
(run_photo_sizes) times Qwen2-VL's processor the same way on camera-sized images."""

from __future__ import annotations

import itertools
import random as random_module
from pathlib import Path
from typing import Any, List, Tuple

import numpy as np
import torch

from .. import processors
from . import cvcuda_baseline
from .common import difference

#: (label, HF's class, ours, the model config's values)
MODELS = (
    ("CLIP", "CLIPImageProcessor", processors.CLIPImageProcessor, {}),
    ("SigLIP", "SiglipImageProcessor", processors.SiglipImageProcessor, {}),
    ("Qwen2-VL", "Qwen2VLImageProcessor", processors.Qwen2VLImageProcessor, {}),
    (
        "Gemma 3",
        "Gemma3ImageProcessor",
        processors.Gemma3ImageProcessor,
        {"size": {"height": 896, "width": 896}, "resample": 2, "image_mean": [0.5] * 3, "image_std": [0.5] * 3},
    ),
    (
        "InternVL",
        "GotOcr2ImageProcessor",
        processors.GotOcr2ImageProcessor,
        {
            "size": {"height": 448, "width": 448},
            "image_mean": [0.485, 0.456, 0.406],
            "image_std": [0.229, 0.224, 0.225],
            "crop_to_patches": True,
        },
    ),
    (
        "LLaVA-OneVision",
        "LlavaOnevisionImageProcessor",
        processors.LlavaOnevisionImageProcessor,
        {"size": {"height": 384, "width": 384}, "image_mean": [0.5] * 3, "image_std": [0.5] * 3},
    ),
    ("Idefics3", "Idefics3ImageProcessor", processors.Idefics3ImageProcessor, {}),
)


PHOTO = Path("tests/data/photos/f3.jpg")

#: A batch of images of several sizes, (height, width) each: one call, eight sizes. Called
#: again with the same sizes in the same order (several cameras' frames), the call is
#: remembered and its resizes run at once on stream branches; in a new order each call (a
#: server's requests), each call is composed of its images' kept launches
#: (processors/_composed.py) or, for a family that composes none (Idefics3), planned on the host.
MIXED_SIZES = ((1080, 1920), (720, 1280), (1024, 1024), (480, 640), (1200, 900), (600, 800), (2048, 1536), (768, 1024))
#: The new-order row's orders: more than the calls a processor remembers (_resize.KEPT_CALLS),
#: so that the row's calls are mostly lists the processor does not remember.
ORDERS = 80
#: The new-size row's images, each of its own size: more than a timing's calls (10 warm-up
#: calls and 5 runs of 50), so every call of ours is a size the processor has not seen.
NEW_SIZES = 300


def _fidelity_image(gen: Any) -> Tuple[Any, str]:
    """The image the differences are measured on: the photograph, else a smooth field."""
    try:
        from PIL import Image

        with Image.open(PHOTO) as file:
            rgb = np.ascontiguousarray(np.asarray(file.convert("RGB")).transpose(2, 0, 1))
        return torch.from_numpy(rgb).cuda(), f"photo {PHOTO.name} {rgb.shape[2]}x{rgb.shape[1]}"
    except (ImportError, OSError):
        # Photo-like content: a smooth field (random noise is all edges).
        field = torch.rand((1, 3, 24, 24), device="cuda", generator=gen) * 255
        smooth = torch.nn.functional.interpolate(field, size=(1024, 1024), mode="bicubic", align_corners=False)
        return smooth.clamp(0, 255).round().to(torch.uint8)[0], "smooth synthetic image"


def run(table: Any, per_call_us: Any) -> List[dict]:
    """Adds the rows to `table` (bench.Table); returns the fidelity rows."""
    gen = torch.Generator(device="cuda").manual_seed(0)

    def random(h: int, w: int) -> Any:
        return torch.randint(0, 256, (3, h, w), dtype=torch.uint8, device="cuda", generator=gen)

    # (label, the image lists calls take in turn, calls per run)
    inputs = [
        (f"{batch} x [3, {size}, {size}]", [[random(size, size) for _ in range(batch)]], 10 if size == 4096 else 20)
        for size in (1024, 4096)
        for batch in (1, 8)
    ]
    mixed = [random(h, w) for h, w in MIXED_SIZES]
    inputs.append(("8 images of 8 sizes (480x640 to 2048x1536)", [mixed], 10))
    order_gen = random_module.Random(0)
    orders = {tuple(range(len(mixed)))}
    while len(orders) < ORDERS:
        orders.add(tuple(order_gen.sample(range(len(mixed)), len(mixed))))
    inputs.append(("8 images of 8 sizes, a new order each call", [[mixed[i] for i in o] for o in orders], 10))
    sizes_gen = random_module.Random(1)
    new_sizes: set = set()
    while len(new_sizes) < NEW_SIZES:
        new_sizes.add((sizes_gen.randint(480, 2048), sizes_gen.randint(480, 2048)))
    inputs.append(("1 image, a new size each call (480 to 2048 a side)", [[random(h, w)] for h, w in new_sizes], 10))
    return _time_jobs(table, per_call_us, inputs, MODELS, gen)


#: `python -m texturevlm.bench photos`: camera-sized images (5, 6 and 12 megapixels, and
#: 4096²), which Qwen2-VL's processor shrinks by 2.2x to 4.2x to its pixel budget.
PHOTO_SIZES = ((1944, 2592), (2000, 3000), (3024, 4032), (4096, 4096))


def run_photo_sizes(table: Any, per_call_us: Any) -> List[dict]:
    """Qwen2-VL's processor on camera-sized images, 1 and 8 a call (HF and CV-CUDA in the
    same run): the sizes a server's photos arrive in, between the 1024² and 4096² rows."""
    gen = torch.Generator(device="cuda").manual_seed(0)
    inputs = [
        (
            f"{batch} x [3, {h}, {w}]",
            [[torch.randint(0, 256, (3, h, w), dtype=torch.uint8, device="cuda", generator=gen) for _ in range(batch)]],
            10,
        )
        for h, w in PHOTO_SIZES
        for batch in (1, 8)
    ]
    return _time_jobs(table, per_call_us, inputs, [m for m in MODELS if m[0] == "Qwen2-VL"], gen)


def _time_jobs(table: Any, per_call_us: Any, inputs: list, models: Any, gen: Any) -> List[dict]:
    """Each model's job on each input: HF's processor, CV-CUDA's (where installed and the job
    is one size) and texturevlm's with each filter, timed in turn; their differences from HF
    on the photograph in the notes."""
    import transformers

    cvcuda_version = cvcuda_baseline.available()
    print(f"transformers {transformers.__version__}; CV-CUDA {cvcuda_version or 'not installed'}\n")
    fidelity = []
    sample, sample_name = _fidelity_image(gen)
    for label, image_lists, calls in inputs:
        images = image_lists[0]

        def turns() -> Any:
            """The image lists in turn from the first: each timing's calls see new sizes where the row's lists differ."""
            lists = itertools.cycle(image_lists)
            return lambda: next(lists)

        for model, hf_name, ours_cls, config in models:
            hf = getattr(transformers, hf_name)(**config)
            job = f"{model} processor, {label} uint8 CUDA"
            out = hf(images=images, return_tensors="pt")["pixel_values"]
            floor_bytes = sum(image.numel() for image in images) + out.numel() * out.element_size()
            pick = turns()
            t = per_call_us(lambda: hf(images=pick(), return_tensors="pt"), calls=calls, runs=5)
            table.add(job, f"HF {hf_name} (transformers {transformers.__version__})", t, floor_bytes)
            hf_time = t[0]
            reference = hf(images=[sample], return_tensors="pt")
            cv_time = None
            cv = None
            # CV-CUDA's jobs take one batch tensor
            one_size = len(image_lists) == 1 and len({image.shape for image in images}) == 1
            if cvcuda_version and model in cvcuda_baseline.MODELS and one_size:
                cv = _cvcuda_job(job, model, hf, ours_cls(**config), images, sample, reference)
            if cv:
                t = per_call_us(cv[0], calls=calls * 5, runs=5)
                method = (
                    f"NVIDIA CV-CUDA {cvcuda_version} (hq_resize antialiased cubic, convertto, normalize, reformat)"
                )
                table.add(job, method, t, floor_bytes, f"{hf_time / t[0]:5.1f}x HF; vs HF: {cv[1]} (photo)")
                cv_time = t[0]
            for filter in ("exact", "texture"):
                ours = ours_cls(filter=filter, **config)
                pick = turns()
                t = per_call_us(lambda: ours(pick()), calls=calls * 5, runs=5)
                off = difference(ours([sample])["pixel_values"], reference["pixel_values"])
                versus = f", {cv_time / t[0]:.1f}x CV-CUDA" if cv_time else ""
                note = f"{hf_time / t[0]:5.1f}x HF{versus}; vs HF: {off} ({sample_name})"
                table.add(job, f"texturevlm {type(ours).__name__}(filter='{filter}')", t, floor_bytes, note)
                fidelity.append(dict(job=job, filter=filter, note=note))
    return fidelity


def _cvcuda_job(job: str, model: str, hf: Any, ours: Any, images: list, sample: Any, reference: Any) -> Any:
    """CV-CUDA's pipeline for `images` and its difference from HF's pixel_values on the
    photograph (`sample`, HF's output `reference`); None, the reason printed, where CV-CUDA
    refuses the job."""
    try:
        pipeline = cvcuda_baseline.job(model, hf, ours, images)
        pipeline()
        off = difference(cvcuda_baseline.job(model, hf, ours, [sample])(), reference["pixel_values"])
    except Exception as error:
        print(f"CV-CUDA skipped for {job}: {type(error).__name__}: {error}")
        return None
    return pipeline, off
