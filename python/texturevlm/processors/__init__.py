"""Drop-in image processors for the VLMs people run: the same inputs, keys, shapes, dtypes,
order and values as Hugging Face's CLIP, SigLIP, Qwen2-VL / Qwen2.5-VL, Gemma 3, GotOcr2 /
InternVL, LLaVA-NeXT, LLaVA-OneVision and Idefics3 / SmolVLM processors, built from the same config values, with
the resize, normalization, tiling and patch order fused on the GPU. Images come as tensors,
arrays, PIL images, or JPEG / PNG bytes and files (decoded on the GPU with device="cuda").

    from texturevlm.processors import Qwen2VLImageProcessor
    processor = Qwen2VLImageProcessor.from_pretrained("/models/Qwen2-VL-7B-Instruct")
    inputs = processor(images)            # CUDA uint8 [3, H, W] tensors in, CUDA out
    model(**inputs, ...)                  # pixel_values, image_grid_thw

The default filter='exact' is HF's resize (the config's bicubic or bilinear) as HF computes
it for the image's device (torch's CUDA kernel for CUDA tensors, its CPU resize for host
arrays);
filter='texture' resizes on the texture path instead (box mips + one anisotropic trilinear
sample per output pixel), faster and softer. docs/processors.md has both measured."""

import json
import os
from typing import Any, Dict, Optional

from ._common import BatchFeature, load_config
from ._encoded import decode_encoded
from ._rules import ProcessorInputError, smart_resize
from .clip import CLIPImageProcessor, FixedSizeImageProcessor, SiglipImageProcessor
from .gemma3 import Gemma3ImageProcessor
from .got_ocr2 import GotOcr2ImageProcessor
from .idefics3 import Idefics3ImageProcessor, SmolVLMImageProcessor
from .llava_next import LlavaNextImageProcessor, LlavaOnevisionImageProcessor
from .qwen2_vl import Qwen2VLImageProcessor, Qwen2VLVideoProcessor

__all__ = [
    "BatchFeature",
    "CLIPImageProcessor",
    "FixedSizeImageProcessor",
    "Gemma3ImageProcessor",
    "GotOcr2ImageProcessor",
    "Idefics3ImageProcessor",
    "LlavaNextImageProcessor",
    "LlavaOnevisionImageProcessor",
    "ProcessorInputError",
    "Qwen2VLImageProcessor",
    "Qwen2VLVideoProcessor",
    "SiglipImageProcessor",
    "SmolVLMImageProcessor",
    "decode_images",
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
    "Gemma3ImageProcessor": Gemma3ImageProcessor,
    "Gemma3ImageProcessorFast": Gemma3ImageProcessor,
    "GotOcr2ImageProcessor": GotOcr2ImageProcessor,
    "GotOcr2ImageProcessorFast": GotOcr2ImageProcessor,
    "LlavaNextImageProcessor": LlavaNextImageProcessor,
    "LlavaNextImageProcessorFast": LlavaNextImageProcessor,
    "LlavaOnevisionImageProcessor": LlavaOnevisionImageProcessor,
    "LlavaOnevisionImageProcessorFast": LlavaOnevisionImageProcessor,
    "Idefics3ImageProcessor": Idefics3ImageProcessor,
    "Idefics3ImageProcessorFast": Idefics3ImageProcessor,
    "Idefics3ImageProcessorPil": Idefics3ImageProcessor,
    "SmolVLMImageProcessor": SmolVLMImageProcessor,
    "SmolVLMImageProcessorFast": SmolVLMImageProcessor,
    "SmolVLMImageProcessorPil": SmolVLMImageProcessor,
}


