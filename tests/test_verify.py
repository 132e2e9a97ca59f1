"""Certified worst-case privacy loss (bndp.verify) and tight calibration of the bounded
Gaussian mechanism. Reference numbers are carried inline; the brute-force oracles below use
SciPy's truncated normal density, independently of bndp's kernels."""

import math
import os

import numpy as np
import pytest
from scipy import stats

import bndp
from bndp.verify import (
    LossCertificate,
    bounded_gaussian_loss,
    bounded_gaussian_tight_sigma,
    bounded_laplace_profile,
    bounded_laplace_loss,
)

FULL = os.environ.get("BNDP_FULL", "") == "1"
TABLE_L = [0.0, 1.0]
TABLE_U = [10.0, 9.0]
TABLE_DQ = 2.0 * math.sqrt(5.0)


def _tn_logpdf(x, q, s, lo, hi):
    return stats.truncnorm.logpdf(x, (lo - q) / s, (hi - q) / s, loc=q, scale=s)


def _brute_uni(s, dq, w, nq=161, nc=33):
    """max over a (q, c) grid, x in {l, u} and 21 interior x, of ln p_q(x)/p_q'(x)."""
    best = -np.inf
    xs = np.concatenate([[0.0, w], np.linspace(0.0, w, 21)])
    for c in np.linspace(0.0, min(dq, w), nc):
        q = np.linspace(0.0, w - c, nq)
        for x in xs:
            for qa, qb in ((q, q + c), (q + c, q)):
                v = _tn_logpdf(x, qa, s, 0.0, w) - _tn_logpdf(x, qb, s, 0.0, w)
                best = max(best, float(np.max(v)))
    return best


# ---------------------------------------------------------------------------------------
# Bounded Gaussian: reference values
# ---------------------------------------------------------------------------------------

# (w, dQ, eps, worst loss / eps at the paper's sigma*, 3 digits from an independent
# brute-force search over (q, q', x))
UNI_CASES = [
    (10.0, 1.0, 0.5, 0.445),
    (10.0, 1.0, 5.0, 0.752),
    (1.0, 0.8, 1.0, 0.328),
    (1.0, 3.0, 1.0, 0.066),
    (10.0, 0.01, 2.0, 0.964),
]


@pytest.mark.parametrize("w, dq, eps, ratio", UNI_CASES)
def test_univariate_loss_matches_brute_force(w, dq, eps, ratio):
    m = bndp.BoundedGaussian(eps, sensitivity=dq, lower=0.0, upper=w, mode="continuous")
    cert = bounded_gaussian_loss(m.sigma, dq, 0.0, w, details=True)
    assert isinstance(cert, LossCertificate)
    assert round(cert.upper / eps, 3) == ratio
    assert cert.lower <= cert.upper <= cert.lower * (1 + 1e-14) + 1e-300
    brute = _brute_uni(m.sigma, dq, w)
    # the grid holds the maximiser (q' = u, q = u - dQ, x = l): equal up to rounding, and
    # nothing on the grid exceeds the certified value
    assert brute <= cert.upper + 1e-12
    assert brute >= cert.upper - 1e-10
    # the attained configuration, through the mechanism's own density
    c = min(dq, w)
    direct = m.logpdf(0.0, w - c) - m.logpdf(0.0, w)
    assert direct == pytest.approx(cert.upper, rel=1e-11)


def test_univariate_closed_form_value():
    # h(c) = c(2w - c)/(2 s^2) - rho(c), rho(1; w=10, s=1) = ln[(Phi(9) - Phi(-1))/(Phi(10) - 1/2)]
    rho = math.log((stats.norm.cdf(9.0) - stats.norm.cdf(-1.0)) / (stats.norm.cdf(10.0) - 0.5))
    assert bounded_gaussian_loss(1.0, 1.0, 0.0, 10.0) == pytest.approx(9.5 - rho, rel=1e-14)
    # dQ >= w: c = w, q = l, q' = u, loss w^2/(2 s^2) exactly (rho(w) = 0)
    assert bounded_gaussian_loss(2.0, 5.0, 1.0, 4.0) == pytest.approx(9.0 / 8.0, rel=1e-14)


