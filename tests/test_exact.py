"""Exact mode: integer-only discrete samplers, exhaustive certificate, floating-point attack."""

from __future__ import annotations

import math
import os
import threading

import mpmath
import numpy as np
import pytest
from scipy import special, stats

import bndp
from bndp import _core
from bndp.mechanisms import exact

FULL = os.environ.get("BNDP_FULL") == "1"
LAP, GAU = 0, 1


def _pmf(fam, s, n, i):
    j = np.arange(n + 1, dtype=np.float64)
    lw = -np.abs(j - i) / s if fam == LAP else -((j - i) ** 2) / (2.0 * s)
    w = np.exp(lw - lw.max())
    return w / w.sum()


def _chi2_pvalue(counts, probs, min_expected=5.0):
    """Pearson chi-square, adjacent cells merged until each expects >= min_expected."""
    total = counts.sum()
    exp_c = probs * total
    obs, ex = [], []
    co = ce = 0.0
    for c, e in zip(counts, exp_c):
        co += c
        ce += e
        if ce >= min_expected:
            obs.append(co)
            ex.append(ce)
            co = ce = 0.0
    if ce > 0 and ex:
        obs[-1] += co
        ex[-1] += ce
    obs, ex = np.array(obs), np.array(ex)
    chi = ((obs - ex) ** 2 / ex).sum()
    return stats.chi2.sf(chi, len(ex) - 1)


# --- the exact samplers match their PMFs ---------------------------------------------------

# (family, integer scale, n, input index): both proposal regimes of both families
# (Laplace: uniform proposal when n < t; Gaussian: uniform proposal when n^2 <= s).
KERNEL_CASES = [
    (LAP, 20, 50, 3),      # discrete-Laplace proposal, input near the edge
    (LAP, 7, 60, 30),      # centre, narrow kernel
    (LAP, 1, 12, 0),       # t = 1
    (LAP, 30, 10, 2),      # uniform proposal (n < t)
    (GAU, 25, 40, 0),      # CKS Alg. 3 proposal, input at the edge
    (GAU, 9, 100, 50),     # centre
    (GAU, 2, 30, 29),      # s = 2 (tg = 2)
    (GAU, 400, 12, 5),     # uniform proposal (n^2 <= s)
]


@pytest.mark.parametrize("fam,s,n,i", KERNEL_CASES)
def test_kernel_matches_pmf_chi_square(fam, s, n, i):
    g = np.random.Generator(np.random.PCG64(1000 + 7 * s + n + i))
    out = np.empty(200_000)
    _core.ex_fill(g, fam, float(i), n, s, 0, 1.0, out)
    j = out.astype(np.int64)
    assert np.array_equal(j, out) and j.min() >= 0 and j.max() <= n
    p = _chi2_pvalue(np.bincount(j, minlength=n + 1), _pmf(fam, s, n, i))
    assert p > 1e-4


@pytest.mark.parametrize("fam,s,n,i", [(LAP, 3, 40, 20), (GAU, 16, 40, 3)])
def test_kernel_chi_square_detects_a_wrong_law(fam, s, n, i):
    # the statistic has power: the same samples against the law with a 10 % larger scale
    g = np.random.Generator(np.random.PCG64(5))
    out = np.empty(200_000)
    _core.ex_fill(g, fam, float(i), n, s, 0, 1.0, out)
    counts = np.bincount(out.astype(np.int64), minlength=n + 1)
    wrong = _pmf(fam, s * 1.1 if fam == LAP else s * 1.21, n, i)
    assert _chi2_pvalue(counts, wrong) < 1e-6


def test_discrete_laplace_and_gaussian_tails_from_large_scales():
    # large integer scales (as produced by calibration): mean and variance of the index
    g = np.random.Generator(np.random.PCG64(9))
    n, i = 200_000, 100_000
    for fam, s, var in [(LAP, 1650, 2 * 1650.0**2), (GAU, 7_977_911, 7_977_911.0)]:
        out = np.empty(100_000)
        _core.ex_fill(g, fam, float(i), n, s, 0, 1.0, out)
        z = out - i
        assert abs(z.mean()) < 5 * math.sqrt(var / out.size)
        assert abs(z.var() / var - 1) < 0.03


