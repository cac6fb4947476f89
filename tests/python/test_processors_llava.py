"""LLaVA-NeXT and LLaVA-OneVision processors (AnyRes) against a NumPy transcription of
Hugging Face's rules (hf_reference.py) on host images: best resolution, the resize into it,
the centred zero padding, tile order, the whole image first, pad_for_batching, image_sizes,
OneVision's multi-image squares; and, on the NVIDIA machine, against HF's own processors for
host and CUDA images."""

from __future__ import annotations

import hf_reference as ref
import numpy as np
import pytest
from conftest import needs_cuda, needs_hf, random_image, transformers
from test_processors import assert_hf_values, photo, smooth_image
from texturevlm.processors import (
    LlavaNextImageProcessor,
    LlavaOnevisionImageProcessor,
    ProcessorInputError,
    from_pretrained,
)
from texturevlm.processors.llava_next import (
    LLAVA_NEXT_PINPOINTS,
    ONEVISION_PINPOINTS,
    patch_output_size,
    select_best_resolution,
)

#: llava-hf/llava-onevision-qwen2-*-ov-hf and llava-hf/llava-v1.6-mistral-7b-hf, as their
#: preprocessor_config.json give them.
ONEVISION = {"size": {"height": 384, "width": 384}, "image_mean": [0.5] * 3, "image_std": [0.5] * 3}
NEXT = {
    "size": {"shortest_edge": 336},
    "crop_size": {"height": 336, "width": 336},
    "image_grid_pinpoints": LLAVA_NEXT_PINPOINTS,
}
#: A small AnyRes config with the same rules, so that the reference's loops stay fast in CI.
SMALL = {
    "size": {"height": 32, "width": 32},
    "image_grid_pinpoints": [[h, w] for h in (32, 64, 96) for w in (32, 64, 96)],
    "image_mean": [0.5, 0.4, 0.3],
    "image_std": [0.2, 0.3, 0.4],
}
SIZES = [(1, 1), (5, 3), (31, 33), (40, 90), (90, 40), (64, 64), (100, 37), (17, 200), (200, 17)]


def test_best_resolution_and_resized_size_are_hfs():
    # Random sizes, inside the largest resolution and past it on one side or both, and the
    # resolutions' own sizes and one pixel either side of them.
    gen = np.random.default_rng(7)
    shapes = [tuple(int(v) for v in gen.integers(1, 3000, 2)) for _ in range(300)]
    edges = [(h + d, w + e) for h, w in ONEVISION_PINPOINTS[::5] for d in (-1, 0, 1) for e in (-1, 0, 1)]
    for h, w in SIZES + [(477, 720), (720, 477), (1000, 999), (336, 1008), (4000, 300), (2, 5000)] + shapes + edges:
        for pinpoints in (LLAVA_NEXT_PINPOINTS, ONEVISION_PINPOINTS, SMALL["image_grid_pinpoints"]):
            best = select_best_resolution(h, w, pinpoints)
            assert best == ref.select_best_resolution((h, w), pinpoints), (h, w)
            assert patch_output_size(h, w, *best) == ref.get_patch_output_size((h, w), best), (h, w, best)


@pytest.mark.parametrize("height,width", SIZES)
def test_host_values_follow_hfs_rules(rng, height, width):
    ours = LlavaOnevisionImageProcessor(backend="cpu", **SMALL)
    image = random_image(rng, (3, height, width))
    out = ours([image])
    want, sizes = ref.llava_pixel_values(
        [image], SMALL["image_grid_pinpoints"], 32, SMALL["image_mean"], SMALL["image_std"]
    )
    assert out.pixel_values.shape == want.shape
    assert_hf_values(out.pixel_values, want)
    np.testing.assert_array_equal(out.image_sizes, sizes)
    np.testing.assert_array_equal(out.batch_num_images, [1])
    assert ours.get_number_of_image_patches(height, width) == want.shape[1]


