"""The self-written inverse normal CDF (AS 241 split into central/tail parts) against SciPy
and mpmath, to a few ulps."""

import numpy as np
import pytest
from scipy import special

from bndp import _core

mpmath = pytest.importorskip("mpmath")

ULP = np.finfo(float).eps


def _mp_quantile_central(q):
    return float(mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(q)))


def _mp_quantile_log(logt):
    with mpmath.workdps(50):
        f = lambda t: mpmath.log(mpmath.ncdf(t)) - logt  # noqa: E731
        x0 = special.ndtri_exp(logt)
        return float(mpmath.findroot(f, x0))


def test_central_branch_matches_mpmath_to_few_ulps():
    rng = np.random.default_rng(0)
    qs = np.concatenate([rng.uniform(-0.425, 0.425, 300), 10.0 ** rng.uniform(-300, -0.4, 100),
                         -(10.0 ** rng.uniform(-300, -0.4, 100))])
    with mpmath.workdps(40):
        worst = max(abs(_core.ndtri_central(q) - _mp_quantile_central(q)) /
                    abs(_mp_quantile_central(q)) for q in qs)
    assert worst < 4 * ULP


def test_central_branch_keeps_relative_precision_near_the_median():
    # Phi^-1(1/2 + q) ~ q*sqrt(2 pi) for tiny q: a version taking p = 1/2 + q would return 0
    assert _core.ndtri_central(1e-300) == pytest.approx(1e-300 * np.sqrt(2 * np.pi), rel=1e-15)
    assert _core.ndtri_central(0.0) == 0.0


def test_tail_branch_matches_mpmath_to_few_ulps():
    rng = np.random.default_rng(1)
    logts = -np.concatenate([rng.uniform(-np.log(0.5), 740, 150), rng.uniform(740, 6e5, 30),
                             [1e6, 5e5, 1000.0, 745.0]])
    worst = 0.0
    for lt in logts:
        x = _core.ndtri_lower_log(lt)
        ref = _mp_quantile_log(lt)
        worst = max(worst, abs(x - ref) / abs(ref))
    assert worst < 8 * ULP


def test_tail_branch_agrees_with_scipy_where_scipy_is_exact():
    p = np.concatenate([np.logspace(-300, np.log10(0.074), 200), np.linspace(0.08, 0.5, 50)])
    ours = np.array([_core.ndtri_lower_log(np.log(v)) for v in p])
    ref = special.ndtri(p)
    rel = np.abs(ours - ref) / np.maximum(np.abs(ref), 1e-300)
    mask = np.abs(ref) > 1e-3
    assert rel[mask].max() < 8 * ULP
    assert np.abs(ours - ref)[~mask].max() < 1e-16


def test_normal_tail_table_matches_mpmath_to_few_ulps():
    # Phi(-z) as the sampler's per-row setup computes it: erf below 1/sqrt(2), the Taylor
    # table on [0.6875, 8.6); beyond, libm's erfc (there the tail < 4e-18 only enters as an
    # addend far below U*Z, so its relative accuracy is immaterial)
    rng = np.random.default_rng(3)
    z = np.concatenate([rng.uniform(0.0, 8.6, 1500), np.linspace(0.6, 8.599, 700)])
    worst = 0.0
    with mpmath.workdps(40):
        for v in z:
            ref = mpmath.ncdf(-mpmath.mpf(v))
            worst = max(worst, abs(float((_core.normal_tail(v) - ref) / ref)))
    assert worst < 6 * ULP
