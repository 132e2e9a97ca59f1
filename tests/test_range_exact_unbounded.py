"""The grid law on unbounded allowed sets (half-lines, the real line with gaps): the geometric
tails beyond the table, the rejection step far from the finite ends, and the certificate,
checked against independent computations of the exact law."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import bndp
from bndp._core import certify_grid as _certify_grid, grid as _grid
from bndp._laws.constrained import _tail_bits
from bndp._laws.whole_range import _kexp
from bndp.mechanisms import exact

from ._helpers import chi2_pvalue

INF = math.inf
GD_INF = 1 << 62


# ------------------------------------------------------------------------------------------
# an independent model of the law: weights W(d) from the table inside, W(N) p^(|d| - N)
# beyond, P(j | i) = W(j - i) / sum over allowed j (summed until the tail is negligible)
# ------------------------------------------------------------------------------------------
class Law:
    def __init__(self, cum, N, sa, sb, sbits):
        self.w = np.diff(np.asarray(cum, dtype=np.float64))
        self.N, self.sa, self.sb, self.s = N, list(sa), list(sb), sbits
        self.lnp = math.log1p(-2.0 ** -sbits) if sbits else 0.0
        self.reach = N + (int(60 * 2 ** sbits) if sbits else 0)

    def allowed(self, j):
        j = np.asarray(j)
        ok = np.zeros(j.shape, dtype=bool)
        for a, b in zip(self.sa, self.sb):
            ok |= (j >= a) & (j <= b)
        return ok

    def weight(self, d):
        d = np.asarray(d)
        a = np.abs(d)
        out = np.empty(d.shape)
        inside = a <= self.N
        out[inside] = self.w[d[inside] + self.N]
        out[~inside] = self.w[0] * np.exp((a[~inside] - self.N) * self.lnp)
        return out

    def pmf(self, i, lo=None, hi=None):
        lo = i - self.reach if lo is None else lo
        hi = i + self.reach if hi is None else hi
        j = np.arange(lo, hi + 1)
        j = j[self.allowed(j)]
        w = self.weight(j - i)
        return j, w / math.fsum(w)


def table(u, N, sbits):
    cum = _certify_grid.gd_table(0, u, N, 40, 1 << 12)
    tw = int(cum[1]) * ((1 << sbits) - 1)
    return cum, tw


def draw(cum, N, sa, sb, gh, tw, sbits, core, values, seed, kl=0):
    tree, levels = exact.search_tree(cum)
    q = np.ascontiguousarray(np.asarray(values, dtype=np.float64).reshape(1, -1))
    out = np.empty_like(q)
    _grid.gd_set_fill_rows(np.random.default_rng(seed), tree, levels, N, 0, kl,
                           np.array(sa, dtype=np.int64), np.array(sb, dtype=np.int64),
                           np.array(gh, dtype=np.float64), tw, sbits, core[0], core[1], False,
                           q, out)
    return out[0].astype(np.int64)


# A small half-line [3, inf) minus the gap (8, 12) (grid step 1, kl = 0): table half-width
# N = 12, a kernel of scale 4 steps and a tail of ratio 7/8, so that tail draws and
# rejections happen often enough to be tested by sampling. The finite ends span the core
# [3, 12]; M0 = N - 9 = 3, and inputs 0..L = 0..15 see the core inside their table window
# and are drawn exactly; farther inputs draw from the whole law and reject what is not
# allowed.
SA, SB, GH = [3, 12], [8, GD_INF], [12.0]
N, U, S = 12, 4.0, 3
CORE = (3, 12)
L_IN = 15


@pytest.mark.parametrize("value", [3, 6, 8, 12, 14, 15, 16, 20, 40, 300])
def test_tail_and_rejection_paths_sample_the_exact_law(value):
    cum, tw = table(U, N, S)
    law = Law(cum, N, SA, SB, S)
    j, p = law.pmf(value)
    x = draw(cum, N, SA, SB, GH, tw, S, CORE, np.full(60000, float(value)), seed=value)
    assert law.allowed(x).all()
    far = (np.abs(x - value) > N).mean()
    assert far > 0.01                                  # the tails are really exercised
    counts = np.array([np.sum(x == v) for v in j])
    assert counts.sum() == len(x)
    assert chi2_pvalue(counts, p) > 1e-3
    # power: the law of the neighbouring input is rejected by the same test
    j2, p2 = law.pmf(value + 1)
    if np.array_equal(j2, j):
        assert chi2_pvalue(counts, p2) < 1e-6


def test_geometric_tail_and_rejection_keep_the_grid_index_exact():
    # far inputs on a real line with one gap: rejection of outputs inside the gap
    cum, tw = table(U, N, S)
    sa, sb, gh = [-GD_INF, 9], [5, GD_INF], [9.0]
    law = Law(cum, N, sa, sb, S)
    for value in (-200.0, -20.0, 0.0, 5.0, 9.0, 30.0):
        x = draw(cum, N, sa, sb, gh, tw, S, (5, 9), np.full(40000, value), seed=3)
        assert law.allowed(x).all()
        j, p = law.pmf(int(value))
        counts = np.array([np.sum(x == v) for v in j])
        assert counts.sum() == len(x)
        assert chi2_pvalue(counts, p) > 1e-3


def exact_loss(law, i, k):
    """max over allowed j of |ln P(j|i) - ln P(j|k)| with 50-digit logs (beyond the summed
    window the log ratio is constant, so the window's edge values stand for the rest)."""
    lo, hi = min(i, k) - law.reach, max(i, k) + law.reach
    j = np.arange(lo, hi + 1)
    j = j[law.allowed(j)]
    mpmath.mp.dps = 50
    wi = [mpmath.mpf(float(v)) for v in law.weight(j - i)]
    wk = [mpmath.mpf(float(v)) for v in law.weight(j - k)]
    si, sk = mpmath.fsum(wi), mpmath.fsum(wk)
    best = max(abs(mpmath.log(a / si) - mpmath.log(b / sk)) for a, b in zip(wi, wk))
    return float(best)


def test_certificate_kernel_matches_an_exhaustive_computation():
    cum, tw = table(U, N, S)
    law = Law(cum, N, SA, SB, S)
    L = L_IN
    lam, kap = _certify_grid.gd_set_losses(cum, N, L, np.array(SA, dtype=np.int64),
                                   np.array(SB, dtype=np.int64), tw, S, 1, 4, 0)
    for delta in range(1, 5):
        ref = max(exact_loss(law, i, i + delta) for i in range(L - delta + 1)
                  if law.allowed(i) and law.allowed(i + delta))
        assert ref <= lam[delta - 1] <= ref + 1e-11
        # kappa: the largest kernel log ratio over all offsets, tails included
        d = np.arange(-N - 40, N + 41)
        r = np.abs(np.log(law.weight(d)) - np.log(law.weight(d - delta)))
        assert r.max() <= kap[delta - 1] <= r.max() + 1e-11
    # the pairs inside one span, and the pair across the gap
    lam2, _ = _certify_grid.gd_set_losses(cum, N, L, np.array(SA, dtype=np.int64),
                                  np.array(SB, dtype=np.int64), tw, S, 1, 1, 2)
    ref2 = max(exact_loss(law, i, i + 1) for i in range(L) if law.allowed(i)
               and law.allowed(i + 1))
    assert ref2 <= lam2[0] <= ref2 + 1e-11
    jump = _certify_grid.gd_set_pair_loss(cum, N, np.array(SA, dtype=np.int64),
                                  np.array(SB, dtype=np.int64), tw, S, 8, 12)
    assert exact_loss(law, 8, 12) <= jump <= exact_loss(law, 8, 12) + 1e-11


def test_certificate_refuses_span_ends_outside_the_windows():
    cum, tw = table(U, N, S)
    with pytest.raises(ValueError, match="window"):
        _certify_grid.gd_set_losses(cum, N, L_IN + 1, np.array(SA, dtype=np.int64),
                            np.array(SB, dtype=np.int64), tw, S, 1, 2, 0)
    with pytest.raises(ValueError, match="geometric tail"):
        _certify_grid.gd_set_losses(cum, N, L_IN, np.array(SA, dtype=np.int64),
                            np.array(SB, dtype=np.int64), 0, 0, 1, 2, 0)


# ------------------------------------------------------------------------------------------
# the mechanisms
# ------------------------------------------------------------------------------------------
CASES = [
    dict(lower=0.0),                                       # counts: [0, inf)
    dict(lower=0.0, forbidden=[(2.0, 3.0)]),
    dict(upper=0.0, forbidden=[(-3.5, -1.25)]),
    dict(forbidden=[(0.0, 1.0)]),                          # the real line with a gap
    dict(forbidden=[(0.3, 1.7), (4.0, 4.5)], lower=-1.0),
    dict(),                                                # the whole line
]


def plan_law(plan):
    sa, sb = plan.span_lo, plan.span_hi
    return Law(plan.cum, plan.n, sa, sb, plan.tail_bits)


@pytest.mark.parametrize("guarantee", ["dp", "metric"])
@pytest.mark.parametrize("kw", CASES)
def test_unbounded_default_is_certified_and_on_the_grid(kw, guarantee):
    m = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, guarantee=guarantee, **kw)
    c = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, guarantee=guarantee, mode="continuous", **kw)
    plan = m.exact_plan
    assert m.mode == "exact" and not plan.bounded
    assert m.privacy_loss() <= 1.0
    if guarantee == "metric":
        assert m.metric_loss() <= 1.0
    # the grid scale is close to the continuous calibration, mostly a little below it (the
    # discrete law's exact certificate is less demanding, and values at off-grid span ends
    # are rounded onto the grid)
    assert 0.95 * c.scale <= m.scale <= 1.002 * c.scale
    lo, hi = kw.get("lower", -INF), kw.get("upper", INF)
    vals = np.array([v for v in (lo, hi, -1e6, -5.0, -1.0, 0.0, 1.0, 1.7, 3.0, 1e6)
                     if math.isfinite(v) and lo <= v <= hi
                     and not any(a < v < b for a, b in kw.get("forbidden", []))])
    x = m.sample(np.repeat(vals, 200), rng=9)
    assert (np.ldexp(x, -plan.exponent) % 1 == 0).all()
    assert ((x >= lo) & (x <= hi)).all()
    for a, b in kw.get("forbidden", []):
        assert not ((x > a) & (x < b)).any()
    # a huge value is released near itself (no clipping below 2^52 grid steps)
    if hi == INF:
        assert abs(m.sample(1e6, rng=1) - 1e6) < 50


