"""The inputs of :func:`bndp.estimate`: the law family of a mechanism or spec column, the
released values and bounds, and their grid indices."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from .._laws.lattice import Step, integer_step, lattice_of
from ..mechanisms import window


@dataclass
class _Family:
    """What decides the law of a row besides its bounds: the kernel family, the loss to
    certify and the sensitivity; ``plan`` the fixed-bounds law, if any."""

    fam: int
    target: float
    sensitivity: float
    plan: window.RowPlan | None
    what: str
    #: the integer law's lattice (:func:`bndp._laws.lattice.lattice_of`: a step's exponent
    #: or a :class:`~bndp._laws.lattice.Step`), None for the default grid; ``integer`` the setting it came from (None: auto, decided by the released
    #: column's type, :func:`resolve_integer`)
    lattice: int | Step | None = None
    integer: Any = False

    def row(self, lower: float, upper: float) -> window.RowPlan:
        if (self.plan is not None and lower == self.plan.lower
                and upper == self.plan.upper):
            return self.plan
        return window.plan_row(self.fam, self.target, self.sensitivity, lower, upper,
                               self.lattice)


def integer_column(x: Any) -> bool:
    """Whether a released column (NumPy, pandas including nullable types, Polars, Arrow) is
    integer-typed: the integer law's releases keep an integer input's type."""
    dt = getattr(x, "dtype", None)
    if dt is None:
        t = getattr(x, "type", None)          # pyarrow (Chunked)Array
        pa = __import__("sys").modules.get("pyarrow")
        return bool(pa is not None and t is not None and pa.types.is_integer(t))
    if hasattr(dt, "is_integer") and callable(dt.is_integer):      # polars
        return bool(dt.is_integer())
    kind = getattr(dt, "kind", None)
    return kind in ("i", "u")


def resolve_integer(fam: _Family, released: Any, lower: Any, upper: Any) -> None:
    """Set ``fam.lattice`` where the setting is auto (``integer`` None): the integer law
    where the released column is integer-typed and the bounds and sensitivity integral
    (as the release chose it), else the default grid."""
    from .._laws.lattice import integral
    if fam.integer is None and fam.lattice is None and integer_column(released):
        if (integral(fam.sensitivity) and fam.sensitivity >= 1 and not isinstance(lower, str)
                and not isinstance(upper, str) and integral(lower) and integral(upper)):
            fam.lattice = 0
            fam.plan = None                  # (the default grid's plan of the settings)


def _continuous_error(what: str) -> ValueError:
    return ValueError(
        f"{what}: mode='continuous' releases raw doubles of the continuous law, whose "
        "outputs are not on a grid; bndp.estimate deconvolves the default release (the "
        "grid law, mode='exact'), whose exact law is known for every row")


#: the name a spec column's settings are parsed under when the released values have none
#: (an array): replaced in messages by :data:`_UNNAMED_TEXT`
_UNNAMED = "\x00released"
_UNNAMED_TEXT = "the spec column's settings"


def released_name(released: Any) -> str | None:
    """The name of the released values, where they carry one (a pandas or Polars Series
    named by a string), else None."""
    name = getattr(released, "name", None)
    return name if isinstance(name, str) else None


def _family(spec: Any, name: str | None = None) -> tuple[_Family, Any, Any]:
    """The law family of ``spec`` (a mechanism, a spec column's settings or a
    :class:`bndp._release.ColumnPlan`) and its bounds (numbers, or column names).
    ``name``: the released column's name, which messages about a spec column's settings
    give (None: they speak of "the spec column's settings")."""
    from .._release import ColumnPlan, _parse_column
    from ..mechanisms import BoundedGaussian, BoundedLaplace

    if isinstance(spec, Mapping):
        entry = dict(spec)
        entry.setdefault("nulls", "keep")
        bounds = {k: entry.get(k) for k in ("lower", "upper")}
        # per-row bounds given as arrays: parse the settings with placeholder names
        for k in ("lower", "upper"):
            if not isinstance(bounds[k], (str, int, float, np.integer, np.floating,
                                          type(None))):
                entry[k] = f"<{k}>"
        col = _UNNAMED if name is None else name
        try:
            spec = _parse_column(col, entry)
        except (ValueError, TypeError) as exc:     # (a SpecError is a ValueError)
            msg = str(exc).replace(f"spec column {_UNNAMED!r}", _UNNAMED_TEXT)
            raise (TypeError if isinstance(exc, TypeError) else ValueError)(msg) from None
        if isinstance(spec.lower, str) and spec.lower == "<lower>":
            spec.lower = bounds["lower"]
        if isinstance(spec.upper, str) and spec.upper == "<upper>":
            spec.upper = bounds["upper"]
    if isinstance(spec, ColumnPlan):
        what = (_UNNAMED_TEXT if spec.name == _UNNAMED else f"spec column {spec.name!r}")
        if spec.mechanism not in ("laplace", "gaussian"):
            raise ValueError(f"{what}: bndp.estimate supports the bounded Laplace and bounded "
                             f"Gaussian mechanisms; got {spec.mechanism!r}")
        if spec.options.get("mode", "exact") == "continuous":
            raise _continuous_error(what)
        if spec.mech is not None:
            fam, _, _ = _family(spec.mech)
            fam.what = what
            if spec.options.get("integer") is None:
                fam.integer = None           # auto: the released column's type decides
            return fam, spec.lower, spec.upper
        lap = spec.mechanism == "laplace"
        target = spec.epsilon - math.log1p(-spec.delta) if lap else spec.epsilon
        setting = spec.options.get("integer")
        step = integer_step(setting) if setting is not None else 0
        return (_Family(window.LAPLACE if lap else window.GAUSSIAN, float(target),
                        float(spec.sensitivity), None, what,
                        lattice_of(step) if step else None, setting),
                spec.lower, spec.upper)
    if isinstance(spec, (BoundedLaplace, BoundedGaussian)):
        what = type(spec).__name__
        if spec.mode == "continuous":
            raise _continuous_error(what)
        plan: Any = spec.exact_plan    # the windowed law of one row where supports_rows
        if plan is None or not plan.supports_rows:
            kind = ("a multivariate box" if getattr(spec, "dim", None) is not None
                    else "a half-line (an infinite bound)")
            raise ValueError(f"{what}: bndp.estimate needs finite scalar bounds; this "
                             f"mechanism releases {kind}")
        code = window.LAPLACE if isinstance(spec, BoundedLaplace) else window.GAUSSIAN
        step = int(spec.integer)
        return (_Family(code, float(plan.target), float(spec.sensitivity), plan, what,
                        lattice_of(step) if step else None, step),
                plan.lower, plan.upper)
    raise TypeError("`spec_or_mechanism` must be a BoundedLaplace or BoundedGaussian "
                    "mechanism, or a spec column's settings (a mapping with mechanism, "
                    "epsilon, sensitivity, lower, upper, ...); got "
                    f"{type(spec).__name__}")


def _values(released: Any, name: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Released values as float64 and the missing mask (None when nothing is missing)."""
    from .._columns import to_numpy
    from .._values import approx

    col = to_numpy(released, name)
    v = np.ravel(np.asarray(approx(col.values), dtype=np.float64))
    if col.missing is not None:         # (an integer column holds 0 where missing)
        v[np.ravel(col.missing)] = np.nan
    miss = np.isnan(v)
    return v, (miss if miss.any() else None)


