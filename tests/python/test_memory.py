"""Host memory: the CPU backend holds its chain and one row besides, refuses up front what
would not fit the memory the process may take (TVLM_HOST_MEMORY_LIMIT caps it), and a bad
cap is an error rather than ignored (docs/python.md, "Memory")."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import texturevlm as tv


def test_a_cpu_pyramid_that_would_not_fit_is_refused_up_front(monkeypatch: pytest.MonkeyPatch) -> None:
    image = np.zeros((4, 512, 512), np.uint8)
    monkeypatch.setenv("TVLM_HOST_MEMORY_LIMIT", "4M")  # the chain alone is 5.3 MiB
    with pytest.raises(tv.Error, match=r"a CPU pyramid of 1 image\(s\) of 512x512 needs about 0.01 GiB"):
        tv.TexturePyramid(image, backend="cpu")
    monkeypatch.setenv("TVLM_HOST_MEMORY_LIMIT", "16M")  # chain and a level 0 beside it: 9.3 MiB
    pyramid = tv.TexturePyramid(image, backend="cpu")
    assert pyramid.level(1).shape == (4, 256, 256)


@pytest.mark.parametrize("value", ["8X", "lots", "-1G"])
def test_a_cap_that_is_not_a_size_is_an_error(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("TVLM_HOST_MEMORY_LIMIT", value)
    with pytest.raises(tv.Error, match=f"TVLM_HOST_MEMORY_LIMIT={value}"):
        tv.TexturePyramid(np.zeros((4, 8, 8), np.uint8), backend="cpu")


PROBE = """
import resource, sys
import numpy as np
import texturevlm as tv
side = int(sys.argv[1])
image = np.full((4, side, side), 7, np.uint8)
pyramid = tv.TexturePyramid(image, backend="cpu")
pyramid.update(image)
pyramid.sample_foveated((0.5, 0.5))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def peak_bytes(side: int) -> int:
    run = subprocess.run([sys.executable, "-c", PROBE, str(side)], capture_output=True, text=True, check=True)
    return int(run.stdout.split()[-1])


def test_a_cpu_pyramid_peaks_at_its_chain_and_the_callers_array() -> None:
    # Float RGBA levels are 16 bytes a pixel, 4/3 of that over the chain: 21.3, with the
    # caller's uint8 array 25.3; 28 leaves room for rows and the sampled patches.
    side = 2048
    grown = peak_bytes(side) - peak_bytes(16)
    assert grown <= 28 * side * side, f"{grown / 2**20:.0f} MiB for a {side}^2 pyramid"
