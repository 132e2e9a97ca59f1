"""The input checks that bndp's modules share: numbers and arrays (:func:`as_float_array`,
:func:`fast_real`), privacy parameters (:func:`check_epsilon_delta`,
:func:`check_positive`, :func:`budget_amount`), bounds (:func:`check_bounds`, the one check
of ``lower < upper`` and of the ends allowed, and :func:`check_box`), sizes and shapes,
``on_outside``, values against their domain (:func:`apply_domain`), and tables passed where
a column is expected. A check that belongs to one component lives with it: a release
spec's keys (:mod:`bndp._release.spec`, :class:`bndp.SpecError`), a budget and its store
(:mod:`bndp.budget`, :mod:`bndp._ledger`), a mechanism's own options, the command line's
arguments. The exception and warning types are those of :mod:`bndp.exceptions`.

Checks run once per call, vectorised, before any kernel. Every check fails on NaN (written
as ``not (x > 0)``). ``TypeError`` for types and dtypes, ``ValueError`` for domains and
shapes; messages name the argument and quote the offending value of a public parameter:
"`sigma` must be finite and > 0; got nan". Checks of data (the released values, and array
bounds, which may be per-row bounds read from data) name the argument, the index and what
is wrong ("a value above `upper`", "lower >= upper"), never a value: the messages of a
release may be logged or shown where its inputs must not be.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from bndp._core import rows as _rows

_F64 = np.dtype(np.float64)

__all__ = [
    "as_float_array",
    "scalar_or_none",
    "check_epsilon",
    "check_epsilon_delta",
    "check_positive",
    "check_finite",
    "check_open_unit",
    "check_bounds",
    "check_on_outside",
    "check_size",
    "apply_domain",
    "broadcast_shapes",
    "frame_kind",
    "refuse_frame",
]


def _show(x: Any) -> str:
    a = np.asarray(x)
    if a.ndim == 0:
        return repr(a.item()) if a.dtype.kind in "biufc" else repr(x)
    return f"array of shape {a.shape}"


def _first_bad(a: np.ndarray, bad: np.ndarray) -> str:
    """Describe the first offending element of an array check of a public parameter
    (epsilon, delta, a scale...): its value, and its index in an array."""
    if a.ndim == 0:
        return repr(float(a))
    idx = np.argwhere(bad)[0]
    return f"{float(a[tuple(idx)])!r} at index {tuple(int(i) for i in idx)}"


def _at_index(bad: np.ndarray) -> str:
    """`` at index (i, ...)`` of the first True element of ``bad`` (empty for 0-d): where a
    check of data failed, named without the data's value."""
    if np.ndim(bad) == 0:
        return ""
    return f" at index {tuple(int(i) for i in np.argwhere(bad)[0])}"


def scalar_or_none(x: Any) -> float | None:
    """Return ``float(x)`` for a real Python/NumPy scalar (not bool), else None.

    This is the fast path for calibration calls with plain numbers.
    """
    if type(x) is float:
        return x
    if type(x) is int:
        try:
            return float(x)
        except OverflowError:       # beyond the doubles: refused as not finite
            return math.inf if x > 0 else -math.inf
    if isinstance(x, (np.floating, np.integer)) and not isinstance(x, np.bool_):
        return float(x)
    return None


# tables (several named columns): refused wherever an array is expected, since NumPy would
# read them as a 2-D array of their cells. Matched on the class and its bases by (top-level
# module, class name), so no engine is imported to recognise its tables.
_FRAMES = {
    ("pandas", "DataFrame"): "a pandas DataFrame",
    ("pyarrow", "Table"): "a pyarrow Table",
    ("pyarrow", "RecordBatch"): "a pyarrow RecordBatch",
    ("polars", "DataFrame"): "a Polars DataFrame",
    ("polars", "LazyFrame"): "a Polars LazyFrame",
    ("dask", "DataFrame"): "a Dask DataFrame",
    ("dask_expr", "DataFrame"): "a Dask DataFrame",
    ("pyspark", "DataFrame"): "a Spark DataFrame",
}


def frame_kind(x: Any) -> str | None:
    """Describe ``x`` if it is a table (pandas/Polars/Dask/Spark DataFrame, Arrow Table or
    RecordBatch), else None."""
    for cls in type(x).__mro__:
        mod = getattr(cls, "__module__", None) or ""
        what = _FRAMES.get((mod.partition(".")[0], cls.__name__))
        if what is not None:
            return what
    return None


