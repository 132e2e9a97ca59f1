r"""Privacy-budget amounts as the decimals people write.

A budget keeps its cap and what was spent as exact rationals (:class:`fractions.Fraction`),
and reads every amount given to it as the decimal it was written as: ``0.1`` is one tenth,
not the binary double nearest to it (which is slightly more), so ten charges of ``0.1`` add
up to exactly ``1`` (:func:`decimal_amount`). A float is read as the shortest decimal that
round-trips to it (its ``repr``): the decimal its author typed, whenever it had at most 15
significant digits.

A release never charges less than it is certified to lose (:func:`charge_epsilon`): its
mechanism is calibrated at the double of the epsilon given and certifies a loss below that
double, while the decimal may sit just below the double (``0.1`` does, by about
:math:`5.6 \times 10^{-18}`); when the certificate lies above the decimal, the release
charges the certificate rounded upwards instead.

Amounts are shown as decimals too (:func:`format_amount`, :func:`float_up`,
:func:`float_down`): a spent or remaining amount is the float whose ``repr`` is nearest to
the exact amount on the safe side, so a cap of 1 after three charges of 0.1 has ``0.7``
remaining.
"""

from __future__ import annotations

import decimal
import math
import numbers
from fractions import Fraction
from typing import Any

import numpy as np

from ._validation import budget_amount

__all__ = ["decimal_amount", "charge_epsilon", "charge_delta", "format_amount", "float_up",
           "float_down", "double_up", "double_down", "SHOWN_DIGITS"]

#: Significant digits up to which :func:`format_amount` shows an amount exactly.
SHOWN_DIGITS = 17


def decimal_amount(x: Any, name: str, *, positive: bool) -> Fraction:
    """A budget amount (a cap or a cost) as the exact decimal it was written as.

    ``int`` and integer types: the integer. :class:`fractions.Fraction` (and every
    :class:`numbers.Rational`): itself. :class:`decimal.Decimal`: its exact value. A Python
    or NumPy float: the shortest decimal that round-trips to it in its own precision
    (``repr`` of a Python float, ``str`` of a NumPy float: ``0.1`` is one tenth, a
    ``numpy.float32(0.1)`` too). Anything else with ``__float__``: the shortest decimal of
    its double.

    Raises ``TypeError`` (not a real number) or ``ValueError`` (not finite, negative, or
    zero when ``positive``), naming ``name``.
    """
    budget_amount(x, name, positive=positive)      # the type and domain checks
    if isinstance(x, numbers.Integral):
        return Fraction(int(x))
    if isinstance(x, numbers.Rational):
        return Fraction(int(x.numerator), int(x.denominator))
    if isinstance(x, decimal.Decimal):
        return Fraction(x)
    if isinstance(x, np.floating):
        return Fraction(str(x))
    return Fraction(float.__repr__(float(x)))


def charge_epsilon(epsilon: Any, certified_loss: float | None, delta: Any = 0) -> Fraction:
    r"""The :math:`\epsilon` a released column charges to a budget: never below what its
    mechanism is certified to lose.

    Parameters
    ----------
    epsilon : float
        The column's :math:`\epsilon` as given (read by :func:`decimal_amount`).
    certified_loss : float or None
        The mechanism's certified worst-case privacy loss :math:`L` (a pure-DP bound: the
        exhaustive certificate of a grid law, ``exact_plan.certified_epsilon``), or None
        for a release without a certificate (a continuous law, per-row bounds).
    delta : float or Fraction, default 0
        The :math:`\delta` the column charges (:func:`charge_delta`).

    Returns
    -------
    Fraction
        With a certificate: the decimal :math:`\epsilon` if it is at least the
        certificate's :math:`\epsilon` at ``delta``, :math:`L + \ln(1 - \delta)` (a pure
        :math:`L`-DP mechanism is :math:`(L + \ln(1 - \delta), \delta)`-DP for every
        :math:`\delta \in [0, 1)`; for ``delta = 0`` it is :math:`L`); otherwise that bound
        rounded upwards to :data:`SHOWN_DIGITS` significant digits. This happens only when
        the certificate sits within a few units in the last place of the double of
        :math:`\epsilon` above the decimal; the grid laws certify losses some
        :math:`10^{-8}` (relative) below their target.

        Without a certificate: the larger of the decimal and the exact value of the double
        of :math:`\epsilon`. A continuous law is calibrated so that its guarantee holds at
        that double; where the double is above the decimal (``0.1``, ``0.7``) the
        guarantee is known only at the double, so the double is charged (ten continuous
        releases of ``0.1`` cost slightly more than ``1``); where it is below, the decimal
        (more than the guarantee) is charged.
    """
    dec = decimal_amount(epsilon, "epsilon", positive=False)
    if certified_loss is None:
        return max(dec, Fraction(float(epsilon)))
    loss = float(certified_loss)
    if not math.isfinite(loss):
        raise ValueError(f"a release's certified privacy loss must be finite; got {loss!r}")
    d = Fraction(delta)
    if d == 0:
        floor = Fraction(loss)
    else:
        # L + ln(1 - d) in floating point, plus a margin above its rounding errors
        # (log1p within one unit in the last place, the sum within half of one)
        shift = math.log1p(-float(d))
        floor = (Fraction(loss + shift)
                 + Fraction(abs(loss) + abs(shift)) * Fraction(1, 2 ** 50))
    if dec >= floor:
        return dec
    return _round_decimal(floor, up=True)


