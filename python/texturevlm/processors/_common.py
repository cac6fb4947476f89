"""What every processor shares: its output (a dict with attribute access, like HF's
BatchFeature), its config (a dict or a preprocessor_config.json on disk, never the
network), and running images through _resize in runs of one size."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .. import _tensors
from .._tensors import ImageSpec
from ._call_options import convert_outputs, split_call_kwargs
from ._resize import FILTERS, OUT_DTYPES, CudaCall, Normalize, Plan, cuda_launch, remember_call, write_host
from ._rules import OPENAI_CLIP_MEAN, OPENAI_CLIP_STD, ProcessorInputError, config_flag, config_number


class BatchFeature(dict):
    """The processor's outputs by key (pixel_values, image_grid_thw, ...), also readable as
    attributes (`out.pixel_values`), as transformers' BatchFeature is."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def to(self, *args: Any, **kwargs: Any) -> "BatchFeature":
        """Every torch tensor moved with tensor.to(*args, **kwargs)."""
        return BatchFeature({k: v.to(*args, **kwargs) if hasattr(v, "to") else v for k, v in self.items()})


def load_config(path_or_dict: Any) -> Dict[str, Any]:
    """A processor config: a dict, a preprocessor_config.json file, or a model folder
    holding one (as transformers saves them; nothing is downloaded)."""
    if isinstance(path_or_dict, dict):
        return dict(path_or_dict)
    path = os.fspath(path_or_dict)
    if os.path.isdir(path):
        for name in ("preprocessor_config.json", "video_preprocessor_config.json"):
            if os.path.isfile(os.path.join(path, name)):
                path = os.path.join(path, name)
                break
        else:
            raise ProcessorInputError(
                f"{path} has no preprocessor_config.json: pass the model's folder as "
                "transformers saved it, or the config file itself"
            )
    if not os.path.isfile(path):
        raise ProcessorInputError(
            f"no processor config at {path}: texturevlm reads configs from disk only "
            "(download the model's preprocessor_config.json first)"
        )
    try:
        with open(path) as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        raise ProcessorInputError(f"{path} is not a readable JSON config: {e}") from None
    if not isinstance(config, dict):
        raise ProcessorInputError(f"{path} holds {type(config).__name__}, not a config object")
    return config


def check_choice(value: str, allowed: Tuple[str, ...], name: str) -> str:
    if value not in allowed:
        raise ProcessorInputError(f"{name} is one of {', '.join(allowed)}, not {value!r}")
    return value


def check_resample(resample: Any) -> None:
    """Both filters stand in for bicubic: the resample every supported model config uses
    (3: PIL's BICUBIC; torchvision's InterpolationMode.BICUBIC has the value 'bicubic')."""
    value = getattr(resample, "value", resample)
    if value != 3 and str(value).lower() != "bicubic":
        raise ProcessorInputError(
            f"resample={resample!r}: texturevlm's processors resize as bicubic (3) does; use a config with resample 3"
        )


class Processor:
    """The config values every processor reads the same way (rescale, normalize, RGB
    conversion, resample) and texturevlm's own choices (filter, dtype, backend); subclasses
    read their size rules and compute a Plan per input size, kept in `_plans`."""

    def __init__(self, config: Dict[str, Any], filter: str, dtype: str, backend: str) -> None:
        c = config
        self.do_resize: bool = config_flag(c, "do_resize", True)
        self.do_rescale: bool = config_flag(c, "do_rescale", True)
        self.rescale_factor: float = config_number(c, "rescale_factor", 1 / 255)
        self.do_normalize: bool = config_flag(c, "do_normalize", True)
        self.image_mean = c["image_mean"] if c.get("image_mean") is not None else OPENAI_CLIP_MEAN
        self.image_std = c["image_std"] if c.get("image_std") is not None else OPENAI_CLIP_STD
        self.do_convert_rgb: bool = config_flag(c, "do_convert_rgb", True)
        self.resample = c.get("resample", 3)
        check_resample(self.resample)
        self.filter, self.dtype, self.backend = filter, dtype, backend
        self._config = dict(config)  # what variants for calls with keyword arguments start from
        self._variants: Dict[Any, "Processor"] = {}
        self._normalize = Normalize.of(
            self.do_rescale, self.rescale_factor, self.do_normalize, self.image_mean, self.image_std
        )
        self._plans: Dict[Any, Plan] = {}

    def __call__(self, images: Any, input_data_format: Optional[str] = None, **kwargs: Any) -> BatchFeature:
        """The processor's outputs for `images`. Keyword arguments as HF's processors take
        them: config values (do_resize, size, image_mean, ...; filter, dtype, backend) run this
        call as a processor built with them; return_tensors 'pt' / 'np' / 'jax'; others HF
        accepts are honoured where they change nothing and refused by name where they would."""
        overrides, return_tensors = split_call_kwargs(kwargs)
        processor = self._variant(overrides) if overrides else self
        return convert_outputs(processor._process(images, input_data_format), return_tensors)

    def preprocess(self, images: Any, **kwargs: Any) -> BatchFeature:
        """The same as calling the processor, as HF names it."""
        return self(images, **kwargs)

    def _process(self, images: Any, input_data_format: Optional[str]) -> BatchFeature:
        raise NotImplementedError

    def _variant(self, overrides: Dict[str, Any]) -> "Processor":
        """This processor with `overrides` applied to its config, made once per set of values."""
        key = tuple(sorted((name, repr(value)) for name, value in overrides.items()))
        variant = self._variants.get(key)
        if variant is None:
            own = {"filter": self.filter, "dtype": self.dtype, "backend": self.backend}
            variant = type(self)(**{**own, **self._call_config(overrides)})
            if len(self._variants) >= 16:
                self._variants.clear()
            self._variants[key] = variant
        return variant

    def _call_config(self, overrides: Dict[str, Any]) -> Dict[str, Any]:
        """The config a call with `overrides` runs with."""
        return {**self._config, **overrides}

    def _outputs(
        self,
        runner: "Runner",
        plans: List[Plan],
        shape: Tuple[int, ...],
        pending: Any,
        grids: Optional[List[List[int]]] = None,
    ) -> BatchFeature:
        """pixel_values (and image_grid_thw where `grids` are given) of the runner's images.
        A CUDA call is remembered (remember_call) for later calls of the images' layout,
        keeping neither the images nor the runner."""
        framework = runner.framework

        def outputs(values: Any) -> BatchFeature:
            out = BatchFeature(pixel_values=values)
            if grids is not None:
                out["image_grid_thw"] = grid_table(framework, grids)
            return out

        if runner.device != "cuda":
            return outputs(runner.run(plans, shape))
        call = runner.cuda_call(plans, shape)
        pointers = runner.pointers()
        remember_call(self, pending, pointers, lambda images: outputs(call(images)))
        return outputs(call(pointers))

    @classmethod
    def from_pretrained(cls, path: Any, **overrides: Any) -> Any:
        """From a model folder or preprocessor_config.json on disk (or a dict); keyword
        arguments override config values and take filter / dtype / backend."""
        return cls(**{**load_config(path), **overrides})


