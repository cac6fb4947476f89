"""Hugging Face's image processor rules reimplemented in NumPy, written the way
transformers 5 and PyTorch write them (not the way texturevlm does), for the tests: the
size rules (smart_resize as a table of HF's outputs), torch's antialiased bicubic resize
of a uint8 image on the CPU (aten's int16 weights and integer passes, what HF computes for
host images) and in float64 for float images (a weight vector per output pixel, as aten's
_compute_weights does), the fused rescale + normalize, the center crop, and the image and
video patchify with their permute orders."""

from __future__ import annotations

import math

import numpy as np

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


# transformers 5.23's Qwen2-VL smart_resize(height, width, 28, min_pixels, max_pixels), run on
# every (height, width, min_pixels, max_pixels) the tests use: HF's outputs, not a copy of its
# code (texturevlm's copy is what these check).
HF_SMART_RESIZE = {
    (1, 1, 3136, 1003520): (56, 56),
    (1, 1, 3136, 12845056): (56, 56),
    (1, 1, 100352, 602112): (336, 336),
    (1, 150, 3136, 1003520): (28, 700),
    (1, 150, 3136, 12845056): (28, 700),
    (1, 150, 100352, 602112): (28, 3892),
    (3, 5, 3136, 1003520): (56, 84),
    (3, 5, 3136, 12845056): (56, 84),
    (3, 5, 100352, 602112): (252, 420),
    (17, 640, 3136, 1003520): (28, 644),
    (17, 640, 3136, 12845056): (28, 644),
    (17, 640, 100352, 602112): (56, 1960),
    (20, 3999, 3136, 1003520): (28, 4004),
    (20, 3999, 3136, 12845056): (28, 4004),
    (20, 3999, 100352, 602112): (28, 4004),
    (28, 28, 3136, 1003520): (56, 56),
    (28, 28, 3136, 12845056): (56, 56),
    (28, 28, 100352, 602112): (336, 336),
    (56, 56, 3136, 1003520): (56, 56),
    (56, 84, 3136, 1003520): (56, 84),
    (56, 84, 3136, 12845056): (56, 84),
    (56, 84, 100352, 602112): (280, 392),
    (100, 37, 3136, 1003520): (112, 28),
    (100, 37, 3136, 12845056): (112, 28),
    (100, 37, 100352, 602112): (532, 196),
    (112, 168, 100352, 602112): (280, 392),
    (196, 84, 3136, 1003520): (196, 84),
    (224, 112, 3136, 1003520): (224, 112),
    (224, 224, 3136, 1003520): (224, 224),
    (224, 224, 3136, 12845056): (224, 224),
    (224, 224, 100352, 602112): (336, 336),
    (300, 200, 3136, 50176): (252, 168),
    (300, 200, 3136, 1003520): (308, 196),
    (300, 200, 3136, 12845056): (308, 196),
    (300, 200, 100352, 602112): (392, 280),
    (300, 1200, 3136, 1003520): (308, 1204),
    (477, 720, 3136, 1003520): (476, 728),
    (500, 700, 3136, 1003520): (504, 700),
    (1000, 999, 3136, 1003520): (980, 980),
    (1000, 999, 3136, 12845056): (1008, 1008),
    (1000, 999, 100352, 602112): (756, 756),
    (1024, 768, 3136, 1003520): (1036, 756),
    (1024, 1024, 3136, 1003520): (980, 980),
    (1024, 1024, 3136, 12845056): (1036, 1036),
    (1024, 1024, 100352, 602112): (756, 756),
    (1120, 1148, 3136, 1003520): (980, 1008),
    (1120, 1148, 3136, 12845056): (1120, 1148),
    (1120, 1148, 100352, 602112): (756, 784),
    (4096, 4096, 3136, 1003520): (980, 980),
    (4096, 4096, 3136, 12845056): (3584, 3584),
    (4096, 4096, 100352, 602112): (756, 756),
}


def smart_resize(height, width, factor=28, min_pixels=56 * 56, max_pixels=14 * 14 * 4 * 1280):
    assert factor == 28
    if max(height, width) / min(height, width) > 200:
        raise ValueError("absolute aspect ratio must be smaller than 200")
    key = (height, width, min_pixels, max_pixels)
    if key not in HF_SMART_RESIZE:
        raise KeyError(f"{key} is not in HF_SMART_RESIZE: add HF's smart_resize output for it")
    return HF_SMART_RESIZE[key]


