# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled kernels of bndp.

Layers (see the developers' guide): ``cdef ... noexcept nogil`` kernels that never raise and
never validate; thin ``def`` wrappers that borrow a NumPy ``bitgen_t``, take the BitGenerator's
lock and fill caller-allocated buffers. Every input check happens once in the Python layer
(``bndp._validation``) before anything here is called.

References
----------
[HABM20] N. Holohan, S. Antonatos, S. Braghin, P. Mac Aonghusa. The Bounded Laplace Mechanism
         in Differential Privacy. J. Privacy and Confidentiality 10(1), 2020.
[CH24]   B. Chen, M. Hale. The Bounded Gaussian Mechanism for Differential Privacy.
         J. Privacy and Confidentiality, 2024.
[W88]    M. J. Wichura. Algorithm AS 241: The Percentage Points of the Normal Distribution.
         Applied Statistics 37(3), 477-484, 1988.
"""

from libc.math cimport (log, log1p, exp, expm1, sqrt, erf, erfc, fabs, nextafter, isnan, copysign,
                        isfinite, fma, hypot, INFINITY, NAN, M_PI)
from libc.stdlib cimport malloc, free
from libc.stdint cimport int64_t
from cpython.pycapsule cimport PyCapsule_IsValid, PyCapsule_GetPointer
from numpy.random cimport bitgen_t
from scipy.special.cython_special cimport log_ndtr as _sc_log_ndtr, erfcx as _sc_erfcx

import numpy as _np

cdef extern from *:
    """
    #include <stdint.h>
    #define BNDP_TWO_M52 2.220446049250313080847263336181640625e-16
    """
    double BNDP_TWO_M52

cdef double SQRT1_2 = 0.70710678118654752440084436210484903928
cdef double LOG_SQRT_2PI = 0.91893853320467274178032973640561763986
cdef double SQRT_2PI = 2.50662827463100050241576528481104525301

cdef inline double _log_ndtr(double x) noexcept nogil:
    return _sc_log_ndtr(x)


# ---------------------------------------------------------------------------------------
# Random bits
# ---------------------------------------------------------------------------------------

cdef const char *_CAPSULE_NAME = "BitGenerator"

cdef bitgen_t* _borrow(object bit_generator) except NULL:
    capsule = bit_generator.capsule
    if not PyCapsule_IsValid(capsule, _CAPSULE_NAME):
        raise TypeError("rng must be backed by a NumPy BitGenerator (capsule 'BitGenerator')")
    return <bitgen_t*> PyCapsule_GetPointer(capsule, _CAPSULE_NAME)


cdef inline double _u_open(bitgen_t* bg) noexcept nogil:
    # Uniform on the open interval (0, 1): (2k + 1) * 2^-53 for a 52-bit k. Never 0 or 1,
    # so inverse CDFs with an infinite end never return +-inf, and 1 - u is exact (both u
    # and 1 - u are odd multiples of 2^-53 below 1), which the two-sided samplers rely on.
    return (<double>(bg.next_uint64(bg.state) >> 12) + 0.5) * BNDP_TWO_M52


# ---------------------------------------------------------------------------------------
# Inverse of the standard normal CDF [W88], split so that callers pass the quantity that
# carries the precision: q = p - 1/2 for the central part, log of the tail mass otherwise.
# Accuracy against SciPy/mpmath is tested in tests/test_special.py (a few ulps).
# ---------------------------------------------------------------------------------------

cdef extern from "_simd.h":
    # Phi^-1(1/2 + q) for |q| <= 0.425 (AS 241, first rational approximation), shared with
    # the vectorised block loop below
    double _ppnd_central "bndp_ppnd_central"(double q) noexcept nogil
    # -Phi^-1(t) from r = sqrt(-log t) for t <= 0.075 (AS 241, tail approximations)
    double _ppnd_tail_r "bndp_ppnd_tail_r"(double r) noexcept nogil
    # log of a positive normal number, branch-free (about 1 ulp; tests/test_special.py)
    double _log_fast "bndp_log"(double x) noexcept nogil
    # standardised truncated-normal quantile for a row with a <= 0 <= b (see TNParams)
    double _tn_straddle_std "bndp_tn_straddle_std"(double u, double Z, double mL, double tlo,
                                                   double thi) noexcept nogil
    void _tn_straddle_block "bndp_tn_straddle_block"(
        const double* u, double* out, Py_ssize_t n, const double* Z, const double* mL,
        const double* tlo, const double* thi, const double* loc, const double* scale,
        const double* lo, const double* hi, Py_ssize_t stride) noexcept nogil


cdef double _ndtri_lower_log(double logt) noexcept nogil:
    # Phi^-1(exp(logt)) for logt <= log(1/2): the lower quantile from a log-probability.
    cdef double x, h, lx
    cdef int k
    if logt > -2.5902671654458267:        # t > 0.075: central branch, q = t - 1/2 (t <= 1/2)
        return _ppnd_central(exp(logt) - 0.5)
    if logt >= -740.0:                    # AS 241 tail branch is accurate for r <= 27.2
        return -_ppnd_tail_r(sqrt(-logt))
    # Far tail (t < 1e-321, |x| > 38.4): AS 241 loses accuracy there. Start from its value and
    # polish with Newton steps on log Phi(x) = logt; log_ndtr is accurate in this range and
    # d/dx log Phi(x) = phi(x)/Phi(x) = exp(log phi(x) - log Phi(x)).
    # The slope phi(x)/Phi(x) = sqrt(2/pi)/erfcx(-x/sqrt2) is taken from erfcx: formed as
    # exp(log phi - log Phi) it would cancel (both logs ~ -x^2/2), garbage for |x| > 1e7.
    # Beyond |x| ~ 1.4e154, x^2/2 overflows: there Phi^-1(e^logt) = -sqrt(-2 logt) to
    # rounding (the correction log|x| is below the resolution of logt).
    if logt < -1e300:
        return -sqrt(-2.0 * logt) if logt > -INFINITY else -INFINITY
    # start from the asymptotic Phi(x) ~ phi(x)/|x|: x^2 + ln x^2 = y := -2 logt - ln(2 pi),
    # x^2 ~ y - ln y (AS 241's tail approximation drifts off for r = sqrt(-logt) >> 27)
    h = -2.0 * logt - 2.0 * LOG_SQRT_2PI
    x = -sqrt(h - log(h))
    for k in range(8):
        lx = _log_ndtr(x)
        h = (lx - logt) * (_sc_erfcx(-x * SQRT1_2) * 1.2533141373155002512078826424055226)
        x -= h
        if fabs(h) <= 1e-17 * fabs(x):
            break
    return x


# ---------------------------------------------------------------------------------------
# Truncated normal N(loc, scale^2) restricted to [lo, hi], by inverse CDF.
#
# Standardise: a = (lo - loc)/scale, b = (hi - loc)/scale. Three regimes:
#   * a <= 0 <= b ("straddle"): the masses on each side of the parent median,
#     mL = Phi(0) - Phi(a) = erf(-a/sqrt2)/2 and mR = erf(b/sqrt2)/2, are sums of nothing and
#     carry full relative precision even when the interval is tiny against scale. With
#     s = U*Z - mL (Z = mL + mR), the draw is Phi^-1(1/2 + s), taken from the central branch
#     with s itself when |s| <= 0.425, or from the tail with the tail mass written as a sum
#     of non-negative terms (Phi(a) + U*Z on the left, Phi(-b) + (1-U)*Z on the right).
#   * b < 0 (the interval lies in the left tail): log space. With la = log Phi(a),
#     lb = log Phi(b), the target is log(Phi(a) + U*Z) = lb + log1p(-(1-U)(1-e^(la-lb))),
#     inverted by _ndtri_lower_log. Exact in far tails such as [-1001, -1000].
#   * a > 0: mirror image of the previous case.
# ---------------------------------------------------------------------------------------

cdef struct TNParams:
    int mode            # 0 straddle, 1 left tail, 2 right tail (mirrored)
    int far             # tail mode with the near end beyond TN_FAR scales: see _tn_quantile
    double loc, scale, lo, hi
    double mL, Z, tlo, thi          # straddle
    double lb, la, om, logZ         # tails (in mirrored coordinates for mode 2)


cdef extern from "_simd.h":
    # Phi(y) - 1/2 and Phi(-y) for 0 <= y <= 37 (Cody's rational approximations; see
    # _simd.h): branch-free, as the vectorised block setup uses it, and with branches, as the
    # scalar setup below uses it (the same bits; tests/test_special.py)
    double _exp_nonpos_fast "bndp_exp_nonpos"(double x) noexcept nogil
    void _phi_split_fast "bndp_phi_split"(double y, double* mass0, double* tail) noexcept nogil
    void _phi_split_branchy "bndp_phi_split_branchy"(double y, double* mass0, double* tail) noexcept nogil
    Py_ssize_t _tn_setup_pass "bndp_tn_setup_pass"(
        const double* loc, const double* scale, const double* lo, const double* hi, Py_ssize_t n,
        double* Z, double* mL, double* tlo, double* thi, int64_t* onetail) noexcept nogil


cdef inline void _phi_split(double z, double* mass0, double* tail) noexcept nogil:
    # For z >= 0: mass0 = Phi(z) - 1/2 and tail = Phi(-z), both to full relative precision
    # (a few ulps, tests/test_special.py). Beyond z = 37 the tail (below 6e-300) comes from
    # libm's erfc, which follows it into the subnormals; mass0 is then exactly 1/2.
    if z <= 37.0:
        _phi_split_branchy(z, mass0, tail)
    else:
        tail[0] = 0.5 * erfc(z * SQRT1_2)
        mass0[0] = 0.5 - tail[0]


cdef inline double _ndtr_lower(double x) noexcept nogil:
    # Phi(x) for x <= 0 to a few ulps (relative)
    cdef double m, t
    _phi_split(-x, &m, &t)
    return t


cdef inline double _half_mass(double z) noexcept nogil:
    # Phi(z) - 1/2 for z >= 0, to full relative precision
    cdef double m, t
    _phi_split(z, &m, &t)
    return m


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
cdef double TN_FAR = 268435456.0


cdef inline double _tn_quantile(const TNParams* p, double u) noexcept nogil:
    if p.far:
        if p.mode == 1:
            return _clip(p.hi + p.scale * (log1p(-(1.0 - u) * p.thi) / p.tlo), p.lo, p.hi)
        return _clip(p.lo - p.scale * (log1p(-u * p.thi) / p.tlo), p.lo, p.hi)
    return _clip(p.loc + p.scale * _tn_quantile_std(p, u), p.lo, p.hi)




cdef inline double _logaddexp(double x, double y) noexcept nogil:
    # log(e^x + e^y), y finite
    if x > y:
        return x + log1p(exp(y - x))
    return y + log1p(exp(x - y))


cdef double _tn_ppf(const TNParams* p, double u) noexcept nogil:
    # Quantile for evaluation (ppf), u in (0, 1). In a tail mode the log target mass
    # log(Phi(a) + v Z) (left-tail coordinates, v the probability counted from the far end)
    # is lb + log1p(-(1 - v) om) when v > 1/2, as the sampler has it, and
    # logaddexp(log Phi(a), log v + log Z) when v <= 1/2: the former loses everything once
    # v Z falls below ulp(Phi(a)) (NaN or the far end for u <= 1e-30 on [-40, -39]).
    # The sampler draws through this function too (so a draw is ppf(u) bit for bit); in a
    # tail mode, draws with v <= 1/2 moved by a few ulps (more for v near 2^-53).
    cdef double v, lt, W
    if p.mode == 0:
        return _tn_quantile(p, u)
    v = u if p.mode == 1 else 1.0 - u           # exact: 1 - u for u >= 1/2 only is used
    if v > 0.5:
        return _tn_quantile(p, u)
    if p.far:
        # truncated exponential from the near end: t = -log(e^(-beta W) + v (1 - e^(-beta W)))/beta
        W = (p.hi - p.lo) / p.scale
        lt = _logaddexp(-p.tlo * W, log(v) + log(p.thi))
        if p.mode == 1:
            return _clip(p.hi + p.scale * (lt / p.tlo), p.lo, p.hi)
        return _clip(p.lo - p.scale * (lt / p.tlo), p.lo, p.hi)
    lt = _logaddexp(p.la, log(v) + p.logZ)
    if p.mode == 1:
        return _clip(p.loc + p.scale * _ndtri_lower_log(lt), p.lo, p.hi)
    return _clip(p.loc - p.scale * _ndtri_lower_log(lt), p.lo, p.hi)


cdef inline double _tn_draw(bitgen_t* bg, const TNParams* p) noexcept nogil:
    return _tn_ppf(p, _u_open(bg))


cdef inline void _tn_setup(TNParams* p, double loc, double scale, double lo, double hi) noexcept nogil:
    # Full parameter set (sampling, CDF, density, moments).
    _tn_setup_draw(p, loc, scale, lo, hi)
    if p.mode == 0:
        p.logZ = log(p.Z)


# Draws come in blocks: the uniforms of a block are drawn first (in stream order); then the
# straddling rows go through _simd.h's vectorised loops (the central branch over the whole
# block, the tail branch over the entries that need it, packed), and the rows in one tail
# through the scalar path above. Each entry is the same IEEE computation as _tn_draw (which
# calls the same inline straddle quantile), so the stream and the values are those of a
# draw-by-draw loop.
cdef extern from "_simd.h":
    enum: TN_BLOCK "BNDP_TN_BLOCK"

cdef struct TNBlock:
    TNParams p[TN_BLOCK]
    double u[TN_BLOCK]
    double Z[TN_BLOCK]
    double mL[TN_BLOCK]
    double tlo[TN_BLOCK]
    double thi[TN_BLOCK]
    double loc[TN_BLOCK]
    double scale[TN_BLOCK]
    double lo[TN_BLOCK]
    double hi[TN_BLOCK]
    int64_t onetail[TN_BLOCK]       # 1: a row in one tail, set up in p[k] (scalar, log space)


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


cdef double _tn_cdf(const TNParams* p, double x) noexcept nogil:
    cdef double z, lz
    if x <= p.lo:
        return 0.0
    if x >= p.hi:
        return 1.0
    z = (x - p.loc) / p.scale
    if p.mode == 0:
        if z <= 0.0:
            if z < -1.0:
                return (0.5 * erfc(-z * SQRT1_2) - p.tlo) / p.Z
            return (p.mL - 0.5 * erf(-z * SQRT1_2)) / p.Z
        return (p.mL + 0.5 * erf(z * SQRT1_2)) / p.Z
    if p.mode == 1:
        lz = _log_ndtr(z)
        return exp(lz - p.lb) * (-expm1(p.la - lz)) / p.om
    # mirrored: F(x) = 1 - G(-z) where G is the left-tail law on [-b, -a]
    lz = _log_ndtr(-z)
    return 1.0 - exp(lz - p.lb) * (-expm1(p.la - lz)) / p.om


cdef inline double _tn_logpdf(const TNParams* p, double x) noexcept nogil:
    cdef double z
    if x < p.lo or x > p.hi:
        return -INFINITY
    z = (x - p.loc) / p.scale
    return -0.5 * z * z - LOG_SQRT_2PI - log(p.scale) - p.logZ


# Gauss-Legendre nodes/weights on [-1, 1], filled once at import (numpy.polynomial.legendre).
cdef enum:
    GL_N = 24
    GL_R = 12
cdef double _GL_X[GL_N]
cdef double _GL_W[GL_N]
cdef double _GLR_X[GL_R]
cdef double _GLR_W[GL_R]


# Moments of a truncated normal lying in one tail, its near end e at beta = |loc - e|/scale
# >= TN_TAILMOM scales from the mean. With X = e -+ scale*T (T >= 0 the standardised offset
# from the near end, towards the far end f at standardised distance W = |f - e|/scale), T has
# the density exp(-beta t - t^2/2) on [0, W], so E X = e -+ scale E T and
# Var X = scale^2 Var T, both free of cancellation: E T ~ 1/beta and Var T ~ 1/beta^2 are
# formed directly (the closed form 1 + a phi(a)/Z - ... loses about beta^2 ulps and more
# through exp(-a^2/2 - log Z); it gave a negative variance at beta = 1000).
#   * otherwise: composite 24-point Gauss-Legendre on [0, L], L = min(W, t*), where
#     beta t* + t*^2/2 = 45 (the mass beyond is below e^-45 relative), in pieces across which
#     the exponent changes by at most 5 (the rule is then exact to rounding); two passes
#     (mean, then centred second moment).
#   * beta > 1e8 and beta W > 45: t^2/2 <= 45^2/(2 beta^2) < 1e-13 over the mass, whose
#     effect on the moments is O(1/beta^2) <= 1e-16 relative: T is a truncated exponential of rate beta,
#     E T = (1 - y e^-y/(1 - e^-y))/beta, Var T = (1 - y^2 e^-y/(1 - e^-y)^2)/beta^2 with
#     y = beta W > 45 (inf for a half-line); a narrower support takes the quadrature. Formed
#     from s = scale/beta = scale^2/|loc - e| and y = |f - e|/|loc - e|, so that neither
#     beta nor W overflows (loc = 1e200 on [-1, 1], scale = 1e-300).
cdef double TN_TAILMOM = 2.0

cdef void _tn_tail_moments(double loc, double scale, double e, double f, double* mean,
                           double* var) noexcept nogil:
    cdef double sgn = 1.0 if f > e else -1.0     # direction from the near end into the support
    cdef double d = fabs(loc - e), beta, W, L, h, c, t, wgt, s0 = 0.0, s1 = 0.0, s2 = 0.0
    cdef double m, rng, s, y, q, et, vt
    cdef int k, j, npc
    y = (fabs(f - e) / scale) * (d / scale)   # beta W; inf for an infinite far end
    if d > 1e8 * scale and not (y <= 45.0):
        s = scale * (scale / d) if scale < 1.0 else scale / (d / scale)
        if y > 745.0:
            et = 1.0
            vt = 1.0
        elif y > 0.0:
            q = exp(-y) / (-expm1(-y))             # e^-y/(1 - e^-y)
            et = 1.0 - y * q
            vt = 1.0 - y * y * q * (1.0 + q)       # e^-y/(1-e^-y)^2 = q (1 + q)
        else:                                      # 0 * inf: W below the float range
            et = 0.0
            vt = 0.0
        mean[0] = e + sgn * (s * et)
        var[0] = (s * s) * vt
        return
    beta = d / scale
    W = fabs(f - e) / scale
    L = 90.0 / (beta + hypot(beta, 9.486832980505138))   # t*, no overflow of beta^2
    if W < L:
        L = W
    rng = L * (beta + 0.5 * L)
    npc = <int>(rng / 5.0) + 1
    if npc > 9:
        npc = 9
    h = L / npc
    for j in range(npc):
        c = (j + 0.5) * h
        for k in range(GL_N):
            t = c + 0.5 * h * _GL_X[k]
            wgt = _GL_W[k] * exp(-t * (beta + 0.5 * t))
            s0 += wgt
            s1 += wgt * t
    m = s1 / s0
    for j in range(npc):
        c = (j + 0.5) * h
        for k in range(GL_N):
            t = c + 0.5 * h * _GL_X[k]
            wgt = _GL_W[k] * exp(-t * (beta + 0.5 * t))
            s2 += wgt * (t - m) * (t - m)
    mean[0] = e + sgn * (scale * m)
    var[0] = (scale * scale) * (s2 / s0)


cdef void _tn_moments(const TNParams* p, double* mean, double* var) noexcept nogil:
    # Mean and variance of the truncated law. When the interval is narrow against the local
    # scale of the Gaussian (width * max(1, |a|, |b|) <= 2), the closed form
    # Var/scale^2 = 1 + (a phi(a) - b phi(b))/Z - ((phi(a) - phi(b))/Z)^2 cancels
    # catastrophically (it tends to width^2/12 through O(1) terms), so Gauss-Legendre
    # quadrature of the standardised density is used there instead (exact to rounding on
    # such an interval: the integrand varies by at most e^2 across it).
    cdef double a = (p.lo - p.loc) / p.scale
    cdef double b = (p.hi - p.loc) / p.scale
    cdef double width = b - a, zref, h, c, z, wgt, s0 = 0.0, s1 = 0.0, s2 = 0.0, m1, pa, pb
    cdef double big = fabs(a)
    cdef int k
    # one tail, near end at least TN_TAILMOM scales from the mean: the closed form cancels
    # (Var -> 1/beta^2 through O(1) terms), and so does loc + scale*z in the quadrature
    # below once loc is far (loc = -1000 on [0, 0.001]: 1e-10); moments of the offset from
    # the near end instead, narrow or not
    if b < -TN_TAILMOM:
        _tn_tail_moments(p.loc, p.scale, p.hi, p.lo, mean, var)
        return
    if a > TN_TAILMOM:
        _tn_tail_moments(p.loc, p.scale, p.lo, p.hi, mean, var)
        return
    if fabs(b) > big:
        big = fabs(b)
    if big < 1.0:
        big = 1.0
    if width * big <= 2.0:
        if a <= 0.0 and b >= 0.0:
            zref = 0.0
        elif b < 0.0:
            zref = b
        else:
            zref = a
        h = 0.5 * width
        c = 0.5 * (a + b)
        for k in range(GL_N):
            z = c + h * _GL_X[k]
            wgt = _GL_W[k] * exp(-0.5 * (z - zref) * (z + zref))
            s0 += wgt
            s1 += wgt * (z - c)
        m1 = s1 / s0                       # mean offset from the midpoint c
        for k in range(GL_N):
            z = c + h * _GL_X[k]
            wgt = _GL_W[k] * exp(-0.5 * (z - zref) * (z + zref))
            s2 += wgt * (z - c - m1) * (z - c - m1)
        mean[0] = p.loc + p.scale * (c + m1)
        var[0] = p.scale * p.scale * (s2 / s0)
        return
    # closed form with phi/Z formed in log space
    if isfinite(a):
        pa = exp(-0.5 * a * a - LOG_SQRT_2PI - p.logZ)
    else:
        pa = 0.0
    if isfinite(b):
        pb = exp(-0.5 * b * b - LOG_SQRT_2PI - p.logZ)
    else:
        pb = 0.0
    m1 = pa - pb
    mean[0] = p.loc + p.scale * m1
    z = 1.0 + ((a * pa if pa != 0.0 else 0.0) - (b * pb if pb != 0.0 else 0.0)) - m1 * m1
    var[0] = p.scale * p.scale * z


# ---------------------------------------------------------------------------------------
# Bounded Laplace [HABM20, Def. 3.1]: Laplace(q, b) restricted to [l, u] and renormalised,
# sampled by the closed-form inverse CDF (one uniform, constant work: no timing channel).
# a = (q - l)/b, c = (u - q)/b, mL = -expm1(-a)/2, mR = -expm1(-c)/2, C = mL + mR
# (Lemma 3.2 in cancellation-free form). With s = U*C - mL:
#   x = q + sign(s) * b * (-log(1 - 2|s|)).
# The setup and the draw are the branch-free functions of _simd.h (bndp_bl_setup_one,
# bndp_bl_draw), shared by the scalar calls here and the vectorised block loops, so both
# give the same bits (tests/test_samplers.py). log(1 - 2|s|) keeps full relative precision
# when |s| is tiny (b > u - l: the law is nearly uniform; the textbook
# p = F(l) + U(F(u) - F(l)) is off by ~5e-8 at b = 1e9 on [0, 1]); far from q its relative
# error is of the order of the uniform's own resolution, as for any inverse-CDF Laplace
# sampler. One end may be infinite (a half-line).
# ---------------------------------------------------------------------------------------

cdef extern from "_simd.h":
    double _expm1_nonpos "bndp_expm1_nonpos"(double x) noexcept nogil
    double _log1m2t "bndp_log1m2t"(double t) noexcept nogil
    void _bl_setup_one "bndp_bl_setup_one"(double q, double b, double lo, double hi,
                                           double* mL, double* C) noexcept nogil
    double _bl_draw "bndp_bl_draw"(double u, double q, double b, double lo, double hi,
                                   double mL, double C) noexcept nogil
    void _bl_setup_pass "bndp_bl_setup_pass"(
        const double* q, const double* b, const double* lo, const double* hi, Py_ssize_t n,
        double* mL, double* C) noexcept nogil
    void _bl_setup_pass_q "bndp_bl_setup_pass_q"(
        const double* q, double b, double lo, double hi, Py_ssize_t n, double* mL,
        double* C) noexcept nogil
    void _bl_draw_pass "bndp_bl_draw_pass"(
        const double* u, double* out, Py_ssize_t n, const double* q, const double* b,
        const double* lo, const double* hi, const double* mL, const double* C) noexcept nogil
    void _bl_draw_pass_q "bndp_bl_draw_pass_q"(
        const double* u, double* out, Py_ssize_t n, const double* q, double b, double lo,
        double hi, const double* mL, const double* C) noexcept nogil
    void _bl_draw_pass1 "bndp_bl_draw_pass1"(
        const double* u, double* out, Py_ssize_t n, double q, double b, double lo, double hi,
        double mL, double C) noexcept nogil


cdef struct BLParams:
    double q, b, lo, hi, mL, C


cdef inline void _bl_setup(BLParams* p, double q, double b, double lo, double hi) noexcept nogil:
    p.q = q
    p.b = b
    p.lo = lo
    p.hi = hi
    _bl_setup_one(q, b, lo, hi, &p.mL, &p.C)


cdef inline double _bl_quantile(const BLParams* p, double u) noexcept nogil:
    return _bl_draw(u, p.q, p.b, p.lo, p.hi, p.mL, p.C)


cdef struct BLBlock:
    double u[TN_BLOCK]
    double q[TN_BLOCK]
    double b[TN_BLOCK]
    double lo[TN_BLOCK]
    double hi[TN_BLOCK]
    double mL[TN_BLOCK]
    double C[TN_BLOCK]


cdef inline double _bl_cdf(const BLParams* p, double x) noexcept nogil:
    if x <= p.lo:
        return 0.0
    if x >= p.hi:
        return 1.0
    if x <= p.q:
        return -0.5 * exp(-(p.q - x) / p.b) * expm1(-(x - p.lo) / p.b) / p.C
    return (p.mL - 0.5 * expm1(-(x - p.q) / p.b)) / p.C


cdef inline double _bl_logpdf(const BLParams* p, double x) noexcept nogil:
    if x < p.lo or x > p.hi:
        return -INFINITY
    return -fabs(x - p.q) / p.b - log(2.0 * p.b) - log(p.C)


# ---------------------------------------------------------------------------------------
# One bracketing root finder for every calibration.
#
# g is increasing in x (each calibration states why) and g(x) >= 0 means "x satisfies the
# paper's inequality". Given lo with g(lo) < 0 and hi with g(hi) >= 0, the bracket is shrunk
# by Illinois (modified regula falsi) steps; every trial point is kept at least `tol` (about
# two ulps) inside the bracket, so once the estimate has converged onto one end the next
# trial lands just across the root and closes the bracket from the other side (the trick of
# Brent's zeroin). A step that fails to halve the bracket twice in a row is replaced by
# bisection. Stops when hi - lo <= 2*tol (floating-point resolution), on an exact zero, or
# after 200 evaluations. Returns hi: it satisfies g(hi) >= 0 as evaluated, never a midpoint
# that may sit on the unsafe side. Typical cost: 6-12 evaluations (pure bisection: ~55).
# ---------------------------------------------------------------------------------------

ctypedef double (*monotone_fn)(double, void*) noexcept nogil

cdef double DBL_EPS = 2.220446049250313e-16


cdef double _bisect_feasible(monotone_fn g, void* args, double lo, double glo,
                             double hi, double ghi, int* n_eval) noexcept nogil:
    cdef double x, gx, width, tol
    cdef int side = 0, it, slow = 0
    for it in range(200):
        width = hi - lo
        tol = 2.0 * DBL_EPS * fabs(hi)
        if not (width > 2.0 * tol):
            break
        if slow >= 2 or not (ghi > glo):
            x = lo + 0.5 * width
            slow = 0
        else:
            x = hi - ghi * (width / (ghi - glo))
            # a step that rounds onto an end means that end has converged: probe just
            # across it (closing the bracket from the other side) rather than bisecting
            if x >= hi:
                x = hi - tol
            elif x <= lo:
                x = lo + tol
            elif not (x > lo and x < hi):      # NaN
                x = lo + 0.5 * width
        if x - lo < tol:
            x = lo + tol
        elif hi - x < tol:
            x = hi - tol
        gx = g(x, args)
        n_eval[0] += 1
        if isnan(gx):
            gx = -INFINITY          # cannot certify x: treat as infeasible, keeps hi certified
        if gx == 0.0:
            return x                # the inequality holds with equality
        if gx > 0.0:
            hi = x
            ghi = gx
            if side == 1:
                glo *= 0.5
            side = 1
        else:
            lo = x
            glo = gx
            if side == -1:
                ghi *= 0.5
            side = -1
        if hi - lo > 0.5 * width:
            slow += 1
        else:
            slow = 0
    return hi


# ---------------------------------------------------------------------------------------
# Bounded Laplace calibration [HABM20, Thm 3.5, Def. 4.1, Alg. 1].
#
# f(b) = dQ / (L - ln dC(b)), L = eps - ln(1 - delta); b is admissible iff f(b) <= b. By
# Lemma 4.3 f is non-increasing, so g(b) = b - f(b) is increasing; the unique fixed point
# lies in [b0, f(b0)] (Thm 4.4) with b0 = dQ/L. ln dC is computed without cancellation
# (exact identity dC - 1 = (1-e^{-dQ/b})(1-e^{-(W-dQ)/b})/(1-e^{-W/b})), valid for W = inf.
# ---------------------------------------------------------------------------------------

cdef inline double _bl_log_dc(double b, double dq, double w) noexcept nogil:
    cdef double dcm1
    if dq >= w:
        return 0.0
    if w == INFINITY:
        dcm1 = -expm1(-dq / b)
    else:
        dcm1 = (-expm1(-dq / b)) * (expm1(-(w - dq) / b) / expm1(-w / b))
    return log1p(dcm1)


cdef struct BLCal:
    double dq, w, L


cdef double _bl_g(double b, void* args) noexcept nogil:
    cdef BLCal* c = <BLCal*> args
    cdef double den = c.L - _bl_log_dc(b, c.dq, c.w)
    if not (den > 0.0):
        return -INFINITY
    return b - c.dq / den


cdef double _bl_scale(double eps, double delta, double dq, double lo, double hi) noexcept nogil:
    # Inputs validated by the caller: eps >= 0 finite, 0 <= delta < 1, eps + delta > 0,
    # dq > 0 finite, lo < hi (at most one end infinite).
    cdef BLCal c
    cdef double b0, fb0, b, gb0, gfb0, ldc
    cdef int n = 0, k
    c.w = hi - lo
    c.dq = dq if dq < c.w else c.w      # the true sensitivity can never exceed u - l
    c.L = eps - log1p(-delta)
    b0 = c.dq / c.L
    if c.dq >= c.w:
        # Cor. 4.5: dC == 1, b* = dQ/L exactly. fl(dQ/L) may sit half an ulp below it: round
        # up so that b L >= dQ holds in exact arithmetic. For delta = 0, L = eps exactly and
        # the sign of b L - dQ is read off one fma; otherwise L carries at most ~2 ulps of
        # rounding (a sum of two non-negative terms), covered by a relative 4 ulps.
        if delta == 0.0:
            if fma(b0, c.L, -c.dq) < 0.0:
                b0 = nextafter(b0, INFINITY)
        else:
            b0 = b0 * (1.0 + 4.0 * DBL_EPS)
        return b0
    gb0 = _bl_g(b0, &c)
    if gb0 >= 0.0:
        b = b0                             # dQ within rounding of W: dC == 1 as evaluated
    else:
        fb0 = b0 - gb0
        gfb0 = _bl_g(fb0, &c) if isfinite(fb0) else -INFINITY
        if not (gfb0 >= 0.0):
            # f(b0) unusable: for tiny L (below ~1e-150) L - ln dC(b0) ~ L^2/2 is below the
            # resolution of L and comes out 0 or negative. The half-line scale
            # dQ/ln((1 + e^L)/2) is an upper bound on b* (ln dC only grows with W)
            fb0 = c.dq / log1p(0.5 * expm1(c.L)) * (1.0 + 4.0 * DBL_EPS)
            gfb0 = _bl_g(fb0, &c)
            if not (gfb0 >= 0.0):
                return NAN                 # cannot certify a scale: the caller refuses
        b = _bisect_feasible(_bl_g, &c, b0, gb0, fb0, gfb0, &n)
    # Round up by a bound on the rounding error of evaluating (3.1) (a few ulps: L - ln dC
    # >= L/2 on the bracket since b* <= 2 b0), so that the returned b satisfies the
    # inequality in exact arithmetic, not only as evaluated in floating point.
    ldc = _bl_log_dc(b, c.dq, c.w)
    b *= 1.0 + DBL_EPS * (2.0 + 4.0 * (c.L + fabs(ldc)) / (c.L - ldc))
    for k in range(8):                     # re-certify as evaluated (never observed to trigger)
        if _bl_g(b, &c) >= 0.0:
            break
        b = nextafter(b, INFINITY)
    return b


# ---------------------------------------------------------------------------------------
# Bounded Gaussian calibration [CH24].
#
# rho(c; w, s) = ln[(Phi((w-c)/s) - Phi(-c/s)) / (Phi(w/s) - 1/2)] is the per-coordinate
# log normaliser ratio (ln dC of Lemma 2.3 at shift c). With h = c/s, t = (w-c)/s:
#   g(c) - g(0) = int_0^h phi(x) (1 - exp(-(x t + t^2/2))) dx   (positive integrand),
# integrated by 12-point Gauss-Legendre when h < 1 (at the rounding floor: tested against
# mpmath), so ln dC keeps full relative precision even when
# s >> w (the naive difference of Phi values returns 0 or the wrong sign there). For h >= 1
# the direct log-difference is accurate (rho >= ~0.13 there).
# ---------------------------------------------------------------------------------------

cdef double _bg_rho(double c, double w, double s) noexcept nogil:
    cdef double h = c / s, t = (w - c) / s, g0, d, x, half, tt
    cdef int k
    if c <= 0.0:
        return 0.0
    g0 = 0.5 * erf(w / s * SQRT1_2)
    if h >= 1.0:
        return log(0.5 * (erf(t * SQRT1_2) + erf(h * SQRT1_2))) - log(g0)
    half = 0.5 * h
    d = 0.0
    tt = 0.5 * t * t
    for k in range(GL_R):
        x = half * (1.0 + _GLR_X[k])
        d += _GLR_W[k] * exp(-0.5 * x * x) * (-expm1(-(x * t + tt)))
    d *= half / SQRT_2PI
    return log1p(d / g0)


cdef inline double _bg_drho(double c, double w, double s) noexcept nogil:
    # d rho / dc = phi(c/s) (1 - exp(-w(w-2c)/(2 s^2))) / (s g(c))   (no cancellation)
    cdef double h = c / s, t = (w - c) / s
    cdef double g = 0.5 * (erf(t * SQRT1_2) + erf(h * SQRT1_2))
    return exp(-0.5 * h * h) / SQRT_2PI * (-expm1(-w * (w - 2.0 * c) / (2.0 * s * s))) / (s * g)


cdef inline void _bg_kkt_bracket(double w, double s, double dq, double mu, double* clo,
                                 double* chi) noexcept nogil:
    # Bracket [clo, chi] (to resolution) of the c in [0, min(w/2, dq)] with
    # dq rho'(c) = 2 mu (c/dq), i.e. rho'(c) = 2 lam c with lam = mu/dq^2 (mu is
    # dimensionless, so it neither overflows nor underflows when dq/w is extreme). rho' is
    # decreasing there (rho concave), 2 lam c increasing, so the root is unique. c <= dq
    # because ||c||_2 <= dq: bisecting on [0, min(w/2, dq)] resolves c relative to dq, not
    # to w (on [0, w/2] a c of 1e-20 w is below the resolution and would come out 0).
    cdef double lo = 0.0, hi = 0.5 * w, cm
    cdef int jt
    if dq < hi:
        hi = dq
    for jt in range(64):
        cm = 0.5 * (lo + hi)
        if cm <= lo or cm >= hi:
            break
        if _bg_drho(cm, w, s) * dq > 2.0 * mu * (cm / dq):
            lo = cm
        else:
            hi = cm
    clo[0] = lo
    chi[0] = hi


cdef double _bg_log_dc_multi(double s, const double* w, Py_ssize_t m, double dq,
                             double* cstar) noexcept nogil:
    # ln dC_m(s, c*) of [CH24, (3.2)]: max sum_i rho_i(c_i) s.t. 0 <= c_i <= w_i/2,
    # ||c||_2 <= dq. The objective is concave in c (each factor is log-concave, Prekopa) and
    # rho_i is maximal at w_i/2, so: if ||w/2|| <= dq, c* = w/2; otherwise KKT gives
    # rho_i'(c_i) = 2 lam c_i with ||c|| = dq, solved by nested bisection (c_i on
    # [0, min(w_i/2, dq)] for fixed lam; lam = mu/dq^2 with mu in log space, ||c(lam)|| is
    # decreasing in lam). Returned value: the Lagrangian dual bound
    # sum_i [rho_i(c_i) - mu (c_i/dq)^2] + mu at the final mu (an upper bound on the maximum
    # by weak duality, over the box 0 <= c_i <= min(w_i/2, dq) which contains the feasible
    # set; equal to it at the optimum), so round-off in c* cannot make sigma too small.
    # Everything is in units of dq, so the result is invariant under rescaling the problem.
    cdef Py_ssize_t i
    cdef double nrm2 = 0.0, total = 0.0, llo, lhi, lmid, lam, clo, chi, cm, dr, x, wmax = 0.0
    cdef int it
    for i in range(m):
        if w[i] > wmax:
            wmax = w[i]
    for i in range(m):
        x = 0.5 * (w[i] / wmax)
        nrm2 += x * x
    if sqrt(nrm2) * wmax <= dq:
        for i in range(m):
            cstar[i] = 0.5 * w[i]
            total += _bg_rho(0.5 * w[i], w[i], s)
        return total
    llo = -745.0
    lhi = 709.0
    for it in range(80):
        lmid = 0.5 * (llo + lhi)
        lam = exp(lmid)
        nrm2 = 0.0
        for i in range(m):
            _bg_kkt_bracket(w[i], s, dq, lam, &clo, &chi)
            cstar[i] = 0.5 * (clo + chi)
            x = cstar[i] / dq
            nrm2 += x * x
        if nrm2 > 1.0:
            llo = lmid
        else:
            lhi = lmid
        if lhi - llo < 1e-13:
            break
    lam = exp(lhi)
    total = lam
    for i in range(m):
        _bg_kkt_bracket(w[i], s, dq, lam, &clo, &chi)
        # the dual function takes the max over c_i of rho_i(c_i) - mu (c_i/dq)^2; evaluate
        # at both bracket ends and keep the larger (the maximiser lies between them)
        x = clo / dq
        cm = _bg_rho(clo, w[i], s) - lam * x * x
        x = chi / dq
        dr = _bg_rho(chi, w[i], s) - lam * x * x
        cstar[i] = chi if dr >= cm else clo
        total += cm if cm > dr else dr
    return total


cdef struct BGCal:
    double eps, A, dq
    const double* w
    Py_ssize_t m
    double* cbuf


cdef double _bg_log_dc(double s, BGCal* c) noexcept nogil:
    cdef double cs
    if c.m == 1:
        # [CH24, Lemma 2.3, (B.6)]: c* = dq if dq < w/2 else w/2, independent of sigma
        cs = c.dq if c.dq < 0.5 * c.w[0] else 0.5 * c.w[0]
        c.cbuf[0] = cs
        return _bg_rho(cs, c.w[0], s)
    return _bg_log_dc_multi(s, c.w, c.m, c.dq, c.cbuf)


cdef double _bg_g(double v, void* args) noexcept nogil:
    # v = sigma^2. Admissible iff v >= T(v) = A/(eps - ln dC(sqrt v)) [CH24 (2.2)/(3.3)];
    # T is decreasing (App. F: dC decreases in sigma), so g(v) = v - T(v) is increasing.
    cdef BGCal* c = <BGCal*> args
    cdef double den = c.eps - _bg_log_dc(sqrt(v), c)
    if not (den > 0.0):
        return -INFINITY
    return v - c.A / den


cdef double _bg_sigma(double eps, double dq, const double* w, Py_ssize_t m,
                      double* cstar) noexcept nogil:
    # [CH24, Alg. 1 / Alg. 2] with the corrected loop start and the conservative return.
    cdef BGCal c
    cdef double wn = 0.0, v0, gv0, v1, v = 0.0, s, ldc
    cdef Py_ssize_t i
    cdef int n = 0, k
    for i in range(m):                            # ||w||_2 without overflow
        if w[i] > v:
            v = w[i]
    for i in range(m):
        s = w[i] / v
        wn += s * s
    wn = sqrt(wn) * v
    c.eps = eps
    c.dq = dq
    c.A = (wn + 0.5 * dq) * dq
    c.w = w
    c.m = m
    c.cbuf = cstar
    v0 = c.A / eps                                # sigma_0^2 (2.4)/(3.5)
    gv0 = _bg_g(v0, &c)
    if gv0 >= 0.0:                                # cannot happen for dq > 0 (Lemma 2.7)
        v = v0
    else:
        v1 = v0 - gv0                             # T(v0) (Lemma 2.5: finite and positive)
        v = _bisect_feasible(_bg_g, &c, v0, gv0, v1, _bg_g(v1, &c), &n)
    # Round up by a bound on the rounding error of evaluating (2.2)/(3.3) (rho carries a
    # relative error of a few ulps; it is amplified by ln dC/(eps - ln dC)), so that the
    # condition holds in exact arithmetic, not only as evaluated.
    ldc = _bg_log_dc(sqrt(v), &c)
    v *= 1.0 + DBL_EPS * (4.0 + 16.0 * (eps + fabs(ldc)) / (eps - ldc))
    s = sqrt(v)
    if s * s < v:
        s = nextafter(s, INFINITY)
    for k in range(16):                           # sigma^2 (not just v) must satisfy (2.2)
        if _bg_g(s * s, &c) >= 0.0:
            break
        s = nextafter(s, INFINITY)
    if m > 1:
        _bg_log_dc(s, &c)                         # leave c* at the returned sigma in cstar
    return s


# ---------------------------------------------------------------------------------------
# def wrappers: inputs are validated, broadcast and float64 by the time they arrive.
# ---------------------------------------------------------------------------------------

def _init_gauss_legendre():
    x, w = _np.polynomial.legendre.leggauss(GL_N)
    cdef int k
    for k in range(GL_N):
        _GL_X[k] = x[k]
        _GL_W[k] = w[k]
    x, w = _np.polynomial.legendre.leggauss(GL_R)
    for k in range(GL_R):
        _GLR_X[k] = x[k]
        _GLR_W[k] = w[k]

_init_gauss_legendre()


def normal_split(double z, bint vectorised=False):
    """(Phi(z) - 1/2, Phi(-z)) for z >= 0 as the sampler's setup computes them: the scalar
    setup, or with ``vectorised`` the branch-free function of the block setup pass (which
    returns (1/2, 0) beyond z = 37). Exposed for tests."""
    cdef double m0, t
    if vectorised:
        _phi_split_fast(z, &m0, &t)
    else:
        _phi_split(z, &m0, &t)
    return m0, t


def normal_tail(double z):
    """Phi(-z) for z >= 0 as the sampler's per-row setup computes it (exposed for tests)."""
    cdef double m0, t
    _phi_split(z, &m0, &t)
    return t


def tn_one(object gen, double loc, double scale, double lo, double hi):
    """One truncated-normal draw (scalar parameters), as a Python float."""
    cdef TNParams p
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef double x
    _tn_setup(&p, loc, scale, lo, hi)
    with bit_gen.lock:
        x = _tn_draw(bg, &p)
    return x


def tn_fill(object gen, double loc, double scale, double lo, double hi, double[::1] out):
    """Fill ``out`` with truncated-normal draws sharing one parameter set."""
    cdef TNBlock blk
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef Py_ssize_t j, m, n = out.shape[0]
    cdef int tailmode
    if n == 0:
        return
    tailmode = _tn_block_set(&blk, 0, loc, scale, lo, hi)   # row 0 serves all (stride 0)
    with bit_gen.lock, nogil:
        j = 0
        while j < n:
            m = n - j
            if m > TN_BLOCK:
                m = TN_BLOCK
            _tn_block_draw(bg, &blk, m, &out[j], m if tailmode else 0, 0)
            j += m


def tn_fill_rows(object gen, const double[:, :] loc, const double[:, :] scale,
                 const double[:, :] lo, const double[:, :] hi, double[:, ::1] out):
    """Per-element parameters (already broadcast to ``out``'s shape; stride-0 views welcome)."""
    # Rows are processed in blocks: first the parameter setup of a block (_tn_block_setup),
    # then its draws (_tn_block_draw: the stream is consumed exactly as by a row-by-row loop).
    cdef TNBlock blk
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef Py_ssize_t i, j, k, m, n0 = out.shape[0], n1 = out.shape[1]
    with bit_gen.lock, nogil:
        for i in range(n0):
            j = 0
            while j < n1:
                m = n1 - j
                if m > TN_BLOCK:
                    m = TN_BLOCK
                for k in range(m):
                    blk.loc[k] = loc[i, j + k]
                    blk.scale[k] = scale[i, j + k]
                    blk.lo[k] = lo[i, j + k]
                    blk.hi[k] = hi[i, j + k]
                _tn_block_draw(bg, &blk, m, &out[i, j], _tn_block_setup(&blk, m), 1)
                j += m


def tn_eval_rows(int what, const double[:, :] x, const double[:, :] loc,
                 const double[:, :] scale, const double[:, :] lo, const double[:, :] hi,
                 double[:, ::1] out):
    """Evaluate per element: what = 0 logpdf, 1 cdf, 2 ppf (x holds probabilities in (0,1)),
    3 mean, 4 variance."""
    cdef TNParams p
    cdef Py_ssize_t i, j, n0 = out.shape[0], n1 = out.shape[1]
    cdef double m, v, u
    with nogil:
        for i in range(n0):
            for j in range(n1):
                _tn_setup(&p, loc[i, j], scale[i, j], lo[i, j], hi[i, j])
                if what == 0:
                    out[i, j] = _tn_logpdf(&p, x[i, j])
                elif what == 1:
                    out[i, j] = _tn_cdf(&p, x[i, j])
                elif what == 2:
                    u = x[i, j]
                    if u <= 0.0:
                        out[i, j] = p.lo
                    elif u >= 1.0:
                        out[i, j] = p.hi
                    else:
                        out[i, j] = _tn_ppf(&p, u)
                else:
                    _tn_moments(&p, &m, &v)
                    out[i, j] = m if what == 3 else v


def bl_one(object gen, double q, double b, double lo, double hi):
    """One bounded-Laplace draw (scalar parameters), as a Python float."""
    cdef BLParams p
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef double x
    _bl_setup(&p, q, b, lo, hi)
    with bit_gen.lock:
        x = _bl_quantile(&p, _u_open(bg))
    return x


def bl_fill(object gen, double q, double b, double lo, double hi, double[::1] out):
    # one setup, then blocks: the uniforms of a block, then its draws in one vectorised pass
    cdef BLParams p
    cdef double u[TN_BLOCK]
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef Py_ssize_t i, k, m, n = out.shape[0]
    _bl_setup(&p, q, b, lo, hi)
    with bit_gen.lock, nogil:
        i = 0
        while i < n:
            m = n - i
            if m > TN_BLOCK:
                m = TN_BLOCK
            for k in range(m):
                u[k] = _u_open(bg)
            _bl_draw_pass1(u, &out[i], m, q, b, lo, hi, p.mL, p.C)
            i += m


def bl_fill_rows(object gen, const double[:, :] q, const double[:, :] b,
                 const double[:, :] lo, const double[:, :] hi, double[:, ::1] out):
    # blocks of TN_BLOCK rows: the vectorised setup pass (_simd.h), the block's uniforms in
    # stream order, then the vectorised draw pass; the same bits as bl_one row by row. With
    # one scale and one pair of bounds (stride-0 views, the common per-row-values case) only
    # the true values are gathered.
    cdef BLBlock blk
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef Py_ssize_t i, j, k, m, n0 = out.shape[0], n1 = out.shape[1]
    cdef bint same = (b.strides[0] == 0 and b.strides[1] == 0 and lo.strides[0] == 0
                      and lo.strides[1] == 0 and hi.strides[0] == 0 and hi.strides[1] == 0)
    cdef bint qrow = q.strides[1] == sizeof(double)
    cdef double b0 = 0.0, lo0 = 0.0, hi0 = 0.0
    if same and n0 > 0 and n1 > 0:
        b0 = b[0, 0]
        lo0 = lo[0, 0]
        hi0 = hi[0, 0]
    with bit_gen.lock, nogil:
        for i in range(n0):
            j = 0
            while j < n1:
                m = n1 - j
                if m > TN_BLOCK:
                    m = TN_BLOCK
                if same:
                    if qrow:
                        _bl_setup_pass_q(&q[i, j], b0, lo0, hi0, m, blk.mL, blk.C)
                        for k in range(m):
                            blk.u[k] = _u_open(bg)
                        _bl_draw_pass_q(blk.u, &out[i, j], m, &q[i, j], b0, lo0, hi0,
                                        blk.mL, blk.C)
                    else:
                        for k in range(m):
                            blk.q[k] = q[i, j + k]
                        _bl_setup_pass_q(blk.q, b0, lo0, hi0, m, blk.mL, blk.C)
                        for k in range(m):
                            blk.u[k] = _u_open(bg)
                        _bl_draw_pass_q(blk.u, &out[i, j], m, blk.q, b0, lo0, hi0,
                                        blk.mL, blk.C)
                else:
                    for k in range(m):
                        blk.q[k] = q[i, j + k]
                        blk.b[k] = b[i, j + k]
                        blk.lo[k] = lo[i, j + k]
                        blk.hi[k] = hi[i, j + k]
                    _bl_setup_pass(blk.q, blk.b, blk.lo, blk.hi, m, blk.mL, blk.C)
                    for k in range(m):
                        blk.u[k] = _u_open(bg)
                    _bl_draw_pass(blk.u, &out[i, j], m, blk.q, blk.b, blk.lo, blk.hi,
                                  blk.mL, blk.C)
                j += m


def bl_eval_rows(int what, const double[:, :] x, const double[:, :] q,
                 const double[:, :] b, const double[:, :] lo, const double[:, :] hi,
                 double[:, ::1] out):
    """Evaluate per element: what = 0 logpdf, 1 cdf, 2 ppf."""
    cdef BLParams p
    cdef Py_ssize_t i, j, n0 = out.shape[0], n1 = out.shape[1]
    cdef double u
    with nogil:
        for i in range(n0):
            for j in range(n1):
                _bl_setup(&p, q[i, j], b[i, j], lo[i, j], hi[i, j])
                if what == 0:
                    out[i, j] = _bl_logpdf(&p, x[i, j])
                elif what == 1:
                    out[i, j] = _bl_cdf(&p, x[i, j])
                else:
                    u = x[i, j]
                    if u <= 0.0:
                        out[i, j] = p.lo
                    elif u >= 1.0:
                        out[i, j] = p.hi
                    else:
                        out[i, j] = _bl_quantile(&p, u)


def bl_scale(double eps, double delta, double dq, double lo, double hi):
    """b* of [HABM20] for validated scalar inputs."""
    return _bl_scale(eps, delta, dq, lo, hi)


def bl_scale_array(const double[:] eps, const double[:] delta, const double[:] dq,
                   const double[:] lo, const double[:] hi, double[::1] out):
    cdef Py_ssize_t i, n = out.shape[0]
    with nogil:
        for i in range(n):
            out[i] = _bl_scale(eps[i], delta[i], dq[i], lo[i], hi[i])


def expm1_nonpos_fast(double x):
    """expm1(x) for x <= 0, the branch-free version of _simd.h (exposed for tests)."""
    return _expm1_nonpos(x)


def log1m2t_fast(double t):
    """log(1 - 2t) for 0 <= t <= 1/2, the branch-free version of _simd.h (for tests)."""
    return _log1m2t(t)


def bl_log_dc(double b, double dq, double w):
    """ln dC(b) of [HABM20, Def. 3.4] (cancellation-free; w may be inf)."""
    return _bl_log_dc(b, dq, w)


def bg_rho(double c, double w, double s):
    """rho(c; w, sigma): the per-coordinate log normaliser ratio of [CH24]."""
    return _bg_rho(c, w, s)


def bg_log_dc(double sigma, double dq, const double[::1] w):
    """(ln dC(sigma), c*) for box widths ``w`` (m = len(w); m = 1 is Lemma 2.3)."""
    cdef Py_ssize_t m = w.shape[0]
    cstar = _np.empty(m)
    cdef double[::1] cv = cstar
    cdef BGCal c
    c.eps = 1.0
    c.dq = dq
    c.A = 0.0
    c.w = &w[0]
    c.m = m
    c.cbuf = &cv[0]
    cdef double val = _bg_log_dc(sigma, &c)
    return val, cstar


def bg_sigma(double eps, double dq, const double[::1] w):
    """sigma* of [CH24] (Alg. 1 for len(w) == 1, Alg. 2 otherwise) for validated inputs."""
    cdef Py_ssize_t m = w.shape[0]
    cdef double* cs = <double*> malloc(m * sizeof(double))
    cdef double s
    if cs == NULL:
        raise MemoryError()
    with nogil:
        s = _bg_sigma(eps, dq, &w[0], m, cs)
    free(cs)
    return s


def bg_sigma_scalar(double eps, double dq, double w):
    """Univariate sigma* of [CH24] (Alg. 1) for validated scalar inputs."""
    cdef double cs
    return _bg_sigma(eps, dq, &w, 1, &cs)


def ndtri_central(double q):
    """Phi^-1(1/2 + q) for |q| <= 0.425 (exposed for tests)."""
    return _ppnd_central(q)


def log_fast(double x):
    """The branch-free logarithm of the sampler's tail branch (exposed for tests)."""
    return _log_fast(x)


def exp_nonpos_fast(double x):
    """The branch-free exponential of the sampler's setup, for -708 <= x <= 0 (exposed for
    tests)."""
    return _exp_nonpos_fast(x)


def ndtri_lower_log(double logt):
    """Phi^-1(exp(logt)) for logt <= log(1/2) (exposed for tests)."""
    return _ndtri_lower_log(logt)


# =======================================================================================
# Kernels of the other mechanism families: one include file per family, textually part of
# this module (so they use every cdef helper above and stay in the one extension).
# =======================================================================================
include "_core_gaussian_family.pxi"
include "_core_gradients.pxi"
include "_core_verify.pxi"
include "_core_exact.pxi"
include "_core_range.pxi"
include "_core_window.pxi"
