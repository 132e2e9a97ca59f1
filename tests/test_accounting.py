"""Per-instance RDP and FIL of the bounded-support Gaussian mechanisms (bndp.accounting).

Reference values: Hu et al. 2024 (arXiv:2403.05598) closed forms evaluated independently
(8 digits); quadrature and mpmath oracles are written out here.
"""

import inspect
import math
import os
import runpy
import sys
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import log_ndtr, logsumexp, ndtr

import bndp
from bndp.accounting import (
    PerInstanceAccountant,
    fisher_information_loss,
    fisher_information_loss_squared,
    gaussian_rdp,
    per_instance_rdp,
    rdp_to_dp,
)

FULL = os.environ.get("BNDP_FULL", "") == "1"
ROOT = Path(__file__).resolve().parents[1]

THETAS = np.array([0.0, 0.5, 1.0, 2.0, 3.0])


def mechs(sigma, lo=-1.0, hi=1.0):
    return (bndp.RectifiedGaussian(sigma, lower=lo, upper=hi), bndp.TruncatedGaussian(sigma,
                                   lower=lo, upper=hi),
            bndp.StochasticSign(sigma))


def fwd(m, theta, c=1.0, alpha=2.0):
    """D(theta || theta + c) per coordinate."""
    return per_instance_rdp(m, theta, c, alpha, convention="alg1", per_coordinate=True)


def rev(m, theta, c=1.0, alpha=2.0):
    """D(theta + c || theta) on a support symmetric about 0, by reflection x -> -x."""
    return fwd(m, -np.asarray(theta) - c, c, alpha)


# ---------------------------------------------------------------------------------------
# Reference values
# ---------------------------------------------------------------------------------------

def test_reference_table_sigma_1():
    r, t, s = mechs(1.0)
    np.testing.assert_allclose(fwd(r, THETAS), [0.89775003, 0.93782223, 0.93070587, 0.73197122,
                                                0.32743709], atol=1e-8)
    np.testing.assert_allclose(rev(r, THETAS), [0.69644479, 0.54880319, 0.39039021, 0.12995536,
                                                0.02039565], atol=1e-8)
    np.testing.assert_allclose(fwd(t, THETAS), [0.28400011, 0.27431219, 0.24814862, 0.17484031,
                                                0.11164986], atol=1e-8)
    np.testing.assert_allclose(rev(t, THETAS), [0.24814862, 0.21249842, 0.17484031, 0.11164986,
                                                0.07116711], atol=1e-8)
    np.testing.assert_allclose(fwd(s, THETAS), [0.62748106, 0.66128304, 0.60473801, 0.29246158,
                                                0.05341681], atol=1e-8)
    np.testing.assert_allclose(rev(s, THETAS), [0.38258190, 0.24207993, 0.12959777, 0.02038977,
                                                0.00128821], atol=1e-8)
    np.testing.assert_allclose(fisher_information_loss(r, THETAS),
                               [0.96789680, 0.95245626, 0.90316666, 0.68565407, 0.36566853],
                               atol=1e-8)
    np.testing.assert_allclose(fisher_information_loss(t, THETAS),
                               [0.53956009, 0.52938469, 0.50131455, 0.41647678, 0.33103340],
                               atol=1e-8)
    np.testing.assert_allclose(fisher_information_loss(s, THETAS),
                               [0.79788456, 0.76222808, 0.66229062, 0.36209817, 0.12070569],
                               atol=1e-8)


def test_reference_table_sigma_half():
    th = np.array([0.0, 1.0, 2.0, 3.0])
    r, t, s = mechs(0.5)
    np.testing.assert_allclose(fwd(r, th), [3.77598077, 3.97755685, 3.34123355, 0.80739142],
                               atol=1e-7)
    np.testing.assert_allclose(rev(r, th), [2.50397881, 0.64802627, 0.02294962, 0.00003167],
                               atol=1e-8)
    np.testing.assert_allclose(fwd(t, th), [2.70671477, 1.55666876, 0.51305674, 0.20024965],
                               atol=1e-7)
    np.testing.assert_allclose(rev(t, th), [1.55666876, 0.51305674, 0.20024965, 0.09999925],
                               atol=1e-8)
    np.testing.assert_allclose(fisher_information_loss(r, th),
                               [1.99479349, 1.80920801, 0.73134110, 0.04762395], atol=1e-8)
    np.testing.assert_allclose(fisher_information_loss(t, th),
                               [1.75925132, 1.20441848, 0.67610201, 0.43207795], atol=1e-8)
    np.testing.assert_allclose(fisher_information_loss(s, th),
                               [1.59576912, 0.72419634, 0.04756183, 0.00038688], atol=1e-8)


def test_reference_single_values():
    r, t, _ = mechs(1.0)
    assert fwd(r, 0.0, alpha=8.0) == pytest.approx(1.68075221, abs=1e-8)
    assert fwd(t, 0.0, alpha=8.0) == pytest.approx(0.73413513, abs=1e-8)
    # corrected Eq. (6): 0.274312 (the printed form gives 1.0)
    assert per_instance_rdp(t, 0.5, 1.0, 2.0, convention="alg1") == pytest.approx(0.27431219, abs=1e-8)
    # eta_T^2(0) = 1 - 2 phi(1)/(2 Phi(1) - 1); rectified eta^2 (corrected Eq. (4))
    assert fisher_information_loss_squared(t, 0.0) == pytest.approx(0.2911250948, abs=1e-10)
    assert fisher_information_loss_squared(r, 0.0) == pytest.approx(0.936824, abs=1e-6)
    # asymmetric support
    ra, ta, _ = mechs(1.0, -0.5, 2.0)
    assert fwd(ra, 0.3) == pytest.approx(0.87197700, abs=1e-8)
    assert fwd(ta, 0.3) == pytest.approx(0.39296302, abs=1e-8)
    # large alpha stays bounded on a bounded support (Gaussian: 200)
    r5, t5, _ = mechs(0.5)
    assert fwd(r5, 0.0, alpha=100.0) == pytest.approx(6.538703169676754, rel=1e-10)
    assert fwd(t5, 0.0, alpha=100.0) == pytest.approx(5.271028990179218, rel=1e-10)


