"""Tensors in and out: which framework an input comes from, where its memory is, and
outputs allocated in the same framework on the same device (torch's caching allocator for
torch, so outputs cost no cudaMalloc after warm-up and work with CUDA graphs).

Nothing here copies an input: CUDA tensors are read in place through their strides."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from . import _core
from ._core import Error

#: dtype names the engine reads (bfloat16 maps to float32 textures).
DTYPES = ("uint8", "float16", "bfloat16", "float32")


def framework_of(x: Any) -> str:
    """'torch', 'numpy', 'cupy' or 'jax' for a tensor or array; raises Error otherwise."""
    module = type(x).__module__
    if module.startswith("torch"):
        return "torch"
    if isinstance(x, np.ndarray):
        return "numpy"
    if module.startswith("cupy"):
        return "cupy"
    if module.startswith(("jax", "jaxlib")):
        return "jax"
    if hasattr(x, "__dlpack__"):
        return "numpy"  # another host array: read through np.from_dlpack
    raise Error(
        f"expected an image tensor or array (torch, NumPy, CuPy, JAX or anything with __dlpack__), "
        f"got {type(x).__name__}: pass the image as a tensor of shape [C, H, W] or [B, C, H, W]"
    )


def device_of(x: Any, framework: str) -> Tuple[str, int]:
    """('cpu' or 'cuda', device index) of `x`, a tensor or array of `framework`
    (framework_of's); another device's type ('mps', ...) as torch names it."""
    if framework == "torch":
        return x.device.type, (x.device.index or 0) if x.device.type == "cuda" else 0
    if framework == "cupy":
        return "cuda", x.device.id
    if framework == "jax":
        dev = list(x.devices())[0]
        return ("cuda" if dev.platform == "gpu" else "cpu"), dev.id
    return "cpu", 0


@dataclass
class ImageSpec:
    """An input image as the engine sees it: element (b, c, y, x) of `data` lies
    `strides` elements from `ptr` (b, c, y, x order)."""

    framework: str
    device: str  # "cpu" or "cuda"
    device_index: int
    dtype: str  # one of DTYPES
    batch: int
    channels: int
    height: int
    width: int
    strides: Tuple[int, int, int, int]
    ptr: int
    batched: bool  # the input had a batch dimension
    channels_last: bool
    array: Any  # the input itself (kept alive while in use)
    #: CUDA images of one layout from separate tensors: image b's element 0 (else
    #: ptr + b * strides[0]).
    pointers: Optional[List[int]] = None

    def view(self) -> Any:
        """The engine's typed description of this CUDA image (a _core.TensorView: its
        pointer, dtype, strides and channels, checked once here)."""

        return _core.TensorView(self.ptr, self.dtype, list(self.strides), self.channels)

    def image_pointers(self) -> List[int]:
        """Element 0 of each image, in order."""
        if self.pointers is not None:
            return self.pointers
        step = self.strides[0] * ITEMSIZE[self.dtype]
        return [self.ptr + b * step for b in range(self.batch)]


def dense(t: Any, dtype: Any = None) -> Any:
    """`t` as a contiguous torch tensor of `dtype` (default its own): `t` itself where it
    already is one. In an eager step every torch call costs host time comparable to a small
    job's kernels, so the conversions that would change nothing are not called."""
    if dtype is not None and t.dtype != dtype:
        t = t.to(dtype)
    return t if t.is_contiguous() else t.contiguous()


#: Bytes per element of each dtype name.
ITEMSIZE = {"uint8": 1, "float16": 2, "bfloat16": 2, "float32": 4}


