# Kernels for the range family (included by _core.pyx).
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

from libc.math cimport fma, copysign

cdef double _E_HI = 2.718281828459045          # e rounded to double
cdef double _E_LO = 1.4456468917292502e-16     # e - _E_HI
cdef double _LW_A = 0.23196095298653444        # a = -W0(-1/(2e)), Thm 1 of [CSS22]


# ---------------------------------------------------------------------------------------
# Real Lambert W. q = e*x + 1 carries the precision near the branch point x = -1/e (where
# W = -1 + v, g(v) := 1 + (v - 1) e^v = q). Three regimes:
#   * q < 1/2: Newton on g(v) = q in v, with g from its Taylor series sum (k-1) v^k / k!
#     for |v| <= 1 (no cancellation), started from the branch-point series v ~ p - p^2/3 +
#     11 p^3/72 - 43 p^4/540, p = +-sqrt(2q) (+ for W0, - for W-1);
#   * W0 otherwise: Halley on w e^w = x for x < e, Newton on w + ln w = ln x above;
#   * W-1 otherwise: Newton on w + ln(-w) = ln(-x) (well scaled down to x -> 0-).
# ---------------------------------------------------------------------------------------

cdef inline double _lw_g(double v) noexcept nogil:
    cdef double pk, term, s
    cdef int k
    if fabs(v) <= 1.0:
        pk = 0.5 * v * v
        s = pk
        for k in range(3, 40):
            pk *= v / k
            term = (k - 1) * pk
            s += term
            if fabs(term) <= 1e-17 * fabs(s):
                break
        return s
    return 1.0 + (v - 1.0) * exp(v)


cdef double _lw_branch(double q, int branch) noexcept nogil:
    # W from q = e x + 1 in [0, 1/2); branch 0 or -1.
    cdef double p, v, dv, d
    cdef int it
    if q <= 0.0:
        return -1.0
    p = sqrt(2.0 * q)
    if branch != 0:
        p = -p
    v = p * (1.0 + p * (-1.0 / 3.0 + p * (11.0 / 72.0 - p * (43.0 / 540.0))))
    for it in range(60):
        d = v * exp(v)
        if d == 0.0:
            break
        dv = (_lw_g(v) - q) / d
        v -= dv
        if fabs(dv) <= 1e-300 + 2e-16 * fabs(v):
            break
    return v - 1.0


cdef double _lw0_direct(double x) noexcept nogil:
    # W0(x) for x >= -0.18 (away from the branch point).
    cdef double w, ew, f, dw, lx, l2
    cdef int it
    if x == 0.0:
        return x
    if x == INFINITY:
        return INFINITY
    if x < 2.718281828459045:
        # Winitzki's start, then Halley on f(w) = w e^w - x (f' = e^w (w + 1) >= 0.6 e^w)
        lx = log1p(x)
        w = lx * (1.0 - log1p(lx) / (2.0 + lx))
        for it in range(40):
            ew = exp(w)
            f = w * ew - x
            dw = f / (ew * (w + 1.0) - (w + 2.0) * f / (2.0 * w + 2.0))
            w -= dw
            if fabs(dw) <= 1e-300 + 1e-16 * fabs(w):
                break
        return w
    lx = log(x)
    l2 = log(lx)
    w = lx - l2 + l2 / lx
    for it in range(40):
        # Newton on w + ln w = ln x (h' = 1 + 1/w >= 1)
        dw = (w + log(w) - lx) / (1.0 + 1.0 / w)
        w -= dw
        if fabs(dw) <= 1e-16 * fabs(w):
            break
    return w


cdef double _lwm1_log(double lmx) noexcept nogil:
    # W-1(x) from lmx = ln(-x), for x >= -0.18 (lmx >= -1.7): Newton on w + ln(-w) = lmx,
    # whose slope 1 + 1/w lies in [0.5, 1) there. Works for x that underflow (x -> 0-).
    cdef double w, l2, dw
    cdef int it
    if lmx == -INFINITY:
        return -INFINITY
    l2 = log(-lmx)
    w = lmx - l2 + l2 / lmx
    if not (w < -1.5):
        w = -2.5
    for it in range(60):
        dw = (w + log(-w) - lmx) / (1.0 + 1.0 / w)
        w -= dw
        if w > -1.1:
            w = -1.1
        if fabs(dw) <= 1e-16 * fabs(w):
            break
    return w


