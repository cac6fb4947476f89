"""Encoded images into the processors: PNG / JPEG bytes and paths decoded on the host as
Pillow decodes them (so HF's values follow from the array tests), every truncated or corrupt
image refused by name, and, on the NVIDIA machine, JPEGs decoded on the GPU (nvImageCodec)
within the bound measured against Pillow's decode."""

from __future__ import annotations

import gc
import io
import os
import pathlib
import resource
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from conftest import needs_cuda
from test_processors import PHOTOS
from texturevlm import _core
from texturevlm.processors import (
    CLIPImageProcessor,
    Gemma3ImageProcessor,
    GotOcr2ImageProcessor,
    ProcessorInputError,
    Qwen2VLImageProcessor,
    _encoded,
)

Image = pytest.importorskip("PIL.Image", reason="Pillow is not installed (the reference decoder)")

PHOTO_FILES = ("f3.jpg", "verify.jpeg")  # progressive and baseline JPEGs


def photo_bytes(name: str) -> bytes:
    return (PHOTOS / name).read_bytes()


def pillow_rgb(data: bytes) -> np.ndarray:
    """[H, W, 3] uint8 as HF's users load images (Image.open, then RGB)."""
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB"))


def encoded(array: np.ndarray, format: str, **options) -> bytes:
    out = io.BytesIO()
    Image.fromarray(array).save(out, format, **options)
    return out.getvalue()


def small_images(rng) -> dict:
    """Small encodings of random content: every prefix of them is tried."""
    rgb = rng.integers(0, 256, (20, 24, 3), dtype=np.uint8)
    rgba = np.concatenate([rgb, rng.integers(0, 256, (20, 24, 1), dtype=np.uint8)], axis=2)
    return {
        "baseline jpeg": encoded(rgb, "JPEG", quality=90),
        "progressive jpeg": encoded(rgb, "JPEG", quality=90, progressive=True),
        "jpeg with restart markers": encoded(rgb, "JPEG", quality=90, restart_marker_blocks=1),
        "png": encoded(rgb, "PNG"),
        "png with alpha": encoded(rgba, "PNG"),
    }


@pytest.mark.parametrize("name", PHOTO_FILES)
def test_photos_decode_to_pillows_pixels(name):
    data = photo_bytes(name)
    (decoded,) = _core.decode_images([data], ["photo"])
    np.testing.assert_array_equal(decoded, pillow_rgb(data))


def test_decode_images_decodes_the_encoded_leaves_and_keeps_the_rest(tmp_path):
    """The public decode: bytes and paths anywhere in a nested list become Pillow's pixels,
    arrays stay the same objects, and a bad image is named."""
    from texturevlm.processors import decode_images

    data = photo_bytes(PHOTO_FILES[0])
    path = tmp_path / "photo.jpg"
    path.write_bytes(data)
    array = np.zeros((4, 5, 3), np.uint8)
    got = decode_images([[data, array], [str(path)]])
    np.testing.assert_array_equal(got[0][0], pillow_rgb(data))
    np.testing.assert_array_equal(got[1][0], pillow_rgb(data))
    assert got[0][1] is array
    with pytest.raises(ProcessorInputError, match=r"images\[1\]"):
        decode_images([data, data[:100]])


def test_small_images_decode_to_pillows_pixels(rng):
    for what, data in small_images(rng).items():
        (decoded,) = _core.decode_images([data], [what])
        with Image.open(io.BytesIO(data)) as image:
            want = np.asarray(image.convert("RGBA" if what == "png with alpha" else "RGB"))
        np.testing.assert_array_equal(decoded, want, err_msg=what)
    grey = rng.integers(0, 256, (9, 7), dtype=np.uint8)
    (decoded,) = _core.decode_images([encoded(grey, "PNG")], ["grey"])
    np.testing.assert_array_equal(decoded, np.repeat(grey[:, :, None], 3, axis=2))


