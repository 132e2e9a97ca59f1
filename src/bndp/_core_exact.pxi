# Kernels for the exact family (included by _core.pyx).
#
# Exact discrete samplers on a grid, with integer arithmetic only, and the exhaustive
# privacy-loss certificate of the resulting finite mechanisms.
#
# [CKS20] C. L. Canonne, G. Kamath, T. Steinke. The Discrete Gaussian for Differential Privacy.
#         NeurIPS 2020 (arXiv:2004.00010). Algorithms 1 (Bernoulli(exp(-gamma))),
#         2 (discrete Laplace) and 3 (discrete Gaussian).
# [L19]   D. Lemire. Fast Random Integer Generation in an Interval. ACM TOMACS 29(1), 2019.
#
# Grid-index conventions: the output grid is {0, 1, ..., n} (the caller adds kl and multiplies
# by the power-of-two granularity); the input is an index i in that range. The bounded
# discrete Laplace law with integer scale t has P(j | i) ~ exp(-|j - i|/t); the bounded
# discrete Gaussian with integer variance s2 has P(j | i) ~ exp(-(j - i)^2 / (2 s2)).
# Every random decision is a comparison of uniform integers: no floating point is involved
# in a draw (the output index is converted to a double only at the end, exactly).

from libc.stdint cimport uint64_t, int64_t, uint32_t
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


cdef inline bint _ex_bern_exp_frac(bitgen_t* bg, uint64_t num, uint64_t den) noexcept nogil:
    # Bernoulli(exp(-num/den)) for 0 <= num <= den, den >= 1 [CKS20, Alg. 1, gamma in [0, 1]]:
    # for K = 1, 2, ... draw A_K ~ Bernoulli(gamma/K) until the first A_K = 0; then
    # P(K odd) = exp(-gamma). Bernoulli(gamma/K) is drawn as Bernoulli(num/den) AND
    # Bernoulli(1/K) (independent), so the product den*K is never formed (no overflow).
    cdef uint64_t k = 1
    if num == 0:
        return 1
    if num >= den:                  # gamma = 1: Bernoulli(num/den) is certain, skip the draw
        k = 2
        while _ex_below(bg, k) == 0:
            k += 1
        return k & 1
    while _ex_below(bg, den) < num and (k == 1 or _ex_below(bg, k) == 0):
        k += 1
    return k & 1


cdef inline bint _ex_bern_exp(bitgen_t* bg, uint64_t num_hi, uint64_t num_lo,
                              uint64_t den) noexcept nogil:
    # Bernoulli(exp(-num/den)) for any 128-bit num = num_hi*2^64 + num_lo >= 0 [CKS20,
    # Alg. 1]: exp(-gamma) is the product of floor(gamma) factors exp(-1) and
    # exp(-(gamma - floor(gamma))); stop at the first 0. Each factor is 0 with probability
    # 1 - 1/e, so the expected work is O(1) for any gamma.
    cdef uint64_t qhi, qlo, r
    bndp_divmod128(num_hi, num_lo, den, &qhi, &qlo, &r)
    while qhi > 0 or qlo > 0:
        if not _ex_bern_exp_frac(bg, 1, 1):
            return 0
        if qlo == 0:
            qhi -= 1
        qlo -= 1                    # wraps to 2^64 - 1 after a borrow from qhi
    return _ex_bern_exp_frac(bg, r, den)


cdef inline int64_t _ex_dlap(bitgen_t* bg, uint64_t t) noexcept nogil:
    # Discrete Laplace on Z with P(y) ~ exp(-|y|/t), integer t >= 1 [CKS20, Alg. 2, s = 1]:
    # X = U + t*V with U uniform on {0..t-1} accepted with prob. exp(-U/t) and V geometric
    # (count of exp(-1) successes); a fair sign, rejecting (negative, 0) so 0 is not doubled.
    cdef uint64_t u, v
    cdef int64_t x
    while True:
        u = _ex_below(bg, t)
        if not _ex_bern_exp_frac(bg, u, t):
            continue
        v = 0
        while _ex_bern_exp_frac(bg, 1, 1):
            v += 1
        x = <int64_t> (u + t * v)
        if bg.next_uint32(bg.state) >> 31:
            if x == 0:
                continue
            return -x
        return x


cdef inline uint64_t _ex_isqrt(uint64_t s) noexcept nogil:
    # floor(sqrt(s)) exactly (a double estimate corrected by integer comparisons).
    cdef uint64_t r = <uint64_t> sqrt(<double> s)
    while r * r > s:
        r -= 1
    while (r + 1) * (r + 1) <= s:
        r += 1
    return r


