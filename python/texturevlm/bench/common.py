"""What every benchmark of the package shares: pipelined per-call timing, the device copy
rate (the floors' divisor), the table the rows are printed to, and the PyTorch way of the
mip chain and of patch sampling (the baselines beside texturevlm's rows)."""

from __future__ import annotations

import statistics
import time
from typing import Callable, List, Optional

import torch
import torch.nn.functional as F


def per_call_us(
    fn: Callable[[], object], calls: int = 200, runs: int = 7, wait: Optional[Callable[[], None]] = None
) -> tuple:
    """Median and min wall time per call (us) over runs of `calls` pipelined calls."""
    median, fastest, _ = wall_and_host_us(fn, calls, runs, wait)
    return median, fastest


def wall_and_host_us(
    fn: Callable[[], object], calls: int = 200, runs: int = 7, wait: Optional[Callable[[], None]] = None
) -> tuple:
    """Median and min wall time per call and the median host time to issue one (us), over
    runs of `calls` pipelined calls (the host waits once per run: `wait`, by default for the
    GPU's work; a host job's calls have none to wait for)."""
    wait = wait or torch.cuda.synchronize
    for _ in range(10):
        fn()
    wait()
    walls, hosts = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        wait()
        walls.append((time.perf_counter() - t0) * 1e6 / calls)
        hosts.append((t1 - t0) * 1e6 / calls)
    return statistics.median(walls), min(walls), statistics.median(hosts)


def kernel_us(fn: Callable[[], object], calls: int = 10) -> tuple:
    """GPU time per call of the kernels, memsets and copies `fn` launches (torch.profiler's
    device time): what the call would cost with no host work at all, the row the eager and
    the CUDA-graph rows are read against."""
    from torch.profiler import ProfilerActivity, profile

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    total = sum(
        getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0) for e in prof.key_averages()
    )
    return total / calls, total / calls


def autograd_floor(leaves: List[torch.Tensor], out_shape: tuple, grad: torch.Tensor) -> Callable[[], None]:
    """PyTorch's own floor for an eager step of one custom op: an autograd.Function that
    launches no kernel (its output and the leaves' gradients allocated, not written), called
    and backpropagated as texturevlm's step is. What an eager step costs before any work:
    the rows' eager figures are read against it."""

    class Empty(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):  # type: ignore[no-untyped-def]
            return inputs[0].new_empty(out_shape)

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g):  # type: ignore[no-untyped-def]
            return tuple(torch.empty_like(t) if t.requires_grad else None for t in leaves)

    def step() -> None:
        for t in leaves:
            t.grad = None
        torch.autograd.backward(Empty.apply(*leaves), grad)

    return step


def difference(ours: torch.Tensor, theirs: torch.Tensor) -> str:
    """The largest and mean absolute difference of two outputs, as the notes print it."""
    d = (ours.float() - theirs.float()).abs()
    return f"max {d.max().item():.4f}, mean {d.mean().item():.5f}"


def copy_bandwidth() -> float:
    """Device copy rate in bytes/s (read + written), measured on a 1 GiB copy."""
    a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    median, _ = per_call_us(lambda: b.copy_(a), calls=10, runs=5)
    return 2 * a.numel() / (median * 1e-6)


def torch_pyramid(frame: torch.Tensor) -> List[torch.Tensor]:
    levels = [frame]
    while tuple(levels[-1].shape[-2:]) != (1, 1):
        h, w = levels[-1].shape[-2:]
        levels.append(F.avg_pool2d(levels[-1], (2 if h > 1 else 1, 2 if w > 1 else 1)))
    return levels


def torch_patches(levels: List[torch.Tensor], meta: torch.Tensor, patch: int) -> torch.Tensor:
    """grid_sample of every patch at its two nearest levels, blended (the PyTorch way)."""
    n, channels = meta.shape[0], levels[0].shape[1]
    offsets = (torch.arange(patch, device=meta.device, dtype=torch.float32) + 0.5) / patch - 0.5
    u = (meta[:, 0, None, None] + offsets[None, None, :] * meta[:, 2, None, None]).expand(n, patch, patch)
    v = (meta[:, 1, None, None] + offsets[None, :, None] * meta[:, 3, None, None]).expand(n, patch, patch)
    grid = torch.stack([2 * u - 1, 2 * v - 1], dim=-1)
    lod = meta[:, 4].clamp(0, len(levels) - 1)
    low = lod.floor().long()
    high = (low + 1).clamp(max=len(levels) - 1)
    weight = (lod - low.float())[:, None, None, None]
    out = torch.zeros(n, channels, patch, patch, device=meta.device)
    for level in range(len(levels)):
        for pick, w in ((low == level, 1 - weight), (high == level, weight)):
            idx = pick.nonzero(as_tuple=True)[0]  # a host sync, as PyTorch code of this job has
            if idx.numel() == 0:
                continue
            g = grid[idx].reshape(1, idx.numel() * patch, patch, 2)
            s = F.grid_sample(levels[level], g, mode="bilinear", padding_mode="border", align_corners=False)
            out.index_add_(0, idx, s.reshape(channels, idx.numel(), patch, patch).permute(1, 0, 2, 3) * w[idx])
    return out


class Table:
    def __init__(self, bandwidth: float) -> None:
        self.rows: List[dict] = []
        self.bandwidth = bandwidth

    def add(self, job: str, method: str, timing: tuple, floor_bytes: float, note: str = "") -> None:
        floor = floor_bytes / self.bandwidth * 1e6  # 0: a job without a byte floor
        self.rows.append(dict(job=job, method=method, median_us=timing[0], min_us=timing[1], floor_us=floor, note=note))
        versus = f"floor {floor:8.2f} us, {timing[0] / floor:5.1f}x" if floor else "no floor"
        print(f"{job:44s} {method:58s} {timing[0]:10.2f} us  (min {timing[1]:9.2f}, {versus}) {note}", flush=True)
