"""The windowed grid law (bndp._laws.window; _core/window.pyx,
_core/certify_grid.pyx): the fast certificate
against exhaustive maxima of the sampled law, the sampler against the exact law, the exact
index and interval arithmetic, per-row plans."""

import math
import pickle
from fractions import Fraction

import numpy as np
import pytest

import bndp
from bndp._core import calibrate as _calibrate, certify_grid as _certify_grid, certify_rows as _certify_rows, rows as _rows, testing as _testing, window as _window
from bndp._laws import serving, window

from ._helpers import chi2_pvalue, grid_counts
from .conftest import sweep


def kernel_weights(cum, N, tailw, sbits, tm, n):
    """The log of every weight w(d), d = -n..n, of the law as sampled (tails in closed
    form; -inf where a weight is 0)."""
    w_tab = np.diff(np.asarray(cum, dtype=np.uint64)).astype(np.float64)
    d = np.arange(-n, n + 1)
    out = np.full(2 * n + 1, -np.inf)
    inside = np.abs(d) <= N
    with np.errstate(divide="ignore"):
        out[inside] = np.log(w_tab[d[inside] + N])
    if tailw:
        lnp = math.log1p(-math.ldexp(tm, -sbits))
        k = np.abs(d[~inside]) - N
        out[~inside] = math.log(tailw) + math.log(tm) - sbits * math.log(2.0) + (k - 1) * lnp
    return out


def exhaustive_loss(lw, n, dk):
    """max over 0 <= i < i' <= min(i + dk, n) and both directions, every output j, of
    ln P(j | i) / P(j | i') for P(j | i) = w(j - i) / S_i (ln w indexed by d + n)."""
    from scipy.special import logsumexp
    lS = np.array([logsumexp(lw[n - i: 2 * n - i + 1]) for i in range(n + 1)])
    best = -np.inf
    j = np.arange(n + 1)
    for i in range(n + 1):
        for ip in range(i + 1, min(i + dk, n) + 1):
            with np.errstate(invalid="ignore"):
                a = lw[j - i + n] - lw[j - ip + n]       # nan where both weights are 0
            best = max(best, np.nanmax(a) + lS[ip] - lS[i], np.nanmax(-a) + lS[i] - lS[ip])
    return best


@pytest.mark.slow
@pytest.mark.parametrize("fam", [0, 1])
def test_certificate_against_the_exhaustive_oracle_without_tails(fam):
    """Rows the table covers (n <= N): the old exhaustive certificate (gd_shift_losses, every
    pair and output of the same integer table) never exceeds the new one, and the new one is
    tight (log-concavity: the worst output is found, not bounded)."""
    rng = np.random.default_rng(11 + fam)
    for _ in range(sweep(3000, 300)):
        t = float(np.exp(rng.uniform(np.log(0.3), np.log(60.0))))
        n = int(rng.integers(1, 200))
        dk = int(rng.integers(1, 24))
        dk = min(dk, n)
        cert, shape, cum = _testing.gw_eval(fam, t, n, dk, False, table=True)
        if shape is None or shape[1]:
            continue
        old = float(np.max(_certify_grid.gd_shift_losses(cum, n, dk)))
        assert cert >= old - 1e-13, (fam, t, n, dk, cert, old)
        assert cert - old <= 1e-6 + 4.0 / (int(cum[1]) - 1), (fam, t, n, dk, cert, old)


@pytest.mark.slow
@pytest.mark.parametrize("fam", [0, 1])
def test_certificate_against_the_exhaustive_oracle_with_tails(fam):
    """Rows wider than the table: geometric tails, truncated at the row's ends. Heavy tails
    (the table stops at 2^-4 .. 2^-12) so that they matter."""
    rng = np.random.default_rng(21 + fam)
    checked = 0
    for _ in range(sweep(3000, 400)):
        # (steeper Gaussian tails than t >= 1.5 give tiny tail totals B, whose rounding the
        # certificate covers by its eta = 1/(B - 1): sound, but not tight)
        t = float(np.exp(rng.uniform(np.log(0.5 if fam == 0 else 1.5), np.log(6.0))))
        bits = int(rng.integers(4, 13))
        dk = int(rng.integers(1, 12))
        n = int(rng.integers(2, 160))
        dk = min(dk, n)
        cert, shape, cum = _testing.gw_eval(fam, t, n, dk, False, tail_bits=bits, table=True)
        if shape is None:
            continue
        N, tail, kexp, tailw, sbits, tm, _ = shape
        w = kernel_weights(cum, N, tailw if tail else 0, sbits, tm, n)
        exact = exhaustive_loss(w, n, dk)
        assert cert >= exact - 1e-12, (fam, t, bits, n, dk, cert, exact)
        assert cert - exact <= 1e-6 * max(1.0, exact), (fam, t, bits, n, dk, cert, exact)
        checked += tail
    assert checked > 100


def _wide_kernels(fam, seed, count, t_max, rng=None):
    """Random wide kernels with heavy tails (scale up to ``t_max`` grid steps, tables
    stopping at 2^-4 .. 2^-10): ``(t, bits, dk, cert, shape, cum)`` of those gw_eval plans.
    ``rng``: the generator to draw from (and go on drawing from), else one of ``seed``."""
    rng = np.random.default_rng(seed) if rng is None else rng
    for _ in range(count):
        t = float(np.exp(rng.uniform(np.log(0.5 if fam == 0 else 1.5), np.log(t_max))))
        bits = int(rng.integers(4, 11))
        dk = int(rng.integers(1, 8))
        cert, shape, cum = _testing.gw_eval(fam, t, 1 << 40, dk, True, tail_bits=bits, table=True)
        if shape is not None:
            yield t, bits, dk, cert, shape, cum


@pytest.mark.slow
@pytest.mark.parametrize("fam", [0, 1])
def test_wide_certificate_covers_every_wide_row(fam):
    """One wide kernel serves every row of at least 2N + dk intervals: its certificate is an
    upper bound of the exact loss at several such widths."""
    for t, bits, dk, cert, shape, cum in _wide_kernels(fam, 31 + fam, sweep(300, 40), 4.0):
        N, tail, kexp, tailw, sbits, tm, n_wide = shape
        worst = -np.inf
        for n in (n_wide, n_wide + 1, n_wide + 5, 2 * n_wide + 3, 4 * n_wide):
            w = kernel_weights(cum, N, tailw, sbits, tm, n)
            worst = max(worst, exhaustive_loss(w, n, dk))
        assert cert >= worst - 1e-12, (fam, t, bits, dk, cert, worst)
        # the interior bound is loose by about the tail's share of the mass, 2^-bits
        assert cert - worst <= 2.0 ** (3 - bits) * worst + 1e-6, (fam, t, bits, dk, cert, worst)


@pytest.mark.slow
@pytest.mark.parametrize("fam", [0, 1])
def test_wide_kernel_certified_on_narrow_rows(fam):
    """gw_certify_rows: the wide kernel's certificate on a row narrower than n_wide (what
    serves such a row with the wide kernel) bounds the exact loss of that row and is tight,
    against the exhaustive oracle, tails truncated at the row's ends."""
    rng = np.random.default_rng(41 + fam)
    checked = 0
    for t, bits, dk, cert, shape, cum in _wide_kernels(fam, 41 + fam, sweep(200, 30), 5.0,
                                                       rng):
        N, tail, kexp, tailw, sbits, tm, n_wide = shape
        ns = np.unique(rng.integers(1, n_wide, 5)).astype(np.int64)
        got = _certify_rows.gw_certify_rows(fam, t, bits, tailw, cum, ns, dk)
        for n, c in zip(ns.tolist(), got):
            exact = exhaustive_loss(kernel_weights(cum, N, tailw, sbits, tm, n), n, min(dk, n))
            assert c >= exact - 1e-12, (fam, t, bits, dk, n, c, exact)
            assert c - exact <= 1e-6 * max(1.0, exact), (fam, t, bits, dk, n, c, exact)
            checked += 1
    assert checked > 50


def test_certify_rows_refuses_what_is_not_a_wide_kernel():
    law = window.plan_wide(0, 1.0, 1.0)
    ok = _certify_rows.gw_certify_rows(0, law.scale_grid, 24, law.tailw, law.cum,
                               np.array([10, 300], dtype=np.int64), law.dk)
    assert (ok <= 1.0).all() and ok[0] < ok[1]
    bad = [
        (law.scale_grid, law.cum[:-1], [10]),            # a table of another scale's size
        (law.scale_grid, law.cum, [0]),                  # a row without intervals
        (1e-3, law.cum, [10]),                           # no tails at that scale
    ]
    for t, cum, ns in bad:
        with pytest.raises(ValueError, match="gw_certify_rows"):
            _certify_rows.gw_certify_rows(0, t, 24, law.tailw, cum, np.array(ns, dtype=np.int64),
                                  law.dk)


