"""The default release law: grid, integer weight table, constant-time integer inverse CDF,
certificate from the table (checked against exact rational arithmetic), floating-point attack."""

from __future__ import annotations

import itertools
import math
import os
import threading
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import bndp
from bndp._core import grid as _grid, testing as _testing
from bndp._laws.whole_range import _certify, _table
from bndp.mechanisms import exact

from ._helpers import chi2_pvalue, grid_counts

FULL = os.environ.get("BNDP_FULL") == "1"


# --- exhaustive reference: exact rationals, independent of the kernel's certificate --------

def _exact_shift_losses(cum, n, dk):
    """max over i, i' (|i - i'| = delta, both orders) and j of ln P(j|i)/P(j|i'), from the
    integer table in exact rational arithmetic, logged with mpmath at 40 digits."""
    w = [int(a) for a in np.diff(cum.astype(object))]
    s = [sum(w[j - i + n] for j in range(n + 1)) for i in range(n + 1)]
    out = []
    for delta in range(1, dk + 1):
        best = Fraction(0)
        for i in range(n + 1 - delta):
            for a, b in ((i, i + delta), (i + delta, i)):
                for j in range(n + 1):
                    r = Fraction(w[j - a + n] * s[b], w[j - b + n] * s[a])
                    if r > best:
                        best = r
        with mpmath.workdps(40):
            out.append(float(mpmath.log(mpmath.mpf(best.numerator) / best.denominator)))
    return np.maximum.accumulate(np.array(out))


@pytest.mark.parametrize("fam,u,n,dk", [(0, 3.0, 12, 3), (0, 40.0, 20, 4), (1, 2.5, 15, 2),
                                        (1, 9.0, 10, 5), (0, 0.7, 9, 1)])
def test_kernel_certificate_against_exact_rationals(fam, u, n, dk):
    cum, _ = _table(fam, u, n)
    lam = _certify(cum, n, dk)
    ref = _exact_shift_losses(cum, n, dk)
    assert (lam >= ref).all()                       # an upper bound ...
    assert (lam - ref <= 2e-12).all()               # ... and a tight one
    # the table is symmetric bit for bit (the certificate's mirror argument needs it)
    w = np.diff(cum)
    assert np.array_equal(w, w[::-1])


@pytest.mark.parametrize("make,target", [
    (lambda: bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=1.0), 1.0),
    (lambda: bndp.BoundedLaplace(0.5, sensitivity=0.5, lower=-0.5, upper=0.5,
                                 delta=0.05), 0.5 - math.log1p(-0.05)),
    (lambda: bndp.BoundedGaussian(1.0, sensitivity=0.5, lower=0.0, upper=1.0), 1.0),
])
def test_mechanism_certificate_exhaustive(make, target, monkeypatch):
    # a coarse grid (at least 16 intervals instead of 1024) keeps the reference small
    from bndp._laws import window
    monkeypatch.setattr(window, "WINDOW_WIDTH_STEPS", 16)
    monkeypatch.setattr(window, "SCALE_STEPS", 4)
    window._LAWS.clear()
    m = make()
    window._LAWS.clear()
    plan = m.exact_plan
    assert plan.n <= 40, "keep the exhaustive reference small"
    assert plan.kernel.N == plan.n and not plan.kernel.tailw     # the table covers the row
    ref = _exact_shift_losses(plan.kernel.cum, plan.n, plan.dk)
    assert bndp.verify(m) == plan.certified_epsilon == m.privacy_loss()
    assert ref[-1] <= plan.certified_epsilon <= target
    # tight up to the certificate's rounding allowance 2 eta (eta = 1/(W_min - 1) + 2^-45)
    assert plan.certified_epsilon - ref[-1] < 1e-11 + 2.0 / (int(plan.kernel.cum[1]) - 1)