def test_alg1_versus_sup_at_theta_minus_3():
    r = bndp.RectifiedGaussian(0.5, lower=-1.0, upper=1.0)
    a1 = per_instance_rdp(r, -3.0, 1.0, 2.0, convention="alg1")
    sup = per_instance_rdp(r, -3.0, 1.0, 2.0, convention="sup")
    assert a1 == pytest.approx(0.02294962, abs=1e-8)
    assert sup == pytest.approx(3.34123355, abs=1e-8)
    assert sup / a1 > 140


def test_conventions_are_ordered_and_sup_is_max_of_four_directions():
    th = np.linspace(-4, 4, 41)
    for m in mechs(0.7, -1.0, 1.5)[:2]:
        a1 = per_instance_rdp(m, th, 0.8, 3.0, "alg1", per_coordinate=True)
        tx = per_instance_rdp(m, th, 0.8, 3.0, "text", per_coordinate=True)
        sp = per_instance_rdp(m, th, 0.8, 3.0, "sup", per_coordinate=True)
        assert np.all(a1 <= tx) and np.all(tx <= sp)
    # sup = max over the four divergences, on a symmetric support (reflection gives -C)
    r = bndp.RectifiedGaussian(0.7, lower=-1.0, upper=1.0)
    four = np.max([fwd(r, th, 0.8, 3.0), fwd(r, -th - 0.8, 0.8, 3.0),
                   fwd(r, -th, 0.8, 3.0), fwd(r, th - 0.8, 0.8, 3.0)], axis=0)
    np.testing.assert_allclose(per_instance_rdp(r, th, 0.8, 3.0, "sup", per_coordinate=True),
                               four, rtol=1e-13, atol=1e-15)


AMPL = {  # eps_B / eps_G, 'sup' convention, theta = 0, 0.5, 1, 2, 5
    ("rect", 2, 1, 1, 1): [0.8978, 0.9378, 0.9307, 0.9307, 0.0575],
    ("trunc", 2, 1, 1, 1): [0.2840, 0.2743, 0.2840, 0.2481, 0.0712],
    ("rect", 2, 1, 3, 1): [0.9984, 0.9996, 0.9998, 0.9998, 0.7340],
    ("trunc", 2, 1, 3, 1): [0.9593, 0.9373, 0.9593, 0.8706, 0.2057],
    ("rect", 8, 1, 1, 1): [0.4202, 0.4982, 0.5727, 0.7066, 0.9529],
    ("rect", 2, 1, 1, 0.1): [0.9364, 0.9236, 0.8518, 0.5271, 0.0009],
    ("trunc", 2, 1, 1, 0.1): [0.2911, 0.2840, 0.2581, 0.1811, 0.0484],
}


@pytest.mark.parametrize("key", sorted(AMPL))
def test_amplification_table(key):
    name, alpha, sigma, a, c = key
    cls = bndp.RectifiedGaussian if name == "rect" else bndp.TruncatedGaussian
    m = cls(sigma, lower=-a, upper=a)
    th = np.array([0.0, 0.5, 1.0, 2.0, 5.0])
    ratio = per_instance_rdp(m, th, c, alpha, per_coordinate=True) / gaussian_rdp(sigma, c, alpha)
    np.testing.assert_allclose(ratio, AMPL[key], atol=6e-5)


def test_small_shift_regime_of_the_paper():
    # C = 1e-3, sigma = 1, a = 4 (C/sigma as in the paper's CIFAR grids), theta = a * k
    th = 4.0 * np.array([0.0, 0.5, 1.0, 1.25, 1.75, 2.0])
    g = gaussian_rdp(1.0, 1e-3, 2.0)
    rr = per_instance_rdp(bndp.RectifiedGaussian(1.0, lower=-4, upper=4), th, 1e-3, 2.0,
                          per_coordinate=True) / g
    tr = per_instance_rdp(bndp.TruncatedGaussian(1.0, lower=-4, upper=4), th, 1e-3, 2.0,
                          per_coordinate=True) / g
    np.testing.assert_allclose(rr, [0.999997, 0.9974, 0.8187, 0.4708, 0.0147, 0.00057],
                               rtol=2e-3)
    np.testing.assert_allclose(tr, [0.99893, 0.8866, 0.3636, 0.1992, 0.0706, 0.0467], rtol=2e-3)
    # local expansion D ~ alpha C^2 eta^2 / 2
    for m in (bndp.RectifiedGaussian(1.0, lower=-4, upper=4), bndp.TruncatedGaussian(1.0, lower=-4,
                                     upper=4)):
        d = per_instance_rdp(m, th, 1e-3, 2.0, "alg1", per_coordinate=True)
        taylor = 2.0 * 1e-6 * fisher_information_loss_squared(m, th) / 2
        np.testing.assert_allclose(d, taylor, rtol=3e-3)


# ---------------------------------------------------------------------------------------
# Independent oracles: quadrature of p^alpha q^(1-alpha), and mpmath
# ---------------------------------------------------------------------------------------

def _log_int(logf, lo, hi, pts):
    grid = np.linspace(lo, hi, 1001)
    m = max(logf(x) for x in grid)
    pts = [p for p in pts if lo < p < hi]
    v, _ = integrate.quad(lambda x: math.exp(logf(x) - m), lo, hi, points=pts or None,
                          limit=400, epsabs=0.0, epsrel=1e-12)
    return m + math.log(v)


