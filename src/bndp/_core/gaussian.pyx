# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Calibrations and accounting of the unbounded Gaussian family.

The (unbounded) Gaussian mechanism and its calibrations [ZWB19]:
  J. Zhao, T. Wang, T. Bai, M. Yang, K.-Y. Lam, Z. Xu, S. Shi, H. Yu. Reviewing and Improving
  the Gaussian Mechanism for Differential Privacy. arXiv:1911.12060, 2019.
and the Laplace mechanism (unbounded), for comparison with the bounded ones.

Every noise amount of [ZWB19] has the shape sigma = (x + sqrt(x^2 + eps)) * Delta/(eps sqrt2)
for a scalar x (a: Eq. (5), b: Eq. (7a), c: Eq. (9), d: Eq. (13a), f: Eq. (14a),
g: Eq. (15a)); conversely x = (eps sigma/Delta - Delta/(2 sigma))/sqrt2 (Eq. (26)).
All kernels work at Delta = 1 (sigma1 = sigma/Delta) and scale at the end.

Numerical rules (each guards a silent under-noising):
 * e^eps erfc(sqrt(u^2+eps)) is written e^{-u^2} erfcx(sqrt(u^2+eps)) (no overflow at
   eps >= 709.78, where the literal product gives inf*0 and Algorithm 1 returns sigma = 0);
 * for a > 0 the DP condition is taken in log space,
   log r(a) = -a^2 + log(erfcx(a) - erfcx(sqrt(a^2+eps))), no underflow for tiny delta;
 * x + sqrt(x^2+eps) is rewritten eps/(sqrt(x^2+eps) - x) for x < 0 (no cancellation);
 * sqrt(16 delta+1) - 1 and sqrt(8 delta+1) - 1 are rationalised (Eqs. (9), (15a));
 * every evaluation of a privacy condition returns, with its value, a bound on its own
   rounding error, and a scale is accepted only if the condition holds with that margin.