def test_multivariate_certificate_exhaustive():
    """m = 2: the certificate bounds the maximum, over every shift vector whose rounding is
    compatible with an l2 shift <= sensitivity, of the summed per-coordinate losses."""
    m = bndp.BoundedGaussian(1.0, sensitivity=0.25, lower=[0.0, 0.0], upper=[0.5, 0.75])
    plan = m.exact_plan
    assert plan.certified_epsilon <= 1.0 and bndp.verify(m) == plan.certified_epsilon
    # per-coordinate shift losses: the kernel's (checked against exact rationals above);
    # the brute force below is over the l2 ball, independent of the dual bound
    lams = [np.asarray(p.shift_losses) for p in plan.coords]
    r2 = (Fraction(0.25) / Fraction(plan.gamma)) ** 2
    best = 0.0
    for r in itertools.product(*(range(len(lam) + 1) for lam in lams)):
        if sum(max(x - 1, 0) ** 2 for x in r) <= r2:
            best = max(best, sum(lam[x - 1] if x else 0.0 for lam, x in zip(lams, r)))
    assert best <= plan.certified_epsilon
    assert plan.certified_epsilon - best < 0.02 * best   # the dual bound is nearly tight


def test_real_neighbours_within_certificate():
    """From true values, not indices: pmf ratios of random neighbours (ties included)."""
    m = bndp.BoundedLaplace(1.0, sensitivity=0.75, lower=-3.0, upper=4.0)
    plan = m.exact_plan
    r = np.random.default_rng(3)
    worst = 0.0
    for q in np.concatenate([r.uniform(-3.2, 4.2, 60), [-3.0, 4.0, -3.0 + 0.5 * plan.gamma]]):
        q2 = q + r.choice([-0.75, 0.75, r.uniform(-0.75, 0.75)])
        a = plan.pmf(np.clip(q, -3.0, 4.0))
        b = plan.pmf(np.clip(q2, -3.0, 4.0))
        worst = max(worst, float(np.max(np.abs(np.log(a / b)))))
    assert worst <= plan.certified_epsilon <= 1.0


# --- every release path: on the grid, in bounds, the law it reports ------------------------

MECHS = {
    "laplace": lambda: bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=120.0),
    "laplace_delta": lambda: bndp.BoundedLaplace(0.5, sensitivity=1.0, lower=0.0, upper=10.0,
                                                 delta=1e-3),
    "laplace_offgrid_bounds": lambda: bndp.BoundedLaplace(1.0, sensitivity=0.3, lower=-1.7,
                                                          upper=2.9),
    "gaussian": lambda: bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=120.0),
}


@pytest.mark.parametrize("name", sorted(MECHS))
def test_default_outputs_on_grid_in_bounds_and_follow_the_pmf(name):
    m = MECHS[name]()
    assert m.mode == "exact" and "mode='exact'" in repr(m)
    plan = m.exact_plan
    lo, hi = m.lower, m.upper
    for k, v in enumerate((lo, 0.5 * (lo + hi), hi, lo + 0.3 * (hi - lo))):
        x = m.sample(v, size=100_000, rng=100 + k)
        assert ((x >= lo) & (x <= hi)).all()
        counts = grid_counts(plan, x)
        assert chi2_pvalue(counts, plan.pmf(v)) > 1e-4
    assert m.privacy_loss() <= plan.target


def test_chi_square_has_power():
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    wrong = bndp.BoundedLaplace(0.9, sensitivity=1.0, lower=0.0, upper=10.0).exact_plan
    x = m.sample(3.0, size=100_000, rng=5)
    # both laws live on the same grid (the same granularity and width), so the slightly
    # under-noised law is a point-by-point alternative on it
    assert (wrong.exponent, wrong.n, wrong.lower) == (m.exact_plan.exponent, m.exact_plan.n,
                                                      m.exact_plan.lower)
    assert chi2_pvalue(grid_counts(m.exact_plan, x), wrong.pmf(3.0)) < 1e-6
    # and a neighbouring true value's law (always on the same grid) is told apart too
    assert chi2_pvalue(grid_counts(m.exact_plan, x), m.exact_plan.pmf(4.0)) < 1e-6


def test_multivariate_default_on_grid_and_law():
    m = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=[0.0, -1.0], upper=[4.0, 3.0])
    plan = m.exact_plan
    assert m.mode == "exact" and plan.certified_epsilon <= 1.0
    x = m.sample([1.0, 2.9], size=60_000, rng=8)
    assert x.shape == (60_000, 2)
    for c, p in enumerate(plan.coords):
        assert ((x[:, c] >= m.lower[c]) & (x[:, c] <= m.upper[c])).all()
        assert chi2_pvalue(grid_counts(p, x[:, c]), plan.pmf([1.0, 2.9])[c]) > 1e-4
    # independence of the coordinates: the joint frequency of a cell is the product
    a = x[:, 0] <= np.median(x[:, 0])
    b = x[:, 1] <= np.median(x[:, 1])
    assert abs(np.mean(a & b) - np.mean(a) * np.mean(b)) < 0.01


