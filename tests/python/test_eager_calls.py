"""The eager calls' contracts (issue 63): glimpse.sample_patches's fused CUDA op gives the
composite's values and gradients, and the hot calls make no implicit host sync and no
allocation beyond their outputs once warm. Speed is measured by `python -m texturevlm.bench`,
not here."""

from __future__ import annotations

from typing import Any, Callable, Dict

import pytest
import texturevlm as tv
from conftest import needs_cuda


def _composite_patches(image: Any, meta: Any, p: int) -> Any:
    """glimpse.sample_patches by its definition: the points of every row by torch ops, then
    sample_points (what the fused op must equal)."""
    import torch

    steps = (torch.arange(p, device=meta.device, dtype=meta.dtype) + 0.5) / p - 0.5
    cu, cv, su, sv, lod = (meta[..., i, None, None] for i in range(5))
    u, v = torch.broadcast_tensors(cu + steps[None, None, None, :] * su, cv + steps[None, None, :, None] * sv)
    uv = torch.stack([u, v], dim=-1)
    layer = torch.arange(meta.shape[0], device=meta.device)[:, None, None, None].expand(uv.shape[:-1])
    return tv.sample_points(image, uv, lod.expand(uv.shape[:-1]), layer).permute(0, 1, 4, 2, 3)


def _rows(torch: Any, gen: Any, b: int, n: int, dtype: Any) -> Any:
    """Metadata rows [b, n, 5] in and around the image, at levels -0.5..6 (clamped ends too)."""
    centre = torch.rand((b, n, 2), generator=gen, dtype=dtype) * 1.2 - 0.1
    size = torch.rand((b, n, 2), generator=gen, dtype=dtype) * 0.4 + 0.02
    lod = torch.rand((b, n, 1), generator=gen, dtype=dtype) * 6.5 - 0.5
    return torch.cat([centre, size, lod], -1).cuda()