def refuse_frame(x: Any, name: str) -> None:
    """``TypeError`` for a table passed where a column or array is expected."""
    what = frame_kind(x)
    if what is not None:
        raise TypeError(
            f"`{name}` is {what}, a table of named columns, not one column of values: pass "
            f"one column (e.g. frame['age']), or privatize columns of the table with "
            f"bndp.privatize(frame, spec) (Spark: bndp.spark.privatize, Dask: "
            f"bndp.dask.privatize)"
        )


def _holds_bool(seq: Any) -> bool:
    """True if a (nested) list or tuple holds a bool or a boolean array: NumPy converts
    ``[0, True, 5.0]`` to float64 silently, hiding what ``np.array([True])`` shows."""
    types = set(map(type, seq))
    if bool in types or np.bool_ in types:
        return True
    for v in seq:
        if isinstance(v, (list, tuple)):
            if _holds_bool(v):
                return True
        elif isinstance(v, np.ndarray) and v.dtype.kind == "b":
            return True
    return False


def as_float_array(x: Any, name: str) -> np.ndarray:
    """Convert ``x`` to a float64 array, refusing non-numeric input with ``TypeError``.

    Accepted: Python/NumPy integers and floats and arrays of them (any integer or float
    dtype, converted to float64). Refused: booleans (also inside a list such as
    ``[0, True, 5.0]``), complex numbers, strings, ``None``, object arrays that do not hold
    real numbers, tables (DataFrames, Arrow Tables: pass one column) and NumPy masked arrays
    (their mask would be lost; the samplers accept them as ``value``, see
    :mod:`bndp._columns`).
    """
    if x is None:
        raise TypeError(f"`{name}` must be a real number or an array of real numbers; got None")
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"`{name}` must be a real number, not a bool; got {x!r}")
    tx = type(x)
    if tx is np.ndarray or tx is float or tx is int:
        pass  # the common cases: neither a masked array nor a table
    elif isinstance(x, np.ma.MaskedArray):
        raise TypeError(
            f"`{name}` is a NumPy masked array: its mask would be ignored and the hidden "
            "values used. Masked arrays are accepted only as the values a sampler releases "
            "(masked entries are missing values, see nulls=); pass a plain array here"
        )
    else:
        refuse_frame(x, name)
    try:
        a = np.asarray(x)
    except Exception as exc:  # ragged nested sequences and the like
        raise ValueError(f"`{name}` could not be converted to an array: {exc}") from None
    kind = a.dtype.kind
    if kind in "iuf":
        if isinstance(x, (list, tuple)) and _holds_bool(x):
            raise TypeError(f"`{name}` must hold real numbers, not booleans; got a bool in "
                            f"the {type(x).__name__}")
        return a.astype(np.float64, copy=False)
    if kind == "b":
        raise TypeError(f"`{name}` must hold real numbers, not booleans (dtype bool)")
    if kind == "c":
        raise TypeError(f"`{name}` must hold real numbers; got complex dtype {a.dtype}")
    if kind == "O":
        flat = a.ravel()
        for k, v in enumerate(flat):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                where = (f" at index {tuple(int(i) for i in np.unravel_index(k, a.shape))}"
                         if a.ndim else "")
                raise TypeError(   # (the type and place only: the entry may be data)
                    f"`{name}` must hold real numbers; found a {type(v).__name__}{where}"
                )
        try:
            return a.astype(np.float64)
        except OverflowError:       # a Python integer beyond the doubles
            raise ValueError(f"`{name}` must hold finite numbers; found an integer beyond "
                             "the range of doubles") from None
    raise TypeError(f"`{name}` must hold real numbers; got dtype {a.dtype}")


def checked_arrays(*items: tuple[Any, str, Any]) -> list[np.ndarray]:
    """``as_float_array(value, name)`` of each ``(value, name, check)``, then
    ``check(array, name)`` of each in turn (``None``: no check): every conversion comes
    before any check."""
    arrays = [as_float_array(value, name) for value, name, _ in items]
    for a, (_, name, check) in zip(arrays, items):
        if check is not None:
            check(a, name)
    return arrays


