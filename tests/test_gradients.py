"""Rectified / truncated Gaussian and stochastic-sign mechanisms (bndp.mechanisms.gradients):
samplers against their exact laws, moments, densities, input checks."""

import math
import os

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import log_ndtr, ndtr

import bndp
from bndp._core import testing as _testing
from bndp.accounting import fisher_information_loss_squared

FULL = os.environ.get("BNDP_FULL", "") == "1"
N_KS = 200_000 if FULL else 40_000


# ---------------------------------------------------------------------------------------
# Construction, immutability, bad inputs
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [bndp.RectifiedGaussian, bndp.TruncatedGaussian])
def test_construction_and_repr(cls):
    m = cls(0.5, lower=-1.0, upper=2.0)
    assert m.sigma == 0.5 and m.lower == -1.0 and m.upper == 2.0
    assert eval(repr(m), {cls.__name__: cls}) == m
    with pytest.raises(AttributeError):
        m.sigma = 2.0
    mv = cls(sigma=1.0, lower=[-1.0, -2.0], upper=[1.0, 3.0])
    assert mv.lower.shape == (2,) and not mv.lower.flags.writeable
    assert eval(repr(mv), {cls.__name__: cls}) == mv


@pytest.mark.parametrize("cls", [bndp.RectifiedGaussian, bndp.TruncatedGaussian])
def test_bad_constructor_inputs(cls):
    for s in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="sigma"):
            cls(s, lower=-1.0, upper=1.0)
    with pytest.raises(TypeError, match="sigma"):
        cls("1", lower=-1.0, upper=1.0)
    with pytest.raises(ValueError, match="lower"):
        cls(1.0, lower=1.0, upper=1.0)
    with pytest.raises(ValueError, match="lower"):
        cls(1.0, lower=2.0, upper=1.0)
    with pytest.raises(ValueError, match="lower"):
        cls(1.0, lower=[-1.0, 3.0], upper=[1.0, 2.0])
    with pytest.raises(ValueError, match="lower|upper"):
        cls(1.0, lower=np.nan, upper=1.0)
    with pytest.raises(ValueError, match="upper"):
        cls(1.0, lower=-1.0, upper=np.inf)          # the support must be bounded
    with pytest.raises(ValueError, match="sigma"):
        bndp.StochasticSign(0.0)


@pytest.mark.parametrize("m", [bndp.RectifiedGaussian(1.0, lower=-1,
                                                      upper=1), bndp.TruncatedGaussian(1.0,
                                                      lower=-1, upper=1),
                               bndp.StochasticSign(1.0)])
def test_bad_value(m):
    with pytest.raises(ValueError, match="value"):
        m.sample([0.0, np.nan], rng=0)
    with pytest.raises(ValueError, match="value"):
        m.sample(np.inf, rng=0)
    with pytest.raises(ValueError, match="value"):
        m.mean(np.nan)
    with pytest.raises(TypeError, match="value"):
        m.sample("a", rng=0)


def test_value_must_broadcast_with_bounds():
    m = bndp.RectifiedGaussian(1.0, lower=[-1.0, -1.0], upper=[1.0, 1.0])
    with pytest.raises(ValueError, match="broadcast"):
        m.sample(np.zeros(3), rng=0)


# ---------------------------------------------------------------------------------------
# Shapes and reproducibility
# ---------------------------------------------------------------------------------------

def test_sample_shapes_and_support():
    lo = np.array([-1.0, -2.0, 0.0])
    hi = np.array([1.0, 0.5, 4.0])
    for cls in (bndp.RectifiedGaussian, bndp.TruncatedGaussian):
        m = cls(2.0, lower=lo, upper=hi)
        x = m.sample(np.zeros((50, 3)), rng=1)
        assert x.shape == (50, 3) and x.dtype == np.float64
        assert np.all((x >= lo) & (x <= hi))
        assert isinstance(cls(1.0, lower=-1, upper=1).sample(0.3, rng=1), float)
        assert cls(1.0, lower=-1, upper=1).sample(np.zeros((2, 0)), rng=1).shape == (2, 0)
        a = m.sample(np.ones((4, 3)), rng=7)
        b = m.sample(np.ones((4, 3)), rng=7)
        np.testing.assert_array_equal(a, b)
    s = bndp.StochasticSign(1.0).sample(np.zeros((3, 4)), rng=0)
    assert s.shape == (3, 4) and set(np.unique(s)) <= {-1.0, 1.0}