#: Processors by the multimodal processor's class (a config naming only processor_class).
_BY_PROCESSOR_CLASS = {
    "CLIPProcessor": CLIPImageProcessor,
    "SiglipProcessor": SiglipImageProcessor,
    "Qwen2VLProcessor": Qwen2VLImageProcessor,
    "Qwen2_5_VLProcessor": Qwen2VLImageProcessor,
    "Gemma3Processor": Gemma3ImageProcessor,
    "GotOcr2Processor": GotOcr2ImageProcessor,
    "InternVLProcessor": GotOcr2ImageProcessor,
    "LlavaNextProcessor": LlavaNextImageProcessor,
    "LlavaOnevisionProcessor": LlavaOnevisionImageProcessor,
    "Idefics3Processor": Idefics3ImageProcessor,
    "SmolVLMProcessor": SmolVLMImageProcessor,
}

#: Processors by the model's type (model_type in the folder's config.json), HF's last resort.
_BY_MODEL_TYPE = {
    "clip": CLIPImageProcessor,
    "siglip": SiglipImageProcessor,
    "qwen2_vl": Qwen2VLImageProcessor,
    "qwen2_5_vl": Qwen2VLImageProcessor,
    "gemma3": Gemma3ImageProcessor,
    "got_ocr2": GotOcr2ImageProcessor,
    "internvl": GotOcr2ImageProcessor,
    "llava_next": LlavaNextImageProcessor,
    "llava_onevision": LlavaOnevisionImageProcessor,
    "idefics3": Idefics3ImageProcessor,
    "smolvlm": SmolVLMImageProcessor,
}


def _named_class(config: Dict[str, Any], path: Any) -> Optional[Any]:
    """The processor class a config names, looked up in AutoImageProcessor's order:
    image_processor_type (or video_processor_type), feature_extractor_type (older CLIP and
    SigLIP checkpoints: *FeatureExtractor read as *ImageProcessor), processor_class, and
    last the model_type of the model folder's config.json."""
    name = config.get("image_processor_type") or config.get("video_processor_type")
    if name:
        return _BY_TYPE.get(str(name))
    feature_extractor = config.get("feature_extractor_type")
    if feature_extractor:
        return _BY_TYPE.get(str(feature_extractor).replace("FeatureExtractor", "ImageProcessor"))
    if config.get("processor_class"):
        return _BY_PROCESSOR_CLASS.get(str(config["processor_class"]))
    if not isinstance(path, dict) and os.path.isdir(os.fspath(path)):
        model_config = os.path.join(os.fspath(path), "config.json")
        try:
            with open(model_config) as f:
                model_type = json.load(f).get("model_type")
        except (OSError, ValueError, AttributeError):
            return None
        return _BY_MODEL_TYPE.get(str(model_type))
    return None


def decode_images(images: Any, device: Any = None) -> Any:
    """`images` (one, or a nested list) with every encoded image (JPEG / PNG bytes or a file
    path) decoded, and, where `device` is given, every other image copied there if it is not
    (as torch tensors), else as given: what a processor does first with them, for callers that
    hand images on to another library, such as HF's multimodal processors (which refuse
    bytes). On the host (device None or 'cpu'): uint8 [H, W, 3] NumPy arrays, decoded in
    parallel; device='cuda' (or 'cuda:N'): uint8 [H, W, 3] CUDA tensors, JPEGs decoded on the
    GPU by nvImageCodec where it is installed. A missing, corrupt or truncated image raises
    ProcessorInputError naming it, and nothing is returned for the others."""
    return decode_encoded(images, device)


def from_pretrained(path: Any, **overrides: Any) -> Any:
    """The processor a config names, from a model folder, a preprocessor_config.json or a
    dict: AutoImageProcessor without the network, resolving the class as it does
    (image_processor_type, feature_extractor_type, processor_class, the model's
    model_type). Keyword arguments override config values and take filter / dtype / backend."""
    config = load_config(path)
    cls = _named_class(config, path)
    if cls is None:
        named = {
            k: config[k] for k in ("image_processor_type", "feature_extractor_type", "processor_class") if k in config
        }
        raise ProcessorInputError(
            f"no texturevlm processor for {named or 'a config that names no processor class'}: texturevlm has "
            f"{', '.join(sorted(_BY_TYPE))}; construct one of them from the config yourself"
        )
    return cls(**{**config, **overrides})
