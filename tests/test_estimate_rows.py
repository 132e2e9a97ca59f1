"""bndp.estimate with per-row bounds: the scaled model (one distribution of the values'
position in their row), its check, and the choice between it and strata."""

import warnings

import numpy as np
import pytest

import bndp
from bndp.estimation import ScaledModelWarning

SPEC = {"mechanism": "laplace", "epsilon": 0.5, "sensitivity": 1.0}


def _bound_dependent(rng, n):
    """Values that depend on their bounds: lower in [0, 20), width in [10, 90), the value
    lower + width * Beta(0.6, 5) (its position in the row has one law for every row)."""
    lo = rng.uniform(0.0, 20.0, n)
    hi = lo + rng.uniform(10.0, 90.0, n)
    x = lo + (hi - lo) * rng.beta(0.6, 5.0, n)
    return x, lo, hi


def _release(x, lo, hi, seed):
    return bndp.sample(x, mechanism="laplace", epsilon=0.5, sensitivity=1.0, lower=lo,
                       upper=hi, rng=seed)


def test_scaled_model_estimates_values_that_depend_on_their_bounds():
    rng = np.random.default_rng(11)
    x, lo, hi = _bound_dependent(rng, 8000)
    y = _release(x, lo, hi, 12)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ScaledModelWarning)
        est = bndp.estimate(y, SPEC, lower=lo, upper=hi, n_boot=40, rng=13)
    assert est.bounds_model == "scaled"
    a, b = est.mean_interval
    se = (b - a) / (2 * 1.959963984540054)
    naive = abs(float(y.mean()) - x.mean())
    # the naive mean is off by about 1.7, twenty standard errors and more
    assert naive > 20 * se
    assert abs(est.mean - x.mean()) < 3 * se
    assert a <= est.mean <= b
    assert set(est.model_check) == {"width", "lower"}
    assert all(abs(z) < 3.5 for z in est.model_check.values())
    # the column's distribution lies in the rows' hull and sums to one
    assert est.support[0] == lo.min() and est.support[-1] == hi.max()
    assert abs(est.probabilities.sum() - 1.0) < 1e-9
    # the quantiles of the column: within a few units of the true ones
    q = np.quantile(x, [0.25, 0.5, 0.75])
    assert np.all(np.abs(np.asarray(est.quantile([0.25, 0.5, 0.75])) - q) < 1.5)


def test_scaled_model_error_shrinks_with_the_rows():
    # no bootstrap: the point estimate's error at 4,000 and 256,000 rows (64 times the
    # rows: an eighth of the standard error; the naive mean's bias stays)
    errs, naive = [], []
    for n, seed in ((4000, 21), (256000, 22)):
        rng = np.random.default_rng(seed)
        x, lo, hi = _bound_dependent(rng, n)
        y = _release(x, lo, hi, seed + 100)
        est = bndp.estimate(y, SPEC, lower=lo, upper=hi, n_boot=0)
        errs.append(abs(est.mean - x.mean()))
        naive.append(abs(float(y.mean()) - x.mean()))
    assert min(naive) > 1.5
    # the standard error at 4,000 rows is about 0.09: at 256,000 about 0.011
    assert errs[1] < 0.045
    assert errs[1] < naive[1] / 30


def test_scaled_model_check_warns_where_position_follows_the_width():
    rng = np.random.default_rng(31)
    n = 12000
    lo = rng.uniform(0.0, 20.0, n)
    w = rng.uniform(10.0, 90.0, n)
    hi = lo + w
    # narrow rows near their top, wide rows near their bottom: no shared position law
    u = np.where(w < 50.0, rng.beta(5.0, 1.0, n), rng.beta(1.0, 5.0, n))
    x = lo + w * u
    y = _release(x, lo, hi, 32)
    with pytest.warns(ScaledModelWarning, match="narrow and wide rows") as rec:
        est = bndp.estimate(y, SPEC, lower=lo, upper=hi, n_boot=0)
    assert abs(est.model_check["width"]) > 3.5
    # the warning names the caller's line, not one of bndp's
    assert [w.filename for w in rec] == [__file__]