@pytest.mark.parametrize("fam", [window.LAPLACE, window.GAUSSIAN])
def test_narrow_rows_on_the_wide_kernel_are_certified_and_nearly_as_tight(fam):
    """A narrow row served by the wide kernel: its certified loss is the wide table's
    certificate on the row (at most epsilon, within WIDE_SLACK of it) and its scale is at
    most 0.2 % above the row's own kernel's (calibrated here directly); a narrower row
    whose wide certificate is farther below epsilon keeps its own kernel."""
    served = own = 0
    for eps in (0.1, 1.0, 4.0):
        e = window._exponent1(eps, 1.0, 0.0, math.inf)[0]
        dk = max(1, math.ceil(math.ldexp(1.0, -e)))
        wide = window._law(fam, eps, dk, e, None)
        for n in np.unique(np.linspace(dk, wide.n_min - 1, 9).astype(np.int64)).tolist():
            law = window._law(fam, eps, dk, e, n)
            c = float(_certify_rows.gw_certify_rows(fam, wide.scale_grid, 24, wide.tailw, wide.cum,
                                            np.array([n], dtype=np.int64), dk)[0])
            if law.cum is wide.cum:
                served += 1
                assert law.certified_epsilon == c <= eps
                assert c >= eps * (1.0 - serving.WIDE_SLACK)
                t0 = window._search_start(fam, eps, dk, n)
                t_own = _calibrate.gw_calibrate(fam, eps, t0, n, dk, False, window.REL_TOL)[0]
                assert wide.scale_grid <= 1.002 * t_own, (eps, n)
            else:
                own += 1
                assert law.n_max == n and law.certified_epsilon <= eps
                scan = serving._scan_served(wide, fam, eps, dk, 0)
                if n >= scan.top:      # a row the scan certified: outside the range
                    assert not eps * (1.0 - serving.WIDE_SLACK) <= c <= eps
    assert served >= 6 and own >= 3


@pytest.mark.parametrize("fam", [window.LAPLACE, window.GAUSSIAN])
def test_served_map_is_the_serving_rule_on_every_row_it_scans(fam):
    """The narrow rows a wide kernel serves in the first pass of a per-row release
    (_served_map) are the rows of the blocks its scan certified whose certificate, the
    same double as the one-row certificate, is at most epsilon and within WIDE_SLACK of
    it; _law serves exactly those with the wide table; the scan stops at the narrowest row
    tried, after a block serving none, or at the step budget."""
    for eps in (0.1, 1.0, 4.0):
        e = window._exponent1(eps, 1.0, 0.0, math.inf)[0]
        dk = max(1, math.ceil(math.ldexp(1.0, -e)))
        wide = window._law(fam, eps, dk, e, None)
        smap = serving._served_map(wide, fam, eps, dk)
        scan = serving._scan_served(wide, fam, eps, dk, 0)
        assert smap.shape == (wide.n_min,) and scan.done and smap.sum() >= 50
        assert not smap[:scan.top].any()
        ns = np.arange(scan.top, wide.n_min, dtype=np.int64)
        one = np.array([_certify_rows.gw_certify_rows(fam, wide.scale_grid, 24, wide.tailw, wide.cum,
                                              ns[k:k + 1], dk)[0] for k in range(ns.size)])
        np.testing.assert_array_equal(scan.cert[ns], one)
        ok = (eps * (1.0 - serving.WIDE_SLACK) <= one) & (one <= eps)
        np.testing.assert_array_equal(smap[ns].astype(bool), ok)
        last = ns[:(wide.n_min - scan.top) % serving.SERVE_SCAN_ROWS or serving.SERVE_SCAN_ROWS]
        assert (scan.top <= scan.low or not smap[last].any()
                or scan.steps > serving.SERVE_SCAN_MAX)
        for n in np.unique(np.linspace(scan.top, wide.n_min - 1, 12).astype(int)).tolist():
            assert (window._law(fam, eps, dk, e, n).cum is wide.cum) == bool(smap[n]), n
        # a cache of the kernel's, not pickled (its lock cannot be): recomputed the same
        again = pickle.loads(pickle.dumps(wide))
        assert "_serve_scan" not in again.__dict__
        np.testing.assert_array_equal(serving._served_map(again, fam, eps, dk), smap)


def test_first_kernel_is_planned_where_the_widest_row_may_be_drawn_with_it():
    """A per-row release plans its grid's wide kernel first where some row may be drawn
    with it: ``_first_drawn`` of the widest row's estimated ``n`` (floor((hi - lo) 2^-e0)
    + 1). The compiled pass that stops at the first such row (``_may_be_first``) decides
    as that estimate does, also for widths one ulp either side of the threshold, and
    ``_first_drawn_from`` is the narrowest row ``_first_drawn`` admits."""
    r = np.random.default_rng(8)

    def by_estimate(fam, target, dk, e0, lo, hi):
        w = math.ldexp(float(np.max(hi - lo)), -e0)
        n_est = math.floor(w) + 1 if math.isfinite(w) else 1 << 62
        return serving._first_drawn(fam, target, dk, n_est)

    decided = set()
    for _ in range(400):
        fam = int(r.integers(0, 2))
        target = float(10 ** r.uniform(-2.5, 1.2))
        dk = int(2 ** r.uniform(0, 12))
        e0 = int(r.integers(-60, 20))
        n0 = serving._first_drawn_from(fam, target, dk)
        assert n0 is not None
        for n in (n0 - 1, n0, n0 + 1):
            assert serving._first_drawn(fam, target, dk, n) == (n >= n0)
        edge = math.ldexp(float(n0 - 1), e0)
        for w in (np.nextafter(edge, 0.0), edge, np.nextafter(edge, np.inf),
                  0.5 * edge, 3.0 * edge):
            if not w > 0:
                continue
            lo = r.uniform(-5.0, 5.0, 700) * math.ldexp(1.0, e0)
            hi = lo + r.uniform(0.01, 0.5) * w
            k = int(r.integers(0, lo.size))
            hi[k] = lo[k] + w                       # the widest row, anywhere
            got = window._may_be_first(fam, target, dk, e0, lo, hi)
            assert got == by_estimate(fam, target, dk, e0, lo, hi), (fam, target, dk, e0, w)
            decided.add(got)
    assert decided == {True, False}


def test_per_row_bounds_at_the_ends_of_the_doubles_are_refused_with_the_reason():
    # a row whose width in grid steps overflows a double (here 2e307 at a grid of 2^-5) is
    # refused for its bounds, as a narrower row that far from 0 is, not with the
    # OverflowError of the width's scaling
    for lo, hi in ((-1e307, 1e307), (-1.7e308, 1.7e308), (1e300, 2e300)):
        for mech in ("laplace", "gaussian"):
            with pytest.raises(ValueError, match="far from 0"):
                bndp.sample(np.array([0.5 * (lo + hi), 5.0]), lower=np.array([lo, 0.0]),
                            upper=np.array([hi, 10.0]), mechanism=mech, epsilon=1.0,
                            sensitivity=1.0, rng=1)


def test_served_map_of_a_kernel_too_wide_to_try_holds_nothing():
    # at a tiny epsilon (the wide rows' bound above WIDE_TRY_MAX) no narrow row is tried:
    # no certificate is computed and no array of the kernel's n_min rows is kept
    eps = 2e-4
    e = window._exponent1(eps, 1.0, 0.0, math.inf)[0]
    dk = max(1, math.ceil(math.ldexp(1.0, -e)))
    assert serving._wide_rows_bound(window.LAPLACE, eps, dk) > serving.WIDE_TRY_MAX
    wide = window._law(window.LAPLACE, eps, dk, e, None)
    assert serving._served_map(wide, window.LAPLACE, eps, dk) is None
    scan = serving._scan_served(wide, window.LAPLACE, eps, dk, 0)
    assert scan.done and scan.steps == 0 and scan.cert.size == 0 and scan.top == wide.n_min


