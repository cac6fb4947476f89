"""The benchmark baselines' own steps (texturevlm/bench/cvcuda_baseline.py,
nvdiffrast_baseline.py): CV-CUDA's Qwen2-VL patches must be HF's layout and nvdiffrast must be
handed the job's points, or the comparisons mean nothing."""

import numpy as np
import pytest
from texturevlm.bench import cvcuda_baseline, nvdiffrast_baseline
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

    assert cvcuda_baseline.plan("CLIP", Clip, None, [np.zeros((3, 477, 720))]) == ((224, 338), (0, 57, 224, 224))
    assert cvcuda_baseline.plan("CLIP", Clip, None, [np.zeros((3, 720, 477))]) == ((338, 224), (57, 0, 224, 224))
    assert cvcuda_baseline.plan("CLIP", Clip, None, [np.zeros((3, 1024, 1024))]) == (
        (224, 224),
        None,
    )  # a square: nothing cut

    class Siglip:
        size = {"height": 384, "width": 384}

    assert cvcuda_baseline.plan("SigLIP", Siglip, None, [np.zeros((3, 477, 720))]) == ((384, 384), None)
    with pytest.raises(ValueError, match="no plan"):
        cvcuda_baseline.plan("Gemma 3", Siglip, None, [np.zeros((3, 1, 1))])


@pytest.mark.parametrize("points,grid", [(4096, (1, 64, 64)), (1 << 20, (1, 1024, 1024)), (1000, (1, 1, 1000))])
def test_nvdiffrast_gets_the_points_as_an_image_and_the_texture_channels_last(points, grid):
    torch = pytest.importorskip("torch", reason="the benchmark's baselines run on torch tensors")
    seen = {}

    class FakeNvdiffrast:
        @staticmethod
        def texture(texture, uv, mip_level_bias, filter_mode, boundary_mode):
            seen.update(texture=texture, uv=uv, bias=mip_level_bias, filter=filter_mode, boundary=boundary_mode)
            return uv[..., :1].expand(*uv.shape[:3], texture.shape[-1]) + mip_level_bias[..., None]

    image = torch.arange(2 * 3 * 5, dtype=torch.float32).reshape(1, 2, 3, 5).requires_grad_()
    uv, lod = torch.rand(points, 2), torch.rand(points)
    out = nvdiffrast_baseline.sampler(FakeNvdiffrast, image, uv, lod)()
    assert tuple(seen["uv"].shape) == grid + (2,) and tuple(seen["bias"].shape) == grid
    assert torch.equal(seen["texture"], image.detach().permute(0, 2, 3, 1))
    assert seen["texture"].requires_grad and seen["filter"] == "linear-mipmap-linear" and seen["boundary"] == "clamp"
    assert torch.equal(out, (uv[:, :1] + lod[:, None]).expand(points, 2))
