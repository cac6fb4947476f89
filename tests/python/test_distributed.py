"""examples/distributed_patches.py under torchrun with two ranks: one GPU per rank (NCCL)
where the machine has two, else two host ranks (gloo) on Vulkan or the CPU reference.
Every image is counted once over the ranks and their checksum equals one rank's own; when
one rank fails, the launcher stops the other and no process or GPU memory is left."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import List

from conftest import needs_torch

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "distributed_patches.py"


def _two_gpus() -> bool:
    import torch

    return torch.cuda.is_available() and torch.cuda.device_count() >= 2


def _torchrun(*extra: str, timeout: float = 300) -> subprocess.CompletedProcess:
    device, size = ("cuda", "512") if _two_gpus() else ("cpu", "128")
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node=2",
        str(EXAMPLE),
        "--images",
        "11",
        "--size",
        size,
        "--batch",
        "3",
        "--device",
        device,
        *extra,
    ]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)


def _example_processes() -> List[int]:
    """Processes still running the example (ranks or their data-loader workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if str(EXAMPLE).encode() in command:
            found.append(int(entry.name))
    return found


def _free_gpu_memory() -> List[int]:
    """Free bytes of every CUDA device, as the driver reports them (other processes' use
    included), or [] without CUDA."""
    import torch

    if not torch.cuda.is_available():
        return []
    return [torch.cuda.mem_get_info(d)[0] for d in range(torch.cuda.device_count())]


@needs_torch
def test_two_ranks_cover_every_image_once_and_agree_with_one_rank() -> None:
    result = _torchrun("--verify")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "each of 11 images counted 1..1 time(s)" in output, output[-4000:]
    assert "-> equal" in output, output[-4000:]
    assert "rank 0/2" in output and "rank 1/2" in output, output[-4000:]
    if _two_gpus():
        assert "on cuda:0" in output and "on cuda:1" in output, output[-4000:]


@needs_torch
def test_a_failing_rank_stops_every_rank_and_leaves_nothing_behind() -> None:
    before = _free_gpu_memory()
    result = _torchrun("--fail-rank", "1")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-4000:]
    assert "rank 1 failed on purpose" in output, output[-4000:]
    deadline = time.monotonic() + 30  # the launcher has returned; its children are reaped by now
    while _example_processes() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _example_processes() == [], "processes of the example outlived the launcher"
    after = _free_gpu_memory()
    for device, (was, now) in enumerate(zip(before, after)):
        assert now + (64 << 20) >= was, f"cuda:{device}: {was - now} bytes still held after the ranks exited"
