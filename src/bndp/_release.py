"""The release pipeline: one spec ``{column: {key: value}}`` and one order of steps for
frames (:func:`bndp.privatize`), Spark, Dask and the CLI.

:func:`parse_spec` validates a whole spec and calibrates every column with scalar bounds
(building its mechanism once, from :mod:`bndp.mechanisms.registry`), without looking at any
data; :class:`ColumnPlan` then checks a column's data (:meth:`ColumnPlan.check`) and draws
its noise (:meth:`ColumnPlan.draw`) through bndp's mechanisms and :func:`bndp.sample`;
:func:`prepare` and :func:`draw` do both for every column of a narwhals frame. Nothing here
samples by itself.

Every release path (``bndp.privatize`` on frames, Spark, Dask, the CLI) runs the same
order: :func:`plan_release` (spec validated, every fixed-bounds mechanism built and its plan
certified, budget checked without charging), then the data checks and, on the eager paths,
the draws, and only then :func:`charge_release`, the one place a budget is charged. A
release that fails before the charge spends nothing.
"""

from __future__ import annotations

import inspect
import logging
import math
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ._columns import check_nulls
from ._ledger import _version
from ._testhooks import crash_point
from ._validation import check_on_outside
from ._values import approx, from_ints, wide_column
from .api import sample
from .budget import check_budget
from .calibrate import bounded_laplace_scale
from ._laws import window
from .mechanisms.registry import MECHANISMS, REGISTRY

_LOG = logging.getLogger("bndp")

__all__ = ["ColumnPlan", "parse_spec", "spec_costs", "SpecError", "ColumnDataError", "MECHANISMS",
           "BASE_KEYS",
           "plan_release", "charge_release", "column_details", "release_label", "Prepared",
           "prepare", "draw",
           "keyword_spec"]

BASE_KEYS = ("mechanism", "lower", "upper", "sensitivity", "epsilon", "delta", "on_outside",
             "nulls")


class SpecError(ValueError):
    """An invalid release spec (a ``ValueError``); the message names the column and key."""


class ColumnDataError(ValueError):
    """A column's data failed a check of :meth:`ColumnPlan.check` (a ``ValueError``).

    The message is the library's; the attributes let a front end word the same failure its
    own way (the command line names file rows and cells) without checking anything itself.

    Attributes
    ----------
    kind : str
        ``"missing"`` (a missing value with ``nulls="raise"``), ``"not_finite"`` (a value),
        ``"bound_not_finite"`` (a per-row bound), ``"bound_order"`` (per-row bounds with
        ``lower >= upper``), ``"calibration"`` (the rows' widths have no calibrated scale)
        or ``"outside"`` (a value outside its bounds with ``on_outside="raise"``).
    row : int or None
        The first bad row, 0-based, as an index into the arrays given to ``check`` (missing
        rows included); None for ``"calibration"`` (it concerns the rows together).
    column : str
        The column holding the bad cell: the released column, or for
        ``"bound_not_finite"`` the column of per-row bounds.
    value : float or None
        The bad value (``"not_finite"``, ``"outside"``).
    lower, upper : float or None
        The row's bounds (``"bound_order"``, ``"outside"``; scalar bounds as given, -inf or
        inf where the mechanism has none).
    detail : str or None
        ``"calibration"``: the calibration's own message.
    """

    _FIELDS = ("kind", "column", "row", "value", "lower", "upper", "detail")
    kind: str
    column: str
    row: int | None
    value: float | None
    lower: float | None
    upper: float | None
    detail: str | None

    def __init__(self, message: str, kind: str, column: str, row: int | None = None,
                 value: float | None = None, lower: float | None = None,
                 upper: float | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        for k, v in zip(self._FIELDS, (kind, column, row, value, lower, upper, detail)):
            setattr(self, k, v)

    def __reduce__(self):  # picklable with its attributes (raised on Spark and Dask workers)
        return (type(self), (self.args[0], *(getattr(self, k) for k in self._FIELDS)))


def _row(i: int) -> str:
    """A row in messages, as the command line counts the rows of a file (``i``: 0-based)."""
    return f"row {i + 1:,} (data rows counted from 1)"


def _where(col: str, key: str | None = None) -> str:
    return f"spec column {col!r}" + (f", key {key!r}" if key is not None else "")


def _ctor_options(cls: Any) -> tuple[str, ...]:
    """Keyword options of a mechanism's constructor beyond the spec's base keys (for
    example ``mode``), read from its signature so that new options flow through."""
    params = inspect.signature(cls.__init__).parameters
    return tuple(p for p in params if p not in ("self", *BASE_KEYS)
                 and params[p].kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        inspect.Parameter.KEYWORD_ONLY))


