"""Keyword arguments at call time, as HF's processors take them: the ones that configure a
processor (do_resize, size, image_mean, ..., and texturevlm's filter / dtype / backend) run
the call on a variant of the processor built with them; return_tensors converts host
outputs between NumPy and torch; the rest HF accepts are honoured where they change nothing
(data_format='channels_first', disable_grouping) and refused by name where they would;
device says where encoded images (bytes, paths) are decoded."""

from __future__ import annotations

from typing import Any, Dict, FrozenSet, Tuple

from .. import _tensors
from ._rules import ProcessorInputError

#: Call-time arguments that configure the processor (HF's ImagesKwargs that texturevlm's
#: processors read, Qwen2-VL's, Gemma 3's and GotOcr2 / InternVL's own, and texturevlm's).
CONFIG_KWARGS = frozenset(
    {
        "do_resize",
        "size",
        "crop_size",
        "do_center_crop",
        "resample",
        "do_rescale",
        "rescale_factor",
        "do_normalize",
        "image_mean",
        "image_std",
        "do_convert_rgb",
        "min_pixels",
        "max_pixels",
        "patch_size",
        "temporal_patch_size",
        "merge_size",
        "do_pan_and_scan",
        "pan_and_scan_min_crop_size",
        "pan_and_scan_max_num_crops",
        "pan_and_scan_min_ratio_to_activate",
        "crop_to_patches",
        "min_patches",
        "max_patches",
        "filter",
        "dtype",
        "backend",
    }
)

#: Accepted with these values only (None: the processor's own); anything else is refused.
_NO_OP_VALUES = {
    "data_format": (None, "channels_first"),
    "do_pad": (None, False),
    "default_to_square": (None,),
}
_WHY = {
    "data_format": "outputs are channels first, as HF's default",
    "do_pad": "texturevlm's processors do not pad",
    "default_to_square": "the size rules are the processor's config's",
}

_FRAMEWORKS = {"pt": "torch", "np": "numpy", "jax": "jax"}


def split_call_kwargs(kwargs: Dict[str, Any], own: FrozenSet[str] = frozenset()) -> Tuple[Dict[str, Any], Any, Any]:
    """(config overrides, return_tensors, device) from a call's keyword arguments; None values
    mean the processor's own, as in HF; `own` names config values only this processor reads
    (LLaVA's image_grid_pinpoints, do_pad). Raises ProcessorInputError naming an argument it
    cannot honour."""
    overrides: Dict[str, Any] = {}
    return_tensors = device = None
    for name, value in kwargs.items():
        if value is None:
            continue
        if name in CONFIG_KWARGS or name in own:
            overrides[name] = value
        elif name == "return_tensors":
            return_tensors = getattr(value, "value", value)
            if return_tensors not in _FRAMEWORKS:
                raise ProcessorInputError(
                    f"return_tensors={value!r}: texturevlm returns 'pt' (torch), 'np' (NumPy) or 'jax' outputs"
                )
        elif name == "device":
            device = value
        elif name == "disable_grouping":
            continue  # a speed hint to HF's fast processors: texturevlm groups images by size itself
        elif name in _NO_OP_VALUES:
            if getattr(value, "value", value) not in _NO_OP_VALUES[name]:
                raise ProcessorInputError(f"{name}={value!r} is not supported: {_WHY[name]}")
        else:
            raise ProcessorInputError(
                f"unknown keyword argument {name!r}: the processor takes "
                f"{', '.join(sorted(CONFIG_KWARGS | own | {'return_tensors', 'input_data_format', 'device'}))}"
            )
    return overrides, return_tensors, device


def convert_outputs(outputs: Dict[str, Any], return_tensors: Any) -> Dict[str, Any]:
    """Every output as `return_tensors` asks: host arrays and tensors converted between
    NumPy and torch (sharing memory); CUDA outputs stay on their device, so asking for NumPy
    for them is refused (a host copy and a sync the caller should make knowingly)."""
    if return_tensors is None:
        return outputs
    want = _FRAMEWORKS[return_tensors]
    for key, value in outputs.items():
        if isinstance(value, (list, tuple)):  # per-image lists (Idefics3's rows and cols) stay lists, as HF's do
            continue
        have = _tensors.framework_of(value)
        if have == want:
            continue
        if have == "torch" and want == "numpy" and value.device.type == "cpu":
            outputs[key] = value.numpy()
        elif have == "numpy" and want == "torch":
            import torch

            outputs[key] = torch.from_numpy(value)
        else:
            where = f" on {value.device}" if have == "torch" else ""
            raise ProcessorInputError(
                f"return_tensors={return_tensors!r} for {have} outputs{where}: pass the images as {want} "
                "arrays, or convert the outputs yourself"
            )
    return outputs