@needs_cuda
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("channels", [3, 4])
def test_fused_patches_equal_the_composite(channels_last, channels):
    import torch

    gen = torch.Generator().manual_seed(7)
    b, n, p = 2, 37, 5
    image = torch.rand((b, channels, 61, 80), generator=gen).cuda()
    if channels_last:
        image = image.to(memory_format=torch.channels_last)
    meta = _rows(torch, gen, b, n, torch.float32)
    grad = torch.rand((b, n, channels, p, p), generator=gen).cuda()

    results = []
    for fn in (tv.glimpse.sample_patches, _composite_patches):
        x = image.detach().clone().requires_grad_()
        m = meta.detach().clone().requires_grad_()
        out = fn(x, m, p)
        out.backward(grad)
        results.append((out.detach(), x.grad, m.grad))
    (fused, fused_image, fused_meta), (want, want_image, want_meta) = results
    assert fused.shape == (b, n, channels, p, p)
    torch.testing.assert_close(fused, want, rtol=0, atol=0)  # the same points, bit for bit
    torch.testing.assert_close(fused_image, want_image, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(fused_meta, want_meta, rtol=1e-4, atol=1e-4)


@needs_cuda
@pytest.mark.parametrize("layout", ["planar", "channels last", "expanded"])
def test_fused_patches_take_the_incoming_gradient_in_any_layout(layout):
    """The backward reads autograd's gradient planar (transposed by the engine), channels
    last in place (an elementwise loss of the patches keeps their permuted layout), or as
    anything else (expanded) made dense first: the same gradients each way,
    equal to the composite's. Patches of odd size, so the transposed gradient's place in the
    work buffer is not a multiple of four values by itself."""
    import torch

    gen = torch.Generator().manual_seed(5)
    b, n, p, channels = 2, 9, 3, 4
    image = torch.rand((b, channels, 40, 50), generator=gen).cuda()
    meta = _rows(torch, gen, b, n, torch.float32)
    planar = torch.rand((b, n, channels, p, p), generator=gen).cuda()
    grad = {
        "planar": planar,
        "channels last": planar.permute(0, 1, 3, 4, 2).contiguous().permute(0, 1, 4, 2, 3),
        "expanded": planar[:, :, :, :1, :1].expand(b, n, channels, p, p),
    }[layout]
    results = []
    for fn in (tv.glimpse.sample_patches, _composite_patches):
        x = image.detach().clone().requires_grad_()
        m = meta.detach().clone().requires_grad_()
        torch.autograd.backward(fn(x, m, p), grad)
        results.append((x.grad, m.grad))
    (fused_image, fused_meta), (want_image, want_meta) = results
    torch.testing.assert_close(fused_image, want_image, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(fused_meta, want_meta, rtol=1e-4, atol=1e-4)


@needs_cuda
def test_fused_patches_gradcheck_in_float64():
    import torch

    gen = torch.Generator().manual_seed(11)
    image = torch.rand((2, 3, 12, 17), generator=gen, dtype=torch.float64).cuda().requires_grad_()
    meta = _rows(torch, gen, 2, 4, torch.float64).requires_grad_()
    assert torch.autograd.gradcheck(lambda i, m: tv.glimpse.sample_patches(i, m, 3), (image, meta))


@needs_cuda
def test_fused_patches_refuse_rows_of_another_batch():
    import torch

    image = torch.rand((2, 3, 16, 16), device="cuda")
    meta = torch.rand((3, 4, 5), device="cuda")
    with pytest.raises(tv.Error, match="metadata is \\[B, N, 5\\] for a batch of 2"):
        tv.glimpse.sample_patches(image, meta, 4)
    with pytest.raises(tv.Error, match="on one device"):
        tv.glimpse.sample_patches(image, meta[:2].cpu(), 4)


def _hot_steps() -> Dict[str, Callable[[], Any]]:
    """Each hot call as a user writes it, forward and backward where it has one."""
    import torch

    gen = torch.Generator(device="cuda").manual_seed(0)
    image = torch.rand((1, 4, 256, 256), device="cuda", generator=gen).requires_grad_()
    uv = torch.rand((4096, 2), device="cuda", generator=gen).requires_grad_()
    lod = torch.rand(4096, device="cuda", generator=gen) * 7
    grad_points = torch.rand((4096, 4), device="cuda", generator=gen)
    layout = tv.layouts.foveated(256, 256, (0.4, 0.6), 64, 8)
    meta = torch.from_numpy(layout.metadata).float().cuda()
    grad_patches = torch.rand((1, 64, 4, 8, 8), device="cuda", generator=gen)
    means = torch.rand((300, 3), device="cuda", generator=gen).requires_grad_()
    chol = tv.fields.cholesky_from_log_diagonal(
        torch.full((300, 3), -2.0, device="cuda"), torch.zeros((300, 3), device="cuda")
    ).requires_grad_()
    weights = torch.rand(300, device="cuda", generator=gen).requires_grad_()
    xyz = torch.rand((200, 3), device="cuda", generator=gen).requires_grad_()
    grad_field = torch.rand(200, device="cuda", generator=gen)
    frame = (torch.rand((256, 256, 4), device="cuda", generator=gen) * 255).to(torch.uint8)
    pyramid = tv.TexturePyramid(frame, channels_last=True)

    def clear(*leaves: Any) -> None:
        for t in leaves:
            t.grad = None

    def points_step() -> None:
        clear(image, uv)
        torch.autograd.backward(tv.sample_points(image, uv, lod), grad_points)

    def patches_step() -> None:
        clear(image)
        torch.autograd.backward(tv.glimpse.sample_patches(image, meta, 8), grad_patches)

    def field_step() -> None:
        clear(xyz, means, chol, weights)
        torch.autograd.backward(tv.fields.gaussian_field(xyz, means, chol, weights), grad_field)

    return {
        "sample_points": points_step,
        "glimpse.sample_patches": patches_step,
        "gaussian_field": field_step,
        "sample_patches (uint8 frame)": lambda: tv.sample_patches(frame, layout, channels_last=True),
        "generate_mipmaps (uint8 frame)": lambda: tv.generate_mipmaps(frame, channels_last=True),
        "TexturePyramid.sample": lambda: pyramid.sample(layout),
    }


@needs_cuda
def test_hot_calls_make_no_implicit_host_sync():
    """torch's sync debug mode raises at any implicit synchronization (a .item(), a host
    copy, a cudaMalloc's device sync) inside the calls, forward and backward."""
    import torch

    steps = _hot_steps()
    for step in steps.values():  # warm: layouts uploaded, plans made, pools filled
        step()
    torch.cuda.synchronize()
    previous = torch.cuda.get_sync_debug_mode()
    try:
        torch.cuda.set_sync_debug_mode("error")
        for name, step in steps.items():
            try:
                step()
            except RuntimeError as e:  # named, so a failure says which call synced
                raise AssertionError(f"{name} synchronized with the host: {e}") from e
    finally:
        torch.cuda.set_sync_debug_mode(previous)
    # And no explicit wait either: the calls queue behind a long kernel instead of waiting
    # for it (the engine's own CUDA calls are outside torch's sync debug mode).
    torch.cuda._sleep(200_000_000)
    for step in steps.values():
        step()
    assert not torch.cuda.current_stream().query(), "a call waited for the GPU"
    torch.cuda.synchronize()


@needs_cuda
def test_warm_calls_allocate_only_their_outputs():
    """Once warm, a step asks torch's caching allocator for its outputs and what its backward
    keeps (counted), nothing reaches cudaMalloc, and nothing outlives the step. (Free device
    memory is not compared: other processes on the GPU move it.)"""
    import torch

    # Blocks a step takes from the allocator: sample_points forward = samples + coarse
    # levels, backward = the image's gradient + the coarse levels' + uv's + lod's;
    # glimpse.sample_patches forward = one scratch (coarse levels + points) + samples,
    # backward = the image's gradient + one scratch (the coarse levels', the points' and the
    # incoming gradient transposed); the field forward = values, backward = the four
    # gradients.
    expected = {"sample_points": 6, "glimpse.sample_patches": 4, "gaussian_field": 5}
    steps = _hot_steps()
    for name, step in steps.items():
        for _ in range(3):
            step()
        torch.cuda.synchronize()
        stats = torch.cuda.memory_stats()
        blocks, segments = stats["allocation.all.allocated"], stats["segment.all.allocated"]
        in_use = torch.cuda.memory_allocated()
        for _ in range(20):
            step()
        torch.cuda.synchronize()
        stats = torch.cuda.memory_stats()
        assert stats["segment.all.allocated"] == segments, f"{name} reached cudaMalloc after warm-up"
        assert torch.cuda.memory_allocated() == in_use, f"{name} kept memory after its step"
        if name in expected:
            per_step = (stats["allocation.all.allocated"] - blocks) / 20
            assert per_step == expected[name], f"{name} took {per_step} blocks a step, not {expected[name]}"


@needs_cuda
def test_eager_steps_make_no_views_or_copies():
    """The training steps' host time is mostly torch calls: forward and backward make their
    outputs in the layout they return (one empty_strided each), and read the incoming
    gradient where it lies, so no view, layout change or copy is dispatched in a step whose
    gradient arrives dense (torch.profiler sees every thread's aten calls, autograd's too)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    steps = _hot_steps()
    views = {"aten::permute", "aten::transpose", "aten::as_strided", "aten::view", "aten::new_empty"}
    copies = {"aten::contiguous", "aten::clone", "aten::copy_", "aten::to", "aten::_to_copy"}
    for name in ("sample_points", "glimpse.sample_patches"):
        steps[name]()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            steps[name]()
            torch.cuda.synchronize()
        made = {event.key for event in prof.key_averages()} & (views | copies)
        assert not made, f"{name} dispatched {sorted(made)}"


@needs_cuda
def test_repeated_engine_calls_replay_one_graph_that_writes_every_output():
    """From a call's second repeat the engine replays its launches as one CUDA graph
    (cuda_pipelines/replayed_launches.h). Each repeat's outputs are poisoned first: the
    replay must write all of them, with the direct call's values; other buffers are new keys."""
    import torch
    from texturevlm import _core

    gen = torch.Generator(device="cuda").manual_seed(11)
    n, b = 300, 200
    xyz = torch.rand((b, 3), device="cuda", generator=gen)
    means = torch.rand((n, 3), device="cuda", generator=gen)
    chol = tv.fields.cholesky_from_log_diagonal(
        torch.full((n, 3), -2.0, device="cuda"), torch.randn((n, 3), device="cuda", generator=gen) * 0.02
    )
    weights = torch.rand(n, device="cuda", generator=gen)
    upstream = torch.rand(b, device="cuda", generator=gen)
    plan = _core.CudaField(0, "float32", 3, b, n)
    stream = torch.cuda.current_stream().cuda_stream
    inputs = [t.data_ptr() for t in (xyz, means, chol, weights)]
    buffers = [
        (torch.empty(b, device="cuda"), [torch.empty_like(t) for t in (xyz, means, chol, weights)]) for _ in "ab"
    ]
    want = None
    for repeat in range(4):
        for values, grads in buffers:  # two sets of outputs: two keys, each replayed from its second call
            for t in [values] + grads:
                t.fill_(float("nan"))
            plan.forward(*inputs, values.data_ptr(), 0, stream)
            plan.backward(*inputs, upstream.data_ptr(), *(g.data_ptr() for g in grads), stream)
            got = [values.clone()] + [g.clone() for g in grads]
            assert all(bool(torch.isfinite(t).all()) for t in got), f"repeat {repeat} left outputs unwritten"
            if want is None:
                want = got
            for w, g in zip(want, got):  # the per-Gaussian sums add chunks atomically, in any order
                torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-6 * float(w.abs().max()))
    assert plan.replay_graphs == 4, "each of the two keys' forward and backward is replayed as one graph"
    # The fused patch op through Python: repeated steps give the first step's values and gradients.
    image = torch.rand((2, 3, 61, 47), device="cuda", generator=gen).requires_grad_()
    meta = _rows(torch, torch.Generator().manual_seed(2), 2, 9, torch.float32)
    weights_out = torch.randn((2, 9, 3, 5, 5), device="cuda", generator=gen)
    first = None
    for _ in range(5):
        image.grad = None
        patches = tv.glimpse.sample_patches(image, meta, 5)
        (patches * weights_out).sum().backward()
        now = (patches.detach().clone(), image.grad.clone())
        if first is None:
            first = now
        torch.testing.assert_close(now[0], first[0], rtol=0, atol=0)
        torch.testing.assert_close(now[1], first[1], rtol=1e-5, atol=1e-6)


@needs_cuda
@pytest.mark.parametrize(
    "channels_last, channels, width, height",
    [(False, 3, 130, 97), (True, 3, 130, 97), (True, 4, 512, 384), (True, 4, 130, 97)],
    ids=["planar", "channels-last RGB", "RGBA even (the chain reads the frame)", "RGBA odd"],
)
def test_repeated_frame_calls_replay_with_each_frames_values(channels_last, channels, width, height):
    """sample_patches on one frame buffer and one output, the frame rewritten in place
    between calls (a decoder's buffer): from the second repeat the engine replays one graph,
    which must read the frame's current values and write every patch. Each call equals a
    separate pyramid's patches of the same frame (level 0 written, then its chain), bit for
    bit; a second layout and a second buffer are keys of their own. RGBA frames of even
    sides go into the chain's first pass directly (CudaPyramid::load_frame)."""
    import torch
    from texturevlm import _frame_calls

    tv.clear_cache()  # textures of this size from earlier tests keep their graphs
    gen = torch.Generator(device="cuda").manual_seed(5)
    shape = (height, width, channels) if channels_last else (channels, height, width)
    frames = [torch.randint(0, 256, shape, dtype=torch.uint8, device="cuda", generator=gen) for _ in range(2)]
    layouts = [tv.layouts.foveated(width, height, (0.3, 0.6), 40, 6), tv.layouts.grid(width, height, 8, 1)]
    outs = [torch.empty((lay.num_patches, channels, lay.patch_size, lay.patch_size), device="cuda") for lay in layouts]
    for repeat in range(4):
        for f, frame in enumerate(frames):
            frame.copy_(torch.randint(0, 256, shape, dtype=torch.uint8, device="cuda", generator=gen))
            for layout, out in zip(layouts, outs):
                out.fill_(float("nan"))
                got = tv.sample_patches(frame, layout, channels_last=channels_last, out=out)
                assert got.patches is out
                want = tv.TexturePyramid(frame.clone(), channels_last=channels_last).sample(layout)
                torch.testing.assert_close(out, want.patches, rtol=0, atol=0, msg=f"repeat {repeat}, frame {f}")
                torch.testing.assert_close(got.meta, want.meta, rtol=0, atol=0)
    calls = [call for call in _frame_calls._calls.values() if any(call.layout is lay for lay in layouts)]
    textures = {id(call.texture): call.texture for call in calls}
    assert sum(t.core.replay_graphs for t in textures.values()) == 4, "two frames x two layouts replayed"
    # A call without out= allocates (torch hands the freed block back): still the frame's values.
    frame = frames[0]
    for _ in range(3):
        frame.copy_(torch.randint(0, 256, shape, dtype=torch.uint8, device="cuda", generator=gen))
        got = tv.sample_patches(frame, layouts[0], channels_last=channels_last).patches
        want = tv.TexturePyramid(frame.clone(), channels_last=channels_last).sample(layouts[0]).patches
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    # A frame of another size after warm calls: its own key, checked as a first call is.
    cut = frame[: height - 1] if channels_last else frame[:, : height - 1]
    with pytest.raises(tv.Error, match=f"the layout is for {width}x{height} images"):
        tv.sample_patches(cut, layouts[0], channels_last=channels_last)
    with pytest.raises(tv.Error, match="out has shape"):
        tv.sample_patches(frames[0], layouts[0], channels_last=channels_last, out=outs[1])


@needs_cuda
@pytest.mark.parametrize("filter", ["exact", "texture"])
def test_repeated_processor_calls_replay_with_each_images_values(filter):
    """A processor called on one image buffer rewritten between calls: its resizer replays
    one graph from the second repeat, with each call's values those of a first call on that
    content (made on separate buffers before any repeat, so launched directly)."""
    import torch
    from texturevlm.processors import SiglipImageProcessor, _resize

    processor = SiglipImageProcessor(filter=filter)
    gen = torch.Generator(device="cuda").manual_seed(9)
    contents = [torch.randint(0, 256, (3, 300, 451), dtype=torch.uint8, device="cuda", generator=gen) for _ in range(4)]
    want = [processor(c)["pixel_values"].clone() for c in contents]
    before = sum(r.replay_graphs for r in _resize._resizers.values())
    image = torch.empty_like(contents[0])
    for repeat in range(3):
        for k, content in enumerate(contents):
            image.copy_(content)
            got = processor(image)["pixel_values"]
            torch.testing.assert_close(got, want[k], rtol=0, atol=0, msg=f"repeat {repeat}, content {k}")
    assert sum(r.replay_graphs for r in _resize._resizers.values()) > before, "the repeated call was not replayed"


@needs_cuda
def test_repeated_pyramid_samples_follow_each_update():
    """A CUDA pyramid's sample() plans a layout once; later calls of it sample the pyramid's
    current frame into new or given outputs (poisoned first), and still refuse a wrong out=.
    A frame that requires grad afterwards takes the autograd path, not the plan."""
    import torch

    gen = torch.Generator(device="cuda").manual_seed(3)
    frame = torch.rand((4, 90, 120), device="cuda", generator=gen)
    pyramid = tv.TexturePyramid(frame)
    layout = tv.layouts.foveated(120, 90, (0.6, 0.4), 30, 6)
    out = torch.empty((30, 4, 6, 6), device="cuda")
    for k in range(4):
        frame = torch.rand((4, 90, 120), device="cuda", generator=gen)
        pyramid.update(frame)
        want = tv.TexturePyramid(frame.clone()).sample(layout).patches
        out.fill_(float("nan"))
        assert pyramid.sample(layout, out=out).patches is out
        torch.testing.assert_close(out, want, rtol=0, atol=0, msg=f"update {k}")
        torch.testing.assert_close(pyramid.sample(layout).patches, want, rtol=0, atol=0)
        fov = pyramid.sample_foveated((0.5, 0.5), num_patches=30, patch_size=6, out=out)
        assert fov.patches is out
        fresh = tv.TexturePyramid(frame.clone()).sample_foveated((0.5, 0.5), 30, 6).patches
        torch.testing.assert_close(out, fresh, rtol=0, atol=0)
    with pytest.raises(tv.Error, match="out has shape"):
        pyramid.sample(layout, out=torch.empty((30, 4, 6, 5), device="cuda"))
    with pytest.raises(tv.Error, match="out has shape"):
        pyramid.sample(layout, out=out.half())
    source = torch.rand((4, 90, 120), device="cuda", generator=gen).requires_grad_()
    pyramid.update(source)
    patches = pyramid.sample(layout).patches
    assert patches.grad_fn is not None, "a frame that requires grad samples with autograd"