class Runner:
    """Images of one framework and device through plans, into one output tensor."""

    def __init__(self, specs: List[ImageSpec], filter: str, backend: str, out_dtype: str) -> None:
        self.specs = specs
        self.filter = check_choice(filter, FILTERS, "filter")
        self.out_dtype = check_choice(out_dtype, OUT_DTYPES, "dtype")
        first = specs[0]
        for s in specs:
            if (s.framework, s.device, s.device_index) != (first.framework, first.device, first.device_index):
                raise ProcessorInputError(
                    f"images from {first.framework} on {first.device}:{first.device_index} and {s.framework} on "
                    f"{s.device}:{s.device_index} in one call: pass images of one framework and device"
                )
        self.framework, self.device, self.index = first.framework, first.device, first.device_index
        if self.device == "cuda" and backend not in ("auto", "cuda"):
            raise ProcessorInputError(f"CUDA images run on backend 'cuda', not {backend!r}")
        if self.device != "cuda" and backend == "cuda":
            raise ProcessorInputError("backend 'cuda' takes CUDA tensors: move the images to the GPU first")
        self.backend = backend if self.device != "cuda" else "cuda"
        self.stream = _tensors.cuda_stream(self.framework, self.index) if self.device == "cuda" else 0

    def run(self, plans: List[Plan], shape: Tuple[int, ...]) -> Any:
        """Each spec i through plans[i], into one output of `shape`; consecutive specs of
        one size and plan share a launch."""
        if self.device == "cuda":
            return self.cuda_call(plans, shape)(self.pointers())
        parts = [write_host(run, plan, self.filter, self.backend) for run, plan in self._runs(plans)]
        values = np.concatenate(parts, axis=0).reshape(shape)
        return self.host_result(values)

    def cuda_call(self, plans: List[Plan], shape: Tuple[int, ...]) -> "CudaCall":
        """The call's CUDA work, as a CudaCall that later calls with images of the same
        layout (other pointers) can repeat."""
        launches, first, offset = [], 0, 0
        for run, plan in self._runs(plans):
            count = sum(s.batch for s in run)
            launches.append(
                (cuda_launch(run[0], plan, self.filter, count, offset, out_dtype=self.out_dtype), first, first + count)
            )
            first += count
            offset += plan.values_per_image() * count
        return CudaCall(self.framework, self.index, shape, self.out_dtype, launches)

    def pointers(self) -> List[int]:
        """Element 0 of every image, in order."""
        return [p for s in self.specs for p in s.image_pointers()]

    def host_result(self, values: np.ndarray) -> Any:
        if self.out_dtype == "float16":
            values = values.astype(np.float16)
        return _tensors.from_host(np.ascontiguousarray(values), self.framework, self.out_dtype)

    def _runs(self, plans: List[Plan]) -> List[Tuple[List[ImageSpec], Plan]]:
        runs: List[Tuple[List[ImageSpec], Plan]] = []
        for spec, plan in zip(self.specs, plans):
            if runs and runs[-1][1] == plan and _same_source(runs[-1][0][0], spec):
                runs[-1][0].append(spec)
            else:
                runs.append(([spec], plan))
        return runs

    def grid(self, rows: List[List[int]]) -> Any:
        return grid_table(self.framework, rows)


def grid_table(framework: str, rows: List[List[int]]) -> Any:
    """A grid_thw table as HF returns it: int64 [N, 3], on the host (no device work, no sync)."""
    array = np.asarray(rows, dtype=np.int64).reshape(-1, 3)
    if framework == "torch":
        import torch

        return torch.from_numpy(array)
    return array if framework in ("numpy", "cupy") else _tensors.from_host(array, framework)


def _same_source(a: ImageSpec, b: ImageSpec) -> bool:
    """Whether two images can share a launch: one size, dtype and layout (strides but the
    batch's; an unbatched image's batch stride is 0)."""
    return (a.width, a.height, a.dtype, a.strides[1:]) == (b.width, b.height, b.dtype, b.strides[1:])
