# Kernels for the grid (floating-point-safe) release law (included by _core.pyx).
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

from libc.stdint cimport uint64_t, int64_t, uint32_t, int32_t
from libc.math cimport ceil as _ex_ceil

cdef extern from *:
    """
    #include <stdint.h>
    /* 64x64 -> 128-bit product (high word returned, low word stored) and the quotient and
       remainder of a 128-bit number by a 64-bit one: native 128-bit integers on GCC/Clang,
       compiler intrinsics on MSVC x64, a portable schoolbook version elsewhere. */
    #if defined(__SIZEOF_INT128__)
    static inline uint64_t bndp_mul128(uint64_t a, uint64_t b, uint64_t *lo) {
        unsigned __int128 m = (unsigned __int128)a * b;
        *lo = (uint64_t)m;
        return (uint64_t)(m >> 64);
    }
    static inline void bndp_divmod128(uint64_t hi, uint64_t lo, uint64_t d,
                                      uint64_t *qhi, uint64_t *qlo, uint64_t *r) {
        unsigned __int128 n = ((unsigned __int128)hi << 64) | lo;
        unsigned __int128 q = n / d;
        *qhi = (uint64_t)(q >> 64);
        *qlo = (uint64_t)q;
        *r = (uint64_t)(n - q * d);
    }
    #else
    #if defined(_MSC_VER) && defined(_M_X64)
    #include <intrin.h>
    static __inline uint64_t bndp_mul128(uint64_t a, uint64_t b, uint64_t *lo) {
        uint64_t hi;
        *lo = _umul128(a, b, &hi);
        return hi;
    }
    #else
    static inline uint64_t bndp_mul128(uint64_t a, uint64_t b, uint64_t *lo) {
        uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
        uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
        uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
        *lo = (mid << 32) | (p00 & 0xFFFFFFFFu);
        return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    }
    #endif
    static inline void bndp_divmod128(uint64_t hi, uint64_t lo, uint64_t d,
                                      uint64_t *qhi, uint64_t *qlo, uint64_t *r) {
        /* long division: high word first, then the low word bit by bit (remainder < d) */
        uint64_t rem = hi % d, q = 0, top;
        int k;
        *qhi = hi / d;
        for (k = 63; k >= 0; k--) {
            top = rem >> 63;
            rem = (rem << 1) | ((lo >> k) & 1u);
            q <<= 1;
            if (top || rem >= d) {
                rem -= d;
                q |= 1u;
            }
        }
        *qlo = q;
        *r = rem;
    }
    #endif
    """
    uint64_t bndp_mul128(uint64_t a, uint64_t b, uint64_t* lo) nogil
    void bndp_divmod128(uint64_t hi, uint64_t lo, uint64_t d, uint64_t* qhi, uint64_t* qlo,
                        uint64_t* r) nogil


cdef inline uint64_t _ex_below(bitgen_t* bg, uint64_t n) noexcept nogil:
    # Uniform integer on {0, ..., n-1}, n >= 1, exactly [L19]: the high word of x*n for a
    # uniform 64-bit x, rejecting the (2^64 mod n) values of the low word that would bias it.
    # For n < 2^32 the same with a 32-bit x (half the random bits: BitGenerators buffer the
    # other half of a 64-bit word for the next 32-bit draw).
    cdef uint32_t x32, low32, thr32
    cdef uint64_t m32
    if n <= 0xFFFFFFFFu:
        x32 = bg.next_uint32(bg.state)
        m32 = (<uint64_t> x32) * n
        low32 = <uint32_t> m32
        if low32 < <uint32_t> n:
            thr32 = (<uint32_t> 0 - <uint32_t> n) % (<uint32_t> n)
            while low32 < thr32:
                x32 = bg.next_uint32(bg.state)
                m32 = (<uint64_t> x32) * n
                low32 = <uint32_t> m32
        return m32 >> 32
    cdef uint64_t x = bg.next_uint64(bg.state)
    cdef uint64_t low
    cdef uint64_t high = bndp_mul128(x, n, &low)
    cdef uint64_t thr
    if low < n:
        thr = (<uint64_t> 0 - n) % n
        while low < thr:
            x = bg.next_uint64(bg.state)
            high = bndp_mul128(x, n, &low)
    return high



from libc.math cimport ldexp as _gd_ldexp, nearbyint as _gd_rint, floor as _gd_floor, fmin, fmax

# Absolute bound on the rounding error of a computed shift loss (see _gd_shift_losses).
cdef double GD_ERR = 9.094947017729282e-13     # 2^-40