def _fixed_gen(kind):
    randomgen = pytest.importorskip("randomgen")
    if kind == "pcg64":
        return np.random.Generator(np.random.PCG64(11))
    if kind == "aes":
        return np.random.Generator(randomgen.AESCounter(key=11, counter=3))
    return np.random.Generator(randomgen.ChaCha(key=11, rounds=20))


@pytest.mark.parametrize("kind", ["pcg64", "aes", "chacha"])
@pytest.mark.parametrize("mode_args", [
    ("laplace", dict(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=1.0)),
    ("gaussian", dict(epsilon=1.0, sensitivity=0.5, lower=-1.0, upper=1.0)),
])
def test_mechanism_matches_plan_pmf(mode_args, kind):
    family, kw = mode_args
    cls = bndp.BoundedLaplace if family == "laplace" else bndp.BoundedGaussian
    m = cls(**kw, mode="exact")
    plan = m.exact_plan
    value = kw["lower"] + 0.3 * (kw["upper"] - kw["lower"])
    x = m.sample(value, size=300_000, rng=_fixed_gen(kind))
    grid = plan.grid()
    j = np.rint(np.ldexp(x, -plan.exponent)).astype(np.int64) - plan.kl
    assert np.array_equal(grid[j], x)                      # every output is a grid point
    p = _chi2_pvalue(np.bincount(j, minlength=plan.n + 1), plan.pmf(value))
    assert p > 1e-4


# --- the certificate -----------------------------------------------------------------------

def _brute_loss(fam, s, n, dk):
    """max over all grid inputs |i - i'| <= dk and ALL outputs j of the log PMF ratio."""
    j = np.arange(n + 1, dtype=np.float64)
    rows = []
    for i in range(n + 1):
        lw = -np.abs(j - i) / s if fam == LAP else -((j - i) ** 2) / (2.0 * s)
        rows.append(lw - special.logsumexp(lw))             # log PMF, no underflow
    L = np.array(rows)
    best = 0.0
    for i in range(n + 1):
        for k in range(max(0, i - dk), min(n, i + dk) + 1):
            best = max(best, float((L[i] - L[k]).max()))
    return best


def _mp_loss(fam, s, n, dk):
    mpmath.mp.dps = 40
    rows = []
    for i in range(n + 1):
        w = [mpmath.exp(-abs(j - i) / mpmath.mpf(s)) if fam == LAP
             else mpmath.exp(-mpmath.mpf((j - i) ** 2) / (2 * s)) for j in range(n + 1)]
        z = mpmath.fsum(w)
        rows.append([mpmath.log(v / z) for v in w])
    best = mpmath.mpf(0)
    for i in range(n + 1):
        for k in range(max(0, i - dk), min(n, i + dk) + 1):
            for j in (0, n):
                best = max(best, rows[i][j] - rows[k][j])
    return best


@pytest.mark.parametrize("fam,s,n,dk", [
    (LAP, 20, 50, 3), (LAP, 7, 30, 5), (LAP, 100, 20, 20), (LAP, 1, 15, 1),
    (GAU, 25, 40, 4), (GAU, 100, 60, 10), (GAU, 3, 25, 2), (GAU, 1000, 30, 30),
    # wide grids whose interior normaliser is the saturated constant (copied, not recomputed)
    (LAP, 1, 120, 2), (GAU, 2, 150, 3),
])
def test_certificate_is_the_exhaustive_maximum(fam, s, n, dk):
    cert = exact.certify("laplace" if fam == LAP else "gaussian", s, n, dk)
    brute = _brute_loss(fam, s, n, dk)
    ref = float(_mp_loss(fam, s, n, dk))
    assert abs(brute - ref) < 1e-11                       # max over j sits at j in {0, n}
    assert ref < cert <= ref * (1 + 1e-12) + 1e-9 + 1e-11 * (1 + ref)   # margin, no more


