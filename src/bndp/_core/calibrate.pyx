# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Calibrations: the core's one bracketing root finder and the scales
it solves for: the continuous calibrations (bounded Laplace [HABM20], bounded Gaussian
[CH24], the constrained Laplace [CSS22]) and the windowed grid law's scale search
(gw_calibrate: the smallest scale whose table's certificate meets the target, bracketed by
power-law steps, then shrunk by the same root finder).
"""

import numpy as _np

from bndp._core.common cimport *
from bndp._core.special cimport *
from bndp._core.sample cimport *
from bndp._core.certify cimport *
from bndp._core.certify_grid cimport *
from bndp._core.laws cimport *

# the Gauss-Legendre nodes and weights of bndp._core.laws
cdef gl_nodes_t GL = gauss_legendre()

# ---------------------------------------------------------------------------------------
# One bracketing root finder for every calibration.
#
# g is increasing in x (each calibration states why) and g(x) >= 0 means "x satisfies the
# paper's inequality". Given lo with g(lo) < 0 and hi with g(hi) >= 0, the bracket is shrunk
# by Illinois (modified regula falsi) steps; every trial point is kept at least `tol` inside
# the bracket, so once the estimate has converged onto one end the next trial lands just
# across the root and closes the bracket from the other side (the trick of Brent's zeroin).
# A step that fails to halve the bracket twice in a row is replaced by bisection. Stops when
# hi - lo <= 2*tol, tol = max(xtol, about two ulps of hi), at a trial x with
# 0 <= g(x) <= gtol, or after 200 evaluations. Returns hi (or that x): it satisfies
# g >= 0 as evaluated, never a midpoint that may sit on the unsafe side. The continuous
# calibrations pass xtol = gtol = 0 (floating-point resolution, an exact zero); the windowed
# tables' scale search (gw_calibrate) passes its relative tolerance in x = ln t. Typical
# cost: 6-12 evaluations (pure bisection: ~55).
# ---------------------------------------------------------------------------------------


cdef double _bisect_feasible(monotone_fn g, void* args, double lo, double glo,
                             double hi, double ghi, double xtol, double gtol,
                             int* n_eval) noexcept nogil:
    cdef double x, gx, width, tol
    cdef int side = 0, it, slow = 0
    for it in range(200):
        width = hi - lo
        tol = fmax(2.0 * DBL_EPS * fabs(hi), xtol)
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
        if gx >= 0.0 and gx <= gtol:
            return x                # the inequality holds, within gtol of equality
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
        b = _bisect_feasible(_bl_g, &c, b0, gb0, fb0, gfb0, 0.0, 0.0, &n)
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
        x = half * (1.0 + GL.xr[k])
        d += GL.wr[k] * exp(-0.5 * x * x) * (-expm1(-(x * t + tt)))
    d *= half / SQRT_2PI
    return log1p(d / g0)


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


cdef double _bg_ball_norm2(const ball_t* b, double mu) noexcept nogil:
    # ||c(mu)/dq||^2, c_i(mu) the middle of the bracket of rho_i'(c) = 2 mu c / dq^2
    cdef Py_ssize_t i
    cdef double nrm2 = 0.0, clo, chi, x
    for i in range(b.m):
        _bg_kkt_bracket(b.w[i], b.s, b.dq, mu, &clo, &chi)
        b.cstar[i] = 0.5 * (clo + chi)
        x = b.cstar[i] / b.dq
        nrm2 += x * x
    return nrm2


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
    cdef double nrm2 = 0.0, total = 0.0, llo, lhi, lam, clo, chi, cm, dr, x, wmax = 0.0
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
    cdef ball_t ball = ball_t(w=w, m=m, s=s, dq=dq, cstar=cstar)
    llo = -745.0
    lhi = 709.0
    _log_lambda_bisect(_bg_ball_norm2, &ball, 1.0, 1e-13, &llo, &lhi)
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
        v = _bisect_feasible(_bg_g, &c, v0, gv0, v1, _bg_g(v1, &c), 0.0, 0.0, &n)
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

def bl_scale(double eps, double delta, double dq, double lo, double hi):
    """b* of [HABM20] for validated scalar inputs."""
    return _bl_scale(eps, delta, dq, lo, hi)


def bl_scale_array(const double[:] eps, const double[:] delta, const double[:] dq,
                   const double[:] lo, const double[:] hi, double[::1] out):
    cdef Py_ssize_t i, n = out.shape[0]
    with nogil:
        for i in range(n):
            out[i] = _bl_scale(eps[i], delta[i], dq[i], lo[i], hi[i])

def bl_log_dc(double b, double dq, double w):
    """ln dC(b) of [HABM20, Def. 3.4] (cancellation-free; w may be inf)."""
    return _bl_log_dc(b, dq, w)


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

# ---------------------------------------------------------------------------------------
# Theorem 1 of [CSS22] (one infinitely spanning constraint): sigma(ell) = (dF/eps) g(u),
# u = eps*ell/dF, g(u) = u / (-W_Z(-2 t e^-t) - t), t = a u e^{1-u}, Z = 0 for u <= 1,
# Z = -1 for u > 1 (the compact form of (33), (37) and (3)/(4), misprints fixed). Near u = 1
# the W argument is at the branch point; q = e*z + 1 is formed without cancellation as
# q = -expm1(r - a expm1(r)), r = ln u + 1 - u (identity 2a e^{1-a} = 1).
# ---------------------------------------------------------------------------------------

cdef double _dd_g(double u) noexcept nogil:
    cdef double t, v, r, q, W, lmx
    if u <= 1e-17:
        return 1.0 / (_LW_A * _E_HI)                  # (33): g(0) = 1/(a e)
    v = u - 1.0
    if fabs(v) < 0.01:
        # r = log1p(v) - v by its series (the difference cancels)
        r = v * v * (-0.5 + v * (1.0 / 3.0 + v * (-0.25 + v * (0.2 + v * (-1.0 / 6.0
                 + v * (1.0 / 7.0 + v * (-0.125 + v * (1.0 / 9.0))))))))
    else:
        r = log(u) - v
    q = -expm1(r - _LW_A * expm1(r))
    t = _LW_A * u * exp(-v)                             # may underflow for u > ~745: fine
    if q < 0.5:
        W = _lw_branch(q, 0 if u <= 1.0 else -1)
    elif u <= 1.0:
        W = _lw0_direct(-2.0 * t * exp(-t))
    else:
        # ln(-z) = ln 2 + ln t - t = ln(2a) + ln u - v - t
        lmx = log(2.0 * _LW_A) + log(u) - v - t
        W = _lwm1_log(lmx)
    return u / (-W - t)

def dd_g_fill(const double[::1] u, double[::1] out):
    """g(u) of Theorem 1: sigma(ell) = (dF/eps) g(eps ell / dF), u >= 0."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(u.shape[0]):
            out[i] = _dd_g(u[i])


