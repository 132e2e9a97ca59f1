# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Certification: exact worst-case losses and privacy profiles of the
bounded Gaussian [CH24], the bounded Laplace [HABM20] and the constrained Laplace [CSS22].
"""

import numpy as _np

from bndp._core.common cimport *
from bndp._core.special cimport *
from bndp._core.sample cimport *
from bndp._core.calibrate cimport *

#
# Exact worst-case privacy loss of the bounded Gaussian mechanism [CH24] and of the bounded
# Laplace mechanism [HABM20], and the "tight" calibration of the bounded Gaussian (smallest
# sigma whose certified worst-case loss is <= eps).
#
# Bounded Gaussian, one coordinate of width w = u - l (shift the domain to [0, w]). The
# density is an exponential family in the location q:
#     p_q(x) = exp(x q / s^2 - x^2 / (2 s^2) - Lam(q)) / (sqrt(2 pi) s),   x in [0, w],
#     Lam(q) = ln int_0^w exp(y q / s^2 - y^2 / (2 s^2)) dy            (log-partition).
# Hence, for q' = q + c with c > 0,
#     ln p_q(x) - ln p_q'(x) = -x c / s^2 + Lam(q + c) - Lam(q),
# which is linear in x and largest at x = 0 (the lower bound): the loss is
#     F(q, c) = Lam(q + c) - Lam(q).
# Lam is convex (a log-Laplace transform) and increasing (its derivative is a mean of y / s^2
# with y in [0, w]), so F increases in q (convexity) and in c (monotonicity): over
# 0 <= q <= q + c <= w the supremum is at q + c = w (q' = u, q = u - c, x = l), i.e.
#     h(c) = Lam(w) - Lam(w - c) = c (2w - c) / (2 s^2) - rho(c),
# with rho(c) = ln[G(c)/G(0)] (G the normaliser, symmetric about w/2) the function _bg_rho
# of the calibration. h is increasing and concave in c (h'' = -Lam''(w - c) <= 0), with
#     h'(c) = (w - c) / s^2 - rho'(c).
# Mirror images (c < 0, x = u) give the same values. For m coordinates the loss separates:
# the worst case is max sum_i h_i(c_i) over 0 <= c_i <= w_i, ||c||_2 <= dQ: a concave
# maximisation over a convex set, bounded from above by weak Lagrangian duality,
#     max <= D(lam) = lam dQ^2 + sum_i max_{0 <= c <= w_i} [h_i(c) - lam c^2]   (any lam >= 0),
# with equality at the optimal lam (Slater holds), and each inner maximum of a concave
# function is bounded from above by the pointwise minimum of two tangent lines.
# ---------------------------------------------------------------------------------------


cdef inline double _vf_h(double c, double w, double s, double* mag) noexcept nogil:
    # h(c) for one coordinate; mag receives the size of the terms (for rounding margins).
    cdef double a = c * (2.0 * w - c) / (2.0 * s * s)
    # rho is symmetric about w/2 (G(c) = G(w - c)); evaluate it on [0, w/2], where its
    # kernel is tested
    cdef double r = _bg_rho(c if c <= 0.5 * w else w - c, w, s)
    mag[0] = a + fabs(r)
    return a - r


cdef inline double _vf_dh(double c, double w, double s) noexcept nogil:
    # h'(c) = (w - c)/s^2 - rho'(c), with rho' of the calibration (cancellation-free) on
    # [0, w/2] and rho'(c) = -rho'(w - c) beyond (there the kernel's expm1 factor overflows
    # to -inf against an underflowed phi when c >> s)
    if c <= 0.5 * w:
        return (w - c) / (s * s) - _bg_drho(c, w, s)
    return (w - c) / (s * s) + _bg_drho(w - c, w, s)


cdef double _vf_concave_max(double w, double s, double lam, double cmax,
                            double* carg, double* mag) noexcept nogil:
    # Certified upper bound on max_{0 <= c <= cmax} f(c), f(c) = h(c) - lam c^2 (concave).
    # Bisection on the sign of f' brackets the maximiser in [clo, chi]; then, since a concave
    # function lies below each of its tangents, max f <= max_{c in [0, cmax]} min(T_lo(c),
    # T_hi(c)) with T the tangent lines at clo and chi. This bound holds whatever the signs
    # of the computed derivatives (it is taken over the whole interval), and it tends to the
    # maximum as the bracket shrinks. carg receives the bracket point with the larger f.
    cdef double clo = 0.0, chi = cmax, cm, d, flo, fhi, dlo, dhi, mlo, mhi, best, x, v, t1, t2
    cdef int it
    dlo = _vf_dh(clo, w, s) - 2.0 * lam * clo
    dhi = _vf_dh(chi, w, s) - 2.0 * lam * chi
    if dlo > 0.0 and dhi < 0.0:
        for it in range(200):
            cm = 0.5 * (clo + chi)
            if cm <= clo or cm >= chi:
                break
            d = _vf_dh(cm, w, s) - 2.0 * lam * cm
            if d > 0.0:
                clo = cm
                dlo = d
            else:
                chi = cm
                dhi = d
    flo = _vf_h(clo, w, s, &mlo) - lam * clo * clo
    fhi = _vf_h(chi, w, s, &mhi) - lam * chi * chi
    if isnan(flo) or isnan(fhi) or isnan(dlo) or isnan(dhi):
        carg[0] = clo
        mag[0] = 0.0
        return INFINITY         # cannot certify: report an infinite bound, never a low one
    mag[0] = (mlo if mlo > mhi else mhi) + lam * chi * chi
    carg[0] = clo if flo >= fhi else chi
    # max over [0, cmax] of min(T_lo, T_hi): at an end point or at the crossing of the lines
    best = -INFINITY
    for it in range(3):
        if it == 0:
            x = 0.0
        elif it == 1:
            x = cmax
        else:
            if not (dlo - dhi > 0.0):
                continue
            x = (fhi - flo + dlo * clo - dhi * chi) / (dlo - dhi)
            if not (x > 0.0 and x < cmax):
                continue
        t1 = flo + dlo * (x - clo)
        t2 = fhi + dhi * (x - chi)
        # each tangent alone is an upper bound; one that overflowed (inf * 0) bounds nothing
        if isnan(t1):
            t1 = INFINITY
        if isnan(t2):
            t2 = INFINITY
        v = t1 if t1 < t2 else t2
        if v > best:
            best = v
    # never report less than a value actually attained (guards the crossing formula's
    # rounding when the two tangents are almost parallel)
    if flo > best:
        best = flo
    if fhi > best:
        best = fhi
    return best


cdef double _vf_ball_norm2(const ball_t* b, double lam) noexcept nogil:
    # ||c(lam)||^2, c_i(lam) the maximiser of h_i(c) - lam c^2 on [0, min(w_i, dq)]
    cdef Py_ssize_t i
    cdef double nrm2 = 0.0, mg
    for i in range(b.m):
        _vf_concave_max(b.w[i], b.s, lam, b.w[i] if b.w[i] < b.dq else b.dq, &b.cstar[i],
                        &mg)
        nrm2 += b.cstar[i] * b.cstar[i]
    return nrm2


cdef double _vf_bg_loss(double s, double dq, const double* w, Py_ssize_t m,
                        double* cstar, double* lower) noexcept nogil:
    # Certified upper bound on the worst-case privacy loss of the bounded Gaussian mechanism
    # with scale s, l2 sensitivity dq and box widths w[0..m-1]; *lower receives the loss of
    # an attained configuration (a lower bound), cstar its shift vector.
    cdef Py_ssize_t i
    cdef double nrm2 = 0.0, total = 0.0, mag = 0.0, mg, c, llo, lhi, lam, low
    cdef double scale_c
    cdef int it
    if m == 1:
        c = dq if dq < w[0] else w[0]
        cstar[0] = c
        total = _vf_h(c, w[0], s, &mag)
        lower[0] = total
        return total + 8.0 * DBL_EPS * mag
    for i in range(m):
        nrm2 += w[i] * w[i]
    if nrm2 <= dq * dq:
        # the whole box fits in the ball: c = w (q = l, q' = u), h_i(w_i) = w_i^2 / (2 s^2)
        for i in range(m):
            cstar[i] = w[i]
            total += _vf_h(w[i], w[i], s, &mg)
            mag += mg
        lower[0] = total
        return total + 8.0 * DBL_EPS * mag
    # multiplier lam with ||c(lam)|| = dq (||c(lam)|| is non-increasing in lam): bisection
    # in log lam, as lam spans many decades
    cdef ball_t ball = ball_t(w=w, m=m, s=s, dq=dq, cstar=cstar)
    llo = -700.0
    lhi = 700.0
    _log_lambda_bisect(_vf_ball_norm2, &ball, dq * dq, 1e-12, &llo, &lhi)
    # weak duality at the two bracket ends: keep the smaller (both are upper bounds)
    total = INFINITY
    for it in range(2):
        lam = exp(llo if it == 0 else lhi)
        c = lam * dq * dq
        mg = c
        for i in range(m):
            c += _vf_concave_max(w[i], s, lam, w[i] if w[i] < dq else dq, &cstar[i], &mag)
            mg += mag
        c += 8.0 * DBL_EPS * (mg + 1.0e-300)
        if c < total:
            total = c
    # a feasible configuration for the lower bound: c(lam) pulled back into the ball
    nrm2 = 0.0
    for i in range(m):
        nrm2 += cstar[i] * cstar[i]
    scale_c = 1.0
    if nrm2 > dq * dq:
        scale_c = dq / sqrt(nrm2) * (1.0 - 4.0 * DBL_EPS)
    low = 0.0
    for i in range(m):
        cstar[i] *= scale_c
        low += _vf_h(cstar[i], w[i], s, &mg)
    lower[0] = low
    if low > total:          # cannot happen beyond rounding; keep the reported bound valid
        total = low
    if isnan(total):
        return INFINITY
    return total


cdef inline double _vf_bl_loss(double b, double dq, double w) noexcept nogil:
    # Bounded Laplace [HABM20]: for c = q' - q > 0 the log ratio at x <= q is
    # c/b + ln C(q + c) - ln C(q); ln C is concave and symmetric (Lemma 3.2), so the maximum
    # over q is at q = l, and it increases in c (Lemma A.4): the exact loss is
    # dQ/b + ln dC(b) with dQ capped at w (Lemma 3.3). Upper bound with a rounding margin.
    cdef double c = dq if dq < w else w
    cdef double ld = _bl_log_dc(b, c, w)
    return (c / b + ld) * (1.0 + 8.0 * DBL_EPS)


# ---------------------------------------------------------------------------------------
# Tight calibration: the smallest sigma with certified loss <= eps. g(s) = eps - U(s) is
# increasing in s (the worst-case loss decreases as the noise grows; checked numerically,
# and the bracket end returned satisfies g >= 0 as evaluated whether or not it holds).
# ---------------------------------------------------------------------------------------


cdef double _vf_tight_g(double s, void* args) noexcept nogil:
    cdef VTight* t = <VTight*> args
    cdef double low
    if not (s > 0.0):
        return -INFINITY
    return t.eps - _vf_bg_loss(s, t.dq, t.w, t.m, t.cbuf, &low)


cdef double _vf_bg_tight_sigma(double eps, double dq, const double* w, Py_ssize_t m,
                               double s_hi, double* cbuf, int* n_eval) noexcept nogil:
    # s_hi: a feasible scale (the paper's sigma*, Theorems 2.4/3.4). Returns NAN if no
    # feasible upper end could be certified (the caller then keeps s_hi).
    cdef VTight t
    cdef double hi = s_hi, lo, ghi, glo
    cdef int k
    t.eps = eps
    t.dq = dq
    t.w = w
    t.m = m
    t.cbuf = cbuf
    ghi = _vf_tight_g(hi, &t)
    n_eval[0] += 1
    for k in range(64):                 # make sure the upper end is certified
        if ghi >= 0.0:
            break
        hi *= 2.0
        ghi = _vf_tight_g(hi, &t)
        n_eval[0] += 1
    if not (ghi >= 0.0):
        return NAN
    lo = 0.5 * hi
    glo = _vf_tight_g(lo, &t)
    n_eval[0] += 1
    for k in range(1100):               # lower end: infeasible (loss > eps)
        if glo < 0.0:
            break
        hi = lo
        ghi = glo
        lo *= 0.5
        glo = _vf_tight_g(lo, &t)
        n_eval[0] += 1
    if not (glo < 0.0):
        return hi
    return _bisect_feasible(_vf_tight_g, &t, lo, glo, hi, ghi, 0.0, 0.0, n_eval)


# ---------------------------------------------------------------------------------------
# Bounded Laplace privacy profile: exact hockey-stick divergence
#     delta(eps) = sup_{|q - q'| <= dQ} int (p_q - e^eps p_q')_+ dx.
# On [0, w] with q < q' the log ratio (|x - q'| - |x - q|)/b + ln(C_q'/C_q) decreases in x,
# so for a pair the integral is F_q(x*) - e^eps F_q'(x*) at the crossing x* (a closed form).
# The CDFs decrease in the location (the family has monotone likelihood ratio), so
#   * the sup over the shift is at the largest one, c = min(dQ, w - q);
#   * for q in [q0, q1] (and c = dQ): F_q - e^eps F_{q+dQ} <= F_q0 - e^eps F_{q1+dQ}, whose
#     maximum over x is the pair value H(q0, q1 + dQ): a certified bound on the interval;
#   * beyond q = w - dQ (q' = u fixed) the value decreases in q.
# Hence delta(eps) = sup_{q in [0, w - dQ]} H(q, q + dQ), found by branch and bound with that
# interval bound (refine every interval whose bound exceeds the best attained value by more
# than 1e-8 relative; at most 32768 live intervals). The bound is first order in the
# interval length, so the certified value is within about 1e-7 relative of the attained
# one. The reversed order (q > q') is the mirror image x -> l + u - x.
# ---------------------------------------------------------------------------------------

cdef double _vf_bl_pair(double b, double w, double eps, double q, double qp) noexcept nogil:
    # int (p_q - e^eps p_q')_+ for 0 <= q < q' <= w (domain [0, w])
    cdef double c = qp - q, Cq, Cp, K, xs, Fq, Fp
    Cq = -0.5 * (expm1(-q / b) + expm1(-(w - q) / b))
    Cp = -0.5 * (expm1(-qp / b) + expm1(-(w - qp) / b))
    K = log(Cp / Cq)
    if c / b + K <= eps:
        return 0.0
    xs = 0.5 * (q + qp - (eps - K) * b)
    if xs < q:
        xs = q
    if xs > qp:
        xs = qp
    # F_q(x) for x >= q and F_q'(x) for x <= q'
    Fq = (-0.5 * expm1(-q / b) - 0.5 * expm1(-(xs - q) / b)) / Cq
    Fp = (-0.5 * exp(-(qp - xs) / b) * expm1(-xs / b)) / Cp
    return Fq - exp(eps) * Fp


cdef double _vf_bl_delta(double b, double dq, double w, double eps, double* lower,
                         double* qarg) noexcept nogil:
    cdef Py_ssize_t cap = 32768, n = 0, n_new, i, k
    cdef double* lo_q
    cdef double* hi_q
    cdef double* nlo
    cdef double* nhi
    cdef double* tmp
    cdef double qmax, best, bestq, up, v, a, z, mid, ub_pruned = 0.0, tol
    cdef int level, nseg = 64
    if dq >= w:
        dq = w
    if _vf_bl_loss(b, dq, w) <= eps:
        lower[0] = 0.0          # the mechanism is eps-DP: every pair value is exactly 0
        qarg[0] = 0.0
        return 0.0
    qmax = w - dq
    if qmax <= 0.0:
        v = _vf_bl_pair(b, w, eps, 0.0, w)
        lower[0] = v
        qarg[0] = 0.0
        return v + 8.0 * DBL_EPS * (1.0 + exp(eps))
    lo_q = <double*> malloc(cap * sizeof(double))
    hi_q = <double*> malloc(cap * sizeof(double))
    nlo = <double*> malloc(cap * sizeof(double))
    nhi = <double*> malloc(cap * sizeof(double))
    if lo_q == NULL or hi_q == NULL or nlo == NULL or nhi == NULL:
        free(lo_q); free(hi_q); free(nlo); free(nhi)
        lower[0] = NAN
        return NAN
    for i in range(nseg):
        lo_q[i] = qmax * i / nseg
        hi_q[i] = qmax * (i + 1) / nseg
    n = nseg
    best = 0.0
    bestq = 0.0
    up = INFINITY
    for level in range(60):
        # attained values at the left ends (and the right end of the last interval)
        for i in range(n):
            v = _vf_bl_pair(b, w, eps, lo_q[i], lo_q[i] + dq)
            if v > best:
                best = v
                bestq = lo_q[i]
            v = _vf_bl_pair(b, w, eps, hi_q[i], hi_q[i] + dq)
            if v > best:
                best = v
                bestq = hi_q[i]
        tol = 1e-8 * best + 1e-15
        # bounds; keep the intervals that may hold more than best + tol, split them
        up = best
        n_new = 0
        for i in range(n):
            a = lo_q[i]
            z = hi_q[i]
            v = _vf_bl_pair(b, w, eps, a, z + dq)
            if v <= best + tol:
                if v > ub_pruned:
                    ub_pruned = v
                continue
            if v > up:
                up = v
            mid = 0.5 * (a + z)
            if not (mid > a and mid < z) or n_new + 2 > cap:
                # cannot split further (resolution or memory): keep its bound
                if v > ub_pruned:
                    ub_pruned = v
                continue
            nlo[n_new] = a
            nhi[n_new] = mid
            nlo[n_new + 1] = mid
            nhi[n_new + 1] = z
            n_new += 2
        tmp = lo_q; lo_q = nlo; nlo = tmp
        tmp = hi_q; hi_q = nhi; nhi = tmp
        n = n_new
        if n == 0:
            break
    # every part of [0, w - dQ] is covered by a pruned interval, a kept interval (bounded by
    # up) or, if the level cap was hit, a remaining interval (bounded by up as well)
    if ub_pruned > up:
        up = ub_pruned
    free(lo_q); free(hi_q); free(nlo); free(nhi)
    lower[0] = best
    qarg[0] = bestq
    return up + 8.0 * DBL_EPS * (1.0 + exp(eps))


# ---------------------------------------------------------------------------------------
# def wrappers (inputs validated by bndp.verify)
# ---------------------------------------------------------------------------------------

def vf_bg_loss(double sigma, double dq, const double[::1] w):
    """(upper, lower, c*) of the bounded Gaussian worst-case loss for box widths ``w``."""
    cdef Py_ssize_t m = w.shape[0]
    cstar = _np.empty(m)
    cdef double[::1] cv = cstar
    cdef double up, low
    with nogil:
        up = _vf_bg_loss(sigma, dq, &w[0], m, &cv[0], &low)
    return up, low, cstar


def vf_bl_loss(double b, double dq, double w):
    """Certified exact worst-case loss dQ/b + ln dC(b) of the bounded Laplace mechanism."""
    return _vf_bl_loss(b, dq, w)


def vf_bg_tight_sigma(double eps, double dq, const double[::1] w, double sigma_hi):
    """(sigma, n_eval): smallest sigma (to floating-point resolution) whose certified
    worst-case loss is <= eps; sigma is NaN if none could be certified."""
    cdef Py_ssize_t m = w.shape[0]
    cdef double* cs = <double*> malloc(m * sizeof(double))
    cdef double s
    cdef int n = 0
    if cs == NULL:
        raise MemoryError()
    with nogil:
        s = _vf_bg_tight_sigma(eps, dq, &w[0], m, sigma_hi, cs, &n)
    free(cs)
    return s, n


def vf_bl_delta(double b, double dq, double w, double eps):
    """(upper, lower, q): exact hockey-stick delta(eps) of the bounded Laplace mechanism on
    [0, w] (certified upper bound, attained value, and the worst q with q' = q + dQ)."""
    cdef double up, low, qa = 0.0
    with nogil:
        up = _vf_bl_delta(b, dq, w, eps, &low, &qa)
    return up, low, qa

#
# Laplace noise truncated to an allowed set A and renormalised ("truncated and normalised
# Laplace", [CSS22]); real Lambert W (both branches) accurate at the branch point.
#
# [CSS22] W. L. Croft, J.-R. Sack, W. Shi. Differential privacy via a truncated and normalized
#         Laplace mechanism. J. Comput. Sci. Technol. 37(2), 369-388, 2022; proofs in the
#         appendix to Ch. 5 Sec. 1 of W. L. Croft, "Design and Applications of Differentially
#         Private Mechanisms" (equation numbers below are the appendix's).
#
# Allowed set: A = union of m = n + 1 closed spans [L[k], R[k]], L[0] may be -inf, R[m-1]
# may be +inf, R[k] < L[k+1] (the forbidden gaps). The Python layer validates and builds the
# spans; nothing here checks them.

# ---------------------------------------------------------------------------------------
# Masses of the allowed set. For Laplace(mu, s): Lc(mu) (Rc(mu)) is the mass of A left
# (right) of mu, N = Lc + Rc; fL/fR are the forbidden masses (= 1/2 - Lc, 1/2 - Rc). At the
# span ends they obey positive recursions (no cancellation even when N is tiny):
#   lcR_k = -expm1(-w_k/s)/2 + e^{-w_k/s} lcL_k,  lcL_{k+1} = e^{-g_k/s} lcR_k,
#   fR_k  = e^{-w_k/s} fL_k,                       fL_{k+1} = -expm1(-g_k/s)/2 + e^{-g_k/s} fR_k,
# (w_k span widths, g_k gap widths) and mirror images from the right. Inside span k,
#   Lc(mu) = -expm1(-d/s)/2 + e^{-d/s} lcL_k,   d = mu - L_k   (Lc = 1/2 when L_k = -inf).
# ---------------------------------------------------------------------------------------


cdef inline void _cl_step(bint open_end, double width, double gap, double s, double lc_in,
                          double f_in, double* lc_out, double* f_out) noexcept nogil:
    # one span of the given width (open_end: unbounded), then the gap after it: the masses at
    # the next span's near end from those at this span's far end
    cdef double e, lc, f, g
    if open_end:
        lc = 0.5
        f = 0.0
    else:
        e = exp(-width / s)
        lc = -0.5 * expm1(-width / s) + e * lc_in
        f = e * f_in
    g = exp(-gap / s)
    lc_out[0] = g * lc
    f_out[0] = -0.5 * expm1(-gap / s) + g * f


cdef void _cl_recur(CLWork* w) noexcept nogil:
    cdef Py_ssize_t k, m = w.m
    cdef const double* L = w.L
    cdef const double* R = w.R
    cdef double s = w.s
    w.lcL[0] = 0.0
    w.fL[0] = 0.5
    for k in range(m - 1):
        _cl_step(L[k] == -INFINITY, R[k] - L[k], L[k + 1] - R[k], s, w.lcL[k], w.fL[k],
                 &w.lcL[k + 1], &w.fL[k + 1])
    w.rcR[m - 1] = 0.0
    w.fR[m - 1] = 0.5
    k = m - 1
    while k > 0:
        _cl_step(R[k] == INFINITY, R[k] - L[k], L[k] - R[k - 1], s, w.rcR[k], w.fR[k],
                 &w.rcR[k - 1], &w.fR[k - 1])
        k -= 1


cdef inline double _cl_lc(const CLWork* w, Py_ssize_t k, double mu) noexcept nogil:
    cdef double d
    if w.L[k] == -INFINITY:
        return 0.5
    d = (mu - w.L[k]) / w.s
    return -0.5 * expm1(-d) + exp(-d) * w.lcL[k]


cdef inline double _cl_rc(const CLWork* w, Py_ssize_t k, double mu) noexcept nogil:
    cdef double d
    if w.R[k] == INFINITY:
        return 0.5
    d = (w.R[k] - mu) / w.s
    return -0.5 * expm1(-d) + exp(-d) * w.rcR[k]


cdef inline double _cl_logn(const CLWork* w, Py_ssize_t k, double mu) noexcept nogil:
    return log(_cl_lc(w, k, mu) + _cl_rc(w, k, mu))


# ---------------------------------------------------------------------------------------
# Exact worst-case loss. For constant s, log p_mu(y)/p_mu'(y) = (|y-mu'| - |y-mu|)/s
# + ln N(mu') - ln N(mu) is maximal over y in A at y = mu (mu in A), so the loss of the pair
# is |mu - mu'|/s + ln N(mu') - ln N(mu). For mu' < mu it equals G(mu) - G(mu') with
# G(x) = x/s - ln N(x), G' = 2 Lc/(s N) > 0. On a span N'' = (N - 1)/s^2 < 0, so ln N is
# concave and G convex there. Maximising G(mu) - G(mu') over mu, mu' in A, 0 < mu - mu' <= dF
# (a union of polygons span_i x span_j cut by the strip): no interior stationary point
# (G' > 0); on an edge mu = const (mu' = const) the objective is monotone, so only vertices
# and the diagonal edges mu - mu' = dF remain. Vertices: (m(e), e) and (e, M(e)) for each
# span end e, with m(e) = min A cap [e - dF, e], M(e) = max A cap [e, e + dF]. Diagonal edge
# inside one span: G convex => F(mu) = G(mu) - G(mu - dF) non-decreasing, maximum at a
# vertex. Diagonal edge across spans: with r = Lc/N, F' = (2/s)(r(mu) - r(mu - dF)) and on a
# span r' = (1/(2N) - 2 r (1 - r))/s, so at a stationary point F'' = (1/N(mu) - 1/N(mu'))/s^2.
# A local maximum (F'' <= 0) thus has N(mu) >= N(mu'), i.e. F <= dF/s, while the same two
# points in the other order have loss 2 dF/s - F >= dF/s, with a local minimum there: such a
# point is never the overall supremum (if F = dF/s it is flat, and the vertices attain it).
# Plus the limit dF/s when A is unbounded above. The reverse direction (mu' > mu) is the
# same computation on the reflected set. Total O(n log n) per scale.
# ---------------------------------------------------------------------------------------

cdef inline double _cl_pair(const CLWork* w, Py_ssize_t i, double mup, Py_ssize_t j,
                            double mu) noexcept nogil:
    # loss of the pair mu' = mup (span i) < mu (span j), both doubles of A
    return (mu - mup) / w.s + log((_cl_lc(w, i, mup) + _cl_rc(w, i, mup))
                                  / (_cl_lc(w, j, mu) + _cl_rc(w, j, mu)))


cdef inline double _cl_n_dist(const CLWork* w, Py_ssize_t k, double dl, double dr) noexcept nogil:
    # N at the point of span k at distances dl from L[k] and dr from R[k] (clamped at 0)
    cdef double lc, rc, d
    if w.L[k] == -INFINITY:
        lc = 0.5
    else:
        d = (dl if dl > 0.0 else 0.0) / w.s
        lc = -0.5 * expm1(-d) + exp(-d) * w.lcL[k]
    if w.R[k] == INFINITY:
        rc = 0.5
    else:
        d = (dr if dr > 0.0 else 0.0) / w.s
        rc = -0.5 * expm1(-d) + exp(-d) * w.rcR[k]
    return lc + rc


cdef double _cl_loss_dir(const CLWork* w, double dF) noexcept nogil:
    # The vertices at distance dF from a span end e are evaluated in local coordinates:
    # the loss term is dF/s itself and N at the partner point comes from its distances to
    # its span's ends, ((e - L_j) - dF and dF - (e - R_j)), not from the rounded point
    # e -+ dF, whose rounding (ulp(e), e.g. 2^14 at e = 1e20) no margin then has to cover.
    # A partner classified across a span end by rounding has its distance clamped at 0
    # with the loss term kept at dF/s (G is increasing, so this only overstates the loss).
    cdef Py_ssize_t m = w.m, k, j, side
    cdef const double* L = w.L
    cdef const double* R = w.R
    cdef double s = w.s, best = -INFINITY, e, x, v, nk
    if R[m - 1] == INFINITY:
        best = dF / s
    for k in range(m):
        for side in range(2):
            e = L[k] if side == 0 else R[k]
            if not isfinite(e):
                continue
            nk = _cl_n_dist(w, k, e - L[k], R[k] - e)
            # vertex (m(e), e)
            x = e - dF
            j = _cl_locate(L, m, x)
            if j >= 0 and x <= R[j]:
                v = dF / s + log(_cl_n_dist(w, j, (e - L[j]) - dF, dF - (e - R[j])) / nk)
            else:
                if L[j + 1] < e:
                    v = _cl_pair(w, j + 1, L[j + 1], k, e)
                else:
                    v = -INFINITY
            if v > best:
                best = v
            # vertex (e, M(e))
            x = e + dF
            j = _cl_locate(L, m, x)
            if x <= R[j]:
                v = dF / s + log(nk / _cl_n_dist(w, j, (e - L[j]) + dF, (R[j] - e) - dF))
            elif R[j] > e:
                v = _cl_pair(w, k, e, j, R[j])
            else:
                v = -INFINITY
            if v > best:
                best = v
    return best


cdef double _cl_metric_dir(const CLWork* w) noexcept nogil:
    # sup over the hull of A of G' = 2 Lc/(s N): G' increases on spans and decreases on gaps,
    # so the sup is at a finite right end of a span, or 1/s as mu -> +inf.
    cdef Py_ssize_t k, m = w.m
    cdef double best = 0.0, lc, rc, h
    if w.R[m - 1] == INFINITY:
        best = 1.0 / w.s
    for k in range(m):
        if w.R[k] != INFINITY:
            lc = _cl_lc(w, k, w.R[k])
            rc = w.rcR[k]
            h = 2.0 * lc / (w.s * (lc + rc))
            if h > best:
                best = h
    return best

# ---------------------------------------------------------------------------------------
# Hockey-stick divergence of the Theorem 1 mechanism on [0, inf) between true values l1, l2
# (scales s1, s2): delta = int max(0, p1 - e^eps p2). On each of the segments cut at 0, l1,
# l2, inf the log ratio is affine in y, so the positive part is one interval and both
# masses are closed-form exponential integrals.
# ---------------------------------------------------------------------------------------

cdef inline double _dd_mass(double l, double s, double N, double a, double b) noexcept nogil:
    # mass of the truncated Laplace(l, s) on [a, b], a segment not containing l inside
    if b <= l:
        return exp(-(l - b) / s) * (-expm1(-(b - a) / s)) / (2.0 * N)
    if b == INFINITY:
        return exp(-(a - l) / s) / (2.0 * N)
    return exp(-(a - l) / s) * (-expm1(-(b - a) / s)) / (2.0 * N)


cdef double _dd_hockey(double l1, double s1, double l2, double s2, double eps) noexcept nogil:
    cdef double N1 = 1.0 - 0.5 * exp(-l1 / s1), N2 = 1.0 - 0.5 * exp(-l2 / s2)
    cdef double c0 = log(s2 * N2) - log(s1 * N1) - eps
    cdef double cuts[4]
    cdef double a, b, Da, sl, ya, yb, total = 0.0, mid
    cdef int k
    cuts[0] = 0.0
    cuts[1] = l1 if l1 < l2 else l2
    cuts[2] = l2 if l1 < l2 else l1
    cuts[3] = INFINITY
    for k in range(3):
        a = cuts[k]
        b = cuts[k + 1]
        if not (b > a):
            continue
        mid = a + 1.0 if b == INFINITY else 0.5 * (a + b)
        # D(y) = log p1 - log p2 - eps = c0 - |y-l1|/s1 + |y-l2|/s2, affine on [a, b]
        sl = (1.0 / s1 if mid < l1 else -1.0 / s1) - (1.0 / s2 if mid < l2 else -1.0 / s2)
        Da = c0 - fabs(a - l1) / s1 + fabs(a - l2) / s2
        ya = a
        yb = b
        if sl > 0.0:
            if Da < 0.0:
                ya = a - Da / sl
        elif sl < 0.0:
            if Da <= 0.0:
                continue
            yb = a - Da / sl
            if yb > b:
                yb = b
        else:
            if Da <= 0.0:
                continue
        if not (yb > ya):
            continue
        total += _dd_mass(l1, s1, N1, ya, yb) - exp(eps) * _dd_mass(l2, s2, N2, ya, yb)
    return total if total > 0.0 else 0.0

def cl_loss(const double[::1] L, const double[::1] R, const double[::1] Lr,
            const double[::1] Rr, double sigma, double dF, bint metric):
    """Certified worst-case loss at scale sigma (dp or metric form)."""
    if not (sigma > 0.0):
        raise ValueError("cl_loss: sigma must be positive")
    return _cl_solve(L, R, Lr, Rr, 0.0, dF, metric, True, sigma)

def dd_hockey_fill(const double[::1] l1, const double[::1] s1, const double[::1] l2,
                   const double[::1] s2, double eps, double[::1] out):
    """Hockey-stick divergence at level e^eps between the Theorem 1 outputs for true values
    at distances l1, l2 from the constraint (scales s1, s2)."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(out.shape[0]):
            out[i] = _dd_hockey(l1[i], s1[i], l2[i], s2[i], eps)