def mechanism_options(mechanism: str) -> tuple[str, ...]:
    """The mechanism-specific keys a spec column may carry."""
    opts = _ctor_options(REGISTRY[mechanism])
    if mechanism in ("laplace", "gaussian"):
        opts = opts + ("workers",)  # a sampling option of their ``sample``
    return opts


def _real(col: str, key: str, v: Any) -> float:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{_where(col, key)}: must be a real number; got {v!r}")
    return float(v)


class ColumnPlan:
    """One released column: its validated settings and, for scalar bounds, its calibrated
    mechanism. Picklable (shipped to Spark and Dask workers)."""

    def __init__(self, name: str, mechanism: str, lower: float | str | None,
                 upper: float | str | None, sensitivity: float, epsilon: float, delta: float,
                 on_outside: str, nulls: str, options: dict[str, Any], mech: Any) -> None:
        self.name = name
        self.mechanism = mechanism
        self.lower = lower
        self.upper = upper
        self.sensitivity = sensitivity
        self.epsilon = epsilon
        self.delta = delta
        self.on_outside = on_outside
        self.nulls = nulls
        self.options = options
        self.mech = mech

    def __repr__(self) -> str:
        return (f"ColumnPlan({self.name!r}, {self.mechanism}, lower={self.lower!r}, "
                f"upper={self.upper!r}, epsilon={self.epsilon!r}, delta={self.delta!r})")

    @property
    def per_row(self) -> bool:
        return isinstance(self.lower, str) or isinstance(self.upper, str)

    def bound_columns(self) -> list[str]:
        return [b for b in (self.lower, self.upper) if isinstance(b, str)]

    def cost(self) -> tuple[float, float]:
        """``(epsilon, delta)`` this column's release costs (its own guarantee)."""
        if self.mech is not None and self.mechanism == "constrained_laplace":
            return float(self.mech.epsilon), float(self.mech.delta)
        return self.epsilon, self.delta

    def describe(self) -> str:
        m = self.mech
        if m is None:
            return (f"bounded {'Laplace' if self.mechanism == 'laplace' else 'Gaussian'}, "
                    "per-row bounds (one kernel for every wide row, one per narrow width)")
        if self.mechanism == "laplace":
            return f"bounded Laplace scale b = {m.scale:.6g}"
        if self.mechanism == "gaussian":
            return f"bounded Gaussian sigma = {m.sigma:.6g}"
        return f"constrained Laplace scale = {m.sigma:.6g}" if m.sigma is not None else \
            "constrained Laplace (distance-dependent scale)"

    # data --------------------------------------------------------------------------------
    def check(self, values: np.ndarray, missing: np.ndarray | None,
              lo: np.ndarray | None = None, hi: np.ndarray | None = None) -> None:
        """Check a column's data before anything is drawn: missing values against
        ``nulls``, finiteness, per-row bounds (finite, ``lower < upper``) and their
        calibration, ``on_outside="raise"``. ``values``, ``lo``, ``hi``: float64 arrays of
        the column's length. The one implementation of these checks for every release path
        (frames, Spark, Dask, the command line).

        Raises :class:`ColumnDataError` (a ``ValueError``) at the first failure, in that
        order; its message gives the first bad row (0-based) and its attributes describe
        the failure for front ends that word it their own way."""
        name = self.name
        values = approx(values)
        if missing is not None and missing.any():
            if self.nulls == "raise":
                i = int(np.flatnonzero(missing)[0])
                raise ColumnDataError(
                    f"column {name!r}: {int(missing.sum())} missing value(s) (null/NaN), the "
                    f"first at {_row(i)}; set nulls='keep' in its spec to leave missing values "
                    "untouched", "missing", name, i)
            keep = ~missing
        else:
            keep = None
        v = values if keep is None else values[keep]
        rows = (lambda j: j) if keep is None else (lambda j: int(np.flatnonzero(keep)[j]))
        bad = ~np.isfinite(v)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise ColumnDataError(f"column {name!r}: {_row(rows(j))} holds {float(v[j])!r}, not "
                                  "a finite number", "not_finite", name, rows(j),
                                  value=float(v[j]))
        if self.per_row:
            lo_v = (np.full(v.shape, float(self.lower))  # type: ignore[arg-type]
                    if lo is None else (lo if keep is None else lo[keep]))
            hi_v = (np.full(v.shape, float(self.upper))  # type: ignore[arg-type]
                    if hi is None else (hi if keep is None else hi[keep]))
            for key, b in (("lower", lo_v), ("upper", hi_v)):
                nb = ~np.isfinite(b)
                if nb.any():
                    j = int(np.flatnonzero(nb)[0])
                    src = self.lower if key == "lower" else self.upper
                    raise ColumnDataError(
                        f"{_where(name, key)}: bound column {src!r} holds {float(b[j])!r} at "
                        f"{_row(rows(j))}; per-row bounds must be finite numbers",
                        "bound_not_finite", str(src), rows(j), value=float(b[j]))
            order = ~(lo_v < hi_v)
            if order.any():
                j = int(np.flatnonzero(order)[0])
                raise ColumnDataError(
                    f"{_where(name)}: per-row bounds need lower < upper; {_row(rows(j))} has "
                    f"lower = {float(lo_v[j])!r}, upper = {float(hi_v[j])!r}", "bound_order",
                    name, rows(j), lower=float(lo_v[j]), upper=float(hi_v[j]))
            if v.size:
                w = hi_v - lo_v
                try:  # the scale is monotone in the width: the extreme widths decide
                    bounded_laplace_scale(self.epsilon, self.sensitivity, 0.0,
                                          np.array([w.min(), w.max()]), self.delta)
                except (ValueError, OverflowError) as exc:
                    raise ColumnDataError(f"{_where(name)}: {exc}", "calibration", name,
                                          detail=str(exc)) from None
        else:
            lo_v, hi_v = self.lower, self.upper
        if self.on_outside == "raise" and v.size:
            lo_c = -math.inf if lo_v is None else lo_v
            hi_c = math.inf if hi_v is None else hi_v
            out = (v < lo_c) | (v > hi_c)
            if out.any():
                j = int(np.flatnonzero(out)[0])
                lo_j = float(lo_c if np.ndim(lo_c) == 0 else lo_c[j])  # type: ignore[index]
                hi_j = float(hi_c if np.ndim(hi_c) == 0 else hi_c[j])  # type: ignore[index]
                raise ColumnDataError(f"column {name!r}: {_row(rows(j))} holds {float(v[j])!r}, "
                                      "outside its bounds (on_outside='raise')", "outside", name,
                                      rows(j), value=float(v[j]), lower=lo_j, upper=hi_j)

    def draw(self, values: np.ndarray, gen: np.random.Generator,
             lo: np.ndarray | None = None, hi: np.ndarray | None = None) -> np.ndarray:
        """Release ``values`` (float64, no missing, checked) with this column's mechanism."""
        if values.size == 0:
            return np.empty(0)
        if not self.per_row:
            kw = {"workers": self.options["workers"]} if "workers" in self.options else {}
            return np.asarray(self.mech.sample(values, rng=gen, on_outside=self.on_outside, **kw),
                              dtype=np.float64)
        lo_v = np.float64(self.lower) if lo is None else lo
        hi_v = np.float64(self.upper) if hi is None else hi
        return np.asarray(sample(values,  # type: ignore[call-overload]
                                 mechanism=self.mechanism, epsilon=self.epsilon,
                                 sensitivity=self.sensitivity, lower=lo_v, upper=hi_v,
                                 delta=self.delta, rng=gen, on_outside=self.on_outside,
                                 **self.options), dtype=np.float64)