def test_bounds_model_choice_and_errors():
    rng = np.random.default_rng(41)
    n = 3000
    k = rng.integers(0, 2, n)
    lo, hi = np.array([0.0, 5.0])[k], np.array([10.0, 25.0])[k]
    x = lo + (hi - lo) * rng.beta(1.0, 4.0, n)
    y = _release(x, lo, hi, 42)
    # two pairs of about 1,500 rows each: strata by default
    est = bndp.estimate(y, SPEC, lower=lo, upper=hi, n_boot=0)
    assert (est.bounds_model, est.groups, est.model_check) == ("strata", 2, None)
    scaled = bndp.estimate(y, SPEC, lower=lo, upper=hi, n_boot=0, bounds_model="scaled")
    assert scaled.bounds_model == "scaled"
    assert abs(scaled.mean - x.mean()) < 0.3 < abs(float(y.mean()) - x.mean())
    assert scaled.summary()["bounds_model"] == "scaled"
    fixed = bndp.estimate(y[k == 0], SPEC, lower=0.0, upper=10.0, n_boot=0)
    assert fixed.bounds_model == "fixed"
    with pytest.raises(ValueError, match="bounds_model"):
        bndp.estimate(y, SPEC, lower=lo, upper=hi, bounds_model="rows")
    # values released with other bounds are refused, naming the position
    with pytest.raises(ValueError, match=r"at position \d+ is not an output"):
        bndp.estimate(y, SPEC, lower=lo[::-1], upper=hi[::-1], n_boot=0,
                      bounds_model="scaled")


@pytest.mark.slow
def test_scaled_model_interval_coverage():
    # 40 releases of 20,000 rows: a 95 % interval covers 38 on average; 34 or fewer has
    # probability about 4 %; intervals 30 % too narrow would cover about 35
    hit = 0
    for r in range(40):
        rng = np.random.default_rng(1000 + r)
        x, lo, hi = _bound_dependent(rng, 20000)
        y = _release(x, lo, hi, 5000 + r)
        a, b = bndp.estimate(y, SPEC, lower=lo, upper=hi, n_boot=100, rng=r).mean_interval
        hit += a <= x.mean() <= b
    assert hit >= 35, hit


def test_scaled_histogram_reads_the_value_grid_by_cells():
    # the scaled model places each support position on every row's range by linear
    # interpolation onto a value grid; a bin's mass must be the mass of the placed values
    # in it. Counting a grid value wholly in the bin holding it moved about half a grid
    # cell of density across every edge (a bias that stays while the sampling noise
    # shrinks: at 10^6 rows it was twice the noise in the first bin)
    from bndp.estimation._result import _cell_shares, _hist, _point_bins
    from bndp.estimation._scaled import X_POINTS, _place

    rng = np.random.default_rng(8)
    n = 20000
    lo = rng.uniform(0, 20, n)
    hi = lo + rng.uniform(10, 90, n)
    u = np.linspace(0.0, 1.0, 41)
    g = rng.beta(0.6, 5.0, 41) + 0.01
    g /= g.sum()
    xs = np.linspace(lo.min(), hi.max(), X_POINTS)
    prob = g @ _place(u, lo, hi, np.full(n, 1.0 / n), xs)
    edges = np.concatenate((np.linspace(lo.min(), hi.max(), 9)[:-1], [hi.max()]))
    # the placed values' exact histogram
    v = lo[:, None] + u[None, :] * (hi - lo)[:, None]
    exact = np.histogram(v.ravel(), edges, weights=np.broadcast_to(g / n, v.shape).ravel())[0]
    cells = _hist(xs, prob, edges, cells=True)
    points = _hist(xs, prob, edges)
    assert abs(cells.sum() - 1.0) < 1e-12
    assert np.abs(cells - exact).max() < 1e-4, cells - exact      # 5e-5
    assert np.abs(points - exact).max() > 4e-4          # 5.3e-4: the points' bias
    # shares: rows sum to 1 within the edges, halves where an edge is a grid value
    B = _cell_shares(np.arange(5.0), np.array([0.0, 2.0, 4.0]))
    assert np.allclose(B, [[1, 0], [1, 0], [0.5, 0.5], [0, 1], [0, 1]])
    assert np.allclose(_point_bins(np.arange(5.0), np.array([0.0, 2.0, 4.0])),
                       [[1, 0], [1, 0], [0, 1], [0, 1], [0, 1]])
    # an estimate under the scaled model reads its histogram by cells
    y = bndp.sample(lo + (hi - lo) * rng.beta(0.6, 5.0, n), lower=lo, upper=hi, rng=rng,
                    mechanism="laplace", epsilon=1.0, sensitivity=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ScaledModelWarning)
        e = bndp.estimate(y, {"mechanism": "laplace", "epsilon": 1.0, "sensitivity": 1.0},
                          lower=lo, upper=hi, rng=1, n_boot=0, bounds_model="scaled")
    assert np.allclose(e.histogram(edges), _hist(e.support, e.probabilities, edges, True))