cdef double _lambertw(double x, int branch) noexcept nogil:
    # Real W0 (branch 0, x >= -1/e) or W-1 (branch -1, -1/e <= x <= 0). The double nearest
    # -1/e lies 3.4e-17 below it; it maps to W = -1 (q is then -3.4e-17, within rounding).
    cdef double q
    if isnan(x):
        return NAN
    # q = e x + 1 with e in double-double and one fma: exact to a rounding of q itself
    q = fma(x, _E_HI, 1.0) + x * _E_LO
    if q < -1e-16:
        return NAN
    if q < 0.5:
        return _lw_branch(q, branch)
    if branch == 0:
        return _lw0_direct(x)
    if x >= 0.0:
        return -INFINITY if x == 0.0 else NAN
    return _lwm1_log(log(-x))


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


# ---------------------------------------------------------------------------------------
# Masses of the allowed set. For Laplace(mu, s): Lc(mu) (Rc(mu)) is the mass of A left
# (right) of mu, N = Lc + Rc; fL/fR are the forbidden masses (= 1/2 - Lc, 1/2 - Rc). At the
# span ends they obey positive recursions (no cancellation even when N is tiny):
#   lcR_k = -expm1(-w_k/s)/2 + e^{-w_k/s} lcL_k,  lcL_{k+1} = e^{-g_k/s} lcR_k,
#   fR_k  = e^{-w_k/s} fL_k,                       fL_{k+1} = -expm1(-g_k/s)/2 + e^{-g_k/s} fR_k,
# (w_k span widths, g_k gap widths) and mirror images from the right. Inside span k,
#   Lc(mu) = -expm1(-d/s)/2 + e^{-d/s} lcL_k,   d = mu - L_k   (Lc = 1/2 when L_k = -inf).
# ---------------------------------------------------------------------------------------

cdef struct CLWork:
    Py_ssize_t m
    const double* L
    const double* R
    double s
    double* lcL
    double* fL
    double* rcR
    double* fR


cdef void _cl_recur(CLWork* w) noexcept nogil:
    cdef Py_ssize_t k, m = w.m
    cdef const double* L = w.L
    cdef const double* R = w.R
    cdef double s = w.s, e, g, lc, f, gm
    w.lcL[0] = 0.0
    w.fL[0] = 0.5
    for k in range(m - 1):
        if L[k] == -INFINITY:
            lc = 0.5
            f = 0.0
        else:
            e = exp(-(R[k] - L[k]) / s)
            lc = -0.5 * expm1(-(R[k] - L[k]) / s) + e * w.lcL[k]
            f = e * w.fL[k]
        gm = -(L[k + 1] - R[k]) / s
        g = exp(gm)
        w.lcL[k + 1] = g * lc
        w.fL[k + 1] = -0.5 * expm1(gm) + g * f
    w.rcR[m - 1] = 0.0
    w.fR[m - 1] = 0.5
    k = m - 1
    while k > 0:
        if R[k] == INFINITY:
            lc = 0.5
            f = 0.0
        else:
            e = exp(-(R[k] - L[k]) / s)
            lc = -0.5 * expm1(-(R[k] - L[k]) / s) + e * w.rcR[k]
            f = e * w.fR[k]
        gm = -(L[k] - R[k - 1]) / s
        g = exp(gm)
        w.rcR[k - 1] = g * lc
        w.fR[k - 1] = -0.5 * expm1(gm) + g * f
        k -= 1


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


cdef struct CLCal:
    CLWork* w1          # the allowed set
    CLWork* w2          # its reflection x -> -x
    double dF, eps
    int metric


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
    while ghi < 0.0 and k < 80:
        hi *= 1.0 + DBL_EPS * (2.0 ** k)
        ghi = _cl_g(hi, c)
        k += 1
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
    return _bisect_feasible(_cl_g, c, lo, glo, hi, ghi, &n)


# ---------------------------------------------------------------------------------------
# Sampling by inverse CDF across the allowed pieces. Pieces left of mu (spans 0..j-1 and
# [L_j, mu]) are indexed from the far left with cumulative masses cl; pieces right of mu from
# the far right with cr. With t = u N: if t < Lc the output y has mass(A cap (-inf, y]) = t,
# found in piece k as y = mu + s ln(2 r + e^{-(mu - lo_k)/s}), r = t - cl[k-1]; otherwise
# mass(A cap [y, inf)) = (1 - u) N (exact: 1 - u is exact for _u_open), mirrored. In the
# outer unbounded pieces this is y = mu + s ln(2t): exact in the far tails. One uniform and a
# binary search of fixed depth per draw: the work does not depend on the true value.
# ---------------------------------------------------------------------------------------

cdef struct CLPieces:
    Py_ssize_t nl, nr, m
    int depth
    double mu, s, inv_s, Lc, N
    double* cl
    double* al
    double* lol
    double* hil
    double* cr
    double* ar
    double* lor
    double* hir
    double* ew          # e^{-w_k/s} per span (0 for an unbounded span)
    double* omw         # 1 - e^{-w_k/s} (1 for an unbounded span)
    double* eg          # e^{-g_k/s} for the gap after span k


