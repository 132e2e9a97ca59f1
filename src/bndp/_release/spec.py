"""The release spec: :func:`parse_spec` validates a spec ``{column: {key: value}}`` and
builds one :class:`ColumnPlan` a column (its mechanism built once, from
:mod:`bndp.mechanisms.registry`, and calibrated for scalar bounds), without looking at any
data; a plan checks its column's data (:meth:`ColumnPlan.check`) and draws its noise
(:meth:`ColumnPlan.draw`)."""

from __future__ import annotations

import inspect
import logging
import math
from fractions import Fraction
from typing import Any, Iterable, Mapping

import numpy as np

from .._amounts import charge_delta, charge_epsilon
from .._columns import check_nulls
from .._validation import check_on_outside
from .._values import approx
from ..exceptions import ColumnDataError, SpecError, SpecTypeError, _spec_place
from ..calibrate import bounded_laplace_scale
from .._laws import window
from .._laws.whole_range import check_mode
from .._laws.lattice import check_lattice, integral
from ..mechanisms.registry import (ALIASES, MECHANISMS, REGISTRY, mechanism_key,
                                   mechanism_names)

_LOG = logging.getLogger("bndp")

__all__ = ["ColumnPlan", "parse_spec", "spec_costs", "SpecError", "ColumnDataError", "MECHANISMS",
           "BASE_KEYS", "keyword_spec", "mechanism_options"]

BASE_KEYS = ("mechanism", "lower", "upper", "sensitivity", "epsilon", "delta", "on_outside",
             "nulls")


def _row(i: int) -> str:
    """A row in messages, as the command line counts the rows of a file (``i``: 0-based)."""
    return f"row {i + 1:,} (data rows counted from 1)"


def nonfinite_word(x: float) -> str:
    """A non-finite value in messages: ``"NaN"``, ``"+inf"`` or ``"-inf"`` (never a finite
    number: messages name no value of the data)."""
    return "NaN" if math.isnan(x) else ("+inf" if x > 0 else "-inf")


def _where(col: str, key: str | None = None) -> str:
    return _spec_place(col, key)


def _ctor_options(cls: Any) -> tuple[str, ...]:
    """Keyword options of a mechanism's constructor beyond the spec's base keys (for
    example ``mode``), read from its signature so that new options flow through."""
    params = inspect.signature(cls.__init__).parameters
    return tuple(p for p in params if p not in ("self", *BASE_KEYS)
                 and params[p].kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        inspect.Parameter.KEYWORD_ONLY))


#: Spec keys removed, per mechanism: {old: (the key to use, the version that removed old)}
#: (a constructor keyword renamed): refused with an error naming the key to use.
_REMOVED_KEYS: dict[str, dict[str, tuple[str, str]]] = {
    "gaussian": {"calibration": ("sigma_rule", "0.8.0")}}


def mechanism_options(mechanism: str) -> tuple[str, ...]:
    """The mechanism-specific keys a spec column may carry."""
    opts = _ctor_options(REGISTRY[mechanism])
    if mechanism in ("laplace", "gaussian"):
        opts = opts + ("workers",)  # a sampling option of their ``sample``
    return opts


def _real(col: str, key: str, v: Any) -> float:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise SpecTypeError(column=col, key=key, detail=f"must be a real number; got {v!r}")
    try:
        return float(v)
    except OverflowError:       # an integer beyond the doubles
        raise SpecError(column=col, key=key, detail=(
            "must be a finite number; got an integer of "
            f"{len(str(abs(v)))} digits")) from None


