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
    k = np.rint(np.ldexp(x, -plan.exponent)).astype(np.int64) - plan.kl
    assert ((k >= 0) & (k <= plan.n)).all()
    assert np.array_equal(plan.grid()[k], x), "a draw is off the grid"
    return np.bincount(k, minlength=plan.n + 1)