def _per_row_sample_options() -> tuple[str, ...]:
    params = inspect.signature(sample).parameters
    return tuple(p for p in params if p not in (
        "value", "mechanism", "epsilon", "sensitivity", "lower", "upper", "delta", "rng",
        "on_outside", "nulls"))


def _parse_column(col: str, entry: Any, memo: dict | None = None) -> ColumnPlan:
    if not isinstance(entry, Mapping):
        raise SpecError(f"{_where(col)}: must be a mapping of settings (mechanism, lower, "
                        f"upper, sensitivity, epsilon, ...); got {type(entry).__name__}")
    mechanism = entry.get("mechanism", "laplace")
    if not isinstance(mechanism, str) or mechanism not in MECHANISMS:
        raise SpecError(f"{_where(col, 'mechanism')}: must be one of {MECHANISMS}; got "
                        f"{mechanism!r}")
    opts_allowed = mechanism_options(mechanism)
    unknown = [k for k in entry if k not in BASE_KEYS and k not in opts_allowed]
    if unknown:
        raise SpecError(f"{_where(col, str(unknown[0]))}: unknown key for mechanism "
                        f"{mechanism!r}; allowed keys: {', '.join(BASE_KEYS + opts_allowed)}")
    for key in ("epsilon", "sensitivity"):
        if key not in entry:
            raise SpecError(f"{_where(col, key)}: missing (required)")
    eps = _real(col, "epsilon", entry["epsilon"])
    dq = _real(col, "sensitivity", entry["sensitivity"])
    delta = _real(col, "delta", entry.get("delta", 0.0))
    bounds: dict[str, float | str | None] = {}
    for key in ("lower", "upper"):
        if key not in entry:
            if mechanism == "constrained_laplace":
                bounds[key] = None
                continue
            raise SpecError(f"{_where(col, key)}: missing (required: a number, or the name of "
                            "a column holding per-row bounds)")
        b = entry[key]
        if isinstance(b, str):
            if mechanism not in ("laplace", "gaussian"):
                raise SpecError(f"{_where(col, key)}: per-row bounds from a column ({b!r}) "
                                "need mechanism 'laplace' or 'gaussian'")
            if b == col:
                raise SpecError(f"{_where(col, key)}: a column cannot bound itself")
            bounds[key] = b
        else:
            bounds[key] = _real(col, key, b)
    on_outside = entry.get("on_outside", "clip")
    try:
        check_on_outside(on_outside)
    except (ValueError, TypeError) as exc:
        raise SpecError(f"{_where(col, 'on_outside')}: {exc}") from None
    nulls = entry.get("nulls", "raise")
    try:
        check_nulls(nulls)
    except (ValueError, TypeError) as exc:
        raise SpecError(f"{_where(col, 'nulls')}: {exc}") from None
    options = {k: entry[k] for k in entry if k in opts_allowed}
    if "workers" in options:
        w = options["workers"]
        if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or (w < 1 and w != -1):
            raise SpecError(f"{_where(col, 'workers')}: must be a positive integer or -1; "
                            f"got {w!r}")
    lo, hi = bounds["lower"], bounds["upper"]
    cls = REGISTRY[mechanism]
    ctor = {k: v for k, v in options.items() if k != "workers"}
    mech = None
    # columns with the same settings share one calibrated mechanism (calibrated once)
    key_ = repr((mechanism, eps, dq, delta, lo, hi, sorted(ctor.items())))
    if memo is not None and key_ in memo:
        return ColumnPlan(col, mechanism, lo, hi, dq, eps, delta, on_outside, nulls, options,
                          memo[key_])
    try:
        if isinstance(lo, str) or isinstance(hi, str):
            # per-row bounds: drawn by bndp.sample, calibrated per distinct width when the
            # data is seen; check the privacy parameters (and the options) now
            allowed = _per_row_sample_options()
            for k in ctor:
                if k not in allowed:
                    raise SpecError(f"{_where(col, k)}: not supported with per-row bounds")
            if mechanism == "gaussian" and delta != 0.0:
                raise SpecError(f"{_where(col, 'delta')}: the bounded Gaussian mechanism is "
                                f"pure epsilon-DP; delta must be 0, got {delta!r}")
            bounded_laplace_scale(eps, dq, 0.0, 1.0, delta)
            if options.get("mode", "exact") in ("exact", None):
                # the kernel every wide row will use, planned now (before any charge)
                window.plan_wide(window.LAPLACE if mechanism == "laplace" else window.GAUSSIAN,
                                 eps - math.log1p(-delta) if mechanism == "laplace" else eps,
                                 dq)
            for key, b in (("lower", lo), ("upper", hi)):
                if not isinstance(b, str) and not math.isfinite(b):  # type: ignore[arg-type]
                    raise SpecError(f"{_where(col, key)}: must be finite; got {b!r}")
        elif mechanism == "laplace":
            mech = cls(eps, sensitivity=dq, lower=lo, upper=hi, delta=delta, **ctor)
        elif mechanism == "gaussian":
            if delta != 0.0:
                raise SpecError(f"{_where(col, 'delta')}: the bounded Gaussian mechanism is "
                                f"pure epsilon-DP; delta must be 0, got {delta!r}")
            mech = cls(eps, sensitivity=dq, lower=lo, upper=hi, **ctor)
            if getattr(mech, "dim", None) is not None:
                raise SpecError(f"{_where(col)}: lower and upper must be scalars")
        else:
            if "delta" in entry and delta != 0.0:
                raise SpecError(f"{_where(col, 'delta')}: set by the constrained Laplace "
                                "mechanism itself (0, or its own for "
                                "scale_rule='distance_dependent')")
            kw = dict(ctor)
            if lo is not None:
                kw["lower"] = lo
            if hi is not None:
                kw["upper"] = hi
            mech = cls(eps, sensitivity=dq, **kw)
    except SpecError:
        raise
    except TypeError as exc:
        raise TypeError(f"{_where(col)}: {' '.join(str(exc).split())}") from None
    except (ValueError, OverflowError, NotImplementedError) as exc:
        raise SpecError(f"{_where(col)}: {' '.join(str(exc).split())}") from None
    if memo is not None and mech is not None:
        memo[key_] = mech
    return ColumnPlan(col, mechanism, lo, hi, dq, eps, delta, on_outside, nulls, options, mech)