class ColumnPlan:
    """One released column: its validated settings and, for scalar bounds, its calibrated
    mechanism. Picklable (shipped to Spark and Dask workers)."""

    def __init__(self, name: str, mechanism: str, lower: float | str | None,
                 upper: float | str | None, sensitivity: float, epsilon: float, delta: float,
                 on_outside: str, nulls: str, options: dict[str, Any], mech: Any,
                 integer: int = 0) -> None:
        self.name = name
        #: the integer law's lattice step (0: not the integer law)
        self.integer = int(getattr(mech, "integer", 0) or 0) if mech is not None else integer
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
    def law(self) -> str:
        """The law a column is released with: ``"integer"`` (the lattice ``lower + j*k``),
        ``"continuous"`` (mode continuous) or ``"grid"`` (the certified grid law)."""
        if self.integer:
            return "integer"
        mode = getattr(self.mech, "mode", None) if self.mech is not None else None
        return "continuous" if (mode or self.options.get("mode")) == "continuous" else "grid"

    def output_dtype(self, dtype: Any) -> np.dtype:
        """The NumPy dtype of this column's released values for input of ``dtype``: the
        input's integer dtype under the integer law (int64 where the lattice between the
        bounds does not fit it, and for per-row bounds, which are known only with the
        data), float64 otherwise."""
        dt = np.dtype(dtype)
        if not self.integer or dt.kind not in "iu":
            return np.dtype(np.float64)
        if self.per_row:
            return np.dtype(np.int64)
        info = np.iinfo(dt)
        lo, hi = self.lower, self.upper
        fits = (lo is not None and hi is not None and info.min <= lo  # type: ignore[operator]
                and hi <= info.max)  # type: ignore[operator]
        return dt if fits else np.dtype(np.int64)

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

    @property
    def registered(self) -> bool:
        """Whether the column's mechanism is one :func:`bndp.mechanisms.register` added
        (not built in)."""
        return self.mechanism not in MECHANISMS

    def describe(self) -> str:
        m = self.mech
        if m is None:
            return (f"bounded {'Laplace' if self.mechanism == 'laplace' else 'Gaussian'}, "
                    "per-row bounds (one kernel for every wide row, one per narrow width)")
        if self.mechanism == "laplace":
            return f"bounded Laplace scale b = {m.scale:.6g}"
        if self.mechanism == "gaussian":
            return f"bounded Gaussian sigma = {m.sigma:.6g}"
        if self.registered:
            return f"{type(m).__name__} (registered mechanism {self.mechanism!r})"
        return f"constrained Laplace scale = {m.scale:.6g}" if m.scale_rule == "constant" \
            else "constrained Laplace (distance-dependent scale)"

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
            raise ColumnDataError(f"column {name!r}: {_row(rows(j))} holds "
                                  f"{nonfinite_word(float(v[j]))}, not a finite number",
                                  "not_finite", name, rows(j), value=float(v[j]))
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
                    what = ("is missing (null or NaN)" if math.isnan(b[j]) else
                            f"holds {nonfinite_word(float(b[j]))}")
                    raise ColumnDataError(
                        f"{_where(name, key)}: bound column {src!r} {what} at "
                        f"{_row(rows(j))}, whose value is released; per-row bounds must be "
                        "finite numbers (a row whose value is missing and kept, "
                        "nulls='keep', needs none)",
                        "bound_not_finite", str(src), rows(j), value=float(b[j]))
            order = ~(lo_v < hi_v)
            if order.any():
                j = int(np.flatnonzero(order)[0])
                raise ColumnDataError(   # (per-row bounds are data: not quoted)
                    f"{_where(name)}: per-row bounds need lower < upper; {_row(rows(j))} has "
                    "lower >= upper", "bound_order", name, rows(j))
            if v.size:
                with np.errstate(over="ignore"):    # bounds near +-1e308: an inf width,
                    w = hi_v - lo_v                 # refused by the calibration below
                try:  # the scale is monotone in the width: the extreme widths decide
                    bounded_laplace_scale(self.epsilon, self.sensitivity, 0.0,
                                          np.array([w.min(), w.max()]), delta=self.delta)
                except (ValueError, OverflowError):
                    # (the calibration's message quotes the widths: data, not repeated)
                    what = (f"no bounded Laplace scale can be calibrated at epsilon = "
                            f"{self.epsilon!r}, sensitivity = {self.sensitivity!r} for every "
                            "row's width upper - lower (a width too small or too large "
                            "against the sensitivity, beyond the range of doubles)")
                    raise ColumnDataError(f"{_where(name)}: {what}", "calibration", name,
                                          detail=what) from None
        else:
            lo_v, hi_v = self.lower, self.upper
        if self.on_outside == "raise" and v.size:
            lo_c = -math.inf if lo_v is None else lo_v
            hi_c = math.inf if hi_v is None else hi_v
            out = (v < lo_c) | (v > hi_c)
            if out.any():
                j = int(np.flatnonzero(out)[0])
                side = "below" if bool(np.broadcast_to(v < lo_c, v.shape)[j]) else "above"
                scalar = not self.per_row   # per-row bounds are data: not recorded
                raise ColumnDataError(f"column {name!r}: {_row(rows(j))} holds a value "
                                      f"outside its bounds, {side} its "
                                      f"{'lower' if side == 'below' else 'upper'} bound "
                                      "(on_outside='raise')", "outside", name, rows(j),
                                      lower=float(lo_c) if scalar else None,  # type: ignore
                                      upper=float(hi_c) if scalar else None,  # type: ignore
                                      detail=side)

    def draw(self, values: np.ndarray, gen: np.random.Generator,
             lo: np.ndarray | None = None, hi: np.ndarray | None = None) -> np.ndarray:
        """Release ``values`` (no missing, checked) with this column's mechanism: float64,
        or, under the integer law for integer input, the dtype :meth:`output_dtype` names."""
        if values.size == 0:
            return np.empty(0, dtype=self.output_dtype(getattr(values, "dtype", np.float64)))
        if not self.per_row:
            kw = {"workers": self.options["workers"]} if "workers" in self.options else {}
            return _released(self.mech.sample(values, rng=gen, on_outside=self.on_outside,
                                              **kw))
        lo_v = np.float64(self.lower) if lo is None else lo
        hi_v = np.float64(self.upper) if hi is None else hi
        # per-row bounds: drawn by the mechanism, as fixed bounds are
        cls: Any = REGISTRY[self.mechanism]      # BoundedLaplace or BoundedGaussian
        opts = {k: v for k, v in self.options.items() if k != "integer"}
        return _released(cls.sample_rows(
            values, lo_v, hi_v, epsilon=self.epsilon, sensitivity=self.sensitivity,
            delta=self.delta, rng=gen, on_outside=self.on_outside, integer=self.integer,
            **opts))


