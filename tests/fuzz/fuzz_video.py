"""Video containers fuzzed: the engine's own test clip (FFV1 in Matroska, and MPEG-4 Part 2
in MP4 where FFmpeg has that encoder) truncated, with bytes flipped and ranges overwritten,
decoded through `texturevlm.video.frames` on the CPU's Vulkan device. Every input must give
frames or one `texturevlm.Error`; a crash, a hang past the time limit or any other exception
is a failure, and its input is kept as crash-*.bin in the working folder.

    python tests/fuzz/fuzz_video.py [--seconds S] [--seed N]

Each file in tests/fuzz/regressions/video/ runs first. Each input runs in a child process,
so a crash in FFmpeg or the engine is caught and reported, not fatal to the fuzzer."""

from __future__ import annotations

import argparse
import glob
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REGRESSIONS = os.path.join(HERE, "regressions", "video")
LIMIT_SECONDS = 60

CHILD = """
import sys
import texturevlm as tv
try:
    for frame in tv.video.frames(sys.argv[1], num_patches=13, patch_size=8, max_frames=40, timeout=10):
        assert frame.patches.shape == (13, 3, 8, 8)
except tv.Error as e:
    print("refused:", str(e).splitlines()[0][:200])
"""


def run_one(path: str) -> str:
    """'' where the input gave frames or one texturevlm.Error; else what went wrong."""
    try:
        run = subprocess.run([sys.executable, "-c", CHILD, path], capture_output=True, text=True, timeout=LIMIT_SECONDS)
    except subprocess.TimeoutExpired:
        return f"hung for more than {LIMIT_SECONDS} s"
    if run.returncode != 0:
        return f"exit {run.returncode}: {run.stderr.strip().splitlines()[-1:] if run.stderr.strip() else ''}"
    return ""


def mutate(clip: bytes, rng: random.Random) -> bytes:
    data = bytearray(clip)
    kind = rng.randrange(4)
    if kind == 0:  # truncated
        return bytes(data[: rng.randrange(len(data))])
    if kind == 1:  # bytes flipped
        for _ in range(rng.randint(1, 16)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif kind == 2:  # a range overwritten with noise or 0xff (sizes and timestamps go wild)
        start = rng.randrange(len(data))
        end = min(len(data), start + rng.randint(1, 64))
        fill = rng.choice([None, 0xFF, 0x00])
        for i in range(start, end):
            data[i] = rng.randrange(256) if fill is None else fill
    else:  # the head kept, the rest cut and repeated
        cut = rng.randrange(64, len(data))
        data = data[:cut] + data[rng.randrange(cut) : cut]
    return bytes(data)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("FUZZ_SECONDS", "60")))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    import texturevlm as tv
    from texturevlm import _core

    if not _core.video_built():
        print("fuzz_video: texturevlm was built without FFmpeg: skipped")
        return 0
    failures = 0
    for path in sorted(glob.glob(os.path.join(REGRESSIONS, "*"))):
        why = run_one(path)
        if why:
            print(f"FAIL {os.path.basename(path)}: {why}")
            failures += 1
    print(f"fuzz_video: {len(glob.glob(os.path.join(REGRESSIONS, '*')))} regression inputs run")
    work = tempfile.mkdtemp()
    clips = []
    for name, codec in (("clip.mkv", "ffv1"), ("clip.mp4", "mpeg4")):
        path = os.path.join(work, name)
        try:
            tv.video.write_test_clip(path, 64, 48, 12, 6, codec)
        except tv.Error:
            continue  # no encoder for this container here
        with open(path, "rb") as f:
            clips.append(f.read())
    rng = random.Random(args.seed)
    runs, start = 0, time.monotonic()
    while time.monotonic() - start < args.seconds:
        data = mutate(rng.choice(clips), rng)
        path = os.path.join(work, "input.bin")
        with open(path, "wb") as f:
            f.write(data)
        why = run_one(path)
        runs += 1
        if why:
            keep = f"crash-{args.seed}-{runs}.bin"
            with open(keep, "wb") as f:
                f.write(data)
            print(f"FAIL input {runs} (kept as {keep}): {why}")
            failures += 1
    print(f"fuzz_video: {runs} mutated clips from {len(clips)} container(s), {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