def parse_spec(spec: Any) -> list[ColumnPlan]:
    """Validate a whole release spec and calibrate its columns; nothing is drawn.

    Raises :class:`SpecError` (a ``ValueError``) naming the column and key, or ``TypeError``
    for a spec that is not a mapping.
    """
    if not isinstance(spec, Mapping):
        raise TypeError("`spec` must be a mapping {column name: {setting: value}}; got "
                        f"{type(spec).__name__}")
    if not spec:
        raise SpecError("`spec` must name at least one column")
    plans = []
    memo: dict = {}
    for col, entry in spec.items():
        if not isinstance(col, str):
            raise SpecError(f"spec column names must be strings; got {col!r}")
        plans.append(_parse_column(col, entry, memo))
    released = {p.name for p in plans}
    for p in plans:
        for key in ("lower", "upper"):
            b = getattr(p, key)
            if isinstance(b, str) and b in released:
                raise SpecError(f"{_where(p.name, key)}: bound column {b!r} is itself "
                                "released; per-row bounds must be public, not private data")
    return plans


def spec_costs(plans: Iterable[ColumnPlan]) -> dict[str, tuple[float, float]]:
    return {p.name: p.cost() for p in plans}


def release_label(plans: Iterable[ColumnPlan], engine: str = "") -> str:
    """The label a release records in the budget's log."""
    text = "privatize(" + ", ".join(p.name for p in plans) + ")"
    return f"{engine} {text}" if engine else text


