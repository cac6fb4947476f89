"""texturevlm.processors against a NumPy reimplementation of Hugging Face's rules
(hf_reference.py) on host images: sizes, grid_thw, merge and time order, crop, rescale and
normalize, for many sizes, tiny and extreme aspect ratios; inputs in every form HF takes;
bad input refused as HF refuses it. The CUDA path and HF itself: test_processors_cuda.py."""

from __future__ import annotations

import json
from pathlib import Path

import hf_reference as ref
import numpy as np
import pytest
import texturevlm as tv
from conftest import cuda_reason, needs_torch, needs_vulkan, random_image
from texturevlm.processors import (
    CLIPImageProcessor,
    Gemma3ImageProcessor,
    GotOcr2ImageProcessor,
    LlavaOnevisionImageProcessor,
    ProcessorInputError,
    Qwen2VLImageProcessor,
    Qwen2VLVideoProcessor,
    SiglipImageProcessor,
    from_pretrained,
    smart_resize,
)

# One uint8 step after normalization: (1/255) / min(std). CUDA's float resize may differ
# from HF's by that where a value sits on a rounding tie (test_processors_cuda.py).
STEP = 1 / (255 * min(ref.CLIP_STD)) + 1e-4
SIZES = [(1, 1), (3, 5), (28, 28), (56, 84), (100, 37), (224, 224), (300, 200), (17, 640), (1, 150), (1000, 999)]
PHOTOS = Path(__file__).parent.parent / "data" / "photos"


def assert_hf_values(got: np.ndarray, want: np.ndarray) -> None:
    """HF's values: the resized bytes equal, so only the float32 normalization's last bit
    may differ."""
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-6)


def photo(name: str) -> np.ndarray:
    """A photograph of tests/data/photos as [3, H, W] uint8, decoded by Pillow as HF's
    users load images (skips where Pillow is missing)."""
    image = pytest.importorskip("PIL.Image")
    with image.open(PHOTOS / name) as file:
        return np.ascontiguousarray(np.asarray(file.convert("RGB")).transpose(2, 0, 1))


@pytest.mark.parametrize(
    "source,resized,window",
    [
        ((477, 720), (224, 338), (57, 0, 224, 224)),  # CLIP's shortest edge, then its crop
        ((477, 720), (224, 224), (0, 0, 224, 224)),  # SigLIP
        ((477, 720), (476, 728), (0, 0, 728, 476)),  # Qwen2-VL: one side up, one down
        ((300, 200), (308, 196), (0, 0, 196, 308)),
        ((37, 100), (28, 112), (0, 0, 112, 28)),
        ((5, 3), (56, 84), (3, 7, 70, 40)),  # a large upscale, cropped
        ((1, 150), (28, 700), (0, 0, 700, 28)),
        ((64, 64), (64, 20), (0, 0, 20, 64)),  # one side unchanged: torch skips that pass
        ((64, 64), (64, 64), (8, 4, 16, 32)),  # nothing resized: the bytes, cropped
        ((1000, 999), (17, 1000), (0, 0, 1000, 17)),
        # 16 rows at a time across, columns staged 2048 at a time: 37 rows (a partial block),
        # a 50x shrink whose columns span several stretches, and 4500x (taps past a stretch:
        # the scalar pass).
        ((37, 5000), (9, 100), (3, 1, 90, 7)),
        ((3, 9000), (2, 2), (0, 0, 2, 2)),
    ],
)
def test_byte_resize_is_torchs_integer_resize(rng, source, resized, window):
    """_core.resize_bytes_as_torch (C++) against hf_reference.resize_bytes (NumPy, written as
    aten writes it), on random bytes, byte for byte: its AVX2 passes (where the CPU has them)
    and its scalar ones, from planar, channels-last, RGBA (pixels 4 bytes apart) and
    upside-down (negative strides) views."""
    image = random_image(rng, (3,) + source)
    want = ref.resize_bytes(image, *resized)
    left, top, width, height = window
    want = want[:, top : top + height, left : left + width]
    rgba = np.concatenate([np.moveaxis(image, 0, -1), random_image(rng, source + (1,))], axis=-1)
    views = {
        "planar": np.moveaxis(image, 0, -1),
        "channels_last": np.ascontiguousarray(np.moveaxis(image, 0, -1)),
        "rgba": rgba[..., :3],
        "upside_down": np.ascontiguousarray(np.moveaxis(image[:, ::-1], 0, -1))[::-1],
    }
    for name, view in views.items():
        for simd in (True, False):
            got = tv._core.resize_bytes_as_torch(view, resized[1], resized[0], left, top, width, height, simd=simd)
            assert got.shape == (height, width, 3) and got.dtype == np.uint8
            np.testing.assert_array_equal(np.moveaxis(got, -1, 0), want, err_msg=f"{name}, simd={simd}")


@pytest.mark.parametrize(
    "source,resized",
    [
        ((477, 720), (1092, 1456)),
        ((1456, 1092), (364, 273)),
        ((300, 200), (364, 364)),
        ((5, 3), (56, 84)),
        ((37, 900), (9, 100)),
    ],
)
def test_lanczos_byte_resize_is_torchs_integer_resize(rng, source, resized):
    """Lanczos (3 lobes), as torch resizes uint8 images with it (Idefics3's host images from
    torchvision 0.27): both code paths against hf_reference.resize_bytes, from planar and
    channels-last views."""
    image = random_image(rng, (3,) + source)
    want = ref.resize_bytes(image, *resized, kind="lanczos")
    for view in (np.moveaxis(image, 0, -1), np.ascontiguousarray(np.moveaxis(image, 0, -1))):
        for simd in (True, False):
            got = tv._core.resize_bytes_as_torch(
                view, resized[1], resized[0], 0, 0, resized[1], resized[0], "lanczos", simd
            )
            np.testing.assert_array_equal(np.moveaxis(got, -1, 0), want, err_msg=f"simd={simd}")


def test_byte_resize_of_an_image_past_the_kept_scratch_equals_the_scalar_passes(rng):
    """Rows between the passes past the 16 MiB a thread keeps (2400 rows of 2300 RGB pixels)
    take a buffer of their own: the AVX2 passes' bytes equal the scalar passes', before and
    after a small resize that used the kept buffer."""
    large = random_image(rng, (2400, 2400, 3))
    small = random_image(rng, (300, 200, 3))
    for image, (rh, rw) in ((small, (150, 100)), (large, (2300, 2300)), (small, (150, 100))):
        fast = tv._core.resize_bytes_as_torch(image, rw, rh, 0, 0, rw, rh)
        np.testing.assert_array_equal(fast, tv._core.resize_bytes_as_torch(image, rw, rh, 0, 0, rw, rh, simd=False))


