"""The grid Laplace on an allowed set with gaps (:class:`~bndp.ConstrainedLaplace`):
:class:`ConstrainedPlan`, its grid, spans, tables with geometric tails, the metric bound
and the calibrated plan.

The grid constants are read from :mod:`bndp._laws.constants` at call time (tests coarsen
them there)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from .. import _dispatch
from .._core import certify_grid as _certify_grid, grid as _grid
from .._values import grid_round
from . import constants
from .calibration import _choose_grid, _search
from .constants import (FLOOR_BITS, LAPLACE, MAX_INTERVALS, MAX_PAIRS, MIN_PEAK_BITS, SENS_STEPS,
                        TOTAL_BITS)
from .ends import set_ends_loss

#: the pair sets of the set law's certificates (their ``which``)
_PAIRS = _certify_grid.PAIR_SETS
from .whole_range import ExactPlan, _gceil, _gfloor, _kexp, _law_from


GD_INF = 1 << 62           # an unbounded span end (the kernel's sentinel)
TAIL_BITS = 24             # unbounded sets: the table reaches offsets where W/W(0) ~ 2^-24
LAW_TAIL = 45              # law functions sum a geometric tail over 45 * 2^s points
COARSE_REL = 1e-4          # search width of a scale on a grid coarsened for the budget
SEARCH_WORK = 12           # the scale search builds tables of at most this many times
                           # MAX_SET_INTERVALS offsets in all (under a second)


class _OverBudget(Exception):
    """The scale search reached its work budget without certifying a scale."""


@dataclass(frozen=True, eq=False)
class ConstrainedPlan(ExactPlan):
    r"""The grid Laplace on an allowed set :math:`A = [l, u] \setminus \bigcup_k (a_k, b_k)`
    (:class:`~bndp.ConstrainedLaplace`), :math:`l` and :math:`u` finite or infinite.

    The outputs are the grid points of :math:`A`: the grid points of each span
    :math:`[L_s, R_s]` of :math:`A` (indices ``span_lo[s]..span_hi[s]`` above ``kl``;
    ``±2^62`` marks an unbounded end). For grid input ``i``,
    :math:`P(j \mid i) = W_{j-i}/S_i` over those points only, with the offset table of
    :class:`ExactPlan` (half-width ``n``). On an unbounded set the weights go on beyond the
    table as the geometric tail :math:`W_{\pm(n+k)} = W_n p^k`, :math:`p = 1 - 2^{-s}`
    (``tail_bits`` = s, chosen so that :math:`p \ge e^{-1/t}`: the tail decays no faster than
    the kernel), of integer mass ``tail_weight`` :math:`= W_n(2^s - 1)` per side; the table
    is wide enough (``n`` = the core of finite span ends plus :math:`M_0` with
    :math:`e^{-M_0/t} \le 2^{-24}`) that a tail draw has probability below about
    :math:`2^{-20}`. Inputs within :math:`M_0` of the core (indices ``0..L``) are drawn
    exactly from integer masses; inputs farther out draw from the whole table and tails and
    redraw the (even rarer) outputs that are not allowed: rejection sampling of the same
    conditional law. The weight floor ``floor_weight`` is :math:`2^{12}` on a bounded set
    and a power of two above :math:`t` on an unbounded one (:func:`_set_floor`: the
    rounding of the far weights then stays out of the certificate). A draw picks the span
    by selects over all spans, then searches the table: the same work for every input and
    output, except a tail draw, which then draws its geometric offset (a time that depends
    on the released offset only).

    Rounding of a true value :math:`\mu \in A` (in span ``s``):

    * ``guarantee="dp"``: the nearest grid point (ties up), clipped to the span's grid
      points. The map is monotone, and :math:`|r(\mu) - \mu| < \gamma` because every span
      holds a grid point. Plain rounding moves neighbours at most :math:`d_k` steps apart
      (as for :class:`ExactPlan`); the clip into a span adds one step, and only when the
      lower point ends a span before a gap or the upper point starts one after a gap (a
      clip at ``l`` or ``u`` is 1-Lipschitz). The certificate bounds the loss over every
      pair of allowed inputs in ``0..L`` at most :math:`d_k` apart, and over the pairs
      :math:`d_k + 1` apart that meet a gap whose end is off the grid, both directions, in
      :math:`O(N + L m)` (``gd_set_bound`` in ``_core/certify_grid.pyx``, where the proof is): the
      loss of a pair :math:`\delta` apart is at most :math:`\kappa_\delta + |\ln S_{i'} -
      \ln S_i|`, with :math:`\kappa_\delta \le \delta\tau + c` (:math:`\tau \ge 1/t`,
      ``c`` the largest deviation of the table's log-weights from that slope over windows of
      at most :math:`d_k` offsets, computed on the table), so the maximum over pairs is a
      sliding-window maximum of :math:`\ln S_k \pm k\tau`. For the Laplace kernel the
      worst output of a pair is an input itself, so the bound is within about
      :math:`10^{-9}` of the exhaustive maximum (``gd_set_losses``, kept as the tests'
      oracle). A pair with an input beyond ``0..L`` (unbounded sets) is bounded by
      :math:`\kappa_\delta + \rho/(1-\rho)`: :math:`\kappa_\delta` the largest
      :math:`|\ln W_d - \ln W_{d-\delta}|` over all offsets (tails included, computed
      exactly on the table), and :math:`\rho` the mass, relative to the whole law, of the
      offsets beyond :math:`M_0 - d_k`, where every output that such an input cannot
      reach lies (so :math:`|\ln S_i - \ln S_{i'}| \le -\ln(1-\rho)`).
    * ``guarantee="metric"`` (:math:`\ell(\mu, \mu') \le \epsilon|\mu-\mu'|/\Delta` for
      all pairs): deterministic rounding cannot satisfy it (two values on either side of a
      rounding boundary are arbitrarily close), so the value is rounded at random: to
      :math:`\lfloor\mu/\gamma\rfloor` or the next grid point with probability the
      fractional part (an exact Bernoulli from random bits), clipped to the span. The law of
      the output is then :math:`(1-f)K_P + fK_{P+1}` inside a span, constant between a span
      end and the nearest grid point. Its log-likelihood is Lipschitz in :math:`\mu` inside
      a span with constant :math:`(e^{\lambda_1} - 1)/\gamma` (:math:`\lambda_1` the
      largest loss between adjacent grid points of one span), and it jumps across gap
      ``k`` by at most the loss :math:`J_k` between the span end points (``gd_set_pair_loss``:
      tail log-weight differences are computed as :math:`(k_1 - k_2)\ln p`, so a gap of
      any width in noise scales is handled). Along any path,
      :math:`\ell(\mu,\mu') \le \epsilon'|\mu - \mu'|/\Delta` with
      :math:`\epsilon' = \Delta\max((e^{\lambda_1} - 1)/\gamma, \max_k J_k/(b_k - a_k))`,
      evaluated in exact rationals from the certified losses and rounded up.

    On an unbounded set, true values beyond :math:`\pm 2^{52}\gamma` are clipped to it (the
    released double :math:`(k_l + j)\gamma` must be exact), and outputs beyond
    :math:`\pm 2^{53}\gamma` are redrawn (a geometric tail of that length has probability
    below :math:`e^{-2^{30}}`). The law functions (:meth:`pmf`, ``cdf``, the moments) sum a
    geometric tail over :math:`45 \cdot 2^s` points: the mass left out is below
    :math:`e^{-45}` of the tail's.

    Attributes
    ----------
    span_lo, span_hi : ndarray of int64
        Grid indices (above ``kl``) of the first and last grid point of each span.
    gap_hi : ndarray of float64
        Upper ends :math:`b_k` of the gaps (the span of a value is the number of them
        :math:`\le` the value).
    guarantee : str
        ``"dp"`` or ``"metric"``.
    metric_epsilon : float
        For ``"metric"``, :math:`\epsilon'` above (also the certified loss); ``inf`` for
        ``"dp"`` (deterministic rounding gives no metric guarantee at small distances).
    inputs : int
        ``L``: inputs ``0..L`` are drawn and certified exactly (``n`` on a finite set).
    tail_weight, tail_bits : int
        The geometric tails (0 on a finite set).
    core : tuple of int
        Lowest and highest finite span end (grid indices above ``kl``).
    """

    span_lo: Any = field(repr=False, default=None)
    span_hi: Any = field(repr=False, default=None)
    gap_hi: Any = field(repr=False, default=None)
    guarantee: str = "dp"
    metric_epsilon: float = math.inf
    inputs: int = 0
    tail_weight: int = 0
    tail_bits: int = 0
    core: tuple = (0, 0)

    @property
    def randomised(self) -> bool:
        """Whether the true value is rounded at random (the metric guarantee)."""
        return self.guarantee == "metric"

    @property
    def bounded(self) -> bool:
        """Whether the allowed set is bounded (finitely many outputs)."""
        return self.tail_weight == 0

    def _clip(self, v: np.ndarray) -> np.ndarray:
        if self.bounded:
            return v
        lim = math.ldexp(1.0, 52 + self.exponent)
        return np.clip(v, -lim, lim)

    def allowed(self, lo: int | None = None, hi: int | None = None) -> np.ndarray:
        """Grid indices (above ``kl``) of the attainable outputs (those in ``[lo, hi]``;
        both needed on an unbounded set)."""
        lo = -GD_INF if lo is None else lo
        hi = GD_INF if hi is None else hi
        parts = []
        for a, b in zip(self.span_lo, self.span_hi):
            a, b = max(int(a), lo), min(int(b), hi)
            if a <= b:
                if b - a > MAX_INTERVALS * 64:
                    raise ValueError("the allowed set is unbounded: give a window")
                parts.append(np.arange(a, b + 1, dtype=np.int64))
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)

    def grid(self, lo: int | None = None, hi: int | None = None) -> np.ndarray:
        """The attainable outputs (grid points of the allowed set; in the index window
        ``[lo, hi]`` on an unbounded set)."""
        return np.ldexp((self.kl + self.allowed(lo, hi)).astype(np.float64), self.exponent)

    def index(self, value: Any) -> np.ndarray:
        """Grid index (int64, above ``kl``) of allowed true values by nearest-point
        rounding (the ``"dp"`` rounding; the ``"metric"`` one is random, see
        :meth:`components`)."""
        v = self._clip(np.ascontiguousarray(np.ravel(np.asarray(value, dtype=np.float64))))
        return _grid.gd_span_index(v, self.exponent, self.kl, self.span_lo, self.span_hi,
                                   self.gap_hi).reshape(np.shape(value))

    def exact_index(self, value: Fraction) -> int:
        """:meth:`index` of an exact (rational) allowed true value: the span and the nearest
        grid point (ties up) in rational arithmetic (deterministic rounding only)."""
        v = Fraction(value)
        if not self.bounded:
            lim = Fraction(2) ** (52 + self.exponent)
            v = min(max(v, -lim), lim)
        s = sum(1 for b in np.ravel(self.gap_hi) if v >= Fraction(float(b)))
        k = grid_round(v, 0.0, self.exponent) - self.kl
        return min(max(k, int(self.span_lo[s])), int(self.span_hi[s]))

    def components(self, value: float) -> list[tuple[float, int]]:
        """The law for one true value as a mixture ``[(weight, grid index), ...]`` of the
        laws of grid inputs (one component unless rounding is random)."""
        if not self.randomised:
            return [(1.0, int(self.index(float(value))))]
        v = float(self._clip(np.float64(value)))
        z = math.ldexp(v, -self.exponent)
        f = math.floor(z)
        frac = z - f
        s = int(np.sum(v >= self.gap_hi))
        lo, hi = int(self.span_lo[s]), int(self.span_hi[s])
        k0 = min(max(int(f) - self.kl, lo), hi)
        k1 = min(max(int(f) + 1 - self.kl, lo), hi)
        if k0 == k1 or frac == 0.0:
            return [(1.0, k0)]
        return [(1.0 - frac, k0), (frac, k1)]

    def _window(self, comps: list[tuple[float, int]]) -> tuple[int | None, int | None]:
        if self.bounded:
            return None, None
        x = LAW_TAIL << self.tail_bits
        return (min(i for _, i in comps) - self.n - x, max(i for _, i in comps) + self.n + x)

    def _weights(self, idx: np.ndarray, i: int) -> np.ndarray:
        """Weights W(j - i) of the outputs ``idx`` (ints inside the table, floats beyond)."""
        d = idx - i
        inside = np.abs(d) <= self.n
        w = np.empty(len(idx), dtype=object if self.bounded else np.float64)
        w[inside] = self.weights[d[inside] + self.n]
        if not inside.all():
            lnp = math.log1p(-math.ldexp(1.0, -self.tail_bits))
            w[~inside] = float(self.cum[1]) * np.exp((np.abs(d[~inside]) - self.n) * lnp)
        return w

    def weights_at(self, i: int) -> tuple[np.ndarray, int]:
        """Integer weights over :meth:`grid` for grid input ``i``, and their total
        (bounded sets)."""
        if not self.bounded:
            raise ValueError("weights_at: the allowed set is unbounded; use pmf")
        w = self.weights[self.allowed() - i + self.n]
        return w, int(sum(int(x) for x in w))

    def weights_for(self, value: Any) -> tuple[np.ndarray, int]:
        comps = self.components(float(value))
        if len(comps) != 1 or not self.bounded:
            raise ValueError("weights_for: the law of this value is a mixture (random "
                             "rounding) or unbounded; use pmf")
        return self.weights_at(comps[0][1])

    def support(self, value: Any) -> tuple[np.ndarray, np.ndarray]:
        """Outputs and their probabilities for one true value (on an unbounded set, the
        outputs within the summed tails)."""
        comps = self.components(float(value))
        lo, hi = self._window(comps)
        idx = self.allowed(lo, hi)
        p = np.zeros(len(idx))
        for wt, i in comps:
            if self.bounded:
                w, tot = self.weights_at(i)
                p += wt * (w.astype(np.float64) / float(tot))
            else:
                w = self._weights(idx, i)
                p += wt * (w / math.fsum(w))
        g = np.ldexp((self.kl + idx).astype(np.float64), self.exponent)
        return g, p

    def pmf(self, value: Any) -> np.ndarray:
        """Output probabilities over :meth:`grid` for one true value (bounded sets; see
        :meth:`support`)."""
        return self.support(value)[1]

    def _sides(self, value: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(outputs, P(Y <= output), P(Y > output)) for one true value, each side summed
        from its own end: exact uint64 partial sums of the integer weights on a bounded
        set, mixed over the rounding's components; float sums of the support otherwise."""
        comps = self.components(float(value))
        if self.bounded:
            g = self.grid()
            upto = np.zeros(len(g))
            above = np.zeros(len(g))
            for wt, i in comps:
                w, tot = self.weights_at(i)
                cu = np.cumsum(np.asarray(w, dtype=np.uint64), dtype=np.uint64)
                upto += wt * (cu / float(tot))
                above += wt * ((np.uint64(tot) - cu) / float(tot))
            return g, upto, above
        g, p = self.support(value)
        upto = np.cumsum(p)
        above = np.concatenate((np.cumsum(p[::-1])[::-1][1:], [0.0]))
        return g, upto, above

    def law(self, x: Any, value: Any, what: str):
        if what in ("mean", "var", "pmf"):
            g, p = self.support(value)
            return _law_from(g, p, x, what)
        g, upto, above = self._sides(value)
        xa = np.asarray(x, dtype=np.float64)
        if what in ("ppf", "isf"):
            if what == "ppf":         # the smallest grid point with cdf >= p
                c = upto.copy()
                c[-1] = 1.0
                k = np.searchsorted(c, xa, side="left")
            else:                     # the smallest grid point with sf <= p
                k = np.searchsorted(-above, -xa, side="left")
            out = g[np.clip(k, 0, len(g) - 1)]
            return float(out) if out.ndim == 0 else out
        k = np.searchsorted(g, xa, side="right") - 1        # last grid point <= x
        kc = np.clip(k, 0, len(g) - 1)
        cdf = np.where(k < 0, 0.0, upto[kc])
        sf = np.where(k < 0, 1.0, above[kc])
        with np.errstate(divide="ignore"):
            if what == "cdf":
                out = np.where(k >= len(g) - 1, 1.0, cdf)
            elif what == "sf":
                out = sf
            elif what == "logsf":     # log1p of the small side keeps the relative accuracy
                out = np.where(cdf < 0.5, np.log1p(-cdf), np.log(sf))
            else:                     # logcdf
                out = np.where(sf < 0.5, np.log1p(-sf), np.log(cdf))
        return float(out) if np.ndim(out) == 0 else out

    def ends_loss(self, lower: float, upper: float) -> float | None:
        """The certified loss between the true values ``lower`` and ``upper``
        (:func:`~bndp._laws.ends.set_ends_loss`; infinite on an unbounded set)."""
        if not self.bounded:
            return math.inf
        return set_ends_loss(self, lower, upper)

    def sample(self, value: np.ndarray, size: Any, gen: np.random.Generator, workers: Any = 1):
        """Draws for allowed true values ``value`` (NumPy's size rule)."""
        (tree, levels), n, e, kl = self.search_tree, self.n, self.exponent, self.kl
        sa, sb, gh, rnd = self.span_lo, self.span_hi, self.gap_hi, self.randomised
        tw, tb, (c0, c1) = self.tail_weight, self.tail_bits, self.core

        def rows(gen, q, out):
            _grid.gd_set_fill_rows(gen, tree, levels, n, e, kl, sa, sb, gh, tw, tb, c0, c1, rnd,
                                   q, out)

        def fill(gen, q, out):
            # one value for the whole output: a stride-0 row (the kernel reads q[0, b])
            rows(gen, np.broadcast_to(np.float64(q), (1, out.size)), out.reshape(1, -1))

        def one(gen, q):
            out = np.empty((1, 1))
            rows(gen, np.full((1, 1), q), out)
            return float(out[0, 0])

        v = self._clip(np.asarray(value, dtype=np.float64))
        return _dispatch.sample(one, fill, rows, [v], size, gen, workers)