def plan_release(spec: Any, budget: Any = None, engine: str = "",
                 label: str | None = None, release_id: str | None = None) -> list[ColumnPlan]:
    """The first step of every release: validate ``spec`` and build every column's
    mechanism with scalar bounds (planned and certified), then refuse with
    :class:`bndp.BudgetError` if ``budget`` cannot account the guarantee or pay the cost,
    or with :class:`bndp.ReleaseRecorded` if ``release_id`` is already recorded under it.
    Reads no data, draws nothing and charges nothing."""
    check_budget(budget)
    if release_id is not None and budget is None:
        raise ValueError("`release_id` needs a `budget` to record it under")
    plans = parse_spec(spec)
    if budget is not None:
        check_budget_compatible(plans)
        budget._check_charge(spec_costs(plans),
                             release_label(plans, engine) if label is None else label,
                             release_id=release_id)
    crash_point("planned")
    return plans


def column_details(plans: Iterable[ColumnPlan]) -> dict[str, dict[str, Any]]:
    """What a ledger records of each released column: mechanism, sensitivity, bounds (or
    the columns of per-row bounds), mode and certified worst-case loss (None where it
    depends on the data: per-row bounds)."""
    out = {}
    for p in plans:
        if p.per_row:
            bounds: Any = f"per-row from columns {p.lower}/{p.upper}"
        else:
            bounds = [None if b is None else float(b)  # type: ignore[arg-type]
                      for b in (p.lower, p.upper)]
        loss = None
        if p.mech is not None and hasattr(p.mech, "privacy_loss"):
            try:
                loss = float(p.mech.privacy_loss())
            except (TypeError, ValueError, NotImplementedError):
                loss = None
        mode = getattr(p.mech, "mode", None) if p.mech is not None else None
        out[p.name] = {"mechanism": p.mechanism, "sensitivity": float(p.sensitivity),
                       "bounds": bounds, "mode": mode or p.options.get("mode", "exact"),
                       "certified_loss": loss}
    return out


