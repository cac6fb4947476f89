"""Packs NVIDIA CV-CUDA (the `cvcuda-cu13` wheel, the processors benchmark's baseline) for a
GPU machine without network, small enough to carry: one Python version's module, and its
library's CUDA binaries for one architecture only. The library holds cubins for sm_75 to
sm_121 (187 MB, 112 MB compressed, over a device call's 64 MiB); every fatbin entry but the
target architecture's cubins is zeroed (headers kept), so the driver, which loads the
device's own cubin, never reads them, and the zeros compress away (27 MB for sm_90).

    pip download --no-deps -d /tmp/cvc cvcuda-cu13
    python3 tests/pack_cvcuda.py /tmp/cvc/cvcuda_cu13-*.whl .device/cvcuda.tar.xz --arch 90 --python 312

tests/run_gpu_suites.sh unpacks BIN/cvcuda.tar.xz beside the package, so the processors
benchmark runs CV-CUDA in the same process. Only for benchmarking: the zeroed library runs
on that architecture alone."""

from __future__ import annotations

import argparse
import lzma
import struct
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

FATBIN_MAGIC = 0xBA55ED50
ELF_ENTRY = 2  # fatbin entry kinds: 1 PTX, 2 ELF (a cubin)


def fatbin_section(data: bytes) -> tuple:
    """(offset, size) of the ELF file's .nv_fatbin section."""
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    names_offset = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 0x18)[0]
    for i in range(shnum):
        header = shoff + i * shentsize
        name_at = names_offset + struct.unpack_from("<I", data, header)[0]
        name = data[name_at : data.index(b"\0", name_at)]
        if name == b".nv_fatbin":
            return struct.unpack_from("<Q", data, header + 0x18)[0], struct.unpack_from("<Q", data, header + 0x20)[0]
    raise SystemExit("no .nv_fatbin section: not a CUDA library")


def keep_one_arch(library: Path, arch: int) -> tuple:
    """Zeroes every fatbin entry of `library` but the sm_`arch` cubins; (bytes kept, zeroed)."""
    data = bytearray(library.read_bytes())
    at, size = fatbin_section(bytes(data))
    end, kept, zeroed = at + size, 0, 0
    while at < end:
        magic, _, header_size, fat_size = struct.unpack_from("<IHHQ", data, at)
        if magic != FATBIN_MAGIC:
            at += 8  # fatbins are 8-byte aligned, padding between them
            continue
        entry, entries_end = at + header_size, at + header_size + fat_size
        while entry < entries_end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, entry)
            (entry_arch,) = struct.unpack_from("<I", data, entry + 28)
            if (kind, entry_arch) == (ELF_ENTRY, arch):
                kept += payload
            else:
                data[entry + entry_header : entry + entry_header + payload] = bytes(payload)
                zeroed += payload
            entry += entry_header + payload
        at = entries_end
    if kept == 0:
        raise SystemExit(f"{library.name} has no sm_{arch} cubins")
    library.write_bytes(bytes(data))
    return kept, zeroed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("wheel", type=Path)
    parser.add_argument("out", type=Path, help="the .tar.xz to write")
    parser.add_argument("--arch", type=int, default=90, help="the GPU's compute capability, as 90 for sm_90")
    parser.add_argument("--python", default="312", help="the GPU machine's Python, as 312")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with zipfile.ZipFile(args.wheel) as wheel:
            wheel.extractall(root)
        for module in root.glob("cvcuda/_cvcuda.cpython-*.so"):
            if f"cpython-{args.python}-" not in module.name:
                module.unlink()
        for library in root.glob("cvcuda*.libs/libcvcuda-*.so*"):
            kept, zeroed = keep_one_arch(library, args.arch)
            print(f"{library.name}: kept {kept / 1e6:.1f} MB of sm_{args.arch} cubins, zeroed {zeroed / 1e6:.1f} MB")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with lzma.open(args.out, "wb", preset=9) as packed, tarfile.open(fileobj=packed, mode="w") as tar:
            for path in sorted(root.iterdir()):
                tar.add(path, arcname=path.name)
    print(f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
