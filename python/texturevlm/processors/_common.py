"""What every processor shares: its output (a dict with attribute access, like HF's
BatchFeature), its config (a dict or a preprocessor_config.json on disk, never the
network), and running images through _resize in runs of one size."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Tuple

import numpy as np

from .. import _tensors
from .._tensors import ImageSpec
from ._call_options import CONFIG_KWARGS, convert_outputs, split_call_kwargs
from ._composed import ComposedCall, ImageLaunch, composed_counts, composed_launches, keep_image_launches
from ._encoded import decode_encoded, has_encoded
from ._resize import (
    FILTER_ALIASES,
    FILTERS,
    KEPT_SIZES,
    OUT_DTYPES,
    RESAMPLES,
    CudaCall,
    Normalize,
    PendingCall,
    Plan,
    StagedLaunch,
    any_size_launches,
    cuda_launches,
    held_resizers,
    remember_call,
    write_host,
)
from ._rules import OPENAI_CLIP_MEAN, OPENAI_CLIP_STD, ProcessorInputError, config_flag, config_number


class KeptPlans(dict):
    """A processor's plans and per-size answers (tile grids, best resolutions), by input
    size: cleared when full, so that a server seeing ever new sizes keeps a bounded set."""

    LIMIT = KEPT_SIZES

    def __setitem__(self, key: Any, value: Any) -> None:
        if len(self) >= self.LIMIT:
            self.clear()
        super().__setitem__(key, value)


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
    """A processor config: a dict, a config file, or a model folder as transformers saves it
    (nothing is downloaded). In a folder, as transformers looks: the image processor nested
    in processor_config.json (how transformers 5 saves a multimodal processor), then
    preprocessor_config.json, then video_preprocessor_config.json."""
    if isinstance(path_or_dict, dict):
        return dict(path_or_dict)
    path = os.fspath(path_or_dict)
    if os.path.isdir(path):
        for name in ("processor_config.json", "preprocessor_config.json", "video_preprocessor_config.json"):
            file = os.path.join(path, name)
            config = _image_processor_in(file) if os.path.isfile(file) else None
            if config is not None:
                return config
        raise ProcessorInputError(
            f"{path} has neither an image processor in processor_config.json nor a "
            "preprocessor_config.json: pass the model's folder as transformers saved it, "
            "or the config file itself"
        )
    if not os.path.isfile(path):
        raise ProcessorInputError(
            f"no processor config at {path}: texturevlm reads configs from disk only "
            "(download the model's preprocessor_config.json first)"
        )
    config = _image_processor_in(path)
    if config is None:
        raise ProcessorInputError(
            f'{path} holds no image processor (no "image_processor" entry): pass the model\'s '
            "folder or its preprocessor_config.json"
        )
    return config


def _image_processor_in(path: str) -> Optional[Dict[str, Any]]:
    """The image processor's config in a config file: the file itself, or in a
    processor_config.json the one nested under "image_processor" (None where it has none)."""
    config = _read_json(path)
    if os.path.basename(path) != "processor_config.json":
        return config
    nested = config.get("image_processor")
    return dict(nested) if isinstance(nested, dict) else None


def _read_json(path: str) -> Dict[str, Any]:
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


def resample_name(resample: Any) -> str:
    """'bicubic' or 'bilinear' from a config's resample: PIL's number (3, 2), a
    PILImageResampling, or torchvision's InterpolationMode (whose values are the names)."""
    value = getattr(resample, "value", resample)
    if isinstance(value, int) and not isinstance(value, bool) and value in RESAMPLES:
        return RESAMPLES[value]
    if isinstance(value, str) and value.lower() in RESAMPLES.values():
        return value.lower()
    raise ProcessorInputError(
        f"resample={resample!r}: texturevlm's processors resize as bicubic (3) or bilinear (2) do; "
        "use a config with one of them"
    )


