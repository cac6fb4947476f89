"""The CV-CUDA baseline's own steps that are not CV-CUDA's (texturevlm/bench/cvcuda_baseline.py):
its Qwen2-VL patches must be HF's layout, or the benchmark's comparison with HF means nothing."""

import numpy as np
import pytest
from texturevlm.bench import cvcuda_baseline
from texturevlm.processors import Qwen2VLImageProcessor

CLIP_MEAN = np.array([0.48145466, 0.4578275, 0.40821073], np.float32)
CLIP_STD = np.array([0.26862954, 0.26130258, 0.27577711], np.float32)


def test_qwen_patches_cut_planar_images_as_hf_does():
    """An image already of the size Qwen2-VL keeps (sides multiples of 28): the processor's
    pixel_values are the normalized image, cut into patches; qwen_patches must cut the same."""
    torch = pytest.importorskip("torch", reason="the benchmark's baselines run on torch tensors")
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (56, 84, 3), dtype=np.uint8)
    got = Qwen2VLImageProcessor(backend="cpu")(image)
    assert [int(v) for v in got.image_grid_thw[0]] == [1, 4, 6]
    planar = torch.from_numpy(image).permute(2, 0, 1)[None].float() * (1.0 / 255.0)
    planar = (planar - torch.from_numpy(CLIP_MEAN)[:, None, None]) / torch.from_numpy(CLIP_STD)[:, None, None]
    patches = cvcuda_baseline.qwen_patches(planar, patch=14, merge=2, temporal=2)
    assert tuple(patches.shape) == (24, 3 * 2 * 14 * 14)
    np.testing.assert_allclose(patches.numpy(), np.asarray(got.pixel_values), rtol=0, atol=2e-6)


def test_plans_follow_hfs_sizes():
    """CLIP: the shortest edge to 224 and HF's center crop; SigLIP: its square."""

    class Clip:
        size = {"shortest_edge": 224}
        crop_size = {"height": 224, "width": 224}

    assert cvcuda_baseline.plan("CLIP", Clip, None, 477, 720) == ((224, 338), (0, 57, 224, 224))
    assert cvcuda_baseline.plan("CLIP", Clip, None, 720, 477) == ((338, 224), (57, 0, 224, 224))

    class Siglip:
        size = {"height": 384, "width": 384}

    assert cvcuda_baseline.plan("SigLIP", Siglip, None, 477, 720) == ((384, 384), None)
    with pytest.raises(ValueError, match="no plan"):
        cvcuda_baseline.plan("Gemma 3", Siglip, None, 1, 1)
