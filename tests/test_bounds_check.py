"""One bounds checker (``bndp._validation.check_bounds``): every entry point taking an
interval ``[lower, upper]`` refuses the same bad bounds with the same error, and checks them
once per call."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

import bndp
from bndp import calibrate
from bndp._validation import check_bounds

INF = math.inf

#: entry points, each given (lower, upper): the ends they allow
FINITE = {
    "BoundedGaussian": lambda lo, hi: bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=lo,
                                                           upper=hi),
    "GeneralizedGaussian": lambda lo, hi: bndp.GeneralizedGaussian(1.0, sensitivity=1.0,
                                                                   lower=lo, upper=hi),
    "ClampedLaplace": lambda lo, hi: bndp.ClampedLaplace(1.0, sensitivity=1.0, lower=lo,
                                                         upper=hi),
}
HALF = {
    "BoundedLaplace": lambda lo, hi: bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=lo,
                                                         upper=hi),
    "bounded_laplace_scale": lambda lo, hi: calibrate.bounded_laplace_scale(1.0, 1.0, lo, hi),
    "bounded_laplace_log_delta_c": lambda lo, hi: calibrate.bounded_laplace_log_delta_c(
        1.0, 1.0, lo, hi),
}
LINE = {
    "ConstrainedLaplace": lambda lo, hi: bndp.ConstrainedLaplace(1.0, sensitivity=1.0,
                                                                 lower=lo, upper=hi),
    "truncated_normal": lambda lo, hi: bndp.truncated_normal(0.0, 1.0, lo, hi, rng=0),
}

ORDER = "`lower` must be < `upper`; got lower = 2.0, upper = 1.0"


def _refused(call, lo, hi) -> str:
    with pytest.raises(ValueError) as info:
        call(lo, hi)
    return str(info.value)


@pytest.mark.parametrize("name", list(FINITE) + list(HALF) + list(LINE))
def test_bounds_in_the_wrong_order_are_refused_alike(name):
    call = {**FINITE, **HALF, **LINE}[name]
    assert _refused(call, 2.0, 1.0) == ORDER
    assert _refused(call, 1.0, 1.0) == ORDER.replace("2.0", "1.0")


@pytest.mark.parametrize("name", list(FINITE))
def test_finite_ends(name):
    call = FINITE[name]
    assert _refused(call, -INF, 1.0) == "`lower` must be finite; got -inf"
    assert _refused(call, 0.0, INF) == "`upper` must be finite; got inf"
    assert _refused(call, math.nan, 1.0) == "`lower` must be finite; got nan"


@pytest.mark.parametrize("name", list(HALF) + list(LINE))
def test_half_line_ends(name):
    call = {**HALF, **LINE}[name]
    call(-INF, 1.0)
    call(0.0, INF)
    assert _refused(call, math.nan, 1.0) == "`lower` must be finite or -inf; got nan"
    assert _refused(call, INF, INF) == "`lower` must be finite or -inf; got inf"
    assert _refused(call, 0.0, -INF) == "`upper` must be finite or +inf; got -inf"
    if name in HALF:
        assert _refused(call, -INF, INF) == ("`lower` and `upper` cannot both be infinite: "
                                            "for noise on the whole line use bndp.Laplace")
    else:
        call(-INF, INF)


def test_array_bounds_name_the_index_not_the_values():
    lo, hi = np.array([0.0, 5.0, 0.0]), np.array([1.0, 4.0, 1.0])
    with pytest.raises(ValueError) as info:
        bndp.truncated_normal(0.0, 1.0, lo, hi, rng=0)
    assert str(info.value) == "`lower` must be < `upper`; got lower >= upper at index (1,)"
    for ends in ("finite", "half", "line"):
        with pytest.raises(ValueError, match=r"lower >= upper at index \(1,\)$"):
            check_bounds(lo, hi, ends=ends)
    with pytest.raises(ValueError, match="`ends` must be one of"):
        check_bounds(np.array([0.0, -INF]), np.array([1.0, 1.0]), ends="open")


def _check_bounds_calls(call) -> int:
    code = check_bounds.__code__
    calls = 0

    def prof(frame, event, arg):
        nonlocal calls
        if event == "call" and frame.f_code is code:
            calls += 1
    sys.setprofile(prof)
    try:
        call()
    finally:
        sys.setprofile(None)
    return calls


ROWS = np.arange(100.0)


@pytest.mark.parametrize("call", [
    lambda: bndp.BoundedLaplace(1.1, sensitivity=1.0, lower=0.0, upper=7.0),
    lambda: bndp.BoundedLaplace(1.1, sensitivity=1.0, lower=0.0, upper=INF),
    lambda: bndp.BoundedLaplace(1.1, sensitivity=1.0, lower=0.0, upper=7.0, mode="continuous"),
    lambda: bndp.ConstrainedLaplace(1.1, sensitivity=1.0, lower=0.0, upper=7.0),
    lambda: bndp.BoundedGaussian(1.1, sensitivity=1.0, lower=0.0, upper=7.0),
    lambda: bndp.BoundedGaussian(1.1, sensitivity=1.0, lower=[0.0, 0.0], upper=[7.0, 3.0]),
    lambda: bndp.BoundedGaussian(1.1, sensitivity=1.0, lower=[0.0, 0.0], upper=[7.0, 3.0],
                                 sigma_rule="tight"),
    lambda: bndp.BoundedGaussian(1.1, sensitivity=1.0, lower=0.0, upper=7.0,
                                 mode="continuous", sigma_rule="tight"),
    lambda: bndp.GeneralizedGaussian(1.1, sensitivity=1.0, lower=0.0, upper=7.0),
    lambda: bndp.GeneralizedGaussian(1.1, sensitivity=[1.0, 2.0], lower=[0.0, 1.0],
                                     upper=[7.0, 9.0]),
    lambda: bndp.ClampedLaplace(1.1, sensitivity=1.0, lower=0.0, upper=7.0),
    lambda: bndp.sample(3.0, mechanism="laplace", epsilon=1.3, sensitivity=1.0, lower=0.0,
                        upper=9.5, rng=0),
    lambda: bndp.sample(ROWS.copy(), mechanism="laplace", epsilon=1.3, sensitivity=1.0,
                        lower=ROWS - 1.0, upper=np.where(ROWS > 50, ROWS + 1.0, ROWS + 2.0),
                        rng=0),
    lambda: bndp.truncated_normal(0.0, 1.0, -1.0, 2.0, rng=0),
    lambda: calibrate.bounded_laplace_scale(1.0, 1.0, np.zeros(3), np.ones(3)),
])
def test_bounds_are_checked_at_most_once_a_call(call):
    assert _check_bounds_calls(call) <= 1
