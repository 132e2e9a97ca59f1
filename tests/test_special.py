"""The self-written inverse normal CDF (AS 241 split into central/tail parts) against SciPy
and mpmath, to a few ulps."""

import numpy as np
import pytest
from scipy import special

from bndp._core import fill as _fill, laws as _laws, special as _special, testing as _testing

mpmath = pytest.importorskip("mpmath")

ULP = np.finfo(float).eps


def _mp_quantile_central(q):
    return float(mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(q)))


def _mp_quantile_log(logt):
    with mpmath.workdps(50):
        f = lambda t: mpmath.log(mpmath.ncdf(t)) - logt  # noqa: E731
        x0 = special.ndtri_exp(logt)
        return float(mpmath.findroot(f, x0))


def test_central_branch_matches_mpmath_to_few_ulps():
    rng = np.random.default_rng(0)
    qs = np.concatenate([rng.uniform(-0.425, 0.425, 300), 10.0 ** rng.uniform(-300, -0.4, 100),
                         -(10.0 ** rng.uniform(-300, -0.4, 100))])
    with mpmath.workdps(40):
        worst = max(abs(_testing.ndtri_central(q) - _mp_quantile_central(q)) /
                    abs(_mp_quantile_central(q)) for q in qs)
    assert worst < 4 * ULP


def test_central_branch_keeps_relative_precision_near_the_median():
    # Phi^-1(1/2 + q) ~ q*sqrt(2 pi) for tiny q: a version taking p = 1/2 + q would return 0
    assert _testing.ndtri_central(1e-300) == pytest.approx(1e-300 * np.sqrt(2 * np.pi), rel=1e-15)
    assert _testing.ndtri_central(0.0) == 0.0


def test_tail_branch_matches_mpmath_to_few_ulps():
    rng = np.random.default_rng(1)
    logts = -np.concatenate([rng.uniform(-np.log(0.5), 740, 150), rng.uniform(740, 6e5, 30),
                             [1e6, 5e5, 1000.0, 745.0]])
    worst = 0.0
    for lt in logts:
        x = _special.ndtri_lower_log(lt)
        ref = _mp_quantile_log(lt)
        worst = max(worst, abs(x - ref) / abs(ref))
    assert worst < 8 * ULP


def test_tail_branch_agrees_with_scipy_where_scipy_is_exact():
    p = np.concatenate([np.logspace(-300, np.log10(0.074), 200), np.linspace(0.08, 0.5, 50)])
    ours = np.array([_special.ndtri_lower_log(np.log(v)) for v in p])
    ref = special.ndtri(p)
    rel = np.abs(ours - ref) / np.maximum(np.abs(ref), 1e-300)
    mask = np.abs(ref) > 1e-3
    assert rel[mask].max() < 8 * ULP
    assert np.abs(ours - ref)[~mask].max() < 1e-16


def test_normal_split_matches_mpmath_to_few_ulps():
    # Phi(z) - 1/2 and Phi(-z) as the sampler's setup computes them (Cody's three rational
    # approximations, branch-free, and libm's erfc beyond z = 37), both relative, densely
    # around the range boundaries 0.66291 and sqrt(32), near 0 and up to the subnormals
    rng = np.random.default_rng(3)
    z = np.concatenate([rng.uniform(0.0, 37.0, 1500), rng.uniform(0.0, 1.0, 400),
                        rng.uniform(0.6, 0.7, 150), rng.uniform(5.6, 5.7, 150),
                        10.0 ** rng.uniform(-12, 0, 150), rng.uniform(36.5, 37.5, 100),
                        [0.0, 0.66291, np.nextafter(0.66291, 1), 5.656854248,
                         np.nextafter(5.656854248, 9), 1e-300, 37.0]])
    worst_t = worst_m = 0.0
    with mpmath.workdps(40):
        for v in z:
            tail = mpmath.ncdf(-mpmath.mpf(v))
            mass = mpmath.erf(mpmath.mpf(v) / mpmath.sqrt(2)) / 2
            m, t = _testing.normal_split(v)
            mv, tv = _testing.normal_split(v, True)          # the block setup's function
            assert t == _testing.normal_tail(v)
            assert mv == m
            if v > 37.0:
                # libm's erfc, whose argument z/sqrt2 is rounded: relative error up to about
                # z^2 ulps (the tail is below 6e-300 there); the block setup returns 0
                assert abs(float((t - tail) / tail)) < 1e-12
                assert m == 0.5 and tv == 0.0
                continue
            assert tv == t
            worst_t = max(worst_t, abs(float((t - tail) / tail)))
            if v == 0.0:
                assert m == 0.0
            else:
                worst_m = max(worst_m, abs(float((m - mass) / mass)))
    assert worst_t < 3 * ULP
    assert worst_m < 3 * ULP
    assert _testing.normal_split(0.0) == (0.0, 0.5)
    assert _testing.normal_split(np.inf) == (0.5, 0.0)