def noise_profile(plan: ColumnPlan) -> dict[str, Any] | None:
    """The noise of a column with fixed finite bounds at the range's lower end, centre and
    upper end: the bias (mean output minus true value) and the standard deviation of the
    released value, from the law actually sampled. Public numbers (they depend on the
    parameters only). None for per-row bounds, half-lines and mechanisms without a law."""
    m = plan.mech
    if plan.per_row or m is None or not hasattr(m, "bias") or not hasattr(m, "variance"):
        return None
    lo, hi = plan.lower, plan.upper
    if not (isinstance(lo, float) and isinstance(hi, float)
            and math.isfinite(lo) and math.isfinite(hi)):
        return None
    at = [lo, 0.5 * (lo + hi), hi]
    try:
        bias = [float(m.bias(x)) for x in at]
        sd = [math.sqrt(max(float(m.variance(x)), 0.0)) for x in at]
    except (TypeError, ValueError, NotImplementedError, MemoryError):
        return None
    return {"at": at, "bias": bias, "sd": sd}


def release_record(plans: Sequence[ColumnPlan], label: str, release_id: str | None = None,
                   budget: Any = None) -> dict[str, Any]:
    """What a release is, as a JSON-ready dict: label, id, version, and per column the
    mechanism, epsilon, delta, sensitivity, bounds, mode, certified loss and the noise's
    bias and standard deviation at the range's ends and centre (:func:`noise_profile`).
    Nothing in it depends on the private data."""
    details = column_details(plans)
    cols = {}
    for p in plans:
        eps, delta = p.cost()
        cols[p.name] = {"epsilon": eps, "delta": delta, **details[p.name],
                        "noise": noise_profile(p)}
    rec: dict[str, Any] = {"label": label, "release_id": release_id, "version": _version(),
                           "columns": cols}
    if budget is not None:
        sp, rem = budget.spent, budget.remaining
        rec["budget"] = {"epsilon": budget.epsilon, "delta": budget.delta,
                         "spent": [sp.epsilon, sp.delta],
                         "remaining": [rem.epsilon, rem.delta]}
    return rec


_CONTINUOUS = ("%s: column %r released in mode='continuous' (raw doubles of the continuous "
               "law, attackable when published; see the threat model)")


def _mode(p: ColumnPlan) -> str:
    mode = getattr(p.mech, "mode", None) if p.mech is not None else None
    return str(mode or p.options.get("mode", "exact"))


