"""HF's size rules, every branch with known answers (worked by hand from transformers'
formulas, which test_processors.py checks against HF's own outputs): Qwen2-VL's
smart_resize (rounding, the max- and min-pixel rescales, the factor clamp, the aspect
limit on both axes), CLIP's shortest-edge resize (portrait, landscape, square), the
resize dispatch and the center crop (odd margins, a crop too tall or too wide)."""

from __future__ import annotations

import pytest
from texturevlm.processors._rules import (
    ProcessorInputError,
    center_crop_box,
    resized_size,
    shortest_edge_size,
    smart_resize,
)


@pytest.mark.parametrize(
    "height,width,want",
    [
        (224, 224, (224, 224)),  # multiples of 28, inside the budget: unchanged
        (250, 250, (252, 252)),  # 8.93 rounds up
        (238, 238, (224, 224)),  # 8.5 rounds to even (Python's round, as HF's)
        (266, 266, (280, 280)),  # 9.5 rounds to even, upwards
        (10000, 10000, (980, 980)),  # over max_pixels: both sides scaled by beta, floored
        (50000, 300, (12908, 56)),  # over max_pixels, extreme aspect
        (300, 50000, (56, 12908)),  # the same, transposed
        (20, 20, (56, 56)),  # under min_pixels: scaled up, ceiled
        (10, 40, (28, 112)),  # under min_pixels with a side that rounded to 0
        (1, 200, (28, 812)),  # an aspect ratio of exactly 200 is accepted
        (200, 1, (812, 28)),
    ],
)
def test_smart_resize_known_answers(height, width, want):
    assert smart_resize(height, width) == want


def test_smart_resize_clamps_a_side_at_the_factor():
    # A budget small enough that the short side would floor to 0 patches: it stays at one.
    assert smart_resize(5600, 28, 28, 28 * 28, 28 * 28 * 2) == (560, 28)
    assert smart_resize(28, 5600, 28, 28 * 28, 28 * 28 * 2) == (28, 560)


@pytest.mark.parametrize("height,width", [(1, 201), (201, 1), (2, 401), (401, 2)])
def test_smart_resize_refuses_an_aspect_ratio_over_200_on_either_axis(height, width):
    with pytest.raises(ProcessorInputError, match="absolute aspect ratio must be smaller than 200"):
        smart_resize(height, width)


def test_an_area_exactly_at_the_budgets_edge_is_kept():
    # 66 x 125 rounds to 56 x 112 = 6272: exactly max_pixels (or min_pixels) is within the
    # budget, so no rescale (a rescale would give 56 x 84, or 84 x 112).
    assert smart_resize(66, 125, 28, 28 * 28, 56 * 112) == (56, 112)
    assert smart_resize(66, 125, 28, 56 * 112, 10**7) == (56, 112)


def test_smart_resize_keeps_the_area_within_the_budget_at_its_edges():
    budget = 28 * 28 * 4
    assert smart_resize(56, 56, 28, budget, budget) == (56, 56)  # exactly min = max: kept
    h, w = smart_resize(57, 57, 28, budget, budget)
    assert (h, w) == (56, 56) and h * w <= budget


@pytest.mark.parametrize(
    "height,width,edge,want",
    [
        (300, 200, 224, (336, 224)),  # portrait: width is the short side
        (200, 300, 224, (224, 336)),  # landscape: height is
        (300, 300, 224, (224, 224)),  # square: width <= height picks width
        (301, 200, 224, (337, 224)),  # the long side truncates: 337.12 -> 337
        (299, 200, 224, (334, 224)),  # 334.88 -> 334, not rounded
    ],
)
def test_shortest_edge_size_known_answers(height, width, edge, want):
    assert shortest_edge_size(height, width, edge) == want


def test_resized_size_takes_shortest_edge_first_then_height_and_width():
    assert resized_size(300, 200, {"shortest_edge": 224}) == (336, 224)
    assert resized_size(300, 200, {"shortest_edge": 224, "height": 10, "width": 10}) == (336, 224)
    assert resized_size(300, 200, {"height": 10, "width": 20}) == (10, 20)
    assert resized_size(300, 200, {"shortest_edge": 0, "height": 10, "width": 20}) == (10, 20)
    for size in ({"height": 10}, {"width": 10}, {}):
        with pytest.raises(ProcessorInputError, match="size must have 'height' and 'width', or 'shortest_edge'"):
            resized_size(300, 200, size)


@pytest.mark.parametrize(
    "height,width,crop,want",
    [
        (224, 224, (224, 224), (0, 0)),  # the whole image
        (225, 224, (224, 224), (0, 0)),  # an odd margin of 1: int(0.5) = 0
        (227, 230, (224, 224), (1, 3)),  # int(1.5) = 1, int(3.0) = 3
        (336, 224, (224, 224), (56, 0)),
    ],
)
def test_center_crop_box_known_answers(height, width, crop, want):
    assert center_crop_box(height, width, *crop) == want


@pytest.mark.parametrize("height,width", [(223, 300), (300, 223)])
def test_center_crop_refuses_a_crop_larger_than_the_image_on_either_axis(height, width):
    with pytest.raises(ProcessorInputError, match="crop 224x224 is larger than the resized"):
        center_crop_box(height, width, 224, 224)
