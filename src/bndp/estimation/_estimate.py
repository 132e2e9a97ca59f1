"""The entry point :func:`bndp.estimate`: arguments, row groups, frames."""

from __future__ import annotations

import math
from typing import Any, Mapping, Protocol, overload

import numpy as np

from .._parallel import check_workers
from .._random import RNGLike, as_generator
from ..mechanisms import window
from . import _em
from ._bootstrap import _combine, _fit_group, _Group
from ._inputs import (_bounds_array, _family, _grid_index, _is_frame, _values, released_name,
                      resolve_integer)
from ._law import _BinnedLaw
from ._profile import Profile, _ProfilePart
from ._result import Estimate, _check_level
from ._scaled import fit_scaled, unique_pairs

#: defaults of :func:`estimate`
RESOLUTION = 0.5
MAX_SUPPORT = 512
N_BOOT = 200
TOL = 1e-3
MAX_ITER = 2000
#: ``bounds_model="auto"`` estimates per-row bounds by strata (each distinct pair apart)
#: where there are at most STRATA_MAX pairs of at least STRATA_ROWS rows each, else by the
#: scaled model
STRATA_MAX = 32
STRATA_ROWS = 1000


class _Frame(Protocol):
    """A data frame, as the types see it: what has ``columns`` (pandas, Polars, PyArrow
    Table), which a column of values (an array, a Series) has not."""

    @property
    def columns(self) -> Any: ...


@overload
def estimate(released: _Frame, spec_or_mechanism: Mapping[str, Any], *, lower: Any = None,
             upper: Any = None, level: float = ..., n_boot: int = ..., rng: RNGLike = ...,
             target: str = ..., nulls: str = ..., resolution: float = ...,
             max_support: int = ..., tol: float = ..., max_iter: int = ...,
             gap_tol: float | str | None = ..., workers: int = ...
             ) -> dict[str, Estimate]: ...


@overload
def estimate(released: Any, spec_or_mechanism: Any, *, lower: Any = None, upper: Any = None,
             level: float = ..., n_boot: int = ..., rng: RNGLike = ..., target: str = ...,
             nulls: str = ..., resolution: float = ..., max_support: int = ...,
             tol: float = ..., max_iter: int = ..., gap_tol: float | str | None = ...,
             bounds_model: str = ..., workers: int = ...) -> Estimate: ...


