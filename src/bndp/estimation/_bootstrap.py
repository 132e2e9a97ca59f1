"""The fit of one group of rows (one law) with its parametric bootstrap, and the column's
distribution combined from its groups."""

from __future__ import annotations

import numpy as np

from ._em import _fit, _gap_for
from ._law import _band, _BinnedLaw, _release_counts
from ._smooth import Bandwidth, Part


class _Group:
    __slots__ = ("N", "counts", "fine", "law")

    def __init__(self, law: _BinnedLaw, counts: np.ndarray, fine: np.ndarray) -> None:
        self.law = law
        self.counts = counts
        self.N = float(counts.sum())
        self.fine = fine


def _fit_group(grp: _Group, n_boot: int, target: str, gen: np.random.Generator,
               tol: float, max_iter: int, gap_tol: float | str | None = None) -> tuple:
    """The fit of one group, its bootstrap fits and the replicates' references (all over
    the group's support), whether every fit converged, the histogram's bandwidth (a
    :class:`._smooth.Bandwidth`, calibrated on first use) and the bootstrap's released bin
    counts. ``gap_tol``: nats, None or ``"auto"``
    (:func:`._em._gap_for`)."""
    law = grp.law
    gap_tol = _gap_for(gap_tol, float(law.plan.kernel.scale_grid) / max(law.n, 1))
    P = (grp.counts / grp.N)[None, :]
    g, _, ok = _fit(P, grp.N, law, tol, max_iter, gap_tol)
    g = g[0]
    # the histogram's bandwidth: calibrated when a histogram is first asked for
    h = Bandwidth(law, grp.counts, g, grp.N, tol, max_iter, gap_tol)
    M = len(law.s)
    if n_boot == 0:
        return g, np.empty((0, M)), np.empty((0, M)), bool(ok[0]), h, np.empty((0, M))
    Nn = int(round(grp.N))
    nstar = gen.multinomial(Nn, g / g.sum(), size=n_boot)
    # columns cut where the mass left out draws one value in 10^4 replicates on average
    band = _band(law.spread(), 1e-4 / max(Nn, 1))
    Pb = np.empty((n_boot, M))
    for b in range(n_boot):
        Pb[b] = _release_counts(law, band, nstar[b], gen) / Nn
    gb, _, okb = _fit(Pb, grp.N, law, tol, max_iter, gap_tol)
    ref = nstar / Nn if target == "column" else np.broadcast_to(g, gb.shape)
    return (g, gb, np.asarray(ref, dtype=np.float64), bool(ok[0] and okb.all()), h,
            Pb * Nn)


def _combine(groups: list[_Group], fits: list) -> tuple:
    """The column's distribution and replicates over the union of the groups' supports,
    each group weighted by its row count, and the groups' histogram parts."""
    xs = np.unique(np.concatenate([grp.law.values for grp in groups]))
    Ntot = sum(grp.N for grp in groups)
    B = fits[0][1].shape[0]
    g = np.zeros(len(xs))
    gb = np.zeros((B, len(xs)))
    gr = np.zeros((B, len(xs)))
    parts = []
    for grp, (gg, bb, rr, _, h, cb) in zip(groups, fits):
        pos = np.searchsorted(xs, grp.law.values)
        w = grp.N / Ntot
        parts.append(Part(grp.law, w, gg, h, grp.fine, bb, cb))
        np.add.at(g, pos, w * gg)
        if B:
            gb[:, pos] += w * bb     # positions are distinct within a group
            gr[:, pos] += w * rr
    return xs, g, gb, gr, tuple(parts)

