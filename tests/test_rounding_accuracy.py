"""Rounding and accuracy (issue 14): reported quantities checked against exact (rational or
50-digit mpmath) values; where a value cannot be exact it must be on the safe side."""

import math

import mpmath
import numpy as np
import pytest

from bndp.calibrate import gaussian_delta, gaussian_sigma


def _delta_exact(sigma, eps, dq):
    with mpmath.workdps(50):
        s, e, d = mpmath.mpf(sigma), mpmath.mpf(eps), mpmath.mpf(dq)
        return (mpmath.ncdf(d / (2 * s) - e * s / d)
                - mpmath.exp(e) * mpmath.ncdf(-d / (2 * s) - e * s / d))


def test_gaussian_delta_issue_case_is_not_under_reported():
    # under-reported by 6.6e-10 relative before (mean-value midpoint where
    # erfcx(a) - erfcx(sqrt(a^2 + eps)) cancels)
    sigma, eps, dq = 202.3503779514213, 1.2733014715700868e-5, 1.1030641048772939e-3
    v = gaussian_delta(sigma, eps, dq)
    ex = _delta_exact(sigma, eps, dq)
    assert v >= ex
    assert float((v - ex) / ex) < 1e-12


def test_gaussian_delta_never_under_reports():
    rng = np.random.default_rng(14)
    worst = 0.0
    n = 0
    for _ in range(150):
        ratio = 10 ** rng.uniform(3.5, 6.5)         # sigma/dq where the old form cancelled
        eps = 10 ** rng.uniform(-9, -2)
        dq = 10 ** rng.uniform(-3, 3)
        v = gaussian_delta(ratio * dq, eps, dq)
        ex = _delta_exact(ratio * dq, eps, dq)
        if ex < 1e-290:
            continue
        n += 1
        rel = float((v - ex) / ex)
        assert rel >= 0.0
        worst = max(worst, rel)
    assert n > 100
    assert worst < 1e-11
    # the array path gives the same values
    s = np.array([202.3503779514213, 3.0])
    out = gaussian_delta(s, 1.2733014715700868e-5, 1.1030641048772939e-3)
    assert out[0] == gaussian_delta(202.3503779514213, 1.2733014715700868e-5,
                                    1.1030641048772939e-3)


def test_gaussian_sigma_refuses_overflow_and_unevaluable_methods():
    # sigma above the largest double: ValueError naming the arguments, not inf
    with pytest.raises(ValueError, match="`epsilon`.*`sensitivity`"):
        gaussian_sigma(1e-300, 1e10, delta=1e-300)
    with pytest.raises(ValueError, match="`epsilon`.*`sensitivity`"):
        gaussian_sigma(np.array([1.0, 1e-300]), 1e10, delta=1e-300)
    # zhao1 cannot be evaluated at eps = delta = 1e-300 (was RuntimeError)
    with pytest.raises(ValueError, match="zhao1"):
        gaussian_sigma(1e-300, 1.0, delta=1e-300, calibration="zhao1")
    # while the documented range of "optimal" works, certified
    s = gaussian_sigma(1e-300, 1.0, delta=1e-300)
    assert math.isfinite(s) and gaussian_delta(s, 1e-300, 1.0) <= 1e-300