def test_scaled_references_hold_the_rows_own_spread():
    # a column's histogram varies with which rows hold which positions, not only with
    # how many rows hold each: each row's value falls in a bin or not, so a bin's mass
    # has a standard deviation near sqrt(p (1 - p) / N) (less where the rows' chances
    # differ). The bootstrap references of 0.9.0 held the counts' term alone: 0.29 to
    # 0.59 of it, and the bins' intervals covered 71 % in the battery
    from bndp.estimation._result import _hist

    rng = np.random.default_rng(4)
    x, lo, hi = _bound_dependent(rng, 20000)
    spec = SPEC
    y = bndp.sample(x, lower=lo, upper=hi, rng=rng, **spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ScaledModelWarning)
        e = bndp.estimate(y, spec, lower=lo, upper=hi, rng=5)
    edges = np.linspace(lo.min(), hi.max(), 9)
    p = e.histogram(edges)[:4]
    sd = _hist(e.support, e.boot_truth, edges, cells=True).std(axis=0, ddof=1)[:4]
    ratio = sd / np.sqrt(p * (1 - p) / x.size)
    assert np.all(ratio > 0.6) and np.all(ratio < 1.15), ratio
    assert np.all(ratio[p < 0.1] > 0.85), ratio
    # the population target has no row term (its reference is the fit itself)
    e2 = bndp.estimate(y, spec, lower=lo, upper=hi, rng=5, target="population")
    assert np.allclose(e2.boot_truth, e2.probabilities[None, :])


def _place_reference(u, lo, hi, w, xs):
    """The placement as the NumPy expression the compiled loop replaces."""
    X = xs.shape[0]
    step = (xs[-1] - xs[0]) / (X - 1)
    x = lo[:, None] + u[None, :] * (hi - lo)[:, None]
    f = np.clip((x - xs[0]) / step, 0.0, X - 1.0)
    k0 = np.minimum(np.floor(f).astype(np.int64), X - 2)
    t = f - k0
    T = np.zeros((u.shape[0], X))
    m = np.broadcast_to(np.arange(u.shape[0])[None, :], x.shape)
    ww = np.broadcast_to(w[:, None], x.shape)
    np.add.at(T, (m, k0), ww * (1.0 - t))
    np.add.at(T, (m, k0 + 1), ww * t)
    return T


