"""Where a windowed kernel's scale search starts (grid steps): closed forms and small
models of the kernel's loss, each a function of the kernel's cache key only, so that a
kernel is the same whichever call plans it first. Only the search's result is certified
(``_core.calibrate.gw_calibrate``); a start only sets how many evaluations the search needs."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from .._core import calibrate as _calibrate
from ..calibrate.bounded import _bg_sigma_one
from .constants import GAUSSIAN

__all__: list[str] = []

#: a start from the closed forms sits this far above them (relative): the certified loss of
#: the sampled kernel lies a few 1e-8 above the model's, and the search accepts a scale whose
#: loss is within 1e-7 below the target, so it usually accepts the first trial
MODEL_OFFSET = 3.5e-8
#: the Gaussian kernel's window, in scales: ``ceil(t sqrt(2 * 24 ln 2))`` grid steps
GAUSSIAN_WINDOW = math.sqrt(48.0 * math.log(2.0))


def _search_start(fam: int, target: float, dk: int, n: int | None,
                  wide: tuple[float, float] | None = None) -> float:
    """Where the scale search of the kernel ``(fam, target, dk, n)`` starts (grid steps;
    ``n`` None: the wide kernel). The Laplace: :func:`_laplace_model` (a narrow kernel's
    :data:`MODEL_OFFSET` above it); the wide Gaussian: :func:`_wide_hint`; a narrow
    Gaussian: :func:`_narrow_gaussian_start` (:data:`MODEL_OFFSET` above it) where the
    kernel's window covers the row. On a wider row the window moves the scale by up to a
    third of it, and the start is the wide kernel's scale ``t_w`` scaled by its certificate
    ``c`` on the row, ``t_w (c / target)^(1/2)`` (the Gaussian's loss falls about as
    ``t^-2``), ``wide = (t_w, c)``: within about 1.5 % (a function of the cache key too,
    the wide kernel being one)."""
    if n is None:
        return _wide_hint(fam, target, dk) if fam == GAUSSIAN else \
            _laplace_model(target, dk, None)
    if fam != GAUSSIAN:
        return _laplace_model(target, dk, n) * (1.0 + MODEL_OFFSET)
    t = _narrow_gaussian_start(target, dk, n)
    if n > math.ceil(t * GAUSSIAN_WINDOW) and wide is not None and 0.0 < wide[1] <= target:
        return wide[0] * math.sqrt(wide[1] / target)
    return t * (1.0 + MODEL_OFFSET)


def _laplace_model(target: float, dk: int, n: int | None) -> float:
    """The scale (grid steps) at which the ideal discrete Laplace on [0, n] (n None: a
    half-line) has loss ``target`` at its end: ``dk/t + ln(S_dk / S_0)`` with
    ``S_k = sum_j r^|j - k|``, ``r = e^(-1/t)`` (closed forms). A starting point for the
    certified search (the sampled law differs by its integer rounding and its tails)."""
    d = min(dk, n) if n is not None else dk

    def loss(t: float) -> float:
        r = math.exp(-1.0 / t)
        if n is None:
            ratio = 1.0 + r - r ** (d + 1)
        else:
            def s(k: int) -> float:
                return (2.0 - r ** (k + 1) - r ** (n - k + 1)) / (1.0 - r) - 1.0
            ratio = s(d) / s(0)
        return d / t + math.log(ratio)

    # secant steps on (ln t, ln loss) (the loss is close to a power of t), then the
    # bracketing half of the last step; where the closed forms lose all precision (a loss
    # below the rounding of ratio near 1, at a tiny target) the search starts at d/target
    try:
        x1 = _laplace_secant(loss, target, d)
    except (ValueError, OverflowError, ZeroDivisionError):
        return d / target
    t = math.exp(x1)
    return t if math.isfinite(t) and t > 0 else d / target


def _laplace_secant(loss: Any, target: float, d: int) -> float:
    """ln t of :func:`_laplace_model`: secant steps on (ln t, ln loss), the bracketing half
    of the last step."""
    x0, x1 = math.log(d / target), math.log(2.0 * d / target)
    f0, f1 = math.log(loss(math.exp(x0))) - math.log(target), \
        math.log(loss(math.exp(x1))) - math.log(target)
    for _ in range(30):
        if f1 == f0 or abs(f1) < 1e-12:
            break
        x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
        x2 = min(max(x2, x1 - 3.0), x1 + 3.0)
        x0, f0 = x1, f1
        x1 = x2
        f1 = math.log(loss(math.exp(x1))) - math.log(target)
    return x1


@lru_cache(maxsize=1024)
def _wide_hint(fam: int, target: float, dk: int) -> float:
    """A starting scale for the wide kernel: the continuous half-line's (Laplace:
    x + ln(2 - e^-x) = target, x = dk/t) or 5.8 dk/target (Gaussian)."""
    if fam == GAUSSIAN:
        return 5.8 * dk / target
    lo, hi = 0.0, target
    for _ in range(60):
        x = 0.5 * (lo + hi)
        if x + math.log(2.0 - math.exp(-x)) > target:
            hi = x
        else:
            lo = x
    return dk / max(lo, 1e-300)


def _narrow_gaussian_start(target: float, dk: int, n: int) -> float:
    """Where a narrow Gaussian kernel's search starts (grid steps): the scale at which the
    discrete Gaussian on the whole row of ``n`` intervals, weights ``exp(-k^2 / (2 t^2))``,
    loses ``target`` between the inputs ``n - dk`` and ``n`` at the output 0 (the row's
    extreme pair; :func:`_gaussian_row_loss`), solved by secant steps on ``ln t``
    (compiled: ``_core.calibrate.gw_gaussian_start``) from the continuous bounded Gaussian's sigma
    (Chen & Hale) for the kernel's sensitivity ``dk`` and width ``n``. Where the kernel's
    window covers the row this is its scale to about 1e-7 (the search then certifies it in
    a few evaluations); on wider rows the window moves it by 0.5 to 8 %. It depends on the
    kernel's cache key only, so a kernel is the same whichever call plans it first (a
    mechanism, per-row bounds, another width with the same ``n``)."""
    try:
        # the continuous sigma of bounded_gaussian_sigma(target, dk, 0, n), without its
        # argument checks (validated arguments)
        s = float(_bg_sigma_one(target, float(dk), np.array([float(n)])))
    except (ValueError, OverflowError):
        s = math.nan
    if not (math.isfinite(s) and s > 0):
        return float(dk) / target
    return float(_calibrate.gw_gaussian_start(target, min(dk, n), n, s))


def _gaussian_row_loss(t: float, n: int, dk: int) -> float:
    """The privacy loss of the discrete Gaussian of scale ``t`` on a row of ``n`` intervals
    between the inputs ``n - dk`` and ``n`` at the output 0: ``dk (2n - dk) / (2 t^2) +
    ln(Z(n) / Z(n - dk))``, ``Z(i) = sum_{j=0..n} exp(-(j - i)^2 / (2 t^2))`` by the
    Euler-Maclaurin formula (the integral, the trapezoid's end terms and the corrections of
    the first and third derivatives; within 1e-7 relative of the sums for t of 3 grid steps
    or more, tested; compiled: ``_core.calibrate.gw_gaussian_row_loss``)."""
    return float(_calibrate.gw_gaussian_row_loss(t, n, dk))
