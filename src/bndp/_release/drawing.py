"""The draws of a release on a narwhals frame: :func:`prepare` checks every column's data,
:func:`draw_columns` draws its noise (through :meth:`ColumnPlan.draw`) and
:func:`assemble` puts the new frame together; :func:`draw` does both."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .._values import approx, from_ints, wide_column, wide_int_column
from .spec import ColumnPlan


@dataclass(slots=True)
class Prepared:
    """A checked column: its values (float64, or its integers for a column released with
    the integer law), missing mask, per-row bounds, the source series."""

    values: np.ndarray
    missing: np.ndarray | None
    lo: np.ndarray | None
    hi: np.ndarray | None
    series: Any


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


def integer_columns(nw: Any, schema: Any) -> set[str]:
    """The names of the integer-typed columns of a narwhals schema (128-bit integers
    excluded: NumPy has no type for them)."""
    wide = [w for w in (getattr(nw, "Int128", None), getattr(nw, "UInt128", None)) if w]
    return {str(c) for c, dt in schema.items()
            if dt.is_integer() and not any(dt == w for w in wide)}


def _as_ints(nw: Any, s: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """An integer series' values as a NumPy integer array (0 where null) and its null
    mask, or None."""
    null = np.asarray(s.is_null().to_numpy(), dtype=bool) if s.null_count() else None
    vals = np.asarray((s.fill_null(0) if null is not None else s).to_numpy())
    if vals.dtype.kind not in "iu":     # (a backend handing integers back as floats)
        vals = vals.astype(np.int64)
    return vals, null


def _as_values(nw: Any, s: Any, lattice: bool = False) -> tuple[Any, np.ndarray | None]:
    """Released values: float64 (NaN where missing), or :class:`bndp._values.WideValues`
    for 64- and 128-bit integers beyond 2^53 and decimals (each then rounded onto the grid
    from its exact value), or, with ``lattice`` (a column released with the integer law), an
    integer column's own integers (0 where missing); and the missing mask (null or NaN), or
    None."""
    dt = s.dtype
    if lattice and dt.is_integer() and str(dt) not in ("Int128", "UInt128"):
        return _as_ints(nw, s)
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
    if any(dt == w for w in (getattr(nw, "Int128", None), getattr(nw, "UInt128", None))
           if w is not None):
        # 128-bit integers (Polars): the engine's doubles, and the exact integers of the
        # entries beyond 2^53 (read back from the series where the grid cell is in doubt)
        null = np.asarray(s.is_null().to_numpy(), dtype=bool) if s.null_count() else None
        approx_vals = np.array(s.cast(nw.Float64).to_numpy(), dtype=np.float64)
        if null is not None:
            approx_vals[null] = np.nan
        vals = wide_int_column(approx_vals, null,
                               lambda pos: s[[int(p) for p in pos]].to_list())
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
        vals, missing = _as_values(nw, s, lattice=bool(p.integer))
        bnds: dict[str, np.ndarray | None] = {"lower": None, "upper": None}
        for key in ("lower", "upper"):
            b = getattr(p, key)
            if isinstance(b, str):
                bs = _numeric(nw, frame, b, f"spec column {p.name!r}, key {key!r}")
                bnds[key], _ = _as_float(nw, bs)
        p.check(vals, missing, bnds["lower"], bnds["upper"])
        out.append(Prepared(vals, missing, bnds["lower"], bnds["upper"], s))
    return out


def draw_columns(plans: Sequence[ColumnPlan], prepared: Sequence[Prepared],
                 gens: Sequence[np.random.Generator], progress: Any = None
                 ) -> list[np.ndarray]:
    """Draw every column (each from its own generator): the noisy values of its released
    (not missing) cells. ``progress``: called with the number of cells of each column once
    it is drawn."""
    noisy = []
    for p, d, g in zip(plans, prepared, gens):
        if d.missing is None:
            noisy.append(p.draw(d.values, g, d.lo, d.hi))
        else:
            keep = ~d.missing
            noisy.append(p.draw(d.values[keep], g, None if d.lo is None else d.lo[keep],
                                None if d.hi is None else d.hi[keep]))
        if progress is not None:
            progress(len(d.values))
    return noisy


def assemble(nw: Any, frame: Any, plans: Sequence[ColumnPlan], prepared: Sequence[Prepared],
             noisy: Sequence[np.ndarray]) -> Any:
    """The eager frame ``frame`` with every released column replaced by its drawn values
    (:func:`draw_columns`); missing cells stay as they were (null stays null, NaN stays
    NaN). Draws nothing."""
    impl = frame.implementation
    new: list[Any] = []
    for p, d, x in zip(plans, prepared, noisy):
        x = np.asarray(x)
        if x.dtype.kind in "iu":
            x = x.astype(p.output_dtype(d.values.dtype), copy=False)
            # integers (the integer law on an integer column): the column's own type, or
            # the wider type the sampler chose
            same = np.dtype(x.dtype) == np.dtype(d.values.dtype)
            dt = d.series.dtype if same else _nw_int(nw, x.dtype)
            if d.missing is None:
                new.append(nw.new_series(p.name, x, dt, backend=impl))
            else:
                idx = np.flatnonzero(~d.missing)
                base = d.series if same else d.series.cast(dt)
                new.append(base.scatter(idx, x) if idx.size else base)
        elif d.missing is None:
            new.append(nw.new_series(p.name, x, nw.Float64, backend=impl))
        else:
            idx = np.flatnonzero(~d.missing)
            dt = d.series.dtype
            if dt == nw.Float64:
                base = d.series
            elif dt.is_integer() or dt == nw.Decimal:
                # no NaN here: the missing cells are the nulls. Not a cast of the values
                # (Arrow refuses to cast integers beyond 2^53 to doubles): the
                # self-comparison is null exactly at the nulls
                base = (d.series == d.series).cast(nw.Float64)
            else:
                base = d.series.cast(nw.Float64)
            new.append(base.scatter(idx, x) if idx.size else base)
    return frame.with_columns(*new)


def _nw_int(nw: Any, dtype: np.dtype) -> Any:
    """The narwhals integer dtype of a NumPy integer dtype."""
    dt = np.dtype(dtype)
    return getattr(nw, f"{'UInt' if dt.kind == 'u' else 'Int'}{dt.itemsize * 8}")


def draw(nw: Any, frame: Any, plans: Sequence[ColumnPlan], prepared: Sequence[Prepared],
         gens: Sequence[np.random.Generator], progress: Any = None) -> Any:
    """Draw every column (:func:`draw_columns`) and return the new eager frame
    (:func:`assemble`)."""
    return assemble(nw, frame, plans, prepared, draw_columns(plans, prepared, gens, progress))
