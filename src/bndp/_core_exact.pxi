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