# Table 1 of [CH24] (l = (0, 1), u = (10, 9), dQ = 2 sqrt 5): worst loss / eps at sigma*
@pytest.mark.parametrize("eps, ratio", [(0.1, 0.336), (1.0, 0.357), (3.0, 0.404)])
def test_table1_loss(eps, ratio):
    m = bndp.BoundedGaussian(eps, sensitivity=TABLE_DQ, lower=TABLE_L, upper=TABLE_U,
                             mode="continuous")
    cert = bounded_gaussian_loss(m.sigma, TABLE_DQ, TABLE_L, TABLE_U, details=True)
    assert round(cert.upper / eps, 3) == ratio
    assert cert.upper - cert.lower <= 1e-12 * cert.upper
    assert np.linalg.norm(cert.shift) <= TABLE_DQ * (1 + 1e-15)


def test_table1_loss_against_polar_brute_force():
    # independent search: shift c on a polar grid of the ball, q per coordinate on a grid,
    # x at the lower corner, densities from scipy
    eps = 1.0
    m = bndp.BoundedGaussian(eps, sensitivity=TABLE_DQ, lower=TABLE_L, upper=TABLE_U,
                             mode="continuous")
    s = m.sigma
    w = np.array([10.0, 8.0])
    up = bounded_gaussian_loss(s, TABLE_DQ, TABLE_L, TABLE_U)

    def coord(c, wi):
        t = np.linspace(0.0, wi - c, 201)
        return np.max(_tn_logpdf(0.0, t, s, 0.0, wi) - _tn_logpdf(0.0, t + c, s, 0.0, wi))

    best = -np.inf
    for r in (0.5, 0.9, 1.0):
        for th in np.linspace(0.0, np.pi / 2, 181):
            c = r * TABLE_DQ * np.array([np.cos(th), np.sin(th)])
            best = max(best, coord(c[0], w[0]) + coord(c[1], w[1]))
    assert best <= up + 1e-12
    assert best >= up - 1e-5        # polar grid step 0.5 degree


def test_multivariate_reduces_to_univariate():
    for (w, dq, s) in [(10.0, 1.0, 3.0), (1.0, 0.3, 0.05), (2.0, 5.0, 1.0)]:
        one = bounded_gaussian_loss(s, dq, 0.0, w)
        two = bounded_gaussian_loss(s, dq, [0.0, 0.0], [w, 1e-9 + 0.0])
        assert two >= one * (1 - 1e-12)
        assert two <= one + 1e-6


def test_box_inside_ball():
    # ||w|| <= dQ: the worst shift is c = w, loss sum w_i^2/(2 s^2)
    cert = bounded_gaussian_loss(2.0, 20.0, TABLE_L, TABLE_U, details=True)
    assert cert.upper == pytest.approx((100.0 + 64.0) / 8.0, rel=1e-14)
    np.testing.assert_allclose(cert.shift, [10.0, 8.0])


# ---------------------------------------------------------------------------------------
# Calibrated mechanisms pass, under-noised ones fail
# ---------------------------------------------------------------------------------------

def _configs(rng, n, m):
    for _ in range(n):
        eps = float(10 ** rng.uniform(-2, 1))
        w = 10 ** rng.uniform(-1, 2, size=m)
        dq = float(10 ** rng.uniform(-2, 0.3) * np.linalg.norm(w))
        lo = rng.uniform(-5, 5, size=m)
        yield eps, dq, lo, lo + w


