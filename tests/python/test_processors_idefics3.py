"""Idefics3 and SmolVLM processors against a NumPy transcription of Hugging Face's rules
(hf_reference.py: the longest-edge resize, the resize to whole tiles, each from the last
one's bytes; tiles row-major then the whole image; padding and the attention mask) on host
images; against HF's PIL processor (with bicubic, the resize HF's torchvision processor
falls back to) for structure; and, on the NVIDIA machine, against HF's own processor for
host and CUDA images."""

from __future__ import annotations

import gc
import importlib.util
import os
import resource
from concurrent.futures import ThreadPoolExecutor

import hf_reference as ref
import numpy as np
import pytest
from conftest import needs_cuda, needs_hf, random_image, transformers
from test_processors import assert_hf_values, photo, smooth_image
from texturevlm.processors import (
    Idefics3ImageProcessor,
    ProcessorInputError,
    SmolVLMImageProcessor,
    from_pretrained,
)
from texturevlm.processors._resize import lanczos_for, lanczos_on_host
from texturevlm.processors.idefics3 import longest_edge_size, nested_samples, tile_multiple_size

#: The rules at a small scale (a 128 longest edge, 32-pixel tiles), so the reference's
#: loops stay fast in CI.
SMALL = {
    "size": {"longest_edge": 128},
    "max_image_size": {"longest_edge": 32},
    "image_mean": [0.5, 0.4, 0.3],
    "image_std": [0.2, 0.3, 0.4],
}
SIZES = [(1, 1), (5, 3), (32, 32), (31, 33), (40, 90), (90, 40), (100, 37), (17, 200), (200, 17), (128, 128)]
STEP = 1 / (255 * 0.5)  # one uint8 step of the default normalization (std 0.5)


#: How HF resizes host images for the configs' LANCZOS here: torch's uint8 Lanczos where the
#: installed torchvision is 0.27 or later (or absent: HF's PIL processor, whose Lanczos it is
#: nearest to), else bicubic (test_host_lanczos_follows_the_installed_torchvision).
HOST_KIND = "lanczos" if lanczos_on_host() else "bicubic"


def small_reference(samples, split=True):
    return ref.idefics3_pixel_values(samples, 128, 32, SMALL["image_mean"], SMALL["image_std"], split, HOST_KIND)


def test_size_rules_are_hfs():
    sizes = SIZES + [(477, 720), (720, 477), (1, 5000), (5000, 1), (4097, 20), (999, 1000), (364, 1456)]
    for h, w in sizes:
        for longest, tile in ((1456, 364), (2048, 512), (128, 32)):
            assert longest_edge_size(h, w, longest) == ref.idefics3_resized_size(h, w, longest), (h, w)
            rh, rw = longest_edge_size(h, w, longest)
            assert tile_multiple_size(rh, rw, tile) == ref.idefics3_vision_encoder_size(rh, rw, tile), (h, w)
    if transformers is not None:  # HF's own functions, where they import without torch
        hf = pytest.importorskip("transformers.models.idefics3.image_processing_pil_idefics3")
        for h, w in sizes:
            got = longest_edge_size(h, w, 1456)
            want = hf._resize_output_size_scale_below_upper_bound(
                *hf._resize_output_size_rescale_to_max_len(h, w, max_len=1456), max_len=4096
            )
            assert got == want, (h, w)


@pytest.mark.parametrize("height,width", SIZES)
def test_host_values_follow_hfs_rules(rng, height, width):
    ours = Idefics3ImageProcessor(backend="cpu", return_row_col_info=True, **SMALL)
    image = random_image(rng, (3, height, width))
    out = ours([image])
    values, mask, rows, cols = small_reference([[image]])
    assert set(out) == {"pixel_values", "pixel_attention_mask", "rows", "cols"}
    assert_hf_values(out.pixel_values, values)
    np.testing.assert_array_equal(out.pixel_attention_mask, mask)
    assert out.pixel_attention_mask.dtype == np.int64
    assert (out.rows, out.cols) == (rows, cols)
    assert ours.get_number_of_image_patches(height, width) == values.shape[1]