def _released(out: Any) -> np.ndarray:
    """A sampler's result as an array: integers (the integer law's) kept, anything else
    float64."""
    a = np.asarray(out)
    return a if a.dtype.kind in "iu" else np.asarray(a, dtype=np.float64)


def _integer_key(col: str, v: Any) -> int:
    """The spec key ``integer``: True (step 1), False (0) or a lattice step k >= 1, as an
    int."""
    if isinstance(v, (bool, np.bool_)):
        return int(bool(v))
    if not isinstance(v, (int, np.integer)):
        raise SpecTypeError(column=col, key="integer", detail=(
            f"must be true, false or an integer lattice step (an integer >= 1); got {v!r}"))
    if not 1 <= v <= 1 << 52:
        raise SpecError(column=col, key="integer", detail=(
            f"the lattice step must be an integer from 1 to 2^52; got {v!r}"))
    return int(v)


def _integral(x: Any) -> bool:
    """An integral double within the integer law's range of bounds (2^52 in magnitude)."""
    return isinstance(x, float) and integral(x)


def _auto_integer(col: str, lo: Any, hi: Any, dq: float, options: Mapping[str, Any],
                  integer_columns: Any) -> int:
    """The integer law's step for a column whose spec has no ``integer`` key: 1 for an
    integer-typed column (named in ``integer_columns``) with integral finite scalar bounds
    or integer-typed bound columns (per-row bounds are data: their type decides, never
    their values), an integral sensitivity >= 1 and the default mode; 0 (the grid law)
    otherwise."""
    if integer_columns is None or col not in integer_columns:
        return 0
    if options.get("mode", "exact") not in ("exact", None):
        return 0

    def bound_ok(b: Any) -> bool:
        return b in integer_columns if isinstance(b, str) else _integral(b)

    ok = bound_ok(lo) and bound_ok(hi) and _integral(dq) and dq >= 1
    return 1 if ok else 0