@pytest.mark.parametrize("m", [1, 2, 3])
def test_calibrated_mechanisms_verify_below_epsilon(m):
    rng = np.random.default_rng(20240 + m)
    n = 300 if FULL else (60 if m == 1 else 20)
    for eps, dq, lo, hi in _configs(rng, n, m):
        lo_, hi_ = (float(lo[0]), float(hi[0])) if m == 1 else (lo, hi)
        paper = bndp.BoundedGaussian(eps, sensitivity=dq, lower=lo_, upper=hi_, mode="continuous")
        tight = bndp.BoundedGaussian(eps, sensitivity=dq, lower=lo_, upper=hi_,
                                     sigma_rule="tight", mode="continuous")
        lp, lt = bndp.verify(paper), bndp.verify(tight)
        assert lp <= eps, (eps, dq, lo, hi)
        assert eps * (1 - 1e-6) <= lt <= eps, (eps, dq, lo, hi, lt)
        assert tight.sigma < paper.sigma
        # under-noised: 1 % less noise than the tight scale violates eps
        assert bounded_gaussian_loss(0.99 * tight.sigma, dq, lo_, hi_) > eps


def test_under_noised_gaussian_exceeds_epsilon():
    # sigma_0 of (2.4) ignores the normaliser; a quarter of it violates eps badly
    eps, dq, w = 1.0, 1.0, 10.0
    s0 = math.sqrt((w + dq / 2) * dq / eps)
    assert bounded_gaussian_loss(0.25 * s0, dq, 0.0, w) > 3 * eps


def test_density_ratio_at_worst_configuration_tight():
    # privacy claim through the mechanism's own density: worst pair and random pairs
    eps, dq = 1.0, 1.0
    m = bndp.BoundedGaussian(eps, sensitivity=dq, lower=0.0, upper=10.0, sigma_rule="tight",
                             mode="continuous")
    worst = m.logpdf(0.0, 9.0) - m.logpdf(0.0, 10.0)
    assert worst <= eps
    assert worst >= eps * (1 - 1e-6)
    rng = np.random.default_rng(7)
    q = rng.uniform(0, 10, 20000)
    qp = np.clip(q + rng.uniform(-dq, dq, q.size), 0, 10)
    x = rng.uniform(0, 10, q.size)
    assert np.max(m.logpdf(x, q) - m.logpdf(x, qp)) <= eps


def test_density_ratio_multivariate_tight():
    eps = 1.0
    m = bndp.BoundedGaussian(eps, sensitivity=TABLE_DQ, lower=TABLE_L, upper=TABLE_U,
                             sigma_rule="tight", mode="continuous")
    c = bounded_gaussian_loss(m.sigma, TABLE_DQ, TABLE_L, TABLE_U, details=True).shift
    u = np.array(TABLE_U)
    lo = np.array(TABLE_L)
    worst = m.logpdf(lo, u - c) - m.logpdf(lo, u)
    assert eps * (1 - 1e-6) <= worst <= eps


# ---------------------------------------------------------------------------------------
# Tight calibration
# ---------------------------------------------------------------------------------------

# Table 1 rows: paper sigma*^2 (full precision) and the tight sigma^2 must be smaller by the
# reduction measured for the documentation (>= 50 % on every row)
@pytest.mark.parametrize("eps, paper_var", [
    (0.1, 857.5181703962104), (0.5, 170.274488590015), (1.0, 84.38443335875604),
    (1.5, 55.76795412628909), (2.0, 41.47137359306165), (2.5, 32.90375285230956),
    (3.0, 27.201259999373384)])
def test_tight_table1(eps, paper_var):
    paper = bndp.BoundedGaussian(eps, sensitivity=TABLE_DQ, lower=TABLE_L, upper=TABLE_U,
                                 mode="continuous")
    assert paper.sigma ** 2 == pytest.approx(paper_var, rel=1e-9)
    s = bounded_gaussian_tight_sigma(eps, TABLE_DQ, TABLE_L, TABLE_U)
    loss = bounded_gaussian_loss(s, TABLE_DQ, TABLE_L, TABLE_U)
    assert eps * (1 - 1e-6) <= loss <= eps
    assert 1 - s * s / paper_var >= 0.5


