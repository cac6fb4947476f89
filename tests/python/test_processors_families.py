"""Gemma 3 and GotOcr2 / InternVL processors against a NumPy transcription of Hugging
Face's rules (hf_reference.py) on host images: sizes, tile grids, pan-and-scan crops,
output order, num_crops / num_patches and values; the bilinear byte resize; and, on the
NVIDIA machine, against HF's own processors for host and CUDA images."""

from __future__ import annotations

import json

import hf_reference as ref
import numpy as np
import pytest
import texturevlm as tv
from conftest import needs_cuda, needs_hf, random_image, transformers
from test_processors import assert_hf_values, photo, smooth_image
from texturevlm.processors import (
    Gemma3ImageProcessor,
    GotOcr2ImageProcessor,
    ProcessorInputError,
    _resize,
    from_pretrained,
)
from texturevlm.processors.got_ocr2 import optimal_tile_grid

#: The model configs' values (google/gemma-3-*-it, OpenGVLab/InternVL3-*-hf), as
#: preprocessor_config.json gives them; InternVL's processor adds crop_to_patches=True.
GEMMA3 = {"size": {"height": 896, "width": 896}, "resample": 2, "image_mean": [0.5] * 3, "image_std": [0.5] * 3}
INTERNVL = {
    "size": {"height": 448, "width": 448},
    "resample": 3,
    "image_mean": [0.485, 0.456, 0.406],
    "image_std": [0.229, 0.224, 0.225],
    "crop_to_patches": True,
    "min_patches": 1,
    "max_patches": 12,
}
SIZES = [(1, 1), (5, 3), (100, 37), (300, 200), (17, 640), (477, 720), (720, 477), (1000, 999), (448, 1400)]


def step(std) -> float:
    """One uint8 step after normalization by `std`."""
    return 1 / (255 * min(std)) + 1e-4


def assert_bilinear_values(got: np.ndarray, want: np.ndarray, capability: str) -> None:
    """HF's values for bilinear host bytes: exact where torch resizes them as bytes; where
    it resizes them as floats (CPUs without AVX2), float rounding may put a value sitting on a
    half-step tie one uint8 step away (HF's own float32 sums do the same against float64)."""
    if capability == "bytes":
        assert_hf_values(got, want)
        return
    assert got.shape == want.shape and got.dtype == np.float32
    d = np.abs(got - want)
    assert d.max() <= step((0.5,)) and (d > 1e-4).mean() <= 1e-3, (d.max(), (d > 1e-4).mean())


@pytest.fixture(params=["bytes", "floats"])
def capability(request, monkeypatch):
    """Both of torchvision's bilinear paths for host bytes: torch's integer passes (AVX2,
    AVX-512 and ARM CPUs) and float passes rounded back (other CPUs)."""
    monkeypatch.setattr(_resize, "_bilinear_bytes", [request.param == "bytes"])
    return request.param


@pytest.mark.parametrize("source,resized", [((477, 720), (896, 896)), ((300, 200), (64, 96)), ((5, 3), (56, 84))])
def test_bilinear_byte_resize_is_torchs_integer_resize(rng, source, resized):
    image = random_image(rng, (3,) + source)
    want = ref.resize_bytes(image, *resized, kind="bilinear")
    got = tv._core.resize_bytes_as_torch(
        np.moveaxis(image, 0, -1), resized[1], resized[0], 0, 0, resized[1], resized[0], filter="bilinear"
    )
    np.testing.assert_array_equal(np.moveaxis(got, -1, 0), want)


def test_the_bilinear_rule_follows_torchvision():
    """torchvision resizes uint8 host images bilinear as bytes on AVX2, AVX-512 and ARM CPUs;
    without torch the capability is read from the CPU's flags (and ATEN_CPU_CAPABILITY)."""
    assert _resize.torch_resizes_bytes("bicubic")
    for capability, machine, as_bytes in (
        ("AVX2", "x86_64", True),
        ("AVX512", "x86_64", True),
        ("DEFAULT", "x86_64", False),
        ("DEFAULT", "aarch64", True),
    ):
        assert _resize.bilinear_bytes_for(capability, machine) is as_bytes
    torch = pytest.importorskip("torch")
    assert _resize._capability_from_cpu() == torch.backends.cpu.get_cpu_capability()
    functional = pytest.importorskip("torchvision.transforms.v2.functional._geometry")
    from torchvision.transforms import InterpolationMode

    assert _resize._native_bilinear() == functional._do_native_uint8_resize_on_cpu(InterpolationMode.BILINEAR)