cdef void _cl_consts(CLPieces* P, const double* L, const double* R, Py_ssize_t m,
                     double s) noexcept nogil:
    # per-scale constants, so that a true value costs two exponentials (distances to the
    # ends of its own span); farther pieces follow by products
    cdef Py_ssize_t k
    cdef double w
    P.s = s
    P.inv_s = 1.0 / s
    P.m = m
    for k in range(m):
        w = R[k] - L[k]
        if w == INFINITY:
            P.ew[k] = 0.0
            P.omw[k] = 1.0
        else:
            P.ew[k] = exp(-w / s)
            P.omw[k] = -expm1(-w / s)
        if k + 1 < m:
            P.eg[k] = exp(-(L[k + 1] - R[k]) / s)
    P.depth = 1
    while (<Py_ssize_t> 1 << P.depth) < m + 1:
        P.depth += 1


cdef void _cl_pieces(CLPieces* P, const double* L, const double* R, double mu) noexcept nogil:
    # masses of the pieces for true value mu (in A): left pieces indexed from the far left,
    # right pieces from the far right; every mass is a product of positive factors
    cdef Py_ssize_t m = P.m, j = _cl_locate(L, m, mu), k, idx, nl
    cdef double s = P.s, c, f, a, mass, d
    if j < 0:
        j = 0
    P.mu = mu
    nl = j + 1
    # partial piece [L_j, mu]; 1 - a is exact to a few ulps once a <= e^-1/2, expm1 below
    if L[j] == -INFINITY:
        a = 0.0
        mass = 0.5
    else:
        d = (mu - L[j]) * P.inv_s
        a = exp(-d)
        mass = 0.5 * (1.0 - a) if d > 0.5 else -0.5 * expm1(-d)
    P.cl[j] = mass
    P.al[j] = a
    P.lol[j] = L[j]
    P.hil[j] = mu
    f = a                               # e^{-(mu - R_{k})/s} after stepping over the gap
    k = j - 1
    while k >= 0:
        f *= P.eg[k]                    # now e^{-(mu - R_k)/s}
        P.cl[k] = 0.5 * f * P.omw[k]
        f *= P.ew[k]                    # e^{-(mu - L_k)/s} (0 if L_k = -inf)
        P.al[k] = f
        P.lol[k] = L[k]
        P.hil[k] = R[k]
        k -= 1
    c = 0.0
    for k in range(nl):
        c += P.cl[k]
        P.cl[k] = c
    P.nl = nl
    P.Lc = c
    # right pieces: idx 0 = span m-1, ..., idx m-1-j = partial [mu, R_j]
    P.nr = m - j
    idx = m - 1 - j
    if R[j] == INFINITY:
        a = 0.0
        mass = 0.5
    else:
        d = (R[j] - mu) * P.inv_s
        a = exp(-d)
        mass = 0.5 * (1.0 - a) if d > 0.5 else -0.5 * expm1(-d)
    P.cr[idx] = mass
    P.ar[idx] = a
    P.lor[idx] = mu
    P.hir[idx] = R[j]
    f = a
    for k in range(j + 1, m):
        idx -= 1
        f *= P.eg[k - 1]                # e^{-(L_k - mu)/s}
        P.cr[idx] = 0.5 * f * P.omw[k]
        f *= P.ew[k]                    # e^{-(R_k - mu)/s}
        P.ar[idx] = f
        P.lor[idx] = L[k]
        P.hir[idx] = R[k]
    c = 0.0
    for k in range(P.nr):
        c += P.cr[k]
        P.cr[k] = c
    P.N = P.Lc + c


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


# ---------------------------------------------------------------------------------------
# def wrappers (inputs validated by bndp.mechanisms.range / bndp.special)
# ---------------------------------------------------------------------------------------

cdef class _CLBuf:
    # workspace for the recursions of one orientation (4 m doubles) and the pieces (8 (m+1))
    cdef double* buf
    cdef CLWork w
    cdef CLPieces P
    cdef object keep

    def __cinit__(self, const double[::1] L, const double[::1] R):
        cdef Py_ssize_t m = L.shape[0]
        self.keep = (L, R)
        self.buf = <double*> malloc((15 * m + 8) * sizeof(double))
        if self.buf == NULL:
            raise MemoryError()
        self.w.m = m
        self.w.L = &L[0]
        self.w.R = &R[0]
        self.w.s = 1.0
        self.w.lcL = self.buf
        self.w.fL = self.buf + m
        self.w.rcR = self.buf + 2 * m
        self.w.fR = self.buf + 3 * m
        self.P.cl = self.buf + 4 * m
        self.P.al = self.P.cl + (m + 1)
        self.P.lol = self.P.al + (m + 1)
        self.P.hil = self.P.lol + (m + 1)
        self.P.cr = self.P.hil + (m + 1)
        self.P.ar = self.P.cr + (m + 1)
        self.P.lor = self.P.ar + (m + 1)
        self.P.hir = self.P.lor + (m + 1)
        self.P.ew = self.P.hir + (m + 1)
        self.P.omw = self.P.ew + m
        self.P.eg = self.P.omw + m

    def __dealloc__(self):
        free(self.buf)


