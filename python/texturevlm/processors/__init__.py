"""Drop-in image processors for the VLMs people run: the same inputs, keys, shapes, dtypes
and order as Hugging Face's CLIP, SigLIP and Qwen2-VL processors, built from the same config
values, with the resize on the texture path (box mips + one anisotropic trilinear sample
per output pixel) and normalization and patch order fused into that one CUDA kernel.

    from texturevlm.processors import Qwen2VLImageProcessor
    processor = Qwen2VLImageProcessor.from_pretrained("/models/Qwen2-VL-7B-Instruct")
    inputs = processor(images)            # CUDA uint8 [3, H, W] tensors in, CUDA out
    model(**inputs, ...)                  # pixel_values, image_grid_thw

filter='bicubic' computes PyTorch's antialiased bicubic instead, Hugging Face's own resize,
to float rounding; docs/processors.md has the differences of both measured."""

from typing import Any

from ._common import BatchFeature, load_config
from ._rules import ProcessorInputError, smart_resize
from .clip import CLIPImageProcessor, FixedSizeImageProcessor, SiglipImageProcessor
from .qwen2_vl import Qwen2VLImageProcessor, Qwen2VLVideoProcessor

__all__ = [
    "BatchFeature",
    "CLIPImageProcessor",
    "FixedSizeImageProcessor",
    "ProcessorInputError",
    "Qwen2VLImageProcessor",
    "Qwen2VLVideoProcessor",
    "SiglipImageProcessor",
    "from_pretrained",
    "smart_resize",
]

_BY_TYPE = {
    "CLIPImageProcessor": CLIPImageProcessor,
    "CLIPImageProcessorFast": CLIPImageProcessor,
    "SiglipImageProcessor": SiglipImageProcessor,
    "SiglipImageProcessorFast": SiglipImageProcessor,
    "Qwen2VLImageProcessor": Qwen2VLImageProcessor,
    "Qwen2VLImageProcessorFast": Qwen2VLImageProcessor,
    "Qwen2VLVideoProcessor": Qwen2VLVideoProcessor,
}


def from_pretrained(path: Any, **overrides: Any) -> Any:
    """The processor a config names (image_processor_type / video_processor_type), from a
    model folder, a preprocessor_config.json or a dict: AutoImageProcessor without the
    network. Keyword arguments override config values and take filter / dtype / backend."""
    config = load_config(path)
    name = config.get("image_processor_type") or config.get("video_processor_type")
    cls = _BY_TYPE.get(str(name))
    if cls is None:
        raise ProcessorInputError(
            f"no texturevlm processor for {name!r}: texturevlm has "
            f"{', '.join(sorted(_BY_TYPE))}; construct one of them from the config yourself"
        )
    return cls(**{**config, **overrides})