def _random_configs(k, seed):
    r = np.random.default_rng(seed)
    out = []
    for _ in range(k):
        eps = float(np.exp(r.uniform(np.log(0.05), np.log(3.0))))
        dq = float(np.exp(r.uniform(np.log(0.1), np.log(10.0))))
        lo = float(r.uniform(-50, 50))
        width = dq * float(np.exp(r.uniform(np.log(1.0), np.log(200.0))))
        out.append((eps, dq, lo, lo + width))
    return out


def _check_calibrated(m, target):
    plan = m.exact_plan
    fam = plan.family
    assert plan.certified_epsilon <= target
    # the stored certificate is reproduced by an independent exhaustive evaluation ...
    assert exact.certify(fam, plan.scale_int, plan.n, plan.dk) == pytest.approx(
        plan.certified_epsilon, rel=1e-12, abs=1e-15)
    # ... and the calibration is tight: the next smaller integer scale (or one step of the
    # 1/4096 ladder) is not certified
    smaller = plan.scale_int - max(1, plan.scale_int >> 12)
    assert exact.certify(fam, smaller, plan.n, plan.dk) > target
    assert m.privacy_loss() == plan.certified_epsilon


@pytest.mark.parametrize("cfg", _random_configs(6, 1))
def test_certified_epsilon_at_most_target_laplace(cfg):
    eps, dq, lo, hi = cfg
    m = bndp.BoundedLaplace(eps, dq, lo, hi, mode="exact")
    _check_calibrated(m, eps)


@pytest.mark.parametrize("cfg", _random_configs(6, 2))
def test_certified_epsilon_at_most_target_gaussian(cfg):
    eps, dq, lo, hi = cfg
    m = bndp.BoundedGaussian(eps, dq, lo, hi, mode="exact")
    _check_calibrated(m, eps)


@pytest.mark.slow
def test_certified_epsilon_sweep():
    k = 40 if FULL else 8
    for cfg in _random_configs(k, 3):
        eps, dq, lo, hi = cfg
        _check_calibrated(bndp.BoundedLaplace(eps, dq, lo, hi, mode="exact"), eps)
        _check_calibrated(bndp.BoundedGaussian(eps, dq, lo, hi, mode="exact"), eps)


def test_laplace_delta_target():
    m = bndp.BoundedLaplace(0.5, 1.0, 0.0, 5.0, delta=0.1, mode="exact")
    target = 0.5 - math.log1p(-0.1)
    assert m.exact_plan.target == target
    _check_calibrated(m, target)


def test_exact_laplace_scale_close_to_continuous():
    # the discrete bounded Laplace needs about the continuous b* (Holohan et al.): within 0.5 %
    for args in [(1.0, 1.0, 0.0, 10.0), (0.1, 1.0, 0.0, 100.0), (2.0, 0.5, -1.0, 3.0)]:
        ex = bndp.BoundedLaplace(*args, mode="exact").scale
        co = bndp.BoundedLaplace(*args).scale
        assert abs(ex / co - 1) < 5e-3


def test_exact_gaussian_sigma_matches_tight_continuous_calibration():
    # Two independent computations: the exhaustive certificate of the discrete mechanism on
    # a fine grid and the continuous tight calibration (calibration="tight") agree to
    # within 0.05 % (measured: 2e-5 to 1.3e-4); both are far below Chen-Hale's sigma*.
    for args in [(1.0, 1.0, 0.0, 10.0), (0.1, 1.0, 0.0, 100.0), (2.0, 0.5, -1.0, 3.0)]:
        ex = bndp.BoundedGaussian(*args, mode="exact").sigma
        tight = bndp.BoundedGaussian(*args, calibration="tight").sigma
        assert abs(ex / tight - 1) < 5e-4
        assert ex < 0.9 * bndp.BoundedGaussian(*args).sigma


# --- rounding to the grid ------------------------------------------------------------------

def test_rounding_sensitivity_bound():
    """Inputs at most dq apart land at most dk grid steps apart (ties included)."""
    m = bndp.BoundedLaplace(1.0, 0.75, -3.0, 4.0, mode="exact")
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
    assert plan.index(np.array([0.5 * g, 1.49 * g, -0.5 * g, -3.0, 4.0])).tolist() == [
        1 - plan.kl, 1 - plan.kl, 0 - plan.kl, 0, plan.n]