@pytest.mark.parametrize(
    "processor",
    [
        CLIPImageProcessor,
        Qwen2VLImageProcessor,
        lambda: Gemma3ImageProcessor(size={"height": 96, "width": 96}, resample=2, do_pan_and_scan=True),
        lambda: GotOcr2ImageProcessor(size={"height": 112, "width": 112}, crop_to_patches=True),
    ],
)
def test_bytes_and_paths_give_the_outputs_of_pillows_arrays(processor):
    ours = processor()
    paths = [PHOTOS / name for name in PHOTO_FILES]
    arrays = [pillow_rgb(p.read_bytes()) for p in paths]
    want = ours(arrays)
    data = paths[0].read_bytes()
    for given in (
        [data, paths[1].read_bytes()],
        [bytearray(data), str(paths[1])],
        [[memoryview(data)], [paths[1]]],  # nested, as HF batches images per sample
    ):
        got = ours(given)
        assert got.keys() == want.keys()
        for key in want:
            np.testing.assert_array_equal(got[key], want[key], err_msg=key)
    np.testing.assert_array_equal(ours(data).pixel_values, ours(arrays[0]).pixel_values)


def test_transparent_pngs_are_composited_as_their_rgba_arrays(rng):
    rgba = rng.integers(0, 256, (40, 50, 4), dtype=np.uint8)
    clip = CLIPImageProcessor()
    want = clip(rgba).pixel_values
    np.testing.assert_array_equal(clip(encoded(rgba, "PNG")).pixel_values, want)
    opaque = rgba.copy()
    opaque[:, :, 3] = 255
    (decoded,) = _core.decode_images([encoded(opaque, "PNG")], ["opaque"])
    assert decoded.shape == (40, 50, 3)  # alpha all 255: read as RGB


def test_every_proper_prefix_of_an_image_is_refused(rng):
    for what, data in small_images(rng).items():
        assert _core.check_encoded_images([data], [what]) == ["png" if "png" in what else "jpeg"]
        for n in range(len(data)):
            with pytest.raises(RuntimeError):
                _core.check_encoded_images([data[:n]], [what])
            with pytest.raises(RuntimeError):
                _core.decode_images([data[:n]], [what])
        # Data after the end (a motion photo's video, say) is not the image's: accepted, as Pillow does.
        assert _core.check_encoded_images([data + b"\0trailing"], [what])
        _core.decode_images([data + b"\0trailing"], [what])