cdef double _cl_loss(CLCal* c, double s) noexcept nogil:
    # Certified worst-case loss at scale s (dp: over |mu - mu'| <= dF; metric: dF times the
    # Lipschitz constant). The candidate maximum is exact; every candidate is a sum of
    # positive terms (relative error O(1e-13) even after the recursions) plus an argument
    # (mu - mu')/s rounded at ulp(|mu|)/s: the margin below covers both.
    cdef double a, b, margin
    c.w1.s = s
    c.w2.s = s
    _cl_recur(c.w1)
    _cl_recur(c.w2)
    if c.metric:
        a = _cl_metric_dir(c.w1)
        b = _cl_metric_dir(c.w2)
        if b > a:
            a = b
        return c.dF * a * (1.0 + 16.0 * DBL_EPS)
    a = _cl_loss_dir(c.w1, c.dF)
    b = _cl_loss_dir(c.w2, c.dF)
    if b > a:
        a = b
    # (the vertices are evaluated in local coordinates: see _cl_loss_dir; the pairs of two
    # span ends, (mu - mu')/s from two doubles of A, carry one rounding, relative)
    margin = DBL_EPS * (512.0 + 16.0 * fabs(a) + 16.0 * c.dF / s)
    return a + margin


cdef double _cl_g(double s, void* args) noexcept nogil:
    # feasible iff loss(s) <= eps. The loss decreases with s (Lemma 8 of [CSS22] for the
    # metric form; observed for the dp form): g is increasing. The returned end is
    # certified either way.
    cdef CLCal* c = <CLCal*> args
    return c.eps - _cl_loss(c, s)