def quad_rdp(kind, alpha, theta, c, sigma, lo, hi):
    lp = lambda x, mu: -0.5 * ((x - mu) / sigma) ** 2 - math.log(sigma * math.sqrt(2 * math.pi))
    pts = (theta, theta + c, theta + (1 - alpha) * c)
    if kind == "trunc":
        z0 = stats.norm.logcdf(hi, theta, sigma) + math.log(-math.expm1(
            stats.norm.logcdf(lo, theta, sigma) - stats.norm.logcdf(hi, theta, sigma)))
        z1 = stats.norm.logcdf(hi, theta + c, sigma) + math.log(-math.expm1(
            stats.norm.logcdf(lo, theta + c, sigma) - stats.norm.logcdf(hi, theta + c, sigma)))
        f = lambda x: alpha * (lp(x, theta) - z0) + (1 - alpha) * (lp(x, theta + c) - z1)
        return _log_int(f, lo, hi, pts) / (alpha - 1)
    f = lambda x: alpha * lp(x, theta) + (1 - alpha) * lp(x, theta + c)
    terms = [_log_int(f, lo, hi, pts),
             alpha * stats.norm.logcdf(lo, theta, sigma) + (1 - alpha) * stats.norm.logcdf(lo, theta + c, sigma),
             alpha * stats.norm.logsf(hi, theta, sigma) + (1 - alpha) * stats.norm.logsf(hi, theta + c, sigma)]
    return float(logsumexp(terms)) / (alpha - 1)


def _grid():
    g = [(al, s, a, c, th) for al in (1.5, 2.0, 4.0, 8.0, 32.0) for s in (0.3, 1.0, 2.0)
         for a in (0.5, 1.0, 3.0) for c in (0.1, 1.0) for th in (-4.0, -0.3, 0.7, 2.5, 6.0)]
    if FULL:
        return g
    rng = np.random.default_rng(4)
    return [g[i] for i in rng.choice(len(g), 40, replace=False)]


@pytest.mark.slow
def test_closed_forms_match_quadrature_on_grid():
    worst = {"rect": 0.0, "trunc": 0.0}
    for al, s, a, c, th in _grid():
        for kind, cls in (("rect", bndp.RectifiedGaussian), ("trunc", bndp.TruncatedGaussian)):
            m = cls(s, lower=-a, upper=a)
            got = per_instance_rdp(m, th, c, al, "alg1")
            ref = quad_rdp(kind, al, th, c, s, -a, a)
            worst[kind] = max(worst[kind], abs(got - ref) / max(1.0, abs(ref)))
            # the other shift direction, through the asymmetric-support kernel directly
            got2 = per_instance_rdp(cls(s, lower=-a, upper=2 * a), th, c, al, "alg1")
            ref2 = quad_rdp(kind, al, th, c, s, -a, 2 * a)
            worst[kind] = max(worst[kind], abs(got2 - ref2) / max(1.0, abs(ref2)))
    assert worst["rect"] < 1e-9 and worst["trunc"] < 1e-9, worst


def _mp_delta(x, s, lo, hi):
    if x < lo:   # left tail of the mirrored pair: no cancellation to 1 - 1
        return mp.ncdf((x - lo) / s) - mp.ncdf((x - hi) / s)
    return mp.ncdf((hi - x) / s) - mp.ncdf((lo - x) / s)


def mp_trunc(alpha, th, c, s, lo, hi):
    mp.mp.dps = 60
    al, th, c, s, lo, hi = (mp.mpf(v) for v in (alpha, th, c, s, lo, hi))
    return float(al * c * c / (2 * s * s) + mp.log(_mp_delta(th + c, s, lo, hi) / _mp_delta(th, s, lo, hi))
                 + mp.log(_mp_delta(th + (1 - al) * c, s, lo, hi) / _mp_delta(th, s, lo, hi)) / (al - 1))


def mp_rect(alpha, th, c, s, lo, hi):
    mp.mp.dps = 60
    al, th, c, s, lo, hi = (mp.mpf(v) for v in (alpha, th, c, s, lo, hi))
    t1 = mp.exp(al * (al - 1) * c * c / (2 * s * s)) * _mp_delta(th + (1 - al) * c, s, lo, hi)
    t2 = mp.ncdf((lo - th) / s) ** al * mp.ncdf((lo - th - c) / s) ** (1 - al)
    t3 = mp.ncdf((th - hi) / s) ** al * mp.ncdf((th + c - hi) / s) ** (1 - al)
    return float(mp.log(t1 + t2 + t3) / (al - 1))


@pytest.mark.parametrize("th,alpha,c", [(1e3, 2.0, 1.0), (40.0, 2.0, 1.0), (8.0, 3.0, 1.0),
                                        (-12.0, 2.0, 0.5), (5.0, 7.5, 0.3), (-1e3, 4.0, 2.0)])
