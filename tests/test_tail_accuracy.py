"""Rounding and accuracy in the tails (issue 14): truncated-normal moments and Fisher
information loss far outside the support, truncated-normal quantiles in log space, and the
upper-tail functions (sf, isf, logcdf, logsf). Every reference is computed here with mpmath
at 50 digits (more where the standardised distance is large)."""

import math

import mpmath
import numpy as np
import pytest

import bndp
from bndp.accounting import fisher_information_loss, fisher_information_loss_squared
from bndp.distributions import truncnorm_eval, truncnorm_tail_eval


def _tn_moments_exact(loc, scale, lo, hi):
    # closed form in enough digits to absorb its cancellation (~ 2 log10(beta) digits)
    extra = int(4 * math.log10(1.0 + abs(loc) + abs(lo) + abs(hi)))
    with mpmath.workdps(50 + extra):
        loc, scale, lo, hi = (mpmath.mpf(v) for v in (loc, scale, lo, hi))
        a, b = (lo - loc) / scale, (hi - loc) / scale
        Z = mpmath.ncdf(b) - mpmath.ncdf(a) if b < 0 else mpmath.ncdf(-a) - mpmath.ncdf(-b)
        pa, pb = mpmath.npdf(a), mpmath.npdf(b)
        m1 = (pa - pb) / Z
        v = 1 + (a * pa - b * pb) / Z - m1 ** 2
        return loc + scale * m1, scale ** 2 * v


def _rel(x, ref):
    return abs(float((mpmath.mpf(x) - ref) / ref))


# theta at k sigma beyond the support: before, var was off by 7.3e-8 (30), 1.7e-5 (100),
# 4.4e-2 (300), negative at 1000 (FIL clamped to 0), 6e13 at 1e5; the mean by 6e-2 at 1e5
FAR = [2.5, 5.0, 30.0, 100.0, 300.0, 1000.0, 1e5, 1e8, 1.1e8, 1e9, 1e12]


@pytest.mark.parametrize("k", FAR)
@pytest.mark.parametrize("lo, hi, sigma", [(-1.0, 1.0, 1.0), (-1.0, 3.0, 2.5),
                                           (0.0, 1e-3, 1.0), (0.0, 0.02, 1.0)])
def test_truncated_gaussian_moments_far_outside_support(k, lo, hi, sigma):
    m = bndp.TruncatedGaussian(sigma=sigma, lower=lo, upper=hi)
    for theta in (lo - k * sigma, hi + k * sigma):
        rm, rv = _tn_moments_exact(theta, sigma, lo, hi)
        assert _rel(m.mean(theta), rm) < 1e-12
        assert _rel(m.variance(theta), rv) < 1e-12
        # FIL: eta^2 = Var/sigma^4 (Eq. (3)); never clamped to 0
        assert _rel(fisher_information_loss_squared(m, theta), rv / sigma ** 4) < 1e-12
        assert _rel(fisher_information_loss(m, theta), mpmath.sqrt(rv) / sigma ** 2) < 1e-12


def test_truncated_gaussian_far_moments_are_positive_arrays():
    m = bndp.TruncatedGaussian(sigma=1.0, lower=-1.0, upper=1.0)
    th = np.array([1001.0, -1001.0, 1e100, -1e100])
    v = m.variance(th)
    assert np.all(v > 0) and np.all(np.isfinite(v))
    assert np.all(fisher_information_loss_squared(m, th) > 0)
    mu = m.mean(th)
    assert np.all((mu >= -1.0) & (mu <= 1.0))


def _newton_log_tail(logt, z):
    # solve log Phi(-z) = logt for z (Newton on the log upper tail; converges from the
    # asymptotic start z = sqrt(-2 logt) or from 0)
    for _ in range(200):
        q = mpmath.ncdf(-z)
        step = (mpmath.log(q) - logt) / (-mpmath.npdf(z) / q)
        z -= step
        if abs(step) < mpmath.mpf(10) ** -45 * (1 + abs(z)):
            break
    return z


