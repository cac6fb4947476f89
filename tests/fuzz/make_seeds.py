"""Writes the fuzzers' seed corpus (corpus/png, corpus/jpeg) and the hand-made hostile files
(regressions/): small images of every kind the decoders take, and the audit's attacks.
Run once with Pillow installed; the files are committed, so CI does not need Pillow.

    python3 tests/fuzz/make_seeds.py
"""

import io
import struct
import zlib
from pathlib import Path

import numpy as np
from PIL import Image

here = Path(__file__).parent
rng = np.random.default_rng(7)


def save(image, path, **options):
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, **options)


def pattern(w, h, channels):
    y, x = np.mgrid[0:h, 0:w]
    planes = [(x * 255 // max(1, w - 1)), (y * 255 // max(1, h - 1)), ((x + y) * 7) % 256, (x * y) % 256]
    return np.stack(planes[:channels], -1).astype(np.uint8)


png, jpeg, bad = here / "corpus" / "png", here / "corpus" / "jpeg", here / "regressions"
save(Image.fromarray(pattern(37, 23, 4)), png / "rgba.png")
save(Image.fromarray(pattern(37, 23, 3)), png / "rgb.png")
save(Image.fromarray(pattern(19, 11, 1)[..., 0].astype(np.uint16) * 257), png / "grey16.png")
fine = ((np.mgrid[0:7, 0:13][1] * 4099 + np.mgrid[0:7, 0:13][0] * 977) % 65536).astype(np.uint16)
save(Image.fromarray(fine), png / "grey16_fine.png")  # values no 8-bit image holds: v = (x * 4099 + y * 977) % 65536
palette = Image.fromarray(pattern(16, 16, 3)).convert("P", palette=Image.ADAPTIVE, colors=16)
save(palette, png / "palette.png", transparency=3)
save(Image.fromarray(pattern(9, 5, 1)[..., 0]).convert("1"), png / "bilevel.png")
save(Image.fromarray(pattern(37, 23, 3)), jpeg / "baseline.jpg", quality=90)
save(Image.fromarray(pattern(37, 23, 3)), jpeg / "progressive.jpg", quality=90, progressive=True)
save(Image.fromarray(pattern(37, 23, 1)[..., 0]), jpeg / "grey.jpg", quality=90)
save(Image.fromarray(pattern(16, 8, 4)).convert("CMYK"), jpeg / "cmyk.jpg", quality=90)  # refused: no RGBA conversion


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_claiming(width, height, idat=b""):
    """A PNG whose IHDR (valid CRC) claims width x height RGBA8, with `idat` as its data."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


bad.mkdir(parents=True, exist_ok=True)
(bad / "png_20000x20000_header.png").write_bytes(png_claiming(20000, 20000, zlib.compress(b"\0" * 1000)))
(bad / "png_idat_short.png").write_bytes(png_claiming(64, 64, zlib.compress(b"\0" * 100)))
(bad / "png_cut_in_half.png").write_bytes((png / "rgba.png").read_bytes()[:150])
# The audit's JPEG: a real 705-byte-class file whose frame header claims 16384 x 16384.
small = io.BytesIO()
Image.fromarray(pattern(16, 16, 3)).save(small, "JPEG", quality=50)
data = bytearray(small.getvalue())
sof = data.index(b"\xff\xc0")
data[sof + 5 : sof + 9] = struct.pack(">HH", 16384, 16384)
(bad / "jpeg_16384x16384_header.jpg").write_bytes(bytes(data))
(bad / "jpeg_cut_in_half.jpg").write_bytes((jpeg / "baseline.jpg").read_bytes()[:400])
(bad / "gif_not_supported.gif").write_bytes(b"GIF89a\x01\x00\x01\x00\x00\x00\x00;")
print("wrote", sorted(str(p.relative_to(here)) for p in here.rglob("*.*") if p.suffix != ".py"))
