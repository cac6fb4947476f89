"""texturevlm.video: files decoded into a texture that follows them, patches per frame
(NumPy on lavapipe here; the test clip made by the engine's own FFmpeg encoder)."""

from __future__ import annotations

import os

import numpy as np
import pytest
import texturevlm as tv
from conftest import needs_torch, needs_vulkan

needs_video = pytest.mark.skipif(bool(tv.unavailable()["video"]), reason=f"no video: {tv.unavailable()['video']}")
W, H, FRAMES, CUT = 320, 224, 20, 12


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> str:
    if tv.unavailable()["video"]:
        pytest.skip(f"no video: {tv.unavailable()['video']}")
    path = str(tmp_path_factory.mktemp("video") / "clip.mkv")
    tv.video.write_test_clip(path, W, H, FRAMES, CUT)
    return path


@needs_video
@needs_vulkan
def test_every_frame_equals_sampling_the_decoded_frame_whole(clip: str) -> None:
    seen = 0
    for frame in tv.video.frames(clip, fixation=(0.3, 0.6), num_patches=40, patch_size=8, channels=4):
        image = tv.video.test_clip_frame(frame.index, W, H, FRAMES, CUT)  # FFV1: decoded exactly
        pyramid = tv.TexturePyramid(np.ascontiguousarray(np.moveaxis(image, -1, 0)), backend="vulkan")
        expected = pyramid.sample_foveated((0.3, 0.6), num_patches=40, patch_size=8)
        assert frame.patches.shape == (40, 4, 8, 8)
        np.testing.assert_array_equal(frame.patches, expected.patches)
        np.testing.assert_array_equal(frame.meta, expected.meta)
        assert frame.whole_frame == (frame.index in (0, CUT))
        if not frame.whole_frame:
            assert 0 < frame.changed_fraction < 0.3  # the moving square's tiles only
        assert frame.time == pytest.approx(frame.index / 25.0)
        seen += 1
    assert seen == FRAMES


@needs_video
@needs_vulkan
def test_every_k_max_frames_and_following_the_changes(clip: str) -> None:
    frames = list(tv.video.frames(clip, follow_changes=5, every=3, max_frames=10, num_patches=30, patch_size=8))
    assert [f.index for f in frames] == [0, 3, 6, 9]
    assert frames[0].fixations == [(0.5, 0.5)]
    # The square starts near (16 + 48/2, 40 + 48/2) texels and moves right and down.
    x, y = frames[-1].fixations[0]
    square_x, square_y = (16 + 9 * 9 + 24) / W, (40 + 4 * 9 + 24) / H
    assert abs(x - square_x) < 0.2 and abs(y - square_y) < 0.25, (x, y)


@needs_video
@needs_vulkan
def test_a_saliency_callback_and_a_timeline_move_the_fixation(clip: str) -> None:
    def right_edge(index: int, time: float, change: object) -> np.ndarray:
        saliency = np.zeros((4, 8), np.float32)
        saliency[2, 7] = 1.0
        return saliency

    frames = list(tv.video.frames(clip, saliency=right_edge, max_frames=3, num_patches=30, patch_size=8))
    assert frames[0].fixations == [(0.9375, 0.625)]
    timeline = [(0.0, (0.1, 0.1)), (0.1, [(0.8, 0.2), (0.2, 0.8)])]
    frames = list(tv.video.frames(clip, timeline=timeline, max_frames=4, num_patches=30, patch_size=8))
    assert [len(f.fixations) for f in frames] == [1, 1, 1, 2]  # frame 3 is at 0.12 s


@needs_video
@needs_vulkan
def test_bad_input_is_refused_before_any_frame(clip: str, tmp_path: object) -> None:
    with pytest.raises(tv.Error, match="cannot be opened"):
        tv.video.frames("/no/such/video.mp4")
    with pytest.raises(tv.Error, match="every must be 1\\.\\.4294967295 frames, not 0"):
        tv.video.frames(clip, every=0)
    with pytest.raises(tv.Error, match="choose one of"):
        tv.video.frames(clip, follow_changes=4, timeline=[(0.0, (0.5, 0.5))])
    with pytest.raises(tv.Error, match="above 255"):
        tv.video.frames(clip, threshold=300)
    with pytest.raises(tv.Error, match="NaN or outside"):
        tv.video.frames(clip, fixation=(float("nan"), 0.5))
    with pytest.raises(tv.Error, match="budget 1 is below"):
        tv.video.frames(clip, num_patches=1)
    with pytest.raises(tv.Error, match="positive, finite"):
        tv.video.frames(clip, follow_changes=0)
    not_video = os.path.join(str(tmp_path), "text.mp4")
    with open(not_video, "w") as f:
        f.write("not a video")
    with pytest.raises(tv.Error, match="cannot be opened \\(Invalid data"):
        tv.video.frames(not_video)