def _per_row_sample_options() -> tuple[str, ...]:
    """The options a column with per-row bounds takes: those of the mechanisms'
    ``sample_rows`` beyond the column's own settings."""
    cls: Any = REGISTRY["laplace"]
    params = inspect.signature(cls.sample_rows).parameters
    return tuple(p for p in params if p not in (
        "value", "epsilon", "sensitivity", "lower", "upper", "delta", "rng", "on_outside"))


def _parse_column(col: str, entry: Any, memo: dict | None = None,
                  integer_columns: Any = None) -> ColumnPlan:
    if not isinstance(entry, Mapping):
        raise SpecError(column=col, detail=(
            "must be a mapping of settings (mechanism, lower, "
            f"upper, sensitivity, epsilon, ...); got {type(entry).__name__}"))
    mechanism = mechanism_key(entry.get("mechanism", "laplace"))
    names = mechanism_names()     # the built-in names and those registered until now
    if not isinstance(mechanism, str) or mechanism not in names:
        raise SpecError(column=col, key="mechanism", detail=(
            f"must be one of {tuple(ALIASES) + names} (a mechanism of your own: register "
            "it first with bndp.mechanisms.register, in the process that reads the spec; "
            f"see docs/extending.md); got {entry.get('mechanism')!r}"))
    opts_allowed = mechanism_options(mechanism)
    for key, (new, version) in _REMOVED_KEYS.get(mechanism, {}).items():
        if key in entry:
            raise SpecError(column=col, key=key, detail=(
                f"the key {key!r} was removed in bndp "
                f"{version}: use {new!r}"))
    unknown = [k for k in entry if k not in BASE_KEYS and k not in opts_allowed]
    if unknown:
        raise SpecError(column=col, key=str(unknown[0]), detail=(
            "unknown key for mechanism "
            f"{mechanism!r}; allowed keys: {', '.join(BASE_KEYS + opts_allowed)}"))
    for key in ("epsilon", "sensitivity"):
        if key not in entry:
            raise SpecError(column=col, key=key, detail="missing (required)")
    eps = _real(col, "epsilon", entry["epsilon"])
    dq = _real(col, "sensitivity", entry["sensitivity"])
    delta = _real(col, "delta", entry.get("delta", 0.0))
    bounds: dict[str, float | str | None] = {}
    for key in ("lower", "upper"):
        if key not in entry:
            if mechanism == "constrained_laplace":
                bounds[key] = None
                continue
            raise SpecError(column=col, key=key, detail=(
                "missing (required: a number, or the name of "
                "a column holding per-row bounds)"))
        b = entry[key]
        if isinstance(b, str):
            if mechanism not in ("laplace", "gaussian"):
                raise SpecError(column=col, key=key, detail=(
                    f"per-row bounds from a column ({b!r}) "
                    "need mechanism 'laplace' or 'gaussian'"))
            if b == col:
                raise SpecError(column=col, key=key, detail="a column cannot bound itself")
            bounds[key] = b
        else:
            bounds[key] = _real(col, key, b)
    on_outside = entry.get("on_outside", "clip")
    try:
        check_on_outside(on_outside)
    except (ValueError, TypeError) as exc:
        raise SpecError(column=col, key="on_outside", detail=str(exc)) from None
    nulls = entry.get("nulls", "raise")
    try:
        check_nulls(nulls)
    except (ValueError, TypeError) as exc:
        raise SpecError(column=col, key="nulls", detail=str(exc)) from None
    options = {k: entry[k] for k in entry if k in opts_allowed}
    if "workers" in options:
        w = options["workers"]
        if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or (w < 1 and w != -1):
            raise SpecError(column=col, key="workers", detail=(
                "must be a positive integer or -1; "
                f"got {w!r}"))
    lo, hi = bounds["lower"], bounds["upper"]
    cls = REGISTRY[mechanism]
    ctor = {k: v for k, v in options.items() if k != "workers"}
    step = 0
    if "integer" in options:
        step = _integer_key(col, options["integer"])
        if not isinstance(lo, str) and not isinstance(hi, str):
            ctor["integer"] = step
    elif "integer" in opts_allowed:
        # absent: the integer law for an integer column with integral bounds (or
        # integer-typed bound columns) and sensitivity
        step = _auto_integer(col, lo, hi, dq, options, integer_columns)
        if not isinstance(lo, str) and not isinstance(hi, str):
            ctor["integer"] = step
        elif step:
            # per-row bounds, planned when the data is seen: a lattice too fine for the
            # noise takes the grid law now, as a scalar-bounds column's does (public
            # parameters only)
            try:
                check_lattice(eps - math.log1p(-delta) if mechanism == "laplace" else eps,
                              dq, 0)
            except ValueError:
                step = 0
    mech = None
    # columns with the same settings share one calibrated mechanism (calibrated once)
    key_ = repr((mechanism, eps, dq, delta, lo, hi, sorted(ctor.items())))
    if memo is not None and key_ in memo:
        return ColumnPlan(col, mechanism, lo, hi, dq, eps, delta, on_outside, nulls, options,
                          memo[key_])
    try:
        if isinstance(lo, str) or isinstance(hi, str):
            # per-row bounds: drawn by the mechanism's sample_rows, planned when the
            # data is seen; check the privacy parameters (and the options) now
            allowed = _per_row_sample_options()
            for k in ctor:
                if k not in allowed:
                    raise SpecError(column=col, key=k, detail="not supported with per-row bounds")
            if mechanism == "gaussian" and delta != 0.0:
                raise SpecError(column=col, key="delta", detail=(
                    "the bounded Gaussian mechanism is "
                    f"pure epsilon-DP; delta must be 0, got {delta!r}"))
            bounded_laplace_scale(eps, dq, 0.0, 1.0, delta=delta)
            if "mode" in options:
                try:
                    check_mode(options["mode"])
                except (ValueError, TypeError) as exc:
                    raise SpecError(column=col, key="mode", detail=str(exc)) from None
            if options.get("mode", "exact") in ("exact", None):
                # the kernel every wide row will use, planned now (before any charge)
                window.plan_wide(window.LAPLACE if mechanism == "laplace" else window.GAUSSIAN,
                                 eps - math.log1p(-delta) if mechanism == "laplace" else eps,
                                 dq)
            for key, b in (("lower", lo), ("upper", hi)):
                if not isinstance(b, str) and not math.isfinite(b):  # type: ignore[arg-type]
                    raise SpecError(column=col, key=key, detail=f"must be finite; got {b!r}")
        elif mechanism == "laplace":
            mech = cls(eps, sensitivity=dq, lower=lo, upper=hi, delta=delta, **ctor)
        elif mechanism == "gaussian":
            if delta != 0.0:
                raise SpecError(column=col, key="delta", detail=(
                    "the bounded Gaussian mechanism is "
                    f"pure epsilon-DP; delta must be 0, got {delta!r}"))
            mech = cls(eps, sensitivity=dq, lower=lo, upper=hi, **ctor)
            if getattr(mech, "dim", None) is not None:
                raise SpecError(column=col, detail="lower and upper must be scalars")
        elif mechanism not in MECHANISMS:
            # a registered mechanism: the constructor call register() checked, with delta
            # where the constructor takes one
            if "delta" in inspect.signature(cls).parameters:
                ctor["delta"] = delta
            elif delta != 0.0:
                raise SpecError(column=col, key="delta", detail=(
                    f"mechanism {mechanism!r} takes no delta (its constructor has no "
                    f"`delta`): delta must be 0; got {delta!r}"))
            mech = cls(eps, sensitivity=dq, lower=lo, upper=hi, **ctor)
            # a registered class must meet the epsilon it was given: a larger certified loss
            # would release the column with less privacy than its spec asks for
            loss = float(mech.privacy_loss())
            if not loss <= eps * (1.0 + 1e-12):
                raise SpecError(column=col, key="epsilon", detail=(
                    f"mechanism {mechanism!r} certifies a loss of {loss!r}, more than the "
                    f"column's epsilon {eps!r}: its privacy_loss() must be at most the "
                    "epsilon it is built with"))
        else:
            if "delta" in entry and delta != 0.0:
                raise SpecError(column=col, key="delta", detail=(
                    "set by the constrained Laplace "
                    "mechanism itself (0, or its own for "
                    "scale_rule='distance_dependent')"))
            kw = dict(ctor)
            if lo is not None:
                kw["lower"] = lo
            if hi is not None:
                kw["upper"] = hi
            mech = cls(eps, sensitivity=dq, **kw)
    except (SpecError, SpecTypeError):
        raise
    except TypeError as exc:
        raise SpecTypeError(column=col, detail=" ".join(str(exc).split())) from None
    except (ValueError, OverflowError, NotImplementedError) as exc:
        raise SpecError(column=col, detail=" ".join(str(exc).split())) from None
    if memo is not None and mech is not None:
        memo[key_] = mech
    return ColumnPlan(col, mechanism, lo, hi, dq, eps, delta, on_outside, nulls, options, mech,
                      integer=step)