class Processor:
    """The config values every processor reads the same way (rescale, normalize, RGB
    conversion, resample) and texturevlm's own choices (filter, dtype, backend); subclasses
    read their size rules and compute a Plan per input size, kept in `_plans`."""

    #: The outputs' keys, as HF's class attribute names them.
    model_input_names = ["pixel_values"]
    #: resample where the config gives none (PIL's number, as HF's class attribute).
    default_resample = 3
    #: Call-time keyword arguments this processor's config reads beyond CONFIG_KWARGS.
    call_kwargs: FrozenSet[str] = frozenset()

    def __init__(self, config: Dict[str, Any], filter: str, dtype: str, backend: str) -> None:
        c = config
        self.do_resize: bool = config_flag(c, "do_resize", True)
        self.do_rescale: bool = config_flag(c, "do_rescale", True)
        self.rescale_factor: float = config_number(c, "rescale_factor", 1 / 255)
        self.do_normalize: bool = config_flag(c, "do_normalize", True)
        self.image_mean = c["image_mean"] if c.get("image_mean") is not None else OPENAI_CLIP_MEAN
        self.image_std = c["image_std"] if c.get("image_std") is not None else OPENAI_CLIP_STD
        self.do_convert_rgb: bool = config_flag(c, "do_convert_rgb", True)
        self.resample = c["resample"] if c.get("resample") is not None else self.default_resample
        self._resample = resample_name(self.resample)
        #: The exact filter's resample for host images where HF's differs from CUDA's
        #: (Plan.host_resample); None: the same.
        self._host_resample: Optional[str] = None
        self.filter = check_choice(FILTER_ALIASES.get(filter, filter), FILTERS, "filter")
        self.dtype, self.backend = dtype, backend
        self._config = dict(config)  # what variants for calls with keyword arguments start from
        self._variants: Dict[Any, "Processor"] = {}
        self._normalize = Normalize.of(
            self.do_rescale, self.rescale_factor, self.do_normalize, self.image_mean, self.image_std
        )
        self._plans: Dict[Any, Any] = KeptPlans()

    def __call__(self, images: Any, input_data_format: Optional[str] = None, **kwargs: Any) -> BatchFeature:
        """The processor's outputs for `images`. Keyword arguments as HF's processors take
        them: config values (do_resize, size, image_mean, ...; filter, dtype, backend) run this
        call as a processor built with them; return_tensors 'pt' / 'np' / 'jax'; others HF
        accepts are honoured where they change nothing and refused by name where they would.
        Encoded images (PNG / JPEG bytes or paths) are decoded first, on `device` where given
        (JPEGs on the GPU with nvImageCodec for 'cuda'; see _encoded.py); images not on
        `device` are copied there first, as HF's processors do."""
        overrides, return_tensors, device = split_call_kwargs(kwargs, self.call_kwargs)
        if device is not None or has_encoded(images):
            images = decode_encoded(images, device)
        processor = self._variant(overrides) if overrides else self
        return convert_outputs(processor._process(images, input_data_format), return_tensors)

    def preprocess(self, images: Any, **kwargs: Any) -> BatchFeature:
        """The same as calling the processor, as HF names it."""
        return self(images, **kwargs)

    def _process(self, images: Any, input_data_format: Optional[str]) -> BatchFeature:
        raise NotImplementedError

    def _plan(
        self,
        resized: Tuple[int, int],
        window: Tuple[int, int, int, int],
        merged: Optional[Tuple[int, int, int]] = None,
        tiles: Optional[Tuple[int, int]] = None,
    ) -> Plan:
        """A Plan with this processor's normalization and resample."""
        return Plan(resized, window, self._normalize, merged, self._resample, tiles, self._host_resample)

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

    def _with(self, kwargs: Optional[Dict[str, Any]]) -> "Processor":
        """This processor with the config values among `kwargs` (HF's images_kwargs, which
        also carry other keys; None meaning the processor's own) applied."""
        overrides = {
            k: v for k, v in (kwargs or {}).items() if (k in CONFIG_KWARGS or k in self.call_kwargs) and v is not None
        }
        return self._variant(overrides) if overrides else self

    def _call_config(self, overrides: Dict[str, Any]) -> Dict[str, Any]:
        """The config a call with `overrides` runs with."""
        return {**self._config, **overrides}

    def _outputs(
        self,
        runner: "Runner",
        parts: List["Part"],
        shape: Tuple[int, ...],
        pending: Optional[PendingCall],
        grids: Optional[List[List[int]]] = None,
        counts: Optional[Dict[str, List[int]]] = None,
        finish: Optional[Callable[[BatchFeature], BatchFeature]] = None,
        staged: Optional[Tuple[List[StagedLaunch], List[int], List[int]]] = None,
        composable: bool = False,
    ) -> BatchFeature:
        """pixel_values of the runner's images through `parts` (and image_grid_thw where
        `grids` are given; int64 [images] tables such as num_crops from `counts`), then
        `finish` (a family's own layout and tables). A CUDA call is remembered
        (remember_call) for later calls of the images' layout once its sizes were seen
        before (a first sight runs on resizers of any size: _resizer), keeping neither the images
        nor the runner; where the runner reads an image more than once (an image and its
        tiles), the remembered call picks the layout's pointers in the runner's order.
        `staged`: the runner reads intermediates, not the images: the launches that made
        them (resized_images' record), the pointers they read and each image's pointer
        after them; a remembered call repeats them on its images first. `composable`: the
        family composes lists in new orders (`_composed`), so the launches of each image
        that ran alone on resizers of its size are kept for them (_composed.py)."""
        framework = runner.framework

        def outputs(values: Any) -> BatchFeature:
            out = batch_feature(framework, values, grids, counts)
            return finish(out) if finish is not None else out

        if runner.device != "cuda":
            return outputs(runner.run(parts, shape))
        stages = staged[0] if staged is not None else []
        if pending is not None and any_size_launches([s.launch for s in stages]):
            pending = None  # a first sight of a size: not remembered (see _resizer)
        call = runner.cuda_call(parts, shape, remembered=pending is not None)
        pointers = runner.pointers()
        if composable and not stages and pending is not None:
            keep_image_launches(self, pending, call.launches, parts, pointers, shape, grids, counts)
        if pending is not None and not any_size_launches([launch for launch, _, _ in call.launches]):
            replay = replayed_call(call, pointers, pending.pointers, outputs, staged)
            if replay is not None:
                held = held_resizers([launch for launch, _, _ in call.launches] + [s.launch for s in stages])
                remember_call(self, pending, pending.pointers, replay, held)
        return outputs(call(pointers))

    def _composed(self, pending: Optional[PendingCall]) -> Optional[BatchFeature]:
        """The call's outputs from its images' kept launches (_composed.py), where it is a
        list of image layouts that earlier calls planned, not remembered yet (it is now, as
        a ComposedCall); else None."""
        launches = composed_launches(self, pending)
        if launches is None:
            return None
        assert pending is not None
        grids = [kept.grid for kept in launches] if launches[0].grid is not None else None
        counts = composed_counts(launches)

        def finish(values: Any) -> BatchFeature:
            return self._finish_composed(batch_feature("torch", values, grids, counts), launches)

        call = ComposedCall(
            launches,
            pending.layout[3].index or 0,
            self.dtype,
            self._slot_rows(launches),
            self.filter != "texture",  # _composed.BRANCHED says why
            finish,
        )
        held = held_resizers([piece for kept in launches for piece in kept.pieces])
        remember_call(self, pending, pending.pointers, call, held)
        return call(pending.pointers, replay=False)

    def _slot_rows(self, launches: List[ImageLaunch]) -> Optional[int]:
        """Rows of each image's slot where a composed call's pixel_values are per image and
        zero-padded (LLaVA): ComposedCall writes them so. None: the images' rows in turn."""
        return None

    def _finish_composed(self, out: BatchFeature, launches: List[ImageLaunch]) -> BatchFeature:
        """A composed call's outputs in the family's layout, as `finish` makes a planned
        call's (_outputs): unchanged here; LLaVA adds image_sizes."""
        return out

    @classmethod
    def from_pretrained(cls, path: Any, **overrides: Any) -> Any:
        """From a model folder or preprocessor_config.json on disk (or a dict); keyword
        arguments override config values and take filter / dtype / backend."""
        return cls(**{**load_config(path), **overrides})