def log_release(record: dict[str, Any]) -> None:
    """One INFO record on the ``bndp`` logger per release (``record``: :func:`release_record`,
    attached as ``bndp_release``), and a WARNING for a column released in continuous mode
    (raw doubles: attackable when published). bndp prints nothing itself."""
    if not _LOG.isEnabledFor(logging.WARNING):
        return
    parts = []
    for name, c in record["columns"].items():
        lo_hi = c["bounds"] if isinstance(c["bounds"], str) else "[{}, {}]".format(
            *("-inf" if b is None and k == 0 else "inf" if b is None else f"{b:g}"
              for k, b in enumerate(c["bounds"])))
        parts.append(f"{name}: {c['mechanism']} epsilon={c['epsilon']:g} delta={c['delta']:g} "
                     f"sensitivity={c['sensitivity']:g} bounds={lo_hi} mode={c['mode']}")
        if c["mode"] == "continuous":
            _LOG.warning(_CONTINUOUS, record["label"], name)
    rid = f" id={record['release_id']}" if record.get("release_id") else ""
    _LOG.info("released %s%s: %s", record["label"], rid, "; ".join(parts),
              extra={"bndp_release": record})


def charge_release(budget: Any, plans: Iterable[ColumnPlan], label: str,
                   release_id: str | None = None) -> None:
    """Charge a release to ``budget`` (None: nothing to do): the last step, once every
    mechanism is planned and every column drawn, right before the result is handed back
    (or, on the command line, put in place). Raises :class:`bndp.BudgetError` (spending
    nothing) if another release spent the budget since :func:`plan_release` checked it, or
    :class:`bndp.ReleaseRecorded` if another release recorded ``release_id`` since. A
    :class:`bndp.PersistentBudget` commits the charge in its store before this returns."""
    plans = list(plans)
    crash_point("drawn")
    if budget is not None:
        budget.charge(spec_costs(plans), label=label, release_id=release_id,
                      details=column_details(plans))
    crash_point("charged")
    if _LOG.isEnabledFor(logging.INFO):
        log_release(release_record(plans, label, release_id))
    elif _LOG.isEnabledFor(logging.WARNING):       # (the common default: warnings only)
        for p in plans:
            if _mode(p) == "continuous":
                _LOG.warning(_CONTINUOUS, label, p.name)


def check_budget_compatible(plans: Iterable[ColumnPlan]) -> None:
    """A budget accounts (epsilon, delta)-DP only: refuse the metric guarantee."""
    for p in plans:
        if p.mechanism == "constrained_laplace" and getattr(p.mech, "guarantee", "dp") != "dp":
            raise SpecError(f"{_where(p.name, 'guarantee')}: the metric guarantee is not "
                            "(epsilon, delta)-DP and cannot be charged to a Budget")


# frames (narwhals) -----------------------------------------------------------------------
class Prepared:
    """A checked column: float64 values, missing mask, per-row bounds, the source series."""

    __slots__ = ("values", "missing", "lo", "hi", "series")

    def __init__(self, values: np.ndarray, missing: np.ndarray | None, lo: np.ndarray | None,
                 hi: np.ndarray | None, series: Any) -> None:
        self.values = values
        self.missing = missing
        self.lo = lo
        self.hi = hi
        self.series = series


def _numeric(nw: Any, frame: Any, col: str, role: str) -> Any:
    if col not in frame.columns:
        raise ValueError(f"{role}: column {col!r} not found; columns are: "
                         f"{', '.join(map(str, frame.columns))}")
    s = frame.get_column(col)
    dt = s.dtype
    if dt == nw.Boolean or not dt.is_numeric():
        raise TypeError(f"{role}: column {col!r} must be numeric; got {dt}")
    return s


