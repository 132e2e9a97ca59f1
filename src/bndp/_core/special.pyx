# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Special functions of the compiled core: the standard normal
quantile [W88] from the quantity that carries the precision, Phi split into its central
mass and tail, log-space helpers, erfcx/erfcinv, real Lambert W on both branches. Each is
tested against SciPy/mpmath to a few ulps (tests/test_special.py, tests/test_lambertw.py).
"""

import numpy as _np

from scipy.special.cython_special cimport erfcx as _sc_erfcx
from bndp._core.common cimport *

# ---------------------------------------------------------------------------------------
# Inverse of the standard normal CDF [W88], split so that callers pass the quantity that
# carries the precision: q = p - 1/2 for the central part, log of the tail mass otherwise.
# Accuracy against SciPy/mpmath is tested in tests/test_special.py (a few ulps).
# ---------------------------------------------------------------------------------------


cdef double _ndtri_lower_log(double logt) noexcept nogil:
    # Phi^-1(exp(logt)) for logt <= log(1/2): the lower quantile from a log-probability.
    cdef double x, h, lx
    cdef int k
    if logt > -2.5902671654458267:        # t > 0.075: central branch, q = t - 1/2 (t <= 1/2)
        return _ppnd_central(exp(logt) - 0.5)
    if logt >= -740.0:                    # AS 241 tail branch is accurate for r <= 27.2
        return -_ppnd_tail_r(sqrt(-logt))
    # Far tail (t < 1e-321, |x| > 38.4): AS 241 loses accuracy there. Start from its value and
    # polish with Newton steps on log Phi(x) = logt; log_ndtr is accurate in this range and
    # d/dx log Phi(x) = phi(x)/Phi(x) = exp(log phi(x) - log Phi(x)).
    # The slope phi(x)/Phi(x) = sqrt(2/pi)/erfcx(-x/sqrt2) is taken from erfcx: formed as
    # exp(log phi - log Phi) it would cancel (both logs ~ -x^2/2), garbage for |x| > 1e7.
    # Beyond |x| ~ 1.4e154, x^2/2 overflows: there Phi^-1(e^logt) = -sqrt(-2 logt) to
    # rounding (the correction log|x| is below the resolution of logt).
    if logt < -1e300:
        return -sqrt(-2.0 * logt) if logt > -INFINITY else -INFINITY
    # start from the asymptotic Phi(x) ~ phi(x)/|x|: x^2 + ln x^2 = y := -2 logt - ln(2 pi),
    # x^2 ~ y - ln y (AS 241's tail approximation drifts off for r = sqrt(-logt) >> 27)
    h = -2.0 * logt - 2.0 * LOG_SQRT_2PI
    x = -sqrt(h - log(h))
    for k in range(8):
        lx = _log_ndtr(x)
        h = (lx - logt) * (_sc_erfcx(-x * SQRT1_2) * 1.2533141373155002512078826424055226)
        x -= h
        if fabs(h) <= 1e-17 * fabs(x):
            break
    return x


# ---------------------------------------------------------------------------------------
# Log-space primitives
# ---------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------
# Real Lambert W. q = e*x + 1 carries the precision near the branch point x = -1/e (where
# W = -1 + v, g(v) := 1 + (v - 1) e^v = q). Three regimes:
#   * q < 1/2: Newton on g(v) = q in v, with g from its Taylor series sum (k-1) v^k / k!
#     for |v| <= 1 (no cancellation), started from the branch-point series v ~ p - p^2/3 +
#     11 p^3/72 - 43 p^4/540, p = +-sqrt(2q) (+ for W0, - for W-1);
#   * W0 otherwise: Halley on w e^w = x for x < e, Newton on w + ln w = ln x above;
#   * W-1 otherwise: Newton on w + ln(-w) = ln(-x) (well scaled down to x -> 0-).
# ---------------------------------------------------------------------------------------


cdef double _lw_branch(double q, int branch) noexcept nogil:
    # W from q = e x + 1 in [0, 1/2); branch 0 or -1.
    cdef double p, v, dv, d
    cdef int it
    if q <= 0.0:
        return -1.0
    p = sqrt(2.0 * q)
    if branch != 0:
        p = -p
    v = p * (1.0 + p * (-1.0 / 3.0 + p * (11.0 / 72.0 - p * (43.0 / 540.0))))
    for it in range(60):
        d = v * exp(v)
        if d == 0.0:
            break
        dv = (_lw_g(v) - q) / d
        v -= dv
        if fabs(dv) <= 1e-300 + 2e-16 * fabs(v):
            break
    return v - 1.0


cdef double _lw0_direct(double x) noexcept nogil:
    # W0(x) for x >= -0.18 (away from the branch point).
    cdef double w, ew, f, dw, lx, l2
    cdef int it
    if x == 0.0:
        return x
    if x == INFINITY:
        return INFINITY
    if x < 2.718281828459045:
        # Winitzki's start, then Halley on f(w) = w e^w - x (f' = e^w (w + 1) >= 0.6 e^w)
        lx = log1p(x)
        w = lx * (1.0 - log1p(lx) / (2.0 + lx))
        for it in range(40):
            ew = exp(w)
            f = w * ew - x
            dw = f / (ew * (w + 1.0) - (w + 2.0) * f / (2.0 * w + 2.0))
            w -= dw
            if fabs(dw) <= 1e-300 + 1e-16 * fabs(w):
                break
        return w
    lx = log(x)
    l2 = log(lx)
    w = lx - l2 + l2 / lx
    for it in range(40):
        # Newton on w + ln w = ln x (h' = 1 + 1/w >= 1)
        dw = (w + log(w) - lx) / (1.0 + 1.0 / w)
        w -= dw
        if fabs(dw) <= 1e-16 * fabs(w):
            break
    return w


cdef double _lwm1_log(double lmx) noexcept nogil:
    # W-1(x) from lmx = ln(-x), for x >= -0.18 (lmx >= -1.7): Newton on w + ln(-w) = lmx,
    # whose slope 1 + 1/w lies in [0.5, 1) there. Works for x that underflow (x -> 0-).
    cdef double w, l2, dw
    cdef int it
    if lmx == -INFINITY:
        return -INFINITY
    l2 = log(-lmx)
    w = lmx - l2 + l2 / lmx
    if not (w < -1.5):
        w = -2.5
    for it in range(60):
        dw = (w + log(-w) - lmx) / (1.0 + 1.0 / w)
        w -= dw
        if w > -1.1:
            w = -1.1
        if fabs(dw) <= 1e-16 * fabs(w):
            break
    return w


cdef double _lambertw(double x, int branch) noexcept nogil:
    # Real W0 (branch 0, x >= -1/e) or W-1 (branch -1, -1/e <= x <= 0). The double nearest
    # -1/e lies 3.4e-17 below it; it maps to W = -1 (q is then -3.4e-17, within rounding).
    cdef double q
    if isnan(x):
        return NAN
    # q = e x + 1 with e in double-double and one fma: exact to a rounding of q itself
    q = fma(x, _E_HI, 1.0) + x * _E_LO
    if q < -1e-16:
        return NAN
    if q < 0.5:
        return _lw_branch(q, branch)
    if branch == 0:
        return _lw0_direct(x)
    if x >= 0.0:
        return -INFINITY if x == 0.0 else NAN
    return _lwm1_log(log(-x))


def ndtri_lower_log(double logt):
    """Phi^-1(exp(logt)) for logt <= log(1/2) (exposed for tests)."""
    return _ndtri_lower_log(logt)


# =======================================================================================
# Kernels of the other mechanism families: one include file per family, textually part of
# this module (so they use every cdef helper above and stay in the one extension).


def lambertw_fill(const double[::1] x, int branch, double[::1] out):
    """Real Lambert W on a flat array (branch 0 or -1); NaN outside the real domain."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(x.shape[0]):
            out[i] = _lambertw(x[i], branch)