def test_tight_is_minimal():
    eps, dq, w = 0.5, 1.0, 10.0
    s = bounded_gaussian_tight_sigma(eps, dq, 0.0, w)
    assert bounded_gaussian_loss(s * (1 - 1e-9), dq, 0.0, w) > eps
    assert bounded_gaussian_loss(s, dq, 0.0, w) <= eps


def test_tight_small_epsilon():
    for eps in (1e-3, 1e-6):
        s = bounded_gaussian_tight_sigma(eps, 0.5, 0.0, 1.0)
        loss = bounded_gaussian_loss(s, 0.5, 0.0, 1.0)
        assert eps * (1 - 1e-6) <= loss <= eps
        assert s < bndp.calibrate.bounded_gaussian_sigma(eps, 0.5, 0.0, 1.0)


def test_sigma_rule_keyword():
    m = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0, sigma_rule="tight",
                             mode="continuous")
    assert m.sigma_rule == "tight"
    assert "sigma_rule='tight'" in repr(m)
    assert eval("bndp." + repr(m)) == m
    assert bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0,
                                mode="continuous").sigma_rule == "paper"
    with pytest.raises(ValueError, match="sigma_rule"):
        bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0, sigma_rule="exact",
                             mode="continuous")


# ---------------------------------------------------------------------------------------
# Bounded Laplace: the paper's bound is the exact loss
# ---------------------------------------------------------------------------------------

# (b, dQ, W, exact eps(b) from 50-digit arithmetic)
LAPLACE_REF = [
    (1.0, 1.0, 10.0, 1.4898499105794799),
    (2.0, 1.0, 10.0, 0.83055318158160549),
    (0.5, 0.5, 1.0, 1.3798854930417225),
    (10.0, 0.1, 1.0, 0.01895907252359518),
]


@pytest.mark.parametrize("b, dq, w, ref", LAPLACE_REF)
def test_laplace_loss_reference(b, dq, w, ref):
    v = bounded_laplace_loss(b, dq, 0.0, w)
    assert v == pytest.approx(ref, rel=1e-14)
    assert v >= ref * (1 - 1e-16)
    assert v == pytest.approx(bndp.calibrate.bounded_laplace_epsilon(b, dq, 0.0, w), rel=1e-14)


def _laplace_brute(b, dq, w):
    def logpdf(x, q):
        C = 1 - 0.5 * (np.exp(-q / b) + np.exp(-(w - q) / b))
        return -np.abs(x - q) / b - np.log(2 * b * C)
    best = -np.inf
    xs = np.linspace(0.0, w, 41)
    for c in np.linspace(0.0, min(dq, w), 21):
        q = np.linspace(0.0, w - c, 201)
        for x in xs:
            best = max(best, float(np.max(logpdf(x, q) - logpdf(x, q + c))),
                       float(np.max(logpdf(x, q + c) - logpdf(x, q))))
    return best


@pytest.mark.parametrize("eps, dq, w", [(1.0, 1.0, 10.0), (0.5, 0.5, 1.0), (2.0, 0.3, 4.0)])
def test_laplace_bound_equals_verifier(eps, dq, w):
    m = bndp.BoundedLaplace(eps, sensitivity=dq, lower=0.0, upper=w, mode="continuous")
    v = bndp.verify(m)
    assert v == pytest.approx(eps, rel=1e-13)          # Theorem 3.5 is tight for delta = 0
    assert v == pytest.approx(bounded_laplace_loss(m.scale, dq, 0.0, w), rel=1e-14)
    brute = _laplace_brute(m.scale, dq, w)
    assert brute <= bounded_laplace_loss(m.scale, dq, 0.0, w) + 1e-12
    assert brute >= v - 1e-9
    # a slightly smaller scale is not eps-DP: b* is the smallest eps-DP scale
    assert bounded_laplace_loss(m.scale * (1 - 1e-9), dq, 0.0, w) > eps