def check_finite(a: np.ndarray, name: str) -> None:
    bad = ~np.isfinite(a)
    if bad.any():
        raise ValueError(f"`{name}` must be finite; got {_first_bad(a, bad)}")


def check_positive(a: np.ndarray, name: str, *, allow_inf: bool = False) -> None:
    """``a`` must be > 0 (and finite unless ``allow_inf``); NaN fails."""
    ok = a > 0
    if not allow_inf:
        ok &= np.isfinite(a)
    bad = ~ok
    if bad.any():
        what = "> 0" if allow_inf else "finite and > 0"
        raise ValueError(f"`{name}` must be {what}; got {_first_bad(a, bad)}")


def check_epsilon(a: np.ndarray, name: str = "epsilon") -> None:
    check_positive(a, name)


def check_epsilon_delta(eps: np.ndarray, delta: np.ndarray) -> None:
    """Pure or approximate DP budget: eps >= 0 finite, 0 <= delta < 1, not both zero."""
    bad = ~(np.isfinite(eps) & (eps >= 0))
    if bad.any():
        raise ValueError(f"`epsilon` must be finite and >= 0; got {_first_bad(eps, bad)}")
    bad = ~((delta >= 0) & (delta < 1))
    if bad.any():
        raise ValueError(f"`delta` must be in [0, 1); got {_first_bad(delta, bad)}")
    both = np.broadcast_to(eps == 0, np.broadcast_shapes(eps.shape, delta.shape)) & (delta == 0)
    if both.any():
        raise ValueError(
            "`epsilon` must be > 0 when `delta` is 0 (epsilon = delta = 0 allows no release); "
            "got epsilon = 0, delta = 0"
        )


def check_open_unit(a: np.ndarray, name: str) -> None:
    """``0 < a < 1`` elementwise (a probability that may be neither 0 nor 1); NaN fails."""
    bad = ~((a > 0) & (a < 1))
    if bad.any():
        raise ValueError(f"`{name}` must be in (0, 1); got {_first_bad(a, bad)}")


#: what the ends of an interval may be, by ``check_bounds``'s ``ends``
_ENDS = ("finite", "half", "line")


def check_bounds(lower: Any, upper: Any, *, ends: str = "finite") -> None:
    """The check of an interval's ends, ``lower < upper``: bndp's one bounds checker.

    ``lower`` and ``upper`` are floats or float64 arrays (elementwise, broadcasting; already
    converted, see :func:`as_float_array`). ``ends`` says which ends are allowed:
    ``"finite"`` both finite; ``"half"`` ``lower`` finite or -inf and ``upper`` finite or
    +inf, not both infinite (an interval or a half-line); ``"line"`` as ``"half"``, both
    infinite too (the whole line). NaN fails. ``ValueError`` naming the bound; the values
    of scalar bounds are quoted, of array bounds (which may be per-row bounds read from
    data) only the index and, for a NaN or an infinity, that value.
    """
    if type(lower) is float and type(upper) is float:     # scalar bounds: no array work
        if not (math.isfinite(lower) and math.isfinite(upper)):
            _check_ends(np.float64(lower), np.float64(upper), ends)
        if not lower < upper:
            raise ValueError(f"`lower` must be < `upper`; got lower = {lower!r}, "
                             f"upper = {upper!r}")
        return
    if ends == "finite" and rows_pair(lower, upper) and _rows.rows_bounds_ok(
            lower.ravel(), upper.ravel()):
        return      # per-row bounds, every row finite with lower < upper: one pass
    lower, upper = np.asarray(lower), np.asarray(upper)
    _check_ends(lower, upper, ends)
    broadcast_shapes(lower=lower, upper=upper)
    lo, hi = np.broadcast_arrays(lower, upper)
    bad = ~(lo < hi)
    if bad.any():
        if lo.ndim == 0:
            raise ValueError(f"`lower` must be < `upper`; got lower = {float(lo)!r}, "
                             f"upper = {float(hi)!r}")
        # array bounds may be per-row bounds read from data: the place, not the values
        raise ValueError(f"`lower` must be < `upper`; got lower >= upper{_at_index(bad)}")


