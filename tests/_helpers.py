"""Shared statistical helpers for the tests."""

from __future__ import annotations

import numpy as np
from scipy import stats


def chi2_pvalue(counts, probs, min_expected=5.0):
    """Pearson chi-square p-value, adjacent cells merged until each expects >= min_expected."""
    counts = np.asarray(counts, dtype=np.float64)
    exp_c = np.asarray(probs, dtype=np.float64) * counts.sum()
    obs, ex = [], []
    co = ce = 0.0
    for c, e in zip(counts, exp_c):
        co += c
        ce += e
        if ce >= min_expected:
            obs.append(co)
            ex.append(ce)
            co = ce = 0.0
    if ce > 0 and ex:
        obs[-1] += co
        ex[-1] += ce
    o, e = np.array(obs), np.array(ex)
    return float(stats.chi2.sf(((o - e) ** 2 / e).sum(), len(e) - 1))


def grid_counts(plan, x):
    """Counts of draws ``x`` over ``plan.grid()``; asserts every draw is a grid point."""
    x = np.ravel(np.asarray(x, dtype=np.float64))
    g = plan.grid()
    k = np.searchsorted(g, x)
    assert ((k >= 0) & (k < len(g))).all(), "a draw outside the grid"
    assert np.array_equal(g[k], x), "a draw is off the grid"
    return np.bincount(k, minlength=len(g))


def assert_independent_streams(x, y, laws_x, laws_y):
    """The ordered grid draws ``x`` and ``y`` came from two independent streams.

    ``laws_x[i]``, ``laws_y[i]``: the ``(plan, clipped true value)`` position ``i`` was drawn
    with. The grid law repeats values, so distinct values prove nothing; a reused stream
    repeats the draws themselves wherever the laws coincide. Independent draws agree at
    position ``i`` with probability ``sum_v P_x(v) P_y(v)``: the number of agreeing positions
    must be that sum's worth (within 6 sd + 3), and the sequences must differ."""
    x, y = np.ravel(x), np.ravel(y)
    assert len(x) == len(y) == len(laws_x) == len(laws_y)
    memo = {}

    def agree(lx, ly):
        key = (id(lx[0]), float(lx[1]), id(ly[0]), float(ly[1]))
        if key not in memo:
            (pa, va), (pb, vb) = lx, ly
            _, ia, ib = np.intersect1d(pa.grid(), pb.grid(), assume_unique=True,
                                       return_indices=True)
            memo[key] = float(pa.pmf(va)[ia] @ pb.pmf(vb)[ib])
        return memo[key]

    q = np.array([agree(a, b) for a, b in zip(laws_x, laws_y)])
    hits, mu, sd = int(np.sum(x == y)), q.sum(), np.sqrt(np.sum(q * (1 - q)))
    assert not np.array_equal(x, y)
    assert abs(hits - mu) <= 6 * sd + 3, f"{hits} equal positions; independent: {mu:.1f}"
