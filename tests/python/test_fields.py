"""texturevlm.fields: the Gaussian-field op (the double reference for host tensors, the fused
CUDA kernels for CUDA tensors) with autograd, its parametrisations, the nn.Module and
fixations from a 2D field. Needs torch; the CUDA cases need an NVIDIA GPU."""

from __future__ import annotations

import math

import pytest
import texturevlm as tv
from conftest import needs_cuda, needs_torch


def random_field(dims: int, n: int, dtype, device: str = "cpu", seed: int = 0):
    import torch

    g = torch.Generator().manual_seed(seed)
    means = torch.rand(n, dims, generator=g, dtype=torch.float64)
    log_diag = torch.log(torch.rand(n, dims, generator=g, dtype=torch.float64) * 0.2 + 0.05)
    off = (torch.rand(n, dims * (dims - 1) // 2, generator=g, dtype=torch.float64) - 0.5) * 0.1
    chol = tv.fields.cholesky_from_log_diagonal(log_diag, off)
    weights = torch.rand(n, generator=g, dtype=torch.float64) + 0.5
    points = means[torch.arange(3 * n) % n] + (torch.rand(3 * n, dims, generator=g, dtype=torch.float64) - 0.5) * 0.1
    return [t.to(dtype=dtype, device=device) for t in (points, means, chol, weights)]


@needs_torch
@pytest.mark.parametrize("dims", [2, 3])
def test_host_op_passes_gradcheck_in_float64(dims: int) -> None:
    import torch

    inputs = [t.requires_grad_() for t in random_field(dims, 4, torch.float64)]
    assert torch.autograd.gradcheck(tv.fields.gaussian_field, inputs, eps=1e-6, atol=1e-7)


@needs_torch
def test_parametrisations_give_the_cholesky_factor_and_gradients() -> None:
    import torch

    g = torch.Generator().manual_seed(3)
    scale = torch.rand(5, 3, generator=g, dtype=torch.float64) + 0.1
    rotation = torch.randn(5, 4, generator=g, dtype=torch.float64)
    packed = tv.fields.cholesky_from_scale_rotation(scale, rotation, eps=0.0)
    q = rotation / rotation.norm(dim=1, keepdim=True)
    for n in range(5):  # Sigma = R S^2 R^T, so L L^T must equal it
        w, x, y, z = q[n].tolist()
        r = torch.tensor(
            [
                [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
            ],
            dtype=torch.float64,
        )
        sigma = r @ torch.diag(scale[n] ** 2) @ r.T
        L = torch.zeros(3, 3, dtype=torch.float64)
        L[tuple(torch.tril_indices(3, 3))] = packed[n]
        assert torch.allclose(L @ L.T, sigma, atol=1e-12)
    points = torch.rand(6, 3, dtype=torch.float64)
    means, weights = torch.rand(5, 3, dtype=torch.float64), torch.rand(5, dtype=torch.float64)
    s, r = scale.clone().requires_grad_(), rotation.clone().requires_grad_()
    assert torch.autograd.gradcheck(
        lambda s, r: tv.fields.gaussian_field(points, means, tv.fields.cholesky_from_scale_rotation(s, r), weights),
        (s, r),
        eps=1e-6,
        atol=1e-6,
    )


@needs_torch
def test_bad_input_is_refused_with_the_reason() -> None:
    import torch

    points, means, chol, weights = random_field(3, 3, torch.float64)
    with pytest.raises(tv.Error, match="N = 0"):
        tv.fields.gaussian_field(points, means[:0], chol[:0], weights[:0])
    with pytest.raises(tv.Error, match="B = 0"):
        tv.fields.gaussian_field(points[:0], means, chol, weights)
    with pytest.raises(tv.Error, match="one dtype"):
        tv.fields.gaussian_field(points.float(), means, chol, weights)
    with pytest.raises(tv.Error, match=r"cholesky is \[N, 6\]"):
        tv.fields.gaussian_field(points, means, chol[:, :3], weights)
    bad = chol.clone()
    bad[0, 0] = -1.0
    with pytest.raises(tv.Error, match="must be positive"):
        tv.fields.gaussian_field(points, means, bad, weights)
    nan_points = points.clone()
    nan_points[1, 1] = float("nan")
    with pytest.raises(tv.Error, match="NaN"):
        tv.fields.gaussian_field(nan_points, means, chol, weights)
    with pytest.raises(tv.Error, match="2D or 3D"):
        tv.fields.GaussianField(4, dims=4)


@needs_torch
def test_a_field_learns_a_synthetic_volume_and_gives_fixations() -> None:
    import torch

    torch.manual_seed(0)
    target_field = tv.fields.GaussianField(3, dims=2, seed=7).double()
    with torch.no_grad():
        target_field.means.copy_(torch.tensor([[0.25, 0.3], [0.7, 0.6], [0.5, 0.9]], dtype=torch.float64))
        target_field.weights.copy_(torch.tensor([2.0, 1.0, 0.5], dtype=torch.float64))
        target_field.log_diagonal.fill_(math.log(0.06))
    points = torch.rand(400, 2, dtype=torch.float64)
    target = target_field(points).detach()
    model = tv.fields.GaussianField(12, dims=2, seed=1).double()
    optimiser = torch.optim.Adam(model.parameters(), lr=0.03)
    losses = []
    for _ in range(150):
        optimiser.zero_grad()
        loss = torch.mean((model(points) - target) ** 2)
        loss.backward()
        optimiser.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < 0.2 * losses[0], (losses[0], losses[-1])
    fixations = tv.fields.fixations_from_field(target_field, 3, separation=0.15, grid=(100, 100))
    assert len(fixations) == 3
    for got, want in zip(fixations, [(0.25, 0.3), (0.7, 0.6), (0.5, 0.9)]):  # strongest first, to a grid cell
        assert abs(got[0] - want[0]) <= 0.011 and abs(got[1] - want[1]) <= 0.011, fixations


@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cuda_refuses_a_non_positive_diagonal_at_the_next_call_and_at_check_gradients(dtype: str) -> None:
    # The documented refusal held on CUDA without a host sync: the kernel raises a device
    # flag and makes the values NaN; the next field call on the device, or check_gradients
    # where a step ends, raises, once.
    import torch

    tv.check_gradients()  # nothing pending from earlier tests
    points, means, chol, weights = random_field(2, 8, getattr(torch, dtype), "cuda")
    for bad_value in (-1.0, 0.0, float("nan"), float("inf")):
        bad = chol.clone()
        bad[3, 2] = bad_value  # L11 of Gaussian 3
        values = tv.fields.gaussian_field(points, means, bad, weights)
        assert torch.isnan(values).all()
        with pytest.raises(tv.Error, match="not positive and finite"):
            tv.check_gradients()
        tv.check_gradients()  # reported once
        tv.fields.gaussian_field(points, means, bad, weights)
        torch.cuda.synchronize()
        with pytest.raises(tv.Error, match="an earlier Gaussian field on cuda"):
            tv.fields.gaussian_field(points, means, chol, weights)
    good = tv.fields.gaussian_field(points, means, chol, weights)
    assert torch.isfinite(good).all()
    tv.check_gradients()


@needs_torch
def test_host_tensors_refuse_every_bad_diagonal_entry_at_once() -> None:
    import torch

    points, means, chol, weights = random_field(3, 4, torch.float64)
    for column in (0, 2, 5):  # L00, L11, L22
        for bad_value in (-1.0, 0.0, float("nan"), float("inf")):
            bad = chol.clone()
            bad[2, column] = bad_value
            with pytest.raises(tv.Error, match="Gaussian 2: diagonal entry"):
                tv.fields.gaussian_field(points, means, bad, weights)
    off = chol.clone()
    off[2, 1] = -3.0  # L10: an off-diagonal entry may be negative
    assert torch.isfinite(tv.fields.gaussian_field(points, means, off, weights)).all()


@needs_cuda
@pytest.mark.parametrize("dims", [2, 3])
def test_cuda_op_equals_the_reference_and_passes_gradcheck(dims: int) -> None:
    import torch

    host = [t.requires_grad_() for t in random_field(dims, 300, torch.float64, seed=dims)]
    cuda64 = [t.detach().cuda().requires_grad_() for t in host]
    cuda32 = [t.detach().float().cuda().requires_grad_() for t in host]
    upstream = torch.randn(host[0].shape[0], dtype=torch.float64)
    results = []
    for inputs in (host, cuda64, cuda32):
        values = tv.fields.gaussian_field(*inputs)
        grads = torch.autograd.grad(values, inputs, upstream.to(values.device, values.dtype))
        results.append([values.detach().double().cpu()] + [g.double().cpu() for g in grads])
    for ref, got64, got32 in zip(*results):
        scale = ref.abs().max()
        assert float((got64 - ref).abs().max() / scale) < 1e-10
        assert float((got32 - ref).abs().max() / scale) < 2e-4
    small = [t.detach()[: 4 if i else 6].cuda().requires_grad_() for i, t in enumerate(host)]
    assert torch.autograd.gradcheck(tv.fields.gaussian_field, small, eps=1e-6, atol=1e-7)
    compiled = torch.compile(tv.fields.gaussian_field, fullgraph=True)
    assert torch.allclose(compiled(*cuda32), tv.fields.gaussian_field(*cuda32))


@needs_cuda
def test_a_training_step_captured_as_a_cuda_graph_replays_the_eager_gradients() -> None:
    # Small fields are host-bound eagerly (autograd and launches); torch.cuda.graph removes
    # that, so the op must be capturable: no host sync, the capture stream, no allocations
    # outside torch's caching allocator.
    import torch

    inputs = [t.detach().float().cuda().requires_grad_() for t in random_field(3, 300, torch.float64, seed=5)]
    upstream = torch.randn(inputs[0].shape[0], device="cuda")
    eager = torch.autograd.grad(tv.fields.gaussian_field(*inputs), inputs, upstream)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):  # warm-up on a side stream, as torch.cuda.graph asks
            torch.autograd.grad(tv.fields.gaussian_field(*inputs), inputs, upstream)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = torch.autograd.grad(tv.fields.gaussian_field(*inputs), inputs, upstream)
    for g in captured:
        g.fill_(float("nan"))  # poison: the replay must write every value
    graph.replay()
    torch.cuda.synchronize()
    for want, got in zip(eager, captured):  # the per-Gaussian sums add chunks atomically, in any order
        assert torch.allclose(want, got, rtol=1e-5, atol=1e-6 * float(want.abs().max())), (want - got).abs().max()


# NumPy arrays need no torch: the double reference, checked here against a direct NumPy
# evaluation of f(x) = sum_n w_n exp(-|L_n^-1 (x - mu_n)|^2 / 2).
def numpy_field(dims: int, n: int, seed: int):
    import numpy as np

    rng = np.random.default_rng(seed)
    means = rng.random((n, dims))
    chol = np.zeros((n, dims * (dims + 1) // 2))
    k = 0
    for i in range(dims):
        for j in range(i + 1):
            chol[:, k] = rng.random(n) * 0.2 + 0.05 if i == j else (rng.random(n) - 0.5) * 0.1
            k += 1
    weights = rng.random(n) + 0.5
    points = means[np.arange(3 * n) % n] + (rng.random((3 * n, dims)) - 0.5) * 0.1
    return points, means, chol, weights


def numpy_direct(points, means, chol, weights):
    import numpy as np

    dims = means.shape[1]
    values = np.zeros(len(points))
    for m in range(len(means)):
        lower = np.zeros((dims, dims))
        lower[np.tril_indices(dims)] = chol[m]
        z = np.linalg.solve(lower, (points - means[m]).T)
        values += weights[m] * np.exp(-0.5 * (z * z).sum(axis=0))
    return values


@pytest.mark.parametrize("dims", [2, 3])
def test_numpy_arrays_run_the_double_reference_without_torch(dims: int) -> None:
    import numpy as np

    points, means, chol, weights = numpy_field(dims, 7, seed=dims)
    values = tv.fields.gaussian_field(points, means, chol, weights)
    assert isinstance(values, np.ndarray) and values.dtype == np.float64 and values.shape == (len(points),)
    np.testing.assert_allclose(values, numpy_direct(points, means, chol, weights), rtol=1e-12, atol=1e-14)
    as_float32 = tv.fields.gaussian_field(*(a.astype(np.float32) for a in (points, means, chol, weights)))
    np.testing.assert_allclose(as_float32, values, rtol=1e-5, atol=1e-6)


def test_numpy_arrays_are_refused_as_documented() -> None:
    import numpy as np

    points, means, chol, weights = numpy_field(2, 3, seed=5)
    bad = chol.copy()
    bad[1, 0] = -1.0  # L00 of Gaussian 1: non-positive diagonal
    with pytest.raises(tv.Error, match="Gaussian 1: diagonal entry 0 of L"):
        tv.fields.gaussian_field(points, means, bad, weights)
    bad = chol.copy()
    bad[0, 2] = 0.0  # L11 of Gaussian 0 at zero: the boundary is refused too
    with pytest.raises(tv.Error, match="Gaussian 0: diagonal entry 1 of L"):
        tv.fields.gaussian_field(points, means, bad, weights)
    with pytest.raises(tv.Error, match="weights are"):
        tv.fields.gaussian_field(points, means, chol, weights[:2])
    with pytest.raises(tv.Error, match="points are"):
        tv.fields.gaussian_field(points[:, :1], means, chol, weights)
    with pytest.raises(tv.Error, match="at least one Gaussian"):
        tv.fields.gaussian_field(points, means[:0], chol[:0], weights[:0])
    with pytest.raises(tv.Error, match="real numbers"):
        tv.fields.gaussian_field(points, means, chol, weights.astype(np.complex128))
