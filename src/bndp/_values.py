r"""True values that are not doubles: each rounded onto the release grid once, from its exact
value.

The default release rounds a true value :math:`q` to its grid index
:math:`i = \lfloor (q - l)/\gamma + 1/2 \rfloor` (clipped), and its certificate assumes that
two true values at most :math:`\Delta` apart get indices at most
:math:`d_k = \lceil \Delta/\gamma \rceil` apart. That holds for the exact value. A value
that is not a double (a wide integer, a ``longdouble``, a ``Decimal``, a decimal text cell)
rounded first to the nearest double and then to the grid can land one index further: near
a cell boundary the first rounding may go down for ``x`` and up for ``x + Δ``.

So values of such kinds never reach the grid through a double of their own. They are read
as :class:`WideValues`: float64 approximations (``approx``, within a few units in the last
place of the exact value, NaN where missing) and the exact values, computed only where they
are needed. :func:`snap` replaces each approximation whose grid cell is in doubt (a cell
boundary within its error bound, half a unit in the last place for a correctly rounded
conversion) by a double in the cell of the *exact* value,
computed in rational arithmetic from the plan's own rounding rule (``plan.exact_index``).
Every other approximation already lies in the exact value's cell. The sampler then sees
doubles whose grid indices are those of the exact values, and the certificate holds as
for doubles.

The input contract (what a "true value" is) for each kind:

* float64, float32, float16, integers of at most 32 bits, and 64-bit integers of magnitude
  at most :math:`2^{53}`: the double itself (exact; the fast path, no extra work);
* int64/uint64 beyond :math:`2^{53}`, Python ``int``, ``numpy.longdouble``,
  ``decimal.Decimal``, ``fractions.Fraction`` (scalars, lists, object arrays, pandas
  ``object``/nullable integer columns, Arrow and Polars 64-bit integer and decimal
  columns, Polars 128-bit integer columns, torch integer tensors) and the CSV cells of the
  command line (decimal text): the exact number, rounded once onto the grid as above;
* a (nested) list or tuple that NumPy reads as floats (integers beyond :math:`2^{53}`
  mixed with floats, or spanning int64 and uint64): each integer beyond :math:`2^{53}` is
  the exact integer, as above; every other entry is its double.

Bounds (scalar or per row) are public: each is converted once to the nearest double, and the
grid is that of the double bounds; the exact true value is clipped to them exactly.
Without a grid (``mode="continuous"``, the gradient and unbounded mechanisms) a value is
released from its nearest double, as a double input would be.
"""

from __future__ import annotations

import math
import numbers
import sys
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np

from ._validation import as_float_array, frame_kind

__all__ = ["WideValues", "as_values", "snap", "snap_plan", "approx", "exact_number",
           "wide_column", "wide_int_column", "from_ints"]

_TWO53 = 1 << 53
_MAX = sys.float_info.max


def exact_number(v: Any) -> Fraction:
    """The exact value of a real number of any supported kind, as a Fraction."""
    if isinstance(v, Fraction):
        return v
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    if isinstance(v, np.longdouble) and not isinstance(v, np.float64):
        n, d = v.as_integer_ratio()
        return Fraction(n, d)
    if isinstance(v, str):
        return Fraction(v.strip())
    if isinstance(v, (float, Decimal, np.floating)):
        return Fraction(v) if not isinstance(v, np.floating) else Fraction(float(v))
    return Fraction(v)


