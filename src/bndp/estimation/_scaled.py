r"""Per-row bounds under the scaled model: one distribution of the position in the row.

With per-row bounds the values usually depend on their bounds (a row's range is set from
what the row is). The scaled model assumes that the position of a true value in its row,

.. math:: u = \frac{x - l}{h - l} \in [0, 1],

has one distribution :math:`g` shared by all rows, whatever their bounds (a
location-scale family on the row's range): rows of any bounds then inform the same
:math:`g`, so bounds that differ on every row are no obstacle, and the column's
distribution is the mixture over its rows of :math:`g` placed on each row's range.

*The law of a row.* A row's release is its grid law: the kernel of its granularity
exponent and interval count ``n`` (:func:`bndp.mechanisms.window.plan_row`), so the rows of
one *class* (same exponent and ``n``, hence same width to a grid step) share one law in
grid indices. The support of :math:`g` is a grid of points :math:`u_m` on [0, 1] (spaced
``resolution`` times a typical row's noise scale in units of its width, finer near the
ends, as for fixed bounds), which a row of class ``c`` places at the grid index
:math:`\mathrm{round}(u_m n_c)`; the released index ``j`` is binned by :math:`j / n_c`
into the cells of the support (:math:`A_c`, bins x support, summed exactly from the
kernel as for fixed bounds).

*Groups.* Classes are pooled into at most ``SCALE_GROUPS`` groups of about equal row
counts by their noise scale relative to their width; a group's law is the row-weighted
mean :math:`\bar A = \sum_c N_c A_c / N` of its classes', and its bin counts are the sum
of theirs. The expected counts of a group are then exactly :math:`N \bar A g`, so the
likelihood of the pooled counts is an unbiased estimating equation (a composite
likelihood, consistent for :math:`g`); a sum of multinomials with laws that differ only a
little is slightly less variable than one multinomial of their mean, so the pooling costs
little precision and the bootstrap, which draws from the mean law, errs on the wide side.
The groups' counts are stacked into one vector whose law has the columns
:math:`(N_k/N)\bar A_k` stacked (columns summing to 1), and :math:`g` is fitted by the EM
of :mod:`bndp.estimation._em` over it.

*Values.* The column's distribution is :math:`\frac1N\sum_r\sum_m g_m
\delta(l_r + u_m(h_r - l_r))`, placed on a grid of ``X_POINTS`` values over the rows'
hull by linear interpolation (the mean exactly; quantiles to the grid's spacing).

*The bootstrap* draws, per group, :math:`N^*_k \sim \mathrm{Multinomial}(N_k, \hat g)`,
releases them through :math:`\bar A_k`, and fits again; a replicate's reference (for
``target="column"``) is its drawn positions placed on the group's rows, plus the spread
the column owes to which rows hold which positions (:func:`_row_spread`). Above
``FINE_ROWS`` rows the estimate is fitted on a support ``FINE`` times the default spacing,
whose bias (about the square of the spacing) would otherwise be of the order of the
standard error; the bootstrap keeps the default support, :math:`\hat g` being that
support's fit.

*The check.* Where the data allow, the model is checked: the released positions
:math:`j / n` of the rows with narrow ranges against those of wide ones, and of the rows
with low lower bounds against high ones, each half's mean residual against the fitted
model's prediction for its rows. A difference beyond ``CHECK_Z`` standard errors warns
(:class:`bndp.estimation.ScaledModelWarning`) and is recorded in
:attr:`bndp.Estimate.model_check`.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._core import estimate as _estimate
from .._laws import window
from .._laws.lattice import Step
from .._laws.step import step_intervals
from ..exceptions import ScaledModelWarning
from ._em import _fit, _gap_for
from ._law import _Banded, _kernel_vector, _support
from ._profile import Profile, _ProfilePart

#: the most groups of row classes the per-row scaled model keeps apart (each adds a block
#: of bins to the EM: its cost grows with the groups)
SCALE_GROUPS = 4
#: the rows' quantile of relative noise scale that spaces the support
SUPPORT_QUANTILE = 0.5
#: values on the grid of the column's distribution under the scaled model
X_POINTS = 2049
#: the standard errors beyond which the model check warns
CHECK_Z = 3.5
#: above FINE_ROWS rows the estimate is fitted on a support FINE times the default
#: spacing, and the bootstrap (its replicates and their truth) stays on the default one.
#: The support's spacing biases the fit by about its square (the battery's per-row Laplace
#: column at 10^6 rows: -0.004 to -0.009, one standard deviation; spacing halved: +0.0035),
#: which grows against the standard error as the square root of the rows (0.15 of it at
#: 20,000 rows); the bootstrap's columns are drawn from a fit on its own support, so its
#: replicates carry no such bias, and their spread is the same to within its sampling.
FINE = 0.5
FINE_ROWS = 50_000


def unique_pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pairs ``(a[i], b[i])`` (sorted, as rows) and each row's index among
    them: ``np.unique(..., axis=0)`` by one numeric sort (many times faster than the
    structured one): of one integer key where both are integers whose ranges' product
    fits, else of the complex numbers ``a + ib`` (which sort by ``a``, then ``b``; finite
    floats, as bounds are; 3 times faster than ``np.lexsort`` on 10^6 pairs)."""
    a, b = np.asarray(a), np.asarray(b)
    key = None
    if a.dtype.kind in "iu" and b.dtype.kind in "iu" and a.size:
        a0, b0 = int(a.min()), int(b.min())
        span = int(b.max()) - b0 + 1
        if (int(a.max()) - a0 + 1) * span < 2**62:
            key = (a.astype(np.int64) - a0) * span + (b.astype(np.int64) - b0)
    if key is None:
        key = np.empty(a.shape[0], dtype=np.complex128)
        key.real = a
        key.imag = b
    order = np.argsort(key, kind="stable")
    sa, sb = a[order], b[order]
    new = np.ones(a.shape[0], dtype=bool)
    new[1:] = (sa[1:] != sa[:-1]) | (sb[1:] != sb[:-1])
    grp = np.cumsum(new) - 1
    inv = np.empty(a.shape[0], dtype=np.int64)
    inv[order] = grp
    return np.stack((sa[new], sb[new]), axis=1), inv