def charge_delta(delta: Any, certified: bool) -> Fraction:
    r"""The :math:`\delta` a released column charges: its decimal (a column with a
    certificate: :func:`charge_epsilon` accounts for it), or, without a certificate, the
    larger of the decimal and the exact value of its double (the :math:`\delta` a continuous
    law is calibrated at, or one a mechanism computed itself)."""
    dec = decimal_amount(delta, "delta", positive=False)
    return dec if certified else max(dec, Fraction(float(delta)))


def _round_decimal(x: Fraction, *, up: bool, digits: int = SHOWN_DIGITS) -> Fraction:
    """``x`` (>= 0) rounded to ``digits`` significant decimal digits, upwards or towards
    zero; ``x`` itself if it has no more digits."""
    if x <= 0:
        return x
    e = math.floor(math.log10(x.numerator) - math.log10(x.denominator))
    # make sure 10**e <= x < 10**(e+1) despite the logarithms' rounding
    while Fraction(10) ** e > x:
        e -= 1
    while Fraction(10) ** (e + 1) <= x:
        e += 1
    unit = Fraction(10) ** (e - digits + 1)
    q = x / unit
    n = math.ceil(q) if up else math.floor(q)
    return n * unit


def format_amount(x: Fraction, *, up: bool = True) -> str:
    """An amount as a decimal: exact (the shortest decimal) when it has at most
    :data:`SHOWN_DIGITS` significant digits (``1/10`` is ``"0.1"``, ``1`` is ``"1"``),
    otherwise rounded to that many digits, upwards (``up``, for costs and what was spent)
    or towards zero (for what remains); scientific notation below ``1e-4`` and from
    ``1e16``, as Python writes floats."""
    x = Fraction(x)
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    y = _round_decimal(abs(x), up=up if x > 0 else not up)
    with decimal.localcontext() as ctx:
        ctx.prec = SHOWN_DIGITS + 2
        d = (decimal.Decimal(y.numerator) / decimal.Decimal(y.denominator)).normalize()
    exp = d.adjusted()
    if -4 <= exp < 16:
        text = format(d, "f")
    else:
        mant = format(d.scaleb(-exp).normalize(), "f")
        text = f"{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return sign + text


def double_up(x: Fraction) -> float:
    """The smallest double whose exact value is at least ``x`` (what an amount charged
    counts as where a computation takes doubles: the optimal composition of a ledger)."""
    f = float(x)
    return math.nextafter(f, math.inf) if Fraction(f) < x else f


def double_down(x: Fraction) -> float:
    """The largest double whose exact value is at most ``x`` (a cap's delta where the
    optimal composition takes a double)."""
    f = float(x)
    return math.nextafter(f, -math.inf) if Fraction(f) > x else f


def _decimal_of(f: float) -> Fraction:
    return Fraction(float.__repr__(f))


def float_up(x: Fraction) -> float:
    """The float shown for an amount spent or charged: the nearest double whose shortest
    decimal (its ``repr``) is at least ``x`` (``3/10`` is ``0.3``)."""
    f = float(x)
    while _decimal_of(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def float_down(x: Fraction) -> float:
    """The float shown for an amount that remains: the nearest double whose shortest
    decimal (its ``repr``) is at most ``x`` (``7/10`` is ``0.7``), so that spending it is
    always allowed; never below 0 for ``x >= 0``."""
    f = float(x)
    while _decimal_of(f) > x:
        f = math.nextafter(f, -math.inf)
    return f