class WideValues:
    """True values not all of which are doubles: float64 approximations and, on demand, the
    exact values (see the module docstring).

    Parameters
    ----------
    approx : ndarray of float64
        Approximations within ``ulps`` units in the last place of the exact values (NaN
        where a value is missing); finite exact values beyond the double range are given as
        :math:`\\pm` the largest double.
    exact : callable
        ``exact(positions)``: the exact values (``Fraction``) at flat positions of
        ``approx`` (an int64 array).
    candidates : ndarray of bool or None
        The positions whose approximation may differ from the exact value (None: all).
    ulps : float, default 0.5
        How far an approximation may be from its exact value, in units in the last place
        (0.5: correctly rounded).
    """

    __slots__ = ("approx", "_exact", "_cand", "ulps")

    def __init__(self, approx: np.ndarray, exact: Callable[[np.ndarray], Sequence[Fraction]],
                 candidates: np.ndarray | None = None, ulps: float = 0.5) -> None:
        self.approx = approx
        self._exact = exact
        self._cand = candidates
        self.ulps = ulps

    shape = property(lambda self: self.approx.shape)
    ndim = property(lambda self: self.approx.ndim)
    size = property(lambda self: self.approx.size)
    dtype = property(lambda self: self.approx.dtype)

    def __len__(self) -> int:
        return len(self.approx)

    def __repr__(self) -> str:
        return f"WideValues(shape={self.shape})"

    def exact_at(self, positions: np.ndarray) -> list[Fraction]:
        """Exact values at flat positions."""
        return list(self._exact(np.asarray(positions, dtype=np.int64)))

    def candidates(self) -> np.ndarray:
        """Flat positions whose approximation may be inexact (finite approximations only)."""
        a = self.approx.ravel()
        ok = np.isfinite(a)
        if self._cand is not None:
            ok &= self._cand.ravel()
        return np.flatnonzero(ok)

    def __getitem__(self, sel: Any) -> "WideValues":
        """A subset by a boolean mask or an integer index array over the values (flat)."""
        base = np.arange(self.approx.size).reshape(self.approx.shape)[sel]
        flat = np.ravel(base)
        src = self._exact

        def exact(pos: np.ndarray) -> Sequence[Fraction]:
            return src(flat[pos])

        cand = None if self._cand is None else self._cand.reshape(self.approx.shape)[sel]
        return WideValues(np.asarray(self.approx[sel]), exact, cand, self.ulps)

    def broadcast_to(self, shape: tuple) -> "WideValues":
        base = np.broadcast_to(np.arange(self.approx.size).reshape(self.approx.shape), shape)
        flat = np.ascontiguousarray(base).ravel()
        src = self._exact

        def exact(pos: np.ndarray) -> Sequence[Fraction]:
            return src(flat[pos])

        cand = (None if self._cand is None
                else np.ascontiguousarray(np.broadcast_to(self._cand, shape)))
        return WideValues(np.ascontiguousarray(np.broadcast_to(self.approx, shape)), exact,
                          cand, self.ulps)

    def reshape(self, *shape: Any) -> "WideValues":
        cand = None if self._cand is None else self._cand.reshape(*shape)
        return WideValues(self.approx.reshape(*shape), self._exact, cand, self.ulps)

    def ravel(self) -> "WideValues":
        return self.reshape(-1)


def approx(x: Any) -> Any:
    """The float64 approximations of :class:`WideValues`, anything else unchanged."""
    return x.approx if type(x) is WideValues else x


def from_ints(a: np.ndarray, missing: np.ndarray | None = None) -> np.ndarray | WideValues:
    """An int64/uint64 array (``missing``: entries to read as NaN)."""
    out = a.astype(np.float64)
    if missing is not None and missing.any():
        out[missing] = np.nan
    # every value within 2^53 (two reductions, no temporary): the doubles are exact
    if a.size == 0 or (int(a.max()) <= _TWO53 and (a.dtype.kind == "u"
                                                   or int(a.min()) >= -_TWO53)):
        return out
    big = (a > _TWO53) if a.dtype.kind == "u" else ((a > _TWO53) | (a < -_TWO53))
    if missing is not None:
        big &= ~missing
    if not big.any():
        return out
    flat = a.ravel()
    return WideValues(out, lambda pos: [Fraction(int(flat[p])) for p in pos], big)


def _from_longdouble(a: np.ndarray) -> np.ndarray | WideValues:
    with np.errstate(over="ignore", invalid="ignore"):
        out = a.astype(np.float64)
        inexact = (out.astype(a.dtype) != a) & ~np.isnan(a)
    if not inexact.any():
        return out
    over = inexact & np.isinf(out) & np.isfinite(a)
    out[over] = np.copysign(_MAX, out[over])
    flat = a.ravel()
    return WideValues(out, lambda pos: [exact_number(flat[p]) for p in pos], inexact)