def replayed_call(
    call: Callable[[List[int]], Any],
    pointers: List[int],
    images: List[int],
    outputs: Callable[[Any], BatchFeature],
    staged: Optional[Tuple[List[StagedLaunch], List[int], List[int]]],
) -> Optional[Callable[[List[int]], BatchFeature]]:
    """The call as a function of its images' pointers, for remember_call: the stages
    repeated on them (none where `staged` is None: the runner reads the images themselves),
    then the runner's reads (`pointers`) picked from what the stages left (`after`, one per
    image). `staged` is (stages, before, after): `before` the pointers the stages read. None
    where the runner or the stages read something else than the images (a composited RGBA
    copy): a replay could not start from them."""
    stages, before, after = staged if staged is not None else ([], images, images)
    position = {p: i for i, p in enumerate(after)}
    if before != images or len(after) != len(images) or not all(p in position for p in pointers):
        return None
    picks = [position[p] for p in pointers]
    if stages:

        def replay(current: List[int]) -> BatchFeature:
            current = list(current)
            keep: List[Any] = []  # the intermediates, held until the launches reading them are queued
            for stage in stages:
                stage.run(current, keep)
            return outputs(call([current[i] for i in picks]))

        return replay
    if picks == list(range(len(images))):  # the images in their order: nothing to pick
        return lambda current: outputs(call(current))
    return lambda current: outputs(call([current[i] for i in picks]))


