"""texturevlm.sample_points: NumPy inputs through the CPU reference (CI), and torch's
custom op with autograd on the CPU reference and on CUDA (gradcheck in float64, CUDA
float32 against the reference, torch.compile, a learned position, leaks)."""
from __future__ import annotations

import numpy as np
import pytest

import texturevlm as tv
from conftest import needs_cuda, needs_torch


def numpy_trilinear(image: np.ndarray, uv: np.ndarray, lod: np.ndarray) -> np.ndarray:
    """An independent definition for power-of-two images: 2:1 box levels, bilinear with
    clamp to edge, linear between levels, lod clamped."""
    levels = [image.astype(np.float64)]
    while levels[-1].shape[1] > 1 or levels[-1].shape[2] > 1:
        a = levels[-1]
        if a.shape[1] > 1:  # an axis of one texel is copied
            a = 0.5 * (a[:, 0::2] + a[:, 1::2])
        if a.shape[2] > 1:
            a = 0.5 * (a[:, :, 0::2] + a[:, :, 1::2])
        levels.append(a)

    def bilinear(level: np.ndarray, u: float, v: float) -> np.ndarray:
        _, h, w = level.shape
        x, y = u * w - 0.5, v * h - 0.5
        x0, y0 = np.floor(x), np.floor(y)
        a, b = x - x0, y - y0
        cx = lambda i: int(np.clip(i, 0, w - 1))  # noqa: E731
        cy = lambda i: int(np.clip(i, 0, h - 1))  # noqa: E731
        t = lambda i, j: level[:, cy(y0 + j), cx(x0 + i)]  # noqa: E731
        return (1 - b) * ((1 - a) * t(0, 0) + a * t(1, 0)) + b * ((1 - a) * t(0, 1) + a * t(1, 1))

    out = []
    for (u, v), l in zip(uv, lod):
        l = float(np.clip(l, 0, len(levels) - 1))
        base = min(int(np.floor(l)), len(levels) - 1)
        f = l - base
        value = bilinear(levels[base], u, v)
        if f > 0:
            value = (1 - f) * value + f * bilinear(levels[base + 1], u, v)
        out.append(value)
    return np.asarray(out)


def test_numpy_samples_equal_an_independent_definition(rng):
    image = rng.random((5, 16, 32))
    uv = rng.random((200, 2)) * 1.2 - 0.1
    lod = rng.random(200) * 7 - 0.5
    got = tv.sample_points(image, uv, lod)
    assert got.shape == (200, 5) and got.dtype == np.float64
    np.testing.assert_allclose(got, numpy_trilinear(image, uv, lod), rtol=0, atol=1e-12)
    # Leading shapes are kept; a batch picks images by layer.
    batch = np.stack([image, 1 - image])
    got = tv.sample_points(batch, uv.reshape(10, 20, 2), lod.reshape(10, 20), layer=np.ones((10, 20), np.int64))
    np.testing.assert_allclose(got.reshape(200, 5), numpy_trilinear(1 - image, uv, lod), atol=1e-12)


def test_bad_input_is_refused(rng):
    image = rng.random((3, 8, 8))
    uv, lod = np.full((4, 2), 0.5), np.zeros(4)
    with pytest.raises(tv.Error, match="float images"):
        tv.sample_points(image.astype(np.uint8), uv, lod)
    with pytest.raises(tv.Error, match="same leading shape"):
        tv.sample_points(image, uv, np.zeros(3))
    with pytest.raises(tv.Error, match="1..4 levels"):
        tv.sample_points(image, uv, lod, levels=5)
    with pytest.raises(tv.Error, match="1..64 channels"):
        tv.sample_points(rng.random((65, 4, 4)), uv, lod)
    with pytest.raises(tv.Error, match="non-finite"):
        tv.sample_points(image, np.array([[np.nan, 0.5]] * 4), lod)
    with pytest.raises(tv.Error, match="layer 1 of 1"):
        tv.sample_points(image, uv, lod, layer=np.ones(4, np.int32))
    with pytest.raises(tv.Error, match="integers"):
        tv.sample_points(image, uv, lod, layer=np.ones(4))


# ---------------------------------------------------------------- torch

