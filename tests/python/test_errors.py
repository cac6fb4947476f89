"""Bad input gets texturevlm.Error with a message that says what to do, and changes
nothing: a pyramid that refused a frame still holds and samples the previous one."""

from __future__ import annotations

import os

import numpy as np
import pytest
import texturevlm as tv
from conftest import needs_vulkan, random_image, tolerance

BACKENDS = ["cpu", pytest.param("vulkan", marks=needs_vulkan)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "image,match",
    [
        (np.zeros((64, 64), np.uint8), "rank 3 or 4"),
        (np.zeros((1, 1, 3, 8, 8), np.uint8), "rank 3 or 4"),
        (np.zeros((3, 8, 8), np.int32), "dtype int32 is not supported"),
        (np.zeros((3, 8, 8), np.float64), "dtype float64 is not supported"),
        (np.zeros((2, 8, 8), np.uint8), "3 or 4 channels, got 2"),
        (np.zeros((3, 0, 8), np.uint8), "is empty"),
        ("not an image", "expected an image tensor or array"),
        ([[1, 2, 3]], "expected an image tensor or array"),
    ],
)
def test_bad_images(backend, image, match):
    with pytest.raises(tv.Error, match=match):
        tv.TexturePyramid(image, backend=backend)


def test_bad_arguments():
    image = np.zeros((3, 16, 16), np.uint8)
    with pytest.raises(tv.Error, match="backend must be one of"):
        tv.TexturePyramid(image, backend="metal")
    with pytest.raises(tv.Error, match="backend 'cuda' takes CUDA tensors"):
        tv.TexturePyramid(image, backend="cuda")
    with pytest.raises(tv.Error, match="format must be one of"):
        tv.TexturePyramid(image, format="bgra8", backend="cpu")
    with pytest.raises(tv.Error, match="exceeds"):
        tv.TexturePyramid(np.zeros((3, 1, 20000), np.uint8), backend="cpu")
    with pytest.raises(tv.Error, match="levels must be in 1..5"):
        tv.generate_mipmaps(image, levels=6, backend="cpu")
    with pytest.raises(tv.Error, match="channels must be 3 or 4"):
        tv.TexturePyramid.create(16, 16, channels=2)
    with pytest.raises(tv.Error, match="device must be"):
        tv.TexturePyramid.create(16, 16, device="tpu")
    with pytest.raises(tv.Error, match="ring must be a positive number"):
        tv.TexturePyramid.create(16, 16, ring=0)
    with pytest.raises(tv.Error, match="ring=2 is for CUDA pyramids; the cpu backend"):
        tv.TexturePyramid.create(16, 16, backend="cpu", ring=2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_refused_updates_change_nothing(rng, backend):
    image = random_image(rng, (3, 32, 48))
    pyramid = tv.TexturePyramid(image, backend=backend)
    layout = tv.layouts.foveated(48, 32, num_patches=10)
    before = pyramid.sample(layout).patches.copy()
    levels_before = [pyramid.level(l).copy() for l in range(pyramid.levels)]
    bad = [
        (np.zeros((3, 32, 47), np.uint8), None, "does not fit the pyramid"),
        (np.zeros((4, 32, 48), np.uint8), None, "does not fit the pyramid"),
        (np.zeros((2, 3, 32, 48), np.uint8), None, "does not fit the pyramid"),
        (np.zeros((3, 32, 48), np.uint8), (40, 0, 10, 10), "outside the 48x32 image"),
        (np.zeros((3, 32, 48), np.uint8), (0, 0, 0, 10), "empty or outside"),
        (np.zeros((3, 32, 48), np.uint8), [(0, 0, 4)], "is \\(x, y, width, height\\)"),
    ]
    for frame, rect, match in bad:
        with pytest.raises(tv.Error, match=match):
            pyramid.update(frame, rect=rect)
    np.testing.assert_array_equal(pyramid.sample(layout).patches, before)
    for level, expected in enumerate(levels_before):
        np.testing.assert_array_equal(pyramid.level(level), expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_sampling_calls(rng, backend):
    pyramid = tv.TexturePyramid(random_image(rng, (3, 32, 32)), backend=backend, levels=2)
    with pytest.raises(tv.Error, match="layout is for 64x64 images"):
        pyramid.sample(tv.layouts.grid(64, 64))
    with pytest.raises(tv.Error, match="covers 2 images"):
        pyramid.sample(tv.layouts.grid(32, 32, images=2))
    with pytest.raises(tv.Error, match="samples 3 levels, the pyramid has 2"):
        pyramid.sample(tv.layouts.grid(32, 32, level=2, patch_size=4))
    with pytest.raises(tv.Error, match="float32 or float16"):
        pyramid.sample_at_level(0, dtype="int8")
    with pytest.raises(tv.Error, match="out has shape"):
        pyramid.sample(tv.layouts.grid(32, 32), out=np.zeros((4, 3, 16, 15), np.float32))
    with pytest.raises(tv.Error, match="level 2 does not exist"):
        pyramid.level(2)
    with pytest.raises(tv.Error, match="budget 0"):
        pyramid.sample_foveated(num_patches=0)
    with pytest.raises(tv.Error, match="outside the image"):
        pyramid.sample_foveated((float("nan"), 0.5))
    with pytest.raises(tv.Error, match="patch size 65"):
        pyramid.sample_foveated(patch_size=65)


def test_cuda_backend_reports_why_it_cannot_run():
    if tv.cuda_built() and not tv.unavailable()["cuda"]:
        pytest.skip("a CUDA device is present: test_cuda.py covers it")
    from texturevlm._backends import CudaBackend

    with pytest.raises(tv.Error, match="CUDA|cuda"):
        CudaBackend(0, 16, 16, 1, "rgba8", 0)


def test_no_vulkan_driver_is_reported_and_auto_falls_back(tmp_path):
    import subprocess
    import sys

    code = (
        "import numpy as np, texturevlm as tv\n"
        "print(repr(tv.unavailable()['vulkan']))\n"
        "p = tv.TexturePyramid(np.zeros((3, 8, 8), np.uint8))\n"
        "print(p.backend, p.backend_reason)\n"
        "try:\n    tv.TexturePyramid(np.zeros((3, 8, 8), np.uint8), backend='vulkan')\n"
        "except tv.Error as e:\n    print('error:', e)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "VK_DRIVER_FILES": str(tmp_path / "none.json"), "HOME": str(tmp_path)}
    for name in ("PYTHONPATH", "LD_LIBRARY_PATH", "VIRTUAL_ENV"):
        if name in os.environ:
            env[name] = os.environ[name]
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] != "''"  # a reason is given
    assert lines[1].startswith("cpu the image is in host memory and Vulkan is unavailable")
    assert lines[2].startswith("error:") and ("driver" in lines[2] or "device" in lines[2])


# Integers nanobind would refuse with a bare TypeError (negative, past 32 bits, not whole),
# and budgets too large to allocate: each one texturevlm.Error naming the argument and its
# range, at the limit accepted and one past it refused.
@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: tv.layouts.foveated(64, 64, num_patches=-1), "num_patches must be 0..1048576 per image, not -1"),
        (lambda: tv.layouts.foveated(64, 64, num_patches=2**20 + 1), "num_patches must be 0..1048576 per image"),
        (lambda: tv.layouts.foveated(64, 64, num_patches=10**7), "num_patches must be 0..1048576 per image"),
        (lambda: tv.layouts.foveated(64, 64, num_patches=2.5), "num_patches must be a whole number, not 2.5"),
        (lambda: tv.layouts.foveated(64, 64, num_patches=True), "num_patches must be a whole number, not True"),
        (lambda: tv.layouts.foveated(64, 64, patch_size=-16), "patch_size must be 0..4294967295, not -16"),
        (lambda: tv.layouts.grid(64, 64, patch_size=2**32), "patch_size must be 0..4294967295, not 4294967296"),
        (lambda: tv.layouts.grid(64, 64, level=-1), "level must be 0..4294967295, not -1"),
        (lambda: tv.layouts.anisotropic(64, 64, elongation=-4), "elongation must be 0..4294967295, not -4"),
        (lambda: tv.overlay.Overlay(knn=0), "knn must be 1..4294967295 neighbours per point \\(or None\\), not 0"),
        (lambda: tv.overlay.Overlay(knn=2**40), "knn must be 1..4294967295"),
        (lambda: tv.overlay.Overlay(knn=3, hysteresis=-1), "hysteresis must be 0..4294967295, not -1"),
        (lambda: tv.fields.fixations_from_field(lambda p: p[:, 0], k=-2), "k must be 1..4294967295 fixations, not -2"),
    ],
)
def test_integer_arguments_are_checked_at_the_boundary(call, match):
    with pytest.raises(tv.Error, match=match):
        call()


