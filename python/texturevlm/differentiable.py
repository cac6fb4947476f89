"""Differentiable sampling: `sample_points(image, uv, lod)`, trilinear samples of the
image's box mip chain at explicit positions and levels (like nvdiffrast's `texture` op
with an explicit LOD), with gradients to the image, to uv and to lod.

Images are [C, H, W] or [B, C, H, W] feature maps of 1 to 64 channels (float32 or
float64; float16 and bfloat16 are converted to float32). The chain is the engine's exact
box (odd sizes included), so d loss / d image folds every level's gradient back through
the box's adjoint. Filtering is done in software in the image's precision, not by the
texture unit, whose 8-bit blend weights would make the forward disagree with the exact
backward (docs/differentiable.md).

torch tensors run as the custom op `torch.ops.texturevlm.sample_points` (registered with
torch.library, so autograd and torch.compile see one op): CUDA tensors on the current
stream with no host sync, CPU tensors through the double-precision CPU reference. NumPy
arrays take the reference forward (float64)."""

# No `from __future__ import annotations`: torch.library reads the ops' schemas from their
# annotations, which must be types, not strings.
import atexit
import functools
from typing import Any, List, Optional, Tuple

import numpy as np

from . import _core
from ._backends import full_levels
from ._core import Error
from ._tensors import dense, torch_empty

MAX_CHANNELS = 64


def sample_points(image: Any, uv: Any, lod: Any, layer: Any = None, levels: Optional[int] = None) -> Any:
    """Samples [..., C] of `image` at `uv` [..., 2] (texture coordinates: (0, 0) is the
    top-left corner, texel centres at (i + 0.5) / size), `lod` [...] (0 = level 0; clamped
    to the chain, where its gradient is 0) and `layer` [...] (integer, the batch image;
    default 0). `levels`: the chain's length (default: the full chain). Bilinear within a
    level with clamp-to-edge addressing, linear between levels.

    CUDA: a `layer` outside [0, B) is clamped and non-finite uv or lod give NaN samples
    (checking device values would need a host sync); host inputs are checked. NaN or
    infinite gradients reaching the backward raise texturevlm.Error at the next CUDA
    backward on the device, or at `check_gradients()`."""
    if type(image).__module__.startswith("torch"):
        return _torch_sample_points(image, uv, lod, layer, levels)
    return _numpy_sample_points(image, uv, lod, layer, levels)


def check_gradients(device: Any = None) -> None:
    """Raises texturevlm.Error if a backward of `sample_points` or `box_levels` (and what is
    built on them) on a CUDA device received NaN or infinite gradients (or its folded
    gradient overflowed), or a Gaussian field met a diagonal entry of L that is not positive
    and finite, since the last check. Synchronizes the device first, so call it
    where a training step ends, not inside one. `device`: a torch device or index
    (default: the current CUDA device).

    The kernels raise a flag in mapped host memory instead of syncing, so without this
    call a bad step is reported at the next CUDA backward (or field call) on the device (host tensors
    are checked at once). Does nothing where texturevlm was built without CUDA or torch is
    not installed."""
    try:
        import torch
    except ImportError:  # the CUDA backwards run as torch ops: none ran
        return
    if not _core.cuda_built() or not torch.cuda.is_available():
        return
    chosen = torch.device("cuda", device) if isinstance(device, int) else torch.device(device or "cuda")
    if chosen.type != "cuda":
        raise Error(f"check_gradients checks a CUDA device, not {chosen}: host tensors are checked at once")
    index = torch.cuda.current_device() if chosen.index is None else chosen.index
    torch.cuda.synchronize(index)
    if _core.cuda_take_refused_field(index):
        raise Error(
            f"a Gaussian field on cuda:{index} had a diagonal entry of L that is not positive and finite, "
            "and its values are NaN: parametrise L so its diagonal stays positive (fields.cholesky_from_log_diagonal)"
        )
    if _core.cuda_take_nonfinite(index):
        raise Error(
            f"a backward of texturevlm on cuda:{index} received NaN or infinite gradients: "
            "find where the loss or its gradient overflows"
        )


