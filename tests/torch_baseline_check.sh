#!/usr/bin/env bash
# python/texturevlm/bench/torch_baseline.py against tvlm's own CPU patches of the embedded chart: the PyTorch
# baseline must sample the very layout tvlm wrote. Tolerance 0.01: tvlm's levels are stored
# as 8 bits each (half a step of rounding per level, compounding), avg_pool2d keeps floats.
# Exit 77 (CTest: skipped) without PyTorch.
set -eu
tvlm=$1 root=$2 out=$3
python3 -c "import torch, numpy, PIL" 2>/dev/null ||
  { echo "SKIPPED: the PyTorch baseline needs python3 with torch, numpy and pillow (pip install torch numpy pillow)"; exit 77; }
mkdir -p "$out"
"$tvlm" mips --out "$out/chart" >/dev/null
"$tvlm" sample --backend cpu --out "$out/patches.npy" --meta "$out/meta.json" >/dev/null
python3 "$root/python/texturevlm/bench/torch_baseline.py" --image "$out/chart/level_00.png" --meta "$out/meta.json" \
  --patches "$out/patches.npy" --check 0.01 --jobs patches --device cpu