def test_samples_are_padded_and_masked_and_kept_apart_without_do_pad(rng):
    ours = Idefics3ImageProcessor(backend="cpu", **SMALL)
    a, b, c = (random_image(rng, (3, 20, 90)), random_image(rng, (3, 64, 64)), random_image(rng, (3, 5, 3)))
    out = ours([[a, b], [c]])
    values, mask, _, _ = small_reference([[a, b], [c]])
    assert out.pixel_values.shape == values.shape and values.shape[:2] == (2, 5 + 17)
    assert_hf_values(out.pixel_values, values)
    np.testing.assert_array_equal(out.pixel_attention_mask, mask)
    # A flat list is one sample (HF's make_nested_list_of_images), as is a [B, 3, H, W] batch.
    flat = ours([b, b])
    assert flat.pixel_values.shape[:2] == (1, 34)
    assert_hf_values(ours(np.stack([b, b])).pixel_values, flat.pixel_values)
    # Without do_pad: each sample's own frames, no mask.
    apart = ours([[a, b], [c]], do_pad=False)
    assert set(apart) == {"pixel_values"} and [f.shape[0] for f in apart.pixel_values] == [22, 13]
    for got, want in zip(apart.pixel_values, values):
        assert_hf_values(got, want[: got.shape[0]])


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="JAX is not installed")
def test_jax_samples_of_different_frame_counts_are_padded(rng):
    """JAX arrays in, JAX arrays out; JAX arrays cannot be written into, so the padding of
    samples with fewer frames is built, not assigned. The arrays are put on JAX's CPU device:
    where JAX has a GPU, its arrays go there by default."""
    import jax

    a, b, c = (random_image(rng, (3, 20, 90)), random_image(rng, (3, 64, 64)), random_image(rng, (3, 5, 3)))
    ours = Idefics3ImageProcessor(backend="cpu", **SMALL)
    cpu = jax.devices("cpu")[0]
    got = ours([[jax.device_put(a, cpu), jax.device_put(b, cpu)], [jax.device_put(c, cpu)]])
    want = ours([[a, b], [c]])
    assert isinstance(got.pixel_values, jax.Array) and isinstance(got.pixel_attention_mask, jax.Array)
    assert got.pixel_values.devices() == {cpu} and got.pixel_attention_mask.devices() == {cpu}
    np.testing.assert_array_equal(np.asarray(got.pixel_values), want.pixel_values)
    np.testing.assert_array_equal(np.asarray(got.pixel_attention_mask), want.pixel_attention_mask)


def test_without_splitting_every_image_is_one_square(rng):
    images = [random_image(rng, (3, 40, 90)), random_image(rng, (3, 300, 7))]
    out = Idefics3ImageProcessor(backend="cpu", do_image_splitting=False, **SMALL)(images)
    values, mask, rows, cols = small_reference([images], split=False)
    assert out.pixel_values.shape == (1, 2, 3, 32, 32)
    assert_hf_values(out.pixel_values, values)
    np.testing.assert_array_equal(out.pixel_attention_mask, mask)


def test_the_photo_with_the_checkpoints_config_follows_hfs_rules():
    image = photo("f3.jpg")
    out = Idefics3ImageProcessor(backend="cpu", return_row_col_info=True)([image])
    values, mask, rows, cols = ref.idefics3_pixel_values([[image]], 1456, 364, [0.5] * 3, [0.5] * 3, kind=HOST_KIND)
    assert out.pixel_values.shape == (1, 13, 3, 364, 364) and (out.rows, out.cols) == ([[3]], [[4]])
    assert_hf_values(out.pixel_values, values)
    np.testing.assert_array_equal(out.pixel_attention_mask, mask)