def box_levels(image: Any, levels: Optional[int] = None, channels_last: bool = False) -> List[Any]:
    """The exact box mip chain of a torch float `image` ([C, H, W] or [B, C, H, W]; [H, W, C]
    / [B, H, W, C] with channels_last), level 0 first, with gradients: d loss / d every
    level folds back into d loss / d image through the box's adjoint (exact for odd sizes).
    Level 0 is `image` itself; level l is max(1, W >> l) x max(1, H >> l). 1..64 channels;
    float16 and bfloat16 are filtered in float32 and returned in their own dtype. Levels
    1.. are channels last in memory (torch.channels_last strides; what the kernels write).
    What generate_mipmaps returns where the image requires grad."""
    import torch

    ops = _torch_ops()
    if not image.is_floating_point():
        raise Error(f"gradients need a float image, not {image.dtype}: convert with image.float()")
    if image.dim() not in (3, 4) or 0 in image.shape:
        raise Error(f"the image is [C, H, W] or [B, C, H, W] with positive sizes, not {list(image.shape)}")
    first = image.movedim(-1, -3) if channels_last else image
    batch = first if first.dim() == 4 else first.unsqueeze(0)
    b, c, h, w = batch.shape
    if not 1 <= c <= MAX_CHANNELS:
        raise Error(f"images have 1..{MAX_CHANNELS} channels, not {c}")
    n = _chain_levels(h, w, levels)
    work = batch if batch.dtype in (torch.float32, torch.float64) else batch.float()
    box_chain = ops.box_chain if torch.compiler.is_compiling() else _eager["box_chain"]
    coarse = box_chain(work, n)  # levels 1.., channels last
    out = [image]
    at = 0
    for level in range(1, n):
        lw, lh = max(1, w >> level), max(1, h >> level)
        values = coarse[at : at + b * c * lh * lw].view(b, lh, lw, c).permute(0, 3, 1, 2).to(image.dtype)
        at += b * c * lh * lw
        values = values if image.dim() == 4 else values[0]
        out.append(values.movedim(-3, -1) if channels_last else values)
    return out


def _chain_levels(height: int, width: int, levels: Optional[int]) -> int:
    full = full_levels(width, height)
    if levels is None:
        return full
    if not 1 <= levels <= full:
        raise Error(f"a {width}x{height} image has 1..{full} levels, not {levels}")
    return int(levels)


def _check_shapes(
    image_shape: Tuple[int, ...],
    uv_shape: Tuple[int, ...],
    lod_shape: Tuple[int, ...],
    layer_shape: Optional[Tuple[int, ...]],
) -> None:
    if len(image_shape) not in (3, 4):
        raise Error(f"the image is [C, H, W] or [B, C, H, W], not of shape {list(image_shape)}")
    channels = image_shape[-3]
    if not 1 <= channels <= MAX_CHANNELS or 0 in image_shape:
        raise Error(f"images have 1..{MAX_CHANNELS} channels and positive sizes; got shape {list(image_shape)}")
    if not uv_shape or uv_shape[-1] != 2 or tuple(uv_shape[:-1]) != tuple(lod_shape):
        raise Error(
            f"uv is [..., 2] and lod [...] with the same leading shape; got {list(uv_shape)} and {list(lod_shape)}"
        )
    if layer_shape is not None and tuple(layer_shape) != tuple(lod_shape):
        raise Error(f"layer has lod's shape {list(lod_shape)}, not {list(layer_shape)}")


# ---------------------------------------------------------------- NumPy (reference)


def _numpy_sample_points(image: Any, uv: Any, lod: Any, layer: Any, levels: Optional[int]) -> np.ndarray:
    image, uv, lod = (np.asarray(a) for a in (image, uv, lod))
    layer = None if layer is None else np.asarray(layer)
    _check_shapes(image.shape, uv.shape, lod.shape, None if layer is None else layer.shape)
    if image.dtype.kind != "f":
        raise Error(f"sample_points takes float images (feature maps), not {image.dtype}")
    batch = image.reshape((-1,) + image.shape[-3:]).astype(np.float64)
    n = _chain_levels(batch.shape[2], batch.shape[3], levels)
    out = _core.reference_sample_points(
        np.ascontiguousarray(batch), n, _flat(uv, 2), _flat(lod, 1), None if layer is None else _flat_layer(layer)
    )
    return out.reshape(tuple(lod.shape) + (batch.shape[1],))


