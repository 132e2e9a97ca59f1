# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Grid-law draws: the whole-range law and the law on an allowed set.
"""

import numpy as _np

from bndp._core.common cimport *

#
# The law is defined by a table of integer weights W[k], k = 0..2n, one per offset
# d = k - n in [-n, n]; the output index j in {0..n} for input index i has probability
# P(j | i) = W[j - i + n] / S(i), S(i) = sum_{j=0..n} W[j - i + n].  The table is stored as
# its cumulative sums cum[0] = 0, cum[k + 1] = cum[k] + W[k] (uint64, total <= 2^58).
# A draw is an integer inverse CDF: T uniform on [cum[n - i], cum[2n - i + 1]) (Lemire's exact
# bounded integer [L19]), then the k with cum[k] <= T < cum[k + 1], found by a branch-free
# 4-ary search of the padded table whose number of steps depends only on the table size
# (_grid_search.h: each node's keys contiguous, one vector compare per level where the CPU
# has AVX2, a portable scalar version otherwise; both return the same k).
# Nothing but integer comparisons decides a draw; the output (kl + j) * 2^e is an exact double.
# The per-row sampler rounds its true values to grid indices 32 at a time (bndp_gd_index_pass
# in _simd.h, the same integers as bndp_gd_index below).
#
# The certificate reads the same table: for every shift 1 <= delta <= dk it returns
# lam[delta] >= max over i, j of ln P(j | i) / P(j | i + delta); see _gd_shift_losses.
#
# [L19]   D. Lemire. Fast Random Integer Generation in an Interval. ACM TOMACS 29(1), 2019.

cdef inline void _gd_draw_block(bitgen_t* bg, const uint64_t* cum, int levels,
                                int64_t n, const int32_t* idx, int64_t* pos, int m) noexcept nogil:
    # GD_LANES (or m < GD_LANES) draws at once: T uniform on [cum[n - i], cum[2n - i + 1])
    # for each input index i = idx[r] (cum = the leaf level of the search table, its first
    # entries), then the table entry pos[r] holding T (bndp_gd_search); the output index is
    # pos[r] - n + i (bndp_gd_out_pass).
    cdef uint64_t t[GD_LANES]
    cdef uint64_t lo
    cdef int r
    for r in range(m):
        lo = cum[n - idx[r]]
        t[r] = lo + _ex_below(bg, cum[2 * n - idx[r] + 1] - lo)
    for r in range(m, GD_LANES):
        t[r] = 0
    bndp_gd_search(cum, levels, t, pos)


cdef int _gd_check_tree(const uint64_t[::1] tree, int levels, int64_t n) except -1:
    cdef Py_ssize_t width = 1
    cdef int lvl
    if levels < 1 or levels > 30 or n < 1 or n >= (<int64_t> 1) << 30:
        raise ValueError("grid law: inconsistent search table")
    for lvl in range(levels):
        width *= 4
    if <size_t> tree.shape[0] != bndp_gd_table_size(levels) or 2 * n + 2 > width:
        raise ValueError("grid law: inconsistent search table")
    return 0


cdef int _gd_check_exponent(int e) except -1:
    # 2^e and 2^-e must both be normal doubles, so that scaling by them is exact
    if e < -1022 or e > 1022:
        raise ValueError("grid law: granularity 2^%d out of the supported range" % e)
    return 0

def gd_fill_rows(object gen, const uint64_t[::1] tree, int levels, int64_t n, int e,
                 int64_t kl, const double[:, :] q, double[:, ::1] out):
    """Grid draws for clipped true values ``q`` (broadcast to ``out``; stride 0 welcome)."""
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef Py_ssize_t a, b, n0 = out.shape[0], n1 = out.shape[1]
    if q.shape[0] != n0 or q.shape[1] != n1:
        raise ValueError("grid law: the values must have the output's shape (broadcast them)")
    _gd_check_tree(tree, levels, n)
    _gd_check_exponent(e)
    cdef int32_t idx[GD_LANES]
    cdef int64_t jj[GD_LANES]
    cdef double qb[GD_LANES]
    cdef const double* qp
    cdef int r, m
    cdef bint contiguous = q.strides[1] == sizeof(double)
    cdef double inv_gamma = ldexp(1.0, -e), gamma = ldexp(1.0, e)
    cdef double lo = <double> kl, hi = <double> (kl + n), kld = <double> kl
    with bit_gen.lock, nogil:
        for a in range(n0):
            b = 0
            while b < n1:
                m = GD_LANES if n1 - b >= GD_LANES else <int> (n1 - b)
                if contiguous:
                    qp = &q[a, b]
                else:
                    for r in range(m):
                        qb[r] = q[a, b + r]
                    qp = qb
                bndp_gd_index_pass(qp, m, inv_gamma, lo, hi, idx)
                _gd_draw_block(bg, &tree[0], levels, n, idx, jj, m)
                bndp_gd_out_pass(jj, idx, m, n, kld, gamma, &out[a, b])
                b += m


def gd_fill(object gen, const uint64_t[::1] tree, int levels, int64_t n, int e, int64_t kl,
            double q, double[::1] out):
    """Grid draws for one clipped true value."""
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef Py_ssize_t a, m = out.shape[0]
    _gd_check_tree(tree, levels, n)
    _gd_check_exponent(e)
    cdef double inv_gamma = ldexp(1.0, -e), gamma = ldexp(1.0, e)
    cdef int32_t i = <int32_t> _gd_index(q, inv_gamma, kl, n)
    cdef int32_t idx[GD_LANES]
    cdef int64_t jj[GD_LANES]
    cdef int r, w
    for r in range(GD_LANES):
        idx[r] = i
    with bit_gen.lock, nogil:
        a = 0
        while a < m:
            w = GD_LANES if m - a >= GD_LANES else <int> (m - a)
            _gd_draw_block(bg, &tree[0], levels, n, idx, jj, w)
            bndp_gd_out_pass(jj, idx, w, n, <double> kl, gamma, &out[a])
            a += w


def gd_one(object gen, const uint64_t[::1] tree, int levels, int64_t n, int e, int64_t kl,
           double q):
    """One grid draw."""
    out = _np.empty(1)
    gd_fill(gen, tree, levels, n, e, kl, q, out)
    return float(out[0])


def gd_index(const double[::1] q, int e, int64_t kl, int64_t n):
    """Grid indices (int64) of clipped true values, as the samplers compute them."""
    out = _np.empty(q.shape[0], dtype=_np.int64)
    cdef int64_t[::1] o = out
    cdef Py_ssize_t a
    for a in range(q.shape[0]):
        o[a] = _gd_index(q[a], ldexp(1.0, -e), kl, n)
    return out


# --- the grid law on an allowed set with gaps (ConstrainedLaplace) -----------------------
#
# The allowed grid points are m spans [sa[s], sb[s]] of grid indices (relative to kl; sorted,
# disjoint; the first may start at -GD_INF and the last end at +GD_INF on an unbounded set).
# The offset table has half-width N (offsets -N..N). On an unbounded side the law goes on
# beyond the table with the geometric tail W(N + k) = W(N) p^k, p = 1 - 2^-s, k >= 1, of
# integer total ``tailw`` = W(N) (2^s - 1); the weight W(N) = cum[1] - cum[0].
# For input index i the output j is drawn from the allowed indices only:
# P(j | i) = W(j - i) / S(i). The inputs i in [0, L] (L = N on a finite set) see every
# finite span end inside their table window [i - N, i + N]; S(i) is then an exact integer
# (the spans clipped to the window, plus a whole tail block on each unbounded side). An
# input farther out (only on an unbounded set, beyond the core [c_lo, c_hi] of finite ends
# by more than L - N) draws from the whole table and both tails, and a draw that is not
# allowed (which needs an offset beyond the table's decay, probability below 2^-20) is made
# again: rejection sampling, so the law is the same conditional law.
# A draw takes a uniform integer U below S(i) (Lemire), turns it into the table position T
# inside the span it falls in (every span is examined, by selects: the work does not depend
# on U or i), then searches T in the table. A draw that falls in a tail block (probability
# below 2^-20) then draws the geometric offset: only such draws take longer, and by an
# amount that depends on the released offset.


cdef inline uint64_t _gd_bernoulli(bitgen_t* bg, double p) noexcept nogil:
    # 1 with probability exactly p, for a double 0 <= p < 1: compare the binary expansion of
    # a uniform real, 64 bits at a time, with that of p (scaling by 2^64 and removing the
    # integer part are exact in binary floating point; a second word is needed with
    # probability 2^-64).
    # One word is always drawn, whatever p (the random stream's use does not depend on the
    # true value's position on the grid).
    cdef double r = p, k
    cdef uint64_t ki, x
    while True:
        x = bg.next_uint64(bg.state)
        r = ldexp(r, 64)
        k = floor(r)
        ki = <uint64_t> k
        if x != ki:
            return <uint64_t> (x < ki)
        r -= k
        if r == 0.0:
            return 0


cdef inline int64_t _gd_span_index(double q, double inv_gamma, int64_t kl, const double* gap_hi,
                                   const int64_t* sa, const int64_t* sb, int64_t m,
                                   int randomised, bitgen_t* bg) noexcept nogil:
    # Grid index (relative to kl) of an allowed true value q: its span s is the number of
    # gaps whose upper end is <= q (q lies in the allowed set); the index is the nearest grid
    # point (ties up) or, randomised, floor(q / gamma) + Bernoulli(fraction), then clipped to
    # the span's grid points. Both maps are monotone in q. Selects, not branches, on q.
    cdef int64_t s = 0, k, g
    cdef double z, f
    for g in range(m - 1):
        s += <int64_t> (q >= gap_hi[g])
    z = q * inv_gamma
    z = 0.0 if z != z else z            # NaN (refused by the callers): a defined index
    z = -4.0e18 if z < -4.0e18 else z
    z = 4.0e18 if z > 4.0e18 else z
    f = <double> (<int64_t> z)
    f -= <double> (f > z)
    if randomised:
        k = <int64_t> f + <int64_t> _gd_bernoulli(bg, z - f)
    else:
        k = <int64_t> f + <int64_t> ((z - f) >= 0.5)
    k -= kl
    k = sa[s] if k < sa[s] else k
    k = sb[s] if k > sb[s] else k
    return k


cdef inline int64_t _gd_geometric(bitgen_t* bg, int sbits) noexcept nogil:
    # k >= 1 with P(k) = (1 - 2^-s)^(k - 1) 2^-s: the index of the first s-bit word that is 0
    cdef uint64_t mask = ((<uint64_t> 1) << sbits) - 1
    cdef int64_t k = 1
    while (bg.next_uint64(bg.state) & mask) != 0 and k < GD_EXACT:
        k += 1
    return k


cdef inline uint64_t _gd_set_masses(const gd_set_t* L, int64_t i, uint64_t* left,
                                    uint64_t* right) noexcept nogil:
    # S(i) as drawn: the spans clipped to the table window, and a tail block on each side
    # that is unbounded or holds allowed points beyond the window (an input farther out
    # than the core: the block then also holds points that are not allowed, rejected)
    cdef int64_t s, lo, hi, N = L.N
    cdef uint64_t tot = 0
    for s in range(L.m):
        _gd_span_window(L.sa, L.sb, s, i, N, &lo, &hi)
        tot += L.cum[hi] - L.cum[lo]
    left[0] = L.tailw * (<uint64_t> ((L.sa[0] == -GD_INF) | (i - N > L.c_lo)))
    right[0] = L.tailw * (<uint64_t> ((L.sb[L.m - 1] == GD_INF) | (i + N < L.c_hi)))
    return tot + left[0] + right[0]


cdef inline uint64_t _gd_set_target(const gd_set_t* L, int64_t i, uint64_t u, uint64_t left,
                                    uint64_t mid, int* where) noexcept nogil:
    # table position T for the uniform u < S(i); where = 0 (table), 1 (left), 2 (right tail)
    cdef int64_t s, lo, hi, N = L.N
    cdef uint64_t acc = left, tt = 0, w, sel, c0
    for s in range(L.m):
        _gd_span_window(L.sa, L.sb, s, i, N, &lo, &hi)
        c0 = L.cum[lo]
        w = L.cum[hi] - c0
        # u - acc wraps when u < acc: the second test is then false as well
        sel = (<uint64_t> (u >= acc)) & (<uint64_t> (u - acc < w))
        tt += sel * (c0 + (u - acc))
        acc += w
    where[0] = (<int> (u < left)) + 2 * (<int> (u >= left + mid))
    return tt


cdef inline bint _gd_set_allowed(const gd_set_t* L, int64_t j) noexcept nogil:
    cdef int64_t s
    cdef bint ok = False
    for s in range(L.m):
        ok = ok | ((L.sa[s] <= j) & (j <= L.sb[s]))
    return ok & (L.kl + j < GD_EXACT) & (L.kl + j > -GD_EXACT)


cdef int64_t _gd_set_draw_one(bitgen_t* bg, const gd_set_t* L, int64_t i) noexcept nogil:
    # one exact draw (rejection on the rare tail draws that are not allowed)
    cdef uint64_t left, right, tot, u, t
    cdef int where
    cdef int64_t j
    while True:
        tot = _gd_set_masses(L, i, &left, &right)
        u = _ex_below(bg, tot)
        t = _gd_set_target(L, i, u, left, tot - left - right, &where)
        if where == 0:
            return _gd_search_one(L.cum, L.levels, t) - L.N + i
        if where == 1:
            j = i - L.N - _gd_geometric(bg, L.sbits)
        else:
            j = i + L.N + _gd_geometric(bg, L.sbits)
        if _gd_set_allowed(L, j):
            return j


cdef inline void _gd_set_draw_block(bitgen_t* bg, const gd_set_t* L, const int64_t* idx,
                                    int64_t* j, int cnt) noexcept nogil:
    cdef uint64_t t[GD_LANES]
    cdef int64_t pos[GD_LANES]
    cdef int where[GD_LANES]
    cdef uint64_t left, right, tot, u
    cdef int64_t jj
    cdef int r
    for r in range(cnt):
        tot = _gd_set_masses(L, idx[r], &left, &right)
        u = _ex_below(bg, tot)
        t[r] = _gd_set_target(L, idx[r], u, left, tot - left - right, &where[r])
    for r in range(cnt, GD_LANES):
        t[r] = 0
    bndp_gd_search(L.cum, L.levels, t, pos)
    for r in range(cnt):
        j[r] = pos[r] - L.N + idx[r]
        if where[r] != 0:           # a tail block: probability below 2^-20
            if where[r] == 1:
                jj = idx[r] - L.N - _gd_geometric(bg, L.sbits)
            else:
                jj = idx[r] + L.N + _gd_geometric(bg, L.sbits)
            if not _gd_set_allowed(L, jj):
                jj = _gd_set_draw_one(bg, L, idx[r])
            j[r] = jj


cdef int _gd_check_set(const uint64_t[::1] tree, int levels, int64_t N, const int64_t[::1] sa,
                       const int64_t[::1] sb, const double[::1] gap_hi, uint64_t tailw,
                       int sbits) except -1:
    cdef Py_ssize_t s, m = sa.shape[0]
    _gd_check_tree(tree, levels, N)
    if m < 1 or sb.shape[0] != m or gap_hi.shape[0] != m - 1:
        raise ValueError("grid law: inconsistent spans")
    for s in range(m):
        if sb[s] < sa[s] or sa[s] < -GD_INF or sb[s] > GD_INF or (s > 0 and sa[s] <= sb[s - 1]):
            raise ValueError("grid law: inconsistent spans")
    if (sa[0] == -GD_INF or sb[m - 1] == GD_INF) and not (tailw > 0 and 1 <= sbits <= 62):
        raise ValueError("grid law: an unbounded set needs a geometric tail")
    return 0


def gd_set_fill_rows(object gen, const uint64_t[::1] tree, int levels, int64_t N, int e,
                     int64_t kl, const int64_t[::1] sa, const int64_t[::1] sb,
                     const double[::1] gap_hi, uint64_t tailw, int sbits, int64_t c_lo,
                     int64_t c_hi, bint randomised, const double[:, :] q, double[:, ::1] out):
    """Grid draws on an allowed set for allowed true values ``q`` (broadcast to ``out``)."""
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef Py_ssize_t a, b, n0 = out.shape[0], n1 = out.shape[1]
    if q.shape[0] != n0 or q.shape[1] != n1:
        raise ValueError("grid law: the values must have the output's shape (broadcast them)")
    _gd_check_exponent(e)
    _gd_check_set(tree, levels, N, sa, sb, gap_hi, tailw, sbits)
    cdef gd_set_t L
    L.cum = &tree[0]
    L.levels = levels
    L.N = N
    L.sa = &sa[0]
    L.sb = &sb[0]
    L.m = sa.shape[0]
    L.tailw = tailw
    L.sbits = sbits
    L.c_lo = c_lo
    L.c_hi = c_hi
    L.kl = kl
    cdef int64_t idx[GD_LANES]
    cdef int64_t jj[GD_LANES]
    cdef int r, c
    cdef double inv_gamma = ldexp(1.0, -e), gamma = ldexp(1.0, e)
    cdef const double* gh = &gap_hi[0] if L.m > 1 else NULL
    with bit_gen.lock, nogil:
        for a in range(n0):
            b = 0
            while b < n1:
                c = GD_LANES if n1 - b >= GD_LANES else <int> (n1 - b)
                for r in range(c):
                    idx[r] = _gd_span_index(q[a, b + r], inv_gamma, kl, gh, L.sa, L.sb, L.m,
                                            randomised, bg)
                _gd_set_draw_block(bg, &L, idx, jj, c)
                for r in range(c):
                    out[a, b + r] = (<double> (kl + jj[r])) * gamma
                b += c


def gd_span_index(const double[::1] q, int e, int64_t kl, const int64_t[::1] sa,
                  const int64_t[::1] sb, const double[::1] gap_hi):
    """Nearest-point grid indices (int64, relative to ``kl``) of allowed true values, as the
    sampler rounds them (the deterministic rounding)."""
    cdef Py_ssize_t m = sa.shape[0]
    if m < 1 or sb.shape[0] != m or gap_hi.shape[0] != m - 1:
        raise ValueError("grid law: inconsistent spans")
    out = _np.empty(q.shape[0], dtype=_np.int64)
    cdef int64_t[::1] o = out
    cdef Py_ssize_t a
    cdef const double* gh = &gap_hi[0] if m > 1 else NULL
    for a in range(q.shape[0]):
        o[a] = _gd_span_index(q[a], ldexp(1.0, -e), kl, gh, &sa[0], &sb[0], m, 0, NULL)
    return out

def gd_search_table_layout(int levels):
    """(total length, offsets of levels 0..levels-1) of the search table (for search_tree)."""
    if levels < 1 or levels > 30:
        raise ValueError("levels out of range")
    return (int(bndp_gd_table_size(levels)),
            [int(bndp_gd_level_offset(levels, l)) for l in range(levels)])


cdef int _search_variant(int v) noexcept:
    # this module's choice of table search: set to v (v >= 0), returns the previous one
    cdef int old = bndp_gd_variant
    if v >= 0:
        _search_variant_swap(v)
    return old