cdef double _cl_certify(CLCal* c, double s) noexcept nogil:
    # smallest of s (1 + 2^k eps), k = 0, 1, ..., that is feasible as evaluated
    cdef int k
    cdef double f = DBL_EPS
    if _cl_g(s, c) >= 0.0:
        return s
    for k in range(80):
        if _cl_g(s * (1.0 + f), c) >= 0.0:
            return s * (1.0 + f)
        f *= 2.0
    return INFINITY


cdef double _cl_scale(CLCal* c) noexcept nogil:
    # the search's scale, or 2 dF / eps where the search finds none within twice that: any
    # constant scale s is private at 2 dF / s for either guarantee (the densities' ratio is
    # at most e^{dF/s}, and so is the normalisers', each integrand's ratio being at most
    # that), so 2 dF / eps needs no evaluation. The search's evaluations carry a rounding
    # margin of about 1e-13 (see _cl_loss): at a tiny epsilon no scale passes them, and
    # the bound is what is certified (rounded up; inf where it overflows).
    cdef double bound = 2.0 * c.dF / c.eps * (1.0 + 4.0 * DBL_EPS)
    cdef double s = _cl_scale_search(c, 2.0 * bound)
    if s <= 2.0 * bound:
        return s
    return bound


cdef double _cl_scale_search(CLCal* c, double top) noexcept nogil:
    # the smallest scale the evaluations certify, searched up to top (inf: none found)
    cdef double lo, hi, glo, ghi, kap, wd
    cdef int n = 0, k
    cdef CLWork* w = c.w1
    cdef Py_ssize_t m = w.m
    cdef bint lo_inf = w.L[0] == -INFINITY, hi_inf = w.R[m - 1] == INFINITY
    if c.metric:
        if not (lo_inf and hi_inf):
            # an end with nothing allowed beyond it: G' = 2/s there, so 2 dF/eps is
            # necessary; it is sufficient for any closed A (G' <= 2/s everywhere)
            return _cl_certify(c, 2.0 * c.dF / c.eps)
        if m == 1:
            return _cl_certify(c, c.dF / c.eps)
        if m == 2:
            # one finite forbidden interval: binding condition s (1 + e^{-w/s}) = 2 dF/eps,
            # s* = w / (kappa + W0(kappa e^-kappa)), kappa = eps w / (2 dF)
            wd = w.L[1] - w.R[0]
            kap = c.eps * wd / (2.0 * c.dF)
            return _cl_certify(c, wd / (kap + _lambertw(kap * exp(-kap), 0)))
    else:
        if m == 1:
            if lo_inf and hi_inf:
                return _cl_certify(c, c.dF / c.eps)
            if lo_inf or hi_inf:
                # half-line: worst pair (end, end + dF) at output y = end:
                # ln(2 e^{dF/s} - 1) <= eps  <=>  s >= dF / ln((e^eps + 1)/2)
                return _cl_certify(c, c.dF / (c.eps + log1p(exp(-c.eps)) - log(2.0)))
    hi = 2.0 * c.dF / c.eps
    ghi = _cl_g(hi, c)
    k = 0
    while ghi < 0.0 and k < 80 and hi <= top:   # the evaluations' margin, above the bound
        hi *= 1.0 + DBL_EPS * (2.0 ** k)
        ghi = _cl_g(hi, c)
        k += 1
    if ghi < 0.0:
        return INFINITY             # none passes the evaluation (_cl_scale's bound)
    lo = c.dF / c.eps
    glo = _cl_g(lo, c)
    k = 0
    while glo >= 0.0 and k < 1100:
        hi = lo
        ghi = glo
        lo *= 0.5
        glo = _cl_g(lo, c)
        k += 1
    if glo >= 0.0:
        return lo
    return _bisect_feasible(_cl_g, c, lo, glo, hi, ghi, 0.0, 0.0, &n)