def _from_objects(a: np.ndarray, name: str, missing: np.ndarray | None = None
                  ) -> np.ndarray | WideValues:
    """An object array of real numbers (``missing``: entries to read as NaN, any object)."""
    flat = a.ravel()
    miss = None if missing is None else np.ravel(missing)
    out = np.empty(flat.shape[0])
    cand = np.zeros(flat.shape[0], dtype=bool)
    for k, v in enumerate(flat):
        if miss is not None and miss[k]:
            out[k] = np.nan
            continue
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, Decimal)):
            where = (f" at index {tuple(int(i) for i in np.unravel_index(k, a.shape))}"
                     if a.ndim else "")     # (the type and place only: the entry is data)
            raise TypeError(f"`{name}` must hold real numbers; found a {type(v).__name__}"
                            f"{where}")
        t = type(v)
        if t is float or t is np.float64 or t is np.float32 or t is np.float16:
            out[k] = v
            continue
        if t is int or isinstance(v, np.integer):
            iv = int(v)  # type: ignore[arg-type]
            if -_TWO53 <= iv <= _TWO53:
                out[k] = iv
                continue
            out[k] = (_MAX if iv > 0 else -_MAX) if abs(iv) > _MAX else float(iv)
            cand[k] = True
            continue
        try:
            f = float(v)
        except OverflowError:
            f = math.inf if v > 0 else -math.inf  # type: ignore[operator]
        if math.isinf(f) and isinstance(v, (Decimal, Fraction, np.longdouble)) and (
                not isinstance(v, Decimal) or v.is_finite()) and not (
                isinstance(v, np.longdouble) and not np.isfinite(v)):
            f = math.copysign(_MAX, f)
        out[k] = f
        cand[k] = not math.isnan(f)
    res = out.reshape(a.shape)
    if not cand.any():
        return res
    return WideValues(res, lambda pos: [exact_number(flat[p]) for p in pos],
                      cand.reshape(a.shape))


def as_values(x: Any, name: str) -> np.ndarray | WideValues:
    """True values as float64 (every value a double, or converted exactly) or as
    :class:`WideValues` (some value not a double): the one conversion of released values.

    Checks as :func:`bndp._validation.as_float_array` (which it calls for every input whose
    conversion to float64 is exact)."""
    t = type(x)
    if t is np.ndarray:
        k = x.dtype
        if k.kind == "f" and k.itemsize <= 8:
            return as_float_array(x, name)
        if k.kind in "iu" and k.itemsize == 8:
            return from_ints(x)
        if k.kind == "f":
            return _from_longdouble(x)
        if k.kind == "O":
            return _from_objects(x, name)
        return as_float_array(x, name)
    if t is float:
        return as_float_array(x, name)
    if t is WideValues:
        return x
    if t is int:
        if -_TWO53 <= x <= _TWO53:
            return as_float_array(x, name)
        return _from_objects(np.array(x, dtype=object), name)
    if isinstance(x, (Decimal, Fraction)):
        return _from_objects(np.array(x, dtype=object), name)
    if isinstance(x, np.generic):
        if isinstance(x, (np.int64, np.uint64)):
            return from_ints(np.asarray(x))
        if isinstance(x, np.longdouble) and not isinstance(x, np.float64):
            return _from_longdouble(np.asarray(x))
        return as_float_array(x, name)
    if isinstance(x, np.ma.MaskedArray) or frame_kind(x) is not None or x is None or \
            isinstance(x, (bool, np.bool_)):
        return as_float_array(x, name)      # refused there, with its message
    try:
        a = np.asarray(x)
    except Exception:
        return as_float_array(x, name)
    k = a.dtype
    if (k.kind in "iu" and k.itemsize == 8) or k.kind == "O" or (k.kind == "f"
                                                                 and k.itemsize > 8):
        if isinstance(x, (list, tuple)) and k.kind != "O":
            as_float_array(x, name)         # booleans inside a list are refused there
        return as_values(a, name)
    if k.kind == "f" and isinstance(x, (list, tuple)):
        return _from_sequence(x, as_float_array(x, name), name)
    return as_float_array(x, name)