def _tn_ppf_exact(p, loc, scale, lo, hi):
    with mpmath.workdps(50):
        p, loc, scale, lo, hi = (mpmath.mpf(v) for v in (p, loc, scale, lo, hi))
        a, b = (lo - loc) / scale, (hi - loc) / scale
        if b < 0:   # left tail: Phi(z) = Phi(a) + p Z, i.e. Phi(-(-z)) = ...
            t = mpmath.ncdf(a) + p * (mpmath.ncdf(b) - mpmath.ncdf(a))
            z = -_newton_log_tail(mpmath.log(t), mpmath.sqrt(-2 * mpmath.log(t)))
        else:       # Phi(-z) = Phi(-b) + (1 - p) Z
            t = mpmath.ncdf(-b) + (1 - p) * (mpmath.ncdf(-a) - mpmath.ncdf(-b))
            z = _newton_log_tail(mpmath.log(t), mpmath.sqrt(-2 * mpmath.log(t)) if t < 0.3 else mpmath.mpf(0))
        return loc + scale * z


@pytest.mark.parametrize("p, lo, hi", [
    (1e-16, -40.0, -39.0),         # before: -39.93027 (2.4e-5 relative, 7e-2 of the width)
    (1e-30, -40.0, -39.0),         # before: -40.0 (the far end)
    (1e-30, -50.0, -3.0),          # before: -50.0 (true -12.0227)
    (1e-30, -np.inf, -3.0),        # before: -inf
    (1 - 1e-10, 39.0, 40.0),       # before: 4.4e-11 relative
    (1 - 1e-10, -40.0, -39.0),
    (1e-30, 39.0, 40.0),
    (1 - 1e-10, -1.0, 1.0),
    (1 - 1e-10, 3.0, 50.0),
    (0.3, -40.0, -39.0),
    (0.7, 39.0, 40.0),
])
def test_truncnorm_ppf_tails(p, lo, hi):
    x = truncnorm_eval(2, p, 0.0, 1.0, lo, hi)
    assert _rel(x, _tn_ppf_exact(p, 0.0, 1.0, lo, hi)) < 1e-13


def _tn_tail_exact(x, loc, scale, lo, hi):
    with mpmath.workdps(50):
        x, loc, scale, lo, hi = (mpmath.mpf(v) for v in (x, loc, scale, lo, hi))
        a, b, z = (lo - loc) / scale, (hi - loc) / scale, (x - loc) / scale
        if b <= 0:
            Z = mpmath.ncdf(b) - mpmath.ncdf(a)
            return (mpmath.ncdf(z) - mpmath.ncdf(a)) / Z, (mpmath.ncdf(b) - mpmath.ncdf(z)) / Z
        Z = mpmath.ncdf(-a) - mpmath.ncdf(-b)
        return (mpmath.ncdf(-a) - mpmath.ncdf(-z)) / Z, (mpmath.ncdf(-z) - mpmath.ncdf(-b)) / Z


@pytest.mark.parametrize("x, theta, lo, hi", [
    (30.0, 0.0, -50.0, 50.0),      # 1 - cdf: 0.0
    (40.0, 0.0, -50.0, 50.0),      # sf 3.6e-350 (below the float range): logsf only
    (-40.0, 0.0, -50.0, 50.0),
    (0.5, 0.0, -1.0, 1.0),
    (5.0, 1.0, -10.0, 12.0),
    (-39.5, 0.0, -40.0, -39.0),    # interval in the left tail
    (39.999, 0.0, 39.0, 40.0),     # right tail, near the upper end
])
def test_truncated_gaussian_sf_logsf_logcdf(x, theta, lo, hi):
    m = bndp.TruncatedGaussian(sigma=1.0, lower=lo, upper=hi)
    F, S = _tn_tail_exact(x, theta, 1.0, lo, hi)
    # relative on the log scale, or 1e-13 absolute there (= relative on the probability:
    # log F = -2.96e-9 at -39.5 on [-40, -39] is off by 3.9e-14, F by 3.9e-14 relative)
    for got, ref in ((m.logsf(x, theta), mpmath.log(S)), (m.logcdf(x, theta), mpmath.log(F))):
        assert abs(got - ref) <= 1e-13 * max(1, abs(ref))
    if S > mpmath.mpf("1e-300"):
        assert m.sf(x, theta) > 0
        # exp of the log-space value: relative error ~ eps |log S| / (distance to the end
        # in log terms); 2.2e-12 measured at 0.001 below the end of [39, 40]
        assert _rel(m.sf(x, theta), S) < 1e-11


@pytest.mark.parametrize("q, lo, hi", [(1e-30, -50.0, 50.0), (1e-10, -50.0, 50.0),
                                       (1e-100, 3.0, 60.0), (1e-20, 39.0, 40.0),
                                       (0.7, -40.0, -39.0), (1e-30, -40.0, -39.0)])
