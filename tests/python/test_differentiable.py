"""texturevlm.sample_points: NumPy inputs through the CPU reference (CI), and torch's
custom op with autograd on the CPU reference and on CUDA (gradcheck in float64, CUDA
float32 against the reference, torch.compile, a learned position, leaks)."""

from __future__ import annotations

import contextlib

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


@needs_torch
@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("channels", [3, 4, 40])
def test_a_fixed_image_gives_the_same_position_gradients(device, channels):
    """An image that takes no gradient (a model learning where to look): uv and lod get the
    gradients they get beside the image's (on CUDA the backward then skips the texel
    atomics and the fold), the image none; eager and compiled."""
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    dtype = torch.float32 if device == "cuda" else torch.float64
    image, uv, lod, layer = _job(torch, device, dtype, channels=channels, points=500)
    weights = torch.rand((500, channels), generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 2 - 1
    weights = weights.to(device, dtype)

    def loss(i, u, l):
        return (tv.sample_points(i, u, l, layer) * weights).sum()

    def grads(image_grad, fn=loss):
        i, u, l = image.clone().requires_grad_(image_grad), uv.clone().requires_grad_(), lod.clone().requires_grad_()
        fn(i, u, l).backward()
        return i.grad, u.grad, l.grad

    _, want_uv, want_lod = grads(True)
    got_image, got_uv, got_lod = grads(False)
    assert got_image is None
    assert bool(torch.isfinite(got_uv).all()) and float(got_uv.abs().max()) > 0
    torch.testing.assert_close(got_uv, want_uv, rtol=0, atol=0)  # the same arithmetic, image gradient or not
    torch.testing.assert_close(got_lod, want_lod, rtol=0, atol=0)
    if device == "cuda":
        got_image, got_uv, got_lod = grads(False, torch.compile(loss, fullgraph=True))
        assert got_image is None
        torch.testing.assert_close(got_uv, want_uv)
        torch.testing.assert_close(got_lod, want_lod)


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


@needs_cuda
def test_cuda_nonfinite_gradients_are_reported_without_a_sync():
    """A NaN or infinite upstream gradient on CUDA is found by the backward kernels (no
    host sync): check_gradients() reports it, and without that call the next backward on
    the device refuses to run. Finite gradients raise nothing."""
    import torch

    image, uv, lod, layer = _job(torch, "cuda", torch.float32)
    image.requires_grad_()
    with contextlib.suppress(tv.Error):  # a verdict left by an earlier test is not this test's
        tv.check_gradients()
    tv.sample_points(image, uv, lod, layer).sum().backward()
    tv.check_gradients()
    for bad in (float("nan"), float("inf")):
        grad = torch.rand((uv.shape[0], 3), device="cuda")
        grad[uv.shape[0] // 2, 1] = bad
        tv.sample_points(image, uv, lod, layer).backward(grad)
        with pytest.raises(tv.Error, match="NaN or infinite"):
            tv.check_gradients(image.device)
        tv.check_gradients()  # reported once
    # Unchecked: the next backward refuses, before launching anything.
    grad = torch.full((uv.shape[0], 3), float("nan"), device="cuda")
    tv.sample_points(image, uv, lod, layer).backward(grad)
    torch.cuda.synchronize()
    image.grad = None
    with pytest.raises(tv.Error, match="earlier backward"):
        tv.sample_points(image, uv, lod, layer).sum().backward()
    assert image.grad is None
    # The box chain's backward (box_levels) checks the gradient reaching its levels.
    levels = tv.differentiable.box_levels(image)
    (levels[2].sum() * float("inf")).backward()
    with pytest.raises(tv.Error, match="NaN or infinite"):
        tv.check_gradients()
    with pytest.raises(tv.Error, match="CUDA device"):
        tv.check_gradients("cpu")


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


# ---------------------------------------------------------------- box chain with gradients


def numpy_box_chain(image: np.ndarray, levels: int) -> list:
    """The exact box (docs/architecture.md, "Mip filters") by its definition: level l's texel averages
    the source area it covers, each source texel weighted by its overlap."""

    def shrink(a: np.ndarray, axis: int) -> np.ndarray:
        n = a.shape[axis]
        m = max(1, n // 2)
        w = np.zeros((m, n))
        for i in range(m):  # output i covers [i * n / m, (i + 1) * n / m) of the source
            lo, hi = i * n / m, (i + 1) * n / m
            for j in range(n):
                w[i, j] = max(0.0, min(hi, j + 1) - max(lo, j))
        w /= w.sum(axis=1, keepdims=True)
        return np.moveaxis(np.tensordot(w, np.moveaxis(a, axis, 0), axes=1), 0, axis)

    out = [image]
    for _ in range(levels - 1):
        out.append(shrink(shrink(out[-1], -1), -2))
    return out


def test_reference_backward_without_the_image_gradient(rng):
    # image_grad=False (torch's backward for an image that takes no gradient): no image
    # gradient, the same uv and lod gradients.
    image, uv, lod = rng.random((2, 3, 9, 7)), rng.random((50, 2)), rng.random(50) * 3
    layer, grad = rng.integers(0, 2, 50, dtype=np.int32), rng.standard_normal((50, 3))
    full = tv._core.reference_sample_points_backward(image, 4, uv, lod, layer, grad)
    alone = tv._core.reference_sample_points_backward(image, 4, uv, lod, layer, grad, False)
    assert full[0].shape == image.shape and alone[0] is None
    assert np.abs(full[1]).max() > 0
    np.testing.assert_array_equal(alone[1], full[1])
    np.testing.assert_array_equal(alone[2], full[2])


def test_reference_box_chain_and_its_adjoint(rng):
    # Odd and even sides, layers and many channels: the packed chain equals the definition,
    # and the adjoint is the chain's transpose: <chain(x), g> = <x, adjoint(g)>.
    for layers, channels, height, width in ((1, 1, 8, 8), (2, 3, 7, 5), (1, 40, 9, 6), (3, 4, 1, 11)):
        image = rng.random((layers, channels, height, width))
        levels = int(max(width, height)).bit_length()
        packed = tv._core.reference_box_chain(image, levels)
        want = numpy_box_chain(image, levels)
        assert packed.size == sum(a.size for a in want)
        np.testing.assert_allclose(packed, np.concatenate([a.ravel() for a in want]), rtol=0, atol=1e-13)
        grad = rng.standard_normal(packed.size)
        folded = tv._core.reference_box_chain_adjoint(grad, layers, channels, width, height, levels)
        assert folded.shape == image.shape
        np.testing.assert_allclose(np.dot(packed, grad), np.sum(image * folded), rtol=1e-12)
    with pytest.raises(tv.Error, match="levels"):
        tv._core.reference_box_chain_adjoint(np.zeros(10), 1, 1, 4, 4, 2)
    with pytest.raises(tv.Error, match="does not exist"):
        tv._core.reference_box_chain_adjoint(np.zeros(16), 1, 1, 4, 4, 4)


@needs_torch
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_generate_mipmaps_has_gradients(device, rng):
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    # gradcheck in float64 through every level of odd and even chains, batched, channels last.
    for shape, channels_last in (((3, 7, 5), False), ((2, 4, 6, 8), False), ((5, 9, 2), True)):
        image = torch.rand(shape, dtype=torch.float64, device=device, requires_grad=True)

        def levels(x):
            return tuple(tv.generate_mipmaps(x, channels_last=channels_last)[1:])

        assert torch.autograd.gradcheck(levels, (image,))
    # Values: those of the forward-only path; level 0 is the image itself.
    image = torch.rand((2, 40, 33, 20), device=device)
    plain = tv.generate_mipmaps(image[:, :4].contiguous())
    grad_levels = tv.generate_mipmaps(image.requires_grad_())
    assert grad_levels[0] is image and len(grad_levels) == len(plain) == 6
    for a, b in zip(plain[1:], grad_levels[1:]):
        assert a.shape[-2:] == b.shape[-2:] and b.shape[1] == 40
        torch.testing.assert_close(a, b[:, :4].detach(), rtol=0, atol=2e-6)
    # The gradient of a weighted sum over every level: the double CPU reference's.
    weights = [torch.randn(level.shape, device=device) for level in grad_levels]
    sum((w * level).sum() for w, level in zip(weights, grad_levels)).backward()
    reference = image.detach().cpu().double().requires_grad_()
    sum((w.cpu().double() * level).sum() for w, level in zip(weights, tv.generate_mipmaps(reference))).backward()
    torch.testing.assert_close(image.grad.cpu().double(), reference.grad, rtol=0, atol=1e-5)
    # float16 images come back in float16, with float32 gradients cast to float16.
    half = torch.rand((3, 16, 16), device=device).half().requires_grad_()
    out = tv.generate_mipmaps(half)
    assert all(level.dtype == torch.float16 for level in out)
    out[-1].sum().backward()
    torch.testing.assert_close(half.grad.float(), torch.full((3, 16, 16), 1 / 256, device=device))
    # Gradients go through the default format only.
    with pytest.raises(tv.Error, match="box filter in the image's own format"):
        tv.generate_mipmaps(torch.rand((3, 8, 8), device=device, requires_grad=True), format="rgba16f")


@needs_cuda
def test_generate_mipmaps_with_gradients_compiles():
    import torch

    image = torch.rand((1, 3, 64, 48), device="cuda", requires_grad=True)

    def loss(x):
        return sum(level.square().mean() for level in tv.generate_mipmaps(x))

    eager = torch.autograd.grad(loss(image), image)[0]
    compiled = torch.autograd.grad(torch.compile(loss, fullgraph=True)(image), image)[0]
    torch.testing.assert_close(eager, compiled, rtol=1e-5, atol=1e-7)


@needs_torch
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_texture_pyramid_sampling_has_gradients(device, rng):
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    image = torch.rand((2, 3, 48, 64), device=device)
    plain = tv.TexturePyramid(image)
    pyramid = tv.TexturePyramid(image.clone().requires_grad_())
    source = pyramid._grad_source
    for name, call in (
        ("grid", lambda p: p.sample_at_level(1, patch_size=8)),
        ("foveated", lambda p: p.sample_foveated((0.3, 0.6), num_patches=20, patch_size=8)),
    ):
        want, got = call(plain), call(pyramid)
        assert got.patches.requires_grad and got.patches.shape == want.patches.shape
        # The software forward against the texture path: the texture unit's 8-bit weights.
        assert (got.patches.detach() - torch.as_tensor(want.patches, device=device)).abs().max() < 3 / 256 + 1e-6
        # Patches are linear in the image, so sum(w * patches) = <image, d/d image>: the
        # gradient is right only if every sample's weights land on the texels it read.
        weights = torch.randn(got.patches.shape, device=device)
        value = (weights * got.patches).sum()
        (grad,) = torch.autograd.grad(value, source)
        torch.testing.assert_close((grad * source.detach()).sum(), value.detach(), rtol=1e-4, atol=1e-3)
        assert grad.abs().sum() > 0, name
    # Padding slots stay zero; anisotropic layouts, partial updates and bytes are refused.
    padded = pyramid.sample_foveated((0.5, 0.5), num_patches=400, patch_size=8)
    assert (padded.patches[~(padded.meta[..., 4] >= 0)] == 0).all()
    with pytest.raises(tv.Error, match="partial update"):
        pyramid.update(image.clone().requires_grad_(), rect=(0, 0, 8, 8))
    with pytest.raises(tv.Error, match="bytes"):
        tv.TexturePyramid(image.clone().requires_grad_(), format="rgba8")
    with torch.no_grad():  # no recording: the texture path
        assert not pyramid.sample_at_level(1, patch_size=8).patches.requires_grad


@needs_cuda
def test_channels_last_images_are_read_in_place():
    # The kernels' levels are channels last: such an image is level 0 as it is, an NCHW one
    # is copied; both give the same samples and gradients (atomics add in any order).
    import torch

    g = torch.Generator(device="cuda").manual_seed(3)
    x = torch.rand((2, 40, 33, 20), device="cuda", generator=g)
    planar = x.clone().requires_grad_()
    last = x.clone().to(memory_format=torch.channels_last).requires_grad_()
    uv = torch.rand((500, 2), device="cuda", generator=g)
    lod = torch.rand(500, device="cuda", generator=g) * 5
    layer = torch.randint(0, 2, (500,), device="cuda", generator=g)
    a, b = tv.sample_points(planar, uv, lod, layer), tv.sample_points(last, uv, lod, layer)
    assert torch.equal(a, b)
    weights = torch.randn(a.shape, device="cuda", generator=g)
    (a * weights).sum().backward()
    (b * weights).sum().backward()
    torch.testing.assert_close(planar.grad, last.grad, rtol=1e-5, atol=1e-6)


@needs_torch
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_every_layout_with_gradients_equals_the_reference_filter(device, rng):
    # With grad, a pyramid samples in software with the engine's reference filtering: the
    # CPU reference pyramid (double) of the same float image is the oracle, for level and
    # anisotropic layouts (axis-aligned and along a fixation's direction), odd sizes, a batch.
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    image = rng.random((2, 4, 61, 97)).astype(np.float32)
    reference = tv.TexturePyramid(image, backend="cpu")
    source = torch.from_numpy(image).to(device).requires_grad_()
    pyramid = tv.TexturePyramid(source)
    layouts = {
        "grid": tv.layouts.grid(97, 61, patch_size=8, level=1, images=2),
        "foveated": tv.layouts.foveated(97, 61, [[[0.2, 0.3]], [[0.8, 0.5]]], num_patches=20, patch_size=8, images=2),
        "anisotropic": tv.layouts.anisotropic(97, 61, patch_size=8, level=1, elongation=3, images=2),
        "anisotropic, fixation": tv.layouts.anisotropic(
            97, 61, patch_size=8, level=1, elongation=2, images=2, fixation=[(0.3, 0.4), (0.9, 0.1)], num_patches=5
        ),
    }
    # The pyramid samples anisotropic layouts as its device would (Mesa's lavapipe takes 1 tap,
    # NVIDIA's Vulkan and CUDA 16): the oracle is the reference at the same anisotropy.
    anisotropy = pyramid.max_anisotropy if pyramid.backend != "cpu" else 16
    for name, layout in layouts.items():
        got = pyramid.sample(layout)
        want = reference.sample(layout, max_anisotropy=anisotropy)
        assert got.patches.requires_grad, name
        np.testing.assert_allclose(got.patches.detach().cpu().numpy(), want.patches, rtol=0, atol=2e-5, err_msg=name)
        weights = torch.randn(got.patches.shape, device=device)
        value = (weights * got.patches).sum()
        (grad,) = torch.autograd.grad(value, source)
        torch.testing.assert_close((grad * source.detach()).sum(), value.detach(), rtol=1e-4, atol=1e-3)