def parse_spec(spec: Any, integer_columns: Any = None) -> list[ColumnPlan]:
    """Validate a whole release spec and calibrate its columns; nothing is drawn.

    ``integer_columns``: the names of the frame's integer-typed columns (its schema, public),
    or None where no schema is known. A column of them whose spec has no ``integer`` key is
    released with the integer law when its bounds and sensitivity are integral (and its
    mode the default); every other column without the key with the grid law.

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
        try:
            plans.append(_parse_column(col, entry, memo, integer_columns))
        except SpecError:
            if (integer_columns is None or col not in integer_columns
                    or not isinstance(entry, Mapping) or "integer" in entry):
                raise
            # the integer law chosen by default cannot be planned for these parameters (a
            # lattice too fine for the noise): the column takes the grid law, as without
            # the default (its own errors, if any, raised from there)
            plans.append(_parse_column(col, entry, memo, None))
    released = {p.name for p in plans}
    for p in plans:
        for key in ("lower", "upper"):
            b = getattr(p, key)
            if isinstance(b, str) and b in released:
                raise SpecError(column=p.name, key=key, detail=(
                    f"bound column {b!r} is itself "
                    "released; per-row bounds must be public, not private data"))
    return plans


def certified_loss(plan: ColumnPlan) -> float | None:
    """The certified worst-case privacy loss of a column's mechanism: the exhaustive
    certificate of its grid law (``exact_plan.certified_epsilon``); for a mechanism
    :func:`bndp.mechanisms.register` added, without such a plan, its ``privacy_loss()``;
    None where there is none (continuous mode, per-row bounds: their laws are planned when
    the data is seen)."""
    law = getattr(plan.mech, "exact_plan", None) if plan.mech is not None else None
    if law is None and plan.mech is not None and plan.registered:
        return float(plan.mech.privacy_loss())
    return None if law is None else float(law.certified_epsilon)


def spec_costs(plans: Iterable[ColumnPlan]) -> dict[str, tuple[Fraction, Fraction]]:
    """What each column charges to a budget, ``{column: (epsilon, delta)}`` as exact
    rationals: its epsilon and delta as the decimals written, never below what its
    mechanism is certified to lose (:func:`bndp._amounts.charge_epsilon`)."""
    out = {}
    for p in plans:
        eps, delta = p.cost()
        loss = certified_loss(p)
        d = charge_delta(delta, loss is not None)
        out[p.name] = (charge_epsilon(eps, loss, d), d)
    return out


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
