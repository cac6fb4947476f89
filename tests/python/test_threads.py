"""Threads sharing texturevlm objects: one pyramid sampled, read and rewritten from several
threads at once gives what one thread gives; separate pyramids on one device are
independent; processors serve requests from several threads. Every thread is joined with
a time limit, so a deadlock fails the test instead of hanging the suite."""

from __future__ import annotations

import threading
from typing import Any, Callable, List

import numpy as np
import pytest
import texturevlm as tv
from conftest import needs_cuda, needs_vulkan, random_image

THREADS = 10
CALLS = 100
JOIN_SECONDS = 300


def run_threads(work: Callable[[int], Any], threads: int = THREADS) -> List[Any]:
    """work(t) on `threads` threads started together; their results, or their exception re-raised."""
    results: List[Any] = [None] * threads
    errors: List[BaseException] = []
    start = threading.Barrier(threads)

    def body(t: int) -> None:
        try:
            start.wait()
            results[t] = work(t)
        except BaseException as e:
            errors.append(e)

    workers = [threading.Thread(target=body, args=(t,), daemon=True) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(JOIN_SECONDS)
    assert not any(w.is_alive() for w in workers), f"threads still running after {JOIN_SECONDS} s: a deadlock"
    if errors:
        raise errors[0]
    return results


def fixation(t: int, i: int) -> tuple:
    return (0.1 + 0.8 * ((t * 7 + i * 3) % 11) / 10, 0.1 + 0.8 * ((t * 5 + i) % 7) / 6)


BACKENDS = [pytest.param("vulkan", marks=needs_vulkan), "cpu"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_threads_sampling_one_pyramid_get_what_one_thread_gets(backend: str, rng: np.random.Generator) -> None:
    image = random_image(rng, (4, 96, 128))
    pyramid = tv.TexturePyramid(image, backend=backend)
    wanted = {}
    for t in range(THREADS):
        for i in range(CALLS):
            f = fixation(t, i)
            if f not in wanted:
                wanted[f] = pyramid.sample_foveated(f, num_patches=31, patch_size=8).patches.copy()

    def work(t: int) -> int:
        for i in range(CALLS):
            got = pyramid.sample_foveated(fixation(t, i), num_patches=31, patch_size=8).patches
            np.testing.assert_array_equal(got, wanted[fixation(t, i)])
        return CALLS

    assert sum(run_threads(work)) == THREADS * CALLS


@pytest.mark.parametrize("backend", BACKENDS)
def test_reading_levels_beside_sampling_and_updates_neither_hangs_nor_mixes(
    backend: str, rng: np.random.Generator
) -> None:
    # Threads 0-1 sample, 2-3 read levels, 4 rewrites the pyramid with the same frame: every
    # result is the one pyramid's, whichever order the calls take.
    image = random_image(rng, (4, 64, 80))
    pyramid = tv.TexturePyramid(image, backend=backend)
    patches = pyramid.sample_foveated((0.3, 0.6), num_patches=19, patch_size=8).patches.copy()
    levels = [pyramid.level(level).copy() for level in range(pyramid.levels)]

    def work(t: int) -> None:
        for i in range(CALLS):
            if t < 2:
                got = pyramid.sample_foveated((0.3, 0.6), num_patches=19, patch_size=8).patches
                np.testing.assert_array_equal(got, patches)
            elif t < 4:
                level = i % pyramid.levels
                np.testing.assert_array_equal(pyramid.level(level), levels[level])
            else:
                pyramid.update(image)

    run_threads(work, threads=5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_pyramid_per_thread_on_one_device_is_independent(backend: str, rng: np.random.Generator) -> None:
    images = [random_image(rng, (4, 48 + 8 * t, 64)) for t in range(THREADS)]
    wanted = [
        tv.TexturePyramid(images[t], backend=backend).sample_foveated((0.5, 0.5), num_patches=13, patch_size=8).patches
        for t in range(THREADS)
    ]

    def work(t: int) -> None:
        for _ in range(CALLS // 5):
            pyramid = tv.TexturePyramid(images[t], backend=backend)  # made, used and dropped per call
            got = pyramid.sample_foveated((0.5, 0.5), num_patches=13, patch_size=8).patches
            np.testing.assert_array_equal(got, wanted[t])

    run_threads(work)


@needs_cuda
def test_cuda_pyramid_shared_by_threads_each_on_its_stream() -> None:
    import torch

    g = torch.Generator().manual_seed(3)
    image = torch.randint(0, 256, (4, 96, 128), generator=g, dtype=torch.uint8).cuda()
    pyramid = tv.TexturePyramid(image)
    wanted = {}
    for t in range(THREADS):
        for i in range(CALLS):
            f = fixation(t, i)
            wanted.setdefault(f, pyramid.sample_foveated(f, num_patches=31, patch_size=8).patches.clone())
    torch.cuda.synchronize()

    def work(t: int) -> None:
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            got = [pyramid.sample_foveated(fixation(t, i), num_patches=31, patch_size=8).patches for i in range(CALLS)]
        stream.synchronize()
        for i in range(CALLS):
            assert torch.equal(got[i], wanted[fixation(t, i)])

    run_threads(work)


@needs_cuda
def test_a_new_layout_read_on_another_stream_waits_for_its_upload() -> None:
    """A layout's device copy is uploaded on the stream current when it is made; a read
    on another stream (another thread's, or stream=) must wait for that upload, however
    long the first stream is busy."""
    import torch

    g = torch.Generator().manual_seed(5)
    image = torch.randint(0, 256, (4, 96, 128), generator=g, dtype=torch.uint8).cuda()
    pyramid = tv.TexturePyramid(image)
    torch.cuda.synchronize()
    busy, reader = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(busy):
        torch.cuda._sleep(100_000_000)  # the upload queues behind this
        got = pyramid.sample_foveated((0.123, 0.789), num_patches=31, patch_size=8, stream=reader).patches
    reader.synchronize()
    torch.cuda.synchronize()
    wanted = pyramid.sample_foveated((0.123, 0.789), num_patches=31, patch_size=8).patches
    assert torch.equal(got, wanted)


@needs_cuda
def test_a_cuda_processor_serves_threads_at_once_as_it_serves_one() -> None:
    # Each thread's own images (of one size: the resizers' cache key) on its own stream:
    # kept resizers are per thread, so no thread's kernels read another thread's image.
    import torch
    from texturevlm.processors import CLIPImageProcessor

    processor = CLIPImageProcessor()
    g = torch.Generator().manual_seed(4)
    images = [torch.randint(0, 256, (3, 300, 400), generator=g, dtype=torch.uint8).cuda() for _ in range(THREADS)]
    wanted = [processor(images[t], return_tensors="pt")["pixel_values"].clone() for t in range(THREADS)]
    torch.cuda.synchronize()

    def work(t: int) -> None:
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            got = [processor(images[t], return_tensors="pt")["pixel_values"] for _ in range(CALLS)]
        stream.synchronize()
        for values in got:
            assert torch.equal(values, wanted[t])

    run_threads(work)


def test_bounded_caches_drop_their_oldest_while_threads_change_them() -> None:
    """The kept resizers, layouts and textures are dicts that threads fill without a lock,
    dropping the oldest past their bound. Between finding the oldest key and dropping it,
    another thread may change the dict: `cache.pop(next(iter(cache)))` then raised
    "dictionary changed size during iteration" (or KeyError) out of a processor call.
    Threads switched every microsecond hammer one cache through drop_oldest: no error, and
    the bound holds."""
    import sys

    from texturevlm._bounded import drop_oldest

    cache: dict = {}
    most = 64
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:

        def fill(t: int) -> int:
            for i in range(50_000):
                key = (t, i % 200)
                cache[key] = cache.pop(key, i)
                drop_oldest(cache, most)
            return len(cache)

        run_threads(fill, threads=4)
    finally:
        sys.setswitchinterval(interval)
    assert len(cache) <= most