def _from_sequence(x: list | tuple, out: np.ndarray, name: str) -> np.ndarray | WideValues:
    """A (nested) list or tuple that NumPy reads as floats (``out``: that float64 array).

    NumPy converts integers mixed with floats (``[2**61 + 1, 0.5]``, or ``[2**63, -1]``,
    which no 64-bit integer type holds) to their nearest doubles. Only an integer of
    magnitude above :math:`2^{53}` can change so, and its double then has magnitude at
    least :math:`2^{53}`: the entries whose double is that large keep their exact values
    (read from the sequence), every other entry is its double. A list of floats below
    :math:`2^{53}` costs one vectorised comparison more."""
    with np.errstate(invalid="ignore"):
        big = np.abs(out) >= _TWO53        # (NaN: False)
    if not big.any():
        return out
    objs = np.asarray(x, dtype=object)
    if objs.shape != out.shape:
        raise ValueError(f"`{name}`: this sequence cannot be read element by element (it "
                         "holds integers beyond 2^53, which must be read exactly); pass a "
                         "NumPy array")
    flat = objs.ravel()

    def exact(pos: np.ndarray) -> list[Fraction]:
        vals = (flat[p] for p in pos)
        return [exact_number(v.item() if isinstance(v, np.ndarray) else v) for v in vals]

    # (CPython's and NumPy's integer-to-double conversions are correctly rounded)
    return WideValues(out, exact, big)


def wide_column(values: np.ndarray, missing: np.ndarray | None,
                exact: Callable[[np.ndarray], Sequence[Any]],
                candidates: np.ndarray | None = None, ulps: float = 0.5) -> WideValues:
    """:class:`WideValues` of a column: float64 approximations (NaN where ``missing``;
    within ``ulps`` units in the last place of the exact values) and a function giving the
    source's exact numbers (any kind :func:`exact_number` reads) at positions."""
    cand = np.isfinite(values)
    if candidates is not None:
        cand &= candidates
    if missing is not None:
        cand &= ~missing
    return WideValues(values, lambda pos: [exact_number(v) for v in exact(pos)], cand, ulps)


def wide_int_column(values: np.ndarray, missing: np.ndarray | None,
                    exact: Callable[[np.ndarray], Sequence[Any]]) -> np.ndarray | WideValues:
    """A column of integers wider than 64 bits (Polars ``Int128``/``UInt128``): ``values``
    its engine's cast to float64 (NaN where ``missing``), ``exact(positions)`` its integers
    at flat positions. Entries of magnitude below :math:`2^{53}` are exact doubles; the
    others keep their exact values (:func:`wide_column`; the cast is taken to be within
    one unit in the last place). Float64 when every value is a double."""
    with np.errstate(invalid="ignore"):
        big = np.abs(values) >= _TWO53     # (NaN: False)
    if missing is not None:
        big &= ~missing
    if not big.any():
        return values
    return wide_column(values, missing, exact, big, ulps=1.0)


def snap(wv: WideValues, index: Callable[[np.ndarray, np.ndarray], np.ndarray],
         exact_index: Callable[[Fraction, int], int]) -> np.ndarray:
    """Doubles whose grid indices are those of the exact values.

    ``index(d, positions)``: the sampler's grid index (int64) of doubles ``d`` standing at
    flat ``positions``; ``exact_index(v, position)``: the same rounding rule applied to the
    exact value ``v`` (rational arithmetic). Returns a float64 array of ``wv``'s shape:
    ``wv.approx`` where the approximation is in the exact value's cell (checked by the
    cells of two probes around it), a double of the exact value's cell elsewhere."""
    out = np.array(wv.approx, dtype=np.float64, copy=True)
    flat = out.reshape(-1)
    pos = wv.candidates()
    if pos.size == 0:
        return out
    d = flat[pos]
    # the exact value lies within wv.ulps units in the last place of d: probe just beyond
    # (the largest double's spacing is inf: its probes are the infinities)
    with np.errstate(over="ignore"):
        r = np.spacing(np.abs(d)) * (wv.ulps + 0.5)
    doubt = index(d - r, pos) != index(d + r, pos)
    pos = pos[doubt]
    if pos.size == 0:
        return out
    vals = wv.exact_at(pos)
    k = np.array([exact_index(v, p) for p, v in zip(pos.tolist(), vals)], dtype=np.int64)
    x = np.array([float(min(max(v, Fraction(-_MAX)), Fraction(_MAX))) for v in vals])
    # a double of cell k: from the exact value's nearest double, step towards the cell (the
    # cell is at least one unit in the last place wide, so a few steps reach it)
    todo = np.arange(pos.size)
    for _ in range(64):
        i = index(x[todo], pos[todo])
        off = i != k[todo]
        if not off.any():
            break
        todo = todo[off]
        x[todo] = np.nextafter(x[todo], np.where(i[off] < k[todo], math.inf, -math.inf))
    else:  # pragma: no cover - a grid cell holds at least one double
        raise RuntimeError("grid law: no double in the grid cell of an exact value")
    flat[pos] = x
    return out


