"""Layouts from Python: exact budgets, masks, metadata, batches, per-image fixations, and
the refusals of bad arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest
import texturevlm as tv


def covered_units(layout: tv.Layout, image: int = 0) -> np.ndarray:
    """How often each P x P unit of the image is covered by a real patch."""
    p, w, h = layout.patch_size, layout.width, layout.height
    counts = np.zeros(((h + p - 1) // p, (w + p - 1) // p), int)
    for cu, cv, su, sv, level in layout.metadata[image]:
        if level < 0:
            continue
        x0, y0 = round((cu - su / 2) * w), round((cv - sv / 2) * h)
        x1, y1 = round((cu + su / 2) * w), round((cv + sv / 2) * h)
        counts[y0 // p : (y1 + p - 1) // p, x0 // p : (x1 + p - 1) // p] += 1
    return counts


@pytest.mark.parametrize("fixation", [(0.5, 0.5), (0.0, 0.0), (1.0, 1.0), (0.9, 0.1)])
@pytest.mark.parametrize("num_patches", [273, 64, 577])
def test_foveated_returns_exactly_num_patches_filled(fixation, num_patches):
    layout = tv.layouts.foveated(720, 477, fixation, num_patches=num_patches)
    assert layout.num_patches == num_patches
    assert layout.metadata.shape == (1, num_patches, 5)
    real = int(layout.mask.sum())
    assert num_patches - 2 <= real <= num_patches  # splits add 3 patches: at most 2 slots left
    assert np.all(covered_units(layout) == 1)  # the real patches tile the image
    assert np.all(layout.metadata[0, real:, 4] == -1) and np.all(layout.metadata[0, real:, :4] == 0)


def test_foveated_pads_only_where_no_finer_level_exists():
    layout = tv.layouts.foveated(64, 64, (0.5, 0.5), num_patches=40, patch_size=16)
    assert layout.num_patches == 40
    assert int(layout.mask.sum()) == 16  # every 16x16 cell of a 64x64 image at level 0
    assert np.all(layout.metadata[0, :16, 4] == 0)


def test_foveated_levels_grow_with_eccentricity():
    layout = tv.layouts.foveated(1024, 1024, (0.25, 0.25), num_patches=273)
    meta = layout.metadata[0][layout.mask[0]]
    distance = np.hypot(meta[:, 0] - 0.25, meta[:, 1] - 0.25)
    assert meta[np.argmin(distance), 4] == 0
    assert meta[np.argmax(distance), 4] == meta[:, 4].max() > 2


def test_batch_layouts_one_set_of_fixations_per_image():
    fixations = np.array([[[0.1, 0.1]], [[0.9, 0.9]], [[0.5, 0.5]]])
    layout = tv.layouts.foveated(256, 256, fixations, num_patches=40, images=3)
    assert layout.images == 3 and layout.num_patches == 40
    assert layout.metadata.shape == (3, 40, 5)
    records = layout.records.reshape(3, 40, 32)
    layers = records[..., 28:32].copy().view(np.uint32)[..., 0]
    assert np.all(layers == np.arange(3)[:, None])
    finest = [layout.metadata[b][np.argmin(layout.metadata[b, :, 4] + 10 * (~layout.mask[b]))] for b in range(3)]
    assert finest[0][0] < 0.5 < finest[1][0]  # each image is fine around its own fixation
    shared = tv.layouts.foveated(256, 256, [(0.1, 0.1), (0.9, 0.9)], num_patches=40, images=2)
    assert np.array_equal(shared.metadata[0], shared.metadata[1])


def test_grid_and_anisotropic_layouts():
    grid = tv.layouts.grid(100, 60, patch_size=16, level=1)
    assert grid.num_patches == math.ceil(50 / 16) * math.ceil(30 / 16)
    assert np.all(grid.metadata[0, :, 4] == 1)
    aniso = tv.layouts.anisotropic(256, 128, patch_size=8, elongation=4)
    assert aniso.gradients and not grid.gradients
    su, sv = aniso.metadata[0, 0, 2] * 256, aniso.metadata[0, 0, 3] * 128
    assert su == pytest.approx(4 * sv)
    with pytest.raises(tv.Error, match="orientation"):
        tv.layouts.anisotropic(256, 128, orientation="diagonal")


def test_layouts_are_deterministic():
    a = tv.layouts.foveated(640, 480, (0.3, 0.7), num_patches=200)
    b = tv.layouts.foveated(640, 480, (0.3, 0.7), num_patches=200)
    assert np.array_equal(a.records, b.records)


@pytest.mark.parametrize(
    "fixation,match",
    [
        ((float("nan"), 0.5), "outside the image"),
        ((1.5, 0.5), "outside the image"),
        ((-0.1, 0.5), "outside the image"),
        ([[0.5]], "fixations must be"),
        (np.zeros((2, 1, 2)), "2 sets of fixations for 1 images"),
    ],
)
def test_bad_fixations(fixation, match):
    with pytest.raises(tv.Error, match=match):
        tv.layouts.foveated(256, 256, fixation, num_patches=40)


def test_bad_budgets_and_patch_sizes():
    with pytest.raises(tv.Error, match="budget 0 is below"):
        tv.layouts.foveated(256, 256, num_patches=0)
    with pytest.raises(tv.Error, match="budget 1 is below the 2 patches"):
        tv.layouts.foveated(512, 256, num_patches=1)
    for p in (0, 65):
        with pytest.raises(tv.Error, match="patch size"):
            tv.layouts.foveated(256, 256, patch_size=p)
        with pytest.raises(tv.Error, match="patch size"):
            tv.layouts.grid(256, 256, patch_size=p)
    with pytest.raises(tv.Error, match="level"):
        tv.layouts.grid(256, 256, level=9)
    with pytest.raises(tv.Error, match="single-image"):
        tv.layouts.batch([tv.layouts.grid(64, 64, images=2)])


def test_anisotropic_glimpse_keeps_the_tiles_nearest_the_fixation():
    full = tv.layouts.anisotropic(300, 200, patch_size=8, level=0, elongation=4)
    centres = full.metadata[0, :, :2] * [300, 200]
    for fixation in [(0.5, 0.5), (0.0, 1.0), (0.93, 0.12)]:
        glimpse = tv.layouts.anisotropic(
            300, 200, patch_size=8, level=0, elongation=4, fixation=fixation, num_patches=17
        )
        assert glimpse.num_patches == 17 and glimpse.gradients
        distance = np.hypot(*(centres - np.multiply(fixation, [300, 200])).T)
        order = np.argsort(distance, kind="stable")[:17]
        np.testing.assert_array_equal(glimpse.metadata[0], full.metadata[0, order])
    per_image = tv.layouts.anisotropic(
        300, 200, patch_size=8, fixation=[(0.1, 0.1), (0.9, 0.9)], num_patches=4, images=2
    )
    assert per_image.metadata[0, 0, 0] < 0.2 and per_image.metadata[1, 0, 0] > 0.8
    default = tv.layouts.anisotropic(300, 200, patch_size=8, fixation=(0.5, 0.5))
    assert default.num_patches == full.num_patches // 4


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(fixation=(float("nan"), 0.5), num_patches=4), "outside the image"),
        (dict(fixation=(1.5, 0.5), num_patches=4), "outside the image"),
        (dict(fixation=(0.5, 0.5), num_patches=0), "num_patches 0 is out of range"),
        (dict(fixation=(0.5, 0.5), num_patches=10**6), "ask for 1 to"),
        (dict(num_patches=4), "pass fixation"),
        (
            dict(fixation=[(0.1, 0.1), (0.5, 0.5)], num_patches=4),
            "one fixation per image: pass \\(x, y\\) or \\[1, 2\\]",
        ),
    ],
)
def test_bad_anisotropic_glimpses(kwargs, match):
    with pytest.raises(tv.Error, match=match):
        tv.layouts.anisotropic(300, 200, patch_size=8, **kwargs)


def test_one_version_for_the_package_the_engine_and_the_wheel() -> None:
    """texturevlm.__version__ is the engine's (CMakeLists.txt's project(VERSION)), and the
    installed distribution's version is the same (pyproject.toml reads it from there)."""
    import importlib.metadata
    import re

    from texturevlm import _core

    assert tv.__version__ == _core.__version__
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", tv.__version__)
    try:
        installed = importlib.metadata.version("texturevlm")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("texturevlm is not installed (run from a source tree): no distribution version to compare")
    assert installed == tv.__version__


def test_the_tvlm_console_script_runs_the_packaged_command_line() -> None:
    """`pip install` gives `tvlm`: the console script beside this Python runs the command
    line built into the package, the same version as the package."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    script = shutil.which("tvlm", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("no tvlm console script beside this Python (texturevlm is not pip-installed here)")
    result = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"tvlm {tv.__version__} (texturevlm)\n"
    result = subprocess.run([script, "nonsense"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "unknown command 'nonsense'" in result.stderr
