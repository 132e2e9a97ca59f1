"""Concrete claims of the documentation, checked against the code so that the two cannot
drift apart: the grid step rule of docs/threat_model.md (evaluated here as written there,
and compared with the step of the plan each mechanism builds), and the README's statements
on which bounds may be infinite and which epsilon is refused."""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest

import bndp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return " ".join(f.read().split())


def documented_step(mechanism: str, epsilon: float, sensitivity: float, lower: float,
                    upper: float, delta: float = 0.0) -> float:
    """The grid step of docs/threat_model.md ("The utility cost of the grid"), steps 1-4."""
    dq, w = sensitivity, upper - lower
    # 1. the target, capped so that the grid holds at most 2^21 steps per sensitivity
    t = epsilon - math.log1p(-delta) if mechanism == "laplace" else epsilon
    top = math.ceil(math.log2(dq)) - 21          # the smallest 2^top >= dq / 2^21
    t = min(t, dq / (16 * 2.0 ** top))
    # 2. the largest power of two below min(dq / (16 T), dq, width / 128)
    gamma = 2.0 ** math.floor(math.log2(min(dq / (16 * t), dq, w / 128)))
    # 3. halved while min(dq, width) / gamma is neither whole nor at least 256
    for _ in range(8):
        r = min(dq, w) / gamma
        if r == math.floor(r) or r >= 256:
            break
        gamma /= 2
    # 4. far from 0: at least ulp(max(|lower|, |upper|)), twice that if lower is not a
    # multiple of it
    ulp = float(np.spacing(max(abs(lower), abs(upper))))
    if lower / max(ulp, gamma) != math.floor(lower / max(ulp, gamma)):
        ulp *= 2
    return max(gamma, ulp)


CASES = [
    # the examples of the page
    ("laplace", 0.25, 1.0, 0.0, 50.0),
    ("laplace", 0.5, 0.5, 0.0, 8.0),
    ("laplace", 1.0, 1.0, 0.0, 120.0),
] + [
    (mech, eps, dq, lo, hi)
    for mech in ("laplace", "gaussian")
    for eps in (0.1, 0.25, 1.0, 3.0)
    for dq, lo, hi in ((1.0, 0.0, 50.0), (0.5, 0.0, 8.0), (1.0, 0.0, 3.0), (3.0, -10.0, 7.0),
                       (0.01, 0.0, 1.0), (7.0, 100.0, 1100.0))
] + [
    # a target above the cap (served by the cap's law), bounds that coarsen the grid
    ("laplace", 3e5, 1.0, 0.0, 10.0),
    ("laplace", 1.0, 1.0, 1e15, 1e15 + 1000.0),
    ("gaussian", 1.0, 1.0, 1e15 + 0.125, 1e15 + 1000.0),
    # (lower not a multiple of the ulp of the upper bound: twice that ulp, 1/4)
    ("laplace", 1.0, 1.0, 2.0 ** 49 - 0.0625, 2.0 ** 49 + 1000.0),
]


@pytest.mark.parametrize("mechanism,epsilon,sensitivity,lower,upper", CASES)
def test_grid_step_is_the_documented_rule(mechanism, epsilon, sensitivity, lower, upper):
    cls = bndp.BoundedLaplace if mechanism == "laplace" else bndp.BoundedGaussian
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # (the coarse grids' warning)
        m = cls(epsilon, sensitivity=sensitivity, lower=lower, upper=upper)
    assert m.exact_plan.gamma == documented_step(mechanism, epsilon, sensitivity, lower, upper)


def test_grid_step_examples_of_the_page():
    assert documented_step("laplace", 0.25, 1.0, 0.0, 50.0) == 0.25
    assert documented_step("laplace", 0.5, 0.5, 0.0, 8.0) == 0.0625
    assert bndp.BoundedLaplace(0.25, sensitivity=1.0, lower=0, upper=50).exact_plan.gamma == 0.25
    assert bndp.BoundedLaplace(0.5, sensitivity=0.5, lower=0, upper=8).exact_plan.gamma == 0.0625
    text = _read("docs", "threat_model.md")
    assert "`[0, 50]` at epsilon 0.25 (sensitivity 1, Laplace) has `gamma = 1/4`" in text
    assert "`[0, 8]` with sensitivity 0.5 at epsilon 0.5 has `gamma = 1/16`" in text
    assert ("the largest power of two `<= min(sensitivity / (16 T), sensitivity, "
            "(upper - lower) / 128)`") in text


def test_grid_step_coarsened_far_from_zero_warns():
    with pytest.warns(RuntimeWarning, match="coarser grid"):
        m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=1e15, upper=1e15 + 1000.0)
    assert m.exact_plan.gamma == 0.125 > 1.0 / 16
    with pytest.warns(RuntimeWarning, match="coarser grid"):
        m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=2.0 ** 49 - 0.0625,
                                upper=2.0 ** 49 + 1000.0)
    assert m.exact_plan.gamma == 0.25


def test_readme_infinite_bounds_claims():
    text = _read("README.md")
    assert "accepts **one** infinite bound" in text
    # the Laplace mechanism: one infinite bound, the half-line's law
    for lo, hi in ((0.0, math.inf), (-math.inf, 0.0)):
        out = bndp.sample(np.array([1.0, 5.0]), mechanism="laplace", epsilon=1.0,
                          sensitivity=1.0, lower=lo, upper=hi, rng=1)
        assert np.all((out >= lo) & (out <= hi))
        m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=lo, upper=hi)
        assert type(m.exact_plan).__name__ == "ConstrainedPlan"
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=math.inf, mode="continuous")
    assert m.scale == pytest.approx(1.0 / math.log((1.0 + math.e) / 2.0), rel=1e-12)
    with pytest.raises(ValueError, match="cannot both be infinite"):
        bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=-math.inf, upper=math.inf)
    bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=-math.inf, upper=math.inf)
    # finite bounds only: the Gaussian mechanism and per-row bounds
    with pytest.raises(ValueError, match="must be finite"):
        bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=math.inf)
    with pytest.raises(ValueError, match="must be finite"):
        bndp.sample(np.array([1.0, 2.0]), mechanism="laplace", epsilon=1.0, sensitivity=1.0,
                    lower=np.zeros(2), upper=np.array([10.0, math.inf]))


def test_readme_epsilon_zero_claim():
    text = _read("README.md")
    assert "(and `epsilon = 0`, except for the Laplace mechanism with `delta > 0`)" in text
    bndp.BoundedLaplace(0.0, sensitivity=1.0, lower=0, upper=10, delta=0.1)
    for make in (lambda: bndp.BoundedLaplace(0.0, sensitivity=1.0, lower=0, upper=10),
                 lambda: bndp.BoundedGaussian(0.0, sensitivity=1.0, lower=0, upper=10),
                 lambda: bndp.BoundedLaplace(-1.0, sensitivity=1.0, lower=0, upper=10,
                                             delta=0.1)):
        with pytest.raises(ValueError, match="epsilon"):
            make()