@pytest.mark.parametrize("kw", CASES[:5])
def test_unbounded_dp_certificate_covers_the_exact_loss_of_every_pair(kw):
    # epsilon 2 keeps the table small; pairs over the exact inputs 0..L and beyond it
    # (where the far bound applies), every shift up to dk
    m = bndp.ConstrainedLaplace(2.0, sensitivity=1.0, **kw)
    plan = m.exact_plan
    law = plan_law(plan)
    L, dk = plan.inputs, plan.dk
    rng = np.random.default_rng(0)
    core = list(range(max(-40, -L), 0)) if plan.span_lo[0] == -GD_INF else []
    starts = (list(range(plan.core[0] - dk - 3, plan.core[1] + 4)) + [0, L - dk - 1, L - dk, L - 2]
              + [L + 5, L + 200] + core + list(rng.integers(0, L, 6)))
    worst = 0.0
    for i in starts:
        for delta in (1, dk // 2, dk):
            k = i + delta
            if law.allowed(i) and law.allowed(k):
                j, pi = law.pmf(i, min(i, k) - law.reach, max(i, k) + law.reach)
                _, pk = law.pmf(k, min(i, k) - law.reach, max(i, k) + law.reach)
                worst = max(worst, float(np.max(np.abs(np.log(pi) - np.log(pk)))))
    assert worst <= m.privacy_loss() + 1e-12
    assert worst >= 0.9 * m.privacy_loss()     # the worst pairs are among those checked


def test_unbounded_law_functions_and_samples():
    m = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=0.0, forbidden=[(2.0, 3.0)])
    for value in (0.0, 2.0, 3.0, 50.0):
        g, p = m.exact_plan.support(value)
        assert abs(math.fsum(p) - 1.0) < 1e-12
        assert m.cdf(g[-1], value) == 1.0 and m.cdf(-1.0, value) == 0.0
        assert m.sf(g[len(g) // 2], value) + m.cdf(g[len(g) // 2], value) == pytest.approx(1.0)
        assert m.mean(value) == pytest.approx(float(np.dot(p, g)), rel=1e-12)
        x = m.sample(np.full(40000, value), rng=int(value) + 1)
        assert ((x <= 2.0) | (x >= 3.0)).all() and (x >= 0).all()
        near = (g >= value - 8) & (g <= value + 8)
        counts = np.array([np.sum(x == v) for v in g[near]] + [np.sum(~np.isin(x, g[near]))])
        assert chi2_pvalue(counts, np.append(p[near], 1.0 - p[near].sum())) > 1e-3
    with pytest.raises(NotImplementedError, match="pmf"):
        m.pdf(1.0, 0.0)
    assert m.pmf(m.exact_plan.gamma * 3, 0.0) > 0
    assert m.pmf(2.5, 0.0) == 0.0                      # in the gap


def test_half_line_bounded_laplace_default_matches_constrained():
    b = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=INF)
    c = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=0.0)
    # the same law up to the bisection's tolerance (the two start from different hints)
    assert b.scale == pytest.approx(c.scale, rel=1e-6)
    assert b.privacy_loss() <= 1.0 and c.privacy_loss() <= 1.0
    assert b.exact_plan.exponent == c.exact_plan.exponent
    assert b.variance(0.0) == pytest.approx(c.variance(0.0), rel=1e-5)
    # the support does not depend on the value: every output of one input has positive
    # probability under its neighbour
    for v in (0.0, 5.0):
        g, p = b.exact_plan.support(v)
        assert (p > 0).all() and (b.pmf(g[:50], v + 1.0) > 0).all()


