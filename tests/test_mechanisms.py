"""The mechanism objects and the one-call API: laws, moments, shapes, inputs."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

import bndp

from ._helpers import chi2_pvalue, grid_counts

# (q, b, [l, u], mean, variance): adaptive-quadrature references of the bounded Laplace law
BL_MOMENTS = [
    (2, 0.7, (-5, 5), 1.9745359654704388, 0.88653497161670313),
    (0, 1, (0, 10), 0.99954598008990312, 0.99545959476495246),
    (0, 1.6126053959051823, (0, 1e10), 1.6126053959051823, 2.6004961629025096),
    (0.3, 1e6, (0, 1), 0.49999995266666961, 0.083333325983331739),
    (1, 3, (0, 1), 0.52772647315712902, 0.082872403743492857),
]


class _FixedScaleLaplace(bndp.BoundedLaplace):
    """A BoundedLaplace with a given scale (for moment tests at arbitrary b)."""

    def __init__(self, scale, lower, upper):
        self._set(epsilon=1.0, sensitivity=1.0, lower=float(lower), upper=float(upper),
                  delta=0.0, scale=float(scale))


@pytest.mark.parametrize("q,b,dom,mean,var", BL_MOMENTS)
def test_bounded_laplace_moments(q, b, dom, mean, var):
    m = _FixedScaleLaplace(b, *dom)
    assert m.mean(q) == pytest.approx(mean, rel=1e-13)
    assert m.variance(q) == pytest.approx(var, rel=1e-12)
    assert m.bias(q) == pytest.approx(mean - q, rel=1e-12, abs=1e-15)
    assert m.mse(q) == pytest.approx(var + (mean - q) ** 2, rel=1e-12)


def test_bounded_laplace_sample_moments_match():
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    x = m.sample(np.full(200000, 1.0), rng=4)
    se = math.sqrt(m.variance(1.0) / x.size)
    assert abs(x.mean() - m.mean(1.0)) < 5 * se
    assert x.var() == pytest.approx(m.variance(1.0), rel=0.02)


def test_bounded_laplace_pdf_integrates_to_one_and_matches_cdf():
    m = bndp.BoundedLaplace(0.5, sensitivity=1.0, lower=-3.0, upper=7.0, mode="continuous")
    for q in (-3.0, 0.0, 6.5):
        total, _ = integrate.quad(lambda t: m.pdf(t, q), -3, 7, points=[q], epsabs=1e-13)
        assert total == pytest.approx(1.0, abs=1e-10)
        part, _ = integrate.quad(lambda t: m.pdf(t, q), -3, 1.5, points=[q] if q < 1.5 else None)
        assert m.cdf(1.5, q) == pytest.approx(part, abs=1e-10)
    assert m.pdf(-3.5, 0.0) == 0.0 and m.pdf(7.5, 0.0) == 0.0
    p = np.linspace(0.01, 0.99, 9)
    np.testing.assert_allclose(m.cdf(m.ppf(p, 2.0), 2.0), p, atol=1e-13)


def test_bounded_gaussian_law_matches_scipy_truncnorm():
    m = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="continuous")
    s = m.sigma
    for q in (0.0, 3.0, 10.0):
        d = stats.truncnorm(-q / s, (10 - q) / s, loc=q, scale=s)
        xs = np.linspace(0, 10, 11)
        np.testing.assert_allclose(m.pdf(xs, q), d.pdf(xs), rtol=1e-12)
        np.testing.assert_allclose(m.cdf(xs, q), d.cdf(xs), rtol=1e-12, atol=1e-15)
        assert m.mean(q) == pytest.approx(d.mean(), rel=1e-12)
        assert m.variance(q) == pytest.approx(d.var(), rel=1e-10)
        p = np.linspace(0.05, 0.95, 7)
        np.testing.assert_allclose(m.ppf(p, q), d.ppf(p), rtol=1e-12)
        x = m.sample(np.full(20000, q), rng=8)
        assert stats.kstest(x, d.cdf).pvalue > 1e-3


def test_bounded_gaussian_variance_where_the_closed_form_cancels():
    # sigma >> width: Var -> w^2/12 (0.0833...); the closed form loses all digits here
    from bndp.distributions import truncnorm_eval

    v = truncnorm_eval(4, 0.0, 0.3, 1e8, 0.0, 1.0)
    assert v == pytest.approx(1 / 12, rel=1e-9)
    mean = truncnorm_eval(3, 0.0, 0.3, 1e8, 0.0, 1.0)
    assert mean == pytest.approx(0.5, rel=1e-8)


def test_multivariate_table_setting_variances():
    m = bndp.BoundedGaussian(1.0, sensitivity=2 * math.sqrt(5), lower=[0.0, 1.0],
                             upper=[10.0, 9.0], mode="continuous")
    assert m.dim == 2
    np.testing.assert_allclose(m.variance([0.0, 1.0]), [7.8801, 5.1643], atol=1e-4)
    assert float(np.sum(m.variance([5.0, 5.0]))) == pytest.approx(13.209, abs=1e-3)


def test_multivariate_shapes_and_joint_density():
    m = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=[0.0, 0.0, 0.0], upper=[1.0, 2.0, 3.0],
                             mode="continuous")
    v = np.array([[0.5, 1.0, 1.5], [0.0, 0.0, 0.0]])
    x = m.sample(v, rng=1)
    assert x.shape == (2, 3)
    assert (x >= 0).all() and (x <= [1, 2, 3]).all()
    assert m.sample(v[0], size=(4, 5), rng=1).shape == (4, 5, 3)
    x0 = np.array([0.2, 1.9, 0.1])
    ref = sum(stats.truncnorm(-q / m.sigma, (u - q) / m.sigma, loc=q, scale=m.sigma).logpdf(x)
              for q, u, x in zip(v[0], [1, 2, 3], x0))
    assert m.pdf(x0, v[0]) == pytest.approx(math.exp(ref), rel=1e-12)
    assert m.pdf(np.array([x0, x0]), v).shape == (2,)
    with pytest.raises(ValueError, match="trailing dimension"):
        m.sample([0.5, 1.0], rng=1)
    with pytest.raises(ValueError, match="trailing dimension"):
        m.sample(0.5, rng=1)


def test_outside_values_are_clipped_or_refused():
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    a = m.sample([-5.0, 15.0], rng=3)
    b = m.sample([0.0, 10.0], rng=3)
    np.testing.assert_array_equal(a, b)  # clipping is the documented default
    with pytest.raises(ValueError, match="on_outside"):
        m.sample([-5.0], on_outside="raise")
    with pytest.raises(ValueError, match="on_outside"):
        m.sample([1.0], on_outside="ignore")
    g = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    with pytest.raises(ValueError):
        g.sample(11.0, on_outside="raise")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_refused(bad):
    for m in (bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0,
                                  upper=10.0), bndp.BoundedGaussian(1.0, sensitivity=1.0,
                                  lower=0.0, upper=10.0)):
        with pytest.raises(ValueError, match="value"):
            m.sample([1.0, bad])


def test_non_numeric_values_refused():
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    for bad in (["a", "b"], [True, False], [1 + 2j], None, [object()]):
        with pytest.raises(TypeError, match="value"):
            m.sample(bad)


@pytest.mark.parametrize("cls", [bndp.BoundedLaplace, bndp.BoundedGaussian])
@pytest.mark.parametrize(
    "kwargs,exc",
    [
        (dict(epsilon=0.0), ValueError), (dict(epsilon=-1.0), ValueError),
        (dict(epsilon=np.nan), ValueError), (dict(sensitivity=0.0), ValueError),
        (dict(sensitivity=np.inf), ValueError), (dict(lower=10.0), ValueError),
        (dict(lower=-np.inf), ValueError), (dict(upper=np.inf), ValueError),
        (dict(upper=np.nan), ValueError), (dict(epsilon="1"), TypeError),
        (dict(lower=None), TypeError),
    ],
)
def test_mechanism_bad_parameters(cls, kwargs, exc):
    args = dict(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    args.update(kwargs)
    if cls is bndp.BoundedLaplace and kwargs in (dict(lower=-np.inf), dict(upper=np.inf)):
        m = cls(**args)  # a half-line is a valid BoundedLaplace domain, in both modes
        assert m.privacy_loss() <= 1.0
        return
    with pytest.raises(exc):
        cls(**args)


def test_laplace_delta_range():
    with pytest.raises(ValueError, match="delta"):
        bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0, delta=1.0,
                            mode="continuous")
    with pytest.raises(ValueError, match="delta"):
        bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0, delta=-0.01,
                            mode="continuous")
    m = bndp.BoundedLaplace(0.0, sensitivity=1.0, lower=0.0, upper=100.0, delta=0.1,
                            mode="continuous")  # eps = 0 allowed with delta > 0
    assert m.scale == pytest.approx(18.493242007617887, rel=1e-13)


def test_mismatched_bound_shapes():
    with pytest.raises(ValueError, match="length"):
        bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=[0.0, 0.0], upper=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError):
        bndp.sample([1.0, 2.0], mechanism="laplace", epsilon=1.0, sensitivity=1.0,
                     lower=[0.0, 0.0, 0.0], upper=10.0)


def test_repr_round_trips_and_immutability():
    for m in (bndp.BoundedLaplace(0.5, sensitivity=1.0, lower=0.0, upper=10.0, delta=1e-6),
              bndp.BoundedGaussian(1.0, sensitivity=2.0, lower=[0.0, 1.0], upper=[10.0, 9.0])):
        again = eval("bndp." + repr(m))
        assert again == m and hash(again) == hash(m)
        with pytest.raises(AttributeError):
            m.sigma_or_scale = 1.0
        with pytest.raises(AttributeError):
            m.epsilon = 2.0


# ---------------------------------------------------------------------------------------
# bndp.sample
# ---------------------------------------------------------------------------------------

def test_sample_api_shapes_and_dtype():
    col = np.arange(12, dtype=np.int32).reshape(3, 4)
    for mech in ("laplace", "gaussian"):
        # an integer column with integral bounds and sensitivity: the integer law, its dtype
        out = bndp.sample(col, mechanism=mech, epsilon=1.0, sensitivity=1.0, lower=0, upper=11, rng=0)
        assert out.shape == col.shape and out.dtype == np.int32
        assert (out >= 0).all() and (out <= 11).all()
        # the default grid on request: float64
        out = bndp.sample(col, mechanism=mech, epsilon=1.0, sensitivity=1.0, lower=0, upper=11,
                          rng=0, integer=False)
        assert out.shape == col.shape and out.dtype == np.float64
        assert (out >= 0).all() and (out <= 11).all()
    assert isinstance(bndp.sample(3.0, mechanism="laplace", epsilon=1.0, sensitivity=1.0,
                                  lower=0, upper=11, rng=0), float)
    empty = bndp.sample(np.array([]), mechanism="laplace", epsilon=1.0, sensitivity=1.0,
                        lower=0, upper=11, rng=0)
    assert empty.shape == (0,)


def test_sample_api_matches_mechanism_stream():
    v = np.linspace(0, 10, 50)
    a = bndp.sample(v, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0, upper=10, rng=5)
    b = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0).sample(v, rng=5)
    np.testing.assert_array_equal(a, b)


def test_sample_api_per_row_bounds():
    v = np.array([5.0, 50.0, 500.0])
    lo = np.array([0.0, 0.0, 0.0])
    hi = np.array([10.0, 100.0, 1000.0])
    out = bndp.sample(np.tile(v, (20000, 1)), mechanism="laplace", epsilon=1.0,
                      sensitivity=1.0, lower=lo, upper=hi, rng=2)
    assert out.shape == (20000, 3)
    assert (out >= lo).all() and (out <= hi).all()
    for j in range(3):   # the default grid law: on each pair's grid, chi-square vs its PMF
        plan = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=lo[j], upper=hi[j]).exact_plan
        assert chi2_pvalue(grid_counts(plan, out[:, j]), plan.pmf(v[j])) > 1e-4


def test_sample_api_per_row_bounds_continuous():
    v = np.array([5.0, 50.0, 500.0])
    lo = np.array([0.0, 0.0, 0.0])
    hi = np.array([10.0, 100.0, 1000.0])
    out = bndp.sample(np.tile(v, (20000, 1)), mechanism="laplace", epsilon=1.0,
                      sensitivity=1.0, lower=lo, upper=hi, rng=2, mode="continuous")
    assert (out >= lo).all() and (out <= hi).all()
    for j in range(3):
        m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=lo[j], upper=hi[j], mode="continuous")
        assert stats.kstest(out[:, j], lambda t: m.cdf(t, v[j])).pvalue > 1e-3


def test_sample_api_bad_arguments():
    kw = dict(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=1.0)
    with pytest.raises(ValueError, match="mechanism"):
        bndp.sample([0.5], mechanism="cauchy", **kw)
    with pytest.raises(ValueError, match="mechanism"):
        bndp.sample([0.5], mechanism=None, **kw)
    with pytest.raises(ValueError, match="delta"):
        bndp.sample([0.5], mechanism="gaussian", delta=1e-5, **kw)
    with pytest.raises(TypeError):
        bndp.sample([0.5], "laplace", **kw)  # keyword-only