def image_spec(x: Any, channels_last: bool = False) -> ImageSpec:
    """Describes `x` ([C, H, W] or [B, C, H, W]; [H, W, C] / [B, H, W, C] with
    channels_last=True). Raises Error for other ranks, dtypes, channel counts or devices."""
    framework = framework_of(x)
    if framework == "numpy" and not isinstance(x, np.ndarray):
        x = np.from_dlpack(x)
    if framework == "torch":
        shape, dtype = tuple(x.shape), str(x.dtype).replace("torch.", "")
        strides = tuple(x.stride())
        device, index = device_of(x, framework)
        ptr = x.data_ptr()
    elif framework == "numpy":
        shape, dtype = x.shape, x.dtype.name
        strides = tuple(s // x.itemsize for s in x.strides) if x.itemsize else ()
        device, index, ptr = "cpu", 0, x.ctypes.data
    elif framework == "cupy":
        shape, dtype = x.shape, x.dtype.name
        strides = tuple(s // x.itemsize for s in x.strides)
        (device, index), ptr = device_of(x, framework), x.data.ptr
    else:  # jax: row-major buffers
        shape, dtype = tuple(x.shape), x.dtype.name
        strides = tuple(int(np.prod(shape[i + 1 :])) for i in range(len(shape)))
        device, index = device_of(x, framework)
        if device == "cuda":
            x.block_until_ready()  # JAX names no stream to order with: its writes land first
        ptr = x.unsafe_buffer_pointer()
    if device not in ("cpu", "cuda"):
        raise Error(f"images on device '{device}' are not supported: use a CPU or CUDA tensor")
    if len(shape) not in (3, 4):
        layout = "[H, W, C] or [B, H, W, C]" if channels_last else "[C, H, W] or [B, C, H, W]"
        raise Error(f"an image has rank 3 or 4 ({layout}), got shape {list(shape)}")
    if dtype not in DTYPES:
        raise Error(f"image dtype {dtype} is not supported: use uint8, float16, bfloat16 or float32")
    batched = len(shape) == 4
    if not batched:
        shape, strides = (1,) + tuple(shape), (0,) + tuple(strides)
    if channels_last:
        b, h, w, c = shape
        sb, sy, sx, sc = strides
    else:
        b, c, h, w = shape
        sb, sc, sy, sx = strides
    if c not in (3, 4):
        where = "last" if channels_last else "first (after the batch)"
        raise Error(
            f"an image has 3 or 4 channels, got {c} in shape {list(x.shape)} (channels {where}; "
            f"pass channels_last=True for [H, W, C] images)"
        )
    if h == 0 or w == 0 or b == 0:
        raise Error(f"image shape {list(x.shape)} is empty: every dimension must be at least 1")
    if min(sb, sc, sy, sx) < 0:
        raise Error("images with negative strides are not supported: pass a copy (x.copy() / x.clone())")
    return ImageSpec(
        framework,
        device,
        int(index),
        dtype,
        int(b),
        int(c),
        int(h),
        int(w),
        (int(sb), int(sc), int(sy), int(sx)),
        int(ptr),
        batched,
        channels_last,
        x,
    )


def host_layers(spec: ImageSpec) -> list:
    """The image's layers as interleaved host arrays [H, W, C] (uint8, float16 or float32),
    what the Vulkan and CPU backends upload."""
    return [np.ascontiguousarray(layer) for layer in host_layer_views(spec)]


def host_layer_views(spec: ImageSpec) -> Any:
    """The image's layers as [H, W, C] host views, strided as the input is (a planar image's
    channels stay planes): for readers that take any strides, without host_layers' copy."""
    x = spec.array
    if spec.framework == "torch":
        x = x.detach()
        if str(x.dtype) == "torch.bfloat16":
            x = x.float()
        x = x.cpu().numpy()
    elif spec.framework == "jax":
        x = np.asarray(x.astype("float32") if spec.dtype == "bfloat16" else x)
    elif spec.framework == "cupy":
        raise Error("a CuPy array lives on the GPU: use backend='cuda' (or 'auto')")
    if not spec.batched:
        x = x[None]
    return x if spec.channels_last else np.moveaxis(x, 1, -1)


def cuda_stream(framework: str, device_index: int, stream: Any = None) -> int:
    """The raw cudaStream_t to enqueue on: `stream` (a torch or CuPy stream, or a handle),
    else the framework's current stream on the device."""
    if stream is not None:
        if isinstance(stream, int):
            return stream
        for attribute in ("cuda_stream", "ptr"):
            if hasattr(stream, attribute):
                return int(getattr(stream, attribute))
        raise Error(
            f"stream must be a torch.cuda.Stream, a cupy Stream or a raw handle (int), got {type(stream).__name__}"
        )
    if framework == "torch":
        return torch_raw_stream()(device_index)
    if framework == "cupy":
        import cupy

        return cupy.cuda.get_current_stream().ptr
    return 0  # the legacy default stream: ordered with every blocking stream


def hand_over(outputs: Any, framework: str, device_index: int, stream: int) -> Any:
    """`outputs` as the caller may use them: JAX takes arrays without a stream to order on,
    so for JAX CUDA outputs the host waits for `stream`; every other framework orders on the
    stream the work was enqueued on (no wait)."""
    if framework == "jax" and stream is not None:
        from . import _core

        _core.cuda_synchronize(device_index, stream)
    return outputs


_raw_stream: Any = None


def torch_raw_stream() -> Any:
    """device index -> torch's current cudaStream_t: the accessor torch's own generated
    code uses (torch.cuda.current_stream() makes a Stream object, which costs far more)."""
    global _raw_stream
    if _raw_stream is None:
        try:
            from torch._C import _cuda_getCurrentRawStream as _raw_stream
        except ImportError:  # an older or newer torch: the public, slower way
            import torch

            _raw_stream = lambda index: torch.cuda.current_stream(index).cuda_stream  # noqa: E731
    return _raw_stream


def empty(framework: str, device: str, device_index: int, shape: Sequence[int], dtype: str) -> Any:
    """An uninitialised output in `framework` on the device (no copy will follow)."""
    if framework == "torch":
        return _torch_empty(shape, dtype, device_index if device == "cuda" else -1)
    if device == "cpu":
        return np.empty(tuple(shape), dtype=np.dtype(dtype))
    if framework == "cupy":
        import cupy

        with cupy.cuda.Device(device_index):
            return cupy.empty(tuple(shape), dtype=dtype)

    buffer, _ = _core.cuda_empty(device_index, list(shape), dtype)
    return jax_from_capsule(buffer, device_index) if framework == "jax" else buffer


class _CudaCapsule:
    """A DLPack capsule of CUDA memory as the array protocol JAX takes (it refuses bare
    capsules): consumed once, by the one from_dlpack that imports it."""

    def __init__(self, capsule: Any, device_index: int) -> None:
        self.capsule, self.device_index = capsule, device_index

    def __dlpack__(self, **_: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> Tuple[int, int]:
        return 2, self.device_index  # kDLCUDA


def jax_from_capsule(capsule: Any, device_index: int) -> Any:
    """A JAX array over the CUDA memory of a capsule from _core (no copy)."""
    import jax.dlpack

    return jax.dlpack.from_dlpack(_CudaCapsule(capsule, device_index))


_torch_targets: dict = {}


def _torch_empty(shape: Sequence[int], dtype: str, device_index: int) -> Any:
    """A new contiguous torch tensor, with the dtype and device objects made once (parsing
    them per call costs microseconds on the per-frame path). torch.empty_strided, not
    torch.empty: torch parses its arguments in about half the time, for the same tensor
    (docs/benchmarks.md, `bench calls`)."""
    key = (dtype, device_index)
    target = _torch_targets.get(key)
    if target is None:
        import torch

        target = (
            getattr(torch, dtype),
            torch.device("cuda", device_index) if device_index >= 0 else torch.device("cpu"),
            torch.empty_strided,
        )
        _torch_targets[key] = target
    shape = tuple(shape)
    return target[2](shape, contiguous_strides(shape), dtype=target[0], device=target[1])


def torch_empty(shape: Any, dtype: Any, device: Any, strides: Optional[Tuple[int, ...]] = None) -> Any:
    """A new torch tensor of `shape` (an int or a sequence), torch's `dtype` and `device`
    objects, contiguous or with `strides` (in elements: a permuted layout made as it is,
    without a view over a contiguous one): torch.empty_strided, as _torch_empty, for the
    autograd functions' outputs and scratch."""
    global _empty_strided
    if _empty_strided is None:
        import torch

        _empty_strided = torch.empty_strided
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    return _empty_strided(shape, strides or contiguous_strides(shape), dtype=dtype, device=device)


_empty_strided: Any = None


@functools.lru_cache(maxsize=256)
def contiguous_strides(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    """The strides, in elements, of a C-contiguous array of `shape`."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def pointer_and_strides(x: Any, framework: str) -> Tuple[int, Tuple[int, ...]]:
    """Data pointer and strides in elements of an output made by empty()."""
    if framework == "torch":
        return x.data_ptr(), tuple(x.stride())
    if framework == "cupy":
        return x.data.ptr, tuple(s // x.itemsize for s in x.strides)
    if framework == "jax":
        shape = x.shape
        return x.unsafe_buffer_pointer(), tuple(int(np.prod(shape[i + 1 :])) for i in range(len(shape)))
    return x.ctypes.data, tuple(s // x.itemsize for s in x.strides)


def pointer_and_bytes(x: Any, framework: str) -> Tuple[int, int]:
    """Data pointer and size in bytes of a contiguous output (what a sampler writes)."""
    if framework == "torch":
        return x.data_ptr(), x.numel() * x.element_size()
    if framework == "cupy":
        return x.data.ptr, x.nbytes
    if framework == "jax":
        return x.unsafe_buffer_pointer(), x.nbytes
    return x.ctypes.data, x.nbytes


def from_host(array: np.ndarray, framework: str, dtype: str = "") -> Any:
    """A host result in the caller's framework: torch CPU tensors share the NumPy memory,
    JAX arrays are put on JAX's CPU device. `dtype` 'bfloat16': float32 values converted
    (NumPy has no bfloat16)."""
    if framework == "torch":
        import torch

        tensor = torch.from_numpy(array)
        return tensor.to(torch.bfloat16) if dtype == "bfloat16" else tensor
    if framework == "jax":
        import jax.numpy as jnp

        result = jax_on_host(array)
        return result.astype(jnp.bfloat16) if dtype == "bfloat16" else result
    return array


def jax_on_host(array: np.ndarray) -> Any:
    """`array` as a JAX array on JAX's CPU device: a host input's results stay on the host
    where JAX also has a GPU (its default device, where jnp.asarray would put them)."""
    import jax

    return jax.device_put(np.ascontiguousarray(array), jax.devices("cpu")[0])


def host_values_beside(array: np.ndarray, like: Any, framework: str) -> Any:
    """A small host-made `array` (a mask, a grid) as an array of `like`'s framework on `like`'s
    device: CuPy's and JAX's new arrays would otherwise go to their default device."""
    if framework == "numpy":
        return array
    if framework == "cupy":
        import cupy

        with like.device:
            return cupy.asarray(array)
    import jax

    return jax.device_put(array, next(iter(like.devices())))


class torch_stream:
    """`with torch_stream(stream):` makes `stream` torch's current stream (None: unchanged)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.context: Any = None

    def __enter__(self) -> None:
        if self.stream is not None:
            import torch

            s = self.stream
            if isinstance(s, int):
                s = torch.cuda.ExternalStream(s)
            self.context = torch.cuda.stream(s)
            self.context.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self.context is not None:
            self.context.__exit__(*exc)
