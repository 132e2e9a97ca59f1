"""The law methods of the gradient mechanisms and of the baselines, on the shared hooks of
bndp.mechanisms._law: the generalized inverse (ppf/isf) against the CDF, atoms included;
the truncated normal against SciPy; the clamped Laplace against SciPy's Laplace; argument
checks."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

import bndp
from bndp.mechanisms._law import ClippedLaw, LawMechanism, TruncatedNormalLaw


def _mechs():
    return {
        "rect": bndp.RectifiedGaussian(0.7, lower=-1.0, upper=2.0),
        "trunc": bndp.TruncatedGaussian(0.7, lower=-1.0, upper=2.0),
        "sign": bndp.StochasticSign(0.8),
        "clamp": bndp.ClampedLaplace(1.0, sensitivity=1.5, lower=-1.0, upper=2.0),
        "gg": bndp.GeneralizedGaussian(2.0, sensitivity=1.0, lower=-1.0, upper=2.0),
    }


MECHS = _mechs()
LAW_METHODS = ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf", "mean", "bias",
               "variance")


def test_a_clipped_law_needs_its_noise_right_after_it():
    from bndp.mechanisms.unbounded import LaplaceNoise

    with pytest.raises(TypeError, match="after ClippedLaw"):
        class Wrong(ClippedLaw, LawMechanism):      # no noise law to clip
            _law_docs = {}
    # the noise's own hooks come before LawMechanism's defaults (_logsf = log(_sf), ...)
    mro = type(MECHS["clamp"]).__mro__
    assert mro.index(LaplaceNoise) < mro.index(LawMechanism)


def test_the_gradient_and_baseline_mechanisms_use_the_hooks():
    for m in MECHS.values():
        assert isinstance(m, LawMechanism)
        for name in LAW_METHODS:
            # each class has its own copy of the shared method, documented for it
            assert name in type(m).__dict__, (type(m).__name__, name)
            assert "Parameters" in getattr(type(m), name).__doc__
    assert isinstance(MECHS["rect"], ClippedLaw) and isinstance(MECHS["clamp"], ClippedLaw)
    assert isinstance(MECHS["trunc"], TruncatedNormalLaw)
    assert isinstance(MECHS["gg"], TruncatedNormalLaw)
    assert "logpmf" in type(MECHS["sign"]).__dict__


# ---------------------------------------------------------------------------------------
# the generalized inverse: ppf(p) is the smallest x with cdf(x) >= p, isf(p) the smallest
# x with sf(x) <= p
# ---------------------------------------------------------------------------------------

#: the laws with atoms, whose generalized inverse is checked against their CDF (the
#: continuous ones: round trips below and SciPy; their CDF near a bound is conditioned by
#: the standardisation of ``x``, 1e-5 relative at 1e-12)
ATOMIC = ["clamp", "rect", "sign"]
P = np.array([0.0, 1e-300, 1e-12, 0.003, 0.05, 0.2, 0.5, 0.7, 0.95, 1 - 1e-9, 1.0])
THETA = (-3.0, 0.0, 0.4, 1.9, 5.0)


@pytest.mark.parametrize("name", ATOMIC)
@pytest.mark.parametrize("theta", THETA)
def test_ppf_and_isf_are_generalized_inverses(name, theta):
    m = MECHS[name]
    hi = 1.0 if name == "sign" else 2.0
    x = np.asarray(m.ppf(P, theta))          # the smallest x with cdf(x) >= p
    y = np.asarray(m.isf(P, theta))          # the smallest y with sf(y) <= p
    assert np.all((x >= -1.0) & (x <= hi) & (y >= -1.0) & (y <= hi))
    assert np.all(np.asarray(m.cdf(x, theta)) >= P * (1 - 1e-12))
    assert np.all(np.asarray(m.sf(y, theta)) <= P * (1 + 1e-12))
    # none smaller: just below them the inequalities fail (below lower there is no point);
    # for p > 1/2 on the other tail, which resolves them (1 - p is exact there)
    def fails(z, p, tail, other):
        z = z - 1e-9 * (1 + np.abs(z))
        small = p <= 0.5
        t, o = np.asarray(tail(z, theta)), np.asarray(other(z, theta))
        return np.where(small, t, o), np.where(small, p, 1 - p)
    got, want = fails(x, P, m.cdf, m.sf)                 # cdf < p, or sf > 1 - p
    ok = np.where(P <= 0.5, got < want, got > want)
    assert np.all(ok[x > -1.0])
    got, want = fails(y, P, m.sf, m.cdf)                 # sf > p, or cdf < 1 - p
    ok = np.where(P <= 0.5, got > want, got < want)
    assert np.all(ok[y > -1.0])


@pytest.mark.parametrize("name", sorted(MECHS))
@pytest.mark.parametrize("theta", THETA)
def test_isf_is_ppf_of_one_minus_p(name, theta):
    m = MECHS[name]
    p = np.array([0.0, 0.01, 0.25, 0.5, 0.75, 0.99, 1.0])   # 1 - p exact
    np.testing.assert_allclose(m.isf(p, theta), m.ppf(1 - p, theta), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["trunc", "gg", "rect", "clamp"])
@pytest.mark.parametrize("theta", THETA)
def test_ppf_of_cdf_round_trip(name, theta):
    m = MECHS[name]
    x = np.linspace(-0.95, 1.95, 13)           # inside the support, off the bounds
    c = np.asarray(m.cdf(x, theta))
    ok = (c > 1e-12) & (c < 1 - 1e-9)          # where the CDF resolves x
    np.testing.assert_allclose(np.asarray(m.ppf(c, theta))[ok], x[ok], rtol=1e-7, atol=1e-9)
    s = np.asarray(m.sf(x, theta))
    ok = (s > 1e-12) & (s < 1 - 1e-9)
    np.testing.assert_allclose(np.asarray(m.isf(s, theta))[ok], x[ok], rtol=1e-7, atol=1e-9)


def test_stochastic_sign_round_trip():
    m = MECHS["sign"]
    for th in THETA:
        for x in (-1.0, 1.0):
            assert m.ppf(m.cdf(x, th), th) == x
            assert m.isf(m.sf(x, th), th) == x
        assert m.pdf(1.0, th) == pytest.approx(stats.norm.cdf(th / 0.8), rel=1e-14)
        assert m.pdf(-1.0, th) + m.pdf(1.0, th) == pytest.approx(1.0, rel=1e-15)
        assert m.pdf(0.0, th) == 0.0 and m.logpdf(1.0, th) == m.logpmf(1.0, th)
        assert m.cdf(-1.0, th) == pytest.approx(stats.norm.cdf(-th / 0.8), rel=1e-14)
        assert m.cdf(-1.5, th) == 0.0 and m.cdf(1.0, th) == 1.0 and m.sf(1.0, th) == 0.0


# ---------------------------------------------------------------------------------------
# atoms: cdf/sf include them exactly, ppf/isf map probabilities inside them to the bound
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["rect", "clamp"])
@pytest.mark.parametrize("theta", THETA)
def test_clipped_laws_atoms(name, theta):
    m = MECHS[name]
    a_lo, a_hi = m.atoms(theta) if name == "rect" else m.boundary_mass(theta)
    assert m.cdf(-1.0, theta) == a_lo and m.sf(2.0, theta) == 0.0
    assert m.cdf(np.nextafter(-1.0, -2), theta) == 0.0 and m.cdf(2.0, theta) == 1.0
    assert m.sf(-1.0, theta) == pytest.approx(1.0 - a_lo, rel=1e-14)
    assert m.sf(np.nextafter(2.0, 0), theta) == pytest.approx(a_hi, rel=1e-9)
    # the density at a bound is the atom's mass (exp of its log: to the last bits)
    assert m.pdf(-1.0, theta) == pytest.approx(a_lo, rel=1e-14)
    assert m.pdf(2.0, theta) == pytest.approx(a_hi, rel=1e-14, abs=1e-300)
    assert m.pdf(2.5, theta) == 0.0 and m.pdf(-1.5, theta) == 0.0
    assert m.ppf(a_lo, theta) == -1.0 and m.ppf(0.0, theta) == -1.0
    assert m.ppf(1.0, theta) == 2.0 and m.isf(0.0, theta) == 2.0 and m.isf(1.0, theta) == -1.0
    # the ends of the atoms map to the bounds (F, S: the noise's CDF and survival function)
    assert m.isf(m.sf(-1.0, theta), theta) == -1.0         # p = S(lower)
    assert m.isf(a_hi, theta) == 2.0                       # p = S(upper)
    if name == "rect":
        assert m.ppf(stats.norm.cdf(2.0, theta, 0.7), theta) == 2.0   # p = F(upper)
    if a_lo < 0.99:
        assert m.ppf(a_lo * (1 + 1e-9) + 1e-300, theta) > -1.0
    if 1e-300 < a_hi:
        assert m.isf(a_hi / 2, theta) == 2.0
    if a_hi < 0.99:
        assert m.isf(a_hi * (1 + 1e-9) + 1e-300, theta) < 2.0
    # the density (Lebesgue part) and the two atoms make one
    q = m._value(theta) if name == "clamp" else theta
    kink = [min(max(float(q), -1.0), 2.0)]
    inner = integrate.quad(lambda x: m.pdf(x, theta), -1.0, 2.0, points=kink,
                           epsabs=1e-13)[0]
    assert inner + a_lo + a_hi == pytest.approx(1.0, abs=1e-10)


def test_clipped_laws_far_from_the_box():
    # the atoms hold all the mass but 1e-600: ppf/isf still give the other bound at p = 1
    # or 0 (the comparison with the atoms is made in log space)
    r = bndp.RectifiedGaussian(1.0, lower=-1.0, upper=1.0)
    for th, atom in ((-60.0, -1.0), (60.0, 1.0)):
        assert r.ppf(1.0, th) == 1.0 and r.ppf(0.0, th) == -1.0
        assert r.isf(0.0, th) == 1.0 and r.isf(1.0, th) == -1.0
        assert r.ppf(0.5, th) == atom and r.isf(0.5, th) == atom
    c = bndp.ClampedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=2000.0)
    assert c.ppf(1.0, 0.0) == 2000.0 and c.ppf(0.5, 0.0) == 0.0 and c.ppf(0.75, 0.0) > 0
    assert c.logsf(1900.0, 0.0) == pytest.approx(math.log(0.5) - 1900.0, rel=1e-14)
    assert c.isf(0.5 * math.exp(-700.0), 0.0) == pytest.approx(700.0, rel=1e-13)
    assert c.isf(1e-320, 0.0) < 2000.0 and c.isf(0.0, 0.0) == 2000.0
    assert c.logpdf(2000.0, 0.0) == pytest.approx(math.log(0.5) - 2000.0, rel=1e-14)


# ---------------------------------------------------------------------------------------
# independent references: SciPy's truncated normal and Laplace
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("theta,s,lo,hi", [(0.0, 1.0, -1.0, 1.0), (0.8, 0.5, -1.0, 2.0),
                                           (-4.0, 1.0, -1.0, 2.0), (3.0, 2.0, 0.0, 0.5)])
def test_truncated_normal_laws_match_scipy(theta, s, lo, hi):
    law = stats.truncnorm((lo - theta) / s, (hi - theta) / s, loc=theta, scale=s)
    x = np.linspace(lo, hi, 9)
    p = np.array([0.0, 1e-8, 0.1, 0.5, 0.9, 1.0])
    t = bndp.TruncatedGaussian(s, lower=lo, upper=hi)
    for got in (t, ):
        np.testing.assert_allclose(got.cdf(x, theta), law.cdf(x), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(got.sf(x, theta), law.sf(x), rtol=1e-10, atol=1e-15)
        np.testing.assert_allclose(got.pdf(x, theta), law.pdf(x), rtol=1e-12)
        # SciPy's quantiles are off by up to 3e-11 relative in the far tail (isf(1e-8) at
        # theta = -4: 1.99779294635 where the root in mpmath is 1.99779294629, bndp's value)
        np.testing.assert_allclose(got.ppf(p, theta), law.ppf(p), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(got.isf(p, theta), law.isf(p), rtol=1e-10, atol=1e-12)
        assert got.mean(theta) == pytest.approx(law.mean(), rel=1e-10, abs=1e-14)
        assert got.variance(theta) == pytest.approx(law.var(), rel=1e-10)
    # GeneralizedGaussian: the same law, its value clipped into the box
    g = bndp.GeneralizedGaussian(1.0, sensitivity=0.1, lower=lo, upper=hi)
    qc = min(max(theta, lo), hi)
    law = stats.truncnorm((lo - qc) / g.scale, (hi - qc) / g.scale, loc=qc, scale=g.scale)
    np.testing.assert_allclose(g.cdf(x, theta), law.cdf(x), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(g.logpdf(x, theta), law.logpdf(x), rtol=1e-12)
    np.testing.assert_allclose(g.ppf(p, theta), law.ppf(p), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g.isf(p, theta), law.isf(p), rtol=1e-10, atol=1e-12)
    assert g.bias(theta) == pytest.approx(law.mean() - qc, rel=1e-10, abs=1e-14)


def test_generalized_gaussian_box_is_per_coordinate():
    lo, hi = np.array([0.0, 1.0]), np.array([10.0, 9.0])
    m = bndp.GeneralizedGaussian(1.0, sensitivity=[4.0, 2.0], lower=lo, upper=hi)
    q = np.array([3.0, 20.0])                 # the second coordinate is clipped to 9
    x = np.array([5.0, 8.0])
    for i, qi in enumerate([3.0, 9.0]):
        law = stats.truncnorm((lo[i] - qi) / m.scale, (hi[i] - qi) / m.scale, loc=qi,
                              scale=m.scale)
        assert m.cdf(x, q)[i] == pytest.approx(law.cdf(x[i]), rel=1e-12)
        assert m.ppf(0.3, q)[i] == pytest.approx(law.ppf(0.3), rel=1e-12)
    assert np.shape(m.variance(q)) == (2,)
    with pytest.raises(ValueError, match="broadcast|shape"):
        m.cdf(1.0, np.zeros(3))


@pytest.mark.parametrize("q", [-1.0, 0.3, 1.7, 2.0])
def test_clamped_laplace_matches_scipy(q):
    m = MECHS["clamp"]
    lap = stats.laplace(loc=q, scale=m.scale)
    x = np.linspace(-0.99, 1.99, 11)
    np.testing.assert_allclose(m.cdf(x, q), lap.cdf(x), rtol=1e-13)
    np.testing.assert_allclose(m.sf(x, q), lap.sf(x), rtol=1e-13)
    np.testing.assert_allclose(m.pdf(x, q), lap.pdf(x), rtol=1e-13)
    np.testing.assert_allclose(m.logcdf(x, q), lap.logcdf(x), rtol=1e-12, atol=1e-15)
    p = np.array([0.2, 0.5, 0.8])
    np.testing.assert_allclose(m.ppf(p, q), np.clip(lap.ppf(p), -1.0, 2.0), rtol=1e-12,
                               atol=1e-15)
    lo_mass, hi_mass = m.boundary_mass(q)
    assert lo_mass == pytest.approx(lap.cdf(-1.0), rel=1e-14)
    assert hi_mass == pytest.approx(lap.sf(2.0), rel=1e-14)
    # the moments against the mixed law's integral
    mean = (integrate.quad(lambda t: t * lap.pdf(t), -1.0, 2.0, points=[q])[0]
            - lo_mass + 2.0 * hi_mass)
    assert m.mean(q) == pytest.approx(mean, rel=1e-10, abs=1e-13)


def test_clamped_laplace_value_is_clipped():
    m = MECHS["clamp"]
    assert m.cdf(0.5, 10.0) == m.cdf(0.5, 2.0) and m.ppf(0.3, -5.0) == m.ppf(0.3, -1.0)


# ---------------------------------------------------------------------------------------
# argument checks
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(MECHS))
@pytest.mark.parametrize("method", ["ppf", "isf"])
@pytest.mark.parametrize("p", [np.nan, -0.1, 1.5, [0.5, np.nan], -np.inf])
def test_probabilities_outside_zero_one_are_refused(name, method, p):
    with pytest.raises(ValueError, match=r"`p` must lie in \[0, 1\]"):
        getattr(MECHS[name], method)(p, 0.5)


@pytest.mark.parametrize("name", sorted(MECHS))
@pytest.mark.parametrize("method", ["cdf", "logpdf", "sf", "ppf"])
def test_bad_values_and_arguments_are_refused(name, method):
    m = MECHS[name]
    with pytest.raises(ValueError, match="value"):
        getattr(m, method)(0.5, np.nan)
    with pytest.raises(TypeError, match="value"):
        getattr(m, method)(0.5, "a")
    arg = "p" if method == "ppf" else "x"
    with pytest.raises(TypeError, match=f"`{arg}`"):
        getattr(m, method)("a", 0.5)
    with pytest.raises(TypeError, match=f"`{arg}`"):
        getattr(m, method)(True, 0.5)


def test_gradient_value_is_not_clipped_and_must_broadcast():
    r = bndp.RectifiedGaussian(1.0, lower=[-1.0, -1.0], upper=[1.0, 1.0])
    # a true value outside the box moves the law (unlike the baselines, which clip it)
    assert r.cdf(0.0, 5.0)[0] < r.cdf(0.0, 1.0)[0]
    for name in ("cdf", "ppf", "mean"):
        args = (0.5, np.zeros(3)) if name != "mean" else (np.zeros(3),)
        with pytest.raises(ValueError, match="does not broadcast with the bounds"):
            getattr(r, name)(*args)


def test_shapes_and_scalars():
    for m in MECHS.values():
        assert isinstance(m.cdf(0.5, 0.3), float) and isinstance(m.ppf(0.5, 0.3), float)
        assert isinstance(m.mean(0.3), float) and isinstance(m.variance(0.3), float)
        assert np.shape(m.cdf(np.zeros((2, 3)), 0.3)) == (2, 3)
        assert np.shape(m.isf(np.full(4, 0.5), np.zeros(4))) == (4,)