def test_bndp_sample_default_scalar_and_per_row_bounds():
    v = np.linspace(0, 120, 1001)
    x = bndp.sample(v, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0, upper=120,
                    rng=1)
    grid_counts(bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=120.0).exact_plan, x)
    g = bndp.sample(v, mechanism="gaussian", epsilon=1.0, sensitivity=1.0, lower=0,
                    upper=120, rng=1)
    grid_counts(bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=120.0).exact_plan, g)
    lo = np.where(np.arange(v.size) % 2, 0.0, -5.0)
    hi = np.where(np.arange(v.size) % 3, 120.0, 200.0)
    y = bndp.sample(v, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=lo, upper=hi,
                    rng=2)
    assert ((y >= lo) & (y <= hi)).all()
    for l, h in {(a, b) for a, b in zip(lo, hi)}:
        sel = (lo == l) & (hi == h)
        grid_counts(bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=l, upper=h).exact_plan, y[sel])
    # any number of distinct pairs (no cap)
    z = bndp.sample(np.zeros(5000), mechanism="laplace", epsilon=1.0, sensitivity=1.0,
                    lower=-np.arange(5000.0), upper=1.0, rng=3)
    assert ((z >= -np.arange(5000.0)) & (z <= 1.0)).all()
    # continuous only when asked for
    c = bndp.sample(v, mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0, upper=120,
                    rng=1, mode="continuous")
    assert np.mean(np.ldexp(c, 4) != np.rint(np.ldexp(c, 4))) > 0.9


def test_moments_and_distribution_functions_from_the_grid_law():
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    plan = m.exact_plan
    g, p = plan.grid(), plan.pmf(2.0)
    mu = float(np.dot(g, p))
    assert m.mean(2.0) == pytest.approx(mu, rel=1e-12)
    assert m.bias(2.0) == pytest.approx(mu - 2.0, rel=1e-9)
    assert m.variance(2.0) == pytest.approx(float(np.dot(p, (g - mu) ** 2)), rel=1e-9)
    assert m.mse(2.0) == pytest.approx(float(np.dot(p, (g - 2.0) ** 2)), rel=1e-9)
    assert m.pmf(g[5], 2.0) == p[5] and m.pmf(g[5] + plan.gamma / 3, 2.0) == 0.0
    assert m.cdf(g[5], 2.0) == pytest.approx(p[:6].sum(), rel=1e-12)
    assert m.cdf(-1.0, 2.0) == 0.0 and m.cdf(10.0, 2.0) == 1.0
    assert m.ppf(0.0, 2.0) == 0.0 and m.ppf(1.0, 2.0) == g[-1]
    q = m.ppf(0.5, 2.0)
    assert m.cdf(q, 2.0) >= 0.5 and m.cdf(q - plan.gamma, 2.0) < 0.5
    np.testing.assert_allclose(m.variance([1.0, 2.0]), [m.variance(1.0), m.variance(2.0)])
    with pytest.raises(NotImplementedError, match="pmf"):
        m.pdf(1.0, 2.0)
    gm = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    assert gm.variance(5.0) > 0 and gm.cdf(10.0, 5.0) == 1.0
    # the grid law's variance is within 1 % of the continuous law's (Laplace) or below it
    c = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=120.0, mode="continuous")
    d = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=120.0)
    for v in (0.0, 60.0):
        assert d.variance(v) <= 1.01 * c.variance(v)


def test_modes_and_errors():
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    assert repr(m) == ("BoundedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0, "
                       "delta=0.0, mode='exact')")
    assert eval("bndp." + repr(m)) == m
    assert m == bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="exact")
    assert m == bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode=None)
    c = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="continuous")
    assert c != m and c.exact_plan is None and "mode='continuous'" in repr(c)
    assert isinstance(m.sample(2.0, rng=1), float)
    assert m.sample([1.0, 2.0], size=(3, 2), rng=1).shape == (3, 2)
    assert np.array_equal(m.sample(np.arange(5.0), rng=3), m.sample(np.arange(5.0), rng=3))
    with pytest.raises(ValueError, match="outside"):
        m.sample(11.0, on_outside="raise")
    assert m.sample(1e9, rng=1) <= 10.0
    with pytest.raises(ValueError, match="`mode`"):
        bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="fast")
    with pytest.raises(ValueError, match="far from 0"):
        bndp.BoundedLaplace(1.0, sensitivity=1e-6, lower=1e12, upper=1e12 + 1.0)
    assert bndp.verify(m) == m.privacy_loss() <= 1.0
    # the profile of the grid Laplace: 0 at its certified loss, positive below
    from bndp.verify import privacy_profile
    assert privacy_profile(m, m.privacy_loss()) == 0.0
    assert 0 < privacy_profile(m, 0.5) < 1