def test_truncated_gaussian_isf(q, lo, hi):
    m = bndp.TruncatedGaussian(sigma=1.0, lower=lo, upper=hi)
    x = m.isf(q, 0.0)
    # isf(q) = ppf(1 - q) exactly: the reflected law's ppf at q
    assert _rel(x, -_tn_ppf_exact(q, 0.0, 1.0, -hi, -lo)) < 1e-13
    assert m.isf(0.0, 0.0) == hi and m.isf(1.0, 0.0) == lo
    assert m.logsf(hi, 0.0) == -np.inf and m.logcdf(lo, 0.0) == -np.inf


# --- the release mechanisms' tails: sf / logsf / logcdf / isf --------------------------------

def _bl_sf_ref(x, q, b, lo, hi):
    """P(W_q > x) of the continuous bounded Laplace at 50 digits."""
    with mpmath.workdps(50):
        x, q, b = mpmath.mpf(x), mpmath.mpf(q), mpmath.mpf(b)

        def F(y):  # Laplace CDF (unnormalised by the truncation)
            return mpmath.e ** ((y - q) / b) / 2 if y < q else 1 - mpmath.e ** (-(y - q) / b) / 2
        return (F(mpmath.mpf(hi)) - F(x)) / (F(mpmath.mpf(hi)) - F(mpmath.mpf(lo)))


@pytest.mark.parametrize("x,q", [(99.0, 0.0), (99.999, 100.0), (50.0, 60.0), (1.0, 0.0),
                                 (30.0, 10.0), (0.5, 0.0)])
def test_bounded_laplace_tails_against_mpmath(x, q):
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=100.0, mode="continuous")
    ref = _bl_sf_ref(x, q, m.scale, 0.0, 100.0)
    assert m.sf(x, q) == pytest.approx(float(ref), rel=1e-13)
    with mpmath.workdps(50):
        assert m.logsf(x, q) == pytest.approx(float(mpmath.log(ref)), rel=1e-13, abs=1e-15)
        assert m.logcdf(x, q) == pytest.approx(float(mpmath.log(1 - ref)), rel=1e-12, abs=1e-15)
    # isf inverts sf (the upper tail far below 1e-16 included)
    for p in (1e-30, 1e-10, 0.3, 0.9):
        y = m.isf(p, q)
        if 0.0 < y < 100.0:
            assert float(_bl_sf_ref(y, q, m.scale, 0.0, 100.0)) == pytest.approx(p, rel=1e-9)


def test_bounded_gaussian_tails_against_mpmath():
    g = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=120.0, mode="continuous")
    s = g.sigma
    with mpmath.workdps(50):
        def sf_ref(x, q):
            cdf = lambda y: mpmath.ncdf((mpmath.mpf(y) - q) / s)  # noqa: E731
            return (cdf(120) - cdf(x)) / (cdf(120) - cdf(0))
        for x, q in [(119.0, 0.0), (60.0, 50.0), (10.0, 100.0)]:
            ref = sf_ref(x, q)
            assert g.sf(x, q) == pytest.approx(float(ref), rel=1e-11)
            assert g.logsf(x, q) == pytest.approx(float(mpmath.log(ref)), rel=1e-12, abs=1e-14)
    assert g.sf(119.0, 0.0) > 0      # where 1 - cdf is 0


@pytest.mark.parametrize("cls", [bndp.BoundedLaplace, bndp.BoundedGaussian])
def test_grid_law_tails_are_exact_sums(cls):
    # a row its own kernel's table covers (narrow enough that the wide kernel is not
    # calibrated for it): the law functions are exact integer sums
    from fractions import Fraction
    m = cls(1.0, sensitivity=1.0, lower=0.0, upper=2.0)
    plan = m.exact_plan
    assert not plan.kernel.tailw and plan.kernel.N == plan.n
    w, s = plan.weights_for(0.4)
    g = plan.grid()
    for k in (0, 5, plan.n - 3, plan.n - 1):
        exact_sf = Fraction(int(sum(int(v) for v in w[k + 1:])), s)
        assert m.sf(g[k], 0.4) == float(exact_sf)
        assert m.logsf(g[k], 0.4) == pytest.approx(math.log(exact_sf), rel=1e-14)
        assert m.logcdf(g[k], 0.4) == pytest.approx(math.log(1 - exact_sf), rel=1e-13,
                                                      abs=1e-16)
    assert m.sf(2.0, 0.4) == 0.0 and m.sf(-1.0, 0.4) == 1.0
    # isf inverts sf as sf returns it, at every grid point (the smallest point whose sf is
    # at most p; where a point's weight is 0 its sf is the previous point's)
    sf = [float(m.sf(g[k], 0.4)) for k in range(plan.n + 1)]
    for k in range(plan.n + 1):
        if k == 0 or sf[k] < sf[k - 1]:
            assert m.isf(sf[k], 0.4) == g[k], k