def test_laplace_unadjusted_scale_violates():
    # b = dQ/eps with the bounded mechanism: true eps 1.489850 and 1.379885
    assert bounded_laplace_loss(1.0, 1.0, 0.0, 10.0) == pytest.approx(1.489850, abs=1e-6)
    assert bounded_laplace_loss(0.5, 0.5, 0.0, 1.0) == pytest.approx(1.379885, abs=1e-6)
    # dQ = W: the unadjusted scale is exact
    assert bounded_laplace_loss(1.0, 1.0, 0.0, 1.0) == pytest.approx(1.0, rel=1e-14)


# ---------------------------------------------------------------------------------------
# verify() contract and validation
# ---------------------------------------------------------------------------------------

def test_verify_dispatches_to_any_privacy_loss():
    class Dummy:
        def privacy_loss(self):
            return 0.25
    assert bndp.verify(Dummy()) == 0.25
    with pytest.raises(TypeError, match="privacy_loss"):
        bndp.verify(object())


@pytest.mark.parametrize("args, exc", [
    ((float("nan"), 1.0, 0.0, 1.0), ValueError),
    ((1.0, 0.0, 0.0, 1.0), ValueError),
    ((1.0, 1.0, 1.0, 0.0), ValueError),
    ((1.0, 1.0, [0.0, 0.0], [1.0, 1.0, 1.0]), ValueError),
    (("1", 1.0, 0.0, 1.0), TypeError),
])
def test_validation(args, exc):
    with pytest.raises(exc):
        bounded_gaussian_loss(*args)


def test_validation_laplace_and_tight():
    with pytest.raises(ValueError, match="scale"):
        bounded_laplace_loss(-1.0, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="scalars"):
        bounded_laplace_loss(1.0, 1.0, [0.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="epsilon"):
        bounded_gaussian_tight_sigma(float("inf"), 1.0, 0.0, 1.0)


# ---------------------------------------------------------------------------------------
# Bounded Laplace privacy profile delta(eps)
# ---------------------------------------------------------------------------------------

def _hockey_stick_brute(b, dq, w, eps, nq=801, nx=4001):
    # numerical integral of (p_q - e^eps p_q')_+ over a (q, x) grid, both orders
    x = np.linspace(0.0, w, nx)

    def pdf(q):
        C = 1 - 0.5 * (np.exp(-q / b) + np.exp(-(w - q) / b))
        return np.exp(-np.abs(x - q) / b) / (2 * b * C)

    best = 0.0
    for q in np.linspace(0.0, w - min(dq, w), nq):
        pa, pb = pdf(q), pdf(q + min(dq, w))
        for f, g in ((pa, pb), (pb, pa)):
            best = max(best, float(np.trapezoid(np.maximum(f - math.exp(eps) * g, 0.0), x)))
    return best


@pytest.mark.parametrize("b, dq, w, eps, ref", [
    # exact profile (interior worst q) against the paper's certificate 0.430 / 0.1
    (1.5, 1.0, 10.0, 0.5, 0.10492338),
    (2.8593, 1.0, 10.0, 0.5, 0.00646224),
    (1.0, 1.0, 10.0, 1.0, 0.07292965),
    (0.5, 0.5, 1.0, 0.3, 0.24617667),
])
def test_laplace_profile(b, dq, w, eps, ref):
    up, low, q = bounded_laplace_profile(b, eps, dq, 0.0, w, details=True)
    assert 0.0 <= q <= w - dq
    assert low <= up <= low * (1 + 1e-6)
    assert low == pytest.approx(ref, abs=1e-8)
    brute = _hockey_stick_brute(b, dq, w, eps, nq=201)
    assert brute <= up * (1 + 1e-5)
    assert brute >= up * (1 - 1e-3)
    # the paper's certificate is valid but loose
    assert bndp.calibrate.bounded_laplace_delta_bound(b, eps, dq, 0.0, w) > up


def test_profile_dispatch():
    from bndp.verify import privacy_profile
    m = bndp.BoundedLaplace(0.5, sensitivity=1.0, lower=0.0, upper=10.0, delta=0.1,
                            mode="continuous")
    d = privacy_profile(m, 0.5)
    assert 0.0 < d < 0.1 * 0.1          # the certified 0.1 overstates it 15-fold
    assert privacy_profile(m, bndp.verify(m)) <= 1e-13      # rounding level
    assert privacy_profile(m, bndp.verify(m) * (1 + 1e-12)) == 0.0
    g = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="continuous")
    assert privacy_profile(g, 1.0) == 0.0
    with pytest.raises(NotImplementedError):
        privacy_profile(g, 0.1)