@needs_video
@needs_vulkan
def test_streams_opened_and_closed_many_times_leave_fds_and_memory_flat(clip: str) -> None:
    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    def rss_mb() -> float:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    for _ in range(5):  # warm-up: pipelines, FFmpeg's tables
        next(tv.video.frames(clip, max_frames=1, num_patches=30, patch_size=8))
    fds, rss = open_fds(), rss_mb()
    for _ in range(200):
        frame = next(tv.video.frames(clip, max_frames=1, num_patches=30, patch_size=8))
        del frame
    assert open_fds() == fds
    assert rss_mb() - rss < 30, f"host memory grew by {rss_mb() - rss:.1f} MB"


@needs_video
@needs_vulkan
def test_a_field_per_frame_chooses_where_to_look(clip: str) -> None:
    # The field moves between two bumps, one per frame; the schedule follows it at every
    # frame (a high rate) and looks at the strongest maxima of its saliency map.
    def bump(cx: float, cy: float):
        return lambda points: np.exp(-((points[:, 0] - cx) ** 2 + (points[:, 1] - cy) ** 2) / (2 * 0.05**2))

    fields = [bump(0.8, 0.3), bump(0.25, 0.7)]
    frames = list(
        tv.video.frames(
            clip, saliency=lambda i, t, c: fields[i % 2], saliency_rate=1000, max_frames=4, num_patches=30, patch_size=8
        )
    )
    for i, frame in enumerate(frames):
        ((x, y),) = frame.fixations
        want = (0.8, 0.3) if i % 2 == 0 else (0.25, 0.7)
        assert abs(x - want[0]) < 1 / 64 and abs(y - want[1]) < 1.5 / 43, (i, frame.fixations)
    # Two fields' bumps at once, two fixations a move: both are found, the stronger first.
    both = lambda points: 1.0 * fields[0](points) + 0.5 * fields[1](points)  # noqa: E731
    frame = next(
        iter(
            tv.video.frames(
                clip, saliency=lambda i, t, c: both, num_fixations=2, num_patches=30, patch_size=8, max_frames=1
            )
        )
    )
    assert len(frame.fixations) == 2 and frame.fixations[0][0] > 0.5 > frame.fixations[1][0], frame.fixations
    with pytest.raises(tv.Error, match="one value per point"):
        next(iter(tv.video.frames(clip, saliency=lambda i, t, c: lambda p: np.ones(3), max_frames=1)))
    with pytest.raises(tv.Error, match="num_fixations"):
        tv.video.frames(clip, saliency=lambda i, t, c: None, num_fixations=0)


@needs_video
@needs_vulkan
@needs_torch
def test_a_gaussian_field_module_chooses_where_to_look(clip: str) -> None:
    import torch

    field = tv.fields.GaussianField(num_gaussians=1, volume_size=1.0, dims=2).double()
    with torch.no_grad():
        field.means.copy_(torch.tensor([[0.7, 0.6]], dtype=torch.float64))
        field.weights.fill_(1.0)
    frame = next(
        iter(
            tv.video.frames(
                clip, saliency=lambda i, t, c: field, saliency_rate=1000, max_frames=1, num_patches=30, patch_size=8
            )
        )
    )
    ((x, y),) = frame.fixations
    assert abs(x - 0.7) < 1 / 64 and abs(y - 0.6) < 1.5 / 43, frame.fixations


@needs_video
@needs_vulkan
def test_the_decoder_is_chosen_and_reported(clip: str) -> None:
    frame = next(iter(tv.video.frames(clip, max_frames=1, num_patches=30, patch_size=8)))
    assert frame.decoder == "CPU"  # auto without a CUDA device: the CPU
    with pytest.raises(tv.Error, match="decoder must be"):
        tv.video.frames(clip, decoder="gpu")
    if not (tv.cuda_built() and not tv.unavailable()["cuda"]):
        with pytest.raises(tv.Error, match="decoder='nvdec' cannot run"):
            tv.video.frames(clip, decoder="nvdec")


def _nvdec_reason() -> str:
    if tv.unavailable()["video"]:
        return tv.unavailable()["video"]
    if not tv.cuda_built() or tv.unavailable()["cuda"]:
        return "no CUDA device"
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed"
    return "" if torch.cuda.is_available() else "torch sees no CUDA device"


@pytest.fixture(scope="module")
def h264_clip(tmp_path_factory: pytest.TempPathFactory) -> str:
    if _nvdec_reason():
        pytest.skip(_nvdec_reason())
    path = str(tmp_path_factory.mktemp("video") / "clip.mp4")
    try:
        tv.video.write_test_clip(path, W, H, FRAMES, CUT, codec="libx264")
    except tv.Error as e:
        pytest.skip(f"FFmpeg has no H.264 encoder here: {e}")
    return path