def test_branch_free_exp_matches_mpmath_to_one_ulp():
    # the exponential of the setup's e^(-z^2/2), over its whole domain [-708, 0], densely
    # near 0 and around multiples of ln 2/2 (its reduction boundaries)
    rng = np.random.default_rng(12)
    ln2 = np.log(2.0)
    x = np.concatenate([-rng.uniform(0, 708, 2000), -rng.uniform(0, 2, 500),
                        -(10.0 ** rng.uniform(-20, 0, 300)),
                        -(np.arange(1, 2040) * ln2 / 2)[:2040][::7] * (1 + rng.uniform(-1e-12, 1e-12, 292)),
                        [0.0, -708.0, -684.5]])
    x = x[x >= -708.0]
    worst = 0.0
    with mpmath.workdps(40):
        for v in x:
            ref = mpmath.exp(mpmath.mpf(v))
            worst = max(worst, abs(float((_testing.exp_nonpos_fast(v) - ref) / ref)))
    assert worst < 1.0 * ULP
    assert _testing.exp_nonpos_fast(0.0) == 1.0


# ---------------------------------------------------------------------------------------
# The vectorised sampling loops (src/bndp/_simd.h)
# ---------------------------------------------------------------------------------------

def test_branch_free_log_bounds_the_certificates_rounding():
    # the windowed certificate takes bndp_log of its normalisers (doubles in [2, 2^64),
    # near-integers): docs/grid_laws.rst budgets its error at 1.5 ulps of a term below 64,
    # under 2^-45 absolute
    rng = np.random.default_rng(12)
    x = np.concatenate([2.0 ** rng.uniform(1.0, 64.0, 3000),
                        np.floor(2.0 ** rng.uniform(1.0, 53.0, 1000)), 2.0 ** np.arange(1, 64),
                        np.nextafter(2.0 ** np.arange(2, 64), 0.0)])
    worst = 0.0
    with mpmath.workdps(40):
        for v in x:
            ref = mpmath.log(mpmath.mpf(v))
            got = _testing.log_fast(v)
            err = abs(float(got - ref))
            assert err < 2.0 ** -45, v
            worst = max(worst, err / float(ref))
    assert worst < 1.5 * ULP


def test_branch_free_log_matches_mpmath_to_one_ulp():
    # the logarithm of the truncated-normal sampler's tail branch, over the whole positive
    # normal range and densely where the sampler uses it (tail masses 1e-17 .. 0.075) and
    # around its reduction boundaries (powers of two, sqrt(1/2))
    rng = np.random.default_rng(11)
    x = np.concatenate([10.0 ** rng.uniform(-307, 308, 1500), 10.0 ** rng.uniform(-17, -1.12, 1500),
                        rng.uniform(0.5, 2.0, 500), np.sqrt(0.5) * (1 + rng.uniform(-1e-9, 1e-9, 50)),
                        2.0 ** np.arange(-1020, 1020, 37.0), [1.0, 0.075, np.nextafter(1.0, 0.0)]])
    worst = 0.0
    with mpmath.workdps(40):
        for v in x:
            ref = mpmath.log(mpmath.mpf(v))
            got = _testing.log_fast(v)
            if ref == 0:
                assert got == 0.0
                continue
            worst = max(worst, abs(float((got - ref) / ref)))
    assert worst < 1.5 * ULP