def test_unbounded_and_rectified_tails():
    with mpmath.workdps(50):
        g = bndp.Gaussian(1.0, delta=1e-5, sensitivity=1.0)
        s = mpmath.mpf(g.sigma)
        x = 1.0 + 40.0 * g.sigma                      # sf about 1e-350: below 1 - cdf's reach
        ref = mpmath.ncdf(-(mpmath.mpf(x) - 1) / s)
        assert g.logsf(x, 1.0) == pytest.approx(float(mpmath.log(ref)), rel=1e-12)
        assert g.logcdf(2.0 - x, 1.0) == pytest.approx(float(mpmath.log(ref)), rel=1e-12)
        x = 1.0 + 12.0 * g.sigma
        ref = mpmath.ncdf(-(mpmath.mpf(x) - 1) / s)
        assert g.sf(x, 1.0) == pytest.approx(float(ref), rel=1e-12)
        assert g.isf(float(ref), 1.0) == pytest.approx(x, rel=1e-12)
        lap = bndp.Laplace(1.0, sensitivity=1.0)
        b = mpmath.mpf(lap.scale)
        ref = mpmath.e ** (-(mpmath.mpf(100.0)) / b) / 2
        assert lap.sf(100.0, 0.0) == pytest.approx(float(ref), rel=1e-13)
        assert lap.logsf(100.0, 0.0) == pytest.approx(float(mpmath.log(ref)), rel=1e-13)
        assert lap.logcdf(-100.0, 0.0) == pytest.approx(float(mpmath.log(ref)), rel=1e-13)
        assert lap.isf(float(ref), 0.0) == pytest.approx(100.0, rel=1e-12)
        assert lap.sf(-1.0, 0.0) == pytest.approx(1 - float(mpmath.e ** (-1 / b) / 2), rel=1e-15)
        r = bndp.RectifiedGaussian(1.0, lower=-50.0, upper=50.0)
        ref = mpmath.ncdf(-mpmath.mpf(40.0))           # about 4e-350: logsf only
        assert r.logsf(40.0, 0.0) == pytest.approx(float(mpmath.log(ref)), rel=1e-12)
        ref = mpmath.ncdf(-mpmath.mpf(30.0))
        assert r.sf(30.0, 0.0) == pytest.approx(float(ref), rel=1e-12)
        assert r.sf(50.0, 0.0) == 0.0 and r.sf(-51.0, 0.0) == 1.0
        assert r.isf(float(ref), 0.0) == pytest.approx(30.0, rel=1e-12)
        narrow = bndp.RectifiedGaussian(1.0, lower=-5.0,
                                        upper=5.0)   # atom of 2.9e-7 at the upper bound
        assert narrow.isf(1e-9, 0.0) == 5.0 and narrow.isf(1e-6, 0.0) < 5.0