@needs_vulkan
def test_nvdec_frames_are_cuda_tensors_equal_to_the_cpu_decoder_within_conversion(h264_clip: str) -> None:
    # H.264 decodes to the same YUV on NVDEC and the CPU. The two YUV -> RGB conversions
    # upsample 4:2:0 chroma differently (CUDA bilinearly at H.264's chroma siting, swscale
    # by its own interpolation), so at the chart's sharp colour edges single texels differ
    # by up to ~0.1; the chart is mostly edges and text. Seen on Hopper (frame 0, in
    # 1/255): mean 0.90, 99th percentile 12, max 24. Bounds: 1.5, 16, 48 (a wrong frame,
    # layout, channel order or a race with the next update moves the mean far past them).
    # The exact check of this path is the C++ test_cuda_video (NVDEC's frame, the same rule).
    import torch

    kwargs = dict(fixation=(0.4, 0.5), num_patches=40, patch_size=8, device="cuda")
    try:
        nvdec = list(tv.video.frames(h264_clip, decoder="nvdec", **kwargs))
    except tv.Error as e:
        pytest.skip(f"NVDEC cannot decode here: {e}")
    cpu = list(tv.video.frames(h264_clip, decoder="cpu", **kwargs))
    assert len(nvdec) == len(cpu) == FRAMES
    for a, b in zip(nvdec, cpu):
        assert a.decoder.startswith("NVDEC") and b.decoder == "CPU"
        assert a.patches.device.type == "cuda" and a.patches.shape == (40, 3, 8, 8)
        assert a.meta.device.type == "cuda" and torch.equal(a.meta.cpu(), b.meta.cpu())
        d = (a.patches - b.patches).abs().flatten()
        stats = (a.index, float(d.mean()) * 255, float(torch.quantile(d, 0.99)) * 255, float(d.max()) * 255)
        assert stats[1] <= 1.5 and stats[2] <= 16 and stats[3] <= 48, stats
        assert 0 < a.changed_fraction <= 1  # lossy frames change everywhere a little
    # Which tiles changed depends on the conversion (frame 1: 73% on NVDEC, all on the CPU
    # path), so only the first frame and the cut are whole on both.
    assert nvdec[0].whole_frame and nvdec[CUT].whole_frame and cpu[0].whole_frame and cpu[CUT].whole_frame
    # auto takes NVDEC for CUDA outputs of an H.264 file.
    assert next(iter(tv.video.frames(h264_clip, max_frames=1, **kwargs))).decoder.startswith("NVDEC")


@needs_vulkan
def test_nvdec_streams_opened_and_dropped_leak_no_device_memory(h264_clip: str) -> None:
    import torch

    def one() -> None:
        for frame in tv.video.frames(
            h264_clip, decoder="nvdec", device="cuda", max_frames=3, num_patches=40, patch_size=8
        ):
            frame.patches.sum().item()

    try:
        one()
    except tv.Error as e:
        pytest.skip(f"NVDEC cannot decode here: {e}")
    torch.cuda.synchronize()
    free_before = torch.cuda.mem_get_info()[0]
    for _ in range(100):
        one()
    torch.cuda.synchronize()
    free_after = torch.cuda.mem_get_info()[0]
    assert free_after + (64 << 20) >= free_before, (free_before, free_after)


def _silent_server():
    """A loopback server that accepts connections (from its backlog) and never answers."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    return server, f"http://127.0.0.1:{server.getsockname()[1]}/clip.mp4"


@needs_video
@needs_vulkan
def test_a_stalled_stream_raises_after_the_timeout() -> None:
    import time

    server, url = _silent_server()
    with server:
        start = time.monotonic()
        with pytest.raises(tv.Error, match="nothing arrived for 0.5 s: the source stalled"):
            next(tv.video.frames(url, decoder="cpu", timeout=0.5))
        assert 0.5 <= time.monotonic() - start < 15
        with pytest.raises(tv.Error, match="timeout is 0 \\(wait for ever\\) or more seconds, not -1"):
            next(tv.video.frames(url, decoder="cpu", timeout=-1))


@needs_video
@needs_vulkan
def test_ctrl_c_interrupts_a_stream_that_never_answers(tmp_path) -> None:
    import signal
    import subprocess
    import sys
    import time

    server, url = _silent_server()
    # The child handles Ctrl-C as an interactive Python does, whatever this process was given:
    # a runner started in the background of a shell without job control ignores SIGINT, and
    # a child would inherit that.
    child = (
        "import signal, sys, texturevlm as tv\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "print('waiting', flush=True)\n"
        "try:\n"
        f"    next(tv.video.frames({url!r}, decoder='cpu', timeout=0))\n"
        "except KeyboardInterrupt:\n"
        "    sys.exit(3)\n"
    )
    with server:
        # -X faulthandler: where the child is stuck, should it not exit, is in the failure.
        process = subprocess.Popen(
            [sys.executable, "-X", "faulthandler", "-c", child],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stdout.readline().strip() == "waiting"
        time.sleep(1.0)  # inside FFmpeg's wait by now (it never ends: timeout=0)
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
            _, stacks = process.communicate(timeout=10)
            pytest.fail(f"Ctrl-C did not end the child in 20 s; its threads:\n{stacks}")
        finally:
            process.kill()
        assert process.returncode == 3, process.stderr.read()  # KeyboardInterrupt reached Python, promptly