def _flat(a: np.ndarray, width: int) -> np.ndarray:
    return np.ascontiguousarray(
        np.asarray(a, np.float64).reshape(-1, width) if width > 1 else np.asarray(a, np.float64).reshape(-1)
    )


def _flat_layer(layer: np.ndarray) -> np.ndarray:
    if layer.dtype.kind not in "iu":
        raise Error(f"layer holds integers, not {layer.dtype}")
    return np.ascontiguousarray(layer.reshape(-1).astype(np.int32))


# ---------------------------------------------------------------- torch

_ops: Any = None
_eager: "dict[str, Any]" = {}  # name -> eager autograd.Function.apply (_register_torch_ops)


def _torch_sample_points(image: Any, uv: Any, lod: Any, layer: Any, levels: Optional[int]) -> Any:
    import torch

    ops = _torch_ops()
    _check_shapes(tuple(image.shape), tuple(uv.shape), tuple(lod.shape), None if layer is None else tuple(layer.shape))
    if not image.is_floating_point():
        raise Error(
            f"sample_points takes float images (feature maps), not {image.dtype}: gradients need values that "
            "can change; convert with image.float() (and scale bytes by 1/255 if you want [0, 1])"
        )
    if not (uv.is_floating_point() and lod.is_floating_point()):
        raise Error("uv and lod are float tensors")
    if layer is not None and (layer.is_floating_point() or layer.is_complex()):
        raise Error(f"layer holds integers, not {layer.dtype}")
    for name, t in (("uv", uv), ("lod", lod), ("layer", layer)):
        if t is not None and t.device != image.device:
            raise Error(f"{name} is on {t.device} and the image on {image.device}: put them on one device")
    if image.dtype not in (torch.float32, torch.float64):
        image = image.float()  # float16 / bfloat16 features: filtered and differentiated in float32
    batch = image if image.dim() == 4 else image.unsqueeze(0)
    n = _chain_levels(batch.shape[2], batch.shape[3], levels)
    lead = tuple(lod.shape)
    flat_layer = None if layer is None else dense(layer.reshape(-1), torch.int32)
    # The image as it is: a channels-last one is the chain's level 0 in place.
    flat_uv = dense(uv if uv.dim() == 2 else uv.reshape(-1, 2), batch.dtype)
    flat_lod = dense(lod if lod.dim() == 1 else lod.reshape(-1), batch.dtype)
    if torch.compiler.is_compiling():
        out = ops.sample_points(batch, flat_uv, flat_lod, flat_layer, n)[0]
    else:
        out = _eager["sample_points"](batch, flat_uv, flat_lod, flat_layer, n)
    return out if len(lead) == 1 else out.reshape(lead + (batch.shape[1],))


def _torch_ops() -> Any:
    """torch.ops.texturevlm, with sample_points and its backward registered once."""
    global _ops
    if _ops is None:
        _register_torch_ops()
        import torch

        _ops = torch.ops.texturevlm
    return _ops


def _levels_last(packed: np.ndarray, b: int, c: int, w: int, h: int, levels: range, to_last: bool) -> np.ndarray:
    """Levels `levels` of a packed chain, each [b, c, h_l, w_l] (the reference's planes) to
    [b, h_l, w_l, c] (the CUDA kernels' channels last), or back."""
    parts, at = [], 0
    for l in levels:
        lw, lh = max(1, w >> l), max(1, h >> l)
        n = b * c * lh * lw
        part = packed[at : at + n]
        parts.append(
            (
                part.reshape(b, c, lh, lw).transpose(0, 2, 3, 1)
                if to_last
                else part.reshape(b, lh, lw, c).transpose(0, 3, 1, 2)
            ).ravel()
        )
        at += n
    return np.concatenate(parts) if parts else packed[:0]


