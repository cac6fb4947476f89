"""The embedded test chart: gradients, a zone plate, stripes of several periods and angles,
checkerboards and text-like detail, so filtering and aliasing show. The default input of
the examples, the README and the tests."""

from __future__ import annotations

import numpy as np

from . import _core


def test_chart(width: int = 1536, height: int = 1024, channels: int = 3) -> np.ndarray:
    """The chart as a uint8 NumPy array [channels, height, width] (channels 3 or 4);
    torch.from_numpy(...) makes it a tensor without a copy."""
    if channels not in (3, 4):
        raise _core.Error(f"the chart has 3 or 4 channels, not {channels}")
    rgba = _core.test_chart(width, height)
    return np.ascontiguousarray(np.moveaxis(rgba[..., :channels], -1, 0))


test_chart.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