def estimate(released: Any, spec_or_mechanism: Any, *, lower: Any = None, upper: Any = None,
             level: float = 0.95, n_boot: int = N_BOOT, rng: RNGLike = None,
             target: str = "column", nulls: str = "raise", resolution: float = RESOLUTION,
             max_support: int = MAX_SUPPORT, tol: float = TOL,
             max_iter: int = MAX_ITER, gap_tol: float | str | None = "auto",
             bounds_model: str = "auto", workers: int = 1) -> Estimate | dict[str, Estimate]:
    r"""Estimate the distribution of the true values behind a released column, and its
    mean, variance, quantiles and histogram with confidence intervals.

    Maximum likelihood over the exact law of the release (EM / Richardson–Lucy
    deconvolution [Ric72]_ [Luc74]_ accelerated by SQUAREM [VR08]_): the released counts
    :math:`c_b` are a mixture :math:`\sum_m g_m A_{bm}` of the known laws of the true
    values, and :math:`\hat g = rg\max_g \sum_b c_b \ln (Ag)_b` over distributions
    :math:`g` on the release grid (thinned to ``resolution`` times the noise scale). The
    intervals come from a parametric bootstrap through the same law; the histogram
    corrects the released one by the fit smoothed as in Silverman et al. [SJWN90]_. See
    :mod:`bndp.estimation` for the details. This is post-processing of released data: it
    spends no privacy budget.

    Parameters
    ----------
    released : array_like, pandas Series, pyarrow array, or a data frame
        The released values (any shape; flattened). A data frame (pandas, Polars, PyArrow)
        with a whole release spec as ``spec_or_mechanism`` estimates every column of the
        spec, reading per-row bounds from the frame's bound columns.
    spec_or_mechanism : mechanism, mapping or release spec
        How the values were released: the :class:`bndp.BoundedLaplace` or
        :class:`bndp.BoundedGaussian` that released them (fixed bounds, the default grid
        law), a spec column's settings (``spec["age"]``: mechanism, epsilon, sensitivity,
        delta, lower, upper, as for :func:`bndp.privatize`), or, with a frame, the whole
        spec ``{column: settings}``.
    lower, upper : float or array_like, optional
        Per-row bounds (one per released value) when the settings name bound columns or
        the values were released by :func:`bndp.sample` with array bounds; they replace the
        bounds of ``spec_or_mechanism``.
    level : float, default 0.95
        Confidence level of the intervals.
    n_boot : int, default 200
        Bootstrap replicates (0: no intervals; the interval methods then raise).
    rng : None, int, SeedSequence, BitGenerator or Generator
        Randomness of the bootstrap (the estimate itself is deterministic).
    target : {"column", "population"}, default "column"
        What the intervals cover: the statistics of the released column's own true values
        (fixed), or of a population the column is a random sample of (wider: it adds the
        sampling variation of the true values).
    nulls : {"raise", "omit"}, default "raise"
        Missing released values (NaN, nulls): an error, or left out.
    resolution : float, default 0.5
        Spacing of the support in units of the noise scale (0: every grid point).
    max_support : int, default 512
        The most support points per row class (the spacing grows to fit).
    tol : float, default 1e-3
        Stop when one SQUAREM cycle raises the log-likelihood of the whole column by less;
        finite and >= 0.
    max_iter : int, default 2000
        The most SQUAREM cycles per fit, an integer >= 1.
    bounds_model : {"auto", "strata", "scaled"}, default "auto"
        How per-row bounds are modelled (fixed bounds ignore it). ``"strata"``: each
        distinct pair of bounds has its own distribution of true values, estimated from
        its rows alone (needs many rows per pair). ``"scaled"``: the position of a value
        in its row, ``(x - lower) / (upper - lower)``, has one distribution shared by all
        rows (values may depend on their bounds through their range: a location-scale
        family on the row's range), so bounds may differ on every row; the assumption is
        checked where the data allow (narrow against wide rows, low against high lower
        bounds; a :class:`bndp.estimation.ScaledModelWarning` where they disagree beyond
        noise, recorded in ``model_check``); see :mod:`bndp.estimation._scaled`.
        ``"auto"``: strata where there are at most 32 distinct pairs of at least 1000
        rows each, else scaled.
    gap_tol : float, None or "auto", default "auto"
        Also iterate until the log-likelihood is certified within ``gap_tol`` nats of its
        maximum (the duality bound ``N (max_m d_m - 1)`` of the EM multipliers ``d``; the
        log-likelihood is concave), every fit and every bootstrap replicate's, by sequential
        quadratic programming steps after EM (as mix-SQP [KCSA20]_; see
        :mod:`bndp.estimation`). ``None``: the cycle rule ``tol`` alone, which can stop on
        a flat ridge 0.4 to 3 nats below the maximum (the noise a large part of the
        width), where the mean moves by more than its standard deviation, unseen by the
        bootstrap (a log-payment column, Gaussian release: a bias of 1.5 standard
        errors, its interval covering 85 % of 40 releases; certified, 95 %). ``"auto"``:
        0.1 for a law whose noise scale is at least a third of its range's width
        (``AUTO_GAP_NOISE`` in ``bndp.estimation._em``), the cycle rule alone where the
        noise is narrower (there the certified fit's histogram, spikier, was further from
        the column's than the released values' in two settings of the coverage battery,
        at up to twice the time). Up to 0.10.x the default was ``None``.
    workers : int, default 1
        Threads for the bootstrap's fits where they run compiled (a Laplace mechanism's
        law, whose kernel is two-sided geometric: ``bndp.estimation._law._Geometric``);
        -1 for every CPU. The same values for every number of threads (the replicates are
        fitted independently); the other laws' fits, the draws and the histogram's
        bandwidth run on one thread.

    Returns
    -------
    Estimate or dict
        The estimated distribution with ``mean``, ``mean_interval``, ``variance``,
        ``quantile(q)``, ``histogram(edges)``, ``distribution`` and the other intervals; a
        dict ``{column: Estimate}`` for a frame with a whole spec.

    Raises
    ------
    ValueError
        A released value that is not an output of the given law (another mechanism,
        epsilon, sensitivity or bounds), a missing value with ``nulls="raise"``, no
        values, or a law it cannot estimate: ``mode="continuous"`` (raw doubles of the
        continuous law, not on a grid), a half-line or a multivariate box.

    Examples
    --------
    >>> import bndp, numpy as np
    >>> true = np.random.default_rng(0).exponential(5.0, 5000).clip(0, 60)
    >>> m = bndp.BoundedLaplace(0.25, sensitivity=1.0, lower=0, upper=60)
    >>> released = m.sample(true, rng=1)
    >>> est = bndp.estimate(released, m, rng=2, n_boot=50)
    >>> round(float(true.mean()), 1), round(float(released.mean()), 1), round(est.mean, 1)
    (5.1, 9.6, 5.0)
    >>> lo, hi = est.mean_interval
    >>> bool(lo < true.mean() < hi)
    True

    A released frame, with its spec:

    >>> import pandas as pd
    >>> spec = {"age": {"lower": 0, "upper": 60, "sensitivity": 1, "epsilon": 0.25}}
    >>> frame = bndp.privatize(pd.DataFrame({"age": true}), spec, rng=3)
    >>> est = bndp.estimate(frame, spec, rng=4, n_boot=50)
    >>> round(est["age"].mean, 1)
    5.3
    """
    level = _check_level(level)
    if isinstance(n_boot, (bool, np.bool_)) or not isinstance(n_boot, (int, np.integer)) \
            or n_boot < 0 or n_boot == 1:
        raise ValueError(f"`n_boot` must be 0 or an integer >= 2; got {n_boot!r}")
    if target not in ("column", "population"):
        raise ValueError(f"`target` must be 'column' or 'population'; got {target!r}")
    if gap_tol is not None and gap_tol != "auto":
        if isinstance(gap_tol, (str, bool, np.bool_)) or not (
                isinstance(gap_tol, (int, float, np.integer, np.floating))
                and math.isfinite(gap_tol) and gap_tol > 0):
            raise ValueError(f"`gap_tol` must be 'auto', None or a finite number > 0; got "
                             f"{gap_tol!r}")
        gap_tol = float(gap_tol)
    if nulls not in ("raise", "omit"):
        raise ValueError(f"`nulls` must be 'raise' or 'omit'; got {nulls!r}")
    if not (isinstance(resolution, (int, float, np.integer, np.floating))
            and math.isfinite(resolution) and resolution >= 0):
        raise ValueError(f"`resolution` must be a finite number >= 0; got {resolution!r}")
    if isinstance(max_support, bool) or not isinstance(max_support, (int, np.integer)) \
            or max_support < 2:
        raise ValueError(f"`max_support` must be an integer >= 2; got {max_support!r}")
    if isinstance(tol, (bool, np.bool_)) or not (
            isinstance(tol, (int, float, np.integer, np.floating))
            and math.isfinite(tol) and tol >= 0):
        raise ValueError(f"`tol` must be a finite number >= 0; got {tol!r}")
    if isinstance(max_iter, (bool, np.bool_)) or not isinstance(max_iter, (int, np.integer)) \
            or max_iter < 1:
        raise ValueError(f"`max_iter` must be an integer >= 1; got {max_iter!r}")
    if bounds_model not in ("auto", "strata", "scaled"):
        raise ValueError("`bounds_model` must be 'auto', 'strata' or 'scaled'; got "
                         f"{bounds_model!r}")
    workers = check_workers(workers)
    if _is_frame(released):
        return _estimate_frame(released, spec_or_mechanism, level=level, n_boot=n_boot,
                               rng=rng, target=target, nulls=nulls, resolution=resolution,
                               max_support=max_support, tol=tol, max_iter=max_iter,
                               gap_tol=gap_tol, bounds_model=bounds_model, workers=workers)
    with _em._workers(workers):
        return _estimate_column(released, spec_or_mechanism, lower, upper, level, n_boot,
                                rng, target, nulls, resolution, max_support, tol,
                                max_iter, gap_tol, bounds_model)