def test_sampler_time_does_not_branch_on_the_value():
    """The kernel's search visits a fixed number of table entries: same draws for the same
    uniforms whatever the lane mix (a block of 8 equals 8 single draws)."""
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=120.0)
    q = np.array([0.0, 120.0, 60.0, 1.0, 119.0, 30.0, 0.0, 77.0, 5.0])
    a = m.sample(q, rng=9)
    g = np.random.Generator(np.random.PCG64(9))
    b = [m.sample(float(v), rng=g) for v in q]
    # one draw per row in order from one stream: equal when no lane alters another's draw
    assert np.array_equal(a, b)


def test_rounding_sensitivity_bound():
    """Inputs at most dq apart land at most dk grid steps apart (ties included)."""
    m = bndp.BoundedLaplace(1.0, sensitivity=0.75, lower=-3.0, upper=4.0, mode=None)
    plan = m.exact_plan
    g = plan.gamma
    r = np.random.default_rng(4)
    q = r.uniform(-3.5, 4.5, 200_000)
    # adversarial: start on a tie, move by exactly dq
    q[:1000] = (np.floor(q[:1000] / g) + 0.5) * g
    q2 = q + 0.75 * r.choice([-1.0, 1.0, r.uniform(-1, 1)], size=q.size)
    q2[:1000] = q[:1000] + 0.75
    a = plan.index(np.clip(q, -3.0, 4.0))
    b = plan.index(np.clip(q2, -3.0, 4.0))
    assert np.abs(a - b).max() <= plan.dk
    assert plan.dk == math.ceil(0.75 / g)
    # index: nearest grid point, ties up, clipped into the grid
    probe = np.array([0.5 * g, 1.49 * g, -0.5 * g, -3.0, 4.0])
    assert plan.index(probe).tolist() == [
        min(max(math.floor((Fraction(v) + 3) / Fraction(g) + Fraction(1, 2)), 0), plan.n)
        for v in probe]


def test_output_support_does_not_depend_on_input():
    m = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=3.0, mode=None)
    plan = m.exact_plan
    for v in (0.0, 1.0, 3.0):
        assert (plan.pmf(v) > 0).all()



# --- a Mironov-style attack ----------------------------------------------------------------

def _textbook_laplace(q, b, n, rng):
    # the textbook sampler: a 53-bit uniform u in (0, 1], sign bit, q + sign * b * (-log u)
    k = rng.integers(1, 2**53, size=n, endpoint=True)
    s = rng.integers(0, 2, size=n) * 2.0 - 1.0
    return q + s * (-b * np.log(k * 2.0**-53))


def _attainable_textbook(y, q, b):
    """Can the textbook sampler with input q output exactly y? (binary search over the
    2^53 values of u for each sign: the output is monotone in u)."""
    y = np.asarray(y, dtype=np.float64)
    hit = np.zeros(y.shape, bool)
    for s in (1.0, -1.0):
        lo = np.ones(y.shape, np.int64)
        hi = np.full(y.shape, 2**53, np.int64)

        def f(k):
            return q + s * (-b * np.log(k * 2.0**-53))
        # s = +1: f decreasing in k; find the smallest k with f(k) <= y (resp. >= y)
        for _ in range(55):
            mid = (lo + hi) // 2
            fm = f(mid)
            go_left = fm <= y if s > 0 else fm >= y
            hi = np.where(go_left, mid, hi)
            lo = np.where(go_left, lo, mid + 1)
        hit |= f(lo) == y
    return hit


