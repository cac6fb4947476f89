"""texturevlm.processors on CUDA tensors against Hugging Face's own processors (transformers,
on the NVIDIA machine), the host path, and video rings. Skipped without an NVIDIA GPU,
PyTorch or transformers."""

from __future__ import annotations

import numpy as np
import pytest
import texturevlm as tv
from conftest import needs_cuda, needs_hf, transformers
from test_processors import STEP, photo, smooth_image
from texturevlm.processors import (
    CLIPImageProcessor,
    Gemma3ImageProcessor,
    GotOcr2ImageProcessor,
    Idefics3ImageProcessor,
    LlavaNextImageProcessor,
    LlavaOnevisionImageProcessor,
    Qwen2VLImageProcessor,
    Qwen2VLVideoProcessor,
    SiglipImageProcessor,
)

pytestmark = needs_cuda


OURS = {"clip": CLIPImageProcessor, "siglip": SiglipImageProcessor, "qwen2_vl": Qwen2VLImageProcessor}


def hf_processor(name):
    return {
        "clip": transformers.CLIPImageProcessor,
        "siglip": transformers.SiglipImageProcessor,
        "qwen2_vl": transformers.Qwen2VLImageProcessor,
    }[name]()


def cuda(x):
    import torch

    return torch.from_numpy(np.ascontiguousarray(x)).cuda()


def images(rng):
    return {
        "chart": tv.test_chart(1536, 1024),
        "photo": smooth_image(rng, 1000, 700),
        "wide": smooth_image(rng, 90, 1300),
        "small": smooth_image(rng, 40, 60),
    }


@needs_hf
@pytest.mark.parametrize("name", list(OURS))
def test_same_keys_shapes_dtypes_and_values_as_hugging_face(rng, name):
    hf = hf_processor(name)
    for label, image in images(rng).items():
        want = hf(images=[cuda(image)], return_tensors="pt")
        for filter in ("exact", "texture"):
            got = OURS[name](filter=filter)([cuda(image)])
            assert set(got) == set(want.keys())
            for key in want.keys():
                assert tuple(got[key].shape) == tuple(want[key].shape), (key, label)
                assert got[key].dtype == want[key].dtype and got[key].device == want[key].device, key
            if "image_grid_thw" in want:
                assert (got["image_grid_thw"] == want["image_grid_thw"]).all()
            d = (got["pixel_values"] - want["pixel_values"]).abs()
            if filter == "exact":  # HF's own filter: differences are rounding ties of the uint8 resize
                assert d.max().item() <= STEP and (d > 1e-4).float().mean().item() <= 0.02, (label, d.max().item())
            elif label != "chart":  # photo-like content: docs/processors.md's bound
                assert d.mean().item() < 0.05 and d.max().item() < 1.2, (label, d.mean().item(), d.max().item())


@needs_hf
def test_qwen_batches_of_mixed_sizes_match_hugging_face(rng):
    batch = [cuda(smooth_image(rng, h, w)) for h, w in ((500, 700), (300, 300), (500, 700), (64, 900))]
    want = transformers.Qwen2VLImageProcessor()(images=batch, return_tensors="pt")
    got = Qwen2VLImageProcessor(filter="exact")(batch)
    assert (got.image_grid_thw == want["image_grid_thw"]).all()
    d = (got.pixel_values - want["pixel_values"]).abs()
    assert d.max().item() <= STEP


@needs_hf
def test_qwen_video_matches_hugging_face(rng):
    import torch

    frames = torch.stack([cuda(smooth_image(rng, 360, 640)) for _ in range(5)])
    want = transformers.Qwen2VLVideoProcessor()(videos=[frames], return_tensors="pt")
    got = Qwen2VLVideoProcessor(filter="exact")([frames])
    assert (got.video_grid_thw == want["video_grid_thw"]).all()
    d = (got.pixel_values_videos - want["pixel_values_videos"]).abs()
    assert d.max().item() <= STEP


@needs_hf
@pytest.mark.parametrize("name", ["clip", "qwen2_vl"])
def test_device_copies_images_there_as_hfs_processors_do(rng, name):
    """device='cuda' with host images (a NumPy array, a PIL image, a CPU tensor) processes
    them on the GPU, as HF's processors do with device=: outputs on CUDA, equal to the same
    image given as a CUDA tensor and to HF's own device='cuda' outputs. device='cpu' with a
    CUDA tensor processes it on the host: the host path's outputs."""
    import torch
    from PIL import Image

    image = smooth_image(rng, 480, 640)  # [3, H, W]
    hwc = np.ascontiguousarray(image.transpose(1, 2, 0))
    ours = OURS[name]()
    on_gpu = ours([cuda(image)])
    hf = hf_processor(name)
    for given in (image, Image.fromarray(hwc), torch.from_numpy(hwc)):
        got = ours([given], device="cuda")
        want = hf(images=[given], return_tensors="pt", device="cuda")
        assert got.pixel_values.is_cuda, type(given).__name__
        assert set(got) == set(want.keys())
        for key in got:
            assert torch.equal(got[key], on_gpu[key]), (type(given).__name__, key)
            assert got[key].device == want[key].device, key
        d = (got.pixel_values - want["pixel_values"]).abs()
        assert d.max().item() <= STEP and (d > 1e-4).float().mean().item() <= 0.02, d.max().item()
    host = ours([cuda(image)], device="cpu")
    assert not host.pixel_values.is_cuda
    for key in host:
        assert torch.equal(host[key], ours([torch.from_numpy(image)])[key]), key


