"""The vectorised bounded-Laplace sampler (_simd.h: bndp_bl_setup_pass, bndp_bl_draw_pass*):
its branch-free expm1 and log(1 - 2t) against mpmath, the block loops against the scalar
inverse CDF bit for bit, per-row quantiles against 50-digit references, a KS check of the
per-row path, and the same bits on every instruction set."""

import hashlib
import os
import platform
import shutil
import subprocess

import numpy as np
import pytest
from scipy import stats

from bndp._core import fill as _fill, laws as _laws, testing as _testing

mpmath = pytest.importorskip("mpmath")

ULP = np.finfo(float).eps
INF = np.inf


def test_branch_free_expm1_matches_mpmath_to_one_ulp():
    # over (-inf, 0]: densely near 0 (relative precision), around the reduction boundaries
    # (multiples of ln2/2), where expm1 rounds to -1 (below about -37.4), and past the clamp
    rng = np.random.default_rng(21)
    ln2 = np.log(2.0)
    x = np.concatenate([-rng.uniform(0, 60, 3000), -(10.0 ** rng.uniform(-300, 0, 1500)),
                        -(np.arange(1, 180) * ln2 / 2) * (1 + rng.uniform(-1e-12, 1e-12, 179)),
                        [0.0, -5e-324, -1e-310, -0.34657359027997264, -36.7, -37.5, -59.9, -60.0]])
    worst = 0.0
    with mpmath.workdps(40):
        for v in x:
            ref = mpmath.expm1(mpmath.mpf(v))
            got = _testing.expm1_nonpos_fast(v)
            if ref == 0:
                assert got == 0.0
                continue
            worst = max(worst, abs(float((got - ref) / ref)))
    assert worst < 1.0 * ULP
    for v in (-60.5, -700.0, -1e300, -INF):
        assert _testing.expm1_nonpos_fast(v) == -1.0


def test_branch_free_log1m2t_matches_mpmath_to_one_ulp():
    # log(1 - 2t) on [0, 1/2): tiny t (where it must act as log1p), t near 1/2 (the far
    # tail of the sampler, 1 - 2t down to 2^-54), and everything between
    rng = np.random.default_rng(22)
    t = np.concatenate([10.0 ** rng.uniform(-320, np.log10(0.5), 3000),
                        rng.uniform(0.0, 0.5, 2000), 0.5 - 2.0 ** -rng.uniform(2, 54, 500),
                        [0.0, 5e-324, 0.25, 0.5 - 2.0 ** -54]])
    t = t[t < 0.5]
    worst = 0.0
    with mpmath.workdps(40):
        for v in t:
            ref = mpmath.log1p(-2 * mpmath.mpf(v))
            got = _testing.log1m2t_fast(v)
            if ref == 0:
                assert got == 0.0
                continue
            worst = max(worst, abs(float((got - ref) / ref)))
    assert worst < 1.0 * ULP
    assert np.isfinite(_testing.log1m2t_fast(0.5))  # floor: finite, never -inf


def _uniforms(seed, n):
    # the sampler's uniforms: (2k + 1) 2^-53 for the 52-bit k = raw >> 12 of each output
    raw = np.random.Generator(np.random.PCG64(seed)).bit_generator.random_raw(n)
    return ((raw >> np.uint64(12)).astype(np.float64) + 0.5) * 2.0 ** -52


SCALAR_CASES = [(2.0, 0.7, -5.0, 5.0), (0.0, 1.0, 0.0, 10.0), (10.0, 0.25, 0.0, 10.0),
                (0.3, 1e9, 0.0, 1.0), (5.0, 1.6115601044179806, 0.0, 120.0),
                (0.0, 1.6126053959051863, 0.0, INF), (3.0, 2.0, -INF, 4.0),
                (1e6, 1.0, 0.0, INF), (50.0, 1e-3, 0.0, 100.0)]


@pytest.mark.parametrize("q,b,lo,hi", SCALAR_CASES)
def test_block_loops_equal_the_scalar_quantile_bit_for_bit(q, b, lo, hi):
    n = 1000  # several blocks of 128 and a partial one
    u = _uniforms(9, n)
    full = lambda v: np.full((1, n), v, dtype=float)  # noqa: E731
    ref = np.empty((1, n))
    _laws.bl_eval_rows(2, u[None, :], full(q), full(b), full(lo), full(hi), ref)
    out = np.empty(n)
    _fill.bl_fill(np.random.Generator(np.random.PCG64(9)), q, b, lo, hi, out)
    np.testing.assert_array_equal(out, ref[0])
    g = np.random.Generator(np.random.PCG64(9))
    one = [_fill.bl_one(g, q, b, lo, hi) for _ in range(300)]
    np.testing.assert_array_equal(one, ref[0, :300])
    # per-row kernel, stride-0 scale and bounds (the common case) and per-row ones
    z = lambda v: np.broadcast_to(np.float64(v), (1, n))  # noqa: E731
    for args in ((full(q), z(b), z(lo), z(hi)), (full(q), full(b), full(lo), full(hi))):
        out = np.empty((1, n))
        _fill.bl_fill_rows(np.random.Generator(np.random.PCG64(9)), *args, out)
        np.testing.assert_array_equal(out, ref)
    assert np.isfinite(ref).all() and (ref >= lo).all() and (ref <= hi).all()


