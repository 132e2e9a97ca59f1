# Declarations of bndp._core.sample (cimported by the modules that use them)

from numpy.random.c_distributions cimport random_standard_normal
from bndp._core.common cimport *
from bndp._core.special cimport *

cdef inline void _tn_setup_draw(TNParams* p, double loc, double scale, double lo, double hi) noexcept nogil:
    # Everything the sampler needs (logZ is left NaN in the straddle case: see _tn_setup).
    cdef double inv = 1.0 / scale
    cdef double a = (lo - loc) * inv
    cdef double b = (hi - loc) * inv
    cdef double t
    p.loc = loc
    p.scale = scale
    p.lo = lo
    p.hi = hi
    cdef double mR
    p.far = 0
    if a <= 0.0 and b >= 0.0:
        p.mode = 0
        _phi_split(-a, &p.mL, &p.tlo)        # Phi(0) - Phi(a), Phi(a)
        _phi_split(b, &mR, &p.thi)           # Phi(b) - Phi(0), Phi(-b)
        p.Z = p.mL + mR
        p.logZ = NAN                         # not needed to sample; _tn_setup fills it
        p.lb = 0.0                           # unused in this mode
        p.la = 0.0
        p.om = 0.0
    else:
        p.mL = 0.0                           # unused in the tail modes
        p.Z = 0.0
        p.tlo = 0.0
        p.thi = 0.0
        if b < 0.0:
            p.mode = 1
        else:
            p.mode = 2
            t = a
            a = -b
            b = -t
        p.far = b < -TN_FAR
        if p.far:
            # beta = |b| and 1 - e^(-beta W) (W the standardised width): see _tn_quantile
            p.tlo = -b
            p.thi = -expm1(-p.tlo * ((hi - lo) * inv))
        p.lb = _log_ndtr(b)
        p.la = _log_ndtr(a)
        p.om = -expm1(p.la - p.lb)          # 1 - Phi(a)/Phi(b)
        p.logZ = p.lb + log(p.om)


cdef inline double _tn_quantile_std(const TNParams* p, double u) noexcept nogil:
    # Standardised quantile z of the truncated law at probability u in (0, 1).
    if p.mode == 0:
        return _tn_straddle_std(u, p.Z, p.mL, p.tlo, p.thi)
    if p.mode == 1:
        return _ndtri_lower_log(p.lb + log1p(-(1.0 - u) * p.om))
    # mirrored right tail: draw -z from the left tail with probability 1 - u
    return -_ndtri_lower_log(p.lb + log1p(-u * p.om))


cdef inline double _clip(double x, double lo, double hi) noexcept nogil:
    # Guard against last-ulp excursions of loc + scale*z only: the law already lies in [lo, hi].
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


# Near end b beyond 2^28 scales from the mean (b < -2^28 in the left-tail coordinates): with
# t = b - z, the density is proportional to exp(-beta t - t^2/2) on [0, W], beta = |b|, and
# t <= 37/beta for every draw (u >= 2^-53), so t^2/2 <= 37/(2 beta^2) < 3e-16 relative to
# beta t: t is a truncated exponential of rate beta to rounding,
# t = -log1p(-v (1 - e^(-beta W)))/beta, and the draw is the end minus scale*t. Working from
# the end avoids loc + scale*z, which cancels (loc = 1e200 on [-1, 1] gave NaN), and
# log Phi(b), which overflows beyond |b| ~ 1e154.
cdef inline double _tn_quantile(const TNParams* p, double u) noexcept nogil:
    if p.far:
        if p.mode == 1:
            return _clip(p.hi + p.scale * (log1p(-(1.0 - u) * p.thi) / p.tlo), p.lo, p.hi)
        return _clip(p.lo - p.scale * (log1p(-u * p.thi) / p.tlo), p.lo, p.hi)
    return _clip(p.loc + p.scale * _tn_quantile_std(p, u), p.lo, p.hi)


cdef inline double _tn_draw(bitgen_t* bg, const TNParams* p) noexcept nogil:
    return _tn_ppf(p, _u_open(bg))


cdef inline void _tn_setup(TNParams* p, double loc, double scale, double lo, double hi) noexcept nogil:
    # Full parameter set (sampling, CDF, density, moments).
    _tn_setup_draw(p, loc, scale, lo, hi)
    if p.mode == 0:
        p.logZ = log(p.Z)


cdef inline int _tn_block_set(TNBlock* b, Py_ssize_t k, double loc, double scale, double lo,
                              double hi) noexcept nogil:
    # sets row k of the block; returns 1 for a row in one tail (mode 1 or 2), else 0
    _tn_setup_draw(&b.p[k], loc, scale, lo, hi)
    b.Z[k] = b.p[k].Z                 # 0 in the tail modes: those entries are redone below
    b.mL[k] = b.p[k].mL
    b.tlo[k] = b.p[k].tlo
    b.thi[k] = b.p[k].thi
    b.loc[k] = loc
    b.scale[k] = scale
    b.lo[k] = lo
    b.hi[k] = hi
    b.onetail[k] = b.p[k].mode != 0
    return b.onetail[k]


