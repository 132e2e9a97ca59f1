# Special functions of the compiled core (included by _core.pyx): the standard normal
# quantile [W88] from the quantity that carries the precision, Phi split into its central
# mass and tail, log-space helpers, erfcx/erfcinv, real Lambert W on both branches. Each is
# tested against SciPy/mpmath to a few ulps (tests/test_special.py, tests/test_lambertw.py).

cdef double SQRT1_2 = 0.70710678118654752440084436210484903928
cdef double LOG_SQRT_2PI = 0.91893853320467274178032973640561763986
cdef double SQRT_2PI = 2.50662827463100050241576528481104525301

cdef inline double _log_ndtr(double x) noexcept nogil:
    return _sc_log_ndtr(x)

# ---------------------------------------------------------------------------------------
# Inverse of the standard normal CDF [W88], split so that callers pass the quantity that
# carries the precision: q = p - 1/2 for the central part, log of the tail mass otherwise.
# Accuracy against SciPy/mpmath is tested in tests/test_special.py (a few ulps).
# ---------------------------------------------------------------------------------------


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

cdef inline double _logaddexp(double x, double y) noexcept nogil:
    # log(e^x + e^y), y finite
    if x > y:
        return x + log1p(exp(y - x))
    return y + log1p(exp(x - y))

cdef inline double _gf_erfcx(double x) noexcept nogil:
    return _sc_erfcx(x)


cdef inline double _gf_erfcinv(double y) noexcept nogil:
    return _sc_erfcinv(y)

# ---------------------------------------------------------------------------------------
# Log-space primitives
# ---------------------------------------------------------------------------------------

cdef inline double _gr_log1mexp(double x) noexcept nogil:
    # log(1 - e^x) for x <= 0 (Maechler's switch at -log 2)
    if x > -0.6931471805599453:
        return log(-expm1(x))
    return log1p(-exp(x))


cdef inline double _gr_lndtr(double x) noexcept nogil:
    # log Phi(x). Right of 0: log1p(-Phi(-x)) keeps the tiny distance to 0 (it carries the
    # rectified divergence far above the support). Down to -20 Phi does not underflow
    # (_ndtr_lower: Cody's rational approximations, then erfc); below, SciPy's asymptotic log_ndtr.
    if x > 0.0:
        return log1p(-_ndtr_lower(-x))
    if x > -20.0:
        return log(_ndtr_lower(x))
    return _log_ndtr(x)


cdef inline double _gr_log_ndtr_diff(double U, double L) noexcept nogil:
    # log(Phi(U) - Phi(L)) for U > L. Straddling 0: a sum of two erf of positive arguments
    # (no cancellation, no log needed before the end). Both in the right tail: mirrored to
    # the left tail, Phi(U) - Phi(L) = Phi(-L) - Phi(-U). Left tail above -20: difference of
    # erfc values (no underflow); further out: log Phi(U) + log1mexp(log Phi(L) - log Phi(U)).
    cdef double t
    if L >= 0.0:
        t = U
        U = -L
        L = -t
    if U > 0.0:
        return log(_half_mass(U) + _half_mass(-L))
    if U > -20.0:
        return log(_ndtr_lower(U) - _ndtr_lower(L))
    t = _log_ndtr(U)
    return t + _gr_log1mexp(_log_ndtr(L) - t)


cdef inline double _gr_ld(double y, double l, double u) noexcept nogil:
    # log Delta(y) = log P(y + Z in [l, u])
    return _gr_log_ndtr_diff(u - y, l - y)


cdef inline double _gr_q_right(double y, double l, double u) noexcept nogil:
    # log Delta(y) + (y - u)^2/2 + log(2) for y >= u, without the Gaussian factor:
    # Delta(y) = e^{-(y-u)^2/2}/2 [erfcx((y-u)/sqrt2) - e^{-w(2y-l-u)/2} erfcx((y-l)/sqrt2)]
    cdef double w = u - l
    return log(_sc_erfcx((y - u) * SQRT1_2)
               - exp(-0.5 * w * (2.0 * y - l - u)) * _sc_erfcx((y - l) * SQRT1_2))


cdef inline double _gr_lse3(double a, double b, double c) noexcept nogil:
    # log(e^a + e^b + e^c), pivoting on the largest term so that a dominant term close to
    # 0 keeps its full relative precision (log1p of the others)
    if a >= b and a >= c:
        return a + log1p(exp(b - a) + exp(c - a))
    if b >= c:
        return b + log1p(exp(a - b) + exp(c - b))
    return c + log1p(exp(a - c) + exp(b - c))


cdef inline double _gr_atom_bound(double d, double s, double am1) noexcept nogil:
    # Upper bound on alpha log Phi(-d) - (alpha-1) log Phi(-d-s) (the log of a rectified atom
    # term) for d >= 1, from log Phi(-d) <= -d^2/2 and the Mills bound
    # phi(y)/Phi(-y) <= y + 1/y: the atom term is e^{bound} or less. No transcendental call.
    cdef double sp = s if s > 0.0 else 0.0
    return -0.5 * d * d + am1 * (d * sp + 0.5 * sp * sp + sp / d)

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

def expm1_nonpos_fast(double x):
    """expm1(x) for x <= 0, the branch-free version of _simd.h (exposed for tests)."""
    return _expm1_nonpos(x)


def log1m2t_fast(double t):
    """log(1 - 2t) for 0 <= t <= 1/2, the branch-free version of _simd.h (for tests)."""
    return _log1m2t(t)

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

def gr_log_ndtr_diff(double U, double L):
    """log(Phi(U) - Phi(L)) for U > L (exposed for tests)."""
    return _gr_log_ndtr_diff(U, L)


def gr_lndtr(double x):
    """log Phi(x) (exposed for tests)."""
    return _gr_lndtr(x)

def lambertw_fill(const double[::1] x, int branch, double[::1] out):
    """Real Lambert W on a flat array (branch 0 or -1); NaN outside the real domain."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(x.shape[0]):
            out[i] = _lambertw(x[i], branch)