cdef extern from *:
    """
    /* Grid index of a clipped true value: round q * 2^-e (inv_gamma = 2^-e, so the product
       is exact or a correctly rounded subnormal, monotone in q) to the nearest integer, ties
       up, clip to [kl, kl + n], subtract kl. Written with selects and comparisons turned
       into 0/1 (minsd/maxsd, setcc), so that no branch depends on q: a branch on the
       rounding direction would be mispredicted half the time on real columns, a timing
       signal of the true value. The first clip keeps the integer conversion in range. */
    static inline int64_t bndp_gd_index(double q, double inv_gamma, int64_t kl, int64_t n) {
        double lo = (double)kl, hi = (double)(kl + n);
        double z = q * inv_gamma, f, k;
        z = z < lo - 1.0 ? lo - 1.0 : z;
        z = z > hi + 1.0 ? hi + 1.0 : z;
        f = (double)(int64_t)z;
        f -= (double)(f > z);
        k = f + (double)((z - f) >= 0.5);
        k = k < lo ? lo : k;
        k = k > hi ? hi : k;
        return (int64_t)k - kl;
    }
    """
    int64_t _gd_index "bndp_gd_index" (double q, double inv_gamma, int64_t kl, int64_t n) nogil


cdef extern from "_grid_search.h":
    # the table search (layout, implementations and their run-time choice: see the header)
    enum: BNDP_GD_LANES
    size_t bndp_gd_table_size(int levels) nogil
    size_t bndp_gd_level_offset(int levels, int l) nogil
    void bndp_gd_search(const uint64_t* tree, int levels, const uint64_t* t, int64_t* pos) nogil
    int bndp_gd_variant
    int bndp_gd_variant_ok(int v) nogil


cdef extern from "_simd.h":
    # grid indices of a block of contiguous clipped true values (vectorised; the same
    # integers as _gd_index, tests/test_exact.py)
    void bndp_gd_index_pass(const double* q, Py_ssize_t m, double inv_gamma, double lo,
                            double hi, int32_t* j) nogil
    # released values (kl + pos - n + idx) 2^e of a block of draws
    void bndp_gd_out_pass(const int64_t* pos, const int32_t* idx, Py_ssize_t m, int64_t n,
                          double kl, double gamma, double* out) nogil


DEF GD_LANES = 32     # == BNDP_GD_LANES (checked at import)
if BNDP_GD_LANES != GD_LANES:
    raise ImportError("bndp._core: inconsistent grid search lanes")


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
            if fam == 0:
                w = exp(-d / u)
            else:
                w = exp(-0.5 * (d / u) * (d / u))
            acc += (<uint64_t> _gd_rint(_gd_ldexp(w, kexp))) + floor_w
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
    cdef double inv_gamma = _gd_ldexp(1.0, -e), gamma = _gd_ldexp(1.0, e)
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
    cdef double inv_gamma = _gd_ldexp(1.0, -e), gamma = _gd_ldexp(1.0, e)
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
        o[a] = _gd_index(q[a], _gd_ldexp(1.0, -e), kl, n)
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

cdef int64_t GD_INF = 4611686018427387904        # 2^62: an unbounded span end
cdef int64_t GD_EXACT = 9007199254740992         # 2^53: grid indices whose double is exact


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
        r = _gd_ldexp(r, 64)
        k = _gd_floor(r)
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


cdef inline int64_t _gd_search_one(const uint64_t* cum, int levels, uint64_t t) noexcept nogil:
    # one target: the 4-ary search over the padded cumulative table tree[0:4^levels]
    cdef int64_t q4, p = 0, width = 1
    cdef int lvl
    for lvl in range(levels):
        width *= 4
    for lvl in range(levels):
        q4 = width >> 2
        p += q4 * (<int64_t> (cum[p + q4] <= t) + <int64_t> (cum[p + 2 * q4] <= t)
                   + <int64_t> (cum[p + 3 * q4] <= t))
        width = q4
    return p


cdef inline int64_t _gd_geometric(bitgen_t* bg, int sbits) noexcept nogil:
    # k >= 1 with P(k) = (1 - 2^-s)^(k - 1) 2^-s: the index of the first s-bit word that is 0
    cdef uint64_t mask = ((<uint64_t> 1) << sbits) - 1
    cdef int64_t k = 1
    while (bg.next_uint64(bg.state) & mask) != 0 and k < GD_EXACT:
        k += 1
    return k


ctypedef struct gd_set_t:
    const uint64_t* cum
    int levels
    int64_t N
    const int64_t* sa
    const int64_t* sb
    int64_t m
    uint64_t tailw
    int sbits
    int64_t c_lo
    int64_t c_hi
    int64_t kl