@pytest.mark.parametrize("fam", [window.LAPLACE, window.GAUSSIAN])
def test_per_row_draws_do_not_depend_on_the_kernel_cache(fam, monkeypatch):
    """A per-row release draws the same values and leaves the generator in the same state
    with no kernel planned, with every kernel planned, and with the wide kernel's scan of
    its narrow rows begun by a narrow fixed-bounds row (the map is a function of the
    kernel, not of how far earlier calls went)."""
    target = window.serving_target(1.0, 1.0)
    e0 = window._exponent1(target, 1.0, 0.0, math.inf)[0]
    dk = max(1, math.ceil(math.ldexp(1.0, -e0)))
    r = np.random.default_rng(5)
    k = 4000
    lo = np.round(r.uniform(-50.0, 50.0, k), 1)
    hi = lo + r.choice([3.0, 8.0, 15.0, 30.0, 45.0, 60.0, 80.0, 200.0], k)
    q = r.uniform(lo, hi)

    def run():
        g = np.random.default_rng(9)
        return window._sample_rows_compiled(fam, target, 1.0, q, lo, hi, g), g.random()

    monkeypatch.setattr(window, "_LAWS", type(window._LAWS)())
    cold = run()
    warm = run()
    monkeypatch.setattr(window, "_LAWS", type(window._LAWS)())
    wide = window._law(fam, target, dk, e0, None)
    window._law(fam, target, dk, e0, wide.n_min - 3)     # a partial scan
    assert not serving._scan_served(wide, fam, target, dk, wide.n_min).done
    partial = run()
    for got in (warm, partial):
        np.testing.assert_array_equal(got[0], cold[0])
        assert got[1] == cold[1]
    served = serving._served_map(wide, fam, target, dk)
    n = _window.gw_intervals(lo, hi, e0)
    assert ((n < wide.n_min) & (served[np.minimum(n, wide.n_min - 1)] != 0)).sum() > 100


def test_certificate_would_catch_a_wrong_law():
    """The oracle sees a difference that matters: the law without its tails (the table's
    window alone, a support that depends on the input) has an infinite loss, and halving the
    kernel's scale at a fixed certificate is caught."""
    cert, shape, cum = _testing.gw_eval(0, 2.0, 60, 3, False, tail_bits=6, table=True)
    N, tail, kexp, tailw, sbits, tm, _ = shape
    assert tail
    w = kernel_weights(cum, N, 0, sbits, tm, 60)          # tails dropped: zero weights
    with np.errstate(divide="ignore", invalid="ignore"):
        assert not exhaustive_loss(w, 60, 3) <= cert
    c2, shape2, cum2 = _testing.gw_eval(0, 1.0, 60, 3, False, tail_bits=6, table=True)
    w2 = kernel_weights(cum2, shape2[0], shape2[3], shape2[4], shape2[5], 60)
    assert exhaustive_loss(w2, 60, 3) > cert + 0.5


def _certificate_by_the_definition(fam, t, n, dk, wide):
    """The windowed certificate of the kernel of scale t on a row of n intervals (wide: on
    every row of at least 2N + dk), written out as its definition reads, k by k with
    every term recomputed and the window's minimum by brute force, in Python's doubles
    (the same IEEE operations as the compiled certificate; its logarithm on a row is
    bndp's vectorisable one, ``_core.testing.log_fast``, libm's on the wide rows)."""
    cert, shape, cum = _testing.gw_eval(fam, t, n, dk, wide, table=True)
    N, tail, kexp, tailw, sbits, tm, _ = shape
    cum = [int(c) for c in cum]
    B = float(tailw)
    lnp = math.log1p(-math.ldexp(tm, -sbits)) if tail else 0.0
    wmin = float(cum[1] - cum[0])
    eta = 1.0 / (wmin - 1.0)
    if tail:
        eta = max(eta, 1.0 / (B - 1.0))
    eta += 2.9e-14
    rel = 2.0 ** -40

    def phi(d):
        if d <= N:
            return -d / t if fam == 0 else -0.5 * (d / t) * (d / t)
        x = -N / t if fam == 0 else -0.5 * (N / t) * (N / t)
        return x + (d - N) * lnp

    nn, kmax, imax = (2 * N + dk, N + dk - 1, N - 1) if wide else (n, n, n - 1)
    qlo, qhi, vmax = [], [], 0.0
    for k in range(kmax + 1):
        tab = float(cum[min(nn - k, N) + N + 1] - cum[max(-k, -N) + N])
        part = B * (-math.expm1((k - N) * lnp)) if k > N else 0.0
        up_lo = B * (-math.expm1((nn - k - N) * lnp)) if nn - k > N else 0.0
        up_hi = (B if wide else up_lo) if nn - k > N else 0.0
        sl = tab + (part + up_lo) * (1.0 - rel)
        sh = tab + (part + up_hi) * (1.0 + rel)
        v = kexp * 0.6931471805599453 + phi(k)
        vmax = max(vmax, abs(v))
        qlo.append((math.log(sl) if wide else _testing.log_fast(sl)) - v)
        qhi.append(qlo[k] + ((sh - sl) / sl) * (1.0 + 1e-15))
    best = max(qhi[k] - min(qlo[max(0, k - dk): min(k - 1, imax) + 1])
               for k in range(1, kmax + 1) if max(0, k - dk) <= min(k - 1, imax))
    if wide:
        wn1 = B * math.ldexp(tm, -sbits)
        hhalf = float(cum[2 * N + 1] - cum[N])
        best = max(best, dk * (-lnp) * (1.0 + 1e-15)
                   + math.log1p(dk * wn1 / hhalf) * (1.0 + 1e-15))
    return cert, best + 2.0 * eta + 2.0 ** -40 + 8.0 * 2.220446049250313e-16 * vmax


@pytest.mark.parametrize("fam", [window.LAPLACE, window.GAUSSIAN])
def test_certificate_is_its_definition_bit_for_bit(fam):
    """The compiled windowed certificate (its terms symmetric in k <-> n - k computed for
    half the row, the window minima by blocks; the same for many rows at once in
    gw_certify_rows) is the double its definition gives, on narrow rows with and without
    tails, rows narrower than the sensitivity, and wide kernels."""
    r = np.random.default_rng(3 + fam)
    seen = 0
    # random rows, and rows whose dk is at, below and above a power of two (the window
    # minima's doubling passes) or beyond the row
    cases = [(float(np.exp(r.uniform(np.log(0.5), np.log(60.0)))), int(r.integers(1, 700)),
              int(r.integers(1, 24))) for _ in range(60)]
    cases += [(float(np.exp(r.uniform(np.log(8.0), np.log(60.0)))), int(r.integers(2, 700)),
               dk) for dk in (2, 3, 31, 32, 33, 64, 65, 100, 127, 128, 129, 900)]
    for t, n, dk in cases:
        for wide in (False, True):
            try:
                got, want = _certificate_by_the_definition(fam, t, n, dk, wide)
            except (ValueError, TypeError):        # no table at that scale
                continue
            assert got == want, (fam, t, n, dk, wide)
            seen += 1
    assert seen >= 95
    wide = window._law(fam, 1.0, 16, -4, None)
    ns = np.arange(1, 400, 7, dtype=np.int64)
    many = _certify_rows.gw_certify_rows(fam, wide.scale_grid, 24, wide.tailw, wide.cum, ns, 16)
    one = [_certify_rows.gw_certify_rows(fam, wide.scale_grid, 24, wide.tailw, wide.cum,
                                 np.array([n]), 16)[0] for n in ns.tolist()]
    np.testing.assert_array_equal(many, one)
    # with the terms of one offset computed once (for rows up to 450), row by row
    terms = _certify_rows.gw_cert_terms(fam, wide.scale_grid, 24, wide.tailw, 450)
    kept = [_certify_rows.gw_certify_rows(fam, wide.scale_grid, 24, wide.tailw, wide.cum,
                                  np.array([n]), 16, terms)[0] for n in ns.tolist()]
    np.testing.assert_array_equal(many, kept)
    with pytest.raises(ValueError, match="terms"):
        _certify_rows.gw_certify_rows(fam, wide.scale_grid, 24, wide.tailw, wide.cum,
                              np.array([451]), 16, terms)


@pytest.mark.parametrize("fam", [window.LAPLACE, window.GAUSSIAN])
def test_table_is_its_definition_bit_for_bit(fam):
    """The windowed kernel's table (its scaling by 2^K and rounding written inline) holds
    W[d + N] = rint(ldexp(exp(psi(d)), K)) exactly, as libm and NumPy compute it, for
    narrow and wide kernels over many scales (entries near 2^52 and beyond included)."""
    r = np.random.default_rng(5 + fam)
    seen = 0
    for _ in range(40):
        t = float(np.exp(r.uniform(np.log(0.5), np.log(400.0))))
        n = int(r.integers(1, 3000))
        for wide in (False, True):
            try:
                _, shape, cum = _testing.gw_eval(fam, t, n, 1, wide, table=True)
            except ValueError:
                continue
            if shape is None:                      # no table at that scale
                continue
            N, kexp = shape[0], shape[2]
            d = np.arange(N + 1, dtype=np.float64)
            psi = -d / t if fam == window.LAPLACE else -0.5 * (d / t) * (d / t)
            e = np.array([math.exp(v) for v in psi])             # libm's, as the core's
            want = np.rint(np.ldexp(e, kexp)).astype(np.uint64)
            got = np.diff(cum.astype(np.uint64))[N:]
            np.testing.assert_array_equal(got, want, err_msg=str((fam, t, n, wide)))
            seen += 1
    assert seen >= 40


