"""The law of the released values of one row class, binned onto the thinned support, and
releases drawn through it (the bootstrap's)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core import estimate
from ..mechanisms import window


#: support points whose spread laws are built at once (:meth:`_BinnedLaw.spread`)
SPREAD_CHUNK = 32


class _BinnedLaw:
    """The law of one row class ``[lower, upper]`` on a thinned support: support indices
    ``s`` (fine grid indices), the bin of every fine output index, and ``A`` (bins x
    support, columns summing to 1)."""

    def __init__(self, plan: window.RowPlan, resolution: float, max_support: int) -> None:
        k = plan.kernel
        n = int(plan.n)
        self.plan = plan
        self.lower = float(plan.lower)
        self.gamma = float(plan.gamma)
        self.n = n
        s = _support(n, float(k.scale_grid), resolution, max_support)
        self.s = s
        # bin edges: midpoints between support points (fine indices lo_b..hi_b)
        mid = (s[:-1] + s[1:] + 1) // 2
        self.lo = np.concatenate(([0], mid))
        self.hi = np.concatenate((mid - 1, [n]))
        w, D = _kernel_vector(k, n)
        cpad = np.concatenate(([0.0], np.cumsum(w)))
        top = 2 * D + 1
        hi_i = np.clip(self.hi[:, None] - s[None, :] + D + 1, 0, top)
        lo_i = np.clip(self.lo[:, None] - s[None, :] + D, 0, top)
        A = np.maximum(cpad[hi_i] - cpad[lo_i], 0.0)
        A /= A.sum(axis=0, keepdims=True)
        self.A = np.ascontiguousarray(A)
        self.AT = np.ascontiguousarray(A.T)
        self._cpad, self._D = cpad, D
        self._spread: dict[int, np.ndarray] = {}
        #: the EM's two products, support -> bins (``G @ AT``) and bins -> support
        #: (``R @ A``): by running sums where the kernel is two-sided geometric (the
        #: Laplace mechanism's), else banded where the noise is narrow against the range
        geo = _Geometric.of(w, D, s, self.lo, self.hi, n)
        self.forward: Any = _Banded(self.AT) if geo is None else geo.forward
        self.backward: Any = _Banded(self.A) if geo is None else geo.backward
        if geo is not None:
            #: the EM step and SQUAREM's cycles compiled (``bndp.estimation._em``)
            self.em = geo.em
            self.squarem = geo.squarem

    def spread(self, points: int = 16) -> np.ndarray:
        """The law of the bins for a true value spread evenly and symmetrically over the cell
        of each interior support point (the fine indices binned to it, at most ``points``
        of them, mean the support point), the end points staying at the bounds: what the bootstrap releases, so that
        its true columns, like real ones, are not confined to the support. Computed once
        per ``points`` (read-only)."""
        if points in self._spread:
            return self._spread[points]
        s, D, cpad = self.s, self._D, self._cpad
        M = len(s)
        top = 2 * D + 1
        out = self.A.copy()
        m = np.arange(1, M - 1)
        h = np.minimum(s[m] - self.lo[m], self.hi[m] - s[m])
        q = np.minimum(points, 2 * h + 1)
        # the points sharing a cell's half-width and count of true values, a few dozen at
        # a time: (points x bins x values) laws, each column normalised, averaged
        for hv, qv in np.unique(np.stack((h, q), axis=1), axis=0):
            off = np.rint(np.linspace(-int(hv), int(hv), int(qv))).astype(np.int64)
            ms = m[(h == hv) & (q == qv)]
            for k in range(0, ms.size, SPREAD_CHUNK):
                mk = ms[k: k + SPREAD_CHUNK]
                i = (s[mk][:, None] + off[None, :])[:, None, :]     # symmetric
                hi_i = np.clip(self.hi[None, :, None] - i + D + 1, 0, top)
                lo_i = np.clip(self.lo[None, :, None] - i + D, 0, top)
                P = np.maximum(cpad[hi_i] - cpad[lo_i], 0.0)
                P /= P.sum(axis=1, keepdims=True)
                out[:, mk] = P.mean(axis=2).T
        out.setflags(write=False)          # kept: the fit's and the bandwidth's bootstraps
        self._spread[points] = out
        return out

    @property
    def values(self) -> np.ndarray:
        """The support's true values ``lower + s gamma``."""
        return self.lower + self.s.astype(np.float64) * self.gamma

    def bin_counts(self, j: np.ndarray) -> np.ndarray:
        """Counts per bin of released fine indices ``j``."""
        b = np.searchsorted(self.hi, j, side="left")
        return np.bincount(b, minlength=len(self.s)).astype(np.float64)