cdef inline int64_t _ex_draw(bitgen_t* bg, int fam, int64_t i, int64_t n, uint64_t s,
                             uint64_t tg) noexcept nogil:
    # One exact draw of the output index j in {0..n} for input index i.
    #   fam 0 (bounded discrete Laplace, scale s): if n < s the grid is narrower than the
    #     scale: propose j uniformly and accept with exp(-|j-i|/s) (acceptance >= 1/e);
    #     otherwise propose i + DLap(s) and reject outside {0..n} (acceptance >= ~0.3).
    #   fam 1 (bounded discrete Gaussian, variance s, tg = floor(sqrt(s)) + 1): if n^2 <= s,
    #     uniform proposal accepted with exp(-(j-i)^2/(2s)) (acceptance >= e^-1/2); otherwise
    #     [CKS20, Alg. 3]: Y = DLap(tg) accepted with exp(-(|Y| - s/tg)^2 / (2s)), and
    #     rejected outside the grid. The range test comes first: both are independent
    #     acceptance events, so the accepted Y has law ~ DLap(y) * acc(y) * 1[i+y in grid].
    # Truncation by rejection: the law is exact; the number of proposals (time) depends on i.
    cdef int64_t j, y, d
    cdef int64_t a
    cdef uint64_t num_hi, num_lo
    if fam == 0:
        if n < <int64_t> s:
            while True:
                j = <int64_t> _ex_below(bg, <uint64_t> (n + 1))
                d = j - i if j >= i else i - j
                if _ex_bern_exp_frac(bg, <uint64_t> d, s):
                    return j
        while True:
            j = i + _ex_dlap(bg, s)
            if j >= 0 and j <= n:
                return j
    if n * n <= <int64_t> s:
        while True:
            j = <int64_t> _ex_below(bg, <uint64_t> (n + 1))
            d = j - i if j >= i else i - j
            if _ex_bern_exp_frac(bg, <uint64_t> (d * d), 2 * s):
                return j
    while True:
        y = _ex_dlap(bg, tg)
        j = i + y
        if j < 0 or j > n:
            continue
        d = y if y >= 0 else -y
        a = d * <int64_t> tg - <int64_t> s
        if a < 0:
            a = -a
        num_hi = bndp_mul128(<uint64_t> a, <uint64_t> a, &num_lo)
        if _ex_bern_exp(bg, num_hi, num_lo, 2 * s * tg * tg):
            return j


# ---------------------------------------------------------------------------------------
# Exhaustive privacy-loss certificate.
#
# For neighbouring input indices i and i + d (1 <= d <= dk) the log PMF ratio is
#   Laplace:  log P(j|i)/P(j|i+d) = (|j-i-d| - |j-i|)/t + lnZ(i+d) - lnZ(i),
#   Gaussian: log P(j|i)/P(j|i+d) = (d^2 - 2d(j-i))/(2 s2) + lnZ(i+d) - lnZ(i),
# (and the reverse ratio with opposite sign). In j the first term is non-increasing
# (Laplace) or linear (Gaussian), so its maximum over the grid sits at j = 0 and that of the
# reverse ratio at j = n: d/t for both directions (Laplace), (d^2 + 2di)/(2 s2) and
# (2d(n-i) - d^2)/(2 s2) (Gaussian). The certificate is the maximum over ALL pairs (i, d),
# i.e. over every neighbouring pair of grid inputs, of the larger direction.
#
# Normalisers: Laplace Z(i) = [(1 - r^(i+1)) + r(1 - r^(n-i))]/(1 - r), r = e^(-1/t), in
# expm1 form (the common factor 1/(1-r) cancels in every difference and is dropped);
# Gaussian Z(i) = 1 + S(i) + S(n-i) with S(m) = sum_{k=1..m} exp(-k^2/(2 s2)), prefix sums
# with Neumaier compensation. Floating-point error: every term of Z is positive with
# relative error <= (2 + 2x)u for exponent x <= 745 (u = 2^-53), so |error(lnZ)| < 4e-13
# and the error of each pair's loss is < 1e-12 (1 + loss); the certificate is the computed
# maximum times (1 + 1e-12) plus EX_MARGIN = 1e-9, which bounds that error with room to spare.
# ---------------------------------------------------------------------------------------

cdef double EX_MARGIN = 1e-9


cdef inline double _ex_certified(double loss) noexcept nogil:
    return loss * (1.0 + 1e-12) + EX_MARGIN