@dataclass(frozen=True)
class Part:
    """Images [first, first + count) of a call (counted over its specs' images, in order),
    all of `specs`' layout, through `plan`: image k's values at output element offset + k *
    stride."""

    specs: Tuple[ImageSpec, ...]
    first: int
    plan: Plan
    offset: int
    stride: int
    count: int  # the specs' images

    @staticmethod
    def of(specs: Tuple[ImageSpec, ...], first: int, plan: Plan, offset: int, stride: int) -> "Part":
        return Part(specs, first, plan, offset, stride, sum(s.batch for s in specs))


def expanded_parts(
    specs: List[ImageSpec], outputs: List[List[Tuple[ImageSpec, Plan]]]
) -> Tuple[List[ImageSpec], List[Part], int]:
    """Each image of specs[i] written as the outputs outputs[i], in their order, image after
    image: each output is a source (specs[i] itself or a crop of it, so of its batch) through
    a plan. Consecutive images whose outputs read sources of one layout through the same
    plans share one part per output kind (a launch each, whatever the run's length: a launch
    per image and output cost a batch more host time than its GPU work). Returns the
    runner's specs (each part's sources, part after part), the parts and the values written."""
    run_specs: List[ImageSpec] = []
    parts: List[Part] = []
    first = base = 0
    i = 0
    while i < len(specs):
        outs = outputs[i]
        end = i + 1
        while end < len(specs) and _same_outputs(outs, outputs[end]):
            end += 1
        stride = sum(plan.values_per_image() for _, plan in outs)
        offset = base
        for k, (_, plan) in enumerate(outs):
            sources = tuple(outputs[m][k][0] for m in range(i, end))
            run_specs.extend(sources)
            part = Part.of(sources, first, plan, offset, stride)
            parts.append(part)
            first += part.count
            offset += plan.values_per_image()
        base += stride * sum(spec.batch for spec in specs[i:end])
        i = end
    return run_specs, parts, base


def _same_outputs(a: List[Tuple[ImageSpec, Plan]], b: List[Tuple[ImageSpec, Plan]]) -> bool:
    """Whether two images' outputs can share launches: as many, through equal plans, from
    sources of one layout."""
    return len(a) == len(b) and all(pa == pb and _same_source(sa, sb) for (sa, pa), (sb, pb) in zip(a, b))


class Runner:
    """Images of one framework and device through plans, into one output tensor."""

    def __init__(self, specs: List[ImageSpec], filter: str, backend: str, out_dtype: str) -> None:
        self.specs = specs
        self.filter = check_choice(FILTER_ALIASES.get(filter, filter), FILTERS, "filter")
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

    def parts(self, plans: List[Plan]) -> List[Part]:
        """Each spec i through plans[i], packed in order; consecutive specs of one layout and
        plan share a part (a launch)."""
        parts, first, offset = [], 0, 0
        for run, plan in self._runs(plans):
            part = Part.of(tuple(run), first, plan, offset, plan.values_per_image())
            parts.append(part)
            first += part.count
            offset += part.stride * part.count
        return parts

    def run(self, parts: List[Part], shape: Tuple[int, ...]) -> Any:
        """The parts' values in one output of `shape`."""
        if self.device == "cuda":
            return self.cuda_call(parts, shape)(self.pointers())
        size = int(np.prod(shape))
        flat = np.empty(size, np.float32)
        for part in parts:
            per_image, at = part.plan.values_per_image(), 0
            for spec in part.specs:
                # An image's values are written in its place: a spec's images at once where
                # the part's images are back to back, else one at a time (another output's
                # values, a thumbnail's, between them); a batch there goes through a copy.
                start = part.offset + at * part.stride
                if part.stride == per_image or spec.batch == 1:
                    write_host(spec, part.plan, self.filter, self.backend, out=flat[start:][: spec.batch * per_image])
                else:
                    values = write_host(spec, part.plan, self.filter, self.backend).reshape(spec.batch, -1)
                    for k in range(spec.batch):
                        flat[start + k * part.stride :][:per_image] = values[k]
                at += spec.batch
        return self.host_result(flat.reshape(shape))

    def cuda_call(self, parts: List[Part], shape: Tuple[int, ...], remembered: bool = False) -> "CudaCall":
        """The call's CUDA work, as a CudaCall that later calls with images of the same
        layout (other pointers) can repeat (`remembered`: they will, on stream branches)."""
        runs = cuda_launches(
            [(part.specs[0], part.plan, part.count, part.offset, part.stride) for part in parts],
            self.filter,
            self.out_dtype,
            branched=remembered,
        )
        launches = [(run, part.first, part.first + part.count) for run, part in zip(runs, parts)]
        return CudaCall(self.framework, self.index, shape, self.out_dtype, launches, remembered)

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