def test_aten_cpu_capability_lowers_the_cpus_own(monkeypatch):
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    assert _resize._capability_from_cpu() == "DEFAULT"


@pytest.mark.parametrize("height,width", SIZES)
def test_gemma3_matches_hf_rules(rng, capability, height, width):
    image = random_image(rng, (3, height, width))
    want, num_crops = ref.gemma3_pixel_values([image], bytes_for_bilinear=capability == "bytes")
    got = Gemma3ImageProcessor(backend="cpu", **GEMMA3)(image)
    assert set(got) == {"pixel_values", "num_crops"}
    np.testing.assert_array_equal(got.num_crops, num_crops)
    assert_bilinear_values(got.pixel_values, want, capability)


@pytest.mark.parametrize("height,width", [(300, 1300), (1300, 300), (500, 700), (260, 1000), (256, 2000), (900, 4000)])
def test_gemma3_pan_and_scan_crops_follow_the_image(rng, capability, height, width):
    """Each image, then its crops across the long side, in HF's order; num_crops per image."""
    images = [random_image(rng, (3, height, width)), random_image(rng, (3, 400, 400))]
    want, num_crops = ref.gemma3_pixel_values(images, 64, True, capability == "bytes")
    got = Gemma3ImageProcessor(backend="cpu", do_pan_and_scan=True, size={"height": 64, "width": 64})(images)
    np.testing.assert_array_equal(got.num_crops, num_crops)
    assert got.pixel_values.shape == (len(images) + num_crops.sum(), 3, 64, 64)
    assert_bilinear_values(got.pixel_values, want, capability)


def test_gemma3_pan_and_scan_settings_are_read_from_the_config(rng):
    image = random_image(rng, (3, 300, 1300))
    few = Gemma3ImageProcessor(backend="cpu", do_pan_and_scan=True, pan_and_scan_max_num_crops=2, size=32)
    assert few.crops(300, 1300) == [(0, 0, 300, 650), (0, 650, 300, 650)]
    assert few(image).num_crops.tolist() == [2]
    off = Gemma3ImageProcessor(backend="cpu", do_pan_and_scan=True, pan_and_scan_min_ratio_to_activate=5.0, size=32)
    assert off(image).num_crops.tolist() == [0]
    # A call's settings win, as in HF.
    assert Gemma3ImageProcessor(backend="cpu", size=32)(image, do_pan_and_scan=True).num_crops.tolist() == [4]
    with pytest.raises(ProcessorInputError, match="pan_and_scan_min_crop_size"):
        Gemma3ImageProcessor(pan_and_scan_min_crop_size=0)