cdef double _cl_solve(const double[::1] L, const double[::1] R, const double[::1] Lr,
                      const double[::1] Rr, double eps, double dF, bint metric,
                      bint loss, double sigma) except? -1.0:
    # the constrained Laplace problem on the spans [L[k], R[k]] (Lr, Rr: the reflected
    # spans): with loss, its certified loss at the scale sigma (> 0, checked by the
    # caller), else its calibrated scale for eps (sigma unused)
    cdef _CLBuf b1 = _CLBuf(L, R)
    cdef _CLBuf b2 = _CLBuf(Lr, Rr)
    cdef CLCal c = CLCal(w1=&b1.w, w2=&b2.w, dF=dF, eps=eps, metric=metric)
    cdef double v
    with nogil:
        v = _cl_loss(&c, sigma) if loss else _cl_scale(&c)
    return v


def cl_scale(const double[::1] L, const double[::1] R, const double[::1] Lr,
             const double[::1] Rr, double eps, double dF, bint metric):
    """Calibrated constant scale of the truncated Laplace on the spans [L[k], R[k]]
    (Lr, Rr: the reflected spans), for validated inputs."""
    return _cl_solve(L, R, Lr, Rr, eps, dF, metric, False, 0.0)

cdef double _gw_try(int fam, double t, int64_t n, int64_t dk, int wide, int tail_bits,
                    gw_law_t* L, uint64_t** cum, int64_t* cap, double** qlo, double** qhi,
                    double** work, int64_t* qcap) noexcept nogil:
    # the certificate of scale t (inf when out of range or out of memory); the buffers
    # grow as needed
    cdef int rc = _gw_shape(fam, t, n, tail_bits, L)
    cdef int64_t need, m
    cdef void* p
    if rc != 0 or (wide and not L.tail):
        return 1e300
    need = 2 * L.N + 2
    if need > cap[0]:
        p = realloc(cum[0], need * sizeof(uint64_t))
        if p == NULL:
            return 1e300
        cum[0] = <uint64_t*> p
        cap[0] = need
    m = (L.N + dk + 1) if wide else (n + 1)
    if m > qcap[0]:
        p = realloc(qlo[0], m * sizeof(double))
        if p == NULL:
            return 1e300
        qlo[0] = <double*> p
        p = realloc(qhi[0], m * sizeof(double))
        if p == NULL:
            return 1e300
        qhi[0] = <double*> p
        p = realloc(work[0], m * sizeof(double))
        if p == NULL:
            return 1e300
        work[0] = <double*> p
        qcap[0] = m
    if _gw_fill_table(L, cum[0]) != 0:
        return 1e300
    return _gw_cert(L, cum[0], n, dk, wide, qlo[0], qhi[0], work[0])


cdef struct GwCal:
    # the arguments of _gw_g: gw_calibrate's kernel, its buffers, and the last trial
    int fam
    int64_t n
    int64_t dk
    bint wide
    int tail_bits
    double log_target
    gw_law_t* L
    uint64_t** cum
    int64_t* cap
    double** qlo
    double** qhi
    double** work
    int64_t* qcap
    double last_x
    double last_c


cdef double _gw_g(double x, void* args) noexcept nogil:
    # ln target - ln cert(e^x): increasing where the certificate falls with the scale,
    # >= 0 where the scale e^x is certified; the buffers then hold that scale's table
    cdef GwCal* p = <GwCal*> args
    cdef double c = _gw_try(p.fam, exp(x), p.n, p.dk, p.wide, p.tail_bits, p.L, p.cum,
                            p.cap, p.qlo, p.qhi, p.work, p.qcap)
    p.last_x = x
    p.last_c = c
    return p.log_target - log(c)


