#!/usr/bin/env python3
"""A ViT-style encoder fed by foveated patches: texturevlm samples 273 patches of 16x16
around a fixation (fine near it, coarse far away), and their metadata (cu, cv, su, sv,
level) is the positional input, so the model knows where and at which scale each token
looked. Runs on the embedded test chart; on a CUDA GPU the image never leaves it.

    python3 examples/vit_foveated.py [--fixation 0.3,0.6] [--steps 20]

The loop trains the encoder for a few steps to reconstruct each patch's mean colour from
its token (a stand-in task: the point is the data path, tensors in and out, no copies)."""

import argparse

import texturevlm as tv

try:
    import torch
except ModuleNotFoundError:  # torch is optional for the package, not for this example
    raise SystemExit(
        "this example needs PyTorch: pip install 'texturevlm[torch]' (or a CUDA build from pytorch.org)"
    ) from None
from torch import nn


class FoveatedViT(nn.Module):
    """Patch embedding + an embedding of each patch's (cu, cv, su, sv, level) + a
    transformer encoder; padding slots (level -1) are masked out of attention."""

    def __init__(self, patch_size: int = 16, channels: int = 3, width: int = 192, depth: int = 4, heads: int = 3):
        super().__init__()
        self.embed = nn.Linear(channels * patch_size * patch_size, width)
        self.position = nn.Sequential(nn.Linear(5, width), nn.GELU(), nn.Linear(width, width))
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.head = nn.Linear(width, channels)

    def forward(self, patches: torch.Tensor, meta: torch.Tensor) -> torch.Tensor:
        # patches [B, N, C, P, P], meta [B, N, 5] -> one output per token [B, N, C]
        tokens = self.embed(patches.flatten(2)) + self.position(meta)
        padding = meta[..., 4] < 0
        return self.head(self.encoder(tokens, src_key_padding_mask=padding))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fixation", default="0.5,0.5", help="x,y in [0,1]^2")
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    fixation = tuple(float(v) for v in args.fixation.split(","))
    device = "cuda" if torch.cuda.is_available() and tv.cuda_built() else "cpu"

    image = torch.from_numpy(tv.test_chart(1536, 1024)).to(device)  # [3, H, W] uint8
    pyramid = tv.TexturePyramid(image)
    patches, meta = pyramid.sample_foveated(fixation, num_patches=273)
    print(
        f"backend {pyramid.backend} ({pyramid.backend_reason}): patches {list(patches.shape)}, "
        f"meta {list(meta.shape)}, {int((meta[:, 4] >= 0).sum())} real tokens, "
        f"levels {meta[:, 4].min().item():.0f}..{meta[:, 4].max().item():.0f}"
    )

    model = FoveatedViT().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    patches, meta = patches[None].to(device), meta[None].to(device)
    target = patches.mean(dim=(3, 4))  # [1, N, C]: each patch's mean colour
    for step in range(args.steps):
        loss = (model(patches, meta) - target).square()[meta[..., 4] >= 0].mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % max(1, args.steps // 5) == 0 or step == args.steps - 1:
            print(f"step {step:3d}  loss {loss.item():.5f}")


if __name__ == "__main__":
    main()