@pytest.mark.parametrize(
    "bad,match",
    [
        (lambda good: [good, good[: len(good) // 2], good], r"'images\[1\]'.*truncated"),
        (lambda good: [good, good[:100] + bytes(200) + good[300:]], r"'images\[1\]'.*corrupt"),
        (lambda good: [good, good, b"GIF89a not a png or jpeg"], r"'images\[2\]' is not a readable PNG/JPEG"),
        (lambda good: [b"", good], r"'images\[0\]' is not a readable PNG/JPEG"),
        (lambda good: [good, "/no/such/image.jpg"], r"cannot open image '/no/such/image.jpg'"),
        (lambda good: [str(PHOTOS)], r"is a directory"),
        (lambda good: ["https://example.com/cat.jpg"], r"images\[0\] is a URL"),
    ],
)
def test_a_bad_image_in_a_batch_is_named_and_nothing_is_returned(bad, match):
    clip = CLIPImageProcessor()
    with pytest.raises(ProcessorInputError, match=match):
        clip(bad(photo_bytes("verify.jpeg")))


def test_the_device_argument_is_checked():
    clip = CLIPImageProcessor()
    data = photo_bytes("verify.jpeg")
    np.testing.assert_array_equal(clip(data, device="cpu").pixel_values, clip(data).pixel_values)
    with pytest.raises(ProcessorInputError, match="device='tpu'"):
        clip(data, device="tpu")
    with pytest.raises(ProcessorInputError, match="device="):
        clip(data, device="cuda:99")
    assert _encoded.has_encoded([[np.zeros((2, 2, 3))], [pathlib.Path("a.png")]])
    assert not _encoded.has_encoded([np.zeros((2, 2, 3))])


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def test_2000_decodes_leave_host_memory_and_fds_flat(rng):
    # 64 KiB decoded per image: a buffer kept per call would grow host memory by 250 MB.
    pixels = rng.integers(0, 256, (128, 128, 4), dtype=np.uint8)
    data = [encoded(pixels[:, :, :3], "JPEG", quality=90), encoded(pixels, "PNG")]
    bad = data[0][: len(data[0]) // 2]

    def cycle():
        _core.decode_images(data, ["a", "b"])
        with pytest.raises(RuntimeError):
            _core.decode_images([data[0], bad], ["a", "bad"])

    for _ in range(50):
        cycle()
    gc.collect()
    fds, rss = len(os.listdir("/proc/self/fd")), rss_mb()
    for _ in range(2000):
        cycle()
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == fds
    assert rss_mb() - rss < 20, f"host memory grew by {rss_mb() - rss:.1f} MB"


def test_threads_sharing_a_processor_get_what_one_thread_gets():
    clip = CLIPImageProcessor()
    data = [photo_bytes(name) for name in PHOTO_FILES]
    want = clip(data).pixel_values
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: clip(data).pixel_values, range(32)))
    for got in results:
        np.testing.assert_array_equal(got, want)


# -- on the NVIDIA machine: JPEGs decoded on the GPU ------------------------------------------

#: nvImageCodec's decode (with libjpeg's fancy chroma upsampling) against libjpeg-turbo's
#: (Pillow's) on the photos, measured once on the NVIDIA machine: the baseline JPEG (the hardware
#: decoder) is exact; the progressive one (CUDA decoder) differs by up to 3 steps, mean 0.044,
#: from the rounding of its IDCT. The bound leaves one step and about twice the mean.
GPU_DECODE_MAX = 4
GPU_DECODE_MEAN = 0.1


def gpu_decoded(data):
    import torch

    (image,) = _encoded.decode_encoded([data], "cuda")
    assert isinstance(image, torch.Tensor) and image.is_cuda and image.dtype == torch.uint8
    return image


@needs_cuda
@pytest.mark.parametrize("name", PHOTO_FILES)
def test_gpu_decoded_jpegs_are_within_the_bound_of_pillows(name):
    pytest.importorskip(
        "nvidia.nvimgcodec", reason="nvImageCodec is not installed (pip install nvidia-nvimgcodec-cu13)"
    )
    data = photo_bytes(name)
    got = gpu_decoded(data).cpu().numpy().astype(np.int16)
    want = pillow_rgb(data).astype(np.int16)
    assert got.shape == want.shape
    d = np.abs(got - want)
    assert d.max() <= GPU_DECODE_MAX and d.mean() <= GPU_DECODE_MEAN, (d.max(), d.mean())


@needs_cuda
def test_cuda_outputs_from_bytes_are_the_outputs_of_the_decoded_images():
    import torch

    data = [photo_bytes(name) for name in PHOTO_FILES]
    png = encoded(pillow_rgb(data[1]), "PNG")
    for processor in (CLIPImageProcessor(), Qwen2VLImageProcessor()):
        got = processor(data + [png], device="cuda")
        assert got.pixel_values.is_cuda
        decoded = _encoded.decode_encoded(data + [png], "cuda")
        want = processor(decoded)
        for key in want:
            torch.testing.assert_close(got[key], want[key], rtol=0, atol=0)
    # The PNG went through the host decoder: Pillow's pixels exactly.
    np.testing.assert_array_equal(decoded[2].cpu().numpy(), pillow_rgb(data[1]))


@needs_cuda
def test_without_nvimgcodec_cuda_bytes_are_decoded_on_the_host(monkeypatch):
    monkeypatch.setattr(_encoded, "nvimgcodec_module", lambda: None)
    monkeypatch.setattr(_encoded, "_decoders", threading.local())
    data = photo_bytes("f3.jpg")
    np.testing.assert_array_equal(gpu_decoded(data).cpu().numpy(), pillow_rgb(data))


@needs_cuda
def test_gpu_decoding_threads_get_what_one_thread_gets_and_device_memory_stays_flat():
    import torch

    clip = CLIPImageProcessor()
    data = [photo_bytes(name) for name in PHOTO_FILES] * 4
    want = clip(data, device="cuda").pixel_values.cpu()

    def call(_):
        out = clip(data, device="cuda").pixel_values
        torch.cuda.current_stream().synchronize()
        return out.cpu()

    with ThreadPoolExecutor(4) as pool:
        for got in pool.map(call, range(32)):
            torch.testing.assert_close(got, want, rtol=0, atol=0)
    for _ in range(20):
        call(0)
    torch.cuda.synchronize()
    free = torch.cuda.mem_get_info()[0]
    for _ in range(300):
        call(0)
    torch.cuda.synchronize()
    assert abs(torch.cuda.mem_get_info()[0] - free) < 64 * 2**20


@needs_cuda
def test_a_bad_image_is_named_on_the_gpu_path_too():
    good = photo_bytes("verify.jpeg")
    clip = CLIPImageProcessor()
    with pytest.raises(ProcessorInputError, match=r"'images\[1\]'.*truncated"):
        clip([good, good[:-5000]], device="cuda")
    with pytest.raises(ProcessorInputError, match=r"'images\[0\]' is not a readable"):
        clip([b"nothing", good], device="cuda")