cdef void _ex_lnz(int fam, double x, int64_t n, double* lnz) noexcept nogil:
    # lnZ(i) for i = 0..n, up to an additive constant; x = t (Laplace) or s2 (Gaussian).
    # Far from both ends (Laplace: > 40 t; Gaussian: where the terms underflow) the value
    # is the constant computed for the first such point, copied rather than recomputed:
    # beyond 40 t, exp(-(.)/t) < 2^-57 no longer changes 1 - e^(.) in double precision.
    cdef int64_t i, m, mend
    cdef double er, s, c, w, tsum, a, b, z, sat, zc = 0.0
    cdef bint have_c = 0
    if fam == 0:
        er = exp(-1.0 / x)
        for i in range(n + 1):
            if (<double> (i + 1)) > 40.0 * x and (<double> (n - i)) > 40.0 * x:
                if not have_c:
                    zc = log(-expm1(-(<double> (i + 1)) / x) - er * expm1(-(<double> (n - i)) / x))
                    have_c = 1
                lnz[i] = zc
            else:
                lnz[i] = log(-expm1(-(<double> (i + 1)) / x) - er * expm1(-(<double> (n - i)) / x))
        return
    s = 0.0
    c = 0.0
    lnz[0] = 0.0
    mend = n
    for m in range(1, n + 1):                 # lnz[m] <- S(m) (compensated prefix sums)
        w = exp(-(<double> m) * (<double> m) / (2.0 * x))
        if w == 0.0:                          # every later term underflows too
            mend = m - 1
            break
        tsum = s + w
        if fabs(s) >= fabs(w):
            c += (s - tsum) + w
        else:
            c += (w - tsum) + s
        s = tsum
        lnz[m] = s + c
    sat = s + c
    for m in range(mend + 1, n + 1):
        lnz[m] = sat
    for i in range((n + 2) // 2):             # in place, pairing i with n - i (Z symmetric)
        a = lnz[i]
        b = lnz[n - i]
        if i > mend and n - i > mend:
            if not have_c:
                zc = log(1.0 + a + b)
                have_c = 1
            z = zc
        else:
            z = log(1.0 + a + b)
        lnz[i] = z
        lnz[n - i] = z


cdef double _ex_gauss_loss(double s2, int64_t n, int64_t dk, const double* lnz,
                           bint all_d) noexcept nogil:
    # Max loss over pairs (i, i+d), for d = dk only (all_d false: the cheap proxy used inside
    # the scale search) or every d in 1..dk (all_d true: the certificate).
    cdef int64_t d, i, d0 = 1 if all_d else dk
    cdef double best = 0.0, l, dz, dd, half = 0.5 / s2, A, B
    for d in range(d0, dk + 1):
        dd = <double> d
        for i in range(n - d + 1):
            dz = lnz[i + d] - lnz[i]
            A = (dd * dd + 2.0 * dd * <double> i) * half + dz
            B = (2.0 * dd * <double> (n - i) - dd * dd) * half - dz
            l = A if A > B else B
            if l > best:
                best = l
    return best


cdef double _ex_laplace_loss(double t, int64_t n, int64_t dk, const double* lnz,
                             bint all_d) noexcept nogil:
    # As _ex_gauss_loss; here the output term d/t does not depend on i.
    cdef int64_t d, i, d0 = 1 if all_d else dk
    cdef double best = 0.0, m, dz
    for d in range(d0, dk + 1):
        m = 0.0
        for i in range(n - d + 1):
            dz = fabs(lnz[i + d] - lnz[i])
            if dz > m:
                m = dz
        m += (<double> d) / t
        if m > best:
            best = m
    return best


cdef double _ex_max_loss(int fam, double x, int64_t n, int64_t dk, const double* lnz,
                         bint all_d) noexcept nogil:
    if fam == 0:
        return _ex_laplace_loss(x, n, dk, lnz, all_d)
    return _ex_gauss_loss(x, n, dk, lnz, all_d)


cdef struct ExCal:
    int fam
    int64_t n, dk
    double target
    double* lnz


cdef double _ex_g(double x, void* args) noexcept nogil:
    # g(x) = target - loss(x), x = t (Laplace) or sigma (Gaussian) in grid units. The loss
    # falls as the noise grows (wider kernel: smaller PMF ratios), so g is increasing.
    cdef ExCal* c = <ExCal*> args
    cdef double v = x if c.fam == 0 else x * x
    _ex_lnz(c.fam, v, c.n, c.lnz)
    return c.target - _ex_max_loss(c.fam, v, c.n, c.dk, c.lnz, 0)


cdef int _ex_calibrate(int fam, double target, int64_t n, int64_t dk, double hint,
                       uint64_t smax, double* lnz, uint64_t* s_out, double* cert_out) noexcept nogil:
    # Smallest integer scale (t, or s2 = sigma^2) whose certified loss is <= target.
    # 1. bracket the proxy root by halving/doubling from the hint; 2. _bisect_feasible;
    # 3. round up to an integer; 4. certify over all pairs and step up until certified.
    # Returns 0 on success, 1 if the scale would exceed smax, 2 if not certified in 200 steps.
    cdef ExCal c
    cdef double lo, hi, glo, ghi, x, v, cert
    cdef int k, n_eval = 0
    cdef uint64_t s, step
    c.fam = fam
    c.n = n
    c.dk = dk
    c.target = target
    c.lnz = lnz
    hi = hint
    ghi = _ex_g(hi, &c)
    if ghi < 0.0:
        lo = hi
        glo = ghi
        for k in range(200):
            hi = 2.0 * lo
            ghi = _ex_g(hi, &c)
            if ghi >= 0.0:
                break
            lo = hi
            glo = ghi
    else:
        for k in range(200):
            lo = 0.5 * hi
            glo = _ex_g(lo, &c)
            if glo < 0.0:
                break
            hi = lo
            ghi = glo
    if not (ghi >= 0.0 and glo < 0.0):
        return 2
    x = _bisect_feasible(_ex_g, &c, lo, glo, hi, ghi, &n_eval)
    v = x if fam == 0 else x * x
    v = _ex_ceil(v)
    if v < 1.0:
        v = 1.0
    if v > <double> smax:
        return 1
    s = <uint64_t> v
    for k in range(200):
        _ex_lnz(fam, <double> s, n, lnz)
        cert = _ex_certified(_ex_max_loss(fam, <double> s, n, dk, lnz, 1))
        if cert <= target:
            s_out[0] = s
            cert_out[0] = cert
            return 0
        step = s >> 12
        s += step if step > 0 else 1
        if s > smax:
            return 1
    return 2


# ---------------------------------------------------------------------------------------
# def wrappers
# ---------------------------------------------------------------------------------------

cdef inline uint64_t _ex_tg(int fam, uint64_t s) noexcept nogil:
    return _ex_isqrt(s) + 1 if fam == 1 else 0


def ex_one(object gen, int fam, double i, int64_t n, uint64_t s, int64_t kl, double gamma):
    """One exact draw: (kl + j) * gamma with j the output index for input index ``i``."""
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef uint64_t tg = _ex_tg(fam, s)
    cdef int64_t j
    with bit_gen.lock:
        j = _ex_draw(bg, fam, <int64_t> i, n, s, tg)
    return (<double> (kl + j)) * gamma


def ex_fill(object gen, int fam, double i, int64_t n, uint64_t s, int64_t kl, double gamma,
            double[::1] out):
    """Fill ``out`` with exact draws for one input index."""
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef uint64_t tg = _ex_tg(fam, s)
    cdef Py_ssize_t k, m = out.shape[0]
    cdef int64_t ii = <int64_t> i
    with bit_gen.lock, nogil:
        for k in range(m):
            out[k] = (<double> (kl + _ex_draw(bg, fam, ii, n, s, tg))) * gamma


def ex_fill_rows(object gen, int fam, const double[:, :] i, int64_t n, uint64_t s, int64_t kl,
                 double gamma, double[:, ::1] out):
    """Per-element input indices (broadcast to ``out``'s shape; stride-0 views welcome)."""
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef uint64_t tg = _ex_tg(fam, s)
    cdef Py_ssize_t a, b, n0 = out.shape[0], n1 = out.shape[1]
    with bit_gen.lock, nogil:
        for a in range(n0):
            for b in range(n1):
                out[a, b] = (<double> (kl + _ex_draw(bg, fam, <int64_t> i[a, b], n, s, tg))) * gamma


def ex_lnz(int fam, double x, int64_t n):
    """lnZ(i), i = 0..n, of the bounded discrete law (up to an additive constant)."""
    out = _np.empty(n + 1)
    cdef double[::1] v = out
    with nogil:
        _ex_lnz(fam, x, n, &v[0])
    return out


def ex_certify(int fam, double x, int64_t n, int64_t dk):
    """Certified privacy loss (max over all neighbouring grid inputs, plus EX_MARGIN)."""
    buf = _np.empty(n + 1)
    cdef double[::1] v = buf
    cdef double r
    with nogil:
        _ex_lnz(fam, x, n, &v[0])
        r = _ex_max_loss(fam, x, n, dk, &v[0], 1)
    return _ex_certified(r)


def ex_calibrate(int fam, double target, int64_t n, int64_t dk, double hint, uint64_t smax):
    """(status, integer scale, certified loss); status 0 ok, 1 too large, 2 not certified."""
    buf = _np.empty(n + 1)
    cdef double[::1] v = buf
    cdef uint64_t s = 0
    cdef double cert = _np.nan
    cdef int st
    with nogil:
        st = _ex_calibrate(fam, target, n, dk, hint, smax, &v[0], &s, &cert)
    return st, s, cert