def test_truncated_far_outside_support_is_exact_and_finite():
    t = bndp.TruncatedGaussian(1.0, lower=-1.0, upper=1.0)
    x = t.sample(np.full(20000, 1e3), rng=3)
    assert np.all(np.isfinite(x)) and np.all((x >= -1) & (x <= 1))
    # N(1000, 1) on [-1, 1] is (up to 1e-6) an exponential of rate 999 below 1
    e = 1.0 - x
    assert stats.kstest(e, stats.expon(scale=1 / 999.5).cdf).pvalue > 1e-3
    y = t.sample(np.full(20000, -300.0), rng=4)
    assert stats.kstest(y + 1.0, stats.expon(scale=1 / 299.0).cdf).pvalue > 1e-3


# ---------------------------------------------------------------------------------------
# Samplers against the exact laws
# ---------------------------------------------------------------------------------------

def test_normal_kernel_is_numpys():
    # the same BitGenerator state gives exactly Generator.standard_normal's draws
    out = np.empty(10000)
    _testing.gr_normal_fill(np.random.default_rng(123), out)
    np.testing.assert_array_equal(out, np.random.default_rng(123).standard_normal(10000))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_normal_kernel_ks_and_tails(seed):
    out = np.empty(N_KS * 5)
    _testing.gr_normal_fill(np.random.default_rng(seed), out)
    assert stats.kstest(out, "norm").pvalue > 1e-3
    # the tail beyond r = 3.654 (its own sampling branch) has the right mass and shape
    r = 3.6541528853610088
    tail = np.abs(out[np.abs(out) > r])
    p = 2 * stats.norm.sf(r)
    assert abs(tail.size - p * out.size) < 5 * math.sqrt(p * out.size)
    assert stats.kstest(tail, lambda z: 1 - stats.norm.sf(z) / stats.norm.sf(r)).pvalue > 1e-3
    assert abs(np.mean(out > 0) - 0.5) < 5 * 0.5 / math.sqrt(out.size)


@pytest.mark.parametrize("theta,lo,hi", [(0.0, -1.0, 1.0), (0.8, -1.0, 1.0), (3.0, -1.0, 1.0),
                                         (-2.5, -0.5, 2.0), (1.0, 0.9, 1.1)])
def test_rectified_sampler_atoms_and_interior(theta, lo, hi):
    m = bndp.RectifiedGaussian(1.0, lower=lo, upper=hi)
    x = m.sample(np.full(N_KS, theta), rng=11)
    n = x.size
    for at, p in ((lo, ndtr(lo - theta)), (hi, ndtr(theta - hi))):
        k = np.count_nonzero(x == at)
        assert abs(k - n * p) < 5 * math.sqrt(n * p * (1 - p)) + 1
    pa, pb = m.atoms(theta)
    assert pa == pytest.approx(ndtr(lo - theta)) and pb == pytest.approx(ndtr(theta - hi))
    inner = x[(x > lo) & (x < hi)]
    law = stats.truncnorm(lo - theta, hi - theta, loc=theta, scale=1.0)
    assert stats.kstest(inner, law.cdf).pvalue > 1e-3


@pytest.mark.parametrize("theta,lo,hi,sigma", [(0.0, -1.0, 1.0, 1.0), (0.8, -1.0, 1.0, 0.5),
                                               (3.0, -1.0, 1.0, 1.0), (-6.0, -1.0, 2.0, 1.0),
                                               (0.0, -1e-3, 1e-3, 1.0), (40.0, -1.0, 1.0, 2.0)])
def test_truncated_sampler_ks(theta, lo, hi, sigma):
    m = bndp.TruncatedGaussian(sigma, lower=lo, upper=hi)
    x = m.sample(np.full(N_KS, theta), rng=12)
    law = stats.truncnorm((lo - theta) / sigma, (hi - theta) / sigma, loc=theta, scale=sigma)
    assert stats.kstest(x, law.cdf).pvalue > 1e-3
    # the mechanism's own cdf agrees with SciPy's
    q = np.linspace(lo, hi, 7)
    np.testing.assert_allclose(m.cdf(q, theta), law.cdf(q), atol=1e-12)


@pytest.mark.parametrize("theta", [0.0, 0.7, -2.0])
def test_stochastic_sign_sampler(theta):
    m = bndp.StochasticSign(0.8)
    x = m.sample(np.full(N_KS, theta), rng=13)
    p = ndtr(theta / 0.8)
    assert abs(np.mean(x == 1.0) - p) < 5 * math.sqrt(p * (1 - p) / x.size)
    assert m.mean(theta) == pytest.approx(2 * p - 1)
    assert m.variance(theta) == pytest.approx(4 * p * (1 - p))
    assert m.logpmf(1.0, theta) == pytest.approx(math.log(p))