def exact_pmf(cum, N, tailw, sbits, tm, n, i):
    lw = kernel_weights(cum, N, tailw, sbits, tm, n)[n - i: 2 * n - i + 1]
    p = np.exp(lw - lw.max())
    return p / p.sum()


@pytest.mark.parametrize("fam,t,bits,n", [(0, 3.0, 4, 40), (1, 2.5, 5, 30), (0, 1.5, 6, 9)])
def test_sampler_matches_the_law_including_tails_and_rejection(fam, t, bits, n):
    """gw_fill draws the law P(j | i) exactly: chi-square over all outputs for inputs at
    the ends and inside, with tails holding several percent of the mass (tail draws and
    rejections at the row's ends are exercised)."""
    from scipy import stats
    cert, shape, cum = _testing.gw_eval(fam, t, n, 2, False, tail_bits=bits, table=True)
    N, tail, kexp, tailw, sbits, tm, _ = shape
    tree, levels = _window.gw_search_tree(cum)
    gen = np.random.Generator(np.random.PCG64(5))
    e = -3
    for i in (0, 1, n // 2, n):
        m = 200_000
        lo = np.full(m, 7.0)
        q = lo + i * 2.0 ** e
        out = np.empty(m)
        _window.gw_fill(gen, tree, levels, N, tailw if tail else 0, sbits, tm, e, q, lo,
                      lo + n * 2.0 ** e, np.full(m, n, dtype=np.int64), out)
        j = (out - 7.0) / 2.0 ** e
        assert np.all(j == np.round(j)) and j.min() >= 0 and j.max() <= n
        counts = np.bincount(j.astype(np.int64), minlength=n + 1)
        p = exact_pmf(cum, N, tailw if tail else 0, sbits, tm, n, i)
        keep = p * m >= 5
        obs = np.append(counts[keep], counts[~keep].sum())
        exp_ = np.append(p[keep], p[~keep].sum()) * m
        if exp_[-1] == 0:
            obs, exp_ = obs[:-1], exp_[:-1]
        pv = stats.chisquare(obs, exp_ * obs.sum() / exp_.sum()).pvalue
        assert pv > 1e-4, (fam, i, pv)


def test_sampler_rejects_a_wrong_law():
    """The chi-square above has power: the law of a neighbouring input is rejected."""
    from scipy import stats
    cert, shape, cum = _testing.gw_eval(0, 3.0, 40, 2, False, tail_bits=4, table=True)
    N, tail, kexp, tailw, sbits, tm, _ = shape
    tree, levels = _window.gw_search_tree(cum)
    gen = np.random.Generator(np.random.PCG64(6))
    m = 200_000
    out = np.empty(m)
    lo = np.zeros(m)
    _window.gw_fill(gen, tree, levels, N, tailw, sbits, tm, 0, np.full(m, 10.0), lo,
                  np.full(m, 40.0), np.full(m, 40, dtype=np.int64), out)
    counts = np.bincount(out.astype(np.int64), minlength=41)
    p = exact_pmf(cum, N, tailw, sbits, tm, 40, 11)
    keep = p * m >= 5
    pv = stats.chisquare(np.append(counts[keep], counts[~keep].sum()),
                         np.append(p[keep], p[~keep].sum()) * m).pvalue
    assert pv < 1e-6


def frac_index(q, lo, hi, e, n):
    q = min(max(q, lo), hi)
    x = (Fraction(q) - Fraction(lo)) / Fraction(2) ** e
    i = math.floor(x + Fraction(1, 2))
    return min(max(i, 0), n)


def test_index_and_intervals_are_exact():
    rng = np.random.default_rng(3)
    cases = []
    for _ in range(3000):
        e = int(rng.integers(-20, 10))
        lo = float(rng.choice([0.0, 0.1, -3.7, 1e6 + 0.3, -1e-3, 1e15]) + rng.normal() * 10)
        width = float(np.exp(rng.uniform(np.log(2.0 ** e), np.log(2.0 ** e * 1e5))))
        hi = lo + width
        q = float(rng.uniform(lo - width * 0.1, hi + width * 0.1))
        if rng.random() < 0.3:     # exactly on a rounding boundary
            k = int(rng.integers(0, max(1, int(width / 2.0 ** e))))
            q = lo + (k + 0.5) * 2.0 ** e
        cases.append((q, lo, hi, e))
    for q, lo, hi, e in cases:
        n = int(_window.gw_intervals(np.array([lo]), np.array([hi]), e)[0])
        assert n == math.floor((Fraction(hi) - Fraction(lo)) / Fraction(2) ** e)
        if n < 1:
            continue
        i = int(_window.gw_index(np.array([q]), np.array([lo]), np.array([hi]), e,
                               np.array([n], dtype=np.int64))[0])
        assert i == frac_index(q, lo, hi, e, n), (q, lo, hi, e)


def test_vectorised_index_pass_equals_the_exact_index():
    """gw_fill_row's index pass (C, target clones, the 2^52 floor) gives the integers of
    gw_index, ties and clipping included."""
    rng = np.random.default_rng(12)
    for _ in range(200):
        e = int(rng.integers(-20, 6))
        lo = float(rng.choice([0.0, 0.1, -3.7, 1e6 + 0.3, 1e12]) + rng.normal())
        width = float(np.exp(rng.uniform(np.log(2.0 ** e * 2), np.log(2.0 ** e * 1e6))))
        hi = lo + width
        n = int(_window.gw_intervals(np.array([lo]), np.array([hi]), e)[0])
        if n < 1:
            continue
        g = 2.0 ** e
        k = rng.integers(-3, n + 4, 300)
        q = np.concatenate((lo + (k + 0.5) * g, lo + k * g, rng.uniform(lo - g, hi + g, 300),
                            [np.nan, lo, hi, -np.inf, np.inf]))
        ref = _window.gw_index(q, np.full(q.size, lo), np.full(q.size, hi), e,
                             np.full(q.size, n, dtype=np.int64))
        assert np.array_equal(_testing.gw_index_pass(q, lo, hi, e, n), ref)


def test_neighbours_stay_within_dk():
    """Rounding anchored at an arbitrary lower bound moves inputs at most ceil(D/gamma)
    steps apart (the certificate's premise), also with inexact differences q - lo."""
    rng = np.random.default_rng(4)
    e = -4
    lo = np.full(100_000, 0.1)
    hi = lo + 120.0
    n = _window.gw_intervals(lo, hi, e)
    q = rng.uniform(0.1, 119.0, 100_000)
    q2 = q + 1.0
    i1 = _window.gw_index(q, lo, hi, e, n)
    i2 = _window.gw_index(q2, lo, hi, e, n)
    assert (i2 - i1).max() <= 16 and (i2 >= i1).all()


@pytest.mark.parametrize("cls", [bndp.BoundedLaplace, bndp.BoundedGaussian])
def test_one_wide_kernel_serves_rows_of_every_width_and_position(cls):
    a = cls(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=120.0).exact_plan
    b = cls(epsilon=1.0, sensitivity=1.0, lower=37.25, upper=37.25 + 5000.0).exact_plan
    c = cls(epsilon=1.0, sensitivity=1.0, lower=-1e5, upper=4e5).exact_plan
    assert a.kernel is b.kernel is c.kernel
    assert a.certified_epsilon <= 1.0


@pytest.mark.parametrize("cls,lo,hi", [(bndp.BoundedLaplace, 0.0, 120.0),
                                       (bndp.BoundedLaplace, 0.0, 1e5),
                                       (bndp.BoundedLaplace, 0.0, 5e5),
                                       (bndp.BoundedLaplace, 0.0, 3.0),
                                       (bndp.BoundedGaussian, 0.0, 120.0),
                                       (bndp.BoundedGaussian, 0.0, 3.0),
                                       (bndp.BoundedGaussian, 0.0, 1e5)])
def test_variance_no_more_than_the_continuous_law(cls, lo, hi):
    """The default law's variance is within 2 % of the continuous law's (the tight
    calibration for the Gaussian) or below it, at a bound and in the middle, and does not
    grow with the range."""
    kw = dict(epsilon=1.0, sensitivity=1.0, lower=lo, upper=hi)
    g = cls(**kw)
    if cls is bndp.BoundedGaussian:
        c = cls(**kw, mode="continuous", sigma_rule="tight")
    else:
        c = cls(**kw, mode="continuous")
    for v in (lo, 0.5 * (lo + hi)):
        vg, vc = g.variance(v), c.variance(v)
        assert vg <= 1.02 * vc, (v, vg, vc)


def test_variance_of_the_grid_law_matches_its_samples():
    m = bndp.BoundedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=1e5)
    x = m.sample(np.zeros(400_000), rng=9)
    v = m.variance(0.0)
    assert abs(np.var(x) / v - 1) < 0.03
    assert abs(np.mean(x) - m.mean(0.0)) < 0.02