# ------------------------------------------------------------------------------------------
# extreme parameters (from an outside review)
# ------------------------------------------------------------------------------------------
def test_span_ends_are_exact_when_the_quotient_is_subnormal():
    # ends / 2^e below the normal range: the first and last grid points of a span must
    # still lie in the allowed set (math.ldexp rounded 2e-310 / 2^e to 0)
    m = bndp.ConstrainedLaplace(1.0, sensitivity=2.0 ** 60, forbidden=[(-1.0, 2e-310)])
    x = m.sample(np.full(20000, 2e-310), rng=1)
    assert not ((x > -1.0) & (x < 2e-310)).any()
    b = bndp.BoundedLaplace(1.0, sensitivity=2.0 ** 60, lower=5e-324, upper=INF)
    assert (b.sample(np.full(20000, 1.0), rng=1) >= 5e-324).all()
    f = bndp.BoundedLaplace(1.0, sensitivity=2.0 ** 60, lower=5e-324, upper=2.0 ** 70)
    assert (f.sample(np.full(20000, 1.0), rng=1) >= 5e-324).all()


@pytest.mark.parametrize("make", [
    lambda: bndp.ConstrainedLaplace(1e-9, sensitivity=1.0, forbidden=[(0.0, 1.0)]),
    lambda: bndp.BoundedLaplace(1e-6, sensitivity=1.0, lower=-INF, upper=0.0),
    lambda: bndp.ConstrainedLaplace(1.0, sensitivity=1e-300, forbidden=[(0.0, 1.0)]),
    lambda: bndp.ConstrainedLaplace(1.0, sensitivity=1e300, forbidden=[(0.0, 1.0)]),
    lambda: bndp.BoundedLaplace(1.0, sensitivity=1e300, lower=-INF, upper=0.0),
    lambda: bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=-1e308, upper=1e308),
    lambda: bndp.ConstrainedLaplace(1e-300, sensitivity=1.0, lower=0.0),
])
def test_unreachable_grids_are_refused_at_once_with_the_way_out(make, monkeypatch):
    # at once: before any weight table is built (it used to search for minutes)
    from bndp._core import certify_grid as _certify_grid, grid as _grid
    built = []
    table = _certify_grid.gd_table
    monkeypatch.setattr(_certify_grid, "gd_table", lambda *a: built.append(a) or table(*a))
    with pytest.raises(ValueError, match="mode='continuous'"):
        make()
    assert not built