def _clipper(lo: float, hi: float) -> Callable[[Fraction], Fraction]:
    """Clip exact values into ``[lo, hi]`` (infinite ends: no clip there)."""
    flo = Fraction(lo) if math.isfinite(lo) else None
    fhi = Fraction(hi) if math.isfinite(hi) else None

    def clip(v: Fraction) -> Fraction:
        if flo is not None and v < flo:
            return flo
        if fhi is not None and v > fhi:
            return fhi
        return v
    return clip


def snap_plan(plan: Any, values: WideValues, lower: Any, upper: Any) -> np.ndarray:
    """:func:`snap` for a mechanism's grid law (``plan``: a plan with ``index`` and
    ``exact_index``, or a product of such plans in ``coords``; ``lower``/``upper``: the
    mechanism's bounds, scalars or one per coordinate). Without a plan, or with a
    randomised rounding (the metric guarantee), the approximations themselves."""
    if plan is None or getattr(plan, "randomised", False):
        return np.array(values.approx, dtype=np.float64)
    coords = getattr(plan, "coords", None)
    if coords is None:
        lo, hi = float(lower), float(upper)
        clip = _clipper(lo, hi)

        def index(d: np.ndarray, pos: np.ndarray) -> np.ndarray:
            return np.asarray(plan.index(np.clip(d, lo, hi)), dtype=np.int64)

        def exact(v: Fraction, p: int) -> int:
            return plan.exact_index(clip(v))
    else:
        m = len(coords)
        los = np.broadcast_to(np.asarray(lower, dtype=np.float64), (m,))
        his = np.broadcast_to(np.asarray(upper, dtype=np.float64), (m,))

        def index(d: np.ndarray, pos: np.ndarray) -> np.ndarray:
            out = np.empty(d.shape[0], dtype=np.int64)
            c = pos % m
            for cv in np.unique(c):
                s = np.flatnonzero(c == cv)
                out[s] = coords[cv].index(np.clip(d[s], los[cv], his[cv]))
            return out

        clips = [_clipper(float(a), float(b)) for a, b in zip(los, his)]

        def exact(v: Fraction, p: int) -> int:
            c = p % m
            return coords[c].exact_index(clips[c](v))
    return snap(values, index, exact)


def grid_round(value: Fraction, anchor: float, e: int, lower: float | None = None,
               upper: float | None = None) -> int:
    """``floor((clip(value) - anchor) / 2^e + 1/2)``: the grid's rounding (nearest point of
    ``anchor + 2^e Z``, ties up) of an exact value clipped into ``[lower, upper]`` (None:
    no clip), in integer arithmetic: every term is scaled to one integer denominator
    ``b 2^Q`` (``b`` the value's denominator), where the doubles are integers."""
    a, b = value.numerator, value.denominator
    ma, qa = _dyadic(anchor)
    parts = [qa, -e + 1, 0]
    ends = [(_dyadic(x), k) for x, k in ((lower, 0), (upper, 1)) if x is not None]
    parts += [q for (_, q), _k in ends]
    Q = max(parts) + 1
    A = a << Q
    for (m, q), k in ends:          # clip, compared exactly at the common scale
        X = (m * b) << (Q - q)
        if (k == 0 and A < X) or (k == 1 and A > X):
            A = X
    G = b << (Q + e)                # 2^e at the common scale (an even integer)
    return (A - ((ma * b) << (Q - qa)) + (G >> 1)) // G


def _dyadic(x: float) -> tuple[int, int]:
    """A finite double as ``m / 2^q`` (``q`` may be negative)."""
    n, d = x.as_integer_ratio()
    return n, d.bit_length() - 1
