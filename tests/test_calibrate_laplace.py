"""Bounded Laplace scale b* (Holohan et al., Theorem 3.5 / Algorithm 1)."""

import math

import numpy as np
import pytest
from scipy import optimize

import bndp
from bndp.calibrate import (bounded_laplace_delta_bound, bounded_laplace_epsilon,
                            bounded_laplace_log_delta_c, bounded_laplace_scale)

from .conftest import sweep

# (dQ, l, u, eps, delta, b*) from a 50-digit reference computation of the fixed point
REFERENCE = [
    (1, 0, 10, 1, 0, 1.6115601044179806),
    (1, 0, 10, 0.1, 0, 18.772741302489432),
    (1, 0, 10, 0.5, 0.1, 2.8592995153951049),
    (1, 0, 2, 1, 0, 1.4133426977378729),
    (0.5, 0, 1, 1, 0, 0.70667134886893648),
    (0.5, 0, 1, 0.1, 0, 7.458107132324153),
    (0.1, 0, 1, 1, 0, 0.16115601044179807),
    (0.1, 0, 1, 0.01, 0, 18.978540825888667),
    (2, -5, 5, 2, 0, 1.3940041927417231),
    (1, 0, 100, 0, 0.1, 18.493242007617887),
    (1, 0, 1e10, 1, 0, 1.6126053959051822),
    (1, 0, 1e10, 0.125, 0, 15.515457293925589),
    (0.5, 0, 1, 1e-8, 0, 74999999.958333332),
    (0.5, 0, 1, 1e-12, 0, 749999999999.95835),
    (1, 0, 1, 1, 0, 1.0),
    (1, 0, 1, 0.5, 0.2, 1.3828512999703078),
]


def _log_dc_ref(b, dq, w):
    """Independent ln dC: log of the ratio of normalisers C_{l+dQ}/C_l (Lemma 3.2) using the
    expm1 form of C_q (fine for moderate b/w, where it is used)."""
    c_l = -0.5 * (np.expm1(0.0) + np.expm1(-w / b))
    c_s = -0.5 * (np.expm1(-dq / b) + np.expm1(-(w - dq) / b))
    return math.log(c_s / c_l)


def _f_exact(b, dq, w, eps, delta):
    """f(b) = dQ/(eps - ln dC(b) - ln(1 - delta)) evaluated with 40 significant digits."""
    import mpmath

    with mpmath.workdps(40):
        b, dq, w = mpmath.mpf(b), mpmath.mpf(dq), mpmath.mpf(w)
        c_l = 1 - (1 + mpmath.exp(-w / b)) / 2
        c_s = 1 - (mpmath.exp(-dq / b) + mpmath.exp(-(w - dq) / b)) / 2
        den = mpmath.mpf(eps) - mpmath.log(c_s / c_l) - mpmath.log(1 - mpmath.mpf(delta))
        return dq / den


@pytest.mark.parametrize("dq,l,u,eps,delta,ref", REFERENCE)
def test_reference_values(dq, l, u, eps, delta, ref):
    b = bounded_laplace_scale(eps, dq, l, u, delta=delta)
    assert isinstance(b, float)
    assert b == pytest.approx(ref, rel=1e-13)
    assert b >= ref * (1 - 4e-16)  # conservative: never below the exact fixed point


def test_half_line_closed_form():
    for eps in (0.01, 0.1, 1.0, 3.0, 10.0):
        for delta in (0.0, 1e-6, 0.1):
            L = eps - math.log1p(-delta)
            ref = 1.0 / (np.logaddexp(0.0, L) - math.log(2.0))
            assert bounded_laplace_scale(eps, 1.0, 0.0, np.inf, delta=delta) == pytest.approx(ref, rel=1e-13)
            assert bounded_laplace_scale(eps, 1.0, -np.inf, 5.0, delta=delta) == pytest.approx(ref, rel=1e-13)


