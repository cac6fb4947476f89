"""Fits a learnable Gaussian field (texturevlm.fields.GaussianField) to a synthetic 3D volume:
the target is a field of 20 random Gaussians, sampled at random points each step; the
model has 200 Gaussians with full covariances. Prints the loss as it goes down.

    python examples/fit_gaussian_field.py [--steps 300] [--device cuda]"""

import argparse
import time

import texturevlm as tv

try:
    import torch
except ModuleNotFoundError:  # torch is optional for the package, not for this example
    raise SystemExit(
        "this example needs PyTorch: pip install 'texturevlm[torch]' (or a CUDA build from pytorch.org)"
    ) from None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    torch.manual_seed(0)
    target = tv.fields.GaussianField(20, volume_size=1.0, seed=123).to(args.device)
    with torch.no_grad():
        target.weights.copy_(torch.rand(20, device=args.device) + 0.5)
        target.log_diagonal.add_(torch.randn_like(target.log_diagonal) * 0.3)
        target.off_diagonal.copy_(torch.randn_like(target.off_diagonal) * 0.05)
    model = tv.fields.GaussianField(200, volume_size=1.0, seed=1).to(args.device)
    optimiser = torch.optim.Adam(model.parameters(), lr=0.01)
    start = time.perf_counter()
    first = last = 0.0
    for step in range(args.steps):
        points = torch.rand(8192, 3, device=args.device)
        with torch.no_grad():
            wanted = target(points)
        optimiser.zero_grad()
        loss = torch.mean((model(points) - wanted) ** 2)
        loss.backward()
        optimiser.step()
        last = float(loss)
        first = first or last
        if step % 50 == 0 or step == args.steps - 1:
            print(f"step {step:4d}: loss {last:.6f}")
    seconds = time.perf_counter() - start
    print(
        f"loss {first:.6f} -> {last:.6f} ({first / last:.1f}x lower) in {args.steps} steps, "
        f"{seconds / args.steps * 1e3:.2f} ms a step on {args.device}"
    )


if __name__ == "__main__":
    main()