def _estimate_column(released: Any, spec_or_mechanism: Any, lower: Any, upper: Any,
                     level: float, n_boot: int, rng: RNGLike, target: str, nulls: str,
                     resolution: float, max_support: int, tol: float, max_iter: int,
                     gap_tol: float | str | None, bounds_model: str) -> Estimate:
    """:func:`estimate` of one released column, its arguments checked."""
    if isinstance(spec_or_mechanism, Mapping):
        spec_or_mechanism = dict(spec_or_mechanism)
        for k, b in (("lower", lower), ("upper", upper)):
            if b is not None:
                spec_or_mechanism[k] = b
    fam, lo0, hi0 = _family(spec_or_mechanism, released_name(released))
    y, miss = _values(released, "released")
    lo_b = lo0 if lower is None else lower
    hi_b = hi0 if upper is None else upper
    for key, b in (("lower", lo_b), ("upper", hi_b)):
        if isinstance(b, str):
            raise ValueError(f"{fam.what}: {key} is the bound column {b!r}: pass the frame "
                             f"(bndp.estimate(frame, spec)) or the bounds as `{key}=`")
        if b is None:
            raise ValueError(f"{fam.what}: `{key}` is needed")
    resolve_integer(fam, released, lo_b, hi_b)
    per_row = np.ndim(lo_b) > 0 or np.ndim(hi_b) > 0
    if per_row:
        lo_a = _bounds_array(lo_b, y.shape[0], "lower")
        hi_a = _bounds_array(hi_b, y.shape[0], "upper")
    if miss is not None:
        if nulls == "raise":
            first = int(np.flatnonzero(miss)[0])
            raise ValueError(f"{int(miss.sum())} missing released value(s) (NaN/null), the "
                             f"first at position {first}; pass nulls='omit' to leave them out")
        keep = ~miss
        y = y[keep]
        if per_row:
            lo_a, hi_a = lo_a[keep], hi_a[keep]
    if y.shape[0] == 0:
        raise ValueError("no released values to estimate from")
    gen = as_generator(rng)
    groups: list[_Group] = []
    if per_row:
        if not (lo_a < hi_a).all():
            bad = int(np.flatnonzero(~(lo_a < hi_a))[0])
            raise ValueError(f"per-row bounds need lower < upper; position {bad} has "
                             "lower >= upper")     # (per-row bounds are data: not quoted)
        pairs, inv = unique_pairs(lo_a, hi_a)
        sizes = np.bincount(inv, minlength=len(pairs))
        model = bounds_model
        if model == "auto":
            model = ("strata" if len(pairs) <= STRATA_MAX and int(sizes.min()) >= STRATA_ROWS
                     else "scaled")
        if model == "scaled":
            f = fit_scaled(y, lo_a, hi_a, fam, fam.what, resolution, max_support,
                           int(n_boot), target, gen, float(tol), int(max_iter),
                           gap_tol, pairs, inv)
            return Estimate(f["support"], f["probabilities"], int(y.shape[0]), level,
                            target, f["converged"], f["classes"], f["boot"],
                            f["boot_truth"], float(np.mean(y)), (), "scaled", f["check"],
                            f.get("profile"))
        order = np.argsort(inv, kind="stable")
        ends = np.cumsum(sizes)
        start = 0
        for gi, (a, b) in enumerate(pairs):
            rows = order[start:ends[gi]]
            start = ends[gi]
            plan = fam.row(float(a), float(b))
            groups.append(_group(y[rows], plan, fam.what, resolution, max_support,
                                 public_bounds=False))
    else:
        plan = fam.row(float(lo_b), float(hi_b))
        groups.append(_group(y, plan, fam.what, resolution, max_support))
    fits = [_fit_group(grp, int(n_boot), target, gen, float(tol), int(max_iter),
                       gap_tol)
            for grp in groups]
    xs, g, gb, gr, parts = _combine(groups, fits)
    return Estimate(xs, g, int(y.shape[0]), level, target, all(f[3] for f in fits),
                    len(groups), gb, gr, float(np.mean(y)), parts,
                    "strata" if per_row else "fixed", None,
                    _profile(groups, fits, xs) if n_boot else None)


