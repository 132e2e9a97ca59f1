r"""Special functions used by the calibrations (real Lambert W).

The Lambert W function solves :math:`W(x)\,e^{W(x)} = x`. On the reals it has two branches
on :math:`[-1/e, 0)`: the principal branch :math:`W_0 \ge -1` (defined on
:math:`[-1/e, \infty)`) and the lower branch :math:`W_{-1} \le -1`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._core import special as _special
from ._validation import as_float_array

__all__ = ["lambertw"]

# The double nearest -1/e (it lies 1.2e-17 below -1/e); it maps to W = -1 on both branches.
_BRANCH_POINT = -0.36787944117144233


def lambertw(x: Any, branch: int = 0):
    r"""Real Lambert W function, accurate up to the branch point :math:`x = -1/e`.

    .. math:: W_k(x)\,e^{W_k(x)} = x,\qquad W_0 \ge -1,\quad W_{-1} \le -1.

    Near the branch point the result is computed from :math:`q = e\,x + 1` (formed with a
    double-double :math:`e` and a fused multiply-add, so exactly to a rounding of :math:`q`):
    with :math:`W = -1 + v`, :math:`q = 1 + (v - 1)e^{v} = \sum_{k \ge 2} (k-1)v^k/k!` is
    solved for :math:`v` by Newton's method started from the branch-point series
    :math:`v \approx p - p^2/3 + 11p^3/72 - 43p^4/540`, :math:`p = \pm\sqrt{2q}`. Elsewhere
    Halley's iteration on :math:`w e^w = x` (:math:`W_0`, :math:`x < e`) or Newton's on
    :math:`w + \ln|w| = \ln|x|` is used. The relative error is a few ulps on both branches
    (tested against mpmath), including within :math:`10^{-15}` of :math:`-1/e`, where
    ``scipy.special.lambertw`` loses up to :math:`10^{-4}` relative on :math:`W_{-1}` and
    returns NaN at the double nearest :math:`-1/e`.

    Parameters
    ----------
    x : float or array_like
        Real argument. Branch 0: :math:`x \ge -1/e` (the double nearest :math:`-1/e`,
        ``-0.36787944117144233``, is accepted and gives :math:`-1`). Branch -1:
        :math:`-1/e \le x \le 0` (:math:`W_{-1}(0) = -\infty`). NaN is refused.
    branch : {0, -1}
        The branch.

    Returns
    -------
    float or ndarray
        A Python float for scalar input, else a float64 array of the input's shape.

    Examples
    --------
    >>> from bndp.special import lambertw
    >>> lambertw(1.0)
    0.5671432904097838
    >>> lambertw(-0.36787944117144233, branch=-1)
    -1.0
    """
    if isinstance(branch, (bool, np.bool_)) or not isinstance(branch, (int, np.integer)):
        raise TypeError(f"`branch` must be 0 or -1; got {branch!r}")
    if branch not in (0, -1):
        raise ValueError(f"`branch` must be 0 or -1; got {branch!r}")
    a = as_float_array(x, "x")
    lo_ok = a >= _BRANCH_POINT
    ok = lo_ok if branch == 0 else lo_ok & (a <= 0.0)
    if not ok.all():
        bad = a[~ok] if a.ndim else a
        dom = "[-1/e, inf)" if branch == 0 else "[-1/e, 0]"
        raise ValueError(f"`x` must lie in {dom} for branch {branch}; got {float(np.ravel(bad)[0])!r}")
    flat = np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
    out = np.empty_like(flat)
    _special.lambertw_fill(flat, int(branch), out)
    if a.ndim == 0:
        return float(out[0])
    return out.reshape(a.shape)
