"""An independent model of the grid laws that the default release samples, for the privacy
tests: the law is rebuilt from the integer table a plan hands to the sampler and from the
documented rules (no pmf, certificate or rounding function of the library is used), every
weight and normaliser is evaluated with mpmath at 400 bits, and the worst-case log ratio is
an exhaustive maximum over every pair of neighbouring inputs and every output.

The model. Inputs and outputs are grid indices. An output ``j`` is allowed when it lies in
one of the spans ``[a, b]`` (``b = None``: unbounded above). For input ``i``,

    P(j | i) = w(j - i) / S_i,    S_i = sum of w(j - i) over the allowed j,

with ``w(d)`` the table entry of offset ``d`` for ``|d| <= T`` (``table[d + T]``, exact
integers) and, beyond the table, the geometric tail ``w(+-(T + k)) = c1 p^(k - 1)``,
``k >= 1`` (``tail = (c1, p)`` as exact rationals; ``None``: no tail, the table covers
every offset that occurs).

Log values are kept as integers in units of ``2^-FP`` (each within one unit of the exact
logarithm), so maxima and sums are exact integer operations.

Neighbours. Two inputs are neighbours when some true values at most ``sensitivity`` apart
round to them. :func:`preimage` gives the set of true values that round to a grid index
(nearest grid point, ties up, clipped into the span): an interval closed below and closed
or open above, in exact rationals; two indices are neighbours when the gap between their
preimages is below the sensitivity (or equal to it, when both ends are attained).
"""

from __future__ import annotations

import math
from collections import deque
from fractions import Fraction

import mpmath
import numpy as np

FP = 256
_PREC = 400


def _fix(x) -> int:
    """An mpf as an integer in units of 2^-FP (rounded to nearest)."""
    return int(mpmath.nint(mpmath.ldexp(x, FP)))


def to_float(v: int) -> float:
    return float(Fraction(v, 1 << FP))


def preimage(g: int, first: int, last: int | None, lo: Fraction, hi: Fraction | None,
             gamma: Fraction) -> tuple[Fraction, Fraction | None, bool]:
    """The true values of the span ``[lo, hi]`` (``hi`` None: unbounded) that round to the
    absolute grid index ``g`` (``g * gamma``; the span's grid indices are
    ``first..last``): ``(lower, upper, upper_closed)``, the lower end always attained."""
    low = lo if g == first else (g - Fraction(1, 2)) * gamma
    if last is not None and g == last:
        return low, hi, True
    return low, (g + Fraction(1, 2)) * gamma, False