def _profile(groups: list[_Group], fits: list, xs: np.ndarray) -> Profile:
    """The likelihood-ratio ranges' view of the groups' fits (each group's support placed
    on the column's support ``xs``)."""
    Ntot = sum(grp.N for grp in groups)
    out = []
    for grp, f in zip(groups, fits):
        pos = np.searchsorted(xs, grp.law.values)
        T = np.zeros((pos.size, xs.size))
        T[np.arange(pos.size), pos] = 1.0
        out.append(_ProfilePart(grp.law.A, grp.counts / grp.N, grp.N, f[0],
                                grp.N / Ntot, T))
    return Profile(out)


_LAWS: dict = {}


def _group(y: np.ndarray, plan: window.RowPlan, what: str, resolution: float,
           max_support: int, public_bounds: bool = True) -> _Group:
    key = (id(plan.kernel), plan.lower, plan.upper, plan.n, resolution, max_support)
    hit = _LAWS.get(key)
    if hit is None or hit[0] is not plan.kernel:
        if len(_LAWS) > 64:
            _LAWS.clear()
        hit = (plan.kernel, _BinnedLaw(plan, resolution, max_support))
        _LAWS[key] = hit
    law = hit[1]
    j = _grid_index(y, plan, what, public_bounds)
    fine = np.bincount(j, minlength=plan.n + 1)
    # bin the fine counts: bins are runs of fine indices lo_b..hi_b
    counts = np.add.reduceat(fine.astype(np.float64), law.lo)
    return _Group(law, counts, fine)



