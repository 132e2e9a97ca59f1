"""The scalar calibrations return the same doubles whatever path they take.

``bounded_laplace_scale`` and ``bounded_gaussian_sigma`` check plain numbers in floats and
call the compiled root finder directly (their per-call time is mostly that Python). These
tests pin a few results to the last bit (float hex), for plain floats, Python ints, NumPy
scalars, the half-line, a sensitivity above the width, delta > 0 and the ends of the range,
and check the scalar path against the array and box paths bit for bit."""

import math

import numpy as np
import pytest

from bndp import calibrate
from bndp.calibrate.bounded import check_bounded_laplace

LAPLACE = [
    # (epsilon, sensitivity, lower, upper, delta), b* as float hex
    ((1.0, 1.0, 0, 10, 0.0), "0x1.9c8f33f8037aap+0"),
    ((1.0, 1.0, 0.0, 10.0, 0.0), "0x1.9c8f33f8037aap+0"),
    ((0.1, 0.5, -5.0, 5.0, 0.0), "0x1.33c1f07d27e2fp+3"),
    ((1e-12, 1.0, 0.0, 10.0, 0.0), "0x1.ba60d337ffcadp+40"),
    ((0.5, 1e-09, 0.0, 10.0, 0.0), "0x1.e93a9348022ddp-29"),
    ((1.0, 1.0, 1e300, 1.5e300, 0.0), "0x1.9cd3b50cc4128p+0"),
    ((2.5, 11.0, 0.0, 10.0, 0.0), "0x1.0000000000000p+2"),      # sensitivity > width
    ((10.0, 3.0, 0.0, math.inf, 0.0), "0x1.4a13e74261ebep-2"),    # half-line
    ((1.0, 1.0, -math.inf, 0.0, 0.0), "0x1.9cd3b50cc4128p+0"),
    ((1.0, 1.0, -1e308, 1e308, 0.0), "0x1.9cd3b50cc4128p+0"),    # the width overflows
    ((1e5, 1e-09, -5.0, 5.0, 0.0), "0x1.684a5c148a2c7p-47"),
    ((700.0, 1e-09, 0, 10, 0.0), "0x1.928173e7edad3p-40"),
    ((np.int64(2), 1, 0.0, 1e-200, 0.0), "0x1.87e92154ef7acp-666"),
    ((np.int64(2), 1, np.float64(0.0), np.int32(120), 0.0), "0x1.65190a52dabd4p-1"),
    ((1.0, 1.0, 0.0, 10.0, 1e-09), "0x1.9c8f33efe17f2p+0"),
    ((0.0, 1.0, 0.0, 10.0, 0.5), "0x1.3a8dc12d3dcccp+1"),
]

GAUSSIAN = [
    # (epsilon, sensitivity, lower, upper), sigma* as float hex
    ((1.0, 1.0, 0, 10), "0x1.cda3b5d7d12ddp+1"),
    ((1.0, 1.0, 0.0, 10.0), "0x1.cda3b5d7d12ddp+1"),
    ((0.1, 0.5, -5.0, 5.0), "0x1.104bccc2ba9fcp+3"),
    ((1e-12, 1.0, 0.0, 10.0), "0x1.d8c6bac5083bap+21"),
    ((0.5, 1e-09, 0.0, 10.0), "0x1.289570dc5a396p-13"),
    ((1.0, 1.0, 1e300, 1.5e300), "0x1.ba66ec32acb71p+497"),
    ((2.5, 11.0, 0.0, 10.0), "0x1.10c293726752cp+3"),
    ((1e5, 1e-09, -5.0, 5.0), "0x1.538c070cb59adp-22"),
    ((1e-300, 1e-09, 0, 10), "0x1.00444244f34f9p+485"),
    ((700.0, 1e-09, 0.0, 1e-200), "0x1.d62bc3509bc35p-36"),
    ((np.float32(0.3), np.float64(2.0), np.float64(0.0), np.int32(120)),
     "0x1.f1c3b932ef1d4p+4"),
]


@pytest.mark.parametrize("args, expected", LAPLACE)
def test_bounded_laplace_scale_pinned(args, expected):
    eps, dq, lo, hi, delta = args
    b = calibrate.bounded_laplace_scale(eps, dq, lo, hi, delta=delta)
    assert type(b) is float
    assert b.hex() == expected
    check_bounded_laplace(eps, dq, lo, hi, delta=delta)       # the same checks pass


@pytest.mark.parametrize("args, expected", GAUSSIAN)
def test_bounded_gaussian_sigma_pinned(args, expected):
    s = calibrate.bounded_gaussian_sigma(*args)
    assert type(s) is float
    assert s.hex() == expected


def _grid():
    rng = np.random.default_rng(20261128)
    for _ in range(60):
        yield (float(rng.uniform(0.01, 5.0)), float(rng.uniform(0.01, 20.0)),
               float(rng.uniform(-100.0, 100.0)), float(rng.uniform(0.1, 200.0)))


def test_bounded_laplace_scalar_path_equals_array_path():
    for eps, dq, lo, w in _grid():
        for delta in (0.0, 1e-6):
            b = calibrate.bounded_laplace_scale(eps, dq, lo, lo + w, delta=delta)
            arr = calibrate.bounded_laplace_scale(np.array([eps]), dq, lo, lo + w, delta=delta)
            assert b.hex() == float(arr[0]).hex()
            # a 0-d array takes the broadcasting path and returns a float
            zero_d = calibrate.bounded_laplace_scale(np.array(eps), dq, lo, lo + w, delta=delta)
            assert float(zero_d).hex() == b.hex()


def test_bounded_gaussian_scalar_path_equals_box_and_array_paths():
    for eps, dq, lo, w in _grid():
        s = calibrate.bounded_gaussian_sigma(eps, dq, lo, lo + w)
        box = calibrate.bounded_gaussian_sigma(eps, dq, [lo], [lo + w])
        arr = calibrate.bounded_gaussian_sigma(np.array([eps, eps]), dq, lo, lo + w)
        assert s.hex() == box.hex() == float(arr[0]).hex() == float(arr[1]).hex()


@pytest.mark.parametrize("call, exc, match", [
    (lambda: calibrate.bounded_laplace_scale(1.0, 1.0, -math.inf, math.inf), ValueError,
     "cannot both be infinite"),
    (lambda: calibrate.bounded_laplace_scale(1.0, 1.0, math.nan, 1.0), ValueError,
     "`lower` must be finite or -inf; got nan"),
    (lambda: calibrate.bounded_laplace_scale(True, 1.0, 0.0, 10.0), TypeError, "not a bool"),
    (lambda: calibrate.bounded_laplace_scale(1.0, 1.0, 0.0, 10.0, delta=1.0), ValueError,
     r"`delta` must be in \[0, 1\)"),
    (lambda: calibrate.bounded_laplace_scale(0.0, 1.0, 0.0, 10.0), ValueError, "epsilon"),
    (lambda: calibrate.bounded_gaussian_sigma(1.0, math.nan, 0.0, 10.0), ValueError,
     "`sensitivity` must be finite and > 0; got nan"),
    (lambda: calibrate.bounded_gaussian_sigma(1.0, 1.0, 0.0, math.inf), ValueError,
     "`upper` must be finite; got inf"),
    (lambda: calibrate.bounded_gaussian_sigma(1e-300, 1.0, 0.0, 1e-200), ValueError,
     "outside the representable range"),
    (lambda: calibrate.bounded_gaussian_sigma(1.0, 1.0, 10, 0), ValueError,
     "`lower` must be < `upper`"),
])
def test_refusals_unchanged(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