def _job(torch, device, dtype, channels=3, batch=2, height=13, width=10, points=40, seed=0):
    g = torch.Generator().manual_seed(seed)
    image = torch.rand((batch, channels, height, width), generator=g, dtype=torch.float64).to(device, dtype)
    uv = (torch.rand((points, 2), generator=g, dtype=torch.float64) * 1.2 - 0.1).to(device, dtype)
    lod = (torch.rand(points, generator=g, dtype=torch.float64) * 4.6 - 0.3).to(device, dtype)
    layer = torch.randint(0, batch, (points,), generator=g).to(device)
    return image, uv, lod, layer


@needs_torch
def test_cpu_gradcheck():
    import torch
    image, uv, lod, layer = _job(torch, "cpu", torch.float64, points=12)
    inputs = (image.requires_grad_(), uv.requires_grad_(), lod.requires_grad_())
    assert torch.autograd.gradcheck(lambda i, u, l: tv.sample_points(i, u, l, layer), inputs)


@needs_cuda
@pytest.mark.parametrize("channels", [1, 3, 4, 40])
def test_cuda_gradcheck_in_float64(channels):
    import torch
    image, uv, lod, layer = _job(torch, "cuda", torch.float64, channels=channels, points=10)
    inputs = (image.requires_grad_(), uv.requires_grad_(), lod.requires_grad_())
    assert torch.autograd.gradcheck(lambda i, u, l: tv.sample_points(i, u, l, layer), inputs)


@needs_cuda
@pytest.mark.parametrize("channels", [1, 3, 40, 64])
def test_cuda_float32_equals_the_reference(channels):
    import torch
    image, uv, lod, layer = _job(torch, "cpu", torch.float64, channels=channels, height=37, width=64, points=3000)
    weights = torch.rand((3000, channels), dtype=torch.float64) * 2 - 1
    grads = []
    for device, dtype in (("cpu", torch.float64), ("cuda", torch.float32)):
        i, u, l = (t.detach().to(device, dtype).requires_grad_() for t in (image, uv, lod))
        out = tv.sample_points(i, u, l, layer.to(device))
        (out * weights.to(device, dtype)).sum().backward()
        grads.append([out.detach().double().cpu()] + [t.grad.double().cpu() for t in (i, u, l)])
    for want, got, scale in zip(grads[0], grads[1], (1, 1, 64, 1)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=2e-5 * scale * channels)


@needs_cuda
def test_cuda_op_compiles_and_makes_no_host_sync():
    import torch
    image, uv, lod, layer = _job(torch, "cuda", torch.float32, points=256)
    image.requires_grad_()

    def loss(i, u, l):
        return (tv.sample_points(i, u, l, layer) ** 2).sum()

    eager = torch.autograd.grad(loss(image, uv, lod), image)[0]
    compiled = torch.compile(loss, fullgraph=True)
    torch.testing.assert_close(torch.autograd.grad(compiled(image, uv, lod), image)[0], eager)
    torch.cuda._sleep(100_000_000)  # the op must queue behind this, not wait for it
    out = tv.sample_points(image, uv, lod, layer)
    assert not torch.cuda.current_stream().query()
    torch.cuda.synchronize()
    want = tv.sample_points(image.detach().cpu(), uv.cpu(), lod.cpu(), layer.cpu())
    torch.testing.assert_close(out.detach().cpu(), want, rtol=1e-5, atol=1e-6)


@needs_cuda
def test_a_learned_position_moves_to_the_target():
    """uv learns where a bright blob is: the loss falls and the point converges on it."""
    import torch
    y, x = torch.meshgrid(torch.linspace(0, 1, 64), torch.linspace(0, 1, 64), indexing="ij")
    blob = torch.exp(-((x - 0.7) ** 2 + (y - 0.3) ** 2) / 0.02)[None].cuda()
    uv = torch.tensor([[0.4, 0.6]], device="cuda", requires_grad=True)
    lod = torch.full((1,), 2.5, device="cuda")  # a blurred level: a wide basin
    optimizer = torch.optim.Adam([uv], lr=0.02)
    losses = []
    for _ in range(150):
        optimizer.zero_grad()
        loss = -tv.sample_points(blob, uv, lod).sum()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] - 0.5
    assert torch.allclose(uv.detach().cpu(), torch.tensor([[0.7, 0.3]]), atol=0.03)


