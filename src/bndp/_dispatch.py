"""Shape handling between the public functions and the kernels (NumPy's rules, written once).

* All parameters 0-d and ``size=None``: one draw, returned as a Python ``float``.
* All parameters 0-d and a ``size``: one parameter set, a flat fill loop.
* Otherwise the parameters are broadcast; with ``size`` given, ``size`` is the output shape
  and the parameters must broadcast to it (the error names both shapes). Each parameter is
  viewed as a 2-D array (outer, last axis) without copying where NumPy can (scalars and
  arrays broadcast along leading axes keep stride 0), and the per-row kernel fills a fresh
  C-contiguous float64 output.
"""

from __future__ import annotations

from math import prod
from typing import Any, Callable, Sequence

import numpy as np

from ._parallel import check_workers, run_fill
from ._validation import check_size


def _shape2(shape: tuple[int, ...]) -> tuple[int, int]:
    if len(shape) == 0:
        return (1, 1)
    return (prod(shape[:-1]), shape[-1])


def as_2d(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """View ``a`` broadcast to ``shape`` as (outer, inner); copies only when strides force it."""
    return np.broadcast_to(a, shape).reshape(_shape2(shape))


def output_shape(params: Sequence[np.ndarray], size: Any) -> tuple[int, ...]:
    shape = np.broadcast_shapes(*(p.shape for p in params))
    size_t = check_size(size)
    if size_t is None:
        return shape
    try:
        ok = np.broadcast_shapes(shape, size_t) == size_t
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"`size` {size_t} is not compatible with the broadcast shape of the parameters {shape}"
        )
    return size_t


def sample(one: Callable, fill: Callable, fill_rows: Callable, params: Sequence[np.ndarray],
           size: Any, gen: np.random.Generator, workers: Any = 1):
    """Run a sampler over validated float64 parameters following NumPy's size rule.

    ``workers > 1`` splits large outputs across threads, each on its own child stream of
    ``gen`` (see :mod:`bndp._parallel`); ``workers = 1`` draws from ``gen`` itself.
    """
    nw = 1 if workers == 1 and type(workers) is int else check_workers(workers)
    if all(p.ndim == 0 for p in params):
        vals = [float(p) for p in params]
        size_t = check_size(size)
        if size_t is None:
            return one(gen, *vals)
        out = np.empty(size_t)
        if out.size:
            if nw == 1:
                fill(gen, *vals, out.reshape(-1))
            else:
                run_fill(fill, fill_rows, gen, vals, None, out.reshape(-1), nw)
        return out
    shape = output_shape(params, size)
    out = np.empty(shape)
    if out.size:
        p2 = [as_2d(p, shape) for p in params]
        if nw == 1:
            fill_rows(gen, *p2, out.reshape(_shape2(shape)))
        else:
            run_fill(fill, fill_rows, gen, None, p2, out.reshape(_shape2(shape)), nw)
    return out


def evaluate(kernel: Callable, what: int, x: np.ndarray, params: Sequence[np.ndarray]):
    """Evaluate a per-element kernel (pdf/cdf/ppf/moments) over broadcast inputs."""
    shape = np.broadcast_shapes(x.shape, *(p.shape for p in params))
    out = np.empty(shape)
    if out.size:
        kernel(what, as_2d(x, shape), *(as_2d(p, shape) for p in params),
               out.reshape(_shape2(shape)))
    if out.ndim == 0:
        return float(out)
    return out
