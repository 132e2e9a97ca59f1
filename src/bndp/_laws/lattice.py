r"""The integer law: the windowed grid law (:mod:`bndp._laws.window`) on the lattice
:math:`l + j k` of an integral lower bound :math:`l` and an integral step :math:`k \ge 1`, in
place of the default grid's granularity :math:`\gamma \le \Delta/(16\epsilon)`.

For a step :math:`k = 2^s` the law, its table, its sampler and its certificate are the
windowed law's with the exponent fixed to ``s``: nothing else changes, so the certificate
(every pair of true values at most :math:`\lceil\Delta/k\rceil` steps apart, from the
sampler's own integer table) holds as for the default grid. Any other step (:class:`Step`)
is the law of step 1 in lattice units, mapped affinely (:mod:`bndp._laws.step`). The outputs
:math:`l + jk` are exact integers (bounds below :math:`2^{52}` in magnitude). The
documentation's page "Integer data" (``docs/integer.md``) describes the law for users.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .constants import SCALE_STEPS, SENS_STEPS, WINDOW_WIDTH_STEPS

__all__ = ["Step", "lattice_of", "step_of", "check_lattice", "check_integral", "integer_step", "integral",
           "auto_step", "as_integers", "integer_input",
           "MAX_LATTICE_STEPS", "MAX_LATTICE_BOUND"]

#: Integral bounds of the integer law: at most 2^52 in magnitude (the lattice's points are
#: then exact doubles, and the default grid's coarsening for large bounds never applies).
MAX_LATTICE_BOUND = float(1 << 52)

#: The integer law: at most this many lattice steps per unit of noise scale (sensitivity /
#: target, in steps): a finer lattice than that buys nothing and costs tables of millions of
#: weights; such parameters are refused with the advice to pass a coarser step.
MAX_LATTICE_STEPS = 1 << 16


@dataclass(frozen=True)
class Step:
    """An integer lattice step ``k >= 3`` that is not a power of two: the law of step 1 in
    lattice units, mapped affinely (:mod:`bndp._laws.step`). A power of two is passed as its
    exponent (an ``int``) instead. Not an ``int``, so that no code reads it as an
    exponent."""

    k: int

    def units(self, sensitivity: Any) -> int:
        """The sensitivity in lattice steps, rounded up: :math:`\\lceil\\Delta/k\\rceil`
        (an integral ``sensitivity``, at most :math:`2^{53}`), at least 1."""
        return max(1, -(-int(sensitivity) // self.k))


def lattice_of(step: Any) -> "int | Step":
    """The lattice of an integer step ``k`` (an integer from 1 to :math:`2^{52}`): the
    exponent ``s`` of ``k = 2^s`` (an ``int``), or :class:`Step` ``(k)`` for any other
    ``k``; ``ValueError`` otherwise."""
    k = int(step)
    if k < 1 or k > 1 << 52:
        raise ValueError(f"`integer`: the lattice step must be an integer from 1 to 2^52; "
                         f"got {step!r}")
    if k & (k - 1):
        return Step(k)
    return k.bit_length() - 1


def step_of(lattice: "int | Step") -> int:
    """The step ``k`` of a lattice (:func:`lattice_of`'s result)."""
    return lattice.k if isinstance(lattice, Step) else 1 << lattice


def check_lattice(target: float, sensitivity: float, s: "int | Step") -> None:
    """Refuse an integer lattice (the exponent ``s`` of a step ``2^s``, or a :class:`Step`)
    that is finer than the noise warrants:
    more than :data:`MAX_LATTICE_STEPS` steps per noise scale (``sensitivity / target``),
    or more than :math:`2^{21}` steps per sensitivity (the certificate's work, as
    :data:`bndp._laws.window.STEPS_LOG2` caps the default grid's)."""
    dq = float(sensitivity)
    if isinstance(s, Step):
        dq, s = float(s.units(dq)), 0
    steps = math.ldexp(dq, -s)
    if steps > 1 << 21 or steps / target > MAX_LATTICE_STEPS:
        raise ValueError(
            f"integer law: a lattice step of {step_of(s)} is too fine for sensitivity {dq!r} at "
            f"epsilon {target:g} (the noise spans about {steps / target:.3g} steps; at most "
            f"{MAX_LATTICE_STEPS} are served): pass a coarser step (`integer=k`, k a power "
            ") or integer=False")


def _pass_steps(target: float, dq: float, s: int | None) -> tuple[float, float, float, float]:
    r"""``(dq, scale_steps, width_steps, sens_steps)`` for the compiled grid pass
    (``gw_rows_grid``, ``gw_rows_first``): the default grid's constants, or, for the integer
    lattice of step :math:`2^s` (``s`` not None), values under which the pass gives every
    row the exponent ``s``. The pass takes :math:`\gamma = 2^e` the largest power of two at
    most :math:`\min(dq/t/ss, dq, w/ws)`, refined while :math:`\min(dq, w)/\gamma` is not an
    integer and below ``sens_steps``: with :math:`dq' = \max(dq, 2^s)` (the same
    :math:`\lceil dq/2^s\rceil` steps), :math:`ss = dq'/(1.5\cdot 2^s t)` (the first
    term :math:`1.5\cdot 2^s` to within a few ulps), :math:`ws = 2^{-1000}` (the width term
    above any row's) and ``sens_steps = 0`` (no refinement), the minimum lies in
    :math:`[2^s, 2^{s+1})`; bounds below :math:`2^{52}` in magnitude are never coarsened.
    """
    if s is None:
        return dq, float(SCALE_STEPS), float(WINDOW_WIDTH_STEPS), float(SENS_STEPS)
    k = math.ldexp(1.0, s)
    dqe = max(dq, k)
    return dqe, dqe / (1.5 * k * target), math.ldexp(1.0, -1000), 0.0


def integer_step(integer: Any) -> int:
    """The lattice step an ``integer=`` argument asks for: 0 for ``False`` or 0 (the default
    grid), 1 for ``True``, ``k`` for an integer ``k >= 1``;
    ``TypeError``/``ValueError`` for anything else."""
    if integer is False or integer is True:
        return int(integer)
    if isinstance(integer, (bool, np.bool_)):
        return int(bool(integer))
    if not isinstance(integer, (int, np.integer)):
        raise TypeError("`integer` must be True, False or a lattice step (an integer >= 1); "
                        f"got {integer!r}")
    if integer == 0:
        return 0                  # (the value of the ``integer`` attribute when off)
    lattice_of(integer)
    return int(integer)


def integral(x: Any) -> bool:
    """Whether every element of ``x`` (a number or an array) is an integral double of
    magnitude at most :data:`MAX_LATTICE_BOUND` (NaN and infinities are not)."""
    a = np.asarray(x)
    if a.dtype.kind not in "iuf":
        a = np.asarray(a, dtype=np.float64)
    if a.size == 0:
        return True
    if a.ndim == 0:
        v = float(a)
        return abs(v) <= MAX_LATTICE_BOUND and v == math.floor(v)
    # (NaN fails both comparisons of the range; the range check first: two reductions)
    if not (a.min() >= -MAX_LATTICE_BOUND and a.max() <= MAX_LATTICE_BOUND):
        return False
    return a.dtype.kind != "f" or bool(np.array_equal(a, np.trunc(a)))


def check_integral(step: int, sensitivity: Any, lower: Any, upper: Any,
                   mode: str = "exact") -> "int | Step":
    """Validate the parameters of the integer law of step ``step`` (``k >= 1``) and return
    its lattice (:func:`lattice_of`: the exponent ``s`` of :math:`k = 2^s`, or a
    :class:`Step`): the default mode, integral bounds of magnitude
    at most :math:`2^{52}` and an integral sensitivity (at least 1). The messages quote the
    public parameters only (per-row bounds are data: their values are not quoted)."""
    s = lattice_of(step)
    if mode != "exact":
        raise ValueError("`integer` is a law of the default mode: mode='continuous' releases "
                         "doubles; pass integer=False with it")
    if not integral(sensitivity) or float(sensitivity) < 1.0:
        raise ValueError("integer law: `sensitivity` must be an integer >= 1; got "
                         f"{sensitivity!r} (pass integer=False for the fine grid)")
    for name, b in (("lower", lower), ("upper", upper)):
        if not integral(b):
            got = (f"got {float(b)!r}" if np.ndim(b) == 0 else
                   "some per-row value is not")
            raise ValueError(f"integer law: `{name}` must be integral, of magnitude at most "
                             f"2^52; {got} (pass integer=False for the fine grid)")
    return s


def integer_input(value: Any) -> np.dtype | None:
    """The integer dtype of an integer-typed input (a Python int, a NumPy integer scalar or
    array, a list or tuple NumPy reads as integers), else None. Booleans are not integers
    here."""
    t = type(value)
    if t is int:
        return np.dtype(np.int64)
    if t is float or t is bool:
        return None
    if isinstance(value, (np.ndarray, np.integer)):
        dt = value.dtype
        return dt if dt.kind in "iu" else None
    if isinstance(value, (list, tuple)):
        try:
            dt = np.asarray(value).dtype
        except (ValueError, TypeError, OverflowError):
            return None
        return dt if dt.kind in "iu" else None
    return None


def as_integers(out: Any, value: Any, lower: Any, upper: Any, rows: bool = False) -> Any:
    """The integer law's draws ``out`` (float64 holding integers) in the type of an
    integer-typed ``value`` (:func:`integer_input`): an ``int`` for a Python int, else the
    input's own integer dtype where every lattice point fits it, int64 where it may not; any
    other input keeps the float64 draws.

    Whether the points fit is decided from public facts only: a mechanism's bounds (public)
    by their values; per-row bounds (``rows``: data) by their dtypes alone, never by their
    values, so the result's dtype says nothing about the rows (integer-typed bound arrays
    promote with the input's dtype; float-typed ones give int64)."""
    dt = integer_input(value)
    if dt is None:
        return out
    if type(value) is int:
        return int(out) if np.ndim(out) == 0 else np.asarray(out).astype(np.int64)
    # (every lattice point l + j 2^s is an integral double below 2^53 in magnitude: the
    # conversion is exact; tests/test_integer_law.py checks the draws are integers)
    for b in (lower, upper):
        if dt == np.int64:                    # (int64 holds every lattice point)
            break
        if rows and np.ndim(b) > 0:
            bt = integer_input(b)
            rt = None if bt is None else np.result_type(dt, bt)
            dt = rt if rt is not None and rt.kind in "iu" else np.dtype(np.int64)
        else:
            info = np.iinfo(dt)
            if not (info.min <= np.min(b) and np.max(b) <= info.max):
                dt = np.dtype(np.int64)
    if np.ndim(out) == 0 and not isinstance(value, np.ndarray):
        return dt.type(out)
    return np.asarray(out).astype(dt)


def auto_step(value: Any, lower: Any, upper: Any, sensitivity: Any, mode: Any,
              epsilon: Any = None) -> int:
    """``integer=None`` (auto): 1 (the integer law) for an integer-typed ``value``
    (:func:`integer_input`) in the default mode, with an integral ``sensitivity`` (at least
    1) and integral bounds, and a lattice not too fine for the noise at ``epsilon``
    (:func:`check_lattice`'s limits, which a request would be refused by), else 0 (the
    default grid). Scalar bounds are public and judged
    by their values; per-row bounds are data and judged by their type alone (integer-typed
    arrays: the integer law, whose checks then refuse a bound out of its range), so the
    choice of law says nothing about the rows."""
    if integer_input(value) is None or mode not in (None, "exact"):
        return 0
    try:
        if not (integral(sensitivity) and float(sensitivity) >= 1.0):
            return 0
        dq = float(sensitivity)
        if dq > 1 << 21 or (epsilon is not None and float(epsilon) > 0
                            and dq / float(epsilon) > MAX_LATTICE_STEPS):
            return 0
        for b in (lower, upper):
            if np.ndim(b) > 0 and integer_input(b) is None:
                return 0
            if np.ndim(b) == 0 and not integral(b):
                return 0
        return 1
    except (TypeError, ValueError):
        return 0              # (refused with its own message by the general path)