def test_vectorised_block_equals_the_scalar_quantile_bit_for_bit():
    # tn_fill / tn_fill_rows run the branch-free block loops; tn_eval_rows(5, ...) is the
    # sampler's scalar inverse CDF of one entry (ppf, what 2, but for its refined lower
    # end). Fed the same uniforms, (2k + 1) 2^-53 for the 52-bit
    # k = raw >> 12 of each 64-bit output, they must agree exactly, for straddling rows
    # (central and both tails), rows in one tail, and blocks mixing them.
    n = 3000
    raw = np.random.Generator(np.random.PCG64(9)).bit_generator.random_raw(n)
    u = ((raw >> np.uint64(12)).astype(np.float64) + 0.5) * 2.0 ** -52
    cases = [(0.0, 1.0, -2.5, 2.5), (0.0, 1.0, -np.inf, np.inf), (3.0, 0.01, 2.0, 5.0),
             (0.0, 1.0, -40.0, 0.3), (0.0, 1.0, -3.0, -2.0), (0.0, 1.0, 30.0, 31.0),
             (1.0, 1e5, 0.0, 2.0)]
    for loc, scale, lo, hi in cases:
        g = np.random.Generator(np.random.PCG64(9))
        out = np.empty(n)
        _fill.tn_fill(g, loc, scale, lo, hi, out)
        ref = np.empty((1, n))
        full = lambda v: np.full((1, n), v, dtype=float)  # noqa: E731
        _laws.tn_eval_rows(5, u[None, :], full(loc), full(scale), full(lo), full(hi), ref)
        np.testing.assert_array_equal(out, ref[0], err_msg=str((loc, scale, lo, hi)))
    # per-row: every block mixes straddling rows and rows in either tail
    r = np.random.default_rng(4)
    loc = r.uniform(-5, 5, n)
    scale = 10.0 ** r.uniform(-2, 1, n)
    lo = r.uniform(-6, 4, n)
    hi = lo + r.uniform(0.01, 6, n)
    # and an ETL column: ages in [0, 120] with noise scale 2, every row straddling, most with
    # one bound beyond 37 scales (where the block setup's tail mass is 0)
    age = np.round(r.uniform(0, 120, n))
    for loc, scale, lo, hi in [(loc, scale, lo, hi), (age, np.full(n, 2.0), np.zeros(n),
                                                      np.full(n, 120.0))]:
        g = np.random.Generator(np.random.PCG64(9))
        out = np.empty((1, n))
        _fill.tn_fill_rows(g, loc[None], scale[None], lo[None], hi[None], out)
        ref = np.empty((1, n))
        _laws.tn_eval_rows(5, u[None, :], loc[None], scale[None], lo[None], hi[None], ref)
        np.testing.assert_array_equal(out, ref)


def _tn_ppf_reference(p, loc, scale, lo, hi):
    # the truncated normal's quantile in 80-digit arithmetic: x - lo = scale d with
    # Phi(a + d) - Phi(a) = p Z; where r = p Z / phi(a) < 1e-30, d = r - c r^2 / 2 (c = -a;
    # the next terms are below 1e-60 of d)
    mp = pytest.importorskip("mpmath")
    with mp.workdps(80):
        loc, scale, lo, hi, p = (mp.mpf(float(v)) for v in (loc, scale, lo, hi, p))
        a, b = (lo - loc) / scale, (hi - loc) / scale
        Z = mp.ncdf(b) - mp.ncdf(a)
        r = p * Z / mp.npdf(a)
        if r < mp.mpf(10) ** -30:
            return lo + scale * (r + a * r * r / 2)
        return loc + scale * mp.sqrt(2) * mp.erfinv(2 * (mp.ncdf(a) + p * Z) - 1)


