"""Serving a VLM with SGLang, its images preprocessed by texturevlm on the GPU.

SGLang's offline engine takes a request's images already processed: HF's processor outputs
with `format="processor_output"`, and the prompt as `input_ids` (docs.sglang.io, "Query VLM
with Offline Engine"). Here HF's own multimodal processor builds that request, with
texturevlm's image processor inside it (`texturevlm.processors.hf.as_hf_processor`): the
text's image tokens are expanded as HF expands them, pixel_values are HF's values (the exact
filter), and JPEG bytes are decoded on the GPU (nvImageCodec, `pip install texturevlm[jpeg]`)
straight into the resize kernels.

    python examples/serve_sglang.py --model Qwen/Qwen2.5-VL-3B-Instruct photo.jpg "What is shown?"
    python examples/serve_sglang.py --model Qwen/Qwen2.5-VL-3B-Instruct --dry-run photo.jpg "..."

`--dry-run` builds the request and prints what would be sent, without SGLang.

What is tested, and what is not (tests/python/test_example_serve_sglang.py, on a machine with
torch): the request this file builds, for a Qwen2-VL processor saved with a small tokenizer
made offline, against HF's own processor on the same decoded photo (the same input_ids and
grid, pixel_values within the decoders' difference), and that it reaches a stand-in engine as
SGLang's documented call takes it. SGLang itself and a model's weights were not run: the
NVIDIA machine this was written for has no network to fetch either.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence


def processor_for(model: str) -> Any:
    """The model's HF multimodal processor (tokenizer, chat template) with texturevlm's image
    processor, read from the same preprocessor_config.json, in place of HF's."""
    import transformers
    from texturevlm.processors import from_pretrained
    from texturevlm.processors.hf import as_hf_processor

    processor = transformers.AutoProcessor.from_pretrained(model)
    processor.image_processor = as_hf_processor(from_pretrained(model))
    return processor


def prompt_for(processor: Any, question: str, images: int) -> str:
    """One user turn with `images` images and the question, in the model's chat template."""
    content: List[Dict[str, str]] = [{"type": "image"} for _ in range(images)]
    content.append({"type": "text", "text": question})
    messages = [{"role": "user", "content": content}]
    return processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)


def request_for(processor: Any, prompt: str, images: Sequence[Any], device: str) -> Dict[str, Any]:
    """SGLang's keyword arguments for one request: the prompt's input_ids (image tokens
    expanded) and the processor's outputs as one `processor_output` item (SGLang takes one
    such item per request, holding all its images). `images` are encoded bytes, file paths
    or arrays; with device 'cuda' they are decoded (texturevlm's decode_images: HF's
    processor takes decoded images only) and resized on the GPU."""
    from texturevlm.processors import decode_images

    decoded = decode_images(list(images), device=device)
    outputs = processor(images=decoded, text=[prompt], return_tensors="pt", device=device)
    return {
        "input_ids": outputs["input_ids"][0].tolist(),
        "image_data": [dict(outputs, format="processor_output")],
    }


def describe(request: Dict[str, Any]) -> str:
    """What a request holds, one line per field."""
    lines = [f"input_ids: {len(request['input_ids'])} tokens"]
    for key, value in request["image_data"][0].items():
        shape = getattr(value, "shape", None)
        if shape is not None:
            lines.append(f"{key}: {tuple(shape)} {value.dtype} on {value.device}")
        else:
            lines.append(f"{key}: {value!r}")
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a model folder or Hub name (Qwen2-VL, Qwen2.5-VL, ...)")
    parser.add_argument("images", nargs="+", help="JPEG or PNG files, then the question")
    parser.add_argument("--device", default="cuda", help="where the images are decoded and resized (default cuda)")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--dry-run", action="store_true", help="build and print the request; no SGLang")
    args = parser.parse_args(argv)
    *files, question = args.images
    if not files:
        parser.error("give at least one image file, then the question")
    missing = [f for f in files if not Path(f).is_file()]
    if missing:
        parser.error(f"no such image file: {missing[0]}")

    processor = processor_for(args.model)
    images = [Path(f).read_bytes() for f in files]
    request = request_for(processor, prompt_for(processor, question, len(images)), images, args.device)
    print(describe(request))
    if args.dry_run:
        return 0
    try:
        import sglang
    except ImportError:
        print("SGLang is not installed (pip install sglang); --dry-run builds the request without it", file=sys.stderr)
        return 1
    engine = sglang.Engine(model_path=args.model)
    try:
        out = engine.generate(**request, sampling_params={"max_new_tokens": args.max_new_tokens, "temperature": 0})
        print(out["text"])
    finally:
        engine.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
