"""Shared fixtures: seeded random images, the backends this machine has, and the Vulkan
validation layers on for every test (any message fails it)."""

from __future__ import annotations

import os

os.environ.setdefault("TVLM_VALIDATION", "1")  # before the first Vulkan context is made

import numpy as np
import pytest
import texturevlm as tv
from texturevlm import _core, _devices


def vulkan_reason() -> str:
    return tv.unavailable()["vulkan"]


def cuda_reason() -> str:
    if not tv.cuda_built():
        return "texturevlm was built without CUDA"
    why = tv.unavailable()["cuda"]
    if why:
        return f"no NVIDIA GPU: {why}"
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    return ""


needs_vulkan = pytest.mark.skipif(bool(vulkan_reason()), reason=f"no Vulkan device: {vulkan_reason()}")
needs_cuda = pytest.mark.skipif(bool(cuda_reason()), reason=cuda_reason() or "CUDA present")

try:  # HF's processors, the reference of the processor tests (optional: transformers)
    import transformers
except ImportError:
    transformers = None
needs_hf = pytest.mark.skipif(transformers is None, reason="transformers is not installed")


def has_torch() -> bool:
    try:
        import torch  # noqa: F401

        return True
    except ImportError:
        return False


needs_torch = pytest.mark.skipif(not has_torch(), reason="PyTorch is not installed")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def random_image(rng: np.random.Generator, shape, dtype=np.uint8) -> np.ndarray:
    if np.dtype(dtype) == np.uint8:
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    return rng.random(size=shape).astype(dtype)


@pytest.fixture(autouse=True)
def no_validation_messages():
    """Fails a test after which the shared Vulkan context logged a validation message."""
    yield
    for device in list(_devices._vulkan.values()):
        messages = device.validation_messages()
        assert not messages, "Vulkan validation: " + "\n".join(messages)


def tolerance(gradients: bool, half: bool, expected: np.ndarray) -> np.ndarray:
    """The engine's one sampling tolerance, elementwise."""
    flat = [_core.sample_tolerance(gradients, half, float(v)) for v in np.asarray(expected, np.float64).ravel()]
    return np.asarray(flat).reshape(np.shape(expected))