def test_large_epsilon_and_wide_gaps_still_plan_and_are_certified():
    # scales whose tail entries leave the rounding argument's range are treated as not
    # certified (the bisection moves to a larger scale) instead of aborting the plan
    for m, eps in ((bndp.ConstrainedLaplace(40.0, sensitivity=1.0, forbidden=[(0.0, 1.0)]), 40.0),
                   (bndp.BoundedLaplace(40.0, sensitivity=1.0, lower=0.0, upper=INF), 40.0)):
        assert m.privacy_loss() <= eps
    w = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, forbidden=[(0.0, 300.0)], guarantee="metric")
    assert w.metric_loss() <= 1.0
    x = w.sample(np.array([0.0, 300.0]), rng=2)
    assert not ((x > 0) & (x < 300)).any()


def test_random_rounding_draws_one_word_whatever_the_position():
    # the stream's use must not depend on the value's position on the grid
    m = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0, guarantee="metric")
    g = m.exact_plan.gamma
    states = []
    for v in (3.0, 3.0 + g / 3, 3.0 + g / 2):
        gen = np.random.default_rng(7)
        m.sample(np.full(64, v), rng=gen)
        states.append(gen.bit_generator.state["state"]["state"])
    assert states[0] == states[1] == states[2]


# ------------------------------------------------------------------------------------------
# the fast certificate (gd_set_bound) against the exhaustive kernel (gd_set_losses), and the
# tail arithmetic of the pair loss
# ------------------------------------------------------------------------------------------
def _random_set_law(rng):
    n = int(rng.integers(8, 60))
    u = float(rng.uniform(0.5, 20.0))
    m = int(rng.integers(1, 4))
    pts = sorted(rng.choice(np.arange(0, n + 1), 2 * m, replace=False).tolist())
    sa, sb = pts[0::2], pts[1::2]
    tails = bool(rng.integers(0, 2))
    if tails:
        r = int(rng.integers(0, 3))
        if r != 1:
            sa[0] = -GD_INF
        if r != 0:
            sb[-1] = GD_INF
    cum = _certify_grid.gd_table(0, u, n, _kexp(0, u, n) - int(rng.integers(0, 3)), 1 << 12)
    sbits = tw = 0
    if tails:
        sbits = _tail_bits(u)
        tw = int(cum[1]) * ((1 << sbits) - 1)
    finite = [x for x in sa + sb if abs(x) < GD_INF]
    L = max(0, n + min(finite)) if finite else n
    return cum, n, L, np.array(sa, dtype=np.int64), np.array(sb, dtype=np.int64), tw, sbits, u