@needs_hf
def test_against_hfs_pil_processor_with_bicubic():
    """HF's PIL processor runs without torch: with resample=3 it resizes bicubic as PIL does
    (PIL's own fixed point), so values agree to a couple of uint8 steps and everything else
    exactly. (Its default Lanczos: test_against_hfs_pil_processor_with_lanczos.)"""
    image = np.ascontiguousarray(photo("f3.jpg").transpose(1, 2, 0))
    for cls, hf_cls, config in (
        (Idefics3ImageProcessor, "Idefics3ImageProcessorPil", {}),
        (
            SmolVLMImageProcessor,
            "SmolVLMImageProcessorPil",
            {"size": {"longest_edge": 1536}, "max_image_size": {"longest_edge": 384}},
        ),
    ):
        hf = getattr(transformers, hf_cls, None)
        if hf is None:
            pytest.skip(f"transformers {transformers.__version__} has no {hf_cls}")
        batch = [[image, image[:300, :200]], [image[:50]]]
        want = hf(resample=3, return_row_col_info=True, **config)(images=batch, return_tensors="np")
        got = cls(backend="cpu", resample=3, return_row_col_info=True, **config)(batch, return_tensors="np")
        assert set(got) == set(want.keys())
        assert got["pixel_values"].shape == want["pixel_values"].shape
        np.testing.assert_array_equal(got["pixel_attention_mask"], want["pixel_attention_mask"])
        assert (got["rows"], got["cols"]) == (want["rows"], want["cols"])
        d = np.abs(got["pixel_values"] - want["pixel_values"])
        assert d.max() <= 3 * STEP + 1e-5 and d.mean() < 0.01 * STEP, (hf_cls, d.max(), d.mean())


@needs_hf
@pytest.mark.skipif(not lanczos_on_host(), reason="this torchvision (before 0.27) has HF resize host images bicubic")
def test_against_hfs_pil_processor_with_lanczos():
    """With its configs' LANCZOS, HF's PIL processor resizes with Pillow's Lanczos, which
    torch's uint8 Lanczos (texturevlm's on the host) matches to a uint8 step or two per
    resize on about 1% of values: through Idefics3's three resizes, each from the last's
    bytes, to 3 steps on under 2% of the values (the photo: 3 steps, 0.7%). Everything else
    exactly."""
    image = np.ascontiguousarray(photo("f3.jpg").transpose(1, 2, 0))
    hf = getattr(transformers, "Idefics3ImageProcessorPil", None)
    if hf is None:
        pytest.skip(f"transformers {transformers.__version__} has no Idefics3ImageProcessorPil")
    batch = [[image, image[:300, :200]], [image[:50]]]
    want = hf(return_row_col_info=True)(images=batch, return_tensors="np")
    got = Idefics3ImageProcessor(backend="cpu", return_row_col_info=True)(batch, return_tensors="np")
    np.testing.assert_array_equal(got["pixel_attention_mask"], want["pixel_attention_mask"])
    assert (got["rows"], got["cols"]) == (want["rows"], want["cols"])
    d = np.abs(got["pixel_values"] - want["pixel_values"])
    assert d.max() <= 3 * STEP + 1e-5 and (d > 1e-5).mean() < 0.02, (d.max() / STEP, (d > 1e-5).mean())


def test_host_lanczos_follows_the_installed_torchvision():
    """HF resizes host images with Lanczos from torchvision 0.27 on, bicubic before it; with
    no torchvision, texturevlm takes torch's Lanczos (nearest HF's PIL processor)."""
    for version, lanczos in (
        ("0.26.0", False),
        ("0.26.1+cu130", False),
        ("0.27.0", True),
        ("0.29.2+cu132", True),
        ("1.0.0", True),
        ("0.27.0a0+git1234", True),
        ("0.9", False),
        (None, True),
    ):
        assert lanczos_for(version) == lanczos, version
    processor = Idefics3ImageProcessor(backend="cpu")
    assert processor._plan((32, 32), (0, 0, 32, 32)).on_host == HOST_KIND
    assert Idefics3ImageProcessor(backend="cpu", resample=3)._plan((32, 32), (0, 0, 32, 32)).on_host == "bicubic"
    assert processor._plan((32, 32), (0, 0, 32, 32)).resample == "bicubic"  # CUDA images: HF's fallback


