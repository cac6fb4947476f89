#!/usr/bin/env python3
"""A training-style data pipeline under torch.distributed, one process per GPU: each rank
loads its shard of the images (DistributedSampler), turns them into 273 foveated patches
per image with texturevlm on its own GPU, and trains a small ViT on them under
DistributedDataParallel. At the end an all-reduce of per-rank checksums proves that every
rank did its part and that together they covered every image once.

    torchrun --standalone --nproc-per-node=2 examples/distributed_patches.py --images 64 --size 1024

texturevlm needs nothing from the launcher: each rank sets its CUDA device from LOCAL_RANK,
and texturevlm works on the device of the tensors it is given (a Vulkan context, where one
is needed, opens on the Vulkan twin of torch's current CUDA device). On several machines
the same script runs unchanged under torchrun's multi-node flags, for example on each of
two nodes:

    torchrun --nnodes=2 --nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint=HOST:29400 \\
        --rdzv-id=job1 examples/distributed_patches.py --images 4096

Images: `--images-dir DIR` decodes the PNG/JPEG files there with torchvision; otherwise
`--images N` synthetic images are made from the test chart, different for every index.
`--verify` makes rank 0 recompute every image's patches alone and check that the ranks'
checksum equals its own. `--fail-rank R` makes rank R raise after its first batch (the
launcher then stops every rank: the tests check that nothing is left behind)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import List, Tuple

import numpy as np
import texturevlm as tv

try:
    import torch
except ModuleNotFoundError:  # torch is optional for the package, not for this example
    raise SystemExit(
        "this example needs PyTorch: pip install 'texturevlm[torch]' (or a CUDA build from pytorch.org)"
    ) from None
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vit_foveated import FoveatedViT


class ChartImages(Dataset):
    """`count` synthetic [3, size, size] uint8 images: the test chart shifted and tinted by
    the index, so each image (and so each checksum term) differs."""

    def __init__(self, count: int, size: int) -> None:
        self.count, self.size = count, size
        self.chart = tv.test_chart(size, size)

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> Tuple[torch.Tensor, int]:
        shifted = np.roll(self.chart, shift=(index * 37 % self.size, index * 91 % self.size), axis=(1, 2))
        tint = np.array([index % 7, index % 5, index % 3], dtype=np.uint8)[:, None, None] * 8
        return torch.from_numpy(shifted + tint), index  # uint8 arithmetic wraps: fine for a test image


class FileImages(Dataset):
    """The PNG and JPEG files of a folder, decoded with torchvision and resized to a square
    of `size` (the batch is one texture array, so its images share a size)."""

    def __init__(self, folder: str, size: int) -> None:
        self.files = sorted(p for p in Path(folder).iterdir() if p.suffix.lower() in (".png", ".jpg", ".jpeg"))
        if not self.files:
            raise SystemExit(f"no .png or .jpg files in {folder}")
        self.size = size

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, index: int) -> Tuple[torch.Tensor, int]:
        from torchvision.io import ImageReadMode, decode_image
        from torchvision.transforms.v2.functional import resize

        image = decode_image(str(self.files[index]), mode=ImageReadMode.RGB)
        return resize(image, [self.size, self.size], antialias=True), index


def fixations_for(indices: torch.Tensor) -> List[Tuple[float, float]]:
    """Each image's fixation, a function of its index alone, so any rank samples an image
    exactly as any other would."""
    return [(0.2 + 0.6 * ((i * 0.618) % 1.0), 0.2 + 0.6 * ((i * 0.382) % 1.0)) for i in indices.tolist()]


def patches_of(images: torch.Tensor, indices: torch.Tensor, device: torch.device) -> tv.Patches:
    """[B, 3, H, W] uint8 -> 273 foveated 16x16 patches per image and their metadata, on
    `device` (the texture unit samples where the images are)."""
    pyramid = tv.TexturePyramid(images.to(device, non_blocking=True))
    fixations = torch.tensor(fixations_for(indices), dtype=torch.float64)[:, None, :]  # [B, 1, 2]
    return pyramid.sample_foveated(fixations.numpy(), num_patches=273)


def checksum_terms(patches: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """Per image: the sum of its patches weighted by (its index + 1), in float64, so the
    total depends on which image gave which patches."""
    per_image = patches.double().flatten(1).sum(dim=1)
    return per_image * (indices.to(per_image.device).double() + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=64, help="synthetic images (without --images-dir)")
    parser.add_argument("--images-dir", default="", help="a folder of PNG/JPEG files instead")
    parser.add_argument("--size", type=int, default=1024, help="image side after loading")
    parser.add_argument("--batch", type=int, default=8, help="images per rank per step")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument(
        "--device",
        choices=("auto", "cuda", "cpu"),
        default="auto",
        help="auto: one GPU per rank where there are enough GPUs, else the host",
    )
    parser.add_argument("--verify", action="store_true", help="rank 0 recomputes every image alone and compares")
    parser.add_argument("--fail-rank", type=int, default=-1, help="this rank raises after its first batch")
    args = parser.parse_args()

    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    use_cuda = args.device == "cuda" or (
        args.device == "auto"
        and torch.cuda.is_available()
        and torch.cuda.device_count() >= int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    )
    if use_cuda:
        torch.cuda.set_device(local_rank)  # before anything touches CUDA: texturevlm follows it
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    dist.init_process_group("nccl" if use_cuda else "gloo", device_id=device if use_cuda else None)
    rank = dist.get_rank()

    dataset = FileImages(args.images_dir, args.size) if args.images_dir else ChartImages(args.images, args.size)
    sampler = DistributedSampler(dataset, shuffle=False, drop_last=False)
    loader = DataLoader(
        dataset, batch_size=args.batch, sampler=sampler, num_workers=2, pin_memory=use_cuda, persistent_workers=False
    )
    model = DistributedDataParallel(FoveatedViT().to(device), device_ids=[local_rank] if use_cuda else None)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)

    checksum = torch.zeros((), dtype=torch.float64, device=device)
    # Images this rank owns (DistributedSampler without shuffling deals index i to rank
    # i % world, then pads the last round with repeats, which belong to other ranks), and
    # how often it sampled each: after the all-reduce, each image must count exactly once.
    seen = torch.zeros(len(dataset), dtype=torch.int64, device=device)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for step, (images, indices) in enumerate(loader):
            patches, meta = patches_of(images, indices, device)
            if epoch == 0:
                owned = (indices % world == rank).to(device)
                checksum += checksum_terms(patches, indices)[owned].sum()
                seen[indices.to(device)[owned]] += 1
            real = meta[..., 4] >= 0
            target = patches.mean(dim=(3, 4))  # each patch's mean colour: a stand-in task
            loss = (model(patches, meta) - target).square()[real].mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if rank == args.fail_rank:
                raise RuntimeError(f"rank {rank} failed on purpose after its first batch (--fail-rank)")
            if step == 0 and epoch == 0:
                print(
                    f"rank {rank}/{world} on {device} ({patches.device}): batch {list(patches.shape)}, loss "
                    f"{loss.item():.5f}",
                    flush=True,
                )

    for value in (checksum, seen):
        dist.all_reduce(value)
    if rank == 0:
        print(
            f"{world} ranks: each of {len(dataset)} images counted {int(seen.min())}..{int(seen.max())} "
            f"time(s), checksum {checksum.item():.6e}",
            flush=True,
        )
        ok = bool((seen == 1).all())
        if args.verify:
            alone = torch.zeros((), dtype=torch.float64, device=device)
            for images, indices in DataLoader(dataset, batch_size=args.batch, num_workers=2):
                alone += checksum_terms(patches_of(images, indices, device).patches, indices).sum()
            same = bool(torch.allclose(alone, checksum, rtol=1e-12, atol=0))
            print(f"rank 0 alone: checksum {alone.item():.6e} -> {'equal' if same else 'DIFFERENT'}", flush=True)
            ok = ok and same
        status = torch.tensor(int(ok), device=device)
    else:
        status = torch.tensor(0, device=device)
    dist.broadcast(status, src=0)
    dist.destroy_process_group()
    if not status.item():
        raise SystemExit("the ranks' patches did not cover every image once, or differ from one rank's")


if __name__ == "__main__":
    main()