class GridLaw:
    """The law ``P(j | i) = w(j - i) / S_i`` (see the module docstring)."""

    def __init__(self, table, tail, spans, inputs):
        self.table = [int(x) for x in table]
        assert len(self.table) % 2 == 1
        self.T = (len(self.table) - 1) // 2
        self.tail = tail
        self.spans = [(int(a), None if b is None else int(b)) for a, b in spans]
        self.inputs = sorted(int(i) for i in inputs)
        self._input_set = set(self.inputs)
        with mpmath.workprec(_PREC):
            if tail is not None:
                c1, p = tail
                self._c1 = mpmath.mpf(c1.numerator) / c1.denominator
                self._p = mpmath.mpf(p.numerator) / p.denominator
                self._lnc1 = _fix(mpmath.log(self._c1))
                self._lnp = mpmath.log(self._p)
            self._lntab = [_fix(mpmath.log(x)) if x > 0 else None for x in self.table]
        self._pre = [0]
        for x in self.table:
            self._pre.append(self._pre[-1] + x)
        self._lS = {}

    # weights ---------------------------------------------------------------------------
    def logw(self, d: int) -> int | None:
        """ln w(d) in units of 2^-FP (None for a zero weight)."""
        if -self.T <= d <= self.T:
            return self._lntab[d + self.T]
        if self.tail is None:
            return None
        k = abs(d) - self.T
        with mpmath.workprec(_PREC):
            return self._lnc1 + _fix((k - 1) * self._lnp)

    def _tail_sum(self, k1: int, k2: int | None):
        """sum of c1 p^(k - 1), k = k1..k2 (k2 None: to infinity), as an mpf."""
        if k2 is not None and k2 < k1:
            return mpmath.mpf(0)
        hi = mpmath.mpf(0) if k2 is None else self._p ** k2
        return self._c1 * (self._p ** (k1 - 1) - hi) / (1 - self._p)

    def normaliser(self, i: int):
        """S_i as an mpf (exact table sums, geometric tails in closed form)."""
        T = self.T
        with mpmath.workprec(_PREC):
            s = mpmath.mpf(0)
            for a, b in self.spans:
                lo_d = a - i
                hi_d = None if b is None else b - i
                t0 = max(lo_d, -T)
                t1 = T if hi_d is None else min(hi_d, T)
                if t0 <= t1:
                    s += self._pre[t1 + T + 1] - self._pre[t0 + T]
                if self.tail is None:
                    assert lo_d >= -T and hi_d is not None and hi_d <= T, "offset beyond table"
                    continue
                # left tail: d = -(T + k) in [lo_d, hi_d]
                k_hi = -lo_d - T
                k_lo = 1 if hi_d is None else max(1, -hi_d - T)
                if k_hi >= k_lo:
                    s += self._tail_sum(k_lo, k_hi)
                # right tail: d = T + k
                k_lo = max(1, lo_d - T)
                k_hi = None if hi_d is None else hi_d - T
                if k_hi is None or k_hi >= k_lo:
                    s += self._tail_sum(k_lo, k_hi)
            return s

    def logS(self, i: int) -> int:
        v = self._lS.get(i)
        if v is None:
            with mpmath.workprec(_PREC):
                v = _fix(mpmath.log(self.normaliser(i)))
            self._lS[i] = v
        return v

    def pmf(self, i: int, outputs) -> np.ndarray:
        """P(j | i) for the listed outputs (float64)."""
        ls = self.logS(i)
        out = []
        for j in outputs:
            lw = self.logw(int(j) - i)
            out.append(0.0 if lw is None else math.exp(to_float(lw - ls)))
        return np.array(out)

    def outputs(self, limit: int | None = None) -> np.ndarray:
        """The allowed outputs (an unbounded span cut at ``limit``)."""
        parts = [np.arange(a, (limit if b is None else b) + 1) for a, b in self.spans]
        return np.concatenate(parts)

    # the worst case -------------------------------------------------------------------
    def shift_losses(self, deltas, neighbours=None, cut: int | None = None) -> dict:
        """For each shift ``delta``: the maximum over inputs ``i`` with ``i + delta`` an
        input (and ``neighbours(i, i + delta)`` true) and over allowed outputs ``j`` of
        ``ln P(j | i) - ln P(j | i + delta)``, in units of 2^-FP, with the maximising
        input: ``{delta: (loss, i)}`` (shifts with no pair are left out).

        An unbounded span is cut at ``cut`` (default: the largest input plus the table
        half-width plus the largest shift plus 2): beyond it both offsets of a pair lie
        in the same geometric tail and the ratio ``w(j - i) / w(j - i')`` no longer
        depends on ``j``."""
        deltas = [int(d) for d in deltas]
        dmax = max(abs(d) for d in deltas)
        top = self.inputs[-1]
        if cut is None:
            cut = top + self.T + dmax + 2
        spans = [(a, cut if b is None else b) for a, b in self.spans]
        d_lo = min(a for a, _ in spans) - top - dmax
        d_hi = max(b for _, b in spans) - self.inputs[0] + dmax
        lw = [self.logw(d) for d in range(d_lo, d_hi + 1)]
        result = {}
        for delta in deltas:
            pairs = [i for i in reversed(self.inputs)
                     if (i + delta) in self._input_set
                     and (neighbours is None or neighbours(i, i + delta))]
            if not pairs:
                continue
            # K(d) = ln w(d) - ln w(d - delta), d - d_lo indexing
            K = [None] * len(lw)
            for x in range(max(0, delta), min(len(lw), len(lw) + delta)):
                a, b = lw[x], lw[x - delta]
                if a is not None and b is not None:
                    K[x] = a - b
            best = {i: None for i in pairs}
            for a, b in spans:
                # windows d in [a - i, b - i], moving right as i decreases
                wins = [(a - i - d_lo, b - i - d_lo) for i in pairs]
                for i, m in zip(pairs, _window_max(K, wins)):
                    if m is not None and (best[i] is None or m > best[i]):
                        best[i] = m
            loss, arg = None, None
            for i in pairs:
                v = best[i] + self.logS(i + delta) - self.logS(i)
                if loss is None or v > loss:
                    loss, arg = v, i
            result[delta] = (loss, arg)
        return result

    def kernel_limit(self, deltas) -> dict:
        """``max_d ln w(d) - ln w(d - delta)`` over every offset (tails included): the
        loss of a pair of inputs far from every span end, without the normalisers."""
        dmax = max(abs(d) for d in deltas)
        R = self.T + dmax + 2
        out = {}
        for delta in deltas:
            vals = []
            for d in range(-R, R + 1):
                a, b = self.logw(d), self.logw(d - delta)
                if a is not None and b is not None:
                    vals.append(a - b)
            out[delta] = max(vals)
        return out


