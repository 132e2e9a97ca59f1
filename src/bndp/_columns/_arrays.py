"""Tensors in, tensors out: PyTorch tensors and array-API arrays through bndp's samplers.

One adapter for every mechanism's ``sample``: :func:`bndp._columns.columnar`
(which wraps every sampler, whose data argument is ``value``, for the release and the
gradient mechanisms alike) calls :func:`foreign` and :func:`host_values` here,
and :func:`on_device` to choose a mechanism's device-native draw. A sampler accepts, besides
NumPy input,

* a :class:`torch.Tensor` on any device: the result is a tensor of the same shape, on the
  same device, with the same floating dtype (``float64`` for integer input: released values
  are not integers);
* any array of the Python array API standard (an object with ``__array_namespace__``, e.g.
  CuPy or ``array_api_strict``): the result is an array of the same library, device and
  floating dtype.

How the draw happens. On the CPU, a tensor's memory is handed to the compiled kernels as a
NumPy view (no copy for ``float64``; ``float32`` and narrower are widened to ``float64`` for
the draw, which always happens in double precision). The result comes back as a view
(``torch.from_numpy``) and is rounded to the input's dtype at the very end. Rounding to
nearest is monotone, so a released value in ``[lower, upper]`` lands in
``[fl(lower), fl(upper)]`` of the narrower type; rounding is post-processing and costs no
privacy. A mechanism may provide a device-native path (the gradient mechanisms do, see
:mod:`bndp.mechanisms._torch_noise`): a CUDA tensor then never leaves its device (unless it
holds missing values, NaN: those take the host path, where ``nulls=`` handles them). Other
mechanisms copy device tensors to the host, draw there, and copy the result back.

Neither torch nor any array library is imported here: an object is recognised as a tensor
only if torch is already loaded, and as an array-API array by its ``__array_namespace__``
method, so ``import bndp`` never pays for them.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

__all__ = ["Foreign", "foreign", "is_foreign", "is_torch", "on_device", "host_values"]

_PLAIN = (float, int, np.ndarray, list, tuple, np.floating, np.integer)


def is_torch(x: Any) -> bool:
    """True for a :class:`torch.Tensor` (only checked when torch is already imported)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def on_device(x: Any) -> bool:
    """True for a torch tensor on a device other than the CPU that holds no NaN (a
    mechanism's device-native draw may take it; NaN are missing values, handled on the
    host)."""
    if not is_torch(x) or x.device.type == "cpu":
        return False
    if x.device.type == "meta":         # shapes without values: nothing to release
        raise TypeError("`value` is a tensor on the 'meta' device: it holds no values")
    return not (x.is_floating_point() and bool(sys.modules["torch"].isnan(x).any()))


def is_foreign(x: Any) -> bool:
    """True for a torch tensor or an array-API array that is not a NumPy array."""
    if x is None or isinstance(x, _PLAIN) or isinstance(x, np.generic):
        return False
    return is_torch(x) or hasattr(x, "__array_namespace__")


class Foreign:
    """A tensor or array-API array as a float64 NumPy array on the host, with what is
    needed to bring a result back to the input's library, device and dtype."""

    __slots__ = ("kind", "values", "_src")

    def __init__(self, kind: str, values: np.ndarray, src: Any) -> None:
        self.kind = kind
        self.values = values
        self._src = src

    @property
    def device(self) -> Any:
        return self._src.device

    def restore(self, out: Any) -> Any:
        """Wrap a float64 result (array or float) in the input's kind, device and dtype."""
        return restore_like(self._src, out)


def _torch_to_host(x: Any, name: str) -> np.ndarray:
    torch = sys.modules["torch"]
    t = x.detach()
    if t.is_complex() or t.dtype == torch.bool:
        raise TypeError(f"`{name}` must hold real numbers; got a tensor of dtype {t.dtype}")
    if t.device.type == "meta":         # shapes without values: nothing to release
        raise TypeError(f"`{name}` is a tensor on the 'meta' device: it holds no values")
    if t.device.type != "cpu":
        t = t.cpu()
    t = t.resolve_conj().resolve_neg()
    if t.dtype in (torch.bfloat16,):            # NumPy has no bfloat16
        t = t.to(torch.float64)
    a = t.numpy()
    if a.dtype.kind in "iu" and a.dtype.itemsize == 8:
        return a        # 64-bit integers: converted by the sampler (exactly onto its grid)
    return np.asarray(a, dtype=np.float64)   # a view for float64 input


def _api_to_host(x: Any, name: str) -> np.ndarray:
    xp = x.__array_namespace__()
    dt = x.dtype
    if not xp.isdtype(dt, ("real floating", "integral")):
        raise TypeError(f"`{name}` must hold real numbers; got an array of dtype {dt}")
    try:
        a = np.from_dlpack(x)
    except (BufferError, TypeError, RuntimeError, ValueError, AttributeError):
        try:  # ask the producer for a host copy (DLPack 1.0)
            a = np.from_dlpack(x, device="cpu", copy=True)
        except Exception:
            try:
                a = np.asarray(x.to_device("cpu"))
            except Exception:
                raise TypeError(
                    f"`{name}`: cannot bring this {type(x).__module__}.{type(x).__name__} "
                    "array into host memory (it offers neither host DLPack nor a 'cpu' device)"
                ) from None
    a = np.asarray(a)
    if a.dtype.kind in "iu" and a.dtype.itemsize == 8:
        return a        # 64-bit integers: converted by the sampler (exactly onto its grid)
    return np.asarray(a, dtype=np.float64)


def foreign(x: Any, name: str = "value") -> Foreign | None:
    """The :class:`Foreign` adapter of ``x``, or None for NumPy and Python input."""
    if not is_foreign(x):
        return None
    if is_torch(x):
        return Foreign("torch", _torch_to_host(x, name), x)
    return Foreign("array_api", _api_to_host(x, name), x)


def host_values(x: Any, name: str) -> Any:
    """``x`` as a NumPy array if it is a tensor or array-API array, else unchanged (for
    per-row ``lower``/``upper``)."""
    f = foreign(x, name)
    return x if f is None else f.values


def restore_like(src: Any, out: Any) -> Any:
    """``out`` (float64 array or float) as an array of ``src``'s kind, device and dtype."""
    out = np.asarray(out, dtype=np.float64)
    if not out.flags.c_contiguous:        # (np.ascontiguousarray would make 0-d into 1-d)
        out = out.copy()
    if is_torch(src):
        torch = sys.modules["torch"]
        res = torch.from_numpy(out)
        dtype = src.dtype if src.is_floating_point() else torch.float64
        return res.to(device=src.device, dtype=dtype)
    xp = src.__array_namespace__()
    dt = src.dtype if xp.isdtype(src.dtype, "real floating") else xp.float64
    try:
        return xp.asarray(out, dtype=dt, device=src.device)
    except Exception:
        res = xp.asarray(xp.from_dlpack(out), dtype=dt)
        return res.to_device(src.device) if hasattr(res, "to_device") else res