def _check_ends(lower: np.ndarray, upper: np.ndarray, ends: str) -> None:
    """The ends allowed by :func:`check_bounds`'s ``ends`` (their order checked apart)."""
    if ends == "finite":
        check_finite(lower, "lower")
        check_finite(upper, "upper")
        return
    if ends not in _ENDS:
        raise ValueError(f"`ends` must be one of {_ENDS}; got {ends!r}")
    bad = np.isnan(lower) | (lower == np.inf)
    if bad.any():
        raise ValueError(f"`lower` must be finite or -inf; got {_first_bad(lower, bad)}")
    bad = np.isnan(upper) | (upper == -np.inf)
    if bad.any():
        raise ValueError(f"`upper` must be finite or +inf; got {_first_bad(upper, bad)}")
    if ends == "half":
        broadcast_shapes(lower=lower, upper=upper)
        both = np.broadcast_arrays(np.isinf(lower), np.isinf(upper))
        if (both[0] & both[1]).any():
            raise ValueError("`lower` and `upper` cannot both be infinite: for noise on the "
                             "whole line use bndp.Laplace")


def rows_pair(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are float64 arrays of one shape, C-contiguous, of at least 64
    elements: the per-row checks' one-pass fast path applies (their ravel is a view)."""
    return (type(a) is np.ndarray and type(b) is np.ndarray and a.dtype == _F64
            and b.dtype == _F64 and a.shape == b.shape and a.size >= 64
            and a.flags.c_contiguous and b.flags.c_contiguous)


def check_box(lower: Any, upper: Any) -> tuple[np.ndarray, np.ndarray]:
    """Finite bounds of an interval (0-d) or an m-dimensional box (1-D, same length, or a
    scalar with a 1-D array); returns them as float64 arrays."""
    lo = as_float_array(lower, "lower")
    hi = as_float_array(upper, "upper")
    if lo.ndim > 1 or hi.ndim > 1:
        raise ValueError(
            f"`lower` and `upper` must be scalars or 1-D arrays; got shapes {lo.shape} and {hi.shape}"
        )
    if lo.ndim == 1 and hi.ndim == 1 and lo.shape != hi.shape:
        raise ValueError(
            f"`lower` and `upper` must have the same length; got {lo.shape[0]} and {hi.shape[0]}"
        )
    if lo.size == 0 or hi.size == 0:
        raise ValueError("`lower` and `upper` must not be empty")
    check_bounds(lo, hi)
    return lo, hi


def box_widths(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The widths ``hi - lo`` of a box :func:`check_box` accepted, as a contiguous 1-D
    float64 array; ``ValueError`` where finite bounds overflow their difference."""
    w = np.ascontiguousarray(np.atleast_1d(hi - lo), dtype=np.float64)
    check_positive(w, "upper - lower")   # finite bounds can still overflow their difference
    return w


def as_probability(p: Any, name: str = "p") -> np.ndarray:
    """Probabilities for a quantile function: float64, each in [0, 1] (NaN fails)."""
    a = as_float_array(p, name)
    bad = ~((a >= 0) & (a <= 1))
    if bad.any():
        raise ValueError(f"`{name}` must lie in [0, 1]; got {_first_bad(a, bad)}")
    return a


def check_on_outside(on_outside: str) -> None:
    if on_outside not in ("clip", "raise"):
        raise ValueError(f'`on_outside` must be "clip" or "raise"; got {on_outside!r}')


def check_size(size: Any) -> tuple[int, ...] | None:
    if size is None:
        return None
    if isinstance(size, (bool, np.bool_)):
        raise TypeError(f"`size` must be None, an int or a tuple of ints; got {size!r}")
    if isinstance(size, (int, np.integer)):
        size = (int(size),)
    try:
        shape = tuple(int(operator_index(s)) for s in size)
    except TypeError:
        raise TypeError(f"`size` must be None, an int or a tuple of ints; got {size!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"`size` must not have negative entries; got {shape}")
    n = 1
    for s in shape:
        n *= s
    if n * 8 > _INTP_MAX:  # float64 output: the byte count must fit in a signed pointer
        raise ValueError(
            f"`size` {shape} asks for {n} float64 values, more than an array can hold on this "
            f"platform (at most {_INTP_MAX // 8})"
        )
    return shape


_INTP_MAX = int(np.iinfo(np.intp).max)


def broadcast_shapes(**arrays: Any) -> tuple[int, ...]:
    """Broadcast shape of named arrays; the error names each argument with its shape."""
    try:
        return np.broadcast_shapes(*(np.shape(a) for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"`{k}` {np.shape(a)}" for k, a in arrays.items())
        raise ValueError(f"shapes do not broadcast together: {shapes}") from None


def operator_index(v: Any) -> int:
    import operator

    if isinstance(v, (bool, np.bool_)):
        raise TypeError("bool is not a valid size")
    return operator.index(v)


def apply_domain(value: np.ndarray, lower: Any, upper: Any, on_outside: str,
                 name: str = "value") -> np.ndarray:
    """Check ``value`` is finite and bring it into [lower, upper].

    ``on_outside="clip"`` clips (a 1-Lipschitz map: it never increases the sensitivity, so
    the privacy guarantee is unchanged); ``"raise"`` refuses values outside the domain.
    """
    check_on_outside(on_outside)
    if value.size and np.ndim(lower) == 0 and np.ndim(upper) == 0:
        # fast path for a column with scalar bounds: two reductions (NaN propagates through
        # min/max, so a NaN fails the comparison; an infinite value, where a bound is
        # infinite, fails the finiteness test) instead of four full passes
        vmin = value.min()
        vmax = value.max()
        if vmin >= lower and vmax <= upper and -math.inf < vmin and vmax < math.inf:
            return value
    if (rows_pair(value, lower) and rows_pair(value, upper)
            and _rows.rows_inside(value.ravel(), lower.ravel(), upper.ravel())):
        return value    # per-row bounds, every row finite and inside: one pass
    check_finite(value, name)
    if np.ndim(lower) or np.ndim(upper):
        broadcast_shapes(**{name: value, "lower": lower, "upper": upper})
    below = value < lower
    outside = below | (value > upper)
    if outside.any():
        if on_outside == "raise":
            # the place and the side only: the value is data
            i = tuple(np.argwhere(outside)[0]) if outside.ndim else ()
            side = "below `lower`" if np.broadcast_to(below, outside.shape)[i] else \
                "above `upper`"
            raise ValueError(f"`{name}` must lie in [lower, upper] (on_outside='raise'); got "
                             f"a value {side}{_at_index(outside)}")
        return np.clip(value, lower, upper)
    return value


#: doubles per noise scale that a continuous release needs at its bounds: fewer, and the
#: noise rounds away (the draws equal to the true values)
CONTINUOUS_STEPS = 16.0


def check_continuous_resolution(scale: Any, lower: Any, upper: Any) -> None:
    """Refuse a continuous law (``mode="continuous"``) whose noise no double of its range can
    carry: the spacing of doubles at the range's value nearest 0 (0 where the range
    straddles it) above ``scale / CONTINUOUS_STEPS`` (bounds far from 0 for the noise: a
    small sensitivity, or a large epsilon), where every draw would round to its true value.
    (Where only part of the range is that far out, the draws there are as coarse: the
    continuous mode's outputs depend on the true value, see the threat model.)
    Element-wise for per-row bounds and scales."""
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    sc = np.asarray(scale, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        # fast path (per-row bounds, finite): the farthest bound against the smallest scale,
        # by reductions only (an infinite bound fails it: the element-wise test follows)
        if lo.size and hi.size and sc.size:
            far = max(abs(float(lo.min())), abs(float(lo.max())), abs(float(hi.min())),
                      abs(float(hi.max())))
            if np.spacing(far) <= float(sc.min()) / CONTINUOUS_STEPS:
                return
        m = np.where((lo <= 0.0) & (hi >= 0.0), 0.0, np.minimum(np.abs(lo), np.abs(hi)))
        bad = np.spacing(m) > sc / CONTINUOUS_STEPS
    if np.any(bad):
        i = np.unravel_index(int(np.argmax(bad)), bad.shape) if np.ndim(bad) else ()
        mm = float(np.broadcast_to(m, bad.shape)[i])
        s_i = float(np.broadcast_to(sc, bad.shape)[i])
        if lo.ndim == 0 and hi.ndim == 0:
            where = (f"the doubles of the range nearest 0 ({mm!r}) are spaced "
                     f"{float(np.spacing(mm))!r} apart, more than 1/{CONTINUOUS_STEPS:g} of "
                     f"the noise scale {s_i!r}")
        else:   # per-row bounds may be data (and set the scale): the row, not its numbers
            where = (f"the doubles of the range of the bounds at index "
                     f"{tuple(int(k) for k in i)} are spaced more than "
                     f"1/{CONTINUOUS_STEPS:g} of that row's noise scale apart")
        raise ValueError(
            f"mode='continuous': {where}: the draws would round to the true values. Shift "
            "the data towards 0, or use the default mode (which coarsens its grid there, or "
            "refuses)")


def fast_real(x: Any, name: str) -> float:
    """Scalar check for the fast path: real, not bool, converted to float."""
    v = scalar_or_none(x)
    if v is None:
        raise TypeError(f"`{name}` must be a real number; got {_show(x)}")
    return v


def positive_real(x: Any, name: str) -> float:
    """``x`` as a float, refusing anything but a finite number > 0 (``ValueError``)."""
    v = fast_real(x, name)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"`{name}` must be finite and > 0; got {v!r}")
    return v


def check_forbidden(forbidden: Any, lower: float, upper: float) -> np.ndarray:
    """Forbidden open intervals ``[(a1, b1), ...]`` as an (n, 2) float64 array.

    Each interval must be finite and non-empty (``a < b``); the list must be sorted and the
    intervals separated (``b_k < a_{k+1}``: touching or overlapping intervals leave no room
    or an isolated allowed point, merge them instead); all must lie strictly inside
    ``(lower, upper)``.
    """
    if forbidden is None:
        return np.empty((0, 2))
    a = as_float_array(forbidden, "forbidden")
    if a.size == 0:
        return np.empty((0, 2))
    if a.ndim == 1 and a.shape[0] == 2:
        raise ValueError(
            "`forbidden` must be a sequence of (a, b) pairs, e.g. [(10, 20)]; got a single "
            f"pair {tuple(a.tolist())!r}")
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"`forbidden` must be a sequence of (a, b) pairs; got shape {a.shape}")
    bad = ~np.isfinite(a)
    if bad.any():
        k = int(np.argwhere(bad)[0][0])
        raise ValueError(
            f"`forbidden` intervals must be finite (use `lower`/`upper` for half-lines); "
            f"got {tuple(a[k].tolist())!r} at index {k}")
    empty = ~(a[:, 0] < a[:, 1])
    if empty.any():
        k = int(np.argmax(empty))
        raise ValueError(f"`forbidden` interval {k} is empty: need a < b; got {tuple(a[k].tolist())!r}")
    if a.shape[0] > 1:
        uns = a[1:, 0] < a[:-1, 0]
        if uns.any():
            k = int(np.argmax(uns)) + 1
            raise ValueError(
                f"`forbidden` intervals must be sorted by their left end; interval {k} "
                f"{tuple(a[k].tolist())!r} starts before interval {k - 1} {tuple(a[k - 1].tolist())!r}")
        ov = ~(a[:-1, 1] < a[1:, 0])
        if ov.any():
            k = int(np.argmax(ov))
            raise ValueError(
                f"`forbidden` intervals {k} {tuple(a[k].tolist())!r} and {k + 1} "
                f"{tuple(a[k + 1].tolist())!r} overlap or touch; merge them into one interval")
    if not (lower < a[0, 0]) or not (a[-1, 1] < upper):
        raise ValueError(
            f"`forbidden` intervals must lie strictly inside (lower, upper) = ({lower!r}, {upper!r}); "
            f"got {tuple(a[0].tolist()) if not (lower < a[0, 0]) else tuple(a[-1].tolist())!r} "
            "(shrink `lower`/`upper` instead)")
    return np.ascontiguousarray(a)


def budget_amount(x: Any, name: str, *, positive: bool) -> float:
    """A budget's epsilon or delta (a cap or a cost): a real number, finite and ``>= 0``
    (``> 0`` if ``positive``); ``TypeError`` or ``ValueError`` naming ``name``."""
    if (isinstance(x, (bool, np.bool_, complex, np.complexfloating))
            or not isinstance(x, (int, float)) and not hasattr(x, "__float__")):
        raise TypeError(f"`{name}` must be a real number; got {x!r}")
    try:
        v = float(x)
    except OverflowError:           # an integer or fraction beyond the doubles
        v = math.inf
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a real number; got {x!r}") from None
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        shown = repr(x) if len(repr(x)) <= 40 else f"{v!r} ({type(x).__name__})"
        raise ValueError(
            f"`{name}` must be finite and {'> 0' if positive else '>= 0'}; got {shown}")
    return v