def _bounds_array(b: Any, size: int, key: str) -> np.ndarray:
    a = np.asarray(b, dtype=np.float64)
    if a.ndim == 0:
        return np.full(size, float(a))
    a = np.ravel(a)
    if a.shape[0] != size:
        raise ValueError(f"`{key}` holds {a.shape[0]} bounds for {size} released values")
    if not np.isfinite(a).all():
        raise ValueError(f"`{key}`: per-row bounds must be finite")
    return a


def _grid_index(y: np.ndarray, plan: window.RowPlan, what: str,
                public_bounds: bool = True) -> np.ndarray:
    """The grid index of every released value of one row class; an error where a value is
    not a grid point of the row. The error quotes no value (a value off the grid may be a
    true value given by mistake), and the row's bounds and grid only where they are the
    column's public bounds (``public_bounds``; per-row bounds are data)."""
    j = np.rint((y - plan.lower) / plan.gamma)
    ok = (j >= 0) & (j <= plan.n)
    jj = np.where(ok, j, 0).astype(np.int64)
    ok &= (plan.lower + jj.astype(np.float64) * plan.gamma) == y
    if not ok.all():
        where = (f"on [{plan.lower!r}, {plan.upper!r}] (its outputs are the grid points "
                 f"lower + j * {plan.gamma!r}, j = 0..{plan.n})" if public_bounds
                 else "on its row's bounds")
        raise ValueError(
            f"a released value is not an output of {what} {where} ({int((~ok).sum())} "
            "such value(s)): was it released with other settings (epsilon, sensitivity, "
            "bounds, mechanism, mode, integer)?")
    return jj



def _is_frame(x: Any) -> bool:
    mod = type(x).__module__
    name = type(x).__name__
    return (mod.startswith("pandas") and name == "DataFrame") or \
        (mod.startswith("polars") and name in ("DataFrame", "LazyFrame")) or \
        (mod.startswith("pyarrow") and name == "Table")