def test_per_row_blocks_equal_the_scalar_quantile_bit_for_bit():
    r = np.random.default_rng(5)
    n = 2000
    u = _uniforms(13, n)
    cols = {
        # ETL column: ages in [0, 120], one calibrated scale
        "ages": (np.round(r.uniform(0, 120, n)), np.full(n, 1.6115601044179806),
                 np.zeros(n), np.full(n, 120.0)),
        # every parameter per row, with half-lines and huge/tiny scales mixed in
        "mixed": (r.uniform(-5, 5, n), 10.0 ** r.uniform(-3, 9, n),
                  np.where(r.random(n) < 0.2, -INF, r.uniform(-6, -5, n)),
                  np.where(r.random(n) < 0.2, INF, r.uniform(5, 6, n))),
    }
    for name, (q, b, lo, hi) in cols.items():
        ref = np.empty((1, n))
        _laws.bl_eval_rows(2, u[None], q[None], b[None], lo[None], hi[None], ref)
        out = np.empty((1, n))
        _fill.bl_fill_rows(np.random.Generator(np.random.PCG64(13)), q[None], b[None],
                           lo[None], hi[None], out)
        np.testing.assert_array_equal(out, ref, err_msg=name)
    # a 2-D output whose true values are a non-contiguous view (gathered per block)
    q = np.round(r.uniform(0, 120, (3, 2 * 300)))[:, ::2]
    z = lambda v: np.broadcast_to(np.float64(v), q.shape)  # noqa: E731
    out = np.empty(q.shape)
    _fill.bl_fill_rows(np.random.Generator(np.random.PCG64(13)), q, z(2.0), z(0.0), z(120.0),
                       out)
    u2 = _uniforms(13, q.size).reshape(q.shape)
    ref = np.empty(q.shape)
    _laws.bl_eval_rows(2, u2, np.ascontiguousarray(q), z(2.0), z(0.0), z(120.0), ref)
    np.testing.assert_array_equal(out, ref)


def _mp_quantile(u, q, b, lo, hi):
    """The inverse CDF in 50-digit arithmetic: s = uC - mL, x = q - sign(s) b log(1 - 2|s|)."""
    with mpmath.workdps(50):
        u, q, b = mpmath.mpf(u), mpmath.mpf(q), mpmath.mpf(b)
        mL = (1 - mpmath.exp(-(q - lo) / b)) / 2 if np.isfinite(lo) else mpmath.mpf(0.5)
        mR = (1 - mpmath.exp(-(hi - q) / b)) / 2 if np.isfinite(hi) else mpmath.mpf(0.5)
        s = u * (mL + mR) - mL
        x = q - mpmath.sign(s) * b * mpmath.log1p(-2 * abs(s))
        return min(max(float(x), lo), hi), float(1 - 2 * abs(s)), float(max(mL, u * (mL + mR)))


def test_per_row_quantiles_match_mpmath():
    r = np.random.default_rng(17)
    n = 600
    q = r.uniform(-10, 10, n)
    b = 10.0 ** r.uniform(-2, 4, n)
    lo = np.where(r.random(n) < 0.25, -INF, q - 10.0 ** r.uniform(-3, 2, n))
    hi = np.where((r.random(n) < 0.25) & np.isfinite(lo), INF, q + 10.0 ** r.uniform(-3, 2, n))
    u = r.uniform(0, 1, n)
    got = np.empty((1, n))
    _laws.bl_eval_rows(2, u[None], q[None], b[None], lo[None], hi[None], got)
    worst = 0.0
    for k in range(n):
        ref, y, m = _mp_quantile(u[k], q[k], b[k], lo[k], hi[k])
        # the rounding of s = uC - mL (a few ulps of the larger term m) moves
        # log(1 - 2|s|) by about 2 m ULP/(1 - 2|s|): the inverse-CDF conditioning; plus a
        # few ulps of the result
        tol = 4 * ULP * (2 * b[k] * m / y + abs(ref) + abs(q[k]))
        worst = max(worst, abs(got[0, k] - ref) / tol)
    assert worst <= 1.0


