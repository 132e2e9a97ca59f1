# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Evaluation of the continuous laws: log-densities, CDFs, quantiles
for evaluation and moments of the truncated normal, the bounded Laplace, the constrained
Laplace and the rectified Gaussian, with their per-element def wrappers.
"""

import numpy as _np

from bndp._core.common cimport *
from bndp._core.special cimport *
from bndp._core.sample cimport *
from bndp._core.certify cimport *

cdef inline double _tn_logpdf(const TNParams* p, double x) noexcept nogil:
    cdef double z
    if x < p.lo or x > p.hi:
        return -INFINITY
    z = (x - p.loc) / p.scale
    return -0.5 * z * z - LOG_SQRT_2PI - log(p.scale) - p.logZ


# Gauss-Legendre nodes/weights on [-1, 1], filled once at import (numpy.polynomial.legendre).

cdef double _GL_X[GL_N]
cdef double _GL_W[GL_N]
cdef double _GLR_X[GL_R]
cdef double _GLR_W[GL_R]


# Mass next to an end, free of the cancellation of Phi(z) - Phi(a) when x is near the end
# (z and a each carry a rounding of ulp(|a|), so the difference loses |a| ulp(a) / (z - a)
# relative; 1.4e-5 at a cdf of 1e-12 on [-40, -39]). With d = (x - lo)/scale (x - lo exact
# by Sterbenz when x is near lo) and a = (lo - loc)/scale,
#   Phi(a + d) - Phi(a) = phi(a) int_0^d exp(g(t)) dt,   g(t) = -a t - t^2/2,
#   log(Phi(a + d) - Phi(a)) = -a^2/2 - log sqrt(2 pi) + R(a, d),
#   R(a, d) = gs + log int exp(g(t) - gs) dt,
# gs = g(t*) the maximum of g on [0, d] (t* = clip(-a, 0, d)), and
# g(t) - gs = -(t - t*) (a + (t + t*)/2) free of cancellation. The integral runs over the
# window of [0, d] where g(t) >= gs - 40 (the mass beyond is below e^-40 relative), by
# composite 24-point Gauss-Legendre over pieces across which g changes by at most 4 (exact
# to rounding). The cdf is exp(R(a, d) - R(a, W)), W = (hi - lo)/scale: the common -a^2/2
# cancels exactly, so no log of size a^2/2 (and its ulp, 1.1e-13 at |a| = 40) enters.
# Taken while |a| d + d^2/2 <= TN_INC_E (the plain difference of Phi carries |z|^2 ulps,
# 1.7e-13 at |z| = 40), except within a scale of loc and max(|a|, 1)/4 from the end (the
# difference of Phi is exact to a few ulps there). The upper end is the mirror image
# (Phi(b) - Phi(b - e) = Phi(-b + e) - Phi(-b), e = (hi - x)/scale). Accuracy against
# mpmath: tests/test_tail_accuracy.py.
cdef double TN_INC_E = 200.0


cdef inline double _tn_win(double alpha) noexcept nogil:
    # the distance delta from t* at which delta (alpha + delta/2) = 40 (alpha >= 0)
    return 80.0 / (alpha + sqrt(alpha * alpha + 80.0))


cdef double _tn_inc_r(double a, double d) noexcept nogil:
    # R(a, d) above, for 0 < d <= inf and |a| < 1e150
    cdef double ts = fmin(fmax(-a, 0.0), d)
    cdef double u0 = 0.0, u1 = d, gs, g0, g1, h, c, t, sm = 0.0
    cdef int n, j, k
    if ts < d:
        u1 = fmin(d, ts + _tn_win(a + ts))
    if ts > 0.0:
        u0 = fmax(0.0, ts - _tn_win(-(a + ts)))
    g0 = (u0 - ts) * (a + 0.5 * (u0 + ts))           # gs - g(u0) >= 0
    g1 = (u1 - ts) * (a + 0.5 * (u1 + ts))           # gs - g(u1) >= 0
    n = <int>((fabs(g0) + fabs(g1)) * 0.25) + 1
    h = (u1 - u0) / n
    for j in range(n):
        c = u0 + (j + 0.5) * h
        for k in range(GL_N):
            t = c + 0.5 * h * _GL_X[k]
            sm += _GL_W[k] * exp(-(t - ts) * (a + 0.5 * (t + ts)))
    # int exp(g - gs) = (h/2) sm, kept apart so that a subnormal h does not round away
    gs = -ts * (a + 0.5 * ts)                         # g(t*) - g(0)
    return gs + log(h) + log(0.5 * sm)


cdef double _tn_log_ends(double loc, double scale, double lo, double hi, double x,
                         int upper) noexcept nogil:
    # log of the mass between the end (lo, or hi when upper) and x over the whole mass,
    # lo < x < hi, as exp(R(a, d) - R(a, W)) above; NaN where that does not apply (the
    # caller then takes the difference of Phi)
    cdef double a, d
    if upper:
        a = -((hi - loc) / scale)
        d = (hi - x) / scale
    else:
        a = (lo - loc) / scale
        d = (x - lo) / scale
    if not (fabs(a) < 1e150 and d > 0.0 and fabs(a) * d + 0.5 * d * d <= TN_INC_E):
        return NAN
    if fabs(x - loc) < scale and d >= 0.25 * fmax(fabs(a), 1.0):
        return NAN          # near loc and not near the end: the plain difference cancels
                            # at most a factor 7 there
    return fmin(_tn_inc_r(a, d) - _tn_inc_r(a, (hi - lo) / scale), 0.0)


cdef double _tn_cdf(const TNParams* p, double x) noexcept nogil:
    cdef double z, lz
    if x <= p.lo:
        return 0.0
    if x >= p.hi:
        return 1.0
    lz = _tn_log_ends(p.loc, p.scale, p.lo, p.hi, x, 0)
    if lz == lz:
        return exp(lz)
    lz = _tn_log_ends(p.loc, p.scale, p.lo, p.hi, x, 1)
    if lz <= -0.6931471805599453:                   # 1 - sf without cancellation (sf <= 1/2)
        return -expm1(lz)
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
cdef void _tn_tail_moments(double loc, double scale, double e, double f, double* mean,
                           double* var) noexcept nogil:
    cdef double sgn = 1.0 if f > e else -1.0     # direction from the near end into the support
    cdef double d = fabs(loc - e), beta, W, L, h, c, t, s0 = 0.0, s1 = 0.0, s2 = 0.0
    cdef double m, rng, s, y, q, et, vt
    cdef double tt[9 * GL_N]
    cdef double ww[9 * GL_N]
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
    # the nodes and weights of npc Gauss-Legendre panels on [0, L], the mean in a first pass,
    # the central second moment in a second (no cancellation)
    for j in range(npc):
        c = (j + 0.5) * h
        for k in range(GL_N):
            t = c + 0.5 * h * _GL_X[k]
            tt[j * GL_N + k] = t
            ww[j * GL_N + k] = _GL_W[k] * exp(-t * (beta + 0.5 * t))
            s0 += ww[j * GL_N + k]
            s1 += ww[j * GL_N + k] * t
    m = s1 / s0
    for k in range(npc * GL_N):
        s2 += ww[k] * (tt[k] - m) * (tt[k] - m)
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
        zref = _nearest_zero(a, b)
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


cdef gl_nodes_t gauss_legendre() noexcept:
    # the nodes and weights above, for the modules that integrate with them
    cdef gl_nodes_t g
    g.x = _GL_X
    g.w = _GL_W
    g.xr = _GLR_X
    g.wr = _GLR_W
    return g

# ppf's offset from the lower end is solved directly where the result is below
# TN_END_CANCEL times |loc| (loc + scale z then cancels: its absolute error, about ulp(loc),
# is up to all of the result, e.g. ppf(1e-30) of N(50, 11.4^2) on [0, 120] gave 7e-15 for
# 4.5e-25) and at most one noise scale above that end
cdef double TN_END_CANCEL = 0.25


cdef double _tn_ppf_eval(const TNParams* p, double u) noexcept nogil:
    # The quantile for evaluation at u in (0, 1): _tn_ppf (the sampler's), except near the
    # lower end where loc + scale z cancels (above): there x = lo + scale d with d solving
    # F(d) = int_0^d exp(c s - s^2/2) ds = r, c = (loc - lo)/scale, r = u Z / phi(-c)
    # (Phi(a + d) - Phi(a) = phi(a) F(d) = u Z), by Newton's method from the root of the
    # exponential part, log1p(c r)/c, with F by 24-point Gauss-Legendre quadrature (exact to
    # rounding for d <= 1 and |c| d up to a few tens). Its error is then that of r's
    # factor Z / phi(-c), about (1 + c^2/2) ulps, as the problem's own conditioning in loc.
    cdef double x = _tn_ppf(p, u)
    cdef double c, lf, r, d, F, h, t, step
    cdef int k, it
    if p.far or not (u < 0.5) or not (fabs(x) < TN_END_CANCEL * fabs(p.loc)):
        return x
    c = (p.loc - p.lo) / p.scale
    lf = p.logZ + 0.5 * c * c + LOG_SQRT_2PI          # log(Z / phi(-c))
    r = u * exp(lf) if lf < 700.0 else exp(log(u) + lf)
    if fabs(c * r) < 1e-17:          # log1p(c r)/c = r to rounding (c r may be subnormal)
        d = r
    elif c * r > -1.0:
        d = log1p(c * r) / c
    else:
        return x
    if not (d <= 1.0):
        return x
    if r > 1e-290:                   # below, F(d) = d to rounding (and d subnormal)
        for it in range(40):
            h = 0.5 * d
            F = 0.0
            for k in range(GL_N):
                t = h + h * _GL_X[k]
                F += _GL_W[k] * exp(c * t - 0.5 * t * t)
            F *= h
            step = (F - r) / exp(c * d - 0.5 * d * d)
            d -= step
            if not (fabs(step) > 1e-17 * d):
                break
        if not (d >= 0.0):
            return x
    return _clip(p.lo + p.scale * d, p.lo, p.hi)


ctypedef double (*eval4_t)(int what, double x, double a, double b, double lo,
                           double hi) noexcept nogil


cdef double _tn_eval(int what, double x, double loc, double scale, double lo,
                     double hi) noexcept nogil:
    cdef TNParams p
    cdef double m, v
    _tn_setup(&p, loc, scale, lo, hi)
    if what == 0:
        return _tn_logpdf(&p, x)
    if what == 1:
        return _tn_cdf(&p, x)
    if what == 2 or what == 5:
        if x <= 0.0 or x >= 1.0:
            return p.lo if x <= 0.0 else p.hi
        return _tn_ppf_eval(&p, x) if what == 2 else _tn_ppf(&p, x)
    _tn_moments(&p, &m, &v)
    return m if what == 3 else v


cdef double _bl_eval(int what, double x, double q, double b, double lo,
                     double hi) noexcept nogil:
    cdef BLParams p
    _bl_setup(&p, q, b, lo, hi)
    if what == 0:
        return _bl_logpdf(&p, x)
    if what == 1:
        return _bl_cdf(&p, x)
    if x <= 0.0 or x >= 1.0:
        return p.lo if x <= 0.0 else p.hi
    return _bl_quantile(&p, x)


cdef void _eval_rows(eval4_t f, int what, const double[:, :] x, const double[:, :] a,
                     const double[:, :] b, const double[:, :] lo, const double[:, :] hi,
                     double[:, ::1] out) noexcept nogil:
    cdef Py_ssize_t i, j
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = f(what, x[i, j], a[i, j], b[i, j], lo[i, j], hi[i, j])


def tn_eval_rows(int what, const double[:, :] x, const double[:, :] loc,
                 const double[:, :] scale, const double[:, :] lo, const double[:, :] hi,
                 double[:, ::1] out):
    """Evaluate the truncated normal per element: what = 0 logpdf, 1 cdf, 2 ppf (x holds
    probabilities in (0,1)), 3 mean, 4 variance, 5 the sampler's quantile (ppf but for the
    lower end's offset solved directly where loc + scale z cancels: a draw from uniform u is
    what 5 gives at u, bit for bit)."""
    with nogil:
        _eval_rows(_tn_eval, what, x, loc, scale, lo, hi, out)


def bl_eval_rows(int what, const double[:, :] x, const double[:, :] q, const double[:, :] b,
                 const double[:, :] lo, const double[:, :] hi, double[:, ::1] out):
    """Evaluate the bounded Laplace per element: what = 0 logpdf, 1 cdf, 2 ppf."""
    with nogil:
        _eval_rows(_bl_eval, what, x, q, b, lo, hi, out)

cdef double _cl_cdf(const CLPieces* P, double x) noexcept nogil:
    cdef double acc = 0.0
    cdef Py_ssize_t k
    if x < P.mu:
        for k in range(P.nl):
            if x >= P.hil[k]:
                acc = P.cl[k]
            elif x >= P.lol[k]:
                acc = (P.cl[k - 1] if k > 0 else 0.0) + 0.5 * (exp(-(P.mu - x) / P.s) - P.al[k])
                break
            else:
                break
        return acc / P.N
    for k in range(P.nr):
        if x <= P.lor[k]:
            acc = P.cr[k]
        elif x <= P.hir[k]:
            acc = (P.cr[k - 1] if k > 0 else 0.0) + 0.5 * (exp(-(x - P.mu) / P.s) - P.ar[k])
            break
        else:
            break
    return 1.0 - acc / P.N


cdef inline double _cl_logpdf(const CLPieces* P, const double* L, const double* R,
                              Py_ssize_t m, double x) noexcept nogil:
    cdef Py_ssize_t k = _cl_locate(L, m, x)
    if k < 0 or x > R[k]:
        return -INFINITY
    return -fabs(x - P.mu) / P.s - log(2.0 * P.s) - log(P.N)


cdef void _cl_moments(const CLPieces* P, double* mean, double* var) noexcept nogil:
    # E[Y - mu] and E[(Y - mu)^2] piece by piece: for distances d in [d1, d2] from mu,
    # int d^k e^{-d/s}/(2s) = (1/2) [P_k(d1) e^{-d1/s} - P_k(d2) e^{-d2/s}],
    # P_0 = 1, P_1 = d + s, P_2 = d^2 + 2 s d + 2 s^2.
    cdef double s = P.s, m1 = 0.0, m2 = 0.0, d1, d2, e1, e2
    cdef Py_ssize_t k
    for k in range(P.nl + P.nr):
        if k < P.nl:
            d1 = P.mu - P.hil[k]
            d2 = P.mu - P.lol[k]
        else:
            d1 = P.lor[k - P.nl] - P.mu
            d2 = P.hir[k - P.nl] - P.mu
        e1 = exp(-d1 / s)
        e2 = exp(-d2 / s) if d2 != INFINITY else 0.0
        if d2 == INFINITY:
            d2 = 0.0
        if k < P.nl:
            m1 -= 0.5 * ((d1 + s) * e1 - (d2 + s) * e2)
        else:
            m1 += 0.5 * ((d1 + s) * e1 - (d2 + s) * e2)
        m2 += 0.5 * ((d1 * d1 + 2.0 * s * d1 + 2.0 * s * s) * e1
                     - (d2 * d2 + 2.0 * s * d2 + 2.0 * s * s) * e2)
    m1 /= P.N
    m2 /= P.N
    mean[0] = m1
    var[0] = m2 - m1 * m1

def cl_eval_rows(int what, const double[:, :] x, const double[:, :] mu,
                 const double[:, :] sigma, const double[::1] L, const double[::1] R,
                 double[:, ::1] out):
    """what = 0 logpdf, 1 cdf, 2 ppf (x in [0, 1]), 3 mean offset, 4 variance."""
    cdef _CLBuf b = _CLBuf(L, R)
    cdef Py_ssize_t i, j, n0 = out.shape[0], n1 = out.shape[1], m = L.shape[0]
    cdef double u, m1, v, last = NAN
    with nogil:
        for i in range(n0):
            for j in range(n1):
                if not (sigma[i, j] == last):
                    last = sigma[i, j]
                    _cl_consts(&b.P, &L[0], &R[0], m, last)
                _cl_pieces(&b.P, &L[0], &R[0], mu[i, j])
                if what == 0:
                    out[i, j] = _cl_logpdf(&b.P, &L[0], &R[0], m, x[i, j])
                elif what == 1:
                    out[i, j] = _cl_cdf(&b.P, x[i, j])
                elif what == 2:
                    u = x[i, j]
                    if u <= 0.0:
                        out[i, j] = L[0]
                    elif u >= 1.0:
                        out[i, j] = R[m - 1]
                    else:
                        out[i, j] = _cl_quantile(&b.P, u)
                else:
                    _cl_moments(&b.P, &m1, &v)
                    out[i, j] = m1 if what == 3 else v

# ---------------------------------------------------------------------------------------
# Moments of the rectified law: X = theta + sigma Y, Y = clip(Z, za, zb). Taken around the
# point rho of [za, zb] nearest to 0 (W = Y - rho), so that E W and E W^2 are small when
# theta lies far outside S and Var = E W^2 - (E W)^2 does not cancel; the interior part uses
# the truncated-normal moments (exact far into the tails).
# ---------------------------------------------------------------------------------------

cdef void _gr_rect_moments(double t, double l, double u, double* mean,
                           double* var) noexcept nogil:
    cdef double za = l - t, zb = u - t, rho, pa, pb, pz, mt, vt, ew, ew2
    cdef TNParams p
    rho = 0.0
    if rho < za:
        rho = za
    if rho > zb:
        rho = zb
    pa = exp(_gr_lndtr(za))
    pb = exp(_gr_lndtr(-zb))
    _tn_setup(&p, 0.0, 1.0, za, zb)
    _tn_moments(&p, &mt, &vt)
    pz = exp(p.logZ)
    ew = (za - rho) * pa + (zb - rho) * pb + pz * (mt - rho)
    ew2 = (za - rho) * (za - rho) * pa + (zb - rho) * (zb - rho) * pb \
        + pz * (vt + (mt - rho) * (mt - rho))
    mean[0] = rho + ew
    var[0] = ew2 - ew * ew
    if var[0] < 0.0:
        var[0] = 0.0

def gr_rect_moments_rows(int what, const double[:, :] theta, double sigma,
                         const double[:, :] lo, const double[:, :] hi, double[:, ::1] out):
    """what 0: mean, 1: variance of the rectified law."""
    cdef Py_ssize_t i, j, n0 = out.shape[0], n1 = out.shape[1]
    cdef double inv = 1.0 / sigma, m, v
    with nogil:
        for i in range(n0):
            for j in range(n1):
                _gr_rect_moments(theta[i, j] * inv, lo[i, j] * inv, hi[i, j] * inv, &m, &v)
                out[i, j] = theta[i, j] + sigma * m if what == 0 else sigma * sigma * v

def tn_tail_eval_rows(int what, const double[:, :] x, const double[:, :] loc,
                      const double[:, :] scale, const double[:, :] lo, const double[:, :] hi,
                      double[:, ::1] out):
    """Truncated normal, per element: what = 0 logcdf, 1 logsf, 2 sf, 3 isf (x holds upper
    tail probabilities). log F = log(Phi(z) - Phi(a)) - log Z and log S = log(Phi(b) -
    Phi(z)) - log Z with every log(Phi(U) - Phi(L)) from _gr_log_ndtr_diff (no underflow,
    no 1 - cdf), or from _tn_log_ends near the end (no cancellation); isf(q) = -ppf(q) of
    the law reflected about 0."""
    cdef TNParams p
    cdef Py_ssize_t i, j, n0 = out.shape[0], n1 = out.shape[1]
    cdef double a, b, z, lz, lZ, v, inv
    with nogil:
        for i in range(n0):
            for j in range(n1):
                v = x[i, j]
                if what == 3:
                    if v <= 0.0:
                        out[i, j] = hi[i, j]
                    elif v >= 1.0:
                        out[i, j] = lo[i, j]
                    else:
                        _tn_setup(&p, -loc[i, j], scale[i, j], -hi[i, j], -lo[i, j])
                        out[i, j] = -_tn_ppf_eval(&p, v)
                    continue
                if isnan(v):
                    out[i, j] = NAN
                    continue
                if v <= lo[i, j]:
                    lz = -INFINITY if what == 0 else 0.0
                elif v >= hi[i, j]:
                    lz = 0.0 if what == 0 else -INFINITY
                else:
                    inv = 1.0 / scale[i, j]
                    a = (lo[i, j] - loc[i, j]) * inv
                    b = (hi[i, j] - loc[i, j]) * inv
                    # the near end's mass, or one minus the other end's when that is <= 1/2
                    lz = _tn_log_ends(loc[i, j], scale[i, j], lo[i, j], hi[i, j], v,
                                      what != 0)
                    if not (lz == lz):
                        lz = _tn_log_ends(loc[i, j], scale[i, j], lo[i, j], hi[i, j], v,
                                          what == 0)
                        lz = _gr_log1mexp(lz) if lz <= -0.6931471805599453 else NAN
                    if not (lz == lz):
                        lZ = _gr_log_ndtr_diff(b, a)
                        z = (v - loc[i, j]) * inv
                        if what == 0:
                            lz = _gr_log_ndtr_diff(z, a) - lZ
                        else:
                            lz = _gr_log_ndtr_diff(b, z) - lZ
                    if lz > 0.0:
                        lz = 0.0
                out[i, j] = exp(lz) if what == 2 else lz
