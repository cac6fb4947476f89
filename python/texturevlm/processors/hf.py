"""texturevlm's processors inside Hugging Face's multimodal processors, which accept only
transformers' own image processor classes:

    from transformers import Qwen2VLProcessor
    from texturevlm.processors import Qwen2VLImageProcessor
    from texturevlm.processors import Qwen2VLImageProcessor, Qwen2VLVideoProcessor
    from texturevlm.processors.hf import as_hf_processor

    processor = Qwen2VLProcessor(
        image_processor=as_hf_processor(Qwen2VLImageProcessor.from_pretrained(path)),
        video_processor=as_hf_processor(Qwen2VLVideoProcessor.from_pretrained(path)),
        tokenizer=tokenizer,
    )
    inputs = processor(images=[frame], text=[prompt])   # texturevlm makes pixel_values

The wrapper is a transformers `ImageProcessingMixin` (`BaseVideoProcessor` for videos):
HF's processor calls it as it calls its own (the images plus the merged images_kwargs, None
meaning the processor's own value) and reads the processor's config values (merge_size,
patch_size, ...) from it. Needs transformers (`pip install texturevlm[hf]`)."""

from __future__ import annotations

from typing import Any, Dict

from .._core import Error

_wrappers: Dict[str, type] = {}


def as_hf_processor(processor: Any) -> Any:
    """`processor` (a texturevlm processor) as transformers sees its own: an image processor
    (an `ImageProcessingMixin`) or, for `Qwen2VLVideoProcessor`, a video processor (a
    `BaseVideoProcessor`), for HF's multimodal processors. Calls go to `processor`, and its
    config values (size, merge_size, patch_size, ...) are the wrapper's; `processor`
    itself is unchanged."""
    from ._common import Processor
    from .qwen2_vl import Qwen2VLVideoProcessor

    if not isinstance(processor, Processor):
        raise Error(f"as_hf_processor takes a texturevlm processor, not {type(processor).__name__}")
    return _wrapper_class("video" if isinstance(processor, Qwen2VLVideoProcessor) else "image")(processor)


def _wrapper_class(kind: str) -> type:
    wrapper = _wrappers.get(kind)
    if wrapper is not None:
        return wrapper
    try:
        from transformers.image_processing_base import ImageProcessingMixin
        from transformers.video_processing_utils import BaseVideoProcessor
    except ImportError as e:
        raise Error("composing into Hugging Face's processors needs transformers: pip install 'texturevlm[hf]'") from e
    base = BaseVideoProcessor if kind == "video" else ImageProcessingMixin

    class Wrapper(base):  # type: ignore[misc, valid-type]
        """A texturevlm processor as transformers sees an image or video processor."""

        def __init__(self, processor: Any) -> None:
            # transformers' own __init__ is not run: it sets its defaults, which are not
            # this processor's. The processor's config values are copied over the class's.
            self.__dict__.update({k: v for k, v in vars(processor).items() if not k.startswith("_")})
            self.__dict__["processor"] = processor
            self.__dict__["model_input_names"] = list(processor.model_input_names)

        def __getattr__(self, name: str) -> Any:
            # Only names the wrapper lacks: the processor's methods.
            processor = self.__dict__.get("processor")
            if processor is None or name.startswith("__"):
                raise AttributeError(name)
            return getattr(processor, name)

        def __call__(self, images: Any = None, **kwargs: Any) -> Any:
            return self.processor(images, **kwargs)

        def preprocess(self, images: Any = None, **kwargs: Any) -> Any:
            return self.processor(images, **kwargs)

        def fetch_images(self, images: Any) -> Any:
            """HF's processors fetch images before anything else (and count them, refusing
            bytes): encoded ones (bytes, file paths) are decoded here, on the host, by
            texturevlm's decoders. To decode on the GPU, pass the images through
            texturevlm.processors.decode_images(images, device="cuda") first."""
            from ._encoded import decode_encoded

            return decode_encoded(images)

        def to_dict(self) -> Dict[str, Any]:
            """The processor's config, named as the transformers class it stands in for
            (texturevlm's classes have HF's names, so a saved processor loads with
            transformers alone)."""
            key = "video_processor_type" if kind == "video" else "image_processor_type"
            return {**self.processor._config, key: type(self.processor).__name__}

        def __repr__(self) -> str:
            return f"texturevlm {type(self.processor).__name__}(filter={self.processor.filter!r}) for transformers"

    Wrapper.__name__ = Wrapper.__qualname__ = f"Texturevlm{'Video' if kind == 'video' else 'Image'}Processor"
    _wrappers[kind] = Wrapper
    return Wrapper
