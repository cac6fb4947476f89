"""python -m texturevlm.bench fields: a learnable Gaussian field's forward + backward
(texturevlm.fields.gaussian_field, the fused CUDA kernels) against vectorized PyTorch in the
same run: the design document's baseline, broadcast differences [B, N, 3] and
torch.linalg.solve_triangular for v, then autograd. 3D, float32. Each figure next to its
floor: the bytes the PyTorch way must move at least (its [B, N, 3] differences written and
read), stated for comparison; the kernels' own floors (exponentials and arithmetic per
pair) are in `tvlm bench fields`."""

from __future__ import annotations

from typing import Any

import torch

import texturevlm as tv

from .common import autograd_floor, kernel_us


def _torch_field(
    points: torch.Tensor, means: torch.Tensor, packed: torch.Tensor, weights: torch.Tensor
) -> torch.Tensor:
    """The vectorized PyTorch way: L from the packed triangle, v by solve_triangular."""
    n = means.shape[0]
    L = torch.zeros(n, 3, 3, dtype=packed.dtype, device=packed.device)
    rows, cols = torch.tril_indices(3, 3, device=packed.device)
    L = L.index_put((torch.arange(n, device=packed.device)[:, None], rows[None], cols[None]), packed)
    d = points[:, None, :] - means[None]  # [B, N, 3]
    v = torch.linalg.solve_triangular(L[None].expand(points.shape[0], -1, -1, -1), d[..., None], upper=False)
    return (weights * torch.exp(-0.5 * (v[..., 0] ** 2).sum(-1))).sum(-1)  # [B]


def _captured_step(leaves: Any, grad: torch.Tensor) -> Any:
    """The forward + backward step captured as a CUDA graph: at small sizes the eager step
    is host-bound (autograd and a launch per kernel), the replay costs one launch."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            torch.autograd.grad(tv.fields.gaussian_field(*leaves), leaves, grad)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        torch.autograd.grad(tv.fields.gaussian_field(*leaves), leaves, grad)
    return graph.replay


def run(table: Any, per_call_us: Any) -> None:
    gen = torch.Generator(device="cuda").manual_seed(0)
    for n, b in ((1000, 500), (10000, 10000)):
        means = torch.rand((n, 3), device="cuda", generator=gen).requires_grad_()
        log_diagonal = torch.full((n, 3), -2.0, device="cuda")
        off = torch.randn((n, 3), device="cuda", generator=gen) * 0.02
        packed = tv.fields.cholesky_from_log_diagonal(log_diagonal, off).detach().requires_grad_()
        weights = torch.rand(n, device="cuda", generator=gen).requires_grad_()
        points = torch.rand((b, 3), device="cuda", generator=gen).requires_grad_()
        grad = torch.rand(b, device="cuda", generator=gen)
        leaves = (points, means, packed, weights)
        job = f"Gaussian field 3D, N = {n}, B = {b}, float32, forward + backward (all four gradients)"
        floor_bytes = 2 * b * n * 3 * 4

        def step(fn: Any) -> Any:
            def call() -> None:
                for t in leaves:
                    t.grad = None
                torch.autograd.backward(fn(*leaves), grad)  # noqa: F821

            return call

        t = per_call_us(step(tv.fields.gaussian_field), calls=20, runs=5)
        table.add(job, "texturevlm fused CUDA kernels", t, floor_bytes)
        base = t[0]
        t = per_call_us(_captured_step(leaves, grad), calls=20, runs=5)
        table.add(
            job,
            "texturevlm, the step captured once as a CUDA graph (torch.cuda.graph), replayed",
            t,
            floor_bytes,
            "no host work per step but the replay",
        )
        t = kernel_us(step(tv.fields.gaussian_field))
        table.add(
            job, "texturevlm, its GPU kernels alone (torch.profiler)", t, floor_bytes, f"eager {base / t[0]:.1f}x this"
        )
        t = per_call_us(autograd_floor(list(leaves), (b,), grad), calls=20, runs=5)
        table.add(
            job,
            "PyTorch's floor: one autograd.Function step launching nothing",
            t,
            floor_bytes,
            f"texturevlm eager {base / t[0]:.1f}x this",
        )
        t = per_call_us(step(_torch_field), calls=3, runs=3)
        table.add(
            job,
            "PyTorch broadcast + solve_triangular + autograd",
            t,
            floor_bytes,
            f"texturevlm {t[0] / base:.1f}x faster",
        )
        with torch.no_grad():
            d = (tv.fields.gaussian_field(*leaves) - _torch_field(*leaves)).abs().max().item()
        print(f"  N = {n}, B = {b}: values vs the PyTorch way, max difference {d:.2e}")
        del means, packed, weights, points, grad
