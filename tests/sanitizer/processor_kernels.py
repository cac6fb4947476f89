"""The processors' CUDA kernels under compute-sanitizer (tests/run_gpu_suites.sh runs this
under each tool, with PyTorch's caching allocator off so an out-of-bounds access lands
outside any allocation): the fused 8-bit kernel (shrinks of 8x and more across: CLIP from
large photos, channels-first and channels-last, LLaVA's small AnyRes tiles with windows
past every side, Gemma 3's bilinear; its row filter alone for one large image), the tiled kernel (uint8 mild resizes, merged patches (two pixels a thread, one for odd patch sizes)
among them and shrunk up to 4x, and bilinear shrinks, words and bytes), the two-pass kernels (bicubic shrinks
under 8x, batches shrunk up to 12x read as words, merged patches shrunk more than 4x,
float16 inputs with rows staged or not), the copy
(a resize to the image's own size, four pixels a thread where rows allow), uint8 outputs
(Idefics3's intermediate images), the texture filter and lists composed of kept launches,
each call twice (the second remembered, on stream branches). Sizes are small: the tools run the kernels tens of times
slower."""

import torch
from texturevlm.processors import (
    CLIPImageProcessor,
    Gemma3ImageProcessor,
    GotOcr2ImageProcessor,
    Idefics3ImageProcessor,
    LlavaNextImageProcessor,
    LlavaOnevisionImageProcessor,
    Qwen2VLImageProcessor,
)

g = torch.Generator(device="cuda").manual_seed(0)


def image(h: int, w: int, dtype: torch.dtype = torch.uint8, channels_last: bool = False) -> torch.Tensor:
    x = torch.randint(0, 256, (h, w, 3) if channels_last else (3, h, w), device="cuda", generator=g)
    x = x.to(dtype)
    return x.permute(2, 0, 1) if channels_last else x


def check(processor, images) -> None:
    # Twice: the second call is the remembered one (lists of several sizes too), whose
    # resizes of different sizes or windows run at once on stream branches.
    for _ in range(2):
        out = processor(images)
        torch.cuda.synchronize()
        values = out["pixel_values"]
        assert torch.isfinite(values).all(), type(processor).__name__


def main() -> None:
    """Every processor kernel once; nothing is kept in globals, so all is freed before exit."""
    small = dict(size={"height": 32, "width": 32}, image_grid_pinpoints=[[32, 64], [64, 32], [64, 64], [96, 32]])
    for filter in ("exact", "texture"):
        for proc in (LlavaOnevisionImageProcessor(filter=filter, **small), LlavaNextImageProcessor(filter=filter)):
            for h, w in ((5, 3), (40, 90), (90, 40), (700, 33), (1000, 999)):
                x = image(h, w)
                check(proc, [x, x[:, : h // 2 + 1]])
        check(CLIPImageProcessor(filter=filter), [image(1024, 1024), image(2000, 700, channels_last=True)])
        check(CLIPImageProcessor(filter=filter), [image(100, 150)])  # a stretch
        # Rows read as words up to the image's last bytes: odd widths, rows starting anywhere in a word.
        check(CLIPImageProcessor(filter=filter), [image(700, 1001), image(333, 1003)])
        check(Qwen2VLImageProcessor(filter=filter), [image(513, 777)])
        check(Qwen2VLImageProcessor(filter=filter), [image(1024, 1024), image(300, 500)])
        check(Qwen2VLImageProcessor(filter=filter, patch_size=15), [image(500, 700)])  # odd patches: a pixel a thread
        # Merged patches shrunk 2.1x and 3x: the tiled kernel's tiles two patches tall and one
        # (channels last: the table's loops); 4.6x: the two passes.
        check(Qwen2VLImageProcessor(filter=filter, max_pixels=420 * 420), [image(900, 840)])
        check(
            Qwen2VLImageProcessor(filter=filter, max_pixels=280 * 280),
            [image(900, 840), image(900, 840, channels_last=True)],
        )
        check(Qwen2VLImageProcessor(filter=filter, max_pixels=280 * 280), [image(1300, 1250)])
        check(CLIPImageProcessor(filter=filter), [image(3000, 2000, channels_last=True), image(2500, 2300)])
        check(Gemma3ImageProcessor(filter=filter), [image(1000, 600), image(1000, 7200)])
        check(GotOcr2ImageProcessor(filter=filter, crop_to_patches=True), [image(900, 1400)])
        # Idefics3: resizes into uint8 intermediates, then the copy of a resize to its own size into tiles.
        check(
            Idefics3ImageProcessor(filter=filter),
            [image(700, 1000), image(300, 500), image(300, 500, channels_last=True)],
        )
        # A batch shrunk 9x across (38 taps): the word row pass with 10 groups, which batches
        # take over the fused kernel; odd widths, so rows start anywhere in a word.
        check(CLIPImageProcessor(filter=filter), [image(2048, 2047) for _ in range(8)])
        # One image shrunk 13x to 18x: too few of the fused kernel's tiles to fill the GPU, so its
        # row filter alone writes rows between the passes, and the column pass reads them in
        # batches; rows staged as words and byte by byte (channels last).
        check(CLIPImageProcessor(filter=filter), [image(4096, 4096)])
        check(CLIPImageProcessor(filter=filter), [image(4096, 3000, channels_last=True)])
        # Half-precision images take the two-pass kernels: rows staged (8x and more across) or not.
        check(CLIPImageProcessor(filter=filter), [image(2048, 2048, torch.float16), image(500, 400, torch.float16)])
        # Lists of sizes in new orders: composed of each image's kept launch (processors/_composed.py).
        for proc in (CLIPImageProcessor(filter=filter), Qwen2VLImageProcessor(filter=filter)):
            mixed = [image(300, 400), image(517, 333), image(1200, 900)]
            check(proc, mixed)
            for order in ((2, 0, 1), (1, 2, 0)):
                check(proc, [mixed[i] for i in order])
    print("processor kernels: done")


if __name__ == "__main__":
    main()