def _window_max(vals, wins):
    """Maximum of ``vals[lo..hi]`` (None entries skipped) for each window, the windows'
    ends non-decreasing (a monotone deque)."""
    out = []
    dq: deque = deque()
    nxt = 0
    for lo, hi in wins:
        lo = max(lo, 0)
        hi = min(hi, len(vals) - 1)
        while nxt <= hi:
            v = vals[nxt]
            if v is not None:
                while dq and vals[dq[-1]] <= v:
                    dq.pop()
                dq.append(nxt)
            nxt += 1
        while dq and dq[0] < lo:
            dq.popleft()
        out.append(vals[dq[0]] if dq else None)
    return out


# ---------------------------------------------------------------------------------------
# the laws of the plans, from their integer tables
# ---------------------------------------------------------------------------------------
def _diff(cum) -> list[int]:
    c = [int(x) for x in cum]
    return [c[k + 1] - c[k] for k in range(len(c) - 1)]


def row_law(plan) -> GridLaw:
    """The windowed law of a row plan (:class:`bndp._laws.window.RowPlan`): table of
    offsets ``-N..N`` from ``kernel.cum``; the tail block of total ``B = tailw`` per side
    holds ``B (m 2^-s) p^(k - 1)`` at offset ``N + k``, ``p = 1 - m 2^-s``; outputs
    ``0..n``."""
    k = plan.kernel
    table = _diff(k.cum)
    assert len(table) == 2 * k.N + 1
    tail = None
    if k.tailw:
        q = Fraction(int(k.tm), 1 << int(k.sbits))
        tail = (int(k.tailw) * q, 1 - q)
    else:
        assert k.N >= plan.n, "a row wider than its table needs a tail"
    return GridLaw(table, tail, [(0, plan.n)], range(plan.n + 1))


def whole_range_law(plan) -> GridLaw:
    """The whole-range law of an :class:`~bndp.mechanisms.exact.ExactPlan` (table of
    offsets ``-n..n``, outputs ``0..n``)."""
    table = _diff(plan.cum)
    assert len(table) == 2 * plan.n + 1
    return GridLaw(table, None, [(0, plan.n)], range(plan.n + 1))