def test_mironov_attack_breaks_textbook_laplace():
    rng = np.random.default_rng(12)
    b, q0, q1 = 1.0, 0.0, 1.0                       # sensitivity 1, epsilon 1
    y0 = _textbook_laplace(q0, b, 3000, rng)
    y1 = _textbook_laplace(q1, b, 3000, rng)
    assert _attainable_textbook(y1, q1, b).all()    # the attainability test is exact
    from_q0_only = ~_attainable_textbook(y0, q1, b)
    # An output that q1 cannot produce identifies q0 with certainty: an event of positive
    # probability under q0 and probability 0 under q1, i.e. an infinite privacy loss.
    assert from_q0_only.mean() > 0.3


def test_continuous_mode_support_depends_on_input():
    """What the continuous mode does not protect against: its attainable doubles depend on
    the input. For q1 = 1 every output in (0, 1/2) is 1 + eta with eta in (-1, -1/2), an
    exact sum (Sterbenz) and so a multiple of 2^-53; from q0 = 0 the outputs there are
    arbitrary doubles, and any that is not a multiple of 2^-53 reveals q0 with certainty."""
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=-10.0, upper=10.0, mode="continuous")
    y0 = m.sample(0.0, size=200_000, rng=15)
    y1 = m.sample(1.0, size=200_000, rng=16)
    win0 = y0[(y0 > 0) & (y0 < 0.5)]
    win1 = y1[(y1 > 0) & (y1 < 0.5)]
    assert win1.size > 1000 and win0.size > 1000

    def off_lattice(y):
        return np.ldexp(y, 53) != np.floor(np.ldexp(y, 53))

    assert not off_lattice(win1).any()
    assert off_lattice(win0).mean() > 0.5          # measured: 0.68


@pytest.mark.parametrize("mode", ["exact", None])
def test_mironov_attack_fails_on_the_default(mode):
    m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=-20.0, upper=20.0, mode=mode)
    plan = m.exact_plan
    q0, q1 = 0.0, 1.0
    y0 = m.sample(q0, size=200_000, rng=13)
    # attainable from q1: exactly the grid points with positive probability under q1
    j = (y0 - plan.lower) / plan.gamma
    on_grid = (j == np.rint(j)) & (j >= 0) & (j <= plan.n)
    assert on_grid.all()
    p1 = plan.pmf(q1)
    assert (p1[j.astype(np.int64)] > 0).all()       # nothing identifies q0 with certainty
    # and every output's likelihood ratio is within the certified bound
    p0 = plan.pmf(q0)
    ratio = np.log(p0 / p1)
    assert np.abs(ratio).max() <= plan.certified_epsilon
    # empirical check on the most telling outputs (the lower tail, where the ratio peaks)
    ju = j.astype(np.int64)
    y1 = m.sample(q1, size=200_000, rng=14)
    j1 = ((y1 - plan.lower) / plan.gamma).astype(np.int64)
    cut = int(np.searchsorted(np.cumsum(p0), 0.2))
    f0 = (ju <= cut).mean()
    f1 = (j1 <= cut).mean()
    assert f0 / f1 <= math.exp(plan.certified_epsilon) * 1.05



# --- threads, portability ------------------------------------------------------------------