def test_byte_resize_writes_into_out_and_refuses_a_wrong_one(rng):
    """out= takes the window's bytes in place (every byte written: a poisoned out is
    overwritten) and returns None; an out of another shape is refused before any write."""
    image = np.ascontiguousarray(np.moveaxis(random_image(rng, (3, 477, 720)), 0, -1))
    want = tv._core.resize_bytes_as_torch(image, 338, 224, 57, 0, 224, 224)
    out = np.full((224, 224, 3), 77, np.uint8)
    assert tv._core.resize_bytes_as_torch(image, 338, 224, 57, 0, 224, 224, out=out) is None
    np.testing.assert_array_equal(out, want)
    wrong = np.full((224, 223, 3), 77, np.uint8)
    with pytest.raises(tv.Error, match=r"out is \[224, 223, 3\]; the resized window is \[224, 224, 3\]"):
        tv._core.resize_bytes_as_torch(image, 338, 224, 57, 0, 224, 224, out=wrong)
    assert (wrong == 77).all()


@pytest.mark.parametrize("filter", ["bicubic", "bilinear", "lanczos"])
def test_byte_resize_equals_torch_on_the_cpu(rng, filter):
    """Against torch itself where it is installed (the NVIDIA machine): interpolate of a
    uint8 CPU tensor with antialias, shrinking, growing and mixed, on noise and a photo."""
    torch = pytest.importorskip("torch")
    if filter == "lanczos":
        try:
            torch.nn.functional.interpolate(torch.zeros((1, 3, 4, 4), dtype=torch.uint8), size=(2, 2), mode=filter)
        except (NotImplementedError, ValueError, RuntimeError):
            pytest.skip(f"torch {torch.__version__} has no Lanczos interpolate")
    cases = [((477, 720), (224, 338)), ((477, 720), (476, 728)), ((300, 200), (308, 196)), ((5, 3), (56, 84))]
    cases += [((1000, 999), (17, 1000)), ((64, 64), (64, 20)), ((1024, 999), (224, 224)), ((2048, 64), (980, 28))]
    images = [(random_image(rng, (3,) + source), resized) for source, resized in cases]
    images.append((photo("f3.jpg"), (224, 338)))
    for image, (rh, rw) in images:
        want = torch.nn.functional.interpolate(
            torch.from_numpy(image)[None], size=(rh, rw), mode=filter, antialias=True, align_corners=False
        )[0].numpy()
        for view in (np.moveaxis(image, 0, -1), np.ascontiguousarray(np.moveaxis(image, 0, -1))):
            got = tv._core.resize_bytes_as_torch(view, rw, rh, 0, 0, rw, rh, filter=filter)
            np.testing.assert_array_equal(np.moveaxis(got, -1, 0), want, err_msg=f"{image.shape} -> {(rh, rw)}")


def test_byte_resize_refuses_empty_images_and_windows_outside():
    image = np.zeros((10, 10, 3), np.uint8)
    with pytest.raises(tv.Error, match="outside the resized"):
        tv._core.resize_bytes_as_torch(image, 5, 5, 1, 0, 5, 5)
    with pytest.raises(tv.Error, match="positive size"):
        tv._core.resize_bytes_as_torch(image, 0, 5, 0, 0, 1, 1)
    with pytest.raises(tv.Error, match="empty"):
        tv._core.resize_bytes_as_torch(np.zeros((0, 10, 3), np.uint8), 5, 5, 0, 0, 5, 5)
    with pytest.raises(tv.Error, match="filter"):
        tv._core.resize_bytes_as_torch(image, 5, 5, 0, 0, 5, 5, filter="box")


@pytest.mark.parametrize("name", ["f3.jpg", "verify.jpeg"])
def test_default_processors_give_hfs_values_on_photographs(name):
    """The default filter on real photographs (noise, JPEG texture, text): HF's values for
    host images, which torch resizes in integers."""
    image = photo(name)
    assert_hf_values(CLIPImageProcessor(backend="cpu")(image).pixel_values, ref.clip_pixel_values([image]))
    assert_hf_values(SiglipImageProcessor(backend="cpu")(image).pixel_values, ref.siglip_pixel_values([image]))
    want, grid = ref.qwen_pixel_values([image])
    got = Qwen2VLImageProcessor(backend="cpu")(image)
    np.testing.assert_array_equal(got.image_grid_thw, grid)
    assert_hf_values(got.pixel_values, want)


@pytest.mark.parametrize("height,width", SIZES + [(4096, 4096), (1024, 1024), (20, 3999), (28 * 40, 28 * 41)])
def test_smart_resize_matches_hf_rule(height, width):
    for budget in ((56 * 56, 28 * 28 * 1280), (128 * 28 * 28, 28 * 28 * 768), (3136, 12845056)):
        got = smart_resize(height, width, 28, *budget)
        assert got == ref.smart_resize(height, width, 28, *budget)
        assert got[0] % 28 == 0 and got[1] % 28 == 0


def test_aspect_ratio_over_200_is_refused_as_hf_does():
    with pytest.raises(ValueError, match="aspect ratio"):
        Qwen2VLImageProcessor()(np.zeros((3, 1, 201), np.uint8))
    with pytest.raises(tv.Error):
        smart_resize(1, 201)


@pytest.mark.parametrize("filter", ["texture", "exact"])
@pytest.mark.parametrize("height,width", [(56, 56), (56, 84), (224, 112), (28 * 7, 28 * 3)])
def test_qwen_without_resampling_is_exact(rng, filter, height, width):
    """Sides already multiples of 28 within the budget: no resampling, so every value must
    equal HF's exactly: this pins the merge order, the time copies and the normalization."""
    image = random_image(rng, (3, height, width))
    want, grid = ref.qwen_pixel_values([image])
    got = Qwen2VLImageProcessor(filter=filter, backend="cpu")(image)
    assert set(got) == {"pixel_values", "image_grid_thw"}
    np.testing.assert_array_equal(got.image_grid_thw, grid)
    assert got.image_grid_thw.dtype == np.int64
    np.testing.assert_allclose(got.pixel_values, want, rtol=0, atol=2e-6)


@pytest.mark.parametrize("height,width", SIZES)
def test_qwen_bicubic_matches_hf_on_many_sizes(rng, height, width):
    image = random_image(rng, (3, height, width))
    want, grid = ref.qwen_pixel_values([image])
    got = Qwen2VLImageProcessor(filter="exact", backend="cpu")(image)
    np.testing.assert_array_equal(got.image_grid_thw, grid)
    assert_hf_values(got.pixel_values, want)