def shortest_edge(height, width, size):
    short, long = (width, height) if width <= height else (height, width)
    new_short, new_long = size, int(size * long / short)
    return (new_long, new_short) if width <= height else (new_short, new_long)


def _cubic(x, a=-0.5):
    x = abs(x)
    if x < 1.0:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2.0:
        return (((x - 5) * x + 8) * x - 4) * a
    return 0.0


def _triangle(x):
    """aten's antialiased bilinear filter."""
    x = abs(x)
    return 1.0 - x if x < 1.0 else 0.0


#: Per filter: (half of aten's interp_size, the filter).
FILTERS = {"bicubic": (2.0, _cubic), "bilinear": (1.0, _triangle)}


def _weights(out_size, in_size, kind="bicubic"):
    """Per output index: (xmin, weights) as aten's _compute_weights_span/_compute_weights."""
    half, f = FILTERS[kind]
    scale = in_size / out_size
    support = half * scale if scale >= 1.0 else half
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    table = []
    for i in range(out_size):
        center = scale * (i + 0.5)
        xmin = max(int(center - support + 0.5), 0)
        xsize = min(int(center + support + 0.5), in_size) - xmin
        w = np.array([f((j + xmin - center + 0.5) * invscale) for j in range(xsize)])
        total = w.sum()
        table.append((xmin, w / total if total != 0 else w))
    return table


def resize_bicubic_aa(image, height, width, kind="bicubic"):
    """[C, H, W] float64 -> [C, height, width] (antialiased `kind`): horizontal pass, then vertical."""
    c, h, w = image.shape
    across = np.zeros((c, h, width))
    for x, (xmin, wt) in enumerate(_weights(width, w, kind)):
        across[:, :, x] = image[:, :, xmin : xmin + len(wt)] @ wt
    out = np.zeros((c, height, width))
    for y, (ymin, wt) in enumerate(_weights(height, h, kind)):
        out[:, y, :] = np.einsum("k,ckx->cx", wt, across[:, ymin : ymin + len(wt), :])
    return out


def _aa_filter(x, a=-0.5):
    """aten's bicubic aa_filter: cubic_convolution1 / 2 in their own expressions."""
    x = abs(x)
    if x < 1.0:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2.0:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return 0.0


def _lanczos(x):
    """aten's (and Pillow's) Lanczos with 3 lobes: sinc(x) sinc(x / 3) inside [-3, 3)."""

    def sinc(v):
        return 1.0 if v == 0.0 else math.sin(math.pi * v) / (math.pi * v)

    return sinc(x) * sinc(x / 3.0) if -3.0 <= x < 3.0 else 0.0


#: Per kind of byte resize: (half of aten's interp_size, its antialias filter).
INT16_FILTERS = {"bicubic": (2.0, _aa_filter), "bilinear": (1.0, _triangle), "lanczos": (3.0, _lanczos)}