def test_equals_b0_rounded_up_when_sensitivity_is_the_width():
    # Cor. 4.5: b* = dQ/L exactly (dC == 1). The returned double is fl(dQ/L) rounded up so
    # that b L >= dQ holds in exact arithmetic (fl(dQ/L) alone fell below dQ/L in about half
    # of these configurations): checked with exact rationals for delta = 0 (L = eps) and at
    # 50 digits for delta > 0. It stays within a few ulps of dQ/L.
    import mpmath
    from fractions import Fraction
    rng = np.random.default_rng(5)
    below = 0
    for _ in range(200):
        lo = rng.uniform(-100, 100)
        w = 10 ** rng.uniform(-3, 3)
        eps = 10 ** rng.uniform(-3, 1)
        delta = rng.choice([0.0, 10 ** rng.uniform(-9, -1)])
        hi = lo + w
        w = hi - lo  # the width as the library sees it (exact in floating point)
        b0 = w / (eps - math.log1p(-delta))
        b = bounded_laplace_scale(eps, w, lo, hi, delta=delta)
        # a sensitivity above the width acts as the width
        assert bounded_laplace_scale(eps, 3 * w, lo, hi, delta=delta) == b
        assert b0 <= b <= b0 * (1 + 5 * 2.0 ** -52)
        if delta == 0.0:
            assert Fraction(b) * Fraction(eps) >= Fraction(w)
            # and it is the smallest such double
            assert Fraction(math.nextafter(b, 0.0)) * Fraction(eps) < Fraction(w)
            below += Fraction(b0) * Fraction(eps) < Fraction(w)
        else:
            with mpmath.workdps(50):
                L = mpmath.mpf(eps) - mpmath.log1p(-mpmath.mpf(delta))
                assert mpmath.mpf(b) * L >= mpmath.mpf(w)
    assert below > 10          # the defect this guards against was frequent


