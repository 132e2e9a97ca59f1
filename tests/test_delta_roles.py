"""The two bounded Laplace deltas at a given epsilon have distinct roles:
``bndp.verify.bounded_laplace_profile`` is the exact privacy profile (the hockey-stick
divergence maximised over neighbouring true values) and
``bndp.calibrate.bounded_laplace_delta_bound`` is Theorem 3.5's sufficient delta of Holohan
et al., an upper bound on it. Both are checked against an independent computation: the
density written out here and integrated with scipy's quad, maximised over the true value."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize

from bndp.calibrate import bounded_laplace_delta_bound
from bndp.verify import bounded_laplace_profile


def _hockey_stick(b, eps, lo, hi, q, q2):
    """int_lo^hi (p_q(x) - e^eps p_q2(x))_+ dx for the Laplace(q, b) law truncated to
    [lo, hi], by quadrature with the kinks at q and q2 as breakpoints."""
    def mass(m):
        return 1.0 - 0.5 * (math.exp(-(m - lo) / b) + math.exp(-(hi - m) / b))

    c, c2 = mass(q), mass(q2)

    def f(x):
        d = (math.exp(-abs(x - q) / b) / c - math.exp(eps) * math.exp(-abs(x - q2) / b) / c2)
        return max(d, 0.0) / (2 * b)

    pts = sorted({q, q2})
    return integrate.quad(f, lo, hi, points=pts, limit=200, epsabs=1e-14, epsrel=1e-12)[0]


def _profile_by_search(b, eps, dq, lo, hi):
    """max over true values q of the pair (q, q + dq) (and the mirror pair): a grid, then
    a bounded scalar search around the best grid point. A lower bound on the supremum."""
    def neg(q):
        return -max(_hockey_stick(b, eps, lo, hi, q, q + dq),
                    _hockey_stick(b, eps, lo, hi, q + dq, q))

    grid = np.linspace(lo, hi - dq, 81)
    vals = [-neg(q) for q in grid]
    i = int(np.argmax(vals))
    a, z = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = optimize.minimize_scalar(neg, bounds=(a, z), method="bounded",
                                   options={"xatol": 1e-10})
    return max(max(vals), -res.fun)


CASES = [  # scale b, epsilon, sensitivity, lower, upper
    (1.5, 0.5, 1.0, 0.0, 10.0),
    (1.0, 1.0, 1.0, 0.0, 10.0),
    (0.8, 0.2, 2.0, -3.0, 5.0),
    (3.0, 0.1, 0.5, 0.0, 2.0),
]


@pytest.mark.parametrize("b, eps, dq, lo, hi", CASES)
def test_profile_is_exact_and_the_theorem_3_5_delta_bounds_it(b, eps, dq, lo, hi):
    exact = _profile_by_search(b, eps, dq, lo, hi)
    profile = bounded_laplace_profile(b, eps, dq, lo, hi)
    bound = bounded_laplace_delta_bound(b, eps, dq, lo, hi)
    assert exact > 1e-3
    # the profile is the exact delta: a certified upper bound, within 1e-6 of the searched
    # supremum (which is below the supremum)
    assert exact * (1 - 1e-9) <= profile <= exact * (1 + 1e-6)
    # Theorem 3.5's delta is an upper bound on it, and a different (larger) number
    assert bound >= profile
    assert bound > 1.2 * profile
    # the closed form of Theorem 3.5, written out: 1 - e^(eps - dq/b) / Delta C(b)
    def mass(m):
        return 1.0 - 0.5 * (math.exp(-(m - lo) / b) + math.exp(-(hi - m) / b))
    assert bound == pytest.approx(1 - math.exp(eps - dq / b) * mass(lo) / mass(lo + dq),
                                  rel=1e-12)


def test_smaller_shifts_are_not_worse():
    """The profile's supremum is at |q - q'| = sensitivity: a shift of half of it gives
    less (checked on the first case)."""
    b, eps, dq, lo, hi = CASES[0]
    half = _profile_by_search(b, eps, dq / 2, lo, hi)
    assert half < bounded_laplace_profile(b, eps, dq, lo, hi)