@pytest.mark.parametrize("dq, lo, hi", [
    (1.0, 0.0, 10.0), (0.05, 0.0, 1.0), (3.0, 0.0, 1.0), (TABLE_DQ, TABLE_L, TABLE_U),
    (0.5, [0.0, 0.0, 0.0], [1.0, 2.0, 4.0])])
def test_loss_decreases_in_sigma(dq, lo, hi):
    # the tight search relies on this for minimality (not for privacy)
    s = np.geomspace(1e-2, 1e3, 300)
    v = np.array([bounded_gaussian_loss(x, dq, lo, hi) for x in s])
    assert np.all(np.diff(v) < 0)


def _polar_brute(s, dq, w, n=4001):
    # sum_i h_i(c_i) on the sphere (h_i from the univariate closed form, independently
    # checked above against scipy) -- a lower bound on the multivariate maximum
    th = np.linspace(0.0, np.pi / 2, n)
    best = -np.inf
    for t in th:
        c = np.minimum(dq * np.array([np.cos(t), np.sin(t)]), w)
        best = max(best, sum(bounded_gaussian_loss(s, max(ci, 1e-300), 0.0, wi)
                             if ci > 0 else 0.0 for ci, wi in zip(c, w)))
    return best


@pytest.mark.parametrize("s", [0.01, 0.05, 0.07, 0.3, 3.0, 300.0])
def test_multivariate_bound_is_valid_at_every_scale(s):
    # regression: for sigma << w the per-coordinate derivative kernel overflowed beyond
    # c = w/2 and the dual bound fell below attained values
    w = np.array([10.0, 8.0])
    cert = bounded_gaussian_loss(s, TABLE_DQ, TABLE_L, TABLE_U, details=True)
    brute = _polar_brute(s, TABLE_DQ, w, n=721)
    assert brute <= cert.upper * (1 + 1e-12)
    assert cert.upper - cert.lower <= 1e-11 * cert.upper
    assert brute >= cert.upper * (1 - 1e-5)


def test_calibrated_laplace_random_configs_exact():
    # Theorem 3.5 is tight for delta = 0: the verified loss equals eps (never above it)
    rng = np.random.default_rng(515)
    for _ in range(400 if FULL else 100):
        eps = float(10 ** rng.uniform(-3, 1))
        w = float(10 ** rng.uniform(-1, 2))
        dq = float(w * 10 ** rng.uniform(-3, 0))
        m = bndp.BoundedLaplace(eps, sensitivity=dq, lower=0.0, upper=w, mode="continuous")
        v = bndp.verify(m)
        assert eps * (1 - 1e-12) <= v <= eps, (eps, dq, w)
        # the rounding-margin evaluator agrees and a 1e-9 smaller scale is not eps-DP
        assert bounded_laplace_loss(m.scale, dq, 0.0, w) == pytest.approx(v, rel=1e-14)
        assert bounded_laplace_loss(m.scale * (1 - 1e-9), dq, 0.0, w) > eps