def test_far_tails_keep_relative_precision(th, alpha, c):
    t = bndp.TruncatedGaussian(1.0, lower=-1.0, upper=1.0)
    ref = mp_trunc(alpha, th, c, 1.0, -1.0, 1.0)
    assert per_instance_rdp(t, th, c, alpha, "alg1") == pytest.approx(ref, rel=1e-9)
    if abs(th) < 30:
        r = bndp.RectifiedGaussian(1.0, lower=-1.0, upper=1.0)
        ref = mp_rect(alpha, th, c, 1.0, -1.0, 1.0)
        assert per_instance_rdp(r, th, c, alpha, "alg1") == pytest.approx(ref, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("c", [1e-2, 1e-3])
def test_small_shift_absolute_accuracy_against_mpmath(c):
    for th in (0.0, 3.9, 4.0, 5.5):
        for cls, ref in ((bndp.RectifiedGaussian, mp_rect), (bndp.TruncatedGaussian, mp_trunc)):
            got = per_instance_rdp(cls(1.0, lower=-4.0, upper=4.0), th, c, 2.0, "alg1")
            want = ref(2.0, th, c, 1.0, -4.0, 4.0)
            assert abs(got - want) <= 2e-15 + 1e-9 * want, (cls, th, got, want)


def test_large_support_recovers_gaussian():
    for cls in (bndp.RectifiedGaussian, bndp.TruncatedGaussian):
        v = per_instance_rdp(cls(1.0, lower=-50, upper=50), 0.3, 1.0, [2.0, 5.0], "sup")
        np.testing.assert_allclose(v, [1.0, 2.5], rtol=1e-12)


# ---------------------------------------------------------------------------------------
# Theorems 4.2 and 4.9 numerically; monotonicity in the shift
# ---------------------------------------------------------------------------------------

def test_theorem_4_9_and_4_2_bounded_never_worse_than_gaussian():
    th = np.linspace(-8, 8, 161)
    worst = 0.0
    for al in (1.1, 2.0, 5.0, 20.0, 100.0):
        for s in (0.2, 0.5, 1.0, 3.0):
            for a in (0.2, 1.0, 4.0):
                for c in (0.05, 0.5, 1.0, 2.0):
                    g = gaussian_rdp(s, c, al)
                    for m in mechs(s, -a, a):
                        d = per_instance_rdp(m, th, c, al, "sup", per_coordinate=True)
                        assert np.all(d >= 0)
                        worst = max(worst, float(np.max(d)) / g)
                        eta = fisher_information_loss(m, th)
                        assert np.all(eta <= 1.0 / s * (1 + 1e-14))
    assert worst <= 1.0 + 1e-12
    assert worst > 0.99   # the bound is approached for wide supports (a = 4, sigma = 0.2)


def test_divergence_increases_with_the_shift():
    xs = np.linspace(1e-3, 2.0, 200)
    for al in (1.5, 2.0, 8.0):
        for s in (0.3, 1.0):
            for a in (0.5, 1.0, 3.0):
                for th in (-3.0, -0.5, 0.0, 0.5, 3.0):
                    for cls in (bndp.RectifiedGaussian, bndp.TruncatedGaussian):
                        v = per_instance_rdp(cls(s, lower=-a, upper=a), th, xs, al, "alg1",
                                             per_coordinate=True)
                        assert np.all(np.diff(v) >= -1e-12)


# ---------------------------------------------------------------------------------------
# FIL
# ---------------------------------------------------------------------------------------

def quad_eta2(kind, th, s, lo, hi):
    if kind == "trunc":
        a, b = (lo - th) / s, (hi - th) / s
        if a > 0:
            a, b = -b, -a
        lz = log_ndtr(b) + math.log(-math.expm1(log_ndtr(a) - log_ndtr(b)))
        dens = lambda x: math.exp(stats.norm.logpdf(x, th, s) - lz)
        mean = integrate.quad(lambda x: x * dens(x), lo, hi, epsrel=1e-13, limit=200)[0]
        return integrate.quad(lambda x: (x - mean) ** 2 * dens(x), lo, hi, epsrel=1e-13,
                              limit=200)[0] / s ** 4
    inner = integrate.quad(lambda x: ((x - th) / s ** 2) ** 2 * stats.norm.pdf(x, th, s), lo, hi,
                           epsrel=1e-13, limit=200)[0]
    pa, pb = stats.norm.cdf(lo, th, s), stats.norm.sf(hi, th, s)
    sa = stats.norm.pdf(lo, th, s) / pa
    sb = stats.norm.pdf(hi, th, s) / pb
    return inner + pa * sa ** 2 + pb * sb ** 2


def test_fil_matches_quadrature_of_squared_score():
    for s in (0.3, 1.0, 2.0):
        for a in (0.5, 3.0):
            for th in (-5.0, -1.2, 0.0, 0.8, 4.0):
                for kind, cls in (("rect", bndp.RectifiedGaussian), ("trunc", bndp.TruncatedGaussian)):
                    got = fisher_information_loss_squared(cls(s, lower=-a, upper=a), th)
                    assert got * s * s == pytest.approx(quad_eta2(kind, th, s, -a, a) * s * s,
                                                        abs=1e-11)


def test_rectified_fil_is_the_quantisation_limit_theorem_f1():
    # Theorem F.1: FIL^2 of rounding onto k+1 levels in [-1, 1] tends to eta_R^2
    def quantised(th, k):
        lv = -1 + 2 * np.arange(k + 1) / k
        edges = np.concatenate([[-np.inf], (lv[:-1] + lv[1:]) / 2, [np.inf]])
        p = np.diff(stats.norm.cdf(edges, th, 1.0))
        dp = -np.diff(stats.norm.pdf(edges, th, 1.0))
        return float(np.sum(dp ** 2 / p))

    e2 = fisher_information_loss_squared(bndp.RectifiedGaussian(1.0, lower=-1, upper=1), 0.4)
    assert e2 == pytest.approx(0.917917, abs=1e-6)
    assert quantised(0.4, 1024) == pytest.approx(e2, abs=3e-4)
    assert abs(quantised(0.4, 4096) - e2) < abs(quantised(0.4, 256) - e2)


def test_fil_figure1_claims():
    # eta_R / eta_G at theta = 0: 0.99740 (sigma = 1/2), 0.96790 (sigma = 1);
    # stochastic sign at theta = 0: sqrt(2/pi)/sigma; gap to Gaussian grows toward tails
    assert fisher_information_loss(bndp.RectifiedGaussian(0.5, lower=-1, upper=1), 0.0) * 0.5 == \
        pytest.approx(0.99740, abs=1e-5)
    assert fisher_information_loss(bndp.RectifiedGaussian(1.0, lower=-1, upper=1), 0.0) == \
        pytest.approx(0.96790, abs=1e-5)
    for s in (0.5, 1.0):
        assert fisher_information_loss(bndp.StochasticSign(s), 0.0) == \
            pytest.approx(math.sqrt(2 / math.pi) / s, rel=1e-14)
    th = np.linspace(0, 4, 41)
    for m in mechs(1.0):
        assert np.all(np.diff(fisher_information_loss(m, th)) < 0)


def test_fil_far_tail():
    t = bndp.TruncatedGaussian(1.0, lower=-1, upper=1)
    # mpmath, 50 digits: 0.02038273596902666002...; the value pinned here before,
    # 0.020382718700599798, was the cancelling closed form's (8.5e-7 low)
    assert fisher_information_loss(t, 50.0) == pytest.approx(0.02038273596902666, rel=1e-13)
    assert fisher_information_loss(t, -50.0) == pytest.approx(0.02038273596902666, rel=1e-13)
    assert fisher_information_loss(bndp.RectifiedGaussian(1.0, lower=-1, upper=1), 50.0) < 1e-250


# ---------------------------------------------------------------------------------------
# API: shapes, alpha grids, per-coordinate bounds, errors
# ---------------------------------------------------------------------------------------

def test_alpha_grid_and_shapes():
    m = bndp.RectifiedGaussian(1.0, lower=[-1.0, -2.0, -0.5], upper=[1.0, 2.0, 3.0])
    th = np.array([[0.1, 2.0, -1.0], [0.3, 0.0, 4.0]])
    al = np.array([1.5, 2.0, 8.0])
    tot = per_instance_rdp(m, th, 0.5, al)
    each = per_instance_rdp(m, th, 0.5, al, per_coordinate=True)
    assert tot.shape == (3,) and each.shape == (3, 2, 3)
    np.testing.assert_allclose(tot, each.sum(axis=(1, 2)), rtol=1e-14)
    for k, a in enumerate(al):
        for i in range(2):
            for j in range(3):
                mj = bndp.RectifiedGaussian(1.0, lower=m.lower[j], upper=m.upper[j])
                assert each[k, i, j] == pytest.approx(per_instance_rdp(mj, th[i, j], 0.5, a), rel=1e-14)
    assert isinstance(per_instance_rdp(m, th, 0.5, 2.0), float)
    assert fisher_information_loss(m, th).shape == (2, 3)
    # per-coordinate sensitivity
    cs = np.array([0.1, 0.5, 1.0])
    v = per_instance_rdp(m, th, cs, 2.0, per_coordinate=True)
    m1 = bndp.RectifiedGaussian(1.0, lower=-1, upper=1)
    assert v[0, 0] == pytest.approx(per_instance_rdp(m1, 0.1, 0.1, 2.0))


@pytest.mark.parametrize("alpha", [1.0, 0.5, -2.0, np.nan, np.inf, [2.0, 1.0]])
def test_bad_alpha(alpha):
    m = bndp.TruncatedGaussian(1.0, lower=-1, upper=1)
    with pytest.raises(ValueError, match="alpha"):
        per_instance_rdp(m, 0.0, 1.0, alpha)


def test_bad_inputs():
    m = bndp.TruncatedGaussian(1.0, lower=-1, upper=1)
    with pytest.raises(ValueError, match="`value`"):
        per_instance_rdp(m, [0.0, np.nan], 1.0, 2.0)
    with pytest.raises(ValueError, match="`value`"):
        fisher_information_loss(m, np.nan)
    with pytest.raises(ValueError, match="sensitivity"):
        per_instance_rdp(m, 0.0, 0.0, 2.0)
    with pytest.raises(ValueError, match="sensitivity"):
        per_instance_rdp(m, 0.0, np.nan, 2.0)
    with pytest.raises(ValueError, match="convention"):
        per_instance_rdp(m, 0.0, 1.0, 2.0, convention="both")
    with pytest.raises(TypeError, match="mechanism"):
        per_instance_rdp(bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0,
                                             upper=1.0), 0.0, 1.0, 2.0)
    with pytest.raises(ValueError, match="broadcast"):
        per_instance_rdp(bndp.TruncatedGaussian(1.0, lower=[-1, -1], upper=[1, 1]), [0.0, 0.0,
                                                0.0], 1.0, 2.0)
    with pytest.raises(ValueError, match="sigma"):
        gaussian_rdp(0.0, 1.0, 2.0)


