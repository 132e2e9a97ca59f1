# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Tables and certificates of the grid laws: the whole-range table and
its shift losses, the losses of the law on an allowed set with gaps, and the windowed law's
shape, table and certificate.
"""

import numpy as _np

from bndp._core.common cimport *
from bndp._core.grid cimport *
from bndp._core.certify_rows cimport *

# the family codes that `fam` takes (those of bndp._laws.constants)
FAMILY_CODES = {"laplace": FAM_LAPLACE, "gaussian": FAM_GAUSSIAN}
# the pair sets that a set law's certificates take as `which` (certify_grid.pxd)
PAIR_SETS = {"all": PAIRS_ALL, "gap": PAIRS_GAP, "span": PAIRS_SPAN}

# Kernels of the windowed grid law (bndp/_laws/window.py): the default release of the
# bounded Laplace and the univariate bounded Gaussian, one table for every row whose width
# it serves, per-row bounds without limit.
#
# The law. A row is an interval [lo, hi] with n = floor((hi - lo) / gamma) grid intervals,
# gamma = 2^e; its outputs are fl(lo + j gamma), j = 0..n (lo is public, so the attainable
# set does not depend on the true value). The kernel w(d), d in Z, is the integer table
# W[d + N] = rint(2^K kernel(d)), |d| <= N (kernel exp(-|d|/t) or exp(-d^2/(2 t^2))), and,
# when the table does not cover the row, a geometric tail on each side:
# w(+-(N + k)) = B (m 2^-s) p^(k - 1), k >= 1, p = 1 - m 2^-s, of integer total B per side.
# For input index i, P(j | i) = w(j - i) / S(i), S(i) = sum_{j=0..n} w(j - i).
#
# A draw: U uniform below the mass of the table window [max(-i, -N), min(n - i, N)] plus a
# whole tail block B on each side that the window does not reach (Lemire), then the table
# search of _grid_search.h, or (probability about 2^-24 at most) the geometric offset of a
# tail block; a tail offset beyond the row's end is refused and the row drawn again
# (rejection: the conditional law is exactly P(j | i)). Nothing but integer comparisons
# decides a draw that stays in the table.
#
# The certificate (_gw_eval) bounds the loss of that law for every pair of input indices at
# most dk apart; the proof is in docs/grid_laws.rst.


# Absolute bound on the rounding error of a computed shift loss (see _gd_shift_losses).


def gd_table(int fam, double u, int64_t n, int kexp, uint64_t floor_w):
    """Cumulative weight table (uint64, length 2n + 2) of the grid law.

    W[k] = rint(2^kexp * kernel(k - n)) + floor_w with kernel exp(-|d|/u) (fam 0, Laplace)
    or exp(-d^2/(2 u^2)) (fam 1, Gaussian); u is the scale in grid steps."""
    out = _np.empty(2 * n + 2, dtype=_np.uint64)
    cdef uint64_t[::1] c = out
    cdef int64_t k
    cdef double d, w
    cdef uint64_t acc = 0
    with nogil:
        c[0] = 0
        for k in range(2 * n + 1):
            d = fabs(<double> (k - n))
            if fam == FAM_LAPLACE:
                w = exp(-d / u)
            else:
                w = exp(-0.5 * (d / u) * (d / u))
            acc += (<uint64_t> nearbyint(ldexp(w, kexp))) + floor_w
            c[k + 1] = acc
    return out


cdef void _gd_shift_losses(const uint64_t* cum, int64_t n, int64_t dk, double* lnw,
                           double* lns, int64_t* dq, double* lam) noexcept nogil:
    # lam[delta - 1] >= max_{0 <= i <= n - delta, 0 <= j <= n} ln P(j|i) - ln P(j|i + delta).
    # With W symmetric (W[n + d] == W[n - d], bit for bit) and S(i) == S(n - i), the pair
    # (i + delta, i) is the mirror image of (n - i - delta, n - i): one order suffices.
    # ln P(j|i) - ln P(j|i+delta) = [lnW(d) - lnW(d - delta)] + [lnS(i+delta) - lnS(i)],
    # d = j - i in [-i, n - i]: a sliding-window maximum over d for each i (monotone deque).
    # Rounding (a proof, not a margin): W and S are integers <= 2^58; (double) W rounds to
    # nearest, a relative error |eta| <= 2^-53, which moves the logarithm by at most
    # |ln(1 + eta)| <= 2^-52. log() then errs by at most 1 ulp (the documented bound of glibc,
    # musl and the MSVC CRT), and |ln W|, |ln S| < 40.3 < 64 makes that ulp <= 2^-47. Each of
    # the two differences and the final sum is rounded to nearest: at most half an ulp of a
    # result below 128 in magnitude, 2^-47 each. The computed value therefore differs from the
    # exact log ratio by at most 4 * (2^-47 + 2^-52) + 3 * 2^-47 < 2^-44, and the maximum of
    # computed values is within the same bound of the exact maximum; GD_ERR = 2^-40 exceeds
    # it sixteenfold.
    cdef int64_t k, i, delta, p, head, tail, lo_p, hi_p
    cdef double v, best
    for k in range(2 * n + 1):
        lnw[k] = log(<double> (cum[k + 1] - cum[k]))
    for i in range(n + 1):
        lns[i] = log(<double> (cum[2 * n - i + 1] - cum[n - i]))
    for delta in range(1, dk + 1):
        best = -1e300
        if delta > n:
            lam[delta - 1] = lam[delta - 2] if delta >= 2 else 0.0
            continue
        head = 0
        tail = 0
        # window for i: p = d + n in [n - i, 2n - i]; i runs from n - delta down to 0
        hi_p = delta - 1
        for i in range(n - delta, -1, -1):
            lo_p = n - i
            while hi_p < 2 * n - i:
                hi_p += 1
                v = lnw[hi_p] - lnw[hi_p - delta]
                while tail > head and (lnw[dq[tail - 1]] - lnw[dq[tail - 1] - delta]) <= v:
                    tail -= 1
                dq[tail] = hi_p
                tail += 1
            while dq[head] < lo_p:
                head += 1
            p = dq[head]
            v = (lnw[p] - lnw[p - delta]) + (lns[i + delta] - lns[i])
            if v > best:
                best = v
        lam[delta - 1] = best + GD_ERR


def gd_shift_losses(const uint64_t[::1] cum, int64_t n, int64_t dk):
    """Certified per-shift losses lam[delta - 1], delta = 1..dk (see _gd_shift_losses)."""
    if cum.shape[0] != 2 * n + 2 or n < 1 or dk < 1:
        raise ValueError("gd_shift_losses: inconsistent table")
    if cum[2 * n + 1] > (<uint64_t> 1) << 58:
        raise ValueError("gd_shift_losses: table total exceeds 2^58")
    lam = _np.empty(dk)
    lnw = _np.empty(2 * n + 1)
    lns = _np.empty(n + 1)
    dqb = _np.empty(2 * n + 2, dtype=_np.int64)
    cdef double[::1] vl = lam, vw = lnw, vs = lns
    cdef int64_t[::1] vq = dqb
    with nogil:
        _gd_shift_losses(&cum[0], n, dk, &vw[0], &vs[0], &vq[0], &vl[0])
    return lam

cdef void _gd_window(const double* g, int64_t i_top, int64_t delta, int64_t a, int64_t b,
                     int64_t last, int64_t* dq, int64_t* dqn, double* wmax,
                     double* wmin) noexcept nogil:
    # For i = i_top down to 0: the max and min of g[p] over the window
    # p in [max(a - i, delta), min(b - i, last)] (both ends move right as i falls), folded
    # into wmax[i] and wmin[i]; two monotone deques.
    cdef int64_t i, lo, hi, hi_p, h1 = 0, t1 = 0, h2 = 0, t2 = 0
    cdef double v
    lo = a - i_top
    hi_p = (delta if lo < delta else lo) - 1
    for i in range(i_top, -1, -1):
        lo = a - i
        lo = delta if lo < delta else lo
        hi = b - i
        hi = last if hi > last else hi
        if hi < lo:
            continue
        while hi_p < hi:
            hi_p += 1
            v = g[hi_p]
            while t1 > h1 and g[dq[t1 - 1]] <= v:
                t1 -= 1
            dq[t1] = hi_p
            t1 += 1
            while t2 > h2 and g[dqn[t2 - 1]] >= v:
                t2 -= 1
            dqn[t2] = hi_p
            t2 += 1
        while dq[h1] < lo:
            h1 += 1
        while dqn[h2] < lo:
            h2 += 1
        if g[dq[h1]] > wmax[i]:
            wmax[i] = g[dq[h1]]
        if g[dqn[h2]] < wmin[i]:
            wmin[i] = g[dqn[h2]]


cdef uint64_t _gd_near_total(const uint64_t* cum, int64_t N, const int64_t* sa,
                             const int64_t* sb, int64_t m, uint64_t tailw, int64_t i) noexcept nogil:
    # S(i) of an input whose window holds every finite span end (0 <= i <= L)
    cdef int64_t s, lo, hi
    cdef uint64_t tot = 0
    for s in range(m):
        _gd_span_window(sa, sb, s, i, N, &lo, &hi)
        tot += cum[hi] - cum[lo]
    if sa[0] == -GD_INF:
        tot += tailw
    if sb[m - 1] == GD_INF:
        tot += tailw
    return tot


cdef double _gd_lnw_ext(const uint64_t* cum, int64_t N, double lnwn, double lnp,
                        int64_t d) noexcept nogil:
    # ln W(d): the table inside, ln W(N) + (|d| - N) ln p in a geometric tail
    cdef int64_t a = d if d >= 0 else -d
    if a <= N:
        return log(<double> (cum[d + N + 1] - cum[d + N]))
    return lnwn + (<double> (a - N)) * lnp


cdef bint _gd_set_spans(str name, int64_t N, int64_t L, const int64_t[::1] sa,
                       const int64_t[::1] sb, uint64_t tailw, int sbits) except -1:
    # the spans of a set law's certificate: ordered, disjoint, every finite span end in the
    # window [i - N, i + N] of every input i in [0, L]; True when the set is unbounded (it
    # then needs a geometric tail)
    cdef Py_ssize_t s, m = sa.shape[0]
    cdef bint tails = (sa[0] == -GD_INF) or (sb[m - 1] == GD_INF)
    if tails and not (tailw > 0 and 1 <= sbits <= 62):
        raise ValueError(name + ": an unbounded set needs a geometric tail")
    for s in range(m):
        if sb[s] < sa[s] or (s > 0 and sa[s] <= sb[s - 1]):
            raise ValueError(name + ": inconsistent spans")
        if (sa[s] > -GD_INF and not (L - N <= sa[s] <= N)) \
                or (sb[s] < GD_INF and not (L - N <= sb[s] <= N)):
            raise ValueError(name + ": a finite span end lies outside the inputs' windows")
    return tails


cdef inline void _gd_span_index(const int64_t* sa, const int64_t* sb, Py_ssize_t m, int64_t L,
                                int64_t* span) noexcept nogil:
    # span[k] = the span holding input k in [0, L] (entries of no span are left as they are)
    cdef Py_ssize_t s
    cdef int64_t k, lo, hi
    for s in range(m):
        lo = 0 if sa[s] < 0 else sa[s]
        hi = L if sb[s] > L else sb[s]
        for k in range(lo, hi + 1):
            span[k] = s


cdef inline bint _gd_pair_counts(int which, Py_ssize_t m, const int64_t* sa,
                                 const int64_t* sb, int64_t si, int64_t sk, int64_t i,
                                 int64_t k) noexcept nogil:
    # whether the pair of inputs i < k (in spans si, sk) is one the certificate ranges over:
    if which == PAIRS_GAP:
        return (si < m - 1 and i == sb[si]) or (sk > 0 and k == sa[sk])
    if which == PAIRS_SPAN:
        return si == sk
    return True


def gd_set_losses(const uint64_t[::1] cum, int64_t N, int64_t L, const int64_t[::1] sa,
                  const int64_t[::1] sb, uint64_t tailw, int sbits, int64_t dmin, int64_t dmax,
                  int which):
    """Certified losses of the set law: (lam, kappa), lam[delta - dmin] bounding
    max |ln P(j | i) - ln P(j | i + delta)| over allowed j and the pairs (i, i + delta) of
    allowed inputs in [0, L] selected by ``which`` (``PAIR_SETS``: "all" every pair; "gap"
    the pairs whose lower index ends a span that is not the last or whose upper index
    starts a span that is not the first; "span" the pairs inside one span; -inf where none
    is), and kappa[delta - dmin]
    bounding max over all offsets d of |ln W(d) - ln W(d - delta)| (tails included).

    Both directions are evaluated. With tails, ln W is extended by dmax + 1 tail entries on
    each side: beyond them both W(d) and W(d - delta) lie in one tail and their ratio is
    constant. Rounding: the argument of _gd_shift_losses, with a tail entry
    ln W(N) + k ln p (k <= dmax + 1, |k ln p| <= 64 checked): log1p errs by at most one
    ulp, k ln p and the sum are rounded once each, so such an entry is within
    2^-52 + 2^-47 + 2^-46 + 2^-47 < 2^-45 of the exact value and the total stays below
    2^-42 < GD_ERR."""
    cdef Py_ssize_t m = sa.shape[0], s
    if cum.shape[0] != 2 * N + 2 or N < 1 or L < 0 or dmin < 1 or dmax < dmin or m < 1 \
            or sb.shape[0] != m or which < PAIRS_ALL or which > PAIRS_SPAN:
        raise ValueError("gd_set_losses: inconsistent arguments")
    cdef bint tails = _gd_set_spans("gd_set_losses", N, L, sa, sb, tailw, sbits)
    if not tails:
        tailw = 0
    if cum[2 * N + 1] + 2 * tailw > (<uint64_t> 1) << 58 or cum[2 * N + 1] - cum[2 * N] != cum[1]:
        raise ValueError("gd_set_losses: table total exceeds 2^58 or is not symmetric")
    cdef int64_t X = dmax + 1 if tails else 0
    cdef int64_t E = 2 * (N + X) + 1
    cdef double lnp = log1p(-ldexp(1.0, -sbits)) if tails else 0.0
    cdef double lnwn = log(<double> cum[1])
    if tails and not ((<double> X) * (-lnp) <= 64.0):
        raise ValueError("gd_set_losses: tail too long for the rounding bound")
    out = _np.full(dmax - dmin + 1, -_np.inf)
    kap = _np.full(dmax - dmin + 1, -_np.inf)
    lnw = _np.empty(E)
    g = _np.empty(E)
    lns = _np.empty(L + 1)
    span = _np.full(L + 1, -1, dtype=_np.int64)
    wmax = _np.empty(L + 1)
    wmin = _np.empty(L + 1)
    dqa = _np.empty(E + 1, dtype=_np.int64)
    dqb = _np.empty(E + 1, dtype=_np.int64)
    cdef double[::1] vo = out, vk = kap, vw = lnw, vg = g, vs = lns, vmax = wmax, vmin = wmin
    cdef int64_t[::1] vsp = span, va = dqa, vb = dqb
    cdef int64_t k, i, delta, p, si, sk, lo, hi
    cdef double best, v, kb
    cdef bint ok
    with nogil:
        for k in range(E):
            vw[k] = _gd_lnw_ext(&cum[0], N, lnwn, lnp, k - N - X)
        _gd_span_index(&sa[0], &sb[0], m, L, &vsp[0])
        for i in range(L + 1):
            vs[i] = log(<double> _gd_near_total(&cum[0], N, &sa[0], &sb[0], m, tailw, i))
        for delta in range(dmin, dmax + 1):
            for p in range(delta, E):
                vg[p] = vw[p] - vw[p - delta]
            kb = -1e300
            for p in range(delta, E):
                v = vg[p] if vg[p] >= 0 else -vg[p]
                if v > kb:
                    kb = v
            vk[delta - dmin] = kb + GD_ERR
            if delta > L:
                continue
            for i in range(L - delta + 1):
                vmax[i] = -1e300
                vmin[i] = 1e300
            for s in range(m):
                # window of offsets j - i for j in span s, as indices p = j - i + N + X of g
                lo = -GD_INF if sa[s] == -GD_INF else sa[s] + N + X
                hi = GD_INF if sb[s] == GD_INF else sb[s] + N + X
                _gd_window(&vg[0], L - delta, delta, lo, hi, E - 1, &va[0], &vb[0], &vmax[0],
                           &vmin[0])
            best = -1e300
            ok = False
            for i in range(L - delta + 1):
                k = i + delta
                si = vsp[i]
                sk = vsp[k]
                if si < 0 or sk < 0:
                    continue
                if not _gd_pair_counts(which, m, &sa[0], &sb[0], si, sk, i, k):
                    continue
                ok = True
                v = vmax[i] + (vs[k] - vs[i])
                if v > best:
                    best = v
                v = (vs[i] - vs[k]) - vmin[i]
                if v > best:
                    best = v
            if ok:
                vo[delta - dmin] = best + GD_ERR
    return out, kap


cdef inline double _gd_lnw_diff(const uint64_t* cum, int64_t N, double lnwn, double lnp,
                                int64_t d1, int64_t d2) noexcept nogil:
    # ln W(d1) - ln W(d2), tails included; in a tail ln W(d) = ln W(N) + (|d| - N) ln p, and
    # when both offsets lie in the tails the difference is computed as (k1 - k2) ln p, not
    # as a difference of two large tail log-weights (no cancellation, any tail length)
    cdef int64_t a1 = d1 if d1 >= 0 else -d1, a2 = d2 if d2 >= 0 else -d2
    if a1 > N and a2 > N:
        return (<double> (a1 - a2)) * lnp
    if a1 > N:
        return (lnwn - log(<double> (cum[d2 + N + 1] - cum[d2 + N]))) + (<double> (a1 - N)) * lnp
    if a2 > N:
        return (log(<double> (cum[d1 + N + 1] - cum[d1 + N])) - lnwn) - (<double> (a2 - N)) * lnp
    return log(<double> (cum[d1 + N + 1] - cum[d1 + N])) - log(<double> (cum[d2 + N + 1] - cum[d2 + N]))


def gd_set_pair_loss(const uint64_t[::1] cum, int64_t N, const int64_t[::1] sa,
                     const int64_t[::1] sb, uint64_t tailw, int sbits, int64_t i, int64_t k):
    """Certified max |ln P(j | i) - ln P(j | k)| over allowed j for one pair of inputs whose
    windows hold every finite span end.

    Tail log-weight differences are computed as (k1 - k2) ln p (``_gd_lnw_diff``), so any
    distance between i and k is handled (the former limit |k ln p| <= 64 is gone).
    Rounding: each ln of an integer <= 2^58 errs by < 2^-47 + 2^-52; ln p by one ulp
    (relative 2^-52); a product k ln p and each sum or difference are rounded once (half an
    ulp, relative 2^-53 of a magnitude at most M, the largest |term| met). The error of a
    computed loss is therefore below 2^-44 + 2^-49 M; the result is raised by
    GD_ERR + 2^-46 M, M taken as |result| + 64 + the largest |k ln p| used."""
    cdef Py_ssize_t m = sa.shape[0], s
    if cum.shape[0] != 2 * N + 2 or sb.shape[0] != m or m < 1:
        raise ValueError("gd_set_pair_loss: inconsistent arguments")
    cdef bint tails = (sa[0] == -GD_INF) or (sb[m - 1] == GD_INF)
    if tails and not (tailw > 0 and 1 <= sbits <= 62):
        raise ValueError("gd_set_pair_loss: an unbounded set needs a geometric tail")
    if not tails:
        tailw = 0
    cdef int64_t X = (k - i if k > i else i - k) + 1
    cdef int64_t jlo = (i if i < k else k) - N - X, jhi = (i if i > k else k) + N + X
    cdef double lnp = log1p(-ldexp(1.0, -sbits)) if tails else 0.0
    cdef double lnwn = log(<double> cum[1])
    cdef double lsi = log(<double> _gd_near_total(&cum[0], N, &sa[0], &sb[0], m, tailw, i))
    cdef double lsk = log(<double> _gd_near_total(&cum[0], N, &sa[0], &sb[0], m, tailw, k))
    cdef double best = -1e300, v, mag
    cdef int64_t j, a, b
    for s in range(m):
        a = jlo if sa[s] < jlo else sa[s]
        b = jhi if sb[s] > jhi else sb[s]
        if not tails:
            a = (i if i > k else k) - N if a < (i if i > k else k) - N else a
            b = (i if i < k else k) + N if b > (i if i < k else k) + N else b
        for j in range(a, b + 1):
            v = _gd_lnw_diff(&cum[0], N, lnwn, lnp, j - i, j - k)
            if v + (lsk - lsi) > best:
                best = v + (lsk - lsi)
            if (lsi - lsk) - v > best:
                best = (lsi - lsk) - v
    mag = fabs(best) + 64.0 + (<double> (2 * X + N)) * fabs(lnp)
    return best + GD_ERR + ldexp(mag, -46)


cdef void _gd_slide_max(const double* x, const unsigned char* ok, int64_t n, int64_t D, double* out,
                        int64_t* dq) noexcept nogil:
    # out[b] = max of x[a] over ok a in [b - D, b - 1] (-1e300 if none): a monotone deque
    cdef int64_t b, h = 0, t = 0
    for b in range(n):
        if b >= 1 and ok[b - 1]:
            while t > h and x[dq[t - 1]] <= x[b - 1]:
                t -= 1
            dq[t] = b - 1
            t += 1
        while t > h and dq[h] < b - D:
            h += 1
        out[b] = x[dq[h]] if t > h else -1e300


def gd_set_bound(const uint64_t[::1] cum, int64_t N, int64_t L, const int64_t[::1] sa,
                 const int64_t[::1] sb, uint64_t tailw, int sbits, double u, int64_t D,
                 int which):
    """A certified bound of the set law's loss in O(N + L m) (the fast certificate).

    Returns (lam, kap): ``lam`` bounds max |ln P(j | i) - ln P(j | i')| over allowed j and
    the pairs of allowed inputs i < i' in [0, L] selected by ``which`` (``PAIR_SETS``:
    "all", every pair at most D apart; "gap", the pairs exactly D apart whose lower index
    ends a span that is not the last or whose upper index starts a span that is not the
    first; "span", adjacent pairs inside one span, D = 1), -inf if there is none; ``kap`` bounds
    kappa_delta = max over all offsets d of |ln W(d) - ln W(d - delta)|, tails included, for
    every delta <= D.

    Proof. ln P(j|i) - ln P(j|i') = [ln W(j - i) - ln W(j - i')] + [ln S(i') - ln S(i)], so
    every pair at distance delta has loss <= kappa_delta + |ln S(i') - ln S(i)|. With
    tau >= 1/u and tau >= -ln p (both rounded up), and c the largest of
    E(a) - E(b) and G(b) - G(a) over one-sided offsets 0 <= a < b <= a + D of the extended
    table, E(a) = ln W(a) + a tau, G(a) = ln W(a) - a tau (and 0): every one-sided pair at
    distance delta' <= D has |ln W(a) - ln W(b)| <= delta' tau + c (telescoping); a pair of
    offsets of opposite signs at distance delta is, by the symmetry of the table (checked
    here entry by entry), a one-sided pair at a smaller distance; two offsets both beyond the
    extension N + D + 1 lie in one tail or in opposite tails, where the difference is
    (|d1| - |d2|) (-ln p) <= delta tau. Hence kappa_delta <= delta tau + c, and
    loss(i, i') <= c + max(Q+(i') - Q+(i), Q-(i) - Q-(i')) with Q+-(k) = ln S(k) +- k tau:
    a sliding-window maximum over i' - D <= i < i'. For the Laplace table c is of the order
    of the weights' rounding (the kernel's log is linear with slope 1/u on each side), so
    the bound is within that of the exhaustive maximum (the worst output of a pair is the
    input itself, j = i or j = i').

    Rounding: every computed quantity has magnitude at most M (tracked) and is obtained with
    at most 6 roundings of relative 2^-53 plus log errors below 2^-46 absolute; the result
    is raised by GD_ERR + 2^-46 M, which exceeds the accumulated error."""
    cdef Py_ssize_t m = sa.shape[0], s
    if cum.shape[0] != 2 * N + 2 or N < 1 or L < 0 or D < 1 or m < 1 or sb.shape[0] != m \
            or which < PAIRS_ALL or which > PAIRS_SPAN or not (u > 0) \
            or (which == PAIRS_SPAN and D != 1) \
            or m > 0x7FFFFFFF:
        raise ValueError("gd_set_bound: inconsistent arguments")
    cdef bint tails = _gd_set_spans("gd_set_bound", N, L, sa, sb, tailw, sbits)
    if not tails:
        tailw = 0
    if cum[2 * N + 1] + 2 * tailw > (<uint64_t> 1) << 58:
        raise ValueError("gd_set_bound: table total exceeds 2^58")
    cdef int64_t a, b, k, X = D + 1 if tails else 0, A = N + X + 1
    for a in range(N + 1):
        if cum[N + a + 1] - cum[N + a] != cum[N - a + 1] - cum[N - a]:
            raise ValueError("gd_set_bound: the table is not symmetric")
    cdef double lnp = log1p(-ldexp(1.0, -sbits)) if tails else 0.0
    cdef double tau = 1.0 / u
    tau = nextafter(tau, 1e300)
    if tails and -lnp * (1.0 + 1.8e-15) > tau:
        tau = -lnp * (1.0 + 1.8e-15)
    cdef double lnwn = log(<double> cum[1])
    # E and G (offsets 0..A-1) are dead once c is known: Q1 and Q2 (inputs 0..L) reuse them
    e_ = _np.empty(max(A, L + 1))
    g_ = _np.empty(max(A, L + 1))
    w_ = _np.empty(max(A, L + 1))
    okb = _np.zeros(max(A, L + 1), dtype=_np.uint8)
    span = _np.full(L + 1, -1, dtype=_np.int64)
    dqb = _np.empty(max(A, L + 1) + 1, dtype=_np.int64)
    cdef double[::1] E = e_, G = g_, W = w_, Q1 = e_, Q2 = g_
    cdef unsigned char[::1] OK = okb
    cdef int64_t[::1] SP = span
    cdef int64_t[::1] DQ = dqb
    cdef double c = 0.0, v, lw, M = 64.0, best = -1e300, x
    cdef bint any_ = False
    cdef int64_t si, sk
    with nogil:
        # kappa: c over one-sided offsets 0..N+X
        for a in range(A):
            if a <= N:
                lw = log(<double> (cum[N + a + 1] - cum[N + a]))
            else:
                lw = lnwn + (<double> (a - N)) * lnp
            x = (<double> a) * tau
            E[a] = lw + x
            G[a] = lw - x
            M = fmax(M, fmax(fabs(x), fmax(fabs(E[a]), fabs(G[a]))))
            OK[a] = 1
        # max over a < b <= a + D of E(a) - E(b): for each b the max of E over [b - D, b - 1]
        _gd_slide_max(&E[0], &OK[0], A, D, &W[0], &DQ[0])
        for b in range(1, A):
            v = W[b] - E[b]
            if v > c:
                c = v
        # max over a < b <= a + D of G(b) - G(a) = max of (-G)(a) over the window + G(b)
        for a in range(A):
            G[a] = -G[a]
        _gd_slide_max(&G[0], &OK[0], A, D, &W[0], &DQ[0])
        for b in range(1, A):
            v = W[b] - G[b]
            if v > c:
                c = v
        # the normalisers of the inputs 0..L, and their spans
        _gd_span_index(&sa[0], &sb[0], m, L, &SP[0])
        for k in range(L + 1):
            OK[k] = SP[k] >= 0
            if OK[k]:
                lw = log(<double> _gd_near_total(&cum[0], N, &sa[0], &sb[0], m, tailw, k))
                x = (<double> k) * tau
                Q1[k] = lw + x
                Q2[k] = x - lw
                M = fmax(M, fmax(fabs(Q1[k]), fabs(Q2[k])))
        if which == PAIRS_ALL:
            # max over allowed i in [k - D, k - 1] of (-Q1(i)), then + Q1(k)
            for k in range(L + 1):
                Q1[k] = -Q1[k]
            _gd_slide_max(&Q1[0], &OK[0], L + 1, D, &W[0], &DQ[0])
            for k in range(1, L + 1):
                if OK[k] and W[k] > -1e299:
                    any_ = True
                    v = W[k] - Q1[k]
                    if v > best:
                        best = v
            # Q-(i) - Q-(i') with Q- = ln S - k tau = -Q2: max over the window of (-Q2(i)) + Q2(k)
            for k in range(L + 1):
                Q2[k] = -Q2[k]
            _gd_slide_max(&Q2[0], &OK[0], L + 1, D, &W[0], &DQ[0])
            for k in range(1, L + 1):
                if OK[k] and W[k] > -1e299:
                    v = W[k] - Q2[k]
                    if v > best:
                        best = v
        else:
            for k in range(D, L + 1):
                a = k - D
                if not (OK[k] and OK[a]):
                    continue
                si = SP[a]
                sk = SP[k]
                if not _gd_pair_counts(which, m, &sa[0], &sb[0], si, sk, a, k):
                    continue
                any_ = True
                v = Q1[k] - Q1[a]
                if v > best:
                    best = v
                v = Q2[k] - Q2[a]
                if v > best:
                    best = v
    cdef double slack = GD_ERR + ldexp(M, -46)
    kap = (<double> D) * tau * (1.0 + 2.3e-16) + c + slack
    if not any_:
        return -_np.inf, kap
    return best + c + slack, kap


cdef int _gw_shape(int fam, double t, int64_t n, int tail_bits, gw_law_t* L) noexcept nogil:
    # table half-width, tail parameters and K for scale t (grid steps); 0 on success,
    # -1 if the table would exceed GW_MAX_N, -2 for a scale out of range
    cdef double neff, slope, x, z, avail, fN
    cdef int64_t N
    if not (t > 0.0) or t > 1e12 or t != t:
        return -2
    if fam == FAM_LAPLACE:
        neff = ceil(tail_bits * GW_LN2 * t)
    else:
        neff = ceil(t * sqrt(2.0 * tail_bits * GW_LN2))
    if neff < 1.0:
        neff = 1.0
    if neff > <double> GW_MAX_N and <double> n > <double> GW_MAX_N:
        return -1
    L.fam = fam
    L.t = t
    if <double> n <= neff:
        N = n
        L.tail = 0
    else:
        N = <int64_t> neff
        L.tail = 1
    L.N = N
    L.tailw = 0
    L.sbits = 0
    L.tm = 0
    L.lnp = 0.0
    if fam == FAM_LAPLACE:
        z = 1.0 + 2.0 * t
        fN = -(<double> N) / t
    else:
        z = 1.0 + 2.5066282746310002 * t
        fN = -0.5 * ((<double> N) / t) * ((<double> N) / t)
    if L.tail:
        # the tail decays at least as fast as the kernel's last step (the model kernel stays
        # log-concave) and within a relative 2^-20 of the kernel's next step
        if fam == FAM_LAPLACE:
            slope = 1.0 / t
        else:
            slope = (2.0 * N + 1.0) / (2.0 * t * t)
        x = -expm1(-slope)
        L.sbits = GW_MBITS - <int> floor(log2(x))
        if L.sbits > 53 or L.sbits < 1:
            return -2
        L.tm = (<uint64_t> ceil(ldexp(x, L.sbits))) + 1
        L.lnp = log1p(-ldexp(<double> L.tm, -L.sbits))
        z += 2.0 * exp(fN) / ldexp(<double> L.tm, -L.sbits)
    avail = 18446744073709551616.0 / 64.0 - (2.0 * N + 1.0) - 8.0    # 2^58 - rounding slack
    L.kexp = <int> floor(log2(avail / (z * (1.0 + 1e-9))))
    if L.kexp > 62:
        L.kexp = 62
    if L.kexp < 8:
        return -2
    return 0


cdef inline double _gw_phi(const gw_law_t* L, int64_t d) noexcept nogil:
    # ln kernel(d) of the model, d >= 0 (core), including the model tail
    cdef double x
    if d <= L.N:
        if L.fam == FAM_LAPLACE:
            return -(<double> d) / L.t
        x = (<double> d) / L.t
        return -0.5 * x * x
    if L.fam == FAM_LAPLACE:
        x = -(<double> L.N) / L.t
    else:
        x = (<double> L.N) / L.t
        x = -0.5 * x * x
    return x + (<double> (d - L.N)) * L.lnp


cdef int _gw_fill_table(gw_law_t* L, uint64_t* cum) noexcept nogil:
    # cum[0..2N+1]: cumulative weights of offsets -N..N (symmetric bit for bit); and B.
    # 0, or -1 if the total exceeds 2^58 or a weight is out of range
    cdef int64_t k, d, N = L.N
    cdef uint64_t acc = 0, w
    cdef double b, x, two_k = ldexp(1.0, L.kexp)
    cdef bint direct = 0 <= L.kexp <= 1000
    # the half table goes to cum[N + 1 + d], d = 0..N, first; the cumulative pass below reads
    # position N + 1 + |k - N| before it writes position k + 1 <= that position... except
    # when k + 1 > N + 1 + |k - N|, which never happens for k <= 2N (k - N <= |k - N|).
    # rint(ldexp(e, K)) of e = exp(phi) in [0, 1]: for 0 <= K <= 1000 the product e 2^K is
    # that ldexp (exact, or the same rounding of a subnormal), and a double x >= 0 below
    # 2^52 rounds to the nearest integer as (x + 2^52) - 2^52 (ties to even, as rint in
    # the default mode; from 2^52 on x is an integer): the same doubles without the calls
    for d in range(N + 1):
        x = exp(_gw_phi(L, d))
        x = x * two_k if direct else ldexp(x, L.kexp)
        if x < 4503599627370496.0:
            x = (x + 4503599627370496.0) - 4503599627370496.0
        cum[N + 1 + d] = <uint64_t> x
    # offsets -N..-1 (k = 0..N-1) read the weights of N..1, which live at 2N+1..N+2: above
    # every position written so far (k + 1 <= N); offsets 0..N (k = N..2N) read N + 1 + k - N
    # = k + 1 ... which is the position written at step k: read before writing
    cum[0] = 0
    for k in range(2 * N + 1):
        d = k - N if k >= N else N - k
        w = cum[N + 1 + d]
        acc += w
        cum[k + 1] = acc
    if L.tail:
        b = nearbyint(exp(_gw_phi(L, N)) * (1.0 - ldexp(<double> L.tm, -L.sbits))
                     * ldexp(1.0, L.kexp + L.sbits) / (<double> L.tm))
        if not (b >= 1.0) or b > 1.0e18:
            return -1
        L.tailw = <uint64_t> b
    if acc + 2 * L.tailw > ((<uint64_t> 1) << 58) or acc < 1:
        return -1
    return 0


cdef double _gw_cert(const gw_law_t* L, const uint64_t* cum, int64_t n, int64_t dk, int wide,
                     double* qlo, double* qhi, double* work) noexcept nogil:
    # certified loss of the law for every pair of input indices at most dk apart, for the row
    # of n intervals (wide = 0: _gw_cert_narrow) or for every row of at least 2N + dk
    # intervals (wide = 1); qlo, qhi, work: n + 1 resp. N + dk entries
    cdef int64_t N = L.N, nn, kmax, imax, k, lo_d, hi_d
    cdef double eta, wmin, lnk, sl, sh, tab, part, up_lo, up_hi, best, v, inter, wn1, hhalf
    cdef double B = <double> L.tailw, vmax = 0.0
    wmin = <double> (cum[1] - cum[0])             # the weight of offset -N (the least)
    if wmin < 2.0:
        return 1e300
    eta = 1.0 / (wmin - 1.0)
    if L.tail:
        if B < 2.0:
            return 1e300
        if 1.0 / (B - 1.0) > eta:
            eta = 1.0 / (B - 1.0)
    eta += 2.9e-14                                   # 2^-45: the computed exponentials
    if not wide:
        return _gw_cert_narrow(L, cum, n, dk, eta, NULL, NULL, NULL, qlo, qhi, work)
    lnk = (<double> L.kexp) * GW_LN2
    nn = 2 * N + dk
    kmax = N + dk - 1
    imax = N - 1
    for k in range(kmax + 1):
        lo_d = -k if k < N else -N
        hi_d = nn - k if nn - k < N else N
        tab = <double> (cum[hi_d + N + 1] - cum[lo_d + N])
        part = _gw_tail(L, k)
        up_lo = _gw_tail(L, nn - k)
        up_hi = B if nn - k > N else 0.0
        sl = tab + (part + up_lo) * (1.0 - GW_REL)
        sh = tab + (part + up_hi) * (1.0 + GW_REL)
        v = lnk + _gw_phi(L, k)
        if fabs(v) > vmax:
            vmax = fabs(v)
        qlo[k] = log(sl) - v
        # ln(sh) <= ln(sl) + (sh - sl)/sl (ln(1 + x) <= x); the division rounds by at most
        # half an ulp, covered by the 2^-40 slack of the result
        qhi[k] = qlo[k] + ((sh - sl) / sl) * (1.0 + 1e-15)
    best = _gw_window_best(qlo, qhi, kmax, imax, dk, work)
    # inputs i >= N: the kernel ratio is dk (-ln p) (model), and S(i + dk) - S(i) is at
    # most dk w(N + 1) while S(i) >= the half table
    wn1 = B * ldexp(<double> L.tm, -L.sbits)
    hhalf = <double> (cum[2 * N + 1] - cum[N])
    inter = (<double> dk) * (-L.lnp) * (1.0 + 1e-15) + log1p((<double> dk) * wn1 / hhalf) * (1.0 + 1e-15)
    if inter > best:
        best = inter
    # GD_ERR covers the rounding of terms below 2^10 in magnitude; a steep tail can make
    # psi larger: a few ulps of it more
    return best + 2.0 * eta + GD_ERR + 8.0 * 2.220446049250313e-16 * vmax