def test_rectified_is_clip_of_gaussian_draws():
    # same stream: the rectified sampler is clip(theta + sigma Z) of the kernel's normals
    z = np.empty(1000)
    _testing.gr_normal_fill(np.random.default_rng(5), z)
    th = np.linspace(-3, 3, 1000)
    x = bndp.RectifiedGaussian(0.7, lower=-1, upper=1).sample(th, rng=5)
    np.testing.assert_array_equal(x, np.clip(th + 0.7 * z, -1, 1))


# ---------------------------------------------------------------------------------------
# Moments and densities
# ---------------------------------------------------------------------------------------

def _rect_moments_mp(theta, s, lo, hi):
    # closed forms of clip(Z, za, zb) evaluated with 100 digits
    mp.mp.dps = 100
    th, s, lo, hi = (mp.mpf(v) for v in (theta, s, lo, hi))
    za, zb = (lo - th) / s, (hi - th) / s
    pa, pb, P = mp.ncdf(za), mp.ncdf(-zb), mp.ncdf(zb) - mp.ncdf(za)
    m1 = za * pa + zb * pb + (mp.npdf(za) - mp.npdf(zb))
    m2 = za ** 2 * pa + zb ** 2 * pb + P + za * mp.npdf(za) - zb * mp.npdf(zb)
    return float(th + s * m1), float(s * s * (m2 - m1 * m1))


@pytest.mark.parametrize("theta,lo,hi,s", [(0.0, -1, 1, 1.0), (0.4, -1, 2, 0.5), (3.0, -1, 1, 1.0),
                                           (-12.0, -1, 1, 1.0), (30.0, -1, 1, 2.0)])
def test_rectified_moments(theta, lo, hi, s):
    m = bndp.RectifiedGaussian(s, lower=lo, upper=hi)
    mean, var = _rect_moments_mp(theta, s, lo, hi)
    assert m.mean(theta) == pytest.approx(mean, rel=1e-10, abs=1e-14)
    # far outside S the variance is ~1e-49 and keeps ~9 digits
    assert m.variance(theta) == pytest.approx(var, rel=1e-8 if abs(theta) > 10 else 1e-12,
                                              abs=1e-300)
    assert m.bias(theta) == pytest.approx(mean - theta, rel=1e-10, abs=1e-14)


def test_truncated_variance_equals_sigma4_eta_squared():
    # Var(X)/sigma^4 = eta_T^2: two independent code paths (moments kernel vs Eq. (3)),
    # theta within 10 sigma of S (further out both lose relative precision ~ eps (dist/sigma)^4)
    th = np.array([-7.0, -2.0, -0.3, 0.0, 0.5, 1.9, 4.0, 12.0])
    for s in (1.0, 2.5):
        for lo, hi in ((-1.0, 1.0), (-0.5, 3.0), (2.0, 2.5)):
            m = bndp.TruncatedGaussian(s, lower=lo, upper=hi)
            np.testing.assert_allclose(m.variance(th) / s ** 4, fisher_information_loss_squared(m, th),
                                       rtol=1e-9, atol=1e-16)


def _trunc_var_mp(theta, s, lo, hi):
    mp.mp.dps = 100
    th, s, lo, hi = (mp.mpf(v) for v in (theta, s, lo, hi))
    a, b = (lo - th) / s, (hi - th) / s
    Z = mp.ncdf(b) - mp.ncdf(a) if a < 0 else mp.ncdf(-a) - mp.ncdf(-b)
    pa, pb = mp.npdf(a), mp.npdf(b)
    return float(1 + (a * pa - b * pb) / Z - ((pa - pb) / Z) ** 2)


@pytest.mark.parametrize("theta,s", [(-7.0, 0.3), (12.0, 0.3), (4.0, 0.3), (50.0, 1.0), (0.2, 3.0)])
def test_truncated_fil_absolute_accuracy(theta, s):
    # sigma^2 eta_T^2 is accurate to ~eps (distance/sigma)^4 absolute far outside S
    m = bndp.TruncatedGaussian(s, lower=-1.0, upper=1.0)
    want = _trunc_var_mp(theta, s, -1.0, 1.0)
    t = max(1.0, abs(theta) / s)
    assert abs(fisher_information_loss_squared(m, theta) * s * s - want) <= 1e-15 * t ** 4


def test_monte_carlo_moments():
    for m, th in ((bndp.RectifiedGaussian(1.0, lower=-1,
                                          upper=1), 0.8), (bndp.TruncatedGaussian(1.0, lower=-1,
                                          upper=1), 0.8),
                  (bndp.TruncatedGaussian(0.5, lower=-1, upper=2), -1.5)):
        x = m.sample(np.full(N_KS, th), rng=21)
        v = m.variance(th)
        assert abs(x.mean() - m.mean(th)) < 5 * math.sqrt(v / x.size)
        assert abs(x.var() - v) < 6 * v * math.sqrt(2 / x.size) * 2