def test_placement_kernels_match_the_numpy_expression():
    """The compiled placement of positions on rows (bndp._core.estimate) gives what the
    NumPy expression gives, to the rounding of its sums: rows inside the grid, a row
    ending exactly at its last value, positions 0 and 1; and one row at a time
    (``place_rows``) as the references' row term uses it. Mismatched shapes raise."""
    from bndp._core import estimate as kernels
    from bndp.estimation._scaled import _place

    rng = np.random.default_rng(3)
    n, M, X = 3000, 37, 101
    lo = rng.uniform(0.0, 20.0, n)
    hi = lo + rng.uniform(10.0, 90.0, n)
    lo[0], hi[1] = 0.0, 110.0                 # the grid's two ends
    w = rng.random(n)
    u = np.sort(np.concatenate(([0.0, 1.0], rng.random(M - 2))))
    xs = np.linspace(0.0, 110.0, X)
    want = _place_reference(u, lo, hi, w, xs)
    got = _place(u, lo, hi, w, xs)
    assert got.shape == (M, X)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * w.sum())
    assert got.sum() == pytest.approx(M * w.sum(), rel=1e-12)
    # the mean is kept exactly: each row's value is the weighted mean of its two shares
    np.testing.assert_allclose(got @ xs, (w[:, None] * (lo[:, None] + u[None, :]
                                                        * (hi - lo)[:, None])).sum(axis=0),
                               rtol=1e-12)
    pos = rng.integers(0, M, n).astype(np.int64)
    one = np.zeros(X)
    kernels.place_rows(u, pos, lo, hi - lo, float(xs[0]), float(xs[1] - xs[0]), one)
    ref = np.zeros(X)
    for r in range(n):
        ref += _place_reference(u[pos[r]:pos[r] + 1], lo[r:r + 1], hi[r:r + 1],
                                np.ones(1), xs)[0]
    np.testing.assert_allclose(one, ref, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="inconsistent shapes"):
        kernels.place_positions(u, lo, hi[:-1], w, 0.0, 1.1, np.zeros((M, X)))
    with pytest.raises(ValueError, match="inconsistent shapes"):
        kernels.place_rows(u, pos[:-1], lo, hi - lo, 0.0, 1.1, np.zeros(X))
    with pytest.raises(ValueError, match="outside u"):
        kernels.place_rows(u, np.full(n, M, dtype=np.int64), lo, hi - lo, 0.0, 1.1,
                           np.zeros(X))
    # a value that is not a number (which no validated input gives) lands at the grid's
    # first value, never outside it
    nan = np.zeros((M, X))
    kernels.place_positions(u, np.full(2, np.nan), hi[:2], w[:2], float(xs[0]),
                            float(xs[1] - xs[0]), nan)
    assert nan[:, 0].sum() == pytest.approx(M * w[:2].sum()) and nan[:, 1:].sum() == 0.0


def test_unique_pairs_is_numpys_unique_by_rows():
    """``unique_pairs`` (one numeric sort) gives ``np.unique(..., axis=0,
    return_inverse=True)``: float bounds (with -0.0 beside 0.0, which compare equal, and
    repeated pairs) and the integer (exponent, intervals) pairs of the row classes."""
    from bndp.estimation._scaled import unique_pairs

    rng = np.random.default_rng(5)
    lo = np.round(rng.uniform(0.0, 5.0, 4000), 1)
    hi = lo + np.round(rng.uniform(1.0, 3.0, 4000), 1)
    lo[:3] = [0.0, -0.0, 0.0]
    hi[:3] = 1.0
    for a, b in ((lo, hi), (rng.integers(-3, 3, 4000), rng.integers(10, 10**6, 4000)),
                 (rng.integers(-3, 3, 4000).astype(np.float64), hi)):
        pairs, inv = unique_pairs(a, b)
        want, want_inv = np.unique(np.stack((a, b), axis=1), axis=0, return_inverse=True)
        np.testing.assert_array_equal(pairs, want)
        np.testing.assert_array_equal(inv, np.ravel(want_inv))
    inv = unique_pairs(lo, hi)[1]
    assert inv[0] == inv[1] == inv[2]             # (0.0, 1), (-0.0, 1), (0.0, 1): one pair


