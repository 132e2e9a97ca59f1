"""bndp.special.lambertw: both real branches against mpmath, including the branch point."""

import math

import mpmath as mp
import numpy as np
import pytest

from bndp.special import lambertw

X_BP = -0.36787944117144233  # the double nearest -1/e (1.2e-17 below it)


def _ref(x, k):
    with mp.workdps(50):
        return float(mp.lambertw(mp.mpf(float(x)), k).real)


def _relerr(got, x, k):
    ref = _ref(x, k)
    return abs(got - ref) / abs(ref)


@pytest.mark.parametrize("branch", [0, -1])
def test_near_branch_point_against_mpmath(branch):
    # x = -1/e + d for d from one ulp to 0.1; mpmath evaluates at the exact double x
    ds = np.concatenate([np.arange(1, 40) * 5.551115123125783e-17, np.logspace(-15, -1, 141)])
    xs = X_BP + ds
    got = lambertw(xs, branch)
    worst = max(_relerr(g, x, branch) for g, x in zip(got, xs))
    assert worst <= 1e-14, worst


def test_branch_point_value_and_scipy_gap():
    # scipy.special.lambertw returns nan at the double nearest -1/e; here both branches give -1
    assert lambertw(X_BP, 0) == -1.0
    assert lambertw(X_BP, -1) == -1.0
    # and W_-1 one ulp above the branch point is accurate (scipy: ~1e-4 relative error there
    # for x within 1e-10 of -1/e)
    x = X_BP + 1e-12
    assert _relerr(lambertw(x, -1), x, -1) <= 1e-14


def test_wide_range_against_mpmath():
    rng = np.random.default_rng(7)
    x0 = np.concatenate([-np.logspace(-300, math.log10(0.3678), 80),
                         np.logspace(-300, 300, 120), rng.uniform(-0.36, 5.0, 100)])
    g0 = lambertw(x0, 0)
    assert max(_relerr(g, x, 0) if x != 0 else 0.0 for g, x in zip(g0, x0)) <= 4e-16 * 8
    xm = -np.logspace(-300, math.log10(0.3678), 150)
    gm = lambertw(xm, -1)
    assert max(_relerr(g, x, -1) for g, x in zip(gm, xm)) <= 4e-16 * 8


def test_defining_identity_and_special_values():
    w = lambertw(np.array([0.5, 1.0, 10.0, 1e10]))
    # residual limited by the rounding of exp(w) (relative error ~ w ulp)
    assert np.allclose(w * np.exp(w), [0.5, 1.0, 10.0, 1e10], rtol=1e-14, atol=0)
    assert lambertw(0.0) == 0.0
    assert lambertw(0.0, -1) == -math.inf
    assert lambertw(math.inf) == math.inf
    assert lambertw(1.0) == pytest.approx(0.5671432904097838, rel=1e-16)  # omega constant
    # the constants of Theorem 1 of Croft et al.: a = -W0(-1/(2e)), b = -W-1(-1/(2e))
    assert -lambertw(-1 / (2 * math.e)) == pytest.approx(0.231960952986534, rel=1e-14)
    assert -lambertw(-1 / (2 * math.e), -1) == pytest.approx(2.678346990016661, rel=1e-14)


def test_shapes_and_types():
    assert isinstance(lambertw(1.0), float)
    out = lambertw(np.ones((2, 3)))
    assert out.shape == (2, 3) and out.dtype == np.float64


@pytest.mark.parametrize("x,branch", [
    (np.nextafter(X_BP, -1.0), 0), (np.nextafter(X_BP, -1.0), -1), (-1.0, 0), (0.5, -1),
    (math.nan, 0), (math.nan, -1),
])
def test_domain_errors(x, branch):
    with pytest.raises(ValueError):
        lambertw(x, branch)


def test_branch_errors():
    with pytest.raises(ValueError):
        lambertw(0.5, 1)
    with pytest.raises(TypeError):
        lambertw(0.5, 0.5)
    with pytest.raises(TypeError):
        lambertw(0.5, True)
    with pytest.raises(TypeError):
        lambertw("1", 0)


def test_against_scipy_to_a_few_ulps_away_from_the_branch_point():
    # where SciPy's lambertw is accurate (x at least 0.02 from -1/e; nearer, SciPy drifts by
    # several ulps where mpmath confirms the value here), both branches agree with it to a
    # few units in the last place (8: the bound of the mpmath comparison above)
    from scipy.special import lambertw as sc_lambertw
    rng = np.random.default_rng(12)
    x0 = np.concatenate([rng.uniform(X_BP + 0.02, 0.0, 200), np.logspace(-300, 300, 200),
                         -np.logspace(-300, -1, 100)])
    xm = np.concatenate([rng.uniform(X_BP + 0.02, -1e-3, 200), -np.logspace(-300, -3, 200)])
    for xs, k in ((x0, 0), (xm, -1)):
        got = lambertw(xs, k)
        want = sc_lambertw(xs, k).real
        ulps = np.abs(got - want) / np.spacing(np.abs(want))
        assert np.all(np.isfinite(want)) and float(ulps.max()) <= 8, (k, float(ulps.max()))
