"""Extreme but valid numeric inputs: a correct finite value or a ValueError naming the
argument, never OverflowError / ZeroDivisionError / IndexError or a silent NaN."""

import math

import mpmath as mp
import numpy as np
import pytest

import bndp
import bndp.accounting as acc
import bndp.calibrate as cal
import bndp.verify as ver


def _mcdp_exact(eps, delta):
    """The mCDP sigma (sensitivity 1) in closed form: eps u - 1/(2u) = sqrt(2 L),
    L = ln(1/delta) + ln(1 + e^-eps)."""
    with mp.workdps(50):
        e = mp.mpf(eps)
        a = mp.sqrt(2 * (-mp.log(mp.mpf(delta)) + mp.log1p(mp.exp(-e))))
        return (a + mp.sqrt(a * a + 2 * e)) / (2 * e)


# 1, 2, 3: mcdp_sigma at extreme epsilon / delta
@pytest.mark.parametrize("eps, delta", [(1e-300, 1e-5), (1.0, 1e-300), (1e-300, 1e-300),
                                        (1e-12, 1e-5), (1e6, 1e-5), (1e3, 1e-5),
                                        (1e300, 1e-5), (1.0, 1e-5)])
def test_mcdp_sigma_extreme_epsilon_delta(eps, delta):
    s = cal.mcdp_sigma(eps, 1.0, delta=delta)
    assert math.isfinite(s) and s > 0
    assert s == pytest.approx(float(_mcdp_exact(eps, delta)), rel=1e-12)


def test_mcdp_sigma_refuses_sigma_beyond_float_range():
    with pytest.raises(ValueError, match="`epsilon`.*too small"):
        cal.mcdp_sigma(5e-324, 1.0, delta=1e-5)
    with pytest.raises(ValueError, match="`epsilon`.*too small"):
        cal.mcdp_sigma(1e-300, 1e10, delta=1e-5)


# 4: composition sigma when sensitivity/sigma underflows when squared
def test_gaussian_composition_sigma_tiny_ratios():
    s = acc.gaussian_composition_sigma([1.0, 2.0], [1e-300, 1e-300])
    assert s == pytest.approx(1e300 / math.sqrt(1.25), rel=1e-14)
    with pytest.raises(ValueError, match="`sigmas`.*range"):
        acc.gaussian_composition_sigma([1e308], [1e-308])


# 5: bounded Gaussian loss with a shift or width far below sigma
@pytest.mark.parametrize("args, bound", [
    ((3.0, 5e-324, 0.0, 10.0), 5e-324 * 10.0 / 9.0),     # <= dq w / sigma^2
    ((3.0, 1.0, 0.0, 5e-324), 5e-324 ** 2 / 9.0),         # <= w^2 / sigma^2
    ((1.0, 1e-300, 0.0, 1e300), 1.0),                     # = dq (w - 0.8 sigma)/sigma^2
])
def test_bounded_gaussian_loss_tiny_shift(args, bound):
    cert = ver.bounded_gaussian_loss(*args, details=True)
    assert 0.0 <= cert.lower <= cert.upper
    assert cert.upper >= bound * (1 - 1e-12)
    assert cert.upper <= 1e-12 * bound + bound + 1e-323


# 6: privacy profile far above the certified loss
@pytest.mark.parametrize("eps", [10.0, 100.0, 1e3, 1e308])
def test_privacy_profile_large_epsilon(eps):
    m = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    assert ver.privacy_profile(m, eps) == 0.0


# 7: gaussian_rdp with a dim beyond the float range
def test_gaussian_rdp_huge_dim():
    assert acc.gaussian_rdp(1.0, 1.0, 2.0, dim=2 ** 1100) == math.inf   # documented
    exact = float(mp.mpf(2) ** 1100 * mp.mpf(1e-300) ** 2)              # alpha/2 = 1
    assert acc.gaussian_rdp(1e300, 1.0, 2.0, dim=2 ** 1100) == pytest.approx(exact, rel=1e-12)
    assert acc.gaussian_rdp(1e300, 1.0, 2.0, dim=10 ** 300) == pytest.approx(1e-300, rel=1e-12)