def test_gaussian_rdp():
    assert gaussian_rdp(2.0, 1.0, 3.0) == pytest.approx(3.0 / 8.0)
    assert gaussian_rdp(1.0, 1.0, 2.0, dim=4) == 4.0
    np.testing.assert_allclose(gaussian_rdp(1.0, [1.0, 2.0], [2.0, 4.0]), [5.0, 10.0])


def test_rdp_to_dp():
    # Gaussian curve: the minimum over a dense grid approaches the continuous optimum
    # eps* = 1/(2 s^2) + sqrt(2 log(1/delta))/s at alpha* = 1 + s sqrt(2 log(1/delta))
    s, delta = 3.0, 1e-5
    al = np.linspace(1.01, 60, 20000)
    eps, a = rdp_to_dp(al / (2 * s * s), al, delta, return_alpha=True)
    L = math.log(1 / delta)
    assert eps == pytest.approx(1 / (2 * s * s) + math.sqrt(2 * L) / s, rel=1e-6)
    assert a == pytest.approx(1 + s * math.sqrt(2 * L), rel=1e-3)
    assert rdp_to_dp([1.0, 0.5], [2.0, 3.0], 0.1) == pytest.approx(min(1 + L * 0 + math.log(10),
                                                                       0.5 + math.log(10) / 2))
    with pytest.raises(ValueError, match="delta"):
        rdp_to_dp([1.0], [2.0], 0.0)
    with pytest.raises(ValueError, match="shape"):
        rdp_to_dp([1.0, 2.0], [2.0], 0.1)
    with pytest.raises(ValueError, match="alpha"):
        rdp_to_dp([1.0], [1.0], 0.1)