def test_per_row_gaussian_means_per_row_laws():
    """Array bounds shaped like the values are per-row univariate laws for "gaussian" as
    for "laplace"; the box only with multivariate=True (the same draws as the mechanism)."""

    v = np.array([3.0, 5.0])
    lo, hi = np.array([0.0, 1.0]), np.array([10.0, 9.0])
    out = bndp.sample(np.tile(v, (50_000, 1)), mechanism="gaussian", epsilon=1.0,
                      sensitivity=1.0, lower=lo, upper=hi, rng=4)
    assert out.shape == (50_000, 2) and (out >= lo).all() and (out <= hi).all()
    for j in range(2):
        plan = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=lo[j], upper=hi[j]).exact_plan
        assert chi2_pvalue(grid_counts(plan, out[:, j]), plan.pmf(v[j])) > 1e-4
    box = bndp.sample([[3.2, 4.0], [9.9, 1.0]], mechanism="gaussian", epsilon=1.0,
                      sensitivity=2 * 5 ** 0.5, lower=[0, 1], upper=[10, 9], rng=7,
                      multivariate=True)
    ref = bndp.BoundedGaussian(1.0, sensitivity=2 * 5 ** 0.5, lower=[0, 1], upper=[10, 9]).sample(
        [[3.2, 4.0], [9.9, 1.0]], rng=7)
    assert np.array_equal(box, ref)
    with pytest.raises(ValueError, match="multivariate"):
        bndp.sample([1.0], mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=[0.0],
                    upper=[2.0], multivariate=True)


@pytest.mark.parametrize("mech", ["laplace", "gaussian"])
def test_many_distinct_pairs_each_row_follows_its_law(mech):
    """10^4 distinct (lower, upper) pairs, narrow and wide rows, arbitrary positions: every
    draw lies on its own row's grid, and the rows of one pair follow that pair's law."""

    r = np.random.default_rng(8)
    pairs = 10_000
    centre = np.round(r.uniform(-500.0, 1e4, pairs), 2)
    half = np.round(np.exp(r.uniform(np.log(0.5), np.log(300.0), pairs)), 2)
    pick = r.integers(0, pairs, 200_000)
    pick[:60_000] = 17                        # one pair with many rows, for the law check
    lo, hi = centre[pick] - half[pick], centre[pick] + half[pick]
    vals = r.uniform(lo, hi)
    vals[:60_000] = lo[0] + 0.25 * (hi[0] - lo[0])
    out = bndp.sample(vals, mechanism=mech, epsilon=1.0, sensitivity=1.0, lower=lo,
                      upper=hi, rng=5)
    assert ((out >= lo) & (out <= hi)).all()
    cls = bndp.BoundedLaplace if mech == "laplace" else bndp.BoundedGaussian
    for k in r.choice(np.arange(60_000, 200_000), 200, replace=False):
        plan = cls(1.0, sensitivity=1.0, lower=float(lo[k]), upper=float(hi[k])).exact_plan
        grid_counts(plan, out[k:k + 1])        # on that row's grid
    plan = cls(1.0, sensitivity=1.0, lower=float(lo[0]), upper=float(hi[0])).exact_plan
    assert chi2_pvalue(grid_counts(plan, out[:60_000]), plan.pmf(vals[0])) > 1e-4


def test_per_row_gaussian_through_a_release_spec():
    pd = pytest.importorskip("pandas")
    r = np.random.default_rng(2)
    lo = np.round(r.uniform(0.0, 50.0, 500), 1)
    df = pd.DataFrame({"x": lo + 3.0, "lo": lo, "hi": lo + 20.0})
    spec = {"x": {"mechanism": "gaussian", "lower": "lo", "upper": "hi", "sensitivity": 1.0,
                  "epsilon": 1.0}}
    out = bndp.privatize(df, spec, rng=3)
    assert out["x"].between(df["lo"], df["hi"]).all()
    with pytest.raises(ValueError, match="delta"):
        bndp.privatize(df, {"x": dict(spec["x"], delta=1e-5)}, rng=3)


@pytest.mark.parametrize("fam", [0, 1])
def test_tail_keeps_the_model_kernel_log_concave(fam):
    """The certificate's premise: the tail decays at least as fast as the table's last step
    (so the model kernel is log-concave and the worst output is the row's end), and no
    faster than 2^-19 (relative) beyond the kernel's next step (no noise wasted)."""
    rng = np.random.default_rng(41 + fam)
    for _ in range(300):
        t = float(np.exp(rng.uniform(np.log(0.7), np.log(5e4))))
        cert, shape, cum = _testing.gw_eval(fam, t, 1 << 40, 4, True, table=True)
        if shape is None:
            continue
        N, tail, kexp, tailw, sbits, tm, _ = shape
        assert tail
        x = math.ldexp(tm, -sbits)                # 1 - p
        if fam == 0:
            last = nxt = 1.0 / t
        else:
            last, nxt = (2 * N - 1) / (2 * t * t), (2 * N + 1) / (2 * t * t)
        assert -math.log1p(-x) >= last            # concave at the junction and beyond
        assert x <= -math.expm1(-nxt) * (1 + 2.0 ** -19)


@pytest.mark.parametrize("fam", [0, 1])
def test_wide_certificate_at_a_realistic_scale(fam):
    """The calibrated kernel of epsilon = 1, sensitivity 1 (16 grid steps) against the
    exhaustive loss of rows of n_wide and 2 n_wide + 1 intervals (2^-24 tails)."""
    law = window.plan_wide(fam, 1.0, 1.0)
    for n in (law.n_min, 2 * law.n_min + 1):
        lw = kernel_weights(law.cum, law.N, law.tailw, law.sbits, law.tm, n)
        exact = exhaustive_loss(lw, n, law.dk)
        assert law.certified_epsilon >= exact - 1e-12
        assert law.certified_epsilon - exact <= 1e-6


@pytest.mark.parametrize("cls", [bndp.BoundedLaplace, bndp.BoundedGaussian])
def test_extreme_parameters_release_soundly_or_refuse_clearly(cls):
    """Huge or tiny sensitivities, epsilons and widths: a certified release at about the
    continuous scale, or a ValueError naming the parameter; never a RuntimeError, never a
    silent blow-up of the scale."""
    import warnings
    ok = [dict(sensitivity=1e160), dict(sensitivity=1e5), dict(epsilon=1e-6),
          dict(epsilon=50.0), dict(lower=0.0, upper=1e-10), dict(lower=-1e6, upper=4e6)]
    for kw in ok:
        a = {**dict(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=120.0), **kw}
        with warnings.catch_warnings():
            warnings.simplefilter("error")         # no coarsening here
            m = cls(**a)
        x = m.sample(np.array([a["lower"], a["upper"]]), rng=1)
        assert ((x >= a["lower"]) & (x <= a["upper"])).all()
        assert m.privacy_loss() <= a["epsilon"]
        width = a["upper"] - a["lower"]
        # the scale never exceeds what the width and the continuous law would need
        cont = cls(**a, mode="continuous")
        ref = cont.scale if cls is bndp.BoundedLaplace else cont.sigma
        assert m.exact_plan.scale <= 1.01 * max(ref, 0.0) or m.exact_plan.scale <= width, kw
    # far from 0: a coarser grid with a warning, or a ValueError naming the sensitivity
    with pytest.warns(RuntimeWarning, match="coarser grid"):
        m = cls(epsilon=1.0, sensitivity=1.0, lower=1e15, upper=1e15 + 1000.0)
    assert m.exact_plan.gamma == 0.125 and m.privacy_loss() <= 1.0
    for lo, hi, dq in ((0.0, 1e16, 1.0), (-1e300, 1e300, 1.0), (0.0, 120.0, 1e-160)):
        with pytest.raises(ValueError, match="sensitivity"):
            cls(epsilon=1.0, sensitivity=dq, lower=lo, upper=hi)


