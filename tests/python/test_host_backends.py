"""Host arrays through Vulkan compute (lavapipe in CI) against the CPU reference: every
level of every format, sampling of every layout within the engine's one tolerance, partial
updates, layouts of the data (channels last, batches), torch CPU tensors, and avg_pool2d."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import texturevlm as tv
from conftest import has_torch, needs_vulkan, random_image, tolerance

FORMATS = ["rgba8", "rgba8_srgb", "rgba16f", "rgba32f"]


def dtype_for(format):
    return np.uint8 if format.startswith("rgba8") else np.float32


def assert_levels_match(a: tv.TexturePyramid, b: tv.TexturePyramid, format: str) -> None:
    for level in range(a.levels):
        x, y = a.level(level), b.level(level)
        assert x.shape == y.shape
        if format.startswith("rgba8"):  # exact integer arithmetic on every backend
            assert np.array_equal(x, y), f"level {level}"
        else:  # float results within a few ulps of the exact average
            np.testing.assert_allclose(
                x, y, rtol=2e-3 if format == "rgba16f" else 1e-6, atol=1e-6, err_msg=f"level {level}"
            )


@needs_vulkan
@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("size", [(64, 64), (97, 45), (1, 33), (130, 1)])
def test_vulkan_mips_equal_the_reference(rng, format, size):
    w, h = size
    image = random_image(rng, (2, 4, h, w), dtype_for(format))
    vulkan = tv.TexturePyramid(image, format=format, backend="vulkan")
    cpu = tv.TexturePyramid(image, format=format, backend="cpu")
    assert vulkan.backend == "vulkan" and cpu.backend == "cpu"
    assert_levels_match(vulkan, cpu, format)


@needs_vulkan
@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("kind", ["foveated", "grid", "anisotropic", "anisotropic_glimpse"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_vulkan_sampling_matches_the_reference(rng, format, kind, dtype):
    image = random_image(rng, (2, 3, 90, 120), dtype_for(format))
    if kind.startswith("anisotropic"):  # where the unit puts its taps along the axis is its own: constant along it
        image = np.ascontiguousarray(
            np.broadcast_to(random_image(rng, (2, 3, 64, 1), dtype_for(format)), (2, 3, 64, 128))
        )
    if kind == "foveated":
        layout = tv.layouts.foveated(120, 90, [[[0.2, 0.3]], [[0.8, 0.5]]], num_patches=30, patch_size=8, images=2)
    elif kind == "grid":
        layout = tv.layouts.grid(120, 90, patch_size=8, level=1, images=2)
    elif kind == "anisotropic":
        layout = tv.layouts.anisotropic(128, 64, patch_size=8, level=1, elongation=2, images=2)
    else:
        layout = tv.layouts.anisotropic(
            128, 64, patch_size=8, level=1, elongation=2, images=2, fixation=[(0.3, 0.4), (0.9, 0.1)], num_patches=5
        )
    vulkan = tv.TexturePyramid(image, format=format, backend="vulkan")
    cpu = tv.TexturePyramid(image, format=format, backend="cpu")
    got = vulkan.sample(layout, dtype=dtype)
    expected = cpu.sample(layout, max_anisotropy=vulkan.max_anisotropy)
    assert got.patches.shape == (2, layout.num_patches, 3, layout.patch_size, layout.patch_size)
    assert got.patches.dtype == np.dtype(dtype)
    assert np.array_equal(got.meta, layout.metadata)
    err = np.abs(got.patches.astype(np.float64) - expected.patches)
    assert np.all(err <= tolerance(layout.gradients, dtype == "float16", expected.patches))
    assert np.all(got.patches[~got.mask] == 0)


@needs_vulkan
def test_sample_writes_every_value_of_a_poisoned_output(rng):
    image = random_image(rng, (3, 64, 64))
    pyramid = tv.TexturePyramid(image, backend="vulkan")
    layout = tv.layouts.foveated(64, 64, num_patches=13)
    out = np.full((13, 3, 16, 16), np.nan, np.float32)
    result = pyramid.sample(layout, out=out)
    assert result.patches is out
    assert not np.isnan(out).any()
    np.testing.assert_array_equal(out, pyramid.sample(layout).patches)


@needs_vulkan
def test_partial_updates_equal_a_full_rebuild(rng):
    first = random_image(rng, (2, 3, 100, 140))
    second = first.copy()
    rects = [(10, 20, 33, 17), (100, 60, 40, 40)]
    for x, y, w, h in rects:
        second[:, :, y : y + h, x : x + w] = random_image(rng, (2, 3, h, w))
    for backend in ("vulkan", "cpu"):
        video = tv.TexturePyramid(first, backend=backend)
        video.update(second, rect=rects)
        fresh = tv.TexturePyramid(second, backend=backend)
        assert_levels_match(video, fresh, "rgba8")


@needs_vulkan
def test_video_pyramid_created_empty_then_fed_frames(rng):
    pyramid = tv.TexturePyramid.create(96, 64, format="rgba8", batch=1, channels=3)
    layout = tv.layouts.foveated(96, 64, num_patches=20)
    for _ in range(3):
        frame = random_image(rng, (3, 64, 96))
        pyramid.update(frame)
        expected = tv.TexturePyramid(frame, backend="cpu").sample(layout).patches
        err = np.abs(pyramid.sample(layout).patches - expected)
        assert np.all(err <= tolerance(False, False, expected))


@needs_vulkan
def test_channels_last_and_four_channels(rng):
    hwc = random_image(rng, (40, 50, 4))
    a = tv.TexturePyramid(hwc, channels_last=True, backend="vulkan")
    b = tv.TexturePyramid(np.ascontiguousarray(np.moveaxis(hwc, -1, 0)), backend="vulkan")
    assert a.level(0).shape == (40, 50, 4)
    np.testing.assert_array_equal(np.moveaxis(a.level(2), -1, 0), b.level(2))
    np.testing.assert_array_equal(a.level(0), hwc)
    patches = a.sample_at_level(1, patch_size=5).patches
    assert patches.shape[1] == 4


@needs_vulkan
def test_box_chain_of_floats_equals_avg_pool(rng):
    image = random_image(rng, (2, 3, 64, 128), np.float32)
    levels = tv.generate_mipmaps(image)
    assert levels[0] is image  # level 0 is the input itself: no copy
    expected = image.astype(np.float64)
    for level in levels[1:]:
        b, c, h, w = expected.shape
        expected = (
            expected.reshape(b, c, h // 2, 2, w // 2, 2).mean(axis=(3, 5))
            if h > 1
            else expected.reshape(b, c, 1, w // 2, 2).mean(axis=4)
        )
        np.testing.assert_allclose(level, expected, rtol=1e-6, atol=1e-7)
    assert levels[-1].shape == (2, 3, 1, 1)


@needs_vulkan
def test_odd_sizes_follow_the_exact_box():
    image = np.zeros((3, 1, 5), np.float32)
    image[:, 0, :] = [0, 1, 2, 3, 4]
    level1 = tv.generate_mipmaps(image, backend="vulkan")[1]
    # 5 -> 2: texel 0 covers source 0, 1, 2 by 2, 2, 1; texel 1 covers 2, 3, 4 by 1, 2, 2.
    np.testing.assert_allclose(level1[0, 0], [(0 * 2 + 1 * 2 + 2) / 5, (2 + 3 * 2 + 4 * 2) / 5], rtol=1e-6)


@pytest.mark.skipif(not has_torch(), reason="PyTorch is not installed")
@needs_vulkan
def test_torch_cpu_tensors_in_and_out(rng):
    import torch
    import torch.nn.functional as F

    image = torch.from_numpy(random_image(rng, (3, 64, 64), np.float32))
    pyramid = tv.TexturePyramid(image)
    patches, meta = pyramid.sample_at_level(2, patch_size=4)
    assert isinstance(patches, torch.Tensor) and isinstance(meta, torch.Tensor)
    levels = tv.generate_mipmaps(image)
    torch.testing.assert_close(levels[3], F.avg_pool2d(image[None], 8)[0], rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="JAX is not installed")
@pytest.mark.parametrize("backend", ["cpu", pytest.param("vulkan", marks=needs_vulkan)])
def test_jax_arrays_in_and_out(rng, backend):
    """JAX arrays in (read through DLPack) give JAX arrays out, equal to the NumPy path."""
    import jax
    import jax.numpy as jnp

    array = random_image(rng, (2, 3, 40, 56))
    image = jax.device_put(array, jax.devices("cpu")[0])  # host memory also where JAX has a GPU
    layout = tv.layouts.foveated(56, 40, (0.3, 0.7), num_patches=24, images=2)
    got = tv.TexturePyramid(image, backend=backend).sample(layout)
    want = tv.TexturePyramid(array, backend=backend).sample(layout)
    assert isinstance(got.patches, jax.Array) and isinstance(got.meta, jax.Array)
    np.testing.assert_array_equal(np.asarray(got.patches), want.patches)
    np.testing.assert_array_equal(np.asarray(got.meta), want.meta)
    levels = tv.generate_mipmaps(image.astype(jnp.bfloat16), backend=backend)
    assert all(isinstance(level, jax.Array) and level.dtype == jnp.bfloat16 for level in levels)
    reference = tv.generate_mipmaps(np.asarray(image.astype(jnp.bfloat16).astype(jnp.float32)), backend=backend)
    for level, expected in zip(levels[1:], reference[1:]):
        np.testing.assert_allclose(np.asarray(level.astype(jnp.float32)), expected, rtol=1e-2, atol=1e-2)
    with pytest.raises(tv.Error, match="JAX arrays are immutable"):
        tv.TexturePyramid(image, backend=backend).sample(layout, out=jnp.zeros((2, 24, 3, 16, 16)))


def test_sample_anisotropic_with_a_fixation(rng):
    """pyramid.sample_anisotropic(fixation) samples the glimpse layout of that fixation."""
    image = random_image(rng, (3, 64, 128))
    pyramid = tv.TexturePyramid(image, backend="cpu")
    got = pyramid.sample_anisotropic((0.7, 0.2), level=1, elongation=2, patch_size=8, num_patches=6)
    layout = tv.layouts.anisotropic(128, 64, patch_size=8, level=1, elongation=2, fixation=(0.7, 0.2), num_patches=6)
    assert got.patches.shape == (6, 3, 8, 8)
    np.testing.assert_array_equal(got.meta, layout.metadata[0])
    np.testing.assert_array_equal(got.patches, pyramid.sample(layout).patches)
    whole = pyramid.sample_anisotropic(level=1, elongation=2, patch_size=8)
    assert whole.patches.shape[0] == tv.layouts.anisotropic(128, 64, 8, 1, 2).num_patches


@needs_vulkan
def test_the_default_vulkan_device_follows_the_current_cuda_device(monkeypatch):
    # A rank's choice, without a GPU: _current_cuda_uuid stands for torch's current CUDA
    # device. Its Vulkan twin (here lavapipe, by UUID) is picked; a UUID with no twin is an
    # error naming it, not a silent fall back to another GPU.
    from texturevlm import _devices

    twin = tv.devices()[0].uuid
    monkeypatch.setattr(_devices, "_current_cuda_uuid", lambda: twin)
    assert _devices.vulkan_device().uuid == twin
    missing = "0badc0de-0000-4000-8000-000000000001"
    monkeypatch.setattr(_devices, "_current_cuda_uuid", lambda: missing)
    with pytest.raises(tv.Error, match=f"current CUDA device \\(UUID {missing}\\) has no Vulkan twin"):
        _devices.vulkan_device()
    monkeypatch.setattr(_devices, "_current_cuda_uuid", lambda: "")
    assert _devices.vulkan_device().uuid  # no CUDA in use: the best device


@pytest.mark.parametrize("backend", ["cpu", pytest.param("vulkan", marks=needs_vulkan)])
def test_sample_foveated_repeats_and_changes_give_their_own_layouts(rng, backend):
    # A pyramid remembers its last plain (x, y) call's layout: a repeat must reuse it, and a
    # changed fixation or budget must not (each call equals sampling its own layout).
    image = random_image(rng, (3, 96, 128))
    pyramid = tv.TexturePyramid(image, backend=backend)
    calls = [((0.5, 0.5), 30), ((0.5, 0.5), 30), ((0.2, 0.7), 30), ((0.2, 0.7), 24), ((0.5, 0.5), 30), ((1, 0), 30)]
    for fixation, budget in calls:
        got = pyramid.sample_foveated(fixation, num_patches=budget, patch_size=8)
        want = pyramid.sample(tv.layouts.foveated(128, 96, fixation, num_patches=budget, patch_size=8))
        np.testing.assert_array_equal(got.patches, want.patches)
        np.testing.assert_array_equal(got.meta, want.meta)
