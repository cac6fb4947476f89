"""Learnable fields of anisotropic Gaussians (docs/fields.md):

    f(x) = sum_n w_n exp(-|v_n|^2 / 2),   L_n v_n = x - mu_n

in 2D (the image plane) or 3D. `gaussian_field(points, means, cholesky, weights)` is one
torch.library op with autograd (fused CUDA kernels for CUDA tensors on the current stream,
the double CPU reference for host tensors), so torch.compile keeps working;
`GaussianField` is the nn.Module that learns one; `saliency_map` and `fixations_from_field`
turn a 2D field into saliency and fixations for the foveated layouts (and for video:
`texturevlm.video.frames(saliency=...)` takes a field per frame).

    field = tv.fields.GaussianField(num_gaussians=1000, volume_size=1.0).cuda()
    values = field(points)                # points [B, 3] -> values [B]

The Cholesky factors are packed row by row: [L00, L10, L11, L20, L21, L22] (3D) or
[L00, L10, L11] (2D)."""

# No `from __future__ import annotations`: torch.library reads the ops' schemas from their
# annotations.
import atexit
import functools
import math
import sys
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._checks import whole
from ._core import Error
from ._tensors import dense

_ops: Any = None

__all__ = [
    "GaussianField",
    "cholesky_from_log_diagonal",
    "cholesky_from_scale_rotation",
    "fixations_from_field",
    "gaussian_field",
    "saliency_map",
]

_eager: "dict[str, Any]" = {}  # name -> eager autograd.Function.apply (_register_torch_ops)


def _triangle(dims: int) -> int:
    return dims * (dims + 1) // 2


def _check_shapes(points: Any, means: Any, cholesky: Any, weights: Any) -> None:
    """The four arrays' shapes (torch tensors and NumPy arrays alike)."""
    if means.ndim != 2 or means.shape[1] not in (2, 3):
        raise Error(f"means are [N, D] with D = 2 or 3, got {list(means.shape)}")
    n, d = means.shape
    if n == 0:
        raise Error("a Gaussian field needs at least one Gaussian (N = 0)")
    if points.ndim != 2 or points.shape[1] != d:
        raise Error(f"points are [B, {d}] for a {d}D field, got {list(points.shape)}")
    if points.shape[0] == 0:
        raise Error("no points to evaluate the field at (B = 0)")
    if tuple(cholesky.shape) != (n, _triangle(d)):
        raise Error(
            f"cholesky is [N, {_triangle(d)}] (the lower triangle of L, row by row), got {list(cholesky.shape)}"
        )
    if tuple(weights.shape) != (n,):
        raise Error(f"weights are [N] = [{n}], got {list(weights.shape)}")


def _check(points: Any, means: Any, cholesky: Any, weights: Any) -> None:
    import torch

    _check_shapes(points, means, cholesky, weights)
    tensors = {"points": points, "means": means, "cholesky": cholesky, "weights": weights}
    dtypes = {t.dtype for t in tensors.values()}
    if len(dtypes) != 1 or points.dtype not in (torch.float32, torch.float64):
        raise Error(
            "points, means, cholesky and weights must share one dtype, float32 or float64: got "
            + ", ".join(f"{k} {t.dtype}" for k, t in tensors.items())
        )
    if len({t.device for t in tensors.values()}) != 1:
        raise Error(
            "points, means, cholesky and weights must be on one device: got "
            + ", ".join(f"{k} {t.device}" for k, t in tensors.items())
        )


def gaussian_field(points: Any, means: Any, cholesky: Any, weights: Any) -> Any:
    """Field values [B] at points [B, D] for means [N, D], cholesky [N, D(D+1)/2] (row-packed
    lower triangles with positive diagonals) and weights [N]; differentiable in all four.

    CUDA tensors run the fused kernels on the current stream (float32 or float64); host
    tensors run the double reference. NumPy arrays (no torch needed) run the double
    reference too and return a float64 NumPy array, without gradients. Raises Error for
    mismatched shapes, dtypes or devices, N = 0 or B = 0, and for NaN values or a diagonal
    entry of L that is not positive and finite. Host inputs are checked at once; CUDA inputs
    are checked by the kernel as it reads them (reading them back would need a host sync):
    the values it reaches are NaN and the error is raised by the next field call on the
    device, or by `texturevlm.check_gradients()`. Parametrise L so its diagonal stays
    positive (`cholesky_from_log_diagonal`)."""
    arrays = (points, means, cholesky, weights)
    if all(isinstance(a, np.ndarray) for a in arrays):
        return _numpy_field(*arrays)
    import torch

    _check(points, means, cholesky, weights)
    ops = _torch_ops()
    # Eager calls skip torch.library's dispatch (the op's own autograd.Function, same
    # kernels): at N = 1000 x B = 500 the dispatch cost more than the kernels.
    call = ops.gaussian_field if torch.compiler.is_compiling() else _eager["gaussian_field"]
    return call(dense(points), dense(means), dense(cholesky), dense(weights))