"""

import numpy as _np

from bndp._core.common cimport *
from bndp._core.special cimport *
from bndp._core.calibrate cimport *
from bndp._core.laws cimport *

# the Gauss-Legendre nodes and weights of bndp._core.laws
cdef gl_nodes_t GL = gauss_legendre()

cdef double GF_SQRT2 = 1.41421356237309504880168872420969807857
cdef double GF_2_SQRTPI = 1.12837916709551257389615890312154517169   # 2/sqrt(pi)
cdef double GF_LN2 = 0.69314718055994530941723212145817656808

cdef inline double _gf_from_root(double x, double eps) noexcept nogil:
    # sigma1 = (x + sqrt(x^2+eps))/(eps sqrt2), Eqs. (5), (7b), (9), (13b), (14b), (15b) of
    # [ZWB19]; for x < 0 the identity (x + s)(s - x) = eps gives 1/((s - x) sqrt2) instead.
    cdef double s = hypot(x, sqrt(eps))
    if x >= 0.0:
        return (x + s) / (eps * GF_SQRT2)
    return 1.0 / ((s - x) * GF_SQRT2)


cdef inline double _gf_to_root(double s1, double eps) noexcept nogil:
    # x = (eps sigma1 - 1/(2 sigma1))/sqrt2, Eq. (26) of [ZWB19].
    return (eps * s1 - 0.5 / s1) * SQRT1_2


cdef double _gf_erfcx_dneg(double x) noexcept nogil:
    # -erfcx'(x) = 2/sqrt(pi) - 2 x erfcx(x) > 0 for x >= 0, to ~10 ulps. For x > 2 the
    # difference cancels (both terms -> 2/sqrt(pi)); there the Laplace continued fraction
    # sqrt(pi) erfcx(x) = 1/(x + c), c = (1/2)/(x + 1/(x + (3/2)/(x + ...))), gives
    # -erfcx'(x) = (2/sqrt(pi)) c/(x + c) without cancellation (80 terms: tested against
    # mpmath to 3e-16 relative at x = 2.01).
    cdef double c = 0.0
    cdef int k
    if x <= 2.0:
        return GF_2_SQRTPI - 2.0 * x * _gf_erfcx(x)
    for k in range(80 if x < 10.0 else 30, 0, -1):
        c = (0.5 * k) / (x + c)
    return GF_2_SQRTPI * c / (x + c)


cdef double _gf_log_r(double a, double eps, double da, double* err) noexcept nogil:
    # log r(a), r(a) = erfc(a) - e^eps erfc(sqrt(a^2+eps)) = 2 delta_DP (Eq. (5) of [ZWB19],
    # the Balle-Wang condition in the variable a). err receives a bound on the absolute error
    # of the returned value: rounding of each term (a few ulps of each summand, divided by
    # the result), plus |d log r/da| * da for an argument known only to within da.
    cdef double s = hypot(a, sqrt(eps)), ea, es, D, r, t1, t2, lr, dlr
    cdef double h, pa, ps, e1, e2, lD, lmv, emv
    cdef int k
    if a > 0.0:
        ea = _gf_erfcx(a)
        es = _gf_erfcx(s)
        D = ea - es                      # > 0: erfcx is decreasing
        h = eps / (s + a)                # s - a without cancellation
        e1 = INFINITY
        lD = -INFINITY
        if D > 0.0:
            e1 = DBL_EPS * 8.0 * (ea + es) / D
            lD = log(D)
        if e1 > 1e-12 and h > 0.0 and h * (2.0 * s + 2.0) <= 0.25:
            # D = int_a^s -erfcx'(x) dx with a positive, slowly varying integrand (its
            # relative variation over [a, s] is at most ~h (2s + 2) <= 1/4): 12-point
            # Gauss-Legendre is exact to rounding, and the integrand carries ~10 ulps
            lmv = 0.0
            for k in range(GL_R):
                lmv += GL.wr[k] * _gf_erfcx_dneg(a + 0.5 * h * (1.0 + GL.xr[k]))
            lmv *= 0.5 * h
            if lmv > 0.0:
                emv = DBL_EPS * 64.0
                if emv < e1:
                    lD = log(lmv)
                    e1 = emv
        if e1 > 1e-9 and h > 0.0:
            # D = erfcx(a) - erfcx(s) cancels when s - a is tiny against a (eps -> 0).
            # Mean value theorem: D = h |erfcx'(xi)|, xi in [a, s], and |erfcx'(x)| =
            # 2/sqrt(pi) - 2x erfcx(x) is decreasing, so D lies between h|erfcx'(s)| and
            # h|erfcx'(a)|: take the midpoint of the logs, half their gap as the error.
            pa = GF_2_SQRTPI - 2.0 * a * ea
            ps = GF_2_SQRTPI - 2.0 * s * es
            if pa > 0.0 and ps > 0.0:
                e2 = 4.0 * DBL_EPS * (GF_2_SQRTPI + 2.0 * s * ea) / ps
                lmv = log(h) + 0.5 * (log(pa) + log(ps))
                emv = 0.5 * fabs(log(pa) - log(ps)) + e2 + 4.0 * DBL_EPS
                if emv < e1:
                    lD = lmv
                    e1 = emv
        if not (e1 < 1.0):
            err[0] = INFINITY
            return -INFINITY
        lr = -a * a + lD
        # |r'/r| = (2/sqrt pi)(s - a)/(s D) (Remark 4)
        dlr = GF_2_SQRTPI * exp(log(h) - log(s) - lD)
        err[0] = e1 + DBL_EPS * 4.0 * (a * a + 1.0) + dlr * da
        return lr
    if eps < 1.0:
        # r = (erf(s) + erf(-a)) - expm1(eps) erfc(s): the first two terms are >= 0, and
        # the subtracted one is small against them for small eps (no cancellation).
        t1 = erf(s) - erf(a)
        t2 = erfc(s) * expm1(eps)
    else:
        t1 = erfc(a)                     # >= 1
        t2 = exp(-a * a) * _gf_erfcx(s)  # = e^eps erfc(s) <= erfcx(1) < 0.43
    r = t1 - t2
    if not (r > 0.0):
        err[0] = INFINITY
        return -INFINITY
    dlr = GF_2_SQRTPI * exp(-a * a) * (s - a) / (s * r)
    err[0] = DBL_EPS * 8.0 * (t1 + t2) / r + dlr * da
    return log(r)


cdef double _gf_log_p(double d, double eps, double da, double* err) noexcept nogil:
    # log(erfc(d) + erfc(sqrt(d^2+eps))) = log(2 delta_pDP): the exact probability that the
    # privacy loss leaves [-eps, eps] (Eqs. (13a), (86) of [ZWB19]). A sum of positive terms:
    # the rounding error is a few ulps; for d > 0 it is taken in log space.
    cdef double s = hypot(d, sqrt(eps)), lp, dlp, ed, es
    if d > 0.0:
        ed = _gf_erfcx(d)
        es = exp(-eps) * _gf_erfcx(s)
        lp = -d * d + log(ed + es)
        # |P'/P| = (2/sqrt pi)(1 + e^-eps d/s)/(erfcx(d) + e^-eps erfcx(s))
        dlp = GF_2_SQRTPI * (1.0 + exp(-eps) * d / s) / (ed + es)
        err[0] = DBL_EPS * (8.0 + 4.0 * d * d) + dlp * da
        return lp
    ed = erfc(d) + erfc(s)
    dlp = GF_2_SQRTPI * exp(-d * d) * (1.0 + exp(-eps) * d / s) / ed
    err[0] = DBL_EPS * 8.0 + dlp * da
    return log(ed)


cdef inline double _gf_da(double s1, double eps) noexcept nogil:
    # rounding error bound of _gf_to_root(s1, eps) (s1 itself carries one rounding from
    # sigma/Delta): a few ulps of the two terms
    return 4.0 * DBL_EPS * (eps * s1 + 0.5 / s1)


cdef double _gf_log_delta(int notion, double s1, double eps, double* err) noexcept nogil:
    # log of the exact delta achieved by N(0, (s1*Delta)^2) noise at eps (sensitivity
    # Delta): DP (Balle-Wang, Eq. (25)) or pDP (Eq. (86)); both are r/2 in the variable x.
    cdef double x = _gf_to_root(s1, eps)
    cdef double da = _gf_da(s1, eps)
    if notion == GF_NOTION_PDP:
        return _gf_log_p(x, eps, da, err) - GF_LN2
    return _gf_log_r(x, eps, da, err) - GF_LN2


cdef inline double _gf_exp_margin(double log_delta) noexcept nogil:
    # room for the roundings of ld + err and of its exponential (ld ~ log delta)
    return 4.0 * DBL_EPS * (1.0 + fabs(log_delta))


cdef inline bint _gf_certified(int notion, double s1, double eps, double log_delta) noexcept nogil:
    # True iff the exact delta of s1 is <= target with the rounding margin included.
    cdef double err = 0.0
    cdef double ld = _gf_log_delta(notion, s1, eps, &err)
    # the margin: so that the delta reported by gaussian_delta, exp(ld + err) rounded,
    # is itself <= delta at a certified point
    return ld + err + _gf_exp_margin(log_delta) <= log_delta


cdef inline double _gf_sep(double g) noexcept nogil:
    # Sign-preserving, increasing map applied to every g handed to the shared root finder:
    # infeasible values are pushed 1e-14 below zero. When a trial point lands within an
    # ulp of the root on the infeasible side, g there is ~1e-16 and the secant step from
    # the other end rounds onto that end, which the finder answers with a bisection step
    # (repeatedly: up to ~30 extra evaluations). With the offset the secant lands a few
    # ulps inside instead and the bracket closes at once. Feasibility (g >= 0) is unchanged.
    if g < 0.0:
        return g - 1e-14
    return g


cdef double _gf_g_opt(double a, void* args) noexcept nogil:
    # Increasing in a (r is strictly decreasing, Remark 4); >= 0 iff r(a) <= 2 delta holds
    # with the rounding margin, i.e. sigma(a) is certified (eps, delta)-DP.
    cdef GFArgs* p = <GFArgs*> args
    cdef double err = 0.0
    cdef double lr = _gf_log_r(a, p.eps, 0.0, &err)
    return _gf_sep(p.log2d - lr - err)


cdef double _gf_g_pdp(double d, void* args) noexcept nogil:
    # Increasing in d (the left side of (13a) is strictly decreasing); >= 0 iff certified pDP.
    cdef GFArgs* p = <GFArgs*> args
    cdef double err = 0.0
    cdef double lp = _gf_log_p(d, p.eps, 0.0, &err)
    return _gf_sep(p.log2d - lp - err)


cdef double _gf_bracket_solve(monotone_fn g, GFArgs* p, double lo, double hi) noexcept nogil:
    # Make [lo, hi] a valid bracket (g(lo) < 0 <= g(hi)) by moving its ends outwards with
    # growing steps (the analytic brackets can be tight to rounding level, e.g. Lemma 5's
    # d -> inverfc(2 delta) for eps >~ 31), then solve with the shared root finder.
    cdef double glo = g(lo, p), ghi = g(hi, p), step
    cdef int k, n = 0
    step = 1e-12 * (1.0 + fabs(lo))
    for k in range(200):
        if glo < 0.0:
            break
        hi = lo
        ghi = glo
        lo -= step
        step *= 2.0
        glo = g(lo, p)
    step = 1e-12 * (1.0 + fabs(hi))
    for k in range(200):
        if ghi >= 0.0:
            break
        lo = hi
        glo = ghi
        hi += step
        step *= 2.0
        ghi = g(hi, p)
    if glo >= 0.0:
        return lo
    if not (ghi >= 0.0):
        return NAN
    return _bisect_feasible(g, p, lo, glo, hi, ghi, 0.0, 0.0, &n)






cdef double _gf_b_mech1(double eps, double delta) noexcept nogil:
    # b of Eq. (7a), rebuilt from Appendix G, Eq. (61) of [ZWB19]:
    #   u0 = inverfc(2 delta + e^eps erfc(sqrt eps)),
    #   b  = inverfc(2 delta / (1 - e^eps erfc(sqrt(u0^2+eps)) / (2 delta + e^eps erfc(sqrt eps))))
    # if 2 - e^eps erfc(sqrt eps) > 2 delta, else 0; with e^eps erfc(sqrt eps) = erfcx(sqrt eps)
    # and e^eps erfc(sqrt(u0^2+eps)) = e^{-u0^2} erfcx(sqrt(u0^2+eps)).
    cdef double t = _gf_erfcx(sqrt(eps)), E, u0, ratio
    if not (2.0 - t > 2.0 * delta):
        return 0.0
    E = 2.0 * delta + t
    u0 = _gf_erfcinv(E)
    ratio = exp(-u0 * u0) * _gf_erfcx(hypot(u0, sqrt(eps))) / E
    return _gf_erfcinv(2.0 * delta / (1.0 - ratio))


cdef double _gf_a_opt(double eps, double delta) noexcept nogil:
    # Root a of r(a) = 2 delta (Eq. (5)), certified end. Brackets of Lemma 14 / Algorithm 1
    # (Appendix O): diff = r(0) - 2 delta = 1 - erfcx(sqrt eps) - 2 delta;
    #   diff > 0: 0 < a < c (c of Eq. (9));
    #   diff <= 0: -inverfc((2 - 2 delta)/(e^eps + 1)) < a <= 0, the argument written
    #   (2 - 2 delta) e^-eps/(1 + e^-eps) (no overflow).
    cdef GFArgs p
    cdef double diff, lo, hi, q
    p.eps = eps
    p.log2d = log(2.0 * delta)
    diff = 1.0 - _gf_erfcx(sqrt(eps)) - 2.0 * delta
    if diff > 0.0:
        lo = 0.0
        hi = _gf_c_mech2(delta)
    else:
        q = (2.0 - 2.0 * delta) * exp(-eps) / (1.0 + exp(-eps))
        lo = -_gf_erfcinv(q) if q > 1e-300 else -27.0
        if not (lo < 0.0):
            lo = -1e-3
        hi = 0.0
    return _gf_bracket_solve(_gf_g_opt, &p, lo, hi)


cdef double _gf_d_pdp(double eps, double delta) noexcept nogil:
    # Root d of erfc(d) + erfc(sqrt(d^2+eps)) = 2 delta (Eq. (13a)); Lemma 5 bracket
    # inverfc(2 delta) < d < inverfc(delta).
    cdef GFArgs p
    p.eps = eps
    p.log2d = log(2.0 * delta)
    return _gf_bracket_solve(_gf_g_pdp, &p, _gf_erfcinv(2.0 * delta), _gf_erfcinv(delta))


cdef double _gf_round_up(int notion, double s1, double eps, double delta) noexcept nogil:
    # Round sigma1 up by a few ulps (covers the rounding of x -> sigma1), then re-check the
    # exact delta with its margin, stepping up until it holds (bounded loop).
    cdef double ld = log(delta), step
    cdef int k
    s1 *= 1.0 + 8.0 * DBL_EPS
    step = 4.0 * DBL_EPS
    for k in range(64):
        if _gf_certified(notion, s1, eps, ld):
            return s1
        s1 *= 1.0 + step
        step *= 2.0
    return NAN


cdef double _gf_sigma1(int method, double eps, double delta) noexcept nogil:
    # sigma at Delta = 1 for validated inputs (eps > 0 finite, 0 < delta < 1, delta < 0.5 for
    # zhao2). Returns -1 for a classical method that is not (eps, delta)-DP here (eps > G(delta),
    # Theorem 1), NaN if a bracket could not be formed (never observed).
    cdef double s1, x
    if method == GF_DWORK2006 or method == GF_DWORK2014:
        # Eqs. (1), (2): sqrt(2 ln(2/delta))/eps, sqrt(2 ln(1.25/delta))/eps
        s1 = sqrt(2.0 * log((2.0 if method == GF_DWORK2006 else 1.25) / delta)) / eps
        s1 *= 1.0 + 4.0 * DBL_EPS
        if not _gf_certified(GF_NOTION_DP, s1, eps, log(delta)):
            return -1.0
        return s1
    if method == GF_OPTIMAL:
        x = _gf_a_opt(eps, delta)
    elif method == GF_ZHAO1:
        x = _gf_b_mech1(eps, delta)
    elif method == GF_ZHAO2:
        x = _gf_c_mech2(delta)
    elif method == GF_PDP_OPTIMAL:
        x = _gf_d_pdp(eps, delta)
    elif method == GF_ZHAO3:
        x = _gf_erfcinv(delta)                  # f of Eq. (14a)
    else:
        x = _gf_g_mech4(delta)
    if isnan(x):
        return NAN
    s1 = _gf_from_root(x, eps)
    if method >= GF_PDP_OPTIMAL:
        return _gf_round_up(GF_NOTION_PDP, s1, eps, delta)
    return _gf_round_up(GF_NOTION_DP, s1, eps, delta)


cdef double _gf_sigma(int method, double eps, double delta, double dq) noexcept nogil:
    cdef double s1 = _gf_sigma1(method, eps, delta), s
    if not (s1 > 0.0):
        return s1
    s = s1 * dq
    if dq != 1.0:
        s *= 1.0 + 2.0 * DBL_EPS         # one rounding in s1 * dq, re-divided by the checks
    return s


cdef double _gf_delta(int notion, double sigma, double eps, double dq) noexcept nogil:
    # delta (privacy profile) of N(0, sigma^2) noise at eps, sensitivity dq, as a certified
    # upper bound: exp(log delta + its error bound). Where erfcx(a) - erfcx(s) cancels
    # (sigma/dq ~ 1e4-1e6 at small eps) log delta is only known to within ~1e-9 (the mean
    # value bracket of _gf_log_r); its midpoint under-reported delta by up to 6.6e-10
    # relative. Elsewhere the bound is a few ulps above the exact value.
    cdef double err = 0.0
    cdef double ld = _gf_log_delta(notion, sigma / dq, eps, &err)
    if not (err < INFINITY):
        return 1.0
    return exp(ld + err)


cdef double _gf_g_eps(double e, void* args) noexcept nogil:
    # Increasing in eps (delta(eps) is strictly decreasing for fixed sigma); >= 0 iff the
    # noise sigma1 is certified (e, delta)-DP (or -pDP when F = 1).
    cdef GFArgs* p = <GFArgs*> args
    cdef double err = 0.0
    cdef int notion = GF_NOTION_PDP if p.F == 1.0 else GF_NOTION_DP
    cdef double ld = _gf_log_delta(notion, p.s1, e, &err)
    return _gf_sep(p.log2d - ld - err - _gf_exp_margin(p.log2d))


cdef double _gf_epsilon(int notion, double sigma, double delta, double dq) noexcept nogil:
    # Smallest eps >= 0 at which N(0, sigma^2) noise is certified (eps, delta)-DP (pDP):
    # the inverse of the privacy profile; the returned end satisfies the condition.
    cdef GFArgs p
    cdef double hi, ghi, g0, x, e
    cdef int k, n = 0
    p.s1 = sigma / dq
    p.log2d = log(delta)                       # here: log of the target delta itself
    p.F = 1.0 if notion == GF_NOTION_PDP else 0.0
    g0 = _gf_g_eps(0.0, &p)
    if g0 >= 0.0:
        return 0.0
    # Lemma 11 (a < inverfc(2 delta)) and Lemma 5 (d < inverfc(delta)) give an eps at which
    # sigma is enough: solve x = (eps s1 - 1/(2 s1))/sqrt2 for eps.
    x = _gf_erfcinv(delta if notion == GF_NOTION_PDP else 2.0 * delta)
    hi = (x * GF_SQRT2 + 0.5 / p.s1) / p.s1
    if not (hi > 0.0 and isfinite(hi)):
        hi = 1.0
    ghi = _gf_g_eps(hi, &p)
    for k in range(80):
        if ghi >= 0.0:
            break
        hi *= 2.0
        ghi = _gf_g_eps(hi, &p)
    if not (ghi >= 0.0):
        return NAN
    e = _bisect_feasible(_gf_g_eps, &p, 0.0, g0, hi, ghi, 0.0, 0.0, &n)
    for k in range(64):
        if _gf_g_eps(e, &p) >= 0.0:
            return e
        e = nextafter(e, INFINITY) * (1.0 + DBL_EPS)
    return NAN


cdef double _gf_g_thr(double x, void* args) noexcept nogil:
    # x = -eps. Classical noise F/eps (Delta = 1) at eps: >= 0 iff certified (eps, delta)-DP.
    # Observed to be increasing in x (single crossing, Theorem 1); the caller scans first.
    cdef GFArgs* p = <GFArgs*> args
    cdef double e = -x, err = 0.0
    cdef double ld = _gf_log_delta(GF_NOTION_DP, p.F / e, e, &err)
    return _gf_sep(p.log2d - ld - err - _gf_exp_margin(p.log2d))


cdef double _gf_threshold(int method, double delta) noexcept nogil:
    # G(delta) of Theorem 1 / Remark 2 [ZWB19]: the largest eps at which the classical noise
    # F(delta)/eps is still (eps, delta)-DP. Scan eps upward from 1 by factors of 1.05 to the
    # first failure, then solve on that bracket (returns the end at which it still holds).
    cdef GFArgs p
    cdef double e_ok, e_bad, g_ok, g_bad, g
    cdef int k, n = 0
    p.F = sqrt(2.0 * log((2.0 if method == GF_DWORK2006 else 1.25) / delta))
    p.log2d = log(delta)
    e_ok = 1.0
    g_ok = _gf_g_thr(-e_ok, &p)
    for k in range(400):                          # below 1 (never observed): scan down
        if g_ok >= 0.0:
            break
        e_ok /= 1.05
        g_ok = _gf_g_thr(-e_ok, &p)
    if not (g_ok >= 0.0):
        return NAN
    e_bad = e_ok
    g_bad = g_ok
    for k in range(2000):
        e_bad = e_ok * 1.05
        g_bad = _gf_g_thr(-e_bad, &p)
        if g_bad < 0.0:
            break
        e_ok = e_bad
        g_ok = g_bad
    if not (g_bad < 0.0):
        return NAN
    return -_bisect_feasible(_gf_g_thr, &p, -e_bad, g_bad, -e_ok, g_ok, 0.0, 0.0, &n)

# ---------------------------------------------------------------------------------------
# def wrappers of the calibrations (inputs validated by bndp.calibrate)
# ---------------------------------------------------------------------------------------

ctypedef double (*gf3_t)(int code, double a, double b, double c) noexcept nogil


cdef class _Gf3:
    """A calibration of the Gaussian family f(code, a, b, c), its code the GF_* method or
    notion: called on scalars, or ``array(code, a, b, c, out)``, out[i] = f(code, a[i],
    b[i], c[i])."""
    cdef gf3_t f

    def __call__(self, int code, double a, double b, double c):
        return self.f(code, a, b, c)

    def array(self, int code, const double[:] a, const double[:] b, const double[:] c,
              double[::1] out):
        cdef gf3_t f = self.f
        cdef Py_ssize_t i
        with nogil:
            for i in range(out.shape[0]):
                out[i] = f(code, a[i], b[i], c[i])


cdef _Gf3 _gf3(gf3_t f):
    cdef _Gf3 g = _Gf3.__new__(_Gf3)
    g.f = f
    return g


# sigma of a method (GF_* code; -1.0 if a classical method fails DP here), and the delta and
# the epsilon of a notion
gf_sigma, gf_delta, gf_epsilon = _gf3(_gf_sigma), _gf3(_gf_delta), _gf3(_gf_epsilon)
gf_sigma_array, gf_delta_array, gf_epsilon_array = gf_sigma.array, gf_delta.array, gf_epsilon.array


def gf_threshold(int method, double delta):
    return _gf_threshold(method, delta)


def gf_threshold_array(int method, const double[:] delta, double[::1] out):
    cdef Py_ssize_t i, n = out.shape[0]
    with nogil:
        for i in range(n):
            out[i] = _gf_threshold(method, delta[i])
