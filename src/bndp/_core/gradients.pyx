# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Certificates of the gradient mechanisms; their samplers are in
_core/fill.pyx, their moments in _core/laws.pyx.

Bounded-support Gaussian mechanisms for private training [HMSCG24]: the rectified Gaussian
N^R = clip(theta + sigma Z, lo, hi) (Def. 3.1), the truncated Gaussian N^T (Def. 3.2) and
the stochastic sign sign(theta + sigma Z); their per-instance Renyi divergences in closed
form (Lemma 4.4 / Eq. (5); Lemma 4.7 in the corrected form of Appendix B) and their Fisher
information loss (Lemma 4.1, Eq. (3) and Eq. (4) with the sign of the interior mass
corrected as in Appendix F).

Conventions inside the kernels: every quantity is standardised by sigma (t = theta/sigma,
h = C/sigma, l = lo/sigma, u = hi/sigma); Delta(y) = Phi(u - y) - Phi(l - y) is the mass
of N(y, 1) on [l, u]; A(y) = log Phi(l - y), B(y) = log Phi(y - u) are the log masses of
the two rectified atoms. Inputs are validated by the Python layer (alpha > 1 finite,
sigma > 0, l < u finite, t and h finite, h > 0).

[HMSCG24] S. Hu, S. Mahloujifar, V. Smith, K. Chaudhuri, C. Guo. Privacy Amplification for
          the Gaussian Mechanism via Bounded Support. arXiv:2403.05598, 2024.