class _StackedLaw:
    """The EM's view of the stacked groups: ``A`` (stacked bins x support, columns
    summing to 1) with its banded products."""

    def __init__(self, A: np.ndarray) -> None:
        self.A = np.ascontiguousarray(A)
        self.AT = np.ascontiguousarray(A.T)
        self.forward = _Banded(self.AT)
        self.backward = _Banded(self.A)


def _classes(y: np.ndarray, lo: np.ndarray, hi: np.ndarray, fam, what: str):
    """Per row: its class (index into the returned plans) and released grid index; the
    classes' plans. Raises where a released value is not an output of its row."""
    dq = float(fam.sensitivity)
    target = window.serving_target(float(fam.target), dq)
    if fam.lattice is None:
        e, _ = window.grid_exponent(target, dq, hi - lo, lo, hi)
    elif isinstance(fam.lattice, Step):   # a step not a power of two: exact intervals
        e = np.zeros(lo.shape, dtype=np.int64)
    else:                                 # the integer law: every row on its lattice
        e = np.full(lo.shape, fam.lattice, dtype=np.int64)
    e = np.broadcast_to(np.asarray(e, dtype=np.int64), lo.shape)
    n = np.empty(lo.shape[0], dtype=np.int64)
    from .._core import window as _window
    if isinstance(fam.lattice, Step):
        n[:] = step_intervals(lo, hi, fam.lattice.k)
    else:
        for ev in np.unique(e):
            s = np.flatnonzero(e == ev)
            n[s] = _window.gw_intervals(np.ascontiguousarray(lo[s]),
                                        np.ascontiguousarray(hi[s]), int(ev))
    _, cls = unique_pairs(e, n)
    first = np.full(int(cls.max()) + 1, -1, dtype=np.int64)
    first[cls[::-1]] = np.arange(cls.shape[0] - 1, -1, -1)
    plans = [fam.row(float(lo[i]), float(hi[i])) for i in first]
    gamma = np.array([p.gamma for p in plans])[cls]
    nr = n
    j = np.rint((y - lo) / gamma)
    ok = (j >= 0) & (j <= nr)
    jj = np.where(ok, j, 0).astype(np.int64)
    ok &= (lo + jj.astype(np.float64) * gamma) == y
    if not ok.all():
        k = int(np.flatnonzero(~ok)[0])
        raise ValueError(
            f"the released value at position {k} is not an output of {what} on "
            f"its row's bounds (its outputs are the grid points lower + j * "
            f"{float(gamma[k])!r}): was it released with other settings (epsilon, "
            "sensitivity, bounds, mechanism, mode)?")
    return cls, jj, plans