def _register_torch_ops() -> None:
    import torch
    from torch import Tensor

    from ._tensors import torch_raw_stream

    def cuda_job(image: Tensor) -> Tuple[int, str, int, int]:
        index = image.device.index or 0
        return index, str(image.dtype).replace("torch.", ""), torch_raw_stream()(index), image.numel()

    @functools.lru_cache(maxsize=64)
    def chain_plan(index: int, dtype: str, b: int, c: int, w: int, h: int, levels: int, planar0: bool) -> Any:
        """The engine's launch plan of one chain shape (checked once, kept)."""
        return _core.CudaChain(index, dtype, b, c, w, h, levels, planar0)

    # Plans are engine objects: dropped before the interpreter tears the extension down (else
    # nanobind reports them as leaked at exit).
    atexit.register(chain_plan.cache_clear)

    def plan_of(image: Tensor, levels: int) -> Tuple[Any, int]:
        """The chain plan of `image` (its device, dtype, shape and layout) and its stream."""
        index, dtype, stream, _ = cuda_job(image)
        return chain_plan(index, dtype, *shape_args(image, levels), planar(image)), stream

    def shape_args(image: Tensor, levels: int) -> Tuple[int, int, int, int, int]:
        b, c, h, w = image.shape
        return b, c, w, h, levels

    def coarse_values(image: Tensor, levels: int) -> int:
        return coarse_values_of(*shape_args(image, levels))

    def coarse_values_of(b: int, c: int, w: int, h: int, levels: int) -> int:
        return sum(b * c * max(1, w >> l) * max(1, h >> l) for l in range(1, levels))

    channels_last = torch.channels_last

    def planar(image: Tensor) -> bool:
        """How the kernels read the image as level 0, in place: channels last where it is so
        in memory, else planar (copied first where it is neither). One stride test, no view
        (a permute costs an eager step microseconds)."""
        return not image.is_contiguous(memory_format=channels_last)

    def chain_buffers(image: Tensor, levels: int) -> Tuple[Any, int, Tensor, Tensor]:
        """The chain plan of `image` and its stream, level 0 (the image itself, or a planar
        copy where it is neither planar nor channels last in memory) and an uninitialised
        buffer for levels 1.. (packed, channels last)."""
        plan, stream = plan_of(image, levels)
        level0 = image.contiguous() if planar(image) else image
        coarse = torch_empty(coarse_values(image, levels), image.dtype, image.device)
        return plan, stream, level0, coarse

    def chain_of(image: Tensor, levels: int) -> Tuple[Tensor, Tensor]:
        """Level 0 (the image itself, or a planar copy where it is neither planar nor
        channels last in memory) and levels 1.. of its box chain (packed, channels last),
        built on the GPU."""
        plan, stream, level0, coarse = chain_buffers(image, levels)
        plan.build(level0.data_ptr(), coarse.data_ptr(), stream)
        return level0, coarse

    def grad_like(image: Tensor, planar0: Optional[bool] = None) -> Tensor:
        """An uninitialised gradient of the image laid out as the kernels read it: planar or
        channels last as the image is, or as `planar0` says where level 0 is a copy."""
        b, c, h, w = image.shape
        flat = planar(image) if planar0 is None else planar0
        # Made in its layout by one torch.empty_strided (new_empty, and a permute of it, cost
        # more host time each than a small step's kernels).
        strides = None if flat else (h * w * c, 1, w * c, c)
        return torch_empty((b, c, h, w), image.dtype, image.device, strides)

    def host_args(image: Tensor, uv: Tensor, lod: Tensor, layer: Optional[Tensor]) -> Tuple[Any, ...]:
        to64 = lambda t: np.ascontiguousarray(t.detach().cpu().numpy().astype(np.float64))  # noqa: E731
        return (
            to64(image),
            to64(uv),
            to64(lod),
            None if layer is None else np.ascontiguousarray(layer.cpu().numpy().astype(np.int32)),
        )

    def check_host_layers(image: Tensor, layer: Optional[Tensor]) -> None:
        if layer is not None and layer.numel() and (int(layer.min()) < 0 or int(layer.max()) >= image.shape[0]):
            raise Error(f"layer values are 0..{image.shape[0] - 1} (the batch's images)")

    # The op returns the samples and, on CUDA, the chain it built, which the backward reads
    # (building it again cost a box pass): level 0 where it is a copy (an empty tensor where
    # the image itself is level 0: outputs may not alias inputs), and the coarse levels.
    def cuda_forward(
        image: Tensor, uv: Tensor, lod: Tensor, layer: Optional[Tensor], levels: int
    ) -> Tuple[Tensor, Optional[Tensor], Tensor]:
        """The samples of CUDA tensors, level 0 where it is a copy (None where the image
        itself is level 0) and the coarse levels."""
        count, channels = lod.shape[0], image.shape[1]
        out = torch_empty((count, channels), image.dtype, image.device)
        plan, stream, level0, coarse = chain_buffers(image, levels)
        plan.forward(
            level0.data_ptr(),
            coarse.data_ptr(),
            uv.data_ptr(),
            lod.data_ptr(),
            0 if layer is None else layer.data_ptr(),
            count,
            out.data_ptr(),
            stream,
        )
        return out, (None if level0 is image else level0), coarse

    def sample_forward(
        image: Tensor, uv: Tensor, lod: Tensor, layer: Optional[Tensor], levels: int
    ) -> Tuple[Tensor, Tensor, Tensor]:
        if image.device.type == "cuda":
            out, level0, coarse = cuda_forward(image, uv, lod, layer, levels)
            return out, (image.new_empty(0) if level0 is None else level0), coarse
        check_host_layers(image, layer)
        i, u, lo, la = host_args(image, uv, lod, layer)
        out = torch.from_numpy(_core.reference_sample_points(i, levels, u, lo, la)).to(image.dtype)
        return out, image.new_empty(0), image.new_empty(0)

    sample_points_op = torch.library.custom_op("texturevlm::sample_points", mutates_args=())(sample_forward)

    @sample_points_op.register_fake
    def _(
        image: Tensor, uv: Tensor, lod: Tensor, layer: Optional[Tensor], levels: int
    ) -> Tuple[Tensor, Tensor, Tensor]:
        out = image.new_empty((lod.shape[0], image.shape[1]))
        if image.device.type != "cuda":
            return out, image.new_empty(0), image.new_empty(0)
        copied = planar(image) and not image.is_contiguous()
        level0 = image.new_empty(image.shape) if copied else image.new_empty(0)
        return out, level0, image.new_empty(coarse_values(image, levels))

    # `image_grad` False (the image takes no gradient: a model learning where to look):
    # d/d uv and d/d lod alone, and an empty tensor for the image. On CUDA that skips the
    # texel atomics and the fold, most of a backward's time; on the CPU the fold.
    def sample_backward(
        image: Tensor,
        level0: Tensor,
        coarse: Tensor,
        uv: Tensor,
        lod: Tensor,
        layer: Optional[Tensor],
        levels: int,
        grad_out: Tensor,
        image_grad: bool,
    ) -> Tuple[Tensor, Tensor, Tensor]:
        count = lod.shape[0]
        grad_out = dense(grad_out, image.dtype)
        if image.device.type == "cuda":
            chain0 = level0 if level0 is not None and level0.numel() else image
            # Without the image's gradient, none for the coarse levels either: their kernel
            # pointer is 0 and nothing is allocated for it (an eager step's torch calls cost
            # host time comparable to its kernels).
            grad_image = grad_like(image) if image_grad else image.new_empty(0)
            grad_coarse = torch_empty(coarse.shape[0], coarse.dtype, coarse.device) if image_grad else None
            grad_uv, grad_lod = torch.empty_like(uv), torch.empty_like(lod)
            plan, stream = plan_of(image, levels)
            plan.backward(
                chain0.data_ptr(),
                coarse.data_ptr(),
                uv.data_ptr(),
                lod.data_ptr(),
                0 if layer is None else layer.data_ptr(),
                count,
                grad_out.data_ptr(),
                grad_image.data_ptr() if image_grad else 0,
                grad_coarse.data_ptr() if grad_coarse is not None else 0,
                grad_uv.data_ptr(),
                grad_lod.data_ptr(),
                stream,
            )
            return grad_image, grad_uv, grad_lod
        if not bool(torch.isfinite(grad_out).all()):
            raise Error("the gradient reaching sample_points has non-finite values: find where the loss overflows")
        check_host_layers(image, layer)
        i, u, lo, la = host_args(image, uv, lod, layer)
        folded, g_uv, g_lod = _core.reference_sample_points_backward(
            i, levels, u, lo, la, np.ascontiguousarray(grad_out.numpy().astype(np.float64)), image_grad
        )
        grad_image = image.new_empty(0) if folded is None else torch.from_numpy(folded).to(image.dtype)
        return grad_image, torch.from_numpy(g_uv).to(image.dtype), torch.from_numpy(g_lod).to(image.dtype)

    backward_op = torch.library.custom_op("texturevlm::sample_points_backward", mutates_args=())(sample_backward)

    @backward_op.register_fake
    def _(
        image: Tensor,
        level0: Tensor,
        coarse: Tensor,
        uv: Tensor,
        lod: Tensor,
        layer: Optional[Tensor],
        levels: int,
        grad_out: Tensor,
        image_grad: bool,
    ) -> Tuple[Tensor, Tensor, Tensor]:
        if not image_grad:
            grad_image = image.new_empty(0)
        elif image.device.type == "cuda":
            grad_image = grad_like(image)
        else:
            grad_image = torch.empty_like(image, memory_format=torch.contiguous_format)
        return grad_image, torch.empty_like(uv), torch.empty_like(lod)

    # The box chain alone (generate_mipmaps with gradients): levels 1.., channels last, packed.
    def chain_forward(image: Tensor, levels: int) -> Tensor:
        if image.device.type == "cuda":
            return chain_of(image, levels)[1]
        b, c, w, h, n = shape_args(image, levels)
        packed = _core.reference_box_chain(np.ascontiguousarray(image.detach().numpy().astype(np.float64)), levels)
        coarse = _levels_last(packed[b * c * h * w :], b, c, w, h, range(1, n), to_last=True)
        return torch.from_numpy(coarse).to(image.dtype)

    box_chain_op = torch.library.custom_op("texturevlm::box_chain", mutates_args=())(chain_forward)

    @box_chain_op.register_fake
    def _(image: Tensor, levels: int) -> Tensor:
        return image.new_empty(coarse_values(image, levels))

    def chain_backward_impl(image: Tensor, grad_coarse: Tensor, levels: int) -> Tensor:
        b, c, w, h, _ = shape_args(image, levels)
        if grad_coarse.device.type == "cuda":
            folded = grad_coarse.contiguous().clone()  # folded in place; the incoming gradient stays as it was
            grad_image = grad_like(image)  # written whole by the fold
            index, dtype, stream, _ = cuda_job(folded)
            plan = chain_plan(index, dtype, b, c, w, h, levels, planar(image))
            plan.fold(grad_image.data_ptr(), folded.data_ptr(), stream)
            return grad_image
        if not bool(torch.isfinite(grad_coarse).all()):
            raise Error("the gradient reaching the box chain has non-finite values: find where the loss overflows")
        planes = _levels_last(grad_coarse.numpy().astype(np.float64), b, c, w, h, range(1, levels), to_last=False)
        packed = np.concatenate([np.zeros(b * c * w * h), planes])
        g = _core.reference_box_chain_adjoint(packed, b, c, w, h, levels)
        return torch.from_numpy(g).to(grad_coarse.dtype)

    box_chain_backward_op = torch.library.custom_op("texturevlm::box_chain_backward", mutates_args=())(
        chain_backward_impl
    )

    @box_chain_backward_op.register_fake
    def _(image: Tensor, grad_coarse: Tensor, levels: int) -> Tensor:
        if grad_coarse.device.type == "cuda":
            return grad_like(image)
        return torch.empty_like(image, memory_format=torch.contiguous_format)

    def chain_setup(ctx: Any, inputs: Tuple[Any, ...], output: Any) -> None:
        ctx.save_for_backward(inputs[0])  # for its shape and layout; its values are not read
        ctx.levels = inputs[1]

    def chain_backward(ctx: Any, grad: Tensor) -> Tuple[Any, ...]:
        return box_chain_backward_op(ctx.saved_tensors[0], grad, ctx.levels), None

    box_chain_op.register_autograd(chain_backward, setup_context=chain_setup)

    def setup_context(ctx: Any, inputs: Tuple[Any, ...], output: Any) -> None:
        image, uv, lod, layer, levels = inputs
        ctx.save_for_backward(image, output[1], output[2], uv, lod, layer)
        ctx.levels = levels
        ctx.mark_non_differentiable(output[1], output[2])
        ctx.set_materialize_grads(False)  # no zeros for the chain's gradient (a 1.3x-image fill)

    def backward(ctx: Any, grad: Optional[Tensor], _level0_grad: Any, _coarse_grad: Any) -> Tuple[Any, ...]:
        if grad is None:
            return None, None, None, None, None
        image, level0, coarse, uv, lod, layer = ctx.saved_tensors
        image_grad = ctx.needs_input_grad[0]
        grad_image, grad_uv, grad_lod = backward_op(image, level0, coarse, uv, lod, layer, ctx.levels, grad, image_grad)
        return (grad_image if image_grad else None), grad_uv, grad_lod, None, None

    sample_points_op.register_autograd(backward, setup_context=setup_context)

    # Eager calls take autograd.Functions over the same implementations: the custom ops'
    # dispatch costs more host time a call than a small job's GPU time; inside
    # torch.compile the ops above keep texturevlm in the graph.
    class SamplePoints(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, image: Tensor, uv: Tensor, lod: Tensor, layer: Optional[Tensor], levels: int) -> Tensor:
            # CUDA: no empty tensor standing for level 0 where it is the image (a torch call
            # each step; the custom op above needs one, its outputs being tensors).
            cuda = image.device.type == "cuda"
            out, level0, coarse = (cuda_forward if cuda else sample_forward)(image, uv, lod, layer, levels)
            ctx.save_for_backward(image, level0, coarse, uv, lod, layer)
            ctx.levels = levels
            return out

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx: Any, grad: Tensor) -> Tuple[Any, ...]:
            image, level0, coarse, uv, lod, layer = ctx.saved_tensors
            image_grad = ctx.needs_input_grad[0]
            grads = sample_backward(image, level0, coarse, uv, lod, layer, ctx.levels, grad, image_grad)
            return (grads[0] if image_grad else None), grads[1], grads[2], None, None

    class BoxChain(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, image: Tensor, levels: int) -> Tensor:
            ctx.save_for_backward(image)
            ctx.levels = levels
            return chain_forward(image, levels)

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx: Any, grad: Tensor) -> Tuple[Any, ...]:
            return chain_backward_impl(ctx.saved_tensors[0], grad, ctx.levels), None

    @functools.lru_cache(maxsize=64)
    def patch_job(index: int, dtype: Any, shape: Any, planar0: bool, patches: int, patch_size: int) -> Tuple[Any, ...]:
        """The chain plan of a patch job and its scratch layout: the coarse levels' values
        (rounded up to 64 so what follows stays aligned for vector loads) and the points."""
        b, c, h, w = shape
        levels = full_levels(w, h)
        plan = chain_plan(index, str(dtype).replace("torch.", ""), b, c, w, h, levels, planar0)
        coarse = -(-coarse_values_of(b, c, w, h, levels) // 64) * 64
        return plan, coarse, b * patches * patch_size * patch_size

    atexit.register(patch_job.cache_clear)

    @functools.lru_cache(maxsize=64)
    def patch_strides(n: int, c: int, p: int) -> Tuple[int, ...]:
        """The strides of patches [B, N, C, P, P] stored channels last, as [B, N, P, P, C]."""
        return (n * p * p * c, p * p * c, 1, p * c, c)

    def stored_channels_last(t: Tensor, n: int, c: int, p: int) -> bool:
        """Whether patches [B, N, C, P, P] are stored channels last (the strides of their
        size-1 dimensions aside, which no element is read through): a stride test, no view."""
        strides, expected = t.stride(), patch_strides(n, c, p)
        return strides == expected or all(size == 1 or s == e for size, s, e in zip(t.shape, strides, expected))

    class SamplePatches(torch.autograd.Function):
        """glimpse.sample_patches on CUDA in one call each way: the chain, the patches'
        points and their samples forward; the scatter, the fold and the rows' gradients
        backward (the composite of torch ops cost a launch and an autograd node per op).
        Each way allocates its output and one scratch buffer (the chain and the points
        forward; their gradients backward): in an eager step every torch call costs host time
        comparable to a small job's kernels."""

        @staticmethod
        def forward(ctx: Any, image: Tensor, meta: Tensor, patch_size: int) -> Tensor:
            b, c = image.shape[0], image.shape[1]
            n = meta.shape[1]
            index = image.device.index or 0
            last0 = not planar(image)  # level 0 read in place as it is
            plan, coarse, count = patch_job(index, image.dtype, image.shape, not last0, n, patch_size)
            level0 = image if last0 else image.contiguous()
            scratch = torch_empty(coarse + 4 * count, image.dtype, image.device)
            # [B, N, C, P, P] as returned, channels last in memory as the kernels write it:
            # made so by one empty_strided, not a permute of a [B, N, P, P, C] tensor.
            out = torch_empty(
                (b, n, c, patch_size, patch_size), image.dtype, image.device, patch_strides(n, c, patch_size)
            )
            base = scratch.data_ptr()
            plan.forward_patches(
                level0.data_ptr(),
                base,
                meta.data_ptr(),
                b,
                n,
                patch_size,
                base + coarse * scratch.element_size(),
                out.data_ptr(),
                torch_raw_stream()(index),
            )
            ctx.save_for_backward(image, None if level0 is image else level0, scratch)
            ctx.job = (plan, coarse, count, b, n, patch_size, index, last0)
            return out

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx: Any, grad: Tensor) -> Tuple[Any, ...]:
            image, level0, scratch = ctx.saved_tensors
            plan, coarse, count, b, n, p, index, last0 = ctx.job
            image_grad, meta_grad = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
            # Channels last where it is so in memory (elementwise losses of the patches, a
            # permuted view, keep their layout), read in place; else planar, as the patches
            # were returned, which the engine transposes into the work buffer in the
            # backward's own launches (a copy here cost a torch call).
            transposed = grad.dtype != image.dtype or not stored_channels_last(grad, n, image.shape[1], p)
            grad_out = dense(grad, image.dtype) if transposed else grad
            grad_image = grad_like(image, planar0=not last0) if image_grad else None
            # The coarse levels' gradient (where the image takes one), the points', then the
            # patches' gradient channels last (each part 64-value aligned for vector loads).
            ahead = coarse if image_grad else 0
            points = -(-3 * count // 64) * 64
            work = torch_empty(ahead + points + image.shape[1] * count, image.dtype, image.device)
            grad_meta = torch_empty((b, n, 5), image.dtype, image.device) if meta_grad else None
            base, item, at = scratch.data_ptr(), scratch.element_size(), work.data_ptr()
            plan.backward_patches(
                image.data_ptr() if level0 is None else level0.data_ptr(),
                base,
                b,
                n,
                p,
                base + coarse * item,
                grad_out.data_ptr(),
                at + (ahead + points) * item if transposed else 0,
                0 if grad_image is None else grad_image.data_ptr(),
                at if image_grad else 0,
                at + ahead * item,
                0 if grad_meta is None else grad_meta.data_ptr(),
                torch_raw_stream()(index),
            )
            return grad_image, grad_meta, None

    _eager.update(sample_points=SamplePoints.apply, box_chain=BoxChain.apply, sample_patches=SamplePatches.apply)


def cuda_patches(image: Any, meta: Any, patch_size: int) -> Any:
    """Patches [B, N, C, P, P] of a CUDA float32/float64 image [B, C, H, W] at metadata
    [B, N, 5] of its dtype, contiguous (glimpse.sample_patches checked both): one forward
    call and one backward call into the engine, differentiable in the image and the rows."""
    _torch_ops()
    return _eager["sample_patches"](image, meta, patch_size)
