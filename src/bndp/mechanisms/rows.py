"""Per-row bounds: the bounded Laplace and the univariate bounded Gaussian released with one
row ``[lower_i, upper_i]`` per value (:meth:`bndp.BoundedLaplace.sample_rows`,
:meth:`bndp.BoundedGaussian.sample_rows`; :func:`bndp.sample` with array bounds dispatches
here). In the default (grid) mode every row's windowed law is planned from its bounds and
drawn by :func:`bndp._laws.window.sample_rows`; in continuous mode the scale is calibrated
per distinct width."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _dispatch
from .._core import fill as _fill, rows as _rows
from .._random import RNGLike, as_generator
from .._values import WideValues, approx, as_values
from .._validation import (rows_pair, apply_domain, as_float_array, check_bounds,
                          check_continuous_resolution, check_epsilon, check_on_outside,
                          check_positive, fast_real)
from ..calibrate.bounded import bounded_gaussian_sigma, bounded_laplace_scale, check_bounded_laplace
from ..distributions import truncated_normal
from .._laws import window
from .._laws.lattice import Step, as_integers, auto_step, check_integral, integer_step
from .._laws.whole_range import check_mode

__all__ = ["sample_rows"]


def sample_rows(mechanism: str, value: Any, lower: Any, upper: Any, *, epsilon: float,
                sensitivity: float, delta: float = 0.0, rng: RNGLike = None,
                on_outside: str = "clip", workers: int = 1, mode: str | None = None,
                integer: Any = False):
    """One draw per row of ``value`` (a float64 array of the broadcast shape of ``value``,
    ``lower`` and ``upper``) from ``mechanism`` (``"laplace"`` or ``"gaussian"``) with the
    row's own bounds: the arguments as for :func:`bndp.sample`. Every row is checked
    (finite bounds, ``lower < upper``, ``on_outside``) before anything is drawn.
    ``integer``: the integer law's lattice step (``True``: 1; ``False``: the default grid;
    ``None``: 1 for an integer-typed ``value`` with integer-typed bounds and an integral
    sensitivity, as :func:`bndp.sample` chooses);
    the draws then take an integer-typed ``value``'s type
    (:func:`bndp._laws.lattice.as_integers`)."""
    if mechanism not in ("laplace", "gaussian"):
        raise ValueError("per-row bounds: `mechanism` must be 'laplace' or 'gaussian'; got "
                         f"{mechanism!r}")
    if mechanism == "gaussian" and fast_real(delta, "delta") != 0.0:
        raise ValueError("the bounded Gaussian mechanism is pure epsilon-DP: `delta` must be "
                         f"0; got {delta!r}")
    lo = as_float_array(lower, "lower")
    hi = as_float_array(upper, "upper")
    mode = check_mode(mode)
    eps = fast_real(epsilon, "epsilon")
    dq = fast_real(sensitivity, "sensitivity")
    dl = fast_real(delta, "delta")
    # (the bounds as given: an integer array is checked by its range alone)
    step = (auto_step(value, lower, upper, dq, mode, eps) if integer is None
            else integer_step(integer))
    lattice = check_integral(step, dq, lower, upper, mode) if step else None
    # float64 rows of one shape, every row finite with lower < upper and its value inside:
    # both checks below in one pass (else they run, and word the first error)
    rows_ok = (rows_pair(lo, hi) and rows_pair(value, lo)
               and _rows.rows_inside(value.ravel(), lo.ravel(), hi.ravel(), True))
    if not rows_ok:
        check_bounds(lo, hi)
    if mechanism == "laplace":
        check_bounded_laplace(eps, dq, 0.0, 1.0, delta=dl)        # no root find
    else:
        check_epsilon(np.float64(eps))
        check_positive(np.float64(dq), "sensitivity")
    qv = as_values(value, "value")
    if rows_ok:
        check_on_outside(on_outside)
        q = approx(qv)
    else:
        q = apply_domain(approx(qv), lo, hi, on_outside)
    shape = np.broadcast_shapes(q.shape, lo.shape, hi.shape)
    gen = as_generator(rng)
    if mode == "exact":
        fam = window.LAPLACE if mechanism == "laplace" else window.GAUSSIAN
        target = eps - math.log1p(-dl) if mechanism == "laplace" else eps
        flat = [np.ascontiguousarray(np.broadcast_to(a, shape), dtype=np.float64).ravel()
                for a in (q, lo, hi)]
        wide = qv.broadcast_to(shape).ravel() if type(qv) is WideValues else None
        out = _grid_rows(fam, target, dq, flat, gen, wide, lattice).reshape(shape)
        return out if lattice is None else as_integers(out, value, lower, upper, rows=True)
    widths, inverse = np.unique(hi - lo, return_inverse=True)
    try:
        if mechanism == "gaussian":
            # (one univariate calibration per distinct width: array bounds would mean a box)
            sigma = np.array([bounded_gaussian_sigma(eps, dq, 0.0, float(w))
                              for w in np.ravel(widths)])[inverse]
        else:
            scale = bounded_laplace_scale(eps, dq, 0.0, widths, delta=dl)[inverse]
    except ValueError:  # (the calibration's message quotes widths: per-row bounds, data)
        raise ValueError(
            f"mode='continuous': no bounded {mechanism.capitalize()} scale can be calibrated "
            f"at epsilon = {eps!r}, sensitivity = {dq!r} for every row's width upper - lower "
            "(per-row bounds; a width too small or too large against the sensitivity, "
            "beyond the range of doubles)") from None
    if mechanism == "gaussian":
        sigma = sigma.reshape(np.broadcast_shapes(lo.shape, hi.shape))
        check_continuous_resolution(sigma, lo, hi)
        return np.asarray(truncated_normal(np.broadcast_to(q, shape), np.broadcast_to(sigma, shape),
                                           np.broadcast_to(lo, shape), np.broadcast_to(hi, shape),
                                           rng=gen), dtype=np.float64).reshape(shape)
    scale = scale.reshape(np.broadcast_shapes(lo.shape, hi.shape))
    check_continuous_resolution(scale, lo, hi)
    return _dispatch.sample(_fill.bl_one, _fill.bl_fill, _fill.bl_fill_rows,
                            [q, np.asarray(scale), lo, hi], shape, gen, workers)


def _grid_rows(fam: int, target: float, dq: float, flat: list, gen: np.random.Generator,
               wide: WideValues | None = None, lattice: "int | Step | None" = None):
    """Per-row bounds, grid law: the rows' kernels planned and drawn
    (:func:`bndp._laws.window.sample_rows`; ``wide``: exact values that are not doubles;
    ``lattice``: the integer law's step exponent)."""
    return window.sample_rows(fam, target, dq, flat[0], flat[1], flat[2], gen, exact=wide,
                              lattice=lattice)
