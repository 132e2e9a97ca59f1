"""The integer law (``integer=``): the windowed grid law on the lattice ``lower + j k`` of
integral bounds, its certificate, its types and its refusals (``bndp._laws.lattice``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import bndp
from bndp._core import rows as _rows
from bndp._laws import lattice, window

from .test_conformance import check_against_model

MECHS = {"laplace": bndp.BoundedLaplace, "gaussian": bndp.BoundedGaussian}


def _make(name, eps, dq, lo, hi, integer=True):
    return MECHS[name](eps, sensitivity=dq, lower=lo, upper=hi, integer=integer)


# --- the compiled grid pass gives every row the lattice's exponent ------------------------
@pytest.mark.parametrize("s", [0, 1, 3, 10])
@pytest.mark.parametrize("dq", [1.0, 3.0, 7.0, 1000.0])
@pytest.mark.parametrize("target", [0.01, 0.5, 5.0, 60.0])
def test_grid_pass_takes_the_lattice_exponent(s, dq, target):
    rng = np.random.default_rng(int(s * 1000 + dq + target * 7))
    k = 1 << s
    lo = rng.integers(-10**9, 10**9, 3000).astype(np.float64) * k
    w = rng.integers(1, 10**5, 3000).astype(np.float64) * k
    w[:8] = [k, 2 * k, 3 * k, 5 * k, 2.0 ** 40, 3 * k + 1, k + 1, 1000 * k]
    lo[:2] = [-2.0 ** 51, 2.0 ** 51 - 2.0 ** 41]
    hi = lo + w
    d, ss, ws, sens = lattice._pass_steps(target, dq, s)
    e, coarse, n, *_ = _rows.gw_rows_grid(target, d, lo, hi, ss, ws, sens)
    assert (e == s).all()
    assert not coarse.any()
    np.testing.assert_array_equal(n, np.floor(w / k))
    # and the default constants give the default grid (a finer one here)
    d0, ss0, ws0, sens0 = lattice._pass_steps(target, dq, None)
    assert (d0, ss0, ws0, sens0) == (dq, 16.0, 128.0, 256.0)


# --- draws: integers on the lattice, the input's type -------------------------------------
@pytest.mark.parametrize("name", ["laplace", "gaussian"])
@pytest.mark.parametrize("step", [1, 2, 8])
def test_draws_lie_on_the_lattice(name, step):
    m = _make(name, 1.0, 2, -7, 121, integer=step)
    assert m.integer == step and m.exact_plan.exponent == int(math.log2(step))
    x = np.arange(-10, 130, dtype=np.int64)
    out = m.sample(np.repeat(x, 50), rng=3)
    assert out.dtype == np.int64
    assert ((out - (-7)) % step == 0).all()
    assert out.min() >= -7 and out.max() <= 121
    # the law's grid is the lattice
    g = m.exact_plan.grid()
    np.testing.assert_array_equal(g, -7 + step * np.arange(len(g)))
    assert g[-1] <= 121 < g[-1] + step


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint16, np.int64, np.uint64])
def test_integer_input_keeps_its_dtype(dtype):
    x = np.array([0, 5, 60, 100], dtype=dtype)
    out = bndp.sample(x, mechanism="laplace", epsilon=1.0, sensitivity=1, lower=0, upper=100,
                      rng=1)
    assert out.dtype == dtype
    # bounds beyond the dtype's range: int64, which holds every lattice point
    out = bndp.sample(x, mechanism="laplace", epsilon=1.0, sensitivity=1, lower=-1000,
                      upper=1000, rng=1)
    want = np.int64 if np.iinfo(dtype).min > -1000 or np.iinfo(dtype).max < 1000 else dtype
    assert out.dtype == want


def test_scalar_and_list_inputs():
    kw = dict(mechanism="laplace", epsilon=1.0, sensitivity=1, lower=0, upper=120, rng=0)
    assert type(bndp.sample(50, **kw)) is int
    assert isinstance(bndp.sample(np.int32(50), **kw), np.int32)
    assert type(bndp.sample(50.0, **kw)) is float
    assert bndp.sample([1, 2, 3], **kw).dtype == np.int64
    # a float input released by the integer law keeps its float type (integral values)
    out = bndp.sample(np.array([1.0, 2.5]), integer=True, **kw)
    assert out.dtype == np.float64 and (out == np.floor(out)).all()
    # repeated calls (the cached mechanism's short path) keep the type
    for _ in range(3):
        assert type(bndp.sample(7, **kw)) is int


def test_auto_rule():
    x = np.arange(0, 121, dtype=np.int64)
    kw = dict(mechanism="laplace", epsilon=1.0, rng=0)
    # integer input, integral bounds and sensitivity: the integer law
    assert bndp.sample(x, sensitivity=1, lower=0, upper=120, **kw).dtype == np.int64
    # not integral: the default grid, a float result (no error)
    for bad in (dict(sensitivity=0.5, lower=0, upper=120),
                dict(sensitivity=1, lower=0.5, upper=120),
                dict(sensitivity=1, lower=0, upper=120.5)):
        assert bndp.sample(x, **bad, **kw).dtype == np.float64
    # integer=False: the default grid, whose outputs are not all integers
    out = bndp.sample(x, sensitivity=1, lower=0, upper=120, integer=False, **kw)
    assert out.dtype == np.float64 and (out != np.floor(out)).any()
    # per-row bounds are data: their type decides, never their values
    lo, hi = np.zeros(121, dtype=np.int64), np.full(121, 150)
    assert bndp.sample(x, sensitivity=1, lower=lo, upper=hi, **kw).dtype == np.int64
    assert bndp.sample(x, sensitivity=1, lower=lo + 0.5, upper=hi, **kw).dtype == np.float64
    assert bndp.sample(x, sensitivity=1, lower=lo.astype(float), upper=hi,
                       **kw).dtype == np.float64       # (integral values, float type)
    with pytest.raises(ValueError, match="magnitude at most 2\\^52"):
        bndp.sample(x, sensitivity=1, lower=lo - 2 ** 60, upper=hi, **kw)
    assert bndp.sample(x, sensitivity=1, lower=lo, upper=hi, integer=False,
                       **kw).dtype == np.float64
    # a lattice too fine for the noise: the default grid (asked for: refused)
    for kw2 in (dict(sensitivity=10 ** 6, lower=0, upper=10 ** 9),
                dict(sensitivity=100_000, lower=0, upper=10 ** 9, epsilon=0.5)):
        args = {**kw, **kw2}
        assert bndp.sample(x, **args).dtype == np.float64
        with pytest.raises(ValueError, match="too fine"):
            bndp.sample(x, integer=True, **args)
    # continuous mode: the continuous law, integer input or not
    assert bndp.sample(x, sensitivity=1, lower=0, upper=120, mode="continuous",
                       **kw).dtype == np.float64


def test_per_row_result_dtype_follows_the_types_only():
    x = np.arange(0, 50, dtype=np.int32)
    kw = dict(mechanism="laplace", epsilon=1.0, sensitivity=1, rng=0)
    for bt, want in ((np.int32, np.int32), (np.int16, np.int32), (np.int64, np.int64),
                     (np.uint64, np.int64)):
        lo, hi = np.zeros(50, dtype=bt), np.full(50, 60, dtype=bt)
        assert bndp.sample(x, lower=lo, upper=hi, **kw).dtype == want
    # float-typed per-row bounds with integer=True: int64, whatever their values
    out = bndp.sample(x, lower=np.zeros(50), upper=np.full(50, 60.0), integer=True, **kw)
    assert out.dtype == np.int64
    # scalar bounds are public: their values decide whether the input's dtype holds them
    assert bndp.sample(x.astype(np.int8), lower=0, upper=100, **kw).dtype == np.int8
    assert bndp.sample(x.astype(np.int8), lower=0, upper=200, **kw).dtype == np.int64


def test_per_row_draws_follow_each_rows_law():
    rng = np.random.default_rng(5)
    lo = rng.integers(-50, 50, 60_000)
    hi = lo + rng.choice([1, 3, 40, 300], 60_000)
    x = lo + (hi - lo) // 3
    out = bndp.sample(x.astype(np.int32), mechanism="gaussian", epsilon=0.7, sensitivity=2,
                      lower=lo, upper=hi, rng=11)
    assert out.dtype == np.int64          # (int32 values, int64 bounds: promoted)
    assert ((out >= lo) & (out <= hi)).all()
    for w in (1, 3, 40, 300):
        sel = (hi - lo) == w
        m = bndp.BoundedGaussian(0.7, sensitivity=2, lower=0, upper=w, integer=True)
        d = (out[sel] - lo[sel]).astype(np.float64)
        q = float(w // 3)
        mean, var = m.mean(q), m.variance(q)
        z = (d.mean() - mean) / math.sqrt(max(var, 1e-12) / sel.sum())
        assert abs(z) < 5, (w, d.mean(), mean)


# --- the certificate -----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["laplace", "gaussian"])
@pytest.mark.parametrize("eps,dq,lo,hi,step", [
    (0.1, 1, 0, 120, 1), (1.0, 1, 0, 120, 1), (2.0, 1, 0, 120, 1), (4.0, 3, -20, 40, 1),
    (0.5, 5, 0, 60, 2), (8.0, 1, 0, 10, 1),
])
def test_loss_at_most_epsilon_from_the_pmf(name, eps, dq, lo, hi, step):
    m = _make(name, eps, dq, lo, hi, step)
    assert m.privacy_loss() <= eps
    g = m.exact_plan.grid()
    # every pair of integer true values at most dq apart, every output: from the pmf
    p = np.array([np.asarray(m.pmf(g, float(v)), dtype=np.float64)
                  for v in range(lo, hi + 1)])
    worst = 0.0
    for d in range(1, dq + 1):
        a, b = p[d:], p[:-d]
        # (the pmf lists a tail until its terms fall below 2^-60 of the law, and its
        # doubles underflow: outputs beyond are compared where both are listed)
        both = (a > 1e-280) & (b > 1e-280)
        assert (a[~both] < 2.0 ** -50).all() and (b[~both] < 2.0 ** -50).all()
        worst = max(worst, float(np.max(np.abs(np.log(a[both]) - np.log(b[both])))))
    assert math.isfinite(worst) and worst > 0
    assert worst <= m.privacy_loss() * (1 + 1e-9)
    assert worst <= eps
    # calibrated, not needlessly loose: the certificate is within 1 % of the target
    # (a lattice coarse against the noise at a large epsilon leaves more slack)
    if eps <= 2.0:
        assert m.privacy_loss() >= 0.99 * eps


@pytest.mark.parametrize("name", ["laplace", "gaussian"])
def test_integer_law_against_the_independent_model(name):
    check_against_model(_make(name, 1.0, 2, 0, 40))


def test_integer_law_is_the_grid_law_at_step_one():
    # the same kernel machinery: where the default grid's step is 1 too (sensitivity
    # 16 epsilon on a wide row), the two laws are one
    m = bndp.BoundedLaplace(1.0, sensitivity=16, lower=0, upper=4096)
    assert m.exact_plan.exponent == 0
    mi = bndp.BoundedLaplace(1.0, sensitivity=16, lower=0, upper=4096, integer=True)
    assert mi.privacy_loss() == m.privacy_loss()
    x = np.arange(0, 4097, 7)
    np.testing.assert_array_equal(m.sample(x.astype(float), rng=9), mi.sample(x, rng=9))


# --- refusals --------------------------------------------------------------------------------
@pytest.mark.parametrize("kw,match", [
    (dict(lower=0.5), "`lower` must be integral"),
    (dict(upper=120.25), "`upper` must be integral"),
    (dict(upper=np.inf), "`upper` must be integral"),
    (dict(sensitivity=1.5), "`sensitivity` must be an integer >= 1"),
    (dict(sensitivity=0.5), "`sensitivity` must be an integer >= 1"),
    (dict(mode="continuous"), "mode='continuous'"),
    (dict(integer=2 ** 53), "from 1 to 2\\^52"),
    (dict(integer=0.5), "`integer` must be True, False or a lattice step"),
    (dict(integer="yes"), "`integer` must be True, False or a lattice step"),
    (dict(lower=-2 ** 53, upper=0), "magnitude at most 2\\^52"),
    (dict(sensitivity=10 ** 7), "too fine"),
    (dict(integer=256, upper=100), "holds no lattice step"),
])
def test_refusals(kw, match):
    args = dict(sensitivity=1, lower=0, upper=120, integer=True)
    args.update(kw)
    with pytest.raises((ValueError, TypeError), match=match):
        bndp.BoundedLaplace(1.0, **args)


def test_refusals_per_row_and_multivariate():
    x = np.arange(3)
    with pytest.raises(ValueError, match="some per-row value is not"):
        bndp.sample(x, mechanism="laplace", epsilon=1.0, sensitivity=1,
                    lower=np.array([0.0, 0.5, 0.0]), upper=np.array([9, 9, 9]), integer=True)
    with pytest.raises(ValueError, match="`upper` must be integral"):
        bndp.BoundedGaussian(1.0, sensitivity=1, lower=[0, 0], upper=[9, 9.5], integer=True)


def test_multivariate_gaussian_on_the_lattice():
    m = bndp.BoundedGaussian(1.0, sensitivity=2, lower=[0, 0, -5], upper=[30, 20, 24],
                             integer=True)
    assert m.privacy_loss() <= 1.0
    plan = m.exact_plan
    assert all(c.exponent == 0 for c in plan.coords)
    x = np.array([[1, 2, 3], [30, 0, -5], [15, 10, 20]], dtype=np.int16)
    out = m.sample(np.repeat(x, 200, axis=0), rng=4)
    assert out.dtype == np.int16
    assert ((out >= [0, 0, -5]) & (out <= [30, 20, 24])).all()
    # per-coordinate laws on the integers, whose worst shift loss is within the certificate
    for c, p in enumerate(plan.coords):
        g = p.grid()
        np.testing.assert_array_equal(g, np.round(g))
    # a step of 4: the multiples of 4 in each interval
    m4 = bndp.BoundedGaussian(1.0, sensitivity=8, lower=[0, -6], upper=[64, 30], integer=4)
    out = m4.sample(np.array([[3, 5], [60, -6]]), rng=1)
    assert (out % 4 == 0).all() and m4.privacy_loss() <= 1.0


def test_repr_eq_and_pickle():
    import pickle
    m = bndp.BoundedLaplace(1.0, sensitivity=1, lower=0, upper=120, integer=True)
    assert "integer=1" in repr(m)
    assert "integer" not in repr(bndp.BoundedLaplace(1.0, sensitivity=1, lower=0, upper=120))
    r = eval(repr(m), {"BoundedLaplace": bndp.BoundedLaplace})
    assert r == m and r != bndp.BoundedLaplace(1.0, sensitivity=1, lower=0, upper=120)
    p = pickle.loads(pickle.dumps(m))
    assert p == m and p.integer == 1
    np.testing.assert_array_equal(p.sample(np.arange(10), rng=2), m.sample(np.arange(10), rng=2))


# --- the rest knows the integer law: estimate, the law functions -----------------------------
def test_estimate_deconvolves_the_integer_law():
    rng = np.random.default_rng(8)
    x = rng.integers(20, 70, 1500).astype(np.int32)
    m = bndp.BoundedLaplace(1.0, sensitivity=1, lower=0, upper=120, integer=True)
    y = m.sample(x, rng=1)
    e = bndp.estimate(y, m, n_boot=30, rng=2)
    lo, hi = e.mean_interval
    assert lo <= x.mean() <= hi
    np.testing.assert_array_equal(e.support, np.arange(121.0))
    # a spec without `integer` (auto): the released column's integer type says which law
    spec = {"mechanism": "laplace", "epsilon": 1.0, "sensitivity": 1, "lower": 0,
            "upper": 120}
    e2 = bndp.estimate(y, spec, n_boot=30, rng=2)
    assert e2.mean == pytest.approx(e.mean)
    # the default grid's mechanism cannot read them (outputs of another law, refused)...
    y_grid = bndp.BoundedLaplace(1.0, sensitivity=1, lower=0, upper=120).sample(
        x.astype(float), rng=1)
    with pytest.raises(ValueError, match="integer"):
        bndp.estimate(y_grid, m, n_boot=0)
    # ...and float releases of the default grid keep their law under the same spec
    e3 = bndp.estimate(y_grid, spec, n_boot=30, rng=2)
    assert e3.mean_interval[0] <= x.mean() <= e3.mean_interval[1]


def test_law_functions_on_the_lattice():
    m = bndp.BoundedGaussian(0.5, sensitivity=1, lower=0, upper=30, integer=True)
    g = np.arange(0, 31)
    p = np.asarray(m.pmf(g, 10))
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.asarray(m.pmf(np.array([10.5]), 10))[0] == 0.0
    c = np.asarray(m.cdf(g, 10))
    np.testing.assert_allclose(c, np.cumsum(p), atol=1e-12)
    q = np.asarray(m.ppf(np.array([0.05, 0.5, 0.95]), 10))
    assert (q == np.floor(q)).all()
    assert m.mean(10) == pytest.approx(float((g * p).sum()), rel=1e-12)