def _as_float(nw: Any, s: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """float64 values (NaN where missing) and the missing mask (null or NaN), or None.
    Bounds: every value rounded to its nearest double."""
    vals, missing = _as_values(nw, s)
    return approx(vals), missing


def _as_values(nw: Any, s: Any) -> tuple[Any, np.ndarray | None]:
    """Released values: float64 (NaN where missing), or :class:`bndp._values.WideValues`
    for 64-bit integers beyond 2^53 and decimals (each then rounded onto the grid from its
    exact value), and the missing mask (null or NaN), or None."""
    dt = s.dtype
    if dt in (nw.Int64, nw.UInt64) or dt == nw.Decimal:
        null = np.asarray(s.is_null().to_numpy(), dtype=bool) if s.null_count() else None
        if dt == nw.Decimal:
            approx_vals = np.asarray(s.cast(nw.Float64).to_numpy(), dtype=np.float64)
            if null is not None:
                approx_vals[null] = np.nan
            # (engines' decimal-to-double casts: within a few units in the last place)
            vals: Any = wide_column(approx_vals, null,
                                    lambda pos: s[[int(p) for p in pos]].to_list(), ulps=4.0)
        else:
            filled = s.fill_null(0) if null is not None else s
            ints = np.asarray(filled.to_numpy(),
                              dtype=np.int64 if dt == nw.Int64 else np.uint64)
            vals = from_ints(ints, null)
        missing = np.isnan(approx(vals))
        return vals, (missing if missing.any() else None)
    f = s if s.dtype == nw.Float64 else s.cast(nw.Float64)
    vals = np.asarray(f.to_numpy(), dtype=np.float64)
    missing = np.isnan(vals)
    if s.null_count():  # a null whose placeholder is not NaN (never, after the cast; safe)
        missing |= np.asarray(s.is_null().to_numpy(), dtype=bool)
    return vals, (missing if missing.any() else None)


def prepare(nw: Any, frame: Any, plans: Sequence[ColumnPlan]) -> list[Prepared]:
    """Read and check every released column of an eager narwhals frame; draws nothing."""
    out = []
    for p in plans:
        s = _numeric(nw, frame, p.name, f"spec column {p.name!r}")
        vals, missing = _as_values(nw, s)
        bnds: dict[str, np.ndarray | None] = {"lower": None, "upper": None}
        for key in ("lower", "upper"):
            b = getattr(p, key)
            if isinstance(b, str):
                bs = _numeric(nw, frame, b, f"spec column {p.name!r}, key {key!r}")
                bnds[key], _ = _as_float(nw, bs)
        p.check(vals, missing, bnds["lower"], bnds["upper"])
        out.append(Prepared(vals, missing, bnds["lower"], bnds["upper"], s))
    return out


def draw(nw: Any, frame: Any, plans: Sequence[ColumnPlan], prepared: Sequence[Prepared],
         gens: Sequence[np.random.Generator], progress: Any = None) -> Any:
    """Draw every column (each from its own generator) and return the new eager frame.
    ``progress``: called with the number of cells of each column once it is drawn."""
    impl = frame.implementation
    new: list[Any] = []
    for p, d, g in zip(plans, prepared, gens):
        if progress is not None and new:
            progress(len(prepared[len(new) - 1].values))
        if d.missing is None:
            noisy = p.draw(d.values, g, d.lo, d.hi)
            new.append(nw.new_series(p.name, noisy, nw.Float64, backend=impl))
        else:
            keep = ~d.missing
            idx = np.flatnonzero(keep)
            noisy = p.draw(d.values[keep], g, None if d.lo is None else d.lo[keep],
                           None if d.hi is None else d.hi[keep])
            base = d.series if d.series.dtype == nw.Float64 else d.series.cast(nw.Float64)
            # missing cells stay as they were (null stays null, NaN stays NaN)
            new.append(base.scatter(idx, noisy) if idx.size else base)
    if progress is not None and new:
        progress(len(prepared[-1].values))
    return frame.with_columns(*new)


def keyword_spec(columns: Any, *, mechanism: str, epsilon: float, sensitivity: float,
                 lower: Any, upper: Any, delta: float = 0.0, on_outside: str = "clip",
                 nulls: str = "raise") -> dict[str, dict[str, Any]]:
    """The spec equivalent to the engines' keyword form (same settings for every column)."""
    cols = [columns] if isinstance(columns, str) else list(columns)
    if not cols:
        raise ValueError("`column` must name at least one column")
    entry: dict[str, Any] = {"mechanism": mechanism, "epsilon": epsilon,
                             "sensitivity": sensitivity, "lower": lower, "upper": upper,
                             "on_outside": on_outside, "nulls": nulls}
    if delta != 0.0 or mechanism != "gaussian":
        entry["delta"] = delta
    return {c: dict(entry) for c in cols}
