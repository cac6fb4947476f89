"""texturevlm's processors inside Hugging Face's multimodal processors (processors/hf.py),
with a tokenizer built offline: the wrapper passes HF's class checks, HF's processor calls
it with its merged keyword arguments, and the text's image tokens are expanded from
texturevlm's outputs exactly as from HF's own image processor's. CLIP and Idefics3 need
transformers only; Qwen2-VL (whose processor also takes a video processor) needs torch too."""

from __future__ import annotations

import numpy as np
import pytest
import texturevlm as tv
from conftest import random_image
from texturevlm.processors import CLIPImageProcessor, Qwen2VLImageProcessor, Qwen2VLVideoProcessor
from texturevlm.processors.hf import as_hf_processor

transformers = pytest.importorskip("transformers", reason="transformers is not installed")
tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed")

SPECIAL = ["<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>", "<image>"]


def tiny_tokenizer():
    """A word-level tokenizer of a few words and the VLMs' special tokens, made in memory."""
    vocab = {"<unk>": 0, "hello": 1, "world": 2, "a": 3, "photo": 4, **{t: 5 + i for i, t in enumerate(SPECIAL)}}
    model = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    model.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=model, unk_token="<unk>", pad_token="<unk>")
    tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL})
    return tokenizer


def test_the_wrapper_passes_hfs_class_checks_and_reads_through():
    clip = CLIPImageProcessor(backend="cpu")
    wrapped = as_hf_processor(clip)
    assert isinstance(wrapped, transformers.image_processing_base.ImageProcessingMixin)
    assert wrapped.size == clip.size and wrapped.crop_size == clip.crop_size and wrapped.processor is clip
    assert wrapped.to_dict()["image_processor_type"] == "CLIPImageProcessor"
    with pytest.raises(tv.Error, match="texturevlm processor"):
        as_hf_processor(object())


def test_clip_composes_into_clipprocessor(rng):
    tokenizer = tiny_tokenizer()
    ours = CLIPImageProcessor(backend="cpu")
    processor = transformers.CLIPProcessor(image_processor=as_hf_processor(ours), tokenizer=tokenizer)
    images = [random_image(rng, (3, 300, 200)), random_image(rng, (3, 224, 400))]
    out = processor(images=images, text=["a photo", "hello world"], return_tensors="np", padding=True)
    assert out["input_ids"].tolist() == [[3, 4], [1, 2]]
    np.testing.assert_array_equal(out["pixel_values"], ours(images).pixel_values)


def test_encoded_images_pass_through_hfs_processor_to_texturevlms(rng):
    """HF's multimodal processors fetch and count images before the image processor sees
    them, refusing bytes: the wrapper's fetch decodes encoded images (bytes, file paths) with
    texturevlm's host decoders, so HF's processor gets arrays and texturevlm's the same
    pixels as from the bytes themselves."""
    from pathlib import Path

    photo = Path(__file__).parents[1] / "data" / "photos" / "f3.jpg"
    ours = CLIPImageProcessor(backend="cpu")
    processor = transformers.CLIPProcessor(image_processor=as_hf_processor(ours), tokenizer=tiny_tokenizer())
    want = ours([photo.read_bytes()]).pixel_values
    for images in ([photo.read_bytes()], [str(photo)]):
        out = processor(images=images, text=["a photo"], return_tensors="np")
        assert out["input_ids"].tolist() == [[3, 4]]
        np.testing.assert_array_equal(out["pixel_values"], want)


def test_a_folder_hfs_multimodal_processor_saved_loads_its_image_processor(rng, tmp_path):
    """transformers 5 saves a multimodal processor's image processor nested in
    processor_config.json, with no preprocessor_config.json: from_pretrained reads it there,
    as HF's AutoImageProcessor does, from the folder or from the file."""
    from texturevlm.processors import from_pretrained

    hf = transformers.CLIPProcessor(
        image_processor=transformers.CLIPImageProcessor(crop_size={"height": 112, "width": 112}),
        tokenizer=tiny_tokenizer(),
    )
    hf.save_pretrained(tmp_path)
    assert not (tmp_path / "preprocessor_config.json").exists()
    loaded = from_pretrained(tmp_path, backend="cpu")
    assert type(loaded) is CLIPImageProcessor and loaded.crop_size == {"height": 112, "width": 112}
    image = random_image(rng, (3, 300, 200))
    np.testing.assert_array_equal(
        from_pretrained(tmp_path / "processor_config.json", backend="cpu")(image).pixel_values,
        loaded(image).pixel_values,
    )
    assert loaded(image).pixel_values.shape == (1, 3, 112, 112)