@pytest.mark.parametrize("height,width", [(300, 200), (17, 640), (1, 150), (500, 500)])
def test_clip_and_siglip_bicubic_match_hf(rng, height, width):
    image = random_image(rng, (3, height, width))
    assert_hf_values(
        CLIPImageProcessor(filter="exact", backend="cpu")(image).pixel_values, ref.clip_pixel_values([image])
    )
    assert_hf_values(
        SiglipImageProcessor(filter="exact", backend="cpu")(image).pixel_values, ref.siglip_pixel_values([image])
    )


def smooth_image(rng, height, width):
    """Photo-like content: a smooth random field with a few hard edges."""
    small = rng.integers(0, 256, (3, height // 16 + 2, width // 16 + 2)).astype(np.float64)
    image = ref.resize_bicubic_aa(small, height, width)
    image[:, height // 3 : height // 3 + 4, :] = 255
    image[:, :, width // 2 : width // 2 + 3] = 0
    return np.clip(image, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("height,width", [(500, 700), (1024, 768), (300, 1200)])
def test_texture_filter_is_within_the_documented_bound(rng, height, width):
    """Box mips + trilinear against HF's bicubic on photo-like images: the bound of
    docs/processors.md (mean 0.05, max 1.2 in normalized units on such images)."""
    image = smooth_image(rng, height, width)
    for processor, want in (
        (Qwen2VLImageProcessor(filter="texture", backend="cpu"), ref.qwen_pixel_values([image])[0]),
        (CLIPImageProcessor(filter="texture", backend="cpu"), ref.clip_pixel_values([image])),
        (SiglipImageProcessor(filter="texture", backend="cpu"), ref.siglip_pixel_values([image])),
    ):
        got = processor(image)["pixel_values"]
        d = np.abs(got - want)
        assert got.shape == want.shape
        assert d.mean() < 0.05 and d.max() < 1.2, (type(processor).__name__, d.mean(), d.max())


@needs_vulkan
def test_vulkan_texture_path_equals_cpu_reference_within_sampling_tolerance(rng):
    image = smooth_image(rng, 300, 410)
    cpu = Qwen2VLImageProcessor(filter="texture", backend="cpu")(image).pixel_values
    vk = Qwen2VLImageProcessor(filter="texture", backend="vulkan")(image).pixel_values
    # lavapipe filters with 8-bit weights: a few 1/255 of a texel range, over std ~0.27
    assert np.abs(cpu - vk).max() < 0.1 and np.abs(cpu - vk).mean() < 0.01


def test_mixed_sizes_concatenate_in_order(rng):
    images = [random_image(rng, (3, 56, 84)), random_image(rng, (3, 56, 56)), random_image(rng, (3, 56, 84))]
    want, grid = ref.qwen_pixel_values(images)
    got = Qwen2VLImageProcessor(backend="cpu")(images)
    np.testing.assert_array_equal(got.image_grid_thw, grid)
    np.testing.assert_allclose(got.pixel_values, want, atol=2e-6)
    clip = CLIPImageProcessor(filter="exact", backend="cpu")([random_image(rng, (3, 300, 200)), images[0]])
    assert clip.pixel_values.shape == (2, 3, 224, 224)


def test_batch_tensor_list_and_nested_list_agree(rng):
    batch = random_image(rng, (3, 3, 56, 84))
    p = Qwen2VLImageProcessor(backend="cpu")
    a, b, c = p(batch), p(list(batch)), p([[batch[0]], [batch[1], batch[2]]])
    for other in (b, c):
        np.testing.assert_array_equal(a.pixel_values, other.pixel_values)
        np.testing.assert_array_equal(a.image_grid_thw, other.image_grid_thw)
    assert a.image_grid_thw.shape == (3, 3)


def test_channels_last_grayscale_and_rgba_as_hf_reads_them(rng):
    p = Qwen2VLImageProcessor(backend="cpu")
    rgb = random_image(rng, (3, 56, 84))
    np.testing.assert_array_equal(p(np.moveaxis(rgb, 0, -1)).pixel_values, p(rgb).pixel_values)
    gray = random_image(rng, (56, 84))
    as_rgb = np.repeat(gray[None], 3, axis=0)
    for form in (gray, gray[None], gray[..., None]):
        np.testing.assert_array_equal(p(form).pixel_values, p(as_rgb).pixel_values)
    rgba = random_image(rng, (4, 56, 84))
    f = rgba.astype(np.float32) * np.float32(1 / 255)
    over_white = ((f[:3] * f[3:] + (1 - f[3:])) * np.float32(255.999)).astype(np.uint8)
    np.testing.assert_array_equal(p(rgba).pixel_values, p(over_white).pixel_values)


def test_float_inputs_are_rescaled_as_hf_does(rng):
    image = random_image(rng, (3, 56, 84), np.float32)
    want, _ = ref.qwen_pixel_values([image])  # HF multiplies by 1/255 whatever the dtype
    np.testing.assert_allclose(Qwen2VLImageProcessor(backend="cpu")(image).pixel_values, want, atol=1e-6)


def test_video_frames_pair_in_time_and_the_last_repeats(rng):
    frames = random_image(rng, (5, 3, 112, 168))
    want, grid = ref.qwen_video_values(frames)
    got = Qwen2VLVideoProcessor(filter="exact", backend="cpu")(frames)
    assert set(got) == {"pixel_values_videos", "video_grid_thw"}
    np.testing.assert_array_equal(got.video_grid_thw, grid)
    assert grid[0][0] == 3
    assert_hf_values(got.pixel_values_videos, want)
    two = Qwen2VLVideoProcessor(filter="exact", backend="cpu")([frames[:2], frames[2:4]])
    np.testing.assert_array_equal(two.video_grid_thw, [[1, grid[0][1], grid[0][2]]] * 2)


def test_config_from_disk_equals_the_same_values_in_code(rng, tmp_path):
    config = {
        "image_processor_type": "Qwen2VLImageProcessor",
        "min_pixels": 3136,
        "max_pixels": 28 * 28 * 64,
        "patch_size": 14,
        "temporal_patch_size": 2,
        "merge_size": 2,
        "image_mean": ref.CLIP_MEAN,
        "image_std": ref.CLIP_STD,
        "resample": 3,
        "processor_class": "Qwen2VLProcessor",
    }
    (tmp_path / "preprocessor_config.json").write_text(json.dumps(config))
    image = random_image(rng, (3, 300, 200))
    loaded = from_pretrained(tmp_path, backend="cpu")
    assert isinstance(loaded, Qwen2VLImageProcessor) and loaded.max_pixels == 28 * 28 * 64
    want, grid = ref.qwen_pixel_values([image], 3136, 28 * 28 * 64)
    got = loaded(image)
    np.testing.assert_array_equal(got.image_grid_thw, grid)
    assert got.pixel_values.shape == want.shape
    siglip = SiglipImageProcessor.from_pretrained({"size": {"height": 384, "width": 384}}, backend="cpu")
    assert siglip(image).pixel_values.shape == (1, 3, 384, 384)


def test_output_dtypes(rng):
    image = random_image(rng, (3, 56, 84))
    full = Qwen2VLImageProcessor(backend="cpu")(image).pixel_values
    half = Qwen2VLImageProcessor(backend="cpu", dtype="float16")(image).pixel_values
    assert half.dtype == np.float16
    np.testing.assert_allclose(half.astype(np.float32), full, atol=2e-3)


@pytest.mark.parametrize(
    "bad,match",
    [
        ([], "no images"),
        (np.zeros((2, 20, 20), np.uint8), "channels"),
        (np.zeros((3, 0, 20), np.uint8), "empty"),
        (np.zeros((3, 20, 20), np.int32), "uint8, float16"),
        (np.zeros((1, 1, 3, 20, 20), np.uint8), "shape"),
        ("image.png", "cannot open image .image.png.: No such file"),
    ],
)
def test_bad_images_are_refused_with_a_reason(bad, match):
    for processor in (Qwen2VLImageProcessor(backend="cpu"), CLIPImageProcessor(backend="cpu")):
        with pytest.raises(ValueError, match=match):
            processor(bad)


def test_bad_configs_are_refused_with_a_reason(tmp_path):
    with pytest.raises(ProcessorInputError, match="filter"):
        Qwen2VLImageProcessor(filter="lanczos")(np.zeros((3, 28, 28), np.uint8))
    with pytest.raises(ProcessorInputError, match="image_std"):
        CLIPImageProcessor(image_std=[0.5, 0.0, 0.5])
    with pytest.raises(ProcessorInputError, match="resample"):
        SiglipImageProcessor(resample=1)
    with pytest.raises(ProcessorInputError, match="no processor config"):
        Qwen2VLImageProcessor.from_pretrained(tmp_path / "missing.json")
    with pytest.raises(ProcessorInputError, match="preprocessor_config.json"):
        from_pretrained(tmp_path)
    (tmp_path / "processor_config.json").write_text(json.dumps({"processor_class": "LlavaProcessor"}))
    with pytest.raises(ProcessorInputError, match="holds no image processor"):
        from_pretrained(tmp_path / "processor_config.json")
    with pytest.raises(ProcessorInputError, match="neither an image processor"):
        from_pretrained(tmp_path)
    (tmp_path / "processor_config.json").unlink()
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(ProcessorInputError, match="JSON"):
        from_pretrained(tmp_path / "broken.json")
    with pytest.raises(ProcessorInputError, match="multiples"):
        Qwen2VLImageProcessor(do_resize=False, backend="cpu")(np.zeros((3, 30, 28), np.uint8))
    with pytest.raises(ProcessorInputError, match="larger than"):
        CLIPImageProcessor(crop_size={"height": 300, "width": 300}, backend="cpu")(np.zeros((3, 50, 50), np.uint8))
    with pytest.raises(ProcessorInputError, match="do_convert_rgb"):
        Qwen2VLImageProcessor(do_convert_rgb=False, backend="cpu")(np.zeros((1, 28, 28), np.uint8))
    with pytest.raises(ProcessorInputError, match="different sizes"):
        Qwen2VLVideoProcessor(backend="cpu")([np.zeros((3, 28, 28), np.uint8), np.zeros((3, 56, 28), np.uint8)])
    with pytest.raises(ProcessorInputError, match="CUDA ring"):
        Qwen2VLVideoProcessor().from_ring(tv.TexturePyramid(np.zeros((3, 28, 28), np.uint8), backend="cpu"))


@pytest.mark.parametrize(
    "make,match",
    [
        (
            lambda: CLIPImageProcessor(size={"shortest_edge": "big"}),
            r"size\['shortest_edge'\] must be a whole number from 1 to 268435456",
        ),
        (
            lambda: CLIPImageProcessor(size={"shortest_edge": 0}),
            r"size\['shortest_edge'\] must be a whole number from 1 to 268435456",
        ),
        (
            lambda: CLIPImageProcessor(size={"shortest_edge": True}),
            r"size\['shortest_edge'\] must be a whole number from 1 to 268435456",
        ),
        (
            lambda: CLIPImageProcessor(crop_size=224.5),
            r"crop_size\['height'\] must be a whole number from 1 to 268435456",
        ),
        (lambda: SiglipImageProcessor(size={"height": -224, "width": 224}), r"size\['height'\] must be a whole number"),
        (lambda: SiglipImageProcessor(size="224"), "size must be a number or a dict"),
        (
            lambda: Qwen2VLImageProcessor(min_pixels="3136"),
            r"size\['shortest_edge'\] must be a whole number from 1 to 268435456",
        ),
        (lambda: Qwen2VLImageProcessor(patch_size=0), "patch_size must be a whole number from 1 to 268435456, got 0"),
        (
            lambda: Qwen2VLImageProcessor(merge_size=2.5),
            "merge_size must be a whole number from 1 to 268435456, got 2.5",
        ),
    ],
)
def test_config_numbers_are_checked_when_the_processor_is_made(make, match):
    with pytest.raises(ProcessorInputError, match=match):
        make()


def test_config_numbers_at_their_limits_are_accepted():
    assert CLIPImageProcessor(size={"shortest_edge": 1}, crop_size=1).crop_size == {"height": 1, "width": 1}
    assert CLIPImageProcessor(size={"shortest_edge": 224.0}).size == {"shortest_edge": 224}  # JSON's 224.0
    assert Qwen2VLImageProcessor(patch_size=1, merge_size=1).factor == 1


def test_pil_images_of_other_modes_are_converted_as_hf_converts_them(rng):
    image_module = pytest.importorskip("PIL.Image")
    p = Qwen2VLImageProcessor(backend="cpu")
    gray, alpha = random_image(rng, (56, 84)), random_image(rng, (56, 84))
    # LA: grey with alpha, composited over white like an RGBA image (HF converts it to RGBA).
    la = image_module.fromarray(np.stack([gray, alpha], axis=-1), mode="LA")
    rgba = np.stack([gray, gray, gray, alpha])
    np.testing.assert_array_equal(p(la).pixel_values, p(rgba).pixel_values)
    # I: 32-bit integers, which PIL's RGBA conversion clips to bytes.
    wide = rng.integers(-300, 600, size=(56, 84)).astype(np.int32)
    as_bytes = np.clip(wide, 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(
        p(image_module.fromarray(wide, mode="I")).pixel_values, p(np.stack([as_bytes] * 3)).pixel_values
    )
    # P: a palette image reads as its palette's colours.
    palette = random_image(rng, (256, 3))
    indices = random_image(rng, (56, 84))
    pal = image_module.fromarray(indices, mode="P")
    pal.putpalette(palette.flatten().tolist())
    np.testing.assert_array_equal(p(pal).pixel_values, p(np.moveaxis(palette[indices], -1, 0)).pixel_values)


def test_config_numbers_at_the_upper_limit_and_one_past_it():
    limit = 16384 * 16384
    assert Qwen2VLImageProcessor(max_pixels=limit).max_pixels == limit
    with pytest.raises(ProcessorInputError, match=f"must be a whole number from 1 to {limit}, got {limit + 1}"):
        Qwen2VLImageProcessor(max_pixels=limit + 1)
    for bad in (float("inf"), float("nan")):
        with pytest.raises(ProcessorInputError, match="crop_size"):
            CLIPImageProcessor(crop_size=bad)


@pytest.mark.parametrize("value,ok", [(True, True), (False, True), (1, True), (0, True), (2, False), ("no", False)])
def test_config_flags_take_true_false_0_or_1(value, ok):
    if ok:
        assert CLIPImageProcessor(do_normalize=value).do_normalize is bool(value)
    else:
        with pytest.raises(ProcessorInputError, match=f"do_normalize must be true or false, got {value!r}"):
            CLIPImageProcessor(do_normalize=value)


@pytest.mark.parametrize("value", ["", False, 0, -1 / 255, float("inf"), [1 / 255]])
def test_rescale_factor_is_a_positive_finite_number(value):
    with pytest.raises(ProcessorInputError, match="rescale_factor must be a positive finite number"):
        CLIPImageProcessor(rescale_factor=value)
    assert CLIPImageProcessor(rescale_factor=None).rescale_factor == 1 / 255  # null: the default


@pytest.mark.parametrize("mean", [["a", 0, 0], [True, 0, 0], "abc", {"r": 1}])
def test_image_mean_is_one_number_or_three(mean):
    with pytest.raises(ProcessorInputError, match="image_mean is a number or three numbers"):
        CLIPImageProcessor(image_mean=mean)


@pytest.mark.parametrize("size", [{"height": 224}, {"width": 224}])
def test_a_size_with_one_side_only_is_refused(size):
    with pytest.raises(ProcessorInputError, match="size must have 'height' and 'width', or 'shortest_edge'"):
        SiglipImageProcessor(size=size)


def test_images_of_different_sizes_in_one_call_equal_each_alone():
    # Images share a launch only when size, dtype and layout agree: a list of two sizes is
    # two launches, each as the image alone gives it.
    rng = np.random.default_rng(8)
    a = rng.integers(0, 256, (3, 60, 90), dtype=np.uint8)
    b = rng.integers(0, 256, (3, 90, 60), dtype=np.uint8)
    processor = CLIPImageProcessor(backend="cpu")
    both = processor([a, b], return_tensors="np")["pixel_values"]
    np.testing.assert_array_equal(both[0], processor(a, return_tensors="np")["pixel_values"][0])
    np.testing.assert_array_equal(both[1], processor(b, return_tensors="np")["pixel_values"][0])


def test_call_time_keyword_arguments_run_the_call_as_a_processor_built_with_them(rng):
    # HF's processors take config values per call; texturevlm's own (filter, dtype) too. A
    # call with them equals a processor built with them, and leaves the processor as it was.
    image = random_image(rng, (3, 90, 130))
    siglip = SiglipImageProcessor(backend="cpu")
    default = siglip(image).pixel_values
    for kwargs in (
        {"filter": "texture"},
        {"size": {"height": 64, "width": 48}},
        {"do_normalize": False},
        {"image_mean": [0.1, 0.2, 0.3], "image_std": [0.9, 0.8, 0.7]},
        {"do_rescale": False, "do_normalize": False},
        {"dtype": "float16"},
    ):
        got = siglip(image, **kwargs).pixel_values
        want = SiglipImageProcessor(backend="cpu", **kwargs)(image).pixel_values
        np.testing.assert_array_equal(got, want)
        assert got.shape != default.shape or got.dtype != default.dtype or not np.array_equal(got, default), kwargs
    np.testing.assert_array_equal(siglip(image).pixel_values, default)  # the processor itself unchanged
    np.testing.assert_array_equal(
        siglip.preprocess(image, filter="texture").pixel_values, siglip(image, filter="texture").pixel_values
    )
    # None means the processor's own value, as in HF.
    np.testing.assert_array_equal(siglip(image, size=None, do_normalize=None).pixel_values, default)

    clip = CLIPImageProcessor(backend="cpu")
    cropped = clip(image, crop_size={"height": 100, "width": 80}, size={"shortest_edge": 120}).pixel_values
    assert cropped.shape == (1, 3, 100, 80)
    assert clip(image, do_center_crop=False).pixel_values.shape == (1, 3, 224, 323)


def test_a_call_time_size_wins_over_the_configs_pixel_budget(rng):
    # HF's Qwen2-VL preprocess: size given at call time replaces min_pixels / max_pixels.
    image = random_image(rng, (3, 300, 200))
    qwen = Qwen2VLImageProcessor(backend="cpu", min_pixels=3136, max_pixels=50176)
    _, small = ref.qwen_pixel_values([image], 3136, 50176)
    np.testing.assert_array_equal(qwen(image).image_grid_thw, small)
    _, large = ref.qwen_pixel_values([image], 3136, 1003520)
    assert not np.array_equal(small, large)
    np.testing.assert_array_equal(
        qwen(image, size={"shortest_edge": 3136, "longest_edge": 1003520}).image_grid_thw, large
    )
    np.testing.assert_array_equal(qwen(image, max_pixels=1003520).image_grid_thw, large)


def test_call_time_arguments_it_cannot_honour_are_refused_by_name(rng):
    image = random_image(rng, (3, 40, 40))
    siglip = SiglipImageProcessor(backend="cpu")
    for kwargs, match in (
        ({"do_pad": True}, "do_pad=True is not supported"),
        ({"data_format": "channels_last"}, "data_format='channels_last' is not supported"),
        ({"device": "tpu"}, "device='tpu'"),
        ({"return_tensors": "tf"}, "return_tensors='tf'"),
        ({"sharpen": True}, "unknown keyword argument 'sharpen'"),
        ({"filter": "lanczos"}, "filter is one of"),
        ({"resample": 1}, "resample=1"),
    ):
        with pytest.raises(ProcessorInputError, match=match):
            siglip(image, **kwargs)
    if cuda_reason():  # with a GPU, device='cuda' copies the image there (test_processors_cuda.py)
        with pytest.raises(ProcessorInputError, match="device='cuda'"):
            siglip(image, device="cuda")
    # device='cpu' leaves host images where they are.
    np.testing.assert_array_equal(siglip(image, device="cpu").pixel_values, siglip(image).pixel_values)
    # What HF passes and changes nothing here is accepted.
    same = siglip(image, return_tensors="np", data_format="channels_first", disable_grouping=True, do_pad=False)
    np.testing.assert_array_equal(same.pixel_values, siglip(image).pixel_values)


@pytest.mark.parametrize(
    "config,expected",
    [
        ({"feature_extractor_type": "CLIPFeatureExtractor"}, CLIPImageProcessor),
        ({"feature_extractor_type": "SiglipFeatureExtractor"}, SiglipImageProcessor),
        ({"processor_class": "SiglipProcessor"}, SiglipImageProcessor),
        ({"processor_class": "Qwen2_5_VLProcessor"}, Qwen2VLImageProcessor),
        (
            {"image_processor_type": "Qwen2VLImageProcessorFast", "processor_class": "CLIPProcessor"},
            Qwen2VLImageProcessor,
        ),
    ],
)
def test_from_pretrained_finds_the_class_as_auto_image_processor_does(tmp_path, config, expected):
    (tmp_path / "preprocessor_config.json").write_text(json.dumps(config))
    assert type(from_pretrained(tmp_path, backend="cpu")) is expected
    assert type(from_pretrained(config, backend="cpu")) is expected


def test_from_pretrained_falls_back_to_the_model_type(tmp_path):
    (tmp_path / "preprocessor_config.json").write_text(json.dumps({"size": {"height": 64, "width": 64}}))
    with pytest.raises(ProcessorInputError, match="names no processor class"):
        from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "siglip"}))
    loaded = from_pretrained(tmp_path, backend="cpu")
    assert type(loaded) is SiglipImageProcessor and loaded.size == {"height": 64, "width": 64}
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama"}))
    with pytest.raises(ProcessorInputError, match="no texturevlm processor"):
        from_pretrained(tmp_path)


@pytest.mark.parametrize(
    "config,match",
    [
        ({"image_std": [0.5, 0.0, 0.5]}, "image_std .* non-zero"),
        ({"image_std": [1e-320] * 3}, "image_std .* non-zero in float32"),  # 0 once a float32
        ({"image_mean": [1e39, 0.5, 0.5]}, "image_mean .* finite in float32"),  # inf once a float32
        ({"image_mean": [float("nan")] * 3}, "image_mean .* finite"),
    ],
)
def test_normalization_values_are_checked_as_the_float32_they_become(config, match):
    with pytest.raises(ProcessorInputError, match=match):
        SiglipImageProcessor(backend="cpu", **config)


class _Stage:
    """A stand-in for StagedLaunch: images `members` become new pointers (`offset` added),
    the new batch kept in `keep` as the real stage keeps its tensor."""

    def __init__(self, members, offset):
        self.members, self.offset = members, offset

    def run(self, pointers, keep):
        keep.append(self)
        for i in self.members:
            pointers[i] += self.offset


def test_remembered_calls_map_each_calls_images_to_the_runners_reads():
    """replayed_call, the one mapping every remembered CUDA call goes through: the runner's
    reads of a layout's images, in the runner's order, from a later call's images; after
    the stages where a processor resizes in stages (Idefics3); none where the runner reads
    something that is not one of the images (a composited copy). CUDA runs it; the mapping
    itself is checked here, on every machine."""
    from texturevlm.processors._common import replayed_call

    seen = []

    def call(pointers):
        seen.append(list(pointers))
        return "values"

    def outputs(values):
        return {"pixel_values": values}

    images = [100, 200, 300]
    # The runner reads the images in their order, then an image and its tiles (one read twice), reordered.
    assert replayed_call(call, [100, 200, 300], images, outputs, None)([1, 2, 3]) == {"pixel_values": "values"}
    assert replayed_call(call, [300, 100, 100, 200], images, outputs, None)([1, 2, 3]) == {"pixel_values": "values"}
    assert seen == [[1, 2, 3], [3, 1, 1, 2]]
    # A read of something else (an RGBA image's composited copy): not remembered.
    assert replayed_call(call, [100, 999], images, outputs, None) is None
    # Stages: images 0 and 2 resized first (their intermediates at +1000 and +2000), image 1 read as it is.
    stages = [_Stage([0], 1000), _Stage([2], 2000)]
    after = [1100, 200, 2300]
    replay = replayed_call(call, [2300, 1100, 200], images, outputs, (stages, images, after))
    seen.clear()
    assert replay([10, 20, 30]) == {"pixel_values": "values"}
    assert seen == [[2030, 1010, 20]]
    # The stages' pointers must be one per image, and every read one of them.
    assert replayed_call(call, [1100], images, outputs, (stages, images, [1100, 200])) is None
    assert replayed_call(call, [100], images, outputs, (stages, images, after)) is None
    # Stages that read something else (an RGBA image's composited copy): not remembered.
    assert replayed_call(call, [2300, 1100, 200], images, outputs, (stages, [100, 999, 300], after)) is None


def test_a_processor_keeps_a_bounded_set_of_plans(rng, monkeypatch):
    """A server sees ever new image sizes: a processor's per-size plans and answers (tile
    grids, best resolutions) stay bounded, and a size planned again gives the same values."""
    from texturevlm.processors import GotOcr2ImageProcessor
    from texturevlm.processors._common import KeptPlans

    monkeypatch.setattr(KeptPlans, "LIMIT", 8)
    processor = GotOcr2ImageProcessor(size={"height": 32, "width": 32}, crop_to_patches=True)
    first = smooth_image(rng, 40, 70)
    want = processor(first)["pixel_values"]
    for width in range(41, 61):
        processor(smooth_image(rng, 40, width))
        assert 0 < len(processor._plans) <= 8
    assert np.array_equal(processor(first)["pixel_values"], want)


def test_remembered_calls_hold_a_bounded_number_of_resizers(monkeypatch):
    """A remembered call keeps its resizers alive (a list of several sizes one per size), so
    the remembered calls are cleared before they would hold more than KEPT_CALL_RESIZERS,
    as well as past KEPT_CALLS layouts."""
    from texturevlm.processors import _resize

    monkeypatch.setattr(_resize, "_calls", {})
    monkeypatch.setattr(_resize, "_calls_resizers", 0)
    monkeypatch.setattr(_resize, "KEPT_CALL_RESIZERS", 20)
    monkeypatch.setattr(_resize, "KEPT_CALLS", 4)
    owner = object()

    def remember(layout: int, resizers: int) -> None:
        pending = _resize.PendingCall(("key", layout), [layout], (0, (3, 8, 8)))
        _resize.remember_call(owner, pending, [layout], lambda pointers: pointers, resizers)

    for layout in range(3):
        remember(layout, 8)  # 8, 16, then 24 > 20: cleared before the third
    assert list(_resize._calls) == [("key", 2)] and _resize._calls_resizers == 8
    for layout in range(3, 6):
        remember(layout, 1)
    assert len(_resize._calls) == 4 and _resize._calls_resizers == 11
    remember(6, 1)  # a fifth layout: past KEPT_CALLS
    assert list(_resize._calls) == [("key", 6)] and _resize._calls_resizers == 1
    # A call that read other pointers than its layout's (a composited copy) is not kept.
    _resize.remember_call(
        owner, _resize.PendingCall(("key", 7), [7], (0, (3, 8, 8))), [70], lambda pointers: pointers, 1
    )
    assert ("key", 7) not in _resize._calls


def test_resizers_of_any_size_are_kept_for_a_bounded_number_of_threads(monkeypatch):
    """A first sight of a size runs on its thread's resizer of any size. A server starting
    a thread per request must not keep one (and the rows it grew) per thread it ever ran:
    past KEPT_ANY_SIZE, the least recently used goes."""
    import threading
    from types import SimpleNamespace

    from texturevlm.processors import _resize

    made = []

    class Resizer:
        def __init__(self, device, kernel, dtype, channels, width, height, images, skipped, levels):
            assert (width, height) == (0, 0) and kernel == "bicubic"
            made.append(self)

    monkeypatch.setattr(_resize, "_core", SimpleNamespace(CudaImageResizer=Resizer))
    monkeypatch.setattr(_resize, "_any_size", {})
    monkeypatch.setattr(_resize, "KEPT_ANY_SIZE", 4)
    first = _resize._any_size_resizer((threading.get_ident(), 0, "bicubic", "uint8"))
    for thread in range(10):
        _resize._any_size_resizer((thread, 0, "bicubic", "uint8"))
        # The first thread's, used between the others: kept as the most recently used.
        assert _resize._any_size_resizer((threading.get_ident(), 0, "bicubic", "uint8")) is first
        assert len(_resize._any_size) <= 4
    assert len(made) == 11 and first in _resize._any_size.values()


def test_kept_image_launches_compose_a_new_order_once_per_thread(monkeypatch):
    """_composed's bookkeeping (no GPU: launches are never run here). A planned mixed list
    keeps the launches of each image whose every output ran alone on a resizer of its size,
    reading the image itself; a later list of those layouts is composed; other threads,
    other processors and layouts not kept compose nothing; at most KEPT_IMAGE_LAUNCHES
    layouts are kept."""
    import threading
    from types import SimpleNamespace

    from texturevlm.processors import _composed, _resize

    monkeypatch.setattr(_composed, "_image_launches", {})
    processor = SimpleNamespace(filter="bicubic", dtype="float32")
    shapes = ((3, 10, 20), (3, 30, 40), (3, 50, 60))
    strides = ((200, 20, 1), (1200, 40, 1), (3000, 60, 1))

    def pending(order, key):
        layout = (len(order), tuple(shapes[i] for i in order), "uint8", "cuda:0", tuple(strides[i] for i in order))
        return _resize.PendingCall(("layout", key), [100 + i for i in order], layout)

    def launch(offset, any_size=False):
        return _resize.CudaLaunch(object(), "uint8", [1, 1, 1], 8, 8, None, 4 * offset, any_size)

    def part(image, offset, stride, count=1):
        spec = SimpleNamespace(height=shapes[image][1], width=shapes[image][2])
        return SimpleNamespace(specs=(spec,), offset=offset, stride=stride, count=count)

    row = 3 * 4 * 4
    planned = pending((0, 1, 2), "planned")
    # Image 0 alone on one part (a row); image 1 on two (its tiles, two rows, then its
    # thumbnail); image 2 on a resizer of any size (a first sight). Runs read pointers by
    # their first image: image 1's two runs read it twice.
    parts = [part(0, 0, row), part(1, row, 3 * row), part(1, 3 * row, 3 * row), part(2, 4 * row, row)]
    runs = [(launch(p.offset, any_size=i == 3), i, i + 1) for i, p in enumerate(parts)]
    pointers = [100, 101, 101, 102]
    counts = {"num_patches": [1, 3, 1]}
    _composed.keep_image_launches(processor, planned, runs, parts, pointers, (5, 3, 4, 4), [[1, 2, 3]] * 3, counts)
    assert len(_composed._image_launches) == 2
    first, second = _composed._image_launches.values()
    assert first.rows == 1 and first.tail == (3, 4, 4) and first.grid == [1, 2, 3] and first.size == (10, 20)
    assert [piece.offset_bytes for piece in first.pieces] == [0]
    assert second.rows == 3 and second.counts == (("num_patches", 3),) and second.size == (30, 40)
    assert [piece.offset_bytes for piece in second.pieces] == [0, 4 * 2 * row]
    assert _composed.composed_counts([second, first]) == {"num_patches": [3, 1]}
    # A run reading another pointer than its image (a padded or composited copy): not kept.
    monkeypatch.setattr(_composed, "_image_launches", {})
    _composed.keep_image_launches(processor, planned, runs, parts, [100, 101, 999, 102], (5, 3, 4, 4), None, None)
    assert [kept.rows for kept in _composed._image_launches.values()] == [1]
    _composed.keep_image_launches(processor, planned, runs, parts, pointers, (5, 3, 4, 4), [[1, 2, 3]] * 3, counts)
    # Image 2's launch is not kept: a list with it is planned.
    assert _composed.composed_launches(processor, pending((2, 0, 1), "with 2")) is None
    # A new order of images 1 and 0: composed (and remembered by the processor as a
    # ComposedCall; composed again where the remembered calls were cleared).
    new = pending((1, 0), "new")
    found = _composed.composed_launches(processor, new)
    assert found is not None and [k.pieces[0] for k in found] == [
        runs[1][0]._replace(offset_bytes=0),
        runs[0][0]._replace(offset_bytes=0),
    ]
    assert _composed.composed_launches(processor, new) == found
    # The composed call's layout: image 1's three rows (its two runs from its first value
    # and past its two tile rows), then image 0's row; in slots of 3 rows (LLaVA's padding),
    # image 0's slot starts 3 rows in and has 2 rows of zeros after its own.
    call = _composed.ComposedCall(found, 0, "float32", None, True, lambda values: values)
    assert call.shape == (4, 3, 4, 4) and not call.padding
    assert [(i, piece.offset_bytes, start) for i, piece, start in call.runs] == [
        (0, 0, 0),
        (0, 4 * 2 * row, 0),
        (1, 0, 4 * 3 * row),
    ]
    slotted = _composed.ComposedCall(found, 0, "float16", 3, True, lambda values: values)
    assert slotted.shape == (2, 3, 3, 4, 4) and slotted.padding == [(1, 1)]
    assert [start for _, _, start in slotted.runs] == [0, 0, 2 * 3 * row]
    assert call.branched == _composed.BRANCHED  # three runs on three resizers
    assert not _composed.ComposedCall(found, 0, "float32", None, False, lambda values: values).branched
    # Another processor (a reused id too) and another thread compose nothing.
    other = SimpleNamespace(filter="bicubic", dtype="float32")
    assert _composed.composed_launches(other, pending((1, 0), "other")) is None
    result = []
    worker = threading.Thread(
        target=lambda: result.append(_composed.composed_launches(processor, pending((0, 1), "t")))
    )
    worker.start()
    worker.join()
    assert result == [None]
    # A list holding a batch ([B, C, H, W]: a part's first image is not its place in the
    # list) keeps and composes nothing.
    batched = _resize.PendingCall(
        ("layout", "b"),
        [100, 101],
        (2, ((2, 3, 10, 20), shapes[1]), "uint8", "cuda:0", ((600, 200, 20, 1), strides[1])),
    )
    kept = dict(_composed._image_launches)
    _composed.keep_image_launches(
        processor,
        batched,
        [(launch(0), 0, 2), (launch(2 * row), 2, 3)],
        [part(0, 0, row, count=2), part(1, 2 * row, row)],
        [100, 100, 101],
        (3, 3, 4, 4),
        None,
        None,
    )
    assert _composed._image_launches == kept
    assert _composed.composed_launches(processor, batched) is None
    # One tensor, or a list of one layout, is not composed (cached_call remembers those).
    uniform = _resize.PendingCall(("layout", "u"), [100, 101], (2, shapes[0], "uint8", "cuda:0", strides[0]))
    assert _composed.composed_launches(processor, uniform) is None
    monkeypatch.setattr(_composed, "KEPT_IMAGE_LAUNCHES", 2)
    _composed.keep_image_launches(
        processor, pending((2,), "2"), [(launch(0), 0, 1)], [part(2, 0, row)], [102], (1, 3, 4, 4), None, None
    )
    assert len(_composed._image_launches) == 2
    _composed.clear()
    assert not _composed._image_launches


@needs_torch
@pytest.mark.parametrize(
    "make",
    [
        lambda: CLIPImageProcessor(),
        lambda: SiglipImageProcessor(),
        lambda: Qwen2VLImageProcessor(),  # merged patches, two time copies
        lambda: GotOcr2ImageProcessor(crop_to_patches=True),  # tiles and a thumbnail
        lambda: LlavaOnevisionImageProcessor(),  # AnyRes tiles, padded slots
        lambda: Gemma3ImageProcessor(),  # bilinear: bytes or floats, as torchvision decides here
        lambda: Qwen2VLImageProcessor(do_normalize=False),
    ],
    ids=["clip", "siglip", "qwen2_vl", "internvl", "llava_onevision", "gemma3", "qwen2_vl_unnormalized"],
)
def test_host_outputs_equal_those_of_torchs_own_byte_resize(rng, monkeypatch, make):
    """Host uint8 images are resized by texturevlm's C++ copy of torch's byte resize. Every
    output equals, bit for bit, the same call with torch's own resize put in its place, for a
    channels-last array, a planar one, a read-only one (as NumPy views of PIL images are) and
    a photograph."""
    import warnings

    import torch
    from texturevlm.processors import _resize

    readonly = random_image(rng, (333, 517, 3))
    readonly.flags.writeable = False
    images = [random_image(rng, (300, 500, 3)), random_image(rng, (3, 480, 640)), readonly, photo("f3.jpg")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = make()(images, return_tensors="np")

    def torchs(image, rw, rh, left, top, w, h, filter="bicubic", out=None):
        planar = torch.from_numpy(np.array(image)).permute(2, 0, 1)[None]  # a writable copy
        resized = torch.nn.functional.interpolate(planar, size=(rh, rw), mode=filter, antialias=True)
        window = resized[0, :, top : top + h, left : left + w].permute(1, 2, 0).numpy()
        if out is None:
            return window
        out[...] = window

    monkeypatch.setattr(_resize._core, "resize_bytes_as_torch", torchs)
    want = make()(images, return_tensors="np")
    assert set(got.keys()) == set(want.keys())
    for key in want.keys():
        np.testing.assert_array_equal(np.asarray(got[key]), np.asarray(want[key]), err_msg=key)


@pytest.mark.parametrize(
    "layout",
    [dict(), dict(tiles=(28, 56)), dict(merged=(14, 2, 2)), dict(merged=(14, 1, 3))],
    ids=["planar", "tiles", "merged_patches", "merged_patches_t3"],
)
def test_bytes_are_laid_out_as_the_float_finish_lays_them_out(rng, layout):
    """Resized bytes take one C++ pass (each byte's value from a table of the processor's
    float32 normalization, written in HF's layout); floats take the NumPy operations. The same
    values, bit for bit, for every layout, from strided bytes (a channels-last batch), with
    CLIP's and Qwen2-VL's normalizations and none."""
    from texturevlm.processors import _resize

    planar = np.moveaxis(random_image(rng, (3, 56, 112, 3)), -1, 1)  # [3 images, 3, 56, 112], strided
    for normalize in (
        _resize.Normalize.of(True, 1 / 255, True, ref.CLIP_MEAN, ref.CLIP_STD),
        _resize.Normalize.of(True, 1 / 255, True, (0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
        _resize.Normalize.of(False, 1 / 255, False, (0, 0, 0), (1, 1, 1)),
    ):
        plan = _resize.Plan(resized=(56, 112), window=(0, 0, 56, 112), normalize=normalize, **layout)
        got = _resize.finish_host(planar, plan, round_to_byte=True)
        want = _resize.finish_host(planar.astype(np.float32), plan, round_to_byte=True)
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_the_byte_layout_refuses_cells_that_do_not_cut_the_image_and_short_outputs():
    images = np.zeros((1, 3, 30, 40), np.uint8)
    table = np.zeros((3, 256), np.float32)
    with pytest.raises(tv.Error, match="do not cut"):
        tv._core.lay_out_bytes(images, table, "tiles", tile_width=7, tile_height=10, out=np.empty(3600, np.float32))
    with pytest.raises(tv.Error, match="do not cut"):
        tv._core.lay_out_bytes(images, table, "merged_patches", patch=14, merge=2, out=np.empty(3600, np.float32))
    with pytest.raises(tv.Error, match="holds 10 values"):
        tv._core.lay_out_bytes(images, table, "planar", out=np.empty(10, np.float32))
    with pytest.raises(tv.Error, match="'planar', 'tiles' or 'merged_patches'"):
        tv._core.lay_out_bytes(images, table, "rows", out=np.empty(3600, np.float32))