#: the banded products: output columns per block, and the entries left out (below this
#: fraction of the matrix's largest; a Laplace kernel falls that low 37 scales away)
BAND_BLOCK = 32
BAND_DROP = 1e-16


class _Banded:
    """``x @ mat`` for a non-negative matrix whose entries above ``BAND_DROP`` times its
    largest lie in a band: the output's columns in blocks of ``BAND_BLOCK``, each the
    product of the columns of ``x`` that meet the block's envelope of such entries (one
    matrix product per block), or the plain product where the envelopes cover half the
    matrix or more. The entries left out change a product by less than ``BAND_DROP``
    times ``x``'s row sums; both EM products leave out the same ones, so the EM is that
    of the banded law."""

    __slots__ = ("blocks", "mat")

    def __init__(self, mat: np.ndarray) -> None:
        self.mat = mat
        thr = BAND_DROP * float(mat.max())
        blocks, work = [], 0
        for j0 in range(0, mat.shape[1], BAND_BLOCK):
            j1 = min(j0 + BAND_BLOCK, mat.shape[1])
            rows = np.flatnonzero((mat[:, j0:j1] > thr).any(axis=1))
            r0, r1 = (int(rows[0]), int(rows[-1]) + 1) if rows.size else (0, 0)
            blocks.append((j0, j1, r0, r1, np.ascontiguousarray(mat[r0:r1, j0:j1])))
            work += (r1 - r0) * (j1 - j0)
        self.blocks = blocks if 2 * work < mat.size else None

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if self.blocks is None:
            return x @ self.mat
        out = np.zeros((x.shape[0], self.mat.shape[1]))
        for j0, j1, r0, r1, b in self.blocks:
            if r1 > r0:
                np.matmul(x[:, r0:r1], b, out=out[:, j0:j1])
        return out


#: the most a kernel's weights (normalised) may differ, summed over the offsets, from a
#: two-sided geometric kernel's for the EM to use :class:`_Geometric`'s products (the
#: release's Laplace kernels: 6e-12 and below at epsilon 0.1 to 4; a column of the binned
#: law then differs from the geometric law's by a few times this in total)
GEO_TOL = 1e-10