def test_kernel_cache_is_shared_safely_by_threads(monkeypatch):
    """Threads planning and evicting kernels at once (a small cache forces evictions)."""
    import threading
    monkeypatch.setattr(window, "MAX_LAWS", 4)
    errors = []

    def work(k):
        try:
            for j in range(40):
                eps = 1.0 + 1e-7 * ((k * 40 + j) % 9)
                m = bndp.BoundedLaplace(eps, sensitivity=1.0, lower=0.0, upper=50.0 + j % 3)
                assert 0.0 <= m.sample(3.0, rng=j) <= 50.0 + j % 3
        except Exception as exc:       # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(window._LAWS) <= 4


# ---------------------------------------------------------------------------------------
# Large epsilon: a bounded kernel, certified
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dq", [1.0, 1.9, 3.0, 1e-3, 7e5])
def test_serving_target_caps_the_grid_and_keeps_every_smaller_target(dq):
    cap = window.serving_target(1e300, dq)
    assert 2.0 ** 16 < cap <= 2.0 ** 17
    for eps in (1e-12, 1.0, 1e3, 0.999 * cap, cap):
        assert window.serving_target(eps, dq) == eps         # those laws are unchanged
    for eps in (cap * (1 + 1e-15), 1e6, 1e300):
        assert window.serving_target(eps, dq) == cap
    # the cap's grid holds at most 2^21 steps per sensitivity
    e, _ = window._exponent1(cap, dq, 0.0, math.inf)
    assert math.ceil(math.ldexp(dq, -e)) <= 2 ** window.STEPS_LOG2
    for bad in (math.inf, math.nan, -1.0):                   # left to the callers' checks
        got = window.serving_target(bad, dq)
        assert got == bad or (math.isnan(got) and math.isnan(bad))


@pytest.mark.parametrize("cls", [bndp.BoundedLaplace, bndp.BoundedGaussian])
def test_large_epsilon_is_served_by_one_bounded_certified_kernel(cls):
    """epsilon far beyond the cap: the kernel of the cap (its size bounded, its certificate
    below epsilon), the same for every such epsilon; releases on the grid, in the bounds."""
    kernels = []
    for eps in (1e6, 1e8, 1e15, 1e300):
        m = cls(epsilon=eps, sensitivity=1.0, lower=0.0, upper=120.0)
        k = m.exact_plan.kernel
        assert k.dk <= 2 ** window.STEPS_LOG2 and k.N <= 2 ** 20
        assert m.privacy_loss() <= window.serving_target(eps, 1.0) <= eps
        x = m.sample(np.array([0.0, 30.0, 120.0]), rng=3)
        assert ((x >= 0) & (x <= 120)).all()
        assert (x * 2.0 ** -k.exponent % 1 == 0).all()
        kernels.append(k)
    assert all(k is kernels[0] for k in kernels)
    # no coarsening warning: bounds near 0 keep their grid whatever epsilon
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cls(epsilon=1e300, sensitivity=1.0, lower=0.0, upper=120.0)


@pytest.mark.parametrize("fam", [window.LAPLACE, window.GAUSSIAN])
@pytest.mark.parametrize("dk, n", [(8, 64), (3, 40), (40, 40)])
def test_huge_target_kernel_against_the_exhaustive_oracle(fam, dk, n):
    """A target no kernel reaches (noise far below the grid step): the search stops at the
    most concentrated kernel it can represent, whose certificate still bounds the exact
    loss of the sampled law."""
    law = window._law(fam, 2.0 ** 17, dk, -3, n)
    lw = kernel_weights(law.cum, law.N, law.tailw, law.sbits, law.tm, n)
    exact = exhaustive_loss(lw, n, dk)
    assert law.certified_epsilon <= 2.0 ** 17
    assert law.certified_epsilon >= exact - 1e-12
    assert law.certified_epsilon > 5.0 * dk        # the law is far more concentrated than at eps=1