# ---------------------------------------------------------------------------------------
# Accountant (Algorithm 1 over T full-batch steps)
# ---------------------------------------------------------------------------------------

G_TOY = np.array([[1, -1, 0.5, 1], [1, 1, -0.5, 1], [0.2, -1, 0.5, 1], [0, 0, 0, 1],
                  [-0.2, 1, 0.5, -1.0]])


@pytest.mark.parametrize("cls,alg1,sup", [(bndp.RectifiedGaussian, 2.887864, 3.491133),
                                          (bndp.TruncatedGaussian, 0.818639, 0.990989)])
def test_algorithm1_toy(cls, alg1, sup):
    m = cls(1.0, lower=-1.0, upper=1.0)
    for convention, want in (("alg1", alg1), ("sup", sup)):
        acc = PerInstanceAccountant(m, 1.0, alphas=[2.0], convention=convention)
        r = acc.step_per_example(G_TOY)
        assert r[0] == pytest.approx(want, abs=1e-6)
        assert r[0] < gaussian_rdp(1.0, 1.0, 2.0, dim=4) == 4.0
        for _ in range(4):
            acc.step(G_TOY.sum(axis=0))
        assert acc.steps == 5
        assert acc.rdp[0] == pytest.approx(5 * want, abs=5e-6)


def test_accountant_epsilon_and_fil():
    m = bndp.TruncatedGaussian(2.0, lower=-1.0, upper=1.0)
    acc = PerInstanceAccountant(m, 0.5)
    rng = np.random.default_rng(0)
    J = rng.normal(size=(3, 4))
    J3 = rng.normal(size=(3, 4, 2))
    g = np.array([0.3, -2.0, 1.0, 0.0])
    acc.step(g, jacobians=J)
    acc.step(g, jacobians=J)
    eta2 = fisher_information_loss_squared(m, g)
    np.testing.assert_allclose(acc.fil_eta2, 2 * (J ** 2 @ eta2), rtol=1e-13)
    np.testing.assert_allclose(acc.fil_eta, np.sqrt(acc.fil_eta2))
    curve = 2 * per_instance_rdp(m, g, 0.5, acc.alphas)
    np.testing.assert_allclose(acc.rdp, curve, rtol=1e-13)
    assert acc.epsilon(1e-5) == pytest.approx(rdp_to_dp(curve, acc.alphas, 1e-5), rel=1e-13)
    acc2 = PerInstanceAccountant(m, 0.5)
    acc2.step(g, jacobians=J3)
    want = [np.linalg.norm(np.sqrt(eta2)[:, None] * Ji, 2) ** 2 for Ji in J3]
    np.testing.assert_allclose(acc2.fil_eta2, want, rtol=1e-12)
    acc3 = PerInstanceAccountant(m, 0.5)
    acc3.step(g, jacobian_norms=np.linalg.norm(J3, 2, axis=(1, 2)))
    assert np.all(acc3.fil_eta2 >= acc2.fil_eta2 * (1 - 1e-12))


def test_accountant_refuses_subsampled_rdp_and_unclipped_gradients():
    m = bndp.RectifiedGaussian(1.0, lower=-1, upper=1)
    sub = PerInstanceAccountant(m, 1.0, sampling_rate=0.01)   # FIL only
    with pytest.raises(ValueError, match="subsampling"):
        sub.epsilon(1e-5)
    with pytest.raises(ValueError, match="subsampling"):
        sub.rdp  # noqa: B018
    with pytest.raises(ValueError, match="jacobians"):
        sub.step(np.zeros(2))
    for bad in (0.0, -0.1, 1.5, float("nan"), [0.5, 0.5]):
        with pytest.raises(ValueError, match="sampling_rate"):
            PerInstanceAccountant(m, 1.0, sampling_rate=bad)
    acc = PerInstanceAccountant(m, 1.0)
    with pytest.raises(ValueError, match="clipped"):
        acc.step_per_example(np.array([[1.5, 0.0]]))
    with pytest.raises(ValueError, match="alpha"):
        PerInstanceAccountant(m, 1.0, alphas=[0.5, 2.0])


def test_minibatch_fil_scales_with_the_sampling_rate():
    # one coordinate at theta = 0, sigma = 1, S = [-1, 1]: eta_T^2 = 0.2911250948 (Eq. (3));
    # Jacobians 1 and 2, three steps: FIL_i = q * 3 * eta^2 * J_i^2, bound q * 3 * J_i^2
    m = bndp.TruncatedGaussian(1.0, lower=-1.0, upper=1.0)
    J = np.array([[1.0], [2.0]])
    prev = None
    for q in (1.0, 0.5, 0.2, 0.05, 0.01):
        acc = PerInstanceAccountant(m, 1.0, sampling_rate=q)
        for _ in range(3):
            inc = acc.step(np.array([0.0]), jacobians=J)
        fil = acc.fil_eta2
        assert np.isfinite(fil).all() and (fil > 0).all()
        np.testing.assert_allclose(fil, q * 3 * 0.2911250948 * np.array([1.0, 4.0]), rtol=1e-9)
        np.testing.assert_allclose(acc.fil_eta2_bound, q * 3 * np.array([1.0, 4.0]), rtol=1e-12)
        if q < 1:
            np.testing.assert_allclose(inc, fil / 3, rtol=1e-12)
        if prev is not None:
            assert (fil < prev).all()
        prev = fil


