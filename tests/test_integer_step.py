"""The integer law on a lattice step that is not a power of two (``integer=k``,
``bndp._laws.step``): the exact index map, the certificate (against the independent model
and from the pmf over true values on a half-unit grid), the draws on the lattice, per-row
bounds, the multivariate Gaussian, the law functions, the estimate and the CLI."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import bndp
from bndp._laws import lattice
from bndp._laws.step import StepCoord, StepPlan, _nearest, step_floor, step_index

from .test_conformance import check_against_model

MECHS = {"laplace": bndp.BoundedLaplace, "gaussian": bndp.BoundedGaussian}


def _make(name, eps, dq, lo, hi, k):
    return MECHS[name](eps, sensitivity=dq, lower=lo, upper=hi, integer=k)


def _exact_nearest(v, lo, hi, k, n):
    c = min(max(Fraction(v), Fraction(lo)), Fraction(hi))
    return min(max(math.floor((c - Fraction(lo)) / k + Fraction(1, 2)), 0), n)


# --- the lattice of a step ---------------------------------------------------------------
def test_lattice_of_a_step():
    assert lattice.lattice_of(1) == 0 and lattice.lattice_of(8) == 3
    assert lattice.lattice_of(3) == lattice.Step(3)
    assert lattice.step_of(lattice.Step(10)) == 10 and lattice.step_of(4) == 16
    assert not isinstance(lattice.Step(3), int)       # never read as an exponent
    assert lattice.Step(3).units(1) == 1 and lattice.Step(3).units(7) == 3
    assert lattice.Step(5).units(10) == 2
    for bad in (0, -3, 2 ** 52 + 1):
        with pytest.raises(ValueError, match="from 1 to 2\\^52"):
            lattice.lattice_of(bad)


@pytest.mark.parametrize("k", [3, 5, 6, 7, 10, 12, 100, 2 ** 40 + 1])
@pytest.mark.parametrize("lo", [-37.0, 0.0, 5.0, -2.0 ** 51])
def test_index_is_the_exact_nearest_point(k, lo):
    rng = np.random.default_rng(k)
    hi = lo + 50.0 * k + 7
    n = (int(hi) - int(lo)) // k
    ties = lo + k * np.arange(0, 51) + k / 2
    v = np.concatenate([
        lo + rng.uniform(-3 * k, 53 * k, 400),
        np.round(lo + rng.uniform(0, 51 * k, 200)),
        ties, np.nextafter(ties, -np.inf), np.nextafter(ties, np.inf),
        [lo, hi, lo - 1, hi + 1, np.nextafter(hi, -np.inf)]])
    got = step_index(v, lo, hi, k, n)                  # the compiled gs_index
    want = [_exact_nearest(x, lo, hi, k, n) for x in v]
    np.testing.assert_array_equal(got, want)
    # the NumPy rule (the multivariate coordinates') agrees
    c = np.clip(v, lo, hi)
    np.testing.assert_array_equal(np.minimum(_nearest(c, lo, k), n), want)
    plan = bndp.BoundedLaplace(0.5, sensitivity=k, lower=lo, upper=hi, integer=k).exact_plan \
        if k < 2 ** 20 and lo > -2.0 ** 50 else None
    if plan is not None:
        np.testing.assert_array_equal(plan.index(v), want)
        assert [plan.exact_index(Fraction(x)) for x in v[:50]] == want[:50]


@pytest.mark.parametrize("lo,k", [(0.0, 5), (-37.0, 3), (11.0, 12), (-2.0 ** 40, 7),
                                  (0.0, 2 ** 41 + 3)])
def test_compiled_sampler_rounds_exactly(lo, k):
    # the release's sampler computes the lattice index in its draw loop (a vectorised pass
    # for integral values, integer arithmetic otherwise): its draws are the unit law's
    # draws for the exact indices, mapped, value by value
    hi = lo + 40.0 * k + 2
    m = bndp.BoundedLaplace(0.5, sensitivity=k, lower=lo, upper=hi, integer=k)
    p = m.exact_plan
    rng = np.random.default_rng(1)
    ints = lo + rng.integers(-k, 42 * k, 3000)
    ties = lo + k * np.arange(0, 41) + k / 2
    x = np.concatenate([ints, ties, np.nextafter(ties, -np.inf), np.nextafter(ties, np.inf),
                        lo + rng.uniform(-k, 41 * k, 3000), ints[:500]])
    for order in (slice(None), slice(None, None, -1)):
        xs = np.ascontiguousarray(x[order])
        got = p.sample(xs, None, np.random.default_rng(3))
        want = p.unit.sample(step_index(xs, lo, hi, k, p.n).astype(np.float64), None,
                             np.random.default_rng(3))
        np.testing.assert_array_equal(got, lo + want * k)


def test_floor_index_is_exact():
    lo, hi, k = -7.0, 53.0, 3
    x = np.array([-7.0, -6.5, -4.0, np.nextafter(-4.0, -9), 52.0, 53.0, 100.0, -100.0, np.nan])
    j, on = step_floor(x, lo, lo, hi, k)
    np.testing.assert_array_equal(j[:7], [0, 0, 1, 0, 19, 20, 21])
    np.testing.assert_array_equal(on, [True, False, True, False, False, True, False, False,
                                       False])
    assert j[7] == -2


# --- the certificate ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["laplace", "gaussian"])
@pytest.mark.parametrize("eps,dq,lo,hi,k", [
    (1.0, 1, 0, 40, 3), (1.0, 7, -5, 40, 3), (0.5, 10, 0, 100, 6), (2.0, 5, 0, 60, 5),
])
def test_against_the_independent_model(name, eps, dq, lo, hi, k):
    m = _make(name, eps, dq, lo, hi, k)
    assert isinstance(m.exact_plan, StepPlan)
    check_against_model(m)


@pytest.mark.parametrize("name", ["laplace", "gaussian"])
@pytest.mark.parametrize("eps,dq,lo,hi,k", [
    (0.1, 1, 0, 120, 3), (1.0, 1, 0, 120, 3), (1.0, 3, 0, 120, 3), (2.0, 4, -20, 40, 3),
    (0.5, 12, 0, 120, 10), (1.0, 7, 1, 100, 5),
])
def test_loss_at_most_epsilon_over_true_values(name, eps, dq, lo, hi, k):
    m = _make(name, eps, dq, lo, hi, k)
    assert m.privacy_loss() <= eps
    g = m.exact_plan.grid()
    np.testing.assert_array_equal(g, lo + k * np.arange(len(g)))
    assert g[-1] <= hi < g[-1] + k
    # true values every half unit (ties of the rounding included); every pair at most dq
    # apart, every output, from the pmf
    vals = np.arange(2 * lo, 2 * hi + 1) / 2.0
    p = np.array([np.asarray(m.pmf(g, float(v)), dtype=np.float64) for v in vals])
    worst = 0.0
    for d in range(1, 2 * dq + 1):
        a, b = p[d:], p[:-d]
        both = (a > 1e-280) & (b > 1e-280)
        assert (a[~both] < 2.0 ** -50).all() and (b[~both] < 2.0 ** -50).all()
        worst = max(worst, float(np.max(np.abs(np.log(a[both]) - np.log(b[both])))))
    assert 0 < worst <= m.privacy_loss() * (1 + 1e-9)
    if eps <= 2.0:
        assert m.privacy_loss() >= 0.99 * eps


def test_power_of_two_steps_keep_their_law():
    m = bndp.BoundedLaplace(1.0, sensitivity=1, lower=0, upper=120, integer=4)
    assert not isinstance(m.exact_plan, StepPlan) and m.exact_plan.exponent == 2


# --- draws, types, per-row bounds -------------------------------------------------------------
@pytest.mark.parametrize("name", ["laplace", "gaussian"])
@pytest.mark.parametrize("k", [3, 5, 10])
def test_draws_lie_on_the_lattice_and_follow_the_law(name, k):
    m = _make(name, 1.0, k, -7, 121, k)
    x = np.repeat(np.array([-7, 0, 50, 121], dtype=np.int32), 4000)
    out = m.sample(x, rng=3)
    assert out.dtype == np.int32
    assert ((out - (-7)) % k == 0).all() and out.min() >= -7 and out.max() <= 121
    for v in (-7, 50, 121):
        d = out[x == v]
        mean, var = m.mean(float(v)), m.variance(float(v))
        assert abs(d.mean() - mean) < 5 * math.sqrt(var / d.size) + 1e-9
    # one value, a list, a Python int
    assert isinstance(m.sample(50, rng=1), int)
    assert m.sample(50, rng=1) == m.sample(np.int64(50), rng=1)
    assert ((np.asarray(m.sample([1, 2, 3], rng=2)) + 7) % k == 0).all()


def test_per_row_bounds_on_each_rows_lattice():
    rng = np.random.default_rng(5)
    lo = rng.integers(-20, 20, 6000)
    hi = lo + rng.integers(30, 90, 6000)
    x = (lo + rng.integers(0, 30, 6000)).astype(np.int16)
    for mech in ("laplace", "gaussian"):
        y = bndp.sample(x, mechanism=mech, epsilon=1.0, sensitivity=4, lower=lo, upper=hi,
                        integer=3, rng=7)
        assert y.dtype == np.int64                 # int16 values with int64 bounds
        assert ((y - lo) % 3 == 0).all() and (y >= lo).all() and (y <= hi).all()
        # rows of one width follow the fixed-bounds law of that row
        sel = (lo == 0) & (hi == 60)
        if sel.sum() > 10:
            m = MECHS[mech](1.0, sensitivity=4, lower=0, upper=60, integer=3)
            want = np.mean([m.mean(float(v)) for v in x[sel]])
            var = np.mean([m.variance(float(v)) for v in x[sel]])
            assert abs(y[sel].mean() - want) < 5 * math.sqrt(var / sel.sum())
    # a row too narrow for the step is refused, its bounds not quoted
    with pytest.raises(ValueError, match="holds no lattice step of 3"):
        bndp.sample(np.array([1, 2]), mechanism="laplace", epsilon=1.0, sensitivity=1,
                    lower=np.array([0, 0]), upper=np.array([2, 9]), integer=3)


@pytest.mark.parametrize("k", [3, 7, 2 ** 41 + 1])
def test_per_row_indices_are_exact(k):
    # the per-row pass (vectorised for integral values, integer arithmetic otherwise)
    from bndp._core import window
    rng = np.random.default_rng(k)
    m = 5000
    lo = rng.integers(-50, 50, m).astype(np.float64) * (k if k > 100 else 1)
    hi = lo + rng.integers(1, 60, m) * k + rng.integers(0, k, m) % 1000
    q = np.where(rng.random(m) < 0.5, np.round(lo + rng.uniform(-k, 70 * k, m)),
                 lo + rng.uniform(-k, 70 * k, m))
    q[::7] = lo[::7] + k * rng.integers(0, 60, q[::7].size) + k / 2      # ties
    for order in (slice(None), slice(None, None, -1)):
        qq, ll, hh = (np.ascontiguousarray(a[order]) for a in (q, lo, hi))
        i, n = window.gs_rows(qq, ll, hh, k)
        want_n = [(int(b) - int(a)) // k for a, b in zip(ll, hh)]
        np.testing.assert_array_equal(n, want_n)
        want = [_exact_nearest(v, a, b, k, nn) for v, a, b, nn in zip(qq, ll, hh, want_n)]
        np.testing.assert_array_equal(i, want)


def test_per_row_exact_values_are_rounded_from_their_exact_value():
    # int64 values beyond 2^53 are not doubles: clipped into the row, from the exact value
    x = np.array([2 ** 53 + 1, 4, 5], dtype=np.int64)
    y = bndp.sample(x, mechanism="laplace", epsilon=50.0, sensitivity=1,
                    lower=np.array([0, 0, 0]), upper=np.array([30, 30, 30]), integer=3, rng=1)
    assert y.dtype == np.int64 and (y % 3 == 0).all()


def test_multivariate_gaussian_on_multiples_of_the_step():
    m = bndp.BoundedGaussian(1.0, sensitivity=6, lower=[0, -7, 2], upper=[30, 23, 40],
                             integer=3)
    plan = m.exact_plan
    assert all(isinstance(c, StepCoord) for c in plan.coords)
    assert m.privacy_loss() <= 1.0
    np.testing.assert_array_equal(plan.coords[1].grid(), np.arange(-6, 22, 3))
    np.testing.assert_array_equal(plan.coords[2].grid(), np.arange(3, 40, 3))
    x = np.array([[1, 2, 3], [30, -7, 40], [15, 10, 20]], dtype=np.int16)
    out = m.sample(np.repeat(x, 300, axis=0), rng=4)
    assert out.dtype == np.int16 and (out % 3 == 0).all()
    assert ((out >= [0, -7, 2]) & (out <= [30, 23, 40])).all()
    for c in plan.coords:
        p = c.pmf(10.0)
        assert p.sum() == pytest.approx(1.0, abs=1e-12)
        assert c.exact_index(Fraction(10)) == int(c.index(10.0))
    # the certificate's budget of index shifts: (6/3)^2 = 4 shifts of one step squared
    unit = bndp.BoundedGaussian(1.0, sensitivity=2, lower=[0, -2, 1], upper=[10, 7, 13],
                                integer=True)
    assert m.privacy_loss() == pytest.approx(unit.privacy_loss(), rel=1e-6)
    assert m.sigma == pytest.approx(3 * unit.sigma, rel=1e-9)


@pytest.mark.parametrize("eps,dq,k", [(1.0, 3, 3), (1.0, 4, 3), (2.0, 5, 5)])
def test_multivariate_loss_over_the_l2_ball(eps, dq, k):
    # two coordinates, true values every half unit; every pair at most dq apart in l2:
    # the joint law is a product, so its worst log ratio over outputs is the sum over the
    # coordinates of each one's worst (signed) log ratio
    lo, hi = [0, -4], [13, 11]
    m = bndp.BoundedGaussian(eps, sensitivity=dq, lower=lo, upper=hi, integer=k)
    coords = m.exact_plan.coords
    vals = [np.arange(2 * a, 2 * b + 1) / 2.0 for a, b in zip(lo, hi)]
    worst_c = []
    for c, v in zip(coords, vals):
        lp = np.log(np.array([c.pmf(float(x)) for x in v]))
        # worst[i, j] = max over outputs of ln p(out | v_i) - ln p(out | v_j)
        worst_c.append(np.max(lp[:, None, :] - lp[None, :, :], axis=2))
    worst = 0.0
    d0 = vals[0][:, None] - vals[0][None, :]
    d1 = vals[1][:, None] - vals[1][None, :]
    for i0 in range(len(vals[0])):
        for j0 in range(len(vals[0])):
            rest = dq * dq - d0[i0, j0] ** 2
            if rest < 0:
                continue
            ok = d1 ** 2 <= rest
            worst = max(worst, worst_c[0][i0, j0] + float(np.max(worst_c[1][ok])))
    assert 0 < worst <= m.privacy_loss() * (1 + 1e-9) and m.privacy_loss() <= eps


# --- the law functions --------------------------------------------------------------------
def test_law_functions_on_the_lattice():
    m = bndp.BoundedGaussian(0.5, sensitivity=5, lower=1, upper=61, integer=5)
    g = 1 + 5 * np.arange(13)
    p = np.asarray(m.pmf(g, 20))
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.asarray(m.pmf(np.array([20.0, 2.0, 5.5]), 20)).tolist()[1:] == [0.0, 0.0]
    c = np.asarray(m.cdf(g, 20))
    np.testing.assert_allclose(c, np.cumsum(p), atol=1e-12)
    # between the points the cdf is flat
    np.testing.assert_allclose(np.asarray(m.cdf(g + 4.5, 20))[:-1], c[:-1], atol=0)
    q = np.asarray(m.ppf(np.array([0.05, 0.5, 0.95]), 20))
    assert ((q - 1) % 5 == 0).all()
    assert m.mean(20) == pytest.approx(float((g * p).sum()), rel=1e-12)
    assert m.variance(20) == pytest.approx(float(((g - m.mean(20)) ** 2 * p).sum()),
                                           rel=1e-9)
    np.testing.assert_allclose(np.asarray(m.sf(g, 20)), 1 - c, atol=1e-12)
    assert m.isf(0.5, 20) == m.ppf(0.5, 20) or abs(m.isf(0.5, 20) - m.ppf(0.5, 20)) == 5


def test_repr_and_pickle():
    import pickle
    m = bndp.BoundedLaplace(1.0, sensitivity=2, lower=0, upper=120, integer=3)
    assert "integer=3" in repr(m)
    r = eval(repr(m), {"BoundedLaplace": bndp.BoundedLaplace})
    assert r == m
    p = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(p.sample(np.arange(10), rng=2), m.sample(np.arange(10), rng=2))


# --- the rest knows the step ----------------------------------------------------------------
def test_estimate_deconvolves_a_step_release():
    rng = np.random.default_rng(8)
    x = rng.integers(20, 70, 3000).astype(np.int32)
    m = bndp.BoundedLaplace(1.0, sensitivity=3, lower=0, upper=120, integer=3)
    y = m.sample(x, rng=1)
    e = bndp.estimate(y, m, n_boot=40, rng=2)
    lo, hi = e.mean_interval
    assert lo <= x.mean() <= hi
    assert ((e.support % 3) == 0).all()
    spec = {"mechanism": "laplace", "epsilon": 1.0, "sensitivity": 3, "lower": 0,
            "upper": 120, "integer": 3}
    assert bndp.estimate(y, spec, n_boot=0).mean == pytest.approx(e.mean)
    # per-row bounds (each value at the same position in its row's range, as the scaled
    # model assumes)
    lo_r = rng.integers(0, 10, 3000)
    hi_r = lo_r + 90
    xr = (lo_r + x - 20).astype(np.int32)
    y = bndp.sample(xr, mechanism="laplace", epsilon=1.0, sensitivity=3, lower=lo_r,
                    upper=hi_r, integer=3, rng=4)
    e = bndp.estimate(y, spec, lower=lo_r, upper=hi_r, n_boot=40, rng=2)
    a, b = e.mean_interval
    assert a <= xr.mean() <= b
    # a release of another step is refused
    with pytest.raises(ValueError, match="not an output"):
        bndp.estimate(bndp.BoundedLaplace(1.0, sensitivity=3, lower=0, upper=120,
                                          integer=True).sample(x, rng=1), m, n_boot=0)


def test_spec_and_cli_take_any_step(tmp_path):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"age": np.arange(0, 100, dtype=np.int32)})
    out = bndp.privatize(df, {"age": {"mechanism": "laplace", "epsilon": 1.0,
                                      "sensitivity": 1, "lower": 0, "upper": 120,
                                      "integer": 5}}, rng=1)
    assert out["age"].dtype == np.int32 and (out["age"] % 5 == 0).all()
    with pytest.raises(bndp.SpecError, match="from 1 to 2\\^52"):
        bndp.privatize(df, {"age": {"mechanism": "laplace", "epsilon": 1.0,
                                    "sensitivity": 1, "lower": 0, "upper": 120,
                                    "integer": 0}}, rng=1)
    from bndp.cli import main
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    dst = tmp_path / "out.csv"
    rc = main(["privatize", str(src), "-o", str(dst), "--column", "age", "--mechanism",
               "laplace", "--epsilon", "1", "--sensitivity", "1", "--lower", "0", "--upper",
               "120", "--integer-step", "3", "--seed", "1"])
    assert rc == 0
    got = pd.read_csv(dst)["age"]
    assert got.dtype.kind == "i" and (got % 3 == 0).all()