cdef inline void _gd_span_window(const int64_t* sa, const int64_t* sb, int64_t s, int64_t i,
                                 int64_t N, int64_t* lo, int64_t* hi) noexcept nogil:
    # the table positions [lo, hi) of span s seen from input i: the span clipped to the
    # window [i - N, i + N] (empty when hi == lo); selects only
    cdef int64_t a = sa[s] - i + N, b = sb[s] - i + N + 1
    a = 0 if a < 0 else a
    a = 2 * N + 1 if a > 2 * N + 1 else a
    b = 2 * N + 1 if b > 2 * N + 1 else b
    b = a if b < a else b
    lo[0] = a
    hi[0] = b


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
    cdef double inv_gamma = _gd_ldexp(1.0, -e), gamma = _gd_ldexp(1.0, e)
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
        o[a] = _gd_span_index(q[a], _gd_ldexp(1.0, -e), kl, gh, &sa[0], &sb[0], m, 0, NULL)
    return out


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


def gd_set_losses(const uint64_t[::1] cum, int64_t N, int64_t L, const int64_t[::1] sa,
                  const int64_t[::1] sb, uint64_t tailw, int sbits, int64_t dmin, int64_t dmax,
                  int which):
    """Certified losses of the set law: (lam, kappa), lam[delta - dmin] bounding
    max |ln P(j | i) - ln P(j | i + delta)| over allowed j and the pairs (i, i + delta) of
    allowed inputs in [0, L] selected by ``which`` (0 every pair; 1 the pairs whose lower
    index ends a span that is not the last or whose upper index starts a span that is not
    the first; 2 the pairs inside one span; -inf where none is), and kappa[delta - dmin]
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
            or sb.shape[0] != m or which < 0 or which > 2:
        raise ValueError("gd_set_losses: inconsistent arguments")
    cdef bint tails = (sa[0] == -GD_INF) or (sb[m - 1] == GD_INF)
    if tails and not (tailw > 0 and 1 <= sbits <= 62):
        raise ValueError("gd_set_losses: an unbounded set needs a geometric tail")
    if not tails:
        tailw = 0
    for s in range(m):
        if sb[s] < sa[s] or (s > 0 and sa[s] <= sb[s - 1]):
            raise ValueError("gd_set_losses: inconsistent spans")
        # every finite span end lies in the window [i - N, i + N] of every input i in [0, L]
        if (sa[s] > -GD_INF and not (L - N <= sa[s] <= N)) \
                or (sb[s] < GD_INF and not (L - N <= sb[s] <= N)):
            raise ValueError("gd_set_losses: a finite span end lies outside the inputs' windows")
    if cum[2 * N + 1] + 2 * tailw > (<uint64_t> 1) << 58 or cum[2 * N + 1] - cum[2 * N] != cum[1]:
        raise ValueError("gd_set_losses: table total exceeds 2^58 or is not symmetric")
    cdef int64_t X = dmax + 1 if tails else 0
    cdef int64_t E = 2 * (N + X) + 1
    cdef double lnp = log1p(-_gd_ldexp(1.0, -sbits)) if tails else 0.0
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
        for s in range(m):
            lo = 0 if sa[s] < 0 else sa[s]
            hi = L if sb[s] > L else sb[s]
            for k in range(lo, hi + 1):
                vsp[k] = s
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
                if which == 1 and not ((si < m - 1 and i == sb[si]) or (sk > 0 and k == sa[sk])):
                    continue
                if which == 2 and si != sk:
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
    cdef double lnp = log1p(-_gd_ldexp(1.0, -sbits)) if tails else 0.0
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
    return best + GD_ERR + _gd_ldexp(mag, -46)


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
    the pairs of allowed inputs i < i' in [0, L] selected by ``which`` (0: every pair at
    most D apart; 1: the pairs exactly D apart whose lower index ends a span that is not
    the last or whose upper index starts a span that is not the first; 2: adjacent pairs
    inside one span, D = 1), -inf if there is none; ``kap`` bounds
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
            or which < 0 or which > 2 or not (u > 0) or (which == 2 and D != 1) \
            or m > 0x7FFFFFFF:
        raise ValueError("gd_set_bound: inconsistent arguments")
    cdef bint tails = (sa[0] == -GD_INF) or (sb[m - 1] == GD_INF)
    if tails and not (tailw > 0 and 1 <= sbits <= 62):
        raise ValueError("gd_set_bound: an unbounded set needs a geometric tail")
    if not tails:
        tailw = 0
    for s in range(m):
        if sb[s] < sa[s] or (s > 0 and sa[s] <= sb[s - 1]):
            raise ValueError("gd_set_bound: inconsistent spans")
        if (sa[s] > -GD_INF and not (L - N <= sa[s] <= N)) \
                or (sb[s] < GD_INF and not (L - N <= sb[s] <= N)):
            raise ValueError("gd_set_bound: a finite span end lies outside the inputs' windows")
    if cum[2 * N + 1] + 2 * tailw > (<uint64_t> 1) << 58:
        raise ValueError("gd_set_bound: table total exceeds 2^58")
    cdef int64_t a, b, k, X = D + 1 if tails else 0, A = N + X + 1
    for a in range(N + 1):
        if cum[N + a + 1] - cum[N + a] != cum[N - a + 1] - cum[N - a]:
            raise ValueError("gd_set_bound: the table is not symmetric")
    cdef double lnp = log1p(-_gd_ldexp(1.0, -sbits)) if tails else 0.0
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
    span = _np.full(L + 1, -1, dtype=_np.int32)
    dqb = _np.empty(max(A, L + 1) + 1, dtype=_np.int64)
    cdef double[::1] E = e_, G = g_, W = w_, Q1 = e_, Q2 = g_
    cdef unsigned char[::1] OK = okb
    cdef int32_t[::1] SP = span
    cdef int64_t[::1] DQ = dqb
    cdef double c = 0.0, v, lw, M = 64.0, best = -1e300, x
    cdef int64_t lo_, hi_
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
            if fabs(E[a]) > M:
                M = fabs(E[a])
            if fabs(G[a]) > M:
                M = fabs(G[a])
            if fabs(x) > M:
                M = fabs(x)
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
        for s in range(m):
            lo_ = 0 if sa[s] < 0 else sa[s]
            hi_ = L if sb[s] > L else sb[s]
            for k in range(lo_, hi_ + 1):
                SP[k] = s
        for k in range(L + 1):
            OK[k] = SP[k] >= 0
            if OK[k]:
                lw = log(<double> _gd_near_total(&cum[0], N, &sa[0], &sb[0], m, tailw, k))
                x = (<double> k) * tau
                Q1[k] = lw + x
                Q2[k] = x - lw
                if fabs(Q1[k]) > M:
                    M = fabs(Q1[k])
                if fabs(Q2[k]) > M:
                    M = fabs(Q2[k])
        if which == 0:
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
                if which == 1 and not ((si < m - 1 and a == sb[si]) or (sk > 0 and k == sa[sk])):
                    continue
                if which == 2 and si != sk:
                    continue
                any_ = True
                v = Q1[k] - Q1[a]
                if v > best:
                    best = v
                v = Q2[k] - Q2[a]
                if v > best:
                    best = v
    cdef double slack = GD_ERR + _gd_ldexp(M, -46)
    kap = (<double> D) * tau * (1.0 + 2.3e-16) + c + slack
    if not any_:
        return -_np.inf, kap
    return best + c + slack, kap


def gd_search_table_layout(int levels):
    """(total length, offsets of levels 0..levels-1) of the search table (for search_tree)."""
    if levels < 1 or levels > 30:
        raise ValueError("levels out of range")
    return (int(bndp_gd_table_size(levels)),
            [int(bndp_gd_level_offset(levels, l)) for l in range(levels)])


def gd_search_variant(int v=-1):
    """The table search in use (0 the best the CPU runs, 1 portable, 2 AVX2); with v >= 0,
    select it first (for tests: every variant returns the same index). Returns the previous
    choice; raises if v cannot run on this CPU or build."""
    global bndp_gd_variant
    cdef int old = bndp_gd_variant
    if v >= 0:
        if not bndp_gd_variant_ok(v):
            raise ValueError("grid search variant %d not available here" % v)
        bndp_gd_variant = v
    return old


def gd_search(const uint64_t[::1] tree, int levels, const uint64_t[::1] t):
    """The table search for targets ``t`` (int64 indices k, cum[k] <= t < cum[k + 1]); for
    tests. Every target must be below the table's last entry."""
    cdef Py_ssize_t a, m = t.shape[0]
    cdef int r, w
    cdef uint64_t tt[GD_LANES]
    cdef int64_t pp[GD_LANES]
    if levels < 1 or levels > 30 or <size_t> tree.shape[0] != bndp_gd_table_size(levels):
        raise ValueError("grid law: inconsistent search table")
    out = _np.empty(m, dtype=_np.int64)
    cdef int64_t[::1] o = out
    a = 0
    while a < m:
        w = GD_LANES if m - a >= GD_LANES else <int> (m - a)
        for r in range(GD_LANES):
            tt[r] = t[a + r] if r < w else 0
        bndp_gd_search(&tree[0], levels, tt, pp)
        for r in range(w):
            o[a + r] = pp[r]
        a += w
    return out


def gd_index_block(const double[::1] q, int e, int64_t kl, int64_t n):
    """Grid indices (int32) as the per-row sampler computes them (vectorised; for tests)."""
    _gd_check_exponent(e)
    if n < 1 or n >= (<int64_t> 1) << 30:
        raise ValueError("gd_index_block: n out of range")
    out = _np.empty(q.shape[0], dtype=_np.int32)
    cdef int32_t[::1] o = out
    if q.shape[0]:
        bndp_gd_index_pass(&q[0], q.shape[0], _gd_ldexp(1.0, -e), <double> kl,
                           <double> (kl + n), &o[0])
    return out