def test_scaled_row_term_is_centred_where_rows_are_drawn(monkeypatch):
    """Above ``SPREAD_ROWS`` rows the references' row term is read from rows drawn once
    per estimate, whose deviations from their group's mean row have a mean of their own;
    it is subtracted, so the term's mean over replicates is zero. Uncentred, every
    replicate moved alike by that mean (here tens of its standard errors), and the
    intervals' widening by the replicates' mean error depended on the draw."""
    from bndp.estimation import _scaled

    rng = np.random.default_rng(6)
    N, m, B = 20000, 400, 2000
    lo = rng.uniform(0.0, 20.0, N)
    hi = lo + rng.uniform(10.0, 90.0, N)
    u = np.linspace(0.0, 1.0, 21)
    g = rng.random(21)
    p = g / g.sum()
    xs = np.linspace(lo.min(), hi.max(), 257)
    grp = np.zeros(N, dtype=np.int64)
    T = _scaled._place(u, lo, hi, np.full(N, 1.0 / N), xs)[None]
    monkeypatch.setattr(_scaled, "SPREAD_ROWS", m)
    out = _scaled._row_spread(g, u, lo, hi, grp, T, xs, B, np.random.default_rng(1))
    means = out @ xs                      # each replicate's row term of the mean
    se = means.std(ddof=1) / np.sqrt(B)
    assert abs(means.mean()) < 4 * se, (means.mean(), se)
    # what the drawn rows' deviations average to (the mean of a placement is exact): the
    # term would sit there without the centring
    rows = np.random.default_rng(1).choice(N, size=m, replace=False)
    w = hi - lo
    dev = ((lo[rows][:, None] + u[None, :] * w[rows][:, None])
           - (lo.mean() + u[None, :] * w.mean())) @ p
    offset = dev.sum() / m * np.sqrt(m / N)
    assert abs(offset) > 10 * se, (offset, se)


def test_scaled_estimate_is_fitted_finer_above_fine_rows(monkeypatch):
    """Above ``FINE_ROWS`` rows the estimate is fitted on a support ``FINE`` times the
    default spacing, while the bootstrap keeps the default support: its replicates and
    references are those of the default fit (the same bits for a seed), its truth (the
    population target's reference) is the default fit, not the finer estimate."""
    from bndp.estimation import _scaled

    rng = np.random.default_rng(8)
    x, lo, hi = _bound_dependent(rng, 6000)
    spec = SPEC
    y = bndp.sample(x, lower=lo, upper=hi, rng=rng, **spec)
    kw = dict(lower=lo, upper=hi, rng=3, n_boot=20, bounds_model="scaled")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ScaledModelWarning)
        base = bndp.estimate(y, spec, **kw)
        pop = bndp.estimate(y, spec, target="population", **kw)
        monkeypatch.setattr(_scaled, "FINE_ROWS", 1000)
        fine = bndp.estimate(y, spec, **kw)
        fine_pop = bndp.estimate(y, spec, target="population", **kw)
    assert not np.array_equal(fine.probabilities, base.probabilities)
    assert abs(fine.mean - base.mean) < 0.5 * (base.mean_interval[1] - base.mean_interval[0])
    np.testing.assert_array_equal(fine.boot, base.boot)
    np.testing.assert_array_equal(fine.boot_truth, base.boot_truth)
    m_base = base.profile.parts[0].A.shape[1]
    m_fine = fine.profile.parts[0].A.shape[1]
    assert m_fine > 1.5 * m_base, (m_fine, m_base)
    np.testing.assert_array_equal(pop.boot_truth[0], base.probabilities)
    np.testing.assert_array_equal(fine_pop.boot_truth[0], base.probabilities)
    assert not np.array_equal(fine_pop.boot_truth[0], fine.probabilities)