def _int16_weights(out_size, in_size, kind="bicubic"):
    """aten's _compute_index_ranges_int16_weights with antialias: per output index (xmin,
    int16 weights), and the weights' precision in bits."""
    half, f = INT16_FILTERS[kind]
    scale = in_size / out_size
    support = half * scale if scale >= 1.0 else half
    max_interp_size = math.ceil(support) * 2 + 1
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    spans, wt_max = [], 0.0
    for i in range(out_size):
        center = scale * (i + 0.5)
        xmin = max(int(center - support + 0.5), 0)
        xsize = min(max(min(int(center + support + 0.5), in_size) - xmin, 0), max_interp_size)
        w = [f((j + xmin - center + 0.5) * invscale) for j in range(xsize)]
        total = 0.0
        for v in w:
            total += v
        if total != 0.0:
            w = [v / total for v in w]
            wt_max = max([wt_max] + w)
        spans.append((xmin, w))
    precision = 0
    while precision < 22 and int(0.5 + wt_max * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    scaled = [(xmin, [v * (1 << precision) for v in w]) for xmin, w in spans]
    return [
        (xmin, np.array([int(-0.5 + v) if v < 0 else int(0.5 + v) for v in w], np.int64)) for xmin, w in scaled
    ], precision


def resize_bytes(image, height, width, kind="bicubic"):
    """torch's CPU resize of a [C, H, W] uint8 image (antialiased `kind`): a horizontal pass,
    then a vertical one (each only where that side changes), each summing int16 weights times
    bytes in integers, + half, shifted down by the precision and clamped to a byte."""
    c, h, w = image.shape
    out = image.astype(np.int64)
    if width != w:
        table, precision = _int16_weights(width, w, kind)
        across = np.zeros((c, h, width), np.int64)
        for x, (xmin, wt) in enumerate(table):
            across[:, :, x] = out[:, :, xmin : xmin + len(wt)] @ wt
        out = np.clip((across + (1 << (precision - 1))) >> precision, 0, 255)
    if height != h:
        table, precision = _int16_weights(height, h, kind)
        down = np.zeros((c, height, width), np.int64)
        for y, (ymin, wt) in enumerate(table):
            down[:, y, :] = np.einsum("k,ckx->cx", wt, out[:, ymin : ymin + len(wt), :])
        out = np.clip((down + (1 << (precision - 1))) >> precision, 0, 255)
    return out.astype(np.uint8)


def resize(image, height, width, kind="bicubic", bytes_for_bilinear=True):
    """HF's resize of a [C, H, W] host image in its dtype, as torchvision calls torch: uint8
    in torch's integer passes (resize_bytes) for bicubic and Lanczos, and for bilinear where
    `bytes_for_bilinear` (torchvision's rule: a CPU whose torch capability reads "AVX2"),
    else as floats rounded back to bytes; float images in float64 (stay floats)."""
    if image.shape[1:] == (height, width):
        return image
    if image.dtype == np.uint8 and (kind in ("bicubic", "lanczos") or bytes_for_bilinear):
        return resize_bytes(image, height, width, kind)
    out = resize_bicubic_aa(image.astype(np.float64), height, width, kind)
    if image.dtype == np.uint8:
        return np.rint(np.clip(out, 0, 255)).astype(np.uint8)
    return out.astype(np.float32)


def normalize(image, mean, std, rescale=1 / 255):
    mean = np.asarray(mean, np.float32) * np.float32(1.0 / rescale)
    std = np.asarray(std, np.float32) * np.float32(1.0 / rescale)
    return (image.astype(np.float32) - mean[:, None, None]) / std[:, None, None]


def center_crop(image, ch, cw):
    h, w = image.shape[1:]
    top, left = int((h - ch) / 2.0), int((w - cw) / 2.0)
    return image[:, top : top + ch, left : left + cw]


def clip_pixel_values(images, size=224, crop=224, mean=CLIP_MEAN, std=CLIP_STD):
    out = []
    for image in images:
        h, w = shortest_edge(image.shape[1], image.shape[2], size)
        out.append(normalize(center_crop(resize(image, h, w), crop, crop), mean, std))
    return np.stack(out)


def siglip_pixel_values(images, size=224):
    return np.stack([normalize(resize(image, size, size), (0.5,) * 3, (0.5,) * 3) for image in images])


def qwen_patchify_image(image, patch=14, merge=2, temporal=2):
    """HF 5's Qwen2VLImageProcessor.patchify for one [C, h, w] image: permute
    (0, 2, 5, 3, 6, 1, 4, 7), then the time axis expanded after the channel."""
    c, h, w = image.shape
    gh, gw = h // patch, w // patch
    p = image[None].reshape(1, c, gh // merge, merge, patch, gw // merge, merge, patch)
    p = p.transpose(0, 2, 5, 3, 6, 1, 4, 7)
    p = np.broadcast_to(p[:, :, :, :, :, :, None], p.shape[:6] + (temporal,) + p.shape[6:])
    return p.reshape(gh * gw, c * temporal * patch * patch), (1, gh, gw)


def qwen_patchify_video(frames, patch=14, merge=2, temporal=2):
    """HF 5's Qwen2VLVideoProcessor.patchify for [T, C, h, w] frames (last repeated to a
    multiple of `temporal`): permute (0, 1, 4, 7, 5, 8, 3, 2, 6, 9)."""
    pad = -frames.shape[0] % temporal
    if pad:
        frames = np.concatenate([frames, np.repeat(frames[-1:], pad, axis=0)])
    t, c, h, w = frames.shape
    gt, gh, gw = t // temporal, h // patch, w // patch
    v = frames[None].reshape(1, gt, temporal, c, gh // merge, merge, patch, gw // merge, merge, patch)
    v = v.transpose(0, 1, 4, 7, 5, 8, 3, 2, 6, 9)
    return v.reshape(gt * gh * gw, c * temporal * patch * patch), (gt, gh, gw)


def qwen_pixel_values(images, min_pixels=56 * 56, max_pixels=28 * 28 * 1280, mean=CLIP_MEAN, std=CLIP_STD):
    rows, grids = [], []
    for image in images:
        h, w = smart_resize(image.shape[1], image.shape[2], 28, min_pixels, max_pixels)
        values, grid = qwen_patchify_image(normalize(resize(image, h, w), mean, std))
        rows.append(values)
        grids.append(grid)
    return np.concatenate(rows), np.asarray(grids, np.int64)


def qwen_video_values(frames, min_pixels=128 * 28 * 28, max_pixels=28 * 28 * 768, mean=CLIP_MEAN, std=CLIP_STD):
    h, w = smart_resize(frames.shape[2], frames.shape[3], 28, min_pixels, max_pixels)
    normalized = np.stack([normalize(resize(f, h, w), mean, std) for f in frames])
    values, grid = qwen_patchify_video(normalized)
    return values, np.asarray([grid], np.int64)


def gemma3_pan_and_scan(image, min_crop_size=256, max_num_crops=4, min_ratio=1.2):
    """HF's Gemma3ImageProcessor.pan_and_scan_batched on one [C, H, W] image: the crops."""
    height, width = image.shape[1:]
    if width >= height:
        if width / height < min_ratio:
            return []
        num_w = int(math.floor(width / height + 0.5))
        num_w = min(int(math.floor(width / min_crop_size)), num_w)
        num_w = max(2, num_w)
        num_w = min(max_num_crops, num_w)
        num_h = 1
    else:
        if height / width < min_ratio:
            return []
        num_h = int(math.floor(height / width + 0.5))
        num_h = min(int(math.floor(height / min_crop_size)), num_h)
        num_h = max(2, num_h)
        num_h = min(max_num_crops, num_h)
        num_w = 1
    crop_w = int(math.ceil(width / num_w))
    crop_h = int(math.ceil(height / num_h))
    if min(crop_w, crop_h) < min_crop_size:
        return []
    return [
        image[:, ph : ph + crop_h, pw : pw + crop_w]
        for ph in [crop_h * i for i in range(num_h)]
        for pw in [crop_w * i for i in range(num_w)]
    ]


def gemma3_pixel_values(images, size=896, pan_and_scan=False, bytes_for_bilinear=True, **pas):
    """HF's Gemma3ImageProcessor: each image (then its pan-and-scan crops) resized bilinear
    to size x size, rescaled, normalized with mean and std 0.5; and num_crops."""
    out, num_crops = [], []
    for image in images:
        crops = gemma3_pan_and_scan(image, **pas) if pan_and_scan else []
        for part in [image] + crops:
            resized = resize(part, size, size, "bilinear", bytes_for_bilinear)
            out.append(normalize(resized, (0.5,) * 3, (0.5,) * 3))
        num_crops.append(len(crops))
    return np.stack(out), np.asarray(num_crops, np.int64)


def _tile_grids(min_tiles, max_tiles):
    grids = []
    for width in range(1, max_tiles + 1):
        for height in range(1, max_tiles + 1):
            if width * height <= max_tiles and width * height >= min_tiles:
                grids.append((width, height))
    return sorted(grids, key=lambda x: x[0] * x[1])


def optimal_tiled_canvas(original_size, tile_size, min_tiles, max_tiles):
    """HF's get_optimal_tiled_canvas: (columns, rows)."""
    original_height, original_width = original_size
    tile_height, tile_width = tile_size
    aspect_ratio = original_width / original_height
    area = original_width * original_height
    best_ratio_diff = float("inf")
    best_grid = (1, 1)
    for grid in _tile_grids(min_tiles, max_tiles):
        ratio_diff = abs(aspect_ratio - grid[0] / grid[1])
        if ratio_diff < best_ratio_diff:
            best_ratio_diff = ratio_diff
            best_grid = grid
        elif ratio_diff == best_ratio_diff:
            if area > 0.5 * tile_height * tile_width * grid[0] * grid[1]:
                best_grid = grid
    return best_grid


def got_ocr2_pixel_values(images, size=448, crop_to_patches=True, min_patches=1, max_patches=12, mean=None, std=None):
    """HF's GotOcr2ImageProcessor (InternVL's): with crop_to_patches, each image resized
    bicubic to its tile grid and cut into size x size tiles row-major, then a thumbnail where
    there is more than one tile; every tile rescaled and normalized; and num_patches."""
    mean = mean or (0.485, 0.456, 0.406)
    std = std or (0.229, 0.224, 0.225)
    out, num_patches = [], []
    for image in images:
        tiles = [resize(image, size, size)]
        if crop_to_patches:
            columns, rows = optimal_tiled_canvas(image.shape[1:], (size, size), min_patches, max_patches)
            resized = resize(image, rows * size, columns * size)
            tiles = [
                resized[:, r * size : (r + 1) * size, c * size : (c + 1) * size]
                for r in range(rows)
                for c in range(columns)
            ]
            if len(tiles) != 1:
                tiles.append(resize(image, size, size))
        out += [normalize(t, mean, std) for t in tiles]
        num_patches.append(len(tiles))
    return np.stack(out), np.asarray(num_patches, np.int64)


def select_best_resolution(original_size, possible_resolutions):
    """HF's select_best_resolution: (height, width)."""
    original_height, original_width = original_size
    best_fit = None
    max_effective_resolution = 0
    min_wasted_resolution = float("inf")
    for height, width in possible_resolutions:
        scale = min(width / original_width, height / original_height)
        downscaled_width, downscaled_height = int(original_width * scale), int(original_height * scale)
        effective_resolution = min(downscaled_width * downscaled_height, original_width * original_height)
        wasted_resolution = (width * height) - effective_resolution
        if effective_resolution > max_effective_resolution or (
            effective_resolution == max_effective_resolution and wasted_resolution < min_wasted_resolution
        ):
            max_effective_resolution = effective_resolution
            min_wasted_resolution = wasted_resolution
            best_fit = (height, width)
    return best_fit


def get_patch_output_size(original_size, target_resolution):
    original_height, original_width = original_size
    target_height, target_width = target_resolution
    scale_w = target_width / original_width
    scale_h = target_height / original_height
    if scale_w < scale_h:
        new_width = target_width
        new_height = min(math.ceil(original_height * scale_w), target_height)
    else:
        new_height = target_height
        new_width = min(math.ceil(original_width * scale_h), target_width)
    return new_height, new_width


def llava_pixel_values(images, pinpoints, size, mean, std, batch_num_images=None):
    """HF's LlavaNext / LlavaOnevision image processors (torchvision backend) on host uint8
    [C, H, W] images: per image, the whole resized to size x size, then the image resized
    into its best resolution (aspect kept), zero-padded centred (divmod), divided into size
    tiles; or, for an image of a sample of several (OneVision), padded to a square of
    int(mean * 255) and resized whole. Each row normalized; rows padded with zeros to the most
    (pad_for_batching). Returns (pixel_values [N, most, 3, size, size], image_sizes [N, 2])."""
    batch_num_images = batch_num_images or [1] * len(images)
    need_patching = [n == 1 for n in batch_num_images for _ in range(n)]
    rows_of_images, sizes = [], []
    for image, patching in zip(images, need_patching):
        c, h, w = image.shape
        if patching:
            best = select_best_resolution((h, w), pinpoints)
            new_h, new_w = get_patch_output_size((h, w), best)
            resized = resize(image, new_h, new_w)
            paste_x, r_x = divmod(best[1] - new_w, 2)
            paste_y, r_y = divmod(best[0] - new_h, 2)
            padded = np.zeros((c, best[0], best[1]), np.uint8)
            padded[:, paste_y : paste_y + new_h, paste_x : paste_x + new_w] = resized
            patches = [
                padded[:, i : i + size, j : j + size] for i in range(0, best[0], size) for j in range(0, best[1], size)
            ]
            rows = [resize(image, size, size)] + patches
        else:
            side = max(h, w)
            left, top = (side - w) // 2, (side - h) // 2
            square = np.empty((c, side, side), image.dtype)
            for ch in range(c):
                square[ch] = int(mean[ch] * 255)
            square[:, top : top + h, left : left + w] = image
            rows = [resize(square, size, size)]
        rows_of_images.append(np.stack([normalize(r, mean, std) for r in rows]))
        sizes.append((h, w))
    most = max(len(r) for r in rows_of_images)
    out = np.zeros((len(images), most, 3, size, size), np.float32)
    for i, rows in enumerate(rows_of_images):
        out[i, : len(rows)] = rows
    return out, np.asarray(sizes, np.int64)


# -- Idefics3 / SmolVLM (transformers' Idefics3ImageProcessor, torchvision backend) -------------


def idefics3_resized_size(height, width, longest_edge, max_image_size=4096):
    """HF's get_resize_output_image_size: _resize_output_size_rescale_to_max_len, then
    _resize_output_size_scale_below_upper_bound."""
    aspect_ratio = width / height
    if width >= height:
        width = longest_edge
        height = int(width / aspect_ratio)
        if height % 2 != 0:
            height += 1
    elif height > width:
        height = longest_edge
        width = int(height * aspect_ratio)
        if width % 2 != 0:
            width += 1
    height, width = max(height, 1), max(width, 1)
    aspect_ratio = width / height
    if width >= height and width > max_image_size:
        width = max_image_size
        height = int(width / aspect_ratio)
    elif height > width and height > max_image_size:
        height = max_image_size
        width = int(height * aspect_ratio)
    return max(height, 1), max(width, 1)


def idefics3_vision_encoder_size(height, width, vision_encoder_max_size):
    """HF's resize_for_vision_encoder's size."""
    aspect_ratio = width / height
    if width >= height:
        width = math.ceil(width / vision_encoder_max_size) * vision_encoder_max_size
        height = int(width / aspect_ratio)
        height = math.ceil(height / vision_encoder_max_size) * vision_encoder_max_size
    elif height > width:
        height = math.ceil(height / vision_encoder_max_size) * vision_encoder_max_size
        width = int(height * aspect_ratio)
        width = math.ceil(width / vision_encoder_max_size) * vision_encoder_max_size
    return height, width


def idefics3_pixel_values(samples, longest_edge, tile, mean, std, split=True, kind="bicubic"):
    """HF's Idefics3 _preprocess on [3, H, W] uint8 host images (samples: lists of images):
    resize (longest edge), resize to multiples of the tile, tiles row-major then the whole
    image resized to the tile (or the image alone when it is one tile), each resize from the
    last one's bytes (`kind`: 'bicubic', or 'lanczos' where HF's torchvision is 0.27 or
    later); rescale + normalize; frames padded per sample. Returns (pixel_values,
    pixel_attention_mask, rows, cols)."""
    frames_of_samples, rows, cols = [], [], []
    for sample in samples:
        frames, sample_rows, sample_cols = [], [], []
        for image in sample:
            h, w = idefics3_resized_size(*image.shape[1:], longest_edge)
            image = resize(image, h, w, kind)
            r = c = 0
            if split:
                h, w = idefics3_vision_encoder_size(h, w, tile)
                image = resize(image, h, w, kind)
                if h > tile or w > tile:
                    r, c = math.ceil(h / tile), math.ceil(w / tile)
                    frames += [
                        image[:, i * tile : (i + 1) * tile, j * tile : (j + 1) * tile]
                        for i in range(r)
                        for j in range(c)
                    ]
                    frames.append(resize(image, tile, tile, kind))
                else:
                    frames.append(image)
            else:
                frames.append(resize(image, tile, tile, kind))
            sample_rows.append(r)
            sample_cols.append(c)
        frames_of_samples.append([normalize(f, mean, std) for f in frames])
        rows.append(sample_rows)
        cols.append(sample_cols)
    most = max(len(f) for f in frames_of_samples)
    values = np.zeros((len(samples), most, 3, tile, tile), np.float32)
    mask = np.zeros((len(samples), most, tile, tile), np.int64)
    for i, frames in enumerate(frames_of_samples):
        values[i, : len(frames)] = frames
        mask[i, : len(frames)] = 1
    return values, mask, rows, cols