def cl_scale(const double[::1] L, const double[::1] R, const double[::1] Lr,
             const double[::1] Rr, double eps, double dF, bint metric):
    """Calibrated constant scale of the truncated Laplace on the spans [L[k], R[k]]
    (Lr, Rr: the reflected spans), for validated inputs."""
    cdef _CLBuf b1 = _CLBuf(L, R)
    cdef _CLBuf b2 = _CLBuf(Lr, Rr)
    cdef CLCal c
    cdef double s
    c.w1 = &b1.w
    c.w2 = &b2.w
    c.dF = dF
    c.eps = eps
    c.metric = metric
    with nogil:
        s = _cl_scale(&c)
    return s


def cl_loss(const double[::1] L, const double[::1] R, const double[::1] Lr,
            const double[::1] Rr, double sigma, double dF, bint metric):
    """Certified worst-case loss at scale sigma (dp or metric form)."""
    cdef _CLBuf b1 = _CLBuf(L, R)
    cdef _CLBuf b2 = _CLBuf(Lr, Rr)
    cdef CLCal c
    cdef double v
    c.w1 = &b1.w
    c.w2 = &b2.w
    c.dF = dF
    c.eps = 0.0
    c.metric = metric
    with nogil:
        v = _cl_loss(&c, sigma)
    return v


def cl_one(object gen, double mu, double sigma, const double[::1] L, const double[::1] R):
    cdef _CLBuf b = _CLBuf(L, R)
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef double x
    _cl_consts(&b.P, &L[0], &R[0], L.shape[0], sigma)
    _cl_pieces(&b.P, &L[0], &R[0], mu)
    with bit_gen.lock:
        x = _cl_quantile(&b.P, _u_open(bg))
    return x


def cl_fill(object gen, double mu, double sigma, const double[::1] L, const double[::1] R,
            double[::1] out):
    cdef _CLBuf b = _CLBuf(L, R)
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef Py_ssize_t i, n = out.shape[0]
    _cl_consts(&b.P, &L[0], &R[0], L.shape[0], sigma)
    _cl_pieces(&b.P, &L[0], &R[0], mu)
    with bit_gen.lock, nogil:
        for i in range(n):
            out[i] = _cl_quantile(&b.P, _u_open(bg))


def cl_fill_rows(object gen, const double[:, :] mu, const double[:, :] sigma,
                 const double[::1] L, const double[::1] R, double[:, ::1] out):
    """Per-element true values and scales (broadcast views; stride 0 welcome)."""
    cdef _CLBuf b = _CLBuf(L, R)
    bit_gen = gen.bit_generator
    cdef bitgen_t* bg = _borrow(bit_gen)
    cdef Py_ssize_t i, j, n0 = out.shape[0], n1 = out.shape[1], m = L.shape[0]
    cdef double last = NAN
    with bit_gen.lock, nogil:
        for i in range(n0):
            for j in range(n1):
                if not (sigma[i, j] == last):
                    last = sigma[i, j]
                    _cl_consts(&b.P, &L[0], &R[0], m, last)
                _cl_pieces(&b.P, &L[0], &R[0], mu[i, j])
                out[i, j] = _cl_quantile(&b.P, _u_open(bg))


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


def lambertw_fill(const double[::1] x, int branch, double[::1] out):
    """Real Lambert W on a flat array (branch 0 or -1); NaN outside the real domain."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(x.shape[0]):
            out[i] = _lambertw(x[i], branch)


def dd_g_fill(const double[::1] u, double[::1] out):
    """g(u) of Theorem 1: sigma(ell) = (dF/eps) g(eps ell / dF), u >= 0."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(u.shape[0]):
            out[i] = _dd_g(u[i])


def dd_hockey_fill(const double[::1] l1, const double[::1] s1, const double[::1] l2,
                   const double[::1] s2, double eps, double[::1] out):
    """Hockey-stick divergence at level e^eps between the Theorem 1 outputs for true values
    at distances l1, l2 from the constraint (scales s1, s2)."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(out.shape[0]):
            out[i] = _dd_hockey(l1[i], s1[i], l2[i], s2[i], eps)