@pytest.mark.parametrize("loc, scale, lo, hi", [
    (50.0, 11.369, 0.0, 120.0),       # an age column's noise, straddling: ppf(1e-30) gave 7e-15
    (5.0, 2.0, 0.0, 120.0),
    (0.5, 0.3, 0.0, 1.0),
    (1.0, 1e5, 0.0, 2.0),             # the noise far wider than the range
    (-3.0, 0.7, 0.0, 5.0),            # the range above the mean (one tail, its near end)
    (0.01, 1.0, 0.0, 1.0),
])
def test_ppf_near_the_lower_end_keeps_its_relative_precision(loc, scale, lo, hi):
    # near the lower end loc + scale z cancels (its error about ulp(loc), up to the whole
    # result): the offset from the end is solved directly, to a few ulps of the result
    # where the sampler's quantile (what 5) was off by up to 1e296 of them
    ps = np.array([1e-300, 1e-100, 1e-30, 1e-15, 1e-8, 1e-5, 1e-3, 0.2])
    one = lambda v: np.full((1, ps.size), v, dtype=float)  # noqa: E731
    got, sampler = np.empty((1, ps.size)), np.empty((1, ps.size))
    args = (one(loc), one(scale), one(lo), one(hi))
    _laws.tn_eval_rows(2, ps[None, :], *args, got)
    _laws.tn_eval_rows(5, ps[None, :], *args, sampler)
    worst = worst_sampler = 0.0
    for p, x, xs in zip(ps, got[0], sampler[0]):
        ref = float(_tn_ppf_reference(p, loc, scale, lo, hi))
        worst = max(worst, abs(x - ref) / np.spacing(ref))
        worst_sampler = max(worst_sampler, abs(xs - ref) / np.spacing(ref))
    assert worst <= 16, worst
    assert worst_sampler > 1e3          # the cancellation this fixes is there to fix
    # isf near the upper end: the reflected law's ppf
    q = np.empty((1, ps.size))
    _laws.tn_tail_eval_rows(3, ps[None, :], one(-loc), one(scale), one(-hi), one(-lo), q)
    np.testing.assert_array_equal(q, -got)


def test_vectorised_loops_give_the_same_bits_on_every_instruction_set(tmp_path):
    """The loops of _simd.h, _certify.h and _window.h are compiled for AVX-512, AVX2 and the
    baseline (the loader picks one per CPU). Without multiply-add fusion each performs the
    same IEEE operations, so a seed gives the same draws and certificates everywhere: build
    each variant alone (BNDP_NO_CLONES), and unvectorised at -O0 as the reference, run them
    on the same inputs and compare bytes."""
    import hashlib
    import os
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
#include "_certify.h"
#include "_window.h"
#include <stdio.h>
static uint64_t st = 88172645463325252ULL;
static double rnd(void) { st ^= st << 13; st ^= st >> 7; st ^= st << 17;
                          return ((double)(st >> 12) + 0.5) * 2.220446049250313e-16; }