@pytest.mark.parametrize("name", ["clip", "qwen2_vl"])
def test_cuda_equals_host_path(rng, name):
    image = smooth_image(rng, 700, 1000)
    host = OURS[name](filter="texture", backend="cpu")(image)["pixel_values"]
    device = OURS[name](filter="texture")(cuda(image))["pixel_values"].cpu().numpy()
    # the texture unit's 8-bit filter weights against the reference's float weights
    assert np.abs(host - device).mean() < 0.005 and np.abs(host - device).max() < 0.1
    # The default follows HF per device: torch resizes host bytes in integers, CUDA tensors
    # in float, so the two differ by torch's own few steps.
    host = OURS[name](backend="cpu")(image)["pixel_values"]
    device = OURS[name]()(cuda(image))["pixel_values"].cpu().numpy()
    assert np.abs(host - device).max() <= 4 * STEP and np.abs(host - device).mean() < STEP / 4


@needs_hf
@pytest.mark.parametrize("photo_name", ["f3.jpg", "verify.jpeg"])
@pytest.mark.parametrize("name", list(OURS))
def test_default_values_are_hfs_on_photographs_on_each_device(photo_name, name):
    """The default filter against HF itself on real photographs, for the device the image
    is on: a host array as HF resizes it on the CPU, a CUDA tensor as HF does on CUDA."""
    image = photo(photo_name)
    want = hf_processor(name)(images=[image], return_tensors="pt")
    got = OURS[name]()([image], return_tensors="pt")
    d = (got["pixel_values"] - want["pixel_values"]).abs()
    assert d.max().item() <= 2e-6, (photo_name, name, d.max().item(), (d > 1e-4).float().mean().item())
    want = hf_processor(name)(images=[cuda(image)], return_tensors="pt")
    got = OURS[name]()([cuda(image)])
    d = (got["pixel_values"] - want["pixel_values"]).abs()
    # CUDA's float sums may land a value on the other side of a uint8 rounding tie.
    assert d.max().item() <= STEP and (d > 1e-4).float().mean().item() <= 1e-3, (d.max().item(), name)


@pytest.mark.parametrize("filter", ["texture", "exact"])
def test_lists_batches_and_single_images_give_the_same_values(rng, filter):
    # 40 images: more than one launch takes (32); a list is separate allocations, a batch one.
    import torch

    batch = torch.stack([cuda(smooth_image(rng, 90, 120)) for _ in range(40)])
    processor = CLIPImageProcessor(filter=filter, size={"shortest_edge": 40}, crop_size=40)
    as_batch = processor(batch).pixel_values
    as_list = processor([image.clone() for image in batch]).pixel_values
    one_by_one = torch.cat([processor(image).pixel_values for image in batch])
    assert as_batch.shape == (40, 3, 40, 40)
    assert torch.equal(as_batch, as_list) and torch.equal(as_batch, one_by_one)
    channels_last = processor([image.permute(1, 2, 0).contiguous() for image in batch]).pixel_values
    assert torch.equal(as_batch, channels_last)


@pytest.mark.parametrize("name", ["clip", "qwen2_vl"])
def test_word_reads_and_byte_reads_give_the_same_values(rng, name):
    # Aligned uint8 rows are read a word at a time (tensor mips: 8 bytes, level-0 copy: 4);
    # a view one byte off its allocation's alignment takes the byte-wise path. CLIP shrinks
    # 720 x 1004 (a view of 1024-wide rows: its 502-texel level 1 ends inside a word) by 3.2
    # (tensor mips); Qwen takes 370 x 508 to 364 x 504 (level 0 copied into the texture, level
    # 1 made from the same loads; 508 columns end inside a warp's 128-texel run).
    import torch

    image = cuda(smooth_image(rng, 720, 1024))[:, :, :1004] if name == "clip" else cuda(smooth_image(rng, 370, 508))
    shifted = torch.empty((3, image.shape[1], image.shape[2] + 1), dtype=torch.uint8, device="cuda")
    unaligned = shifted[:, :, 1:]
    unaligned.copy_(image)
    assert unaligned.data_ptr() % 4 and image.data_ptr() % 8 == 0
    processor = OURS[name](filter="texture")
    aligned_values = processor(image).pixel_values
    assert torch.equal(aligned_values, processor(unaligned).pixel_values)
    # A list whose last image has other strides: not one launch's list, the same values.
    mixed = processor([image, image, unaligned]).pixel_values
    assert torch.equal(mixed, torch.cat([aligned_values] * 3))


def test_deep_chains_keep_only_the_levels_they_read(rng):
    # 2048^2 -> 16^2: seven box levels from the tensor in two passes; only the second pass's
    # source is kept as a tensor, the last goes straight into the texture. Against the CPU
    # reference's full chain.
    image = smooth_image(rng, 2048, 2048)
    config = dict(size={"shortest_edge": 16}, crop_size=16)
    host = CLIPImageProcessor(filter="texture", backend="cpu", **config)(image)["pixel_values"]
    device = CLIPImageProcessor(filter="texture", **config)(cuda(image))["pixel_values"].cpu().numpy()
    assert np.abs(host - device).mean() < 0.005 and np.abs(host - device).max() < 0.1


def test_reduced_precision_outputs(rng):
    import torch

    image = cuda(smooth_image(rng, 500, 700))
    full = Qwen2VLImageProcessor()(image).pixel_values
    for dtype, tol in (("float16", 4e-3), ("bfloat16", 2e-2)):
        low = Qwen2VLImageProcessor(dtype=dtype)(image).pixel_values
        assert low.dtype == getattr(torch, dtype)
        assert (low.float() - full).abs().max().item() < tol