@pytest.mark.parametrize("seed", range(4))
def test_fast_certificate_never_below_the_exhaustive_one(seed):
    """On random tables, spans and shifts the O(N + L m) bound is >= the exhaustive maximum
    over every pair and output (and within 1e-7 of it: it costs no noise)."""
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(150):
        cum, n, L, sa, sb, tw, sbits, u = _random_set_law(rng)
        if int(cum[-1]) + 2 * tw > 1 << 58:
            continue
        for name, which in _certify_grid.PAIR_SETS.items():
            D = 1 if name == "span" else int(rng.integers(1, 6))
            lo = D if name == "gap" else 1
            lam, kap = _certify_grid.gd_set_losses(cum, n, L, sa, sb, tw, sbits, lo, D, which)
            ref = float(np.max(lam))
            bound, kb = _certify_grid.gd_set_bound(cum, n, L, sa, sb, tw, sbits, u, D, which)
            assert kb >= float(np.max(kap))
            if ref == -np.inf:
                continue
            assert ref <= bound <= ref + 1e-7, (which, D, ref, bound)
            checked += 1
    assert checked > 250


def test_pair_sets_are_named_and_checked():
    """The certificates' ``which`` takes the three named pair sets and nothing else; the
    pairs inside one span are adjacent pairs only (D = 1)."""
    assert sorted(_certify_grid.PAIR_SETS) == ["all", "gap", "span"]
    assert len(set(_certify_grid.PAIR_SETS.values())) == 3
    cum, n, L, sa, sb, tw, sbits, u = _random_set_law(np.random.default_rng(3))
    bad = max(_certify_grid.PAIR_SETS.values()) + 1
    for f, args in ((_certify_grid.gd_set_bound, (u, 1)), (_certify_grid.gd_set_losses, (1, 1))):
        with pytest.raises(ValueError, match="inconsistent arguments"):
            f(cum, n, L, sa, sb, tw, sbits, *args, bad)
        with pytest.raises(ValueError, match="inconsistent arguments"):
            f(cum, n, L, sa, sb, tw, sbits, *args, -1)
    with pytest.raises(ValueError, match="inconsistent arguments"):
        _certify_grid.gd_set_bound(cum, n, L, sa, sb, tw, sbits, u, 2,
                                   _certify_grid.PAIR_SETS["span"])


