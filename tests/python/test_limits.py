"""Every documented limit of the layouts, held at the limit (accepted) and one past it
(refused), on both axes where it has two: tests that notice an off-by-one."""

from __future__ import annotations

import numpy as np
import pytest
import texturevlm as tv


@pytest.mark.parametrize("patch_size,ok", [(0, False), (1, True), (64, True), (65, False)])
@pytest.mark.parametrize("make", [tv.layouts.grid, tv.layouts.foveated, tv.layouts.anisotropic])
def test_patch_size_is_1_to_64(make, patch_size, ok):
    if ok:
        assert make(256, 128, patch_size=patch_size).patch_size == patch_size
    else:
        with pytest.raises(tv.Error, match=f"patch size {patch_size} is out of range: use 1 to 64"):
            make(256, 128, patch_size=patch_size)


# A W x H image has levels 0 .. floor(log2(max(W, H))): the longer side decides, whichever
# axis it is on.
@pytest.mark.parametrize("width,height,last", [(64, 16, 6), (16, 64, 6), (65, 1, 6), (1, 65, 6), (1, 1, 0)])
def test_grid_levels_end_at_the_longer_sides_log2(width, height, last):
    assert tv.layouts.grid(width, height, patch_size=1, level=last).metadata.shape[1] >= 1
    with pytest.raises(tv.Error, match=f"level {last + 1} does not exist: a {width}x{height} image has levels 0 to"):
        tv.layouts.grid(width, height, patch_size=1, level=last + 1)


@pytest.mark.parametrize("elongation,ok", [(0, False), (1, True), (16, True), (17, False)])
def test_elongation_is_1_to_16(elongation, ok):
    if ok:
        assert tv.layouts.anisotropic(256, 256, elongation=elongation).metadata.shape[1] >= 1
    else:
        with pytest.raises(tv.Error, match=f"elongation {elongation} is out of range: use 1 to 16"):
            tv.layouts.anisotropic(256, 256, elongation=elongation)


# The smallest budget is one patch per root cell: a square image has one root, a 2:1 image
# two, on either axis; exactly that is accepted, one fewer refused.
@pytest.mark.parametrize("width,height,roots", [(64, 64, 1), (128, 64, 2), (64, 128, 2), (256, 64, 4), (64, 256, 4)])
def test_the_smallest_foveated_budget_is_the_root_cells(width, height, roots):
    layout = tv.layouts.foveated(width, height, num_patches=roots)
    assert layout.metadata.shape == (1, roots, 5)
    assert (layout.metadata[0, :, 4] >= 0).all()  # every root cell a real patch, none padding
    with pytest.raises(tv.Error, match=f"budget {roots - 1} is below the {roots} patches a {width}x{height} image"):
        tv.layouts.foveated(width, height, num_patches=roots - 1)


@pytest.mark.parametrize("fixation", [(0.0, 0.0), (1.0, 1.0), (0.0, 1.0), (1.0, 0.0)])
def test_fixations_on_the_edges_and_corners_are_accepted(fixation):
    layout = tv.layouts.foveated(96, 64, fixation, num_patches=40)
    assert layout.metadata.shape == (1, 40, 5)


@pytest.mark.parametrize("fixation", [(-1e-6, 0.5), (0.5, -1e-6), (1.000001, 0.5), (0.5, 1.000001)])
def test_fixations_just_outside_either_axis_are_refused(fixation):
    with pytest.raises(tv.Error, match="outside the image"):
        tv.layouts.foveated(96, 64, fixation, num_patches=40)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"max_frames": 0}, r"max_frames must be 1\.\.9223372036854775807 frames \(or None: every frame\), not 0"),
        ({"max_frames": 2.5}, "max_frames must be a whole number, not 2.5"),
        ({"max_frames": True}, "max_frames must be a whole number, not True"),
        ({"num_fixations": 0}, r"num_fixations must be 1\.\.4294967295, not 0"),
        ({"num_fixations": "2"}, "num_fixations must be a whole number, not '2'"),
    ],
)
def test_video_frames_checks_its_integers_before_opening_anything(kwargs, match):
    # The source does not exist: the arguments are refused first, whatever the build.
    with pytest.raises(tv.Error, match=match):
        next(iter(tv.video.frames("/no/such/video.mkv", **kwargs)))


def test_the_documented_defaults():
    # Defaults are part of the API: patches of 16, HF's Qwen2-VL pixel budgets.
    from texturevlm.processors import Qwen2VLImageProcessor, Qwen2VLVideoProcessor

    assert tv.layouts.grid(64, 64).patch_size == 16
    assert tv.layouts.foveated(64, 64).patch_size == 16
    assert tv.layouts.anisotropic(64, 64).patch_size == 16
    assert (Qwen2VLImageProcessor().min_pixels, Qwen2VLImageProcessor().max_pixels) == (56 * 56, 28 * 28 * 1280)
    assert (Qwen2VLVideoProcessor().min_pixels, Qwen2VLVideoProcessor().max_pixels) == (128 * 28 * 28, 28 * 28 * 768)


def test_a_resize_layout_without_a_window_covers_the_whole_resized_image():
    whole_image = tv.layouts.resize(64, 48, 32, 24, patch_size=8)
    windowed = tv.layouts.resize(64, 48, 32, 24, window=(0, 0, 32, 24), patch_size=8)
    assert whole_image.num_patches == windowed.num_patches == 12
    np.testing.assert_array_equal(np.asarray(whole_image.metadata), np.asarray(windowed.metadata))
