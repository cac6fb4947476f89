"""FeaturePyramid: 1..64-channel feature maps in groups of RGBA textures, on the CPU
reference and Vulkan (CI, lavapipe) and CUDA (NVIDIA machine), against the double
reference of the box chain and of trilinear sampling (texturevlm.sample_points on NumPy)."""

from __future__ import annotations

import numpy as np
import pytest
import texturevlm as tv
from conftest import needs_cuda, tolerance, vulkan_reason

BACKENDS = ["cpu"] + ([] if vulkan_reason() else ["vulkan"])


def reference_level(features: np.ndarray, level: int) -> np.ndarray:
    """Level `level` of [B, C, H, W] from the double reference chain."""
    b, c, h, w = features.shape
    packed = tv._core.reference_box_chain(features.astype(np.float64), level + 1)
    at = sum(b * c * max(1, h >> l) * max(1, w >> l) for l in range(level))
    lh, lw = max(1, h >> level), max(1, w >> level)
    return packed[at : at + b * c * lh * lw].reshape(b, c, lh, lw)


def reference_patches(features: np.ndarray, meta: np.ndarray, patch: int) -> np.ndarray:
    """[B, N, C, P, P]: trilinear samples at each patch's level, the layouts' placement
    (u = cu + ((j + 0.5) / P - 0.5) * su), zeros for padding slots."""
    b, n = meta.shape[:2]
    steps = (np.arange(patch) + 0.5) / patch - 0.5
    out = np.zeros((b, n, features.shape[1], patch, patch))
    for i in range(b):
        for k in range(n):
            cu, cv, su, sv, level = meta[i, k]
            if level < 0:
                continue
            u, v = np.meshgrid(cu + steps * su, cv + steps * sv)  # [P(k), P(j)]
            uv = np.stack([u, v], -1).reshape(-1, 2)
            samples = tv.sample_points(features[i], uv, np.full(len(uv), level))  # [P * P, C]
            out[i, k] = samples.T.reshape(-1, patch, patch)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("channels", [1, 3, 6, 40])
def test_levels_and_patches_equal_the_reference(rng, backend, channels):
    features = rng.random((2, channels, 45, 70)).astype(np.float32)
    pyramid = tv.FeaturePyramid(features, backend=backend)
    assert pyramid.textures == (channels + 3) // 4 and pyramid.levels == 7
    for level in (0, 1, 3, 6):
        got = pyramid.level(level)
        assert got.shape == reference_level(features, level).shape and got.dtype == np.float32
        np.testing.assert_allclose(got, reference_level(features, level), rtol=0, atol=2e-6)
    for patches in (
        pyramid.sample_at_level(1, patch_size=8),
        pyramid.sample_foveated([[[0.2, 0.3]], [[0.7, 0.6]]], num_patches=30, patch_size=8),
    ):
        assert patches.patches.shape == (2, patches.meta.shape[1], channels, 8, 8)
        want = reference_patches(features, np.asarray(patches.meta), 8)
        err = np.abs(patches.patches.astype(np.float64) - want)
        assert np.all(err <= tolerance(False, False, want)), err.max()
        assert np.all(patches.patches[~patches.mask] == 0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_channels_last_updates_and_half_precision(rng, backend):
    features = rng.random((2, 10, 32, 48)).astype(np.float32)
    planar = tv.FeaturePyramid(features, backend=backend)
    last = tv.FeaturePyramid(np.ascontiguousarray(features.transpose(0, 2, 3, 1)), backend=backend, channels_last=True)
    np.testing.assert_array_equal(last.level(2), planar.level(2).transpose(0, 2, 3, 1))
    np.testing.assert_array_equal(last.sample_at_level(1, 8).patches, planar.sample_at_level(1, 8).patches)
    newer = rng.random(features.shape).astype(np.float32)
    planar.update(newer)
    np.testing.assert_allclose(planar.level(1), reference_level(newer, 1), atol=2e-6)
    half = tv.FeaturePyramid(features.astype(np.float16), backend=backend)
    assert half.level(1).dtype == np.float16
    np.testing.assert_allclose(half.level(1), reference_level(features, 1), atol=2e-3)


def test_bad_feature_maps_are_refused(rng):
    for shape, match in (((0, 8, 8), "1..64 channels"), ((65, 8, 8), "1..64 channels"), ((8, 8), "features are")):
        with pytest.raises(tv.Error, match=match):
            tv.FeaturePyramid(np.zeros(shape, np.float32), backend="cpu")
    with pytest.raises(tv.Error, match="quantize"):
        tv.FeaturePyramid(np.zeros((8, 16, 16), np.uint8), backend="cpu")
    pyramid = tv.FeaturePyramid(np.zeros((8, 16, 16), np.float32), backend="cpu")
    with pytest.raises(tv.Error, match="8 channels"):
        pyramid.update(np.zeros((5, 16, 16), np.float32))
    with pytest.raises(tv.Error):
        pyramid.update(np.zeros((8, 16, 17), np.float32))


@needs_cuda
def test_cuda_feature_pyramids_equal_the_host_and_have_gradients(rng):
    import torch

    features = rng.random((2, 40, 45, 70)).astype(np.float32)
    cuda = tv.FeaturePyramid(torch.from_numpy(features).cuda())
    host = tv.FeaturePyramid(features, backend="cpu")
    np.testing.assert_allclose(cuda.level(3).cpu().numpy(), host.level(3), atol=2e-6)
    got, want = cuda.sample_foveated((0.4, 0.6), 30, 8), host.sample_foveated((0.4, 0.6), 30, 8)
    err = np.abs(got.patches.cpu().numpy().astype(np.float64) - want.patches)
    assert np.all(err <= tolerance(False, False, want.patches))
    # Gradients: patches are linear in the features, so sum(w * patches) = <features, grad>.
    source = torch.from_numpy(features).cuda().requires_grad_()
    patches = tv.FeaturePyramid(source).sample_foveated((0.4, 0.6), 30, 8).patches
    weights = torch.randn(patches.shape, device="cuda")
    value = (weights * patches).sum()
    (grad,) = torch.autograd.grad(value, source)
    torch.testing.assert_close((grad * source.detach()).sum(), value.detach(), rtol=1e-4, atol=1e-3)