def test_images_with_fewer_tiles_are_zero_padded_and_sizes_kept(rng):
    ours = LlavaOnevisionImageProcessor(backend="cpu", **SMALL)
    images = [random_image(rng, (3, 20, 90)), random_image(rng, (3, 64, 64)), random_image(rng, (3, 5, 3))]
    out = ours(images)
    want, sizes = ref.llava_pixel_values(
        images, SMALL["image_grid_pinpoints"], 32, SMALL["image_mean"], SMALL["image_std"]
    )
    assert_hf_values(out.pixel_values, want)
    np.testing.assert_array_equal(out.image_sizes, [[20, 90], [64, 64], [5, 3]])
    np.testing.assert_array_equal(out.batch_num_images, [1, 1, 1])
    # Without do_pad, each image's own rows.
    rows = ours(images, do_pad=False).pixel_values
    assert [r.shape[0] for r in rows] == [ours.get_number_of_image_patches(*i.shape[1:]) for i in images]
    for r, w in zip(rows, want):
        assert_hf_values(r, w[: r.shape[0]])


def test_onevision_samples_of_several_images_are_squared_and_resized_whole(rng):
    ours = LlavaOnevisionImageProcessor(backend="cpu", **SMALL)
    a, b, c = (random_image(rng, (3, 20, 50)), random_image(rng, (3, 70, 30)), random_image(rng, (3, 40, 90)))
    out = ours([[a, b], [c]])
    want, sizes = ref.llava_pixel_values(
        [a, b, c], SMALL["image_grid_pinpoints"], 32, SMALL["image_mean"], SMALL["image_std"], batch_num_images=[2, 1]
    )
    assert_hf_values(out.pixel_values, want)
    np.testing.assert_array_equal(out.batch_num_images, [2, 1])
    np.testing.assert_array_equal(out.image_sizes, [[20, 50], [70, 30], [40, 90]])


def test_llava_next_values_on_the_photo_follow_hfs_rules():
    image = photo("f3.jpg")
    out = LlavaNextImageProcessor(backend="cpu", **NEXT)([image])
    want, sizes = ref.llava_pixel_values([image], LLAVA_NEXT_PINPOINTS, 336, ref.CLIP_MEAN, ref.CLIP_STD)
    assert_hf_values(out.pixel_values, want)
    assert set(out.keys()) == {"pixel_values", "image_sizes"}
    np.testing.assert_array_equal(out.image_sizes, sizes)


def test_configs_are_found_and_bad_ones_refused():
    assert isinstance(
        from_pretrained({"image_processor_type": "LlavaOnevisionImageProcessor"}), LlavaOnevisionImageProcessor
    )
    assert isinstance(from_pretrained({"processor_class": "LlavaNextProcessor"}), LlavaNextImageProcessor)
    with pytest.raises(ProcessorInputError, match="resize or crop each tile again"):
        LlavaNextImageProcessor(size={"shortest_edge": 384}, crop_size={"height": 336, "width": 336})
    with pytest.raises(ProcessorInputError, match="image_grid_pinpoints"):
        LlavaOnevisionImageProcessor(image_grid_pinpoints=[[384]])
    with pytest.raises(ProcessorInputError, match="image_grid_pinpoints"):
        LlavaOnevisionImageProcessor(image_grid_pinpoints=[])
    with pytest.raises(ProcessorInputError, match=r"\[\[336, 500\]\] are not whole 336-pixel tiles"):
        LlavaNextImageProcessor(image_grid_pinpoints=[[336, 672], [336, 500]])
    # The defaults are the checkpoints' (336 tiles), whose tiles HF does not touch again.
    assert LlavaNextImageProcessor().tile == 336
    # A call's pinpoints are the call's.
    ours = LlavaOnevisionImageProcessor(backend="cpu", **SMALL)
    image = np.zeros((3, 40, 90), np.uint8)
    assert ours(image, image_grid_pinpoints=[[32, 32]]).pixel_values.shape == (1, 2, 3, 32, 32)


# -- on the NVIDIA machine: HF's own processors ------------------------------------------------