def _up(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def _add_up(a: float, b: float) -> float:
    return _up(Fraction(a) + Fraction(b))


def _metric_bound(lam1: float, jumps: list[float], e: int, dq: float, gaps: tuple) -> float:
    """Delta * max((e^lam1 - 1)/gamma, J_k / w_k), in exact rationals of the certified
    float inputs, rounded up (expm1 is taken 2^-50 relatively high: it errs by < 1 ulp)."""
    g = Fraction(2) ** e
    terms = [Fraction(math.expm1(lam1)) * (1 + Fraction(1, 1 << 50)) / g]
    for jk, (a, b) in zip(jumps, gaps):
        terms.append(Fraction(jk) / (Fraction(b) - Fraction(a)))
    return _up(Fraction(dq) * max(terms))


def _tail_bits(u: float) -> int:
    """s with 2^-s <= 1 - e^(-1/u): the tail ratio p = 1 - 2^-s is >= e^(-1/u)."""
    s = max(1, math.ceil(-math.log2(-math.expm1(-1.0 / u))))
    while math.ldexp(1.0, -s) > -math.expm1(-1.0 / u):
        s += 1
    return s


def _set_floor(u: float, n: int, tails: bool) -> int:
    r"""The weight floor :math:`F` of the table for kernel scale ``u`` (grid steps):
    :math:`2^{12}` on a bounded set; on an unbounded set
    :math:`2^{\max(12, \min(\lceil\log_2(u + 1)\rceil, K - 20))}` (:math:`2^K` the peak).

    The table reaches about 33 scales, where the rounded kernel
    :math:`R_d = \mathrm{rint}(2^K e^{-d/u})` falls to a few units and below. With
    :math:`W_d = R_d + F`, one step drops
    :math:`\ln W_d - \ln W_{d+1} = \ln(1 + (R_d - R_{d+1})/W_{d+1})`, and
    :math:`R_d - R_{d+1} \le (R_{d+1} + 1/2)(e^{1/u} - 1) + 1`: the drop stays below the
    slope :math:`1/u` when :math:`F(e^{1/u} - 1) \ge 1 + (e^{1/u} - 1)/2`, which
    :math:`F \ge u + 1` gives. A floor of :math:`2^{12} \ll u` would let the rounding add
    about :math:`1/F` to the certificate's deviation term ``c`` (``gd_set_bound``): at
    :math:`\epsilon = 10^{-4}` twice the loss itself, and a scale 1.7 times the continuous
    one to certify through it. The flat mass :math:`(2n + 1)F` is about
    :math:`nF/(2^K u) < 10^{-5}` of the law; the certificate is computed on the table as
    built, whatever the floor."""
    if not tails:
        return 1 << FLOOR_BITS
    bits = math.ceil(math.log2(u + 1.0))
    return 1 << max(FLOOR_BITS, min(bits, _kexp(LAPLACE, u, n) - 20))


def _set_table(u: float, n: int, tails: bool) -> tuple[np.ndarray, int, int, int]:
    """(cum, kexp, tail_weight, tail_bits) for kernel scale u (grid steps); weight floor
    :func:`_set_floor`."""
    k = _kexp(LAPLACE, u, n)
    floor = _set_floor(u, n, tails)
    sbits = _tail_bits(u) if tails else 0
    if sbits > 62:
        raise ValueError("grid law: the scale is too large for the geometric tail; pass "
                         "mode='continuous'")
    for _ in range(64):
        cum = _certify_grid.gd_table(LAPLACE, u, n, k, floor)
        tw = int(cum[1]) * ((1 << sbits) - 1) if tails else 0
        if int(cum[-1]) + 2 * tw <= (1 << TOTAL_BITS):
            cum.setflags(write=False)
            return cum, k, tw, sbits
        k -= 1
    raise ValueError("grid law: no weight table with geometric tails fits 2^58 at this "
                     "scale; pass mode='continuous'")


def _set_grid(hint: float, dq: float, lo: float, hi: float, gaps: tuple, metric: bool):
    """(e, kl, n, dk, L, spans, core, budget) of the grid law on the allowed set; ``budget``:
    whether the grid was coarsened to keep an unbounded set's table within
    ``MAX_SET_INTERVALS`` (the planning work is then known before any table is built)."""
    ends_lo = [lo] + [b for _, b in gaps]
    ends_hi = [a for a, _ in gaps] + [hi]
    lengths = [h - l for l, h in zip(ends_lo, ends_hi) if math.isfinite(h - l)]
    cap = min(lengths) if lengths else math.inf        # a grid point in every span
    if metric:
        cap = min(cap, hint / constants.METRIC_STEPS)
        if gaps:
            cap = min(cap, min(b - a for a, b in gaps) / constants.GAP_STEPS)
    if math.isfinite(lo) and math.isfinite(hi):
        e, kl, n, dk = _choose_grid(hint, dq, lo, hi, None, LAPLACE, cap=cap)
        if math.ldexp(hint, -e) < 1.0 / 64:
            raise ValueError(
                f"grid law: `epsilon` is too large for the allowed set [{lo!r}, {hi!r}]: the "
                f"noise scale {hint:.3g} is below 1/64 of the finest grid step that fits the "
                f"set in {MAX_INTERVALS} intervals ({math.ldexp(1.0, e):.3g}); use a smaller "
                "`epsilon` (or narrower bounds), or pass mode='continuous'")
        sp = _spans(e, kl, lo, hi, gaps)
        return e, kl, n, dk, n, sp, (0, n), False
    base = min(min(hint, dq) / constants.GRID_STEPS, cap)
    if not (base > 0 and math.isfinite(base)):
        raise ValueError("grid law: the scale and sensitivity give no usable grid; pass "
                         "mode='continuous'")
    e = math.frexp(base)[1] - 1
    if not metric:
        for _ in range(8):
            r = math.ldexp(dq, -e)
            if r == math.floor(r) or r >= SENS_STEPS:
                break
            e -= 1
    finite = [x for x in (lo, hi) if math.isfinite(x)] + [x for ab in gaps for x in ab]
    budget = False
    for _ in range(2200):
        if e < -1022 or e > 1022:
            break
        dk = max(1, _gceil(dq, e))
        first = [_gceil(x, e) for x in ends_lo if math.isfinite(x)]
        last = [_gfloor(x, e) for x in ends_hi if math.isfinite(x)]
        ends = first + last
        c_lo, c_hi = (min(ends), max(ends)) if finite else (0, 0)
        t_max = 2.0 * math.ldexp(hint, -e)
        m0 = math.ceil(t_max * TAIL_BITS * math.log(2.0)) + dk + 2
        n = (c_hi - c_lo) + m0
        big = n + m0
        fits = (n <= MAX_INTERVALS and big * (dk + 1) <= MAX_PAIRS
                and _kexp(LAPLACE, t_max * 2.0, n) >= MIN_PEAK_BITS)
        if fits and n > constants.MAX_SET_INTERVALS:
            budget = True
        elif fits:
            kl = c_lo - m0
            if e > 1023 - 54 or math.ldexp(1.0, e) > dq or math.ldexp(hint, -e) < 1.0 / 64:
                # outputs up to 2^53 grid steps must stay finite doubles; a grid coarser
                # than the sensitivity, or than the noise, cannot certify the target
                raise ValueError(_unbounded_refusal(e, hint, dq, finite))
            if max(abs(kl), abs(kl + big)) >= (1 << 52):
                raise ValueError(
                    "grid law: the allowed set is too far from 0 for the grid granularity "
                    f"2^{e}; shift the data towards 0 or pass mode='continuous'")
            sp = _spans(e, kl, lo, hi, gaps)
            return e, kl, n, dk, big, sp, (c_lo - kl, c_hi - kl), budget
        e += 1
    raise ValueError("grid law: no grid fits this allowed set, sensitivity and scale; pass "
                     "mode='continuous'")


def _unbounded_refusal(e: int, hint: float, dq: float, finite: list) -> str:
    """Why no grid serves an unbounded allowed set: the table must reach about 33 noise
    scales beyond the finite ends with at most MAX_SET_INTERVALS steps, of at most the
    sensitivity and at most 64 times the noise scale, at grid values that stay finite."""
    span = (max(finite) - min(finite)) if finite else 0.0
    steps = min(MAX_INTERVALS, constants.MAX_SET_INTERVALS)
    head = ("grid law: no grid serves this unbounded allowed set: the table must reach about "
            f"33 noise scales beyond its finite ends with at most {steps} steps")
    if e > 1023 - 54:
        return (f"{head}, and its values would overflow (noise scale {hint:.3g}, "
                f"`sensitivity` {dq!r}); use a smaller `sensitivity` (rescale the data) or "
                "pass mode='continuous'")
    if span >= 66.0 * hint:
        return (f"{head}: the bounds and forbidden intervals span {span:.3g}, too wide for "
                f"steps of at most the `sensitivity` {dq!r} and at most 64 noise scales "
                f"({hint:.3g}, from `epsilon`); bring them closer or pass mode='continuous'")
    if math.ldexp(hint, -e) < 1.0 / 64:
        return (f"{head}, and the grid that does is coarser than the noise (scale "
                f"{hint:.3g}): `epsilon` is too large for this set; use a smaller `epsilon` "
                "or pass mode='continuous'")
    return (f"{head}, and the grid that does is coarser than the `sensitivity` {dq!r} "
            f"(noise scale {hint:.3g}): `epsilon` is too small for it; use a larger "
            "`epsilon`, finite bounds, or pass mode='continuous'")


def _spans(e: int, kl: int, lo: float, hi: float, gaps: tuple):
    """Grid indices (above kl) of the first and last grid point of each span (±2^62 for an
    unbounded end); None if a span holds no grid point."""
    ends_lo = [lo] + [b for _, b in gaps]
    ends_hi = [a for a, _ in gaps] + [hi]
    sa = [_gceil(x, e) - kl if math.isfinite(x) else -GD_INF for x in ends_lo]
    sb = [_gfloor(x, e) - kl if math.isfinite(x) else GD_INF for x in ends_hi]
    if any(a > b for a, b in zip(sa, sb)):
        return None
    sa_, sb_ = np.array(sa, dtype=np.int64), np.array(sb, dtype=np.int64)
    sa_.setflags(write=False)
    sb_.setflags(write=False)
    return sa_, sb_


@lru_cache(maxsize=128)
def _plan_constrained(target: float, hint: float, dq: float, lo: float, hi: float,
                      gaps: tuple, guarantee: str) -> ConstrainedPlan:
    metric = guarantee == "metric"
    e, kl, n, dk, big, sp, core, budget = _set_grid(hint, dq, lo, hi, gaps, metric)
    if sp is None:
        raise ValueError("grid law: a span of the allowed set holds no grid point at the "
                         "finest usable granularity; pass mode='continuous'")
    sa, sb = sp
    tails = not (math.isfinite(lo) and math.isfinite(hi))
    on_grid = all(_gceil(x, e) == _gfloor(x, e) for ab in gaps for x in ab)
    gamma = math.ldexp(1.0, e)
    m0 = n - (core[1] - core[0])

    def far(cum, tw, kap, reach):
        # pairs with an input beyond 0..L: kappa + rho / (1 - rho), rho the mass of the
        # offsets at or beyond M0 + 1 - reach over the whole law
        if not tails:
            return -math.inf
        num = int(cum[n - m0 + reach]) + tw
        z = int(cum[-1]) + 2 * tw
        b = _up(Fraction(num, z - num))
        return max(_add_up(float(k), b) for k in kap)

    work = [0]

    def cert(u):
        work[0] += n
        if work[0] > SEARCH_WORK * constants.MAX_SET_INTERVALS:
            raise _OverBudget
        try:
            return _cert(u)
        except ValueError:
            # a table or tail this scale cannot have, or losses beyond the rounding
            # argument's range: not certified (the bisection moves on)
            return math.inf, None, None, None, None, None, math.inf

    def _cert(u):
        cum, k, tw, sbits = _set_table(u, n, tails)
        if metric:
            lam1, kap1 = _certify_grid.gd_set_bound(cum, n, big, sa, sb, tw, sbits, u, 1,
                                                     _PAIRS["span"])
            lam1 = max(lam1, far(cum, tw, [kap1], 1))
            jumps = [_certify_grid.gd_set_pair_loss(cum, n, sa, sb, tw, sbits, int(sb[s]),
                                            int(sa[s + 1]))
                     for s in range(len(gaps))]
            c = _metric_bound(lam1, jumps, e, dq, gaps)
            return c, cum, k, tw, sbits, np.array([lam1]), c
        lam, kap = _certify_grid.gd_set_bound(cum, n, big, sa, sb, tw, sbits, u, dk,
                                              _PAIRS["all"])
        c = max(lam, 0.0, far(cum, tw, [kap], dk))
        if gaps and not on_grid:
            c = max(c, _certify_grid.gd_set_bound(cum, n, big, sa, sb, tw, sbits, u, dk + 1,
                                                   _PAIRS["gap"])[0])
        # one bound for every shift up to dk (the fast certificate does not split by shift)
        return c, cum, k, tw, sbits, np.full(dk, c), math.inf

    # a grid coarsened for the budget: the certificate jitters by about 1e-5 relative near
    # the root there, so the search stops at COARSE_REL (slightly more noise, a few
    # evaluations instead of twenty)
    try:
        if budget:
            u, (c, cum, k, tw, sbits, lam, me) = _search(cert, hint / gamma, target, COARSE_REL)
        else:
            u, (c, cum, k, tw, sbits, lam, me) = _search(cert, hint / gamma, target)
    except _OverBudget:
        raise ValueError(
            f"grid law: `epsilon` is too small for this allowed set: the scale search for the "
            f"loss {target:.6g} built {work[0] // n - 1} tables of {n} offsets (its work "
            "budget) without a certified scale; use a larger `epsilon`, finite bounds, or pass "
            "mode='continuous'") from None
    lam.setflags(write=False)
    gh = np.array([b for _, b in gaps], dtype=np.float64)
    gh.setflags(write=False)
    return ConstrainedPlan("laplace", e, kl, n, dk, u, k, _set_floor(u, n, tails), cum, target,
                           c, lam, span_lo=sa, span_hi=sb, gap_hi=gh, guarantee=guarantee,
                           metric_epsilon=me, inputs=big, tail_weight=tw, tail_bits=sbits,
                           core=core)


def plan_constrained_laplace(epsilon: float, sensitivity: float, lower: float, upper: float,
                             forbidden: tuple, guarantee: str, scale_hint: float
                             ) -> ConstrainedPlan:
    """Grid Laplace on an allowed set, certified for ``guarantee`` at ``epsilon``."""
    gaps = tuple((float(a), float(b)) for a, b in forbidden)
    try:
        return _plan_constrained(float(epsilon), float(scale_hint), float(sensitivity),
                                 float(lower), float(upper), gaps, guarantee)
    except OverflowError as exc:
        raise ValueError(f"grid law: the bounds, the `sensitivity` or the noise scale "
                         f"{float(scale_hint):.3g} (from `epsilon`) overflow the grid "
                         f"arithmetic ({exc}); pass mode='continuous'") from None

