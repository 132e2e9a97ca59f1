"""The short path of the grid-law mechanisms (one value, a small 1-D array, ``bndp.sample``
with scalar bounds; issue 23, "a long call path"): the same draws as the general path (the
row kernel ``gw_fill_row``), the same errors, and pickling unaffected."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import bndp
from bndp import _random
from bndp._core import fill as _fill
from bndp._laws import window

MECHS = [(bndp.BoundedLaplace, 0.0, 120.0), (bndp.BoundedGaussian, 0.0, 120.0),
         (bndp.BoundedLaplace, -3.0, 2.5), (bndp.BoundedGaussian, 10.0, 11.0),
         (bndp.BoundedLaplace, 0.0, 1e5)]


def reference(plan, value, gen):
    """The general path's draws: the values clipped, then one call of the row kernel."""
    q = np.clip(np.asarray(value, dtype=np.float64), plan.lower, plan.upper)
    q2 = np.ascontiguousarray(q.reshape(1, -1))
    out = np.empty(q2.shape)
    k = plan.kernel
    tree, levels = k.search_tree
    _fill.gw_fill_row(gen, tree, levels, k.N, k.tailw, k.sbits, k.tm, k.exponent, plan.lower,
                      plan.upper, plan.n, q2, out)
    return float(out[0, 0]) if q.ndim == 0 else out.reshape(q.shape)


@pytest.mark.parametrize("cls,lo,hi", MECHS)
def test_one_value_and_small_arrays_draw_as_the_row_kernel(cls, lo, hi):
    m = cls(epsilon=1.0, sensitivity=1.0, lower=lo, upper=hi)
    plan = m.exact_plan
    assert type(plan) is window.RowPlan
    rng = np.random.default_rng(5)
    for value in (lo, hi, 0.5 * (lo + hi), lo + 0.3, np.float64(hi - 0.1), int(lo) + 1,
                  lo - 7.0, hi + 1e9):                     # outside: the general path clips
        for seed in range(4):
            got = m.sample(value, rng=seed)
            assert type(got) is float
            assert got == reference(plan, value, np.random.default_rng(seed))
    for n in (0, 1, 5, 31, 32, 33, 64, 100, 129, 5000):
        x = rng.uniform(lo, hi, n)
        if n > 3:
            x[3] = lo
            x[-1] = hi
        got = m.sample(x, rng=n)
        assert got.dtype == np.float64 and got.shape == (n,)
        np.testing.assert_array_equal(got, reference(plan, x, np.random.default_rng(n)))
        # one value outside: the general path (clipped), the same draws as clipping first
        if n:
            y = x.copy()
            y[0] = hi + 5.0
            np.testing.assert_array_equal(m.sample(y, rng=n),
                                          reference(plan, y, np.random.default_rng(n)))
    # a 2-D array, a strided view, a float32 array: the general path, as before
    x = rng.uniform(lo, hi, (3, 7))
    np.testing.assert_array_equal(m.sample(x, rng=1)[0],
                                  reference(plan, x[0], np.random.default_rng(1)))
    v = rng.uniform(lo, hi, 40)[::2]
    np.testing.assert_array_equal(m.sample(v, rng=2), reference(plan, v, np.random.default_rng(2)))


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_bndp_sample_scalar_bounds_draw_as_the_mechanism(mechanism):
    cls = bndp.BoundedLaplace if mechanism == "laplace" else bndp.BoundedGaussian
    m = cls(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=120.0)
    # an integer value with integral bounds and sensitivity: the integer law's mechanism
    mi = cls(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=120.0, integer=True)
    for value in (3.0, 3, np.array([3.0, 50.0, 120.0]), [1.0, 2.0], 500.0, [4, 5]):
        ref = mi if isinstance(value, int) or (isinstance(value, list) and value == [4, 5]) else m
        for lo, hi in ((0.0, 120.0), (0, 120), (np.float64(0.0), 120.0)):
            for _ in range(2):          # the second call finds the cached mechanism
                got = bndp.sample(value, mechanism=mechanism, epsilon=1.0, sensitivity=1,
                                  lower=lo, upper=hi, rng=7)
                np.testing.assert_array_equal(got, ref.sample(value, rng=7))
                assert type(got) is type(ref.sample(value, rng=7))


def test_errors_are_those_of_the_general_path():
    m = bndp.BoundedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    with pytest.raises(ValueError, match="`value` must be finite; got nan"):
        m.sample(float("nan"))
    with pytest.raises(ValueError, match="must be finite"):
        m.sample(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="on_outside='raise'"):
        m.sample(11.0, on_outside="raise")
    with pytest.raises(ValueError, match="on_outside"):
        m.sample(1.0, on_outside="wrap")
    with pytest.raises(TypeError, match="not a bool"):
        m.sample(True)
    with pytest.raises(TypeError, match="`rng`"):
        m.sample(1.0, rng="seed")
    with pytest.raises(ValueError, match="`workers`"):
        m.sample(1.0, workers=0)
    assert m.sample(5.0, size=3, rng=0).shape == (3,)
    for bad in (True, np.bool_(True)):
        with pytest.raises(TypeError):
            bndp.sample(1.0, mechanism="laplace", epsilon=bad, sensitivity=1.0, lower=0.0,
                        upper=10.0)
    bndp.sample(1.0, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    with pytest.raises(TypeError):
        bndp.sample(1.0, mechanism="laplace", epsilon=True, sensitivity=1.0, lower=0.0,
                    upper=10.0)
    with pytest.raises(ValueError, match="`delta` must be 0"):
        bndp.sample(1.0, mechanism="gaussian", epsilon=1.0, sensitivity=1.0, lower=0.0,
                    upper=10.0, delta=0.1)


def test_secure_default_generator_and_pickling():
    m = bndp.BoundedGaussian(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=120.0)
    x = m.sample(3.0)
    assert 0.0 <= x <= 120.0
    assert type(_random.as_generator(None).bit_generator).__name__ in ("AESCounter", "ChaCha")
    m2 = pickle.loads(pickle.dumps(m))          # the compiled row is not pickled
    assert "_row" not in m2.exact_plan.__dict__
    assert m2.sample(3.0, rng=3) == m.sample(3.0, rng=3)


def test_bndp_sample_keeps_warning_on_every_call_for_a_coarse_grid():
    from bndp import api
    kw = dict(mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=1e15, upper=1e15 + 1e3)
    for _ in range(2):
        with pytest.warns(RuntimeWarning, match="coarser grid"):
            bndp.sample(1e15 + 5.0, **kw)
    assert not any(k[3] == 1e15 for k in api._SCALAR)


def test_bndp_sample_cache_is_bounded_and_keyed_by_every_argument():
    from bndp import api
    a = bndp.sample(5.0, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0.0,
                    upper=10.0, rng=1)
    b = bndp.sample(5.0, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0.0,
                    upper=10.0, delta=0.1, rng=1)
    c = bndp.sample(5.0, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0.0,
                    upper=10.0, mode="continuous", rng=1)
    kw = dict(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    assert a == bndp.BoundedLaplace(**kw).sample(5.0, rng=1)
    assert b == bndp.BoundedLaplace(**kw, delta=0.1).sample(5.0, rng=1)
    assert c == bndp.BoundedLaplace(**kw, mode="continuous").sample(5.0, rng=1)
    for i in range(api._SCALAR_MAX + 5):
        bndp.sample(1.0, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0.0,
                    upper=10.0 + i)
    assert len(api._SCALAR) <= api._SCALAR_MAX