def test_densities_integrate_to_one():
    r = bndp.RectifiedGaussian(0.7, lower=-1.0, upper=1.5)
    t = bndp.TruncatedGaussian(0.7, lower=-1.0, upper=1.5)
    for th in (-2.0, 0.3, 4.0):
        inner = integrate.quad(lambda x: r.pdf(x, th), -1.0, 1.5)[0]
        atoms = r.pdf(-1.0, th) + r.pdf(1.5, th)
        assert inner + atoms == pytest.approx(1.0, abs=1e-10)
        assert r.logpdf(-1.0, th) == pytest.approx(log_ndtr((-1.0 - th) / 0.7))
        assert r.logpdf(2.0, th) == -np.inf and t.logpdf(-1.5, th) == -np.inf
        assert integrate.quad(lambda x: t.pdf(x, th), -1.0, 1.5)[0] == pytest.approx(1.0, abs=1e-10)
        assert r.cdf(1.5, th) == 1.0 and r.cdf(-1.01, th) == 0.0


# ---------------------------------------------------------------------------------------
# Log-space primitives against mpmath
# ---------------------------------------------------------------------------------------

def test_log_primitives_against_mpmath():
    mp.mp.dps = 50
    for x in (-1e3, -40.0, -19.9, -5.0, -0.3, 0.0, 0.7, 5.0, 30.0):
        want = float(mp.log(mp.ncdf(x)) if x <= 0 else mp.log1p(-mp.ncdf(-x)))
        # relative condition number of Phi in the tail ~ x^2 (rounding of x/sqrt2)
        assert _testing.gr_lndtr(x) == pytest.approx(want, rel=4e-16 * (8 + x * x), abs=1e-300)
    for U, L in ((1.0, -1.0), (1e-3, -1e-3), (-3.0, -3.5), (-25.0, -26.0), (40.0, 39.0),
                 (0.5, 0.25), (-0.2, -0.3), (5.0, -30.0)):
        want = float(mp.log(mp.ncdf(U) - mp.ncdf(L) if L < 0 else mp.ncdf(-L) - mp.ncdf(-U)))
        assert _testing.gr_log_ndtr_diff(U, L) == pytest.approx(want, rel=1e-13)


def test_truncated_and_rectified_ppf_invert_their_cdf():
    from scipy import stats

    th, s, lo, hi = 0.3, 0.7, -1.0, 2.0
    t = bndp.TruncatedGaussian(s, lower=lo, upper=hi)
    p = np.array([0.0, 1e-300, 1e-30, 1e-6, 0.2, 0.5, 0.9, 1 - 1e-9, 1.0])
    want = stats.truncnorm.ppf(p, (lo - th) / s, (hi - th) / s, loc=th, scale=s)
    np.testing.assert_allclose(t.ppf(p, th), want, rtol=1e-12, atol=1e-12)
    # far in the lower tail, where 1 - p cannot be formed: the mirror image of isf
    m = bndp.TruncatedGaussian(1.0, lower=-50.0, upper=50.0)
    assert m.ppf(1e-30, 0.0) == -m.isf(1e-30, 0.0) and m.ppf(1e-30, 0.0) < -11.46
    assert abs(m.cdf(m.ppf(1e-30, 0.0), 0.0) / 1e-30 - 1) < 1e-10
    # rectified: the generalized inverse, atoms at the bounds
    r = bndp.RectifiedGaussian(s, lower=lo, upper=hi)
    atom_lo = stats.norm.cdf((lo - th) / s)
    q = np.array([0.0, atom_lo / 2, atom_lo, 0.5, 0.9, 1.0])
    x = r.ppf(q, th)
    assert x[0] == x[1] == x[2] == lo and x[-1] == hi
    assert x[3] == pytest.approx(th) and x[4] == pytest.approx(th + s * stats.norm.ppf(0.9))
    for qi, xi in zip(q, x):            # smallest x with cdf(x) >= q
        assert r.cdf(xi, th) >= qi - 1e-15
        if lo < xi:
            assert r.cdf(np.nextafter(xi, -np.inf) - 1e-9, th) < qi + 1e-15


def test_truncated_isf_takes_p_as_the_rectified_one():
    import inspect

    t = bndp.TruncatedGaussian(0.5, lower=-1.0, upper=1.0)
    r = bndp.RectifiedGaussian(0.5, lower=-1.0, upper=1.0)
    for m in (t, r):
        for name in ("ppf", "isf"):
            assert list(inspect.signature(getattr(m, name)).parameters) == ["p", "value"]
    assert t.isf(p=0.25, value=0.1) == t.isf(0.25, 0.1)
    with pytest.raises(TypeError, match="takes no `q`.*pass p="):
        t.isf(q=0.25, value=0.1)