def batch_feature(
    framework: str, values: Any, grids: Optional[List[List[int]]], counts: Optional[Dict[str, List[int]]]
) -> BatchFeature:
    """pixel_values, then image_grid_thw where `grids` are given and the per-image `counts`
    tables (num_crops, ...), as the processors return them."""
    out = BatchFeature(pixel_values=values)
    if grids is not None:
        out["image_grid_thw"] = grid_table(framework, grids)
    for key, numbers in (counts or {}).items():
        out[key] = int_table(framework, numbers)
    return out


def grid_table(framework: str, rows: List[List[int]]) -> Any:
    """A grid_thw table as HF returns it: int64 [N, 3], on the host (no device work, no sync)."""
    return _host_table(framework, np.asarray(rows, dtype=np.int64).reshape(-1, 3))


def int_table(framework: str, numbers: List[int]) -> Any:
    """A per-image count (num_crops, num_patches) as HF returns it with return_tensors: int64
    [images], on the host."""
    return _host_table(framework, np.asarray(numbers, dtype=np.int64))


def _host_table(framework: str, array: np.ndarray) -> Any:
    if framework == "torch":
        import torch

        return torch.from_numpy(array)
    return array if framework in ("numpy", "cupy") else _tensors.from_host(array, framework)


def _same_source(a: ImageSpec, b: ImageSpec) -> bool:
    """Whether two images can share a launch: one size, dtype and layout (strides but the
    batch's; an unbatched image's batch stride is 0)."""
    return (a.width, a.height, a.dtype, a.strides[1:]) == (b.width, b.height, b.dtype, b.strides[1:])


def array_module(framework: str) -> Any:
    """NumPy's namespace for host arrays, CuPy's or jax.numpy for theirs."""
    if framework == "cupy":
        import cupy

        return cupy
    if framework == "jax":
        import jax.numpy as jnp

        return jnp
    return np


def padded_groups(values: Any, counts: List[int], do_pad: bool, framework: str) -> Any:
    """[sum of counts, ...] -> [groups, most, ...] zero-filled after each group's own rows
    (do_pad), or a list of each group's rows without do_pad; one reshape where every group
    has as many. The groups are a family's per-image rows (LLaVA) or per-sample frames
    (Idefics3). JAX arrays are immutable: they are stacked, not written into."""
    rest = tuple(values.shape[1:])
    if len(set(counts)) == 1:
        return values.reshape((len(counts), counts[0]) + rest)
    starts = [sum(counts[:i]) for i in range(len(counts))]
    rows = [values[s : s + n] for s, n in zip(starts, counts)]
    if not do_pad:
        return rows
    most = max(counts)
    if framework == "torch":
        out = values.new_zeros((len(counts), most) + rest)
        for i, r in enumerate(rows):
            out[i, : r.shape[0]] = r
        return out
    # Padded rather than concatenated with new zeros: new arrays go to the framework's default
    # device (JAX's GPU where it has one), a padded one stays where its rows are.
    xp = array_module(framework)
    return xp.stack([xp.pad(r, [(0, most - r.shape[0])] + [(0, 0)] * len(rest)) for r in rows])