def test_minibatch_fil_with_poisson_batches_is_nonincreasing_in_the_rate():
    # realised Poisson batches of L-infinity-clipped per-example gradients: the composed FIL
    # (max and median over examples) falls with the sampling rate, stays below its bound
    rng = np.random.default_rng(42)
    n, d, T = 40, 5, 20
    G = rng.uniform(-1.0, 1.0, size=(n, d))
    J = rng.normal(size=(n, d))
    out = []
    for q in (1.0, 0.5, 0.25, 0.1, 0.02):
        for kind in (bndp.TruncatedGaussian, bndp.RectifiedGaussian):
            m = kind(2.0, lower=-4.0, upper=4.0)
            acc = PerInstanceAccountant(m, 1.0, sampling_rate=q)
            batches = np.random.default_rng(7)
            for _ in range(T):
                mask = batches.random(n) < q
                acc.step_per_example(G[mask] if mask.any() else np.zeros((1, d)), jacobians=J)
            fil = acc.fil_eta2
            assert np.isfinite(fil).all() and (fil > 0).all()
            assert (fil <= acc.fil_eta2_bound * (1 + 1e-12)).all()
            out.append((kind.__name__, q, fil.max(), np.median(fil)))
    for name in ("TruncatedGaussian", "RectifiedGaussian"):
        rows = [r for r in out if r[0] == name]
        for a, b in zip(rows, rows[1:]):
            assert b[2] <= a[2] and b[3] <= a[3], (a, b)


def _mp_rdp(kind, alpha, ta, tb, sigma, lo, hi):
    """D_alpha(P_ta || P_tb) by mpmath quadrature (30 digits), written from the laws."""
    mp.mp.dps = 30
    al, s = mp.mpf(alpha), mp.mpf(sigma)
    ta, tb, lo, hi = mp.mpf(ta), mp.mpf(tb), mp.mpf(lo), mp.mpf(hi)
    if kind == "sign":
        p1, q1 = mp.ncdf(ta / s), mp.ncdf(tb / s)
        tot = p1 ** al * q1 ** (1 - al) + (1 - p1) ** al * (1 - q1) ** (1 - al)
        return float(mp.log(tot) / (al - 1))

    def phi(x, t):
        return mp.npdf(x, t, s)

    if kind == "rect":
        inner = mp.quad(lambda x: phi(x, ta) ** al * phi(x, tb) ** (1 - al), [lo, 0, hi])
        pl = lambda t: mp.ncdf((lo - t) / s)  # noqa: E731
        pu = lambda t: mp.ncdf((t - hi) / s)  # noqa: E731
        tot = inner + pl(ta) ** al * pl(tb) ** (1 - al) + pu(ta) ** al * pu(tb) ** (1 - al)
        return float(mp.log(tot) / (al - 1))
    Z = lambda t: mp.ncdf((hi - t) / s) - mp.ncdf((lo - t) / s)  # noqa: E731
    za, zb = Z(ta), Z(tb)
    tot = mp.quad(lambda x: (phi(x, ta) / za) ** al * (phi(x, tb) / zb) ** (1 - al),
                  [lo, 0, hi])
    return float(mp.log(tot) / (al - 1))