def allowed_spans(lower: float, upper: float, forbidden, e: int):
    """Absolute grid indices ``(first, last)`` of the grid points of each span of
    ``[lower, upper]`` minus the open gaps (``last`` None: unbounded), and the spans as
    exact rationals."""
    g = Fraction(2) ** e
    ends_lo = [lower] + [b for _, b in forbidden]
    ends_hi = [a for a, _ in forbidden] + [upper]
    out = []
    for lo, hi in zip(ends_lo, ends_hi):
        flo = Fraction(lo)
        fhi = None if hi == math.inf else Fraction(hi)
        first = math.ceil(flo / g)
        last = None if fhi is None else math.floor(fhi / g)
        out.append((first, last, flo, fhi))
    return out


def constrained_law(plan, lower: float, upper: float, forbidden, max_input: int | None = None):
    """The law of a :class:`~bndp.mechanisms.exact.ConstrainedPlan` (``guarantee="dp"``):
    table of offsets ``-n..n``; on an unbounded set the tails ``W_n p^k`` at offset
    ``+-(n + k)``, ``p = 1 - 2^-s``; outputs the grid points of the allowed set, as indices
    above ``kl``. Inputs: the allowed grid points (up to ``max_input`` on an unbounded set).
    Returns the law and the neighbour predicate for the plan's sensitivity ``dq``
    (a function of ``dq``)."""
    table = _diff(plan.cum)
    n = plan.n
    assert len(table) == 2 * n + 1
    tail = None
    if plan.tail_weight:
        p = 1 - Fraction(1, 1 << int(plan.tail_bits))
        tail = (table[0] * p, p)
    e, kl = plan.exponent, plan.kl
    spans_abs = allowed_spans(lower, upper, forbidden, e)
    spans = [(f - kl, None if l_ is None else l_ - kl) for f, l_, _, _ in spans_abs]
    inputs = []
    for a, b in spans:
        inputs.extend(range(a, (max_input if b is None else b) + 1))
    law = GridLaw(table, tail, spans, inputs)
    gamma = Fraction(2) ** e
    where = {}
    for s, (f, l_, flo, fhi) in enumerate(spans_abs):
        stop = (max_input + kl) if l_ is None else l_
        for G in range(f, stop + 1):
            where[G - kl] = preimage(G, f, l_, flo, fhi, gamma)

    def neighbours_for(dq: float):
        D = Fraction(dq)

        def nb(i: int, k: int) -> bool:
            a, b = (i, k) if i < k else (k, i)
            _, up, closed = where[a]
            low, _, _ = where[b]
            gap = low - up
            return gap <= D if closed else gap < D
        return nb

    return law, neighbours_for


def row_neighbours(lower: float, upper: float, n: int, e: int, dq: float,
                   step: int | None = None):
    """The neighbour predicate of a row ``[lower, upper]`` of ``n`` intervals of ``2^e``
    (or of ``step``, an integer lattice step, where given; indices ``0..n`` above
    ``lower``) for sensitivity ``dq``."""
    lo, hi, D = Fraction(lower), Fraction(upper), Fraction(dq)
    g = Fraction(2) ** e if step is None else Fraction(step)

    def pre(i):
        low = lo if i == 0 else lo + (i - Fraction(1, 2)) * g
        if i == n:
            return low, hi, True
        return low, lo + (i + Fraction(1, 2)) * g, False

    def nb(i: int, k: int) -> bool:
        a, b = (i, k) if i < k else (k, i)
        _, up, closed = pre(a)
        low, _, _ = pre(b)
        gap = low - up
        return gap <= D if closed else gap < D
    return nb


def row_index(value: float, lower: float, upper: float, n: int, e: int) -> int:
    """The grid index of a true value in a row (clip, nearest point ties up, clip to
    ``0..n``), in exact rationals."""
    lo, hi = Fraction(lower), Fraction(upper)
    c = min(max(Fraction(value), lo), hi)
    k = math.floor((c - lo) / Fraction(2) ** e + Fraction(1, 2))
    return min(max(k, 0), n)