def test_configs_are_found_and_bad_ones_refused(rng):
    for config in (
        {"image_processor_type": "Idefics3ImageProcessor"},
        {"image_processor_type": "Idefics3ImageProcessorFast"},
        {"processor_class": "Idefics3Processor"},
    ):
        assert type(from_pretrained(config)) is Idefics3ImageProcessor
    smol = from_pretrained(
        {"processor_class": "SmolVLMProcessor", "size": {"longest_edge": 2048}, "max_image_size": {"longest_edge": 512}}
    )
    assert type(smol) is SmolVLMImageProcessor and smol.tile == 512
    assert Idefics3ImageProcessor().resample == 1  # the config's LANCZOS, kept as given
    with pytest.raises(ProcessorInputError, match="longest_edge"):
        Idefics3ImageProcessor(size={"shortest_edge": 3})
    with pytest.raises(ProcessorInputError, match="max_image_size"):
        Idefics3ImageProcessor(max_image_size={"height": 364})
    with pytest.raises(ProcessorInputError, match="exceeds 4096"):
        Idefics3ImageProcessor(max_image_size={"longest_edge": 5000})
    # A null in a size dict is a key not given, as HF reads it (the config fuzzer's find).
    with pytest.raises(ProcessorInputError, match="size must have"):
        Idefics3ImageProcessor(size={"longest_edge": None})
    assert Idefics3ImageProcessor(size={"longest_edge": 728, "height": None}).size == {"longest_edge": 728}
    with pytest.raises(ProcessorInputError, match="resized twice"):
        Idefics3ImageProcessor(backend="cpu")(random_image(rng, (3, 20, 20), np.float16))
    with pytest.raises(ProcessorInputError, match="no images"):
        nested_samples([[], []])
    # A call's settings are the call's.
    image = random_image(rng, (3, 40, 90))
    ours = Idefics3ImageProcessor(backend="cpu", **SMALL)
    assert ours(image, do_image_splitting=False).pixel_values.shape == (1, 1, 3, 32, 32)
    assert ours(image, max_image_size={"longest_edge": 64}).pixel_values.shape == (1, 3, 3, 64, 64)


def test_the_texture_filter_is_close_on_the_photo():
    image = photo("f3.jpg")
    exact = Idefics3ImageProcessor(backend="cpu")([image]).pixel_values
    texture = Idefics3ImageProcessor(backend="cpu", filter="texture")([image]).pixel_values
    assert exact.shape == texture.shape
    d = np.abs(exact - texture)
    assert d.mean() < 0.03 and d.max() < 0.8, (d.mean(), d.max())


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def test_threads_sharing_a_processor_get_what_one_thread_gets(rng):
    ours = Idefics3ImageProcessor(backend="cpu", **SMALL)
    batch = [[random_image(rng, (3, 40, 90))], [random_image(rng, (3, 64, 64)), random_image(rng, (3, 5, 3))]]
    want = ours(batch)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: ours(batch), range(16)))
    for got in results:
        np.testing.assert_array_equal(got.pixel_values, want.pixel_values)
        np.testing.assert_array_equal(got.pixel_attention_mask, want.pixel_attention_mask)


def test_500_calls_leave_host_memory_and_fds_flat(rng):
    # Each call makes two intermediate images and its outputs (about 0.5 MB): kept per call,
    # they would grow host memory by 250 MB.
    ours = Idefics3ImageProcessor(backend="cpu", **SMALL)
    images = [random_image(rng, (3, 100, 37)), random_image(rng, (3, 17, 200))]
    for _ in range(20):
        ours(images)
    gc.collect()
    fds, rss = len(os.listdir("/proc/self/fd")), rss_mb()
    for _ in range(500):
        ours(images)
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == fds
    assert rss_mb() - rss < 20, f"host memory grew by {rss_mb() - rss:.1f} MB"


# -- on the NVIDIA machine: HF's own processor ---------------------------------------------------


