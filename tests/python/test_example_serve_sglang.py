"""examples/serve_sglang.py: the request it builds for SGLang's offline engine, for a Qwen2-VL
processor saved with a tokenizer made offline, against HF's own processor on the same
photograph; and the call as SGLang's documented API takes it, on a stand-in engine (SGLang
and model weights cannot be fetched where the tests run). Needs torch: HF's Qwen2-VL
processor includes a video processor, which needs it."""

from __future__ import annotations

import importlib.util
import io
import sys
import types
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="HF's Qwen2VLProcessor needs a video processor, which needs torch")
transformers = pytest.importorskip("transformers", reason="transformers is not installed")
Image = pytest.importorskip("PIL.Image", reason="Pillow is not installed (the reference decoder)")
from test_processors_compose import tiny_tokenizer  # noqa: E402

EXAMPLE = Path(__file__).parents[2] / "examples" / "serve_sglang.py"
PHOTO = Path(__file__).parents[1] / "data" / "photos" / "f3.jpg"
# One user turn: each image's vision tokens, then the text (the words tiny_tokenizer knows).
TEMPLATE = (
    "{% for m in messages %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|> {% else %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endfor %}"
)


def example() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("serve_sglang", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def model(tmp_path: Path) -> Any:
    """A model folder as the Hub has one (tokenizer, chat template, preprocessor config), and
    HF's processor it was saved from."""
    hf = transformers.Qwen2VLProcessor(
        image_processor=transformers.Qwen2VLImageProcessor(),
        video_processor=transformers.Qwen2VLVideoProcessor(),
        tokenizer=tiny_tokenizer(),
        chat_template=TEMPLATE,
    )
    hf.save_pretrained(tmp_path)
    return tmp_path, hf


def decoded(path: Path) -> np.ndarray:
    """[H, W, 3] uint8 as HF's users load images (Pillow, then RGB)."""
    with Image.open(io.BytesIO(path.read_bytes())) as image:
        return np.asarray(image.convert("RGB"))


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_the_request_is_hfs_with_texturevlms_image_processor(model, device):
    """The prompt's tokens and grid exactly as HF's processor makes them from the Pillow-decoded
    photo. pixel_values: HF's values where the bytes are decoded on the host (libjpeg-turbo,
    as Pillow); on the GPU, nvJPEG's decode differs from Pillow's by at most one uint8 step on
    a few pixels (`bench encoded`: Qwen2-VL from GPU-decoded photos max 0.030, mean 0.00000
    off HF), which the bound covers with room."""
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    folder, hf = model
    serve = example()
    processor = serve.processor_for(str(folder))
    assert type(processor.image_processor.processor).__name__ == "Qwen2VLImageProcessor"
    prompt = serve.prompt_for(processor, "hello world", 1)
    assert prompt.count("<|image_pad|>") == 1
    request = serve.request_for(processor, prompt, [PHOTO.read_bytes()], device)
    image = torch.from_numpy(np.array(decoded(PHOTO))).permute(2, 0, 1)  # a writable copy for torch
    want = hf(images=[image.to(device)], text=[prompt], return_tensors="pt", device=device)
    (item,) = request["image_data"]
    assert item["format"] == "processor_output"
    assert request["input_ids"] == want["input_ids"][0].tolist()
    assert item["image_grid_thw"].tolist() == want["image_grid_thw"].tolist()
    got, expected = item["pixel_values"], want["pixel_values"]
    assert got.device.type == device and got.shape == expected.shape
    difference = (got.float().cpu() - expected.float().cpu()).abs()
    if device == "cpu":
        assert difference.max().item() <= 2e-6
    else:
        assert difference.mean().item() <= 1e-3 and difference.max().item() <= 0.05


def test_the_call_is_sglangs_documented_one(model, monkeypatch, capsys):
    """main() hands the request to sglang.Engine.generate as SGLang's docs call it:
    input_ids (ints) and one processor_output item; and shuts the engine down."""
    folder, _ = model
    calls: List[Dict[str, Any]] = []

    class Engine:
        def __init__(self, model_path: str) -> None:
            calls.append({"model_path": model_path})

        def generate(self, **kwargs: Any) -> Dict[str, str]:
            calls.append(kwargs)
            return {"text": "a photo"}

        def shutdown(self) -> None:
            calls.append({"shutdown": True})

    monkeypatch.setitem(sys.modules, "sglang", types.SimpleNamespace(Engine=Engine))
    assert example().main(["--model", str(folder), "--device", "cpu", str(PHOTO), "hello world"]) == 0
    assert calls[0] == {"model_path": str(folder)} and calls[2] == {"shutdown": True}
    call = calls[1]
    assert set(call) == {"input_ids", "image_data", "sampling_params"}
    assert all(type(t) is int for t in call["input_ids"])
    (item,) = call["image_data"]
    assert item["format"] == "processor_output" and {"pixel_values", "image_grid_thw"} <= set(item)
    assert "a photo" in capsys.readouterr().out


def test_missing_images_are_refused_before_any_work(model):
    folder, _ = model
    serve = example()
    with pytest.raises(SystemExit):
        serve.main(["--model", str(folder), "--dry-run", "no_such_photo.jpg", "hello"])
    with pytest.raises(SystemExit):
        serve.main(["--model", str(folder), "--dry-run", "hello"])