@needs_cuda
def test_torch_bad_input_and_no_leaks(rng):
    import torch
    image, uv, lod, layer = _job(torch, "cuda", torch.float32)
    with pytest.raises(tv.Error, match="float images"):
        tv.sample_points((image * 255).to(torch.uint8), uv, lod)
    with pytest.raises(tv.Error, match="one device"):
        tv.sample_points(image, uv.cpu(), lod)
    with pytest.raises(tv.Error, match="integers"):
        tv.sample_points(image, uv, lod, layer.float())
    grad = torch.full((uv.shape[0], 3), float("inf"), dtype=torch.float64)
    cpu_image = image.cpu().double().requires_grad_()
    with pytest.raises(tv.Error, match="non-finite"):
        tv.sample_points(cpu_image, uv.cpu().double(), lod.cpu().double(), layer.cpu()).backward(grad)
    image.requires_grad_()
    for _ in range(20):
        tv.sample_points(image, uv, lod, layer).sum().backward()
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    for _ in range(1000):
        tv.sample_points(image, uv, lod, layer).sum().backward()
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() <= before


# ---------------------------------------------------------------- patches and glimpses

@needs_torch
def test_differentiable_patches_equal_the_engines_patch_sampler(rng):
    """glimpse.sample_patches places samples as the engine's layouts do: a foveated layout's
    metadata through it equals the CPU reference patch sampler on the same float image."""
    import torch
    image = rng.random((4, 96, 128)).astype(np.float32)
    layout = tv.layouts.foveated(128, 96, (0.3, 0.6), num_patches=40, patch_size=8)
    want = np.asarray(tv.TexturePyramid(image, "rgba32f", backend="cpu").sample(layout).patches)
    meta = torch.from_numpy(np.asarray(layout.metadata, np.float64))
    got = tv.glimpse.sample_patches(torch.from_numpy(image).double(), meta, patch_size=8)[0].numpy()
    valid = layout.mask[0]
    assert valid.sum() >= 30  # a few slots may be padding
    np.testing.assert_allclose(got[valid], want[valid], rtol=0, atol=2e-6)


@needs_cuda
def test_glimpse_gradients_to_fixation_and_scale():
    import torch
    g = torch.Generator().manual_seed(3)
    image = torch.rand((1, 3, 32, 40), generator=g, dtype=torch.float64).cuda()
    fixation = torch.tensor([[0.43, 0.57]], dtype=torch.float64, device="cuda", requires_grad=True)
    scale = torch.tensor(0.21, dtype=torch.float64, device="cuda", requires_grad=True)

    def glimpse(f, s):
        meta = tv.glimpse.retina_glimpse(f, 40, 32, rings=1, sectors=4, scale=s, patch_size=4)
        return tv.glimpse.sample_patches(image, meta, patch_size=4)

    assert glimpse(fixation, scale).shape == (1, tv.glimpse.glimpse_patch_count(1, 4), 3, 4, 4)
    assert torch.autograd.gradcheck(glimpse, (fixation, scale))


@needs_cuda
def test_a_learned_fixation_moves_to_the_target():
    """A glimpse's fovea learns to look at a bright region: the loss falls and the fixation
    converges on it (the issue's end-to-end check)."""
    import torch
    y, x = torch.meshgrid(torch.linspace(0, 1, 128), torch.linspace(0, 1, 160), indexing="ij")
    scene = torch.stack([torch.exp(-((x - 0.72) ** 2 + (y - 0.31) ** 2) / 0.01)] * 3).cuda()
    fixation = torch.tensor([0.35, 0.65], device="cuda", requires_grad=True)
    optimizer = torch.optim.Adam([fixation], lr=0.01)
    losses = []
    for _ in range(200):
        optimizer.zero_grad()
        meta = tv.glimpse.retina_glimpse(fixation, 160, 128, rings=2, sectors=6, scale=0.1, patch_size=8)
        patches = tv.glimpse.sample_patches(scene, meta, patch_size=8)  # [1, 13, 3, 8, 8]
        weights = torch.softmax(-meta[0, :, 4], 0)  # the fovea (finest level) counts most
        loss = -(patches.mean(dim=(2, 3, 4))[0] * weights).sum()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] - 0.3
    assert torch.allclose(fixation.detach().cpu(), torch.tensor([0.72, 0.31]), atol=0.03)