def test_large_epsilon_plans_within_a_memory_limit(tmp_path):
    """Every 1-D mechanism plans a huge epsilon in a process limited to 1 GiB of address
    space (the kernel's table and certificate are bounded; before, epsilon = 1e8 asked for
    about 100 GB)."""
    import subprocess
    import sys
    from .conftest import bndp_import_root
    code = r"""
import resource, numpy as np
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
import bndp
for eps in (1e7, 1e8, 1e300):
    for m in (bndp.BoundedLaplace(epsilon=eps, sensitivity=1, lower=0, upper=120),
              bndp.BoundedGaussian(epsilon=eps, sensitivity=1, lower=0, upper=120),
              bndp.BoundedLaplace(epsilon=eps, sensitivity=1, lower=0, upper=np.inf)):
        assert m.privacy_loss() <= eps
    for mech in ("laplace", "gaussian"):
        bndp.sample(np.array([3.0, 50.0]), mechanism=mech, epsilon=eps, sensitivity=1.0,
                    lower=np.array([0.0, -5.0]), upper=np.array([10.0, 1e6]), rng=1)
print("ok")
"""
    env = {**__import__("os").environ, "PYTHONPATH": bndp_import_root(),
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def _assert_compiled_rows_match_grouped(fam, target, q, lo, hi):
    """The compiled per-row passes give the grouped loop's values and leave the generator
    in the same state."""
    g1, g2 = np.random.default_rng(4), np.random.default_rng(4)
    got = window._sample_rows_compiled(fam, target, 1.0, q, lo, hi, g1)
    want = _grouped_reference(fam, target, 1.0, q, lo, hi, g2)
    np.testing.assert_array_equal(got, want)
    assert g1.random() == g2.random()


def _draw(law, q, lo, hi, n, gen):
    """One gw_fill of the kernel ``law`` on the rows ``q, lo, hi, n`` (in row order)."""
    tree, levels = law.search_tree
    out = np.empty(q.shape[0])
    _window.gw_fill(gen, tree, levels, law.N, law.tailw, law.sbits, law.tm, law.exponent,
                  q, lo, hi, n, out)
    return out


def _grouped_reference(fam, target, dq, q, lo, hi, gen):
    """Per-row draws by the grouped loop: first the wide kernel of the exponent of rows near
    0 (plan_wide's) on its rows, then the other rows grouped by exponent, then by kernel
    (the wide kernel first, narrow kernels by n; the narrow rows on the wide kernel with the
    first of them), one gw_fill per table on its rows in row order."""
    e, coarse = window.grid_exponent(target, dq, hi - lo, lo, hi)
    e = np.broadcast_to(e, q.shape)
    out = np.empty(q.shape[0])
    e0 = window._exponent1(target, dq, 0.0, math.inf)[0]
    dk0 = max(1, math.ceil(math.ldexp(dq, -e0)))
    first = window._law(fam, target, dk0, e0, None)
    served = serving._served_map(first, fam, target, dk0)
    if served is None:
        served = np.zeros(first.n_min, dtype=np.uint8)

    def drawn_first(n):   # the wide rows and the narrow rows the wide kernel serves
        return (n >= first.n_min) | (served[np.clip(n, 0, first.n_min - 1)] != 0)

    sel0 = np.flatnonzero(e == e0)
    n0 = _window.gw_intervals(lo[sel0], hi[sel0], e0)
    rows0 = sel0[drawn_first(n0)]
    if rows0.size:
        out[rows0] = _draw(first, q[rows0], lo[rows0], hi[rows0], n0[drawn_first(n0)],
                                  gen)
    for ev in np.unique(e):
        ev = int(ev)
        sel = np.flatnonzero(e == ev)
        n = _window.gw_intervals(lo[sel], hi[sel], ev)
        dk = max(1, math.ceil(math.ldexp(dq, -ev)))
        wide = None if np.all(serving._surely_narrow(fam, target, dk, n)) else \
            window._law(fam, target, dk, ev, None)
        narrow = np.ones(n.shape, bool) if wide is None else n < wide.n_min
        if ev == e0:
            narrow &= ~drawn_first(n)
        groups = [] if wide is None or ev == e0 else [(wide, sel[~narrow], n[~narrow])]
        for nn in np.unique(n[narrow]):
            m = narrow & (n == nn)
            groups.append((window._law(fam, target, min(dk, int(nn)), ev, int(nn)), sel[m], n[m]))
        # the groups of one table (narrow rows on the wide kernel) are one group, at the
        # wide kernel's place (the first of the exponent's), its rows in row order
        merged: dict = {}
        for law, rows, nr in groups:
            if id(law.cum) in merged:
                law0, rows0, nr0 = merged[id(law.cum)]
                rows, nr = np.concatenate((rows0, rows)), np.concatenate((nr0, nr))
                o = np.argsort(rows, kind="stable")
                law, rows, nr = law0, rows[o], nr[o]
            merged[id(law.cum)] = (law, rows, nr)
        for law, rows, nr in merged.values():
            if rows.size:
                out[rows] = _draw(law, q[rows], lo[rows], hi[rows], nr, gen)
    return out


@pytest.mark.parametrize("fam", [window.LAPLACE, window.GAUSSIAN])
def test_per_row_compiled_passes_draw_the_grouped_stream(fam):
    # the three compiled passes (gw_rows_grid, gw_rows_kernels, gw_fill_groups) give the
    # draws and the stream of one gw_fill per kernel: mixed exponents, wide and narrow rows
    r = np.random.default_rng(11)
    k = 3000
    lo = np.round(r.uniform(-50.0, 50.0, k), 1)
    hi = lo + r.choice([0.75, 3.0, 7.5, 20.0, 40.0, 150.0, 900.0, 3e3], k)
    q = r.uniform(lo - 1.0, hi + 1.0)
    q = np.clip(q, lo, hi)
    target = window.serving_target(0.5, 1.0)
    assert np.unique(window.grid_exponent(target, 1.0, hi - lo, lo, hi)[0]).size > 1
    # and rows that one wide kernel serves (the one-kernel path)
    lo1 = np.zeros(k)
    hi1 = r.choice([1000.0, 1200.0, 1500.0], k)
    for q, lo, hi in ((q, lo, hi), (r.uniform(lo1, hi1), lo1, hi1)):
        _assert_compiled_rows_match_grouped(fam, target, q, lo, hi)


def test_fill_groups_refuses_rows_inconsistent_with_their_kernels():
    # gw_fill_groups draws kernel 0's rows where they lie and copies the others by kernel:
    # counts that do not match the rows' groups, a group out of range, or a row the kernel
    # does not serve are refused before anything is returned (never a write out of range)
    fam, target = window.LAPLACE, window.serving_target(1.0, 1.0)
    r = np.random.default_rng(2)
    k = 600
    lo = np.zeros(k)
    hi = r.choice([20.0, 30.0, 500.0], k)
    q = r.uniform(lo, hi)
    e, coarse, n, evals, nmax, idx, _ = _rows.gw_rows_grid(
        target, 1.0, lo, hi, window.SCALE_STEPS, window.WINDOW_WIDTH_STEPS, window.SENS_STEPS, q)
    assert evals.size == 1
    ev = int(evals[0])
    dk = max(1, math.ceil(math.ldexp(1.0, -ev)))
    wide = window._law(fam, target, dk, ev, None)
    group, keys, counts = _rows.gw_rows_kernels(e, n, evals, np.array([wide.n_min]))
    assert len(keys) == 3 and keys[0, 1] == 0
    laws = [(wide if nn == 0 else window._law(fam, target, min(dk, nn), ev, nn)).fill_args
            for _, nn in keys.tolist()]
    out = np.empty(k)
    gen = np.random.default_rng(0)
    _rows.gw_fill_groups(gen, laws, group, idx, lo, n, out, counts)
    assert np.all((out >= lo) & (out <= hi))
    bad_counts = [counts + np.array([1, -1, 0]), counts + np.array([-1, 1, 0]),
                  counts + np.array([0, 1, -1]), counts + np.array([0, -1, 1])]
    for c in bad_counts:
        with pytest.raises(ValueError, match="does not serve"):
            _rows.gw_fill_groups(gen, laws, group, idx, lo, n, out, c)
    g2 = group.copy()
    g2[-1] = 3
    with pytest.raises(ValueError, match="does not serve"):
        _rows.gw_fill_groups(gen, laws, g2, idx, lo, n, out, counts)
    i2 = idx.copy()
    i2[np.flatnonzero(group == 1)[0]] = n[np.flatnonzero(group == 1)[0]] + 1
    with pytest.raises(ValueError, match="does not serve"):
        _rows.gw_fill_groups(gen, laws, group, i2, lo, n, out, counts)
    # with positions: the rows are rows pos of a longer column, drawn as the same rows
    # alone (the same stream), written at pos with their lower bounds lo[pos]
    pos = np.sort(r.choice(3 * k, k, replace=False))
    lo3 = np.full(3 * k, np.nan)
    lo3[pos] = lo
    out3 = np.full(3 * k, -1.0)
    _rows.gw_fill_groups(np.random.default_rng(9), laws, group, idx, lo3, n, out3, counts, pos)
    _rows.gw_fill_groups(np.random.default_rng(9), laws, group, idx, lo, n, out, counts)
    np.testing.assert_array_equal(out3[pos], out)
    assert np.all(np.delete(out3, pos) == -1.0)
    one = np.flatnonzero(group == 1)          # one kernel's rows (its own loop)
    o1 = np.full(3 * k, -1.0)
    _rows.gw_fill_groups(np.random.default_rng(9), [laws[1]], np.zeros(one.size, np.int32),
                         idx[one], lo3, n[one], o1, np.array([one.size]), pos[one])
    ref1 = np.empty(one.size)
    _rows.gw_fill_groups(np.random.default_rng(9), [laws[1]], np.zeros(one.size, np.int32),
                         idx[one], lo[one], n[one], ref1, np.array([one.size]))
    np.testing.assert_array_equal(o1[pos[one]], ref1)
    assert np.count_nonzero(o1 != -1.0) == one.size
    for bad in (3 * k, -1):
        p2 = pos.copy()
        p2[5] = bad
        with pytest.raises(ValueError, match="outside the column"):
            _rows.gw_fill_groups(gen, laws, group, idx, lo3, n, out3, counts, p2)


def test_fill_groups_remap_draws_the_merged_groups():
    # remap: groups drawn as the kernels remap[group] (laws and counts of the merged
    # groups): the draws and the stream of the group array remapped beforehand; a remap
    # out of range, or one that leaves a row's group out, is refused
    fam, target = window.LAPLACE, window.serving_target(1.0, 1.0)
    r = np.random.default_rng(3)
    k = 900
    lo = np.zeros(k)
    hi = r.choice([20.0, 30.0, 45.0, 500.0], k)
    q = r.uniform(lo, hi)
    e, coarse, n, evals, nmax, idx, _ = _rows.gw_rows_grid(
        target, 1.0, lo, hi, window.SCALE_STEPS, window.WINDOW_WIDTH_STEPS, window.SENS_STEPS, q)
    ev = int(evals[0])
    dk = max(1, math.ceil(math.ldexp(1.0, -ev)))
    wide = window._law(fam, target, dk, ev, None)
    group, keys, counts = _rows.gw_rows_kernels(e, n, evals, np.array([wide.n_min]))
    assert len(keys) == 4
    laws = [(wide if nn == 0 else window._law(fam, target, min(dk, nn), ev, nn)).fill_args
            for _, nn in keys.tolist()]
    remap = np.array([0, 1, 0, 1], dtype=np.int32)        # groups 2, 3 join 0, 1
    merged = np.bincount(remap, weights=counts).astype(np.int64)
    mlaws = [laws[0], laws[1]]
    want = np.empty(k)
    g1 = np.random.default_rng(5)
    _rows.gw_fill_groups(g1, mlaws, remap[group], idx, lo, n, want, merged)
    got = np.empty(k)
    g2 = np.random.default_rng(5)
    _rows.gw_fill_groups(g2, mlaws, group, idx, lo, n, got, merged, None, remap)
    np.testing.assert_array_equal(got, want)
    assert g1.random() == g2.random()
    for bad in (np.array([0, 1, 0, 2], dtype=np.int32), np.array([0, 1, 0], dtype=np.int32)):
        with pytest.raises(ValueError, match="out of range|does not serve"):
            _rows.gw_fill_groups(g2, mlaws, group, idx, lo, n, got, merged, None, bad)


def test_per_row_grid_pass_matches_grid_exponent_and_intervals():
    # gw_rows_grid against the NumPy grid_exponent and gw_intervals, row by row: tiny and
    # huge widths, bounds far from 0 (coarsened grids), subnormal widths, a zero width
    r = np.random.default_rng(5)
    k = 4000
    # rows just below a power of two whose upper bound crosses it (the bound's coarser ulp
    # leaves the lower bound off the grid)
    cross = np.ldexp(1.0, r.integers(40, 52, 200)) - r.uniform(0.25, 50.0, 200)
    lo = np.concatenate([r.uniform(-1e3, 1e3, k), r.uniform(1e14, 1e16, k),
                         np.full(50, 1e-310), r.uniform(-1.0, 1.0, 50), cross])
    w = np.concatenate([10.0 ** r.uniform(-6, 6, k), 10.0 ** r.uniform(0, 5, k),
                        np.full(50, 4e-310), np.zeros(50), r.uniform(60.0, 200.0, 200)])
    hi = lo + w
    for target, dq in ((0.7, 1.0), (3.0, 0.37), (0.01, 1e-3), (50.0, 2.5e4)):
        e, coarse, n, evals, nmax = _rows.gw_rows_grid(target, dq, lo, hi, window.SCALE_STEPS,
                                                       window.WINDOW_WIDTH_STEPS, window.SENS_STEPS)
        e_ref, c_ref = window.grid_exponent(target, dq, hi - lo, lo, hi)
        np.testing.assert_array_equal(e, e_ref)
        np.testing.assert_array_equal(coarse, c_ref)
        ok = (e >= -1022) & (e <= 1000)
        for ev in np.unique(e[ok]):
            s = e == ev
            np.testing.assert_array_equal(n[s], _window.gw_intervals(lo[s], hi[s], int(ev)))
        np.testing.assert_array_equal(evals, np.unique(e[ok]))
        np.testing.assert_array_equal(nmax, [n[e == ev].max() for ev in evals])
        # with true values: the same five results and every row's grid index (gw_index;
        # values outside the row, NaN, 0 in rows without intervals)
        q = r.uniform(lo - 0.5 * w, hi + 0.5 * w)
        q[::97] = np.nan
        q[1::89] = lo[1::89] + 0.5 * (hi[1::89] - lo[1::89])
        got = _rows.gw_rows_grid(target, dq, lo, hi, window.SCALE_STEPS,
                                 window.WINDOW_WIDTH_STEPS, window.SENS_STEPS, q)
        for a, b in zip(got[:5], (e, coarse, n, evals, nmax)):
            np.testing.assert_array_equal(a, b)
        idx = got[5]
        assert not idx[~ok | (n < 1)].any()
        assert got[6] == (e.min(), e.max(), coarse.any(), n.min())
        for ev in np.unique(e[ok]):
            s = (e == ev) & (n >= 1)
            np.testing.assert_array_equal(idx[s], _window.gw_index(q[s], lo[s], hi[s], int(ev),
                                                                n[s]))


def test_per_row_grid_pass_summary_of_one_exponent_blocks():
    # blocks of rows of one exponent are summarised at once (largest n per exponent, the
    # smallest and largest exponent, the coarse flag, the smallest n): the same summary as
    # row by row, with blocks of one exponent, blocks holding a row of another, and the
    # largest and smallest n of an exponent in different blocks
    r = np.random.default_rng(8)
    k = 5000
    lo = r.uniform(0.0, 1.0, k)
    hi = lo + r.uniform(50.0, 60.0, k)
    hi[700] = lo[700] + 61.0           # the largest n, inside a block of one exponent
    hi[2100] = lo[2100] + 45.0         # the smallest n
    hi[3001] = lo[3001] + 3.0          # another exponent inside a block
    lo[4500], hi[4500] = 1e15, 1e15 + 60.0      # a coarse row
    q = r.uniform(lo, hi)
    target, dq = 0.7, 1.0
    e, coarse, n, evals, nmax, idx, summary = _rows.gw_rows_grid(
        target, dq, lo, hi, window.SCALE_STEPS, window.WINDOW_WIDTH_STEPS, window.SENS_STEPS, q)
    e_ref, c_ref = window.grid_exponent(target, dq, hi - lo, lo, hi)
    np.testing.assert_array_equal(e, e_ref)
    np.testing.assert_array_equal(coarse, c_ref)
    assert np.count_nonzero(e == e[0]) == k - 2 and e[3001] != e[0] and e[4500] != e[0]
    np.testing.assert_array_equal(evals, np.unique(e))
    np.testing.assert_array_equal(nmax, [n[e == ev].max() for ev in evals])
    assert n[700] == nmax[list(evals).index(e[0])]
    assert n[2100] == n[e == e[0]].min()
    assert summary == (e.min(), e.max(), True, n.min())


@pytest.mark.parametrize("fam", [window.LAPLACE, window.GAUSSIAN])
def test_guided_search_draws_the_tree_search_values(fam):
    # large fills search the table through a guide (bndp_gd_search_guide): the same values
    # and stream as the tree search of the small-array path (GwRow, blocks of 4096 values),
    # rows at the ends and in the middle, light tails included
    r = np.random.default_rng(21)
    for eps, lo, hi in ((1.0, 0.0, 120.0), (0.3, -5.0, 7.5), (4.0, 0.0, 1e3)):
        plan = window.plan_row(fam, window.serving_target(eps, 1.0), 1.0, lo, hi)
        q = np.concatenate((r.uniform(lo, hi, 150_000), np.full(20_000, lo),
                            np.full(20_000, hi), r.uniform(lo, lo + 3.0, 10_000)))
        g1, g2 = np.random.default_rng(8), np.random.default_rng(8)
        big = plan.sample(q, None, g1)
        small = np.concatenate([plan.row.sample(q[a:a + 4096], None, g2, "clip", 1, None)
                                for a in range(0, q.size, 4096)])
        np.testing.assert_array_equal(big, small)
        assert g1.random() == g2.random()
    # per-row bounds: the compiled passes (guides for the kernels of many rows) against
    # one gw_fill per kernel (tree search)
    k = 120_000
    lo = np.round(r.uniform(-50.0, 50.0, k), 1)
    hi = lo + r.choice([3.0, 20.0, 150.0, 900.0], k)
    q = np.clip(r.uniform(lo - 1.0, hi + 1.0), lo, hi)
    target = window.serving_target(0.5, 1.0)
    _assert_compiled_rows_match_grouped(fam, target, q, lo, hi)


def test_per_row_bounds_far_from_zero_warn_or_refuse():
    # the compiled passes' summary (smallest and largest exponent, any coarse row) sends
    # such rows to the checks of grid_exponent: a coarser grid with a warning, or a
    # ValueError naming the sensitivity
    kw = dict(mechanism="laplace", epsilon=1.0, sensitivity=1.0, rng=1)
    with pytest.warns(RuntimeWarning, match="coarser grid"):
        x = bndp.sample(np.array([1.0, 1e15 + 10.0]), lower=np.array([0.0, 1e15]),
                        upper=np.array([10.0, 1e15 + 1000.0]), **kw)
    assert 0.0 <= x[0] <= 10.0 and 1e15 <= x[1] <= 1e15 + 1000.0
    for hi1 in (1e16, 1e300):
        with pytest.raises(ValueError, match="sensitivity"):
            bndp.sample(np.array([1.0, 2.0]), lower=np.array([0.0, 0.0]),
                        upper=np.array([10.0, hi1]), **kw)
    # a row whose width overflows to inf (finite bounds) is refused the same way
    with pytest.raises(ValueError, match="sensitivity"):
        bndp.sample(np.array([1.0, 2.0]), lower=np.array([0.0, -1.7e308]),
                    upper=np.array([10.0, 1.7e308]), **kw)


@pytest.mark.parametrize("fam", [window.LAPLACE, window.GAUSSIAN])
@pytest.mark.parametrize("target,dk,wide,n", [(0.05, 1, True, None), (1.0, 3, True, None),
                                              (4.0, 16, True, None), (0.3, 1, False, 40),
                                              (1.0, 1, False, 40), (2.0, 4, False, 300)])
def test_gw_calibrate_returns_the_smallest_certified_scale(fam, target, dk, wide, n):
    # the scale search (power-law bracket, then the core's root finder on ln t) stops at
    # the relative tolerance: the scale is certified, and either its loss is within
    # rel of the target or a scale 2 rel smaller is not certified
    rel = 1e-7
    nn = 1 << 40 if n is None else n
    t0 = 3.0 * dk / target
    t, cert, _, _ = _calibrate.gw_calibrate(fam, target, t0, nn, dk, wide, rel)
    assert cert <= target
    assert _testing.gw_eval(fam, t, nn, dk, wide)[0] == cert
    if cert < target * (1.0 - rel):
        assert _testing.gw_eval(fam, t * (1.0 - 2.0 * rel), nn, dk, wide)[0] > target


def test_grid_family_codes_are_the_laws_constants():
    # the compiled grid laws' family codes are those the Python layer passes as `fam`, and
    # each code selects its kernel in the weight table
    from bndp._laws.constants import FAMILY_NAMES, GAUSSIAN, LAPLACE

    assert _certify_grid.FAMILY_CODES == {name: code for code, name in FAMILY_NAMES.items()}
    d = np.abs(np.arange(-3, 4, dtype=np.float64))
    for fam, kernel in ((LAPLACE, np.exp(-d / 2.0)), (GAUSSIAN, np.exp(-0.5 * (d / 2.0) ** 2))):
        cum = _certify_grid.gd_table(fam, 2.0, 3, 20, 0)
        np.testing.assert_array_equal(np.diff(cum), np.rint(np.ldexp(kernel, 20)).astype(np.uint64))