def _class_law(plan, u: np.ndarray, mid: np.ndarray, steps: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """``A_c`` (bins x support) of one class and the bin of each of its grid indices;
    ``steps``: the class's mean width in grid steps (``n`` to ``n + 1``: a position ``u``
    lies at the grid index ``round(u * steps)``, at most ``n``)."""
    n = int(plan.n)
    M = u.shape[0]
    i = np.clip(np.rint(u * steps), 0, n).astype(np.int64)
    bj = np.searchsorted(mid, np.arange(n + 1) / steps, side="right")
    lo_b = np.searchsorted(bj, np.arange(M), side="left")
    hi_b = np.searchsorted(bj, np.arange(M), side="right") - 1
    w, D = _kernel_vector(plan.kernel, n)
    cpad = np.concatenate(([0.0], np.cumsum(w)))
    top = 2 * D + 1
    hi_i = np.clip(hi_b[:, None] - i[None, :] + D + 1, 0, top)
    lo_i = np.clip(lo_b[:, None] - i[None, :] + D, 0, top)
    A = np.maximum(cpad[hi_i] - cpad[lo_i], 0.0)
    A[hi_b < lo_b] = 0.0
    A /= A.sum(axis=0, keepdims=True)
    return A, bj


def _place(u: np.ndarray, lo: np.ndarray, hi: np.ndarray, wts: np.ndarray,
           xs: np.ndarray) -> np.ndarray:
    """``T[m, k]``: the weighted share of the rows ``(lo, hi)`` (weights ``wts``) whose
    position ``u[m]`` falls at grid value ``xs[k]``, by linear interpolation between the
    two nearest grid values (the mean exactly; the compiled loop
    :func:`bndp._core.estimate.place_positions`)."""
    T = np.zeros((u.shape[0], xs.shape[0]))
    step = (xs[-1] - xs[0]) / (xs.shape[0] - 1)
    _estimate.place_positions(_f64(u), _f64(lo), _f64(hi), _f64(wts), float(xs[0]),
                              float(step), T)
    return T


def _f64(a: np.ndarray) -> np.ndarray:
    """``a`` as a C-contiguous float64 array (no copy where it is one)."""
    return np.ascontiguousarray(a, dtype=np.float64)


#: rows drawn for the bootstrap references' row term (:func:`_row_spread`)
SPREAD_ROWS = 50_000


def _row_spread(g: np.ndarray, u: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                grp: np.ndarray, T: np.ndarray, xs: np.ndarray, n_boot: int,
                gen: np.random.Generator) -> np.ndarray:
    r"""The bootstrap references' row term (``n_boot`` x the value grid): what a column's
    histogram owes to *which* rows hold which positions, beyond how many rows hold each
    (the counts' term, placed by the group's mean row, ``T[k]``). For rows :math:`r`
    with positions :math:`u_r \sim \hat g`, the deviations
    :math:`d_r = \mathrm{place}_r(u_r) - T_{k(r)}^\top e_{u_r}` have mean zero given
    :math:`u_r` and are independent of the counts; their mean over the column, of variance
    :math:`\mathrm{E}\,d^2 / N`, is read from ``SPREAD_ROWS`` rows drawn at random (every
    row of a smaller column) and scaled by :math:`\sqrt{m / N}`. Without it the
    references were the expected column given the counts, and the histogram's intervals
    missed the rows' own spread (the scaled Laplace column's bins covered 71 %).

    The drawn rows' deviations are centred: a row's :math:`d_r` has mean zero only summed
    over its whole group (a row with a high lower bound places every position above its
    group's mean row), so their sum over drawn rows has a mean of its own,
    :math:`\sum_r \mathrm{E}\,d_r = \sum_m \hat g_m (\sum_r \mathrm{place}_r(u_m) -
    \sum_k c_k T_k[m])` (:math:`c_k` the drawn rows of group :math:`k`), the same in every
    replicate, which is subtracted. Uncentred (before 0.15.0), it moved every replicate's
    reference alike, and the replicates' mean error, which widens the intervals
    (:func:`._result._normal`), depended on which rows were drawn (10^6 rows: the mean's
    interval 0.024 to 0.123 wide over six bootstrap seeds of one release; 0.024 with
    every row)."""
    N = lo.shape[0]
    X = xs.shape[0]
    M = u.shape[0]
    m = min(N, SPREAD_ROWS)
    rows = np.arange(N) if m == N else gen.choice(N, size=m, replace=False)
    l, w, kr = _f64(lo[rows]), _f64((hi - lo)[rows]), grp[rows]
    u = _f64(u)
    pg = g / g.sum()
    cdf = np.cumsum(pg)
    step = float((xs[-1] - xs[0]) / (X - 1))
    x0 = float(xs[0])
    out = np.empty((n_boot, X))
    G = T.shape[0]
    centre: np.ndarray | float = 0.0           # every row drawn: zero, not computed
    if m < N:
        ck = np.bincount(kr, minlength=G).astype(np.float64)
        centre = pg @ (_place(u, l, hi[rows], np.ones(m), xs)
                       - np.tensordot(ck, T, axes=1))
    for b in range(n_boot):
        pos = np.minimum(np.searchsorted(cdf, gen.random(m), side="right"), M - 1)
        placed = np.zeros(X)
        _estimate.place_rows(u, pos, l, w, x0, step, placed)
        c = np.bincount(kr * M + pos, minlength=G * M).reshape(G, M).astype(np.float64)
        mean_row = np.einsum("km,kmx->x", c, T)
        out[b] = (placed - mean_row - centre) / m
    return out * np.sqrt(m / N)


def fit_scaled(y: np.ndarray, lo: np.ndarray, hi: np.ndarray, fam, what: str,
               resolution: float, max_support: int, n_boot: int, target: str,
               gen: np.random.Generator, tol: float, max_iter: int,
               gap_tol: float | str | None, pairs: np.ndarray | None = None,
               inv: np.ndarray | None = None) -> dict:
    """The scaled model's fit of a column with per-row bounds (see the module docstring):
    the column's distribution on a value grid, its bootstrap replicates and references,
    whether every fit converged, and the model check. ``pairs``, ``inv``: the distinct
    ``(lower, upper)`` pairs and each row's, where known."""
    N = y.shape[0]
    cls, j, plans = _classes(y, lo, hi, fam, what)
    C = len(plans)
    nc = np.array([p.n for p in plans], dtype=np.int64)
    rel = np.array([float(p.kernel.scale_grid) for p in plans]) / nc    # noise / width
    rows_c = np.bincount(cls, minlength=C).astype(np.float64)
    # the support: resolution times a typical row's relative noise scale (the rows'
    # SUPPORT_QUANTILE quantile, weighted by rows), on a reference grid as fine as the
    # finest row's
    order_r = np.argsort(rel)
    cum = np.cumsum(rows_c[order_r]) / N
    t_rel = float(rel[order_r[np.searchsorted(cum, SUPPORT_QUANTILE)]])
    n_ref = int(max(nc.max(), 64))
    gap_tol = _gap_for(gap_tol, t_rel)          # (a fine row's noise over its width)
    # groups: classes of about equal row counts by relative noise scale
    G = min(SCALE_GROUPS, C)
    at = np.empty(C)
    at[order_r] = cum - rows_c[order_r] / (2.0 * N)      # a class's middle row's share
    gidx = np.unique(np.minimum(np.floor(at * G), G - 1).astype(np.int64),
                     return_inverse=True)[1].ravel()
    Gs = int(gidx.max()) + 1
    byc = np.argsort(cls, kind="stable")
    ends = np.cumsum(rows_c.astype(np.int64))
    steps = np.empty(C)        # a class's mean width in grid steps
    start = 0
    for c in range(C):
        rows = byc[start:ends[c]]
        start = ends[c]
        steps[c] = float(np.mean((hi[rows] - lo[rows]) / plans[c].gamma))
    classes = _Classes(plans, cls, j, byc, ends, steps, gidx, Gs)

    def fit_on(s: np.ndarray) -> _ScaledFit:
        sf = _scaled_law(classes, s / n_ref)
        g, _, ok = _fit(sf.P, float(N), sf.law, tol, max_iter, gap_tol, start=sf.g0)
        sf.g, sf.ok = g[0], bool(ok[0])
        return sf

    # the estimate's fit: above FINE_ROWS rows on a support FINE times as fine as the
    # default one (where max_support or resolution=0 leave it finer; see FINE), else on
    # the default support; the bootstrap's fit is on the default support (the estimate's
    # own where that is the same support, none without replicates)
    s_boot = _support(n_ref, t_rel * n_ref, resolution, max_support)
    s_est = (_support(n_ref, t_rel * n_ref, resolution * FINE, max_support)
             if N > FINE_ROWS else s_boot)
    est = fit_on(s_est)
    # (without intervals the default support's fit is not needed)
    bs = est if np.array_equal(s_est, s_boot) or n_boot == 0 else fit_on(s_boot)
    # the column's values: rows placed by their group, on a value grid
    xs = np.linspace(float(lo.min()), float(hi.max()), X_POINTS)
    # each distinct pair of bounds once, weighted by its rows (a pair's rows share a class)
    if pairs is None or inv is None:
        pairs, inv = unique_pairs(lo, hi)
    first = np.full(len(pairs), -1, dtype=np.int64)
    first[inv[::-1]] = np.arange(N - 1, -1, -1)
    pw = np.bincount(inv, minlength=len(pairs)).astype(np.float64)
    pg = gidx[cls[first]]
    Ng, share = est.Ng, est.Ng / N           # (rows per group: the same on any support)

    def placed(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # per group, its mean row's placement of every position (T[k]); their mix
        T = np.stack([_place(u, pairs[pg == k, 0], pairs[pg == k, 1], pw[pg == k] / Ng[k],
                             xs) for k in range(Gs)])
        return T, np.tensordot(share, T, axes=1)

    T_e, Tall_e = placed(est.u)
    prob = est.g @ Tall_e
    out = {"support": xs, "probabilities": prob, "converged": est.ok, "classes": C,
           "check": _check(est.g, cls, est.bin_row, est.u, est.pred, est.pred2, rel, lo)}
    if n_boot == 0:
        out.update(boot=np.empty((0, X_POINTS)), boot_truth=np.empty((0, X_POINTS)))
        return out
    T, Tall = (T_e, Tall_e) if bs is est else placed(bs.u)
    u, M, gh = bs.u, bs.u.shape[0], bs.g
    Pb = np.empty((n_boot, Gs * M))
    ref = np.zeros((n_boot, X_POINTS))
    pgh = gh / gh.sum()
    for k in range(Gs):
        nk = int(Ng[k])
        nstar = gen.multinomial(nk, pgh, size=n_boot)
        ref += (nstar / N) @ T[k]
        Ak = bs.Abar[k].T                      # support x bins
        for b in range(n_boot):
            occ = np.flatnonzero(nstar[b])
            draws = gen.multinomial(nstar[b, occ], Ak[occ])
            Pb[b, k * M:(k + 1) * M] = draws.sum(axis=0) / N
    gb, _, okb = _fit(Pb, float(N), bs.law, tol, max_iter, gap_tol, start=bs.g0)
    boot = gb @ Tall
    if target != "column":
        # the bootstrap's truth: the distribution its columns are drawn from
        ref = np.broadcast_to(gh @ Tall, boot.shape).copy()
    else:
        ref += _row_spread(gh, u, lo, hi, gidx[cls], T, xs, n_boot, gen)
    out.update(boot=boot, boot_truth=ref, converged=bool(est.ok and bs.ok and okb.all()),
               profile=Profile([_ProfilePart(est.law.A, est.P[0], float(N), est.g, 1.0,
                                             Tall_e)]))
    return out


class _Classes:
    """The row classes as the scaled laws read them: plans, each row's class and released
    grid index, the rows by class (``byc``, cut at ``ends``), each class's mean width in
    grid steps and group, and the number of groups."""

    __slots__ = ("Gs", "byc", "cls", "ends", "gidx", "j", "plans", "steps")

    def __init__(self, plans, cls, j, byc, ends, steps, gidx, Gs) -> None:
        self.plans, self.cls, self.j, self.byc, self.ends = plans, cls, j, byc, ends
        self.steps, self.gidx, self.Gs = steps, gidx, Gs


class _ScaledFit:
    """The scaled model's law on one support ``u``: the groups' mean laws ``Abar``, their
    row counts ``Ng``, the stacked law and bin proportions ``P``, the EM's start ``g0``,
    each row's bin, the classes' expected binned positions (``pred``, ``pred2``: first and
    second moments, per support point), and once fitted, ``g`` and ``ok``."""

    __slots__ = ("Abar", "Ng", "P", "bin_row", "g", "g0", "law", "ok", "pred", "pred2", "u")

    def __init__(self, u, Abar, Ng, law, P, g0, bin_row, pred, pred2) -> None:
        self.u, self.Abar, self.Ng, self.law, self.P = u, Abar, Ng, law, P
        self.g0, self.bin_row, self.pred, self.pred2 = g0, bin_row, pred, pred2
        self.g: np.ndarray = g0
        self.ok = False


def _scaled_law(cl: _Classes, u: np.ndarray) -> _ScaledFit:
    """The scaled model's law of the released positions on the support ``u`` (see the
    module docstring): each class's law, pooled by group, stacked."""
    N = cl.cls.shape[0]
    C = len(cl.plans)
    M = u.shape[0]
    mid = (u[:-1] + u[1:]) / 2.0
    Abar = np.zeros((cl.Gs, M, M))
    counts = np.zeros((cl.Gs, M))
    bin_row = np.empty(N, dtype=np.int64)
    pred = np.zeros((C, M))          # class law's mean binned position, per support point
    pred2 = np.zeros((C, M))
    start = 0
    for c in range(C):
        rows = cl.byc[start:cl.ends[c]]
        start = cl.ends[c]
        A, bj = _class_law(cl.plans[c], u, mid, float(cl.steps[c]))
        k = int(cl.gidx[c])
        Abar[k] += rows.shape[0] * A
        b = bj[cl.j[rows]]
        bin_row[rows] = b
        counts[k] += np.bincount(b, minlength=M)
        pred[c] = u @ A
        pred2[c] = (u * u) @ A
    Ng = counts.sum(axis=1)
    Abar /= Ng[:, None, None]
    law = _StackedLaw(np.concatenate([Abar[k] * (Ng[k] / N) for k in range(cl.Gs)], axis=0))
    P = (counts.ravel() / N)[None, :]
    g0 = 0.5 / M + 0.5 * (P[0] @ law.A)
    g0 /= g0.sum()
    return _ScaledFit(u, Abar, Ng, law, P, g0, bin_row, pred, pred2)


def _check(g: np.ndarray, cls: np.ndarray, bin_row: np.ndarray, u: np.ndarray,
           pred: np.ndarray, pred2: np.ndarray, rel: np.ndarray, lo: np.ndarray) -> dict:
    """The model check: for the rows split at the median of their relative noise scale
    (narrow against wide ranges) and at the median lower bound, the difference between
    the two halves' mean residual (released binned position less the fitted model's
    expectation for the row) in standard errors; warns beyond ``CHECK_Z``."""
    m1 = pred @ g                      # per class: expected binned position
    v = np.maximum(pred2 @ g - m1 * m1, 1e-12)
    res = u[bin_row] - m1[cls]
    var = v[cls]
    out = {}
    for name, key in (("width", rel[cls]), ("lower", lo)):
        med = np.median(key)
        a = key < med
        if not a.any() or a.all():
            a = key <= med
        if not a.any() or a.all():
            out[name] = float("nan")
            continue
        na, nb = int(a.sum()), int((~a).sum())
        d = res[a].mean() - res[~a].mean()
        se = math.sqrt(var[a].sum() / na ** 2 + var[~a].sum() / nb ** 2)
        out[name] = float(d / se)
    bad = [k for k, z in out.items() if abs(z) > CHECK_Z]
    if bad:
        warnings.warn(
            "per-row bounds: the released positions in the row of "
            + " and ".join({"width": "narrow and wide rows", "lower": "rows with low and "
                            "high lower bounds"}[k] for k in bad)
            + f" differ by {', '.join(f'{abs(out[k]):.1f}' for k in bad)} standard errors: "
            "the values' position in their row does not have one distribution for all "
            "rows, as the scaled model assumes; the estimate may be biased (estimate the "
            "kinds of rows apart, or with bounds_model='strata' where each distinct pair "
            "of bounds has many rows)", ScaledModelWarning, stacklevel=5)
    return out