def test_per_row_path_follows_the_law():
    # every row the same (q, b, [l, u]) through the per-row kernel: KS against the exact CDF
    q, b, lo, hi = 2.0, 1.6115601044179806, 0.0, 10.0
    n = 20000
    out = np.empty((1, n))
    _fill.bl_fill_rows(np.random.default_rng(3), np.full((1, n), q), np.full((1, n), b),
                       np.full((1, n), lo), np.full((1, n), hi), out)
    d = stats.laplace(loc=q, scale=b)
    cdf = lambda x: (d.cdf(x) - d.cdf(lo)) / (d.cdf(hi) - d.cdf(lo))  # noqa: E731
    assert stats.kstest(out[0], cdf).pvalue > 1e-3
    # the half-line [0, inf) with q = 0: the law is the exponential with scale b
    out = np.empty((1, n))
    _fill.bl_fill_rows(np.random.default_rng(4), np.zeros((1, n)), np.full((1, n), 1.5),
                       np.zeros((1, n)), np.full((1, n), INF), out)
    assert stats.kstest(out[0], stats.expon(scale=1.5).cdf).pvalue > 1e-3


HARNESS = r'''
#include "_simd.h"
#include <stdio.h>
static uint64_t st = 88172645463325252ULL;
static double rnd(void) { st ^= st << 13; st ^= st >> 7; st ^= st << 17;
                          return ((double)(st >> 12) + 0.5) * 2.220446049250313e-16; }
int main(void) {
    double u[BNDP_TN_BLOCK], q[BNDP_TN_BLOCK], b[BNDP_TN_BLOCK], lo[BNDP_TN_BLOCK],
           hi[BNDP_TN_BLOCK], mL[BNDP_TN_BLOCK], C[BNDP_TN_BLOCK], out[BNDP_TN_BLOCK];
    for (int rep = 0; rep < 400; rep++) {
        int n = 1 + (int)(rnd() * BNDP_TN_BLOCK);
        for (int k = 0; k < n; k++) {
            u[k] = rnd(); q[k] = 200 * rnd() - 100; b[k] = 1e-3 + 50 * rnd() * rnd();
            lo[k] = rnd() < 0.1 ? -INFINITY : q[k] - 100 * rnd();
            hi[k] = (rnd() < 0.1 && lo[k] > -INFINITY) ? INFINITY : q[k] + 100 * rnd();
        }
        bndp_bl_setup_pass(q, b, lo, hi, n, mL, C);
        fwrite(mL, sizeof(double), (size_t)n, stdout);
        fwrite(C, sizeof(double), (size_t)n, stdout);
        bndp_bl_draw_pass(u, out, n, q, b, lo, hi, mL, C);
        fwrite(out, sizeof(double), (size_t)n, stdout);
        bndp_bl_setup_pass_q(q, b[0], -5.0, 130.0, n, mL, C);
        bndp_bl_draw_pass_q(u, out, n, q, b[0], -5.0, 130.0, mL, C);
        fwrite(out, sizeof(double), (size_t)n, stdout);
        bndp_bl_draw_pass1(u, out, n, q[0], b[0], lo[0], hi[0], mL[0], C[0]);
        fwrite(out, sizeof(double), (size_t)n, stdout);
    }
    return 0;
}
'''


def test_bl_loops_give_the_same_bits_on_every_instruction_set(tmp_path):
    """As for the truncated normal (tests/test_special.py): each variant built alone
    (BNDP_NO_CLONES), and unvectorised at -O0 as the reference, on the same inputs."""
    cc = shutil.which("cc") or shutil.which("gcc")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    inc = os.path.join(root, "src", "bndp")
    if cc is None or not os.path.exists(os.path.join(inc, "_simd.h")):
        pytest.skip("needs a C compiler and the source tree")
    src = tmp_path / "bl.c"
    src.write_text(HARNESS)
    base = ["-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off", "-DBNDP_NO_CLONES",
            "-I", inc]
    variants = {"reference -O0": ["-O0"], "baseline -O3": ["-O3"]}
    if platform.machine() in ("x86_64", "AMD64"):
        variants["avx2"] = ["-O3", "-mavx2"]
        variants["avx512f"] = ["-O3", "-mavx512f"]
    cpu = open("/proc/cpuinfo").read().split() if os.path.exists("/proc/cpuinfo") else []
    digests = {}
    for name, flags in variants.items():
        exe = tmp_path / name.replace(" ", "_")
        r = subprocess.run([cc, *flags, *base, str(src), "-o", str(exe), "-lm"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        if name in ("avx2", "avx512f") and name not in cpu:
            continue
        r = subprocess.run([str(exe)], capture_output=True, timeout=60)
        assert r.returncode == 0
        assert len(r.stdout) > 10000
        digests[name] = hashlib.sha256(r.stdout).hexdigest()
    assert len(set(digests.values())) == 1, digests
