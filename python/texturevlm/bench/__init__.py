"""The package's benchmarks, run on an NVIDIA GPU: `python -m texturevlm.bench [processors |
grad | fields | overlay]` (__main__.py) times Python calls against PyTorch, HF, OpenCV and
torchvision in the same run; torch_baseline.py is the PyTorch way of `tvlm bench`'s jobs;
markdown_tables.py turns their JSON into docs/benchmarks.md's tables. The C++ benchmarks
are `tvlm bench` (apps/bench/)."""