@needs_cuda
def test_jax_cuda_images_give_the_torch_cuda_values(rng):
    """JAX arrays on the GPU: each intermediate image is written by texturevlm's kernels, cut
    out of its batch by JAX, and read by the next resize, so JAX's own stream sits between two
    of texturevlm's launches. The values, mask and device must be the torch CUDA path's,
    call after call."""
    jax = pytest.importorskip("jax", reason="JAX is not installed")
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        pytest.skip("JAX has no GPU")
    images = [random_image(rng, (3, 700, 1000)), random_image(rng, (3, 300, 500)), random_image(rng, (3, 300, 500))]
    ours = Idefics3ImageProcessor()
    want = ours([_cuda(i) for i in images])
    for _ in range(3):
        got = ours([jax.device_put(i, gpus[0]) for i in images])
        assert isinstance(got.pixel_values, jax.Array) and got.pixel_values.devices() == {gpus[0]}
        np.testing.assert_array_equal(np.asarray(got.pixel_values), want.pixel_values.cpu().numpy())
        np.testing.assert_array_equal(np.asarray(got.pixel_attention_mask), want.pixel_attention_mask.cpu().numpy())


@needs_cuda
def test_repeated_cuda_calls_reuse_their_resize_targets(rng):
    """Each resize between Idefics3's stages finds its kept ResizeTarget and resizer on later
    calls (they are kept by their plan's identity), instead of making new ones per call."""
    from texturevlm.processors import _resize

    ours = Idefics3ImageProcessor(**SMALL)
    images = [_cuda(random_image(rng, (3, 90, 130))), _cuda(random_image(rng, (3, 40, 40)))]
    ours(images)  # a first sight of the sizes: on resizers of any size
    first = ours(images)
    targets, resizers = len(_resize._targets), len(_resize._resizers)
    for _ in range(3):
        again = ours([i.clone() for i in images])
    assert (len(_resize._targets), len(_resize._resizers)) == (targets, resizers)
    assert np.array_equal(again.pixel_values.cpu().numpy(), first.pixel_values.cpu().numpy())


def _cuda(x):
    import torch

    return torch.from_numpy(np.ascontiguousarray(x)).cuda()


@needs_cuda
@needs_hf
@pytest.mark.parametrize("family", ["idefics3", "smolvlm"])
def test_matches_hugging_face_on_each_device(rng, family):
    """HF's Idefics3 / SmolVLM processor (its torchvision backend, which resizes CUDA images
    bicubic for LANCZOS) on the photo and smooth images, host arrays and CUDA tensors: keys,
    shapes, masks, rows / cols and values within one uint8 rounding tie (CUDA) or equal
    (host, where HF's torchvision also falls back to bicubic)."""
    import torch

    config = {} if family == "idefics3" else {"size": {"longest_edge": 2048}, "max_image_size": {"longest_edge": 512}}
    hf_cls = transformers.Idefics3ImageProcessor if family == "idefics3" else transformers.SmolVLMImageProcessor
    ours_cls = Idefics3ImageProcessor if family == "idefics3" else SmolVLMImageProcessor
    hf, ours = hf_cls(return_row_col_info=True, **config), ours_cls(return_row_col_info=True, **config)
    images = [photo("f3.jpg"), smooth_image(rng, 300, 1300), smooth_image(rng, 1000, 480), smooth_image(rng, 64, 64)]
    for device in ("cuda", "cpu"):
        xs = [torch.from_numpy(i) for i in images] if device == "cpu" else [_cuda(i) for i in images]
        for batch in ([xs[0]], [xs[1], xs[2]], [[xs[1]], [xs[0], xs[3]]]):
            want = hf(images=batch, return_tensors="pt")
            got = ours(batch, return_tensors="pt")
            assert set(got) == set(want.keys()), family
            for key in ("pixel_values", "pixel_attention_mask"):
                assert tuple(got[key].shape) == tuple(want[key].shape), (family, key, device)
                assert got[key].device == want[key].device, key
            assert got["pixel_values"].dtype == want["pixel_values"].dtype
            # The mask's dtype is int64 (transformers' current processor); some 5.x releases
            # return float32 ones and zeros. The values are compared.
            mask = want["pixel_attention_mask"]
            assert torch.equal(got["pixel_attention_mask"].to(mask.dtype), mask)
            assert (got["rows"], got["cols"]) == (want["rows"], want["cols"])
            d = (got["pixel_values"].cpu() - want["pixel_values"].cpu()).abs()
            assert d.max().item() <= STEP + 1e-4 and (d > 1e-4).float().mean().item() <= 1e-3, (
                family,
                device,
                d.max().item(),
                (d > 1e-4).float().mean().item(),
            )