@pytest.mark.parametrize("height, width", [(360, 640), (370, 650)])
def test_video_from_a_ring_equals_the_frames_processed(rng, height, width):
    # 360 x 640 grows to 364 x 644 (level 0 only); 370 x 650 shrinks to 364 x 644, a
    # two-level chain whose level 1 the processor's level-0 copy writes from its own loads,
    # the ring's by the texture's mip pass: any byte apart shows here.
    import torch

    frames = [cuda(smooth_image(rng, height, width)) for _ in range(3)]
    ring = tv.TexturePyramid.create(width, height, device="cuda", ring=3)
    processor = Qwen2VLVideoProcessor(filter="texture")  # a ring's frames are textures
    for f in frames:
        ring.update(f)
    got = processor.from_ring(ring)
    want = processor([torch.stack(frames[1:])])
    assert torch.equal(got.video_grid_thw, want.video_grid_thw)
    assert (got.pixel_values_videos - want.pixel_values_videos).abs().max().item() < 1e-5
    with pytest.raises(tv.Error, match="ring of 3"):
        processor.from_ring(ring, frames=4)


def test_processors_make_no_host_sync(rng):
    """A call enqueues on the current stream: a long kernel before it is still running after."""
    import torch

    image = cuda(smooth_image(rng, 500, 700))
    processor = Qwen2VLImageProcessor()
    processor(image)
    torch.cuda.synchronize()
    torch.cuda._sleep(200_000_000)
    processor(image)
    assert not torch.cuda.current_stream().query()
    torch.cuda.synchronize()