"""

import numpy as _np

from bndp._core.common cimport *
from bndp._core.special cimport *
from bndp._core.sample cimport *
from bndp._core.laws cimport *

# the Gauss-Legendre nodes and weights of bndp._core.laws
cdef gl_nodes_t GL = gauss_legendre()

cdef double _GR_LOG_MAX_NEG = -745.0      # exp() of anything below is 0 in double

# ---------------------------------------------------------------------------------------
# Renyi divergences (standardised). alpha > 1, am1 = alpha - 1.
# ---------------------------------------------------------------------------------------

cdef inline double _gr_lndtr_c(double* cache, int i, double x) noexcept nogil:
    # log Phi(x), computed once per coordinate and slot (NaN marks an empty slot)
    if isnan(cache[i]):
        cache[i] = _gr_lndtr(x)
    return cache[i]


cdef inline double _gr_rect_D(double x, double s, double l, double u, double al, double am1,
                              double ldv, double* ca, int ix, int ixs, double* cb) noexcept nogil:
    # D_alpha(N^R(x) || N^R(x + s)), Lemma 4.4 / Eq. (5) of [HMSCG24] as a log-sum-exp of
    #   t1 = alpha(alpha-1)s^2/2 + log Delta(x + (1-alpha)s)            (interior)
    #   t2 = alpha log Phi(l-x) + (1-alpha) log Phi(l-x-s)                (atom at l)
    #   t3 = alpha log Phi(x-u) + (1-alpha) log Phi(x+s-u)                (atom at u)
    # ldv = log Delta(x + (1-alpha)s). The log Phi values at x and x+s sit in the slots ix,
    # ixs of the per-coordinate caches ca (atom at l) and cb (atom at u). An atom term whose
    # cheap upper bound is below e^-745 is skipped: the sum is >= 1 (D >= 0), so it could
    # not change the result.
    cdef double t1 = 0.5 * al * am1 * s * s + ldv, t2, t3, d
    d = x - l
    if d >= 1.0 and _gr_atom_bound(d, s, am1) < _GR_LOG_MAX_NEG:
        t2 = -INFINITY
    else:
        t2 = al * _gr_lndtr_c(ca, ix, l - x) - am1 * _gr_lndtr_c(ca, ixs, l - x - s)
    d = u - x
    if d >= 1.0 and _gr_atom_bound(d, -s, am1) < _GR_LOG_MAX_NEG:
        t3 = -INFINITY
    else:
        t3 = al * _gr_lndtr_c(cb, ix, x - u) - am1 * _gr_lndtr_c(cb, ixs, x + s - u)
    return _gr_lse3(t1, t2, t3) / am1


cdef inline double _gr_phi_lin(double z) noexcept nogil:
    if z <= 0.0:
        return _ndtr_lower(z)
    return 1.0 - _ndtr_lower(-z)


cdef inline double _gr_delta_lin(double y, double l, double u) noexcept nogil:
    # Delta(y) = Phi(u-y) - Phi(l-y) in linear space, same case split as _gr_log_ndtr_diff
    cdef double U = u - y, L = l - y, tt
    if L >= 0.0:
        tt = U
        U = -L
        L = -tt
    if U > 0.0:
        return _half_mass(U) + _half_mass(-L)
    return _ndtr_lower(U) - _ndtr_lower(L)


cdef inline double _gr_delta_from(double pa, double pb, double y, double l,
                                  double u) noexcept nogil:
    # Delta(y) from the atom masses pa = Phi(l-y), pb = Phi(y-u) when they are small (then
    # 1 - pa - pb >= 3/4 is exact to rounding), else directly
    if pa + pb <= 0.25:
        return (1.0 - pa) - pb
    return _gr_delta_lin(y, l, u)


cdef inline double _gr_pow_am1(double r, double am1) noexcept nogil:
    if am1 == 1.0:
        return r
    if am1 == 2.0:
        return r * r
    return pow(r, am1)


cdef inline bint _gr_atom_lin(double px, double pxs, double d, double s, double am1,
                              double* out) noexcept nogil:
    # px^alpha pxs^(1-alpha) = px (px/pxs)^(alpha-1); False when pxs underflowed and the
    # term is not provably negligible (the caller then takes the log-space path)
    if pxs > 0.0:
        out[0] = px * _gr_pow_am1(px / pxs, am1)
        return True
    if d >= 1.0 and _gr_atom_bound(d, s, am1) < _GR_LOG_MAX_NEG:
        out[0] = 0.0
        return True
    return False


cdef inline void _gr_phi5_taylor(double z0, double h, double* out) noexcept nogil:
    # out[k] = Phi(z0 + (k-2)h), k = 0..4, from one Phi and one phi: Taylor series
    # Phi(z0 + d) = Phi(z0) + phi(z0) sum_{n=1}^{9} (-1)^(n-1) He_{n-1}(z0) d^n / n!
    # (He: probabilists' Hermite polynomials). The caller ensures 2|h| max(1, |z0|) <= 0.1,
    # so the first omitted term, ~phi(z0) (0.1)^10/10!, is below 3e-17 phi(z0).
    cdef double he[10]
    cdef double c[10]
    cdef double p0 = _gr_phi_lin(z0), f0 = exp(-0.5 * z0 * z0 - LOG_SQRT_2PI), d, acc
    cdef double fact = 1.0, sgn = 1.0
    cdef int n, k
    he[0] = 1.0
    he[1] = z0
    for n in range(1, 9):
        he[n + 1] = z0 * he[n] - n * he[n - 1]
    for n in range(1, 10):
        fact *= n
        c[n] = sgn * he[n - 1] / fact
        sgn = -sgn
    for k in range(5):
        if k == 2:
            out[k] = p0
            continue
        d = (k - 2) * h
        acc = c[9]
        for n in range(8, 0, -1):
            acc = c[n] + d * acc
        out[k] = p0 + f0 * (d * acc)


cdef inline bint _gr_rect_S(double x, double s, double l, double u, double am1, double eq,
                            double dlt, double pa_x, double pa_xs, double pb_x,
                            double pb_xs, double* smax) noexcept nogil:
    # Linear-space sum of Lemma 4.4: e^{alpha(alpha-1)s^2/2} Delta(x+(1-alpha)s) + atoms;
    # keeps the largest sum seen in smax (log is monotone: one log per coordinate).
    cdef double t2, t3, S
    if not _gr_atom_lin(pa_x, pa_xs, x - l, s, am1, &t2):
        return False
    if not _gr_atom_lin(pb_x, pb_xs, u - x, -s, am1, &t3):
        return False
    S = eq * dlt + t2 + t3
    if not (S < 1e300):
        return False
    if S > smax[0]:
        smax[0] = S
    return True


cdef inline bint _gr_small_shift(double t, double h, double l, double u) noexcept nogil:
    # 2h max(1, |l - t|, |u - t|) <= 0.1: the five points t + kh, |k| <= 2, are within
    # reach of one Taylor series of Phi around each end of S
    cdef double big = fabs(l - t)
    if fabs(u - t) > big:
        big = fabs(u - t)
    if big < 1.0:
        big = 1.0
    return 2.0 * h * big <= 0.1


cdef bint _gr_rect_rdp2_taylor(double t, double h, double l, double u, double eq,
                               double* res) noexcept nogil:
    # 'sup' at alpha = 2 for a tiny shift (the paper's DP-SGD regime, C/sigma <= 5e-3): the
    # atom masses at t + kh come from _gr_phi5_taylor (2 erfc + 2 exp instead of 10 erfc),
    # Delta = (1 - pb) - pa (absolute error ~eps; the sums are >= 1 and e^q ~ 1).
    cdef double PA[5]
    cdef double PB[5]
    cdef double smax = 0.0, q
    _gr_phi5_taylor(l - t, -h, PA)          # PA[k] = Phi(l - (t + (k-2)h))
    _gr_phi5_taylor(t - u, h, PB)           # PB[k] = Phi(t + (k-2)h - u)
    if not _gr_rect_S(t, h, l, u, 1.0, eq, (1.0 - PB[1]) - PA[1], PA[2], PA[3], PB[2], PB[3],
                      &smax):
        return False
    if not _gr_rect_S(t + h, -h, l, u, 1.0, eq, (1.0 - PB[4]) - PA[4], PA[3], PA[2], PB[3],
                      PB[2], &smax):
        return False
    if not _gr_rect_S(t, -h, l, u, 1.0, eq, (1.0 - PB[3]) - PA[3], PA[2], PA[1], PB[2], PB[1],
                      &smax):
        return False
    if not _gr_rect_S(t - h, h, l, u, 1.0, eq, (1.0 - PB[0]) - PA[0], PA[1], PA[2], PB[1],
                      PB[2], &smax):
        return False
    q = log(smax)
    res[0] = q if q > 0.0 else 0.0
    return True


cdef bint _gr_rect_rdp_lin(double t, double h, double l, double u, double al, int mode,
                           double* res) noexcept nogil:
    # Fast path for coordinates whose evaluation points t +- alpha h all lie within 5 sigma
    # of S: every Phi value is formed once by erfc in linear space (no underflow there, and
    # the sums are >= 1, so one final log keeps the absolute accuracy of the log-space
    # form); the largest of the direction sums is taken before the log.
    cdef double am1 = al - 1.0, q, eq, pa0, pap, pam = 0.0, pb0, pbp, pbm = 0.0, smax = 0.0
    cdef double dlt
    cdef bint cheap
    if not (t - al * h >= l - 5.0 and t + al * h <= u + 5.0):
        return False
    q = 0.5 * al * am1 * h * h
    if q > 600.0:
        return False
    eq = exp(q)
    if am1 == 1.0 and mode == 2 and _gr_small_shift(t, h, l, u):
        return _gr_rect_rdp2_taylor(t, h, l, u, eq, res)
    pa0 = _gr_phi_lin(l - t)
    pap = _gr_phi_lin(l - t - h)
    pb0 = _gr_phi_lin(t - u)
    pbp = _gr_phi_lin(t + h - u)
    if mode >= 2 or am1 == 1.0:
        pam = _gr_phi_lin(l - t + h)
        pbm = _gr_phi_lin(t - h - u)
    # At alpha = 2 the interior points t -+ (alpha-1)h are t -+ h, where the atom masses
    # are at hand: Delta = (1 - pb) - pa has absolute error ~eps, and with
    # e^q <= 16 that is ~16 eps relative to the sum (>= 1), so it is used whatever the size
    # of Delta; otherwise only when the atoms are small.
    cheap = am1 == 1.0 and q <= 2.75
    if cheap:
        dlt = (1.0 - pbm) - pam
    elif am1 == 1.0:
        dlt = _gr_delta_from(pam, pbm, t - h, l, u)
    else:
        dlt = _gr_delta_lin(t - am1 * h, l, u)
    if not _gr_rect_S(t, h, l, u, am1, eq, dlt, pa0, pap, pb0, pbp, &smax):
        return False
    if mode >= 1:
        if not _gr_rect_S(t + h, -h, l, u, am1, eq, _gr_delta_lin(t + al * h, l, u),
                          pap, pa0, pbp, pb0, &smax):
            return False
    if mode >= 2:
        if cheap:
            dlt = (1.0 - pbp) - pap
        elif am1 == 1.0:
            dlt = _gr_delta_from(pap, pbp, t + h, l, u)
        else:
            dlt = _gr_delta_lin(t + am1 * h, l, u)
        if not _gr_rect_S(t, -h, l, u, am1, eq, dlt, pa0, pam, pb0, pbm, &smax):
            return False
        if not _gr_rect_S(t - h, h, l, u, am1, eq, _gr_delta_lin(t - al * h, l, u),
                          pam, pa0, pbm, pb0, &smax):
            return False
    q = log(smax) / am1
    res[0] = q if q > 0.0 else 0.0
    return True


cdef double _gr_rect_rdp(double t, double h, double l, double u, double al,
                         int mode) noexcept nogil:
    # mode 0 'alg1': D(t || t+h); 1 'text': max with D(t+h || t); 2 'sup': also D(t || t-h)
    # and D(t-h || t). Fast linear-space path near S, log-space path elsewhere.
    cdef double am1 = al - 1.0, r, v
    cdef double ca[3]
    cdef double cb[3]
    if _gr_rect_rdp_lin(t, h, l, u, al, mode, &r):
        return r
    ca[0] = ca[1] = ca[2] = NAN            # slots: 0 at t-h, 1 at t, 2 at t+h
    cb[0] = cb[1] = cb[2] = NAN
    r = _gr_rect_D(t, h, l, u, al, am1, _gr_ld(t - am1 * h, l, u), ca, 1, 2, cb)
    if mode >= 1:
        v = _gr_rect_D(t + h, -h, l, u, al, am1, _gr_ld(t + al * h, l, u), ca, 2, 1, cb)
        if v > r:
            r = v
    if mode >= 2:
        v = _gr_rect_D(t, -h, l, u, al, am1, _gr_ld(t + am1 * h, l, u), ca, 1, 0, cb)
        if v > r:
            r = v
        v = _gr_rect_D(t - h, h, l, u, al, am1, _gr_ld(t - al * h, l, u), ca, 0, 1, cb)
        if v > r:
            r = v
    return r if r > 0.0 else 0.0


cdef inline double _gr_trunc_F(double y, double l, double u, int form) noexcept nogil:
    # form 0: log Delta(y); 1: right-tail representation; 2: left-tail (mirrored).
    if form == 0:
        return _gr_ld(y, l, u)
    if form == 1:
        return _gr_q_right(y, l, u)
    return _gr_q_right(-y, -u, -l)


cdef bint _gr_trunc_rdp2_lin(double t, double h, double l, double u, int mode,
                            double* res) noexcept nogil:
    # alpha = 2: D = h^2 + log(Delta(x+s) Delta(x-s) / Delta(x)^2); with the Delta values in
    # linear space the largest ratio over the directions needs one log per coordinate.
    cdef double d0, dp, dm, d2, r, v
    cdef double PA[5]
    cdef double PB[5]
    if mode == 2 and _gr_small_shift(t, h, l, u):
        # tiny shift: Delta(t + kh) = (1 - pb) - pa from two Taylor series of Phi, kept when
        # every Delta >= 1/4 (relative error <= ~4 eps)
        _gr_phi5_taylor(l - t, -h, PA)
        _gr_phi5_taylor(t - u, h, PB)
        d0 = (1.0 - PB[2]) - PA[2]
        dp = (1.0 - PB[3]) - PA[3]
        dm = (1.0 - PB[1]) - PA[1]
        d2 = (1.0 - PB[4]) - PA[4]
        v = (1.0 - PB[0]) - PA[0]
        if d0 >= 0.25 and dp >= 0.25 and dm >= 0.25 and d2 >= 0.25 and v >= 0.25:
            r = dp * dm / (d0 * d0)
            if d0 * d2 / (dp * dp) > r:
                r = d0 * d2 / (dp * dp)
            if d0 * v / (dm * dm) > r:
                r = d0 * v / (dm * dm)
            v = h * h + log(r)
            res[0] = v if v > 0.0 else 0.0
            return True
    d0 = _gr_delta_lin(t, l, u)
    dp = _gr_delta_lin(t + h, l, u)
    dm = _gr_delta_lin(t - h, l, u)
    if not (d0 > 1e-250 and dp > 1e-250 and dm > 1e-250):
        return False
    r = dp * dm / (d0 * d0)                     # D(t || t+h) and D(t || t-h)
    if mode >= 1:
        d2 = _gr_delta_lin(t + 2.0 * h, l, u)
        if not (d2 > 1e-250):
            return False
        v = d0 * d2 / (dp * dp)                 # D(t+h || t)
        if v > r:
            r = v
    if mode >= 2:
        d2 = _gr_delta_lin(t - 2.0 * h, l, u)
        if not (d2 > 1e-250):
            return False
        v = d0 * d2 / (dm * dm)                 # D(t-h || t)
        if v > r:
            r = v
    v = h * h + log(r)
    res[0] = v if v > 0.0 else 0.0
    return True


cdef void _gr_tn_cumulants(double t, double l, double u, double* k2, double* k3,
                           double* k4) noexcept nogil:
    # Cumulants 2..4 of N(t, 1) truncated to [l, u] on an interval narrow against the local
    # scale of the Gaussian (as in _tn_moments): 24-point Gauss-Legendre with the density
    # taken relative to its value at the point of [l, u] nearest to t, central moments in a
    # second pass (no cancellation).
    cdef double a = l - t, b = u - t, hw = 0.5 * (b - a), c = 0.5 * (a + b), zref, z, m
    cdef double s0 = 0.0, s1 = 0.0, m2 = 0.0, m3 = 0.0, m4 = 0.0, d, dd
    cdef double wt[GL_N]
    cdef int k
    zref = _nearest_zero(a, b)
    for k in range(GL_N):
        z = c + hw * GL.x[k]
        wt[k] = GL.w[k] * exp(-0.5 * (z - zref) * (z + zref))
        s0 += wt[k]
        s1 += wt[k] * (z - c)
    m = s1 / s0
    for k in range(GL_N):
        d = c + hw * GL.x[k] - c - m
        dd = d * d
        m2 += wt[k] * dd
        m3 += wt[k] * dd * d
        m4 += wt[k] * dd * dd
    m2 /= s0
    k2[0] = m2
    k3[0] = m3 / s0
    k4[0] = m4 / s0 - 3.0 * m2 * m2


cdef inline double _gr_trunc_D_series(double t, double s, double l, double u,
                                      double al) noexcept nogil:
    # D_alpha(N^T(t) || N^T(t+s)) = alpha k2 s^2/2 + sum_{k>=3} k_k s^k (1-(1-alpha)^(k-1))/k!
    # with k_k the cumulants of N^T(t) (log Delta is, up to -x^2/2, the cumulant generating
    # function of the truncated law; expand the Appendix-B form in s). Used only when
    # alpha |s| (u - l) <= 1e-3 on a narrow support, where the next term is below 1e-9
    # relative and the closed form would lose digits to cancellation.
    cdef double k2, k3, k4, om = 1.0 - al
    _gr_tn_cumulants(t, l, u, &k2, &k3, &k4)
    return (0.5 * al * k2 * s * s + k3 * s * s * s * (1.0 - om * om) / 6.0
            + k4 * s * s * s * s * (1.0 - om * om * om) / 24.0)


cdef double _gr_trunc_rdp(double t, double h, double l, double u, double al,
                          int mode) noexcept nogil:
    # D_alpha(N^T(x) || N^T(x+s)) = alpha s^2/2 + [F(x+s) - F(x)]
    #                                 + [F(x+(1-alpha)s) - F(x)]/(alpha-1),  F = log Delta
    # (Appendix B of [HMSCG24]; the printed Eq. (6) has (1-alpha)(c+theta) and exponent
    # 1-alpha instead). Adding any quadratic -(y-r)^2/2 to F leaves D unchanged (the
    # quadratic terms cancel exactly against alpha s^2/2), so when every evaluation point lies
    # beyond one end of the support, F is taken without its Gaussian factor
    # (_gr_q_right): the huge, cancelling (y-u)^2/2 terms are never formed and D keeps its
    # relative precision for theta far outside S (e.g. theta = 1e3).
    cdef double am1 = al - 1.0, ah = al * h, quad, f0, fp, fm, fa, fb, r, v, big
    cdef int form
    # narrow support and a tiny shift: cumulant series (full relative precision)
    big = fabs(l - t) + h
    if fabs(u - t) + h > big:
        big = fabs(u - t) + h
    if big < 1.0:
        big = 1.0
    if (u - l) * big <= 2.0 and ah * (u - l) <= 1e-3:
        r = _gr_trunc_D_series(t, h, l, u, al)
        if mode >= 1:
            v = _gr_trunc_D_series(t + h, -h, l, u, al)
            if v > r:
                r = v
        if mode >= 2:
            v = _gr_trunc_D_series(t, -h, l, u, al)
            if v > r:
                r = v
            v = _gr_trunc_D_series(t - h, h, l, u, al)
            if v > r:
                r = v
        return r if r > 0.0 else 0.0
    if t - ah >= u:
        form = 1
        quad = 0.0
    elif t + ah <= l:
        form = 2
        quad = 0.0
    else:
        form = 0
        quad = 0.5 * al * h * h
        if am1 == 1.0 and _gr_trunc_rdp2_lin(t, h, l, u, mode, &r):
            return r
    f0 = _gr_trunc_F(t, l, u, form)
    fp = _gr_trunc_F(t + h, l, u, form)
    fb = _gr_trunc_F(t - am1 * h, l, u, form)          # t + (1-alpha)h
    r = fp - f0 + (fb - f0) / am1 + quad                # D(t || t+h)
    if mode >= 1:
        fa = _gr_trunc_F(t + ah, l, u, form)
        v = f0 - fp + (fa - fp) / am1 + quad            # D(t+h || t)
        if v > r:
            r = v
    if mode >= 2:
        # at alpha = 2 the points t -+ (alpha-1)h coincide with t -+ h: reuse them
        fm = fb if am1 == 1.0 else _gr_trunc_F(t - h, l, u, form)
        fa = fp if am1 == 1.0 else _gr_trunc_F(t + am1 * h, l, u, form)
        v = fm - f0 + (fa - f0) / am1 + quad            # D(t || t-h)
        if v > r:
            r = v
        fb = _gr_trunc_F(t - ah, l, u, form)
        v = f0 - fm + (fb - fm) / am1 + quad            # D(t-h || t)
        if v > r:
            r = v
    return r if r > 0.0 else 0.0


cdef inline double _gr_sign_D(double x, double s, double al, double am1) noexcept nogil:
    # Bernoulli Renyi divergence between sign(x + Z) and sign(x + s + Z):
    # 1/(alpha-1) log(p1^alpha q1^(1-alpha) + p0^alpha q0^(1-alpha)), p1 = Phi(x), q1 = Phi(x+s)
    cdef double a = al * _gr_lndtr(x) - am1 * _gr_lndtr(x + s)
    cdef double b = al * _gr_lndtr(-x) - am1 * _gr_lndtr(-x - s)
    cdef double m = a if a > b else b, r
    r = (m + log1p(exp((b if a > b else a) - m))) / am1
    return r if r > 0.0 else 0.0


cdef double _gr_sign_rdp(double t, double h, double al, int mode) noexcept nogil:
    cdef double am1 = al - 1.0, r, v
    r = _gr_sign_D(t, h, al, am1)
    if mode >= 1:
        v = _gr_sign_D(t + h, -h, al, am1)
        if v > r:
            r = v
    if mode >= 2:
        v = _gr_sign_D(t, -h, al, am1)
        if v > r:
            r = v
        v = _gr_sign_D(t - h, h, al, am1)
        if v > r:
            r = v
    return r


cdef inline double _gr_rdp(int mech, double t, double h, double l, double u, double al,
                           int mode) noexcept nogil:
    if mech == 0:
        return _gr_rect_rdp(t, h, l, u, al, mode)
    if mech == 1:
        return _gr_trunc_rdp(t, h, l, u, al, mode)
    return _gr_sign_rdp(t, h, al, mode)


# ---------------------------------------------------------------------------------------
# Fisher information loss, squared and in units of 1/sigma^2 (Lemma 4.1 of [HMSCG24]).
# ---------------------------------------------------------------------------------------

cdef inline double _gr_clamp01(double v) noexcept nogil:
    # Theorem 4.2: 0 <= (sigma eta^B)^2 <= 1; only rounding can leave the interval.
    if v < 0.0:
        return 0.0
    if v > 1.0:
        return 1.0
    return v


cdef double _gr_trunc_eta2(double t, double l, double u) noexcept nogil:
    # Eq. (3): 1 - ((phi(zb) - phi(za))/Z)^2 + (za phi(za) - zb phi(zb))/Z, za = l - t,
    # zb = u - t, Z = Phi(zb) - Phi(za); the ratios phi/Z are formed in log space. On a
    # support narrow against the local scale of the Gaussian the closed form cancels (it
    # tends to width^2/12 through O(1) terms); there the variance of the truncated law
    # (= sigma^4 eta_T^2) comes from the quadrature branch of _tn_moments.
    cdef double za = l - t, zb = u - t, lz, ra, rb, big, m, v
    cdef TNParams p
    big = fabs(za)
    if fabs(zb) > big:
        big = fabs(zb)
    if big < 1.0:
        big = 1.0
    if zb < -TN_TAILMOM or za > TN_TAILMOM:
        # one tail: the variance of the offset from the near end (_tn_tail_moments), from
        # t, l, u themselves (the width zb - za would carry the rounding of l - t)
        if zb < 0.0:
            _tn_tail_moments(t, 1.0, u, l, &m, &v)
        else:
            _tn_tail_moments(t, 1.0, l, u, &m, &v)
        return _gr_clamp01(v)
    if (zb - za) * big <= 2.0:
        _tn_setup(&p, 0.0, 1.0, za, zb)
        _tn_moments(&p, &m, &v)
        return _gr_clamp01(v)
    lz = _gr_delta_lin(t, l, u)
    if lz > 1e-250:
        ra = exp(-0.5 * za * za - LOG_SQRT_2PI) / lz
        rb = exp(-0.5 * zb * zb - LOG_SQRT_2PI) / lz
    else:
        lz = _gr_log_ndtr_diff(zb, za)
        ra = exp(-0.5 * za * za - LOG_SQRT_2PI - lz)
        rb = exp(-0.5 * zb * zb - LOG_SQRT_2PI - lz)
    return _gr_clamp01(1.0 - (rb - ra) * (rb - ra) + (za * ra - zb * rb))


cdef double _gr_rect_eta2(double t, double l, double u) noexcept nogil:
    # Eq. (4) with the interior mass Phi(zb) - Phi(za) (the printed Phi((t-b)/s) -
    # Phi((t-a)/s) has the wrong sign; Appendix F has it right):
    # phi(za)^2/Phi(za) + phi(zb)^2/Phi(-zb) + Phi(zb) - Phi(za) + za phi(za) - zb phi(zb)
    cdef double za = l - t, zb = u - t, lpa, lpb, pa, pb, fa, fb, dl
    if za > -30.0 and zb < 30.0:
        # linear space: no underflow of the atom masses down to Phi(-30) ~ 5e-198
        pa = _gr_phi_lin(za)
        pb = _gr_phi_lin(-zb)
        fa = exp(-0.5 * za * za - LOG_SQRT_2PI)
        fb = exp(-0.5 * zb * zb - LOG_SQRT_2PI)
        # interior mass from the atoms while it is >= 0.1 (relative error <= 10 eps)
        dl = (1.0 - pb) - pa if pa + pb <= 0.9 else _gr_delta_lin(t, l, u)
        return _gr_clamp01(fa * fa / pa + fb * fb / pb + dl + za * fa - zb * fb)
    lpa = -0.5 * za * za - LOG_SQRT_2PI
    lpb = -0.5 * zb * zb - LOG_SQRT_2PI
    return _gr_clamp01(exp(2.0 * lpa - _gr_lndtr(za)) + exp(2.0 * lpb - _gr_lndtr(-zb))
                       + exp(_gr_log_ndtr_diff(zb, za)) + za * exp(lpa) - zb * exp(lpb))


cdef double _gr_sign_eta2(double t) noexcept nogil:
    # phi(t)^2 / (Phi(t) Phi(-t))  (Section 4.1 of [HMSCG24])
    return _gr_clamp01(exp(-t * t - 2.0 * LOG_SQRT_2PI - _gr_lndtr(t) - _gr_lndtr(-t)))


cdef inline double _gr_eta2(int mech, double t, double l, double u) noexcept nogil:
    if mech == 0:
        return _gr_rect_eta2(t, l, u)
    if mech == 1:
        return _gr_trunc_eta2(t, l, u)
    return _gr_sign_eta2(t)

def gr_rdp(int mech, int mode, const double[:, :] theta, const double[:, :] c, double sigma,
           const double[:, :] lo, const double[:, :] hi, const double[::1] alphas,
           double[:, :, ::1] each, double[::1] total):
    """Per-instance RDP. ``total[k]`` gets the sum over all coordinates at ``alphas[k]``
    (Neumaier-compensated); ``each`` (shape (n_alpha, n0, n1), or (0, 0, 0) to skip) gets
    the per-coordinate values."""
    cdef Py_ssize_t i, j, k, n0 = theta.shape[0], n1 = theta.shape[1], na = alphas.shape[0]
    cdef bint keep = each.shape[0] > 0
    cdef double inv = 1.0 / sigma, al, v, s, comp, tt
    with nogil:
        for k in range(na):
            al = alphas[k]
            s = 0.0
            comp = 0.0
            for i in range(n0):
                for j in range(n1):
                    v = _gr_rdp(mech, theta[i, j] * inv, c[i, j] * inv, lo[i, j] * inv,
                                hi[i, j] * inv, al, mode)
                    if keep:
                        each[k, i, j] = v
                    tt = s + v
                    if fabs(s) >= fabs(v):
                        comp += (s - tt) + v
                    else:
                        comp += (v - tt) + s
                    s = tt
            total[k] = s + comp


def gr_eta2_rows(int mech, const double[:, :] theta, double sigma, const double[:, :] lo,
                 const double[:, :] hi, double[:, ::1] out):
    """eta^2 per coordinate (units 1/sigma^2 applied here)."""
    cdef Py_ssize_t i, j, n0 = out.shape[0], n1 = out.shape[1]
    cdef double inv = 1.0 / sigma, inv2 = inv * inv
    with nogil:
        for i in range(n0):
            for j in range(n1):
                out[i, j] = _gr_eta2(mech, theta[i, j] * inv, lo[i, j] * inv,
                                     hi[i, j] * inv) * inv2
