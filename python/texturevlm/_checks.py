"""One check per integer argument at the Python boundary: the C++ side takes unsigned 32-bit
integers, which nanobind would refuse with a bare TypeError listing signatures."""

from __future__ import annotations

import operator
from typing import Any

from ._core import Error

#: The most patch slots one image may ask for: past it the output alone would take tens of
#: gigabytes (N x C x P x P floats), so it is refused before any allocation.
MAX_PATCHES = 1 << 20

_U32 = (1 << 32) - 1


def whole(value: Any, name: str, low: int = 0, high: int = _U32, what: str = "") -> int:
    """`value` as an int in [low, high] (bools refused), else Error naming `name` and the range."""
    if isinstance(value, bool):
        raise Error(f"{name} must be a whole number, not {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise Error(f"{name} must be a whole number, not {value!r} ({type(value).__name__})") from None
    if not low <= number <= high:
        raise Error(f"{name} must be {low}..{high}{what}, not {number}")
    return number
