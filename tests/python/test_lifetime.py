"""Objects own their resources: thousands of create/destroy cycles leave fds and host
memory flat, outputs outlive the pyramid (and the device cache) that made them."""

from __future__ import annotations

import gc
import os
import resource

import numpy as np
import texturevlm as tv
from conftest import needs_vulkan


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


@needs_vulkan
def test_vulkan_pyramids_and_outputs_2000_cycles_flat():
    image = np.zeros((3, 64, 64), np.uint8)
    layout = tv.layouts.foveated(64, 64, num_patches=13)

    def cycle():
        pyramid = tv.TexturePyramid(image, backend="vulkan")
        pyramid.sample(layout)

    for _ in range(50):  # warm-up: pipelines, caches, the allocator's pools
        cycle()
    gc.collect()
    fds, rss = open_fds(), rss_mb()
    for _ in range(2000):
        cycle()
    gc.collect()
    assert open_fds() == fds
    assert rss_mb() - rss < 20, f"host memory grew by {rss_mb() - rss:.1f} MB"


def test_cpu_pyramids_10000_cycles_flat():
    image = np.zeros((3, 16, 16), np.uint8)
    for _ in range(50):
        tv.TexturePyramid(image, backend="cpu").sample_at_level(0, patch_size=4)
    gc.collect()
    rss = rss_mb()
    for _ in range(10000):
        tv.TexturePyramid(image, backend="cpu").sample_at_level(0, patch_size=4)
    gc.collect()
    assert rss_mb() - rss < 20


@needs_vulkan
def test_outputs_outlive_their_pyramid():
    image = np.full((3, 32, 32), 200, np.uint8)
    pyramid = tv.TexturePyramid(image, backend="vulkan")
    patches, meta = pyramid.sample_at_level(0, patch_size=8)
    level = pyramid.level(1)
    del pyramid
    gc.collect()
    np.testing.assert_allclose(patches, 200 / 255, atol=1e-6)
    assert level.shape == (3, 16, 16) and np.all(level == 200)