def test_output_support_does_not_depend_on_input():
    m = bndp.BoundedGaussian(1.0, 1.0, 0.0, 3.0, mode="exact")
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
    m = bndp.BoundedLaplace(1.0, 1.0, -10.0, 10.0)
    y0 = m.sample(0.0, size=200_000, rng=15)
    y1 = m.sample(1.0, size=200_000, rng=16)
    win0 = y0[(y0 > 0) & (y0 < 0.5)]
    win1 = y1[(y1 > 0) & (y1 < 0.5)]
    assert win1.size > 1000 and win0.size > 1000

    def off_lattice(y):
        return np.ldexp(y, 53) != np.floor(np.ldexp(y, 53))

    assert not off_lattice(win1).any()
    assert off_lattice(win0).mean() > 0.5          # measured: 0.68


def test_mironov_attack_fails_on_exact_mode():
    m = bndp.BoundedLaplace(1.0, 1.0, -20.0, 20.0, mode="exact")
    plan = m.exact_plan
    q0, q1 = 0.0, 1.0
    y0 = m.sample(q0, size=200_000, rng=13)
    # attainable from q1: exactly the grid points with positive probability under q1
    j = np.ldexp(y0, -plan.exponent) - plan.kl
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
    j1 = (np.ldexp(y1, -plan.exponent) - plan.kl).astype(np.int64)
    cut = int(np.searchsorted(np.cumsum(p0), 0.2))
    f0 = (ju <= cut).mean()
    f1 = (j1 <= cut).mean()
    assert f0 / f1 <= math.exp(plan.certified_epsilon) * 1.05


# --- API ------------------------------------------------------------------------------------

def test_api_and_errors():
    m = bndp.BoundedLaplace(1.0, 1.0, 0.0, 10.0, mode="exact")
    assert repr(m) == ("BoundedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0, "
                       "delta=0.0, mode='exact')")
    assert eval("bndp." + repr(m)) == m
    assert repr(bndp.BoundedLaplace(1.0, 1.0, 0.0, 10.0)).endswith("delta=0.0)")
    assert m != bndp.BoundedLaplace(1.0, 1.0, 0.0, 10.0)
    assert isinstance(m.sample(2.0, rng=1), float)
    assert m.sample([1.0, 2.0], size=(3, 2), rng=1).shape == (3, 2)
    assert np.array_equal(m.sample(np.arange(5.0), rng=3), m.sample(np.arange(5.0), rng=3))
    with pytest.raises(ValueError, match="outside"):
        m.sample(11.0, on_outside="raise")
    assert m.sample(1e9, rng=1) <= 10.0
    with pytest.raises(NotImplementedError, match="pmf"):
        m.pdf(1.0, 2.0)
    with pytest.raises(NotImplementedError):
        m.variance(2.0)
    with pytest.raises(ValueError, match="`mode`"):
        bndp.BoundedLaplace(1.0, 1.0, 0.0, 10.0, mode="fast")
    with pytest.raises(ValueError, match="univariate"):
        bndp.BoundedGaussian(1.0, 1.0, [0.0, 0.0], [1.0, 1.0], mode="exact")
    gm = bndp.BoundedGaussian(1.0, 1.0, 0.0, 10.0, mode="exact")
    assert gm.sigma == gm.exact_plan.scale and gm.exact_plan.certified_epsilon <= 1.0
    with pytest.raises(NotImplementedError):
        gm.cdf(1.0, 2.0)
    with pytest.raises(ValueError, match="2\\^53"):
        bndp.BoundedLaplace(1.0, 1e-6, 1e12, 1e12 + 1.0, mode="exact")


def test_exact_mode_threads_share_a_generator():
    m = bndp.BoundedGaussian(1.0, 1.0, 0.0, 10.0, mode="exact")
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
    pxi = os.path.join(root, "src", "bndp", "_core_exact.pxi")
    if cc is None or not os.path.exists(pxi):
        pytest.skip("needs a C compiler and the source tree")
    text = open(pxi).read()
    portable = text[text.index("    #else\n    static inline uint64_t bndp_mul128"):
                    text.index("    #endif\n    \"\"\"")]
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