def test_qwen2_vl_composes_and_expands_image_tokens_as_hfs_own(rng):
    """Qwen2VLProcessor with texturevlm's image and video processors against the same
    processor with HF's own: input_ids (each <|image_pad|> expanded to grid / merge^2
    tokens), image_grid_thw, and pixel_values (host images: HF's values)."""
    pytest.importorskip("torch", reason="HF's Qwen2VLProcessor needs a video processor, which needs torch")
    tokenizer = tiny_tokenizer()
    ours = transformers.Qwen2VLProcessor(
        image_processor=as_hf_processor(Qwen2VLImageProcessor(backend="cpu")),
        video_processor=as_hf_processor(Qwen2VLVideoProcessor(backend="cpu")),
        tokenizer=tokenizer,
    )
    theirs = transformers.Qwen2VLProcessor(
        image_processor=transformers.Qwen2VLImageProcessor(),
        video_processor=transformers.Qwen2VLVideoProcessor(),
        tokenizer=tokenizer,
    )
    images = [random_image(rng, (3, 300, 200)), random_image(rng, (3, 100, 500))]
    text = ["hello <|vision_start|><|image_pad|><|vision_end|>", "<|vision_start|><|image_pad|><|vision_end|> world"]
    got = ours(images=images, text=text, return_tensors="pt", padding=True)
    want = theirs(images=images, text=text, return_tensors="pt", padding=True)
    assert set(got.keys()) == set(want.keys())
    assert got["input_ids"].tolist() == want["input_ids"].tolist()
    assert got["image_grid_thw"].tolist() == want["image_grid_thw"].tolist()
    assert (got["pixel_values"] - want["pixel_values"]).abs().max().item() <= 2e-6
    sizes = [(300, 200), (100, 500)]
    assert ours._get_num_multimodal_tokens(image_sizes=sizes) == theirs._get_num_multimodal_tokens(image_sizes=sizes)


def test_idefics3_composes_into_idefics3processor(rng):
    """Idefics3Processor asks its image processor for rows and cols (return_row_col_info) and
    writes each image's tile tokens from them: with texturevlm's processor the same input_ids
    as with HF's PIL processor (both bicubic; HF's runs without torch), pixel_values within
    its couple of uint8 steps (test_processors_idefics3.py) and the same mask."""
    from texturevlm.processors import Idefics3ImageProcessor

    special = ["<fake_token_around_image>", "<image>", "<global-img>", "<end_of_utterance>"]
    special += [f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7)]
    vocab = {"<unk>": 0, "hello": 1, "world": 2, **{t: 3 + i for i, t in enumerate(special)}}
    model = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    model.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=model, unk_token="<unk>", pad_token="<unk>")
    tokenizer.add_special_tokens({"additional_special_tokens": special})
    config = {"size": {"longest_edge": 128}, "max_image_size": {"longest_edge": 32}}
    hf_image_processor = getattr(transformers, "Idefics3ImageProcessorPil", None)
    if hf_image_processor is None:
        pytest.skip(f"transformers {transformers.__version__} has no Idefics3ImageProcessorPil")
    ours = transformers.Idefics3Processor(
        image_processor=as_hf_processor(Idefics3ImageProcessor(backend="cpu", resample=3, **config)),
        tokenizer=tokenizer,
        image_seq_len=4,
    )
    theirs = transformers.Idefics3Processor(
        image_processor=hf_image_processor(resample=3, **config), tokenizer=tokenizer, image_seq_len=4
    )
    images = [[random_image(rng, (60, 90, 3))], [random_image(rng, (20, 20, 3)), random_image(rng, (90, 40, 3))]]
    text = ["hello <image>", "<image> world <image>"]
    got = ours(images=images, text=text, return_tensors="np", padding=True)
    want = theirs(images=images, text=text, return_tensors="np", padding=True)
    assert set(got.keys()) == set(want.keys())
    np.testing.assert_array_equal(got["input_ids"], want["input_ids"])
    np.testing.assert_array_equal(got["pixel_attention_mask"], want["pixel_attention_mask"])
    assert np.abs(got["pixel_values"] - want["pixel_values"]).max() <= 3 / 255 / 0.5