def test_fast_certificate_mutations_are_caught():
    """The comparison above has power: dropping either part of the bound (the kernel's
    deviation c, or the normaliser term) puts it below the exhaustive maximum."""
    rng = np.random.default_rng(11)
    below_without_kernel = below_without_norm = 0
    for _ in range(60):
        cum, n, L, sa, sb, tw, sbits, u = _random_set_law(rng)
        if int(cum[-1]) + 2 * tw > 1 << 58:
            continue
        D = int(rng.integers(1, 4))
        ref = float(np.max(_certify_grid.gd_set_losses(cum, n, L, sa, sb, tw, sbits, 1, D, 0)[0]))
        bound, kb = _certify_grid.gd_set_bound(cum, n, L, sa, sb, tw, sbits, u, D, 0)
        if ref == -np.inf:
            continue
        below_without_kernel += bound - (D / u) < ref - 1e-9      # the kernel ratio dropped
        below_without_norm += kb < ref - 1e-9                     # the normalisers dropped
    assert below_without_kernel > 10 and below_without_norm > 10


def test_pair_loss_across_a_gap_far_beyond_the_old_tail_limit():
    # a gap of 640 steps on a half-line: tail entries k ln p reach about 170 (the old kernel
    # refused beyond 64); tail differences are now taken as (k1 - k2) ln p
    n, u, s = 700, 4.0, 3
    sa, sb = [3, 650], [8, GD_INF]
    cum, tw = table(u, n, s)
    law = Law(cum, n, sa, sb, s)
    got = _certify_grid.gd_set_pair_loss(cum, n, np.array(sa, dtype=np.int64),
                                 np.array(sb, dtype=np.int64), tw, s, 8, 650)
    ref = exact_loss(law, 8, 650)
    assert ref <= got <= ref + 1e-9 * max(1.0, ref)


@pytest.mark.parametrize("kw", [dict(forbidden=[(0.0, 20.0)]),
                                dict(forbidden=[(10.0, 60.0)], lower=0.0),
                                dict(forbidden=[(10.0, 12.0), (80.0, 90.0)], lower=0.0)])
def test_unbounded_metric_with_small_sensitivity_plans_certified_and_samples(kw):
    # the first two were refused before ("no scale certifies the target on this grid"), the
    # third planned at 3.4 times the continuous scale: the jump across a gap hundreds of
    # noise scales wide needs tail log-weights beyond the old rounding argument's range
    kw = dict(kw, guarantee="metric")
    m = bndp.ConstrainedLaplace(3.78, sensitivity=0.14, **kw)
    c = bndp.ConstrainedLaplace(3.78, sensitivity=0.14, mode="continuous", **kw)
    assert m.metric_loss() == m.privacy_loss() == m.exact_plan.certified_epsilon <= 3.78
    assert m.metric_loss() >= 3.78 * (1 - 1e-6)
    assert 0.95 * c.scale <= m.scale <= 1.002 * c.scale
    vals = np.array([v for v in (-5.0, 0.0, 5.0, 10.0, 12.0, 20.0, 60.0, 100.0)
                     if v >= kw.get("lower", -INF)
                     and not any(a < v < b for a, b in kw["forbidden"])])
    x = m.sample(np.repeat(vals, 400), rng=3)
    assert (x >= kw.get("lower", -INF)).all()
    for a, b in kw["forbidden"]:
        assert not ((x > a) & (x < b)).any()
    assert (np.ldexp(x, -m.exact_plan.exponent) % 1 == 0).all()