def test_tile_grids_are_hfs(rng):
    # Random sizes, and sizes whose aspect is exactly a grid's, where grids of one aspect
    # (1x1, 2x2, 3x3) tie and the image's area picks among them.
    exact = [(448 * r, 448 * c) for c in range(1, 7) for r in range(1, 7)] + [
        (h // 4, w // 4) for h, w in ((448, 896), (896, 448))
    ]
    shapes = [tuple(int(v) for v in rng.integers(1, 5000, 2)) for _ in range(400)]
    # Aspects exactly between two neighbouring grids' (p/q and r/s: (ps + rq) / 2qs), which
    # may tie the grids of both.
    grids = sorted({(c, r) for c in range(1, 13) for r in range(1, 13) if c * r <= 12}, key=lambda g: g[0] / g[1])
    shapes += [(2 * q * s, p * s + r * q) for (p, q), (r, s) in zip(grids, grids[1:])]
    for height, width in SIZES + [(448, 448 * 3), (2000, 500), (4096, 4096), (123, 4567)] + exact + shapes:
        for low, high in ((1, 12), (1, 6), (2, 4), (1, 1), (3, 40)):
            want = ref.optimal_tiled_canvas((height, width), (448, 448), low, high)
            assert optimal_tile_grid(height, width, 448, 448, low, high) == want, (height, width, low, high)


@pytest.mark.parametrize("height,width", SIZES + [(448, 1344), (2000, 500)])
def test_internvl_tiles_match_hf_rules(rng, height, width):
    image = random_image(rng, (3, height, width))
    size = 112  # a small tile keeps the NumPy reference quick; the rules are the tile size's
    want, num_patches = ref.got_ocr2_pixel_values([image], size, True, 1, 12)
    got = GotOcr2ImageProcessor(backend="cpu", **{**INTERNVL, "size": {"height": size, "width": size}})(image)
    assert set(got) == {"pixel_values", "num_patches"}
    np.testing.assert_array_equal(got.num_patches, num_patches)
    assert_hf_values(got.pixel_values, want)


def test_internvl_batches_keep_each_images_tiles_then_its_thumbnail(rng):
    """A [B, C, H, W] batch and a list of mixed sizes: image after image, tiles then the
    thumbnail; without crop_to_patches one resized image each."""
    batch = random_image(rng, (2, 3, 200, 500))
    mixed = [random_image(rng, (3, 90, 90)), random_image(rng, (3, 120, 400)), random_image(rng, (3, 400, 150))]
    config = {**INTERNVL, "size": {"height": 64, "width": 64}}
    for images in (batch, mixed):
        listed = list(images)
        want, num_patches = ref.got_ocr2_pixel_values(listed, 64, True, 1, 12)
        got = GotOcr2ImageProcessor(backend="cpu", **config)(images)
        np.testing.assert_array_equal(got.num_patches, num_patches)
        assert_hf_values(got.pixel_values, want)
        want, _ = ref.got_ocr2_pixel_values(listed, 64, False)
        got = GotOcr2ImageProcessor(backend="cpu", **config)(images, crop_to_patches=False)
        assert got.num_patches.tolist() == [1] * len(listed)
        assert_hf_values(got.pixel_values, want)


@pytest.mark.parametrize("name", ["f3.jpg", "verify.jpeg"])
def test_new_families_give_hfs_values_on_photographs(name, capability):
    image = photo(name)
    want, _ = ref.gemma3_pixel_values([image], bytes_for_bilinear=capability == "bytes")
    assert_bilinear_values(Gemma3ImageProcessor(backend="cpu", **GEMMA3)(image).pixel_values, want, capability)
    want, num_patches = ref.got_ocr2_pixel_values([image], 448, True, 1, 12)
    got = GotOcr2ImageProcessor(backend="cpu", **INTERNVL)(image)
    np.testing.assert_array_equal(got.num_patches, num_patches)
    assert_hf_values(got.pixel_values, want)


def test_texture_filter_tiles_like_the_exact_filter(rng):
    """The fast filter cuts the same tiles in the same order (values within its bound)."""
    image = smooth_image(rng, 300, 900)
    exact = GotOcr2ImageProcessor(backend="cpu", **INTERNVL)(image)
    fast = GotOcr2ImageProcessor(backend="cpu", filter="texture", **INTERNVL)(image)
    assert fast.pixel_values.shape == exact.pixel_values.shape
    assert np.abs(fast.pixel_values - exact.pixel_values).mean() < 0.1


@pytest.mark.parametrize(
    "config,match",
    [
        ({"resample": 1}, "bicubic \\(3\\) or bilinear \\(2\\)"),
        ({"min_patches": 5, "max_patches": 2}, "min_patches 5 exceeds max_patches 2"),
        ({"max_patches": 0}, "max_patches"),
        ({"size": {"shortest_edge": 448}}, "'height' and 'width'"),
        ({"crop_to_patches": "yes"}, "crop_to_patches"),
    ],
)
def test_bad_got_ocr2_configs_are_refused_with_a_reason(config, match):
    with pytest.raises(ProcessorInputError, match=match):
        GotOcr2ImageProcessor(**config)


@pytest.mark.parametrize(
    "config,expected",
    [
        ({"image_processor_type": "Gemma3ImageProcessorFast"}, Gemma3ImageProcessor),
        ({"processor_class": "Gemma3Processor"}, Gemma3ImageProcessor),
        (
            {"image_processor_type": "GotOcr2ImageProcessorFast", "processor_class": "InternVLProcessor"},
            GotOcr2ImageProcessor,
        ),
        ({"processor_class": "InternVLProcessor"}, GotOcr2ImageProcessor),
    ],
)
def test_from_pretrained_finds_the_new_families(tmp_path, config, expected):
    (tmp_path / "preprocessor_config.json").write_text(json.dumps(config))
    assert type(from_pretrained(tmp_path, backend="cpu")) is expected


# ---------------------------------------------------------------- against HF (NVIDIA machine)


def _cuda(x):
    import torch

    return torch.from_numpy(np.ascontiguousarray(x)).cuda()


HF_CASES = {
    "gemma3": (
        lambda: transformers.Gemma3ImageProcessor(**GEMMA3),
        lambda **k: Gemma3ImageProcessor(**GEMMA3, **k),
        {},
    ),
    "gemma3_pan_and_scan": (
        lambda: transformers.Gemma3ImageProcessor(**GEMMA3),
        lambda **k: Gemma3ImageProcessor(**GEMMA3, **k),
        {
            "do_pan_and_scan": True,
            "pan_and_scan_min_crop_size": 256,
            "pan_and_scan_max_num_crops": 4,
            "pan_and_scan_min_ratio_to_activate": 1.2,
        },
    ),
    "internvl": (
        lambda: transformers.GotOcr2ImageProcessor(**INTERNVL),
        lambda **k: GotOcr2ImageProcessor(**INTERNVL, **k),
        {},
    ),
}


@needs_cuda
@needs_hf
@pytest.mark.parametrize("case", list(HF_CASES))
def test_new_families_match_hugging_face_on_each_device(rng, case):
    """HF itself on a photo and on smooth images of several shapes, for host arrays (HF on
    the CPU) and CUDA tensors (HF on CUDA): keys, shapes, counts, and values within one
    uint8 rounding tie (CUDA's float sums; the float bilinear of CPUs without AVX2)."""
    make_hf, make_ours, kwargs = HF_CASES[case]
    hf, ours = make_hf(), make_ours()
    std = (GEMMA3 if case.startswith("gemma3") else INTERNVL)["image_std"]
    images = [photo("f3.jpg"), smooth_image(rng, 300, 1300), smooth_image(rng, 1000, 480), smooth_image(rng, 64, 64)]
    for image in images:
        for device in ("cpu", "cuda"):
            x = image if device == "cpu" else _cuda(image)
            want = hf(images=[x], return_tensors="pt", **kwargs)
            got = ours([x], return_tensors="pt", **kwargs)
            assert set(got) == set(want.keys()), case
            for key in want.keys():
                assert tuple(got[key].shape) == tuple(want[key].shape), (case, key, image.shape)
                assert got[key].dtype == want[key].dtype, (case, key)
            count = "num_crops" if "num_crops" in want else "num_patches"
            assert got[count].tolist() == want[count].tolist()
            d = (got["pixel_values"].cpu() - want["pixel_values"].cpu()).abs()
            assert d.max().item() <= step(std) and (d > 1e-4).float().mean().item() <= 1e-3, (
                case,
                device,
                image.shape,
                d.max().item(),
                (d > 1e-4).float().mean().item(),
            )


def test_bicubic_is_the_earlier_name_of_the_exact_filter(rng):
    """filter='bicubic' (the exact filter's name while every model resized bicubic) still
    means 'exact': the model's own resample, bilinear for Gemma 3."""
    image = random_image(rng, (3, 100, 37))
    for cls, config in ((Gemma3ImageProcessor, {"size": 32}), (GotOcr2ImageProcessor, {"size": 32})):
        exact = cls(backend="cpu", filter="exact", **config)(image).pixel_values
        np.testing.assert_array_equal(cls(backend="cpu", filter="bicubic", **config)(image).pixel_values, exact)
    assert Gemma3ImageProcessor(filter="bicubic").filter == "exact"
    with pytest.raises(ProcessorInputError, match="filter is one of exact, texture"):
        Gemma3ImageProcessor(filter="lanczos")


def test_patch_counts_take_hfs_images_kwargs():
    """HF's multimodal processors ask get_number_of_image_patches(height, width,
    images_kwargs) with their merged kwargs: config values among them apply, others and
    None values are ignored."""
    from texturevlm.processors import Qwen2VLImageProcessor

    qwen = Qwen2VLImageProcessor(backend="cpu")
    small = Qwen2VLImageProcessor(backend="cpu", max_pixels=56 * 56 * 4)
    kwargs = {"max_pixels": 56 * 56 * 4, "return_tensors": "pt", "do_resize": None}
    assert qwen.get_number_of_image_patches(1000, 700, kwargs) == small.get_number_of_image_patches(1000, 700)
    assert qwen.get_number_of_image_patches(1000, 700) != small.get_number_of_image_patches(1000, 700)
    internvl = GotOcr2ImageProcessor(backend="cpu", size=448)
    assert internvl.get_number_of_image_patches(1000, 700) == 1
    columns, rows = ref.optimal_tiled_canvas((1000, 700), (448, 448), 1, 12)
    assert internvl.get_number_of_image_patches(1000, 700, {"crop_to_patches": True}) == columns * rows + 1