def test_exact_mode_threads_share_a_generator():
    m = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode=None)
    g = np.random.Generator(np.random.PCG64(77))
    ref_g = np.random.Generator(np.random.PCG64(77))
    q = np.linspace(0.0, 10.0, 300)
    blocks: list = []
    lock = threading.Lock()
    barrier = threading.Barrier(8)

    def work():
        barrier.wait()
        for _ in range(10):
            x = m.sample(q, rng=g)
            with lock:
                blocks.append(x.tobytes())

    ts = [threading.Thread(target=work) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    ref = sorted(m.sample(q, rng=ref_g).tobytes() for _ in range(80))
    assert sorted(blocks) == ref


def test_portable_128bit_fallback_matches_native(tmp_path):
    """The exact kernels' 128-bit helpers have a portable C path for compilers without
    unsigned __int128 (MSVC); compile it here and compare it with the native one."""
    import re
    import shutil
    import subprocess

    cc = shutil.which("cc") or shutil.which("gcc")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    pxi = os.path.join(root, "src", "bndp", "_core", "common.pxd")
    if cc is None or not os.path.exists(pxi):
        pytest.skip("needs a C compiler and the source tree")
    text = open(pxi).read()
    start = text.index("    #else\n    static inline uint64_t bndp_mul128")
    portable = text[start:text.index("    #endif\n    \"\"\"", start)]
    portable = re.sub(r"^    ", "", portable.replace("#else\n", "", 1), flags=re.M)
    portable = portable.replace("#endif\n", "")
    harness = "#include <stdint.h>\n#include <stdio.h>\n" + portable + r'''
static uint64_t s = 88172645463325252ULL;
static uint64_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }
int main(void) {
    long bad = 0;
    for (long i = 0; i < 2000000; i++) {
        uint64_t a = rnd() >> (rnd() % 64), b = rnd() >> (rnd() % 64), lo;
        uint64_t hi = bndp_mul128(a, b, &lo);
        unsigned __int128 m = (unsigned __int128)a * b;
        if (hi != (uint64_t)(m >> 64) || lo != (uint64_t)m) bad++;
        uint64_t d = rnd() >> (rnd() % 64), nh = rnd() >> (rnd() % 64), nl = rnd(), qh, ql, r;
        if (!d) d = 1;
        if (i == 0) { d = ~0ULL; nh = ~0ULL; nl = ~0ULL; }
        bndp_divmod128(nh, nl, d, &qh, &ql, &r);
        unsigned __int128 n = ((unsigned __int128)nh << 64) | nl, q = n / d;
        if (qh != (uint64_t)(q >> 64) || ql != (uint64_t)q || r != (uint64_t)(n - q * d)) bad++;
    }
    printf("%ld\n", bad);
    return bad != 0;
}
'''
    src = tmp_path / "u128.c"
    src.write_text(harness)
    exe = tmp_path / "u128"
    r = subprocess.run([cc, "-O2", str(src), "-o", str(exe)], capture_output=True, text=True)
    if r.returncode != 0 and "__int128" in r.stderr:
        pytest.skip("the native reference needs unsigned __int128")
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "0", r.stdout + r.stderr


def _search_variants():
    out = [1]
    for v in (2,):
        try:
            old = _testing.gd_search_variant(v)
            _testing.gd_search_variant(old)
            out.append(v)
        except ValueError:
            pass
    return out


@pytest.mark.parametrize("levels", range(1, 10))
def test_table_search_is_searchsorted_on_every_variant(levels):
    """The constant-time table search (portable, and AVX2 where the CPU has it) returns
    k with cum[k] <= T < cum[k + 1] for every target, tables of every depth, boundaries
    included: the same integer inverse CDF whichever implementation runs."""
    rng = np.random.default_rng(levels)
    m = int(rng.integers(4 ** (levels - 1) + 1, 4 ** levels + 1)) if levels > 1 else 3
    w = rng.integers(1, 1 << 40, m - 1, dtype=np.uint64)
    w[rng.integers(0, m - 1, 3)] = 1                            # adjacent entries 1 apart
    cum = np.concatenate(([0], np.cumsum(w))).astype(np.uint64)
    assert int(cum[-1]) < 1 << 58
    tree, lv = exact.search_tree(cum)
    assert lv == levels and np.array_equal(tree[:m], cum)
    assert tree.ctypes.data % 64 == 0
    t = np.concatenate((cum[:-1], cum[1:] - 1, [cum[-1] - 1],
                        rng.integers(0, int(cum[-1]), 3000, dtype=np.uint64))).astype(np.uint64)
    ref = np.searchsorted(cum, t, side="right") - 1
    old = _testing.gd_search_variant()
    try:
        for v in _search_variants():
            _testing.gd_search_variant(v)
            assert np.array_equal(_testing.gd_search(tree, levels, t), ref), v
    finally:
        _testing.gd_search_variant(old)


def test_draws_identical_on_every_search_variant():
    """A seed gives the same grid draws whichever search implementation the CPU picks."""
    variants = _search_variants()
    if len(variants) < 2:
        pytest.skip("one search implementation on this machine")
    cases = [bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0,
                                 upper=120.0), bndp.BoundedGaussian(0.5, sensitivity=2.0,
                                 lower=-5.0, upper=50.0),
             bndp.BoundedLaplace(2.0, sensitivity=1.0, lower=0.0, upper=3000.0),
             bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=[0.0, -1.0], upper=[120.0, 1.0])]
    old = _testing.gd_search_variant()
    try:
        for m in cases:
            q = np.random.default_rng(1).uniform(-1.0, 130.0, (2001,) + np.shape(m.lower))
            outs = []
            for v in variants:
                _testing.gd_search_variant(v)
                outs.append((m.sample(q, rng=3).tobytes(), m.sample(q[0], size=77, rng=4).tobytes()))
            assert all(o == outs[0] for o in outs[1:])
    finally:
        _testing.gd_search_variant(old)