int main(void) {
    double u[BNDP_TN_BLOCK], Z[BNDP_TN_BLOCK], mL[BNDP_TN_BLOCK], tlo[BNDP_TN_BLOCK],
           thi[BNDP_TN_BLOCK], loc[BNDP_TN_BLOCK], sc[BNDP_TN_BLOCK], lo[BNDP_TN_BLOCK],
           hi[BNDP_TN_BLOCK], out[BNDP_TN_BLOCK];
    int64_t flag[BNDP_TN_BLOCK];
    for (int rep = 0; rep < 400; rep++) {
        int n = 1 + (int)(rnd() * BNDP_TN_BLOCK);
        for (int k = 0; k < n; k++) {
            /* a straddling row: Phi(a) and Phi(-b) for a <= 0 <= b, standard parent */
            double ta = 0.5 * rnd(), tb = 0.5 * rnd();
            tlo[k] = ta; thi[k] = tb; mL[k] = 0.5 - ta; Z[k] = (0.5 - ta) + (0.5 - tb);
            u[k] = rnd(); loc[k] = 10 * rnd() - 5; sc[k] = 3 * rnd() + 0.01;
            lo[k] = -1e300; hi[k] = 1e300;
        }
        bndp_tn_straddle_block(u, out, n, Z, mL, tlo, thi, loc, sc, lo, hi, 1);
        fwrite(out, sizeof(double), (size_t)n, stdout);
        bndp_tn_straddle_block(u, out, n, Z, mL, tlo, thi, loc, sc, lo, hi, 0);
        fwrite(out, sizeof(double), (size_t)n, stdout);
        /* the per-row setup pass, on rows straddling or not, bounds up to 60 scales away */
        for (int k = 0; k < n; k++) {
            loc[k] = 100 * rnd() - 50; sc[k] = 0.1 + 3 * rnd();
            lo[k] = loc[k] - 60 * sc[k] * (rnd() - 0.1); hi[k] = lo[k] + 100 * sc[k] * rnd();
        }
        bndp_tn_setup_pass(loc, sc, lo, hi, n, Z, mL, tlo, thi, flag);
        for (int k = 0; k < n; k++) if (flag[k]) Z[k] = mL[k] = tlo[k] = thi[k] = 0.0;
        fwrite(Z, sizeof(double), (size_t)n, stdout);
        fwrite(mL, sizeof(double), (size_t)n, stdout);
        fwrite(tlo, sizeof(double), (size_t)n, stdout);
        fwrite(thi, sizeof(double), (size_t)n, stdout);
        fwrite(flag, sizeof(int64_t), (size_t)n, stdout);
        for (int k = 0; k < n; k++) out[k] = bndp_log(1e-300 + 1e300 * rnd() * rnd());
        fwrite(out, sizeof(double), (size_t)n, stdout);
    }
    /* the windowed certificate's loops (_certify.h) on random tables and rows, and the
     * per-row width pass (_window.h) */
    static uint64_t cum[1202];
    static double T[1001], sl[1001], sh[1001], V[1001], qlo[1001], qhi[1001], w[1001],
                  qlo2[1001], qhi2[1001], res[2];
    for (int rep = 0; rep < 300; rep++) {
        int64_t N = 1 + (int64_t)(rnd() * 600), n = 1 + (int64_t)(rnd() * 1000);
        int64_t dk = 1 + (int64_t)(rnd() * (rep % 3 ? 40 : 300)), h = n / 2;
        cum[0] = 0;
        for (int64_t k = 0; k <= 2 * N; k++) cum[k + 1] = cum[k] + 2 + (uint64_t)(rnd() * 1e15);
        for (int64_t k = 0; k <= n; k++) T[k] = k > N ? 1e9 * rnd() : 0.0;
        bndp_gw_cert_norms(cum, N, n, T, 1.0 - 9.094947017729282e-13,
                           1.0 + 9.094947017729282e-13, sl, sh);
        fwrite(sl, sizeof(double), (size_t)(h + 1), stdout);
        bndp_gw_cert_logs(sl, sh, h + 1);
        res[0] = bndp_gw_cert_model(rep & 1, 0.5 + 60 * rnd(), N, -1e-3 * rnd() - 1e-9,
                                    30 * rnd(), n, V);
        for (int64_t k = 0; k <= n; k++) { qlo2[k] = V[k]; qhi2[k] = sh[k]; qhi[k] = sh[k]; }
        bndp_gw_cert_seq(sl, V, qlo, qhi, n);
        bndp_gw_cert_seq(sl, NULL, qlo2, qhi2, n);
        if (memcmp(qlo, qlo2, (size_t)(n + 1) * 8) || memcmp(qhi, qhi2, (size_t)(n + 1) * 8))
            return 3;                        /* the model in qlo: the same sequences */
        fwrite(qlo, sizeof(double), (size_t)(n + 1), stdout);
        fwrite(qhi, sizeof(double), (size_t)(n + 1), stdout);
        fwrite(qlo2, sizeof(double), (size_t)(n + 1), stdout);
        fwrite(qhi2, sizeof(double), (size_t)(n + 1), stdout);
        res[1] = bndp_gw_window_best(qlo, qhi, n, dk, w);
        fwrite(res, sizeof(double), 2, stdout);
        for (int64_t k = 0; k <= n; k++) { T[k] = 1e4 * rnd(); V[k] = T[k] + 300 * rnd(); }
        res[0] = bndp_any_width(T, V, n + 1, 150.0 + 200.0 * rnd());
        fwrite(res, sizeof(double), 1, stdout);
    }
    /* the EM step's middle (bndp._core.estimate): every length's tail, empty bins, bin
     * masses floored at 1e-300 */
    for (int rep = 0; rep < 300; rep++) {
        int n = 1 + rep % 600;
        for (int k = 0; k < n; k++) {
            T[k] = rnd() < 0.1 ? 0.0 : rnd();
            V[k] = rnd() < 0.05 ? 1e-310 * rnd() : rnd() * rnd();
        }
        res[0] = bndp_em_ratio_pass(T, V, n);
        fwrite(V, sizeof(double), (size_t)n, stdout);
        fwrite(res, sizeof(double), 1, stdout);
    }
    return 0;
}
'''
    src = tmp_path / "simd.c"
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
        assert len(r.stdout) > 10000
        digests[name] = hashlib.sha256(r.stdout).hexdigest()
    assert len(set(digests.values())) == 1, digests