def gw_calibrate(int fam, double target, double t0, int64_t n, int64_t dk, bint wide,
                 double rel_tol=1e-7, int tail_bits=24):
    """The smallest scale (grid steps) whose certificate is <= target, to ``rel_tol``: a
    bracket of (ln t) found by steps of a power law fitted to (ln t, ln cert), then shrunk
    by the calibrations' root finder (``_bisect_feasible``) on ln target - ln cert(e^x),
    stopped when the certificate is within ``rel_tol`` of the target or the bracket within
    ``rel_tol`` of the scale. Returns ``(t, cert, shape, cum)`` as :func:`gw_eval` with
    ``table=True``; a ValueError when no scale certifies."""
    if n < 1 or dk < 1 or n > GW_MAX_ROW or not (target > 0.0) or not (t0 > 0.0):
        raise ValueError("gw_calibrate: inconsistent arguments")
    if wide:
        n = GW_MAX_ROW
    cdef gw_law_t L
    cdef uint64_t* cum = NULL
    cdef double* qlo = NULL
    cdef double* qhi = NULL
    cdef double* work = NULL
    cdef int64_t cap = 0, qcap = 0
    cdef double t = t0, c, aim = target * (1.0 - 0.3 * rel_tol), a, slope, nxt
    cdef double good_t = -1.0, good_c = 0.0, bad_t = -1.0, bad_c = 0.0, prev_t = -1.0
    cdef double prev_c = 0.0, x
    cdef double ltol = -log1p(-rel_tol)     # rel_tol as a width in ln t and ln cert
    cdef int it, found = 0, n_eval = 0
    cdef GwCal P
    cdef uint64_t[::1] vout
    cdef int rc
    try:
        with nogil:
            c = _gw_try(fam, t, n, dk, wide, tail_bits, &L, &cum, &cap, &qlo, &qhi, &work, &qcap)
            # the bracket: power-law steps until a certified and an uncertified scale
            for it in range(200):
                if c <= target:
                    if good_t < 0.0 or t < good_t:
                        good_t = t
                        good_c = c
                elif bad_t < 0.0 or t > bad_t:
                    bad_t = t
                    bad_c = c
                if good_t > 0.0 and good_c >= target * (1.0 - rel_tol):
                    found = 1
                    break
                if good_t > 0.0 and bad_t > 0.0:
                    break
                a = 1.0
                if prev_t > 0.0 and prev_t != t and c < 1e299 and prev_c < 1e299:
                    slope = (log(c) - log(prev_c)) / (log(t) - log(prev_t))
                    if -8.0 < slope < -0.05:
                        a = -slope
                if c < 1e299:
                    nxt = t * exp(log(c / aim) / a)
                else:
                    nxt = t * 2.0
                if good_t > 0.0:
                    nxt = fmin(nxt, good_t * 0.999999)
                    nxt = fmax(nxt, good_t * 0.25)
                else:
                    nxt = fmax(nxt, t * 1.000001)
                    nxt = fmin(nxt, t * 4.0)
                    if nxt > 1e11:
                        break
                prev_t = t
                prev_c = c
                t = nxt
                c = _gw_try(fam, t, n, dk, wide, tail_bits, &L, &cum, &cap, &qlo, &qhi, &work,
                            &qcap)
            if not found and good_t > 0.0 and bad_t > 0.0:
                # the root finder on x = ln t, from the bracket
                P.fam = fam
                P.n = n
                P.dk = dk
                P.wide = wide
                P.tail_bits = tail_bits
                P.log_target = log(target)
                P.L = &L
                P.cum = &cum
                P.cap = &cap
                P.qlo = &qlo
                P.qhi = &qhi
                P.work = &work
                P.qcap = &qcap
                P.last_x = NAN
                x = _bisect_feasible(_gw_g, &P, log(bad_t), P.log_target - log(bad_c),
                                     log(good_t), P.log_target - log(good_c), 0.5 * ltol,
                                     ltol, &n_eval)
                t = exp(x)
                if x == P.last_x:
                    c = P.last_c
                else:                      # the buffers hold another trial's table
                    c = _gw_try(fam, t, n, dk, wide, tail_bits, &L, &cum, &cap, &qlo, &qhi,
                                &work, &qcap)
                if not (c <= target):      # exp(ln t) rounded off good_t's certified scale
                    t = good_t
                    c = _gw_try(fam, t, n, dk, wide, tail_bits, &L, &cum, &cap, &qlo, &qhi,
                                &work, &qcap)
                found = 1
            elif good_t > 0.0:
                found = 1
                if t != good_t:            # the buffers hold the last scale tried
                    t = good_t
                    c = _gw_try(fam, t, n, dk, wide, tail_bits, &L, &cum, &cap, &qlo, &qhi,
                                &work, &qcap)
        if not found or not (c <= target):
            raise ValueError("grid law: no scale certifies the target for these parameters "
                             "(the kernel table would exceed its size limit); pass "
                             "mode='continuous'")
        out = _np.empty(2 * L.N + 2, dtype=_np.uint64)
        vout = out
        memcpy(&vout[0], cum, (2 * L.N + 2) * sizeof(uint64_t))
        out.setflags(write=False)
        shape = (int(L.N), int(L.tail), int(L.kexp), int(L.tailw), int(L.sbits), int(L.tm),
                 int(2 * L.N + dk))
        return t, c, shape, out
    finally:
        free(cum)
        free(qlo)
        free(qhi)
        free(work)