def test_the_largest_budget_is_accepted_and_one_past_it_refused():
    layout = tv.layouts.foveated(64, 64, num_patches=2**20)  # padded slots, masked
    assert layout.metadata.shape == (1, 2**20, 5)
    with pytest.raises(tv.Error, match="num_patches must be 0..1048576 per image, not 1048577"):
        tv.layouts.foveated(64, 64, num_patches=2**20 + 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sample_foveated_checks_its_integers(backend):
    pyramid = tv.TexturePyramid(random_image(np.random.default_rng(3), (3, 64, 64)), backend=backend)
    with pytest.raises(tv.Error, match="num_patches must be 0..1048576 per image, not -5"):
        pyramid.sample_foveated(num_patches=-5)
    with pytest.raises(tv.Error, match="num_patches must be 0..1048576 per image, not 10000000"):
        pyramid.sample_foveated(num_patches=10**7)
    patches, _ = pyramid.sample_foveated(num_patches=16)  # still usable afterwards
    assert patches.shape == (16, 3, 16, 16)


@needs_vulkan
def test_a_pyramid_the_vulkan_device_cannot_hold_is_refused_and_the_next_one_works(rng):
    # Over the device's image or heap limit: refused before Vulkan is asked (asking would be
    # invalid usage), one clear error, and the device goes on working.
    for _ in range(3):
        with pytest.raises(tv.Error, match="use a smaller image or batch"):
            tv.TexturePyramid.create(16384, 16384, format="rgba32f", batch=64, backend="vulkan")
    image = random_image(rng, (4, 40, 56))
    got = tv.TexturePyramid(image, backend="vulkan").sample_foveated((0.5, 0.5), num_patches=13, patch_size=8)
    want = tv.TexturePyramid(image, backend="cpu").sample_foveated((0.5, 0.5), num_patches=13, patch_size=8)
    assert np.all(np.abs(got.patches - want.patches) <= tolerance(False, False, want.patches))