def test_constrained_laplace_tails():
    h = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=0.0,
                                mode="continuous")   # half-line [0, inf), true value 0
    with mpmath.workdps(50):
        s = mpmath.mpf(h.scale)
        for x in (1.0, 100.0, 500.0):
            ref = mpmath.e ** (-mpmath.mpf(x) / s)      # (e^{-x/s}/2) / N(0), N(0) = 1/2
            assert h.sf(x, 0.0) == pytest.approx(float(ref), rel=1e-12)
            assert h.logsf(x, 0.0) == pytest.approx(float(mpmath.log(ref)), rel=1e-12)
        assert h.isf(1e-40, 0.0) == pytest.approx(float(-s * mpmath.log(mpmath.mpf("1e-40"))),
                                                  rel=1e-12)
    m = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, forbidden=[(0.0, 1.0)], lower=-10.0,
                                upper=100.0,
                                mode="continuous")
    x = np.array([-5.0, -0.5, 2.0, 20.0])
    # 1 - cdf carries an absolute error of ~1e-16: the reference for the body of the law
    np.testing.assert_allclose(m.sf(x, 3.0), 1 - m.cdf(x, 3.0), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(m.logcdf(x, 3.0), np.log(m.cdf(x, 3.0)), rtol=1e-13)
    assert m.sf(99.0, 3.0) > 0 and 1 - m.cdf(99.0, 3.0) == 0.0
    for p in (0.9, 0.5, 1e-20):
        assert m.sf(m.isf(p, 3.0), 3.0) == pytest.approx(p, rel=1e-9)


def _tn_end_exact(x, loc, scale, lo, hi):
    # cdf and sf from the exact values of the double inputs: (Phi(z) - Phi(a))/(Phi(b) - Phi(a))
    # at 50 digits plus those that the difference of Phi cancels near an end
    d = min(x - lo, hi - x) / scale
    with mpmath.workdps(50 + max(0, int(-math.log10(d)))):
        X, L, S, A, B = (mpmath.mpf(v) for v in (x, loc, scale, lo, hi))
        a, b, z = (A - L) / S, (B - L) / S, (X - L) / S
        if b <= 0:
            f, s = mpmath.ncdf(z) - mpmath.ncdf(a), mpmath.ncdf(b) - mpmath.ncdf(z)
        else:
            f, s = mpmath.ncdf(-a) - mpmath.ncdf(-z), mpmath.ncdf(-z) - mpmath.ncdf(-b)
        return f / (f + s), s / (f + s)


def _tn_end_points(lo, hi, scale):
    # x = lo + k ulp, lo + f scale, ..., and the mirror images from hi
    pts = []
    for end, sgn in ((lo, 1.0), (hi, -1.0)):
        step = math.ulp(end) if end != 0.0 else 1e-300
        pts += [end + sgn * k * step for k in (1, 2, 7, 1000)]
        pts += [end + sgn * f * scale for f in (1e-12, 1e-9, 1e-6, 1e-3, 0.01, 0.1, 0.3, 1.0,
                                                 2.5)]
    return np.array(sorted({x for x in pts if lo < x < hi}))


# a = (lower - loc)/scale in both tails and the middle, each with widths 1e-3, 1 and 10 and
# their mirror images, a middle interval, ends not at a whole number of scales: before,
# 1.4e-5 relative at a cdf of 1e-12 on [-40, -39] and 1.4 at 4.4e-13 on [-3.001, -3]; 7e-14
# relative (cdf, sf) and 8e-14 absolute (logcdf, logsf) at most now
_TN_STRADDLE = [(0.1, 0.3, 0.1 - 40.0 * 0.3, 0.5), (0.1, 0.3, -0.4, 0.1 + 37.3 * 0.3),
                (1 / 3, 0.7, 1 / 3 - 20.3 * 0.7, 1.0)]
_TN_END_CASES = [(0.0, 1.0, s * a - (w if s < 0 else 0.0), s * a + (w if s > 0 else 0.0))
                 for a in (-40.0, -5.0, 0.0, 3.0, 30.0) for w in (1e-3, 1.0, 10.0)
                 for s in (1.0, -1.0)] + [(0.3, 2.0, -1.7, 2.9), (1e3, 7.0, 720.0, 727.0),
                                          (0.1, 0.3, 0.1 - 12.0 * 0.3, 0.1 - 11.9 * 0.3),
                                          ] + _TN_STRADDLE


@pytest.mark.parametrize("loc, scale, lo, hi", _TN_END_CASES)
def test_truncated_normal_accurate_next_to_an_end(loc, scale, lo, hi):
    _check_tn_ends(loc, scale, lo, hi, 1e-12)


def _check_tn_ends(loc, scale, lo, hi, tol):
    x = _tn_end_points(lo, hi, scale)
    cdf = truncnorm_eval(1, x, loc, scale, lo, hi)
    lcdf, lsf, sf = (truncnorm_tail_eval(w, x, loc, scale, lo, hi) for w in (0, 1, 2))
    for i, xi in enumerate(x):
        f, s = _tn_end_exact(float(xi), loc, scale, lo, hi)
        for val, ref, lval in ((cdf[i], f, lcdf[i]), (sf[i], s, lsf[i])):
            if ref < 1e-300:                 # subnormal: no relative accuracy to ask for
                continue
            assert abs(float((val - ref) / ref)) <= tol, (xi, val, ref)
            assert abs(float(lval - mpmath.log(ref))) <= tol, (xi, lval, ref)