def test_table_search_builds_without_simd(tmp_path):
    """_grid_search.h compiles without its x86 path (BNDP_NO_CLONES, as on other CPUs or
    compilers) and with it, and every build finds the same entries as a linear scan."""
    import shutil
    import subprocess

    cc = shutil.which("cc") or shutil.which("gcc")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    inc = os.path.join(root, "src", "bndp")
    if cc is None or not os.path.exists(os.path.join(inc, "_grid_search.h")):
        pytest.skip("needs a C compiler and the source tree")
    harness = r'''
#include "_grid_search.h"
#include <stdio.h>
#include <stdlib.h>
static uint64_t s = 88172645463325252ULL;
static uint64_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }
int main(void) {
    long bad = 0;
    for (int levels = 1; levels <= 8; levels++) {
        size_t leaf = (size_t)1 << (2 * levels), m = leaf - rnd() % (leaf / 2 + 1), k, j;
        uint64_t *tree = malloc(bndp_gd_table_size(levels) * sizeof(uint64_t));
        uint64_t t[BNDP_GD_LANES];
        int64_t pos[BNDP_GD_LANES];
        if (m < 2) m = 2;
        tree[0] = 0;
        for (k = 1; k < m; k++) tree[k] = tree[k - 1] + 1 + rnd() % 1000000;
        for (k = m; k < leaf; k++) tree[k] = BNDP_GD_PAD;
        for (int l = 0; l < levels - 1; l++)
            for (j = 0; j < ((size_t)4 << (2 * l)); j++)
                tree[bndp_gd_level_offset(levels, l) + j] = tree[j << (2 * (levels - 1 - l))];
        for (int rep = 0; rep < 2000; rep++) {
            for (int r = 0; r < BNDP_GD_LANES; r++) t[r] = rnd() % tree[m - 1];
            bndp_gd_search(tree, levels, t, pos);
            for (int r = 0; r < BNDP_GD_LANES; r++) {
                for (k = 0; tree[k + 1] <= t[r]; k++) ;
                bad += pos[r] != (int64_t)k;
            }
        }
        free(tree);
    }
    printf("%ld\n", bad);
    return bad != 0;
}
'''
    src = tmp_path / "search.c"
    src.write_text(harness)
    for name, flags in {"portable": ["-O2", "-DBNDP_NO_CLONES"], "dispatch": ["-O2"]}.items():
        exe = tmp_path / name
        r = subprocess.run([cc, *flags, "-I", inc, str(src), "-o", str(exe)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and r.stdout.strip() == "0", name + r.stdout + r.stderr


def _index_probes(e, kl, n, rng):
    """Values around every kind of rounding decision of the grid index."""
    g = math.ldexp(1.0, e)
    k = np.concatenate((rng.integers(kl - 3, kl + n + 4, 400), [kl, kl + n, kl - 1, kl + n + 1]))
    ties = (k.astype(np.float64) + 0.5) * g
    grid = k.astype(np.float64) * g
    near = np.concatenate([np.nextafter(v, s) for v in (ties, grid) for s in (-np.inf, np.inf)])
    wide = rng.uniform((kl - 2 * n - 5) * g, (kl + 3 * n + 5) * g, 2000)
    special = [0.0, -0.0, 5e-324, -5e-324, 1e300, -1e300, math.inf, -math.inf, math.nan]
    return np.concatenate((ties, grid, near, wide, special))


@pytest.mark.parametrize("e,kl,n", [(-4, 0, 1920), (-4, -960, 1920), (0, -5, 10), (-10, 3, 7),
                                    (-60, 2 ** 52 - 100, 50), (-1, -(2 ** 53 - 20), 9),
                                    (2, 2 ** 51 - 5, 1000), (-1000, -7, 100)])
def test_block_grid_index_equals_the_scalar_one(e, kl, n):
    """The vectorised grid index of the per-row sampler (_simd.h) gives the same integers as
    the scalar one (nearest grid point, ties up, clipped), at ties, next to them, beyond the
    bounds, for grids far from 0 (|k| near 2^52 and 2^53) and for non-finite values."""
    q = _index_probes(e, kl, n, np.random.default_rng(n))
    ref = _grid.gd_index(q, e, kl, n)
    blk = _testing.gd_index_block(q, e, kl, n)
    assert np.array_equal(ref, blk.astype(np.int64))
    assert blk.min() >= 0 and blk.max() <= n


def test_block_grid_index_same_bits_on_every_instruction_set(tmp_path):
    """bndp_gd_index_pass and bndp_gd_out_pass are compiled for AVX-512, AVX2 and the
    baseline: build each alone
    (BNDP_NO_CLONES) and unvectorised at -O0, run them on the same values, compare bytes."""
    import hashlib
    import platform
    import shutil
    import subprocess

    cc = shutil.which("cc") or shutil.which("gcc")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    inc = os.path.join(root, "src", "bndp")
    if cc is None or not os.path.exists(os.path.join(inc, "_simd.h")):
        pytest.skip("needs a C compiler and the source tree")
    harness = r'''
#include "_simd.h"
#include <stdio.h>
static uint64_t st = 88172645463325252ULL;
static uint64_t rnd(void) { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return st; }
int main(void) {
    double q[37];
    int32_t j[37], idx[37];
    int64_t pos[37];
    for (int rep = 0; rep < 20000; rep++) {
        int e = (int)(rnd() % 80) - 60, m = 1 + (int)(rnd() % 37);
        double n = (double)(1 + rnd() % 5000), g = ldexp(1.0, e);
        double lo = (double)((int64_t)(rnd() % 4000000) - 2000000);
        if (rep % 7 == 0) lo = ldexp(1.0, 52) - (double)(rnd() % 100);
        if (rep % 11 == 0) lo = -ldexp(1.0, 53) + 1.0 + (double)(rnd() % 100);
        for (int k = 0; k < m; k++) {
            double v = (lo - 5.0 + (double)(rnd() % (uint64_t)(n + 10.0))) * g;
            switch (rnd() % 5) {
            case 0: q[k] = v + 0.5 * g; break;                      /* a tie */
            case 1: q[k] = nextafter(v + 0.5 * g, (rnd() & 1) ? 1e308 : -1e308); break;
            case 2: q[k] = v + g * ldexp((double)(rnd() >> 11), -53); break;
            case 3: q[k] = (rnd() & 1 ? 1.0 : -1.0) * ldexp((double)(rnd() >> 11), (int)(rnd() % 200) - 100); break;
            default: q[k] = v;
            }
        }
        bndp_gd_index_pass(q, m, ldexp(1.0, -e), lo, lo + n, j);
        fwrite(j, sizeof(int32_t), (size_t)m, stdout);
        /* the released values of a block: (lo + pos - n + idx) 2^e */
        for (int k = 0; k < m; k++) {
            idx[k] = (int32_t)(rnd() % ((uint64_t)n + 1));
            pos[k] = (int64_t)n - idx[k] + (int64_t)(rnd() % ((uint64_t)n + 1));
        }
        bndp_gd_out_pass(pos, idx, m, (int64_t)n, lo, g, q);
        fwrite(q, sizeof(double), (size_t)m, stdout);
    }
    return 0;
}
'''
    src = tmp_path / "gdindex.c"
    src.write_text(harness)
    base = ["-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off", "-DBNDP_NO_CLONES",
            "-I", inc]
    variants = {"reference -O0": ["-O0"], "baseline -O3": ["-O3"]}
    if platform.machine() in ("x86_64", "AMD64"):
        variants["avx2"] = ["-O3", "-mavx2"]
        variants["avx512f"] = ["-O3", "-mavx512f"]
    digests = {}
    for name, flags in variants.items():
        exe = tmp_path / name.replace(" ", "_")
        r = subprocess.run([cc, *flags, *base, str(src), "-o", str(exe), "-lm"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        if name in ("avx2", "avx512f"):
            if not os.path.exists("/proc/cpuinfo"):
                continue
            with open("/proc/cpuinfo") as f:
                if name not in f.read().split():
                    continue
        r = subprocess.run([str(exe)], capture_output=True, timeout=60)
        assert r.returncode == 0
        digests[name] = hashlib.sha256(r.stdout).hexdigest()
    assert len(set(digests.values())) == 1, digests
