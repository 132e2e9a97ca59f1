"""One-call entry point: :func:`sample`."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _core, _dispatch
from ._random import RNGLike, as_generator
from ._validation import apply_domain, as_float_array, check_bounds, fast_real
from .calibrate import bounded_laplace_scale
from ._columns import Nulls, columnar
from .mechanisms import BoundedGaussian, BoundedLaplace
from .mechanisms.exact import check_mode
from .mechanisms.registry import SAMPLE_MECHANISMS

__all__ = ["sample", "MECHANISMS"]

#: The mechanism names :func:`sample` accepts (from :mod:`bndp.mechanisms.registry`).
MECHANISMS = SAMPLE_MECHANISMS


@columnar
def sample(value: Any, *, mechanism: str, epsilon: float, sensitivity: float, lower: Any,
           upper: Any, delta: float = 0.0, rng: RNGLike = None, on_outside: str = "clip",
           workers: int = 1, mode: str | None = "exact", nulls: Nulls = "raise"):
    r"""Privatise a column of bounded values in one call.

    Parameters
    ----------
    value : float, array_like, pandas Series, pyarrow (Chunked)Array or masked array
        True values (any shape). Values outside ``[lower, upper]`` are clipped into it
        (1-Lipschitz, so the guarantee holds) unless ``on_outside="raise"``. A table
        (DataFrame, Arrow Table) is refused: privatize one column, or use the frame API.
    mechanism : {"laplace", "gaussian"}
        ``"laplace"``: :class:`bndp.BoundedLaplace` (:math:`(\epsilon, \delta)`, pure for
        ``delta = 0``). ``"gaussian"``: :class:`bndp.BoundedGaussian` (pure
        :math:`\epsilon`-DP; ``delta`` must be 0).
    epsilon, sensitivity, delta : float
        Privacy parameters, as for the mechanisms.
    lower, upper : float or array_like
        The valid range. For ``"laplace"`` they may be arrays broadcasting with ``value``
        (per-row bounds; the scale is calibrated per row). For ``"gaussian"``, scalars mean
        the univariate mechanism and 1-D arrays of length m the m-dimensional one (``value``
        then has a trailing dimension m). With per-row Laplace bounds the scale is calibrated
        once per distinct width ``upper - lower``.
    rng : None, int, SeedSequence, BitGenerator or Generator
        Source of randomness; ``None`` is the secure default.
    on_outside : {"clip", "raise"}
    workers : int, default 1
        Threads for large arrays (``-1``: every CPU); each thread draws from its own child
        stream spawned from ``rng`` (:meth:`numpy.random.Generator.spawn`), so no two
        threads share or overlap a stream. (The grid law draws on one thread.)
    mode : {"exact", "continuous"}, default "exact"
        ``"exact"``: the floating-point-safe grid law of the mechanism (outputs on a
        power-of-two grid, loss certified from the sampler's own table;
        :mod:`bndp.mechanisms.exact`). ``"continuous"``: raw doubles of the continuous law
        (explicit opt-in; attackable when the raw outputs are published). With per-row
        Laplace bounds the grid law is planned once per distinct ``(lower, upper)`` pair
        (at most 4096 distinct pairs).
    nulls : {"raise", "keep"}, default "raise"
        Missing values (NaN, None, pd.NA, Arrow nulls, masked entries): ``"raise"`` refuses
        them with an error naming the first position; ``"keep"`` leaves them missing in the
        result (no noise is drawn for them).

    Returns
    -------
    float, ndarray of float64, Series, pyarrow array or masked array
        Same shape as ``value`` (a float for a scalar), of the kind of ``value``.

    Examples
    --------
    >>> import bndp
    >>> ages = [23.0, 35.0, 61.0, 118.0]
    >>> out = bndp.sample(ages, mechanism="laplace", epsilon=1.0, sensitivity=1.0,
    ...                   lower=0, upper=120, rng=0)
    >>> out.shape, bool(((out >= 0) & (out <= 120)).all())
    ((4,), True)

    Per-row bounds (Laplace only):

    >>> out = bndp.sample([5.0, 50.0], mechanism="laplace", epsilon=1.0, sensitivity=1.0,
    ...                   lower=[0, 10], upper=[10, 100], rng=0)
    >>> bool(0 <= out[0] <= 10 and 10 <= out[1] <= 100)
    True
    """
    if not isinstance(mechanism, str) or mechanism not in MECHANISMS:
        raise ValueError(f"`mechanism` must be one of {MECHANISMS}; got {mechanism!r}")
    if mechanism == "gaussian":
        if fast_real(delta, "delta") != 0.0:
            raise ValueError(
                "the bounded Gaussian mechanism is pure epsilon-DP: `delta` must be 0; "
                f"got {delta!r}"
            )
        mech = BoundedGaussian(epsilon, sensitivity, lower, upper, mode=mode)
        return mech.sample(value, rng=rng, on_outside=on_outside, workers=workers)
    lo = as_float_array(lower, "lower")
    hi = as_float_array(upper, "upper")
    if lo.ndim == 0 and hi.ndim == 0:
        lap = BoundedLaplace(epsilon, sensitivity, float(lo), float(hi), delta, mode=mode)
        return lap.sample(value, rng=rng, on_outside=on_outside, workers=workers)
    mode = check_mode(mode)
    # per-row bounds: the scale depends on the bounds only through the width u - l, so it is
    # calibrated once per distinct width, then one kernel pass draws every row
    check_bounds(lo, hi)
    q = as_float_array(value, "value")
    q = apply_domain(q, lo, hi, on_outside)
    if mode == "exact":
        return _grid_rows(q, lo, hi, epsilon, sensitivity, delta, as_generator(rng))
    widths, inverse = np.unique(hi - lo, return_inverse=True)
    scale = bounded_laplace_scale(epsilon, sensitivity, 0.0, widths, delta)[inverse]
    scale = scale.reshape(np.broadcast_shapes(lo.shape, hi.shape))
    gen = as_generator(rng)
    shape = np.broadcast_shapes(q.shape, lo.shape, hi.shape)
    return _dispatch.sample(_core.bl_one, _core.bl_fill, _core.bl_fill_rows,
                            [q, np.asarray(scale), lo, hi], shape, gen, workers)


MAX_BOUND_PAIRS = 4096


def _grid_rows(q: np.ndarray, lo: np.ndarray, hi: np.ndarray, epsilon: float,
               sensitivity: float, delta: float, gen: np.random.Generator) -> np.ndarray:
    """Per-row bounds, grid law: one plan per distinct (lower, upper) pair, rows drawn
    group by group (each group's table read by the same constant-time kernel)."""
    shape = np.broadcast_shapes(q.shape, lo.shape, hi.shape)
    qb = np.broadcast_to(q, shape).ravel()
    # the (lower, upper) pairs as complex numbers: np.unique sorts them lexicographically,
    # an order of magnitude faster than np.unique(..., axis=0) on a 2-column array
    pairs = np.empty(qb.shape[0], dtype=np.complex128)
    pairs.real = np.broadcast_to(lo, shape).ravel()
    pairs.imag = np.broadcast_to(hi, shape).ravel()
    uniq_c, inverse = np.unique(pairs, return_inverse=True)
    uniq = np.stack([uniq_c.real, uniq_c.imag], 1)
    if len(uniq) > MAX_BOUND_PAIRS:
        raise ValueError(
            f"per-row bounds: {len(uniq)} distinct (lower, upper) pairs; the grid law plans "
            f"each pair and takes at most {MAX_BOUND_PAIRS}: round the bounds to fewer "
            "values, or pass mode='continuous'")
    inverse = inverse.ravel()
    order = np.argsort(inverse, kind="stable")
    ends = np.cumsum(np.bincount(inverse, minlength=len(uniq)))
    out = np.empty(qb.shape[0])
    start = 0
    for g, (l, h) in enumerate(uniq):
        rows = order[start:ends[g]]
        start = ends[g]
        plan = BoundedLaplace(epsilon, sensitivity, float(l), float(h), delta).exact_plan
        assert plan is not None  # the default mode
        out[rows] = plan.sample(qb[rows], None, gen)
    return out.reshape(shape)