def _estimate_frame(frame: Any, spec: Any, **kw: Any) -> dict[str, Estimate]:
    """Every column of a release spec, from a released frame (per-row bounds read from the
    frame's bound columns)."""
    import narwhals.stable.v2 as nw

    from .._release import parse_spec

    if not isinstance(spec, Mapping):
        raise TypeError("with a data frame, `spec_or_mechanism` must be the release spec "
                        "{column: settings}")
    try:
        plans = parse_spec(spec)
    except ValueError:
        raise
    f = nw.from_native(frame, eager_only=False)
    if hasattr(f, "collect"):
        f = f.collect()
    out: dict[str, Estimate] = {}
    for p in plans:
        if p.name not in f.columns:
            raise ValueError(f"spec column {p.name!r} not found in the frame; columns are: "
                             f"{', '.join(map(str, f.columns))}")
        vals = np.asarray(f.get_column(p.name).cast(nw.Float64).to_numpy(), dtype=np.float64)
        bnds = {}
        for key in ("lower", "upper"):
            b = getattr(p, key)
            if isinstance(b, str):
                if b not in f.columns:
                    raise ValueError(f"spec column {p.name!r}, key {key!r}: bound column "
                                     f"{b!r} not found in the frame")
                bnds[key] = np.asarray(f.get_column(b).cast(nw.Float64).to_numpy(),
                                       dtype=np.float64)
        col_kw = dict(kw)
        if p.nulls == "keep":   # the release kept missing cells: they carry nothing
            col_kw["nulls"] = "omit"
        out[p.name] = estimate(vals, p, lower=bnds.get("lower"), upper=bnds.get("upper"),
                               **col_kw)
    return out
