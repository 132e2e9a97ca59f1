"""Samplers: exact laws (KS against independent CDFs), bounds, far tails, shapes, seeds."""

import numpy as np
import pytest
from scipy import special, stats

import bndp
from bndp.distributions import bounded_laplace_eval, truncnorm_eval

N = 20000


def _ks(x, cdf):
    return stats.kstest(x, cdf).pvalue


def _tn_cdf_erf(x, loc, scale, lo, hi):
    """Independent CDF for narrow intervals (scale >> width): erf differences near 0 keep full
    precision (erf(t) ~ 2t/sqrt(pi) for tiny t)."""
    z = (np.asarray(x) - loc) / scale
    a, b = (lo - loc) / scale, (hi - loc) / scale
    r2 = np.sqrt(2.0)
    return (special.erf(z / r2) - special.erf(a / r2)) / (special.erf(b / r2) - special.erf(a / r2))


# (loc, scale, lower, upper): interior, loc outside, far tails, sigma << and >> width
TN_CONFIGS = [
    (0.0, 1.0, -np.inf, np.inf),
    (2.0, 0.7, -5.0, 5.0),
    (0.0, 1.0, 30.0, 31.0),
    (0.0, 1.0, -1001.0, -1000.0),
    (0.0, 1.0, -40.0, -38.0),
    (5.0, 2.0, 0.0, 1.0),
    (-3.0, 1.0, 0.0, np.inf),
    (0.0, 1.0, 2.0, 3.0),
    (50.0, 0.01, 0.0, 100.0),
    (0.3, 1e3, 0.0, 1.0),
    (0.3, 1e9, 0.0, 1.0),
    (0.0, 1e6, -1.0, 2.0),
    (1e6, 1.0, 1e6 - 0.5, np.inf),
]


@pytest.mark.parametrize("loc,scale,lo,hi", TN_CONFIGS)
def test_truncated_normal_ks_and_bounds(loc, scale, lo, hi):
    x = bndp.truncated_normal(loc, scale, lo, hi, size=N, rng=2024)
    assert x.dtype == np.float64 and x.shape == (N,)
    assert np.isfinite(x).all()
    assert (x >= lo).all() and (x <= hi).all()
    if scale / (hi - lo) > 100:
        cdf = lambda t: _tn_cdf_erf(t, loc, scale, lo, hi)  # noqa: E731
    else:
        d = stats.truncnorm((lo - loc) / scale, (hi - loc) / scale, loc=loc, scale=scale)
        cdf = d.cdf
    assert _ks(x, cdf) > 1e-3
    # the library's own CDF agrees with the independent one
    grid = np.quantile(x, [0.01, 0.25, 0.5, 0.75, 0.99])
    np.testing.assert_allclose(truncnorm_eval(1, grid, loc, scale, lo, hi), cdf(grid),
                               rtol=1e-9, atol=1e-12)


def test_far_tail_draws_hug_the_near_bound():
    # N(0,1) on [30, 31]: mass decays like exp(-30 t); mean ~ 30 + 1/30
    x = bndp.truncated_normal(0, 1, 30, 31, size=N, rng=1)
    assert abs(x.mean() - (30 + 1 / 30.0332)) < 3 * (1 / 30) / np.sqrt(N) + 1e-4
    x = bndp.truncated_normal(0, 1, -1001, -1000, size=N, rng=1)
    assert abs(x.mean() + 1000 + 1 / 1000) < 1e-4


def test_ks_detects_a_wrong_law():
    # the test can fail: samples of N(0,1) truncated to [0, 1] are not uniform
    x = bndp.truncated_normal(0, 1, 0, 1, size=N, rng=3)
    assert _ks(x, stats.uniform(0, 1).cdf) < 1e-6


def test_per_row_matches_scalar_law():
    loc = np.array([0.0, 5.0, 10.0, 2.0])
    lo = np.array([0.0, 0.0, 0.0, -1.0])
    hi = np.array([10.0, 10.0, 10.0, 100.0])
    x = bndp.truncated_normal(loc[:, None], 3.0, lo[:, None], hi[:, None], size=(4, N), rng=9)
    assert x.shape == (4, N)
    for i in range(4):
        d = stats.truncnorm((lo[i] - loc[i]) / 3, (hi[i] - loc[i]) / 3, loc=loc[i], scale=3)
        assert _ks(x[i], d.cdf) > 1e-3


def test_scalar_and_size_rules():
    assert isinstance(bndp.truncated_normal(0, 1, -1, 1, rng=0), float)
    assert bndp.truncated_normal(0, 1, -1, 1, size=(2, 3), rng=0).shape == (2, 3)
    assert bndp.truncated_normal([0, 1], 1, -1, 1, rng=0).shape == (2,)
    assert bndp.truncated_normal([0, 1], 1, -1, 1, size=(5, 2), rng=0).shape == (5, 2)
    assert bndp.truncated_normal(0, 1, -1, 1, size=0, rng=0).shape == (0,)
    with pytest.raises(ValueError, match="size"):
        bndp.truncated_normal([0, 1], 1, -1, 1, size=(3,), rng=0)
    with pytest.raises(ValueError):
        bndp.truncated_normal([0, 1], 1, [-1, 0, 1], 2, rng=0)


