"""Processor configs fuzzed (hypothesis): `processors.from_pretrained` over dicts with the
keys Hugging Face's configs use and values of every JSON type, then a call on a small image
on the CPU. Every outcome must be a processor that runs, or one `texturevlm.Error` naming
what was wrong: a builtin exception, a crash or a run-away allocation is a failure.

    python tests/fuzz/fuzz_processor_configs.py [--examples N]

Each file in tests/fuzz/regressions/processor_configs/ (a config that once failed) runs
first. A failure prints the config: save it there as JSON with the fix."""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys

import numpy as np
import texturevlm as tv
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from texturevlm import processors

HERE = os.path.dirname(os.path.abspath(__file__))
REGRESSIONS = os.path.join(HERE, "regressions", "processor_configs")
TYPES = [
    "CLIPImageProcessor", "SiglipImageProcessor", "Qwen2VLImageProcessor", "Qwen2VLVideoProcessor",
    "Gemma3ImageProcessor", "GotOcr2ImageProcessor", "LlavaNextImageProcessor", "LlavaOnevisionImageProcessor",
    "Idefics3ImageProcessor", "SmolVLMImageProcessor", "Nope",
]  # fmt: skip
KEYS = [
    "size", "crop_size", "do_resize", "do_center_crop", "do_rescale", "rescale_factor", "do_normalize",
    "image_mean", "image_std", "do_convert_rgb", "resample", "min_pixels", "max_pixels", "patch_size",
    "temporal_patch_size", "merge_size", "do_sample_frames", "do_pan_and_scan", "pan_and_scan_min_crop_size",
    "pan_and_scan_max_num_crops", "pan_and_scan_min_ratio_to_activate", "crop_to_patches", "min_patches",
    "max_patches", "image_grid_pinpoints", "do_pad", "max_image_size", "do_image_splitting", "return_row_col_info",
]  # fmt: skip
SIZE_KEYS = ["height", "width", "shortest_edge", "longest_edge", "min_pixels", "max_pixels"]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3000)
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=6)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(SIZE_KEYS + ["x"]), inner, max_size=4),
    max_leaves=8,
)
configs = st.fixed_dictionaries(
    {"image_processor_type": st.sampled_from(TYPES)}, optional={key: values for key in KEYS}
)  # fmt: skip


def run(config: dict) -> None:
    """Makes and calls the processor; raises AssertionError on anything but success or tv.Error."""
    try:
        processor = processors.from_pretrained(config, backend="cpu")
        image = np.random.default_rng(0).integers(0, 256, (3, 37, 53), dtype=np.uint8)
        out = processor(image, return_tensors="np")
        values = out.get("pixel_values", out.get("pixel_values_videos"))
        assert values is not None and np.asarray(values).size > 0, f"no values: {list(out)}"
    except tv.Error:
        return
    except Exception as e:
        raise AssertionError(f"{type(e).__name__}: {e}\nconfig: {json.dumps(config, default=str)}") from e


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=int(os.environ.get("FUZZ_EXAMPLES", "400")))
    args = parser.parse_args()
    regressions = sorted(glob.glob(os.path.join(REGRESSIONS, "*.json")))
    for path in regressions:
        with open(path) as f:
            run(json.load(f))
    print(f"fuzz_processor_configs: {len(regressions)} regression configs pass")

    @settings(max_examples=args.examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(configs)
    def fuzz(config: dict) -> None:
        run(config)

    fuzz()
    print(f"fuzz_processor_configs: {args.examples} configs, every one a processor or a texturevlm.Error")
    return 0


if __name__ == "__main__":
    sys.exit(main())