# 9: per-instance RDP and FIL of the stochastic sign / rectified Gaussian at extreme inputs
def test_stochastic_sign_rdp_extremes():
    ss = bndp.StochasticSign(1.0)
    # beyond the float range (about 5e615): inf, never NaN
    assert acc.per_instance_rdp(ss, 0.3, 1e308, 2.0) == math.inf
    assert (acc.PerInstanceAccountant(ss, 1e308).step([0.3]) == math.inf).all()
    # alpha -> inf: D_inf, the largest log ratio over the four divergences of "sup"
    with mp.workdps(30):
        def dinf(t, c):
            p, q = mp.ncdf(t), mp.ncdf(t + c)
            return max(mp.log(p / q), mp.log((1 - p) / (1 - q)))
        want = float(max(dinf(0.3, 1), dinf(-1.3, 1), dinf(-0.3, 1), dinf(-0.7, 1)))
    assert acc.per_instance_rdp(ss, 0.3, 1.0, 1e308) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("mech", [bndp.RectifiedGaussian(1.0, lower=-1.0, upper=1.0),
                                  bndp.StochasticSign(1.0)])
@pytest.mark.parametrize("value", [1e308, -1e308, 1e200])
def test_fisher_information_loss_far_value(mech, value):
    assert acc.fisher_information_loss(mech, value) == 0.0      # limit, below 1e-300


# 10: estimate with a huge resolution, and the validation of tol / max_iter
def _released():
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    return m, m.sample(np.linspace(0, 10, 50), rng=0)


def test_estimate_huge_resolution():
    m, rel = _released()
    est = bndp.estimate(rel, m, resolution=1e308, n_boot=0)
    assert np.isfinite(est.mean) and 0.0 <= est.mean <= 10.0


@pytest.mark.parametrize("kw, match", [(dict(tol=float("nan")), "`tol`"),
                                       (dict(tol=-1), "`tol`"),
                                       (dict(tol=math.inf), "`tol`"),
                                       (dict(max_iter=-1), "`max_iter`"),
                                       (dict(max_iter=0), "`max_iter`"),
                                       (dict(max_iter=1.5), "`max_iter`")])
def test_estimate_validates_tol_max_iter(kw, match):
    m, rel = _released()
    with pytest.raises(ValueError, match=match):
        bndp.estimate(rel, m, n_boot=0, **kw)


# 11: rectified Gaussian moments far outside the box
@pytest.mark.parametrize("value", [1e16, 1e20, 1e155, 1e308])
def test_rectified_moments_far_value(value):
    rg = bndp.RectifiedGaussian(1.0, lower=-1.0, upper=1.0)
    assert rg.mean(value) == 1.0 and rg.mean(-value) == -1.0
    assert rg.variance(value) == 0.0 and rg.variance(-value) == 0.0


@pytest.mark.parametrize("mech,c,alpha", [
    ("trunc", 1e16, 2.0), ("trunc", 1.0, 1e13), ("trunc", 1e50, 2.0),
    ("rect", 1e155, 2.0), ("rect", 1.0, 1e151),
])
def test_per_instance_rdp_refuses_orders_and_shifts_it_cannot_compute(mech, c, alpha):
    # the truncated form cancels (3e-4 off at alpha 1e13, then 0: a cost of nothing), the
    # rectified one's exponent overflows (0 from C = 1e155 sigma): refused, not understated
    m = (bndp.TruncatedGaussian if mech == "trunc" else bndp.RectifiedGaussian)(
        1.0, lower=-1.0, upper=1.0)
    with pytest.raises(ValueError, match="beyond the range"):
        bndp.accounting.per_instance_rdp(m, 0.3, c, alpha)
    with pytest.raises(ValueError, match="beyond the range"):
        bndp.accounting.PerInstanceAccountant(m, c, alphas=[2.0, alpha]).step([0.3])