def test_against_independent_brentq_and_conservative():
    rng = np.random.default_rng(11)
    n = sweep(2000, 300)
    for _ in range(n):
        w = 10 ** rng.uniform(-2, 3)
        dq = w * rng.uniform(0.01, 0.99)
        eps = 10 ** rng.uniform(-2, 1.3)
        delta = rng.choice([0.0, 0.0, 10 ** rng.uniform(-10, -1)])
        lo = rng.uniform(-50, 50)
        hi = lo + w
        w = hi - lo  # the width as the library sees it
        L = eps - math.log1p(-delta)
        f = lambda b: b - dq / (L - _log_dc_ref(b, dq, w))  # noqa: E731
        b0 = dq / L
        ref = optimize.brentq(f, b0, 2.0 * b0 + 1e-300, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
        b = bounded_laplace_scale(eps, dq, lo, hi, delta=delta)
        assert b == pytest.approx(ref, rel=1e-12)
        # Theorem 3.5's inequality holds at the returned scale in exact arithmetic
        # (40-digit evaluation of the double inputs): conservative end plus rounding margin
        assert _f_exact(b, dq, w, eps, delta) <= b
        assert b0 <= b <= 2 * b0


def test_small_epsilon_stays_accurate():
    # textbook dC form under-noises here (12 % at 1e-8); the limit is dQ (2 - dQ/W)/eps
    for eps in (1e-6, 1e-8, 1e-10, 1e-12, 1e-300):
        b = bounded_laplace_scale(eps, 0.5, 0.0, 1.0)
        assert b == pytest.approx(0.5 * 1.5 / eps, rel=1e-5)
        assert b > 0.5 / eps


def test_exact_loss_at_b_star_and_violation_below():
    # for delta = 0 the bound is tight: eps(b*) == eps, eps(b) > eps for b < b*
    for dq, w, eps in [(1, 10, 1), (0.3, 1, 0.2), (2, 3, 5)]:
        b = bounded_laplace_scale(eps, dq, 0.0, w)
        assert bounded_laplace_epsilon(b, dq, 0.0, w) <= eps
        assert bounded_laplace_epsilon(b, dq, 0.0, w) == pytest.approx(eps, rel=1e-13)
        assert bounded_laplace_epsilon(b * (1 - 1e-9), dq, 0.0, w) > eps


def test_epsilon_delta_relations_table():
    # (b, dQ, W, ln dC, eps(b; delta=0), delta(b; eps=0.5)) to 50 digits
    table = [
        (1.0, 1.0, 10, 0.48984991057947986, 1.4898499105794799, 0.62836753506228738),
        (2.0, 1.0, 10, 0.33055318158160549, 0.83055318158160549, 0.28147385195739143),
        (0.5, 0.5, 1, 0.37988549304172248, 1.3798854930417225, 0.58516959006946837),
        (10.0, 0.1, 1, 0.008959072523595179, 0.01895907252359518, 0.0),
    ]
    for b, dq, w, ldc, e, d in table:
        assert bounded_laplace_log_delta_c(b, dq, 0, w) == pytest.approx(ldc, rel=1e-14)
        assert bounded_laplace_epsilon(b, dq, 0, w) == pytest.approx(e, rel=1e-14)
        assert bounded_laplace_delta_bound(b, 0.5, dq, 0, w) == pytest.approx(d, rel=1e-13, abs=1e-16)


def test_round_trip_epsilon_delta():
    b = bounded_laplace_scale(0.5, 1.0, 0.0, 10.0, delta=0.1)
    assert bounded_laplace_delta_bound(b, 0.5, 1.0, 0.0, 10.0) == pytest.approx(0.1, abs=1e-14)
    assert bounded_laplace_epsilon(b, 1.0, 0.0, 10.0, 0.1) == pytest.approx(0.5, rel=1e-13)


def test_broadcasting_matches_scalar_calls():
    eps = np.array([[0.1], [1.0], [3.0]])
    dq = np.array([0.5, 1.0, 2.0, 4.0])
    out = bounded_laplace_scale(eps, dq, 0.0, 10.0)
    assert out.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            assert out[i, j] == bounded_laplace_scale(float(eps[i, 0]), float(dq[j]), 0.0, 10.0)
    assert bounded_laplace_scale(np.float32(1.0), 1, 0, 10) == bounded_laplace_scale(1.0, 1.0, 0.0, 10.0)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        (dict(epsilon=0.0, delta=0.0), ValueError, "epsilon"),
        (dict(epsilon=-1.0), ValueError, "epsilon"),
        (dict(epsilon=np.nan), ValueError, "epsilon"),
        (dict(epsilon=np.inf), ValueError, "epsilon"),
        (dict(delta=1.0), ValueError, "delta"),
        (dict(delta=-0.1), ValueError, "delta"),
        (dict(delta=np.nan), ValueError, "delta"),
        (dict(sensitivity=0.0), ValueError, "sensitivity"),
        (dict(sensitivity=-1.0), ValueError, "sensitivity"),
        (dict(sensitivity=np.inf), ValueError, "sensitivity"),
        (dict(lower=5.0, upper=5.0), ValueError, "lower"),
        (dict(lower=6.0, upper=5.0), ValueError, "lower"),
        (dict(lower=np.nan), ValueError, "lower"),
        (dict(lower=-np.inf, upper=np.inf), ValueError, "infinite"),
        (dict(epsilon="1"), TypeError, "epsilon"),
        (dict(epsilon=True), TypeError, "epsilon"),
        (dict(epsilon=None), TypeError, "epsilon"),
        (dict(epsilon=1 + 1j), TypeError, "epsilon"),
    ],
)
def test_bad_inputs(kwargs, exc, match):
    args = dict(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0, delta=0.0)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        bounded_laplace_scale(**args)


def test_mechanism_uses_calibrated_scale_and_is_immutable():
    m = bndp.BoundedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="continuous")
    assert m.scale == bounded_laplace_scale(1.0, 1.0, 0.0, 10.0)
    with pytest.raises(AttributeError):
        m.epsilon = 0.1
    assert eval("bndp." + repr(m)) == m