class _Geometric:
    """The EM's products with the binned law of a two-sided geometric kernel ``w(d) ∝ q^|d|``
    in O(support) per row (``bndp._core.estimate.geometric_forward`` and
    ``geometric_backward``) instead of O(support x band): such a law is semiseparable. The
    entry of bin ``b`` and support point ``m`` is ``q^(lo_b - s_m) e_b / Z_m`` below the
    diagonal (``b > m``: the bin lies right of the point), ``q^(s_m - hi_b) e_b / Z_m``
    above it, with ``e_b = (1 - q^width_b) / (1 - q)`` and ``Z_m`` the column's mass on the
    row ``0..n`` (the same normalisation as :class:`_BinnedLaw`'s ``A``); so each product is
    two running sums. Used where the kernel's weights are within ``GEO_TOL`` (total) of
    the geometric kernel's (:meth:`of`)."""

    __slots__ = ("c",)

    def __init__(self, c: np.ndarray) -> None:
        self.c = c

    @classmethod
    def of(cls, w: np.ndarray, D: int, s: np.ndarray, lo: np.ndarray, hi: np.ndarray,
           n: int) -> "_Geometric | None":
        """The products for the kernel weights ``w`` (offsets ``-D..D``) on the support
        ``s`` with bins ``lo..hi`` of the row ``0..n``, or None where ``w`` is not within
        ``GEO_TOL`` of a two-sided geometric kernel (its ratio read from the weights at 0
        and at the farthest offset of at least a thousandth of the centre's weight, where
        the release's tables follow a geometric law to a few 1e-9, their integer rounding:
        the ratio read further out, in a table's geometric tail, differs by a few 1e-8 and
        the kernels by a few 1e-7)."""
        if D < 1 or not (w[D] > 0):
            return None
        far = np.flatnonzero(w[D:] >= 1e-3 * w[D])
        K = int(far[-1]) if far.size else 0
        if K < 1:
            return None
        lq = (math.log(float(w[D + K])) - math.log(float(w[D]))) / K
        if not (lq < 0 and math.isfinite(lq)):
            return None
        geo = np.exp(lq * np.abs(np.arange(-D, D + 1, dtype=np.float64)))
        if float(np.abs(w / w.sum() - geo / geo.sum()).sum()) > GEO_TOL:
            return None
        em1 = math.expm1(lq)

        def e(L: np.ndarray) -> np.ndarray:    # sum_{k < L} q^k
            return np.expm1(lq * L.astype(np.float64)) / em1

        def pw(k: np.ndarray) -> np.ndarray:   # q^k, k >= 0
            return np.exp(lq * k.astype(np.float64))

        M = len(s)
        c = np.zeros((8, M))
        c[0] = e(hi - s + 1) + e(s - lo + 1) - 1.0
        c[1] = 1.0 / (e(n - s + 1) + e(s + 1) - 1.0)
        c[2] = e(hi - lo + 1)
        c[3, 1:] = pw(lo[1:] - lo[:-1])
        c[4, 1:] = pw(lo[1:] - s[:-1])
        c[5, :-1] = pw(hi[1:] - hi[:-1])
        c[6, :-1] = pw(s[1:] - hi[:-1])
        c[7, :-1] = pw(s[1:] - s[:-1])
        return cls(np.ascontiguousarray(c))

    def forward(self, G: np.ndarray) -> np.ndarray:
        """``G @ A.T``: the law of the bins for each row of ``G`` (rows x support)."""
        out = np.empty_like(G, dtype=np.float64)
        estimate.geometric_forward(_c64(G), self.c, out)
        return out

    def backward(self, R: np.ndarray) -> np.ndarray:
        """``R @ A``: each row of ``R`` (rows x bins) read back onto the support."""
        out = np.empty_like(R, dtype=np.float64)
        estimate.geometric_backward(_c64(R), self.c, out)
        return out

    def em(self, G: np.ndarray, P: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One EM step of every row of ``G`` against the bin proportions ``P`` (rows x
        bins, broadcast): :func:`._em._em`'s next iterate, log-likelihood per
        observation and largest multiplier, in one compiled pass."""
        G = _c64(G)
        P = _c64(np.broadcast_to(P, G.shape))
        R = G.shape[0]
        out, L, dmax = np.empty_like(G), np.empty(R), np.empty(R)
        estimate.geometric_em(G, P, self.c, out, L, dmax)
        return out, L, dmax

    def squarem(self, G: np.ndarray, P: np.ndarray, act: np.ndarray, done: np.ndarray,
                thr: float, gthr: float | None, cycles: int) -> int:
        """:func:`._em._squarem`'s cycles on the rows ``act`` of ``G`` (C-contiguous
        float64, in place) against ``P``, marking ``done`` (bool), compiled: the same
        steps and rules, row by row. Returns the cycles left."""
        if not (G.flags.c_contiguous and G.dtype == np.float64 and done.dtype == bool
                and done.flags.c_contiguous):
            raise TypeError("_Geometric.squarem: G must be C-contiguous float64, done bool")
        return estimate.geometric_squarem(
            G, _c64(P), self.c, np.ascontiguousarray(act, dtype=np.int64),
            done.view(np.uint8), thr, 0.0 if gthr is None else gthr, gthr is not None,
            cycles)


def _c64(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float64)


#: the support is ``EDGE_FINE`` times finer within ``EDGE_SCALES`` noise scales of either
#: bound, where the truncation makes the law of a true value change shape
EDGE_FINE = 4
EDGE_SCALES = 6.0


def _support(n: int, t: float, resolution: float, max_support: int) -> np.ndarray:
    """Support indices on the grid ``0..n`` (``t``: the noise scale in grid steps): every
    ``resolution * t`` steps, ``EDGE_FINE`` times finer within ``EDGE_SCALES * t`` of the
    ends, both ends included; all spacings grown together until at most ``max_support``
    points remain."""
    if resolution == 0 and n + 1 <= max_support:
        return np.arange(n + 1, dtype=np.int64)
    f = 1.0
    W = int(math.ceil(EDGE_SCALES * t))
    while True:
        # a spacing is capped at n (one step spans the row; no int of an inf for a huge
        # resolution)
        kc = max(1, math.floor(min(n, resolution * t * f)))
        kf = max(1, math.floor(min(n, resolution * t * f / EDGE_FINE)))
        if resolution == 0:
            kc = kf = max(1, int(math.floor(f)))
        if 2 * W >= n:
            parts = [np.arange(0, n + 1, kf)]
        else:
            parts = [np.arange(0, W, kf), np.arange(W, n - W, kc), n - np.arange(W, -1, -kf)]
        s = np.unique(np.concatenate(parts + [np.array([0, n])])).astype(np.int64)
        if len(s) <= max_support:
            return s
        f *= 1.05 * len(s) / max_support


def _kernel_vector(k: window.WindowLaw, n: int) -> tuple[np.ndarray, int]:
    """The kernel weights ``w(d)`` for ``d = -D..D`` (float64), ``D <= n``: the table and
    the geometric tails to ``2^-60`` of their mass (the rest is below double precision of
    every probability)."""
    N = int(k.N)
    tab = np.diff(k.cum).astype(np.float64)              # offsets -N..N
    if k.tailw and n > N:
        p = k.tail_ratio
        reach = int(min(n - N, math.ceil(60 * math.log(2) / -math.log(p)) + 1))
        w1 = k.tailw * math.ldexp(k.tm, -k.sbits)
        tail = w1 * np.exp(np.arange(reach, dtype=np.float64) * math.log(p))
        return np.concatenate((tail[::-1], tab, tail)), N + reach
    if N > n:                                              # the table reaches past the row
        return tab[N - n: N + n + 1], n
    return tab, N



def _band(A: np.ndarray, mass: float = 1e-12) -> tuple[np.ndarray, int]:
    """Columns of ``A`` cut to the bins ``m - K..m + K`` (``K`` the smallest half-width
    leaving at most ``mass`` outside in every column), renormalised, as rows (support x
    2K + 1), zero-padded at the ends."""
    M = A.shape[0]
    c = np.cumsum(A, axis=0)
    K = 0
    for K in range(M):
        lo = np.arange(M) - K - 1
        hi = np.arange(M) + K
        below = np.where(lo >= 0, c[np.clip(lo, 0, M - 1), np.arange(M)], 0.0)
        above = 1.0 - np.where(hi < M, c[np.clip(hi, 0, M - 1), np.arange(M)], 1.0)
        if float((below + above).max()) <= mass:
            break
    idx = np.arange(-K, K + 1)[None, :] + np.arange(M)[:, None]
    ok = (idx >= 0) & (idx < M)
    out = np.where(ok, A.T[np.arange(M)[:, None], np.clip(idx, 0, M - 1)], 0.0)
    out /= out.sum(axis=1, keepdims=True)
    return out, K


def _release_counts(law: _BinnedLaw, band: tuple[np.ndarray, int], nstar: np.ndarray,
                    gen: np.random.Generator) -> np.ndarray:
    """Bin counts of a column with ``nstar[m]`` true values at support point ``m``,
    released through the law (one multinomial per occupied support point)."""
    P, K = band
    M = P.shape[0]
    occ = np.flatnonzero(nstar)
    draws = gen.multinomial(nstar[occ], P[occ])
    out = np.zeros(M)
    estimate.band_counts(np.ascontiguousarray(draws, dtype=np.int64), occ, K, out)
    return out