def test_per_instance_rdp_keeps_its_precision_up_to_the_refusal():
    # the truncated mechanism's divergence tends to D_inf as alpha grows (by about 1e-8
    # from alpha 1e9 on): at 8e9, inside the range, its rounding error is still below 1e-6
    m = bndp.TruncatedGaussian(1.0, lower=-1.0, upper=1.0)
    a, b = (bndp.accounting.per_instance_rdp(m, 0.3, 1.0, x) for x in (1e9, 8e9))
    assert abs(b - a) < 1e-6 and 1.2230 < a < 1.2231


def test_audit_refuses_more_bins_than_draws():
    # bins=10**9 ran out of memory building the edges
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    with pytest.raises(ValueError, match="`bins` must be an integer from 2 to `n`"):
        ver.audit(lambda k, g: m.sample(np.full(k, 0.0), rng=g),
                  lambda k, g: m.sample(np.full(k, 1.0), rng=g), 1.0, n=2000, bins=10**9)


def test_gaussian_epsilon_and_failure_threshold_refuse_what_they_cannot_represent():
    # NaN before: epsilon ~ (sensitivity / sigma)^2 / 2 past the doubles; a subnormal delta
    assert cal.gaussian_epsilon(1e-154, 1.0, delta=1e-5) == pytest.approx(5e307, rel=1e-12)
    for sigma in (1e-155, 1e-300, [1.0, 1e-300]):
        with pytest.raises(ValueError, match="`sigma` is too small"):
            cal.gaussian_epsilon(sigma, 1.0, delta=1e-5)
    assert 18.2 < cal.classical_failure_threshold(1e-300) < 18.3
    for delta in (1e-310, 5e-324, [1e-5, 5e-324]):
        with pytest.raises(ValueError, match="`delta` must be at least"):
            cal.classical_failure_threshold(delta)


def test_tangent_bound_of_the_bounded_gaussian_loss_is_never_below_the_evaluated_loss():
    # the far-sigma certificate (used where sigma is beyond 2^508 times the shift or width)
    # against the compiled evaluation where both apply: an upper bound within a factor 4
    from bndp import _loss
    r = np.random.default_rng(7)
    for _ in range(200):
        d = int(r.integers(1, 4))
        w = 10.0 ** r.uniform(-3, 3, d)
        dq = 10.0 ** r.uniform(-3, 3)
        s = 10.0 ** r.uniform(0, 4) * max(float(np.max(w)), dq)
        ev = ver.bounded_gaussian_loss(s, dq, np.zeros(d), w, details=True)
        far = _loss._far_sigma_loss(s, dq, w, True)
        assert far.upper >= ev.upper * (1 - 1e-9)
        assert far.lower <= ev.upper * (1 + 1e-9) and far.upper <= 4.0 * ev.upper * (1 + 1e-6)


@pytest.mark.parametrize("loc", [2e4, 1e8, 1e10, 1e20, -1e20, -3e5])
def test_truncated_normal_log_density_and_cdf_far_from_the_interval(loc):
    # loc far beyond a bound: the compiled form's quadratic terms cancel (inf/NaN from about
    # 1e10 scales); the scaled form against mpmath at 400 digits
    tg = bndp.TruncatedGaussian(1.0, lower=-1.0, upper=1.0)
    with mp.workdps(400):
        L, U, m = mp.mpf(-1), mp.mpf(1), mp.mpf(loc)
        # differences of the tails on loc's side (mpmath keeps them for any loc)
        def mass(a, b):
            return mp.ncdf(b - m) - mp.ncdf(a - m) if m > 0 else mp.ncdf(m - a) - mp.ncdf(m - b)
        Z = mass(L, U)
        for x in (-0.5, 0.25, 1.0 - 1e-9, -1.0 + 1e-9):
            want = float(-(mp.mpf(x) - m) ** 2 / 2 - mp.log(mp.sqrt(2 * mp.pi)) - mp.log(Z))
            assert tg.logpdf(x, loc) == pytest.approx(want, rel=1e-12, abs=1e-9)
            cdf = float(mass(L, mp.mpf(x)) / Z)
            assert tg.cdf(x, loc) == pytest.approx(cdf, rel=1e-9, abs=1e-300)
    assert tg.logpdf(2.0, loc) == -math.inf and tg.cdf(2.0, loc) == 1.0
    assert tg.cdf(-2.0, loc) == 0.0