cdef inline Py_ssize_t _tn_block_setup(TNBlock* b, Py_ssize_t m) noexcept nogil:
    # the setup of rows 0..m-1 whose parameters are in b.loc, b.scale, b.lo, b.hi: the
    # branch-free pass (_simd.h) for the rows that straddle their parent median, the scalar
    # log-space setup for rows in one tail; returns the number of the latter. The pass gives
    # the straddling rows the values of the scalar setup (_tn_setup_draw), except a tail
    # mass below 6e-300 (beyond 37 scales), which it sets to 0: the quantile adds it to at
    # least 2^-54, so the draws are bit for bit those of the scalar path
    # (tests/test_special.py).
    cdef Py_ssize_t k, ntail
    ntail = _tn_setup_pass(b.loc, b.scale, b.lo, b.hi, m, b.Z, b.mL, b.tlo, b.thi, b.onetail)
    if ntail > 0:
        for k in range(m):
            if b.onetail[k]:
                _tn_setup_draw(&b.p[k], b.loc[k], b.scale[k], b.lo[k], b.hi[k])
    return ntail


cdef inline void _tn_block_draw(bitgen_t* bg, TNBlock* b, Py_ssize_t m, double* out,
                                Py_ssize_t ntail, Py_ssize_t stride) noexcept nogil:
    # out[k] for k < m from rows 0..m-1 of the block (m <= TN_BLOCK), ntail of them in
    # one tail; stride 0: all rows are row 0 (only the tail rows' p[k] are read per row)
    cdef Py_ssize_t k
    for k in range(m):
        b.u[k] = _u_open(bg)
    if ntail < m:
        _tn_straddle_block(b.u, out, m, b.Z, b.mL, b.tlo, b.thi, b.loc, b.scale, b.lo, b.hi,
                           stride)
    if ntail > 0:
        for k in range(m):
            if b.onetail[k * stride]:
                out[k] = _tn_ppf(&b.p[k * stride], b.u[k])


cdef inline void _bl_setup(BLParams* p, double q, double b, double lo, double hi) noexcept nogil:
    p.q = q
    p.b = b
    p.lo = lo
    p.hi = hi
    _bl_setup_one(q, b, lo, hi, &p.mL, &p.C)


cdef inline double _bl_quantile(const BLParams* p, double u) noexcept nogil:
    return _bl_draw(u, p.q, p.b, p.lo, p.hi, p.mL, p.C)


cdef inline double _gn_std(double u) noexcept nogil:
    # Phi^-1(u) for u in (0, 1)
    cdef double q = u - 0.5
    if fabs(q) <= 0.425:
        return _ppnd_central(q)
    if q < 0.0:
        return _ndtri_lower_log(log(u))
    return -_ndtri_lower_log(log(1.0 - u))


cdef inline double _lp_std(double u) noexcept nogil:
    # standard Laplace quantile: log(2u) for u < 1/2, -log(2(1-u)) otherwise
    if u < 0.5:
        return log(2.0 * u)
    return -log(2.0 * (1.0 - u))


cdef inline double _gr_std_normal(bitgen_t* bg) noexcept nogil:
    return random_standard_normal(bg)


cdef inline Py_ssize_t _cl_first_above(const double* c, Py_ssize_t n, double t,
                                       int depth) noexcept nogil:
    # first k in [0, n) with c[k] > t (n - 1 if none: rounding), fixed number of steps
    cdef Py_ssize_t lo = 0, hi = n - 1, mid
    cdef int it
    for it in range(depth + 1):
        if lo < hi:
            mid = (lo + hi) >> 1
            if c[mid] > t:
                hi = mid
            else:
                lo = mid + 1
    return lo


cdef inline double _cl_quantile(const CLPieces* P, double u) noexcept nogil:
    cdef double t = u * P.N, r, y
    cdef Py_ssize_t k
    if t < P.Lc:
        k = _cl_first_above(P.cl, P.nl, t, P.depth)
        r = t - (P.cl[k - 1] if k > 0 else 0.0)
        y = P.mu + P.s * log(2.0 * r + P.al[k])
        return _clip(y, P.lol[k], P.hil[k])
    t = (1.0 - u) * P.N
    k = _cl_first_above(P.cr, P.nr, t, P.depth)
    r = t - (P.cr[k - 1] if k > 0 else 0.0)
    y = P.mu - P.s * log(2.0 * r + P.ar[k])
    return _clip(y, P.lor[k], P.hir[k])


cdef inline Py_ssize_t _cl_locate(const double* L, Py_ssize_t m, double x) noexcept nogil:
    # largest k with L[k] <= x, or -1
    cdef Py_ssize_t lo = 0, hi = m, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if L[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1

cdef class _CLBuf:
    cdef double* buf
    cdef CLWork w
    cdef CLPieces P
    cdef object keep

cdef double _tn_ppf(const TNParams* p, double u) noexcept nogil
cdef void _cl_consts(CLPieces* P, const double* L, const double* R, Py_ssize_t m,
                     double s) noexcept nogil
cdef void _cl_pieces(CLPieces* P, const double* L, const double* R, double mu) noexcept nogil