@pytest.mark.parametrize("out_dtype", ["float32", "float16"])
def test_every_byte_normalizes_to_torchs_quotient(rng, out_dtype):
    """Each channel's 256 bytes through rescale + normalize (a resize to the image's own
    size: the copy kernel, whose store is every exact kernel's), for the checkpoints'
    means and stds and seeded random ones, with and without normalize: each value must be
    torch's (v * multiply - subtract) / divide on the GPU, bit for bit, whether the kernel
    divides or multiplies by the checked reciprocal."""
    import torch

    values = np.arange(256, dtype=np.uint8).reshape(16, 16)
    image = cuda(np.stack([values, values.T, values[::-1]]))
    configs = [
        {},  # CLIP's
        {"image_mean": [0.5] * 3, "image_std": [0.5] * 3},
        {"image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]},
        {"do_normalize": False},
        {"do_rescale": False, "image_mean": [0.2, 100.0, -3.0], "image_std": [0.3, 7.0, 1e-3]},
    ]
    configs += [
        {"image_mean": rng.uniform(-1, 2, 3).tolist(), "image_std": rng.uniform(0.01, 3, 3).tolist()} for _ in range(40)
    ]
    for config in configs:
        ours = CLIPImageProcessor(
            size={"shortest_edge": 16}, crop_size={"height": 16, "width": 16}, dtype=out_dtype, **config
        )
        got = ours(image).pixel_values[0]
        n = ours._normalize
        column = lambda v: torch.tensor(v, dtype=torch.float32, device="cuda").view(3, 1, 1)  # noqa: E731
        want = ((image.float() * n.multiply - column(n.subtract)) / column(n.divide)).to(getattr(torch, out_dtype))
        assert torch.equal(got, want), (config, (got.float() - want.float()).abs().max().item())


def test_clear_cache_frees_the_processors_textures(rng):
    from texturevlm.processors import _resize

    processor = CLIPImageProcessor()
    for _ in range(2):  # a first sight (on a resizer of any size), then the size's own resizer
        processor(cuda(smooth_image(rng, 300, 400)))
    assert _resize._resizers and _resize._targets and _resize._any_size
    tv.clear_cache()
    assert not _resize._resizers and not _resize._targets and not _resize._any_size


def test_first_sights_of_sizes_make_no_resizer_and_later_sights_remember_the_call(rng):
    """A server's ever new sizes: each call's first sight of its sizes runs on the thread's
    resizer of any size, making no resizer and remembering no call; the second sight makes
    the sizes' resizers and remembers the call, the third replays it. Every call's values
    equal a fresh processor's on those images, for one image and lists of sizes, through
    both filters of the resize (bicubic, and Gemma 3's bilinear) and a family resizing each
    image more than one way (InternVL's tiles and thumbnail)."""
    import torch
    from texturevlm.processors import _resize

    makers = {
        "clip": CLIPImageProcessor,
        "gemma3": lambda: Gemma3ImageProcessor(size={"height": 112, "width": 112}, resample=2),
        "internvl": lambda: GotOcr2ImageProcessor(size={"height": 112, "width": 112}, crop_to_patches=True),
    }
    sizes = [(300, 400), (517, 333), (224, 224), (120, 700)]
    for name, make in makers.items():
        _resize.clear_cache()
        processor = make()
        for images in ([cuda(smooth_image(rng, h, w))] for h, w in sizes):
            made, calls = len(_resize._resizers), len(_resize._calls)
            want = None
            for sight in range(3):
                got = processor(images)["pixel_values"]
                if sight == 0:
                    assert (len(_resize._resizers), len(_resize._calls)) == (made, calls), (name, "first sight")
                    want = got.clone()
                    # The same first sight twice again (its sizes forgotten, each output likely
                    # in the block the last one's was): launched directly, as the first was;
                    # no replay graph is made for arguments that do not recur.
                    del got
                    for _ in range(2):
                        _resize._shape_of_call.clear()
                        assert torch.equal(processor(images)["pixel_values"], want), (name, "first sight again")
                    assert not any(r.replay_graphs for r in _resize._any_size.values()), (name, "any-size replay")
                else:
                    assert len(_resize._resizers) > made and len(_resize._calls) > calls, (name, sight)
                    assert torch.equal(got, want), (name, images[0].shape, sight)
        many = [cuda(smooth_image(rng, h + 8, w)) for h, w in sizes]
        for sight in range(3):
            assert torch.equal(processor(many)["pixel_values"], make()(many)["pixel_values"]), (name, sight)


def test_lists_in_new_orders_compose_their_images_kept_launches(rng):
    """A list of images of several sizes in an order not seen before runs each image's
    launches kept from earlier calls (nothing planned) and is remembered as it was composed;
    the order's second call runs the remembered call with its runs keyed for replay, its
    third replays them. Every call's outputs equal a fresh processor's on that list, keys,
    shapes, grids and values, through both filters."""
    import itertools

    import torch
    from texturevlm.processors import _composed, _resize

    sizes = [(300, 400), (517, 333), (224, 224), (120, 700)]
    images = [cuda(smooth_image(rng, h, w)) for h, w in sizes]
    makers = {
        "clip": CLIPImageProcessor,
        "siglip": SiglipImageProcessor,
        "gemma3": lambda **kw: Gemma3ImageProcessor(size={"height": 112, "width": 112}, resample=2, **kw),
        "qwen2_vl": Qwen2VLImageProcessor,
        # Several runs an image: its tiles, then its thumbnail (InternVL) or whole image first
        # (LLaVA, each image's rows zero-padded to the most and image_sizes).
        "internvl": lambda **kw: GotOcr2ImageProcessor(
            size={"height": 112, "width": 112}, crop_to_patches=True, max_patches=6, **kw
        ),
        "llava_onevision": LlavaOnevisionImageProcessor,
        "llava_next": LlavaNextImageProcessor,
        "llava_unpadded": lambda **kw: LlavaOnevisionImageProcessor(do_pad=False, **kw),  # a list of each image's rows
    }
    orders = list(itertools.permutations(range(len(images))))[:6]
    for (name, make), filter in itertools.product(makers.items(), ("exact", "texture")):
        _resize.clear_cache()
        _composed.clear()
        processor = make(filter=filter)
        for _ in range(2):  # the sizes' first sights, then their resizers: launches kept
            processor(images)
        assert len(_composed._image_launches) == len(images), (name, filter)
        for order in orders[1:]:
            listed = [images[i] for i in order]
            want = make(filter=filter)(listed)
            for sight in range(3):
                calls = dict(_resize._calls)
                got = processor(listed)
                new = [entry[1] for key, entry in _resize._calls.items() if key not in calls]
                assert len(new) == (sight == 0), (name, filter, order, sight)
                assert all(isinstance(call, _composed.ComposedCall) for call in new), (name, filter, order)
                assert list(got.keys()) == list(want.keys()), (name, filter)
                for key in want:
                    pairs = zip(got[key], want[key]) if isinstance(want[key], list) else [(got[key], want[key])]
                    assert len(got[key]) == len(want[key]), (name, key)
                    for a, b in pairs:
                        assert a.shape == b.shape and a.dtype == b.dtype, (name, key)
                        assert torch.equal(a, b), (name, filter, order, sight, key)
        # An image layout no call planned alone: the list is planned, not composed.
        strided = [images[0], images[1][:, :, :300]]
        calls = dict(_resize._calls)
        got = processor(strided)
        want = make(filter=filter)(strided)
        for key in want:
            pairs = zip(got[key], want[key]) if isinstance(want[key], list) else [(got[key], want[key])]
            assert all(torch.equal(a, b) for a, b in pairs), (name, filter, key)
        new = [entry[1] for key, entry in _resize._calls.items() if key not in calls]
        assert not any(isinstance(call, _composed.ComposedCall) for call in new), (name, filter)


def test_remembered_calls_read_each_calls_own_images(rng):
    # A processor remembers a call's work by its images' layout; the next call of that layout
    # only allocates and launches. Each kind of input, called twice with new images, must give
    # what a processor that never saw the layout gives, and the processor keeps no image alive.
    import gc
    import weakref

    import torch

    def rgba(h, w):
        alpha = rng.integers(0, 256, (1, h, w), dtype=np.uint8)
        return cuda(np.concatenate([smooth_image(rng, h, w), alpha]))

    kinds = {
        "one image": lambda: cuda(smooth_image(rng, 300, 400)),
        "list of 3": lambda: [cuda(smooth_image(rng, 300, 400)) for _ in range(3)],
        # Several cameras' frames: a list of sizes (and strides) remembered as one layout.
        "list of 3 sizes": lambda: [cuda(smooth_image(rng, h, w)) for h, w in ((300, 400), (200, 260), (300, 400))],
        "sizes and strides": lambda: [
            cuda(smooth_image(rng, 300, 400)),
            cuda(np.ascontiguousarray(smooth_image(rng, 260, 200).transpose(1, 2, 0))),
            cuda(smooth_image(rng, 150, 300)[:1]),
        ],
        "batch": lambda: torch.stack([cuda(smooth_image(rng, 300, 400)) for _ in range(2)]),
        "channels last": lambda: [cuda(np.ascontiguousarray(smooth_image(rng, 300, 400).transpose(1, 2, 0)))],
        "gray": lambda: [cuda(smooth_image(rng, 300, 400)[:1])],
        "rgba (composited copy)": lambda: [rgba(300, 400)],
        "float32": lambda: [cuda(smooth_image(rng, 300, 400)).float()],
    }
    families = {
        "clip": OURS["clip"],
        "qwen2_vl": OURS["qwen2_vl"],
        # Several outputs per image (tiles, thumbnails, the whole): the remembered call picks
        # each image's pointer once per output.
        "internvl": lambda: GotOcr2ImageProcessor(size={"height": 112, "width": 112}, crop_to_patches=True),
        "llava_onevision": lambda: LlavaOnevisionImageProcessor(
            size={"height": 96, "width": 96}, image_grid_pinpoints=[[96, 192], [192, 96], [192, 192], [288, 96]]
        ),
        "llava_next": LlavaNextImageProcessor,
        # Resized twice before its frames (its stages' launches are repeated on each call's images).
        "idefics3": lambda: Idefics3ImageProcessor(size={"longest_edge": 120}, max_image_size={"longest_edge": 40}),
    }
    for name, make_processor in families.items():
        processor = make_processor()
        for kind, make in kinds.items():
            processor(make())  # a first sight of the sizes: not remembered
            processor(make())  # remembered
            images = make()
            got = processor(images)
            want = make_processor()(images)
            assert set(got) == set(want)
            for key in want:
                assert torch.equal(got[key], want[key]), (name, kind, key)
            if "image_grid_thw" in got:  # a fresh table each call, not a shared one
                got["image_grid_thw"][0, 0] = 99
                assert processor(images)["image_grid_thw"][0, 0] == 1
            probe = weakref.ref(images[0] if isinstance(images, list) else images)
            del images, got, want
            gc.collect()
            assert probe() is None, (name, kind)
    # A new layout (other size) after remembered ones takes the full path; so do a remembered
    # list's sizes in another order.
    processor = OURS["clip"]()
    processor(cuda(smooth_image(rng, 300, 400)))
    other = cuda(smooth_image(rng, 500, 300))
    assert torch.equal(processor(other).pixel_values, OURS["clip"]()(other).pixel_values)
    sizes = [cuda(smooth_image(rng, h, w)) for h, w in ((300, 400), (500, 300), (224, 224))]
    for order in (sizes, sizes, sizes[::-1], sizes[1:] + sizes[:1]):
        assert torch.equal(processor(order).pixel_values, OURS["clip"]()(order).pixel_values)


@needs_hf
def test_windows_cycled_past_the_kept_span_tables_each_give_hfs_values():
    """A resizer keeps the span tables of its last four windows. Calls on one image size
    cycling over five windows, then back, reuse tables, recompute them into another
    window's buffer and grow it: each call must give HF's values for its own window, and a
    window called again must give its first call's bits."""
    import torch

    image = cuda(photo("f3.jpg"))
    first = {}
    for size in [224, 336, 160, 448, 96, 224, 448, 128, 336, 224, 224]:
        config = {"size": {"shortest_edge": size}, "crop_size": {"height": size, "width": size}}
        got = CLIPImageProcessor(**config)([image])["pixel_values"]
        want = transformers.CLIPImageProcessor(**config)(images=[image], return_tensors="pt")["pixel_values"]
        d = (got - want).abs()
        assert d.max().item() <= STEP and (d > 1e-4).float().mean().item() <= 1e-3, (size, d.max().item())
        if size in first:
            assert torch.equal(got, first[size]), size
        first.setdefault(size, got)


@pytest.mark.parametrize("filter", ["exact", "texture"])
def test_calls_on_two_streams_do_not_share_the_scratch_unordered(filter):
    """A processor's resizer keeps one scratch (exact) or texture (fast) per image shape: a
    call on another stream than the last one's must wait for that stream's work, or its
    row pass overwrites the other call's rows before that call's column pass read them."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(1)
    batches = [
        torch.randint(0, 256, (8, 3, 2048, 2048), dtype=torch.uint8, device="cuda", generator=g) for _ in range(2)
    ]
    processor = CLIPImageProcessor(filter=filter)
    want = [CLIPImageProcessor(filter=filter)(b).pixel_values for b in batches]
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    torch.cuda.synchronize()
    got = []
    for round in range(6):
        for batch, stream in zip(batches, streams):
            with torch.cuda.stream(stream):
                got.append(processor(batch).pixel_values)
    torch.cuda.synchronize()
    for i, values in enumerate(got):
        assert torch.equal(values, want[i % 2]), f"call {i} on stream {i % 2}"
    if filter == "exact":
        # First sights (a new processor each call: new plans) share the thread's resizer of
        # any size across the streams: each call orders itself after the other stream's.
        got = []
        for round in range(4):
            for batch, stream in zip(batches, streams):
                with torch.cuda.stream(stream):
                    got.append(CLIPImageProcessor(filter=filter)(batch).pixel_values)
        torch.cuda.synchronize()
        for i, values in enumerate(got):
            assert torch.equal(values, want[i % 2]), f"first sight {i} on stream {i % 2}"


def test_a_calls_runs_on_stream_branches_equal_them_run_in_turn(monkeypatch):
    """A remembered call's runs on different resizers (an image's tiles and its thumbnail or
    whole; the sizes of a list, where one is remembered) run at once on branches of the
    stream. Their values must be the runs' in turn, bit for bit, in order behind the
    stream's earlier work (the images are written after a GPU sleep) and ahead of its later
    work (the output is copied right after), on every call of the layout (the first, in
    turn; the captured and the replayed ones, branched)."""
    import torch
    from texturevlm.processors import _resize

    g = torch.Generator(device="cuda").manual_seed(2)
    square = torch.randint(0, 256, (3, 1024, 1024), dtype=torch.uint8, device="cuda", generator=g)
    jobs = {
        "internvl": (lambda: GotOcr2ImageProcessor(size={"height": 448, "width": 448}, crop_to_patches=True), [square]),
        "llava_onevision": (LlavaOnevisionImageProcessor, [square]),
        "internvl, two images": (
            lambda: GotOcr2ImageProcessor(size={"height": 224, "width": 224}, crop_to_patches=True),
            [square, square.flip(2)],
        ),
    }
    made = []  # the CudaCalls the branched processors make
    build = _resize.CudaCall.__init__

    def recorded(self, *args):
        build(self, *args)
        made.append(self)

    for name, (make, images) in jobs.items():
        monkeypatch.setattr(_resize, "BRANCHES", False)
        monkeypatch.setattr(_resize.CudaCall, "__init__", build)
        _resize.clear_cache()
        want = make()(images)["pixel_values"]
        monkeypatch.setattr(_resize, "BRANCHES", True)
        monkeypatch.setattr(_resize.CudaCall, "__init__", recorded)
        _resize.clear_cache()
        made.clear()
        processor = make()
        sources = [torch.zeros_like(image) for image in images]
        for call in range(4):
            for source in sources:
                source.zero_()
            torch.cuda._sleep(20_000_000)  # the images are written only after it
            for source, image in zip(sources, images):
                source.copy_(image)
            got = processor(sources)["pixel_values"].clone()  # copied right after the call
            assert torch.equal(got, want), (name, call)
        assert max((c.branches.branches for c in made if c.branches is not None), default=0) >= 2, name
        made.clear()


@needs_hf
def test_a_tile_of_48_kb_launches_in_a_fresh_process():
    """The tiled kernel's tiles take up to 96 KB of shared memory, which above 48 KB (its
    dynamic and static shared memory together) a launch must opt into. Qwen2-VL's 1921x1755
    image (resized to 1036x952, merged patches: a tile reads 64 source rows, exactly 48 KB,
    plus the kernel's own few bytes) was refused in a process where no larger tile had run
    first, so it runs in a fresh process here, against HF's values."""
    import subprocess
    import sys

    code = """
import torch, transformers
from texturevlm.processors import Qwen2VLImageProcessor
g = torch.Generator(device="cuda").manual_seed(0)
field = torch.rand((1, 3, 24, 24), device="cuda", generator=g) * 255  # photo-like: smooth
x = torch.nn.functional.interpolate(field, size=(1921, 1755), mode="bicubic").clamp(0, 255).round().byte()[0]
ours = Qwen2VLImageProcessor()([x])["pixel_values"]
hf = transformers.Qwen2VLImageProcessor()(images=[x], return_tensors="pt")["pixel_values"].to(ours.device)
assert ours.shape == hf.shape, (ours.shape, hf.shape)
d = (ours - hf).abs()
print(d.max().item(), (d > 1e-4).float().mean().item())
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    largest, share = map(float, run.stdout.split()[-2:])
    assert largest <= STEP and share <= 1e-3, (largest, share)


def test_stream_branches_launch_nothing_where_a_run_refuses():
    """ResizerBranches checks every run before it launches any: a run that refuses (its
    target counts more images than it is given) leaves the other runs' output unwritten."""
    import torch
    from texturevlm import _core

    images = [torch.randint(0, 256, (3, h, w), dtype=torch.uint8, device="cuda") for h, w in [(100, 200), (150, 300)]]
    runs = []
    for k, image in enumerate(images):
        resizer = _core.CudaImageResizer(
            torch.cuda.current_device(), "bicubic", "uint8", 3, *image.shape[:0:-1], 2, 0, 1
        )
        t = _core.ResizeTarget()
        t.images, t.resized_width, t.resized_height, t.width, t.height = 1 + k, 64, 32, 64, 32
        t.image_stride = 3 * 64 * 32
        runs.append((resizer, k, k + 1, "uint8", [0, *image.stride()], *image.shape[:0:-1], t, k * 4 * t.image_stride))
    out = torch.full((2 * 3 * 64 * 32,), float("nan"), device="cuda")
    branches = _core.ResizerBranches(runs)
    assert branches.branches == 2
    pointers = [image.data_ptr() for image in images]
    stream = torch.cuda.current_stream().cuda_stream
    with pytest.raises(Exception, match="a resizer run of 1 images for a target of 2"):
        branches.run(pointers, out.data_ptr(), stream)
    torch.cuda.synchronize()
    assert out.isnan().all(), "a run launched before the refusal"
    runs[1][7].images = 1
    _core.ResizerBranches(runs).run(pointers, out.data_ptr(), stream)
    torch.cuda.synchronize()
    assert not out.isnan().any()


# (source width, height, resized width, height, window x, y, width, height, layout): shrinks
# across of 8x to 19x (the fused kernel's, staged in one buffer or two, as its tiling
# picks; where its tiles are too few to fill the GPU, as for the 9000x40 and 901x77 sources,
# its row filter alone and then the column pass), milder shrinks and a stretch (uint8: the tiled kernel where the columns shrink by
# up to 2x or stretch, or the filter is bilinear, else the two passes; uint8 rows are read
# as words where columns read 6 to 32 taps, rows starting at every byte of a word where the
# width is odd, and bytes below that; float16: the two passes, a value per tap), a shrink
# whose span no tile holds (uint8 takes the two passes too), partial tiles at every edge,
# windows past every side (AnyRes's padding), all three layouts, a tall thin window, and
# resizes to the image's own size (uint8: a copy).
FUSED_CASES = [
    (1024, 1024, 980, 980, 0, 0, 980, 980, "merged_patches"),
    (4096, 300, 980, 100, 0, 0, 980, 84, "merged_patches"),
    (1024, 768, 224, 168, 0, 0, 224, 168, "planar"),
    (1001, 703, 220, 154, 0, 0, 220, 154, "planar"),
    (2001, 300, 270, 40, 0, 0, 270, 40, "planar"),
    (9000, 40, 16, 20, 0, 0, 16, 20, "planar"),
    (2048, 768, 224, 224, 0, 0, 224, 224, "planar"),
    (4096, 2900, 224, 150, 0, 0, 224, 150, "planar"),
    (333, 517, 500, 200, 0, 0, 500, 200, "planar"),
    (1999, 517, 200, 200, 0, 0, 200, 200, "planar"),
    (5600, 1500, 640, 448, -30, -20, 700, 512, "tiles"),
    (4800, 480, 588, 420, 0, 0, 588, 420, "merged_patches"),
    (200, 3000, 20, 800, 3, 10, 17, 790, "planar"),
    (901, 77, 96, 40, 40, -9, 64, 60, "planar"),
    (300, 200, 300, 200, -5, 7, 310, 190, "planar"),  # its own size: the copy
    (588, 420, 588, 420, 0, 0, 588, 420, "merged_patches"),
    # Under 8x, the two passes (8-bit rows read as words from 6 taps a column): windows with
    # zero padding on either side, bilinear's 3 taps and bicubic's 5 to 14, odd row lengths.
    (1003, 411, 400, 170, -7, 5, 416, 160, "planar"),
    (3000, 64, 1000, 40, -3, 0, 1010, 40, "planar"),
    (151, 90, 400, 240, -10, 0, 420, 240, "planar"),
    (777, 500, 300, 200, 20, -6, 280, 210, "planar"),
]


def raw_resize(batch, filter, resized, window, **target):
    """The raw sums (no rounding or normalization) of `batch`'s images ([n, 3, h, w] CUDA,
    any strides) resized to `resized` (width, height), window (x, y, width, height), through
    a new CudaImageResizer into a NaN-poisoned float32 output, as one flat tensor; `target`
    sets the ResizeTarget's other fields (image_stride: one image's values)."""
    import torch
    from texturevlm import _core

    n, _, sh, sw = batch.shape
    name = str(batch.dtype).removeprefix("torch.")
    resizer = _core.CudaImageResizer(torch.cuda.current_device(), filter, name, 3, sw, sh, n, 0, 1)
    t = _core.ResizeTarget()
    t.images = n
    t.resized_width, t.resized_height = resized
    t.crop_x, t.crop_y, t.width, t.height = window
    for field, value in target.items():
        setattr(t, field, value)
    out = torch.full((n * t.image_stride,), float("nan"), device="cuda")
    pointers = [batch[i].data_ptr() for i in range(n)]
    stream = torch.cuda.current_stream().cuda_stream
    resizer.run(pointers, name, list(batch.stride()), sw, sh, t, out.data_ptr(), stream)
    return out


@pytest.mark.parametrize("filter", ["bicubic", "bilinear"])
@pytest.mark.parametrize("case", FUSED_CASES, ids=lambda c: f"{c[0]}x{c[1]}-{c[2]}x{c[3]}-{c[8]}")
def test_the_fused_byte_kernel_equals_the_two_pass_kernels(rng, filter, case):
    """uint8 images take the fused kernel (or the copy, the tiled kernel, or the two passes
    below 8x or where no tile fits), float16 ones the two passes: the same pixel values must give the same raw sums
    bit for bit (no rounding or normalization to hide a wrong tap), on a poisoned output.
    Channels-first images are read word by word (rows starting anywhere in a word when the
    width is odd); channels-last ones, and images that do not start on a word (a view one
    column in), byte by byte."""
    import torch

    sw, sh, rw, rh, x, y, w, h, layout = case
    pixels = torch.from_numpy(rng.integers(0, 256, (2, sh, sw + 1, 3), dtype=np.uint8)).cuda()
    times = 2 if layout == "merged_patches" else 1
    tile = (140, 128) if layout == "tiles" else (0, 0)
    for storage in ("channels_first", "channels_last", "one_column_in"):
        outs = []
        for dtype in (torch.uint8, torch.float16):
            batch = pixels.to(dtype)
            if storage == "channels_last":
                batch = batch[:, :, :sw].permute(0, 3, 1, 2)
            elif storage == "one_column_in":
                batch = batch.permute(0, 3, 1, 2).contiguous()[..., 1:]
            else:
                batch = batch[:, :, :sw].permute(0, 3, 1, 2).contiguous()
            merged = dict(patch_size=14, merge_size=2, temporal_patch_size=2, times=times)
            out = raw_resize(
                batch, filter, (rw, rh), (x, y, w, h), layout=layout, tile_width=tile[0], tile_height=tile[1],
                image_stride=3 * w * h * times, **merged,
            )  # fmt: skip
            outs.append(out)
        torch.cuda.synchronize()
        assert not outs[0].isnan().any(), "an output value was not written"
        assert torch.equal(outs[0], outs[1]), (storage, (outs[0] - outs[1]).abs().max().item())


# (images, source width, height, resized width, height, window x, y, width, height, layout):
# large batches, as served: a bicubic shrink of three images, a 2x shrink, a stretch down the
# columns, and tiles whose window reaches past the resized image on every side (rows and
# columns of zero padding at both ends).
LARGE_CASES = [
    (3, 1500, 1200, 600, 480, 0, 0, 600, 480, "planar"),
    (2, 2400, 1800, 1200, 900, 0, 0, 1200, 900, "planar"),
    (2, 1800, 1000, 1700, 2000, 0, 0, 1700, 2000, "planar"),
    (2, 3001, 2203, 1400, 1000, -30, -20, 1456, 1092, "tiles"),
    # Shrinks of 9x and 11x across (37 and 44 taps) in batches: the word-reading row pass
    # with 10 and 11 groups of taps, which bicubic batches take instead of the fused kernel.
    (4, 4096, 4096, 448, 448, 0, 0, 448, 448, "planar"),
    (4, 4096, 3000, 384, 281, 0, 0, 384, 281, "planar"),
    # One image shrunk 18x (CLIP's 4096² to 224²): too few of the fused kernel's tiles to
    # fill the GPU, so its row filter alone writes rows and the column pass reads them.
    (1, 4096, 4096, 224, 224, 0, 0, 224, 224, "planar"),
    # 33 such images: the whole list takes the fused kernel (no rows between passes), run as
    # 32 and then 1, which alone would prefer the row filter; with no rows for it, the fused
    # kernel writes that image too.
    (33, 1800, 448, 100, 224, 0, 0, 100, 224, "planar"),
    # Shrinks of 2x to 7x (the row pass reading words, 9 to 28 taps a column): rows of
    # 4096, 2400, 2052 and 1000 bytes, heights that are not a multiple of the row pass's
    # rows per thread, and zero padding on every side of the window.
    (2, 4096, 1000, 980, 240, 0, 0, 980, 240, "planar"),
    (3, 2052, 777, 600, 300, -5, 3, 620, 290, "planar"),
    (2, 2400, 601, 343, 150, 7, -4, 330, 160, "planar"),
    (1, 1000, 520, 480, 250, -2, 0, 490, 251, "planar"),
]


@pytest.mark.parametrize("filter", ["bicubic", "bilinear"])
@pytest.mark.parametrize("case", LARGE_CASES, ids=lambda c: f"{c[0]}x{c[1]}x{c[2]}-{c[3]}x{c[4]}-{c[9]}")
def test_the_two_passes_equal_torchs_resize_on_large_batches(rng, filter, case):
    """The raw sums (no rounding or normalization) of uint8 images through the two passes
    equal torch's own antialiased resize of the same values on CUDA, bit for bit, with the
    window's zero padding, on a poisoned output."""
    import torch

    n, sw, sh, rw, rh, x, y, w, h, layout = case
    batch = torch.from_numpy(rng.integers(0, 256, (n, 3, sh, sw), dtype=np.uint8)).cuda()
    tile = (364, 364) if layout == "tiles" else (0, 0)
    out = raw_resize(
        batch, filter, (rw, rh), (x, y, w, h), layout=layout, tile_width=tile[0], tile_height=tile[1],
        image_stride=3 * w * h,
    )  # fmt: skip
    got = out.view(n, 3, h, w)
    if layout == "tiles":
        tiles = out.view(n, h // 364, w // 364, 3, 364, 364)
        got = tiles.permute(0, 3, 1, 4, 2, 5).reshape(n, 3, h, w)
    resized = torch.nn.functional.interpolate(
        batch.float(), size=(rh, rw), mode=filter, antialias=True, align_corners=False
    )
    want = torch.zeros(n, 3, h, w, device="cuda")
    want[:, :, max(0, -y) : min(h, rh - y), max(0, -x) : min(w, rw - x)] = resized[
        :, :, max(0, y) : min(rh, y + h), max(0, x) : min(rw, x + w)
    ]
    assert not got.isnan().any(), "an output value was not written"
    assert torch.equal(got, want), (got - want).abs().max().item()


# (images, source width, height, resized width, height, patch size): merged patches (merge
# size 2, two time copies), which the tiled kernel writes in tiles of whole patches from mild
# resizes and bicubic shrinks by up to 4x: Qwen2-VL's 1024² stretched to 1036², a shrink of
# 1.5x by 1.1x, a 1.85x shrink whose last tile column holds fewer patches than the others,
# 16-pixel patches stretched, a stretch whose float spans are 5 taps on both axes where the
# kernel's loops take 4 (the table's loops for those columns and rows: merged_tiles.cu),
# 15-pixel patches (odd: a pixel a thread, where even patches take two), and 72-pixel
# patches stretched: wider than a tile's 64 columns, they take the two passes (their tile
# rows would fit in shared memory, but no whole patch fits a tile). Shrinks: 2.1x and 2.2x
# (10 taps, tiles two patches tall), 3.1x (14 taps, a patch tall), 3.6x (16), odd 15-pixel
# and 16-pixel patches at 2.5x to 3x (12), and Qwen2-VL's 4096² shrink by 4.2x (18 taps: the
# two passes); bilinear shrinks take the two passes. Mild down the columns, shrunk 3x across:
# 14 taps in tiles two patches tall, and with 40-pixel patches, whose tiles are taller than
# the 14-tap loops hold weights for, the table's loops.
MERGED_CASES = [
    (3, 1024, 1024, 1036, 1036, 14),
    (2, 1500, 900, 1008, 812, 14),
    (1, 3000, 2000, 1624, 1092, 14),
    (2, 700, 500, 896, 640, 16),
    (2, 588, 508, 700, 644, 14),
    (2, 700, 500, 900, 630, 15),
    (1, 300, 200, 576, 432, 72),
    (1, 2048, 2048, 980, 980, 14),
    (2, 1900, 1500, 868, 672, 14),
    (1, 3000, 3000, 980, 980, 14),
    (1, 3500, 2600, 980, 728, 14),
    (1, 1800, 1200, 600, 420, 15),
    (2, 2400, 1600, 896, 640, 16),
    (1, 4096, 4096, 980, 980, 14),
    (1, 3000, 900, 980, 840, 14),
    (1, 2000, 400, 800, 400, 40),
]


@pytest.mark.parametrize("filter", ["bicubic", "bilinear"])
@pytest.mark.parametrize("case", MERGED_CASES, ids=lambda c: f"{c[0]}x{c[1]}x{c[2]}-{c[3]}x{c[4]}-p{c[5]}")
def test_merged_patches_equal_torchs_resize_in_hfs_patch_order(rng, filter, case):
    """The raw sums of uint8 images into merged patches equal torch's antialiased resize on
    CUDA, bit for bit, in HF's order (Qwen2-VL's reshape and permute: merge groups, the
    patches within, channel, time, patch rows), both time copies, on a poisoned output."""
    import torch

    n, sw, sh, rw, rh, p = case
    batch = torch.from_numpy(rng.integers(0, 256, (n, 3, sh, sw), dtype=np.uint8)).cuda()
    merged = dict(layout="merged_patches", patch_size=p, merge_size=2, temporal_patch_size=2, times=2)
    out = raw_resize(batch, filter, (rw, rh), (0, 0, rw, rh), image_stride=3 * 2 * rw * rh, **merged)
    resized = torch.nn.functional.interpolate(
        batch.float(), size=(rh, rw), mode=filter, antialias=True, align_corners=False
    )
    gy, gx = rh // (2 * p), rw // (2 * p)
    want = resized.view(n, 3, gy, 2, p, gx, 2, p).permute(0, 2, 5, 3, 6, 1, 4, 7)  # groups, patches, C, rows, columns
    want = want.unsqueeze(6).expand(n, gy, gx, 2, 2, 3, 2, p, p)  # the two time copies after the channel
    got = out.view(n, gy, gx, 2, 2, 3, 2, p, p)
    assert not got.isnan().any(), "an output value was not written"
    assert torch.equal(got, want), (got - want).abs().max().item()