def test_reverse_direction_reference_values():
    # Figure 1 "rev" curves: D(theta + 1 || theta), S = [-1, 1], alpha = 2
    r, t, sg = mechs(0.5)
    th = np.array([0.0, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(per_instance_rdp(r, th, 1.0, 2.0, "rev", per_coordinate=True),
                               [2.50397881, 0.64802627, 0.02294962, 0.00003167], atol=1e-7)
    np.testing.assert_allclose(per_instance_rdp(t, th, 1.0, 2.0, "rev", per_coordinate=True),
                               [1.55666876, 0.51305674, 0.20024965, 0.09999925], atol=1e-7)
    r1, t1, s1 = mechs(1.0)
    th = np.array([0.0, 0.5])
    for m, want in ((r1, [0.69644479, 0.54880319]), (t1, [0.24814862, 0.21249842]),
                    (s1, [0.38258190, 0.24207993])):
        np.testing.assert_allclose(per_instance_rdp(m, th, 1.0, 2.0, "rev", per_coordinate=True),
                                   want, atol=1e-7)
    assert per_instance_rdp(r1, th, 1.0, 2.0, "rev") == pytest.approx(0.69644479 + 0.54880319,
                                                                       abs=2e-7)


@pytest.mark.parametrize("sigma,lo,hi", [(0.5, -1.0, 1.0), (1.0, -0.5, 2.0)])
def test_reverse_and_negative_shift_against_mpmath_quadrature(sigma, lo, hi):
    c = 1.0
    classes = {"rect": bndp.RectifiedGaussian, "trunc": bndp.TruncatedGaussian,
               "sign": bndp.StochasticSign}
    for kind, cls in classes.items():
        m = cls(sigma) if kind == "sign" else cls(sigma, lower=lo, upper=hi)
        b_lo, b_hi = (0.0, 0.0) if kind == "sign" else (lo, hi)
        for theta in (-2.5, -0.3, 0.4, 1.7):
            for alpha in (2.0, 5.0):
                got = {
                    ("rev", False): (theta + c, theta),
                    ("alg1", True): (theta, theta - c),
                    ("rev", True): (theta - c, theta),
                }
                for (mode, neg), (ta, tb) in got.items():
                    v = per_instance_rdp(m, theta, c, alpha, mode, negative_shift=neg)
                    ref = _mp_rdp(kind, alpha, ta, tb, sigma, b_lo, b_hi)
                    assert v == pytest.approx(ref, rel=1e-9, abs=1e-13), (kind, theta, alpha,
                                                                          mode, neg)
                text_neg = per_instance_rdp(m, theta, c, alpha, "text", negative_shift=True)
                assert text_neg == pytest.approx(max(
                    _mp_rdp(kind, alpha, theta, theta - c, sigma, b_lo, b_hi),
                    _mp_rdp(kind, alpha, theta - c, theta, sigma, b_lo, b_hi)), rel=1e-9)


def test_sup_is_the_max_of_the_four_named_divergences_and_option_errors():
    r = bndp.RectifiedGaussian(0.7, lower=-1.0, upper=1.5)
    th = np.linspace(-4, 4, 33)
    one = lambda mode, neg: per_instance_rdp(r, th, 0.6, 3.0, mode,  # noqa: E731
                                             per_coordinate=True, negative_shift=neg)
    four = np.max([one("alg1", False), one("rev", False), one("alg1", True), one("rev", True)],
                  axis=0)
    np.testing.assert_allclose(one("sup", False), four, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="negative_shift"):
        per_instance_rdp(r, th, 0.6, 3.0, "sup", negative_shift=True)
    with pytest.raises(TypeError, match="negative_shift"):
        per_instance_rdp(r, th, 0.6, 3.0, "rev", negative_shift="yes")
    with pytest.raises(ValueError, match="convention"):
        per_instance_rdp(r, th, 0.6, 3.0, "reverse")


# ---------------------------------------------------------------------------------------
# Figure 1 of the paper
# ---------------------------------------------------------------------------------------

def test_figure1_script_writes_png(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    out = tmp_path / "figure1.png"
    monkeypatch.setattr(sys, "argv", ["figure1_bounded_support.py", str(out)])
    runpy.run_path(str(ROOT / "examples" / "figure1_bounded_support.py"), run_name="__main__")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


@pytest.mark.slow
def test_random_configurations_against_mpmath():
    # every branch of the kernels (linear fast paths, log space, tail representations) on
    # random (alpha, sigma, support, theta, C); absolute error ~1e-13 at worst (narrow
    # supports w << sigma with tiny C, where D itself is ~1e-10), else relative 1e-8
    rng = np.random.default_rng(2024)
    for _ in range(400 if FULL else 60):
        al = float(np.exp(rng.uniform(np.log(1.01), np.log(60))))
        s = float(np.exp(rng.uniform(np.log(0.1), np.log(5))))
        lo = float(rng.uniform(-5, 2))
        hi = lo + float(np.exp(rng.uniform(np.log(0.01), np.log(10))))
        th = float(rng.uniform(-25, 25))
        c = float(np.exp(rng.uniform(np.log(1e-4), np.log(5))))
        for cls, ref in ((bndp.RectifiedGaussian, mp_rect), (bndp.TruncatedGaussian, mp_trunc)):
            got = per_instance_rdp(cls(s, lower=lo, upper=hi), th, c, al, "alg1")
            want = ref(al, th, c, s, lo, hi)
            assert abs(got - want) <= max(1e-8 * want, 1e-12), (cls, al, s, lo, hi, th, c)


@pytest.mark.parametrize("c", [5e-3, 1e-3, 2e-5])
def test_sup_mode_small_shift_against_mpmath(c):
    # the paper's DP-SGD regime (C/sigma = 1/multiplier): 'sup' = max of the four
    # divergences, each evaluated with 60 digits
    for lo, hi in ((-4.0, 4.0), (-0.8, 0.8), (-2.0, 16.0)):
        for th in (0.0, 0.7, 3.9, -4.6, 6.0, 16.3):
            for cls, ref in ((bndp.RectifiedGaussian, mp_rect), (bndp.TruncatedGaussian, mp_trunc)):
                got = per_instance_rdp(cls(1.0, lower=lo, upper=hi), th, c, 2.0, "sup")
                want = max(ref(2.0, th, c, 1.0, lo, hi), ref(2.0, th + c, -c, 1.0, lo, hi),
                           ref(2.0, th, -c, 1.0, lo, hi), ref(2.0, th - c, c, 1.0, lo, hi))
                assert abs(got - want) <= 2e-15 + 1e-9 * want, (cls, lo, hi, th, got, want)


# the RDP convention is ``convention``; ``mode=`` is refused with a message naming it
def test_convention_and_the_removed_keyword_mode():
    m = bndp.TruncatedGaussian(1.0, lower=-1.0, upper=1.0)
    new = per_instance_rdp(m, 0.5, 1.0, 2.0, convention="alg1")
    assert per_instance_rdp(m, 0.5, 1.0, 2.0, "alg1") == new
    assert per_instance_rdp(m, 0.9, 1.0, 2.0, "alg1") != per_instance_rdp(m, 0.9, 1.0, 2.0, "sup")
    msg = r"takes no `mode` \(removed in bndp 0\.7\.0\): pass convention="
    with pytest.raises(TypeError, match=r"^per_instance_rdp\(\) " + msg):
        per_instance_rdp(m, 0.5, 1.0, 2.0, mode="alg1")
    with pytest.raises(TypeError, match=r"^per_instance_rdp\(\) " + msg):
        per_instance_rdp(m, 0.5, 1.0, 2.0, "alg1", mode="alg1")
    assert "mode" not in inspect.signature(per_instance_rdp).parameters

    acc = PerInstanceAccountant(m, 1.0, alphas=[2.0], convention="alg1")
    assert acc.convention == "alg1" and "convention='alg1'" in repr(acc)
    assert "mode" not in repr(acc) and not hasattr(acc, "mode")
    with pytest.raises(TypeError, match=r"^PerInstanceAccountant\(\) " + msg):
        PerInstanceAccountant(m, 1.0, alphas=[2.0], mode="alg1")
    assert "mode" not in inspect.signature(PerInstanceAccountant).parameters