def _cuda(x):
    import torch

    return torch.from_numpy(np.ascontiguousarray(x)).cuda()


@needs_cuda
@needs_hf
@pytest.mark.parametrize("family", ["onevision", "next"])
def test_llava_matches_hugging_face_on_each_device(rng, family):
    """HF itself on the photo and smooth images of several shapes, host arrays and CUDA
    tensors: keys, shapes, image_sizes and values within one uint8 rounding tie."""
    config = ONEVISION if family == "onevision" else NEXT
    hf_cls = (
        transformers.LlavaOnevisionImageProcessor if family == "onevision" else transformers.LlavaNextImageProcessor
    )
    ours_cls = LlavaOnevisionImageProcessor if family == "onevision" else LlavaNextImageProcessor
    hf, ours = hf_cls(**config), ours_cls(**config)
    std = config.get("image_std", ref.CLIP_STD)
    step = 1 / (255 * min(std)) + 1e-4
    images = [photo("f3.jpg"), smooth_image(rng, 300, 1300), smooth_image(rng, 1000, 480), smooth_image(rng, 64, 64)]
    for device in ("cpu", "cuda"):
        xs = images if device == "cpu" else [_cuda(i) for i in images]
        batches = [[x] for x in xs] + [xs[:2]]
        if family == "onevision":
            batches.append([[xs[1], xs[2]], [xs[0]]])  # a sample of two images, then one of one
        for batch in batches:
            want = hf(images=batch, return_tensors="pt")
            got = ours(batch, return_tensors="pt")
            assert set(got) == set(want.keys()), family
            for key in want.keys():
                assert tuple(got[key].shape) == tuple(want[key].shape), (family, key, device)
                if key != "pixel_values":
                    assert got[key].tolist() == want[key].tolist(), (family, key)
            d = (got["pixel_values"].cpu() - want["pixel_values"].cpu()).abs()
            assert d.max().item() <= step and (d > 1e-4).float().mean().item() <= 1e-3, (
                family,
                device,
                d.max().item(),
                (d > 1e-4).float().mean().item(),
            )


@pytest.mark.parametrize("do_pad", [True, False])
@pytest.mark.parametrize("family", [LlavaOnevisionImageProcessor, LlavaNextImageProcessor])
def test_a_composed_calls_outputs_equal_the_planned_finish(rng, family, do_pad):
    """A composed call (a CUDA list in a new order, processors/_composed.py) hands its values
    to _finish_composed already in slots of the most rows where do_pad (ComposedCall writes
    them so), else as the images' rows in turn; either way the outputs equal what the planned
    call's finish makes of the rows in turn: pixel_values, image_sizes, batch_num_images.
    Checked here on host arrays, with each image's kept rows and size."""
    from types import SimpleNamespace

    from texturevlm.processors._common import BatchFeature

    processor = family(backend="cpu", do_pad=do_pad)
    rows, sizes = [3, 1, 2], [[300, 400], [224, 224], [120, 700]]
    launches = [SimpleNamespace(rows=n, size=tuple(size)) for n, size in zip(rows, sizes)]
    flat = rng.standard_normal((sum(rows), 3, 4, 4)).astype(np.float32)
    per_sample = processor._samples([np.zeros((2, 2, 3), np.uint8)] * len(rows))[1]
    want = processor._finish(BatchFeature(pixel_values=flat.copy()), rows, sizes, per_sample)
    if do_pad:
        slots = np.zeros((len(rows), max(rows), 3, 4, 4), np.float32)
        for i, start in enumerate(np.cumsum([0] + rows[:-1])):
            slots[i, : rows[i]] = flat[start : start + rows[i]]
        values = slots
    else:
        values = flat.copy()
    got = processor._finish_composed(BatchFeature(pixel_values=values), launches)
    assert list(got.keys()) == list(want.keys())
    for key in want:
        pairs = zip(got[key], want[key]) if isinstance(want[key], list) else [(got[key], want[key])]
        for a, b in pairs:
            assert np.array_equal(np.asarray(a), np.asarray(b)), key