cdef double _gs_z(double t, double r2, double a, double b) noexcept nogil:
    # sum_{j} exp(-(j - i)^2 / (2 t^2)), j = 0..n, a = n - i, b = -i: Euler-Maclaurin
    # (integral, end terms, first and third derivatives), as _gaussian_row_loss states it
    cdef double fa = exp(-((a / r2) * (a / r2))), fb = exp(-((b / r2) * (b / r2)))
    cdef double integral = t * sqrt(M_PI / 2.0) * (erf(a / r2) - erf(b / r2))
    cdef double d1 = (-a * fa + b * fb) / (t * t)
    cdef double d3 = ((3.0 * a / pow(t, 4.0) - pow(a, 3.0) / pow(t, 6.0)) * fa
                      - (3.0 * b / pow(t, 4.0) - pow(b, 3.0) / pow(t, 6.0)) * fb)
    return integral + 0.5 * (fa + fb) + d1 / 12.0 - d3 / 720.0


cdef double _gs_row_loss(double t, int64_t n, int64_t dk) noexcept nogil:
    cdef double r2 = t * sqrt(2.0)
    cdef int64_t i = n - dk
    return ((<double> dk) * (2.0 * (<double> i) + (<double> dk)) / (2.0 * t * t)
            + log(_gs_z(t, r2, 0.0, <double> (-n)) / _gs_z(t, r2, <double> (n - i), <double> (-i))))


def gw_gaussian_row_loss(double t, int64_t n, int64_t dk):
    """The privacy loss of the discrete Gaussian of scale ``t`` (grid steps) on a row of
    ``n`` intervals between the inputs ``n - dk`` and ``n`` at the output 0 (see
    ``bndp._laws.search_start._gaussian_row_loss``)."""
    return _gs_row_loss(t, n, dk)


def gw_gaussian_start(double target, int64_t dk, int64_t n, double s):
    """Secant steps on ``ln t`` from ``s`` to the scale at which :func:`gw_gaussian_row_loss`
    is ``target`` (``dk`` at most ``n``); ``s`` where they do not reach it within 1e-6
    (see ``bndp._laws.search_start._narrow_gaussian_start``)."""
    cdef double x0 = log(s), x1 = log(s * 1.1), x2, t
    cdef double f0 = _gs_row_loss(s, n, dk) - target, f1 = _gs_row_loss(s * 1.1, n, dk) - target
    cdef int it
    for it in range(40):
        if not (isfinite(f0) and isfinite(f1)) or f1 == f0:
            return s
        x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
        x0 = x1
        x1 = x2
        if not fabs(x1) < 700.0:
            return s
        f0 = f1
        f1 = _gs_row_loss(exp(x1), n, dk) - target
        if fabs(f1) <= 1e-12 * target:
            break
    t = exp(x1)
    return t if isfinite(t) and t > 0.0 and fabs(f1) <= 1e-6 * target else s