def _numpy_field(points: np.ndarray, means: np.ndarray, cholesky: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """gaussian_field of NumPy arrays: the double reference (engine/fields), which refuses NaN
    and non-positive diagonals."""
    _check_shapes(points, means, cholesky, weights)
    named = {"points": points, "means": means, "cholesky": cholesky, "weights": weights}
    for name, a in named.items():
        if a.dtype.kind not in "fiu":
            raise Error(f"{name} must hold real numbers (float32 or float64), got dtype {a.dtype}")
    doubles = [np.ascontiguousarray(a, dtype=np.float64) for a in (points, means, cholesky, weights)]
    values, _ = _core.reference_gaussian_field(*doubles, False)
    return values


def cholesky_from_log_diagonal(log_diagonal: Any, off_diagonal: Any, eps: float = 1e-6) -> Any:
    """Packed L [N, D(D+1)/2] from log_diagonal [N, D] and off_diagonal [N, D(D-1)/2] (row by
    row): the diagonal is exp(log) + eps, so it stays positive whatever the optimiser does."""
    import torch

    n, d = log_diagonal.shape
    if off_diagonal.shape != (n, d * (d - 1) // 2):
        raise Error(f"off_diagonal is [N, {d * (d - 1) // 2}] for {d}D, got {list(off_diagonal.shape)}")
    columns, k = [], 0
    diagonal = torch.exp(log_diagonal) + eps
    for i in range(d):
        for j in range(i + 1):
            if i == j:
                columns.append(diagonal[:, i])
            else:
                columns.append(off_diagonal[:, k])
                k += 1
    return torch.stack(columns, dim=1)


def cholesky_from_scale_rotation(scale: Any, rotation: Any, eps: float = 1e-6) -> Any:
    """Packed L [N, 6] from 3D Gaussian splatting's parameters: scale [N, 3] (positive) and
    rotation quaternions [N, 4] (w, x, y, z; normalised here). Sigma = R diag(scale^2) R^T +
    eps I, and L its Cholesky factor (torch.linalg.cholesky, differentiable)."""
    import torch

    if scale.dim() != 2 or scale.shape[1] != 3 or rotation.shape != (scale.shape[0], 4):
        raise Error(f"scale is [N, 3] and rotation [N, 4], got {list(scale.shape)} and {list(rotation.shape)}")
    q = rotation / rotation.norm(dim=1, keepdim=True)
    w, x, y, z = q.unbind(1)
    r = torch.stack(
        [
            1 - 2 * (y * y + z * z),
            2 * (x * y - w * z),
            2 * (x * z + w * y),
            2 * (x * y + w * z),
            1 - 2 * (x * x + z * z),
            2 * (y * z - w * x),
            2 * (x * z - w * y),
            2 * (y * z + w * x),
            1 - 2 * (x * x + y * y),
        ],
        dim=1,
    ).reshape(-1, 3, 3)
    sigma = r @ torch.diag_embed(scale * scale) @ r.transpose(1, 2)
    sigma = sigma + eps * torch.eye(3, dtype=scale.dtype, device=scale.device)
    L = torch.linalg.cholesky(sigma)
    rows, cols = torch.tril_indices(3, 3, device=scale.device)
    return L[:, rows, cols]


def _make_module() -> Any:
    import torch

    class GaussianFieldModule(torch.nn.Module):
        """A learnable field of `num_gaussians` Gaussians over a volume (3D) or image plane
        (dims=2) of side `volume_size` (a number, or one per axis) starting at the origin.

        full_covariance=True learns all of L through cholesky_from_log_diagonal (its
        diagonal stays positive); False keeps L diagonal. parametrisation='scale_rotation'
        (3D) learns 3D Gaussian splatting's scale and quaternion instead. forward(points
        [B, D]) -> values [B], through gaussian_field."""

        def __init__(
            self,
            num_gaussians: int,
            volume_size: Union[float, Sequence[float]] = 1.0,
            dims: int = 3,
            full_covariance: bool = True,
            parametrisation: str = "log_cholesky",
            eps: float = 1e-6,
            seed: Optional[int] = 0,
        ) -> None:
            super().__init__()
            if num_gaussians < 1:
                raise Error(f"a field needs at least one Gaussian, not {num_gaussians}")
            if dims not in (2, 3):
                raise Error(f"fields are 2D or 3D, not {dims}D")
            if parametrisation not in ("log_cholesky", "scale_rotation"):
                raise Error(f"parametrisation is 'log_cholesky' or 'scale_rotation', not {parametrisation!r}")
            if parametrisation == "scale_rotation" and dims != 3:
                raise Error("the scale + rotation parametrisation is 3D")
            size = torch.as_tensor(volume_size, dtype=torch.float32).expand(dims).clone()
            generator = torch.Generator().manual_seed(seed) if seed is not None else None
            spacing = float(size.prod()) ** (1.0 / dims) / num_gaussians ** (1.0 / dims)
            self.dims, self.eps, self.parametrisation = dims, eps, parametrisation
            self.full_covariance = full_covariance
            self.means = torch.nn.Parameter(torch.rand(num_gaussians, dims, generator=generator) * size)
            self.weights = torch.nn.Parameter(torch.randn(num_gaussians, generator=generator) * 0.1)
            if parametrisation == "scale_rotation":
                self.log_scale = torch.nn.Parameter(torch.full((num_gaussians, 3), math.log(spacing)))
                rotation = torch.zeros(num_gaussians, 4)
                rotation[:, 0] = 1
                self.rotation = torch.nn.Parameter(rotation)
            else:
                self.log_diagonal = torch.nn.Parameter(torch.full((num_gaussians, dims), math.log(spacing)))
                off = torch.zeros(num_gaussians, dims * (dims - 1) // 2)
                self.off_diagonal = (
                    torch.nn.Parameter(off) if full_covariance else torch.nn.Parameter(off, requires_grad=False)
                )

        def cholesky(self) -> Any:
            """The packed Cholesky factors [N, D(D+1)/2] the parameters give."""
            if self.parametrisation == "scale_rotation":
                return cholesky_from_scale_rotation(torch.exp(self.log_scale), self.rotation, self.eps)
            return cholesky_from_log_diagonal(self.log_diagonal, self.off_diagonal, self.eps)

        def forward(self, points: Any) -> Any:
            return gaussian_field(points, self.means, self.cholesky(), self.weights)

    return GaussianFieldModule


def saliency_map(field: Any, grid: Tuple[int, int] = (64, 64)) -> np.ndarray:
    """A 2D field over the image ([0,1]^2, x right, y down) evaluated at the centres of a
    grid of (width, height) cells: float32 [height, width], the saliency the video path and
    fixations_from_field take. `field` is a 2D GaussianField (evaluated where it lives, the
    GPU for a CUDA module) or any callable points [B, 2] -> values [B] (NumPy in, NumPy or a
    tensor out)."""
    gw, gh = grid
    if gw < 1 or gh < 1:
        raise Error("the saliency grid needs at least one cell a side")
    if not callable(field):
        raise Error(
            f"a field is a 2D GaussianField or a callable points [B, 2] -> values [B], not {type(field).__name__}"
        )
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(field, torch.nn.Module):
        parameter = next(field.parameters())
        ys, xs = torch.meshgrid(
            (torch.arange(gh, dtype=parameter.dtype, device=parameter.device) + 0.5) / gh,
            (torch.arange(gw, dtype=parameter.dtype, device=parameter.device) + 0.5) / gw,
            indexing="ij",
        )
        with torch.no_grad():
            values = field(torch.stack([xs.reshape(-1), ys.reshape(-1)], dim=1))
        values = values.detach().cpu().double().numpy()
    else:
        ys, xs = np.meshgrid((np.arange(gh) + 0.5) / gh, (np.arange(gw) + 0.5) / gw, indexing="ij")
        values = field(np.stack([xs.reshape(-1), ys.reshape(-1)], axis=1))
        values = values.detach().cpu().numpy() if hasattr(values, "detach") else np.asarray(values)
    if values.size != gw * gh:
        raise Error(f"the field gave {values.size} values for {gw * gh} points: it must give one value per point")
    return np.ascontiguousarray(values.reshape(gh, gw).astype(np.float32))


def fixations_from_field(
    field: Any, k: int, separation: float = 0.15, grid: Tuple[int, int] = (64, 64)
) -> List[Tuple[float, float]]:
    """The k strongest positive local maxima of a 2D field over the image ([0,1]^2, x right,
    y down), at least `separation` apart (in units of the grid's longer side), strongest
    first: fixations for the foveated layouts. `field` as for saliency_map(); the maxima are
    picked by the engine's rule (fixations_from_saliency), the one the video path follows."""
    k = whole(k, "k", 1, what=" fixations")
    return [tuple(p) for p in _core.fixations_from_saliency(saliency_map(field, grid), k, separation)]


def _torch_ops() -> Any:
    """torch.ops.texturevlm, with gaussian_field and its backward registered once. A plain
    global, not functools.cache: torch.compile(fullgraph=True) must trace through it."""
    global _ops
    if _ops is None:
        _register_torch_ops()
        import torch

        _ops = torch.ops.texturevlm
    return _ops


def _register_torch_ops() -> None:
    import torch
    from torch import Tensor

    def cuda_job(t: Tensor) -> Tuple[int, str, int]:
        from ._tensors import torch_raw_stream

        index = t.device.index or 0
        return index, str(t.dtype).replace("torch.", ""), torch_raw_stream()(index)

    @functools.lru_cache(maxsize=64)
    def field_plan(index: int, dtype: str, dims: int, b: int, n: int) -> Any:
        """The engine's launch plan of one field shape (checked once, kept)."""
        return _core.CudaField(index, dtype, dims, b, n)

    # Plans are engine objects: dropped before the interpreter tears the extension down (else
    # nanobind reports them as leaked at exit).
    atexit.register(field_plan.cache_clear)

    def host(t: Tensor) -> np.ndarray:
        return np.ascontiguousarray(t.detach().cpu().numpy().astype(np.float64))

    def field_forward(points: Tensor, means: Tensor, cholesky: Tensor, weights: Tensor) -> Tensor:
        b, (n, d) = points.shape[0], means.shape
        if points.device.type == "cuda":
            values = points.new_empty(b)
            index, dtype, stream = cuda_job(points)
            field_plan(index, dtype, d, b, n).forward(
                points.data_ptr(),
                means.data_ptr(),
                cholesky.data_ptr(),
                weights.data_ptr(),
                values.data_ptr(),
                0,
                stream,
            )
            return values
        values, _ = _core.reference_gaussian_field(host(points), host(means), host(cholesky), host(weights), False)
        return torch.from_numpy(values).to(points.dtype)

    forward_op = torch.library.custom_op("texturevlm::gaussian_field", mutates_args=())(field_forward)

    @forward_op.register_fake
    def _(points: Tensor, means: Tensor, cholesky: Tensor, weights: Tensor) -> Tensor:
        return points.new_empty(points.shape[0])

    def field_backward(
        points: Tensor, means: Tensor, cholesky: Tensor, weights: Tensor, grad: Tensor
    ) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
        b, (n, d) = points.shape[0], means.shape
        grad = dense(grad, points.dtype)
        if points.device.type == "cuda":
            outs = (
                torch.empty_like(points),
                torch.empty_like(means),
                torch.empty_like(cholesky),
                torch.empty_like(weights),
            )
            index, dtype, stream = cuda_job(points)
            field_plan(index, dtype, d, b, n).backward(
                points.data_ptr(),
                means.data_ptr(),
                cholesky.data_ptr(),
                weights.data_ptr(),
                grad.data_ptr(),
                *(o.data_ptr() for o in outs),
                stream,
            )
            return outs
        g = _core.reference_gaussian_field_backward(
            host(points), host(means), host(cholesky), host(weights), host(grad)
        )
        return tuple(torch.from_numpy(a).to(points.dtype) for a in g)  # type: ignore[return-value]

    backward_op = torch.library.custom_op("texturevlm::gaussian_field_backward", mutates_args=())(field_backward)

    @backward_op.register_fake
    def _(
        points: Tensor, means: Tensor, cholesky: Tensor, weights: Tensor, grad: Tensor
    ) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
        return torch.empty_like(points), torch.empty_like(means), torch.empty_like(cholesky), torch.empty_like(weights)

    def setup(ctx: Any, inputs: Tuple[Any, ...], output: Any) -> None:
        ctx.save_for_backward(*inputs)

    def backward(ctx: Any, grad: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
        return torch.ops.texturevlm.gaussian_field_backward(*ctx.saved_tensors, grad)

    forward_op.register_autograd(backward, setup_context=setup)

    class GaussianFieldFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, points: Tensor, means: Tensor, cholesky: Tensor, weights: Tensor) -> Tensor:
            ctx.save_for_backward(points, means, cholesky, weights)
            return field_forward(points, means, cholesky, weights)

        @staticmethod
        def backward(ctx: Any, grad: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
            return field_backward(*ctx.saved_tensors, grad)

    _eager.update(gaussian_field=GaussianFieldFunction.apply)


def __getattr__(name: str) -> Any:
    """GaussianField is an nn.Module: made when first asked for, so importing texturevlm
    does not import torch."""
    if name == "GaussianField":
        module = _make_module()
        globals()["GaussianField"] = module
        return module
    raise AttributeError(name)