def test_seeded_reproducibility_and_stream_independence():
    a = bndp.truncated_normal(0, 1, -1, 2, size=100, rng=42)
    b = bndp.truncated_normal(0, 1, -1, 2, size=100, rng=42)
    c = bndp.truncated_normal(0, 1, -1, 2, size=100, rng=43)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    g = np.random.default_rng(5)
    first = bndp.truncated_normal(0, 1, -1, 2, size=10, rng=g)
    second = bndp.truncated_normal(0, 1, -1, 2, size=10, rng=g)
    assert not np.array_equal(first, second)  # the generator's state advanced


def test_scalar_path_and_row_path_draw_the_same_stream():
    x1 = bndp.truncated_normal(1.0, 2.0, 0.0, 3.0, size=50, rng=7)
    x2 = bndp.truncated_normal(np.full(50, 1.0), 2.0, 0.0, 3.0, rng=7)
    np.testing.assert_array_equal(x1, x2)


@pytest.mark.parametrize(
    "kwargs,exc",
    [
        (dict(loc=np.nan), ValueError), (dict(loc=np.inf), ValueError),
        (dict(scale=0.0), ValueError), (dict(scale=-1.0), ValueError),
        (dict(scale=np.nan), ValueError), (dict(lower=1.0, upper=1.0), ValueError),
        (dict(lower=np.nan), ValueError), (dict(lower=np.inf, upper=np.inf), ValueError),
        (dict(loc="x"), TypeError), (dict(loc=[1, "x"]), TypeError),
        (dict(size=-1), ValueError), (dict(size=1.5), TypeError), (dict(rng="seed"), TypeError),
    ],
)
def test_truncated_normal_bad_inputs(kwargs, exc):
    args = dict(loc=0.0, scale=1.0, lower=-1.0, upper=1.0, size=3, rng=0)
    args.update(kwargs)
    with pytest.raises(exc):
        bndp.truncated_normal(**args)


# ---------------------------------------------------------------------------------------
# bounded Laplace
# ---------------------------------------------------------------------------------------

def _bl_cdf_ref(x, q, b, lo, hi):
    """CDF of Laplace(q, b) restricted to [lo, hi] via SciPy's Laplace law."""
    d = stats.laplace(loc=q, scale=b)
    return (d.cdf(x) - d.cdf(lo)) / (d.cdf(hi) - d.cdf(lo))


@pytest.mark.parametrize("q,b,lo,hi", [
    (2.0, 0.7, -5.0, 5.0), (0.0, 1.0, 0.0, 10.0), (10.0, 0.25, 0.0, 10.0),
    (5.0, 1.6115601044179806, 0.0, 10.0), (0.3, 100.0, 0.0, 1.0), (1.0, 3.0, 0.0, 1.0),
])
def test_bounded_laplace_ks(q, b, lo, hi):
    x = bounded_laplace_draws(q, b, lo, hi)
    assert (x >= lo).all() and (x <= hi).all() and np.isfinite(x).all()
    assert _ks(x, lambda t: _bl_cdf_ref(t, q, b, lo, hi)) > 1e-3


def bounded_laplace_draws(q, b, lo, hi, n=N, seed=11):
    from bndp._core import fill as _fill

    out = np.empty(n)
    _fill.bl_fill(np.random.default_rng(seed), q, b, lo, hi, out)
    return out


def test_bounded_laplace_huge_scale_is_uniform_to_first_order():
    # b = 1e9 on [0, 1]: the textbook p = F(l) + U (F(u) - F(l)) loses ~5e-8 here
    x = bounded_laplace_draws(0.3, 1e9, 0.0, 1.0)
    assert _ks(x, stats.uniform(0, 1).cdf) > 1e-3


# fixed-U quantiles (50-digit reference) of the inverse CDF
FIXED_U = [
    (2, 0.7, -5, 5, [-5, 0.8687034693020959, 1.6376254179417679, 1.9951820219422297,
                     2.3464424431782175, 3.0845552561807638, 5]),
    (0, 1, 0, 10, [0, 0.10535547123390916, 0.35665548701526418, 0.69310178166072844,
                   1.203866876767012, 2.3021765770801732, 10]),
    (5, 1.6115601044179806, 0, 10, [0, 2.6726642716013418, 4.2243396633894779, 5,
                                     5.7756603366105218, 7.3273357283986585, 10]),
    (0.3, 1e9, 0, 1, [0, 0.099999999996000006, 0.29999999995799999, 0.49999999992,
                      0.69999999992199996, 0.89999999996400002, 1]),
    (10, 0.25, 0, 10, [0, 9.4243537267514886, 9.699006798918516, 9.8267132048600137,
                       9.9108312640153169, 9.9736598710855434, 10]),
]


@pytest.mark.parametrize("q,b,lo,hi,ref", FIXED_U)
def test_bounded_laplace_fixed_u_quantiles(q, b, lo, hi, ref):
    u = np.array([0, 0.1, 0.3, 0.5, 0.7, 0.9, 1])
    f = np.float64
    got = bounded_laplace_eval(2, u, f(q), f(b), f(lo), f(hi))
    np.testing.assert_allclose(got, ref, rtol=0, atol=5e-16 * max(abs(lo), abs(hi), 1))
    # and the CDF inverts it
    np.testing.assert_allclose(bounded_laplace_eval(1, got[1:-1], f(q), f(b), f(lo), f(hi)),
                               u[1:-1], atol=1e-14)
